//! PrivPareto (PrivPareto paper, §4): private selection by the Pareto score.
//!
//! **Local sensitivity without a table.** The local mechanism dampens the Pareto score PS with δ^PS
//! (Def. 4.5), computed exactly on integer grids (see [`crate::pareto::pareto_sensitivity`]). Dampening a
//! candidate only needs δ^PS(t, r) up to the interval that contains PS(r), so δ^PS is evaluated at the
//! distances the walk needs and each candidate keeps only its running breakpoint: O(n m) memory, no
//! `columns` to guess. δ^PS never decreases in t, so a run of distances on which it keeps its value is
//! crossed in one step; the run's end is searched by a guess (twice the last run), doubling and bisection,
//! and never further than the walk needs (plain: the length after which every open candidate's interval
//! is found at its current δ^PS). Each probe evaluates δ^PS at one distance for the candidates still open
//! only (`pareto::walk`): every candidate's corners, then a sweep over orders kept from the previous probe
//! while many are open, or one blocked pass over the corners when few are; once every objective's δ_i is
//! saturated the corners move by a uniform shift, and for m ≤ 2 the sweep runs over keys stored in sorted
//! order (the same values, bit for bit; see `pareto::walk`). PS and δ^PS are integers, so
//! the dampening is exact (the exact stage of [`crate::dampen`](mod@crate::dampen)) in both arithmetics;
//! the arithmetic only chooses the selector.
//!
//! **Where the walk stops.** δ^PS is saturated to n − 1 from a public distance T on
//! ([`privpareto_saturation`]: the caller's `max_distance`, or an automatic choice from ε, n and the
//! dampening, never beyond [`privpareto_distance_cap`]). Saturating at any public distance keeps δ^PS
//! admissible (Local Dampening paper, Lemma 3.5 and the saturation argument in [`crate::sensitivity`]),
//! so privacy never depends on where the walk stops, and the scores are exactly those of dampening with
//! the n × T table of δ^PS ([`crate::pareto::pareto_sensitivity_table`]). The walk ends at T, or before:
//! plain, once every candidate's interval is found; shifted, once every candidate's δ^PS is n − 1 (it
//! stays so, and every further distance adds the same N to every score). A round walking T distances
//! probes δ^PS at most 3T + 1 times.
//!
//! - *Plain, automatic*: T = min(L, cap) with L = [`distance_beyond_cap`]`(ε)`, the score gap beyond
//!   which the exact selectors weigh every candidate alike (γ ≥ 1024): on Enron (ε = 1/3 per round,
//!   L = 6,146) every candidate's interval is found by t ≈ 700, far before.
//! - *Shifted, automatic*: T = min(⌈2 (16 + ln n) / ε⌉, cap). Shifted scores need δ^PS at every
//!   distance for every candidate, and on heavy-tailed graphs δ^PS changes at every distance until t is
//!   half the largest degree, so walking to saturation costs Θ(n log n) per distance (past the δ_i's own
//!   saturation, two sweeps over sequential arrays); at this T every candidate keeps at least e^{−16}/n of
//!   the best's weight.
//!
//! **Memory** ([`privpareto_scratch_len`]): the candidate map and dominator counts, the objectives'
//! running integer δ sums, the probes' corner keys, the breakpoints (replaced by the final scores) and a stage area
//! that the Pareto score's count, the walk's `u32` arrays and the selector's permutation use in turn;
//! 15 n + 1 words at m = 2 on 64-bit targets, 60 bytes per candidate per objective.

use super::{round_epsilon, shape, take, MultiScratchLen};
use crate::dampen::exact::{plain_end, plain_run, utility_limit, PLAIN_UNITS};
use crate::dampen::Dampening;
use crate::exact::{scale::distance_beyond_cap, Grid};
use crate::pareto::delta::objective_grid;
use crate::pareto::walk::{self, Live, CLOSED};
use crate::pareto::{dominator_counts, self_scratch_len, Dominance};
use crate::select::exact::{as_words, load_int, store_int};
use crate::select::{exponential_probabilities, select, select_int, Arithmetic, Selector};
use crate::sensitivity::LocalSensitivity;
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
        /// 0 for automatic saturation, else the number of distances of δ^PS examined before saturating it
        /// to n − 1; never more than [`privpareto_distance_cap`] (see [`privpareto_saturation`]).
        max_distance: usize,
        /// Plain or shifted dampening.
        dampening: Dampening,
    },
}

/// The largest saturation distance of δ^PS in each round of local PrivPareto with m objectives and k
/// rounds (top-k), whatever `max_distance` asks: ⌊C_m / k⌋ with C_m from the table below (the k rounds share
/// the budget; 0 when k > C_m, and then δ^PS is n − 1 from the start and each round is the global
/// mechanism). δ^PS is n − 1 from there on (admissible at any public distance, see the module
/// documentation). It bounds the work: a round walking T distances probes δ^PS at most 3T + 1 times (each
/// probe: the 2nm corners and two dominance counts, O(n log n) for m ≤ 2, O(n log^(m−1) n) for m ≥ 3; see
/// [`crate::pareto::pareto_sensitivity`]; none when T = 0), and calls a caller's δ function at most 8 n m T
/// times (a term is read once per probe that needs it; about 2 n m T on the worst inputs, see
/// `tests/work.rs`). Measured on a 2-core Xeon at n = 1000 with per-candidate δ spread over 30 binades and
/// ε = 10⁻⁹ (the worst inputs of issue 22), one selection takes at most about 0.8 s for every m and k (top-1000
/// with m = 16, of which the thousand Pareto scores take 0.5 s).
///
/// | m   | 1–2  | 3   | 4   | 5–8 | 9–16 |
/// |-----|------|-----|-----|-----|------|
/// | C_m | 2048 | 256 | 128 | 64  | 32   |
pub const fn privpareto_distance_cap(m: usize, k: usize) -> usize {
    let c = match m {
        0..=2 => 2048,
        3 => 256,
        4 => 128,
        5..=8 => 64,
        _ => 32,
    };
    if k <= 1 {
        c
    } else {
        c / k
    }
}

/// The γ of the shifted walk's automatic saturation: see [`privpareto_saturation`].
const SHIFTED_GAMMA: f64 = 16.0;

/// The saturation distance T of δ^PS in one round of local PrivPareto over n candidates with m objectives
/// at the round's ε (ε/k for top-k), for `dampening`, the caller's `max_distance` and k rounds in all:
/// δ^PS(x, t, r) is walked for t < T and is n − 1 from T on. A public function of its arguments, so
/// saturating there keeps δ^PS admissible (Local Dampening paper, Lemma 3.5 and the saturation argument
/// of [`crate::sensitivity`]). With cap = [`privpareto_distance_cap`]`(m, k)`:
///
/// - `max_distance` > 0: min(`max_distance`, cap);
/// - automatic (`max_distance` = 0), plain: min(L, cap), L = [`distance_beyond_cap`]`(ε)` the score gap at
///   which the exact selectors weigh every candidate alike (e^{−1024}); the walk usually stops earlier,
///   once every candidate's dampened score is found;
/// - automatic, shifted: min(⌈2 (16 + ln n) / ε⌉, cap). Shifted scores need δ^PS at every distance below T
///   for every candidate, so the walk's cost grows with T (Θ(n T log n) on heavy-tailed graphs, where
///   δ^PS changes at every distance). At this T the shifted scores differ by at most T + 1 units of
///   sensitivity, so every candidate keeps a weight of at least e^{−16}/n of the best's. Pass a larger
///   `max_distance` (up to the cap) to resolve larger gaps.
pub fn privpareto_saturation(
    n: usize,
    m: usize,
    k: usize,
    epsilon: f64,
    dampening: Dampening,
    max_distance: usize,
) -> usize {
    let cap = privpareto_distance_cap(m, k);
    match (max_distance, dampening) {
        (0, Dampening::Plain) => distance_beyond_cap(epsilon).min(cap),
        (0, Dampening::Shifted) => {
            let t = 2.0 * (SHIFTED_GAMMA + libm::log(n.max(1) as f64)) / epsilon;
            if t.is_finite() && t < cap as f64 {
                (libm::ceil(t) as usize).max(1).min(cap)
            } else {
                cap
            }
        }
        (d, _) => d.min(cap),
    }
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
///   5n + 1 for m ≤ 2 (the Pareto score's count; the walk needs (5 + 2m) n / 2 + 2); for m ≥ 3 the larger
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
    /// δ^PS probes so far (the walk's work counter).
    probes: u64,
    /// Of those, the probes of the sorted mode (`walk::Sorted`).
    sorted_probes: u64,
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
        probes: 0,
        sorted_probes: 0,
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
    // Utilities are private: NaN counts as the lowest, ±∞ as ±f64::MAX (the public rule), never a status.
    let u = |r: usize, i: usize| crate::select::finite(utilities[map[r] * m + i]);
    dominator_counts(live, m, u, dominance, p.dominators, p.stage);
}

/// The least run length L ≤ `cap` after which every open candidate's plain dampening interval is found if
/// δ^PS keeps its value at t on [t, t + L) (the rule of [`plain_run`]), or `cap`.
fn settling_len(cur: &[u32], walk: &[u64], score: &impl Fn(usize) -> i128, grid: &Grid, cap: usize) -> usize {
    let units = grid.units();
    let mut need = 1usize;
    for (r, &c) in cur.iter().enumerate() {
        if c == CLOSED {
            continue;
        }
        let w = grid.ceil_capped(f64::from(c), units);
        if w == 0 {
            return cap;
        }
        let (u, b) = (score(r), load_int(walk, r) as u128);
        // u ≥ 0 settles once b + L w > a, u < 0 once b + L w ≥ a (and a > b while open). |u| ≤ N (the
        // Pareto score is within n − 1 of 0) and b < |u| while open, so the gap fits in 64 bits.
        let Ok(gap) = u64::try_from(u.unsigned_abs().saturating_sub(b)) else {
            return cap;
        };
        let len = if u >= 0 { gap / w + 1 } else { gap.div_ceil(w).max(1) };
        if len >= cap as u64 {
            return cap;
        }
        need = need.max(len as usize);
    }
    need
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
    rounds: usize,
) -> Result<u64, Error> {
    let n = live;
    let grid = Grid::of((n - 1) as f64)?;
    let units = grid.units();
    // δ^PS is saturated to n − 1 from `limit` on (a public distance: see `privpareto_saturation`); the walk
    // stops earlier once every candidate is settled.
    let limit = privpareto_saturation(n, m, rounds, epsilon, dampening, max_distance);
    let map = &p.map[..n];
    let mut subs: heapless::Vec<Live<'_, '_>, MAX_OBJECTIVES> = heapless::Vec::new();
    for d in deltas {
        let grid = objective_grid(d.global())?;
        subs.push(Live { d, map, grid }).map_err(|_| Error::CapacityExceeded)?;
    }
    // Utilities are private: NaN counts as the lowest, ±∞ as ±f64::MAX (the public rule), never a status.
    let u = |r: usize, i: usize| crate::select::finite(utilities[map[r] * m + i]);
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
    let probes = core::cell::Cell::new(0u64);
    let saturation = deltas.iter().map(|d| d.saturation()).max().unwrap_or(0);
    let mut prober = walk::Prober::new(saturation, limit);
    // A probe at `tq` for the walk at distance `floor` ≤ tq (no later probe lies below it).
    let mut eval = |tq: usize,
                    floor: usize,
                    cur: &[u32],
                    probed: &mut [u32],
                    running: &mut [u64],
                    running_at: &mut usize,
                    commit: bool,
                    q: usize| {
        probes.set(probes.get() + 1);
        let area = walk::Area {
            running,
            running_at,
            corners,
            narrow,
            wide,
        };
        prober.probe(u, &subs, n, m, area, tq, floor, commit, |r| cur[r] != CLOSED, q, probed)
    };
    let mut t = 0;
    let mut run = 1usize;
    if limit > 0 {
        eval(0, 0, cur, probed, running, &mut running_at, true, still_open)?;
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
            Dampening::Plain => settling_len(cur, walk, &score, &grid, limit - t),
            Dampening::Shifted => limit - t,
        };
        // Offsets: δ^PS is the same at t + a as at t; at t + f it differs (`failed`) or f = need. The first
        // guess is twice the last run; when it fails beyond t + 1, the search gallops from t + 1 inside it.
        // Either way a run of length L costs at most 2 log₂ L + 3 probes (with the one at its end), so a
        // round walking T distances probes at most 3T + 1 times (see `privpareto_saturation`).
        let (mut a, mut f, mut failed) = (0, need, false);
        let (mut step, mut guessed) = (run, false);
        while a + 1 < f {
            let x = if failed {
                a + (f - a) / 2
            } else {
                (a + step.max(2) - 1).min(f - 1)
            };
            // A probe at t + a + 1 is where the walk goes next whether it succeeds or not: its sums are kept.
            eval(t + x, t, cur, probed, running, &mut running_at, x == a + 1, still_open)?;
            probe_at = t + x;
            if same(probed, cur) {
                a = x;
                step *= 2;
                // Every later probe of this run, and the walk's next distance, lie beyond t + a.
                if running_at < t + a {
                    walk::advance(&subs, n, running, Some(running_at), t + a)?;
                    running_at = t + a;
                }
            } else if a == 0 && x > 1 && !guessed {
                (f, step) = (x, 2);
            } else {
                (f, failed) = (x, true);
            }
            guessed = true;
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
        if t < limit && still_open > 0 {
            if running_at < t {
                walk::advance(&subs, n, running, Some(running_at), t)?;
                running_at = t;
            }
            // A probe at t (the run's failed end) already holds δ^PS at t of every candidate still open.
            if probe_at != t {
                eval(t, t, cur, probed, running, &mut running_at, true, still_open)?;
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
    p.probes += probes.get();
    p.sorted_probes += prober.sorted_probes();
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
    rounds: usize,
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
            let units = dampened_round(p, utilities, live, m, deltas, max_distance, dampening, epsilon, rounds)?;
            match arithmetic {
                Arithmetic::Exact | Arithmetic::Isochronous => {
                    select_int(rng, selector, &p.walk[..2 * live], units, epsilon, p.stage)
                }
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
/// one Pareto score, plus when local at most 3T + 1 δ^PS probes for the round's saturation distance T
/// ([`privpareto_saturation`], at most [`privpareto_distance_cap`]; see the module documentation).
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
    // One key from the caller's generator; every round samples from the call's stream.
    let rng = &mut crate::rng::call_stream(rng);
    let n = shape(utilities, m)?;
    let eps = round_epsilon(epsilon, out.len(), n)?;
    check_local(&sensitivity, n, m)?;
    if arithmetic == Arithmetic::Isochronous {
        return Err(Error::Unsupported);
    }
    if arithmetic == Arithmetic::Exact && selector == Selector::NoisyMax(crate::select::Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    let mut p = split(n, m, values, indices)?;
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
                k,
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
        } => dampened_round(&mut p, utilities, n, m, deltas, max_distance, dampening, epsilon, 1)?,
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
        let (scores, units, _, _) = counted_walk(u, m, deltas, eps, damp, max, 1);
        (scores, units)
    }

    /// [`walk_scores`] for one of `rounds` rounds (saturation `max`, 0 automatic), with the number of δ^PS probes
    /// it made and of those made in the sorted mode.
    fn counted_walk(
        u: &[f64],
        m: usize,
        deltas: &[LocalSensitivity<'_>],
        eps: f64,
        damp: Dampening,
        max: usize,
        rounds: usize,
    ) -> (Vec<i128>, u64, u64, u64) {
        let n = u.len() / m;
        let need = privpareto_scratch_len(n, m).unwrap();
        let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
        let mut p = split(n, m, &mut values, &mut indices).unwrap();
        for (i, x) in p.map.iter_mut().enumerate() {
            *x = i;
        }
        score_round(&mut p, u, n, m, Dominance::Textbook);
        let units = dampened_round(&mut p, u, n, m, deltas, max, damp, eps, rounds).unwrap();
        (
            (0..n).map(|r| load_int(p.walk, r)).collect(),
            units,
            p.probes,
            p.sorted_probes,
        )
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
        let mut order = vec![0usize; pareto_scores_scratch_len(n, m).unwrap()];
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

    /// Every score's gap to the best: what every selector sees (shifted scores of a walk that ended early
    /// differ from the table's by the same N per distance for every candidate).
    fn gaps(s: &[i128]) -> Vec<i128> {
        let best = *s.iter().max().unwrap();
        s.iter().map(|&x| best - x).collect()
    }

    /// A non-dominated candidate B still open at the plain cap distance L (δ^PS(B) = 0 until t = 99) while
    /// A is settled at D = 3: the automatic walk saturates δ^PS at L (a public distance), so its scores are
    /// exactly those of the table saturated there, and not those of the unbounded table (B would be
    /// further above A); a caller's `max_distance` beyond the cap is clamped to the cap.
    #[test]
    fn automatic_plain_walk_saturates_at_the_public_distance() {
        let u = [100.0, 0.0, 0.0, 100.0, 0.0, 96.0];
        let per = [0.0, 0.0, 1.0];
        let s = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, 150, 3).unwrap();
        let deltas = [s, s];
        let eps = 64.0;
        let t = privpareto_saturation(3, 2, 1, eps, Dampening::Plain, 0);
        assert_eq!(t, distance_beyond_cap(eps));
        let (want, units, _) = table_scores(&u, 2, &deltas, Dampening::Plain, t);
        let (got, got_units) = walk_scores(&u, 2, &deltas, eps, Dampening::Plain, 0);
        assert_eq!((gaps(&got), units), (gaps(&want), got_units));
        let (unbounded, _, full) = table_scores(&u, 2, &deltas, Dampening::Plain, 400);
        assert!(full && gaps(&got) != gaps(&unbounded), "{got:?} vs {unbounded:?}");
        let cap = privpareto_distance_cap(2, 1);
        let (want, _, _) = table_scores(&u, 2, &deltas, Dampening::Plain, cap);
        let (got, _) = walk_scores(&u, 2, &deltas, 1e-9, Dampening::Plain, 1 << 40);
        assert_eq!(gaps(&got), gaps(&want));
    }

    /// The automatic walk equals the table saturated at [`privpareto_saturation`] on random small inputs
    /// (ties, δ growing with t, both dampenings, several ε), including inputs where it stops early; the
    /// table saturated one distance later differs on some of them.
    #[test]
    fn automatic_walk_equals_the_saturated_table() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k) as usize
        };
        let mut later_differs = 0;
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
                let t = privpareto_saturation(n, m, 1, eps, damp, 0);
                let (want, units, _) = table_scores(&u, m, &deltas, damp, t);
                let (got, got_units) = walk_scores(&u, m, &deltas, eps, damp, 0);
                assert_eq!(got_units, units);
                assert_eq!(gaps(&got), gaps(&want), "case {case} {damp:?}");
                let (later, _, _) = table_scores(&u, m, &deltas, damp, t + 1);
                later_differs += usize::from(gaps(&got) != gaps(&later));
            }
        }
        assert!(later_differs > 0, "the check must see the saturation distance");
    }

    /// A random heavy-tailed graph on n nodes (preferential ends, duplicates and self loops dropped) as CSR.
    fn small_graph(seed: u64, n: usize) -> (Vec<usize>, Vec<u32>) {
        let mut state = seed | 1;
        let mut next = |k: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k as u64) as usize
        };
        let mut edges = Vec::new();
        for _ in 0..3 * n {
            // The smaller of two uniform draws, squared: low indices are hubs.
            let pick = |x: usize, y: usize| (x.min(y) * x.min(y)) / n;
            let (a, b) = (pick(next(n), next(n)), pick(next(n), next(n)));
            if a != b {
                edges.push((a.min(b) as u32, a.max(b) as u32));
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let mut off = vec![0usize; n + 1];
        for &(a, b) in &edges {
            off[a as usize + 1] += 1;
            off[b as usize + 1] += 1;
        }
        for v in 0..n {
            off[v + 1] += off[v];
        }
        let mut fill = off.clone();
        let mut adj = vec![0u32; off[n]];
        for &(a, b) in &edges {
            adj[fill[a as usize]] = b;
            fill[a as usize] += 1;
            adj[fill[b as usize]] = a;
            fill[b as usize] += 1;
        }
        for v in 0..n {
            adj[off[v]..off[v + 1]].sort_unstable();
        }
        (off, adj)
    }

    /// Runs `f` with every prober on this thread taking the reference path (no shift, no sorted mode).
    fn reference<T>(f: impl FnOnce() -> T) -> T {
        walk::REFERENCE.with(|r| r.set(true));
        let out = f();
        walk::REFERENCE.with(|r| r.set(false));
        out
    }

    /// The walk with the fast probes (the saturated shift and the sorted mode) gives bit for bit the integer
    /// scores of the reference walk, and `select_privpareto` the same picks and the same draws from the
    /// caller's generator: on random heavy-tailed graphs (degree and egodensity with their δ tables, as in
    /// the heavy-tailed bench), on a coarse lattice of ties whose corners meet exactly, and on utilities
    /// beyond 2⁵³ grid units (no fast path); m = 1 and 2, both dampenings, several ε and rounds. The sorted
    /// mode is taken on most of them.
    #[test]
    fn fast_walk_equals_the_reference_walk() {
        use crate::graph::Csr;
        use crate::sensitivity::degree::{degree_all, degree_delta_table};
        use crate::sensitivity::egodensity::{egodensity_all, egodensity_delta_table};
        use rand_core::{Rng, SeedableRng};
        let mut sorted_total = 0;
        for case in 0..24u64 {
            let n = [70usize, 130, 260][(case % 3) as usize];
            let kind = (case / 3) % 4;
            let (off, adj) = small_graph(0x9a9 + case, n);
            let g = Csr::new(&off, &adj).unwrap();
            let cols = [4usize, 16][(case % 2) as usize];
            let (mut deg, mut ego) = (vec![0.0; n], vec![0.0; n]);
            degree_all(&g, &mut deg).unwrap();
            egodensity_all(&g, &mut ego).unwrap();
            let (mut dd, mut de) = (vec![0.0; n * cols], vec![0.0; n * cols]);
            degree_delta_table(&g, cols, &mut dd).unwrap();
            egodensity_delta_table(&g, cols, &mut de).unwrap();
            let u: Vec<f64> = (0..n)
                .flat_map(|v| match kind {
                    0 | 1 => [deg[v], ego[v]],
                    // A lattice of ties: corners meet exactly at many distances.
                    2 => [(deg[v] as usize % 5) as f64, (v % 3) as f64 * 0.5],
                    // Beyond 2⁵³ grid units: the reference path throughout.
                    _ => [1e9 + deg[v], 1e9 - ego[v]],
                })
                .collect();
            let deltas = [
                LocalSensitivity::new(
                    DeltaSource::Table {
                        values: &dd,
                        columns: cols,
                    },
                    1.0,
                    cols,
                    n,
                )
                .unwrap(),
                LocalSensitivity::new(
                    DeltaSource::Table {
                        values: &de,
                        columns: cols,
                    },
                    1.0,
                    cols,
                    n,
                )
                .unwrap(),
            ];
            for m in [2usize, 1] {
                let um: Vec<f64> = if m == 2 {
                    u.clone()
                } else {
                    u.iter().step_by(2).copied().collect()
                };
                let ds = &deltas[..m];
                for damp in [Dampening::Shifted, Dampening::Plain] {
                    for (eps, rounds) in [(1.0, 1), (3.0, 3), (0.3, 1)] {
                        let sorted_walk = || {
                            let (scores, units, _, sorted) = counted_walk(&um, m, ds, eps, damp, 0, rounds);
                            (scores, units, sorted)
                        };
                        let fast = sorted_walk();
                        let slow = reference(sorted_walk);
                        assert_eq!(slow.2, 0, "the reference path takes no sorted probe");
                        assert_eq!(
                            (&fast.0, fast.1),
                            (&slow.0, slow.1),
                            "case {case}, m = {m}, {damp:?}, ε = {eps}"
                        );
                        sorted_total += fast.2;
                        if kind == 3 {
                            assert_eq!(fast.2, 0, "keys beyond 2⁵³ take the reference path");
                        }
                        // End to end: the same picks and the same draws.
                        let run = || {
                            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(case);
                            let need = privpareto_scratch_len(n, m).unwrap();
                            let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
                            let mut out = [0usize; 3];
                            let sens = ParetoSensitivity::Local {
                                deltas: ds,
                                max_distance: 0,
                                dampening: damp,
                            };
                            select_privpareto(
                                &mut rng,
                                &um,
                                m,
                                Dominance::Textbook,
                                sens,
                                Selector::Exponential,
                                eps,
                                &mut out,
                                &mut values,
                                &mut indices,
                                Arithmetic::Exact,
                            )
                            .unwrap();
                            (out, rng.next_u64())
                        };
                        assert_eq!(run(), reference(run), "case {case}, m = {m}, {damp:?}, ε = {eps}");
                    }
                }
            }
        }
        assert!(
            sorted_total > 100,
            "the sorted mode was hardly taken: {sorted_total} probes"
        );
    }

    /// The running-time cases of issue 22 as work counts: n = 1000, per-candidate δ spread over 30 binades
    /// below 10⁻³ (or tables of such values growing with t), ε = 10⁻⁹ (so no stopping rule helps), plain
    /// and shifted, m = 1, 2, 3, 8, 16; every round probes δ^PS at most 3T + 1 times for its saturation
    /// distance T, and T is the cap. (Before the cap, m = 2 shifted ran for more than 12 s; m = 8, > 60 s.)
    /// Also top-k: the k rounds share the cap, so every round walks at most ⌊C_m / k⌋ distances.
    #[test]
    fn issue_22_running_time_cases_are_bounded_by_the_cap() {
        let mut state = 0x5eed_2222_u64;
        let mut unit = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let n = 1000;
        for m in [1usize, 2, 3, 8, 16] {
            let u: Vec<f64> = (0..n * m).map(|_| unit()).collect();
            let per: Vec<Vec<f64>> = (0..m)
                .map(|_| (0..n).map(|_| 1e-3 * libm::exp2(-30.0 * unit())).collect())
                .collect();
            let cols = 24;
            let tables: Vec<Vec<f64>> = per
                .iter()
                .map(|p| {
                    p.iter()
                        .flat_map(|&d| (0..cols).map(move |t| d * (1.0 + t as f64)))
                        .collect()
                })
                .collect();
            for table in [false, true] {
                let deltas: Vec<LocalSensitivity<'_>> = (0..m)
                    .map(|i| {
                        let src = if table {
                            DeltaSource::Table {
                                values: &tables[i],
                                columns: cols,
                            }
                        } else {
                            DeltaSource::PerCandidate(&per[i])
                        };
                        LocalSensitivity::new(src, 1.0, usize::MAX, n).unwrap()
                    })
                    .collect();
                for damp in [Dampening::Plain, Dampening::Shifted] {
                    for (rounds, max) in [(1, 0), (3, 0), (1, usize::MAX), (1000, 0)] {
                        let t = privpareto_saturation(n, m, rounds, 1e-9, damp, max);
                        assert_eq!(t, privpareto_distance_cap(m, rounds));
                        let (_, _, probes, _) = counted_walk(&u, m, &deltas, 1e-9, damp, max, rounds);
                        assert!(
                            probes <= 3 * t as u64 + 1,
                            "m = {m}, table {table}, {damp:?}, {rounds} rounds: {probes} probes for T = {t}"
                        );
                        // The counter is live: here δ^PS changes at every distance up to the cap.
                        if m <= 2 && !table && damp == Dampening::Shifted {
                            assert_eq!(probes, t as u64);
                        }
                        // Beyond C_m rounds nothing is probed: the global mechanism.
                        if t == 0 {
                            assert_eq!(probes, 0);
                        }
                    }
                }
            }
        }
    }
}
