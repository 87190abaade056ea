//! Which partition a synthesis worker takes next, and what it must charge first: the one
//! scheduling decision of the engine, made under the state lock from bookkeeping only.
//!
//! Jobs are considered highest class first (LOW work that waited longer than the aging time
//! counts as NORMAL), FIFO within a class, except that a job whose partitions take longer to
//! synthesize starts early enough for the provers not to wait for it, and that NORMAL and LOW
//! jobs whose parameters are not resident wait behind those whose are for a while after a set
//! was loaded ([`super::lookahead`]). A job that cannot proceed never blocks one that can: it
//! is skipped, but the memory it waits for is reserved, so lower classes only take what is left
//! over and the waiting job gets its turn as soon as running work drains. CRITICAL work has one
//! buffer set and one partition's memory held back for it, and its parameter sets are never
//! evicted for lower classes. A job that can never fit fails with `TooLarge`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::lookahead::{self, Candidate};
use super::state::{State, WorkKey};
use super::workload::{JobId, Priority, Workload};
use super::EngineError;
use crate::groth16::{BufferSet, CircuitShape, Srs};

/// What a synthesis worker does next.
pub enum Pick {
    /// Decode the parameter set of this workload (its bytes are already charged when known).
    LoadSrs(Arc<dyn Workload>),
    /// Synthesize one partition.
    Synthesize(Box<Picked>),
}

/// One partition picked for synthesis, with what was charged for it.
pub struct Picked {
    pub key: WorkKey,
    pub workload: Arc<dyn Workload>,
    pub srs: Arc<Srs>,
    pub buffers: BufferSet,
    /// Constraints the buffers must hold before synthesis (0: as they are).
    pub grow_to: usize,
    /// Bytes charged for the assignment and prover transients (released when the partition
    /// leaves the pipeline).
    pub charged: u64,
}

/// How a job stands this round.
enum Step {
    Go(Pick),
    /// Waits for `bytes` more memory (reserved against lower classes).
    Blocked(u64),
    /// Waits for something other than memory (a decode in progress, a buffer set).
    Waiting,
    /// Failed (can never fit); others may go now.
    Failed,
}

/// The class a job is scheduled in now: LOW work ages into NORMAL after `aging`.
pub fn effective_class(
    class: Priority,
    submitted: Instant,
    now: Instant,
    aging: Duration,
) -> Priority {
    if class == Priority::Low && now.saturating_duration_since(submitted) >= aging {
        Priority::Normal
    } else {
        class
    }
}

/// Bytes charged for one partition of `shape` besides its buffer set: the assignment and what
/// the prover allocates for it.
pub fn partition_charge(shape: &CircuitShape, transient: u64) -> u64 {
    shape.assignment_bytes() + transient
}

/// The scheduling decision. `critical_only` is set for the worker reserved for CRITICAL work.
/// Returns None when nothing can start now; `failed` is set when a job was failed (the caller
/// wakes waiters).
pub fn pick(
    st: &mut State,
    transient: &dyn Fn(&CircuitShape) -> u64,
    aging: Duration,
    critical_only: bool,
    failed: &mut bool,
) -> Option<Pick> {
    let order = start_order(st, aging);
    let mut reserved = 0u64;
    let mut keep = BTreeSet::new();
    for (class, id) in order {
        if critical_only && class != Priority::Critical {
            break;
        }
        match step(st, id, class, transient, reserved, &keep) {
            Step::Go(p) => return Some(p),
            Step::Blocked(bytes) => {
                if class == Priority::Critical {
                    st.counters.critical_memory_waits += 1;
                }
                reserved += bytes
            }
            Step::Waiting => {}
            Step::Failed => {
                *failed = true;
                continue;
            }
        }
        if let Some(j) = st.jobs.get(&id) {
            keep.insert(j.srs_key.clone());
        }
    }
    None
}

/// The jobs with partitions to start, highest class first; within a class in the order
/// [`lookahead::order`] gives (FIFO but for slower jobs started in time). CRITICAL work, and
/// every class with `lookahead = false`, stays FIFO.
fn start_order(st: &State, aging: Duration) -> Vec<(Priority, JobId)> {
    let now = Instant::now();
    let mut live: Vec<(Priority, JobId)> = st
        .jobs
        .iter()
        .filter(|(_, j)| j.live() && (!j.queued.is_empty() || j.in_flight > 0))
        .map(|(id, j)| (effective_class(j.priority, j.submitted, now, aging), *id))
        .collect();
    live.sort_unstable();
    let lanes = st.finishing.len();
    let mut order = Vec::with_capacity(live.len());
    for class_jobs in live.chunk_by(|a, b| a.0 == b.0) {
        let class = class_jobs[0].0;
        let candidates: Vec<Candidate> = class_jobs
            .iter()
            .map(|(_, id)| {
                let j = &st.jobs[id];
                Candidate {
                    id: *id,
                    queued: j.queued.len(),
                    in_flight: j.in_flight,
                    times: st
                        .partition_times
                        .get(&j.srs_key)
                        .and_then(|t| t.estimates()),
                    resident: st.srs.contains_key(&j.srs_key),
                }
            })
            .collect();
        let ids = if class == Priority::Critical || !st.lookahead {
            candidates
                .iter()
                .filter(|c| c.queued > 0)
                .map(|c| c.id)
                .collect()
        } else {
            // Jobs whose sets are not resident wait while the class's newest set is younger
            // than the affinity time; deadline work never waits for affinity.
            let newest_load = class_jobs
                .iter()
                .filter_map(|(_, id)| st.srs.get(&st.jobs[id].srs_key))
                .map(|r| r.loaded_at)
                .max();
            let hold = class >= Priority::Normal
                && newest_load.is_some_and(|t| now.saturating_duration_since(t) < st.affinity);
            lookahead::order(&candidates, lanes, hold)
        };
        order.extend(ids.into_iter().map(|id| (class, id)));
    }
    order
}

fn step(
    st: &mut State,
    id: JobId,
    class: Priority,
    transient: &dyn Fn(&CircuitShape) -> u64,
    reserved: u64,
    keep: &BTreeSet<String>,
) -> Step {
    let Some(job) = st.jobs.get(&id) else {
        return Step::Waiting;
    };
    let Some(workload) = job.workload.clone() else {
        return Step::Waiting;
    };
    let srs_key = job.srs_key.clone();
    let critical = class == Priority::Critical;
    // Memory lower classes must leave alone: CRITICAL headroom, then what higher waiting work
    // needs.
    let held_back = reserved + if critical { 0 } else { st.critical_headroom() };
    let mut keep_own = keep.clone();
    keep_own.insert(srs_key.clone());
    let shape = st.shapes.get(&srs_key).copied();
    let charge = shape.map_or(0, |s| partition_charge(&s, transient(&s)));

    // Parameters first.
    let resident = st.srs.contains_key(&srs_key);
    if !resident {
        if st.srs_loading.contains_key(&srs_key) {
            return Step::Waiting;
        }
        let bytes = st.srs_sizes.get(&srs_key).copied();
        if let Some(b) = bytes {
            let footprint = (b, charge);
            if let Err(step) = admit(st, id, class, &srs_key, footprint, b, held_back, &keep_own) {
                return step;
            }
        } else if !critical && !st.srs_loading.is_empty() {
            // Size unknown: one such decode at a time, charged when measured. CRITICAL work
            // never waits behind a lower class's decode (its sets are small and it has its
            // headroom): on a quiet node a NORMAL job's decode otherwise held up WinningPoSt
            // for as long as it ran.
            return Step::Waiting;
        }
        st.srs_loading.insert(srs_key, bytes.unwrap_or(0));
        return Step::Go(Pick::LoadSrs(workload));
    }

    // A buffer set (CRITICAL work may take the last one).
    let spare = if critical { 0 } else { st.critical_buffers() };
    if st.pool.len() <= spare {
        st.counters.pool_waits += 1;
        return Step::Waiting;
    }
    // Known once the parameters are resident (a hint, or the parameters' own size).
    let (shape, charge) = match shape {
        Some(s) => (s, charge),
        None => {
            let s = st.srs[&srs_key].srs.circuit_shape();
            st.shapes.insert(srs_key.clone(), s);
            (s, partition_charge(&s, transient(&s)))
        }
    };
    let srs_bytes = st.srs.get(&srs_key).map_or(0, |r| r.bytes);
    // The buffer set to use: the largest free one; grown to the domain if it is smaller.
    let slot = (0..st.pool.len())
        .max_by_key(|&i| st.pool[i].capacity_bytes())
        .expect("pool not empty");
    let have = st.pool[slot].capacity_bytes() as u64;
    let (grow_to, growth) = if have < shape.set_bytes() {
        (shape.domain(), shape.set_bytes() - have)
    } else {
        (0, 0)
    };
    let need = charge + growth;
    // Never fitting is judged against the largest set, which this partition can wait for.
    let least_need = charge + st.least_growth_for(shape.set_bytes());
    if let Err(step) = admit(
        st,
        id,
        class,
        &srs_key,
        (srs_bytes, least_need),
        need,
        held_back,
        &keep_own,
    ) {
        return step;
    }
    st.pool_bytes += growth;
    st.note_set_bytes(have + growth);
    let buffers = st.pool.swap_remove(slot);
    let resident = st.srs.get_mut(&srs_key).expect("checked resident");
    resident.users += 1;
    resident.last_used = Instant::now();
    let srs = Arc::clone(&resident.srs);
    let job = st.jobs.get_mut(&id).expect("checked present");
    let k = job.queued.pop_first().expect("has queued partitions");
    job.in_flight += 1;
    if !job.started {
        job.started = true;
        job.timings.queue_ms = job.submitted.elapsed().as_secs_f64() * 1e3;
    }
    let priority = job.priority;
    if priority == Priority::Critical {
        st.critical_synthesizing += 1;
    }
    st.counters.start_log.push((id, k));
    if st.counters.start_log.len() > 4096 {
        st.counters.start_log.drain(..2048);
    }
    Step::Go(Pick::Synthesize(Box::new(Picked {
        key: (priority, id, k),
        workload,
        srs,
        buffers,
        grow_to,
        charged: charge,
    })))
}

/// Charges `bytes` for job `id`, whose parameters and one partition take `footprint`
/// (set bytes, partition bytes): fails the job when that can never fit (`Step::Failed`), or
/// reports what it waits for when `bytes` do not fit now beside `held_back` (`Blocked`), or
/// while sets evicted for it are still being freed (`Waiting`). Sets in `keep` stay.
#[allow(clippy::too_many_arguments)]
fn admit(
    st: &mut State,
    id: JobId,
    class: Priority,
    srs_key: &str,
    footprint: (u64, u64),
    bytes: u64,
    held_back: u64,
    keep: &BTreeSet<String>,
) -> Result<(), Step> {
    if let Some(failure) = never_fits(st, class, srs_key, footprint.0, footprint.1) {
        st.finish(id, Err(EngineError::TooLarge(failure)));
        return Err(Step::Failed);
    }
    let free =
        (st.budget.limit + st.evictable(class, keep)).saturating_sub(st.budget.used + held_back);
    if bytes > free {
        return Err(Step::Blocked(bytes));
    }
    st.evict_for(bytes + held_back, class, keep);
    if !st.budget.fits(bytes + held_back) {
        return Err(Step::Waiting); // until the evicted sets are freed
    }
    st.budget.charge(bytes);
    Ok(())
}

/// Whether CRITICAL work is about to reach the provers or is in `prove_start`: a CRITICAL
/// partition is being synthesized or started, or one is queued and can be picked right now
/// (its parameters resident, a buffer set free, its memory available), so a synthesis worker
/// takes it at once. The provers then start no lower-class partition: a WinningPoSt waits for
/// at most the `prove_start` already running, and none started after it. A CRITICAL job that
/// cannot be picked now (waiting for memory that lower partitions hold) does not hold the
/// provers, so this can never deadlock.
pub fn critical_coming(st: &State) -> bool {
    if st.critical_synthesizing > 0 || st.critical_starting > 0 {
        return true;
    }
    // Only the first CRITICAL job in order: `pick` reaches it before any other, with nothing
    // reserved ahead of it, so these checks are exactly what its pick needs.
    let first = st
        .jobs
        .iter()
        .filter(|(_, j)| j.priority == Priority::Critical && j.live() && !j.queued.is_empty())
        .min_by_key(|(id, _)| **id);
    first.is_some_and(|(_, j)| {
        !st.pool.is_empty()
            && st.srs.contains_key(&j.srs_key)
            && st
                .budget
                .fits(st.critical.get(&j.srs_key).copied().unwrap_or(0))
    })
}

/// Why a job of `class` can never run (its parameters of `srs_bytes` plus `need` for one
/// partition do not fit beside the pool and what is held back from its class), if so.
pub fn never_fits(
    st: &State,
    class: Priority,
    srs_key: &str,
    srs_bytes: u64,
    need: u64,
) -> Option<String> {
    let held = if class == Priority::Critical || st.critical.contains_key(srs_key) {
        0
    } else {
        st.critical_headroom() + st.critical_resident()
    };
    let total = srs_bytes + need + st.pool_bytes + held;
    (total > st.budget.limit).then(|| {
        format!(
            "parameters {srs_key} ({srs_bytes} bytes) and one partition ({need} bytes) beside the buffer pool ({} bytes){} need {total} bytes, over the {} byte memory budget",
            st.pool_bytes,
            if held > 0 {
                format!(" and what is held back for CRITICAL work ({held} bytes)")
            } else {
                String::new()
            },
            st.budget.limit
        )
    })
}
