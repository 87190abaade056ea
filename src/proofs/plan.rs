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
        preamble_ms: t.preamble_ms,
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
    let cores = node.cores;
    let transient = move |shape: &CircuitShape| {
        if gpu {
            shape.gpu_transient_bytes()
        } else {
            shape.cpu_transient_bytes(cores)
        }
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
            snap.cpu_transient_bytes(gpu_node.cores) - snap.gpu_transient_bytes()
        );
        assert!(p.render().contains("GPU fallback reserve"));
        // Charged the CPU prover's transients per partition (as before the GPU's were
        // measured), a 128 GiB node keeps 2 buffer sets; charged the GPU's, 3. Either way one
        // synthesis worker keeps up with the GPU: SnapDeals' witness spreads over its 86
        // challenges.
        let small = Node {
            ram_bytes: 128 * GIB,
            ..gpu_node.clone()
        };
        let as_before = plan(
            &small,
            &[plan_item("snap-32g", true).unwrap()],
            &|s: &CircuitShape| s.cpu_transient_bytes(small.cores),
        );
        let q = plan_mix(&small, &["snap-32g"]).unwrap();
        assert_eq!(
            (as_before.pool_buffers, q.pool_buffers),
            (2, 3),
            "{}\n{}",
            as_before.render(),
            q.render()
        );
        for plan in [&as_before, &q, &p] {
            assert_eq!(plan.synthesis_workers, 1 + (plan.pool_buffers > 3) as usize);
            assert_eq!(
                plan.throughput.bottleneck,
                "prove_start",
                "{}",
                plan.render()
            );
        }
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
        assert!(p.resident.all_resident, "{}", p.render());
        // Every circuit's witness spreads over its parts (SnapDeals' by challenge after one
        // preamble), so one worker keeps up and one is spare, and the lane never waits.
        assert_eq!(p.synthesis_workers, 2, "{}", p.render());
        assert_eq!(t.pipeline_ms_per_mix, 0.0, "{}", p.render());
        assert_eq!(t.partitions_per_hour, t.resource_bound);
        // With SnapDeals' witness as it was before it was by challenge and native (18.8 s of
        // it over 1.65 cores: its ranges ran past the challenges before them), the fewest
        // workers that keep up and one spare would leave the lane waiting whenever a job whose
        // partitions synthesize slower follows another; the plan keeps spares until the
        // pipeline is deep enough (6 workers) and the lane never waits.
        let by_range: Vec<PlanItem> = mix
            .iter()
            .map(|name| {
                let mut item = plan_item(name, true).unwrap();
                if name.starts_with("snap") {
                    let witness_ms = item.synth_ms - item.product_ms;
                    item.synth_ms += 18_800.0 - witness_ms;
                    (item.preamble_ms, item.synth_threads) = (0.0, 1.65);
                }
                item
            })
            .collect();
        let q = plan(&node, &by_range, &CircuitShape::gpu_transient_bytes);
        assert_eq!(q.synthesis_workers, 6, "{}", q.render());
        assert_eq!(q.throughput.pipeline_ms_per_mix, 0.0, "{}", q.render());
        assert_eq!(
            q.throughput.partitions_per_hour,
            q.throughput.resource_bound
        );
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
