//! The engine's shared state, guarded by one mutex. Only bookkeeping happens under the lock:
//! no parsing, synthesis, proving, verification, file reading, large allocation or large free
//! (what must be freed goes to [`State::trash`] and is dropped after the lock is released).

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use super::backend::ErasedPending;
use super::budget::Budget;
use super::lookahead::TimeEstimates;
use super::workload::{JobId, Priority, Workload};
use super::EngineError;
use crate::groth16::{Assignment, BufferSet, CircuitShape, Srs, PROOF_BYTES};

/// Unique, ordered key of one partition: class first, then submission order, then partition.
pub type WorkKey = (Priority, JobId, usize);

/// A synthesized partition waiting for a prover, with its parameters and the bytes charged
/// for it (assignment and prover transients, released when it is finished or dropped).
pub struct Synthesized {
    pub assignment: Assignment,
    pub srs: Arc<Srs>,
    pub charged: u64,
}

/// A partition between `prove_start` and `prove_finish`.
pub struct Finishing {
    pub pending: ErasedPending,
    pub charged: u64,
    pub start_ms: f64,
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

/// One submitted job. Once it has ended and nothing of it is in flight, its workload (the
/// parsed request, tens of MB at 32 GiB) is dropped; the small record stays until the outcome
/// is taken by `await` or the job is released.
pub struct JobState {
    /// The request; None once the job ended and its in-flight work drained.
    pub workload: Option<Arc<dyn Workload>>,
    pub kind: String,
    pub srs_key: String,
    pub priority: Priority,
    /// Partitions not yet picked for synthesis.
    pub queued: BTreeSet<usize>,
    pub proofs: Vec<Option<[u8; PROOF_BYTES]>>,
    pub remaining: usize,
    /// Partitions picked and not yet finished or dropped (each holds a user of the SRS).
    pub in_flight: usize,
    pub outcome: Option<Result<Vec<u8>, EngineError>>,
    pub submitted: Instant,
    pub started: bool,
    pub timings: JobTimings,
    /// Released by its owner: the record goes as soon as nothing of it is in flight.
    pub released: bool,
}

impl JobState {
    /// Whether the job still wants work done.
    pub fn live(&self) -> bool {
        self.outcome.is_none()
    }
}

/// A resident parameter set.
pub struct Resident {
    pub srs: Arc<Srs>,
    pub bytes: u64,
    /// Partitions in flight that use it (picked and not yet finished); 0 means evictable.
    pub users: usize,
    pub last_used: Instant,
    /// When it became resident (parameter affinity counts from the newest load).
    pub loaded_at: Instant,
}

/// Counters since open.
#[derive(Default)]
pub struct Counters {
    pub completed: u64,
    pub failed: u64,
    pub cancelled: u64,
    pub pool_waits: u64,
    /// Times a CRITICAL job had to wait for memory (0 when its headroom works).
    pub critical_memory_waits: u64,
    /// Order in which partitions started synthesis (the latest 2048 to 4096).
    pub start_log: Vec<(JobId, usize)>,
    /// Order in which jobs finished (the latest 2048 to 4096).
    pub finish_log: Vec<JobId>,
}

/// Everything the workers share.
pub struct State {
    pub closed: bool,
    pub next_job: u64,
    pub jobs: HashMap<JobId, JobState>,
    /// Ended jobs whose outcome nobody took yet, oldest first (their records are dropped
    /// beyond [`MAX_UNCLAIMED`], so a caller that never awaits cannot grow the map forever).
    pub unclaimed: VecDeque<JobId>,
    pub prove_queue: BTreeMap<WorkKey, Synthesized>,
    /// Per lane (device), partitions waiting for `prove_finish`, highest class first.
    pub finishing: Vec<BTreeMap<WorkKey, Finishing>>,
    pub pool: Vec<BufferSet>,
    pub pool_total: usize,
    pub pool_bytes: u64,
    /// The largest buffer set in the pool, free or in use (sets only grow): a partition whose
    /// set fits it can always wait for that set, so only the excess over it can make work
    /// never fit.
    pub largest_set_bytes: u64,
    pub budget: Budget,
    pub srs: HashMap<String, Resident>,
    /// Parameter sets being decoded, with the bytes charged for them ahead of the decode.
    pub srs_loading: HashMap<String, u64>,
    /// Decoded size of each parameter set: a hint until the first decode measures it.
    pub srs_sizes: HashMap<String, u64>,
    /// Partition shape per SRS key: the workload's hint until a synthesis measures it.
    pub shapes: HashMap<String, CircuitShape>,
    /// Measured synthesis and prove times per SRS key (see [`super::lookahead`]).
    pub partition_times: HashMap<String, TimeEstimates>,
    /// Whether [`super::lookahead`] orders jobs within a class (else FIFO).
    pub lookahead: bool,
    /// For how long after the newest load of a class's parameter sets jobs whose sets are not
    /// resident wait behind those whose are (NORMAL and LOW; see [`super::lookahead`]).
    pub affinity: std::time::Duration,
    /// SRS keys of CRITICAL work seen (submitted or preloaded), with one partition's charge:
    /// lower classes leave that much memory and one buffer set free, and never evict these
    /// parameter sets.
    pub critical: HashMap<String, u64>,
    /// CRITICAL partitions being synthesized (see `schedule::critical_coming`).
    pub critical_synthesizing: usize,
    /// CRITICAL partitions in `prove_start` now: the other provers start no lower-class
    /// partition meanwhile, so the CRITICAL one never queues behind a new one for the device.
    pub critical_starting: usize,
    pub counters: Counters,
    /// Busy milliseconds per worker name.
    pub busy_ms: BTreeMap<String, f64>,
    /// Things to drop after the lock is released (evicted parameter sets, dropped partitions,
    /// finished workloads): freeing gigabytes under the engine lock stalls every worker.
    pub trash: Vec<Box<dyn Any + Send>>,
    /// Bytes charged for what is in the trash: released only after it was freed, so what the
    /// budget says is held never falls below what is really allocated.
    pub trash_bytes: u64,
}

/// Ended jobs kept for an `await` that may still come; older ones are dropped.
pub const MAX_UNCLAIMED: usize = 4096;

impl State {
    /// Records a job's outcome (once), drops its queued and synthesized partitions and those
    /// waiting for `prove_finish` (their memory goes back), and counts it. Partitions running
    /// right now end at their next step boundary.
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
        job.queued.clear();
        self.counters.finish_log.push(id);
        if self.counters.finish_log.len() > 4096 {
            self.counters.finish_log.drain(..2048);
        }
        let queued: Vec<WorkKey> = self
            .prove_queue
            .keys()
            .filter(|k| k.1 == id)
            .copied()
            .collect();
        for k in queued {
            if let Some(s) = self.prove_queue.remove(&k) {
                let Synthesized {
                    mut assignment,
                    srs,
                    charged,
                } = s;
                let buffers = assignment.take_buffers();
                // Not the last reference (the set is resident while it has users): cheap, and
                // gone before the use count drops, so an eviction really frees the set.
                drop(srs);
                self.trash.push(Box::new(assignment));
                self.return_buffers(buffers);
                self.partition_dropped(id, charged);
            }
        }
        for lane in 0..self.finishing.len() {
            let waiting: Vec<WorkKey> = self.finishing[lane]
                .keys()
                .filter(|k| k.1 == id)
                .copied()
                .collect();
            for k in waiting {
                if let Some(f) = self.finishing[lane].remove(&k) {
                    self.trash.push(Box::new(f.pending));
                    self.partition_dropped(id, f.charged);
                }
            }
        }
        self.reap(id);
    }

    /// One partition of job `id` left the pipeline whose memory was put in the trash: as
    /// [`State::partition_done`], its charge released once the trash was freed.
    pub fn partition_dropped(&mut self, id: JobId, charged: u64) {
        self.trash_bytes += charged;
        self.partition_done(id, 0);
    }

    /// One partition of job `id` left the pipeline (its memory already freed): its charge
    /// and its use of the SRS go back; a job that ended and drained drops its workload.
    pub fn partition_done(&mut self, id: JobId, charged: u64) {
        self.budget.release(charged);
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        job.in_flight = job.in_flight.saturating_sub(1);
        if let Some(r) = self.srs.get_mut(&job.srs_key) {
            r.users = r.users.saturating_sub(1);
            r.last_used = Instant::now();
        }
        self.reap(id);
    }

    /// Drops what an ended job no longer needs once nothing of it is in flight: its workload
    /// (to the trash), and the whole record when it was released.
    pub fn reap(&mut self, id: JobId) {
        let Some(job) = self.jobs.get_mut(&id) else {
            return;
        };
        if job.live() || job.in_flight > 0 {
            return;
        }
        if let Some(w) = job.workload.take() {
            self.trash.push(Box::new(w));
            self.trash.push(Box::new(std::mem::take(&mut job.proofs)));
            self.unclaimed.push_back(id);
        }
        if job.released {
            self.jobs.remove(&id);
        }
        while self.unclaimed.len() > MAX_UNCLAIMED {
            if let Some(old) = self.unclaimed.pop_front() {
                self.jobs.remove(&old);
            }
        }
    }

    /// Puts a buffer set back into the pool (contents discarded).
    /// The pool's bytes that a partition needing a set of `set_bytes` adds at the least: the
    /// growth of the largest set, which it can always wait for.
    pub fn least_growth_for(&self, set_bytes: u64) -> u64 {
        set_bytes.saturating_sub(self.largest_set_bytes)
    }

    /// Records that one pool set now holds `set_bytes`.
    pub fn note_set_bytes(&mut self, set_bytes: u64) {
        self.largest_set_bytes = self.largest_set_bytes.max(set_bytes);
    }

    pub fn return_buffers(&mut self, mut buffers: BufferSet) {
        buffers.clear();
        self.pool.push(buffers);
    }

    /// Bytes of resident parameter sets that could be evicted now for work of `class`: idle,
    /// not in `keep`, and not a CRITICAL set unless `class` is CRITICAL.
    pub fn evictable(&self, class: Priority, keep: &BTreeSet<String>) -> u64 {
        self.srs
            .iter()
            .filter(|(k, r)| self.may_evict(k, r, class, keep))
            .map(|(_, r)| r.bytes)
            .sum()
    }

    fn may_evict(&self, key: &str, r: &Resident, class: Priority, keep: &BTreeSet<String>) -> bool {
        r.users == 0
            && !keep.contains(key)
            && (class == Priority::Critical || !self.critical.contains_key(key))
    }

    /// Evicts idle resident SRS (least recently used first, within what [`State::evictable`]
    /// allows) until `bytes` more fit. Evicted sets go to the trash.
    /// The memory goes back when the trash is freed: callers check `fits` again after that.
    pub fn evict_for(&mut self, bytes: u64, class: Priority, keep: &BTreeSet<String>) {
        while self.budget.used.saturating_sub(self.trash_bytes) + bytes > self.budget.limit {
            let victim = self
                .srs
                .iter()
                .filter(|(k, r)| self.may_evict(k, r, class, keep))
                .min_by_key(|(_, r)| r.last_used)
                .map(|(k, _)| k.clone());
            let Some(key) = victim else { return };
            if let Some(r) = self.srs.remove(&key) {
                log::debug!("evicted SRS {key} ({} MiB)", r.bytes >> 20);
                self.discard(Box::new(r.srs), r.bytes);
            }
        }
    }

    /// Bytes lower classes must leave free for CRITICAL work: one partition of the largest
    /// CRITICAL circuit seen.
    pub fn critical_headroom(&self) -> u64 {
        self.critical.values().copied().max().unwrap_or(0)
    }

    /// Buffer sets lower classes must leave in the pool for CRITICAL work.
    pub fn critical_buffers(&self) -> usize {
        usize::from(!self.critical.is_empty() && self.pool_total > 1)
    }

    /// Bytes of resident CRITICAL parameter sets (lower classes cannot evict them).
    pub fn critical_resident(&self) -> u64 {
        self.srs
            .iter()
            .filter(|(k, _)| self.critical.contains_key(*k))
            .map(|(_, r)| r.bytes)
            .sum()
    }

    /// Puts `thing`, charged `bytes`, in the trash: freed after the lock is released, and
    /// only then uncharged. Until then the budget still counts it, as the allocator does.
    pub fn discard(&mut self, thing: Box<dyn Any + Send>, bytes: u64) {
        self.trash.push(thing);
        self.trash_bytes += bytes;
    }

    /// Everything in the trash and the bytes charged for it, to free after unlocking and then
    /// release.
    pub fn take_trash(&mut self) -> (Vec<Box<dyn Any + Send>>, u64) {
        (
            std::mem::take(&mut self.trash),
            std::mem::take(&mut self.trash_bytes),
        )
    }
}
