//! Word-parallel dominance counting for subproblems of [`super::dc`] in many coordinates. The points are
//! cut into chunks of at most [`CHUNK`]; for each chunk and coordinate a table holds, for k = 0..=len,
//! the bitset of the chunk's points whose key ranks k-th or higher there. A query's count in a chunk is
//! the popcount of the AND of one row per coordinate: O(|p| |q| d / w) word operations (w bits a word)
//! against the divide and conquer's O(s log^(d−1) s), less when d is large beside log s.
//!
//! - Coordinate 1 costs nothing: points and queries arrive descending in key 1 (the layout of
//!   [`super::dc`]), so the points covering a query there are a prefix of the points — whole chunks and
//!   one partial chunk (a mask) — found by one merge, and the chunks beyond it are skipped.
//! - No search per query and chunk: every query gets, once per coordinate, its rank among all the points
//!   (one radix sort of points and queries together), and every chunk a table from that rank to the row
//!   of its bitset table (a prefix count over the points' ranks, O(|p|) per chunk and coordinate).
//! - The same code counts a record set against itself (the Pareto score): queries then read their keys
//!   less one, so that ties cover (see [`super::dc`]).
//!
//! Memory: [`scratch_len`] words, linear in |p| + |q| and d, plus d chunk tables; the n²/w bit matrix is
//! never stored.

use super::dc::key;
use super::radix::{self, fill_identity};

/// Points per chunk (at most).
pub(crate) const CHUNK: usize = 512;
const WB: usize = usize::BITS as usize;

/// The chunk length for `np` points: CHUNK, or fewer whole words for few points.
fn chunk_for(np: usize) -> usize {
    CHUNK.min(np.div_ceil(WB).max(1) * WB)
}

/// Words of work space [`count`] needs for `np` points, `nq` queries and d coordinates: the coordinate-1
/// prefix and the count of every query (2 nq); per coordinate other than 1 the ranks of the queries and of
/// the points and a rank-to-row table (nq + 2 np + 1); one radix sort of np + nq items ((2W + 2) words
/// each, W words per 64-bit key) and one chunk order; the chunk tables ((d − 1)(C + 1) C / w words for a
/// chunk of C points).
pub(crate) fn scratch_len(np: usize, nq: usize, d: usize) -> usize {
    let dims = d.saturating_sub(1);
    let c = chunk_for(np);
    let per_dim = nq.saturating_add(np.saturating_mul(2)).saturating_add(1);
    nq.saturating_mul(2)
        .saturating_add(dims.saturating_mul(per_dim))
        .saturating_add(np.saturating_add(nq).saturating_mul(2 * radix::WORDS + 2))
        .saturating_add(c)
        .saturating_add(dims.saturating_mul((c + 1) * (c / WB)))
}

/// An upper bound of [`scratch_len`] over every split of s records into np points and nq queries
/// (np + nq ≤ s) in d coordinates.
pub(crate) fn scratch_bound(s: usize, d: usize) -> usize {
    let dims = d.saturating_sub(1);
    let c = chunk_for(s);
    s.saturating_mul((2 * dims).max(dims + 2) + 2 * radix::WORDS + 2)
        .saturating_add(dims)
        .saturating_add(c)
        .saturating_add(dims.saturating_mul((c + 1) * (c / WB)))
}

/// Adds to `counts[id(q)]`, for every query q in `q`, the points of `p` that cover it in coordinates
/// 0..d: key of the point > key of the query less `shift` in each, for 3 ≤ d ≤ 16. With `shift` = 0 a
/// point and a query never tie; with `shift` = 1, `p` and `q` are one record set with odd keys (a record
/// then covers itself). `p` and `q` are each descending in key 1 and not empty; `buf.len()` ≥
/// [`scratch_len`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn count(
    p: &[usize],
    q: &[usize],
    w: usize,
    d: usize,
    shift: usize,
    counts: &mut [usize],
    buf: &mut [usize],
) {
    let (np, nq) = (p.len() / w, q.len() / w);
    let dims = d - 1; // every coordinate but 1
    let coordinate = |k: usize| if k == 0 { 0 } else { k + 1 };
    let chunk = chunk_for(np);
    let words = chunk / WB;
    let (prefix, rest) = buf.split_at_mut(nq);
    let (local, rest) = rest.split_at_mut(nq);
    let (query_rank, rest) = rest.split_at_mut(dims * nq);
    let (point_rank, rest) = rest.split_at_mut(dims * np);
    let (row_of, rest) = rest.split_at_mut(dims * (np + 1));
    let (sort, rest) = rest.split_at_mut(np + nq);
    let (sort_keys, rest) = rest.split_at_mut((np + nq) * radix::WORDS);
    let (sort_tmp, rest) = rest.split_at_mut((np + nq) * (radix::WORDS + 1));
    let (order, rest) = rest.split_at_mut(chunk);
    let tables = &mut rest[..dims * (chunk + 1) * words];
    // prefix[j]: how many points cover query j in coordinate 1 (non-decreasing in j).
    let mut i = 0;
    for (j, e) in prefix.iter_mut().enumerate() {
        while i < np && key(p, w, i, 1) + shift > key(q, w, j, 1) {
            i += 1;
        }
        *e = i;
    }
    // Ranks: point_rank[k·np + i] = position of point i among the points ascending in coordinate k;
    // query_rank[j·dims + k] = how many points have a smaller key there. A point covers a query in that
    // coordinate iff its rank is ≥ the query's.
    for k in 0..dims {
        let c = coordinate(k);
        fill_identity(sort);
        // A point's key k as 2k + 1 against a query's 2(k − shift): no tie between a point and a query,
        // and the point sorts after the query exactly when it covers it.
        radix::sort_by_key(
            sort,
            |e| {
                if e < np {
                    2 * key(p, w, e, c) as u64 + 1
                } else {
                    2 * (key(q, w, e - np, c) - shift) as u64
                }
            },
            sort_keys,
            sort_tmp,
        );
        let mut seen = 0;
        for &e in sort.iter() {
            if e < np {
                point_rank[k * np + e] = seen;
                seen += 1;
            } else {
                query_rank[(e - np) * dims + k] = seen;
            }
        }
    }
    local.fill(0);
    let mut first = 0; // the first query that some point of the current chunk covers in coordinate 1
    for start in (0..np).step_by(chunk) {
        let len = chunk.min(np - start);
        while first < nq && prefix[first] <= start {
            first += 1;
        }
        if first == nq {
            break;
        }
        for k in 0..dims {
            // row_of[r] = how many of the chunk's points rank below r; the chunk's points in rank order.
            let rows = &mut row_of[k * (np + 1)..(k + 1) * (np + 1)];
            rows.fill(0);
            for v in 0..len {
                rows[point_rank[k * np + start + v]] = v + 1;
            }
            let mut below = 0;
            for r in rows.iter_mut() {
                let v = *r;
                *r = below;
                if v != 0 {
                    order[below] = v - 1;
                    below += 1;
                }
            }
            // Row r of the table: the chunk's points of rank ≥ r within the chunk.
            let t = &mut tables[k * (chunk + 1) * words..(k + 1) * (chunk + 1) * words];
            t[len * words..(len + 1) * words].fill(0);
            for r in (0..len).rev() {
                let (lo, hi) = t.split_at_mut((r + 1) * words);
                lo[r * words..].copy_from_slice(&hi[..words]);
                let v = order[r];
                lo[r * words + v / WB] |= 1 << (v % WB);
            }
        }
        for j in first..nq {
            let ranks = &query_rank[j * dims..(j + 1) * dims];
            let mut row = [0usize; 16];
            for (k, (r, &g)) in row.iter_mut().zip(ranks).enumerate() {
                *r = (k * (chunk + 1) + row_of[k * (np + 1) + g]) * words;
            }
            // The chunk's points covering q in coordinate 1: all, or the first prefix[j] − start.
            let covered = prefix[j] - start;
            let mut total = 0;
            for word in 0..words {
                let lowest = word * WB;
                let mut bits = if covered >= lowest + WB {
                    usize::MAX
                } else if covered > lowest {
                    (1usize << (covered - lowest)) - 1
                } else {
                    0
                };
                for &r in &row[..dims] {
                    bits &= tables[r + word];
                }
                total += bits.count_ones() as usize;
            }
            local[j] += total;
        }
    }
    for (rec, &c) in q.chunks_exact(w).zip(local.iter()) {
        counts[rec[0]] += c;
    }
}
