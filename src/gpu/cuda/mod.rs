//! The CUDA backend: `cust` owns devices, contexts, streams, device memory and pinned host
//! memory; the kernels (cuda/groth16.cu, on sppark's field, NTT and MSM code) take raw
//! pointers and streams.
//!
//! The device layer (`device`, `stream`, `memory`, `kernels`) is the CUDA driver and
//! the nvcc-built kernels with the `cuda` feature. With only `gpu-emulator` it is
//! [`crate::gpu::emulator`], a host emulation with the same API, so the backend, the checks and
//! the benchmarks above that layer run and are tested on machines without a GPU.

pub mod backend;
pub mod buffers;
pub mod check;
pub mod kernel_check;
pub mod partition_bench;
pub mod replay;
pub mod resident;
#[cfg(feature = "supraseal")]
pub mod supraseal;

#[cfg(feature = "cuda")]
pub mod device;
#[cfg(feature = "cuda")]
pub mod kernels;
#[cfg(feature = "cuda")]
pub mod memory;
#[cfg(feature = "cuda")]
pub mod stream;

#[cfg(not(feature = "cuda"))]
pub use super::emulator::{device, kernels, memory, stream};

pub use backend::{GpuBackend, GpuPending, InjectAt};
