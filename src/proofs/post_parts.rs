//! A PoSt partition's circuit as one part per sector, synthesized by our own code on the
//! witness path so its Poseidon hashes are computed natively ([`super::poseidon`]).
//!
//! A PoSt sector is storage-proofs-post's `Sector` circuit: comm_r = H(comm_c || comm_r_last),
//! then one Merkle inclusion proof into comm_r_last per challenge. Its cost is almost all
//! neptune's Poseidon, whose linear combinations a witness-only system never reads. This module
//! synthesizes the same allocations in the same order from the public building blocks
//! (storage-proofs-core's insertion and equality gadgets, bellperson's packing, our Poseidon).
//! The parameters, the plain prover and [`PartedCircuit::synthesize_whole`] still run
//! storage-proofs-post's own circuit; the recorder runs ours on a system that builds every
//! constraint (neptune's Poseidon there), and the tests record both and compare them
//! constraint by constraint.

use std::marker::PhantomData;
use std::ops::Range;

use bellperson::gadgets::num::AllocatedNum;
use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::Hasher;
use rayon::prelude::*;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::merkle::{MerkleProofTrait, MerkleTreeTrait};
use storage_proofs_core::util::NODE_SIZE;
use storage_proofs_post::fallback::{self, PublicSector, Sector};

use super::error::{ProofError, ProofResult};
use super::por::{hash2, inclusion_proof, tree_rows, PathRow};
use crate::groth16::PartedCircuit;

/// One sector of a PoSt partition: what storage-proofs-post's `Sector` holds, with each
/// challenge's path as plain rows (base tree, then sub-tree and top tree).
#[derive(Clone)]
struct PostSector {
    comm_r: Option<Scalar>,
    comm_c: Option<Scalar>,
    comm_r_last: Option<Scalar>,
    id: Option<Scalar>,
    leafs: Vec<Option<Scalar>>,
    paths: Vec<Vec<PathRow>>,
}

impl PostSector {
    /// storage-proofs-post's circuit for this sector.
    fn upstream<Tree: MerkleTreeTrait>(&self) -> Sector<Tree> {
        Sector {
            comm_r: self.comm_r,
            comm_c: self.comm_c,
            comm_r_last: self.comm_r_last,
            leafs: self.leafs.clone(),
            paths: self.paths.iter().cloned().map(Into::into).collect(),
            id: self.id,
        }
    }
}

/// A PoSt partition's circuit as one part per sector (no preamble), its sectors checked so
/// that their synthesis cannot index out of bounds.
pub(crate) struct SectorParts<Tree: MerkleTreeTrait> {
    sectors: Vec<PostSector>,
    _tree: PhantomData<Tree>,
}

/// The number of siblings in each row of a path of `Tree` over `leaves` leaves.
fn rows_for<Tree: MerkleTreeTrait>(leaves: usize) -> ProofResult<Vec<usize>> {
    leaves
        .is_power_of_two()
        .then(|| tree_rows::<Tree>(leaves.trailing_zeros() as usize))
        .flatten()
        .ok_or_else(|| ProofError::InvalidArgument(format!("no PoSt tree has {leaves} leaves")))
}

/// Whether `path` has `rows`' shape and each place fits its row.
fn path_fits(path: &[PathRow], rows: &[usize]) -> bool {
    path.len() == rows.len()
        && path
            .iter()
            .zip(rows)
            .all(|((siblings, place), n)| siblings.len() == *n && place.is_none_or(|p| p <= *n))
}

impl<Tree: 'static + MerkleTreeTrait> SectorParts<Tree> {
    /// The blank circuit (no values) for `params`, as storage-proofs-post builds it.
    pub(crate) fn blank(params: &fallback::PublicParams) -> ProofResult<Self> {
        let leaves = usize::try_from(params.sector_size).unwrap_or(usize::MAX) / NODE_SIZE;
        let path: Vec<PathRow> = rows_for::<Tree>(leaves)?
            .into_iter()
            .map(|n| (vec![None; n], None))
            .collect();
        let sector = PostSector {
            comm_r: None,
            comm_c: None,
            comm_r_last: None,
            id: None,
            leafs: vec![None; params.challenge_count],
            paths: vec![path; params.challenge_count],
        };
        Self::checked(vec![sector; params.sector_count], leaves)
    }

    /// Partition 0 of `sectors` with `proof`'s vanilla proofs (`sector_count` of them), as
    /// storage-proofs-post's `FallbackPoStCompound::circuit` builds it: a partition short of
    /// public sectors repeats its last one.
    pub(crate) fn new(
        sectors: &[PublicSector<<Tree::Hasher as Hasher>::Domain>],
        proof: &fallback::Proof<Tree::Proof>,
        params: &fallback::PublicParams,
    ) -> ProofResult<Self> {
        let (Some(last), true) = (sectors.last(), proof.sectors.len() == params.sector_count)
        else {
            return Err(ProofError::InvalidArgument(format!(
                "{} vanilla proofs for {} public sectors; the partition has {}",
                proof.sectors.len(),
                sectors.len(),
                params.sector_count
            )));
        };
        let sectors = proof
            .sectors
            .iter()
            .enumerate()
            .map(|(i, vanilla)| {
                let public = sectors.get(i).unwrap_or(last);
                PostSector {
                    comm_r: Some(public.comm_r.into()),
                    comm_c: Some(vanilla.comm_c.into()),
                    comm_r_last: Some(vanilla.comm_r_last.into()),
                    id: Some(public.id.into()),
                    leafs: vanilla
                        .leafs()
                        .into_iter()
                        .map(|l| Some(l.into()))
                        .collect(),
                    paths: vanilla
                        .inclusion_proofs
                        .iter()
                        .map(MerkleProofTrait::as_options)
                        .collect(),
                }
            })
            .collect();
        let leaves = usize::try_from(params.sector_size).unwrap_or(usize::MAX) / NODE_SIZE;
        Self::checked(sectors, leaves)
    }

    /// `sectors` once every challenge's path has the tree's shape.
    fn checked(sectors: Vec<PostSector>, leaves: usize) -> ProofResult<Self> {
        let rows = rows_for::<Tree>(leaves)?;
        for (i, sector) in sectors.iter().enumerate() {
            if sector.paths.len() != sector.leafs.len()
                || !sector.paths.iter().all(|path| path_fits(path, &rows))
            {
                return Err(ProofError::InvalidArgument(format!(
                    "PoSt sector {i}: its inclusion proofs have the wrong shape for the sector size"
                )));
            }
        }
        Ok(Self {
            sectors,
            _tree: PhantomData,
        })
    }
}

/// One sector, as storage-proofs-post's `Sector::synthesize`.
fn synthesize_sector<Tree: MerkleTreeTrait, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    sector: &PostSector,
) -> Result<(), SynthesisError> {
    let alloc = |cs: &mut CS, name: &'static str, value: Option<Scalar>| {
        AllocatedNum::alloc(cs.namespace(|| name), || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })
    };
    let comm_r_last = alloc(cs, "comm_r_last", sector.comm_r_last)?;
    let comm_c = alloc(cs, "comm_c", sector.comm_c)?;
    let comm_r = alloc(cs, "comm_r", sector.comm_r)?;
    comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
    let hashed = hash2::<Tree::Hasher, _>(
        cs.namespace(|| "H_comm_c_comm_r_last"),
        &comm_c,
        &comm_r_last,
    )?;
    constraint::equal(
        cs,
        || "enforce_comm_c_comm_r_last_hash_comm_r",
        &comm_r,
        &hashed,
    );
    for (i, (leaf, path)) in sector.leafs.iter().zip(&sector.paths).enumerate() {
        let mut cs = cs.namespace(|| format!("challenge_inclusion_{i}"));
        let leaf = AllocatedNum::alloc(cs.namespace(|| "value"), || {
            leaf.ok_or(SynthesisError::AssignmentMissing)
        })?;
        inclusion_proof::<Tree, _>(&mut cs, leaf, path, &comm_r_last)?;
    }
    Ok(())
}

/// The plain path synthesizes a PoSt partition in this many waves of parallel chunks, so the
/// chunks held at once are about this fraction of the circuit (1 GiB at 32 GiB WindowPoSt).
const PLAIN_WAVES: usize = 16;

impl<Tree: 'static + MerkleTreeTrait> PartedCircuit for SectorParts<Tree> {
    type Preamble = ();
    fn parts(&self) -> usize {
        self.sectors.len()
    }

    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: Range<usize>,
    ) -> Result<(), SynthesisError> {
        let sectors = self
            .sectors
            .get(parts)
            .ok_or(SynthesisError::AssignmentMissing)?;
        sectors
            .iter()
            .try_for_each(|sector| synthesize_sector::<Tree, _>(cs, sector))
    }

    /// storage-proofs-post's own circuit, in parallel on an extensible system: in
    /// [`PLAIN_WAVES`] waves, each wave's sectors in parallel chunks, each chunk into a system
    /// of its own, appended in order before the next wave starts. (storage-proofs-post holds
    /// every chunk's system until all are appended: at 32 GiB WindowPoSt about 4 GiB of values
    /// and 12 GiB of a, b and c held a second time.)
    fn synthesize_whole<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), SynthesisError> {
        let sectors = &self.sectors;
        let whole = |cs: &mut CS, sectors: &[PostSector]| {
            sectors
                .iter()
                .try_for_each(|sector| (&sector.upstream::<Tree>()).synthesize(cs))
        };
        if !CS::is_extensible() {
            return whole(cs, sectors);
        }
        for wave in sectors.chunks(sectors.len().div_ceil(PLAIN_WAVES).max(1)) {
            let chunk = wave.len().div_ceil(rayon::current_num_threads()).max(1);
            let systems = wave
                .par_chunks(chunk)
                .map(|chunk| {
                    let mut system = CS::new();
                    system.alloc_input(|| "ONE", || Ok(Scalar::from(1)))?;
                    whole(&mut system, chunk)?;
                    Ok(system)
                })
                .collect::<Result<Vec<_>, SynthesisError>>()?;
            systems.iter().for_each(|system| cs.extend(system));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use filecoin_hashers::poseidon::PoseidonHasher;
    use filecoin_proofs::{SectorShape2KiB, SectorShape8MiB};
    use storage_proofs_core::api_version::ApiVersion;
    use storage_proofs_core::compound_proof::CompoundProof;
    use storage_proofs_core::merkle::{DiskTree, MerkleTreeTrait};
    use storage_proofs_post::fallback::{self, FallbackPoSt, FallbackPoStCompound};
    use typenum::{U2, U8};

    use super::SectorParts;
    use crate::proofs::test_support::{assert_records_alike, OursWhole};

    /// Records storage-proofs-post's blank circuit and ours for these parameters and asserts
    /// they are the same R1CS.
    fn records_as_upstream<Tree: 'static + MerkleTreeTrait>(
        sector_size: u64,
        challenge_count: usize,
        sector_count: usize,
    ) {
        let params = fallback::PublicParams {
            sector_size,
            challenge_count,
            sector_count,
            api_version: ApiVersion::V1_2_0,
        };
        let upstream =
            <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::blank_circuit(
                &params,
            );
        let ours = SectorParts::<Tree>::blank(&params).expect("a valid blank circuit");
        assert_records_alike(
            upstream,
            OursWhole(ours),
            &format!("{sector_size} bytes, {challenge_count} challenges"),
        );
    }

    #[test]
    fn our_sector_synthesis_records_as_storage_proofs_post() {
        // WinningPoSt's shape (one challenge a sector) and WindowPoSt's (ten).
        records_as_upstream::<SectorShape2KiB>(2048, 1, 3);
        records_as_upstream::<SectorShape2KiB>(2048, 10, 2);
        // 8 MiB trees have a sub-tree row; 64 GiB trees a top-tree row too (here the same
        // shape with 1024 leaves).
        records_as_upstream::<SectorShape8MiB>(8 << 20, 2, 2);
        records_as_upstream::<DiskTree<PoseidonHasher, U8, U8, U2>>(1024 * 32, 2, 2);
    }
}
