//! `cargo bench --bench pareto [-- --quick]`: the multi-objective score stage and PrivPareto end to end.
//!
//! 1. Pareto scores (`pareto_scores`) and one δ^PS sweep over all candidates at one distance t
//!    (`pareto_sensitivity`), for m = 2 (n = 10³ … 10⁶) and m = 3 (n = 10³ … 10⁵), each beside the naive
//!    O(n² m) references (`pareto_scores_naive`, `pareto_sensitivity_naive`) timed in the same run. A
//!    reference runs only while its predicted time (quadratic from the previous size) stays under a limit;
//!    beyond it the time is extrapolated and marked so.
//! 2. Full selections over SNAP Enron (`../shared/data/enron/Email-Enron.txt`): local PrivPareto (shifted,
//!    exponential, 16 columns of δ^PS), global PrivPareto, and local PrivAgg with weights [1, 100], with
//!    utilities degree and egodensity and their δ tables.
//!
//! Utilities are integers in [0, 1000) (ties, like counts); `PARETO_BENCH_CONTINUOUS=1` uses tie-free doubles.
//! Not a test: nothing here asserts a time; the targets are printed beside the results.

use dpmo::dampen::Dampening;
use dpmo::graph::Csr;
use dpmo::multi::{privagg_scratch_len, privpareto_scratch_len};
use dpmo::pareto::{
    pareto_scores, pareto_scores_naive, pareto_scores_scratch_len, pareto_sensitivity, pareto_sensitivity_naive,
    pareto_sensitivity_scratch_len,
};
use dpmo::sensitivity::degree::{degree_all, degree_delta_table, DEGREE_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::egodensity::{egodensity_all, egodensity_delta_table, EGODENSITY_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{select_privagg, select_privpareto, AggSensitivity, Arithmetic, Dominance, ParetoSensitivity, Selector};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Mean time of `f` over at least one run and enough repetitions to fill about `budget`.
fn time(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut reps = 0u32;
    while reps < 1 || start.elapsed() < budget {
        f();
        reps += 1;
    }
    start.elapsed() / reps
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// A reference timing: measured, or extrapolated from a smaller size (seconds).
#[derive(Clone, Copy)]
enum Reference {
    Measured(Duration),
    Extrapolated(f64),
}

/// Runs the quadratic reference when the previous measurement (at `prev_n`) predicts under `limit`
/// seconds at n, else extrapolates.
fn reference(prev: &mut Option<(usize, f64)>, n: usize, limit: f64, budget: Duration, f: impl FnMut()) -> Reference {
    let predicted = prev.map(|(pn, t)| t * (n as f64 / pn as f64).powi(2));
    match predicted {
        Some(p) if p > limit => Reference::Extrapolated(p),
        _ => {
            let d = time(budget, f);
            *prev = Some((n, secs(d)));
            Reference::Measured(d)
        }
    }
}

fn row(what: &str, m: usize, n: usize, lib: Duration, r: Reference, target: &str) {
    let (rs, ratio) = match r {
        Reference::Measured(d) => (format!("{:.4} s", secs(d)), format!("{:.1}x", secs(d) / secs(lib))),
        Reference::Extrapolated(t) => (format!("~{t:.1} s (extrap.)"), format!("~{:.0}x", t / secs(lib))),
    };
    println!(
        "{:<22} {:>2} {:>9} {:>12.5} {:>22} {:>12}  {}",
        what,
        m,
        n,
        secs(lib),
        rs,
        ratio,
        target
    );
}

fn random_utilities(rng: &mut Xoshiro256PlusPlus, n: usize, m: usize) -> Vec<f64> {
    if std::env::var_os("PARETO_BENCH_CONTINUOUS").is_some() {
        // Uniform doubles: no ties.
        return (0..n * m).map(|_| (rng.next_u64() >> 11) as f64).collect();
    }
    // Integers in 0..1000: realistic ties (counts, degrees) without making every vector equal.
    (0..n * m).map(|_| (rng.next_u64() % 1000) as f64).collect()
}

fn score_stage(quick: bool) {
    let budget = Duration::from_millis(if quick { 50 } else { 300 });
    let limit = if quick { 3.0 } else { 30.0 };
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
    let t = 3;
    println!("Score stage: utilities integer in [0, 1000), δ_i per candidate uniform in (0, 1], Δ_i = 1, T = 16;");
    println!("δ^PS sweep = pareto_sensitivity at t = {t} over all candidates. speedup = naive time / library time.");
    println!("Naive references run while predicted under {limit} s, else extrapolated (quadratic).");
    println!(
        "{:<22} {:>2} {:>9} {:>12} {:>22} {:>12}  target",
        "stage", "m", "n", "library s", "naive O(n²m)", "speedup"
    );
    for m in [2usize, 3] {
        let top = match (m, quick) {
            (2, false) => 6,
            (2, true) => 5,
            (_, false) => 5,
            (_, true) => 4,
        };
        let (mut prev_scores, mut prev_delta) = (None, None);
        for exp in 3..=top {
            let n = 10usize.pow(exp);
            let u = random_utilities(&mut rng, n, m);
            let dvals: Vec<Vec<f64>> = (0..m)
                .map(|_| {
                    (0..n)
                        .map(|_| ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64)
                        .collect()
                })
                .collect();
            let deltas: Vec<LocalSensitivity<'_>> = dvals
                .iter()
                .map(|v| LocalSensitivity::new(DeltaSource::PerCandidate(v), 1.0, 16, n).unwrap())
                .collect();
            let mut out = vec![0.0; n];
            let mut scratch = vec![0usize; pareto_scores_scratch_len(n).unwrap()];
            let lib = time(budget, || {
                pareto_scores(&u, m, Dominance::Textbook, &mut out, &mut scratch).unwrap();
                black_box(&out);
            });
            let mut naive_out = vec![0.0; n];
            let r = reference(&mut prev_scores, n, limit, budget, || {
                pareto_scores_naive(&u, m, Dominance::Textbook, &mut naive_out).unwrap();
                black_box(&naive_out);
            });
            if let Reference::Measured(_) = r {
                assert_eq!(out, naive_out, "Pareto scores differ from the reference");
            }
            let target = if m == 2 && n == 1_000_000 {
                format!("< 1 s: {}", if secs(lib) < 1.0 { "met" } else { "MISSED" })
            } else {
                String::new()
            };
            row("Pareto score", m, n, lib, r, &target);

            let need = pareto_sensitivity_scratch_len(n, m).unwrap();
            let (mut idx, mut val) = (vec![0usize; need.indices], vec![0.0; need.values]);
            let lib = time(budget, || {
                pareto_sensitivity(&u, m, &deltas, t, &mut out, &mut idx, &mut val).unwrap();
                black_box(&out);
            });
            let r = reference(&mut prev_delta, n, limit, budget, || {
                pareto_sensitivity_naive(&u, m, &deltas, t, Dominance::Textbook, &mut naive_out).unwrap();
                black_box(&naive_out);
            });
            if let Reference::Measured(_) = r {
                assert_eq!(out, naive_out, "δ^PS differs from the reference");
            }
            let target = if m == 2 && n == 100_000 {
                format!("< 0.2 s: {}", if secs(lib) < 0.2 { "met" } else { "MISSED" })
            } else {
                String::new()
            };
            row("δ^PS sweep (one t)", m, n, lib, r, &target);
        }
    }
}

/// SNAP edge list → CSR: `#` comments, tab separated, both directions; duplicates and self loops dropped.
fn load_snap(path: &str) -> std::io::Result<(Vec<usize>, Vec<u32>)> {
    let text = std::fs::read_to_string(path)?;
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut n = 0usize;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut it = line.split_whitespace();
        let (Some(a), Some(b)) = (it.next(), it.next()) else {
            continue;
        };
        let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) else {
            continue;
        };
        if a == b {
            continue;
        }
        n = n.max(a as usize + 1).max(b as usize + 1);
        edges.push((a.min(b), a.max(b)));
    }
    edges.sort_unstable();
    edges.dedup();
    let mut deg = vec![0usize; n];
    for &(a, b) in &edges {
        deg[a as usize] += 1;
        deg[b as usize] += 1;
    }
    let mut off = vec![0usize; n + 1];
    for v in 0..n {
        off[v + 1] = off[v] + deg[v];
    }
    let mut fill = off.clone();
    let mut adj = vec![0u32; off[n]];
    for &(a, b) in &edges {
        adj[fill[a as usize]] = b;
        fill[a as usize] += 1;
        adj[fill[b as usize]] = a;
        fill[b as usize] += 1;
    }
    for v in 0..n {
        adj[off[v]..off[v + 1]].sort_unstable();
    }
    Ok((off, adj))
}

/// A tabulated sensitivity for n candidates, saturated after its `columns`.
fn table(values: &[f64], global: f64, columns: usize, n: usize) -> LocalSensitivity<'_> {
    LocalSensitivity::new(DeltaSource::Table { values, columns }, global, columns, n).unwrap()
}

fn enron(quick: bool) {
    let path = "../shared/data/enron/Email-Enron.txt";
    println!("\nEnron ({path}): utilities degree and egodensity, δ tables as DeltaSource::Table.");
    let start = Instant::now();
    let (off, adj) = match load_snap(path) {
        Ok(g) => g,
        Err(e) => {
            println!("  skipped: cannot read the data file ({e})");
            return;
        }
    };
    let g = Csr::new(&off, &adj).expect("valid CSR");
    let n = g.node_count();
    println!(
        "  {} nodes, {} edges, max degree {} (expected 36,692 / 183,831 / 1,383); loaded in {:.2} s",
        n,
        g.edge_count(),
        g.max_degree(),
        secs(start.elapsed())
    );
    let cols = 16;
    let start = Instant::now();
    let (mut deg, mut ego) = (vec![0.0; n], vec![0.0; n]);
    degree_all(&g, &mut deg).unwrap();
    egodensity_all(&g, &mut ego).unwrap();
    let (mut dd, mut de) = (vec![0.0; n * cols], vec![0.0; n * cols]);
    degree_delta_table(&g, cols, &mut dd).unwrap();
    egodensity_delta_table(&g, cols, &mut de).unwrap();
    let u: Vec<f64> = deg.iter().zip(&ego).flat_map(|(&d, &e)| [d, e]).collect();
    println!(
        "  utilities and δ tables ({cols} columns): {:.3} s",
        secs(start.elapsed())
    );
    let deltas = [
        table(&dd, DEGREE_GLOBAL_SENSITIVITY, cols, n),
        table(&de, EGODENSITY_GLOBAL_SENSITIVITY, cols, n),
    ];
    let budget = Duration::from_millis(if quick { 100 } else { 1000 });
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let need = privpareto_scratch_len(n, 2).unwrap();
    let agg_need = privagg_scratch_len(n, 2).unwrap();
    let mut values = vec![0.0; need.values.max(agg_need.values)];
    let mut indices = vec![0usize; need.indices.max(agg_need.indices)];
    let mut out = [0usize; 1];
    let eps = 1.0;
    let local = ParetoSensitivity::Local {
        deltas: &deltas,
        max_distance: 0,
        dampening: Dampening::Shifted,
    };
    let cases: [(&str, ParetoSensitivity<'_>); 2] = [
        ("local PrivPareto (shifted, exponential, automatic)", local),
        ("global PrivPareto (Δ = n − 1, exponential)", ParetoSensitivity::Global),
    ];
    for (name, sens) in cases {
        let d = time(budget, || {
            select_privpareto(
                &mut rng,
                &u,
                2,
                Dominance::Textbook,
                sens,
                Selector::Exponential,
                eps,
                &mut out,
                &mut values,
                &mut indices,
                Arithmetic::Exact,
            )
            .unwrap();
            black_box(out);
        });
        println!("  {name:<56} top-1: {:.4} s (picked node {})", secs(d), out[0]);
    }
    let weights = [1.0, 100.0];
    let d = time(budget, || {
        select_privagg(
            &mut rng,
            &u,
            &weights,
            AggSensitivity::Local {
                deltas: &deltas,
                max_distance: 0,
                dampening: Dampening::Shifted,
            },
            Selector::Exponential,
            eps,
            &mut out,
            &mut values,
            &mut indices,
            Arithmetic::Exact,
        )
        .unwrap();
        black_box(out);
    });
    println!(
        "  {:<56} top-1: {:.4} s (picked node {})",
        "local PrivAgg w = [1, 100] (shifted, exponential, 16 cols)",
        secs(d),
        out[0]
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    if quick {
        println!("--quick: smaller sizes and shorter timing budgets.\n");
    }
    score_stage(quick);
    enron(quick);
}
