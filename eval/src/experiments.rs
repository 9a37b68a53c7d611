//! The registry of experiments, in report order. Adding an experiment is one new module (which defines a
//! `pub const EXPERIMENT: Experiment`) and one line here.

use crate::harness::Experiment;
use crate::{anonymize, graph, tabular};

/// Every experiment, in report order.
pub const ALL: &[&Experiment] = &[
    &graph::motkin_pareto::EXPERIMENT,
    &graph::motkin_agg::EXPERIMENT,
    &graph::privtopk::EXPERIMENT,
    &graph::protected::EXPERIMENT,
    &tabular::dpmoet_pareto::EXPERIMENT,
    &tabular::dpmoet_agg::EXPERIMENT,
    &tabular::diffpid3::EXPERIMENT,
    &anonymize::generalize_adult::EXPERIMENT,
];

/// The experiment named `name`.
pub fn find(name: &str) -> Option<&'static Experiment> {
    ALL.iter().copied().find(|e| e.name == name)
}
