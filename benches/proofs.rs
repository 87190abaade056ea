//! `proofs` group: each 2 KiB kind end to end (parse, synthesize, prove, self-verify) through
//! cuzk's CPU backend against filecoin-proofs-api's own function on the same input.

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;

use common::{median, report, selected, time_ms};
use cuzk::groth16::{CpuBackend, Randomness};
use cuzk::proofs::prove::ProveTimings;
use cuzk::proofs::registry::prover_id;
use cuzk::proofs::testdata::{unhex, TestData};
use cuzk::proofs::{prove_with_randomness, ProofRequest};
use filecoin_proofs_api::{
    PartitionProofBytes, RegisteredPoStProof, RegisteredUpdateProof, SectorId,
};

fn bench(
    case: &str,
    runs: usize,
    request: impl Fn() -> ProofRequest,
    base: impl Fn() -> Vec<u8>,
    fx: &fixture::Fixture,
) {
    if !selected(case) {
        return;
    }
    let mut rng = rand::rngs::OsRng;
    let mut ours_run = || -> (f64, ProveTimings) {
        let (ms, out) = time_ms(|| {
            let req = request();
            let r: Vec<Randomness> = (0..req.partitions())
                .map(|_| Randomness::random(&mut rng))
                .collect();
            prove_with_randomness(&req, &fx.srs, &CpuBackend, &r).expect("our proof")
        });
        (ms, out.1)
    };
    // Warm-up: loads parameters on both sides.
    ours_run();
    assert_eq!(base().len() % 192, 0);
    let (mut ours, mut theirs, mut split) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        let (ms, t) = ours_run();
        ours.push(ms);
        split.push(t);
        theirs.push(time_ms(&base).0);
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

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let fx = fixture::fixture();
    let d: &TestData = &fx.data;
    let miner = d.manifest.miner_id;
    let files =
        |names: &[String]| -> Vec<Vec<u8>> { names.iter().map(|f| d.read(f).unwrap()).collect() };

    let sector = &d.manifest.porep[0];
    let c1 = d.read(&sector.c1_file).unwrap();
    bench(
        "porep-2k",
        3,
        || d.porep_request(0).unwrap(),
        || {
            let c1: filecoin_proofs_api::seal::SealCommitPhase1Output =
                serde_json::from_slice(&c1).unwrap();
            filecoin_proofs_api::seal::seal_commit_phase2(
                c1,
                prover_id(miner),
                SectorId::from(sector.sector),
            )
            .unwrap()
            .proof
        },
        fx,
    );

    let s = &d.manifest.snap;
    bench(
        "snap-2k",
        3,
        || d.snap_request().unwrap(),
        || {
            let bytes32 = |h: &str| -> [u8; 32] { unhex(h).unwrap().try_into().unwrap() };
            filecoin_proofs_api::update::generate_empty_sector_update_proof_with_vanilla(
                RegisteredUpdateProof::StackedDrg2KiBV1,
                files(&s.vanilla_files)
                    .into_iter()
                    .map(PartitionProofBytes)
                    .collect(),
                bytes32(&s.comm_r_old),
                bytes32(&s.comm_r_new),
                bytes32(&s.comm_d_new),
            )
            .unwrap()
            .0
        },
        fx,
    );

    let w = &d.manifest.winning;
    let randomness: [u8; 32] = unhex(&w.randomness).unwrap().try_into().unwrap();
    bench(
        "winning-2k",
        5,
        || d.winning_request().unwrap(),
        || {
            filecoin_proofs_api::post::generate_winning_post_with_vanilla(
                RegisteredPoStProof::StackedDrgWinning2KiBV1,
                &randomness,
                prover_id(miner),
                &files(&w.vanilla_files),
            )
            .unwrap()
            .remove(0)
            .1
        },
        fx,
    );

    let win = &d.manifest.window;
    bench(
        "window-2k",
        5,
        || d.window_request().unwrap(),
        || {
            filecoin_proofs_api::post::generate_single_window_post_with_vanilla(
                RegisteredPoStProof::StackedDrgWindow2KiBV1_2,
                &randomness,
                prover_id(miner),
                &files(&win.vanilla_files),
                win.partition,
            )
            .unwrap()
            .0
        },
        fx,
    );
}
