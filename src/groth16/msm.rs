//! Multi-scalar multiplication on the CPU through blst's multi-threaded Pippenger.
//!
//! blstrs' own `multi_exp` takes projective points and converts them to affine on every call;
//! the SRS is already affine, so we call blst's `MultiPoint` on the points in place.

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

/// `sum scalars[i] * bases[i]` in G1. The slices must have equal length.
pub fn msm_g1(bases: &[G1Affine], scalars: &[ScalarBytes]) -> G1Projective {
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
        }
    }
}
