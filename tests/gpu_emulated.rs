//! The CUDA backend's own code (partition layout, copies, density gathers, resident SRS, device
//! buffer pool, the two phases, error paths) over the host emulation of the device (feature
//! `gpu-emulator`, see src/gpu/emulator): its proofs must be byte-identical to bellperson's
//! `create_proof` and to the CPU backend's for the same assignments, r and s, and pass
//! bellperson's verifier. The emulator runs queued work only when the host waits for it, so a
//! missing wait in the backend fails these tests every time.
//!
//! Device 0 serves the proving tests; device 1 is broken on purpose by the sticky-error test.
#![cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]

use std::sync::Arc;

use bellperson::groth16::create_proof;
use blstrs::Bls12;
use cuzk::engine::{Config, Engine, Workload};
use cuzk::gpu::cuda::{GpuBackend, GpuPending, InjectAt};
use cuzk::gpu::emulator;
use cuzk::groth16::paramgen;
use cuzk::groth16::test_circuits::{RandomCircuit, Sha256Preimage, Shape};
use cuzk::groth16::{
    synthesize, verify, BufferSet, CircuitShape, CpuBackend, Density, HostMemory, Proof,
    ProverBackend, Randomness, Srs,
};
use cuzk::proofs::workload::FilecoinWorkload;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

mod common;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// A random circuit of `2^lg - 16` constraints with its parameters and bellperson's proof for
/// randomness `seed`.
struct Case {
    lg: u32,
    circuit: RandomCircuit,
    srs: Arc<Srs>,
    randomness: Randomness,
    reference: Vec<u8>,
}

fn case(shape: Shape, lg: u32, seed: u64) -> Case {
    let circuit = RandomCircuit::new(shape, (1usize << lg) - 16, seed);
    let params = paramgen::generate(circuit.clone(), &mut rng(seed), &|_, _| {}).unwrap();
    let randomness = Randomness::random(&mut rng(seed + 1));
    let theirs =
        create_proof::<Bls12, _, _>(circuit.clone(), &params, randomness.r, randomness.s).unwrap();
    let mut reference = Vec::new();
    theirs.write(&mut reference).unwrap();
    Case {
        lg,
        circuit,
        srs: Arc::new(Srs::from_parameters(&params)),
        randomness,
        reference,
    }
}

impl Case {
    fn buffers(&self, gpu: &GpuBackend, pinned: bool) -> BufferSet {
        if pinned {
            // Room for the input constraints too (InputsOnly doubles the count).
            gpu.alloc_buffers(4 << self.lg)
        } else {
            BufferSet::default()
        }
    }

    /// Asserts `proof` equals bellperson's bytes and passes bellperson's verifier.
    fn assert_matches(&self, proof: &Proof, what: &str) {
        assert_eq!(
            proof.to_bytes().to_vec(),
            self.reference,
            "{what}: proof differs from bellperson's"
        );
        assert!(
            verify(&self.srs, proof, &self.circuit.public_inputs()),
            "{what}: proof does not verify"
        );
    }
}

#[test]
fn gpu_backend_proofs_equal_bellperson_for_every_shape_from_pinned_and_pageable_buffers() {
    let _ = env_logger::builder().is_test(true).try_init();
    let gpu = GpuBackend::open(0, false).unwrap();
    let shapes = [
        (Shape::Mixed, 10),
        (Shape::InputsOnly, 10),
        (Shape::AuxOnly, 10),
        (Shape::AbsentFromA, 10),
        (Shape::EmptyB, 10),
        (Shape::Extended, 10),
        (Shape::Mixed, 13),
    ];
    for (i, (shape, lg)) in shapes.into_iter().enumerate() {
        let c = case(shape, lg, 40 + i as u64);
        for pinned in [true, false] {
            let asg = synthesize(c.circuit.clone(), c.buffers(&gpu, pinned)).unwrap();
            assert_eq!(
                asg.abc.is_pinned(),
                pinned,
                "{shape:?} 2^{lg}: {}",
                asg.num_constraints()
            );
            let proof = gpu.prove(asg, &c.srs, c.randomness).unwrap();
            c.assert_matches(&proof, &format!("{shape:?} 2^{lg} pinned={pinned}"));
        }
        let cpu = CpuBackend
            .prove(
                synthesize(c.circuit.clone(), BufferSet::default()).unwrap(),
                &c.srs,
                c.randomness,
            )
            .unwrap();
        c.assert_matches(&cpu, "CPU backend");
    }
    // Domains below the device range are proved on the CPU inside the GPU backend.
    let small = case(Shape::Mixed, 8, 90);
    let asg = synthesize(small.circuit.clone(), BufferSet::default()).unwrap();
    let proof = gpu.prove(asg, &small.srs, small.randomness).unwrap();
    small.assert_matches(&proof, "2^8 (CPU path)");
}

/// `d` with its first set bit moved to its first unset bit (the same number of ones, so the
/// SRS still fits, but other variables gathered).
fn with_a_bit_moved(d: &Density) -> Density {
    let set = (0..d.len()).find(|&i| d.get(i)).expect("a set bit");
    let unset = (0..d.len()).find(|&i| !d.get(i)).expect("an unset bit");
    let mut moved = Density::new();
    for i in 0..d.len() {
        moved.push_unset();
        if i != set && (d.get(i) || i == unset) {
            moved.set(i);
        }
    }
    assert_eq!(moved.count_ones(), d.count_ones());
    moved
}

#[test]
fn density_maps_stay_on_the_device_and_maps_that_differ_are_uploaded_not_assumed() {
    let _ = env_logger::builder().is_test(true).try_init();
    let gpu = GpuBackend::open(0, false).unwrap();
    let c = case(Shape::Mixed, 10, 61);
    let uploads = |from: usize| gpu.density_uploads() - from;
    let start = gpu.density_uploads();
    for (i, pinned) in [true, false, true].into_iter().enumerate() {
        let asg = synthesize(c.circuit.clone(), c.buffers(&gpu, pinned)).unwrap();
        let proof = gpu.prove(asg, &c.srs, c.randomness).unwrap();
        c.assert_matches(&proof, &format!("partition {i}"));
    }
    assert_eq!(uploads(start), 1, "one circuit's maps are uploaded once");

    // Maps that differ from the kept ones (one bit of A's moved): the device must gather with
    // these, exactly as the CPU backend does, not with the kept maps.
    let altered = || {
        let mut asg = synthesize(c.circuit.clone(), BufferSet::default()).unwrap();
        asg.a_aux_density = with_a_bit_moved(&asg.a_aux_density);
        asg
    };
    let on_gpu = gpu.prove(altered(), &c.srs, c.randomness).unwrap();
    let on_cpu = CpuBackend.prove(altered(), &c.srs, c.randomness).unwrap();
    assert_ne!(
        on_cpu.to_bytes().to_vec(),
        c.reference,
        "the moved bit changed nothing"
    );
    assert_eq!(
        on_gpu.to_bytes().to_vec(),
        on_cpu.to_bytes().to_vec(),
        "the device did not gather with the partition's own maps"
    );
    assert_eq!(uploads(start), 2, "maps that differ are uploaded");

    // And back: the circuit's own maps replace the altered ones.
    let asg = synthesize(c.circuit.clone(), c.buffers(&gpu, true)).unwrap();
    let proof = gpu.prove(asg, &c.srs, c.randomness).unwrap();
    c.assert_matches(&proof, "after the altered maps");
    assert_eq!(uploads(start), 3);
}

#[test]
fn the_msm_bit_split_gives_bellpersons_proof_and_dense_scalars_skip_it() {
    let _ = env_logger::builder().is_test(true).try_init();
    let gpu = GpuBackend::open(0, false).unwrap();
    // SHA-256: nearly every witness value is a bit, as in Filecoin's circuits.
    let len = Sha256Preimage::len_for_blocks(1);
    let blank = Sha256Preimage {
        len,
        preimage: None,
    };
    let params = paramgen::generate(blank, &mut rng(60), &|_, _| {}).unwrap();
    let srs = Arc::new(Srs::from_parameters(&params));
    let circuit = Sha256Preimage::with_seed(len, 61);
    let randomness = Randomness::random(&mut rng(62));
    let theirs =
        create_proof::<Bls12, _, _>(circuit.clone(), &params, randomness.r, randomness.s).unwrap();
    let mut reference = Vec::new();
    theirs.write(&mut reference).unwrap();
    // (split on, chunk of others gathered at a time): several chunks, one, and the plain path.
    for (split, chunk) in [(true, 7), (true, 1 << 22), (false, 0)] {
        gpu.set_msm_split(split);
        gpu.set_msm_split_chunk(chunk);
        let before = gpu.split_msm_count();
        let asg = synthesize(circuit.clone(), gpu.alloc_buffers(1 << 15)).unwrap();
        let proof = gpu.prove(asg, &srs, randomness).unwrap();
        assert_eq!(
            proof.to_bytes().to_vec(),
            reference,
            "split={split} chunk={chunk}: proof differs from bellperson's"
        );
        assert!(verify(&srs, &proof, &circuit.public_inputs()));
        let split_msms = gpu.split_msm_count() - before;
        if split {
            assert_eq!(split_msms, 4, "l, a, b_g1 and b_g2 ran split");
        } else {
            assert_eq!(split_msms, 0);
        }
    }
    // Random field elements: dense, so every MSM falls back to plain Pippenger.
    gpu.set_msm_split(true);
    let dense = case(Shape::Mixed, 11, 63);
    let before = gpu.split_msm_count();
    let asg = synthesize(dense.circuit.clone(), BufferSet::default()).unwrap();
    let proof = gpu.prove(asg, &dense.srs, dense.randomness).unwrap();
    dense.assert_matches(&proof, "dense scalars");
    assert_eq!(gpu.split_msm_count(), before, "dense MSMs are not split");
}

#[test]
fn partitions_in_flight_together_finish_in_any_order() {
    let _ = env_logger::builder().is_test(true).try_init();
    let gpu = GpuBackend::open(0, false).unwrap();
    // One parameter set (resident once), three witnesses: nothing but the backend's own waits
    // makes the emulated device run queued work.
    let first = case(Shape::Mixed, 11, 60);
    let params = paramgen::generate(first.circuit.clone(), &mut rng(60), &|_, _| {}).unwrap();
    let witnesses: Vec<(RandomCircuit, Randomness, Vec<u8>)> = (0..3)
        .map(|i| {
            let mut circuit = first.circuit.clone();
            circuit.witness_seed = 1000 + i;
            let r = Randomness::random(&mut rng(70 + i));
            let theirs = create_proof::<Bls12, _, _>(circuit.clone(), &params, r.r, r.s).unwrap();
            let mut bytes = Vec::new();
            theirs.write(&mut bytes).unwrap();
            (circuit, r, bytes)
        })
        .collect();
    // Every partition's copies and kernels are queued before any is finished, with the a/b/c
    // buffers kept (freeing pinned memory would synchronise); the last one queued is finished
    // first, so each finish must wait for exactly its own work.
    let mut kept = Vec::new();
    let pending: Vec<_> = witnesses
        .iter()
        .map(|(circuit, r, _)| {
            let asg = synthesize(circuit.clone(), first.buffers(&gpu, true)).unwrap();
            let started = gpu.prove_start(asg, &first.srs, *r).unwrap();
            kept.push(started.released);
            started.pending
        })
        .collect();
    for ((circuit, _, reference), p) in witnesses.iter().zip(pending).rev() {
        let proof = gpu.prove_finish(p).unwrap();
        assert_eq!(&proof.to_bytes().to_vec(), reference, "in flight together");
        assert!(verify(&first.srs, &proof, &circuit.public_inputs()));
    }
    drop(kept);
    assert_eq!(gpu.failures_in_a_row(), 0);
    assert!(gpu.busy_ms() > 0.0, "the busy clock counts the kernels");
}

#[test]
fn a_device_broken_by_a_sticky_error_fails_its_partitions_and_the_engine_keeps_serving() {
    let _ = env_logger::builder().is_test(true).try_init();
    const BROKEN: u32 = 1;
    let c = case(Shape::Mixed, 11, 80);
    let with_fallback = Arc::new(GpuBackend::open(BROKEN, true).unwrap());
    let without = GpuBackend::open(BROKEN, false).unwrap();
    let proof = with_fallback
        .prove(
            synthesize(c.circuit.clone(), BufferSet::default()).unwrap(),
            &c.srs,
            c.randomness,
        )
        .unwrap();
    c.assert_matches(&proof, "before the error");

    emulator::break_device(BROKEN, "illegal memory access (test)");

    // Without the fallback the partition fails with the device's error, counted against it.
    let err = without
        .prove(
            synthesize(c.circuit.clone(), without.alloc_buffers(1 << 11)).unwrap(),
            &c.srs,
            c.randomness,
        )
        .unwrap_err();
    assert!(err.to_string().contains("broken"), "{err}");
    assert_eq!(without.failures_in_a_row(), 1);
    // Opening the broken device again is refused.
    assert!(GpuBackend::open(BROKEN, true).is_err());

    // An engine on the broken device with the CPU fallback keeps proving, job after job, and
    // filecoin-proofs' verifier accepts each proof.
    let engine = engine_with_fallback(&with_fallback);
    for _ in 0..2 {
        prove_window_post(&engine);
    }
    assert!(with_fallback.failures_in_a_row() >= 2);
    engine.close();
}

/// A small engine over `gpu` with the CPU fallback on.
fn engine_with_fallback(gpu: &Arc<GpuBackend>) -> Engine {
    let config = Config {
        synthesis_workers: 1,
        pool_buffers: 2,
        cpu_fallback: true,
        ..Config::default()
    };
    Engine::open(
        config,
        Arc::clone(gpu) as Arc<dyn cuzk::engine::ErasedBackend>,
    )
    .unwrap()
}

/// Proves the 2 KiB WindowPoSt fixture on `engine`; filecoin-proofs' verifier must accept it.
fn prove_window_post(engine: &Engine) {
    let fx = common::fixture();
    let w = FilecoinWorkload::new(
        fx.data.window_request().unwrap(),
        fx.srs.dir(),
        fx.srs.pce_enabled(),
    );
    let proof = engine.prove(Arc::clone(&w) as Arc<dyn Workload>).unwrap();
    assert!(w.request().verify(&proof).unwrap());
}

/// A memory budget for the fallback test: grants while `limit` allows, counts what is out.
struct CountingBudget {
    limit: u64,
    taken: std::sync::atomic::AtomicU64,
}

impl HostMemory for CountingBudget {
    fn try_take(&self, bytes: u64) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        self.taken
            .fetch_update(SeqCst, SeqCst, |t| {
                (t + bytes <= self.limit).then_some(t + bytes)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: u64) {
        self.taken
            .fetch_sub(bytes, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_gpu_partition_is_charged_the_gpus_host_memory_and_a_cpu_fallback_takes_the_rest_from_the_budget(
) {
    use std::sync::atomic::Ordering::SeqCst;
    let _ = env_logger::builder().is_test(true).try_init();
    let c = case(Shape::Mixed, 11, 81);
    let gpu = GpuBackend::open(0, true).unwrap();
    let assignment = || synthesize(c.circuit.clone(), BufferSet::default()).unwrap();
    let shape = assignment().shape();
    // The engine charges a device partition the GPU path's host figure, far below the CPU
    // prover's; a domain the device does not take (below 2^10) is charged the CPU's.
    assert_eq!(gpu.transient_bytes(&shape), shape.gpu_transient_bytes());
    assert!(shape.gpu_transient_bytes() < shape.cpu_transient_bytes_here());
    let tiny = CircuitShape {
        constraints: 300,
        ..shape
    };
    assert_eq!(gpu.transient_bytes(&tiny), tiny.cpu_transient_bytes_here());
    let extra = shape.cpu_transient_bytes_here() - shape.gpu_transient_bytes();

    // A budget without room: the fallback is refused and the partition fails with the
    // device's error and why, instead of running over the budget.
    let full = Arc::new(CountingBudget {
        limit: extra - 1,
        taken: Default::default(),
    });
    gpu.set_host_memory(Arc::clone(&full) as Arc<dyn HostMemory>);
    gpu.inject_kernel_failure(InjectAt::Start);
    let err = gpu.prove(assignment(), &c.srs, c.randomness).unwrap_err();
    assert!(
        err.to_string().contains("CPU fallback needs"),
        "refused fallback: {err}"
    );
    assert_eq!(full.taken.load(SeqCst), 0);

    // With room, the CPU takes over holding exactly the difference until the partition is
    // finished, and gives it back then; the proof is bellperson's.
    let roomy = Arc::new(CountingBudget {
        limit: extra,
        taken: Default::default(),
    });
    gpu.set_host_memory(Arc::clone(&roomy) as Arc<dyn HostMemory>);
    gpu.inject_kernel_failure(InjectAt::Start);
    let started = gpu.prove_start(assignment(), &c.srs, c.randomness).unwrap();
    assert!(matches!(started.pending, GpuPending::Cpu(_, Some(_))));
    assert_eq!(roomy.taken.load(SeqCst), extra);
    let proof = gpu.prove_finish(started.pending).unwrap();
    assert_eq!(roomy.taken.load(SeqCst), 0);
    c.assert_matches(&proof, "after a CPU fallback");

    // A partition the device proves takes nothing from the budget.
    let started = gpu.prove_start(assignment(), &c.srs, c.randomness).unwrap();
    assert!(matches!(started.pending, GpuPending::Device(_)));
    assert_eq!(roomy.taken.load(SeqCst), 0);
    c.assert_matches(&gpu.prove_finish(started.pending).unwrap(), "on the device");
}

#[test]
fn an_engine_charges_a_cpu_fallback_to_its_budget_while_it_runs_and_gets_it_back() {
    let _ = env_logger::builder().is_test(true).try_init();
    let gpu = Arc::new(GpuBackend::open(0, true).unwrap());
    let engine = engine_with_fallback(&gpu);
    let prove = || prove_window_post(&engine);
    // Two jobs on the device: parameters and PCE resident, the budget settled.
    prove();
    prove();
    let settled = engine.status();
    assert_eq!(gpu.failures_in_a_row(), 0);
    // The device fails in prove_start: the CPU proves the partition, its transients charged
    // to the budget while it runs (a new high-water mark) and released after.
    gpu.inject_kernel_failure(InjectAt::Start);
    prove();
    assert_eq!(gpu.failures_in_a_row(), 1, "the partition went to the CPU");
    let after = engine.status();
    assert_eq!(
        after.budget_used, settled.budget_used,
        "the fallback's grant is back"
    );
    assert!(
        after.budget_high_water > settled.budget_high_water,
        "the fallback was charged: high water {} then {}",
        settled.budget_high_water,
        after.budget_high_water
    );
    engine.close();
}

#[test]
fn the_emulator_runs_queued_work_only_when_waited_for_and_checks_contexts_and_ranges() {
    use cuzk::gpu::cuda::buffers::DeviceMem;
    use cuzk::gpu::cuda::device::DeviceContext;
    use cuzk::gpu::cuda::memory::h2d;
    use cuzk::gpu::cuda::stream::{GpuEvent, GpuStream};

    let ctx = Arc::new(DeviceContext::open(0).unwrap());
    assert!(
        GpuStream::new().is_err(),
        "driver calls need a current context"
    );
    let current = ctx.enter().unwrap();
    let stream = GpuStream::new().unwrap();
    let mem = DeviceMem::alloc(&ctx, 64).unwrap();
    // SAFETY: emulated device memory is host memory of 64 bytes at this address.
    let read = || unsafe { std::ptr::read(mem.at(0) as *const [u8; 64]) };
    assert_ne!(read(), [7u8; 64], "fresh memory holds garbage");

    let (began, done) = (GpuEvent::new().unwrap(), GpuEvent::new().unwrap());
    began.record(&stream).unwrap();
    h2d(mem.at(0), &[7u8; 64], &stream).unwrap();
    done.record(&stream).unwrap();
    assert_ne!(read(), [7u8; 64], "queued work has not run");
    assert!(done.ms_since(&began).is_err(), "events not reached yet");
    done.synchronize().unwrap();
    assert_eq!(read(), [7u8; 64], "waiting for the event ran the copy");
    assert!(done.ms_since(&began).unwrap() >= 0.0);

    assert!(
        h2d(mem.at(32), &[0u8; 64], &stream).is_err(),
        "a copy past the allocation is refused"
    );
    assert!(
        DeviceMem::alloc(&ctx, emulator::DEVICE_MEMORY as usize + 1).is_err(),
        "more than the device holds is out of memory"
    );
    drop(current);
    assert!(
        stream.synchronize().is_err(),
        "no context current after the guard dropped"
    );
    let other = DeviceContext::open(1).unwrap();
    let _other = other.enter().unwrap();
    assert!(
        h2d(mem.at(0), &[0u8; 64], &stream).is_err(),
        "device 0's stream with device 1's context current is refused"
    );
}

#[test]
fn the_device_pool_reuses_a_large_buffer_only_when_it_is_barely_larger_than_asked() {
    use cuzk::gpu::cuda::buffers::DeviceMem;
    use cuzk::gpu::cuda::device::DeviceContext;
    use cuzk::gpu::cuda::resident::{reuse_limit, DevicePool};

    let ctx = Arc::new(DeviceContext::open(0).unwrap());
    let _current = ctx.enter().unwrap();
    let pool = DevicePool::new(&ctx);
    let mib = 1usize << 20;
    let kept = DeviceMem::alloc(&ctx, 90 * mib).unwrap();
    let address = kept.at(0);
    pool.give([kept]);
    // 90 MiB for 80: an eighth more, reused.
    let taken = pool.take(80 * mib).unwrap();
    assert_eq!(taken.at(0), address, "a buffer an eighth larger is reused");
    pool.give([taken]);
    // For 70 MiB the kept 90 MiB would hold 20 MiB the caller never counted: a new buffer.
    let taken = pool.take(70 * mib).unwrap();
    assert_ne!(
        taken.at(0),
        address,
        "a large buffer two sevenths too big was reused"
    );
    assert_eq!(taken.bytes(), 70 * mib);
    // Small requests still take up to twice their size.
    assert_eq!(reuse_limit(mib), 2 * mib);
    assert_eq!(reuse_limit(64 * mib), 72 * mib);
}
