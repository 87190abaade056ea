//! `fil_fake_*`: a few C functions over blst and the Rust runtime, standing in for filcrypto.

use std::os::raw::c_int;

/// Writes the 48-byte compressed encoding of `k`·G1 (k a small scalar) to `out`; returns 0.
///
/// # Safety
/// `out` must be writable for 48 bytes.
#[no_mangle]
pub unsafe extern "C" fn fil_fake_g1_mul(k: u64, out: *mut u8) -> c_int {
    if out.is_null() {
        return 1;
    }
    let mut scalar = blst::blst_scalar::default();
    let limbs = [k, 0, 0, 0];
    blst::blst_scalar_from_uint64(&mut scalar, limbs.as_ptr());
    let mut p = blst::blst_p1::default();
    blst::blst_p1_mult(&mut p, blst::blst_p1_generator(), scalar.b.as_ptr(), 64);
    blst::blst_p1_compress(out, &p);
    // Exercise the Rust runtime (allocation, formatting) like any Rust library would.
    let s = format!("{k}");
    s.len() as c_int - s.len() as c_int
}
