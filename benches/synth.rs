//! `synth` group: synthesis of one partition of a real 2 KiB request through the circuit's
//! pre-compiled constraint system (witness generation plus a parallel sparse product) against
//! evaluating every constraint as the circuit enforces it (cuzk's synthesis before the PCE, the
//! way bellperson's prover does it). Also the PCE's size: per 2 KiB circuit, and for PoRep at
//! 8 MiB and 512 MiB (recorded here) extrapolated per constraint to a 32 GiB partition. And
//! recording a PCE from one part (sector) against recording it constraint by constraint, and
//! the product of a PCE kept as one sector's rows against the same PCE with every row stored.
//! And a parted circuit's witness split over the threads against the same on one thread.

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;

use std::sync::Arc;

use bellperson::Circuit;
use blstrs::Scalar;
use common::{interleaved, named, report, selected, time_ms};
use cuzk::groth16::pce::{Repeated, Rows};
use cuzk::groth16::{
    pce, synthesize_parted_with_pce, synthesize_with_pce, AbcBuffers, BufferSet, PartedCircuit,
    Pce, WholeCircuit,
};
use cuzk::proofs::circuits::{BlankCircuitVisitor, CircuitKind};
use cuzk::proofs::pce::{kind_pce, record_kind};
use cuzk::proofs::{PartitionVisitor, ProofRequest, ProofResult};
use ff::Field;
use rand::{Rng, SeedableRng};

/// Constraints of one 32 GiB PoRep partition (`cuzk params pce porep-32g`).
const POREP_32G_CONSTRAINTS: f64 = 130_278_869.0;

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cases = [
        ("porep-2k", "porep-v1_1", 5),
        ("snap-2k", "snap", 5),
        ("winning-2k", "winning", 9),
    ];
    // The 2 KiB test data and parameters, made only when a synthesis case runs.
    let parted_cases = [
        ("parted-snap-2k", "snap", 7),
        ("parted-porep-2k", "porep-v1_1", 5),
        ("parted-winning-2k", "winning", 9),
    ];
    let fixture = (cases
        .iter()
        .chain(&parted_cases)
        .any(|(case, _, _)| selected(case))
        || ["product-porep-2k", "product-snap-2k", "product-winning-2k"]
            .into_iter()
            .any(selected))
    .then(fixture::fixture);
    for (case, name, runs) in cases {
        let (Some(fx), true) = (&fixture, selected(case)) else {
            continue;
        };
        let (request, pce) = request_and_pce(fx, name);
        // Each side reuses one buffer set, as the engine's pool does: its memory is written
        // before the timed runs, so neither side pays for faulting in fresh pages.
        let synth = |with_pce: bool, set: &mut BufferSet| {
            let mut asg = request
                .synthesize_partition(0, std::mem::take(set), with_pce.then_some(&*pce))
                .expect("synthesis")
                .0;
            assert_eq!(asg.num_constraints(), pce.num_constraints);
            *set = asg.take_buffers();
        };
        let (mut ours_set, mut base_set) = (BufferSet::default(), BufferSet::default());
        let (ours, base) = interleaved(
            runs,
            || synth(true, &mut ours_set),
            || synth(false, &mut base_set),
        );
        // Both sides must give the same assignment, or the speed-up means nothing.
        let [o, b] = [true, false].map(|with_pce| {
            request
                .synthesize_partition(0, BufferSet::default(), with_pce.then_some(&*pce))
                .expect("synthesis")
                .0
        });
        assert!(
            o.inputs == b.inputs
                && o.aux[..] == b.aux[..]
                && o.abc.a[..] == b.abc.a[..]
                && o.abc.b[..] == b.abc.b[..]
                && o.abc.c[..] == b.abc.c[..],
            "{case}: the PCE synthesis differs from the plain one"
        );
        report(
            &format!("synth/{case}"),
            ours,
            Some(base),
            runs,
            &format!(
                "constraints={} nonzeros={} pce_bytes={} bytes_per_nonzero={:.2}",
                pce.num_constraints,
                pce.nonzeros(),
                pce.byte_size(),
                pce.byte_size() as f64 / pce.nonzeros() as f64
            ),
        );
    }
    // A parted circuit's witness split over the threads (ours) against the same PCE synthesis
    // of the whole circuit by storage-proofs' own code (on one thread; PoSt's in its parallel
    // chunks): PoRep's ranges each synthesize a copy of the preamble, SnapDeals' start after
    // one shared preamble, PoSt's sectors run our synthesis with native Poseidon witnesses.
    // `cpu_ms=` the process's CPU time per run, ours then base.
    for (case, name, runs) in parted_cases {
        let (Some(fx), true) = (&fixture, selected(case)) else {
            continue;
        };
        let (request, pce) = request_and_pce(fx, name);
        let mut sides = [true, false].map(|parted| PceSynthesis {
            pce: &pce,
            parted,
            set: BufferSet::default(),
            cpu_ms: Vec::new(),
        });
        let [ours_side, base_side] = &mut sides;
        let run = |side: &mut PceSynthesis| {
            request.visit_partition(0, Some(side)).expect("synthesis");
        };
        let (ours, base) = interleaved(runs, || run(ours_side), || run(base_side));
        assert_eq!(
            pce::parted_fallbacks(),
            0,
            "{case}: the parted witness fell back to one thread"
        );
        let [ours_cpu, base_cpu] = sides.map(|side| common::median(&side.cpu_ms));
        report(
            &format!("synth/{case}"),
            ours,
            Some(base),
            runs,
            &format!(
                "threads={} cpu_ms={ours_cpu:.1},{base_cpu:.1}",
                rayon::current_num_threads()
            ),
        );
    }
    // The sparse product of a PCE kept as one sector's rows (ours) against the same PCE with
    // every row stored (what cuzk held before): WinningPoSt's real 2 KiB witness, and 32 GiB
    // WindowPoSt's rows at 256 of its 2349 sectors (the whole would not fit this machine
    // beside its witness), on a witness of one third zeros, ones and other values.
    if let (Some(fx), true) = (&fixture, selected("product-winning-2k")) {
        let (request, pce) = request_and_pce(fx, "winning");
        let asg = request
            .synthesize_partition(0, BufferSet::default(), Some(&*pce))
            .expect("synthesis")
            .0;
        compare_products("product-winning-2k", &pce, &asg.inputs, &asg.aux, 15);
    }
    // The sparse product alone on a real 2 KiB partition's witness (PoRep's PCE is kept flat),
    // checked against the constraints' own evaluation: time per stored term and thread, the
    // figure that scales to a 32 GiB partition's 722M terms.
    for (case, name) in [
        ("product-porep-2k", "porep-v1_1"),
        ("product-snap-2k", "snap"),
    ] {
        let (Some(fx), true) = (&fixture, selected(case)) else {
            continue;
        };
        let (request, pce) = request_and_pce(fx, name);
        // Plain synthesis: the witness, and a, b and c as the circuit's own constraints give
        // them, to check the product against.
        let asg = request
            .synthesize_partition(0, BufferSet::default(), None)
            .expect("synthesis")
            .0;
        let abc = time_product(case, &pce, &asg.inputs, &asg.aux, 15);
        assert!(
            abc.a[..] == asg.abc.a[..] && abc.b[..] == asg.abc.b[..] && abc.c[..] == asg.abc.c[..],
            "{case}: the product differs from the constraints' own evaluation"
        );
    }
    // The same at a 32 GiB partition's size: its real PCE, on a witness with a 2 KiB PoRep
    // partition's mix of values (51% zeros, 47% ones, 2% others) at random, so the product's
    // reads of 130M variables' kinds and its 12.5 GB of writes meet memory, not cache. Named
    // only: PoRep's needs about 19 GB (`cargo bench --bench synth -- product-porep-32g`).
    for case in ["product-porep-32g", "product-snap-32g"] {
        if !named(case) {
            continue;
        }
        let kind = CircuitKind::parse(case.trim_start_matches("product-")).unwrap();
        let pce = record_kind(kind).expect("recording");
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(32);
        let mut value = || match rng.gen_range(0..100) {
            0..=50 => Scalar::ZERO,
            51..=97 => Scalar::ONE,
            _ => Scalar::random(&mut rng),
        };
        let inputs: Vec<Scalar> = (0..pce.num_inputs).map(|_| value()).collect();
        let aux: Vec<Scalar> = (0..pce.num_aux).map(|_| value()).collect();
        time_product(case, &pce, &inputs, &aux, 3);
    }
    if selected("product-window-32g") && named("product-window-32g") {
        let pce = record_kind(CircuitKind::parse("window-32g").unwrap()).expect("recording");
        let pce = with_parts(&pce, 256);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(32);
        let mut value = || match rng.gen_range(0..3) {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            _ => Scalar::random(&mut rng),
        };
        let inputs: Vec<Scalar> = (0..pce.num_inputs).map(|_| value()).collect();
        let aux: Vec<Scalar> = (0..pce.num_aux).map(|_| value()).collect();
        compare_products("product-window-32g-256-sectors", &pce, &inputs, &aux, 5);
    }
    if selected("pce-size") {
        // PoRep's PCE grows with its constraints: bytes per constraint at three sizes, and what
        // they give for a 32 GiB partition.
        let mut per_constraint = Vec::new();
        for name in ["porep-2k", "porep-8m", "porep-512m"] {
            let pce = record_kind(CircuitKind::parse(name).unwrap()).unwrap();
            let b = pce.byte_size() as f64 / pce.num_constraints as f64;
            per_constraint.push(b);
            eprintln!(
                "  {name}: {} constraints, pce_bytes={} ({b:.2} bytes per constraint)",
                pce.num_constraints,
                pce.byte_size()
            );
        }
        let worst = per_constraint.iter().cloned().fold(0.0, f64::max);
        let gib = worst * POREP_32G_CONSTRAINTS / (1u64 << 30) as f64;
        println!(
            "BENCH synth/pce-size-porep-32g-extrapolated ours={gib:.2} base=NA speedup=NA runs=1 \
             unit=GiB bytes_per_constraint={worst:.2} anchor_gib=26"
        );
    }
    // A 32 GiB SnapDeals partition's witness: by challenge over the pool after one preamble
    // (ours, what the engine runs) against the same synthesis on one thread, on a partition of
    // the real shape with random values. Also the preamble (its apex tree spread over the pool,
    // and on one thread) and one challenge alone, which give a node's wall time. Named only
    // (about 2.6 GB of aux and a few minutes: `cargo bench --bench synth -- witness-snap-32g`).
    if named("witness-snap-32g") {
        let parts = snap32::partition();
        let (ours, base) = interleaved(
            3,
            || snap32::by_challenge(&parts),
            || snap32::one_thread(&parts),
        );
        let (preamble_ms, challenge_ms) = snap32::pieces(&parts);
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a pool");
        let (preamble_one_thread_ms, _) = one_thread.install(|| snap32::pieces(&parts));
        report(
            "synth/witness-snap-32g",
            ours,
            Some(base),
            3,
            &format!(
                "threads={} challenges={} preamble_ms={preamble_ms:.0} \
                 preamble_one_thread_ms={preamble_one_thread_ms:.0} challenge_ms={challenge_ms:.1}",
                rayon::current_num_threads(),
                parts.parts(),
            ),
        );
    }
    // Recording a PCE: from one part, replicated (ours), against constraint by constraint.
    // The production sizes take minutes and gigabytes, so they run only when named
    // (`cargo bench --bench synth -- record-window-32g`), once each.
    for (case, runs) in [
        ("record-winning-2k", 5),
        ("record-winning-8m", 3),
        ("record-window-32g", 1),
        ("record-winning-32g", 1),
    ] {
        let production = case.ends_with("32g");
        if !(selected(case) && (!production || named(case))) {
            continue;
        }
        let kind = CircuitKind::parse(case.trim_start_matches("record-")).unwrap();
        let mut recorded = None;
        let mut ours = || recorded = Some(record_kind(kind).expect("recording"));
        let mut whole = None;
        let mut base = || whole = Some(record_whole(kind));
        let (ours_ms, base_ms) = if production {
            (time_ms(&mut ours).0, time_ms(&mut base).0)
        } else {
            interleaved(runs, ours, base)
        };
        let (recorded, whole) = (recorded.unwrap(), whole.unwrap());
        let pce_bytes = recorded.byte_size();
        assert!(
            recorded.into_flat() == whole,
            "{case}: the recordings differ"
        );
        report(
            &format!("synth/{case}"),
            ours_ms,
            Some(base_ms),
            runs,
            &format!(
                "constraints={} nonzeros={} pce_bytes={pce_bytes} whole_pce_bytes={}",
                whole.num_constraints,
                whole.nonzeros(),
                whole.byte_size()
            ),
        );
    }
}

/// Whether `case` was named exactly on the command line.
/// Records `kind`'s blank circuit whole, constraint by constraint, as cuzk did before it
/// replicated parts.
fn record_whole(kind: CircuitKind) -> Pce {
    struct Whole(Option<Pce>);
    impl BlankCircuitVisitor for Whole {
        fn visit<C: Circuit<Scalar>>(&mut self, circuit: C) {
            self.0 = Some(pce::record(circuit).expect("recording"));
        }
    }
    let mut whole = Whole(None);
    kind.visit_blank(&mut whole).expect("blank circuit");
    whole.0.expect("visited")
}

/// Times `pce`'s product on the witness `inputs` ++ `aux` (median of `runs` after one
/// untimed run that faults in the buffers) and prints its BENCH line with the time per term
/// and thread; returns a, b and c.
fn time_product(
    case: &str,
    pce: &Pce,
    inputs: &[Scalar],
    aux: &[Scalar],
    runs: usize,
) -> AbcBuffers {
    let mut abc = AbcBuffers::default();
    pce.evaluate(inputs, aux, &mut abc).expect("product");
    let times: Vec<f64> = (0..runs)
        .map(|_| time_ms(|| pce.evaluate(inputs, aux, &mut abc).expect("product")).0)
        .collect();
    let ms = common::median(&times);
    let threads = rayon::current_num_threads();
    report(
        &format!("synth/{case}"),
        ms,
        None,
        runs,
        &format!(
            "constraints={} nonzeros={} ns_per_term_thread={:.2} threads={threads}",
            pce.num_constraints,
            pce.nonzeros(),
            ms * 1e6 * threads as f64 / pce.nonzeros() as f64
        ),
    );
    abc
}

/// Times `pce`'s product (kept as one part's rows) against the same PCE with every row stored,
/// on the witness `inputs` ++ `aux`, and asserts both write the same a, b and c.
fn compare_products(case: &str, pce: &Pce, inputs: &[Scalar], aux: &[Scalar], runs: usize) {
    assert!(
        matches!(pce.rows, Rows::Repeated(_)),
        "{case}: not kept as parts"
    );
    let flat = pce.clone().into_flat();
    let (mut ours_abc, mut base_abc) = (AbcBuffers::default(), AbcBuffers::default());
    let (ours, base) = interleaved(
        runs,
        || pce.evaluate(inputs, aux, &mut ours_abc).expect("product"),
        || flat.evaluate(inputs, aux, &mut base_abc).expect("product"),
    );
    for (o, b) in [
        (&ours_abc.a, &base_abc.a),
        (&ours_abc.b, &base_abc.b),
        (&ours_abc.c, &base_abc.c),
    ] {
        assert!(o[..] == b[..], "{case}: the products differ");
    }
    report(
        &format!("synth/{case}"),
        ours,
        Some(base),
        runs,
        &format!(
            "constraints={} nonzeros={} pce_bytes={} flat_pce_bytes={}",
            pce.num_constraints,
            pce.nonzeros(),
            pce.byte_size(),
            flat.byte_size()
        ),
    );
}

/// `pce` (kept as parts) with `parts` parts instead of its own count: the same rows per part,
/// for a product at a scale this machine holds. Its densities are dropped (the product reads
/// none).
fn with_parts(pce: &Pce, parts: usize) -> Pce {
    let Rows::Repeated(repeated) = &pce.rows else {
        panic!("not kept as parts");
    };
    let [preamble_inputs, preamble_aux, preamble_rows, part_inputs, part_aux, part_rows] =
        repeated.layout.to_counts();
    let num_inputs = preamble_inputs + parts * part_inputs;
    Pce {
        num_inputs,
        num_aux: preamble_aux + parts * part_aux,
        num_constraints: preamble_rows + parts * part_rows + num_inputs,
        coeffs: pce.coeffs.clone(),
        rows: Rows::Repeated(Repeated {
            parts,
            ..repeated.clone()
        }),
        ..Pce::default()
    }
}

/// The 2 KiB test request `name` and its circuit's PCE (loaded or recorded once).
fn request_and_pce(fx: &fixture::Fixture, name: &str) -> (ProofRequest, Arc<Pce>) {
    let request = fx.data.request(name).unwrap();
    let kind = request.circuit_kind();
    let srs = fx.srs.get(kind).unwrap();
    let pce = kind_pce(kind, &srs, fx.srs.dir()).unwrap();
    (request, pce)
}

/// Synthesizes a visited parted circuit with its PCE, split over the threads or on one, into
/// one reused buffer set, keeping each run's process CPU time.
struct PceSynthesis<'a> {
    pce: &'a Pce,
    parted: bool,
    set: BufferSet,
    cpu_ms: Vec<f64>,
}

impl PartitionVisitor for PceSynthesis<'_> {
    fn visit<C: Circuit<Scalar> + Send>(&mut self, _: C) -> ProofResult<()> {
        panic!("the case's circuit is parted")
    }

    fn visit_parted<P: PartedCircuit + Send>(&mut self, circuit: P) -> ProofResult<()> {
        let set = std::mem::take(&mut self.set);
        let started = process_cpu_ms();
        let mut asg = if self.parted {
            synthesize_parted_with_pce(&circuit, self.pce, set)?
        } else {
            synthesize_with_pce(WholeCircuit(circuit), self.pce, set)?
        };
        self.cpu_ms.push(process_cpu_ms() - started);
        assert_eq!(asg.num_constraints(), self.pce.num_constraints);
        self.set = asg.take_buffers();
        Ok(())
    }
}

/// CPU time the process has used, user and system, in milliseconds.
fn process_cpu_ms() -> f64 {
    // SAFETY: getrusage writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

/// The pieces of `witness-snap-32g`.
mod snap32 {
    use blstrs::Scalar;
    use cuzk::groth16::pce::witness::WitnessCs;
    use cuzk::groth16::PartedCircuit;
    use cuzk::proofs::snap_parts::UpdateParts;
    use ff::Field;
    use filecoin_proofs::SectorShape32GiB;
    use rand::SeedableRng;
    use rayon::prelude::*;
    use storage_proofs_core::compound_proof::CompoundProof;
    use storage_proofs_update::{EmptySectorUpdate, EmptySectorUpdateCompound, PublicParams};

    use super::common::median;
    use super::time_ms;

    /// A 32 GiB SnapDeals partition: storage-proofs-update's blank circuit with random values
    /// (partition 5, the production h), one partition path shared by every challenge, and no
    /// new leaves given (they are computed, not checked).
    pub fn partition() -> UpdateParts<SectorShape32GiB> {
        type Compound = EmptySectorUpdateCompound<SectorShape32GiB>;
        let pp = PublicParams::from_sector_size(32 << 30);
        let mut circuit =
            <Compound as CompoundProof<EmptySectorUpdate<SectorShape32GiB>, _>>::blank_circuit(&pp);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut random = || Some(Scalar::random(&mut rng));
        let k_and_h = 5 | (1 << 3) << pp.partition_bit_len;
        let public = &mut circuit.pub_inputs;
        public.k_and_h_select = Some(Scalar::from(k_and_h as u64));
        public.comm_r_old = random();
        public.comm_d_new = random();
        public.comm_r_new = random();
        let private = &mut circuit.priv_inputs;
        private.comm_c = random();
        private.root_r_old = random();
        private.root_r_new = random();
        private
            .apex_leafs
            .iter_mut()
            .for_each(|leaf| *leaf = random());
        let below_partition = pp.challenge_bit_len - pp.partition_bit_len;
        let partition_path: Vec<_> = (below_partition..pp.challenge_bit_len)
            .map(|_| random())
            .collect();
        for proof in &mut private.challenge_proofs {
            proof.leaf_r_old = random();
            proof.leaf_d_new = random();
            proof.leaf_r_new = None;
            for row in proof.path_r_old.iter_mut().chain(&mut proof.path_r_new) {
                row.iter_mut().for_each(|sibling| *sibling = random());
            }
            for (i, row) in proof.path_d_new.iter_mut().enumerate() {
                row[0] = match i.checked_sub(below_partition) {
                    Some(top) => partition_path[top],
                    None => random(),
                };
            }
        }
        UpdateParts::new(circuit).expect("a 32 GiB partition's shape")
    }

    /// The preamble, then the challenges in one contiguous range per thread.
    pub fn by_challenge(parts: &UpdateParts<SectorShape32GiB>) {
        let mut cs: WitnessCs = WitnessCs::default();
        let preamble = parts
            .synthesize_preamble(&mut cs)
            .expect("preamble")
            .expect("shared");
        let (n, threads) = (parts.parts(), rayon::current_num_threads());
        let ranges: Vec<_> = (0..threads)
            .map(|t| t * n / threads..(t + 1) * n / threads)
            .collect();
        let systems: Vec<WitnessCs> = ranges
            .into_par_iter()
            .map(|range| {
                let mut cs: WitnessCs = WitnessCs::default();
                parts
                    .synthesize_parts_after(&mut cs, &preamble, range)
                    .expect("challenges");
                cs
            })
            .collect();
        std::hint::black_box((cs, systems));
    }

    /// The preamble and every challenge on one thread.
    pub fn one_thread(parts: &UpdateParts<SectorShape32GiB>) {
        let mut cs: WitnessCs = WitnessCs::default();
        parts
            .synthesize_parts(&mut cs, 0..parts.parts())
            .expect("synthesis");
        std::hint::black_box(cs);
    }

    /// Medians of three: the preamble alone and a challenge (of four, after it), in ms.
    pub fn pieces(parts: &UpdateParts<SectorShape32GiB>) -> (f64, f64) {
        let mut preamble_ms = Vec::new();
        let mut challenge_ms = Vec::new();
        for _ in 0..3 {
            let mut cs: WitnessCs = WitnessCs::default();
            let (ms, preamble) = time_ms(|| parts.synthesize_preamble(&mut cs).expect("preamble"));
            preamble_ms.push(ms);
            let preamble = preamble.expect("shared");
            let mut cs: WitnessCs = WitnessCs::default();
            let (ms, ()) = time_ms(|| {
                parts
                    .synthesize_parts_after(&mut cs, &preamble, 0..4)
                    .expect("challenges")
            });
            challenge_ms.push(ms / 4.0);
        }
        (median(&preamble_ms), median(&challenge_ms))
    }
}
