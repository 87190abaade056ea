//! `proofs` group: each 2 KiB kind end to end (parse, synthesize, prove, self-verify) through
//! cuzk's CPU backend against filecoin-proofs-api's own function on the same input; and
//! `aggregate-2k-8`, a SnarkPack aggregate of 8 PoRep proofs, against filecoin-proofs-api's
//! `aggregate_seal_commit_proofs`.

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;

use common::{median, report, selected, time_ms};
use cuzk::groth16::{CpuBackend, Randomness};
use cuzk::proofs::prove::ProveTimings;
use cuzk::proofs::prove_with_randomness;

/// SnarkPack of 8 PoRep proofs: cuzk's `aggregate_seal_proofs` (what `AggregateSealProofs`
/// calls) against filecoin-proofs-api's `aggregate_seal_commit_proofs`, on 8 copies of one
/// sector's proof (aggregation does not care whether the proofs differ; the result verifies).
fn aggregate_8(fx: &fixture::Fixture) {
    const N: usize = 8;
    let s = &fx.data.manifest.porep[0];
    let c1_bytes = fx.data.read(&s.c1_file).unwrap();
    let c1: filecoin_proofs_api::seal::SealCommitPhase1Output =
        serde_json::from_slice(&c1_bytes).unwrap();
    let request = fx.data.request("porep-v1_1").unwrap();
    let r = vec![Randomness::random(&mut rand::rngs::OsRng)];
    let (proof, _) = prove_with_randomness(&request, &fx.srs, &CpuBackend, &r).expect("proof");
    let comm_rs = vec![c1.comm_r.to_vec(); N];
    let seeds = vec![c1.seed.to_vec(); N];
    let proofs = vec![proof.clone(); N];
    let ours = || {
        cuzk::proofs::aggregate::aggregate_seal_proofs(s.registered, 1, &comm_rs, &seeds, &proofs)
            .expect("our aggregate")
    };
    let registered = cuzk::proofs::registry::seal_proof(s.registered).unwrap();
    let outputs: Vec<_> = (0..N)
        .map(|_| filecoin_proofs_api::seal::SealCommitPhase2Output {
            proof: proof.clone(),
        })
        .collect();
    let base = || {
        filecoin_proofs_api::seal::aggregate_seal_commit_proofs(
            registered,
            filecoin_proofs_api::RegisteredAggregationProof::SnarkPackV2,
            &vec![c1.comm_r; N],
            &vec![c1.seed; N],
            &outputs,
        )
        .expect("filecoin-proofs aggregate")
    };
    // Warm-up (loads the SRS and verifying key on both sides), and a check that ours verifies.
    let aggregate = ours();
    assert_eq!(base().len(), aggregate.len());
    let input = cuzk::proofs::aggregate::AggregationInput {
        sector: s.sector,
        comm_r: c1.comm_r.to_vec(),
        comm_d: c1.comm_d.to_vec(),
        ticket: c1.ticket.to_vec(),
        seed: c1.seed.to_vec(),
    };
    assert!(cuzk::proofs::aggregate::verify_aggregate_seal_proofs(
        s.registered,
        1,
        fx.data.manifest.miner_id,
        &aggregate,
        &vec![input; N],
    )
    .unwrap());
    let runs = 5;
    let (mut o, mut t) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        o.push(time_ms(ours).0);
        t.push(time_ms(base).0);
    }
    report(
        "proofs/aggregate-2k-8",
        median(&o),
        Some(median(&t)),
        runs,
        &format!("bytes={}", aggregate.len()),
    );
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let fx = fixture::fixture();
    if selected("aggregate-2k-8") {
        aggregate_8(fx);
    }
    for (case, name, runs) in [
        ("porep-2k", "porep-v1_1", 3),
        ("snap-2k", "snap", 3),
        ("winning-2k", "winning", 5),
        ("window-2k", "window", 5),
    ] {
        if !selected(case) {
            continue;
        }
        let mut rng = rand::rngs::OsRng;
        let mut ours_run = || -> (f64, ProveTimings) {
            let (ms, out) = time_ms(|| {
                let req = fx.data.request(name).unwrap();
                let r: Vec<Randomness> = (0..req.partitions())
                    .map(|_| Randomness::random(&mut rng))
                    .collect();
                prove_with_randomness(&req, &fx.srs, &CpuBackend, &r).expect("our proof")
            });
            (ms, out.1)
        };
        let base = || {
            fx.data
                .prove_with_filecoin_proofs(name)
                .expect("filecoin-proofs")
        };
        // Warm-up: loads parameters on both sides.
        ours_run();
        assert_eq!(base().len() % 192, 0);
        let (mut ours, mut theirs, mut split) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..runs {
            let (ms, t) = ours_run();
            ours.push(ms);
            split.push(t);
            theirs.push(time_ms(base).0);
            eprintln!(
                "  {case} run {}: ours {:.1} ms, base {:.1} ms",
                i + 1,
                ours[i],
                theirs[i]
            );
        }
        let m = |f: fn(&ProveTimings) -> f64| median(&split.iter().map(f).collect::<Vec<_>>());
        report(
            &format!("proofs/{case}"),
            median(&ours),
            Some(median(&theirs)),
            runs,
            &format!(
                "synth={:.1} prove={:.1} verify={:.1}",
                m(|t| t.synth_ms),
                m(|t| t.prove_ms),
                m(|t| t.verify_ms)
            ),
        );
    }
}
