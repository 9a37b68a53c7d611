//! PrivPareto paper, Figure 2: u_agg = 3·TPR + 2·TNR of the tree DP-MOET-Agg outputs (global, local)
//! against NODP-MOET-Agg and LocalDiffPID3.

use super::bitset::Columnar;
use super::diffpid3::IG_T_MAX;
use super::dpmoet::{self, Method, Params};
use super::id3::{self, Criterion, Id3Params, Variant};
use super::tree::Confusion;
use crate::data::Bundled;
use crate::harness::{
    list_or_none, progress, show_eps, show_z, z, Cell, Experiment, Job, Needs, Outcome, SummaryRow, Z_CLAIM,
};
use crate::output::{self, Chart, Curve, Scale};
use anyhow::Result;
use rayon::prelude::*;
use std::time::Instant;

/// The registry entry.
pub const EXPERIMENT: Experiment = Experiment {
    name: "dpmoet-agg",
    about: "DP-MOET-Agg global/local vs NODP-MOET-Agg and LocalDiffPID3, u_agg = 3 TPR + 2 TNR (PrivPareto Figure 2)",
    k_means: None,
    needs: Needs::Table,
    run,
};

const EPS: [f64; 6] = [0.01, 0.05, 0.1, 0.5, 1.0, 2.0];
const EPS_SMOKE: [f64; 2] = [0.1, 1.0];
const RUNS: usize = 20;
const RUNS_SMOKE: usize = 3;
/// LocalDiffPID3 runs per point (its trees on Adult take about a second each).
const ID3_RUNS: usize = 10;
const ID3_DEPTH: usize = 5;
const WEIGHTS: [f64; 2] = [3.0, 2.0];
/// The improvement of DP-MOET-Agg_local over LocalDiffPID3 the paper's text states.
const PUBLISHED_GAIN: [(Bundled, f64); 2] = [(Bundled::Nltcs, 0.06), (Bundled::Adult, 0.21)];

fn params(epsilon: f64, rate_t_max: usize) -> Params {
    Params {
        p: 100,
        s: 20,
        k: 2,
        d: 3,
        d_max: 5,
        o: 1,
        epsilon,
        weights: WEIGHTS,
        rate_t_max,
    }
}

const DIFFPID3: &str = "local-diffpid3";

/// (method, ε (None for NODP), run, u_agg, TPR, TNR, seconds).
type Row = (&'static str, Option<f64>, usize, f64, f64, f64, f64);

fn run(job: &Job<'_>) -> Result<Outcome> {
    let s = job.settings;
    let runs = s.runs(RUNS, RUNS_SMOKE);
    let id3_runs = runs.min(ID3_RUNS);
    let grid = s.epsilons(&EPS, &EPS_SMOKE);
    let mut body = format!(
        "Setup as in §6.4: p = 100, s = 20, k = 2, d = 3, d_max = 5, o = 1; u_agg = 3·TPR + 2·TNR of the output \
         tree on the whole dataset, mean ± standard error over {runs} runs ({id3_runs} for LocalDiffPID3; the paper \
         does not state its number of runs). `global`: Δ = 3·ΔTPR + 2·ΔTNR = 5 (Thm. 5.3); `local`: δ_agg = \
         3·δ^TPR + 2·δ^TNR (Thm. 5.4) with the admissible add/remove rate sensitivities, plain local dampening, \
         δ_agg evaluated on demand and walked until every score is determined (no table, no cap: the rate \
         sensitivities reach Δ by themselves at the dataset size, and the walks end there at the latest); the core's `select_privagg` in exact \
         arithmetic; ε split over the k + 1 selections and their picks as in Table 1. `non-private` \
         (NODP-MOET-Agg) does not depend on ε. `{DIFFPID3}`: Algorithm 2 of the Local Dampening paper with IG and \
         local dampening, depth {ID3_DEPTH} (the paper does not say which depth), trained and scored on the whole \
         dataset like DP-MOET.\n\n"
    );
    let mut summary = Vec::new();
    for (di, d) in job.tables.iter().enumerate() {
        let cols = Columnar::new(&d.table);
        let n = d.table.len();
        let all_rows: Vec<u32> = (0..n as u32).collect();
        let start = Instant::now();
        let pb = progress(runs, &format!("{}: DP-MOET-Agg runs", d.name()));
        let rows: Vec<Row> = (0..runs)
            .into_par_iter()
            .map(|run| -> Result<Vec<Row>> {
                let mut out = Vec::new();
                let record = |name: &'static str, e: Option<f64>, c: Confusion, secs: f64| -> Row {
                    (
                        name,
                        e,
                        run,
                        WEIGHTS[0] * c.tpr() + WEIGHTS[1] * c.tnr(),
                        c.tpr(),
                        c.tnr(),
                        secs,
                    )
                };
                let mut rng = job.rng("nodp", &[di as u64, run as u64]);
                let t = Instant::now();
                let nodp = dpmoet::run(&mut rng, &cols, &params(1.0, n), Method::NoDpAgg)?;
                out.push(record("non-private", None, nodp[0].conf, t.elapsed().as_secs_f64()));
                for (ei, &eps) in grid.iter().enumerate() {
                    for (mi, m) in [Method::AggLocal, Method::AggGlobal].into_iter().enumerate() {
                        let mut rng = job.rng("private", &[di as u64, ei as u64, mi as u64, run as u64]);
                        let t = Instant::now();
                        let got = dpmoet::run(&mut rng, &cols, &params(eps, n), m)?;
                        out.push(record(m.name(), Some(eps), got[0].conf, t.elapsed().as_secs_f64()));
                    }
                    if run < id3_runs {
                        let mut rng = job.rng("diffpid3", &[di as u64, ei as u64, run as u64]);
                        let t = Instant::now();
                        let p = Id3Params {
                            depth: ID3_DEPTH,
                            budget: eps,
                            criterion: Criterion::InfoGain,
                            variant: Variant::Local,
                            t_max: IG_T_MAX,
                            max_records: n as u64,
                        };
                        let tree = id3::train(&mut rng, &d.table, &all_rows, p)?;
                        let mut c = Confusion::default();
                        for r in 0..n {
                            match (tree.predict(&d.table, r), d.table.class[r]) {
                                (1, 1) => c.tp += 1,
                                (0, 1) => c.fn_ += 1,
                                (0, _) => c.tn += 1,
                                _ => c.fp += 1,
                            }
                        }
                        out.push(record(DIFFPID3, Some(eps), c, t.elapsed().as_secs_f64()));
                    }
                }
                pb.inc(1);
                Ok(out)
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect();
        pb.finish_and_clear();
        let wall = start.elapsed().as_secs_f64();
        let csv: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    d.name().to_string(),
                    r.0.to_string(),
                    r.1.map(|e| e.to_string()).unwrap_or_default(),
                    r.2.to_string(),
                    format!("{:.6}", r.3),
                    format!("{:.6}", r.4),
                    format!("{:.6}", r.5),
                    format!("{:.6}", r.6),
                ]
            })
            .collect();
        let (path, _) = job.file(d.name(), "runs.csv");
        output::write_csv(
            &path,
            &["dataset", "method", "epsilon", "run", "u_agg", "tpr", "tnr", "seconds"],
            &csv,
        )?;
        let cell = |name: &str, e: Option<f64>, col: usize| {
            Cell::of(
                &rows
                    .iter()
                    .filter(|r| r.0 == name && r.1 == e)
                    .map(|r| [r.3, r.4, r.5][col])
                    .collect::<Vec<_>>(),
            )
        };
        let methods = ["local", "global", DIFFPID3];
        for (col, metric) in ["u_agg", "tpr", "tnr"].iter().enumerate() {
            summary.push(SummaryRow::new(
                d.name(),
                "non-private",
                None,
                None,
                metric,
                cell("non-private", None, col),
            ));
            for m in methods {
                for &e in &grid {
                    summary.push(SummaryRow::new(
                        d.name(),
                        m,
                        Some(e),
                        None,
                        metric,
                        cell(m, Some(e), col),
                    ));
                }
            }
        }
        let u = |m: &str, e: f64| cell(m, Some(e), 0);
        let nodp = cell("non-private", None, 0);
        let ms = |m: &str| Cell::of(&rows.iter().filter(|r| r.0 == m).map(|r| r.6 * 1e3).collect::<Vec<_>>()).mean;
        let table: Vec<Vec<String>> = grid
            .iter()
            .map(|&e| {
                vec![
                    show_eps(e),
                    u("local", e).show(3),
                    u("global", e).show(3),
                    u(DIFFPID3, e).show(3),
                    nodp.show(3),
                ]
            })
            .collect();
        body.push_str(&format!(
            "**{}** ({}; wall time {wall:.1} s; one run: `local` {:.0} ms, `global` {:.0} ms, `non-private` {:.0} ms, \
             `{DIFFPID3}` {:.0} ms):\n\n{}",
            d.name(),
            d.table.describe(),
            ms("local"),
            ms("global"),
            ms("non-private"),
            ms(DIFFPID3),
            output::markdown_table(&["ε", "local", "global", DIFFPID3, "non-private"], &table)
        ));
        let curves = [
            Curve::measured("local (DP-MOET-Agg_local)", grid.iter().map(|&e| (e, u("local", e)))),
            Curve::measured("global (DP-MOET-Agg_global)", grid.iter().map(|&e| (e, u("global", e)))),
            Curve::measured("local-diffpid3 (depth 5)", grid.iter().map(|&e| (e, u(DIFFPID3, e)))),
            Curve::measured("non-private (NODP-MOET-Agg)", grid.iter().map(|&e| (e, nodp))),
        ];
        let (png, link) = job.file(d.name(), "u_agg.png");
        output::chart(
            &png,
            &Chart {
                title: &format!("DP-MOET-Agg on {}: u_agg = 3 TPR + 2 TNR", d.name()),
                x_label: "privacy budget ε",
                y_label: "u_agg of the output tree (max 5)",
                x_scale: Scale::Log,
                y_range: None,
                curves: &curves,
                note: &format!("{runs} runs per point ({id3_runs} for local-diffpid3); bars: 95% intervals"),
            },
        )?;
        body.push_str(&format!("\n![DP-MOET-Agg on {}]({link})\n\n", d.name()));
        // Computed claims.
        body.push_str(&format!("**What the runs show ({}).**\n\n", d.name()));
        let best: Vec<String> = grid
            .iter()
            .filter(|&&e| z(u("local", e), u("global", e)) >= Z_CLAIM && z(u("local", e), u(DIFFPID3, e)) >= Z_CLAIM)
            .map(|&e| show_eps(e))
            .collect();
        let close: Vec<String> = grid
            .iter()
            .filter(|&&e| z(u("local", e), u(DIFFPID3, e)).abs() < Z_CLAIM)
            .map(|&e| format!("{} ({})", show_eps(e), show_z(z(u("local", e), u(DIFFPID3, e)))))
            .collect();
        body.push_str(&format!(
            "* `local` has the highest u_agg of the private methods, with z ≥ {Z_CLAIM} against both others, at ε = \
             {}; it is not distinguishable from `{DIFFPID3}` (|z| < {Z_CLAIM}) at ε = {}.\n",
            list_or_none(&best),
            list_or_none(&close)
        ));
        let reach: Vec<String> = grid
            .iter()
            .map(|&e| format!("ε = {}: {}", show_eps(e), show_z(z(u("local", e), nodp))))
            .collect();
        let first = grid.iter().copied().find(|&e| {
            grid.iter()
                .filter(|&&x| x >= e)
                .all(|&x| z(u("local", x), nodp) > -Z_CLAIM)
        });
        body.push_str(&format!(
            "* `local` against `non-private` (z of the difference): {}. From ε = {} on, `local` is not below \
             `non-private` by z ≥ {Z_CLAIM}.\n",
            reach.join(", "),
            first.map(show_eps).unwrap_or_else(|| "no ε of the grid".into())
        ));
        let gains: Vec<String> = grid
            .iter()
            .map(|&e| {
                format!(
                    "{}: {:+.0}%",
                    show_eps(e),
                    100.0 * (u("local", e).mean / u(DIFFPID3, e).mean - 1.0)
                )
            })
            .collect();
        body.push_str(&format!(
            "* `local` over `{DIFFPID3}` (ratio of means − 1) by ε: {}.\n",
            gains.join(", ")
        ));
        let glob: Vec<f64> = grid.iter().map(|&e| u("global", e).mean).collect();
        let (lo, hi) = glob
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
        body.push_str(&format!(
            "* `global` stays between {lo:.2} and {hi:.2}: with Δ = 5 and ε split over 3 selections of up to 20 picks \
             each, its choices are close to uniform.\n\n"
        ));
        if let Some(&(_, g)) = PUBLISHED_GAIN.iter().find(|p| Some(p.0) == d.bundled) {
            body.push_str(&format!(
                "**Published (Figure 2 is a plot; its text).** (1) DP-MOET-Agg_local has the highest fitness of the \
                 private methods; (2) it reaches NODP-MOET-Agg at ε = 0.5; (3) it improves on LocalDiffPID3 by {:.0}% \
                 on {}. Compare the bullets above: the paper does not say at which ε or depth its improvement is \
                 measured.\n\n",
                100.0 * g,
                d.name()
            ));
        }
    }
    body.push_str(
        "**Differences from the paper's procedure:** the admissible δ^TPR, δ^TNR (never smaller than the printed \
         ones); δ_agg with |w| of Thm. 5.4 (the authors' code combines one objective's δ only; DESIGN.md §4); ε \
         split as in Table 1 (the paper does not say); exact arithmetic; fewer runs than Table 1 to fit the time \
         budget.\n",
    );
    Ok(Outcome {
        title: format!(
            "PrivPareto paper, Figure 2: DP-MOET-Agg ({})",
            job.tables.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
        ),
        body,
        summary,
    })
}
