//! PrivTopk with egocentric betweenness centrality (Local Dampening paper, §5.1 Algorithm 1, §6.1 Figure 5,
//! Enron panels): the k nodes of largest EBC in k rounds at B/k each, with
//! * GlobalPrivTopk: the exponential mechanism with ΔEBC of Lemma 5.2 (maximum degree public);
//! * LocalPrivTopk: local dampening with δ^EBC of Def. 5.3;
//! * ShiftedLocalPrivTopk: shifted local dampening (Def. 4.3) with the same δ^EBC.
//!
//! EBC and δ^EBC come from the core (`ebc_all`, `ebc_delta`, `ebc_global_sensitivity`). The dampened scores
//! do not depend on the run, so they are computed once (`dampen_with`, plain and shifted); each run is then
//! the core's one-shot Gumbel top-k (`select_top_k_gumbel`), which is equal in distribution to k sequential
//! exponential mechanisms at B/k each (Algorithm 1 with the exponential mechanism inside), at O(n) per run.

use super::{f, load_enron, mean_se, progress, run_rng};
use crate::experiments::Context;
use crate::output::{self, LinePlot, Section, Series};
use anyhow::Result;
use dpmo::dampen::{dampen_with, Dampening};
use dpmo::select::select_top_k_gumbel;
use dpmo::sensitivity::ebc::{ebc_all, ebc_delta, ebc_global_sensitivity, ebc_scratch_len};
use dpmo::sensitivity::{DeltaFunction, DeltaSource, LocalSensitivity};
use dpmo::Arithmetic;
use rayon::prelude::*;
use std::time::Instant;

/// One result cell: (k, budget index, method, budget, (mean accuracy, standard error)).
type Cell = (usize, usize, Method, f64, (f64, f64));

/// Figure 5a's range for Enron.
const SMALL_B: [f64; 9] = [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75];
/// Figure 5b's range.
const WIDE_B: [f64; 8] = [1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4];
/// The values of k.
const KS: [usize; 3] = [5, 10, 20];
/// ΔEBC the paper prints for Enron (§6.1).
pub const PAPER_DELTA_EBC_ENRON: f64 = 29_326.5;

/// δ^EBC(G, t, v) (Def. 5.3) clamped to ΔEBC, as a function of (v, t).
struct EbcDelta<'a> {
    degree: &'a [usize],
    max_degree: usize,
}

impl DeltaFunction for EbcDelta<'_> {
    fn delta(&self, r: usize, t: usize) -> f64 {
        ebc_delta(self.degree[r], t, self.max_degree)
    }
}

/// The methods compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Method {
    /// Exponential mechanism with Lemma 5.2's ΔEBC.
    Global,
    /// Local dampening.
    Local,
    /// Shifted local dampening.
    Shifted,
    /// The exponential mechanism with the ΔEBC printed in the paper for Enron (29,326.5): too small for
    /// Enron's maximum degree, so not private; shown only to explain the published curve.
    GlobalPrinted,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Global => "GlobalPrivTopk",
            Method::Local => "LocalPrivTopk",
            Method::Shifted => "ShiftedLocalPrivTopk",
            Method::GlobalPrinted => "Global, printed ΔEBC (not private)",
        }
    }
}

const METHODS: [Method; 4] = [Method::Global, Method::Local, Method::Shifted, Method::GlobalPrinted];

/// Accuracy |retrieved ∩ true| / k.
pub fn overlap(truth: &[usize], picked: &[usize]) -> f64 {
    picked.iter().filter(|p| truth.contains(p)).count() as f64 / truth.len() as f64
}

/// Figure 5 (Enron panels).
pub fn run(ctx: &Context) -> Result<Section> {
    let start = Instant::now();
    let dir = output::results_dir(&ctx.out, "privtopk-ebc")?;
    let graph = load_enron(ctx)?;
    let g = graph.csr()?;
    let n = g.node_count();
    let d_max = g.max_degree();
    let runs = if ctx.smoke { 10 } else { 100 };
    let (small, wide): (Vec<f64>, Vec<f64>) = if ctx.smoke {
        (vec![0.1, 0.75], vec![1e-3, 1e4])
    } else {
        (SMALL_B.to_vec(), WIDE_B.to_vec())
    };

    let t = Instant::now();
    let mut scratch = vec![0u32; ebc_scratch_len(n, g.adjacency_len())?];
    let mut ebc = vec![0.0; n];
    ebc_all(&g, &mut scratch, &mut ebc)?;
    let ebc_s = t.elapsed().as_secs_f64();
    let delta_ebc = ebc_global_sensitivity(d_max);
    let degree: Vec<usize> = (0..n).map(|v| g.degree(v)).collect();
    let fun = EbcDelta {
        degree: &degree,
        max_degree: d_max,
    };
    // From t = D_max on, d + t ≥ D_max and δ^EBC = ΔEBC for every node: saturating there loses nothing.
    let ls = LocalSensitivity::new(DeltaSource::Function(&fun), delta_ebc, d_max, n)?;
    let t = Instant::now();
    let mut plain = vec![0.0; n];
    dampen_with(&ebc, &ls, Dampening::Plain, &mut plain)?;
    let mut shifted = vec![0.0; n];
    dampen_with(&ebc, &ls, Dampening::Shifted, &mut shifted)?;
    let dampen_s = t.elapsed().as_secs_f64();

    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| ebc[b].total_cmp(&ebc[a]).then(a.cmp(&b)));
    let scores_of = |m: Method| -> (&[f64], f64) {
        match m {
            Method::Global => (&ebc, delta_ebc),
            Method::GlobalPrinted => (&ebc, PAPER_DELTA_EBC_ENRON),
            Method::Local => (&plain, 1.0),
            Method::Shifted => (&shifted, 1.0),
        }
    };

    // (range, k, method, B)
    let mut configs = Vec::new();
    for (ri, grid) in [&small, &wide].into_iter().enumerate() {
        for &k in &KS {
            for &m in &METHODS {
                for &b in grid.iter() {
                    configs.push((ri, k, m, b));
                }
            }
        }
    }
    let pb = progress(configs.len() * runs, "PrivTopk runs");
    let results: Vec<Cell> = configs
        .par_iter()
        .enumerate()
        .map_init(
            || (vec![0.0; n], vec![0usize; n]),
            |(noisy, index), (ci, &(ri, k, m, b))| -> Result<_> {
                let truth = &order[..k];
                let (scores, delta) = scores_of(m);
                let mut acc = Vec::with_capacity(runs);
                let mut out = vec![0usize; k];
                for run in 0..runs {
                    let mut rng = run_rng(ctx.seed, "privtopk-ebc", ci as u64, run as u64);
                    select_top_k_gumbel(&mut rng, scores, delta, b, &mut out, noisy, index, Arithmetic::Exact)?;
                    acc.push(overlap(truth, &out));
                    pb.inc(1);
                }
                Ok((ri, k, m, b, mean_se(&acc)))
            },
        )
        .collect::<Result<_>>()?;
    pb.finish_and_clear();

    let mut rows = Vec::new();
    for r in &results {
        rows.push(vec![
            if r.0 == 0 { "small" } else { "wide" }.to_string(),
            r.1.to_string(),
            r.2.name().to_string(),
            r.3.to_string(),
            f(r.4 .0, 4),
            f(r.4 .1, 4),
            runs.to_string(),
        ]);
    }
    output::write_csv(
        &dir.join("figure5.csv"),
        &["range", "k", "method", "B", "mean_accuracy", "std_error", "runs"],
        &rows,
    )?;
    let get = |ri: usize, k: usize, m: Method, b: f64| {
        results
            .iter()
            .find(|r| r.0 == ri && r.1 == k && r.2 == m && r.3 == b)
            .map(|r| r.4)
            .unwrap_or((f64::NAN, f64::NAN))
    };
    let mut plots = String::new();
    for (ri, grid) in [&small, &wide].into_iter().enumerate() {
        for &k in &KS {
            let series: Vec<Series> = METHODS
                .iter()
                .map(|&m| Series {
                    label: m.name().to_string(),
                    points: grid.iter().map(|&b| (b, get(ri, k, m, b).0)).collect(),
                })
                .collect();
            let name = format!("figure5_{}_k{k}.png", if ri == 0 { "small" } else { "wide" });
            output::line_plot(
                &dir.join(&name),
                &LinePlot {
                    title: &format!("PrivTopk (EBC) on Enron, k = {k}"),
                    x_label: "privacy budget B",
                    y_label: "mean accuracy (overlap with true top-k)",
                    series: &series,
                    log_x: ri == 1,
                },
            )?;
            plots.push_str(&format!("![Figure 5 Enron, k = {k}](results/privtopk-ebc/{name}) "));
        }
        plots.push_str("\n\n");
    }

    // Tables: small range at every B, wide range at every B.
    let mut body = String::new();
    body.push_str(&format!(
        "Local Dampening paper §6.1, Figure 5 (Enron panels). PrivTopk (Algorithm 1) picks k nodes by EBC in k \
         rounds at B/k each. GlobalPrivTopk: exponential mechanism with ΔEBC (Lemma 5.2); LocalPrivTopk: local \
         dampening with δ^EBC (Def. 5.3); ShiftedLocalPrivTopk: shifted local dampening (Def. 4.3). Accuracy = \
         |retrieved ∩ true top-k| / k, mean over **{runs} runs** per point (± one standard error; the largest \
         standard error in the tables is {:.3}).\n\n",
        results.iter().map(|r| r.4 .1).fold(0.0, f64::max)
    ));
    body.push_str(&format!(
        "**ΔEBC for Enron.** Lemma 5.2 with Enron's maximum degree Δ(G) = {d_max}: ΔEBC = max(1383·1382/4, 1383) = \
         **{delta_ebc:.1}**. The paper prints 29,326.5 for Enron and 477,826.5 for DBLP; but 29,326.5 = 343·342/4 is \
         Lemma 5.2 at DBLP's maximum degree 343, and 477,826.5 is Lemma 5.2 at Enron's 1,383: the two numbers are \
         swapped in the paper's text (Github's 22,361,076.5 = 9458·9457/4 is consistent). We use {delta_ebc:.1}. The \
         curve \"Global, printed ΔEBC\" runs the exponential mechanism with 29,326.5 only to show what the printed \
         value would give; it is not ε-DP on Enron.\n\n"
    ));
    for (ri, grid) in [&small, &wide].into_iter().enumerate() {
        let mut header = vec!["B".to_string()];
        for &k in &KS {
            for m in [Method::Global, Method::Local, Method::Shifted] {
                header.push(format!(
                    "{} k={k}",
                    match m {
                        Method::Global => "G",
                        Method::Local => "L",
                        _ => "S",
                    }
                ));
            }
        }
        let md_rows: Vec<Vec<String>> = grid
            .iter()
            .map(|&b| {
                let mut row = vec![b.to_string()];
                for &k in &KS {
                    for m in [Method::Global, Method::Local, Method::Shifted] {
                        row.push(f(get(ri, k, m, b).0, 2));
                    }
                }
                row
            })
            .collect();
        body.push_str(&format!(
            "{} (G = GlobalPrivTopk, L = LocalPrivTopk, S = ShiftedLocalPrivTopk):\n\n",
            if ri == 0 {
                "Figure 5a range, B ∈ [0.01, 0.75]"
            } else {
                "Figure 5b range, B ∈ [10⁻³, 10⁴]"
            }
        ));
        let hdr: Vec<&str> = header.iter().map(|s| s.as_str()).collect();
        body.push_str(&output::markdown_table(&hdr, &md_rows));
        body.push('\n');
    }
    body.push_str(&plots);

    // Budget ratio Global / Shifted at which each first reaches accuracy 0.5 (log-linear interpolation).
    let reach = |k: usize, m: Method, level: f64| -> Option<f64> {
        let pts: Vec<(f64, f64)> = wide.iter().map(|&b| (b, get(1, k, m, b).0)).collect();
        for w in pts.windows(2) {
            let ((b0, a0), (b1, a1)) = (w[0], w[1]);
            if a0 >= level {
                return Some(b0);
            }
            if a1 >= level && a1 > a0 {
                let x = (level - a0) / (a1 - a0);
                return Some((b0.ln() + x * (b1.ln() - b0.ln())).exp());
            }
        }
        None
    };
    let mut ratio_lines = Vec::new();
    for &k in &KS {
        match (reach(k, Method::Global, 0.5), reach(k, Method::Shifted, 0.5)) {
            (Some(gb), Some(sb)) => ratio_lines.push(format!(
                "k = {k}: GlobalPrivTopk reaches accuracy 0.5 at B ≈ {}, ShiftedLocalPrivTopk at B ≈ {} \
                 ({:.1} orders of magnitude less)",
                sig(gb),
                sig(sb),
                (gb / sb).log10()
            )),
            (g_, s_) => ratio_lines.push(format!(
                "k = {k}: accuracy 0.5 reached by Global at {g_:?}, by Shifted at {s_:?} within the tested range"
            )),
        }
    }
    let top = &order[..5];
    body.push_str(&format!(
        "**Published.** Figure 5 is given as plots only, without numbers; we compare with the claims of §6.1. \
         (1) \"For smaller values of privacy budget ShiftedLocalPrivTopk outperforms GlobalPrivTopk and \
         LocalPrivTopk\", whose lines \"overlap\" near zero: ours agree (small-range table). (2) Methods perform \
         worse as k grows, because each round gets B/k: ours agree for the Shifted method. (3) \"ShiftedLocalPrivTopk \
         achieves the same level of accuracy with privacy values 3 to 4 orders of magnitude less than \
         GlobalPrivTopk\": {}.\n\n\
         **Why the methods differ.** The largest EBC values are {} (nodes {}); a round of GlobalPrivTopk at B/k \
         weighs an EBC gap of about 10⁶ by e^{{(B/k) · 10⁶ / (2 · {delta_ebc:.0})}} = e^{{B/k}} roughly, hopeless \
         against 36,692 nodes until B/k ≈ 10–20. LocalPrivTopk dampens each node with its own δ^EBC, which grows \
         with the square of its degree: the top nodes (degrees in the hundreds or more) are dampened hardest, and \
         their dampened scores ({}) are no larger than those of many mid-degree nodes — the inversion problem of \
         §4 — so it is no better than Global here. The shifted version scores u/ΔEBC − Σ_t (1 − δ(t)/ΔEBC), which \
         rewards exactly the high-degree, high-EBC nodes ({}), hence its advantage.\n\n\
         Runs use the core's one-shot Gumbel top-k on precomputed scores, equal in distribution to Algorithm 1's \
         k exponential-mechanism rounds. Timing: EBC of all nodes {ebc_s:.2} s; plain and shifted dampening of all \
         nodes (δ^EBC up to distance {d_max}) {dampen_s:.2} s.\n",
        ratio_lines.join("; "),
        top.iter()
            .map(|&v| format!("{:.0}", ebc[v]))
            .collect::<Vec<_>>()
            .join(", "),
        top.iter()
            .map(|&v| graph.labels[v].to_string())
            .collect::<Vec<_>>()
            .join(", "),
        top.iter()
            .map(|&v| format!("{:.2}", plain[v]))
            .collect::<Vec<_>>()
            .join(", "),
        top.iter()
            .map(|&v| format!("{:.1}", shifted[v]))
            .collect::<Vec<_>>()
            .join(", "),
    ));
    body.push_str(&format!("\nExperiment time {:.1} s.\n", start.elapsed().as_secs_f64()));
    Ok(Section {
        title: "PrivTopk with EBC on Enron (Local Dampening paper, Figure 5)".into(),
        body,
    })
}

/// Three significant digits.
fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let d = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.d$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_counts_common_nodes() {
        assert_eq!(overlap(&[1, 2, 3, 4, 5], &[5, 4, 9, 8, 7]), 0.4);
        assert_eq!(overlap(&[1], &[1]), 1.0);
    }

    #[test]
    fn printed_delta_ebc_is_dblps() {
        assert_eq!(ebc_global_sensitivity(343), PAPER_DELTA_EBC_ENRON);
        assert_eq!(ebc_global_sensitivity(1383), 477_826.5);
    }
}
