//! The engine's shared state, guarded by one mutex. Only bookkeeping happens under the lock:
//! no parsing, synthesis, proving, verification, file reading or large allocation.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use super::budget::Budget;
use super::workload::{JobId, Priority, Workload};
use super::EngineError;
use crate::groth16::{AbcBuffers, Assignment, Srs, PROOF_BYTES};

/// Unique, ordered key of one partition: class first, then submission order, then partition.
pub type WorkKey = (Priority, JobId, usize);

/// A synthesized partition waiting for a prover, with the bytes charged for it.
pub struct Synthesized {
    pub assignment: Assignment,
    pub charged: u64,
}

/// Per-phase time of one job, summed over partitions.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobTimings {
    /// Submit to the first partition's synthesis start.
    pub queue_ms: f64,
    /// Synthesis, all partitions.
    pub synth_ms: f64,
    /// prove_start + prove_finish, all partitions.
    pub prove_ms: f64,
    /// The final verification.
    pub verify_ms: f64,
}

/// One submitted job.
pub struct JobState {
    pub workload: Arc<dyn Workload>,
    pub priority: Priority,
    pub srs: Option<Arc<Srs>>,
    pub proofs: Vec<Option<[u8; PROOF_BYTES]>>,
    pub remaining: usize,
    pub in_flight: usize,
    pub outcome: Option<Result<Vec<u8>, EngineError>>,
    pub submitted: Instant,
    pub started: bool,
    pub timings: JobTimings,
}

/// A resident parameter set.
pub struct Resident {
    pub srs: Arc<Srs>,
    pub bytes: u64,
    pub users: usize,
    pub last_used: Instant,
}

/// Counters since open.
#[derive(Default)]
pub struct Counters {
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub pool_waits: u64,
    /// Order in which partitions started synthesis (the latest 2048 to 4096).
    pub start_log: Vec<(JobId, usize)>,
    /// Order in which jobs finished (the latest 2048 to 4096).
    pub finish_log: Vec<JobId>,
}

/// Everything the workers share.
pub struct State {
    pub closed: bool,
    pub next_job: u64,
    pub synth_queue: BTreeSet<WorkKey>,
    pub prove_queue: BTreeMap<WorkKey, Synthesized>,
    pub jobs: HashMap<JobId, JobState>,
    pub pool: Vec<AbcBuffers>,
    pub pool_total: usize,
    pub pool_bytes: u64,
    pub budget: Budget,
    pub srs: HashMap<String, Resident>,
    /// Evicted parameter sets waiting to be dropped outside the lock.
    pub evicted: Vec<Arc<Srs>>,
    pub srs_loading: BTreeSet<String>,
    /// Measured decoded size of every SRS loaded since open (for admission at submit).
    pub srs_sizes: HashMap<String, u64>,
    /// Measured bytes of one synthesized partition (inputs, aux, densities) per SRS key.
    pub partition_bytes: HashMap<String, u64>,
    /// SRS keys whose first partition is being synthesized (size not measured yet): only one
    /// such partition runs at a time, so unmeasured work cannot pile up past the budget.
    pub measuring: BTreeSet<String>,
    pub counters: Counters,
    /// Busy milliseconds per worker name.
    pub busy_ms: BTreeMap<String, f64>,
}

impl State {
    /// Records a job's outcome (once), releases what it holds, and counts it.
    pub fn finish(&mut self, id: JobId, outcome: Result<Vec<u8>, EngineError>) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.outcome.is_some() {
            return;
        }
        match &outcome {
            Ok(_) => self.counters.completed += 1,
            Err(EngineError::Cancelled) => self.counters.cancelled += 1,
            Err(_) => self.counters.failed += 1,
        }
        job.outcome = Some(outcome);
        self.counters.finish_log.push(id);
        if self.counters.finish_log.len() > 4096 {
            self.counters.finish_log.drain(..2048);
        }
        if job.srs.take().is_some() {
            if let Some(r) = self.srs.get_mut(&job.workload.srs_key()) {
                r.users = r.users.saturating_sub(1);
                r.last_used = Instant::now();
            }
        }
        let keys: Vec<WorkKey> = self
            .synth_queue
            .iter()
            .filter(|k| k.1 == id)
            .copied()
            .collect();
        for k in keys {
            self.synth_queue.remove(&k);
        }
        let queued: Vec<WorkKey> = self
            .prove_queue
            .keys()
            .filter(|k| k.1 == id)
            .copied()
            .collect();
        for k in queued {
            if let Some(s) = self.prove_queue.remove(&k) {
                self.budget.release(s.charged);
                self.return_buffers(s.assignment.abc);
            }
        }
    }

    /// Puts a buffer set back into the pool (contents discarded).
    pub fn return_buffers(&mut self, mut abc: AbcBuffers) {
        abc.clear();
        self.pool.push(abc);
    }

    /// Evicts idle resident SRS (least recently used first) until `bytes` more fit.
    ///
    /// Evicted parameter sets go to `self.evicted`: callers drop them after unlocking
    /// ([`State::take_evicted`]), since freeing gigabytes under the engine lock stalls every
    /// worker.
    pub fn evict_for(&mut self, bytes: u64) {
        while !self.budget.fits(bytes) {
            let victim = self
                .srs
                .iter()
                .filter(|(_, r)| r.users == 0)
                .min_by_key(|(_, r)| r.last_used)
                .map(|(k, _)| k.clone());
            let Some(key) = victim else { return };
            if let Some(r) = self.srs.remove(&key) {
                self.budget.release(r.bytes);
                log::debug!("evicted SRS {key} ({} MiB)", r.bytes >> 20);
                self.evicted.push(r.srs);
            }
        }
    }

    /// Parameter sets evicted since the last call, to be dropped outside the lock.
    pub fn take_evicted(&mut self) -> Vec<Arc<Srs>> {
        std::mem::take(&mut self.evicted)
    }
}
