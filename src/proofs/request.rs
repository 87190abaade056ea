//! A proof request: inputs parsed once into typed form, one circuit per partition on demand.

use bellperson::Circuit;
use blstrs::Scalar;

use super::circuits::CircuitKind;
use super::error::ProofResult;
use super::{porep::PoRepRequest, post::PostRequest, snap::SnapDealsRequest};
use crate::groth16::{
    synthesize, synthesize_parted_with_pce, synthesize_with_pce, Assignment, BufferSet,
    PartedCircuit, Pce, WholeCircuit,
};

/// Receives the circuit of one partition (its concrete type depends on the sector shape).
pub trait PartitionVisitor {
    /// Called with the partition's circuit, ready to synthesize.
    fn visit<C: Circuit<Scalar> + Send>(&mut self, circuit: C) -> ProofResult<()>;

    /// Called instead of [`Self::visit`] with a circuit whose parts can be synthesized in
    /// parallel; by default visited whole.
    fn visit_parted<P: PartedCircuit + Send>(&mut self, circuit: P) -> ProofResult<()> {
        self.visit(WholeCircuit(circuit))
    }
}

/// Any Filecoin proof cuzk can make.
pub enum ProofRequest {
    /// PoRep C2 (seal commit phase 2).
    PoRep(PoRepRequest),
    /// WinningPoSt or one WindowPoSt partition.
    Post(PostRequest),
    /// SnapDeals empty sector update.
    SnapDeals(SnapDealsRequest),
}

impl ProofRequest {
    /// Which parameter set the request's circuits use.
    pub fn circuit_kind(&self) -> CircuitKind {
        match self {
            Self::PoRep(r) => CircuitKind::Porep(r.registered),
            Self::Post(r) => r.circuit_kind(),
            Self::SnapDeals(r) => CircuitKind::SnapDeals(r.registered),
        }
    }

    /// Short kind name for logs and errors ("porep", "winning", "window", "snap").
    pub fn kind_name(&self) -> &'static str {
        match self {
            Self::PoRep(_) => "porep",
            Self::Post(r) => r.kind_name(),
            Self::SnapDeals(_) => "snap",
        }
    }

    /// What the proof is about, for messages (sector ids).
    pub fn subject(&self) -> String {
        match self {
            Self::PoRep(r) => format!("sector {}", u64::from(r.sector_id)),
            Self::Post(r) => r.subject(),
            Self::SnapDeals(r) => format!("update of comm_r_old {}", hex8(&r.comm_r_old)),
        }
    }

    /// Number of partitions (circuits, 192-byte proofs) of the request.
    pub fn partitions(&self) -> usize {
        match self {
            Self::PoRep(r) => r.partitions(),
            Self::Post(_) => 1,
            Self::SnapDeals(r) => r.partitions(),
        }
    }

    /// Builds partition `k`'s circuit and hands it to `visitor`; returns the public inputs
    /// filecoin-proofs' verifier uses for that partition.
    pub fn visit_partition(
        &self,
        k: usize,
        visitor: Option<&mut impl PartitionVisitor>,
    ) -> ProofResult<Vec<Scalar>> {
        if k >= self.partitions() {
            return Err(super::error::ProofError::InvalidArgument(format!(
                "partition {k} out of range: the request has {} partition(s)",
                self.partitions()
            )));
        }
        match self {
            Self::PoRep(r) => r.visit_partition(k, visitor),
            Self::Post(r) => r.visit_partition(visitor),
            Self::SnapDeals(r) => r.visit_partition(k, visitor),
        }
    }

    /// Builds partition `k`'s circuit and synthesizes it into `buffers`, with the circuit's
    /// recorded constraint system when one is given (witness generation and a sparse
    /// product) or by evaluating every constraint as it is enforced; returns the assignment
    /// and the partition's public inputs.
    pub fn synthesize_partition(
        &self,
        k: usize,
        buffers: BufferSet,
        pce: Option<&Pce>,
    ) -> ProofResult<(Assignment, Vec<Scalar>)> {
        let mut visitor = IntoBuffers {
            buffers: Some(buffers),
            pce,
            out: None,
        };
        let inputs = self.visit_partition(k, Some(&mut visitor))?;
        let assignment = visitor.out.ok_or_else(|| {
            super::error::ProofError::InvalidArgument(format!("no circuit for partition {k}"))
        })?;
        Ok((assignment, inputs))
    }

    /// The bytes delivered for the partition proofs concatenated in order (themselves, or the
    /// aggregate of a non-interactive PoRep).
    pub fn finish(&self, partition_proofs: Vec<u8>) -> ProofResult<Vec<u8>> {
        match self {
            Self::PoRep(r) => r.finish(partition_proofs),
            Self::Post(_) | Self::SnapDeals(_) => Ok(partition_proofs),
        }
    }

    /// Verifies the delivered proof bytes with filecoin-proofs' own verifier.
    pub fn verify(&self, proof: &[u8]) -> ProofResult<bool> {
        match self {
            Self::PoRep(r) => r.verify(proof),
            Self::Post(r) => r.verify(proof),
            Self::SnapDeals(r) => r.verify(proof),
        }
    }
}

/// The first 8 bytes of a commitment in hex, for messages.
pub fn hex8(bytes: &[u8; 32]) -> String {
    bytes[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Synthesizes the visited circuit into the buffers it was given.
struct IntoBuffers<'a> {
    buffers: Option<BufferSet>,
    pce: Option<&'a Pce>,
    out: Option<Assignment>,
}

impl PartitionVisitor for IntoBuffers<'_> {
    fn visit<C: Circuit<Scalar> + Send>(&mut self, circuit: C) -> ProofResult<()> {
        let buffers = self.buffers.take().unwrap_or_default();
        self.out = Some(match self.pce {
            Some(pce) => synthesize_with_pce(circuit, pce, buffers)?,
            None => synthesize(circuit, buffers)?,
        });
        Ok(())
    }

    fn visit_parted<P: PartedCircuit + Send>(&mut self, circuit: P) -> ProofResult<()> {
        let buffers = self.buffers.take().unwrap_or_default();
        self.out = Some(match self.pce {
            Some(pce) => synthesize_parted_with_pce(&circuit, pce, buffers)?,
            None => synthesize(WholeCircuit(circuit), buffers)?,
        });
        Ok(())
    }
}

/// A visitor that only wants the public inputs.
pub struct NoCircuit;

impl PartitionVisitor for NoCircuit {
    fn visit<C: Circuit<Scalar> + Send>(&mut self, _: C) -> ProofResult<()> {
        Ok(())
    }
}
