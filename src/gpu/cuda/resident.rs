//! Parameter sets (SRS) kept resident on the device between proofs, and the pool of
//! per-partition device buffers.

use std::sync::{Arc, Mutex};

use blstrs::{G1Affine, G2Affine};

use super::buffers::{h2d_blocking, DeviceMem};
use super::device::DeviceContext;
use super::memory::{register_host, unregister_host};
use super::stream::GpuStream;
use crate::groth16::srs::HeldGuard;
use crate::groth16::{Density, Groth16Error, Srs};

/// Views a slice of plain values as bytes (curve points and scalars are `repr(transparent)`
/// over blst's C structs, whose layout the kernels share).
pub fn as_bytes<T>(v: &[T]) -> &[u8] {
    // SAFETY: any initialised memory can be read as bytes; the length is exact.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// 64-bit words as their bytes, for a device-to-host copy to write (every byte pattern is a
/// valid word).
pub fn words_as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: any bytes are valid u64s; the length is exact.
    unsafe {
        std::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), std::mem::size_of_val(words))
    }
}

/// Prefix counts of a bitmap, as the gather kernels take them: entry w is the number of set
/// bits in the words before w. Also returns the total.
pub fn prefix_counts(words: &[u64]) -> (Vec<u32>, usize) {
    let mut prefix = Vec::with_capacity(words.len());
    let mut total = 0usize;
    for w in words {
        prefix.push(total as u32);
        total += w.count_ones() as usize;
    }
    (prefix, total)
}

/// The SRS queries the prover multiplies against, copied to the device once: all five when
/// they fit beside a partition, else the largest that do and the leading points of another
/// (see [`kept_prefixes`]); the rest is streamed from the host's copy in chunks at each MSM
/// (see `GpuBackend`'s streamed MSMs), page-locked for it.
pub struct ResidentSrs {
    /// H query (G1), or its leading points, when any is resident.
    pub h: Option<DeviceMem>,
    /// L query (G1), or its leading points, when any is resident.
    pub l: Option<DeviceMem>,
    /// A query (G1), or its leading points, when any is resident.
    pub a: Option<DeviceMem>,
    /// B query in G1, or its leading points, when any is resident.
    pub b_g1: Option<DeviceMem>,
    /// B query in G2, or its leading points, when any is resident.
    pub b_g2: Option<DeviceMem>,
    /// The density maps of the circuit last proved with these parameters (see
    /// [`ResidentDensities`]).
    densities: Mutex<Option<Arc<ResidentDensities>>>,
    /// Device bytes of the resident queries.
    bytes: u64,
    /// Bytes of the queries left on the host (streamed at each MSM).
    streamed: u64,
    /// Bytes of those that are page-locked (copied by DMA; the rest is staged by the driver).
    locked: u64,
}

/// A streamed query's host memory, page-locked so its copies to the device are DMA at full
/// PCIe speed instead of being staged through the driver's small pageable buffer (at 32 GiB
/// on a 24 GB GPU, about 45 GB per partition). Unlocked when dropped; held by the [`Srs`]
/// that owns the memory ([`Srs::hold_guard`]), which drops it before freeing the query.
struct HostLock {
    ctx: Arc<DeviceContext>,
    ptr: usize,
}

impl Drop for HostLock {
    fn drop(&mut self) {
        unregister_host(&self.ctx, self.ptr as *const u8);
    }
}

/// Page-locks `query`, one of `srs`'s queries (all of it), unless it is already (by another
/// device or an earlier upload: the lock is portable); returns whether it is locked. A failure is logged and the query is
/// streamed from pageable memory.
fn lock_streamed_query(ctx: &Arc<DeviceContext>, srs: &Srs, query: &[u8]) -> bool {
    if query.is_empty() {
        return false;
    }
    let ptr = query.as_ptr();
    let locked = srs.hold_guard(ptr as usize, || -> Result<HeldGuard, Groth16Error> {
        // SAFETY: the lock is held by `srs`, which owns `query` and drops its guards before
        // freeing its queries, so the memory stays allocated until it is unlocked.
        unsafe { register_host(ctx, ptr, query.len())? };
        Ok(Box::new(HostLock {
            ctx: Arc::clone(ctx),
            ptr: ptr as usize,
        }))
    });
    match locked {
        Ok(()) => true,
        Err(e) => {
            log::warn!(
                "device {}: streaming {} bytes of parameters from pageable memory: {e}",
                ctx.ordinal,
                query.len()
            );
            false
        }
    }
}

/// Bytes of each of the five queries (h, l, a, b_g1, b_g2, of `lengths` bytes) kept resident
/// in `allowance`: whole queries, largest first, while they fit; then, in the room left, the
/// leading points of the largest one that did not fit (its MSM runs over them on the device
/// and streams the rest). Every byte of room holds parameters, so a GPU whose room is smaller
/// than every query (24 GiB at 32 GiB PoRep) still keeps some, and the bytes streamed are the
/// parameters less the room, as `cuzk plan` counts them.
pub fn kept_prefixes(lengths: [u64; 5], allowance: u64) -> [u64; 5] {
    const POINT_BYTES: [u64; 5] = [96, 96, 96, 96, 192];
    let mut keep = [0u64; 5];
    let mut order: Vec<usize> = (0..5).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(lengths[i]));
    let mut left = allowance;
    for &i in &order {
        if lengths[i] <= left {
            keep[i] = lengths[i];
            left -= lengths[i];
        }
    }
    if let Some(&i) = order.iter().find(|&&i| keep[i] < lengths[i]) {
        keep[i] = left / POINT_BYTES[i] * POINT_BYTES[i];
    }
    keep
}

/// A circuit's three density maps on the device: for A's aux variables, B's inputs and B's
/// aux variables, each as its bits and per-word prefix counts (what the gather kernels read).
///
/// The maps depend only on the circuit's shape, and a parameter set is made for one shape, so
/// they are kept with the resident SRS: every partition after the first reuses them instead of
/// copying them from pageable memory (about 48 MB at 32 GiB PoRep, staged while the host
/// waits). A host copy of the maps is kept to compare each partition's against, so maps that
/// differ (a circuit proved against parameters of another shape) are uploaded, never assumed.
pub struct ResidentDensities {
    host: [Density; 3],
    /// (bits, prefix counts) for A's aux, B's inputs and B's aux, in that order.
    pub maps: [(DeviceMem, DeviceMem); 3],
}

impl ResidentDensities {
    /// Uploads `maps` (A's aux, B's inputs, B's aux) on `stream` and waits for the copies, so
    /// the maps are ready for work queued on any stream.
    pub fn upload(
        ctx: &Arc<DeviceContext>,
        maps: [&Density; 3],
        stream: &GpuStream,
    ) -> Result<Self, Groth16Error> {
        let put = |bytes: &[u8]| -> Result<DeviceMem, Groth16Error> {
            let mem = DeviceMem::alloc(ctx, bytes.len())?;
            h2d_blocking(mem.at(0), bytes, stream)?;
            Ok(mem)
        };
        let mut device = Vec::with_capacity(3);
        for d in maps {
            let (prefix, _) = prefix_counts(d.words());
            device.push((put(as_bytes(d.words()))?, put(as_bytes(&prefix))?));
        }
        let [a, bi, ba]: [(DeviceMem, DeviceMem); 3] = device
            .try_into()
            .unwrap_or_else(|_| unreachable!("three maps pushed"));
        Ok(Self {
            host: maps.map(Density::clone),
            maps: [a, bi, ba],
        })
    }

    /// Whether these are exactly `maps` (every bit compared).
    fn matches(&self, maps: [&Density; 3]) -> bool {
        self.host.iter().zip(maps).all(|(kept, d)| kept == d)
    }

    /// Device bytes of the maps and their prefix counts.
    pub fn device_bytes(&self) -> u64 {
        self.maps
            .iter()
            .map(|(bits, prefix)| (bits.bytes() + prefix.bytes()) as u64)
            .sum()
    }
}

const _: () = assert!(std::mem::size_of::<G1Affine>() == 96);
const _: () = assert!(std::mem::size_of::<G2Affine>() == 192);

impl ResidentSrs {
    /// Device bytes an SRS takes when resident.
    pub fn bytes_for(srs: &Srs) -> u64 {
        (std::mem::size_of_val(&srs.h[..])
            + std::mem::size_of_val(&srs.l[..])
            + std::mem::size_of_val(&srs.a[..])
            + std::mem::size_of_val(&srs.b_g1[..])
            + std::mem::size_of_val(&srs.b_g2[..])) as u64
    }

    /// Uploads what fits of the queries in `allowance` bytes on `stream` and waits for the
    /// copies: all five when they fit, else whole queries largest first while they fit, then
    /// the leading points of the next one in the room left (see [`kept_prefixes`]); the rest
    /// of each query is streamed at each MSM, page-locked here.
    pub fn upload(
        ctx: &Arc<DeviceContext>,
        srs: &Srs,
        stream: &GpuStream,
        allowance: u64,
    ) -> Result<Self, Groth16Error> {
        let queries: [&[u8]; 5] = [
            as_bytes(&srs.h),
            as_bytes(&srs.l),
            as_bytes(&srs.a),
            as_bytes(&srs.b_g1),
            as_bytes(&srs.b_g2),
        ];
        let keep = kept_prefixes(queries.map(|q| q.len() as u64), allowance);
        let put = |i: usize| -> Result<Option<DeviceMem>, Groth16Error> {
            if keep[i] == 0 {
                return Ok(None);
            }
            let prefix = &queries[i][..keep[i] as usize];
            let mem = DeviceMem::alloc(ctx, prefix.len())?;
            h2d_blocking(mem.at(0), prefix, stream)?;
            Ok(Some(mem))
        };
        let kept: u64 = keep.iter().sum();
        let t = std::time::Instant::now();
        // A query that streams at all is locked whole, keyed by its start: another upload of
        // these parameters that keeps another part of it (another device, or this one after
        // the set was dropped for room) then finds it locked instead of failing to lock a
        // range that overlaps this one.
        let locked: u64 = (0..5)
            .filter(|&i| keep[i] < queries[i].len() as u64)
            .filter(|&i| lock_streamed_query(ctx, srs, queries[i]))
            .map(|i| queries[i].len() as u64 - keep[i])
            .sum();
        if locked > 0 {
            log::debug!(
                "GPU_SRS_LOCK device={} bytes={locked} ms={:.1}",
                ctx.ordinal,
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        Ok(Self {
            h: put(0)?,
            l: put(1)?,
            a: put(2)?,
            b_g1: put(3)?,
            b_g2: put(4)?,
            densities: Mutex::new(None),
            bytes: kept,
            streamed: Self::bytes_for(srs) - kept,
            locked,
        })
    }

    /// Bytes of the streamed queries that are page-locked, so their copies are DMA (all of
    /// them unless locking failed, which is logged).
    pub fn locked_streamed_bytes(&self) -> u64 {
        self.locked
    }

    /// Bytes of the queries left on the host, streamed to the device at each MSM.
    pub fn streamed_bytes(&self) -> u64 {
        self.streamed
    }

    /// Device bytes this set holds: the queries and the kept density maps.
    pub fn device_bytes(&self) -> u64 {
        let maps = self.densities.lock().unwrap_or_else(|p| p.into_inner());
        self.bytes + maps.as_ref().map_or(0, |d| d.device_bytes())
    }

    /// The device copy of `maps` (A's aux, B's inputs, B's aux): the kept one when it holds
    /// exactly these maps, else uploaded on `stream` and kept in its place (partitions still
    /// using the old copy hold it until they finish). Also returns whether it was uploaded.
    pub fn densities(
        &self,
        ctx: &Arc<DeviceContext>,
        maps: [&Density; 3],
        stream: &GpuStream,
    ) -> Result<(Arc<ResidentDensities>, bool), Groth16Error> {
        let mut kept = self.densities.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = kept.as_ref().filter(|d| d.matches(maps)) {
            return Ok((Arc::clone(d), false));
        }
        // Dropped first: when no partition uses the old maps, their memory is free for the new.
        *kept = None;
        let fresh = Arc::new(ResidentDensities::upload(ctx, maps, stream)?);
        *kept = Some(Arc::clone(&fresh));
        Ok((fresh, true))
    }
}

/// Frees the MSM state the kernels keep on device `ordinal` (see [`super::kernels::msm_release`])
/// to make room; a failure is logged, not returned (the allocation that needed room reports it).
pub fn release_msm_state(ordinal: u32) {
    match super::kernels::msm_release(ordinal) {
        Ok(0) => {}
        Ok(n) => log::debug!("device {ordinal}: released {n} kept MSM states"),
        Err(e) => log::warn!("device {ordinal}: releasing the kept MSM states: {e}"),
    }
}

/// Device allocations kept for reuse. Freeing device memory synchronises the whole device,
/// which would stall one partition's copies behind another's kernels, so the backend returns
/// its per-partition buffers here and takes them back for the next partition.
pub struct DevicePool {
    ctx: Arc<DeviceContext>,
    free: std::sync::Mutex<Vec<DeviceMem>>,
}

/// Most allocations kept for reuse.
const POOL_ENTRIES: usize = 64;

/// Requests from this size up reuse only a buffer at most an eighth larger.
const LARGE_BUFFER: usize = 64 << 20;

/// The largest kept buffer a request of `bytes` reuses: twice the request for small ones, so
/// they are not reallocated at every size, but an eighth more for large ones: the admission
/// counts a partition's buffers at their requested sizes, and at 32 GiB a SnapDeals partition's
/// aux (2.6 GB) reusing a PoRep one's (4.3 GB) would hold 1.7 GB it never counted.
pub fn reuse_limit(bytes: usize) -> usize {
    if bytes >= LARGE_BUFFER {
        bytes + bytes / 8
    } else {
        bytes.saturating_mul(2).max(4096)
    }
}

impl DevicePool {
    /// An empty pool for `ctx`'s device.
    pub fn new(ctx: &Arc<DeviceContext>) -> Self {
        Self {
            ctx: Arc::clone(ctx),
            free: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<DeviceMem>> {
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A buffer of at least `bytes` and at most [`reuse_limit`] bytes; allocates when none
    /// fits. Out of memory is an error: the backend makes room (these buffers, kept MSM state,
    /// idle parameter sets) and asks again.
    pub fn take(&self, bytes: usize) -> Result<DeviceMem, Groth16Error> {
        let reused = {
            let mut free = self.lock();
            let fit = free
                .iter()
                .enumerate()
                .filter(|(_, m)| m.bytes() >= bytes && m.bytes() <= reuse_limit(bytes))
                .min_by_key(|(_, m)| m.bytes())
                .map(|(i, _)| i);
            fit.map(|i| free.swap_remove(i))
        };
        if let Some(mem) = reused {
            return Ok(mem);
        }
        DeviceMem::alloc(&self.ctx, bytes)
    }

    /// Returns buffers for reuse.
    pub fn give(&self, mems: impl IntoIterator<Item = DeviceMem>) {
        let evicted: Vec<DeviceMem> = {
            let mut free = self.lock();
            free.extend(mems);
            let over = free.len().saturating_sub(POOL_ENTRIES);
            free.drain(..over).collect()
        };
        // Freed after the lock: a free synchronises the device, and `take` must not wait on it.
        drop(evicted);
    }

    /// Frees every kept buffer (e.g. to make room for an SRS).
    pub fn clear(&self) {
        let kept = std::mem::take(&mut *self.lock());
        drop(kept);
    }
}
