//! `msm` group, over the five MSMs of a real 2 KiB PoRep partition (h, l, a, b_g1, b_g2 over
//! the scalars the CPU prover computes):
//! - `msm/bits-2k-porep`: ours (h's dense scalars on IFMA lanes where the CPU has them, the
//!   other four bit-aware: zeros skipped, ones added, Pippenger for the rest) against blst's
//!   plain Pippenger for all five;
//! - `msm/dense-g1-2k-porep`: h alone, ours against blst's Pippenger.

mod common;
#[path = "../tests/common/mod.rs"]
mod fixture;

use common::{interleaved, report, selected};
use cuzk::groth16::cpu::quotient_coefficients;
use cuzk::groth16::msm::{
    msm_g1, msm_g1_bits, msm_g1_blst, msm_g2, msm_g2_bits, scalar_census, to_canonical, ScalarBytes,
};
use cuzk::groth16::ntt::Domain;
use cuzk::groth16::{BufferSet, Density};

fn gather(scalars: &[ScalarBytes], density: &Density) -> Vec<ScalarBytes> {
    density.iter_ones().map(|i| scalars[i]).collect()
}

fn main() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let (bits_case, dense_case) = (selected("bits-2k-porep"), selected("dense-g1-2k-porep"));
    if !bits_case && !dense_case {
        return;
    }
    let fx = fixture::fixture();
    let request = fx.data.request("porep-v1_1").unwrap();
    let srs = fx.srs.get(request.circuit_kind()).unwrap();
    let (mut asg, _) = request
        .synthesize_partition(0, BufferSet::default(), None)
        .unwrap();
    let domain = Domain::for_size(asg.num_constraints()).unwrap();
    let h = quotient_coefficients(&domain, &mut asg.abc.a, &mut asg.abc.b, &mut asg.abc.c);
    let aux = to_canonical(&asg.aux);
    let inputs = to_canonical(&asg.inputs);
    let mut a = inputs.clone();
    a.extend(gather(&aux, &asg.a_aux_density));
    let mut b = gather(&inputs, &asg.b_input_density);
    b.extend(gather(&aux, &asg.b_aux_density));

    let (zeros, ones, others) = scalar_census(&aux);
    let five = |bits: bool| {
        let h_sum = if bits {
            msm_g1(&srs.h[..h.len()], &h)
        } else {
            msm_g1_blst(&srs.h[..h.len()], &h)
        };
        let (l, a_sum, b1, b2) = if bits {
            (
                msm_g1_bits(&srs.l[..aux.len()], &aux),
                msm_g1_bits(&srs.a[..a.len()], &a),
                msm_g1_bits(&srs.b_g1[..b.len()], &b),
                msm_g2_bits(&srs.b_g2[..b.len()], &b),
            )
        } else {
            (
                msm_g1_blst(&srs.l[..aux.len()], &aux),
                msm_g1_blst(&srs.a[..a.len()], &a),
                msm_g1_blst(&srs.b_g1[..b.len()], &b),
                msm_g2(&srs.b_g2[..b.len()], &b),
            )
        };
        (h_sum, l, a_sum, b1, b2)
    };
    if dense_case {
        let runs = 3;
        let (ours, base) = interleaved(
            runs,
            || {
                msm_g1(&srs.h[..h.len()], &h);
            },
            || {
                msm_g1_blst(&srs.h[..h.len()], &h);
            },
        );
        let same = msm_g1(&srs.h[..h.len()], &h) == msm_g1_blst(&srs.h[..h.len()], &h);
        assert!(same, "h's MSM differs from blst's");
        report(
            "msm/dense-g1-2k-porep",
            ours,
            Some(base),
            runs,
            &format!("h={}", h.len()),
        );
    }
    if !bits_case {
        return;
    }
    assert!(
        five(true) == five(false),
        "our MSMs differ from blst's Pippenger"
    );
    // Each MSM alone, once each way (stderr), to show where the time goes.
    let each = |label: &str, plain: &dyn Fn() -> Vec<u8>, bits: &dyn Fn() -> Vec<u8>| {
        let (p, x) = common::time_ms(plain);
        let (b, y) = common::time_ms(bits);
        assert_eq!(x, y, "{label}");
        eprintln!("  {label}: plain {p:.1} ms, bit-aware {b:.1} ms");
    };
    use group::Curve;
    let g1 = |p: blstrs::G1Projective| p.to_affine().to_compressed().to_vec();
    let g2 = |p: blstrs::G2Projective| p.to_affine().to_compressed().to_vec();
    each(
        "h (dense: blst, IFMA lanes)",
        &|| g1(msm_g1_blst(&srs.h[..h.len()], &h)),
        &|| g1(msm_g1(&srs.h[..h.len()], &h)),
    );
    each("l", &|| g1(msm_g1_blst(&srs.l[..aux.len()], &aux)), &|| {
        g1(msm_g1_bits(&srs.l[..aux.len()], &aux))
    });
    each("a", &|| g1(msm_g1_blst(&srs.a[..a.len()], &a)), &|| {
        g1(msm_g1_bits(&srs.a[..a.len()], &a))
    });
    each(
        "b_g1",
        &|| g1(msm_g1_blst(&srs.b_g1[..b.len()], &b)),
        &|| g1(msm_g1_bits(&srs.b_g1[..b.len()], &b)),
    );
    each("b_g2", &|| g2(msm_g2(&srs.b_g2[..b.len()], &b)), &|| {
        g2(msm_g2_bits(&srs.b_g2[..b.len()], &b))
    });
    let runs = 5;
    let (ours, base) = interleaved(
        runs,
        || {
            five(true);
        },
        || {
            five(false);
        },
    );
    let n = aux.len() as f64;
    report(
        "msm/bits-2k-porep",
        ours,
        Some(base),
        runs,
        &format!(
            "aux={} zeros={:.3} ones={:.3} others={:.3} h={} a={} b={}",
            aux.len(),
            zeros as f64 / n,
            ones as f64 / n,
            others as f64 / n,
            h.len(),
            a.len(),
            b.len()
        ),
    );
}
