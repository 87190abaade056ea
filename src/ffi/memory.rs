//! Releasing what cuzk hands to C: one `*_free` per owned output type, and a count of what
//! was handed out and not yet freed, so that bindings can check they free everything.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicI64, Ordering};

use super::types::CuzkBytes;

/// Owned outputs (strings, byte buffers, lists) handed to the caller and not yet freed.
static LIVE_OUTPUTS: AtomicI64 = AtomicI64::new(0);

/// Counts an owned output handed to the caller.
pub(super) fn handed_out() {
    LIVE_OUTPUTS.fetch_add(1, Ordering::Relaxed);
}

/// Counts an owned output the caller gave back.
pub(super) fn taken_back() {
    LIVE_OUTPUTS.fetch_sub(1, Ordering::Relaxed);
}

/// Hands `s` to the caller as an owned C string (NUL bytes become spaces); freed with
/// `cuzk_string_free`.
pub(super) fn owned_string(s: &str) -> *mut c_char {
    handed_out();
    CString::new(s.replace('\0', " "))
        .unwrap_or_default()
        .into_raw()
}

/// The number of owned outputs (error messages, JSON strings, proof buffers, lists) this
/// library has handed out and that were not yet given back to their `*_free` function. A
/// binding's tests can check that it returns to where it was after any sequence of calls: a
/// leak check that needs no valgrind and sees leaks valgrind cannot (a pointer left in a
/// garbage-collected heap looks reachable).
#[no_mangle]
pub extern "C" fn cuzk_live_outputs() -> u64 {
    LIVE_OUTPUTS.load(Ordering::Relaxed).max(0) as u64
}

/// Frees a string returned by cuzk (error messages, JSON). Null is ignored.
///
/// # Safety
/// `s` null or a string from cuzk, freed once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_string_free(s: *mut c_char) {
    if !s.is_null() {
        taken_back();
        drop(CString::from_raw(s));
    }
}

/// Frees a byte buffer returned by cuzk and resets it to empty. Null is ignored.
///
/// # Safety
/// `b` null or a buffer from cuzk, freed once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_bytes_free(b: *mut CuzkBytes) {
    if b.is_null() {
        return;
    }
    let bytes = &mut *b;
    if !bytes.ptr.is_null() {
        taken_back();
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            bytes.ptr, bytes.len,
        )));
    }
    *bytes = CuzkBytes::empty();
}
