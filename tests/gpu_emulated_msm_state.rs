//! The MSM state the CUDA layer keeps between MSMs (one sppark `msm_t` per device, curve and
//! size class, `cuda/groth16.cu`), as the GPU backend drives it over the host emulator (which
//! counts what the CUDA layer would keep): kept after a partition, reused by the next one,
//! released when the backend drops, so an engine that closes gives that device memory back.
//! One test, in a process of its own: the count is per device and process-wide.
#![cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]

use std::sync::Arc;

use cuzk::gpu::cuda::GpuBackend;
use cuzk::gpu::emulator::kernels::kept_msm_states;
use cuzk::groth16::paramgen;
use cuzk::groth16::test_circuits::{RandomCircuit, Shape};
use cuzk::groth16::{synthesize, verify, ProverBackend, Randomness, Srs};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

#[test]
fn a_backend_keeps_msm_state_between_partitions_and_releases_it_when_dropped() {
    let _ = env_logger::builder().is_test(true).try_init();
    let circuit = RandomCircuit::new(Shape::Mixed, (1 << 10) - 16, 5);
    let params = paramgen::generate(
        circuit.clone(),
        &mut ChaCha20Rng::seed_from_u64(5),
        &|_, _| {},
    )
    .unwrap();
    let srs = Arc::new(Srs::from_parameters(&params));
    let gpu = GpuBackend::open(0, false).unwrap();
    assert_eq!(kept_msm_states(0), 0, "nothing kept before the first MSM");
    for seed in [6, 7] {
        let asg = synthesize(circuit.clone(), gpu.alloc_buffers(1 << 11)).unwrap();
        let r = Randomness::random(&mut ChaCha20Rng::seed_from_u64(seed));
        let proof = gpu.prove(asg, &srs, r).unwrap();
        assert!(verify(&srs, &proof, &circuit.public_inputs()));
        // Every MSM of a 2^10 circuit is in the smallest size class: one G1 and one G2 state,
        // reused by the second partition.
        assert_eq!(
            kept_msm_states(0),
            2,
            "after the partition with seed {seed}"
        );
    }
    drop(gpu);
    assert_eq!(
        kept_msm_states(0),
        0,
        "dropping the backend releases its device's states"
    );
}
