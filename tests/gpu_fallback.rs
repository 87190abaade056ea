//! Backend selection: with no usable GPU (no `cuda` feature, no driver, or no device) an engine
//! opened with `backend = "auto"` proves on the CPU and says so in its status; `backend =
//! "cuda"` refuses to open; a bad device index is an error. With a GPU present (the GPU
//! machine), "auto" must pick it instead.

use std::sync::Arc;

use cuzk::engine::{Config, Engine, EngineError, Workload};
use cuzk::gpu;
use cuzk::proofs::workload::FilecoinWorkload;

mod common;

fn config(backend: &str, devices: Vec<u32>) -> Config {
    Config {
        synthesis_workers: 1,
        pool_buffers: 2,
        backend: backend.into(),
        devices,
        ..Config::default()
    }
}

#[test]
fn auto_backend_falls_back_to_the_cpu_without_a_gpu_and_proves() {
    let _ = env_logger::builder().is_test(true).try_init();
    let devices = gpu::devices();
    let engine = Engine::open_configured(config("auto", vec![])).unwrap();
    let backend = engine.status().backend;
    if devices.is_empty() {
        assert_eq!(backend, "cpu", "no GPU: the CPU backend is used");
    } else {
        // The devices that opened (those sppark can use), each listed once: "cuda:0,1,…"
        // ("emulated-cuda:0,1" on the host emulation, which says so).
        let prefix = if gpu::EMULATED {
            "emulated-cuda:"
        } else {
            "cuda:"
        };
        let listed: Vec<u32> = backend
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("a GPU is present but the backend is {backend}"))
            .split(',')
            .map(|o| o.parse().unwrap())
            .collect();
        assert!(!listed.is_empty());
        assert!(listed
            .iter()
            .all(|o| devices.iter().any(|d| d.ordinal == *o)));
        let mut unique = listed.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), listed.len(), "each device once: {backend}");
    }
    // The engine proves on that backend; filecoin-proofs' verifier accepts the result.
    let fx = common::fixture();
    let (_, window) = fx
        .data
        .all_requests()
        .unwrap()
        .into_iter()
        .find(|(name, _)| name.contains("window"))
        .expect("test data has a WindowPoSt");
    let workload = FilecoinWorkload::new(window, fx.srs.dir(), fx.srs.pce_enabled());
    let proof = engine
        .prove(Arc::clone(&workload) as Arc<dyn Workload>)
        .unwrap();
    assert_eq!(proof.len(), 192);
    assert!(workload.request().verify(&proof).unwrap());
    engine.close();
}

#[test]
fn cuda_backend_without_a_device_is_refused_and_bad_config_is_rejected() {
    if gpu::devices().is_empty() {
        match Engine::open_configured(config("cuda", vec![])) {
            Err(EngineError::Invalid(msg)) => assert!(msg.contains("cuda"), "{msg}"),
            other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
        }
    }
    // A device index that cannot exist is an error even with "auto" falling back: the CPU is
    // chosen only because no GPU opened, and the reason is logged; "cuda" reports it.
    match Engine::open_configured(config("cuda", vec![4096])) {
        Err(EngineError::Invalid(msg)) => {
            assert!(msg.contains("4096") || msg.contains("CUDA"), "{msg}")
        }
        other => panic!("expected a bad device error, got {:?}", other.map(|_| ())),
    }
    match Engine::open_configured(config("tpu", vec![])) {
        Err(EngineError::Invalid(msg)) => assert!(msg.contains("tpu"), "{msg}"),
        other => panic!(
            "expected an invalid backend error, got {:?}",
            other.map(|_| ())
        ),
    }
}

#[test]
fn device_list_and_runtime_match_the_build() {
    let devices = gpu::devices();
    let runtime = gpu::runtime();
    if !gpu::CUDA_BUILT {
        assert!(devices.is_empty(), "a build without CUDA lists no GPU");
        assert!(
            runtime.is_err(),
            "a build without CUDA has no runtime: {runtime:?}"
        );
    }
    for d in &devices {
        assert!(!d.name.is_empty() && d.memory_bytes > 0, "{d:?}");
        if gpu::EMULATED {
            assert_eq!((d.sm_count, d.compute_capability.as_str()), (0, "emulated"));
        } else {
            assert!(d.sm_count > 0, "{d:?}");
            let version = d.compute_capability.split_once('.');
            assert!(
                version
                    .is_some_and(|(major, minor)| major.parse::<u32>().is_ok()
                        && minor.parse::<u32>().is_ok()),
                "{d:?}"
            );
        }
    }
    if !devices.is_empty() {
        let runtime = runtime.expect("devices are listed, so the driver answers");
        assert!(runtime.sppark_devices <= devices.len(), "{runtime:?}");
        if gpu::EMULATED {
            assert_eq!(runtime.sppark_devices, devices.len());
            assert_eq!(
                (runtime.driver.as_str(), runtime.runtime.as_str()),
                ("emulated", "emulated")
            );
        }
    }
}
