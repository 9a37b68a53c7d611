//! Contribution bounding of raw events (unit, candidate, value): the step that turns events into
//! per-candidate counts and sums of known sensitivity (see `dpmo.bound_contributions`).
//!
//! Per privacy unit: of its distinct candidates keep at most L, chosen uniformly at random; of its events
//! on each kept candidate keep at most C, chosen uniformly at random; clamp each kept value to [lo, hi] and
//! truncate it toward zero onto the grid g = 2^(⌈log₂ max(|lo|, |hi|)⌉ − 20) (so |value| ≤ max(|lo|, |hi|)
//! still). Then per candidate: count = kept events, sum = Σ kept values, summed exactly as integers of g.
//! Adding or removing one unit moves each count by at most C and each sum by at most C · max(|lo|, |hi|)
//! (ℓ∞, what a selection needs), and all counts together by at most L · C (ℓ1).
//!
//! The random choices use the caller's generator, never the data. The events are sorted by (unit,
//! candidate, value) first, so the result depends only on the multiset of events and the generator (not on
//! the order they came in: a Spark task that is retried sees the same multiset).

use crate::args::{count_arg, slice1, Floats1, Ints1};
use crate::errors::err_with;
use crate::state::Rng;
use dpmo::sample::uniform_index;
use dpmo::Error;
use numpy::PyArray1;
use pyo3::prelude::*;

/// Bits of precision of a bounded value: values are multiples of g = 2^(⌈log₂ M⌉ − 20).
const VALUE_BITS: i32 = 20;

/// The grid exponent for bound M > 0: g = 2^k with M ≤ 2^(k + 20).
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

/// The value in grid units: clamped to [lo, hi] (NaN counts as 0 clamped), truncated toward zero.
fn quantise(v: f64, lo: f64, hi: f64, k: i32) -> i64 {
    let v = if v.is_nan() { 0.0 } else { v };
    let c = v.clamp(lo, hi);
    // |c| ≤ 2^(k + 20): the quotient is at most 2^20 in magnitude and exact (a power-of-two scaling).
    (c * (2f64).powi(-k)).trunc() as i64
}

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
    k: i32,
) -> (Vec<i64>, Vec<i64>) {
    // (unit, candidate, value units) of the events on a listed candidate, sorted.
    let mut ev: Vec<(i64, u64, i64)> = units
        .iter()
        .zip(candidates)
        .enumerate()
        .filter(|(_, (_, &c))| c >= 0 && (c as u64) < n as u64)
        .map(|(i, (&u, &c))| (u, c as u64, values.map_or(0, |v| quantise(v[i], lo, hi, k))))
        .collect();
    ev.sort_unstable();
    let mut counts = vec![0i64; n];
    let mut sums = vec![0i64; n];
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    while start < ev.len() {
        let unit = ev[start].0;
        let mut end = start;
        while end < ev.len() && ev[end].0 == unit {
            end += 1;
        }
        // The unit's runs of equal candidates.
        runs.clear();
        let mut s = start;
        while s < end {
            let mut e = s;
            while e < end && ev[e].1 == ev[s].1 {
                e += 1;
            }
            runs.push((s, e));
            s = e;
        }
        // Keep L of them uniformly (a partial Fisher–Yates shuffle).
        let d = runs.len();
        let keep = d.min(max_candidates);
        if keep < d {
            for i in 0..keep {
                let j = i + uniform_index(g, d - i);
                runs.swap(i, j);
            }
        }
        for &(s, e) in &runs[..keep] {
            let slice = &mut ev[s..e];
            let len = slice.len();
            let take = len.min(max_per_candidate);
            if take < len {
                for i in 0..take {
                    let j = i + uniform_index(g, len - i);
                    slice.swap(i, j);
                }
            }
            let c = slice[0].1 as usize;
            counts[c] += take as i64;
            sums[c] += slice[..take].iter().map(|x| x.2).sum::<i64>();
        }
        start = end;
    }
    (counts, sums)
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
    let (u, cand) = (slice1(&units), slice1(&candidates));
    let vals = values.as_ref().map(|v| slice1(v));
    if u.len() != cand.len() || vals.as_ref().is_some_and(|v| v.len() != u.len()) {
        return Err(err_with(
            Error::LengthMismatch,
            "units, candidates and values differ in length",
        ));
    }
    let (u, cand, vals) = (&*u, &*cand, vals.as_deref());
    let (counts, sums) = rng
        .get()
        .with(py, move |g| Ok(bound(g, u, cand, vals, n, l, c, lo, hi, k)))?;
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
