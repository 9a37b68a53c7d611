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
use dpmo::generalize::FrequentNoise;
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
/// The per-record models: the Lagrangian, the threshold model at c = ν/2 and at c = ν/4.
const KINDS: [Kind; 3] = [Kind::Lagrangian, Kind::Threshold, Kind::ThresholdLow];
/// How 𝓛′ is built: the paper's (not private), discrete Laplace noise, discrete Gaussian noise.
const STEP1: [Step1; 3] = [Step1::Exact, Step1::Laplace, Step1::Gaussian];
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
/// utility), κ = 1, c = half the utility of a record released as itself (and a quarter of it, shown
/// beside), δ = 10⁻⁶, n₀ = 10⁴.
fn model(space: &Space) -> Model {
    Model {
        lambda: 5e-4,
        kappa: 1,
        c: space.max_utility() / 2.0,
        c_low: space.max_utility() / 4.0,
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
    /// t, τ₁, the noise of the private 𝓛′, or the reason there are none.
    params: Result<(u64, f64, Option<FrequentNoise>), String>,
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
    for kind in KINDS {
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
    for kind in KINDS {
        for &eps in grid {
            for &(s, label) in &BETA_S {
                let beta = if s == 1.0 {
                    dpmo::generalize::min_beta(eps).map_err(|e| anyhow!("{e:?}"))?
                } else {
                    (-s * eps).exp()
                };
                for step1 in STEP1 {
                    settings.push((kind, eps, label, beta, step1));
                }
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
                (Ok((p.settings().t, st.tau1, p.frequent_noise())), rs)
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
    // The whole budget at ε + ε_F = 1, split (0.9, 0.1): Algorithm 3 at ε = 0.9 (β = e^{−0.9}, the most
    // records sampled), the Gaussian 𝓛′ at ε_F = 0.1.
    let mut split = Vec::new();
    if grid.contains(&1.0) {
        let (eps, eps_f) = (0.9, 0.1);
        let beta = dpmo::generalize::min_beta(eps).map_err(|e| anyhow!("{e:?}"))?;
        for (ki, kind) in KINDS.into_iter().enumerate() {
            if let Ok(st) = mechanism::setting_split(&lattice, &model, kind, eps, beta, Step1::Gaussian, eps_f) {
                let p = &st.params;
                let scale = mechanism::selector_scale(p, m);
                let rs: Vec<Released> = (0..runs)
                    .into_par_iter()
                    .map(|r| {
                        let mut rng = job.rng("alg3-split", &[di as u64, ki as u64, r as u64]);
                        mechanism::run(&mut rng, &space, p, scale, None)
                    })
                    .collect::<Result<_>>()?;
                let xs: Vec<f64> = rs.iter().map(|r| r.count as f64 / m as f64).collect();
                let c = Cell::of(&xs);
                summary.push(SummaryRow::new(
                    name,
                    &format!("alg3-{}-gaussian-L'-split-0.9+0.1", kind.name()),
                    Some(1.0),
                    None,
                    "released",
                    c,
                ));
                split.push((kind, p.settings().t, p.frequent_noise().map(|x| x.threshold()), c));
            }
        }
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
                bt.map(|x| x.threshold().to_string()).unwrap_or_default(),
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
    for kind in KINDS {
        let mut rows = Vec::new();
        for p in results.iter().filter(|p| p.kind == kind) {
            let show = |metric: &str, dd: usize| cell_of(p, metric).map(|c| c.show(dd)).unwrap_or_else(|| "—".into());
            let (t, tau, big_t) = match &p.params {
                Ok((t, tau, bt)) => (
                    thousands(*t as usize),
                    format!("{tau:.2}"),
                    bt.map(|x| thousands(x.threshold() as usize))
                        .unwrap_or_else(|| "—".into()),
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
        for step1 in STEP1 {
            for &(_, label) in &BETA_S {
                curves.push(Curve::measured(
                    format!(
                        "{}, β = {}",
                        match step1 {
                            Step1::Exact => "paper's L′",
                            Step1::Laplace => "Laplace L′",
                            Step1::Gaussian => "Gaussian L′",
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
                    "{runs} runs per point; bars: 95% intervals (±1.96 s.e.); the private L′ spends ε_F = ε more \
                     (2ε in all); flat lines: deterministic baselines"
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
    let beta_of = |p: &Private| p.beta_label.replace("eps", "ε");
    let setting_of = |p: &Private| format!("ε = {} with β = {}", show_eps(p.eps), beta_of(p));
    let join = |v: Vec<String>| if v.is_empty() { "none".to_string() } else { v.join("; ") };
    // Settings grouped by ε: "ε = 0.1 (every β), ε = 1 with β = e^-ε/4".
    let settings_of = |ps: &[&Private]| -> String {
        let mut out = Vec::new();
        for &e in grid {
            let betas: Vec<String> = ps.iter().filter(|p| p.eps == e).map(|p| beta_of(p)).collect();
            if betas.len() == BETA_S.len() {
                out.push(format!("ε = {} (every β)", show_eps(e)));
            } else if !betas.is_empty() {
                out.push(format!("ε = {} with β = {}", show_eps(e), betas.join(" or ")));
            }
        }
        join(out)
    };
    let released = |p: &Private| cell_of(p, "released").is_some_and(|c| c.mean > 0.0);
    let versus = |c: Cell| -> String {
        let mut out = Vec::new();
        for &(k, u, _) in &kanon_cells {
            let zz = z(c, Cell { mean: u, se: 0.0, n: 1 });
            out.push(format!(
                "{} {k}-anonymity's {u:.3} ({})",
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
        out.join("; ")
    };
    // The most records under an admissible element: ⊥ (|D|) for the Lagrangian, the most populous element
    // with u ≥ c for the threshold versions. The paper's 𝓛′ gives some record a candidate iff t ≤ it.
    let most_at = |floor: f64| {
        (0..space.classes_len())
            .into_par_iter()
            .map(|ci| {
                let u = space.utilities(ci);
                space
                    .counts_of(ci)
                    .iter()
                    .zip(&u)
                    .filter(|&(_, &uj)| uj >= floor)
                    .map(|(&c, _)| u64::from(c))
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    };
    let top_eps = grid.last().copied().unwrap_or(1.0);
    let released_at = |kind: Kind, step1: Step1, eps: f64| -> Option<(&Private, Cell)> {
        results
            .iter()
            .filter(|p| p.kind == kind && p.step1 == step1 && p.eps == eps)
            .filter_map(|p| cell_of(p, "released").map(|c| (p, c)))
            .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
    };
    for kind in KINDS {
        let opt = optima
            .iter()
            .find(|o| o.0 == kind)
            .map(|o| o.1[3].1.mean)
            .unwrap_or(f64::NAN);
        let (cap, cap_name) = match kind.floor(&model) {
            None => (m as u64, "|D|".to_string()),
            Some(floor) => (
                most_at(floor),
                format!("the most records under any element with u ≥ c = {floor:.3}"),
            ),
        };
        let t_of = |p: &Private| p.params.as_ref().map(|x| x.0).ok();
        let exact: Vec<&Private> = results
            .iter()
            .filter(|p| p.kind == kind && p.step1 == Step1::Exact)
            .collect();
        let over: Vec<&Private> = exact
            .iter()
            .copied()
            .filter(|p| !released(p) && t_of(p).is_none_or(|t| t > cap))
            .collect();
        let unexplained: Vec<&Private> = exact
            .iter()
            .copied()
            .filter(|p| !released(p) && t_of(p).is_some_and(|t| t <= cap))
            .collect();
        s.push_str(&format!(
            "* *{} version, paper's 𝓛′.* No record is released at {}: there t > {} = {cap_name}, so no \
             element a record may use is t-frequent",
            kind.name(),
            settings_of(&over),
            thousands(cap as usize),
        ));
        if !unexplained.is_empty() {
            s.push_str(&format!(
                ", and at {} (t ≤ {}: no sampled record had a candidate)",
                settings_of(&unexplained),
                thousands(cap as usize)
            ));
        }
        s.push('.');
        if let Some((p, c)) = best_private(kind, Step1::Exact, top_eps) {
            s.push_str(&format!(
                " At ε = {}, the best β ({}) releases {:.1} % of the records with mean utility {} and mean risk {}: \
                 {:.3} nats per record, {:.1} % of the non-private optimum's {opt:.3}; {}.",
                show_eps(top_eps),
                beta_of(p),
                100.0 * cell_of(p, "released").map(|c| c.mean).unwrap_or(0.0),
                cell_of(p, "utility").map(|c| c.show(3)).unwrap_or_else(|| "—".into()),
                cell_of(p, "risk").map(|c| c.show(6)).unwrap_or_else(|| "—".into()),
                c.mean,
                100.0 * c.mean / opt,
                versus(c),
            ));
        }
        s.push('\n');
        // The private 𝓛′s: what each releases against the paper's 𝓛′ at the same (ε, β), and why it
        // releases nothing elsewhere.
        for step1 in [Step1::Laplace, Step1::Gaussian] {
            let private: Vec<&Private> = results.iter().filter(|p| p.kind == kind && p.step1 == step1).collect();
            let exact_twin = |p: &Private| {
                exact
                    .iter()
                    .find(|e| e.eps == p.eps && e.beta_label == p.beta_label)
                    .and_then(|e| cell_of(e, "utility-per-record"))
            };
            let some: Vec<String> = private
                .iter()
                .filter(|p| released(p))
                .filter_map(|p| {
                    let c = cell_of(p, "utility-per-record")?;
                    let e = exact_twin(p)?;
                    Some(format!(
                        "{}: {:.1} % released, {} nats per record against the paper's 𝓛′'s {} ({})",
                        setting_of(p),
                        100.0 * cell_of(p, "released").map(|c| c.mean).unwrap_or(0.0),
                        c.show(3),
                        e.show(3),
                        show_z(z(c, e))
                    ))
                })
                .collect();
            // Every admissible element has at most `cap` records, so it enters 𝓛′ with probability at
            // most P(Z ≥ T − cap).
            let silent: Vec<(&Private, FrequentNoise)> = private
                .iter()
                .filter(|p| !released(p))
                .filter_map(|p| p.params.as_ref().ok().and_then(|x| x.2).map(|nt| (*p, nt)))
                .collect();
            let worst = silent
                .iter()
                .map(|(_, nt)| enter_probability(nt, nt.threshold() as i128 - cap as i128))
                .fold(0.0, f64::max);
            let fewest = silent
                .iter()
                .map(|(_, nt)| (nt.threshold() as f64 - cap as f64) / noise_sd(nt))
                .fold(f64::INFINITY, f64::min);
            let noise_name = if step1 == Step1::Laplace {
                "discrete Laplace"
            } else {
                "discrete Gaussian"
            };
            s.push_str(&format!(
                "* *{} version, {noise_name} 𝓛′* (ε_F = ε and δ_F = δ, so (2ε, 2δ) in total). Settings that \
                 release: {}.",
                kind.name(),
                join(some)
            ));
            if !silent.is_empty() {
                s.push_str(&format!(
                    " Nothing is released at {}: there the noisy threshold T is at least {fewest:.1} standard \
                     deviations of the noise above {} = {cap_name}, so each element a record may use enters a \
                     run's 𝓛′ with probability at most {worst:.1e}.",
                    settings_of(&silent.iter().map(|(p, _)| *p).collect::<Vec<_>>()),
                    thousands(cap as usize),
                ));
            }
            if let Some((p, c)) = best_private(kind, step1, top_eps) {
                s.push_str(&format!(
                    " At ε = {}, its best β ({}) gives {:.3} nats per record, {:.1} % of the non-private optimum; {}.",
                    show_eps(top_eps),
                    beta_of(p),
                    c.mean,
                    100.0 * c.mean / opt,
                    versus(c)
                ));
            }
            s.push('\n');
        }
    }
    // The choice of the private 𝓛′, in numbers: the threshold above t − 1 and the fraction released at
    // ε = 1 (best β), Laplace against Gaussian, for every model.
    let margin = |step1: Step1| {
        results
            .iter()
            .filter(|p| p.step1 == step1 && p.eps == 1.0)
            .filter_map(|p| {
                p.params
                    .as_ref()
                    .ok()
                    .and_then(|x| x.2.map(|nt| nt.threshold() as i64 - x.0 as i64 + 1))
            })
            .next()
    };
    let at_one: Vec<String> = KINDS
        .iter()
        .map(|&kind| {
            let frac = |step1| {
                released_at(kind, step1, 1.0)
                    .map(|(p, c)| {
                        if c.mean > 0.0 {
                            format!("{:.1} % (β = {})", 100.0 * c.mean, beta_of(p))
                        } else {
                            "nothing (every β)".to_string()
                        }
                    })
                    .unwrap_or_else(|| "—".into())
            };
            format!(
                "{}: {} with the Gaussian 𝓛′, {} with the Laplace 𝓛′, {} with the paper's",
                kind.name(),
                frac(Step1::Gaussian),
                frac(Step1::Laplace),
                frac(Step1::Exact)
            )
        })
        .collect();
    if grid.contains(&1.0) {
        s.push_str(&format!(
            "\n**Which private 𝓛′, and why.** 𝓛′ is a partition selection over the public lattice 𝓛 in which one \
             record moves the counts of the N = {} elements of its chain product by 1 each: ℓ1 sensitivity N, but \
             ℓ2 sensitivity √N. Laplace noise must be calibrated to ℓ1 (scale N/ε_F), Gaussian noise to ℓ2 \
             (σ ∝ √N/ε_F, exact discrete Gaussian, σ² from the zCDP budget of (ε_F, δ_F/2)); both thresholds then \
             add the margin that keeps every element of a record's a⁺ with fewer than t records out of 𝓛′ with \
             probability 1 − δ_F (for the Gaussian, half of δ_F). At ε_F = 1 and δ_F = 10⁻⁶ the margin T − (t − 1) \
             is {} records with the Laplace noise and {} with the Gaussian one, so the core's C ABI \
             (`dpmo_generalize_release`) uses the Gaussian frequent set. Released at ε = 1 (ε_F = 1 too, best β): \
             {}. With the whole budget at ε + ε_F = 1, split as ε = 0.9 for Algorithm 3 (β = e^{{−0.9}}: at most \
             59.3 % of the records sampled) and ε_F = 0.1 for the Gaussian 𝓛′ ({runs} runs): {}.\n",
            thousands(n),
            margin(Step1::Laplace).map_or("—".into(), |x| thousands(x as usize)),
            margin(Step1::Gaussian).map_or("—".into(), |x| thousands(x as usize)),
            at_one.join("; "),
            if split.is_empty() {
                "no model meets condition (10)".to_string()
            } else {
                split
                    .iter()
                    .map(|(kind, t, big_t, c)| {
                        format!(
                            "{} {} released (t = {}, T = {})",
                            kind.name(),
                            c.show(4),
                            thousands(*t as usize),
                            big_t.map_or("—".into(), |x| thousands(x as usize))
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
    }
    // Where the Laplace 𝓛′'s threshold alone exceeds |D| (every β, every model).
    let above_d: Vec<String> = grid
        .iter()
        .filter(|&&e| {
            let ts: Vec<u64> = results
                .iter()
                .filter(|p| p.step1 == Step1::Laplace && p.eps == e)
                .filter_map(|p| p.params.as_ref().ok().and_then(|x| x.2).map(|nt| nt.threshold()))
                .collect();
            !ts.is_empty() && ts.iter().all(|&t| t > m as u64)
        })
        .map(|&e| show_eps(e))
        .collect();
    let ts: Vec<u64> = results
        .iter()
        .filter_map(|p| p.params.as_ref().ok().map(|x| x.0))
        .collect();
    let (t_lo, t_hi) = (
        ts.iter().copied().min().unwrap_or(0),
        ts.iter().copied().max().unwrap_or(0),
    );
    s.push_str(&format!(
        "\n**Reading the results.** The paper has no experiment of its mechanism; these numbers are new. Two \
         properties of Algorithm 3 shape them, both visible in the tables: condition (10) asks for \
         t ≳ max(2 ln(2N/δ)/(β τ₁²), N/((1 − β)(1 − τ₁))) records under every element a record may use — \
         {} to {} here for N = {}, independent of |D| — so only coarse generalizations are candidates on a \
         table of {name}'s size; and ε′ = (ε + ln β)/(3η(1 − β)) applied to scores divided by |D| makes the \
         choice among them close to uniform (exactly uniform at β = e^{{−ε}}). Larger β raises ε′ but releases \
         fewer records (a fraction 1 − β). With the Laplace 𝓛′ the noisy threshold T adds s·ln(N/δ_F) with \
         s = ⌈N/ε_F⌉ to t, so T exceeds |D| = {} at ε = {} (every β); the Gaussian 𝓛′ adds about \
         σ √(2 ln(2N/δ_F)) with σ ∝ √N/ε_F. A smaller utility floor c admits coarser generalizations, which \
         have more records under them, so more records find a frequent candidate (at a lower utility each). \
         k-anonymity has no such floor, but gives no differential privacy; the non-private optima give \
         neither.\n\n",
        thousands(t_lo as usize),
        thousands(t_hi as usize),
        thousands(n),
        thousands(m),
        if above_d.is_empty() {
            "none of the budgets".to_string()
        } else {
            above_d.join(", ")
        },
    ));
    s.push_str(&format!(
        "Settings: Model II risk (Φ ≡ 1, so r = 1/|ρ(x, D)| with Θ = D), utility d_i = ln(n_i(⊥)/n_i(x_i)) \
         (0 at ⊥), Lagrangian λ = {}, κ = {}, φ(k) = 1; threshold c = ν/2 = {:.3} (and, as `threshold-low-c`, \
         c = ν/4 = {:.3}), φ_u(k) = 1; δ = {:e}; \
         n₀ = {} (public lower bound of |D|); β ∈ {{e^−ε, e^−ε/2, e^−ε/4}}; t the smallest admissible by \
         condition (10) (the core's `Parameters::smallest_t`), τ₁ chosen on the grid 0.05, 0.10, …, 0.95 to \
         make t smallest (a public choice: it depends on N, β, δ, ε only). Paper's 𝓛′: step 1 as printed (exact \
         counts; not differentially private, see `dpmo::generalize::frequency`); Laplace and Gaussian 𝓛′: the \
         core's noisy frequent sets (`FrequentSet::Private`, `FrequentSet::Gaussian`), ε_F = ε, δ_F = δ. Metrics: `released` = fraction of |D| released; `utility`, `risk` = means over the \
         released generalizations (eq. 8 with u in place of f, and its risk version); `utility-per-record` = \
         Σ u(released)/|D| (a record not released contributes 0, as ⊥ does). Each private run draws the \
         Bernoulli sample, the private 𝓛′ and the choices afresh (core coins: exact Bernoulli(β), exact \
         exponential mechanism). k-anonymity: {}.\n",
        model.lambda,
        model.kappa,
        model.c,
        model.c_low,
        model.delta,
        thousands(model.min_records as usize),
        "optimal full-domain generalization by exhaustive search over the N level vectors (Samarati-style, no \
         suppression), maximal mean utility"
    ));
    Ok(s)
}

/// P(Z ≥ g) for the noise of a private 𝓛′: the probability that an element `g` records short of T enters
/// it.
fn enter_probability(noise: &FrequentNoise, g: i128) -> f64 {
    match noise {
        FrequentNoise::Laplace(nt) => {
            if g >= 1 {
                mechanism::noise_tail(g as u64, nt.scale)
            } else {
                // P(Z ≥ g) = 1 − P(Z ≥ 1 − g) by symmetry.
                1.0 - mechanism::noise_tail((1 - g) as u64, nt.scale)
            }
        }
        FrequentNoise::Gaussian(gt) => {
            // P(Z ≥ g) ≤ Q(g/σ) + φ(g/σ)/σ for g ≥ 1 (the core's tail bound); 1 otherwise.
            if g >= 1 {
                dpmo::discover::accounting::gaussian_tail(&gt.variance, g as u64)
            } else {
                1.0
            }
        }
    }
}

/// The standard deviation of the noise of a private 𝓛′ (√2 s for the discrete Laplace of scale s, about).
fn noise_sd(noise: &FrequentNoise) -> f64 {
    match noise {
        FrequentNoise::Laplace(nt) => std::f64::consts::SQRT_2 * nt.scale as f64,
        FrequentNoise::Gaussian(g) => g.variance.value().sqrt(),
    }
}
