//! # dpmo — differentially private multi-objective selection
//!
//! A `#![no_std]`, allocation-free core. Every private selection is the same pipeline:
//! **score** (a utility, the Pareto score, or a weighted sum) → **dampen** (only with local sensitivity) →
//! **select** (exponential mechanism, permute-and-flip, report-noisy-max). Every selector runs in exact
//! arithmetic by default ([`exact`], [`Arithmetic`]): each output has exactly the probability of the
//! mathematical mechanism, so the ε-DP guarantee holds in the arithmetic that runs.
//!
//! Functions take slices, caller scratch and any [`rand_core::Rng`]; in production use ChaCha20 seeded from
//! the operating system ([`GeneratorState::chacha20`]).
//!
//! ```
//! use dpmo::{select_exponential, GeneratorState};
//! use dpmo::privacy::PrivacyBudget;
//!
//! let mut rng = GeneratorState::chacha20([42; 32]).load()?; // seed from the OS in production
//! let mut budget = PrivacyBudget::new(1.0)?;
//! let counts = [120.0, 95.0, 130.0, 40.0]; // one person changes one count by at most 1
//! budget.charge(0.5)?;
//! let featured = select_exponential(&mut rng, &counts, 1.0, 0.5)?;
//! assert!(featured < 4);
//! assert_eq!(budget.remaining(), 0.5);
//! # Ok::<(), dpmo::Error>(())
//! ```
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod dampen;
pub mod discover;
pub mod distributed;
mod error;
pub mod exact;
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
#[cfg(test)]
mod test_fit;

pub use dampen::{dampen, dampen_shifted, Dampening};
pub use error::Error;
pub use local::{
    local_dampening_probabilities, local_dampening_scratch_len, select_local_dampening, select_local_dampening_top_k,
};
pub use multi::{
    privagg_probabilities, privpareto_probabilities, select_privagg, select_privpareto, AggSensitivity,
    ParetoSensitivity,
};
pub use pareto::Dominance;
pub use rng::{Generator, GeneratorKind, GeneratorState};
pub use select::{
    exponential_probabilities, select, select_exponential, select_noisy_max, select_permute_and_flip, select_top_k,
    select_top_k_gumbel, Arithmetic, Noise, Selector,
};
pub use sensitivity::{DeltaSource, LocalSensitivity};

// Every ```rust block of the Rust page of the documentation is compiled and run as a doctest (the crate ships
// docs/rust.md for this; tests/readme/check.py refuses a rust block in a page not included here).
#[cfg(doctest)]
#[doc = include_str!("../docs/rust.md")]
struct RustPageDoctests;

// The crate's own README (the page crates.io shows) too.
#[cfg(doctest)]
#[doc = include_str!("../README.crate.md")]
struct CrateReadmeDoctests;

/// Not part of the API: the selectors run directly on a generator, without drawing the call's key first
/// ([`rng::call_stream`]), so that a test can script every word they read (the tape proofs of
/// `tests/exact.rs`). Their consumption of the generator then depends on the data: never use them for a
/// release.
#[doc(hidden)]
pub mod testing {
    pub use crate::local::select_local_dampening_on as select_local_dampening;
    pub use crate::select::select_on as select;
    pub use crate::select::top_k_gumbel_on as top_k_gumbel;
    pub use crate::select::top_k_on as top_k;
}

/// The largest number of objectives m the multi-objective functions accept.
pub const MAX_OBJECTIVES: usize = 16;
