//! SnapDeals (empty sector update) from per-partition vanilla proofs (bincode
//! `PartitionProof`) and the three commitments, built as filecoin-proofs'
//! `generate_empty_sector_update_proof_with_vanilla` builds them.

use std::any::Any;

use blstrs::Scalar;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::types::SectorUpdateConfig;
use filecoin_proofs::with_shape;
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCompound, PartitionProof, PublicInputs, SetupParams,
};

use super::error::{reject_panics, ProofError, ProofResult};
use super::registry::{self, bytes32};
use super::request::PartitionVisitor;
use super::snap_parts::UpdateParts;

/// A parsed SnapDeals update proof request.
pub struct SnapDealsRequest {
    /// The registered update proof.
    pub registered: RegisteredUpdateProof,
    /// comm_r of the sector before the update.
    pub comm_r_old: [u8; 32],
    /// comm_r after the update.
    pub comm_r_new: [u8; 32],
    /// comm_d of the new data.
    pub comm_d_new: [u8; 32],
    /// `Vec<PartitionProof<Tree>>` for the sector shape.
    vanilla: Box<dyn Any + Send + Sync>,
    partitions: usize,
}

fn decode<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proofs: &[Vec<u8>],
) -> ProofResult<Box<dyn Any + Send + Sync>> {
    let decoded = proofs
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            bincode::deserialize::<PartitionProof<Tree>>(bytes)
                .map_err(|e| ProofError::malformed(format!("update vanilla proof {i}"), e))
        })
        .collect::<ProofResult<Vec<_>>>()?;
    Ok(Box::new(decoded))
}

impl SnapDealsRequest {
    /// Parses a request: `registered` abi number 0-4, one vanilla proof per partition, and
    /// comm_r_old, comm_r_new, comm_d_new (32 bytes each).
    pub fn parse(
        registered: u64,
        vanilla_proofs: &[Vec<u8>],
        comm_r_old: &[u8],
        comm_r_new: &[u8],
        comm_d_new: &[u8],
    ) -> ProofResult<Self> {
        reject_panics("update vanilla proofs", || {
            Self::parse_checked(
                registered,
                vanilla_proofs,
                comm_r_old,
                comm_r_new,
                comm_d_new,
            )
        })
    }

    fn parse_checked(
        registered: u64,
        vanilla_proofs: &[Vec<u8>],
        comm_r_old: &[u8],
        comm_r_new: &[u8],
        comm_d_new: &[u8],
    ) -> ProofResult<Self> {
        let registered = registry::update_proof(registered)?;
        let comm_r_old = bytes32("comm_r_old", comm_r_old)?;
        let comm_r_new = bytes32("comm_r_new", comm_r_new)?;
        let comm_d_new = bytes32("comm_d_new", comm_d_new)?;
        let config = SectorUpdateConfig::from_porep_config(&registered.as_v1_config());
        let partitions = usize::from(config.update_partitions);
        if vanilla_proofs.len() != partitions {
            return Err(ProofError::InvalidArgument(format!(
                "{} vanilla proofs given, {registered:?} has {partitions} partition(s)",
                vanilla_proofs.len()
            )));
        }
        let size = u64::from(registered.sector_size());
        let vanilla = with_shape!(size, decode, vanilla_proofs)?;
        Ok(Self {
            registered,
            comm_r_old,
            comm_r_new,
            comm_d_new,
            vanilla,
            partitions,
        })
    }

    /// Number of partitions (16 from 512 MiB, 1 at 2 KiB).
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
        with_shape!(size, update_circuit, self, k, visitor)
    }

    /// Verifies with filecoin-proofs-api's `verify_empty_sector_update_proof`.
    pub fn verify(&self, proof: &[u8]) -> ProofResult<bool> {
        filecoin_proofs_api::update::verify_empty_sector_update_proof(
            self.registered,
            proof,
            self.comm_r_old,
            self.comm_r_new,
            self.comm_d_new,
        )
        .map_err(ProofError::filecoin)
    }
}

fn update_circuit<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    req: &SnapDealsRequest,
    k: usize,
    visitor: Option<&mut impl PartitionVisitor>,
) -> ProofResult<Vec<Scalar>> {
    let vanilla = req
        .vanilla
        .downcast_ref::<Vec<PartitionProof<Tree>>>()
        .ok_or_else(|| {
            ProofError::InvalidArgument("vanilla proofs of another sector shape".into())
        })?;
    let config = SectorUpdateConfig::from_porep_config(&req.registered.as_v1_config());
    let domain = |bytes: &[u8; 32], what: &str| {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(bytes)
            .map_err(|e| ProofError::InvalidArgument(format!("{what}: {e:#}")))
    };
    let public_inputs = PublicInputs {
        k: req.partitions,
        comm_r_old: domain(&req.comm_r_old, "comm_r_old")?,
        comm_d_new: DefaultPieceDomain::try_from_bytes(&req.comm_d_new)
            .map_err(|e| ProofError::InvalidArgument(format!("comm_d_new: {e:#}")))?,
        comm_r_new: domain(&req.comm_r_new, "comm_r_new")?,
        h: config.h,
    };
    type Compound<T> = EmptySectorUpdateCompound<T>;
    let pp = <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::setup(
        &compound_proof::SetupParams {
            vanilla_params: SetupParams {
                sector_bytes: u64::from(config.sector_size),
            },
            partitions: Some(req.partitions),
            priority: false,
        },
    )
    .map_err(ProofError::filecoin)?;
    if let Some(visitor) = visitor {
        let circuit = <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::circuit(
            &public_inputs,
            (),
            &vanilla[k],
            &pp.vanilla_params,
            Some(k),
        )
        .map_err(ProofError::filecoin)?;
        visitor.visit_parted(UpdateParts::new(circuit)?)?;
    }
    <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::generate_public_inputs(
        &public_inputs,
        &pp.vanilla_params,
        Some(k),
    )
    .map_err(ProofError::filecoin)
}
