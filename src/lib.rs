//! # dpmo — differentially private multi-objective selection
//!
//! A `#![no_std]`, allocation-free core. Every private selection is the same pipeline:
//! **score** (a utility, the Pareto score, or a weighted sum) → **dampen** (only with local sensitivity) →
//! **select** (exponential mechanism, permute-and-flip, report-noisy-max).
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod dampen;
mod error;
mod fenwick;
pub mod float;
pub mod generalize;
pub mod graph;
pub mod local;
pub mod multi;
pub mod pareto;
pub mod privacy;
pub mod rng;
pub mod sample;
pub mod select;
pub mod sensitivity;

pub use dampen::{dampen, dampen_shifted, Dampening};
pub use error::Error;
pub use local::{local_dampening_probabilities, select_local_dampening, select_local_dampening_top_k};
pub use multi::{
    privagg_probabilities, privpareto_probabilities, select_privagg, select_privpareto, AggSensitivity,
    ParetoSensitivity,
};
pub use pareto::Dominance;
pub use rng::{Generator, GeneratorKind, GeneratorState};
pub use select::{
    exponential_probabilities, select, select_exponential, select_noisy_max, select_permute_and_flip, select_top_k,
    select_top_k_gumbel, Noise, Selector,
};
pub use sensitivity::{DeltaSource, LocalSensitivity};

/// The largest number of objectives m the multi-objective functions accept.
pub const MAX_OBJECTIVES: usize = 16;
