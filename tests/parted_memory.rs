//! Peak heap of a parted circuit's PCE synthesis: each range of parts writes its values into the
//! caller's buffer set, not into heap vectors of its own that are then copied (at 32 GiB PoRep
//! those were about 4 GiB per partition, counted by no budget). Its own test binary: the
//! counting allocator sees every thread of the process, so nothing else may run beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use blstrs::Scalar;
use cuzk::groth16::{pce, synthesize, synthesize_parted_with_pce, BufferSet, WholeCircuit};

#[path = "common/parted.rs"]
mod parted;
use parted::Chains;

/// The system allocator, counting the bytes held now and the most held since `reset_peak`.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = HELD.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

// SAFETY: every call is forwarded to `System` unchanged; only counters are updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::SeqCst);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn parted_synthesis_keeps_no_second_copy_of_the_parts_values() {
    let circuit = Chains {
        seed: 7,
        parts: 8,
        steps: 1 << 13,
        unequal_parts: false,
        preamble_depends_on_range: false,
    };
    let recorded = pce::record(WholeCircuit(circuit)).unwrap();
    let want = synthesize(WholeCircuit(circuit), BufferSet::default()).unwrap();
    let aux_bytes = recorded.num_aux * std::mem::size_of::<Scalar>();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    // A set with room for everything, as the engine's pool lends it, allocated before counting.
    let set = BufferSet::with_capacity(recorded.num_constraints.max(recorded.num_aux));

    let before = HELD.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let got = pool
        .install(|| synthesize_parted_with_pce(&circuit, &recorded, set))
        .unwrap();
    let peak_growth = PEAK.load(Ordering::SeqCst) - before;

    assert_eq!(got.aux[..], want.aux[..]);
    assert_eq!(got.inputs, want.inputs);
    assert_eq!(got.abc.a[..], want.abc.a[..]);
    assert_eq!(got.abc.b[..], want.abc.b[..]);
    assert_eq!(got.abc.c[..], want.abc.c[..]);
    // Beside the set: a byte per variable for the product, the density bitmaps, the inputs and
    // the preamble's copies. Holding the parts' values a second time would be all of aux again.
    assert!(
        peak_growth < aux_bytes / 8,
        "synthesis grew the heap by {peak_growth} bytes at its peak; aux is {aux_bytes}"
    );
}
