//! PrivPareto (PrivPareto paper, §4): private selection by the Pareto score.

use super::{round_epsilon, shape, size, take, MultiScratchLen};
use crate::dampen::{dampen_with, Dampening};
use crate::pareto::{
    pareto_scores, pareto_scores_scratch_len, pareto_sensitivity_scratch_len, pareto_sensitivity_table, Dominance,
};
use crate::select::{exponential_probabilities, select, Selector};
use crate::sensitivity::{DeltaSource, LocalSensitivity, Subset};
use crate::{Error, MAX_OBJECTIVES};
use rand_core::Rng;

/// Which sensitivity PrivPareto uses.
#[derive(Clone, Copy)]
pub enum ParetoSensitivity<'a> {
    /// Global: the Pareto score's Δ = n − 1 (n = candidates).
    Global,
    /// Local: δ^PS (Def. 4.5) built from each objective's admissible δ_i, tabulated for t < `columns` (the
    /// saturation distance of δ^PS, Δ = n − 1 beyond), then `dampening`.
    Local {
        /// One sensitivity per objective, each for the n candidates.
        deltas: &'a [LocalSensitivity<'a>],
        /// Distances of δ^PS computed before saturation (≥ 1). Larger is more accurate while δ^PS < n − 1,
        /// and costs one O(n log n) sweep (m ≤ 2) and n doubles each.
        columns: usize,
        /// Plain or shifted dampening.
        dampening: Dampening,
    },
}

/// Scratch lengths for [`select_privpareto`] and [`privpareto_probabilities`] with n candidates, m objectives
/// and `columns` distances of δ^PS (use 0 for the global mechanism).
pub fn privpareto_scratch_len(n: usize, m: usize, columns: usize) -> Result<MultiScratchLen, Error> {
    let (order, sums) = stage_scratch(n, m)?;
    // compact utilities n·m, scores n, dampened n, δ^PS table n·columns, δ^PS sums
    let values = size(&[(n, m), (n, 2), (n, columns), (sums, 1)])?;
    // the stages' sort orders and Fenwick tree, candidate map n, permutation n
    let indices = size(&[(order, 1), (n, 2)])?;
    Ok(MultiScratchLen { values, indices })
}

/// The index and value scratch the score stage needs (shared by the Pareto score and δ^PS).
fn stage_scratch(n: usize, m: usize) -> Result<(usize, usize), Error> {
    let s = pareto_sensitivity_scratch_len(n, m)?;
    Ok((s.indices.max(pareto_scores_scratch_len(n)?), s.values))
}

struct Parts<'a> {
    compact: &'a mut [f64],
    scores: &'a mut [f64],
    dampened: &'a mut [f64],
    table: &'a mut [f64],
    sums: &'a mut [f64],
    order: &'a mut [usize],
    map: &'a mut [usize],
    perm: &'a mut [usize],
}

fn split<'a>(
    n: usize,
    m: usize,
    columns: usize,
    mut values: &'a mut [f64],
    mut indices: &'a mut [usize],
) -> Result<Parts<'a>, Error> {
    let need = privpareto_scratch_len(n, m, columns)?;
    if values.len() < need.values || indices.len() < need.indices {
        return Err(Error::ScratchTooSmall);
    }
    let (order, sums) = stage_scratch(n, m)?;
    Ok(Parts {
        compact: take(&mut values, n * m)?,
        scores: take(&mut values, n)?,
        dampened: take(&mut values, n)?,
        table: take(&mut values, n * columns)?,
        sums: take(&mut values, sums)?,
        order: take(&mut indices, order)?,
        map: take(&mut indices, n)?,
        perm: take(&mut indices, n)?,
    })
}

fn check_local(sensitivity: &ParetoSensitivity<'_>, n: usize, m: usize) -> Result<usize, Error> {
    match *sensitivity {
        ParetoSensitivity::Global => Ok(0),
        ParetoSensitivity::Local { deltas, columns, .. } => {
            if deltas.len() != m || deltas.iter().any(|d| d.len() != n) {
                return Err(Error::LengthMismatch);
            }
            if columns == 0 {
                return Err(Error::InvalidArgument);
            }
            Ok(columns)
        }
    }
}

/// Scores of one round over the first `live` rows of `p.compact`, written to `p.scores[..live]` (global) or
/// `p.dampened[..live]` (local); returns the sensitivity to select with.
fn round_scores(
    p: &mut Parts<'_>,
    live: usize,
    m: usize,
    dominance: Dominance,
    sensitivity: &ParetoSensitivity<'_>,
) -> Result<(bool, f64), Error> {
    pareto_scores(&p.compact[..live * m], m, dominance, &mut p.scores[..live], p.order)?;
    let global = (live - 1) as f64;
    match *sensitivity {
        ParetoSensitivity::Global => Ok((false, global)),
        ParetoSensitivity::Local {
            deltas,
            columns,
            dampening,
        } => {
            let mut views: heapless::Vec<Subset<'_>, MAX_OBJECTIVES> = heapless::Vec::new();
            for d in deltas {
                views
                    .push(Subset::new(*d, &p.map[..live]))
                    .map_err(|_| Error::CapacityExceeded)?;
            }
            let mut subs: heapless::Vec<LocalSensitivity<'_>, MAX_OBJECTIVES> = heapless::Vec::new();
            for v in &views {
                subs.push(v.sensitivity()?).map_err(|_| Error::CapacityExceeded)?;
            }
            let table = &mut p.table[..live * columns];
            pareto_sensitivity_table(&p.compact[..live * m], m, &subs, columns, table, p.order, p.sums)?;
            let delta_ps = LocalSensitivity::new(DeltaSource::Table { values: table, columns }, global, columns, live)?;
            dampen_with(&p.scores[..live], &delta_ps, dampening, &mut p.dampened[..live])?;
            Ok((true, 1.0))
        }
    }
}

/// PrivPareto: picks k = `out.len()` candidates without replacement, each round by `selector` at ε/k over
/// the Pareto scores of the candidates left (PrivPareto paper, Algorithm "PrivPareto", §4.3), with global
/// (Δ = n − 1) or local (δ^PS, Def. 4.5, Thm. 4.7) sensitivity. ε-DP in total. Writes the chosen indices
/// in pick order.
///
/// `utilities` is n × m row-major, larger is better. Scratch: [`privpareto_scratch_len`]. Cost per round:
/// O(n log n) for m ≤ 2 (plus `columns` δ^PS sweeps when local).
#[allow(clippy::too_many_arguments)]
pub fn select_privpareto<R: Rng + ?Sized>(
    rng: &mut R,
    utilities: &[f64],
    m: usize,
    dominance: Dominance,
    sensitivity: ParetoSensitivity<'_>,
    selector: Selector,
    epsilon: f64,
    out: &mut [usize],
    values: &mut [f64],
    indices: &mut [usize],
) -> Result<(), Error> {
    let n = shape(utilities, m)?;
    let eps = round_epsilon(epsilon, out.len(), n)?;
    let columns = check_local(&sensitivity, n, m)?;
    let mut p = split(n, m, columns, values, indices)?;
    p.compact.copy_from_slice(utilities);
    for (i, x) in p.map.iter_mut().enumerate() {
        *x = i;
    }
    let k = out.len();
    let mut live = n;
    for _ in 0..k {
        let pick = if live == 1 {
            // The last candidate left is determined by the earlier (private) picks.
            0
        } else {
            let (local, global) = round_scores(&mut p, live, m, dominance, &sensitivity)?;
            let scores = if local { &p.dampened[..live] } else { &p.scores[..live] };
            select(rng, selector, scores, global, eps, p.perm)?
        };
        let chosen = p.map[pick];
        live -= 1;
        p.compact.copy_within(live * m..(live + 1) * m, pick * m);
        p.map[pick] = p.map[live];
        // The freed slot keeps the pick; the picks are copied to `out` only once every round succeeded.
        p.map[live] = chosen;
    }
    for (o, &c) in out.iter_mut().zip(p.map[n - k..].iter().rev()) {
        *o = c;
    }
    Ok(())
}

/// Exact output probabilities of PrivPareto (one pick) with the exponential mechanism: global, P(r) ∝
/// exp(ε PS(r) / (2(n − 1))); local, P(r) ∝ exp(ε D(PS, δ^PS)(r) / 2). Writes n probabilities to `out`.
#[allow(clippy::too_many_arguments)]
pub fn privpareto_probabilities(
    utilities: &[f64],
    m: usize,
    dominance: Dominance,
    sensitivity: ParetoSensitivity<'_>,
    epsilon: f64,
    out: &mut [f64],
    values: &mut [f64],
    indices: &mut [usize],
) -> Result<(), Error> {
    let n = shape(utilities, m)?;
    round_epsilon(epsilon, 1, n)?;
    let columns = check_local(&sensitivity, n, m)?;
    if out.len() < n {
        return Err(Error::LengthMismatch);
    }
    if n == 1 {
        out[0] = 1.0;
        return Ok(());
    }
    let mut p = split(n, m, columns, values, indices)?;
    p.compact.copy_from_slice(utilities);
    for (i, x) in p.map.iter_mut().enumerate() {
        *x = i;
    }
    let (local, global) = round_scores(&mut p, n, m, dominance, &sensitivity)?;
    if local {
        // The dampened scores have sensitivity 1; the exponential mechanism on them is Def. 3.8.
        exponential_probabilities(&p.dampened[..n], global, epsilon, out)
    } else {
        exponential_probabilities(&p.scores[..n], global, epsilon, out)
    }
}
