//! `engine` group: the production-scale simulation (`tests/sim`: 32 GiB circuits on real node
//! sizes, scaled down 4096x in bytes and 250x in time): WinningPoSt latency under a full PoRep and
//! SnapDeals backlog against its idle latency, and backlog throughput against the bound of
//! the busiest resource; then a stream of mixed 2 KiB jobs (2 PoRep, 2 SnapDeals, 4
//! WindowPoSt, 4 WinningPoSt) submitted at once to one engine, against filecoin-proofs-api's
//! functions called one after another in one process, and against one process per proof (what
//! Curio's ffiselect does: each process maps its parameters again).

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;
#[path = "../tests/sim/mod.rs"]
mod sim;

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

/// Real milliseconds for simulated ones.
fn real_ms(sim_ms: f64) -> f64 {
    sim_ms / sim::MS_PER_REAL_SECOND * 1000.0
}

/// The median steady-state rate (partitions per hour) of planned runs.
fn median_per_hour(runs: &[sim::PlannedRun]) -> f64 {
    median(&runs.iter().map(|r| r.per_hour).collect::<Vec<_>>())
}

/// `engine/sim-winning-under-load-32g`, `engine/sim-throughput-32g`, `engine/sim-plan-32g` and
/// `engine/sim-lookahead-32g`.
fn simulation() {
    let seeds = 7u64;
    if selected("sim-winning-under-load-32g") {
        let node = sim::node("gpu-256g-80gb");
        let runs: Vec<_> = (0..seeds)
            .map(|seed| sim::winning_under_load(node, "32g", 3, 7, seed))
            .collect();
        let worst_of = |r: &sim::WinningUnderLoad| r.loaded_ms.iter().copied().fold(0.0, f64::max);
        let worsts: Vec<f64> = runs.iter().map(worst_of).collect();
        let worst = runs
            .iter()
            .max_by(|a, b| worst_of(a).total_cmp(&worst_of(b)))
            .expect("runs");
        let idle = median(&runs.iter().map(|r| r.idle_ms).collect::<Vec<_>>());
        report(
            "engine/sim-winning-under-load-32g",
            real_ms(median(&worsts)),
            Some(real_ms(idle)),
            seeds as usize,
            &format!(
                "worst={:.1} bound={:.1} wake_up_lateness={:.1} node={} memory_waits={} scale=1/{}",
                real_ms(worst_of(worst)),
                real_ms(worst.bound_ms),
                real_ms(worst.lateness_ms),
                node.name,
                runs.iter().map(|r| r.memory_waits).sum::<u64>(),
                (1000.0 / sim::MS_PER_REAL_SECOND) as u64
            ),
        );
    }
    if selected("sim-throughput-32g") {
        let node = sim::node("gpu-512g-141gb");
        let runs: Vec<_> = (0..3).map(|_| sim::throughput(node, "32g", 8)).collect();
        let wall = median(&runs.iter().map(|r| real_ms(r.wall_ms)).collect::<Vec<_>>());
        let util = median(&runs.iter().map(|r| r.util).collect::<Vec<_>>());
        let per_hour = median(&runs.iter().map(|r| r.per_hour).collect::<Vec<_>>());
        let bound = median(&runs.iter().map(|r| r.bound_per_hour).collect::<Vec<_>>());
        let nominal = median(&runs.iter().map(|r| r.nominal_util).collect::<Vec<_>>());
        report(
            "engine/sim-throughput-32g",
            wall,
            Some(wall * util),
            runs.len(),
            &format!(
                "util={util:.2} nominal_util={nominal:.2} partitions_per_hour={per_hour:.0} bound_per_hour={bound:.0} node={}",
                node.name
            ),
        );
    }
    if selected("sim-plan-32g") {
        let node = sim::node("gpu-256g-80gb");
        let mix = ["porep-32g", "snap-32g"];
        let run = |charge| -> Vec<sim::PlannedRun> {
            (0..3)
                .map(|_| sim::planned_throughput(node, &mix, charge, 6))
                .collect()
        };
        let (gpu, cpu) = (run(sim::Charge::Gpu), run(sim::Charge::Cpu));
        let rate = median_per_hour;
        let ratio = median(&gpu.iter().map(|r| r.ratio()).collect::<Vec<_>>());
        report(
            "engine/sim-plan-32g",
            3_600_000.0 / rate(&gpu),
            Some(3_600_000.0 / rate(&cpu)),
            gpu.len(),
            &format!(
                "partitions_per_hour={:.0} plan_per_hour={:.0} ratio_to_plan={ratio:.2} reloads={} cpu_charged_per_hour={:.0} node={} mix=porep+snap",
                rate(&gpu),
                gpu[0].plan.throughput.partitions_per_hour,
                gpu.iter().map(|r| r.loads).sum::<usize>(),
                rate(&cpu),
                node.name
            ),
        );
    }
    if selected("sim-lookahead-32g") {
        // Two 80 GB GPUs, PoRep and SnapDeals jobs alternating: the provers are the
        // bottleneck, and a PoRep partition takes 29 s of synthesis against SnapDeals' 18 s.
        let node = sim::node("gpu-512g-2x80gb");
        let mix = ["porep-32g", "snap-32g"];
        let run = |lookahead: bool| -> Vec<sim::PlannedRun> {
            (0..3)
                .map(|_| {
                    sim::planned_throughput_with(node, &mix, sim::Charge::Gpu, 6, |c| {
                        c.lookahead = lookahead
                    })
                })
                .collect()
        };
        let (ours, fifo) = (run(true), run(false));
        let rate = median_per_hour;
        let t = &ours[0].plan.throughput;
        report(
            "engine/sim-lookahead-32g",
            3_600_000.0 / rate(&ours),
            Some(3_600_000.0 / rate(&fifo)),
            ours.len(),
            &format!(
                "partitions_per_hour={:.0} fifo_per_hour={:.0} provers_bound_per_hour={:.0} plan_per_hour={:.0} node={} mix=porep+snap",
                rate(&ours),
                rate(&fifo),
                t.resource_bound,
                t.partitions_per_hour,
                node.name
            ),
        );
    }
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    simulation();
    if !selected("mixed-2k") && !selected("process") {
        return;
    }
    let fx = fixture::fixture();
    let runs: usize = std::env::var("CUZK_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let engine = Engine::open_cpu(Config::default()).unwrap();
    let workload = |name: &str| -> Arc<dyn Workload> {
        FilecoinWorkload::new(
            fx.data.request(name).unwrap(),
            fx.srs.dir(),
            fx.srs.pce_enabled(),
        )
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
