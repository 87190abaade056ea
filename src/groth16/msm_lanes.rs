//! The dense G1 MSM (h's, on the CPU) with eight bucket sums at once on AVX-512 IFMA.
//!
//! Signed windows of c bits: a scalar plus `Σ 2^(w·c + c − 1)` read in base 2^c, minus
//! 2^(c−1) a digit, gives digits in [−2^(c−1), 2^(c−1)) with no carries between windows, so
//! every window is independent. Per window (and chunk of at most [`CHUNK_POINTS`] points) the
//! points are counting-sorted by bucket; each of the eight lanes then sums one bucket's run of
//! points at a time ([`fp_lanes::add_affine`]: XYZZ plus affine, ten products), so no two lanes
//! ever add into the same bucket. The rare addition the formula cannot do (the bucket's sum
//! and the point share x: a doubling or a cancellation) goes through blst for that lane.
//! Buckets are then summed by blst (running sums) and windows combined by doublings.
//!
//! The sum is the group element blst's Pippenger gives; the proof bytes do not change.

use blst::{
    blst_fp, blst_p1, blst_p1_add_or_double, blst_p1_affine, blst_p1_cneg, blst_p1_double,
    blst_p1_from_affine, blst_p1_is_inf,
};
use blstrs::{G1Affine, G1Projective};
use rayon::prelude::*;

use super::fp_lanes::{self, JacobianWords, Xyzz8Mem};
use super::ifma::Ifma;
use super::msm::ScalarBytes;

/// Points one task sorts and sums at most: its bucket order costs 4 bytes a point.
const CHUNK_POINTS: usize = 1 << 22;

/// 64-bit words of a `blst_p1_affine` (x then y).
const AFFINE_WORDS: u64 = 12;

/// The top bit of a sorted entry: subtract the point.
const NEGATE: u32 = 1 << 31;

/// How many additions ahead a lane prefetches its point (an addition of eight lanes takes
/// about two microseconds; the points are scattered over the SRS).
const PREFETCH_AHEAD: usize = 1;

/// One bucket's XYZZ limbs as a lane left them ([`Xyzz8Mem::lane`]).
type RawBucket = [[u64; 8]; 4];

/// `Σ scalars[i]·bases[i]` in G1. The scalars must be canonical (below r), as
/// [`super::msm::to_canonical`] gives them.
pub fn msm_g1(ifma: Ifma, bases: &[G1Affine], scalars: &[ScalarBytes]) -> G1Projective {
    let c = window_bits(bases.len().min(CHUNK_POINTS));
    msm_g1_windows(ifma, bases, scalars, c, CHUNK_POINTS)
}

/// The window width for `n` points a task: each window costs about an addition a point and
/// three a bucket (its conversion and the running sums).
fn window_bits(n: usize) -> usize {
    (4..=18)
        .min_by_key(|&c| 256usize.div_ceil(c) * (n + (3 << (c - 1))))
        .expect("a non-empty range")
}

/// [`msm_g1`] with windows of `c` bits (4 to 30) and tasks of at most `chunk` points.
fn msm_g1_windows(
    ifma: Ifma,
    bases: &[G1Affine],
    scalars: &[ScalarBytes],
    c: usize,
    chunk: usize,
) -> G1Projective {
    assert_eq!(bases.len(), scalars.len(), "MSM bases and scalars differ");
    assert!((4..=30).contains(&c), "window width {c}");
    assert!(chunk > 0, "chunks of at least one point");
    let windows = 256usize.div_ceil(c);
    let offset = digit_offset(c, windows);
    let tasks: Vec<(usize, usize)> = (0..windows)
        .flat_map(|w| (0..bases.len()).step_by(chunk).map(move |s| (w, s)))
        .collect();
    let sums: Vec<(usize, blst_p1)> = tasks
        .into_par_iter()
        .map(|(w, start)| {
            let end = (start + chunk).min(bases.len());
            let digits = Digits {
                offset,
                window: w,
                bits: c,
            };
            (
                w,
                window_sum(ifma, &bases[start..end], &scalars[start..end], &digits),
            )
        })
        .collect();
    let mut per_window = vec![blst_p1::default(); windows];
    for (w, sum) in &sums {
        // SAFETY: blst reads and writes whole points; aliasing of out and a is allowed.
        unsafe { blst_p1_add_or_double(&mut per_window[*w], &per_window[*w], sum) };
    }
    let mut total = blst_p1::default();
    for window in per_window.iter().rev() {
        for _ in 0..c {
            // SAFETY: as above.
            unsafe { blst_p1_double(&mut total, &total) };
        }
        // SAFETY: as above.
        unsafe { blst_p1_add_or_double(&mut total, &total, window) };
    }
    // SAFETY: G1Projective is #[repr(transparent)] over blst_p1.
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(total) }
}

/// Reads one window's signed digits.
struct Digits {
    /// `Σ_w 2^(w·c + c − 1)` over the windows.
    offset: [u64; 5],
    window: usize,
    bits: usize,
}

/// `Σ_w 2^(w·c + c − 1)`: added to a scalar, its base-2^c digits less 2^(c−1) are signed
/// digits of the scalar (for a scalar below r and `windows·c >= 256`, nothing carries out).
fn digit_offset(c: usize, windows: usize) -> [u64; 5] {
    let mut k = [0u64; 5];
    for w in 0..windows {
        let bit = w * c + c - 1;
        k[bit / 64] |= 1 << (bit % 64);
    }
    k
}

impl Digits {
    /// The scalar's digit in this window, in [−2^(c−1), 2^(c−1)).
    fn of(&self, s: &ScalarBytes) -> i64 {
        let mut t = [0u64; 5];
        let mut carry = false;
        for (i, word) in t.iter_mut().enumerate() {
            let si = if i < 4 {
                u64::from_le_bytes(s[8 * i..8 * i + 8].try_into().expect("8 bytes"))
            } else {
                0
            };
            let (a, c1) = si.overflowing_add(self.offset[i]);
            let (b, c2) = a.overflowing_add(carry as u64);
            *word = b;
            carry = c1 | c2;
        }
        let bit = self.window * self.bits;
        let (word, shift) = (bit / 64, bit % 64);
        let mut v = t[word] >> shift;
        if shift + self.bits > 64 && word + 1 < t.len() {
            v |= t[word + 1] << (64 - shift);
        }
        (v & ((1u64 << self.bits) - 1)) as i64 - (1i64 << (self.bits - 1))
    }
}

/// One window's sum over a chunk of points: `Σ digit_i·bases[i]`.
fn window_sum(ifma: Ifma, bases: &[G1Affine], scalars: &[ScalarBytes], digits: &Digits) -> blst_p1 {
    assert!(
        bases.len() < NEGATE as usize,
        "a chunk's indices fit 31 bits"
    );
    let buckets = 1usize << (digits.bits - 1);
    // Counting sort by bucket (|digit| − 1); the sign rides in the top bit.
    let mut starts = vec![0u32; buckets + 1];
    for s in scalars {
        let d = digits.of(s);
        if d != 0 {
            starts[d.unsigned_abs() as usize] += 1;
        }
    }
    for b in 0..buckets {
        starts[b + 1] += starts[b];
    }
    let mut order = vec![0u32; starts[buckets] as usize];
    let mut next = starts.clone();
    for (i, s) in scalars.iter().enumerate() {
        let d = digits.of(s);
        if d != 0 {
            let b = d.unsigned_abs() as usize - 1;
            order[next[b] as usize] = i as u32 | if d < 0 { NEGATE } else { 0 };
            next[b] += 1;
        }
    }
    drop(next);
    let mut raw = vec![RawBucket::default(); buckets];
    let mut filled = vec![false; buckets];
    // SAFETY: `ifma` proves the CPU features; every sorted index is below bases.len().
    unsafe { accumulate(ifma, bases, &order, &starts, &mut raw, &mut filled) };
    // SAFETY: as above.
    unsafe { running_sums(ifma, &raw, &filled) }
}

/// Sums each bucket's points (`order[starts[b]..starts[b + 1]]`) into `raw[b]`, eight buckets
/// at a time, and marks the buckets whose sum is not the point at infinity.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn accumulate(
    _: Ifma,
    bases: &[G1Affine],
    order: &[u32],
    starts: &[u32],
    raw: &mut [RawBucket],
    filled: &mut [bool],
) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let base = bases.as_ptr() as *const u64;
    let buckets = starts.len() - 1;
    let mut acc = Xyzz8Mem::default();
    // Lanes whose bucket has a running sum (not the point at infinity).
    let mut has_sum = 0u8;
    let (mut pos, mut end) = ([0usize; 8], [0usize; 8]);
    let mut bucket = [None::<usize>; 8];
    let mut next_bucket = 0;
    loop {
        let (mut active, mut negate) = (0u8, 0u8);
        let mut offsets = [0u64; 8];
        for j in 0..8 {
            while pos[j] == end[j] {
                if let Some(b) = bucket[j].take() {
                    if has_sum & (1 << j) != 0 {
                        raw[b] = acc.lane(j);
                        filled[b] = true;
                    }
                }
                has_sum &= !(1 << j);
                while next_bucket < buckets && starts[next_bucket] == starts[next_bucket + 1] {
                    next_bucket += 1;
                }
                if next_bucket == buckets {
                    break;
                }
                bucket[j] = Some(next_bucket);
                (pos[j], end[j]) = (
                    starts[next_bucket] as usize,
                    starts[next_bucket + 1] as usize,
                );
                next_bucket += 1;
            }
            if pos[j] < end[j] {
                let entry = order[pos[j]];
                pos[j] += 1;
                active |= 1 << j;
                negate |= ((entry >> 31) as u8) << j;
                offsets[j] = u64::from(entry & !NEGATE) * AFFINE_WORDS;
                if pos[j] + PREFETCH_AHEAD < end[j] {
                    let entry = order[pos[j] + PREFETCH_AHEAD];
                    let ahead = base.add((entry & !NEGATE) as usize * AFFINE_WORDS as usize);
                    _mm_prefetch::<_MM_HINT_T0>(ahead as *const i8);
                    _mm_prefetch::<_MM_HINT_T0>(ahead.add(8) as *const i8);
                }
            }
        }
        if active == 0 {
            return;
        }
        let point = fp_lanes::gather_affine(base, &offsets, active, negate);
        let live = active & !point.infinity;
        let adding = live & has_sum;
        // Taken before the additions: a lane whose sum cancels to infinity below has used
        // its point.
        let fresh = live & !has_sum;
        if adding != 0 {
            let (sum, exceptional) =
                fp_lanes::add_affine(&fp_lanes::load_xyzz(&acc), &point.x, &point.y);
            let exceptional = exceptional & adding;
            fp_lanes::store_xyzz_where(&mut acc, &sum, adding & !exceptional);
            for j in (0..8).filter(|j| exceptional & (1 << j) != 0) {
                let at = &bases[(offsets[j] / AFFINE_WORDS) as usize];
                if !add_through_blst(&mut acc, j, at, negate & (1 << j) != 0) {
                    has_sum &= !(1 << j);
                }
            }
        }
        if fresh != 0 {
            let start = fp_lanes::from_affine(&point.x, &point.y);
            fp_lanes::store_xyzz_where(&mut acc, &start, fresh);
            has_sum |= fresh;
        }
    }
}

/// Lane j of `acc` plus ±`point` through blst (the lanes' formula does not cover it); false
/// where the sum is the point at infinity.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn add_through_blst(acc: &mut Xyzz8Mem, j: usize, point: &G1Affine, negate: bool) -> bool {
    let words = fp_lanes::to_jacobian(&fp_lanes::load_xyzz(acc)).map(|c| fp_lanes::words_to(&c)[j]);
    let mut sum = blst_p1 {
        x: blst_fp { l: words[0] },
        y: blst_fp { l: words[1] },
        z: blst_fp { l: words[2] },
    };
    let mut p = blst_p1::default();
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine.
    blst_p1_from_affine(&mut p, (point as *const G1Affine).cast::<blst_p1_affine>());
    blst_p1_cneg(&mut p, negate);
    blst_p1_add_or_double(&mut sum, &sum, &p);
    if blst_p1_is_inf(&sum) {
        return false;
    }
    let every_lane = [sum.x.l, sum.y.l, sum.z.l].map(|c| fp_lanes::words_from(&[c; 8]));
    let mut converted = Xyzz8Mem::default();
    fp_lanes::store_xyzz_where(&mut converted, &fp_lanes::from_jacobian(&every_lane), 0xff);
    acc.set_lane(j, &converted.lane(j));
    true
}

/// `Σ_b (b + 1)·bucket_b` by running sums from the top bucket, converting eight buckets at a
/// time to blst's Jacobian form.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn running_sums(_: Ifma, raw: &[RawBucket], filled: &[bool]) -> blst_p1 {
    let (mut running, mut total) = (blst_p1::default(), blst_p1::default());
    for group in (0..raw.len() / 8).rev() {
        let mut lanes = Xyzz8Mem::default();
        for j in 0..8 {
            lanes.set_lane(j, &raw[8 * group + j]);
        }
        let jacobian: JacobianWords = fp_lanes::to_jacobian(&fp_lanes::load_xyzz(&lanes));
        let [x, y, z] = jacobian.map(|c| fp_lanes::words_to(&c));
        for j in (0..8).rev() {
            if filled[8 * group + j] {
                let bucket = blst_p1 {
                    x: blst_fp { l: x[j] },
                    y: blst_fp { l: y[j] },
                    z: blst_fp { l: z[j] },
                };
                blst_p1_add_or_double(&mut running, &running, &bucket);
            }
            blst_p1_add_or_double(&mut total, &total, &running);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::msm::{msm_g1_blst, to_canonical};
    use blstrs::{G1Projective, Scalar};
    use ff::Field;
    use group::{Curve, Group};
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn signed_digits_give_the_scalar_back() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for c in [4, 5, 13, 16, 17, 18] {
            let windows = 256usize.div_ceil(c);
            let offset = digit_offset(c, windows);
            for s in [
                Scalar::ZERO,
                Scalar::ONE,
                -Scalar::ONE,
                Scalar::random(&mut rng),
            ] {
                let bytes = s.to_bytes_le();
                let mut back = Scalar::ZERO;
                for w in (0..windows).rev() {
                    let d = Digits {
                        offset,
                        window: w,
                        bits: c,
                    }
                    .of(&bytes);
                    assert!(
                        (-(1 << (c - 1))..(1 << (c - 1))).contains(&d),
                        "c={c} digit {d}"
                    );
                    back *= Scalar::from(1u64 << c);
                    let m = Scalar::from(d.unsigned_abs());
                    back += if d < 0 { -m } else { m };
                }
                assert_eq!(back, s, "c={c}");
            }
        }
    }

    #[test]
    fn lane_msm_equals_blst_with_repeats_negations_and_infinity() {
        let Some(ifma) = Ifma::detect() else {
            eprintln!("no AVX-512 IFMA on this CPU: the lane MSM is not used here");
            return;
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let g = G1Projective::generator();
        for n in [1usize, 2, 9, 100, 1000, 3000] {
            let mut points: Vec<G1Affine> = (0..n)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let mut scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            // Same point and scalar twice (a doubling in a bucket), a point and its negation
            // with one scalar (a cancellation), the point at infinity, edge scalars.
            if n >= 9 {
                points[1] = points[0];
                scalars[1] = scalars[0];
                points[3] = (-g).to_affine();
                points[2] = g.to_affine();
                scalars[3] = scalars[2];
                points[4] = G1Projective::identity().to_affine();
                scalars[5] = Scalar::ZERO;
                scalars[6] = Scalar::ONE;
                scalars[7] = -Scalar::ONE;
                points[8] = points[0];
                scalars[8] = scalars[0];
            }
            let bytes = to_canonical(&scalars);
            let want = msm_g1_blst(&points, &bytes);
            for c in [4, 7, 16] {
                assert_eq!(
                    msm_g1_windows(ifma, &points, &bytes, c, CHUNK_POINTS),
                    want,
                    "n={n} c={c}"
                );
            }
            // Several chunks a window (tasks summed per window before the doublings).
            assert_eq!(
                msm_g1_windows(ifma, &points, &bytes, 5, n.div_ceil(3)),
                want,
                "n={n}, three chunks"
            );
            assert_eq!(msm_g1(ifma, &points, &bytes), want, "n={n}");
        }
        // Every point the same: each bucket's sum doubles and grows through the exceptions.
        let points = vec![g.to_affine(); 500];
        let scalars: Vec<Scalar> = (0..500u64).map(|i| Scalar::from(i % 7)).collect();
        let bytes = to_canonical(&scalars);
        assert_eq!(
            msm_g1_windows(ifma, &points, &bytes, 4, CHUNK_POINTS),
            msm_g1_blst(&points, &bytes)
        );
    }
}
