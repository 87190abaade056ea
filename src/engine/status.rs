//! A snapshot of the engine for operators: queues, workers, pool, budget, resident SRS and
//! job counts, as a struct, as JSON and as Prometheus text.

use serde::Serialize;

/// Queue depth and partitions in flight of one priority class.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ClassStatus {
    /// Class name.
    pub class: &'static str,
    /// Partitions waiting for synthesis.
    pub queued: usize,
    /// Partitions synthesized and waiting for a prover.
    pub synthesized: usize,
    /// Partitions being synthesized or proved.
    pub in_flight: usize,
}

/// Busy time of one worker since open.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkerStatus {
    /// "synth-0", "prover-0", "finalizer" (then "finalizer-1", … with several devices).
    pub name: String,
    /// Milliseconds spent working.
    pub busy_ms: f64,
    /// busy / wall since open.
    pub utilisation: f64,
}

impl WorkerStatus {
    /// `busy_ms` of `name` over `wall_ms` since open.
    pub fn new(name: String, busy_ms: f64, wall_ms: f64) -> Self {
        let utilisation = if wall_ms > 0.0 {
            busy_ms / wall_ms
        } else {
            0.0
        };
        Self {
            name,
            busy_ms,
            utilisation,
        }
    }
}

/// The engine at one instant.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Status {
    /// Backend in use ("cpu", "cuda:0").
    pub backend: String,
    /// Whether `close` was called.
    pub closed: bool,
    /// Milliseconds since open.
    pub uptime_ms: f64,
    /// Per priority class, highest first.
    pub classes: Vec<ClassStatus>,
    /// Per worker.
    pub workers: Vec<WorkerStatus>,
    /// Per GPU ("cuda:0"): time its kernels ran (NTTs, MSMs; overlapping work counted once)
    /// and that over wall time since open. Empty on the CPU backend.
    pub devices: Vec<WorkerStatus>,
    /// Buffer sets in the pool.
    pub pool_buffers: usize,
    /// Buffer sets free now.
    pub pool_free: usize,
    /// Bytes of the pool's buffers.
    pub pool_bytes: u64,
    /// Times a synthesis worker had work but no free buffer.
    pub pool_waits: u64,
    /// Times CRITICAL work waited for memory (0 while its reserved headroom suffices).
    pub critical_memory_waits: u64,
    /// Memory budget limit.
    pub budget_limit: u64,
    /// Bytes charged now.
    pub budget_used: u64,
    /// Highest charge since open.
    pub budget_high_water: u64,
    /// Parameter sets being decoded now (their bytes are charged already).
    pub srs_loading: Vec<String>,
    /// Resident parameter sets: (key, bytes, partitions using it).
    pub srs_resident: Vec<(String, u64, usize)>,
    /// Jobs submitted and not yet finished.
    pub jobs_active: usize,
    /// Job records held: active jobs, and ended ones whose outcome was not yet taken by
    /// `await` or released (bounded; returns to 0 when every job was awaited or released).
    pub jobs_held: usize,
    /// Jobs finished with a verified proof.
    pub completed: u64,
    /// Jobs finished with an error.
    pub failed: u64,
    /// Jobs cancelled.
    pub cancelled: u64,
}

impl Status {
    /// Busy milliseconds of the prover workers and finalizers together (the backend's side of
    /// the pipeline; over wall time this can exceed 1, as start and finish overlap).
    pub fn proving_busy_ms(&self) -> f64 {
        self.workers
            .iter()
            .filter(|w| w.name.starts_with("prover") || w.name.starts_with("finalizer"))
            .map(|w| w.busy_ms)
            .sum()
    }

    /// Prometheus text exposition of the same figures.
    pub fn to_prometheus(&self) -> String {
        let mut out = String::new();
        let mut gauge = |name: &str, help: &str, samples: Vec<(String, f64)>| {
            out.push_str(&format!(
                "# HELP cuzk_{name} {help}\n# TYPE cuzk_{name} gauge\n"
            ));
            for (labels, v) in samples {
                out.push_str(&format!("cuzk_{name}{labels} {v}\n"));
            }
        };
        let per_class = |f: fn(&ClassStatus) -> usize| {
            self.classes
                .iter()
                .map(|c| (format!("{{class=\"{}\"}}", c.class), f(c) as f64))
                .collect()
        };
        gauge(
            "queued_partitions",
            "Partitions waiting for synthesis.",
            per_class(|c| c.queued),
        );
        gauge(
            "synthesized_partitions",
            "Partitions waiting for a prover.",
            per_class(|c| c.synthesized),
        );
        gauge(
            "in_flight_partitions",
            "Partitions being synthesized or proved.",
            per_class(|c| c.in_flight),
        );
        gauge(
            "worker_utilisation",
            "Busy time over wall time since open.",
            self.workers
                .iter()
                .map(|w| (format!("{{worker=\"{}\"}}", w.name), w.utilisation))
                .collect(),
        );
        gauge(
            "device_utilisation",
            "GPU kernel busy time over wall time since open.",
            self.devices
                .iter()
                .map(|d| (format!("{{device=\"{}\"}}", d.name), d.utilisation))
                .collect(),
        );
        let one = |v: f64| vec![(String::new(), v)];
        gauge(
            "pool_free_buffers",
            "Free a/b/c buffer sets.",
            one(self.pool_free as f64),
        );
        gauge(
            "pool_waits_total",
            "Times synthesis waited for a buffer.",
            one(self.pool_waits as f64),
        );
        gauge(
            "budget_used_bytes",
            "Bytes charged to the memory budget.",
            one(self.budget_used as f64),
        );
        gauge(
            "budget_high_water_bytes",
            "Highest budget charge since open.",
            one(self.budget_high_water as f64),
        );
        gauge(
            "budget_limit_bytes",
            "Memory budget.",
            one(self.budget_limit as f64),
        );
        gauge(
            "jobs_completed_total",
            "Jobs finished with a verified proof.",
            one(self.completed as f64),
        );
        gauge(
            "jobs_failed_total",
            "Jobs finished with an error.",
            one(self.failed as f64),
        );
        gauge(
            "jobs_cancelled_total",
            "Jobs cancelled.",
            one(self.cancelled as f64),
        );
        out
    }
}
