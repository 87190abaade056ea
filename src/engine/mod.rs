//! The engine: a long-lived, pipelined prover inside the host process. Synthesis workers run
//! ahead on the CPU while prover workers keep the backend busy; partitions are scheduled by
//! (priority class, job, partition); memory is admitted against a measured budget; jobs can be
//! cancelled; status and per-partition timing lines tell an operator what happens.
//!
//! The engine knows nothing of Filecoin: it proves [`Workload`]s.

pub mod backend;
pub mod budget;
pub mod config;
mod host_memory;
pub mod lookahead;
pub mod plan;
pub mod schedule;
pub mod state;
pub mod status;
pub mod workers;
pub mod workload;

use std::collections::HashMap;
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
use workers::Serves;

use crate::groth16::{BufferSet, CircuitShape, CpuBackend};

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
    /// Finalizers wait here (partitions waiting for `prove_finish`).
    finish_cv: Condvar,
    /// Parameter loader threads, joined by `close`.
    loaders: Mutex<Vec<JoinHandle<()>>>,
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

    /// Releases the lock, then frees what was put in the trash and wakes every waiter (the
    /// state changed).
    fn unlock(&self, mut st: MutexGuard<'_, State>) {
        let (trash, bytes) = st.take_trash();
        drop(st);
        self.free(trash, bytes);
        self.notify_all();
    }

    /// Frees trash (outside the lock), then releases the bytes charged for it.
    fn free(&self, trash: Vec<Box<dyn std::any::Any + Send>>, bytes: u64) {
        drop(trash);
        if bytes > 0 {
            self.lock().budget.release(bytes);
        }
    }

    /// Frees the trash outside the lock and returns at once if there was any (the caller
    /// looks again); otherwise waits on `cv` (at most `timeout`).
    fn unlock_and_wait<'a>(
        &'a self,
        cv: &Condvar,
        mut st: MutexGuard<'a, State>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, State> {
        let (trash, bytes) = st.take_trash();
        if !trash.is_empty() || bytes > 0 {
            drop(st);
            self.free(trash, bytes);
            self.notify_all();
            return self.lock();
        }
        match timeout {
            None => cv.wait(st).unwrap_or_else(|e| e.into_inner()),
            Some(t) => cv.wait_timeout(st, t).unwrap_or_else(|e| e.into_inner()).0,
        }
    }

    fn notify_all(&self) {
        self.work_cv.notify_all();
        self.prove_cv.notify_all();
        self.finish_cv.notify_all();
        self.done_cv.notify_all();
    }

    /// Decodes a parameter set on a thread of its own (seconds to minutes), so the worker that
    /// asked keeps synthesizing; `close` joins it.
    fn spawn_loader(self: &Arc<Self>, workload: Arc<dyn Workload>) {
        let inner = Arc::clone(self);
        let job = Arc::clone(&workload);
        let spawned = std::thread::Builder::new()
            .name("cuzk-srs-load".into())
            .spawn(move || workers::load_srs(&inner, job));
        let mut loaders = self.loaders.lock().unwrap_or_else(|e| e.into_inner());
        loaders.retain(|h| !h.is_finished());
        match spawned {
            Ok(handle) => loaders.push(handle),
            Err(e) => {
                drop(loaders);
                log::warn!("cannot start a loader thread ({e}); decoding here");
                workers::load_srs(self, workload);
            }
        }
    }
}

/// What the engine knows of a parameter set before decoding it (see [`Engine::preload_srs`]).
#[derive(Clone, Copy, Debug)]
pub struct SrsInfo {
    /// The class of the work that uses it (CRITICAL sets are kept from lower classes).
    pub class: Priority,
    /// Decoded bytes, if known (charged before the decode).
    pub bytes: Option<u64>,
    /// One partition's circuit, if known.
    pub shape: Option<CircuitShape>,
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
        // Why there is none (no driver, no device, emulation not asked for) is the error.
        crate::gpu::cuda::device::list()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|d| d.ordinal)
            .collect()
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
        let mut budget = Budget::new(config.memory_budget);
        // Checked before anything is allocated: a pool that cannot fit must be an error, not
        // an allocation failure that aborts the process.
        let planned = BufferSet::bytes_for(config.buffer_constraints)
            .and_then(|set| set.checked_mul(config.pool_buffers as u64));
        let memory = config::physical_memory();
        match planned {
            Some(bytes) if budget.fits(bytes) && bytes <= memory => {}
            _ => {
                return Err(EngineError::TooLarge(format!(
                    "a buffer pool of {} sets of {} constraints does not fit the {} byte budget \
                     and this machine's {memory} bytes of memory",
                    config.pool_buffers, config.buffer_constraints, config.memory_budget
                )))
            }
        }
        let pool: Vec<BufferSet> = (0..config.pool_buffers)
            .map(|_| backend.alloc_buffers(config.buffer_constraints))
            .collect();
        let pool_bytes: u64 = pool.iter().map(|b| b.capacity_bytes() as u64).sum();
        let largest_set_bytes = pool.iter().map(|b| b.capacity_bytes() as u64).max();
        let largest_set_bytes = largest_set_bytes.unwrap_or(0);
        if !budget.fits(pool_bytes) {
            return Err(EngineError::TooLarge(format!(
                "the buffer pool ({pool_bytes} bytes) exceeds the {} byte budget",
                config.memory_budget
            )));
        }
        budget.charge(pool_bytes);
        let lanes = backend.lanes();
        let state = State {
            closed: false,
            next_job: 1,
            jobs: HashMap::new(),
            unclaimed: Default::default(),
            prove_queue: Default::default(),
            finishing: (0..lanes).map(|_| Default::default()).collect(),
            pool_total: pool.len(),
            pool,
            largest_set_bytes,
            pool_bytes,
            budget,
            srs: HashMap::new(),
            srs_loading: HashMap::new(),
            srs_sizes: HashMap::new(),
            shapes: HashMap::new(),
            partition_times: HashMap::new(),
            lookahead: config.lookahead,
            affinity: Duration::from_secs(config.affinity_secs),
            critical: HashMap::new(),
            critical_synthesizing: 0,
            critical_starting: 0,
            counters: Counters::default(),
            busy_ms: Default::default(),
            trash: Vec::new(),
            trash_bytes: 0,
        };
        let inner = Arc::new(Inner {
            state: Mutex::new(state),
            work_cv: Condvar::new(),
            prove_cv: Condvar::new(),
            finish_cv: Condvar::new(),
            done_cv: Condvar::new(),
            loaders: Mutex::new(Vec::new()),
            pin_grown_buffers: std::sync::atomic::AtomicBool::new(backend.prefers_pinned()),
            backend,
            config: config.clone(),
            opened: Instant::now(),
        });
        inner
            .backend
            .set_host_memory(Arc::new(host_memory::EngineBudget(Arc::downgrade(&inner))));
        let engine = Self {
            inner: Arc::clone(&inner),
            threads: Mutex::new(Vec::new()),
        };
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| -> Result<(), EngineError> {
            let handle = std::thread::Builder::new()
                .name(format!("cuzk-{name}"))
                .spawn(f)
                .map_err(|e| EngineError::Invalid(format!("cannot start thread {name}: {e}")))?;
            engine
                .threads
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(handle);
            Ok(())
        };
        // Per lane (device): its share of the finalizers, plus one kept for CRITICAL work, so
        // a WinningPoSt never waits behind a lower class's `prove_finish`.
        let per_lane = (config.prover_workers / lanes).max(1);
        for lane in 0..lanes {
            for k in 0..=per_lane {
                let i = lane * per_lane + k;
                let (name, serves) = match k {
                    _ if k == per_lane => (format!("finalizer-critical-{lane}"), Serves::Critical),
                    _ if i == 0 => ("finalizer".to_string(), Serves::All),
                    _ => (format!("finalizer-{i}"), Serves::All),
                };
                let inner = Arc::clone(&inner);
                let thread_name = name.clone();
                spawn(
                    thread_name,
                    Box::new(move || workers::finalizer(inner, name, lane, serves)),
                )?;
            }
        }
        // The synthesis workers, plus one kept for CRITICAL work.
        for i in 0..=config.synthesis_workers {
            let (name, serves) = if i == config.synthesis_workers {
                ("synth-critical".to_string(), Serves::Critical)
            } else {
                (format!("synth-{i}"), Serves::All)
            };
            let inner = Arc::clone(&inner);
            spawn(
                name.clone(),
                Box::new(move || workers::synthesis_worker(inner, name, serves)),
            )?;
        }
        // The prover workers, plus one kept for CRITICAL work.
        for i in 0..=config.prover_workers {
            let (name, serves) = if i == config.prover_workers {
                ("prover-critical".to_string(), Serves::Critical)
            } else {
                (format!("prover-{i}"), Serves::All)
            };
            let inner = Arc::clone(&inner);
            spawn(
                name.clone(),
                Box::new(move || workers::prover_worker(inner, name, serves)),
            )?;
        }
        Ok(engine)
    }

    /// Queues a job; its partitions are scheduled by (priority, submission order, partition).
    /// A job that can never fit the memory budget (its parameters and one partition beside
    /// the pool and what is held back for CRITICAL work) is refused here with `TooLarge`.
    pub fn submit(&self, workload: Arc<dyn Workload>) -> Result<JobId, EngineError> {
        let partitions = workload.partitions();
        if partitions == 0 {
            return Err(EngineError::Invalid(
                "a job needs at least one partition".into(),
            ));
        }
        let key = workload.srs_key();
        let priority = workload.priority();
        let info = SrsInfo {
            class: priority,
            bytes: workload.srs_size_hint(),
            shape: workload.circuit_shape(),
        };
        let mut st = self.inner.lock();
        if st.closed {
            return Err(EngineError::Closed);
        }
        self.learn(&mut st, &key, &info);
        if let Some(why) = self.never_fits(&st, priority, &key) {
            drop(st);
            return Err(EngineError::TooLarge(why));
        }
        let id = JobId(st.next_job);
        st.next_job += 1;
        st.jobs.insert(
            id,
            JobState {
                kind: workload.kind(),
                srs_key: key,
                workload: Some(workload),
                priority,
                queued: (0..partitions).collect(),
                proofs: vec![None; partitions],
                remaining: partitions,
                in_flight: 0,
                outcome: None,
                submitted: Instant::now(),
                started: false,
                timings: JobTimings::default(),
                released: false,
            },
        );
        self.inner.unlock(st);
        Ok(id)
    }

    /// Records what is known of a parameter set before its decode: its size, its partition
    /// shape, and whether CRITICAL work uses it (then its partition is held back for).
    fn learn(&self, st: &mut State, key: &str, info: &SrsInfo) {
        if let (false, Some(bytes)) = (st.srs_sizes.contains_key(key), info.bytes) {
            // Until the first decode measures it, the hint stands in for the size.
            st.srs_sizes.insert(key.to_string(), bytes);
        }
        if let (false, Some(shape)) = (st.shapes.contains_key(key), info.shape) {
            st.shapes.insert(key.to_string(), shape);
        }
        if info.class == Priority::Critical {
            let held = st.shapes.get(key).map_or(0, |s| {
                schedule::partition_charge(s, self.inner.backend.transient_bytes(s)) + s.set_bytes()
            });
            st.critical.insert(key.to_string(), held);
        }
    }

    /// Why work of `class` on parameters `key` can never fit, if it cannot (sizes known so far).
    fn never_fits(&self, st: &State, class: Priority, key: &str) -> Option<String> {
        let srs_bytes = st.srs_sizes.get(key).copied()?;
        let need = st.shapes.get(key).map_or(0, |s| {
            schedule::partition_charge(s, self.inner.backend.transient_bytes(s))
                + st.least_growth_for(s.set_bytes())
        });
        schedule::never_fits(st, class, key, srs_bytes, need)
    }

    /// Waits for a job's verified proof (partition proofs concatenated), or its error. The
    /// result is handed out once; `timeout` None waits as long as it takes.
    pub fn await_job(&self, id: JobId, timeout: Option<Duration>) -> Result<Vec<u8>, EngineError> {
        self.await_with_timings(id, timeout).map(|(bytes, _)| bytes)
    }

    /// As [`Engine::await_job`], also returning the job's phase timings. Taking the result
    /// releases the job.
    pub fn await_with_timings(
        &self,
        id: JobId,
        timeout: Option<Duration>,
    ) -> Result<(Vec<u8>, JobTimings), EngineError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.inner.lock();
        loop {
            let job = st
                .jobs
                .get(&id)
                .filter(|j| !j.released)
                .ok_or(EngineError::UnknownJob(id.0))?;
            if !job.live() && job.in_flight == 0 {
                let job = st.jobs.remove(&id).expect("present");
                drop(st);
                let JobState {
                    outcome, timings, ..
                } = job;
                return outcome.expect("set").map(|b| (b, timings));
            }
            st = match deadline {
                None => self.inner.unlock_and_wait(&self.inner.done_cv, st, None),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(EngineError::Timeout(id.0));
                    }
                    self.inner
                        .unlock_and_wait(&self.inner.done_cv, st, Some(left))
                }
            };
        }
    }

    /// Submits and waits.
    pub fn prove(&self, workload: Arc<dyn Workload>) -> Result<Vec<u8>, EngineError> {
        let id = self.submit(workload)?;
        self.await_job(id, None)
    }

    /// Cancels a job: queued partitions are dropped at once and their buffers and memory go
    /// back; running partitions stop at their next step boundary and are discarded. Waiters
    /// get `Cancelled`.
    pub fn cancel(&self, id: JobId) -> Result<(), EngineError> {
        let mut st = self.inner.lock();
        if st.closed {
            return Err(EngineError::Closed);
        }
        if st.jobs.get(&id).is_none_or(|j| j.released) {
            return Err(EngineError::UnknownJob(id.0));
        }
        st.finish(id, Err(EngineError::Cancelled));
        self.inner.unlock(st);
        Ok(())
    }

    /// Releases a job its owner will not await (e.g. a caller whose context ended): a running
    /// job is cancelled, and its record and request are freed as soon as nothing of it is in
    /// flight. Later calls with its id return `UnknownJob`.
    pub fn release(&self, id: JobId) -> Result<(), EngineError> {
        let mut st = self.inner.lock();
        let Some(job) = st.jobs.get_mut(&id).filter(|j| !j.released) else {
            return Err(EngineError::UnknownJob(id.0));
        };
        job.released = true;
        st.finish(id, Err(EngineError::Cancelled));
        st.reap(id);
        self.inner.unlock(st);
        Ok(())
    }

    /// Loads a workload's SRS now so that the first proof does not pay for it.
    pub fn preload(&self, workload: &dyn Workload) -> Result<(), EngineError> {
        let info = SrsInfo {
            class: workload.priority(),
            bytes: workload.srs_size_hint(),
            shape: workload.circuit_shape(),
        };
        self.preload_srs(&workload.srs_key(), info, || workload.load_srs())
    }

    /// Makes the SRS `key` resident, decoding it with `load` (outside the lock) unless it
    /// already is or another thread is decoding it (then this waits for that decode). With a
    /// known size the memory is charged, evicting idle sets if needed, before the decode; a
    /// set that does not fit now is refused with `TooLarge`.
    pub fn preload_srs(
        &self,
        key: &str,
        info: SrsInfo,
        load: impl FnOnce() -> Result<Arc<crate::groth16::Srs>, String>,
    ) -> Result<(), EngineError> {
        let mut st = self.inner.lock();
        loop {
            if st.closed {
                return Err(EngineError::Closed);
            }
            if st.srs.contains_key(key) {
                self.learn(&mut st, key, &info);
                return Ok(());
            }
            if !st.srs_loading.contains_key(key) {
                break;
            }
            st = self.inner.unlock_and_wait(&self.inner.done_cv, st, None);
        }
        self.learn(&mut st, key, &info);
        if let Some(why) = self.never_fits(&st, info.class, key) {
            return Err(EngineError::TooLarge(why));
        }
        let bytes = st.srs_sizes.get(key).copied().unwrap_or(0);
        let keep = std::iter::once(key.to_string()).collect();
        let class = if st.critical.contains_key(key) {
            Priority::Critical
        } else {
            Priority::Normal
        };
        st.evict_for(bytes, class, &keep);
        if !st.budget.fits(bytes) {
            if st.trash_bytes > 0 {
                // Evicted sets are being freed: look again once they are.
                let (trash, freed) = st.take_trash();
                drop(st);
                self.inner.free(trash, freed);
                return self.preload_srs(key, info, load);
            }
            let used = st.budget.used;
            self.inner.unlock(st);
            return Err(EngineError::TooLarge(format!(
                "parameters {key} ({bytes} bytes) do not fit the budget now ({used} of {} bytes in use)",
                self.inner.config.memory_budget
            )));
        }
        st.budget.charge(bytes);
        st.srs_loading.insert(key.to_string(), bytes);
        self.inner.unlock(st);
        let loaded = catch_load(load);
        let mut st = self.inner.lock();
        let result = workers::install_srs(&mut st, key, loaded);
        self.inner.unlock(st);
        result
    }

    /// Drops a resident SRS if no partition uses it; returns whether it was evicted. The memory
    /// is freed after the engine lock is released.
    pub fn evict(&self, srs_key: &str) -> Result<bool, EngineError> {
        let mut st = self.inner.lock();
        if st.closed {
            return Err(EngineError::Closed);
        }
        let evicted = match st.srs.get(srs_key) {
            Some(r) if r.users == 0 => {
                let r = st.srs.remove(srs_key).expect("present");
                st.discard(Box::new(r.srs), r.bytes);
                true
            }
            _ => false,
        };
        self.inner.unlock(st);
        Ok(evicted)
    }

    /// A snapshot of queues, workers, pool, budget and counters.
    pub fn status(&self) -> Status {
        let st = self.inner.lock();
        let wall = self.inner.opened.elapsed().as_secs_f64() * 1e3;
        let classes = Priority::ALL
            .iter()
            .map(|&p| ClassStatus {
                class: p.name(),
                queued: st
                    .jobs
                    .values()
                    .filter(|j| j.priority == p)
                    .map(|j| j.queued.len())
                    .sum(),
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
            critical_memory_waits: st.counters.critical_memory_waits,
            budget_limit: st.budget.limit,
            budget_used: st.budget.used,
            budget_high_water: st.budget.high_water,
            srs_loading: st.srs_loading.keys().cloned().collect(),
            srs_resident: st
                .srs
                .iter()
                .map(|(k, r)| (k.clone(), r.bytes, r.users))
                .collect(),
            jobs_active: st.jobs.values().filter(|j| j.live()).count(),
            jobs_held: st.jobs.len(),
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

    /// Closes the engine: unfinished jobs fail with `Closed`, every thread it started
    /// (workers, finalizers, parameter loaders) is joined, the pool and all resident SRS are
    /// freed. Later calls return `Closed`. Idempotent.
    pub fn close(&self) {
        let mut st = self.inner.lock();
        st.closed = true;
        let ids: Vec<JobId> = st.jobs.keys().copied().collect();
        for id in ids {
            st.finish(id, Err(EngineError::Closed));
        }
        self.inner.unlock(st);
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
        let loaders =
            std::mem::take(&mut *self.inner.loaders.lock().unwrap_or_else(|e| e.into_inner()));
        for t in loaders {
            let _ = t.join();
        }
        let mut st = self.inner.lock();
        // Everything still held goes to the trash and is freed after the lock is released.
        let pool = std::mem::take(&mut st.pool);
        st.pool_bytes = 0;
        let srs = std::mem::take(&mut st.srs);
        let queued = std::mem::take(&mut st.prove_queue);
        let finishing: Vec<_> = st.finishing.iter_mut().map(std::mem::take).collect();
        st.trash.push(Box::new(pool));
        st.trash.push(Box::new(srs));
        st.trash.push(Box::new(queued));
        st.trash.push(Box::new(finishing));
        st.srs_loading.clear();
        for job in st.jobs.values_mut() {
            job.in_flight = 0;
        }
        let ids: Vec<JobId> = st.jobs.keys().copied().collect();
        for id in ids {
            st.reap(id);
        }
        st.budget.used = 0;
        self.inner.unlock(st);
    }
}

/// Runs a parameter decode, turning a panic into an error.
fn catch_load(
    load: impl FnOnce() -> Result<Arc<crate::groth16::Srs>, String>,
) -> Result<Arc<crate::groth16::Srs>, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(load)).unwrap_or_else(|p| {
        Err(format!(
            "decode panicked: {}",
            crate::panics::panic_message(&*p)
        ))
    })
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.close();
    }
}
