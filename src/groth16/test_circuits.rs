//! Circuits for tests, benchmarks and the demo: a SHA-256 preimage circuit built from
//! bellperson's gadgets (what Filecoin circuits are made of) and seeded random circuits of
//! chosen shapes (inputs only, aux only, variables absent from A, empty B, sub-circuits
//! merged with `extend`).

use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::{multipack, sha256::sha256};
use bellperson::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::Digest;

/// Proves knowledge of a preimage of a public SHA-256 digest.
#[derive(Clone, Debug)]
pub struct Sha256Preimage {
    /// Length of the preimage in bytes (fixes the circuit shape).
    pub len: usize,
    /// The preimage, or `None` for a blank circuit (parameter generation).
    pub preimage: Option<Vec<u8>>,
}

impl Sha256Preimage {
    /// Preimage length filling `blocks` SHA-256 blocks exactly (about 27K constraints each).
    pub fn len_for_blocks(blocks: usize) -> usize {
        (blocks * 64).saturating_sub(9).max(1)
    }

    /// A circuit with a deterministic preimage derived from `seed`.
    pub fn with_seed(len: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let preimage = (0..len).map(|_| rng.gen()).collect();
        Self {
            len,
            preimage: Some(preimage),
        }
    }

    /// The public inputs (the digest packed into field elements) for this preimage.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        let digest = sha2::Sha256::digest(self.preimage.as_deref().unwrap_or(&[]));
        multipack::compute_multipacking(&multipack::bytes_to_bits(&digest))
    }
}

impl Circuit<Scalar> for Sha256Preimage {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits: Vec<Option<bool>> = match &self.preimage {
            Some(bytes) => multipack::bytes_to_bits(bytes)
                .into_iter()
                .map(Some)
                .collect(),
            None => vec![None; self.len * 8],
        };
        let bits = bits
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                AllocatedBit::alloc(cs.namespace(|| format!("preimage bit {i}")), b)
                    .map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let digest = sha256(cs.namespace(|| "sha256"), &bits)?;
        multipack::pack_into_inputs(cs.namespace(|| "digest"), &digest)
    }
}

/// The shape of a [`RandomCircuit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Inputs and aux in every query.
    Mixed,
    /// No aux variables at all: products are public inputs.
    InputsOnly,
    /// Only the ONE input; everything else is aux.
    AuxOnly,
    /// Half the aux variables never occur in A.
    AbsentFromA,
    /// Every B is empty (all constraints are `a * 0 = 0`): empty B densities.
    EmptyB,
    /// Built from independent parts merged with `ConstraintSystem::extend` when supported.
    Extended,
}

/// A seeded random R1CS instance that is satisfied by its own witness.
#[derive(Clone, Debug)]
pub struct RandomCircuit {
    /// The shape.
    pub shape: Shape,
    /// Constraints made by the circuit (before bellperson's input constraints).
    pub constraints: usize,
    /// Extra public inputs besides ONE (ignored by `AuxOnly`).
    pub inputs: usize,
    /// Seed for the structure (which variables, which coefficients).
    pub seed: u64,
    /// Seed for the witness values (circuits differing only here share parameters).
    pub witness_seed: u64,
    /// Breaks the witness of the first constraint (the proof must then fail to verify).
    pub wrong_witness: bool,
    /// Gives every fourth linear-combination term a zero coefficient (a term that still
    /// names its variable, as circuits built generically do).
    pub zero_coefficients: bool,
}

impl RandomCircuit {
    /// A satisfied circuit of `constraints` constraints and the given shape.
    pub fn new(shape: Shape, constraints: usize, seed: u64) -> Self {
        Self {
            shape,
            constraints,
            inputs: 3,
            seed,
            witness_seed: seed,
            wrong_witness: false,
            zero_coefficients: false,
        }
    }

    /// The same circuit shape with other witness values.
    pub fn with_witness(mut self, witness_seed: u64) -> Self {
        self.witness_seed = witness_seed;
        self
    }

    /// The public inputs this circuit allocates (without ONE), in allocation order.
    pub fn public_inputs(&self) -> Vec<Scalar> {
        let mut cs = InputCollector::default();
        self.clone()
            .synthesize(&mut cs)
            .expect("random circuits always synthesize");
        cs.inputs
    }

    fn part<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        constraints: usize,
        rng: &mut ChaCha8Rng,
        values: &mut ChaCha8Rng,
        first_part: bool,
    ) -> Result<(), SynthesisError> {
        let mut vars: Vec<(Variable, Scalar)> = vec![(CS::one(), Scalar::ONE)];
        let inputs = if self.shape == Shape::AuxOnly {
            0
        } else {
            self.inputs
        };
        for i in 0..inputs {
            let v = Scalar::random(&mut *values);
            vars.push((cs.alloc_input(|| format!("input {i}"), || Ok(v))?, v));
        }
        let base_aux = if self.shape == Shape::InputsOnly {
            0
        } else {
            4
        };
        for i in 0..base_aux {
            let v = Scalar::random(&mut *values);
            vars.push((cs.alloc(|| format!("aux {i}"), || Ok(v))?, v));
        }
        let mut hidden_from_a: Vec<bool> = vec![false; vars.len()];
        for k in 0..constraints {
            let pick = |rng: &mut ChaCha8Rng, for_a: bool| {
                let mut lc = LinearCombination::zero();
                let mut value = Scalar::ZERO;
                for term in 0..3 {
                    let mut i = rng.gen_range(0..vars.len());
                    if for_a && hidden_from_a[i] {
                        i = 0;
                    }
                    let coeff = Scalar::from(rng.gen_range(1u64..1000));
                    let zero = self.zero_coefficients && (k * 3 + term) % 4 == 0;
                    let coeff = if zero { Scalar::ZERO } else { coeff };
                    lc = lc + (coeff, vars[i].0);
                    value += vars[i].1 * coeff;
                }
                (lc, value)
            };
            let (a, va) = pick(rng, true);
            let (b, vb) = if self.shape == Shape::EmptyB {
                (LinearCombination::zero(), Scalar::ZERO)
            } else {
                pick(rng, false)
            };
            let mut product = va * vb;
            if self.wrong_witness && first_part && k == 0 {
                product += Scalar::ONE;
            }
            let z = if self.shape == Shape::InputsOnly {
                cs.alloc_input(|| format!("product {k}"), || Ok(product))?
            } else {
                cs.alloc(|| format!("product {k}"), || Ok(product))?
            };
            vars.push((z, product));
            hidden_from_a.push(self.shape == Shape::AbsentFromA && k % 2 == 0);
            cs.enforce(|| format!("constraint {k}"), |_| a, |_| b, |lc| lc + z);
        }
        Ok(())
    }
}

impl Circuit<Scalar> for RandomCircuit {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut values = ChaCha8Rng::seed_from_u64(self.witness_seed ^ 0x5eed);
        if self.shape != Shape::Extended {
            return self.part(cs, self.constraints, &mut rng, &mut values, true);
        }
        let parts = 4;
        let per_part = self.constraints.div_ceil(parts);
        for p in 0..parts {
            if CS::is_extensible() {
                let mut sub = CS::new();
                sub.alloc_input(|| "temp ONE", || Ok(Scalar::ONE))?;
                self.part(&mut sub, per_part, &mut rng, &mut values, p == 0)?;
                cs.extend(&sub);
            } else {
                self.part(cs, per_part, &mut rng, &mut values, p == 0)?;
            }
        }
        Ok(())
    }
}

/// Collects input values in allocation order (to know a circuit's public inputs).
#[derive(Default)]
struct InputCollector {
    inputs: Vec<Scalar>,
    aux: usize,
}

impl ConstraintSystem<Scalar> for InputCollector {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(bellperson::Index::Aux(
            self.aux - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(bellperson::Index::Input(
            self.inputs.len(),
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
