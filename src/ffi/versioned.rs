//! Out-structs that start with their own size, so that fields can be added at their end
//! without breaking programs built against an older header.
//!
//! The caller sets `struct_size = sizeof(T)` from its header. The library refuses a size
//! smaller than the first versioned layout, writes at most `struct_size` bytes (a newer
//! library never writes past an older caller's struct) and stores the number of bytes it
//! wrote in `struct_size` (a newer caller sees which trailing fields an older library left
//! alone).

use std::mem::size_of;

use super::guard::{invalid, non_null, FfiError};

/// A `#[repr(C)]` out-struct whose first field is `struct_size: u32`.
///
/// # Safety
/// Implementors must be `#[repr(C)]`, start with a `u32` size field and be plain data (any
/// byte prefix of a value may be copied out).
pub unsafe trait VersionedOut: Copy {
    /// The C name, for error messages.
    const NAME: &'static str;
    /// Size of the first versioned layout: the least `struct_size` a caller may pass. It
    /// never changes once released; fields added later make `size_of::<Self>()` larger.
    const FIRST_LAYOUT_SIZE: usize;
    /// Sets the `struct_size` field.
    fn set_struct_size(&mut self, size: u32);
}

/// Checks the caller's `struct_size` at `out` and returns how many bytes the library will
/// write there. Called before the work whose result goes there, so that a bad size costs
/// nothing (an awaited proof is not consumed).
///
/// # Safety
/// `out` must be null or point to at least 4 readable bytes, and to `struct_size` writable
/// bytes.
pub unsafe fn checked_size<T: VersionedOut>(out: *const T, what: &str) -> Result<usize, FfiError> {
    non_null(out, what)?;
    let claimed = std::ptr::read_unaligned(out.cast::<u32>()) as usize;
    if claimed < T::FIRST_LAYOUT_SIZE {
        return Err(invalid(format!(
            "{what}->struct_size is {claimed}: set it to sizeof({}) ({} in this library's header)",
            T::NAME,
            size_of::<T>()
        )));
    }
    Ok(claimed.min(size_of::<T>()))
}

/// Writes the first `n` bytes of `value` (from [`checked_size`]) to `out`, with
/// `struct_size = n`.
///
/// # Safety
/// As for [`checked_size`], which returned `n` for this `out`.
pub unsafe fn write_prefix<T: VersionedOut>(out: *mut T, mut value: T, n: usize) {
    debug_assert!(n >= T::FIRST_LAYOUT_SIZE && n <= size_of::<T>());
    value.set_struct_size(n as u32);
    std::ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), out.cast::<u8>(), n);
}

/// [`checked_size`] then [`write_prefix`]: for an out-struct filled without other work.
///
/// # Safety
/// As for [`checked_size`].
pub unsafe fn write_versioned<T: VersionedOut>(
    out: *mut T,
    value: T,
    what: &str,
) -> Result<(), FfiError> {
    let n = checked_size(out, what)?;
    write_prefix(out, value, n);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Old {
        struct_size: u32,
        a: u64,
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct New {
        struct_size: u32,
        a: u64,
        b: u64,
    }

    unsafe impl VersionedOut for New {
        const NAME: &'static str = "New";
        const FIRST_LAYOUT_SIZE: usize = size_of::<Old>();
        fn set_struct_size(&mut self, size: u32) {
            self.struct_size = size;
        }
    }

    const VALUE: New = New {
        struct_size: 0,
        a: 7,
        b: 9,
    };

    #[test]
    fn an_older_caller_gets_its_prefix_and_nothing_past_it() {
        // An old caller's struct followed by bytes it owns that must stay untouched.
        #[repr(C)]
        struct Guarded {
            old: Old,
            after: [u8; 16],
        }
        let mut g = Guarded {
            old: Old {
                struct_size: size_of::<Old>() as u32,
                a: 0,
            },
            after: [0xAB; 16],
        };
        unsafe {
            write_versioned((&mut g.old as *mut Old).cast::<New>(), VALUE, "out").unwrap();
        }
        assert_eq!(g.old.struct_size as usize, size_of::<Old>());
        assert_eq!(g.old.a, 7);
        assert_eq!(g.after, [0xAB; 16]);
    }

    #[test]
    fn a_newer_caller_learns_what_was_filled() {
        #[repr(C)]
        struct Newer {
            new: New,
            c: u64,
        }
        let mut n = Newer {
            new: New {
                struct_size: size_of::<Newer>() as u32,
                a: 0,
                b: 0,
            },
            c: 42,
        };
        unsafe { write_versioned(&mut n.new, VALUE, "out").unwrap() };
        assert_eq!(n.new.struct_size as usize, size_of::<New>());
        assert_eq!((n.new.a, n.new.b, n.c), (7, 9, 42));
    }

    #[test]
    fn a_size_below_the_first_layout_or_a_null_pointer_is_refused() {
        let mut out = New {
            struct_size: 0,
            a: 1,
            b: 2,
        };
        let e = unsafe { write_versioned(&mut out, VALUE, "out") }.unwrap_err();
        assert_eq!(e.code, super::super::types::CuzkCode::InvalidInput);
        assert!(e.message.contains("struct_size is 0"), "{}", e.message);
        assert_eq!((out.a, out.b), (1, 2), "nothing written");
        let e = unsafe { write_versioned(std::ptr::null_mut::<New>(), VALUE, "out") }.unwrap_err();
        assert_eq!(e.code, super::super::types::CuzkCode::NullArgument);
    }
}
