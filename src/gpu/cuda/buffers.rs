//! Owned device allocations and pinned host blocks, over the device layer's raw calls
//! (`memory`: the CUDA driver, or the host emulator), so both layers share one owner type each.

use std::sync::Arc;

use blstrs::Scalar;

use super::device::DeviceContext;
use super::memory;
use super::stream::GpuStream;
use crate::groth16::{Groth16Error, HostBlock};

/// One device allocation, freed on drop (the layer makes its context current to free it).
pub struct DeviceMem {
    ctx: Arc<DeviceContext>,
    ptr: u64,
    bytes: usize,
}

// SAFETY: a device address is plain data; the allocation is freed once, in Drop.
unsafe impl Send for DeviceMem {}
// SAFETY: `&DeviceMem` only exposes the address; writes happen through device calls the owner
// orders on its streams.
unsafe impl Sync for DeviceMem {}

impl DeviceMem {
    /// Allocates `bytes` of device memory; out-of-memory is an error naming the size.
    pub fn alloc(ctx: &Arc<DeviceContext>, bytes: usize) -> Result<Self, Groth16Error> {
        Ok(Self {
            ptr: memory::alloc_device(ctx, bytes)?,
            ctx: Arc::clone(ctx),
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
        memory::free_device(&self.ctx, self.ptr);
    }
}

/// A block of pinned host memory holding `capacity` scalars for the engine's a/b/c pool, so
/// the device copies a/b/c with asynchronous DMA; freed on drop (in its context: freeing needs
/// one, and the dropping thread may have none).
pub struct PinnedBlock {
    ctx: Arc<DeviceContext>,
    ptr: *mut Scalar,
    capacity: usize,
}

// SAFETY: the block is plain memory owned by this value; access goes through ScalarBuf, which
// follows Rust's borrowing rules.
unsafe impl Send for PinnedBlock {}
// SAFETY: as above; `&PinnedBlock` only hands out the pointer.
unsafe impl Sync for PinnedBlock {}

impl PinnedBlock {
    /// Allocates `capacity` scalars of pinned memory in `ctx` (usable by every device of the
    /// process: page-locked allocations are portable under unified addressing).
    pub fn alloc(ctx: &Arc<DeviceContext>, capacity: usize) -> Result<Self, Groth16Error> {
        Ok(Self {
            ptr: memory::alloc_pinned(ctx, capacity)?,
            ctx: Arc::clone(ctx),
            capacity,
        })
    }
}

impl HostBlock for PinnedBlock {
    fn as_mut_ptr(&self) -> *mut Scalar {
        self.ptr
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn is_pinned(&self) -> bool {
        true
    }
}

impl Drop for PinnedBlock {
    fn drop(&mut self) {
        // SAFETY: allocated by alloc_pinned in `alloc`; freed once, here, when the last user
        // (ScalarBuf borrows this block) is gone.
        unsafe { memory::free_pinned(&self.ctx, self.ptr) };
    }
}

/// [`memory::h2d`], then waits for `stream` to finish.
pub fn h2d_blocking(dst: u64, src: &[u8], stream: &GpuStream) -> Result<(), Groth16Error> {
    memory::h2d(dst, src, stream)?;
    stream.synchronize()
}
