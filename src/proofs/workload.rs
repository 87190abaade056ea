//! Filecoin requests as engine workloads: priority by kind, SRS by parameter file, synthesis
//! into the engine's pool buffers, and filecoin-proofs' verifier as the self-check.

use std::path::PathBuf;
use std::sync::Arc;

use super::circuits::CircuitKind;
use super::params::params_file;
use super::request::ProofRequest;
use crate::engine::{Priority, Workload};
use crate::groth16::{AbcBuffers, Assignment, Srs};

/// A [`ProofRequest`] the engine can schedule.
pub struct FilecoinWorkload {
    request: ProofRequest,
    params_dir: PathBuf,
}

impl FilecoinWorkload {
    /// Wraps a parsed request; parameters are read from `params_dir` when first needed.
    pub fn new(request: ProofRequest, params_dir: impl Into<PathBuf>) -> Arc<Self> {
        Arc::new(Self {
            request,
            params_dir: params_dir.into(),
        })
    }

    /// The request.
    pub fn request(&self) -> &ProofRequest {
        &self.request
    }
}

/// The engine's SRS key of a circuit kind (its filecoin-proofs cache id).
pub fn srs_key(kind: CircuitKind) -> String {
    kind.cache_key()
        .map(|k| k.id)
        .unwrap_or_else(|_| kind.name())
}

/// Decodes a kind's parameters from `params_dir`.
pub fn load_kind(kind: CircuitKind, params_dir: &std::path::Path) -> Result<Arc<Srs>, String> {
    let path = params_file(kind, params_dir).map_err(|e| format!("{e:#}"))?;
    Srs::read_file(&path)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

impl Workload for FilecoinWorkload {
    fn srs_size_hint(&self) -> Option<u64> {
        // Parameter files hold uncompressed points, laid out as the decoded affine points are.
        let path = params_file(self.request.circuit_kind(), &self.params_dir).ok()?;
        std::fs::metadata(path).ok().map(|m| m.len())
    }

    fn kind(&self) -> String {
        self.request.kind_name().to_string()
    }

    fn priority(&self) -> Priority {
        match self.request.kind_name() {
            "winning" => Priority::Critical,
            "window" => Priority::High,
            _ => Priority::Normal,
        }
    }

    fn partitions(&self) -> usize {
        self.request.partitions()
    }

    fn srs_key(&self) -> String {
        srs_key(self.request.circuit_kind())
    }

    fn load_srs(&self) -> Result<Arc<Srs>, String> {
        let path = params_file(self.request.circuit_kind(), &self.params_dir)
            .map_err(|e| format!("{e:#}"))?;
        Srs::read_file(&path)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }

    fn synthesize(&self, k: usize, buffers: AbcBuffers) -> Result<Assignment, String> {
        self.request
            .synthesize_partition(k, buffers)
            .map(|(assignment, _)| assignment)
            .map_err(|e| e.to_string())
    }

    fn verify(&self, proof: &[u8]) -> Result<(), String> {
        match self.request.verify(proof) {
            Ok(true) => Ok(()),
            Ok(false) => Err(format!(
                "{} proof for {} does not verify",
                self.request.kind_name(),
                self.request.subject()
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}
