//! The prover backend interface: a proof is made in two phases so that a device can start the
//! next partition while the previous one is being finished.

use std::sync::Arc;

use blstrs::Scalar;

use super::assignment::{Assignment, BufferSet};
use super::error::Result;
use super::proof::Proof;
use super::shape::CircuitShape;
use super::srs::Srs;

/// The per-proof randomness of Groth16 (r blinds A, s blinds B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Randomness {
    /// Blinding factor r.
    pub r: Scalar,
    /// Blinding factor s.
    pub s: Scalar,
}

impl Randomness {
    /// Fresh random r and s.
    pub fn random(rng: &mut impl rand_core::RngCore) -> Self {
        use ff::Field;
        Self {
            r: Scalar::random(&mut *rng),
            s: Scalar::random(&mut *rng),
        }
    }
}

/// Host memory granted by whoever keeps the memory budget (the engine), for what a backend
/// needs beyond the transients it was charged for up front: a GPU backend is charged its own
/// small host figure per partition, and takes the CPU prover's transients only for a
/// partition it hands to the CPU after a device failure.
pub trait HostMemory: Send + Sync {
    /// Takes `bytes` from the budget now if they fit, else returns false. Never waits.
    fn try_take(&self, bytes: u64) -> bool;
    /// Gives back `bytes` taken earlier. Callers never hold the budget's lock.
    fn give_back(&self, bytes: u64);
}

/// Bytes taken from a [`HostMemory`], given back when this is dropped.
pub struct HostGrant {
    memory: Arc<dyn HostMemory>,
    bytes: u64,
}

impl HostGrant {
    /// Takes `bytes` from `memory`, or None when they do not fit its budget.
    pub fn take(memory: &Arc<dyn HostMemory>, bytes: u64) -> Option<Self> {
        memory.try_take(bytes).then(|| Self {
            memory: Arc::clone(memory),
            bytes,
        })
    }

    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for HostGrant {
    fn drop(&mut self) {
        self.memory.give_back(self.bytes);
    }
}

/// What `prove_start` returns: the pending work, and the buffer set it no longer needs.
pub struct Started<P> {
    /// The proof in progress; pass it to `prove_finish`.
    pub pending: P,
    /// The a/b/c and aux buffers, free for the next synthesis (contents unspecified).
    pub released: BufferSet,
}

/// A Groth16 prover that works in two phases.
///
/// `prove_start` consumes everything that depends on a, b, c (the quotient h and its MSM on a
/// device) and takes what it needs of aux, then releases the buffer set; `prove_finish` does the remaining MSMs and assembles
/// A, B, C with r and s. Any correct backend gives the same bytes for the same (r, s).
pub trait ProverBackend: Send + Sync {
    /// State carried from `prove_start` to `prove_finish`.
    type Pending: Send;

    /// A short name for logs and status ("cpu", "cuda:0").
    fn name(&self) -> String;

    /// Phase one: checks the assignment against the SRS, computes h and starts the MSMs.
    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<Started<Self::Pending>>;

    /// Phase two: finishes the MSMs and assembles the proof.
    fn prove_finish(&self, pending: Self::Pending) -> Result<Proof>;

    /// A buffer set with room for `constraints` constraints (and aux variables), in the
    /// memory this backend uploads from fastest. The CPU backend uses plain heap memory.
    fn alloc_buffers(&self, constraints: usize) -> BufferSet {
        BufferSet::with_capacity(constraints)
    }

    /// Host bytes this backend allocates for one partition of `shape` between the start of
    /// `prove_start` and the end of `prove_finish`, beyond the assignment and the buffer set:
    /// what the engine's budget charges for proving it. The default is the CPU prover's
    /// figure. A backend that sometimes needs more (a GPU falling back to the CPU) takes the
    /// rest from [`HostMemory`] when it needs it.
    fn transient_bytes(&self, shape: &CircuitShape) -> u64 {
        shape.cpu_transient_bytes_here()
    }

    /// Where this backend takes host memory beyond [`ProverBackend::transient_bytes`]: the
    /// engine that drives it (the latest to open over it) hands over its budget here. Backends
    /// that never need more ignore it.
    fn set_host_memory(&self, _memory: Arc<dyn HostMemory>) {}

    /// Whether a buffer set in pinned memory (from [`ProverBackend::alloc_buffers`]) make this backend
    /// faster, so the engine replaces pool buffers that grew on the heap. False for the CPU.
    fn prefers_pinned(&self) -> bool {
        false
    }

    /// Device failures in a row (0 for the CPU), including those a CPU fallback absorbed: a
    /// spread over several devices sends less work to one that keeps failing.
    fn failures_in_a_row(&self) -> usize {
        0
    }

    /// Independent finishing lanes (devices): pending work of different lanes can finish at
    /// the same time, so the engine gives each lane its own finalizer queue. 1 by default.
    fn lanes(&self) -> usize {
        1
    }

    /// The lane (below [`ProverBackend::lanes`]) that must finish `pending`.
    fn lane(&self, _pending: &Self::Pending) -> usize {
        0
    }

    /// Per device this backend drives: its name and the milliseconds its kernels ran since
    /// open (overlapping work counted once), for the engine's status. Empty for the CPU.
    fn device_busy_ms(&self) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// Both phases in one call, for callers that do not pipeline.
    fn prove(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<Proof> {
        let started = self.prove_start(assignment, srs, randomness)?;
        self.prove_finish(started.pending)
    }
}
