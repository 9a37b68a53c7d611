//! Shared helpers for the integration tests: seeded generators, exact probabilities of the mechanisms
//! computed independently of the library, and goodness-of-fit tests at a tiny significance level.
#![allow(dead_code)]

pub mod admissibility;
#[path = "../../src/test_fit.rs"]
pub mod fit;
#[allow(unused_imports)]
pub use admissibility::*;
pub use fit::*;

use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

pub fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// Draws `draws` indices with `f` and counts them.
pub fn histogram(n: usize, draws: usize, mut f: impl FnMut() -> usize) -> Vec<u64> {
    let mut h = vec![0u64; n];
    for _ in 0..draws {
        h[f()] += 1;
    }
    h
}

/// Exponential-mechanism probabilities, straight from the definition (scores small enough for exp).
pub fn exact_exponential(scores: &[f64], sensitivity: f64, epsilon: f64) -> Vec<f64> {
    let w: Vec<f64> = scores
        .iter()
        .map(|s| (epsilon * s / (2.0 * sensitivity)).exp())
        .collect();
    let t: f64 = w.iter().sum();
    w.iter().map(|x| x / t).collect()
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, n - 1);
            out.push(q);
        }
    }
    out
}

/// Permute-and-flip probabilities by enumerating all n! visiting orders (n ≤ 7).
pub fn exact_permute_and_flip(scores: &[f64], sensitivity: f64, epsilon: f64) -> Vec<f64> {
    let n = scores.len();
    assert!(n <= 7);
    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let accept: Vec<f64> = scores
        .iter()
        .map(|s| (epsilon * (s - max) / (2.0 * sensitivity)).exp())
        .collect();
    let perms = permutations(n);
    let mut p = vec![0.0; n];
    for order in &perms {
        let mut still = 1.0;
        for &r in order {
            p[r] += still * accept[r];
            still *= 1.0 - accept[r];
        }
    }
    p.iter().map(|x| x / perms.len() as f64).collect()
}

/// Gauss–Legendre nodes and weights on [0, 1] with `k` points (exact for polynomials of degree < 2k), by
/// Newton's method on the Legendre recurrence.
pub fn gauss_legendre_unit(k: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(k);
    for i in 1..=k {
        let mut x = (std::f64::consts::PI * (i as f64 - 0.25) / (k as f64 + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for j in 2..=k {
                let p2 = ((2 * j - 1) as f64 * x * p1 - (j - 1) as f64 * p0) / j as f64;
                p0 = p1;
                p1 = p2;
            }
            let pk = if k == 1 { x } else { p1 };
            let pk1 = if k == 1 { 1.0 } else { p0 };
            dp = k as f64 * (x * pk - pk1) / (x * x - 1.0);
            let dx = pk / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        let w = 2.0 / ((1.0 - x * x) * dp * dp);
        out.push(((x + 1.0) / 2.0, w / 2.0));
    }
    out
}

/// Permute-and-flip probabilities for any n, from the arrival-time form of a uniform order (McKenna &
/// Sheldon 2020): candidate j arrives at a uniform time T_j, so r is kept iff its coin succeeds and every
/// earlier arrival's failed: P(r) = p_r ∫₀¹ Π_{j≠r} (1 − p_j t) dt, a polynomial of degree n − 1 integrated
/// exactly by Gauss–Legendre quadrature.
pub fn exact_permute_and_flip_integral(scores: &[f64], sensitivity: f64, epsilon: f64) -> Vec<f64> {
    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let accept: Vec<f64> = scores
        .iter()
        .map(|s| (epsilon * (s - max) / (2.0 * sensitivity)).exp())
        .collect();
    permute_and_flip_from_coins(&accept)
}

/// Permute-and-flip probabilities when candidate r is kept with probability `accept[r]` when visited.
pub fn permute_and_flip_from_coins(accept: &[f64]) -> Vec<f64> {
    let n = accept.len();
    let mut p = vec![0.0; n];
    for (t, w) in gauss_legendre_unit(n / 2 + 2) {
        // t < 1 at every node, so every factor is positive.
        let log_all: f64 = accept.iter().map(|&a| (-a * t).ln_1p()).sum();
        for (r, &a) in accept.iter().enumerate() {
            p[r] += w * a * (log_all - (-a * t).ln_1p()).exp();
        }
    }
    p
}

/// Report-noisy-max with Laplace noise of scale b = 2Δ/ε: P(r) = ∫ f(z − s_r) Π_{j≠r} F(z − s_j) dz, by
/// composite Simpson quadrature fine enough for ~1e-10 accuracy.
pub fn exact_noisy_max_laplace(scores: &[f64], sensitivity: f64, epsilon: f64) -> Vec<f64> {
    let b = 2.0 * sensitivity / epsilon;
    let pdf = |z: f64| (-(z.abs()) / b).exp() / (2.0 * b);
    let cdf = |z: f64| {
        if z < 0.0 {
            0.5 * (z / b).exp()
        } else {
            1.0 - 0.5 * (-z / b).exp()
        }
    };
    let lo = scores.iter().cloned().fold(f64::INFINITY, f64::min) - 60.0 * b;
    let hi = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max) + 60.0 * b;
    let steps = 400_000;
    let h = (hi - lo) / steps as f64;
    scores
        .iter()
        .enumerate()
        .map(|(r, &sr)| {
            let g = |z: f64| {
                let mut v = pdf(z - sr);
                for (j, &sj) in scores.iter().enumerate() {
                    if j != r {
                        v *= cdf(z - sj);
                    }
                }
                v
            };
            let mut acc = g(lo) + g(hi);
            for i in 1..steps {
                let w = if i % 2 == 1 { 4.0 } else { 2.0 };
                acc += w * g(lo + i as f64 * h);
            }
            acc * h / 3.0
        })
        .collect()
}

/// Exact distribution of ordered k-tuples picked by k sequential rounds of a mechanism whose one-round
/// probabilities over a subset are given by `round(scores of the remaining candidates)`.
pub fn exact_peeling(scores: &[f64], k: usize, round: &dyn Fn(&[f64]) -> Vec<f64>) -> Vec<(Vec<usize>, f64)> {
    fn go(
        scores: &[f64],
        remaining: Vec<usize>,
        prefix: Vec<usize>,
        p: f64,
        k: usize,
        round: &dyn Fn(&[f64]) -> Vec<f64>,
        out: &mut Vec<(Vec<usize>, f64)>,
    ) {
        if prefix.len() == k {
            out.push((prefix, p));
            return;
        }
        let sub: Vec<f64> = remaining.iter().map(|&i| scores[i]).collect();
        let probs = round(&sub);
        for (j, &i) in remaining.iter().enumerate() {
            let mut rest = remaining.clone();
            rest.remove(j);
            let mut pre = prefix.clone();
            pre.push(i);
            go(scores, rest, pre, p * probs[j], k, round, out);
        }
    }
    let mut out = Vec::new();
    go(scores, (0..scores.len()).collect(), Vec::new(), 1.0, k, round, &mut out);
    out
}

/// Counts draws of ordered tuples against the outcomes of `exact` and runs the chi-square test.
pub fn assert_tuples_fit(label: &str, exact: &[(Vec<usize>, f64)], draws: usize, mut f: impl FnMut() -> Vec<usize>) {
    let mut counts = vec![0u64; exact.len()];
    for _ in 0..draws {
        let t = f();
        let pos = exact
            .iter()
            .position(|(o, _)| *o == t)
            .unwrap_or_else(|| panic!("{label}: impossible outcome {t:?}"));
        counts[pos] += 1;
    }
    let probs: Vec<f64> = exact.iter().map(|e| e.1).collect();
    assert_fits(label, &counts, &probs);
}
