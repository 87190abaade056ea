//! One R1CS matrix (A, B or C) in a compressed sparse-row form built for Filecoin circuits.
//!
//! Each row is its term count, then per term one varint token: a 2-bit coefficient tag (1, -1,
//! or an index into the interned coefficient table that follows as a second varint), a bit that
//! says input or aux, and the variable: an input by its index (inputs are few, and ONE, which
//! every boolean constraint uses, is 0), an aux variable as a zigzag delta from the row's
//! previous aux variable (for a row's first, from the previous row's first). Filecoin circuits
//! are bit decompositions and hashes: most coefficients are 1, -1 or a power of two, and most
//! variables of a row sit close together, so a term takes one to three bytes instead of the 40
//! of a (row, column, scalar) triple. Rows are grouped in chunks of [`ROWS_PER_CHUNK`] that
//! decode independently (the delta base restarts at 0), which makes evaluation parallel.
//!
//! Columns are numbered as in [`super::AUX_BASE`]: inputs from 0, aux variables from
//! `AUX_BASE`.

use std::mem::MaybeUninit;
use std::ops::Range;

use blstrs::Scalar;
use rayon::prelude::*;

/// Rows per independently decodable chunk (the unit of parallel evaluation).
pub const ROWS_PER_CHUNK: usize = 1024;

use super::values::{Counts, RowSum, Witness};
use super::AUX_BASE;

const TAG_ONE: u64 = 0;
const TAG_MINUS_ONE: u64 = 1;
const TAG_TABLE: u64 = 2;

/// A coefficient as stored: the two that need no multiplication, or a table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coeff {
    /// 1.
    One,
    /// -1.
    MinusOne,
    /// `table[i]`.
    Table(u32),
}

impl Coeff {
    /// `acc += coeff * value`, with the table the code refers to.
    #[inline(always)]
    pub fn accumulate(self, table: &[Scalar], acc: &mut Scalar, value: Scalar) {
        match self {
            Coeff::One => *acc += value,
            Coeff::MinusOne => *acc -= value,
            Coeff::Table(i) => *acc += table[i as usize] * value,
        }
    }
}

/// A compressed sparse matrix; rows are appended in order.
#[derive(Clone, Debug, Default)]
pub struct SparseMatrix {
    bytes: Vec<u8>,
    chunk_starts: Vec<u64>,
    rows: usize,
    nonzeros: u64,
    /// First aux variable of the last row in the current chunk that had one (the next row's
    /// delta base).
    previous_first: u64,
}

impl PartialEq for SparseMatrix {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for SparseMatrix {}

#[inline(always)]
fn zigzag(delta: i64) -> u64 {
    ((delta << 1) ^ (delta >> 63)) as u64
}

#[inline(always)]
fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a varint at `*pos`; None past the end or on an overlong encoding.
#[inline(always)]
fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// A stored term's variable, before any part's shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Var {
    /// An input, by index.
    Input(u64),
    /// An aux variable, by index.
    Aux(u64),
}

impl Var {
    /// The column number (see [`super::AUX_BASE`]); None for an aux index past it.
    #[inline(always)]
    fn column(self) -> Option<u64> {
        match self {
            Var::Input(i) => (i < AUX_BASE).then_some(i),
            Var::Aux(i) => AUX_BASE.checked_add(i),
        }
    }
}

/// `index`, moved by `shift` when it is at least `first`.
#[inline(always)]
fn moved(index: u64, first: u64, shift: u64) -> usize {
    (index + if index >= first { shift } else { 0 }) as usize
}

/// Where a part's variables sit: stored inputs from `first_input` and aux variables from
/// `first_aux` move by `input_shift` and `aux_shift`; the others (the preamble's, ONE) stay.
#[derive(Clone, Copy, Debug)]
pub struct Shift {
    /// First stored input that moves.
    pub first_input: u64,
    /// How far such an input moves.
    pub input_shift: u64,
    /// First stored aux variable that moves.
    pub first_aux: u64,
    /// How far such an aux variable moves.
    pub aux_shift: u64,
}

impl Shift {
    /// Nothing moves.
    pub const NONE: Shift = Shift {
        first_input: u64::MAX,
        input_shift: 0,
        first_aux: u64::MAX,
        aux_shift: 0,
    };

    #[inline(always)]
    fn input(&self, i: u64) -> usize {
        moved(i, self.first_input, self.input_shift)
    }

    #[inline(always)]
    fn aux(&self, i: u64) -> usize {
        moved(i, self.first_aux, self.aux_shift)
    }

    /// A column (see [`super::AUX_BASE`]) where the shift puts it.
    pub fn column(&self, column: u64) -> u64 {
        if column < AUX_BASE {
            self.input(column) as u64
        } else {
            AUX_BASE + self.aux(column - AUX_BASE) as u64
        }
    }
}

/// Writes `value` into `slot` past the caches where the CPU can: the product writes each of
/// its 96 bytes per row once and never reads them back, and a plain store first reads the
/// line it writes (measured on this project's machine: 258 MB written in 20 ms plainly, 8 ms
/// streamed). Call [`streaming_done`] before the writes are read elsewhere.
#[inline(always)]
fn write_streaming(slot: &mut MaybeUninit<Scalar>, value: Scalar) {
    #[cfg(target_arch = "x86_64")]
    {
        let limbs = blst::blst_fr::from(value).l;
        // SAFETY: a Scalar is its four u64 limbs (blst_fr, #[repr(transparent)] in blstrs), so
        // the slot is valid for four u64 writes and aligned for them; movnti needs no more.
        unsafe {
            let out = slot.as_mut_ptr().cast::<i64>();
            for (k, limb) in limbs.into_iter().enumerate() {
                std::arch::x86_64::_mm_stream_si64(out.add(k), limb as i64);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    slot.write(value);
}

/// Orders the streamed writes of [`write_streaming`] before any later store (such as the
/// thread pool's signal that this chunk is done).
#[inline(always)]
fn streaming_done() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: sfence has no preconditions.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Decodes the rows of one chunk; every read is checked, so a corrupt matrix is an error (or
/// `None`), never out-of-bounds memory.
struct ChunkReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    previous_first: u64,
}

impl ChunkReader<'_> {
    /// Reads one row, calling `term(variable, coeff)` per term.
    #[inline(always)]
    fn row_vars(&mut self, mut term: impl FnMut(Var, Coeff)) -> Option<()> {
        let count = read_varint(self.bytes, &mut self.pos)?;
        let mut aux = self.previous_first;
        let mut first_aux = true;
        for _ in 0..count {
            let token = read_varint(self.bytes, &mut self.pos)?;
            let value = token >> 3;
            let var = if token & 4 != 0 {
                Var::Input(value)
            } else {
                aux = aux.checked_add_signed(unzigzag(value))?;
                if first_aux {
                    self.previous_first = aux;
                    first_aux = false;
                }
                Var::Aux(aux)
            };
            let coeff = match token & 3 {
                TAG_ONE => Coeff::One,
                TAG_MINUS_ONE => Coeff::MinusOne,
                TAG_TABLE => {
                    Coeff::Table(u32::try_from(read_varint(self.bytes, &mut self.pos)?).ok()?)
                }
                _ => return None,
            };
            term(var, coeff);
        }
        Some(())
    }

    /// Reads one row, calling `term(column, coeff)` per term; None for a variable that names
    /// no column.
    #[inline(always)]
    fn row(&mut self, mut term: impl FnMut(u64, Coeff)) -> Option<()> {
        let mut columns_ok = true;
        self.row_vars(|var, coeff| match var.column() {
            Some(column) => term(column, coeff),
            None => columns_ok = false,
        })?;
        columns_ok.then_some(())
    }
}

impl SparseMatrix {
    /// Appends a row; `terms` are (column, coefficient) pairs (columns as in
    /// [`super::AUX_BASE`]).
    pub fn push_row(&mut self, terms: &[(u64, Coeff)]) {
        if self.rows.is_multiple_of(ROWS_PER_CHUNK) {
            self.chunk_starts.push(self.bytes.len() as u64);
            self.previous_first = 0;
        }
        write_varint(&mut self.bytes, terms.len() as u64);
        let mut aux = self.previous_first;
        let mut first_aux = true;
        for &(column, coeff) in terms {
            let tag = match coeff {
                Coeff::One => TAG_ONE,
                Coeff::MinusOne => TAG_MINUS_ONE,
                Coeff::Table(_) => TAG_TABLE,
            };
            let token = if column < AUX_BASE {
                column << 3 | 4 | tag
            } else {
                let index = column - AUX_BASE;
                let delta = zigzag(index as i64 - aux as i64);
                aux = index;
                if first_aux {
                    self.previous_first = index;
                    first_aux = false;
                }
                delta << 3 | tag
            };
            write_varint(&mut self.bytes, token);
            if let Coeff::Table(index) = coeff {
                write_varint(&mut self.bytes, u64::from(index));
            }
        }
        self.rows += 1;
        self.nonzeros += terms.len() as u64;
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of stored terms.
    pub fn nonzeros(&self) -> u64 {
        self.nonzeros
    }

    /// Number of chunks.
    pub fn chunks(&self) -> usize {
        self.chunk_starts.len()
    }

    /// Bytes held (encoded rows and chunk offsets).
    pub fn byte_size(&self) -> usize {
        self.bytes.len() + self.chunk_starts.len() * 8
    }

    fn reader(&self, chunk: usize) -> ChunkReader<'_> {
        ChunkReader {
            bytes: &self.bytes,
            pos: self.chunk_starts[chunk] as usize,
            previous_first: 0,
        }
    }

    /// Evaluates the rows of `chunk` against the witness `z` into `out`, writing every entry,
    /// one per row of the chunk (`out` may be uninitialised memory: it is never read), each
    /// stored variable moved by `shift` (a part's rows read as another part's). The matrix must
    /// have passed [`SparseMatrix::validate`] (or been built here) for variables that `shift`
    /// maps into `z`'s range, as every loaded PCE has; its reads stay checked all the same.
    #[inline]
    pub fn evaluate_chunk(
        &self,
        chunk: usize,
        table: &[Scalar],
        z: &Witness,
        shift: Shift,
        out: &mut [MaybeUninit<Scalar>],
    ) {
        let mut reader = self.reader(chunk);
        let counts = Counts::shared();
        for slot in out.iter_mut() {
            let mut sum = RowSum::default();
            reader
                .row_vars(|var, coeff| {
                    let (kind, value) = match var {
                        Var::Input(i) => z.input(shift.input(i)),
                        Var::Aux(i) => z.aux(shift.aux(i)),
                    };
                    sum.add(table, coeff, kind, value);
                })
                .expect("validated matrix");
            write_streaming(slot, sum.finish(counts));
        }
        streaming_done();
    }

    /// Calls `term(row, column, coeff)` for every term, in row order.
    pub fn for_each_term(&self, mut term: impl FnMut(usize, u64, Coeff)) {
        for chunk in 0..self.chunks() {
            let mut reader = self.reader(chunk);
            let first = chunk * ROWS_PER_CHUNK;
            let last = (first + ROWS_PER_CHUNK).min(self.rows);
            for row in first..last {
                reader
                    .row(|column, coeff| term(row, column, coeff))
                    .expect("validated matrix");
            }
        }
    }

    /// Calls `row(terms)` for every row in `rows`, in order, with the row's (column,
    /// coefficient) pairs as [`SparseMatrix::push_row`] took them. Rows past the end are
    /// skipped.
    pub fn for_each_row(&self, rows: Range<usize>, mut row: impl FnMut(&[(u64, Coeff)])) {
        let rows = rows.start..rows.end.min(self.rows);
        if rows.is_empty() {
            return;
        }
        let chunk = rows.start / ROWS_PER_CHUNK;
        let mut reader = self.reader(chunk);
        let mut terms = Vec::new();
        for index in chunk * ROWS_PER_CHUNK..rows.end {
            if index % ROWS_PER_CHUNK == 0 {
                reader = self.reader(index / ROWS_PER_CHUNK);
            }
            terms.clear();
            reader
                .row(|column, coeff| terms.push((column, coeff)))
                .expect("validated matrix");
            if index >= rows.start {
                row(&terms);
            }
        }
    }

    /// Reserves room for about `bytes` more bytes of encoded rows.
    pub fn reserve(&mut self, bytes: usize, rows: usize) {
        self.bytes.reserve(bytes);
        self.chunk_starts.reserve(rows.div_ceil(ROWS_PER_CHUNK));
    }

    /// Bytes of encoded rows (without the chunk offsets).
    pub fn encoded_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Frees the room reserved beyond what the rows hold.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.chunk_starts.shrink_to_fit();
    }

    /// Checks a matrix read from outside: every chunk decodes, ends where the next begins,
    /// every column passes `column_ok` and every table index is below `table_len`, and the
    /// counts agree.
    pub fn validate(
        &self,
        column_ok: impl Fn(u64) -> bool,
        table_len: usize,
    ) -> Result<(), String> {
        if self.chunk_starts.len() != self.rows.div_ceil(ROWS_PER_CHUNK) {
            return Err(format!(
                "{} chunks for {} rows",
                self.chunk_starts.len(),
                self.rows
            ));
        }
        let mut nonzeros = 0u64;
        let mut bad = None;
        for chunk in 0..self.chunks() {
            let mut reader = self.reader(chunk);
            let rows = ROWS_PER_CHUNK.min(self.rows - chunk * ROWS_PER_CHUNK);
            for _ in 0..rows {
                reader
                    .row(|column, coeff| {
                        nonzeros += 1;
                        let index_ok = match coeff {
                            Coeff::Table(i) => (i as usize) < table_len,
                            _ => true,
                        };
                        if !column_ok(column) || !index_ok {
                            bad.get_or_insert(format!(
                                "term (column {column}, {coeff:?}) names no variable or coefficient ({table_len} coefficients)"
                            ));
                        }
                    })
                    .ok_or_else(|| format!("chunk {chunk} does not decode"))?;
            }
            let end = self
                .chunk_starts
                .get(chunk + 1)
                .map_or(self.bytes.len(), |&e| e as usize);
            if reader.pos != end {
                return Err(format!("chunk {chunk} ends at {} not {end}", reader.pos));
            }
        }
        if let Some(bad) = bad {
            return Err(bad);
        }
        if nonzeros != self.nonzeros {
            return Err(format!(
                "{nonzeros} terms decoded, {} recorded",
                self.nonzeros
            ));
        }
        Ok(())
    }

    /// The raw parts, for saving: encoded rows, chunk offsets, rows, terms.
    pub fn parts(&self) -> (&[u8], &[u64], usize, u64) {
        (&self.bytes, &self.chunk_starts, self.rows, self.nonzeros)
    }

    /// A matrix from saved parts; call [`SparseMatrix::validate`] before using it.
    pub fn from_parts(bytes: Vec<u8>, chunk_starts: Vec<u64>, rows: usize, nonzeros: u64) -> Self {
        Self {
            bytes,
            chunk_starts,
            rows,
            nonzeros,
            previous_first: 0,
        }
    }
}

/// The A, B and C matrices of one set of rows (each matrix holds the same rows).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matrices {
    /// The A matrix.
    pub a: SparseMatrix,
    /// The B matrix.
    pub b: SparseMatrix,
    /// The C matrix.
    pub c: SparseMatrix,
}

impl Matrices {
    /// A, B and C, in that order.
    pub fn each(&self) -> [&SparseMatrix; 3] {
        [&self.a, &self.b, &self.c]
    }

    /// Rows (of each matrix).
    pub fn rows(&self) -> usize {
        self.a.rows()
    }

    /// Terms of the three matrices.
    pub fn nonzeros(&self) -> u64 {
        self.each().iter().map(|m| m.nonzeros()).sum()
    }

    /// Bytes held by the three matrices.
    pub fn byte_size(&self) -> usize {
        self.each().iter().map(|m| m.byte_size()).sum()
    }

    /// Checks matrices read from outside ([`SparseMatrix::validate`] for each): `rows` rows,
    /// every column passing `column_ok`, every table index below `table_len`.
    pub fn validate(
        &self,
        rows: usize,
        column_ok: impl Fn(u64) -> bool,
        table_len: usize,
    ) -> Result<(), String> {
        for (name, m) in ["A", "B", "C"].into_iter().zip(self.each()) {
            if m.rows() != rows {
                return Err(format!("matrix {name} has {} rows, not {rows}", m.rows()));
            }
            m.validate(&column_ok, table_len)
                .map_err(|e| format!("matrix {name}: {e}"))?;
        }
        Ok(())
    }

    /// Writes A·z, B·z and C·z into `a`, `b` and `c` (one entry per row; they may be
    /// uninitialised), in parallel over chunks of rows, each stored variable moved by `shift`.
    pub fn evaluate(
        &self,
        table: &[Scalar],
        z: &Witness,
        shift: Shift,
        [a, b, c]: [&mut [MaybeUninit<Scalar>]; 3],
    ) {
        a.par_chunks_mut(ROWS_PER_CHUNK)
            .zip(b.par_chunks_mut(ROWS_PER_CHUNK))
            .zip(c.par_chunks_mut(ROWS_PER_CHUNK))
            .enumerate()
            .for_each(|(chunk, ((a, b), c))| {
                self.a.evaluate_chunk(chunk, table, z, shift, a);
                self.b.evaluate_chunk(chunk, table, z, shift, b);
                self.c.evaluate_chunk(chunk, table, z, shift, c);
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;

    #[test]
    fn rows_round_trip_across_chunks_and_far_columns() {
        let mut m = SparseMatrix::default();
        let mut want = Vec::new();
        for row in 0..3000usize {
            let terms: Vec<(u64, Coeff)> = match row % 4 {
                0 => vec![],
                1 => vec![
                    (row as u64, Coeff::One),
                    (AUX_BASE + (1 << 39), Coeff::Table(7)),
                ],
                2 => vec![(0, Coeff::MinusOne), (AUX_BASE + 3, Coeff::One)],
                _ => vec![(AUX_BASE + 5_000_000 - row as u64, Coeff::Table(u32::MAX))],
            };
            for &(c, k) in &terms {
                want.push((row, c, k));
            }
            m.push_row(&terms);
        }
        assert_eq!(m.chunks(), 3);
        let mut got = Vec::new();
        m.for_each_term(|r, c, k| got.push((r, c, k)));
        assert_eq!(got, want);
        for rows in [0..0, 0..3000, 5..6, 1000..2100, 2047..2049, 2990..4000] {
            let mut seen = Vec::new();
            let mut next = rows.start;
            m.for_each_row(rows.clone(), |terms| {
                seen.extend(terms.iter().map(|&(c, k)| (next, c, k)));
                next += 1;
            });
            let expected: Vec<_> = want
                .iter()
                .filter(|(r, _, _)| rows.contains(r))
                .copied()
                .collect();
            assert_eq!(seen, expected, "rows {rows:?}");
            assert_eq!(next, rows.end.min(3000).max(rows.start), "rows {rows:?}");
        }
        let below = |limit: u64| move |c: u64| c < AUX_BASE + limit;
        assert!(m.validate(below(1 << 40), u32::MAX as usize + 1).is_ok());
        assert!(m.validate(below(1 << 39), u32::MAX as usize + 1).is_err());
        assert!(m.validate(below(1 << 40), 8).is_err());
    }

    /// The bit-aware row sums against plain `Σ coeff·value`, on values that are mostly 0 and 1
    /// (the fast paths) mixed with random ones, rows of every coefficient kind, rows whose count
    /// of ones is negative, and rows with more ones than the small-count table holds.
    #[test]
    fn row_sums_match_plain_evaluation_on_bit_heavy_values() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
        let table: Vec<Scalar> = (0..5).map(|_| Scalar::random(&mut rng)).collect();
        let inputs: Vec<Scalar> = (0..4).map(|i| Scalar::from(i as u64 % 2)).collect();
        let aux: Vec<Scalar> = (0..4000)
            .map(|_| match rng.gen_range(0..10) {
                0..=3 => Scalar::ZERO,
                4..=7 => Scalar::ONE,
                8 => -Scalar::ONE,
                _ => Scalar::random(&mut rng),
            })
            .collect();
        let witness = Witness::new(&inputs, &aux);
        let z = |column: u64| {
            if column < AUX_BASE {
                inputs[column as usize]
            } else {
                aux[(column - AUX_BASE) as usize]
            }
        };
        let mut m = SparseMatrix::default();
        let mut rows = Vec::new();
        for row in 0..2500usize {
            let len = match row % 50 {
                0 => 600,
                1 => 0,
                _ => rng.gen_range(1..12),
            };
            let bias = rng.gen_range(0..3);
            let terms: Vec<(u64, Coeff)> = (0..len)
                .map(|_| {
                    let column = if rng.gen_range(0..8) == 0 {
                        rng.gen_range(0..inputs.len() as u64)
                    } else {
                        AUX_BASE + rng.gen_range(0..aux.len() as u64)
                    };
                    let coeff = match (bias, rng.gen_range(0..4)) {
                        (0, _) | (_, 0) => Coeff::MinusOne,
                        (1, _) | (_, 1) => Coeff::One,
                        _ => Coeff::Table(rng.gen_range(0..table.len() as u32)),
                    };
                    (column, coeff)
                })
                .collect();
            m.push_row(&terms);
            rows.push(terms);
        }
        let mut out = vec![MaybeUninit::new(Scalar::ZERO); ROWS_PER_CHUNK];
        for chunk in 0..m.chunks() {
            let first = chunk * ROWS_PER_CHUNK;
            let count = ROWS_PER_CHUNK.min(rows.len() - first);
            m.evaluate_chunk(chunk, &table, &witness, Shift::NONE, &mut out[..count]);
            // SAFETY: initialised above and written again by `evaluate_chunk`.
            let got: Vec<Scalar> = out[..count]
                .iter()
                .map(|v| unsafe { v.assume_init() })
                .collect();
            for (i, terms) in rows[first..first + count].iter().enumerate() {
                let mut want = Scalar::ZERO;
                for &(column, coeff) in terms {
                    coeff.accumulate(&table, &mut want, z(column));
                }
                assert_eq!(got[i], want, "row {}", first + i);
            }
        }
    }

    #[test]
    fn corrupt_bytes_are_an_error() {
        let mut m = SparseMatrix::default();
        m.push_row(&[(1, Coeff::One), (AUX_BASE + 2, Coeff::Table(3))]);
        let (bytes, starts, rows, nz) = m.parts();
        let mut cut = bytes.to_vec();
        cut.pop();
        let broken = SparseMatrix::from_parts(cut, starts.to_vec(), rows, nz);
        assert!(broken.validate(|c| c < AUX_BASE + 10, 10).is_err());
        let mut tag3 = bytes.to_vec();
        tag3[1] |= 3;
        let broken = SparseMatrix::from_parts(tag3, starts.to_vec(), rows, nz);
        assert!(broken.validate(|c| c < AUX_BASE + 10, 10).is_err());
    }
}
