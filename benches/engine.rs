//! `engine` group: a stream of mixed 2 KiB jobs (2 PoRep, 2 SnapDeals, 4 WindowPoSt,
//! 4 WinningPoSt) submitted at once to one engine, against filecoin-proofs-api's functions
//! called one after another in one process, and against one process per proof (what Curio's
//! ffiselect does: each process maps its parameters again).

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;

use std::process::Command;
use std::sync::Arc;

use common::{median, report, selected, time_ms};
use cuzk::engine::{Config, Engine, Workload};
use cuzk::proofs::testdata::default_dir;
use cuzk::proofs::workload::FilecoinWorkload;

const STREAM: [&str; 12] = [
    "porep-v1_1",
    "porep-synth",
    "snap",
    "snap",
    "window",
    "window",
    "window",
    "window",
    "winning",
    "winning",
    "winning",
    "winning",
];

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let fx = fixture::fixture();
    let runs: usize = std::env::var("CUZK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let engine = Engine::open_cpu(Config::default()).unwrap();
    let workload = |name: &str| -> Arc<dyn Workload> {
        FilecoinWorkload::new(fx.data.request(name).unwrap(), fx.srs.dir())
    };
    for name in ["porep-v1_1", "snap", "window", "winning"] {
        engine.preload(workload(name).as_ref()).unwrap();
    }
    let ours = || {
        let ids: Vec<_> = STREAM
            .iter()
            .map(|n| engine.submit(workload(n)).unwrap())
            .collect();
        for id in ids {
            engine.await_job(id, None).unwrap();
        }
    };
    let in_process = || {
        for n in STREAM {
            fx.data.prove_with_filecoin_proofs(n).unwrap();
        }
    };
    let per_process = || {
        for n in STREAM {
            let out = Command::new(env!("CARGO_BIN_EXE_cuzk"))
                .args(["testdata", "prove-reference", n, "--dir"])
                .arg(default_dir())
                .output()
                .expect("cuzk runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    let (mut o, mut b, mut p, mut u) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        let busy_before = prover_busy(&engine);
        let (ms, ()) = time_ms(ours);
        o.push(ms);
        let util = (prover_busy(&engine) - busy_before) / ms;
        u.push(util);
        if selected("mixed-2k") {
            b.push(time_ms(in_process).0);
        }
        if selected("process") {
            p.push(time_ms(per_process).0);
        }
        eprintln!(
            "  run {}: ours {ms:.0} ms (prover util {util:.2}), in-process {:?}, per-process {:?}",
            i + 1,
            b.last(),
            p.last()
        );
    }
    let per_min = |ms: f64| STREAM.len() as f64 / (ms / 60_000.0);
    let ours = median(&o);
    if !b.is_empty() {
        report(
            "engine/mixed-2k",
            ours,
            Some(median(&b)),
            runs,
            &format!(
                "proofs_per_min={:.2} base_proofs_per_min={:.2} util={:.2}",
                per_min(ours),
                per_min(median(&b)),
                median(&u)
            ),
        );
    }
    if !p.is_empty() {
        report(
            "engine/mixed-2k-vs-process",
            ours,
            Some(median(&p)),
            runs,
            &format!(
                "proofs_per_min={:.2} base_proofs_per_min={:.2} util={:.2}",
                per_min(ours),
                per_min(median(&p)),
                median(&u)
            ),
        );
    }
}

fn prover_busy(engine: &Engine) -> f64 {
    engine.status().proving_busy_ms()
}
