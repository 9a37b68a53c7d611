//! The multi-objective mechanisms end to end: PrivPareto and PrivAgg (PrivPareto paper, §§4–5), each with
//! global or local sensitivity, any selector, and top-k without replacement.
//!
//! * **PrivPareto, global**: Pareto score → select with Δ = n − 1 (n = candidates).
//! * **PrivPareto, local**: Pareto score → dampen with δ^PS (Def. 4.5) → select with Δ = 1.
//! * **PrivAgg, global**: u_agg = Σ w_i u_i → select with Δ_agg = Σ |w_i| Δ_i (Thm. 5.3).
//! * **PrivAgg, local**: u_agg → dampen with δ_agg = Σ |w_i| δ_i (Thm. 5.4) → select with Δ = 1.
//!
//! Top-k runs k rounds at ε/k each (sequential composition). The Pareto score depends on the candidate set,
//! so each round re-scores the remaining candidates among themselves (the k-th pick scores n − k + 1
//! candidates, with Δ = n − k); the weighted sum does not, so PrivAgg scores once.
//!
//! Work space is two caller slices (`values` of f64, `indices` of usize) whose lengths the `*_scratch_len`
//! functions report; nothing is allocated, and nothing is written to `out` on error.

mod privagg;
mod privagg_iso;
mod privpareto;

pub use privagg::{privagg_exact_scores, privagg_probabilities, privagg_scratch_len, select_privagg, AggSensitivity};
pub use privpareto::{
    privpareto_distance_cap, privpareto_probabilities, privpareto_saturation, privpareto_scratch_len,
    select_privpareto, ParetoSensitivity,
};

use crate::Error;

/// Lengths of the two scratch slices a multi-objective mechanism needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiScratchLen {
    /// Number of f64 in the `values` scratch.
    pub values: usize,
    /// Number of usize in the `indices` scratch.
    pub indices: usize,
}

/// Σ of the products, or [`Error::Overflow`].
fn size(terms: &[(usize, usize)]) -> Result<usize, Error> {
    terms.iter().try_fold(0usize, |acc, &(a, b)| {
        a.checked_mul(b).and_then(|p| acc.checked_add(p)).ok_or(Error::Overflow)
    })
}

/// Splits `len` elements off the front of a mutable slice.
fn take<'a, T>(slice: &mut &'a mut [T], len: usize) -> Result<&'a mut [T], Error> {
    if slice.len() < len {
        return Err(Error::ScratchTooSmall);
    }
    let (head, tail) = core::mem::take(slice).split_at_mut(len);
    *slice = tail;
    Ok(head)
}

/// Validates the shape n × m of `utilities` (1 ≤ m ≤ 16, n ≥ 1) and returns n. The values are checked
/// separately ([`finite`]), after every argument: a status that depends on the data must never be decided by
/// an argument error that follows it.
fn shape(utilities: &[f64], m: usize) -> Result<usize, Error> {
    if m == 0 {
        return Err(Error::InvalidArgument);
    }
    if m > crate::MAX_OBJECTIVES {
        return Err(Error::CapacityExceeded);
    }
    if !utilities.len().is_multiple_of(m) {
        return Err(Error::LengthMismatch);
    }
    match utilities.len() / m {
        0 => Err(Error::EmptyInput),
        n => Ok(n),
    }
}

/// [`Error::NonFiniteInput`] when a utility is NaN or infinite (a property of the data).
/// Validates ε and k against n and returns the per-round budget ε/k.
fn round_epsilon(epsilon: f64, k: usize, n: usize) -> Result<f64, Error> {
    crate::select::per_round_epsilon(epsilon, k, n)
}
