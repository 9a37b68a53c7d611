//! The selectors in exact arithmetic ([`crate::exact`]): every output has exactly the probability of the
//! mathematical mechanism on the grid scores, with γ_r = ε G_r / (2N) an exact rational.
//!
//! * **Exponential mechanism, by rejection**: propose r uniformly, keep it with probability exp(−γ_r);
//!   otherwise propose again. A round returns r with probability e^{−γ_r}/n, so the output is r with
//!   probability e^{−γ_r} / Σ_j e^{−γ_j} — the exponential mechanism exactly. The best candidate (γ = 0) is
//!   always kept, so a round succeeds with probability at least 1/n. After a budget of failed rounds it
//!   samples by levels of γ instead ([`super::levels`]).
//! * **Permute-and-flip** (McKenna & Sheldon 2020): visit the candidates in a uniformly random order and
//!   keep the first r whose coin Bernoulli(exp(−γ_r)) succeeds. A short walk in a random order first; if it
//!   finds nothing, a *streaming* pass flips the coins of the other candidates in index order and returns a
//!   uniformly random success ([`permute_and_flip`] proves the two equal).
//!
//! Scores come in two forms: doubles with a global sensitivity Δ ([`FloatScores`], floored onto the grid of
//! Δ, [`crate::exact::grid`]) and integers already on a grid with N units of sensitivity ([`IntScores`], the
//! output of the exact dampening and weighted-sum stages, stored as two `u64` words each). The doubles are
//! read once for their maximum and whether they are all finite ([`scan`]); every later pass reads them
//! through the [`ReadScore`] rule that this chose.

use super::levels;
use crate::exact::bernoulli::{bernoulli_exp_minus, bernoulli_ratio};
use crate::exact::grid::Floor;
use crate::exact::{Bits, Grid, Scale, GAP_CAP};
use crate::{sample, Error};
use rand_core::Rng;

/// Scores seen through their integer gaps G_r to a best score, for the exact selectors.
pub(crate) trait ExactScores {
    /// The number of candidates.
    fn len(&self) -> usize;
    /// The gaps G_r = min(S* − S_r, [`GAP_CAP`]) seen through cuts on the scores ([`Cuts`]); doubles carry
    /// their maximum from [`scan`], integers are read once for their extremes.
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
    /// Candidate r's score.
    fn score(&self, r: usize) -> Self::Score;
    /// Whether a score is below the cut, i.e. its gap reaches the cut's threshold.
    fn below(s: Self::Score, cut: Self::Cut) -> bool;
    /// How many candidates r in `range` are below `upper` and not below `lower`.
    fn count_between(&self, range: core::ops::Range<usize>, upper: Self::Cut, lower: Self::Cut) -> usize;
    /// The first index from `start` (< n) on that may hold a score not below `cut`, or n: whole parts of
    /// the [`Scan`] whose maximum is below the cut are skipped when `start` begins one (every score there
    /// is below it), and raw doubles skip blocks of 64 likewise when `start` begins one. Integers skip
    /// nothing.
    fn skip_below(&self, start: usize, _cut: Self::Cut) -> usize {
        start
    }
    /// Bit i set when candidate `start` + i is *not* below `cut`, for i < `end` − `start` ≤ 64.
    fn not_below_mask(&self, start: usize, end: usize, cut: Self::Cut) -> u64 {
        let mut m = 0;
        for (i, r) in (start..end).enumerate() {
            m |= u64::from(!Self::below(self.score(r), cut)) << i;
        }
        m
    }
    /// s ↦ its gap times `rate`, approximately (γ for the rate of a [`Scale`]): only guides a search,
    /// never decides anything.
    fn estimate(&self, rate: f64) -> impl Fn(Self::Score) -> f64 + '_;
    /// At least the largest gap G_r of any candidate (for doubles the gap of −f64::MAX, for integers the
    /// largest gap itself): the levels above its γ are empty.
    fn max_gap(&self) -> u128;
    /// The number of candidates.
    fn len(&self) -> usize;
    /// The gap min(S* − s, [`GAP_CAP`]) of a score s.
    fn gap_of(&self, s: Self::Score) -> u128;
    /// Candidate r's gap G_r = min(S* − S_r, [`GAP_CAP`]).
    #[inline]
    fn gap(&self, r: usize) -> u128 {
        self.gap_of(self.score(r))
    }
}

/// How a selector reads a double score: as it is (the caller knows they are all finite, [`Raw`]) or made
/// finite by the public rule ([`Finite`]: NaN → −f64::MAX, ±∞ → ±f64::MAX).
pub(crate) trait ReadScore {
    /// `read` is the identity: the stored values may be compared as they are (in vector instructions).
    const RAW: bool;
    /// The score the mechanism sees for the stored value `s`.
    fn read(s: f64) -> f64;
}

/// Scores known to be finite, read as they are.
pub(crate) struct Raw;

impl ReadScore for Raw {
    const RAW: bool = true;
    #[inline(always)]
    fn read(s: f64) -> f64 {
        s
    }
}

/// Scores that may be NaN or infinite, each read through [`super::finite`].
pub(crate) struct Finite;

impl ReadScore for Finite {
    const RAW: bool = false;
    #[inline(always)]
    fn read(s: f64) -> f64 {
        super::finite(s)
    }
}

/// Doubles floored onto the grid of their global sensitivity, with their [`Scan`] as `F` reads them.
pub(crate) struct FloatScores<'a, F: ReadScore = Raw> {
    pub(crate) scores: &'a [f64],
    pub(crate) grid: Grid,
    scan: Scan,
    read: core::marker::PhantomData<F>,
}

impl<'a, F: ReadScore> FloatScores<'a, F> {
    /// Scores read through `F` on the grid of their sensitivity (one pass for their scan).
    #[cfg(test)]
    pub(crate) fn new(scores: &'a [f64], grid: Grid) -> Self {
        Self::with_scan(scores, grid, scan::<F>(scores))
    }

    /// The same with their [`scan`] as `F` reads them already made.
    pub(crate) fn with_scan(scores: &'a [f64], grid: Grid, scan: Scan) -> Self {
        FloatScores {
            scores,
            grid,
            scan,
            read: core::marker::PhantomData,
        }
    }
}

impl<F: ReadScore> ExactScores for FloatScores<'_, F> {
    fn len(&self) -> usize {
        self.scores.len()
    }

    fn cuts(&self) -> impl Cuts + '_ {
        FloatCuts::<F> {
            scores: self.scores,
            grid: self.grid,
            best: self.grid.floor(self.scan.top),
            top: self.scan.top,
            scan: &self.scan,
            exponent: self.grid.exponent(),
            read: core::marker::PhantomData,
        }
    }
}

/// The most parts [`scan`] keeps a maximum for.
pub(crate) const PARTS: usize = 256;

/// What one pass over doubles finds: the greatest score as `F` reads them, whether every score is finite,
/// and the greatest score of each part of 2^`shift` consecutive candidates (the last part may be shorter). A
/// later pass skips a part whose maximum is below a cut without reading it ([`Cuts::skip_below`]): when a
/// few candidates lead, most parts are far below them.
pub(crate) struct Scan {
    /// The greatest score (−∞ for none).
    pub(crate) top: f64,
    /// Every score is finite (false may also mean finite scores so large that their sum overflowed:
    /// see [`scan`]).
    pub(crate) finite: bool,
    /// log₂ of the candidates per part: a power of two of at least 256, so that the blocks of the later
    /// passes align with parts and a part is found by a shift (the passes ask at every block).
    shift: u32,
    /// The greatest score of each part (−∞ past the last).
    maxima: [f64; PARTS],
}

/// The running maximum of two lanes, and their running sums.
#[derive(Clone, Copy)]
struct Lanes {
    hi: [f64; 2],
    sum: [f64; 2],
}

impl Lanes {
    const START: Lanes = Lanes {
        hi: [f64::NEG_INFINITY; 2],
        sum: [0.0; 2],
    };

    /// Takes in two scores, one per lane. Written as the compiler turns it into a vector maximum and a
    /// vector addition, each reading the scores from memory (a comparison with NaN is false, so NaN never
    /// replaces the maximum). The indexed loop is the shape the compiler vectorises.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)]
    fn push(&mut self, x: [f64; 2]) {
        for k in 0..2 {
            self.hi[k] = if x[k] > self.hi[k] { x[k] } else { self.hi[k] };
            self.sum[k] += x[k];
        }
    }

    /// Folds `other` into these lanes.
    #[inline(always)]
    fn merge(&mut self, other: &Lanes) {
        for k in 0..2 {
            self.hi[k] = if other.hi[k] > self.hi[k] {
                other.hi[k]
            } else {
                self.hi[k]
            };
            self.sum[k] += other.sum[k];
        }
    }
}

/// The one pass over the doubles that every exact selection makes before sampling, the validation and
/// the maximum fused: without branches, eight independent lanes in pairs that the compiler keeps in
/// vector registers, one maximum and one addition per score. The finiteness test is a sum: a NaN or an
/// infinite score makes every sum it enters NaN or infinite (NaN stays NaN; ∞ plus anything finite is ∞,
/// and ∞ − ∞ is NaN), so a finite total proves every score finite. The converse fails only when finite
/// scores near ±f64::MAX overflow a sum: those are then read through the public rule ([`Finite`]), which
/// leaves finite scores as they are — slower, with the same output. (No minimum is needed: the cuts
/// search down to −f64::MAX, [`FloatCuts`].)
pub(crate) fn scan<F: ReadScore>(scores: &[f64]) -> Scan {
    let part = scores.len().div_ceil(PARTS).next_power_of_two().max(256);
    let mut maxima = [f64::NEG_INFINITY; PARTS];
    let (mut top, mut sum) = (f64::NEG_INFINITY, 0.0);
    for (m, chunk) in maxima.iter_mut().zip(scores.chunks(part)) {
        let (hi, z) = lanes::<F>(chunk);
        *m = hi;
        top = if hi > top { hi } else { top };
        sum += z;
    }
    Scan {
        top,
        finite: sum.is_finite(),
        shift: part.trailing_zeros(),
        maxima,
    }
}

/// The greatest score of a part and the sum of its scores, in eight lanes. (A function of its own,
/// called once per part: inlined in the loop over parts, the compiler keeps the lanes less well in
/// registers.)
#[inline(never)]
fn lanes<F: ReadScore>(scores: &[f64]) -> (f64, f64) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if F::RAW {
        return mask::max_and_sum(scores);
    }
    let mut l = [Lanes::START; 4];
    let mut chunks = scores.chunks_exact(8);
    for c in &mut chunks {
        for (k, lane) in l.iter_mut().enumerate() {
            lane.push([F::read(c[2 * k]), F::read(c[2 * k + 1])]);
        }
    }
    for &x in chunks.remainder() {
        l[0].push([F::read(x); 2]);
    }
    let mut all = l[0];
    for lane in &l[1..] {
        all.merge(lane);
    }
    (
        if all.hi[1] > all.hi[0] { all.hi[1] } else { all.hi[0] },
        all.sum[0] + all.sum[1],
    )
}

/// Comparisons of many doubles with one cut in SSE2 (part of the x86-64 baseline: no feature detection,
/// no target flag), one bit per double.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod mask {
    use core::arch::x86_64::*;

    /// Bit k set when `s[k] ≥ cut` (false for NaN, as the scalar comparison), for `s.len()` ≤ 64: sixteen
    /// doubles to one `pmovmskb` (two comparisons to a register, their masks narrowed 64 → 32 → 16 → 8
    /// bits per double by shuffles and saturating packs of all-ones and all-zeros lanes).
    #[inline]
    pub(super) fn at_least(s: &[f64], cut: f64) -> u64 {
        debug_assert!(s.len() <= 64);
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        let c = unsafe { _mm_set1_pd(cut) };
        let mut m = 0u64;
        let mut chunks = s.chunks_exact(16);
        for (j, x) in (&mut chunks).enumerate() {
            // SAFETY: as above; the indices are below 16 = x.len().
            let bits = unsafe {
                let ge = |k: usize| _mm_castpd_ps(_mm_cmpge_pd(_mm_set_pd(x[k + 1], x[k]), c));
                // Lanes (k, k+1, k+2, k+3) as 32-bit masks: the low halves of two comparisons.
                let four = |k: usize| _mm_castps_si128(_mm_shuffle_ps::<0x88>(ge(k), ge(k + 2)));
                let low = _mm_packs_epi32(four(0), four(4));
                let high = _mm_packs_epi32(four(8), four(12));
                _mm_movemask_epi8(_mm_packs_epi16(low, high)) as u32
            };
            m |= u64::from(bits) << (16 * j);
        }
        let done = s.len() - chunks.remainder().len();
        for (k, &x) in chunks.remainder().iter().enumerate() {
            m |= u64::from(x >= cut) << (done + k);
        }
        m
    }

    /// The greatest of the doubles (−∞ for none; `max(x, acc)` keeps acc when x is NaN) and a sum of them
    /// all (NaN or infinite when one is; it may also overflow), sixteen at a time: eight vector maxima
    /// into four accumulators, and the sixteen added as a tree before one addition joins the running sum,
    /// so that no chain of additions waits on its own latency at every step.
    #[inline(always)]
    pub(super) fn max_and_sum(s: &[f64]) -> (f64, f64) {
        let mut chunks = s.chunks_exact(16);
        // SAFETY: SSE2 intrinsics, and SSE2 is enabled (the module's cfg); the indices are below 16 =
        // x.len(), and the only pointers are to the two-double arrays the two stores write.
        let (mut hi, mut sum) = unsafe {
            let mut acc = [_mm_set1_pd(f64::NEG_INFINITY); 4];
            let mut sum = _mm_setzero_pd();
            for x in &mut chunks {
                let v: [__m128d; 8] = core::array::from_fn(|k| _mm_set_pd(x[2 * k + 1], x[2 * k]));
                for (k, &v) in v.iter().enumerate() {
                    acc[k % 4] = _mm_max_pd(v, acc[k % 4]);
                }
                let s01 = _mm_add_pd(_mm_add_pd(v[0], v[1]), _mm_add_pd(v[2], v[3]));
                let s23 = _mm_add_pd(_mm_add_pd(v[4], v[5]), _mm_add_pd(v[6], v[7]));
                sum = _mm_add_pd(sum, _mm_add_pd(s01, s23));
            }
            let m = _mm_max_pd(_mm_max_pd(acc[0], acc[1]), _mm_max_pd(acc[2], acc[3]));
            let (mut m2, mut s2) = ([0.0f64; 2], [0.0f64; 2]);
            _mm_storeu_pd(m2.as_mut_ptr(), m);
            _mm_storeu_pd(s2.as_mut_ptr(), sum);
            (if m2[1] > m2[0] { m2[1] } else { m2[0] }, s2[0] + s2[1])
        };
        for &x in chunks.remainder() {
            hi = if x > hi { x } else { hi };
            sum += x;
        }
        (hi, sum)
    }

    /// Whether every double of a block of 64 is below `cut` (false when some is at least the cut): their
    /// maximum, one `maxpd` per two doubles in four accumulators (`max(x, acc)` returns acc when x is NaN,
    /// so a NaN never hides a larger double, and a NaN is below no cut here — as `at_least` counts it).
    #[inline(always)]
    pub(super) fn all_below(x: &[f64; 64], cut: f64) -> bool {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg);
        // the indices are below 64 = x.len().
        unsafe {
            let mut acc = [_mm_set1_pd(f64::NEG_INFINITY); 4];
            for k in 0..8 {
                for (j, a) in acc.iter_mut().enumerate() {
                    let i = 8 * k + 2 * j;
                    *a = _mm_max_pd(_mm_set_pd(x[i + 1], x[i]), *a);
                }
            }
            let m = _mm_max_pd(_mm_max_pd(acc[0], acc[1]), _mm_max_pd(acc[2], acc[3]));
            _mm_movemask_pd(_mm_cmpge_pd(m, _mm_set1_pd(cut))) == 0
        }
    }
}

/// [`Cuts`] of finite doubles: a cut is itself a double, found by bisection over the ordered doubles.
struct FloatCuts<'a, F: ReadScore> {
    scores: &'a [f64],
    grid: Grid,
    best: Floor,
    top: f64,
    scan: &'a Scan,
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

    /// The least double c in [−f64::MAX, top] whose gap is below t. The gap never increases with the
    /// score (flooring is monotone), so the scores with gap ≥ t are exactly those below c. The top score
    /// has gap 0 < t, so such a c exists. (The search runs down to the least finite double rather than the
    /// least score, which would cost a pass over the scores for a minimum: when c is below every score,
    /// the level is just empty.) It is searched over the ordered doubles from the estimate top − t·g:
    /// galloping away from it until the answer is bracketed, then bisecting — a few gaps when the estimate
    /// is within a few ulps, at most about 2 · 64 in any case.
    fn cut(&self, t: u128) -> f64 {
        let reaches = |k: u64| self.grid.gap(self.best, from_order_key(k)) >= t;
        let (bottom, top) = (order_key(-f64::MAX), order_key(self.top));
        if !reaches(bottom) {
            return -f64::MAX;
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

    /// Whole parts whose maximum is below the cut, unread; then (raw scores, SSE2) whole blocks of 64
    /// whose maximum is below it, each read once in vector instructions — one tight loop, rather than a
    /// call and a mask per block from the caller.
    fn skip_below(&self, mut start: usize, cut: f64) -> usize {
        let (n, shift) = (self.scores.len(), self.scan.shift);
        loop {
            while start < n && start & ((1 << shift) - 1) == 0 && self.scan.maxima[start >> shift] < cut {
                start = (start + (1 << shift)).min(n);
            }
            #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
            if F::RAW && start.is_multiple_of(64) {
                if let Some(block) = self.scores.get(start..start + 64) {
                    let block: &[f64; 64] = block.try_into().expect("64 scores");
                    if mask::all_below(block, cut) {
                        start += 64;
                        continue;
                    }
                }
            }
            return start;
        }
    }

    fn not_below_mask(&self, start: usize, end: usize, cut: f64) -> u64 {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        if F::RAW {
            return mask::at_least(&self.scores[start..end], cut);
        }
        // Eight candidates to a byte, without branches, so that it vectorises.
        let scores = &self.scores[start..end];
        let mut chunks = scores.chunks_exact(8);
        let mut m = 0u64;
        for (j, c) in (&mut chunks).enumerate() {
            let mut b = 0u64;
            for (k, &s) in c.iter().enumerate() {
                b |= u64::from(F::read(s) >= cut) << k;
            }
            m |= b << (8 * j);
        }
        let done = scores.len() - chunks.remainder().len();
        for (k, &s) in chunks.remainder().iter().enumerate() {
            m |= u64::from(F::read(s) >= cut) << (done + k);
        }
        m
    }

    fn estimate(&self, rate: f64) -> impl Fn(f64) -> f64 + '_ {
        // γ per unit of score, as one product: 2^−exponent alone overflows for the finest grids.
        let (top, k) = (self.top, libm::ldexp(rate, -self.exponent));
        move |s| (top - s) * k
    }

    fn max_gap(&self) -> u128 {
        self.grid.gap(self.best, -f64::MAX)
    }

    fn len(&self) -> usize {
        self.scores.len()
    }

    #[inline]
    fn gap_of(&self, s: f64) -> u128 {
        self.grid.gap(self.best, s)
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
    fn gap_of(&self, s: i128) -> u128 {
        self.best
            .checked_sub(s)
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
/// After about n/1024 + 64 proposals without a success (the mass is on few candidates), it switches to
/// the exponential mechanism by levels ([`super::levels`]), which costs one pass over the scores and then
/// a few rounds. Switching keeps the distribution exact: the rounds are independent and each returns r
/// with probability ∝ e^{−γ_r} given that it returns at all, so the output of the first successful round
/// has that distribution whatever the number of rounds before it — and the sampler by levels draws from
/// the same distribution afresh.
pub(crate) fn exponential<R: Rng + ?Sized>(rng: &mut R, scores: &impl ExactScores, scale: &Scale) -> usize {
    let n = scores.len();
    let cuts = scores.cuts();
    let mut bits = Bits::new(rng);
    let mut batches = (n / 1024 + 64) / BATCH;
    loop {
        if batches == 0 {
            if let Some(r) = levels::exponential(&mut bits, &cuts, scale, levels::TOP_CAP) {
                return r;
            }
            // Unreachable (the level weights fit in 256 bits): go on with uniform proposals.
            batches = usize::MAX;
        }
        batches -= 1;
        let mut batch = [0usize; BATCH];
        for r in batch.iter_mut() {
            *r = sample::uniform_index(bits.rng(), n);
        }
        // The reads alone first, so that they all wait for memory at once.
        let scores: [_; BATCH] = core::array::from_fn(|i| cuts.score(batch[i]));
        for (&r, &s) in batch.iter().zip(&scores) {
            if scale.keep(&mut bits, cuts.gap_of(s)) {
                return r;
            }
        }
    }
}

/// Up to this many candidates, permute-and-flip walks the whole random order.
const SHUFFLE_ALL: usize = 64;
/// The most candidates permute-and-flip visits in a random order before it streams.
const WALK: usize = 256;

/// How many candidates permute-and-flip visits in a random order before it streams (all up to
/// [`SHUFFLE_ALL`]).
fn walk_length(n: usize) -> usize {
    if n <= SHUFFLE_ALL {
        n
    } else {
        (16 + n / 64).min(WALK)
    }
}

/// Permute-and-flip (McKenna & Sheldon 2020): the first success of the coins Bernoulli(exp(−γ_r)) in a
/// uniformly random order of the candidates; `perm` (length ≥ n, checked by the callers) is scratch.
///
/// **Walk, then stream.** It visits up to [`WALK`] candidates in a uniformly random order (distinct
/// uniform indices: the order in which an i.i.d. uniform stream first shows each index is a uniformly
/// random order), flipping each one's coin and returning the first success — permute-and-flip itself, so
/// scores with many candidates near the best end here after a few visits. If none succeeds, the output is
/// the first success among the *other* candidates in a uniformly random order of them, with fresh coins.
/// That order is independent of the coins, so the output is a **uniformly random success** among them:
/// conditioned on the set S of successes, each of its members comes first in the order with probability
/// 1/|S|. So the stream ([`stream`]) flips every other candidate's coin in index order — sequential reads,
/// no permutation — keeps the successes in `perm`, and returns one of them drawn uniformly. S is not empty:
/// the best candidates were not visited (a visit would have kept them) and their coins (γ = 0) always
/// succeed.
///
/// Up to [`SHUFFLE_ALL`] candidates the walk covers everyone (a lazy Fisher–Yates shuffle in `perm`).
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
    let cuts = scores.cuts();
    let mut bits = Bits::new(rng);
    let visits = walk_length(n);
    if visits == n {
        let perm = &mut perm[..n];
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        for i in 0..n {
            let j = i + sample::uniform_index(bits.rng(), n - i);
            perm.swap(i, j);
            let r = perm[i];
            if scale.keep(&mut bits, cuts.gap(r)) {
                return Ok(r);
            }
        }
        // Unreachable: the best candidate has gap 0 and is kept when visited.
        return Err(Error::InvalidArgument);
    }
    // The visited candidates, sorted, in perm[..visits]; the successes of the stream after them.
    let (visited, rest) = perm.split_at_mut(visits);
    if let Some(r) = walk(&mut bits, &cuts, scale, visited) {
        return Ok(r);
    }
    let found = stream(&mut bits, &cuts, scale, visited, rest);
    if found == 0 {
        // Unreachable: see above.
        return Err(Error::InvalidArgument);
    }
    Ok(rest[sample::uniform_index(bits.rng(), found)])
}

/// Visits `visited.len()` (< n) distinct candidates in a uniformly random order and returns the first whose
/// coin succeeds; if none does, `visited` holds them, sorted.
fn walk<R: Rng + ?Sized, C: Cuts>(
    bits: &mut Bits<'_, R>,
    cuts: &C,
    scale: &Scale,
    visited: &mut [usize],
) -> Option<usize> {
    let n = cuts.len();
    for i in 0..visited.len() {
        let r = loop {
            let r = sample::uniform_index(bits.rng(), n);
            if let Err(at) = visited[..i].binary_search(&r) {
                visited.copy_within(at..i, at + 1);
                visited[at] = r;
                break r;
            }
        };
        if scale.keep(bits, cuts.gap(r)) {
            return Some(r);
        }
    }
    None
}

/// Candidates per block of the stream: the candidates on the top level between two others are decided in
/// bulk ([`Runs::fail_run`]).
const STREAM_BLOCK: usize = 64;

/// The streaming pass of permute-and-flip: flips the coin Bernoulli(exp(−γ_r)) of every candidate r in
/// index order and writes those that succeed and are not in `skip` (sorted) to `out`; returns how many.
///
/// **The coin, cheaply and exactly.** CKS20's Algorithm 2 flips ⌊γ⌋ coins Bernoulli(e^{−1}) and one
/// Bernoulli(exp(−(γ − ⌊γ⌋))); each e^{−1} coin (Algorithm 1) starts with Bernoulli(1/2) — one fair bit,
/// which must be 0 — and then succeeds with probability 2/e ([`bernoulli_two_over_e`]). The coins' bits are
/// independent and fair, so they may be read in any order that does not depend on their values yet to be
/// read: the stream reads the first bits of w ≤ ⌊γ_r⌋ of the e^{−1} coins first, as one run of zeros
/// ([`Runs::zeros`], probability 2^{−w}), and only if they are all 0 the w continuations and the coin
/// exp(−(γ_r − w)) (exactly γ_r from the gap). The product is e^{−γ_r}, exactly. A far candidate fails
/// after two bits on average, with no arithmetic on γ.
///
/// w is the candidate's level min(⌊γ_r⌋, F) ([`levels::Levels`]: a comparison with the cut of the top level F,
/// in blocks without branches, and for the candidates above it an estimate confirmed by two comparisons),
/// so w ≤ ⌊γ_r⌋ by the exact cuts; candidates with w = 0 flip the exact coin directly ([`Scale::keep`]).
/// Runs of candidates on the top level read their first stages in blocks ([`block_hits`]: the same
/// independent hits, about 0.1 random bits per candidate instead of 2).
#[inline(never)]
fn stream<R: Rng + ?Sized, C: Cuts>(
    bits: &mut Bits<'_, R>,
    cuts: &C,
    scale: &Scale,
    skip: &[usize],
    out: &mut [usize],
) -> usize {
    let levels = levels::levels(cuts, scale, levels::MAX_LEVEL);
    let top = levels.top as u32;
    let far = levels.top_cut();
    let mut runs = Runs::new();
    let mut kept = Kept { skip, out, found: 0 };
    let n = cuts.len();
    let mut from = 0; // candidates from..start are on the top level and not yet decided
    let mut start = 0;
    while start < n {
        if top > 0 {
            // Parts wholly on the top level join the run unread.
            start = cuts.skip_below(start, far);
            if start == n {
                break;
            }
        }
        let end = (start + STREAM_BLOCK).min(n);
        // The candidates of the block above the top level (every one when the top level is 0).
        let mut near = if top > 0 {
            cuts.not_below_mask(start, end, far)
        } else {
            u64::MAX >> (64 - (end - start))
        };
        while near != 0 {
            let r = start + near.trailing_zeros() as usize;
            near &= near - 1;
            far_run(bits, &mut runs, cuts, scale, top, from..r, &mut kept);
            from = r + 1;
            let w = levels.level(cuts.score(r)) as u32;
            let success = if w == 0 {
                scale.keep(bits, cuts.gap(r))
            } else {
                runs.zeros(bits.rng(), w) && finish(bits, scale, cuts.gap(r), w)
            };
            if success {
                kept.push(r);
            }
        }
        start = end;
    }
    far_run(bits, &mut runs, cuts, scale, top, from..n, &mut kept);
    kept.found
}

/// The successes of the stream that are not to be skipped.
struct Kept<'a> {
    skip: &'a [usize],
    out: &'a mut [usize],
    found: usize,
}

impl Kept<'_> {
    fn push(&mut self, r: usize) {
        if self.skip.binary_search(&r).is_err() {
            self.out[self.found] = r;
            self.found += 1;
        }
    }
}

/// The coins of a run of candidates on the top level `top` ≥ 1: their first stages (`top` zeros, a *hit*)
/// in blocks of 2^b candidates ([`block_hits`], when `top` ≥ [`BLOCK_FROM`]) and the rest of the run in bulk
/// ([`Runs::fail_run`]); then the rest of the coin ([`finish`]) for each hit.
fn far_run<R: Rng + ?Sized, C: Cuts>(
    bits: &mut Bits<'_, R>,
    runs: &mut Runs,
    cuts: &C,
    scale: &Scale,
    top: u32,
    run: core::ops::Range<usize>,
    kept: &mut Kept<'_>,
) {
    let mut r = run.start;
    if top >= BLOCK_FROM {
        let b = block_bits(top);
        let size = 1usize << b;
        while run.end - r >= size {
            let mut hits = block_hits(bits, runs, top, b);
            while hits != 0 {
                let c = r + hits.trailing_zeros() as usize;
                hits &= hits - 1;
                if finish(bits, scale, cuts.gap(c), top) {
                    kept.push(c);
                }
            }
            r += size;
        }
    }
    while r < run.end {
        r += runs.fail_run(bits.rng(), run.end - r, top);
        if r < run.end {
            if finish(bits, scale, cuts.gap(r), top) {
                kept.push(r);
            }
            r += 1;
        }
    }
}

/// The least top level whose runs are decided in blocks ([`block_hits`]).
const BLOCK_FROM: u32 = 4;

/// log₂ of the block size for top level w ≥ [`BLOCK_FROM`]: about w/2, at most 6 (64 candidates), so that
/// w − b ≥ 2. About 2/2^b + 2^{b+1−w} random bits per candidate, least near b = w/2 (0.094 at w = 11),
/// against 2 one candidate at a time.
fn block_bits(w: u32) -> u32 {
    (w / 2).min(6)
}

/// The first stages of 2^b candidates' coins (1 ≤ b ≤ 6, b < w ≤ 64): bit j of the result set when
/// candidate j is a *hit* (w fair bits all 0). The hits of different candidates are independent, each
/// with probability p = 2^{−w}, exactly — the same law as [`Runs::zeros`] one candidate at a time — at
/// about two random bits for the whole block in the common case:
///
/// Let B = 2^b, q = 1 − p. With probability 1 − Bp (the first w − b bits read are not all 0) the block
/// has no hit. Otherwise (probability Bp) the pattern S is drawn from t(S) = (P(S) − (1 − Bp)·[S = ∅]) / (Bp),
/// i.e. t(S) = p^{|S|−1} q^{B−|S|} / B for S ≠ ∅ and t(∅) = (q^B − 1 + Bp) / (Bp) ≥ 0: a candidate i
/// uniform in the block is made a hit, the other B − 1 candidates' stages are read as usual (S is i and
/// their hits), and S is kept with probability 1/|S|, else the block has no hit. S ≠ ∅ comes out with
/// probability Σ_{i ∈ S} (1/B) p^{|S|−1} q^{B−|S|} / |S| = t(S), and ∅ with the rest, 1 − Σ_{S≠∅} t(S) =
/// t(∅). So the pattern has probability (1 − Bp)[S = ∅] + Bp·t(S) = p^{|S|} q^{B−|S|}: independent hits.
fn block_hits<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, runs: &mut Runs, w: u32, b: u32) -> u64 {
    debug_assert!((1..=6).contains(&b) && b < w && w <= 64);
    if !runs.zeros(bits.rng(), w - b) {
        return 0;
    }
    let i = bits.rng().next_u64() >> (64 - b);
    let mut hits = 1u64 << i;
    for j in 0..1u64 << b {
        if j != i && runs.zeros(bits.rng(), w) {
            hits |= 1 << j;
        }
    }
    if bernoulli_ratio(bits, 1, u64::from(hits.count_ones())) {
        hits
    } else {
        0
    }
}

/// The rest of the coin Bernoulli(exp(−γ)) for a gap whose γ has ⌊γ⌋ ≥ w, once the first bits of w of its
/// e^{−1} coins were 0: their w continuations (2/e each) and exp(−(γ − w)).
#[inline(never)]
fn finish<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, scale: &Scale, gap: u128, w: u32) -> bool {
    for _ in 0..w {
        if !bernoulli_two_over_e(bits) {
            return false;
        }
    }
    let mut g = scale.gamma(gap);
    debug_assert!(g.whole >= u64::from(w));
    g.whole = g.whole.saturating_sub(u64::from(w)); // w ≤ ⌊γ⌋ by the cuts (and γ's cap is above every level)
    bernoulli_exp_minus(bits, &g)
}

/// True with probability exactly 2/e: the rest of a Bernoulli(e^{−1}) coin (CKS20 Algorithm 1 with γ = 1:
/// K ← 1; while Bernoulli(1/K) succeeds, K ← K + 1; return K odd) once its first coin that can fail,
/// Bernoulli(1/2), has succeeded: K ← 3, the same loop. P(K odd | K ≥ 3) = e^{−1} / (1/2).
pub(crate) fn bernoulli_two_over_e<R: Rng + ?Sized>(bits: &mut Bits<'_, R>) -> bool {
    let mut k: u64 = 3;
    while bernoulli_ratio(bits, 1, k) {
        k = k.saturating_add(1);
    }
    k % 2 == 1
}

/// Fair bits read as runs of zeros, from whole words of the generator: the first steps Bernoulli(1/2) of
/// many e^{−1} coins at once ([`stream`]). The unread bits are the top `left` bits of `word`, the bits
/// below them 0; bits once read are never read again, and unread ones are discarded with the reader.
struct Runs {
    word: u64,
    left: u32,
}

impl Runs {
    const fn new() -> Self {
        Runs { word: 0, left: 0 }
    }

    /// Reads fair bits up to the first 1 or the w-th 0 (1 ≤ w ≤ 64): true when w zeros were read, which
    /// has probability exactly 2^{−w}.
    #[inline(always)]
    fn zeros<R: Rng + ?Sized>(&mut self, rng: &mut R, w: u32) -> bool {
        let z = self.word.leading_zeros();
        if z < self.left && z < w {
            // A 1 among the unread bits, after fewer than w zeros.
            self.word = (self.word << z) << 1;
            self.left -= z + 1;
            return false;
        }
        self.zeros_slow(rng, w)
    }

    #[inline(never)]
    fn zeros_slow<R: Rng + ?Sized>(&mut self, rng: &mut R, mut w: u32) -> bool {
        loop {
            let z = self.word.leading_zeros().min(self.left);
            if z >= w {
                self.word = self.word.checked_shl(w).unwrap_or(0);
                self.left -= w;
                return true;
            }
            if z < self.left {
                self.word = (self.word << z) << 1;
                self.left -= z + 1;
                return false;
            }
            // Every unread bit is 0, and fewer than w of them: read them, then a fresh word.
            w -= self.left;
            self.word = rng.next_u64();
            self.left = 64;
        }
    }

    /// [`Runs::zeros`] with the same w for up to `count` candidates in turn, stopping after the first that
    /// reads w zeros: returns how many read a 1 before it (`count` when all did). A word of unread bits
    /// with no run of w zeros and at most as many 1s as candidates left decides one candidate per 1 at once.
    #[inline(never)]
    fn fail_run<R: Rng + ?Sized>(&mut self, rng: &mut R, count: usize, w: u32) -> usize {
        let mut done = 0;
        while done < count {
            if self.left == 0 {
                // The next candidate starts on a fresh word either way.
                self.word = rng.next_u64();
                self.left = 64;
            }
            let ones = self.word.count_ones() as usize;
            if ones > 0 && ones <= count - done && !has_run_of_ones(!self.word & top_bits(self.left), w) {
                // Each 1 ends one candidate's read, after fewer than w zeros; the zeros after the last
                // 1 stay unread.
                let used = 64 - self.word.trailing_zeros();
                self.word = self.word.checked_shl(used).unwrap_or(0);
                self.left -= used;
                done += ones;
            } else {
                if self.zeros(rng, w) {
                    return done;
                }
                done += 1;
            }
        }
        done
    }
}

/// The top `k` bits set (k ≤ 64).
#[inline(always)]
fn top_bits(k: u32) -> u64 {
    if k == 0 {
        0
    } else {
        u64::MAX << (64 - k)
    }
}

/// Whether y has w ≥ 1 consecutive 1 bits: runs of 2, 4, 8, … by doubling, then the rest.
#[inline(always)]
fn has_run_of_ones(mut y: u64, w: u32) -> bool {
    let mut have = 1;
    while 2 * have <= w {
        y &= y << have;
        have *= 2;
    }
    if have < w {
        y &= y << (w - have);
    }
    y != 0
}

/// `&mut [f64]` scratch seen as `u64` words (same size and alignment; every bit pattern is valid in both).
pub(crate) fn as_words(x: &mut [f64]) -> &mut [u64] {
    // SAFETY: f64 and u64 have the same size and alignment and no invalid bit patterns; the returned slice
    // borrows `x` mutably for its whole life, so nothing else can observe the reinterpretation.
    unsafe { core::slice::from_raw_parts_mut(x.as_mut_ptr().cast::<u64>(), x.len()) }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::test_fit::{assert_fits, chi_square_p_value, ALPHA};
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec;
    use std::vec::Vec;

    /// A generator that replays fixed words, then zeros.
    struct Tape(Vec<u64>, usize);
    impl rand_core::TryRng for Tape {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.try_next_u64()? as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            let w = self.0.get(self.1).copied().unwrap_or(0);
            self.1 += 1;
            Ok(w)
        }
        fn try_fill_bytes(&mut self, d: &mut [u8]) -> Result<(), Self::Error> {
            d.fill(0);
            Ok(())
        }
    }

    #[test]
    fn runs_read_zeros_up_to_the_first_one() {
        // 000 1 1 01 0…: w = 3 reads three zeros (true); w = 2 then reads the 1 (false, one bit); w = 5
        // reads 1 (false); w = 2 reads 01 (false); w = 61 reads the 57 zeros left and four of the next word,
        // 0000 1…
        let mut t = Tape(vec![0b0001_1010 << 56, 0b0000_1000 << 56], 0);
        let mut runs = Runs::new();
        assert!(runs.zeros(&mut t, 3));
        assert_eq!(runs.left, 61);
        assert!(!runs.zeros(&mut t, 2));
        assert!(!runs.zeros(&mut t, 5));
        assert!(!runs.zeros(&mut t, 2));
        assert_eq!((runs.left, t.1), (57, 1));
        assert!(runs.zeros(&mut t, 61));
        assert_eq!((runs.left, t.1), (60, 2));
        assert!(!runs.zeros(&mut t, 1)); // the 1 of the second word
                                         // Sixty-four zeros in one read, then w = 64 across two words.
        let mut t = Tape(vec![0, 1 << 63, 0], 0);
        let mut runs = Runs::new();
        assert!(runs.zeros(&mut t, 64));
        assert_eq!(runs.left, 0);
        assert!(!runs.zeros(&mut t, 64));
        assert!(runs.zeros(&mut t, 64)); // 63 zeros left in word 2 and one in word 3
        assert_eq!((runs.left, t.1), (63, 3));
    }

    #[test]
    fn has_run_of_ones_matches_a_scan() {
        let mut g = Xoshiro256PlusPlus::seed_from_u64(5);
        for i in 0..4000 {
            // Sparse and dense words, so that long runs of both kinds occur.
            let (a, b) = (g.next_u64(), g.next_u64());
            let y = match i % 3 {
                0 => a & b,
                1 => a | b,
                _ => a,
            };
            for w in 1..=64 {
                let scan = (0..=64 - w).any(|at| (at..at + w).all(|k| y >> k & 1 == 1));
                assert_eq!(has_run_of_ones(y, w), scan, "{y:#x} {w}");
            }
        }
        assert!(has_run_of_ones(u64::MAX, 64) && !has_run_of_ones(u64::MAX >> 1, 64));
    }

    /// The bulk path of [`Runs::fail_run`] decides exactly as [`Runs::zeros`] one candidate at a time: same
    /// answers, same bits read, on the same words.
    #[test]
    fn bulk_runs_equal_one_candidate_at_a_time() {
        for seed in 0..300u64 {
            let mut g = Xoshiro256PlusPlus::seed_from_u64(seed);
            // Words with long runs of zeros now and then, so that some candidates read w zeros.
            let words: Vec<u64> = (0..64)
                .map(|i| match (seed + i) % 5 {
                    0 => g.next_u64() & g.next_u64() & g.next_u64(),
                    _ => g.next_u64(),
                })
                .collect();
            let w = 1 + (seed % 24) as u32;
            let count = 1 + (seed as usize * 37) % 500;
            let (mut a, mut b) = (Tape(words.clone(), 0), Tape(words, 0));
            let (mut bulk, mut one) = (Runs::new(), Runs::new());
            let mut left = count;
            while left > 0 {
                let failed = bulk.fail_run(&mut a, left, w);
                let mut want = 0;
                while want < left && !one.zeros(&mut b, w) {
                    want += 1;
                }
                assert_eq!(failed, want, "seed {seed}");
                assert_eq!((bulk.word, bulk.left, a.1), (one.word, one.left, b.1), "seed {seed}");
                left -= (failed + 1).min(left);
            }
        }
    }

    /// How a block's hits are drawn: as [`block_hits`] does, and two broken variants.
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Hits {
        Exact,
        /// S kept whatever its size (no 1/|S| coin).
        KeepAlways,
        /// Only the uniform candidate i is a hit in the rare branch.
        OnlyOne,
    }

    fn hits_with(bits: &mut Bits<'_, impl Rng>, runs: &mut Runs, w: u32, b: u32, how: Hits) -> u64 {
        if how == Hits::Exact {
            return block_hits(bits, runs, w, b);
        }
        if !runs.zeros(bits.rng(), w - b) {
            return 0;
        }
        let i = bits.rng().next_u64() >> (64 - b);
        let mut hits = 1u64 << i;
        if how == Hits::OnlyOne {
            return hits;
        }
        for j in 0..1u64 << b {
            if j != i && runs.zeros(bits.rng(), w) {
                hits |= 1 << j;
            }
        }
        hits
    }

    /// The hit patterns of a block have the law of independent hits of probability 2^{−w} (χ² over all
    /// 2^B patterns at α = 1e-6, for several (w, b)), and the same test rejects a block that keeps S
    /// without the 1/|S| coin and one whose rare branch hits only the uniform candidate.
    #[test]
    fn block_hits_are_independent_with_probability_two_to_minus_w() {
        let mut g = Xoshiro256PlusPlus::seed_from_u64(17);
        for (w, b) in [(2u32, 1u32), (3, 1), (4, 2), (5, 2), (6, 3)] {
            let size = 1usize << b;
            let p = libm::exp2(-f64::from(w));
            let law: Vec<f64> = (0..1usize << size)
                .map(|s| {
                    let k = s.count_ones() as i32;
                    p.powi(k) * (1.0 - p).powi(size as i32 - k)
                })
                .collect();
            let draws = 1_000_000;
            for how in [Hits::Exact, Hits::KeepAlways, Hits::OnlyOne] {
                let mut counts = vec![0u64; 1 << size];
                let mut bits = Bits::new(&mut g);
                let mut runs = Runs::new();
                for _ in 0..draws {
                    counts[hits_with(&mut bits, &mut runs, w, b, how) as usize] += 1;
                }
                let p_value = chi_square_p_value(&counts, &law);
                if how == Hits::Exact {
                    assert!(p_value >= ALPHA, "w {w} b {b}: p = {p_value}");
                } else {
                    assert!(
                        p_value < ALPHA,
                        "{how:?} w {w} b {b} fits independent hits: p = {p_value}"
                    );
                }
            }
        }
    }

    #[test]
    fn two_over_e_coin_has_its_probability() {
        let mut g = Xoshiro256PlusPlus::seed_from_u64(11);
        let draws = 1_000_000;
        let mut bits = Bits::new(&mut g);
        let yes = (0..draws).filter(|_| bernoulli_two_over_e(&mut bits)).count() as u64;
        let p = 2.0 / core::f64::consts::E;
        assert_fits("Bernoulli(2/e)", &[yes, draws - yes], &[p, 1.0 - p]);
        let q = 1.01 * p;
        assert!(
            chi_square_p_value(&[yes, draws - yes], &[q, 1.0 - q]) < ALPHA,
            "fits 1.01 · 2/e"
        );
    }

    /// Scores for the stream: the best, candidates at γ from 0.25 to 7.75 (several on each level below the
    /// top), and far ones; ε = 1, Δ = 1, so γ = (s* − s)/2.
    fn stream_scores() -> Vec<f64> {
        let mut s = vec![0.0];
        for i in 1..32 {
            s.push(-0.5 * i as f64);
        }
        s.extend(core::iter::repeat_n(-40.0, 300));
        s
    }

    /// Each candidate's coin in the stream succeeds with probability exactly e^{−γ}: success counts per
    /// candidate against binomials (one χ² over all of them, 31 degrees of freedom beyond the best), and a
    /// stream without the continuation coins (2^{−w} e^{−(γ − w)}) rejected.
    #[test]
    fn stream_coins_succeed_with_probability_exp_minus_gamma() {
        let s = stream_scores();
        let grid = Grid::of(1.0).unwrap();
        let scale = Scale::new(1.0, grid.units()).unwrap();
        let scores = FloatScores::<Raw>::new(&s, grid);
        let cuts = scores.cuts();
        let top = levels::levels(&cuts, &scale, levels::MAX_LEVEL).top;
        assert!(top >= 4, "the stream's top level");
        let mut g = Xoshiro256PlusPlus::seed_from_u64(3);
        let rounds = 200_000u64;
        let mut successes = vec![0u64; s.len()];
        let mut out = vec![0usize; s.len()];
        for _ in 0..rounds {
            let found = stream(&mut Bits::new(&mut g), &cuts, &scale, &[], &mut out);
            for &r in &out[..found] {
                successes[r] += 1;
            }
        }
        assert_eq!(successes[0], rounds, "the best always succeeds");
        let statistic = |p: &dyn Fn(usize) -> f64| -> f64 {
            (1..32)
                .map(|r| {
                    let e = rounds as f64 * p(r);
                    let d = successes[r] as f64 - e;
                    d * d / (e * (1.0 - p(r)))
                })
                .sum()
        };
        let gamma = |r: usize| 0.25 * r as f64;
        let exact = statistic(&|r| libm::exp(-gamma(r)));
        // χ²(31) exceeds 78.2 with probability 1e-6.
        assert!(exact < 78.2, "χ² {exact}");
        let w = |r: usize| (gamma(r) as usize).min(top) as f64;
        let broken = statistic(&|r| libm::exp2(-w(r)) * libm::exp(-(gamma(r) - w(r))));
        assert!(broken > 78.2, "the stream without continuations fits: χ² {broken}");
        // The far candidates (γ = 20) succeed about 300 · 2e-9 times per million rounds.
        assert!(successes[32..].iter().sum::<u64>() <= 2);
        // Skipped candidates are never kept.
        let skip = [0, 5, 9];
        for _ in 0..1000 {
            let found = stream(&mut Bits::new(&mut g), &cuts, &scale, &skip, &mut out);
            assert!(out[..found].iter().all(|r| !skip.contains(r)));
        }
    }

    /// Permute-and-flip's probabilities, P(r) = π_r ∫₀¹ Π_{j≠r} (1 − π_j t) dt (McKenna & Sheldon 2020).
    fn pf_probabilities(p: &[f64]) -> Vec<f64> {
        let nodes = [
            (-0.861_136_311_594_052_6, 0.347_854_845_137_453_9),
            (-0.339_981_043_584_856_3, 0.652_145_154_862_546_1),
            (0.339_981_043_584_856_3, 0.652_145_154_862_546_1),
            (0.861_136_311_594_052_6, 0.347_854_845_137_453_9),
        ];
        let panels = 64;
        (0..p.len())
            .map(|r| {
                let mut sum = 0.0;
                for k in 0..panels {
                    let (a, b) = (k as f64 / panels as f64, (k + 1) as f64 / panels as f64);
                    for &(x, w) in &nodes {
                        let t = 0.5 * (b - a) * x + 0.5 * (a + b);
                        let f: f64 = (0..p.len()).filter(|&j| j != r).map(|j| 1.0 - p[j] * t).product();
                        sum += 0.5 * (b - a) * w * f;
                    }
                }
                p[r] * sum
            })
            .collect()
    }

    /// Ways to put the walk and the stream together: permute-and-flip as it is, and two broken variants.
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Join {
        /// A uniform success of the stream over the unvisited candidates.
        Exact,
        /// The first success of the stream in index order.
        FirstInIndexOrder,
        /// A uniform success over all candidates, the visited ones flipped again.
        Revisit,
    }

    fn join(rng: &mut impl Rng, cuts: &impl Cuts, scale: &Scale, perm: &mut [usize], how: Join) -> usize {
        let mut bits = Bits::new(rng);
        let (visited, rest) = perm.split_at_mut(walk_length(cuts.len()));
        if let Some(r) = walk(&mut bits, cuts, scale, visited) {
            return r;
        }
        let skip: &[usize] = if how == Join::Revisit { &[] } else { visited };
        let found = stream(&mut bits, cuts, scale, skip, rest);
        if how == Join::FirstInIndexOrder {
            return rest[0];
        }
        rest[sample::uniform_index(bits.rng(), found)]
    }

    /// Walk then stream is exactly permute-and-flip (χ² at α = 1e-6 against its probabilities, through
    /// [`permute_and_flip`] and through the pieces), and the same test rejects the first success in index
    /// order and a stream that flips the visited candidates again.
    #[test]
    fn walk_then_stream_is_permute_and_flip() {
        // The best at index 70 and 99 candidates at γ = 3 (p = 0.05): the walk of 17 visits fails a third
        // of the time, and the stream decides then.
        let mut s = vec![-6.0; 100];
        s[70] = 0.0;
        let grid = Grid::of(1.0).unwrap();
        let scale = Scale::new(1.0, grid.units()).unwrap();
        let scores = FloatScores::<Raw>::new(&s, grid);
        let cuts = scores.cuts();
        let p: Vec<f64> = s.iter().map(|&x| libm::exp(x / 2.0)).collect();
        let exact = pf_probabilities(&p);
        assert!((exact.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let draws = 400_000;
        let mut perm = vec![0usize; s.len()];
        let mut g = Xoshiro256PlusPlus::seed_from_u64(21);
        let mut counts = vec![0u64; s.len()];
        for _ in 0..draws {
            counts[permute_and_flip(&mut g, &scores, &scale, &mut perm).unwrap()] += 1;
        }
        assert_fits("permute-and-flip, walk then stream", &counts, &exact);
        for how in [Join::Exact, Join::FirstInIndexOrder, Join::Revisit] {
            let mut counts = vec![0u64; s.len()];
            for _ in 0..draws {
                counts[join(&mut g, &cuts, &scale, &mut perm, how)] += 1;
            }
            let p_value = chi_square_p_value(&counts, &exact);
            if how == Join::Exact {
                assert!(p_value >= ALPHA, "{how:?}: p = {p_value}");
            } else {
                assert!(p_value < ALPHA, "{how:?} fits permute-and-flip: p = {p_value}");
            }
        }
    }

    /// The vector comparison gives the scalar one's bits, on every length up to 64, with NaN, ±∞, ±0 and
    /// scores equal to the cut, for cuts among them, and a block of 64 is all below the cut exactly when
    /// no bit is set (the stream and level tests run both through `not_below_mask` and `skip_below`).
    #[test]
    fn vector_mask_matches_scalar_comparisons() {
        let mut g = Xoshiro256PlusPlus::seed_from_u64(8);
        let special = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            1.5,
            -f64::MAX,
            f64::MAX,
        ];
        for round in 0..2000 {
            let len = round % 65;
            let s: Vec<f64> = (0..len)
                .map(|_| {
                    let u = g.next_u64();
                    if u % 4 == 0 {
                        special[(u >> 8) as usize % special.len()]
                    } else {
                        ((u >> 11) % 7) as f64 - 3.0
                    }
                })
                .collect();
            for cut in [0.0, -0.0, 1.5, -2.0, f64::INFINITY, f64::NEG_INFINITY, -f64::MAX] {
                let want = s
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (k, &x)| m | u64::from(x >= cut) << k);
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                {
                    assert_eq!(mask::at_least(&s, cut), want, "{s:?} {cut}");
                    if let Ok(block) = <&[f64; 64]>::try_from(&s[..]) {
                        assert_eq!(mask::all_below(block, cut), want == 0, "{s:?} {cut}");
                    }
                }
            }
        }
    }

    /// The scan's finiteness test: a NaN or an infinity in any lane or in the remainder makes it false;
    /// finite scores make it true unless their sum overflows, and then the scores read through the public
    /// rule give the same outputs as read raw (same seeds, both selectors).
    #[test]
    fn scan_finiteness_is_exact_or_conservative() {
        for len in [1usize, 7, 8, 9, 17, 300, 1000] {
            let base: Vec<f64> = (0..len).map(|i| (i % 13) as f64 - 6.0).collect();
            let s = scan::<Raw>(&base);
            assert!(s.finite);
            assert_eq!(s.top, base.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
            for at in [0, len / 2, len - 1] {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -f64::NAN] {
                    let mut t = base.clone();
                    t[at] = bad;
                    assert!(!scan::<Raw>(&t).finite, "{len} {at} {bad}");
                }
            }
        }
        // Finite scores whose sum overflows: sent to the public rule, which leaves them as they are.
        let huge: Vec<f64> = (0..40).map(|i| f64::MAX - (i as f64) * 1e292).collect();
        assert!(!scan::<Raw>(&huge).finite);
        let grid = Grid::of(1e292).unwrap();
        let scale = Scale::new(1.0, grid.units()).unwrap();
        let (raw, ruled) = (
            FloatScores::<Raw>::new(&huge, grid),
            FloatScores::<Finite>::new(&huge, grid),
        );
        let mut perm = vec![0usize; huge.len()];
        for seed in 0..200 {
            let mut a = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut b = a.clone();
            assert_eq!(exponential(&mut a, &raw, &scale), exponential(&mut b, &ruled, &scale));
            assert_eq!(
                permute_and_flip(&mut a, &raw, &scale, &mut perm),
                permute_and_flip(&mut b, &ruled, &scale, &mut perm)
            );
        }
    }

    #[test]
    fn int_words_round_trip() {
        let mut w = [0u64; 8];
        for (i, v) in [0i128, -1, i128::MAX >> 3, -(1 << 125)].into_iter().enumerate() {
            store_int(&mut w, i, v);
            assert_eq!(load_int(&w, i), v);
        }
        let s = IntScores { words: &w };
        let cuts = s.cuts();
        assert_eq!(cuts.gap(2), 0);
        assert_eq!(cuts.gap(0), (i128::MAX >> 3) as u128);
        assert_eq!(cuts.gap(3), ((i128::MAX >> 3) + (1 << 125)) as u128);
    }
}
