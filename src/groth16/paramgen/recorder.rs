//! A constraint system that records the shape of a circuit (its A, B, C terms) for parameter
//! generation; witness values are never asked for.

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

/// Tag bit that marks an input variable in a packed variable index.
const INPUT_TAG: u32 = 1 << 31;

/// One non-zero coefficient of a linear combination: `coeff * var` in constraint `row`.
#[derive(Clone, Copy)]
pub struct Term {
    /// Variable index, with `INPUT_TAG` set for inputs.
    var: u32,
    /// Constraint index.
    pub row: u32,
    /// Coefficient.
    pub coeff: Scalar,
}

impl Term {
    /// Position of the variable in the combined `inputs ++ aux` numbering.
    #[inline]
    pub fn column(&self, num_inputs: usize) -> usize {
        if self.var & INPUT_TAG != 0 {
            (self.var & !INPUT_TAG) as usize
        } else {
            num_inputs + self.var as usize
        }
    }
}

/// The recorded circuit shape.
#[derive(Default)]
pub struct ShapeRecorder {
    /// Number of public inputs (ONE included).
    pub num_inputs: usize,
    /// Number of aux variables.
    pub num_aux: usize,
    /// Number of constraints.
    pub num_constraints: usize,
    /// Terms of the A, B and C combinations, in constraint order.
    pub terms: [Vec<Term>; 3],
}

impl ShapeRecorder {
    fn record(
        &mut self,
        which: usize,
        lc: &LinearCombination<Scalar>,
    ) -> Result<(), SynthesisError> {
        let row = u32::try_from(self.num_constraints).map_err(|_| SynthesisError::Unsatisfiable)?;
        for (var, coeff) in lc.iter() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let var = match var.get_unchecked() {
                Index::Input(i) => i as u32 | INPUT_TAG,
                Index::Aux(i) => i as u32,
            };
            self.terms[which].push(Term {
                var,
                row,
                coeff: *coeff,
            });
        }
        Ok(())
    }

    /// Appends one `x_i * 0 = 0` constraint per input, as bellperson's generator and prover do.
    pub fn add_input_constraints(&mut self) {
        for i in 0..self.num_inputs {
            self.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
    }
}

impl ConstraintSystem<Scalar> for ShapeRecorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.num_inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let lcs = [
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ];
        for (which, lc) in lcs.iter().enumerate() {
            // More than 2^32 constraints cannot be proved anyway; the domain check reports it.
            let _ = self.record(which, lc);
        }
        self.num_constraints += 1;
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
