//! The constraint system that records a circuit's R1CS: the A, B and C matrices in compressed
//! form, interned coefficients and the density bitmaps. Witness values are never asked for, so
//! it runs on blank circuits. The parameter generator and the PCE share it: both see exactly
//! the shape bellperson's generator sees.

use std::collections::HashMap;
use std::ops::Range;

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::matrix::{Coeff, Matrices, SparseMatrix};
use super::replicate::Layout;
use super::witness::{PartedCircuit, WholeCircuit};
use super::{Pce, Rows};

/// Records A, B and C row by row as constraints are enforced.
pub struct ShapeRecorder {
    pce: Pce,
    /// The rows recorded so far (moved into `pce` by `finish`).
    rows: Matrices,
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
            rows: Matrices::default(),
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
            Which::A => &mut self.rows.a,
            Which::B => &mut self.rows.b,
            Which::C => &mut self.rows.c,
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
        self.pce.rows = Rows::Flat(self.rows);
        Ok(self.pce)
    }
}

/// Records `circuit`'s R1CS the way bellperson's generator sees it: the ONE input, the circuit,
/// then one constraint per input.
pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<Pce, SynthesisError> {
    record_with(|recorder| circuit.synthesize(recorder))
}

/// Records the preamble and `parts` of `circuit` as [`record`] records a circuit made of them.
fn record_parts<P: PartedCircuit>(circuit: &P, parts: Range<usize>) -> Result<Pce, SynthesisError> {
    record_with(|recorder| circuit.synthesize_parts(recorder, parts))
}

/// ONE, what `synthesize` adds, then one constraint per input.
fn record_with(
    synthesize: impl FnOnce(&mut ShapeRecorder) -> Result<(), SynthesisError>,
) -> Result<Pce, SynthesisError> {
    let mut recorder = ShapeRecorder::default();
    recorder.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    synthesize(&mut recorder)?;
    recorder.add_input_constraints();
    recorder.finish()
}

/// A parted circuit needs at least this many parts for [`replicate_parts`] to save time: it
/// records the preamble and two parts three times over.
const FEWEST_PARTS_TO_REPLICATE: usize = 3;

/// `circuit`'s R1CS built from the recordings of its preamble and its first one and two parts
/// (see [`super::replicate`]), if its parts are alike: the layout taken from the preamble and
/// one part, replicated to two parts, must give exactly the recording of two, and the last
/// part must record as the first. Ok(None) when they are not alike, or too few to gain from
/// it.
pub fn replicate_parts<P: PartedCircuit>(circuit: &P) -> Result<Option<Pce>, SynthesisError> {
    let parts = circuit.parts();
    if parts < FEWEST_PARTS_TO_REPLICATE {
        return Ok(None);
    }
    let alike = replicate_alike_parts(circuit, parts)?;
    if alike.is_none() {
        log::warn!("the parts of a {parts}-part circuit are not alike: recording it whole");
    }
    Ok(alike)
}

/// [`replicate_parts`] for a circuit of `parts` parts (at least 2); None if they differ.
fn replicate_alike_parts<P: PartedCircuit>(
    circuit: &P,
    parts: usize,
) -> Result<Option<Pce>, SynthesisError> {
    let preamble = record_parts(circuit, 0..0)?;
    let one_part = record_parts(circuit, 0..1)?;
    let Some(layout) = Layout::new(&preamble, &one_part) else {
        return Ok(None);
    };
    let two_parts = record_parts(circuit, 0..2)?;
    if layout.replicate(&one_part, 2).map(Pce::into_flat).as_ref() != Some(&two_parts) {
        return Ok(None);
    }
    // The last part after the preamble must record as the first does (its variables take the
    // same places): a circuit whose parts change along the way is not replicated.
    if record_parts(circuit, parts - 1..parts)? != one_part {
        return Ok(None);
    }
    Ok(layout.replicate(&one_part, parts))
}

/// Records a [`PartedCircuit`] as [`record`] records `WholeCircuit(circuit)`, from one part
/// when its parts are alike ([`replicate_parts`]; a 32 GiB WindowPoSt partition in seconds
/// instead of minutes), else constraint by constraint.
pub fn record_parted<P: PartedCircuit>(circuit: P) -> Result<Pce, SynthesisError> {
    match replicate_parts(&circuit)? {
        Some(pce) => Ok(pce),
        None => record(WholeCircuit(circuit)),
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
