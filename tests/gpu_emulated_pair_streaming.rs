//! A device with room for one partition beside all its parameters but not for two, where
//! streaming a few of the parameters would make room for the second (an 80 GB GPU at 32 GiB
//! PoRep: two partitions are 3.8 GB short beside 47 GB of parameters, and streaming about 7 GB
//! a partition, under half of the 17 GB it uploads, holds both). With pair streaming on (the
//! default) the parameter set keeps that much on the host, the next partition's `prove_start`
//! runs while the first is still unfinished, and the proofs stay bellperson's; with it off,
//! everything stays resident and the second partition waits. A process of its own, since it
//! shrinks an emulated device.
#![cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk::gpu::cuda::resident::ResidentSrs;
use cuzk::gpu::cuda::GpuBackend;
use cuzk::gpu::emulator;
use cuzk::gpu::footprint::{
    density_map_bytes, msm_state_bytes, pair_headroom_bytes, partition_device_bytes,
    stream_window_bytes, upload_bytes, usable_device_bytes, SPLIT_CHUNK,
};
use cuzk::groth16::ntt::Domain;
use cuzk::groth16::{synthesize, BufferSet, Proof, ProverBackend, Randomness, Srs};

mod reference;
use reference::Sha256Case;

const DEVICE: u32 = 0;

/// Points a streamed MSM copies at a time here: a window small beside the circuit.
const STREAM_CHUNK: usize = 500;

#[test]
fn two_partitions_fit_at_once_by_streaming_a_few_parameters_and_proofs_stay_bellpersons() {
    let _ = env_logger::builder().is_test(true).try_init();
    // SHA-256: nearly every witness value is a bit, as in Filecoin's circuits, so the streamed
    // chunks run split.
    let Sha256Case {
        circuit,
        srs,
        randomness,
        reference,
    } = Sha256Case::new(21);
    let assignment = || synthesize(circuit.clone(), BufferSet::default()).unwrap();
    let check = |proof: &Proof, what: &str| reference.check(proof, what);

    // The device: room for two partitions (as the backend counts them), their MSM state, the
    // density maps, the streaming window, the headroom kept beside a pair (a 64th of the
    // usable memory) and all the parameters but two fifths of one partition's upload.
    let probe = assignment();
    let m = Domain::for_size(probe.num_constraints()).unwrap().size();
    let (ni, aux) = (probe.inputs.len(), probe.aux.len());
    let a_len = ni + probe.a_aux_density.count_ones();
    let b_len = probe.b_input_density.count_ones() + probe.b_aux_density.count_ones();
    let partition = partition_device_bytes(m, aux, ni, a_len, b_len, SPLIT_CHUNK);
    let msm_state = msm_state_bytes(m.max(aux).max(a_len).max(b_len));
    let upload = upload_bytes(m, aux, ni);
    let whole = ResidentSrs::bytes_for(&srs);
    let target_streamed = upload * 2 / 5;
    let beside_two = whole - target_streamed
        + stream_window_bytes(STREAM_CHUNK)
        + density_map_bytes(aux, ni)
        + 2 * partition
        + msm_state;
    // usable = total − total/50 and the headroom is usable/64: solve for the total.
    let usable = beside_two * 64 / 63 + 64;
    let total = usable * 50 / 49 + 50;
    assert!(
        whole + 2 * partition + msm_state > total - total / 50,
        "the device holds two partitions beside all the parameters: nothing to test"
    );
    assert!(
        whole + partition + msm_state < total - total / 50,
        "the device does not hold one partition beside all the parameters"
    );
    emulator::set_device_memory(DEVICE, total).unwrap();

    // Pair streaming on (the default unless CUZK_GPU_PAIR_STREAMING=0).
    let gpu = Arc::new(GpuBackend::open(DEVICE, false).unwrap());
    gpu.set_stream_chunk(STREAM_CHUNK);
    let first = gpu.prove_start(assignment(), &srs, randomness).unwrap();
    let streamed = gpu.resident(&srs, 0).unwrap().streamed_bytes();
    assert!(
        streamed > 0 && streamed <= upload / 2,
        "{streamed} parameter bytes streamed to hold two partitions of {upload} uploaded bytes"
    );
    let Beside::Started(second) = start_beside(&gpu, &srs, assignment(), randomness) else {
        panic!("the second partition waited for device memory: two do not fit");
    };
    assert_eq!(gpu.memory_waits(), 0);
    // Beside the two, the headroom for a CRITICAL partition is still free.
    let held = gpu.resident(&srs, 0).unwrap().device_bytes()
        + stream_window_bytes(STREAM_CHUNK)
        + msm_state
        + 2 * partition;
    assert!(
        held + pair_headroom_bytes(usable_device_bytes(total)) <= usable_device_bytes(total),
        "two partitions and the parameters ({held} bytes) leave less than the headroom free"
    );
    check(&gpu.prove_finish(first.pending).unwrap(), "first partition");
    check(&gpu.prove_finish(second).unwrap(), "second partition");
    assert!(
        gpu.streamed_msm_count() > 0,
        "no MSM streamed its points from the host"
    );
    drop(gpu);

    // Off: every parameter stays resident, and the second partition waits for the first.
    let gpu = Arc::new(GpuBackend::open(DEVICE, false).unwrap());
    gpu.set_stream_chunk(STREAM_CHUNK);
    gpu.set_pair_streaming(false);
    let first = gpu.prove_start(assignment(), &srs, randomness).unwrap();
    assert_eq!(gpu.resident(&srs, 0).unwrap().streamed_bytes(), 0);
    let Beside::Waiting(second) = start_beside(&gpu, &srs, assignment(), randomness) else {
        panic!("with pair streaming off, two partitions fit beside all the parameters");
    };
    check(
        &gpu.prove_finish(first.pending).unwrap(),
        "first partition, off",
    );
    let second = second
        .recv_timeout(Duration::from_secs(120))
        .expect("the waiting partition never started");
    check(&gpu.prove_finish(second).unwrap(), "second partition, off");
    assert_eq!(gpu.memory_waits(), 1);
}

/// Where a partition started beside another stands.
enum Beside {
    /// Its `prove_start` returned: the device holds both.
    Started(<GpuBackend as ProverBackend>::Pending),
    /// It waits for device memory; its pending work arrives once the other makes room.
    Waiting(mpsc::Receiver<<GpuBackend as ProverBackend>::Pending>),
}

/// Starts a partition on another thread while one is on the device, and says whether its
/// `prove_start` returned or waits for device memory.
fn start_beside(
    gpu: &Arc<GpuBackend>,
    srs: &Arc<Srs>,
    assignment: cuzk::groth16::Assignment,
    randomness: Randomness,
) -> Beside {
    let (tx, rx) = mpsc::channel();
    let (thread_gpu, srs) = (Arc::clone(gpu), Arc::clone(srs));
    std::thread::spawn(move || {
        let started = thread_gpu
            .prove_start(assignment, &srs, randomness)
            .unwrap();
        let _ = tx.send(started.pending);
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        match rx.try_recv() {
            Ok(pending) => return Beside::Started(pending),
            Err(mpsc::TryRecvError::Disconnected) => panic!("the second prove_start failed"),
            Err(mpsc::TryRecvError::Empty) => {}
        }
        if gpu.partitions_waiting_for_memory() > 0 {
            return Beside::Waiting(rx);
        }
        assert!(
            Instant::now() < deadline,
            "the second partition neither started nor waited"
        );
        std::thread::yield_now();
    }
}
