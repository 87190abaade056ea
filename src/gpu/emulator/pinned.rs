//! Emulated page-locked host memory for the engine's a/b/c pool: host memory the emulated
//! copies recognise as pinned (they read it when they run, as DMA does).

use std::sync::Arc;

use blstrs::Scalar;

use super::device::{require_current, DeviceContext};
use super::registry::{self, Owner};
use super::stream::synchronize_device;
use crate::groth16::{Groth16Error, HostBlock};

/// A block of emulated pinned memory holding `capacity` scalars, freed on drop.
pub struct PinnedBlock {
    _ctx: Arc<DeviceContext>,
    ptr: *mut Scalar,
    capacity: usize,
}

// SAFETY: the block is plain memory owned by this value; access goes through ScalarBuf.
unsafe impl Send for PinnedBlock {}
// SAFETY: as above; `&PinnedBlock` only hands out the pointer.
unsafe impl Sync for PinnedBlock {}

impl PinnedBlock {
    /// Allocates `capacity` scalars of pinned memory in `ctx` (which must be usable).
    pub fn alloc(ctx: &Arc<DeviceContext>, capacity: usize) -> Result<Self, Groth16Error> {
        let _current = ctx.enter()?;
        require_current(ctx.ordinal)?;
        let bytes = capacity.max(1) * std::mem::size_of::<Scalar>();
        let ptr = registry::allocate(Owner::Pinned, bytes)? as *mut Scalar;
        Ok(Self {
            _ctx: Arc::clone(ctx),
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
        // Copies still queued from this block run first (freeing pinned memory waits for the
        // devices in CUDA too).
        synchronize_device(None);
        registry::release(self.ptr as u64);
    }
}
