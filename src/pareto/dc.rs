//! Dominance counting in three or more coordinates by multidimensional divide and conquer (J. L. Bentley,
//! "Multidimensional divide-and-conquer", CACM 23(4), 1980; the recursion of H. T. Kung, F. Luccio and
//! F. P. Preparata, "On finding the maxima of a set of vectors", JACM 22(4), 1975): split the points and
//! queries on the last coordinate at a median, recurse on both halves in the same coordinates, and count
//! the pairs that straddle the split — high points over low queries — in one coordinate fewer.
//!
//! Every coordinate is first replaced by an integer key (one radix sort per coordinate), chosen so that
//! "point p covers query q" is `key(p) > key(q)` in every coordinate with no tie left between a point and
//! a query: a tie that covers (≥) gives the point the odd key 2g + 1 and the query 2g, a tie that does not
//! (>) the reverse, g being the rank of the value among the distinct values. Then
//!
//! - a split is a threshold on the integer keys at their median (`select_nth_unstable`, linear) and a
//!   stable partition of the records (id and keys, contiguous): no comparison sort per level, no binary
//!   search, no access to the caller's utilities after the keys are built;
//! - a split never separates a point from a query it ties with, so ties and the strict/non-strict
//!   variants need no case analysis below the key construction;
//! - every subproblem keeps its points and its queries descending in coordinate 1 (partitions are
//!   stable, and each call merges its halves back before returning), so a two-coordinate subproblem is a
//!   merge and a merge sort that counts inversions, O(s log s), and the word-parallel count ([`bits`])
//!   gets coordinate 1 as a prefix for free;
//! - the Pareto score counts one record set against itself ([`counts_mono`]): records keep the point
//!   keys 2g + 1, and a straddling count reads the low half's keys less one, so that ties cover.
//!
//! Subproblems stop splitting when small: a direct double loop under [`Tuning::leaf_pairs`] pairs, the
//! word-parallel count of [`bits`] in 3 or more coordinates under [`Tuning::bitset_3`] or
//! [`Tuning::bitset_many`] points and queries.
//!
//! Cost: O(s log^(d−1) s) for s points and queries in d ≥ 2 coordinates (Bentley's bound; the bounded
//! leaves add O(1) per element and level). A split leaves at most half the records on the side without
//! the median; the other side, when larger, ends in a run of equal keys that the next split separates,
//! so within one coordinate every two levels halve a subproblem. Recursion depth ≤ d (2 log₂ s + 5),
//! enforced by a budget (a subproblem that exhausts it — none can — would be counted directly).

use super::bits;
use super::radix::{self, fill_identity, key_of, load};

/// When the recursion stops splitting.
#[derive(Clone, Copy)]
pub(crate) struct Tuning {
    /// Subproblems with at most this many point–query pairs are counted by a direct double loop.
    pub(crate) leaf_pairs: usize,
    /// Subproblems in 3 coordinates with at most this many points and queries go to the word-parallel
    /// count ([`bits`]); larger ones are split further.
    pub(crate) bitset_3: usize,
    /// The same for 4 or more coordinates.
    pub(crate) bitset_many: usize,
}

impl Tuning {
    /// The largest subproblem the word-parallel count takes.
    const fn largest(&self) -> usize {
        if self.bitset_3 > self.bitset_many {
            self.bitset_3
        } else {
            self.bitset_many
        }
    }

    fn bitset_limit(&self, d: usize) -> usize {
        if d == 3 {
            self.bitset_3
        } else {
            self.bitset_many
        }
    }
}

/// The thresholds in use, measured on this project's bench machine (`cargo bench --bench pareto`). In
/// 3 coordinates a split halves the pairs left (a quarter is dropped, a quarter goes to the O(s log s)
/// two-coordinate count), so splitting pays off sooner than in more coordinates, where a quarter of the
/// pairs goes on in one coordinate fewer.
pub(crate) const TUNING: Tuning = Tuning {
    leaf_pairs: 512,
    bitset_3: 1 << 12,
    bitset_many: 1 << 14,
};

/// The state shared by the recursion: record width, thresholds, the counts and the work area.
struct Ctx<'c> {
    w: usize,
    tuning: Tuning,
    counts: &'c mut [usize],
    buf: &'c mut [usize],
}

/// `usize` scratch of [`counts_bi`] for n points, n queries and m coordinates: records of 2n (m + 1)
/// words (an id and m keys each) and a work area (see [`work_len`]) that also holds the word-parallel
/// count of any subproblem small enough for it ([`bits::scratch_bound`] of at most [`TUNING`]'s largest
/// limit: a constant once n exceeds it).
pub(crate) fn scratch_len_bi(n: usize, m: usize) -> Option<usize> {
    let records = n.checked_mul(2)?.checked_mul(m.checked_add(1)?)?;
    let bitset = if m >= 3 {
        bits::scratch_bound(n.checked_mul(2)?.min(TUNING.largest()), m)
    } else {
        0
    };
    records.checked_add(work_len(n.checked_mul(2)?, m + 1)?.max(bitset))
}

/// `usize` scratch of [`counts_mono`] for n points and m coordinates: n (m + 1) words of records and a
/// work area that also holds the word-parallel count of the records against themselves when n is small
/// enough, or of any subproblem small enough (a constant once n exceeds [`TUNING`]'s largest limit).
pub(crate) fn scratch_len_mono(n: usize, m: usize) -> Option<usize> {
    let records = n.checked_mul(m.checked_add(1)?)?;
    let bitset = if m >= 4 {
        let small = n.min(TUNING.largest());
        bits::scratch_len(small, small, m).max(bits::scratch_bound(small, m - 1))
    } else {
        0
    };
    records.checked_add(work_len(n, m + 1)?.max(bitset))
}

/// Work area for s elements of w words: the radix sort's index, key and temporary arrays ((2W + 2) s),
/// then the reordering of the records (s + s w), then the recursion's median buffer (s), stable
/// partitions (at most s w) and two-coordinate counts (6s).
fn work_len(s: usize, w: usize) -> Option<usize> {
    s.checked_mul((2 * radix::WORDS + 2).max(6).max(w.checked_add(1)?))
}

/// Records live in a flat slice, `w` words each: the id, then one key per coordinate.
#[inline]
pub(crate) fn key(r: &[usize], w: usize, j: usize, c: usize) -> usize {
    r[j * w + 1 + c]
}

/// `counts[q]` = #{k < n : x(k, i) ≥ y(q, i) for every i < m} (with `>` when `strict`), for m ≥ 1.
///
/// Requires `counts.len() ≥ n`, `scratch.len() ≥ scratch_len_bi(n, m)` and no NaN in x, y.
#[allow(clippy::too_many_arguments)]
pub(crate) fn counts_bi<X, Y>(
    n: usize,
    m: usize,
    x: X,
    y: Y,
    strict: bool,
    tuning: Tuning,
    counts: &mut [usize],
    scratch: &mut [usize],
) where
    X: Fn(usize, usize) -> f64,
    Y: Fn(usize, usize) -> f64,
{
    let w = m + 1;
    let (records, work) = scratch.split_at_mut(2 * n * w);
    let (points, queries) = records.split_at_mut(n * w);
    for k in 0..n {
        points[k * w] = k;
        queries[k * w] = k;
    }
    // Elements 0..n are the points, n..2n the queries.
    let (point_bit, query_bit) = if strict { (0, 1) } else { (1, 0) };
    for c in coordinate_order(m) {
        let (idx, rest) = work.split_at_mut(2 * n);
        let (keys, tmp) = rest.split_at_mut(2 * n * radix::WORDS);
        fill_identity(idx);
        radix::sort_by_key(
            idx,
            |e| if e < n { key_of(x(e, c)) } else { key_of(y(e - n, c)) },
            keys,
            tmp,
        );
        let mut g = 0;
        for (j, &e) in idx.iter().enumerate() {
            if j > 0 && load(keys, j) != load(keys, j - 1) {
                g += 1;
            }
            if e < n {
                points[e * w + 1 + c] = 2 * g + point_bit;
            } else {
                queries[(e - n) * w + 1 + c] = 2 * g + query_bit;
            }
        }
    }
    // `idx` holds the ascending order of coordinate 1: lay points and queries out descending in it.
    let (idx, rest) = work.split_at_mut(2 * n);
    let (mut np, mut nq) = (0, n);
    for &e in idx.iter().rev() {
        let (src, at) = if e < n { (&*points, e) } else { (&*queries, e - n) };
        let slot = if e < n { &mut np } else { &mut nq };
        rest[*slot * w..(*slot + 1) * w].copy_from_slice(&src[at * w..(at + 1) * w]);
        *slot += 1;
    }
    points.copy_from_slice(&rest[..n * w]);
    queries.copy_from_slice(&rest[n * w..2 * n * w]);
    counts[..n].fill(0);
    let mut cx = Ctx {
        w,
        tuning,
        counts,
        buf: work,
    };
    bi(&mut cx, points, queries, m, budget(2 * n));
}

/// `counts[q]` = #{k < n : x(k, i) ≥ x(q, i) for every i < m}, itself included: [`counts_bi`] with the
/// points as their own queries, in half the records. Requires `scratch.len() ≥ scratch_len_mono(n, m)`.
pub(crate) fn counts_mono<X>(n: usize, m: usize, x: X, tuning: Tuning, counts: &mut [usize], scratch: &mut [usize])
where
    X: Fn(usize, usize) -> f64,
{
    let w = m + 1;
    let (records, work) = scratch.split_at_mut(n * w);
    for k in 0..n {
        records[k * w] = k;
    }
    for c in coordinate_order(m) {
        let (idx, rest) = work.split_at_mut(n);
        let (keys, tmp) = rest.split_at_mut(n * radix::WORDS);
        fill_identity(idx);
        radix::sort_by_key(idx, |e| key_of(x(e, c)), keys, tmp);
        // Odd keys 2g + 1: as a point a record keeps it, as a query it reads 2g (see `mono`).
        let mut g = 0;
        for (j, &e) in idx.iter().enumerate() {
            if j > 0 && load(keys, j) != load(keys, j - 1) {
                g += 1;
            }
            records[e * w + 1 + c] = 2 * g + 1;
        }
    }
    let (idx, rest) = work.split_at_mut(n);
    for (slot, &e) in idx.iter().rev().enumerate() {
        rest[slot * w..(slot + 1) * w].copy_from_slice(&records[e * w..(e + 1) * w]);
    }
    records.copy_from_slice(&rest[..n * w]);
    // Every candidate covers itself.
    counts[..n].fill(1);
    let mut cx = Ctx {
        w,
        tuning,
        counts,
        buf: work,
    };
    mono(&mut cx, records, m, budget(n));
}

/// The coordinates in the order their keys are computed: 1 last, so that its sort order is at hand to
/// lay the records out descending in coordinate 1 — the order every subproblem keeps (partitions are
/// stable), which the two-coordinate count needs.
fn coordinate_order(m: usize) -> impl Iterator<Item = usize> {
    (0..m)
        .filter(|&c| c != 1)
        .chain(core::iter::once(1).filter(move |_| m > 1))
}

/// Levels of same-coordinate splitting allowed before a subproblem is counted directly: every two levels
/// at least halve a subproblem (see [`split`]), so this never binds; it bounds the recursion depth
/// (and the work) whatever the input.
fn budget(s: usize) -> u32 {
    2 * (usize::BITS - s.leading_zeros()) + 4
}

/// The threshold t that splits the keys of coordinate c of the records in `a` and `b` into a low part
/// (< t) and a high part (≥ t), both non-empty; `None` when all keys are equal. From the median v: t = v + 1
/// when some key exceeds v, else t = v (then some key is below v). The part that does not hold the median
/// has at most half the records; the other, when larger, holds a run of equal keys at its end, which the
/// next split separates.
fn split(a: &[usize], b: &[usize], w: usize, c: usize, buf: &mut [usize]) -> Option<usize> {
    let s = (a.len() + b.len()) / w;
    let buf = &mut buf[..s];
    let mut max = 0;
    let mut min = usize::MAX;
    for (slot, j) in buf.iter_mut().zip(0..) {
        let k = if j < a.len() / w {
            key(a, w, j, c)
        } else {
            key(b, w, j - a.len() / w, c)
        };
        *slot = k;
        max = max.max(k);
        min = min.min(k);
    }
    if min == max {
        return None;
    }
    let (_, &mut v, _) = buf.select_nth_unstable(s / 2);
    Some(if max > v { v + 1 } else { v })
}

/// Moves the records of `r` whose key in coordinate c is below t to the front, keeping the order on
/// both sides (the high records wait in `buf`); returns how many.
fn partition(r: &mut [usize], w: usize, c: usize, t: usize, buf: &mut [usize]) -> usize {
    let (mut lo, mut hi) = (0, 0);
    for j in 0..r.len() / w {
        if key(r, w, j, c) < t {
            if lo != j {
                move_record(r, lo, j, w);
            }
            lo += 1;
        } else {
            copy_record(buf, hi, r, j, w);
            hi += 1;
        }
    }
    r[lo * w..].copy_from_slice(&buf[..hi * w]);
    lo
}

/// Undoes [`partition`] as far as the layout goes: merges the runs `r[..a · w]` and `r[a · w..]`, each
/// descending in key 1, into one run descending in key 1 (the left run waits in `buf`).
fn merge_back(r: &mut [usize], w: usize, a: usize, buf: &mut [usize]) {
    let n = r.len() / w;
    if a == 0 || a == n || key(r, w, a - 1, 1) >= key(r, w, a, 1) {
        return; // already in order
    }
    buf[..a * w].copy_from_slice(&r[..a * w]);
    let (mut i, mut j) = (0, a);
    for k in 0..n {
        if i < a && (j >= n || key(buf, w, i, 1) >= key(r, w, j, 1)) {
            copy_record(r, k, buf, i, w);
            i += 1;
        } else {
            // k ≤ j always (k = i + j − a): the write never overtakes the read.
            if k < j {
                move_record(r, k, j, w);
            }
            j += 1;
        }
    }
}

/// Copies record `from` of `src` over record `to` of `dst`. The usual widths get fixed-length moves: a
/// call to `memcpy` per record of a few words cost more than the copy.
#[inline(always)]
fn copy_record(dst: &mut [usize], to: usize, src: &[usize], from: usize, w: usize) {
    let d = &mut dst[to * w..(to + 1) * w];
    let s = &src[from * w..(from + 1) * w];
    match w {
        4 => d[..4].copy_from_slice(&s[..4]),
        5 => d[..5].copy_from_slice(&s[..5]),
        6 => d[..6].copy_from_slice(&s[..6]),
        7 => d[..7].copy_from_slice(&s[..7]),
        8 => d[..8].copy_from_slice(&s[..8]),
        9 => d[..9].copy_from_slice(&s[..9]),
        _ => d.copy_from_slice(s),
    }
}

/// Moves record `from` of `r` over record `to` < `from`.
#[inline(always)]
fn move_record(r: &mut [usize], to: usize, from: usize, w: usize) {
    let (head, tail) = r.split_at_mut(from * w);
    copy_record(head, to, tail, 0, w);
}

/// Adds to `counts[id(q)]`, for every query q in `q`, the points of `p` that cover it in coordinates
/// 0..d (key of the point > key of the query in each). The keys of a point and a query never tie.
fn bi(cx: &mut Ctx<'_>, p: &mut [usize], q: &mut [usize], d: usize, budget_left: u32) {
    let w = cx.w;
    let (np, nq) = (p.len() / w, q.len() / w);
    if np == 0 || nq == 0 {
        return;
    }
    if d == 0 {
        for j in 0..nq {
            cx.counts[q[j * w]] += np;
        }
        return;
    }
    if np.saturating_mul(nq) <= cx.tuning.leaf_pairs || budget_left == 0 {
        return direct_bi(p, q, w, d, cx.counts);
    }
    if d <= 2 {
        return sorted_bi(p, q, w, d, cx.counts, cx.buf);
    }
    if np + nq <= cx.tuning.bitset_limit(d) && cx.buf.len() >= bits::scratch_len(np, nq, d) {
        return bits::count(p, q, w, d, 0, cx.counts, cx.buf);
    }
    let c = d - 1;
    let Some(t) = split(p, q, w, c, cx.buf) else {
        // Equal keys in coordinate c: all points, or all queries, since the two never tie.
        return;
    };
    let sp = partition(p, w, c, t, cx.buf);
    let sq = partition(q, w, c, t, cx.buf);
    let (p_lo, p_hi) = p.split_at_mut(sp * w);
    let (q_lo, q_hi) = q.split_at_mut(sq * w);
    // High points cover low queries in coordinate c: one coordinate fewer.
    let cross = budget(p_hi.len() / w + q_lo.len() / w);
    bi(cx, p_hi, q_lo, c, cross);
    bi(cx, p_hi, q_hi, d, budget_left - 1);
    bi(cx, p_lo, q_lo, d, budget_left - 1);
    // Every call leaves its records descending in key 1, as it found them.
    merge_back(p, w, sp, cx.buf);
    merge_back(q, w, sq, cx.buf);
}

/// [`bi`] for d ≤ 2 in O(s log s), s = |p| + |q|: the points and queries in one list sorted by key d − 1
/// descending (for d = 2 a merge, p and q being sorted already), so that the items before a query are
/// those that cover it there; for d = 1 a count of the points seen, for d = 2 a bottom-up merge sort of
/// the list by key 0 descending in which every query of a run gains the points of the run merged before
/// it that have a larger key 0 (the classic inversion count). Each item carries its count through the
/// merges, so the loop writes no counter at a random place. Uses 6s words of `buf`.
fn sorted_bi(p: &[usize], q: &[usize], w: usize, d: usize, counts: &mut [usize], buf: &mut [usize]) {
    let (np, nq) = (p.len() / w, q.len() / w);
    let s = np + nq;
    let item_key = |j: usize, c: usize| if j < np { key(p, w, j, c) } else { key(q, w, j - np, c) };
    let (mut tag, rest) = buf.split_at_mut(s);
    let (mut a, rest) = rest.split_at_mut(s);
    let (mut acc, rest) = rest.split_at_mut(s);
    let (mut tmp_tag, rest) = rest.split_at_mut(s);
    let (mut tmp_a, rest) = rest.split_at_mut(s);
    let mut tmp_acc = &mut rest[..s];
    acc.fill(0);
    if d == 1 {
        fill_identity(tag);
        tag.sort_unstable_by_key(|&j| core::cmp::Reverse(item_key(j, 0)));
        let mut seen = 0;
        for (&j, c) in tag.iter().zip(acc.iter_mut()) {
            seen += usize::from(j < np);
            *c = seen;
        }
    } else {
        // p and q are each descending in key 1 (the layout every subproblem keeps): merge them.
        let (mut i, mut j) = (0, 0);
        for (t, a) in tag.iter_mut().zip(a.iter_mut()) {
            if j >= nq || (i < np && key(p, w, i, 1) > key(q, w, j, 1)) {
                (*t, *a) = (i, key(p, w, i, 0));
                i += 1;
            } else {
                (*t, *a) = (np + j, key(q, w, j, 0));
                j += 1;
            }
        }
        // Runs of RUN items first: counted pair by pair and sorted by insertion, which is cheaper than
        // the first merge passes over runs of 1, 2 and 4.
        const RUN: usize = 8;
        for start in (0..s).step_by(RUN) {
            let end = (start + RUN).min(s);
            for k in start..end {
                let (ak, tk) = (a[k], tag[k]);
                let mut gain = 0;
                for i in start..k {
                    gain += usize::from((tag[i] < np) & (a[i] > ak));
                }
                let mut at = k;
                while at > start && a[at - 1] < ak {
                    (a[at], tag[at], acc[at]) = (a[at - 1], tag[at - 1], acc[at - 1]);
                    at -= 1;
                }
                (a[at], tag[at], acc[at]) = (ak, tk, gain);
            }
        }
        let mut width = RUN;
        while width < s {
            for start in (0..s).step_by(2 * width) {
                let mid = (start + width).min(s);
                let end = (start + 2 * width).min(s);
                let (mut i, mut j) = (start, mid);
                let mut points = 0;
                // Branch-free merge step over the whole output, tails included (a call to `memcpy` per
                // short tail cost more than the loop): the left item goes first when the right run is
                // spent or the left key is larger (equal keys belong to two points or two queries, never
                // a point and a query, and their order changes no count); a right item gains the left
                // points taken so far (only the gains of queries are read). Indices past a spent run are
                // clamped so that every read stays in bounds.
                for k in start..end {
                    let (ii, jj) = (i.min(mid - 1), j.min(end - 1));
                    let left = usize::from((i < mid) & ((j >= end) | (a[ii] > a[jj])));
                    let from = jj ^ ((ii ^ jj) & left.wrapping_neg());
                    tmp_a[k] = a[from];
                    tmp_tag[k] = tag[from];
                    tmp_acc[k] = acc[from] + (points & left.wrapping_sub(1));
                    points += left & usize::from(tag[from] < np);
                    i += left;
                    j += 1 - left;
                }
            }
            core::mem::swap(&mut a, &mut tmp_a);
            core::mem::swap(&mut tag, &mut tmp_tag);
            core::mem::swap(&mut acc, &mut tmp_acc);
            width *= 2;
        }
    }
    for (&j, &c) in tag.iter().zip(acc.iter()) {
        if let Some(l) = j.checked_sub(np) {
            counts[q[l * w]] += c;
        }
    }
}

fn direct_bi(p: &[usize], q: &[usize], w: usize, d: usize, counts: &mut [usize]) {
    for qr in q.chunks_exact(w) {
        let qk = &qr[1..1 + d];
        let c = p
            .chunks_exact(w)
            .filter(|pr| pr[1..1 + d].iter().zip(qk).all(|(a, b)| a > b))
            .count();
        counts[qr[0]] += c;
    }
}

/// Adds to `counts[id(q)]`, for every record q of `r`, the other records that cover it in coordinates
/// 0..d: key ≥ key of q in each (records hold the odd point keys 2g + 1, equal for tied values).
fn mono(cx: &mut Ctx<'_>, r: &mut [usize], d: usize, budget_left: u32) {
    let w = cx.w;
    let n = r.len() / w;
    if n < 2 {
        return;
    }
    if d == 0 {
        for j in 0..n {
            cx.counts[r[j * w]] += n - 1;
        }
        return;
    }
    if n.saturating_mul(n) <= 2 * cx.tuning.leaf_pairs || budget_left == 0 {
        return direct_mono(r, w, d, cx.counts);
    }
    if d >= 4 && n <= cx.tuning.bitset_limit(d) && cx.buf.len() >= bits::scratch_len(n, n, d) {
        // The records against themselves, word-parallel: they cover themselves there, once.
        bits::count(r, r, w, d, 1, cx.counts, cx.buf);
        for rec in r.chunks_exact(w) {
            cx.counts[rec[0]] -= 1;
        }
        return;
    }
    let c = d - 1;
    // Ties must not be separated here: every record of a tie covers the others. With odd keys the
    // threshold of `split` (v or v + 1) falls between two distinct key values.
    let Some(t) = split(r, &[], w, c, cx.buf) else {
        // Equal in coordinate c: every record covers every other there.
        return mono(cx, r, c, budget(n));
    };
    let s = partition(r, w, c, t, cx.buf);
    let (lo, hi) = r.split_at_mut(s * w);
    mono(cx, lo, d, budget_left - 1);
    mono(cx, hi, d, budget_left - 1);
    // High records cover low ones in coordinate c; as queries the low ones read key − 1 = 2g, so that a
    // tie in a lower coordinate covers.
    shift_keys(lo, w, c, false);
    bi(cx, hi, lo, c, budget(n));
    shift_keys(lo, w, c, true);
    merge_back(r, w, s, cx.buf);
}

/// Subtracts one from (or adds one back to) the keys of coordinates 0..d of every record.
fn shift_keys(r: &mut [usize], w: usize, d: usize, back: bool) {
    for rec in r.chunks_exact_mut(w) {
        for k in &mut rec[1..1 + d] {
            *k = if back { *k + 1 } else { *k - 1 };
        }
    }
}

fn direct_mono(r: &[usize], w: usize, d: usize, counts: &mut [usize]) {
    for (i, qr) in r.chunks_exact(w).enumerate() {
        let qk = &qr[1..1 + d];
        let c = r
            .chunks_exact(w)
            .enumerate()
            .filter(|&(j, pr)| j != i && pr[1..1 + d].iter().zip(qk).all(|(a, b)| a >= b))
            .count();
        counts[qr[0]] += c;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Values with many ties, both zeros, and sometimes reals.
    fn values(rng: &mut Rng, len: usize) -> Vec<f64> {
        let style = rng.below(4);
        (0..len)
            .map(|_| match style {
                0 => rng.below(2) as f64,
                1 => [0.0, -0.0, 1.0][rng.below(3)],
                2 => rng.below(5) as f64 * 0.5,
                _ => rng.below(1 << 20) as f64 / 7.0,
            })
            .collect()
    }

    fn naive(n: usize, m: usize, x: &[f64], y: &[f64], strict: bool) -> Vec<usize> {
        (0..n)
            .map(|q| {
                (0..n)
                    .filter(|&k| {
                        (0..m).all(|i| {
                            if strict {
                                x[k * m + i] > y[q * m + i]
                            } else {
                                x[k * m + i] >= y[q * m + i]
                            }
                        })
                    })
                    .count()
            })
            .collect()
    }

    const NO_BITSET: Tuning = Tuning {
        bitset_3: 0,
        bitset_many: 0,
        ..TUNING
    };
    const ALL_BITSET: Tuning = Tuning {
        bitset_3: usize::MAX,
        bitset_many: usize::MAX,
        ..TUNING
    };
    const NO_LEAVES: Tuning = Tuning {
        leaf_pairs: 0,
        bitset_3: 0,
        bitset_many: 0,
    };
    const TUNINGS: [Tuning; 4] = [TUNING, NO_BITSET, ALL_BITSET, NO_LEAVES];

    /// The first seed for which `counts_bi` with `flip` applied to `strict` differs from the naive count,
    /// with each tuning, i.e. through every path: direct leaves, splits, two-coordinate merges, bitsets.
    fn first_mismatch(flip: bool, seeds: u64) -> Option<u64> {
        for seed in 1..=seeds {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            let m = [3, 3, 4, 5, 6, 8, 16][rng.below(7)];
            let big = rng.below(4) == 0;
            let n = 1 + rng.below(if big { 700 } else { 60 });
            let x = values(&mut rng, n * m);
            // Queries: the points themselves (the Pareto score), or shifted copies (δ^PS corners).
            let y: Vec<f64> = if rng.below(2) == 0 {
                x.clone()
            } else {
                values(&mut rng, n * m)
            };
            let strict = rng.below(2) == 0;
            let expect = naive(n, m, &x, &y, strict);
            for tuning in TUNINGS {
                let mut counts = vec![usize::MAX; n];
                let mut scratch = vec![usize::MAX; scratch_len_bi(n, m).unwrap()];
                let (xs, ys) = (&x, &y);
                counts_bi(
                    n,
                    m,
                    |k, i| xs[k * m + i],
                    |q, i| ys[q * m + i],
                    strict ^ flip,
                    tuning,
                    &mut counts,
                    &mut scratch,
                );
                if counts != expect {
                    return Some(seed);
                }
                if !flip {
                    let mut counts = vec![usize::MAX; n];
                    let mut scratch = vec![usize::MAX; scratch_len_mono(n, m).unwrap()];
                    counts_mono(n, m, |k, i| xs[k * m + i], tuning, &mut counts, &mut scratch);
                    if counts != naive(n, m, &x, &x, false) {
                        return Some(seed);
                    }
                }
            }
        }
        None
    }

    #[test]
    fn every_path_counts_exactly() {
        assert_eq!(first_mismatch(false, 400), None);
    }

    #[test]
    fn the_checker_catches_strict_and_non_strict_swapped() {
        let caught = first_mismatch(true, 400);
        assert!(matches!(caught, Some(seed) if seed <= 5), "{caught:?}");
    }
}
