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

/// A constraint system that records variable values and counts constraints: a witness
/// generator in bellpepper's terms.
///
/// Extensible like bellperson's prover: circuits that synthesize parts in parallel (WindowPoSt)
/// build sub-systems and `extend` this one with them, in the order the recorder saw them.
#[derive(Default)]
pub struct WitnessCs<S = ScalarBuf> {
    pub(super) inputs: Vec<Scalar>,
    pub(super) aux: S,
    pub(super) constraints: usize,
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

    /// The aux values allocated so far, in order.
    pub fn aux_values(&self) -> &[Scalar] {
        &self.aux
    }
}

impl<S> WitnessCs<S> {
    /// The constraints counted so far (none is built).
    pub fn counted_constraints(&self) -> usize {
        self.constraints
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

    /// Tells gadgets that read it (cuzk's own Poseidon and SHA-256, `proofs::poseidon` and
    /// `proofs::sha256`) that no constraint is ever read here, so they may compute their values
    /// without building linear combinations.
    fn is_witness_generator(&self) -> bool {
        true
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.inputs.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        new_aux.iter().for_each(|value| self.aux.push(*value));
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
    /// What the parts read from a preamble synthesized once (its outputs: allocated numbers
    /// and bits, with their values), for a circuit that offers
    /// [`PartedCircuit::synthesize_preamble`]; `()` for one whose every range synthesizes its
    /// own copy of the preamble.
    type Preamble: Sync;

    /// How many parts the whole circuit has.
    fn parts(&self) -> usize;

    /// Synthesizes the preamble followed by `parts`, in order.
    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: Range<usize>,
    ) -> std::result::Result<(), SynthesisError>;

    /// Synthesizes the preamble alone and returns what the parts read from it, so that the
    /// ranges of parts can start from it, each in a system of its own, instead of each
    /// synthesizing a copy of it: for a circuit whose preamble is a large share of the work (a
    /// 32 GiB SnapDeals partition's apex tree). None, the default, for a circuit that cannot
    /// (its ranges then synthesize their own copies). Called only on a system that keeps
    /// values alone (a witness-only system), so the preamble may spread its own work over
    /// sub-systems whose variables the parent never reads.
    fn synthesize_preamble<CS: ConstraintSystem<Scalar>>(
        &self,
        _cs: &mut CS,
    ) -> std::result::Result<Option<Self::Preamble>, SynthesisError> {
        Ok(None)
    }

    /// Synthesizes `parts`, in order, after the preamble whose outputs are `preamble`. `cs` may
    /// be another system than the preamble's only if it keeps values alone (a witness-only
    /// system): the outputs' variables are the preamble system's. Called only for a circuit
    /// whose `synthesize_preamble` gave Some.
    fn synthesize_parts_after<CS: ConstraintSystem<Scalar>>(
        &self,
        _cs: &mut CS,
        _preamble: &Self::Preamble,
        _parts: Range<usize>,
    ) -> std::result::Result<(), SynthesisError> {
        Err(SynthesisError::AssignmentMissing)
    }

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

/// [`synthesize_with_pce`] for a [`PartedCircuit`]: the parts in contiguous ranges, one per
/// thread, each after its own copy of the preamble (the first range's copy is the witness's
/// preamble; the others' must equal it and are then dropped), or, for a circuit that shares
/// one, all after one preamble synthesized first. The assignment is the one the whole circuit
/// gives.
///
/// Each range writes its values straight into their place in `buffers.aux` (a window sized from
/// the recording, whose parts are alike, and from the preamble's size, learned by the first
/// synthesis with `pce` from a preamble run alone), so the witness is neither held a second
/// time nor copied: at 32 GiB PoRep that is about 4 GiB per partition. A circuit whose parts
/// turn out unequal is synthesized again on one thread.
pub fn synthesize_parted_with_pce<P: PartedCircuit>(
    circuit: &P,
    pce: &Pce,
    buffers: BufferSet,
) -> Result<Assignment> {
    let t = std::time::Instant::now();
    let mut aux = buffers.aux;
    let (preamble, learned) = match pce.preamble.get() {
        Some(known) => (*known, false),
        None => {
            let mut cs = WitnessCs::sized_for(pce, aux)?;
            circuit.synthesize_parts(&mut cs, 0..0)?;
            log::debug!(
                "preamble alone (first use of this PCE): witness_ms={:.1}",
                t.elapsed().as_secs_f64() * 1e3
            );
            aux = cs.aux;
            let shape = PreambleShape {
                inputs: cs.inputs.len() - 1,
                aux: aux.len(),
                constraints: cs.constraints,
            };
            (shape, true)
        }
    };
    let mut cs = WitnessCs::sized_for(pce, aux)?;
    if !synthesize_ranges_in_windows(circuit, pce, preamble, &mut cs)? {
        PARTED_FALLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        log::warn!(
            "a parted circuit's parts differ in size from the recording's average; \
             synthesizing it on one thread"
        );
        cs = WitnessCs::sized_for(pce, cs.aux)?;
        circuit.synthesize_parts(&mut cs, 0..circuit.parts())?;
    }
    let assignment = evaluate_witness(cs, pce, buffers.abc, t)?;
    if learned {
        // Kept only once a whole witness matched the recording; a racing first use sets the
        // same shape, so losing the race changes nothing.
        let _ = pce.preamble.set(preamble);
    }
    Ok(assignment)
}

/// The size of a [`PartedCircuit`]'s preamble: what every range synthesizes before its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreambleShape {
    /// Public inputs, without ONE.
    pub inputs: usize,
    /// Private variables.
    pub aux: usize,
    /// Constraints.
    pub constraints: usize,
}

/// The preamble shape a PCE's parted circuits have, learned by their first synthesis with it
/// (a run of the preamble alone) so later ones can start every range at once. Not saved with
/// the PCE and not part of its equality: it is a cache of what the circuit does.
#[derive(Clone, Debug, Default)]
pub struct LearnedPreamble(std::sync::OnceLock<PreambleShape>);

impl LearnedPreamble {
    /// The shape, once learned.
    pub fn get(&self) -> Option<&PreambleShape> {
        self.0.get()
    }

    /// Keeps `shape` unless one is kept already (Err then).
    pub fn set(&self, shape: PreambleShape) -> std::result::Result<(), PreambleShape> {
        self.0.set(shape)
    }
}

impl PartialEq for LearnedPreamble {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Parted syntheses that fell back to one thread (see [`parted_fallbacks`]).
static PARTED_FALLBACKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many parted syntheses in this process fell back to one thread because their parts did
/// not fill the recording's windows: never a wrong witness, but a circuit whose parts are not
/// alike loses its parallel speed-up, which an operator (and a test) should see.
pub fn parted_fallbacks() -> usize {
    PARTED_FALLBACKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Synthesizes the whole of `circuit` into the empty `cs` in parallel ranges of parts, each
/// writing into its window of `cs.aux`'s spare room: the first range's window holds the
/// preamble too, synthesized once before every range if the circuit shares it. Ok(false) when
/// a range does not fill its window exactly (parts of unequal size, or a preamble of another
/// size than `preamble`); `cs` is then unchanged but for spare room written.
fn synthesize_ranges_in_windows<P: PartedCircuit>(
    circuit: &P,
    pce: &Pce,
    preamble: PreambleShape,
    cs: &mut WitnessCs,
) -> Result<bool> {
    let parts = circuit.parts();
    let WitnessCs {
        inputs,
        aux,
        constraints,
    } = cs;
    let spare = aux.stored_and_spare_mut().1;
    let body = pce.num_aux.saturating_sub(preamble.aux);
    if parts == 0 || !body.is_multiple_of(parts) || spare.len() < pce.num_aux || inputs.len() != 1 {
        return Ok(false);
    }
    let per_part = body / parts;
    let ranges = part_ranges(parts, rayon::current_num_threads());
    // Each range's window: its parts' values, and the first's the preamble's before them.
    let mut rest = &mut spare[..pce.num_aux];
    let mut windows = Vec::with_capacity(ranges.len());
    for (i, range) in ranges.iter().enumerate() {
        let length = per_part * range.len() + if i == 0 { preamble.aux } else { 0 };
        let (window, tail) = std::mem::take(&mut rest).split_at_mut(length);
        windows.push(window);
        rest = tail;
    }
    let mut windows = windows.into_iter();
    let mut first = WitnessCs {
        aux: PartWindow::new(0, windows.next().unwrap_or_default()),
        ..WitnessCs::default()
    };
    let started = std::time::Instant::now();
    let shared = circuit.synthesize_preamble(&mut first)?;
    if shared.is_some() {
        log::debug!(
            "preamble once for {parts} parts: witness_ms={:.1}",
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    // A range after the first synthesizes its own copy of the preamble (kept aside, checked
    // against the first's and dropped) unless the circuit shares one.
    let copied = match shared {
        Some(_) => PreambleShape::default(),
        None => preamble,
    };
    let systems: Vec<_> = std::iter::once(first)
        .chain(windows.map(|window| WitnessCs {
            aux: PartWindow::new(copied.aux, window),
            ..WitnessCs::default()
        }))
        .zip(ranges)
        .collect();
    let ranges: Vec<_> = systems
        .into_par_iter()
        .map(|(mut part, range)| {
            let started = std::time::Instant::now();
            let synthesized = match &shared {
                Some(outputs) => circuit.synthesize_parts_after(&mut part, outputs, range.clone()),
                None => circuit.synthesize_parts(&mut part, range.clone()),
            };
            log::debug!(
                "parts {range:?} of {parts} (preamble {}): witness_ms={:.1}",
                if shared.is_some() {
                    "shared"
                } else {
                    "and its copy"
                },
                started.elapsed().as_secs_f64() * 1e3
            );
            synthesized.map(|()| part)
        })
        .collect();
    let ranges = ranges
        .into_iter()
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let holds = |part: &WitnessCs<PartWindow>, preamble: &PreambleShape| {
        part.aux.filled_exactly()
            && part.inputs.len() >= preamble.inputs
            && part.constraints >= preamble.constraints
    };
    let Some((first, others)) = ranges.split_first().filter(|(first, others)| {
        holds(first, &preamble) && others.iter().all(|part| holds(part, &copied))
    }) else {
        return Ok(false);
    };
    let (first_preamble, _) = first.aux.slices()[1].split_at(copied.aux);
    let first_preamble_inputs = &first.inputs[..copied.inputs];
    for (i, part) in others.iter().enumerate() {
        if part.aux.preamble != first_preamble
            || part.inputs[..copied.inputs] != *first_preamble_inputs
        {
            return Err(Groth16Error::ShapeMismatch(format!(
                "part range {} of the circuit synthesized a different preamble",
                i + 1
            )));
        }
    }
    inputs.extend_from_slice(&first.inputs);
    *constraints += first.constraints;
    for part in others {
        inputs.extend_from_slice(&part.inputs[copied.inputs..]);
        *constraints += part.constraints - copied.constraints;
    }
    drop(ranges);
    // SAFETY: the windows tile the first `num_aux` scalars of the spare room, and each was
    // filled exactly (every entry written by `PartWindow::push`).
    unsafe { aux.assume_filled(pce.num_aux) };
    Ok(true)
}

/// `parts` split into at most `threads` contiguous non-empty ranges of near-equal length, in
/// order.
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
        for (parts, threads) in (0..40).flat_map(|p| (0..20).map(move |t| (p, t))) {
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
