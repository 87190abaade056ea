//! The CPU backend: radix-2 NTTs for the quotient h, blst Pippenger for h's dense scalars and
//! bit-aware MSMs (zeros skipped, ones added) for the witness scalars of l, a and b.

use std::sync::Arc;

use blstrs::{G1Projective, Scalar};
use group::{prime::PrimeCurveAffine, Curve};
use log::debug;

use super::assignment::{Assignment, BufferSet};
use super::backend::{ProverBackend, Randomness, Started};
use super::buffer::ScalarBuf;
use super::density::Density;
use super::error::{Groth16Error, Result};
use super::msm::{gather_canonical, msm_g1, msm_g1_bits, msm_g2_bits, to_canonical, ScalarBytes};
use super::ntt::Domain;
use super::proof::Proof;
use super::srs::Srs;

/// Proves on the host CPU; the fallback when no GPU is present, and the reference for GPU tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

/// State between the two phases on the CPU: h's MSM is done, the rest waits for `prove_finish`.
pub struct CpuPending {
    srs: Arc<Srs>,
    h: G1Projective,
    inputs: Vec<Scalar>,
    /// aux in canonical form, taken in `prove_start` so the pool's aux buffer goes back then.
    aux: Vec<ScalarBytes>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    randomness: Randomness,
}

/// Checks that the SRS has every point the assignment needs.
pub fn check_srs_fits(asg: &Assignment, srs: &Srs, domain: &Domain) -> Result<()> {
    let need = |query, needed: usize, available: usize| {
        if needed > available {
            Err(Groth16Error::SrsTooSmall {
                query,
                needed,
                available,
            })
        } else {
            Ok(())
        }
    };
    if srs.vk.ic.len() != asg.inputs.len() {
        return Err(Groth16Error::ShapeMismatch(format!(
            "circuit has {} public inputs, verifying key expects {}",
            asg.inputs.len(),
            srs.vk.ic.len()
        )));
    }
    let ni = asg.inputs.len();
    let b_count = asg.b_input_density.count_ones() + asg.b_aux_density.count_ones();
    need("h", domain.size() - 1, srs.h.len())?;
    need("l", asg.aux.len(), srs.l.len())?;
    need("a", ni + asg.a_aux_density.count_ones(), srs.a.len())?;
    need("b_g1", b_count, srs.b_g1.len())?;
    need("b_g2", b_count, srs.b_g2.len())?;
    if bool::from(srs.vk.delta_g1.is_identity() | srs.vk.delta_g2.is_identity()) {
        return Err(Groth16Error::InvalidParams(
            "delta is the point at infinity".into(),
        ));
    }
    Ok(())
}

/// Computes the coefficients of h = (a·b − c)/z from the constraint evaluations, in place in
/// `a` (resized to the domain); returns the m−1 coefficients the H query uses.
pub fn quotient_coefficients(
    domain: &Domain,
    a: &mut ScalarBuf,
    b: &mut ScalarBuf,
    c: &mut ScalarBuf,
) -> Vec<ScalarBytes> {
    let m = domain.size();
    for v in [&mut *a, &mut *b, &mut *c] {
        v.resize(m, Scalar::from(0u64));
        domain.coset_evaluations(v);
    }
    domain.mul_sub(a, b, c);
    domain.coefficients_from_coset(a, domain.z_on_coset_inv());
    to_canonical(&a[..m - 1])
}

impl ProverBackend for CpuBackend {
    type Pending = CpuPending;

    fn name(&self) -> String {
        "cpu".into()
    }

    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<Started<CpuPending>> {
        assignment.check_shape()?;
        let domain = Domain::for_size(assignment.num_constraints())?;
        check_srs_fits(&assignment, srs, &domain)?;
        let Assignment {
            mut abc,
            inputs,
            aux,
            a_aux_density,
            b_input_density,
            b_aux_density,
        } = assignment;

        let t = std::time::Instant::now();
        let h_scalars = quotient_coefficients(&domain, &mut abc.a, &mut abc.b, &mut abc.c);
        let ntt_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = std::time::Instant::now();
        let h = msm_g1(&srs.h[..h_scalars.len()], &h_scalars);
        drop(h_scalars);
        let canonical_aux = to_canonical(&aux);
        let mut released = BufferSet { abc, aux };
        released.clear();
        debug!(
            "cpu prove_start: m={} ntt_ms={ntt_ms:.1} msm_h_ms={:.1}",
            domain.size(),
            t.elapsed().as_secs_f64() * 1e3
        );
        Ok(Started {
            pending: CpuPending {
                srs: Arc::clone(srs),
                h,
                inputs,
                aux: canonical_aux,
                a_aux_density,
                b_input_density,
                b_aux_density,
                randomness,
            },
            released,
        })
    }

    fn prove_finish(&self, p: CpuPending) -> Result<Proof> {
        let srs = &*p.srs;
        let t = std::time::Instant::now();
        let aux = p.aux;
        let l = msm_g1_bits(&srs.l[..aux.len()], &aux);

        let mut a_scalars = to_canonical(&p.inputs);
        gather_bytes(&mut a_scalars, &aux, &p.a_aux_density);
        let a = msm_g1_bits(&srs.a[..a_scalars.len()], &a_scalars);

        let mut b_scalars =
            Vec::with_capacity(p.b_input_density.count_ones() + p.b_aux_density.count_ones());
        gather_canonical(&mut b_scalars, &p.inputs, &p.b_input_density);
        gather_bytes(&mut b_scalars, &aux, &p.b_aux_density);
        let b1 = msm_g1_bits(&srs.b_g1[..b_scalars.len()], &b_scalars);
        let b2 = msm_g2_bits(&srs.b_g2[..b_scalars.len()], &b_scalars);
        debug!(
            "cpu prove_finish: msm_l_a_b_ms={:.1}",
            t.elapsed().as_secs_f64() * 1e3
        );
        Ok(assemble(srs, p.randomness, a, b1, b2, p.h, l))
    }
}

fn gather_bytes(out: &mut Vec<ScalarBytes>, bytes: &[ScalarBytes], density: &Density) {
    out.extend(density.iter_ones().map(|i| bytes[i]));
}

/// Groth16 assembly from the MSM results and (r, s):
/// A = α + rδ + A', B = β + sδ + B', C = sA' + rB'₁ + rsδ + sα + rβ + H + L.
pub fn assemble(
    srs: &Srs,
    Randomness { r, s }: Randomness,
    a_msm: G1Projective,
    b1_msm: G1Projective,
    b2_msm: blstrs::G2Projective,
    h_msm: G1Projective,
    l_msm: G1Projective,
) -> Proof {
    let vk = &srs.vk;
    let a = vk.alpha_g1.to_curve() + vk.delta_g1 * r + a_msm;
    let b = vk.beta_g2.to_curve() + vk.delta_g2 * s + b2_msm;
    let c = a_msm * s
        + b1_msm * r
        + vk.delta_g1 * (r * s)
        + vk.alpha_g1 * s
        + vk.beta_g1 * r
        + h_msm
        + l_msm;
    Proof {
        a: a.to_affine(),
        b: b.to_affine(),
        c: c.to_affine(),
    }
}
