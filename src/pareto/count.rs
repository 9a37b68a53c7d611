//! Dominance counting between two point sets: for every query point, how many points cover it in every
//! coordinate. Both the Pareto score and the identity form of δ^PS reduce to this.

use super::dc;
use super::radix::{self, fill_identity, key_of};
use crate::fenwick::Fenwick;

/// Scratch (in `usize`) of the m ≤ 2 sweep for n points: four n-arrays and two key arrays (W words per
/// key: 1 on 64-bit, 2 on 32-bit targets) and, beside them, either the two coordinate-1 orders with their
/// keys and one sort buffer, or the Fenwick tree; that is (7 + 5W) n + 1 words.
fn sweep_scratch_len(n: usize) -> Option<usize> {
    let per = 4 + 2 * radix::WORDS + 2 + 2 * radix::WORDS + radix::scratch_per_item() - radix::WORDS;
    n.checked_mul(per)?.checked_add(1)
}

/// Scratch (in `usize`) that [`dominance_counts`] needs for n points and queries in m coordinates:
/// (7 + 5W) n + 1 for m ≤ 2; for m ≥ 3 records of 2n (m + 1) words and a work area of 2n · max(m + 2, 6)
/// words or the bitset count's, whichever is larger (see [`dc::scratch_len_bi`]).
pub(crate) fn scratch_len(n: usize, m: usize) -> Option<usize> {
    if m <= 2 {
        sweep_scratch_len(n)
    } else {
        dc::scratch_len_bi(n, m)
    }
}

/// Scratch (in `usize`) that [`self_dominance_counts`] needs for n points in m coordinates:
/// (3 + 2W) n + 1 for m ≤ 2 (see [`self_sweep_2d`]); for m ≥ 3 records of n (m + 1) words and a work area
/// of n · max(m + 2, 6) words or the bitset count's, whichever is larger (see [`dc::scratch_len_mono`]).
pub(crate) fn self_scratch_len(n: usize, m: usize) -> Option<usize> {
    if m <= 2 {
        n.checked_mul(3 + 2 * radix::WORDS)?.checked_add(1)
    } else {
        dc::scratch_len_mono(n, m)
    }
}

/// `counts[q]` = #{k < n : x(k, i) ≥ y(q, i) for every i < m} (with `>` instead of `≥` when `strict`).
///
/// - m ≤ 2: a sweep over the first coordinate (points and queries sorted descending) with a Fenwick tree
///   over the rank of the second coordinate: O(n log n), with the sorts done by radix over contiguous keys
///   ([`radix`]) and every rank and threshold computed once by a merge, so no step reads the utilities at
///   random positions more than once per item.
/// - m ≥ 3: multidimensional divide and conquer on integer keys ([`dc`], Bentley 1980), O(n log^(m−1) n):
///   O(n log² n) for m = 3, and for m ≥ 4 with subproblems of a few thousand points counted by chunked
///   bitsets ([`super::bits`]).
///
/// Ties need no special casing: with `≥` a point whose coordinate equals the query's is inserted before
/// the query, with `>` after it, and thresholds are lower or upper bounds in sorted coordinates, so tied
/// values fall on the correct side as a block.
///
/// Requires `counts.len() ≥ n`, `scratch.len() ≥ scratch_len(n, m)`, m ≥ 1 and no NaN from x, y (callers
/// validate); then it cannot panic.
pub(crate) fn dominance_counts<X, Y>(
    n: usize,
    m: usize,
    x: X,
    y: Y,
    strict: bool,
    counts: &mut [usize],
    scratch: &mut [usize],
) where
    X: Fn(usize, usize) -> f64,
    Y: Fn(usize, usize) -> f64,
{
    if m >= 3 {
        return dc::counts_bi(n, m, x, y, strict, dc::TUNING, counts, scratch);
    }
    sweep_2d(n, m, &x, &y, strict, counts, scratch);
}

/// `counts[q]` = #{k < n : x(k, i) ≥ x(q, i) for every i < m}, q itself included: [`dominance_counts`]
/// of a point set against itself, with half the work and records for m ≥ 3. Requires
/// `scratch.len() ≥ self_scratch_len(n, m)`.
pub(crate) fn self_dominance_counts<X>(n: usize, m: usize, x: X, counts: &mut [usize], scratch: &mut [usize])
where
    X: Fn(usize, usize) -> f64,
{
    if m >= 3 {
        return dc::counts_mono(n, m, x, dc::TUNING, counts, scratch);
    }
    self_sweep_2d(n, m, &x, counts, scratch);
}

/// The m ≤ 2 case of [`self_dominance_counts`]: [`sweep_2d`] with the points as their own queries, so one
/// order per coordinate and no thresholds (a point's threshold is its own rank), in (3 + 2W) n + 1 words:
/// the ranks of coordinate 1 are computed first (its order, keys and sort buffer are then free), then the
/// descending order of coordinate 0 with its keys, and the Fenwick tree takes the sort buffer's place.
fn self_sweep_2d<X>(n: usize, m: usize, x: &X, counts: &mut [usize], scratch: &mut [usize])
where
    X: Fn(usize, usize) -> f64,
{
    let w = radix::WORDS;
    let (rank, rest) = scratch.split_at_mut(n);
    let (order, rest) = rest.split_at_mut(n);
    let (keys, work) = rest.split_at_mut(w * n);
    if m == 2 {
        // rank[k]: how many points have a smaller coordinate 1 than point k (ties share it).
        fill_identity(order);
        radix::sort_by_key(order, |k| key_of(x(k, 1)), keys, work);
        let mut lower = 0;
        for j in 0..n {
            if j == 0 || radix::load(keys, j) != radix::load(keys, j - 1) {
                lower = j;
            }
            rank[order[j]] = lower;
        }
    }
    // Descending order in coordinate 0 = ascending order of the complemented keys.
    fill_identity(order);
    radix::sort_by_key(order, |k| !key_of(x(k, 0)), keys, work);
    let mut fen = Fenwick::new(&mut work[..n + 1]);
    let mut next = 0;
    for j in 0..n {
        // Every point tied with point order[j] in coordinate 0 covers it there: insert the whole block first.
        let yk = radix::load(keys, j);
        while next < n && radix::load(keys, next) <= yk {
            if m == 2 {
                fen.add(rank[order[next]]);
            }
            next += 1;
        }
        let q = order[j];
        counts[q] = if m == 2 { next - fen.prefix(rank[q]) } else { next };
    }
}

/// The m ≤ 2 case of [`dominance_counts`].
fn sweep_2d<X, Y>(n: usize, m: usize, x: &X, y: &Y, strict: bool, counts: &mut [usize], scratch: &mut [usize])
where
    X: Fn(usize, usize) -> f64,
    Y: Fn(usize, usize) -> f64,
{
    let w = radix::WORDS;
    let (points, rest) = scratch.split_at_mut(n);
    let (queries, rest) = rest.split_at_mut(n);
    let (point_keys, rest) = rest.split_at_mut(w * n);
    let (query_keys, rest) = rest.split_at_mut(w * n);
    let (rank, rest) = rest.split_at_mut(n);
    let (threshold, work) = rest.split_at_mut(n);
    // Descending order in coordinate 0 = ascending order of the complemented keys.
    fill_identity(points);
    radix::sort_by_key(points, |k| !key_of(x(k, 0)), point_keys, work);
    fill_identity(queries);
    radix::sort_by_key(queries, |q| !key_of(y(q, 0)), query_keys, work);
    if m == 2 {
        // rank[k]: how many points have a smaller coordinate 1 than point k (ties share it).
        // threshold[q]: how many points do NOT cover query q in coordinate 1 — those with x₁ < y₁ for ≥,
        // x₁ ≤ y₁ for >. Both come from one merge of the two ascending orders.
        let (by_x1, rest) = work.split_at_mut(n);
        let (x1_keys, rest) = rest.split_at_mut(w * n);
        let (by_y1, rest) = rest.split_at_mut(n);
        let (y1_keys, tmp) = rest.split_at_mut(w * n);
        fill_identity(by_x1);
        radix::sort_by_key(by_x1, |k| key_of(x(k, 1)), x1_keys, tmp);
        fill_identity(by_y1);
        radix::sort_by_key(by_y1, |q| key_of(y(q, 1)), y1_keys, tmp);
        let mut lower = 0;
        for j in 0..n {
            if j == 0 || radix::load(x1_keys, j) != radix::load(x1_keys, j - 1) {
                lower = j;
            }
            rank[by_x1[j]] = lower;
        }
        let mut below = 0;
        for j in 0..n {
            let yk = radix::load(y1_keys, j);
            while below < n && {
                let xk = radix::load(x1_keys, below);
                if strict {
                    xk <= yk
                } else {
                    xk < yk
                }
            } {
                below += 1;
            }
            threshold[by_y1[j]] = below;
        }
    }
    let mut fen = Fenwick::new(&mut work[..n + 1]);
    let mut next = 0;
    for (j, &q) in queries.iter().enumerate() {
        // Keys are complemented (descending order): x covers y in coordinate 0 ⇔ !key(x) ≤ !key(y)
        // (< for strict covering).
        let yk = radix::load(query_keys, j);
        while next < n && {
            let xk = radix::load(point_keys, next);
            if strict {
                xk < yk
            } else {
                xk <= yk
            }
        } {
            if m == 2 {
                fen.add(rank[points[next]]);
            }
            next += 1;
        }
        counts[q] = if m == 2 { next - fen.prefix(threshold[q]) } else { next };
    }
}
