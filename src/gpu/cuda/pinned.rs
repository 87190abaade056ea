//! Page-locked host memory from `cust` for the engine's a/b/c pool, so the device copies
//! a/b/c with asynchronous DMA at full PCIe speed instead of through a driver staging buffer.

use blstrs::Scalar;

use crate::groth16::HostBlock;

/// A block of pinned host memory holding `capacity` scalars, freed on drop.
pub struct PinnedBlock {
    ptr: *mut Scalar,
    capacity: usize,
}

// SAFETY: the block is plain memory owned by this value; access goes through ScalarBuf, which
// follows Rust's borrowing rules.
unsafe impl Send for PinnedBlock {}
// SAFETY: as above; `&PinnedBlock` only hands out the pointer.
unsafe impl Sync for PinnedBlock {}

impl PinnedBlock {
    /// Allocates `capacity` scalars of pinned memory (a context must be current).
    pub fn alloc(capacity: usize) -> Result<Self, cust::error::CudaError> {
        // SAFETY: allocation only; the memory is written before it is read (ScalarBuf tracks
        // the initialised length).
        let ptr = unsafe { cust::memory::cuda_malloc_locked::<Scalar>(capacity.max(1))? };
        Ok(Self { ptr, capacity })
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
        // SAFETY: allocated by cuda_malloc_locked and freed once.
        if let Err(e) = unsafe { cust::memory::cuda_free_locked(self.ptr) } {
            log::warn!("freeing pinned memory failed: {e}");
        }
    }
}
