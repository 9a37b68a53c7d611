//! PrivPareto (PrivPareto paper, §4): private selection by the Pareto score.
//!
//! **Local sensitivity without a table.** The local mechanism dampens the Pareto score PS with δ^PS
//! (Def. 4.5). Dampening a candidate only needs δ^PS(t, r) up to the interval that contains PS(r), so δ^PS
//! is evaluated at the distances the walk needs and each candidate keeps only its running breakpoint: O(n m)
//! memory, no `columns` to guess. δ^PS never decreases in t, so a run of distances on which it keeps its
//! value is crossed in one step; the run's end is searched by doubling then bisection, and never further
//! than the walk needs (plain: the length after which every open candidate's interval is found at its
//! current δ^PS; shifted: the length after which the cap rule below would hold). Each probe evaluates δ^PS
//! at one distance for the candidates still open only (`pareto::walk`): every candidate's corners,
//! then a sweep over orders kept from the previous probe while many are open, or one blocked pass over the
//! corners when few are. PS and δ^PS are integers, so the dampening is exact (the exact stage of
//! [`crate::dampen`](mod@crate::dampen)) in both arithmetics; the arithmetic only chooses the selector.
//!
//! **Where the walk stops (automatic saturation).** Let L = [`distance_beyond_cap`]`(ε)`: a score gap of L
//! units of sensitivity has γ beyond the exact selectors' cap [`GAMMA_CAP`](crate::exact::GAMMA_CAP), so
//! the selectors weigh every candidate at least L below the best alike, e^{−GAMMA_CAP}. The walk stops at a
//! run boundary T when the scores it has are, candidate by candidate, either those of the unbounded table
//! (δ^PS walked until it is n − 1 for every candidate) or beyond the cap both there and here; the
//! distribution of the exact selectors is then exactly the unbounded table's.
//! - *Plain.* A closed candidate's D is exact; an open dominated one (PS < 0) has D < −T (saturated at T
//!   or not); an open non-dominated one (PS = 0) has D ≥ T. The walk stops when T ≥ L and either no
//!   non-dominated candidate is open (each open one is more than L below a closed non-dominated one, D ≥ 0)
//!   or exactly one, B, is and every other candidate's D is below T − L (B is the best and the others are
//!   beyond the cap from it, whatever B's exact D). With two open non-dominated candidates it goes on: only
//!   their exact D orders them.
//! - *Shifted.* Scores are U + Σ_t δ′(t); once δ^PS(r) = n − 1 it stays so and r's score is final up to the
//!   N every candidate gains per further distance. Each further distance adds at most N to an open
//!   candidate's score, so its gap to a final score only grows. The walk stops when every candidate is
//!   final, or when some is and every open candidate is already L N below the best final score (then
//!   the best is final, and every open candidate is beyond the cap both here and in the unbounded table).
//!   On Enron (ε = 1/3 per round) L = 6,146 while δ^PS saturates by t ≈ 700, so there the walk runs to
//!   saturation.
//! - Otherwise the walk ends at [`MAX_SATURATION`] distances, or at the caller's `max_distance`, and δ^PS is
//!   saturated there to n − 1. Saturating at any distance keeps δ^PS admissible (Local Dampening paper,
//!   Lemma 3.5 and the saturation argument in [`crate::sensitivity`]), so privacy never depends on where
//!   the walk stops.
//!
//! The floating-point selectors compute weights e^{−γ} in doubles, which are 0 beyond the cap (e^{−1024}
//! underflows), so the same holds for them, except noisy max with Laplace noise, where a candidate beyond
//! the cap could win only with probability below e^{−1000} (two continuous Laplace draws a gap apart).
//!
//! **Memory** ([`privpareto_scratch_len`]): the candidate map and dominator counts, the objectives'
//! running δ sums, the probes' corners, the breakpoints (replaced by the final scores) and a stage area
//! that the Pareto score's count, the walk's `u32` arrays and the selector's permutation use in turn;
//! 15 n + 1 words at m = 2 on 64-bit targets, 60 bytes per candidate per objective.

use super::{finite, round_epsilon, shape, take, MultiScratchLen};
use crate::dampen::exact::{plain_end, plain_run, utility_limit, PLAIN_UNITS};
use crate::dampen::Dampening;
use crate::exact::{scale::distance_beyond_cap, Grid};
use crate::pareto::delta::objective_grid;
use crate::pareto::walk::{self, Live, CLOSED};
use crate::pareto::{dominator_counts, self_scratch_len, Dominance};
use crate::select::exact::{as_words, load_int, store_int};
use crate::select::{exponential_probabilities, select, select_int, Arithmetic, Selector};
use crate::sensitivity::{LocalSensitivity, MAX_SATURATION};
use crate::{Error, MAX_OBJECTIVES};
use core::mem::size_of;
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

// The `u32` arrays are carved out of the `usize` scratch.
const _: () = assert!(size_of::<usize>() >= size_of::<u32>() && size_of::<usize>().is_multiple_of(size_of::<u32>()));

/// `usize` words holding `k` `u32`s.
fn words_for_u32(k: usize) -> Option<usize> {
    let per = size_of::<usize>() / size_of::<u32>();
    Some(k.checked_add(per - 1)? / per)
}

/// Views `usize` scratch as `u32`s (no reallocation: the same bytes, twice as many items on 64-bit).
fn as_u32(x: &mut [usize]) -> &mut [u32] {
    let len = x.len() * (size_of::<usize>() / size_of::<u32>());
    // SAFETY: usize is at least as aligned as u32 and a whole number of u32s long (checked above), and every
    // bit pattern is a valid u32; the returned slice borrows `x` mutably for its whole life, so nothing else
    // can observe the reinterpretation.
    unsafe { core::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<u32>(), len) }
}

/// The stage area (`usize` words) shared by the three stages of a round, which never live at once: the
/// Pareto score's dominance count, the δ^PS walk (two `u32` δ^PS arrays and the probes' scratch), the
/// selector's permutation.
fn stage_len(n: usize, m: usize) -> Option<usize> {
    let walk = if m <= 2 {
        words_for_u32(walk::sweep_len32(n, m)?.checked_add(n.checked_mul(2)?)?)?
    } else {
        words_for_u32(n.checked_mul(2)?)?.checked_add(walk::sweep_len_wide(n, m)?)?
    };
    Some(self_scratch_len(n, m)?.max(walk).max(n))
}

/// Scratch lengths for [`select_privpareto`] and [`privpareto_probabilities`] with n candidates and m
/// objectives (either sensitivity, either arithmetic):
///
/// - `values` = (3m + 2) n: the objectives' running δ sums (n m), the corners of the δ^PS probes (2 n m,
///   which also hold the scores handed to a floating-point selector) and the integer scores or dampening
///   breakpoints (2 n, two words each);
/// - `indices` = 2n + S: the candidate map and the dominator counts (n each), and a stage area S shared by
///   the Pareto score, the δ^PS walk and the selector, which never live at once. On 64-bit targets S is
///   5n + 1 for m ≤ 2 (the Pareto score's count; the walk needs (5 + 2m) n / 2 + 1); for m ≥ 3 the larger
///   of the score's count and n + the δ^PS count's (see [`crate::pareto::pareto_sensitivity_scratch_len`]).
///
/// At m = 2 on a 64-bit target that is 15 n + 1 words: 60 bytes per candidate per objective.
///
/// Errors: a length overflows `usize` → [`Error::Overflow`]; otherwise n ≥ 2³² (candidates are indexed by
/// `u32` in the walk) → [`Error::CapacityExceeded`]. [`select_privpareto`] and
/// [`privpareto_probabilities`] report these too.
pub fn privpareto_scratch_len(n: usize, m: usize) -> Result<MultiScratchLen, Error> {
    let values = n.checked_mul(m.checked_mul(3).and_then(|v| v.checked_add(2)).ok_or(Error::Overflow)?);
    let indices = stage_len(n, m).and_then(|s| s.checked_add(n.checked_mul(2)?));
    match (values, indices) {
        (Some(_), Some(_)) if u32::try_from(n).is_err() => Err(Error::CapacityExceeded),
        (Some(values), Some(indices)) => Ok(MultiScratchLen { values, indices }),
        _ => Err(Error::Overflow),
    }
}

struct Parts<'a> {
    sums: &'a mut [f64],
    corners: &'a mut [f64],
    walk: &'a mut [u64],
    map: &'a mut [usize],
    dominators: &'a mut [usize],
    stage: &'a mut [usize],
}

fn split<'a>(n: usize, m: usize, mut values: &'a mut [f64], mut indices: &'a mut [usize]) -> Result<Parts<'a>, Error> {
    let need = privpareto_scratch_len(n, m)?;
    if values.len() < need.values || indices.len() < need.indices {
        return Err(Error::ScratchTooSmall);
    }
    Ok(Parts {
        sums: take(&mut values, n * m)?,
        corners: take(&mut values, 2 * n * m)?,
        walk: as_words(take(&mut values, 2 * n)?),
        map: take(&mut indices, n)?,
        dominators: take(&mut indices, n)?,
        stage: indices,
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

/// The dominator counts −PS of the first `live` candidates of the map into `p.dominators`.
fn score_round(p: &mut Parts<'_>, utilities: &[f64], live: usize, m: usize, dominance: Dominance) {
    let map = &p.map[..live];
    let u = |r: usize, i: usize| utilities[map[r] * m + i];
    dominator_counts(live, m, u, dominance, p.dominators, p.stage);
}

/// The least run length L ≤ `cap` after which every open candidate's plain dampening interval is found if
/// δ^PS keeps its value at t on [t, t + L) (the rule of [`plain_run`]), or `cap`. With `to_cap` (automatic
/// mode: the distances left to the cap distance), a dominated candidate also settles by reaching it.
fn settling_len(
    cur: &[u32],
    walk: &[u64],
    score: &impl Fn(usize) -> i128,
    grid: &Grid,
    to_cap: Option<usize>,
    cap: usize,
) -> usize {
    let units = grid.units();
    let mut need = 1usize;
    for (r, &c) in cur.iter().enumerate() {
        if c == CLOSED {
            continue;
        }
        let w = grid.ceil_capped(f64::from(c), units);
        let (u, b) = (score(r), load_int(walk, r) as u128);
        let capped = to_cap.filter(|_| u < 0).map(|d| d.max(1));
        if w == 0 {
            match capped {
                Some(d) => {
                    need = need.max(d.min(cap));
                    continue;
                }
                None => return cap,
            }
        }
        // u ≥ 0 settles once b + L w > a, u < 0 once b + L w ≥ a (and a > b while open). |u| ≤ N (the
        // Pareto score is within n − 1 of 0) and b < |u| while open, so the gap fits in 64 bits.
        let Ok(gap) = u64::try_from(u.unsigned_abs().saturating_sub(b)) else {
            return cap;
        };
        let mut len = if u >= 0 { gap / w + 1 } else { gap.div_ceil(w).max(1) };
        if let Some(d) = capped {
            len = len.min(d as u64);
        }
        if len >= cap as u64 {
            return cap;
        }
        need = need.max(len as usize);
    }
    need
}

/// The plain walk's stopping rule after `t` distances, with L = `beyond` (a gap of L units of
/// sensitivity is beyond the selectors' cap): an open dominated candidate (U < 0) has D < −t, an open
/// non-dominated one (U = 0) has D ≥ t, and a closed one its exact D (`walk` holds ⌊M D⌋). True when
/// - no non-dominated candidate is open and t ≥ L: every non-dominated candidate's D ≥ 0 is exact, and
///   every open one is more than L below it, saturated at t (D ≤ −t) or not;
/// - exactly one non-dominated candidate B is open, t ≥ L and every other candidate's D is below t − L:
///   B is the best (D ≥ t, saturated at t or not) and every other candidate is beyond the cap from it.
///
/// Otherwise the walk goes on (two open non-dominated candidates are ordered only by their exact D).
fn plain_capped(cur: &[u32], walk: &[u64], score: &impl Fn(usize) -> i128, t: usize, beyond: usize) -> bool {
    if t < beyond {
        return false;
    }
    let mut top = None;
    for (r, &c) in cur.iter().enumerate() {
        if c != CLOSED && score(r) >= 0 {
            if top.is_some() {
                return false;
            }
            top = Some(r);
        }
    }
    let Some(top) = top else {
        return true;
    };
    let below = PLAIN_UNITS as i128 * (t - beyond) as i128;
    cur.iter().enumerate().all(|(r, &c)| {
        r == top
            || if c == CLOSED {
                load_int(walk, r) < below
            } else {
                -(PLAIN_UNITS as i128) * (t as i128) < below
            }
    })
}

/// The shifted walk's stopping rule: true when some candidate's score is final (its δ^PS is n − 1) and
/// every open candidate's score so far is at least `cap_gap` below the best final one. An open score only
/// decreases relative to a final one (each further distance adds at most N to it and exactly N to a final
/// score), so the open candidates are beyond the selectors' cap both now and in the unbounded table, and
/// the best score is final: see the module documentation.
fn shifted_capped(cur: &[u32], walk: &[u64], cap_gap: u128) -> bool {
    // Plain integers with i128::MIN for "none" (scores stay within ±2¹²⁵): an `Option` here compiles to a
    // comparison with the payload of a `None`, which valgrind flags as a jump on an uninitialised value.
    let (mut best_final, mut best_open) = (i128::MIN, i128::MIN);
    for (r, &c) in cur.iter().enumerate() {
        let s = load_int(walk, r);
        let slot = if c == CLOSED { &mut best_final } else { &mut best_open };
        *slot = (*slot).max(s);
    }
    best_final != i128::MIN
        && best_open != i128::MIN
        && best_final > best_open
        && (best_final - best_open) as u128 >= cap_gap
}

/// The least run length L ≤ `cap` after which [`shifted_capped`] holds if δ^PS keeps its value at t on
/// [t, t + L), or `cap`: a final score gains N per distance and an open one w(r) < N, so the gap between
/// the best final score and open candidate r's grows by N − w(r) per distance.
fn shifted_settling_len(cur: &[u32], walk: &[u64], grid: &Grid, cap_gap: u128, cap: usize) -> usize {
    let units = grid.units();
    let Some(best) = cur
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c == CLOSED)
        .map(|(r, _)| load_int(walk, r))
        .max()
    else {
        return cap;
    };
    // An upper bound is enough (the walk only stops searching a run there): the largest gap still missing
    // over the least gain, one division per step.
    let (mut missing, mut gain) = (0u128, u128::MAX);
    for (r, &c) in cur.iter().enumerate() {
        if c == CLOSED {
            continue;
        }
        gain = gain.min(u128::from(units - grid.ceil_capped(f64::from(c), units).min(units)));
        let gap = best - load_int(walk, r);
        let short = if gap >= 0 {
            cap_gap.saturating_sub(gap as u128)
        } else {
            cap_gap + gap.unsigned_abs()
        };
        missing = missing.max(short);
    }
    if gain == 0 || gain == u128::MAX {
        return cap;
    }
    let len = missing.div_ceil(gain).max(1);
    if len >= cap as u128 {
        cap
    } else {
        len as usize
    }
}

/// Shifted dampening: marks CLOSED every open candidate whose δ^PS is n − 1 (it stays so, and its score
/// is final up to the N every candidate gains per distance from then on); returns how many. Plain: 0.
fn final_scores(cur: &mut [u32], dampening: Dampening) -> usize {
    if dampening == Dampening::Plain {
        return 0;
    }
    let top = (cur.len() - 1) as u32;
    let mut closed = 0;
    for c in cur.iter_mut().filter(|c| **c == top) {
        *c = CLOSED;
        closed += 1;
    }
    closed
}

/// Integer scores of one round with local sensitivity: PS dampened with δ^PS (exactly, see the module
/// documentation) into `p.walk[..2 live]`; returns their sensitivity in grid units.
///
/// δ^PS is non-decreasing in t (intervals only widen), so where it takes the same values at t and at t + L − 1
/// for every candidate that still matters, it is constant in between: the walk crosses such a run in one step
/// ([`plain_run`]), and the run's length is found by doubling then halving L. Each probe evaluates δ^PS at
/// one distance for the open candidates only ([`walk::probe`]); the number of probes grows with the number
/// of distinct values δ^PS takes, not with the distance reached.
#[allow(clippy::too_many_arguments)]
fn dampened_round(
    p: &mut Parts<'_>,
    utilities: &[f64],
    live: usize,
    m: usize,
    deltas: &[LocalSensitivity<'_>],
    max_distance: usize,
    dampening: Dampening,
    epsilon: f64,
) -> Result<u64, Error> {
    let n = live;
    let grid = Grid::of((n - 1) as f64)?;
    let units = grid.units();
    // Automatic: the walk stops by the cap rules below (see the module documentation), or once every
    // candidate is settled, within the largest saturation distance.
    let beyond = distance_beyond_cap(epsilon);
    let limit = match max_distance {
        0 => MAX_SATURATION,
        d => d.min(MAX_SATURATION),
    };
    // The cap rule applies to the automatic mode only (a caller's `max_distance` defines its own table).
    let cap_gap = (max_distance == 0 && beyond < MAX_SATURATION).then(|| beyond as u128 * u128::from(grid.units()));
    let map = &p.map[..n];
    let mut subs: heapless::Vec<Live<'_, '_>, MAX_OBJECTIVES> = heapless::Vec::new();
    for d in deltas {
        let grid = objective_grid(d.global())?;
        subs.push(Live { d, map, grid }).map_err(|_| Error::CapacityExceeded)?;
    }
    let u = |r: usize, i: usize| utilities[map[r] * m + i];
    let (running, corners, walk) = (
        as_words(&mut p.sums[..n * m]),
        &mut p.corners[..2 * n * m],
        &mut p.walk[..2 * n],
    );
    let dominators = &p.dominators[..n];
    // The stage area: δ^PS at the walk's distance (`cur`, CLOSED once a candidate no longer matters) and
    // at the last probe (`probed`), then the probes' own scratch.
    let (deltas32, wide) = if m <= 2 {
        (as_u32(p.stage), &mut [][..])
    } else {
        let (a, b) = p.stage.split_at_mut(words_for_u32(2 * n).ok_or(Error::Overflow)?);
        (as_u32(a), b)
    };
    let (cur, rest) = deltas32.split_at_mut(n);
    let (probed, narrow) = rest.split_at_mut(n);
    if m <= 2 {
        for order in narrow[..2 * m * n].chunks_exact_mut(n) {
            for (k, slot) in order.iter_mut().enumerate() {
                *slot = k as u32;
            }
        }
    }
    let score = |r: usize| grid.floor_clamped(-(dominators[r] as f64), utility_limit(units));
    // Breakpoints b(t) (plain) or running sums b(T) (shifted) live in `walk`, replaced by the final score
    // when a plain candidate's interval is found; `cur[r]` = CLOSED once it no longer matters (plain: its
    // interval is found; shifted: its δ^PS is n − 1, and stays so).
    // Shifted: `walk` holds the score so far, U + b(T), from the start (the cap rule reads it every step).
    cur.fill(0);
    for r in 0..n {
        let start = match dampening {
            Dampening::Plain => 0,
            Dampening::Shifted => score(r),
        };
        store_int(walk, r, start);
    }
    // The running sums S_i are kept at the walk's distance (advanced term by term, bit-identical to summing
    // from 0); a probe at t + L adds the terms in between on the fly.
    walk::advance(&subs, n, running, None, 0)?;
    let mut running_at = 0;
    // The distance of the last probe (usize::MAX: none yet; a plain integer, so no comparison reads the
    // payload of a `None`, which valgrind would flag).
    let mut probe_at = usize::MAX;
    let mut still_open = n;
    let mut eval = |tq: usize,
                    cur: &[u32],
                    probed: &mut [u32],
                    running: &mut [u64],
                    running_at: &mut usize,
                    commit: bool,
                    q: usize| {
        walk::corners(u, &subs, n, running, *running_at, tq, commit, corners)?;
        if commit {
            *running_at = tq;
        }
        walk::probe(n, m, corners, |r| cur[r] != CLOSED, q, probed, narrow, wide);
        Ok::<(), Error>(())
    };
    let mut t = 0;
    let mut run = 1usize;
    if limit > 0 {
        eval(0, cur, probed, running, &mut running_at, true, still_open)?;
        cur.copy_from_slice(probed);
        probe_at = 0;
        still_open -= final_scores(cur, dampening);
    }
    while t < limit && still_open > 0 {
        // The longest run [t, t + len) on which δ^PS of every open candidate keeps its value at t, up to
        // `need`: with plain dampening, a run of that length would settle every open candidate (each one's
        // breakpoints advance by its δ^PS at t), so no longer run is ever needed.
        let same = |probed: &[u32], cur: &[u32]| (0..n).all(|r| cur[r] == CLOSED || probed[r] == cur[r]);
        let need = match dampening {
            Dampening::Plain => settling_len(
                cur,
                walk,
                &score,
                &grid,
                cap_gap.map(|_| beyond.saturating_sub(t)),
                limit - t,
            ),
            Dampening::Shifted => match cap_gap {
                Some(c) => shifted_settling_len(cur, walk, &grid, c, limit - t),
                None => limit - t,
            },
        };
        // Offsets: δ^PS is the same at t + a as at t; at t + f it differs (`failed`) or f = need.
        let (mut a, mut f, mut failed) = (0, need, false);
        let mut step = run;
        while a + 1 < f {
            let x = if failed {
                a + (f - a) / 2
            } else {
                (a + step.max(2) - 1).min(f - 1)
            };
            // A probe at t + a + 1 is where the walk goes next whether it succeeds or not: its sums are kept.
            eval(t + x, cur, probed, running, &mut running_at, x == a + 1, still_open)?;
            probe_at = t + x;
            if same(probed, cur) {
                a = x;
                step *= 2;
                // Every later probe of this run, and the walk's next distance, lie beyond t + a.
                if running_at < t + a {
                    walk::advance(&subs, n, running, Some(running_at), t + a)?;
                    running_at = t + a;
                }
            } else {
                (f, failed) = (x, true);
            }
        }
        let len = a + 1;
        run = (len * 2).max(2);
        for (r, c) in cur.iter_mut().enumerate() {
            let closed = *c == CLOSED;
            let w = if closed {
                units
            } else {
                grid.ceil_capped(f64::from(*c), units)
            };
            let mut b = load_int(walk, r) as u128;
            match dampening {
                Dampening::Plain => {
                    if closed {
                        continue;
                    }
                    if let Some(s) = plain_run(score(r), t, len, w, &mut b) {
                        store_int(walk, r, s);
                        *c = CLOSED;
                        still_open -= 1;
                        continue;
                    }
                }
                Dampening::Shifted => {
                    // Every candidate's sum runs to the same distance; one whose δ^PS reached n − 1 keeps it
                    // (δ^PS never decreases), so once all have, further distances add N to every score alike.
                    // (The score so far is signed: two's complement wraps back to it.)
                    b = b.wrapping_add(len as u128 * u128::from(w));
                }
            }
            store_int(walk, r, b as i128);
        }
        t += len;
        if still_open > 0 && cap_gap.is_some() {
            let capped = match dampening {
                Dampening::Plain => plain_capped(cur, walk, &score, t, beyond),
                Dampening::Shifted => cap_gap.is_some_and(|c| shifted_capped(cur, walk, c)),
            };
            if capped {
                break;
            }
        }
        if t < limit && still_open > 0 {
            if running_at < t {
                walk::advance(&subs, n, running, Some(running_at), t)?;
                running_at = t;
            }
            // A probe at t (the run's failed end) already holds δ^PS at t of every candidate still open.
            if probe_at != t {
                eval(t, cur, probed, running, &mut running_at, true, still_open)?;
                probe_at = t;
            }
            for (c, &d) in cur.iter_mut().zip(probed.iter()) {
                if *c != CLOSED {
                    *c = d;
                }
            }
            still_open -= final_scores(cur, dampening);
        }
    }
    for (r, &c) in cur.iter().enumerate() {
        let s = match dampening {
            Dampening::Plain if c == CLOSED => continue,
            Dampening::Plain => plain_end(score(r), t, units, load_int(walk, r) as u128),
            Dampening::Shifted => load_int(walk, r),
        };
        store_int(walk, r, s);
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

/// One round of selection over the first `live` candidates of the map; returns the position picked.
#[allow(clippy::too_many_arguments)]
fn select_round<R: Rng + ?Sized>(
    rng: &mut R,
    p: &mut Parts<'_>,
    utilities: &[f64],
    live: usize,
    m: usize,
    dominance: Dominance,
    sensitivity: &ParetoSensitivity<'_>,
    selector: Selector,
    epsilon: f64,
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    score_round(p, utilities, live, m, dominance);
    match *sensitivity {
        ParetoSensitivity::Global => {
            let scores = &mut p.corners[..live];
            for (s, &c) in scores.iter_mut().zip(p.dominators.iter()) {
                *s = -(c as f64);
            }
            select(rng, selector, scores, (live - 1) as f64, epsilon, p.stage, arithmetic)
        }
        ParetoSensitivity::Local {
            deltas,
            max_distance,
            dampening,
        } => {
            let units = dampened_round(p, utilities, live, m, deltas, max_distance, dampening, epsilon)?;
            match arithmetic {
                Arithmetic::Exact => select_int(rng, selector, &p.walk[..2 * live], units, epsilon, p.stage),
                Arithmetic::Float => {
                    as_unit_scores(&p.walk[..2 * live], units, &mut p.corners[..live]);
                    select(rng, selector, &p.corners[..live], 1.0, epsilon, p.stage, arithmetic)
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
            select_round(
                rng,
                &mut p,
                utilities,
                live,
                m,
                dominance,
                &sensitivity,
                selector,
                eps,
                arithmetic,
            )?
        };
        let chosen = p.map[pick];
        live -= 1;
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
    for (i, x) in p.map.iter_mut().enumerate() {
        *x = i;
    }
    score_round(&mut p, utilities, n, m, dominance);
    let units = match sensitivity {
        ParetoSensitivity::Global => {
            for (s, &c) in p.corners[..n].iter_mut().zip(p.dominators.iter()) {
                *s = -(c as f64);
            }
            return exponential_probabilities(&p.corners[..n], (n - 1) as f64, epsilon, out);
        }
        ParetoSensitivity::Local {
            deltas,
            max_distance,
            dampening,
        } => dampened_round(&mut p, utilities, n, m, deltas, max_distance, dampening, epsilon)?,
    };
    as_unit_scores(&p.walk[..2 * n], units, &mut p.corners[..n]);
    exponential_probabilities(&p.corners[..n], 1.0, epsilon, out)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::dampen::exact_dampened_scores;
    use crate::pareto::pareto_sensitivity_scratch_len;
    use crate::pareto::{pareto_scores, pareto_scores_scratch_len, pareto_sensitivity_table};
    use crate::sensitivity::DeltaSource;
    use std::vec;
    use std::vec::Vec;

    /// The integer scores of one local round and their units per unit of sensitivity.
    fn walk_scores(
        u: &[f64],
        m: usize,
        deltas: &[LocalSensitivity<'_>],
        eps: f64,
        damp: Dampening,
        max: usize,
    ) -> (Vec<i128>, u64) {
        let n = u.len() / m;
        let need = privpareto_scratch_len(n, m).unwrap();
        let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
        let mut p = split(n, m, &mut values, &mut indices).unwrap();
        for (i, x) in p.map.iter_mut().enumerate() {
            *x = i;
        }
        score_round(&mut p, u, n, m, Dominance::Textbook);
        let units = dampened_round(&mut p, u, n, m, deltas, max, damp, eps).unwrap();
        ((0..n).map(|r| load_int(p.walk, r)).collect(), units)
    }

    /// The integer scores of the table form with `columns` distances of δ^PS.
    fn table_scores(
        u: &[f64],
        m: usize,
        deltas: &[LocalSensitivity<'_>],
        damp: Dampening,
        columns: usize,
    ) -> (Vec<i128>, u64, bool) {
        let n = u.len() / m;
        let mut ps = vec![0.0; n];
        let mut order = vec![0usize; pareto_scores_scratch_len(n).unwrap()];
        pareto_scores(u, m, Dominance::Textbook, &mut ps, &mut order).unwrap();
        let s = pareto_sensitivity_scratch_len(n, m).unwrap();
        let (mut tix, mut tv) = (vec![0usize; s.indices], vec![0.0; s.values]);
        let mut table = vec![0.0; n * columns];
        pareto_sensitivity_table(u, m, deltas, columns, &mut table, &mut tix, &mut tv).unwrap();
        let full = (0..n).all(|r| table[r * columns + columns - 1] == (n - 1) as f64);
        let d = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns,
            },
            (n - 1) as f64,
            columns,
            n,
        )
        .unwrap();
        let mut ints = vec![0i128; n];
        let units = exact_dampened_scores(&ps, &d, damp, &mut ints).unwrap();
        (ints, units, full)
    }

    /// Same distribution for the exact selectors: every candidate's gap to the best is the same in both, or
    /// beyond the cap (L units of sensitivity) in both.
    fn same_capped(a: &[i128], b: &[i128], units: u64, eps: f64) -> bool {
        let cap = distance_beyond_cap(eps) as i128 * i128::from(units);
        let (ba, bb) = (*a.iter().max().unwrap(), *b.iter().max().unwrap());
        a.iter()
            .zip(b)
            .all(|(&x, &y)| ba - x == bb - y || (ba - x >= cap && bb - y >= cap))
    }

    /// A non-dominated candidate B still open at the cap distance L (δ^PS(B) = 0 until t = 99) while A is
    /// settled at D = 3: stopping at L would put B only L − 3 above A (not beyond the cap, where the
    /// unbounded table puts it); the plain rule walks on, and the result equals the unbounded table's in
    /// the capped sense. Stopping at L (the former rule, `max_distance` = L) is caught by the same check.
    #[test]
    fn plain_walk_passes_the_cap_distance_while_a_best_candidate_is_open() {
        let u = [100.0, 0.0, 0.0, 100.0, 0.0, 96.0];
        let per = [0.0, 0.0, 1.0];
        let s = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, 150, 3).unwrap();
        let deltas = [s, s];
        let eps = 64.0;
        let (want, units, full) = table_scores(&u, 2, &deltas, Dampening::Plain, 400);
        assert!(full, "the reference table must reach n − 1");
        let (got, got_units) = walk_scores(&u, 2, &deltas, eps, Dampening::Plain, 0);
        assert_eq!(units, got_units);
        assert!(same_capped(&got, &want, units, eps), "{got:?} vs {want:?}");
        let (old, _) = walk_scores(&u, 2, &deltas, eps, Dampening::Plain, distance_beyond_cap(eps));
        assert!(
            !same_capped(&old, &want, units, eps),
            "stopping at L must be caught: {old:?} vs {want:?}"
        );
    }

    /// The automatic walk equals the unbounded table in the capped sense on random small inputs (ties,
    /// δ growing with t, both dampenings, several ε), including inputs where the cap rules stop it early.
    #[test]
    fn automatic_walk_equals_the_unbounded_table_in_the_capped_sense() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k) as usize
        };
        for case in 0..80 {
            let (n, m) = (2 + case % 7, 1 + case % 2);
            let u: Vec<f64> = (0..n * m)
                .map(|_| next(6) as f64 * if case % 3 == 0 { 20.0 } else { 0.5 })
                .collect();
            let per: Vec<f64> = (0..n).map(|_| [0.0, 0.0, 0.25, 1.0][next(4)]).collect();
            let s = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, 60, n).unwrap();
            let deltas = vec![s; m];
            let eps = [64.0, 16.0, 4.0][case % 3];
            for damp in [Dampening::Plain, Dampening::Shifted] {
                let (want, units, full) = table_scores(&u, m, &deltas, damp, 400);
                assert!(full, "case {case}: the reference table must reach n − 1");
                let (got, _) = walk_scores(&u, m, &deltas, eps, damp, 0);
                assert!(
                    same_capped(&got, &want, units, eps),
                    "case {case} {damp:?}: {got:?} vs {want:?}"
                );
            }
        }
    }
}
