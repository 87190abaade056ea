//! Devices too small for what the backend would hold, over the host emulation of the device, in
//! a process of its own since it shrinks the emulated devices (one test per device):
//! - room for one partition beside its parameters but not for two (an 80 GB GPU at 32 GiB
//!   PoRep: 47 GB of parameters, about 28 GB a partition): the next partition's `prove_start`
//!   must wait for the one on the device to finish, not run out of memory and fail (or go to
//!   the CPU), and while it waits a small partition of another circuit (a WinningPoSt) that
//!   fits must start and finish beside the first;
//! - no room for all the parameters beside a partition (32 GiB WindowPoSt on an 80 GB GPU):
//!   the queries that do not fit are streamed from the host at each MSM, and the proofs stay
//!   bellperson's;
//! - what a partition allocates on the device (device 2, measured at its peak) must stay within
//!   what the admission counts for it, or partitions admitted beside each other run out of
//!   memory.
#![cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use blstrs::Scalar;
use cuzk::gpu::cuda::buffers::DeviceMem;
use cuzk::gpu::cuda::resident::{kept_prefixes, ResidentSrs};
use cuzk::gpu::cuda::GpuBackend;
use cuzk::gpu::emulator;
use cuzk::gpu::footprint::{
    msm_state_bytes, partition_buffer_bytes, partition_device_bytes, stream_window_bytes,
    SPLIT_CHUNK,
};
use cuzk::groth16::ntt::Domain;
use cuzk::groth16::paramgen;
use cuzk::groth16::test_circuits::{RandomCircuit, Sha256Preimage, Shape};
use cuzk::groth16::{synthesize, verify, BufferSet, Proof, ProverBackend, Randomness, Srs};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

mod reference;
use reference::{random_case, Sha256Case};

#[test]
fn a_partition_waits_for_device_memory_when_two_do_not_fit_instead_of_failing() {
    let _ = env_logger::builder().is_test(true).try_init();
    let randomness = Randomness::random(&mut ChaCha20Rng::seed_from_u64(6));
    let (circuit, srs, reference) = random_case((1 << 14) - 16, 5, randomness);
    let assignment = || synthesize(circuit.clone(), BufferSet::default()).unwrap();
    let check = |proof: &Proof, what: &str| reference.check(proof, what);
    // A partition of a small circuit (the device's smallest domain, 2^10), to prove beside one
    // that waits: a WinningPoSt beside PoRep partitions.
    let (small, small_srs, small_reference) = random_case((1 << 10) - 16, 7, randomness);
    let small_assignment = synthesize(small.clone(), BufferSet::default()).unwrap();

    // Room for the parameters, the density maps, one and a half partitions' buffers, and what
    // the small partition needs (its parameters, maps, buffers and MSM state, and the MSM state
    // of both sizes), which is less than half a partition: two partitions still do not fit.
    // (Streaming a few parameters to hold two cannot pay here: its window alone is 1.6 GB.)
    let maps_of = |asg: &cuzk::groth16::Assignment| {
        [&asg.a_aux_density, &asg.b_input_density, &asg.b_aux_density]
            .iter()
            .map(|d| d.words().len() as u64 * 12)
            .sum::<u64>()
    };
    let probe = assignment();
    let partition = buffer_bytes(&probe, SPLIT_CHUNK);
    let maps = maps_of(&probe);
    let small_room = ResidentSrs::bytes_for(&small_srs)
        + maps_of(&small_assignment)
        + buffer_bytes(&small_assignment, SPLIT_CHUNK)
        + msm_state_bytes(1 << 10)
        + msm_state_bytes(1 << 14);
    let device = ResidentSrs::bytes_for(&srs) + maps + partition * 3 / 2 + small_room;
    // The 2% of a device the backend leaves unused must come out of what the small one
    // leaves free, and the second partition must still lack room.
    let room_left = partition / 2 - small_room;
    assert!(
        device / 50 * 2 < room_left,
        "the small partition needs {small_room} of half a partition's {} bytes",
        partition / 2
    );
    emulator::set_device_memory(0, device).unwrap();
    // No CPU fallback: a partition that runs out of device memory fails.
    let gpu = Arc::new(GpuBackend::open(0, false).unwrap());

    let first = gpu.prove_start(assignment(), &srs, randomness).unwrap();
    let (tx, rx) = mpsc::channel();
    let second = {
        let (gpu, srs, asg) = (Arc::clone(&gpu), Arc::clone(&srs), assignment());
        std::thread::spawn(move || {
            let proof = gpu
                .prove_start(asg, &srs, randomness)
                .and_then(|started| gpu.prove_finish(started.pending));
            tx.send(proof).unwrap();
        })
    };
    // The second partition must be waiting for room, not done (failed, or started beside the
    // first in memory the device does not have).
    let deadline = Instant::now() + Duration::from_secs(120);
    while gpu.partitions_waiting_for_memory() == 0 {
        if let Ok(early) = rx.try_recv() {
            panic!("the second partition did not wait for the first: {early:?}");
        }
        assert!(
            Instant::now() < deadline,
            "the second partition never waited"
        );
        std::thread::yield_now();
    }
    assert!(rx.try_recv().is_err(), "a waiting partition finished");

    // A small partition of another circuit (a WinningPoSt beside PoRep partitions) fits in the
    // room left: it must start and finish while the second still waits, which holds nothing
    // the small one needs (it once held the device's start lock while it waited).
    let (small_tx, small_rx) = mpsc::channel();
    let small_thread = {
        let (gpu, srs, asg) = (Arc::clone(&gpu), Arc::clone(&small_srs), small_assignment);
        std::thread::spawn(move || {
            let proof = gpu
                .prove_start(asg, &srs, randomness)
                .and_then(|started| gpu.prove_finish(started.pending));
            small_tx.send(proof).unwrap();
        })
    };
    let proof = small_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the small partition waited behind the one waiting for memory")
        .expect("the small partition failed");
    small_reference.check(&proof, "small partition beside a waiting one");
    small_thread.join().unwrap();
    assert!(rx.try_recv().is_err(), "a waiting partition finished");
    assert_eq!(gpu.partitions_waiting_for_memory(), 1);

    let proof = gpu.prove_finish(first.pending).unwrap();
    check(&proof, "first partition");
    let proof = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the second partition never finished")
        .expect("the second partition failed");
    check(&proof, "second partition");
    second.join().unwrap();
    assert_eq!(gpu.memory_waits(), 1);
    assert_eq!(gpu.partitions_waiting_for_memory(), 0);

    // One at a time, partitions never wait.
    let proof = gpu.prove(assignment(), &srs, randomness).unwrap();
    check(&proof, "a partition alone");
    assert_eq!(gpu.memory_waits(), 1);
}

#[test]
fn parameters_that_do_not_fit_beside_a_partition_are_streamed_and_proofs_stay_bellpersons() {
    let _ = env_logger::builder().is_test(true).try_init();
    // SHA-256: nearly every witness value is a bit, so the streamed chunks run split too.
    let Sha256Case {
        circuit,
        srs,
        randomness,
        reference,
    } = Sha256Case::new(8);
    let assignment = || synthesize(circuit.clone(), BufferSet::default()).unwrap();

    // Room for one partition (as the backend counts it, with 7 other scalars gathered at a
    // time, so its estimate is close to what it allocates), its MSM state, two streaming
    // windows and half the parameters: less than the parameters and the partition's buffers.
    let probe = assignment();
    let m = Domain::for_size(probe.num_constraints()).unwrap().size();
    let (ni, aux) = (probe.inputs.len(), probe.aux.len());
    let a_len = ni + probe.a_aux_density.count_ones();
    let b_len = probe.b_input_density.count_ones() + probe.b_aux_density.count_ones();
    let split_chunk = 7;
    let partition = partition_device_bytes(m, aux, ni, a_len, b_len, split_chunk);
    let chunk = 1000;
    let window = stream_window_bytes(chunk);
    let srs_bytes = ResidentSrs::bytes_for(&srs);
    let room =
        partition + msm_state_bytes(m.max(aux).max(a_len).max(b_len)) + window + srs_bytes / 2;
    emulator::set_device_memory(1, room + room / 40).unwrap();
    let gpu = GpuBackend::open(1, false).unwrap();
    gpu.set_stream_chunk(chunk);
    gpu.set_msm_split_chunk(split_chunk);

    for split in [true, false] {
        gpu.set_msm_split(split);
        let before = gpu.streamed_msm_count();
        let proof = gpu.prove(assignment(), &srs, randomness).unwrap();
        reference.check(&proof, &format!("split={split}"));
        let streamed = gpu.streamed_msm_count() - before;
        assert!(
            (1..5).contains(&streamed),
            "split={split}: {streamed} of the five MSMs streamed; some queries should fit"
        );
    }

    // What is streamed of each query (all of it, the points after its resident leading ones,
    // or none) is page-locked (its copies are DMA) while the parameters live, and unlocked
    // before their memory is freed.
    let resident = gpu.resident(&srs, 0).unwrap();
    let kept = |mem: Option<&DeviceMem>| mem.map_or(0, |m| m.bytes());
    let queries: [(&str, usize, *const u8, usize); 5] = [
        (
            "h",
            kept(resident.h.as_ref()),
            srs.h.as_ptr().cast(),
            size_of_val(&srs.h[..]),
        ),
        (
            "l",
            kept(resident.l.as_ref()),
            srs.l.as_ptr().cast(),
            size_of_val(&srs.l[..]),
        ),
        (
            "a",
            kept(resident.a.as_ref()),
            srs.a.as_ptr().cast(),
            size_of_val(&srs.a[..]),
        ),
        (
            "b_g1",
            kept(resident.b_g1.as_ref()),
            srs.b_g1.as_ptr().cast(),
            size_of_val(&srs.b_g1[..]),
        ),
        (
            "b_g2",
            kept(resident.b_g2.as_ref()),
            srs.b_g2.as_ptr().cast(),
            size_of_val(&srs.b_g2[..]),
        ),
    ];
    assert!(
        queries.iter().any(|q| q.1 > 0 && q.1 < q.3),
        "no query is resident in part: the room left after the whole ones holds nothing"
    );
    // (name, first streamed byte, streamed bytes)
    let streamed: Vec<(&str, *const u8, usize)> = queries
        .iter()
        .filter(|q| q.1 < q.3)
        .map(|q| (q.0, q.2.wrapping_add(q.1), q.3 - q.1))
        .collect();
    assert!(!streamed.is_empty());
    assert_eq!(
        streamed.iter().map(|q| q.2 as u64).sum::<u64>(),
        resident.streamed_bytes()
    );
    for (name, ptr, bytes) in &streamed {
        assert!(
            emulator::is_host_registered(*ptr, *bytes),
            "the streamed part of the {name} query is not page-locked"
        );
    }
    assert_eq!(resident.locked_streamed_bytes(), resident.streamed_bytes());
    drop(resident);
    drop(srs);
    for (name, ptr, bytes) in &streamed {
        assert!(
            !emulator::is_host_registered(*ptr, *bytes),
            "the {name} query's memory is still page-locked after its parameters were dropped"
        );
    }
    drop(gpu);
}

/// Makes a fresh assignment for one proof of a test case.
type MakeAssignment = Box<dyn Fn() -> cuzk::groth16::Assignment>;

/// The buffers the backend counts for a partition of `asg` ([`partition_buffer_bytes`]) with
/// `split_chunk` other scalars gathered at a time.
fn buffer_bytes(asg: &cuzk::groth16::Assignment, split_chunk: usize) -> u64 {
    let m = Domain::for_size(asg.num_constraints()).unwrap().size();
    let ni = asg.inputs.len();
    let a_len = ni + asg.a_aux_density.count_ones();
    let b_len = asg.b_input_density.count_ones() + asg.b_aux_density.count_ones();
    partition_buffer_bytes(m, asg.aux.len(), ni, a_len, b_len, split_chunk)
}

#[test]
fn a_partition_allocates_no_more_device_memory_than_the_admission_counts_for_it() {
    let _ = env_logger::builder().is_test(true).try_init();
    const DEVICE: u32 = 2;
    // SHA-256 (nearly every witness value a bit: the split's maps and gathers run) and a
    // random circuit with dense scalars.
    let len = Sha256Preimage::len_for_blocks(1);
    let sha = paramgen::generate(
        Sha256Preimage {
            len,
            preimage: None,
        },
        &mut ChaCha20Rng::seed_from_u64(11),
        &|_, _| {},
    )
    .unwrap();
    let random = RandomCircuit::new(Shape::Mixed, (1 << 12) - 16, 12);
    let random_params = paramgen::generate(
        random.clone(),
        &mut ChaCha20Rng::seed_from_u64(13),
        &|_, _| {},
    )
    .unwrap();
    let randomness = Randomness::random(&mut ChaCha20Rng::seed_from_u64(14));
    let cases: [(&str, MakeAssignment, _, Vec<Scalar>); 2] = [
        (
            "sha256",
            Box::new(move || {
                synthesize(Sha256Preimage::with_seed(len, 15), BufferSet::default()).unwrap()
            }),
            &sha,
            Sha256Preimage::with_seed(len, 15).public_inputs(),
        ),
        (
            "random",
            Box::new({
                let random = random.clone();
                move || synthesize(random.clone(), BufferSet::default()).unwrap()
            }),
            &random_params,
            random.public_inputs(),
        ),
    ];
    for (name, assignment, params, inputs) in &cases {
        let srs = Arc::new(Srs::from_parameters(params));
        for (split, chunk) in [(true, 7), (true, SPLIT_CHUNK), (false, SPLIT_CHUNK)] {
            let what = format!("{name}, split={split}, chunk={chunk}");
            let gpu = GpuBackend::open(DEVICE, false).unwrap();
            gpu.set_msm_split(split);
            gpu.set_msm_split_chunk(chunk);
            emulator::reset_device_memory_peak(DEVICE);
            let start = emulator::device_memory_peak(DEVICE);
            let asg = assignment();
            let counted = buffer_bytes(&asg, chunk);
            let proof = gpu.prove(asg, &srs, randomness).unwrap();
            assert!(verify(&srs, &proof, inputs), "{what}: does not verify");
            let parameters = gpu.resident(&srs, 0).unwrap().device_bytes();
            let allocated = emulator::device_memory_peak(DEVICE) - start - parameters;
            assert!(
                allocated <= counted,
                "{what}: the partition allocated {allocated} device bytes at its peak, more \
                 than the {counted} the admission counts for it"
            );
            drop(gpu);
        }
    }
}

#[test]
fn parameters_fill_the_room_whole_queries_first_then_the_leading_points_of_another() {
    // h, l, a, b_g1 (96-byte points) and b_g2 (192-byte points).
    let lengths = [10 * 96, 5 * 96, 3 * 96, 2 * 96, 2 * 192];
    assert_eq!(kept_prefixes(lengths, 30 * 96), lengths, "all fit");
    // h whole, then b_g1 whole in what is left; nothing left for a prefix.
    assert_eq!(kept_prefixes(lengths, 12 * 96), [960, 0, 0, 192, 0]);
    // h whole; 140 bytes left: one point of l (the largest that did not fit).
    assert_eq!(kept_prefixes(lengths, 1100), [960, 96, 0, 0, 0]);
    // Smaller than every query: the leading points of the largest.
    assert_eq!(kept_prefixes(lengths, 150), [96, 0, 0, 0, 0]);
    assert_eq!(kept_prefixes(lengths, 0), [0; 5]);
}

#[test]
fn parameters_kept_in_part_by_two_backends_are_page_locked_for_both() {
    let _ = env_logger::builder().is_test(true).try_init();
    let circuit = RandomCircuit::new(Shape::Mixed, (1 << 10) - 16, 3);
    let params =
        paramgen::generate(circuit, &mut ChaCha20Rng::seed_from_u64(12), &|_, _| {}).unwrap();
    let srs = Arc::new(Srs::from_parameters(&params));
    let whole = ResidentSrs::bytes_for(&srs);
    let chunk = 64;
    // Two backends (two devices, or one device's set uploaded again after it was dropped for
    // room) keeping different leading parts of the parameters: each must find what it streams
    // page-locked, however the other locked it.
    let (mut kept, mut gpus) = (Vec::new(), Vec::new());
    for (device, share) in [(0u32, 3u64), (1, 2)] {
        let gpu = GpuBackend::open(device, false).unwrap();
        gpu.set_stream_chunk(chunk);
        gpu.set_parameter_limit(whole * share / 5 + stream_window_bytes(chunk));
        let resident = {
            let _current = gpu.enter().unwrap();
            gpu.resident(&srs, 0).unwrap()
        };
        assert!(
            resident.streamed_bytes() > 0,
            "device {device} streams nothing"
        );
        assert_eq!(
            resident.locked_streamed_bytes(),
            resident.streamed_bytes(),
            "device {device}: what it streams is not all page-locked"
        );
        kept.push(resident.device_bytes());
        gpus.push((gpu, resident));
    }
    assert_ne!(kept[0], kept[1], "the two backends kept the same part");
    drop(gpus);
}
