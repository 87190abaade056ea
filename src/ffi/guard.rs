//! The panic boundary and argument checks every entry point goes through, so that no panic
//! and no unchecked pointer crosses the C ABI.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::types::{CuzkCode, CuzkSlice};
use crate::engine::EngineError;
use crate::proofs::ProofError;

/// An error on its way to C: a code and a message.
#[derive(Debug)]
pub struct FfiError {
    /// The code returned.
    pub code: CuzkCode,
    /// The message written to `err`.
    pub message: String,
}

impl FfiError {
    /// An error with `code`.
    pub fn new(code: CuzkCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<EngineError> for FfiError {
    fn from(e: EngineError) -> Self {
        let code = match &e {
            EngineError::Closed => CuzkCode::Closed,
            EngineError::Cancelled => CuzkCode::Cancelled,
            EngineError::UnknownJob(_) => CuzkCode::UnknownJob,
            EngineError::Timeout(_) => CuzkCode::Timeout,
            EngineError::TooLarge(_) => CuzkCode::TooLarge,
            EngineError::Invalid(_) => CuzkCode::InvalidInput,
            EngineError::Failed(_) => CuzkCode::ProofFailed,
        };
        Self::new(code, e.to_string())
    }
}

impl From<ProofError> for FfiError {
    fn from(e: ProofError) -> Self {
        let code = match &e {
            ProofError::UnknownRegisteredProof { .. }
            | ProofError::NotSupported(_)
            | ProofError::Malformed { .. }
            | ProofError::RegisteredProofMismatch { .. }
            | ProofError::InvalidArgument(_) => CuzkCode::InvalidInput,
            ProofError::FaultySectors(_) => CuzkCode::FaultySectors,
            _ => CuzkCode::ProofFailed,
        };
        Self::new(code, e.to_string())
    }
}

/// Writes `message` to `*err` as an owned C string (when `err` is not null).
fn set_error(err: *mut *mut c_char, message: &str) {
    if err.is_null() {
        return;
    }
    // SAFETY: the caller passed a writable `char **` (checked non-null above).
    unsafe { *err = super::memory::owned_string(message) };
}

/// Runs `f`, turning errors and panics into a code and a message in `*err`.
///
/// # Safety
/// `err` must be null or point to a writable `char *`.
pub unsafe fn call(err: *mut *mut c_char, f: impl FnOnce() -> Result<(), FfiError>) -> CuzkCode {
    if !err.is_null() {
        // SAFETY: non-null `char **` from the caller; start from a clean slate.
        unsafe { *err = std::ptr::null_mut() };
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CuzkCode::Ok,
        Ok(Err(e)) => {
            set_error(err, &e.message);
            e.code
        }
        Err(p) => {
            set_error(
                err,
                &format!(
                    "internal error (panic caught): {}",
                    crate::panics::panic_message(&*p)
                ),
            );
            CuzkCode::Panic
        }
    }
}

/// Fails with `NullArgument` naming `what` when `ptr` is null.
pub fn non_null<T>(ptr: *const T, what: &str) -> Result<(), FfiError> {
    if ptr.is_null() {
        Err(FfiError::new(
            CuzkCode::NullArgument,
            format!("{what} is null"),
        ))
    } else {
        Ok(())
    }
}

/// An `InvalidInput` error.
pub fn invalid(msg: impl Into<String>) -> FfiError {
    FfiError::new(CuzkCode::InvalidInput, msg)
}

/// Refuses `n` items of `item_size` bytes when they cannot be one Rust slice (over
/// `isize::MAX` bytes): such a length is a caller's bug, and building the slice would be
/// undefined behaviour.
fn within_isize(n: usize, item_size: usize, what: &str) -> Result<(), FfiError> {
    match n.checked_mul(item_size) {
        Some(total) if total <= isize::MAX as usize => Ok(()),
        _ => Err(invalid(format!(
            "{what}: length {n} is larger than any buffer can be"
        ))),
    }
}

/// Borrows an array of `n` items at `ptr` for the call (null allowed only for `n == 0`).
///
/// # Safety
/// `ptr` must point to `n` valid items that stay valid and unchanged for the call.
pub unsafe fn array<'a, T>(ptr: *const T, n: usize, what: &str) -> Result<&'a [T], FfiError> {
    if n == 0 {
        return Ok(&[]);
    }
    non_null(ptr, what)?;
    within_isize(n, std::mem::size_of::<T>(), what)?;
    Ok(std::slice::from_raw_parts(ptr, n))
}

/// Borrows `len` bytes at `ptr` (null allowed only for `len == 0`).
///
/// # Safety
/// `ptr` must point to `len` readable bytes that stay valid and unchanged for the call.
pub unsafe fn bytes<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8], FfiError> {
    array(ptr, len, what)
}

/// Borrows an array of `n` slices as owned vectors (inputs are copied once, at the boundary).
///
/// # Safety
/// `slices` must point to `n` valid `CuzkSlice`s, each valid as for [`bytes`].
pub unsafe fn slices(
    slices: *const CuzkSlice,
    n: usize,
    what: &str,
) -> Result<Vec<Vec<u8>>, FfiError> {
    array(slices, n, what)?
        .iter()
        .enumerate()
        .map(|(i, s)| bytes(s.ptr, s.len, &format!("{what}[{i}]")).map(<[u8]>::to_vec))
        .collect()
}
