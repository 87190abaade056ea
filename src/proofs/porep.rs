//! PoRep C2: the C1 output (`SealCommitPhase1Output` JSON) -> one StackedDrg circuit per partition,
//! built exactly as filecoin-proofs' `seal_commit_phase2_circuit_proofs` builds them; for
//! non-interactive PoRep the partition proofs are then SnarkPack-aggregated, as its
//! `seal_commit_phase2` does.

use std::any::Any;
use std::ops::Range;

use bellperson::{ConstraintSystem, SynthesisError};

use blstrs::Scalar;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher, DefaultTreeHasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{as_safe_commitment, with_shape};
use filecoin_proofs_api::seal::{SealCommitPhase1Output, SealCommitPhase2Output};
use filecoin_proofs_api::{RegisteredAggregationProof, RegisteredSealProof, SectorId};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::multi_proof::MultiProof;
use storage_proofs_porep::stacked::{self, ChallengeRequirements, StackedCompound, StackedDrg};

use super::error::{reject_panics, ProofError, ProofResult};
use super::porep_parts;
use super::registry::{self, is_non_interactive, prover_id};
use super::request::PartitionVisitor;
use crate::groth16::PartedCircuit;

type VanillaPartitions<Tree> = Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>>;

/// What a PoRep C2 delivers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoRepOutput {
    /// The proof a node submits (filecoin-ffi's `SealCommitPhase2`): the partition proofs, or
    /// for non-interactive PoRep their SnarkPack aggregate. Checked with `verify_seal`.
    Seal,
    /// The partition proofs only (filecoin-ffi's `SealCommitPhase2CircuitProofs`, made
    /// without a miner id, for aggregation). Checked partition by partition against the
    /// verifying key with the public inputs of the C1 output.
    CircuitProofs,
}

/// A parsed PoRep C2 request.
pub struct PoRepRequest {
    /// The registered seal proof (from the request; the C1 output must agree).
    pub registered: RegisteredSealProof,
    /// Sector number.
    pub sector_id: SectorId,
    /// Prover id derived from the miner id as filecoin-ffi does (None for circuit proofs,
    /// which filecoin-ffi makes without one).
    pub prover_id: Option<[u8; 32]>,
    /// Replica commitment.
    pub comm_r: [u8; 32],
    /// Data commitment.
    pub comm_d: [u8; 32],
    /// Interactive seed.
    pub seed: [u8; 32],
    /// Sealing ticket.
    pub ticket: [u8; 32],
    replica_id: Scalar,
    /// `VanillaPartitions<Tree>` for the sector's tree shape.
    vanilla: Box<dyn Any + Send + Sync>,
    partitions: usize,
    output: PoRepOutput,
}

fn typed_vanilla<Tree: 'static + MerkleTreeTrait>(
    c1: filecoin_proofs_api::seal::VanillaSealProof,
) -> ProofResult<(Box<dyn Any + Send + Sync>, usize)> {
    let v: VanillaPartitions<Tree> = c1
        .try_into()
        .map_err(|e: anyhow::Error| ProofError::malformed("C1 vanilla proofs", e))?;
    let n = v.len();
    if n == 0 || v.iter().any(Vec::is_empty) {
        return Err(ProofError::InvalidArgument(
            "C1 output contains no vanilla proofs".into(),
        ));
    }
    Ok((Box::new(v), n))
}

impl PoRepRequest {
    /// Parses the C1 output JSON once, for `registered` (abi number), sector and miner.
    pub fn parse(
        c1_json: &[u8],
        registered: u64,
        sector_number: u64,
        miner_id: u64,
    ) -> ProofResult<Self> {
        Self::parse_inner(c1_json, Some(registered), sector_number, Some(miner_id))
    }

    /// As [`PoRepRequest::parse`], taking the registered proof from the C1 output itself (what
    /// filecoin-ffi's `SealCommitPhase2` does).
    pub fn parse_any(c1_json: &[u8], sector_number: u64, miner_id: u64) -> ProofResult<Self> {
        Self::parse_inner(c1_json, None, sector_number, Some(miner_id))
    }

    /// The partition proofs of a C1 output, without a miner id (filecoin-ffi's
    /// `SealCommitPhase2CircuitProofs`; the registered proof comes from the C1 output).
    pub fn circuit_proofs(c1_json: &[u8], sector_number: u64) -> ProofResult<Self> {
        Self::parse_inner(c1_json, None, sector_number, None)
    }

    fn parse_inner(
        c1_json: &[u8],
        registered: Option<u64>,
        sector_number: u64,
        miner_id: Option<u64>,
    ) -> ProofResult<Self> {
        reject_panics("C1 output", || {
            Self::parse_checked(c1_json, registered, sector_number, miner_id)
        })
    }

    fn parse_checked(
        c1_json: &[u8],
        registered: Option<u64>,
        sector_number: u64,
        miner_id: Option<u64>,
    ) -> ProofResult<Self> {
        let requested = registered.map(registry::seal_proof).transpose()?;
        let c1: SealCommitPhase1Output = serde_json::from_slice(c1_json)
            .map_err(|e| ProofError::malformed("C1 output JSON", e))?;
        let registered = requested.unwrap_or(c1.registered_proof);
        if c1.registered_proof != registered {
            return Err(ProofError::RegisteredProofMismatch {
                requested: format!("{registered:?}"),
                found: format!("{:?}", c1.registered_proof),
            });
        }
        for (name, value) in [
            ("comm_d", c1.comm_d),
            ("comm_r", c1.comm_r),
            ("seed", c1.seed),
        ] {
            if value == [0; 32] {
                return Err(ProofError::InvalidArgument(format!("{name} is all zeros")));
            }
        }
        if let Some(miner) = miner_id {
            // The replica id binds the C1 output to its miner, sector number, ticket and
            // comm_d: a C1 of another miner or sector would prove for minutes (hours on a
            // 32 GiB CPU node) and then fail the self-check.
            let expected = stacked::generate_replica_id::<DefaultTreeHasher, _>(
                &prover_id(miner),
                sector_number,
                &c1.ticket,
                c1.comm_d,
                &registered.as_v1_config().porep_id,
            );
            if expected != c1.replica_id {
                return Err(ProofError::InvalidArgument(format!(
                    "the C1 output was not made for miner {miner} and sector {sector_number} \
                     (its replica id differs)"
                )));
            }
        }
        let size = u64::from(registered.sector_size());
        let (vanilla, partitions) = with_shape!(size, typed_vanilla, c1.vanilla_proofs)?;
        let expected = usize::from(registered.partitions());
        if partitions != expected {
            return Err(ProofError::InvalidArgument(format!(
                "C1 output has {partitions} partitions, {registered:?} has {expected}"
            )));
        }
        Ok(Self {
            registered,
            sector_id: SectorId::from(sector_number),
            prover_id: miner_id.map(prover_id),
            comm_r: c1.comm_r,
            comm_d: c1.comm_d,
            seed: c1.seed,
            ticket: c1.ticket,
            replica_id: c1.replica_id.into(),
            vanilla,
            partitions,
            output: if miner_id.is_some() {
                PoRepOutput::Seal
            } else {
                PoRepOutput::CircuitProofs
            },
        })
    }

    /// What this request delivers.
    pub fn output(&self) -> PoRepOutput {
        self.output
    }

    /// Number of partitions (10 at 32/64 GiB, 1 below).
    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// See [`super::ProofRequest::visit_partition`].
    pub fn visit_partition(
        &self,
        k: usize,
        visitor: Option<&mut impl PartitionVisitor>,
    ) -> ProofResult<Vec<Scalar>> {
        let size = u64::from(self.registered.sector_size());
        with_shape!(size, partition_circuit, self, k, visitor)
    }

    /// The bytes delivered for the partition proofs concatenated in order: themselves, or for
    /// a non-interactive seal proof their SnarkPack (V2) aggregate, made with
    /// filecoin-proofs-api's `aggregate_seal_commit_proofs` as its `seal_commit_phase2` does.
    pub fn finish(&self, partition_proofs: Vec<u8>) -> ProofResult<Vec<u8>> {
        if self.output == PoRepOutput::CircuitProofs || !is_non_interactive(self.registered) {
            return Ok(partition_proofs);
        }
        filecoin_proofs_api::seal::aggregate_seal_commit_proofs(
            self.registered,
            RegisteredAggregationProof::SnarkPackV2,
            &[self.comm_r],
            &[self.seed],
            &[SealCommitPhase2Output {
                proof: partition_proofs,
            }],
        )
        .map_err(ProofError::filecoin)
    }

    /// Checks what [`PoRepRequest::finish`] delivered: a seal proof with filecoin-proofs-api's
    /// `verify_seal`; circuit proofs with storage-proofs' `StackedCompound::verify` (the check
    /// `verify_seal` makes once it has derived the replica id, which the C1 output carries).
    pub fn verify(&self, proof: &[u8]) -> ProofResult<bool> {
        match (self.output, self.prover_id) {
            (PoRepOutput::Seal, Some(prover_id)) => filecoin_proofs_api::seal::verify_seal(
                self.registered,
                self.comm_r,
                self.comm_d,
                prover_id,
                self.sector_id,
                self.ticket,
                self.seed,
                proof,
            )
            .map_err(ProofError::filecoin),
            _ => {
                let size = u64::from(self.registered.sector_size());
                with_shape!(size, verify_circuit_proofs, self, proof)
            }
        }
    }
}

type Stacked<Tree> = StackedCompound<Tree, DefaultPieceHasher>;

/// The public inputs of a request's circuits.
type StackedInputs<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain,
    DefaultPieceDomain,
>;
/// The public parameters of a request's circuits.
type StackedParams<Tree> =
    compound_proof::PublicParams<'static, StackedDrg<'static, Tree, DefaultPieceHasher>>;

/// The public inputs and public parameters of a request's circuits.
fn public_setup<Tree: 'static + MerkleTreeTrait>(
    req: &PoRepRequest,
) -> ProofResult<(StackedInputs<Tree>, StackedParams<Tree>)> {
    let config = req.registered.as_v1_config();
    let comm_r = as_safe_commitment(&req.comm_r, "comm_r").map_err(ProofError::filecoin)?;
    let comm_d = DefaultPieceDomain::try_from_bytes(&req.comm_d).map_err(ProofError::filecoin)?;
    let public_inputs = stacked::PublicInputs {
        replica_id: <Tree::Hasher as Hasher>::Domain::from(req.replica_id),
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(req.seed),
    };
    let pp = <Stacked<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(
        &compound_proof::SetupParams {
            vanilla_params: setup_params(&config).map_err(ProofError::filecoin)?,
            partitions: Some(usize::from(config.partitions)),
            priority: false,
        },
    )
    .map_err(ProofError::filecoin)?;
    Ok((public_inputs, pp))
}

fn verify_circuit_proofs<Tree: 'static + MerkleTreeTrait>(
    req: &PoRepRequest,
    proof: &[u8],
) -> ProofResult<bool> {
    let expected = req.partitions * crate::groth16::PROOF_BYTES;
    if proof.len() != expected {
        return Ok(false);
    }
    let config = req.registered.as_v1_config();
    let (public_inputs, pp) = public_setup::<Tree>(req)?;
    let vk = <Stacked<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::verifying_key::<rand::rngs::OsRng>(
        None,
        &pp.vanilla_params,
    )
    .map_err(|e| ProofError::MissingParameters(format!("{e:#}")))?;
    let pvk = bellperson::groth16::prepare_verifying_key(&vk);
    let Ok(multi) = MultiProof::new_from_reader(Some(req.partitions), proof, &pvk) else {
        return Ok(false);
    };
    <Stacked<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::verify(
        &pp,
        &public_inputs,
        &multi,
        &ChallengeRequirements {
            minimum_challenges: config.minimum_challenges(),
        },
    )
    .map_err(ProofError::filecoin)
}

fn partition_circuit<Tree: 'static + MerkleTreeTrait>(
    req: &PoRepRequest,
    k: usize,
    visitor: Option<&mut impl PartitionVisitor>,
) -> ProofResult<Vec<Scalar>> {
    let vanilla = req
        .vanilla
        .downcast_ref::<VanillaPartitions<Tree>>()
        .ok_or_else(|| {
            ProofError::InvalidArgument("vanilla proofs of another sector shape".into())
        })?;
    let (public_inputs, pp) = public_setup::<Tree>(req)?;
    if let Some(visitor) = visitor {
        let challenges = vanilla.get(k).ok_or_else(|| {
            ProofError::InvalidArgument(format!("no vanilla proofs for partition {k}"))
        })?;
        visitor.visit_parted(StackedParts::new(&public_inputs, challenges)?)?;
    }
    <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::generate_public_inputs(&public_inputs, &pp.vanilla_params, Some(k))
    .map_err(ProofError::filecoin)
}

/// A PoRep partition's circuit as a preamble (replica id, commitments, the comm_r check) and one
/// part per challenge, so its witness is generated in parallel: storage-proofs'
/// `StackedCircuit::synthesize` run over a range of the partition's challenge proofs, or on a
/// witness-only system our native replay of it ([`porep_parts`]). The values are those
/// `StackedCompound::circuit` gives, with the same consistency checks.
struct StackedParts<'a, Tree: MerkleTreeTrait> {
    replica_id: <Tree::Hasher as Hasher>::Domain,
    comm_d: Option<DefaultPieceDomain>,
    comm_r: Option<<Tree::Hasher as Hasher>::Domain>,
    comm_r_last: <Tree::Hasher as Hasher>::Domain,
    comm_c: <Tree::Hasher as Hasher>::Domain,
    challenges: &'a [stacked::Proof<Tree, DefaultPieceHasher>],
}

impl<'a, Tree: 'static + MerkleTreeTrait> StackedParts<'a, Tree> {
    fn new(
        public_inputs: &stacked::PublicInputs<<Tree::Hasher as Hasher>::Domain, DefaultPieceDomain>,
        challenges: &'a [stacked::Proof<Tree, DefaultPieceHasher>],
    ) -> ProofResult<Self> {
        let first = challenges.first().ok_or_else(|| {
            ProofError::InvalidArgument("a partition without challenge proofs".into())
        })?;
        let (comm_r_last, comm_c) = (first.comm_r_last(), first.comm_c());
        if challenges
            .iter()
            .any(|p| p.comm_r_last() != comm_r_last || p.comm_c() != comm_c)
        {
            return Err(ProofError::InvalidArgument(
                "challenge proofs disagree on comm_r_last or comm_c".into(),
            ));
        }
        Ok(Self {
            replica_id: public_inputs.replica_id,
            comm_d: public_inputs.tau.as_ref().map(|t| t.comm_d),
            comm_r: public_inputs.tau.as_ref().map(|t| t.comm_r),
            comm_r_last,
            comm_c,
            challenges,
        })
    }
}

impl<Tree: 'static + MerkleTreeTrait> PartedCircuit for StackedParts<'_, Tree> {
    type Preamble = ();
    fn parts(&self) -> usize {
        self.challenges.len()
    }

    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: Range<usize>,
    ) -> Result<(), SynthesisError> {
        let challenges = self
            .challenges
            .get(parts)
            .ok_or(SynthesisError::AssignmentMissing)?;
        if cs.is_witness_generator() {
            let commitments = porep_parts::Commitments {
                replica_id: self.replica_id.into(),
                comm_d: self.comm_d.map(Into::into),
                comm_r: self.comm_r.map(Into::into),
                comm_r_last: self.comm_r_last.into(),
                comm_c: self.comm_c.into(),
            };
            return porep_parts::synthesize_witness(cs, &commitments, challenges);
        }
        stacked::StackedCircuit::<Tree, DefaultPieceHasher>::synthesize(
            cs,
            Some(self.replica_id),
            self.comm_d,
            self.comm_r,
            Some(self.comm_r_last),
            Some(self.comm_c),
            challenges.iter().cloned().map(Into::into).collect(),
        )
    }
}
