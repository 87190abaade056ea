//! Type-erased prover backends, so one engine type drives the CPU backend or a GPU one.

use std::any::Any;
use std::sync::Arc;

use crate::groth16::{
    Assignment, BufferSet, CircuitShape, Groth16Error, HostMemory, Proof, ProverBackend,
    Randomness, Srs,
};

/// Pending work of an erased backend.
pub type ErasedPending = Box<dyn Any + Send>;

/// A [`ProverBackend`] behind a trait object.
pub trait ErasedBackend: Send + Sync {
    /// Backend name for status.
    fn name(&self) -> String;
    /// `prove_start`, returning the pending work and the released buffer set.
    fn start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<(ErasedPending, BufferSet), Groth16Error>;
    /// `prove_finish`.
    fn finish(&self, pending: ErasedPending) -> Result<Proof, Groth16Error>;
    /// A buffer set for `constraints` constraints, in the memory this backend uploads from
    /// fastest (pinned for a GPU).
    fn alloc_buffers(&self, constraints: usize) -> BufferSet;
    /// Host bytes proving one partition of `shape` allocates; see
    /// [`ProverBackend::transient_bytes`].
    fn transient_bytes(&self, shape: &CircuitShape) -> u64;
    /// Per device: name and milliseconds its kernels ran (empty for the CPU).
    fn device_busy_ms(&self) -> Vec<(String, f64)>;
    /// Whether pinned pool buffers make this backend faster; see
    /// [`ProverBackend::prefers_pinned`].
    fn prefers_pinned(&self) -> bool;
    /// Independent finishing lanes (devices); see [`ProverBackend::lanes`].
    fn lanes(&self) -> usize;
    /// The lane that must finish `pending` (0 for pending work of another backend).
    fn lane(&self, pending: &ErasedPending) -> usize;
    /// Hands the engine's budget to the backend; see [`ProverBackend::set_host_memory`].
    fn set_host_memory(&self, memory: Arc<dyn HostMemory>);
}

impl<B> ErasedBackend for B
where
    B: ProverBackend,
    B::Pending: 'static,
{
    fn name(&self) -> String {
        ProverBackend::name(self)
    }

    fn start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<(ErasedPending, BufferSet), Groth16Error> {
        let started = self.prove_start(assignment, srs, randomness)?;
        Ok((Box::new(started.pending), started.released))
    }

    fn finish(&self, pending: ErasedPending) -> Result<Proof, Groth16Error> {
        let pending = pending
            .downcast::<B::Pending>()
            .map_err(|_| Groth16Error::ShapeMismatch("pending work of another backend".into()))?;
        self.prove_finish(*pending)
    }

    fn alloc_buffers(&self, constraints: usize) -> BufferSet {
        ProverBackend::alloc_buffers(self, constraints)
    }

    fn transient_bytes(&self, shape: &CircuitShape) -> u64 {
        ProverBackend::transient_bytes(self, shape)
    }

    fn set_host_memory(&self, memory: Arc<dyn HostMemory>) {
        ProverBackend::set_host_memory(self, memory)
    }

    fn device_busy_ms(&self) -> Vec<(String, f64)> {
        ProverBackend::device_busy_ms(self)
    }

    fn prefers_pinned(&self) -> bool {
        ProverBackend::prefers_pinned(self)
    }

    fn lanes(&self) -> usize {
        ProverBackend::lanes(self).max(1)
    }

    fn lane(&self, pending: &ErasedPending) -> usize {
        pending
            .downcast_ref::<B::Pending>()
            .map_or(0, |p| ProverBackend::lane(self, p))
            .min(ErasedBackend::lanes(self) - 1)
    }
}
