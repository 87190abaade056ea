//! The C ABI: every `cuzk_*` symbol lives here. It converts and delegates, nothing more.

/// Version of the C ABI; bumped on every incompatible change of `include/cuzk.h`.
pub const CUZK_ABI_VERSION: u32 = 1;

/// Returns the C ABI version this library implements (compare with `CUZK_ABI_VERSION`).
#[no_mangle]
pub extern "C" fn cuzk_abi_version() -> u32 {
    CUZK_ABI_VERSION
}
