//! Parameters from our generator are found and read by filecoin-proofs' own cache lookup, and
//! proofs made with them verify with the generated verifying key.
//!
//! One test function: `FIL_PROOFS_PARAMETER_CACHE` must be set before filecoin-proofs reads its
//! settings, once per process.

use std::sync::Arc;

use bellperson::groth16::{create_proof, prepare_verifying_key, verify_proof, VerifyingKey};
use blstrs::Bls12;
use cuzk::groth16::paramgen::{self, cache};
use cuzk::groth16::test_circuits::Sha256Preimage;
use cuzk::groth16::{synthesize, BufferSet, CpuBackend, ProverBackend, Randomness, Srs};
use cuzk::proofs::circuits::CircuitKind;
use cuzk::proofs::params;
use filecoin_proofs::constants::SectorShape2KiB;
use filecoin_proofs::parameters::winning_post_public_params;
use filecoin_proofs_api::RegisteredPoStProof;
use rand::SeedableRng;
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::parameter_cache::{
    parameter_cache_params_path, read_cached_params, CacheEntryMetadata,
};
use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound};

type Winning = FallbackPoStCompound<SectorShape2KiB>;

#[test]
fn generated_parameters_load_through_filecoin_proofs_cache_lookup() {
    let _ = env_logger::builder().is_test(true).try_init();
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var(params::PARAMETER_CACHE_ENV, dir.path());
    assert_eq!(
        cache::cache_dir(),
        dir.path(),
        "filecoin-proofs reads the variable we set"
    );
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(21);

    // Missing parameters: a clear error naming the file and the variable.
    let kind = CircuitKind::parse("winning-2k").unwrap();
    let err = params::params_file(kind, dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(".params") && err.contains("FIL_PROOFS_PARAMETER_CACHE"),
        "{err}"
    );

    // WinningPoSt 2 KiB: filecoin-proofs finds our files under its own names.
    let path = params::generate_for_kind(kind, dir.path(), &mut rng, &|_, _| {}).unwrap();
    assert_eq!(params::params_file(kind, dir.path()).unwrap(), path);
    let ours = Srs::read_file(&path).unwrap();
    let pp = winning_post_public_params::<SectorShape2KiB>(
        &RegisteredPoStProof::StackedDrgWinning2KiBV1.as_v1_config(),
    )
    .unwrap();
    let mapped = <Winning as CompoundProof<
        FallbackPoSt<'_, SectorShape2KiB>,
        FallbackPoStCircuit<SectorShape2KiB>,
    >>::groth_params::<rand::rngs::OsRng>(None, &pp)
    .expect("filecoin-proofs loads our WinningPoSt parameters");
    assert!(mapped.vk == ours.vk);
    assert_eq!(mapped.h.len(), ours.h.len());
    assert_eq!(mapped.l.len(), ours.l.len());
    assert_eq!(
        ours.vk.ic.len(),
        1 + 66 * 2,
        "ONE, then comm_r and one challenge per sector"
    );
    let vk = <Winning as CompoundProof<
        FallbackPoSt<'_, SectorShape2KiB>,
        FallbackPoStCircuit<SectorShape2KiB>,
    >>::verifying_key::<rand::rngs::OsRng>(None, &pp)
    .expect("filecoin-proofs loads our .vk");
    assert!(vk == ours.vk);

    // A satisfiable circuit under a custom id: filecoin-proofs' reader + bellperson's prover and
    // ours give the same proof, which verifies with the .vk file we wrote.
    let len = Sha256Preimage::len_for_blocks(1);
    let generated = paramgen::generate(
        Sha256Preimage {
            len,
            preimage: None,
        },
        &mut rng,
        &|_, _| {},
    )
    .unwrap();
    cache::write_params(
        dir.path(),
        "cuzk-test-sha256",
        &generated,
        &CacheEntryMetadata { sector_size: 0 },
    )
    .unwrap();
    let mapped = read_cached_params(&parameter_cache_params_path("cuzk-test-sha256")).unwrap();
    let circuit = Sha256Preimage::with_seed(len, 5);
    let inputs = circuit.public_inputs();
    let randomness = Randomness::random(&mut rng);
    let theirs =
        create_proof::<Bls12, _, _>(circuit.clone(), &mapped, randomness.r, randomness.s).unwrap();
    let vk_file = std::fs::File::open(cache::vk_path(dir.path(), "cuzk-test-sha256")).unwrap();
    let vk = VerifyingKey::<Bls12>::read(vk_file).unwrap();
    assert!(verify_proof(&prepare_verifying_key(&vk), &theirs, &inputs).unwrap());
    let srs =
        Arc::new(Srs::read_file(&cache::params_path(dir.path(), "cuzk-test-sha256")).unwrap());
    let asg = synthesize(circuit, BufferSet::default()).unwrap();
    let ours = CpuBackend.prove(asg, &srs, randomness).unwrap();
    assert_eq!(ours.to_bellperson(), theirs);
    let meta = std::fs::read_to_string(cache::meta_path(dir.path(), &kind.cache_key().unwrap().id))
        .unwrap();
    assert_eq!(meta, r#"{"sector_size":2048}"#);
}
