//! PrivAgg (PrivPareto paper, §5): private selection by a weighted sum of the objectives.

use super::{round_epsilon, shape, size, take, MultiScratchLen};
use crate::dampen::{dampen_with, Dampening};
use crate::select::{exponential_probabilities, select_top_k, Selector};
use crate::sensitivity::weighted_sum::{weighted_global_sensitivity, weighted_sensitivity_table, weighted_sum};
use crate::sensitivity::{DeltaSource, LocalSensitivity};
use crate::Error;
use rand_core::Rng;

/// Which sensitivity PrivAgg uses.
#[derive(Clone, Copy)]
pub enum AggSensitivity<'a> {
    /// Global: Δ_agg = Σ |w_i| Δ_i (Thm. 5.3) from each objective's global sensitivity Δ_i.
    Global(&'a [f64]),
    /// Local: δ_agg(x, t, r) = Σ |w_i| δ_i(x, t, r) (Thm. 5.4), tabulated for t < `columns` (Δ_agg beyond),
    /// then `dampening`. Each Δ_i is `deltas[i].global()`.
    Local {
        /// One sensitivity per objective, each for the n candidates.
        deltas: &'a [LocalSensitivity<'a>],
        /// Distances of δ_agg tabulated before saturation (≥ 1); `weighted_saturation(deltas)` loses nothing.
        columns: usize,
        /// Plain or shifted dampening.
        dampening: Dampening,
    },
}

/// Scratch lengths for [`select_privagg`] and [`privagg_probabilities`] with n candidates and `columns`
/// distances of δ_agg (0 for the global mechanism).
pub fn privagg_scratch_len(n: usize, columns: usize) -> Result<MultiScratchLen, Error> {
    // u_agg n, dampened n, top-k work copy n, δ_agg table n·columns; top-k index map n, permutation n
    Ok(MultiScratchLen {
        values: size(&[(n, 3), (n, columns)])?,
        indices: size(&[(n, 2)])?,
    })
}

/// Computes u_agg into `agg` and, when local, the dampened scores into `dampened`; returns the sensitivity
/// of the scores to select from and whether they are the dampened ones.
fn scores(
    utilities: &[f64],
    weights: &[f64],
    sensitivity: &AggSensitivity<'_>,
    agg: &mut [f64],
    dampened: &mut [f64],
    table: &mut [f64],
) -> Result<(bool, f64), Error> {
    let m = weights.len();
    let n = agg.len();
    match *sensitivity {
        AggSensitivity::Global(globals) => {
            if globals.len() != m {
                return Err(Error::LengthMismatch);
            }
            let delta = weighted_global_sensitivity(weights, globals)?;
            weighted_sum(utilities, weights, agg)?;
            Ok((false, delta))
        }
        AggSensitivity::Local {
            deltas,
            columns,
            dampening,
        } => {
            if deltas.len() != m || deltas.iter().any(|d| d.len() != n) {
                return Err(Error::LengthMismatch);
            }
            let delta_agg = weighted_sensitivity_table(weights, deltas, columns, table)?;
            weighted_sum(utilities, weights, agg)?;
            let d = LocalSensitivity::new(DeltaSource::Table { values: table, columns }, delta_agg, columns, n)?;
            dampen_with(agg, &d, dampening, dampened)?;
            Ok((true, 1.0))
        }
    }
}

fn columns_of(sensitivity: &AggSensitivity<'_>) -> Result<usize, Error> {
    match *sensitivity {
        AggSensitivity::Global(_) => Ok(0),
        AggSensitivity::Local { columns: 0, .. } => Err(Error::InvalidArgument),
        AggSensitivity::Local { columns, .. } => Ok(columns),
    }
}

/// PrivAgg: picks k = `out.len()` candidates without replacement by `selector` at ε/k per round over
/// u_agg = Σ w_i u_i (weights of any sign), with global (Thm. 5.3) or local (Thm. 5.4, dampened) sensitivity.
/// ε-DP in total. u_agg does not depend on the candidate set, so it is computed once. Writes the chosen
/// indices in pick order. Scratch: [`privagg_scratch_len`]. O(n m + k n) (plus n m · columns when local).
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
) -> Result<(), Error> {
    let n = shape(utilities, weights.len())?;
    round_epsilon(epsilon, out.len(), n)?;
    let columns = columns_of(&sensitivity)?;
    let need = privagg_scratch_len(n, columns)?;
    if values.len() < need.values || indices.len() < need.indices {
        return Err(Error::ScratchTooSmall);
    }
    let agg = take(&mut values, n)?;
    let dampened = take(&mut values, n)?;
    let work = take(&mut values, n)?;
    let table = take(&mut values, n * columns)?;
    let map = take(&mut indices, n)?;
    let perm = take(&mut indices, n)?;
    let (local, delta) = scores(utilities, weights, &sensitivity, agg, dampened, table)?;
    let s = if local { &*dampened } else { &*agg };
    select_top_k(rng, selector, s, delta, epsilon, out, work, map, perm)
}

/// Exact output probabilities of PrivAgg (one pick) with the exponential mechanism. Writes n probabilities.
pub fn privagg_probabilities(
    utilities: &[f64],
    weights: &[f64],
    sensitivity: AggSensitivity<'_>,
    epsilon: f64,
    out: &mut [f64],
    mut values: &mut [f64],
) -> Result<(), Error> {
    let n = shape(utilities, weights.len())?;
    round_epsilon(epsilon, 1, n)?;
    let columns = columns_of(&sensitivity)?;
    if out.len() < n {
        return Err(Error::LengthMismatch);
    }
    if values.len() < privagg_scratch_len(n, columns)?.values {
        return Err(Error::ScratchTooSmall);
    }
    let agg = take(&mut values, n)?;
    let dampened = take(&mut values, n)?;
    let _work = take(&mut values, n)?;
    let table = take(&mut values, n * columns)?;
    let (local, delta) = scores(utilities, weights, &sensitivity, agg, dampened, table)?;
    exponential_probabilities(if local { dampened } else { agg }, delta, epsilon, out)
}
