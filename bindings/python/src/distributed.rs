//! The partition and driver steps of the distributed exact selections (`dpmo.distributed`, used by
//! `dpmo.spark`). Each partition holds some candidates (index into the public list, score); the global best
//! score s* is known (a max aggregation). Both steps flip exactly the coins the core's exact selectors
//! flip: exp(−γ_r) with γ_r = ε (⌊s*/g⌋ − ⌊s_r/g⌋) / (2N) on the grid g = Δ/N of the sensitivity
//! (`dpmo::exact`), so the distributions are the core's.
//!
//! * Permute-and-flip (≡ report-noisy-max with Exponential noise): visiting candidates in a random order and
//!   stopping at the first coin that succeeds returns a uniform element of the set H of candidates whose
//!   coin succeeds, all coins flipped independently (the coins do not depend on the order). So each partition
//!   flips its candidates' coins and reports |H_j| and a uniform element of H_j; the driver picks partition j
//!   with probability |H_j| / Σ|H| and returns its element: a uniform element of H.
//! * Exponential mechanism (≡ report-noisy-max with Gumbel noise), by the core's rejection sampler: a round
//!   proposes a uniform index in [0, N) and keeps it with its coin. The proposals come from a stream every
//!   partition derives identically; each partition flips the coins of the proposals it owns (from its own
//!   stream) and reports the first kept position; the driver takes the smallest. A batch with no kept
//!   proposal is followed by a larger one.

use crate::args::{count_arg, slice1, Floats1, Ints1};
use crate::errors::{check, err_with};
use crate::state::{Rng, StreamKey};
use dpmo::distributed::{choose_weighted, em_partition, pf_partition, Coins};
use dpmo::Error;
use pyo3::prelude::*;

/// The argument checks of both partition steps with Python's messages (the core's checks are the same
/// conditions, reported by status only). Scores reach here through `dpmo.distributed`'s public rule.
fn check_partition(candidates: &[i64], scores: &[f64], best: f64, excluded: &[i64]) -> PyResult<()> {
    if candidates.len() != scores.len() {
        return Err(err_with(
            Error::LengthMismatch,
            "candidates and scores differ in length",
        ));
    }
    sorted_unique(candidates, "candidates")?;
    sorted_unique(excluded, "excluded")?;
    if scores.iter().any(|s| !s.is_finite()) {
        return Err(crate::errors::err(Error::NonFiniteInput));
    }
    let above = candidates
        .iter()
        .zip(scores)
        .any(|(c, &s)| s > best && excluded.binary_search(c).is_err());
    if above {
        return Err(err_with(
            Error::InvalidArgument,
            "a score exceeds the best score s* given",
        ));
    }
    Ok(())
}

fn sorted_unique(v: &[i64], what: &str) -> PyResult<()> {
    if v.windows(2).any(|w| w[0] >= w[1]) {
        return Err(err_with(
            Error::InvalidArgument,
            format!("{what} must be sorted and distinct"),
        ));
    }
    Ok(())
}

/// Partition step of distributed permute-and-flip (`dpmo::distributed::pf_partition`): (|H_j|, a uniform
/// element of H_j or −1). `excluded` (sorted) are candidates already chosen (top-k): their coins are not
/// flipped.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _pf_partition(
    py: Python<'_>,
    key: &Bound<'_, StreamKey>,
    stream: u64,
    candidates: Ints1<'_>,
    scores: Floats1<'_>,
    best: f64,
    sensitivity: f64,
    epsilon: f64,
    excluded: Ints1<'_>,
) -> PyResult<(u64, i64)> {
    let (c, s, x) = (slice1(&candidates), slice1(&scores), slice1(&excluded));
    let coins = check(Coins::new(best, sensitivity, epsilon))?;
    check_partition(&c, &s, best, &x)?;
    let rng = Rng::from_state(key.get().state(stream), key.get().is_reproducible())?;
    let (c, s, x) = (&*c, &*s, &*x);
    rng.with(py, move |g| pf_partition(g, &coins, c, s, x))
}

/// Partition step of one batch of the distributed exponential mechanism
/// (`dpmo::distributed::em_partition`): regenerates the `batch` proposals of `proposal_stream` (uniform in
/// [0, `total`)), flips (from `coin_stream`) the coin of every proposal this partition owns and has not
/// excluded, and returns the first kept (position, candidate), or (−1, −1).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn _em_partition(
    py: Python<'_>,
    key: &Bound<'_, StreamKey>,
    proposal_stream: u64,
    coin_stream: u64,
    total: i64,
    batch: i64,
    candidates: Ints1<'_>,
    scores: Floats1<'_>,
    best: f64,
    sensitivity: f64,
    epsilon: f64,
    excluded: Ints1<'_>,
) -> PyResult<(i64, i64)> {
    let total = count_arg("total", total)?;
    let batch = count_arg("batch", batch)?;
    let (c, s, x) = (slice1(&candidates), slice1(&scores), slice1(&excluded));
    let coins = check(Coins::new(best, sensitivity, epsilon))?;
    check_partition(&c, &s, best, &x)?;
    let k = key.get();
    let mut proposals = k.state(proposal_stream).load().map_err(crate::errors::err)?;
    let rng = Rng::from_state(k.state(coin_stream), k.is_reproducible())?;
    let (c, s, x) = (&*c, &*s, &*x);
    rng.with(py, move |g| {
        em_partition(&mut proposals, g, &coins, total as u64, batch as u64, c, s, x)
    })
}

/// Driver step (`dpmo::distributed::choose_weighted`): index j chosen with probability weights[j] / Σ
/// weights (exact; integer weights ≥ 0, not all zero), from one key of the caller's generator.
#[pyfunction]
pub fn _choose_weighted(py: Python<'_>, rng: &Bound<'_, Rng>, weights: Ints1<'_>) -> PyResult<usize> {
    let w = slice1(&weights);
    let w = w
        .iter()
        .map(|&x| u64::try_from(x).map_err(|_| err_with(Error::InvalidArgument, "weights must be >= 0")))
        .collect::<PyResult<Vec<u64>>>()?;
    if w.iter().try_fold(0u64, |t, &x| t.checked_add(x)).is_none() {
        return Err(err_with(Error::Overflow, "the weights' sum exceeds 2**64"));
    }
    if w.iter().all(|&x| x == 0) {
        return Err(err_with(Error::EmptyInput, "every weight is zero"));
    }
    let w = &w;
    rng.get().with(py, move |g| choose_weighted(g, w))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_pf_partition, m)?)?;
    m.add_function(wrap_pyfunction!(_em_partition, m)?)?;
    m.add_function(wrap_pyfunction!(_choose_weighted, m)?)?;
    m.add_function(wrap_pyfunction!(crate::bounding::_bound_events, m)?)?;
    m.add_function(wrap_pyfunction!(crate::bounding::_value_grid, m)?)?;
    Ok(())
}
