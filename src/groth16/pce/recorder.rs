//! The constraint system that records a circuit's R1CS: the A, B and C matrices in compressed
//! form, interned coefficients and the density bitmaps. Witness values are never asked for, so
//! it runs on blank circuits. The parameter generator and the PCE share it: both see exactly
//! the shape bellperson's generator sees.

use std::collections::HashMap;

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::matrix::{Coeff, SparseMatrix};
use super::Pce;

/// Records A, B and C row by row as constraints are enforced.
pub struct ShapeRecorder {
    pce: Pce,
    interned: HashMap<[u8; 32], u32>,
    minus_one: Scalar,
    /// Scratch for one row's terms (column, coefficient).
    row: Vec<(u64, Coeff)>,
    /// More variables than the column space holds (reported by `finish`).
    overflow: bool,
}

impl Default for ShapeRecorder {
    fn default() -> Self {
        Self {
            pce: Pce::default(),
            interned: HashMap::new(),
            minus_one: -Scalar::ONE,
            row: Vec::new(),
            overflow: false,
        }
    }
}

/// Which matrix a linear combination belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    A,
    B,
    C,
}

impl ShapeRecorder {
    fn coeff(&mut self, value: &Scalar) -> Coeff {
        if *value == Scalar::ONE {
            return Coeff::One;
        }
        if *value == self.minus_one {
            return Coeff::MinusOne;
        }
        let table = &mut self.pce.coeffs;
        let index = *self.interned.entry(value.to_bytes_le()).or_insert_with(|| {
            table.push(*value);
            (table.len() - 1) as u32
        });
        Coeff::Table(index)
    }

    fn record(&mut self, which: Which, lc: &LinearCombination<Scalar>) {
        let mut row = std::mem::take(&mut self.row);
        row.clear();
        for (&index, coeff) in lc.iter_inputs() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            row.push((index as u64, self.coeff(coeff)));
            if which == Which::B {
                self.pce.b_input_density.set(index);
            }
        }
        for (&index, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            // The input count can still grow, so aux columns start at a fixed `AUX_BASE`.
            row.push((super::AUX_BASE + index as u64, self.coeff(coeff)));
            match which {
                Which::A => self.pce.a_aux_density.set(index),
                Which::B => self.pce.b_aux_density.set(index),
                Which::C => {}
            }
        }
        let matrix: &mut SparseMatrix = match which {
            Which::A => &mut self.pce.a,
            Which::B => &mut self.pce.b,
            Which::C => &mut self.pce.c,
        };
        matrix.push_row(&row);
        self.row = row;
    }

    /// Appends one `x_i * 0 = 0` constraint per input, as bellperson's generator and prover do.
    fn add_input_constraints(&mut self) {
        for i in 0..self.pce.num_inputs {
            self.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
    }

    /// The recorded R1CS.
    pub fn finish(mut self) -> Result<Pce, SynthesisError> {
        if self.overflow {
            // More than 2^40 variables cannot be proved anyway.
            return Err(SynthesisError::Unsatisfiable);
        }
        self.pce.coeffs.shrink_to_fit();
        Ok(self.pce)
    }
}

/// Records `circuit`'s R1CS the way bellperson's generator sees it: the ONE input, the circuit,
/// then one constraint per input.
pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Pce, SynthesisError> {
    let mut recorder = ShapeRecorder::default();
    recorder.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut recorder)?;
    recorder.add_input_constraints();
    recorder.finish()
}

impl ConstraintSystem<Scalar> for ShapeRecorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let pce = &mut self.pce;
        pce.num_aux += 1;
        pce.a_aux_density.push_unset();
        pce.b_aux_density.push_unset();
        self.overflow |= pce.num_aux as u64 >= super::AUX_BASE;
        Ok(Variable::new_unchecked(Index::Aux(pce.num_aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        let pce = &mut self.pce;
        pce.num_inputs += 1;
        pce.b_input_density.push_unset();
        self.overflow |= pce.num_inputs as u64 >= super::AUX_BASE;
        Ok(Variable::new_unchecked(Index::Input(pce.num_inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        self.record(Which::A, &a(LinearCombination::zero()));
        self.record(Which::B, &b(LinearCombination::zero()));
        self.record(Which::C, &c(LinearCombination::zero()));
        self.pce.num_constraints += 1;
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
