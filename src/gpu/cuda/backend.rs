//! The CUDA prover backend.
//!
//! `prove_start` copies a/b/c and aux (from pinned pool buffers: asynchronous DMA on the copy
//! stream) and the inputs to the device (the density maps only for a circuit's first
//! partition: they stay with the resident SRS), hands the buffer set back as soon as the
//! copies are done, and queues the quotient NTTs and density gathers on the compute stream.
//! `prove_finish` waits for that work, runs the five MSMs against the resident SRS (b_g2 too;
//! a query that did not fit beside a partition is streamed from the host in chunks) and
//! assembles the proof on the host. While one partition is in `prove_finish`, the next one's
//! copies and NTTs run: the engine calls the two phases from different threads. Partitions
//! are admitted to the device by memory: one that does not fit beside those already there
//! waits for one of them to finish.
//!
//! A GPU failure in `prove_start` retries the partition on the CPU backend when configured
//! (`cpu_fallback`); a failure in `prove_finish` fails the job. Nothing panics.

use std::collections::HashMap;
use std::ops::AddAssign;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use blstrs::{G1Projective, G2Projective, Scalar};
use ff::{Field, PrimeField};
use log::{debug, warn};

use super::buffers::h2d_blocking;
use super::buffers::{DeviceMem, PinnedBlock};
use super::device::DeviceContext;
use super::kernels;
use super::memory::{d2d, d2h_blocking, h2d};
use super::resident::{
    as_bytes, prefix_counts, words_as_bytes_mut, DevicePool, ResidentDensities, ResidentSrs,
};
use super::stream::{GpuEvent, GpuStream};
use crate::gpu::busy::BusyClock;
use crate::gpu::footprint::{
    density_map_bytes, msm_state_bytes, pair_headroom_bytes, partition_device_bytes,
    stream_window_bytes, streamed_to_hold_two, upload_bytes, usable_device_bytes, SPLIT_CHUNK,
    STREAM_CHUNK,
};
use crate::gpu::Curve;
use crate::groth16::cpu::{assemble, check_srs_fits, CpuPending};
use crate::groth16::ntt::Domain;
use crate::groth16::{
    AbcBuffers, Assignment, BufferSet, CircuitShape, CpuBackend, Groth16Error, HostGrant,
    HostMemory, Proof, ProverBackend, Randomness, Result, ScalarBuf, Srs, Started,
};

/// Resident parameter sets by host SRS address, with a weak pointer to check identity.
type ResidentMap = HashMap<usize, (Weak<Srs>, Arc<ResidentSrs>)>;

const SCALAR: usize = std::mem::size_of::<Scalar>();

/// Domains proved on the device: from 2^10 (smaller ones cost less on the CPU than a launch,
/// and sppark's NTT kernels assume at least a warp of butterflies) to 2^28 (the largest its
/// twiddle tables cover; 32 GiB PoRep is 2^27).
const DEVICE_LG: std::ops::RangeInclusive<u32> = 10..=28;

/// sppark's MSM keeps per-device state (stream counters in device globals, the device's
/// shared streams), so MSMs on one device run one at a time across the whole process, even
/// when several backends or engines share that device.
fn msm_lock(ordinal: u32) -> &'static Mutex<()> {
    static LOCKS: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];
    &LOCKS[ordinal as usize % LOCKS.len()]
}

/// The MSM bit split is on unless `CUZK_GPU_MSM_SPLIT` is `0` or `false`.
fn msm_split_default() -> bool {
    !matches!(
        std::env::var("CUZK_GPU_MSM_SPLIT").as_deref(),
        Ok("0") | Ok("false")
    )
}

/// Streaming a few parameters to hold two partitions at once is on unless
/// `CUZK_GPU_PAIR_STREAMING` is `0` or `false`.
fn pair_streaming_default() -> bool {
    !matches!(
        std::env::var("CUZK_GPU_PAIR_STREAMING").as_deref(),
        Ok("0") | Ok("false")
    )
}

/// What a partition of a circuit needs on the device beside its parameters, to decide how
/// much of them to keep resident so that two such partitions fit at once.
#[derive(Clone, Copy)]
struct PairNeeds {
    /// One partition's device bytes ([`partition_device_bytes`]).
    partition: u64,
    /// The kept MSM state for its largest MSM.
    msm_state: u64,
    /// The circuit's density maps, kept with the parameters.
    maps: u64,
    /// What one partition copies to the device.
    upload: u64,
}

impl PairNeeds {
    /// Bytes of a parameter set of `whole` bytes to keep resident so that two partitions fit
    /// beside it, `in_use` bytes of other sets and a streaming `window` on a device of
    /// `usable` bytes: None when two fit beside the whole set, or when streaming the rest does
    /// not pay ([`streamed_to_hold_two`]).
    fn kept_to_hold_two(&self, whole: u64, usable: u64, in_use: u64, window: u64) -> Option<u64> {
        let two = 2 * self.partition + self.msm_state;
        if whole + in_use + two <= usable {
            return None;
        }
        let room = usable.saturating_sub(in_use + two + self.maps + pair_headroom_bytes(usable));
        streamed_to_hold_two(whole, room, window, self.upload).map(|streamed| whole - streamed)
    }
}

/// The kernels of one group, so a split MSM is written once for G1 and G2.
trait DeviceGroup: group::Group + AddAssign {
    /// Which group the kernels take.
    const CURVE: Curve;
    /// sppark's Pippenger over `n` device points and scalars.
    fn msm(ordinal: u32, d_points: u64, d_scalars: u64, n: usize) -> Result<Self>;
    /// The sum of the points whose bit is set in an `n`-bit device map.
    fn sum_selected(ordinal: u32, d_points: u64, d_bits: u64, n: usize) -> Result<Self>;
}

impl DeviceGroup for G1Projective {
    const CURVE: Curve = Curve::G1;
    fn msm(ordinal: u32, d_points: u64, d_scalars: u64, n: usize) -> Result<Self> {
        kernels::msm_g1(ordinal, d_points, d_scalars, n)
    }
    fn sum_selected(ordinal: u32, d_points: u64, d_bits: u64, n: usize) -> Result<Self> {
        kernels::sum_g1(ordinal, d_points, d_bits, n)
    }
}

impl DeviceGroup for G2Projective {
    const CURVE: Curve = Curve::G2;
    fn msm(ordinal: u32, d_points: u64, d_scalars: u64, n: usize) -> Result<Self> {
        kernels::msm_g2(ordinal, d_points, d_scalars, n)
    }
    fn sum_selected(ordinal: u32, d_points: u64, d_bits: u64, n: usize) -> Result<Self> {
        kernels::sum_g2(ordinal, d_points, d_bits, n)
    }
}

/// One MSM's scalars split by value on the device: which are 1, which are neither 0 nor 1
/// (with the prefix counts that rank them), and how many of those there are.
struct SplitMaps {
    ones: DeviceMem,
    others: DeviceMem,
    others_prefix: DeviceMem,
    others_count: usize,
}

/// The partitions a device holds between `prove_start` and the end of `prove_finish`, and the
/// device bytes they hold or will allocate (see [`partition_device_bytes`]).
#[derive(Default)]
struct DeviceLoad {
    partitions: usize,
    bytes: u64,
}

/// Admits partitions to a device by memory: a partition starts only when its bytes fit beside
/// the parameters it needs and the partitions already on the device, else it waits for one of
/// them to finish. At 32 GiB PoRep a partition needs about 20 GB of device memory beside a
/// 47 GB parameter set, so an 80 GB GPU holds one partition at a time, where the pipeline
/// (next partition's copies and NTTs under this one's MSMs) would start a second one, run out
/// of memory, and send every other partition to the CPU (or fail it).
#[derive(Default)]
struct DeviceAdmission {
    load: Mutex<DeviceLoad>,
    finished: Condvar,
}

/// One partition's place on the device; dropping it (when the partition's work is done or
/// abandoned) wakes a partition waiting for room.
struct DeviceSlot {
    admission: Arc<DeviceAdmission>,
    bytes: u64,
}

impl Drop for DeviceSlot {
    fn drop(&mut self) {
        let mut load = self
            .admission
            .load
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        load.partitions -= 1;
        load.bytes -= self.bytes;
        drop(load);
        self.admission.finished.notify_all();
    }
}

/// Longest a partition waits for device memory before it tries anyway (and, if an allocation
/// then fails, goes to the CPU fallback or fails): a safety valve, not reached while the
/// partitions on the device finish.
const ADMISSION_PATIENCE: Duration = Duration::from_secs(600);

/// Whether an unfinished partition holds `dev` (the map holds one reference itself).
fn held_by_a_partition(dev: &Arc<ResidentSrs>) -> bool {
    Arc::strong_count(dev) > 1
}

/// Device bytes of the resident sets other than `key` that partitions on the device hold (with
/// the `window` their streamed queries pass through).
fn in_use_bytes(map: &ResidentMap, key: usize, window: u64) -> u64 {
    map.iter()
        .filter(|(k, (_, dev))| **k != key && held_by_a_partition(dev))
        .map(|(_, (_, dev))| dev.device_bytes() + if dev.streamed_bytes() > 0 { window } else { 0 })
        .sum()
}

/// How an MSM over an SRS query is split by value.
#[derive(Clone, Copy)]
enum Split<'m> {
    /// Never (h: dense scalars).
    Never,
    /// With its own classification.
    Own,
    /// With a classification shared with another query (b_g1 and b_g2), or none.
    Shared(Option<&'m SplitMaps>),
}

/// Proves on one CUDA device.
pub struct GpuBackend {
    ctx: Arc<DeviceContext>,
    copy_stream: GpuStream,
    compute_stream: GpuStream,
    /// The MSM bit split's small copies (its maps and their prefix counts), apart from the
    /// streams the next partition's `prove_start` uses.
    finish_stream: GpuStream,
    /// Copies of streamed parameters into their windows (from a helper thread, while an MSM
    /// runs on the finishing thread).
    window_stream: GpuStream,
    /// Parameter sets resident on the device, keyed by the host SRS's address (checked with
    /// the weak pointer, so a freed and reused address never matches).
    resident: Mutex<ResidentMap>,
    /// Serialises prove_start's use of the copy and compute streams.
    start_lock: Mutex<()>,
    /// Per-partition device buffers, reused across partitions.
    buffers: DevicePool,
    cpu_fallback: bool,
    /// The budget a CPU fallback takes its transients from (the engine's; none outside one).
    host_memory: Mutex<Option<Arc<dyn HostMemory>>>,
    /// Device failures since the last partition started on the device (see
    /// `ProverBackend::failures_in_a_row`).
    failures: AtomicUsize,
    /// When the device ran our kernels (for utilisation).
    busy: BusyClock,
    /// A kernel failure injected by the GPU checks (`InjectAt as u8`; 0: none).
    injected: AtomicU8,
    /// Whether l, a, b_g1 and b_g2 run as a bit split (see [`GpuBackend::set_msm_split`]).
    msm_split: AtomicBool,
    /// Most "other" scalars a split MSM gathers at a time ([`SPLIT_CHUNK`] unless set).
    split_chunk: AtomicUsize,
    /// MSMs that ran as a bit split since open.
    split_msms: AtomicUsize,
    /// Density maps uploaded since open (see [`GpuBackend::density_uploads`]).
    density_uploads: AtomicUsize,
    /// Partitions on the device and their memory (see [`DeviceAdmission`]).
    admission: Arc<DeviceAdmission>,
    /// Partitions waiting for device memory now.
    waiting: AtomicUsize,
    /// Partitions that had to wait for device memory since open.
    memory_waits: AtomicUsize,
    /// Points a streamed MSM copies at a time ([`STREAM_CHUNK`] unless set).
    stream_chunk: AtomicUsize,
    /// MSMs that streamed their points from the host since open.
    streamed_msms: AtomicUsize,
    /// Most device bytes a parameter set may keep resident (see
    /// [`GpuBackend::set_parameter_limit`]).
    parameter_limit: std::sync::atomic::AtomicU64,
    /// Whether a parameter set keeps fewer points resident when that lets two partitions
    /// fit at once (see [`GpuBackend::set_pair_streaming`]).
    pair_streaming: AtomicBool,
}

/// Where [`GpuBackend::inject_kernel_failure`] makes the next partition fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum InjectAt {
    /// In `prove_start`, before the quotient (the CPU fallback may take over).
    Start = 1,
    /// In `prove_finish`, before the MSMs (the job fails).
    Finish = 2,
    /// In `prove_start`, an illegal address: a sticky error that breaks the device for the
    /// rest of the process (later partitions fail on it, or go to the CPU with the fallback).
    Sticky = 3,
}

/// Work carried from `prove_start` to `prove_finish`.
pub enum GpuPending {
    /// Proving on the device.
    Device(Box<DevicePending>),
    /// The device failed in `prove_start`, or the domain is outside the device's range; the
    /// CPU took over, with the host memory it needs beyond this backend's own transients
    /// taken from the engine's budget until the partition is finished.
    Cpu(Box<CpuPending>, Option<HostGrant>),
}

/// Device buffers and host values of a partition between the phases.
pub struct DevicePending {
    srs: Arc<Srs>,
    resident: Arc<ResidentSrs>,
    /// a/b/c on the device; h's coefficients end up in the first part.
    abc: DeviceMem,
    aux: DeviceMem,
    /// Device addresses of A's and B's gathered scalars: in b's and c's place in `abc`
    /// (free once the quotient has run), or in buffers of their own in `scratch` when longer
    /// than the domain.
    a_scalars: u64,
    b_scalars: u64,
    /// The inputs the queued gathers read (kept until the work is done), and gathered
    /// scalars that did not fit in `abc`.
    scratch: Vec<DeviceMem>,
    /// The density maps the queued gathers read (the resident SRS's; held until the work is
    /// done, in case another circuit's maps replace them meanwhile).
    densities: Arc<ResidentDensities>,
    /// This partition's place on the device, given up once its buffers are back in the pool.
    slot: DeviceSlot,
    h_len: usize,
    aux_len: usize,
    a_len: usize,
    b_len: usize,
    /// Recorded before and after the quotient and gathers (timing events).
    began: GpuEvent,
    done: GpuEvent,
    /// When that work was queued (it starts about then: the stream is otherwise idle).
    queued_at: Instant,
    randomness: Randomness,
    started: Instant,
}

impl Drop for GpuBackend {
    /// Gives back the MSM state the kernels keep on the device (up to about 1.2 GB), as the
    /// resident SRS and buffers are given back; another backend on the device rebuilds its own.
    fn drop(&mut self) {
        if let Ok(_current) = self.ctx.enter() {
            super::resident::release_msm_state(self.ordinal());
        }
    }
}

impl GpuBackend {
    /// Opens device `ordinal`: its primary context and two streams. `cpu_fallback` retries
    /// partitions on the CPU when the device fails before the a/b/c buffers are released.
    pub fn open(ordinal: u32, cpu_fallback: bool) -> Result<Self> {
        let ctx = Arc::new(DeviceContext::open(ordinal)?);
        let _current = ctx.enter()?;
        kernels::check_device(ordinal)?;
        Ok(Self {
            copy_stream: GpuStream::new()?,
            compute_stream: GpuStream::new()?,
            finish_stream: GpuStream::new()?,
            window_stream: GpuStream::new()?,
            buffers: DevicePool::new(&ctx),
            ctx,
            resident: Mutex::new(HashMap::new()),
            start_lock: Mutex::new(()),
            cpu_fallback,
            host_memory: Mutex::new(None),
            injected: AtomicU8::new(0),
            msm_split: AtomicBool::new(msm_split_default()),
            split_chunk: AtomicUsize::new(SPLIT_CHUNK),
            split_msms: AtomicUsize::new(0),
            density_uploads: AtomicUsize::new(0),
            admission: Arc::default(),
            waiting: AtomicUsize::new(0),
            memory_waits: AtomicUsize::new(0),
            stream_chunk: AtomicUsize::new(STREAM_CHUNK),
            streamed_msms: AtomicUsize::new(0),
            parameter_limit: std::sync::atomic::AtomicU64::new(u64::MAX),
            pair_streaming: AtomicBool::new(pair_streaming_default()),
            busy: BusyClock::new(),
            failures: AtomicUsize::new(0),
        })
    }

    /// The host memory a CPU fallback for `assignment` needs beyond what the engine charged
    /// (the CPU prover's transients less the GPU path's), taken from the engine's budget:
    /// None outside an engine. When the budget has no room the fallback is refused and the
    /// partition fails with the device error and why, rather than run over the budget.
    fn fallback_grant(
        &self,
        assignment: &Assignment,
        device_error: &Groth16Error,
    ) -> Result<Option<HostGrant>> {
        let memory = self
            .host_memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let Some(memory) = memory else {
            return Ok(None);
        };
        let shape = assignment.shape();
        let extra = shape
            .cpu_transient_bytes_here()
            .saturating_sub(shape.gpu_transient_bytes());
        match HostGrant::take(&memory, extra) {
            Some(grant) => Ok(Some(grant)),
            None => Err(Groth16Error::Device(format!(
                "GPU {} failed ({device_error}); its CPU fallback needs {extra} bytes of \
                 host memory the engine's budget does not have free now",
                self.ordinal()
            ))),
        }
    }

    /// Milliseconds the device has spent running our kernels since it was opened (overlapping
    /// work counted once): `busy_ms` over wall time is its utilisation.
    pub fn busy_ms(&self) -> f64 {
        self.busy.busy_ms()
    }

    /// Makes the next partition's `at` phase launch a kernel that fails (the GPU checks use
    /// this to show a kernel failure becomes a job error, or a CPU retry, and that the engine
    /// and the device keep working). One shot: later partitions are unaffected.
    pub fn inject_kernel_failure(&self, at: InjectAt) {
        self.injected.store(at as u8, Ordering::SeqCst);
    }

    /// Runs the injected failure armed for `at`, if any: a failing launch, or for
    /// [`InjectAt::Sticky`] an illegal address.
    fn injected_failure(&self, at: InjectAt) -> Result<()> {
        let armed = self
            .injected
            .compare_exchange(at as u8, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        match (armed, at) {
            (false, _) => Ok(()),
            (true, InjectAt::Sticky) => {
                kernels::illegal_access(self.ordinal(), &self.compute_stream)
            }
            (true, _) => kernels::failing_launch(self.ordinal(), &self.compute_stream),
        }
    }

    /// Turns the MSM bit split on or off (on unless `CUZK_GPU_MSM_SPLIT=0`): l, a, b_g1 and
    /// b_g2 then sum the points of scalars equal to 1, skip zeros, and run Pippenger over the
    /// rest only. The checks and benchmarks compare both ways.
    pub fn set_msm_split(&self, on: bool) {
        self.msm_split.store(on, Ordering::SeqCst);
    }

    /// Sets how many "other" scalars a split MSM gathers at a time (at least 1), so checks
    /// can run the chunked path on small circuits.
    pub fn set_msm_split_chunk(&self, chunk: usize) {
        self.split_chunk.store(chunk.max(1), Ordering::SeqCst);
    }

    /// How many MSMs ran as a bit split since the backend opened (dense ones fall back to
    /// plain Pippenger and are not counted).
    pub fn split_msm_count(&self) -> usize {
        self.split_msms.load(Ordering::SeqCst)
    }

    /// How many times since the backend opened a partition's density maps were uploaded: once
    /// per circuit shape and resident SRS, as the maps are kept on the device with the SRS.
    pub fn density_uploads(&self) -> usize {
        self.density_uploads.load(Ordering::SeqCst)
    }

    /// Partitions waiting in `prove_start` for device memory now (see [`DeviceAdmission`]).
    pub fn partitions_waiting_for_memory(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Partitions that waited for device memory since the backend opened.
    pub fn memory_waits(&self) -> usize {
        self.memory_waits.load(Ordering::SeqCst)
    }

    /// Device bytes of the parameters a partition of `srs` needs, with `beside` bytes (the
    /// partition, kept MSM state) next to them: `srs`'s own (resident, or what would be made
    /// resident, with the window its streamed queries pass through) and those other partitions
    /// on the device hold. Idle resident sets are not counted: they are dropped for room.
    fn parameter_bytes_needed(&self, srs: &Arc<Srs>, beside: u64) -> Result<u64> {
        let (_, total) = self.ctx.memory_info()?;
        let key = Arc::as_ptr(srs) as usize;
        let map = self.resident.lock().unwrap_or_else(|p| p.into_inner());
        let others = in_use_bytes(&map, key, self.stream_window_bytes());
        let own = match map.get(&key) {
            Some((weak, dev)) if weak.upgrade().is_some_and(|s| Arc::ptr_eq(&s, srs)) => {
                dev.device_bytes() + self.window_for(dev)
            }
            // Made resident up to the room beside the partition (the rest streamed through a
            // window inside that room).
            _ => ResidentSrs::bytes_for(srs)
                .min(usable_device_bytes(total).saturating_sub(others + beside)),
        };
        Ok(own + others)
    }

    /// Device bytes of the window a set's streamed queries pass through (none when all are
    /// resident).
    fn window_for(&self, dev: &ResidentSrs) -> u64 {
        if dev.streamed_bytes() > 0 {
            self.stream_window_bytes()
        } else {
            0
        }
    }

    /// Device bytes of the two windows a streamed MSM copies chunks through.
    fn stream_window_bytes(&self) -> u64 {
        stream_window_bytes(self.stream_chunk.load(Ordering::SeqCst))
    }

    /// Sets how many points a streamed MSM copies to the device at a time (at least 1), so
    /// checks can run several chunks on small circuits.
    pub fn set_stream_chunk(&self, points: usize) {
        self.stream_chunk.store(points.max(1), Ordering::SeqCst);
    }

    /// Caps the device bytes a parameter set uploaded from now on may keep resident, so checks
    /// can run the streamed MSMs on a device with room for everything.
    pub fn set_parameter_limit(&self, bytes: u64) {
        self.parameter_limit.store(bytes, Ordering::SeqCst);
    }

    /// Turns on or off (on unless `CUZK_GPU_PAIR_STREAMING=0`) keeping a parameter set
    /// uploaded from now on partly on the host when two of its partitions do not fit on the
    /// device beside all of it but do beside all but a few GB, and streaming those pays
    /// ([`streamed_to_hold_two`]): an 80 GB GPU at 32 GiB PoRep then streams about 7 GB a
    /// partition and starts the next partition's copies and NTTs under this one's MSMs, where
    /// it would otherwise prove one partition at a time.
    pub fn set_pair_streaming(&self, on: bool) {
        self.pair_streaming.store(on, Ordering::SeqCst);
    }

    /// How many MSMs streamed their points from the host since the backend opened.
    pub fn streamed_msm_count(&self) -> usize {
        self.streamed_msms.load(Ordering::SeqCst)
    }

    /// Waits until a partition of `bytes` fits on the device beside `fixed()` bytes
    /// (parameters, kept MSM state; asked again whenever a partition finishes, as parameters
    /// held by finished partitions can go) and the partitions already there; a partition alone
    /// on the device is always admitted (if it does not fit, its allocations fail and say so).
    fn admit(&self, bytes: u64, fixed: &dyn Fn() -> u64) -> Result<DeviceSlot> {
        let (_, total) = self.ctx.memory_info()?;
        let usable = usable_device_bytes(total);
        let deadline = Instant::now() + ADMISSION_PATIENCE;
        let admission = &self.admission;
        let mut load = admission.load.lock().unwrap_or_else(|p| p.into_inner());
        let mut waited = false;
        while load.partitions > 0 && fixed() + load.bytes + bytes > usable {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                warn!(
                    "device {}: a partition waited {}s for device memory; trying anyway",
                    self.ordinal(),
                    ADMISSION_PATIENCE.as_secs()
                );
                break;
            }
            if !waited {
                waited = true;
                self.waiting.fetch_add(1, Ordering::SeqCst);
                self.memory_waits.fetch_add(1, Ordering::SeqCst);
                debug!(
                    "device {}: partition of {bytes} bytes waits for device memory ({} \
                     partitions hold {} bytes beside {} of parameters; {usable} usable)",
                    self.ordinal(),
                    load.partitions,
                    load.bytes,
                    fixed()
                );
            }
            load = admission
                .finished
                .wait_timeout(load, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if waited {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        load.partitions += 1;
        load.bytes += bytes;
        Ok(DeviceSlot {
            admission: Arc::clone(admission),
            bytes,
        })
    }

    /// Classifies `n` device scalars for the bit split. None when the split is off or would
    /// not pay: no scalars, or more than half of them neither 0 nor 1 (dense: plain Pippenger
    /// is faster).
    fn split_maps(&self, d_scalars: u64, n: usize) -> Result<Option<SplitMaps>> {
        if n == 0 || !self.msm_split() {
            return Ok(None);
        }
        let words = n.div_ceil(64);
        let ones = self.take(words * 8)?;
        let others = self.take(words * 8)?;
        kernels::split_classify(self.ordinal(), d_scalars, n, ones.at(0), others.at(0))?;
        let mut bits = vec![0u64; words];
        d2h_blocking(
            words_as_bytes_mut(&mut bits),
            others.at(0),
            &self.finish_stream,
        )?;
        let (prefix, count) = prefix_counts(&bits);
        if count > n / 2 {
            self.buffers.give([ones, others]);
            return Ok(None);
        }
        let others_prefix = self.take(words * 4)?;
        h2d(others_prefix.at(0), as_bytes(&prefix), &self.finish_stream)?;
        self.finish_stream.synchronize()?;
        Ok(Some(SplitMaps {
            ones,
            others,
            others_prefix,
            others_count: count,
        }))
    }

    /// Σ scalars[i]·points[i] over `n` device scalars: with `maps`, the sum of the points of
    /// the ones plus Pippenger over the others (gathered in chunks of [`SPLIT_CHUNK`]), else
    /// Pippenger over all of them.
    fn msm<P: DeviceGroup>(
        &self,
        d_points: u64,
        d_scalars: u64,
        n: usize,
        maps: Option<&SplitMaps>,
    ) -> Result<P> {
        let ord = self.ordinal();
        let Some(maps) = maps else {
            return P::msm(ord, d_points, d_scalars, n);
        };
        let mut acc = P::sum_selected(ord, d_points, maps.ones.at(0), n)?;
        let total = maps.others_count;
        if total > 0 {
            let chunk = total.min(self.split_chunk.load(Ordering::SeqCst));
            let scalars = self.take(chunk * SCALAR)?;
            // Sized for G2 points on either curve, so the pool keeps one buffer for both.
            let points = self.take(chunk * Curve::G2.point_bytes())?;
            for lo in (0..total).step_by(chunk) {
                let hi = (lo + chunk).min(total);
                kernels::split_gather(
                    ord,
                    P::CURVE,
                    scalars.at(0),
                    points.at(0),
                    d_scalars,
                    d_points,
                    maps.others.at(0),
                    maps.others_prefix.at(0),
                    n,
                    lo,
                    hi,
                )?;
                acc += P::msm(ord, points.at(0), scalars.at(0), hi - lo)?;
            }
            self.buffers.give([scalars, points]);
        }
        self.split_msms.fetch_add(1, Ordering::SeqCst);
        Ok(acc)
    }

    /// Σ scalars[i]·points[i] over `n` device points and scalars as `prove_finish` runs l and
    /// a: a bit split when it is on and pays, else Pippenger. For the checks and benchmarks.
    pub fn msm_g1_on_device(
        &self,
        d_points: u64,
        d_scalars: u64,
        n: usize,
    ) -> Result<G1Projective> {
        self.msm_maybe_split(d_points, d_scalars, n)
    }

    /// As [`GpuBackend::msm_g1_on_device`] over G2.
    pub fn msm_g2_on_device(
        &self,
        d_points: u64,
        d_scalars: u64,
        n: usize,
    ) -> Result<G2Projective> {
        self.msm_maybe_split(d_points, d_scalars, n)
    }

    /// Σ scalars[i]·points[i] over the first `n` points of one SRS query: over the points
    /// of its resident copy (all, or its leading ones), and over the rest streamed from
    /// `host` (the query's bytes). `Split::Shared` maps cover all `n` scalars, so they are
    /// only for a query resident whole.
    fn query_msm<P: DeviceGroup>(
        &self,
        resident: Option<&DeviceMem>,
        host: &[u8],
        d_scalars: u64,
        n: usize,
        split: Split<'_>,
    ) -> Result<P> {
        let point = P::CURVE.point_bytes();
        let kept = resident.map_or(0, |m| m.bytes() / point).min(n);
        let mut sum = match resident.filter(|_| kept > 0) {
            None => P::identity(),
            Some(points) => match split {
                Split::Never => P::msm(self.ordinal(), points.at(0), d_scalars, kept)?,
                Split::Shared(maps) if kept == n => self.msm(points.at(0), d_scalars, n, maps)?,
                Split::Own | Split::Shared(_) => {
                    self.msm_maybe_split(points.at(0), d_scalars, kept)?
                }
            },
        };
        if kept < n {
            let tail = host.get(kept * point..).unwrap_or_default();
            let scalars = d_scalars + (kept * SCALAR) as u64;
            let split = !matches!(split, Split::Never);
            sum += self.streamed_msm::<P>(tail, scalars, n - kept, split)?;
        }
        Ok(sum)
    }

    /// Σ scalars[i]·points[i] over `n` device scalars and the first `n` points of `host`,
    /// copied to the device a chunk at a time (from the host's pageable copy) through two
    /// windows: while one chunk's MSM runs, a helper thread copies the next chunk into the
    /// other window (on the window stream), so the copies hide behind the MSMs instead of
    /// adding to them. A chunk's MSM starts after its copy has finished, and a window is
    /// written again only after its MSM has returned. Each chunk is split by value when
    /// `split` is set.
    fn streamed_msm<P: DeviceGroup>(
        &self,
        host: &[u8],
        d_scalars: u64,
        n: usize,
        split: bool,
    ) -> Result<P> {
        let point = P::CURVE.point_bytes();
        let host = host.get(..n * point).ok_or_else(|| {
            Groth16Error::InvalidParams(format!(
                "a query of {} points streamed for {n} scalars",
                host.len() / point
            ))
        })?;
        if n == 0 {
            return Ok(P::identity());
        }
        let chunk = self.stream_chunk.load(Ordering::SeqCst);
        // Sized for a chunk of G2 points whatever the curve, so the pool keeps one pair of
        // windows for every streamed MSM (the admission counts two such windows).
        let windows = [
            self.take(chunk * Curve::G2.point_bytes())?,
            self.take(chunk * Curve::G2.point_bytes())?,
        ];
        let copy = |window: &DeviceMem, lo: usize| -> Result<()> {
            let hi = (lo + chunk).min(n);
            h2d_blocking(
                window.at(0),
                &host[lo * point..hi * point],
                &self.window_stream,
            )
        };
        let run = || -> Result<P> {
            let mut sum = P::identity();
            copy(&windows[0], 0)?;
            for (k, lo) in (0..n).step_by(chunk).enumerate() {
                let (this, other) = (&windows[k % 2], &windows[(k + 1) % 2]);
                let next = lo + chunk;
                let hi = next.min(n);
                let scalars = d_scalars + (lo * SCALAR) as u64;
                let (part, copied) = std::thread::scope(|scope| {
                    let copier = (next < n).then(|| {
                        scope.spawn(|| {
                            let _current = self.ctx.enter()?;
                            copy(other, next)
                        })
                    });
                    let part = if split {
                        self.msm_maybe_split(this.at(0), scalars, hi - lo)
                    } else {
                        P::msm(self.ordinal(), this.at(0), scalars, hi - lo)
                    };
                    let copied = copier.map_or(Ok(()), |c| {
                        c.join().unwrap_or_else(|_| {
                            Err(Groth16Error::Device(
                                "the streamed window's copy thread panicked".into(),
                            ))
                        })
                    });
                    (part, copied)
                });
                sum += part?;
                copied?;
            }
            Ok(sum)
        };
        let out = run();
        self.buffers.give(windows);
        if out.is_ok() {
            self.streamed_msms.fetch_add(1, Ordering::SeqCst);
        }
        out
    }

    /// One MSM with its own classification (b_g1 and b_g2 share one instead).
    fn msm_maybe_split<P: DeviceGroup>(
        &self,
        d_points: u64,
        d_scalars: u64,
        n: usize,
    ) -> Result<P> {
        let maps = self.split_maps(d_scalars, n)?;
        let sum = self.msm(d_points, d_scalars, n, maps.as_ref());
        self.give_maps(maps);
        sum
    }

    /// Whether MSMs run as a bit split now.
    pub fn msm_split(&self) -> bool {
        self.msm_split.load(Ordering::SeqCst)
    }

    /// Gives a split's maps back to the pool.
    fn give_maps(&self, maps: Option<SplitMaps>) {
        if let Some(m) = maps {
            self.buffers.give([m.ones, m.others, m.others_prefix]);
        }
    }

    /// A device buffer of at least `bytes` from the pool. When the device is out of memory,
    /// room is made (see [`GpuBackend::make_room`]) and it is tried again: first until
    /// `bytes` are free, then, should the allocation still fail (the free bytes may lie in
    /// pieces), with everything idle gone.
    fn take(&self, bytes: usize) -> Result<DeviceMem> {
        let mut error = match self.buffers.take(bytes) {
            Ok(mem) => return Ok(mem),
            Err(e) => e,
        };
        for needed in [bytes as u64, u64::MAX] {
            debug!("device {}: {error}; making room", self.ordinal());
            let mut map = self.resident.lock().unwrap_or_else(|p| p.into_inner());
            let dropped = self.make_room(&mut map, needed)?;
            drop(map);
            // Freed outside the lock: freeing GBs of parameters (and unlocking their host
            // copies) must not hold up admissions and starts that read the map.
            drop(dropped);
            match self.buffers.take(bytes) {
                Ok(mem) => return Ok(mem),
                Err(e) => error = e,
            }
        }
        Err(error)
    }

    /// Frees device memory nothing uses until `needed` bytes are free (or all of it): first
    /// the pool's idle buffers and the kept MSM state, cheap to allocate again; then takes the
    /// resident parameter sets no unfinished partition holds out of `map` (locked by the
    /// caller) and returns them: their memory is freed when the caller drops them, after it
    /// lets go of the lock where it can. They are uploaded again when next needed. The
    /// admission does not count idle sets, as they go here: another circuit's parameters left
    /// on the device (a WindowPoSt set beside a PoRep set on an H200) must not make a
    /// partition it admitted run out of memory.
    fn make_room(&self, map: &mut ResidentMap, needed: u64) -> Result<Vec<Arc<ResidentSrs>>> {
        self.buffers.clear();
        super::resident::release_msm_state(self.ordinal());
        let (free, _) = self.ctx.memory_info()?;
        if free >= needed {
            return Ok(Vec::new());
        }
        // Only idle sets go: one an unfinished partition holds stays allocated, so it stays in
        // the map, counted by the admission and shared by its next partition.
        let idle: Vec<Arc<ResidentSrs>> = map
            .extract_if(|_, (_, dev)| !held_by_a_partition(dev))
            .map(|(_, (_, dev))| dev)
            .collect();
        if !idle.is_empty() {
            debug!(
                "device {}: dropping {} idle resident parameter sets for room ({free} bytes \
                 were free, {needed} needed)",
                self.ordinal(),
                idle.len()
            );
        }
        Ok(idle)
    }

    /// The device's CUDA ordinal.
    pub fn ordinal(&self) -> u32 {
        self.ctx.ordinal
    }

    /// Allocates device memory on this backend's device (checks and benchmarks).
    pub fn device_alloc(&self, bytes: usize) -> Result<DeviceMem> {
        DeviceMem::alloc(&self.ctx, bytes)
    }

    /// The stream host-to-device copies run on.
    pub fn copy_stream(&self) -> &GpuStream {
        &self.copy_stream
    }

    /// The stream the NTTs and gathers run on.
    pub fn compute_stream(&self) -> &GpuStream {
        &self.compute_stream
    }

    /// Makes this device's context current on the calling thread until the guard drops
    /// (checks and benchmarks that call CUDA directly).
    pub fn enter(&self) -> Result<super::device::CurrentGuard> {
        self.ctx.enter()
    }

    /// Free and total device memory in bytes (`cuMemGetInfo`).
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        self.ctx.memory_info()
    }

    /// `capacity` scalars of pinned host memory (checks and benchmarks).
    pub fn pinned_alloc(&self, capacity: usize) -> Result<PinnedBlock> {
        PinnedBlock::alloc(&self.ctx, capacity)
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.ctx.name
    }

    /// The device copy of `srs`, uploading it on first use: every query when they fit with
    /// `beside` bytes (a partition, kept MSM state) next to them and the sets other partitions
    /// hold, else the largest queries that fit beside the window the others are streamed
    /// through. Idle resident sets are dropped first when the device lacks room; what still
    /// does not fit is an out-of-memory error.
    pub fn resident(&self, srs: &Arc<Srs>, beside: u64) -> Result<Arc<ResidentSrs>> {
        let _current = self.ctx.enter()?;
        self.resident_with(srs, beside, None)
    }

    /// [`GpuBackend::resident`], keeping fewer of the parameters resident when that lets two
    /// partitions of `pair` fit on the device at once and pair streaming is on.
    fn resident_with(
        &self,
        srs: &Arc<Srs>,
        beside: u64,
        pair: Option<PairNeeds>,
    ) -> Result<Arc<ResidentSrs>> {
        let key = Arc::as_ptr(srs) as usize;
        let mut map = self.resident.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (weak, _)| weak.strong_count() > 0);
        if let Some((weak, dev)) = map.get(&key) {
            if weak.upgrade().is_some_and(|s| Arc::ptr_eq(&s, srs)) {
                return Ok(Arc::clone(dev));
            }
        }
        let (free, total) = self.ctx.memory_info()?;
        let window = self.stream_window_bytes();
        let usable = usable_device_bytes(total);
        let in_use = in_use_bytes(&map, key, window);
        let room = usable
            .saturating_sub(in_use + beside)
            .min(self.parameter_limit.load(Ordering::SeqCst));
        let whole = ResidentSrs::bytes_for(srs);
        let mut allowance = if whole <= room {
            whole
        } else {
            room.saturating_sub(window)
        };
        let for_two = pair
            .filter(|_| self.pair_streaming.load(Ordering::SeqCst))
            .and_then(|pair| pair.kept_to_hold_two(whole, usable, in_use, window));
        if let Some(kept) = for_two {
            log::info!(
                "GPU {}: keeping {kept} of {whole} parameter bytes resident and streaming the \
                 rest from page-locked host memory at each MSM, so that two partitions fit at \
                 once (CUZK_GPU_PAIR_STREAMING=0 keeps them all, one partition at a time)",
                self.ordinal()
            );
            allowance = allowance.min(kept);
        }
        if free < allowance + beside {
            // Freed here, under the lock: the upload below needs the memory.
            drop(self.make_room(&mut map, allowance + beside)?);
        }
        let t = Instant::now();
        let upload = || ResidentSrs::upload(&self.ctx, srs, &self.compute_stream, allowance);
        let dev = Arc::new(match upload() {
            Ok(dev) => dev,
            Err(e) => {
                debug!(
                    "device {}: uploading parameters: {e}; making room",
                    self.ordinal()
                );
                drop(self.make_room(&mut map, u64::MAX)?);
                upload()?
            }
        });
        debug!(
            "GPU_SRS_UPLOAD device={} bytes={} streamed_bytes={} locked_bytes={} ms={:.1}",
            self.ordinal(),
            dev.device_bytes(),
            dev.streamed_bytes(),
            dev.locked_streamed_bytes(),
            t.elapsed().as_secs_f64() * 1e3
        );
        map.insert(key, (Arc::downgrade(srs), Arc::clone(&dev)));
        Ok(dev)
    }

    /// Copies one of a buffer set's vectors (a, b, c, aux): from pinned memory as DMA on the
    /// copy stream (synchronised before the set is released), from pageable memory staged onto
    /// the compute stream, ahead of the kernels that read it.
    fn upload_pooled(&self, dst: u64, v: &ScalarBuf) -> Result<()> {
        let stream = if v.is_pinned() {
            &self.copy_stream
        } else {
            &self.compute_stream
        };
        h2d(dst, as_bytes(v), stream)
    }

    fn start_on_device(
        &self,
        asg: &Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<DevicePending> {
        let started = Instant::now();
        let _current = self.ctx.enter()?;
        let domain = Domain::for_size(asg.num_constraints())?;
        let m = domain.size();
        let n = asg.num_constraints();
        let ni = asg.inputs.len();
        let a_len = ni + asg.a_aux_density.count_ones();
        let b_in = asg.b_input_density.count_ones();
        let b_len = b_in + asg.b_aux_density.count_ones();
        let bytes = partition_device_bytes(
            m,
            asg.aux.len(),
            ni,
            a_len,
            b_len,
            self.split_chunk.load(Ordering::SeqCst),
        );
        let largest_msm = m.max(asg.aux.len()).max(a_len).max(b_len);
        let msm_state = msm_state_bytes(largest_msm);
        let fixed = || {
            self.parameter_bytes_needed(srs, bytes + msm_state)
                .unwrap_or(0)
                .saturating_add(msm_state)
        };
        // Admitted before the streams are taken: a partition waiting for device memory must
        // not hold up a smaller one that fits (a WinningPoSt beside two PoRep partitions, in
        // the headroom kept for it; the engine starts it on a worker kept for CRITICAL work).
        let slot = self.admit(bytes, &fixed)?;
        let _streams = self.start_lock.lock().unwrap_or_else(|p| p.into_inner());
        let pair = PairNeeds {
            partition: bytes,
            msm_state,
            maps: density_map_bytes(asg.aux.len(), ni),
            upload: upload_bytes(m, asg.aux.len(), ni),
        };
        let resident = self.resident_with(srs, bytes + msm_state, Some(pair))?;

        let abc = self.take(3 * m * SCALAR)?;
        let (da, db, dc) = (abc.at(0), abc.at(m * SCALAR), abc.at(2 * m * SCALAR));
        let t = Instant::now();
        let queued = self
            .upload_pooled(da, &asg.abc.a)
            .and_then(|()| self.upload_pooled(db, &asg.abc.b))
            .and_then(|()| self.upload_pooled(dc, &asg.abc.c));
        // Always wait for the DMA, even after a failed copy: the pinned blocks go back to the
        // pool (or to the CPU fallback) when this returns.
        let copied = self.copy_stream.synchronize();
        queued?;
        copied?;
        let h2d_ms = t.elapsed().as_secs_f64() * 1e3;

        // aux, from the same set, timed on its own so its rate is reported apart.
        let t = Instant::now();
        let aux = self.take(asg.aux.len() * SCALAR)?;
        let queued = self.upload_pooled(aux.at(0), &asg.aux);
        let copied = self.copy_stream.synchronize();
        queued?;
        copied?;
        let aux_ms = t.elapsed().as_secs_f64() * 1e3;

        // The inputs (a few scalars: from pageable memory, staged while the host waits) and
        // the density maps, which are the circuit's and kept with the resident SRS: uploaded
        // for the first partition of a shape only (about 1.5% of aux's bytes at 32 GiB).
        let t = Instant::now();
        let inputs = self.take(ni * SCALAR)?;
        h2d(inputs.at(0), as_bytes(&asg.inputs), &self.compute_stream)?;
        let mut scratch = vec![inputs];
        // The gathers run after the quotient on the same stream, and the quotient leaves h in
        // a's place and needs b and c no more: A's and B's scalars go there when they fit
        // (at 32 GiB PoRep that saves 8.3 GB a partition).
        let mut place = |len: usize, freed: u64| -> Result<u64> {
            if len <= m {
                return Ok(freed);
            }
            let own = self.take(len * SCALAR)?;
            let at = own.at(0);
            scratch.push(own);
            Ok(at)
        };
        let a_scalars = place(a_len, db)?;
        let b_scalars = place(b_len, dc)?;
        let inputs = scratch[0].at(0);
        let maps = [&asg.a_aux_density, &asg.b_input_density, &asg.b_aux_density];
        let (densities, uploaded) = resident.densities(&self.ctx, maps, &self.compute_stream)?;
        if uploaded {
            self.density_uploads.fetch_add(1, Ordering::SeqCst);
        }
        let rest_ms = t.elapsed().as_secs_f64() * 1e3;
        // Per 64-bit word of a map, the word and its 4-byte prefix count.
        let map_bytes: usize = maps.iter().map(|d| d.words().len() * 12).sum();
        let rest_bytes = ni * SCALAR + if uploaded { map_bytes } else { 0 };
        let [(a_bits, a_pre), (bi_bits, bi_pre), (ba_bits, ba_pre)] = &densities.maps;

        let z = Scalar::MULTIPLICATIVE_GENERATOR.pow_vartime([m as u64]) - Scalar::ONE;
        let z_inv = Option::<Scalar>::from(z.invert())
            .ok_or_else(|| Groth16Error::InvalidParams("z vanishes on the coset".into()))?;
        let s = &self.compute_stream;
        let ord = self.ordinal();
        self.injected_failure(InjectAt::Start)?;
        self.injected_failure(InjectAt::Sticky)?;
        let (began, done) = (GpuEvent::new()?, GpuEvent::new()?);
        let queued_at = Instant::now();
        began.record(s)?;
        kernels::quotient(ord, s, da, db, dc, n, domain_log(m), &z_inv)?;
        // A's scalars: every input, then the aux variables in A. B's: the inputs in B, then
        // the aux variables in B.
        d2d(a_scalars, inputs, ni * SCALAR, s)?;
        let aux_n = asg.aux.len();
        kernels::gather(
            ord,
            s,
            a_scalars + (ni * SCALAR) as u64,
            aux.at(0),
            a_bits.at(0),
            a_pre.at(0),
            aux_n,
        )?;
        kernels::gather(ord, s, b_scalars, inputs, bi_bits.at(0), bi_pre.at(0), ni)?;
        kernels::gather(
            ord,
            s,
            b_scalars + (b_in * SCALAR) as u64,
            aux.at(0),
            ba_bits.at(0),
            ba_pre.at(0),
            aux_n,
        )?;
        done.record(s)?;
        let gbps = |bytes: usize, ms: f64| bytes as f64 / 1e6 / ms.max(1e-3);
        debug!(
            "GPU_TIMING phase=start device={ord} m={m} pinned={} h2d_ms={h2d_ms:.1} \
             h2d_gbps={:.2} aux_pinned={} aux_h2d_ms={aux_ms:.1} aux_gbps={:.2} \
             inputs_density_pinned=false densities_uploaded={uploaded} \
             inputs_density_h2d_ms={rest_ms:.1} inputs_density_gbps={:.2} start_ms={:.1}",
            asg.abc.is_pinned(),
            gbps(3 * n * SCALAR, h2d_ms),
            asg.aux.is_pinned(),
            gbps(aux_n * SCALAR, aux_ms),
            gbps(rest_bytes, rest_ms),
            started.elapsed().as_secs_f64() * 1e3
        );
        Ok(DevicePending {
            srs: Arc::clone(srs),
            resident,
            abc,
            aux,
            a_scalars,
            b_scalars,
            scratch,
            densities,
            slot,
            h_len: m - 1,
            aux_len: aux_n,
            a_len,
            b_len,
            began,
            done,
            queued_at,
            randomness,
            started,
        })
    }

    /// Runs a blocking device call, writing its milliseconds to `ms` and adding it to the
    /// busy clock.
    fn timed<T>(&self, ms: &mut f64, call: impl FnOnce() -> Result<T>) -> Result<T> {
        let t = Instant::now();
        let out = call()?;
        *ms = t.elapsed().as_secs_f64() * 1e3;
        self.busy.add(t, *ms);
        Ok(out)
    }

    fn finish_on_device(&self, p: DevicePending) -> Result<Proof> {
        let _current = self.ctx.enter()?;
        p.done.synchronize()?;
        // A timing failure only costs the utilisation figure, never the proof.
        let quotient_ms = p.done.ms_since(&p.began).map_or_else(
            |e| {
                warn!("device {}: quotient timing: {e}", self.ordinal());
                0.0
            },
            f64::from,
        );
        self.busy.add(p.queued_at, quotient_ms);
        self.injected_failure(InjectAt::Finish)?;
        let ord = self.ordinal();
        let r = &p.resident;
        let (h, l, a, b1, b2, msm_ms) = {
            let _one_msm_at_a_time = msm_lock(ord).lock().unwrap_or_else(|e| e.into_inner());
            let mut ms = [0f64; 5];
            let srs = &p.srs;
            let h = self.timed(&mut ms[0], || {
                self.query_msm::<G1Projective>(
                    r.h.as_ref(),
                    as_bytes(&srs.h),
                    p.abc.at(0),
                    p.h_len,
                    Split::Never,
                )
            })?;
            let l = self.timed(&mut ms[1], || {
                self.query_msm::<G1Projective>(
                    r.l.as_ref(),
                    as_bytes(&srs.l),
                    p.aux.at(0),
                    p.aux_len,
                    Split::Own,
                )
            })?;
            let a = self.timed(&mut ms[2], || {
                self.query_msm::<G1Projective>(
                    r.a.as_ref(),
                    as_bytes(&srs.a),
                    p.a_scalars,
                    p.a_len,
                    Split::Own,
                )
            })?;
            // b_g1 and b_g2 share their scalars, so they share one classification (when both
            // are resident whole; a streamed query or part classifies each chunk).
            let whole = |mem: Option<&DeviceMem>, point: usize| {
                mem.is_some_and(|m| m.bytes() >= p.b_len * point)
            };
            let shared = whole(r.b_g1.as_ref(), Curve::G1.point_bytes())
                && whole(r.b_g2.as_ref(), Curve::G2.point_bytes());
            let b_maps = if shared {
                self.split_maps(p.b_scalars, p.b_len)?
            } else {
                None
            };
            let b_split = if shared {
                Split::Shared(b_maps.as_ref())
            } else {
                Split::Own
            };
            let b1 = self.timed(&mut ms[3], || {
                self.query_msm::<G1Projective>(
                    r.b_g1.as_ref(),
                    as_bytes(&srs.b_g1),
                    p.b_scalars,
                    p.b_len,
                    b_split,
                )
            });
            let b2 = b1.and_then(|b1| {
                self.timed(&mut ms[4], || {
                    self.query_msm::<G2Projective>(
                        r.b_g2.as_ref(),
                        as_bytes(&srs.b_g2),
                        p.b_scalars,
                        p.b_len,
                        b_split,
                    )
                })
                .map(|b2| (b1, b2))
            });
            self.give_maps(b_maps);
            let (b1, b2) = b2?;
            (h, l, a, b1, b2, ms)
        };
        let [h_ms, l_ms, a_ms, b1_ms, b2_ms] = msm_ms;
        debug!(
            "GPU_TIMING phase=finish device={ord} quotient_ms={quotient_ms:.2} msm_h_ms={h_ms:.2} \
             msm_l_ms={l_ms:.2} msm_a_ms={a_ms:.2} msm_b_g1_ms={b1_ms:.2} msm_b_g2_ms={b2_ms:.2} \
             msm_split={} streamed_bytes={} total_ms={:.1}",
            self.msm_split.load(Ordering::SeqCst),
            r.streamed_bytes(),
            p.started.elapsed().as_secs_f64() * 1e3
        );
        let proof = assemble(&p.srs, p.randomness, a, b1, b2, h, l);
        let DevicePending {
            abc,
            aux,
            scratch,
            densities,
            slot,
            began,
            done,
            ..
        } = p;
        self.buffers.give([abc, aux].into_iter().chain(scratch));
        drop(slot);
        // Destroyed while the context is still current (the maps too, if another circuit's
        // replaced them meanwhile).
        drop((began, done, densities));
        Ok(proof)
    }
}

fn domain_log(m: usize) -> u32 {
    m.trailing_zeros()
}

impl ProverBackend for GpuBackend {
    type Pending = GpuPending;

    /// `cuda:N`, or `emulated-cuda:N` on the host emulation (feature `gpu-emulator`).
    fn name(&self) -> String {
        let kind = if crate::gpu::EMULATED {
            "emulated-cuda"
        } else {
            "cuda"
        };
        format!("{kind}:{}", self.ordinal())
    }

    fn prove_start(
        &self,
        assignment: Assignment,
        srs: &Arc<Srs>,
        randomness: Randomness,
    ) -> Result<Started<GpuPending>> {
        assignment.check_shape()?;
        let domain = Domain::for_size(assignment.num_constraints())?;
        check_srs_fits(&assignment, srs, &domain)?;
        let lg = domain_log(domain.size());
        if !DEVICE_LG.contains(&lg) {
            debug!("domain 2^{lg} is proved on the CPU (device range 2^10..=2^28)");
            let started = CpuBackend.prove_start(assignment, srs, randomness)?;
            return Ok(Started {
                pending: GpuPending::Cpu(Box::new(started.pending), None),
                released: started.released,
            });
        }
        let on_device = self.start_on_device(&assignment, srs, randomness);
        match &on_device {
            Ok(_) => self.failures.store(0, Ordering::SeqCst),
            Err(_) => {
                self.failures.fetch_add(1, Ordering::SeqCst);
            }
        }
        match on_device {
            Ok(pending) => {
                let mut assignment = assignment;
                let mut released = assignment.take_buffers();
                released.clear();
                Ok(Started {
                    pending: GpuPending::Device(Box::new(pending)),
                    released,
                })
            }
            Err(e) if self.cpu_fallback => {
                let grant = self.fallback_grant(&assignment, &e)?;
                warn!(
                    "GPU {} failed ({e}); proving this partition on the CPU",
                    self.ordinal()
                );
                let started = CpuBackend.prove_start(assignment, srs, randomness)?;
                Ok(Started {
                    pending: GpuPending::Cpu(Box::new(started.pending), grant),
                    released: started.released,
                })
            }
            Err(e) => Err(e),
        }
    }

    fn prove_finish(&self, pending: GpuPending) -> Result<Proof> {
        match pending {
            GpuPending::Device(p) => self.finish_on_device(*p).inspect_err(|_| {
                self.failures.fetch_add(1, Ordering::SeqCst);
            }),
            GpuPending::Cpu(p, _grant) => CpuBackend.prove_finish(*p),
        }
    }

    fn device_busy_ms(&self) -> Vec<(String, f64)> {
        vec![(ProverBackend::name(self), self.busy_ms())]
    }

    fn failures_in_a_row(&self) -> usize {
        self.failures.load(Ordering::SeqCst)
    }

    /// The GPU path's own host figure ([`CircuitShape::gpu_transient_bytes`]) for domains the
    /// device proves, the CPU prover's for the rest. A CPU fallback takes the difference
    /// from the engine's budget when it happens (see [`GpuBackend::fallback_grant`]).
    fn transient_bytes(&self, shape: &CircuitShape) -> u64 {
        if DEVICE_LG.contains(&domain_log(shape.domain())) {
            shape.gpu_transient_bytes()
        } else {
            shape.cpu_transient_bytes_here()
        }
    }

    fn set_host_memory(&self, memory: Arc<dyn HostMemory>) {
        *self.host_memory.lock().unwrap_or_else(|p| p.into_inner()) = Some(memory);
    }

    fn prefers_pinned(&self) -> bool {
        true
    }

    fn alloc_buffers(&self, constraints: usize) -> BufferSet {
        if constraints == 0 {
            return BufferSet::default();
        }
        let pinned = || -> Result<ScalarBuf> {
            let block = PinnedBlock::alloc(&self.ctx, constraints)?;
            Ok(ScalarBuf::in_block(Box::new(block)))
        };
        match (pinned(), pinned(), pinned(), pinned()) {
            (Ok(a), Ok(b), Ok(c), Ok(aux)) => BufferSet {
                abc: AbcBuffers { a, b, c },
                aux,
            },
            _ => {
                warn!("cannot pin a {constraints}-constraint buffer set; using pageable memory");
                BufferSet::with_capacity(constraints)
            }
        }
    }
}
