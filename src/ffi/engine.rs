//! Engine lifecycle and jobs over the C ABI. Each function's comment says who owns what.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::guard::{bytes, call, non_null, slices, FfiError};
use super::types::{CuzkBytes, CuzkCode, CuzkSlice, CuzkTimings};
use crate::engine::{Config, Engine, JobId, Workload};
use crate::groth16::paramgen::cache::cache_dir;
use crate::proofs::circuits::CircuitKind;
use crate::proofs::porep::PoRepRequest;
use crate::proofs::post::PostRequest;
use crate::proofs::snap::SnapDealsRequest;
use crate::proofs::workload::{load_kind, srs_key, FilecoinWorkload};
use crate::proofs::ProofRequest;

/// An open engine (opaque to C). Created by `cuzk_engine_open`, released by
/// `cuzk_engine_close`. Calls on one handle may come from any thread, but not concurrently
/// with `cuzk_engine_close` on it.
pub struct CuzkEngine {
    engine: Engine,
    params_dir: PathBuf,
}

/// Borrows the engine behind a handle.
///
/// # Safety
/// `e` must be null or a live handle from `cuzk_engine_open`.
unsafe fn engine<'a>(e: *const CuzkEngine) -> Result<&'a CuzkEngine, FfiError> {
    non_null(e, "engine")?;
    Ok(&*e)
}

fn invalid(msg: impl Into<String>) -> FfiError {
    FfiError::new(CuzkCode::InvalidInput, msg)
}

/// Opens an engine. `config_toml` (nullable: defaults) is borrowed for the call; `CUZK_*`
/// environment variables override it. On success `*out` owns a handle to pass to
/// `cuzk_engine_close`. Parameters are read from `FIL_PROOFS_PARAMETER_CACHE`.
///
/// # Safety
/// `config_toml` null or a NUL-terminated string; `out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_open(
    config_toml: *const c_char,
    out: *mut *mut CuzkEngine,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(out, "out")?;
        let config = if config_toml.is_null() {
            Config::default()
        } else {
            let text = CStr::from_ptr(config_toml)
                .to_str()
                .map_err(|_| invalid("config is not UTF-8"))?;
            Config::from_toml(text).map_err(invalid)?
        };
        let config = config.with_env_overrides().map_err(invalid)?;
        let engine = Engine::open_cpu(config)?;
        let handle = Box::new(CuzkEngine {
            engine,
            params_dir: cache_dir(),
        });
        *out = Box::into_raw(handle);
        Ok(())
    })
}

/// Closes an engine and frees the handle: unfinished jobs fail with `CUZK_CLOSED`, buffers and
/// parameters are released. Null is ignored. The handle must not be used afterwards.
///
/// # Safety
/// `e` null or a live handle, not used concurrently by another call.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_close(e: *mut CuzkEngine) {
    if e.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let handle = Box::from_raw(e);
        handle.engine.close();
        drop(handle);
    }));
}

fn submit(e: &CuzkEngine, request: ProofRequest, job_out: *mut u64) -> Result<(), FfiError> {
    let workload: Arc<dyn Workload> = FilecoinWorkload::new(request, e.params_dir.clone());
    let id = e.engine.submit(workload)?;
    // SAFETY: checked non-null by the callers.
    unsafe { *job_out = id.0 };
    Ok(())
}

/// Queues a PoRep C2 job. `c1_json` (the C1 output) is borrowed for the call.
/// `registered_proof` is the `abi.RegisteredSealProof` number, or `UINT64_MAX` to take it
/// from the C1 output (as filecoin-ffi's `SealCommitPhase2`). On success `*job_out` is the job.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_porep(
    e: *const CuzkEngine,
    c1_json: *const u8,
    c1_len: usize,
    registered_proof: u64,
    sector_number: u64,
    miner_id: u64,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(job_out, "job_out")?;
        let c1 = bytes(c1_json, c1_len, "c1_json")?;
        if c1.is_empty() {
            return Err(invalid("C1 output is empty"));
        }
        let request = if registered_proof == u64::MAX {
            PoRepRequest::parse_any(c1, sector_number, miner_id)?
        } else {
            PoRepRequest::parse(c1, registered_proof, sector_number, miner_id)?
        };
        submit(e, ProofRequest::PoRep(request), job_out)
    })
}

/// Queues a WinningPoSt job (`registered_proof` 0-4). `randomness` (32 bytes) and the
/// `n_vanilla` vanilla proofs (bincode `FallbackPoStSectorProof`) are borrowed for the call.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_winning_post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(job_out, "job_out")?;
        let randomness = bytes(randomness, randomness_len, "randomness")?;
        let vanilla = slices(vanilla, n_vanilla, "vanilla")?;
        let request = PostRequest::winning(registered_proof, randomness, miner_id, &vanilla)?;
        submit(e, ProofRequest::Post(request), job_out)
    })
}

/// Queues one WindowPoSt partition (`registered_proof` 5-14). Inputs borrowed as for
/// `cuzk_submit_winning_post`.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_window_post(
    e: *const CuzkEngine,
    registered_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    miner_id: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    partition_index: u64,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(job_out, "job_out")?;
        let randomness = bytes(randomness, randomness_len, "randomness")?;
        let vanilla = slices(vanilla, n_vanilla, "vanilla")?;
        let partition =
            usize::try_from(partition_index).map_err(|_| invalid("partition index too large"))?;
        let request =
            PostRequest::window(registered_proof, randomness, miner_id, &vanilla, partition)?;
        submit(e, ProofRequest::Post(request), job_out)
    })
}

/// Queues a SnapDeals update proof (`registered_proof` 0-4): one vanilla proof per partition
/// (bincode `PartitionProof`) and three 32-byte commitments, all borrowed for the call.
///
/// # Safety
/// Pointers valid for their lengths; `job_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_submit_snap_deals(
    e: *const CuzkEngine,
    registered_proof: u64,
    vanilla: *const CuzkSlice,
    n_vanilla: usize,
    comm_r_old: CuzkSlice,
    comm_r_new: CuzkSlice,
    comm_d_new: CuzkSlice,
    job_out: *mut u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(job_out, "job_out")?;
        let vanilla = slices(vanilla, n_vanilla, "vanilla")?;
        let request = SnapDealsRequest::parse(
            registered_proof,
            &vanilla,
            bytes(comm_r_old.ptr, comm_r_old.len, "comm_r_old")?,
            bytes(comm_r_new.ptr, comm_r_new.len, "comm_r_new")?,
            bytes(comm_d_new.ptr, comm_d_new.len, "comm_d_new")?,
        )?;
        submit(e, ProofRequest::SnapDeals(request), job_out)
    })
}

/// Waits for a job (`timeout_ms` < 0: no limit). On success `*proof_out` owns the proof bytes
/// (partition proofs in order; free with `cuzk_bytes_free`) and, when `timings_out` is not
/// null, the job's phase timings are written there. The result is handed out once.
///
/// # Safety
/// `proof_out` writable; `timings_out` null or writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_await(
    e: *const CuzkEngine,
    job: u64,
    timeout_ms: i64,
    proof_out: *mut CuzkBytes,
    timings_out: *mut CuzkTimings,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(proof_out, "proof_out")?;
        *proof_out = CuzkBytes::empty();
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        let (proof, t) = e.engine.await_with_timings(JobId(job), timeout)?;
        *proof_out = CuzkBytes::from_vec(proof);
        if !timings_out.is_null() {
            *timings_out = CuzkTimings {
                queue_ms: t.queue_ms,
                synth_ms: t.synth_ms,
                prove_ms: t.prove_ms,
                verify_ms: t.verify_ms,
            };
        }
        Ok(())
    })
}

/// Cancels a job; its waiters get `CUZK_CANCELLED`.
///
/// # Safety
/// `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_cancel(
    e: *const CuzkEngine,
    job: u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || Ok(engine(e)?.engine.cancel(JobId(job))?))
}

/// Writes the engine status as JSON to `*json_out` (owned; free with `cuzk_string_free`).
///
/// # Safety
/// `json_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_status_json(
    e: *const CuzkEngine,
    json_out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(json_out, "json_out")?;
        let json = serde_json::to_string(&e.engine.status())
            .map_err(|x| FfiError::new(CuzkCode::ProofFailed, x.to_string()))?;
        *json_out = std::ffi::CString::new(json).unwrap_or_default().into_raw();
        Ok(())
    })
}

/// Parses a circuit name ("porep-2k", "window-32g", ...) borrowed for the call.
unsafe fn circuit_kind(name: *const c_char) -> Result<CircuitKind, FfiError> {
    non_null(name, "kind")?;
    let name = CStr::from_ptr(name)
        .to_str()
        .map_err(|_| invalid("kind is not UTF-8"))?;
    CircuitKind::parse(name).ok_or_else(|| invalid(format!("unknown circuit {name}")))
}

/// Decodes a circuit's parameters now (e.g. "porep-32g", "winning-32g") so the first proof
/// does not wait for them. `kind` is borrowed for the call.
///
/// # Safety
/// `kind` a NUL-terminated string; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_preload(
    e: *const CuzkEngine,
    kind: *const c_char,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        let kind = circuit_kind(kind)?;
        e.engine
            .preload_srs(&srs_key(kind), || load_kind(kind, &e.params_dir))?;
        Ok(())
    })
}

/// Drops a circuit's resident parameters if no job uses them; `*evicted` says whether it did.
///
/// # Safety
/// `kind` a NUL-terminated string; `evicted` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_evict(
    e: *const CuzkEngine,
    kind: *const c_char,
    evicted: *mut bool,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        non_null(evicted, "evicted")?;
        let kind = circuit_kind(kind)?;
        *evicted = e.engine.evict(&srs_key(kind))?;
        Ok(())
    })
}

/// Writes the GPU devices cuzk can use as a JSON array of vendor-named strings to `*json_out`
/// (owned; free with `cuzk_string_free`). Builds without the `cuda` feature have none: `[]`.
///
/// # Safety
/// `json_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_gpu_devices(
    json_out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(json_out, "json_out")?;
        *json_out = std::ffi::CString::new("[]").unwrap_or_default().into_raw();
        Ok(())
    })
}
