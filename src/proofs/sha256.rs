//! The SHA-256 Merkle hash of the Filecoin circuits (filecoin-hashers' `Sha256Function` over
//! bellperson's SHA-256 gadget), with its witness computed natively on a witness-only system.
//!
//! bellperson's gadget builds linear combinations bit by bit outside `enforce` (every
//! addition's operands, `MultiEq`'s growing sums), which a witness-only system never reads;
//! that is most of a SnapDeals or PoRep witness. [`hash2`] replays the gadget on plain bits:
//! the same variables in the same order (a bit is allocated exactly where bellperson's
//! `Boolean` operations allocate one, which depends only on which bits are constants), the same
//! number of constraints, and values from integer arithmetic. On any other system it is
//! filecoin-hashers' own circuit.

use bellperson::gadgets::boolean::Boolean;
use bellperson::gadgets::num::AllocatedNum;
use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::{Field, PrimeField};
use filecoin_hashers::sha256::{Sha256Domain, Sha256Function};
use filecoin_hashers::HashFunction;

/// filecoin-hashers' SHA-256 of two nodes (`hash2_circuit`, and `hash_multi_leaf_circuit` for a
/// binary row, which allocate alike): each node's bits, then SHA-256 of their bytes, then the
/// digest's first 254 bits packed into a number.
pub fn hash2<CS: ConstraintSystem<Scalar>>(
    mut cs: CS,
    a: &AllocatedNum<Scalar>,
    b: &AllocatedNum<Scalar>,
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    if !cs.is_witness_generator() {
        return <Sha256Function as HashFunction<Sha256Domain>>::hash2_circuit(cs, a, b);
    }
    let mut preimage = Vec::with_capacity(512);
    for node in [a, b] {
        let mut bits = node
            .to_bits_le(&mut cs)?
            .iter()
            .map(Bit::of)
            .collect::<Result<Vec<_>, _>>()?;
        bits.resize(bits.len().next_multiple_of(8), Bit::Constant(false));
        preimage.extend(bits.chunks_exact(8).flat_map(|byte| byte.iter().rev()));
    }
    digest_packed(&mut cs, &preimage)
}

/// bellperson's `sha256` of `preimage`, then the digest's bytes as little-endian bits and the
/// first 254 of them packed into a number (`multipack::pack_bits`), as filecoin-hashers' Merkle
/// hash and storage-proofs-porep's labels do. For a witness generator only: computed natively.
pub(crate) fn sha256_packed<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    preimage: &[Boolean],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    if !cs.is_witness_generator() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let preimage = preimage
        .iter()
        .map(Bit::of)
        .collect::<Result<Vec<_>, _>>()?;
    digest_packed(cs, &preimage)
}

/// [`sha256_packed`] on bits.
fn digest_packed<CS: ConstraintSystem<Scalar>>(
    cs: &mut CS,
    preimage: &[Bit],
) -> Result<AllocatedNum<Scalar>, SynthesisError> {
    let digest = Native { cs: &mut *cs }.sha256(preimage)?;
    // The digest's bytes as little-endian bits, the first 254 of them packed.
    let le_bits: Vec<Bit> = digest
        .chunks(8)
        .flat_map(|byte| byte.iter().rev().copied())
        .take(Scalar::CAPACITY as usize)
        .collect();
    let packed = le_bits.iter().rev().fold(Scalar::ZERO, |sum, bit| {
        let sum = sum.double();
        if bit.value() {
            sum + Scalar::ONE
        } else {
            sum
        }
    });
    let output = AllocatedNum::alloc(&mut *cs, || Ok(packed))?;
    count_constraint(cs);
    Ok(output)
}

/// Counts one constraint on a witness generator, which never reads it.
fn count_constraint<CS: ConstraintSystem<Scalar>>(cs: &mut CS) {
    cs.enforce(|| "", |lc| lc, |lc| lc, |lc| lc);
}

/// A bit as bellperson's `Boolean` holds it: a constant, or an allocated bit (its value given)
/// read as it is or negated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bit {
    Constant(bool),
    Is(bool),
    Not(bool),
}

impl Bit {
    fn of(boolean: &Boolean) -> Result<Self, SynthesisError> {
        Ok(match boolean {
            Boolean::Constant(b) => Bit::Constant(*b),
            Boolean::Is(bit) => Bit::Is(bit.get_value().ok_or(SynthesisError::AssignmentMissing)?),
            Boolean::Not(bit) => {
                Bit::Not(bit.get_value().ok_or(SynthesisError::AssignmentMissing)?)
            }
        })
    }

    /// The value the bit stands for.
    fn value(self) -> bool {
        match self {
            Bit::Constant(b) | Bit::Is(b) => b,
            Bit::Not(b) => !b,
        }
    }

    fn not(self) -> Self {
        match self {
            Bit::Constant(b) => Bit::Constant(!b),
            Bit::Is(b) => Bit::Not(b),
            Bit::Not(b) => Bit::Is(b),
        }
    }

    fn is_constant(self) -> bool {
        matches!(self, Bit::Constant(_))
    }
}

/// A 32-bit word as bellperson's `UInt32`: its bits, least significant first.
#[derive(Clone, Copy)]
struct Word {
    bits: [Bit; 32],
    value: u32,
}

impl Word {
    fn constant(value: u32) -> Self {
        Word {
            bits: std::array::from_fn(|i| Bit::Constant((value >> i) & 1 == 1)),
            value,
        }
    }

    /// From 32 bits, most significant first.
    fn from_bits_be(bits: &[Bit]) -> Self {
        let bits: [Bit; 32] = std::array::from_fn(|i| bits[31 - i]);
        let value = bits
            .iter()
            .enumerate()
            .fold(0u32, |v, (i, bit)| v | (u32::from(bit.value()) << i));
        Word { bits, value }
    }

    fn rotr(&self, by: usize) -> Self {
        Word {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32]),
            value: self.value.rotate_right(by as u32),
        }
    }

    fn shr(&self, by: usize) -> Self {
        Word {
            bits: std::array::from_fn(|i| {
                self.bits
                    .get(i + by)
                    .copied()
                    .unwrap_or(Bit::Constant(false))
            }),
            value: self.value >> by,
        }
    }
}

/// bellperson's `MultiEq`: equalities packed into one constraint until 254 bits are used.
#[derive(Default)]
struct PackedEqualities {
    bits_used: usize,
}

/// The gadget's operations on plain bits, allocating into `cs` where bellperson's do.
struct Native<'c, CS> {
    cs: &'c mut CS,
}

impl<CS: ConstraintSystem<Scalar>> Native<'_, CS> {
    /// An allocated bit with its constraint.
    fn alloc(&mut self, value: bool) -> Result<Bit, SynthesisError> {
        self.cs
            .alloc(|| "", || Ok(if value { Scalar::ONE } else { Scalar::ZERO }))?;
        count_constraint(self.cs);
        Ok(Bit::Is(value))
    }

    /// `Boolean::xor`.
    fn xor(&mut self, a: Bit, b: Bit) -> Result<Bit, SynthesisError> {
        Ok(match (a, b) {
            (Bit::Constant(false), x) | (x, Bit::Constant(false)) => x,
            (Bit::Constant(true), x) | (x, Bit::Constant(true)) => x.not(),
            // The allocated bit is the xor of the variables, read negated when one was.
            (Bit::Is(u), Bit::Not(w)) | (Bit::Not(w), Bit::Is(u)) => self.alloc(u ^ w)?.not(),
            (Bit::Is(u), Bit::Is(w)) | (Bit::Not(u), Bit::Not(w)) => self.alloc(u ^ w)?,
        })
    }

    /// `Boolean::and`.
    fn and(&mut self, a: Bit, b: Bit) -> Result<Bit, SynthesisError> {
        Ok(match (a, b) {
            (Bit::Constant(false), _) | (_, Bit::Constant(false)) => Bit::Constant(false),
            (Bit::Constant(true), x) | (x, Bit::Constant(true)) => x,
            (a, b) => self.alloc(a.value() & b.value())?,
        })
    }

    /// `Boolean::sha256_ch`: (a and b) xor ((not a) and c), its cases in bellperson's order.
    fn ch(&mut self, a: Bit, b: Bit, c: Bit) -> Result<Bit, SynthesisError> {
        let value = (a.value() & b.value()) ^ (!a.value() & c.value());
        match (a, b, c) {
            (Bit::Constant(_), Bit::Constant(_), Bit::Constant(_)) => Ok(Bit::Constant(value)),
            (Bit::Constant(false), _, c) => Ok(c),
            (a, Bit::Constant(false), c) => self.and(a.not(), c),
            (a, b, Bit::Constant(false)) => self.and(a, b),
            (a, b, Bit::Constant(true)) => Ok(self.and(a, b.not())?.not()),
            (a, Bit::Constant(true), c) => Ok(self.and(a.not(), c.not())?.not()),
            _ => self.alloc(value),
        }
    }

    /// `Boolean::sha256_maj`: (a and b) xor (a and c) xor (b and c), its cases in
    /// bellperson's order; the general case allocates the result, then b and c, with one
    /// constraint each.
    fn maj(&mut self, a: Bit, b: Bit, c: Bit) -> Result<Bit, SynthesisError> {
        let value = (a.value() & b.value()) ^ (a.value() & c.value()) ^ (b.value() & c.value());
        match (a, b, c) {
            (Bit::Constant(_), Bit::Constant(_), Bit::Constant(_)) => Ok(Bit::Constant(value)),
            (Bit::Constant(false), b, c) => self.and(b, c),
            (a, Bit::Constant(false), c) => self.and(a, c),
            (a, b, Bit::Constant(false)) => self.and(a, b),
            (a, b, Bit::Constant(true)) => Ok(self.and(a.not(), b.not())?.not()),
            (a, Bit::Constant(true), c) => Ok(self.and(a.not(), c.not())?.not()),
            (Bit::Constant(true), b, c) => Ok(self.and(b.not(), c.not())?.not()),
            // The result (its constraint counted with it), then b and c with theirs.
            (_, b, c) => {
                let maj = self.alloc(value)?;
                self.and(b, c)?;
                Ok(maj)
            }
        }
    }

    fn xor_words(&mut self, a: &Word, b: &Word) -> Result<Word, SynthesisError> {
        let mut bits = [Bit::Constant(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = self.xor(a.bits[i], b.bits[i])?;
        }
        Ok(Word {
            bits,
            value: a.value ^ b.value,
        })
    }

    fn triop(
        &mut self,
        words: [&Word; 3],
        op: fn(&mut Self, Bit, Bit, Bit) -> Result<Bit, SynthesisError>,
        value: u32,
    ) -> Result<Word, SynthesisError> {
        let mut bits = [Bit::Constant(false); 32];
        for (i, bit) in bits.iter_mut().enumerate() {
            *bit = op(self, words[0].bits[i], words[1].bits[i], words[2].bits[i])?;
        }
        Ok(Word { bits, value })
    }

    /// `UInt32::addmany`: a constant if every operand bit is one, else the sum's bits
    /// allocated (as many as the largest possible sum needs) and their equality packed.
    fn add_many(
        &mut self,
        equalities: &mut PackedEqualities,
        operands: &[Word],
    ) -> Result<Word, SynthesisError> {
        let sum: u64 = operands.iter().map(|w| u64::from(w.value)).sum();
        if operands
            .iter()
            .all(|w| w.bits.iter().all(|b| b.is_constant()))
        {
            return Ok(Word::constant(sum as u32));
        }
        let max = operands.len() as u64 * u64::from(u32::MAX);
        let width = (u64::BITS - max.leading_zeros()) as usize;
        let mut bits = [Bit::Constant(false); 32];
        for i in 0..width {
            let bit = self.alloc((sum >> i) & 1 == 1)?;
            if let Some(slot) = bits.get_mut(i) {
                *slot = bit;
            }
        }
        if Scalar::CAPACITY as usize <= equalities.bits_used + width {
            count_constraint(self.cs);
            equalities.bits_used = 0;
        }
        equalities.bits_used += width;
        Ok(Word {
            bits,
            value: sum as u32,
        })
    }

    /// bellperson's `sha256`: the padded message's blocks through the compression function
    /// from the IV. Returns the digest's bits, most significant first.
    fn sha256(&mut self, input: &[Bit]) -> Result<Vec<Bit>, SynthesisError> {
        if !input.len().is_multiple_of(8) {
            return Err(SynthesisError::Unsatisfiable);
        }
        let mut padded = input.to_vec();
        let length = input.len() as u64;
        padded.push(Bit::Constant(true));
        while !(padded.len() + 64).is_multiple_of(512) {
            padded.push(Bit::Constant(false));
        }
        padded.extend((0..64).rev().map(|i| Bit::Constant((length >> i) & 1 == 1)));
        let mut state = IV.map(Word::constant);
        for block in padded.chunks(512) {
            state = self.compress(block, &state)?;
        }
        Ok(state
            .iter()
            .flat_map(|word| word.bits.iter().rev().copied())
            .collect())
    }

    /// bellperson's `sha256_compression_function`, additions deferred where it defers them.
    fn compress(&mut self, block: &[Bit], state: &[Word; 8]) -> Result<[Word; 8], SynthesisError> {
        let mut equalities = PackedEqualities::default();
        let mut w: Vec<Word> = block.chunks(32).map(Word::from_bits_be).collect();
        for i in 16..64 {
            let s0 = self.xor_words(&w[i - 15].rotr(7), &w[i - 15].rotr(18))?;
            let s0 = self.xor_words(&s0, &w[i - 15].shr(3))?;
            let s1 = self.xor_words(&w[i - 2].rotr(17), &w[i - 2].rotr(19))?;
            let s1 = self.xor_words(&s1, &w[i - 2].shr(10))?;
            let next = self.add_many(&mut equalities, &[w[i - 16], s0, w[i - 7], s1])?;
            w.push(next);
        }

        /// A word whose addition bellperson defers to its next use.
        enum Maybe {
            Deferred(Vec<Word>),
            Concrete(Word),
        }
        let compute = |native: &mut Self,
                       maybe: Maybe,
                       others: &[Word],
                       equalities: &mut PackedEqualities|
         -> Result<Word, SynthesisError> {
            match maybe {
                Maybe::Concrete(word) => Ok(word),
                Maybe::Deferred(mut words) => {
                    words.extend_from_slice(others);
                    native.add_many(equalities, &words)
                }
            }
        };

        let mut a = Maybe::Concrete(state[0]);
        let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *state;
        let mut e = Maybe::Concrete(state[4]);
        for (i, round_constant) in ROUND_CONSTANTS.iter().enumerate() {
            let new_e = compute(self, e, &[], &mut equalities)?;
            let s1 = self.xor_words(&new_e.rotr(6), &new_e.rotr(11))?;
            let s1 = self.xor_words(&s1, &new_e.rotr(25))?;
            let ch_value = (new_e.value & f.value) ^ (!new_e.value & g.value);
            let ch = self.triop([&new_e, &f, &g], Self::ch, ch_value)?;
            let temp1 = [h, s1, ch, Word::constant(*round_constant), w[i]];

            let new_a = compute(self, a, &[], &mut equalities)?;
            let s0 = self.xor_words(&new_a.rotr(2), &new_a.rotr(13))?;
            let s0 = self.xor_words(&s0, &new_a.rotr(22))?;
            let maj_value = (new_a.value & b.value) ^ (new_a.value & c.value) ^ (b.value & c.value);
            let maj = self.triop([&new_a, &b, &c], Self::maj, maj_value)?;

            h = g;
            g = f;
            f = new_e;
            e = Maybe::Deferred(temp1.iter().copied().chain(Some(d)).collect());
            d = c;
            c = b;
            b = new_a;
            a = Maybe::Deferred(temp1.iter().copied().chain([s0, maj]).collect());
        }

        let h0 = compute(self, a, &[state[0]], &mut equalities)?;
        let h1 = self.add_many(&mut equalities, &[state[1], b])?;
        let h2 = self.add_many(&mut equalities, &[state[2], c])?;
        let h3 = self.add_many(&mut equalities, &[state[3], d])?;
        let h4 = compute(self, e, &[state[4]], &mut equalities)?;
        let h5 = self.add_many(&mut equalities, &[state[5], f])?;
        let h6 = self.add_many(&mut equalities, &[state[6], g])?;
        let h7 = self.add_many(&mut equalities, &[state[7], h])?;
        if equalities.bits_used > 0 {
            count_constraint(self.cs);
        }
        Ok([h0, h1, h2, h3, h4, h5, h6, h7])
    }
}

/// SHA-256's initial hash value.
const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// SHA-256's round constants.
const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

#[cfg(test)]
mod tests {
    use super::hash2;
    use crate::groth16::pce::WitnessCs;
    use bellperson::gadgets::num::AllocatedNum;
    use bellperson::ConstraintSystem;
    use blstrs::Scalar;
    use ff::Field;
    use filecoin_hashers::sha256::{Sha256Domain, Sha256Function};
    use filecoin_hashers::HashFunction;
    use rand::SeedableRng;

    /// Our witness of a SHA-256 Merkle hash is bellperson's gadget's, value for value, and
    /// its output the hash filecoin-hashers computes outside a circuit.
    #[test]
    fn native_witness_is_the_gadgets() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for round in 0..4 {
            let (x, y) = match round {
                0 => (Scalar::ZERO, Scalar::ZERO),
                1 => (Scalar::ONE, -Scalar::ONE),
                _ => (Scalar::random(&mut rng), Scalar::random(&mut rng)),
            };
            let run = |native: bool| {
                let mut cs: WitnessCs = WitnessCs::default();
                cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
                let a = AllocatedNum::alloc(&mut cs, || Ok(x)).unwrap();
                let b = AllocatedNum::alloc(&mut cs, || Ok(y)).unwrap();
                let out = if native {
                    hash2(&mut cs, &a, &b).unwrap()
                } else {
                    <Sha256Function as HashFunction<Sha256Domain>>::hash2_circuit(&mut cs, &a, &b)
                        .unwrap()
                };
                (cs, out.get_value().unwrap())
            };
            let (gadget, gadget_out) = run(false);
            let (ours, ours_out) = run(true);
            assert_eq!(gadget.aux_values(), ours.aux_values(), "round {round}");
            assert_eq!(gadget.counted_constraints(), ours.counted_constraints());
            assert_eq!(gadget_out, ours_out);
            let expected: Scalar = <Sha256Function as HashFunction<Sha256Domain>>::hash2(
                &Sha256Domain::from(x),
                &Sha256Domain::from(y),
            )
            .into();
            assert_eq!(ours_out, expected);
        }
    }
}
