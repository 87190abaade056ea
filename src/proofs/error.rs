//! Typed errors of the Filecoin layer: each names what was wrong so a caller (and the C ABI)
//! can tell bad input from missing parameters from a failed self-check.

use crate::groth16::Groth16Error;

/// Why a Filecoin proof request could not be proved.
#[derive(Debug, thiserror::Error)]
pub enum ProofError {
    /// A registered proof number that this version of cuzk does not know.
    #[error("unknown registered {family} proof {value}")]
    UnknownRegisteredProof {
        /// "seal", "PoSt" or "update".
        family: &'static str,
        /// The number given.
        value: u64,
    },
    /// A known proof type that cuzk does not prove yet.
    #[error("not supported yet: {0}")]
    NotSupported(String),
    /// Input bytes that do not decode (malformed or truncated JSON, corrupt vanilla proofs).
    #[error("malformed {what}: {reason}")]
    Malformed {
        /// Which input.
        what: String,
        /// The decoder's complaint.
        reason: String,
    },
    /// The C1 output was made for another registered proof than the request names.
    #[error("C1 output is for {found}, but the request is for {requested}")]
    RegisteredProofMismatch {
        /// What the request says.
        requested: String,
        /// What the C1 output says.
        found: String,
    },
    /// An argument out of range or of the wrong length.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Parameters are missing (the message names the file and `FIL_PROOFS_PARAMETER_CACHE`).
    #[error("{0}")]
    MissingParameters(String),
    /// The prover failed (synthesis error, SRS mismatch ...).
    #[error(transparent)]
    Groth16(#[from] Groth16Error),
    /// The finished proof did not pass the reference verifier: never returned as a proof.
    #[error("self-check failed: {kind} proof for {subject}{partition} does not verify")]
    VerificationFailed {
        /// Proof kind.
        kind: &'static str,
        /// Sector (or sectors) the proof is about.
        subject: String,
        /// ", partition N" when one partition is known to be bad.
        partition: String,
    },
    /// Vanilla proofs that storage-proofs' vanilla verifier rejects: the sectors are faulty
    /// (filecoin-ffi's `FaultySectors`) and nothing was proved.
    #[error("faulty sectors {0:?}: their vanilla proofs do not verify")]
    FaultySectors(Vec<u64>),
    /// An error reported by filecoin-proofs while building circuits or verifying.
    #[error("filecoin-proofs: {0:#}")]
    Filecoin(anyhow::Error),
}

impl ProofError {
    /// Wraps a filecoin-proofs error.
    pub fn filecoin(e: impl Into<anyhow::Error>) -> Self {
        Self::Filecoin(e.into())
    }

    /// A malformed-input error.
    pub fn malformed(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        Self::Malformed {
            what: what.into(),
            reason: reason.to_string(),
        }
    }
}

/// Runs third-party proof code on caller-supplied values. storage-proofs and filecoin-proofs
/// `expect` that 32-byte values are field elements (and SnarkPack asserts on sizes), so a
/// hostile input can panic inside them (found by the Go fuzz targets): such a panic becomes a
/// `Malformed` error naming `what`, instead of reaching the C boundary as a bug.
pub fn reject_panics<T>(what: &str, f: impl FnOnce() -> ProofResult<T>) -> ProofResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let text = crate::panics::panic_message(&*panic);
        Err(ProofError::malformed(
            what,
            format!("rejected by filecoin-proofs ({text})"),
        ))
    })
}

/// Result alias for this module.
pub type ProofResult<T> = Result<T, ProofError>;
