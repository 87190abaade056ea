//! The engine proving every 2 KiB Filecoin kind at once through `FilecoinWorkload`; each result
//! is checked again with filecoin-proofs-api's verifier.

mod common;

use std::sync::Arc;

use cuzk::engine::{Config, Engine, Workload};
use cuzk::proofs::workload::FilecoinWorkload;

#[test]
fn engine_proves_every_2k_kind_concurrently() {
    let fx = common::fixture();
    // Saved PCEs (recorded here if missing) are loaded by the engine's first synthesis of each
    // kind, so their bytes are charged with the parameters by the time the jobs finish.
    let mut expected_resident = std::collections::HashMap::new();
    for kind in cuzk::proofs::circuits::CircuitKind::all_2k() {
        let srs = fx.srs.get(kind).unwrap();
        let pce = cuzk::proofs::pce::kind_pce(kind, &srs, fx.srs.dir()).unwrap();
        expected_resident.insert(
            cuzk::proofs::workload::srs_key(kind),
            (srs.byte_size() + pce.byte_size()) as u64,
        );
    }
    let engine = Engine::open_cpu(Config::default()).unwrap();
    let workloads: Vec<(&str, Arc<FilecoinWorkload>)> = fx
        .data
        .all_requests()
        .unwrap()
        .into_iter()
        .map(|(name, r)| {
            (
                name,
                FilecoinWorkload::new(r, fx.srs.dir(), fx.srs.pce_enabled()),
            )
        })
        .collect();
    let ids: Vec<_> = workloads
        .iter()
        .map(|(_, w)| engine.submit(w.clone() as Arc<dyn Workload>).unwrap())
        .collect();
    for ((name, w), id) in workloads.iter().zip(ids) {
        let (proof, timings) = engine
            .await_with_timings(id, None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: {timings:?}");
        assert_eq!(proof.len(), 192 * w.partitions());
        assert!(
            w.request().verify(&proof).unwrap(),
            "{name}: filecoin-proofs rejects it"
        );
    }
    let status = engine.status();
    assert_eq!(status.completed, 5);
    assert_eq!(
        status.srs_resident.len(),
        4,
        "one resident SRS per circuit, shared by both PoReps"
    );
    for (key, bytes, _) in &status.srs_resident {
        assert_eq!(
            Some(bytes),
            expected_resident.get(key),
            "{key}: resident bytes are the parameters plus their PCE"
        );
    }
}
