//! A parted test circuit shared by the test binaries that check parallel (parted) synthesis.

use bellperson::{ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar;
use cuzk::groth16::PartedCircuit;

/// A parted circuit: the preamble squares a public seed; part i multiplies the square plus i by
/// constants in a chain of `steps` steps (1 to 3 with `unequal_parts`) and makes the end a public
/// input. The constants are 2, 3, ... or, with `part_factors`, i + 2, i + 3, ... (then no two
/// parts have the same coefficients). With `preamble_depends_on_range`, the preamble's seed
/// moves with the first part synthesized: a circuit that breaks [`PartedCircuit`]'s contract.
/// With `shared_preamble`, the parts can follow one preamble synthesized once.
#[derive(Clone, Copy)]
pub struct Chains {
    pub seed: u64,
    pub parts: usize,
    pub steps: usize,
    pub unequal_parts: bool,
    pub part_factors: bool,
    pub preamble_depends_on_range: bool,
    pub shared_preamble: bool,
}

impl Chains {
    /// The preamble for a range starting at part `first`: x^2's variable and value.
    fn preamble<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        first: usize,
    ) -> Result<(Variable, Scalar), SynthesisError> {
        let shift = if self.preamble_depends_on_range {
            first as u64
        } else {
            0
        };
        let x = Scalar::from(self.seed + shift);
        let x_var = cs.alloc_input(|| "x", || Ok(x))?;
        let square = x * x;
        let square_var = cs.alloc(|| "x^2", || Ok(square))?;
        cs.enforce(
            || "square",
            |l| l + x_var,
            |l| l + x_var,
            |l| l + square_var,
        );
        Ok((square_var, square))
    }
}

impl PartedCircuit for Chains {
    type Preamble = (Variable, Scalar);

    fn parts(&self) -> usize {
        self.parts
    }

    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: std::ops::Range<usize>,
    ) -> Result<(), SynthesisError> {
        let preamble = self.preamble(cs, parts.start)?;
        self.synthesize_parts_after(cs, &preamble, parts)
    }

    fn synthesize_preamble<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
    ) -> Result<Option<Self::Preamble>, SynthesisError> {
        match self.shared_preamble {
            true => self.preamble(cs, 0).map(Some),
            false => Ok(None),
        }
    }

    fn synthesize_parts_after<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        &(square_var, square): &Self::Preamble,
        parts: std::ops::Range<usize>,
    ) -> Result<(), SynthesisError> {
        for i in parts {
            // Each part starts from x^2 + i: alike constraints, values of its own.
            let offset = Scalar::from(i as u64);
            let offset_var = cs.alloc(|| "offset", || Ok(offset))?;
            let start = square + offset;
            let start_var = cs.alloc(|| "start", || Ok(start))?;
            cs.enforce(
                || "start",
                |l| l + square_var + offset_var,
                |l| l + CS::one(),
                |l| l + start_var,
            );
            let (mut value, mut var) = (start, start_var);
            let steps = if self.unequal_parts {
                1 + i % 3
            } else {
                self.steps
            };
            for step in 0..steps {
                let first = if self.part_factors { i } else { 0 };
                let factor = Scalar::from((first + step + 2) as u64);
                let next = value * factor;
                let next_var = cs.alloc(|| "step", || Ok(next))?;
                cs.enforce(
                    || "step",
                    |l| l + var,
                    |l| l + (factor, CS::one()),
                    |l| l + next_var,
                );
                (value, var) = (next, next_var);
            }
            let out = cs.alloc_input(|| "end", || Ok(value))?;
            cs.enforce(|| "end", |l| l + var, |l| l + CS::one(), |l| l + out);
        }
        Ok(())
    }
}
