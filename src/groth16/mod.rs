//! The split Groth16 prover: synthesis into a/b/c buffers, an SRS decoded once, a two-phase
//! backend (CPU here; CUDA in `crate::gpu`), bellperson-identical proofs, and a fast parameter generator
//! for tests and devnets.

pub mod assignment;
pub mod backend;
pub mod buffer;
pub mod cpu;
pub mod density;
pub mod error;
#[cfg(target_arch = "x86_64")]
mod fp_lanes;
pub mod ifma;
#[cfg(target_arch = "x86_64")]
mod limbs52;
pub mod msm;
#[cfg(target_arch = "x86_64")]
mod msm_lanes;
pub mod ntt;
pub mod paramgen;
pub mod pce;
pub mod proof;
pub mod shape;
pub mod spread;
pub mod srs;
pub mod synthesis;
pub mod test_circuits;

pub use assignment::{AbcBuffers, Assignment, BufferSet};
pub use backend::{HostGrant, HostMemory, ProverBackend, Randomness, Started};
pub use buffer::{HostBlock, ScalarBuf};
pub use cpu::CpuBackend;
pub use density::Density;
pub use error::{Groth16Error, Result};
pub use pce::{synthesize_parted_with_pce, synthesize_with_pce, PartedCircuit, Pce, WholeCircuit};
pub use proof::{Proof, PROOF_BYTES};
pub use shape::CircuitShape;
pub use spread::Spread;
pub use srs::Srs;
pub use synthesis::{synthesize, ProvingCs};

/// Verifies a proof against the SRS's verifying key with bellperson's verifier.
pub fn verify(srs: &Srs, proof: &Proof, public_inputs: &[blstrs::Scalar]) -> bool {
    bellperson::groth16::verify_proof(&srs.pvk, &proof.to_bellperson(), public_inputs)
        .unwrap_or(false)
}
