//! Emulated device memory and copies: host allocations handed out as device addresses, copies
//! checked against their allocations and queued on a stream.

use std::sync::Arc;

use super::device::{require_current, DeviceContext};
use super::registry::{self, Owner};
use super::stream::{synchronize_device, GpuStream};
use crate::groth16::Groth16Error;

/// One emulated device allocation, freed on drop (after the device's queued work has run, as
/// `cuMemFree` synchronises).
pub struct DeviceMem {
    ctx: Arc<DeviceContext>,
    ptr: u64,
    bytes: usize,
}

impl DeviceMem {
    /// Allocates `bytes` on the context's device; beyond its memory, an out-of-memory error.
    pub fn alloc(ctx: &Arc<DeviceContext>, bytes: usize) -> Result<Self, Groth16Error> {
        let _current = ctx.enter()?;
        require_current(ctx.ordinal)?;
        let ptr = registry::allocate(Owner::Device(ctx.ordinal), bytes)?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            ptr,
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
        synchronize_device(Some(self.ctx.ordinal));
        registry::release(self.ptr);
    }
}

/// Copies `src` to device address `dst` on `stream`: from pinned memory the copy reads `src`
/// when it runs (DMA), from pageable memory `src` is staged now, as the driver does.
pub fn h2d(dst: u64, src: &[u8], stream: &GpuStream) -> Result<(), Groth16Error> {
    if src.is_empty() {
        return Ok(());
    }
    let device = stream.device();
    require_current(device)?;
    registry::check_range("host-to-device copy", dst, src.len(), Owner::Device(device))?;
    let len = src.len();
    if registry::is_pinned(src.as_ptr(), len) {
        let from = src.as_ptr() as usize;
        stream.enqueue(Box::new(move || {
            // SAFETY: both ranges were checked live; frees synchronise before releasing.
            unsafe { std::ptr::copy_nonoverlapping(from as *const u8, dst as *mut u8, len) };
            Ok(())
        }))
    } else {
        let staged = src.to_vec();
        stream.enqueue(Box::new(move || {
            // SAFETY: the destination was checked live; frees synchronise before releasing.
            unsafe { std::ptr::copy_nonoverlapping(staged.as_ptr(), dst as *mut u8, len) };
            Ok(())
        }))
    }
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
    let device = stream.device();
    require_current(device)?;
    registry::check_range(
        "device-to-device copy (to)",
        dst,
        bytes,
        Owner::Device(device),
    )?;
    registry::check_range(
        "device-to-device copy (from)",
        src,
        bytes,
        Owner::Device(device),
    )?;
    stream.enqueue(Box::new(move || {
        // SAFETY: both ranges were checked live; `copy` allows overlap.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) };
        Ok(())
    }))
}
