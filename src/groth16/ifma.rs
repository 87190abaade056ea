//! Eight BLS12-381 scalars at once with AVX-512 IFMA, for the CPU NTT's butterflies.
//!
//! A blst scalar multiplication costs ~25 ns here and is most of a butterfly. AVX-512 IFMA
//! (`vpmadd52luq`/`vpmadd52huq`, on Intel since Ice Lake and AMD since Zen 4) multiplies eight
//! 52-bit limb pairs per instruction, so eight Montgomery products in radix 2^52 cost about
//! what two scalar ones do.
//!
//! The values stay in blst's representation: Montgomery form with R = 2^256, four 64-bit
//! limbs, fully reduced. Lanes re-limb them to five 52-bit limbs. A product in radix 2^52
//! divides by 2^260, not 2^256, so the twiddles a transform multiplies by are kept scaled by
//! 2^4 ([`scaled_twiddle`]): Montgomery(x·2^256, w·2^260) = x·w·2^256. Every result is reduced
//! below r, so the bytes equal blst's for the same inputs.
//!
//! [`Ifma::detect`] is the only way to get an [`Ifma`], and it checks the CPU first; every
//! method is safe to call on such a value.

use blstrs::Scalar;

/// Scalars one vector holds.
pub const LANES: usize = 8;

/// The factor (2^4) by which a twiddle given to [`Ifma`] must be scaled: see the module doc.
pub fn scaled_twiddle(w: Scalar) -> Scalar {
    w * Scalar::from(16u64)
}

/// Eight scalars in the vector code's own layout: limb k (52 bits) of lane j at `[8k + j]`.
/// Kept across several stages so the transposes from and to blst's layout are paid once.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct LaneScalars([u64; 5 * LANES]);

impl Default for LaneScalars {
    fn default() -> Self {
        Self([0; 5 * LANES])
    }
}

/// Proof that this CPU has AVX-512F and AVX-512 IFMA; its methods run the vector code.
#[derive(Clone, Copy, Debug)]
pub struct Ifma(());

impl Ifma {
    /// An [`Ifma`] if this CPU has the instructions (and `CUZK_NO_IFMA` is not set, which
    /// forces blst's scalar arithmetic); checked once.
    pub fn detect() -> Option<Self> {
        static DETECTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let yes =
            *DETECTED.get_or_init(|| std::env::var_os("CUZK_NO_IFMA").is_none() && cpu_has_ifma());
        yes.then_some(Self(()))
    }

    /// Eight scalars in blst's layout to lane form.
    pub fn to_lanes(self, from: &[Scalar], to: &mut LaneScalars) {
        assert_eq!(from.len(), LANES, "eight scalars");
        // SAFETY: the CPU has the features (`self` exists); eight scalars (checked).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::to_lanes(from.as_ptr(), to)
        }
    }

    /// Eight scalars in lane form back to blst's layout.
    pub fn from_lanes(self, from: &LaneScalars, to: &mut [Scalar]) {
        assert_eq!(to.len(), LANES, "eight scalars");
        // SAFETY: as in `to_lanes`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::from_lanes(from, to.as_mut_ptr())
        }
    }

    /// Eight butterflies on scalars in lane form, the twiddles `w` scaled: decimation in time
    /// (`dit`: x + w·y, x − w·y) or in frequency (x + y, (x − y)·w).
    pub fn butterflies_lanes(
        self,
        dit: bool,
        x: &mut LaneScalars,
        y: &mut LaneScalars,
        w: &LaneScalars,
    ) {
        // SAFETY: the CPU has the features (`self` exists); references are valid.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::butterflies_lanes(dit, x, y, w)
        }
    }

    /// The three radix-2 stages of half 1, 2 and 4 (in that order for DIT, the reverse for
    /// DIF) over two groups of eight scalars in lane form, `a` and `b`; `w` holds each stage's
    /// twiddles as the lanes need them ([`small_stage_twiddles`], in lane form).
    pub fn small_stages_lanes(
        self,
        dit: bool,
        a: &mut LaneScalars,
        b: &mut LaneScalars,
        w: &[LaneScalars; 3],
    ) {
        // SAFETY: as in `butterflies_lanes`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::small_stages_lanes(dit, a, b, w)
        }
    }

    /// out[k] ← a[k]·b for eight scalars in lane form, all scaled as twiddles (so is the
    /// product).
    pub fn mul_scaled_lanes(self, out: &mut LaneScalars, a: &LaneScalars, b: Scalar) {
        // SAFETY: as in `butterflies_lanes`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::mul_scaled_lanes(out, a, b)
        }
    }

    /// x[k] ← x[k]·a[k]·b for eight scalars, `a` and `b` scaled as twiddles.
    pub fn scale8(self, x: &mut [Scalar], a: &[Scalar], b: Scalar) {
        assert!(x.len() == LANES && a.len() == LANES, "eight scalars");
        // SAFETY: the CPU has the features (`self` exists); 8 scalars each (checked).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::scale8(x.as_mut_ptr(), a.as_ptr(), b)
        }
    }

    /// a[k] ← a[k]·b[k] − c[k] for eight scalars (none scaled).
    pub fn mul_sub8(self, a: &mut [Scalar], b: &[Scalar], c: &[Scalar]) {
        assert!(
            a.len() == LANES && b.len() == LANES && c.len() == LANES,
            "eight scalars"
        );
        // SAFETY: as in `scale8`.
        #[cfg(target_arch = "x86_64")]
        unsafe {
            x86::mul_sub8(a.as_mut_ptr(), b.as_ptr(), c.as_ptr())
        }
    }
}

/// The twiddles [`Ifma::small_stages_lanes`] reads, from a stage's twiddles `w(h, j)` (half h,
/// butterfly j < h), scaled. For each half h (1, 2, 4) eight lanes: lane k < 4 pairs the k-th
/// scalar of the first group whose bit h is clear with the one h above it, lane k >= 4 the
/// same in the second group; its butterfly is j = (that position) mod h.
pub fn small_stage_twiddles(w: impl Fn(usize, usize) -> Scalar) -> [Scalar; 3 * LANES] {
    let mut out = [Scalar::from(0u64); 3 * LANES];
    for (stage, h) in [1usize, 2, 4].into_iter().enumerate() {
        for (k, position) in x_positions(h).into_iter().enumerate() {
            out[stage * LANES + k] = scaled_twiddle(w(h, position % h));
        }
    }
    out
}

/// The positions in a group of eight whose bit h is clear, in order, for both groups: lane
/// k < 4 takes the first group's k-th, lane k >= 4 the second's.
const fn x_positions(h: usize) -> [usize; LANES] {
    let mut out = [0; LANES];
    let (mut p, mut k) = (0, 0);
    while p < LANES {
        if p & h == 0 {
            out[k] = p;
            out[k + 4] = p;
            k += 1;
        }
        p += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_ifma() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512ifma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_ifma() -> bool {
    false
}

// The limb loops index several limb arrays in step; iterators would hide that.
#[allow(clippy::needless_range_loop)]
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use blstrs::Scalar;

    use super::super::limbs52::{self, carried_sum, splat, MASK52};
    use super::LaneScalars;

    /// r, the scalar field's modulus, in 52-bit limbs.
    const R52: [u64; 5] = limbs52([
        0xffff_ffff_0000_0001,
        0x53bd_a402_fffe_5bfe,
        0x3339_d808_09a1_d805,
        0x73ed_a753_299d_7d48,
    ]);

    /// -r^-1 mod 2^52, the Montgomery step's factor.
    const R_NEG_INV: u64 = {
        // Newton's iteration for r^-1 mod 2^64 (each step doubles the correct bits).
        let r0 = 0xffff_ffff_0000_0001u64;
        let mut inv = 1u64;
        let mut i = 0;
        while i < 6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(r0.wrapping_mul(inv)));
            i += 1;
        }
        inv.wrapping_neg() & MASK52
    };

    const fn limbs52(a: [u64; 4]) -> [u64; 5] {
        [
            a[0] & MASK52,
            ((a[0] >> 52) | (a[1] << 12)) & MASK52,
            ((a[1] >> 40) | (a[2] << 24)) & MASK52,
            ((a[2] >> 28) | (a[3] << 36)) & MASK52,
            a[3] >> 16,
        ]
    }

    /// 2^8 in blst's form (2^264 mod r), 64-bit limbs.
    const SIXTEEN_SQUARED: [u64; 4] = [
        0x0000_0234_ffff_fdcb,
        0x2e75_0561_039e_f635,
        0xf156_3642_bdce_3c3e,
        0x247d_b575_276a_7fa6,
    ];

    /// A scalar's 64-bit limbs in blst's form (`Scalar` is `blst_fr`, transparently).
    fn limbs_of(s: &Scalar) -> &[u64; 4] {
        // SAFETY: `Scalar` is `#[repr(transparent)]` over `blst_fr`, a `#[repr(C)]` struct of
        // one `[u64; 4]`.
        unsafe { &*(s as *const Scalar as *const [u64; 4]) }
    }

    /// One scalar (64-bit limbs) in every lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn broadcast(limbs: &[u64; 4]) -> Lanes {
        split([
            splat(limbs[0]),
            splat(limbs[1]),
            splat(limbs[2]),
            splat(limbs[3]),
        ])
    }

    /// Eight scalars, limb k of lane j in `.0[k]` (52 bits each).
    #[derive(Clone, Copy)]
    struct Lanes([__m512i; 5]);

    /// Eight consecutive scalars from `p`, re-limbed.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load(p: *const Scalar) -> Lanes {
        let p = p as *const __m512i;
        // Each vector holds two scalars' four limbs.
        let (z0, z1, z2, z3) = (
            _mm512_loadu_si512(p),
            _mm512_loadu_si512(p.add(1)),
            _mm512_loadu_si512(p.add(2)),
            _mm512_loadu_si512(p.add(3)),
        );
        let lo = _mm512_set_epi64(13, 9, 5, 1, 12, 8, 4, 0);
        let hi = _mm512_set_epi64(15, 11, 7, 3, 14, 10, 6, 2);
        // Limbs 0,1 (and 2,3) of scalars 0..4 and 4..8.
        let a01 = _mm512_permutex2var_epi64(z0, lo, z1);
        let a23 = _mm512_permutex2var_epi64(z0, hi, z1);
        let b01 = _mm512_permutex2var_epi64(z2, lo, z3);
        let b23 = _mm512_permutex2var_epi64(z2, hi, z3);
        let first = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
        let second = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
        split([
            _mm512_permutex2var_epi64(a01, first, b01),
            _mm512_permutex2var_epi64(a01, second, b01),
            _mm512_permutex2var_epi64(a23, first, b23),
            _mm512_permutex2var_epi64(a23, second, b23),
        ])
    }

    /// Stores eight scalars at `p`, back in 64-bit limbs.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store(p: *mut Scalar, v: Lanes) {
        let [l0, l1, l2, l3] = join(v);
        // Limb pairs of scalars 0..4 (from l0/l1, l2/l3) and 4..8, then two scalars a vector.
        let first = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
        let second = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
        let a01 = _mm512_permutex2var_epi64(l0, first, l1); // s0l0 s0l1 s1l0 s1l1 ...
        let a23 = _mm512_permutex2var_epi64(l2, first, l3);
        let b01 = _mm512_permutex2var_epi64(l0, second, l1);
        let b23 = _mm512_permutex2var_epi64(l2, second, l3);
        let pair0 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
        let pair1 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
        let p = p as *mut __m512i;
        _mm512_storeu_si512(p, _mm512_permutex2var_epi64(a01, pair0, a23));
        _mm512_storeu_si512(p.add(1), _mm512_permutex2var_epi64(a01, pair1, a23));
        _mm512_storeu_si512(p.add(2), _mm512_permutex2var_epi64(b01, pair0, b23));
        _mm512_storeu_si512(p.add(3), _mm512_permutex2var_epi64(b01, pair1, b23));
    }

    /// 64-bit limbs to 52-bit limbs.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn split([a0, a1, a2, a3]: [__m512i; 4]) -> Lanes {
        let m = splat(MASK52);
        Lanes([
            _mm512_and_si512(a0, m),
            _mm512_and_si512(
                _mm512_or_si512(_mm512_srli_epi64::<52>(a0), _mm512_slli_epi64::<12>(a1)),
                m,
            ),
            _mm512_and_si512(
                _mm512_or_si512(_mm512_srli_epi64::<40>(a1), _mm512_slli_epi64::<24>(a2)),
                m,
            ),
            _mm512_and_si512(
                _mm512_or_si512(_mm512_srli_epi64::<28>(a2), _mm512_slli_epi64::<36>(a3)),
                m,
            ),
            _mm512_srli_epi64::<16>(a3),
        ])
    }

    /// 52-bit limbs (normalized) to 64-bit limbs.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn join(Lanes([l0, l1, l2, l3, l4]): Lanes) -> [__m512i; 4] {
        [
            _mm512_or_si512(l0, _mm512_slli_epi64::<52>(l1)),
            _mm512_or_si512(_mm512_srli_epi64::<12>(l1), _mm512_slli_epi64::<40>(l2)),
            _mm512_or_si512(_mm512_srli_epi64::<24>(l2), _mm512_slli_epi64::<28>(l3)),
            _mm512_or_si512(_mm512_srli_epi64::<36>(l3), _mm512_slli_epi64::<16>(l4)),
        ]
    }

    /// r in every lane, limb by limb.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn modulus() -> [__m512i; 5] {
        [
            splat(R52[0]),
            splat(R52[1]),
            splat(R52[2]),
            splat(R52[3]),
            splat(R52[4]),
        ]
    }

    /// `t - r` where that is not negative, else `t`: t's limbs are normalized and t < 2r.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn reduce_once(t: [__m512i; 5]) -> Lanes {
        Lanes(limbs52::reduce_once(t, &R52))
    }

    /// a + b mod r.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn add(a: Lanes, b: Lanes) -> Lanes {
        // a + b < 2r < 2^256 fits the top limb's 52 bits: no carry out.
        reduce_once(carried_sum(a.0, b.0))
    }

    /// a − b mod r.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn sub(a: Lanes, b: Lanes) -> Lanes {
        let m = splat(MASK52);
        let r = modulus();
        let mut d = [_mm512_setzero_si512(); 5];
        let mut borrow = _mm512_setzero_si512();
        for k in 0..5 {
            let x = _mm512_sub_epi64(_mm512_sub_epi64(a.0[k], b.0[k]), borrow);
            borrow = _mm512_srli_epi64::<63>(x);
            d[k] = _mm512_and_si512(x, m);
        }
        // Where a < b add r back (the sum's carry out of the top limb cancels the borrow).
        let negative = _mm512_test_epi64_mask(borrow, borrow);
        let back = carried_sum(d, r);
        let mut out = d;
        for k in 0..5 {
            out[k] = _mm512_mask_blend_epi64(negative, d[k], back[k]);
        }
        Lanes(out)
    }

    /// Montgomery product a·b·2^-260 mod r, reduced below r (a, b < r).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    unsafe fn mont_mul(a: Lanes, b: Lanes) -> Lanes {
        let r = modulus();
        let n_inv = splat(R_NEG_INV);
        let zero = _mm512_setzero_si512();
        let a = a.0;
        let mut t = [zero; 6];
        for bi in b.0 {
            for k in 0..5 {
                t[k] = _mm512_madd52lo_epu64(t[k], a[k], bi);
                t[k + 1] = _mm512_madd52hi_epu64(t[k + 1], a[k], bi);
            }
            // m makes t + m·r divisible by 2^52 (madd52lo reads t0's low 52 bits).
            let m = _mm512_madd52lo_epu64(zero, t[0], n_inv);
            for k in 0..5 {
                t[k] = _mm512_madd52lo_epu64(t[k], m, r[k]);
                t[k + 1] = _mm512_madd52hi_epu64(t[k + 1], m, r[k]);
            }
            let carry = _mm512_srli_epi64::<52>(t[0]);
            t = [_mm512_add_epi64(t[1], carry), t[2], t[3], t[4], t[5], zero];
        }
        // Normalize the limbs (each holds a few 52-bit sums); the value is below 2r.
        reduce_once(carried_sum([t[0], t[1], t[2], t[3], t[4]], [zero; 5]))
    }

    /// (x + w·y, x − w·y).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    unsafe fn dit(x: Lanes, y: Lanes, w: Lanes) -> (Lanes, Lanes) {
        let t = mont_mul(y, w);
        (add(x, t), sub(x, t))
    }

    /// (x + y, (x − y)·w).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    unsafe fn dif(x: Lanes, y: Lanes, w: Lanes) -> (Lanes, Lanes) {
        (add(x, y), mont_mul(sub(x, y), w))
    }

    /// Each limb vector of `a` and `b` through `_mm512_permutex2var_epi64` with `idx`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn permute(a: Lanes, idx: __m512i, b: Lanes) -> Lanes {
        let mut out = a.0;
        for k in 0..5 {
            out[k] = _mm512_permutex2var_epi64(a.0[k], idx, b.0[k]);
        }
        Lanes(out)
    }

    /// `_mm512_permutex2var_epi64` indices for the stage of half 2^stage: gathering the pairs'
    /// first scalars of groups A and B (lanes of A are 0..8, of B 8..16), their second ones,
    /// and putting the stage's results back into A and B (first halves 0..8, second 8..16).
    const SMALL_STAGE_INDICES: [[[i64; 8]; 4]; 3] = {
        let mut out = [[[0i64; 8]; 4]; 3];
        let mut stage = 0;
        while stage < 3 {
            let h = 1 << stage;
            let xs = super::x_positions(h);
            let mut k = 0;
            while k < 8 {
                let group = if k < 4 { 0 } else { 8 };
                out[stage][0][k] = (group + xs[k]) as i64;
                out[stage][1][k] = (group + xs[k] + h) as i64;
                out[stage][2 + k / 4][xs[k]] = k as i64;
                out[stage][2 + k / 4][xs[k] + h] = (k + 8) as i64;
                k += 1;
            }
            stage += 1;
        }
        out
    };

    /// Lanes read from lane form.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn read(v: &LaneScalars) -> Lanes {
        let p = v.0.as_ptr() as *const __m512i;
        Lanes([
            _mm512_load_si512(p),
            _mm512_load_si512(p.add(1)),
            _mm512_load_si512(p.add(2)),
            _mm512_load_si512(p.add(3)),
            _mm512_load_si512(p.add(4)),
        ])
    }

    /// Lanes written in lane form.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn write(v: &mut LaneScalars, l: Lanes) {
        let p = v.0.as_mut_ptr() as *mut __m512i;
        for k in 0..5 {
            _mm512_store_si512(p.add(k), l.0[k]);
        }
    }

    /// See `Ifma::to_lanes`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn to_lanes(from: *const Scalar, to: &mut LaneScalars) {
        write(to, load(from));
    }

    /// See `Ifma::from_lanes`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn from_lanes(from: &LaneScalars, to: *mut Scalar) {
        store(to, read(from));
    }

    /// See `Ifma::butterflies_lanes`.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) unsafe fn butterflies_lanes(
        dit_order: bool,
        x: &mut LaneScalars,
        y: &mut LaneScalars,
        w: &LaneScalars,
    ) {
        let (a, b) = if dit_order {
            dit(read(x), read(y), read(w))
        } else {
            dif(read(x), read(y), read(w))
        };
        write(x, a);
        write(y, b);
    }

    /// See `Ifma::mul_scaled_lanes`.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) unsafe fn mul_scaled_lanes(out: &mut LaneScalars, a: &LaneScalars, b: Scalar) {
        write(out, mont_mul(read(a), broadcast(limbs_of(&b))));
    }

    /// See `Ifma::small_stages_lanes`.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) unsafe fn small_stages_lanes(
        dit_order: bool,
        a: &mut LaneScalars,
        b: &mut LaneScalars,
        w: &[LaneScalars; 3],
    ) {
        let (x, y) = small_stages(dit_order, read(a), read(b), |stage| read(&w[stage]));
        write(a, x);
        write(b, y);
    }

    /// The half-1, 2 and 4 stages on two groups of eight (see `Ifma::small_stages_lanes`), each
    /// stage's twiddles from `w(stage)`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    unsafe fn small_stages(
        dit_order: bool,
        mut a: Lanes,
        mut b: Lanes,
        w: impl Fn(usize) -> Lanes,
    ) -> (Lanes, Lanes) {
        let order = if dit_order { [0, 1, 2] } else { [2, 1, 0] };
        for stage in order {
            let h = 1 << stage;
            let [gx, gy, back_a, back_b] = SMALL_STAGE_INDICES[stage]
                .map(|idx| _mm512_loadu_si512(idx.as_ptr() as *const __m512i));
            let (x, y) = (permute(a, gx, b), permute(a, gy, b));
            let (x, y) = if h == 1 {
                // Every twiddle of the half-1 stage is 1.
                (add(x, y), sub(x, y))
            } else if dit_order {
                dit(x, y, w(stage))
            } else {
                dif(x, y, w(stage))
            };
            (a, b) = (permute(x, back_a, y), permute(x, back_b, y));
        }
        (a, b)
    }

    /// See `Ifma::scale8`.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) unsafe fn scale8(x: *mut Scalar, a: *const Scalar, b: Scalar) {
        let b = broadcast(limbs_of(&b));
        let f = mont_mul(load(a), b);
        store(x, mont_mul(load(x), f));
    }

    /// See `Ifma::mul_sub8`.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(super) unsafe fn mul_sub8(a: *mut Scalar, b: *const Scalar, c: *const Scalar) {
        // a·b·2^-260 is ab/2^4 in blst's form; times 2^8 (its form 2^264) it is ab.
        let ab = mont_mul(mont_mul(load(a), load(b)), broadcast(&SIXTEEN_SQUARED));
        store(a, sub(ab, load(c)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use rand_chacha::rand_core::SeedableRng;

    /// Random scalars with the edge values mixed in: 0, 1, -1, and r - 2^k.
    fn scalars(rng: &mut impl rand::RngCore, n: usize) -> Vec<Scalar> {
        let mut v: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
        let edges = [
            Scalar::ZERO,
            Scalar::ONE,
            -Scalar::ONE,
            -Scalar::from(1u64 << 52),
        ];
        for (k, e) in edges.into_iter().enumerate() {
            v[k * 3 % n] = e;
        }
        v
    }

    #[test]
    fn eight_lane_arithmetic_equals_blst() {
        let Some(ifma) = Ifma::detect() else {
            eprintln!("no AVX-512 IFMA on this CPU: the vector arithmetic is not used here");
            return;
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let x = scalars(&mut rng, LANES);
            let y = scalars(&mut rng, LANES);
            let w = scalars(&mut rng, LANES);
            let scaled: Vec<Scalar> = w.iter().map(|w| scaled_twiddle(*w)).collect();

            let lanes = |v: &[Scalar]| {
                let mut out = LaneScalars::default();
                ifma.to_lanes(v, &mut out);
                out
            };
            let scalars_of = |l: &LaneScalars| {
                let mut out = vec![Scalar::ZERO; LANES];
                ifma.from_lanes(l, &mut out);
                out
            };
            assert_eq!(scalars_of(&lanes(&x)), x, "to lane form and back");

            let mut product = LaneScalars::default();
            ifma.mul_scaled_lanes(&mut product, &lanes(&scaled), scaled[5]);
            let product = scalars_of(&product);
            for k in 0..LANES {
                let want = scaled_twiddle(w[k] * w[5]);
                assert_eq!(product[k], want, "scaled product {k}");
            }
            let mut scaled_x = x.clone();
            ifma.scale8(&mut scaled_x, &scaled, scaled[3]);
            let mut fused = x.clone();
            ifma.mul_sub8(&mut fused, &y, &w);
            for k in 0..LANES {
                assert_eq!(scaled_x[k], x[k] * w[k] * w[3], "scale, lane {k}");
                assert_eq!(fused[k], x[k] * y[k] - w[k], "a·b − c, lane {k}");
            }

            let w_lanes = lanes(&scaled);
            let (mut xd, mut yd) = (lanes(&x), lanes(&y));
            ifma.butterflies_lanes(true, &mut xd, &mut yd, &w_lanes);
            let (mut xf, mut yf) = (lanes(&x), lanes(&y));
            ifma.butterflies_lanes(false, &mut xf, &mut yf, &w_lanes);
            let [xd, yd, xf, yf] = [xd, yd, xf, yf].map(|l| scalars_of(&l));
            for k in 0..LANES {
                let t = y[k] * w[k];
                assert_eq!((xd[k], yd[k]), (x[k] + t, x[k] - t), "dit, lane {k}");
                assert_eq!(
                    (xf[k], yf[k]),
                    (x[k] + y[k], (x[k] - y[k]) * w[k]),
                    "dif, lane {k}"
                );
            }
        }
    }
}
