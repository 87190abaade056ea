//! The Poseidon hash of the Filecoin circuits, with its witness computed natively on a
//! witness-only system.
//!
//! Every storage-proofs circuit hashes with neptune's legacy circuit
//! (`neptune::circuit::poseidon_hash`). It carries each state element as a linear combination
//! between S-boxes, built eagerly outside `enforce`: over a partial round's sparse matrix the
//! combinations grow by a term a round, and merging them is most of the circuit's cost. A
//! system that keeps values alone (cuzk's `WitnessCs`, which says so through
//! `is_witness_generator`) never reads those combinations. There [`poseidon_hash`] allocates
//! the same variables in the same order, with values from field arithmetic alone, and counts
//! the same constraints; on any other system it is neptune's own circuit.

use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use neptune::hash_type::HashType;
use neptune::poseidon::{Arity, PoseidonConstants};

/// Hashes `preimage` (as many elements as the arity) with `constants`: neptune's legacy
/// circuit, or on a witness generator the same allocations and constraint count with its
/// values computed natively.
pub fn poseidon_hash<CS, A>(
    cs: CS,
    preimage: &[AllocatedNum<Scalar>],
    constants: &PoseidonConstants<Scalar, A>,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    A: Arity<Scalar>,
{
    // neptune asserts these; an error here, so a malformed input cannot panic.
    let arity = A::to_usize();
    let length_fits = match constants.hash_type {
        HashType::ConstantLength(length) => length == arity,
        _ => true,
    };
    if preimage.len() != arity || !length_fits {
        return Err(SynthesisError::Unsatisfiable);
    }
    if !cs.is_witness_generator() {
        return neptune::circuit::poseidon_hash(cs, preimage.to_vec(), constants);
    }
    let values = preimage
        .iter()
        .map(|element| element.get_value().ok_or(SynthesisError::AssignmentMissing))
        .collect::<Result<Vec<_>, _>>()?;
    NativeHash::new(cs, constants).hash(&values)
}

/// neptune's legacy circuit replayed on values: the variables it allocates, in its order.
struct NativeHash<'c, CS, A: Arity<Scalar>> {
    cs: CS,
    constants: &'c PoseidonConstants<Scalar, A>,
    /// The next compressed round constant.
    offset: usize,
    /// The matrix products done so far (neptune's `current_round`).
    products: usize,
}

impl<'c, CS: ConstraintSystem<Scalar>, A: Arity<Scalar>> NativeHash<'c, CS, A> {
    fn new(cs: CS, constants: &'c PoseidonConstants<Scalar, A>) -> Self {
        Self {
            cs,
            constants,
            offset: 0,
            products: 0,
        }
    }

    /// Allocates `value` and, as the circuit's constraint on it, counts one constraint.
    fn witness(&mut self, value: Scalar) -> Result<Scalar, SynthesisError> {
        self.cs.alloc(|| "", || Ok(value))?;
        // On a witness generator the constraint is counted, never read.
        self.cs.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
        Ok(value)
    }

    /// The next `n` round constants.
    fn round_constants(&mut self, n: usize) -> Result<&'c [Scalar], SynthesisError> {
        let constants = self
            .constants
            .compressed_round_constants
            .get(self.offset..self.offset + n)
            .ok_or(SynthesisError::Unsatisfiable)?;
        self.offset += n;
        Ok(constants)
    }

    /// The quintic S-box of an element the circuit holds as a linear combination: allocated
    /// (`l`), then `l^2`, `l^4` and `l^4 * l + post`, each allocated.
    fn s_box(&mut self, element: Scalar, post: Option<&Scalar>) -> Result<Scalar, SynthesisError> {
        let l = self.witness(element)?;
        let l2 = self.witness(l.square())?;
        let l4 = self.witness(l2.square())?;
        self.witness(post.map_or(l4 * l, |post| l4 * l + post))
    }

    fn hash(mut self, preimage: &[Scalar]) -> Result<AllocatedNum<Scalar>, SynthesisError> {
        let width = preimage.len() + 1;
        let mut state = Vec::with_capacity(width);
        state.push(self.constants.domain_tag);
        state.extend_from_slice(preimage);

        // The first full round adds a round key before the S-box as well as after. The tag's
        // S-box is a constant; the preimage is allocated already, so only (l + pre)^2, l^4 and
        // l^4 * (l + pre) + post are.
        let pre = self.round_constants(width)?;
        let post = self.round_constants(width)?;
        let mut tag = state[0] + pre[0];
        tag = tag.square().square() * tag + post[0];
        state[0] = tag;
        for i in 1..width {
            let l = state[i] + pre[i];
            let l2 = self.witness(l.square())?;
            let l4 = self.witness(l2.square())?;
            state[i] = self.witness(l4 * l + post[i])?;
        }
        state = self.product(&state)?;

        let half = self.constants.half_full_rounds;
        for _ in 1..half {
            self.full_round(&mut state, true)?;
        }
        for _ in 0..self.constants.partial_rounds {
            let key = self.round_constants(1)?;
            state[0] = self.s_box(state[0], key.first())?;
            state = self.product(&state)?;
        }
        for _ in 0..half.saturating_sub(1) {
            self.full_round(&mut state, true)?;
        }
        self.full_round(&mut state, false)?;

        // The result is the second element, allocated as the circuit's output.
        let result = *state.get(1).ok_or(SynthesisError::Unsatisfiable)?;
        let output = AllocatedNum::alloc(&mut self.cs, || Ok(result))?;
        self.cs.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
        Ok(output)
    }

    /// A full round after the first: every element through the S-box (with round keys after
    /// it unless this is the last round), then the matrix product.
    fn full_round(&mut self, state: &mut Vec<Scalar>, keyed: bool) -> Result<(), SynthesisError> {
        let keys = if keyed {
            Some(self.round_constants(state.len())?)
        } else {
            None
        };
        for (i, element) in state.iter_mut().enumerate() {
            *element = self.s_box(*element, keys.map(|keys| &keys[i]))?;
        }
        *state = self.product(state)?;
        Ok(())
    }

    /// The state times the round's matrix, as neptune picks it: the pre-sparse matrix after
    /// the first half of the full rounds, a sparse one after each partial round, the MDS
    /// matrix otherwise.
    fn product(&mut self, state: &[Scalar]) -> Result<Vec<Scalar>, SynthesisError> {
        let constants = self.constants;
        let round = self.products;
        self.products += 1;
        let sparse_offset = constants.half_full_rounds.saturating_sub(1);
        let dense = |matrix: &[Vec<Scalar>]| -> Result<Vec<Scalar>, SynthesisError> {
            (0..state.len())
                .map(|j| {
                    state
                        .iter()
                        .enumerate()
                        .try_fold(Scalar::ZERO, |sum, (i, e)| {
                            let m = matrix.get(i).and_then(|row| row.get(j));
                            m.map(|m| sum + *e * m).ok_or(SynthesisError::Unsatisfiable)
                        })
                })
                .collect()
        };
        if round == sparse_offset {
            return dense(&constants.pre_sparse_matrix);
        }
        if round > sparse_offset && round < constants.half_full_rounds + constants.partial_rounds {
            let sparse = constants
                .sparse_matrixes
                .get(round - sparse_offset - 1)
                .ok_or(SynthesisError::Unsatisfiable)?;
            if sparse.w_hat.len() != state.len() || sparse.v_rest.len() + 1 != state.len() {
                return Err(SynthesisError::Unsatisfiable);
            }
            let first = state
                .iter()
                .zip(&sparse.w_hat)
                .fold(Scalar::ZERO, |sum, (e, w)| sum + *e * w);
            let mut next = Vec::with_capacity(state.len());
            next.push(first);
            next.extend(
                state[1..]
                    .iter()
                    .zip(&sparse.v_rest)
                    .map(|(e, v)| *e + state[0] * v),
            );
            return Ok(next);
        }
        dense(&constants.mds_matrices.m)
    }
}

#[cfg(test)]
mod tests {
    use super::poseidon_hash;
    use crate::groth16::pce::WitnessCs;
    use bellperson::gadgets::num::AllocatedNum;
    use bellperson::ConstraintSystem;
    use blstrs::Scalar;
    use ff::Field;
    use filecoin_hashers::PoseidonArity;
    use rand::SeedableRng;
    use typenum::{U11, U2, U4, U8};

    /// Hashes `arity` random elements on a witness system twice, with neptune's circuit and
    /// with ours, and returns both systems.
    fn both<A: PoseidonArity>(seed: u64) -> (WitnessCs, WitnessCs) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let values: Vec<Scalar> = (0..A::to_usize())
            .map(|_| Scalar::random(&mut rng))
            .collect();
        let run = |native: bool| {
            let mut cs: WitnessCs = WitnessCs::default();
            cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
            let preimage: Vec<_> = values
                .iter()
                .map(|v| AllocatedNum::alloc(&mut cs, || Ok(*v)).unwrap())
                .collect();
            let output = if native {
                poseidon_hash(&mut cs, &preimage, A::PARAMETERS()).unwrap()
            } else {
                neptune::circuit::poseidon_hash(&mut cs, preimage, A::PARAMETERS()).unwrap()
            };
            assert!(output.get_value().is_some());
            cs
        };
        (run(false), run(true))
    }

    fn same_witness<A: PoseidonArity>() {
        for seed in 0..3 {
            let (neptune, ours) = both::<A>(seed);
            assert_eq!(
                neptune.aux_values(),
                ours.aux_values(),
                "arity {}",
                A::to_usize()
            );
            assert_eq!(neptune.counted_constraints(), ours.counted_constraints());
            assert!(ours.counted_constraints() > 0);
        }
    }

    #[test]
    fn native_witness_is_neptunes_for_every_filecoin_arity() {
        same_witness::<U2>();
        same_witness::<U4>();
        same_witness::<U8>();
        same_witness::<U11>();
    }

    #[test]
    fn a_preimage_of_the_wrong_length_is_an_error() {
        let mut cs: WitnessCs = WitnessCs::default();
        let one = AllocatedNum::alloc(&mut cs, || Ok(Scalar::ONE)).unwrap();
        let short = vec![one.clone(); 7];
        assert!(poseidon_hash(&mut cs, &short, U8::PARAMETERS()).is_err());
        assert!(poseidon_hash(&mut cs, &[one], U2::PARAMETERS()).is_err());
    }
}
