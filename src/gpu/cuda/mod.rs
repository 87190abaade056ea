//! The CUDA backend: `cust` owns devices, contexts, streams, device memory and pinned host
//! memory; the kernels (cuda/groth16.cu, on sppark's field, NTT and MSM code) take raw
//! pointers and streams.

pub mod backend;
pub mod check;
pub mod device;
pub mod kernels;
pub mod pinned;
pub mod resident;
pub mod stream;
#[cfg(feature = "supraseal")]
pub mod supraseal;

pub use backend::{GpuBackend, GpuPending, InjectAt};
