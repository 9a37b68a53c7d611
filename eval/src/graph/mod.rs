//! The graph experiments on SNAP Enron: DP-MoTkIN (PrivPareto paper §7), PrivTopk with EBC (Local Dampening
//! paper §5.1, §6.1) and privacy for the protected (Kearns et al., PNAS 2016, with its SI).
//!
//! Every repeated run draws from its own Xoshiro256++ stream derived from (base seed, experiment, setting,
//! run index) by [`run_rng`], so the results do not depend on how rayon schedules the runs.

pub mod infection;
pub mod motkin;
pub mod privtopk;
pub mod protected;

use crate::data::snap::Graph;
use crate::experiments::{Context, Experiment};
use anyhow::{ensure, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The graph experiments, in report order.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            name: "motkin-pareto",
            about: "DP-MoTkIN-Pareto global/local on Enron, metric C (PrivPareto paper, Table 2)",
            run: motkin::run_pareto,
        },
        Experiment {
            name: "motkin-agg",
            about: "DP-MoTkIN-Agg global/local on Enron, recall of the top-5 (PrivPareto paper, Figure 3)",
            run: motkin::run_agg,
        },
        Experiment {
            name: "privtopk-ebc",
            about: "Global/Local/ShiftedLocal PrivTopk with EBC on Enron (Local Dampening paper, Figure 5)",
            run: privtopk::run,
        },
        Experiment {
            name: "protected-search",
            about: "SFS / SearchCom / PTarget vs Target on Enron with infected subpopulations (Kearns et al.)",
            run: protected::run,
        },
    ]
}

/// Enron as the loader reads it, checked against the figures of `../shared/data/README.md`.
pub fn load_enron(ctx: &Context) -> Result<Graph> {
    let g = Graph::load(&ctx.data.join("enron/Email-Enron.txt"))?;
    ensure!(
        (g.node_count(), g.edge_count(), g.max_degree()) == (36_692, 183_831, 1_383),
        "Enron should have 36,692 nodes, 183,831 edges and maximum degree 1,383; read {}, {}, {}",
        g.node_count(),
        g.edge_count(),
        g.max_degree()
    );
    Ok(g)
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator of one run: a stream determined by the base seed, a label, a setting index and the run
/// index (reproducible whatever the thread schedule). Xoshiro256++: simulation only, not for releases.
pub fn run_rng(seed: u64, label: &str, setting: u64, run: u64) -> Xoshiro256PlusPlus {
    let mut h = splitmix(seed);
    for b in label.bytes() {
        h = splitmix(h ^ u64::from(b));
    }
    h = splitmix(h ^ setting);
    h = splitmix(h ^ run.rotate_left(32));
    Xoshiro256PlusPlus::seed_from_u64(h)
}

/// Mean and standard error of the mean (0 for fewer than two values).
pub fn mean_se(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// Mean and sample standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let (m, se) = mean_se(xs);
    (m, se * (xs.len() as f64).sqrt())
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: usize, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template("{msg:>28} [{bar:40}] {pos}/{len} {elapsed}") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

/// A number with `d` decimals.
pub fn f(x: f64, d: usize) -> String {
    format!("{x:.d$}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a = run_rng(1, "x", 2, 3).next_u64();
        assert_eq!(a, run_rng(1, "x", 2, 3).next_u64());
        assert_ne!(a, run_rng(1, "x", 2, 4).next_u64());
        assert_ne!(a, run_rng(1, "y", 2, 3).next_u64());
        assert_ne!(a, run_rng(2, "x", 2, 3).next_u64());
    }

    #[test]
    fn mean_and_standard_error() {
        let (m, se) = mean_se(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((se - (5.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(mean_se(&[7.0]), (7.0, 0.0));
    }
}
