//! Engine configuration: defaults that work on a laptop, a TOML file or string, and `CUZK_*`
//! environment overrides.

use serde::Deserialize;

/// How the engine is sized.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// CPU synthesis workers (default: half the cores, at least 1).
    pub synthesis_workers: usize,
    /// Prover workers (default 1; `open_configured` raises it to the number of devices). The
    /// engine runs prover_workers / devices finalizer threads per device (at least one) for
    /// `prove_finish` and verification.
    pub prover_workers: usize,
    /// a/b/c buffer sets in the pool (default: synthesis + prover workers + 1). Synthesis
    /// cannot run further ahead than this.
    pub pool_buffers: usize,
    /// Constraints each pool buffer is sized for at open (0: sized by the first use).
    pub buffer_constraints: usize,
    /// Memory budget in bytes for SRS, pool buffers and synthesized partitions (default: 3/4
    /// of physical memory).
    pub memory_budget: u64,
    /// Call `malloc_trim` after each job (Linux; outside every lock).
    pub malloc_trim: bool,
    /// Prover backend: "auto" (the first listed GPU when one is usable, else the CPU), "cpu",
    /// or "cuda" (fail to open without a usable GPU).
    pub backend: String,
    /// CUDA device ordinals to use (empty: every device found). With several, partitions go
    /// to the device with the fewest in flight; each device keeps its own resident SRS.
    pub devices: Vec<u32>,
    /// Retry a partition on the CPU when the GPU fails before its a/b/c buffers are released.
    pub cpu_fallback: bool,
    /// Seconds after which a LOW job waiting for synthesis is scheduled as NORMAL (so
    /// background work cannot starve forever).
    pub low_aging_secs: u64,
    /// Synthesize through each circuit's pre-compiled constraint system (recorded once per
    /// circuit shape, saved beside its parameters, kept resident with them and charged to
    /// the budget): witness generation plus a parallel sparse product instead of evaluating
    /// every constraint as the circuit enforces it. Proofs are identical either way.
    pub pce: bool,
    /// Within a class, start a job whose partitions synthesize slower before the work ahead
    /// of it runs out, so the provers do not wait for it (`engine::lookahead`); off: FIFO.
    pub lookahead: bool,
    /// For this many seconds after a parameter set of NORMAL or LOW work (PoRep, SnapDeals) is
    /// loaded, jobs of that class whose sets are not resident wait behind those whose are: a
    /// node that holds one 32 GiB set at a time then switches sets at most once per period
    /// instead of reloading 35-47 GB (about a minute) at every job; 0: no grouping. Only with
    /// `lookahead`; WindowPoSt and WinningPoSt are never held.
    pub affinity_secs: u64,
}

impl Default for Config {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let synthesis_workers = (cores / 2).max(1);
        Self {
            synthesis_workers,
            prover_workers: 1,
            pool_buffers: synthesis_workers + 2,
            buffer_constraints: 0,
            memory_budget: physical_memory() / 4 * 3,
            malloc_trim: cfg!(target_os = "linux"),
            backend: "auto".into(),
            devices: Vec::new(),
            cpu_fallback: true,
            low_aging_secs: 600,
            pce: true,
            lookahead: true,
            affinity_secs: DEFAULT_AFFINITY_SECS,
        }
    }
}

/// Default of [`Config::affinity_secs`] (also what `cuzk plan` counts on).
pub const DEFAULT_AFFINITY_SECS: u64 = 1800;

/// The most synthesis workers, prover workers or pool buffer sets an engine accepts (far
/// above what any node uses: one per core or device).
pub const MAX_WORKERS_OR_BUFFERS: usize = 4096;

/// This machine's physical memory in bytes (8 GiB when the OS does not say).
pub fn physical_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && size > 0 {
        pages as u64 * size as u64
    } else {
        8 << 30
    }
}

impl Config {
    /// Parses TOML (unknown keys are errors; missing keys keep their defaults).
    pub fn from_toml(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| format!("invalid engine config: {e}"))
    }

    /// Applies `CUZK_SYNTHESIS_WORKERS`, `CUZK_PROVER_WORKERS`, `CUZK_POOL_BUFFERS`,
    /// `CUZK_BUFFER_CONSTRAINTS`, `CUZK_MEMORY_BUDGET`, `CUZK_MALLOC_TRIM`, `CUZK_BACKEND`,
    /// `CUZK_DEVICES` (comma-separated ordinals), `CUZK_CPU_FALLBACK`, `CUZK_PCE`,
    /// `CUZK_LOOKAHEAD` and `CUZK_AFFINITY_SECS` when set.
    pub fn with_env_overrides(mut self) -> Result<Self, String> {
        fn var<T: std::str::FromStr>(name: &str) -> Result<Option<T>, String> {
            match std::env::var(name) {
                Ok(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("{name}={v} is not valid")),
                Err(_) => Ok(None),
            }
        }
        if let Some(v) = var("CUZK_SYNTHESIS_WORKERS")? {
            self.synthesis_workers = v;
        }
        if let Some(v) = var("CUZK_PROVER_WORKERS")? {
            self.prover_workers = v;
        }
        if let Some(v) = var("CUZK_POOL_BUFFERS")? {
            self.pool_buffers = v;
        }
        if let Some(v) = var("CUZK_BUFFER_CONSTRAINTS")? {
            self.buffer_constraints = v;
        }
        if let Some(v) = var("CUZK_MEMORY_BUDGET")? {
            self.memory_budget = v;
        }
        if let Some(v) = var("CUZK_MALLOC_TRIM")? {
            self.malloc_trim = v;
        }
        if let Some(v) = var::<String>("CUZK_BACKEND")? {
            self.backend = v;
        }
        if let Ok(v) = std::env::var("CUZK_DEVICES") {
            self.devices = v
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .map(|s| s.trim().parse())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("CUZK_DEVICES={v} is not a list of device numbers"))?;
        }
        if let Some(v) = var("CUZK_CPU_FALLBACK")? {
            self.cpu_fallback = v;
        }
        if let Some(v) = var("CUZK_PCE")? {
            self.pce = v;
        }
        if let Some(v) = var("CUZK_LOOKAHEAD")? {
            self.lookahead = v;
        }
        if let Some(v) = var("CUZK_AFFINITY_SECS")? {
            self.affinity_secs = v;
        }
        Ok(self)
    }

    /// Rejects configurations that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        if self.synthesis_workers == 0 || self.prover_workers == 0 || self.pool_buffers == 0 {
            return Err(
                "synthesis_workers, prover_workers and pool_buffers must be at least 1".into(),
            );
        }
        // Each worker is a thread and each buffer set a/b/c memory: a typo must not spawn a
        // million threads inside the node.
        for (key, value) in [
            ("synthesis_workers", self.synthesis_workers),
            ("prover_workers", self.prover_workers),
            ("pool_buffers", self.pool_buffers),
        ] {
            if value > MAX_WORKERS_OR_BUFFERS {
                return Err(format!("{key} = {value}: at most {MAX_WORKERS_OR_BUFFERS}"));
            }
        }
        let mut devices = self.devices.clone();
        devices.sort_unstable();
        if devices.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("devices = {:?} lists a device twice", self.devices));
        }
        if !matches!(self.backend.as_str(), "auto" | "cpu" | "cuda") {
            return Err(format!(
                "backend = \"{}\": expected \"auto\", \"cpu\" or \"cuda\"",
                self.backend
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_overrides_defaults_and_rejects_unknown_keys() {
        let c = Config::from_toml("synthesis_workers = 3\nmemory_budget = 1000\nlookahead = false")
            .unwrap();
        assert_eq!(c.synthesis_workers, 3);
        assert!(!c.lookahead && Config::default().lookahead);
        assert_eq!(Config::default().affinity_secs, 1800);
        assert_eq!(c.memory_budget, 1000);
        assert_eq!(c.prover_workers, Config::default().prover_workers);
        assert!(Config::from_toml("synthesis_wrokers = 3").is_err());
        assert!(Config {
            pool_buffers: 0,
            ..Config::default()
        }
        .validate()
        .is_err());
    }

    #[test]
    fn backend_keys_parse_and_unknown_backends_are_rejected() {
        let c = Config::from_toml("backend = \"cuda\"\ndevices = [1, 0]\ncpu_fallback = false")
            .unwrap();
        assert_eq!(
            (c.backend.as_str(), c.devices.as_slice(), c.cpu_fallback),
            ("cuda", &[1, 0][..], false)
        );
        assert!(c.validate().is_ok());
        let d = Config::default();
        assert_eq!((d.backend.as_str(), d.cpu_fallback), ("auto", true));
        assert!(d.devices.is_empty());
        let bad = Config {
            backend: "opencl".into(),
            ..Config::default()
        };
        assert!(bad.validate().unwrap_err().contains("opencl"));
        let twice = Config::from_toml("devices = [0, 1, 0]").unwrap();
        assert!(twice.validate().unwrap_err().contains("twice"));
    }
}
