//! Shared fixtures for the Filecoin tests: 2 KiB parameters and test data, generated once and
//! cached under `$CUZK_CACHE` (default `~/.cache/cuzk`) across runs.

use std::sync::OnceLock;

use cuzk::groth16::paramgen::cache;
use cuzk::proofs::circuits::CircuitKind;
use cuzk::proofs::testdata::{cache_root, TestData};
use cuzk::proofs::{params, SrsCache};
use rand::SeedableRng;

/// Parameters and test data for every 2 KiB kind.
pub struct Fixture {
    /// The sealed sectors and vanilla proofs.
    pub data: TestData,
    /// Decoded parameters, shared by the tests of one binary.
    pub srs: SrsCache,
}

/// The fixture, built on first use. Sets `FIL_PROOFS_PARAMETER_CACHE` (when unset) before
/// filecoin-proofs reads its settings.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let _ = env_logger::builder().is_test(true).try_init();
        if std::env::var_os(params::PARAMETER_CACHE_ENV).is_none() {
            std::env::set_var(params::PARAMETER_CACHE_ENV, cache_root().join("params"));
        }
        let dir = cache::cache_dir();
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        for kind in CircuitKind::all_2k() {
            params::ensure_for_kind(kind, &dir, &mut rng, &|_, _| {})
                .unwrap_or_else(|e| panic!("parameters for {}: {e:#}", kind.name()));
        }
        cuzk::proofs::aggregate::write_test_srs(&dir, &mut rng, false)
            .unwrap_or_else(|e| panic!("aggregation SRS: {e}"));
        let data = TestData::ensure(&cache_root().join("testdata-2k")).expect("test data");
        Fixture {
            data,
            srs: SrsCache::new(dir),
        }
    })
}
