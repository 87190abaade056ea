//! A workload that replays partitions synthesized beforehand, for the GPU benchmarks: a stream
//! of them measures the prover (the GPU), not synthesis (the host's cores), and a PoRep
//! partition synthesized once can be proved many times. Everything but synthesis is the
//! wrapped workload's, so every proof is still checked by filecoin-proofs' verifier.

use std::sync::Arc;

use crate::engine::{Priority, Workload};
use crate::groth16::{Assignment, BufferSet, CircuitShape, Srs};

/// `assignment` copied into `buffers` (pinned pool memory in the engine): a/b/c and aux into
/// the buffers, the rest cloned.
pub fn copy_into(assignment: &Assignment, mut buffers: BufferSet) -> Assignment {
    for (to, from) in [
        (&mut buffers.abc.a, &assignment.abc.a),
        (&mut buffers.abc.b, &assignment.abc.b),
        (&mut buffers.abc.c, &assignment.abc.c),
        (&mut buffers.aux, &assignment.aux),
    ] {
        to.clear();
        to.extend_from_slice(from);
    }
    Assignment {
        abc: buffers.abc,
        inputs: assignment.inputs.clone(),
        aux: buffers.aux,
        a_aux_density: assignment.a_aux_density.clone(),
        b_input_density: assignment.b_input_density.clone(),
        b_aux_density: assignment.b_aux_density.clone(),
    }
}

/// `inner` with its partitions' assignments given up front (one per partition, in order).
pub struct Replayed {
    inner: Arc<dyn Workload>,
    partitions: Arc<Vec<Assignment>>,
}

impl Replayed {
    /// Wraps `inner`, whose partition k synthesizes to `partitions[k]`.
    pub fn new(inner: Arc<dyn Workload>, partitions: Arc<Vec<Assignment>>) -> Arc<Self> {
        Arc::new(Self { inner, partitions })
    }
}

impl Workload for Replayed {
    fn kind(&self) -> String {
        self.inner.kind()
    }
    fn priority(&self) -> Priority {
        self.inner.priority()
    }
    fn partitions(&self) -> usize {
        self.partitions.len()
    }
    fn srs_key(&self) -> String {
        self.inner.srs_key()
    }
    fn load_srs(&self) -> Result<Arc<Srs>, String> {
        self.inner.load_srs()
    }
    fn srs_size_hint(&self) -> Option<u64> {
        self.inner.srs_size_hint()
    }
    fn circuit_shape(&self) -> Option<CircuitShape> {
        self.inner.circuit_shape()
    }
    fn synthesize(&self, k: usize, buffers: BufferSet, _: &Srs) -> Result<Assignment, String> {
        let assignment = self
            .partitions
            .get(k)
            .ok_or_else(|| format!("no partition {k}"))?;
        Ok(copy_into(assignment, buffers))
    }
    fn verify(&self, proof: &[u8]) -> Result<(), String> {
        self.inner.verify(proof)
    }
    fn finish(&self, partition_proofs: Vec<u8>) -> Result<Vec<u8>, String> {
        self.inner.finish(partition_proofs)
    }
}
