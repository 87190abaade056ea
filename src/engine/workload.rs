//! What the engine proves: a job of one or more partitions behind a small trait, so the engine
//! knows nothing of Filecoin (the `proofs` module implements it for Filecoin requests).

use std::sync::Arc;

use crate::groth16::{Assignment, BufferSet, CircuitShape, Srs};

/// Scheduling class; lower value runs first. FIFO within a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// WinningPoSt: a missed block reward if late.
    Critical = 0,
    /// WindowPoSt: a fault if late.
    High = 1,
    /// PoRep C2, SnapDeals.
    Normal = 2,
    /// Background work.
    Low = 3,
}

impl Priority {
    /// All classes, highest first.
    pub const ALL: [Priority; 4] = [Self::Critical, Self::High, Self::Normal, Self::Low];

    /// Lower-case name for status and metrics.
    pub fn name(self) -> &'static str {
        match self {
            Self::Critical => "critical",
            Self::High => "high",
            Self::Normal => "normal",
            Self::Low => "low",
        }
    }
}

/// Identifies a submitted job (unique per engine, never reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u64);

/// A provable job: partitions to synthesize, the SRS they need, and how to check the result.
///
/// Implementations must be cheap to share (`Arc`) and thread-safe; `synthesize` runs on
/// synthesis workers, `verify` on the finalizer, never under an engine lock.
pub trait Workload: Send + Sync + 'static {
    /// Short kind name for logs and status (e.g. "winning").
    fn kind(&self) -> String;
    /// Scheduling class.
    fn priority(&self) -> Priority;
    /// Number of partitions (each gives one 192-byte proof).
    fn partitions(&self) -> usize;
    /// Key of the SRS the partitions use; jobs with the same key share one resident SRS.
    fn srs_key(&self) -> String;
    /// Loads (decodes) the SRS when it is not resident.
    fn load_srs(&self) -> Result<Arc<Srs>, String>;
    /// Bytes the decoded SRS will take, if known before decoding (e.g. from the parameter
    /// file's size). Lets the budget wait for room before the first decode, and refuse a job
    /// whose parameters can never fit at submit. The measured size replaces it once decoded.
    fn srs_size_hint(&self) -> Option<u64> {
        None
    }
    /// The shape of one partition's circuit, if known before synthesis (e.g. from the parameter
    /// file). Lets the budget charge a partition's whole footprint (a/b/c, assignment, prover
    /// transients) before its first synthesis; without it the first partition of a circuit is
    /// measured alone and charged after it ran.
    fn circuit_shape(&self) -> Option<CircuitShape> {
        None
    }
    /// Synthesizes partition `k` into `buffers`. `srs` is the resident parameter set the
    /// partition will be proved with: a workload may attach data derived from its circuit to
    /// it (a pre-compiled constraint system), which the engine then charges to the budget
    /// with the set and frees when the set is evicted.
    fn synthesize(&self, k: usize, buffers: BufferSet, srs: &Srs) -> Result<Assignment, String>;
    /// Checks the complete proof (partition proofs concatenated in order).
    fn verify(&self, proof: &[u8]) -> Result<(), String>;
    /// Turns the partition proofs (concatenated in order) into the bytes delivered and checks
    /// them; runs on the finalizer. The default delivers them as they are, once `verify`
    /// accepts them; a workload whose result is derived from its partition proofs (e.g. an
    /// aggregate) overrides it.
    fn finish(&self, partition_proofs: Vec<u8>) -> Result<Vec<u8>, String> {
        self.verify(&partition_proofs).map(|()| partition_proofs)
    }
}
