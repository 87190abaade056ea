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
        let porep = figures("porep-32g").unwrap().shape;
        let gpu_node = Node {
            ram_bytes: 256 * GIB,
            gpu_bytes: vec![80_000_000_000],
            cores: 32,
        };
        let p = plan_mix(&gpu_node, &["porep-32g"]).unwrap();
        assert!(p.fits, "{}", p.render());
        assert_eq!(
            p.items[0].partition_bytes,
            porep.assignment_bytes() + porep.gpu_transient_bytes()
        );
        assert_eq!(
            p.gpu_fallback_bytes,
            porep.cpu_transient_bytes() - porep.gpu_transient_bytes()
        );
        assert!(p.render().contains("GPU fallback reserve"));
        // Charged the CPU prover's transients per partition (before), a 256 GiB node kept
        // 4 buffer sets and 2 synthesis workers, bound by synthesis at 248 partitions/h.
        let as_before = plan(
            &gpu_node,
            &[plan_item("porep-32g", true).unwrap()],
            &CircuitShape::cpu_transient_bytes,
        );
        assert_eq!(
            (as_before.pool_buffers, as_before.synthesis_workers),
            (4, 2)
        );
        assert!(
            p.pool_buffers >= 2 * as_before.pool_buffers,
            "{}",
            p.render()
        );
        assert!(p.synthesis_workers >= 3 * as_before.synthesis_workers);
        assert!(
            p.throughput.partitions_per_hour > 2.5 * as_before.throughput.partitions_per_hour,
            "{}",
            p.render()
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
        let per_worker = t.synthesis / p.in_flight.synthesis as f64;
        assert!(t.synthesis >= t.resource_bound + per_worker * 0.5);
        assert!(t.synthesis <= t.resource_bound + per_worker * 2.0);
        assert!(p.resident.all_resident, "{}", p.render());
        // With so few workers ahead of it, the lane waits whenever a job whose partitions
        // synthesize slower follows another: the rate counted on is below the lane's.
        assert!(t.pipeline_ms_per_mix > 0.0, "{}", p.render());
        assert!(t.partitions_per_hour < t.resource_bound);
        assert!(p
            .render()
            .contains("the prover waits for its first partition"));
        // A node bound by synthesis keeps every worker memory allows.
        let small = Node {
            ram_bytes: 256 * GIB,
            gpu_bytes: vec![80_000_000_000],
            cores: 32,
        };
        let q = plan_mix(&small, &["porep-32g"]).unwrap();
        assert_eq!(q.throughput.bottleneck, "synthesis");
        assert_eq!(q.synthesis_workers, 6, "{}", q.render());
    }

    #[test]
    fn unknown_names_are_errors() {
        let node = Node::default();
        let e = plan_mix(&node, &["porep-33g"]).unwrap_err();
        assert!(e.contains("porep-33g") && e.contains("porep-32g"), "{e}");
        assert!(plan_mix::<&str>(&node, &[]).is_err());
    }
}
