//! The output of synthesis: everything the prover needs, nothing of the circuit.

use blstrs::Scalar;

use super::buffer::ScalarBuf;
use super::density::Density;

/// The three constraint evaluation vectors a, b, c (one entry per constraint).
///
/// They come in a [`BufferSet`] from the engine's pool (pinned when a GPU backend allocated
/// it), so synthesis writes straight into memory the prover can upload.
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

    /// Bytes reserved by the three buffers.
    pub fn capacity_bytes(&self) -> usize {
        (self.a.capacity() + self.b.capacity() + self.c.capacity()) * std::mem::size_of::<Scalar>()
    }
}

/// One set of the engine's buffer pool: a, b, c and aux, the vectors of a partition that grow
/// with the circuit (32 B per constraint and per private variable).
///
/// Synthesis writes into them; `prove_start` hands the whole set back for reuse, so a GPU
/// uploads all of them from pinned memory. A set is sized by constraints: aux gets the same
/// capacity, which holds every Filecoin circuit (its private variables never exceed its
/// domain); a larger aux spills to the heap, correct and charged, but pageable.
#[derive(Debug, Default)]
pub struct BufferSet {
    /// a, b and c.
    pub abc: AbcBuffers,
    /// The private variables' values.
    pub aux: ScalarBuf,
}

impl BufferSet {
    /// Empty buffers with room for `constraints` constraints and as many aux variables.
    pub fn with_capacity(constraints: usize) -> Self {
        Self {
            abc: AbcBuffers::with_capacity(constraints),
            aux: ScalarBuf::with_capacity(constraints),
        }
    }

    /// Whether all four buffers are page-locked host memory.
    pub fn is_pinned(&self) -> bool {
        self.abc.is_pinned() && self.aux.is_pinned()
    }

    /// Empties the buffers, keeping their memory.
    pub fn clear(&mut self) {
        self.abc.clear();
        self.aux.clear();
    }

    /// Capacity of each buffer: a, b, c, aux.
    pub fn capacities(&self) -> [usize; 4] {
        [&self.abc.a, &self.abc.b, &self.abc.c, &self.aux].map(|v| v.capacity())
    }

    /// Constraints (and aux variables) the set holds without growing: its smallest buffer.
    pub fn capacity(&self) -> usize {
        self.capacities().into_iter().min().unwrap_or(0)
    }

    /// Bytes [`BufferSet::with_capacity`] reserves for `constraints` (None when that
    /// overflows `u64`).
    pub fn bytes_for(constraints: usize) -> Option<u64> {
        (constraints as u64).checked_mul(4 * std::mem::size_of::<Scalar>() as u64)
    }

    /// Bytes reserved by the four buffers.
    pub fn capacity_bytes(&self) -> usize {
        set_bytes(&self.abc, &self.aux)
    }
}

/// Bytes reserved by a set's buffers, in a `BufferSet` or lent to an `Assignment`.
fn set_bytes(abc: &AbcBuffers, aux: &ScalarBuf) -> usize {
    abc.capacity_bytes() + aux.capacity() * std::mem::size_of::<Scalar>()
}

/// A synthesized circuit instance, in the shape bellperson's prover works on.
#[derive(Debug, Default)]
pub struct Assignment {
    /// a, b, c per constraint (input constraints included).
    pub abc: AbcBuffers,
    /// Public inputs; index 0 is the constant ONE.
    pub inputs: Vec<Scalar>,
    /// Private (auxiliary) variables (in the set's aux buffer).
    pub aux: ScalarBuf,
    /// Aux variables that occur in some A linear combination.
    pub a_aux_density: Density,
    /// Inputs that occur in some B linear combination.
    pub b_input_density: Density,
    /// Aux variables that occur in some B linear combination.
    pub b_aux_density: Density,
}

impl Assignment {
    /// Takes the a/b/c and aux buffers out (for reuse), leaving them empty here.
    pub fn take_buffers(&mut self) -> BufferSet {
        BufferSet {
            abc: std::mem::take(&mut self.abc),
            aux: std::mem::take(&mut self.aux),
        }
    }

    /// Bytes reserved by the buffer set this assignment holds (a/b/c and aux).
    pub fn buffer_set_bytes(&self) -> usize {
        set_bytes(&self.abc, &self.aux)
    }

    /// Number of constraints n (including one per input).
    pub fn num_constraints(&self) -> usize {
        self.abc.len()
    }

    /// The circuit shape this assignment has: what the engine's budget and the backends'
    /// transient figures are computed from.
    pub fn shape(&self) -> super::CircuitShape {
        super::CircuitShape {
            constraints: self.num_constraints(),
            inputs: self.inputs.len(),
            aux: self.aux.len(),
        }
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

    /// Bytes held by this assignment (its buffer set, inputs, densities).
    pub fn byte_size(&self) -> usize {
        self.buffer_set_bytes()
            + self.inputs.capacity() * std::mem::size_of::<Scalar>()
            + self.a_aux_density.byte_size()
            + self.b_input_density.byte_size()
            + self.b_aux_density.byte_size()
    }
}
