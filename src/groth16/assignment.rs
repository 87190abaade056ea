//! The output of synthesis: everything the prover needs, nothing of the circuit.

use blstrs::Scalar;

use super::buffer::ScalarBuf;
use super::density::Density;

/// The three constraint evaluation vectors a, b, c (one entry per constraint).
///
/// Callers provide them (from the engine's pool, pinned when a GPU backend allocated it) so
/// that synthesis writes straight into memory the prover can upload; `prove_start` hands them
/// back for reuse.
#[derive(Debug, Default)]
pub struct AbcBuffers {
    /// A·z per constraint.
    pub a: ScalarBuf,
    /// B·z per constraint.
    pub b: ScalarBuf,
    /// C·z per constraint.
    pub c: ScalarBuf,
}

impl AbcBuffers {
    /// Empty buffers with room for `constraints` entries each (no reallocation below that).
    pub fn with_capacity(constraints: usize) -> Self {
        Self {
            a: ScalarBuf::with_capacity(constraints),
            b: ScalarBuf::with_capacity(constraints),
            c: ScalarBuf::with_capacity(constraints),
        }
    }

    /// Whether all three buffers are page-locked host memory.
    pub fn is_pinned(&self) -> bool {
        self.a.is_pinned() && self.b.is_pinned() && self.c.is_pinned()
    }

    /// Empties the buffers, keeping their memory.
    pub fn clear(&mut self) {
        self.a.clear();
        self.b.clear();
        self.c.clear();
    }

    /// Number of constraints captured.
    pub fn len(&self) -> usize {
        self.a.len()
    }

    /// Whether no constraint was captured.
    pub fn is_empty(&self) -> bool {
        self.a.is_empty()
    }

    /// Bytes [`AbcBuffers::with_capacity`] reserves for `constraints` (None when that
    /// overflows `u64`).
    pub fn bytes_for(constraints: usize) -> Option<u64> {
        (constraints as u64).checked_mul(3 * std::mem::size_of::<Scalar>() as u64)
    }

    /// Bytes reserved by the three buffers.
    pub fn capacity_bytes(&self) -> usize {
        (self.a.capacity() + self.b.capacity() + self.c.capacity()) * std::mem::size_of::<Scalar>()
    }
}

/// A synthesized circuit instance, in the shape bellperson's prover works on.
#[derive(Debug, Default)]
pub struct Assignment {
    /// a, b, c per constraint (input constraints included).
    pub abc: AbcBuffers,
    /// Public inputs; index 0 is the constant ONE.
    pub inputs: Vec<Scalar>,
    /// Private (auxiliary) variables.
    pub aux: Vec<Scalar>,
    /// Aux variables that occur in some A linear combination.
    pub a_aux_density: Density,
    /// Inputs that occur in some B linear combination.
    pub b_input_density: Density,
    /// Aux variables that occur in some B linear combination.
    pub b_aux_density: Density,
}

impl Assignment {
    /// Number of constraints n (including one per input).
    pub fn num_constraints(&self) -> usize {
        self.abc.len()
    }

    /// Checks that lengths agree with each other; a broken assignment is an error, not a panic.
    pub fn check_shape(&self) -> super::Result<()> {
        let n = self.abc.a.len();
        let bad = |what: String| Err(super::Groth16Error::ShapeMismatch(what));
        if self.abc.b.len() != n || self.abc.c.len() != n {
            return bad(format!(
                "a/b/c lengths differ: {} / {} / {}",
                n,
                self.abc.b.len(),
                self.abc.c.len()
            ));
        }
        if self.inputs.is_empty() {
            return bad("no inputs (the ONE input is missing)".into());
        }
        if n < self.inputs.len() {
            return bad(format!(
                "{} constraints cannot hold the {} input constraints",
                n,
                self.inputs.len()
            ));
        }
        if self.a_aux_density.len() != self.aux.len() || self.b_aux_density.len() != self.aux.len()
        {
            return bad(format!(
                "aux density lengths {} / {} differ from {} aux variables",
                self.a_aux_density.len(),
                self.b_aux_density.len(),
                self.aux.len()
            ));
        }
        if self.b_input_density.len() != self.inputs.len() {
            return bad(format!(
                "input density length {} differs from {} inputs",
                self.b_input_density.len(),
                self.inputs.len()
            ));
        }
        Ok(())
    }

    /// Bytes held by this assignment (a/b/c capacity, inputs, aux, densities).
    pub fn byte_size(&self) -> usize {
        self.abc.capacity_bytes()
            + (self.inputs.capacity() + self.aux.capacity()) * std::mem::size_of::<Scalar>()
            + self.a_aux_density.byte_size()
            + self.b_input_density.byte_size()
            + self.b_aux_density.byte_size()
    }
}
