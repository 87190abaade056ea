//! Number-theoretic transforms over the BLS12-381 scalar field, parallel with rayon.
//!
//! Only what the prover needs to turn a, b, c into the quotient h: forward and inverse
//! transforms on a power-of-two domain, the coset variants with the field's multiplicative
//! generator (7, as bellperson), and division by the vanishing polynomial on the coset.
//!
//! The transforms are radix-2 butterflies arranged for the cache: the stages whose butterflies
//! stay inside a block of [`BLOCK`] scalars (256 KiB, an L2's worth) run block by block in one
//! pass over memory, and the stages above it run two at a time (radix 4), so a 2^22 transform
//! reads its 128 MiB 6 times instead of 22. The quotient's chain
//! ([`Domain::coset_evaluations`], [`Domain::coefficients_from_coset`]) pairs a
//! decimation-in-frequency inverse (natural order in, bit-reversed out) with a
//! decimation-in-time forward transform (bit-reversed in, natural out), so of its seven
//! transforms only the last needs a bit-reversal permutation. One table of powers of omega
//! serves both directions (omega^-j = -omega^(m/2-j)) and every transform on the domain.
//!
//! On a CPU with AVX-512 IFMA the butterflies of every stage with at least eight of them per
//! group run eight at a time ([`super::ifma`]), about 3x faster than blst's scalar arithmetic;
//! the results are the same bytes.

use std::sync::OnceLock;

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use super::error::{Groth16Error, Result};
use super::ifma::{scaled_twiddle, Ifma, Twiddles8, LANES};

/// Scalars per cache block: the stages with butterflies inside such a block run in one pass.
const BLOCK: usize = 1 << 13;

/// Scalars per rayon task in the passes over the whole vector.
const TASK: usize = 1 << 10;

/// A multiplicative subgroup of size `m = 2^log_m` used as the evaluation domain.
#[derive(Clone, Debug)]
pub struct Domain {
    m: usize,
    log_m: u32,
    omega: Scalar,
    m_inv: Scalar,
    /// omega^j for j < m/2 (scaled for the vector arithmetic when `ifma` is set), computed on
    /// first use and kept for the domain's later transforms.
    twiddles: OnceLock<Vec<Scalar>>,
    /// The vector arithmetic, where the CPU has it.
    ifma: Option<Ifma>,
}

impl Domain {
    /// The smallest power-of-two domain holding `n` evaluations (at least 1).
    pub fn for_size(n: usize) -> Result<Self> {
        let m = n.max(1).next_power_of_two();
        let log_m = m.trailing_zeros();
        if log_m > Scalar::S {
            return Err(Groth16Error::DomainTooLarge(n));
        }
        let mut omega = Scalar::ROOT_OF_UNITY;
        for _ in log_m..Scalar::S {
            omega = omega.square();
        }
        Ok(Self {
            m,
            log_m,
            omega,
            m_inv: invert(Scalar::from(m as u64)),
            twiddles: OnceLock::new(),
            ifma: Ifma::detect(),
        })
    }

    /// The same domain computing with blst's scalar arithmetic only (same results; for
    /// comparisons and tests).
    pub fn with_scalar_arithmetic(self) -> Self {
        Self {
            twiddles: OnceLock::new(),
            ifma: None,
            ..self
        }
    }

    /// Whether the transforms run on AVX-512 IFMA.
    pub fn uses_ifma(&self) -> bool {
        self.ifma.is_some()
    }

    /// Domain size m.
    pub fn size(&self) -> usize {
        self.m
    }

    /// The generator omega of the domain.
    pub fn omega(&self) -> Scalar {
        self.omega
    }

    /// Evaluations of the polynomial with coefficients `v` at omega^i (in place).
    pub fn fft(&self, v: &mut [Scalar]) {
        self.check_len(v);
        bit_reverse(v, self.log_m);
        self.dit::<false>(v);
    }

    /// Coefficients of the polynomial with evaluations `v` at omega^i (in place).
    pub fn ifft(&self, v: &mut [Scalar]) {
        self.check_len(v);
        bit_reverse(v, self.log_m);
        self.dit::<true>(v);
        scale(v, self.m_inv);
    }

    /// Evaluations at g·omega^i (g = 7) of the polynomial with coefficients `v`.
    pub fn coset_fft(&self, v: &mut [Scalar]) {
        distribute_powers(v, Scalar::MULTIPLICATIVE_GENERATOR);
        self.fft(v);
    }

    /// Coefficients of the polynomial with evaluations `v` at g·omega^i.
    pub fn icoset_fft(&self, v: &mut [Scalar]) {
        self.ifft(v);
        distribute_powers(v, invert(Scalar::MULTIPLICATIVE_GENERATOR));
    }

    /// 1 / z(x) on the coset: z(x) = x^m - 1 is the constant g^m - 1 there.
    pub fn z_on_coset_inv(&self) -> Scalar {
        let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([self.m as u64]) - Scalar::ONE;
        invert(z)
    }

    /// Turns evaluations at omega^i into evaluations at g·omega^i (in place): `ifft` then
    /// `coset_fft`, with no bit-reversal permutation between or around them.
    pub fn coset_evaluations(&self, v: &mut [Scalar]) {
        self.check_len(v);
        self.dif::<true>(v);
        self.scale_bit_reversed(v, self.m_inv, Scalar::MULTIPLICATIVE_GENERATOR);
        self.dit::<false>(v);
    }

    /// `k` times the coefficients of the polynomial with evaluations `v` at g·omega^i (in
    /// place): `icoset_fft` with the scaling by `k` folded into its own, and one bit-reversal.
    pub fn coefficients_from_coset(&self, v: &mut [Scalar], k: Scalar) {
        self.check_len(v);
        self.dif::<true>(v);
        let g_inv = invert(Scalar::MULTIPLICATIVE_GENERATOR);
        self.scale_bit_reversed(v, k * self.m_inv, g_inv);
        bit_reverse(v, self.log_m);
    }

    fn check_len(&self, v: &[Scalar]) {
        assert_eq!(v.len(), self.m, "NTT input must have the domain size");
    }

    fn twiddles(&self) -> Twiddles<'_> {
        let table = self.twiddles.get_or_init(|| {
            let mut table = powers(self.omega, self.m / 2);
            if self.ifma.is_some() {
                table.par_iter_mut().for_each(|w| *w = scaled_twiddle(*w));
            }
            table
        });
        Twiddles {
            table,
            m: self.m,
            ifma: self.ifma,
        }
    }

    /// Radix-2 decimation in time: bit-reversed input, natural output. `INVERSE` uses
    /// omega^-1 (without the 1/m).
    fn dit<const INVERSE: bool>(&self, v: &mut [Scalar]) {
        let m = self.m;
        if m == 1 {
            return;
        }
        let tw = self.twiddles();
        let block = BLOCK.min(m);
        let local = tw.block_table::<INVERSE>(block);
        v.par_chunks_mut(block).for_each(|b| {
            let mut half = 1;
            while half < block {
                local.stage(b, half, Dit);
                half *= 2;
            }
        });
        let mut half = block;
        while half < m {
            if 4 * half <= m {
                v.par_chunks_mut(4 * half)
                    .for_each(|b| radix4::<INVERSE, _>(b, half, &tw, Dit));
                half *= 4;
            } else {
                v.par_chunks_mut(2 * half)
                    .for_each(|b| radix2::<INVERSE>(b, half, &tw, Dit));
                half *= 2;
            }
        }
    }

    /// Radix-2 decimation in frequency: natural input, bit-reversed output. `INVERSE` uses
    /// omega^-1 (without the 1/m).
    fn dif<const INVERSE: bool>(&self, v: &mut [Scalar]) {
        let m = self.m;
        if m == 1 {
            return;
        }
        let tw = self.twiddles();
        let block = BLOCK.min(m);
        // The stages above the block, largest first, two at a time while at least two remain.
        let mut half = m / 2;
        while half >= block {
            if half / 2 >= block {
                v.par_chunks_mut(2 * half)
                    .for_each(|b| radix4::<INVERSE, _>(b, half / 2, &tw, Dif));
                half /= 4;
            } else {
                v.par_chunks_mut(2 * half)
                    .for_each(|b| radix2::<INVERSE>(b, half, &tw, Dif));
                half /= 2;
            }
        }
        let local = tw.block_table::<INVERSE>(block);
        v.par_chunks_mut(block).for_each(|b| {
            let mut half = block / 2;
            while half >= 1 {
                local.stage(b, half, Dif);
                half /= 2;
            }
        });
    }

    /// Multiplies the scalar at position p of a bit-reversed vector by `k·x^rev(p)`: the
    /// coset shift (and scaling) of coefficients an inverse DIF left in bit-reversed order.
    /// With p = hi·2^lo_bits + lo, rev(p) = rev(lo)·2^hi_bits + rev(hi), so two short tables
    /// give the factor.
    fn scale_bit_reversed(&self, v: &mut [Scalar], k: Scalar, x: Scalar) {
        let lo_bits = self.log_m / 2;
        let hi_bits = self.log_m - lo_bits;
        let reversed_powers = |base: Scalar, bits: u32, first: Scalar| -> Vec<Scalar> {
            let natural = powers(base, 1 << bits);
            (0..1usize << bits)
                .map(|i| first * natural[reverse(i, bits)])
                .collect()
        };
        let lo_table = reversed_powers(x.pow_vartime([1u64 << hi_bits]), lo_bits, k);
        let hi_table = reversed_powers(x, hi_bits, Scalar::ONE);
        v.par_chunks_mut(1 << lo_bits)
            .zip(hi_table.par_iter())
            .for_each(|(row, hi)| {
                for (s, lo) in row.iter_mut().zip(&lo_table) {
                    *s *= *hi * lo;
                }
            });
    }
}

/// The powers of omega one domain's transforms read, in either direction.
struct Twiddles<'a> {
    /// omega^j for j < m/2, scaled for the vector arithmetic where `ifma` is set.
    table: &'a [Scalar],
    m: usize,
    ifma: Option<Ifma>,
}

impl Twiddles<'_> {
    /// m/len: what [`Self::get`] takes for a stage of length `len` (hoisted out of the loops,
    /// a division per twiddle costs as much as the butterfly's addition).
    fn stride(&self, len: usize) -> usize {
        self.m / len
    }

    /// The twiddle of butterfly `j` of a stage with `stride` m/len: omega^(j·m/len), or its
    /// inverse, which is -omega^(m/2 - j·m/len) since omega^(m/2) = -1.
    #[inline(always)]
    fn get<const INVERSE: bool>(&self, stride: usize, j: usize) -> Scalar {
        let e = j * stride;
        if INVERSE && e != 0 {
            -self.table[self.m / 2 - e]
        } else {
            self.table[e]
        }
    }

    /// The eight twiddles of butterflies `first..first + 8` of a stage with `stride`, for
    /// the vector arithmetic.
    fn strided<const INVERSE: bool>(&self, stride: usize, first: usize) -> Twiddles8<'_> {
        Twiddles8::Strided {
            table: self.table,
            m: self.m,
            stride,
            first,
            inverse: INVERSE,
        }
    }

    /// The twiddles of the stages inside a block.
    fn block_table<const INVERSE: bool>(&self, block: usize) -> BlockTwiddles {
        let mut table = Vec::with_capacity(block.saturating_sub(1));
        let mut half = 1;
        while half < block {
            let stride = self.stride(2 * half);
            table.extend((0..half).map(|j| self.get::<INVERSE>(stride, j)));
            half *= 2;
        }
        // The stages with fewer than eight butterflies a group run on scalars: unscaled.
        let unscale = invert(scaled_twiddle(Scalar::ONE));
        let small = table
            .iter()
            .take(LANES - 1)
            .map(|w| if self.ifma.is_some() { *w * unscale } else { *w })
            .collect();
        BlockTwiddles {
            table,
            small,
            ifma: self.ifma,
        }
    }
}

/// The twiddles of the stages inside a block, contiguous: the stage of half h at [h-1, 2h-1).
struct BlockTwiddles {
    /// Every stage's, as the domain's table holds them (scaled where `ifma` is set).
    table: Vec<Scalar>,
    /// The stages of half below [`LANES`], unscaled: they run on scalars.
    small: Vec<Scalar>,
    ifma: Option<Ifma>,
}

impl BlockTwiddles {
    /// One stage of half `half` over a block. Both butterflies are (x + y, x − y) at w = 1,
    /// so on scalars each group's first pair skips the multiplication.
    fn stage(&self, block: &mut [Scalar], half: usize, bf: impl Butterfly) {
        let range = half - 1..2 * half - 1;
        match self.ifma {
            Some(ifma) if half >= LANES => {
                let w = &self.table[range];
                for group in block.chunks_exact_mut(2 * half) {
                    let (lo, hi) = group.split_at_mut(half);
                    for ((x, y), w) in lo
                        .chunks_exact_mut(LANES)
                        .zip(hi.chunks_exact_mut(LANES))
                        .zip(w.chunks_exact(LANES))
                    {
                        bf.apply8(ifma, x, y, Twiddles8::Contiguous(w));
                    }
                }
            }
            _ => {
                let w = if self.ifma.is_some() {
                    &self.small[range]
                } else {
                    &self.table[range]
                };
                scalar_block_stage(block, half, w, bf)
            }
        }
    }
}

/// A radix-2 butterfly on the pair (x, y) with twiddle w, in place.
trait Butterfly: Copy + Send + Sync {
    /// Whether two fused stages run the smaller half first (DIT) or the larger (DIF).
    const SMALL_HALF_FIRST: bool;
    fn apply(self, x: &mut Scalar, y: &mut Scalar, w: &Scalar);
    /// The same on eight pairs at once, the twiddles scaled for the vector arithmetic.
    fn apply8(self, ifma: Ifma, x: &mut [Scalar], y: &mut [Scalar], w: Twiddles8);
}

/// Decimation in time: (x + w·y, x − w·y).
#[derive(Clone, Copy)]
struct Dit;

impl Butterfly for Dit {
    const SMALL_HALF_FIRST: bool = true;
    #[inline(always)]
    fn apply(self, x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
        let t = *y * w;
        (*x, *y) = (*x + t, *x - t);
    }
    fn apply8(self, ifma: Ifma, x: &mut [Scalar], y: &mut [Scalar], w: Twiddles8) {
        ifma.dit8(x, y, w)
    }
}

/// Decimation in frequency: (x + y, (x − y)·w).
#[derive(Clone, Copy)]
struct Dif;

impl Butterfly for Dif {
    const SMALL_HALF_FIRST: bool = false;
    #[inline(always)]
    fn apply(self, x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
        (*x, *y) = (*x + *y, (*x - *y) * w);
    }
    fn apply8(self, ifma: Ifma, x: &mut [Scalar], y: &mut [Scalar], w: Twiddles8) {
        ifma.dif8(x, y, w)
    }
}

/// One stage of half `half` over a block on scalars, with that stage's twiddles `w`.
fn scalar_block_stage(block: &mut [Scalar], half: usize, w: &[Scalar], bf: impl Butterfly) {
    for group in block.chunks_exact_mut(2 * half) {
        let (lo, hi) = group.split_at_mut(half);
        let (x, y) = (&mut lo[0], &mut hi[0]);
        (*x, *y) = (*x + *y, *x - *y);
        for ((x, y), w) in lo[1..].iter_mut().zip(&mut hi[1..]).zip(&w[1..]) {
            bf.apply(x, y, w);
        }
    }
}

/// The stage of half `half` over one group of `2·half` scalars, in parallel tasks.
fn radix2<const INVERSE: bool>(
    group: &mut [Scalar],
    half: usize,
    tw: &Twiddles,
    bf: impl Butterfly,
) {
    let (lo, hi) = group.split_at_mut(half);
    let stride = tw.stride(2 * half);
    lo.par_chunks_mut(TASK)
        .zip(hi.par_chunks_mut(TASK))
        .enumerate()
        .for_each(|(task, (lo, hi))| {
            if let Some(ifma) = tw.ifma {
                // The chunks are TASK long, a multiple of LANES (the stages above a block).
                for (k, (x, y)) in lo
                    .chunks_exact_mut(LANES)
                    .zip(hi.chunks_exact_mut(LANES))
                    .enumerate()
                {
                    let w = tw.strided::<INVERSE>(stride, task * TASK + k * LANES);
                    bf.apply8(ifma, x, y, w);
                }
                return;
            }
            for (k, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                bf.apply(x, y, &tw.get::<INVERSE>(stride, task * TASK + k));
            }
        });
}

/// The stages of half `h` and `2h` together over one group of `4h` scalars, so each scalar
/// is read and written once for both: the half-`h` stage first for DIT, last for DIF.
fn radix4<const INVERSE: bool, B: Butterfly>(group: &mut [Scalar], h: usize, tw: &Twiddles, bf: B) {
    let (s2, s4) = (tw.stride(2 * h), tw.stride(4 * h));
    let (q0, rest) = group.split_at_mut(h);
    let (q1, rest) = rest.split_at_mut(h);
    let (q2, q3) = rest.split_at_mut(h);
    q0.par_chunks_mut(TASK)
        .zip(q1.par_chunks_mut(TASK))
        .zip(q2.par_chunks_mut(TASK))
        .zip(q3.par_chunks_mut(TASK))
        .enumerate()
        .for_each(|(task, (((q0, q1), q2), q3))| {
            if let Some(ifma) = tw.ifma {
                // TASK-long chunks, a multiple of LANES (the stages above a block).
                for k in (0..q0.len()).step_by(LANES) {
                    let j = task * TASK + k;
                    let w = [
                        tw.strided::<INVERSE>(s2, j),
                        tw.strided::<INVERSE>(s4, j),
                        tw.strided::<INVERSE>(s4, j + h),
                    ];
                    let lanes = k..k + LANES;
                    ifma.radix4_8(
                        B::SMALL_HALF_FIRST,
                        [
                            &mut q0[lanes.clone()],
                            &mut q1[lanes.clone()],
                            &mut q2[lanes.clone()],
                            &mut q3[lanes],
                        ],
                        w,
                    );
                }
                return;
            }
            for k in 0..q0.len() {
                let j = task * TASK + k;
                let w1 = tw.get::<INVERSE>(s2, j);
                let wa = tw.get::<INVERSE>(s4, j);
                let wb = tw.get::<INVERSE>(s4, j + h);
                let [mut x0, mut x1, mut x2, mut x3] = [q0[k], q1[k], q2[k], q3[k]];
                // Half h pairs (j, j+h) and (j+2h, j+3h); half 2h pairs (j, j+2h), (j+h, j+3h).
                let small = |x0: &mut Scalar, x1: &mut Scalar, x2: &mut Scalar, x3: &mut Scalar| {
                    bf.apply(x0, x1, &w1);
                    bf.apply(x2, x3, &w1);
                };
                let large = |x0: &mut Scalar, x1: &mut Scalar, x2: &mut Scalar, x3: &mut Scalar| {
                    bf.apply(x0, x2, &wa);
                    bf.apply(x1, x3, &wb);
                };
                if B::SMALL_HALF_FIRST {
                    small(&mut x0, &mut x1, &mut x2, &mut x3);
                    large(&mut x0, &mut x1, &mut x2, &mut x3);
                } else {
                    large(&mut x0, &mut x1, &mut x2, &mut x3);
                    small(&mut x0, &mut x1, &mut x2, &mut x3);
                }
                [q0[k], q1[k], q2[k], q3[k]] = [x0, x1, x2, x3];
            }
        });
}

/// The low `bits` bits of `i`, reversed.
fn reverse(i: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - bits)
    }
}

/// Permutes `v` (length 2^log_m) into bit-reversed order, in parallel.
fn bit_reverse(v: &mut [Scalar], log_m: u32) {
    /// The vector's base pointer, shared by the tasks; each swaps only the pairs it owns.
    #[derive(Clone, Copy)]
    struct Shared(*mut Scalar);
    // SAFETY: the tasks below touch disjoint pairs of elements.
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}
    impl Shared {
        /// Swaps elements i and j.
        ///
        /// # Safety
        /// Both are in bounds, and no other thread touches either meanwhile.
        unsafe fn swap(self, i: usize, j: usize) {
            // SAFETY: as the caller promises.
            unsafe { std::ptr::swap(self.0.add(i), self.0.add(j)) }
        }
    }
    let base = Shared(v.as_mut_ptr());
    (0..v.len())
        .into_par_iter()
        .with_min_len(TASK)
        .for_each(|i| {
            let j = reverse(i, log_m);
            if i < j {
                // SAFETY: i and j are below v.len() = 2^log_m, and the pair {i, j} is
                // swapped only by the task of its smaller index, so no two tasks touch the
                // same element.
                unsafe { base.swap(i, j) };
            }
        });
}

fn invert(x: Scalar) -> Scalar {
    Option::<Scalar>::from(x.invert()).expect("non-zero")
}

/// `[1, x, x^2, ..., x^(count-1)]`, computed in parallel chunks.
pub fn powers(x: Scalar, count: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; count];
    let chunk = (count / (rayon::current_num_threads() * 4)).max(1024);
    out.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| {
        let mut acc = x.pow_vartime([(c * chunk) as u64]);
        for p in part {
            *p = acc;
            acc *= x;
        }
    });
    out
}

/// Multiplies `v[i]` by `g^i`.
pub fn distribute_powers(v: &mut [Scalar], g: Scalar) {
    let chunk = (v.len() / (rayon::current_num_threads() * 4)).max(1024);
    v.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| {
        let mut acc = g.pow_vartime([(c * chunk) as u64]);
        for p in part {
            *p *= acc;
            acc *= g;
        }
    });
}

/// Multiplies every element by `k`.
pub fn scale(v: &mut [Scalar], k: Scalar) {
    v.par_iter_mut().for_each(|x| *x *= k);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    /// The domain of size 2^log and a random vector of that length.
    fn domain_and_random_vector(log: u32, rng: &mut impl rand::RngCore) -> (Domain, Vec<Scalar>) {
        let d = Domain::for_size(1 << log).unwrap();
        let v = (0..d.size()).map(|_| Scalar::random(&mut *rng)).collect();
        (d, v)
    }

    fn naive_eval(coeffs: &[Scalar], x: Scalar) -> Scalar {
        coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
    }

    #[test]
    fn fft_matches_naive_evaluation_and_inverts() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        // Up to the block, then one radix-2 stage, one radix-4 pair, and both above it.
        for log in [0u32, 1, 3, 6, 13, 14, 15, 16] {
            let (d, coeffs) = domain_and_random_vector(log, &mut rng);
            let m = d.size();
            let mut v = coeffs.clone();
            d.fft(&mut v);
            for i in [0usize, 1, m / 2, m - 1].into_iter().filter(|&i| i < m) {
                assert_eq!(v[i], naive_eval(&coeffs, d.omega().pow_vartime([i as u64])));
            }
            d.ifft(&mut v);
            assert_eq!(v, coeffs);
            d.coset_fft(&mut v);
            let g = Scalar::MULTIPLICATIVE_GENERATOR;
            assert_eq!(
                v[m - 1],
                naive_eval(&coeffs, g * d.omega().pow_vartime([(m - 1) as u64]))
            );
            d.icoset_fft(&mut v);
            assert_eq!(v, coeffs);
        }
    }

    #[test]
    fn quotient_chain_matches_the_plain_transforms() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        for log in [0u32, 1, 2, 5, 13, 14, 15, 16] {
            let (d, evals) = domain_and_random_vector(log, &mut rng);

            let mut want = evals.clone();
            d.ifft(&mut want);
            d.coset_fft(&mut want);
            let mut got = evals.clone();
            d.coset_evaluations(&mut got);
            assert_eq!(got, want, "coset evaluations, m = 2^{log}");

            let k = Scalar::random(&mut rng);
            let mut want = evals.clone();
            d.icoset_fft(&mut want);
            scale(&mut want, k);
            let mut got = evals;
            d.coefficients_from_coset(&mut got, k);
            assert_eq!(got, want, "coefficients from the coset, m = 2^{log}");
        }
    }

    #[test]
    fn bit_reverse_is_the_permutation() {
        for log in [0u32, 1, 4, 11] {
            let m = 1usize << log;
            let mut v: Vec<Scalar> = (0..m as u64).map(Scalar::from).collect();
            bit_reverse(&mut v, log);
            for (p, x) in v.iter().enumerate() {
                assert_eq!(
                    *x,
                    Scalar::from(reverse(p, log) as u64),
                    "m = 2^{log}, p = {p}"
                );
            }
        }
    }
}
