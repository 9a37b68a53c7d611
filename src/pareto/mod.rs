//! The multi-objective **score** stage of PrivPareto (PrivPareto paper, §4): dominance, the Pareto score
//! PS (Def. 4.3) and its admissible sensitivity function δ^PS (Def. 4.5).
//!
//! Utilities are an n × m row-major array (`utilities[r * m + i]` = u_i(x, r), larger is better), with
//! 1 ≤ m ≤ [`crate::MAX_OBJECTIVES`]. Work space that grows with n is supplied by the caller; each function
//! has a companion reporting the lengths it needs. Nothing is written to an output on error.
//!
//! The global sensitivity of PS is n − 1 ([`pareto_global_sensitivity`]), n being the number of
//! *candidates*: a score lies in [−(n − 1), 0].

mod bits;
mod count;
mod dc;
pub(crate) mod delta;
mod dominance;
mod radix;
mod score;
pub(crate) mod walk;

pub(crate) use count::self_scratch_len;
pub use delta::{
    pareto_sensitivity, pareto_sensitivity_naive, pareto_sensitivity_scratch_len, pareto_sensitivity_table,
};
pub use dominance::Dominance;
pub(crate) use score::dominator_counts;
pub use score::{pareto_scores, pareto_scores_naive, pareto_scores_scratch_len};

use crate::{Error, MAX_OBJECTIVES};

/// Lengths of the two caller scratch slices a function of this module needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct ScratchLen {
    /// Length of the `usize` scratch (sort orders, counts, the Fenwick tree).
    pub indices: usize,
    /// Length of the `f64` scratch (per-candidate, per-objective running sums).
    pub values: usize,
}

/// The global sensitivity of the Pareto score over n candidates, n − 1 (PrivPareto paper, §4.2): a score
/// ranges over [−(n − 1), 0] and one record can move it across the whole range.
///
/// Errors: n < 2 → [`Error::EmptyInput`] for n = 0 and [`Error::InvalidArgument`] for n = 1 (Δ = 0 is not a
/// valid sensitivity; with one candidate there is nothing to choose privately).
pub fn pareto_global_sensitivity(n: usize) -> Result<f64, Error> {
    match n {
        0 => Err(Error::EmptyInput),
        1 => Err(Error::InvalidArgument),
        _ => Ok((n - 1) as f64),
    }
}

/// Validates an n × m utility array and returns n.
pub(crate) fn check_utilities(utilities: &[f64], m: usize) -> Result<usize, Error> {
    if m == 0 {
        return Err(Error::InvalidArgument);
    }
    if m > MAX_OBJECTIVES {
        return Err(Error::CapacityExceeded);
    }
    if !utilities.len().is_multiple_of(m) {
        return Err(Error::LengthMismatch);
    }
    let n = utilities.len() / m;
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    if !utilities.iter().all(|u| u.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    Ok(n)
}
