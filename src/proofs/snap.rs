//! SnapDeals (empty sector update) from per-partition vanilla proofs (bincode
//! `PartitionProof`) and the three commitments, built as filecoin-proofs'
//! `generate_empty_sector_update_proof_with_vanilla` builds them.

use std::any::Any;
use std::ops::Range;

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::DefaultPieceDomain;
use filecoin_proofs::types::SectorUpdateConfig;
use filecoin_proofs::with_shape;
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::circuit::{ChallengeProof, PrivateInputs};
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PartitionProof,
    PublicInputs, SetupParams,
};

use super::error::{reject_panics, ProofError, ProofResult};
use super::registry::{self, bytes32};
use super::request::PartitionVisitor;
use crate::groth16::{PartFilter, PartedCircuit};

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
        visitor.visit_parted(UpdateParts { circuit })?;
    }
    <Compound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::generate_public_inputs(
        &public_inputs,
        &pp.vanilla_params,
        Some(k),
    )
    .map_err(ProofError::filecoin)
}

/// A SnapDeals partition's circuit as a preamble (its commitments, apex leaves and every
/// challenge's bits) and one part per challenge (rho, the new label, the three Merkle paths), so
/// its witness is generated in parallel.
///
/// storage-proofs-update synthesizes the challenges in one loop with no entry point per
/// challenge, so a range runs the whole circuit through a [`PartFilter`]: the other challenges'
/// Merkle proofs are left out (no hashing), their allocations dropped, and the synthesis stops
/// after the range. The circuit and its code are storage-proofs-update's own; a range that
/// goes wrong fails the shape check or the reference verifier.
struct UpdateParts<Tree: MerkleTreeTrait<Hasher = TreeRHasher>> {
    circuit: EmptySectorUpdateCircuit<Tree>,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> UpdateParts<Tree> {
    /// The circuit with the Merkle proofs of the challenges outside `keep` left out, but for
    /// the partition path every challenge repeats (the preamble reads and checks it).
    fn keeping_challenges(&self, keep: &Range<usize>) -> EmptySectorUpdateCircuit<Tree> {
        let EmptySectorUpdateCircuit {
            pub_params,
            pub_inputs,
            priv_inputs,
        } = &self.circuit;
        let below_partition = pub_params.challenge_bit_len - pub_params.partition_bit_len;
        let blank = |path: &[Vec<Option<Scalar>>]| -> Vec<Vec<Option<Scalar>>> {
            path.iter().map(|row| vec![None; row.len()]).collect()
        };
        let challenge_proofs = priv_inputs
            .challenge_proofs
            .iter()
            .enumerate()
            .map(|(i, proof)| {
                if keep.contains(&i) {
                    return proof.clone();
                }
                let mut path_d_new = blank(&proof.path_d_new);
                for (row, kept) in path_d_new
                    .iter_mut()
                    .zip(&proof.path_d_new)
                    .skip(below_partition)
                {
                    row.clone_from(kept);
                }
                ChallengeProof {
                    leaf_r_old: None,
                    path_r_old: blank(&proof.path_r_old),
                    leaf_d_new: None,
                    path_d_new,
                    leaf_r_new: None,
                    path_r_new: blank(&proof.path_r_new),
                    _tree_r: Default::default(),
                }
            })
            .collect();
        EmptySectorUpdateCircuit {
            pub_params: pub_params.clone(),
            pub_inputs: pub_inputs.clone(),
            priv_inputs: PrivateInputs {
                comm_c: priv_inputs.comm_c,
                root_r_old: priv_inputs.root_r_old,
                root_r_new: priv_inputs.root_r_new,
                apex_leafs: priv_inputs.apex_leafs.clone(),
                challenge_proofs,
            },
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> PartedCircuit for UpdateParts<Tree> {
    fn parts(&self) -> usize {
        self.circuit.priv_inputs.challenge_proofs.len()
    }

    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: Range<usize>,
    ) -> Result<(), SynthesisError> {
        let circuit = self.keeping_challenges(&parts);
        let mut filter = PartFilter::new(cs, parts, challenge_of_namespace);
        let synthesized = circuit.synthesize(&mut filter);
        filter.finish(synthesized)
    }

    /// Running past a challenge without its Merkle proofs still runs its gadgets' code (the
    /// SHA-256 and Poseidon gadgets build their structures without values): 0.55 of a
    /// challenge's time, measured on 2 KiB from the ranges' own timings (docs/pce.md); a
    /// 32 GiB challenge's paths measure 0.46-0.49 (`synth/skip-snap-32g-paths`).
    fn skipped_part_cost(&self) -> f64 {
        0.55
    }

    fn synthesize_whole<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), SynthesisError> {
        self.circuit.synthesize(cs)
    }
}

/// The challenge a top-level namespace of the update circuit's loop names: every one of them
/// carries `c_index=N` ("rho (c_index=3)", "path_r_old sibling (c_index=3, tree_row=0, ...)");
/// the preamble's never do.
fn challenge_of_namespace(name: &str) -> Option<usize> {
    const KEY: &str = "c_index=";
    let rest = &name[name.find(KEY)? + KEY.len()..];
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::challenge_of_namespace;

    #[test]
    fn a_loop_namespace_names_its_challenge() {
        assert_eq!(challenge_of_namespace("rho (c_index=3)"), Some(3));
        assert_eq!(
            challenge_of_namespace("path_r_old sibling (c_index=12, tree_row=0, sibling_index=1)"),
            Some(12)
        );
        assert_eq!(challenge_of_namespace("gen_challenge_bits"), None);
        assert_eq!(challenge_of_namespace("c_index="), None);
    }
}
