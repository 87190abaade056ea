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
use super::ifma::{scaled_twiddle, small_stage_twiddles, Ifma, LaneScalars, LANES};

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
    /// Log of the rows of a tile of the stages above a block ([`tiled_pass`]).
    tile_rows_log: u32,
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
            tile_rows_log: TILE_ROWS_LOG,
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

    /// a[i] ← a[i]·b[i] − c[i]: the quotient's numerator on the coset, in parallel.
    pub fn mul_sub(&self, a: &mut [Scalar], b: &[Scalar], c: &[Scalar]) {
        assert!(
            a.len() == b.len() && a.len() == c.len(),
            "three vectors alike"
        );
        let chunks = a
            .par_chunks_mut(TASK)
            .zip(b.par_chunks(TASK))
            .zip(c.par_chunks(TASK));
        chunks.for_each(|((a, b), c)| {
            let whole = match self.ifma {
                Some(ifma) => {
                    let lanes = (a.chunks_exact_mut(LANES))
                        .zip(b.chunks_exact(LANES))
                        .zip(c.chunks_exact(LANES));
                    for ((a, b), c) in lanes {
                        ifma.mul_sub8(a, b, c);
                    }
                    a.len() / LANES * LANES
                }
                None => 0,
            };
            for ((a, b), c) in a[whole..].iter_mut().zip(&b[whole..]).zip(&c[whole..]) {
                *a = *a * b - c;
            }
        });
    }

    /// The same domain with tiles of 2^k rows above a block (more passes; for tests).
    #[cfg(test)]
    fn with_tile_rows_log(self, k: u32) -> Self {
        Self {
            tile_rows_log: k,
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
            let first = match self.ifma {
                Some(_) => scaled_twiddle(Scalar::ONE),
                None => Scalar::ONE,
            };
            powers_times(first, self.omega, self.m / 2)
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
        v.par_chunks_mut(block)
            .for_each_init(Vec::new, |scratch, b| local.run(b, scratch, Dit));
        if let Some(ifma) = tw.ifma {
            for (h0, rows_log) in upper_passes(block, m, self.tile_rows_log) {
                tiled_pass::<INVERSE, _>(v, h0, rows_log, &tw, ifma, Dit);
            }
            return;
        }
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
        let upper = match tw.ifma {
            Some(ifma) => {
                for (h0, rows_log) in upper_passes(block, m, self.tile_rows_log).into_iter().rev() {
                    tiled_pass::<INVERSE, _>(v, h0, rows_log, &tw, ifma, Dif);
                }
                0
            }
            None => m / 2,
        };
        // The stages above the block, largest first, two at a time while at least two remain.
        let mut half = upper;
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
        v.par_chunks_mut(block)
            .for_each_init(Vec::new, |scratch, b| local.run(b, scratch, Dif));
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
        // On the vector arithmetic (rows of eight and more) both factors are scaled.
        let vector = self.ifma.filter(|_| 1usize << lo_bits >= LANES);
        let unit = match vector {
            Some(_) => scaled_twiddle(Scalar::ONE),
            None => Scalar::ONE,
        };
        let lo_table = reversed_powers(x.pow_vartime([1u64 << hi_bits]), lo_bits, k * unit);
        let hi_table = reversed_powers(x, hi_bits, unit);
        if let Some(ifma) = vector {
            v.par_chunks_mut(1 << lo_bits)
                .zip(hi_table.par_iter())
                .for_each(|(row, hi)| {
                    for (s, lo) in row
                        .chunks_exact_mut(LANES)
                        .zip(lo_table.chunks_exact(LANES))
                    {
                        ifma.scale8(s, lo, *hi);
                    }
                });
            return;
        }
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
            .map(|w| {
                if self.ifma.is_some() {
                    *w * unscale
                } else {
                    *w
                }
            })
            .collect::<Vec<_>>();
        let vector = self
            .ifma
            .filter(|_| block >= 2 * LANES)
            .map(|ifma| VectorTwiddles::new(ifma, &table, &small));
        BlockTwiddles {
            table,
            small,
            scaled: self.ifma.is_some(),
            vector,
        }
    }
}

/// The twiddles of the stages inside a block, contiguous: the stage of half h at [h-1, 2h-1).
struct BlockTwiddles {
    /// Every stage's, as the domain's table holds them (scaled where it has an [`Ifma`]).
    table: Vec<Scalar>,
    /// The stages of half below [`LANES`], unscaled, for blocks that run on scalars.
    small: Vec<Scalar>,
    /// Whether `table` is scaled for the vector arithmetic.
    scaled: bool,
    /// The same in lane form, where the block's stages run on the vector arithmetic.
    vector: Option<VectorTwiddles>,
}

impl BlockTwiddles {
    /// Every stage inside one block: the smallest half first for DIT, the largest for DIF.
    fn run<B: Butterfly>(&self, block: &mut [Scalar], scratch: &mut Vec<LaneScalars>, bf: B) {
        if let Some(vector) = &self.vector {
            return vector.run(block, scratch, bf);
        }
        let stages = block.len().trailing_zeros();
        for k in 0..stages {
            let half = if B::SMALL_HALF_FIRST {
                1 << k
            } else {
                block.len() >> (k + 1)
            };
            let range = half - 1..2 * half - 1;
            // A scaled table with no vector stages: a block below 16, only small stages.
            let w = if self.scaled {
                &self.small[range]
            } else {
                &self.table[range]
            };
            scalar_block_stage(block, half, w, bf);
        }
    }
}

/// A block's twiddles in lane form: every stage inside a block runs on eight butterflies at
/// a time, the block held in lane form from its first stage to its last.
struct VectorTwiddles {
    ifma: Ifma,
    /// The stage of half 8·hv at [hv − 1, 2·hv − 1) (hv vectors), scaled.
    stages: Vec<LaneScalars>,
    /// The stages of half 1, 2 and 4, as [`Ifma::small_stages_lanes`] reads them.
    small: [LaneScalars; 3],
}

impl VectorTwiddles {
    /// From a block's scaled table and its first seven twiddles unscaled.
    fn new(ifma: Ifma, table: &[Scalar], small: &[Scalar]) -> Self {
        let mut stages = vec![LaneScalars::default(); table.len() / LANES];
        // The stage of half h = 8·hv starts at h − 1 in the table and at hv − 1 here.
        let mut hv = 1;
        // (The table holds block − 1 twiddles: stages of half up to block / 2.)
        while 2 * LANES * hv <= table.len() + 1 {
            let h = LANES * hv;
            for (i, w) in table[h - 1..2 * h - 1].chunks_exact(LANES).enumerate() {
                ifma.to_lanes(w, &mut stages[hv - 1 + i]);
            }
            hv *= 2;
        }
        let small_scaled = small_stage_twiddles(|h, j| small[h - 1 + j]);
        let mut small = [LaneScalars::default(); 3];
        for (lanes, w) in small.iter_mut().zip(small_scaled.chunks_exact(LANES)) {
            ifma.to_lanes(w, lanes);
        }
        Self {
            ifma,
            stages,
            small,
        }
    }

    /// Every stage inside one block (16 scalars or more), in lane form.
    fn run<B: Butterfly>(&self, block: &mut [Scalar], scratch: &mut Vec<LaneScalars>, _bf: B) {
        let (ifma, dit) = (self.ifma, B::SMALL_HALF_FIRST);
        let n = block.len() / LANES;
        scratch.clear();
        scratch.resize(n, LaneScalars::default());
        for (lanes, scalars) in scratch.iter_mut().zip(block.chunks_exact(LANES)) {
            ifma.to_lanes(scalars, lanes);
        }
        let small = |v: &mut [LaneScalars]| {
            for pair in v.chunks_exact_mut(2) {
                if let [a, b] = pair {
                    ifma.small_stages_lanes(dit, a, b, &self.small);
                }
            }
        };
        let stage = |v: &mut [LaneScalars], hv: usize| {
            let w = &self.stages[hv - 1..2 * hv - 1];
            for group in v.chunks_exact_mut(2 * hv) {
                let (lo, hi) = group.split_at_mut(hv);
                for ((x, y), w) in lo.iter_mut().zip(hi).zip(w) {
                    ifma.butterflies_lanes(dit, x, y, w);
                }
            }
        };
        if dit {
            small(scratch);
            let mut hv = 1;
            while hv < n {
                stage(scratch, hv);
                hv *= 2;
            }
        } else {
            let mut hv = n / 2;
            while hv >= 1 {
                stage(scratch, hv);
                hv /= 2;
            }
            small(scratch);
        }
        for (lanes, scalars) in scratch.iter().zip(block.chunks_exact_mut(LANES)) {
            ifma.from_lanes(lanes, scalars);
        }
    }
}

/// A radix-2 butterfly on the pair (x, y) with twiddle w, in place.
trait Butterfly: Copy + Send + Sync {
    /// Whether two fused stages run the smaller half first (DIT) or the larger (DIF).
    const SMALL_HALF_FIRST: bool;
    fn apply(self, x: &mut Scalar, y: &mut Scalar, w: &Scalar);
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

/// Rows of a tile in [`tiled_pass`] at most (2^10 rows of eight scalars: 256 KiB, in L2).
const TILE_ROWS_LOG: u32 = 10;

/// The passes that run the stages above a block (half `block` to m/2) on the vector
/// arithmetic, smallest half first: each is (its smallest half h0, log of its stages).
fn upper_passes(block: usize, m: usize, tile_rows_log: u32) -> Vec<(usize, u32)> {
    let stages = (m / block).trailing_zeros();
    let passes = stages.div_ceil(tile_rows_log);
    let mut out = Vec::new();
    let mut h0 = block;
    for p in 0..passes {
        // Spread the stages evenly over the passes.
        let rows_log = stages * (p + 1) / passes - stages * p / passes;
        out.push((h0, rows_log));
        h0 <<= rows_log;
    }
    out
}

/// The stages of half h0, 2·h0, ..., h0·2^(rows_log−1) in one pass over memory, on the vector
/// arithmetic. Such a stage pairs scalars h0·2^k apart, so the scalars at o + r·h0 for
/// r < 2^rows_log (o below h0, plus a multiple of h0·2^rows_log) only meet each other: eight
/// such columns side by side are copied into a tile that stays in cache, every stage runs on
/// the tile's rows, and the tile is copied back. (Copied, not worked on in place: the rows are
/// a power of two apart in memory and would all fall into the same cache sets.)
fn tiled_pass<const INVERSE: bool, B: Butterfly>(
    v: &mut [Scalar],
    h0: usize,
    rows_log: u32,
    tw: &Twiddles,
    ifma: Ifma,
    _bf: B,
) {
    let rows = 1usize << rows_log;
    let span = h0 * rows;
    let tiles_per_span = h0 / LANES;
    let tiles = v.len() / span * tiles_per_span;
    let base = SharedScalars(v.as_mut_ptr());
    // omega^(r·m/(2·h_rows)) for r < h_rows, the stage of h_rows rows at [h_rows − 1, 2·h_rows − 1).
    let row_twiddles: Vec<Scalar> = (0..rows_log)
        .flat_map(|k| {
            let h_rows = 1usize << k;
            let stride = tw.stride(2 * h_rows);
            (0..h_rows).map(move |r| tw.get::<INVERSE>(stride, r))
        })
        .collect();
    let dit = B::SMALL_HALF_FIRST;
    (0..tiles).into_par_iter().with_min_len(16).for_each_init(
        || vec![LaneScalars::default(); rows],
        |tile, t| {
            let origin = t / tiles_per_span * span + t % tiles_per_span * LANES;
            let column = origin % h0;
            let mut row = [Scalar::ZERO; LANES];
            for (r, lanes) in tile.iter_mut().enumerate() {
                // SAFETY: tile t alone reads and writes the scalars origin + r·h0 + lane
                // (distinct tiles differ in their span or their columns), all below v.len().
                unsafe { base.copy_out(origin + r * h0, &mut row) };
                ifma.to_lanes(&row, lanes);
            }
            let mut stage = |h_rows: usize| {
                let stride = tw.stride(2 * h_rows * h0);
                // Butterfly r's twiddles, omega^((r·h0 + column + k)·stride) for lane k, are
                // omega^(r·h0·stride) (the row table's) times omega^((column + k)·stride):
                // the big table is read eight times a stage, not eight times a row.
                let columns: [Scalar; LANES] =
                    std::array::from_fn(|k| tw.get::<INVERSE>(stride, column + k));
                let mut column_lanes = LaneScalars::default();
                ifma.to_lanes(&columns, &mut column_lanes);
                let mut w = LaneScalars::default();
                for r in 0..h_rows {
                    ifma.mul_scaled_lanes(&mut w, &column_lanes, row_twiddles[h_rows - 1 + r]);
                    for g in (0..rows).step_by(2 * h_rows) {
                        let (lo, hi) = tile.split_at_mut(g + r + h_rows);
                        ifma.butterflies_lanes(dit, &mut lo[g + r], &mut hi[0], &w);
                    }
                }
            };
            for k in 0..rows_log {
                stage(if B::SMALL_HALF_FIRST {
                    1 << k
                } else {
                    rows >> (k + 1)
                });
            }
            for (r, lanes) in tile.iter().enumerate() {
                ifma.from_lanes(lanes, &mut row);
                // SAFETY: as above.
                unsafe { base.copy_in(origin + r * h0, &row) };
            }
        },
    );
}

/// A vector's base pointer, shared by parallel tasks that each touch only their own scalars.
#[derive(Clone, Copy)]
struct SharedScalars(*mut Scalar);
// SAFETY: users touch disjoint elements from each task (see each use).
unsafe impl Send for SharedScalars {}
unsafe impl Sync for SharedScalars {}

impl SharedScalars {
    /// Swaps elements i and j.
    ///
    /// # Safety
    /// Both are in bounds, and no other task touches either meanwhile.
    unsafe fn swap(self, i: usize, j: usize) {
        // SAFETY: as the caller promises.
        unsafe { std::ptr::swap(self.0.add(i), self.0.add(j)) }
    }

    /// Copies `out.len()` scalars starting at `at` into `out`.
    ///
    /// # Safety
    /// The range is in bounds and no other task writes it meanwhile.
    unsafe fn copy_out(self, at: usize, out: &mut [Scalar]) {
        // SAFETY: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(self.0.add(at), out.as_mut_ptr(), out.len()) }
    }

    /// Copies `from` to the scalars starting at `at`.
    ///
    /// # Safety
    /// The range is in bounds and no other task reads or writes it meanwhile.
    unsafe fn copy_in(self, at: usize, from: &[Scalar]) {
        // SAFETY: as the caller promises.
        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), self.0.add(at), from.len()) }
    }
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
    let base = SharedScalars(v.as_mut_ptr());
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
    powers_times(Scalar::ONE, x, count)
}

/// `[k, k·x, k·x^2, ..., k·x^(count-1)]`, computed in parallel chunks.
fn powers_times(k: Scalar, x: Scalar, count: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; count];
    let chunk = (count / (rayon::current_num_threads() * 4)).max(1024);
    out.par_chunks_mut(chunk).enumerate().for_each(|(c, part)| {
        let mut acc = k * x.pow_vartime([(c * chunk) as u64]);
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
    fn vector_arithmetic_gives_the_scalar_bytes() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let Some(_) = Ifma::detect() else {
            eprintln!("no AVX-512 IFMA on this CPU: only the scalar arithmetic runs here");
            return;
        };
        // Every path: scalar small stages only, vector block stages, radix-2 and radix-4 above.
        for log in [2u32, 3, 4, 5, 6, 9, 13, 14, 15, 16, 17] {
            let (vector, evals) = domain_and_random_vector(log, &mut rng);
            assert!(vector.uses_ifma());
            let scalar = vector.clone().with_scalar_arithmetic();
            let k = Scalar::random(&mut rng);
            let run = |d: &Domain| {
                let mut fwd = evals.clone();
                d.fft(&mut fwd);
                let mut inv = evals.clone();
                d.icoset_fft(&mut inv);
                let mut chain = evals.clone();
                d.coset_evaluations(&mut chain);
                let mut back = chain.clone();
                d.coefficients_from_coset(&mut back, k);
                let mut numerator = chain.clone();
                d.mul_sub(&mut numerator, &fwd, &inv);
                [fwd, inv, chain, back, numerator]
            };
            let want = run(&scalar);
            // Above the block, the stages in one tiled pass, and in two to four.
            for tile_rows_log in [TILE_ROWS_LOG, 2, 1] {
                let got = run(&vector.clone().with_tile_rows_log(tile_rows_log));
                for (step, (got, want)) in got.iter().zip(&want).enumerate() {
                    assert_eq!(
                        got, want,
                        "m = 2^{log}, rows 2^{tile_rows_log}, step {step}"
                    );
                }
            }
        }
    }

    #[test]
    fn upper_passes_cover_every_stage_above_the_block_once() {
        for (block, m, rows_log) in [
            (8, 8, 10),
            (8192, 1 << 22, 10),
            (8192, 1 << 27, 10),
            (16, 1 << 9, 2),
        ] {
            let passes = upper_passes(block, m, rows_log);
            let mut h0 = block;
            for &(start, k) in &passes {
                assert_eq!(start, h0);
                assert!((1..=rows_log).contains(&k));
                h0 <<= k;
            }
            assert_eq!(h0, m, "{passes:?}");
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
