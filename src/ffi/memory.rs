//! Releasing what cuzk hands to C: one `*_free` per owned output type.

use std::ffi::{c_char, CString};

use super::types::CuzkBytes;

/// Frees a string returned by cuzk (error messages, JSON). Null is ignored.
///
/// # Safety
/// `s` null or a string from cuzk, freed once.
#[no_mangle]
pub unsafe extern "C" fn cuzk_string_free(s: *mut c_char) {
    if !s.is_null() {
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
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            bytes.ptr, bytes.len,
        )));
    }
    *bytes = CuzkBytes::empty();
}
