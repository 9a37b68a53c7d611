//! What every experiment receives and returns, and the helpers they share: settings with the paper's
//! defaults, per-run generators, the tidy summary file, statistics and claims computed from the results,
//! and the peak memory measurement.
//!
//! This module depends on no experiment; the registry (`experiments.rs`) depends on the experiments, which
//! depend on this module.

use crate::anonymize::microdata::Microdata;
use crate::data::{slug, GraphData, TableData};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::{Path, PathBuf};

/// The input an experiment needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// An undirected graph (`--graph`).
    Graph,
    /// A classification table (`--table`).
    Table,
    /// Records with Adult's quasi-identifiers (`--table` with Adult's columns, see `anonymize`).
    Records,
}

/// One experiment of the registry.
pub struct Experiment {
    /// Short name used on the command line and as the output folder.
    pub name: &'static str,
    /// One line for `dpmo-eval list`.
    pub about: &'static str,
    /// What `--k` means for it (None: the option is refused).
    pub k_means: Option<&'static str>,
    /// The input it runs on.
    pub needs: Needs,
    /// Runs it.
    pub run: fn(&Job<'_>) -> Result<Outcome>,
}

/// Command-line overrides of an experiment's defaults.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// Repetitions per setting.
    pub runs: Option<usize>,
    /// The privacy budgets.
    pub epsilons: Option<Vec<f64>>,
    /// The k values.
    pub ks: Option<Vec<usize>>,
    /// Base seed of the generators.
    pub seed: u64,
    /// Small defaults: a fast check that everything runs.
    pub smoke: bool,
}

impl Settings {
    /// `--runs`, else the paper's count (or the smoke count).
    pub fn runs(&self, full: usize, smoke: usize) -> usize {
        self.runs.unwrap_or(if self.smoke { smoke } else { full })
    }

    /// `--epsilons`, else the paper's grid (or the smoke grid).
    pub fn epsilons(&self, full: &[f64], smoke: &[f64]) -> Vec<f64> {
        self.epsilons
            .clone()
            .unwrap_or_else(|| if self.smoke { smoke.to_vec() } else { full.to_vec() })
    }

    /// `--k`, else the paper's values (or the smoke values).
    pub fn ks(&self, full: &[usize], smoke: &[usize]) -> Vec<usize> {
        self.ks
            .clone()
            .unwrap_or_else(|| if self.smoke { smoke.to_vec() } else { full.to_vec() })
    }
}

/// One invocation of an experiment.
pub struct Job<'a> {
    /// The experiment's name.
    pub experiment: &'static str,
    /// Settings.
    pub settings: &'a Settings,
    /// Its output folder (created).
    pub dir: PathBuf,
    /// How the report links to files of `dir` (a relative path, without a trailing slash).
    pub link: String,
    /// The graphs to run on (graph experiments).
    pub graphs: &'a [GraphData],
    /// The tables to run on (table experiments).
    pub tables: &'a [TableData],
    /// The records to generalize (record experiments).
    pub records: &'a [Microdata],
}

impl Job<'_> {
    /// The path of an output file `<dataset>_<stem>` and the report's link to it.
    pub fn file(&self, dataset: &str, stem: &str) -> (PathBuf, String) {
        let name = format!("{}_{stem}", slug(dataset));
        (self.dir.join(&name), format!("{}/{name}", self.link))
    }

    /// A generator for one run, from the base seed, the experiment, a label and the run's coordinates.
    pub fn rng(&self, label: &str, parts: &[u64]) -> Xoshiro256PlusPlus {
        run_rng(self.settings.seed, &format!("{}/{label}", self.experiment), parts)
    }
}

/// What an experiment returns: its report section and its tidy summary rows.
pub struct Outcome {
    /// Section heading.
    pub title: String,
    /// Markdown body.
    pub body: String,
    /// Summary rows.
    pub summary: Vec<SummaryRow>,
}

/// One row of `summary.csv`.
#[derive(Clone, Debug)]
pub struct SummaryRow {
    /// Dataset name.
    pub dataset: String,
    /// Method (`global`, `local`, `local-shifted`, `non-private`, …).
    pub method: String,
    /// Privacy budget (None for non-private rows).
    pub epsilon: Option<f64>,
    /// k, where the experiment has one.
    pub k: Option<usize>,
    /// Metric name.
    pub metric: String,
    /// Mean over the runs.
    pub mean: f64,
    /// Standard error of the mean.
    pub stderr: f64,
    /// Number of runs.
    pub runs: usize,
}

impl SummaryRow {
    /// A row from a dataset, method, ε, k, metric and a cell.
    pub fn new(dataset: &str, method: &str, epsilon: Option<f64>, k: Option<usize>, metric: &str, c: Cell) -> Self {
        SummaryRow {
            dataset: dataset.into(),
            method: method.into(),
            epsilon,
            k,
            metric: metric.into(),
            mean: c.mean,
            stderr: c.se,
            runs: c.n,
        }
    }
}

/// The columns of `summary.csv`.
pub const SUMMARY_COLUMNS: [&str; 9] = [
    "experiment",
    "dataset",
    "method",
    "epsilon",
    "k",
    "metric",
    "mean",
    "stderr",
    "runs",
];

/// Writes `<dir>/summary.csv`.
pub fn write_summary(dir: &Path, experiment: &str, rows: &[SummaryRow]) -> Result<()> {
    let path = dir.join("summary.csv");
    let mut w = csv::Writer::from_path(&path).with_context(|| format!("creating {}", path.display()))?;
    w.write_record(SUMMARY_COLUMNS)?;
    for r in rows {
        w.write_record([
            experiment.to_string(),
            r.dataset.clone(),
            r.method.clone(),
            r.epsilon.map(|e| e.to_string()).unwrap_or_default(),
            r.k.map(|k| k.to_string()).unwrap_or_default(),
            r.metric.clone(),
            format!("{:.6}", r.mean),
            format!("{:.6}", r.stderr),
            r.runs.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator of one run: a stream determined by the base seed, a label and the run's coordinates
/// (reproducible whatever the thread schedule). Xoshiro256++: simulation only, not for releases.
pub fn run_rng(seed: u64, label: &str, parts: &[u64]) -> Xoshiro256PlusPlus {
    let mut h = splitmix(seed);
    for b in label.bytes() {
        h = splitmix(h ^ u64::from(b));
    }
    for &p in parts {
        h = splitmix(h ^ p.rotate_left(17));
    }
    Xoshiro256PlusPlus::seed_from_u64(h)
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template("{msg:>32} [{bar:40}] {pos}/{len} {elapsed}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

// ---------------------------------------------------------------------------------------------------------
// Statistics and computed claims.

/// A mean with its standard error over n runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Mean.
    pub mean: f64,
    /// Standard error of the mean (0 for fewer than two values).
    pub se: f64,
    /// Number of values.
    pub n: usize,
}

impl Cell {
    /// Mean and standard error of `xs`.
    pub fn of(xs: &[f64]) -> Cell {
        let n = xs.len();
        if n == 0 {
            return Cell {
                mean: f64::NAN,
                se: f64::NAN,
                n,
            };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        // Identical values have no spread (the two-pass formula would leave a rounding residue).
        let se = if n < 2 || xs.iter().all(|&x| x == xs[0]) {
            0.0
        } else {
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
            (var / n as f64).sqrt()
        };
        Cell { mean, se, n }
    }

    /// Sample standard deviation.
    pub fn sd(&self) -> f64 {
        self.se * (self.n as f64).sqrt()
    }

    /// "0.123 ± 0.004" with `d` decimals.
    pub fn show(&self, d: usize) -> String {
        format!("{:.d$} ± {:.d$}", self.mean, self.se)
    }
}

/// The z-score of a − b: (mean_a − mean_b) / √(se_a² + se_b²); ±∞ when both are exact and differ, 0 when
/// equal.
pub fn z(a: Cell, b: Cell) -> f64 {
    let d = a.mean - b.mean;
    let s = (a.se * a.se + b.se * b.se).sqrt();
    if s > 0.0 {
        d / s
    } else if d == 0.0 {
        0.0
    } else {
        d.signum() * f64::INFINITY
    }
}

/// The z-score of a cell against a fixed value (a published number): (mean − v) / se.
pub fn z_fixed(a: Cell, v: f64) -> f64 {
    z(a, Cell { mean: v, se: 0.0, n: 0 })
}

/// The threshold of the report's claims: a difference counts when |z| ≥ 3 (two-sided p ≈ 0.003 for one
/// comparison); the z-scores are printed so that a reader can apply another threshold.
pub const Z_CLAIM: f64 = 3.0;

/// A z-score for text: "z = 4.2", "z = ∞".
pub fn show_z(z: f64) -> String {
    if z.is_infinite() {
        format!("z = {}∞", if z < 0.0 { "−" } else { "" })
    } else {
        format!("z = {z:.1}")
    }
}

/// Compares method `a` with method `b` over a grid of budgets in increasing order, from their cells
/// `(ε, a, b)` and whether larger values are better: the budgets where `a` is better (z ≥ `Z_CLAIM`), worse,
/// and not distinguishable, and "from ε = … on" when the budgets where it is better are the end of the grid
/// (budgets where both cells are identical and exact — both at a bound — do not interrupt that end).
pub fn compare(a: &str, b: &str, cells: &[(f64, Cell, Cell)], larger_is_better: bool) -> String {
    let sign = if larger_is_better { 1.0 } else { -1.0 };
    let zs: Vec<(f64, f64, bool)> = cells
        .iter()
        .map(|&(e, x, y)| (e, sign * z(x, y), x.mean == y.mean && x.se == 0.0 && y.se == 0.0))
        .collect();
    let list = |f: &dyn Fn(&(f64, f64, bool)) -> bool| {
        zs.iter()
            .filter(|p| f(p))
            .map(|p| format!("{} ({})", show_eps(p.0), show_z(p.1)))
            .collect::<Vec<_>>()
    };
    let better = list(&|p| p.1 >= Z_CLAIM);
    let worse = list(&|p| p.1 <= -Z_CLAIM);
    let same: Vec<String> = zs
        .iter()
        .filter(|p| p.1.abs() < Z_CLAIM)
        .map(|p| show_eps(p.0))
        .collect();
    // The tail: skip identical cells at the end, then the run of better ones.
    let mut i = zs.len();
    while i > 0 && zs[i - 1].2 {
        i -= 1;
    }
    let end = i;
    while i > 0 && zs[i - 1].1 >= Z_CLAIM {
        i -= 1;
    }
    let mut out = Vec::new();
    if !better.is_empty() {
        let mut s = format!(
            "`{a}` is better than `{b}` (z ≥ {Z_CLAIM}) at ε = {}",
            better.join(", ")
        );
        if i < end && end - i == better.len() {
            s.push_str(&format!(" — from ε = {} on", show_eps(zs[i].0)));
            if end < zs.len() {
                s.push_str(&format!(", both identical from ε = {}", show_eps(zs[end].0)));
            }
        }
        out.push(s);
    }
    if !worse.is_empty() {
        out.push(format!("`{a}` is worse than `{b}` at ε = {}", worse.join(", ")));
    }
    if !same.is_empty() {
        out.push(if better.is_empty() && worse.is_empty() {
            format!("`{a}` and `{b}` are not distinguishable (|z| < {Z_CLAIM}) at any ε of the grid")
        } else {
            format!("they are not distinguishable at ε = {}", same.join(", "))
        });
    }
    format!("{}.", out.join("; "))
}

/// How measured cells compare with published values `(ε, cell, published)`: "k of n cells within 2 s.e. of
/// the published value; outside: ε = …: ours vs published (z), …".
pub fn against_published(cells: &[(f64, Cell, f64)]) -> String {
    let off: Vec<String> = cells
        .iter()
        .filter(|c| z_fixed(c.1, c.2).abs() > 2.0)
        .map(|&(e, c, v)| {
            format!(
                "ε = {}: {:.3} vs {v:.2} ({})",
                show_eps(e),
                c.mean,
                show_z(z_fixed(c, v))
            )
        })
        .collect();
    let mut s = format!(
        "{} of {} cells within 2 s.e. of the published value",
        cells.len() - off.len(),
        cells.len()
    );
    if !off.is_empty() {
        s.push_str(&format!("; outside: {}", off.join("; ")));
    }
    s
}

/// A list for text, "none" when empty.
pub fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// A privacy budget for text and tables: 0.01, 1, 10⁵ → "1e5".
pub fn show_eps(e: f64) -> String {
    if e >= 1e4 {
        format!("{e:.0e}")
    } else {
        format!("{e}")
    }
}

/// Three significant digits.
pub fn sig3(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let d = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.d$}")
}

/// An integer with thousands separators: 36692 → "36,692".
pub fn thousands(x: usize) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------------------------
// Peak memory.

/// The process's peak resident set size in bytes (VmHWM), when the system reports it.
pub fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the peak resident set size to the current one (Linux `clear_refs` 5), so that the next
/// [`peak_rss`] measures one experiment. False when not supported.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// "123 MiB" or "unknown".
pub fn show_bytes(b: Option<u64>) -> String {
    match b {
        Some(b) => format!("{:.0} MiB", b as f64 / (1024.0 * 1024.0)),
        None => "unknown".into(),
    }
}

/// The relative path from folder `from` to `to` (both made absolute, without resolving links; neither
/// needs to exist), with '/' separators.
pub fn relative_link(from: &Path, to: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let (a, b) = (abs(from), abs(to));
    let ac: Vec<_> = a.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = ac.iter().zip(&bc).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); ac.len() - common];
    parts.extend(
        bc[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = run_rng(1, "x", &[2, 3]).next_u64();
        assert_eq!(a, run_rng(1, "x", &[2, 3]).next_u64());
        assert_ne!(a, run_rng(1, "x", &[2, 4]).next_u64());
        assert_ne!(a, run_rng(1, "y", &[2, 3]).next_u64());
        assert_ne!(a, run_rng(2, "x", &[2, 3]).next_u64());
        assert_ne!(run_rng(1, "x", &[3, 2]).next_u64(), a);
    }

    #[test]
    fn cells_z_scores_and_claims() {
        let c = Cell::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(c.mean, 2.5);
        assert!((c.se - (5.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(Cell::of(&[7.0]).se, 0.0);
        let a = Cell {
            mean: 1.0,
            se: 0.3,
            n: 9,
        };
        let b = Cell {
            mean: 0.0,
            se: 0.4,
            n: 9,
        };
        assert!((z(a, b) - 2.0).abs() < 1e-12);
        assert_eq!(
            z_fixed(
                Cell {
                    mean: 1.0,
                    se: 0.0,
                    n: 1
                },
                1.0
            ),
            0.0
        );
        assert_eq!(Cell::of(&[0.95; 7]).se, 0.0);
        let c = |m: f64, se: f64| Cell { mean: m, se, n: 100 };
        let text = compare(
            "local",
            "global",
            &[
                (0.1, c(0.5, 0.1), c(0.5, 0.1)),
                (1.0, c(0.9, 0.01), c(0.5, 0.01)),
                (10.0, c(1.0, 0.0), c(0.8, 0.01)),
                (100.0, c(1.0, 0.0), c(1.0, 0.0)),
            ],
            true,
        );
        assert!(text.contains("from ε = 1 on, both identical from ε = 100"), "{text}");
        assert!(text.contains("not distinguishable at ε = 0.1, 100"), "{text}");
        let worse = compare("a", "b", &[(1.0, c(0.1, 0.01), c(0.5, 0.01))], true);
        assert!(worse.starts_with("`a` is worse than `b` at ε = 1"), "{worse}");
        let lower = compare("a", "b", &[(1.0, c(0.1, 0.01), c(0.5, 0.01))], false);
        assert!(lower.contains("from ε = 1 on"), "{lower}");
        let gap = compare(
            "a",
            "b",
            &[(1.0, c(0.9, 0.01), c(0.5, 0.01)), (2.0, c(0.5, 0.01), c(0.5, 0.01))],
            true,
        );
        assert!(!gap.contains("from"), "{gap}");
        assert_eq!(list_or_none(&[]), "none");
        let p = against_published(&[(1.0, c(0.5, 0.01), 0.5), (2.0, c(0.5, 0.01), 0.6)]);
        assert_eq!(
            p,
            "1 of 2 cells within 2 s.e. of the published value; outside: ε = 2: 0.500 vs 0.60 (z = -10.0)"
        );
        assert_eq!(show_eps(1e5), "1e5");
        assert_eq!(show_eps(0.05), "0.05");
        assert_eq!(thousands(36692), "36,692");
        assert_eq!(thousands(999), "999");
        assert_eq!(sig3(0.01234), "0.0123");
    }

    #[test]
    fn relative_links() {
        let base = std::env::temp_dir().join(format!("dpmo-link-{}", std::process::id()));
        std::fs::create_dir_all(base.join("eval/results/x")).unwrap();
        std::fs::create_dir_all(base.join("build")).unwrap();
        assert_eq!(
            relative_link(&base.join("eval"), &base.join("eval/results/x")),
            "results/x"
        );
        assert_eq!(
            relative_link(&base.join("build"), &base.join("eval/results/x")),
            "../eval/results/x"
        );
        assert_eq!(relative_link(&base.join("build"), &base.join("build")), ".");
        std::fs::remove_dir_all(base).ok();
    }
}
