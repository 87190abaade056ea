//! The witness as the sparse product reads it: the values, and one byte per variable saying
//! whether it is 0, 1 or something else.
//!
//! Most witness values of a Filecoin circuit are 0 or 1 (bits of decompositions and hashes).
//! A term whose variable is 0 adds nothing and one whose variable is 1 adds its coefficient, so
//! the product mostly needs to know the kind of a variable, not its 32-byte value. Reading the
//! kind from a byte array 32 times smaller than the values keeps those reads in cache; the
//! values themselves are read only for the few variables that are neither.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::matrix::Coeff;

/// The variable is 0.
const ZERO: u8 = 0;
/// The variable is 1.
const ONE: u8 = 1;
/// Any other value.
const OTHER: u8 = 2;

/// Montgomery limbs of 1 (`Scalar::ONE`).
const ONE_LIMBS: [u64; 4] = [
    0x0000_0001_ffff_fffe,
    0x5884_b7fa_0003_4802,
    0x998c_4fef_ecbc_4ff5,
    0x1824_b159_acc5_056f,
];

fn kind_of(value: &Scalar) -> u8 {
    match blst::blst_fr::from(*value).l {
        [0, 0, 0, 0] => ZERO,
        ONE_LIMBS => ONE,
        _ => OTHER,
    }
}

/// A partition's witness (z = inputs ++ aux, columns as in [`super::AUX_BASE`]) with each
/// variable's kind. Costs one byte per variable beside the values, for as long as the product
/// runs.
pub struct Witness<'a> {
    inputs: &'a [Scalar],
    aux: &'a [Scalar],
    input_kinds: Vec<u8>,
    aux_kinds: Vec<u8>,
}

impl<'a> Witness<'a> {
    /// Classifies every variable (in parallel).
    pub fn new(inputs: &'a [Scalar], aux: &'a [Scalar]) -> Self {
        let kinds = |values: &[Scalar]| -> Vec<u8> {
            values
                .par_iter()
                .with_min_len(1 << 14)
                .map(kind_of)
                .collect()
        };
        Self {
            input_kinds: kinds(inputs),
            aux_kinds: kinds(aux),
            inputs,
            aux,
        }
    }

    /// Input `i`'s kind and value; the input must exist (validated matrices only).
    #[inline(always)]
    pub fn input(&self, i: usize) -> (u8, &Scalar) {
        (self.input_kinds[i], &self.inputs[i])
    }

    /// Aux variable `i`'s kind and value; it must exist (validated matrices only).
    #[inline(always)]
    pub fn aux(&self, i: usize) -> (u8, &Scalar) {
        (self.aux_kinds[i], &self.aux[i])
    }
}

/// One row's sum `Σ coeff·value`: a zero term is skipped, a one times ±1 is counted in an
/// integer, a one times a table coefficient is a copy or a field addition; only the rest
/// multiply. A row of bits and ±1 coefficients (every boolean constraint) needs no field
/// operation at all: its value is a count, looked up in [`Counts`].
#[derive(Default)]
pub struct RowSum {
    field: Scalar,
    /// Whether `field` holds a term (else it is 0 and the first term is copied, not added).
    touched: bool,
    ones: i64,
}

impl RowSum {
    /// Adds `coeff · value`, `kind` being the value's kind (from [`Witness`]).
    #[inline(always)]
    pub fn add(&mut self, table: &[Scalar], coeff: Coeff, kind: u8, value: &Scalar) {
        // 0 and 1 are equally likely and interleave at random: the ±1 cases add the kind
        // itself instead of branching on it.
        match (kind, coeff) {
            (ZERO | ONE, Coeff::One) => self.ones += i64::from(kind),
            (ZERO | ONE, Coeff::MinusOne) => self.ones -= i64::from(kind),
            (ZERO, _) => {}
            (ONE, Coeff::Table(i)) => self.add_field(table[i as usize]),
            (_, Coeff::One) => self.add_field(*value),
            (_, Coeff::MinusOne) => self.add_field(-*value),
            (_, Coeff::Table(i)) => self.add_field(table[i as usize] * value),
        }
    }

    #[inline(always)]
    fn add_field(&mut self, term: Scalar) {
        if self.touched {
            self.field += term;
        } else {
            self.field = term;
            self.touched = true;
        }
    }

    /// The row's value.
    #[inline(always)]
    pub fn finish(self, counts: &Counts) -> Scalar {
        match (self.touched, self.ones) {
            (false, 0) => Scalar::ZERO,
            (true, 0) => self.field,
            (false, ones) => counts.get(ones),
            (true, ones) => self.field + counts.get(ones),
        }
    }
}

/// Small signed integers as scalars: a row's count of ones is small (a boolean constraint has
/// one or two terms), and a lookup is cheaper than a conversion (a multiplication).
pub struct Counts {
    /// `i` at index `LIMIT + i`, for `|i| < LIMIT`.
    table: Vec<Scalar>,
}

impl Counts {
    const LIMIT: i64 = 256;

    /// The shared table (built once).
    pub fn shared() -> &'static Counts {
        static COUNTS: std::sync::LazyLock<Counts> = std::sync::LazyLock::new(|| {
            let positive: Vec<Scalar> =
                std::iter::successors(Some(Scalar::ZERO), |s| Some(*s + Scalar::ONE))
                    .take(Counts::LIMIT as usize)
                    .collect();
            let table = positive[1..]
                .iter()
                .rev()
                .map(|s| -*s)
                .chain(positive.iter().copied())
                .collect();
            Counts { table }
        });
        &COUNTS
    }

    /// `n` as a scalar.
    #[inline(always)]
    pub fn get(&self, n: i64) -> Scalar {
        if n.unsigned_abs() < Self::LIMIT as u64 {
            self.table[(n + Self::LIMIT - 1) as usize]
        } else if n < 0 {
            -Scalar::from(n.unsigned_abs())
        } else {
            Scalar::from(n as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_name_zero_one_and_the_rest() {
        assert_eq!(blst::blst_fr::from(Scalar::ONE).l, ONE_LIMBS);
        assert_eq!(kind_of(&Scalar::ZERO), ZERO);
        assert_eq!(kind_of(&Scalar::ONE), ONE);
        for other in [
            -Scalar::ONE,
            Scalar::from(2u64),
            Scalar::ONE.double().invert().unwrap(),
        ] {
            assert_eq!(kind_of(&other), OTHER);
        }
    }

    #[test]
    fn counts_are_the_signed_integers() {
        let counts = Counts::shared();
        for n in [0i64, 1, 2, 254, 255, 256, 257, 1000, i64::MAX] {
            assert_eq!(counts.get(n), Scalar::from(n as u64), "{n}");
            assert_eq!(counts.get(-n), -Scalar::from(n as u64), "-{n}");
        }
        assert_eq!(counts.get(i64::MIN), -Scalar::from(1u64 << 63));
    }
}
