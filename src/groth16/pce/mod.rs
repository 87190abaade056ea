//! Pre-compiled constraint evaluation (PCE): a circuit's R1CS recorded once per shape, so that
//! synthesizing a partition is witness generation plus a parallel sparse matrix-vector product.
//!
//! bellperson's prover builds every linear combination of every constraint (allocations,
//! sorting, merging) for every proof, on one thread. The A, B and C matrices and the density
//! bitmaps depend only on the circuit's shape (kind and sector size), so cuzk records them once
//! ([`recorder::record`], on a blank circuit), keeps them resident beside the parameters, and per
//! partition runs the circuit through [`witness::WitnessCs`] (allocations only; `enforce` builds
//! nothing) and then [`Pce::evaluate`] writes a = A·z, b = B·z, c = C·z straight into the pool's
//! buffers, chunk-parallel. A witness run that does not match the recorded shape is an error.

pub mod file;
pub mod matrix;
pub mod recorder;
pub mod replicate;
pub mod values;
pub mod witness;

use std::sync::{Arc, Condvar, Mutex};

use blstrs::Scalar;

use super::assignment::AbcBuffers;
use super::buffer::ScalarBuf;
use super::density::Density;
use super::error::{Groth16Error, Result};
use super::shape::CircuitShape;
pub use matrix::{Coeff, Matrices};
pub use replicate::Repeated;

pub use recorder::{record, record_parted, replicate_parts};
pub use witness::{
    parted_fallbacks, synthesize_parted_with_pce, synthesize_with_pce, LearnedPreamble,
    PartedCircuit, PreambleShape, WholeCircuit, WitnessCs,
};

/// First column of aux variables: inputs are columns `0..num_inputs`, aux variable i is column
/// `AUX_BASE + i` (the input count is not final while a circuit is recorded).
pub const AUX_BASE: u64 = 1 << 40;

/// A circuit's recorded R1CS: what every partition of its shape shares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pce {
    /// Public inputs, ONE included.
    pub num_inputs: usize,
    /// Private variables.
    pub num_aux: usize,
    /// Constraints, one per input included.
    pub num_constraints: usize,
    /// Interned coefficients other than 1 and -1.
    pub coeffs: Vec<Scalar>,
    /// The rows of A, B and C.
    pub rows: Rows,
    /// Aux variables that occur in A.
    pub a_aux_density: Density,
    /// Inputs that occur in B.
    pub b_input_density: Density,
    /// Aux variables that occur in B.
    pub b_aux_density: Density,
    /// The preamble's size, learned by the first parted synthesis with this PCE (not saved).
    pub preamble: LearnedPreamble,
}

/// How a PCE holds its rows.
#[derive(Clone, Debug, PartialEq)]
// One per resident circuit: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum Rows {
    /// Every row, as recorded.
    Flat(Matrices),
    /// A circuit of alike parts (a PoSt partition: one per sector), kept as its preamble's
    /// rows and one part's: 2 MB instead of 3.2 GB for 32 GiB WindowPoSt.
    Repeated(Repeated),
}

impl Default for Rows {
    fn default() -> Self {
        Rows::Flat(Matrices::default())
    }
}

impl Pce {
    /// The circuit's size.
    pub fn shape(&self) -> CircuitShape {
        CircuitShape {
            constraints: self.num_constraints,
            inputs: self.num_inputs,
            aux: self.num_aux,
        }
    }

    /// Terms of the three matrices (of every row, also those a repeated PCE does not store).
    pub fn nonzeros(&self) -> u64 {
        match &self.rows {
            Rows::Flat(m) => m.nonzeros(),
            Rows::Repeated(r) => r.nonzeros(self.num_inputs),
        }
    }

    /// Bytes held in memory (matrices, coefficient table, densities): what the budget charges.
    pub fn byte_size(&self) -> usize {
        let matrices = match &self.rows {
            Rows::Flat(m) => m.byte_size(),
            Rows::Repeated(r) => r.byte_size(),
        };
        matrices
            + self.coeffs.len() * std::mem::size_of::<Scalar>()
            + self.a_aux_density.byte_size()
            + self.b_input_density.byte_size()
            + self.b_aux_density.byte_size()
    }

    /// Calls `term(row, column, coeff)` for every term of matrix `which` (0: A, 1: B, 2: C)
    /// in row order: of every row, also those a repeated PCE does not store.
    pub fn for_each_term(&self, which: usize, term: impl FnMut(usize, u64, Coeff)) {
        match &self.rows {
            Rows::Flat(m) => m.each()[which].for_each_term(term),
            Rows::Repeated(r) => r.for_each_term(which, self.num_inputs, term),
        }
    }

    /// The same R1CS with every row stored: a repeated PCE expanded (for the parameter
    /// generator, and to compare with a recording); a flat one as it is.
    pub fn into_flat(self) -> Pce {
        match &self.rows {
            Rows::Flat(_) => self,
            Rows::Repeated(r) => Pce {
                rows: Rows::Flat(r.flatten(self.num_inputs)),
                ..self
            },
        }
    }

    /// Checks a PCE read from outside (every term decodes to an existing variable and
    /// coefficient, counts and densities agree), so evaluation can never index out of bounds.
    pub fn validate(&self) -> std::result::Result<(), String> {
        match &self.rows {
            Rows::Flat(m) => {
                let (inputs, aux) = (self.num_inputs as u64, self.num_aux as u64);
                let exists = |c: u64| c < inputs || (AUX_BASE..AUX_BASE + aux).contains(&c);
                m.validate(self.num_constraints, exists, self.coeffs.len())?
            }
            Rows::Repeated(r) => r.validate(self.shape(), self.coeffs.len())?,
        }
        if self.a_aux_density.len() != self.num_aux
            || self.b_aux_density.len() != self.num_aux
            || self.b_input_density.len() != self.num_inputs
        {
            return Err("density lengths differ from the variable counts".into());
        }
        if self.num_inputs == 0 || self.num_constraints < self.num_inputs {
            return Err(format!(
                "{} inputs and {} constraints cannot be a circuit",
                self.num_inputs, self.num_constraints
            ));
        }
        Ok(())
    }

    /// Writes a = A·z, b = B·z, c = C·z into `abc` (cleared first), z = inputs ++ aux, in
    /// parallel over chunks of rows.
    pub fn evaluate(&self, inputs: &[Scalar], aux: &[Scalar], abc: &mut AbcBuffers) -> Result<()> {
        if inputs.len() != self.num_inputs || aux.len() != self.num_aux {
            return Err(Groth16Error::ShapeMismatch(format!(
                "witness has {} inputs and {} aux, the recorded circuit {} and {}",
                inputs.len(),
                aux.len(),
                self.num_inputs,
                self.num_aux
            )));
        }
        let n = self.num_constraints;
        // Every row is written exactly once, so the rows go straight into the buffers' spare
        // room, never zero-filled first.
        fn rows(v: &mut ScalarBuf, n: usize) -> &mut [std::mem::MaybeUninit<Scalar>] {
            v.clear();
            v.reserve(n);
            &mut v.stored_and_spare_mut().1[..n]
        }
        let (a_rows, b_rows, c_rows) = (
            rows(&mut abc.a, n),
            rows(&mut abc.b, n),
            rows(&mut abc.c, n),
        );
        let z = &values::Witness::new(inputs, aux);
        let out = [a_rows, b_rows, c_rows];
        match &self.rows {
            Rows::Flat(m) => m.evaluate(&self.coeffs, z, matrix::Shift::NONE, out),
            Rows::Repeated(r) => r.evaluate(&self.coeffs, z, inputs, out),
        }
        for v in [&mut abc.a, &mut abc.b, &mut abc.c] {
            // SAFETY: the evaluation wrote every one of the first `n` scalars of each buffer's
            // spare room (one per row).
            unsafe { v.assume_filled(n) };
        }
        Ok(())
    }
}

#[derive(Default)]
enum SlotState {
    #[default]
    Absent,
    Building,
    Ready(Arc<Pce>),
}

/// Where the PCE of one parameter set lives: empty, being built (by a caller or in the
/// background) or ready. Shared (`Arc`) so a background recording can attach its result
/// without holding the parameters themselves.
#[derive(Default)]
pub struct PceSlot {
    state: Mutex<SlotState>,
    built: Condvar,
}

impl PceSlot {
    fn lock(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The PCE, if it is ready.
    pub fn get(&self) -> Option<Arc<Pce>> {
        match &*self.lock() {
            SlotState::Ready(pce) => Some(Arc::clone(pce)),
            _ => None,
        }
    }

    /// Bytes of the ready PCE (0 while none is).
    pub fn bytes(&self) -> usize {
        self.get().map_or(0, |p| p.byte_size())
    }

    /// Claims the build: true (and the slot marked building) when nothing is ready or being
    /// built; the caller must then call [`PceSlot::finish`].
    pub fn claim(&self) -> bool {
        let mut state = self.lock();
        if matches!(*state, SlotState::Absent) {
            *state = SlotState::Building;
            true
        } else {
            false
        }
    }

    /// Ends a claimed build: attaches `pce`, or with None leaves the slot empty for a later try.
    pub fn finish(&self, pce: Option<Pce>) -> Option<Arc<Pce>> {
        let pce = pce.map(Arc::new);
        *self.lock() = match &pce {
            Some(p) => SlotState::Ready(Arc::clone(p)),
            None => SlotState::Absent,
        };
        self.built.notify_all();
        pce
    }

    /// The PCE, building it with `build` when nothing is ready; waits for a build already
    /// under way (by another caller or in the background).
    pub fn get_or_build<E>(
        &self,
        build: impl FnOnce() -> std::result::Result<Pce, E>,
    ) -> std::result::Result<Arc<Pce>, E> {
        let mut state = self.lock();
        loop {
            match &*state {
                SlotState::Ready(pce) => return Ok(Arc::clone(pce)),
                SlotState::Building => {
                    state = self.built.wait(state).unwrap_or_else(|p| p.into_inner());
                }
                SlotState::Absent => break,
            }
        }
        *state = SlotState::Building;
        drop(state);
        match build() {
            Ok(pce) => Ok(self.finish(Some(pce)).expect("just attached")),
            Err(e) => {
                self.finish(None);
                Err(e)
            }
        }
    }
}
