//! Witness-only synthesis: the circuit's allocations are kept, its constraints only counted
//! (`enforce` never builds the linear combinations), then the recorded R1CS turns the witness
//! into a, b and c.

use bellperson::{Circuit, ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::Pce;
use crate::groth16::assignment::{AbcBuffers, Assignment};
use crate::groth16::error::{Groth16Error, Result};
use bellperson::Index;

/// A constraint system that records variable values and counts constraints.
///
/// Extensible like bellperson's prover: circuits that synthesize parts in parallel (WindowPoSt)
/// build sub-systems and `extend` this one with them, in the order the recorder saw them.
#[derive(Default)]
pub struct WitnessCs {
    inputs: Vec<Scalar>,
    aux: Vec<Scalar>,
    constraints: usize,
}

impl WitnessCs {
    fn with_capacity(inputs: usize, aux: usize) -> Self {
        Self {
            inputs: Vec::with_capacity(inputs),
            aux: Vec::with_capacity(aux),
            constraints: 0,
        }
    }
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    fn new() -> Self {
        Self::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.inputs.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(bellperson::LinearCombination<Scalar>) -> bellperson::LinearCombination<Scalar>,
        LB: FnOnce(bellperson::LinearCombination<Scalar>) -> bellperson::LinearCombination<Scalar>,
        LC: FnOnce(bellperson::LinearCombination<Scalar>) -> bellperson::LinearCombination<Scalar>,
    {
        self.constraints += 1;
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

    fn is_extensible() -> bool {
        true
    }

    fn extend(&mut self, other: &Self) {
        // The sub-system's first input is its own copy of ONE.
        self.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or(&[]));
        self.aux.extend_from_slice(&other.aux);
        self.constraints += other.constraints;
    }
}

/// Synthesizes `circuit` into `abc` with the recorded R1CS `pce`: the same assignment
/// [`crate::groth16::synthesize`] produces, or an error when the circuit's variables or
/// constraints differ in number from the recording.
pub fn synthesize_with_pce<C: Circuit<Scalar>>(
    circuit: C,
    pce: &Pce,
    mut abc: AbcBuffers,
) -> Result<Assignment> {
    let t = std::time::Instant::now();
    let mut cs = WitnessCs::with_capacity(pce.num_inputs, pce.num_aux);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    let witness_ms = t.elapsed().as_secs_f64() * 1e3;
    // One `x_i * 0 = 0` constraint per input follows the circuit's own.
    let constraints = cs.constraints + cs.inputs.len();
    if (cs.inputs.len(), cs.aux.len(), constraints)
        != (pce.num_inputs, pce.num_aux, pce.num_constraints)
    {
        return Err(Groth16Error::ShapeMismatch(format!(
            "the circuit has {} inputs, {} aux and {constraints} constraints; its recorded \
             constraint system has {}, {} and {}",
            cs.inputs.len(),
            cs.aux.len(),
            pce.num_inputs,
            pce.num_aux,
            pce.num_constraints
        )));
    }
    let t = std::time::Instant::now();
    pce.evaluate(&cs.inputs, &cs.aux, &mut abc)?;
    log::debug!(
        "PCE synthesis: witness_ms={witness_ms:.1} spmv_ms={:.1} constraints={constraints}",
        t.elapsed().as_secs_f64() * 1e3
    );
    Ok(Assignment {
        abc,
        inputs: cs.inputs,
        aux: cs.aux,
        a_aux_density: pce.a_aux_density.clone(),
        b_input_density: pce.b_input_density.clone(),
        b_aux_density: pce.b_aux_density.clone(),
    })
}
