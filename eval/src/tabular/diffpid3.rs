//! Local Dampening paper, Figure 6: 10-fold cross-validated accuracy of private ID3 (DiffPID3) with the
//! global sensitivity of IG or Gini, with local dampening of IG, and with shifted local dampening of IG.

use super::id3::{self, Criterion, Id3Params, Stats, Variant};
use super::majority;
use super::rng::shuffle;
use crate::harness::{progress, show_eps, show_z, z, Cell, Experiment, Job, Needs, Outcome, SummaryRow, Z_CLAIM};
use crate::output::{self, Chart, Curve, Scale};
use anyhow::Result;
use rayon::prelude::*;
use std::time::Instant;

/// The registry entry.
pub const EXPERIMENT: Experiment = Experiment {
    name: "diffpid3",
    about: "10-fold CV accuracy of Global/Local/ShiftedLocal DiffPID3 (Local Dampening paper Figure 6)",
    k_means: None,
    needs: Needs::Table,
    run,
};

/// Distances of the LS^IG tables before saturation to ΔIG (a fixed, public T_max; see `id3`).
pub const IG_T_MAX: usize = 64;
const EPS: [f64; 6] = [0.01, 0.05, 0.1, 0.5, 1.0, 2.0];
const EPS_SMOKE: [f64; 2] = [0.1, 1.0];
const DEPTHS: [usize; 2] = [2, 5];
const FOLDS: usize = 10;
const FOLDS_SMOKE: usize = 2;

/// (criterion, variant, summary name, display name).
const METHODS: [(Criterion, Variant, &str, &str); 4] = [
    (Criterion::InfoGain, Variant::Global, "global", "GlobalDiffPID3 (IG)"),
    (Criterion::InfoGain, Variant::Local, "local", "LocalDiffPID3 (IG)"),
    (
        Criterion::InfoGain,
        Variant::ShiftedLocal,
        "local-shifted",
        "ShiftedLocalDiffPID3 (IG)",
    ),
    (Criterion::Gini, Variant::Global, "global-gini", "GlobalDiffPID3 (Gini)"),
];

/// One fold's result: (depth, method index or None for the non-private tree, ε, fold, accuracy, stats,
/// seconds).
type Res = (usize, Option<usize>, f64, usize, f64, Stats, f64);

fn run(job: &Job<'_>) -> Result<Outcome> {
    let s = job.settings;
    let grid = s.epsilons(&EPS, &EPS_SMOKE);
    let folds_run = if s.smoke { FOLDS_SMOKE } else { FOLDS };
    let mut body = format!(
        "Setup as in §6.2: 10-fold cross-validation (one shuffled split per dataset, the same for every method \
         and ε; {folds_run} folds run), depth ∈ {{2, 5}}; Algorithm 2 with ε = B/(2(d + 1)) per level. `global`: \
         exponential mechanism with ΔIG = log₂(N + 1) + 1/ln 2 (N = the whole dataset's size, as a public bound); \
         `global-gini`: the same with Gini, ΔGini = 2; `local` / `local-shifted`: (shifted) local dampening with \
         LS^IG of `dpmo::sensitivity::info_gain` (Lemmas 5.5–5.6, add/remove neighbours), tabulated for \
         t < {IG_T_MAX} and saturated to ΔIG beyond. Counts get exact discrete Laplace noise; selections run in \
         exact arithmetic. `non-private`: ID3 with IG, exact counts. Continuous attributes are cut into fixed \
         bins (Adult: the bins of `data/adult.rs`).\n\n"
    );
    let mut summary = Vec::new();
    for (di, d) in job.tables.iter().enumerate() {
        let t = &d.table;
        let n = t.len();
        let start = Instant::now();
        let mut order: Vec<u32> = (0..n as u32).collect();
        shuffle(&mut job.rng("split", &[di as u64]), &mut order);
        let folds: Vec<(Vec<u32>, Vec<u32>)> = (0..folds_run)
            .map(|f| {
                let (mut train, mut test) = (Vec::new(), Vec::new());
                for (i, &r) in order.iter().enumerate() {
                    if i % FOLDS == f {
                        test.push(r);
                    } else {
                        train.push(r);
                    }
                }
                (train, test)
            })
            .collect();
        let mut jobs: Vec<(usize, Option<usize>, f64, usize)> = Vec::new();
        for &depth in &DEPTHS {
            for &eps in &grid {
                for mi in 0..METHODS.len() {
                    for f in 0..folds_run {
                        jobs.push((depth, Some(mi), eps, f));
                    }
                }
            }
            for f in 0..folds_run {
                jobs.push((depth, None, f64::INFINITY, f));
            }
        }
        let pb = progress(jobs.len(), &format!("{}: DiffPID3 folds", d.name()));
        let results: Vec<Res> = jobs
            .par_iter()
            .map(|&(depth, mi, eps, f)| -> Result<Res> {
                let (criterion, variant) = match mi {
                    Some(i) => (METHODS[i].0, METHODS[i].1),
                    None => (Criterion::InfoGain, Variant::NonPrivate),
                };
                let ei = grid.iter().position(|&e| e == eps).unwrap_or(usize::MAX);
                let mut rng = job.rng(
                    "tree",
                    &[di as u64, depth as u64, ei as u64, mi.unwrap_or(99) as u64, f as u64],
                );
                let p = Id3Params {
                    depth,
                    budget: if eps.is_finite() { eps } else { 1.0 },
                    criterion,
                    variant,
                    t_max: IG_T_MAX,
                    max_records: n as u64,
                };
                let start = Instant::now();
                let (tree, stats) = id3::train_with_stats(&mut rng, t, &folds[f].0, p)?;
                let acc = id3::accuracy(&tree, t, &folds[f].1);
                pb.inc(1);
                Ok((depth, mi, eps, f, acc, stats, start.elapsed().as_secs_f64()))
            })
            .collect::<Result<_>>()?;
        pb.finish_and_clear();
        let wall = start.elapsed().as_secs_f64();
        let name_of = |mi: Option<usize>| mi.map(|i| METHODS[i].2).unwrap_or("non-private");
        let csv: Vec<Vec<String>> = results
            .iter()
            .map(|r| {
                vec![
                    d.name().to_string(),
                    r.0.to_string(),
                    if r.2.is_finite() {
                        r.2.to_string()
                    } else {
                        String::new()
                    },
                    name_of(r.1).into(),
                    r.3.to_string(),
                    format!("{:.6}", r.4),
                    format!("{:.6}", r.6),
                ]
            })
            .collect();
        let (path, _) = job.file(d.name(), "folds.csv");
        output::write_csv(
            &path,
            &["dataset", "depth", "epsilon", "method", "fold", "accuracy", "seconds"],
            &csv,
        )?;
        let cell = |depth: usize, mi: Option<usize>, eps: f64| {
            Cell::of(
                &results
                    .iter()
                    .filter(|r| r.0 == depth && r.1 == mi && (mi.is_none() || r.2 == eps))
                    .map(|r| r.4)
                    .collect::<Vec<_>>(),
            )
        };
        let stats = results
            .iter()
            .filter(|r| r.1.is_some_and(|i| METHODS[i].1 != Variant::Global))
            .fold(Stats::default(), |a, r| Stats {
                scored: a.scored + r.5.scored,
                saturated: a.saturated + r.5.saturated,
            });
        for &depth in &DEPTHS {
            let metric = format!("accuracy@depth{depth}");
            summary.push(SummaryRow::new(
                d.name(),
                "non-private",
                None,
                None,
                &metric,
                cell(depth, None, 0.0),
            ));
            for (mi, m) in METHODS.iter().enumerate() {
                for &e in &grid {
                    summary.push(SummaryRow::new(
                        d.name(),
                        m.2,
                        Some(e),
                        None,
                        &metric,
                        cell(depth, Some(mi), e),
                    ));
                }
            }
            let reference = cell(depth, None, 0.0);
            let mut header = vec!["ε".to_string()];
            header.extend(METHODS.iter().map(|m| format!("`{}`", m.2)));
            let rows: Vec<Vec<String>> = grid
                .iter()
                .map(|&e| {
                    let mut row = vec![show_eps(e)];
                    row.extend((0..METHODS.len()).map(|mi| cell(depth, Some(mi), e).show(3)));
                    row
                })
                .collect();
            let mut curves: Vec<Curve> = METHODS
                .iter()
                .enumerate()
                .map(|(mi, m)| {
                    Curve::measured(
                        format!("{} ({})", m.2, m.3),
                        grid.iter().map(|&e| (e, cell(depth, Some(mi), e))),
                    )
                })
                .collect();
            curves.push(Curve::measured(
                "non-private ID3 (IG)",
                grid.iter().map(|&e| (e, reference)),
            ));
            let (png, link) = job.file(d.name(), &format!("accuracy_depth{depth}.png"));
            output::chart(
                &png,
                &Chart {
                    title: &format!("DiffPID3 on {}, depth {depth}: {folds_run}-fold CV accuracy", d.name()),
                    x_label: "privacy budget ε",
                    y_label: "accuracy",
                    x_scale: Scale::Log,
                    y_range: None,
                    curves: &curves,
                    note: &format!("mean over {folds_run} folds; bars: 95% intervals (±1.96 s.e. over folds)"),
                },
            )?;
            let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
            body.push_str(&format!(
                "**{}, depth {depth}** (mean ± s.e. over the folds; `non-private`: {}):\n\n{}\n![DiffPID3 on {}, depth \
                 {depth}]({link})\n\n",
                d.name(),
                reference.show(3),
                output::markdown_table(&hdr, &rows),
                d.name()
            ));
        }
        // Computed claims.
        let mut gains = Vec::new();
        let mut losses = Vec::new();
        let mut shifted_vs_local = (0, 0, 0);
        let mut gini_best = 0;
        let mut cases = 0;
        for &depth in &DEPTHS {
            for &e in &grid {
                cases += 1;
                let (g, l, sh, gi) = (
                    cell(depth, Some(0), e),
                    cell(depth, Some(1), e),
                    cell(depth, Some(2), e),
                    cell(depth, Some(3), e),
                );
                let zz = z(l, g);
                let tag = format!(
                    "depth {depth}, ε = {} ({:+.3}, {})",
                    show_eps(e),
                    l.mean - g.mean,
                    show_z(zz)
                );
                if zz >= Z_CLAIM {
                    gains.push(tag);
                } else if zz <= -Z_CLAIM {
                    losses.push(tag);
                }
                let zs = z(sh, l);
                if zs >= Z_CLAIM {
                    shifted_vs_local.0 += 1;
                } else if zs <= -Z_CLAIM {
                    shifted_vs_local.2 += 1;
                } else {
                    shifted_vs_local.1 += 1;
                }
                let best = [g, l, sh].iter().map(|c| c.mean).fold(f64::NEG_INFINITY, f64::max);
                let best_cell = [g, l, sh].into_iter().find(|c| c.mean == best).unwrap_or(g);
                if gi.mean >= best || z(gi, best_cell) > -Z_CLAIM {
                    gini_best += 1;
                }
            }
        }
        let top: Vec<(f64, f64)> = DEPTHS
            .iter()
            .flat_map(|&depth| {
                grid.iter()
                    .filter(|&&e| e >= 0.5)
                    .flat_map(move |&e| (0..METHODS.len()).map(move |mi| (depth, mi, e)))
            })
            .map(|(depth, mi, e)| (cell(depth, Some(mi), e).mean, cell(depth, None, 0.0).mean))
            .collect();
        let gap = top.iter().map(|(a, r)| r - a).fold(f64::NEG_INFINITY, f64::max);
        body.push_str(&format!(
            "**What the runs show ({}).** Majority-class accuracy {:.3}; wall time {wall:.1} s.\n\n\
             * `local` against `global` (IG) over the {cases} (depth, ε) cells: better with z ≥ {Z_CLAIM} at {}; \
             worse at {}; indistinguishable elsewhere.\n\
             * `local-shifted` against `local`: better in {} cells, indistinguishable in {}, worse in {}.\n\
             * `global-gini` is the best private method or indistinguishable from the best IG method (|z| < \
             {Z_CLAIM}) in {gini_best} of the {cases} cells.\n\
             * From ε = 0.5 on, every private method is within {:.3} of the non-private tree's accuracy.\n\
             * LS^IG depth: of {} candidate scores dampened by `local` and `local-shifted`, {} ({:.0}%) reached the \
             table's end at t = {IG_T_MAX} (b({IG_T_MAX}) < |IG|), where δ = ΔIG takes over: there the dampened \
             score is the global one up to a per-attribute shift, which limits what local dampening can gain.\n\n",
            d.name(),
            majority(d),
            if gains.is_empty() {
                "no cell".into()
            } else {
                gains.join("; ")
            },
            if losses.is_empty() {
                "no cell".into()
            } else {
                losses.join("; ")
            },
            shifted_vs_local.0,
            shifted_vs_local.1,
            shifted_vs_local.2,
            gap.max(0.0),
            stats.scored,
            stats.saturated,
            100.0 * stats.saturated as f64 / stats.scored.max(1) as f64,
        ));
    }
    if job.tables.iter().any(|d| d.bundled.is_some()) {
        body.push_str(
            "**Published (Figure 6 is a plot; its text, about NLTCS and Adult).** LocalDiffPID3 improves on \
             GlobalDiffPID3 with IG \"except for the Adult dataset, up to 11%\"; ShiftedLocalDiffPID3 improves on \
             LocalDiffPID3 \"for every instance (further 3.5% at most)\" and by at most 12% on GlobalDiffPID3; for \
             Gini, local dampening brings no benefit (its global sensitivity is 2). The bullets above count where \
             each claim holds in our runs.\n\n",
        );
    }
    body.push_str(
        "* *Why local dampening gains little here:* with the sign of IG corrected (below), LS^IG at the large nodes \
         near the root is log₂ of the node size plus 1/ln 2, close to ΔIG, so dampening can gain at most that \
         factor in effective ε; and the table depth bounds the gain deeper in the tree (last bullet above).\n\
         * *Sign of IG.* Eq. (2) of the paper, as printed, is +τ·H(C|A), which is largest for the least \
         informative split; eq. (1), −τ·H(C|A), is the utility meant. `dpmo::sensitivity::info_gain` returns \
         eq. (1); the sensitivities bound |ΔIG| and are the same either way.\n\
         * *Choices the paper leaves open:* the discretization of continuous attributes (ours: fixed bins), the \
         bound N in ΔIG (the whole dataset's size), one 10-fold split per dataset; attributes with more than 16 \
         values exceed the core's `Contingency` and are split into chunks whose utilities add and whose LS^IG \
         rows combine by maximum (exact, since IG and Gini are sums over values and LS^IG a maximum over cells).\n\
         * *Arithmetic.* Counts get exact discrete Laplace noise and selections run exactly; the published numbers \
         were produced in floating point, a difference far below the fold-to-fold spread.\n",
    );
    Ok(Outcome {
        title: format!(
            "Local Dampening paper, Figure 6: private ID3 ({})",
            job.tables.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
        ),
        body,
        summary,
    })
}
