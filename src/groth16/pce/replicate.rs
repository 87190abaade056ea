//! A parted circuit's R1CS built from the recording of its preamble and one part.
//!
//! A blank PoSt partition is thousands of copies of one sector's circuit (2349 at 32 GiB
//! WindowPoSt): recording it constraint by constraint took 5 to 11 minutes on one thread, and
//! a node proves the plain (slower) way until the recording is done. Its parts differ only in
//! where their variables sit: part k's own inputs and aux variables are part 0's, shifted by k
//! times a part's count, while variables of the preamble (and ONE) stay where they are. So the
//! whole R1CS is the preamble's rows, part 0's rows shifted once per part, and one
//! `x_i * 0 = 0` row per input (also shifted from part 0's), re-encoded: about 20 s instead of
//! minutes.
//!
//! Whether a circuit's parts really are alike is checked, never assumed: [`Layout::replicate`]
//! for two parts must give exactly the recording of the preamble and two parts, and the last
//! part must record as the first (`super::recorder::replicate_parts` does both); the result
//! must still fit the parameters, and every proof is still verified.

use super::matrix::{Coeff, SparseMatrix};
use super::{Pce, AUX_BASE};
use crate::groth16::density::Density;

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

    /// `column` of part 0 as it is in part `k`: the part's own variables move, the
    /// preamble's stay.
    #[inline]
    fn shift(&self, column: u64, k: usize) -> u64 {
        if column < AUX_BASE {
            if column >= self.preamble_inputs as u64 {
                column + (k * self.part_inputs) as u64
            } else {
                column
            }
        } else if column - AUX_BASE >= self.preamble_aux as u64 {
            column + (k * self.part_aux) as u64
        } else {
            column
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
    /// circuit copies, and from which part: for inputs (`head` = the preamble's count, `per` =
    /// a part's) and aux alike.
    fn source(index: usize, head: usize, per: usize) -> (usize, usize) {
        if index < head || per == 0 {
            (index, 0)
        } else {
            let k = (index - head) / per;
            (index - k * per, k)
        }
    }

    /// The R1CS of the circuit with `parts` parts, built from `one_part` (the recording of the
    /// preamble and part 0 this layout was made from). None if the counts overflow.
    pub fn replicate(&self, one_part: &Pce, parts: usize) -> Option<Pce> {
        let (num_inputs, num_aux, num_constraints) = self.counts(parts)?;
        let matrix = |m: &SparseMatrix| self.replicate_matrix(m, one_part.num_inputs, parts);
        let ((a, b), c) = rayon::join(
            || rayon::join(|| matrix(&one_part.a), || matrix(&one_part.b)),
            || matrix(&one_part.c),
        );
        let aux_density =
            |d: &Density| replicate_density(d, self.preamble_aux, self.part_aux, num_aux);
        Some(Pce {
            num_inputs,
            num_aux,
            num_constraints,
            coeffs: one_part.coeffs.clone(),
            a,
            b,
            c,
            a_aux_density: aux_density(&one_part.a_aux_density),
            b_input_density: replicate_density(
                &one_part.b_input_density,
                self.preamble_inputs,
                self.part_inputs,
                num_inputs,
            ),
            b_aux_density: aux_density(&one_part.b_aux_density),
        })
    }

    /// One matrix of the whole circuit: the preamble's rows, part 0's rows once per part
    /// (shifted), then the per-input rows, each the row of the input it copies, shifted.
    fn replicate_matrix(
        &self,
        m: &SparseMatrix,
        recorded_inputs: usize,
        parts: usize,
    ) -> SparseMatrix {
        let (inputs, _, rows) = self.counts(parts).expect("checked by replicate");
        let part_rows = self.preamble_rows..self.preamble_rows + self.part_rows;
        let input_rows = part_rows.end..part_rows.end + recorded_inputs;
        let mut out = SparseMatrix::default();
        // Each part re-encodes to about the bytes it had: reserve that (and a little more for
        // the delta bases that restart with each chunk), not a doubling.
        let per_row = m.encoded_bytes() as f64 / m.rows().max(1) as f64;
        out.reserve((per_row * rows as f64 * 1.01) as usize, rows);
        m.for_each_row(0..self.preamble_rows, |terms| out.push_row(terms));
        let mut shifted = Vec::new();
        let mut push_shifted = |out: &mut SparseMatrix, terms: &[(u64, Coeff)], k: usize| {
            shifted.clear();
            shifted.extend(
                terms
                    .iter()
                    .map(|&(column, coeff)| (self.shift(column, k), coeff)),
            );
            out.push_row(&shifted);
        };
        for k in 0..parts {
            m.for_each_row(part_rows.clone(), |terms| push_shifted(&mut out, terms, k));
        }
        let mut input_row_terms: Vec<Vec<(u64, Coeff)>> = Vec::with_capacity(recorded_inputs);
        m.for_each_row(input_rows, |terms| input_row_terms.push(terms.to_vec()));
        for input in 0..inputs {
            let (recorded, k) = Self::source(input, self.preamble_inputs, self.part_inputs);
            if let Some(terms) = input_row_terms.get(recorded) {
                push_shifted(&mut out, terms, k);
            }
        }
        out.shrink_to_fit();
        out
    }
}

/// A density of the whole circuit: the preamble's `head` bits, then part 0's `per` bits once
/// per part, `len` bits in all.
fn replicate_density(recorded: &Density, head: usize, per: usize, len: usize) -> Density {
    let mut out = Density::with_capacity(len);
    for index in 0..len {
        out.push_unset();
        let (source, _) = Layout::source(index, head, per);
        if recorded.get(source) {
            out.set(index);
        }
    }
    out
}
