//! A host emulation of the CUDA device layer (feature `gpu-emulator`, without `cuda`): the same
//! API as `gpu::cuda`'s `device`, `stream`, `memory` and `kernels` modules, so the
//! CUDA backend's own code (partition layout, density gathering, SRS residency, pools, error
//! paths, the GPU checks and benchmarks) runs and is tested on machines without a GPU.
//!
//! It models what the backend must get right, so that a mistake fails a test every time:
//! - device memory is host memory handed out as addresses; every copy and kernel checks that
//!   its ranges lie in live allocations of the right device, and fresh allocations hold
//!   garbage, as device memory may;
//! - [`DEVICES`] devices of [`DEVICE_MEMORY`] bytes each (or what [`set_device_memory`] set):
//!   a larger allocation is an out-of-memory error;
//! - driver calls need the device's context current on the calling thread;
//! - streams are lazy: queued work runs only when the host waits for it (a stream or event
//!   synchronize, or a free, which synchronises the device as `cuMemFree` does), the latest a
//!   real device could run it. A missing wait leaves stale data behind every time;
//! - a copy from pinned memory reads its source when it runs (DMA), one from pageable memory
//!   at the call (the driver stages it);
//! - MSMs block and run at once on the calling thread, unordered with the streams (sppark's
//!   MSM runs on streams of its own);
//! - an access outside its buffers found while work runs poisons the device, as a sticky CUDA
//!   error does: every later call on it fails;
//! - MSMs leave state kept per device, curve and size class, as the CUDA layer's `msm_t`
//!   cache does (counted, not allocated), until `msm_release` drops it.
//!
//! The kernels compute with the CPU prover's NTT and MSM code. What this cannot test is the
//! CUDA C++ itself (`cuda/groth16.cu`, sppark): `scripts/gpu-check.sh` on a GPU does.

pub mod device;
pub mod kernels;
pub mod memory;
mod registry;
pub mod stream;

/// Number of emulated devices (three: several-device paths run too, and tests that shrink
/// or measure a device each have one of their own).
pub const DEVICES: u32 = 3;

/// Memory of each emulated device in bytes (counted, not reserved).
pub const DEVICE_MEMORY: u64 = 16 << 30;

/// Gives emulated device `ordinal` `bytes` of memory instead of [`DEVICE_MEMORY`], so tests
/// can show what a device too small for two partitions does.
pub fn set_device_memory(ordinal: u32, bytes: u64) -> Result<(), crate::groth16::Groth16Error> {
    registry::set_memory(ordinal, bytes)
}

/// The most bytes emulated device `ordinal` has had allocated at once since
/// [`reset_device_memory_peak`] (or since the process started), to check what the backend
/// counts against what it allocates.
pub fn device_memory_peak(ordinal: u32) -> u64 {
    registry::peak(ordinal)
}

/// Starts [`device_memory_peak`] again from what emulated device `ordinal` holds now.
pub fn reset_device_memory_peak(ordinal: u32) {
    registry::reset_peak(ordinal)
}

/// Whether host memory `[ptr, ptr + bytes)` lies in one range page-locked through the
/// emulated `register_host` (to check that streamed parameters are copied by DMA and
/// unlocked before they are freed).
pub fn is_host_registered(ptr: *const u8, bytes: usize) -> bool {
    registry::is_registered(ptr, bytes)
}

/// Breaks emulated device `ordinal` as a sticky CUDA error (an illegal address) breaks a
/// context: every later call on it fails with `why`. For tests of the error paths.
pub fn break_device(ordinal: u32, why: &str) {
    registry::poison(ordinal, why.to_string());
}
