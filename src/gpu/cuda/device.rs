//! Device discovery and per-device contexts through `cust`.

use cust::context::{Context, CurrentContext};
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

/// Every CUDA device with its name and memory.
pub fn list() -> Result<Vec<GpuDevice>, Groth16Error> {
    init()?;
    let n = Device::num_devices().map_err(|e| device_error("device count", e))?;
    (0..n)
        .map(|ordinal| {
            let d = Device::get_device(ordinal).map_err(|e| device_error("device", e))?;
            Ok(GpuDevice {
                ordinal,
                name: d.name().map_err(|e| device_error("device name", e))?,
                memory_bytes: d
                    .total_memory()
                    .map_err(|e| device_error("device memory", e))?
                    as u64,
            })
        })
        .collect()
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
        let device = Device::get_device(ordinal).map_err(|e| device_error("device", e))?;
        let context = Context::new(device).map_err(|e| device_error("context", e))?;
        Ok(Self {
            ordinal,
            name: device.name().unwrap_or_else(|_| format!("cuda:{ordinal}")),
            context,
        })
    }

    /// Makes the context current on the calling thread (cheap; call before any CUDA work).
    pub fn enter(&self) -> Result<(), Groth16Error> {
        CurrentContext::set_current(&self.context).map_err(|e| device_error("set context", e))
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(u64, u64), Groth16Error> {
        self.enter()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: two valid out-pointers; a context is current.
        let r = unsafe { cust::sys::cuMemGetInfo_v2(&mut free, &mut total) };
        if r != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(Groth16Error::Device(format!("cuMemGetInfo: {r:?}")));
        }
        Ok((free as u64, total as u64))
    }
}
