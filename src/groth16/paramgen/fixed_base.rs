//! Fixed-base scalar multiplication with precomputed window tables: many multiples of one
//! generator at one addition per window, with the additions done in affine coordinates and
//! their inversions batched (Montgomery's trick) across a batch of points.
//!
//! An affine addition with a shared inversion costs about 5M + 1S against 7M + 4S for a mixed
//! projective addition, and the results need no conversion to affine at the end. The tables
//! are built the same way, a doubling of the window's rows at a time.

use blstrs::{Fp, Fp2, G1Affine, G1Projective, G2Affine, G2Projective};
use ff::Field;
use group::{prime::PrimeCurveAffine, Curve, Group};
use rayon::prelude::*;

use crate::groth16::msm::ScalarBytes;

/// Bits of a canonical scalar.
const SCALAR_BITS: usize = 255;
/// Points computed together (one batched inversion per window per batch).
const BATCH: usize = 2048;

/// How many scalars ahead `mul_batch` asks for table entries.
const PREFETCH_AHEAD: usize = 16;

/// Hints the CPU to bring `entry` into the cache (no-op for None or off x86-64).
#[inline(always)]
fn prefetch<T>(entry: Option<&T>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = entry {
        // SAFETY: a prefetch is a hint on a valid reference; it never faults.
        unsafe {
            std::arch::x86_64::_mm_prefetch(
                (entry as *const T).cast::<i8>(),
                std::arch::x86_64::_MM_HINT_T0,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = entry;
}

/// Affine points whose coordinates we can do arithmetic on.
pub trait AffineXY: PrimeCurveAffine + Send + Sync
where
    Self::Curve: Curve<AffineRepr = Self> + Group + Send + Sync,
{
    /// The coordinate field (Fp for G1, Fp2 for G2).
    type Base: Field;
    /// The coordinates of a finite point.
    fn xy(&self) -> (Self::Base, Self::Base);
    /// The finite point with these coordinates (must be on the curve).
    fn from_xy(x: Self::Base, y: Self::Base) -> Self;
}

impl AffineXY for G1Affine {
    type Base = Fp;
    fn xy(&self) -> (Fp, Fp) {
        (self.x(), self.y())
    }
    fn from_xy(x: Fp, y: Fp) -> Self {
        G1Affine::from_raw_unchecked(x, y, false)
    }
}

impl AffineXY for G2Affine {
    type Base = Fp2;
    fn xy(&self) -> (Fp2, Fp2) {
        (self.x(), self.y())
    }
    fn from_xy(x: Fp2, y: Fp2) -> Self {
        G2Affine::from_raw_unchecked(x, y, false)
    }
}

/// `p + q` for finite points with distinct x coordinates, given `1 / (q.x - p.x)` (from a
/// batched inversion).
#[inline]
fn affine_add<F: Field>(p: (F, F), q: (F, F), dx_inv: F) -> (F, F) {
    let lambda = (q.1 - p.1) * dx_inv;
    let x3 = lambda.square() - p.0 - q.0;
    (x3, lambda * (p.0 - x3) - p.1)
}

/// A table of `d * 2^(w*k) * g` for every window k and digit d in 1..2^w.
pub struct FixedBaseTable<A: AffineXY>
where
    A::Curve: Curve<AffineRepr = A> + Group + Send + Sync,
{
    window: usize,
    rows: Vec<Vec<A>>,
}

/// The window width minimising table building plus `count` multiplications (one addition per
/// table entry, one per window per point).
pub fn best_window(count: usize) -> usize {
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
    for (k, b) in bytes.iter().skip(start / 8).take(4).enumerate() {
        v |= (*b as usize) << (8 * k);
    }
    (v >> (start % 8)) & ((1 << width) - 1)
}

impl<A: AffineXY> FixedBaseTable<A>
where
    A::Curve: Curve<AffineRepr = A> + Group + Send + Sync,
{
    /// Builds the table for generator `g` with window width `window` (1 to 20 bits).
    pub fn new(g: A::Curve, window: usize) -> Self {
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
            .map(|base| Self::row(base, window))
            .collect();
        Self { window, rows }
    }

    /// `d * base` for every digit d in 1..2^window (entry d - 1), in affine coordinates.
    ///
    /// Built level by level: with entries 1..2m-1 known (m a power of two), entry 2m is entry m
    /// doubled, and entries 2m + j for j in 1..2m are `2m·base + j·base`, independent
    /// additions done with one shared inversion per level (their x coordinates differ:
    /// (2m ± j)·base is never the identity).
    fn row(base: A::Curve, window: usize) -> Vec<A> {
        let mut xy: Vec<(A::Base, A::Base)> = Vec::with_capacity((1 << window) - 1);
        xy.push(base.to_affine().xy());
        let mut prefix: Vec<A::Base> = Vec::new();
        for k in 0..window.saturating_sub(1) {
            let top = 1usize << k;
            let (tx, ty) = xy[top - 1];
            xy.push(A::from_xy(tx, ty).to_curve().double().to_affine().xy());
            let doubled = 2 * top;
            let (px, py) = xy[doubled - 1];
            prefix.clear();
            let mut acc = A::Base::ONE;
            for &(qx, _) in &xy[..doubled - 1] {
                prefix.push(acc);
                acc *= qx - px;
            }
            let mut inv: A::Base = Option::from(acc.invert()).expect("distinct x coordinates");
            let mut level = vec![(A::Base::ZERO, A::Base::ZERO); doubled - 1];
            for j in (0..doubled - 1).rev() {
                let (qx, qy) = xy[j];
                let dx_inv = inv * prefix[j];
                inv *= qx - px;
                level[j] = affine_add((px, py), (qx, qy), dx_inv);
            }
            xy.extend(level);
        }
        xy.into_iter().map(|(x, y)| A::from_xy(x, y)).collect()
    }

    /// `scalars[i] * g` for all i, in parallel batches, as affine points; `progress` gets the
    /// number of points finished after each batch.
    pub fn mul_many(&self, scalars: &[ScalarBytes], progress: &(dyn Fn(usize) + Sync)) -> Vec<A> {
        let mut out = vec![A::identity(); scalars.len()];
        out.par_chunks_mut(BATCH)
            .zip(scalars.par_chunks(BATCH))
            .for_each(|(out, scalars)| {
                self.mul_batch(scalars, out);
                progress(scalars.len());
            });
        out
    }

    /// Accumulates one table entry per window into each output point, in affine coordinates.
    fn mul_batch(&self, scalars: &[ScalarBytes], out: &mut [A]) {
        let n = scalars.len();
        // acc[i] = None while the point is still the identity.
        let mut acc: Vec<Option<(A::Base, A::Base)>> = vec![None; n];
        let mut adds: Vec<(usize, A::Base, A::Base)> = Vec::with_capacity(n);
        let mut inv: Vec<A::Base> = Vec::with_capacity(n);
        let mut digits: Vec<usize> = Vec::with_capacity(n);
        for (k, row) in self.rows.iter().enumerate() {
            let start = k * self.window;
            adds.clear();
            digits.clear();
            digits.extend(scalars.iter().map(|s| digit(s, start, self.window)));
            for (i, &d) in digits.iter().enumerate() {
                // A row spans megabytes and digits are random: ask for entries ahead.
                if let Some(&ahead) = digits.get(i + PREFETCH_AHEAD) {
                    prefetch(row.get(ahead.wrapping_sub(1)));
                }
                if d == 0 {
                    continue;
                }
                let (qx, qy) = row[d - 1].xy();
                match acc[i] {
                    None => acc[i] = Some((qx, qy)),
                    Some((ax, ay)) if ax == qx => {
                        // Doubling or cancellation: rare, done projectively.
                        let p = A::from_xy(ax, ay).to_curve() + row[d - 1].to_curve();
                        let p = p.to_affine();
                        acc[i] = (!bool::from(p.is_identity())).then(|| p.xy());
                    }
                    Some(_) => adds.push((i, qx, qy)),
                }
            }
            // Batched inversion of (qx - ax) over all pending additions.
            inv.clear();
            let mut running = A::Base::ONE;
            for &(i, qx, _) in &adds {
                inv.push(running);
                running *= qx - acc[i].expect("pending additions have an accumulator").0;
            }
            let mut running_inv: A::Base =
                Option::from(running.invert()).expect("distinct x coordinates");
            for (j, &(i, qx, qy)) in adds.iter().enumerate().rev() {
                let (ax, ay) = acc[i].expect("pending additions have an accumulator");
                let dx_inv = running_inv * inv[j];
                running_inv *= qx - ax;
                acc[i] = Some(affine_add((ax, ay), (qx, qy), dx_inv));
            }
        }
        for (o, a) in out.iter_mut().zip(acc) {
            *o = a.map_or(A::identity(), |(x, y)| A::from_xy(x, y));
        }
    }
}

/// Table for G1 multiples.
pub type G1Table = FixedBaseTable<G1Affine>;
/// Table for G2 multiples.
pub type G2Table = FixedBaseTable<G2Affine>;

/// Builds a G1 table for the standard generator, sized for `count` multiplications.
pub fn g1_table(count: usize) -> G1Table {
    FixedBaseTable::new(G1Projective::generator(), best_window(count))
}

/// Builds a G2 table for the standard generator, sized for `count` multiplications.
pub fn g2_table(count: usize) -> G2Table {
    FixedBaseTable::new(G2Projective::generator(), best_window(count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use blstrs::Scalar;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn table_multiplication_matches_scalar_multiplication() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut scalars: Vec<Scalar> = (0..50).map(|_| Scalar::random(&mut rng)).collect();
        // Edge cases: zero (identity), one, -1 (every window non-zero), digits in one row only.
        scalars.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, Scalar::from(9u64)]);
        scalars.push(Scalar::from(1u64 << 8) + Scalar::ONE);
        let bytes: Vec<ScalarBytes> = scalars.iter().map(Scalar::to_bytes_le).collect();
        for w in [1usize, 2, 3, 8, 11] {
            let t1 = G1Table::new(G1Projective::generator(), w);
            let t2 = G2Table::new(G2Projective::generator(), w);
            let p1 = t1.mul_many(&bytes, &|_| {});
            let p2 = t2.mul_many(&bytes, &|_| {});
            for (i, s) in scalars.iter().enumerate() {
                assert_eq!(
                    p1[i],
                    (G1Projective::generator() * s).to_affine(),
                    "G1 w={w} i={i}"
                );
                assert_eq!(
                    p2[i],
                    (G2Projective::generator() * s).to_affine(),
                    "G2 w={w} i={i}"
                );
            }
        }
    }
}
