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
/// has a GPU, CPU times otherwise; the transient charge is the CPU prover's
/// ([`CircuitShape::cpu_transient_bytes`]), which is what the engine's default backends charge.
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
    Ok(plan(node, &items, &CircuitShape::cpu_transient_bytes))
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
    }

    #[test]
    fn unknown_names_are_errors() {
        let node = Node::default();
        let e = plan_mix(&node, &["porep-33g"]).unwrap_err();
        assert!(e.contains("porep-33g") && e.contains("porep-32g"), "{e}");
        assert!(plan_mix::<&str>(&node, &[]).is_err());
    }
}
