//! The emulator's memory: host allocations handed out as device addresses, the ranges every
//! copy and kernel is checked against, per-device usage, and poisoned devices.

use std::alloc::{alloc, dealloc, Layout};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use super::{DEVICES, DEVICE_MEMORY};
use crate::groth16::Groth16Error;

/// Who an allocation belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Device memory of one device.
    Device(u32),
    /// Page-locked host memory (usable by every device).
    Pinned,
}

struct Allocation {
    bytes: usize,
    owner: Owner,
}

struct Registry {
    live: BTreeMap<u64, Allocation>,
    /// Host ranges page-locked by `register_host` (start, bytes): pinned like `Pinned`
    /// allocations, but owned by whoever allocated them.
    registered: BTreeMap<u64, usize>,
    used: [u64; DEVICES as usize],
    /// The most each device has had allocated at once since [`reset_peak`].
    peak: [u64; DEVICES as usize],
    /// Each device's memory ([`DEVICE_MEMORY`] unless a test set another size).
    memory: [u64; DEVICES as usize],
    poisoned: [Option<String>; DEVICES as usize],
}

/// What fresh device and pinned memory holds (CUDA gives no zeroed memory either).
const GARBAGE: u8 = 0xA5;
const ALIGN: usize = 256;

fn registry() -> MutexGuard<'static, Registry> {
    static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
        live: BTreeMap::new(),
        registered: BTreeMap::new(),
        used: [0; DEVICES as usize],
        peak: [0; DEVICES as usize],
        memory: [DEVICE_MEMORY; DEVICES as usize],
        poisoned: [const { None }; DEVICES as usize],
    });
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

fn device_index(device: u32) -> Result<usize, Groth16Error> {
    if device < DEVICES {
        Ok(device as usize)
    } else {
        Err(Groth16Error::Device(format!(
            "emulated device {device} does not exist (CUDA_ERROR_INVALID_DEVICE)"
        )))
    }
}

/// Sets device `device`'s memory to `bytes` (for tests of what a smaller device does).
pub fn set_memory(device: u32, bytes: u64) -> Result<(), Groth16Error> {
    let i = device_index(device)?;
    registry().memory[i] = bytes;
    Ok(())
}

/// Device `device`'s memory in bytes.
pub fn memory(device: u32) -> u64 {
    device_index(device).map_or(0, |i| registry().memory[i])
}

/// Allocates `bytes` (at least one) for `owner`, filled with garbage; device memory beyond
/// the device's size is an out-of-memory error.
pub fn allocate(owner: Owner, bytes: usize) -> Result<u64, Groth16Error> {
    let bytes = bytes.max(1);
    if let Owner::Device(d) = owner {
        let mut r = registry();
        let i = device_index(d)?;
        if r.used[i].saturating_add(bytes as u64) > r.memory[i] {
            return Err(Groth16Error::Device(format!(
                "allocating {bytes} bytes on emulated device {d}: out of memory \
                 (CUDA_ERROR_OUT_OF_MEMORY)"
            )));
        }
        r.used[i] += bytes as u64;
        r.peak[i] = r.peak[i].max(r.used[i]);
    }
    let layout = Layout::from_size_align(bytes, ALIGN)
        .map_err(|e| Groth16Error::Device(format!("allocating {bytes} bytes: {e}")))?;
    // SAFETY: a non-zero size with a valid alignment.
    let ptr = unsafe { alloc(layout) };
    if ptr.is_null() {
        if let Owner::Device(d) = owner {
            registry().used[d as usize] -= bytes as u64;
        }
        return Err(Groth16Error::Device(format!(
            "allocating {bytes} bytes of host memory for the emulator failed"
        )));
    }
    // SAFETY: the allocation has `bytes` bytes.
    unsafe { std::ptr::write_bytes(ptr, GARBAGE, bytes) };
    registry()
        .live
        .insert(ptr as u64, Allocation { bytes, owner });
    Ok(ptr as u64)
}

/// Frees an allocation made by [`allocate`].
pub fn release(addr: u64) {
    let Some(a) = registry().live.remove(&addr) else {
        panic!("emulator: freeing {addr:#x}, which is not a live allocation");
    };
    if let Owner::Device(d) = a.owner {
        registry().used[d as usize] -= a.bytes as u64;
    }
    let layout = Layout::from_size_align(a.bytes, ALIGN).expect("checked at allocation");
    // SAFETY: allocated by `allocate` with this layout, freed once (just unregistered).
    unsafe { dealloc(addr as *mut u8, layout) };
}

/// Checks that `[addr, addr + bytes)` lies inside one live allocation of `owner`.
pub fn check_range(what: &str, addr: u64, bytes: usize, owner: Owner) -> Result<(), Groth16Error> {
    if bytes == 0 {
        return Ok(());
    }
    let r = registry();
    let inside = r
        .live
        .range(..=addr)
        .next_back()
        .is_some_and(|(&start, a)| {
            a.owner == owner && addr + bytes as u64 <= start + a.bytes as u64
        });
    if inside {
        Ok(())
    } else {
        Err(Groth16Error::Device(format!(
            "{what}: {bytes} bytes at {addr:#x} are not inside one {owner:?} allocation \
             (CUDA_ERROR_INVALID_VALUE)"
        )))
    }
}

/// Whether host memory `[ptr, ptr + bytes)` lies in one pinned allocation or one registered
/// range.
pub fn is_pinned(ptr: *const u8, bytes: usize) -> bool {
    check_range("", ptr as u64, bytes.max(1), Owner::Pinned).is_ok() || is_registered(ptr, bytes)
}

/// Whether host memory `[ptr, ptr + bytes)` lies in one range registered by [`register`].
pub fn is_registered(ptr: *const u8, bytes: usize) -> bool {
    let (addr, end) = (ptr as u64, ptr as u64 + bytes.max(1) as u64);
    registry()
        .registered
        .range(..=addr)
        .next_back()
        .is_some_and(|(&start, &len)| end <= start + len as u64)
}

/// Registers host range `[ptr, ptr + bytes)` as page-locked; a range overlapping one already
/// registered or a pinned allocation is an error, as for the driver.
pub fn register(ptr: *const u8, bytes: usize) -> Result<(), Groth16Error> {
    let (addr, end) = (ptr as u64, ptr as u64 + bytes as u64);
    let mut r = registry();
    let overlaps_registered = r
        .registered
        .range(..end)
        .next_back()
        .is_some_and(|(&start, &len)| start + len as u64 > addr);
    let overlaps_pinned = r
        .live
        .range(..end)
        .next_back()
        .is_some_and(|(&start, a)| a.owner == Owner::Pinned && start + a.bytes as u64 > addr);
    if bytes == 0 || overlaps_registered || overlaps_pinned {
        return Err(Groth16Error::Device(format!(
            "page-locking {bytes} bytes at {addr:#x}: empty or already page-locked \
             (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)"
        )));
    }
    r.registered.insert(addr, bytes);
    Ok(())
}

/// Undoes [`register`] for the range starting at `ptr`; a pointer that starts none is a bug in
/// the backend, so it panics (in the emulator only).
pub fn unregister(ptr: *const u8) {
    if registry().registered.remove(&(ptr as u64)).is_none() {
        panic!("emulator: unlocking {ptr:?}, which starts no page-locked range");
    }
}

/// Device bytes allocated on `device`.
pub fn used(device: u32) -> u64 {
    registry().used[device as usize % DEVICES as usize]
}

/// The most device bytes `device` has had allocated at once since [`reset_peak`].
pub fn peak(device: u32) -> u64 {
    registry().peak[device as usize % DEVICES as usize]
}

/// Starts [`peak`] again from what `device` has allocated now.
pub fn reset_peak(device: u32) {
    let mut r = registry();
    let i = device as usize % DEVICES as usize;
    r.peak[i] = r.used[i];
}

/// Marks `device` broken: every later call on it fails with `message` (a sticky error).
pub fn poison(device: u32, message: String) {
    log::error!("emulated device {device}: {message}");
    registry().poisoned[device as usize % DEVICES as usize].get_or_insert(message);
}

/// The sticky error of `device`, if it has one.
pub fn check_alive(device: u32) -> Result<(), Groth16Error> {
    let i = device_index(device)?;
    match &registry().poisoned[i] {
        None => Ok(()),
        Some(m) => Err(Groth16Error::Device(format!(
            "emulated device {device} is broken by an earlier error: {m} \
             (CUDA_ERROR_ILLEGAL_ADDRESS)"
        ))),
    }
}
