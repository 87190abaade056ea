//! Errors of the split prover: every failure is a value, never a panic.

use std::path::PathBuf;

use bellperson::SynthesisError;

/// Why a Groth16 operation (synthesis, SRS loading, proving, parameter generation) failed.
#[derive(Debug, thiserror::Error)]
pub enum Groth16Error {
    /// The circuit refused to synthesize (missing assignment, division by zero, ...).
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    /// A parameter file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A parameter file is truncated or holds bytes that are not valid curve points.
    #[error("corrupt parameters in {path}: {reason}")]
    CorruptParams {
        /// The file (or `<memory>`) that was being decoded.
        path: PathBuf,
        /// What exactly was wrong.
        reason: String,
    },
    /// The SRS has fewer points in one query than the circuit needs.
    #[error("SRS too small: query {query} needs {needed} points, SRS has {available}")]
    SrsTooSmall {
        /// Which query (h, l, a, b_g1, b_g2, ic).
        query: &'static str,
        /// Points the assignment needs.
        needed: usize,
        /// Points the SRS holds.
        available: usize,
    },
    /// The assignment is internally inconsistent (lengths of a/b/c, densities, inputs).
    #[error("assignment does not match: {0}")]
    ShapeMismatch(String),
    /// The circuit has more constraints than the BLS12-381 scalar field's 2-adicity allows.
    #[error("circuit too large: {0} constraints exceed the 2^32 evaluation domain")]
    DomainTooLarge(usize),
    /// A GPU call failed (no device, out of device memory, a kernel error).
    #[error("GPU error: {0}")]
    Device(String),
    /// The parameters are degenerate (delta at infinity, unconstrained variable ...).
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
}

/// Result alias for this module.
pub type Result<T> = std::result::Result<T, Groth16Error>;
