//! Emulated device and pinned memory and copies: host allocations handed out as device
//! addresses (owned by `gpu::cuda::buffers`' types), copies checked against their allocations
//! and queued on a stream.

use blstrs::Scalar;

use super::device::{require_current, DeviceContext};
use super::registry::{self, Owner};
use super::stream::{synchronize_device, GpuStream};
use crate::groth16::Groth16Error;

/// Allocates `bytes` on the context's device; beyond its memory, an out-of-memory error.
pub fn alloc_device(ctx: &DeviceContext, bytes: usize) -> Result<u64, Groth16Error> {
    let _current = ctx.enter()?;
    require_current(ctx.ordinal)?;
    registry::allocate(Owner::Device(ctx.ordinal), bytes)
}

/// Frees an allocation of [`alloc_device`] after the device's queued work has run, as
/// `cuMemFree` synchronises.
pub fn free_device(ctx: &DeviceContext, ptr: u64) {
    synchronize_device(Some(ctx.ordinal));
    registry::release(ptr);
}

/// Allocates `capacity` scalars of emulated pinned memory in `ctx` (which must be usable):
/// host memory the emulated copies recognise as pinned (they read it when they run, as DMA
/// does).
pub fn alloc_pinned(ctx: &DeviceContext, capacity: usize) -> Result<*mut Scalar, Groth16Error> {
    let _current = ctx.enter()?;
    require_current(ctx.ordinal)?;
    let bytes = capacity.max(1) * std::mem::size_of::<Scalar>();
    Ok(registry::allocate(Owner::Pinned, bytes)? as *mut Scalar)
}

/// Frees a block of [`alloc_pinned`]; copies still queued from it run first (freeing pinned
/// memory waits for the devices in CUDA too).
///
/// # Safety
/// `ptr` came from [`alloc_pinned`], is freed once, and nothing reads or writes it afterwards.
pub unsafe fn free_pinned(_ctx: &DeviceContext, ptr: *mut Scalar) {
    synchronize_device(None);
    registry::release(ptr as u64);
}

/// Page-locks host memory `[ptr, ptr + bytes)` (emulated: copies from it then read it when
/// they run, as DMA does); overlapping a locked range is an error.
///
/// # Safety
/// The memory stays allocated until [`unregister_host`] is called for `ptr`.
pub unsafe fn register_host(
    ctx: &DeviceContext,
    ptr: *const u8,
    bytes: usize,
) -> Result<(), Groth16Error> {
    let _current = ctx.enter()?;
    require_current(ctx.ordinal)?;
    registry::register(ptr, bytes)
}

/// Undoes [`register_host`] for `ptr`, after the copies queued from it have run (their source
/// is freed once it is unlocked).
pub fn unregister_host(_ctx: &DeviceContext, ptr: *const u8) {
    synchronize_device(None);
    registry::unregister(ptr);
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

/// Copies device address `src` into `dst` after everything queued on `stream`, and waits.
pub fn d2h_blocking(dst: &mut [u8], src: u64, stream: &GpuStream) -> Result<(), Groth16Error> {
    if dst.is_empty() {
        return Ok(());
    }
    let device = stream.device();
    require_current(device)?;
    registry::check_range("device-to-host copy", src, dst.len(), Owner::Device(device))?;
    stream.synchronize()?;
    // SAFETY: the source range was checked live, and the stream's queued writes to it have run.
    unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
    Ok(())
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
