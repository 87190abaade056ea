//! How long a GPU has been working: the union of the intervals in which it ran our kernels
//! (quotient NTTs timed with CUDA events, MSMs timed around their blocking calls), so work that
//! overlaps (the next partition's NTTs during this one's MSMs) is counted once. This is the
//! "kernel busy time" of the benchmarks, `busy / wall` the device utilisation.

use std::sync::Mutex;
use std::time::Instant;

/// Recent intervals kept unmerged, so one that is reported late (an NTT learned of only when
/// its partition finishes) still merges exactly; older ones are folded into the total.
const WINDOW: usize = 64;

/// The device's busy time since it was opened.
pub struct BusyClock {
    origin: Instant,
    inner: Mutex<Intervals>,
}

#[derive(Default)]
struct Intervals {
    /// Busy milliseconds of intervals folded out of the window (all end before `folded_to`).
    folded_ms: f64,
    /// Everything before this (ms since origin) is accounted for in `folded_ms`.
    folded_to: f64,
    /// Disjoint recent intervals (ms since origin), sorted by start.
    recent: Vec<(f64, f64)>,
}

impl BusyClock {
    /// A clock with nothing recorded.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
            inner: Mutex::new(Intervals::default()),
        }
    }

    fn ms(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e3
    }

    /// Records that the device worked from `from` for `ms` milliseconds.
    pub fn add(&self, from: Instant, ms: f64) {
        let start = self.ms(from);
        self.add_ms(start, start + ms.max(0.0));
    }

    fn add_ms(&self, start: f64, end: f64) {
        let mut v = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // What precedes the folded horizon is already counted.
        let start = start.max(v.folded_to);
        if end <= start {
            return;
        }
        let (mut s, mut e) = (start, end);
        v.recent.retain(|&(a, b)| {
            let overlaps = a <= e && s <= b;
            if overlaps {
                s = s.min(a);
                e = e.max(b);
            }
            !overlaps
        });
        let at = v.recent.partition_point(|&(a, _)| a < s);
        v.recent.insert(at, (s, e));
        while v.recent.len() > WINDOW {
            let (a, b) = v.recent.remove(0);
            v.folded_ms += b - a;
            v.folded_to = b;
        }
    }

    /// Total busy milliseconds recorded so far.
    pub fn busy_ms(&self) -> f64 {
        let v = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        v.folded_ms + v.recent.iter().map(|(a, b)| b - a).sum::<f64>()
    }
}

impl Default for BusyClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_late_intervals_count_once() {
        let c = BusyClock::new();
        c.add_ms(0.0, 10.0);
        c.add_ms(20.0, 30.0);
        c.add_ms(5.0, 12.0); // overlaps the first
        c.add_ms(14.0, 16.0); // late, in a gap
        c.add_ms(21.0, 29.0); // inside the second
        assert!((c.busy_ms() - (12.0 + 2.0 + 10.0)).abs() < 1e-9);
        c.add_ms(11.0, 21.0); // bridges everything
        assert!((c.busy_ms() - 30.0).abs() < 1e-9);
    }

    #[test]
    fn old_intervals_fold_into_the_total() {
        let c = BusyClock::new();
        for k in 0..1000 {
            let s = k as f64 * 10.0;
            c.add_ms(s, s + 4.0);
        }
        assert!((c.busy_ms() - 4000.0).abs() < 1e-6);
        assert!(c.inner.lock().unwrap().recent.len() <= WINDOW);
        // Something before the folded horizon is not counted twice.
        c.add_ms(0.0, 3.0);
        assert!((c.busy_ms() - 4000.0).abs() < 1e-6);
    }
}
