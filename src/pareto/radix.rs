//! Sorting candidate indices by a floating-point coordinate without comparisons: an LSD radix sort on an
//! order-preserving 64-bit image of each value, kept in `usize` scratch (one word per key on 64-bit
//! targets, two on 32-bit ones).
//!
//! Why: a comparison sort of indices reads the utilities at random positions on every comparison, and at
//! n = 10⁶ those cache misses, not the arithmetic, dominated the Pareto score. Here each pass streams
//! through contiguous key and index arrays: 8 passes of O(n), minus the passes in which every key has the
//! same byte.

use core::mem::size_of;

/// `usize` words per 64-bit key.
pub(crate) const WORDS: usize = 8 / size_of::<usize>();

/// An order-preserving image of a non-NaN f64: a < b ⇔ key(a) < key(b), and −0 and +0 map to one key
/// (they compare equal as floats, so they must tie here too).
#[inline]
pub(crate) fn key_of(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

#[inline]
fn store(words: &mut [usize], i: usize, v: u64) {
    if WORDS == 1 {
        words[i] = v as usize;
    } else {
        words[2 * i] = v as u32 as usize;
        words[2 * i + 1] = (v >> 32) as u32 as usize;
    }
}

/// The key at position i of a key array filled by [`sort_by_key`].
#[inline]
pub(crate) fn load(words: &[usize], i: usize) -> u64 {
    if WORDS == 1 {
        words[i] as u64
    } else {
        (words[2 * i] as u64) | ((words[2 * i + 1] as u64) << 32)
    }
}

/// Scratch for [`sort_by_key`] over n items, besides `idx` itself: keys and temporary keys (WORDS · n each)
/// and temporary indices (n).
pub(crate) const fn scratch_per_item() -> usize {
    2 * WORDS + 1
}

/// Stably sorts `idx` (whatever order it holds) ascending by `key(idx[j])`, leaving the sorted keys in
/// `keys[..WORDS · n]`. `tmp` must hold at least (WORDS + 1) · n words. O(8 n).
pub(crate) fn sort_by_key(idx: &mut [usize], key: impl Fn(usize) -> u64, keys: &mut [usize], tmp: &mut [usize]) {
    let n = idx.len();
    let keys = &mut keys[..WORDS * n];
    let (tmp_keys, rest) = tmp.split_at_mut(WORDS * n);
    let tmp_idx = &mut rest[..n];
    for (j, &k) in idx.iter().enumerate() {
        store(keys, j, key(k));
    }
    // The data ping-pongs between (keys, idx) and (tmp_keys, tmp_idx); `in_tmp` says where it is now.
    let mut in_tmp = false;
    for byte in 0..8 {
        let shift = 8 * byte;
        let mut counts = [0usize; 256];
        {
            let src = if in_tmp { &*tmp_keys } else { &*keys };
            for j in 0..n {
                counts[((load(src, j) >> shift) & 0xff) as usize] += 1;
            }
        }
        if counts.contains(&n) {
            continue; // every key has the same byte here: the pass would not move anything
        }
        let mut start = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = start;
            start += here;
        }
        let (src_k, src_i, dst_k, dst_i) = if in_tmp {
            (&*tmp_keys, &*tmp_idx, &mut *keys, &mut *idx)
        } else {
            (&*keys, &*idx, &mut *tmp_keys, &mut *tmp_idx)
        };
        for (j, &i) in src_i[..n].iter().enumerate() {
            let v = load(src_k, j);
            let slot = &mut counts[((v >> shift) & 0xff) as usize];
            store(dst_k, *slot, v);
            dst_i[*slot] = i;
            *slot += 1;
        }
        in_tmp = !in_tmp;
    }
    if in_tmp {
        keys.copy_from_slice(tmp_keys);
        idx.copy_from_slice(tmp_idx);
    }
}

/// Fills `idx` with 0..n.
pub(crate) fn fill_identity(idx: &mut [usize]) {
    for (k, slot) in idx.iter_mut().enumerate() {
        *slot = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_preserve_order_and_merge_zeros() {
        let xs = [f64::MIN, -1e300, -2.5, -1e-310, -0.0, 0.0, 1e-310, 3.0, 1e300, f64::MAX];
        for w in xs.windows(2) {
            if w[0] == w[1] {
                assert_eq!(key_of(w[0]), key_of(w[1]));
            } else {
                assert!(key_of(w[0]) < key_of(w[1]), "{} vs {}", w[0], w[1]);
            }
        }
    }

    #[test]
    fn sorts_stably_like_a_comparison_sort() {
        let mut state = 0x1234_5678_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [0usize, 1, 2, 7, 100, 1000] {
            let vals: [f64; 1000] = core::array::from_fn(|_| ((next() % 41) as f64 - 20.0) * 0.5);
            let mut idx = [0usize; 1000];
            let mut keys = [0usize; 2000];
            let mut tmp = [0usize; 3000];
            fill_identity(&mut idx[..n]);
            sort_by_key(&mut idx[..n], |k| key_of(vals[k]), &mut keys, &mut tmp);
            let mut reference = [0usize; 1000];
            fill_identity(&mut reference[..n]);
            reference[..n].sort_by(|&a, &b| vals[a].partial_cmp(&vals[b]).unwrap_or(core::cmp::Ordering::Equal));
            assert_eq!(idx[..n], reference[..n], "n = {n}");
            for j in 0..n {
                assert_eq!(load(&keys, j), key_of(vals[idx[j]]));
            }
        }
    }
}
