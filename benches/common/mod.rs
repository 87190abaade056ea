//! Shared helpers for the benchmarks: interleaved timing, medians, and the one BENCH line per
//! case that DESIGN.md section 8 specifies. Everything but BENCH lines goes to stderr.

// Each benchmark binary uses a subset of these helpers.
#![allow(dead_code)]

use std::time::Instant;

/// Milliseconds taken by `f`, with its result.
pub fn time_ms<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_secs_f64() * 1e3, out)
}

/// Median of a non-empty sample.
pub fn median(samples: &[f64]) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).expect("no NaN timings"));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Runs `ours` and `base` alternately `runs` times after one warm-up of each; returns medians.
pub fn interleaved(runs: usize, mut ours: impl FnMut(), mut base: impl FnMut()) -> (f64, f64) {
    ours();
    base();
    let (mut o, mut b) = (Vec::new(), Vec::new());
    for i in 0..runs {
        o.push(time_ms(&mut ours).0);
        b.push(time_ms(&mut base).0);
        eprintln!("  run {}: ours {:.1} ms, base {:.1} ms", i + 1, o[i], b[i]);
    }
    (median(&o), median(&b))
}

/// Prints the BENCH line for a comparison (`base` None for ours-only cases).
pub fn report(case: &str, ours: f64, base: Option<f64>, runs: usize, extra: &str) {
    let (base, speedup) = match base {
        Some(b) => (format!("{b:.1}"), format!("{:.2}", b / ours)),
        None => ("NA".into(), "NA".into()),
    };
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(" {extra}")
    };
    println!("BENCH {case} ours={ours:.1} base={base} speedup={speedup} runs={runs}{extra}");
}

/// Whether a case was named in full on the command line (for cases too slow or large to run
/// in every `make bench`).
pub fn named(case: &str) -> bool {
    std::env::args().skip(1).any(|a| a == case)
}

/// Whether a case was selected by the optional filter argument (`cargo bench --bench g -- n20`).
pub fn selected(case: &str) -> bool {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    args.is_empty() || args.iter().any(|a| case.contains(a.as_str()))
}
