//! The engine's threads: synthesis workers (CPU), prover workers (`prove_start` on the
//! backend), finalizers (`prove_finish`, assembly, verification; a queue per device) and
//! parameter loaders. Each stage takes the highest class first; one synthesis worker, one
//! prover worker and one finalizer per device serve only CRITICAL work, so it never waits
//! behind a lower class's synthesis, `prove_start` or `prove_finish`. Heavy work and large
//! frees run outside the state lock.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use log::debug;

use super::schedule::{critical_coming, pick, Pick, Picked};
use super::state::{Finishing, Resident, State, Synthesized};
use super::workload::{Priority, Workload};
use super::{EngineError, Inner};
use crate::groth16::{BufferSet, CircuitShape, Randomness, Srs, PROOF_BYTES};
use crate::panics::panic_message;

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Which work a thread takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Serves {
    /// Any class, highest first.
    All,
    /// CRITICAL work only (kept free for it).
    Critical,
}

/// A synthesis worker: takes the next partition (see [`pick`]) and synthesizes it into pool
/// buffers, or starts a parameter decode on a loader thread.
pub fn synthesis_worker(inner: Arc<Inner>, name: String, serves: Serves) {
    let aging = Duration::from_secs(inner.config.low_aging_secs);
    // Re-picks at least this often, so LOW work ages and a job deferred for parameter
    // affinity gets its turn even when nothing else happens.
    let affinity = Duration::from_secs(inner.config.affinity_secs);
    let tick = if affinity.is_zero() {
        aging
    } else {
        aging.min(affinity)
    }
    .max(Duration::from_millis(50));
    let transient = |s: &CircuitShape| inner.backend.transient_bytes(s);
    loop {
        let mut st = inner.lock();
        let picked = loop {
            if st.closed {
                return;
            }
            let mut failed = false;
            let p = pick(
                &mut st,
                &transient,
                aging,
                serves == Serves::Critical,
                &mut failed,
            );
            if failed {
                // A job failed (can never fit): its waiters and other workers must know.
                inner.notify_all();
            }
            if let Some(p) = p {
                break p;
            }
            st = inner.unlock_and_wait(&inner.work_cv, st, Some(tick));
        };
        // Frees what the pick evicted before this worker allocates anything.
        inner.unlock(st);
        match picked {
            Pick::LoadSrs(w) => inner.spawn_loader(w),
            Pick::Synthesize(p) => synthesize(&inner, &name, *p),
        }
    }
}

fn synthesize(inner: &Arc<Inner>, name: &str, picked: Picked) {
    let Picked {
        key,
        workload,
        srs,
        mut buffers,
        grow_to,
        charged,
    } = picked;
    let (id, k) = (key.1, key.2);
    let srs_key = workload.srs_key();
    if grow_to > 0 {
        // Charged at pick: the old set goes first, so the two never coexist.
        drop(buffers);
        buffers = inner.backend.alloc_buffers(grow_to);
    }
    let (buffers, repinned) = pinned_if_grown(inner, buffers);
    let capacity = buffers.capacity();
    let set_bytes = buffers.capacity_bytes() as u64;
    let t = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| workload.synthesize(k, buffers, &srs)))
        .unwrap_or_else(|p| Err(format!("panicked: {}", panic_message(&*p))));
    let synth_ms = ms_since(t);
    // What the workload attached to the parameters (read outside the lock).
    let attached = srs.pce_bytes() as u64;
    debug!(
        "SYNTH_TIMING job={} partition={k} kind={} synth_ms={synth_ms:.1}",
        id.0,
        workload.kind()
    );
    // A failed synthesis consumed its buffers: allocate the replacement before locking.
    let replacement = result
        .is_err()
        .then(|| inner.backend.alloc_buffers(capacity));
    let mut st = inner.lock();
    if repinned > 0 {
        st.pool_bytes += repinned;
        st.budget.charge(repinned);
        st.note_set_bytes(set_bytes);
    }
    *st.busy_ms.entry(name.to_string()).or_default() += synth_ms;
    charge_attached(&mut st, &srs_key, &srs, attached);
    if key.0 == Priority::Critical {
        st.critical_synthesizing -= 1;
    }
    if let Some(job) = st.jobs.get_mut(&id) {
        job.timings.synth_ms += synth_ms;
    }
    if result.is_ok() {
        st.partition_times
            .entry(srs_key.clone())
            .or_default()
            .note_synth(synth_ms);
    }
    match result {
        Err(e) => {
            st.return_buffers(replacement.expect("allocated on error"));
            st.partition_done(id, charged);
            st.finish(
                id,
                Err(EngineError::Failed(format!(
                    "{} partition {k}: synthesis failed: {e}",
                    workload.kind()
                ))),
            );
        }
        Ok(mut assignment) => {
            let grown = (assignment.buffer_set_bytes() as u64)
                .saturating_sub(BufferSet::bytes_for(capacity).unwrap_or(u64::MAX));
            if grown > 0 {
                // Only a circuit larger than its shape said (or without one) grows here.
                st.pool_bytes += grown;
                st.budget.charge(grown);
                st.note_set_bytes(assignment.buffer_set_bytes() as u64);
            }
            let shape = assignment.shape();
            let measured = shape.assignment_bytes() + inner.backend.transient_bytes(&shape);
            let charged = if measured > charged {
                // More than charged up front (no shape hint, or a wrong one): charge the rest
                // now, and the measured shape from now on.
                st.budget.charge(measured - charged);
                measured
            } else {
                charged
            };
            let known = st.shapes.get(&srs_key).copied().unwrap_or_default();
            if shape.domain() > known.domain()
                || shape.aux > known.aux
                || shape.inputs > known.inputs
            {
                st.shapes.insert(
                    srs_key.clone(),
                    CircuitShape {
                        constraints: shape.constraints.max(known.constraints),
                        inputs: shape.inputs.max(known.inputs),
                        aux: shape.aux.max(known.aux),
                    },
                );
            }
            if st.jobs.get(&id).is_some_and(|j| j.live()) {
                st.prove_queue.insert(
                    key,
                    Synthesized {
                        assignment,
                        srs,
                        charged,
                    },
                );
            } else {
                // Cancelled meanwhile: stop here and give everything back.
                let buffers = assignment.take_buffers();
                st.return_buffers(buffers);
                drop(srs); // before the use count drops (see `State::finish`)
                st.trash.push(Box::new(assignment));
                st.partition_dropped(id, charged);
            }
        }
    }
    inner.unlock(st);
}

/// Charges what a synthesis attached to its resident parameter set (a PCE built on first use)
/// to the budget and to the set, so eviction gives it back and a reload is sized with it.
fn charge_attached(st: &mut State, srs_key: &str, srs: &Arc<Srs>, attached: u64) {
    let Some(r) = st.srs.get_mut(srs_key) else {
        return;
    };
    if !Arc::ptr_eq(&r.srs, srs) {
        return;
    }
    let total = srs.byte_size() as u64 + attached;
    if total > r.bytes {
        let extra = total - r.bytes;
        r.bytes = total;
        st.budget.charge(extra);
        st.srs_sizes.insert(srs_key.to_string(), total);
        debug!("parameters {srs_key}: {extra} bytes attached by synthesis charged");
    }
}

/// For a backend that prefers pinned memory: pool buffers that grew on the heap during a
/// synthesis of unknown shape are replaced by pinned ones of the same size, here on a
/// synthesis thread, off the GPU's path. Returns the buffers and the bytes they hold beyond
/// the ones they replace (to charge to the pool and the budget).
fn pinned_if_grown(inner: &Inner, buffers: BufferSet) -> (BufferSet, u64) {
    use std::sync::atomic::Ordering;
    let capacity = buffers.capacities().into_iter().max().unwrap_or(0);
    if buffers.is_pinned() || capacity == 0 || !inner.pin_grown_buffers.load(Ordering::Relaxed) {
        return (buffers, 0);
    }
    let old_bytes = buffers.capacity_bytes();
    drop(buffers);
    let pinned = inner.backend.alloc_buffers(capacity);
    if pinned.is_pinned() {
        debug!("pool buffers of {capacity} constraints moved to pinned memory");
    } else {
        log::warn!("cannot pin pool buffers; they stay in pageable memory");
        inner.pin_grown_buffers.store(false, Ordering::Relaxed);
    }
    let extra = pinned.capacity_bytes().saturating_sub(old_bytes);
    (pinned, extra as u64)
}

/// A prover worker: runs `prove_start` on the next synthesized partition (highest class
/// first), returns its buffers to the pool and queues the rest for the finalizers of the
/// partition's lane (device), ordered by class. One worker serves CRITICAL work only, so a
/// WinningPoSt never waits for a lower class's `prove_start`, which can be long (a CPU
/// prover's whole proof; on a GPU, a wait for device memory while two partitions fill it).
pub fn prover_worker(inner: Arc<Inner>, name: String, serves: Serves) {
    loop {
        let (key, synthesized, kind) = {
            let mut st = inner.lock();
            loop {
                if st.closed {
                    return;
                }
                let next = st.prove_queue.first_key_value().map(|(k, _)| k.0);
                let held_for_critical = next != Some(Priority::Critical)
                    && (serves == Serves::Critical || critical_coming(&st));
                if let (Some(_), false) = (next, held_for_critical) {
                    let (key, s) = st.prove_queue.pop_first().expect("checked");
                    let kind = st.jobs.get(&key.1).map(|j| j.kind.clone());
                    if key.0 == Priority::Critical {
                        st.critical_starting += 1;
                    }
                    break (key, s, kind.unwrap_or_default());
                }
                st = inner.unlock_and_wait(&inner.prove_cv, st, None);
            }
        };
        let Synthesized {
            assignment,
            srs,
            charged,
        } = synthesized;
        let capacity = assignment.abc.a.capacity();
        let randomness = Randomness::random(&mut rand::rngs::OsRng);
        let t = Instant::now();
        let started = catch_unwind(AssertUnwindSafe(|| {
            inner.backend.start(assignment, &srs, randomness)
        }));
        drop(srs);
        let start_ms = ms_since(t);
        debug!(
            "GPU_TIMING job={} partition={} kind={kind} backend={} prove_start_ms={start_ms:.1}",
            key.1 .0,
            key.2,
            inner.backend.name()
        );
        let failure = match started {
            Ok(Ok((pending, released))) => {
                let lane = inner.backend.lane(&pending);
                let mut st = inner.lock();
                st.critical_starting -= usize::from(key.0 == Priority::Critical);
                *st.busy_ms.entry(name.clone()).or_default() += start_ms;
                st.return_buffers(released);
                if st.jobs.get(&key.1).is_some_and(|j| j.live()) && !st.closed {
                    let lane = lane.min(st.finishing.len() - 1);
                    st.finishing[lane].insert(
                        key,
                        Finishing {
                            pending,
                            charged,
                            start_ms,
                        },
                    );
                } else {
                    st.trash.push(Box::new(pending));
                    st.partition_dropped(key.1, charged);
                }
                inner.unlock(st);
                continue;
            }
            Ok(Err(e)) => e.to_string(),
            Err(p) => format!("panicked: {}", panic_message(&*p)),
        };
        let replacement = inner.backend.alloc_buffers(capacity);
        let mut st = inner.lock();
        st.critical_starting -= usize::from(key.0 == Priority::Critical);
        *st.busy_ms.entry(name.clone()).or_default() += start_ms;
        st.return_buffers(replacement);
        st.partition_done(key.1, charged);
        st.finish(
            key.1,
            Err(EngineError::Failed(format!(
                "{kind} partition {}: prove_start: {failure}",
                key.2
            ))),
        );
        inner.unlock(st);
    }
}

/// A finalizer of one lane: `prove_finish` of the highest-class partition waiting there,
/// collection in partition order, verification, wake-up. Partitions of jobs that ended
/// (cancelled, failed) are dropped without finishing.
pub fn finalizer(inner: Arc<Inner>, name: String, lane: usize, serves: Serves) {
    loop {
        let (key, finishing, workload) = {
            let mut st = inner.lock();
            loop {
                let next = st.finishing[lane]
                    .first_key_value()
                    .map(|(k, _)| *k)
                    .filter(|k| serves == Serves::All || k.0 == Priority::Critical);
                if let Some(key) = next {
                    let f = st.finishing[lane].remove(&key).expect("present");
                    let workload = st
                        .jobs
                        .get(&key.1)
                        .filter(|j| j.live())
                        .and_then(|j| j.workload.clone());
                    break (key, f, workload);
                }
                if st.closed {
                    return;
                }
                st = inner.unlock_and_wait(&inner.finish_cv, st, None);
            }
        };
        let (id, k) = (key.1, key.2);
        let Some(workload) = workload else {
            // Ended meanwhile: nothing more to do for it.
            let mut st = inner.lock();
            st.trash.push(Box::new(finishing.pending));
            st.partition_dropped(id, finishing.charged);
            inner.unlock(st);
            continue;
        };
        let Finishing {
            pending,
            charged,
            start_ms,
        } = finishing;
        let t = Instant::now();
        let finished = catch_unwind(AssertUnwindSafe(|| inner.backend.finish(pending)))
            .unwrap_or_else(|p| {
                Err(crate::groth16::Groth16Error::ShapeMismatch(format!(
                    "prove_finish panicked: {}",
                    panic_message(&*p)
                )))
            });
        let fin_ms = ms_since(t);
        debug!(
            "FIN_TIMING job={} partition={k} prove_finish_ms={fin_ms:.1}",
            id.0
        );
        let mut to_verify = None;
        {
            let mut st = inner.lock();
            *st.busy_ms.entry(name.clone()).or_default() += fin_ms;
            if finished.is_ok() {
                st.partition_times
                    .entry(workload.srs_key())
                    .or_default()
                    .note_prove(start_ms + fin_ms);
            }
            if let Some(job) = st.jobs.get_mut(&id) {
                job.timings.prove_ms += start_ms + fin_ms;
                if job.live() {
                    match finished {
                        Ok(proof) => {
                            if job.proofs[k].replace(proof.to_bytes()).is_none() {
                                job.remaining -= 1;
                            }
                            if job.remaining == 0 {
                                let bytes: Vec<u8> = job
                                    .proofs
                                    .iter()
                                    .flat_map(|p| p.expect("all partitions proved"))
                                    .collect();
                                debug_assert_eq!(bytes.len(), job.proofs.len() * PROOF_BYTES);
                                to_verify = Some(bytes);
                            }
                        }
                        Err(e) => {
                            let kind = job.kind.clone();
                            st.finish(
                                id,
                                Err(EngineError::Failed(format!(
                                    "{kind} partition {k}: prove_finish: {e}"
                                ))),
                            );
                        }
                    }
                }
            }
            if to_verify.is_none() {
                st.partition_done(id, charged);
            } else {
                // The last partition stays in flight until the verdict, so the job's record
                // and workload stay while it is verified.
                st.budget.release(charged);
            }
            inner.unlock(st);
        }
        if let Some(bytes) = to_verify {
            let t = Instant::now();
            let verdict = catch_unwind(AssertUnwindSafe(|| workload.finish(bytes)))
                .unwrap_or_else(|p| Err(format!("verifier panicked: {}", panic_message(&*p))));
            let verify_ms = ms_since(t);
            let mut st = inner.lock();
            *st.busy_ms.entry(name.clone()).or_default() += verify_ms;
            if let Some(job) = st.jobs.get_mut(&id) {
                job.timings.verify_ms = verify_ms;
            }
            let outcome = verdict
                .map_err(|e| EngineError::Failed(format!("{} self-check: {e}", workload.kind())));
            st.finish(id, outcome);
            st.partition_done(id, 0);
            inner.unlock(st);
            if inner.config.malloc_trim {
                trim();
            }
        }
        drop(workload);
    }
}

/// Decodes a parameter set (on a loader thread) and makes it resident, or fails the jobs that
/// need it.
pub fn load_srs(inner: &Inner, workload: Arc<dyn Workload>) {
    let key = workload.srs_key();
    let t = Instant::now();
    let loaded = catch_unwind(AssertUnwindSafe(|| workload.load_srs()))
        .unwrap_or_else(|p| Err(panic_message(&*p)));
    let mut st = inner.lock();
    let _ = install_srs(&mut st, &key, loaded);
    debug!("SRS {key} decoded in {:.1} ms", ms_since(t));
    *st.busy_ms.entry("srs-load".into()).or_default() += ms_since(t);
    inner.unlock(st);
}

/// Ends the decode of parameter set `key`: the bytes charged ahead of it (a size hint) are
/// replaced by the measured size and the set becomes resident; on failure, or when it can
/// never fit, the jobs that need it fail. Large frees go to the trash.
pub fn install_srs(
    st: &mut State,
    key: &str,
    loaded: Result<Arc<Srs>, String>,
) -> Result<(), EngineError> {
    // The bytes charged ahead of the decode stay charged until the decoded set is resident
    // or freed.
    let reserved = st.srs_loading.remove(key).unwrap_or(0);
    let needing: Vec<_> = st
        .jobs
        .iter()
        .filter(|(_, j)| j.live() && j.srs_key == key)
        .map(|(id, _)| *id)
        .collect();
    let srs = match loaded {
        Err(e) => {
            st.budget.release(reserved);
            let error = EngineError::Failed(format!("loading parameters {key}: {e}"));
            for id in needing {
                st.finish(id, Err(error.clone()));
            }
            return Err(error);
        }
        Ok(srs) => srs,
    };
    if st.closed {
        st.discard(Box::new(srs), reserved);
        return Err(EngineError::Closed);
    }
    if st.srs.contains_key(key) {
        st.discard(Box::new(srs), reserved);
        return Ok(());
    }
    let bytes = srs.byte_size() as u64;
    st.srs_sizes.insert(key.to_string(), bytes);
    // A workload without a shape hint is charged the largest circuit its parameters prove.
    if !st.shapes.contains_key(key) {
        st.shapes.insert(key.to_string(), srs.circuit_shape());
    }
    if bytes + st.pool_bytes > st.budget.limit {
        let error = EngineError::TooLarge(format!(
            "parameters {key} need {bytes} bytes; with the pool ({}) they can never fit the {} byte budget",
            st.pool_bytes, st.budget.limit
        ));
        for id in needing {
            st.finish(id, Err(error.clone()));
        }
        st.discard(Box::new(srs), reserved);
        return Err(error);
    }
    let class = if st.critical.contains_key(key) {
        Priority::Critical
    } else {
        Priority::Normal
    };
    st.budget.release(reserved);
    let keep = std::iter::once(key.to_string()).collect();
    st.evict_for(bytes, class, &keep);
    // Without a size hint the first decode is measured only now; it is charged even if that
    // exceeds the budget for a while (a hint or `preload` avoids it).
    st.budget.charge(bytes);
    st.srs.insert(
        key.to_string(),
        Resident {
            srs,
            bytes,
            users: 0,
            last_used: Instant::now(),
            loaded_at: Instant::now(),
        },
    );
    debug!("SRS {key} resident ({} MiB)", bytes >> 20);
    Ok(())
}

#[cfg(target_os = "linux")]
fn trim() {
    // SAFETY: malloc_trim only returns free heap memory to the OS; called outside every lock.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(target_os = "linux"))]
fn trim() {}
