//! The experiment `generalize-adult`: Algorithm 3 of Fouad et al. (private per-record generalization) on
//! Adult's seven quasi-identifiers, against the non-private per-record optima and the optimal full-domain
//! k-anonymous generalizations of the same hierarchies. The paper has no experiment of its mechanism (its
//! §4 evaluates the non-private genetic and Lagrangian searches on a Wal-Mart table): this one is new.

use super::hierarchy::{self, Vgh};
use super::kanon;
use super::mechanism::{self, Candidates, Kind, Model, Released, Step1};
use super::microdata::Microdata;
use super::space::Space;
use crate::harness::{show_eps, show_z, sig3, thousands, z, Cell, Experiment, Job, Needs, Outcome, SummaryRow};
use crate::output::{self, Chart, Curve, Scale};
use anyhow::{anyhow, Result};
use dpmo::generalize::{Lattice, ReleaseScratch, RiskModel, RiskWeights, UtilityMeasure};
use rayon::prelude::*;
use std::time::Instant;

/// The registry entry.
pub const EXPERIMENT: Experiment = Experiment {
    name: "generalize-adult",
    about: "private data generalization (Fouad et al. Alg. 3) vs per-record optima and k-anonymity, Adult",
    k_means: Some("k of the k-anonymity baseline (default 5,10,50)"),
    needs: Needs::Records,
    run,
};

const EPS: [f64; 5] = [0.1, 0.5, 1.0, 2.0, 5.0];
const EPS_SMOKE: [f64; 2] = [1.0, 5.0];
/// β = e^{−sε} for s in this grid (s = 1 is the smallest β the paper allows, where ε′ = 0).
const BETA_S: [(f64, &str); 3] = [(1.0, "e^-eps"), (0.5, "e^-eps/2"), (0.25, "e^-eps/4")];
/// Runs per private setting (each with a fresh sample, private 𝓛′ and choices).
const RUNS: usize = 20;
const RUNS_SMOKE: usize = 2;
const KS: [usize; 3] = [5, 10, 50];
const KS_SMOKE: [usize; 2] = [2, 5];
/// Distinct records checked against the core per run of the experiment.
const CHECKED: usize = 12;

/// The public constants: λ = 5·10⁻⁴ (2,000 records sharing a generalization are worth one nat of
/// utility), κ = 1, c = half the utility of a record released as itself, δ = 10⁻⁶, n₀ = 10⁴.
fn model(space: &Space) -> Model {
    Model {
        lambda: 5e-4,
        kappa: 1,
        c: space.max_utility() / 2.0,
        delta: 1e-6,
        min_records: 10_000,
    }
}

/// One private setting's results.
struct Private {
    kind: Kind,
    step1: Step1,
    eps: f64,
    beta_label: &'static str,
    beta: f64,
    /// t, τ₁, T (private 𝓛′) or the reason there are none.
    params: Result<(u64, f64, Option<u64>), String>,
    runs: Vec<Released>,
}

impl Private {
    fn method(&self) -> String {
        format!(
            "alg3-{}-{}-beta={}",
            self.kind.name(),
            self.step1.name(),
            self.beta_label
        )
    }
}

fn run(job: &Job<'_>) -> Result<Outcome> {
    let s = job.settings;
    let runs = s.runs(RUNS, RUNS_SMOKE);
    let grid = s.epsilons(&EPS, &EPS_SMOKE);
    let ks = s.ks(&KS, &KS_SMOKE);
    let h = hierarchy::adult()?;
    let mut body = String::new();
    let mut summary = Vec::new();
    for (di, d) in job.records.iter().enumerate() {
        body.push_str(&dataset(job, di, d, &h, runs, &grid, &ks, &mut summary)?);
    }
    Ok(Outcome {
        title: format!(
            "Private data generalization (Fouad et al., Algorithm 3) on {}",
            job.records
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        body,
        summary,
    })
}

#[allow(clippy::too_many_arguments)]
fn dataset(
    job: &Job<'_>,
    di: usize,
    d: &Microdata,
    h: &[Vgh],
    runs: usize,
    grid: &[f64],
    ks: &[usize],
    summary: &mut Vec<SummaryRow>,
) -> Result<String> {
    let name = d.name.as_str();
    let start = Instant::now();
    let parents: Vec<&[u32]> = h.iter().map(|v| v.parents.as_slice()).collect();
    let mut lattice_scratch =
        vec![0u32; dpmo::generalize::lattice_scratch_len(&parents).map_err(|e| anyhow!("{e:?}"))?];
    let lattice = Lattice::build(&parents, &mut lattice_scratch).map_err(|e| anyhow!("{e:?}"))?;
    let space = Space::new(h, &d.records);
    let m = space.m;
    let model = model(&space);
    let count_s = start.elapsed().as_secs_f64();

    // Checks against the core on a sample of distinct records.
    let checked: Vec<usize> = (0..CHECKED.min(space.classes_len()))
        .map(|i| i * space.classes_len() / CHECKED.min(space.classes_len()))
        .collect();
    let n = space.n;
    let mut counts = vec![0u64; n];
    for &ci in &checked {
        let rec = &d.records[space.first[ci] * space.k..(space.first[ci] + 1) * space.k];
        lattice
            .count_chain_product(rec, &d.records, &mut counts)
            .map_err(|e| anyhow!("{e:?}"))?;
        if counts.iter().zip(space.counts_of(ci)).any(|(&a, &b)| a != u64::from(b)) {
            return Err(anyhow!("counts of record {} differ from the core's", space.first[ci]));
        }
        let lag = dpmo::generalize::lagrangian_optimum(
            &lattice,
            rec,
            &d.records,
            RiskModel::ModelII,
            UtilityMeasure::LogRatio,
            model.lambda,
            model.kappa,
            1.0,
            &mut counts,
        )
        .map_err(|e| anyhow!("{e:?}"))?;
        let thr = dpmo::generalize::threshold_optimum(
            &lattice,
            rec,
            &d.records,
            RiskModel::ModelII,
            UtilityMeasure::LogRatio,
            model.c,
            &mut counts,
        )
        .map_err(|e| anyhow!("{e:?}"))?;
        let mine = (
            mechanism::optimum(&space, &model, Kind::Lagrangian, ci)?.map(|c| c.j),
            mechanism::optimum(&space, &model, Kind::Threshold, ci)?.map(|c| c.j),
        );
        if mine != (Some(lag), thr) {
            return Err(anyhow!(
                "optima of record {} differ from the core's: {mine:?} vs ({lag}, {thr:?})",
                space.first[ci]
            ));
        }
    }

    // Non-private per-record optima (every record released).
    let mut optima = Vec::new();
    for kind in [Kind::Lagrangian, Kind::Threshold] {
        let per: Vec<Option<mechanism::Choice>> = (0..space.classes_len())
            .into_par_iter()
            .map(|ci| mechanism::optimum(&space, &model, kind, ci))
            .collect::<Result<_>>()?;
        let (mut released, mut u, mut r) = (0usize, 0.0, 0.0);
        for (ci, c) in per.iter().enumerate() {
            if let Some(c) = c {
                let w = space.mult[ci] as usize;
                released += w;
                u += c.utility * w as f64;
                r += c.risk * w as f64;
            }
        }
        let method = format!("non-private-{}", kind.name());
        let exact = |x: f64| Cell { mean: x, se: 0.0, n: 1 };
        let cells = [
            ("released", exact(released as f64 / m as f64)),
            ("utility", exact(u / released.max(1) as f64)),
            ("risk", exact(r / released.max(1) as f64)),
            ("utility-per-record", exact(u / m as f64)),
        ];
        for (metric, c) in cells {
            summary.push(SummaryRow::new(name, &method, None, None, metric, c));
        }
        optima.push((kind, cells));
    }

    // k-anonymity.
    let kstart = Instant::now();
    let domains = kanon::all(&space);
    let kanon_s = kstart.elapsed().as_secs_f64();
    let mut kanon_rows = Vec::new();
    let mut kanon_cells = Vec::new();
    for &k in ks {
        let Some(b) = kanon::best(&domains, k as u32) else {
            kanon_rows.push(vec![
                k.to_string(),
                "—".into(),
                "no k-anonymous generalization (k > m)".into(),
                String::new(),
                String::new(),
            ]);
            continue;
        };
        let exact = |x: f64| Cell { mean: x, se: 0.0, n: 1 };
        summary.push(SummaryRow::new(
            name,
            "k-anonymity",
            None,
            Some(k),
            "released",
            exact(1.0),
        ));
        summary.push(SummaryRow::new(
            name,
            "k-anonymity",
            None,
            Some(k),
            "utility",
            exact(b.utility),
        ));
        summary.push(SummaryRow::new(
            name,
            "k-anonymity",
            None,
            Some(k),
            "risk",
            exact(b.risk),
        ));
        summary.push(SummaryRow::new(
            name,
            "k-anonymity",
            None,
            Some(k),
            "utility-per-record",
            exact(b.utility),
        ));
        kanon_rows.push(vec![
            k.to_string(),
            format!(
                "({})",
                b.levels.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ")
            ),
            b.min_group.to_string(),
            format!("{:.3}", b.utility),
            format!("{:.5}", b.risk),
        ]);
        kanon_cells.push((k, b.utility, b.risk));
    }

    // Private settings.
    let mut settings = Vec::new();
    for kind in [Kind::Lagrangian, Kind::Threshold] {
        for &eps in grid {
            for &(s, label) in &BETA_S {
                let beta = if s == 1.0 {
                    dpmo::generalize::min_beta(eps).map_err(|e| anyhow!("{e:?}"))?
                } else {
                    (-s * eps).exp()
                };
                settings.push((kind, eps, label, beta, Step1::Exact));
                settings.push((kind, eps, label, beta, Step1::Private));
            }
        }
    }
    let pstart = Instant::now();
    let mut worst_prob = 0.0f64;
    let mut prob_checks = 0usize;
    let mut results = Vec::new();
    let mut scratch_counts = vec![0u64; n];
    let mut scratch_scores = vec![0f64; n];
    let mut scratch_cands = vec![0usize; n];
    let mut core_p = vec![0f64; n];
    for (si, &(kind, eps, label, beta, step1)) in settings.iter().enumerate() {
        let setting = mechanism::setting(&lattice, &model, kind, eps, beta, step1);
        let (params_row, rs) = match setting {
            Err(e) => (Err(e.to_string()), Vec::new()),
            Ok(st) => {
                let p = &st.params;
                let scale = mechanism::selector_scale(p, m);
                let fixed: Option<Vec<Candidates>> =
                    (step1 == Step1::Exact).then(|| mechanism::exact_candidates(&space, p));
                if let Some(f) = &fixed {
                    // The candidates' probabilities against the core's record_probabilities.
                    for &ci in checked.iter().take(3) {
                        let t = p.settings().t;
                        let got = dpmo::generalize::record_probabilities(
                            &lattice,
                            &d.records,
                            space.first[ci],
                            RiskWeights::ModelII,
                            p,
                            &mut |_, c| c >= t,
                            ReleaseScratch {
                                counts: &mut scratch_counts,
                                scores: &mut scratch_scores,
                                candidates: &mut scratch_cands,
                            },
                            &mut core_p,
                        )
                        .map_err(|e| anyhow!("{e:?}"))?;
                        let mut mine = vec![0.0; got];
                        if !f[ci].j.is_empty() {
                            let pr = if scale == 0.0 {
                                vec![1.0 / f[ci].j.len() as f64; f[ci].j.len()]
                            } else {
                                mechanism::probabilities(&f[ci], p, scale)
                            };
                            for (&j, &q) in f[ci].j.iter().zip(&pr) {
                                mine[j] = q;
                            }
                        }
                        for (a, b) in mine.iter().zip(&core_p[..got]) {
                            worst_prob = worst_prob.max((a - b).abs());
                        }
                        prob_checks += 1;
                    }
                }
                let rs: Vec<Released> = (0..runs)
                    .into_par_iter()
                    .map(|r| {
                        let mut rng = job.rng("alg3", &[di as u64, si as u64, r as u64]);
                        mechanism::run(&mut rng, &space, p, scale, fixed.as_deref())
                    })
                    .collect::<Result<_>>()?;
                (
                    Ok((p.settings().t, st.tau1, p.noisy_threshold().map(|x| x.threshold))),
                    rs,
                )
            }
        };
        results.push(Private {
            kind,
            step1,
            eps,
            beta_label: label,
            beta,
            params: params_row,
            runs: rs,
        });
    }
    if worst_prob > 1e-9 {
        return Err(anyhow!(
            "candidate probabilities differ from the core's record_probabilities by {worst_prob:e}"
        ));
    }
    let private_s = pstart.elapsed().as_secs_f64();

    // Cells.
    let cell_of = |p: &Private, metric: &str| -> Option<Cell> {
        if p.runs.is_empty() {
            return match metric {
                "released" | "utility-per-record" => Some(Cell {
                    mean: 0.0,
                    se: 0.0,
                    n: runs,
                }),
                _ => None,
            };
        }
        let xs: Vec<f64> = p
            .runs
            .iter()
            .filter_map(|r| match metric {
                "released" => Some(r.count as f64 / m as f64),
                "utility-per-record" => Some(r.utility / m as f64),
                "utility" => (r.count > 0).then(|| r.utility / r.count as f64),
                "risk" => (r.count > 0).then(|| r.risk / r.count as f64),
                _ => None,
            })
            .collect();
        (!xs.is_empty()).then(|| Cell::of(&xs))
    };
    let mut csv = Vec::new();
    for p in &results {
        for metric in ["released", "utility", "risk", "utility-per-record"] {
            if let Some(c) = cell_of(p, metric) {
                summary.push(SummaryRow::new(name, &p.method(), Some(p.eps), None, metric, c));
            }
        }
        let (t, tau, big_t) = match &p.params {
            Ok((t, tau, bt)) => (
                t.to_string(),
                format!("{tau:.2}"),
                bt.map(|x| x.to_string()).unwrap_or_default(),
            ),
            Err(_) => ("none".into(), String::new(), String::new()),
        };
        for (r, x) in p.runs.iter().enumerate() {
            csv.push(vec![
                name.to_string(),
                p.kind.name().into(),
                p.step1.name().into(),
                p.eps.to_string(),
                p.beta_label.into(),
                format!("{:.6}", p.beta),
                t.clone(),
                tau.clone(),
                big_t.clone(),
                r.to_string(),
                x.count.to_string(),
                format!("{:.6}", if x.count > 0 { x.utility / x.count as f64 } else { 0.0 }),
                format!("{:.8}", if x.count > 0 { x.risk / x.count as f64 } else { 0.0 }),
                x.frequent.to_string(),
            ]);
        }
    }
    let (path, _) = job.file(name, "runs.csv");
    output::write_csv(
        &path,
        &[
            "dataset",
            "model",
            "step1",
            "epsilon",
            "beta_rule",
            "beta",
            "t",
            "tau1",
            "T_noisy",
            "run",
            "released",
            "mean_utility",
            "mean_risk",
            "frequent_elements",
        ],
        &csv,
    )?;
    let wall = start.elapsed().as_secs_f64();

    // The report section.
    let nu = space.max_utility();
    let mut s = format!(
        "**{name}**: {} records with the seven quasi-identifiers ({} rows read, {} dropped for a missing value), \
         {} distinct; N = |a⁺| = {} generalizations per record; utility of a record released as itself \
         ν = {nu:.3} nats. Counting every a⁺ took {count_s:.1} s, the k-anonymity search {kanon_s:.1} s, the {} \
         private settings × {runs} runs {private_s:.1} s (wall time of this dataset {wall:.1} s). Checked against \
         the core on {} distinct records: the counts |ρ(x, D)| over a⁺ (`count_chain_product`), both non-private \
         optima (`lagrangian_optimum`, `threshold_optimum`) identical; the candidates' probabilities of {} \
         exact-𝓛′ settings × records against `record_probabilities`: largest difference {worst_prob:.1e}.\n\n",
        thousands(m),
        thousands(d.rows),
        thousands(d.dropped),
        thousands(space.classes_len()),
        thousands(n),
        settings.len(),
        checked.len(),
        prob_checks,
    );
    // Baselines table.
    let mut base_rows = Vec::new();
    for (kind, cells) in &optima {
        base_rows.push(vec![
            format!("non-private per-record optimum, {}", kind.name()),
            format!("{:.3}", cells[0].1.mean),
            format!("{:.3}", cells[1].1.mean),
            format!("{:.5}", cells[2].1.mean),
            format!("{:.3}", cells[3].1.mean),
        ]);
    }
    for &(k, u, r) in &kanon_cells {
        base_rows.push(vec![
            format!("optimal full-domain {k}-anonymity"),
            "1".into(),
            format!("{u:.3}"),
            format!("{r:.5}"),
            format!("{u:.3}"),
        ]);
    }
    s.push_str(&format!(
        "Baselines (deterministic: one computation each):\n\n{}\nThe k-anonymous level vectors (levels above the \
         leaf of age, workclass, education, marital-status, race, sex, native-country) and their smallest group:\n\n{}\n",
        output::markdown_table(
            &["method", "released", "utility u (released)", "risk r (released)", "utility per record"],
            &base_rows
        ),
        output::markdown_table(&["k", "levels", "smallest group", "utility", "risk"], &kanon_rows)
    ));
    // Private table per kind.
    for kind in [Kind::Lagrangian, Kind::Threshold] {
        let mut rows = Vec::new();
        for p in results.iter().filter(|p| p.kind == kind) {
            let show = |metric: &str, dd: usize| cell_of(p, metric).map(|c| c.show(dd)).unwrap_or_else(|| "—".into());
            let (t, tau, big_t) = match &p.params {
                Ok((t, tau, bt)) => (
                    thousands(*t as usize),
                    format!("{tau:.2}"),
                    bt.map(|x| thousands(x as usize)).unwrap_or_else(|| "—".into()),
                ),
                Err(_) => ("none".into(), "—".into(), "—".into()),
            };
            rows.push(vec![
                show_eps(p.eps),
                format!("{} = {}", p.beta_label.replace("eps", "ε"), sig3(p.beta)),
                p.step1.name().into(),
                t,
                tau,
                big_t,
                show("released", 4),
                show("utility", 3),
                show("risk", 6),
                show("utility-per-record", 4),
            ]);
        }
        s.push_str(&format!(
            "Algorithm 3, {} version ({runs} runs per row, mean ± s.e.; `—`: no run released a record):\n\n{}\n",
            kind.name(),
            output::markdown_table(
                &[
                    "ε",
                    "β",
                    "𝓛′",
                    "t (10)",
                    "τ₁",
                    "T (noisy)",
                    "released",
                    "utility u",
                    "risk r",
                    "utility per record"
                ],
                &rows
            )
        ));
        // Plot: utility per record against ε.
        let mut curves = Vec::new();
        for step1 in [Step1::Exact, Step1::Private] {
            for &(_, label) in &BETA_S {
                curves.push(Curve::measured(
                    format!(
                        "Alg. 3, {}, β = {}",
                        match step1 {
                            Step1::Exact => "paper's 𝓛′",
                            Step1::Private => "private 𝓛′",
                        },
                        label.replace("eps", "ε")
                    ),
                    results
                        .iter()
                        .filter(|p| p.kind == kind && p.step1 == step1 && p.beta_label == label)
                        .filter_map(|p| cell_of(p, "utility-per-record").map(|c| (p.eps, c))),
                ));
            }
        }
        let flat = |v: f64| grid.iter().map(move |&e| (e, Cell { mean: v, se: 0.0, n: 1 }));
        if let Some((_, cells)) = optima.iter().find(|o| o.0 == kind) {
            curves.push(Curve::measured(
                format!("non-private optimum ({})", kind.name()),
                flat(cells[3].1.mean),
            ));
        }
        for &(k, u, _) in kanon_cells
            .iter()
            .filter(|c| c.0 == ks[0] || c.0 == *ks.last().unwrap_or(&ks[0]))
        {
            curves.push(Curve::measured(format!("{k}-anonymity (full domain)"), flat(u)));
        }
        let (png, link) = job.file(name, &format!("{}_utility.png", kind.name()));
        output::chart(
            &png,
            &Chart {
                title: &format!(
                    "Private generalization of {name}, {} version: utility per record",
                    kind.name()
                ),
                x_label: "privacy budget ε",
                y_label: "Σ u(released) / |D|  (nats)",
                x_scale: Scale::Log,
                y_range: None,
                curves: &curves,
                note: &format!(
                    "{runs} runs per point; bars: 95% intervals (±1.96 s.e.); flat lines: deterministic baselines"
                ),
            },
        )?;
        s.push_str(&format!("![{} version on {name}]({link})\n\n", kind.name()));
    }

    // Computed claims.
    s.push_str(&format!("**What the runs show ({name}).**\n\n"));
    let best_private = |kind: Kind, step1: Step1, eps: f64| -> Option<(&Private, Cell)> {
        results
            .iter()
            .filter(|p| p.kind == kind && p.step1 == step1 && p.eps == eps)
            .filter_map(|p| {
                cell_of(p, "utility-per-record")
                    .filter(|c| c.mean > 0.0)
                    .map(|c| (p, c))
            })
            .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
    };
    let top_eps = grid.last().copied().unwrap_or(1.0);
    for kind in [Kind::Lagrangian, Kind::Threshold] {
        let opt = optima
            .iter()
            .find(|o| o.0 == kind)
            .map(|o| o.1[3].1.mean)
            .unwrap_or(f64::NAN);
        let none: Vec<String> = results
            .iter()
            .filter(|p| p.kind == kind && p.step1 == Step1::Exact)
            .filter(|p| cell_of(p, "released").is_none_or(|c| c.mean == 0.0))
            .map(|p| format!("ε = {} with β = {}", show_eps(p.eps), p.beta_label.replace("eps", "ε")))
            .collect();
        s.push_str(&format!(
            "* *{} version, paper's 𝓛′.* No record is released at {} (t of condition (10) above what the data can \
             reach).",
            kind.name(),
            if none.is_empty() {
                "no setting".to_string()
            } else {
                none.join(", ")
            }
        ));
        if let Some((p, c)) = best_private(kind, Step1::Exact, top_eps) {
            s.push_str(&format!(
                " At ε = {}, the best β ({}) releases {:.1} % of the records with mean utility {} and mean risk {}: \
                 {:.3} nats per record, {:.1} % of the non-private optimum's {opt:.3}",
                show_eps(top_eps),
                p.beta_label.replace("eps", "ε"),
                100.0 * cell_of(p, "released").map(|c| c.mean).unwrap_or(0.0),
                cell_of(p, "utility").map(|c| c.show(3)).unwrap_or_else(|| "—".into()),
                cell_of(p, "risk").map(|c| c.show(6)).unwrap_or_else(|| "—".into()),
                c.mean,
                100.0 * c.mean / opt,
            ));
            for &(k, u, _) in &kanon_cells {
                let zz = z(c, Cell { mean: u, se: 0.0, n: 1 });
                s.push_str(&format!(
                    "; {} {k}-anonymity's {u:.3} ({})",
                    if zz >= crate::harness::Z_CLAIM {
                        "above"
                    } else if zz <= -crate::harness::Z_CLAIM {
                        "below"
                    } else {
                        "indistinguishable from"
                    },
                    show_z(zz)
                ));
            }
            s.push_str(".\n");
        } else {
            s.push('\n');
        }
        let priv_any: Vec<String> = results
            .iter()
            .filter(|p| p.kind == kind && p.step1 == Step1::Private)
            .filter_map(|p| cell_of(p, "released").filter(|c| c.mean > 0.0).map(|c| (p, c)))
            .map(|(p, c)| {
                format!(
                    "ε = {}, β = {}: {:.2} % released, {:.4} nats per record",
                    show_eps(p.eps),
                    p.beta_label.replace("eps", "ε"),
                    100.0 * c.mean,
                    cell_of(p, "utility-per-record").map(|c| c.mean).unwrap_or(0.0)
                )
            })
            .collect();
        s.push_str(&format!(
            "* *{} version, private 𝓛′* (dpmo's repair of step 1, ε_F = ε and δ_F = δ, so (2ε, 2δ) in total): \
             settings that release anything: {}.\n",
            kind.name(),
            if priv_any.is_empty() {
                "none".to_string()
            } else {
                priv_any.join("; ")
            }
        ));
    }
    s.push_str(
        "\n**Reading the results.** The paper has no experiment of its mechanism; these numbers are new. Two \
         properties of Algorithm 3 shape them, both visible in the tables: condition (10) asks for \
         t ≳ max(2 ln(2N/δ)/(β τ₁²), N/((1 − β)(1 − τ₁))) records under every element a record may use — \
         thousands for N = 2,160, independent of |D| — so only coarse generalizations are candidates on a table \
         of Adult's size; and ε′ = (ε + ln β)/(3η(1 − β)) applied to scores divided by |D| makes the choice among \
         them close to uniform (exactly uniform at β = e^{−ε}). Larger β raises ε′ but releases fewer records \
         (a fraction 1 − β). With dpmo's private 𝓛′ the noisy threshold T adds s·ln(N/δ_F) with \
         s = ⌈N/ε_F⌉, which exceeds |D| at small ε. k-anonymity has no such floor, but gives no differential \
         privacy; the non-private optima give neither.\n\n",
    );
    s.push_str(&format!(
        "Settings: Model II risk (Φ ≡ 1, so r = 1/|ρ(x, D)| with Θ = D), utility d_i = ln(n_i(⊥)/n_i(x_i)) \
         (0 at ⊥), Lagrangian λ = {}, κ = {}, φ(k) = 1; threshold c = ν/2 = {:.3}, φ_u(k) = 1; δ = {:e}; \
         n₀ = {} (public lower bound of |D|); β ∈ {{e^−ε, e^−ε/2, e^−ε/4}}; t the smallest admissible by \
         condition (10) (the core's `Parameters::smallest_t`), τ₁ chosen on the grid 0.05, 0.10, …, 0.95 to \
         make t smallest (a public choice: it depends on N, β, δ, ε only). Paper's 𝓛′: step 1 as printed (exact \
         counts; not differentially private, see `dpmo::generalize::frequency`); private 𝓛′: the core's noisy \
         frequent set. Metrics: `released` = fraction of |D| released; `utility`, `risk` = means over the \
         released generalizations (eq. 8 with u in place of f, and its risk version); `utility-per-record` = \
         Σ u(released)/|D| (a record not released contributes 0, as ⊥ does). Each private run draws the \
         Bernoulli sample, the private 𝓛′ and the choices afresh (core coins: exact Bernoulli(β), exact \
         exponential mechanism). k-anonymity: {}.\n",
        model.lambda,
        model.kappa,
        model.c,
        model.delta,
        thousands(model.min_records as usize),
        "optimal full-domain generalization by exhaustive search over the N level vectors (Samarati-style, no \
         suppression), maximal mean utility"
    ));
    Ok(s)
}
