//! # cuzk
//!
//! An embedded, pipelined Groth16 prover for Filecoin storage providers, linked into a Go node
//! (Lotus, Curio) through a C ABI. See `README.md` and `docs/` for the architecture.
//!
//! Modules:
//! - [`groth16`]: the split prover (synthesis, SRS, backends, proof assembly, test parameters);
//! - [`ffi`]: the C ABI (`include/cuzk.h` is generated from it by cbindgen);
//! - [`proofs`]: Filecoin proof kinds mapped onto circuits.

pub mod engine;
pub mod ffi;
pub mod gpu;
pub mod groth16;
pub mod panics;
pub mod proofs;

// sppark's build script compiles its device-pool code into a static library that the CUDA
// kernels call; naming the crate makes sure it is linked.
#[cfg(feature = "cuda")]
extern crate sppark;
