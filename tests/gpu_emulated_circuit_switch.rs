//! A device switching between circuits, over the host emulation of the device, in a process of
//! its own since it shrinks an emulated device: another circuit's parameters left idle on the
//! device (a node's 57 GB WindowPoSt set beside its 47 GB PoRep set on an H200) must go when a
//! partition needs their room (two 20 GB PoRep partitions in flight: 144 GB, on a 139 GB GPU).
//! The admission does not count an idle set, since it is to be dropped for room, so it admits
//! the second partition; its allocations must then drop the idle set, not run out of memory
//! and fail the partition (or send it to the CPU).
#![cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]

use cuzk::gpu::cuda::resident::ResidentSrs;
use cuzk::gpu::cuda::GpuBackend;
use cuzk::gpu::emulator;
use cuzk::gpu::footprint::{density_map_bytes, msm_state_bytes, partition_device_bytes};
use cuzk::groth16::ntt::Domain;
use cuzk::groth16::{synthesize, Assignment, BufferSet, ProverBackend, Randomness};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

mod reference;
use reference::random_case;

const DEVICE: u32 = 0;

/// Gather chunk of the split MSMs here: small, so what a partition allocates in `prove_start`
/// is most of what the admission counts for it (as at 32 GiB, where a/b/c and aux dominate).
const SPLIT_CHUNK: usize = 64;

/// Device bytes the admission counts for a partition of `asg`, and what its `prove_start`
/// allocates (a/b/c, aux and the inputs).
fn partition_bytes(asg: &Assignment) -> (u64, u64) {
    let m = Domain::for_size(asg.num_constraints()).unwrap().size();
    let (aux, ni) = (asg.aux.len(), asg.inputs.len());
    let a_len = ni + asg.a_aux_density.count_ones();
    let b_len = asg.b_input_density.count_ones() + asg.b_aux_density.count_ones();
    let counted = partition_device_bytes(m, aux, ni, a_len, b_len, SPLIT_CHUNK);
    (counted, (3 * m + aux + ni) as u64 * 32)
}

#[test]
fn an_idle_parameter_set_is_dropped_when_a_partition_of_another_circuit_needs_its_room() {
    let _ = env_logger::builder().is_test(true).try_init();
    let randomness = Randomness::random(&mut ChaCha20Rng::seed_from_u64(31));
    // The circuit proved in pairs (PoRep) and one whose set is left idle (WindowPoSt; smaller
    // here, so its set fits beside the first's and a partition without being dropped).
    let (big, big_srs, big_reference) = random_case((1 << 14) - 16, 32, randomness);
    let (small, small_srs, small_reference) = random_case((1 << 12) - 16, 33, randomness);
    let big_assignment = || synthesize(big.clone(), BufferSet::default()).unwrap();
    let small_assignment = || synthesize(small.clone(), BufferSet::default()).unwrap();

    let probe = big_assignment();
    let (counted, at_start) = partition_bytes(&probe);
    let big_set = ResidentSrs::bytes_for(&big_srs) + density_map_bytes(probe.aux.len(), 1);
    let small_probe = small_assignment();
    let small_set =
        ResidentSrs::bytes_for(&small_srs) + density_map_bytes(small_probe.aux.len(), 1);
    // Room for the big set and two of its partitions as the admission counts them, with a
    // fifth of the small set to spare beyond the 2% the backend leaves unused.
    let fixed = big_set + msm_state_bytes(1 << 14);
    let device = (fixed + 2 * counted + small_set / 5) * 50 / 49 + 4096;
    // Both sets and what two partitions allocate in `prove_start` do not fit: the second
    // partition's a/b/c has no room while the small set stays.
    assert!(
        big_set + small_set + 2 * at_start > device,
        "the device ({device} bytes) holds both sets and two partitions' buffers"
    );
    // The small set fits beside the big one and a partition's buffers kept for reuse, so
    // proving the small circuit does not drop the big set (nor the other way).
    assert!(
        big_set + counted + msm_state_bytes(1 << 14) + small_set * 5 / 4 < device,
        "the small set does not fit beside the big one"
    );
    emulator::set_device_memory(DEVICE, device).unwrap();
    // No CPU fallback: a partition that runs out of device memory fails.
    let gpu = GpuBackend::open(DEVICE, false).unwrap();
    gpu.set_msm_split_chunk(SPLIT_CHUNK);

    let proof = gpu.prove(big_assignment(), &big_srs, randomness).unwrap();
    big_reference.check(&proof, "the big circuit alone");
    let proof = gpu
        .prove(small_assignment(), &small_srs, randomness)
        .unwrap();
    small_reference.check(&proof, "the small circuit alone");

    // Two partitions of the big circuit at once: the second is admitted (the idle small set
    // is not counted) and must find room by dropping that set.
    let first = gpu
        .prove_start(big_assignment(), &big_srs, randomness)
        .expect("the first partition starts");
    let second = gpu
        .prove_start(big_assignment(), &big_srs, randomness)
        .expect("the second partition starts beside the first, the idle set dropped");
    let proof = gpu.prove_finish(first.pending).unwrap();
    big_reference.check(&proof, "the first of two");
    let proof = gpu.prove_finish(second.pending).unwrap();
    big_reference.check(&proof, "the second of two");
    assert_eq!(gpu.memory_waits(), 0, "a partition waited for memory");

    // The small circuit again: its set is uploaded anew and its proof is still bellperson's.
    let proof = gpu
        .prove(small_assignment(), &small_srs, randomness)
        .unwrap();
    small_reference.check(&proof, "the small circuit after its set was dropped");
}
