//! `cargo bench --bench select [-- --quick]`: the selectors, exact against float, and against the reference a
//! user would write. CPU time, contenders interleaved over ≥ 5 rounds (benches/harness), medians and ratios.
//!
//! 1. **Exact against float** (the exact-sampling targets): the exact exponential mechanism and exact
//!    permute-and-flip against the float exponential mechanism, all with ChaCha20 (the production generator),
//!    on three kinds of scores (Δ = 1, ε = 1): "uniform" in [0, 100) (many candidates near the best),
//!    "normal" N(0, 10²) (a clear best: a few candidates within a few Δ of it) and "dominant" (one score 0,
//!    all others −10⁶: permute-and-flip then visits about n candidates). Targets: exact permute-and-flip
//!    within 3× of the float exponential mechanism, the exact exponential mechanism within 10×.
//! 2. **The reference a user would write**: a vectorised Gumbel-max, argmax_r ε s_r / 2Δ − ln(−ln u_r), with
//!    the platform's `ln` (glibc, through std) and the same generator, on the same three kinds. Target: the
//!    exponential mechanism at n = 10⁶ at least 2× faster, and under 5 ns per candidate.
//! 3. **Local dampening** with a table δ of 4 columns, plain and shifted, exact against float.
//!
//! Not a test: nothing asserts a time; the targets are printed beside the results.

#[path = "harness/mod.rs"]
mod harness;

use dpmo::dampen::Dampening;
use dpmo::rng::{Generator, GeneratorState};
use dpmo::select::{select, Arithmetic, Selector};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{sample, select_local_dampening};
use harness::{interleaved, ratio, Options, Session, Summary};
use rand_core::Rng;
use std::hint::black_box;

fn chacha(seed: u8) -> Generator {
    GeneratorState::chacha20([seed; 32]).load().expect("fresh state")
}

/// Gumbel-max as one would write it with a vector library: one uniform and two logarithms per candidate.
fn reference_gumbel_max(rng: &mut impl Rng, scores: &[f64], delta: f64, eps: f64) -> usize {
    let scale = eps / (2.0 * delta);
    let mut best = (0, f64::NEG_INFINITY);
    for (r, &s) in scores.iter().enumerate() {
        let u = ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0);
        let v = scale * s - (-u.ln()).ln();
        if v > best.1 {
            best = (r, v);
        }
    }
    best.0
}

/// The kinds of scores: "uniform" in [0, 100) (many candidates near the best), "normal" N(0, 10²) (a
/// clear best: a few candidates within a few units of Δ of it), "dominant" (one score 0, the others −10⁶).
const KINDS: [&str; 3] = ["uniform", "normal", "dominant"];

fn scores_of(kind: &str, n: usize, seed: u8) -> Vec<f64> {
    let mut g = chacha(seed);
    match kind {
        "uniform" => (0..n).map(|_| 100.0 * sample::uniform_open01(&mut g)).collect(),
        "normal" => (0..n)
            .map(|_| {
                let (u, v) = (sample::uniform_open01(&mut g), sample::uniform_open01(&mut g));
                10.0 * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            })
            .collect(),
        _ => (0..n).map(|r| if r == n / 2 { 0.0 } else { -1e6 }).collect(),
    }
}

fn per_candidate(s: &Summary, n: usize) -> String {
    format!("{:.2} ns", s.secs() * 1e9 / n as f64)
}

fn exact_against_float(opts: &Options) {
    println!(
        "\n1. Exact against float, ChaCha20. Per-candidate median CPU time; ratios to the float exponential mechanism."
    );
    println!(
        "{:<9} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "scores", "n", "EM float", "EM exact", "P&F exact", "P&F float", "EM x/f", "P&F x/EMf"
    );
    let sizes: &[usize] = if opts.quick {
        &[1_000, 100_000]
    } else {
        &[1_000, 10_000, 100_000, 1_000_000]
    };
    let mut worst: (f64, f64) = (0.0, 0.0);
    for kind in KINDS {
        for &n in sizes {
            let scores = scores_of(kind, n, 1);
            let (mut g1, mut g2, mut g3, mut g4) = (chacha(2), chacha(3), chacha(4), chacha(5));
            let (mut p3, mut p4) = (vec![0usize; n], vec![0usize; n]);
            let s = &scores;
            let [emf, emx, pfx, pff] = interleaved(
                opts,
                [
                    &mut || {
                        black_box(select(&mut g1, Selector::Exponential, s, 1.0, 1.0, &mut [], Arithmetic::Float).ok());
                    },
                    &mut || {
                        black_box(select(&mut g2, Selector::Exponential, s, 1.0, 1.0, &mut [], Arithmetic::Exact).ok());
                    },
                    &mut || {
                        black_box(
                            select(
                                &mut g3,
                                Selector::PermuteAndFlip,
                                s,
                                1.0,
                                1.0,
                                &mut p3,
                                Arithmetic::Exact,
                            )
                            .ok(),
                        );
                    },
                    &mut || {
                        black_box(
                            select(
                                &mut g4,
                                Selector::PermuteAndFlip,
                                s,
                                1.0,
                                1.0,
                                &mut p4,
                                Arithmetic::Float,
                            )
                            .ok(),
                        );
                    },
                ],
            );
            let (em_ratio, pf_ratio) = (ratio(&emx, &emf), ratio(&pfx, &emf));
            worst = (worst.0.max(em_ratio), worst.1.max(pf_ratio));
            println!(
                "{:<9} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10.2} {:>10.2}",
                kind,
                n,
                per_candidate(&emf, n),
                per_candidate(&emx, n),
                per_candidate(&pfx, n),
                per_candidate(&pff, n),
                em_ratio,
                pf_ratio
            );
        }
    }
    println!(
        "   worst ratios: exact EM / float EM {:.2} (target ≤ 10: {}), exact P&F / float EM {:.2} (target ≤ 3: {})",
        worst.0,
        if worst.0 <= 10.0 { "met" } else { "missed" },
        worst.1,
        if worst.1 <= 3.0 { "met" } else { "missed" }
    );
}

fn against_reference(opts: &Options) {
    println!("\n2. The exact exponential mechanism against a Gumbel-max a user would write (glibc ln), ChaCha20.");
    println!("   Target at n = 10⁶: ≥ 2× faster than the reference, ≤ 5 ns per candidate, on every kind of scores.");
    let sizes: &[usize] = if opts.quick {
        &[1_000, 100_000]
    } else {
        &[1_000, 100_000, 1_000_000]
    };
    for kind in KINDS {
        for &n in sizes {
            let scores = scores_of(kind, n, 6);
            let (mut g1, mut g2) = (chacha(7), chacha(8));
            let s = &scores;
            let [lib, reference] = interleaved(
                opts,
                [
                    &mut || {
                        black_box(select(&mut g1, Selector::Exponential, s, 1.0, 1.0, &mut [], Arithmetic::Exact).ok());
                    },
                    &mut || {
                        black_box(reference_gumbel_max(&mut g2, s, 1.0, 1.0));
                    },
                ],
            );
            println!(
                "   {:<8} n = {:>9}: library {} ({}/candidate), reference {} ({}/candidate): library {:.1}× faster",
                kind,
                n,
                lib,
                per_candidate(&lib, n),
                reference,
                per_candidate(&reference, n),
                ratio(&reference, &lib)
            );
        }
    }
}

fn local_dampening(opts: &Options) {
    println!("\n3. Local dampening, table δ with 4 columns (Δ = 10), exponential mechanism; exact against float.");
    let sizes: &[usize] = if opts.quick {
        &[1_000, 100_000]
    } else {
        &[1_000, 100_000, 1_000_000]
    };
    for &n in sizes {
        let cols = 4;
        let mut g = chacha(9);
        let u: Vec<f64> = (0..n).map(|_| 50.0 * sample::uniform_open01(&mut g)).collect();
        let table: Vec<f64> = (0..n * cols)
            .map(|i| 1.0 + (i % cols) as f64 + sample::uniform_open01(&mut g))
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
        for kind in [Dampening::Plain, Dampening::Shifted] {
            let (mut g1, mut g2) = (chacha(10), chacha(11));
            let (mut s1, mut s2) = (vec![0.0; 2 * n], vec![0.0; 2 * n]);
            let (u, d) = (&u, &d);
            let [exact, float] = interleaved(
                opts,
                [
                    &mut || {
                        let r = select_local_dampening(
                            &mut g1,
                            u,
                            d,
                            kind,
                            Selector::Exponential,
                            1.0,
                            &mut s1,
                            &mut [],
                            Arithmetic::Exact,
                        );
                        black_box(r.ok());
                    },
                    &mut || {
                        let r = select_local_dampening(
                            &mut g2,
                            u,
                            d,
                            kind,
                            Selector::Exponential,
                            1.0,
                            &mut s2,
                            &mut [],
                            Arithmetic::Float,
                        );
                        black_box(r.ok());
                    },
                ],
            );
            println!(
                "   {:?} n = {:>9}: exact {}/candidate, float {}/candidate, exact / float {:.2}",
                kind,
                n,
                per_candidate(&exact, n),
                per_candidate(&float, n),
                ratio(&exact, &float)
            );
        }
    }
}

fn main() {
    let opts = Options::from_args();
    let session = Session::start("select");
    exact_against_float(&opts);
    against_reference(&opts);
    local_dampening(&opts);
    session.end();
}
