//! Safe wrappers over the entry points of cuda/groth16.cu. Each takes raw device addresses
//! (from `cust` buffers) and turns the C error code + message into a `Groth16Error`.

use std::ffi::{c_char, c_int, c_void};

use super::stream::GpuStream;
use blstrs::{G1Projective, G2Projective, Scalar};
use ff::Field;
use group::Group;

use crate::gpu::Curve;
use crate::groth16::Groth16Error;

extern "C" {
    fn cuzk_cuda_quotient(
        ordinal: c_int,
        stream: *mut c_void,
        d_a: u64,
        d_b: u64,
        d_c: u64,
        n: usize,
        lg: u32,
        z_inv: *const Scalar,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_gather(
        ordinal: c_int,
        stream: *mut c_void,
        d_out: u64,
        d_in: u64,
        d_bits: u64,
        d_prefix: u64,
        n: usize,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_msm_g1(
        ordinal: c_int,
        d_points: u64,
        d_scalars: u64,
        n: usize,
        out: *mut c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_msm_g2(
        ordinal: c_int,
        d_points: u64,
        d_scalars: u64,
        n: usize,
        out: *mut c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_split_classify(
        ordinal: c_int,
        d_scalars: u64,
        n: usize,
        one: *const Scalar,
        d_ones: u64,
        d_others: u64,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_split_gather(
        ordinal: c_int,
        curve: c_int,
        d_out_scalars: u64,
        d_out_points: u64,
        d_scalars: u64,
        d_points: u64,
        d_bits: u64,
        d_prefix: u64,
        n: usize,
        lo: usize,
        hi: usize,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_sum_g1(
        ordinal: c_int,
        d_points: u64,
        d_bits: u64,
        n: usize,
        out: *mut c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_sum_g2(
        ordinal: c_int,
        d_points: u64,
        d_bits: u64,
        n: usize,
        out: *mut c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_msm_release(
        ordinal: c_int,
        dropped: *mut usize,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_ntt(
        ordinal: c_int,
        stream: *mut c_void,
        d_v: u64,
        lg: u32,
        inverse: bool,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_check_device(ordinal: c_int, err: *mut c_char, err_len: usize) -> c_int;
    fn cuzk_cuda_runtime_info(
        runtime_version: *mut c_int,
        pool_size: *mut c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_failing_launch(
        ordinal: c_int,
        stream: *mut c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
    fn cuzk_cuda_illegal_access(
        ordinal: c_int,
        stream: *mut c_void,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
}

/// The raw handle of one of our streams.
fn raw(stream: &GpuStream) -> *mut c_void {
    stream.as_inner().cast()
}

/// Calls `f` with an error buffer and converts a non-zero code into an error.
fn checked(f: impl FnOnce(*mut c_char, usize) -> c_int) -> Result<(), Groth16Error> {
    let mut buf = [0u8; 512];
    let code = f(buf.as_mut_ptr().cast(), buf.len());
    if code == 0 {
        return Ok(());
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Err(Groth16Error::Device(format!(
        "{} (CUDA code {code})",
        String::from_utf8_lossy(&buf[..end])
    )))
}

/// h = (a·b − c)/z on the coset, in place in `d_a` (see cuda/groth16.cu). The three buffers
/// hold `n` evaluations and have room for `2^lg`.
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
    // SAFETY: the caller passes live device buffers of the stated sizes and a live stream.
    checked(|e, l| unsafe {
        cuzk_cuda_quotient(
            ordinal as c_int,
            raw(stream),
            d_a,
            d_b,
            d_c,
            n,
            lg,
            z_inv,
            e,
            l,
        )
    })
}

/// Copies the `n` scalars at `d_in` whose density bit is set to `d_out`, in order.
pub fn gather(
    ordinal: u32,
    stream: &GpuStream,
    d_out: u64,
    d_in: u64,
    d_bits: u64,
    d_prefix: u64,
    n: usize,
) -> Result<(), Groth16Error> {
    // SAFETY: live device buffers (bits: ceil(n/64) words, prefix: as many u32) and stream.
    checked(|e, l| unsafe {
        cuzk_cuda_gather(
            ordinal as c_int,
            raw(stream),
            d_out,
            d_in,
            d_bits,
            d_prefix,
            n,
            e,
            l,
        )
    })
}

/// The C entry point of an MSM or a point sum (G1 or G2): device points, their n scalars or
/// an n-bit map, and a host point to write.
type PointEntry =
    unsafe extern "C" fn(c_int, u64, u64, usize, *mut c_void, *mut c_char, usize) -> c_int;

/// Runs a [`PointEntry`] writing a Jacobian point of type `P` (`G1Projective` or
/// `G2Projective`, transparent over blst_p1 / blst_p2, the layout the kernels write).
fn point_result<P: Group>(
    entry: PointEntry,
    ordinal: u32,
    d_points: u64,
    d_per_point: u64,
    n: usize,
) -> Result<P, Groth16Error> {
    let mut out = P::identity();
    // SAFETY: live device buffers of n points and n scalars (or an n-bit map); `out` has the
    // Jacobian layout.
    checked(|e, l| unsafe {
        entry(
            ordinal as c_int,
            d_points,
            d_per_point,
            n,
            (&mut out as *mut P).cast(),
            e,
            l,
        )
    })?;
    Ok(out)
}

/// Σ scalars[i]·points[i] over G1 for device-resident affine points and Montgomery scalars.
pub fn msm_g1(
    ordinal: u32,
    d_points: u64,
    d_scalars: u64,
    n: usize,
) -> Result<G1Projective, Groth16Error> {
    point_result(cuzk_cuda_msm_g1, ordinal, d_points, d_scalars, n)
}

/// Σ scalars[i]·points[i] over G2, as [`msm_g1`].
pub fn msm_g2(
    ordinal: u32,
    d_points: u64,
    d_scalars: u64,
    n: usize,
) -> Result<G2Projective, Groth16Error> {
    point_result(cuzk_cuda_msm_g2, ordinal, d_points, d_scalars, n)
}

/// The MSM bit split's classification of `n` device scalars (Montgomery form): bit i of the
/// `ceil(n/64)`-word map at `d_ones` is set when scalar i is 1, of `d_others` when it is
/// neither 0 nor 1. Blocks until done (on the MSMs' stream).
pub fn split_classify(
    ordinal: u32,
    d_scalars: u64,
    n: usize,
    d_ones: u64,
    d_others: u64,
) -> Result<(), Groth16Error> {
    let one = Scalar::ONE;
    // SAFETY: live device buffers of n scalars and two maps of ceil(n/64) words; `one` lives.
    checked(|e, l| unsafe {
        cuzk_cuda_split_classify(ordinal as c_int, d_scalars, n, &one, d_ones, d_others, e, l)
    })
}

/// Copies ranks `lo..hi` of the scalars whose bit is set in the `n`-bit map `d_bits` (ranked
/// in index order; `d_prefix[w]` counts the set bits before word w), and their points of
/// `curve`, to `d_out_scalars` and `d_out_points`. Blocks until done.
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
    // SAFETY: live device buffers: n scalars and points, the map and its prefix, hi - lo
    // output scalars and points.
    checked(|e, l| unsafe {
        cuzk_cuda_split_gather(
            ordinal as c_int,
            curve as c_int,
            d_out_scalars,
            d_out_points,
            d_scalars,
            d_points,
            d_bits,
            d_prefix,
            n,
            lo,
            hi,
            e,
            l,
        )
    })
}

/// Σ of the G1 points whose bit is set in the `n`-bit map `d_bits` (the split's ones).
pub fn sum_g1(
    ordinal: u32,
    d_points: u64,
    d_bits: u64,
    n: usize,
) -> Result<G1Projective, Groth16Error> {
    point_result(cuzk_cuda_sum_g1, ordinal, d_points, d_bits, n)
}

/// Σ of the G2 points whose bit is set, as [`sum_g1`].
pub fn sum_g2(
    ordinal: u32,
    d_points: u64,
    d_bits: u64,
    n: usize,
) -> Result<G2Projective, Groth16Error> {
    point_result(cuzk_cuda_sum_g2, ordinal, d_points, d_bits, n)
}

/// Frees the MSM state the kernels keep for device `ordinal` between MSMs (one per curve and
/// size class, up to about 1.2 GB at 2^27), for room; returns how many were dropped. MSMs
/// after it rebuild what they need.
pub fn msm_release(ordinal: u32) -> Result<usize, Groth16Error> {
    let mut dropped = 0usize;
    // SAFETY: `dropped` is a live usize.
    checked(|e, l| unsafe { cuzk_cuda_msm_release(ordinal as c_int, &mut dropped, e, l) })?;
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
    // SAFETY: a live device buffer of 2^lg scalars and a live stream.
    checked(|e, l| unsafe { cuzk_cuda_ntt(ordinal as c_int, raw(stream), d_v, lg, inverse, e, l) })
}

/// The CUDA runtime version the kernels were linked with ("11.8") and the number of devices
/// sppark's GPU pool can use.
pub fn runtime_info() -> Result<(String, usize), Groth16Error> {
    let (mut version, mut pool) = (0 as c_int, 0 as c_int);
    // SAFETY: two valid out-pointers.
    checked(|e, l| unsafe { cuzk_cuda_runtime_info(&mut version, &mut pool, e, l) })?;
    Ok((
        format!("{}.{}", version / 1000, version % 1000 / 10),
        pool.max(0) as usize,
    ))
}

/// Whether sppark can use device `ordinal` (an error naming why not).
pub fn check_device(ordinal: u32) -> Result<(), Groth16Error> {
    // SAFETY: no pointers but the error buffer.
    checked(|e, l| unsafe { cuzk_cuda_check_device(ordinal as c_int, e, l) })
}

/// A kernel launch that fails on purpose (a block larger than any device allows), so the GPU
/// checks can show a failed kernel surfaces as an error and the device keeps working.
pub fn failing_launch(ordinal: u32, stream: &GpuStream) -> Result<(), Groth16Error> {
    // SAFETY: a live stream; the kernel never runs.
    checked(|e, l| unsafe { cuzk_cuda_failing_launch(ordinal as c_int, raw(stream), e, l) })
}

/// A kernel writing to an illegal address, waited for: a sticky error that breaks device
/// `ordinal`'s context for the rest of the process (the GPU checks' last check).
pub fn illegal_access(ordinal: u32, stream: &GpuStream) -> Result<(), Groth16Error> {
    // SAFETY: a live stream; the kernel's fault is contained by the driver.
    checked(|e, l| unsafe { cuzk_cuda_illegal_access(ordinal as c_int, raw(stream), e, l) })
}
