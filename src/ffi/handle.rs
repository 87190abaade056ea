//! How C holds Rust objects: opaque handles shared by reference count and checked on every use.
//!
//! A handle C receives is a token, never an address: a tag, a slot index and the slot's
//! generation, packed into a pointer-sized value outside any address space a process can map
//! (so a garbage collector scanning it, Go's included, ignores it). Each call looks the token
//! up under a short lock and clones the object's `Arc` for the duration of the call; closing
//! removes the token and drops only the table's reference. So a close racing any call is safe
//! (calls already inside keep the object alive and see it closed), and a call with a closed,
//! stale, doubly closed or made-up handle gets an error instead of touching freed memory.

use std::sync::{Arc, Mutex};

use super::guard::FfiError;
use super::types::CuzkCode;

/// Top 16 bits of every token: non-canonical on x86-64 and aarch64, so never a mapped address.
const TAG: u64 = 0xC0DE << 48;
/// Bits of a token holding the slot index (the rest below the tag is the generation).
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;
const GENERATION_MASK: u64 = (1 << (48 - INDEX_BITS)) - 1;

const _: () = assert!(usize::BITS == 64, "cuzk's C handles need 64-bit pointers");

/// Ties an opaque C type to the Rust object behind it: C sees `*mut Self::Opaque`, cuzk keeps
/// `Arc<Self>` in [`Self::table`].
pub trait SharedHandle: Send + Sync + Sized + 'static {
    /// The incomplete type C holds pointers to (declared, never defined, in the header).
    type Opaque;
    /// What the handle is called in error messages ("engine").
    const NAME: &'static str;

    /// Every live handle of this type.
    fn table() -> &'static HandleTable<Self>;

    /// Shares `object` with C: the returned handle holds one reference until [`Self::release`].
    fn into_handle(object: Arc<Self>) -> Result<*mut Self::Opaque, FfiError> {
        Self::table().insert(object)
    }

    /// The object behind `handle`, kept alive for as long as the caller holds the `Arc`.
    /// `NullArgument` for null, `Closed` for a handle that is closed or was never issued.
    fn from_handle(handle: *const Self::Opaque) -> Result<Arc<Self>, FfiError> {
        if handle.is_null() {
            return Err(FfiError::new(
                CuzkCode::NullArgument,
                format!("{} is null", Self::NAME),
            ));
        }
        Self::table().get(handle as usize as u64).ok_or_else(|| {
            FfiError::new(
                CuzkCode::Closed,
                format!("{} handle is closed (or was never opened)", Self::NAME),
            )
        })
    }

    /// Drops C's reference: later lookups fail; the object lives on while calls hold it.
    /// `None` when the handle was already released or never issued.
    fn release(handle: *const Self::Opaque) -> Option<Arc<Self>> {
        Self::table().remove(handle as usize as u64)
    }
}

/// A slot table of shared objects, indexed by token.
pub struct HandleTable<T> {
    slots: Mutex<Slots<T>>,
}

struct Slots<T> {
    entries: Vec<(u64, Option<Arc<T>>)>,
    free: Vec<usize>,
}

impl<T> HandleTable<T> {
    /// An empty table (for a `static`).
    pub const fn new() -> Self {
        Self {
            slots: Mutex::new(Slots {
                entries: Vec::new(),
                free: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots<T>> {
        // The table's invariants hold between statements; a poisoned lock is still consistent.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert<O>(&self, object: Arc<T>) -> Result<*mut O, FfiError> {
        let mut slots = self.lock();
        let index = match slots.free.pop() {
            Some(i) => i,
            None if (slots.entries.len() as u64) < INDEX_MASK => {
                slots.entries.push((0, None));
                slots.entries.len() - 1
            }
            None => return Err(FfiError::new(CuzkCode::TooLarge, "too many open handles")),
        };
        let entry = &mut slots.entries[index];
        entry.0 = (entry.0 + 1) & GENERATION_MASK;
        entry.1 = Some(object);
        let token = TAG | (entry.0 << INDEX_BITS) | index as u64;
        Ok(token as usize as *mut O)
    }

    fn slot(token: u64) -> Option<(usize, u64)> {
        (token & !((GENERATION_MASK << INDEX_BITS) | INDEX_MASK) == TAG).then_some((
            (token & INDEX_MASK) as usize,
            (token >> INDEX_BITS) & GENERATION_MASK,
        ))
    }

    fn get(&self, token: u64) -> Option<Arc<T>> {
        let (index, generation) = Self::slot(token)?;
        let slots = self.lock();
        match slots.entries.get(index) {
            Some((g, Some(object))) if *g == generation => Some(Arc::clone(object)),
            _ => None,
        }
    }

    fn remove(&self, token: u64) -> Option<Arc<T>> {
        let (index, generation) = Self::slot(token)?;
        let mut slots = self.lock();
        let object = match slots.entries.get_mut(index) {
            Some((g, object)) if *g == generation => object.take()?,
            _ => return None,
        };
        slots.free.push(index);
        Some(object)
    }
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Thing(u32);
    struct OpaqueThing;
    static THINGS: HandleTable<Thing> = HandleTable::new();
    impl SharedHandle for Thing {
        type Opaque = OpaqueThing;
        const NAME: &'static str = "thing";
        fn table() -> &'static HandleTable<Self> {
            &THINGS
        }
    }

    #[test]
    fn a_released_or_forged_handle_is_refused_and_a_reused_slot_gets_a_new_token() {
        let a = Thing::into_handle(Arc::new(Thing(1))).unwrap();
        assert_eq!(Thing::from_handle(a).unwrap().0, 1);
        let held = Thing::from_handle(a).unwrap();
        assert!(Thing::release(a).is_some());
        // A call in progress keeps the object alive after the release.
        assert_eq!(held.0, 1);
        assert_eq!(Arc::strong_count(&held), 1);
        let closed = Thing::from_handle(a).map(|_| ()).unwrap_err();
        assert_eq!(closed.code, CuzkCode::Closed);
        assert!(
            Thing::release(a).is_none(),
            "a second release finds nothing"
        );

        // The slot is reused with a new generation: the old token still finds nothing.
        let b = Thing::into_handle(Arc::new(Thing(2))).unwrap();
        assert_ne!(a, b);
        assert_eq!(Thing::from_handle(b).unwrap().0, 2);
        assert!(Thing::from_handle(a).is_err());
        assert!(
            Thing::release(a).is_none(),
            "the old token cannot close the new object"
        );
        assert_eq!(Thing::from_handle(b).unwrap().0, 2);

        // Null, addresses and other tags: refused.
        assert_eq!(
            Thing::from_handle(std::ptr::null())
                .map(|_| ())
                .unwrap_err()
                .code,
            CuzkCode::NullArgument
        );
        let local = 7u64;
        for forged in [
            &local as *const u64 as usize,
            8,
            usize::MAX,
            (b as usize) ^ (1 << 62),
            (b as usize) + 1,
        ] {
            assert!(Thing::from_handle(forged as *const OpaqueThing).is_err());
            assert!(Thing::release(forged as *const OpaqueThing).is_none());
        }
        assert!(Thing::release(b).is_some());
    }
}
