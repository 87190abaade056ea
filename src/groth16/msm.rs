//! Multi-scalar multiplication on the CPU through blst.
//!
//! blstrs' own `multi_exp` takes projective points and converts them to affine on every call;
//! the SRS is already affine, so we call blst on the points in place. Filecoin witnesses are
//! mostly bits: [`msm_g1_bits`] / [`msm_g2_bits`] skip zero scalars, sum the points of scalar
//! one with blst's batched affine additions (one shared inversion per level of a binary tree)
//! and run Pippenger only over the rest, all through arrays of pointers into the SRS and the
//! scalars, so nothing is copied.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

use super::density::Density;

/// Canonical little-endian scalar bytes, the form blst's Pippenger reads.
pub type ScalarBytes = [u8; 32];

/// Scalar bits blst has to scan (the field modulus has 255 bits).
const SCALAR_BITS: usize = 255;

/// Converts Montgomery-form scalars into canonical bytes, in parallel.
pub fn to_canonical(scalars: &[Scalar]) -> Vec<ScalarBytes> {
    scalars.par_iter().map(Scalar::to_bytes_le).collect()
}

/// Appends the canonical bytes of `scalars[i]` for every set bit i of `density`.
pub fn gather_canonical(out: &mut Vec<ScalarBytes>, scalars: &[Scalar], density: &Density) {
    out.extend(density.iter_ones().map(|i| scalars[i].to_bytes_le()));
}

fn flat(scalars: &[ScalarBytes]) -> &[u8] {
    // SAFETY: [[u8; 32]] is laid out as contiguous bytes.
    unsafe { std::slice::from_raw_parts(scalars.as_ptr().cast::<u8>(), scalars.len() * 32) }
}

/// Points from which the G1 MSM runs on AVX-512 IFMA lanes where the CPU has them (below,
/// blst's Pippenger is as fast and the time is small).
#[cfg(target_arch = "x86_64")]
const LANE_MSM_MIN_POINTS: usize = 1 << 12;

/// `sum scalars[i] * bases[i]` in G1: on AVX-512 IFMA lanes ([`super::msm_lanes`]) where the
/// CPU has them, else blst's Pippenger; the same group element either way. The slices must
/// have equal length and the scalars be canonical.
pub fn msm_g1(bases: &[G1Affine], scalars: &[ScalarBytes]) -> G1Projective {
    #[cfg(target_arch = "x86_64")]
    if bases.len() >= LANE_MSM_MIN_POINTS {
        if let Some(ifma) = super::ifma::Ifma::detect() {
            return super::msm_lanes::msm_g1(ifma, bases, scalars);
        }
    }
    msm_g1_blst(bases, scalars)
}

/// Heap bytes [`msm_g1`] over `n` points holds at its peak beside its inputs with `threads`
/// threads (the lane path's, whether or not this CPU takes it: an upper bound for budgets).
pub fn msm_g1_scratch_bytes(n: usize, threads: usize) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if n >= LANE_MSM_MIN_POINTS {
        return super::msm_lanes::scratch_bytes(n, threads);
    }
    let _ = (n, threads);
    0
}

/// `sum scalars[i] * bases[i]` in G1 through blst's Pippenger (the benches' baseline). The
/// slices must have equal length.
pub fn msm_g1_blst(bases: &[G1Affine], scalars: &[ScalarBytes]) -> G1Projective {
    assert_eq!(bases.len(), scalars.len(), "MSM bases and scalars differ");
    if bases.is_empty() {
        return G1Projective::identity();
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine.
    let points =
        unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<blst_p1_affine>(), bases.len()) };
    let sum: blst_p1 = points.mult(flat(scalars), SCALAR_BITS);
    // SAFETY: G1Projective is #[repr(transparent)] over blst_p1.
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(sum) }
}

/// `sum scalars[i] * bases[i]` in G2. The slices must have equal length.
pub fn msm_g2(bases: &[G2Affine], scalars: &[ScalarBytes]) -> G2Projective {
    assert_eq!(bases.len(), scalars.len(), "MSM bases and scalars differ");
    if bases.is_empty() {
        return G2Projective::identity();
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine.
    let points =
        unsafe { std::slice::from_raw_parts(bases.as_ptr().cast::<blst_p2_affine>(), bases.len()) };
    let sum: blst_p2 = points.mult(flat(scalars), SCALAR_BITS);
    // SAFETY: G2Projective is #[repr(transparent)] over blst_p2.
    unsafe { std::mem::transmute::<blst_p2, G2Projective>(sum) }
}

/// The scalar 1 in canonical little-endian bytes.
const ONE_BYTES: ScalarBytes = {
    let mut b = [0u8; 32];
    b[0] = 1;
    b
};

/// What a scalar asks of its point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Skip,
    Add,
    Multiply,
}

#[inline]
fn use_of(scalar: &ScalarBytes) -> Use {
    if *scalar == [0u8; 32] {
        Use::Skip
    } else if *scalar == ONE_BYTES {
        Use::Add
    } else {
        Use::Multiply
    }
}

/// Counts of a scalar slice by kind on this thread: (zeros, ones, others).
fn census_of(scalars: &[ScalarBytes]) -> (usize, usize, usize) {
    scalars
        .iter()
        .fold((0, 0, 0), |(z, o, r), s| match use_of(s) {
            Use::Skip => (z + 1, o, r),
            Use::Add => (z, o + 1, r),
            Use::Multiply => (z, o, r + 1),
        })
}

/// Points a parallel chunk of a bit-aware MSM over `n` points holds with `threads` threads.
fn bits_chunk(n: usize, threads: usize) -> usize {
    n.div_ceil(threads.max(1)).max(1 << 12)
}

/// Heap bytes the bit-aware MSMs ([`msm_g1_bits`], [`msm_g2_bits`]) over `n` points hold at
/// their peak beside their inputs with `threads` threads: every chunk's pointer lists (at most
/// 16 bytes a point) and blst's Pippenger scratch for its chunk (G2's, the larger), or, for
/// dense scalars, the plain MSM's ([`msm_g1_scratch_bytes`]; G2's plain MSM is blst's own).
pub fn msm_bits_scratch_bytes(n: usize, threads: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    let chunk = bits_chunk(n, threads).min(n);
    let chunks = n.div_ceil(chunk) as u64;
    // SAFETY: a pure size computation.
    let pippenger = unsafe { blst::blst_p2s_mult_pippenger_scratch_sizeof(chunk) } as u64;
    let bits = 16 * n as u64 + chunks * pippenger;
    bits.max(msm_g1_scratch_bytes(n, threads))
}

/// Counts of a scalar vector by kind: (zeros, ones, others). For benchmarks and logs.
pub fn scalar_census(scalars: &[ScalarBytes]) -> (usize, usize, usize) {
    scalars
        .par_iter()
        .fold(
            || (0, 0, 0),
            |(z, o, r), s| match use_of(s) {
                Use::Skip => (z + 1, o, r),
                Use::Add => (z, o + 1, r),
                Use::Multiply => (z, o, r + 1),
            },
        )
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
}

/// Defines a bit-aware MSM for one group: per parallel chunk, classify the scalars, add the
/// points of the ones (`$adds`), Pippenger over the others (`$pippenger`), then sum the chunks.
macro_rules! bit_aware_msm {
    ($name:ident, $plain:path, $affine:ty, $proj:ty, $blst_affine:ty, $blst_proj:ty, $adds:path, $pippenger:path, $scratch:path) => {
        /// `sum scalars[i] * bases[i]`, skipping zeros and adding the points of ones (see the
        /// module doc); scalars less than 1/8 zeros and ones go to the plain MSM whole. Same
        /// result as the plain MSM; the slices must have equal length.
        pub fn $name(bases: &[$affine], scalars: &[ScalarBytes]) -> $proj {
            assert_eq!(bases.len(), scalars.len(), "MSM bases and scalars differ");
            let (zeros, ones, _) = scalar_census(scalars);
            if (zeros + ones) * 8 < scalars.len() {
                // Dense scalars (random circuits, h-like vectors): blst's tiled multi-threaded
                // Pippenger over the contiguous points is the better tool.
                return $plain(bases, scalars);
            }
            let chunk = bits_chunk(bases.len(), rayon::current_num_threads());
            // SAFETY (casts): the blstrs affine types are #[repr(transparent)] over blst's.
            let points = unsafe {
                std::slice::from_raw_parts(bases.as_ptr().cast::<$blst_affine>(), bases.len())
            };
            points
                .par_chunks(chunk)
                .zip(scalars.par_chunks(chunk))
                .map(|(points, scalars)| {
                    // Sized exactly (a count first), so the lists take at most 16 bytes a point.
                    let (_, n_ones, n_rest) = census_of(scalars);
                    let mut ones: Vec<*const $blst_affine> = Vec::with_capacity(n_ones);
                    let mut rest_points: Vec<*const $blst_affine> = Vec::with_capacity(n_rest);
                    let mut rest_scalars: Vec<*const u8> = Vec::with_capacity(n_rest);
                    for (p, s) in points.iter().zip(scalars) {
                        match use_of(s) {
                            Use::Skip => {}
                            Use::Add => ones.push(p),
                            Use::Multiply => {
                                rest_points.push(p);
                                rest_scalars.push(s.as_ptr());
                            }
                        }
                    }
                    let mut sum = <$proj>::identity();
                    if !ones.is_empty() {
                        let mut out = <$blst_proj>::default();
                        // SAFETY: `ones` holds ones.len() pointers to valid points; blst reads
                        // exactly that many entries.
                        unsafe { $adds(&mut out, ones.as_ptr(), ones.len()) };
                        // SAFETY: the projective types are #[repr(transparent)] over blst's.
                        sum += unsafe { std::mem::transmute::<$blst_proj, $proj>(out) };
                    }
                    match rest_points.len() {
                        0 => {}
                        1 => {
                            // blst's Pippenger needs two points; one is a plain multiplication.
                            let point: &$affine = unsafe { &*rest_points[0].cast::<$affine>() };
                            let bytes: &ScalarBytes =
                                unsafe { &*rest_scalars[0].cast::<ScalarBytes>() };
                            let scalar = Option::<Scalar>::from(Scalar::from_bytes_le(bytes))
                                .expect("canonical scalar");
                            sum += *point * scalar;
                        }
                        n => {
                            // SAFETY: the scratch size is blst's own for n points; the pointer
                            // arrays hold n valid entries each, read exactly once each.
                            let mut out = <$blst_proj>::default();
                            unsafe {
                                let words = $scratch(n).div_ceil(8);
                                let mut scratch: Vec<u64> = vec![0; words];
                                $pippenger(
                                    &mut out,
                                    rest_points.as_ptr(),
                                    n,
                                    rest_scalars.as_ptr(),
                                    SCALAR_BITS,
                                    scratch.as_mut_ptr(),
                                );
                            }
                            sum += unsafe { std::mem::transmute::<$blst_proj, $proj>(out) };
                        }
                    }
                    sum
                })
                .reduce(<$proj>::identity, |a, b| a + b)
        }
    };
}

bit_aware_msm!(
    msm_g1_bits,
    msm_g1,
    G1Affine,
    G1Projective,
    blst_p1_affine,
    blst_p1,
    blst::blst_p1s_add,
    blst::blst_p1s_mult_pippenger,
    blst::blst_p1s_mult_pippenger_scratch_sizeof
);
bit_aware_msm!(
    msm_g2_bits,
    msm_g2,
    G2Affine,
    G2Projective,
    blst_p2_affine,
    blst_p2,
    blst::blst_p2s_add,
    blst::blst_p2s_mult_pippenger,
    blst::blst_p2s_mult_pippenger_scratch_sizeof
);

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Curve;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn msm_matches_naive_sum() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for n in [0usize, 1, 5, 40, 300] {
            let scalars: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
            let g1: Vec<G1Affine> = (0..n)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let g2: Vec<G2Affine> = (0..n)
                .map(|_| G2Projective::random(&mut rng).to_affine())
                .collect();
            let bytes = to_canonical(&scalars);
            let want1: G1Projective = g1.iter().zip(&scalars).map(|(p, s)| *p * s).sum();
            let want2: G2Projective = g2.iter().zip(&scalars).map(|(p, s)| *p * s).sum();
            assert_eq!(msm_g1(&g1, &bytes), want1);
            assert_eq!(msm_g2(&g2, &bytes), want2);
            assert_eq!(msm_g1_bits(&g1, &bytes), want1);
            assert_eq!(msm_g2_bits(&g2, &bytes), want2);
        }
    }

    #[test]
    fn bit_aware_msm_matches_on_bit_heavy_scalars() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        // Chunks of 4096 and more: sizes around a chunk edge, and runs of zeros, ones and
        // repeated points (the batched additions must double correctly).
        for n in [2usize, 3, 4095, 4096, 4097, 9000] {
            let base: Vec<G1Affine> = (0..64)
                .map(|_| G1Projective::random(&mut rng).to_affine())
                .collect();
            let base2: Vec<G2Affine> = (0..64)
                .map(|_| G2Projective::random(&mut rng).to_affine())
                .collect();
            let g1: Vec<G1Affine> = (0..n).map(|i| base[(i * 7) % 64]).collect();
            let g2: Vec<G2Affine> = (0..n).map(|i| base2[(i * 5) % 64]).collect();
            let scalars: Vec<Scalar> = (0..n)
                .map(|i| match i % 10 {
                    0..=3 => Scalar::ZERO,
                    4..=7 => Scalar::ONE,
                    8 => -Scalar::ONE,
                    _ => Scalar::random(&mut rng),
                })
                .collect();
            let bytes = to_canonical(&scalars);
            assert_eq!(msm_g1_bits(&g1, &bytes), msm_g1(&g1, &bytes), "G1, n={n}");
            assert_eq!(msm_g2_bits(&g2, &bytes), msm_g2(&g2, &bytes), "G2, n={n}");
            let (zeros, ones, others) = scalar_census(&bytes);
            assert_eq!(zeros + ones + others, n);
        }
        // All ones, all zeros, a single multiplication.
        let g1: Vec<G1Affine> = (0..5000)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        for fill in [Scalar::ONE, Scalar::ZERO] {
            let bytes = to_canonical(&vec![fill; g1.len()]);
            assert_eq!(msm_g1_bits(&g1, &bytes), msm_g1(&g1, &bytes));
        }
        let mut one_other = vec![Scalar::ZERO; g1.len()];
        one_other[4321] = Scalar::from(12345u64);
        let bytes = to_canonical(&one_other);
        assert_eq!(msm_g1_bits(&g1, &bytes), g1[4321] * Scalar::from(12345u64));
    }
}
