//! Dominance counting between two point sets: for every query point, how many points cover it in every
//! coordinate. Both the Pareto score and the identity form of δ^PS reduce to this.

use crate::fenwick::Fenwick;
use crate::float::cmp;

/// Scratch (in `usize`) that [`dominance_counts`] needs for n points.
pub(crate) fn scratch_len(n: usize) -> Option<usize> {
    n.checked_mul(4)?.checked_add(1)
}

/// `counts[q]` = #{k < n : x(k, i) ≥ y(q, i) for every i < m} (with `>` instead of `≥` when `strict`).
///
/// m ≤ 2: a sweep over the first coordinate (both sets sorted descending) with a Fenwick tree over the rank
/// of the second coordinate, O(n log n) time. Ties need no special casing: with `≥` every point whose first
/// coordinate equals the query's is inserted before the query is answered, with `>` after, and the
/// rank threshold is a lower or upper bound in the sorted second coordinates, so tied values fall on the
/// correct side as a block.
/// m ≥ 3: the points sorted descending by the first coordinate, a binary search for the prefix that can
/// cover the query in that coordinate, and a scan of that prefix with early exit over the other
/// coordinates: O(n log n + Σ_q |prefix(q)| · m), worst case O(n² m), typically a fraction of it.
///
/// Requires `counts.len() ≥ n`, `scratch.len() ≥ scratch_len(n)`, m ≥ 1 and no NaN from x, y
/// (callers validate); then it cannot panic.
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
    let covers = |a: f64, b: f64| if strict { a > b } else { a >= b };
    let (by_x0, rest) = scratch.split_at_mut(n);
    for (k, slot) in by_x0.iter_mut().enumerate() {
        *slot = k;
    }
    // Descending, so the points that can cover a query in coordinate 0 form a prefix.
    by_x0.sort_unstable_by(|&a, &b| cmp(x(b, 0), x(a, 0)));

    if m >= 3 {
        for (q, c) in counts[..n].iter_mut().enumerate() {
            let y0 = y(q, 0);
            let end = by_x0.partition_point(|&k| covers(x(k, 0), y0));
            *c = by_x0[..end]
                .iter()
                .filter(|&&k| (1..m).all(|i| covers(x(k, i), y(q, i))))
                .count();
        }
        return;
    }

    let (by_y0, rest) = rest.split_at_mut(n);
    for (k, slot) in by_y0.iter_mut().enumerate() {
        *slot = k;
    }
    by_y0.sort_unstable_by(|&a, &b| cmp(y(b, 0), y(a, 0)));
    let (by_x1, rest) = rest.split_at_mut(n);
    let (tree, _) = rest.split_at_mut(n + 1);
    if m == 2 {
        for (k, slot) in by_x1.iter_mut().enumerate() {
            *slot = k;
        }
        by_x1.sort_unstable_by(|&a, &b| cmp(x(a, 1), x(b, 1)));
    }
    let mut fen = Fenwick::new(tree);
    let mut next = 0;
    let mut inserted = 0;
    for &q in by_y0.iter() {
        let y0 = y(q, 0);
        while next < n && covers(x(by_x0[next], 0), y0) {
            if m == 2 {
                fen.add(rank_of(by_x1, &x, by_x0[next]));
            }
            inserted += 1;
            next += 1;
        }
        counts[q] = if m == 2 {
            let y1 = y(q, 1);
            // `by_x1` is ascending, so the points that do not cover y1 form a prefix.
            let first = by_x1.partition_point(|&k| !covers(x(k, 1), y1));
            inserted - fen.prefix(first)
        } else {
            inserted
        };
    }
}

/// A position of point k inside the ascending order `by_x1`: the lower bound of its value. Points with
/// equal values share it, which is all the Fenwick query needs (it only asks "at or after a lower or
/// upper bound"), and it saves an n-slot inverse permutation.
fn rank_of<X: Fn(usize, usize) -> f64>(by_x1: &[usize], x: &X, k: usize) -> usize {
    let v = x(k, 1);
    by_x1.partition_point(|&j| x(j, 1) < v)
}
