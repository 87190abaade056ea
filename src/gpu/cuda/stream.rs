//! CUDA streams and events on the driver API. cust 0.3.2's `Stream::new` silently drops the
//! non-blocking flag, and a blocking stream waits for all work on the legacy default stream,
//! which other CUDA users in the host process (or libraries) may use; these streams are created
//! non-blocking, so only our own ordering applies. Events time and fence the work queued on them.

use std::ptr;

use cust::sys::{self as cu, cudaError_enum::CUDA_SUCCESS};

use crate::groth16::Groth16Error;

/// Turns a driver result into an error naming what was being done.
fn check(what: &str, r: cu::CUresult) -> Result<(), Groth16Error> {
    if r == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Groth16Error::Device(format!("{what}: {r:?}")))
    }
}

/// A non-blocking stream of the context current at creation; destroyed on drop.
pub struct GpuStream {
    raw: cu::CUstream,
}

// SAFETY: a stream handle may be used from any thread; CUDA serialises access internally.
unsafe impl Send for GpuStream {}
// SAFETY: as above.
unsafe impl Sync for GpuStream {}

impl GpuStream {
    /// Creates a non-blocking stream in the current context.
    pub fn new() -> Result<Self, Groth16Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; the caller holds a current context.
        let r = unsafe {
            cu::cuStreamCreate(
                &mut raw,
                cu::CUstream_flags_enum::CU_STREAM_NON_BLOCKING as u32,
            )
        };
        check("creating a stream", r)?;
        Ok(Self { raw })
    }

    /// The raw handle, for copies and kernel launches.
    pub fn as_inner(&self) -> cu::CUstream {
        self.raw
    }

    /// Waits until everything queued on the stream is done.
    pub fn synchronize(&self) -> Result<(), Groth16Error> {
        // SAFETY: a live stream.
        check("stream synchronize", unsafe {
            cu::cuStreamSynchronize(self.raw)
        })
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        // SAFETY: created by cuStreamCreate and destroyed once; the handle names its context.
        unsafe { cu::cuStreamDestroy_v2(self.raw) };
    }
}

/// An event with timing, for fencing and timing work on a [`GpuStream`]; destroyed on drop.
pub struct GpuEvent {
    raw: cu::CUevent,
}

// SAFETY: as for streams.
unsafe impl Send for GpuEvent {}
// SAFETY: as above.
unsafe impl Sync for GpuEvent {}

impl GpuEvent {
    /// Creates an event in the current context.
    pub fn new() -> Result<Self, Groth16Error> {
        let mut raw = ptr::null_mut();
        // SAFETY: a valid out-pointer; the caller holds a current context. Timing on; a host
        // thread waiting for the event sleeps instead of spinning a core synthesis needs.
        check("creating an event", unsafe {
            cu::cuEventCreate(&mut raw, cu::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32)
        })?;
        Ok(Self { raw })
    }

    /// Marks the current end of `stream`'s queue.
    pub fn record(&self, stream: &GpuStream) -> Result<(), Groth16Error> {
        // SAFETY: a live event and stream of the same context.
        check("recording an event", unsafe {
            cu::cuEventRecord(self.raw, stream.as_inner())
        })
    }

    /// Waits until the work before the recorded mark is done.
    pub fn synchronize(&self) -> Result<(), Groth16Error> {
        // SAFETY: a live event.
        check("event synchronize", unsafe {
            cu::cuEventSynchronize(self.raw)
        })
    }

    /// Milliseconds of device time from `start` to this event (both recorded and complete).
    pub fn ms_since(&self, start: &GpuEvent) -> Result<f32, Groth16Error> {
        let mut ms = 0f32;
        // SAFETY: a valid out-pointer and two live events.
        check("event timing", unsafe {
            cu::cuEventElapsedTime(&mut ms, start.raw, self.raw)
        })?;
        Ok(ms)
    }
}

impl Drop for GpuEvent {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate and destroyed once.
        unsafe { cu::cuEventDestroy_v2(self.raw) };
    }
}
