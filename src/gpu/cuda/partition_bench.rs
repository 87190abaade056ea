//! `cuzk gpu bench --part partition`: one partition the size of a 32 GiB PoRep partition
//! (130M constraints, domain 2^27, 47 GB of parameters) through the GPU backend's `prove_start`
//! and `prove_finish`, the way the engine drives it (pinned buffer set, parameters made
//! resident, or streamed where the device lacks room).
//!
//! The parameters and the witness are synthetic: real 32 GiB parameters are 47 GB to fetch and
//! a real partition takes minutes of synthesis, neither of which fits a short GPU run. The
//! points are tiled multiples of the generators, the densities are the published 32 GiB
//! PoRep ones ([`POREP_32G_DENSITIES`]), aux has the mix of zeros, ones and other values the
//! 2 KiB PoRep partition has (51% / 47% / 2%, docs/pce.md) so the bit split does the work it
//! does on a real partition, and a, b and c are dense. The proof is therefore not valid and is
//! not verified: this measures time and memory. That the same code proves correctly is what
//! `cuzk gpu check` shows, byte for byte, on real circuits.

use std::sync::Arc;
use std::time::Instant;

use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::backend::GpuBackend;
use super::check::{first_device, median};
use super::kernel_check::{distinct_points, print_memory};
use crate::gpu::footprint::{gpu_fit, stream_window_bytes, STREAM_CHUNK};
use crate::groth16::{Assignment, BufferSet, Density, ProverBackend, Randomness, Srs};
use crate::proofs::production::{figures, QueryDensities, POREP_32G_DENSITIES};

type Res<T> = anyhow::Result<T>;

/// The production circuit the synthetic partition stands for.
const CIRCUIT: &str = "porep-32g";

/// Distinct points the queries are tiled from.
const DISTINCT_POINTS: usize = 1 << 12;

/// The shape of the synthetic partition: the production circuit scaled to a domain of 2^`lg`.
#[derive(Clone, Copy, Debug)]
struct SyntheticShape {
    lg: u32,
    constraints: usize,
    inputs: usize,
    aux: usize,
    densities: QueryDensities,
}

impl SyntheticShape {
    /// The 32 GiB PoRep partition at 2^`lg` (27: its own size; less: every count scaled by
    /// the same factor, the inputs kept).
    fn porep_32g(lg: u32) -> Res<Self> {
        let full = figures(CIRCUIT).expect("the production table has porep-32g");
        let full_lg = full.shape.domain().trailing_zeros();
        anyhow::ensure!(
            (10..=full_lg).contains(&lg),
            "--partition-lg must be 10..={full_lg} (2^{full_lg} is the 32 GiB PoRep partition)"
        );
        let shift = full_lg - lg;
        let d = POREP_32G_DENSITIES;
        Ok(Self {
            lg,
            constraints: full.shape.constraints >> shift,
            inputs: full.shape.inputs,
            aux: full.shape.aux >> shift,
            densities: QueryDensities {
                a_aux: d.a_aux >> shift,
                b_input: d.b_input,
                b_aux: d.b_aux >> shift,
            },
        })
    }

    fn domain(&self) -> usize {
        1 << self.lg
    }

    fn b_count(&self) -> usize {
        self.densities.b_input + self.densities.b_aux
    }

    /// Host bytes of the parameters (the five queries and the verifying key's ic).
    fn srs_bytes(&self) -> u64 {
        let g1 = self.domain() - 1 + self.aux + self.inputs + self.densities.a_aux + self.b_count();
        (96 * (g1 + self.inputs) + 192 * self.b_count()) as u64
    }

    /// Host bytes of one buffer set (a, b, c and aux, each the domain).
    fn set_bytes(&self) -> u64 {
        4 * 32 * self.domain() as u64
    }
}

/// Runs the benchmark: the largest shape at or below 2^`lg` whose parameters and buffer set
/// fit the host's available memory, proved `runs` times (after an untimed warm-up that uploads
/// the parameters) with every parameter the device holds resident; then, where `as_gib` is
/// not 0, on a backend of its own that keeps only what a GPU of `as_gib` GiB keeps of a 32
/// GiB PoRep's parameters (the same fraction at smaller shapes) and streams the rest from
/// page-locked host memory. Prints `BENCH gpu/partition-n<lg>` and
/// `BENCH gpu/partition-n<lg>-as-<as_gib>gib` (base: the resident figure).
pub fn bench_partition(lg: u32, runs: usize, as_gib: u64) -> Res<()> {
    let runs = runs.max(1);
    let mut shape = SyntheticShape::porep_32g(lg)?;
    if let Some(available) = host_available_bytes() {
        // A tenth spare for the process's own needs (densities, inputs, the CUDA runtime).
        while shape.lg > 10 && (shape.srs_bytes() + shape.set_bytes()) * 11 / 10 > available {
            shape = SyntheticShape::porep_32g(shape.lg - 1)?;
        }
        if shape.lg < lg {
            println!(
                "NOTE partition bench: the host has {available} bytes available, so the \
                 partition is 2^{} instead of 2^{lg}",
                shape.lg
            );
        }
    }
    println!(
        "NOTE partition bench: {CIRCUIT} at 2^{}: {} constraints, {} inputs, {} aux, densities \
         {}/{}/{}, {} parameter bytes (synthetic; the proofs are not valid and not verified)",
        shape.lg,
        shape.constraints,
        shape.inputs,
        shape.aux,
        shape.densities.a_aux,
        shape.densities.b_input,
        shape.densities.b_aux,
        shape.srs_bytes()
    );
    let t = Instant::now();
    let srs = Arc::new(synthetic_srs(&shape));
    let prepare_ms = t.elapsed().as_secs_f64() * 1e3;
    let table = figures(CIRCUIT)
        .expect("the production table has porep-32g")
        .gpu;

    let gpu = first_device()?;
    // All parameters resident whatever the device: the baseline. (An 80 GB GPU would
    // otherwise stream some of them to hold two partitions; that is the pair run below.)
    gpu.set_pair_streaming(false);
    let (resident, set) = timed_partitions(&gpu, &shape, &srs, runs, "resident", None)?;
    println!(
        "BENCH gpu/partition-n{} ours={:.1} base=NA speedup=NA runs={runs} {} \
         prepare_ms={prepare_ms:.0} parameter_bytes={} table_ms={} (table: start + finish \
         that cuzk plan assumes for {CIRCUIT}; the GPU_TIMING lines split the device work by \
         kernel)",
        shape.lg,
        resident.total_ms,
        resident.fields,
        shape.srs_bytes(),
        table.start_ms + table.finish_ms
    );
    // Pinned buffer sets (17 GB each at 2^27) are made once and handed from run to run.
    let mut spare = vec![set];
    // Two partitions beside every parameter, on the same backend, where the device holds them
    // (an H200); an 80 GB GPU would prove them one at a time, which gpu/partition-n<lg> is.
    if holds_two_beside_every_parameter(&gpu, &shape)? {
        spare = pipelined_pair(&gpu, &shape, &srs, resident.total_ms, "pipelined", spare)?;
    } else {
        println!(
            "NOTE partition bench: this device holds one partition at a time beside every \
             parameter (gpu/partition-n{} is that figure): no all-resident pair",
            shape.lg
        );
    }
    drop(gpu);
    let mut spare = pipelined_as_80gib(&shape, &srs, resident.total_ms, spare)?;
    if as_gib == 0 {
        return Ok(());
    }
    let Some(keep) = kept_parameter_bytes(&shape, as_gib) else {
        println!(
            "NOTE partition bench: a {as_gib} GiB GPU holds no 32 GiB PoRep partition, or \
             streams none of its parameters: no streamed run"
        );
        return Ok(());
    };
    let gpu = first_device()?;
    // Chunks scaled with the shape, so a small one streams in as many chunks as 2^27 does.
    let chunk = scaled_stream_chunk(&shape);
    gpu.set_stream_chunk(chunk);
    gpu.set_parameter_limit(keep + stream_window_bytes(chunk));
    let (streamed, _) = timed_partitions(
        &gpu,
        &shape,
        &srs,
        runs,
        &format!("as {as_gib} GiB"),
        spare.pop(),
    )?;
    println!(
        "BENCH gpu/partition-n{}-as-{as_gib}gib ours={:.1} base={:.1} speedup={:.2} runs={runs} \
         {} (parameters kept as on a {as_gib} GiB GPU, the rest streamed; base: all resident)",
        shape.lg,
        streamed.total_ms,
        resident.total_ms,
        resident.total_ms / streamed.total_ms,
        streamed.fields
    );
    Ok(())
}

/// Stream chunks scaled with the shape, so a small one streams in as many chunks as 2^27 does.
fn scaled_stream_chunk(shape: &SyntheticShape) -> usize {
    (STREAM_CHUNK >> (27 - shape.lg)).max(1)
}

/// Two partitions pipelined on a backend of its own that keeps only what an 80 GiB GPU keeps
/// of the parameters to hold two 32 GiB PoRep partitions at once (the same fraction at smaller
/// shapes; see `footprint::streamed_to_hold_two`) and streams the rest from page-locked
/// memory. Prints `BENCH gpu/partition-n<lg>-as-80gib-pipelined` against `serial_ms` (all
/// resident, one partition alone): above 1 the pair streaming an 80 GB GPU does by default
/// pays; below, `CUZK_GPU_PAIR_STREAMING=0` (one partition at a time) is faster.
fn pipelined_as_80gib(
    shape: &SyntheticShape,
    srs: &Arc<Srs>,
    serial_ms: f64,
    mut spare: Vec<BufferSet>,
) -> Res<Vec<BufferSet>> {
    let Some(keep) = kept_parameter_bytes(shape, 80) else {
        println!("NOTE partition bench: an 80 GiB GPU streams nothing to hold two partitions");
        return Ok(spare);
    };
    let gpu = first_device()?;
    let chunk = scaled_stream_chunk(shape);
    gpu.set_stream_chunk(chunk);
    gpu.set_parameter_limit(keep + stream_window_bytes(chunk));
    let set = warm_up(&gpu, shape, srs, spare.pop())?;
    spare.push(set);
    pipelined_pair(&gpu, shape, srs, serial_ms, "as-80gib-pipelined", spare)
}

/// Proves one untimed partition on `gpu` from `set` (or a new one), which uploads the
/// parameters; returns the set.
fn warm_up(
    gpu: &GpuBackend,
    shape: &SyntheticShape,
    srs: &Arc<Srs>,
    set: Option<BufferSet>,
) -> Res<BufferSet> {
    let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(9);
    let set = set.unwrap_or_else(|| gpu.alloc_buffers(shape.domain()));
    let assignment = synthetic_assignment(shape, set, 30)?;
    let started = gpu.prove_start(assignment, srs, Randomness::random(&mut rng))?;
    gpu.prove_finish(started.pending)?;
    Ok(started.released)
}

/// Whether `gpu` holds two partitions of `shape` beside all of its parameters (the footprint's
/// rule for the device's memory).
fn holds_two_beside_every_parameter(gpu: &GpuBackend, shape: &SyntheticShape) -> Res<bool> {
    let (_, total) = gpu.memory_info()?;
    let fit = gpu_fit(
        total,
        shape.srs_bytes(),
        shape.domain(),
        shape.aux,
        shape.inputs,
    );
    Ok(fit.at_once == 2 && fit.streamed_bytes == 0)
}

/// Two partitions as the engine pipelines them, on `gpu` with the parameters already there:
/// one thread starts them in turn, another finishes each as its start returns, so the second
/// one's copies and NTTs can overlap the first one's MSMs where the device holds both. Both
/// buffer sets (`spare` ones first, new ones for the rest) are filled before the clock starts,
/// and handed back. Prints `BENCH gpu/partition-n<lg>-<name>` (per partition, against
/// `serial_ms`, one partition's start + finish alone), or a NOTE when the host lacks memory
/// for the sets it must make. Whether the overlap pays decides whether an 80 GB
/// GPU should stream some parameters to hold two 32 GiB partitions at once (docs/gpu.md).
fn pipelined_pair(
    gpu: &GpuBackend,
    shape: &SyntheticShape,
    srs: &Arc<Srs>,
    serial_ms: f64,
    name: &str,
    mut spare: Vec<BufferSet>,
) -> Res<Vec<BufferSet>> {
    let missing = 2usize.saturating_sub(spare.len()) as u64;
    let need = shape.set_bytes() * missing * 11 / 10;
    if host_available_bytes().is_some_and(|available| available < need) {
        println!(
            "NOTE partition bench: no memory for {missing} more buffer sets ({need} bytes): \
             no {name} run"
        );
        return Ok(spare);
    }
    let mut set = || {
        spare
            .pop()
            .unwrap_or_else(|| gpu.alloc_buffers(shape.domain()))
    };
    let first = synthetic_assignment(shape, set(), 10)?;
    let second = synthetic_assignment(shape, set(), 11)?;
    let assignments = [first, second];
    let waits_before = gpu.memory_waits();
    let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(11);
    let randomness = [0, 1].map(|_| Randomness::random(&mut rng));
    // The sets `prove_start` hands back are kept (and handed back): freeing pinned memory
    // takes time the engine (whose pool keeps them) never spends.
    let mut released = Vec::new();
    let t = Instant::now();
    let finished = std::thread::scope(|scope| -> Res<usize> {
        let (send, receive) = std::sync::mpsc::channel();
        let finisher = scope.spawn(move || -> Res<usize> {
            let mut done = 0;
            for pending in receive {
                gpu.prove_finish(pending)?;
                done += 1;
            }
            Ok(done)
        });
        for (assignment, r) in assignments.into_iter().zip(randomness) {
            let started = gpu.prove_start(assignment, srs, r)?;
            released.push(started.released);
            if send.send(started.pending).is_err() {
                break;
            }
        }
        drop(send);
        finisher
            .join()
            .map_err(|_| anyhow::anyhow!("the finishing thread panicked"))?
    })?;
    let per_partition = t.elapsed().as_secs_f64() * 1e3 / 2.0;
    anyhow::ensure!(
        finished == 2,
        "{finished} of 2 pipelined partitions finished"
    );
    let resident = gpu.resident(srs, 0)?;
    println!(
        "BENCH gpu/partition-n{}-{name} ours={per_partition:.1} base={serial_ms:.1} \
         speedup={:.2} runs=1 partitions=2 memory_waits={} streamed_bytes={} locked_bytes={} \
         (per partition: two started and finished on two threads; base: one alone, all \
         parameters resident)",
        shape.lg,
        serial_ms / per_partition,
        gpu.memory_waits() - waits_before,
        resident.streamed_bytes(),
        resident.locked_streamed_bytes()
    );
    released.extend(spare);
    Ok(released)
}

/// Bytes of `shape`'s parameters a GPU of `gib` GiB keeps resident beside its partitions (one,
/// or two where it streams some parameters to hold two: 80 GiB), as the same fraction of them
/// it keeps of a 32 GiB PoRep's; None when it holds no partition or streams nothing.
fn kept_parameter_bytes(shape: &SyntheticShape, gib: u64) -> Option<u64> {
    let full = SyntheticShape::porep_32g(27).ok()?;
    let fit = gpu_fit(
        gib << 30,
        full.srs_bytes(),
        full.domain(),
        full.aux,
        full.inputs,
    );
    if fit.at_once == 0 || fit.streamed_bytes == 0 {
        return None;
    }
    let kept = (full.srs_bytes() - fit.streamed_bytes) as f64 / full.srs_bytes() as f64;
    Some((shape.srs_bytes() as f64 * kept) as u64)
}

/// What [`timed_partitions`] measured.
struct Timed {
    /// Median wall milliseconds of `prove_start` + `prove_finish`.
    total_ms: f64,
    /// The rest, as `key=value` fields for the BENCH line.
    fields: String,
}

/// Proves `runs` synthetic partitions of `shape` on `gpu` (after an untimed warm-up, which
/// uploads the parameters) from one pinned buffer set (`set`, or a new one), as the engine's
/// pool would; returns the set too.
fn timed_partitions(
    gpu: &GpuBackend,
    shape: &SyntheticShape,
    srs: &Arc<Srs>,
    runs: usize,
    what: &str,
    set: Option<BufferSet>,
) -> Res<(Timed, BufferSet)> {
    let mut set = set.unwrap_or_else(|| gpu.alloc_buffers(shape.domain()));
    print_memory(gpu, &format!("before the partition benchmark ({what})"));
    let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(7);
    let mut first_ms = 0.0;
    let (mut starts, mut finishes) = (Vec::new(), Vec::new());
    for run in 0..=runs {
        let assignment = synthetic_assignment(shape, set, run as u64)?;
        let t = Instant::now();
        let started = gpu.prove_start(assignment, srs, Randomness::random(&mut rng))?;
        let start_ms = t.elapsed().as_secs_f64() * 1e3;
        set = started.released;
        let t = Instant::now();
        gpu.prove_finish(started.pending)?;
        let finish_ms = t.elapsed().as_secs_f64() * 1e3;
        if run == 0 {
            first_ms = start_ms + finish_ms;
        } else {
            starts.push(start_ms);
            finishes.push(finish_ms);
        }
    }
    print_memory(gpu, &format!("after the partition benchmark ({what})"));
    let resident = gpu.resident(srs, 0)?;
    let (start, finish) = (median(starts), median(finishes));
    let timed = Timed {
        total_ms: start + finish,
        fields: format!(
            "start_call_ms={start:.1} finish_call_ms={finish:.1} first_ms={first_ms:.1} \
             pinned={} resident_bytes={} streamed_bytes={} locked_bytes={}",
            set.is_pinned(),
            resident.device_bytes(),
            resident.streamed_bytes(),
            resident.locked_streamed_bytes()
        ),
    };
    Ok((timed, set))
}

/// `MemAvailable` from /proc/meminfo, in bytes (None where it cannot be read).
fn host_available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Synthetic parameters of `shape`: every query tiled from [`DISTINCT_POINTS`] multiples of
/// its group's generator; a verifying key of generators (delta must not be the identity).
fn synthetic_srs(shape: &SyntheticShape) -> Srs {
    let g1 = distinct_points::<G1Affine>(DISTINCT_POINTS);
    let g2 = distinct_points::<G2Affine>(DISTINCT_POINTS);
    let tile_g1 = |n: usize| -> Vec<G1Affine> {
        (0..n)
            .into_par_iter()
            .map(|i| g1[i % DISTINCT_POINTS])
            .collect()
    };
    let vk = VerifyingKey::<Bls12> {
        alpha_g1: G1Affine::generator(),
        beta_g1: G1Affine::generator(),
        beta_g2: G2Affine::generator(),
        gamma_g2: G2Affine::generator(),
        delta_g1: G1Affine::generator(),
        delta_g2: G2Affine::generator(),
        ic: vec![G1Affine::generator(); shape.inputs],
    };
    let b_g2 = (0..shape.b_count())
        .into_par_iter()
        .map(|i| g2[i % DISTINCT_POINTS])
        .collect();
    Srs::from_queries(
        vk,
        tile_g1(shape.domain() - 1),
        tile_g1(shape.aux),
        tile_g1(shape.inputs + shape.densities.a_aux),
        tile_g1(shape.b_count()),
        b_g2,
    )
}

/// A synthetic assignment of `shape` in `set` (different values for each `seed`): a, b and c
/// dense; aux 51% zeros, 47% ones, 2% other values; the densities evenly spread.
fn synthetic_assignment(shape: &SyntheticShape, mut set: BufferSet, seed: u64) -> Res<Assignment> {
    anyhow::ensure!(
        set.capacity() >= shape.domain(),
        "the buffer set holds {} scalars, the partition needs {}",
        set.capacity(),
        shape.domain()
    );
    let dense = |i: u64| random_scalar(seed, i);
    let bitlike = |i: u64| match mix(seed ^ 0xa5a5, i) % 100 {
        0..=50 => Scalar::from(0u64),
        51..=97 => Scalar::from(1u64),
        _ => random_scalar(seed, i),
    };
    let n = shape.constraints;
    let salts = [1u64 << 40, 2 << 40, 3 << 40];
    for (buf, salt) in [&mut set.abc.a, &mut set.abc.b, &mut set.abc.c]
        .into_iter()
        .zip(salts)
    {
        fill(buf, n, |i| dense(salt + i as u64));
    }
    fill(&mut set.aux, shape.aux, |i| bitlike(i as u64));
    let mut inputs: Vec<Scalar> = (1..shape.inputs as u64).map(dense).collect();
    inputs.insert(0, Scalar::from(1u64));
    Ok(Assignment {
        abc: set.abc,
        inputs,
        aux: set.aux,
        a_aux_density: spread_density(shape.aux, shape.densities.a_aux),
        b_input_density: spread_density(shape.inputs, shape.densities.b_input),
        b_aux_density: spread_density(shape.aux, shape.densities.b_aux),
    })
}

/// Replaces `buf`'s contents with `value(i)` for i in 0..n, in parallel.
fn fill(buf: &mut crate::groth16::ScalarBuf, n: usize, value: impl Fn(usize) -> Scalar + Sync) {
    buf.clear();
    let spare = &mut buf.stored_and_spare_mut().1[..n];
    spare
        .par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(k, chunk)| {
            for (j, slot) in chunk.iter_mut().enumerate() {
                slot.write(value((k << 16) + j));
            }
        });
    // SAFETY: the n scalars after the (empty) stored ones were each written just above.
    unsafe { buf.assume_filled(n) };
}

/// `len` bits with `ones` of them set, evenly spread (bit i is set where ⌊i·ones/len⌋ steps).
fn spread_density(len: usize, ones: usize) -> Density {
    let set = |i: usize| (i + 1) * ones / len != i * ones / len;
    let words: Vec<u64> = (0..len.div_ceil(64))
        .into_par_iter()
        .map(|w| {
            (0..64)
                .filter(|b| w * 64 + b < len && set(w * 64 + b))
                .fold(0u64, |word, b| word | 1 << b)
        })
        .collect();
    Density::from_words(words, len).expect("words hold len bits")
}

/// A 64-bit mix of (seed, i) (splitmix64's finaliser): cheap, deterministic, well spread.
fn mix(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A scalar below 2^254 (so below the field's modulus) from (seed, i).
fn random_scalar(seed: u64, i: u64) -> Scalar {
    let words = [
        mix(seed, 4 * i),
        mix(seed, 4 * i + 1),
        mix(seed, 4 * i + 2),
        mix(seed, 4 * i + 3) >> 2,
    ];
    Scalar::from_u64s_le(&words).expect("below 2^254 is below the modulus")
}
