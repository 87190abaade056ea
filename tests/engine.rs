//! The engine with small synthetic circuits: concurrency, priorities, budget, cancellation,
//! failures and close. Every proof is checked with bellperson's verifier.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bellperson::groth16::Parameters;
use blstrs::{Bls12, Scalar};
use cuzk::engine::{Config, Engine, EngineError, ErasedBackend, JobId, Priority, Workload};
use cuzk::groth16::paramgen;
use cuzk::groth16::test_circuits::{RandomCircuit, Shape};
use cuzk::groth16::{
    synthesize, verify, AbcBuffers, Assignment, BufferSet, CpuBackend, HostBlock, Proof,
    ProverBackend, Randomness, ScalarBuf, Spread, Srs, Started,
};
use ff::Field;
use rand::SeedableRng;

/// Random circuits of one size sharing one SRS; each partition uses its own seed.
struct Synthetic {
    srs: Arc<Srs>,
    key: String,
    constraints: usize,
    partitions: usize,
    priority: Priority,
    seed: u64,
    panic_in: Option<usize>,
    /// When set, `load_srs` blocks until the sender side sends (or is dropped): a slow decode.
    load_gate: Option<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
    /// Report the SRS size before decoding (as parameter files do).
    size_hint: bool,
    /// When set, `synthesize` says it has started, then blocks until the test lets it go.
    synth_gate: Option<Gate>,
}

/// A point a worker stops at: it reports arriving, then waits to be let through.
struct Gate {
    arrived: std::sync::Mutex<std::sync::mpsc::Sender<()>>,
    release: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Gate {
    /// The gate, a receiver that hears each arrival, and the sender that lets one through.
    fn new() -> (
        Gate,
        std::sync::mpsc::Receiver<()>,
        std::sync::mpsc::Sender<()>,
    ) {
        let (arrived, arrivals) = std::sync::mpsc::channel();
        let (let_through, release) = std::sync::mpsc::channel();
        let gate = Gate {
            arrived: std::sync::Mutex::new(arrived),
            release: std::sync::Mutex::new(release),
        };
        (gate, arrivals, let_through)
    }

    fn pass(&self) {
        let _ = self.arrived.lock().unwrap().send(());
        let _ = self.release.lock().unwrap().recv();
    }
}

impl Synthetic {
    fn circuit(&self, k: usize) -> RandomCircuit {
        RandomCircuit::new(Shape::Mixed, self.constraints, 0)
            .with_witness(self.seed * 1000 + k as u64)
    }
}

impl Workload for Synthetic {
    fn kind(&self) -> String {
        format!("synthetic-{:?}", self.priority)
    }
    fn priority(&self) -> Priority {
        self.priority
    }
    fn partitions(&self) -> usize {
        self.partitions
    }
    fn srs_key(&self) -> String {
        self.key.clone()
    }
    fn srs_size_hint(&self) -> Option<u64> {
        self.size_hint.then(|| self.srs.byte_size() as u64)
    }
    fn load_srs(&self) -> Result<Arc<Srs>, String> {
        if let Some(gate) = &self.load_gate {
            let _ = gate.lock().unwrap().recv();
        }
        Ok(Arc::clone(&self.srs))
    }
    fn synthesize(&self, k: usize, buffers: BufferSet, _srs: &Srs) -> Result<Assignment, String> {
        if self.panic_in == Some(k) {
            panic!("synthetic failure in partition {k}");
        }
        if let Some(gate) = &self.synth_gate {
            gate.pass();
        }
        synthesize(self.circuit(k), buffers).map_err(|e| e.to_string())
    }
    fn verify(&self, proof: &[u8]) -> Result<(), String> {
        check(self, proof)
            .then_some(())
            .ok_or_else(|| "does not verify".into())
    }
}

/// Independent check with bellperson's verifier.
fn check(w: &Synthetic, proof: &[u8]) -> bool {
    proof.len() == 192 * w.partitions
        && proof.chunks(192).enumerate().all(|(k, bytes)| {
            let p = bellperson::groth16::Proof::<Bls12>::read(bytes).unwrap();
            let mut inputs = vec![];
            inputs.extend(w.circuit(k).public_inputs());
            verify(&w.srs, &Proof::from(p), &inputs)
        })
}

/// Parameters for random circuits of `constraints` constraints (same shape for every seed).
fn srs(constraints: usize) -> Arc<Srs> {
    type SrsBySize = std::sync::Mutex<Vec<(usize, Arc<Srs>)>>;
    static CACHE: OnceLock<SrsBySize> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut c = cache.lock().unwrap();
    if let Some((_, s)) = c.iter().find(|(n, _)| *n == constraints) {
        return Arc::clone(s);
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(constraints as u64);
    let params: Parameters<Bls12> = paramgen::generate(
        RandomCircuit::new(Shape::Mixed, constraints, 0),
        &mut rng,
        &|_, _| {},
    )
    .unwrap();
    let s = Arc::new(Srs::from_parameters(&params));
    c.push((constraints, Arc::clone(&s)));
    s
}

fn job(constraints: usize, partitions: usize, priority: Priority, seed: u64) -> Arc<Synthetic> {
    Arc::new(Synthetic {
        srs: srs(constraints),
        key: format!("synthetic-{constraints}"),
        constraints,
        partitions,
        priority,
        seed,
        panic_in: None,
        load_gate: None,
        size_hint: false,
        synth_gate: None,
    })
}

fn config(synth: usize, pool: usize) -> Config {
    Config {
        synthesis_workers: synth,
        prover_workers: 1,
        pool_buffers: pool,
        buffer_constraints: 0,
        memory_budget: 4 << 30,
        malloc_trim: true,
        ..Config::default()
    }
}

#[test]
fn two_hundred_jobs_from_eight_threads_all_complete_verified() {
    let _ = env_logger::builder().is_test(true).try_init();
    let engine = Arc::new(Engine::open_cpu(config(2, 4)).unwrap());
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                let jobs: Vec<(JobId, Arc<Synthetic>)> = (0..25u64)
                    .map(|i| {
                        let prio = [Priority::Normal, Priority::High, Priority::Critical]
                            [(i % 3) as usize];
                        let w = job(120, 1 + (i % 2) as usize, prio, t * 100 + i);
                        (engine.submit(w.clone()).unwrap(), w)
                    })
                    .collect();
                jobs.into_iter()
                    .map(|(id, w)| {
                        let proof = engine.await_job(id, None).unwrap();
                        assert!(check(&w, &proof), "job {id:?} returned a bad proof");
                        id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<JobId> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 200, "every job completed exactly once");
    let status = engine.status();
    assert_eq!(status.completed, 200);
    assert_eq!(status.failed + status.cancelled, 0);
    assert_eq!(status.jobs_active, 0);
    assert_eq!(
        status.pool_free, status.pool_buffers,
        "every buffer came back"
    );
    assert!(status
        .to_prometheus()
        .contains("cuzk_jobs_completed_total 200"));
}

#[test]
fn winning_post_overtakes_a_backlog() {
    let engine = Engine::open_cpu(config(1, 2)).unwrap();
    let backlog: Vec<JobId> = (0..8)
        .map(|i| {
            engine
                .submit(job(3000, 2, Priority::Normal, 500 + i))
                .unwrap()
        })
        .collect();
    let started_before = engine.start_order().len();
    let critical = engine.submit(job(120, 1, Priority::Critical, 999)).unwrap();
    engine.await_job(critical, None).unwrap();
    for id in &backlog {
        engine.await_job(*id, None).unwrap();
    }
    let starts = engine.start_order();
    let position = starts.iter().position(|(id, _)| *id == critical).unwrap();
    // One synthesis worker: it may have taken at most one more backlog partition between our
    // reading of the start log and the submission.
    assert!(
        position <= started_before + 1,
        "critical job started at {position}, {started_before} partitions had started before it was submitted"
    );
    let finish = engine.finish_order();
    let critical_done = finish.iter().position(|id| *id == critical).unwrap();
    let backlog_done = finish.iter().filter(|id| backlog.contains(id)).count();
    let backlog_before = finish[..critical_done]
        .iter()
        .filter(|id| backlog.contains(id))
        .count();
    assert!(
        backlog_before < backlog_done / 2,
        "critical finished after most of the backlog"
    );
}

#[test]
fn budget_holds_under_a_burst_oversize_is_refused_and_cancel_frees() {
    let srs_bytes = srs(2000).byte_size() as u64;
    // Room for the SRS, the pool (3 sets of 3 x 2048 scalars) and about two partitions in
    // flight (~260 KB each: the assignment and the CPU prover's transients): the budget, not
    // the pool, limits the lookahead.
    let pool_bytes = 3 * 3 * 2048 * 32;
    let budget = srs_bytes + pool_bytes + 2 * 260_000;
    let cfg = Config {
        memory_budget: budget,
        buffer_constraints: 2048,
        ..config(2, 3)
    };
    let engine = Engine::open_cpu(cfg).unwrap();
    let jobs: Vec<JobId> = (0..12)
        .map(|i| {
            engine
                .submit(job(2000, 2, Priority::Normal, 40 + i))
                .unwrap()
        })
        .collect();
    engine.cancel(jobs[11]).unwrap();
    assert_eq!(
        engine.await_job(jobs[11], None),
        Err(EngineError::Cancelled)
    );
    for id in &jobs[..11] {
        engine.await_job(*id, None).unwrap();
    }
    let status = engine.status();
    assert!(
        status.budget_high_water <= budget,
        "{} > {budget}",
        status.budget_high_water
    );
    assert_eq!(status.cancelled, 1);
    assert_eq!(status.pool_free, status.pool_buffers);
    assert_eq!(
        status.budget_used,
        status.pool_bytes + status.srs_resident.iter().map(|r| r.1).sum::<u64>(),
        "only the pool and resident parameters stay charged"
    );

    // Parameters larger than the whole budget: refused with a clear error, not a hang.
    let huge = Engine::open_cpu(Config {
        memory_budget: srs_bytes / 2,
        ..config(1, 1)
    })
    .unwrap();
    let e = huge.prove(job(2000, 1, Priority::Normal, 1)).unwrap_err();
    assert!(matches!(e, EngineError::TooLarge(_)), "{e}");
    let e = huge.submit(job(2000, 1, Priority::Normal, 2)).unwrap_err();
    assert!(
        matches!(e, EngineError::TooLarge(_)),
        "refused at submit once the size is known: {e}"
    );
}

#[test]
fn a_panicking_synthesis_fails_only_its_own_job() {
    let engine = Engine::open_cpu(config(1, 2)).unwrap();
    let bad = Arc::new(Synthetic {
        panic_in: Some(1),
        ..Arc::try_unwrap(job(120, 2, Priority::Normal, 7))
            .ok()
            .unwrap()
    });
    let bad_id = engine.submit(bad).unwrap();
    let good = job(120, 1, Priority::Normal, 8);
    let good_id = engine.submit(good.clone()).unwrap();
    match engine.await_job(bad_id, None) {
        Err(EngineError::Failed(msg)) => assert!(msg.contains("panicked"), "{msg}"),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert!(check(&good, &engine.await_job(good_id, None).unwrap()));
    assert!(
        engine.prove(job(120, 1, Priority::High, 9)).is_ok(),
        "still serving"
    );
    let status = engine.status();
    assert_eq!((status.failed, status.completed), (1, 2));
    assert_eq!(
        status.pool_free, status.pool_buffers,
        "the panicking job's buffer was replaced"
    );
}

#[test]
fn close_with_jobs_in_flight_returns_and_later_calls_fail() {
    let engine = Engine::open_cpu(config(2, 3)).unwrap();
    // A job that finished before the close keeps its proof; the others end Closed.
    let first = job(120, 1, Priority::Normal, 299);
    let first_id = engine.submit(first.clone()).unwrap();
    let jobs: Vec<Arc<Synthetic>> = (0..20)
        .map(|i| job(3000, 2, Priority::Normal, 300 + i))
        .collect();
    let ids: Vec<JobId> = jobs
        .iter()
        .map(|j| engine.submit(j.clone()).unwrap())
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while engine.status().completed == 0 {
        assert!(Instant::now() < deadline, "the first job never finished");
        std::thread::yield_now();
    }
    engine.close();
    let status = engine.status();
    assert!(status.closed);
    assert_eq!(
        (status.pool_bytes, status.budget_used),
        (0, 0),
        "everything freed"
    );
    assert_eq!(
        engine.submit(job(120, 1, Priority::Low, 1)).unwrap_err(),
        EngineError::Closed
    );
    assert_eq!(engine.cancel(ids[0]).unwrap_err(), EngineError::Closed);
    let proof = engine
        .await_job(first_id, Some(Duration::from_secs(5)))
        .expect("a proof finished before close is still handed out");
    assert!(check(&first, &proof), "and it verifies");
    let mut closed = 0;
    for (id, w) in ids.into_iter().zip(&jobs) {
        match engine.await_job(id, Some(Duration::from_secs(5))) {
            // Finished between the first job and the close: must be a real proof.
            Ok(proof) => assert!(check(w, &proof), "job {id:?}: invalid proof"),
            Err(EngineError::Closed) => closed += 1,
            other => panic!("job {id:?}: {other:?}"),
        }
    }
    assert!(
        closed > 0,
        "every job finished before close: the test proved nothing"
    );
}

#[test]
fn await_times_out_and_unknown_jobs_are_errors() {
    let engine = Engine::open_cpu(config(1, 1)).unwrap();
    assert_eq!(
        engine.await_job(JobId(42), None),
        Err(EngineError::UnknownJob(42))
    );
    let id = engine.submit(job(3000, 4, Priority::Low, 5)).unwrap();
    assert_eq!(
        engine.await_job(id, Some(Duration::from_millis(1))),
        Err(EngineError::Timeout(id.0))
    );
    engine.await_job(id, None).unwrap();
    assert_eq!(
        engine.await_job(id, None),
        Err(EngineError::UnknownJob(id.0)),
        "results are handed out once"
    );
}

#[test]
fn a_slow_parameter_decode_does_not_hold_up_synthesis_of_other_jobs() {
    // One synthesis worker. Job A's parameters take "forever" to decode (until the test opens
    // the gate); job B's are quick. B must be proved while A's decode is still running.
    let engine = Engine::open_cpu(config(1, 2)).unwrap();
    let (open_gate, gate) = std::sync::mpsc::channel();
    let slow = Arc::new(Synthetic {
        key: "synthetic-slow-decode".into(),
        load_gate: Some(std::sync::Mutex::new(gate)),
        ..Arc::try_unwrap(job(2000, 1, Priority::Normal, 1))
            .ok()
            .unwrap()
    });
    let a = engine.submit(slow.clone()).unwrap();
    let quick = job(1000, 1, Priority::Critical, 2);
    let b = engine.submit(quick.clone()).unwrap();
    let proof = engine
        .await_job(b, Some(Duration::from_secs(300)))
        .expect("job B is proved while A's parameters are still decoding");
    assert!(check(&quick, &proof));
    match engine.await_job(a, Some(Duration::ZERO)) {
        Err(EngineError::Timeout(_)) => {}
        other => panic!(
            "job A cannot be done before its decode: {:?}",
            other.map(|p| p.len())
        ),
    }
    open_gate.send(()).unwrap();
    let proof = engine.await_job(a, Some(Duration::from_secs(300))).unwrap();
    assert!(check(&slow, &proof));
    engine.close();
}

#[test]
fn a_size_hint_keeps_first_decodes_within_the_budget_and_refuses_oversize_up_front() {
    let small = srs(1000).byte_size() as u64;
    let big = srs(2000).byte_size() as u64;
    let hinted = |constraints: usize, key: &str, seed: u64| {
        Arc::new(Synthetic {
            key: key.into(),
            size_hint: true,
            ..Arc::try_unwrap(job(constraints, 1, Priority::Normal, seed))
                .ok()
                .unwrap()
        })
    };
    // Room for the larger parameter set, the pool (~200 KB) and a partition (~260 KB with the
    // prover's transients), never for two sets and a partition at once: the second set's
    // first decode must wait for the first to be evicted, not overshoot.
    let budget = big + 700_000;
    let engine = Engine::open_cpu(Config {
        memory_budget: budget,
        ..config(1, 1)
    })
    .unwrap();
    let a = engine.submit(hinted(2000, "hinted-big", 1)).unwrap();
    let b = engine.submit(hinted(1000, "hinted-small", 2)).unwrap();
    let c = engine.submit(hinted(2000, "hinted-big", 3)).unwrap();
    for id in [a, b, c] {
        engine
            .await_job(id, Some(Duration::from_secs(600)))
            .unwrap();
    }
    let status = engine.status();
    assert!(
        status.budget_high_water <= budget,
        "high water {} over the {budget} budget (sets of {big} and {small} bytes)",
        status.budget_high_water
    );
    engine.close();

    // A set that can never fit is refused at submit, before any decode.
    let tiny = Engine::open_cpu(Config {
        memory_budget: big / 2,
        ..config(1, 1)
    })
    .unwrap();
    match tiny.submit(hinted(2000, "hinted-huge", 4)) {
        Err(EngineError::TooLarge(msg)) => assert!(msg.contains("hinted-huge"), "{msg}"),
        other => panic!("expected TooLarge at submit, got {other:?}"),
    }
    assert_eq!(tiny.status().srs_resident.len(), 0);
}

#[test]
fn a_job_submitted_while_the_only_buffer_set_is_in_use_is_not_refused_as_too_large() {
    // The budget fits the parameters, the one buffer set and a partition, with no room for a
    // second set. While job A synthesizes into that set, job B on the same parameters must
    // be accepted (it waits for the set), not refused as if it needed a set of its own.
    let big = srs(2000).byte_size() as u64;
    let (gate, arrivals, let_through) = Gate::new();
    let gated = Arc::new(Synthetic {
        key: "hinted-gated".into(),
        size_hint: true,
        synth_gate: Some(gate),
        ..Arc::try_unwrap(job(2000, 1, Priority::Normal, 5))
            .ok()
            .unwrap()
    });
    let engine = Engine::open_cpu(Config {
        memory_budget: big + 700_000,
        ..config(1, 1)
    })
    .unwrap();
    let a = engine.submit(gated.clone()).unwrap();
    arrivals.recv().expect("A reaches synthesis");
    let b = engine.submit(gated.clone());
    let_through.send(()).unwrap();
    let_through.send(()).unwrap();
    let b = b.expect("B fits once A hands its buffer set back");
    for id in [a, b] {
        let proof = engine
            .await_job(id, Some(Duration::from_secs(600)))
            .unwrap();
        assert!(check(&gated, &proof));
    }
    engine.close();
}

#[test]
fn an_engine_over_several_backends_proves_every_partition_once_and_verified() {
    let _ = env_logger::builder().is_test(true).try_init();
    // Stands in for several GPUs: the spread backend and one prover worker and finalizer per
    // member, as `open_configured` sets up for a device list.
    let spread = Arc::new(Spread::new(vec![CpuBackend, CpuBackend]).unwrap());
    let config = Config {
        prover_workers: 2,
        ..config(2, 4)
    };
    let engine = Engine::open(config, Arc::clone(&spread) as Arc<dyn ErasedBackend>).unwrap();
    assert_eq!(engine.status().backend, "cpu+cpu");
    let jobs: Vec<_> = (0..6u64)
        .map(|i| {
            let w = job(120, 4, Priority::Normal, 900 + i);
            (engine.submit(w.clone()).unwrap(), w)
        })
        .collect();
    for (id, w) in jobs {
        let proof = engine.await_job(id, None).unwrap();
        assert!(check(&w, &proof), "job {id:?} returned a bad proof");
    }
    assert_eq!(
        spread.started_per_member().iter().sum::<usize>(),
        24,
        "each partition was started once, on one member"
    );
    let status = engine.status();
    assert_eq!((status.completed, status.failed), (6, 0));
    assert_eq!(status.pool_free, status.pool_buffers);
    engine.close();
}

/// Heap memory that says it is pinned (stands in for page-locked memory).
struct FakePinned(Box<[Scalar]>);

impl HostBlock for FakePinned {
    fn as_mut_ptr(&self) -> *mut Scalar {
        self.0.as_ptr() as *mut Scalar
    }
    fn capacity(&self) -> usize {
        self.0.len()
    }
    fn is_pinned(&self) -> bool {
        true
    }
}

/// The CPU backend dressed as a device "fake:0": it reports 1.5 ms of kernel busy time, prefers
/// pinned buffers (handing out [`FakePinned`] ones) and records whether each partition's a/b/c
/// and aux were pinned at `prove_start`.
#[derive(Default)]
struct FakeDevice {
    pinned_at_start: std::sync::Mutex<Vec<bool>>,
}

impl ProverBackend for FakeDevice {
    type Pending = <CpuBackend as ProverBackend>::Pending;
    fn name(&self) -> String {
        "fake:0".into()
    }
    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> cuzk::groth16::Result<Started<Self::Pending>> {
        // The whole set: a, b, c and aux are all uploaded from it.
        let pinned = assignment.abc.is_pinned() && assignment.aux.is_pinned();
        self.pinned_at_start.lock().unwrap().push(pinned);
        CpuBackend.prove_start(assignment, srs, randomness)
    }
    fn prove_finish(&self, pending: Self::Pending) -> cuzk::groth16::Result<Proof> {
        CpuBackend.prove_finish(pending)
    }
    fn device_busy_ms(&self) -> Vec<(String, f64)> {
        vec![("fake:0".into(), 1.5)]
    }
    fn prefers_pinned(&self) -> bool {
        true
    }
    fn alloc_buffers(&self, constraints: usize) -> BufferSet {
        if constraints == 0 {
            return BufferSet::default();
        }
        let block = || {
            ScalarBuf::in_block(Box::new(FakePinned(
                vec![Scalar::ZERO; constraints].into_boxed_slice(),
            )))
        };
        BufferSet {
            abc: AbcBuffers {
                a: block(),
                b: block(),
                c: block(),
            },
            aux: block(),
        }
    }
}

#[test]
fn status_reports_device_busy_time_per_device_and_none_on_the_cpu() {
    let cpu = Engine::open_cpu(config(1, 2)).unwrap();
    assert!(cpu.status().devices.is_empty());
    cpu.close();
    let spread = Spread::new(vec![FakeDevice::default(), FakeDevice::default()]).unwrap();
    let engine = Engine::open(config(1, 2), Arc::new(spread)).unwrap();
    let w = job(120, 1, Priority::Normal, 7);
    let proof = engine.prove(w.clone()).unwrap();
    assert!(check(&w, &proof));
    let status = engine.status();
    let devices: Vec<(&str, f64)> = status
        .devices
        .iter()
        .map(|d| (d.name.as_str(), d.busy_ms))
        .collect();
    assert_eq!(devices, vec![("fake:0", 1.5), ("fake:0", 1.5)]);
    assert!(status.devices[0].utilisation > 0.0);
    assert!(status
        .to_prometheus()
        .contains("cuzk_device_utilisation{device=\"fake:0\"}"));
    engine.close();
}

#[test]
fn pool_buffers_sized_on_first_use_are_pinned_from_the_first_partition() {
    let _ = env_logger::builder().is_test(true).try_init();
    // buffer_constraints = 0: the pool starts empty-sized. The circuit's shape is known from
    // its parameters before the first synthesis, so a backend that prefers pinned memory gets
    // pinned buffers of the right size (charged before use) from the first partition on.
    let backend = Arc::new(FakeDevice::default());
    let engine =
        Engine::open(config(1, 2), Arc::clone(&backend) as Arc<dyn ErasedBackend>).unwrap();
    for seed in 0..4u64 {
        let w = job(120, 1, Priority::Normal, 300 + seed);
        let proof = engine.prove(w.clone()).unwrap();
        assert!(check(&w, &proof));
    }
    let pinned = backend.pinned_at_start.lock().unwrap().clone();
    assert_eq!(pinned, vec![true; 4]);
    let status = engine.status();
    assert_eq!(status.pool_free, status.pool_buffers);
    assert!(status.budget_used >= status.pool_bytes);
    engine.close();
}

#[test]
fn a_config_that_cannot_fit_or_asks_for_absurd_threads_is_refused_before_allocating() {
    // 100000 sets of 2^40 constraints: ~10 EB. Once allocated first and checked after (an
    // abort inside the node, found by the Go fuzz target FuzzEngineConfig).
    let huge_pool = Config {
        pool_buffers: 4000,
        buffer_constraints: 1 << 40,
        ..config(1, 1)
    };
    match Engine::open_cpu(huge_pool) {
        Err(EngineError::TooLarge(msg)) => assert!(msg.contains("buffer pool"), "{msg}"),
        other => panic!("expected TooLarge, got {:?}", other.map(|_| ())),
    }
    // A pool within a budget set above this machine's memory is still refused.
    let over_memory = Config {
        pool_buffers: 1,
        buffer_constraints: 1 << 40,
        memory_budget: u64::MAX,
        ..config(1, 1)
    };
    assert!(matches!(
        Engine::open_cpu(over_memory),
        Err(EngineError::TooLarge(_))
    ));
    for (synth, prover, pool) in [(1_000_000, 1, 2), (1, usize::MAX, 2), (1, 1, 100_000)] {
        let absurd = Config {
            synthesis_workers: synth,
            prover_workers: prover,
            pool_buffers: pool,
            ..config(1, 1)
        };
        match Engine::open_cpu(absurd) {
            Err(EngineError::Invalid(msg)) => assert!(msg.contains("at most"), "{msg}"),
            other => panic!("expected Invalid, got {:?}", other.map(|_| ())),
        }
    }
}

/// The CPU backend, but `prove_start` of a partition of more than `held_above` constraints
/// stops at a gate until the test lets it through: a NORMAL partition whose start is held up
/// (on a GPU: waiting for device memory while two partitions fill it).
struct HeldStart {
    held_above: usize,
    gate: Gate,
}

impl ProverBackend for HeldStart {
    type Pending = <CpuBackend as ProverBackend>::Pending;
    fn name(&self) -> String {
        "held-start".into()
    }
    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> cuzk::groth16::Result<Started<Self::Pending>> {
        if assignment.num_constraints() > self.held_above {
            self.gate.pass();
        }
        CpuBackend.prove_start(assignment, srs, randomness)
    }
    fn prove_finish(&self, pending: Self::Pending) -> cuzk::groth16::Result<Proof> {
        CpuBackend.prove_finish(pending)
    }
}

#[test]
fn a_winning_post_is_proved_while_a_normal_prove_start_is_held_up() {
    let _ = env_logger::builder().is_test(true).try_init();
    let (gate, arrivals, let_through) = Gate::new();
    let backend = Arc::new(HeldStart {
        held_above: 1000,
        gate,
    });
    // One prover worker (the default per device), as on a one-GPU node.
    let engine = Engine::open(config(1, 3), backend as Arc<dyn ErasedBackend>).unwrap();
    let normal = job(3000, 1, Priority::Normal, 40);
    let normal_id = engine.submit(normal.clone()).unwrap();
    arrivals
        .recv_timeout(Duration::from_secs(120))
        .expect("the NORMAL partition reached prove_start");
    let critical = job(120, 1, Priority::Critical, 41);
    let critical_id = engine.submit(critical.clone()).unwrap();
    let proved = engine.await_job(critical_id, Some(Duration::from_secs(60)));
    // Let the NORMAL start go whatever happened, so the engine can close.
    let_through.send(()).unwrap();
    let proof = proved.expect("the WinningPoSt is proved while the NORMAL start is held up");
    assert!(check(&critical, &proof));
    let proof = engine.await_job(normal_id, None).unwrap();
    assert!(check(&normal, &proof));
    engine.close();
}
