//! The `cuzk` command line: test parameters and the demo.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{Parser, Subcommand};
use cuzk::groth16::paramgen::{self, cache};
use cuzk::groth16::pce::Rows;
use cuzk::groth16::test_circuits::Sha256Preimage;
use cuzk::groth16::{synthesize, verify, BufferSet, CpuBackend, ProverBackend, Randomness, Srs};
use cuzk::proofs::circuits::CircuitKind;
use cuzk::proofs::params;
use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use storage_proofs_core::parameter_cache::CacheEntryMetadata;

#[derive(Parser)]
#[command(name = "cuzk", about = "Embedded Groth16 proving engine for Filecoin")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Groth16 parameters.
    Params {
        #[command(subcommand)]
        command: ParamsCommand,
    },
    /// Real 2 KiB test data (sealed sectors, C1 outputs, vanilla proofs).
    Testdata {
        #[command(subcommand)]
        command: TestdataCommand,
    },
    /// GPU checks and benchmarks (builds with the `cuda` feature; see scripts/gpu-check.sh).
    Gpu {
        #[command(subcommand)]
        command: GpuCommand,
    },
    /// Sizes a node for a mix of circuits: what stays resident, each partition's footprint,
    /// partitions in flight per stage, whether the mix fits and which config to use (figures
    /// from docs/production-figures.md).
    Plan {
        /// Physical memory: "256G" or "256GiB" (2^30 bytes per G), "512GB" (1e9 per GB).
        #[arg(long)]
        ram: String,
        /// GPU memory per device, comma-separated: "80G" or "80GB" (1e9 bytes per G, as vendors
        /// quote), "80GiB" (2^30). Omit for a CPU-only node.
        #[arg(long, value_delimiter = ',')]
        gpus: Vec<String>,
        /// CPU cores.
        #[arg(long)]
        cores: usize,
        /// Circuits, comma-separated (porep-32g, snap-32g, window-32g, winning-32g, and the
        /// same at 64g).
        #[arg(long, value_delimiter = ',', required = true)]
        mix: Vec<String>,
        /// Print the plan as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Proves a SHA-256 preimage circuit on the CPU backend, verifies it, prints timings.
    Demo {
        /// SHA-256 blocks in the preimage (about 27K constraints each).
        #[arg(long, default_value_t = 4)]
        blocks: usize,
        /// Parameter directory (default: FIL_PROOFS_PARAMETER_CACHE or filecoin-proofs' default).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum GpuCommand {
    /// Lists the GPUs this build can use (and says on stderr which GPU backend it carries).
    Devices,
    /// GPU proofs vs CPU proofs (same assignment, r, s): random circuits 2^10..2^max_lg and
    /// every 2 KiB kind; device errors. Exits non-zero on any failure.
    Check {
        /// Largest random circuit, log2 of its constraints.
        #[arg(long, default_value_t = 22)]
        max_lg: u32,
        /// Test data directory (generated when missing).
        #[arg(long)]
        testdata: Option<PathBuf>,
        /// The 2 KiB kinds proved on both backends, comma-separated (default: all five).
        #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(cuzk::proofs::testdata::REQUEST_NAMES))]
        kinds: Vec<String>,
    },
    /// A sticky device error (an illegal address) injected into an engine with the CPU
    /// fallback: jobs still prove and verify. Breaks the device for the rest of the process,
    /// so it runs in a process of its own, last.
    CheckSticky {
        /// Test data directory (generated when missing).
        #[arg(long)]
        testdata: Option<PathBuf>,
    },
    /// The device's kernels alone against the CPU, byte for byte (NTT, quotient, G1/G2 MSMs on
    /// bit-heavy scalars and points at infinity); needs no parameters.
    CheckKernels {
        /// Largest NTT/quotient, log2 of its points (MSMs stop at 2^22 and 2^20).
        #[arg(long, default_value_t = 24)]
        max_lg: u32,
    },
    /// GPU benchmarks: H2D pinned vs pageable, NTT/MSM alone, a 2 KiB stream (PoRep by
    /// default) vs CPU.
    Bench {
        /// Largest NTT/MSM, log2 of its points.
        #[arg(long, default_value_t = 26)]
        max_lg: u32,
        /// Jobs in the stream.
        #[arg(long, default_value_t = 8)]
        stream_jobs: usize,
        /// The 2 KiB test request the stream proves (porep-v1_1: the sealed sectors' PoReps in
        /// turn).
        #[arg(long, default_value = "porep-v1_1", value_parser = clap::builder::PossibleValuesParser::new(cuzk::proofs::testdata::REQUEST_NAMES))]
        stream: String,
        /// Test data directory (generated when missing).
        #[arg(long)]
        testdata: Option<PathBuf>,
        /// `kernels` (H2D, NTT, MSM: no parameters needed, so it can run while they are
        /// generated), `partition` (a synthetic 32 GiB PoRep partition, no parameters needed
        /// either), `proofs` (supraseal comparison, PoRep stream) or `all`.
        #[arg(long, default_value = "all", value_parser = ["all", "kernels", "partition", "proofs"])]
        part: String,
        /// The synthetic partition's domain, log2: 27 is a 32 GiB PoRep partition; smaller
        /// scales every count down alike (lowered further when the host lacks memory).
        #[arg(long, default_value_t = 27)]
        partition_lg: u32,
        /// Timed runs of the synthetic partition (after one untimed warm-up).
        #[arg(long, default_value_t = 3)]
        partition_runs: usize,
        /// Also prove the synthetic partition keeping only the parameters a GPU of this many
        /// GiB keeps, the rest streamed (0: not).
        #[arg(long, default_value_t = 24)]
        partition_as_gib: u64,
    },
}

#[derive(Subcommand)]
enum TestdataCommand {
    /// Seals two 2 KiB sectors with filecoin-proofs-api and writes C1 outputs, PoSt and
    /// SnapDeals vanilla proofs and a manifest (reused when present).
    Generate {
        /// Output directory (default: $CUZK_CACHE/testdata-2k, CUZK_CACHE defaulting to ~/.cache/cuzk).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Proves one test request with filecoin-proofs-api's own function (the baseline of the
    /// engine benchmark's process-per-proof case) and prints the proof size.
    ProveReference {
        /// porep-v1_1, porep-synth, winning, window or snap.
        name: String,
        /// Test data directory (default: $CUZK_CACHE/testdata-2k).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ParamsCommand {
    /// Generates INSECURE random parameters (toxic waste known) for tests and devnets only.
    Generate {
        /// Circuits: porep-2k, winning-2k, window-2k, snap-2k (sizes 2k, 8m, 512m, 32g, 64g), or all-2k.
        #[arg(required = true)]
        kinds: Vec<String>,
        /// Output directory (default: FIL_PROOFS_PARAMETER_CACHE or filecoin-proofs' default).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Regenerate even if the files exist.
        #[arg(long)]
        force: bool,
        /// RNG seed (default: from the OS).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// Prints the cache file name filecoin-proofs uses for a circuit.
    Id {
        /// Circuit name, e.g. winning-2k.
        kind: String,
    },
    /// Records each circuit's pre-compiled constraint system (PCE) from its blank circuit and
    /// prints its size; with --save writes it beside the parameters, where engines load it
    /// instead of recording it on first use. Needs no parameter file.
    Pce {
        /// Circuits, e.g. porep-32g, window-32g (sizes 2k, 8m, 512m, 32g, 64g).
        #[arg(required = true)]
        kinds: Vec<String>,
        /// Parameter directory (default: FIL_PROOFS_PARAMETER_CACHE or filecoin-proofs' default).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Write `v28-<id>.pce` into the parameter directory.
        #[arg(long)]
        save: bool,
    },
}

/// `cuzk params pce`: records each kind's PCE, prints its size, saves it when asked.
fn record_pce(kinds: &[String], dir: PathBuf, save: bool) -> anyhow::Result<()> {
    for name in kinds {
        let kind = CircuitKind::parse(name).with_context(|| format!("unknown circuit {name}"))?;
        let t = Instant::now();
        let pce = cuzk::proofs::pce::record_kind(kind)?;
        println!(
            "{name}: constraints={} inputs={} aux={} nonzeros={} coefficients={} pce_bytes={} \
             bytes_per_nonzero={:.2} stored_as={} record_s={:.1}",
            pce.num_constraints,
            pce.num_inputs,
            pce.num_aux,
            pce.nonzeros(),
            pce.coeffs.len(),
            pce.byte_size(),
            pce.byte_size() as f64 / pce.nonzeros().max(1) as f64,
            match &pce.rows {
                Rows::Flat(_) => "every-row".to_string(),
                Rows::Repeated(r) => format!("one-of-{}-parts", r.parts),
            },
            t.elapsed().as_secs_f64()
        );
        if save {
            let path = cuzk::proofs::pce::pce_path(kind, &dir)?;
            let key = kind.cache_key()?.id;
            cuzk::groth16::pce::file::save(&pce, &key, &path)
                .with_context(|| format!("writing {}", path.display()))?;
            println!("{name}: saved {}", path.display());
        }
    }
    Ok(())
}

fn progress_bar(label: String) -> impl Fn(usize, usize) + Sync {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} points, eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(label);
    move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if done >= total {
            bar.finish();
        }
    }
}

fn parse_kinds(names: &[String]) -> anyhow::Result<Vec<CircuitKind>> {
    let mut kinds = Vec::new();
    for name in names {
        if name == "all-2k" {
            kinds.extend(CircuitKind::all_2k());
        } else {
            kinds
                .push(CircuitKind::parse(name).with_context(|| format!("unknown circuit {name}"))?);
        }
    }
    Ok(kinds)
}

fn rng(seed: Option<u64>) -> rand_chacha::ChaCha20Rng {
    match seed {
        Some(s) => rand_chacha::ChaCha20Rng::seed_from_u64(s),
        None => rand_chacha::ChaCha20Rng::from_entropy(),
    }
}

fn generate(kinds: &[String], dir: PathBuf, force: bool, seed: Option<u64>) -> anyhow::Result<()> {
    eprintln!(
        "WARNING: these are RANDOM TEST PARAMETERS whose toxic waste is known to this process; \
         proofs made with them prove nothing. Use them for tests and devnets only."
    );
    let mut rng = rng(seed);
    let kinds = parse_kinds(kinds)?;
    if kinds.iter().any(|k| matches!(k, CircuitKind::Porep(_))) {
        // PoRep aggregation (and NI-PoRep's C2) reads the inner-product SRS from the same cache.
        let path = cuzk::proofs::aggregate::write_test_srs(&dir, &mut rng, force)?;
        println!("aggregation SRS: {}", path.display());
    }
    for kind in kinds {
        let key = kind.cache_key()?;
        if !force && cache::is_cached(&dir, &key.id) {
            println!(
                "{}: cached {}",
                kind.name(),
                cache::params_path(&dir, &key.id).display()
            );
            continue;
        }
        let t = Instant::now();
        let path = params::generate_for_kind(kind, &dir, &mut rng, &progress_bar(kind.name()))?;
        println!(
            "{}: wrote {} in {:.1}s",
            kind.name(),
            path.display(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `cuzk plan`: parses the node, plans the mix, prints the report or the JSON.
fn plan(
    ram: &str,
    gpus: &[String],
    cores: usize,
    mix: &[String],
    json: bool,
) -> anyhow::Result<()> {
    use cuzk::engine::plan::{parse_size, Node};
    let node = Node {
        ram_bytes: parse_size(ram, true).map_err(anyhow::Error::msg)?,
        gpu_bytes: gpus
            .iter()
            .filter(|g| !g.trim().is_empty())
            .map(|g| parse_size(g, false))
            .collect::<Result<_, _>>()
            .map_err(anyhow::Error::msg)?,
        cores,
    };
    let plan = cuzk::proofs::plan::plan_mix(&node, mix).map_err(anyhow::Error::msg)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
    } else {
        print!("{}", plan.render());
    }
    Ok(())
}

fn demo(blocks: usize, dir: PathBuf) -> anyhow::Result<()> {
    let len = Sha256Preimage::len_for_blocks(blocks);
    let id = format!("cuzk-demo-sha256-{len}");
    let blank = Sha256Preimage {
        len,
        preimage: None,
    };
    let t = Instant::now();
    if !cache::is_cached(&dir, &id) {
        eprintln!(
            "generating INSECURE test parameters for the demo circuit ({blocks} SHA-256 blocks)"
        );
        let mut rng = rng(None);
        let p = paramgen::generate(blank, &mut rng, &progress_bar("sha256".into()))?;
        cache::write_params(&dir, &id, &p, &CacheEntryMetadata { sector_size: 0 })?;
    }
    let params_ms = t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    let srs = std::sync::Arc::new(Srs::read_file(&cache::params_path(&dir, &id))?);
    let load_ms = t.elapsed().as_secs_f64() * 1e3;

    let circuit = Sha256Preimage::with_seed(len, 42);
    let inputs = circuit.public_inputs();
    let t = Instant::now();
    let assignment = synthesize(circuit, BufferSet::default())?;
    let synth_ms = t.elapsed().as_secs_f64() * 1e3;
    let constraints = assignment.num_constraints();

    let backend = CpuBackend;
    let mut os = rand::rngs::OsRng;
    let t = Instant::now();
    let started = backend.prove_start(assignment, &srs, Randomness::random(&mut os))?;
    let start_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let proof = backend.prove_finish(started.pending)?;
    let finish_ms = t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    let ok = verify(&srs, &proof, &inputs);
    let verify_ms = t.elapsed().as_secs_f64() * 1e3;

    println!(
        "cuzk demo: SHA-256 preimage ({len} bytes, {constraints} constraints) on the {} backend",
        backend.name()
    );
    println!(
        "  parameters  {params_ms:>10.1} ms  ({})",
        cache::params_path(&dir, &id).display()
    );
    println!(
        "  srs load    {load_ms:>10.1} ms  ({} MiB decoded)",
        srs.byte_size() >> 20
    );
    println!("  synthesis   {synth_ms:>10.1} ms");
    println!("  prove_start {start_ms:>10.1} ms  (NTT + H MSM)");
    println!("  prove_finish{finish_ms:>10.1} ms  (L, A, B MSMs + assembly)");
    println!(
        "  verify      {verify_ms:>10.1} ms  -> {}",
        if ok { "VALID" } else { "INVALID" }
    );
    println!("  proof       {}", hex(&proof.to_bytes()[..16]) + "...");
    anyhow::ensure!(ok, "the demo proof did not verify");
    Ok(())
}

fn gpu(command: GpuCommand, params_dir: PathBuf) -> anyhow::Result<()> {
    let testdata_dir = |d: Option<PathBuf>| d.unwrap_or_else(cuzk::proofs::testdata::default_dir);
    match command {
        GpuCommand::Devices => {
            // On stderr, so the JSON on stdout stays the device list: which GPU backend this
            // binary carries, so a feature build mistaken for the default one shows itself.
            let built = match (cuzk::gpu::CUDA_BUILT, cuzk::gpu::EMULATED) {
                (false, _) => "none (the default build: no GPU backend)",
                (true, true) => "emulated-cuda (the host emulator, for tests)",
                (true, false) => "cuda",
            };
            eprintln!("GPU backend built: {built}");
            // NOTE lines go to the GPU check's summary: what its figures were measured on.
            match cuzk::gpu::runtime() {
                Ok(r) => eprintln!(
                    "NOTE gpu runtime: driver CUDA {}, runtime CUDA {}, sppark pool {} device(s)",
                    r.driver, r.runtime, r.sppark_devices
                ),
                Err(e) if cuzk::gpu::CUDA_BUILT => eprintln!("NOTE gpu runtime: unavailable ({e})"),
                Err(_) => {}
            }
            let devices = cuzk::gpu::devices();
            for d in &devices {
                eprintln!(
                    "NOTE gpu device {}: {}, {} SMs, compute capability {}, {:.1} GiB",
                    d.ordinal,
                    d.name,
                    d.sm_count,
                    d.compute_capability,
                    d.memory_bytes as f64 / (1u64 << 30) as f64
                );
            }
            println!("{}", serde_json::to_string_pretty(&devices)?);
            Ok(())
        }
        #[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
        GpuCommand::Check {
            max_lg,
            testdata,
            kinds,
        } => {
            let ok = cuzk::gpu::cuda::check::check(
                &testdata_dir(testdata),
                &params_dir,
                max_lg,
                &kinds,
            )?;
            anyhow::ensure!(ok, "some GPU checks failed (see CHECK lines)");
            println!("CHECK all passed");
            Ok(())
        }
        #[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
        GpuCommand::CheckKernels { max_lg } => {
            let ok = cuzk::gpu::cuda::kernel_check::check_kernels(max_lg)?;
            anyhow::ensure!(ok, "some kernel checks failed (see CHECK lines)");
            println!("CHECK kernels: all passed");
            Ok(())
        }
        #[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
        GpuCommand::CheckSticky { testdata } => {
            let ok = cuzk::gpu::cuda::check::check_sticky(&testdata_dir(testdata), &params_dir)?;
            anyhow::ensure!(ok, "the sticky-error check failed (see CHECK lines)");
            println!("CHECK sticky error: all passed");
            Ok(())
        }
        #[cfg(any(feature = "cuda", feature = "gpu-emulator"))]
        GpuCommand::Bench {
            max_lg,
            stream_jobs,
            stream,
            testdata,
            part,
            partition_lg,
            partition_runs,
            partition_as_gib,
        } => {
            use cuzk::gpu::cuda::check;
            if part == "all" || part == "kernels" {
                check::bench_kernels(max_lg)?;
            }
            if part == "all" || part == "partition" {
                cuzk::gpu::cuda::partition_bench::bench_partition(
                    partition_lg,
                    partition_runs,
                    partition_as_gib,
                )?;
            }
            if part == "all" || part == "proofs" {
                check::bench_proofs(&testdata_dir(testdata), &params_dir, stream_jobs, &stream)?;
            }
            Ok(())
        }
        #[cfg(not(any(feature = "cuda", feature = "gpu-emulator")))]
        GpuCommand::Check { .. }
        | GpuCommand::CheckSticky { .. }
        | GpuCommand::CheckKernels { .. }
        | GpuCommand::Bench { .. } => {
            let _ = (params_dir, testdata_dir);
            anyhow::bail!("this cuzk was built without the `cuda` feature")
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn main() -> anyhow::Result<()> {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    let cli = Cli::parse();
    let default_dir = || cache::cache_dir();
    match cli.command {
        Command::Params { command } => match command {
            ParamsCommand::Generate {
                kinds,
                dir,
                force,
                seed,
            } => generate(&kinds, dir.unwrap_or_else(default_dir), force, seed),
            ParamsCommand::Pce { kinds, dir, save } => {
                record_pce(&kinds, dir.unwrap_or_else(default_dir), save)
            }
            ParamsCommand::Id { kind } => {
                let kind =
                    CircuitKind::parse(&kind).with_context(|| format!("unknown circuit {kind}"))?;
                println!(
                    "{}",
                    paramgen::cache::params_path(std::path::Path::new(""), &kind.cache_key()?.id)
                        .display()
                );
                Ok(())
            }
        },
        Command::Plan {
            ram,
            gpus,
            cores,
            mix,
            json,
        } => plan(&ram, &gpus, cores, &mix, json),
        Command::Testdata {
            command: TestdataCommand::ProveReference { name, dir },
        } => {
            let dir = dir.unwrap_or_else(cuzk::proofs::testdata::default_dir);
            let data = cuzk::proofs::testdata::TestData::load(&dir)?;
            let proof = data.prove_with_filecoin_proofs(&name)?;
            println!("{name}: {} bytes", proof.len());
            Ok(())
        }
        Command::Testdata {
            command: TestdataCommand::Generate { dir },
        } => {
            let dir = dir.unwrap_or_else(cuzk::proofs::testdata::default_dir);
            let t = Instant::now();
            let data = cuzk::proofs::testdata::TestData::ensure(&dir)?;
            println!(
                "test data in {} ({} sealed sectors) after {:.1}s",
                data.dir.display(),
                data.manifest.porep.len() + 1,
                t.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Gpu { command } => gpu(command, default_dir()),
        Command::Demo { blocks, dir } => demo(blocks, dir.unwrap_or_else(default_dir)),
    }
}
