//! Witness-only synthesis: the circuit's allocations are kept, its constraints only counted
//! (`enforce` never builds the linear combinations), then the recorded R1CS turns the witness
//! into a, b and c.

use std::mem::MaybeUninit;
use std::ops::Range;

use bellperson::{Circuit, ConstraintSystem, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::Pce;
use crate::groth16::assignment::{AbcBuffers, Assignment, BufferSet};
use crate::groth16::buffer::ScalarBuf;
use crate::groth16::error::{Groth16Error, Result};
use bellperson::Index;

/// Where a witness-only system keeps its aux values, in allocation order.
pub trait AuxStore: Default + Send {
    /// Appends one value.
    fn push(&mut self, value: Scalar);
    /// Number of values held.
    fn held(&self) -> usize;
    /// Appends every value of `other`, in order.
    fn append(&mut self, other: &Self);
}

impl AuxStore for ScalarBuf {
    #[inline]
    fn push(&mut self, value: Scalar) {
        ScalarBuf::push(self, value)
    }

    fn held(&self) -> usize {
        self.len()
    }

    fn append(&mut self, other: &Self) {
        self.extend_from_slice(other)
    }
}

/// The aux store of one range of a [`PartedCircuit`]'s parts: the first `preamble_len` values
/// (its copy of the preamble, checked and dropped) go to a small vector of their own, the parts'
/// values straight into `window`, their place in the whole circuit's buffer. Values beyond the
/// window go to `spill`: all of a sub-system's (a `CS::new()` has no window), to be appended to
/// its parent in order; for a range itself, parts larger than the recording's average, and the
/// caller falls back.
#[derive(Default)]
pub struct PartWindow<'w> {
    preamble_len: usize,
    preamble: Vec<Scalar>,
    window: &'w mut [MaybeUninit<Scalar>],
    written: usize,
    spill: Vec<Scalar>,
}

impl<'w> PartWindow<'w> {
    fn new(preamble_len: usize, window: &'w mut [MaybeUninit<Scalar>]) -> Self {
        Self {
            preamble_len,
            preamble: Vec::with_capacity(preamble_len),
            window,
            ..Self::default()
        }
    }

    /// Whether the parts' values filled the window exactly.
    fn filled_exactly(&self) -> bool {
        self.written == self.window.len() && self.spill.is_empty()
    }

    /// The values in order, in up to three slices.
    fn slices(&self) -> [&[Scalar]; 3] {
        // SAFETY: the first `written` entries of the window were written by `push`.
        let written = unsafe {
            std::slice::from_raw_parts(self.window.as_ptr() as *const Scalar, self.written)
        };
        [&self.preamble, written, &self.spill]
    }
}

impl AuxStore for PartWindow<'_> {
    #[inline]
    fn push(&mut self, value: Scalar) {
        if self.preamble.len() < self.preamble_len {
            self.preamble.push(value);
        } else if let Some(slot) = self.window.get_mut(self.written) {
            slot.write(value);
            self.written += 1;
        } else {
            self.spill.push(value);
        }
    }

    fn held(&self) -> usize {
        self.preamble.len() + self.written + self.spill.len()
    }

    fn append(&mut self, other: &Self) {
        for slice in other.slices() {
            slice.iter().for_each(|v| self.push(*v));
        }
    }
}

/// A constraint system that records variable values and counts constraints.
///
/// Extensible like bellperson's prover: circuits that synthesize parts in parallel (WindowPoSt)
/// build sub-systems and `extend` this one with them, in the order the recorder saw them.
#[derive(Default)]
pub struct WitnessCs<S = ScalarBuf> {
    inputs: Vec<Scalar>,
    aux: S,
    constraints: usize,
}

impl WitnessCs {
    /// An empty system sized for `pce`'s circuit, writing aux into `aux` (the pool set's
    /// buffer, cleared first), holding the ONE input every circuit starts with.
    fn sized_for(pce: &Pce, mut aux: ScalarBuf) -> std::result::Result<Self, SynthesisError> {
        aux.clear();
        // A set from the pool already has the room; a heap buffer gets it at once, so a 32 GiB
        // partition's ~4 GiB of aux is not grown by doubling.
        aux.reserve(pce.num_aux);
        let mut cs = Self {
            inputs: Vec::with_capacity(pce.num_inputs),
            aux,
            constraints: 0,
        };
        cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
        Ok(cs)
    }
}

impl<S: AuxStore> ConstraintSystem<Scalar> for WitnessCs<S> {
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
        Ok(Variable::new_unchecked(Index::Aux(self.aux.held() - 1)))
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
        self.aux.append(&other.aux);
        self.constraints += other.constraints;
    }
}

/// A circuit made of a preamble and independent parts, so its witness can be generated in
/// parallel (a PoRep partition: its commitments, then one part per challenge).
///
/// `synthesize_parts(cs, r)` synthesizes the preamble followed by parts `r` in order; the whole
/// circuit is `0..parts()`. A part's values may depend on the preamble's values but never on
/// another part's, and the preamble allocates the same values whatever the range.
pub trait PartedCircuit: Sync {
    /// How many parts the whole circuit has.
    fn parts(&self) -> usize;

    /// Synthesizes the preamble followed by `parts`, in order.
    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: Range<usize>,
    ) -> std::result::Result<(), SynthesisError>;

    /// Synthesizes the whole circuit for a system that evaluates every constraint (the plain
    /// prover, the recorder). By default the preamble and every part in order; a circuit whose
    /// own code does that faster (in parallel on an extensible system) says so here. Either
    /// way the allocations and constraints are those of `synthesize_parts(cs, 0..parts())`.
    fn synthesize_whole<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), SynthesisError>
    where
        Self: Sized,
    {
        let parts = self.parts();
        self.synthesize_parts(cs, 0..parts)
    }
}

/// The whole of a [`PartedCircuit`] as one circuit (for the recorder and the plain prover).
pub struct WholeCircuit<P>(pub P);

impl<P: PartedCircuit> Circuit<Scalar> for WholeCircuit<P> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), SynthesisError> {
        self.0.synthesize_whole(cs)
    }
}

/// Synthesizes `circuit` into `buffers` with the recorded R1CS `pce`: the same assignment
/// [`crate::groth16::synthesize`] produces, or an error when the circuit's variables or
/// constraints differ in number from the recording.
pub fn synthesize_with_pce<C: Circuit<Scalar>>(
    circuit: C,
    pce: &Pce,
    buffers: BufferSet,
) -> Result<Assignment> {
    let t = std::time::Instant::now();
    let mut cs = WitnessCs::sized_for(pce, buffers.aux)?;
    circuit.synthesize(&mut cs)?;
    evaluate_witness(cs, pce, buffers.abc, t)
}

/// [`synthesize_with_pce`] for a [`PartedCircuit`]: the preamble once, then the parts in
/// contiguous ranges, one per thread, each after its own copy of the preamble (whose values must
/// equal the first copy's and are then dropped). The assignment is the one the whole circuit
/// gives.
///
/// Each range writes its parts' aux values straight into their place in `buffers.aux` (a
/// window sized from the recording, whose parts are alike), so the witness is neither held a
/// second time nor copied: at 32 GiB PoRep that is about 4 GiB per partition. A circuit whose
/// parts turn out unequal is synthesized again on one thread.
pub fn synthesize_parted_with_pce<P: PartedCircuit>(
    circuit: &P,
    pce: &Pce,
    buffers: BufferSet,
) -> Result<Assignment> {
    let t = std::time::Instant::now();
    let mut cs = WitnessCs::sized_for(pce, buffers.aux)?;
    circuit.synthesize_parts(&mut cs, 0..0)?;
    if !synthesize_parts_in_windows(circuit, pce, &mut cs)? {
        log::warn!(
            "a parted circuit's parts differ in size from the recording's average; \
             synthesizing it on one thread"
        );
        cs = WitnessCs::sized_for(pce, cs.aux)?;
        circuit.synthesize_parts(&mut cs, 0..circuit.parts())?;
    }
    evaluate_witness(cs, pce, buffers.abc, t)
}

/// Appends the parts of `circuit` to `cs`, which holds its preamble, in parallel ranges
/// writing into `cs.aux`'s spare room. Ok(false) when the parts do not fill their windows
/// exactly (parts of unequal size; `cs` is then unchanged but for spare room written).
fn synthesize_parts_in_windows<P: PartedCircuit>(
    circuit: &P,
    pce: &Pce,
    cs: &mut WitnessCs,
) -> Result<bool> {
    let parts = circuit.parts();
    let WitnessCs {
        inputs,
        aux,
        constraints,
    } = cs;
    // The preamble as a part's own system holds it: without the ONE input.
    let (preamble_inputs, preamble_constraints) = (inputs.len() - 1, *constraints);
    let (preamble, spare) = aux.stored_and_spare_mut();
    let body = pce.num_aux.saturating_sub(preamble.len());
    if parts == 0 || body % parts != 0 || spare.len() < body {
        return Ok(false);
    }
    let per_part = body / parts;
    let mut rest = &mut spare[..body];
    let mut windows = Vec::new();
    for range in part_ranges(parts, rayon::current_num_threads()) {
        let (window, tail) = std::mem::take(&mut rest).split_at_mut(per_part * range.len());
        windows.push((range, window));
        rest = tail;
    }
    let preamble: &[Scalar] = preamble;
    let ranges: Vec<_> = windows
        .into_par_iter()
        .map(|(range, window)| {
            let mut part = WitnessCs {
                aux: PartWindow::new(preamble.len(), window),
                ..WitnessCs::default()
            };
            circuit.synthesize_parts(&mut part, range).map(|()| part)
        })
        .collect();
    let (mut new_inputs, mut new_constraints, mut filled) = (Vec::new(), 0, true);
    for (i, part) in ranges.into_iter().enumerate() {
        let part = part?;
        let same_preamble = part.inputs.get(..preamble_inputs) == inputs.get(1..=preamble_inputs)
            && part.aux.preamble == preamble
            && part.constraints >= preamble_constraints;
        if !same_preamble {
            return Err(Groth16Error::ShapeMismatch(format!(
                "part range {i} of the circuit synthesized a different preamble"
            )));
        }
        filled &= part.aux.filled_exactly();
        new_inputs.extend_from_slice(&part.inputs[preamble_inputs..]);
        new_constraints += part.constraints - preamble_constraints;
    }
    if !filled {
        return Ok(false);
    }
    inputs.extend_from_slice(&new_inputs);
    *constraints += new_constraints;
    // SAFETY: the windows tile the first `body` scalars of the spare room, and each was
    // filled exactly (every entry written by `PartWindow::push`).
    unsafe { aux.assume_filled(body) };
    Ok(true)
}

/// `parts` split into at most `threads` contiguous ranges of near-equal length, in order.
fn part_ranges(parts: usize, threads: usize) -> Vec<Range<usize>> {
    let ranges = parts.min(threads.max(1));
    (0..ranges)
        .map(|i| i * parts / ranges..(i + 1) * parts / ranges)
        .collect()
}

/// Checks the witness `cs` against the recording and evaluates a, b and c into `abc`.
fn evaluate_witness(
    cs: WitnessCs,
    pce: &Pce,
    mut abc: AbcBuffers,
    started: std::time::Instant,
) -> Result<Assignment> {
    let witness_ms = started.elapsed().as_secs_f64() * 1e3;
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

#[cfg(test)]
mod tests {
    use super::part_ranges;

    #[test]
    fn part_ranges_cover_every_part_once_in_order() {
        for parts in 0..40 {
            for threads in 0..20 {
                let ranges = part_ranges(parts, threads);
                assert!(ranges.len() <= threads.max(1));
                let flat: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
                assert_eq!(
                    flat,
                    (0..parts).collect::<Vec<_>>(),
                    "{parts} over {threads}"
                );
                assert!(ranges.iter().all(|r| !r.is_empty()));
            }
        }
    }
}
