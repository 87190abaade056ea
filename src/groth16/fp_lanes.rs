//! Eight BLS12-381 base-field elements at once on AVX-512 IFMA, and the affine G1 additions a
//! Pippenger bucket needs, for the dense CPU MSM ([`super::msm_lanes`]).
//!
//! A field element is eight 52-bit limbs (416 bits, p has 381), limb k of the eight lanes in
//! one register. Products are Montgomery products in radix 2^52, R = 2^416 ("our form"); blst
//! keeps its elements in Montgomery form with R = 2^384 ("blst's form"). Values are only partly
//! reduced: a product is below 2p for any two inputs below 2^17·p, so sums and differences
//! (plus a multiple of p to stay positive) go straight into the next product; only what is
//! stored, compared or handed to blst is reduced below p.
//!
//! Bucket sums are affine points in blst's form, like the SRS's points, so a point is added
//! as read. An addition needs the inverse of x₂ − x₁: [`invert_all`] inverts many of them with
//! one field inversion (Montgomery's trick), and [`add_with_inverse`] finishes each addition
//! with three products and a square (the inversion adds three more).
//!
//! Every function here needs AVX-512F and AVX-512 IFMA: callers hold an [`super::ifma::Ifma`].

// Limb loops index several arrays in step (limb k of a, b, p and the output).
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::*;

use blst::{blst_fp, blst_fp_inverse, blst_fp_mul, blst_p1_affine};

use super::limbs52::{carried_sum, reduce_once, splat, MASK52};

/// 52-bit limbs an element has.
const LIMBS: usize = 8;

/// p in 52-bit limbs.
const P52: [u64; LIMBS] = [
    0xeffffffffaaab,
    0xfeb153ffffb9f,
    0x6b0f6241eabff,
    0x12bf6730d2a0f,
    0x764774b84f385,
    0x1ba7b6434bacd,
    0x1ea397fe69a4b,
    0x1a011,
];

/// −p^−1 mod 2^52, the Montgomery step's factor.
const P_NEG_INV: u64 = 0x3fffcfffcfffd;

/// 2^448 mod p. A product with it takes blst's form (x·2^384) to ours (x·2^416); the tests
/// derive the other constants from it.
#[cfg(test)]
const TO_LANE_FORM: [u64; LIMBS] = [
    0x7fde37dba9366,
    0x4e27525bc342b,
    0x1f5b1e9778489,
    0xb872b2b91b9dc,
    0xb206f497dfcaf,
    0x4137cc89a9b0b,
    0xd9d20d7e39959,
    0x411c,
];

/// 2^384 mod p. A product with it takes our form to blst's.
const TO_BLST_FORM: [u64; LIMBS] = [
    0x900000002fffd,
    0xbc40c0002760,
    0x3c758baebf400,
    0x57455f4898575,
    0xd77ce58537052,
    0x71a97a256ec6,
    0xec3fa80e4935c,
    0x15f65,
];

/// Eight field elements in registers.
#[derive(Clone, Copy)]
pub struct Fp8([__m512i; LIMBS]);

/// Eight field elements in memory, limb k of lane j at `[8k + j]`.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct Fp8Mem(pub [u64; 8 * LIMBS]);

impl Default for Fp8Mem {
    fn default() -> Self {
        Self([0; 8 * LIMBS])
    }
}

/// 2^416 mod p: 1 in our form.
const LANE_ONE: [u64; LIMBS] = [
    0x6480ea8e9b9af,
    0x65766c8fe444f,
    0x8b540fea96f7d,
    0x3b2ee82efd422,
    0xa6723e5f0ade5,
    0xff6eb6fdd4230,
    0xe06ef23c24a25,
    0x14c8e,
];

/// 2^480 mod p: a product with it takes blst's inverse of v (2^768/v) to ours (2^832/v).
const INVERSE_TO_LANE_FORM: [u64; LIMBS] = [
    0x6a0c0a653f6fc,
    0xdf21bc8d58e0c,
    0x63665a0c7a249,
    0xf6cc74d9c6d43,
    0xb33c525492b6b,
    0xc5935a887f8c8,
    0x487a48f1eb623,
    0x1447c,
];

/// 2p in 52-bit limbs: values below 4p are reduced by subtracting it, then p.
const P52_TWICE: [u64; LIMBS] = twice(&P52);

/// `2·m` with the carries carried (m below 2^415).
const fn twice(m: &[u64; LIMBS]) -> [u64; LIMBS] {
    let mut out = [0u64; LIMBS];
    let mut carry = 0;
    let mut k = 0;
    while k < LIMBS {
        let s = 2 * m[k] + carry;
        out[k] = s & MASK52;
        carry = s >> 52;
        k += 1;
    }
    out
}

/// Eight affine G1 points in blst's form (x·2^384, y·2^384), reduced below p: a lane of it is
/// a bucket's sum.
#[derive(Clone, Copy, Default)]
pub struct Affine8Mem {
    /// x of the eight points.
    pub x: Fp8Mem,
    /// y of the eight points.
    pub y: Fp8Mem,
}

impl Affine8Mem {
    /// Lane j as blst's affine point.
    pub fn lane(&self, j: usize) -> blst_p1_affine {
        blst_p1_affine {
            x: blst_fp {
                l: self.x.lane_words(j),
            },
            y: blst_fp {
                l: self.y.lane_words(j),
            },
        }
    }

    /// Sets lane j to blst's affine point `p` (reduced below p, as blst keeps it).
    pub fn set_lane(&mut self, j: usize, p: &blst_p1_affine) {
        self.x.set_lane_words(j, &p.x.l);
        self.y.set_lane_words(j, &p.y.l);
    }
}

impl Fp8Mem {
    /// Lane j's value (below 2^384) as six 64-bit words.
    pub fn lane_words(&self, j: usize) -> [u64; 6] {
        let mut w = [0u64; 6];
        for k in 0..LIMBS {
            let limb = self.0[LIMBS * k + j];
            let (word, shift) = (52 * k / 64, 52 * k % 64);
            w[word] |= limb << shift;
            if shift > 12 && word + 1 < 6 {
                w[word + 1] |= limb >> (64 - shift);
            }
        }
        w
    }

    /// Sets lane j to the value of six 64-bit words.
    pub fn set_lane_words(&mut self, j: usize, w: &[u64; 6]) {
        for k in 0..LIMBS {
            let (word, shift) = (52 * k / 64, 52 * k % 64);
            let mut v = w[word] >> shift;
            if shift > 12 && word + 1 < 6 {
                v |= w[word + 1] << (64 - shift);
            }
            self.0[LIMBS * k + j] = v & MASK52;
        }
    }
}

#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn constant(c: &[u64; LIMBS]) -> Fp8 {
    let mut out = [_mm512_setzero_si512(); LIMBS];
    for k in 0..LIMBS {
        out[k] = splat(c[k]);
    }
    Fp8(out)
}

/// Loads eight elements.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn load(m: &Fp8Mem) -> Fp8 {
    let p = m.0.as_ptr() as *const __m512i;
    let mut out = [_mm512_setzero_si512(); LIMBS];
    for k in 0..LIMBS {
        out[k] = _mm512_load_si512(p.add(k));
    }
    Fp8(out)
}

/// Montgomery product a·b·2^−416 mod p, below 2p, for a and b below 2^17·p (normalized limbs).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn mul(a: &Fp8, b: &Fp8) -> Fp8 {
    let zero = _mm512_setzero_si512();
    let n_inv = splat(P_NEG_INV);
    let mut t = [zero; LIMBS + 1];
    for bi in b.0 {
        for k in 0..LIMBS {
            t[k] = _mm512_madd52lo_epu64(t[k], a.0[k], bi);
            t[k + 1] = _mm512_madd52hi_epu64(t[k + 1], a.0[k], bi);
        }
        // m makes t + m·p divisible by 2^52 (madd52lo reads t0's low 52 bits).
        let m = _mm512_madd52lo_epu64(zero, t[0], n_inv);
        for k in 0..LIMBS {
            let pk = splat(P52[k]);
            t[k] = _mm512_madd52lo_epu64(t[k], m, pk);
            t[k + 1] = _mm512_madd52hi_epu64(t[k + 1], m, pk);
        }
        let carry = _mm512_srli_epi64::<52>(t[0]);
        for k in 0..LIMBS {
            t[k] = t[k + 1];
        }
        t[0] = _mm512_add_epi64(t[0], carry);
        t[LIMBS] = zero;
    }
    normalized([t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]])
}

/// a²·2^−416 mod p, below 2p, for a below 2^17·p: [`mul`] with each cross product
/// computed once and doubled (72 limb products instead of 128, then the same reduction).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn square(a: &Fp8) -> Fp8 {
    let zero = _mm512_setzero_si512();
    let mut t = [zero; 2 * LIMBS];
    for i in 0..LIMBS {
        for j in i + 1..LIMBS {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a.0[i], a.0[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a.0[i], a.0[j]);
        }
    }
    for k in 0..2 * LIMBS {
        t[k] = _mm512_add_epi64(t[k], t[k]);
    }
    for i in 0..LIMBS {
        t[2 * i] = _mm512_madd52lo_epu64(t[2 * i], a.0[i], a.0[i]);
        t[2 * i + 1] = _mm512_madd52hi_epu64(t[2 * i + 1], a.0[i], a.0[i]);
    }
    // Montgomery reduction, a limb a round; limbs stay below 2^58.
    let n_inv = splat(P_NEG_INV);
    for i in 0..LIMBS {
        let m = _mm512_madd52lo_epu64(zero, t[i], n_inv);
        for k in 0..LIMBS {
            let pk = splat(P52[k]);
            t[i + k] = _mm512_madd52lo_epu64(t[i + k], m, pk);
            t[i + k + 1] = _mm512_madd52hi_epu64(t[i + k + 1], m, pk);
        }
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srli_epi64::<52>(t[i]));
    }
    normalized([t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15]])
}

/// Limbs holding a few 52-bit sums each, carried up to 52 bits a limb.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn normalized(t: [__m512i; LIMBS]) -> Fp8 {
    Fp8(carried_sum(t, [_mm512_setzero_si512(); LIMBS]))
}

/// Σ plus − Σ minus + k·p with normalized limbs; the caller's bounds keep it positive and
/// below 2^416.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn combine<const P: usize, const M: usize>(
    plus: [&Fp8; P],
    minus: [&Fp8; M],
    k: u64,
) -> Fp8 {
    let mask = splat(MASK52);
    let mut out = [_mm512_setzero_si512(); LIMBS];
    let mut carry = _mm512_setzero_si512();
    for l in 0..LIMBS {
        let mut s = _mm512_add_epi64(splat(P52[l] * k), carry);
        for a in plus {
            s = _mm512_add_epi64(s, a.0[l]);
        }
        for b in minus {
            s = _mm512_sub_epi64(s, b.0[l]);
        }
        // Limbs may go negative: an arithmetic shift carries the borrow.
        carry = _mm512_srai_epi64::<52>(s);
        out[l] = _mm512_and_si512(s, mask);
    }
    Fp8(out)
}

/// Lanes whose value (below 2p) is 0 mod p: it is 0 or p.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn zero_mod_p(a: &Fp8) -> __mmask8 {
    let zero = _mm512_setzero_si512();
    let (mut any, mut any_off_p) = (zero, zero);
    for k in 0..LIMBS {
        any = _mm512_or_si512(any, a.0[k]);
        any_off_p = _mm512_or_si512(any_off_p, _mm512_xor_si512(a.0[k], splat(P52[k])));
    }
    _mm512_cmpeq_epi64_mask(any, zero) | _mm512_cmpeq_epi64_mask(any_off_p, zero)
}

/// a (below 2p) reduced below p.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn canonical(a: &Fp8) -> Fp8 {
    Fp8(reduce_once(a.0, &P52))
}

/// blst's six 64-bit words (one register each) to 52-bit limbs.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn from_words(w: &[__m512i; 6]) -> Fp8 {
    let mask = splat(MASK52);
    let mut out = [_mm512_setzero_si512(); LIMBS];
    for (j, limb) in out.iter_mut().enumerate() {
        let (word, shift) = (52 * j / 64, (52 * j % 64) as u64);
        let mut v = _mm512_srlv_epi64(w[word], splat(shift));
        if shift > 12 && word + 1 < 6 {
            v = _mm512_or_si512(v, _mm512_sllv_epi64(w[word + 1], splat(64 - shift)));
        }
        *limb = _mm512_and_si512(v, mask);
    }
    Fp8(out)
}

/// Where a lane of [`gather_affine`] found its point.
pub struct Gathered {
    /// x in blst's form.
    pub x: Fp8,
    /// y in blst's form, negated in the lanes asked, below p.
    pub y: Fp8,
    /// Lanes whose point is the point at infinity (blst's all-zero affine encoding).
    pub infinity: __mmask8,
}

/// Reads, for each lane in `active`, the affine point of blst's layout (x then y, six words
/// each) starting at word `offsets[j]` of `base`; negates y in the lanes of `negate`.
///
/// # Safety
/// `base + offsets[j]` must start a `blst_p1_affine` in every active lane.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn gather_affine(
    base: *const u64,
    offsets: &[u64; 8],
    active: __mmask8,
    negate: __mmask8,
) -> Gathered {
    let zero = _mm512_setzero_si512();
    let offsets = _mm512_loadu_si512(offsets.as_ptr() as *const __m512i);
    let mut words = [[zero; 6]; 2];
    let mut any = zero;
    for (c, coordinate) in words.iter_mut().enumerate() {
        for (k, word) in coordinate.iter_mut().enumerate() {
            let at = _mm512_add_epi64(offsets, splat((6 * c + k) as u64));
            *word = _mm512_mask_i64gather_epi64::<8>(zero, active, at, base as *const i64);
            any = _mm512_or_si512(any, *word);
        }
    }
    let x = from_words(&words[0]);
    let y = from_words(&words[1]);
    let minus_y = combine([], [&y], 1);
    let mut y_out = y.0;
    for k in 0..LIMBS {
        y_out[k] = _mm512_mask_blend_epi64(negate, y.0[k], minus_y.0[k]);
    }
    Gathered {
        x,
        y: canonical(&Fp8(y_out)),
        infinity: _mm512_cmpeq_epi64_mask(any, zero) & active,
    }
}

/// Stores the lanes of `mask` of `v`.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn store_where(m: &mut Fp8Mem, v: &Fp8, mask: __mmask8) {
    let at = m.0.as_mut_ptr() as *mut __m512i;
    for k in 0..LIMBS {
        let old = _mm512_load_si512(at.add(k));
        _mm512_store_si512(at.add(k), _mm512_mask_blend_epi64(mask, old, v.0[k]));
    }
}

/// Stores eight elements.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn store(m: &mut Fp8Mem, v: &Fp8) {
    let at = m.0.as_mut_ptr() as *mut __m512i;
    for k in 0..LIMBS {
        _mm512_store_si512(at.add(k), v.0[k]);
    }
}

/// `x2 − x1 + p` for x1 and x2 below p (so below 2p and never negative), and the lanes where
/// it is 0 mod p: x1 = x2, where the chord formula does not hold (a doubling or a cancellation).
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn x_difference(x1: &Fp8, x2: &Fp8) -> (Fp8, __mmask8) {
    let d = combine([x2], [x1], 1);
    let same_x = zero_mod_p(&d);
    (d, same_x)
}

/// `d` where `keep`, else 1 in our form: the lanes an inversion must skip get a value that
/// has an inverse.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn or_one(d: &Fp8, keep: __mmask8) -> Fp8 {
    let mut out = d.0;
    for k in 0..LIMBS {
        out[k] = _mm512_mask_blend_epi64(keep, splat(LANE_ONE[k]), d.0[k]);
    }
    Fp8(out)
}

/// The chord sum of the affine points (x1, y1) and (x2, y2) (blst's form, below p) with x1 ≠ x2,
/// given `inverse` = 2^832/(x2 − x1 + p), as [`invert_all`] leaves the difference of
/// [`x_difference`]. The sum is in blst's form, below p.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn add_with_inverse(
    x1: &Fp8,
    y1: &Fp8,
    x2: &Fp8,
    y2: &Fp8,
    inverse: &Fp8,
) -> (Fp8, Fp8) {
    // (y2 − y1)·2^384 · 2^832/((x2 − x1)·2^384) · 2^−416: λ in our form.
    let lambda = mul(&combine([y2], [y1], 1), inverse);
    // λ²·2^416, then ·2^384·2^−416: blst's form.
    let lambda_squared = mul(&square(&lambda), &constant(&TO_BLST_FORM));
    let x3 = below_p_from_4p(&combine([&lambda_squared], [x1, x2], 2));
    // λ·2^416 · (x1 − x3)·2^384 · 2^−416: blst's form.
    let y3 = below_p_from_4p(&combine([&mul(&lambda, &combine([x1], [&x3], 1))], [y1], 1));
    (x3, y3)
}

/// a (below 4p) reduced below p.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn below_p_from_4p(a: &Fp8) -> Fp8 {
    Fp8(reduce_once(reduce_once(a.0, &P52_TWICE), &P52))
}

/// Replaces every lane value v of `values` (normalized, below 2^17·p, not 0 mod p) by
/// 2^832/v mod p, below 2p: in our form, the inverse of the value v stands for. One field
/// inversion serves them all: products down the slice, eight lanes inverted together
/// ([`invert_lanes`]), then two products an element on the way back. `prefix` is scratch,
/// at least as long as `values`.
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn invert_all(values: &mut [Fp8Mem], prefix: &mut [Fp8Mem]) {
    assert!(prefix.len() >= values.len(), "scratch for every element");
    let mut product = constant(&LANE_ONE);
    for (v, p) in values.iter().zip(prefix.iter_mut()) {
        store(p, &product);
        product = mul(&product, &load(v));
    }
    let mut inverse = invert_lanes(&product);
    for (v, p) in values.iter_mut().zip(prefix.iter()).rev() {
        let value = load(v);
        store(v, &mul(&inverse, &load(p)));
        inverse = mul(&inverse, &value);
    }
}

/// 2^832/v mod p for each lane value v (below 2p, not 0 mod p), through blst: the eight
/// lanes' product is inverted once (`blst_fp_inverse`) and split by Montgomery's trick.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn invert_lanes(v: &Fp8) -> Fp8 {
    let mut values = Fp8Mem::default();
    store(&mut values, &canonical(v));
    let lanes: [blst_fp; 8] = std::array::from_fn(|j| blst_fp {
        l: values.lane_words(j),
    });
    // blst's product is a·b·2^−384; its inverse of a is 2^768/a.
    let mut running = [lanes[0]; 8];
    for j in 1..8 {
        blst_fp_mul(&mut running[j], &running[j - 1], &lanes[j]);
    }
    let mut inverse = blst_fp::default();
    blst_fp_inverse(&mut inverse, &running[7]);
    let mut out = [blst_fp::default(); 8];
    for j in (1..8).rev() {
        blst_fp_mul(&mut out[j], &inverse, &running[j - 1]);
        let carried = inverse;
        blst_fp_mul(&mut inverse, &carried, &lanes[j]);
    }
    out[0] = inverse;
    for (j, inverse) in out.iter().enumerate() {
        values.set_lane_words(j, &inverse.l);
    }
    // 2^768/v · 2^480 · 2^−416 = 2^832/v.
    mul(&load(&values), &constant(&INVERSE_TO_LANE_FORM))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::ifma::Ifma;
    use blst::{blst_p1, blst_p1_add_or_double_affine, blst_p1_from_affine, blst_p1_to_affine};
    use blstrs::{G1Affine, G1Projective};
    use group::{Curve, Group};
    use rand_chacha::rand_core::SeedableRng;

    /// Eight points in lanes, and blst's affine form of each.
    fn random_points(rng: &mut rand_chacha::ChaCha8Rng) -> (Affine8Mem, [blst_p1_affine; 8]) {
        let mut lanes = Affine8Mem::default();
        let points: [blst_p1_affine; 8] = std::array::from_fn(|_| {
            let p = G1Projective::random(&mut *rng).to_affine();
            // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine.
            unsafe { std::mem::transmute::<G1Affine, blst_p1_affine>(p) }
        });
        for (j, p) in points.iter().enumerate() {
            lanes.set_lane(j, p);
        }
        (lanes, points)
    }

    #[test]
    fn constants_are_the_powers_of_two_they_name() {
        let Some(_) = Ifma::detect() else {
            eprintln!("no AVX-512 IFMA on this CPU: the lane arithmetic is not used here");
            return;
        };
        let mut got = [Fp8Mem::default(), Fp8Mem::default()];
        // SAFETY: the CPU has the features (detected above).
        unsafe {
            let to_lanes = constant(&TO_LANE_FORM);
            store(
                &mut got[0],
                &canonical(&mul(&to_lanes, &constant(&TO_BLST_FORM))),
            );
            store(&mut got[1], &canonical(&mul(&to_lanes, &to_lanes)));
        }
        for j in 0..8 {
            let lane = |m: &Fp8Mem| -> [u64; LIMBS] { std::array::from_fn(|k| m.0[LIMBS * k + j]) };
            assert_eq!(lane(&got[0]), LANE_ONE, "2^448 · 2^384 / 2^416");
            assert_eq!(lane(&got[1]), INVERSE_TO_LANE_FORM, "2^448 · 2^448 / 2^416");
        }
    }

    #[test]
    fn chord_sums_with_shared_inversion_match_blst() {
        let Some(_) = Ifma::detect() else {
            eprintln!("no AVX-512 IFMA on this CPU: the lane arithmetic is not used here");
            return;
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let groups = 5;
        let pairs: Vec<_> = (0..groups)
            .map(|_| (random_points(&mut rng), random_points(&mut rng)))
            .collect();
        let mut differences = vec![Fp8Mem::default(); groups];
        let mut prefix = vec![Fp8Mem::default(); groups];
        let mut sums = vec![Affine8Mem::default(); groups];
        // SAFETY: the CPU has the features (detected above).
        unsafe {
            for (((a, _), (b, _)), d) in pairs.iter().zip(differences.iter_mut()) {
                let (difference, same_x) = x_difference(&load(&a.x), &load(&b.x));
                assert_eq!(same_x, 0, "random points have distinct x");
                store(d, &difference);
            }
            invert_all(&mut differences, &mut prefix);
            for (((a, _), (b, _)), (d, sum)) in pairs.iter().zip(differences.iter().zip(&mut sums))
            {
                let (x3, y3) =
                    add_with_inverse(&load(&a.x), &load(&a.y), &load(&b.x), &load(&b.y), &load(d));
                store(&mut sum.x, &x3);
                store(&mut sum.y, &y3);
            }
        }
        for (((_, a), (_, b)), sum) in pairs.iter().zip(&sums) {
            for j in 0..8 {
                let (mut p, mut want) = (blst_p1::default(), blst_p1_affine::default());
                // SAFETY: blst reads and writes whole points.
                unsafe {
                    blst_p1_from_affine(&mut p, &a[j]);
                    blst_p1_add_or_double_affine(&mut p, &p, &b[j]);
                    blst_p1_to_affine(&mut want, &p);
                }
                let got = sum.lane(j);
                assert_eq!((got.x.l, got.y.l), (want.x.l, want.y.l), "lane {j}");
            }
        }
    }

    #[test]
    fn words_and_limbs_round_trip() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let (lanes, points) = random_points(&mut rng);
        for (j, p) in points.iter().enumerate() {
            assert_eq!(lanes.x.lane_words(j), p.x.l);
            assert_eq!(lanes.lane(j).y.l, p.y.l);
        }
    }
}
