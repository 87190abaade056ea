//! Emulated devices and contexts: [`super::DEVICES`] devices, and a per-thread stack of
//! current contexts that the other emulated calls check, as the driver does.

use std::cell::RefCell;
use std::marker::PhantomData;

use super::registry;
use super::DEVICES;
use crate::gpu::GpuDevice;
use crate::groth16::Groth16Error;

/// Maps an error to the prover's error type, naming what was being done.
pub fn device_error(what: &str, e: impl std::fmt::Display) -> Groth16Error {
    Groth16Error::Device(format!("{what}: {e}"))
}

/// The environment variable that lets a `gpu-emulator` build open its emulated devices. Only
/// the tests set it: a library built for them and linked by accident must not prove on host
/// arithmetic posing as GPUs.
pub const ALLOW_EMULATED_VAR: &str = "CUZK_ALLOW_EMULATED_GPUS";

/// Whether emulated devices may be opened ([`ALLOW_EMULATED_VAR`] is `1`).
pub fn emulation_allowed() -> bool {
    std::env::var(ALLOW_EMULATED_VAR).is_ok_and(|v| v == "1")
}

/// Initialises the emulator: refused, as the driver refuses without a device, unless
/// [`ALLOW_EMULATED_VAR`] asks for emulated devices.
pub fn init() -> Result<(), Groth16Error> {
    if emulation_allowed() {
        Ok(())
    } else {
        Err(Groth16Error::Device(format!(
            "this is a gpu-emulator build: its emulated devices open only with \
             {ALLOW_EMULATED_VAR}=1 (tests); no CUDA device"
        )))
    }
}

/// The emulated devices (none unless [`init`] allows them).
pub fn list() -> Result<Vec<GpuDevice>, Groth16Error> {
    init()?;
    Ok((0..DEVICES)
        .map(|ordinal| GpuDevice {
            ordinal,
            name: name(ordinal),
            memory_bytes: registry::memory(ordinal),
            sm_count: 0,
            compute_capability: "emulated".to_string(),
        })
        .collect())
}

/// As the CUDA layer's: "emulated" (there is no driver) once emulation is allowed.
pub fn driver_version() -> Result<String, Groth16Error> {
    init()?;
    Ok("emulated".to_string())
}

fn name(ordinal: u32) -> String {
    format!("cuzk emulated GPU {ordinal} (host memory)")
}

thread_local! {
    /// Contexts pushed on this thread, innermost last.
    static CURRENT: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The device whose context is current on this thread; an error when none is, as driver calls
/// without a context fail.
pub(super) fn current() -> Result<u32, Groth16Error> {
    CURRENT.with(|c| c.borrow().last().copied()).ok_or_else(|| {
        Groth16Error::Device(
            "no context is current on this thread (CUDA_ERROR_INVALID_CONTEXT)".into(),
        )
    })
}

/// Checks that `device`'s context is current (driver calls on its memory and streams).
pub(super) fn require_current(device: u32) -> Result<(), Groth16Error> {
    let current = current()?;
    if current != device {
        return Err(Groth16Error::Device(format!(
            "device {device}'s object used while device {current}'s context is current \
             (CUDA_ERROR_INVALID_CONTEXT)"
        )));
    }
    registry::check_alive(device)
}

/// One emulated device's context.
pub struct DeviceContext {
    /// Device ordinal.
    pub ordinal: u32,
    /// Device name.
    pub name: String,
}

impl DeviceContext {
    /// Opens device `ordinal`; a bad ordinal is an error naming the devices that exist.
    pub fn open(ordinal: u32) -> Result<Self, Groth16Error> {
        init()?;
        if ordinal >= DEVICES {
            return Err(Groth16Error::Device(format!(
                "device {ordinal} does not exist ({DEVICES} CUDA device(s))"
            )));
        }
        Ok(Self {
            ordinal,
            name: name(ordinal),
        })
    }

    /// Makes the context current on the calling thread until the guard drops.
    pub fn enter(&self) -> Result<CurrentGuard, Groth16Error> {
        CURRENT.with(|c| c.borrow_mut().push(self.ordinal));
        Ok(CurrentGuard {
            _same_thread: PhantomData,
        })
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(u64, u64), Groth16Error> {
        let _current = self.enter()?;
        registry::check_alive(self.ordinal)?;
        let used = registry::used(self.ordinal);
        let total = registry::memory(self.ordinal);
        Ok((total.saturating_sub(used), total))
    }
}

/// A context pushed by [`DeviceContext::enter`]; popped on drop, on the same thread.
pub struct CurrentGuard {
    _same_thread: PhantomData<*const ()>,
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.borrow_mut().pop());
    }
}
