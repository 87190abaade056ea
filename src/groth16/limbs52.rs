//! Radix-2^52 limb helpers shared by the eight-lane field arithmetic of [`super::ifma`]
//! (the scalar field, five limbs) and [`super::fp_lanes`] (the base field, eight limbs): limb
//! k of eight lanes in one AVX-512 register.

// Limb loops index several arrays in step (limb k of a, b, the modulus and the output).
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::*;

/// The bits a limb holds once normalized.
pub const MASK52: u64 = (1 << 52) - 1;

/// `x` in every lane.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn splat(x: u64) -> __m512i {
    _mm512_set1_epi64(x as i64)
}

/// a + b limb by limb with the carries carried, each limb back to 52 bits (a carry out of
/// the top limb is dropped). The limbs of a and b may hold more than 52 bits.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn carried_sum<const N: usize>(a: [__m512i; N], b: [__m512i; N]) -> [__m512i; N] {
    let m = splat(MASK52);
    let mut out = [_mm512_setzero_si512(); N];
    let mut carry = _mm512_setzero_si512();
    for k in 0..N {
        let s = _mm512_add_epi64(_mm512_add_epi64(a[k], b[k]), carry);
        carry = _mm512_srli_epi64::<52>(s);
        out[k] = _mm512_and_si512(s, m);
    }
    out
}

/// `t − modulus` where that is not negative, else `t`: t's limbs are normalized and
/// t < 2·modulus (modulus in 52-bit limbs).
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn reduce_once<const N: usize>(t: [__m512i; N], modulus: &[u64; N]) -> [__m512i; N] {
    let m = splat(MASK52);
    let mut u = [_mm512_setzero_si512(); N];
    let mut borrow = _mm512_setzero_si512();
    for k in 0..N {
        let d = _mm512_sub_epi64(_mm512_sub_epi64(t[k], splat(modulus[k])), borrow);
        borrow = _mm512_srli_epi64::<63>(d);
        u[k] = _mm512_and_si512(d, m);
    }
    // Lanes that borrowed out of the top limb had t < modulus: keep t there.
    let keep = _mm512_test_epi64_mask(borrow, borrow);
    let mut out = u;
    for k in 0..N {
        out[k] = _mm512_mask_blend_epi64(keep, u[k], t[k]);
    }
    out
}
