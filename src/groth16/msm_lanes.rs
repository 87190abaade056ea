//! The dense G1 MSM (h's, on the CPU) with bucket sums in AVX-512 IFMA lanes.
//!
//! Signed windows of c bits: a scalar plus `Σ 2^(w·c + c − 1)` read in base 2^c, minus
//! 2^(c−1) a digit, gives digits in [−2^(c−1), 2^(c−1)) with no carries between windows, so
//! every window is independent. Per window (and chunk of at most [`CHUNK_POINTS`] points) the
//! points are counting-sorted by bucket; each lane of up to [`GROUPS`] groups of eight then
//! sums one bucket's run of points at a time, so no two lanes ever add into the same bucket.
//! The sums are affine: a step adds one point in every lane by the chord formula, the
//! inverses of the x differences of all lanes sharing one field inversion (batch-affine
//! addition: seven products an addition against ten for XYZZ coordinates). The rare addition
//! the chord cannot do (the bucket's sum and the point share x: a doubling or a cancellation)
//! goes through blst for that lane. Buckets are then summed by blst (running sums, the buckets
//! added as affine points) and windows combined by doublings.
//!
//! The sum is the group element blst's Pippenger gives; the proof bytes do not change.

use blst::{
    blst_p1, blst_p1_add_or_double, blst_p1_add_or_double_affine, blst_p1_affine, blst_p1_double,
    blst_p1_from_affine, blst_p1_is_inf, blst_p1_to_affine,
};
use blstrs::{G1Affine, G1Projective};
use rayon::prelude::*;

use super::fp_lanes::{self, Affine8Mem, Fp8Mem};
use super::ifma::Ifma;
use super::msm::ScalarBytes;

/// Points one task sorts and sums at most: its bucket order costs 4 bytes a point.
const CHUNK_POINTS: usize = 1 << 22;

/// 64-bit words of a `blst_p1_affine` (x then y).
const AFFINE_WORDS: u64 = 12;

/// The top bit of a sorted entry: subtract the point.
const NEGATE: u32 = 1 << 31;

/// Groups of eight lanes that add a point each per step, sharing one field inversion
/// (~3 µs with its products in blst, spread over up to 1024 additions of ~200 ns).
const GROUPS: usize = 128;

/// `Σ scalars[i]·bases[i]` in G1. The scalars must be canonical (below r), as
/// [`super::msm::to_canonical`] gives them.
pub fn msm_g1(ifma: Ifma, bases: &[G1Affine], scalars: &[ScalarBytes]) -> G1Projective {
    let c = window_bits(bases.len().min(CHUNK_POINTS));
    msm_g1_windows(ifma, bases, scalars, c, CHUNK_POINTS)
}

/// Heap bytes [`msm_g1`] over `n` points holds at its peak when `threads` threads run its
/// tasks: one task's scratch ([`task_scratch_bytes`]) for each task running at once (one a
/// thread, at most one a window and chunk). At 2^27 points about 41 MB a thread.
pub fn scratch_bytes(n: usize, threads: usize) -> u64 {
    let chunk = n.min(CHUNK_POINTS);
    if chunk == 0 {
        return 0;
    }
    let tasks = 256usize.div_ceil(window_bits(chunk)) * n.div_ceil(chunk);
    tasks.min(threads.max(1)) as u64 * task_scratch_bytes(chunk)
}

/// Heap bytes one task holds at its peak over a chunk of `points`: the digits and the sorted
/// order (4 bytes a point each; reading the digits twice instead of keeping them made h's MSM
/// 10% slower), the bucket starts and their copy, the buckets' sums (an optional affine point
/// each), and the lanes' state (with headroom for the allocator's rounding).
fn task_scratch_bytes(points: usize) -> u64 {
    let buckets = 1u64 << (window_bits(points) - 1);
    let sum = std::mem::size_of::<Option<blst_p1_affine>>() as u64;
    let lanes = GROUPS as u64
        * (3 * std::mem::size_of::<Affine8Mem>() as u64
            + 2 * std::mem::size_of::<Fp8Mem>() as u64
            + 8 * std::mem::size_of::<LaneCursor>() as u64
            + std::mem::size_of::<GroupStep>() as u64
            + 1);
    8 * points as u64 + 2 * 4 * (buckets + 1) + sum * buckets + lanes + (64 << 10)
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
    let window: Vec<i32> = scalars.iter().map(|s| digits.of(s) as i32).collect();
    let mut starts = vec![0u32; buckets + 1];
    for &d in &window {
        if d != 0 {
            starts[d.unsigned_abs() as usize] += 1;
        }
    }
    for b in 0..buckets {
        starts[b + 1] += starts[b];
    }
    let mut order = vec![0u32; starts[buckets] as usize];
    let mut next = starts.clone();
    for (i, &d) in window.iter().enumerate() {
        if d != 0 {
            let b = d.unsigned_abs() as usize - 1;
            order[next[b] as usize] = i as u32 | if d < 0 { NEGATE } else { 0 };
            next[b] += 1;
        }
    }
    drop((next, window));
    let mut sums = vec![None; buckets];
    // SAFETY: `ifma` proves the CPU features; every sorted index is below bases.len().
    unsafe { accumulate(ifma, bases, &order, &starts, &mut sums) };
    running_sums(&sums)
}

/// The lanes of one group in one step of [`accumulate`].
struct GroupStep {
    group: usize,
    /// Where each active lane's point starts, in words from the first base.
    offsets: [u64; 8],
    /// Lanes with a point this step.
    active: u8,
    /// Lanes whose point is subtracted.
    negate: u8,
    /// Lanes adding their point to their bucket's sum by the chord formula.
    adding: u8,
    /// Lanes whose point has their bucket sum's x (a doubling or a cancellation).
    same_x: u8,
    /// Lanes whose point starts their bucket's sum.
    fresh: u8,
}

/// Where a lane is in the sorted order.
#[derive(Clone, Copy, Default)]
struct LaneCursor {
    bucket: Option<usize>,
    pos: usize,
    end: usize,
}

/// The bucket sums in progress: groups of eight lanes, each lane summing one bucket's run of
/// the sorted order, then the next bucket's.
struct BucketLanes<'a> {
    order: &'a [u32],
    starts: &'a [u32],
    /// The sums, affine in blst's form.
    acc: Vec<Affine8Mem>,
    /// Lanes whose bucket has a sum (not the point at infinity), per group.
    has_sum: Vec<u8>,
    cursors: Vec<LaneCursor>,
    /// The first bucket no lane has taken.
    next_bucket: usize,
}

impl BucketLanes<'_> {
    /// Takes group g's next entry in each lane, moving a lane whose bucket is done to the next
    /// bucket with points (its finished sum goes to `sums`); prefetches the points. None
    /// where every bucket of the group's lanes is done and none is left.
    ///
    /// # Safety
    /// `base` must be the first base, and every sorted index a base's.
    unsafe fn next_entries(
        &mut self,
        g: usize,
        base: *const u64,
        sums: &mut [Option<blst_p1_affine>],
    ) -> Option<GroupStep> {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let buckets = self.starts.len() - 1;
        let (mut active, mut negate) = (0u8, 0u8);
        let mut offsets = [0u64; 8];
        for (j, offset) in offsets.iter_mut().enumerate() {
            let cursor = &mut self.cursors[8 * g + j];
            while cursor.pos == cursor.end {
                if let Some(b) = cursor.bucket.take() {
                    if self.has_sum[g] & (1 << j) != 0 {
                        sums[b] = Some(self.acc[g].lane(j));
                    }
                }
                self.has_sum[g] &= !(1 << j);
                let starts = self.starts;
                let mut b = self.next_bucket;
                while b < buckets && starts[b] == starts[b + 1] {
                    b += 1;
                }
                if b == buckets {
                    self.next_bucket = b;
                    break;
                }
                *cursor = LaneCursor {
                    bucket: Some(b),
                    pos: starts[b] as usize,
                    end: starts[b + 1] as usize,
                };
                self.next_bucket = b + 1;
            }
            if cursor.pos < cursor.end {
                let entry = self.order[cursor.pos];
                cursor.pos += 1;
                active |= 1 << j;
                negate |= ((entry >> 31) as u8) << j;
                *offset = u64::from(entry & !NEGATE) * AFFINE_WORDS;
                // Gathered once every group's entries are read (microseconds on).
                let at = base.add(*offset as usize);
                _mm_prefetch::<_MM_HINT_T0>(at as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(at.add(8) as *const i8);
            }
        }
        (active != 0).then_some(GroupStep {
            group: g,
            offsets,
            active,
            negate,
            adding: 0,
            same_x: 0,
            fresh: 0,
        })
    }
}

/// Sums each bucket's points (`order[starts[b]..starts[b + 1]]`) into `sums[b]` (None where
/// the sum is the point at infinity). Up to [`GROUPS`] groups of eight lanes each sum one
/// bucket's run of points at a time, so no two lanes of a step share a bucket; a step adds
/// one point in every lane: the differences of x first, then one shared inversion
/// ([`fp_lanes::invert_all`]), then the sums.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn accumulate(
    _: Ifma,
    bases: &[G1Affine],
    order: &[u32],
    starts: &[u32],
    sums: &mut [Option<blst_p1_affine>],
) {
    let base = bases.as_ptr() as *const u64;
    let groups = GROUPS.min((starts.len() - 1).div_ceil(8));
    let mut lanes = BucketLanes {
        order,
        starts,
        acc: vec![Affine8Mem::default(); groups],
        has_sum: vec![0; groups],
        cursors: vec![LaneCursor::default(); 8 * groups],
        next_bucket: 0,
    };
    let mut points = vec![Affine8Mem::default(); groups];
    let mut differences = vec![Fp8Mem::default(); groups];
    let mut prefix = vec![Fp8Mem::default(); groups];
    let mut steps: Vec<GroupStep> = Vec::with_capacity(groups);
    loop {
        steps.clear();
        steps.extend((0..groups).filter_map(|g| lanes.next_entries(g, base, sums)));
        if steps.is_empty() {
            return;
        }
        for (step, difference) in steps.iter_mut().zip(differences.iter_mut()) {
            let g = step.group;
            let point = fp_lanes::gather_affine(base, &step.offsets, step.active, step.negate);
            fp_lanes::store(&mut points[g].x, &point.x);
            fp_lanes::store(&mut points[g].y, &point.y);
            let live = step.active & !point.infinity;
            let has_sum = lanes.has_sum[g];
            let (d, same_x) = fp_lanes::x_difference(&fp_lanes::load(&lanes.acc[g].x), &point.x);
            step.same_x = same_x & live & has_sum;
            step.adding = live & has_sum & !step.same_x;
            step.fresh = live & !has_sum;
            fp_lanes::store(difference, &fp_lanes::or_one(&d, step.adding));
        }
        fp_lanes::invert_all(&mut differences[..steps.len()], &mut prefix);
        for (step, inverse) in steps.iter().zip(&differences) {
            let g = step.group;
            let (sum, point) = (&mut lanes.acc[g], &points[g]);
            if step.adding != 0 {
                let (x3, y3) = fp_lanes::add_with_inverse(
                    &fp_lanes::load(&sum.x),
                    &fp_lanes::load(&sum.y),
                    &fp_lanes::load(&point.x),
                    &fp_lanes::load(&point.y),
                    &fp_lanes::load(inverse),
                );
                fp_lanes::store_where(&mut sum.x, &x3, step.adding);
                fp_lanes::store_where(&mut sum.y, &y3, step.adding);
            }
            if step.fresh != 0 {
                fp_lanes::store_where(&mut sum.x, &fp_lanes::load(&point.x), step.fresh);
                fp_lanes::store_where(&mut sum.y, &fp_lanes::load(&point.y), step.fresh);
                lanes.has_sum[g] |= step.fresh;
            }
            for j in (0..8).filter(|j| step.same_x & (1 << j) != 0) {
                match add_through_blst(&sum.lane(j), &point.lane(j)) {
                    Some(p) => sum.set_lane(j, &p),
                    None => lanes.has_sum[g] &= !(1 << j),
                }
            }
        }
    }
}

/// a + b through blst, for the sums the chord formula does not cover (a doubling or a
/// cancellation); None where the sum is the point at infinity.
fn add_through_blst(a: &blst_p1_affine, b: &blst_p1_affine) -> Option<blst_p1_affine> {
    let (mut sum, mut affine) = (blst_p1::default(), blst_p1_affine::default());
    // SAFETY: blst reads and writes whole points.
    unsafe {
        blst_p1_from_affine(&mut sum, a);
        blst_p1_add_or_double_affine(&mut sum, &sum, b);
        if blst_p1_is_inf(&sum) {
            return None;
        }
        blst_p1_to_affine(&mut affine, &sum);
    }
    Some(affine)
}

/// `Σ_b (b + 1)·sums[b]` by running sums from the top bucket.
fn running_sums(sums: &[Option<blst_p1_affine>]) -> blst_p1 {
    let (mut running, mut total) = (blst_p1::default(), blst_p1::default());
    for bucket in sums.iter().rev() {
        // SAFETY: blst reads and writes whole points; aliasing of out and a is allowed.
        unsafe {
            if let Some(p) = bucket {
                blst_p1_add_or_double_affine(&mut running, &running, p);
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
