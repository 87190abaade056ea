//! Engine lifecycle and jobs over the C ABI. Each function's comment says who owns what.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::guard::{call, invalid, non_null, FfiError};
use super::handle::{HandleTable, SharedHandle};
use super::jobs::Output;
use super::status::CuzkStatus;
use super::types::{CuzkBytes, CuzkCode, CuzkTimings};
use super::versioned::{checked_size, write_prefix, write_versioned};
use crate::engine::{Config, Engine, JobId};
use crate::groth16::paramgen::cache::cache_dir;
use crate::proofs::circuits::CircuitKind;
use crate::proofs::workload::{preload_kind, srs_key};

/// An engine as C sees it: an opaque handle from `cuzk_engine_open` (or `cuzk_default_engine`),
/// shared by reference count and checked on every call. Any call may race `cuzk_engine_close` on
/// it; a call with a closed handle returns `CUZK_CODE_CLOSED`.
pub struct CuzkEngine {
    _opaque: [u8; 0],
}

/// The engine behind a [`CuzkEngine`] handle.
pub struct OpenEngine {
    pub(super) engine: Engine,
    pub(super) params_dir: PathBuf,
    /// Synthesize through the circuits' pre-compiled constraint systems (config `pce`).
    pub(super) pce: bool,
    /// The process-wide default engine: `cuzk_engine_close` refuses it.
    is_default: bool,
}

static ENGINES: HandleTable<OpenEngine> = HandleTable::new();

impl SharedHandle for OpenEngine {
    type Opaque = CuzkEngine;
    const NAME: &'static str = "engine";

    fn table() -> &'static HandleTable<Self> {
        &ENGINES
    }
}

/// The handle of the process-wide default engine behind the one-shot `cuzk_prove_*` calls
/// with a null engine. Opened on first use; a failed open is retried on the next call.
static DEFAULT_ENGINE: Mutex<Option<usize>> = Mutex::new(None);

/// Opens an engine from an optional TOML config plus `CUZK_*` environment overrides.
fn open(config_toml: Option<&str>, is_default: bool) -> Result<OpenEngine, FfiError> {
    let config = match config_toml {
        None => Config::default(),
        Some(text) => Config::from_toml(text).map_err(invalid)?,
    };
    let config = config.with_env_overrides().map_err(invalid)?;
    let pce = config.pce;
    Ok(OpenEngine {
        engine: Engine::open_configured(config)?,
        params_dir: cache_dir(),
        pce,
        is_default,
    })
}

/// The process-wide default engine and its handle, opened on first use with the default
/// config.
fn default_engine() -> Result<(Arc<OpenEngine>, *const CuzkEngine), FfiError> {
    let mut slot = DEFAULT_ENGINE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(handle) = *slot {
        let handle = handle as *const CuzkEngine;
        return Ok((OpenEngine::from_handle(handle)?, handle));
    }
    let engine = Arc::new(open(None, true)?);
    let handle = OpenEngine::into_handle(Arc::clone(&engine))?;
    *slot = Some(handle as usize);
    Ok((engine, handle))
}

/// The engine for a job call: one-shot proving (`Output::Proof`) takes a null handle as the
/// default engine; queued jobs need an explicit handle to await them on.
pub(super) fn engine_or_default(
    e: *const CuzkEngine,
    out: &Output,
) -> Result<Arc<OpenEngine>, FfiError> {
    match (e.is_null(), out) {
        (true, Output::Proof(_)) => default_engine().map(|(engine, _)| engine),
        _ => OpenEngine::from_handle(e),
    }
}

/// The engine behind a handle, held for the call.
fn engine(e: *const CuzkEngine) -> Result<Arc<OpenEngine>, FfiError> {
    OpenEngine::from_handle(e)
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
        let text = if config_toml.is_null() {
            None
        } else {
            Some(
                CStr::from_ptr(config_toml)
                    .to_str()
                    .map_err(|_| invalid("config is not UTF-8"))?,
            )
        };
        *out = OpenEngine::into_handle(Arc::new(open(text, false)?))?;
        Ok(())
    })
}

/// Writes the process-wide default engine (the one `cuzk_prove_*` use with a null engine) to
/// `*out`, opening it with the default config on first use. The handle lives until the
/// process exits; `cuzk_engine_close` refuses it.
///
/// # Safety
/// `out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_default_engine(
    out: *mut *const CuzkEngine,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(out, "out")?;
        *out = default_engine()?.1;
        Ok(())
    })
}

/// Closes an engine and drops C's reference to it: unfinished jobs fail with `CUZK_CLOSED`
/// (calls waiting on them return), buffers and parameters are released once the calls still
/// inside the engine return. Safe to call concurrently with any other call on the handle:
/// later calls with it return `CUZK_CODE_CLOSED`. Returns `CUZK_CODE_CLOSED` for a handle
/// already closed, `CUZK_CODE_INVALID_INPUT` for the default engine (it lives until the
/// process exits), `CUZK_CODE_OK` for null (nothing to close). `*err` as for every call.
///
/// # Safety
/// `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_close(
    e: *const CuzkEngine,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        if e.is_null() {
            return Ok(());
        }
        if engine(e)?.is_default {
            return Err(invalid("the default engine lives until the process exits"));
        }
        let open = OpenEngine::release(e)
            .ok_or_else(|| FfiError::new(CuzkCode::Closed, "engine handle is already closed"))?;
        open.engine.close();
        Ok(())
    })
}

/// Waits for a job (`timeout_ms` < 0: no limit). On success `*proof_out` owns the proof bytes
/// (partition proofs in order; free with `cuzk_bytes_free`) and, when `timings_out` is not
/// null, the job's phase timings are written there (set its `struct_size` first; a size below
/// the first layout is refused before waiting). The result is handed out once.
///
/// # Safety
/// `proof_out` writable; `timings_out` null or writable for its `struct_size`; `err` null or
/// writable.
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
        // Checked first, so that a bad struct_size does not consume the job's result.
        let timings_size = if timings_out.is_null() {
            None
        } else {
            Some(checked_size(timings_out, "timings_out")?)
        };
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        let (proof, t) = e.engine.await_with_timings(JobId(job), timeout)?;
        *proof_out = CuzkBytes::from_vec(proof);
        if let Some(n) = timings_size {
            let timings = CuzkTimings {
                struct_size: 0,
                queue_ms: t.queue_ms,
                synth_ms: t.synth_ms,
                prove_ms: t.prove_ms,
                verify_ms: t.verify_ms,
            };
            write_prefix(timings_out, timings, n);
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

/// Releases a job its caller will not await (e.g. the caller gave up on it): a running job is
/// cancelled, and the engine frees its record and request as soon as nothing of it is in
/// flight. The caller owns nothing afterwards: later calls with `job` (await, cancel, release)
/// return `CUZK_CODE_UNKNOWN_JOB`, as does releasing a job whose result was already taken by
/// `cuzk_await`. Nothing is written but `*err` on failure (owned; free with
/// `cuzk_string_free`).
///
/// # Safety
/// `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_release(
    e: *const CuzkEngine,
    job: u64,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || Ok(engine(e)?.engine.release(JobId(job))?))
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
        *json_out = super::memory::owned_string(&json);
        Ok(())
    })
}

/// Writes a snapshot of the engine to `*status_out` (plain data, nothing to free). Set
/// `status_out->struct_size = sizeof(CuzkStatus)` first: at most that many bytes are written,
/// and `struct_size` is set to the number written (smaller when the library is older than the
/// header). A size below the first versioned layout is refused with `CUZK_CODE_INVALID_INPUT`.
///
/// # Safety
/// `status_out` writable for its `struct_size`; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_status(
    e: *const CuzkEngine,
    status_out: *mut CuzkStatus,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        let e = engine(e)?;
        write_versioned(
            status_out,
            CuzkStatus::from(&e.engine.status()),
            "status_out",
        )
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
        preload_kind(&e.engine, kind, &e.params_dir)?;
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
/// (owned; free with `cuzk_string_free`), e.g. `["NVIDIA H200"]`. Builds without the `cuda`
/// feature, and machines without a usable device, have none: `[]`.
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
        let names: Vec<String> = crate::gpu::devices().into_iter().map(|d| d.name).collect();
        let json = serde_json::to_string(&names).unwrap_or_else(|_| "[]".into());
        *json_out = super::memory::owned_string(&json);
        Ok(())
    })
}
