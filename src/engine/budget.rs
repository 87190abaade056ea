//! The memory budget: every byte the engine holds (pool buffers, resident SRS, synthesized
//! partitions) is charged here by measured size, and the high-water mark is kept.

/// Bytes charged against a limit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Budget {
    /// The configured limit.
    pub limit: u64,
    /// Bytes charged now.
    pub used: u64,
    /// Highest `used` since open.
    pub high_water: u64,
}

impl Budget {
    /// A budget of `limit` bytes, nothing charged.
    pub fn new(limit: u64) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// Whether `bytes` more fit now.
    pub fn fits(&self, bytes: u64) -> bool {
        self.used.saturating_add(bytes) <= self.limit
    }

    /// Charges `bytes` (callers check `fits` first where the limit must hold).
    pub fn charge(&mut self, bytes: u64) {
        self.used += bytes;
        self.high_water = self.high_water.max(self.used);
    }

    /// Releases `bytes` charged earlier.
    pub fn release(&mut self, bytes: u64) {
        debug_assert!(bytes <= self.used, "releasing more than charged");
        self.used = self.used.saturating_sub(bytes);
    }
}
