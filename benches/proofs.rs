//! `proofs` group: each 2 KiB kind end to end (parse, synthesize, prove, self-verify) through
//! cuzk's CPU backend against filecoin-proofs-api's own function on the same input.

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;

use common::{median, report, selected, time_ms};
use cuzk::groth16::{CpuBackend, Randomness};
use cuzk::proofs::prove::ProveTimings;
use cuzk::proofs::prove_with_randomness;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let fx = fixture::fixture();
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
