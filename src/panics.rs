//! The text of a caught panic, for the places that turn panics into errors (engine workers,
//! parameter decodes, third-party proof code, the C boundary).

use std::any::Any;

/// The message a panic carried (`panic!` with a literal or a formatted string), or
/// "unknown panic".
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
