//! # dpmo — differentially private multi-objective selection
//!
//! A `#![no_std]`, allocation-free core. Every private selection is the same pipeline:
//! **score** (a utility, the Pareto score, or a weighted sum) → **dampen** (only with local sensitivity) →
//! **select** (exponential mechanism, permute-and-flip, report-noisy-max).
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod error;
mod fenwick;
mod float;
pub mod pareto;
pub mod privacy;
pub mod sensitivity;

pub use error::Error;

/// The largest number of objectives m the multi-objective functions accept.
pub const MAX_OBJECTIVES: usize = 16;
