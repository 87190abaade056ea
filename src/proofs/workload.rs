//! Filecoin requests as engine workloads: priority by kind, SRS by parameter file, synthesis
//! into the engine's pool buffers, and filecoin-proofs' verifier as the self-check.

use std::path::PathBuf;
use std::sync::Arc;

use super::circuits::CircuitKind;
use super::params::params_file;
use super::request::ProofRequest;
use crate::engine::{Engine, EngineError, Priority, SrsInfo, Workload};
use crate::groth16::srs::ParamsHeader;
use crate::groth16::{Assignment, BufferSet, CircuitShape, Srs};

/// A [`ProofRequest`] the engine can schedule.
pub struct FilecoinWorkload {
    request: ProofRequest,
    params_dir: PathBuf,
    pce: bool,
}

impl FilecoinWorkload {
    /// Wraps a parsed request; parameters are read from `params_dir` when first needed.
    /// With `pce`, partitions are synthesized through the circuit's recorded constraint
    /// system (loaded from `params_dir` or recorded once, and kept with the parameters).
    pub fn new(request: ProofRequest, params_dir: impl Into<PathBuf>, pce: bool) -> Arc<Self> {
        Arc::new(Self {
            request,
            params_dir: params_dir.into(),
            pce,
        })
    }

    /// The request.
    pub fn request(&self) -> &ProofRequest {
        &self.request
    }

    /// The query lengths of this request's parameter file (None when it cannot be read; the
    /// decode then reports why).
    fn params_header(&self) -> Option<ParamsHeader> {
        let path = params_file(self.request.circuit_kind(), &self.params_dir).ok()?;
        ParamsHeader::read(&path).ok()
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

/// The scheduling class of a circuit kind: WinningPoSt is CRITICAL (a late proof loses the
/// block reward), WindowPoSt HIGH (a late proof faults sectors), PoRep and SnapDeals NORMAL.
pub fn kind_priority(kind: CircuitKind) -> Priority {
    match kind {
        CircuitKind::WinningPost(_) => Priority::Critical,
        CircuitKind::WindowPost(_) => Priority::High,
        CircuitKind::Porep(_) | CircuitKind::SnapDeals(_) => Priority::Normal,
    }
}

/// What the engine may know of a kind's parameters before decoding them: its class, and the
/// decoded size and partition shape read from the parameter file's query lengths.
pub fn kind_srs_info(kind: CircuitKind, params_dir: &std::path::Path) -> SrsInfo {
    let header = params_file(kind, params_dir)
        .ok()
        .and_then(|path| ParamsHeader::read(&path).ok());
    SrsInfo {
        class: kind_priority(kind),
        bytes: header.map(|h| h.decoded_bytes()),
        shape: header.map(|h| h.circuit_shape()),
    }
}

/// Decodes a kind's parameters into `engine` now (charged to its budget before the decode).
pub fn preload_kind(
    engine: &Engine,
    kind: CircuitKind,
    params_dir: &std::path::Path,
) -> Result<(), EngineError> {
    engine.preload_srs(&srs_key(kind), kind_srs_info(kind, params_dir), || {
        load_kind(kind, params_dir)
    })
}

impl Workload for FilecoinWorkload {
    fn srs_size_hint(&self) -> Option<u64> {
        // The query lengths in the file give the decoded size exactly, without decoding.
        self.params_header().map(|h| h.decoded_bytes())
    }

    fn circuit_shape(&self) -> Option<CircuitShape> {
        self.params_header().map(|h| h.circuit_shape())
    }

    fn kind(&self) -> String {
        self.request.kind_name().to_string()
    }

    fn priority(&self) -> Priority {
        kind_priority(self.request.circuit_kind())
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

    fn synthesize(&self, k: usize, buffers: BufferSet, srs: &Srs) -> Result<Assignment, String> {
        let pce = if self.pce {
            let kind = self.request.circuit_kind();
            super::pce::kind_pce_or_record_later(kind, srs, &self.params_dir)
        } else {
            None
        };
        self.request
            .synthesize_partition(k, buffers, pce.as_deref())
            .map(|(assignment, _)| assignment)
            .map_err(|e| e.to_string())
    }

    fn finish(&self, partition_proofs: Vec<u8>) -> Result<Vec<u8>, String> {
        let delivered = self
            .request
            .finish(partition_proofs)
            .map_err(|e| e.to_string())?;
        self.verify(&delivered).map(|()| delivered)
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
