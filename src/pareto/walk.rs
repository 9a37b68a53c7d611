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
//! Memory beyond the running integer sums (n m words): 2 n m doubles for the corner keys and, for m ≤ 2,
//! (3 + 2m) n + 1 `u32` ([`sweep_len32`]).

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
        let live: Vec<Live<'_, '_>> = deltas
            .iter()
            .map(|d| Live {
                d,
                map: &map,
                grid: objective_grid(d.global()).unwrap(),
            })
            .collect();
        let mut running = vec![0u64; n * m];
        let mut corner = vec![0.0; 2 * n * m];
        let mut narrow = vec![0u32; sweep_len32(n, m.min(2)).unwrap()];
        let mut wide = vec![0usize; if m >= 3 { sweep_len_wide(n, m).unwrap() } else { 0 }];
        for order in narrow[..2 * m.min(2) * n].chunks_exact_mut(n) {
            for (k, o) in order.iter_mut().enumerate() {
                *o = k as u32;
            }
        }
        let need = pareto_sensitivity_scratch_len(n, m).unwrap();
        let (mut idx, mut val) = (vec![0usize; need.indices], vec![0.0; need.values]);
        let mut want = vec![0.0; n];
        let mut got = vec![CLOSED; n];
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
