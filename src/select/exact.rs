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

use crate::exact::grid::Floor;
use crate::exact::{Bits, Grid, Scale, GAP_CAP};
use crate::{sample, Error};
use rand_core::Rng;

/// Scores seen through their integer gaps G_r to a best score, for the exact selectors.
pub(crate) trait ExactScores {
    /// The number of candidates.
    fn len(&self) -> usize;
    /// The gap function r ↦ G_r = min(S* − S_r, [`GAP_CAP`]), with S* found once (O(n)).
    fn gaps(&self) -> impl Fn(usize) -> u128 + '_;
    /// The same gaps seen through cuts on the scores ([`Cuts`]), with the extremes found once (O(n)).
    fn cuts(&self) -> impl Cuts + '_;
}

/// Cuts of the scores by gap: for every candidate r and every threshold 1 ≤ t ≤ [`Cuts::max_gap`],
/// `below(r, cut(t))` holds exactly when G_r ≥ t. A cut is computed once per threshold; testing a candidate
/// against it is then one comparison of scores, with no gap computed (the exponential mechanism by levels,
/// [`super::levels`], tests every candidate against a few cuts).
pub(crate) trait Cuts {
    /// A score value that separates the gaps at a threshold.
    type Cut: Copy;
    /// The cut for gap threshold t (1 ≤ t ≤ `max_gap()`).
    fn cut(&self, t: u128) -> Self::Cut;
    /// A cut every score is below (as for a threshold of 0).
    fn everyone(&self) -> Self::Cut;
    /// A cut no score is below (as for a threshold beyond every gap).
    fn no_one(&self) -> Self::Cut;
    /// A score, as the cuts compare it.
    type Score: Copy;
    /// The scores in candidate order (a sequential read, for the passes over all candidates).
    fn scores(&self) -> impl Iterator<Item = Self::Score> + '_;
    /// Candidate r's score.
    fn score(&self, r: usize) -> Self::Score;
    /// Whether a score is below the cut, i.e. its gap reaches the cut's threshold.
    fn below(s: Self::Score, cut: Self::Cut) -> bool;
    /// How many candidates r in `range` are below `upper` and not below `lower`.
    fn count_between(&self, range: core::ops::Range<usize>, upper: Self::Cut, lower: Self::Cut) -> usize;
    /// s ↦ its gap times `rate`, approximately (γ for the rate of a [`Scale`]): only guides a search,
    /// never decides anything.
    fn estimate(&self, rate: f64) -> impl Fn(Self::Score) -> f64 + '_;
    /// The largest gap G_r of any candidate.
    fn max_gap(&self) -> u128;
    /// The number of candidates.
    fn len(&self) -> usize;
    /// Candidate r's gap G_r, as [`ExactScores::gaps`] gives it.
    fn gap(&self, r: usize) -> u128;
}

/// How a selector reads a double score: as it is (the caller knows they are all finite, [`Raw`]) or made
/// finite by the public rule ([`Finite`]: NaN → −f64::MAX, ±∞ → ±f64::MAX).
pub(crate) trait ReadScore {
    /// The score the mechanism sees for the stored value `s`.
    fn read(s: f64) -> f64;
}

/// Scores known to be finite, read as they are.
pub(crate) struct Raw;

impl ReadScore for Raw {
    #[inline(always)]
    fn read(s: f64) -> f64 {
        s
    }
}

/// Scores that may be NaN or infinite, each read through [`super::finite`].
pub(crate) struct Finite;

impl ReadScore for Finite {
    #[inline(always)]
    fn read(s: f64) -> f64 {
        super::finite(s)
    }
}

/// Doubles floored onto the grid of their global sensitivity.
pub(crate) struct FloatScores<'a, F: ReadScore = Raw> {
    pub(crate) scores: &'a [f64],
    pub(crate) grid: Grid,
    read: core::marker::PhantomData<F>,
}

impl<'a, F: ReadScore> FloatScores<'a, F> {
    /// Scores read through `F` on the grid of their sensitivity.
    pub(crate) fn new(scores: &'a [f64], grid: Grid) -> Self {
        FloatScores {
            scores,
            grid,
            read: core::marker::PhantomData,
        }
    }
}

impl<F: ReadScore> ExactScores for FloatScores<'_, F> {
    fn len(&self) -> usize {
        self.scores.len()
    }

    fn gaps(&self) -> impl Fn(usize) -> u128 + '_ {
        let best = self.grid.floor(extremes::<F>(self.scores).1);
        move |r| self.grid.gap(best, F::read(self.scores[r]))
    }

    fn cuts(&self) -> impl Cuts + '_ {
        let (bottom, top) = extremes::<F>(self.scores);
        FloatCuts::<F> {
            scores: self.scores,
            grid: self.grid,
            best: self.grid.floor(top),
            top,
            bottom,
            exponent: self.grid.exponent(),
            read: core::marker::PhantomData,
        }
    }
}

/// The least and the greatest of the scores as `F` reads them (±∞ for none), in lanes the compiler can
/// vectorise.
fn extremes<F: ReadScore>(scores: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = ([f64::INFINITY; 4], [f64::NEG_INFINITY; 4]);
    let mut chunks = scores.chunks_exact(4);
    for c in &mut chunks {
        for k in 0..4 {
            let x = F::read(c[k]);
            lo[k] = if x < lo[k] { x } else { lo[k] };
            hi[k] = if x > hi[k] { x } else { hi[k] };
        }
    }
    for &s in chunks.remainder() {
        lo[0] = lo[0].min(F::read(s));
        hi[0] = hi[0].max(F::read(s));
    }
    (
        lo.iter().copied().fold(f64::INFINITY, f64::min),
        hi.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    )
}

/// [`Cuts`] of finite doubles: a cut is itself a double, found by bisection over the ordered doubles.
struct FloatCuts<'a, F: ReadScore> {
    scores: &'a [f64],
    grid: Grid,
    best: Floor,
    top: f64,
    bottom: f64,
    /// The grid's binary exponent: one grid unit is 2^exponent.
    exponent: i32,
    read: core::marker::PhantomData<F>,
}

/// The position of a finite double in the order of the doubles, as an unsigned integer (−0 and +0 share
/// one, since they are the same score).
fn order_key(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits(); // −0 + 0 = +0
    if bits >> 63 == 0 {
        bits | 1 << 63
    } else {
        !bits
    }
}

/// The double at a position of [`order_key`].
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

impl<F: ReadScore> Cuts for FloatCuts<'_, F> {
    type Cut = f64;

    /// The least double c in [bottom, top] whose gap is below t. The gap never increases with the score
    /// (flooring is monotone), so the scores with gap ≥ t are exactly those below c. The top score has
    /// gap 0 < t, so such a c exists. It is searched over the ordered doubles from the estimate top − t·g:
    /// galloping away from it until the answer is bracketed, then bisecting — a few gaps when the estimate
    /// is within a few ulps, at most about 2 · 64 in any case.
    fn cut(&self, t: u128) -> f64 {
        let reaches = |k: u64| self.grid.gap(self.best, from_order_key(k)) >= t;
        let (bottom, top) = (order_key(self.bottom), order_key(self.top));
        if !reaches(bottom) {
            return self.bottom;
        }
        let guess = order_key(self.top - libm::ldexp(t as f64, self.exponent)).clamp(bottom, top);
        // Establish reaches(lo), !reaches(hi), bottom ≤ lo < hi ≤ top; top never reaches, bottom does.
        let (mut lo, mut hi) = (guess, guess);
        let mut step = 1u64;
        if reaches(guess) {
            loop {
                hi = lo.saturating_add(step).min(top);
                if !reaches(hi) {
                    break;
                }
                lo = hi;
                step = step.saturating_mul(2);
            }
        } else {
            loop {
                lo = hi.saturating_sub(step).max(bottom);
                if reaches(lo) {
                    break;
                }
                hi = lo;
                step = step.saturating_mul(2);
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if reaches(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        from_order_key(hi)
    }

    fn everyone(&self) -> f64 {
        f64::INFINITY
    }

    fn no_one(&self) -> f64 {
        f64::NEG_INFINITY
    }

    type Score = f64;

    fn scores(&self) -> impl Iterator<Item = f64> + '_ {
        self.scores.iter().map(|&s| F::read(s))
    }

    #[inline]
    fn score(&self, r: usize) -> f64 {
        F::read(self.scores[r])
    }

    #[inline]
    fn below(s: f64, cut: f64) -> bool {
        s < cut
    }

    fn count_between(&self, range: core::ops::Range<usize>, upper: f64, lower: f64) -> usize {
        // Written without branches or early exits, so that it vectorises.
        self.scores[range]
            .iter()
            .map(|&s| usize::from((F::read(s) < upper) & (F::read(s) >= lower)))
            .sum()
    }

    fn estimate(&self, rate: f64) -> impl Fn(f64) -> f64 + '_ {
        // γ per unit of score, as one product: 2^−exponent alone overflows for the finest grids.
        let (top, k) = (self.top, libm::ldexp(rate, -self.exponent));
        move |s| (top - s) * k
    }

    fn max_gap(&self) -> u128 {
        self.grid.gap(self.best, self.bottom)
    }

    fn len(&self) -> usize {
        self.scores.len()
    }

    #[inline]
    fn gap(&self, r: usize) -> u128 {
        self.grid.gap(self.best, F::read(self.scores[r]))
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

    fn cuts(&self) -> impl Cuts + '_ {
        let (mut best, mut bottom) = (i128::MIN, i128::MAX);
        for i in 0..self.len() {
            let v = load_int(self.words, i);
            best = best.max(v);
            bottom = bottom.min(v);
        }
        IntCuts {
            words: self.words,
            best,
            max_gap: best
                .checked_sub(bottom)
                .map_or(GAP_CAP, |g| (g.max(0) as u128).min(GAP_CAP)),
        }
    }
}

/// [`Cuts`] of integer scores: the cut for t is the score best − t itself.
struct IntCuts<'a> {
    words: &'a [u64],
    best: i128,
    max_gap: u128,
}

impl Cuts for IntCuts<'_> {
    type Cut = i128;

    /// G_r = min(best − s_r, [`GAP_CAP`]) ≥ t exactly when s_r ≤ best − t, for t ≤ max_gap ≤ GAP_CAP
    /// (< 2¹²⁷, so the subtraction saturates only for scores no stage produces).
    fn cut(&self, t: u128) -> i128 {
        self.best.saturating_sub(t.min(GAP_CAP) as i128)
    }

    fn everyone(&self) -> i128 {
        i128::MAX
    }

    /// Below every score the stages produce (they keep scores within ±2¹²⁵); a score of exactly i128::MIN
    /// would count as below it, which the level search bounds anyway.
    fn no_one(&self) -> i128 {
        i128::MIN
    }

    type Score = i128;

    fn scores(&self) -> impl Iterator<Item = i128> + '_ {
        self.words
            .chunks_exact(2)
            .map(|w| (i128::from(w[1] as i64) << 64) | i128::from(w[0]))
    }

    #[inline]
    fn score(&self, r: usize) -> i128 {
        load_int(self.words, r)
    }

    #[inline]
    fn below(s: i128, cut: i128) -> bool {
        s <= cut
    }

    fn count_between(&self, range: core::ops::Range<usize>, upper: i128, lower: i128) -> usize {
        range
            .map(|r| usize::from((self.score(r) <= upper) & (self.score(r) > lower)))
            .sum()
    }

    fn estimate(&self, rate: f64) -> impl Fn(i128) -> f64 + '_ {
        let best = self.best as f64;
        move |s| (best - s as f64) * rate
    }

    fn max_gap(&self) -> u128 {
        self.max_gap
    }

    fn len(&self) -> usize {
        self.words.len() / 2
    }

    #[inline]
    fn gap(&self, r: usize) -> u128 {
        self.best
            .checked_sub(self.score(r))
            .map_or(GAP_CAP, |g| (g.max(0) as u128).min(GAP_CAP))
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
///
/// After about n/256 + 64 proposals without a success (the mass is on few candidates), it switches to
/// the exponential mechanism by levels ([`super::levels`]), which costs two passes over the scores and then
/// a few rounds. Switching keeps the distribution exact: the rounds are independent and each returns r
/// with probability ∝ e^{−γ_r} given that it returns at all, so the output of the first successful round
/// has that distribution whatever the number of rounds before it — and the sampler by levels draws from
/// the same distribution afresh.
pub(crate) fn exponential<R: Rng + ?Sized>(rng: &mut R, scores: &impl ExactScores, scale: &Scale) -> usize {
    let n = scores.len();
    let cuts = scores.cuts();
    let gap = |r| cuts.gap(r);
    let mut bits = Bits::new(rng);
    let mut batches = (n / 256 + 64) / BATCH;
    loop {
        if batches == 0 {
            if let Some(r) = super::levels::exponential(&mut bits, &cuts, scale, super::levels::MAX_LEVEL) {
                return r;
            }
            // Unreachable (the level weights fit in 256 bits): go on with uniform proposals.
            batches = usize::MAX;
        }
        batches -= 1;
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
