//! Device and pinned host memory through the CUDA driver: raw allocations (owned by
//! `buffers`' types) and copies, every one ordered on one of our streams.

use blstrs::Scalar;

use super::device::{device_error, DeviceContext};
use super::stream::GpuStream;
use crate::groth16::Groth16Error;

/// Allocates `bytes` of device memory in `ctx`; out-of-memory is an error naming the size.
pub fn alloc_device(ctx: &DeviceContext, bytes: usize) -> Result<u64, Groth16Error> {
    let _current = ctx.enter()?;
    // SAFETY: allocation only; callers write before reading.
    let ptr = unsafe { cust::memory::cuda_malloc::<u8>(bytes.max(1)) }.map_err(|e| {
        Groth16Error::Device(format!("allocating {bytes} bytes of device memory: {e}"))
    })?;
    Ok(ptr.as_raw())
}

/// Frees an allocation of [`alloc_device`] (with its context made current first).
pub fn free_device(ctx: &DeviceContext, ptr: u64) {
    if let Ok(_current) = ctx.enter() {
        let ptr = cust::memory::DevicePointer::<u8>::from_raw(ptr);
        // SAFETY: allocated by cuda_malloc and freed once (by its owner's Drop).
        if let Err(e) = unsafe { cust::memory::cuda_free(ptr) } {
            log::warn!("freeing device memory failed: {e}");
        }
    }
}

/// Allocates `capacity` scalars of page-locked host memory in `ctx`, so the device copies
/// from it with asynchronous DMA at full PCIe speed instead of through a staging buffer.
pub fn alloc_pinned(ctx: &DeviceContext, capacity: usize) -> Result<*mut Scalar, Groth16Error> {
    let _current = ctx.enter()?;
    // SAFETY: allocation only; the memory is written before it is read (ScalarBuf tracks the
    // initialised length).
    unsafe { cust::memory::cuda_malloc_locked::<Scalar>(capacity.max(1)) }
        .map_err(|e| device_error("pinned host memory", e))
}

/// Frees a block of [`alloc_pinned`] (with its context made current first).
///
/// # Safety
/// `ptr` came from [`alloc_pinned`], is freed once, and nothing reads or writes it afterwards.
pub unsafe fn free_pinned(ctx: &DeviceContext, ptr: *mut Scalar) {
    let _current = match ctx.enter() {
        Ok(guard) => guard,
        Err(e) => {
            log::warn!("freeing pinned memory: {e}");
            return;
        }
    };
    // SAFETY: allocated by cuda_malloc_locked and freed once (the caller's contract).
    if let Err(e) = unsafe { cust::memory::cuda_free_locked(ptr) } {
        log::warn!("freeing pinned memory failed: {e}");
    }
}

/// Page-locks `bytes` of existing host memory at `ptr` for every context (portable), so
/// copies from it are asynchronous DMA at full PCIe speed, as from [`alloc_pinned`] memory.
/// For parameters streamed to the device at each MSM, which would otherwise be staged through
/// the driver's small pageable buffer.
///
/// # Safety
/// The memory stays allocated until [`unregister_host`] is called for `ptr`.
pub unsafe fn register_host(
    ctx: &DeviceContext,
    ptr: *const u8,
    bytes: usize,
) -> Result<(), Groth16Error> {
    let _current = ctx.enter()?;
    // SAFETY: registration reads and writes nothing; the caller keeps the memory allocated
    // until it is unregistered.
    let r = unsafe {
        cust::sys::cuMemHostRegister_v2(
            ptr as *mut std::ffi::c_void,
            bytes,
            cust::sys::CU_MEMHOSTREGISTER_PORTABLE,
        )
    };
    if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
        return Err(device_error(
            &format!("page-locking {bytes} bytes of host memory"),
            format!("{r:?}"),
        ));
    }
    Ok(())
}

/// Undoes [`register_host`] for `ptr` (with `ctx` made current first); a failure is logged.
pub fn unregister_host(ctx: &DeviceContext, ptr: *const u8) {
    let _current = match ctx.enter() {
        Ok(guard) => guard,
        Err(e) => {
            log::warn!("unlocking host memory: {e}");
            return;
        }
    };
    // SAFETY: ptr was registered by register_host and is unregistered once (by its owner).
    let r = unsafe { cust::sys::cuMemHostUnregister(ptr as *mut std::ffi::c_void) };
    if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
        log::warn!("unlocking host memory at {ptr:?} failed: {r:?}");
    }
}

/// Copies `src` to device address `dst` on `stream`, ordered with the stream's other work.
/// From pinned memory the copy is asynchronous DMA (the caller keeps `src` untouched until the
/// stream has passed it); from pageable memory the driver stages `src` before returning, so
/// it may be reused at once, and the device-side copy still completes in stream order. (A
/// synchronous copy on the legacy stream would not be ordered before work on our
/// non-blocking streams: kernels could read a stale tail.)
pub fn h2d(dst: u64, src: &[u8], stream: &GpuStream) -> Result<(), Groth16Error> {
    if src.is_empty() {
        return Ok(());
    }
    // SAFETY: dst is a live allocation of at least src.len() bytes (callers size it so);
    // src is valid for reads of its length, and callers keep pinned sources alive until the
    // stream has passed the copy.
    let r = unsafe {
        cust::sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr().cast(), src.len(), stream.as_inner())
    };
    if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
        return Err(device_error("host-to-device copy", format!("{r:?}")));
    }
    Ok(())
}

/// Copies device address `src` into `dst` after everything queued on `stream` (the checks read
/// kernel results back with it), and waits for the copy.
pub fn d2h_blocking(dst: &mut [u8], src: u64, stream: &GpuStream) -> Result<(), Groth16Error> {
    if dst.is_empty() {
        return Ok(());
    }
    // SAFETY: src is a live allocation of at least dst.len() bytes (callers size it so); dst is
    // valid for writes of its length until the stream is synchronised below.
    let r = unsafe {
        cust::sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), src, dst.len(), stream.as_inner())
    };
    if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
        return Err(device_error("device-to-host copy", format!("{r:?}")));
    }
    stream.synchronize()
}

/// Copies `bytes` between device addresses on `stream`.
pub fn d2d(dst: u64, src: u64, bytes: usize, stream: &GpuStream) -> Result<(), Groth16Error> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: both are live allocations of at least `bytes` bytes.
    let r = unsafe { cust::sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream.as_inner()) };
    if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
        return Err(device_error("device-to-device copy", format!("{r:?}")));
    }
    Ok(())
}
