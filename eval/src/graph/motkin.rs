//! DP-MoTkIN (PrivPareto paper, §7): private top-k influential nodes with two objectives, degree and
//! egocentric density, under edge differential privacy, on Enron.
//!
//! * Table 2: DP-MoTkIN-Pareto global and local, k = 3, mean metric C (Def. 6.3) against the true top-k by
//!   Pareto score.
//! * Figure 3: DP-MoTkIN-Agg global and local, u_agg = degree + 100 · egodensity, k = 5, mean recall of the
//!   true top-5 by u_agg.
//!
//! Both use the core's mechanisms (`select_privpareto`, `select_privagg`). For the repeated runs the
//! deterministic parts are computed once: PrivAgg's dampened scores do not depend on the run, and
//! PrivPareto's round-1 scores neither. Rounds 2 and 3 of PrivPareto re-score the remaining candidates; we
//! obtain their δ^PS by updating the core's round-1 table for the removed candidates (a removed candidate
//! r′ leaves the two dominance counts of the identity in DESIGN.md §2 exactly when its corners satisfied
//! them), with the core's own directed rounding of the corners, and dampen and select with the core's
//! functions. The result is bit-identical to `select_privpareto` (checked on Enron in every run of the
//! experiment, and on random graphs in the tests), at a few milliseconds per run instead of seconds.

use super::{f, load_enron, mean_se, progress, run_rng};
use crate::experiments::Context;
use crate::output::{self, LinePlot, Section, Series};
use anyhow::{ensure, Result};
use dpmo::dampen::{dampen_value, dampen_with, Dampening};
use dpmo::float::{add_up, sub_down};
use dpmo::graph::Csr;
use dpmo::multi::{privagg_scratch_len, privpareto_scratch_len};
use dpmo::pareto::{
    pareto_scores, pareto_scores_scratch_len, pareto_sensitivity_scratch_len, pareto_sensitivity_table,
};
use dpmo::select::{select, select_top_k, Selector};
use dpmo::sensitivity::degree::{degree_all, DEGREE_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::egodensity::{egodensity_all, egodensity_delta, EGODENSITY_GLOBAL_SENSITIVITY};
use dpmo::sensitivity::weighted_sum::{weighted_saturation, weighted_sensitivity_table, weighted_sum};
use dpmo::sensitivity::{DeltaFunction, DeltaSource, LocalSensitivity};
use dpmo::{select_privagg, select_privpareto, AggSensitivity, Arithmetic, Dominance, ParetoSensitivity};
use rayon::prelude::*;
use std::time::Instant;

/// Number of objectives (degree, egodensity).
const M: usize = 2;
/// The saturation distance of δ^PS (the `columns` of `ParetoSensitivity::Local`) in the full run.
pub const COLUMNS: usize = 64;
/// ... and in the smoke run.
const COLUMNS_SMOKE: usize = 16;
/// The dominance relation of the Pareto score and of metric C.
const DOMINANCE: Dominance = Dominance::Textbook;
/// PrivAgg weights (w_degree, w_egodensity) of Figure 3.
pub const WEIGHTS: [f64; 2] = [1.0, 100.0];

/// Table 2's privacy budgets.
const TABLE2_EPS: [f64; 8] = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0];
/// Table 2, Enron columns (MOT_g, MOT_l), from the paper.
const TABLE2_PUBLISHED: [(f64, f64); 8] = [
    (0.41, 0.41),
    (0.39, 0.41),
    (0.42, 0.39),
    (0.34, 0.38),
    (0.33, 0.30),
    (0.22, 0.16),
    (0.15, 0.07),
    (0.07, 0.00),
];
/// Figure 3's budgets and beyond (the global mechanism needs more).
const FIG3_EPS: [f64; 11] = [0.01, 0.05, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0];

/// The degree and egodensity of every node, and the sensitivities of both.
pub struct Objectives {
    /// n × 2 row-major: degree, egodensity.
    pub util: Vec<f64>,
    /// Degrees.
    pub degree: Vec<usize>,
    /// δ^degree = 1 for every node.
    ones: Vec<f64>,
    /// Saturation distance of both objective sensitivities (≥ every δ^PS column used, and ≥ the distance
    /// from which δ^egodensity is 1 for every node, so nothing is lost by it).
    t_max: usize,
}

/// δ^egodensity(G, t, v) (PrivPareto §7.3, clamped to 1) as a function of (v, t).
struct EgoDelta<'a>(&'a [usize]);

impl DeltaFunction for EgoDelta<'_> {
    fn delta(&self, r: usize, t: usize) -> f64 {
        egodensity_delta(self.0[r], t)
    }
}

impl Objectives {
    /// Computes both objectives with the core.
    pub fn new(g: &Csr<'_>, columns: usize) -> Result<Objectives> {
        let n = g.node_count();
        let mut deg = vec![0.0; n];
        degree_all(g, &mut deg)?;
        let mut ego = vec![0.0; n];
        egodensity_all(g, &mut ego)?;
        let util = deg.iter().zip(&ego).flat_map(|(&d, &e)| [d, e]).collect();
        Ok(Objectives {
            util,
            degree: (0..n).map(|v| g.degree(v)).collect(),
            ones: vec![1.0; n],
            t_max: g.max_degree().max(columns).max(1),
        })
    }

    /// Number of nodes.
    pub fn n(&self) -> usize {
        self.degree.len()
    }

    fn row(&self, r: usize) -> &[f64] {
        &self.util[r * M..(r + 1) * M]
    }

    /// Runs `body` with the two objective sensitivities (degree, egodensity).
    fn with_deltas<T>(&self, body: impl FnOnce(&[LocalSensitivity<'_>]) -> Result<T>) -> Result<T> {
        let ego = EgoDelta(&self.degree);
        let n = self.n();
        let deltas = [
            LocalSensitivity::new(
                DeltaSource::PerCandidate(&self.ones),
                DEGREE_GLOBAL_SENSITIVITY,
                self.t_max,
                n,
            )?,
            LocalSensitivity::new(
                DeltaSource::Function(&ego),
                EGODENSITY_GLOBAL_SENSITIVITY,
                self.t_max,
                n,
            )?,
        ];
        body(&deltas)
    }
}

// ---------------------------------------------------------------------------------------------------------

/// Everything of DP-MoTkIN-Pareto that does not depend on the run: the Pareto scores and δ^PS table of the
/// full candidate set (from the core), the corners hi/lo of every candidate at every tabulated distance,
/// and the round-1 dampened scores.
pub struct ParetoPrecomputed<'o> {
    obj: &'o Objectives,
    columns: usize,
    ps0: Vec<f64>,
    table0: Vec<f64>,
    /// hi[(r · columns + t) · M + i], lo likewise.
    hi: Vec<f64>,
    lo: Vec<f64>,
    damp0: Vec<f64>,
}

/// δ^PS of the remaining candidates after `removed` left: the round-1 value minus, for each removed r′,
/// [hi(r′) ≥ lo(r) in every objective] (r′ left the first count) plus [lo(r′) > hi(r) in every
/// objective] (r′ left the second).
struct Corrected<'a, 'o> {
    pre: &'a ParetoPrecomputed<'o>,
    removed: &'a [usize],
}

impl DeltaFunction for Corrected<'_, '_> {
    fn delta(&self, r: usize, t: usize) -> f64 {
        let p = self.pre;
        let c = p.columns;
        let mut v = p.table0[r * c + t];
        let at = |x: usize| (x * c + t) * M;
        let (hr, lr) = (&p.hi[at(r)..at(r) + M], &p.lo[at(r)..at(r) + M]);
        for &q in self.removed {
            let (hq, lq) = (&p.hi[at(q)..at(q) + M], &p.lo[at(q)..at(q) + M]);
            if hq.iter().zip(lr).all(|(h, l)| h >= l) {
                v -= 1.0;
            }
            if lq.iter().zip(hr).all(|(l, h)| l > h) {
                v += 1.0;
            }
        }
        v
    }
}

impl<'o> ParetoPrecomputed<'o> {
    /// Pareto scores and δ^PS with `columns` distances of the full set, by the core.
    pub fn new(obj: &'o Objectives, columns: usize) -> Result<Self> {
        let n = obj.n();
        ensure!(columns >= 1 && columns <= obj.t_max, "columns must be in 1..=t_max");
        let mut ps0 = vec![0.0; n];
        let mut scratch = vec![0usize; pareto_scores_scratch_len(n)?];
        pareto_scores(&obj.util, M, DOMINANCE, &mut ps0, &mut scratch)?;
        let need = pareto_sensitivity_scratch_len(n, M)?;
        let mut table0 = vec![0.0; n * columns];
        obj.with_deltas(|deltas| {
            let mut idx = vec![0usize; need.indices];
            let mut vals = vec![0.0; need.values];
            pareto_sensitivity_table(&obj.util, M, deltas, columns, &mut table0, &mut idx, &mut vals)?;
            Ok(())
        })?;
        // Corners with the core's arithmetic: S_i(t, r) = Σ_{j ≤ t} δ_i(j, r) accumulated rounding up,
        // hi = u + S rounded up, lo = u − S rounded down.
        let mut hi = vec![0.0; n * columns * M];
        let mut lo = vec![0.0; n * columns * M];
        for r in 0..n {
            let mut s = [0.0f64; M];
            for t in 0..columns {
                let d = [
                    1.0f64.min(DEGREE_GLOBAL_SENSITIVITY),
                    egodensity_delta(obj.degree[r], t).min(1.0),
                ];
                for i in 0..M {
                    s[i] = add_up(s[i], d[i] + 0.0);
                    let u = obj.util[r * M + i];
                    hi[(r * columns + t) * M + i] = add_up(u, s[i]);
                    lo[(r * columns + t) * M + i] = sub_down(u, s[i]);
                }
            }
        }
        let mut damp0 = vec![0.0; n];
        let ls = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table0,
                columns,
            },
            (n - 1) as f64,
            columns,
            n,
        )?;
        dampen_with(&ps0, &ls, Dampening::Plain, &mut damp0)?;
        Ok(ParetoPrecomputed {
            obj,
            columns,
            ps0,
            table0,
            hi,
            lo,
            damp0,
        })
    }

    /// The Pareto score of r among the candidates left after `removed`.
    fn ps(&self, r: usize, removed: &[usize]) -> f64 {
        let gained = removed
            .iter()
            .filter(|&&q| DOMINANCE.dominates(self.obj.row(q), self.obj.row(r)))
            .count();
        self.ps0[r] + gained as f64
    }

    /// δ^PS(t, r) after `removed` left (what the core's table of that round holds).
    fn delta_ps(&self, r: usize, t: usize, removed: &[usize]) -> f64 {
        Corrected { pre: self, removed }.delta(r, t)
    }

    /// One DP-MoTkIN-Pareto run: k rounds at ε/k, exactly as `select_privpareto` with the exponential
    /// mechanism (global: Δ = live − 1; local: δ^PS with `columns`, plain dampening). Writes the picks.
    pub fn run<R: rand_core::Rng>(
        &self,
        rng: &mut R,
        local: bool,
        epsilon: f64,
        out: &mut [usize],
        work: &mut Work,
    ) -> Result<()> {
        let n = self.obj.n();
        let k = out.len();
        let eps = epsilon / k as f64;
        let Work { map, scores, perm } = work;
        for (i, x) in map.iter_mut().enumerate() {
            *x = i;
        }
        let mut removed: Vec<usize> = Vec::with_capacity(k);
        let mut live = n;
        for round in 0..k {
            let pick = if live == 1 {
                0
            } else if !local {
                if round == 0 {
                    scores[..n].copy_from_slice(&self.ps0);
                } else {
                    for j in 0..live {
                        scores[j] = self.ps(map[j], &removed);
                    }
                }
                select(
                    rng,
                    Selector::Exponential,
                    &scores[..live],
                    (live - 1) as f64,
                    eps,
                    perm,
                    Arithmetic::Exact,
                )?
            } else if round == 0 {
                select(
                    rng,
                    Selector::Exponential,
                    &self.damp0,
                    1.0,
                    eps,
                    perm,
                    Arithmetic::Exact,
                )?
            } else {
                let corr = Corrected {
                    pre: self,
                    removed: &removed,
                };
                let ls = LocalSensitivity::new(DeltaSource::Function(&corr), (live - 1) as f64, self.columns, n)?;
                for j in 0..live {
                    let r = map[j];
                    scores[j] = dampen_value(self.ps(r, &removed), r, &ls)?;
                }
                select(
                    rng,
                    Selector::Exponential,
                    &scores[..live],
                    1.0,
                    eps,
                    perm,
                    Arithmetic::Exact,
                )?
            };
            let chosen = map[pick];
            live -= 1;
            map[pick] = map[live];
            map[live] = chosen;
            removed.push(chosen);
        }
        out.copy_from_slice(&removed);
        Ok(())
    }

    /// The non-private top-k: k rounds of argmax of the Pareto score among the remaining candidates
    /// (re-scored each round), ties to the lowest node index (the order of first appearance in the SNAP
    /// file, which follows the SNAP ids).
    pub fn true_top_k(&self, k: usize) -> Vec<usize> {
        let n = self.obj.n();
        let mut removed = Vec::with_capacity(k);
        let mut gone = vec![false; n];
        for _ in 0..k {
            let mut best = usize::MAX;
            let mut best_ps = f64::NEG_INFINITY;
            for r in (0..n).filter(|&r| !gone[r]) {
                let p = self.ps(r, &removed);
                if p > best_ps {
                    best_ps = p;
                    best = r;
                }
            }
            gone[best] = true;
            removed.push(best);
        }
        removed
    }

    /// Diagnostics of the saturation distance along `sequence` (the true top-k order): per round, the
    /// largest number of leading zero columns of δ^PS among Pareto-optimal candidates (their dampened score
    /// equals that number, so it must stay below `columns`), and the number of candidates whose breakpoint
    /// b(columns) is below |PS| (their score is then squeezed by the saturation). Both 0-loss conditions hold
    /// when the first is < columns and the second is 0: any larger `columns` gives the same mechanism.
    pub fn saturation_report(&self, sequence: &[usize]) -> Vec<(usize, usize)> {
        let n = self.obj.n();
        let c = self.columns;
        let mut out = Vec::new();
        for round in 0..sequence.len() {
            let removed = &sequence[..round];
            let mut zeros = 0;
            let mut short = 0;
            for r in (0..n).filter(|r| !removed.contains(r)) {
                let ps = self.ps(r, removed);
                let mut b = 0.0;
                let mut z = 0;
                let mut leading = true;
                for t in 0..c {
                    let d = self.delta_ps(r, t, removed);
                    if d == 0.0 && leading {
                        z += 1;
                    } else {
                        leading = false;
                    }
                    b += d;
                }
                if ps == 0.0 {
                    zeros = zeros.max(z);
                } else if b < -ps {
                    short += 1;
                }
            }
            out.push((zeros, short));
        }
        out
    }
}

/// Per-thread scratch of [`ParetoPrecomputed::run`].
pub struct Work {
    map: Vec<usize>,
    scores: Vec<f64>,
    perm: Vec<usize>,
}

impl Work {
    /// Scratch for n candidates.
    pub fn new(n: usize) -> Work {
        Work {
            map: vec![0; n],
            scores: vec![0.0; n],
            perm: vec![0; n],
        }
    }
}

/// Metric C (PrivPareto paper, Def. 6.3, after Zitzler and Thiele): the fraction of `picked` (X″) that is
/// dominated by at least one member of `truth` (X′). Dominance is the textbook relation, so a node never
/// covers itself and the error is 0 when every pick is Pareto-optimal relative to X′.
pub fn metric_c(truth: &[usize], picked: &[usize], util: &[f64], m: usize) -> f64 {
    let row = |r: usize| &util[r * m..(r + 1) * m];
    let covered = picked
        .iter()
        .filter(|&&b| truth.iter().any(|&a| DOMINANCE.dominates(row(a), row(b))))
        .count();
    covered as f64 / picked.len() as f64
}

/// Recall |picked ∩ truth| / |truth|.
pub fn recall(truth: &[usize], picked: &[usize]) -> f64 {
    picked.iter().filter(|p| truth.contains(p)).count() as f64 / truth.len() as f64
}

/// The true top-k of `scores` (ties to the lower index).
pub fn top_k_by(scores: &[f64], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    idx.truncate(k);
    idx
}

// ---------------------------------------------------------------------------------------------------------

/// Table 2 on Enron.
pub fn run_pareto(ctx: &Context) -> Result<Section> {
    let start = Instant::now();
    let dir = output::results_dir(&ctx.out, "motkin-pareto")?;
    let graph = load_enron(ctx)?;
    let g = graph.csr()?;
    let columns = if ctx.smoke { COLUMNS_SMOKE } else { COLUMNS };
    let runs = if ctx.smoke { 20 } else { 500 };
    let eps_grid: Vec<f64> = if ctx.smoke {
        vec![1.0, 50.0]
    } else {
        TABLE2_EPS.to_vec()
    };
    let k = 3;
    let obj = Objectives::new(&g, columns)?;
    let n = obj.n();
    let t = Instant::now();
    let pre = ParetoPrecomputed::new(&obj, columns)?;
    let precompute_s = t.elapsed().as_secs_f64();
    let truth = pre.true_top_k(k);
    let front = pre.ps0.iter().filter(|&&p| p == 0.0).count();
    let sat = pre.saturation_report(&truth);

    // One selection with the core's select_privpareto (timed), and the same run through the fast path
    // with the same generator: the picks must be identical.
    let timing_eps = 20.0;
    let mut core_pick = vec![0usize; k];
    let t = Instant::now();
    obj.with_deltas(|deltas| {
        let need = privpareto_scratch_len(n, M)?;
        let mut values = vec![0.0; need.values];
        let mut indices = vec![0usize; need.indices];
        let mut rng = run_rng(ctx.seed, "motkin-pareto-check", 0, 0);
        select_privpareto(
            &mut rng,
            &obj.util,
            M,
            DOMINANCE,
            ParetoSensitivity::Local {
                deltas,
                max_distance: 0,
                dampening: Dampening::Plain,
            },
            Selector::Exponential,
            timing_eps,
            &mut core_pick,
            &mut values,
            &mut indices,
            Arithmetic::Exact,
        )?;
        Ok(())
    })?;
    let core_seconds = t.elapsed().as_secs_f64();
    let mut fast_pick = vec![0usize; k];
    let mut rng = run_rng(ctx.seed, "motkin-pareto-check", 0, 0);
    let t = Instant::now();
    pre.run(&mut rng, true, timing_eps, &mut fast_pick, &mut Work::new(n))?;
    let fast_seconds = t.elapsed().as_secs_f64();
    ensure!(
        core_pick == fast_pick,
        "fast DP-MoTkIN-Pareto path diverged from select_privpareto: {core_pick:?} vs {fast_pick:?}"
    );
    eprintln!(
        "one DP-MoTkIN-Pareto-local top-{k} selection on Enron (select_privpareto, columns = {columns}): {core_seconds:.2} s"
    );

    // A uniformly random node's C (what a mechanism that ignores the data scores).
    let uniform_c = (0..n).filter(|&b| metric_c(&truth, &[b], &obj.util, M) > 0.0).count() as f64 / n as f64;

    let configs: Vec<(usize, bool)> = (0..eps_grid.len()).flat_map(|e| [(e, false), (e, true)]).collect();
    let pb = progress(configs.len() * runs, "DP-MoTkIN-Pareto runs");
    let mut results = Vec::new();
    for &(ei, local) in &configs {
        let eps = eps_grid[ei];
        let cs: Vec<f64> = (0..runs)
            .into_par_iter()
            .map_init(
                || Work::new(n),
                |work, run| -> Result<f64> {
                    let mut rng = run_rng(ctx.seed, "motkin-pareto", (ei * 2 + local as usize) as u64, run as u64);
                    let mut picks = vec![0usize; k];
                    pre.run(&mut rng, local, eps, &mut picks, work)?;
                    pb.inc(1);
                    Ok(metric_c(&truth, &picks, &obj.util, M))
                },
            )
            .collect::<Result<_>>()?;
        results.push((eps, local, mean_se(&cs)));
    }
    pb.finish_and_clear();

    // CSV, plot, markdown.
    let mut rows = Vec::new();
    let mut md_rows = Vec::new();
    let mut series = vec![
        Series {
            label: "MOT_g (ours)".into(),
            points: vec![],
        },
        Series {
            label: "MOT_l (ours)".into(),
            points: vec![],
        },
        Series {
            label: "MOT_g (paper)".into(),
            points: vec![],
        },
        Series {
            label: "MOT_l (paper)".into(),
            points: vec![],
        },
    ];
    for &eps in &eps_grid {
        let get = |l: bool| results.iter().find(|r| r.0 == eps && r.1 == l).map(|r| r.2).unwrap();
        let pubv = TABLE2_EPS.iter().position(|&e| e == eps).map(|i| TABLE2_PUBLISHED[i]);
        let (g_, l_) = (get(false), get(true));
        for (l, (m, se)) in [(false, g_), (true, l_)] {
            let p = pubv.map(|p| if l { p.1 } else { p.0 });
            rows.push(vec![
                eps.to_string(),
                if l { "local" } else { "global" }.into(),
                f(m, 4),
                f(se, 4),
                runs.to_string(),
                p.map(|p| f(p, 2)).unwrap_or_default(),
            ]);
        }
        series[0].points.push((eps, g_.0));
        series[1].points.push((eps, l_.0));
        if let Some(p) = pubv {
            series[2].points.push((eps, p.0));
            series[3].points.push((eps, p.1));
        }
        md_rows.push(vec![
            eps.to_string(),
            format!("{} ± {}", f(g_.0, 3), f(g_.1, 3)),
            pubv.map(|p| f(p.0, 2)).unwrap_or_default(),
            format!("{} ± {}", f(l_.0, 3), f(l_.1, 3)),
            pubv.map(|p| f(p.1, 2)).unwrap_or_default(),
        ]);
    }
    output::write_csv(
        &dir.join("table2.csv"),
        &["epsilon", "method", "mean_C", "std_error", "runs", "published"],
        &rows,
    )?;
    output::line_plot(
        &dir.join("table2.png"),
        &LinePlot {
            title: "DP-MoTkIN-Pareto on Enron, k = 3: mean metric C (lower is better)",
            x_label: "epsilon",
            y_label: "mean C",
            series: &series,
            log_x: true,
        },
    )?;

    let label = |v: usize| graph.labels[v];
    let describe = |v: usize| {
        format!(
            "node {} (degree {}, egodensity {:.4})",
            label(v),
            obj.util[v * M],
            obj.util[v * M + 1]
        )
    };
    let sat_text = sat
        .iter()
        .enumerate()
        .map(|(i, (z, s))| {
            format!(
                "round {}: {} leading zero columns at most, {} candidates squeezed",
                i + 1,
                z,
                s
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut body = String::new();
    body.push_str(&format!(
        "PrivPareto paper §7.4, Table 2 (Enron columns). DP-MoTkIN-Pareto picks k = 3 nodes in 3 rounds at ε/3 each \
         with the exponential mechanism, re-scoring the remaining nodes each round (the core's `select_privpareto`); \
         objectives degree and egocentric density under edge-DP. Error: mean metric C(X′, X″) (Def. 6.3) of the \
         private picks X″ against the non-private top-3 X′, over **{runs} runs** per cell (± one standard error).\n\n"
    ));
    body.push_str(&output::markdown_table(
        &["ε", "MOT_g (ours)", "MOT_g (paper)", "MOT_l (ours)", "MOT_l (paper)"],
        &md_rows,
    ));
    body.push_str(&format!(
        "\n![Table 2 as a plot](results/motkin-pareto/table2.png)\n\n\
         **Setup.** Enron: {n} nodes, {} edges, maximum degree {}. {front} nodes are Pareto-optimal (PS = 0). \
         X′ = the non-private version (argmax of the Pareto score each round, re-scored; ties to the lowest SNAP id): \
         {}. A node drawn uniformly at random is covered by X′ with probability {:.3}: this is the C of a mechanism \
         that ignores the data.\n\n",
        graph.edge_count(),
        graph.max_degree(),
        truth.iter().map(|&v| describe(v)).collect::<Vec<_>>().join(", "),
        uniform_c
    ));
    body.push_str(&format!(
        "**Metric C.** Def. 6.3 reads C(X′, X″) = |{{a″ ∈ X″ : ∃ a′ ∈ X′, a′ ⪰ a″}}| / |X″|. With the paper's weak \
         relation (Def. 4.3, ≥ in every objective) a pick equal to a true node would count as covered, so a perfect \
         answer would score 1, not the 0 the table shows for MOT_l at ε = 50. We therefore use textbook dominance \
         (≥ everywhere, > somewhere) both in the Pareto score and in C: a pick is an error when some true top-3 node \
         is at least as good in both objectives and better in one.\n\n\
         **Saturation distance (`columns`).** δ^PS is tabulated for t < {columns} and saturates to Δ = n − 1 beyond. \
         A Pareto-optimal node's dampened score equals the number of leading zero columns of its δ^PS, so `columns` \
         caps how far the best nodes can rise above the rest; a dominated node's score is exact once the breakpoints \
         b(columns) exceed |PS|. Both conditions checked along the true top-3 sequence: {sat_text}. Zero squeezed \
         candidates and fewer leading zeros than `columns` mean that any larger `columns` gives exactly the same \
         mechanism. We fixed {columns} in advance as a public constant (it must not be tuned on the private graph); \
         each column costs one O(n log n) sweep per round in the core.\n\n\
         **Speed.** One DP-MoTkIN-Pareto-local top-3 selection on Enron with the core's `select_privpareto` \
         (columns = {columns}) took **{core_seconds:.2} s**; the run-loop path, which reuses the round-1 table and \
         updates it for the removed nodes, took {:.3} s for the same run and gave the identical picks \
         ({}), which is checked every time this experiment runs. Precomputation (Pareto scores, δ^PS table, corners): \
         {precompute_s:.2} s.\n\n",
        fast_seconds,
        fast_pick
            .iter()
            .map(|&v| label(v).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    body.push_str(&pareto_discussion(uniform_c, front));
    body.push_str(&format!("\nExperiment time {:.1} s.\n", start.elapsed().as_secs_f64()));
    Ok(Section {
        title: "DP-MoTkIN-Pareto on Enron (PrivPareto paper, Table 2)".into(),
        body,
    })
}

fn pareto_discussion(uniform_c: f64, front: usize) -> String {
    format!(
        "**Comparison.** Global: with Δ = n − 1 = 36,691 a round at ε/3 weighs two nodes whose Pareto scores differ \
         by the whole range n − 1 by at most e^{{ε/6}}: for ε ≤ 2 the picks are nearly uniform and C stays near the \
         uniform-pick value {uniform_c:.3}; from ε = 5 on the factor (e^{{0.8}} … e^{{8.3}}) favours the many nodes \
         with scores near 0 enough to lower C, down to almost 0 at ε = 50 (published: 0.07). \
         Local: most nodes (low degree) have δ^egodensity = 1, so their δ^PS(0) is n − 1 and their dampened score \
         lies in (−1, 0]; the top nodes, whose boxes overlap no other node for a few distances, get dampened scores \
         of a few units. The gap is worth something only when ε/6 times it beats ln(36,692) ≈ 10.5, i.e. from \
         ε ≈ 10, which is the shape of the published column (0.16 at ε = 10, 0.07 at 20, 0.00 at 50). Where our \
         numbers differ from the paper by more than a few standard errors, the causes we can identify are: (i) the \
         paper does not say how ties among the {} Pareto-optimal nodes are broken in X′, and C depends strongly on \
         which nodes X′ holds (it sets the uniform-pick baseline); (ii) the paper's dominance relation in C is not \
         usable as printed (see above); (iii) the paper does not give its saturation distance; (iv) the authors' \
         code, per DESIGN.md §4, used strict comparisons in δ^PS and records − 1 instead of candidates − 1 in the \
         global mechanism, which we do not copy.\n",
        front
    )
}

// ---------------------------------------------------------------------------------------------------------

/// Figure 3 (Enron panel).
pub fn run_agg(ctx: &Context) -> Result<Section> {
    let start = Instant::now();
    let dir = output::results_dir(&ctx.out, "motkin-agg")?;
    let graph = load_enron(ctx)?;
    let g = graph.csr()?;
    let runs = if ctx.smoke { 20 } else { 500 };
    let eps_grid: Vec<f64> = if ctx.smoke {
        vec![0.1, 1.0, 50.0]
    } else {
        FIG3_EPS.to_vec()
    };
    let k = 5;
    let obj = Objectives::new(&g, 1)?;
    let n = obj.n();
    let mut agg = vec![0.0; n];
    weighted_sum(&obj.util, &WEIGHTS, &mut agg)?;
    let truth = top_k_by(&agg, k);
    let globals = [DEGREE_GLOBAL_SENSITIVITY, EGODENSITY_GLOBAL_SENSITIVITY];

    // Local: δ_agg = Σ |w_i| δ_i tabulated up to the objectives' saturation (lossless), dampened once.
    let t = Instant::now();
    let (dampened, delta_agg, columns) = obj.with_deltas(|deltas| {
        let columns = weighted_saturation(deltas);
        let mut table = vec![0.0; n * columns];
        let delta_agg = weighted_sensitivity_table(&WEIGHTS, deltas, columns, &mut table)?;
        let ls = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns,
            },
            delta_agg,
            columns,
            n,
        )?;
        let mut d = vec![0.0; n];
        dampen_with(&agg, &ls, Dampening::Plain, &mut d)?;
        // The same run through select_privagg must give the same picks as select_top_k on these scores.
        let mut a = vec![0usize; k];
        let mut b = vec![0usize; k];
        let need = privagg_scratch_len(n, M)?;
        let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
        select_privagg(
            &mut run_rng(ctx.seed, "motkin-agg-check", 0, 0),
            &obj.util,
            &WEIGHTS,
            AggSensitivity::Local {
                deltas,
                max_distance: 0,
                dampening: Dampening::Plain,
            },
            Selector::Exponential,
            1.0,
            &mut a,
            &mut values,
            &mut indices,
            Arithmetic::Exact,
        )?;
        let (mut s1, mut s2, mut s3) = (vec![0.0; n], vec![0usize; n], vec![0usize; n]);
        select_top_k(
            &mut run_rng(ctx.seed, "motkin-agg-check", 0, 0),
            Selector::Exponential,
            &d,
            1.0,
            1.0,
            &mut b,
            &mut s1,
            &mut s2,
            &mut s3,
            Arithmetic::Exact,
        )?;
        ensure!(
            a == b,
            "select_privagg and the precomputed path disagree: {a:?} vs {b:?}"
        );
        Ok((d, delta_agg, columns))
    })?;
    let precompute_s = t.elapsed().as_secs_f64();

    let configs: Vec<(usize, bool)> = (0..eps_grid.len()).flat_map(|e| [(e, false), (e, true)]).collect();
    let pb = progress(configs.len() * runs, "DP-MoTkIN-Agg runs");
    let mut results = Vec::new();
    for &(ei, local) in &configs {
        let eps = eps_grid[ei];
        let rec: Vec<f64> = (0..runs)
            .into_par_iter()
            .map_init(
                || {
                    (
                        vec![0.0; n],
                        vec![0usize; n],
                        vec![0usize; n],
                        vec![0.0; privagg_scratch_len(n, M).map(|s| s.values).unwrap_or(4 * n)],
                        vec![0usize; 2 * n],
                    )
                },
                |(s1, s2, s3, values, indices), run| -> Result<f64> {
                    let mut rng = run_rng(ctx.seed, "motkin-agg", (ei * 2 + local as usize) as u64, run as u64);
                    let mut picks = vec![0usize; k];
                    if local {
                        select_top_k(
                            &mut rng,
                            Selector::Exponential,
                            &dampened,
                            1.0,
                            eps,
                            &mut picks,
                            s1,
                            s2,
                            s3,
                            Arithmetic::Exact,
                        )?;
                    } else {
                        select_privagg(
                            &mut rng,
                            &obj.util,
                            &WEIGHTS,
                            AggSensitivity::Global(&globals),
                            Selector::Exponential,
                            eps,
                            &mut picks,
                            values,
                            indices,
                            Arithmetic::Exact,
                        )?;
                    }
                    pb.inc(1);
                    Ok(recall(&truth, &picks))
                },
            )
            .collect::<Result<_>>()?;
        results.push((eps, local, mean_se(&rec)));
    }
    pb.finish_and_clear();

    let mut rows = Vec::new();
    let mut md_rows = Vec::new();
    let mut series = vec![
        Series {
            label: "Agg_global (ours)".into(),
            points: vec![],
        },
        Series {
            label: "Agg_local (ours)".into(),
            points: vec![],
        },
    ];
    for &eps in &eps_grid {
        let get = |l: bool| results.iter().find(|r| r.0 == eps && r.1 == l).map(|r| r.2).unwrap();
        let (g_, l_) = (get(false), get(true));
        for (l, (m, se)) in [(false, g_), (true, l_)] {
            rows.push(vec![
                eps.to_string(),
                if l { "local" } else { "global" }.into(),
                f(m, 4),
                f(se, 4),
                runs.to_string(),
            ]);
        }
        series[0].points.push((eps, g_.0));
        series[1].points.push((eps, l_.0));
        md_rows.push(vec![
            eps.to_string(),
            format!("{} ± {}", f(g_.0, 3), f(g_.1, 3)),
            format!("{} ± {}", f(l_.0, 3), f(l_.1, 3)),
        ]);
    }
    output::write_csv(
        &dir.join("figure3.csv"),
        &["epsilon", "method", "mean_recall", "std_error", "runs"],
        &rows,
    )?;
    output::line_plot(
        &dir.join("figure3.png"),
        &LinePlot {
            title: "DP-MoTkIN-Agg on Enron, k = 5, u_agg = degree + 100 egodensity",
            x_label: "epsilon",
            y_label: "mean recall of the true top-5",
            series: &series,
            log_x: true,
        },
    )?;
    let truth_text = truth
        .iter()
        .map(|&v| format!("{} (u_agg {:.2})", graph.labels[v], agg[v]))
        .collect::<Vec<_>>()
        .join(", ");
    let sixth = top_k_by(&agg, k + 1)[k];
    let first_perfect = results
        .iter()
        .filter(|r| r.1 && r.2 .0 >= 0.999)
        .map(|r| r.0)
        .fold(f64::INFINITY, f64::min);
    let first_global = results
        .iter()
        .filter(|r| !r.1 && r.2 .0 >= 0.9)
        .map(|r| r.0)
        .fold(f64::INFINITY, f64::min);
    let mut body = String::new();
    body.push_str(&format!(
        "PrivPareto paper §7.5, Figure 3 (Enron panel). DP-MoTkIN-Agg picks k = 5 nodes in 5 rounds at ε/5 each with \
         the exponential mechanism over u_agg = degree + 100 · egodensity (the core's `select_privagg`). Global: \
         Δ_agg = 1·1 + 100·1 = {} (Thm. 5.3). Local: δ_agg = δ^degree + 100 · δ^egodensity (Thm. 5.4), tabulated up \
         to the distance {columns} from which every δ^egodensity is 1 (so nothing is lost by saturation), plain \
         dampening. Mean recall of the true top-5 over **{runs} runs** per point (± one standard error).\n\n",
        WEIGHTS[0] * globals[0] + WEIGHTS[1] * globals[1]
    ));
    body.push_str(&output::markdown_table(
        &["ε", "Agg_global (ours)", "Agg_local (ours)"],
        &md_rows,
    ));
    body.push_str(&format!(
        "\n![Figure 3, Enron](results/motkin-agg/figure3.png)\n\n\
         **Published.** Figure 3 is a plot only; its text says Agg_local \"obtains perfect recall with low privacy \
         budget, ε ≤ 1 for Enron\" (read as: perfect recall from about ε = 1 on) and that Agg_global \"needs a higher \
         privacy budget, from 1 to 2 orders of magnitude, to achieve the same recall\". Ours: Agg_local first reaches \
         recall ≥ 0.999 at ε = {}, Agg_global first reaches 0.9 at ε = {}: the local mechanism needs about {} \
         times less budget, in line with the published claim.\n\n\
         **Why.** The true top-5 by u_agg are {truth_text}; the sixth has u_agg {:.2}. Globally the exponential \
         mechanism at ε/5 weighs a score gap of about 1,240 by e^{{ε · 1240 / (10 · 101)}}, which must beat the \
         36,687 other nodes (ln ≈ 10.5): ε ≈ 10–20. Locally the top nodes have δ_agg ≈ 1 + 200/(degree − t − 2) ≈ \
         1.1–1.5 for hundreds of distances, so their dampened scores are in the hundreds while a degree-1 node's \
         (δ_agg = 101) is 0.01: a gap of hundreds instead of 12. Precomputation (δ_agg table of {n} × {columns}, \
         dampening, check against `select_privagg`): {precompute_s:.2} s.\n",
        fmt_eps(first_perfect),
        fmt_eps(first_global),
        if first_perfect.is_finite() && first_global.is_finite() {
            format!("{:.0}", first_global / first_perfect)
        } else {
            "—".into()
        },
        agg[sixth]
    ));
    body.push_str(&format!("\nExperiment time {:.1} s.\n", start.elapsed().as_secs_f64()));
    let _ = delta_agg;
    Ok(Section {
        title: "DP-MoTkIN-Agg on Enron (PrivPareto paper, Figure 3)".into(),
        body,
    })
}

fn fmt_eps(e: f64) -> String {
    if e.is_finite() {
        e.to_string()
    } else {
        "none of the tested values".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::snap::Graph;
    use rand_core::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_graph(n: usize, p: f64, seed: u64) -> Graph {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut edges = Vec::new();
        for a in 0..n as u32 {
            for b in a + 1..n as u32 {
                if (rng.next_u64() as f64 / u64::MAX as f64) < p {
                    edges.push((a, b));
                }
            }
        }
        // A hub so that degrees spread out.
        for b in 1..n as u32 / 2 {
            edges.push((0, b));
        }
        Graph::from_edges(n, &edges)
    }

    #[test]
    fn metric_c_and_recall() {
        // (deg, ego): a = (3, 0.5), b = (2, 0.5) dominated by a, c = (1, 0.9) not dominated, d = a's copy.
        let util = [3.0, 0.5, 2.0, 0.5, 1.0, 0.9, 3.0, 0.5];
        assert_eq!(metric_c(&[0], &[1, 2], &util, 2), 0.5);
        assert_eq!(metric_c(&[0], &[0], &util, 2), 0.0, "a node does not cover itself");
        assert_eq!(metric_c(&[0], &[3], &util, 2), 0.0, "an exact tie is not covered");
        assert_eq!(metric_c(&[0, 2], &[1, 2, 3], &util, 2), 1.0 / 3.0);
        assert_eq!(recall(&[1, 2, 3, 4, 5], &[5, 9, 1, 7, 8]), 0.4);
        assert_eq!(top_k_by(&[1.0, 3.0, 3.0, 2.0], 3), vec![1, 2, 3]);
    }

    #[test]
    fn fast_pareto_path_equals_select_privpareto() {
        for seed in 0..4u64 {
            let graph = random_graph(60, 0.08, seed);
            let g = graph.csr().unwrap();
            for columns in [1usize, 3, 8] {
                let obj = Objectives::new(&g, columns).unwrap();
                let n = obj.n();
                let pre = ParetoPrecomputed::new(&obj, columns).unwrap();
                for (local, eps) in [(true, 0.5), (true, 5.0), (true, 80.0), (false, 30.0)] {
                    for run in 0..5 {
                        let mut core = [0usize; 4];
                        obj.with_deltas(|deltas| {
                            let need = privpareto_scratch_len(n, M)?;
                            let (mut v, mut i) = (vec![0.0; need.values], vec![0usize; need.indices]);
                            let sens = if local {
                                ParetoSensitivity::Local {
                                    deltas,
                                    max_distance: 0,
                                    dampening: Dampening::Plain,
                                }
                            } else {
                                ParetoSensitivity::Global
                            };
                            select_privpareto(
                                &mut run_rng(seed, "t", 0, run),
                                &obj.util,
                                M,
                                DOMINANCE,
                                sens,
                                Selector::Exponential,
                                eps,
                                &mut core,
                                &mut v,
                                &mut i,
                                Arithmetic::Exact,
                            )?;
                            Ok(())
                        })
                        .unwrap();
                        let mut fast = [0usize; 4];
                        pre.run(
                            &mut run_rng(seed, "t", 0, run),
                            local,
                            eps,
                            &mut fast,
                            &mut Work::new(n),
                        )
                        .unwrap();
                        assert_eq!(core, fast, "seed {seed} columns {columns} local {local} eps {eps}");
                    }
                }
            }
        }
    }

    #[test]
    fn corrected_table_equals_the_core_on_the_remaining_set() {
        let graph = random_graph(50, 0.1, 9);
        let g = graph.csr().unwrap();
        let columns = 6;
        let obj = Objectives::new(&g, columns).unwrap();
        let pre = ParetoPrecomputed::new(&obj, columns).unwrap();
        let removed = [0usize, 7, 3];
        let keep: Vec<usize> = (0..obj.n()).filter(|r| !removed.contains(r)).collect();
        let util: Vec<f64> = keep.iter().flat_map(|&r| obj.row(r).to_vec()).collect();
        let degs: Vec<usize> = keep.iter().map(|&r| obj.degree[r]).collect();
        let ones = vec![1.0; keep.len()];
        let ego = EgoDelta(&degs);
        let deltas = [
            LocalSensitivity::new(DeltaSource::PerCandidate(&ones), 1.0, obj.t_max, keep.len()).unwrap(),
            LocalSensitivity::new(DeltaSource::Function(&ego), 1.0, obj.t_max, keep.len()).unwrap(),
        ];
        let need = pareto_sensitivity_scratch_len(keep.len(), M).unwrap();
        let mut table = vec![0.0; keep.len() * columns];
        pareto_sensitivity_table(
            &util,
            M,
            &deltas,
            columns,
            &mut table,
            &mut vec![0; need.indices],
            &mut vec![0.0; need.values],
        )
        .unwrap();
        let mut ps = vec![0.0; keep.len()];
        pareto_scores(
            &util,
            M,
            DOMINANCE,
            &mut ps,
            &mut vec![0; pareto_scores_scratch_len(keep.len()).unwrap()],
        )
        .unwrap();
        for (j, &r) in keep.iter().enumerate() {
            assert_eq!(ps[j], pre.ps(r, &removed));
            for t in 0..columns {
                assert_eq!(table[j * columns + t], pre.delta_ps(r, t, &removed), "r {r} t {t}");
            }
        }
        let _ = Instant::now();
    }
}
