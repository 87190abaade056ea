//! Merkle inclusion proofs of the Filecoin circuits, allocation for allocation as
//! storage-proofs-core's gadgets (`PoRCircuit` and `por_no_challenge_input`), with their
//! Poseidon rows hashed by [`super::poseidon`] and SHA-256 rows by [`super::sha256`], so a
//! witness-only system computes them natively. Other hashers' rows are their own gadgets'.

use std::any::TypeId;

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::multipack::pack_into_inputs;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::sha256::Sha256Hasher;
use filecoin_hashers::{HashFunction, Hasher, PoseidonArity};
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::merkle::MerkleTreeTrait;
use typenum::{Unsigned, U2};

use super::poseidon::poseidon_hash;
use super::sha256;

/// One row of a Merkle path: the siblings and the place of the hashed node among them.
pub(crate) type PathRow = (Vec<Option<Scalar>>, Option<usize>);

/// The number of siblings in each row of a Merkle path of `Tree` over `2^bits` leaves (the
/// base tree's rows, then the sub-tree's and the top tree's), or None if no such path exists.
pub(crate) fn tree_rows<Tree: MerkleTreeTrait>(bits: usize) -> Option<Vec<usize>> {
    let arities = [
        Tree::Arity::to_usize(),
        Tree::SubTreeArity::to_usize(),
        Tree::TopTreeArity::to_usize(),
    ];
    let upper: Vec<usize> = arities[1..].iter().copied().filter(|a| *a > 0).collect();
    let upper_bits: usize = upper.iter().map(|a| a.trailing_zeros() as usize).sum();
    let base_bits = arities[0].trailing_zeros() as usize;
    let below = bits.checked_sub(upper_bits)?;
    if base_bits == 0 || below % base_bits != 0 {
        return None;
    }
    let mut rows = vec![arities[0] - 1; below / base_bits];
    rows.extend(upper.iter().map(|a| a - 1));
    Some(rows)
}

/// Whether `H` is the Poseidon hasher, whose hashes [`poseidon_hash`] computes natively.
pub(crate) fn is_poseidon<H: 'static>() -> bool {
    TypeId::of::<H>() == TypeId::of::<PoseidonHasher>()
}

/// Whether `H` is the SHA-256 hasher, whose binary rows [`sha256::hash2`] computes natively.
pub(crate) fn is_sha256<H: 'static>() -> bool {
    TypeId::of::<H>() == TypeId::of::<Sha256Hasher>()
}

/// `H`'s hash of one Merkle row (`A` nodes).
pub(crate) fn hash_row<H: 'static + Hasher, A: PoseidonArity, CS: ConstraintSystem<Scalar>>(
    cs: CS,
    nodes: &[AllocatedNum<Scalar>],
    height: usize,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    if is_poseidon::<H>() {
        poseidon_hash(cs, nodes, A::PARAMETERS())
    } else if is_sha256::<H>() && cs.is_witness_generator() {
        match nodes {
            [a, b] => sha256::hash2(cs, a, b),
            _ => Err(SynthesisError::Unsatisfiable),
        }
    } else {
        H::Function::hash_multi_leaf_circuit::<A, _>(cs, nodes, height)
    }
}

/// One sub-path (base, sub-tree or top tree) of an inclusion proof, as storage-proofs-core's
/// `SubPath::synthesize`: per row its place's bits and its siblings allocated, the node
/// inserted among them and the row hashed. Returns the sub-path's root and the bits. A row
/// that does not fit arity `A` (none for an absent tree) is an error where storage-proofs
/// asserts.
fn sub_path<H: 'static + Hasher, A: PoseidonArity, CS: ConstraintSystem<Scalar>>(
    mut cs: CS,
    mut node: AllocatedNum<Scalar>,
    rows: &[PathRow],
) -> Result<(AllocatedNum<Scalar>, Vec<Boolean>), SynthesisError> {
    let arity = A::to_usize();
    let fits = |(siblings, place): &PathRow| {
        siblings.len() + 1 == arity && place.is_none_or(|p| p < arity)
    };
    if !(arity.is_power_of_two() || rows.is_empty()) || !rows.iter().all(fits) {
        return Err(SynthesisError::Unsatisfiable);
    }
    let place_bits = arity.trailing_zeros() as usize;
    let mut bits = Vec::with_capacity(rows.len() * place_bits);
    for (height, (siblings, place)) in rows.iter().enumerate() {
        let cs = &mut cs.namespace(|| format!("merkle tree hash {height}"));
        let place_bits = (0..place_bits)
            .map(|i| {
                let bit = place.map(|place| (place >> i) & 1 == 1);
                AllocatedBit::alloc(cs.namespace(|| format!("index bit {i}")), bit)
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        bits.extend_from_slice(&place_bits);
        let siblings = siblings
            .iter()
            .enumerate()
            .map(|(i, value)| {
                AllocatedNum::alloc(cs.namespace(|| format!("path element {i}")), || {
                    value.ok_or(SynthesisError::AssignmentMissing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let row = insert(cs, &node, &place_bits, &siblings)?;
        node = hash_row::<H, A, _>(
            cs.namespace(|| "computation of commitment hash"),
            &row,
            height,
        )?;
    }
    Ok((node, bits))
}

/// A challenge's inclusion proof of the allocated `leaf` into `root`, as storage-proofs-core's
/// private `PoRCircuit` (the root an allocated number, the path's bits packed into public
/// inputs).
pub(crate) fn inclusion_proof<Tree: MerkleTreeTrait, CS: ConstraintSystem<Scalar>>(
    mut cs: CS,
    leaf: AllocatedNum<Scalar>,
    path: &[PathRow],
    root: &AllocatedNum<Scalar>,
) -> Result<(), SynthesisError> {
    let has_sub = Tree::SubTreeArity::to_usize() > 0;
    let has_top = Tree::TopTreeArity::to_usize() > 0;
    let upper = usize::from(has_sub) + usize::from(has_top);
    let (base, upper) = path.split_at(path.len().saturating_sub(upper));
    let (sub, top) = upper.split_at(usize::from(has_sub).min(upper.len()));
    let (node, mut bits) =
        sub_path::<Tree::Hasher, Tree::Arity, _>(cs.namespace(|| "base"), leaf, base)?;
    let (node, sub_bits) =
        sub_path::<Tree::Hasher, Tree::SubTreeArity, _>(cs.namespace(|| "sub"), node, sub)?;
    let (node, top_bits) =
        sub_path::<Tree::Hasher, Tree::TopTreeArity, _>(cs.namespace(|| "top"), node, top)?;
    bits.extend(sub_bits);
    bits.extend(top_bits);
    pack_into_inputs(cs.namespace(|| "path"), &bits)?;
    constraint::equal(&mut cs, || "enforce root is correct", &node, root);
    Ok(())
}

/// `H`'s hash of two nodes (a sector's comm_c and comm_r_last).
pub(crate) fn hash2<H: 'static + Hasher, CS: ConstraintSystem<Scalar>>(
    cs: CS,
    a: &AllocatedNum<Scalar>,
    b: &AllocatedNum<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    if is_poseidon::<H>() {
        poseidon_hash(cs, &[a.clone(), b.clone()], U2::PARAMETERS())
    } else if is_sha256::<H>() {
        sha256::hash2(cs, a, b)
    } else {
        H::Function::hash2_circuit(cs, a, b)
    }
}

/// `leaf`'s path of allocated rows up to `root`, its places the allocated `challenge_bits`
/// (little-endian), as storage-proofs-core's `por_no_challenge_input`: each row inserts the
/// node among its siblings and hashes them, then the result must equal `root`. A path or bits
/// that do not fit `Tree` are an error (storage-proofs-core asserts).
pub(crate) fn por_no_challenge_input<Tree: MerkleTreeTrait, CS: ConstraintSystem<Scalar>>(
    mut cs: CS,
    challenge_bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Scalar>,
    path: Vec<Vec<AllocatedNum<Scalar>>>,
    root: AllocatedNum<Scalar>,
) -> Result<(), SynthesisError> {
    let (base, sub, top) = (
        Tree::Arity::to_usize(),
        Tree::SubTreeArity::to_usize(),
        Tree::TopTreeArity::to_usize(),
    );
    let upper = usize::from(sub > 0) + usize::from(top > 0);
    // The bits of a place in a row of `arity` nodes (none for an absent tree).
    let bits_of = |arity: usize| {
        if arity == 0 {
            0
        } else {
            arity.trailing_zeros() as usize
        }
    };
    let base_rows = path
        .len()
        .checked_sub(upper)
        .ok_or(SynthesisError::Unsatisfiable)?;
    let bits_needed = base_rows * bits_of(base) + bits_of(sub) + bits_of(top);
    let arity_of = |row: usize| match row.checked_sub(base_rows) {
        None => base,
        Some(0) if sub > 0 => sub,
        Some(_) => top,
    };
    let fits = base.is_power_of_two()
        && (top == 0 || sub > 0)
        && challenge_bits.len() == bits_needed
        && path
            .iter()
            .enumerate()
            .all(|(row, siblings)| siblings.len() + 1 == arity_of(row));
    if !fits {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut bits = challenge_bits.into_iter().map(Boolean::from);
    let mut node = leaf;
    for (height, siblings) in path.iter().enumerate() {
        let place: Vec<Boolean> = bits.by_ref().take(bits_of(arity_of(height))).collect();
        let row = insert(
            &mut cs.namespace(|| format!("merkle proof insert (height={height})")),
            &node,
            &place,
            siblings,
        )?;
        let cs = cs.namespace(|| format!("merkle proof hash (height={height})"));
        node = if height < base_rows {
            hash_row::<Tree::Hasher, Tree::Arity, _>(cs, &row, height)?
        } else if height == base_rows && sub > 0 {
            hash_row::<Tree::Hasher, Tree::SubTreeArity, _>(cs, &row, height)?
        } else {
            hash_row::<Tree::Hasher, Tree::TopTreeArity, _>(cs, &row, height)?
        };
    }
    cs.enforce(
        || "calculated root == provided root",
        |lc| lc + node.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + root.get_variable(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::por_no_challenge_input;
    use crate::proofs::test_support::assert_records_alike;
    use bellperson::{Circuit, ConstraintSystem, SynthesisError};
    use filecoin_hashers::poseidon::PoseidonHasher;
    use storage_proofs_core::merkle::{DiskTree, MerkleTreeTrait};
    use typenum::{U2, U8};

    /// A path of `rows` to a root through storage-proofs-core's `por_no_challenge_input`
    /// (`ours` false) or ours, every value one.
    struct PathCircuit<Tree> {
        rows: Vec<usize>,
        ours: bool,
        _tree: std::marker::PhantomData<Tree>,
    }

    impl<Tree: MerkleTreeTrait> Circuit<Scalar> for PathCircuit<Tree> {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            let num = |cs: &mut CS| AllocatedNum::alloc(&mut *cs, || Ok(Scalar::ONE));
            let bit_count: usize = self
                .rows
                .iter()
                .map(|n| (n + 1).trailing_zeros() as usize)
                .sum();
            let bits = (0..bit_count)
                .map(|_| AllocatedBit::alloc(&mut *cs, Some(false)))
                .collect::<Result<Vec<_>, _>>()?;
            let leaf = num(cs)?;
            let path = self
                .rows
                .iter()
                .map(|n| (0..*n).map(|_| num(cs)).collect::<Result<Vec<_>, _>>())
                .collect::<Result<Vec<_>, _>>()?;
            let root = num(cs)?;
            if self.ours {
                por_no_challenge_input::<Tree, _>(cs, bits, leaf, path, root)
            } else {
                storage_proofs_core::gadgets::por::por_no_challenge_input::<Tree, _>(
                    cs, bits, leaf, path, root,
                )
            }
        }
    }

    /// Ours records as storage-proofs-core's, also for a tree with a sub-tree and a top tree
    /// (64 GiB sectors' shape, smaller).
    #[test]
    fn por_no_challenge_input_records_as_storage_proofs_core() {
        fn alike<Tree: MerkleTreeTrait>(rows: Vec<usize>, what: &str) {
            let circuit = |ours| PathCircuit::<Tree> {
                rows: rows.clone(),
                ours,
                _tree: std::marker::PhantomData,
            };
            assert_records_alike(circuit(false), circuit(true), what);
        }
        alike::<SectorShape2KiB>(vec![7, 7], "2 KiB tree R");
        alike::<DiskTree<PoseidonHasher, U8, U8, U2>>(vec![7, 7, 7, 1], "8-8-2 tree");
    }
    use crate::groth16::pce::WitnessCs;
    use bellperson::gadgets::boolean::AllocatedBit;
    use bellperson::gadgets::num::AllocatedNum;
    use blstrs::Scalar;
    use ff::Field;
    use filecoin_proofs::SectorShape2KiB;

    /// A path or challenge bits that do not fit the tree are errors, where storage-proofs-core
    /// asserts (and would take the process down).
    #[test]
    fn a_path_that_does_not_fit_the_tree_is_an_error() {
        let mut cs: WitnessCs = WitnessCs::default();
        let num = |cs: &mut WitnessCs| AllocatedNum::alloc(cs, || Ok(Scalar::ONE)).unwrap();
        let bits = |cs: &mut WitnessCs, n: usize| -> Vec<AllocatedBit> {
            (0..n)
                .map(|_| AllocatedBit::alloc(&mut *cs, Some(false)).unwrap())
                .collect()
        };
        // A 2 KiB tree R: two rows of 7 siblings, 3 bits each.
        let row = |cs: &mut WitnessCs, n: usize| (0..n).map(|_| num(cs)).collect::<Vec<_>>();
        let (leaf, root) = (num(&mut cs), num(&mut cs));
        let good_path = vec![row(&mut cs, 7), row(&mut cs, 7)];
        let good_bits = bits(&mut cs, 6);
        assert!(por_no_challenge_input::<SectorShape2KiB, _>(
            &mut cs,
            good_bits.clone(),
            leaf.clone(),
            good_path.clone(),
            root.clone()
        )
        .is_ok());
        let short_row = vec![row(&mut cs, 7), row(&mut cs, 6)];
        assert!(por_no_challenge_input::<SectorShape2KiB, _>(
            &mut cs,
            good_bits,
            leaf.clone(),
            short_row,
            root.clone()
        )
        .is_err());
        let few_bits = bits(&mut cs, 5);
        assert!(por_no_challenge_input::<SectorShape2KiB, _>(
            &mut cs, few_bits, leaf, good_path, root
        )
        .is_err());
    }
}
