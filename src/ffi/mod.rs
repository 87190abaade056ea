//! The C ABI: every `cuzk_*` symbol lives here. It converts and delegates, nothing more.
//!
//! Conventions: inputs are borrowed `ptr + len` for the call; every fallible call returns a
//! [`CuzkCode`] and writes an owned message to its `err` out-parameter on failure; every owned
//! output has one matching `*_free`; no panic crosses the boundary ([`guard::call`]).

pub mod aggregate;
pub mod engine;
pub mod guard;
pub mod handle;
pub mod jobs;
pub mod memory;
pub mod plan;
pub mod status;
pub mod types;
pub mod vanilla;
pub mod verify;
pub mod versioned;

pub use types::{CuzkBytes, CuzkCode, CuzkSlice, CuzkTimings};

/// Version of the C ABI; bumped on every incompatible change of `include/cuzk.h`.
pub const CUZK_ABI_VERSION: u32 = 6;

/// Returns the C ABI version this library implements (compare with `CUZK_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn cuzk_abi_version() -> u32 {
    CUZK_ABI_VERSION
}

/// Initialises logging to stderr once (`filter` like `RUST_LOG`, e.g. "info" or
/// "cuzk=debug"; null: `RUST_LOG` or "warn"). Later calls do nothing.
///
/// # Safety
/// `filter` null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cuzk_init_logging(filter: *const std::ffi::c_char) {
    let filter = if filter.is_null() {
        None
    } else {
        std::ffi::CStr::from_ptr(filter)
            .to_str()
            .ok()
            .map(str::to_owned)
    };
    let _ = std::panic::catch_unwind(|| {
        let env =
            env_logger::Env::default().default_filter_or(filter.unwrap_or_else(|| "warn".into()));
        let _ = env_logger::Builder::from_env(env).try_init();
    });
}
