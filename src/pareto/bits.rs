//! Word-parallel dominance counting for subproblems of [`super::dc`] in many coordinates: the points in
//! chunks of [`CHUNK`], and for each chunk and coordinate a table of bitsets "the chunk's points whose
//! key is at least the k-th smallest" (k = 0..=CHUNK). A query's count in a chunk is then the popcount of
//! the AND of one row per coordinate: O(|p| · |q| · d / w) word operations (w bits a word) against the
//! divide and conquer's O(s log^(d−1) s), which is faster when d is large beside log s.
//!
//! Coordinate 1 costs nothing: points and queries arrive descending in key 1 (the layout of
//! [`super::dc`]), so the points covering a query there are a prefix of the points — whole chunks and one
//! partial chunk (a mask) — found by one merge, and chunks beyond the prefix are skipped.
//!
//! Memory: |q| + the tables, at most [`scratch_len`]`(d)` words beside it, taken from the caller's work
//! area (independent of n: chunking keeps the n²/w bit matrix from ever being stored).

use super::dc::key;

/// Points per chunk.
pub(crate) const CHUNK: usize = 256;
/// `usize` words per chunk bitset.
const WORDS: usize = CHUNK / usize::BITS as usize;
/// Steps of a binary search over CHUNK sorted keys.
const STEPS: u32 = CHUNK.trailing_zeros();

/// Words of work space [`counts`] needs besides 2 |q| for d coordinates: per coordinate other than 1, the
/// sorted keys of a chunk (CHUNK) and its CHUNK + 1 bitsets, and one chunk order (CHUNK).
pub(crate) fn scratch_len(d: usize) -> usize {
    d.saturating_sub(1) * (CHUNK + (CHUNK + 1) * WORDS) + CHUNK
}

/// Adds to `counts[id(q)]`, for every query q in `q`, the points of `p` that cover it in coordinates
/// 0..d (key of the point > key of the query in each; a point and a query never tie), for 3 ≤ d ≤ 16.
/// `p` and `q` are each descending in key 1; `buf.len()` ≥ 2 |q| + [`scratch_len`]`(d)`.
pub(crate) fn count(p: &[usize], q: &[usize], w: usize, d: usize, counts: &mut [usize], buf: &mut [usize]) {
    let (np, nq) = (p.len() / w, q.len() / w);
    let (prefix, rest) = buf.split_at_mut(nq);
    let (local, rest) = rest.split_at_mut(nq);
    let (order, rest) = rest.split_at_mut(CHUNK);
    let dims = d - 1; // every coordinate but 1
    let (sorted, rest) = rest.split_at_mut(dims * CHUNK);
    let tables = &mut rest[..dims * (CHUNK + 1) * WORDS];
    // prefix[j]: how many points cover query j in coordinate 1 (non-decreasing in j).
    let mut i = 0;
    for (j, e) in prefix.iter_mut().enumerate() {
        while i < np && key(p, w, i, 1) > key(q, w, j, 1) {
            i += 1;
        }
        *e = i;
    }
    local.fill(0);
    let coordinate = |k: usize| if k == 0 { 0 } else { k + 1 };
    let mut first = 0; // the first query that any point of the current chunk covers in coordinate 1
    for start in (0..np).step_by(CHUNK) {
        let len = CHUNK.min(np - start);
        while first < nq && prefix[first] <= start {
            first += 1;
        }
        if first == nq {
            break;
        }
        // Tables of the chunk, coordinate by coordinate.
        for k in 0..dims {
            let c = coordinate(k);
            let order = &mut order[..len];
            for (o, v) in order.iter_mut().zip(0..) {
                *o = v;
            }
            order.sort_unstable_by_key(|&v| key(p, w, start + v, c));
            let sk = &mut sorted[k * CHUNK..(k + 1) * CHUNK];
            for (s, &v) in sk.iter_mut().zip(order.iter()) {
                *s = key(p, w, start + v, c);
            }
            // Padding: never below a query key, so a search counts only real keys.
            sk[len..].fill(usize::MAX);
            let t = &mut tables[k * (CHUNK + 1) * WORDS..(k + 1) * (CHUNK + 1) * WORDS];
            // Row r holds the points of rank ≥ r: row len is empty, row r adds the point of rank r.
            t[len * WORDS..(len + 1) * WORDS].fill(0);
            for r in (0..len).rev() {
                let (lo, hi) = t.split_at_mut((r + 1) * WORDS);
                lo[r * WORDS..].copy_from_slice(&hi[..WORDS]);
                let v = order[r];
                lo[r * WORDS + v / usize::BITS as usize] |= 1 << (v % usize::BITS as usize);
            }
        }
        for j in first..nq {
            let qr = &q[j * w..(j + 1) * w];
            // Branch-free binary searches, all coordinates in step: rank[k] = #{chunk keys < query key}.
            let mut rank = [0usize; 16];
            let mut step = CHUNK / 2;
            for _ in 0..STEPS {
                for k in 0..dims {
                    let sk = &sorted[k * CHUNK..(k + 1) * CHUNK];
                    let probe = rank[k] + step - 1;
                    rank[k] += step & usize::from(sk[probe] < qr[1 + coordinate(k)]).wrapping_neg();
                }
                step /= 2;
            }
            // The steps add up to CHUNK − 1; one more comparison tells CHUNK − 1 from CHUNK.
            for k in 0..dims {
                let sk = &sorted[k * CHUNK..(k + 1) * CHUNK];
                rank[k] += usize::from(rank[k] < CHUNK && sk[rank[k]] < qr[1 + coordinate(k)]);
            }
            // The chunk's points covering q in coordinate 1: all, or the first prefix[j] − start.
            let covered = prefix[j] - start;
            let mut total = 0;
            for word in 0..WORDS {
                let lowest = word * usize::BITS as usize;
                let mut bits = if covered >= lowest + usize::BITS as usize {
                    usize::MAX
                } else if covered > lowest {
                    (1usize << (covered - lowest)) - 1
                } else {
                    0
                };
                for k in 0..dims {
                    bits &= tables[(k * (CHUNK + 1) + rank[k]) * WORDS + word];
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
