//! A SnapDeals partition's circuit synthesized by challenge: one preamble (the commitments, the
//! apex tree and every challenge's bits), then each challenge (rho, the new label and its three
//! Merkle paths) on its own, so a 32 GiB partition's 86 challenges spread over every thread.
//!
//! storage-proofs-update synthesizes the challenges in one loop and keeps its gadgets to
//! itself, so this is our own synthesis of the same R1CS, from the public building blocks
//! (storage-proofs-core's selection and insertion, bellperson's packing) and our own Poseidon
//! and Merkle paths ([`super::poseidon`], [`super::por`]: on a witness-only system their
//! Poseidon witnesses are computed natively, not through neptune's circuit). The parameters and the recorded R1CS still come from storage-proofs-update's own
//! circuit: a divergence in the number of variables or constraints fails the PCE's shape check,
//! one in their order or values the reference verifier, and the tests record both circuits and
//! compare them constraint by constraint.

use std::ops::Range;

use bellperson::gadgets::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};
use bellperson::gadgets::multipack::pack_bits;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar;
use ff::{Field, PrimeField, PrimeFieldBits};
use filecoin_hashers::{HashFunction, Hasher};
use rayon::prelude::*;
use storage_proofs_core::gadgets::insertion::select;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_update::circuit::ChallengeProof;
use storage_proofs_update::constants::{
    apex_leaf_count, challenge_count, hs, TreeD, TreeDHasher, TreeRHasher,
    POSEIDON_CONSTANTS_GEN_RANDOMNESS,
};
use storage_proofs_update::EmptySectorUpdateCircuit;

use super::error::{ProofError, ProofResult};
use super::por::{hash2, por_no_challenge_input, tree_rows};
use super::poseidon::poseidon_hash;
use crate::groth16::PartedCircuit;

/// A SnapDeals partition's circuit, checked so that its synthesis cannot index out of bounds.
pub struct UpdateParts<Tree: MerkleTreeTrait<Hasher = TreeRHasher>> {
    circuit: EmptySectorUpdateCircuit<Tree>,
}

/// What the challenges read from the preamble.
pub struct UpdatePreamble {
    /// The partition index k, little-endian.
    partition_bits: Vec<AllocatedBit>,
    /// One bit per allowed h, exactly one of them set.
    h_select_bits: Vec<AllocatedBit>,
    /// H(comm_d_new || comm_r_old).
    phi: AllocatedNum<Scalar>,
    root_r_old: AllocatedNum<Scalar>,
    root_r_new: AllocatedNum<Scalar>,
    apex_leaves: Vec<AllocatedNum<Scalar>>,
    /// Each challenge's bits below the partition's, little-endian.
    challenge_bits: Vec<Vec<AllocatedBit>>,
}

/// Whether `path`'s rows hold `rows` siblings each.
fn path_has_rows(path: &[Vec<Option<Scalar>>], rows: &[usize]) -> bool {
    path.len() == rows.len() && path.iter().zip(rows).all(|(row, n)| row.len() == *n)
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> UpdateParts<Tree> {
    /// Checks the shapes the synthesis reads: the partition's apex leaves and challenge count,
    /// every challenge's three paths, and the partition path they all share.
    pub fn new(circuit: EmptySectorUpdateCircuit<Tree>) -> ProofResult<Self> {
        let pp = &circuit.pub_params;
        let private = &circuit.priv_inputs;
        let invalid = |what: &str| Err(ProofError::InvalidArgument(format!("SnapDeals: {what}")));
        let below_partition = pp.challenge_bit_len.checked_sub(pp.partition_bit_len);
        let to_apex = below_partition.and_then(|b| b.checked_sub(pp.apex_leaf_bit_len));
        let (Some(below_partition), Some(_), Some(rows_r)) = (
            below_partition,
            to_apex,
            tree_rows::<Tree>(pp.challenge_bit_len),
        ) else {
            return invalid("public parameters of an unknown shape");
        };
        if private.apex_leafs.len() != apex_leaf_count(pp.sector_nodes)
            || private.apex_leafs.len() != 1 << pp.apex_leaf_bit_len
        {
            return invalid("wrong number of apex leaves");
        }
        if private.challenge_proofs.len() != challenge_count(pp.sector_nodes)
            || private.challenge_proofs.len() != pp.challenge_count
        {
            return invalid("wrong number of challenge proofs");
        }
        let rows_d = vec![1; pp.challenge_bit_len];
        let first = &private.challenge_proofs[0].path_d_new;
        for proof in &private.challenge_proofs {
            if !path_has_rows(&proof.path_d_new, &rows_d)
                || !path_has_rows(&proof.path_r_old, &rows_r)
                || !path_has_rows(&proof.path_r_new, &rows_r)
            {
                return invalid("a challenge's Merkle path has the wrong shape");
            }
            if proof.path_d_new[below_partition..] != first[below_partition..] {
                return invalid("the challenges' partition paths differ");
            }
        }
        Ok(Self { circuit })
    }

    /// The preamble, in storage-proofs-update's order: the packed k and h_select and its bits,
    /// the three commitments (public), phi, comm_c and the two roots, the apex leaves and the
    /// partition path, the comm_r checks, the apex tree up to comm_d_new, then the challenges'
    /// bits. With `spread_apex` (only for a system that keeps values alone) each row of the
    /// apex tree is hashed over the threads.
    fn preamble<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        spread_apex: bool,
    ) -> Result<UpdatePreamble, SynthesisError> {
        let pp = &self.circuit.pub_params;
        let public = &self.circuit.pub_inputs;
        let private = &self.circuit.priv_inputs;
        let h_count = hs(pp.sector_nodes).len();

        let packed = alloc(cs, "k_and_h_select", public.k_and_h_select)?;
        packed.inputize(cs.namespace(|| "k_and_h_select input"))?;
        let bit_values: Vec<Option<bool>> = match packed.get_value() {
            Some(value) => value
                .to_le_bits()
                .into_iter()
                .take(pp.partition_bit_len + h_count)
                .map(Some)
                .collect(),
            None => vec![None; pp.partition_bit_len + h_count],
        };
        let mut bits = bit_values
            .into_iter()
            .enumerate()
            .map(|(i, bit)| AllocatedBit::alloc(cs.namespace(|| format!("k_and_h bit {i}")), bit))
            .collect::<Result<Vec<_>, _>>()?;
        enforce_bits_make(cs, "k_and_h_select from its bits", &bits, &packed);
        let h_select_bits = bits.split_off(pp.partition_bit_len);
        let partition_bits = bits;
        // As storage-proofs-update asserts: k is a partition, h_select has one bit set, and
        // no bit is set above them.
        if let Some(value) = packed.get_value() {
            let value_bits: Vec<bool> = value.to_le_bits().into_iter().collect();
            let (k_bits, rest) = value_bits.split_at(pp.partition_bit_len);
            let k = k_bits
                .iter()
                .rev()
                .fold(0usize, |k, bit| k << 1 | usize::from(*bit));
            let (select, above) = rest.split_at(h_count);
            if k >= pp.partition_count
                || select.iter().filter(|set| **set).count() != 1
                || above.iter().any(|set| *set)
            {
                return Err(SynthesisError::Unsatisfiable);
            }
        }
        let partition = pack_bits(
            cs.namespace(|| "partition from its bits"),
            &booleans(&partition_bits),
        )?;

        let comm_r_old = alloc(cs, "comm_r_old", public.comm_r_old)?;
        comm_r_old.inputize(cs.namespace(|| "comm_r_old input"))?;
        let comm_d_new = alloc(cs, "comm_d_new", public.comm_d_new)?;
        comm_d_new.inputize(cs.namespace(|| "comm_d_new input"))?;
        let comm_r_new = alloc(cs, "comm_r_new", public.comm_r_new)?;
        comm_r_new.inputize(cs.namespace(|| "comm_r_new input"))?;
        let phi = poseidon_hash(
            cs.namespace(|| "phi"),
            &[comm_d_new.clone(), comm_r_old.clone()],
            &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        )?;

        let comm_c = alloc(cs, "comm_c", private.comm_c)?;
        let root_r_old = alloc(cs, "root_r_old", private.root_r_old)?;
        let root_r_new = alloc(cs, "root_r_new", private.root_r_new)?;
        let apex_leaves = private
            .apex_leafs
            .iter()
            .enumerate()
            .map(|(i, leaf)| alloc(cs, &format!("apex leaf {i}"), *leaf))
            .collect::<Result<Vec<_>, _>>()?;
        let below_partition = pp.challenge_bit_len - pp.partition_bit_len;
        let partition_path = private.challenge_proofs[0].path_d_new[below_partition..]
            .iter()
            .enumerate()
            .map(|(i, row)| Ok(vec![alloc(cs, &format!("partition path {i}"), row[0])?]))
            .collect::<Result<Vec<_>, SynthesisError>>()?;

        for (name, root, comm_r) in [
            ("comm_r_old", &root_r_old, &comm_r_old),
            ("comm_r_new", &root_r_new, &comm_r_new),
        ] {
            let hashed = <TreeRHasher as Hasher>::Function::hash2_circuit(
                cs.namespace(|| format!("{name} = H(comm_c, root)")),
                &comm_c,
                root,
            )?;
            enforce_equal(cs, name, &hashed, comm_r);
        }

        // The partition's apex tree, then its root's path up to comm_d_new.
        let mut row = apex_leaves.clone();
        let mut height = 0;
        while row.len() > 1 {
            row = match spread_apex {
                true => apex_row_spread(cs, &row, height)?,
                false => apex_row(cs, &row, height)?,
            };
            height += 1;
        }
        por_no_challenge_input::<TreeD, _>(
            cs.namespace(|| "apex root to comm_d_new"),
            partition_bits.clone(),
            row.remove(0),
            partition_path,
            comm_d_new,
        )?;

        let challenge_bits = self.challenge_bits(cs, &comm_r_new, &partition)?;
        Ok(UpdatePreamble {
            partition_bits,
            h_select_bits,
            phi,
            root_r_old,
            root_r_new,
            apex_leaves,
            challenge_bits,
        })
    }

    /// Every challenge's bits below the partition's: each digest H(comm_r_new || k * digests
    /// + j) gives as many challenges as its capacity holds.
    fn challenge_bits<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        comm_r_new: &AllocatedNum<Scalar>,
        partition: &AllocatedNum<Scalar>,
    ) -> Result<Vec<Vec<AllocatedBit>>, SynthesisError> {
        let pp = &self.circuit.pub_params;
        let bits_per_challenge = pp.challenge_bit_len - pp.partition_bit_len;
        let per_digest = Scalar::CAPACITY as usize / bits_per_challenge;
        let digests = pp.challenge_count.div_ceil(per_digest);
        let mut challenges = Vec::with_capacity(pp.challenge_count);
        for j in 0..digests {
            let digests_scalar = Scalar::from(digests as u64);
            let index = AllocatedNum::alloc(cs.namespace(|| format!("digest {j} index")), || {
                let k = partition
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                Ok(k * digests_scalar + Scalar::from(j as u64))
            })?;
            cs.enforce(
                || format!("digest {j} index = k * digests + {j}"),
                |lc| {
                    lc + (digests_scalar, partition.get_variable())
                        + (Scalar::from(j as u64), CS::one())
                },
                |lc| lc + CS::one(),
                |lc| lc + index.get_variable(),
            );
            let digest = poseidon_hash(
                cs.namespace(|| format!("digest {j}")),
                &[comm_r_new.clone(), index],
                &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
            )?;
            let bits = {
                let mut cs = cs.namespace(|| format!("digest {j} bits"));
                let bits = field_into_allocated_bits_le(&mut cs, digest.get_value())?;
                enforce_bits_make(&mut cs, "digest from its bits", &bits, &digest);
                bits
            };
            let take = per_digest.min(pp.challenge_count - challenges.len());
            challenges.extend(
                bits.chunks(bits_per_challenge)
                    .take(take)
                    .map(<[_]>::to_vec),
            );
        }
        Ok(challenges)
    }

    /// Challenge `c`: its rho from its high bits, the new label, the old and new replicas'
    /// paths to their roots, and the new data's path to its apex leaf.
    fn challenge<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        preamble: &UpdatePreamble,
        c: usize,
    ) -> Result<(), SynthesisError> {
        let pp = &self.circuit.pub_params;
        let proof: &ChallengeProof<Tree> = self
            .circuit
            .priv_inputs
            .challenge_proofs
            .get(c)
            .ok_or(SynthesisError::AssignmentMissing)?;
        let own_bits = preamble
            .challenge_bits
            .get(c)
            .ok_or(SynthesisError::AssignmentMissing)?;
        let mut bits: Vec<AllocatedBit> = own_bits
            .iter()
            .chain(&preamble.partition_bits)
            .cloned()
            .collect();
        let high = challenge_high(
            &mut cs.namespace(|| format!("challenge {c} high bits")),
            &bits,
            &preamble.h_select_bits,
            &hs(pp.sector_nodes),
        )?;
        let rho = poseidon_hash(
            cs.namespace(|| format!("challenge {c} rho")),
            &[preamble.phi.clone(), high],
            &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        )?;

        let leaf_r_old = alloc(cs, &format!("challenge {c} leaf_r_old"), proof.leaf_r_old)?;
        let leaf_d_new = alloc(cs, &format!("challenge {c} leaf_d_new"), proof.leaf_d_new)?;
        let leaf_r_new = {
            let mut cs = cs.namespace(|| format!("challenge {c} leaf_r_new"));
            let scaled = leaf_d_new.mul(cs.namespace(|| "leaf_d_new * rho"), &rho)?;
            let sum =
                AllocatedNum::alloc(cs.namespace(|| "leaf_r_old + leaf_d_new * rho"), || {
                    let old = leaf_r_old.get_value();
                    Ok(old.ok_or(SynthesisError::AssignmentMissing)?
                        + scaled
                            .get_value()
                            .ok_or(SynthesisError::AssignmentMissing)?)
                })?;
            cs.enforce(
                || "leaf_r_new = leaf_r_old + leaf_d_new * rho",
                |lc| lc + leaf_r_old.get_variable() + scaled.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc + sum.get_variable(),
            );
            sum
        };
        if let (Some(computed), Some(given)) = (leaf_r_new.get_value(), proof.leaf_r_new) {
            if computed != given {
                return Err(SynthesisError::Unsatisfiable);
            }
        }

        for (name, leaf, path, root) in [
            ("r_old", leaf_r_old, &proof.path_r_old, &preamble.root_r_old),
            ("r_new", leaf_r_new, &proof.path_r_new, &preamble.root_r_new),
        ] {
            let path = alloc_path(cs, &format!("challenge {c} path_{name}"), path)?;
            por_no_challenge_input::<Tree, _>(
                cs.namespace(|| format!("challenge {c} tree_{name} proof")),
                bits.clone(),
                leaf,
                path,
                root.clone(),
            )?;
        }

        let to_apex = pp.challenge_bit_len - pp.partition_bit_len - pp.apex_leaf_bit_len;
        let apex_leaf = select(
            cs.namespace(|| format!("challenge {c} apex leaf")),
            &preamble.apex_leaves,
            &booleans(&bits[to_apex..to_apex + pp.apex_leaf_bit_len]),
        )?;
        let path = alloc_path(
            cs,
            &format!("challenge {c} path_d_new"),
            &proof.path_d_new[..to_apex],
        )?;
        bits.truncate(to_apex);
        por_no_challenge_input::<TreeD, _>(
            cs.namespace(|| format!("challenge {c} tree_d_new proof")),
            bits,
            leaf_d_new,
            path,
            apex_leaf,
        )
    }
}

/// The apex tree's row above `row`: each pair of nodes hashed, in order.
fn apex_row<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    row: &[AllocatedNum<Scalar>],
    height: usize,
) -> Result<Vec<AllocatedNum<Scalar>>, SynthesisError> {
    row.chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            hash2::<TreeDHasher, _>(
                cs.namespace(|| format!("apex node {i} of row {height}")),
                &pair[0],
                &pair[1],
            )
        })
        .collect()
}

/// [`apex_row`] over the threads, for a system that keeps values alone: each pair hashed into
/// a system of its own, the systems appended in order (the same values as [`apex_row`]; the
/// nodes' variables are their own systems', which such a system never reads). A 32 GiB
/// partition's 127 apex hashes are most of its preamble, which every challenge waits for.
fn apex_row_spread<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    row: &[AllocatedNum<Scalar>],
    height: usize,
) -> Result<Vec<AllocatedNum<Scalar>>, SynthesisError> {
    if !CS::is_extensible() {
        return apex_row(cs, row, height);
    }
    let hashed = row
        .par_chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let mut system = CS::new();
            system.alloc_input(|| "ONE", || Ok(Scalar::ONE))?;
            let node = hash2::<TreeDHasher, _>(
                system.namespace(|| format!("apex node {i} of row {height}")),
                &pair[0],
                &pair[1],
            )?;
            Ok((system, node))
        })
        .collect::<Result<Vec<_>, SynthesisError>>()?;
    Ok(hashed
        .into_iter()
        .map(|(system, node)| {
            cs.extend(&system);
            node
        })
        .collect())
}

/// Allocates a private number named `name` with `value`.
fn alloc<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    name: &str,
    value: Option<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    AllocatedNum::alloc(cs.namespace(|| name), || {
        value.ok_or(SynthesisError::AssignmentMissing)
    })
}

/// Allocates a Merkle path's siblings, row by row.
fn alloc_path<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    name: &str,
    path: &[Vec<Option<Scalar>>],
) -> Result<Vec<Vec<AllocatedNum<Scalar>>>, SynthesisError> {
    path.iter()
        .enumerate()
        .map(|(row, siblings)| {
            siblings
                .iter()
                .enumerate()
                .map(|(i, sibling)| alloc(cs, &format!("{name} row {row} sibling {i}"), *sibling))
                .collect()
        })
        .collect()
}

/// The bits as booleans, for the gadgets that take them.
fn booleans(bits: &[AllocatedBit]) -> Vec<Boolean> {
    bits.iter().cloned().map(Boolean::from).collect()
}

/// Enforces `sum 2^i bits[i] * 1 = number`.
fn enforce_bits_make<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    name: &str,
    bits: &[AllocatedBit],
    number: &AllocatedNum<Scalar>,
) {
    let mut sum = LinearCombination::zero();
    let mut power = Scalar::ONE;
    for bit in bits {
        sum = sum + (power, bit.get_variable());
        power = power.double();
    }
    cs.enforce(
        || name,
        |_| sum,
        |lc| lc + CS::one(),
        |lc| lc + number.get_variable(),
    );
}

/// Enforces `left * 1 = right`.
fn enforce_equal<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    name: &str,
    left: &AllocatedNum<Scalar>,
    right: &AllocatedNum<Scalar>,
) {
    cs.enforce(
        || format!("{name} matches"),
        |lc| lc + left.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + right.get_variable(),
    );
}

/// The challenge's `h` high bits packed into a number, `h` the entry of `hs` whose
/// `h_select` bit is set: each candidate packed and multiplied by its select bit, then summed.
fn challenge_high<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    bits: &[AllocatedBit],
    h_select_bits: &[AllocatedBit],
    hs: &[usize],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let bits = booleans(bits);
    let candidates = hs
        .iter()
        .zip(h_select_bits)
        .enumerate()
        .map(|(k, (h, selected))| {
            let high = bits
                .len()
                .checked_sub(*h)
                .ok_or(SynthesisError::AssignmentMissing)?;
            let packed = pack_bits(
                cs.namespace(|| format!("top {h} bits ({k})")),
                &bits[high..],
            )?;
            let kept =
                AllocatedNum::alloc(cs.namespace(|| format!("top {h} bits kept ({k})")), || {
                    let selected = selected
                        .get_value()
                        .ok_or(SynthesisError::AssignmentMissing)?;
                    match selected {
                        true => packed.get_value().ok_or(SynthesisError::AssignmentMissing),
                        false => Ok(Scalar::ZERO),
                    }
                })?;
            cs.enforce(
                || format!("top {h} bits kept ({k}) = packed * selected"),
                |lc| lc + packed.get_variable(),
                |lc| lc + selected.get_variable(),
                |lc| lc + kept.get_variable(),
            );
            Ok(kept)
        })
        .collect::<Result<Vec<_>, SynthesisError>>()?;
    let chosen = AllocatedNum::alloc(cs.namespace(|| "high bits chosen"), || {
        candidates.iter().try_fold(Scalar::ZERO, |sum, kept| {
            Ok(sum + kept.get_value().ok_or(SynthesisError::AssignmentMissing)?)
        })
    })?;
    cs.enforce(
        || "high bits chosen = sum of the kept",
        |lc| {
            candidates
                .iter()
                .fold(lc, |lc, kept| lc + kept.get_variable())
        },
        |lc| lc + CS::one(),
        |lc| lc + chosen.get_variable(),
    );
    Ok(chosen)
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> PartedCircuit for UpdateParts<Tree> {
    type Preamble = UpdatePreamble;

    fn parts(&self) -> usize {
        self.circuit.priv_inputs.challenge_proofs.len()
    }

    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: Range<usize>,
    ) -> Result<(), SynthesisError> {
        let preamble = self.preamble(cs, false)?;
        self.synthesize_parts_after(cs, &preamble, parts)
    }

    fn synthesize_preamble<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
    ) -> Result<Option<UpdatePreamble>, SynthesisError> {
        self.preamble(cs, true).map(Some)
    }

    fn synthesize_parts_after<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        preamble: &UpdatePreamble,
        parts: Range<usize>,
    ) -> Result<(), SynthesisError> {
        parts
            .into_iter()
            .try_for_each(|c| self.challenge(cs, preamble, c))
    }

    /// storage-proofs-update's own synthesis, for the plain prover.
    fn synthesize_whole<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> Result<(), SynthesisError> {
        self.circuit.synthesize(cs)
    }
}

#[cfg(test)]
mod tests {
    use blstrs::Scalar;
    use filecoin_proofs::{SectorShape16MiB, SectorShape2KiB};
    use storage_proofs_core::compound_proof::CompoundProof;
    use storage_proofs_core::merkle::MerkleTreeTrait;
    use storage_proofs_update::constants::TreeRHasher;
    use storage_proofs_update::{EmptySectorUpdate, EmptySectorUpdateCompound, PublicParams};

    use super::UpdateParts;
    use crate::proofs::test_support::{assert_records_alike, OursWhole};

    /// Records storage-proofs-update's blank circuit and ours (every challenge after our
    /// preamble) for `sector_bytes` and asserts they are the same R1CS.
    fn records_as_upstream<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
        sector_bytes: u64,
    ) {
        let blank = || {
            <EmptySectorUpdateCompound<Tree> as CompoundProof<EmptySectorUpdate<Tree>, _>>::blank_circuit(
                &PublicParams::from_sector_size(sector_bytes),
            )
        };
        let ours = UpdateParts::new(blank()).expect("a valid blank circuit");
        assert_records_alike(blank(), OursWhole(ours), &format!("{sector_bytes} bytes"));
    }

    /// A challenge proof of the wrong shape, or partition paths that differ, is an error
    /// before any synthesis (storage-proofs-update would panic on them).
    #[test]
    fn malformed_challenge_proofs_are_errors() {
        let blank = || {
            <EmptySectorUpdateCompound<SectorShape16MiB> as CompoundProof<
                EmptySectorUpdate<SectorShape16MiB>,
                _,
            >>::blank_circuit(&PublicParams::from_sector_size(16 << 20))
        };
        assert!(UpdateParts::new(blank()).is_ok());
        let error = |circuit| match UpdateParts::new(circuit) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted"),
        };
        let mut short = blank();
        short.priv_inputs.challenge_proofs[3].path_r_new.pop();
        assert!(error(short).contains("wrong shape"));
        let mut differing = blank();
        let last = differing.priv_inputs.challenge_proofs[5].path_d_new.len() - 1;
        differing.priv_inputs.challenge_proofs[5].path_d_new[last][0] = Some(Scalar::from(1));
        assert!(error(differing).contains("partition paths differ"));
        let mut few = blank();
        few.priv_inputs.challenge_proofs.pop();
        assert!(error(few).contains("number of challenge proofs"));
    }

    #[test]
    fn our_synthesis_records_as_storage_proofs_update_at_2_kib() {
        records_as_upstream::<SectorShape2KiB>(2 << 10);
    }

    /// 16 MiB has the production sizes' high-bit choices (h of 7 to 12), a 128-leaf apex
    /// tree and a TreeR with a sub-tree, which 2 KiB lacks.
    #[test]
    fn our_synthesis_records_as_storage_proofs_update_at_16_mib() {
        records_as_upstream::<SectorShape16MiB>(16 << 20);
    }
}
