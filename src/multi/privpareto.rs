//! PrivPareto (PrivPareto paper, §4): private selection by the Pareto score.
//!
//! **Local sensitivity without a table.** The local mechanism dampens the Pareto score PS with δ^PS
//! (Def. 4.5). Dampening a candidate only needs δ^PS(t, r) up to the interval that contains PS(r), so δ^PS
//! is evaluated at the distances the walk needs ([`pareto_sensitivity`] at one t, for all candidates) and
//! each candidate keeps only its running breakpoint: O(n m) memory, no `columns` to guess. δ^PS never
//! decreases in t, so a run of distances on which it keeps its value is crossed in one step, its length
//! found by doubling and halving. PS and δ^PS are integers, so the dampening is exact (the exact stage of
//! [`crate::dampen`](mod@crate::dampen)) in both arithmetics; the arithmetic only chooses the selector.
//!
//! **Where the walk stops (automatic saturation).** Plain dampening stops as soon as every candidate's
//! interval is found. A candidate still open after T distances with PS < 0 has D < −T, while a non-dominated
//! candidate (PS = 0, D ≥ 0) always exists; from T ≥ [`distance_beyond_cap`](ε) on, its γ exceeds the exact
//! selectors' cap [`GAMMA_CAP`](crate::exact::GAMMA_CAP) whether D is computed to the end or saturated at T,
//! so stopping there gives exactly the distribution of the unbounded table. Shifted dampening stops when
//! δ^PS = n − 1 for every candidate (further distances add the same amount to every score), or at that same
//! limit. Saturating at any distance keeps δ^PS admissible (Local Dampening paper, Lemma 3.5 and the
//! saturation argument in [`crate::sensitivity`]), so privacy never depends on where the walk stops; a
//! caller may cap it with `max_distance`.

use super::{finite, round_epsilon, shape, size, take, MultiScratchLen};
use crate::dampen::exact::{plain_end, plain_run, utility_limit, PLAIN_UNITS};
use crate::dampen::Dampening;
use crate::exact::{scale::distance_beyond_cap, Grid};
use crate::pareto::{
    advance_sums, pareto_scores_sized, pareto_sensitivity, pareto_sensitivity_from_sums,
    pareto_sensitivity_scratch_len, scores_scratch_len, Dominance,
};
use crate::select::exact::{as_words, load_int, store_int};
use crate::select::{exponential_probabilities, select, select_int, Arithmetic, Selector};
use crate::sensitivity::{LocalSensitivity, Subset, MAX_SATURATION};
use crate::{Error, MAX_OBJECTIVES};
use rand_core::Rng;

/// Which sensitivity PrivPareto uses.
#[derive(Clone, Copy)]
pub enum ParetoSensitivity<'a> {
    /// Global: the Pareto score's Δ = n − 1 (n = candidates).
    Global,
    /// Local: δ^PS (Def. 4.5) built from each objective's admissible δ_i, then `dampening`.
    Local {
        /// One sensitivity per objective, each for the n candidates.
        deltas: &'a [LocalSensitivity<'a>],
        /// 0 for automatic saturation (see the module documentation), else the number of distances of
        /// δ^PS examined before saturating it to n − 1.
        max_distance: usize,
        /// Plain or shifted dampening.
        dampening: Dampening,
    },
}

/// Scratch lengths for [`select_privpareto`] and [`privpareto_probabilities`] with n candidates and m
/// objectives (either sensitivity, either arithmetic): O(n m) values, O(n) indices.
pub fn privpareto_scratch_len(n: usize, m: usize) -> Result<MultiScratchLen, Error> {
    let (order, sums) = stage_scratch(n, m)?;
    // compact utilities n·m, running sums of the objectives' δ at the current distance n·m, Pareto scores
    // n, δ^PS at the current distance n and at a probed one n, the δ^PS stage's own scratch, integer
    // scores 2n, breakpoints 2n
    let values = size(&[(n, m), (n, m), (n, 3), (sums, 1), (n, 4)])?;
    // the stages' sort orders and Fenwick tree, candidate map n, permutation n, open flags n
    let indices = size(&[(order, 1), (n, 3)])?;
    Ok(MultiScratchLen { values, indices })
}

/// The index and value scratch the score stage needs (shared by the Pareto score and δ^PS).
fn stage_scratch(n: usize, m: usize) -> Result<(usize, usize), Error> {
    let s = pareto_sensitivity_scratch_len(n, m)?;
    Ok((s.indices.max(scores_scratch_len(n, m)?), s.values))
}

struct Parts<'a> {
    compact: &'a mut [f64],
    running: &'a mut [f64],
    scores: &'a mut [f64],
    sweep: &'a mut [f64],
    probe: &'a mut [f64],
    sums: &'a mut [f64],
    ints: &'a mut [u64],
    walk: &'a mut [u64],
    order: &'a mut [usize],
    map: &'a mut [usize],
    perm: &'a mut [usize],
    open: &'a mut [usize],
}

fn split<'a>(n: usize, m: usize, mut values: &'a mut [f64], mut indices: &'a mut [usize]) -> Result<Parts<'a>, Error> {
    let need = privpareto_scratch_len(n, m)?;
    if values.len() < need.values || indices.len() < need.indices {
        return Err(Error::ScratchTooSmall);
    }
    let (order, sums) = stage_scratch(n, m)?;
    Ok(Parts {
        compact: take(&mut values, n * m)?,
        running: take(&mut values, n * m)?,
        scores: take(&mut values, n)?,
        sweep: take(&mut values, n)?,
        probe: take(&mut values, n)?,
        sums: take(&mut values, sums)?,
        ints: as_words(take(&mut values, 2 * n)?),
        walk: as_words(take(&mut values, 2 * n)?),
        order: take(&mut indices, order)?,
        map: take(&mut indices, n)?,
        perm: take(&mut indices, n)?,
        open: take(&mut indices, n)?,
    })
}

fn check_local(sensitivity: &ParetoSensitivity<'_>, n: usize, m: usize) -> Result<(), Error> {
    if let ParetoSensitivity::Local { deltas, .. } = *sensitivity {
        if deltas.len() != m || deltas.iter().any(|d| d.len() != n) {
            return Err(Error::LengthMismatch);
        }
    }
    Ok(())
}

/// Integer scores of one round with local sensitivity: PS dampened with δ^PS (exactly, see the module
/// documentation) into `p.ints[..2 live]`; returns their sensitivity in grid units.
///
/// δ^PS is non-decreasing in t (intervals only widen), so where it takes the same values at t and at t + L − 1
/// for every candidate that still matters, it is constant in between: the walk crosses such a run in one step
/// ([`plain_run`]), and the run's length is found by doubling then halving L. Each probe is one evaluation
/// of δ^PS at one distance, O(n log n) for m ≤ 2; the number of probes grows with the number of distinct
/// values δ^PS takes, not with the distance reached.
#[allow(clippy::too_many_arguments)]
fn dampened_round(
    p: &mut Parts<'_>,
    live: usize,
    m: usize,
    deltas: &[LocalSensitivity<'_>],
    max_distance: usize,
    dampening: Dampening,
    epsilon: f64,
) -> Result<u64, Error> {
    let grid = Grid::of((live - 1) as f64)?;
    let units = grid.units();
    let limit = if max_distance > 0 {
        max_distance.min(MAX_SATURATION)
    } else {
        distance_beyond_cap(epsilon)
    };
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
    let compact = &p.compact[..live * m];
    let (order, sums, running) = (&mut *p.order, &mut *p.sums, &mut p.running[..live * m]);
    // The objectives' running sums are kept at the current distance in `running` and at the last probed
    // one in `sums[..live m]`, and advanced term by term (bit-identical to summing from 0), so a probe at
    // t + L costs O(n m L) for the sums rather than O(n m (t + L)). `pareto_sensitivity` at distance 0
    // validates the inputs once.
    let (mut running_at, mut probe_at): (Option<usize>, Option<usize>) = (None, None);
    let mut delta_at = |tq: usize, out: &mut [f64], current: bool| -> Result<(), Error> {
        if running_at.is_none() {
            pareto_sensitivity(compact, m, &subs, tq, out, order, sums)?;
            running.copy_from_slice(&sums[..live * m]);
            (running_at, probe_at) = (Some(tq), Some(tq));
            return Ok(());
        }
        if current {
            advance_sums(&subs, live, running, running_at, tq)?;
            running_at = Some(tq);
        }
        if current || probe_at.is_none_or(|p| p > tq) {
            sums[..live * m].copy_from_slice(running);
            probe_at = running_at;
        }
        advance_sums(&subs, live, &mut sums[..live * m], probe_at, tq)?;
        probe_at = Some(tq);
        pareto_sensitivity_from_sums(compact, &subs, live, tq, out, order, sums);
        Ok(())
    };
    let (scores, ints, walk, open) = (&p.scores[..live], &mut *p.ints, &mut *p.walk, &mut p.open[..live]);
    let (current, probe) = (&mut p.sweep[..live], &mut p.probe[..live]);
    let u = |r: usize| grid.floor_clamped(scores[r], utility_limit(units));
    // Breakpoints b(t) (plain) or running sums b(T) (shifted) live in `walk`; `open[r]` = 1 while it matters
    // (plain: its interval is not found yet; shifted: its δ^PS is below n − 1).
    for (r, o) in open.iter_mut().enumerate() {
        store_int(walk, r, 0);
        *o = 1;
    }
    let mut t = 0;
    let mut run = 1usize;
    let mut still_open = live;
    if limit > 0 {
        delta_at(0, current, true)?;
    }
    while t < limit && still_open > 0 {
        // The longest run [t, t + len) on which δ^PS of every open candidate keeps its value at t.
        let same = |probe: &[f64], open: &[usize]| (0..live).all(|r| open[r] == 0 || probe[r] == current[r]);
        let mut len = 1;
        let mut step = run.min(limit - t);
        while step > 1 {
            delta_at(t + len + step - 2, probe, false)?;
            if same(probe, open) {
                len += step - 1;
                step = (step * 2).min(limit - t - len + 1);
            } else {
                step /= 2;
            }
            if t + len >= limit {
                break;
            }
        }
        run = (len * 2).max(2);
        for r in 0..live {
            let w = grid.ceil_capped(current[r], units);
            let mut b = load_int(walk, r) as u128;
            match dampening {
                Dampening::Plain => {
                    if open[r] == 0 {
                        continue;
                    }
                    if let Some(s) = plain_run(u(r), t, len, w, &mut b) {
                        store_int(ints, r, s);
                        open[r] = 0;
                        still_open -= 1;
                        continue;
                    }
                }
                Dampening::Shifted => {
                    // Every candidate's sum runs to the same distance; one whose δ^PS reached n − 1 keeps it
                    // (δ^PS never decreases), so once all have, further distances add N to every score alike.
                    b += len as u128 * u128::from(w);
                    if open[r] == 1 && w == units {
                        open[r] = 0;
                        still_open -= 1;
                    }
                }
            }
            store_int(walk, r, b as i128);
        }
        t += len;
        if t < limit && still_open > 0 {
            delta_at(t, current, true)?;
        }
    }
    for (r, &o) in open.iter().enumerate() {
        let s = match dampening {
            Dampening::Plain if o == 0 => continue,
            Dampening::Plain => plain_end(u(r), t, units, load_int(walk, r) as u128),
            Dampening::Shifted => u(r) + load_int(walk, r),
        };
        store_int(ints, r, s);
    }
    Ok(match dampening {
        Dampening::Plain => PLAIN_UNITS,
        Dampening::Shifted => units,
    })
}

/// Integer scores (two words each, `units` per unit of sensitivity) as doubles of sensitivity 1, relative
/// to the largest, for the floating-point selectors and the probabilities.
fn as_unit_scores(ints: &[u64], units: u64, out: &mut [f64]) {
    let n = out.len();
    let best = (0..n).map(|r| load_int(ints, r)).max().unwrap_or(0);
    for (r, o) in out.iter_mut().enumerate() {
        *o = -((best - load_int(ints, r)) as f64 / units as f64);
    }
}

/// One round of selection over the first `live` rows of `p.compact`; returns the position picked.
#[allow(clippy::too_many_arguments)]
fn select_round<R: Rng + ?Sized>(
    rng: &mut R,
    p: &mut Parts<'_>,
    live: usize,
    m: usize,
    dominance: Dominance,
    sensitivity: &ParetoSensitivity<'_>,
    selector: Selector,
    epsilon: f64,
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    pareto_scores_sized(&p.compact[..live * m], m, dominance, &mut p.scores[..live], p.order)?;
    match *sensitivity {
        ParetoSensitivity::Global => select(
            rng,
            selector,
            &p.scores[..live],
            (live - 1) as f64,
            epsilon,
            p.perm,
            arithmetic,
        ),
        ParetoSensitivity::Local {
            deltas,
            max_distance,
            dampening,
        } => {
            let units = dampened_round(p, live, m, deltas, max_distance, dampening, epsilon)?;
            match arithmetic {
                Arithmetic::Exact => select_int(rng, selector, &p.ints[..2 * live], units, epsilon, p.perm),
                Arithmetic::Float => {
                    as_unit_scores(&p.ints[..2 * live], units, &mut p.sweep[..live]);
                    select(rng, selector, &p.sweep[..live], 1.0, epsilon, p.perm, arithmetic)
                }
            }
        }
    }
}

/// PrivPareto: picks k = `out.len()` candidates without replacement, each round by `selector` at ε/k over
/// the Pareto scores of the candidates left (PrivPareto paper, Algorithm "PrivPareto", §4.3), with global
/// (Δ = n − 1) or local (δ^PS, Def. 4.5, Thm. 4.7, dampened) sensitivity, in `arithmetic`. ε-DP in total.
/// Writes the chosen indices in pick order.
///
/// `utilities` is n × m row-major, larger is better. Scratch: [`privpareto_scratch_len`]. Cost per round:
/// one Pareto score, plus one δ^PS sweep per distance examined when local (see the module documentation).
///
/// ```
/// use dpmo::{select_privpareto, Arithmetic, Dominance, ParetoSensitivity, Selector};
/// use dpmo::multi::privpareto_scratch_len;
/// # let mut rng = dpmo::GeneratorState::chacha20([3; 32]).load()?;
/// // Four candidates, two objectives each (row-major): (5, 1), (3, 3), (1, 5), (2, 2).
/// let u = [5.0, 1.0, 3.0, 3.0, 1.0, 5.0, 2.0, 2.0];
/// let need = privpareto_scratch_len(4, 2)?;
/// let (mut values, mut indices) = (vec![0.0; need.values], vec![0; need.indices]);
/// let mut top2 = [0usize; 2];
/// select_privpareto(&mut rng, &u, 2, Dominance::Textbook, ParetoSensitivity::Global, Selector::Exponential,
///                   1.0, &mut top2, &mut values, &mut indices, Arithmetic::Exact)?;
/// assert_ne!(top2[0], top2[1]);
/// # Ok::<(), dpmo::Error>(())
/// ```
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
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    let n = shape(utilities, m)?;
    let eps = round_epsilon(epsilon, out.len(), n)?;
    check_local(&sensitivity, n, m)?;
    if arithmetic == Arithmetic::Exact && selector == Selector::NoisyMax(crate::select::Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    let mut p = split(n, m, values, indices)?;
    finite(utilities)?;
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
            select_round(rng, &mut p, live, m, dominance, &sensitivity, selector, eps, arithmetic)?
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

/// Output probabilities of PrivPareto (one pick) with the exponential mechanism, computed in floating point
/// from the exact scores: global, P(r) ∝ exp(ε PS(r) / (2(n − 1))); local, P(r) ∝ exp(ε D(PS, δ^PS)(r) / 2).
/// Writes n probabilities to `out`.
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
    check_local(&sensitivity, n, m)?;
    if out.len() < n {
        return Err(Error::LengthMismatch);
    }
    let mut p = split(n, m, values, indices)?;
    finite(utilities)?;
    if n == 1 {
        out[0] = 1.0;
        return Ok(());
    }
    p.compact.copy_from_slice(utilities);
    for (i, x) in p.map.iter_mut().enumerate() {
        *x = i;
    }
    pareto_scores_sized(&p.compact[..n * m], m, dominance, &mut p.scores[..n], p.order)?;
    match sensitivity {
        ParetoSensitivity::Global => exponential_probabilities(&p.scores[..n], (n - 1) as f64, epsilon, out),
        ParetoSensitivity::Local {
            deltas,
            max_distance,
            dampening,
        } => {
            let units = dampened_round(&mut p, n, m, deltas, max_distance, dampening, epsilon)?;
            as_unit_scores(&p.ints[..2 * n], units, &mut p.sweep[..n]);
            exponential_probabilities(&p.sweep[..n], 1.0, epsilon, out)
        }
    }
}
