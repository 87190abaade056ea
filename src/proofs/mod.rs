//! Filecoin proof kinds mapped onto circuits: which circuit each registered proof uses, where
//! its parameters live, how requests become per-partition circuits, and the blocking prover.

pub mod aggregate;
pub mod circuits;
pub mod error;
pub mod params;
pub mod pce;
pub mod plan;
mod por;
pub mod porep;
mod porep_parts;
pub mod poseidon;
pub mod post;
mod post_parts;
pub mod production;
pub mod prove;
pub mod registry;
pub mod request;
mod sha256;
pub mod snap;
pub mod snap_parts;
#[cfg(test)]
mod test_support;
pub mod testdata;
pub mod vanilla;
pub mod verify;
pub mod workload;

pub use error::{ProofError, ProofResult};
pub use prove::{prove, prove_with_randomness, SrsCache};
pub use request::{PartitionVisitor, ProofRequest};
