//! Emulated kernels, with the contracts of cuda/groth16.cu's entry points: the quotient, the
//! density gather and the NTT are queued on a stream; the MSMs block and run at once. The
//! arithmetic is the CPU prover's (NTT, blst's Pippenger), so results equal the CPU backend's
//! exactly when the backend hands the kernels the right buffers.

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use rayon::prelude::*;

use super::registry::{self, Owner};
use super::stream::GpuStream;
use crate::gpu::Curve;
use crate::groth16::msm::{self, to_canonical};
use crate::groth16::ntt::Domain;
use crate::groth16::Groth16Error;

const SCALAR: usize = std::mem::size_of::<Scalar>();

/// The largest NTT domain (as sppark's twiddle tables).
const MAX_LG: u32 = 28;

fn error(what: &str, message: impl std::fmt::Display) -> Groth16Error {
    Groth16Error::Device(format!("{what}: {message}"))
}

/// Checks that `stream` belongs to device `ordinal` and that the device works.
fn on_stream(what: &str, ordinal: u32, stream: &GpuStream) -> Result<(), Groth16Error> {
    if stream.device() != ordinal {
        return Err(error(
            what,
            format!(
                "stream of device {} used for device {ordinal} (invalid resource handle)",
                stream.device()
            ),
        ));
    }
    registry::check_alive(ordinal)
}

fn check_lg(what: &str, lg: u32) -> Result<(), Groth16Error> {
    if lg == 0 || lg > MAX_LG {
        return Err(error(
            what,
            format!("NTT domain 2^{lg} is outside 2^1..2^{MAX_LG}"),
        ));
    }
    Ok(())
}

/// # Safety
/// `addr` must be a live allocation of at least `len` values of `T`, used by no one else
/// while the slice lives.
unsafe fn slice_mut<'a, T>(addr: u64, len: usize) -> &'a mut [T] {
    std::slice::from_raw_parts_mut(addr as *mut T, len)
}

/// h = (a·b − c)/z on the coset, in place in `d_a` (cuda/groth16.cu's `cuzk_cuda_quotient`):
/// the tails past `n` are zeroed, then iNTT, coset NTT, pointwise, inverse coset NTT.
#[allow(clippy::too_many_arguments)]
pub fn quotient(
    ordinal: u32,
    stream: &GpuStream,
    d_a: u64,
    d_b: u64,
    d_c: u64,
    n: usize,
    lg: u32,
    z_inv: &Scalar,
) -> Result<(), Groth16Error> {
    const WHAT: &str = "quotient";
    check_lg(WHAT, lg)?;
    on_stream(WHAT, ordinal, stream)?;
    let m = 1usize << lg;
    if n > m {
        return Err(error(
            WHAT,
            format!("{n} evaluations exceed the domain 2^{lg}"),
        ));
    }
    let bytes = (m * SCALAR) as u64;
    for d in [d_a, d_b, d_c] {
        registry::check_range(WHAT, d, m * SCALAR, Owner::Device(ordinal))?;
    }
    let disjoint = |x: u64, y: u64| x + bytes <= y || y + bytes <= x;
    if !(disjoint(d_a, d_b) && disjoint(d_a, d_c) && disjoint(d_b, d_c)) {
        return Err(error(WHAT, "a, b and c overlap"));
    }
    let z_inv = *z_inv;
    stream.enqueue(Box::new(move || {
        let domain = Domain::for_size(m).map_err(|e| e.to_string())?;
        // SAFETY: three disjoint live allocations of m scalars (checked above; frees wait
        // for queued work).
        let (a, b, c) = unsafe {
            (
                slice_mut::<Scalar>(d_a, m),
                slice_mut::<Scalar>(d_b, m),
                slice_mut::<Scalar>(d_c, m),
            )
        };
        for v in [&mut *a, &mut *b, &mut *c] {
            v[n..].fill(Scalar::ZERO);
            domain.coset_evaluations(v);
        }
        a.par_iter_mut()
            .zip(b.par_iter())
            .zip(c.par_iter())
            .for_each(|((a, b), c)| *a = *a * b - c);
        domain.coefficients_from_coset(a, z_inv);
        Ok(())
    }))
}

/// Copies the scalars at `d_in` whose density bit is set to `d_out`, in order; `d_prefix[w]`
/// counts the set bits before word w. An output past `d_out`'s allocation, or prefix counts
/// that disagree with the bits, poison the device (an illegal address on a GPU).
pub fn gather(
    ordinal: u32,
    stream: &GpuStream,
    d_out: u64,
    d_in: u64,
    d_bits: u64,
    d_prefix: u64,
    n: usize,
) -> Result<(), Groth16Error> {
    const WHAT: &str = "density gather";
    on_stream(WHAT, ordinal, stream)?;
    if n == 0 {
        return Ok(());
    }
    let words = n.div_ceil(64);
    let owner = Owner::Device(ordinal);
    registry::check_range(WHAT, d_in, n * SCALAR, owner)?;
    registry::check_range(WHAT, d_bits, words * 8, owner)?;
    registry::check_range(WHAT, d_prefix, words * 4, owner)?;
    stream.enqueue(Box::new(move || {
        // SAFETY: live allocations of the checked sizes, read only.
        let (input, bits, prefix) = unsafe {
            (
                &*slice_mut::<Scalar>(d_in, n),
                &*slice_mut::<u64>(d_bits, words),
                &*slice_mut::<u32>(d_prefix, words),
            )
        };
        let tail = n % 64;
        let last = if tail == 0 {
            bits[words - 1]
        } else {
            bits[words - 1] & ((1u64 << tail) - 1)
        };
        let total = prefix[words - 1] as usize + last.count_ones() as usize;
        registry::check_range(WHAT, d_out, total * SCALAR, owner).map_err(|e| e.to_string())?;
        // SAFETY: checked just above; the output does not overlap the inputs it is gathered
        // from (distinct allocations).
        let out = unsafe { slice_mut::<Scalar>(d_out, total) };
        for (i, x) in input.iter().enumerate() {
            let (w, bit) = (i / 64, i % 64);
            if (bits[w] >> bit) & 1 == 1 {
                let below = (bits[w] & ((1u64 << bit) - 1)).count_ones();
                let at = prefix[w] as usize + below as usize;
                if at >= total {
                    return Err(format!(
                        "{WHAT}: prefix counts disagree with the bits (index {at} of {total})"
                    ));
                }
                out[at] = *x;
            }
        }
        Ok(())
    }))
}

/// Reads `n` points of type `P` and `n` Montgomery scalars from the device for an MSM.
fn msm_inputs<'a, P>(
    what: &str,
    ordinal: u32,
    d_points: u64,
    d_scalars: u64,
    n: usize,
) -> Result<(&'a [P], Vec<msm::ScalarBytes>), Groth16Error> {
    registry::check_alive(ordinal)?;
    let owner = Owner::Device(ordinal);
    registry::check_range(what, d_points, n * std::mem::size_of::<P>(), owner)?;
    registry::check_range(what, d_scalars, n * SCALAR, owner)?;
    if n == 0 {
        return Ok((&[], Vec::new()));
    }
    // SAFETY: live allocations of the checked sizes, read only while the MSM runs (the caller
    // holds the buffers).
    let (points, scalars) = unsafe {
        (
            &*slice_mut::<P>(d_points, n),
            &*slice_mut::<Scalar>(d_scalars, n),
        )
    };
    Ok((points, to_canonical(scalars)))
}

/// The MSM states the CUDA layer would keep (cuda/groth16.cu's `msm_cache`): (device, curve,
/// size class). Only counted, so that what keeps and releases them is tested here.
static KEPT_MSM_STATES: std::sync::Mutex<std::collections::BTreeSet<(u32, u8, u32)>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Records the state an MSM of `n` points on `curve` leaves kept on device `ordinal`: one per
/// size class floor(log2(1.5 n)) clamped to 18..26, as the CUDA layer's.
fn keep_msm_state(ordinal: u32, curve: u8, n: usize) {
    if n == 0 {
        return;
    }
    let class = (n + n / 2).ilog2().clamp(18, 26);
    KEPT_MSM_STATES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((ordinal, curve, class));
}

/// How many MSM states device `ordinal` keeps (see [`msm_release`]); for tests.
pub fn kept_msm_states(ordinal: u32) -> usize {
    KEPT_MSM_STATES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter(|(o, _, _)| *o == ordinal)
        .count()
}

/// Σ scalars[i]·points[i] over G1; runs at once, unordered with the streams (as sppark's MSM).
pub fn msm_g1(
    ordinal: u32,
    d_points: u64,
    d_scalars: u64,
    n: usize,
) -> Result<G1Projective, Groth16Error> {
    let (points, scalars) = msm_inputs::<G1Affine>("G1 MSM", ordinal, d_points, d_scalars, n)?;
    keep_msm_state(ordinal, 1, n);
    Ok(msm::msm_g1(points, &scalars))
}

/// Σ scalars[i]·points[i] over G2, as [`msm_g1`].
pub fn msm_g2(
    ordinal: u32,
    d_points: u64,
    d_scalars: u64,
    n: usize,
) -> Result<G2Projective, Groth16Error> {
    let (points, scalars) = msm_inputs::<G2Affine>("G2 MSM", ordinal, d_points, d_scalars, n)?;
    keep_msm_state(ordinal, 2, n);
    Ok(msm::msm_g2(points, &scalars))
}

/// As the CUDA layer's: drops the MSM states kept for device `ordinal` and returns how many.
/// On a broken device the states are let go too (the CUDA layer leaks them there) and the call
/// fails, as it does there.
pub fn msm_release(ordinal: u32) -> Result<usize, Groth16Error> {
    let mut kept = KEPT_MSM_STATES.lock().unwrap_or_else(|p| p.into_inner());
    let before = kept.len();
    kept.retain(|(o, _, _)| *o != ordinal);
    let dropped = before - kept.len();
    drop(kept);
    registry::check_alive(ordinal)?;
    Ok(dropped)
}

/// A forward (or inverse) NTT of `2^lg` device scalars in natural order.
pub fn ntt(
    ordinal: u32,
    stream: &GpuStream,
    d_v: u64,
    lg: u32,
    inverse: bool,
) -> Result<(), Groth16Error> {
    const WHAT: &str = "NTT";
    check_lg(WHAT, lg)?;
    on_stream(WHAT, ordinal, stream)?;
    let m = 1usize << lg;
    registry::check_range(WHAT, d_v, m * SCALAR, Owner::Device(ordinal))?;
    stream.enqueue(Box::new(move || {
        let domain = Domain::for_size(m).map_err(|e| e.to_string())?;
        // SAFETY: a live allocation of m scalars (checked above).
        let v = unsafe { slice_mut::<Scalar>(d_v, m) };
        if inverse {
            domain.ifft(v);
        } else {
            domain.fft(v);
        }
        Ok(())
    }))
}

/// As the CUDA layer's: the runtime version ("emulated": there is no CUDA runtime) and the
/// devices the kernels can use (every emulated one).
/// The MSM bit split's classification, as the kernel: bit i of `d_ones` set when scalar i is
/// 1, of `d_others` when it is neither 0 nor 1; every word of both maps written. Blocks.
pub fn split_classify(
    ordinal: u32,
    d_scalars: u64,
    n: usize,
    d_ones: u64,
    d_others: u64,
) -> Result<(), Groth16Error> {
    const WHAT: &str = "MSM split classify";
    registry::check_alive(ordinal)?;
    let words = n.div_ceil(64);
    if words == 0 {
        return Ok(());
    }
    let owner = Owner::Device(ordinal);
    registry::check_range(WHAT, d_scalars, n * SCALAR, owner)?;
    registry::check_range(WHAT, d_ones, words * 8, owner)?;
    registry::check_range(WHAT, d_others, words * 8, owner)?;
    // SAFETY: live allocations of the checked sizes; the maps are written only here.
    let (scalars, ones, others) = unsafe {
        (
            &*slice_mut::<Scalar>(d_scalars, n),
            slice_mut::<u64>(d_ones, words),
            slice_mut::<u64>(d_others, words),
        )
    };
    ones.par_iter_mut()
        .zip(others.par_iter_mut())
        .enumerate()
        .for_each(|(w, (one_bits, other_bits))| {
            (*one_bits, *other_bits) = (0, 0);
            for (bit, x) in scalars[w * 64..n.min(w * 64 + 64)].iter().enumerate() {
                if *x == Scalar::ONE {
                    *one_bits |= 1 << bit;
                } else if !bool::from(x.is_zero()) {
                    *other_bits |= 1 << bit;
                }
            }
        });
    Ok(())
}

/// The ranks of the set bits of an `n`-bit map, checked against its prefix counts: where each
/// set bit's scalar and point go in the compacted order.
fn ranked(
    what: &str,
    bits: &[u64],
    prefix: &[u32],
    n: usize,
) -> Result<Vec<(usize, usize)>, Groth16Error> {
    let mut out = Vec::new();
    for (w, &word) in bits.iter().enumerate() {
        let word = if (w + 1) * 64 > n {
            word & ((1u64 << (n % 64)) - 1)
        } else {
            word
        };
        if prefix[w] as usize != out.len() {
            return Err(error(
                what,
                format!(
                    "prefix count of word {w} is {}, the bits say {}",
                    prefix[w],
                    out.len()
                ),
            ));
        }
        let mut rest = word;
        while rest != 0 {
            let bit = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            out.push((w * 64 + bit, out.len()));
        }
    }
    Ok(out)
}

/// Copies ranks `lo..hi` of the set bits' scalars and points to the outputs, as the kernel.
/// Blocks.
#[allow(clippy::too_many_arguments)]
pub fn split_gather(
    ordinal: u32,
    curve: Curve,
    d_out_scalars: u64,
    d_out_points: u64,
    d_scalars: u64,
    d_points: u64,
    d_bits: u64,
    d_prefix: u64,
    n: usize,
    lo: usize,
    hi: usize,
) -> Result<(), Groth16Error> {
    const WHAT: &str = "MSM split gather";
    registry::check_alive(ordinal)?;
    if n == 0 || lo >= hi {
        return Ok(());
    }
    let (words, size) = (n.div_ceil(64), curve.point_bytes());
    let owner = Owner::Device(ordinal);
    registry::check_range(WHAT, d_scalars, n * SCALAR, owner)?;
    registry::check_range(WHAT, d_points, n * size, owner)?;
    registry::check_range(WHAT, d_bits, words * 8, owner)?;
    registry::check_range(WHAT, d_prefix, words * 4, owner)?;
    registry::check_range(WHAT, d_out_scalars, (hi - lo) * SCALAR, owner)?;
    registry::check_range(WHAT, d_out_points, (hi - lo) * size, owner)?;
    // SAFETY: live allocations of the checked sizes; the outputs are other allocations.
    let (scalars, points, bits, prefix, out_scalars, out_points) = unsafe {
        (
            &*slice_mut::<Scalar>(d_scalars, n),
            &*slice_mut::<u8>(d_points, n * size),
            &*slice_mut::<u64>(d_bits, words),
            &*slice_mut::<u32>(d_prefix, words),
            slice_mut::<Scalar>(d_out_scalars, hi - lo),
            slice_mut::<u8>(d_out_points, (hi - lo) * size),
        )
    };
    for (i, rank) in ranked(WHAT, bits, prefix, n)? {
        if (lo..hi).contains(&rank) {
            out_scalars[rank - lo] = scalars[i];
            out_points[(rank - lo) * size..][..size].copy_from_slice(&points[i * size..][..size]);
        }
    }
    Ok(())
}

fn sum_selected<P: Copy, Q: group::Group + for<'a> std::ops::AddAssign<&'a P>>(
    what: &str,
    ordinal: u32,
    d_points: u64,
    d_bits: u64,
    n: usize,
) -> Result<Q, Groth16Error> {
    registry::check_alive(ordinal)?;
    let words = n.div_ceil(64);
    let owner = Owner::Device(ordinal);
    registry::check_range(what, d_points, n * std::mem::size_of::<P>(), owner)?;
    registry::check_range(what, d_bits, words * 8, owner)?;
    // SAFETY: live allocations of the checked sizes, read only.
    let (points, bits) = unsafe {
        (
            &*slice_mut::<P>(d_points, n),
            &*slice_mut::<u64>(d_bits, words),
        )
    };
    let mut sum = Q::identity();
    for (i, p) in points.iter().enumerate() {
        if (bits[i / 64] >> (i % 64)) & 1 == 1 {
            sum += p;
        }
    }
    Ok(sum)
}

/// Σ of the G1 points whose bit is set (the split's ones), as the kernel. Blocks.
pub fn sum_g1(
    ordinal: u32,
    d_points: u64,
    d_bits: u64,
    n: usize,
) -> Result<G1Projective, Groth16Error> {
    sum_selected::<G1Affine, G1Projective>("G1 sum", ordinal, d_points, d_bits, n)
}

/// Σ of the G2 points whose bit is set, as [`sum_g1`].
pub fn sum_g2(
    ordinal: u32,
    d_points: u64,
    d_bits: u64,
    n: usize,
) -> Result<G2Projective, Groth16Error> {
    sum_selected::<G2Affine, G2Projective>("G2 sum", ordinal, d_points, d_bits, n)
}

pub fn runtime_info() -> Result<(String, usize), Groth16Error> {
    super::device::init()?;
    Ok(("emulated".to_string(), super::DEVICES as usize))
}

/// Whether the kernels can use device `ordinal`.
pub fn check_device(ordinal: u32) -> Result<(), Groth16Error> {
    if ordinal >= super::DEVICES {
        return Err(error(
            "device check",
            format!("device {ordinal} is not in sppark's GPU pool"),
        ));
    }
    registry::check_alive(ordinal)
}

/// A kernel launch that fails, as the real one (a block larger than any device allows); the
/// device keeps working.
pub fn failing_launch(ordinal: u32, stream: &GpuStream) -> Result<(), Groth16Error> {
    const WHAT: &str = "injected kernel failure";
    on_stream(WHAT, ordinal, stream)?;
    Err(error(WHAT, "invalid configuration argument (CUDA code 9)"))
}

/// A kernel writing to an illegal address: poisons the device, as the sticky error does.
pub fn illegal_access(ordinal: u32, stream: &GpuStream) -> Result<(), Groth16Error> {
    const WHAT: &str = "injected sticky error";
    on_stream(WHAT, ordinal, stream)?;
    registry::poison(ordinal, "an illegal memory access was encountered".into());
    Err(error(
        WHAT,
        "an illegal memory access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS)",
    ))
}
