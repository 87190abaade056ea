//! Fixed-base scalar multiplication with precomputed window tables: many multiples of one
//! generator at one mixed addition per window, then a batched conversion to affine.

use group::{prime::PrimeCurveAffine, Curve, Group};
use rayon::prelude::*;

use crate::groth16::msm::ScalarBytes;

/// Bits of a canonical scalar.
const SCALAR_BITS: usize = 255;
/// Points converted to affine per batch (one field inversion each).
const BATCH: usize = 1 << 12;

/// A table of `d * 2^(w*k) * g` for every window k and digit d in 1..2^w.
pub struct FixedBaseTable<G: Curve> {
    window: usize,
    rows: Vec<Vec<G::AffineRepr>>,
}

/// The window width minimising table building plus `count` multiplications.
pub fn best_window(count: usize) -> usize {
    if let Some(w) = std::env::var("CUZK_W").ok().and_then(|v| v.parse().ok()) {
        return w;
    }
    (4..=16usize)
        .min_by_key(|&w| {
            let rows = SCALAR_BITS.div_ceil(w);
            rows * (1usize << w) + count * rows
        })
        .expect("non-empty range")
}

#[inline]
fn digit(bytes: &ScalarBytes, start: usize, width: usize) -> usize {
    let mut v = 0usize;
    let first = start / 8;
    for (k, b) in bytes.iter().skip(first).take(4).enumerate() {
        v |= (*b as usize) << (8 * k);
    }
    (v >> (start % 8)) & ((1 << width) - 1)
}

impl<G> FixedBaseTable<G>
where
    G: Curve + Group + Send + Sync + for<'a> std::ops::AddAssign<&'a G::AffineRepr>,
    G::AffineRepr: PrimeCurveAffine<Curve = G> + Send + Sync,
{
    /// Builds the table for generator `g` with window width `window` (at most 20 bits).
    pub fn new(g: G, window: usize) -> Self {
        assert!((1..=20).contains(&window));
        let rows_count = SCALAR_BITS.div_ceil(window);
        let mut bases = Vec::with_capacity(rows_count);
        let mut base = g;
        for _ in 0..rows_count {
            bases.push(base);
            for _ in 0..window {
                base = base.double();
            }
        }
        let rows = bases
            .into_par_iter()
            .map(|base| {
                let mut proj = Vec::with_capacity((1 << window) - 1);
                let mut acc = base;
                for _ in 1..(1 << window) {
                    proj.push(acc);
                    acc += base;
                }
                let mut affine = vec![G::AffineRepr::identity(); proj.len()];
                G::batch_normalize(&proj, &mut affine);
                affine
            })
            .collect();
        Self { window, rows }
    }

    /// `scalar * g`.
    pub fn mul(&self, scalar: &ScalarBytes) -> G {
        let mut acc = G::identity();
        for (k, row) in self.rows.iter().enumerate() {
            let start = k * self.window;
            let width = self.window.min(SCALAR_BITS + 1 - start);
            let d = digit(scalar, start, width);
            if d != 0 {
                acc += &row[d - 1];
            }
        }
        acc
    }

    /// `scalars[i] * g` for all i, in parallel, as affine points; `progress` gets the number of
    /// points finished after each batch.
    pub fn mul_many(
        &self,
        scalars: &[ScalarBytes],
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<G::AffineRepr> {
        let mut out = vec![G::AffineRepr::identity(); scalars.len()];
        out.par_chunks_mut(BATCH)
            .zip(scalars.par_chunks(BATCH))
            .for_each(|(out, scalars)| {
                let proj: Vec<G> = scalars.iter().map(|s| self.mul(s)).collect();
                G::batch_normalize(&proj, out);
                progress(scalars.len());
            });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::{G1Projective, G2Projective, Scalar};
    use ff::Field;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn table_multiplication_matches_scalar_multiplication() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut scalars: Vec<Scalar> = (0..50).map(|_| Scalar::random(&mut rng)).collect();
        scalars.push(Scalar::ZERO);
        scalars.push(-Scalar::ONE);
        let bytes: Vec<ScalarBytes> = scalars.iter().map(Scalar::to_bytes_le).collect();
        for w in [3usize, 8, 11] {
            let t1 = FixedBaseTable::new(G1Projective::generator(), w);
            let t2 = FixedBaseTable::new(G2Projective::generator(), w);
            let p1 = t1.mul_many(&bytes, &|_| {});
            let p2 = t2.mul_many(&bytes, &|_| {});
            for (i, s) in scalars.iter().enumerate() {
                assert_eq!(p1[i], (G1Projective::generator() * s).to_affine());
                assert_eq!(p2[i], (G2Projective::generator() * s).to_affine());
            }
        }
    }
}
