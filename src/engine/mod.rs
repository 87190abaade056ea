//! The engine: a long-lived, pipelined prover inside the host process. Synthesis workers run
//! ahead on the CPU while prover workers keep the backend busy; partitions are scheduled by
//! (priority class, job, partition); memory is admitted against a measured budget; jobs can be
//! cancelled; status and per-partition timing lines tell an operator what happens.
//!
//! The engine knows nothing of Filecoin: it proves [`Workload`]s.

pub mod backend;
pub mod budget;
pub mod config;
pub mod state;
pub mod status;
pub mod workers;
pub mod workload;

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use backend::ErasedBackend;
pub use config::Config;
pub use state::JobTimings;
pub use status::{ClassStatus, Status, WorkerStatus};
pub use workload::{JobId, Priority, Workload};

use budget::Budget;
use state::{Counters, JobState, State};

use crate::groth16::{AbcBuffers, CpuBackend};

/// Why an engine call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The engine was closed.
    #[error("engine is closed")]
    Closed,
    /// The job was cancelled.
    #[error("job cancelled")]
    Cancelled,
    /// No such job (never submitted, or its result was already taken).
    #[error("unknown job {0}")]
    UnknownJob(u64),
    /// `await` timed out; the job goes on.
    #[error("timed out waiting for job {0}")]
    Timeout(u64),
    /// The request can never fit the memory budget.
    #[error("refused: {0}")]
    TooLarge(String),
    /// Bad configuration or arguments.
    #[error("invalid: {0}")]
    Invalid(String),
    /// Synthesis, proving or the self-check failed.
    #[error("{0}")]
    Failed(String),
}

/// Shared between the engine handle and its threads.
pub struct Inner {
    state: Mutex<State>,
    /// Synthesis workers wait here (work, buffers, budget, SRS).
    work_cv: Condvar,
    /// Prover workers wait here (synthesized partitions).
    prove_cv: Condvar,
    /// Waiters of `await` wait here.
    done_cv: Condvar,
    backend: Arc<dyn ErasedBackend>,
    config: Config,
    opened: Instant,
    /// Whether pool buffers that grew on the heap are still replaced by pinned ones (cleared
    /// after the first time pinning fails, so a host that cannot pin is not retried forever).
    pin_grown_buffers: std::sync::atomic::AtomicBool,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics under the lock; recover the data if something ever did.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, cv: &Condvar, guard: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        cv.wait(guard).unwrap_or_else(|e| e.into_inner())
    }

    fn notify_all(&self) {
        self.work_cv.notify_all();
        self.prove_cv.notify_all();
        self.done_cv.notify_all();
    }
}

/// The backend for `config`: "cpu", "cuda" (an error without a usable device) or "auto".
fn select_backend(config: &Config) -> Result<Arc<dyn ErasedBackend>, EngineError> {
    config.validate().map_err(EngineError::Invalid)?;
    if config.backend == "cpu" {
        return Ok(Arc::new(CpuBackend));
    }
    match open_gpus(config) {
        Ok(gpus) => Ok(gpus),
        Err(e) if config.backend == "auto" => {
            log::info!("proving on the CPU: {e}");
            Ok(Arc::new(CpuBackend))
        }
        Err(e) => Err(EngineError::Invalid(format!("backend = \"cuda\": {e}"))),
    }
}

/// Opens the configured devices: every listed one (any failure is an error), or with an empty
/// list every device found (those that fail to open are skipped with a warning). Several
/// devices are one [`crate::groth16::Spread`] backend.
#[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
fn open_gpus(config: &Config) -> Result<Arc<dyn ErasedBackend>, String> {
    use crate::gpu::cuda::GpuBackend;
    let listed = !config.devices.is_empty();
    let ordinals: Vec<u32> = if listed {
        config.devices.clone()
    } else {
        crate::gpu::devices().iter().map(|d| d.ordinal).collect()
    };
    let mut members = Vec::new();
    for ordinal in ordinals {
        match GpuBackend::open(ordinal, config.cpu_fallback) {
            Ok(gpu) => members.push(gpu),
            Err(e) if listed => return Err(e.to_string()),
            Err(e) => log::warn!("skipping CUDA device {ordinal}: {e}"),
        }
    }
    match members.len() {
        0 => Err("no usable CUDA device".into()),
        1 => Ok(Arc::new(members.remove(0))),
        _ => {
            let spread = crate::groth16::Spread::new(members).map_err(|e| e.to_string())?;
            Ok(Arc::new(spread))
        }
    }
}

#[cfg(not(any(feature = "cuda", feature = "gpu-emulator")))]
fn open_gpus(_config: &Config) -> Result<Arc<dyn ErasedBackend>, String> {
    Err("this build has no CUDA backend (cargo feature `cuda`)".into())
}

/// A running engine. Dropping it closes it.
pub struct Engine {
    inner: Arc<Inner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Opens an engine on the CPU backend.
    pub fn open_cpu(config: Config) -> Result<Self, EngineError> {
        Self::open(config, Arc::new(CpuBackend))
    }

    /// Opens an engine on the backend the config asks for (see [`Config::backend`]): a GPU
    /// when one is usable, else the CPU; `status().backend` says which.
    /// With several devices the engine runs at least one prover worker per device (and a pool
    /// left at its default size, synthesis + prover workers + 1, grows with them).
    pub fn open_configured(mut config: Config) -> Result<Self, EngineError> {
        let backend = select_backend(&config)?;
        let devices = backend.lanes();
        if devices > config.prover_workers {
            let default_pool = config.synthesis_workers + config.prover_workers + 1;
            if config.pool_buffers == default_pool {
                config.pool_buffers += devices - config.prover_workers;
            }
            config.prover_workers = devices;
        }
        Self::open(config, backend)
    }

    /// Opens an engine: allocates the buffer pool (charged to the budget) and starts the
    /// synthesis workers, prover workers and finalizers: one queue per backend lane (device)
    /// with prover_workers / lanes finalizers each (at least one), so several devices finish
    /// partitions at the same time.
    pub fn open(config: Config, backend: Arc<dyn ErasedBackend>) -> Result<Self, EngineError> {
        config.validate().map_err(EngineError::Invalid)?;
        let pool: Vec<AbcBuffers> = (0..config.pool_buffers)
            .map(|_| backend.alloc_buffers(config.buffer_constraints))
            .collect();
        let pool_bytes: u64 = pool.iter().map(|b| b.capacity_bytes() as u64).sum();
        let mut budget = Budget::new(config.memory_budget);
        if !budget.fits(pool_bytes) {
            return Err(EngineError::TooLarge(format!(
                "the buffer pool ({pool_bytes} bytes) exceeds the {} byte budget",
                config.memory_budget
            )));
        }
        budget.charge(pool_bytes);
        let state = State {
            closed: false,
            next_job: 1,
            synth_queue: Default::default(),
            prove_queue: Default::default(),
            jobs: HashMap::new(),
            pool_total: pool.len(),
            pool,
            pool_bytes,
            budget,
            srs: HashMap::new(),
            evicted: Vec::new(),
            srs_loading: Default::default(),
            srs_sizes: HashMap::new(),
            partition_bytes: HashMap::new(),
            measuring: Default::default(),
            counters: Counters::default(),
            busy_ms: Default::default(),
        };
        let inner = Arc::new(Inner {
            state: Mutex::new(state),
            work_cv: Condvar::new(),
            prove_cv: Condvar::new(),
            done_cv: Condvar::new(),
            pin_grown_buffers: std::sync::atomic::AtomicBool::new(backend.prefers_pinned()),
            backend,
            config: config.clone(),
            opened: Instant::now(),
        });
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(format!("cuzk-{name}"))
                .spawn(f)
                .map_err(|e| EngineError::Invalid(format!("cannot start thread {name}: {e}")))
        };
        let mut threads = Vec::new();
        // One queue per lane (device), so a partition waiting for a busy device never holds
        // up another device's; each queue has its share of the finalizers.
        let lanes = inner.backend.lanes();
        let per_lane = (config.prover_workers / lanes).max(1);
        let mut senders = Vec::with_capacity(lanes);
        for lane in 0..lanes {
            let (tx, rx) = mpsc::channel();
            senders.push(tx);
            let rx = Arc::new(Mutex::new(rx));
            for k in 0..per_lane {
                let i = lane * per_lane + k;
                let inner = Arc::clone(&inner);
                let rx = Arc::clone(&rx);
                let name = match i {
                    0 => "finalizer".to_string(),
                    _ => format!("finalizer-{i}"),
                };
                threads.push(spawn(
                    name.clone(),
                    Box::new(move || workers::finalizer(inner, name, rx)),
                )?);
            }
        }
        for i in 0..config.synthesis_workers {
            let inner = Arc::clone(&inner);
            let name = format!("synth-{i}");
            threads.push(spawn(
                name.clone(),
                Box::new(move || workers::synthesis_worker(inner, name)),
            )?);
        }
        for i in 0..config.prover_workers {
            let inner = Arc::clone(&inner);
            let name = format!("prover-{i}");
            let senders = senders.clone();
            threads.push(spawn(
                name.clone(),
                Box::new(move || workers::prover_worker(inner, name, senders)),
            )?);
        }
        drop(senders);
        Ok(Self {
            inner,
            threads: Mutex::new(threads),
        })
    }

    /// Queues a job; its partitions are scheduled by (priority, submission order, partition).
    pub fn submit(&self, workload: Arc<dyn Workload>) -> Result<JobId, EngineError> {
        let partitions = workload.partitions();
        if partitions == 0 {
            return Err(EngineError::Invalid(
                "a job needs at least one partition".into(),
            ));
        }
        let key = workload.srs_key();
        let hint = workload.srs_size_hint();
        let mut st = self.inner.lock();
        if st.closed {
            return Err(EngineError::Closed);
        }
        if let (false, Some(bytes)) = (st.srs_sizes.contains_key(&key), hint) {
            // Until the first decode measures it, the hint stands in for the size.
            st.srs_sizes.insert(key.clone(), bytes);
        }
        if let Some(&bytes) = st.srs_sizes.get(&key) {
            if bytes + st.pool_bytes > st.budget.limit {
                return Err(EngineError::TooLarge(format!(
                    "parameters {} need {bytes} bytes; with the pool ({}) they can never fit the {} byte budget",
                    workload.srs_key(),
                    st.pool_bytes,
                    st.budget.limit
                )));
            }
        }
        let id = JobId(st.next_job);
        st.next_job += 1;
        let priority = workload.priority();
        for k in 0..partitions {
            st.synth_queue.insert((priority, id, k));
        }
        st.jobs.insert(
            id,
            JobState {
                workload,
                priority,
                srs: None,
                proofs: vec![None; partitions],
                remaining: partitions,
                in_flight: 0,
                outcome: None,
                submitted: Instant::now(),
                started: false,
                timings: JobTimings::default(),
            },
        );
        drop(st);
        self.inner.work_cv.notify_all();
        Ok(id)
    }

    /// Waits for a job's verified proof (partition proofs concatenated), or its error. The
    /// result is handed out once; `timeout` None waits as long as it takes.
    pub fn await_job(&self, id: JobId, timeout: Option<Duration>) -> Result<Vec<u8>, EngineError> {
        self.await_with_timings(id, timeout).map(|(bytes, _)| bytes)
    }

    /// As [`Engine::await_job`], also returning the job's phase timings.
    pub fn await_with_timings(
        &self,
        id: JobId,
        timeout: Option<Duration>,
    ) -> Result<(Vec<u8>, JobTimings), EngineError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.inner.lock();
        loop {
            let job = st.jobs.get(&id).ok_or(EngineError::UnknownJob(id.0))?;
            if job.outcome.is_some() && job.in_flight == 0 {
                let job = st.jobs.remove(&id).expect("present");
                return job.outcome.expect("set").map(|b| (b, job.timings));
            }
            st = match deadline {
                None => self.inner.wait(&self.inner.done_cv, st),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(EngineError::Timeout(id.0));
                    }
                    self.inner
                        .done_cv
                        .wait_timeout(st, left)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    /// Submits and waits.
    pub fn prove(&self, workload: Arc<dyn Workload>) -> Result<Vec<u8>, EngineError> {
        let id = self.submit(workload)?;
        self.await_job(id, None)
    }

    /// Cancels a job: queued partitions are dropped at once and their buffers and budget go
    /// back; running partitions finish and are discarded. Waiters get `Cancelled`.
    pub fn cancel(&self, id: JobId) -> Result<(), EngineError> {
        let mut st = self.inner.lock();
        if st.closed {
            return Err(EngineError::Closed);
        }
        if !st.jobs.contains_key(&id) {
            return Err(EngineError::UnknownJob(id.0));
        }
        st.finish(id, Err(EngineError::Cancelled));
        drop(st);
        self.inner.notify_all();
        Ok(())
    }

    /// Loads a workload's SRS now so that the first proof does not pay for it.
    pub fn preload(&self, workload: &dyn Workload) -> Result<(), EngineError> {
        self.preload_srs(&workload.srs_key(), || workload.load_srs())
    }

    /// Makes the SRS `key` resident, decoding it with `load` (outside the lock) unless it
    /// already is. Charged to the budget; idle parameter sets are evicted for room.
    pub fn preload_srs(
        &self,
        key: &str,
        load: impl FnOnce() -> Result<Arc<crate::groth16::Srs>, String>,
    ) -> Result<(), EngineError> {
        {
            let st = self.inner.lock();
            if st.closed {
                return Err(EngineError::Closed);
            }
            if st.srs.contains_key(key) {
                return Ok(());
            }
        }
        let srs = load().map_err(EngineError::Failed)?;
        let bytes = srs.byte_size() as u64;
        let mut st = self.inner.lock();
        st.srs_sizes.insert(key.to_string(), bytes);
        if st.srs.contains_key(key) {
            return Ok(());
        }
        st.evict_for(bytes);
        let evicted = st.take_evicted();
        if !st.budget.fits(bytes) {
            drop(st);
            drop(evicted);
            return Err(EngineError::TooLarge(format!(
                "parameters {key} ({bytes} bytes) do not fit the budget now"
            )));
        }
        st.budget.charge(bytes);
        st.srs.insert(
            key.to_string(),
            state::Resident {
                srs,
                bytes,
                users: 0,
                last_used: Instant::now(),
            },
        );
        drop(st);
        drop(evicted);
        self.inner.work_cv.notify_all();
        Ok(())
    }

    /// Drops a resident SRS if no job uses it; returns whether it was evicted. The memory is
    /// freed after the engine lock is released.
    pub fn evict(&self, srs_key: &str) -> Result<bool, EngineError> {
        let removed = {
            let mut st = self.inner.lock();
            if st.closed {
                return Err(EngineError::Closed);
            }
            match st.srs.get(srs_key) {
                Some(r) if r.users == 0 => {
                    let bytes = r.bytes;
                    let removed = st.srs.remove(srs_key);
                    st.budget.release(bytes);
                    removed
                }
                _ => None,
            }
        };
        Ok(removed.is_some())
    }

    /// A snapshot of queues, workers, pool, budget and counters.
    pub fn status(&self) -> Status {
        let st = self.inner.lock();
        let wall = self.inner.opened.elapsed().as_secs_f64() * 1e3;
        let classes = Priority::ALL
            .iter()
            .map(|&p| ClassStatus {
                class: p.name(),
                queued: st.synth_queue.iter().filter(|k| k.0 == p).count(),
                synthesized: st.prove_queue.keys().filter(|k| k.0 == p).count(),
                in_flight: st
                    .jobs
                    .values()
                    .filter(|j| j.priority == p)
                    .map(|j| j.in_flight)
                    .sum(),
            })
            .collect();
        Status {
            backend: self.inner.backend.name(),
            closed: st.closed,
            uptime_ms: wall,
            classes,
            workers: st
                .busy_ms
                .iter()
                .map(|(name, &busy)| WorkerStatus::new(name.clone(), busy, wall))
                .collect(),
            devices: self
                .inner
                .backend
                .device_busy_ms()
                .into_iter()
                .map(|(name, busy)| WorkerStatus::new(name, busy, wall))
                .collect(),
            pool_buffers: st.pool_total,
            pool_free: st.pool.len(),
            pool_bytes: st.pool_bytes,
            pool_waits: st.counters.pool_waits,
            budget_limit: st.budget.limit,
            budget_used: st.budget.used,
            budget_high_water: st.budget.high_water,
            srs_resident: st
                .srs
                .iter()
                .map(|(k, r)| (k.clone(), r.bytes, r.users))
                .collect(),
            jobs_active: st.jobs.values().filter(|j| j.outcome.is_none()).count(),
            completed: st.counters.completed,
            failed: st.counters.failed,
            cancelled: st.counters.cancelled,
        }
    }

    /// The (job, partition) pairs in the order their synthesis started (latest 2048-4096).
    pub fn start_order(&self) -> Vec<(JobId, usize)> {
        self.inner.lock().counters.start_log.clone()
    }

    /// Jobs in the order they finished (latest 2048-4096).
    pub fn finish_order(&self) -> Vec<JobId> {
        self.inner.lock().counters.finish_log.clone()
    }

    /// Closes the engine: unfinished jobs fail with `Closed`, threads stop, the pool and all
    /// resident SRS are freed. Later calls return `Closed`. Idempotent.
    pub fn close(&self) {
        let ids: Vec<JobId> = {
            let mut st = self.inner.lock();
            st.closed = true;
            st.jobs.keys().copied().collect()
        };
        {
            let mut st = self.inner.lock();
            for id in ids {
                st.finish(id, Err(EngineError::Closed));
            }
        }
        self.inner.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        let mut st = self.inner.lock();
        // Buffers and parameter sets are freed after the lock is released.
        let pool = std::mem::take(&mut st.pool);
        st.pool_bytes = 0;
        let srs = std::mem::take(&mut st.srs);
        let evicted = st.take_evicted();
        st.prove_queue.clear();
        for job in st.jobs.values_mut() {
            job.in_flight = 0;
        }
        st.budget.used = 0;
        drop(st);
        drop((pool, srs, evicted));
        self.inner.notify_all();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.close();
    }
}
