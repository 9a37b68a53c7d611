//! δ^PS probes for a walk over distances (local PrivPareto's dampening, [`crate::multi`]): δ^PS(x, t, r)
//! at one distance t, only for the candidates the walk still needs ("open"), from running sums kept at an
//! earlier distance, with no allocation and little memory.
//!
//! Each probe computes the 2m corner key arrays hi_i, lo_i of every candidate at t (structure of arrays,
//! from the exact integer sums and grids of [`super::delta`], so the keys are those of
//! [`super::pareto_sensitivity`]) and then the identity of [`super::delta`]:
//!
//! δ^PS(x, t, r) = #{r′ : hi(r′) ≥ lo(r) in every objective} − 1 − #{r′ : lo(r′) > hi(r) in every objective}
//!
//! for the open candidates r only, in one of two ways:
//! - **direct** when at most [`DIRECT_MAX`] are open: one pass over the corner arrays in blocks that stay
//!   in the L1 cache, each block counted against every open candidate (O(n m) per open candidate,
//!   branch-free, the corners read from memory once per probe);
//! - **sweep** for m ≤ 2 otherwise: the four (2m) orders of the candidates by hi_i and by lo_i are *kept
//!   between probes* and repaired by an insertion sort, since corners move monotonically with t and
//!   rarely cross: O(n + inversions), with a full O(n log n) sort when the inversions exceed a budget of
//!   8n moves (so no input makes a probe quadratic). One pair of orders serves both counts (points hi and
//!   queries lo for the first, points lo and queries hi for the second); then one merge per count gives the
//!   thresholds in objective 1 and a sweep over objective 0 with a Fenwick tree over the ranks in objective
//!   1 counts, O(n log n). Every array is `u32` (so n ≤ 2³² − 1).
//! - for m ≥ 3 the sweep is [`super::count::dominance_counts`] over every candidate.
//!
//! **Once every δ_i is saturated** (t ≥ T_i − 1 for every objective: each S′_i grows by N_i per distance for
//! every candidate) the corners move rigidly, hi_i by +N_i and lo_i by −N_i per distance, and the orders no
//! longer change. Two fast paths then give the same values, bit for bit, as long as every key is an exact
//! integer below 2⁵³ grid units (checked; otherwise the probes above run):
//! - **shift** ([`shift`]): the corners of the last probe moved by ±N_i (t − a), exact additions of doubles,
//!   instead of being recomputed from the sums and utilities;
//! - **sorted mode** ([`Sorted`], m ≤ 2, more than [`DIRECT_MAX`] open, for the rest of the walk): the keys
//!   are stored once in ascending order with the candidates' positions in the objective-1 orders, and a
//!   probe at t compares H_i + d_i ≥ L_i and L_i − d_i > H_i with d_i = 2 N_i (t − a): both counts run
//!   over sequential arrays (one random access per candidate and count instead of about eight), and no
//!   order is repaired. A count needs no Fenwick tree when one objective decides alone or not at all: every
//!   point covers every query in it (a bounded utility's boxes span its range once its δ_i is saturated,
//!   as egocentric density's do) or none covers any.
//!
//! [`Prober`] chooses the path for each probe. On the heavy-tailed graphs of the `pareto` bench (`heavy`),
//! where shifted dampening probes every distance up to T and δ^PS changes at each, these paths take
//! shifted local PrivPareto from 6–9× plain to 2.2–2.8× (issue 26, target 3; 3.4–5.6× without the
//! one-objective shortcut, which egocentric density takes there).
//!
//! Memory beyond the running integer sums (n m words): 2 n m doubles for the corner keys and, for m ≤ 2,
//! (3 + 2m) n + 1 `u32` ([`sweep_len32`]); the sorted mode lives in the same areas.

use super::count::{self, dominance_counts};
use super::delta::{corner_keys, grid_delta, saturated_part};
use crate::exact::Grid;
use crate::float::cmp;
use crate::sensitivity::LocalSensitivity;
use crate::Error;

/// Marks a candidate the walk no longer needs in the δ^PS arrays.
pub(crate) const CLOSED: u32 = u32::MAX;

/// At most this many open candidates are counted directly rather than by the sweep (measured on Enron: a
/// sweep costs about as much as the direct count of ~100 candidates).
pub(crate) const DIRECT_MAX: usize = 64;

/// `u32` words the m ≤ 2 sweep needs for n candidates: 2m orders, ranks, thresholds, and a counter of
/// inserted positions ([`Counter`], at most n + 3 words).
pub(crate) fn sweep_len32(n: usize, m: usize) -> Option<usize> {
    n.checked_mul(3 + 2 * m)?.checked_add(3)
}

/// `usize` words the m ≥ 3 sweep needs: the two counts and [`dominance_counts`]' scratch.
pub(crate) fn sweep_len_wide(n: usize, m: usize) -> Option<usize> {
    count::scratch_len(n, m)?.checked_add(n.checked_mul(2)?)
}

/// Objective i's sensitivity seen through the walk's candidate map: candidate r is `map[r]` of `d`, on the
/// objective's integer grid ([`super::delta::objective_grid`]).
#[derive(Clone, Copy)]
pub(crate) struct Live<'a, 'b> {
    pub(crate) d: &'b LocalSensitivity<'a>,
    pub(crate) map: &'b [usize],
    pub(crate) grid: Grid,
}

impl Live<'_, '_> {
    fn saturation(&self) -> usize {
        self.d.saturation()
    }

    /// False when no candidate's δ is a known constant (tables and shared slices), so the per-candidate
    /// question need not be asked.
    fn may_be_constant(&self) -> bool {
        self.d.is_fallible() || self.d.constant_below_saturation(0).is_some()
    }

    #[inline(always)]
    fn constant(&self, r: usize) -> Option<f64> {
        self.d.constant_below_saturation(self.map[r])
    }

    #[inline(always)]
    fn delta(&self, r: usize, j: usize) -> Result<u64, Error> {
        Ok(grid_delta(&self.grid, self.d.delta(self.map[r], j)?))
    }
}

/// The base of S′_i(t, r) (its terms below the saturation T, see [`super::delta`]) from the base at
/// distance `at` ≤ t (`None`: from nothing): a product when the candidate's δ_i is constant, else the terms
/// added one by one, exactly as [`super::delta::advance_sums`] does. `constants`: [`Live::may_be_constant`].
#[inline(always)]
fn base_at(d: &Live<'_, '_>, constants: bool, r: usize, base: u64, at: Option<usize>, t: usize) -> Result<u64, Error> {
    let sat = d.saturation();
    let terms = sat.min(t.saturating_add(1));
    let first = at.map_or(0, |a| sat.min(a.saturating_add(1)));
    if terms <= first && at.is_some() {
        return Ok(base);
    }
    if let Some(c) = d.constant(r).filter(|_| constants) {
        return Ok(grid_delta(&d.grid, c) * terms as u64);
    }
    let mut s = if at.is_some() { base } else { 0 };
    for j in first..terms {
        // Fewer than 2³² terms of at most 2³² each: no overflow.
        s += d.delta(r, j)?;
    }
    Ok(s)
}

/// Brings the running bases `running[i·n + r]` (objective-major) from distance `from` to `to` ≥ `from`
/// (`None`: from nothing).
pub(crate) fn advance(
    deltas: &[Live<'_, '_>],
    n: usize,
    running: &mut [u64],
    from: Option<usize>,
    to: usize,
) -> Result<(), Error> {
    for (d, row) in deltas.iter().zip(running.chunks_exact_mut(n)) {
        let sat = d.saturation();
        if from.is_some_and(|f| sat.min(f.saturating_add(1)) >= sat.min(to.saturating_add(1))) {
            continue;
        }
        let constants = d.may_be_constant();
        for (r, b) in row.iter_mut().enumerate() {
            *b = base_at(d, constants, r, *b, from, to)?;
        }
    }
    Ok(())
}

/// Fills `corners` (2 m n keys: hi_i at `[2i·n..]`, lo_i at `[(2i+1)·n..]`) at distance `t` ≥ `at` from
/// the running bases at distance `at`, so that they equal those of [`super::pareto_sensitivity`] at t.
/// `u(r, i)` is the utility. With `commit`, the running bases are left at t (as [`advance`] would leave
/// them, without reading the terms twice); otherwise they are not changed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn corners(
    u: impl Fn(usize, usize) -> f64,
    deltas: &[Live<'_, '_>],
    n: usize,
    running: &mut [u64],
    at: usize,
    t: usize,
    commit: bool,
    corners: &mut [f64],
) -> Result<(), Error> {
    for (i, (d, row)) in deltas.iter().zip(running.chunks_exact_mut(n)).enumerate() {
        let sat = d.saturation();
        let moves = sat.min(t.saturating_add(1)) > sat.min(at.saturating_add(1));
        let extra = saturated_part(&d.grid, sat, t);
        let constants = d.may_be_constant();
        let (hi, lo) = corners[2 * i * n..(2 * i + 2) * n].split_at_mut(n);
        for (r, ((h, l), b)) in hi.iter_mut().zip(lo.iter_mut()).zip(row.iter_mut()).enumerate() {
            let base = if moves {
                base_at(d, constants, r, *b, Some(at), t)?
            } else {
                *b
            };
            if commit {
                *b = base;
            }
            (*h, *l) = corner_keys(&d.grid, u(r, i), base, extra);
        }
    }
    Ok(())
}

/// The walk's areas a probe works in: the running bases (n m, objective-major) and their distance, the
/// corner keys (2 n m), the m ≤ 2 sweep's scratch ([`sweep_len32`]) and the m ≥ 3 one's ([`sweep_len_wide`]).
pub(crate) struct Area<'s> {
    pub(crate) running: &'s mut [u64],
    pub(crate) running_at: &'s mut usize,
    pub(crate) corners: &'s mut [f64],
    pub(crate) narrow: &'s mut [u32],
    pub(crate) wide: &'s mut [usize],
}

/// δ^PS probes for one walk (one round of local PrivPareto): what the corners, the kept orders and the sorted
/// mode hold between probes. Every probe writes the same values for the open candidates whatever path it
/// takes: the corners computed from the sums ([`corners`]) or moved by the saturated shift ([`shift`]), then
/// [`probe`], or the sorted mode ([`Sorted`]) once every δ_i is saturated, for m ≤ 2 and more than
/// [`DIRECT_MAX`] open candidates.
pub(crate) struct Prober {
    kept: Kept,
    keys: Keys,
    sorted: Sorted,
    /// The walk's saturation distance: every probe lies below it.
    limit: usize,
    /// False: every probe computes the corners and calls [`probe`] (the reference the tests compare with).
    fast: bool,
    sorted_probes: u64,
}

#[cfg(test)]
extern crate std;

#[cfg(test)]
std::thread_local! {
    /// Tests: probers made on this thread take the reference path (no shift, no sorted mode).
    pub(crate) static REFERENCE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

impl Prober {
    /// A prober for a walk whose δ_i are saturated from `saturation` (the largest T_i) on, and that probes
    /// only distances below `limit`.
    pub(crate) fn new(saturation: usize, limit: usize) -> Self {
        #[cfg(test)]
        let fast = !REFERENCE.with(|r| r.get());
        #[cfg(not(test))]
        let fast = true;
        Prober {
            kept: Kept::new(saturation),
            keys: Keys::new(saturation),
            sorted: Sorted::new(),
            limit,
            fast,
            sorted_probes: 0,
        }
    }

    /// Probes so far in the sorted mode.
    pub(crate) fn sorted_probes(&self) -> u64 {
        self.sorted_probes
    }

    /// δ^PS at distance `t` < `limit` for every r with `open(r)` (`q` of them), written to `out[r]` (others
    /// untouched, or in the sorted mode their δ^PS too); `floor` ≤ t is the walk's distance (no later probe
    /// lies below it). The corners are computed from the running bases at `area.running_at` ≤ t; with
    /// `commit` the bases are left at t (and `running_at` = t), as [`corners`] leaves them. `u(r, i)` is the
    /// utility. Errors: a δ function's.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn probe(
        &mut self,
        u: impl Fn(usize, usize) -> f64,
        deltas: &[Live<'_, '_>],
        n: usize,
        m: usize,
        area: Area<'_>,
        t: usize,
        floor: usize,
        commit: bool,
        open: impl Fn(usize) -> bool,
        q: usize,
        out: &mut [u32],
    ) -> Result<(), Error> {
        let Area {
            running,
            running_at,
            corners,
            narrow,
            wide,
        } = area;
        if self.sorted.active() && q <= DIRECT_MAX {
            self.sorted.leave();
        }
        // Where every δ_i is saturated the corners move by a uniform shift: no sum or utility is read.
        if self.fast && (self.sorted.active() || shift(deltas, n, corners, &mut self.keys, t)) {
            if commit {
                advance(deltas, n, running, Some(*running_at), t)?;
            }
        } else {
            self::corners(u, deltas, n, running, *running_at, t, commit, corners)?;
            self.keys.computed(corners, t);
        }
        if commit {
            *running_at = t;
        }
        if self.sorted.active() {
            self.sorted_probes += 1;
            self.sorted.probe(n, m, corners, t, out, narrow);
            return Ok(());
        }
        probe(n, m, corners, t, open, q, out, narrow, wide, &mut self.kept);
        if self.fast {
            let (keys, kept) = (&mut self.keys, &mut self.kept);
            self.sorted
                .enter(deltas, n, m, corners, narrow, keys, kept, q, floor, self.limit);
        }
        Ok(())
    }
}

/// Keys below this magnitude are the exact integer corners (see [`super::delta::corner_keys`]): 2⁵³.
const EXACT_KEYS: u64 = 1 << 53;

/// What the corner keys in the walk's `corners` area hold: the keys at distance `at` (usize::MAX: none that
/// can be reused), every one of magnitude at most `bound` < 2⁵³ grid units, so each is its exact integer
/// corner. From distance `uniform_from` on every δ_i is saturated: between two distances t, t′ both at least
/// `uniform_from`, hi_i moves by N_i (t′ − t) and lo_i by −N_i (t′ − t) for every candidate ([`shift`]).
#[derive(Clone, Copy)]
pub(crate) struct Keys {
    at: usize,
    bound: u64,
    uniform_from: usize,
}

impl Keys {
    /// No keys yet, for sensitivities saturated from `saturation` (the largest T_i) on.
    pub(crate) fn new(saturation: usize) -> Self {
        Keys {
            at: usize::MAX,
            bound: 0,
            uniform_from: saturation.saturating_sub(1),
        }
    }

    /// `corners` (2 m n keys, as [`corners`] fills them) were just computed at distance `t`: reusable when
    /// t ≥ `uniform_from` and every key is below 2⁵³ in magnitude.
    pub(crate) fn computed(&mut self, corners: &[f64], t: usize) {
        self.at = usize::MAX;
        if t < self.uniform_from {
            return;
        }
        // NaN never occurs (the keys are rounded integers); it would fail the test below and keep `at` unset.
        let max = corners.iter().fold(0.0f64, |a, &k| a.max(k.abs()));
        if max < EXACT_KEYS as f64 {
            (self.at, self.bound) = (t, max as u64);
        }
    }
}

/// Moves the keys in `corners` from the distance they hold (`keys`) to `t` by the exact shift ±N_i (t − at),
/// when both distances are at least `keys.uniform_from` and every shifted key stays below 2⁵³ in magnitude
/// (so every key before and after is its exact integer corner, and each sum of two doubles below is exact):
/// then `corners` equals what [`corners`] would compute at t, bit for bit, and this returns true. Otherwise
/// it returns false and changes nothing. O(n m) additions, no δ read.
pub(crate) fn shift(deltas: &[Live<'_, '_>], n: usize, corners: &mut [f64], keys: &mut Keys, t: usize) -> bool {
    if keys.at == usize::MAX || t < keys.uniform_from {
        return false;
    }
    let dt = t.abs_diff(keys.at) as u128;
    let widest = deltas.iter().map(|d| u128::from(d.grid.units())).max().unwrap_or(0);
    let bound = u128::from(keys.bound) + widest * dt;
    if bound >= u128::from(EXACT_KEYS) {
        return false;
    }
    for (i, d) in deltas.iter().enumerate() {
        // Below 2⁵³: exact as a double.
        let step = (u128::from(d.grid.units()) * dt) as f64;
        let step = if t >= keys.at { step } else { -step };
        let (hi, lo) = corners[2 * i * n..(2 * i + 2) * n].split_at_mut(n);
        for h in hi.iter_mut() {
            *h += step;
        }
        for l in lo.iter_mut() {
            *l -= step;
        }
    }
    (keys.at, keys.bound) = (t, bound as u64);
    true
}

/// The sorted mode of the m ≤ 2 sweep, for the rest of a walk once every δ_i is saturated.
///
/// From distance `uniform_from` on, hi_i(r) = H_i(r) + N_i (t − a) and lo_i(r) = L_i(r) − N_i (t − a) for
/// the keys H, L at a distance a ≥ `uniform_from`, and the orders of the candidates by each key no longer
/// change. So the keys are stored once in sorted position order (each array ascending, candidate
/// `order_k[j]` at position j), and with d_i = 2 N_i (t − a) a probe at t compares H_i(p) + d_i ≥ L_i(r)
/// (reach) and L_i(p) − d_i > H_i(r) (beyond): exact integers below 2⁵³ ([`Sorted::enter`] checks the
/// bound for every distance below the walk's limit), so each comparison is the one [`probe`] makes on the
/// keys at t, and the counts are the same. Both counts then run over sequential arrays: the objective-1
/// thresholds by a merge, the objective-0 sweep over positions, with the positions of every candidate in the
/// objective-1 orders (`to_hi1`, `to_lo1`) kept where the objective-1 orders were.
///
/// Layout in the sweep's scratch (`narrow`, [`sweep_len32`]): the hi_0 and lo_0 orders stay; for m = 2 the
/// hi_1 and lo_1 orders become `to_hi1[j]` (the hi_1 position of the candidate at hi_0 position j) and
/// `to_lo1[j]` (lo_1 position of the candidate at lo_0 position j); then the thresholds and the counter.
/// `corners` holds the 2m sorted key arrays in place of the candidates' keys.
#[derive(Clone, Copy)]
pub(crate) struct Sorted {
    /// The distance of the stored keys (usize::MAX: not in the sorted mode).
    at: usize,
    /// N_i of the objectives (m ≤ 2).
    units: [u64; 2],
}

impl Sorted {
    /// Not in the sorted mode.
    pub(crate) fn new() -> Self {
        Sorted {
            at: usize::MAX,
            units: [0; 2],
        }
    }

    /// In the sorted mode: every probe goes through [`Sorted::probe`].
    pub(crate) fn active(&self) -> bool {
        self.at != usize::MAX
    }

    /// Leaves the sorted mode (when at most [`DIRECT_MAX`] candidates are open, the direct count is
    /// cheaper): the next probe recomputes the corners ([`corners`]) and [`probe`] sorts the orders again
    /// before it sweeps (the objective-1 slots hold permutations, which it accepts).
    pub(crate) fn leave(&mut self) {
        self.at = usize::MAX;
    }

    /// Enters the sorted mode from the candidates' keys in `corners` (described by `keys`), when m ≤ 2, more
    /// than [`DIRECT_MAX`] candidates are open (`q`), the walk's distance `floor` (no later probe lies below
    /// it) is at least `uniform_from`, and every key
    /// stays an exact integer below 2⁵³ with every offset d_i of a probe below `limit` (the walk's
    /// saturation distance) added. Sorts the kept orders if the last probe did not (`kept`), stores the
    /// sorted keys and the objective-1 positions; afterwards `corners` and the hi_1, lo_1 orders no longer
    /// hold what [`corners`] and [`probe`] expect (`keys` and `kept` are reset accordingly). Returns whether
    /// it entered. O(n) beyond the sort of the orders (nothing when they are sorted).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn enter(
        &mut self,
        deltas: &[Live<'_, '_>],
        n: usize,
        m: usize,
        corners: &mut [f64],
        narrow: &mut [u32],
        keys: &mut Keys,
        kept: &mut Kept,
        q: usize,
        floor: usize,
        limit: usize,
    ) -> bool {
        if self.active()
            || !(1..=2).contains(&m)
            || q <= DIRECT_MAX
            || keys.at == usize::MAX
            || floor < keys.uniform_from
        {
            return false;
        }
        let widest = deltas.iter().map(|d| u128::from(d.grid.units())).max().unwrap_or(0);
        // |key ± d_i| ≤ bound + 2 N_i |t − a| with t, a < limit.
        if u128::from(keys.bound) + 2 * widest * limit as u128 >= u128::from(EXACT_KEYS) {
            return false;
        }
        let (orders, rest) = narrow.split_at_mut(2 * m * n);
        if kept.at == usize::MAX || kept.at.min(keys.at) < kept.uniform_from {
            for (k, order) in orders.chunks_exact_mut(n).enumerate() {
                repair(order, &corners[k * n..(k + 1) * n]);
            }
        }
        // Each key array in the ascending order of its candidates, through two u32 halves of a double.
        let (low, rest) = rest.split_at_mut(n);
        let (high, _) = rest.split_at_mut(n);
        for (order, key) in orders.chunks_exact(n).zip(corners.chunks_exact_mut(n)) {
            for ((&r, l), h) in order.iter().zip(low.iter_mut()).zip(high.iter_mut()) {
                let bits = key[r as usize].to_bits();
                (*l, *h) = (bits as u32, (bits >> 32) as u32);
            }
            for ((k, &l), &h) in key.iter_mut().zip(low.iter()).zip(high.iter()) {
                *k = f64::from_bits(u64::from(l) | u64::from(h) << 32);
            }
        }
        if m == 2 {
            // to_hi1 over the hi_1 order, then to_lo1 over the lo_1 order (`low` holds each inverse in turn).
            let (first, second) = orders.split_at_mut(2 * n);
            let (hi0, lo0) = first.split_at(n);
            let (hi1, lo1) = second.split_at_mut(n);
            for (zero, one) in [(hi0, &mut *hi1), (lo0, &mut *lo1)] {
                for (j, &r) in one.iter().enumerate() {
                    low[r as usize] = j as u32;
                }
                for (slot, &r) in one.iter_mut().zip(zero) {
                    *slot = low[r as usize];
                }
            }
        }
        for (u, d) in self.units.iter_mut().zip(deltas) {
            *u = d.grid.units();
        }
        self.at = keys.at;
        keys.at = usize::MAX;
        kept.at = usize::MAX;
        true
    }

    /// δ^PS at distance `t` for every candidate r, written to `out[r]`, in the sorted mode (see
    /// [`Sorted`]): for the open candidates the values [`probe`] writes at t (it writes no others; here the
    /// others get their δ^PS too, which a walk never reads). Two sweeps over sequential arrays, one random
    /// access per candidate and count, and O(n log(n) / 32) in the counter.
    pub(crate) fn probe(&self, n: usize, m: usize, corners: &[f64], t: usize, out: &mut [u32], narrow: &mut [u32]) {
        self.probe_as(n, m, corners, t, out, narrow, Variant::EXACT);
    }

    /// [`Sorted::probe`] as `variant` says: [`Variant::EXACT`], or a broken variant for the tests that must
    /// catch it.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn probe_as(
        &self,
        n: usize,
        m: usize,
        corners: &[f64],
        t: usize,
        out: &mut [u32],
        narrow: &mut [u32],
        variant: Variant,
    ) {
        // d_i = 2 N_i (t − a), exact as a double (below 2⁵³, checked on entry).
        let steps = t.abs_diff(self.at).saturating_sub(usize::from(variant.short_shift));
        let offset = |i: usize| {
            let d = (2 * u128::from(self.units[i]) * steps as u128) as f64;
            if t >= self.at {
                d
            } else {
                -d
            }
        };
        let (orders, rest) = narrow.split_at_mut(2 * m * n);
        let (hi0, rest_orders) = orders.split_at(n);
        let (lo0, rest_orders) = rest_orders.split_at(n);
        let (_, rest) = rest.split_at_mut(n);
        let (thr, fen) = rest.split_at_mut(n);
        let fen = &mut fen[..Counter::len(n)];
        let key = |k: usize| &corners[k * n..(k + 1) * n];
        let (d0, d1) = (offset(0), if m == 2 { offset(1) } else { 0.0 });
        let top = (n - 1) as u32;
        // reach(r) = #{p : H(p) + d ≥ L(r) in every objective}: points hi, queries lo.
        let (to_hi1, to_lo1) = rest_orders.split_at(rest_orders.len() / 2);
        let second = |e1: f64, reach: bool| {
            (m == 2).then(|| {
                let (x1, y1, to_x1, to_y1) = if reach {
                    (key(2), key(3), to_hi1, to_lo1)
                } else {
                    (key(3), key(2), to_lo1, to_hi1)
                };
                Second {
                    x1,
                    e1,
                    y1,
                    to_x1,
                    to_y1,
                }
            })
        };
        sweep((key(0), d0), key(1), second(d1, true), false, lo0, thr, fen, |r, c| {
            out[r] = c
        });
        // beyond(r) = #{p : L(p) − d > H(r) in every objective}: points lo, queries hi.
        let sign = variant.beyond_sign;
        sweep(
            (key(1), sign * d0),
            key(0),
            second(sign * d1, false),
            variant.strict_beyond,
            hi0,
            thr,
            fen,
            |r, c| out[r] = out[r].saturating_sub(1).saturating_sub(c).min(top),
        );
    }
}

/// How [`Sorted::probe_as`] counts: [`Variant::EXACT`] in the library; the tests change one field to show
/// that their checks catch the change.
#[derive(Clone, Copy)]
struct Variant {
    /// The shift one step short (N_i (t − a − 1)).
    short_shift: bool,
    /// The direction the beyond count moves the points: −1 (+1 is the wrong way).
    beyond_sign: f64,
    /// The beyond count strict (non-strict counts ties as beyond).
    strict_beyond: bool,
}

impl Variant {
    const EXACT: Variant = Variant {
        short_shift: false,
        beyond_sign: -1.0,
        strict_beyond: true,
    };
}

/// The second objective of a sorted-mode count: the points' keys `x1` (ascending) moved by `e1`, the queries'
/// keys `y1` (ascending), the x1 position of the point at each x0 position and the y1 position of the query at
/// each y0 position.
#[derive(Clone, Copy)]
struct Second<'a> {
    x1: &'a [f64],
    e1: f64,
    y1: &'a [f64],
    to_x1: &'a [u32],
    to_y1: &'a [u32],
}

/// One count of the sorted mode: for every query r, #{points p : x0(p) + e0 ≥ y0(r) and x1(p) + e1 ≥
/// y1(r)} (`>` when `strict`) to `emit(r, count)`. x0, y0 (and x1, y1) are ascending key arrays over
/// positions; `queries[k]` is the candidate at position k of y0; the second objective, when there is one,
/// gives (x1, e1, y1, x1 position of the point at x0 position j, y1 position of the query at y0 position k).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sweep(
    (x0, e0): (&[f64], f64),
    y0: &[f64],
    second: Option<Second<'_>>,
    strict: bool,
    queries: &[u32],
    thr: &mut [u32],
    fen: &mut [u32],
    mut emit: impl FnMut(usize, u32),
) {
    let n = x0.len();
    if n == 0 {
        return;
    }
    let covers = |x: f64, y: f64| if strict { x > y } else { x >= y };
    let mut second = second;
    if let Some(Second { x1, e1, y1, to_y1, .. }) = second {
        // thr[k]: the points that do not cover the query at y1 position k in objective 1, all at the
        // lowest x1 positions (covering is monotone in x1), so thr rises with k.
        let mut below = 0;
        for (t, &y) in thr.iter_mut().zip(y1) {
            while below < n && !covers(x1[below] + e1, y) {
                below += 1;
            }
            *t = below as u32;
        }
        // Objective 1 decides alone or not at all (its boxes span its whole range, as a bounded utility's do
        // once δ_i is saturated), or objective 0 covers every query with every point: no counter.
        if thr[0] as usize == n {
            // No point covers any query in objective 1.
            for r in 0..n {
                emit(r, 0);
            }
            return;
        }
        if thr[n - 1] == 0 {
            // Every point covers every query in objective 1: objective 0 alone.
            second = None;
        } else if covers(x0[0] + e0, y0[n - 1]) {
            // Every point covers every query in objective 0: objective 1 alone.
            for (&r, &k1) in queries.iter().zip(to_y1) {
                emit(r as usize, (n - thr[k1 as usize] as usize) as u32);
            }
            return;
        } else {
            Counter::clear(fen);
        }
    }
    // Objective 0, descending: insert every point that covers the query before counting it.
    let mut next = 0;
    for k in (0..n).rev() {
        let r = queries[k] as usize;
        let y = y0[k];
        while next < n && covers(x0[n - 1 - next] + e0, y) {
            if let Some(Second { to_x1, .. }) = second {
                Counter::add(fen, to_x1[n - 1 - next] as usize);
            }
            next += 1;
        }
        let c = match second {
            Some(Second { to_y1, .. }) => next as u32 - Counter::prefix(fen, thr[to_y1[k] as usize] as usize),
            None => next as u32,
        };
        emit(r, c);
    }
}

/// Where the orders kept by the m ≤ 2 sweep stand: sorted for the corner keys at distance `at` (usize::MAX:
/// never sorted). From distance `uniform_from` on every δ_i is saturated, so between two distances that are
/// both at least `uniform_from` every corner of objective i moves by the same multiple of N_i; a monotone
/// key of exact values shifted alike keeps a sorted order sorted, and the repair is skipped.
#[derive(Clone, Copy)]
pub(crate) struct Kept {
    pub(crate) at: usize,
    pub(crate) uniform_from: usize,
}

impl Kept {
    /// Orders not sorted yet, for sensitivities saturated from `saturation` (the largest T_i) on.
    pub(crate) fn new(saturation: usize) -> Self {
        Kept {
            at: usize::MAX,
            uniform_from: saturation.saturating_sub(1),
        }
    }
}

/// δ^PS at distance `t` (the distance of `corners`) for every r with `open(r)`, written to `out[r]` (others
/// untouched); `q` is the number of open candidates. `narrow` is the m ≤ 2 sweep's scratch
/// ([`sweep_len32`]), `wide` the m ≥ 3 one's ([`sweep_len_wide`]); the orders in `narrow` are kept between
/// calls (any permutation of 0..n is valid on entry; the caller fills them once with one), and `kept` says
/// for which distance they are sorted.
#[allow(clippy::too_many_arguments)]
pub(crate) fn probe(
    n: usize,
    m: usize,
    corners: &[f64],
    t: usize,
    open: impl Fn(usize) -> bool,
    q: usize,
    out: &mut [u32],
    narrow: &mut [u32],
    wide: &mut [usize],
    kept: &mut Kept,
) {
    let top = (n - 1) as u32;
    let finish = |reach: usize, beyond: usize| reach.saturating_sub(1).saturating_sub(beyond).min(n - 1) as u32;
    if q <= DIRECT_MAX && m <= 2 {
        return direct_narrow(n, m, corners, open, out);
    }
    if q <= DIRECT_MAX || (m >= 3 && q.saturating_mul(16) <= n) {
        for r in (0..n).filter(|&r| open(r)) {
            out[r] = direct(n, m, corners, r).min(top);
        }
        return;
    }
    if m >= 3 {
        let (reach, rest) = wide.split_at_mut(n);
        let (beyond, rest) = rest.split_at_mut(n);
        let hi = |k: usize, i: usize| corners[2 * i * n + k];
        let lo = |k: usize, i: usize| corners[(2 * i + 1) * n + k];
        dominance_counts(n, m, hi, lo, false, reach, rest);
        dominance_counts(n, m, lo, hi, true, beyond, rest);
        for r in (0..n).filter(|&r| open(r)) {
            out[r] = finish(reach[r], beyond[r]);
        }
        return;
    }
    let (orders, rest) = narrow.split_at_mut(2 * m * n);
    let sorted = kept.at != usize::MAX && kept.at.min(t) >= kept.uniform_from;
    if !sorted {
        for (k, order) in orders.chunks_exact_mut(n).enumerate() {
            repair(order, &corners[k * n..(k + 1) * n]);
        }
    }
    kept.at = t;
    let (rank, rest) = rest.split_at_mut(n);
    let (thr, fen) = rest.split_at_mut(n);
    let fen = &mut fen[..Counter::len(n)];
    let side = |k: usize| (&corners[k * n..(k + 1) * n], &orders[k * n..(k + 1) * n]);
    // The second objective's sides, when there is one.
    let second = |k: usize| (m == 2).then(|| side(k));
    // reach(r) = #{r′ : hi(r′) ≥ lo(r)}: points hi, queries lo.
    count(
        side(0),
        side(1),
        second(2),
        second(3),
        false,
        &open,
        rank,
        thr,
        fen,
        |r, c| {
            out[r] = c;
        },
    );
    // beyond(r) = #{r′ : lo(r′) > hi(r)}: points lo, queries hi.
    count(
        side(1),
        side(0),
        second(3),
        second(2),
        true,
        &open,
        rank,
        thr,
        fen,
        |r, c| {
            out[r] = finish(out[r] as usize, c as usize);
        },
    );
}

/// Points per block of the direct count: four blocks of corners stay in the L1 cache while every open
/// candidate is counted against them.
const BLOCK: usize = 512;

/// The direct count for m ≤ 2 and at most [`DIRECT_MAX`] open candidates: one pass over the corners in
/// blocks, each block counted against every open candidate (so the corners are read from memory once, not
/// once per open candidate).
fn direct_narrow(n: usize, m: usize, c: &[f64], open: impl Fn(usize) -> bool, out: &mut [u32]) {
    let mut list = [0usize; DIRECT_MAX];
    let mut q = 0;
    for r in (0..n).filter(|&r| open(r)).take(DIRECT_MAX) {
        list[q] = r;
        q += 1;
    }
    let list = &list[..q];
    let (mut reach, mut beyond) = ([0u32; DIRECT_MAX], [0u32; DIRECT_MAX]);
    let (hi0, lo0) = (&c[..n], &c[n..2 * n]);
    // With m = 1 the second objective is the first again (its comparisons then repeat the first's).
    let (hi1, lo1) = if m == 2 {
        (&c[2 * n..3 * n], &c[3 * n..4 * n])
    } else {
        (hi0, lo0)
    };
    let mut start = 0;
    while start < n {
        let end = (start + BLOCK).min(n);
        let (h0, l0, h1, l1) = (&hi0[start..end], &lo0[start..end], &hi1[start..end], &lo1[start..end]);
        for (k, &r) in list.iter().enumerate() {
            let (a0, a1, b0, b1) = (lo0[r], lo1[r], hi0[r], hi1[r]);
            let (mut x, mut y) = (0u32, 0u32);
            for (((&h0, &l0), &h1), &l1) in h0.iter().zip(l0).zip(h1).zip(l1) {
                x += u32::from((h0 >= a0) & (h1 >= a1));
                y += u32::from((l0 > b0) & (l1 > b1));
            }
            reach[k] += x;
            beyond[k] += y;
        }
        start = end;
    }
    for (k, &r) in list.iter().enumerate() {
        out[r] = reach[k].saturating_sub(1).saturating_sub(beyond[k]).min((n - 1) as u32);
    }
}

/// Both counts of one candidate by a pass over the corners: reach − 1 − beyond (saturating).
fn direct(n: usize, m: usize, c: &[f64], r: usize) -> u32 {
    let (mut reach, mut beyond) = (0u32, 0u32);
    if m <= 2 {
        let (hi0, lo0) = (&c[..n], &c[n..2 * n]);
        let (a0, b0) = (lo0[r], hi0[r]);
        if m == 1 {
            for (&h, &l) in hi0.iter().zip(lo0) {
                reach += u32::from(h >= a0);
                beyond += u32::from(l > b0);
            }
        } else {
            let (hi1, lo1) = (&c[2 * n..3 * n], &c[3 * n..4 * n]);
            let (a1, b1) = (lo1[r], hi1[r]);
            for (((&h0, &l0), &h1), &l1) in hi0.iter().zip(lo0).zip(hi1).zip(lo1) {
                reach += u32::from((h0 >= a0) & (h1 >= a1));
                beyond += u32::from((l0 > b0) & (l1 > b1));
            }
        }
    } else {
        for k in 0..n {
            let (mut all_hi, mut all_lo) = (true, true);
            for i in 0..m {
                let (hi, lo) = (&c[2 * i * n..], &c[(2 * i + 1) * n..]);
                all_hi &= hi[k] >= lo[r];
                all_lo &= lo[k] > hi[r];
            }
            reach += u32::from(all_hi);
            beyond += u32::from(all_lo);
        }
    }
    reach.saturating_sub(1).saturating_sub(beyond)
}

/// Sorts `order` (a permutation) ascending by `v`: insertion sort from the order it holds, or a full sort
/// once the moves exceed 8n.
fn repair(order: &mut [u32], v: &[f64]) {
    let n = order.len();
    let budget = 8 * n + 64;
    let mut moves = 0;
    for j in 1..n {
        let x = order[j];
        let key = v[x as usize];
        let mut i = j;
        while i > 0 && v[order[i - 1] as usize] > key {
            order[i] = order[i - 1];
            i -= 1;
        }
        order[i] = x;
        moves += j - i;
        if moves > budget {
            order.sort_unstable_by(|&a, &b| cmp(v[a as usize], v[b as usize]));
            return;
        }
    }
}

/// How many of the positions 0..n − 1 are in a set that only grows, by prefix: a bitset (one bit per
/// position, 32 to a word) and a Fenwick tree over its words (slot 0 unused). Both are n/16 words or so, so
/// they stay in the cache where a Fenwick tree over the positions themselves (n words, one random access per
/// level) did not; a prefix is the tree's count of the whole words below and one popcount.
struct Counter;

impl Counter {
    /// `u32` words for n positions: ⌈n/32⌉ bit words and ⌈n/32⌉ + 1 tree slots (≤ n + 3).
    fn len(n: usize) -> usize {
        2 * n.div_ceil(32) + 1
    }

    /// Empties the set.
    fn clear(c: &mut [u32]) {
        c.fill(0);
    }

    /// Adds position `pos` (not in the set yet).
    #[inline(always)]
    fn add(c: &mut [u32], pos: usize) {
        let words = (c.len() - 1) / 2;
        let (bits, tree) = c.split_at_mut(words);
        bits[pos / 32] |= 1 << (pos % 32);
        let mut i = pos / 32 + 1;
        while i < tree.len() {
            tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }

    /// How many positions below `end` are in the set.
    #[inline(always)]
    fn prefix(c: &[u32], end: usize) -> u32 {
        let words = (c.len() - 1) / 2;
        let (bits, tree) = c.split_at(words);
        let (w, b) = (end / 32, end % 32);
        let mut sum = if w < words && b > 0 {
            (bits[w] & ((1u32 << b) - 1)).count_ones()
        } else {
            0
        };
        let mut i = w.min(words);
        while i > 0 {
            sum += tree[i];
            i &= i - 1;
        }
        sum
    }
}

/// For every open query r: #{points p : x0(p) ≥ y0(r) and x1(p) ≥ y1(r)} (`>` when `strict`), passed to
/// `emit(r, count)`. Each side is (values, ascending order); the second objective's are `None` when m = 1.
#[allow(clippy::too_many_arguments)]
fn count(
    (x0, px0): (&[f64], &[u32]),
    (y0, qy0): (&[f64], &[u32]),
    x1: Option<(&[f64], &[u32])>,
    y1: Option<(&[f64], &[u32])>,
    strict: bool,
    open: &impl Fn(usize) -> bool,
    rank: &mut [u32],
    thr: &mut [u32],
    fen: &mut [u32],
    mut emit: impl FnMut(usize, u32),
) {
    let n = px0.len();
    let covers = |x: f64, y: f64| if strict { x > y } else { x >= y };
    let two = if let (Some((x1, px1)), Some((y1, qy1))) = (x1, y1) {
        // rank[p]: p's position in the ascending order of x1; thr[r]: how many points do not cover query r
        // in objective 1. Covering is monotone in x1, so the points that cover r there are exactly those at
        // positions ≥ thr[r] (ties are contiguous and on the same side).
        for (j, &p) in px1.iter().enumerate() {
            rank[p as usize] = j as u32;
        }
        let mut below = 0;
        for &r in qy1 {
            let r = r as usize;
            if !open(r) {
                continue;
            }
            let y = y1[r];
            while below < n && !covers(x1[px1[below] as usize], y) {
                below += 1;
            }
            thr[r] = below as u32;
        }
        Counter::clear(fen);
        true
    } else {
        false
    };
    // Objective 0, descending: insert every point that covers the query before counting it.
    let mut next = 0;
    for &r in qy0.iter().rev() {
        let r = r as usize;
        if !open(r) {
            continue;
        }
        let y = y0[r];
        while next < n && covers(x0[px0[n - 1 - next] as usize], y) {
            if two {
                Counter::add(fen, rank[px0[n - 1 - next] as usize] as usize);
            }
            next += 1;
        }
        let c = next as u32 - if two { Counter::prefix(fen, thr[r] as usize) } else { 0 };
        emit(r, c);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::pareto::delta::objective_grid;
    use crate::pareto::{pareto_sensitivity, pareto_sensitivity_scratch_len};
    use crate::sensitivity::{DeltaFunction, DeltaSource};
    use std::vec;
    use std::vec::Vec;

    struct Xorshift(u64);

    impl Xorshift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, k: u64) -> usize {
            (self.next() % k) as usize
        }
    }

    /// A δ function that knows the constant of the even candidates only (the per-candidate question
    /// [`advance_sums`](super::super::delta::advance_sums) once answered for all from candidate 0).
    struct HalfConstant;

    impl DeltaFunction for HalfConstant {
        fn delta(&self, r: usize, t: usize) -> f64 {
            if r.is_multiple_of(2) {
                0.75
            } else {
                0.25 * (1 + (r + t) % 3) as f64
            }
        }

        fn constant(&self, r: usize) -> Option<f64> {
            r.is_multiple_of(2).then_some(0.75)
        }
    }

    /// Which engine a check runs: the real one, or a deliberately broken variant the check must catch.
    #[derive(Clone, Copy, PartialEq)]
    enum Variant {
        Real,
        /// The second count with `≥` instead of `>` (ties counted as beyond).
        NonStrictBeyond,
        /// The kept orders used as they are, not repaired.
        StaleOrders,
    }

    /// Probes at a random walk of distances, with random open sets (all, many, few), against
    /// `pareto_sensitivity` at the same distance; returns the number of mismatching values.
    fn check(seed: u64, n: usize, m: usize, ties: bool, source: usize, variant: Variant) -> usize {
        let mut g = Xorshift(seed);
        let u: Vec<f64> = (0..n * m)
            .map(|_| {
                if ties {
                    g.below(5) as f64 * 0.5
                } else {
                    (g.next() >> 11) as f64 / (1u64 << 53) as f64 * 10.0
                }
            })
            .collect();
        let per: Vec<Vec<f64>> = (0..m)
            .map(|_| (0..n).map(|_| g.below(5) as f64 * 0.25).collect())
            .collect();
        let cols = 6;
        let tables: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                (0..n * cols)
                    .map(|k| per[i][k / cols] + 0.125 * (k % cols) as f64 + 0.1)
                    .collect()
            })
            .collect();
        let half = HalfConstant;
        let deltas: Vec<LocalSensitivity<'_>> = (0..m)
            .map(|i| {
                let src = match (source + i) % 3 {
                    0 => DeltaSource::PerCandidate(&per[i]),
                    1 => DeltaSource::Table {
                        values: &tables[i],
                        columns: cols,
                    },
                    _ => DeltaSource::Function(&half),
                };
                LocalSensitivity::new(src, 2.0, 9, n).unwrap()
            })
            .collect();
        let map: Vec<usize> = (0..n).collect();
        let live = live_of(&deltas, &map);
        let Buffers {
            mut running,
            mut corner,
            mut narrow,
            mut wide,
            mut idx,
            mut val,
            mut want,
            mut got,
        } = Buffers::new(n, m);
        let mut bad = 0;
        advance(&live, n, &mut running, None, 0).unwrap();
        let mut at = 0;
        // The orders are sorted for a distance; from the saturation on they are not repaired again.
        let mut kept = Kept::new(deltas.iter().map(|d| d.saturation()).max().unwrap_or(0));
        for round in 0..12 {
            let t = at + g.below(4) + if round % 4 == 3 { 9 } else { 0 };
            let commit = g.below(2) == 0;
            corners(|r, i| u[r * m + i], &live, n, &mut running, at, t, commit, &mut corner).unwrap();
            if commit {
                at = t;
            }
            let open: Vec<bool> = match round % 3 {
                0 => vec![true; n],
                1 => (0..n).map(|_| g.below(4) != 0).collect(),
                _ => (0..n).map(|_| g.below(n as u64 / 4 + 1) == 0).collect(),
            };
            let q = open.iter().filter(|&&o| o).count();
            got.fill(CLOSED);
            match variant {
                Variant::Real => probe(
                    n,
                    m,
                    &corner,
                    t,
                    |r| open[r],
                    q,
                    &mut got,
                    &mut narrow,
                    &mut wide,
                    &mut kept,
                ),
                Variant::NonStrictBeyond | Variant::StaleOrders => broken(
                    n,
                    m,
                    &corner,
                    &open,
                    &mut got,
                    &mut narrow,
                    variant == Variant::StaleOrders,
                ),
            }
            pareto_sensitivity(&u, m, &deltas, t, &mut want, &mut idx, &mut val).unwrap();
            for r in 0..n {
                let expect = if open[r] { want[r] as u32 } else { CLOSED };
                bad += usize::from(got[r] != expect);
            }
        }
        bad
    }

    /// The m ≤ 2 sweep with one deliberate fault, for [`check`] to catch.
    fn broken(n: usize, m: usize, c: &[f64], open: &[bool], out: &mut [u32], narrow: &mut [u32], stale: bool) {
        let (orders, rest) = narrow.split_at_mut(2 * m * n);
        if !stale {
            for (k, order) in orders.chunks_exact_mut(n).enumerate() {
                repair(order, &c[k * n..(k + 1) * n]);
            }
        }
        let (rank, rest) = rest.split_at_mut(n);
        let (thr, fen) = rest.split_at_mut(n);
        let fen = &mut fen[..Counter::len(n)];
        let side = |k: usize| (&c[k * n..(k + 1) * n], &orders[k * n..(k + 1) * n]);
        let second = |k: usize| (m == 2).then(|| side(k));
        let open = |r: usize| open[r];
        count(
            side(0),
            side(1),
            second(2),
            second(3),
            false,
            &open,
            rank,
            thr,
            fen,
            |r, x| out[r] = x,
        );
        count(
            side(1),
            side(0),
            second(3),
            second(2),
            stale,
            &open,
            rank,
            thr,
            fen,
            |r, x| {
                out[r] = (out[r] as usize)
                    .saturating_sub(1)
                    .saturating_sub(x as usize)
                    .min(n - 1) as u32;
            },
        );
    }

    /// The probes equal `pareto_sensitivity` for m = 1, 2, 3, with and without heavy ties, every kind of
    /// δ source (a function that knows only some candidates' constants included), sizes on both sides of
    /// the direct count's threshold, open sets of every size and distances moving up and down.
    #[test]
    fn probes_equal_pareto_sensitivity() {
        for m in 1..=3 {
            for n in [1usize, 2, 3, 7, 40, 150, 400] {
                for ties in [true, false] {
                    for source in 0..3 {
                        let bad = check(0x5eed + (n * 10 + m) as u64, n, m, ties, source, Variant::Real);
                        assert_eq!(bad, 0, "m = {m}, n = {n}, ties {ties}, source {source}");
                    }
                }
            }
        }
    }

    /// The check above catches a sweep that counts ties as beyond and one that skips the order repair.
    #[test]
    fn probe_check_catches_broken_variants() {
        for variant in [Variant::NonStrictBeyond, Variant::StaleOrders] {
            let bad: usize = (0..3).map(|s| check(0xbad + s, 300, 2, true, 1, variant)).sum();
            assert!(bad > 0, "a broken variant went unnoticed");
        }
    }

    /// The objectives' live views of `deltas` over the candidates `map`.
    fn live_of<'a, 'd>(deltas: &'a [LocalSensitivity<'d>], map: &'a [usize]) -> Vec<Live<'a, 'd>> {
        deltas
            .iter()
            .map(|d| Live {
                d,
                map,
                grid: objective_grid(d.global()).unwrap(),
            })
            .collect()
    }

    /// The probes' buffers for n candidates and m objectives (the orders sorted for distance 0), the
    /// reference's scratch, and the expected and probed δ^PS.
    struct Buffers {
        running: Vec<u64>,
        corner: Vec<f64>,
        narrow: Vec<u32>,
        wide: Vec<usize>,
        idx: Vec<usize>,
        val: Vec<f64>,
        want: Vec<f64>,
        got: Vec<u32>,
    }

    impl Buffers {
        fn new(n: usize, m: usize) -> Self {
            let mut narrow = vec![0u32; sweep_len32(n, m.min(2)).unwrap()];
            for order in narrow[..2 * m.min(2) * n].chunks_exact_mut(n) {
                for (k, o) in order.iter_mut().enumerate() {
                    *o = k as u32;
                }
            }
            let need = pareto_sensitivity_scratch_len(n, m).unwrap();
            Buffers {
                running: vec![0u64; n * m],
                corner: vec![0.0; 2 * n * m],
                narrow,
                wide: vec![0usize; if m >= 3 { sweep_len_wide(n, m).unwrap() } else { 0 }],
                idx: vec![0usize; need.indices],
                val: vec![0.0; need.values],
                want: vec![0.0; n],
                got: vec![CLOSED; n],
            }
        }
    }

    /// A deliberate fault of the sorted mode, for [`walk_check`] to catch.
    #[derive(Clone, Copy, PartialEq)]
    enum Fault {
        None,
        /// The beyond count non-strict (ties counted as beyond).
        NonStrictBeyond,
        /// The beyond count with the points moved the wrong way (+d instead of −d).
        BeyondSign,
        /// The shift one step short (N_i (t − a − 1)).
        ShortShift,
    }

    /// The sorted mode's probe with `fault` ([`Sorted::probe_as`] with one change).
    #[allow(clippy::too_many_arguments)]
    fn faulty_sorted_probe(
        s: &Sorted,
        n: usize,
        m: usize,
        c: &[f64],
        t: usize,
        out: &mut [u32],
        narrow: &mut [u32],
        fault: Fault,
    ) {
        let variant = super::Variant {
            short_shift: fault == Fault::ShortShift,
            beyond_sign: if fault == Fault::BeyondSign { 1.0 } else { -1.0 },
            strict_beyond: fault != Fault::NonStrictBeyond,
        };
        s.probe_as(n, m, c, t, out, narrow, variant);
    }

    /// A walk of probes through [`Prober`] (floor rising, probes above it moving up and down, commits, open
    /// sets of every size, δ saturated from distance 3, 5 or 9 so that the shift and the sorted mode are
    /// taken), each against `pareto_sensitivity` at the same distance; returns the mismatching values and
    /// the probes made in the sorted mode. With a `fault`, the sorted mode's probes run the faulty copy.
    fn walk_check(seed: u64, n: usize, m: usize, kind: usize, source: usize, fault: Fault) -> (usize, u64) {
        let mut g = Xorshift(seed);
        // kind 0: continuous; 1: heavy ties on a coarse lattice; 2: a wider lattice whose corners meet
        // exactly for many distances (δ a multiple of the lattice step); 3: utilities near 2⁴⁰ (keys beyond
        // 2⁵³: no fast path).
        let u: Vec<f64> = (0..n * m)
            .map(|_| match kind {
                0 => (g.next() >> 11) as f64 / (1u64 << 53) as f64 * 10.0,
                1 => g.below(6) as f64 * 0.5,
                2 => g.below(80) as f64 * 0.5,
                _ => (1u64 << 40) as f64 + g.below(8) as f64,
            })
            .collect();
        let step = if kind == 2 { 0.25 } else { 0.125 };
        let per: Vec<Vec<f64>> = (0..m)
            .map(|_| (0..n).map(|_| g.below(5) as f64 * step).collect())
            .collect();
        let cols = 6;
        let tables: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                (0..n * cols)
                    .map(|k| per[i][k / cols] + step * (k % cols) as f64)
                    .collect()
            })
            .collect();
        let half = HalfConstant;
        let saturation = [3, 5, 9][(seed % 3) as usize];
        let deltas: Vec<LocalSensitivity<'_>> = (0..m)
            .map(|i| {
                let src = match (source + i) % 3 {
                    0 => DeltaSource::PerCandidate(&per[i]),
                    1 => DeltaSource::Table {
                        values: &tables[i],
                        columns: cols,
                    },
                    _ => DeltaSource::Function(&half),
                };
                LocalSensitivity::new(src, 1.0, saturation, n).unwrap()
            })
            .collect();
        let map: Vec<usize> = (0..n).collect();
        let live = live_of(&deltas, &map);
        let limit = 48;
        let Buffers {
            mut running,
            mut corner,
            mut narrow,
            mut wide,
            mut idx,
            mut val,
            mut want,
            mut got,
        } = Buffers::new(n, m);
        let mut bad = 0;
        advance(&live, n, &mut running, None, 0).unwrap();
        let mut running_at = 0;
        let mut prober = Prober::new(saturation, limit);
        let mut floor = 0;
        while floor < limit {
            for _ in 0..3 {
                // As in the walk, no probe lies below the committed sums: a commit moves the floor up.
                let t = (floor.max(running_at) + g.below(6)).min(limit - 1);
                let commit = g.below(2) == 0;
                let open: Vec<bool> = match g.below(4) {
                    0 => (0..n).map(|_| g.below(4) != 0).collect(),
                    1 => (0..n).map(|_| g.below(n as u64 / 8 + 1) == 0).collect(),
                    _ => vec![true; n],
                };
                let q = open.iter().filter(|&&o| o).count();
                got.fill(CLOSED);
                let area = Area {
                    running: &mut running,
                    running_at: &mut running_at,
                    corners: &mut corner,
                    narrow: &mut narrow,
                    wide: &mut wide,
                };
                if fault != Fault::None && prober.sorted.active() && q > DIRECT_MAX {
                    // The faulty copy in place of the sorted mode's probe (the running bases stay).
                    faulty_sorted_probe(&prober.sorted, n, m, &corner, t, &mut got, &mut narrow, fault);
                    prober.sorted_probes += 1;
                } else {
                    prober
                        .probe(
                            |r, i| u[r * m + i],
                            &live,
                            n,
                            m,
                            area,
                            t,
                            floor,
                            commit,
                            |r| open[r],
                            q,
                            &mut got,
                        )
                        .unwrap();
                }
                pareto_sensitivity(&u, m, &deltas, t, &mut want, &mut idx, &mut val).unwrap();
                for r in (0..n).filter(|&r| open[r]) {
                    bad += usize::from(got[r] != want[r] as u32);
                }
            }
            floor = floor.max(running_at) + 1 + g.below(3);
            if running_at < floor.min(limit - 1) {
                advance(&live, n, &mut running, Some(running_at), floor.min(limit - 1)).unwrap();
                running_at = floor.min(limit - 1);
            }
        }
        (bad, prober.sorted_probes())
    }

    /// The prober's fast paths (the saturated shift, and for m ≤ 2 the sorted mode) give the values of
    /// `pareto_sensitivity` for m = 1, 2, 3: continuous utilities, heavy ties, corners that meet exactly, every δ
    /// source, open sets above and below the direct count's threshold; keys beyond 2⁵³ take the reference
    /// path (no sorted probe); every other case reaches the sorted mode.
    #[test]
    fn fast_probes_equal_pareto_sensitivity() {
        for m in 1..=3 {
            for n in [2usize, 65, 150, 400] {
                for kind in 0..4 {
                    for source in 0..3 {
                        let seed = 0xfa57 + (n * 100 + m * 10 + kind) as u64 + source as u64 * 7;
                        let (bad, sorted) = walk_check(seed, n, m, kind, source, Fault::None);
                        assert_eq!(bad, 0, "m = {m}, n = {n}, kind {kind}, source {source}");
                        if kind == 3 || n <= DIRECT_MAX || m == 3 {
                            assert_eq!(sorted, 0, "m = {m}, n = {n}, kind {kind}");
                        } else {
                            assert!(
                                sorted > 0,
                                "m = {m}, n = {n}, kind {kind}, source {source}: no sorted probe"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The check above catches a sorted mode that counts ties as beyond, moves the beyond count's points the
    /// wrong way, or shifts one step short.
    #[test]
    fn fast_probe_check_catches_broken_variants() {
        for fault in [Fault::NonStrictBeyond, Fault::BeyondSign, Fault::ShortShift] {
            let (bad, sorted): (usize, u64) = (0..4)
                .map(|s| walk_check(0xbad5 + s, 150, 2, 2, (s % 3) as usize, fault))
                .fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
            assert!(
                sorted > 0 && bad > 0,
                "a broken sorted mode went unnoticed: {sorted} {bad}"
            );
        }
    }

    /// The sorted mode's count against the literal count on small random inputs with heavy ties and offsets
    /// that make every shortcut happen (no point covers in objective 1, every point does, every point
    /// covers in objective 0) as well as the counter's general case; m = 1 and 2, both relations.
    #[test]
    fn sorted_sweep_equals_the_literal_count() {
        let mut g = Xorshift(0x5e1e);
        let mut seen = [0usize; 4];
        for case in 0..4000 {
            let n = 1 + g.below(12);
            let two = case % 4 != 0;
            let strict = case % 2 == 0;
            let span = 1 + g.below(4) as u64;
            let v = |g: &mut Xorshift| g.below(span) as f64;
            let (px0, px1): (Vec<f64>, Vec<f64>) = (0..n).map(|_| (v(&mut g), v(&mut g))).unzip();
            let (qy0, qy1): (Vec<f64>, Vec<f64>) = (0..n).map(|_| (v(&mut g), v(&mut g))).unzip();
            let (e0, e1) = (g.below(5) as f64 - 2.0, g.below(5) as f64 - 2.0);
            let order = |a: &[f64]| {
                let mut o: Vec<u32> = (0..n as u32).collect();
                o.sort_by(|&i, &j| cmp(a[i as usize], a[j as usize]));
                o
            };
            let (o_x0, o_x1, o_y0, o_y1) = (order(&px0), order(&px1), order(&qy0), order(&qy1));
            let sorted = |a: &[f64], o: &[u32]| o.iter().map(|&i| a[i as usize]).collect::<Vec<f64>>();
            let (x0, x1, y0, y1) = (
                sorted(&px0, &o_x0),
                sorted(&px1, &o_x1),
                sorted(&qy0, &o_y0),
                sorted(&qy1, &o_y1),
            );
            let position = |o: &[u32]| {
                let mut p = vec![0u32; n];
                for (j, &i) in o.iter().enumerate() {
                    p[i as usize] = j as u32;
                }
                p
            };
            let (pos_x1, pos_y1) = (position(&o_x1), position(&o_y1));
            let to_x1: Vec<u32> = o_x0.iter().map(|&p| pos_x1[p as usize]).collect();
            let to_y1: Vec<u32> = o_y0.iter().map(|&r| pos_y1[r as usize]).collect();
            let second = two.then_some(Second {
                x1: &x1,
                e1,
                y1: &y1,
                to_x1: &to_x1,
                to_y1: &to_y1,
            });
            let (mut thr, mut fen) = (vec![0u32; n], vec![0u32; Counter::len(n)]);
            let mut got = vec![u32::MAX; n];
            sweep((&x0, e0), &y0, second, strict, &o_y0, &mut thr, &mut fen, |r, c| {
                got[r] = c
            });
            let covers = |x: f64, y: f64| if strict { x > y } else { x >= y };
            for r in 0..n {
                let want = (0..n)
                    .filter(|&p| covers(px0[p] + e0, qy0[r]) && (!two || covers(px1[p] + e1, qy1[r])))
                    .count() as u32;
                assert_eq!(got[r], want, "case {case}, r = {r}");
            }
            if two {
                let all0 = covers(x0[0] + e0, y0[n - 1]);
                let path = if thr[0] as usize == n {
                    0
                } else if thr[n - 1] == 0 {
                    1
                } else if all0 {
                    2
                } else {
                    3
                };
                seen[path] += 1;
            }
        }
        assert!(seen.iter().all(|&k| k > 100), "every path of the count: {seen:?}");
    }

    /// The repair sorts from any starting permutation, within its move budget or by the full sort.
    #[test]
    fn repair_sorts_any_permutation() {
        let mut g = Xorshift(77);
        for n in [0usize, 1, 2, 10, 1000] {
            let v: Vec<f64> = (0..n).map(|_| g.below(17) as f64 - 8.0).collect();
            for start in 0..3 {
                let mut order: Vec<u32> = (0..n as u32).collect();
                match start {
                    0 => {}
                    1 => order.reverse(),
                    _ => {
                        for k in (1..n).rev() {
                            order.swap(k, g.below(k as u64 + 1));
                        }
                    }
                }
                repair(&mut order, &v);
                assert!(order.windows(2).all(|w| v[w[0] as usize] <= v[w[1] as usize]));
                let mut seen = order.clone();
                seen.sort_unstable();
                assert!(seen.iter().enumerate().all(|(k, &o)| o as usize == k));
            }
        }
    }
}
