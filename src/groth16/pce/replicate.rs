//! A parted circuit's R1CS kept as the recording of its preamble and one part.
//!
//! A blank PoSt partition is thousands of copies of one sector's circuit (2349 at 32 GiB
//! WindowPoSt). Its parts differ only in where their variables sit: part k's own inputs and aux
//! variables are part 0's, shifted by k times a part's count, while variables of the preamble
//! (and ONE) stay where they are. So the whole R1CS is the preamble's rows, part 0's rows
//! shifted once per part, and one `x_i * 0 = 0` row per input. [`Repeated`] stores only the
//! preamble's rows and part 0's and evaluates part k's rows by shifting columns as it reads
//! them: recording a 32 GiB WindowPoSt takes seconds instead of 5 to 11 minutes, and the PCE
//! holds about 2 MB instead of 3.2 GB (its rows stay in cache while the product runs).
//!
//! Whether a circuit's parts really are alike is checked, never assumed: the layout replicated
//! to two parts must give exactly the recording of the preamble and two parts, and the last
//! part must record as the first (`super::recorder::replicate_parts` does both); the recording
//! must end with exactly the per-input rows this module writes itself; the result must still
//! fit the parameters, and every proof is still verified.

use std::mem::MaybeUninit;
use std::ops::Range;

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::matrix::{Coeff, Matrices, Shift, SparseMatrix};
use super::values::Witness;
use super::{Pce, Rows, AUX_BASE};
use crate::groth16::density::Density;
use crate::groth16::shape::CircuitShape;

/// Where a parted circuit's variables and rows sit: the preamble's counts (ONE included in
/// its inputs) and one part's, taken from the recordings of the preamble alone and of the
/// preamble with one part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    preamble_inputs: usize,
    preamble_aux: usize,
    preamble_rows: usize,
    part_inputs: usize,
    part_aux: usize,
    part_rows: usize,
}

/// A circuit's own rows: its constraints less the one per input that every recording ends with.
fn own_rows(pce: &Pce) -> Option<usize> {
    pce.num_constraints.checked_sub(pce.num_inputs)
}

impl Layout {
    /// The layout of a circuit whose preamble records as `preamble` and whose preamble and
    /// first part record as `one_part`; None if `one_part` is not `preamble` grown by a part.
    pub fn new(preamble: &Pce, one_part: &Pce) -> Option<Self> {
        let (preamble_rows, rows) = (own_rows(preamble)?, own_rows(one_part)?);
        Some(Self {
            preamble_inputs: preamble.num_inputs,
            preamble_aux: preamble.num_aux,
            preamble_rows,
            part_inputs: one_part.num_inputs.checked_sub(preamble.num_inputs)?,
            part_aux: one_part.num_aux.checked_sub(preamble.num_aux)?,
            part_rows: rows.checked_sub(preamble_rows)?,
        })
    }

    /// Where part 0's variables are in part `k`: the part's own variables move, the
    /// preamble's (and ONE) stay.
    #[inline]
    fn part_columns(&self, k: usize) -> Shift {
        Shift {
            first_input: self.preamble_inputs as u64,
            input_shift: (k * self.part_inputs) as u64,
            first_aux: self.preamble_aux as u64,
            aux_shift: (k * self.part_aux) as u64,
        }
    }

    /// The six counts, for saving: the preamble's inputs, aux and rows, then a part's.
    pub fn to_counts(&self) -> [usize; 6] {
        [
            self.preamble_inputs,
            self.preamble_aux,
            self.preamble_rows,
            self.part_inputs,
            self.part_aux,
            self.part_rows,
        ]
    }

    /// A layout from saved counts ([`Layout::to_counts`]); checked by [`Repeated::validate`].
    pub fn from_counts(counts: [usize; 6]) -> Self {
        let [preamble_inputs, preamble_aux, preamble_rows, part_inputs, part_aux, part_rows] =
            counts;
        Self {
            preamble_inputs,
            preamble_aux,
            preamble_rows,
            part_inputs,
            part_aux,
            part_rows,
        }
    }

    /// The counts of the circuit with `parts` parts: inputs, aux and constraints (None on
    /// overflow or beyond the column space).
    fn counts(&self, parts: usize) -> Option<(usize, usize, usize)> {
        let inputs = self
            .part_inputs
            .checked_mul(parts)?
            .checked_add(self.preamble_inputs)?;
        let aux = self
            .part_aux
            .checked_mul(parts)?
            .checked_add(self.preamble_aux)?;
        let constraints = self
            .part_rows
            .checked_mul(parts)?
            .checked_add(self.preamble_rows)?
            .checked_add(inputs)?;
        if inputs as u64 >= AUX_BASE || aux as u64 >= AUX_BASE {
            return None;
        }
        Some((inputs, aux, constraints))
    }

    /// Which recorded variable (of the preamble, or of part 0) variable `index` of the whole
    /// circuit copies: for inputs (`head` = the preamble's count, `per` = a part's) and aux
    /// alike.
    fn source(index: usize, head: usize, per: usize) -> usize {
        if index < head || per == 0 {
            index
        } else {
            head + (index - head) % per
        }
    }

    /// The R1CS of the circuit with `parts` parts, kept as `one_part`'s rows (the recording of
    /// the preamble and part 0 this layout was made from). None if the counts overflow, or if
    /// the recording does not end with one `x_i * 0 = 0` row per input.
    pub fn replicate(&self, one_part: &Pce, parts: usize) -> Option<Pce> {
        let (num_inputs, num_aux, num_constraints) = self.counts(parts)?;
        let Rows::Flat(recorded) = &one_part.rows else {
            return None;
        };
        if (
            one_part.num_inputs,
            one_part.num_aux,
            one_part.num_constraints,
        ) != self.counts(1)?
            || !ends_with_input_rows(recorded, one_part.num_inputs)
        {
            return None;
        }
        let part_rows = self.preamble_rows..self.preamble_rows + self.part_rows;
        let rows = |range: Range<usize>| Matrices {
            a: copy_rows(&recorded.a, range.clone()),
            b: copy_rows(&recorded.b, range.clone()),
            c: copy_rows(&recorded.c, range),
        };
        let aux_density =
            |d: &Density| replicate_density(d, self.preamble_aux, self.part_aux, num_aux);
        Some(Pce {
            num_inputs,
            num_aux,
            num_constraints,
            coeffs: one_part.coeffs.clone(),
            rows: Rows::Repeated(Repeated {
                layout: *self,
                parts,
                preamble: rows(0..self.preamble_rows),
                part: rows(part_rows),
            }),
            a_aux_density: aux_density(&one_part.a_aux_density),
            b_input_density: replicate_density(
                &one_part.b_input_density,
                self.preamble_inputs,
                self.part_inputs,
                num_inputs,
            ),
            b_aux_density: aux_density(&one_part.b_aux_density),
            preamble: Default::default(),
        })
    }
}

/// `rows` of `m`, re-encoded as a matrix of their own.
fn copy_rows(m: &SparseMatrix, rows: Range<usize>) -> SparseMatrix {
    let mut out = SparseMatrix::default();
    m.for_each_row(rows, |terms| out.push_row(terms));
    out.shrink_to_fit();
    out
}

/// The per-input row `x_i * 0 = 0`'s terms in A (B's and C's are empty).
fn input_row(input: usize) -> [(u64, Coeff); 1] {
    [(input as u64, Coeff::One)]
}

/// Whether the last `inputs` rows of `m` are the per-input rows every recording ends with.
fn ends_with_input_rows(m: &Matrices, inputs: usize) -> bool {
    let Some(first) = m.rows().checked_sub(inputs) else {
        return false;
    };
    let mut alike = true;
    for (which, matrix) in m.each().into_iter().enumerate() {
        let mut input = 0;
        matrix.for_each_row(first..m.rows(), |terms| {
            alike &= if which == 0 {
                terms == input_row(input)
            } else {
                terms.is_empty()
            };
            input += 1;
        });
    }
    alike
}

/// A parted circuit's rows as the preamble's and one part's (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Repeated {
    /// Where the preamble's and each part's variables and rows sit.
    pub layout: Layout,
    /// Parts of the circuit.
    pub parts: usize,
    /// The preamble's rows.
    pub preamble: Matrices,
    /// Part 0's rows (its own variables as part 0's).
    pub part: Matrices,
}

impl Repeated {
    /// Terms of every row of the circuit, for `inputs` inputs (each input's row has one).
    pub fn nonzeros(&self, inputs: usize) -> u64 {
        self.preamble.nonzeros() + self.parts as u64 * self.part.nonzeros() + inputs as u64
    }

    /// Bytes held by the stored rows.
    pub fn byte_size(&self) -> usize {
        self.preamble.byte_size() + self.part.byte_size()
    }

    /// Checks rows read from outside against the circuit's `shape`: the layout gives its
    /// counts, and the preamble's rows name only the preamble's variables and part 0's only
    /// the preamble's and its own (so every shifted column exists).
    pub fn validate(&self, shape: CircuitShape, table_len: usize) -> Result<(), String> {
        let l = &self.layout;
        if l.counts(self.parts) != Some((shape.inputs, shape.aux, shape.constraints)) {
            return Err(format!(
                "a layout of {:?} for {} parts is not a circuit of {} inputs, {} aux and {} \
                 constraints",
                l.to_counts(),
                self.parts,
                shape.inputs,
                shape.aux,
                shape.constraints
            ));
        }
        let columns_below = |inputs: usize, aux: usize| {
            move |c: u64| c < inputs as u64 || (AUX_BASE..AUX_BASE + aux as u64).contains(&c)
        };
        self.preamble
            .validate(
                l.preamble_rows,
                columns_below(l.preamble_inputs, l.preamble_aux),
                table_len,
            )
            .map_err(|e| format!("preamble: {e}"))?;
        self.part
            .validate(
                l.part_rows,
                columns_below(
                    l.preamble_inputs + l.part_inputs,
                    l.preamble_aux + l.part_aux,
                ),
                table_len,
            )
            .map_err(|e| format!("part: {e}"))
    }

    /// Writes every row's A·z, B·z and C·z into `a`, `b` and `c`: the preamble's rows, each
    /// part's rows (read from part 0's, shifted; the parts in parallel), then the per-input
    /// rows (`inputs` are z's first entries).
    pub fn evaluate(
        &self,
        table: &[Scalar],
        z: &Witness,
        inputs: &[Scalar],
        [a, b, c]: [&mut [MaybeUninit<Scalar>]; 3],
    ) {
        let l = &self.layout;
        let (pa, a) = a.split_at_mut(l.preamble_rows);
        let (pb, b) = b.split_at_mut(l.preamble_rows);
        let (pc, c) = c.split_at_mut(l.preamble_rows);
        self.preamble.evaluate(table, z, Shift::NONE, [pa, pb, pc]);
        let body = l.part_rows * self.parts;
        let (a, input_a) = a.split_at_mut(body);
        let (b, input_b) = b.split_at_mut(body);
        let (c, input_c) = c.split_at_mut(body);
        if l.part_rows > 0 {
            a.par_chunks_mut(l.part_rows)
                .zip(b.par_chunks_mut(l.part_rows))
                .zip(c.par_chunks_mut(l.part_rows))
                .enumerate()
                .for_each(|(k, ((a, b), c))| {
                    self.part.evaluate(table, z, l.part_columns(k), [a, b, c]);
                });
        }
        // x_i * 0 = 0: A is x_i, B and C are 0.
        for (slot, x) in input_a.iter_mut().zip(inputs) {
            slot.write(*x);
        }
        for slot in input_b.iter_mut().chain(input_c.iter_mut()) {
            slot.write(Scalar::ZERO);
        }
    }

    /// Calls `term(row, column, coeff)` for every term of matrix `which` (0: A, 1: B, 2: C)
    /// of every row of the circuit, in row order (`inputs`: the circuit's input count).
    pub fn for_each_term(
        &self,
        which: usize,
        inputs: usize,
        mut term: impl FnMut(usize, u64, Coeff),
    ) {
        let l = &self.layout;
        self.preamble.each()[which].for_each_term(&mut term);
        for k in 0..self.parts {
            let (first, column) = (l.preamble_rows + k * l.part_rows, l.part_columns(k));
            self.part.each()[which]
                .for_each_term(|row, c, coeff| term(first + row, column.column(c), coeff));
        }
        if which == 0 {
            let first = l.preamble_rows + self.parts * l.part_rows;
            for input in 0..inputs {
                let [(column, coeff)] = input_row(input);
                term(first + input, column, coeff);
            }
        }
    }

    /// Every row of the circuit, stored: the preamble's, each part's shifted, then one per
    /// input (`inputs` of them).
    pub fn flatten(&self, inputs: usize) -> Matrices {
        let matrix = |preamble: &SparseMatrix, part: &SparseMatrix, is_a: bool| {
            let mut out = SparseMatrix::default();
            let all = 0..usize::MAX;
            preamble.for_each_row(all.clone(), |terms| out.push_row(terms));
            let mut shifted = Vec::new();
            for k in 0..self.parts {
                let column = self.layout.part_columns(k);
                part.for_each_row(all.clone(), |terms| {
                    shifted.clear();
                    shifted.extend(terms.iter().map(|&(c, coeff)| (column.column(c), coeff)));
                    out.push_row(&shifted);
                });
            }
            for input in 0..inputs {
                let row = input_row(input);
                out.push_row(if is_a { &row } else { &[] });
            }
            out.shrink_to_fit();
            out
        };
        let (pre, part) = (&self.preamble, &self.part);
        let ((a, b), c) = rayon::join(
            || {
                rayon::join(
                    || matrix(&pre.a, &part.a, true),
                    || matrix(&pre.b, &part.b, false),
                )
            },
            || matrix(&pre.c, &part.c, false),
        );
        Matrices { a, b, c }
    }
}

/// A density of the whole circuit: the preamble's `head` bits, then part 0's `per` bits once
/// per part, `len` bits in all.
fn replicate_density(recorded: &Density, head: usize, per: usize, len: usize) -> Density {
    let mut out = Density::with_capacity(len);
    for index in 0..len {
        out.push_unset();
        if recorded.get(Layout::source(index, head, per)) {
            out.set(index);
        }
    }
    out
}
