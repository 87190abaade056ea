//! A `gpu-emulator` build linked by accident proves on the CPU: its emulated devices open only
//! when `CUZK_ALLOW_EMULATED_GPUS=1` asks for them. `make emu-test` runs this file without the
//! variable (every other emulator test runs with it).

#![cfg(all(feature = "gpu-emulator", not(feature = "cuda")))]

use cuzk::engine::{Config, Engine};
use cuzk::gpu;

#[test]
fn emulated_devices_stay_closed_unless_the_tests_ask_for_them() {
    let var = gpu::emulator::device::ALLOW_EMULATED_VAR;
    assert!(
        std::env::var_os(var).is_none(),
        "run this test without {var} (make emu-test does)"
    );
    assert!(gpu::devices().is_empty(), "emulated devices listed");
    let config = |backend: &str| Config {
        synthesis_workers: 1,
        pool_buffers: 1,
        backend: backend.into(),
        ..Config::default()
    };
    let auto = Engine::open_configured(config("auto")).unwrap();
    assert_eq!(auto.status().backend, "cpu");
    auto.close();
    let refused = Engine::open_configured(config("cuda"))
        .map(|e| e.status().backend)
        .unwrap_err();
    assert!(refused.to_string().contains(var), "{refused}");
}
