//! A PoRep partition's witness, synthesized by our own code on a witness-only system so its
//! SHA-256 labels and Merkle rows and its Poseidon hashes are computed natively
//! ([`super::sha256`], [`super::poseidon`]).
//!
//! storage-proofs-porep's `StackedCircuit` spends most of a witness-only synthesis building
//! linear combinations nobody reads (bellperson's SHA-256 gadget for the labels and tree D,
//! neptune's Poseidon for the columns and trees C and R). This module allocates the same
//! variables in the same order, with the same number of constraints, from the vanilla proofs:
//! the preamble (replica id, commitments, comm_r = H(comm_c || comm_r_last)), then per
//! challenge its data leaf in tree D, its parents' columns in tree C, its labels layer by layer,
//! the encoded node in tree R and its own column in tree C. It runs only where a system keeps
//! values alone; the parameters, the recorder and the plain prover run storage-proofs-porep's
//! own circuit, and the PCE's shape check and the tests (the same assignment with and without
//! the PCE, every proof verified) hold the two together.

use bellperson::gadgets::boolean::Boolean;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::gadgets::uint32::UInt32;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use filecoin_hashers::{Hasher, POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
use filecoin_proofs::constants::DefaultPieceHasher;
use storage_proofs_core::gadgets::constraint;
use storage_proofs_core::gadgets::encode::encode;
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::merkle::{
    BinaryMerkleTree, MerkleProof, MerkleProofTrait, MerkleTreeTrait,
};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{self, Column};

use super::por::{hash2, inclusion_proof, PathRow};
use super::poseidon::poseidon_hash;
use super::sha256::sha256_packed;

/// The partition's commitments, as `StackedCircuit` takes them.
pub(crate) struct Commitments {
    pub(crate) replica_id: Scalar,
    pub(crate) comm_d: Option<Scalar>,
    pub(crate) comm_r: Option<Scalar>,
    pub(crate) comm_r_last: Scalar,
    pub(crate) comm_c: Scalar,
}

/// A column opening: the column's rows (one per layer) and its path in tree C.
struct ColumnOpening {
    rows: Vec<Scalar>,
    path: Vec<PathRow>,
}

/// What one challenge's synthesis reads from its vanilla proof.
struct Challenge {
    node: u64,
    data_leaf: Scalar,
    comm_d_path: Vec<PathRow>,
    comm_r_last_path: Vec<PathRow>,
    own_column_path: Vec<PathRow>,
    drg_parents: Vec<ColumnOpening>,
    exp_parents: Vec<ColumnOpening>,
}

/// The tree C paths and the challenged node are private fields of storage-proofs-porep's
/// vanilla types; their serde form is public. Field order as declared there.
type SerializedColumnProof<Tree> = (
    Column<<Tree as MerkleTreeTrait>::Hasher>,
    MerkleProof<
        <Tree as MerkleTreeTrait>::Hasher,
        <Tree as MerkleTreeTrait>::Arity,
        <Tree as MerkleTreeTrait>::SubTreeArity,
        <Tree as MerkleTreeTrait>::TopTreeArity,
    >,
);
type SerializedLabelingProof<H> = (Vec<<H as Hasher>::Domain>, u32, u64);

/// Reads `value` back as `T` through its serde form.
fn reread<T: serde::de::DeserializeOwned>(
    value: &impl serde::Serialize,
) -> Result<T, SynthesisError> {
    let bytes = bincode::serialize(value).map_err(|_| SynthesisError::Unsatisfiable)?;
    bincode::deserialize(&bytes).map_err(|_| SynthesisError::Unsatisfiable)
}

impl Challenge {
    fn of<Tree: 'static + MerkleTreeTrait>(
        proof: &stacked::Proof<Tree, DefaultPieceHasher>,
    ) -> Result<Self, SynthesisError> {
        let opening = |column_proof| -> Result<ColumnOpening, SynthesisError> {
            let (column, path): SerializedColumnProof<Tree> = reread(column_proof)?;
            Ok(ColumnOpening {
                rows: column.rows().iter().map(|row| (*row).into()).collect(),
                path: path.as_options(),
            })
        };
        let columns = &proof.replica_column_proofs;
        let first_label = proof
            .labeling_proofs
            .first()
            .ok_or(SynthesisError::Unsatisfiable)?;
        let (_, _, node): SerializedLabelingProof<Tree::Hasher> = reread(first_label)?;
        let (_, own_column) = reread::<SerializedColumnProof<Tree>>(&columns.c_x)?;
        Ok(Challenge {
            node,
            data_leaf: proof.comm_d_proofs.leaf().into(),
            comm_d_path: proof.comm_d_proofs.as_options(),
            comm_r_last_path: proof.comm_r_last_proof.as_options(),
            own_column_path: own_column.as_options(),
            drg_parents: columns
                .drg_parents
                .iter()
                .map(opening)
                .collect::<Result<_, _>>()?,
            exp_parents: columns
                .exp_parents
                .iter()
                .map(opening)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// `StackedCircuit::synthesize` with `challenges` on a witness-only system `cs`.
pub(crate) fn synthesize_witness<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    commitments: &Commitments,
    challenges: &[stacked::Proof<Tree, DefaultPieceHasher>],
) -> Result<(), SynthesisError> {
    if !cs.is_witness_generator() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let alloc = |cs: &mut CS, name: &'static str, value: Option<Scalar>| {
        AllocatedNum::alloc(cs.namespace(|| name), || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })
    };
    let replica_id = alloc(cs, "replica_id", Some(commitments.replica_id))?;
    replica_id.inputize(cs.namespace(|| "replica_id_input"))?;
    let replica_id_bits =
        reverse_bit_numbering(replica_id.to_bits_le(cs.namespace(|| "replica_id_bits"))?);
    let comm_d = alloc(cs, "comm_d", commitments.comm_d)?;
    comm_d.inputize(cs.namespace(|| "comm_d_input"))?;
    let comm_r = alloc(cs, "comm_r", commitments.comm_r)?;
    comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
    let comm_r_last = alloc(cs, "comm_r_last", Some(commitments.comm_r_last))?;
    let comm_c = alloc(cs, "comm_c", Some(commitments.comm_c))?;
    let hashed = hash2::<Tree::Hasher, _>(
        cs.namespace(|| "H_comm_c_comm_r_last"),
        &comm_c,
        &comm_r_last,
    )?;
    constraint::equal(cs, || "comm_r = H(comm_c || comm_r_last)", &comm_r, &hashed);
    let roots = Roots {
        comm_d: &comm_d,
        comm_c: &comm_c,
        comm_r_last: &comm_r_last,
    };
    for (i, proof) in challenges.iter().enumerate() {
        let challenge = Challenge::of(proof)?;
        synthesize_challenge::<Tree, _>(
            &mut cs.namespace(|| format!("challenge_{i}")),
            &challenge,
            &roots,
            &replica_id_bits,
        )?;
    }
    Ok(())
}

/// The allocated roots a challenge's paths end in.
struct Roots<'a> {
    comm_d: &'a AllocatedNum<Scalar>,
    comm_c: &'a AllocatedNum<Scalar>,
    comm_r_last: &'a AllocatedNum<Scalar>,
}

/// storage-proofs-porep's column hash: Poseidon of arity 2 (test sizes) or 11.
fn column_hash<CS: ConstraintSystem<Scalar>>(
    cs: CS,
    column: &[AllocatedNum<Scalar>],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    match column.len() {
        2 => poseidon_hash(cs, column, &*POSEIDON_CONSTANTS_2),
        11 => poseidon_hash(cs, column, &*POSEIDON_CONSTANTS_11),
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

/// One challenge, as storage-proofs-porep's circuit `Proof::synthesize`.
fn synthesize_challenge<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    challenge: &Challenge,
    roots: &Roots<'_>,
    replica_id_bits: &[Boolean],
) -> Result<(), SynthesisError> {
    let data_leaf = AllocatedNum::alloc(cs.namespace(|| "data_leaf"), || Ok(challenge.data_leaf))?;
    inclusion_proof::<BinaryMerkleTree<DefaultPieceHasher>, _>(
        cs.namespace(|| "comm_d_inclusion"),
        data_leaf.clone(),
        &challenge.comm_d_path,
        roots.comm_d,
    )?;

    // The parents' columns, each hashed and found in tree C: the DRG parents', then the
    // expander parents'.
    let layers = challenge
        .drg_parents
        .first()
        .map_or(0, |opening| opening.rows.len());
    let mut columns = Vec::new();
    for (i, opening) in challenge
        .drg_parents
        .iter()
        .chain(&challenge.exp_parents)
        .enumerate()
    {
        if opening.rows.len() != layers {
            return Err(SynthesisError::Unsatisfiable);
        }
        let mut cs = cs.namespace(|| format!("parent_{i}"));
        let column = opening
            .rows
            .iter()
            .map(|row| AllocatedNum::alloc(&mut cs, || Ok(*row)))
            .collect::<Result<Vec<_>, _>>()?;
        let hashed = column_hash(cs.namespace(|| "column hash"), &column)?;
        inclusion_proof::<Tree, _>(
            cs.namespace(|| "inclusion"),
            hashed,
            &opening.path,
            roots.comm_c,
        )?;
        columns.push(column);
    }
    let (drg_columns, exp_columns) = columns.split_at(challenge.drg_parents.len());

    let node = UInt64::alloc(cs.namespace(|| "challenge"), Some(challenge.node))?;
    node.pack_into_input(cs.namespace(|| "challenge input"))?;
    let node_bits = node.to_bits_be();
    let mut labels = Vec::with_capacity(layers);
    for layer in 1..=layers {
        let mut cs = cs.namespace(|| format!("labeling_{layer}"));
        // The first layer has DRG parents only; the expander parents' values are a layer back.
        let mut parents = Vec::new();
        let exp_rows = exp_columns
            .iter()
            .filter(|_| layer > 1)
            .map(|column| &column[layer - 2]);
        for row in drg_columns
            .iter()
            .map(|column| &column[layer - 1])
            .chain(exp_rows)
        {
            let bits = row.to_bits_le(cs.namespace(|| "parent bits"))?;
            parents.push(reverse_bit_numbering(bits));
        }
        let label = create_label(&mut cs, replica_id_bits, &parents, layer, &node_bits)?;
        labels.push(label);
    }

    let key = labels.last().ok_or(SynthesisError::Unsatisfiable)?;
    let encoded = encode(cs.namespace(|| "encode_node"), key, &data_leaf)?;
    inclusion_proof::<Tree, _>(
        cs.namespace(|| "comm_r_last_data_inclusion"),
        encoded,
        &challenge.comm_r_last_path,
        roots.comm_r_last,
    )?;
    let own_column = column_hash(cs.namespace(|| "c_x_column_hash"), &labels)?;
    inclusion_proof::<Tree, _>(
        cs.namespace(|| "c_x_inclusion"),
        own_column,
        &challenge.own_column_path,
        roots.comm_c,
    )
}

/// Parents a label hashes, with repeats (storage-proofs-porep's `TOTAL_PARENTS`).
const TOTAL_PARENTS: usize = 37;

/// storage-proofs-porep's `create_label_circuit`, natively: SHA-256 of the replica id, the
/// layer and node, and the parents repeated up to 37 (the first layer's 6 DRG parents six
/// times and the first once more; a later layer's 14 parents twice and the first 9 again).
fn create_label<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    replica_id: &[Boolean],
    parents: &[Vec<Boolean>],
    layer: usize,
    node_bits: &[Boolean],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let repeated: Vec<&Vec<Boolean>> = match parents.len() {
        6 => parents
            .iter()
            .cycle()
            .take(6 * 6)
            .chain(parents.first())
            .collect(),
        14 => parents.iter().chain(parents).chain(&parents[..9]).collect(),
        _ => return Err(SynthesisError::Unsatisfiable),
    };
    debug_assert_eq!(repeated.len(), TOTAL_PARENTS);
    let pad_to = |bits: &mut Vec<Boolean>, multiple: usize| {
        bits.resize(
            bits.len().next_multiple_of(multiple),
            Boolean::Constant(false),
        )
    };
    let mut bits = replica_id.to_vec();
    pad_to(&mut bits, 256);
    let layer = u32::try_from(layer).map_err(|_| SynthesisError::Unsatisfiable)?;
    bits.extend(UInt32::constant(layer).into_bits_be());
    bits.extend_from_slice(node_bits);
    pad_to(&mut bits, 512);
    for parent in repeated {
        bits.extend_from_slice(parent);
        pad_to(&mut bits, 256);
    }
    if bits.len() != (2 + TOTAL_PARENTS) * 256 {
        return Err(SynthesisError::Unsatisfiable);
    }
    sha256_packed(cs, &bits)
}
