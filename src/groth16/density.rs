//! Density bitmaps: which variables appear (with a non-zero coefficient) in a query.
//!
//! The prover uses them to pick, for the A and B queries, only the SRS points that exist: the
//! parameter generator drops points at infinity, so the k-th set bit maps to the k-th point.

/// A growable bitmap with a running count of set bits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    /// An empty bitmap.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty bitmap with room for `bits` bits.
    pub fn with_capacity(bits: usize) -> Self {
        Self {
            words: Vec::with_capacity(bits.div_ceil(64)),
            len: 0,
            ones: 0,
        }
    }

    /// Appends one unset bit (a newly allocated variable).
    #[inline]
    pub fn push_unset(&mut self) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        self.len += 1;
    }

    /// Sets bit `index` (idempotent).
    #[inline]
    pub fn set(&mut self, index: usize) {
        debug_assert!(index < self.len);
        let word = &mut self.words[index / 64];
        let mask = 1u64 << (index % 64);
        if *word & mask == 0 {
            *word |= mask;
            self.ones += 1;
        }
    }

    /// Whether bit `index` is set.
    #[inline]
    pub fn get(&self, index: usize) -> bool {
        index < self.len && self.words[index / 64] & (1u64 << (index % 64)) != 0
    }

    /// The bits as little-endian 64-bit words (bit i is bit i%64 of word i/64); bits past
    /// `len` are zero.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap has no bits at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits (the number of SRS points the query uses).
    pub fn count_ones(&self) -> usize {
        self.ones
    }

    /// Iterates over the indices of set bits, in increasing order.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let tz = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + tz)
            })
        })
    }

    fn push_bit(&mut self, bit: bool) {
        self.push_unset();
        if bit {
            self.set(self.len - 1);
        }
    }

    /// Concatenates `other` after `self`, as bellperson's `extend` does for a sub-circuit.
    ///
    /// For an input density, `other` starts with its own copy of the ONE input, which merges
    /// into ours (bit 0) instead of being appended.
    pub fn extend_from(&mut self, other: &Density, is_input_density: bool) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
            return;
        }
        let skip = if is_input_density {
            if other.get(0) && !self.get(0) {
                self.set(0);
            }
            1
        } else {
            0
        };
        for index in skip..other.len {
            self.push_bit(other.get(index));
        }
    }

    /// A bitmap of `len` bits from its words (as [`Density::words`] gives them); None when the
    /// word count does not fit `len` or a bit past `len` is set.
    pub fn from_words(words: Vec<u64>, len: usize) -> Option<Self> {
        if words.len() != len.div_ceil(64) {
            return None;
        }
        if !len.is_multiple_of(64) && words.last().is_some_and(|w| w >> (len % 64) != 0) {
            return None;
        }
        let ones = words.iter().map(|w| w.count_ones() as usize).sum();
        Some(Self { words, len, ones })
    }

    /// Bytes held by the bitmap.
    pub fn byte_size(&self) -> usize {
        self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_count_and_iterate() {
        let mut d = Density::new();
        for _ in 0..130 {
            d.push_unset();
        }
        d.set(0);
        d.set(64);
        d.set(129);
        d.set(64);
        assert_eq!(d.count_ones(), 3);
        assert_eq!(d.iter_ones().collect::<Vec<_>>(), vec![0, 64, 129]);
        assert!(d.get(129) && !d.get(128) && !d.get(1000));
    }

    #[test]
    fn extend_merges_the_one_input() {
        let mut a = Density::new();
        a.push_unset();
        a.push_unset();
        a.set(1);
        let mut b = Density::new();
        b.push_unset();
        b.push_unset();
        b.set(0);
        b.set(1);
        let mut input = a.clone();
        input.extend_from(&b, true);
        assert_eq!(input.len(), 3);
        assert_eq!(input.iter_ones().collect::<Vec<_>>(), vec![0, 1, 2]);
        let mut aux = a.clone();
        aux.extend_from(&b, false);
        assert_eq!(aux.len(), 4);
        assert_eq!(aux.iter_ones().collect::<Vec<_>>(), vec![1, 2, 3]);
    }
}
