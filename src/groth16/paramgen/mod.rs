//! Fast random Groth16 parameters, for tests and devnets only.
//!
//! The toxic waste (tau, alpha, beta, gamma, delta) comes from the caller's RNG and is
//! forgotten, but anyone who saw the RNG seed could forge proofs: never use these parameters
//! where proofs must mean something. Output is bellperson's `Parameters`, written in its
//! `.params` / `.vk` format under filecoin-proofs' cache names by [`cache`].
//!
//! Speed comes from evaluating the QAP at tau with Lagrange coefficients (one batched
//! inversion instead of an inverse FFT), fixed-base window tables for the ~5n scalar
//! multiplications, and batched affine conversion.

pub mod cache;
pub mod fixed_base;

use std::sync::Arc;

use bellperson::groth16::{Parameters, VerifyingKey};
use bellperson::Circuit;
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};
use ff::Field;
use group::{Curve, Group};
use log::info;
use rand_core::RngCore;
use rayon::prelude::*;

use super::error::{Groth16Error, Result};
use super::msm::{to_canonical, ScalarBytes};
use super::ntt::{powers, Domain};
use super::pce::{self, PartedCircuit, Pce, AUX_BASE};
use fixed_base::{best_window, FixedBaseTable};

/// Records a circuit's shape the way bellperson's generator sees it (ONE input, the circuit,
/// one constraint per input), with the recorder the PCE uses.
pub fn record_shape<C: Circuit<Scalar>>(circuit: C) -> Result<Pce> {
    Ok(pce::record(circuit)?)
}

/// Lagrange basis polynomials of the domain evaluated at `tau`:
/// `L_j(tau) = omega^j (tau^m - 1) / (m (tau - omega^j))`.
fn lagrange_at(domain: &Domain, tau: Scalar) -> Result<Vec<Scalar>> {
    let m = domain.size();
    let omegas = powers(domain.omega(), m);
    let z = tau.pow_vartime([m as u64]) - Scalar::ONE;
    let m_inv: Option<Scalar> = Scalar::from(m as u64).invert().into();
    let k = z * m_inv.expect("m is non-zero");
    let mut out: Vec<Scalar> = omegas.par_iter().map(|w| tau - w).collect();
    // Batched inversion per chunk (Montgomery's trick).
    let ok = out.par_chunks_mut(4096).all(|chunk| {
        let mut prefix = Vec::with_capacity(chunk.len());
        let mut acc = Scalar::ONE;
        for x in chunk.iter() {
            prefix.push(acc);
            acc *= x;
        }
        let Some(mut inv) = Option::<Scalar>::from(acc.invert()) else {
            return false;
        };
        for (x, p) in chunk.iter_mut().zip(prefix).rev() {
            let next = inv * *x;
            *x = inv * p;
            inv = next;
        }
        true
    });
    if !ok {
        return Err(Groth16Error::InvalidParams(
            "tau fell in the evaluation domain".into(),
        ));
    }
    out.par_iter_mut()
        .zip(omegas.par_iter())
        .for_each(|(x, w)| *x *= *w * k);
    Ok(out)
}

/// u, v, w: the A, B, C polynomials of every variable (inputs then aux) evaluated at tau.
fn evaluate_columns(shape: &Pce, lagrange: &[Scalar]) -> [Vec<Scalar>; 3] {
    let ni = shape.num_inputs;
    let columns = ni + shape.num_aux;
    let mut out: [Vec<Scalar>; 3] = Default::default();
    out.par_iter_mut().enumerate().for_each(|(which, col)| {
        *col = vec![Scalar::ZERO; columns];
        shape.for_each_term(which, |row, column, coeff| {
            let j = if column < AUX_BASE {
                column as usize
            } else {
                ni + (column - AUX_BASE) as usize
            };
            coeff.accumulate(&shape.coeffs, &mut col[j], lagrange[row]);
        });
    });
    out
}

/// Generates random parameters for `circuit`; `progress(done, total)` is called as points are
/// computed (total is known after synthesis).
pub fn generate<C: Circuit<Scalar>>(
    circuit: C,
    rng: &mut impl RngCore,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Parameters<Bls12>> {
    let t = std::time::Instant::now();
    generate_for_shape(record_shape(circuit)?, t, rng, progress)
}

/// [`generate`] for a circuit known as its parts: recorded from one part when they are alike
/// ([`pce::record_parted`]), so the same shape (and the same parameters for the same `rng`)
/// in less time.
pub fn generate_parted<P: PartedCircuit>(
    circuit: P,
    rng: &mut impl RngCore,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Parameters<Bls12>> {
    let t = std::time::Instant::now();
    generate_for_shape(pce::record_parted(circuit)?, t, rng, progress)
}

/// Random parameters for the recorded `shape` (recorded since `t`).
fn generate_for_shape(
    shape: Pce,
    t: std::time::Instant,
    rng: &mut impl RngCore,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Parameters<Bls12>> {
    let domain = Domain::for_size(shape.num_constraints)?;
    info!(
        "paramgen: {} constraints, {} inputs, {} aux, domain 2^{} (synthesis {:.1}s)",
        shape.num_constraints,
        shape.num_inputs,
        shape.num_aux,
        domain.size().trailing_zeros(),
        t.elapsed().as_secs_f64()
    );

    let tau = Scalar::random(&mut *rng);
    let alpha = Scalar::random(&mut *rng);
    let beta = Scalar::random(&mut *rng);
    let gamma = Scalar::random(&mut *rng);
    let delta = Scalar::random(&mut *rng);
    let invert = |x: Scalar, what: &str| -> Result<Scalar> {
        Option::from(x.invert())
            .ok_or_else(|| Groth16Error::InvalidParams(format!("{what} is zero")))
    };
    let gamma_inv = invert(gamma, "gamma")?;
    let delta_inv = invert(delta, "delta")?;

    let stage = std::time::Instant::now();
    let lagrange = lagrange_at(&domain, tau)?;
    let [u, v, w] = evaluate_columns(&shape, &lagrange);
    drop(lagrange);
    let ni = shape.num_inputs;

    // Scalars of every query.
    let m = domain.size();
    let z_over_delta = (tau.pow_vartime([m as u64]) - Scalar::ONE) * delta_inv;
    let mut h = powers(tau, m - 1);
    h.par_iter_mut().for_each(|x| *x *= z_over_delta);
    let abc_over = |range: std::ops::Range<usize>, k: Scalar| -> Vec<Scalar> {
        range
            .into_par_iter()
            .map(|i| (beta * u[i] + alpha * v[i] + w[i]) * k)
            .collect()
    };
    let ic = abc_over(0..ni, gamma_inv);
    let l = abc_over(ni..ni + shape.num_aux, delta_inv);
    if l.iter().any(|x| bool::from(x.is_zero())) {
        return Err(Groth16Error::Synthesis(
            bellperson::SynthesisError::UnconstrainedVariable,
        ));
    }
    let nonzero = |col: &[Scalar]| -> Vec<ScalarBytes> {
        to_canonical(
            &col.iter()
                .copied()
                .filter(|x| !bool::from(x.is_zero()))
                .collect::<Vec<_>>(),
        )
    };
    let a = nonzero(&u);
    let b = nonzero(&v);
    drop((u, v, w));
    let (h, ic, l) = (to_canonical(&h), to_canonical(&ic), to_canonical(&l));

    log::debug!(
        "paramgen: scalars ready in {:.2}s",
        stage.elapsed().as_secs_f64()
    );
    let total = h.len() + ic.len() + l.len() + a.len() + 2 * b.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let tick = |n: usize| {
        let now = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
        progress(now, total);
    };
    let g1_count = total - b.len();
    let g1 = FixedBaseTable::new(G1Projective::generator(), best_window(g1_count));
    log::debug!(
        "paramgen: G1 table in {:.2}s",
        stage.elapsed().as_secs_f64()
    );
    let h = g1.mul_many(&h, &tick);
    let ic = g1.mul_many(&ic, &tick);
    let l = g1.mul_many(&l, &tick);
    let a = g1.mul_many(&a, &tick);
    let b_g1 = g1.mul_many(&b, &tick);
    drop(g1);
    log::debug!(
        "paramgen: G1 points in {:.2}s",
        stage.elapsed().as_secs_f64()
    );
    let g2 = FixedBaseTable::new(G2Projective::generator(), best_window(b.len()));
    log::debug!(
        "paramgen: G2 table in {:.2}s",
        stage.elapsed().as_secs_f64()
    );
    let b_g2 = g2.mul_many(&b, &tick);
    drop(g2);

    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let vk = VerifyingKey::<Bls12> {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic,
    };
    info!(
        "paramgen: {} points in {:.1}s",
        total,
        t.elapsed().as_secs_f64()
    );
    Ok(Parameters {
        vk,
        h: Arc::new(h),
        l: Arc::new(l),
        a: Arc::new(a),
        b_g1: Arc::new(b_g1),
        b_g2: Arc::new(b_g2),
    })
}
