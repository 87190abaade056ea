//! Sizing a node before it runs (`cuzk plan`): what stays resident, what one partition costs,
//! how many partitions each stage can hold, whether a mix of circuits fits, and which config to
//! use. Generic: the caller describes each circuit ([`PlanItem`]); this module knows nothing of
//! Filecoin.
//!
//! Every byte figure is the one the engine's budget charges:
//! - the memory budget is 3/4 of RAM (the [`Config`](super::Config) default);
//! - every pool buffer set holds the largest domain of the mix (`buffer_constraints` = that
//!   domain), i.e. [`CircuitShape::set_bytes`] of the largest circuit;
//! - each partition from its synthesis pick to the end of `prove_finish` is charged
//!   [`partition_charge`] = `assignment_bytes() + transient(shape)`;
//! - each resident parameter set is charged its `srs_bytes`;
//! - with a CRITICAL circuit in the mix, lower classes leave free one CRITICAL partition's
//!   charge plus its `set_bytes` (the *headroom*) and one buffer set (when the pool has more
//!   than one), and never evict CRITICAL parameter sets.
//!
//! The plan itself is a simple model, written out step by step in [`plan`].

use serde::{Deserialize, Serialize, Serializer};

use super::config::DEFAULT_AFFINITY_SECS;
use super::schedule::partition_charge;
use super::workload::Priority;
use crate::gpu::footprint::gpu_fit;
use crate::groth16::CircuitShape;

/// The machine to plan for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Physical memory in bytes.
    pub ram_bytes: u64,
    /// Memory of each GPU in bytes (empty: a CPU-only node).
    pub gpu_bytes: Vec<u64>,
    /// CPU cores.
    pub cores: usize,
}

/// One circuit of the mix, as the engine sees it: its class, partitions per job, one
/// partition's shape, its parameter set and its per-partition times on this kind of node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanItem {
    /// Name shown in the plan ("porep-32g").
    pub name: String,
    /// Scheduling class (serialized by name).
    #[serde(serialize_with = "class_name")]
    pub class: Priority,
    /// Partitions of one job.
    pub partitions: usize,
    /// One partition's circuit.
    pub shape: CircuitShape,
    /// Bytes of the decoded parameter set.
    pub srs_bytes: u64,
    /// Host bytes resident beside the parameters (the circuit's pre-compiled constraint
    /// system); never on a GPU.
    pub pce_bytes: u64,
    /// Synthesis of one partition on one core (its CPU time), in milliseconds.
    pub synth_ms: f64,
    /// The sparse product's share of `synth_ms`: it runs over rows on every core its worker
    /// has (0: not told apart from the witness).
    pub product_ms: f64,
    /// The witness's share of `synth_ms` synthesized once, on one core, before its parts
    /// spread (a SnapDeals partition's shared preamble; 0 where each part's range synthesizes
    /// its own copy).
    pub preamble_ms: f64,
    /// The most cores one partition's witness keeps busy (split over its parts): the plan
    /// divides the witness's CPU time by this or by the cores each synthesis worker has,
    /// whichever is fewer ([`synthesis_wall_ms`]). 1: one core a worker.
    pub synth_threads: f64,
    /// `prove_start` of one partition on the prover lane, in milliseconds.
    pub start_ms: f64,
    /// `prove_finish` of one partition on a finalizer, in milliseconds.
    pub finish_ms: f64,
}

/// Milliseconds one partition's synthesis takes (`cpu_ms` of CPU time, of which `product_ms`
/// is the sparse product and `preamble_ms` a preamble synthesized once) while `workers`
/// syntheses share the cores the prover lanes leave (`cores - lanes`, one a lane for its host
/// work): the steady state of a node with a backlog, every worker busy. The preamble runs on
/// one core, the rest of the witness spreads over at most `threads` of a worker's cores, the
/// product over all of them. Never less than one core a synthesis.
pub fn synthesis_wall_ms(
    cpu_ms: f64,
    product_ms: f64,
    preamble_ms: f64,
    threads: f64,
    cores: usize,
    lanes: usize,
    workers: usize,
) -> f64 {
    let each = (cores.saturating_sub(lanes).max(1) as f64 / workers.max(1) as f64).max(1.0);
    let product_ms = product_ms.clamp(0.0, cpu_ms);
    let preamble_ms = preamble_ms.clamp(0.0, cpu_ms - product_ms);
    preamble_ms
        + (cpu_ms - product_ms - preamble_ms) / each.min(threads).max(1.0)
        + product_ms / each
}

fn class_name<S: Serializer>(class: &Priority, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(class.name())
}

/// What one circuit of the mix costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ItemFootprint {
    /// The circuit's name.
    pub name: String,
    /// Its class name ("critical", "high", "normal", "low").
    pub class: &'static str,
    /// Partitions of one job.
    pub partitions: usize,
    /// Evaluation domain of one partition.
    pub domain: usize,
    /// Host bytes of its parameter set and its PCE.
    pub srs_bytes: u64,
    /// One buffer set holding its domain (`set_bytes`).
    pub set_bytes: u64,
    /// Bytes charged per partition in flight (`assignment_bytes() + transient`).
    pub partition_bytes: u64,
    /// Milliseconds one partition's synthesis takes with the planned workers sharing the
    /// cores ([`synthesis_wall_ms`]).
    pub synth_ms: f64,
    /// What the engine checks before it accepts a job of it: its parameters and one partition
    /// beside the pool and (below CRITICAL) what is held back for CRITICAL work.
    pub need_bytes: u64,
    /// Whether `need_bytes` is within the budget (else the engine refuses it with `TooLarge`).
    pub fits: bool,
}

/// What is held back for CRITICAL work (present when the mix has a CRITICAL circuit).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CriticalReserve {
    /// One CRITICAL partition's charge plus its `set_bytes`, left free by lower classes.
    pub headroom_bytes: u64,
    /// Buffer sets left in the pool by lower classes (1 when the pool has more than one).
    pub buffers: usize,
    /// CRITICAL parameter sets, never evicted for lower classes.
    pub resident_bytes: u64,
}

/// Whether every parameter set of the mix can stay resident.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Residency {
    /// All sets stay resident beside the pool, the CRITICAL headroom and one partition of the
    /// largest non-critical circuit. Otherwise sets are evicted and reloaded between jobs of
    /// different kinds.
    pub all_resident: bool,
    /// Bytes of all parameter sets together.
    pub all_bytes: u64,
    /// The smallest memory budget that keeps them all resident (with the planned pool and one
    /// partition in flight).
    pub min_budget_all_resident: u64,
    /// Partitions that can be in flight while all sets are resident (0 if they cannot all be).
    /// With more in flight the engine evicts idle sets to make room.
    pub in_flight_all_resident: usize,
}

/// The most partitions each stage can hold at once: its slots (workers, buffer sets), each
/// capped by what the memory budget allows over all stages together (`total`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InFlight {
    /// Being synthesized (one per synthesis worker that has a buffer set).
    pub synthesis: usize,
    /// Synthesized and waiting for the prover (buffer sets not used by the other stages).
    pub waiting: usize,
    /// In `prove_start` (one per prover worker; holds its buffer set).
    pub prove_start: usize,
    /// In `prove_finish` (one per finalizer; the buffer set is back in the pool).
    pub prove_finish: usize,
    /// All stages together: every usable buffer set busy plus the finalizers, at most what
    /// the budget leaves for partitions beside the parameters of the largest job.
    pub total: usize,
}

/// Upper bounds on partitions per hour for the mix (each circuit weighted by its partitions).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Throughput {
    /// Synthesis: concurrent syntheses × 3,600,000 / average `synth_ms`.
    pub synthesis: f64,
    /// Prover lane: lanes (GPUs, or 1) × 3,600,000 / average `start_ms` (start + finish for a
    /// circuit on a GPU that holds one of its partitions at a time; a finish includes copying
    /// the parameters that are streamed, at an assumed 10 GB/s).
    pub prove_start: f64,
    /// Finalizers: finalizers × 3,600,000 / average `finish_ms` (with the streamed copies).
    pub prove_finish: f64,
    /// Memory: partitions in flight × 3,600,000 / average time a partition holds its charge
    /// (synthesis + start + finish; Little's law).
    pub memory: f64,
    /// The smallest of the four.
    pub resource_bound: f64,
    /// Milliseconds a mix loses to reloading parameter sets that cannot all stay resident
    /// (step 9 of [`plan`]; 0 when they all stay): with the engine's parameter affinity, a
    /// share of one switch of every set per affinity period (PoRep and SnapDeals), else every
    /// job's.
    pub reload_ms_per_mix: f64,
    /// What a mix would lose if every job reloaded its set (kinds alternating, affinity off):
    /// the decodes and a synthesis each. Equals `reload_ms_per_mix` where jobs are not
    /// grouped (WindowPoSt evicts sets).
    pub reload_ms_per_job_mix: f64,
    /// Seconds the plan counts on the engine's affinity holding a set (0: not counted).
    pub affinity_secs: u64,
    /// Milliseconds a mix loses, beyond the resource bound, to the pipeline's depth: the
    /// prover lanes idle while partitions that synthesize slower than they are proved come
    /// through a pool that holds few ahead (at a kind switch, or all through a kind whose
    /// synthesis bounds it while another kind's lane time does), from [`pipeline_mix_ms`].
    pub pipeline_ms_per_mix: f64,
    /// Partitions per hour the node can count on: the resource bound, less the reloads and
    /// the pipeline's losses of a mix whose jobs of different kinds alternate (jobs of one
    /// kind in runs lose less, up to the resource bound).
    pub partitions_per_hour: f64,
    /// What bounds it ("synthesis", "prove_start", "prove_finish", "memory", or "parameter
    /// reloads" when sets are reloaded between jobs).
    pub bottleneck: &'static str,
    /// Mixes (one job of each circuit) per hour at that rate.
    pub mixes_per_hour: f64,
}

/// Whether the largest parameter set fits in one GPU's memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GpuFit {
    /// Device index in `Node::gpu_bytes`.
    pub device: usize,
    /// Its memory in bytes.
    pub bytes: u64,
    /// The largest parameter set of the mix.
    pub largest_srs_bytes: u64,
    /// Whether that set fits on the device (it is kept resident there).
    pub largest_srs_fits: bool,
    /// Partitions the device holds at once beside their parameters, for the circuit of the
    /// mix that allows the fewest among those that fit at all (see `circuits_not_fitting`;
    /// `gpu::footprint::partitions_at_once`): 2 lets the next partition's `prove_start` run
    /// under this one's `prove_finish`; with 1 it waits for it (about 20 GB a 32 GiB PoRep
    /// partition beside 47 GB of parameters: an 80 GB GPU); 0 when no circuit of the mix fits.
    pub partitions_at_once: usize,
    /// Circuits of the mix one partition of which does not fit on the device even with its
    /// parameters streamed (every 32 GiB circuit on a 16 GB GPU: about 20 GB a partition):
    /// they are proved by the CPU fallback, or fail without it.
    pub circuits_not_fitting: Vec<String>,
    /// Circuits whose parameters do not all fit beside one partition, with the bytes streamed
    /// from host memory at each partition's MSMs (32 GiB WindowPoSt on a 48 GB GPU: 61 GB of
    /// parameters beside about 20 GB a partition; every 32 GiB circuit on a 24 GB GPU), and
    /// those of `streamed_to_hold_two`.
    pub streamed: Vec<(String, u64)>,
    /// Circuits of `streamed` whose parameters would all fit beside one partition, and which
    /// stream a few of them so that two partitions fit at once
    /// (`gpu::footprint::streamed_to_hold_two`; 32 GiB PoRep on an 80 GB GPU: about 7 GB).
    pub streamed_to_hold_two: Vec<String>,
    /// Circuits of the mix the device holds one partition of at a time (their partitions take
    /// start + finish on its lane); the others that fit it holds two of.
    pub one_at_a_time: Vec<String>,
}

/// The plan for a mix on a node.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Plan {
    /// The node planned for.
    pub node: Node,
    /// Memory budget: 3/4 of RAM.
    pub memory_budget: u64,
    /// Constraints every pool buffer set is sized for: the largest domain of the mix.
    pub buffer_constraints: usize,
    /// Bytes of one pool buffer set.
    pub buffer_bytes: u64,
    /// Buffer sets in the pool.
    pub pool_buffers: usize,
    /// Bytes of the pool.
    pub pool_bytes: u64,
    /// Synthesis workers (the engine adds one for CRITICAL work).
    pub synthesis_workers: usize,
    /// Prover workers (the engine adds one for CRITICAL work and a CRITICAL finalizer per lane).
    pub prover_workers: usize,
    /// What is held back for CRITICAL work, if the mix has any.
    pub critical: Option<CriticalReserve>,
    /// On a GPU node: budget left free so one partition can fall back to the CPU after a
    /// device failure (the CPU prover's transients less the GPU's, for the largest circuit).
    /// The engine charges GPU partitions the GPU's own small host transients and takes the
    /// rest only for a fallback, which it refuses when the budget has no room.
    pub gpu_fallback_bytes: u64,
    /// Per circuit.
    pub items: Vec<ItemFootprint>,
    /// Parameter residency.
    pub resident: Residency,
    /// Partitions in flight per stage.
    pub in_flight: InFlight,
    /// Throughput bounds.
    pub throughput: Throughput,
    /// Per GPU.
    pub gpus: Vec<GpuFit>,
    /// Whether every circuit of the mix can run (else the engine refuses some with TooLarge).
    pub fits: bool,
    /// Why not, when `fits` is false.
    pub reason: Option<String>,
    /// Things to know that do not stop the mix (evictions, a GPU too small).
    pub notes: Vec<String>,
    /// The suggested engine config (TOML).
    pub config_toml: String,
}

/// The memory budget the engine defaults to on a node with `ram_bytes`: 3/4 of it.
pub fn default_budget(ram_bytes: u64) -> u64 {
    ram_bytes / 4 * 3
}

/// Buffer sets lower classes must leave in a pool of `pool` for CRITICAL work.
fn critical_buffers(has_critical: bool, pool: usize) -> usize {
    usize::from(has_critical && pool > 1)
}

/// Plans `items` on `node`; `transient` is the backend's per-partition transient bytes (what
/// the engine charges beside the assignment).
///
/// The model, step by step:
/// 1. budget = 3/4 of RAM; buffer sets hold the largest domain; each circuit's partition charge
///    and the CRITICAL reserve are the engine's (see the module doc).
/// 2. The working set of parameters is the largest non-critical set plus the CRITICAL sets
///    (the engine evicts idle sets to make room for partitions), or every set in step 9's
///    second plan. The memory left for the pool
///    and partitions is the budget minus that and the CRITICAL headroom.
/// 3. prover_workers = max(1, GPUs). synthesis_workers = the most, up to cores - 1 (at least
///    1), for which a full pipeline fits: pool = synthesis + prover + 1 buffer sets, every
///    usable set holding a partition of the largest charge, plus one partition per finalizer.
/// 4. pool_buffers = synthesis + prover + 1, reduced while the pool and one partition do not
///    fit, or while it has more usable sets than partitions the memory allows.
/// 5. Each circuit fits when its set and one partition fit beside the pool and (below
///    CRITICAL) the CRITICAL headroom and sets: the engine's own `TooLarge` check.
/// 6. All sets stay resident when they fit beside the pool, the headroom and one partition of
///    the largest non-critical circuit.
/// 7. Throughput: the smallest of synthesis, prover lane, finalizer and memory rates, with the
///    mix's times averaged over its partitions, less what a walk through a few mixes,
///    partition by partition, finds the lanes idle at kind switches ([`pipeline_mix_ms`]).
///    A partition's synthesis takes its CPU time (`synth_ms`) over the cores its worker has
///    (the cores less one a prover lane, shared by the workers): its witness at most
///    `synth_threads` of them, its sparse product (`product_ms`) all ([`synthesis_wall_ms`]).
/// 8. When synthesis outpaces that bound by more than one worker, the plan is made again with
///    the fewest workers that keep up with it and one spare: more would only take buffer sets
///    from the memory that keeps parameter sets resident (fewer workers each get more cores).
///    A second or third spare is kept where the pipeline walk counts over 1% more with it.
/// 9. When the mix has two or more non-CRITICAL parameter sets that do not all stay resident,
///    jobs of different kinds evict and reload each other's sets, each reload costing its
///    decode (at an assumed [`DECODE_BYTES_PER_MS`]) and one synthesis (the pipeline refilling
///    behind it). Where only PoRep and SnapDeals (NORMAL) sets are evicted, the engine's
///    parameter affinity switches sets at most once per affinity period under a backlog, so a
///    mix loses that share of one reload of every set; otherwise (WindowPoSt evicting them)
///    every job reloads its set when kinds alternate. The rate counted on is the resource
///    bound less that loss and step 7's walk (jobs of one kind in runs lose less). The plan is
///    also made with every set kept resident (steps 2 to 8 sized beside all of them, so a
///    smaller pool), and that one is the plan unless the working set's rate counted on beats
///    its own.
pub fn plan(node: &Node, items: &[PlanItem], transient: &dyn Fn(&CircuitShape) -> u64) -> Plan {
    let working_set = plan_for_residency(node, items, transient, false);
    if working_set.resident.all_resident || evictable(items).count() < 2 {
        return working_set;
    }
    let mut all_resident = plan_for_residency(node, items, transient, true);
    if !all_resident.fits
        || all_resident.throughput.partitions_per_hour < working_set.throughput.partitions_per_hour
    {
        return working_set;
    }
    all_resident.notes.insert(
        0,
        format!(
            "every parameter set is kept resident ({}) with a smaller pool: the {} buffer sets \
             the budget would otherwise hold leave room for one set at a time, and reloading \
             sets between jobs of different kinds would cost about {:.0} s a mix ({:.0} \
             partitions/h against {:.0})",
            gib(all_resident.resident.all_bytes),
            working_set.pool_buffers,
            working_set.throughput.reload_ms_per_mix / 1e3,
            working_set.throughput.partitions_per_hour,
            all_resident.throughput.partitions_per_hour
        ),
    );
    all_resident
}

/// The circuits whose parameter sets the engine may evict (every class below CRITICAL).
fn evictable(items: &[PlanItem]) -> impl Iterator<Item = &PlanItem> {
    items.iter().filter(|i| i.class != Priority::Critical)
}

/// Steps 1 to 8 of [`plan`], sized beside every parameter set (`keep_all_resident`) or beside
/// the working set of step 2.
fn plan_for_residency(
    node: &Node,
    items: &[PlanItem],
    transient: &dyn Fn(&CircuitShape) -> u64,
    keep_all_resident: bool,
) -> Plan {
    let capped =
        |cap: usize| plan_with_synthesis_cap(node, items, transient, cap, keep_all_resident);
    // Whether synthesis outpaces the prover lanes, the finalizers and memory.
    let keeps_up = |p: &Plan| {
        let t = &p.throughput;
        t.synthesis > t.prove_start.min(t.prove_finish).min(t.memory)
    };
    let first = capped(usize::MAX);
    if !keeps_up(&first) || first.synthesis_workers <= 1 || !first.throughput.synthesis.is_finite()
    {
        return first;
    }
    // The fewest workers that keep up (their rate grows with their count until they hold every
    // core a partition can use), found by bisection; then one spare.
    let (mut fewest, mut most) = (1, first.synthesis_workers);
    while fewest < most {
        let mid = (fewest + most) / 2;
        if keeps_up(&capped(mid)) {
            most = mid;
        } else {
            fewest = mid + 1;
        }
    }
    if fewest + 1 >= first.synthesis_workers {
        return first;
    }
    // One spare; a second or third only where the pipeline walk counts a higher rate with it
    // (a deeper pipeline idles the lanes less at kind switches), by more than 1%.
    let mut best = capped(fewest + 1);
    for workers in fewest + 2..=(fewest + 3).min(first.synthesis_workers) {
        let more = if workers == first.synthesis_workers {
            first.clone()
        } else {
            capped(workers)
        };
        if more.throughput.partitions_per_hour > 1.01 * best.throughput.partitions_per_hour {
            best = more;
        }
    }
    best
}

/// The most cores a plan counts (a larger `cores` is taken as this many): more than any
/// node has, and it bounds the worker search and the pipeline walk.
pub const MAX_PLANNED_CORES: usize = 4096;

/// Steps 1 to 7 of [`plan`], with at most `synthesis_cap` synthesis workers.
fn plan_with_synthesis_cap(
    node: &Node,
    items: &[PlanItem],
    transient: &dyn Fn(&CircuitShape) -> u64,
    synthesis_cap: usize,
    keep_all_resident: bool,
) -> Plan {
    let budget = default_budget(node.ram_bytes);
    let charge = |i: &PlanItem| partition_charge(&i.shape, transient(&i.shape));
    let has_critical = items.iter().any(|i| i.class == Priority::Critical);
    let lower: Vec<&PlanItem> = {
        let l: Vec<_> = items
            .iter()
            .filter(|i| i.class != Priority::Critical)
            .collect();
        if l.is_empty() {
            items.iter().collect()
        } else {
            l
        }
    };

    // 1. Buffers and the CRITICAL reserve.
    let largest = items.iter().max_by_key(|i| i.shape.domain());
    let buffer_constraints = largest.map_or(0, |i| i.shape.domain());
    let buffer_bytes = largest.map_or(0, |i| i.shape.set_bytes());
    let crit = items.iter().filter(|i| i.class == Priority::Critical);
    let headroom = crit
        .clone()
        .map(|i| charge(i) + i.shape.set_bytes())
        .max()
        .unwrap_or(0);
    // Host memory a resident parameter set holds (its PCE lives beside it).
    let resident = |i: &PlanItem| i.srs_bytes + i.pce_bytes;
    let crit_srs: u64 = crit.map(resident).sum();
    // What lower classes leave alone (the engine's `critical_headroom`).
    let critical_held = if has_critical { headroom } else { 0 };
    // On a GPU node, room for one partition's CPU fallback.
    let gpu_fallback_bytes = if node.gpu_bytes.is_empty() {
        0
    } else {
        items
            .iter()
            .map(|i| {
                i.shape
                    .cpu_transient_bytes(node.cores)
                    .saturating_sub(transient(&i.shape))
            })
            .max()
            .unwrap_or(0)
    };
    let held = critical_held + gpu_fallback_bytes;

    // 2. Memory for the pool and partitions beside the working set of parameters.
    let charge_big = lower.iter().map(|i| charge(i)).max().unwrap_or(0).max(1);
    let largest_lower_srs = lower
        .iter()
        .filter(|i| i.class != Priority::Critical)
        .map(|i| resident(i))
        .max()
        .unwrap_or(0);
    let params_floor = if keep_all_resident {
        items.iter().map(resident).sum()
    } else {
        crit_srs + largest_lower_srs
    };
    let avail = budget.saturating_sub(params_floor + held);
    let usable = |pool: usize| pool - critical_buffers(has_critical, pool);
    let partitions_beside = |pool: usize, left: u64| -> usize {
        let free = left.saturating_sub(pool as u64 * buffer_bytes);
        usize::try_from(free / charge_big).unwrap_or(usize::MAX)
    };

    // 3. Workers.
    let prover_workers = node.gpu_bytes.len().max(1);
    let finalizers = prover_workers;
    let full_need = |s: usize| {
        let pool = s + prover_workers + 1;
        pool as u64 * buffer_bytes + (usable(pool) + finalizers) as u64 * charge_big
    };
    let cores = node.cores.min(MAX_PLANNED_CORES);
    let mut synthesis_workers = cores.saturating_sub(1).max(1).min(synthesis_cap);
    while synthesis_workers > 1 && full_need(synthesis_workers) > avail {
        synthesis_workers -= 1;
    }

    // 4. The pool.
    let mut pool_buffers = synthesis_workers + prover_workers + 1;
    while pool_buffers > 1
        && (pool_buffers as u64 * buffer_bytes + charge_big > avail
            || usable(pool_buffers) > partitions_beside(pool_buffers, avail))
    {
        pool_buffers -= 1;
    }
    let pool_bytes = pool_buffers as u64 * buffer_bytes;

    // 5. Does every circuit fit (the engine's `never_fits`)?
    let footprints: Vec<ItemFootprint> = items
        .iter()
        .map(|i| {
            let critical = i.class == Priority::Critical;
            let held = if critical {
                0
            } else {
                critical_held + crit_srs
            };
            let need_bytes = resident(i) + charge(i) + pool_bytes + held;
            ItemFootprint {
                name: i.name.clone(),
                class: i.class.name(),
                partitions: i.partitions,
                domain: i.shape.domain(),
                srs_bytes: resident(i),
                set_bytes: i.shape.set_bytes(),
                partition_bytes: charge(i),
                // Set below, once the workers that share the cores are known.
                synth_ms: i.synth_ms,
                need_bytes,
                fits: need_bytes <= budget,
            }
        })
        .collect();
    let mut refusals: Vec<String> = footprints
        .iter()
        .filter(|f| !f.fits)
        .map(|f| {
            format!(
                "{}: its parameters ({}) and one partition ({}) beside the buffer pool ({}){} \
                 need {}, over the {} memory budget: the engine would refuse it with TooLarge \
                 (it needs at least {} of RAM)",
                f.name,
                gib(f.srs_bytes),
                gib(f.partition_bytes),
                gib(pool_bytes),
                if f.class != "critical" && has_critical {
                    " and what is held back for CRITICAL work"
                } else {
                    ""
                },
                gib(f.need_bytes),
                gib(budget),
                gib(f.need_bytes.div_ceil(3) * 4)
            )
        })
        .collect();
    if items.is_empty() {
        refusals.push("the mix is empty".into());
    }
    let fits = refusals.is_empty();

    // 6. Residency.
    let all_bytes: u64 = items.iter().map(resident).sum();
    let min_budget_all_resident = all_bytes + held + pool_bytes + charge_big;
    let all_resident = fits && min_budget_all_resident <= budget;
    let in_flight_all_resident = if all_resident {
        partitions_beside(pool_buffers, budget.saturating_sub(all_bytes + held))
            .min(usable(pool_buffers) + finalizers)
    } else {
        0
    };

    // Partitions in flight per stage.
    let sets = usable(pool_buffers);
    let total = if fits {
        partitions_beside(pool_buffers, avail).min(sets + finalizers)
    } else {
        0
    };
    let in_flight = InFlight {
        synthesis: synthesis_workers.min(sets).min(total),
        waiting: sets
            .saturating_sub(synthesis_workers + prover_workers)
            .min(total),
        prove_start: prover_workers.min(sets).min(total),
        prove_finish: finalizers.min(total),
        total,
    };

    // GPUs.
    let largest_srs_bytes = items.iter().map(|i| i.srs_bytes).max().unwrap_or(0);
    let gpus: Vec<GpuFit> = node
        .gpu_bytes
        .iter()
        .enumerate()
        .map(|(device, &bytes)| {
            let fit = |i: &PlanItem| {
                gpu_fit(
                    bytes,
                    i.srs_bytes,
                    i.shape.domain(),
                    i.shape.aux,
                    i.shape.inputs,
                )
            };
            GpuFit {
                device,
                bytes,
                largest_srs_bytes,
                largest_srs_fits: largest_srs_bytes <= bytes,
                partitions_at_once: items
                    .iter()
                    .map(|i| fit(i).at_once)
                    .filter(|&n| n > 0)
                    .min()
                    .unwrap_or(if items.is_empty() { 2 } else { 0 }),
                circuits_not_fitting: items
                    .iter()
                    .filter(|i| fit(i).at_once == 0)
                    .map(|i| i.name.clone())
                    .collect(),
                streamed: items
                    .iter()
                    .filter_map(|i| {
                        let f = fit(i);
                        (f.at_once > 0 && f.streamed_bytes > 0)
                            .then(|| (i.name.clone(), f.streamed_bytes))
                    })
                    .collect(),
                streamed_to_hold_two: items
                    .iter()
                    .filter(|i| {
                        let f = fit(i);
                        f.at_once == 2 && f.streamed_bytes > 0
                    })
                    .map(|i| i.name.clone())
                    .collect(),
                one_at_a_time: items
                    .iter()
                    .filter(|i| fit(i).at_once == 1)
                    .map(|i| i.name.clone())
                    .collect(),
            }
        })
        .collect();

    // 7. Throughput, with each circuit's synthesis spread over the cores its worker has.
    let timed: Vec<PlanItem> = items
        .iter()
        .map(|i| PlanItem {
            synth_ms: synthesis_wall_ms(
                i.synth_ms,
                i.product_ms,
                i.preamble_ms,
                i.synth_threads,
                cores,
                prover_workers,
                in_flight.synthesis.max(1),
            ),
            ..i.clone()
        })
        .collect();
    let items = &timed[..];
    let mut footprints = footprints;
    for (f, i) in footprints.iter_mut().zip(items) {
        f.synth_ms = i.synth_ms;
    }
    // Per circuit, the GPUs that hold one of its partitions at a time.
    let serial_lanes: Vec<usize> = items
        .iter()
        .map(|i| {
            gpus.iter()
                .filter(|g| g.one_at_a_time.contains(&i.name))
                .count()
        })
        .collect();
    // Per circuit, the slowest GPU's streamed copies, added to its MSMs' time.
    let streamed_ms: Vec<f64> = items
        .iter()
        .map(|i| {
            gpus.iter()
                .flat_map(|g| g.streamed.iter())
                .filter(|(name, _)| *name == i.name)
                .map(|(_, bytes)| stream_ms(*bytes))
                .fold(0.0, f64::max)
        })
        .collect();
    // Step 9's loss: each evictable set decoded again, and one synthesis behind it, a mix;
    // once per affinity period where only NORMAL and LOW sets are evicted.
    let reloads = if all_resident || evictable(items).count() < 2 {
        Reloads::default()
    } else {
        Reloads {
            per_job_ms: evictable(items)
                .map(|i| load_ms(resident(i)) + i.synth_ms)
                .sum(),
            grouped_sets: if evictable(items).all(|i| i.class >= Priority::Normal) {
                evictable(items).count()
            } else {
                0
            },
        }
    };
    let throughput = throughput(
        items,
        &streamed_ms,
        &in_flight,
        Lanes {
            lanes: prover_workers,
            serial: serial_lanes,
            finalizers,
        },
        reloads,
    );

    let mut notes = Vec::new();
    if fits && !all_resident {
        notes.push(format!(
            "not every parameter set stays resident ({} together): sets are evicted and \
             reloaded between jobs of different kinds; a budget of {} (RAM {}) keeps them all",
            gib(all_bytes),
            gib(min_budget_all_resident),
            gib(min_budget_all_resident.div_ceil(3) * 4)
        ));
    } else if all_resident && in_flight_all_resident < total {
        notes.push(format!(
            "all parameter sets stay resident with up to {in_flight_all_resident} partitions \
             in flight; with more the engine evicts idle sets"
        ));
    }
    for g in &gpus {
        for (name, bytes) in &g.streamed {
            if g.streamed_to_hold_two.contains(name) {
                notes.push(format!(
                    "GPU {} ({}) streams {} of {name}'s parameters from host memory at each \
                     partition's MSMs so that two of its partitions fit at once, the next one's \
                     copies and NTTs under this one's MSMs (about {:.1} s a partition at an \
                     assumed {} GB/s, counted in prove_finish)",
                    g.device,
                    gb(g.bytes),
                    gb(*bytes),
                    stream_ms(*bytes) / 1e3,
                    STREAM_BYTES_PER_MS / 1e6
                ));
                continue;
            }
            notes.push(format!(
                "GPU {} ({}) cannot hold all of {name}'s parameters beside a partition: {} of \
                 them are streamed from host memory at each partition's MSMs (about {:.1} s a \
                 partition at an assumed {} GB/s, counted in prove_finish)",
                g.device,
                gb(g.bytes),
                gb(*bytes),
                stream_ms(*bytes) / 1e3,
                STREAM_BYTES_PER_MS / 1e6
            ));
        }
        if !g.circuits_not_fitting.is_empty() {
            notes.push(format!(
                "GPU {} ({}) cannot hold one partition of {}: those partitions are proved by \
                 the CPU fallback (or fail without it)",
                g.device,
                gb(g.bytes),
                g.circuits_not_fitting.join(", ")
            ));
        }
        if !g.one_at_a_time.is_empty() {
            notes.push(format!(
                "GPU {} ({}) holds one partition of {} at a time beside its parameters: such a \
                 partition's prove_start waits for the previous one's prove_finish (the prover \
                 lane's rate counts start + finish)",
                g.device,
                gb(g.bytes),
                g.one_at_a_time.join(", ")
            ));
        }
    }

    let config_toml = format!(
        "memory_budget = {budget}\npool_buffers = {pool_buffers}\nbuffer_constraints = \
         {buffer_constraints}\nsynthesis_workers = {synthesis_workers}\nprover_workers = \
         {prover_workers}\n"
    );
    Plan {
        node: node.clone(),
        memory_budget: budget,
        buffer_constraints,
        buffer_bytes,
        pool_buffers,
        pool_bytes,
        synthesis_workers,
        prover_workers,
        gpu_fallback_bytes,
        critical: has_critical.then(|| CriticalReserve {
            headroom_bytes: headroom,
            buffers: critical_buffers(true, pool_buffers),
            resident_bytes: crit_srs,
        }),
        items: footprints,
        resident: Residency {
            all_resident,
            all_bytes,
            min_budget_all_resident,
            in_flight_all_resident,
        },
        in_flight,
        throughput,
        gpus,
        fits,
        reason: (!fits).then(|| refusals.join("; ")),
        notes,
        config_toml,
    }
}

/// Host-to-device rate assumed for streamed parameters: bytes a millisecond (10 GB/s, what a
/// pageable copy gets over PCIe 4.0 x16). Conservative: streamed queries are page-locked once
/// per parameter set (docs/gpu.md, "Page-locked streamed parameters"), and page-locked copies
/// run nearer the link's ~25 GB/s; unmeasured on a GPU so far: the GPU check's `gpu/h2d` line
/// gives a card's own pinned and pageable rates.
const STREAM_BYTES_PER_MS: f64 = 10e6;

/// Milliseconds to stream `bytes` of parameters at [`STREAM_BYTES_PER_MS`]: what the plan adds
/// to a partition's `prove_finish` for the bytes [`GpuFit::streamed`] lists.
pub fn stream_ms(bytes: u64) -> f64 {
    bytes as f64 / STREAM_BYTES_PER_MS
}

/// Parameter decode rate assumed for reloads: bytes a millisecond (1 GB/s). Our decoder ran at
/// 0.19 GB/s a core from the page cache on the 2-core development machine (2 KiB PoRep's
/// 1.1 GB set), so a 32-core node decodes a cached file several times faster and an uncached
/// one at its disk's read rate; 1 GB/s is the conservative middle, and the simulation's.
pub const DECODE_BYTES_PER_MS: f64 = 1e6;

/// Milliseconds to decode a parameter set of `bytes` at [`DECODE_BYTES_PER_MS`].
pub fn load_ms(bytes: u64) -> f64 {
    bytes as f64 / DECODE_BYTES_PER_MS
}

/// The prover lanes of step 7: `lanes` in all, `serial[k]` of them GPUs that hold one
/// partition of the plan's k-th circuit at a time (its partitions take start + finish on those
/// lanes), and the finalizers.
struct Lanes {
    lanes: usize,
    serial: Vec<usize>,
    finalizers: usize,
}

/// Milliseconds one mix takes through synthesis and the prover lanes in steady state, from a
/// walk through its partitions one by one (jobs in the mix's order, cyclically; a job's
/// partitions one after another): a partition's synthesis starts when a worker is free (the
/// one `workers` partitions back is synthesized) and a buffer set is free (the one `sets`
/// back has left `prove_start`), and its time on the lanes (`lane_ms`, all lanes together)
/// starts when it is synthesized and the lanes are free. So it counts what the separate
/// rates miss: the lanes idle when a job whose partitions synthesize slower follows another
/// (the workers reach its first partition only as they finish the last job's, and the pool
/// holds few partitions ahead). Simulated (tests/sim): 31 ms scaled, 7.8 s real, a round on
/// one 141 GB GPU with 10 workers where a 32 GiB PoRep job followed a SnapDeals one. CRITICAL
/// partitions have their own worker and only add their lane time.
fn pipeline_mix_ms(items: &[PlanItem], lane_ms: &[f64], workers: usize, sets: usize) -> f64 {
    let critical_lane_ms: f64 = items
        .iter()
        .zip(lane_ms)
        .filter(|(i, _)| i.class == Priority::Critical)
        .map(|(i, &lane)| i.partitions as f64 * lane)
        .sum();
    let partitions: Vec<(f64, f64)> = items
        .iter()
        .zip(lane_ms)
        .filter(|(i, _)| i.class != Priority::Critical)
        .flat_map(|(i, &lane)| std::iter::repeat_n((i.synth_ms, lane), i.partitions))
        .collect();
    let n = partitions.len();
    if n == 0 || workers == 0 || sets == 0 {
        return critical_lane_ms;
    }
    // Enough mixes for the walk to settle into its cycle, then enough to average over a whole
    // number of the workers' waves (at most about 100,000 partitions: past that one wave's
    // misalignment is noise).
    let settle = 2 + 2 * sets.div_ceil(n);
    let measured = (workers / gcd(n, workers)).min((100_000 / n).max(1));
    // Only the last `workers` synthesis ends and the last `sets` lane ends are looked back
    // at: rings of those sizes, slot m % size holding partition m - size until overwritten.
    let (mut synthesized, mut proved) = (vec![0.0; workers], vec![0.0; sets]);
    let (mut last_proved, mut settled_at) = (0.0, 0.0);
    for m in 0..n * (settle + measured) {
        let (synth_ms, lane) = partitions[m % n];
        let ready = f64::max(synthesized[m % workers], proved[m % sets]) + synth_ms;
        synthesized[m % workers] = ready;
        last_proved = f64::max(last_proved, ready) + lane;
        proved[m % sets] = last_proved;
        if m + 1 == n * settle {
            settled_at = last_proved;
        }
    }
    (last_proved - settled_at) / measured as f64 + critical_lane_ms
}

/// The greatest common divisor of `a` and `b`.
fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Partitions per hour of `t`'s mixes if each lost `reload_ms` instead of its reloads.
fn parts_per_hour(t: &Throughput, reload_ms: f64) -> f64 {
    let parts = t.partitions_per_hour / t.mixes_per_hour;
    let work_ms = parts * 3_600_000.0 / t.resource_bound;
    parts * 3_600_000.0 / (work_ms + t.pipeline_ms_per_mix + reload_ms)
}

/// Step 9's parameter reloads of a mix.
#[derive(Clone, Copy, Default)]
struct Reloads {
    /// Every evictable set decoded again and the pipeline refilled behind it: what a mix loses
    /// when every job reloads its set.
    per_job_ms: f64,
    /// Sets the engine's parameter affinity groups jobs by (0: not grouped, as when WindowPoSt
    /// evicts them): with a backlog of every kind it switches sets at most once per
    /// [`AFFINITY_MS`], so a mix pays `per_job_ms` times its work over `grouped_sets` periods.
    grouped_sets: usize,
}

/// What `cuzk plan` counts on the engine's parameter affinity to hold a set for (the default
/// `affinity_secs`).
const AFFINITY_MS: f64 = DEFAULT_AFFINITY_SECS as f64 * 1e3;

/// The four rate bounds of step 7 of [`plan`] and the rate with step 9's reloads or the
/// pipeline's losses ([`pipeline_mix_ms`]);
/// `stream_ms[k]` is added to `items[k]`'s finish (its streamed parameters' copies).
fn throughput(
    items: &[PlanItem],
    stream_ms: &[f64],
    in_flight: &InFlight,
    lanes: Lanes,
    reloads: Reloads,
) -> Throughput {
    let Lanes {
        lanes,
        serial: serial_lanes,
        finalizers,
    } = lanes;
    let parts: usize = items.iter().map(|i| i.partitions).sum();
    if parts == 0 || in_flight.total == 0 {
        return Throughput {
            bottleneck: "memory",
            ..Throughput::default()
        };
    }
    let avg = |f: &dyn Fn(&PlanItem, f64) -> f64| {
        items
            .iter()
            .zip(stream_ms)
            .map(|(i, &streamed)| i.partitions as f64 * f(i, streamed))
            .sum::<f64>()
            / parts as f64
    };
    let rate = |n: usize, ms: f64| {
        if n == 0 {
            0.0
        } else if ms > 0.0 {
            n as f64 * 3_600_000.0 / ms
        } else {
            f64::INFINITY
        }
    };
    let synthesis = rate(in_flight.synthesis, avg(&|i, _| i.synth_ms));
    // Per partition of each circuit, the lanes' time (all lanes together): start on the lanes
    // that hold two, start + finish on those that hold one at a time.
    let lane_ms: Vec<f64> = items
        .iter()
        .zip(stream_ms)
        .zip(&serial_lanes)
        .map(|((i, &s), &serial)| {
            let serial = serial.min(lanes);
            3_600_000.0
                / (rate(lanes - serial, i.start_ms) + rate(serial, i.start_ms + i.finish_ms + s))
        })
        .collect();
    let prove_start = parts as f64 * 3_600_000.0
        / items
            .iter()
            .zip(&lane_ms)
            .map(|(i, ms)| i.partitions as f64 * ms)
            .sum::<f64>();
    let prove_finish = rate(finalizers, avg(&|i, s| i.finish_ms + s));
    let memory = rate(
        in_flight.total,
        avg(&|i, s| i.synth_ms + i.start_ms + i.finish_ms + s),
    );
    let (bottleneck, resource_bound) = [
        ("synthesis", synthesis),
        ("prove_start", prove_start),
        ("prove_finish", prove_finish),
        ("memory", memory),
    ]
    .into_iter()
    .fold(("synthesis", f64::INFINITY), |best, b| {
        if b.1 < best.1 {
            b
        } else {
            best
        }
    });
    // A mix takes parts / rate hours of work plus its reloads (each of which refills the
    // pipeline) or what the pipeline's depth costs it.
    let work_ms = parts as f64 * 3_600_000.0 / resource_bound;
    let reload_ms_per_mix = if reloads.grouped_sets > 0 {
        let share = work_ms / (reloads.grouped_sets as f64 * AFFINITY_MS);
        reloads.per_job_ms * share.min(1.0)
    } else {
        reloads.per_job_ms
    };
    // The walk's buffer sets: those the stages hold, at most the usable ones (all partitions in
    // flight less the finalizers': one set can be both "synthesizing" and "in prove_start").
    let sets = (in_flight.synthesis + in_flight.waiting + in_flight.prove_start)
        .min(in_flight.total.saturating_sub(in_flight.prove_finish))
        .max(1);
    let loss = pipeline_mix_ms(items, &lane_ms, in_flight.synthesis, sets) - work_ms;
    // Below 1% of the mix's work it is the walk's rounding, not a loss worth a line.
    let pipeline_ms_per_mix = if loss > 0.01 * work_ms { loss } else { 0.0 };
    let mix_ms = work_ms + reload_ms_per_mix + pipeline_ms_per_mix;
    let partitions_per_hour = parts as f64 * 3_600_000.0 / mix_ms;
    let bottleneck = if reload_ms_per_mix > 0.0 {
        "parameter reloads"
    } else {
        bottleneck
    };
    Throughput {
        synthesis,
        prove_start,
        prove_finish,
        memory,
        resource_bound,
        reload_ms_per_mix,
        reload_ms_per_job_mix: reloads.per_job_ms,
        affinity_secs: if reloads.grouped_sets > 0 {
            DEFAULT_AFFINITY_SECS
        } else {
            0
        },
        pipeline_ms_per_mix,
        partitions_per_hour,
        bottleneck,
        mixes_per_hour: partitions_per_hour / parts as f64,
    }
}

/// Parses a size: a plain number is bytes; "Ki", "Mi", "Gi", "Ti" with or without a trailing
/// "B" are binary, "KB", "MB", "GB", "TB" decimal (1e9 for "GB", as GPU vendors quote); a bare
/// "K", "M", "G", "T" is binary when `bare_is_binary` (RAM: "256G" = 256 GiB) and decimal
/// otherwise (GPU memory: "80G" = 80e9). Fractions are allowed ("1.5T"); case is ignored.
pub fn parse_size(text: &str, bare_is_binary: bool) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 256G, 80GB, 512GiB)"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let power = |c: char| match c {
        'k' => Some(1),
        'm' => Some(2),
        'g' => Some(3),
        't' => Some(4),
        _ => None,
    };
    let mut chars = unit.chars();
    let factor = match chars.next() {
        None => 1.0,
        Some('b') if unit == "b" => 1.0,
        Some(c) => {
            let p = power(c).ok_or_else(|| format!("{text:?}: unknown unit {unit:?}"))?;
            let binary = match chars.as_str() {
                "" => bare_is_binary,
                "i" | "ib" => true,
                "b" => false,
                _ => return Err(format!("{text:?}: unknown unit {unit:?}")),
            };
            if binary {
                1024f64.powi(p)
            } else {
                1000f64.powi(p)
            }
        }
    };
    let bytes = number * factor;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(bytes as u64)
}

/// Bytes as GiB with one decimal ("44.1 GiB"); below 1 GiB as MiB.
pub fn gib(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// Bytes as vendor gigabytes (1e9) with one decimal ("80.0 GB").
pub fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

impl Plan {
    /// The plan as a human-readable report: node, per-circuit table, pool, reserve, residency,
    /// workers, partitions in flight, throughput, GPUs, verdict and suggested config.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let n = &self.node;
        let gpus = if n.gpu_bytes.is_empty() {
            "no GPU".to_string()
        } else {
            let sizes: Vec<String> = n.gpu_bytes.iter().map(|&b| gb(b)).collect();
            format!("{} GPU ({})", n.gpu_bytes.len(), sizes.join(", "))
        };
        let _ = writeln!(
            o,
            "node: {} RAM, {gpus}, {} cores",
            gib(n.ram_bytes),
            n.cores
        );
        let _ = writeln!(
            o,
            "memory budget: {} (3/4 of RAM)\n",
            gib(self.memory_budget)
        );
        let _ = writeln!(
            o,
            "{:<12} {:<8} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>8}  fits",
            "circuit", "class", "parts", "domain", "params", "set", "partition", "one job", "synth"
        );
        for i in &self.items {
            let _ = writeln!(
                o,
                "{:<12} {:<8} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>8}  {}",
                i.name,
                i.class,
                i.partitions,
                format!("2^{}", i.domain.trailing_zeros()),
                gib(i.srs_bytes),
                gib(i.set_bytes),
                gib(i.partition_bytes),
                gib(i.need_bytes),
                if i.synth_ms < 1e3 {
                    format!("{:.0} ms", i.synth_ms)
                } else {
                    format!("{:.1} s", i.synth_ms / 1e3)
                },
                if i.fits { "yes" } else { "NO" }
            );
        }
        let _ = writeln!(
            o,
            "  (partition: charged per partition in flight; one job: parameters + one partition \
             + pool + CRITICAL reserve; synth: one partition's synthesis, its CPU time over the \
             cores its worker has, the witness's over those it can use)\n"
        );
        let _ = writeln!(
            o,
            "pool: {} buffer sets x {} (buffer_constraints {}) = {}",
            self.pool_buffers,
            gib(self.buffer_bytes),
            self.buffer_constraints,
            gib(self.pool_bytes)
        );
        if let Some(c) = &self.critical {
            let _ = writeln!(
                o,
                "CRITICAL reserve: {} buffer set(s) and {} left free by lower classes; {} of \
                 CRITICAL parameters never evicted",
                c.buffers,
                gib(c.headroom_bytes),
                gib(c.resident_bytes)
            );
        }
        if self.gpu_fallback_bytes > 0 {
            let _ = writeln!(
                o,
                "GPU fallback reserve: {} left free, so one partition can go to the CPU after a \
                 device failure (GPU partitions are charged {} of host transients, not the \
                 CPU prover's)",
                gib(self.gpu_fallback_bytes),
                gib(self
                    .items
                    .iter()
                    .map(|i| i.partition_bytes)
                    .max()
                    .unwrap_or(0))
            );
        }
        let r = &self.resident;
        if r.all_resident {
            let _ = writeln!(
                o,
                "resident: all parameter sets ({}), with up to {} partitions in flight",
                gib(r.all_bytes),
                r.in_flight_all_resident
            );
        } else {
            let _ = writeln!(
                o,
                "resident: NOT all parameter sets ({}): evicted and reloaded between jobs of \
                 different kinds; all-resident needs a budget of {}",
                gib(r.all_bytes),
                gib(r.min_budget_all_resident)
            );
        }
        let _ = writeln!(
            o,
            "workers: {} synthesis (+1 CRITICAL), {} prover (+1 CRITICAL, +1 CRITICAL finalizer per lane)",
            self.synthesis_workers, self.prover_workers
        );
        let f = &self.in_flight;
        let _ = writeln!(
            o,
            "in flight (most per stage): synthesis {}, waiting for prove {}, prove_start {}, \
             prove_finish {}; total {}",
            f.synthesis, f.waiting, f.prove_start, f.prove_finish, f.total
        );
        let t = &self.throughput;
        let bounds = format!(
            "(synthesis {:.0}, prove_start {:.0}, prove_finish {:.0}, memory {:.0})",
            t.synthesis, t.prove_start, t.prove_finish, t.memory
        );
        if t.reload_ms_per_mix > 0.0 {
            let _ = writeln!(
                o,
                "throughput: {:.0} to {:.0} partitions/h ({:.1} to {:.1} mixes/h), bound by \
                 parameter reloads {bounds}",
                t.partitions_per_hour,
                t.resource_bound,
                t.mixes_per_hour,
                t.mixes_per_hour * t.resource_bound / t.partitions_per_hour,
            );
            let (how, otherwise) = if t.affinity_secs > 0 {
                (
                    format!(
                        "with a backlog of every kind: the engine switches parameter sets at \
                         most once per {} s (affinity_secs), {:.0} s of decodes at an assumed \
                         {} GB/s and the pipeline refilling for a switch of every set",
                        t.affinity_secs,
                        t.reload_ms_per_job_mix / 1e3,
                        DECODE_BYTES_PER_MS / 1e6
                    ),
                    format!(
                        "; {:.0} if every job reloaded its set, affinity_secs = 0",
                        parts_per_hour(t, t.reload_ms_per_job_mix)
                    ),
                )
            } else {
                (
                    format!(
                        "when every job reloads its parameter set, as when kinds alternate: \
                         about {:.0} s a mix of decodes at an assumed {} GB/s and the pipeline \
                         refilling",
                        t.reload_ms_per_job_mix / 1e3,
                        DECODE_BYTES_PER_MS / 1e6
                    ),
                    String::new(),
                )
            };
            let _ = writeln!(
                o,
                "  ({:.0} {how}; up to the {:.0} the resources allow when jobs of one kind come \
                 in runs{otherwise})",
                t.partitions_per_hour, t.resource_bound
            );
        } else {
            let _ = writeln!(
                o,
                "throughput: at most {:.0} partitions/h ({:.1} mixes/h), bound by {} {bounds}",
                t.partitions_per_hour, t.mixes_per_hour, t.bottleneck
            );
        }
        if t.pipeline_ms_per_mix > 0.0 {
            let _ = writeln!(
                o,
                "  (the resources alone allow {:.0}; the pool holds few partitions ahead of the \
                 prover, so it waits whenever partitions synthesize slower than it proves \
                 them: about {:.0} s a mix, counted)",
                t.resource_bound,
                t.pipeline_ms_per_mix / 1e3
            );
        }
        for g in &self.gpus {
            let _ = writeln!(
                o,
                "GPU {}: {}, largest parameter set {} {}",
                g.device,
                gb(g.bytes),
                gb(g.largest_srs_bytes),
                if g.largest_srs_fits {
                    "fits"
                } else {
                    "does NOT fit (partly streamed from host memory)"
                }
            );
            let fitting = self.items.len() - g.circuits_not_fitting.len();
            let at_once = if g.one_at_a_time.is_empty() || g.one_at_a_time.len() == fitting {
                g.partitions_at_once.to_string()
            } else {
                format!("2, but 1 of {}", g.one_at_a_time.join(", "))
            };
            let _ = writeln!(
                o,
                "GPU {}: partitions on the device at once: {at_once}{}",
                g.device,
                if g.circuits_not_fitting.is_empty() {
                    ""
                } else {
                    " (of the circuits that fit)"
                }
            );
        }
        for note in &self.notes {
            let _ = writeln!(o, "note: {note}");
        }
        match &self.reason {
            None => {
                let _ = writeln!(o, "\nfits: yes");
            }
            Some(why) => {
                let _ = writeln!(o, "\nfits: NO: {why}");
            }
        }
        let _ = write!(o, "\nsuggested config:\n{}", self.config_toml);
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn item(
        name: &str,
        class: Priority,
        partitions: usize,
        shape: CircuitShape,
        srs_bytes: u64,
    ) -> PlanItem {
        PlanItem {
            name: name.into(),
            class,
            partitions,
            shape,
            srs_bytes,
            pce_bytes: 0,
            synth_ms: 29_000.0,
            product_ms: 0.0,
            preamble_ms: 0.0,
            synth_threads: 1.0,
            start_ms: 3_300.0,
            finish_ms: 700.0,
        }
    }

    fn shape(constraints: usize, inputs: usize, aux: usize) -> CircuitShape {
        CircuitShape {
            constraints,
            inputs,
            aux,
        }
    }

    /// The 32 GiB mix (figures as in `proofs::production`).
    fn mix_32g() -> Vec<PlanItem> {
        vec![
            item(
                "porep",
                Priority::Normal,
                10,
                shape(130_278_869, 328, 130_169_893),
                47_373_927_744,
            ),
            item(
                "snap",
                Priority::Normal,
                16,
                shape(81_049_499, 5, 81_000_000),
                33 * GIB,
            ),
            item(
                "window",
                Priority::High,
                1,
                shape(125_279_217, 25_840, 125_250_000),
                57 * GIB,
            ),
            item(
                "winning",
                Priority::Critical,
                1,
                shape(352_000, 68, 352_000),
                184 << 20,
            ),
        ]
    }

    fn node(ram_gib: u64, gpus: usize, cores: usize) -> Node {
        Node {
            ram_bytes: ram_gib * GIB,
            gpu_bytes: vec![80_000_000_000; gpus],
            cores,
        }
    }

    /// The CPU prover's transients as a 64-core node charges them.
    fn cpu(s: &CircuitShape) -> u64 {
        s.cpu_transient_bytes(64)
    }

    #[test]
    fn a_512_gib_node_fits_the_32g_mix() {
        let p = plan(&node(512, 1, 64), &mix_32g(), &cpu);
        assert!(p.fits, "{}", p.render());
        assert!(p.reason.is_none());
        assert!(p.items.iter().all(|i| i.fits));
        assert!(p.synthesis_workers >= 2 && p.synthesis_workers < 63);
        assert_eq!(p.prover_workers, 1);
        assert_eq!(
            p.pool_buffers,
            p.synthesis_workers + p.prover_workers + 1,
            "a full pipeline fits, so the pool is not reduced"
        );
        assert!(p.resident.all_resident);
        assert!(p.in_flight.total >= 3 && p.in_flight.synthesis >= 2);
        assert!(p.gpus[0].largest_srs_fits);
        assert!(p.throughput.partitions_per_hour > 0.0);
        assert!(p.config_toml.contains("buffer_constraints = 134217728"));
        let config = crate::engine::Config::from_toml(&p.config_toml).unwrap();
        assert_eq!(config.memory_budget, p.memory_budget);
        assert_eq!(config.pool_buffers, p.pool_buffers);
        assert!(serde_json::to_string(&p)
            .unwrap()
            .contains("\"class\":\"critical\""));
    }

    #[test]
    fn an_80_gb_gpu_holds_two_32g_partitions_by_streaming_and_smaller_ones_stream_parameters() {
        let porep = &mix_32g()[..1];
        let gib_gpu = |gib: u64| Node {
            ram_bytes: 512 * GIB,
            gpu_bytes: vec![gib * GIB],
            cores: 64,
        };
        let h100 = plan(&gib_gpu(80), porep, &cpu);
        let h200 = plan(&gib_gpu(139), porep, &cpu);
        // 80 GiB streams about 7 GB of PoRep's parameters to hold two partitions at once.
        assert_eq!(h100.gpus[0].partitions_at_once, 2, "{}", h100.render());
        assert_eq!(h100.gpus[0].streamed_to_hold_two, vec!["porep".to_string()]);
        let pair_streamed = h100.gpus[0].streamed[0].1 as f64;
        assert!((5e9..8.5e9).contains(&pair_streamed), "{:?}", h100.gpus[0]);
        assert!(h100
            .render()
            .contains("so that two of its partitions fit at once"));
        assert!(!h100.render().contains("holds one partition of"));
        assert_eq!(h200.gpus[0].partitions_at_once, 2, "{}", h200.render());
        assert!(h200.gpus[0].streamed.is_empty());
        // Two at once, the prover lane takes start per partition; the streamed copies go to
        // the finish.
        let item = &porep[0];
        let per_hour = |ms: f64| 3_600_000.0 / ms;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
        assert!(close(h100.throughput.prove_start, per_hour(item.start_ms)));
        assert!(close(h200.throughput.prove_start, per_hour(item.start_ms)));
        assert!(
            close(
                h100.throughput.prove_finish,
                h100.prover_workers as f64 * per_hour(item.finish_ms + pair_streamed / 1e7)
            ),
            "{:?}",
            h100.throughput
        );
        // On 24 GiB a finish also copies the streamed parameters (at 10 GB/s).
        let rtx = plan(&gib_gpu(24), porep, &cpu);
        let streamed = rtx.gpus[0].streamed[0].1 as f64;
        assert!(streamed > 40e9, "{:?}", rtx.gpus[0]);
        assert!(rtx.gpus[0].streamed_to_hold_two.is_empty());
        let finish = rtx.prover_workers as f64 * per_hour(item.finish_ms + streamed / 1e7);
        assert!(
            close(rtx.throughput.prove_finish, finish),
            "{:?}",
            rtx.throughput
        );
        let lane = per_hour(item.start_ms + item.finish_ms + streamed / 1e7);
        assert!(
            close(rtx.throughput.prove_start, lane),
            "{:?}",
            rtx.throughput
        );
        assert!(rtx.render().contains("s a partition at an assumed 10 GB/s"));

        // 32 GiB WindowPoSt: 57 GiB of parameters and a 2^27 partition fit on 80 GiB, one at a
        // time (holding two would stream 20 GB of them); PoRep still streams to hold two.
        let mix = mix_32g();
        let p = plan(&gib_gpu(80), &mix, &cpu);
        assert!(p.gpus[0].circuits_not_fitting.is_empty());
        assert_eq!(p.gpus[0].streamed_to_hold_two, vec!["porep".to_string()]);
        assert_eq!(p.gpus[0].streamed.len(), 1, "{:?}", p.gpus[0]);
        assert_eq!(p.gpus[0].partitions_at_once, 1);
        assert_eq!(p.gpus[0].one_at_a_time, vec!["window".to_string()]);
        assert!(p
            .render()
            .contains("partitions on the device at once: 2, but 1 of window\n"));
        assert!(p
            .render()
            .contains("holds one partition of window at a time"));
        let p = plan(&gib_gpu(139), &mix, &cpu);
        assert!(p.gpus[0].circuits_not_fitting.is_empty() && p.gpus[0].streamed.is_empty());
        // 48 GiB: one partition at a time, with WindowPoSt's parameters partly streamed.
        let p = plan(&gib_gpu(48), &mix, &cpu);
        assert!(p.gpus[0].circuits_not_fitting.is_empty(), "{:?}", p.gpus[0]);
        assert_eq!(p.gpus[0].partitions_at_once, 1);
        assert!(
            p.gpus[0].streamed.iter().any(|(name, _)| name == "window"),
            "{:?}",
            p.gpus[0]
        );
        assert!(p
            .render()
            .contains("cannot hold all of window's parameters"));
        // 24 GiB: one partition at a time, most of every circuit's parameters streamed.
        let p = plan(&gib_gpu(24), &mix, &cpu);
        assert!(p.gpus[0].circuits_not_fitting.is_empty(), "{:?}", p.gpus[0]);
        assert_eq!(p.gpus[0].partitions_at_once, 1);
        assert_eq!(p.gpus[0].streamed.len(), 3, "{:?}", p.gpus[0]);
        // 16 GiB: not one 32 GiB partition fits.
        let p = plan(&gib_gpu(16), &mix, &cpu);
        assert_eq!(p.gpus[0].circuits_not_fitting.len(), 3, "{:?}", p.gpus[0]);
        assert!(p
            .render()
            .contains("cannot hold one partition of porep, snap, window"));
    }

    #[test]
    fn a_64_gib_node_cannot_fit_a_47_gb_set() {
        let p = plan(&node(64, 0, 16), &mix_32g(), &cpu);
        assert!(!p.fits);
        let why = p.reason.as_deref().unwrap();
        assert!(why.contains("porep") && why.contains("TooLarge"), "{why}");
        assert!(!p.items[0].fits);
        assert!(!p.resident.all_resident);
        assert_eq!(p.in_flight.total, 0);
        assert!(p.render().contains("fits: NO"));
    }

    #[test]
    fn budget_figures_are_the_engine_formulas() {
        let items = mix_32g();
        let n = node(256, 1, 64);
        let p = plan(&n, &items, &cpu);
        assert_eq!(p.memory_budget, n.ram_bytes / 4 * 3);
        let porep = &items[0].shape;
        assert_eq!(p.buffer_constraints, porep.domain());
        assert_eq!(p.buffer_bytes, porep.set_bytes());
        assert_eq!(p.pool_bytes, p.pool_buffers as u64 * porep.set_bytes());
        let winning = &items[3].shape;
        let c = p.critical.clone().unwrap();
        assert_eq!(
            c.headroom_bytes,
            winning.assignment_bytes() + cpu(winning) + winning.set_bytes()
        );
        assert_eq!(c.buffers, 1);
        assert_eq!(c.resident_bytes, 184 << 20);
        for (f, i) in p.items.iter().zip(&items) {
            let charge = i.shape.assignment_bytes() + cpu(&i.shape);
            assert_eq!(f.partition_bytes, charge);
            let held = if i.class == Priority::Critical {
                0
            } else {
                c.headroom_bytes + c.resident_bytes
            };
            assert_eq!(f.need_bytes, i.srs_bytes + charge + p.pool_bytes + held);
        }
        let all: u64 = items.iter().map(|i| i.srs_bytes).sum();
        assert_eq!(p.resident.all_bytes, all);
        let porep_charge = p.items[0].partition_bytes;
        assert_eq!(
            p.resident.min_budget_all_resident,
            all + c.headroom_bytes + p.pool_bytes + porep_charge
        );
        // 256 GiB: everything fits, but not all four sets at once beside the pool.
        assert!(p.fits && !p.resident.all_resident, "{}", p.render());
        assert!(!p.notes.is_empty());
    }

    #[test]
    fn sizes_parse_with_binary_ram_and_decimal_gpu_units() {
        assert_eq!(parse_size("256G", true), Ok(256 * GIB));
        assert_eq!(parse_size("256GiB", true), Ok(256 * GIB));
        assert_eq!(parse_size("256gib", false), Ok(256 * GIB));
        assert_eq!(parse_size("80G", false), Ok(80_000_000_000));
        assert_eq!(parse_size("80GB", false), Ok(80_000_000_000));
        assert_eq!(parse_size("80GB", true), Ok(80_000_000_000));
        assert_eq!(parse_size("1.5T", true), Ok(1536 * GIB));
        assert_eq!(parse_size("4096", true), Ok(4096));
        assert!(parse_size("lots", true).is_err());
        assert!(parse_size("80GX", false).is_err());
    }

    #[test]
    fn a_mix_whose_sets_cannot_all_stay_resident_weighs_reloads_against_a_smaller_pool() {
        // A GPU node's host charge per partition is small (the GPU holds the transients), so
        // the budget left after one parameter set would take many buffer sets; porep and snap
        // jobs then evict and reload each other's 47 GB and 35 GB sets.
        let gpu_host = |_: &CircuitShape| 95 << 20;
        let items = &mix_32g()[..2];
        let n = node(256, 1, 32);
        let working_set = plan_for_residency(&n, items, &gpu_host, false);
        assert!(!working_set.resident.all_resident);
        let t = &working_set.throughput;
        let reloads: f64 = items
            .iter()
            .map(|i| load_ms(i.srs_bytes) + i.synth_ms)
            .sum();
        assert_eq!(t.reload_ms_per_job_mix, reloads);
        // The engine's affinity switches the two sets at most once per period each: a mix
        // pays its work's share of two periods.
        let parts = 26.0;
        let work_ms = parts * 3_600_000.0 / t.resource_bound;
        let share = work_ms / (2.0 * AFFINITY_MS);
        assert!(share < 0.1, "{share}");
        assert!((t.reload_ms_per_mix - reloads * share).abs() < 1e-6 * reloads);
        assert_eq!(t.affinity_secs, DEFAULT_AFFINITY_SECS);
        assert_eq!(t.bottleneck, "parameter reloads");
        let expected = parts * 3_600_000.0 / (work_ms + reloads * share);
        assert!((t.partitions_per_hour - expected).abs() < 1e-6 * expected);
        assert!(working_set.render().contains("at most once per 1800 s"));

        // Kept resident, both sets leave room for fewer workers: synthesis bounds it well
        // below the working set's rate, so the working set is the plan.
        let all = plan_for_residency(&n, items, &gpu_host, true);
        assert!(all.resident.all_resident && all.pool_buffers < working_set.pool_buffers);
        assert!(all.throughput.resource_bound < t.partitions_per_hour);
        let p = plan(&n, items, &gpu_host);
        assert!(p.fits && !p.resident.all_resident, "{}", p.render());
        assert_eq!(p.pool_buffers, working_set.pool_buffers);

        // 512 GiB and two 68 GB GPUs (each holding one partition at a time): keeping both
        // sets costs the pool little, and the working set would not beat what the GPUs allow
        // with both resident.
        let serial_gpus = Node {
            ram_bytes: 512 * GIB,
            gpu_bytes: vec![68_000_000_000; 2],
            cores: 64,
        };
        let big = plan(&serial_gpus, items, &gpu_host);
        assert!(big.fits && big.resident.all_resident, "{}", big.render());
        assert_eq!(big.gpus[0].one_at_a_time.len(), 2, "{:?}", big.gpus[0]);
        assert_eq!(big.throughput.reload_ms_per_mix, 0.0);
        assert!(big.notes[0].contains("every parameter set is kept resident"));
        // Two 80 GB GPUs hold two SnapDeals partitions at once each and outrun what the workers
        // beside both resident sets synthesize: the working set's extra workers win despite
        // its reloads (once per affinity period).
        let two = node(512, 2, 64);
        let both = plan_for_residency(&two, items, &gpu_host, true);
        let working = plan_for_residency(&two, items, &gpu_host, false);
        assert_eq!(both.throughput.bottleneck, "synthesis", "{}", both.render());
        assert!(working.throughput.partitions_per_hour > both.throughput.partitions_per_hour);
        let p = plan(&two, items, &gpu_host);
        assert!(!p.resident.all_resident, "{}", p.render());
        assert_eq!(p.pool_buffers, working.pool_buffers);

        // With WindowPoSt in the mix its jobs evict the sets whatever the affinity: every job
        // reloads when kinds alternate.
        let full = plan_for_residency(&n, &mix_32g(), &gpu_host, false);
        let f = &full.throughput;
        assert!(!full.resident.all_resident);
        assert_eq!(f.affinity_secs, 0);
        assert!(f.reload_ms_per_mix > 0.0 && f.reload_ms_per_mix == f.reload_ms_per_job_mix);
        assert!(full
            .render()
            .contains("when every job reloads its parameter set"));

        // 128 GiB cannot hold both sets beside a pipeline: the plan keeps the working set and
        // says what the reloads cost.
        let small = plan(&node(128, 1, 32), items, &gpu_host);
        assert!(
            small.fits && !small.resident.all_resident,
            "{}",
            small.render()
        );
        assert_eq!(small.throughput.bottleneck, "parameter reloads");
        assert!(small.throughput.partitions_per_hour < small.throughput.resource_bound);
        // One kind alone never reloads.
        let alone = plan(&n, &items[..1], &gpu_host);
        assert_eq!(alone.throughput.reload_ms_per_mix, 0.0);
    }

    #[test]
    fn the_witness_spreads_over_its_threads_and_the_product_over_every_core() {
        // 10 cores, no lane, one worker: 80 ms of witness over 2 threads, 20 of product over 10.
        assert_eq!(synthesis_wall_ms(100.0, 20.0, 0.0, 2.0, 10, 0, 1), 42.0);
        // Not told apart: all of it over the 2 threads.
        assert_eq!(synthesis_wall_ms(100.0, 0.0, 0.0, 2.0, 10, 0, 1), 50.0);
        // Five workers share the 10 cores: 2 each, which the witness could use too.
        assert_eq!(synthesis_wall_ms(100.0, 20.0, 0.0, 2.0, 10, 0, 5), 50.0);
        // More workers than cores: never less than one core a synthesis.
        assert_eq!(synthesis_wall_ms(100.0, 20.0, 0.0, 2.0, 4, 2, 8), 100.0);
        // A preamble of 20 ms on one core, then 60 of witness over 2 threads and 20 of
        // product over 10 cores.
        assert_eq!(synthesis_wall_ms(100.0, 20.0, 20.0, 2.0, 10, 0, 1), 52.0);
        // A preamble larger than the witness counts as all of it.
        assert_eq!(synthesis_wall_ms(100.0, 20.0, 500.0, 2.0, 10, 0, 1), 82.0);
    }

    #[test]
    fn the_pipeline_walk_counts_the_lanes_idle_when_a_slower_synthesis_follows() {
        let timed = |name: &str, partitions: usize, synth_ms: f64| PlanItem {
            partitions,
            synth_ms,
            ..item(name, Priority::Normal, partitions, shape(1, 1, 1), 0)
        };
        // One kind: 10 workers at 100 ms a partition against a 12 ms lane: the lane bounds.
        let one = [timed("one", 10, 100.0)];
        let lane_ms = [12.0];
        assert!((pipeline_mix_ms(&one, &lane_ms, 10, 11) - 120.0).abs() < 1e-6);
        // Synthesis bounds: 4 workers at 100 ms give one partition every 25 ms.
        assert!((pipeline_mix_ms(&one, &lane_ms, 4, 5) - 250.0).abs() < 1e-6);
        // 32 GiB PoRep after SnapDeals on one 141 GB GPU (ms / 250): the lanes have about the
        // 10 SnapDeals partitions in synthesis (84 ms of lane) ahead when the workers reach
        // the PoRep job, whose first partition takes 116 ms: the lanes idle about 32 ms.
        let two = [timed("porep", 10, 116.0), timed("snap", 16, 72.0)];
        let lanes = [13.2, 8.4];
        let work = 10.0 * 13.2 + 16.0 * 8.4;
        let mix = pipeline_mix_ms(&two, &lanes, 10, 11);
        assert!(
            mix > work + 20.0 && mix < work + 40.0,
            "{mix} against {work}"
        );
        // A deeper pool hides it.
        assert!(pipeline_mix_ms(&two, &lanes, 20, 21) < mix);
        // CRITICAL partitions only add their lane time.
        let mut with_critical = two.to_vec();
        with_critical.push(PlanItem {
            class: Priority::Critical,
            ..timed("critical", 1, 1.0)
        });
        let lanes = [13.2, 8.4, 3.0];
        assert!((pipeline_mix_ms(&with_critical, &lanes, 10, 11) - (mix + 3.0)).abs() < 1e-6);
    }

    #[test]
    fn any_core_count_plans_at_once() {
        // `cores` comes from the caller (CLI, C ABI, Go): an absurd count must not make the
        // worker search or the pipeline walk run for ever.
        // (Before the clamp, `usize::MAX` overflowed the pool arithmetic into a plan of
        // 18446744073709551614 synthesis workers and no buffer sets that "fits".)
        let t = std::time::Instant::now();
        let absurd = plan(&node(512, 1, usize::MAX), &mix_32g(), &cpu);
        let large = plan(&node(512, 1, 100_000), &mix_32g(), &cpu);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(absurd.config_toml, large.config_toml);
        assert!(
            absurd.fits && absurd.pool_buffers >= 3,
            "{}",
            absurd.render()
        );
        assert!(absurd.synthesis_workers < 64);
    }

    #[test]
    fn a_mix_without_critical_work_holds_nothing_back() {
        let items: Vec<_> = mix_32g().into_iter().take(1).collect();
        let p = plan(&node(512, 0, 8), &items, &cpu);
        assert!(p.critical.is_none());
        assert_eq!(p.synthesis_workers, 7);
        assert_eq!(
            p.items[0].need_bytes,
            items[0].srs_bytes + p.items[0].partition_bytes + p.pool_bytes
        );
        assert!(plan(&node(512, 0, 8), &[], &cpu).reason.is_some());
    }
}
