//! Page-locked host memory from `cust` for the engine's a/b/c pool, so the device copies
//! a/b/c with asynchronous DMA at full PCIe speed instead of through a driver staging buffer.

use std::sync::Arc;

use blstrs::Scalar;

use super::device::{device_error, DeviceContext};
use crate::groth16::{Groth16Error, HostBlock};

/// A block of pinned host memory holding `capacity` scalars, freed on drop (with the context
/// it was allocated in made current: freeing needs one, and the dropping thread may have none).
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
        let _current = ctx.enter()?;
        // SAFETY: allocation only; the memory is written before it is read (ScalarBuf tracks
        // the initialised length).
        let ptr = unsafe { cust::memory::cuda_malloc_locked::<Scalar>(capacity.max(1)) }
            .map_err(|e| device_error("pinned host memory", e))?;
        Ok(Self {
            ctx: Arc::clone(ctx),
            ptr,
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
        let _current = match self.ctx.enter() {
            Ok(guard) => guard,
            Err(e) => {
                log::warn!("freeing pinned memory: {e}");
                return;
            }
        };
        // SAFETY: allocated by cuda_malloc_locked and freed once.
        if let Err(e) = unsafe { cust::memory::cuda_free_locked(self.ptr) } {
            log::warn!("freeing pinned memory failed: {e}");
        }
    }
}
