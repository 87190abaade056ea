//! The synthesis constraint system: runs a circuit and captures exactly what bellperson's
//! prover captures (a, b, c, inputs, aux and the three density bitmaps), into caller buffers.

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use super::assignment::{Assignment, BufferSet};
use super::density::Density;

/// A `ConstraintSystem` that evaluates every constraint as it is enforced.
///
/// It is extensible: circuits that synthesize parts in parallel (WindowPoSt) build sub-systems
/// and `extend` this one with them, as they do with bellperson's prover.
pub struct ProvingCs {
    asg: Assignment,
}

/// Evaluates a linear combination, marking the variables it uses in the given densities.
fn eval_tracked(
    lc: &LinearCombination<Scalar>,
    mut input_density: Option<&mut Density>,
    mut aux_density: Option<&mut Density>,
    inputs: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&index, coeff) in lc.iter_inputs() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += inputs[index] * coeff;
        if let Some(d) = input_density.as_deref_mut() {
            d.set(index);
        }
    }
    for (&index, coeff) in lc.iter_aux() {
        if bool::from(coeff.is_zero()) {
            continue;
        }
        acc += aux[index] * coeff;
        if let Some(d) = aux_density.as_deref_mut() {
            d.set(index);
        }
    }
    acc
}

impl ProvingCs {
    /// A constraint system writing a/b/c and aux into `buffers` (cleared first).
    pub fn with_buffers(mut buffers: BufferSet) -> Self {
        buffers.clear();
        Self {
            asg: Assignment {
                abc: buffers.abc,
                aux: buffers.aux,
                ..Assignment::default()
            },
        }
    }

    /// Finishes synthesis: adds one `x_i * 0 = 0` constraint per input (what makes the
    /// inputs linearly independent in the QAP) and returns the captured assignment.
    pub fn finish(mut self) -> Assignment {
        for i in 0..self.asg.inputs.len() {
            self.enforce(
                || "",
                |lc| lc + Variable::new_unchecked(Index::Input(i)),
                |lc| lc,
                |lc| lc,
            );
        }
        self.asg
    }
}

impl ConstraintSystem<Scalar> for ProvingCs {
    type Root = Self;

    fn new() -> Self {
        Self::with_buffers(BufferSet::default())
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.asg.aux.push(f()?);
        self.asg.a_aux_density.push_unset();
        self.asg.b_aux_density.push_unset();
        Ok(Variable::new_unchecked(Index::Aux(self.asg.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.asg.inputs.push(f()?);
        self.asg.b_input_density.push_unset();
        Ok(Variable::new_unchecked(Index::Input(
            self.asg.inputs.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let asg = &mut self.asg;
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let a = eval_tracked(
            &a,
            None,
            Some(&mut asg.a_aux_density),
            &asg.inputs,
            &asg.aux,
        );
        let b = eval_tracked(
            &b,
            Some(&mut asg.b_input_density),
            Some(&mut asg.b_aux_density),
            &asg.inputs,
            &asg.aux,
        );
        let c = eval_tracked(&c, None, None, &asg.inputs, &asg.aux);
        asg.abc.a.push(a);
        asg.abc.b.push(b);
        asg.abc.c.push(c);
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
        let (me, other) = (&mut self.asg, &other.asg);
        me.a_aux_density.extend_from(&other.a_aux_density, false);
        me.b_input_density.extend_from(&other.b_input_density, true);
        me.b_aux_density.extend_from(&other.b_aux_density, false);
        me.abc.a.extend_from_slice(&other.abc.a);
        me.abc.b.extend_from_slice(&other.abc.b);
        me.abc.c.extend_from_slice(&other.abc.c);
        // The sub-system's first input is its own copy of ONE.
        me.inputs
            .extend_from_slice(other.inputs.get(1..).unwrap_or(&[]));
        me.aux.extend_from_slice(&other.aux);
    }
}

/// Synthesizes `circuit` into `buffers` the way bellperson's prover does: ONE, the circuit,
/// then one constraint per input.
pub fn synthesize<C: Circuit<Scalar>>(circuit: C, buffers: BufferSet) -> super::Result<Assignment> {
    let mut cs = ProvingCs::with_buffers(buffers);
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs.finish())
}
