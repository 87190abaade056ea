//! Eight BLS12-381 base-field elements at once on AVX-512 IFMA, and the G1 additions a
//! Pippenger bucket needs, for the dense CPU MSM ([`super::msm_lanes`]).
//!
//! A field element is eight 52-bit limbs (416 bits, p has 381), limb k of the eight lanes in
//! one register. Products are Montgomery products in radix 2^52, R = 2^416; blst keeps its
//! elements in Montgomery form with R = 2^384. Values are only partly reduced: a product is
//! below 2p for any two inputs below 2^17·p, so sums and differences (plus a multiple of p to
//! stay positive) go straight into the next product, and only the exceptional-case test and
//! the conversion back to blst reduce fully.
//!
//! The points of a bucket are read in blst's form and never converted: a bucket keeps its ZZ
//! and ZZZ coordinates times an extra 2^32, so `mul(x·2^384, ZZ·2^448)` is `x·ZZ` in our form
//! (2^416) and `mul(ZZ·2^448, PP)` keeps the extra factor. Only a bucket's first point and its
//! final value pay a conversion.
//!
//! Every function here needs AVX-512F and AVX-512 IFMA: callers hold an [`super::ifma::Ifma`].

// Limb loops index several arrays in step (limb k of a, b, p and the output).
#![allow(clippy::needless_range_loop)]

use std::arch::x86_64::*;

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

/// 2^448 mod p. A product with it takes blst's form (x·2^384) to ours (x·2^416), and it is
/// 1·2^32 in our form: a fresh bucket's ZZ and ZZZ.
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

/// 2^384 mod p. A product with it takes our form to blst's, and a bucket's ZZ·2^448 to ZZ·2^416.
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

/// Eight G1 points in XYZZ coordinates (x = X/ZZ, y = Y/ZZZ): X and Y in our form, ZZ and ZZZ
/// times 2^32 (see the module doc).
#[derive(Clone, Copy)]
pub struct Xyzz8 {
    x: Fp8,
    y: Fp8,
    zz: Fp8,
    zzz: Fp8,
}

/// [`Xyzz8`] in memory: a lane of it is a bucket's running sum.
#[derive(Clone, Copy, Default)]
pub struct Xyzz8Mem {
    /// X, Y, ZZ·2^32, ZZZ·2^32.
    pub coords: [Fp8Mem; 4],
}

impl Xyzz8Mem {
    /// Lane j's limbs, coordinate by coordinate.
    pub fn lane(&self, j: usize) -> [[u64; LIMBS]; 4] {
        self.coords
            .map(|c| std::array::from_fn(|k| c.0[LIMBS * k + j]))
    }

    /// Sets lane j's limbs.
    pub fn set_lane(&mut self, j: usize, limbs: &[[u64; LIMBS]; 4]) {
        for (c, l) in self.coords.iter_mut().zip(limbs) {
            for k in 0..LIMBS {
                c.0[LIMBS * k + j] = l[k];
            }
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
unsafe fn load(m: &Fp8Mem) -> Fp8 {
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

/// 52-bit limbs of a value below 2^384 to six 64-bit words.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn to_words(a: &Fp8) -> [__m512i; 6] {
    let mut out = [_mm512_setzero_si512(); 6];
    for (i, word) in out.iter_mut().enumerate() {
        let (lo_bit, hi_bit) = (64 * i, 64 * i + 64);
        for j in 0..LIMBS {
            let (lo, hi) = (52 * j, 52 * j + 52);
            if hi <= lo_bit || lo >= hi_bit {
                continue;
            }
            let part = if lo >= lo_bit {
                _mm512_sllv_epi64(a.0[j], splat((lo - lo_bit) as u64))
            } else {
                _mm512_srlv_epi64(a.0[j], splat((lo_bit - lo) as u64))
            };
            *word = _mm512_or_si512(*word, part);
        }
    }
    out
}

/// Where a lane of [`gather_affine`] found its point.
pub struct Gathered {
    /// x in blst's form.
    pub x: Fp8,
    /// y in blst's form, negated in the lanes asked.
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
        y: Fp8(y_out),
        infinity: _mm512_cmpeq_epi64_mask(any, zero) & active,
    }
}

/// Loads eight XYZZ points.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn load_xyzz(m: &Xyzz8Mem) -> Xyzz8 {
    Xyzz8 {
        x: load(&m.coords[0]),
        y: load(&m.coords[1]),
        zz: load(&m.coords[2]),
        zzz: load(&m.coords[3]),
    }
}

/// Stores the lanes of `mask` of eight XYZZ points.
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn store_xyzz_where(m: &mut Xyzz8Mem, p: &Xyzz8, mask: __mmask8) {
    for (c, v) in m.coords.iter_mut().zip([&p.x, &p.y, &p.zz, &p.zzz]) {
        let at = c.0.as_mut_ptr() as *mut __m512i;
        for k in 0..LIMBS {
            let old = _mm512_load_si512(at.add(k));
            _mm512_store_si512(at.add(k), _mm512_mask_blend_epi64(mask, old, v.0[k]));
        }
    }
}

/// acc + (x2, y2) (the affine point in blst's form), and the lanes where the sum formula does
/// not hold: the point's x equals acc's, so the sum is a doubling or the point at infinity.
/// acc must not be the point at infinity.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn add_affine(acc: &Xyzz8, x2: &Fp8, y2: &Fp8) -> (Xyzz8, __mmask8) {
    // Bounds (in p): X < 8, Y < 4, ZZ and ZZZ < 2, every product < 2.
    let u2 = mul(x2, &acc.zz);
    let s2 = mul(y2, &acc.zzz);
    let p = combine([&u2], [&acc.x], 8);
    let r = combine([&s2], [&acc.y], 4);
    let pp = square(&p);
    let exceptional = zero_mod_p(&pp);
    let ppp = mul(&p, &pp);
    let q = mul(&acc.x, &pp);
    let r2 = square(&r);
    let x3 = combine([&r2], [&ppp, &q, &q], 6);
    let q_minus_x3 = combine([&q], [&x3], 8);
    let y3 = combine([&mul(&r, &q_minus_x3)], [&mul(&acc.y, &ppp)], 2);
    let sum = Xyzz8 {
        x: x3,
        y: y3,
        zz: mul(&acc.zz, &pp),
        zzz: mul(&acc.zzz, &ppp),
    };
    (sum, exceptional)
}

/// Eight buckets started with the affine points (x2, y2) in blst's form.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn from_affine(x2: &Fp8, y2: &Fp8) -> Xyzz8 {
    let to_lanes = constant(&TO_LANE_FORM);
    Xyzz8 {
        x: mul(x2, &to_lanes),
        y: mul(y2, &to_lanes),
        zz: to_lanes,
        zzz: to_lanes,
    }
}

/// Eight points in blst's Jacobian form (X, Y, Z; x = X/Z², y = Y/Z³), six words a
/// coordinate, reduced below p.
pub type JacobianWords = [[__m512i; 6]; 3];

/// XYZZ to Jacobian (X·ZZ², Y·ZZZ², ZZZ) in blst's form.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn to_jacobian(p: &Xyzz8) -> JacobianWords {
    let to_blst = constant(&TO_BLST_FORM);
    let zz = mul(&p.zz, &to_blst);
    let zzz = mul(&p.zzz, &to_blst);
    let x = mul(&p.x, &square(&zz));
    let y = mul(&p.y, &square(&zzz));
    [x, y, zzz].map(|c| to_words(&canonical(&mul(&c, &to_blst))))
}

/// Jacobian points in blst's form to XYZZ (X, Y, Z², Z³).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma")]
pub unsafe fn from_jacobian(p: &JacobianWords) -> Xyzz8 {
    let to_lanes = constant(&TO_LANE_FORM);
    let [x, y, z] = p.map(|c| mul(&from_words(&c), &to_lanes));
    let zz = square(&z);
    let zzz = mul(&zz, &z);
    Xyzz8 {
        x,
        y,
        zz: mul(&zz, &to_lanes),
        zzz: mul(&zzz, &to_lanes),
    }
}

/// Eight lanes of six words from memory (lane j's words at `words[j]`).
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn words_from(words: &[[u64; 6]; 8]) -> [__m512i; 6] {
    let mut out = [_mm512_setzero_si512(); 6];
    for (k, v) in out.iter_mut().enumerate() {
        *v = _mm512_set_epi64(
            words[7][k] as i64,
            words[6][k] as i64,
            words[5][k] as i64,
            words[4][k] as i64,
            words[3][k] as i64,
            words[2][k] as i64,
            words[1][k] as i64,
            words[0][k] as i64,
        );
    }
    out
}

/// Six words of eight lanes to memory (lane j's words at `[j]`).
#[inline]
#[target_feature(enable = "avx512f")]
pub unsafe fn words_to(v: &[__m512i; 6]) -> [[u64; 6]; 8] {
    let mut lanes = [[0u64; 8]; 6];
    for (k, l) in lanes.iter_mut().enumerate() {
        _mm512_storeu_si512(l.as_mut_ptr() as *mut __m512i, v[k]);
    }
    std::array::from_fn(|j| std::array::from_fn(|k| lanes[k][j]))
}
