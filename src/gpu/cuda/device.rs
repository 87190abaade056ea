//! Device discovery and per-device contexts through `cust`.

use std::marker::PhantomData;

use cust::context::Context;
use cust::device::Device;
use cust::CudaFlags;

use super::super::GpuDevice;
use crate::groth16::Groth16Error;

/// Maps a CUDA error to the prover's error type, naming what was being done.
pub fn device_error(what: &str, e: impl std::fmt::Display) -> Groth16Error {
    Groth16Error::Device(format!("{what}: {e}"))
}

/// Initialises the driver API (idempotent). Fails without a driver or device.
pub fn init() -> Result<(), Groth16Error> {
    cust::init(CudaFlags::empty()).map_err(|e| device_error("CUDA init", e))
}

/// Every CUDA device with its name, memory, multiprocessors and compute capability.
pub fn list() -> Result<Vec<GpuDevice>, Groth16Error> {
    use cust::device::DeviceAttribute;
    init()?;
    let n = Device::num_devices().map_err(|e| device_error("device count", e))?;
    (0..n)
        .map(|ordinal| {
            let d = Device::get_device(ordinal).map_err(|e| device_error("device", e))?;
            let attribute = |a: DeviceAttribute| {
                d.get_attribute(a)
                    .map_err(|e| device_error("device attribute", e))
            };
            Ok(GpuDevice {
                ordinal,
                name: d.name().map_err(|e| device_error("device name", e))?,
                memory_bytes: d
                    .total_memory()
                    .map_err(|e| device_error("device memory", e))?
                    as u64,
                sm_count: attribute(DeviceAttribute::MultiprocessorCount)?.max(0) as u32,
                compute_capability: format!(
                    "{}.{}",
                    attribute(DeviceAttribute::ComputeCapabilityMajor)?,
                    attribute(DeviceAttribute::ComputeCapabilityMinor)?
                ),
            })
        })
        .collect()
}

/// The newest CUDA version the installed driver supports ("12.4").
pub fn driver_version() -> Result<String, Groth16Error> {
    init()?;
    let v = cust::CudaApiVersion::get().map_err(|e| device_error("driver version", e))?;
    Ok(format!("{}.{}", v.major(), v.minor()))
}

/// Asks for blocking synchronisation on `device`'s primary context, before it is retained: a
/// host thread waiting for the GPU then sleeps instead of spinning (the default scheduling
/// spins while there are fewer busy threads than cores), and synthesis needs those cores.
/// Where the driver refuses (older drivers do while the host program holds the context
/// active), the context keeps its flags and the log says which.
fn use_blocking_sync(device: Device) {
    use cust::sys::{cudaError_enum::CUDA_SUCCESS, CUctx_flags_enum::CU_CTX_SCHED_BLOCKING_SYNC};
    // SAFETY: a valid device handle; only changes the flags of its primary context.
    let set = unsafe {
        cust::sys::cuDevicePrimaryCtxSetFlags_v2(device.as_raw(), CU_CTX_SCHED_BLOCKING_SYNC as u32)
    };
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: two valid out-pointers.
    let got =
        unsafe { cust::sys::cuDevicePrimaryCtxGetState(device.as_raw(), &mut flags, &mut active) };
    if set == CUDA_SUCCESS {
        log::debug!("primary context: blocking sync (flags {flags:#x}, active {active})");
    } else {
        log::warn!(
            "primary context: blocking sync refused ({set:?}); flags {flags:#x} ({got:?}), active {active}: \
             host threads may spin while they wait for the GPU"
        );
    }
}

/// The primary context of one device, made current on whichever thread uses it.
pub struct DeviceContext {
    /// CUDA ordinal.
    pub ordinal: u32,
    /// Device name.
    pub name: String,
    context: Context,
}

impl DeviceContext {
    /// Retains device `ordinal`'s primary context; a bad ordinal is an error naming the
    /// devices that exist.
    pub fn open(ordinal: u32) -> Result<Self, Groth16Error> {
        init()?;
        let n = Device::num_devices().map_err(|e| device_error("device count", e))?;
        if ordinal >= n {
            return Err(Groth16Error::Device(format!(
                "device {ordinal} does not exist ({n} CUDA device(s))"
            )));
        }
        // Every device's flags at the first open, before any context: sppark's device pool,
        // built when the first device opens, makes every device's primary context active,
        // after which a driver may refuse to change its flags.
        static EVERY_DEVICE: std::sync::Once = std::sync::Once::new();
        EVERY_DEVICE.call_once(|| {
            for other in (0..n).filter_map(|o| Device::get_device(o).ok()) {
                use_blocking_sync(other);
            }
        });
        let device = Device::get_device(ordinal).map_err(|e| device_error("device", e))?;
        // cust makes the retained primary context current; put back what the calling thread
        // had (it may be the host program's thread, with CUDA state of its own).
        let mut previous = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        unsafe { cust::sys::cuCtxGetCurrent(&mut previous) };
        let context = Context::new(device).map_err(|e| device_error("context", e));
        // SAFETY: `previous` was current on this thread (or null) a moment ago.
        unsafe { cust::sys::cuCtxSetCurrent(previous) };
        let context = context?;
        Ok(Self {
            ordinal,
            name: device.name().unwrap_or_else(|_| format!("cuda:{ordinal}")),
            context,
        })
    }

    /// Makes the context current on the calling thread until the guard drops, then restores
    /// the thread's previous context (cheap; hold one around any CUDA work). Engine open and
    /// close run on the caller's threads, whose CUDA state is not ours to change.
    pub fn enter(&self) -> Result<CurrentGuard, Groth16Error> {
        // SAFETY: a live context handle, retained for as long as `self` lives.
        let r = unsafe { cust::sys::cuCtxPushCurrent_v2(self.context.as_raw()) };
        if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(device_error("set context", format!("{r:?}")));
        }
        Ok(CurrentGuard {
            _same_thread: PhantomData,
        })
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(u64, u64), Groth16Error> {
        let _current = self.enter()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: two valid out-pointers; a context is current.
        let r = unsafe { cust::sys::cuMemGetInfo_v2(&mut free, &mut total) };
        if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(Groth16Error::Device(format!("cuMemGetInfo: {r:?}")));
        }
        Ok((free as u64, total as u64))
    }
}

/// A context pushed on this thread by [`DeviceContext::enter`]; popped on drop (on the same
/// thread: the guard is neither `Send` nor `Sync`).
pub struct CurrentGuard {
    _same_thread: PhantomData<*const ()>,
}

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        let mut popped = std::ptr::null_mut();
        // SAFETY: pops the context `enter` pushed on this thread.
        unsafe { cust::sys::cuCtxPopCurrent_v2(&mut popped) };
    }
}
