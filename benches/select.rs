//! `make bench`: selections per second of every selector for n = 10^3 … 10^7, and of local dampening with
//! a table δ, each printed beside a simple reference implementation timed in the same run (ratio < 1 means
//! the library is faster). Not a test: nothing here asserts a time.

use dpmo::dampen::Dampening;
use dpmo::select::{select, Arithmetic, Noise, Selector};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{sample, select_local_dampening};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Mean time of `f` over enough repetitions to fill about `budget`.
fn time(budget: Duration, mut f: impl FnMut() -> usize) -> Duration {
    let start = Instant::now();
    let mut reps = 0u32;
    while reps < 3 || start.elapsed() < budget {
        black_box(f());
        reps += 1;
    }
    start.elapsed() / reps
}

/// The textbook exponential mechanism: weights exp(ε s / 2Δ) straight from the definition, one pass to sum,
/// one pass to invert the CDF. (It overflows for large scores; the benchmark scores are small.)
fn reference_exponential<R: Rng>(rng: &mut R, s: &[f64], delta: f64, eps: f64) -> usize {
    let w: Vec<f64> = s.iter().map(|x| (eps * x / (2.0 * delta)).exp()).collect();
    let total: f64 = w.iter().sum();
    let mut target = sample::uniform_open01(rng) * total;
    for (i, x) in w.iter().enumerate() {
        if target < *x {
            return i;
        }
        target -= x;
    }
    s.len() - 1
}

/// Textbook permute-and-flip: shuffle everything first, then flip coins.
fn reference_permute_and_flip<R: Rng>(rng: &mut R, s: &[f64], delta: f64, eps: f64) -> usize {
    let max = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut order: Vec<usize> = (0..s.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, sample::uniform_index(rng, i + 1));
    }
    for r in order {
        if sample::uniform_open01(rng) <= (eps * (s[r] - max) / (2.0 * delta)).exp() {
            return r;
        }
    }
    0
}

/// Textbook report-noisy-max: materialise the noisy scores, then take the argmax.
fn reference_noisy_max<R: Rng>(rng: &mut R, s: &[f64], delta: f64, eps: f64, noise: Noise) -> usize {
    let b = 2.0 * delta / eps;
    let noisy: Vec<f64> = s
        .iter()
        .map(|x| {
            x + b * match noise {
                Noise::Laplace => sample::laplace(rng),
                Noise::Gumbel => sample::gumbel(rng),
                Noise::Exponential => sample::exponential(rng),
            }
        })
        .collect();
    noisy
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|p| p.0)
        .unwrap_or(0)
}

fn main() {
    let budget = Duration::from_millis(if std::env::args().any(|a| a == "--quick") {
        20
    } else {
        300
    });
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
    let (delta, eps) = (1.0, 1.0);
    println!("Global selectors (scores uniform in [0, 100), Δ = 1, ε = 1). ratio = library / reference time.");
    println!(
        "{:<26} {:>10} {:>12} {:>14} {:>10} {:>8}",
        "selector", "n", "sel/s", "ns/candidate", "ref ns/c", "ratio"
    );
    for exp in 3..=7 {
        let n = 10usize.pow(exp);
        let scores: Vec<f64> = (0..n).map(|_| 100.0 * sample::uniform_open01(&mut rng)).collect();
        let mut perm = vec![0usize; n];
        let cases: [(&str, Selector, Arithmetic); 9] = [
            ("exponential (exact)", Selector::Exponential, Arithmetic::Exact),
            ("exponential (float)", Selector::Exponential, Arithmetic::Float),
            ("permute-and-flip (exact)", Selector::PermuteAndFlip, Arithmetic::Exact),
            ("permute-and-flip (float)", Selector::PermuteAndFlip, Arithmetic::Float),
            (
                "noisy-max Laplace (float)",
                Selector::NoisyMax(Noise::Laplace),
                Arithmetic::Float,
            ),
            (
                "noisy-max Gumbel (exact)",
                Selector::NoisyMax(Noise::Gumbel),
                Arithmetic::Exact,
            ),
            (
                "noisy-max Gumbel (float)",
                Selector::NoisyMax(Noise::Gumbel),
                Arithmetic::Float,
            ),
            (
                "noisy-max Exp (exact)",
                Selector::NoisyMax(Noise::Exponential),
                Arithmetic::Exact,
            ),
            (
                "noisy-max Exp (float)",
                Selector::NoisyMax(Noise::Exponential),
                Arithmetic::Float,
            ),
        ];
        for (name, sel, arithmetic) in cases {
            let t = time(budget, || {
                select(&mut rng, sel, &scores, delta, eps, &mut perm, arithmetic).unwrap_or(0)
            });
            let r = time(budget, || match sel {
                Selector::Exponential => reference_exponential(&mut rng, &scores, delta, eps),
                Selector::PermuteAndFlip => reference_permute_and_flip(&mut rng, &scores, delta, eps),
                Selector::NoisyMax(noise) => reference_noisy_max(&mut rng, &scores, delta, eps, noise),
            });
            report(name, n, t, r);
        }
    }

    println!("\nLocal dampening, table δ with T = 4 columns (Δ = 10), then the exponential mechanism.");
    println!("reference = dampening written against the definition with a prefix-sum array per candidate.");
    println!(
        "{:<26} {:>10} {:>12} {:>14} {:>10} {:>8}",
        "mechanism", "n", "sel/s", "ns/candidate", "ref ns/c", "ratio"
    );
    for exp in 3..=6 {
        let n = 10usize.pow(exp);
        let cols = 4;
        let u: Vec<f64> = (0..n).map(|_| 50.0 * sample::uniform_open01(&mut rng)).collect();
        let table: Vec<f64> = (0..n * cols)
            .map(|i| 1.0 + (i % cols) as f64 + sample::uniform_open01(&mut rng))
            .collect();
        let d = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns: cols,
            },
            10.0,
            cols,
            n,
        )
        .unwrap();
        let mut scratch = vec![0.0; 2 * n];
        let mut perm = vec![0usize; n];
        for (name, kind, arithmetic) in [
            ("local dampening (exact)", Dampening::Plain, Arithmetic::Exact),
            ("local dampening (float)", Dampening::Plain, Arithmetic::Float),
            ("shifted (exact)", Dampening::Shifted, Arithmetic::Exact),
            ("shifted (float)", Dampening::Shifted, Arithmetic::Float),
        ] {
            let t = time(budget, || {
                select_local_dampening(
                    &mut rng,
                    &u,
                    &d,
                    kind,
                    Selector::Exponential,
                    eps,
                    &mut scratch,
                    &mut perm,
                    arithmetic,
                )
                .unwrap_or(0)
            });
            let r = time(budget, || {
                let damp: Vec<f64> = (0..n)
                    .map(|i| reference_dampen(u[i], &table[i * cols..(i + 1) * cols], 10.0, kind))
                    .collect();
                reference_exponential(&mut rng, &damp, 1.0, eps)
            });
            report(name, n, t, r);
        }
    }
}

/// Def. 3.6 and the shifted closed form written plainly: breakpoints materialised, then a linear scan.
fn reference_dampen(u: f64, row: &[f64], global: f64, kind: Dampening) -> f64 {
    let delta: Vec<f64> = row.iter().map(|d| d.min(global)).collect();
    if kind == Dampening::Shifted {
        return u / global - delta.iter().map(|d| 1.0 - d / global).sum::<f64>();
    }
    let mut b = vec![0.0];
    for d in &delta {
        b.push(b.last().copied().unwrap_or(0.0) + d);
    }
    let t = delta.len();
    for i in 0..t {
        if u >= b[i] && u < b[i + 1] {
            return i as f64 + (u - b[i]) / (b[i + 1] - b[i]);
        }
    }
    t as f64 + (u - b[t]) / global
}

fn report(name: &str, n: usize, lib: Duration, reference: Duration) {
    let per = lib.as_secs_f64() * 1e9 / n as f64;
    let per_ref = reference.as_secs_f64() * 1e9 / n as f64;
    println!(
        "{:<26} {:>10} {:>12.1} {:>14.2} {:>10.2} {:>8.2}",
        name,
        n,
        1.0 / lib.as_secs_f64(),
        per,
        per_ref,
        lib.as_secs_f64() / reference.as_secs_f64()
    );
}
