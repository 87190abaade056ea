//! `cuzk plan` for Filecoin: a mix of circuit names ("porep-32g,snap-32g,window-32g,
//! winning-32g") and a node become an [`engine::plan::Plan`](crate::engine::plan::Plan), from
//! the production figures of [`super::production`].

use super::circuits::CircuitKind;
use super::production::figures;
use super::workload::kind_priority;
use crate::engine::plan::{plan, Node, Plan, PlanItem};
use crate::groth16::CircuitShape;

/// The names [`plan_mix`] knows (those of the production table).
pub fn known_names() -> Vec<&'static str> {
    super::production::FIGURES.iter().map(|f| f.name).collect()
}

/// The plan item of circuit `name` on a GPU node (`gpu`: GPU times) or a CPU node.
pub fn plan_item(name: &str, gpu: bool) -> Result<PlanItem, String> {
    let unknown = || {
        format!(
            "unknown circuit {name:?} (known: {})",
            known_names().join(", ")
        )
    };
    let kind = CircuitKind::parse(name).ok_or_else(unknown)?;
    let f = figures(name).ok_or_else(unknown)?;
    let t = if gpu { f.gpu } else { f.cpu };
    Ok(PlanItem {
        name: f.name.to_string(),
        class: kind_priority(kind),
        partitions: f.partitions,
        shape: f.shape,
        srs_bytes: f.srs_bytes,
        pce_bytes: f.pce_bytes,
        synth_ms: t.synth_ms,
        product_ms: t.product_ms,
        synth_threads: t.synth_threads,
        start_ms: t.start_ms,
        finish_ms: t.finish_ms,
    })
}

/// Plans the circuits `mix` (names; duplicates count once) on `node`: GPU times when the node
/// has a GPU, CPU times otherwise; the transient charge is what the engine's backend there
/// charges: the GPU prover's ([`CircuitShape::gpu_transient_bytes`]; every production
/// domain is in the device's range) or the CPU prover's
/// ([`CircuitShape::cpu_transient_bytes`]).
pub fn plan_mix<S: AsRef<str>>(node: &Node, mix: &[S]) -> Result<Plan, String> {
    let gpu = !node.gpu_bytes.is_empty();
    let mut items: Vec<PlanItem> = Vec::new();
    for name in mix {
        let name = name.as_ref().trim();
        if name.is_empty() || items.iter().any(|i| i.name == name) {
            continue;
        }
        items.push(plan_item(name, gpu)?);
    }
    if items.is_empty() {
        return Err("the mix names no circuit".into());
    }
    let transient: fn(&CircuitShape) -> u64 = if gpu {
        CircuitShape::gpu_transient_bytes
    } else {
        CircuitShape::cpu_transient_bytes
    };
    Ok(plan(node, &items, &transient))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn plan_mix_uses_the_production_figures() {
        let node = Node {
            ram_bytes: 512 * GIB,
            gpu_bytes: vec![80_000_000_000],
            cores: 64,
        };
        let p = plan_mix(
            &node,
            &["porep-32g", "snap-32g", "window-32g", "winning-32g"],
        )
        .unwrap();
        assert!(p.fits, "{}", p.render());
        assert_eq!(p.items.len(), 4);
        assert_eq!(p.items[3].class, "critical");
        assert_eq!(p.items[2].class, "high");
        let porep = figures("porep-32g").unwrap();
        assert_eq!(p.items[0].srs_bytes, porep.srs_bytes + porep.pce_bytes);
        assert_eq!(p.buffer_bytes, porep.shape.set_bytes());
        let cpu = Node {
            gpu_bytes: vec![],
            ..node
        };
        let c = plan_mix(&cpu, &["porep-32g"]).unwrap();
        assert!(c.throughput.partitions_per_hour < p.throughput.partitions_per_hour);
        assert_eq!(c.gpu_fallback_bytes, 0);
    }

    #[test]
    fn a_gpu_node_is_charged_the_gpus_host_transients_and_keeps_room_for_one_fallback() {
        // SnapDeals: its synthesis spreads over few cores, so it needs many workers and
        // buffer sets, and what each partition is charged decides how many the node holds.
        let snap = figures("snap-32g").unwrap().shape;
        let gpu_node = Node {
            ram_bytes: 256 * GIB,
            gpu_bytes: vec![80_000_000_000],
            cores: 32,
        };
        let p = plan_mix(&gpu_node, &["snap-32g"]).unwrap();
        assert!(p.fits, "{}", p.render());
        assert_eq!(
            p.items[0].partition_bytes,
            snap.assignment_bytes() + snap.gpu_transient_bytes()
        );
        assert_eq!(
            p.gpu_fallback_bytes,
            snap.cpu_transient_bytes() - snap.gpu_transient_bytes()
        );
        assert!(p.render().contains("GPU fallback reserve"));
        // Charged the CPU prover's transients per partition (before), the node keeps 6 buffer
        // sets and 4 synthesis workers and is bound by synthesis; charged the GPU's, 9 and 7,
        // and the GPU bounds it.
        let as_before = plan(
            &gpu_node,
            &[plan_item("snap-32g", true).unwrap()],
            &CircuitShape::cpu_transient_bytes,
        );
        assert_eq!(
            (as_before.pool_buffers, as_before.synthesis_workers),
            (6, 4)
        );
        assert_eq!(as_before.throughput.bottleneck, "synthesis");
        assert_eq!(
            (p.pool_buffers, p.synthesis_workers),
            (9, 7),
            "{}",
            p.render()
        );
        assert_eq!(p.throughput.bottleneck, "prove_start", "{}", p.render());
        // 1714 against 1341 partitions/h (1.28x): SnapDeals' product spreads over every core
        // its worker has, so 4 workers alone synthesize 10.7 s a partition.
        assert!(
            p.throughput.partitions_per_hour > 1.25 * as_before.throughput.partitions_per_hour,
            "{}\n{}",
            p.render(),
            as_before.render()
        );
        // The reserve stays free: pool, parameters, the partitions in flight and the reserve
        // within the budget.
        let in_flight = p.in_flight.total as u64 * p.items[0].partition_bytes;
        assert!(
            p.pool_bytes + p.items[0].srs_bytes + in_flight + p.gpu_fallback_bytes
                <= p.memory_budget
        );
    }

    #[test]
    fn a_node_bound_by_its_gpu_gets_only_the_synthesis_workers_that_keep_up_with_it() {
        // 512 GiB, one 141 GB GPU, 96 cores: memory would allow 17 synthesis workers and 19
        // buffer sets, which would leave too little to keep the four parameter sets resident,
        // for nothing: the GPU lane bounds the node at 1395 partitions an hour.
        let node = Node {
            ram_bytes: 512 * GIB,
            gpu_bytes: vec![141_000_000_000],
            cores: 96,
        };
        let mix = ["porep-64g", "snap-64g", "window-64g", "winning-64g"];
        let p = plan_mix(&node, &mix).unwrap();
        let t = &p.throughput;
        assert_eq!(t.bottleneck, "prove_start", "{}", p.render());
        assert!(t.synthesis > t.resource_bound);
        assert!(p.synthesis_workers <= 6, "{}", p.render());
        assert!(p.resident.all_resident, "{}", p.render());
        // With 4 workers (the fewest that keep up, and one spare) the lane would wait whenever
        // a job whose partitions synthesize slower follows another: 1277 partitions/h counted
        // against its 1395. A fifth worker keeps the pipeline deep enough, so the plan keeps it.
        assert_eq!(p.synthesis_workers, 5, "{}", p.render());
        assert_eq!(t.pipeline_ms_per_mix, 0.0, "{}", p.render());
        assert_eq!(t.partitions_per_hour, t.resource_bound);
        // PoRep's witness splits over a partition's 18 challenges: on 32 cores two workers
        // (one to keep up, one spare) each spread a partition over 15 cores and outpace the
        // GPU, where six workers on a core each could not.
        let small = Node {
            ram_bytes: 256 * GIB,
            gpu_bytes: vec![80_000_000_000],
            cores: 32,
        };
        let q = plan_mix(&small, &["porep-32g"]).unwrap();
        assert_eq!(q.throughput.bottleneck, "prove_start", "{}", q.render());
        assert_eq!(q.synthesis_workers, 2, "{}", q.render());
        // Each worker has 15.5 cores (31 beside the lane): the witness uses 15, the product
        // all of them.
        let porep = figures("porep-32g").unwrap().gpu;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        let witness_ms = porep.synth_ms - porep.product_ms;
        assert!(close(
            q.items[0].synth_ms,
            witness_ms / 15.0 + porep.product_ms / 15.5
        ));
        // A 16-core node gives each of its workers fewer cores than a partition can use.
        let few_cores = plan_mix(&Node { cores: 16, ..small }, &["porep-32g"]).unwrap();
        let w = few_cores.synthesis_workers as f64;
        assert!(close(
            few_cores.items[0].synth_ms,
            porep.synth_ms / (15.0 / w)
        ));
    }

    #[test]
    fn unknown_names_are_errors() {
        let node = Node::default();
        let e = plan_mix(&node, &["porep-33g"]).unwrap_err();
        assert!(e.contains("porep-33g") && e.contains("porep-32g"), "{e}");
        assert!(plan_mix::<&str>(&node, &[]).is_err());
    }
}
