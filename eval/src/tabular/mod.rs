//! The tabular applications: private cost-sensitive trees (DP-MOET, PrivPareto paper §6) and private ID3
//! (Local Dampening paper §5.2), and the experiments reproducing their tables and figures:
//!
//! * `dpmoet-pareto` — PrivPareto paper Table 1 (metric C of DP-MOET-Pareto global/local vs NODP-MOET-Pareto);
//! * `dpmoet-agg` — PrivPareto paper Figure 2 (u_agg = 3·TPR + 2·TNR of DP-MOET-Agg vs NODP and LocalDiffPID3);
//! * `diffpid3` — Local Dampening paper Figure 6 (10-fold cross-validated accuracy of DiffPID3).

pub mod bitset;
pub mod dpmoet;
pub mod id3;
pub mod repro;
pub mod rng;
pub mod tree;

pub use repro::experiments;
