//! Peak heap of a parted circuit's PCE synthesis: each range of parts writes its values into the
//! caller's buffer set, not into heap vectors of its own that are then copied (at 32 GiB those
//! were about 4 GiB per PoRep or WindowPoSt partition, counted by no budget). Its own test
//! binary: the counting allocator sees every thread of the process, so its tests take turns
//! (`ONE_AT_A_TIME`) and nothing else runs beside them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use blstrs::Scalar;
use cuzk::groth16::{pce, synthesize, synthesize_parted_with_pce, BufferSet, WholeCircuit};

#[path = "common/mod.rs"]
mod fixture;
#[path = "common/parted.rs"]
mod parted;
use parted::Chains;

/// Held by each test while it counts.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let circuit = Chains {
        seed: 7,
        parts: 8,
        steps: 1 << 13,
        unequal_parts: false,
        part_factors: true,
        preamble_depends_on_range: false,
        shared_preamble: false,
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

    let (got, peak_growth) = peak_heap_growth(|| {
        pool.install(|| synthesize_parted_with_pce(&circuit, &recorded, set))
            .unwrap()
    });

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

/// Peak heap growth while `synthesize` runs.
fn peak_heap_growth<T>(synthesize: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let out = synthesize();
    (out, PEAK.load(Ordering::SeqCst) - before)
}

/// WinningPoSt and WindowPoSt partitions are many alike sectors, which storage-proofs
/// synthesizes in parallel chunks, each into a sub-system of its own (all held until they are
/// appended in order). Through the PCE the sectors are parts written into the set instead; on
/// the plain path the chunks come in waves. Both give the assignment storage-proofs' way gives.
#[test]
fn post_synthesis_keeps_no_second_copy_of_the_sectors_values() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let fx = fixture::fixture();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    for name in ["winning", "window"] {
        let request = fx.data.request(name).unwrap();
        let kind = request.circuit_kind();
        let srs = fx.srs.get(kind).unwrap();
        let pce = cuzk::proofs::pce::kind_pce(kind, &srs, fx.srs.dir()).unwrap();
        let set = || BufferSet::with_capacity(pce.num_constraints.max(pce.num_aux));
        let aux_bytes = pce.num_aux * std::mem::size_of::<Scalar>();
        let set_bytes = (3 * pce.num_constraints + pce.num_aux) * std::mem::size_of::<Scalar>();
        let plain_set = set();
        let ((want, _), plain_growth) = peak_heap_growth(|| {
            pool.install(|| request.synthesize_partition(0, plain_set, None))
                .unwrap()
        });
        // The plain path synthesizes the sectors in 16 waves of parallel chunks. WinningPoSt's
        // 66 sectors then hold about a sixteenth of the circuit at a time (1,675,432 bytes for
        // an 11,658,336-byte set); storage-proofs' one wave held it all a second time
        // (17,207,112). WindowPoSt at 2 KiB has only 2 sectors, so no wave can hold less than
        // half of it.
        if name == "winning" {
            assert!(
                plain_growth < set_bytes / 4,
                "{name}: plain synthesis grew the heap by {plain_growth} bytes at its peak; \
                 the set is {set_bytes}"
            );
        }
        let set = set();
        let ((got, _), peak_growth) = peak_heap_growth(|| {
            pool.install(|| request.synthesize_partition(0, set, Some(&pce)))
                .unwrap()
        });
        assert_eq!(got.aux[..], want.aux[..], "{name}");
        assert_eq!(got.inputs, want.inputs, "{name}");
        assert_eq!(got.abc.a[..], want.abc.a[..], "{name}");
        assert_eq!(got.abc.b[..], want.abc.b[..], "{name}");
        assert_eq!(got.abc.c[..], want.abc.c[..], "{name}");
        // The 2 KiB circuits are small, so the gadgets' own transient allocations on four
        // threads (about 200 KB) weigh here; holding the sectors' values a second time was
        // 1.5 to 1.7 times aux (4,480,224 bytes for winning's 2,933,568, 1,219,952 for
        // window's 708,096), and at 32 GiB it is gigabytes.
        assert!(
            peak_growth < aux_bytes / 2,
            "{name}: synthesis grew the heap by {peak_growth} bytes at its peak; aux is \
             {aux_bytes}"
        );
    }
}

/// The CPU prover's heap at its peak over a partition (the pending state held between the
/// phases, as the engine holds it) must stay within what the engine charges for it, however
/// many threads prove it: h's MSM runs a task a thread, each with a sorted order and buckets of
/// its own (at 2^16 points and 32 threads these were 4 times the whole charge).
#[test]
fn the_cpu_prover_stays_within_its_charge_with_any_number_of_threads() {
    use cuzk::groth16::test_circuits::{RandomCircuit, Sha256Preimage, Shape};
    use cuzk::groth16::{paramgen, Assignment, CpuBackend, ProverBackend, Randomness, Srs};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use std::sync::Arc;

    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let randomness = Randomness::random(&mut ChaCha20Rng::seed_from_u64(41));
    let len = Sha256Preimage::len_for_blocks(2);
    // Dense scalars (every MSM on the plain paths) and bit-heavy ones (the bit-aware MSMs).
    let random = RandomCircuit::new(Shape::Mixed, (1 << 16) - 16, 42);
    let sha = Sha256Preimage::with_seed(len, 43);
    let blank_sha = Sha256Preimage {
        len,
        preimage: None,
    };
    type Synthesize = Box<dyn Fn() -> Assignment>;
    let cases: [(&str, Srs, Synthesize); 2] = [
        (
            "random",
            Srs::from_parameters(
                &paramgen::generate(
                    random.clone(),
                    &mut ChaCha20Rng::seed_from_u64(44),
                    &|_, _| {},
                )
                .unwrap(),
            ),
            Box::new(move || synthesize(random.clone(), BufferSet::default()).unwrap()),
        ),
        (
            "sha256",
            Srs::from_parameters(
                &paramgen::generate(blank_sha, &mut ChaCha20Rng::seed_from_u64(45), &|_, _| {})
                    .unwrap(),
            ),
            Box::new(move || synthesize(sha.clone(), BufferSet::default()).unwrap()),
        ),
    ];
    for (name, srs, assignment) in cases {
        let srs = Arc::new(srs);
        for threads in [2, 8, 32] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let asg = assignment();
            let shape = asg.shape();
            let charged = shape.cpu_transient_bytes(threads);
            let (_, peak) = peak_heap_growth(|| {
                pool.install(|| {
                    let started = CpuBackend.prove_start(asg, &srs, randomness).unwrap();
                    // The buffer set goes back to the engine's pool here; it is not a transient.
                    drop(started.released);
                    CpuBackend.prove_finish(started.pending).unwrap()
                })
            });
            eprintln!("{name}, {threads} threads: peak {peak} bytes, charged {charged}");
            assert!(
                peak as u64 <= charged,
                "{name}, {threads} threads: the CPU prover held {peak} heap bytes at its peak, \
                 more than the {charged} charged for it"
            );
        }
    }
}
