//! `cargo bench --bench timing [-- --quick]`: does a selection's running time tell neighbouring datasets
//! apart? A dudect-style leakage test (Reparaz, Balasch & Verbauwhede, "Dude, is my code constant time?",
//! DATE 2017): calls on a *fixed* input and on its *neighbour* are interleaved in a random order, each timed
//! with the cycle counter, and Welch's t-test compares the two classes of timings — on all measurements and
//! on those below several percentiles (cropping removes the long tail of interrupts, which hides small
//! differences). |t| above 4.5 means the timings differ beyond chance (at 10⁶ measurements, a difference
//! of a fraction of a cycle).
//!
//! The pairs of neighbours (ε = 1, Δ = 1, n = 100), as in issue 20:
//! - "tied": 100 equal counts, against the same with one of them + 1 (its position random per call);
//! - "uniform": scores uniform in [0, 20), against the same with the best lowered by 1;
//! - "normal": N(0, 10²) scores, against the same with the best lowered by 1.
//!
//! Every selector runs in isochronous arithmetic (the target: |t| < 4.5) and, for contrast, in exact
//! arithmetic (printed beside it: large |t| — the timing leak the isochronous mode removes).
//!
//! Options: `--quick` (10⁵ measurements per row instead of 10⁶), `--isochronous-only` (skip the exact runs,
//! which take as long again), `--only TEXT` (the rows whose mechanism name contains TEXT; repeatable).
//!
//! Not a test: nothing asserts; the verdicts are printed.

use dpmo::dampen::Dampening;
use dpmo::multi::{select_privagg, AggSensitivity};
use dpmo::rng::{Generator, GeneratorState};
use dpmo::select::{select, select_top_k, Arithmetic, Selector};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use rand_core::Rng;
use std::hint::black_box;

const N: usize = 100;

fn chacha(seed: u8) -> Generator {
    GeneratorState::chacha20([seed; 32]).load().expect("fresh state")
}

/// The cycle counter (serialised by lfence on x86-64), or nanoseconds elsewhere.
#[inline(always)]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: mfence, lfence and rdtsc have no preconditions on x86-64.
    unsafe {
        // Every store before the clock (the input's preparation) drained first, so that none is still in
        // flight when the selection reads its input.
        core::arch::x86_64::_mm_mfence();
        core::arch::x86_64::_mm_lfence();
        let t = core::arch::x86_64::_rdtsc();
        core::arch::x86_64::_mm_lfence();
        t
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::time::Instant;
        thread_local!(static START: Instant = Instant::now());
        START.with(|s| s.elapsed().as_nanos() as u64)
    }
}

/// Welch's t-statistic of two classes, accumulated online (Welford).
#[derive(Clone, Copy, Default)]
struct Welch {
    n: [f64; 2],
    mean: [f64; 2],
    m2: [f64; 2],
}

impl Welch {
    fn push(&mut self, class: usize, x: f64) {
        self.n[class] += 1.0;
        let d = x - self.mean[class];
        self.mean[class] += d / self.n[class];
        self.m2[class] += d * (x - self.mean[class]);
    }

    fn t(&self) -> f64 {
        if self.n[0] < 2.0 || self.n[1] < 2.0 {
            return 0.0;
        }
        let v0 = self.m2[0] / (self.n[0] - 1.0);
        let v1 = self.m2[1] / (self.n[1] - 1.0);
        (self.mean[0] - self.mean[1]) / (v0 / self.n[0] + v1 / self.n[1]).sqrt()
    }
}

/// The neighbouring score sets of one pair: the fixed one, and a function drawing its neighbour.
fn pair(kind: &str, g: &mut Generator) -> Vec<f64> {
    match kind {
        "tied" => vec![5.0; N],
        "uniform" => (0..N).map(|_| 20.0 * dpmo::sample::uniform_open01(g)).collect(),
        _ => (0..N)
            .map(|_| {
                let (u, v) = (dpmo::sample::uniform_open01(g), dpmo::sample::uniform_open01(g));
                10.0 * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            })
            .collect(),
    }
}

/// The fixed input (`step` = 0) or its neighbour (`step` = 1) in `out`, by the same instructions and stores
/// either way: only the value stored differs. (Copying the fixed input from one buffer and the neighbour
/// from another, just written, made the two classes differ in the harness itself — a store-forwarding
/// stall before the clock starts for one class only — which showed up as a leak of the selection.)
fn neighbour(kind: &str, fixed: &[f64], g: &mut Generator, out: &mut [f64], step: f64) {
    out.copy_from_slice(fixed);
    match kind {
        "tied" => out[dpmo::sample::uniform_index(g, N)] += step,
        _ => {
            let best = (0..N).max_by(|&a, &b| fixed[a].total_cmp(&fixed[b])).unwrap_or(0);
            out[best] -= step;
        }
    }
}

/// The largest |t| over all measurements and over those below the 50th, 75th, 90th, 95th and 99th
/// percentiles (of both classes together), for `measurements` interleaved calls of `call`.
fn leakage(kind: &str, measurements: usize, call: &mut dyn FnMut(&[f64]) -> usize) -> f64 {
    let mut g = chacha(7);
    let fixed = pair(kind, &mut g);
    let (mut other, mut input) = (vec![0.0; N], vec![0.0; N]);
    let mut samples: Vec<(u8, u32)> = Vec::with_capacity(measurements);
    for _ in 0..measurements {
        let class = (g.next_u32() & 1) as u8;
        // The input is prepared before the clock starts, by the same instructions for both classes, in one
        // buffer (two buffers at two addresses would time differently for reasons of their own).
        neighbour(kind, &fixed, &mut g, &mut other, f64::from(class));
        input.copy_from_slice(&other);
        let t0 = ticks();
        black_box(call(black_box(&input)));
        let t1 = ticks();
        samples.push((class, (t1 - t0).min(u64::from(u32::MAX)) as u32));
    }
    let mut sorted: Vec<u32> = samples.iter().map(|s| s.1).collect();
    sorted.sort_unstable();
    let mut worst = 0.0f64;
    for p in [1.0, 0.5, 0.75, 0.9, 0.95, 0.99] {
        let cut = sorted[((sorted.len() - 1) as f64 * p) as usize];
        let mut w = Welch::default();
        for &(c, x) in &samples {
            if x <= cut {
                w.push(c as usize, f64::from(x));
            }
        }
        worst = worst.max(w.t().abs());
    }
    worst
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let iso_only = args.iter().any(|a| a == "--isochronous-only");
    let only: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--only")
        .map(|w| w[1].as_str())
        .collect();
    let measurements = if quick { 100_000 } else { 1_000_000 };
    println!(
        "Timing leakage (dudect-style Welch t, fixed vs neighbour, n = {N}, {measurements} measurements per row; \
         |t| < 4.5: no leak detected). Load average: {}",
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    );
    println!(
        "{:<26} {:<8} {:>14} {:>12}   verdict",
        "mechanism", "pair", "isochronous |t|", "exact |t|"
    );
    #[derive(Clone, Copy, PartialEq)]
    enum Call {
        One,
        TopK,
        Local(Dampening),
        Agg,
        Pareto,
    }
    let selectors = [
        ("exponential", Selector::Exponential, Call::One),
        ("permute-and-flip", Selector::PermuteAndFlip, Call::One),
        ("noisy-max Gumbel", Selector::NoisyMax(dpmo::Noise::Gumbel), Call::One),
        (
            "noisy-max Exponential",
            Selector::NoisyMax(dpmo::Noise::Exponential),
            Call::One,
        ),
        ("top-3 exponential", Selector::Exponential, Call::TopK),
        ("top-3 permute-and-flip", Selector::PermuteAndFlip, Call::TopK),
        (
            "local dampening plain",
            Selector::Exponential,
            Call::Local(Dampening::Plain),
        ),
        (
            "local dampening shifted",
            Selector::Exponential,
            Call::Local(Dampening::Shifted),
        ),
        ("PrivAgg global, 2 obj.", Selector::Exponential, Call::Agg),
        ("PrivPareto global, 2 obj.", Selector::Exponential, Call::Pareto),
    ];
    // A table δ of 4 distances for local dampening; PrivAgg weighs each score and its mirror image.
    let table: Vec<f64> = (0..4 * N).map(|i| [0.5, 1.0, 0.25, 2.0][i % 4]).collect();
    let delta = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: 4,
        },
        2.0,
        4,
        N,
    )
    .expect("valid");
    let (mut leaks, mut rows) = (0, 0);
    for (name, selector, how) in selectors {
        if !only.is_empty() && !only.iter().any(|o| name.contains(o)) {
            continue;
        }
        for kind in ["tied", "uniform", "normal"] {
            let mut t = [0.0; 2];
            for (i, arithmetic) in [Arithmetic::Isochronous, Arithmetic::Exact].into_iter().enumerate() {
                if how == Call::Pareto && arithmetic == Arithmetic::Isochronous {
                    // PrivPareto has no isochronous mode (its Pareto score sorts the data): only its leak.
                    t[i] = f64::NAN;
                    continue;
                }
                if iso_only && arithmetic == Arithmetic::Exact {
                    t[i] = f64::NAN;
                    continue;
                }
                let mut g = chacha(11);
                let (mut perm, mut index, mut work, mut out) =
                    (vec![0usize; N], vec![0usize; N], vec![0.0; N], [0usize; 3]);
                let (mut values, mut indices, mut pair) = (vec![0.0; 4 * N], vec![0usize; 2 * N], vec![0.0; 2 * N]);
                let mut call = |s: &[f64]| match how {
                    Call::TopK => {
                        select_top_k(
                            &mut g, selector, s, 1.0, 1.0, &mut out, &mut work, &mut index, &mut perm, arithmetic,
                        )
                        .expect("valid");
                        out[0]
                    }
                    Call::One => select(&mut g, selector, s, 1.0, 1.0, &mut perm, arithmetic).expect("valid"),
                    Call::Local(d) => dpmo::select_local_dampening(
                        &mut g,
                        s,
                        &delta,
                        d,
                        selector,
                        1.0,
                        &mut values,
                        &mut perm,
                        arithmetic,
                    )
                    .expect("valid"),
                    Call::Agg => {
                        for (r, &x) in s.iter().enumerate() {
                            pair[2 * r] = x;
                            pair[2 * r + 1] = s[N - 1 - r];
                        }
                        let mut one = [0usize; 1];
                        let globals = AggSensitivity::Global(&[1.0, 1.0]);
                        select_privagg(
                            &mut g,
                            &pair,
                            &[1.0, 0.5],
                            globals,
                            selector,
                            1.0,
                            &mut one,
                            &mut values,
                            &mut indices,
                            arithmetic,
                        )
                        .expect("valid");
                        one[0]
                    }
                    Call::Pareto => {
                        for (r, &x) in s.iter().enumerate() {
                            pair[2 * r] = x;
                            pair[2 * r + 1] = s[N - 1 - r];
                        }
                        let mut one = [0usize; 1];
                        let (mut pv, mut pi) = (vec![0.0; 8 * N], vec![0usize; 64 * N]);
                        dpmo::multi::select_privpareto(
                            &mut g,
                            &pair,
                            2,
                            dpmo::Dominance::Textbook,
                            dpmo::multi::ParetoSensitivity::Global,
                            selector,
                            1.0,
                            &mut one,
                            &mut pv,
                            &mut pi,
                            arithmetic,
                        )
                        .expect("valid");
                        one[0]
                    }
                };
                t[i] = leakage(kind, measurements, &mut call);
            }
            let verdict = if t[0].is_nan() {
                "no isochronous mode"
            } else if t[0] < 4.5 {
                "no leak detected"
            } else {
                "LEAK"
            };
            leaks += usize::from(t[0] >= 4.5);
            rows += usize::from(!t[0].is_nan());
            println!("{name:<26} {kind:<8} {:>14.2} {:>12.2}   {verdict}", t[0], t[1]);
        }
    }
    println!("{leaks} of {rows} isochronous rows show a leak (target: none).");
}
