//! A production-shaped simulation of the engine: stand-in workloads and a stand-in backend that
//! carry the real sizes and durations of 32 GiB and 64 GiB circuits (`cuzk::proofs::production`,
//! sources in `docs/production-figures.md`), scaled down by one factor, on nodes of real sizes
//! scaled the same way. The stand-ins allocate every byte they stand for (parameter points,
//! a/b/c, inputs, aux, densities, the prover's transients) and sleep for the durations, so the
//! real engine schedules, charges and frees them as it would the real thing.
//!
//! Shared by `tests/engine_sim.rs` and the `engine` benchmark group.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bellperson::groth16::Parameters;
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use cuzk::engine::plan::{Node as PlanNode, Plan, PlanItem};
use cuzk::engine::{Config, Engine, Priority, Workload};
use cuzk::groth16::srs::prepared_key_bytes;
use cuzk::groth16::test_circuits::{RandomCircuit, Shape};
use cuzk::groth16::{
    paramgen, Assignment, BufferSet, CircuitShape, Density, Proof, ProverBackend, Randomness, Srs,
    Started,
};
use cuzk::proofs::plan::{plan_item, plan_mix};
use cuzk::proofs::production::{figures, CircuitFigures, PartitionTimes};
use cuzk::proofs::workload::kind_priority;
use group::prime::PrimeCurveAffine;
use rand::SeedableRng;

/// Bytes, element counts and node memory are divided by this.
pub const SCALE: u64 = 4096;
/// Simulated milliseconds per real second (real durations are divided by 250): coarse enough
/// that a WinningPoSt's own work (~2 ms simulated on a GPU node) stands above thread wake-up
/// noise on a busy 2-core machine.
pub const MS_PER_REAL_SECOND: f64 = 4.0;

/// Whether the node proves on GPUs or on its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Cpu,
    Gpu,
}

/// A real machine: RAM, GPUs and cores.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub name: &'static str,
    pub ram: u64,
    /// GPU count and memory of each (bytes, as vendors quote: 1e9).
    pub gpus: usize,
    pub gpu_bytes: u64,
    /// CPU cores (what `cuzk plan` sizes synthesis by).
    pub cores: usize,
    pub synthesis_workers: usize,
    /// a/b/c buffer sets: synthesis workers + provers + 1 where memory allows (the 256 GiB
    /// nodes cannot also hold every parameter set then).
    pub pool_buffers: usize,
}

impl Node {
    pub fn kind(&self) -> NodeKind {
        if self.gpus > 0 {
            NodeKind::Gpu
        } else {
            NodeKind::Cpu
        }
    }

    /// The engine configuration of this node, scaled: the default budget (3/4 of RAM),
    /// buffers sized for the largest circuit (a 2^27 domain).
    pub fn config(&self) -> Config {
        Config {
            synthesis_workers: self.synthesis_workers,
            prover_workers: self.gpus.max(1),
            pool_buffers: self.pool_buffers,
            buffer_constraints: ((1u64 << 27) / SCALE) as usize,
            memory_budget: self.ram / SCALE / 4 * 3,
            malloc_trim: false,
            backend: "cpu".into(),
            ..Config::default()
        }
    }
}

const GIB: u64 = 1 << 30;

/// The nodes operators run (RAM 128-512 GiB; GPUs of 24, 80 and 141 GB).
pub const NODES: [Node; 5] = [
    Node {
        name: "cpu-256g",
        ram: 256 * GIB,
        gpus: 0,
        gpu_bytes: 0,
        cores: 64,
        synthesis_workers: 3,
        pool_buffers: 3,
    },
    Node {
        name: "gpu-128g-24gb",
        ram: 128 * GIB,
        gpus: 1,
        gpu_bytes: 24_000_000_000,
        cores: 32,
        synthesis_workers: 2,
        pool_buffers: 2,
    },
    Node {
        name: "gpu-256g-80gb",
        ram: 256 * GIB,
        gpus: 1,
        gpu_bytes: 80_000_000_000,
        cores: 32,
        synthesis_workers: 3,
        pool_buffers: 3,
    },
    Node {
        name: "gpu-512g-141gb",
        ram: 512 * GIB,
        gpus: 1,
        gpu_bytes: 141_000_000_000,
        cores: 64,
        synthesis_workers: 6,
        pool_buffers: 11,
    },
    Node {
        name: "gpu-512g-2x80gb",
        ram: 512 * GIB,
        gpus: 2,
        gpu_bytes: 80_000_000_000,
        cores: 64,
        synthesis_workers: 6,
        pool_buffers: 11,
    },
];

/// The node named `name`.
pub fn node(name: &str) -> Node {
    *NODES.iter().find(|n| n.name == name).expect("known node")
}

/// One circuit of the table, scaled.
pub struct SimCircuit {
    pub figures: &'static CircuitFigures,
    pub priority: Priority,
    pub shape: CircuitShape,
    /// The CPU prover's transients for a partition on this node's cores, scaled (the real
    /// figure's: its per-thread MSM scratch does not shrink with the stand-in's sizes).
    pub cpu_transient_bytes: u64,
    /// G1 points of the stand-in parameter set (its bytes / 96, less the verifying key's).
    pub points: usize,
    /// Per-partition times (sim ms) on this node.
    pub times: PartitionTimes,
    /// Decode time of its parameters (sim ms).
    pub load_ms: f64,
    /// Times its parameter set was loaded.
    pub loads: AtomicUsize,
}

/// Milliseconds of simulation for `real_ms` real milliseconds.
pub fn sim_ms(real_ms: f64) -> f64 {
    real_ms / 1000.0 * MS_PER_REAL_SECOND
}

impl SimCircuit {
    /// Circuit `name` ("porep-32g") on a node of `kind`, its synthesis on one core.
    pub fn new(name: &str, kind: NodeKind) -> Arc<Self> {
        Self::with_cores(name, kind, 1, 0, 1)
    }

    /// Circuit `name` on `node` with `workers` synthesis workers: each partition's synthesis
    /// takes its CPU time over the cores its worker has, as `cuzk plan` counts it
    /// ([`cuzk::engine::plan::synthesis_wall_ms`]).
    pub fn on(name: &str, node: &Node, workers: usize) -> Arc<Self> {
        Self::with_cores(name, node.kind(), node.cores, node.gpus.max(1), workers)
    }

    fn with_cores(
        name: &str,
        kind: NodeKind,
        cores: usize,
        lanes: usize,
        workers: usize,
    ) -> Arc<Self> {
        let figures = figures(name).expect("circuit in the production table");
        let scaled = |n: usize| ((n as u64 / SCALE) as usize).max(1);
        let shape = CircuitShape {
            constraints: scaled(figures.shape.constraints),
            inputs: scaled(figures.shape.inputs),
            aux: scaled(figures.shape.aux),
        };
        let t = match kind {
            NodeKind::Cpu => figures.cpu,
            NodeKind::Gpu => figures.gpu,
        };
        let kind_of = cuzk::proofs::circuits::CircuitKind::parse(name).expect("known kind");
        let ic = tiny_params().vk.ic.len();
        Arc::new(Self {
            figures,
            priority: kind_priority(kind_of),
            shape,
            cpu_transient_bytes: figures.shape.cpu_transient_bytes(cores) / SCALE,
            // The prepared verifying key is not scaled: at least that much is held.
            points: ((figures.srs_bytes / SCALE) as usize / 96)
                .saturating_sub(ic + prepared_key_bytes(ic) / 96),
            times: PartitionTimes {
                synth_ms: sim_ms(cuzk::engine::plan::synthesis_wall_ms(
                    t.synth_ms,
                    t.product_ms,
                    t.preamble_ms,
                    t.synth_threads,
                    cores,
                    lanes,
                    workers,
                )),
                product_ms: sim_ms(t.product_ms),
                preamble_ms: sim_ms(t.preamble_ms),
                synth_threads: t.synth_threads,
                start_ms: sim_ms(t.start_ms),
                finish_ms: sim_ms(t.finish_ms),
            },
            // Decoded at the rate `cuzk plan` assumes.
            load_ms: sim_ms(cuzk::engine::plan::load_ms(figures.srs_bytes)),
            loads: AtomicUsize::new(0),
        })
    }

    /// Bytes of the stand-in parameter set (as `Srs::byte_size` measures it).
    pub fn srs_bytes(&self) -> u64 {
        let ic = tiny_params().vk.ic.len();
        ((self.points + ic) * 96 + prepared_key_bytes(ic)) as u64
    }

    /// Simulated milliseconds of one partition, all stages.
    pub fn partition_ms(&self) -> f64 {
        self.times.synth_ms + self.times.start_ms + self.times.finish_ms
    }
}

/// A verifying key to carry (the stand-in parameter sets hold scaled point counts besides; its
/// prepared form is not scaled, so a set holds at least that much).
fn tiny_params() -> &'static Parameters<Bls12> {
    static P: OnceLock<Parameters<Bls12>> = OnceLock::new();
    P.get_or_init(|| {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        paramgen::generate(RandomCircuit::new(Shape::Mixed, 8, 0), &mut rng, &|_, _| {})
            .expect("tiny parameters")
    })
}

/// The latest any stand-in sleep woke past its deadline since the last
/// [`reset_wake_up_lateness`] (real nanoseconds): the scheduler noise of this machine under
/// the load the simulation puts on it.
static WORST_WAKE_UP_LATENESS_NS: AtomicU64 = AtomicU64::new(0);

/// Starts a new [`worst_wake_up_lateness_ms`] measurement.
pub fn reset_wake_up_lateness() {
    WORST_WAKE_UP_LATENESS_NS.store(0, Ordering::SeqCst);
}

/// The worst wake-up lateness since the last reset, in simulated milliseconds.
pub fn worst_wake_up_lateness_ms() -> f64 {
    WORST_WAKE_UP_LATENESS_NS.load(Ordering::SeqCst) as f64 / 1e6
}

fn sleep_ms(ms: f64) {
    if ms > 0.0 {
        let wanted = Duration::from_secs_f64(ms / 1e3);
        let t = std::time::Instant::now();
        std::thread::sleep(wanted);
        let late = t.elapsed().saturating_sub(wanted).as_nanos() as u64;
        WORST_WAKE_UP_LATENESS_NS.fetch_max(late, Ordering::SeqCst);
    }
}

/// A stand-in job: one proof of a circuit, its partitions synthesized by sleeping and filling
/// the buffers, inputs, aux and densities with the circuit's scaled counts.
pub struct SimJob {
    pub circuit: Arc<SimCircuit>,
}

impl SimJob {
    pub fn new(circuit: &Arc<SimCircuit>) -> Arc<Self> {
        Arc::new(Self {
            circuit: Arc::clone(circuit),
        })
    }
}

/// The proof the stand-in backend returns (the generators).
pub fn marker_proof() -> Proof {
    Proof {
        a: G1Affine::generator(),
        b: G2Affine::generator(),
        c: G1Affine::generator(),
    }
}

impl Workload for SimJob {
    fn kind(&self) -> String {
        self.circuit.figures.name.to_string()
    }
    fn priority(&self) -> Priority {
        self.circuit.priority
    }
    fn partitions(&self) -> usize {
        self.circuit.figures.partitions
    }
    fn srs_key(&self) -> String {
        self.circuit.figures.name.to_string()
    }
    fn srs_size_hint(&self) -> Option<u64> {
        Some(self.circuit.srs_bytes())
    }
    fn circuit_shape(&self) -> Option<CircuitShape> {
        Some(self.circuit.shape)
    }
    fn load_srs(&self) -> Result<Arc<Srs>, String> {
        self.circuit.loads.fetch_add(1, Ordering::SeqCst);
        sleep_ms(self.circuit.load_ms);
        let mut srs = Srs::from_parameters(tiny_params());
        srs.h = vec![G1Affine::identity(); self.circuit.points];
        srs.l = Vec::new();
        srs.a = Vec::new();
        srs.b_g1 = Vec::new();
        srs.b_g2 = Vec::new();
        Ok(Arc::new(srs))
    }
    fn synthesize(
        &self,
        _k: usize,
        mut buffers: BufferSet,
        _srs: &Srs,
    ) -> Result<Assignment, String> {
        let shape = self.circuit.shape;
        sleep_ms(self.circuit.times.synth_ms);
        let abc = &mut buffers.abc;
        for v in [&mut abc.a, &mut abc.b, &mut abc.c] {
            v.resize(shape.constraints, Scalar::from(0u64));
        }
        buffers.aux.resize(shape.aux, Scalar::from(0u64));
        let density = |bits: usize| {
            let mut d = Density::with_capacity(bits);
            for _ in 0..bits {
                d.push_unset();
            }
            d
        };
        Ok(Assignment {
            abc: buffers.abc,
            inputs: vec![Scalar::from(1u64); shape.inputs],
            aux: buffers.aux,
            a_aux_density: density(shape.aux),
            b_input_density: density(shape.inputs),
            b_aux_density: density(shape.aux),
        })
    }
    fn verify(&self, proof: &[u8]) -> Result<(), String> {
        let one = marker_proof().to_bytes();
        (proof.len() == one.len() * self.partitions() && proof.chunks(one.len()).all(|p| p == one))
            .then_some(())
            .ok_or_else(|| "not the stand-in backend's proof".into())
    }
}

/// Which per-partition host transients a GPU node's stand-in prover charges and allocates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// The GPU path's own ([`CircuitShape::gpu_transient_bytes`]): what the engine charges now.
    Gpu,
    /// The CPU prover's ([`CircuitShape::cpu_transient_bytes`]): what a GPU node was charged
    /// before the twenty-second session, kept to measure the difference.
    Cpu,
}

/// One stand-in device: `prove_start`s run one at a time on it, and it holds at most `at_once`
/// partitions from the start of `prove_start` to the end of `prove_finish`, or one for the
/// circuits it holds one at a time (a GPU whose memory holds one partition of a circuit beside
/// its parameters makes that circuit's next `prove_start` wait for the previous
/// `prove_finish`).
struct Lane {
    running: std::sync::Mutex<()>,
    held: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
    at_once: usize,
    /// Scaled constraint counts of the circuits held one partition at a time.
    one_at_a_time: std::collections::HashSet<usize>,
}

impl Lane {
    fn new(at_once: usize, one_at_a_time: std::collections::HashSet<usize>) -> Arc<Self> {
        Arc::new(Self {
            running: Default::default(),
            held: Default::default(),
            freed: Default::default(),
            at_once: at_once.max(1),
            one_at_a_time,
        })
    }

    fn held(&self) -> usize {
        *self.held.lock().unwrap()
    }
}

/// A partition's place on a [`Lane`], given back when the partition is finished or dropped.
struct Slot(Arc<Lane>);

impl Slot {
    /// A place for a partition of `constraints` (scaled) on `lane`, once it has room.
    fn take(lane: &Arc<Lane>, constraints: usize) -> Self {
        let limit = if lane.one_at_a_time.contains(&constraints) {
            1
        } else {
            lane.at_once
        };
        let mut held = lane.held.lock().unwrap();
        while *held >= limit {
            held = lane.freed.wait(held).unwrap();
        }
        *held += 1;
        Self(Arc::clone(lane))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *self.0.held.lock().unwrap() -= 1;
        self.0.freed.notify_all();
    }
}

/// The stand-in prover: `prove_start` takes a place on a lane (one `prove_start` at a time per
/// lane, as on a device, and at most as many partitions as the device holds), sleeps the
/// circuit's start time and allocates the transients the engine charges for it (a GPU node's
/// own host figure, or the CPU prover's); `prove_finish` sleeps the finish time (plus the
/// circuit's streamed-parameter copies, where the device streams them) and frees them.
pub struct SimBackend {
    /// Whether it stands for GPUs, and which transients it then charges.
    gpu: Option<Charge>,
    lanes: Vec<Arc<Lane>>,
    next: AtomicUsize,
    /// (start_ms, finish_ms) by scaled constraint count.
    times: HashMap<usize, (f64, f64)>,
    /// The CPU prover's transients ([`SimCircuit::cpu_transient_bytes`]) by scaled constraint
    /// count.
    cpu_transient: HashMap<usize, u64>,
    /// The longest `prove_start` seen (sim ms, as it really ran) by scaled constraint count.
    longest_start: std::sync::Mutex<HashMap<usize, f64>>,
    /// When each `prove_finish` ended.
    finished: std::sync::Mutex<Vec<std::time::Instant>>,
}

/// Work between the two phases: the transients (on a CPU node the CPU prover's figure, which
/// counts the canonical copy of aux it keeps once the buffer set is back in the pool) and the
/// partition's place on its lane.
pub struct SimPending {
    lane: usize,
    finish_ms: f64,
    _transient: Vec<u8>,
    _slot: Slot,
}

impl SimBackend {
    /// A backend of `kind` with `lanes` lanes (1 for a CPU node) proving `circuits`; every lane
    /// holds any number of partitions, and a GPU node is charged the GPU path's transients.
    pub fn new(kind: NodeKind, lanes: usize, circuits: &[Arc<SimCircuit>]) -> Arc<Self> {
        let lanes = vec![usize::MAX; lanes.max(1)];
        Self::with_lanes(kind, Charge::Gpu, &lanes, &[], circuits, &HashMap::new())
    }

    /// A backend of `kind` whose lanes hold `at_once[i]` partitions each, but one at a time of
    /// the circuits `one_at_a_time[i]` names, GPU partitions charged as `charge` says;
    /// `extra_finish_ms` adds sim ms to the finish of the circuits it names (their streamed
    /// parameters).
    pub fn with_lanes(
        kind: NodeKind,
        charge: Charge,
        at_once: &[usize],
        one_at_a_time: &[Vec<String>],
        circuits: &[Arc<SimCircuit>],
        extra_finish_ms: &HashMap<String, f64>,
    ) -> Arc<Self> {
        let serial = |lane: usize| {
            let names = one_at_a_time.get(lane).cloned().unwrap_or_default();
            circuits
                .iter()
                .filter(|c| names.iter().any(|n| n == c.figures.name))
                .map(|c| c.shape.constraints)
                .collect()
        };
        Arc::new(Self {
            gpu: (kind == NodeKind::Gpu).then_some(charge),
            lanes: at_once
                .iter()
                .enumerate()
                .map(|(lane, &n)| Lane::new(n, serial(lane)))
                .collect(),
            next: AtomicUsize::new(0),
            cpu_transient: circuits
                .iter()
                .map(|c| (c.shape.constraints, c.cpu_transient_bytes))
                .collect(),
            times: circuits
                .iter()
                .map(|c| {
                    let extra = extra_finish_ms.get(c.figures.name).copied().unwrap_or(0.0);
                    (
                        c.shape.constraints,
                        (c.times.start_ms, c.times.finish_ms + extra),
                    )
                })
                .collect(),
            longest_start: Default::default(),
            finished: Default::default(),
        })
    }

    /// When each `prove_finish` so far ended, in order.
    pub fn finish_times(&self) -> Vec<std::time::Instant> {
        self.finished.lock().unwrap().clone()
    }

    /// The longest `prove_start` of `circuit` so far, as it really ran (sim ms).
    pub fn longest_start_ms(&self, circuit: &SimCircuit) -> f64 {
        let seen = self.longest_start.lock().unwrap();
        seen.get(&circuit.shape.constraints).copied().unwrap_or(0.0)
    }

    /// The lane for the next partition: the one holding the fewest, round-robin among equals.
    fn pick_lane(&self) -> usize {
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        (0..self.lanes.len())
            .map(|k| (first + k) % self.lanes.len())
            .min_by_key(|&i| self.lanes[i].held())
            .unwrap_or(0)
    }
}

impl ProverBackend for SimBackend {
    type Pending = SimPending;

    fn name(&self) -> String {
        format!("sim:{}", self.lanes.len())
    }

    fn prove_start(
        &self,
        assignment: Assignment,
        _srs: &Arc<Srs>,
        _randomness: Randomness,
    ) -> cuzk::groth16::Result<Started<SimPending>> {
        let n = assignment.num_constraints();
        let (start_ms, finish_ms) = self.times.get(&n).copied().unwrap_or((0.0, 0.0));
        let lane = self.pick_lane();
        let shape = assignment.shape();
        let mut assignment = assignment;
        let mut released = assignment.take_buffers();
        drop(assignment);
        let slot = Slot::take(&self.lanes[lane], n);
        let transient = vec![0u8; self.transient_bytes(&shape) as usize];
        {
            let _device = self.lanes[lane].running.lock().unwrap();
            let t = std::time::Instant::now();
            sleep_ms(start_ms);
            let ran = t.elapsed().as_secs_f64() * 1e3;
            let mut seen = self.longest_start.lock().unwrap();
            let longest = seen.entry(n).or_default();
            *longest = longest.max(ran);
        }
        released.clear();
        Ok(Started {
            pending: SimPending {
                lane,
                finish_ms,
                _transient: transient,
                _slot: slot,
            },
            released,
        })
    }

    fn prove_finish(&self, pending: SimPending) -> cuzk::groth16::Result<Proof> {
        sleep_ms(pending.finish_ms);
        drop(pending);
        self.finished
            .lock()
            .unwrap()
            .push(std::time::Instant::now());
        Ok(marker_proof())
    }

    fn lanes(&self) -> usize {
        self.lanes.len()
    }

    fn transient_bytes(&self, shape: &CircuitShape) -> u64 {
        match self.gpu {
            Some(Charge::Gpu) => shape.gpu_transient_bytes(),
            Some(Charge::Cpu) | None => self
                .cpu_transient
                .get(&shape.constraints)
                .copied()
                .unwrap_or_else(|| shape.cpu_transient_bytes(1)),
        }
    }

    fn lane(&self, pending: &SimPending) -> usize {
        pending.lane
    }
}

/// A simulated node: an engine over the stand-in backend, and the circuits of a mix.
pub struct Sim {
    pub node: Node,
    pub engine: Arc<Engine>,
    pub backend: Arc<SimBackend>,
    pub circuits: HashMap<String, Arc<SimCircuit>>,
}

impl Sim {
    /// Opens an engine for `node` proving the circuits `names` ("porep-32g", ...).
    pub fn open(node: Node, names: &[&str]) -> Self {
        Self::open_with(node, names, node.config())
    }

    /// As [`Sim::open`], with `config` in place of the node's own.
    pub fn open_with(node: Node, names: &[&str], config: Config) -> Self {
        let circuits: HashMap<String, Arc<SimCircuit>> = names
            .iter()
            .map(|n| {
                let circuit = SimCircuit::on(n, &node, config.synthesis_workers);
                (n.to_string(), circuit)
            })
            .collect();
        let all: Vec<_> = circuits.values().cloned().collect();
        let backend = SimBackend::new(node.kind(), node.gpus.max(1), &all);
        let engine = Engine::open(config, Arc::clone(&backend) as _).expect("engine opens");
        Self {
            node,
            engine: Arc::new(engine),
            backend,
            circuits,
        }
    }

    /// Opens `node` for the circuits `names` with `config` (the one `plan` gives it, scaled:
    /// [`scaled_config`]), on a backend whose GPUs hold as many partitions at once and stream
    /// as many parameter bytes as the plan says, GPU partitions charged as `charge` says.
    pub fn open_planned(
        node: Node,
        names: &[&str],
        plan: &Plan,
        charge: Charge,
        config: Config,
    ) -> Self {
        let circuits: HashMap<String, Arc<SimCircuit>> = names
            .iter()
            .map(|n| {
                let circuit = SimCircuit::on(n, &node, config.synthesis_workers);
                (n.to_string(), circuit)
            })
            .collect();
        let all: Vec<_> = circuits.values().cloned().collect();
        // A GPU holds two partitions of a circuit at once (beside its parameters, or with a
        // few of them streamed) unless the plan says it holds that circuit one at a time.
        let at_once: Vec<usize> = if plan.gpus.is_empty() {
            vec![usize::MAX]
        } else {
            vec![2; plan.gpus.len()]
        };
        let one_at_a_time: Vec<Vec<String>> =
            plan.gpus.iter().map(|g| g.one_at_a_time.clone()).collect();
        let mut streamed: HashMap<String, f64> = HashMap::new();
        for (name, bytes) in plan.gpus.iter().flat_map(|g| g.streamed.iter()) {
            let ms = sim_ms(cuzk::engine::plan::stream_ms(*bytes));
            let slowest = streamed.entry(name.clone()).or_default();
            *slowest = slowest.max(ms);
        }
        let backend = SimBackend::with_lanes(
            node.kind(),
            charge,
            &at_once,
            &one_at_a_time,
            &all,
            &streamed,
        );
        let engine = Engine::open(config, Arc::clone(&backend) as _).expect("engine opens");
        Self {
            node,
            engine: Arc::new(engine),
            backend,
            circuits,
        }
    }

    /// Parameter sets loaded so far, every circuit together.
    pub fn loads(&self) -> usize {
        self.circuits
            .values()
            .map(|c| c.loads.load(Ordering::SeqCst))
            .sum()
    }

    /// A job of circuit `name`.
    pub fn job(&self, name: &str) -> Arc<SimJob> {
        SimJob::new(&self.circuits[name])
    }

    /// The circuit `name`.
    pub fn circuit(&self, name: &str) -> &Arc<SimCircuit> {
        &self.circuits[name]
    }
}

impl Node {
    /// This node as `cuzk plan` sees it (real sizes).
    pub fn plan_node(&self) -> PlanNode {
        PlanNode {
            ram_bytes: self.ram,
            gpu_bytes: vec![self.gpu_bytes; self.gpus],
            cores: self.cores,
        }
    }
}

/// What `cuzk plan` gives the real `node` for the mix `names`. With [`Charge::Gpu`] it is
/// `cuzk plan`'s own plan; with [`Charge::Cpu`] a GPU node is planned as it was before GPU
/// partitions were charged their own host memory (the CPU prover's transients).
pub fn plan(node: Node, names: &[&str], charge: Charge) -> Plan {
    let gpu = node.kind() == NodeKind::Gpu;
    if charge == Charge::Gpu || !gpu {
        return plan_mix(&node.plan_node(), names).expect("the mix plans");
    }
    let items: Vec<PlanItem> = names
        .iter()
        .map(|n| plan_item(n, gpu).expect("known circuit"))
        .collect();
    cuzk::engine::plan::plan(&node.plan_node(), &items, &|shape: &CircuitShape| {
        shape.cpu_transient_bytes(node.cores)
    })
}

/// The config `plan` writes, for the scaled node: its workers and pool as they are, its
/// budget and buffer size divided by [`SCALE`].
pub fn scaled_config(plan: &Plan) -> Config {
    Config {
        synthesis_workers: plan.synthesis_workers,
        prover_workers: plan.prover_workers,
        pool_buffers: plan.pool_buffers,
        buffer_constraints: (plan.buffer_constraints as u64 / SCALE) as usize,
        memory_budget: plan.memory_budget / SCALE,
        malloc_trim: false,
        backend: "cpu".into(),
        // The default 30 minutes, in the simulation's time (whole seconds, at least 1).
        affinity_secs: ((Config::default().affinity_secs as f64 * MS_PER_REAL_SECOND / 1000.0)
            .round() as u64)
            .max(1),
        ..Config::default()
    }
}

/// A backlog proved on a node configured as its plan says, against the plan's rate.
pub struct PlannedRun {
    /// The plan the node ran with.
    pub plan: Plan,
    /// Partitions proved per real hour in steady state (the middle eight tenths of the
    /// backlog's partitions).
    pub per_hour: f64,
    /// Partitions proved in all.
    pub partitions: usize,
    /// Wall time from the first submit to the last completion (sim ms).
    pub wall_ms: f64,
    /// The scaled budget and the most the engine charged of it.
    pub budget: u64,
    pub charged_peak: u64,
    /// Parameter sets loaded while the backlog ran (all were preloaded before it).
    pub loads: usize,
}

impl PlannedRun {
    /// Measured rate / the plan's rate.
    pub fn ratio(&self) -> f64 {
        self.per_hour / self.plan.throughput.partitions_per_hour
    }
}

/// Plans `node` for the mix `names` ([`plan`] with `charge`), opens it with that config and
/// proves `rounds` rounds of one job of each circuit (the plan's rate averages its circuits
/// over one job each), all submitted at once, parameters preloaded.
pub fn planned_throughput(node: Node, names: &[&str], charge: Charge, rounds: usize) -> PlannedRun {
    planned_throughput_with(node, names, charge, rounds, |_| {})
}

/// [`planned_throughput`] with `configure` applied to the plan's config (a bench compares
/// engine options on one plan).
pub fn planned_throughput_with(
    node: Node,
    names: &[&str],
    charge: Charge,
    rounds: usize,
    configure: impl FnOnce(&mut Config),
) -> PlannedRun {
    let plan = plan(node, names, charge);
    let mut config = scaled_config(&plan);
    configure(&mut config);
    let sim = Sim::open_planned(node, names, &plan, charge, config);
    let e = &sim.engine;
    for n in names {
        // A set that does not fit beside the others is loaded when its job comes.
        e.preload(sim.job(n).as_ref()).ok();
    }
    let loaded = sim.loads();
    let t = std::time::Instant::now();
    let jobs: Vec<_> = (0..rounds)
        .flat_map(|_| names.iter().map(|n| sim.job(n)))
        .collect();
    let partitions: usize = jobs.iter().map(|j| j.partitions()).sum();
    let ids: Vec<_> = jobs
        .into_iter()
        .map(|j| e.submit(j).expect("submit"))
        .collect();
    for id in ids {
        e.await_job(id, None).expect("proof");
    }
    let wall_ms = t.elapsed().as_secs_f64() * 1e3;
    // Steady state: between the partitions that finished a tenth and nine tenths of the way
    // through the backlog (the pipeline's fill and drain are left out, as the plan's rate
    // leaves them out).
    let finished = sim.backend.finish_times();
    let (from, to) = (finished.len() / 10, finished.len() * 9 / 10);
    let steady_ms = (finished[to - 1] - finished[from]).as_secs_f64() * 1e3;
    let steady_partitions = (to - 1 - from) as f64;
    let status = e.status();
    let loads = sim.loads() - loaded;
    e.close();
    PlannedRun {
        per_hour: steady_partitions / (steady_ms / MS_PER_REAL_SECOND) * 3600.0,
        partitions,
        wall_ms,
        budget: status.budget_limit,
        charged_peak: status.budget_high_water,
        loads,
        plan,
    }
}

/// A global allocator that counts the live bytes of large allocations (4 KiB and more: every
/// stand-in buffer, none of the engine's small bookkeeping) and their high-water mark.
pub struct CountingAlloc {
    live: AtomicU64,
    peak: AtomicU64,
}

pub static PEAK_CAUSE: AtomicU64 = AtomicU64::new(0);
/// Allocations at least this large are counted.
pub const COUNTED_FROM: usize = 4096;

impl CountingAlloc {
    pub const fn new() -> Self {
        Self {
            live: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        }
    }

    /// Live counted bytes now.
    pub fn live(&self) -> u64 {
        self.live.load(Ordering::SeqCst)
    }

    /// Highest live count since the last reset.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::SeqCst)
    }

    /// Starts a new high-water mark from the live count.
    pub fn reset_peak(&self) {
        self.peak.store(self.live(), Ordering::SeqCst);
    }

    fn add(&self, size: usize) {
        if size >= COUNTED_FROM {
            let now = self.live.fetch_add(size as u64, Ordering::SeqCst) + size as u64;
            if self.peak.fetch_max(now, Ordering::SeqCst) < now {
                PEAK_CAUSE.store(size as u64, Ordering::SeqCst);
            }
        }
    }

    fn sub(&self, size: usize) {
        if size >= COUNTED_FROM {
            self.live.fetch_sub(size as u64, Ordering::SeqCst);
        }
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are kept.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        self.sub(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            // Old and new both live for a moment: count the new one first.
            self.add(new_size);
            self.sub(layout.size());
        }
        p
    }
}

/// Waits (polling the status every millisecond, at most `limit`) until `done` holds.
pub fn wait_until(
    engine: &Engine,
    limit: Duration,
    done: impl Fn(&cuzk::engine::Status) -> bool,
) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < limit {
        if done(&engine.status()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}

/// WinningPoSt latency on `node`, idle and under a full PoRep + SnapDeals backlog.
pub struct WinningUnderLoad {
    /// Median latency on the idle engine (sim ms).
    pub idle_ms: f64,
    /// Latencies with the backlog running (sim ms).
    pub loaded_ms: Vec<f64>,
    /// 1.5 x idle + one lower-class partition's `prove_start` on the lane, the longest one as
    /// it really ran, + the worst wake-up lateness seen under load (one of the WinningPoSt's own
    /// wake-ups may be that late on a busy machine) (sim ms). A WinningPoSt that waited for a
    /// lower-class synthesis or for a second `prove_start` is still far above it.
    pub bound_ms: f64,
    /// The worst wake-up lateness of any stand-in sleep while the backlog ran (sim ms).
    pub lateness_ms: f64,
    /// CRITICAL waits for memory seen by the engine.
    pub memory_waits: u64,
}

/// Measures [`WinningUnderLoad`]: parameters preloaded, `samples` WinningPoSt proofs alone,
/// then a backlog of `backlog` PoRep and `backlog` SnapDeals jobs of `size` ("32g"), and
/// `samples` WinningPoSt proofs submitted one after another (a random few ms apart, by
/// `seed`) while it runs.
pub fn winning_under_load(
    node: Node,
    size: &str,
    backlog: usize,
    samples: usize,
    seed: u64,
) -> WinningUnderLoad {
    use rand::Rng;
    let (porep, snap, winning) = (
        format!("porep-{size}"),
        format!("snap-{size}"),
        format!("winning-{size}"),
    );
    let sim = Sim::open(node, &[&porep, &snap, &winning]);
    let e = &sim.engine;
    for name in [&winning, &porep, &snap] {
        e.preload(sim.job(name).as_ref()).expect("preload");
    }
    let prove_ms = |e: &Engine| {
        let t = std::time::Instant::now();
        e.prove(sim.job(&winning)).expect("winning proof");
        t.elapsed().as_secs_f64() * 1e3
    };
    let mut idle: Vec<f64> = (0..samples).map(|_| prove_ms(e)).collect();
    idle.sort_by(f64::total_cmp);
    let idle_ms = idle[idle.len() / 2];
    let ids: Vec<_> = (0..backlog)
        .flat_map(|_| [sim.job(&porep), sim.job(&snap)])
        .map(|j| e.submit(j).expect("backlog submit"))
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut loaded_ms = Vec::new();
    reset_wake_up_lateness();
    for _ in 0..samples {
        sleep_ms(rng.gen_range(0.0..sim.circuit(&porep).times.synth_ms));
        loaded_ms.push(prove_ms(e));
    }
    assert!(
        e.status().classes.iter().any(|c| c.queued > 0),
        "the backlog ran out before the last WinningPoSt"
    );
    for id in ids {
        e.cancel(id).ok();
        e.release(id).ok();
    }
    let longest_start = [&porep, &snap]
        .iter()
        .map(|n| sim.backend.longest_start_ms(sim.circuit(n)))
        .fold(0.0, f64::max);
    let lateness_ms = worst_wake_up_lateness_ms();
    let memory_waits = e.status().critical_memory_waits;
    e.close();
    WinningUnderLoad {
        idle_ms,
        loaded_ms,
        bound_ms: 1.5 * idle_ms + longest_start + lateness_ms,
        lateness_ms,
        memory_waits,
    }
}

/// Throughput of a PoRep + SnapDeals backlog on `node` against the bound of its busiest
/// resource.
pub struct Throughput {
    /// Partitions proved per real hour (sim time converted back).
    pub per_hour: f64,
    /// What the busiest resource allows with the durations as they really ran (the stand-ins
    /// sleep and fill buffers on a shared machine), per real hour.
    pub bound_per_hour: f64,
    /// per_hour / bound_per_hour: how busy the engine kept its busiest resource.
    pub util: f64,
    /// The same against the nominal durations of the table.
    pub nominal_util: f64,
    /// Wall time of the run (sim ms).
    pub wall_ms: f64,
}

/// Proves `jobs` PoRep and `jobs` SnapDeals jobs of `size` (parameters preloaded) and compares
/// the rate with the busiest of: synthesis workers, the prover lanes, the finalizers.
pub fn throughput(node: Node, size: &str, jobs: usize) -> Throughput {
    let names = [format!("porep-{size}"), format!("snap-{size}")];
    let sim = Sim::open(node, &[&names[0], &names[1]]);
    let e = &sim.engine;
    for n in &names {
        e.preload(sim.job(n).as_ref()).expect("preload");
    }
    let busy = |e: &Engine| {
        let s = e.status();
        let sum = |prefix: &str| -> f64 {
            s.workers
                .iter()
                .filter(|w| w.name.starts_with(prefix) && !w.name.contains("critical"))
                .map(|w| w.busy_ms)
                .sum()
        };
        [sum("synth-"), sum("prover-"), sum("finalizer")]
    };
    let before = busy(e);
    let t = std::time::Instant::now();
    let ids: Vec<_> = (0..jobs)
        .flat_map(|_| names.iter().map(|n| sim.job(n)))
        .map(|j| e.submit(j).expect("submit"))
        .collect();
    for id in ids {
        e.await_job(id, None).expect("proof");
    }
    let wall_ms = t.elapsed().as_secs_f64() * 1e3;
    let after = busy(e);
    let (mut synth, mut start, mut finish, mut partitions) = (0.0, 0.0, 0.0, 0usize);
    for n in &names {
        let c = sim.circuit(n);
        let p = (c.figures.partitions * jobs) as f64;
        partitions += c.figures.partitions * jobs;
        synth += p * c.times.synth_ms;
        start += p * c.times.start_ms;
        finish += p * c.times.finish_ms;
    }
    let lanes = node.gpus.max(1) as f64;
    let finalizers = lanes * (node.config().prover_workers as f64 / lanes).max(1.0);
    let counts = [node.synthesis_workers as f64, lanes, finalizers];
    let nominal_ms = (synth / counts[0])
        .max(start / counts[1])
        .max(finish / counts[2]);
    let busiest_ms = (0..3)
        .map(|i| (after[i] - before[i]) / counts[i])
        .fold(0.0, f64::max);
    let per_real_hour = |ms: f64| partitions as f64 / (ms / MS_PER_REAL_SECOND) * 3600.0;
    e.close();
    Throughput {
        per_hour: per_real_hour(wall_ms),
        bound_per_hour: per_real_hour(busiest_ms),
        util: busiest_ms / wall_ms,
        nominal_util: nominal_ms / wall_ms,
        wall_ms,
    }
}
