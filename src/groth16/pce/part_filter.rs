//! A constraint system adapter that keeps a circuit's preamble and a range of its parts and
//! drops the other parts, for circuits built as one function with no entry point per part.
//!
//! Such a circuit (SnapDeals: its commitments and challenge bits, then one loop body per
//! challenge) still has to run every part's gadget code to reach the parts it keeps, but a
//! dropped part costs far less than a computed one: its allocations' value closures are never
//! called (so no value is known downstream of them), its constraints are not passed on, and once
//! the range is behind it the synthesis stops. With the dropped parts' private inputs also left
//! out by the caller, their hashing is skipped too. A part is recognised by the names of the
//! top-level namespaces its code opens (one in the preamble never names a part).

use std::ops::Range;

use bellperson::{ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;

/// What stopped a filtered synthesis early (see [`PartFilter::finish`]).
const STOPPED: &str = "cuzk: the kept parts are synthesized; stopping";

/// Passes on to `inner` the preamble's and the kept parts' allocations and constraints.
///
/// `part_of` names the part a top-level namespace belongs to (None for the preamble's). Parts
/// must come in increasing order after the preamble; anything else is an error, never a wrong
/// witness.
pub struct PartFilter<'a, CS, F> {
    inner: &'a mut CS,
    keep: Range<usize>,
    part_of: F,
    depth: usize,
    current: Option<usize>,
    broken: Option<String>,
}

impl<'a, CS, F> PartFilter<'a, CS, F>
where
    CS: ConstraintSystem<Scalar>,
    F: Fn(&str) -> Option<usize> + Send,
{
    /// A filter keeping the preamble and `keep` of the parts.
    pub fn new(inner: &'a mut CS, keep: Range<usize>, part_of: F) -> Self {
        Self {
            inner,
            keep,
            part_of,
            depth: 0,
            current: None,
            broken: None,
        }
    }

    /// The outcome of `circuit.synthesize(&mut filter)`: Ok when it ran through or was stopped
    /// past the kept range, the circuit's own error otherwise, and an error when the parts did
    /// not come in order after the preamble.
    pub fn finish(self, synthesized: Result<(), SynthesisError>) -> Result<(), SynthesisError> {
        if let Some(why) = self.broken {
            return Err(SynthesisError::IoError(std::io::Error::other(why)));
        }
        match synthesized {
            Err(SynthesisError::IoError(e)) if e.to_string() == STOPPED && self.past_range() => {
                Ok(())
            }
            other => other,
        }
    }

    /// Whether the current part is one to pass on (the preamble always is).
    fn keeping(&self) -> bool {
        self.current.map_or(true, |part| self.keep.contains(&part))
    }

    /// Whether the synthesis has reached a part after the kept range.
    fn past_range(&self) -> bool {
        self.current.is_some_and(|part| part >= self.keep.end)
    }

    /// Err once nothing more is to be kept (or the order broke), so the circuit stops.
    fn stop_if_done(&self) -> Result<(), SynthesisError> {
        if self.broken.is_some() || self.past_range() {
            return Err(SynthesisError::IoError(std::io::Error::other(STOPPED)));
        }
        Ok(())
    }

    /// An allocation passed on to `inner` while keeping; a placeholder at `dropped` (never
    /// read: a dropped part's constraints are dropped too) otherwise; Err once done.
    fn pass_allocation(
        &mut self,
        dropped: Index,
        allocate: impl FnOnce(&mut CS) -> Result<Variable, SynthesisError>,
    ) -> Result<Variable, SynthesisError> {
        self.stop_if_done()?;
        if self.keeping() {
            allocate(&mut *self.inner)
        } else {
            Ok(Variable::new_unchecked(dropped))
        }
    }

    /// Follows a top-level namespace into the part it names.
    fn enter(&mut self, name: &str) {
        if self.broken.is_some() {
            return;
        }
        match ((self.part_of)(name), self.current) {
            (Some(part), Some(current)) if part < current => {
                self.broken = Some(format!(
                    "part {part} (namespace {name:?}) came after part {current}"
                ));
            }
            (Some(part), _) => self.current = Some(part),
            (None, Some(current)) => {
                self.broken = Some(format!(
                    "namespace {name:?} names no part but came after part {current}"
                ));
            }
            (None, None) => {}
        }
    }
}

impl<CS, F> ConstraintSystem<Scalar> for PartFilter<'_, CS, F>
where
    CS: ConstraintSystem<Scalar>,
    F: Fn(&str) -> Option<usize> + Send,
{
    type Root = Self;

    fn alloc<Fv, A, AR>(&mut self, annotation: A, f: Fv) -> Result<Variable, SynthesisError>
    where
        Fv: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.pass_allocation(Index::Aux(0), |inner| inner.alloc(annotation, f))
    }

    fn alloc_input<Fv, A, AR>(&mut self, annotation: A, f: Fv) -> Result<Variable, SynthesisError>
    where
        Fv: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.pass_allocation(Index::Input(0), |inner| inner.alloc_input(annotation, f))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        if self.keeping() && !self.past_range() && self.broken.is_none() {
            self.inner.enforce(annotation, a, b, c);
        }
    }

    fn push_namespace<NR, N>(&mut self, name_fn: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        if self.depth == 0 {
            let name: String = name_fn().into();
            self.enter(&name);
            self.inner.get_root().push_namespace(|| name);
        } else {
            self.inner.get_root().push_namespace(name_fn);
        }
        self.depth += 1;
    }

    fn pop_namespace(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.inner.get_root().pop_namespace();
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::buffer::ScalarBuf;
    use crate::groth16::pce::witness::WitnessCs;
    use bellperson::Circuit;
    use ff::Field;

    /// A preamble of one input and one aux, then `parts` parts of two aux and one constraint
    /// each, part i's values i and i+1, under namespaces "part i".
    struct Looped {
        parts: usize,
    }

    impl Circuit<Scalar> for Looped {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            cs.alloc_input(|| "x", || Ok(Scalar::ONE))?;
            cs.namespace(|| "preamble")
                .alloc(|| "y", || Ok(Scalar::ONE))?;
            for i in 0..self.parts {
                let mut cs = cs.namespace(|| format!("part {i}"));
                let v = Scalar::from(i as u64);
                let a = cs.namespace(|| "inner").alloc(|| "a", || Ok(v))?;
                let b = cs.alloc(|| "b", || Ok(v + Scalar::ONE))?;
                cs.enforce(|| "c", |lc| lc + a, |lc| lc + CS::one(), |lc| lc + b);
            }
            Ok(())
        }
    }

    fn part_of(name: &str) -> Option<usize> {
        name.strip_prefix("part ")?.parse().ok()
    }

    /// Aux values and constraints the filter passes on for `keep` of `parts`.
    fn kept(parts: usize, keep: Range<usize>) -> Result<(Vec<Scalar>, usize), SynthesisError> {
        let mut cs = WitnessCs::<ScalarBuf>::default();
        let mut filter = PartFilter::new(&mut cs, keep, part_of);
        let synthesized = Looped { parts }.synthesize(&mut filter);
        filter.finish(synthesized)?;
        Ok((cs.aux.to_vec(), cs.constraints))
    }

    /// Scalars of small integers.
    fn scalars(values: &[u64]) -> Vec<Scalar> {
        values.iter().map(|v| Scalar::from(*v)).collect()
    }

    #[test]
    fn keeps_the_preamble_and_the_range_of_parts() {
        assert_eq!(kept(4, 0..0).unwrap(), (scalars(&[1]), 0));
        assert_eq!(kept(4, 1..3).unwrap(), (scalars(&[1, 1, 2, 2, 3]), 2));
        assert_eq!(kept(4, 3..4).unwrap(), (scalars(&[1, 3, 4]), 1));
        assert_eq!(
            kept(4, 0..4).unwrap(),
            (scalars(&[1, 0, 1, 1, 2, 2, 3, 3, 4]), 4)
        );
    }

    /// Parts out of order, or a preamble namespace after the parts began, are an error.
    struct Disordered(bool);

    impl Circuit<Scalar> for Disordered {
        fn synthesize<CS: ConstraintSystem<Scalar>>(
            self,
            cs: &mut CS,
        ) -> Result<(), SynthesisError> {
            cs.namespace(|| "part 1")
                .alloc(|| "a", || Ok(Scalar::ONE))?;
            let next = if self.0 { "part 0" } else { "tail" };
            cs.namespace(|| next).alloc(|| "b", || Ok(Scalar::ONE))?;
            Ok(())
        }
    }

    #[test]
    fn parts_out_of_order_are_an_error() {
        for backwards in [true, false] {
            let mut cs = WitnessCs::<ScalarBuf>::default();
            let mut filter = PartFilter::new(&mut cs, 0..4, part_of);
            let synthesized = Disordered(backwards).synthesize(&mut filter);
            let err = filter.finish(synthesized).unwrap_err().to_string();
            assert!(err.contains("came after part 1"), "{err}");
        }
    }
}
