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
pub mod footprint;

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
    /// Streaming multiprocessors (132 on an H200): what the kernels' grids and sppark's MSM
    /// split are sized by. 0 on the host emulator.
    pub sm_count: u32,
    /// Compute capability, "major.minor" ("9.0" for Hopper); "emulated" on the host emulator.
    pub compute_capability: String,
}

/// The CUDA software a GPU build runs on, logged by `cuzk gpu devices` so a GPU run's log says
/// which driver and runtime its figures were measured with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuRuntime {
    /// Newest CUDA version the installed driver supports ("12.4"); "emulated" on the emulator.
    pub driver: String,
    /// CUDA runtime version the kernels were linked with (statically; "11.8"); "emulated" on
    /// the emulator.
    pub runtime: String,
    /// Devices sppark's GPU pool can use (compute capability 7+, cooperative launch).
    pub sppark_devices: usize,
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

/// The driver, runtime and sppark pool of this build's GPU backend; an error without a GPU
/// backend or without a usable driver.
pub fn runtime() -> Result<GpuRuntime, String> {
    #[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
    {
        let driver = cuda::device::driver_version().map_err(|e| e.to_string())?;
        let (runtime, sppark_devices) = cuda::kernels::runtime_info().map_err(|e| e.to_string())?;
        Ok(GpuRuntime {
            driver,
            runtime,
            sppark_devices,
        })
    }
    #[cfg(not(any(feature = "cuda", feature = "gpu-emulator")))]
    {
        Err("this build has no GPU backend".to_string())
    }
}

/// The group a point kernel works in; the value is the one the CUDA entry points take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Curve {
    /// G1: affine points of 96 bytes.
    G1 = 1,
    /// G2: affine points of 192 bytes.
    G2 = 2,
}

impl Curve {
    /// Bytes of one affine point (blst's layout, which sppark's kernels share).
    pub fn point_bytes(self) -> usize {
        match self {
            Curve::G1 => std::mem::size_of::<blstrs::G1Affine>(),
            Curve::G2 => std::mem::size_of::<blstrs::G2Affine>(),
        }
    }
}

/// Whether this library was built with the CUDA backend (or, with `gpu-emulator`, with the
/// backend over its host emulation, whose devices `devices()` then lists).
pub const CUDA_BUILT: bool = cfg!(any(feature = "cuda", feature = "gpu-emulator"));

/// Whether the GPU backend runs on the host emulation (`gpu-emulator` without `cuda`).
pub const EMULATED: bool = cfg!(all(feature = "gpu-emulator", not(feature = "cuda")));
