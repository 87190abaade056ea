//! Peak heap of a parted circuit's PCE synthesis: each range of parts writes its values into the
//! caller's buffer set, not into heap vectors of its own that are then copied (at 32 GiB PoRep
//! those were about 4 GiB per partition, counted by no budget). Its own test binary: the
//! counting allocator sees every thread of the process, so nothing else may run beside it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use bellperson::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use cuzk::groth16::{
    pce, synthesize, synthesize_parted_with_pce, BufferSet, PartedCircuit, WholeCircuit,
};

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

/// A public seed x and its square (the preamble), then parts of `steps` allocations each: part
/// i multiplies by i + 2 at every step, then makes its end a public input.
#[derive(Clone, Copy)]
struct Powers {
    parts: usize,
    steps: usize,
}

impl PartedCircuit for Powers {
    fn parts(&self) -> usize {
        self.parts
    }

    fn synthesize_parts<CS: ConstraintSystem<Scalar>>(
        &self,
        cs: &mut CS,
        parts: std::ops::Range<usize>,
    ) -> Result<(), SynthesisError> {
        let x = Scalar::from(7u64);
        let x_var = cs.alloc_input(|| "x", || Ok(x))?;
        let square_var = cs.alloc(|| "x^2", || Ok(x * x))?;
        cs.enforce(
            || "square",
            |l| l + x_var,
            |l| l + x_var,
            |l| l + square_var,
        );
        for i in parts {
            let factor = Scalar::from(i as u64 + 2);
            let (mut value, mut var) = (x * x, square_var);
            for _ in 0..self.steps {
                let next = value * factor;
                let next_var = cs.alloc(|| "step", || Ok(next))?;
                cs.enforce(
                    || "step",
                    |l| l + var,
                    |l| l + (factor, CS::one()),
                    |l| l + next_var,
                );
                (value, var) = (next, next_var);
            }
            let end = cs.alloc_input(|| "end", || Ok(value))?;
            cs.enforce(|| "end", |l| l + var, |l| l + CS::one(), |l| l + end);
        }
        Ok(())
    }
}

#[test]
fn parted_synthesis_keeps_no_second_copy_of_the_parts_values() {
    let circuit = Powers {
        parts: 8,
        steps: 1 << 13,
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
