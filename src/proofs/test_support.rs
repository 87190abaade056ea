//! Test-only helpers shared by the modules that synthesize upstream circuits themselves.

use std::ops::Range;

use bellperson::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;

use crate::groth16::pce::{record, Pce};
use crate::groth16::PartedCircuit;

/// Every part of a [`PartedCircuit`] by our own `synthesize_parts`, as one circuit (where
/// `WholeCircuit` would run upstream's code).
pub(crate) struct OursWhole<P>(pub(crate) P);

impl<P: PartedCircuit> Circuit<Scalar> for OursWhole<P> {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let parts: Range<usize> = 0..self.0.parts();
        self.0.synthesize_parts(cs, parts)
    }
}

/// Records `upstream` and `ours` and asserts they are the same R1CS: every constraint,
/// variable and density bit in the same place.
pub(crate) fn assert_records_alike(
    upstream: impl Circuit<Scalar>,
    ours: impl Circuit<Scalar>,
    what: &str,
) {
    let upstream: Pce = record(upstream).expect("upstream records");
    let ours: Pce = record(ours).expect("ours records");
    assert_eq!(
        (ours.num_inputs, ours.num_aux, ours.num_constraints),
        (
            upstream.num_inputs,
            upstream.num_aux,
            upstream.num_constraints
        ),
        "{what}"
    );
    assert!(ours == upstream, "the R1CS differ: {what}");
}
