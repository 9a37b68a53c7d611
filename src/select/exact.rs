//! The selectors in exact arithmetic ([`crate::exact`]): every output has exactly the probability of the
//! mathematical mechanism on the grid scores, with γ_r = ε G_r / (2N) an exact rational.
//!
//! * **Exponential mechanism, by rejection**: propose r uniformly, keep it with probability exp(−γ_r);
//!   otherwise propose again. A round returns r with probability e^{−γ_r}/n, so the output is r with
//!   probability e^{−γ_r} / Σ_j e^{−γ_j} — the exponential mechanism exactly. The best candidate (γ = 0) is
//!   always kept, so a round succeeds with probability at least 1/n: at most n rounds are expected, each one
//!   uniform index and about two random bits for a far candidate.
//! * **Permute-and-flip**: visit the candidates in a uniformly random order and keep r with probability
//!   exp(−γ_r) (McKenna & Sheldon 2020); the best is kept when reached, so at most n coins are flipped.
//!
//! Scores come in two forms: doubles with a global sensitivity Δ ([`FloatScores`], floored onto the grid of
//! Δ, [`crate::exact::grid`]) and integers already on a grid with N units of sensitivity ([`IntScores`], the
//! output of the exact dampening and weighted-sum stages, stored as two `u64` words each).

use crate::exact::{Bits, Grid, Scale, GAP_CAP};
use crate::{sample, Error};
use rand_core::Rng;

/// Scores seen through their integer gaps G_r to a best score, for the exact selectors.
pub(crate) trait ExactScores {
    /// The number of candidates.
    fn len(&self) -> usize;
    /// The gap function r ↦ G_r = min(S* − S_r, [`GAP_CAP`]), with S* found once (O(n)).
    fn gaps(&self) -> impl Fn(usize) -> u128 + '_;
}

/// Doubles floored onto the grid of their global sensitivity.
pub(crate) struct FloatScores<'a> {
    pub(crate) scores: &'a [f64],
    pub(crate) grid: Grid,
}

impl ExactScores for FloatScores<'_> {
    fn len(&self) -> usize {
        self.scores.len()
    }

    fn gaps(&self) -> impl Fn(usize) -> u128 + '_ {
        let best = self.scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let best = self.grid.floor(best);
        move |r| self.grid.gap(best, self.scores[r])
    }
}

/// Integer scores, each an `i128` in two little-endian `u64` words.
pub(crate) struct IntScores<'a> {
    pub(crate) words: &'a [u64],
}

/// Stores integer score `v` as candidate `i` of a two-words-per-score slice.
#[inline]
pub(crate) fn store_int(words: &mut [u64], i: usize, v: i128) {
    words[2 * i] = v as u64;
    words[2 * i + 1] = (v >> 64) as u64;
}

/// Reads integer score `i` of a two-words-per-score slice.
#[inline]
pub(crate) fn load_int(words: &[u64], i: usize) -> i128 {
    (i128::from(words[2 * i + 1] as i64) << 64) | i128::from(words[2 * i])
}

impl ExactScores for IntScores<'_> {
    fn len(&self) -> usize {
        self.words.len() / 2
    }

    fn gaps(&self) -> impl Fn(usize) -> u128 + '_ {
        let best = (0..self.len()).map(|i| load_int(self.words, i)).max().unwrap_or(0);
        // Scores are kept within ±2^125 by their stages, so the difference cannot overflow; checked anyway.
        move |r| {
            best.checked_sub(load_int(self.words, r))
                .map_or(GAP_CAP, |g| (g.max(0) as u128).min(GAP_CAP))
        }
    }
}

/// Proposals drawn (and their scores read) ahead of the coins that judge them.
const BATCH: usize = 16;

/// The exponential mechanism by rejection from uniform proposals (see the module documentation).
///
/// Proposals are drawn `BATCH` at a time and their gaps read before the first coin is flipped: the reads
/// of scores at random positions are then independent and overlap in memory, where one at a time each would
/// wait for its cache miss. Proposals left over when one is kept are discarded; since they are independent
/// of the coins that decided to stop, the output distribution is unchanged.
pub(crate) fn exponential<R: Rng + ?Sized>(rng: &mut R, scores: &impl ExactScores, scale: &Scale) -> usize {
    let n = scores.len();
    let gap = scores.gaps();
    let mut bits = Bits::new(rng);
    loop {
        let mut batch = [(0usize, 0u128); BATCH];
        for p in batch.iter_mut() {
            p.0 = sample::uniform_index(bits.rng(), n);
        }
        for p in batch.iter_mut() {
            p.1 = gap(p.0);
        }
        for &(r, g) in &batch {
            if scale.keep(&mut bits, g) {
                return r;
            }
        }
    }
}

/// Permute-and-flip over a lazy Fisher–Yates shuffle in `perm` (length ≥ n, checked by the callers).
pub(crate) fn permute_and_flip<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &impl ExactScores,
    scale: &Scale,
    perm: &mut [usize],
) -> Result<usize, Error> {
    let n = scores.len();
    if perm.len() < n {
        return Err(Error::ScratchTooSmall);
    }
    let perm = &mut perm[..n];
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let gap = scores.gaps();
    let mut bits = Bits::new(rng);
    for i in 0..n {
        let j = i + sample::uniform_index(bits.rng(), n - i);
        perm.swap(i, j);
        let r = perm[i];
        if scale.keep(&mut bits, gap(r)) {
            return Ok(r);
        }
    }
    // Unreachable: the best candidate has gap 0 and is kept when visited.
    Err(Error::InvalidArgument)
}

/// `&mut [f64]` scratch seen as `u64` words (same size and alignment; every bit pattern is valid in both).
pub(crate) fn as_words(x: &mut [f64]) -> &mut [u64] {
    // SAFETY: f64 and u64 have the same size and alignment and no invalid bit patterns; the returned slice
    // borrows `x` mutably for its whole life, so nothing else can observe the reinterpretation.
    unsafe { core::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<u64>(), x.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_words_round_trip() {
        let mut w = [0u64; 8];
        for (i, v) in [0i128, -1, i128::MAX >> 3, -(1 << 125)].into_iter().enumerate() {
            store_int(&mut w, i, v);
            assert_eq!(load_int(&w, i), v);
        }
        let s = IntScores { words: &w };
        let gap = s.gaps();
        assert_eq!(gap(2), 0);
        assert_eq!(gap(0), (i128::MAX >> 3) as u128);
        assert_eq!(gap(3), ((i128::MAX >> 3) + (1 << 125)) as u128);
    }
}
