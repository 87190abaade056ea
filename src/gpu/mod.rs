//! GPU proving: device discovery and the CUDA backend (feature `cuda`).
//!
//! Builds without the `cuda` feature, and machines without a usable device, report no devices
//! and the engine runs on the CPU backend; `Status::backend` says which one is in use.

pub mod busy;
#[cfg(feature = "cuda")]
pub mod cuda;

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
    #[cfg(feature = "cuda")]
    {
        cuda::device::list().unwrap_or_else(|e| {
            log::info!("no CUDA device: {e}");
            Vec::new()
        })
    }
    #[cfg(not(feature = "cuda"))]
    {
        Vec::new()
    }
}

/// Whether this library was built with the CUDA backend.
pub const CUDA_BUILT: bool = cfg!(feature = "cuda");
