//! `ScalarBuf`: a growable vector of scalars that can live in memory the caller provides, such
//! as page-locked (pinned) host memory from a GPU backend, so synthesis writes a/b/c straight
//! into memory the device can copy from at full speed.

use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};

use blstrs::Scalar;
use log::warn;

/// A fixed-size block of host memory for scalars, owned by whoever allocated it (freed on
/// drop). Implemented by backends that allocate special memory.
pub trait HostBlock: Send + Sync {
    /// First scalar of the block (aligned for `Scalar`, valid for `capacity()` scalars).
    fn as_mut_ptr(&self) -> *mut Scalar;
    /// Number of scalars the block holds.
    fn capacity(&self) -> usize;
    /// Whether the block is page-locked (a device can copy from it asynchronously).
    fn is_pinned(&self) -> bool;
}

enum Storage {
    Heap(Vec<Scalar>),
    Block {
        block: Box<dyn HostBlock>,
        len: usize,
    },
}

/// A vector of scalars on the heap or in a caller's [`HostBlock`]. A block that would overflow
/// is replaced by heap memory (correct, but no longer pinned; logged once per overflow).
pub struct ScalarBuf {
    storage: Storage,
}

impl Default for ScalarBuf {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl std::fmt::Debug for ScalarBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScalarBuf")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .field("pinned", &self.is_pinned())
            .finish()
    }
}

impl ScalarBuf {
    /// An empty heap buffer with room for `capacity` scalars.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            storage: Storage::Heap(Vec::with_capacity(capacity)),
        }
    }

    /// An empty buffer in `block`.
    pub fn in_block(block: Box<dyn HostBlock>) -> Self {
        Self {
            storage: Storage::Block { block, len: 0 },
        }
    }

    /// Number of scalars stored.
    pub fn len(&self) -> usize {
        match &self.storage {
            Storage::Heap(v) => v.len(),
            Storage::Block { len, .. } => *len,
        }
    }

    /// Whether no scalar is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scalars that fit without reallocating.
    pub fn capacity(&self) -> usize {
        match &self.storage {
            Storage::Heap(v) => v.capacity(),
            Storage::Block { block, .. } => block.capacity(),
        }
    }

    /// Whether the memory is page-locked.
    pub fn is_pinned(&self) -> bool {
        matches!(&self.storage, Storage::Block { block, .. } if block.is_pinned())
    }

    /// Empties the buffer, keeping its memory.
    pub fn clear(&mut self) {
        match &mut self.storage {
            Storage::Heap(v) => v.clear(),
            Storage::Block { len, .. } => *len = 0,
        }
    }

    /// Makes room for `extra` more scalars, moving to the heap if a block is too small.
    pub fn reserve(&mut self, extra: usize) {
        if let Storage::Block { block, len } = &self.storage {
            if *len + extra > block.capacity() {
                warn!(
                    "a {}-scalar buffer block overflowed ({} needed); continuing in heap memory",
                    block.capacity(),
                    *len + extra
                );
                let mut v = Vec::with_capacity((*len + extra).max(2 * *len));
                v.extend_from_slice(self);
                self.storage = Storage::Heap(v);
            }
        }
        if let Storage::Heap(v) = &mut self.storage {
            v.reserve(extra);
        }
    }

    /// Appends one scalar.
    #[inline]
    pub fn push(&mut self, value: Scalar) {
        match &mut self.storage {
            Storage::Heap(v) => v.push(value),
            Storage::Block { block, len } if *len < block.capacity() => {
                // SAFETY: `len < capacity`, so the slot is inside the block.
                unsafe { block.as_mut_ptr().add(*len).write(value) };
                *len += 1;
            }
            Storage::Block { .. } => {
                self.reserve(1);
                self.push(value);
            }
        }
    }

    /// Appends a slice.
    pub fn extend_from_slice(&mut self, values: &[Scalar]) {
        self.reserve(values.len());
        match &mut self.storage {
            Storage::Heap(v) => v.extend_from_slice(values),
            Storage::Block { block, len } => {
                // SAFETY: `reserve` guaranteed room for `values.len()` more scalars; the
                // source is a different allocation.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        values.as_ptr(),
                        block.as_mut_ptr().add(*len),
                        values.len(),
                    )
                };
                *len += values.len();
            }
        }
    }

    /// Grows to `new_len` with `value` or shrinks to it.
    pub fn resize(&mut self, new_len: usize, value: Scalar) {
        let len = self.len();
        if new_len <= len {
            match &mut self.storage {
                Storage::Heap(v) => v.truncate(new_len),
                Storage::Block { len, .. } => *len = new_len,
            }
            return;
        }
        self.reserve(new_len - len);
        for _ in len..new_len {
            self.push(value);
        }
    }

    /// The stored scalars and the room after them (up to the capacity), for writers that fill
    /// that room in pieces, in parallel or out of order; [`Self::assume_filled`] then takes
    /// what they wrote as stored.
    pub fn stored_and_spare_mut(&mut self) -> (&mut [Scalar], &mut [MaybeUninit<Scalar>]) {
        let (start, len, capacity) = match &mut self.storage {
            Storage::Heap(v) => (v.as_mut_ptr(), v.len(), v.capacity()),
            Storage::Block { block, len } => (block.as_mut_ptr(), *len, block.capacity()),
        };
        // SAFETY: the first `len` scalars are initialised, the rest up to `capacity` belong to
        // the allocation; the two ranges do not overlap and `&mut self` makes them exclusive.
        unsafe {
            (
                std::slice::from_raw_parts_mut(start, len),
                std::slice::from_raw_parts_mut(
                    start.add(len) as *mut MaybeUninit<Scalar>,
                    capacity - len,
                ),
            )
        }
    }

    /// Takes the first `extra` scalars of the room after the stored ones as stored.
    ///
    /// # Safety
    /// `extra` is at most the spare room, and each of those scalars has been written (through
    /// [`Self::stored_and_spare_mut`]) since the buffer last changed length.
    pub unsafe fn assume_filled(&mut self, extra: usize) {
        debug_assert!(self.len() + extra <= self.capacity());
        match &mut self.storage {
            // SAFETY: the caller wrote them.
            Storage::Heap(v) => unsafe { v.set_len(v.len() + extra) },
            Storage::Block { len, .. } => *len += extra,
        }
    }

    /// Removes and returns the last scalar.
    pub fn pop(&mut self) -> Option<Scalar> {
        let last = self.last().copied();
        if last.is_some() {
            let n = self.len() - 1;
            self.resize(n, Scalar::from(0u64));
        }
        last
    }
}

impl Deref for ScalarBuf {
    type Target = [Scalar];

    fn deref(&self) -> &[Scalar] {
        match &self.storage {
            Storage::Heap(v) => v,
            // SAFETY: the first `len` scalars of the block were written by push/extend.
            Storage::Block { block, len } => unsafe {
                std::slice::from_raw_parts(block.as_mut_ptr(), *len)
            },
        }
    }
}

impl DerefMut for ScalarBuf {
    fn deref_mut(&mut self) -> &mut [Scalar] {
        match &mut self.storage {
            Storage::Heap(v) => v,
            // SAFETY: as in `deref`, and `&mut self` makes the access exclusive.
            Storage::Block { block, len } => unsafe {
                std::slice::from_raw_parts_mut(block.as_mut_ptr(), *len)
            },
        }
    }
}

impl From<Vec<Scalar>> for ScalarBuf {
    fn from(v: Vec<Scalar>) -> Self {
        Self {
            storage: Storage::Heap(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heap block standing in for pinned memory.
    struct TestBlock(Box<[Scalar]>);

    impl HostBlock for TestBlock {
        fn as_mut_ptr(&self) -> *mut Scalar {
            self.0.as_ptr() as *mut Scalar
        }
        fn capacity(&self) -> usize {
            self.0.len()
        }
        fn is_pinned(&self) -> bool {
            true
        }
    }

    fn s(x: u64) -> Scalar {
        Scalar::from(x)
    }

    #[test]
    fn block_buffer_behaves_like_a_vec_and_spills_to_the_heap() {
        let mut buf = ScalarBuf::in_block(Box::new(TestBlock(vec![s(0); 4].into_boxed_slice())));
        assert!(buf.is_pinned() && buf.is_empty() && buf.capacity() == 4);
        buf.push(s(1));
        buf.extend_from_slice(&[s(2), s(3)]);
        assert_eq!(&buf[..], &[s(1), s(2), s(3)]);
        buf[0] = s(9);
        assert_eq!(buf.pop(), Some(s(3)));
        buf.resize(4, s(7));
        assert_eq!(&buf[..], &[s(9), s(2), s(7), s(7)]);
        assert!(buf.is_pinned());
        buf.push(s(5));
        assert!(!buf.is_pinned(), "overflow moves to the heap");
        assert_eq!(&buf[..], &[s(9), s(2), s(7), s(7), s(5)]);
        buf.clear();
        assert!(buf.is_empty());
    }

    #[test]
    fn spare_room_written_in_pieces_becomes_stored() {
        let block = ScalarBuf::in_block(Box::new(TestBlock(vec![s(0); 6].into_boxed_slice())));
        for mut buf in [ScalarBuf::with_capacity(6), block] {
            buf.push(s(1));
            let (stored, spare) = buf.stored_and_spare_mut();
            assert_eq!(stored, &[s(1)]);
            assert!(spare.len() >= 5);
            let (left, right) = spare.split_at_mut(2);
            right[0].write(s(4));
            left[1].write(s(3));
            left[0].write(s(2));
            // SAFETY: the first three of the spare room were written just above.
            unsafe { buf.assume_filled(3) };
            assert_eq!(&buf[..], &[s(1), s(2), s(3), s(4)]);
        }
    }
}
