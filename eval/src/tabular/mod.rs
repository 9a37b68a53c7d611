//! The tabular applications — private cost-sensitive trees (DP-MOET, PrivPareto paper §6) and private ID3
//! (Local Dampening paper §5.2) — and their experiments, on any classification table:
//!
//! * `dpmoet-pareto` — PrivPareto paper Table 1 (metric C of DP-MOET-Pareto global/local vs NODP-MOET-Pareto);
//! * `dpmoet-agg` — PrivPareto paper Figure 2 (u_agg = 3·TPR + 2·TNR of DP-MOET-Agg vs NODP and LocalDiffPID3);
//! * `diffpid3` — Local Dampening paper Figure 6 (10-fold cross-validated accuracy of DiffPID3).

pub mod bitset;
pub mod diffpid3;
pub mod dpmoet;
pub mod dpmoet_agg;
pub mod dpmoet_pareto;
pub mod id3;
pub mod rng;
pub mod tree;

use crate::data::TableData;

/// What `dpmo-eval dataset --table` prints.
pub fn describe(d: &TableData) -> String {
    let t = &d.table;
    let mut s = format!(
        "{}{}\n",
        t.describe(),
        if d.bundled.is_some() {
            " (bundled; published shape checked)"
        } else {
            ""
        }
    );
    for a in &t.attributes {
        let kind = if a.numeric.is_some() {
            format!("continuous, {} bins for ID3", a.cardinality())
        } else {
            format!("discrete, {} values", a.cardinality())
        };
        s.push_str(&format!("  {:<24} {kind}\n", a.name));
    }
    s
}

/// The majority-class accuracy of a table (the accuracy of a constant classifier).
pub fn majority(d: &TableData) -> f64 {
    let p = d.table.positives() as f64 / d.table.len() as f64;
    p.max(1.0 - p)
}
