//! The checks and benchmarks `scripts/gpu-check.sh` runs on a GPU machine (`cuzk gpu check`,
//! `cuzk gpu bench`): GPU proofs byte-identical to CPU proofs for the same assignment, r and s;
//! device errors surfacing as errors; per-step timings and BENCH lines.

use std::sync::Arc;
use std::time::Instant;

use blstrs::Scalar;
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Curve;
use rand::SeedableRng;

use super::backend::{GpuBackend, InjectAt};
use super::buffers::h2d_blocking;
use super::kernels;
use super::memory::h2d;
use super::resident::as_bytes;
use crate::engine::{Config, Engine, Workload};
use crate::groth16::paramgen;
use crate::groth16::test_circuits::{RandomCircuit, Shape};
use crate::groth16::{
    synthesize, verify, BufferSet, CpuBackend, HostBlock, ProverBackend, Randomness, Srs,
};
use crate::proofs::prove::prove_with_randomness;
use crate::proofs::testdata::TestData;
use crate::proofs::workload::FilecoinWorkload;
use crate::proofs::SrsCache;

type Res<T> = anyhow::Result<T>;

fn rng(seed: u64) -> rand_chacha::ChaCha20Rng {
    rand_chacha::ChaCha20Rng::seed_from_u64(seed)
}

/// Says so when the device is the host emulator (feature `gpu-emulator`): its CHECK lines test
/// the backend's code, not the CUDA kernels, and its BENCH figures are no GPU figures.
fn note_if_emulated() {
    if crate::gpu::EMULATED {
        println!(
            "NOTE emulated device (feature gpu-emulator): CHECK lines test the backend's code, \
             not the CUDA kernels; BENCH figures are not GPU figures"
        );
    }
}

/// One random circuit proved on both backends with the same r and s; true when the bytes are
/// identical and the GPU proof verifies.
fn random_circuit_matches(gpu: &GpuBackend, shape: Shape, lg: u32) -> Res<bool> {
    let circuit = RandomCircuit::new(shape, (1usize << lg) - 16, 7 + lg as u64);
    let t = Instant::now();
    let params = paramgen::generate(circuit.clone(), &mut rng(lg as u64), &|_, _| {})?;
    let srs = Arc::new(Srs::from_parameters(&params));
    let paramgen_ms = t.elapsed().as_secs_f64() * 1e3;
    let r = Randomness::random(&mut rng(99));
    let t = Instant::now();
    let cpu = CpuBackend.prove(synthesize(circuit.clone(), BufferSet::default())?, &srs, r)?;
    let cpu_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    // Room for bellperson's input constraints too (InputsOnly about doubles the count).
    let asg = synthesize(circuit.clone(), gpu.alloc_buffers(2 << lg))?;
    let pinned = asg.abc.is_pinned();
    let ours = gpu.prove(asg, &srs, r)?;
    let gpu_ms = t.elapsed().as_secs_f64() * 1e3;
    let same = cpu.to_bytes() == ours.to_bytes();
    let valid = verify(&srs, &ours, &circuit.public_inputs());
    println!(
        "CHECK random shape={shape:?} n=2^{lg} identical={same} verifies={valid} pinned={pinned} \
         paramgen_ms={paramgen_ms:.0} cpu_ms={cpu_ms:.1} gpu_ms={gpu_ms:.1}"
    );
    Ok(same && valid && pinned)
}

/// Runs every GPU check; returns whether all passed (details on stdout). `kinds` names the 2
/// KiB test requests proved on both backends (see [`TestData::all_requests`]); empty: all.
pub fn check(
    testdata_dir: &std::path::Path,
    params_dir: &std::path::Path,
    max_lg: u32,
    kinds: &[String],
) -> Res<bool> {
    let devices = crate::gpu::devices();
    println!("CHECK devices={devices:?}");
    note_if_emulated();
    anyhow::ensure!(!devices.is_empty(), "no CUDA device");
    let gpu = GpuBackend::open(devices[0].ordinal, false)?;
    let mut ok = true;
    let mut record = |name: &str, passed: bool| {
        println!("CHECK {name}: {}", verdict(passed));
        ok &= passed;
    };

    for shape in [
        Shape::Mixed,
        Shape::InputsOnly,
        Shape::AuxOnly,
        Shape::AbsentFromA,
        Shape::EmptyB,
        Shape::Extended,
    ] {
        let (name, passed) = named_circuit_check(&gpu, shape, 10);
        record(&name, passed);
    }
    // The large random circuits (2^16 and up: parameter generation and the CPU proof take
    // most of the check's time) come last, so a time cap cuts them rather than the rest.
    for lg in (12..=max_lg.min(14)).step_by(2) {
        let (name, passed) = named_circuit_check(&gpu, Shape::Mixed, lg);
        record(&name, passed);
    }

    // Every 2 KiB Filecoin kind: same r and s per partition on both backends; both results
    // pass filecoin-proofs' verifier inside prove_with_randomness.
    let data = TestData::ensure(testdata_dir)?;
    let srs = SrsCache::new(params_dir);
    let names = crate::proofs::testdata::REQUEST_NAMES
        .iter()
        .filter(|&&name| kinds.is_empty() || kinds.iter().any(|k| k == name));
    for &name in names {
        let request = data.request(name)?;
        let r: Vec<Randomness> = (0..request.partitions())
            .map(|k| Randomness::random(&mut rng(1000 + k as u64)))
            .collect();
        let cpu = prove_with_randomness(&request, &srs, &CpuBackend, &r);
        let ours = prove_with_randomness(&request, &srs, &gpu, &r);
        let passed = match (&cpu, &ours) {
            (Ok((a, _)), Ok((b, t))) => {
                println!("CHECK {name}: gpu prove_ms={:.1}", t.prove_ms);
                a == b
            }
            _ => {
                println!(
                    "CHECK {name}: cpu={:?} gpu={:?}",
                    cpu.as_ref().err(),
                    ours.as_ref().err()
                );
                false
            }
        };
        record(&format!("2 KiB {name} identical and verified"), passed);
    }

    // Device errors are values: a bad index, an impossible allocation; the device still works
    // afterwards.
    let bad = GpuBackend::open(4096, false);
    record("bad device index is an error", bad.is_err());
    let oom = gpu.device_alloc(1usize << 50);
    if let Err(e) = &oom {
        println!("CHECK out-of-memory reads: {e}");
    }
    record("device out-of-memory is an error", oom.is_err());
    let again = random_circuit_matches(&gpu, Shape::Mixed, 12).unwrap_or(false);
    record("device keeps proving after the errors", again);
    drop(gpu);

    for (name, passed) in kernel_failures(devices[0].ordinal, &data, params_dir) {
        record(&name, passed);
    }
    let auto = auto_engine_uses_the_gpu(&data, params_dir).unwrap_or_else(|e| {
        println!("CHECK error: {e:#}");
        false
    });
    record(
        "an engine opened with backend = auto (what the C ABI and Go open) proves on the GPU",
        auto,
    );
    let spread = spread_engine(&devices, &data, params_dir).unwrap_or_else(|e| {
        println!("CHECK error: {e:#}");
        false
    });
    record(
        "engine over a spread of GPU backends (two per device when there is one) proves and verifies",
        spread,
    );
    if max_lg >= 16 {
        let gpu = GpuBackend::open(devices[0].ordinal, false)?;
        for lg in (16..=max_lg).step_by(2) {
            let (name, passed) = named_circuit_check(&gpu, Shape::Mixed, lg);
            record(&name, passed);
        }
    }
    Ok(ok)
}

/// [`random_circuit_matches`] as a named CHECK result (an error is printed and fails it).
fn named_circuit_check(gpu: &GpuBackend, shape: Shape, lg: u32) -> (String, bool) {
    let passed = random_circuit_matches(gpu, shape, lg).unwrap_or_else(|e| {
        println!("CHECK error: {e:#}");
        false
    });
    (format!("random {shape:?} 2^{lg}"), passed)
}

/// `Engine::open_configured` with the default config (backend "auto", every device), as the C
/// ABI's default engine opens: the backend must be CUDA, the device must have run kernels, and
/// a WindowPoSt must verify.
fn auto_engine_uses_the_gpu(data: &TestData, params_dir: &std::path::Path) -> Res<bool> {
    let engine = Engine::open_configured(Config::default())?;
    let w = FilecoinWorkload::new(data.window_request()?, params_dir.to_path_buf(), true);
    let proof = engine.prove(Arc::clone(&w) as Arc<dyn Workload>)?;
    let verified = w.request().verify(&proof).unwrap_or(false);
    let status = engine.status();
    let busy: f64 = status.devices.iter().map(|d| d.busy_ms).sum();
    println!(
        "CHECK auto backend={} device_busy_ms={busy:.1} verified={verified}",
        status.backend
    );
    engine.close();
    let gpu_backend = if crate::gpu::EMULATED {
        "emulated-cuda:"
    } else {
        "cuda:"
    };
    Ok(status.backend.starts_with(gpu_backend) && busy > 0.0 && verified)
}

/// An engine over a [`crate::groth16::Spread`] of GPU backends, as `open_configured` builds for
/// several devices: every device, or two backends on the one device there is (separate streams,
/// the process-wide MSM lock), so the multi-device path runs on a one-GPU machine too. Proves
/// 2 KiB WinningPoSt and WindowPoSt jobs at once; filecoin-proofs' verifier must accept each.
fn spread_engine(
    devices: &[crate::gpu::GpuDevice],
    data: &TestData,
    params_dir: &std::path::Path,
) -> Res<bool> {
    let mut ordinals: Vec<u32> = devices.iter().map(|d| d.ordinal).collect();
    if ordinals.len() == 1 {
        ordinals.push(ordinals[0]);
    }
    let members = ordinals
        .iter()
        .map(|&o| GpuBackend::open(o, false))
        .collect::<Result<Vec<_>, _>>()?;
    let spread = Arc::new(crate::groth16::Spread::new(members)?);
    let config = Config {
        synthesis_workers: 4,
        pool_buffers: 6,
        prover_workers: ordinals.len(),
        cpu_fallback: false,
        ..Config::default()
    };
    let engine = Engine::open(
        config,
        Arc::clone(&spread) as Arc<dyn crate::engine::ErasedBackend>,
    )?;
    let jobs = (0..8)
        .map(|i| {
            let request = if i % 2 == 0 {
                data.winning_request()?
            } else {
                data.window_request()?
            };
            let w = FilecoinWorkload::new(request, params_dir.to_path_buf(), true);
            let id = engine.submit(Arc::clone(&w) as Arc<dyn Workload>)?;
            Ok((id, w))
        })
        .collect::<Res<Vec<_>>>()?;
    let mut all = true;
    for (id, w) in jobs {
        let verified = match engine.await_job(id, None) {
            Ok(proof) => w.request().verify(&proof).unwrap_or(false),
            Err(e) => {
                println!("CHECK spread job failed: {e}");
                false
            }
        };
        all &= verified;
    }
    let status = engine.status();
    println!(
        "CHECK spread backend={} started_per_member={:?} devices={:?}",
        status.backend,
        spread.started_per_member(),
        status
            .devices
            .iter()
            .map(|d| (d.name.clone(), d.busy_ms))
            .collect::<Vec<_>>()
    );
    engine.close();
    Ok(all && spread.started_per_member().iter().all(|&n| n > 0))
}

/// "PASS" or "FAIL" for a CHECK line.
pub(super) fn verdict(passed: bool) -> &'static str {
    if passed {
        "PASS"
    } else {
        "FAIL"
    }
}

/// A fresh backend on device `ordinal` and a small engine over it, for the failure-injection
/// checks (which arm failures on the backend the engine proves with).
fn engine_on_device(ordinal: u32, cpu_fallback: bool) -> Res<(Arc<GpuBackend>, Engine)> {
    let gpu = Arc::new(GpuBackend::open(ordinal, cpu_fallback)?);
    let config = Config {
        synthesis_workers: 2,
        pool_buffers: 2,
        cpu_fallback,
        ..Config::default()
    };
    let engine = Engine::open(
        config,
        Arc::clone(&gpu) as Arc<dyn crate::engine::ErasedBackend>,
    )?;
    Ok((gpu, engine))
}

/// Proves the test data's WinningPoSt on `engine`: Ok(filecoin-proofs' verdict) or the job's
/// error message.
fn prove_winning(
    engine: &Engine,
    data: &TestData,
    params_dir: &std::path::Path,
) -> Res<Result<bool, String>> {
    let w = FilecoinWorkload::new(data.winning_request()?, params_dir.to_path_buf(), true);
    Ok(match engine.prove(Arc::clone(&w) as Arc<dyn Workload>) {
        Ok(proof) => Ok(w.request().verify(&proof).unwrap_or(false)),
        Err(e) => Err(e.to_string()),
    })
}

/// Kernel failures injected into engines proving the test data's WinningPoSt on the GPU: in `prove_start`
/// without the CPU fallback (the job fails with the device's message), in `prove_start` with it
/// (the CPU proves the partition), in `prove_finish` (the job fails); after each, the same
/// engine proves the next job on the GPU and filecoin-proofs' verifier accepts it.
fn kernel_failures(
    ordinal: u32,
    data: &TestData,
    params_dir: &std::path::Path,
) -> Vec<(String, bool)> {
    let prove = |engine: &Engine| prove_winning(engine, data, params_dir);
    // One injected failure and the job after it: (name, passed) pairs.
    let case = |at: InjectAt, fallback: bool| -> Res<Vec<(String, bool)>> {
        let (gpu, engine) = engine_on_device(ordinal, fallback)?;
        gpu.inject_kernel_failure(at);
        let first = prove(&engine)?;
        // The device's failure count: the fallback case must have failed on the device, or
        // a proof made on the GPU would pass as the CPU's.
        let device_failures = gpu.failures_in_a_row();
        println!(
            "CHECK kernel failure at {at:?} (cpu_fallback={fallback}): {first:?} \
             (device failures in a row: {device_failures})"
        );
        let expected = match (at, fallback) {
            (InjectAt::Start, true) => first == Ok(true) && device_failures > 0,
            _ => first.is_err_and(|e| e.contains("injected kernel failure")),
        };
        let what = if fallback && at == InjectAt::Start {
            "is retried on the CPU"
        } else {
            "fails the job with the device's message"
        };
        let next = prove(&engine)?;
        println!("CHECK next job after the failure: {next:?}");
        engine.close();
        Ok(vec![
            (
                format!("kernel failure in {at:?} (cpu_fallback={fallback}) {what}"),
                expected,
            ),
            (
                format!("engine proves the next job after a kernel failure in {at:?}"),
                next == Ok(true),
            ),
        ])
    };
    let mut results = Vec::new();
    for (at, fallback) in [
        (InjectAt::Start, false),
        (InjectAt::Start, true),
        (InjectAt::Finish, true),
    ] {
        match case(at, fallback) {
            Ok(mut passed) => results.append(&mut passed),
            Err(e) => {
                println!("CHECK error: {e:#}");
                results.push((
                    format!("kernel failure in {at:?} (cpu_fallback={fallback})"),
                    false,
                ));
            }
        }
    }
    results
}

/// The sticky-error check (`cuzk gpu check-sticky`, last, in a process of its own): an illegal
/// address injected into `prove_start` breaks the first device's context for good. An engine
/// with the CPU fallback must prove that job and the next one anyway (on the CPU; the
/// filecoin-proofs verifier accepts both), count the device's failures, and close without
/// taking the process down.
pub fn check_sticky(testdata_dir: &std::path::Path, params_dir: &std::path::Path) -> Res<bool> {
    let devices = crate::gpu::devices();
    println!("CHECK devices={devices:?}");
    note_if_emulated();
    anyhow::ensure!(!devices.is_empty(), "no CUDA device");
    let data = TestData::ensure(testdata_dir)?;
    let (gpu, engine) = engine_on_device(devices[0].ordinal, true)?;
    gpu.inject_kernel_failure(InjectAt::Sticky);
    let mut ok = true;
    for job in ["the job hit by the error", "the job after it"] {
        let result = prove_winning(&engine, &data, params_dir)?;
        println!("CHECK sticky error, {job}: {result:?}");
        let passed = result == Ok(true);
        println!(
            "CHECK sticky error: {job} is proved on the CPU and verifies: {}",
            verdict(passed)
        );
        ok &= passed;
    }
    let failures = gpu.failures_in_a_row();
    let counted = failures >= 2;
    println!(
        "CHECK sticky error: the broken device's failures are counted ({failures}): {}",
        verdict(counted)
    );
    engine.close();
    drop(gpu);
    println!("CHECK sticky error: engine closed and the device released without an abort");
    Ok(ok && counted)
}

/// The median of `v` (the upper one of an even count).
pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Times `f` `runs` times and returns the median in milliseconds.
fn time_ms(runs: usize, mut f: impl FnMut() -> Res<()>) -> Res<f64> {
    let mut t = Vec::with_capacity(runs);
    for _ in 0..runs {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(t))
}

/// The backend of the first device, for the benchmarks and the kernel checks.
pub(super) fn first_device() -> Res<GpuBackend> {
    let devices = crate::gpu::devices();
    anyhow::ensure!(!devices.is_empty(), "no CUDA device");
    note_if_emulated();
    Ok(GpuBackend::open(devices[0].ordinal, false)?)
}

/// The kernel benchmarks (H2D pinned vs pageable, NTT and MSM alone up to 2^`max_lg`), with
/// DESIGN §8 BENCH lines. They need no parameters, so they can run while those are generated.
pub fn bench_kernels(max_lg: u32) -> Res<()> {
    let gpu = first_device()?;
    // The copies and kernels below are called directly on this thread.
    let _current = gpu.enter()?;
    let ord = gpu.ordinal();

    // H2D: the same 1 GiB from pinned and from pageable memory.
    let n = (1usize << 30) / 32;
    let pinned = gpu.pinned_alloc(n)?;
    // SAFETY: the block holds n scalars; zero is a valid scalar.
    unsafe { std::ptr::write_bytes(pinned.as_mut_ptr(), 0, n) };
    // SAFETY: initialised just above.
    let pinned_slice = unsafe { std::slice::from_raw_parts(pinned.as_mut_ptr(), n) };
    let pageable = vec![Scalar::ZERO; n];
    let dst = gpu.device_alloc(n * 32)?;
    let stream = gpu.copy_stream();
    // Both timed to the end of the device-side copy.
    let ours = time_ms(5, || {
        Ok(h2d_blocking(dst.at(0), as_bytes(pinned_slice), stream)?)
    })?;
    let base = time_ms(5, || {
        Ok(h2d_blocking(dst.at(0), as_bytes(&pageable), stream)?)
    })?;
    println!(
        "BENCH gpu/h2d ours={ours:.1} base={base:.1} speedup={:.2} runs=5 gbps={:.2} base_gbps={:.2}",
        base / ours,
        1.073741824 / (ours / 1e3),
        1.073741824 / (base / 1e3)
    );
    drop((dst, pinned, pageable));

    // NTT and MSMs alone, timing only, smallest first (a time cap cuts the largest).
    super::kernel_check::print_memory(&gpu, "before the NTT/MSM benchmarks");
    // Below 2^22 (the emulator in CI) only the one size asked for.
    let sizes: Vec<u32> = if max_lg < 22 {
        vec![max_lg]
    } else {
        [22, 24, 26, 27]
            .into_iter()
            .filter(|&lg| lg <= max_lg)
            .collect()
    };
    for lg in sizes {
        let m = 1usize << lg;
        let scalars: Vec<Scalar> = {
            use rayon::prelude::*;
            (0..m)
                .into_par_iter()
                .map(|i| Scalar::from(i as u64 * 0x9e37_79b9 + 1).square())
                .collect()
        };
        let d_s = gpu.device_alloc(m * 32)?;
        let cs = gpu.compute_stream();
        h2d_blocking(d_s.at(0), as_bytes(&scalars), cs)?;
        let ms = time_ms(3, || {
            kernels::ntt(ord, gpu.compute_stream(), d_s.at(0), lg, false)?;
            gpu.compute_stream().synchronize()?;
            Ok(())
        })?;
        println!(
            "BENCH gpu/ntt-n{lg} ours={ms:.2} base=NA speedup=NA runs=3 points_per_s={:.3e}",
            m as f64 / (ms / 1e3)
        );
        h2d_blocking(d_s.at(0), as_bytes(&scalars), cs)?;
        let ms = bench_msm::<blstrs::G1Affine>(&gpu, lg, |p, n| {
            kernels::msm_g1(ord, p, d_s.at(0), n).map(drop)
        })?;
        println!(
            "BENCH gpu/msm-g1-n{lg} ours={ms:.2} base=NA speedup=NA runs=3 points_per_s={:.3e}",
            m as f64 / (ms / 1e3)
        );
        if lg <= 24 {
            let ms = bench_msm::<blstrs::G2Affine>(&gpu, lg, |p, n| {
                kernels::msm_g2(ord, p, d_s.at(0), n).map(drop)
            })?;
            println!(
                "BENCH gpu/msm-g2-n{lg} ours={ms:.2} base=NA speedup=NA runs=3 points_per_s={:.3e}",
                m as f64 / (ms / 1e3)
            );
        }
        drop(d_s);
        super::kernel_check::print_memory(&gpu, &format!("after the 2^{lg} benchmarks"));
    }

    Ok(())
}

/// Median milliseconds of `msm(points, n)` over 2^`lg` device points (2^12 distinct ones,
/// tiled) of group `A`, three runs.
fn bench_msm<A: PrimeCurveAffine>(
    gpu: &GpuBackend,
    lg: u32,
    msm: impl Fn(u64, usize) -> Result<(), crate::groth16::Groth16Error>,
) -> Res<f64>
where
    A::Curve: Curve<AffineRepr = A>,
{
    let m = 1usize << lg;
    let distinct = 1usize << 12;
    let affine = super::kernel_check::distinct_points::<A>(distinct);
    let size = std::mem::size_of::<A>();
    let d_p = gpu.device_alloc(m * size)?;
    let cs = gpu.compute_stream();
    for chunk in 0..m / distinct {
        h2d(d_p.at(chunk * distinct * size), as_bytes(&affine), cs)?;
    }
    cs.synchronize()?;
    time_ms(3, || Ok(msm(d_p.at(0), m)?))
}

/// The proof benchmarks: supraseal-c2 against our backend on the same PoRep 2 KiB assignments
/// (with the `supraseal` feature), then a stream of the 2 KiB test request `stream_request`
/// (see [`TestData::all_requests`]; `porep-v1_1`, a 2^22-domain circuit and what the GPU run
/// measures, takes the sealed sectors' PoReps in turn) through the engine on the GPU backend
/// vs the CPU backend.
pub fn bench_proofs(
    testdata_dir: &std::path::Path,
    params_dir: &std::path::Path,
    stream_jobs: usize,
    stream_request: &str,
) -> Res<()> {
    let gpu = first_device()?;
    let _current = gpu.enter()?;
    let ord = gpu.ordinal();
    let data = TestData::ensure(testdata_dir)?;
    // Alternate between the sealed sectors' C1 outputs, parsing only the one each job needs.
    let porep = |i: usize| -> Res<crate::proofs::ProofRequest> {
        let n = data.manifest.porep.len();
        anyhow::ensure!(n > 0, "test data has no PoRep");
        data.porep_request(i % n)
    };
    // Each part's failure is printed and the next part still runs (the supraseal comparison
    // failing, say, must not cost the stream's figures); the step fails at the end.
    let mut failed: Vec<String> = Vec::new();
    let mut part = |name: &str, outcome: Res<()>| {
        if let Err(e) = outcome {
            println!("CHECK {name} ran: FAIL ({e:#})");
            failed.push(name.to_string());
        }
    };
    // Before the CPU-heavy stream below, so that a time cap cannot cut the comparison.
    #[cfg(feature = "supraseal")]
    part(
        "vs-supraseal",
        porep(0).and_then(|r| vs_supraseal(&gpu, &r, params_dir, stream_jobs)),
    );
    #[cfg(not(feature = "supraseal"))]
    println!(
        "BENCH gpu/vs-supraseal ours=NA base=NA speedup=NA runs=0 (built without the supraseal feature)"
    );
    // The default, what the GPU run measures: every sealed sector's PoRep in turn.
    let is_porep = stream_request == "porep-v1_1";
    let request = |i: usize| -> Res<crate::proofs::ProofRequest> {
        if is_porep {
            porep(i)
        } else {
            data.request(stream_request)
        }
    };
    let kind = request(0)?.circuit_kind();
    // Each distinct request's partitions synthesized once and replayed, so the stream measures
    // the prover, not synthesis on the host's cores.
    let distinct = if is_porep {
        data.manifest.porep.len()
    } else {
        1
    };
    let sectors = distinct.min(stream_jobs.max(1));
    let synthesized: Vec<Arc<Vec<crate::groth16::Assignment>>> = (0..sectors)
        .map(|i| {
            let request = request(i)?;
            let assignments = (0..request.partitions())
                .map(|k| {
                    Ok(request
                        .synthesize_partition(k, BufferSet::default(), None)?
                        .0)
                })
                .collect::<Res<Vec<_>>>()?;
            Ok(Arc::new(assignments))
        })
        .collect::<Res<_>>()?;
    part(
        "msm-split bench",
        msm_split_bench(&gpu, &synthesized[0][0], kind, params_dir),
    );
    let job = |i: usize| -> Res<Arc<dyn Workload>> {
        let inner = FilecoinWorkload::new(request(i)?, params_dir.to_path_buf(), false);
        Ok(super::replay::Replayed::new(
            inner,
            Arc::clone(&synthesized[i % sectors]),
        ))
    };
    // (wall ms, prover+finalizer busy / wall, device busy / wall) for `jobs` jobs after one
    // warm-up job (SRS upload, pools); `device_busy` reads the device's busy clock, if any.
    let run = |backend: Arc<dyn crate::engine::ErasedBackend>,
               jobs: usize,
               device_busy: &dyn Fn() -> f64|
     -> Res<(f64, f64, f64)> {
        let config = Config {
            synthesis_workers: 2,
            pool_buffers: 4,
            buffer_constraints: 1 << 22,
            ..Config::default()
        };
        let engine = Engine::open(config, backend)?;
        crate::proofs::workload::preload_kind(&engine, kind, params_dir)?;
        engine.prove(job(0)?)?;
        let workers_before = engine.status().proving_busy_ms();
        let device_before = device_busy();
        let t = Instant::now();
        let ids: Vec<_> = (0..jobs)
            .map(|i| Ok(engine.submit(job(i)?)?))
            .collect::<Res<_>>()?;
        for id in ids {
            engine.await_job(id, None)?;
        }
        let wall = t.elapsed().as_secs_f64() * 1e3;
        let workers = (engine.status().proving_busy_ms() - workers_before) / wall;
        let device = (device_busy() - device_before) / wall;
        engine.close();
        Ok((wall, workers, device))
    };
    let gpu_backend = Arc::new(GpuBackend::open(ord, false)?);
    let busy_clock = Arc::clone(&gpu_backend);
    // The stream's density maps: uploaded for the warm-up job's first partition, then kept.
    let density_uploads = Arc::clone(&gpu_backend);
    let (ours, workers_util, util) = run(gpu_backend, stream_jobs, &move || busy_clock.busy_ms())?;
    // The CPU baseline proves fewer jobs (each takes seconds of every core); compared per job.
    let cpu_jobs = stream_jobs.clamp(1, 2);
    let (base, _, _) = run(Arc::new(CpuBackend), cpu_jobs, &|| 0.0)?;
    let (ours_per_job, base_per_job) = (ours / stream_jobs as f64, base / cpu_jobs as f64);
    println!(
        "BENCH gpu/stream-{} ours={ours_per_job:.1} base={base_per_job:.1} speedup={:.2} runs=1 \
         unit=ms_per_job jobs={stream_jobs} cpu_jobs={cpu_jobs} util={util:.2} \
         worker_util={workers_util:.2} partitions_per_min={:.1} presynthesized=true \
         density_uploads={}",
        kind.name(),
        base_per_job / ours_per_job,
        stream_jobs as f64 / (ours / 60e3),
        density_uploads.density_uploads()
    );
    anyhow::ensure!(failed.is_empty(), "failed: {}", failed.join(", "));
    Ok(())
}

/// `gpu/msm-split-<kind>`: `prove_finish` of one partition (the five MSMs, h dense and never
/// split, and the assembly) with the MSM bit split against without, on the same assignment and
/// (r, s): 3 timed runs each after a warm-up. The two proofs must be the same bytes.
fn msm_split_bench(
    gpu: &GpuBackend,
    assignment: &crate::groth16::Assignment,
    kind: crate::proofs::circuits::CircuitKind,
    params_dir: &std::path::Path,
) -> Res<()> {
    let srs = Arc::new(Srs::read_file(&crate::proofs::params::params_file(
        kind, params_dir,
    )?)?);
    let randomness = Randomness::random(&mut rng(7000));
    let was = gpu.msm_split();
    let mut buffers = Some(gpu.alloc_buffers(assignment.num_constraints().next_power_of_two()));
    let mut finish = |split: bool| -> Res<(f64, Vec<u8>)> {
        gpu.set_msm_split(split);
        let (mut times, mut bytes) = (Vec::new(), Vec::new());
        for _ in 0..4 {
            let set = buffers.take().unwrap_or_default();
            let started =
                gpu.prove_start(super::replay::copy_into(assignment, set), &srs, randomness)?;
            buffers = Some(started.released);
            let t = Instant::now();
            let proof = gpu.prove_finish(started.pending)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            bytes = proof.to_bytes().to_vec();
        }
        Ok((median(times.split_off(1)), bytes))
    };
    let plain = finish(false);
    let split = finish(true);
    gpu.set_msm_split(was);
    let ((base, plain), (ours, split)) = (plain?, split?);
    let same = plain == split;
    println!(
        "CHECK msm-split proof equals the plain proof: {}",
        verdict(same)
    );
    anyhow::ensure!(same, "the MSM bit split changed the proof");
    println!(
        "BENCH gpu/msm-split-{} ours={ours:.2} base={base:.2} speedup={:.2} runs=3 \
         unit=ms_prove_finish splits={}",
        kind.name(),
        base / ours,
        gpu.split_msm_count()
    );
    streamed_check(
        gpu.ordinal(),
        assignment,
        &srs,
        randomness,
        &split,
        ours,
        kind,
    )
}

/// `gpu/streamed-<kind>`: `prove_finish` with half the parameters left on the host (streamed
/// in chunks of 2^16 points at each MSM, as on a GPU too small for them beside a partition)
/// against all of them resident (`resident_ms`, the split bench's figure): 3 timed runs after
/// a warm-up, on a backend of its own. The proof must be `resident_proof`'s bytes.
fn streamed_check(
    ordinal: u32,
    assignment: &crate::groth16::Assignment,
    srs: &Arc<Srs>,
    randomness: Randomness,
    resident_proof: &[u8],
    resident_ms: f64,
    kind: crate::proofs::circuits::CircuitKind,
) -> Res<()> {
    let gpu = GpuBackend::open(ordinal, false)?;
    gpu.set_parameter_limit(super::resident::ResidentSrs::bytes_for(srs) / 2);
    gpu.set_stream_chunk(1 << 16);
    let (mut times, mut bytes) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        let started = gpu.prove_start(
            super::replay::copy_into(assignment, BufferSet::default()),
            srs,
            randomness,
        )?;
        let t = Instant::now();
        let proof = gpu.prove_finish(started.pending)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        bytes = proof.to_bytes().to_vec();
    }
    let same = bytes == resident_proof;
    println!(
        "CHECK streamed parameters give the resident proof: {}",
        verdict(same)
    );
    anyhow::ensure!(same, "streaming the parameters changed the proof");
    let ours = median(times.split_off(1));
    println!(
        "BENCH gpu/streamed-{} ours={ours:.2} base={resident_ms:.2} speedup={:.2} runs=3 \
         unit=ms_prove_finish streamed_msms={}",
        kind.name(),
        resident_ms / ours,
        gpu.streamed_msm_count()
    );
    Ok(())
}

/// `gpu/vs-supraseal`: the same `jobs` PoRep 2 KiB assignments and (r, s) proved by our GPU
/// backend (prove_start and prove_finish pipelined on two threads) and by supraseal-c2 (one
/// batched call). Timed alike: each side first proves one untimed partition (our SRS upload and
/// device set-up, supraseal's own first-call set-up; supraseal's SRS load is outside both), then
/// the `jobs` partitions. Proofs that differ are a FAIL and an error, so the run fails.
#[cfg(feature = "supraseal")]
fn vs_supraseal(
    gpu: &GpuBackend,
    request: &crate::proofs::ProofRequest,
    params_dir: &std::path::Path,
    jobs: usize,
) -> Res<()> {
    let kind = crate::proofs::circuits::CircuitKind::parse("porep-2k").expect("known kind");
    let path = crate::proofs::params::params_file(kind, params_dir)?;
    let srs = Arc::new(Srs::read_file(&path)?);
    let supra = super::supraseal::Supraseal::load(&path)?;
    // Index 0 is the untimed warm-up of each side.
    let randomness: Vec<Randomness> = (0..=jobs)
        .map(|i| Randomness::random(&mut rng(5000 + i as u64)))
        .collect();
    // One synthesis, cloned: the comparison is about proving, not synthesis.
    let synthesized = request
        .synthesize_partition(0, BufferSet::default(), None)?
        .0;
    let assignments = |pinned: bool| -> Vec<crate::groth16::Assignment> {
        (0..=jobs)
            .map(|_| {
                let buffers = if pinned {
                    gpu.alloc_buffers(1 << 22)
                } else {
                    BufferSet::default()
                };
                super::replay::copy_into(&synthesized, buffers)
            })
            .collect()
    };
    let mut theirs_in = assignments(false);
    supra.prove(&theirs_in[..1], &randomness[..1])?;
    let theirs_in = theirs_in.split_off(1);
    let t = Instant::now();
    let theirs = supra.prove(&theirs_in, &randomness[1..])?;
    let base = t.elapsed().as_secs_f64() * 1e3;
    drop(theirs_in);

    let mut ours_in = assignments(true).into_iter();
    let warm_up = ours_in.next().expect("jobs + 1 assignments");
    gpu.prove_finish(gpu.prove_start(warm_up, &srs, randomness[0])?.pending)?;
    let t = Instant::now();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let ours: Vec<crate::groth16::Proof> = std::thread::scope(|scope| -> Res<_> {
        let starter = scope.spawn(move || -> Res<()> {
            for (a, r) in ours_in.zip(randomness[1..].iter().copied()) {
                let started = gpu.prove_start(a, &srs, r)?;
                tx.send(started.pending)
                    .map_err(|_| anyhow::anyhow!("finisher stopped"))?;
            }
            Ok(())
        });
        let proofs = rx
            .iter()
            .map(|p| gpu.prove_finish(p).map_err(anyhow::Error::from))
            .collect::<Res<Vec<_>>>()?;
        starter
            .join()
            .map_err(|_| anyhow::anyhow!("starter panicked"))??;
        Ok(proofs)
    })?;
    let ours_ms = t.elapsed().as_secs_f64() * 1e3;
    let identical = ours.len() == jobs
        && theirs.len() == jobs
        && ours
            .iter()
            .zip(&theirs)
            .all(|(a, b)| a.to_bytes() == b.to_bytes());
    println!(
        "CHECK supraseal-c2 proofs identical to ours for {jobs} PoRep 2 KiB partitions: {}",
        verdict(identical)
    );
    println!(
        "BENCH gpu/vs-supraseal ours={ours_ms:.1} base={base:.1} speedup={:.2} runs=1 partitions={jobs}",
        base / ours_ms
    );
    anyhow::ensure!(identical, "supraseal-c2's proofs differ from ours");
    Ok(())
}
