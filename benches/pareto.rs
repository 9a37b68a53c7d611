//! `cargo bench --bench pareto [-- --quick]`: dominance counting (Pareto score, δ^PS) and PrivPareto end to
//! end, timed by the shared harness (`harness/mod.rs`: process CPU time, contenders interleaved over ≥ 5
//! rounds, median and min, load average at start and end).
//!
//! 1. **Targets**: the Pareto score for m = 2, 4, 8 at n = 5·10⁴ interleaved (ratios to m = 2), m = 3 at
//!    n = 10⁵, and (without `--quick`) m = 4 at n = 10⁶, on four kinds of data: uniform in [0, 1)^m, the
//!    same rounded to two decimals (ties), points spread uniformly on the simplex Σ u_i = 1
//!    (anti-correlated: about half the candidates are non-dominated at m = 4), and the same rounded.
//! 2. **Against the references**: `pareto_scores` and `pareto_sensitivity` beside the literal O(n² m)
//!    `pareto_scores_naive` and `pareto_sensitivity_naive`, interleaved, with their outputs compared.
//! 3. **Enron** (`../shared/data/enron/Email-Enron.txt`, skipped when absent): full private selections.
//!
//! 4. **Heavy-tailed graphs** (Chung–Lu, generated): local PrivPareto, shifted against plain, at 10⁵ and
//!    3·10⁵ nodes, with the fitted exponent of the shifted time (issue 26, target 3).
//!
//! `cargo bench --bench pareto -- --quick enron` runs only the named sections (`targets`, `naive`, `enron`,
//! `heavy`).
//!
//! Not a test: nothing here asserts a time; the targets are printed beside the results.

mod harness;

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
use harness::{cpu_time_of, human, interleaved, measure, ratio, Options, Session, Summary};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::hint::black_box;
use std::time::Instant;

/// The kinds of utility data the targets are measured on.
#[derive(Clone, Copy)]
enum Kind {
    Uniform,
    UniformTies,
    Simplex,
    SimplexTies,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Uniform, Kind::UniformTies, Kind::Simplex, Kind::SimplexTies];

    fn name(self) -> &'static str {
        match self {
            Kind::Uniform => "uniform",
            Kind::UniformTies => "uniform, 2 decimals",
            Kind::Simplex => "simplex",
            Kind::SimplexTies => "simplex, 2 decimals",
        }
    }

    /// n × m utilities, row-major.
    fn utilities(self, seed: u64, n: usize, m: usize) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut unit = move || ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let mut u = Vec::with_capacity(n * m);
        for _ in 0..n {
            let row: Vec<f64> = match self {
                Kind::Uniform | Kind::UniformTies => (0..m).map(|_| unit()).collect(),
                Kind::Simplex | Kind::SimplexTies => {
                    // Normalised exponentials are uniform on the simplex.
                    let e: Vec<f64> = (0..m).map(|_| -unit().ln()).collect();
                    let total: f64 = e.iter().sum();
                    e.iter().map(|x| x / total).collect()
                }
            };
            match self {
                Kind::UniformTies | Kind::SimplexTies => u.extend(row.iter().map(|x| (x * 100.0).round() / 100.0)),
                _ => u.extend(row),
            }
        }
        u
    }
}

/// A Pareto score computation ready to be timed.
struct Scores {
    u: Vec<f64>,
    m: usize,
    out: Vec<f64>,
    scratch: Vec<usize>,
}

impl Scores {
    fn new(kind: Kind, n: usize, m: usize) -> Scores {
        Scores {
            u: kind.utilities(2026 + m as u64, n, m),
            m,
            out: vec![0.0; n],
            scratch: vec![0; pareto_scores_scratch_len(n, m).unwrap()],
        }
    }

    fn run(&mut self) {
        pareto_scores(&self.u, self.m, Dominance::Textbook, &mut self.out, &mut self.scratch).unwrap();
        black_box(&self.out);
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

fn targets(opts: &Options) {
    println!("\n1. Targets: Pareto score (Textbook dominance), per call.");
    let n = 50_000;
    for kind in Kind::ALL {
        let (mut s2, mut s4, mut s8) = (
            Scores::new(kind, n, 2),
            Scores::new(kind, n, 4),
            Scores::new(kind, n, 8),
        );
        let [t2, t4, t8] = interleaved(opts, [&mut || s2.run(), &mut || s4.run(), &mut || s8.run()]);
        let (r4, r8) = (ratio(&t4, &t2), ratio(&t8, &t2));
        println!("  {:<20} n = 5·10⁴  m = 2: {t2}", kind.name());
        println!(
            "  {:<20}            m = 4: {t4}  = {r4:.1}× m = 2 (target ≤ 20×: {})",
            "",
            verdict(r4 <= 20.0)
        );
        println!(
            "  {:<20}            m = 8: {t8}  = {r8:.1}× m = 2 (target ≤ 60×: {})",
            "",
            verdict(r8 <= 60.0)
        );
        let mut s3 = Scores::new(kind, 100_000, 3);
        let t3 = measure(opts, &mut || s3.run());
        println!(
            "  {:<20} n = 10⁵    m = 3: {t3}  (target < 0.2 s: {})",
            "",
            verdict(t3.secs() < 0.2)
        );
    }
    if opts.quick {
        println!("  m = 4 at n = 10⁶: skipped with --quick");
        return;
    }
    for kind in Kind::ALL {
        let mut big = Scores::new(kind, 1_000_000, 4);
        let mut two = Scores::new(kind, 1_000_000, 2);
        let heavy = Options { rounds: 5, ..*opts };
        let [t2, t4] = interleaved(&heavy, [&mut || two.run(), &mut || big.run()]);
        println!(
            "  {:<20} n = 10⁶    m = 2: {t2}; m = 4: {t4}  (target < 10 s: {})",
            kind.name(),
            verdict(t4.secs() < 10.0)
        );
    }
}

fn row(what: &str, m: usize, n: usize, lib: &Summary, naive: &Summary) {
    println!(
        "  {what:<22} m = {m:<2} n = {n:<6} library {lib:<34} naive {naive:<34} naive/library {:.0}×",
        ratio(naive, lib)
    );
}

fn versus_naive(opts: &Options) {
    println!("\n2. Against the literal O(n² m) references (uniform data rounded to 2 decimals), outputs compared.");
    let n = if opts.quick { 2_000 } else { 10_000 };
    let kind = Kind::UniformTies;
    for m in [2usize, 3, 4, 6, 8] {
        let mut lib = Scores::new(kind, n, m);
        let u = lib.u.clone();
        let mut naive_out = vec![0.0; n];
        let [tl, tn] = interleaved(
            opts,
            [&mut || lib.run(), &mut || {
                pareto_scores_naive(&u, m, Dominance::Textbook, &mut naive_out).unwrap();
                black_box(&naive_out);
            }],
        );
        assert_eq!(lib.out, naive_out, "Pareto scores differ from the reference");
        row("Pareto score", m, n, &tl, &tn);
    }
    // δ^PS at t = 3: per-candidate δ_i uniform in (0, 0.01], Δ_i = 1, saturated at T = 16.
    let n = if opts.quick { 1_000 } else { 2_000 };
    let t = 3;
    for m in [2usize, 3, 4, 8] {
        let u = kind.utilities(7 + m as u64, n, m);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let dvals: Vec<Vec<f64>> = (0..m)
            .map(|_| {
                (0..n)
                    .map(|_| ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64 * 0.01)
                    .collect()
            })
            .collect();
        let deltas: Vec<LocalSensitivity<'_>> = dvals
            .iter()
            .map(|v| LocalSensitivity::new(DeltaSource::PerCandidate(v), 1.0, 16, n).unwrap())
            .collect();
        let need = pareto_sensitivity_scratch_len(n, m).unwrap();
        let (mut idx, mut val) = (vec![0usize; need.indices], vec![0.0; need.values]);
        let (mut out, mut naive_out) = (vec![0.0; n], vec![0.0; n]);
        let [tl, tn] = interleaved(
            opts,
            [
                &mut || {
                    pareto_sensitivity(&u, m, &deltas, t, &mut out, &mut idx, &mut val).unwrap();
                    black_box(&out);
                },
                &mut || {
                    pareto_sensitivity_naive(&u, m, &deltas, t, Dominance::Textbook, &mut naive_out).unwrap();
                    black_box(&naive_out);
                },
            ],
        );
        assert_eq!(out, naive_out, "δ^PS differs from the reference");
        row("δ^PS (one t)", m, n, &tl, &tn);
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

fn enron(opts: &Options) {
    let path = "../shared/data/enron/Email-Enron.txt";
    println!("\n3. Enron ({path}): utilities degree and egodensity, δ tables as DeltaSource::Table.");
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
        "  {} nodes, {} edges, max degree {} (expected 36,692 / 183,831 / 1,383); loaded in {} (wall)",
        n,
        g.edge_count(),
        g.max_degree(),
        human(start.elapsed())
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
        "  utilities and δ tables ({cols} columns): {} (wall)",
        human(start.elapsed())
    );
    let deltas = [
        table(&dd, DEGREE_GLOBAL_SENSITIVITY, cols, n),
        table(&de, EGODENSITY_GLOBAL_SENSITIVITY, cols, n),
    ];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let need = privpareto_scratch_len(n, 2).unwrap();
    let agg_need = privagg_scratch_len(n, 2).unwrap();
    let mut values = vec![0.0; need.values.max(agg_need.values)];
    let mut indices = vec![0usize; need.indices.max(agg_need.indices)];
    let mut out = [0usize; 3];
    let eps = 1.0;
    // Memory beyond the inputs (utilities and δ tables): the caller's scratch, which is all the core uses.
    let per = |values: usize, indices: usize| {
        (values * size_of::<f64>() + indices * size_of::<usize>()) as f64 / (n * 2) as f64
    };
    println!(
        "  scratch beyond the inputs: PrivPareto {:.0} bytes per candidate per objective, PrivAgg {:.0} (target ≤ 64)",
        per(need.values, need.indices),
        per(agg_need.values, agg_need.indices)
    );
    let local = |dampening| ParetoSensitivity::Local {
        deltas: &deltas,
        max_distance: 0,
        dampening,
    };
    let mut privpareto = |sens: ParetoSensitivity<'_>, out: &mut [usize; 3]| {
        select_privpareto(
            &mut rng,
            &u,
            2,
            Dominance::Textbook,
            sens,
            Selector::Exponential,
            eps,
            out,
            &mut values,
            &mut indices,
            Arithmetic::Exact,
        )
        .unwrap();
    };
    let cases: [(&str, ParetoSensitivity<'_>); 2] = [
        (
            "local PrivPareto (plain, exponential, automatic)",
            local(Dampening::Plain),
        ),
        ("global PrivPareto (Δ = n − 1, exponential)", ParetoSensitivity::Global),
    ];
    for (name, sens) in cases {
        let d = measure(opts, &mut || {
            privpareto(sens, &mut out);
            black_box(out);
        });
        let target = if name.starts_with("local") {
            " (target ≤ 0.2 s)"
        } else {
            ""
        };
        println!("  {name:<56} top-3: {d}{target} (picked nodes {out:?})");
    }
    // Shifted dampening walks every distance up to its automatic saturation (about 2 (16 + ln n) / ε per
    // round, see privpareto_saturation): longer than plain, so one call, not rounds.
    let d = cpu_time_of(&mut || privpareto(local(Dampening::Shifted), &mut out));
    println!(
        "  {:<56} top-3: {} CPU, one call (picked nodes {out:?})",
        "local PrivPareto (shifted, exponential, automatic)",
        human(d)
    );
    let weights = [1.0, 100.0];
    let d = measure(opts, &mut || {
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
        "  {:<56} top-3: {d} (picked nodes {:?})",
        "local PrivAgg w = [1, 100] (shifted, exponential, automatic)", out
    );
}

/// A heavy-tailed random graph (Chung–Lu): node v has weight ∝ (v + 1)^(−1/(γ − 1)) with γ = 2.3, and
/// n · 4 edges are drawn with both ends chosen ∝ weight (mean degree about 8, the largest in the
/// thousands); duplicates and self loops are dropped. Returned as CSR (offsets, sorted neighbours).
fn chung_lu(n: usize, seed: u64) -> (Vec<usize>, Vec<u32>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let gamma = 2.3f64;
    let mut cum = Vec::with_capacity(n);
    let mut total = 0.0;
    for v in 0..n {
        total += ((v + 1) as f64).powf(-1.0 / (gamma - 1.0));
        cum.push(total);
    }
    let mut pick = move || {
        let x = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * total;
        cum.partition_point(|&c| c <= x).min(n - 1) as u32
    };
    let mut edges: Vec<(u32, u32)> = (0..4 * n)
        .map(|_| {
            let (a, b) = (pick(), pick());
            (a.min(b), a.max(b))
        })
        .filter(|(a, b)| a != b)
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut off = vec![0usize; n + 1];
    for &(a, b) in &edges {
        off[a as usize + 1] += 1;
        off[b as usize + 1] += 1;
    }
    for v in 0..n {
        off[v + 1] += off[v];
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
    (off, adj)
}

/// Issue 26, target 3: shifted local PrivPareto within 5× plain on heavy-tailed graphs at 10⁵ and 3·10⁵
/// nodes, and a fitted exponent ≤ 1.25 (log of the time ratio over log of the size ratio).
fn heavy(opts: &Options) {
    println!(
        "\n4. Heavy-tailed graphs (Chung–Lu, γ = 2.3, mean degree ≈ 8): local PrivPareto top-3 on degree and \
         egodensity (16-column δ tables), ε = 1, exponential, exact; plain and shifted interleaved."
    );
    let sizes: &[usize] = if opts.quick {
        &[30_000, 100_000]
    } else {
        &[100_000, 300_000]
    };
    let mut shifted_times = Vec::new();
    for &n in sizes {
        let (off, adj) = chung_lu(n, 17 + n as u64);
        let g = Csr::new(&off, &adj).expect("valid CSR");
        let cols = 16;
        let (mut deg, mut ego) = (vec![0.0; n], vec![0.0; n]);
        degree_all(&g, &mut deg).unwrap();
        egodensity_all(&g, &mut ego).unwrap();
        let (mut dd, mut de) = (vec![0.0; n * cols], vec![0.0; n * cols]);
        degree_delta_table(&g, cols, &mut dd).unwrap();
        egodensity_delta_table(&g, cols, &mut de).unwrap();
        let u: Vec<f64> = deg.iter().zip(&ego).flat_map(|(&d, &e)| [d, e]).collect();
        let deltas = [
            table(&dd, DEGREE_GLOBAL_SENSITIVITY, cols, n),
            table(&de, EGODENSITY_GLOBAL_SENSITIVITY, cols, n),
        ];
        let need = privpareto_scratch_len(n, 2).unwrap();
        let (mut v1, mut i1) = (vec![0.0; need.values], vec![0usize; need.indices]);
        let (mut v2, mut i2) = (vec![0.0; need.values], vec![0usize; need.indices]);
        let (mut r1, mut r2) = (
            Xoshiro256PlusPlus::seed_from_u64(1),
            Xoshiro256PlusPlus::seed_from_u64(2),
        );
        let (mut o1, mut o2) = ([0usize; 3], [0usize; 3]);
        let run = |rng: &mut Xoshiro256PlusPlus,
                   d: Dampening,
                   out: &mut [usize; 3],
                   values: &mut [f64],
                   indices: &mut [usize]| {
            let sens = ParetoSensitivity::Local {
                deltas: &deltas,
                max_distance: 0,
                dampening: d,
            };
            select_privpareto(
                rng,
                &u,
                2,
                Dominance::Textbook,
                sens,
                Selector::Exponential,
                1.0,
                out,
                values,
                indices,
                Arithmetic::Exact,
            )
            .unwrap();
            black_box(&*out);
        };
        let heavy_opts = Options { rounds: 5, ..*opts };
        let [tp, ts] = interleaved(
            &heavy_opts,
            [
                &mut || run(&mut r1, Dampening::Plain, &mut o1, &mut v1, &mut i1),
                &mut || run(&mut r2, Dampening::Shifted, &mut o2, &mut v2, &mut i2),
            ],
        );
        let r = ratio(&ts, &tp);
        println!(
            "  n = {n:<7} {} edges, max degree {}: plain {tp}; shifted {ts} = {r:.2}× plain (target ≤ 5×: {})",
            g.edge_count(),
            g.max_degree(),
            verdict(r <= 5.0)
        );
        shifted_times.push((n, ts.secs()));
    }
    if let [(n0, t0), (n1, t1)] = shifted_times[..] {
        let k = (t1 / t0).ln() / (n1 as f64 / n0 as f64).ln();
        println!(
            "  shifted: fitted exponent {k:.2} between n = {n0} and {n1} (target ≤ 1.25: {})",
            verdict(k <= 1.25)
        );
    }
}

fn main() {
    let opts = Options::from_args();
    let session = Session::start("pareto");
    if opts.quick {
        println!("--quick: 5 rounds of ≥ 10 ms, smaller sizes.");
    }
    // Section names among the arguments (`targets`, `naive`, `enron`) run only those sections.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let named = ["targets", "naive", "enron", "heavy"];
    let chosen = |s: &str| !args.iter().any(|a| named.contains(&a.as_str())) || args.iter().any(|a| a == s);
    if chosen("targets") {
        targets(&opts);
    }
    if chosen("naive") {
        versus_naive(&opts);
    }
    if chosen("enron") {
        enron(&opts);
    }
    if chosen("heavy") {
        heavy(&opts);
    }
    session.end();
}
