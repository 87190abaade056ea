//! Radix-2 number-theoretic transforms over the BLS12-381 scalar field, parallel with rayon.
//!
//! Only what the prover needs to turn a, b, c into the quotient h: forward and inverse
//! transforms on a power-of-two domain, the coset variants with the field's multiplicative
//! generator (7, as bellperson), and division by the vanishing polynomial on the coset.

use blstrs::Scalar;
use ff::{Field, PrimeField};
use rayon::prelude::*;

use super::error::{Groth16Error, Result};

/// Below this many butterflies per stage the work stays on one thread.
const PARALLEL_MIN: usize = 1 << 12;

/// A multiplicative subgroup of size `m = 2^log_m` used as the evaluation domain.
#[derive(Clone, Debug)]
pub struct Domain {
    m: usize,
    log_m: u32,
    omega: Scalar,
    omega_inv: Scalar,
    m_inv: Scalar,
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
        let inv = |x: Scalar| Option::<Scalar>::from(x.invert()).expect("non-zero");
        Ok(Self {
            m,
            log_m,
            omega,
            omega_inv: inv(omega),
            m_inv: inv(Scalar::from(m as u64)),
        })
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
        self.transform(v, self.omega);
    }

    /// Coefficients of the polynomial with evaluations `v` at omega^i (in place).
    pub fn ifft(&self, v: &mut [Scalar]) {
        self.transform(v, self.omega_inv);
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
        let g_inv = Option::<Scalar>::from(Scalar::MULTIPLICATIVE_GENERATOR.invert())
            .expect("generator is non-zero");
        distribute_powers(v, g_inv);
    }

    /// Divides coset evaluations by z(x) = x^m - 1, which is the constant g^m - 1 on the coset.
    pub fn divide_by_z_on_coset(&self, v: &mut [Scalar]) {
        let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([self.m as u64]) - Scalar::ONE;
        let z_inv = Option::<Scalar>::from(z.invert()).expect("g^m != 1 for g outside the domain");
        scale(v, z_inv);
    }

    fn transform(&self, v: &mut [Scalar], root: Scalar) {
        assert_eq!(v.len(), self.m, "NTT input must have the domain size");
        if self.m == 1 {
            return;
        }
        bit_reverse(v, self.log_m);
        let twiddles = powers(root, self.m / 2);
        let mut half = 1;
        while half < self.m {
            let len = 2 * half;
            let stride = self.m / len;
            let butterfly_block = |block: &mut [Scalar]| {
                let (lo, hi) = block.split_at_mut(half);
                for (j, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                    butterfly(x, y, &twiddles[j * stride]);
                }
            };
            if self.m < PARALLEL_MIN {
                v.chunks_mut(len).for_each(butterfly_block);
            } else if self.m / len >= rayon::current_num_threads() * 4 {
                v.par_chunks_mut(len).for_each(butterfly_block);
            } else {
                for block in v.chunks_mut(len) {
                    let (lo, hi) = block.split_at_mut(half);
                    let chunk = (half / (rayon::current_num_threads() * 4)).max(256);
                    lo.par_chunks_mut(chunk)
                        .zip(hi.par_chunks_mut(chunk))
                        .enumerate()
                        .for_each(|(c, (lo, hi))| {
                            for (k, (x, y)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                                butterfly(x, y, &twiddles[(c * chunk + k) * stride]);
                            }
                        });
                }
            }
            half = len;
        }
    }
}

#[inline(always)]
fn butterfly(x: &mut Scalar, y: &mut Scalar, w: &Scalar) {
    let t = *y * w;
    *y = *x - t;
    *x += t;
}

fn bit_reverse(v: &mut [Scalar], log_m: u32) {
    let shift = usize::BITS - log_m;
    for i in 0..v.len() {
        let j = i.reverse_bits() >> shift;
        if i < j {
            v.swap(i, j);
        }
    }
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

    fn naive_eval(coeffs: &[Scalar], x: Scalar) -> Scalar {
        coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
    }

    #[test]
    fn fft_matches_naive_evaluation_and_inverts() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for log in [0u32, 1, 3, 6, 13] {
            let m = 1usize << log;
            let d = Domain::for_size(m).unwrap();
            let coeffs: Vec<Scalar> = (0..m).map(|_| Scalar::random(&mut rng)).collect();
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
}
