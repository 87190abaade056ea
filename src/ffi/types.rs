//! The C ABI's plain data types: result codes, borrowed input slices, owned output buffers.

/// Result code of every fallible `cuzk_*` call. On anything but `CUZK_OK` an owned message is
/// written to the call's `err` out-parameter (free it with `cuzk_string_free`).
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CuzkCode {
    /// Success.
    Ok = 0,
    /// A required pointer argument was null.
    NullArgument = 1,
    /// The caller's input is invalid (malformed JSON, wrong lengths, unknown proof type ...).
    InvalidInput = 2,
    /// Proving failed (synthesis, prover, self-check, missing parameters).
    ProofFailed = 3,
    /// The job was cancelled.
    Cancelled = 4,
    /// The engine is closed.
    Closed = 5,
    /// Waiting timed out; the job goes on.
    Timeout = 6,
    /// No such job (or its result was already taken).
    UnknownJob = 7,
    /// The request can never fit the memory budget.
    TooLarge = 8,
    /// A panic was caught at the boundary (a bug in cuzk; the process is still sound).
    Panic = 9,
    /// WindowPoSt vanilla proofs of some sectors do not verify: nothing was proved. The message
    /// starts with `faulty sectors [n, m, ...]` (the sector numbers, for the node to declare).
    FaultySectors = 10,
}

/// A borrowed byte slice passed in by the caller (valid for the call only). `ptr` may be null
/// only when `len` is 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CuzkSlice {
    /// First byte.
    pub ptr: *const u8,
    /// Number of bytes.
    pub len: usize,
}

/// An owned byte buffer returned by cuzk; release it with `cuzk_bytes_free`.
#[repr(C)]
#[derive(Debug)]
pub struct CuzkBytes {
    /// First byte (null when empty).
    pub ptr: *mut u8,
    /// Number of bytes.
    pub len: usize,
}

impl CuzkBytes {
    /// Hands a vector to C.
    pub fn from_vec(v: Vec<u8>) -> Self {
        let boxed = v.into_boxed_slice();
        let len = boxed.len();
        super::memory::handed_out();
        let ptr = Box::into_raw(boxed).cast::<u8>();
        Self { ptr, len }
    }

    /// An empty buffer.
    pub fn empty() -> Self {
        Self {
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }
}

/// Where a job's time went, in milliseconds (summed over partitions). Versioned: set
/// `struct_size = sizeof(CuzkTimings)` before the call (see `cuzk_await`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CuzkTimings {
    /// Set by the caller to `sizeof(CuzkTimings)`; the library writes at most that many bytes
    /// and sets it to the number it wrote. Fields are only ever added at the end.
    pub struct_size: u32,
    /// Submit to the first partition's synthesis.
    pub queue_ms: f64,
    /// Synthesis.
    pub synth_ms: f64,
    /// prove_start + prove_finish.
    pub prove_ms: f64,
    /// The self-check with filecoin-proofs' verifier.
    pub verify_ms: f64,
}

// SAFETY: repr(C), starts with `struct_size: u32`, plain data.
unsafe impl super::versioned::VersionedOut for CuzkTimings {
    const NAME: &'static str = "CuzkTimings";
    // ABI 6, the first versioned layout: every field up to `verify_ms`.
    const FIRST_LAYOUT_SIZE: usize =
        std::mem::offset_of!(CuzkTimings, verify_ms) + std::mem::size_of::<f64>();
    fn set_struct_size(&mut self, size: u32) {
        self.struct_size = size;
    }
}
