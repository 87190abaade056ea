//! The engine's threads: synthesis workers (CPU), prover workers (`prove_start` on the
//! backend) and finalizers (`prove_finish`, assembly, verification; a queue per device).
//! Heavy work always runs outside the state lock.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use log::debug;

use super::backend::ErasedPending;
use super::state::{Resident, State, Synthesized, WorkKey};
use super::workload::Workload;
use super::{EngineError, Inner};
use crate::groth16::{AbcBuffers, Randomness, PROOF_BYTES};

/// A partition between `prove_start` and `prove_finish`.
pub struct Finishing {
    pub key: WorkKey,
    pub pending: ErasedPending,
    pub charged: u64,
    pub start_ms: f64,
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// What a synthesis worker picked under the lock.
enum Pick {
    LoadSrs(Arc<dyn Workload>),
    Synthesize {
        key: WorkKey,
        workload: Arc<dyn Workload>,
        buffers: AbcBuffers,
        charged: u64,
    },
}

fn pick(st: &mut State) -> Option<Pick> {
    let key = *st.synth_queue.first()?;
    let id = key.1;
    let job = st.jobs.get(&id)?;
    let workload = Arc::clone(&job.workload);
    let srs_key = workload.srs_key();
    if job.srs.is_none() {
        if let Some(r) = st.srs.get_mut(&srs_key) {
            r.users += 1;
            r.last_used = Instant::now();
            let srs = Arc::clone(&r.srs);
            st.jobs.get_mut(&id)?.srs = Some(srs);
        } else if !st.srs_loading.contains(&srs_key) {
            // A parameter set decoded before has a measured size: wait until it fits.
            if let Some(&bytes) = st.srs_sizes.get(&srs_key) {
                st.evict_for(bytes);
                if !st.budget.fits(bytes) {
                    return None;
                }
            }
            st.srs_loading.insert(srs_key);
            return Some(Pick::LoadSrs(workload));
        } else {
            return None; // another worker is loading it
        }
    }
    if st.pool.is_empty() {
        st.counters.pool_waits += 1;
        return None;
    }
    let measured = st.partition_bytes.get(&srs_key).copied();
    if measured.is_none() && st.measuring.contains(&srs_key) {
        return None; // wait for the first partition of this circuit to be measured
    }
    let estimate = measured.unwrap_or(0);
    // Idle parameter sets give way to partitions of jobs that are running (this job's own set
    // is in use, so it stays).
    st.evict_for(estimate);
    if !st.budget.fits(estimate) {
        let srs_bytes = st.srs.get(&srs_key).map_or(0, |r| r.bytes);
        if estimate + srs_bytes + st.pool_bytes > st.budget.limit {
            st.finish(
                id,
                Err(EngineError::TooLarge(format!(
                    "a {} partition needs {estimate} bytes besides the SRS ({srs_bytes}) and the pool ({}), over the {} byte budget",
                    workload.kind(),
                    st.pool_bytes,
                    st.budget.limit
                ))),
            );
        }
        return None;
    }
    st.synth_queue.remove(&key);
    if measured.is_none() {
        st.measuring.insert(srs_key);
    }
    let buffers = st.pool.pop().expect("checked non-empty");
    st.budget.charge(estimate);
    let job = st.jobs.get_mut(&id)?;
    job.in_flight += 1;
    if !job.started {
        job.started = true;
        job.timings.queue_ms = ms_since(job.submitted);
    }
    st.counters.start_log.push((id, key.2));
    if st.counters.start_log.len() > 4096 {
        st.counters.start_log.drain(..2048);
    }
    Some(Pick::Synthesize {
        key,
        workload,
        buffers,
        charged: estimate,
    })
}

/// Loads an SRS outside the lock and makes it resident (or fails the jobs that need it).
fn load_srs(inner: &Inner, workload: Arc<dyn Workload>) {
    let key = workload.srs_key();
    let t = Instant::now();
    let loaded = catch_unwind(AssertUnwindSafe(|| workload.load_srs()))
        .unwrap_or_else(|p| Err(panic_message(p)));
    let mut st = inner.lock();
    st.srs_loading.remove(&key);
    let failing: Vec<_> = st
        .jobs
        .iter()
        .filter(|(_, j)| j.outcome.is_none() && j.workload.srs_key() == key)
        .map(|(id, _)| *id)
        .collect();
    match loaded {
        Err(e) => {
            for id in failing {
                st.finish(
                    id,
                    Err(EngineError::Failed(format!("loading parameters: {e}"))),
                );
            }
        }
        Ok(srs) => {
            let bytes = srs.byte_size() as u64;
            st.srs_sizes.insert(key.clone(), bytes);
            if bytes + st.pool_bytes > st.budget.limit {
                let msg = format!(
                    "parameters {key} need {bytes} bytes; with the pool ({}) they can never fit the {} byte budget",
                    st.pool_bytes, st.budget.limit
                );
                for id in failing {
                    st.finish(id, Err(EngineError::TooLarge(msg.clone())));
                }
            } else {
                st.evict_for(bytes);
                // The first decode of a parameter set is measured only now; it is charged even
                // if that briefly exceeds the budget (`preload` at start avoids this). Later
                // loads wait in `pick` until the measured size fits.
                st.budget.charge(bytes);
                st.srs.insert(
                    key.clone(),
                    Resident {
                        srs,
                        bytes,
                        users: 0,
                        last_used: Instant::now(),
                    },
                );
                debug!(
                    "SRS {key} resident ({} MiB) in {:.1} ms",
                    bytes >> 20,
                    ms_since(t)
                );
            }
        }
    }
    *st.busy_ms.entry("srs-load".into()).or_default() += ms_since(t);
    let evicted = st.take_evicted();
    drop(st);
    drop(evicted);
    inner.notify_all();
}

/// For a backend that prefers pinned memory: pool buffers that grew on the heap (a pool sized
/// on first use, or a circuit that outgrew its block) are replaced by pinned ones of the same
/// size, here on a synthesis thread, off the GPU's path. Returns the buffers and the bytes
/// they hold beyond the ones they replace (to charge to the pool and the budget).
fn pinned_if_grown(inner: &Inner, buffers: AbcBuffers) -> (AbcBuffers, u64) {
    use std::sync::atomic::Ordering;
    let capacity = buffers
        .a
        .capacity()
        .max(buffers.b.capacity())
        .max(buffers.c.capacity());
    if buffers.is_pinned() || capacity == 0 || !inner.pin_grown_buffers.load(Ordering::Relaxed) {
        return (buffers, 0);
    }
    let pinned = inner.backend.alloc_buffers(capacity);
    if pinned.is_pinned() {
        debug!("pool buffers of {capacity} constraints moved to pinned memory");
        let extra = pinned
            .capacity_bytes()
            .saturating_sub(buffers.capacity_bytes());
        (pinned, extra as u64)
    } else {
        log::warn!("cannot pin pool buffers; they stay in pageable memory");
        inner.pin_grown_buffers.store(false, Ordering::Relaxed);
        (buffers, 0)
    }
}

/// A synthesis worker: takes the highest-priority partition, synthesizes it into pool buffers.
pub fn synthesis_worker(inner: Arc<Inner>, name: String) {
    loop {
        let (picked, evicted) = {
            let mut st = inner.lock();
            loop {
                if st.closed {
                    return;
                }
                if let Some(p) = pick(&mut st) {
                    break (p, st.take_evicted());
                }
                let evicted = st.take_evicted();
                if !evicted.is_empty() {
                    // Free what eviction made room with before waiting, outside the lock.
                    drop(st);
                    drop(evicted);
                    st = inner.lock();
                    continue;
                }
                st = inner.wait(&inner.work_cv, st);
            }
        };
        drop(evicted);
        let (key, workload, buffers, charged) = match picked {
            Pick::LoadSrs(w) => {
                // Decoding takes seconds to minutes: a thread of its own keeps this worker
                // synthesizing (e.g. a WinningPoSt whose parameters are resident).
                let (loader, job) = (Arc::clone(&inner), Arc::clone(&w));
                let spawned = std::thread::Builder::new()
                    .name("cuzk-srs-load".into())
                    .spawn(move || load_srs(&loader, job));
                if let Err(e) = spawned {
                    log::warn!("cannot start a loader thread ({e}); decoding on {name}");
                    load_srs(&inner, w);
                }
                continue;
            }
            Pick::Synthesize {
                key,
                workload,
                buffers,
                charged,
            } => (key, workload, buffers, charged),
        };
        let (id, k) = (key.1, key.2);
        let (buffers, repinned) = pinned_if_grown(&inner, buffers);
        let capacity = buffers.a.capacity();
        let t = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| workload.synthesize(k, buffers)))
            .unwrap_or_else(|p| Err(format!("panicked: {}", panic_message(p))));
        let synth_ms = ms_since(t);
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
        }
        *st.busy_ms.entry(name.clone()).or_default() += synth_ms;
        st.measuring.remove(&workload.srs_key());
        st.budget.release(charged);
        if let Some(job) = st.jobs.get_mut(&id) {
            job.in_flight -= 1;
            job.timings.synth_ms += synth_ms;
        }
        match result {
            Err(e) => {
                st.return_buffers(replacement.expect("allocated on error"));
                st.finish(
                    id,
                    Err(EngineError::Failed(format!(
                        "{} partition {k}: synthesis failed: {e}",
                        workload.kind()
                    ))),
                );
            }
            Ok(assignment) => {
                let grown = (assignment.abc.capacity_bytes() as u64)
                    .saturating_sub(3 * capacity as u64 * 32);
                if grown > 0 {
                    st.pool_bytes += grown;
                    st.budget.charge(grown);
                }
                let bytes = (assignment.byte_size() - assignment.abc.capacity_bytes()) as u64;
                st.partition_bytes.insert(workload.srs_key(), bytes);
                let live = st.jobs.get(&id).is_some_and(|j| j.outcome.is_none());
                if live {
                    st.budget.charge(bytes);
                    st.prove_queue.insert(
                        key,
                        Synthesized {
                            assignment,
                            charged: bytes,
                        },
                    );
                } else {
                    st.return_buffers(assignment.abc);
                }
            }
        }
        drop(st);
        inner.notify_all();
    }
}

/// A prover worker: runs `prove_start` on the next synthesized partition (highest class
/// first), returns its buffers to the pool and hands the rest to the finalizers of the
/// partition's lane (device).
pub fn prover_worker(inner: Arc<Inner>, name: String, finalizers: Vec<Sender<Finishing>>) {
    loop {
        let (key, synthesized, srs, kind) = {
            let mut st = inner.lock();
            loop {
                if st.closed {
                    return;
                }
                if let Some((key, s)) = st.prove_queue.pop_first() {
                    let job = st.jobs.get(&key.1);
                    match job.and_then(|j| j.srs.clone().map(|srs| (srs, j.workload.kind()))) {
                        Some((srs, kind)) => {
                            if let Some(job) = st.jobs.get_mut(&key.1) {
                                job.in_flight += 1;
                            }
                            break (key, s, srs, kind);
                        }
                        None => {
                            st.budget.release(s.charged);
                            st.return_buffers(s.assignment.abc);
                            continue;
                        }
                    }
                }
                st = inner.wait(&inner.prove_cv, st);
            }
        };
        let capacity = synthesized.assignment.abc.a.capacity();
        let randomness = Randomness::random(&mut rand::rngs::OsRng);
        let t = Instant::now();
        let started = catch_unwind(AssertUnwindSafe(|| {
            inner
                .backend
                .start(synthesized.assignment, &srs, randomness)
        }));
        let start_ms = ms_since(t);
        debug!(
            "GPU_TIMING job={} partition={} kind={kind} backend={} prove_start_ms={start_ms:.1}",
            key.1 .0,
            key.2,
            inner.backend.name()
        );
        let failure = match started {
            Ok(Ok((pending, released))) => {
                let mut st = inner.lock();
                *st.busy_ms.entry(name.clone()).or_default() += start_ms;
                st.return_buffers(released);
                drop(st);
                inner.notify_all();
                let lane = inner.backend.lane(&pending).min(finalizers.len() - 1);
                let _ = finalizers[lane].send(Finishing {
                    key,
                    pending,
                    charged: synthesized.charged,
                    start_ms,
                });
                continue;
            }
            Ok(Err(e)) => e.to_string(),
            Err(p) => format!("panicked: {}", panic_message(p)),
        };
        let replacement = inner.backend.alloc_buffers(capacity);
        let mut st = inner.lock();
        *st.busy_ms.entry(name.clone()).or_default() += start_ms;
        st.return_buffers(replacement);
        st.budget.release(synthesized.charged);
        if let Some(job) = st.jobs.get_mut(&key.1) {
            job.in_flight -= 1;
        }
        st.finish(
            key.1,
            Err(EngineError::Failed(format!(
                "{kind} partition {}: prove_start: {failure}",
                key.2
            ))),
        );
        drop(st);
        inner.notify_all();
    }
}

/// The finalizer: `prove_finish`, collection in partition order, verification, wake-up.
pub fn finalizer(inner: Arc<Inner>, name: String, rx: Arc<Mutex<Receiver<Finishing>>>) {
    loop {
        // One finalizer at a time waits on the channel; the lock is released before the work.
        let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(msg) = next else {
            return;
        };
        let Finishing {
            key,
            pending,
            charged,
            start_ms,
        } = msg;
        let (id, k) = (key.1, key.2);
        let t = Instant::now();
        let finished = catch_unwind(AssertUnwindSafe(|| inner.backend.finish(pending)))
            .unwrap_or_else(|p| {
                Err(crate::groth16::Groth16Error::ShapeMismatch(format!(
                    "prove_finish panicked: {}",
                    panic_message(p)
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
            st.budget.release(charged);
            let Some(job) = st.jobs.get_mut(&id) else {
                continue;
            };
            job.in_flight -= 1;
            job.timings.prove_ms += start_ms + fin_ms;
            if job.outcome.is_none() {
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
                            to_verify = Some((Arc::clone(&job.workload), bytes));
                        }
                    }
                    Err(e) => {
                        let kind = job.workload.kind();
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
        if let Some((workload, bytes)) = to_verify {
            let t = Instant::now();
            let verdict = catch_unwind(AssertUnwindSafe(|| workload.verify(&bytes)))
                .unwrap_or_else(|p| Err(format!("verifier panicked: {}", panic_message(p))));
            let verify_ms = ms_since(t);
            let mut st = inner.lock();
            *st.busy_ms.entry(name.clone()).or_default() += verify_ms;
            if let Some(job) = st.jobs.get_mut(&id) {
                job.timings.verify_ms = verify_ms;
            }
            let outcome = verdict
                .map(|()| bytes)
                .map_err(|e| EngineError::Failed(format!("{} self-check: {e}", workload.kind())));
            st.finish(id, outcome);
            drop(st);
            if inner.config.malloc_trim {
                trim();
            }
        }
        inner.notify_all();
    }
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
