//! PrivAgg (PrivPareto paper, §5): private selection by a weighted sum of the objectives.
//!
//! The weighted sum, its sensitivity and δ_agg are exact integers on a grid fitted to Δ_agg (each term
//! floored, each sensitivity term rounded up, both accounted for exactly: see `WeightedGrid` in
//! [`crate::sensitivity::weighted_sum`]), dampened exactly when local. The arithmetic only chooses the
//! selector: exact on the integer scores, or float on the same scores as doubles. δ_agg is evaluated on demand,
//! so there is no table and no `columns`; its saturation distance is the largest of the objectives'
//! (δ_agg = Δ_agg once every δ_i = Δ_i), or `max_distance` when smaller, and at most
//! [`MAX_WALKED_DISTANCE`] when an objective's δ is shared. Objectives with per-candidate δs give δ_agg
//! piecewise constant (at most m + 1 runs), which the dampening walk crosses run by run.
//!
//! **Work.** Each candidate's dampening evaluates δ_agg (m terms) at most once per distance below the
//! saturation distance, and only once per run of per-candidate δs: O(n m²) with per-candidate δs, at most
//! n m · min(T, columns) with tables (the size of the tables), and n m · 2048 with functions or shared δs
//! ([`MAX_WALKED_DISTANCE`]).

use super::{privagg_iso, round_epsilon, shape, size, take, MultiScratchLen};
use crate::dampen::exact::IntDelta;
use crate::dampen::{dampen_int_each, Dampening};
use crate::select::exact::{as_words, load_int, store_int};
use crate::select::{exponential_probabilities, iso, select_top_k, top_k_int, Arithmetic, Noise, Selector};
use crate::sensitivity::weighted_sum::{weighted_saturation, WeightedGrid};
use crate::sensitivity::{LocalSensitivity, MAX_WALKED_DISTANCE};
use crate::{Error, MAX_OBJECTIVES};
use rand_core::Rng;

/// Which sensitivity PrivAgg uses.
#[derive(Clone, Copy)]
pub enum AggSensitivity<'a> {
    /// Global: Δ_agg = Σ |w_i| Δ_i (Thm. 5.3) from each objective's global sensitivity Δ_i.
    Global(&'a [f64]),
    /// Local: δ_agg(x, t, r) = Σ |w_i| δ_i(x, t, r) (Thm. 5.4), then `dampening`. Each Δ_i is
    /// `deltas[i].global()`.
    Local {
        /// One sensitivity per objective, each for the n candidates.
        deltas: &'a [LocalSensitivity<'a>],
        /// 0: saturate δ_agg where every δ_i is saturated (nothing is lost); otherwise saturate it at this
        /// distance if that is earlier. Never beyond [`MAX_WALKED_DISTANCE`] when an objective's δ is shared.
        max_distance: usize,
        /// Plain or shifted dampening.
        dampening: Dampening,
    },
}

/// Scratch lengths for [`select_privagg`] and [`privagg_probabilities`] with n candidates and m
/// objectives (either sensitivity, either arithmetic).
pub fn privagg_scratch_len(n: usize, m: usize) -> Result<MultiScratchLen, Error> {
    if m == 0 {
        return Err(Error::InvalidArgument);
    }
    // scores 2n (integers in exact arithmetic, u_agg then dampened doubles in float), top-k work copy 2n;
    // top-k index map n, permutation n
    Ok(MultiScratchLen {
        values: size(&[(n, 4)])?,
        indices: size(&[(n, 2)])?,
    })
}

/// The objectives' Δ_i: `globals` (global) or each δ_i's Δ (local).
fn globals_of<'a>(
    sensitivity: &AggSensitivity<'_>,
    m: usize,
    buf: &'a mut [f64; MAX_OBJECTIVES],
) -> Result<&'a [f64], Error> {
    match *sensitivity {
        AggSensitivity::Global(g) => {
            if g.len() != m {
                return Err(Error::LengthMismatch);
            }
            buf[..m].copy_from_slice(g);
        }
        AggSensitivity::Local { deltas, .. } => {
            if deltas.len() != m {
                return Err(Error::LengthMismatch);
            }
            for (b, d) in buf.iter_mut().zip(deltas) {
                *b = d.global();
            }
        }
    }
    Ok(&buf[..m])
}

/// The saturation distance of δ_agg: the objectives' largest (δ_agg = Δ_agg from there on), or
/// `max_distance` when smaller, and at most [`MAX_WALKED_DISTANCE`] when an objective's δ is shared (no
/// closed form in t: each candidate's dampening walks it distance by distance; a function's δ is already
/// saturated there by [`LocalSensitivity`]).
fn saturation_of(deltas: &[LocalSensitivity<'_>], max_distance: usize) -> usize {
    let mut t = weighted_saturation(deltas).max(1);
    if max_distance > 0 {
        t = t.min(max_distance);
    }
    if deltas.iter().any(|d| d.is_shared()) {
        t = t.min(MAX_WALKED_DISTANCE);
    }
    t
}

/// δ′_agg on the exact grid, as the dampening stage reads it.
struct ExactAggDelta<'a> {
    grid: WeightedGrid,
    weights: &'a [f64],
    deltas: &'a [LocalSensitivity<'a>],
    saturation: usize,
}

impl IntDelta for ExactAggDelta<'_> {
    fn units(&self) -> u64 {
        self.grid.units()
    }
    fn saturation(&self) -> usize {
        self.saturation
    }
    fn run(&self, r: usize, t: usize) -> Result<Option<(u64, usize)>, Error> {
        // Constant while no objective changes: each per-candidate δ_i is c_i before its saturation T_i and
        // Δ_i from there on.
        let mut end = self.saturation;
        for d in self.deltas {
            if d.constant_below_saturation(r).is_none() {
                return Ok(None);
            }
            if d.saturation() > t {
                end = end.min(d.saturation());
            }
        }
        Ok(Some((self.grid.delta(self.weights, self.deltas, r, t)?, end)))
    }
    fn delta(&self, r: usize, t: usize) -> Result<u64, Error> {
        self.grid.delta(self.weights, self.deltas, r, t)
    }
}

/// Exact scores, each passed to `write(r, S_r)`; returns their sensitivity in grid units.
fn exact_scores(
    utilities: &[f64],
    weights: &[f64],
    sensitivity: &AggSensitivity<'_>,
    mut write: impl FnMut(usize, i128),
) -> Result<u64, Error> {
    let m = weights.len();
    let n = utilities.len() / m;
    let mut buf = [0.0; MAX_OBJECTIVES];
    let grid = WeightedGrid::new(weights, globals_of(sensitivity, m, &mut buf)?)?;
    let u = |r: usize| grid.utility(&utilities[r * m..(r + 1) * m], weights);
    match *sensitivity {
        AggSensitivity::Global(_) => {
            for r in 0..n {
                write(r, u(r));
            }
            Ok(grid.units())
        }
        AggSensitivity::Local {
            deltas,
            max_distance,
            dampening,
        } => {
            let d = ExactAggDelta {
                grid,
                weights,
                deltas,
                saturation: saturation_of(deltas, max_distance),
            };
            dampen_int_each(n, u, &d, dampening, write)
        }
    }
}

/// The integer scores exact PrivAgg selects from (one round): the exact weighted sum on its grid, dampened
/// exactly when local (see the module documentation), written to `out[..n]`; returns their sensitivity in
/// the same units. The exact mechanism picks r with probability ∝ exp(−ε (max S − S_r) / (2 · units)). For
/// audits and tests. Errors as [`select_privagg`]; nothing is written to `out` on error.
pub fn privagg_exact_scores(
    utilities: &[f64],
    weights: &[f64],
    sensitivity: AggSensitivity<'_>,
    out: &mut [i128],
) -> Result<u64, Error> {
    let n = shape(utilities, weights.len())?;
    check_local(&sensitivity, n)?;
    if out.len() < n {
        return Err(Error::LengthMismatch);
    }
    if !weights.iter().all(|w| w.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    if let AggSensitivity::Local { deltas, .. } = sensitivity {
        if deltas.iter().any(|d| d.is_fallible()) {
            // A caller function may fail part-way: evaluate everything once first.
            exact_scores(utilities, weights, &sensitivity, |_, _| {})?;
        }
    }
    exact_scores(utilities, weights, &sensitivity, |r, s| out[r] = s)
}

fn check_local(sensitivity: &AggSensitivity<'_>, n: usize) -> Result<(), Error> {
    if let AggSensitivity::Local { deltas, .. } = *sensitivity {
        if deltas.iter().any(|d| d.len() != n) {
            return Err(Error::LengthMismatch);
        }
    }
    Ok(())
}

/// PrivAgg: picks k = `out.len()` candidates without replacement by `selector` at ε/k per round over
/// u_agg = Σ w_i u_i (weights of any sign), with global (Thm. 5.3) or local (Thm. 5.4, dampened) sensitivity,
/// in `arithmetic`. ε-DP in total. u_agg does not depend on the candidate set, so it is computed once.
/// Writes the chosen indices in pick order. Scratch: [`privagg_scratch_len`]. O(n m + k n) (plus the
/// dampening walk when local).
#[allow(clippy::too_many_arguments)]
pub fn select_privagg<R: Rng + ?Sized>(
    rng: &mut R,
    utilities: &[f64],
    weights: &[f64],
    sensitivity: AggSensitivity<'_>,
    selector: Selector,
    epsilon: f64,
    out: &mut [usize],
    mut values: &mut [f64],
    mut indices: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    // One key from the caller's generator; every round samples from the call's stream.
    let rng = &mut crate::rng::call_stream(rng);
    let m = weights.len();
    let n = shape(utilities, m)?;
    round_epsilon(epsilon, out.len(), n)?;
    check_local(&sensitivity, n)?;
    if arithmetic != Arithmetic::Float && selector == Selector::NoisyMax(Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    let need = privagg_scratch_len(n, m)?;
    if values.len() < need.values || indices.len() < need.indices {
        return Err(Error::ScratchTooSmall);
    }
    if !weights.iter().all(|w| w.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    if arithmetic == Arithmetic::Isochronous {
        // Every check on public arguments first; the data is read by constant-time code only.
        let mut buf = [0.0; MAX_OBJECTIVES];
        let grid = WeightedGrid::new(weights, globals_of(&sensitivity, m, &mut buf)?)?;
        let (saturation, units) = match sensitivity {
            AggSensitivity::Global(_) => (0, grid.units()),
            AggSensitivity::Local {
                deltas,
                max_distance,
                dampening,
            } => (
                saturation_of(deltas, max_distance),
                match dampening {
                    Dampening::Plain => crate::dampen::exact::PLAIN_UNITS,
                    Dampening::Shifted => grid.units(),
                },
            ),
        };
        let run = iso::isochronous_run_epsilon(selector, epsilon, n, out.len())?;
        let scale = iso::IntScale::new(run, units)?;
        let words = as_words(take(&mut values, 2 * n)?);
        privagg_iso::iso_scores(utilities, weights, &sensitivity, grid, saturation, words)?;
        let map = take(&mut indices, n)?;
        iso::top_k_int(rng, selector, words, scale, out, map, take(&mut indices, n)?);
        return Ok(());
    }
    let scores = take(&mut values, 2 * n)?;
    let work = take(&mut values, 2 * n)?;
    let map = take(&mut indices, n)?;
    let perm = take(&mut indices, n)?;
    let words = as_words(scores);
    let units = exact_scores(utilities, weights, &sensitivity, |r, s| store_int(words, r, s))?;
    match arithmetic {
        Arithmetic::Exact | Arithmetic::Isochronous => {
            top_k_int(rng, selector, words, units, epsilon, out, as_words(work), map, perm)
        }
        Arithmetic::Float => {
            // The same scores as doubles of sensitivity 1 (relative to the best), for the float selectors.
            let (unit_scores, rest) = work.split_at_mut(n);
            as_unit_scores(words, units, unit_scores);
            let (copy, _) = rest.split_at_mut(n);
            select_top_k(
                rng,
                selector,
                unit_scores,
                1.0,
                epsilon,
                out,
                copy,
                map,
                perm,
                arithmetic,
            )
        }
    }
}

/// Integer scores (two words each, `units` per unit of sensitivity) as doubles of sensitivity 1, relative
/// to the largest, into `out[..n]`.
fn as_unit_scores(words: &[u64], units: u64, out: &mut [f64]) {
    let best = (0..out.len()).map(|r| load_int(words, r)).max().unwrap_or(0);
    for (r, o) in out.iter_mut().enumerate() {
        *o = -((best - load_int(words, r)) as f64 / units as f64);
    }
}

/// Output probabilities of PrivAgg (one pick) with the exponential mechanism, computed in floating point
/// from the exact scores ([`privagg_exact_scores`]). Writes n probabilities.
pub fn privagg_probabilities(
    utilities: &[f64],
    weights: &[f64],
    sensitivity: AggSensitivity<'_>,
    epsilon: f64,
    out: &mut [f64],
    mut values: &mut [f64],
) -> Result<(), Error> {
    let m = weights.len();
    let n = shape(utilities, m)?;
    round_epsilon(epsilon, 1, n)?;
    check_local(&sensitivity, n)?;
    if out.len() < n {
        return Err(Error::LengthMismatch);
    }
    if values.len() < privagg_scratch_len(n, m)?.values {
        return Err(Error::ScratchTooSmall);
    }
    if !weights.iter().all(|w| w.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    let words = as_words(take(&mut values, 2 * n)?);
    let units = exact_scores(utilities, weights, &sensitivity, |r, s| store_int(words, r, s))?;
    let unit_scores = take(&mut values, n)?;
    as_unit_scores(words, units, unit_scores);
    exponential_probabilities(unit_scores, 1.0, epsilon, out)
}
