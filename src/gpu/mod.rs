//! GPU proving: device discovery and the CUDA backend (feature `cuda`; feature `gpu-emulator`
//! runs it on a host emulation of the device for tests).
//!
//! Builds without the `cuda` feature, and machines without a usable device, report no devices
//! and the engine runs on the CPU backend; `Status::backend` says which one is in use.

pub mod busy;
#[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
pub mod cuda;
#[cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]
pub mod emulator;

use serde::Serialize;

/// A GPU cuzk can prove on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuDevice {
    /// CUDA device ordinal (what `devices` in the engine config lists).
    pub ordinal: u32,
    /// Vendor name as the driver reports it ("NVIDIA H200").
    pub name: String,
    /// Device memory in bytes.
    pub memory_bytes: u64,
}

/// The GPUs this build can use: none without the `cuda` feature or without a driver/device.
pub fn devices() -> Vec<GpuDevice> {
    #[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
    {
        cuda::device::list().unwrap_or_else(|e| {
            log::info!("no CUDA device: {e}");
            Vec::new()
        })
    }
    #[cfg(not(any(feature = "cuda", feature = "gpu-emulator")))]
    {
        Vec::new()
    }
}

/// Whether this library was built with the CUDA backend (or, with `gpu-emulator`, with the
/// backend over its host emulation, whose devices `devices()` then lists).
pub const CUDA_BUILT: bool = cfg!(any(feature = "cuda", feature = "gpu-emulator"));

/// Whether the GPU backend runs on the host emulation (`gpu-emulator` without `cuda`).
pub const EMULATED: bool = cfg!(all(feature = "gpu-emulator", not(feature = "cuda")));
