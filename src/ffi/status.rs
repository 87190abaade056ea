//! The engine status as a plain C struct (`cuzk_status`); `cuzk_status_json` has the full
//! detail (per class, per worker, per resident parameter set).

use std::ffi::c_char;

use std::mem::size_of;

use super::versioned::VersionedOut;
use crate::engine::Status;

/// Length of `CuzkStatus.backend`, including the terminating NUL.
pub const CUZK_BACKEND_NAME_LEN: usize = 32;

/// A snapshot of an engine: queues, pool, memory budget and job counts. Versioned: set
/// `struct_size = sizeof(CuzkStatus)` before the call (see `cuzk_status`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuzkStatus {
    /// Set by the caller to `sizeof(CuzkStatus)`; the library writes at most that many bytes
    /// and sets it to the number it wrote. Fields are only ever added at the end.
    pub struct_size: u32,
    /// Backend in use, NUL-terminated ("cpu", "cuda:0").
    pub backend: [c_char; CUZK_BACKEND_NAME_LEN],
    /// Whether the engine was closed.
    pub closed: bool,
    /// Milliseconds since open.
    pub uptime_ms: f64,
    /// Partitions waiting for synthesis (all priority classes).
    pub partitions_queued: u64,
    /// Partitions synthesized and waiting for a prover.
    pub partitions_synthesized: u64,
    /// Partitions being synthesized or proved.
    pub partitions_in_flight: u64,
    /// Jobs submitted and not yet finished.
    pub jobs_active: u64,
    /// Jobs finished with a verified proof.
    pub jobs_completed: u64,
    /// Jobs finished with an error.
    pub jobs_failed: u64,
    /// Jobs cancelled.
    pub jobs_cancelled: u64,
    /// Buffer sets in the pool.
    pub pool_buffers: u64,
    /// Buffer sets free now.
    pub pool_free: u64,
    /// Bytes of the pool's buffers.
    pub pool_bytes: u64,
    /// Memory budget limit in bytes.
    pub budget_limit: u64,
    /// Bytes charged to the budget now.
    pub budget_used: u64,
    /// Highest charge since open.
    pub budget_high_water: u64,
    /// Parameter sets resident in memory.
    pub srs_resident: u64,
    /// Bytes of the resident parameter sets.
    pub srs_resident_bytes: u64,
    /// Job records held: active jobs, and ended ones whose result was not yet taken by
    /// `cuzk_await` or released with `cuzk_job_release` (0 when every job was either).
    pub jobs_held: u64,
}

impl From<&Status> for CuzkStatus {
    fn from(s: &Status) -> Self {
        let mut backend = [0 as c_char; CUZK_BACKEND_NAME_LEN];
        for (dst, src) in backend
            .iter_mut()
            .zip(s.backend.bytes().take(CUZK_BACKEND_NAME_LEN - 1))
        {
            *dst = src as c_char;
        }
        let sum = |f: fn(&crate::engine::ClassStatus) -> usize| {
            s.classes.iter().map(f).sum::<usize>() as u64
        };
        Self {
            struct_size: size_of::<Self>() as u32,
            backend,
            closed: s.closed,
            uptime_ms: s.uptime_ms,
            partitions_queued: sum(|c| c.queued),
            partitions_synthesized: sum(|c| c.synthesized),
            partitions_in_flight: sum(|c| c.in_flight),
            jobs_active: s.jobs_active as u64,
            jobs_completed: s.completed,
            jobs_failed: s.failed,
            jobs_cancelled: s.cancelled,
            pool_buffers: s.pool_buffers as u64,
            pool_free: s.pool_free as u64,
            pool_bytes: s.pool_bytes,
            budget_limit: s.budget_limit,
            budget_used: s.budget_used,
            budget_high_water: s.budget_high_water,
            srs_resident: s.srs_resident.len() as u64,
            srs_resident_bytes: s.srs_resident.iter().map(|r| r.1).sum(),
            jobs_held: s.jobs_held as u64,
        }
    }
}

// SAFETY: repr(C), starts with `struct_size: u32`, plain data.
unsafe impl VersionedOut for CuzkStatus {
    const NAME: &'static str = "CuzkStatus";
    // ABI 6, the first versioned layout: every field up to `jobs_held`.
    const FIRST_LAYOUT_SIZE: usize = std::mem::offset_of!(CuzkStatus, jobs_held) + size_of::<u64>();
    fn set_struct_size(&mut self, size: u32) {
        self.struct_size = size;
    }
}
