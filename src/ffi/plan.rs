//! `cuzk plan` over the C ABI: a node and a mix of circuit names in, the plan as JSON out.

use std::ffi::{c_char, CStr};

use serde::Deserialize;

use super::guard::{call, invalid, non_null, FfiError};
use super::types::CuzkCode;
use crate::engine::plan::Node;
use crate::proofs::plan::plan_mix;

/// The request `cuzk_plan` parses.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanRequest {
    ram_bytes: u64,
    #[serde(default)]
    gpu_bytes: Vec<u64>,
    cores: usize,
    mix: Vec<String>,
}

/// Plans a node for a mix of circuits. `request_json` (borrowed for the call) is
/// `{"ram_bytes": N, "gpu_bytes": [N, ...], "cores": N, "mix": ["porep-32g", ...]}`
/// (`gpu_bytes` may be omitted or empty for a CPU-only node). On success `*json_out` owns the
/// plan as JSON (free with `cuzk_string_free`): memory budget, pool, workers, per-circuit
/// footprints, residency, partitions in flight per stage, throughput bounds, per-GPU fit,
/// `fits`, `reason` and the suggested config as TOML. Malformed JSON and unknown circuit names
/// return `CUZK_CODE_INVALID_INPUT` with a message in `*err` (owned; free with `cuzk_string_free`).
/// A mix that does not fit is not an error: the plan says so (`"fits": false`).
///
/// # Safety
/// `request_json` a NUL-terminated string; `json_out` writable; `err` null or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_plan(
    request_json: *const c_char,
    json_out: *mut *mut c_char,
    err: *mut *mut c_char,
) -> CuzkCode {
    call(err, || {
        non_null(request_json, "request_json")?;
        non_null(json_out, "json_out")?;
        *json_out = std::ptr::null_mut();
        let text = CStr::from_ptr(request_json)
            .to_str()
            .map_err(|_| invalid("plan request is not UTF-8"))?;
        let req: PlanRequest = serde_json::from_str(text)
            .map_err(|e| invalid(format!("invalid plan request: {e}")))?;
        let node = Node {
            ram_bytes: req.ram_bytes,
            gpu_bytes: req.gpu_bytes,
            cores: req.cores,
        };
        let plan = plan_mix(&node, &req.mix).map_err(invalid)?;
        let json = serde_json::to_string(&plan)
            .map_err(|e| FfiError::new(CuzkCode::ProofFailed, e.to_string()))?;
        *json_out = super::memory::owned_string(&json);
        Ok(())
    })
}
