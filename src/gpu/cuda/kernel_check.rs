//! The device's kernels alone against the CPU, byte for byte (`cuzk gpu check-kernels`): NTTs,
//! the quotient (coset NTTs included) and the G1/G2 MSMs, on the inputs that break kernels:
//! scalars that are mostly 0 and 1 (as Filecoin witnesses are), points at infinity, lengths
//! that are not a power of two. Needs no parameters, so gpu-check.sh runs it first, while they
//! are generated; a wrong kernel shows here by name before any proof fails.

use blstrs::{G1Affine, G2Affine, Scalar};
use ff::{Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

use super::backend::GpuBackend;
use super::buffers::h2d_blocking;
use super::check::{first_device, verdict};
use super::kernels;
use super::memory::d2h_blocking;
use super::resident::{as_bytes, words_as_bytes_mut};
use crate::groth16::cpu::quotient_coefficients;
use crate::groth16::msm::{self, to_canonical};
use crate::groth16::ntt::Domain;
use crate::groth16::ScalarBuf;

type Res<T> = anyhow::Result<T>;

/// Scalars as a witness has them: a third 0, a third 1, a third spread over the field.
fn bit_heavy_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    (0..n)
        .into_par_iter()
        .map(|i| match i % 3 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            _ => Scalar::from((i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15)).square(),
        })
        .collect()
}

/// `v` as mutable bytes, for reading device results back.
fn as_bytes_mut(v: &mut [Scalar]) -> &mut [u8] {
    // SAFETY: a scalar is 32 plain bytes (four u64 limbs, `repr(transparent)`); whatever the
    // device writes is some limbs, compared below, never used as a field element unchecked.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// Free and total device memory, as a NOTE line.
pub(super) fn print_memory(gpu: &GpuBackend, when: &str) {
    match gpu.memory_info() {
        Ok((free, total)) => println!(
            "NOTE device memory {when}: free={:.2} GiB total={:.2} GiB",
            free as f64 / (1u64 << 30) as f64,
            total as f64 / (1u64 << 30) as f64
        ),
        Err(e) => println!("NOTE device memory {when}: {e}"),
    }
}

/// Runs every kernel check up to 2^`max_lg` (NTT and quotient to 2^max_lg, G1 MSM to
/// 2^min(max_lg, 22), G2 MSM to 2^min(max_lg, 20): the CPU side bounds the time); true when
/// all passed.
pub fn check_kernels(max_lg: u32) -> Res<bool> {
    let gpu = first_device()?;
    let _current = gpu.enter()?;
    print_memory(&gpu, "before");
    let mut all = true;
    let mut record = |name: String, passed: Res<bool>| {
        let passed = passed.unwrap_or_else(|e| {
            println!("CHECK error: {e:#}");
            false
        });
        println!("CHECK kernel {name}: {}", verdict(passed));
        all &= passed;
    };
    // 2^16 of every kernel first, then the bit split and the kept MSM state (never run on a
    // GPU before the first run), then the larger sizes: a time cap cuts the largest checks,
    // not the newest code.
    let sizes = |record: &mut dyn FnMut(String, Res<bool>), lgs: &[u32]| {
        for &lg in lgs {
            for inverse in [false, true] {
                let name = if inverse { "ntt-inverse" } else { "ntt" };
                record(format!("{name} n=2^{lg}"), ntt_matches(&gpu, lg, inverse));
            }
            record(
                format!("quotient n=2^{lg}-5"),
                quotient_matches(&gpu, lg, (1 << lg) - 5),
            );
            if lg <= 22 {
                record(
                    format!("msm-g1 n=2^{lg}-3"),
                    msm_matches::<G1Affine>(&gpu, (1 << lg) - 3, false),
                );
            }
            if lg <= 20 {
                record(
                    format!("msm-g2 n=2^{lg}-3"),
                    msm_matches::<G2Affine>(&gpu, (1 << lg) - 3, false),
                );
            }
        }
    };
    let larger: Vec<u32> = (18..=max_lg).step_by(2).collect();
    let first: Vec<u32> = (16..=max_lg.min(16)).collect();
    sizes(&mut record, &first);
    for n in [(1 << 16) - 3, (1 << 16) + 64] {
        record(format!("split-classify n={n}"), classify_matches(&gpu, n));
    }
    // The bit split (sums of the points of ones, Pippenger over the others in chunks) against
    // the CPU: chunks of 1000 others, so the small sizes run several.
    gpu.set_msm_split(true);
    gpu.set_msm_split_chunk(1000);
    for lg in [12, 16] {
        let before = gpu.split_msm_count();
        let g1 = msm_matches::<G1Affine>(&gpu, (1 << lg) - 3, true);
        let g2 = msm_matches::<G2Affine>(&gpu, (1 << lg) - 3, true);
        let split = gpu.split_msm_count() - before;
        record(format!("msm-split-g1 n=2^{lg}-3"), g1);
        record(format!("msm-split-g2 n=2^{lg}-3"), g2);
        record(format!("msm-split ran split n=2^{lg}-3"), Ok(split == 2));
    }
    gpu.set_msm_split_chunk(usize::MAX);
    let lg = max_lg.min(20);
    record(
        format!("msm-split-g1 one chunk n=2^{lg}-3"),
        msm_matches::<G1Affine>(&gpu, (1 << lg) - 3, true),
    );
    // The MSM state cuda/groth16.cu keeps per device, curve and size class: reused by an MSM
    // of another size in a class used before, released for room (at least the G1 and G2
    // states of the MSMs above), rebuilt by the next MSM.
    record(
        "msm-g1 reusing kept state n=2^16-1000".into(),
        msm_matches::<G1Affine>(&gpu, (1 << 16) - 1000, false),
    );
    let released = kernels::msm_release(gpu.ordinal()).map_err(anyhow::Error::from);
    record(
        "msm state released".into(),
        released.map(|n| {
            println!("NOTE kept MSM states released: {n}");
            n >= 2
        }),
    );
    record(
        "msm-g2 after the release n=2^16-3".into(),
        msm_matches::<G2Affine>(&gpu, (1 << 16) - 3, false),
    );
    sizes(&mut record, &larger);
    print_memory(&gpu, "after");
    Ok(all)
}

fn ntt_matches(gpu: &GpuBackend, lg: u32, inverse: bool) -> Res<bool> {
    let m = 1usize << lg;
    let values = bit_heavy_scalars(m, lg.into());
    let s = gpu.compute_stream();
    let d = gpu.device_alloc(m * 32)?;
    h2d_blocking(d.at(0), as_bytes(&values), s)?;
    kernels::ntt(gpu.ordinal(), s, d.at(0), lg, inverse)?;
    let mut got = vec![Scalar::ZERO; m];
    d2h_blocking(as_bytes_mut(&mut got), d.at(0), s)?;
    let mut want = values;
    let domain = Domain::for_size(m)?;
    if inverse {
        domain.ifft(&mut want);
    } else {
        domain.fft(&mut want);
    }
    Ok(got == want)
}

/// The MSM bit split's classification of bit-heavy scalars (a tail that is not a whole word,
/// and a length that is) against the host's: the ones' and the others' bitmaps.
fn classify_matches(gpu: &GpuBackend, n: usize) -> Res<bool> {
    let scalars = bit_heavy_scalars(n, n as u64 ^ 0x5eed);
    let words = n.div_ceil(64);
    let s = gpu.compute_stream();
    let d_scalars = gpu.device_alloc(n * 32)?;
    let d_maps = gpu.device_alloc(2 * words * 8)?;
    h2d_blocking(d_scalars.at(0), as_bytes(&scalars), s)?;
    kernels::split_classify(
        gpu.ordinal(),
        d_scalars.at(0),
        n,
        d_maps.at(0),
        d_maps.at(words * 8),
    )?;
    let mut got = vec![0u64; 2 * words];
    d2h_blocking(words_as_bytes_mut(&mut got), d_maps.at(0), s)?;
    let mut want = vec![0u64; 2 * words];
    for (i, x) in scalars.iter().enumerate() {
        if *x == Scalar::ONE {
            want[i / 64] |= 1 << (i % 64);
        } else if !bool::from(x.is_zero()) {
            want[words + i / 64] |= 1 << (i % 64);
        }
    }
    Ok(got == want)
}

/// h = (a·b − c)/z through the device's quotient (inverse NTTs, coset NTTs, division) against
/// the CPU prover's, for `n` constraints in a domain of 2^lg.
fn quotient_matches(gpu: &GpuBackend, lg: u32, n: usize) -> Res<bool> {
    let m = 1usize << lg;
    let [a, b, c] = [1u64, 2, 3].map(|k| bit_heavy_scalars(n, k << 32 | u64::from(lg)));
    let s = gpu.compute_stream();
    let d = gpu.device_alloc(3 * m * 32)?;
    for (i, v) in [&a, &b, &c].into_iter().enumerate() {
        h2d_blocking(d.at(i * m * 32), as_bytes(v), s)?;
    }
    let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([m as u64]) - Scalar::ONE;
    let z_inv = Option::<Scalar>::from(z.invert()).expect("z is not zero on the coset");
    kernels::quotient(
        gpu.ordinal(),
        s,
        d.at(0),
        d.at(m * 32),
        d.at(2 * m * 32),
        n,
        lg,
        &z_inv,
    )?;
    let mut got = vec![Scalar::ZERO; m - 1];
    d2h_blocking(as_bytes_mut(&mut got), d.at(0), s)?;
    let buf = |v: &[Scalar]| {
        let mut b = ScalarBuf::default();
        b.extend_from_slice(v);
        b
    };
    let (mut a, mut b, mut c) = (buf(&a), buf(&b), buf(&c));
    let want = quotient_coefficients(&Domain::for_size(m)?, &mut a, &mut b, &mut c);
    Ok(to_canonical(&got) == want)
}

/// An affine group the device's MSMs take, with the CPU's MSM to check them against.
trait MsmGroup: PrimeCurveAffine + Send + Sync + Copy {
    fn device_msm(gpu: &GpuBackend, d_points: u64, d_scalars: u64, n: usize) -> Res<Vec<u8>>;
    /// The backend's MSM: a bit split when it is on.
    fn backend_msm(gpu: &GpuBackend, d_points: u64, d_scalars: u64, n: usize) -> Res<Vec<u8>>;
    fn host_msm(points: &[Self], scalars: &[Scalar]) -> Vec<u8>;
}

/// `count` distinct points k·G (k = 1, 2, ...) of the group of `A`, affine: test points that
/// cost one addition each instead of a scalar multiplication.
pub(super) fn distinct_points<A: PrimeCurveAffine>(count: usize) -> Vec<A>
where
    A::Curve: Curve<AffineRepr = A>,
{
    let generator = A::Curve::generator();
    let proj: Vec<A::Curve> = std::iter::successors(Some(generator), |p| Some(*p + generator))
        .take(count)
        .collect();
    let mut out = vec![A::identity(); count];
    A::Curve::batch_normalize(&proj, &mut out);
    out
}

impl MsmGroup for G1Affine {
    fn device_msm(gpu: &GpuBackend, d_points: u64, d_scalars: u64, n: usize) -> Res<Vec<u8>> {
        let sum = kernels::msm_g1(gpu.ordinal(), d_points, d_scalars, n)?;
        Ok(sum.to_affine().to_compressed().to_vec())
    }
    fn backend_msm(gpu: &GpuBackend, d_points: u64, d_scalars: u64, n: usize) -> Res<Vec<u8>> {
        let sum = gpu.msm_g1_on_device(d_points, d_scalars, n)?;
        Ok(sum.to_affine().to_compressed().to_vec())
    }
    fn host_msm(points: &[Self], scalars: &[Scalar]) -> Vec<u8> {
        let sum = msm::msm_g1(points, &to_canonical(scalars));
        sum.to_affine().to_compressed().to_vec()
    }
}

impl MsmGroup for G2Affine {
    fn device_msm(gpu: &GpuBackend, d_points: u64, d_scalars: u64, n: usize) -> Res<Vec<u8>> {
        let sum = kernels::msm_g2(gpu.ordinal(), d_points, d_scalars, n)?;
        Ok(sum.to_affine().to_compressed().to_vec())
    }
    fn backend_msm(gpu: &GpuBackend, d_points: u64, d_scalars: u64, n: usize) -> Res<Vec<u8>> {
        let sum = gpu.msm_g2_on_device(d_points, d_scalars, n)?;
        Ok(sum.to_affine().to_compressed().to_vec())
    }
    fn host_msm(points: &[Self], scalars: &[Scalar]) -> Vec<u8> {
        let sum = msm::msm_g2(points, &to_canonical(scalars));
        sum.to_affine().to_compressed().to_vec()
    }
}

/// An MSM of `n` points (4096 distinct ones tiled, every 1000th the point at infinity) and
/// bit-heavy scalars on the device (sppark's Pippenger, or the backend's MSM when `backend`,
/// split when that is on) against the CPU's.
fn msm_matches<A: MsmGroup>(gpu: &GpuBackend, n: usize, backend: bool) -> Res<bool>
where
    A::Curve: Curve<AffineRepr = A>,
{
    let tile = distinct_points::<A>(4096);
    let points: Vec<A> = (0..n)
        .map(|i| {
            if i % 1000 == 999 {
                A::identity()
            } else {
                tile[i % tile.len()]
            }
        })
        .collect();
    let scalars = bit_heavy_scalars(n, n as u64);
    let s = gpu.compute_stream();
    let d_points = gpu.device_alloc(std::mem::size_of_val(points.as_slice()))?;
    let d_scalars = gpu.device_alloc(n * 32)?;
    h2d_blocking(d_points.at(0), as_bytes(&points), s)?;
    h2d_blocking(d_scalars.at(0), as_bytes(&scalars), s)?;
    let got = if backend {
        A::backend_msm(gpu, d_points.at(0), d_scalars.at(0), n)?
    } else {
        A::device_msm(gpu, d_points.at(0), d_scalars.at(0), n)?
    };
    Ok(got == A::host_msm(&points, &scalars))
}
