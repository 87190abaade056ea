//! A Groth16 proof and its 192-byte encoding (identical to bellperson's `Proof::write`).

use bellperson::groth16;
use blstrs::{Bls12, G1Affine, G2Affine};

/// Size of an encoded proof: compressed A (48), B (96), C (48).
pub const PROOF_BYTES: usize = 192;

/// A Groth16 proof over BLS12-381.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// A in G1.
    pub a: G1Affine,
    /// B in G2.
    pub b: G2Affine,
    /// C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// The 192-byte encoding filecoin-proofs stores and verifies.
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// The same proof as bellperson's type (for its verifier).
    pub fn to_bellperson(&self) -> groth16::Proof<Bls12> {
        groth16::Proof {
            a: self.a,
            b: self.b,
            c: self.c,
        }
    }
}

impl From<groth16::Proof<Bls12>> for Proof {
    fn from(p: groth16::Proof<Bls12>) -> Self {
        Self {
            a: p.a,
            b: p.b,
            c: p.c,
        }
    }
}
