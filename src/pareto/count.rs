//! Dominance counting between two point sets: for every query point, how many points cover it in every
//! coordinate. Both the Pareto score and the identity form of δ^PS reduce to this.

use super::radix::{self, fill_identity, key_of};
use crate::fenwick::Fenwick;
use crate::float::cmp;

/// Scratch (in `usize`) that [`dominance_counts`] needs for n points. The sweep of m ≤ 2 keeps four
/// n-arrays and two key arrays (W words per key: 1 on 64-bit, 2 on 32-bit targets) and, beside them, either
/// the two coordinate-1 orders with their keys and one sort buffer, or the Fenwick tree; that is
/// (7 + 5W) n + 1 words, more than the 6n + 1 of m = 3 and the n of m ≥ 4.
pub(crate) fn scratch_len(n: usize) -> Option<usize> {
    let per = 4 + 2 * radix::WORDS + 2 + 2 * radix::WORDS + radix::scratch_per_item() - radix::WORDS;
    n.checked_mul(per)?.checked_add(1)
}

/// `counts[q]` = #{k < n : x(k, i) ≥ y(q, i) for every i < m} (with `>` instead of `≥` when `strict`).
///
/// - m ≤ 2: a sweep over the first coordinate (points and queries sorted descending) with a Fenwick tree
///   over the rank of the second coordinate: O(n log n), with the sorts done by radix over contiguous keys
///   ([`radix`]) and every rank and threshold computed once by a merge, so no step reads the utilities at
///   random positions more than once per item.
/// - m = 3: the same sweep inside a divide and conquer over the order of the first coordinate (CDQ):
///   O(n log² n).
/// - m ≥ 4: the points sorted descending by the first coordinate, a binary search for the prefix that
///   can cover the query there, and a scan of that prefix with early exit over the other coordinates:
///   O(n log n + Σ_q |prefix(q)| · m), worst case O(n² m), typically a fraction of it.
///
/// Ties need no special casing: with `≥` a point whose coordinate equals the query's is inserted before
/// the query, with `>` after it, and thresholds are lower or upper bounds in sorted coordinates, so tied
/// values fall on the correct side as a block.
///
/// Requires `counts.len() ≥ n`, `scratch.len() ≥ scratch_len(n)`, m ≥ 1 and no NaN from x, y (callers
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
    let covers = |a: f64, b: f64| if strict { a > b } else { a >= b };
    if m == 3 {
        return counts_3d(n, &x, &y, strict, counts, scratch);
    }
    if m >= 4 {
        let (by_x0, _) = scratch.split_at_mut(n);
        fill_identity(by_x0);
        // Descending, so the points that can cover a query in coordinate 0 form a prefix.
        by_x0.sort_unstable_by(|&a, &b| cmp(x(b, 0), x(a, 0)));
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
    sweep_2d(n, m, &x, &y, strict, counts, scratch);
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

/// A position of point k inside the ascending order `sorted` of the values `v`: the lower bound of its
/// value. Equal values share it, which is all a Fenwick query at a lower or upper bound needs, and it
/// saves an n-slot inverse permutation.
fn rank_of(sorted: &[usize], v: impl Fn(usize) -> f64, k: usize) -> usize {
    let value = v(k);
    sorted.partition_point(|&j| v(j) < value)
}

/// m = 3. Events are the n points (ids 0..n) and the n queries (ids n..2n), ordered by coordinate 0
/// descending; on a tie, points come first for `≥` and queries first for `>`. Then the points that cover
/// a query in coordinate 0 are exactly the events before it, and the divide and conquer (Chen's CDQ)
/// counts, for every split of a range into halves, the left points covering the right queries in
/// coordinates 1 and 2 with a sweep and a Fenwick tree.
fn counts_3d<X, Y>(n: usize, x: &X, y: &Y, strict: bool, counts: &mut [usize], scratch: &mut [usize])
where
    X: Fn(usize, usize) -> f64,
    Y: Fn(usize, usize) -> f64,
{
    let (events, rest) = scratch.split_at_mut(2 * n);
    let (by_x2, rest) = rest.split_at_mut(n);
    let (work, rest) = rest.split_at_mut(2 * n);
    fill_identity(events);
    let key = |e: usize| if e < n { x(e, 0) } else { y(e - n, 0) };
    events.sort_unstable_by(|&a, &b| {
        cmp(key(b), key(a)).then_with(|| {
            // Points before queries for ≥ (a tie covers), queries before points for > (it does not).
            let (pa, pb) = (a < n, b < n);
            if strict {
                pa.cmp(&pb)
            } else {
                pb.cmp(&pa)
            }
        })
    });
    fill_identity(by_x2);
    by_x2.sort_unstable_by(|&a, &b| cmp(x(a, 2), x(b, 2)));
    counts[..n].fill(0);
    let mut ctx = Cdq {
        n,
        x,
        y,
        strict,
        by_x2,
        work,
        fen: Fenwick::new(&mut rest[..n + 1]),
        counts,
    };
    ctx.solve(events);
}

struct Cdq<'a, 'f, X, Y> {
    n: usize,
    x: &'a X,
    y: &'a Y,
    strict: bool,
    by_x2: &'a [usize],
    work: &'a mut [usize],
    fen: Fenwick<'f>,
    counts: &'a mut [usize],
}

impl<X, Y> Cdq<'_, '_, X, Y>
where
    X: Fn(usize, usize) -> f64,
    Y: Fn(usize, usize) -> f64,
{
    /// Adds to every query in `events` the points before it that cover it in coordinates 1 and 2.
    /// Recursion depth is log₂(2n).
    fn solve(&mut self, events: &[usize]) {
        if events.len() < 2 {
            return;
        }
        let (left, right) = events.split_at(events.len() / 2);
        self.solve(left);
        self.solve(right);
        let (n, x, y, strict, by_x2) = (self.n, self.x, self.y, self.strict, self.by_x2);
        let covers = |a: f64, b: f64| if strict { a > b } else { a >= b };
        // Left points and right queries, each sorted descending by coordinate 1.
        let (pts, rest) = self.work.split_at_mut(left.len());
        let mut np = 0;
        for &e in left.iter().filter(|&&e| e < n) {
            pts[np] = e;
            np += 1;
        }
        let mut nq = 0;
        for &e in right.iter().filter(|&&e| e >= n) {
            rest[nq] = e - n;
            nq += 1;
        }
        if np == 0 || nq == 0 {
            return;
        }
        let pts = &mut pts[..np];
        let qs = &mut rest[..nq];
        pts.sort_unstable_by(|&a, &b| cmp(x(b, 1), x(a, 1)));
        qs.sort_unstable_by(|&a, &b| cmp(y(b, 1), y(a, 1)));
        let mut next = 0;
        for &q in qs.iter() {
            let y1 = y(q, 1);
            while next < np && covers(x(pts[next], 1), y1) {
                self.fen.add(rank_of(by_x2, |k| x(k, 2), pts[next]));
                next += 1;
            }
            let y2 = y(q, 2);
            let first = by_x2.partition_point(|&k| !covers(x(k, 2), y2));
            self.counts[q] += next - self.fen.prefix(first);
        }
        // Undo the insertions so the tree is empty again without an O(n) clear.
        for &p in pts[..next].iter() {
            self.fen.remove(rank_of(by_x2, |k| x(k, 2), p));
        }
    }
}
