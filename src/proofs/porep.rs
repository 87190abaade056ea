//! PoRep C2: the C1 output (`SealCommitPhase1Output` JSON) -> one StackedDrg circuit per partition,
//! built exactly as filecoin-proofs' `seal_commit_phase2_circuit_proofs` builds them.

use std::any::Any;

use blstrs::Scalar;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::{DefaultPieceDomain, DefaultPieceHasher};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::{as_safe_commitment, with_shape};
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::{RegisteredSealProof, SectorId};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg};

use super::error::{ProofError, ProofResult};
use super::registry::{self, prover_id};
use super::request::PartitionVisitor;

type VanillaPartitions<Tree> = Vec<Vec<stacked::Proof<Tree, DefaultPieceHasher>>>;

/// A parsed PoRep C2 request.
pub struct PoRepRequest {
    /// The registered seal proof (from the request; the C1 output must agree).
    pub registered: RegisteredSealProof,
    /// Sector number.
    pub sector_id: SectorId,
    /// Prover id derived from the miner id as filecoin-ffi does.
    pub prover_id: [u8; 32],
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
        Self::parse_inner(c1_json, Some(registered), sector_number, miner_id)
    }

    /// As [`PoRepRequest::parse`], taking the registered proof from the C1 output itself (what
    /// filecoin-ffi's `SealCommitPhase2` does).
    pub fn parse_any(c1_json: &[u8], sector_number: u64, miner_id: u64) -> ProofResult<Self> {
        Self::parse_inner(c1_json, None, sector_number, miner_id)
    }

    fn parse_inner(
        c1_json: &[u8],
        registered: Option<u64>,
        sector_number: u64,
        miner_id: u64,
    ) -> ProofResult<Self> {
        let requested = registered.map(registry::seal_proof).transpose()?;
        let c1: SealCommitPhase1Output = serde_json::from_slice(c1_json)
            .map_err(|e| ProofError::malformed("C1 output JSON", e))?;
        let registered = requested.unwrap_or(c1.registered_proof);
        if matches!(
            registered,
            RegisteredSealProof::StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
                | RegisteredSealProof::StackedDrg8MiBV1_2_Feat_NonInteractivePoRep
                | RegisteredSealProof::StackedDrg512MiBV1_2_Feat_NonInteractivePoRep
                | RegisteredSealProof::StackedDrg32GiBV1_2_Feat_NonInteractivePoRep
                | RegisteredSealProof::StackedDrg64GiBV1_2_Feat_NonInteractivePoRep
        ) {
            return Err(ProofError::NotSupported(format!(
                "non-interactive PoRep ({registered:?}) is not supported yet"
            )));
        }
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
            prover_id: prover_id(miner_id),
            comm_r: c1.comm_r,
            comm_d: c1.comm_d,
            seed: c1.seed,
            ticket: c1.ticket,
            replica_id: c1.replica_id.into(),
            vanilla,
            partitions,
        })
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

    /// Verifies with filecoin-proofs-api's `verify_seal`.
    pub fn verify(&self, proof: &[u8]) -> ProofResult<bool> {
        filecoin_proofs_api::seal::verify_seal(
            self.registered,
            self.comm_r,
            self.comm_d,
            self.prover_id,
            self.sector_id,
            self.ticket,
            self.seed,
            proof,
        )
        .map_err(ProofError::filecoin)
    }
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
    let config = req.registered.as_v1_config();
    let comm_r = as_safe_commitment(&req.comm_r, "comm_r").map_err(ProofError::filecoin)?;
    let comm_d = DefaultPieceDomain::try_from_bytes(&req.comm_d).map_err(ProofError::filecoin)?;
    let replica_id = <Tree::Hasher as Hasher>::Domain::from(req.replica_id);
    let public_inputs = stacked::PublicInputs {
        replica_id,
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(req.seed),
    };
    let pp = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::setup(&compound_proof::SetupParams {
        vanilla_params: setup_params(&config).map_err(ProofError::filecoin)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    })
    .map_err(ProofError::filecoin)?;
    if let Some(visitor) = visitor {
        let circuit =
            <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
                StackedDrg<'_, Tree, DefaultPieceHasher>,
                _,
            >>::circuit(&public_inputs, (), &vanilla[k], &pp.vanilla_params, Some(k))
            .map_err(ProofError::filecoin)?;
        visitor.visit(circuit)?;
    }
    <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::generate_public_inputs(&public_inputs, &pp.vanilla_params, Some(k))
    .map_err(ProofError::filecoin)
}
