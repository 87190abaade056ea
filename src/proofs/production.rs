//! The production figures of Filecoin's circuits at 32 GiB and 64 GiB (and the 2 KiB test
//! sizes): partitions per proof, one partition's circuit shape, decoded parameter bytes, and
//! per-partition times on a CPU node and a GPU node. `cuzk plan` and the engine simulation are
//! built from this table; `docs/production-figures.md` says where each number comes from
//! (published, derived from published counts, or estimated).

use crate::groth16::CircuitShape;

/// Per-partition durations of one circuit on one kind of node, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartitionTimes {
    /// Synthesis of one partition (witness and sparse product) on one core: its CPU time.
    pub synth_ms: f64,
    /// The sparse product's share of `synth_ms`: it runs over rows on every core the worker
    /// has, where the witness spreads over at most `synth_threads` (0: not told apart).
    pub product_ms: f64,
    /// The witness's share of `synth_ms` synthesized once on one core before its parts spread
    /// (SnapDeals' shared preamble; 0 where each range synthesizes its own copy).
    pub preamble_ms: f64,
    /// The most cores one partition's witness keeps busy (see
    /// [`crate::engine::plan::synthesis_wall_ms`]); 1 on a CPU node, where the prover's MSMs
    /// take the cores.
    pub synth_threads: f64,
    /// `prove_start` (a/b/c upload, NTTs, H MSM) on the prover lane.
    pub start_ms: f64,
    /// `prove_finish` (L, A, B MSMs, assembly) on a finalizer.
    pub finish_ms: f64,
}

/// One Filecoin circuit at one sector size, as production runs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CircuitFigures {
    /// The name `cuzk plan` and `cuzk params` use ("porep-32g").
    pub name: &'static str,
    /// Partitions of one proof (WindowPoSt: one job per partition, as the engine takes them).
    pub partitions: usize,
    /// One partition's circuit.
    pub shape: CircuitShape,
    /// Bytes of the decoded parameter set (affine points as held in memory).
    pub srs_bytes: u64,
    /// Bytes of the circuit's pre-compiled constraint system, resident with the parameters
    /// (measured with `cuzk params pce <name>`; 64 GiB SnapDeals scaled from 32 GiB by
    /// constraints).
    pub pce_bytes: u64,
    /// Times on a CPU-only node (32 cores; estimated from our 2 KiB measurements).
    pub cpu: PartitionTimes,
    /// Times on a GPU node: the prover's from the anchor's published 32 GiB figures, scaled by
    /// constraints; the witness from our native witness's CPU time per constraint at 2 KiB (one
    /// thread), times the 1.3 its 32 GiB SnapDeals measurement costs more (SnapDeals': measured
    /// at 32 GiB), spread over the parts a partition splits into.
    pub gpu: PartitionTimes,
}

const fn times(synth_ms: f64, start_ms: f64, finish_ms: f64) -> PartitionTimes {
    PartitionTimes {
        synth_ms,
        product_ms: 0.0,
        preamble_ms: 0.0,
        synth_threads: 1.0,
        start_ms,
        finish_ms,
    }
}

/// [`times`] for a synthesis of `witness_ms` of witness, of which `preamble_ms` runs on one
/// core before its parts spread (SnapDeals: the preamble but for its apex tree; 0 where each
/// range synthesizes its own copy) and the rest over up to `synth_threads` cores, and
/// `product_ms` of sparse product over all of its worker's.
const fn threaded(
    witness_ms: f64,
    preamble_ms: f64,
    product_ms: f64,
    synth_threads: f64,
    start_ms: f64,
    finish_ms: f64,
) -> PartitionTimes {
    PartitionTimes {
        synth_ms: witness_ms + product_ms,
        product_ms,
        preamble_ms,
        synth_threads,
        start_ms,
        finish_ms,
    }
}

const fn shape(constraints: usize, inputs: usize, aux: usize) -> CircuitShape {
    CircuitShape {
        constraints,
        inputs,
        aux,
    }
}

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// Every circuit of the table.
pub const FIGURES: &[CircuitFigures] = &[
    CircuitFigures {
        name: "porep-32g",
        partitions: 10,
        shape: shape(130_278_869, 328, 130_169_893),
        srs_bytes: 47_373_927_744,
        pce_bytes: 1_705_196_521,
        cpu: times(29_000.0, 50_000.0, 88_000.0),
        gpu: threaded(2_500.0, 0.0, 10_750.0, 15.0, 3_300.0, 700.0),
    },
    CircuitFigures {
        name: "porep-64g",
        partitions: 10,
        shape: shape(131_186_177, 328, 131_076_643),
        srs_bytes: 47_600_000_000,
        pce_bytes: 1_717_844_540,
        cpu: times(29_200.0, 50_400.0, 88_600.0),
        gpu: threaded(2_520.0, 0.0, 10_830.0, 15.0, 3_320.0, 705.0),
    },
    CircuitFigures {
        name: "snap-32g",
        partitions: 16,
        shape: shape(81_049_504, 5, 80_978_488),
        srs_bytes: 33 * GIB,
        pce_bytes: 1_069_760_138,
        cpu: times(18_000.0, 31_000.0, 55_000.0),
        gpu: threaded(2_210.0, 234.0, 5_710.0, 86.0, 2_100.0, 450.0),
    },
    CircuitFigures {
        name: "snap-64g",
        partitions: 16,
        shape: shape(85_000_000, 5, 84_950_000),
        srs_bytes: 34 * GIB,
        pce_bytes: 1_121_900_000,
        cpu: times(18_900.0, 32_500.0, 57_700.0),
        gpu: threaded(2_320.0, 245.0, 5_990.0, 86.0, 2_200.0, 470.0),
    },
    CircuitFigures {
        name: "window-32g",
        partitions: 1,
        shape: shape(125_305_057, 25_840, 126_902_376),
        srs_bytes: 57 * GIB,
        pce_bytes: 33_111_805,
        cpu: times(27_900.0, 48_100.0, 84_600.0),
        gpu: threaded(19_000.0, 0.0, 17_070.0, 32.0, 3_200.0, 680.0),
    },
    CircuitFigures {
        name: "window-64g",
        partitions: 1,
        shape: shape(129_913_201, 25_301, 131_500_200),
        srs_bytes: 59 * GIB + GIB / 2,
        pce_bytes: 34_325_759,
        cpu: times(28_900.0, 49_900.0, 87_700.0),
        gpu: threaded(19_700.0, 0.0, 17_700.0, 32.0, 3_300.0, 700.0),
    },
    CircuitFigures {
        name: "winning-32g",
        partitions: 1,
        shape: shape(370_723, 133, 375_210),
        srs_bytes: 184 * MIB,
        pce_bytes: 266_239,
        cpu: times(52.0, 250.0, 450.0),
        gpu: threaded(56.0, 0.0, 51.0, 16.0, 550.0, 120.0),
    },
    CircuitFigures {
        name: "winning-64g",
        partitions: 1,
        shape: shape(391_447, 133, 396_000),
        srs_bytes: 195 * MIB,
        pce_bytes: 277_914,
        cpu: times(55.0, 265.0, 475.0),
        gpu: threaded(60.0, 0.0, 52.0, 16.0, 580.0, 125.0),
    },
];

/// How many variables a circuit's A and B queries select: what sizes its parameters' `a`,
/// `b_g1` and `b_g2` queries (with `inputs` and `aux`, the whole parameter set).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryDensities {
    /// Aux variables that occur in some A linear combination.
    pub a_aux: usize,
    /// Inputs that occur in some B linear combination.
    pub b_input: usize,
    /// Aux variables that occur in some B linear combination.
    pub b_aux: usize,
}

/// One 32 GiB PoRep partition's densities (published with its PCE; see
/// docs/production-figures.md): nearly every aux variable is in A, a quarter in B. The GPU
/// check's synthetic 32 GiB partition is built to them.
pub const POREP_32G_DENSITIES: QueryDensities = QueryDensities {
    a_aux: 129_753_292,
    b_input: 1,
    b_aux: 33_112_281,
};

/// The figures of circuit `name` ("porep-32g"), if the table has them.
pub fn figures(name: &str) -> Option<&'static CircuitFigures> {
    FIGURES.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_the_design_figures() {
        let porep = figures("porep-32g").unwrap();
        assert_eq!(porep.shape.domain(), 1 << 27);
        // DESIGN.md's ~12 GiB of a/b/c, and aux (the domain's capacity) beside them.
        assert_eq!(porep.shape.set_bytes(), 12 * GIB + 4 * GIB);
        assert!(porep.shape.aux <= porep.shape.domain());
        assert!((43 * GIB..48 * GIB).contains(&porep.srs_bytes));
        for f in FIGURES {
            assert!(f.shape.aux > 0 && f.partitions > 0, "{}", f.name);
            // A buffer set holds aux in the domain's capacity: true of every Filecoin circuit.
            assert!(f.shape.aux <= f.shape.domain(), "{}", f.name);
            assert!(
                f.gpu.start_ms + f.gpu.finish_ms < f.cpu.start_ms + f.cpu.finish_ms,
                "{}",
                f.name
            );
        }
    }

    #[test]
    fn porep_32g_densities_give_its_parameter_bytes() {
        let porep = figures("porep-32g").unwrap();
        let d = POREP_32G_DENSITIES;
        let (inputs, aux) = (porep.shape.inputs, porep.shape.aux);
        let b = (d.b_input + d.b_aux) as u64;
        let g1_points = (porep.shape.domain() - 1 + aux + inputs + d.a_aux) as u64 + b;
        // The verifying key's ic (one G1 point per input) beside the five queries.
        assert_eq!(
            96 * g1_points + 192 * b + 96 * inputs as u64,
            porep.srs_bytes
        );
        assert!(d.a_aux <= aux && d.b_aux <= aux && d.b_input <= inputs);
    }
}
