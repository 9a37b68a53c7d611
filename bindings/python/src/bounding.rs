//! Contribution bounding of raw events (unit, candidate, value): the step that turns events into
//! per-candidate counts and sums of known sensitivity (see `dpmo.bound_contributions`).
//!
//! The bounding itself is the core's (`dpmo::discover::bound`, shared with the C ABI's
//! `dpmo_bound_events`): per privacy unit, of its distinct candidates keep at most L, chosen uniformly at
//! random; of its events on each kept candidate keep at most C, chosen uniformly at random; clamp each kept
//! value to [lo, hi] (NaN counts as 0) and truncate it toward zero onto the grid
//! g = 2^(⌈log₂ max(|lo|, |hi|)⌉ − 20). Then per candidate: count = kept events, sum = Σ kept values, summed
//! exactly as integers of g. Adding or removing one unit moves each count by at most C and each sum by at
//! most C · max(|lo|, |hi|) (ℓ∞, what a selection needs), and all counts together by at most L · C (ℓ1).
//!
//! The random choices of a unit come from its own stream (ChaCha20 keyed by 32 bytes of the caller's
//! generator, the unit as the stream number), never from the data or from other units: the other units'
//! choices are identical with and without any one unit. The events are sorted by (unit, candidate, value)
//! first, so the result depends only on the multiset of events and the generator (not on the order they
//! came in: a Spark task that is retried sees the same multiset). This module only filters the events to
//! the public candidate list and lays the core's per-item totals out as dense arrays.

use crate::args::{count_arg, slice1, Floats1, Ints1};
use crate::errors::err_with;
use crate::state::Rng;
use dpmo::discover::{self, Bounds, Contribution, Events, ItemTotal};
use dpmo::Error;
use numpy::PyArray1;
use pyo3::prelude::*;

/// Bits of precision of a bounded value: values are multiples of g = 2^(⌈log₂ M⌉ − 20).
const VALUE_BITS: i32 = discover::bound::VALUE_BITS;

/// The grid exponent for bound M > 0: g = 2^k with M ≤ 2^(k + 20) (the core's rule).
fn grid_exponent(m: f64) -> i32 {
    let mut k = m.log2().ceil() as i32 - VALUE_BITS;
    // Guard against log2 rounding: make sure M ≤ 2^(k + 20) and M > 2^(k + 19).
    while m > (2f64).powi(k + VALUE_BITS) {
        k += 1;
    }
    while k > -1074 && m <= (2f64).powi(k + VALUE_BITS - 1) {
        k -= 1;
    }
    k
}

/// max(|lo|, |hi|) must be 0 or within [2^-600, 2^600], so that the grid and its inverse are normal doubles.
fn check_magnitude(m: f64) -> PyResult<()> {
    if m != 0.0 && !((2f64).powi(-600)..=(2f64).powi(600)).contains(&m) {
        return Err(err_with(
            Error::InvalidArgument,
            "max(|lo|, |hi|) must be 0 or within [2**-600, 2**600]",
        ));
    }
    Ok(())
}

/// The per-candidate counts and sums (in grid units) of the events on the public candidates [0, n),
/// bounded by the core. Events on other candidates are dropped first.
#[allow(clippy::too_many_arguments)]
pub fn bound(
    g: &mut dpmo::Generator,
    units: &[i64],
    candidates: &[i64],
    values: Option<&[f64]>,
    n: usize,
    max_candidates: usize,
    max_per_candidate: usize,
    lo: f64,
    hi: f64,
) -> Result<(Vec<i64>, Vec<i64>), Error> {
    let keep: Vec<usize> = (0..units.len())
        .filter(|&i| candidates[i] >= 0 && (candidates[i] as u64) < n as u64)
        .collect();
    let mut counts = vec![0i64; n];
    let mut sums = vec![0i64; n];
    // No event on the list is bounded too (nothing kept): the generator advances by the call's one key
    // whatever the events.
    // Unit ids as 64-bit patterns (a bijection); candidates are their indices in the public list.
    let us: Vec<u64> = keep.iter().map(|&i| units[i] as u64).collect();
    let is: Vec<u64> = keep.iter().map(|&i| candidates[i] as u64).collect();
    let vs: Option<Vec<f64>> = values.map(|v| keep.iter().map(|&i| v[i]).collect());
    // A unit has at most n distinct candidates and at most `events` events on one: larger bounds keep
    // everything, as these do.
    let bounds = Bounds {
        max_items: max_candidates.min(n),
        max_per_item: max_per_candidate.min(us.len().max(1)),
        clamp: vs.as_ref().map(|_| (lo, hi)),
    };
    let events = Events {
        units: &us,
        items: &is,
        values: vs.as_deref(),
    };
    let mut scratch = vec![Contribution::default(); us.len()];
    let mut b = discover::bound(g, &events, &bounds, &mut scratch)?;
    let mut totals = vec![ItemTotal::default(); us.len()];
    let k = b.totals(&mut totals)?;
    for t in &totals[..k] {
        counts[t.item as usize] = t.events as i64;
        sums[t.item as usize] = t.sum;
    }
    Ok((counts, sums))
}

/// Counts, sums in grid units, and the grid unit.
type Bounded<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, f64);

/// Native step of `dpmo.bound_contributions`: returns (counts, sums in grid units, grid unit g). Events
/// whose candidate index is outside [0, n) are dropped (not on the public list).
#[pyfunction]
#[pyo3(signature = (rng, units, candidates, values, n, max_candidates, max_per_candidate, lo, hi))]
#[allow(clippy::too_many_arguments)]
pub fn _bound_events<'py>(
    py: Python<'py>,
    rng: &Bound<'py, Rng>,
    units: Ints1<'py>,
    candidates: Ints1<'py>,
    values: Option<Floats1<'py>>,
    n: i64,
    max_candidates: i64,
    max_per_candidate: i64,
    lo: f64,
    hi: f64,
) -> PyResult<Bounded<'py>> {
    let n = count_arg("n", n)?;
    let l = count_arg("max_candidates", max_candidates)?;
    let c = count_arg("max_per_candidate", max_per_candidate)?;
    if l == 0 || c == 0 {
        return Err(err_with(
            Error::InvalidArgument,
            "max_candidates and max_per_candidate must be >= 1",
        ));
    }
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return Err(err_with(Error::InvalidArgument, "bounds must be finite with lo <= hi"));
    }
    let m = lo.abs().max(hi.abs());
    check_magnitude(m)?;
    let k = if m > 0.0 { grid_exponent(m) } else { 0 };
    if l.min(n) > discover::MAX_ITEMS_PER_UNIT {
        return Err(err_with(
            Error::InvalidArgument,
            "max_candidates above 2**20 (with more candidates than that)",
        ));
    }
    let (u, cand) = (slice1(&units), slice1(&candidates));
    let vals = values.as_ref().map(|v| slice1(v));
    if u.len() != cand.len() || vals.as_ref().is_some_and(|v| v.len() != u.len()) {
        return Err(err_with(
            Error::LengthMismatch,
            "units, candidates and values differ in length",
        ));
    }
    let (u, cand, vals) = (&*u, &*cand, vals.as_deref());
    let (counts, sums) = rng.get().with(py, move |g| bound(g, u, cand, vals, n, l, c, lo, hi))?;
    Ok((
        PyArray1::from_vec(py, counts),
        PyArray1::from_vec(py, sums),
        (2f64).powi(k),
    ))
}

/// The value grid g of bounds [lo, hi] (what `_bound_events` returns as its third value).
#[pyfunction]
pub fn _value_grid(lo: f64, hi: f64) -> PyResult<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return Err(err_with(Error::InvalidArgument, "bounds must be finite with lo <= hi"));
    }
    let m = lo.abs().max(hi.abs());
    check_magnitude(m)?;
    Ok(if m > 0.0 { (2f64).powi(grid_exponent(m)) } else { 1.0 })
}
