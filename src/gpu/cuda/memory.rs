//! Device memory through the CUDA driver: owned allocations and copies, every one ordered on
//! one of our streams.

use std::sync::Arc;

use super::device::{device_error, DeviceContext};
use super::stream::GpuStream;
use crate::groth16::Groth16Error;

/// One device allocation, freed on drop (with its context made current first).
pub struct DeviceMem {
    ctx: Arc<DeviceContext>,
    ptr: u64,
    bytes: usize,
}

// SAFETY: a device address is plain data; the allocation is freed once, in Drop.
unsafe impl Send for DeviceMem {}
// SAFETY: `&DeviceMem` only exposes the address; writes happen through CUDA calls the owner
// orders on its streams.
unsafe impl Sync for DeviceMem {}

impl DeviceMem {
    /// Allocates `bytes` of device memory; out-of-memory is an error naming the size.
    pub fn alloc(ctx: &Arc<DeviceContext>, bytes: usize) -> Result<Self, Groth16Error> {
        let _current = ctx.enter()?;
        // SAFETY: allocation only; callers write before reading.
        let ptr = unsafe { cust::memory::cuda_malloc::<u8>(bytes.max(1)) }.map_err(|e| {
            Groth16Error::Device(format!("allocating {bytes} bytes of device memory: {e}"))
        })?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            ptr: ptr.as_raw(),
            bytes,
        })
    }

    /// The device address of byte `offset`.
    pub fn at(&self, offset: usize) -> u64 {
        debug_assert!(offset <= self.bytes);
        self.ptr + offset as u64
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        if let Ok(_current) = self.ctx.enter() {
            let ptr = cust::memory::DevicePointer::<u8>::from_raw(self.ptr);
            // SAFETY: allocated by cuda_malloc and freed once.
            if let Err(e) = unsafe { cust::memory::cuda_free(ptr) } {
                log::warn!("freeing device memory failed: {e}");
            }
        }
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

/// [`h2d`], then waits for `stream` to finish.
pub fn h2d_blocking(dst: u64, src: &[u8], stream: &GpuStream) -> Result<(), Groth16Error> {
    h2d(dst, src, stream)?;
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
