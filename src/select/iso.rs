//! The isochronous selectors: the exponential mechanism and permute-and-flip in *constant time* — control
//! flow, memory addresses and randomness consumed depend only on n, never on the scores — and still pure
//! ε-DP: the mechanism runs at an ε₀ a hair below ε ([`isochronous_run_epsilon`]) to pay for the
//! approximation.
//!
//! # Why not the exact selectors
//! The exact selectors ([`super::exact`]) sample by rejection: how many proposals, coins and random bits a
//! call uses depends on the scores (a coin at gap 0 draws no bit; a tie at the top ends the first round).
//! An analyst who can time a call tells tied counts from tied + 1 with 95 % accuracy at ε = 1 (issue 20).
//! No rejection sampler can be constant-time, and the exact probabilities e^{−γ}/Z are irrational, so a
//! constant-time sampler must approximate them. It does so *multiplicatively*: every output probability is
//! within a factor e^{±a} of the mechanism's, which makes the sampler (ε + 2a)-DP — a pure guarantee, with
//! no δ — where the mechanism is ε-DP.
//!
//! # The mechanism sampled
//! The scores are first made finite by a public rule (NaN → the lowest score, ±∞ → ±the largest), and the weights
//! are capped: with s* the best score, candidate r has y_r = min(γ_r log₂ e, 64) where
//! γ_r = ε (s* − s_r)/(2Δ), and weight ω_r = 2^{−y_r} ∈ [2⁻⁶⁴, 1]. That is the exponential mechanism
//! (or permute-and-flip) on the scores max(s_r, s* − c) with c = 128 ln 2 · Δ/ε, which have sensitivity Δ
//! whenever s does (s* does), so it is ε-DP (McSherry & Talwar 2007, Thm. 6; McKenna & Sheldon 2020,
//! Thm. 1). It differs from the uncapped mechanism by at most n 2⁻⁶⁴ in total variation. Scores that
//! arrive as integers (dampened, weighted sums) are handled alike in their own units ([`IntIso`]).
//!
//! # Arithmetic, and the bound a
//! Per candidate, branch-free and with no decision on a score: with Δ = Δ′ 2^k (Δ′ ∈ [1, 2)), the score
//! is divided by 2^k exactly by integer operations on its bits ([`Scaling`]; for tiny Δ the mantissa goes
//! through one integer-to-double conversion, which normalises a subnormal exactly), magnitudes that end
//! below 2⁻⁹⁷⁰ are flushed to 0 and beyond f64::MAX saturate, so no floating-point operation ever sees a
//! subnormal (their timing differs on many CPUs); d = s* − s in floating point, clamped by integer
//! comparisons of its bits to 0 below d_lo = 2⁻⁸⁰/c′ and to d_hi = 64/c′ above; y = d · c′ with
//! c′ = ε log₂e / (2Δ′) rounded, capped at 64; k = ⌊y⌋, f = y − k (exact); 2^{−f} by its Taylor polynomial
//! of degree 15 ([`POLY`]) evaluated by Estrin's scheme (a tree of depth 4 over f², f⁴, f⁸) and capped at 1;
//! the weight p(f) 2^{−k} is then turned *exactly* into a fixed-point integer. Error bounds (u = 2⁻⁵³):
//! * y: c′ carries 3 roundings, d and y one each: |y′ − y| ≤ 5.1 u · 64 + c′ 2⁻⁹⁶⁹ + 2⁻⁸⁰ ≤ 2^−44.6 (c′ ≤ 2⁶⁴
//!   for the ε accepted), against the mechanism on the scores clamped to ±f64::MAX · 2^k (where the
//!   scaling saturates; clamping is 1-Lipschitz, so it keeps the sensitivity). Integer scores: G carries 3
//!   roundings into a double and c′ four, the product one: |y′ − y| ≤ 8.01 u · 64 + 2⁻⁸⁰ ≤ 2⁻⁴⁴;
//! * p: the Taylor remainder is at most (ln 2)¹⁶/16! ≤ 2^−52.7 (an alternating series), the rounded
//!   coefficients add at most u Σ|a_i| ≤ 2u, and every term of the scheme passes through at most 18
//!   roundings (a₁₅ f · f² · f⁴ · f⁸ and the four sums above it, f⁸ itself carrying 7), so
//!   |p(f) − 2^{−f}| ≤ 18.01 u · 2 + 2u + 2^−52.7 ≤ 38.7 u, relatively ≤ 77.4 u = 2^−46.7 since 2^{−f} > ½.
//!   p(0) = 1 exactly and p(f) ≤ 1.
//!
//! So every weight is within a factor e^{±ζ} of ω_r with ζ ≤ ln 2 · 2⁻⁴⁴ + 2^−46.6 ≤ 2^−44.2 < 2⁻⁴⁴.
//!
//! * **Exponential mechanism** ([`exponential`]): weights W_r = ω′_r 2¹²⁶ are integers (2⁶² ≤ W_r ≤ 2¹²⁶);
//!   their sum T < 2¹⁹⁰ is exact in 192 bits. U = ⌊R T / 2²⁵⁶⌋ for 256 random bits R hits each value of
//!   [0, T) with probability (1 ± T/2²⁵⁶)/T, and the output is the number of prefix sums ≤ U, found in a
//!   second pass. Each output r has probability (W_r/T)(1 ± 2⁻⁶⁶), hence within e^{±(2ζ + 2⁻⁶⁵)} of the
//!   mechanism's: a ≤ 2⁻⁴³ + 2⁻⁶⁵, so 2a ≤ 2^−41.9 < 2⁻⁴⁰, the slack [`isochronous_run_epsilon`] takes off ε.
//! * **Permute-and-flip** ([`permute_and_flip`]): permute-and-flip returns the first success of independent
//!   coins Bernoulli(ω_r) in a uniformly random order; since the order is independent of the coins, that is
//!   a uniformly random success. So: flip all n coins exactly (128 random bits against ω′_r 2¹²⁸), count the
//!   successes K (the best always succeeds), draw J uniform in [0, K) by ⌊R K / 2¹²⁸⌋ (relative bias
//!   ≤ 2⁻⁶⁴), and return the J-th success (a second pass over the coins kept in scratch). Its probability is
//!   P(r) = π_r ∫₀¹ Π_{j≠r} (1 − π_j t) dt. The logarithm of the integral moves by at most 2|π_j − ω_j| when
//!   π_j does (its derivative is −∫ t g / ∫ (1 − π_j t) g for a decreasing g ≥ 0, and
//!   ∫ (1 − π_j t) g ≥ ∫ (1 − t) g ≥ ½ ∫ g by Chebyshev's inequality), so
//!   a ≤ ζ + 2.0002 (n − 1) ζ + 2⁻⁶³, so 2a ≤ (n + 1) 2^−41.9 < (n + 1) 2⁻⁴⁰, the slack taken off ε.
//!
//! Report-noisy-max with Gumbel noise is the exponential mechanism and with Exponential noise
//! permute-and-flip, so they run as these. Top-k peels k rounds, each a selection at ε/k among the candidates
//! not yet chosen (with their own best score), the chosen ones masked out by a pass over a flag per
//! candidate, never by an index.
//!
//! # Two candidates at a time
//! On x86-64 the per-candidate arithmetic above (scaling, gap, y, the polynomial and its cap) and the
//! search for the best score run two candidates per SSE2 instruction (the x86-64
//! baseline: no feature detection, no target flag); the scaling and the search only for Δ ≥ 2⁻⁵¹ (bit
//! operations, [`Scaling`]), the scalar code below. Each lane computes the same bits as the scalar
//! definition: the same IEEE operations in the same order, integer operations on the bits, masks by
//! arithmetic, `minpd` only where both operands are nonnegative and not NaN; a test compares every chunk's
//! weights, the best score, the outputs and the generator's position with the scalar code as it was before
//! (kept as a test-only reference), so the bounds above are those of the code that runs. The 128-bit
//! shifts of the fixed-point weights stay scalar: memcheck reports a vector shift (`psllq`) by an undefined
//! count (tried: 136 distinct reports), though its time does not depend on the count.
//!
//! # What is checked
//! `make test` runs the selectors under valgrind memcheck with the scores marked undefined: no conditional
//! jump, no memory address depends on them (`ffi-tests/test_isochronous.c`). The weights are checked
//! against 2^{−y} computed independently, the output distributions against the exact probabilities of
//! the capped mechanism, and privacy in small worlds with ε′. `make bench` runs a dudect-style Welch t-test
//! of the running time on neighbouring score sets.

use super::exact::load_int;
use super::{ct, Noise, Selector};
use crate::float::{mul_up, sub_down};
use crate::Error;
use rand_core::Rng;

/// 2^{−f} = Σ_k (−ln 2)^k f^k / k!, k = 0..=15, coefficients rounded to nearest.
pub(crate) const POLY: [f64; 16] = [
    1.0,
    -core::f64::consts::LN_2,
    0.24022650695910072,
    -0.05550410866482158,
    0.009618129107628477,
    -0.0013333558146428443,
    0.0001540353039338161,
    -1.5252733804059841e-5,
    1.321548679014431e-6,
    -1.01780860092397e-7,
    7.054911620801123e-9,
    -4.4455382718708116e-10,
    2.5678435993488206e-11,
    -1.3691488853904128e-12,
    6.778726354822545e-14,
    -3.1324367070884287e-15,
];

/// Candidates handled together, so that the compiler interleaves (and vectorises) their polynomials.
const CHUNK: usize = 8;

/// The cap of y = γ log₂ e: weights are at least 2⁻⁶⁴.
pub(crate) const Y_CAP: f64 = 64.0;

/// Scores as the isochronous selectors see them: y_r ∈ [0, 64] per candidate, in constant time.
pub(crate) trait IsoScores {
    /// The number of candidates.
    fn len(&self) -> usize;
    /// y_r = min(γ_r log₂ e, 64), up to the error bound of the module documentation, with γ relative to
    /// the best *live* candidate.
    fn y(&self, r: usize) -> f64;

    /// y_r for the candidates `start..start + CHUNK` (the padding past n gets 0, to be masked): the same
    /// values as [`IsoScores::y`], possibly several at a time.
    #[inline(always)]
    fn ys(&self, start: usize) -> [f64; CHUNK] {
        let n = self.len();
        core::array::from_fn(|i| if start + i < n { self.y(start + i) } else { 0.0 })
    }
}

/// The public constants of an isochronous selection over integer scores whose sensitivity is `units`
/// (the exact dampening and weighted-sum stages' output): c′ = ε log₂e / (2 units) and the clamps of the
/// gap G in those units.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IntScale {
    c: f64,
    g_lo: u128,
    g_hi: u128,
}

impl IntScale {
    /// For ε from [`isochronous_run_epsilon`] (in [2⁻⁴¹, 2⁶⁴]) and 1 ≤ units < 2⁶⁴, c′ lies in
    /// [2⁻¹⁰⁶, 2⁶⁴], far inside the range the clamps below need; other ε are refused
    /// ([`Error::InvalidEpsilon`]).
    pub(crate) fn new(epsilon: f64, units: u64) -> Result<Self, Error> {
        if !(epsilon.is_finite() && epsilon > 0.0 && epsilon <= RUN_EPSILON_MAX) {
            return Err(Error::InvalidEpsilon);
        }
        let c = epsilon * (0.5 * core::f64::consts::LOG2_E) / units.max(1) as f64;
        if !c.is_normal() {
            return Err(Error::InvalidEpsilon);
        }
        // Gaps from ⌈64/c′⌉ on have y ≥ 64 (capped); below ⌊2⁻⁸⁰/c′⌋, y < 2⁻⁸⁰ is taken as 0. Gaps never
        // exceed 2¹²⁶ (the stages keep scores within ±2¹²⁵).
        let cap = libm::ldexp(1.0, 126);
        let hi = crate::float::next_up(Y_CAP / c).min(cap);
        let lo = (libm::ldexp(1.0, -80) / c).min(cap);
        Ok(IntScale {
            c,
            g_lo: lo as u128,
            g_hi: libm::ceil(hi) as u128,
        })
    }
}

/// Integer scores (two `u64` words each), relative to the best live one.
pub(crate) struct IntIso<'a> {
    words: &'a [u64],
    best: i128,
    scale: IntScale,
}

impl<'a> IntIso<'a> {
    /// `live(r)` = 0 leaves r out (at least one must be live). Scores must lie within ±2¹²⁵ (the stages keep them there).
    pub(crate) fn new(words: &'a [u64], scale: IntScale, live: impl Fn(usize) -> u64) -> Self {
        let mut best = -(1i128 << 125);
        for r in 0..words.len() / 2 {
            let s = ct::pick_i128(live(r), load_int(words, r), best);
            best = ct::pick_i128(ct::lt_i128(best, s), s, best);
        }
        IntIso { words, best, scale }
    }
}

/// G as a double: its four 32-bit limbs (each exact) combined in three roundings, so within 3u; no
/// subnormal, no branch (a `u128` conversion calls a library routine that branches).
#[inline(always)]
fn u128_to_f64(g: u128) -> f64 {
    let limb = |i: u32| f64::from((g >> (32 * i)) as u32);
    let two32 = 4_294_967_296.0;
    ((limb(3) * two32 + limb(2)) * two32 + limb(1)) * two32 + limb(0)
}

impl IsoScores for IntIso<'_> {
    fn len(&self) -> usize {
        self.words.len() / 2
    }

    /// y = min(c′ G, 64) ([`y_of_gap`]).
    #[inline(always)]
    fn y(&self, r: usize) -> f64 {
        y_of_gap(self.best.wrapping_sub(load_int(self.words, r)) as u128, &self.scale)
    }
}

/// y = min(c′ G, 64) for a gap G in grid units; a candidate above the best (only among those left out)
/// wraps to a huge gap, and gets y = 64.
#[inline(always)]
fn y_of_gap(g: u128, scale: &IntScale) -> f64 {
    let g = g & ct::wide(!ct::lt_u128(g, scale.g_lo));
    let g = ct::pick_u128(ct::lt_u128(g, scale.g_hi), g, scale.g_hi);
    let y = u128_to_f64(g) * scale.c;
    f64::from_bits(ct::min(y.to_bits(), Y_CAP.to_bits()))
}

const SIGN: u64 = 1 << 63;
const MAX_BITS: u64 = 0x7fef_ffff_ffff_ffff;
/// The biased exponent of 2⁻⁹⁷⁰: scaled magnitudes below are flushed to 0, so that no floating-point
/// operation ever sees a subnormal (their timing differs on many CPUs), and nonzero differences of two
/// flushed values are at least 2⁻¹⁰²².
const FLUSH_BIASED: i64 = 1023 - 970;

/// s / 2^k as a double, for any k: NaN → −f64::MAX and ±∞ → ±f64::MAX first (the public rule), then
/// magnitudes below 2⁻⁹⁷⁰ → +0 and beyond f64::MAX → ±f64::MAX, exact otherwise. Integer operations and
/// one integer-to-double conversion of the mantissa only (which normalises a subnormal exactly), no
/// floating-point arithmetic on s. [`Scaling::fast`] does the same with bit operations alone when subnormal
/// inputs end below 2⁻⁹⁷⁰ anyway.
#[inline(always)]
fn scaled_any(s: f64, k: i32) -> f64 {
    let (huge, nan) = ct::special(s);
    let s = f64::from_bits(ct::pick(huge, MAX_BITS | (s.to_bits() & SIGN), s.to_bits()));
    let (sign, m, e) = ct::parts(s);
    let mf = (m as i64) as f64; // exact: m < 2⁵³
    let mb = mf.to_bits();
    let biased = (mb >> 52) as i64 + e - i64::from(k);
    let tiny = ct::negative(biased - FLUSH_BIASED) | ct::eq(m, 0);
    let over = ct::negative(2046 - biased);
    let magnitude = ((biased as u64 & 0x7ff) << 52) | (mb & ((1 << 52) - 1));
    let magnitude = ct::pick(over, MAX_BITS, magnitude);
    let sign = ct::pick(nan, SIGN, sign & SIGN);
    f64::from_bits((sign | magnitude) & !(tiny & !over))
}

/// How [`IsoScale`] divides scores by 2^k: by bit operations on the exponent field when k ≥ −51 (then
/// every subnormal input ends below 2⁻⁹⁷⁰ and is flushed), else by [`scaled_any`]. A public choice (k comes
/// from Δ).
#[derive(Clone, Copy, Debug)]
enum Scaling {
    /// Magnitude bits below `lo` flush to +0; above `hi` (NaN, ±∞, and for k < 0 what would overflow) are
    /// capped at `hi`; `shift` = k 2⁵² is subtracted from the rest.
    Fast { lo: u64, hi: u64, shift: u64 },
    /// [`scaled_any`] with this k.
    Any(i32),
}

impl Scaling {
    fn of(k: i32) -> Self {
        if k >= -51 {
            // 2⁻⁹⁷⁰ · 2^k and min(f64::MAX, f64::MAX · 2^k) as magnitude bits; −51 ≤ k ≤ 1023 keeps both
            // in range.
            let lo = ((FLUSH_BIASED + i64::from(k)) as u64) << 52;
            let hi = if k < 0 {
                (((2046 + k) as u64) << 52) | ((1 << 52) - 1)
            } else {
                MAX_BITS
            };
            Scaling::Fast {
                lo,
                hi,
                shift: (i64::from(k) as u64) << 52,
            }
        } else {
            Scaling::Any(k)
        }
    }

    #[inline(always)]
    fn apply(self, s: f64) -> f64 {
        match self {
            Scaling::Fast { lo, hi, shift } => {
                let b = s.to_bits();
                let magnitude = b & !SIGN;
                let nan = ct::lt(INF_BITS, magnitude);
                let sign = (b & SIGN) | (nan & SIGN);
                let magnitude = ct::min(magnitude, hi);
                let tiny = ct::lt(magnitude, lo);
                f64::from_bits((sign | magnitude.wrapping_sub(shift)) & !tiny)
            }
            Scaling::Any(k) => scaled_any(s, k),
        }
    }
}

const INF_BITS: u64 = 0x7ff0_0000_0000_0000;

/// The position of a non-NaN double in the order of the doubles (−0 below +0, which [`scaled`] never
/// produces).
#[inline(always)]
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    b ^ (ct::bit(b >> 63) | SIGN)
}

#[inline(always)]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(k ^ (!ct::bit(k >> 63) | SIGN))
}

/// The public constants of one isochronous selection over doubles: Δ = Δ′ 2^k with Δ′ ∈ [1, 2), the scores
/// seen as s / 2^k ([`scaled`]), c′ = ε log₂e / (2Δ′), and the clamps of the gap d.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IsoScale {
    scaling: Scaling,
    c: f64,
    d_lo: u64,
    d_hi: u64,
}

impl IsoScale {
    /// For ε from [`isochronous_run_epsilon`] (in [2⁻⁴¹, 2⁶⁴]) and any Δ > 0, c′ lies in [2⁻⁴³, 2⁶⁴], so
    /// the clamps below are normal numbers; other ε are refused ([`Error::InvalidEpsilon`]).
    pub(crate) fn new(epsilon: f64, sensitivity: f64) -> Result<Self, Error> {
        if !(epsilon.is_finite() && epsilon > 0.0 && epsilon <= RUN_EPSILON_MAX) {
            return Err(Error::InvalidEpsilon);
        }
        if !(sensitivity.is_finite() && sensitivity > 0.0) {
            return Err(Error::InvalidSensitivity);
        }
        let (f, x) = libm::frexp(sensitivity); // Δ = f 2^x, f ∈ [½, 1)
        let c = epsilon * (0.5 * core::f64::consts::LOG2_E) / (2.0 * f);
        // d_lo c′ ≥ 2⁻⁸⁰ (1 − u) and d_hi c′ ≥ 64 (1 − u): both products stay normal, and y ≤ 64 (1 + u)
        // before its cap.
        Ok(IsoScale {
            scaling: Scaling::of(x - 1),
            c,
            d_lo: (libm::ldexp(1.0, -80) / c).to_bits(),
            d_hi: crate::float::next_up(Y_CAP / c).to_bits(),
        })
    }

    /// y = min(c′ d, 64) for a gap d ≥ 0 of scaled scores (normal, +0 or +∞). A negative d (a candidate
    /// above the best, only among those left out) gives 64.
    #[inline(always)]
    fn y_of_gap(&self, d: f64) -> f64 {
        let b = d.to_bits();
        let b = ct::min(b & !ct::lt(b, self.d_lo), self.d_hi);
        let y = f64::from_bits(b) * self.c;
        f64::from_bits(ct::min(y.to_bits(), Y_CAP.to_bits()))
    }
}

/// Doubles with a global sensitivity, relative to the best live one.
pub(crate) struct FloatIso<'a> {
    scores: &'a [f64],
    best: f64,
    scale: IsoScale,
}

/// The largest of `best` and the order keys of the scaled live scores from index `from` on (0 is below
/// every key of a finite double).
#[inline(always)]
fn best_key(scores: &[f64], scaling: Scaling, from: usize, best: u64, live: &impl Fn(usize) -> u64) -> u64 {
    let mut best = best;
    for (r, &s) in scores.iter().enumerate().skip(from) {
        best = ct::max(best, order_key(scaling.apply(s)) & live(r));
    }
    best
}

impl<'a> FloatIso<'a> {
    /// `live(r)` = 0 leaves r out (at least one must be live).
    pub(crate) fn new(scores: &'a [f64], scale: IsoScale, live: impl Fn(usize) -> u64) -> Self {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        let best = match scale.scaling {
            Scaling::Fast { lo, hi, shift } => lanes::best_key(lo, hi, shift, scores, &live),
            Scaling::Any(_) => best_key(scores, scale.scaling, 0, 0, &live),
        };
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        let best = best_key(scores, scale.scaling, 0, 0, &live);
        FloatIso {
            scores,
            best: from_order_key(best),
            scale,
        }
    }
}

impl IsoScores for FloatIso<'_> {
    fn len(&self) -> usize {
        self.scores.len()
    }

    #[inline(always)]
    fn y(&self, r: usize) -> f64 {
        // Both operands are scaled and flushed, so nonzero differences are at least 2⁻¹⁰²²: the difference
        // is +0, normal, or +∞ (beyond f64::MAX), and ≥ 0 for live candidates.
        self.scale
            .y_of_gap(self.best - self.scale.scaling.apply(self.scores[r]))
    }

    /// A whole chunk with the bit-operation scaling: two candidates per SSE2 instruction (x86-64), the
    /// same operations as [`Scaling::apply`] and [`IsoScale::y_of_gap`] lane by lane.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[inline(always)]
    fn ys(&self, start: usize) -> [f64; CHUNK] {
        match (self.scores.get(start..start + CHUNK), self.scale.scaling) {
            (Some(chunk), Scaling::Fast { lo, hi, shift }) => {
                let mut y = [0.0; CHUNK];
                let k = lanes::Gap::new(self.best, lo, hi, shift, &self.scale);
                for (y, s) in y.chunks_exact_mut(2).zip(chunk.chunks_exact(2)) {
                    y.copy_from_slice(&lanes::y_of_scores(&k, s));
                }
                y
            }
            _ => {
                let n = self.scores.len();
                core::array::from_fn(|i| if start + i < n { self.y(start + i) } else { 0.0 })
            }
        }
    }
}

/// The isochronous `selector` on integer scores: the exponential mechanism (and Gumbel noise) or
/// permute-and-flip (and Exponential noise, with `coins` of length ≥ n).
pub(crate) fn select_int<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    words: &[u64],
    scale: IntScale,
    coins: &mut [usize],
) -> usize {
    let everyone = |_| u64::MAX;
    let s = IntIso::new(words, scale, everyone);
    match selector {
        Selector::PermuteAndFlip | Selector::NoisyMax(Noise::Exponential) => permute_and_flip(rng, &s, everyone, coins),
        _ => exponential(rng, &s, everyone),
    }
}

/// k rounds of [`select_int`] among the candidates not chosen yet (as [`top_k`] for doubles).
pub(crate) fn top_k_int<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    words: &[u64],
    scale: IntScale,
    out: &mut [usize],
    flags: &mut [usize],
    coins: &mut [usize],
) {
    flags.fill(0);
    for slot in out.iter_mut() {
        let pick = {
            let live = |r: usize| ct::barrier((flags[r] as u64 ^ 1).wrapping_neg());
            let s = IntIso::new(words, scale, live);
            match selector {
                Selector::PermuteAndFlip | Selector::NoisyMax(Noise::Exponential) => {
                    permute_and_flip(rng, &s, live, coins)
                }
                _ => exponential(rng, &s, live),
            }
        };
        for (r, f) in flags.iter_mut().enumerate() {
            *f |= (ct::eq(r as u64, pick as u64) & 1) as usize;
        }
        *slot = pick;
    }
}

/// p(f) ≈ 2^{−f} for f ∈ [0, 1): the Taylor polynomial of degree 15 ([`POLY`]) by Estrin's scheme (a tree
/// of depth 4 instead of Horner's chain of 15), capped at 1.
// The definition; the two-lane code computes the same (and the tests check it).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn poly(f: f64) -> f64 {
    f64::from_bits(ct::min(estrin(f).to_bits(), 1.0f64.to_bits()))
}

/// Doubles, one or several lanes at a time, with IEEE addition and multiplication lane by lane: [`estrin`]
/// computes the same bits in each lane as on one double.
trait Lanes: Copy + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self> {
    fn splat(x: f64) -> Self;
}

impl Lanes for f64 {
    #[inline(always)]
    fn splat(x: f64) -> Self {
        x
    }
}

/// The polynomial of [`poly`] before its cap, by Estrin's scheme, in every lane.
#[inline(always)]
fn estrin<L: Lanes>(f: L) -> L {
    let f2 = f * f;
    let f4 = f2 * f2;
    let f8 = f4 * f4;
    let b = core::array::from_fn::<L, 8, _>(|i| L::splat(POLY[2 * i]) + L::splat(POLY[2 * i + 1]) * f);
    let c = core::array::from_fn::<L, 4, _>(|i| b[2 * i] + b[2 * i + 1] * f2);
    let d0 = c[0] + c[1] * f4;
    let d1 = c[2] + c[3] * f4;
    d0 + d1 * f8
}

/// y = k + f with k = ⌊y⌋ and f ∈ [0, 1) (exact), for y ∈ [0, 64].
// The definition; the two-lane code computes the same (and the tests check it).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn split(y: f64) -> (u32, f64) {
    // SAFETY: y ∈ [0, 64] is finite and fits (cvttsd2si, no saturation branches); truncation is the floor.
    let k = unsafe { y.to_int_unchecked::<u32>() };
    (k, y - k as f64) // exact (Sterbenz, or k = 0)
}

/// ω′ = p 2^{−k} as (m, −e) with ω′ = m 2^{e − 52}, m ∈ [2⁵², 2⁵³), −e ∈ [0, 66], for p = p(f) ∈ [½ − 2⁻⁴⁸, 1].
#[inline(always)]
fn decompose(p: f64, k: u32) -> (u64, u32) {
    let b = p.to_bits();
    let m = (b & ((1 << 52) - 1)) | (1 << 52);
    (m, (1023 - (b >> 52) as u32) + k)
}

/// ω′ for y ∈ [0, 64] as (m, −e) (see [`decompose`]), one candidate at a time (the tests).
#[cfg(test)]
fn weight(y: f64) -> (u64, u32) {
    let (k, f) = split(y);
    decompose(poly(f), k)
}

/// The weights of candidates `start..start + CHUNK` (the tail of the last chunk gets y = 0, to be masked):
/// the polynomials of a whole chunk are evaluated side by side.
#[inline(always)]
fn chunk_weights(s: &impl IsoScores, start: usize) -> [(u64, u32); CHUNK] {
    weights_of(&s.ys(start))
}

/// ω′ for each y of a chunk ([`split`], [`poly`], [`decompose`]).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn weights_of(y: &[f64; CHUNK]) -> [(u64, u32); CHUNK] {
    core::array::from_fn(|i| {
        let (k, f) = split(y[i]);
        decompose(poly(f), k)
    })
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use lanes::weights_of;

/// Two candidates per SSE2 instruction. SSE2 is part of the x86-64 baseline (no feature detection, no
/// target flag), and every lane computes the bits the scalar code computes: the same IEEE operations in the
/// same order, the same integer operations on the bits, masks by arithmetic (no branch, no conditional
/// move, no lookup), and `minpd` only where the scalar code takes the minimum of the bits of two
/// nonnegative, non-NaN doubles, which orders them alike.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod lanes {
    use super::{decompose, IsoScale, Lanes, CHUNK, INF_BITS, SIGN, Y_CAP};
    use core::arch::x86_64::*;

    /// Two doubles.
    #[derive(Clone, Copy)]
    struct F2(__m128d);

    impl core::ops::Add for F2 {
        type Output = F2;
        #[inline(always)]
        fn add(self, o: F2) -> F2 {
            // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
            unsafe { F2(_mm_add_pd(self.0, o.0)) }
        }
    }

    impl core::ops::Mul for F2 {
        type Output = F2;
        #[inline(always)]
        fn mul(self, o: F2) -> F2 {
            // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
            unsafe { F2(_mm_mul_pd(self.0, o.0)) }
        }
    }

    impl Lanes for F2 {
        #[inline(always)]
        fn splat(x: f64) -> Self {
            // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
            unsafe { F2(_mm_set1_pd(x)) }
        }
    }

    #[inline(always)]
    fn load(x: &[f64]) -> __m128d {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe { _mm_set_pd(x[1], x[0]) }
    }

    #[inline(always)]
    fn store(v: __m128d) -> [f64; 2] {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe {
            let hi = _mm_unpackhi_pd(v, v);
            [_mm_cvtsd_f64(v), _mm_cvtsd_f64(hi)]
        }
    }

    #[inline(always)]
    fn splat_bits(x: u64) -> __m128i {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe { _mm_set1_epi64x(x as i64) }
    }

    /// All ones in each 64-bit lane whose signed value is negative.
    #[inline(always)]
    fn negative(x: __m128i) -> __m128i {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe { _mm_shuffle_epi32::<0xf5>(_mm_srai_epi32::<31>(x)) }
    }

    /// a < c (unsigned) per lane, for a, c < 2⁶³: the sign of a − c, which cannot overflow.
    #[inline(always)]
    fn lt63(a: __m128i, c: __m128i) -> __m128i {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe { negative(_mm_sub_epi64(a, c)) }
    }

    /// a < c (unsigned) per lane, for any a and c < 2⁶³: a ≥ 2⁶³ is not below.
    #[inline(always)]
    fn lt_any(a: __m128i, c: __m128i) -> __m128i {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe { _mm_andnot_si128(negative(a), lt63(a, c)) }
    }

    /// `a` where `m` is all ones, `b` where it is 0, per lane ([`super::ct::pick`]).
    #[inline(always)]
    fn pick(m: __m128i, a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe { _mm_xor_si128(b, _mm_and_si128(_mm_xor_si128(a, b), m)) }
    }

    /// [`super::Scaling::Fast`] in both lanes.
    pub(super) struct Fast {
        lo: __m128i,
        hi: __m128i,
        shift: __m128i,
        sign: __m128i,
        inf: __m128i,
    }

    impl Fast {
        #[inline(always)]
        pub(super) fn new(lo: u64, hi: u64, shift: u64) -> Self {
            Fast {
                lo: splat_bits(lo),
                hi: splat_bits(hi),
                shift: splat_bits(shift),
                sign: splat_bits(SIGN),
                inf: splat_bits(INF_BITS),
            }
        }

        /// [`super::Scaling::apply`] on the bits of two scores. The magnitudes and the constants compared
        /// with them are below 2⁶³, so that the sign of a 64-bit difference is their unsigned order.
        #[inline(always)]
        fn apply(&self, b: __m128i) -> __m128i {
            // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
            unsafe {
                let magnitude = _mm_andnot_si128(self.sign, b);
                let nan = lt63(self.inf, magnitude);
                let sign = _mm_and_si128(_mm_or_si128(b, nan), self.sign);
                let magnitude = pick(lt63(magnitude, self.hi), magnitude, self.hi);
                let tiny = lt63(magnitude, self.lo);
                _mm_andnot_si128(tiny, _mm_or_si128(sign, _mm_sub_epi64(magnitude, self.shift)))
            }
        }
    }

    /// a < b (unsigned) per lane, for any a and b: the borrow out of a − b, (¬a ∧ b) ∨ (¬(a ⊕ b) ∧ (a − b))
    /// in the top bit.
    #[inline(always)]
    fn lt(a: __m128i, b: __m128i) -> __m128i {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe {
            let borrow = _mm_or_si128(
                _mm_andnot_si128(a, b),
                _mm_andnot_si128(_mm_xor_si128(a, b), _mm_sub_epi64(a, b)),
            );
            negative(borrow)
        }
    }

    /// The largest order key ([`super::order_key`]) of the scaled live scores, as [`super::best_key`]:
    /// four running maxima of two lanes each (the maximum is the same in any order), then the tail.
    #[inline(always)]
    pub(super) fn best_key(lo: u64, hi: u64, shift: u64, scores: &[f64], live: &impl Fn(usize) -> u64) -> u64 {
        const STEP: usize = 8;
        let f = &Fast::new(lo, hi, shift);
        let whole = scores.len() / STEP * STEP;
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        let best = unsafe {
            let mut acc = [_mm_setzero_si128(); STEP / 2];
            for (c, start) in scores[..whole].chunks_exact(STEP).zip((0..).step_by(STEP)) {
                for (j, acc) in acc.iter_mut().enumerate() {
                    let r = start + 2 * j;
                    let b = f.apply(_mm_castpd_si128(load(&c[2 * j..])));
                    let key = _mm_xor_si128(b, _mm_or_si128(negative(b), f.sign));
                    let key = _mm_and_si128(key, _mm_set_epi64x(live(r + 1) as i64, live(r) as i64));
                    *acc = pick(lt(*acc, key), key, *acc);
                }
            }
            let mut best = 0u64;
            for v in acc {
                let (a, b) = (
                    _mm_cvtsi128_si64(v) as u64,
                    _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64,
                );
                best = super::ct::max(best, super::ct::max(a, b));
            }
            best
        };
        super::best_key(scores, super::Scaling::Fast { lo, hi, shift }, whole, best, live)
    }

    /// The public constants of [`y_of_scores`], in both lanes.
    pub(super) struct Gap {
        best: __m128d,
        fast: Fast,
        d_lo: __m128i,
        d_hi: __m128i,
        c: __m128d,
        cap: __m128d,
    }

    impl Gap {
        /// For [`super::Scaling::Fast`] with these fields, the best scaled score and the scale.
        #[inline(always)]
        pub(super) fn new(best: f64, lo: u64, hi: u64, shift: u64, scale: &IsoScale) -> Self {
            // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
            unsafe {
                Gap {
                    best: _mm_set1_pd(best),
                    fast: Fast::new(lo, hi, shift),
                    d_lo: splat_bits(scale.d_lo),
                    d_hi: splat_bits(scale.d_hi),
                    c: _mm_set1_pd(scale.c),
                    cap: _mm_set1_pd(Y_CAP),
                }
            }
        }
    }

    /// y of two scores: [`super::Scaling::apply`] (the `Fast` arm), the gap to the best and
    /// [`IsoScale::y_of_gap`], lane by lane. The magnitudes and the constants compared with them are below
    /// 2⁶³, so that the sign of a 64-bit difference is their unsigned order; the gap's bits may have the
    /// top bit set (a candidate above the best), which [`lt_any`] orders as the scalar code does.
    #[inline(always)]
    pub(super) fn y_of_scores(k: &Gap, s: &[f64]) -> [f64; 2] {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe {
            let scaled = k.fast.apply(_mm_castpd_si128(load(s)));
            let d = _mm_castpd_si128(_mm_sub_pd(k.best, _mm_castsi128_pd(scaled)));
            let d = _mm_andnot_si128(lt_any(d, k.d_lo), d);
            let d = pick(lt_any(d, k.d_hi), d, k.d_hi);
            // y ≥ +0 and finite: `minpd` orders it as the scalar minimum of the bits does.
            store(_mm_min_pd(_mm_mul_pd(_mm_castsi128_pd(d), k.c), k.cap))
        }
    }

    /// ω′ for each y of a chunk: [`super::split`] and [`super::poly`] two lanes at a time (truncation to
    /// 32-bit integers, y ∈ [0, 64]; p > 0, so `minpd` caps it as the scalar minimum of the bits), then
    /// [`decompose`].
    #[inline(always)]
    pub(super) fn weights_of(y: &[f64; CHUNK]) -> [(u64, u32); CHUNK] {
        // SAFETY: SSE2 intrinsics on registers only (no pointer), and SSE2 is enabled (the module's cfg).
        unsafe {
            let mut out = [(0u64, 0u32); CHUNK];
            let one = _mm_set1_pd(1.0);
            for (o, y) in out.chunks_exact_mut(2).zip(y.chunks_exact(2)) {
                let y = load(y);
                let k = _mm_cvttpd_epi32(y);
                let f = _mm_sub_pd(y, _mm_cvtepi32_pd(k));
                let p = store(_mm_min_pd(super::estrin(F2(f)).0, one));
                let (k0, k1) = (
                    _mm_cvtsi128_si32(k) as u32,
                    _mm_cvtsi128_si32(_mm_srli_si128::<4>(k)) as u32,
                );
                o[0] = decompose(p[0], k0);
                o[1] = decompose(p[1], k1);
            }
            out
        }
    }
}

/// ω′ 2¹²⁶ as an integer (exact): 2⁶² ≤ it ≤ 2¹²⁶.
#[inline(always)]
fn fixed_126((m, minus_e): (u64, u32)) -> u128 {
    ct::shl_wide(m, 74 - minus_e)
}

/// ω′ 2¹²⁸ − 1 as an integer (exact; ω′ = 1 gives 2¹²⁸ − 1 by wrapping): the coin Bernoulli(ω′) is
/// "128 random bits ≤ this".
#[inline(always)]
fn fixed_128_minus_one((m, minus_e): (u64, u32)) -> u128 {
    ct::shl_wide(m, 76 - minus_e).wrapping_sub(1)
}

/// A 192-bit unsigned integer, little-endian words, with branch-free addition and comparison.
#[derive(Clone, Copy, Default)]
struct U192([u64; 3]);

impl U192 {
    #[inline(always)]
    fn add(&mut self, x: u128) {
        let (lo, c0) = self.0[0].overflowing_add(x as u64);
        let (mid, c1) = self.0[1].overflowing_add((x >> 64) as u64);
        let (mid, c2) = mid.overflowing_add(c0 as u64);
        self.0[0] = lo;
        self.0[1] = mid;
        self.0[2] = self.0[2].wrapping_add(c1 as u64 + c2 as u64);
    }

    /// self − x (wrapping), without branches.
    #[inline(always)]
    fn sub(&mut self, x: u128) {
        let (lo, b0) = self.0[0].overflowing_sub(x as u64);
        let (mid, b1) = self.0[1].overflowing_sub((x >> 64) as u64);
        let (mid, b2) = mid.overflowing_sub(b0 as u64);
        self.0[0] = lo;
        self.0[1] = mid;
        self.0[2] = self.0[2].wrapping_sub(b1 as u64 + b2 as u64);
    }

    /// self ≤ other, without branches (the borrow out of other − self).
    #[cfg(test)]
    #[inline(always)]
    fn le(&self, other: &U192) -> bool {
        let (_, b0) = other.0[0].overflowing_sub(self.0[0]);
        let (d1, b1) = other.0[1].overflowing_sub(self.0[1]);
        let (_, b2) = d1.overflowing_sub(b0 as u64);
        let (d2, b3) = other.0[2].overflowing_sub(self.0[2]);
        let (_, b4) = d2.overflowing_sub((b1 | b2) as u64);
        !(b3 | b4)
    }
}

/// ⌊R T / 2²⁵⁶⌋ for R of 256 random bits: uniform on [0, T) up to a relative bias T/2²⁵⁶. Schoolbook
/// multiplication, no branch.
fn scaled_uniform<R: Rng + ?Sized>(rng: &mut R, t: &U192) -> U192 {
    let r = [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()];
    let mut prod = [0u64; 7];
    for (i, &ri) in r.iter().enumerate() {
        let mut carry = 0u128;
        for (j, &tj) in t.0.iter().enumerate() {
            let cur = u128::from(prod[i + j]) + u128::from(ri) * u128::from(tj) + carry;
            prod[i + j] = cur as u64;
            carry = cur >> 64;
        }
        prod[i + 3] = carry as u64;
    }
    U192([prod[4], prod[5], prod[6]])
}

/// The exponential mechanism, isochronously, among the live candidates (`live(r)` = 0 leaves r out; the
/// scores' own best among the live ones is their reference). Draws exactly 4 words.
pub(crate) fn exponential<R: Rng + ?Sized>(rng: &mut R, s: &impl IsoScores, live: impl Fn(usize) -> u64) -> usize {
    let n = s.len();
    // The weights of each chunk, the dead masked to 0 and the padding past n (a public condition) left out.
    let mut total = U192::default();
    for start in (0..n).step_by(CHUNK) {
        let w = chunk_weights(s, start);
        for (i, &wi) in w.iter().enumerate().take(n - start) {
            total.add(fixed_126(wi) & ct::wide(live(start + i)));
        }
    }
    let u = scaled_uniform(rng, &total);
    // The number of prefix sums ≤ U: the steps at which U − prefix is still ≥ 0, a 192-bit two's
    // complement difference above −2¹⁹⁰ whose top bit is its sign.
    let mut rest = u;
    let mut index = 0usize;
    for start in (0..n).step_by(CHUNK) {
        let w = chunk_weights(s, start);
        for (i, &wi) in w.iter().enumerate().take(n - start) {
            rest.sub(fixed_126(wi) & ct::wide(live(start + i)));
            index += (1 - (rest.0[2] >> 63)) as usize;
        }
    }
    index
}

/// Permute-and-flip, isochronously, among the live candidates: every coin flipped and kept in `coins`
/// (length ≥ n, checked by the callers), then a uniformly random success. Draws exactly 2n + 2 words.
pub(crate) fn permute_and_flip<R: Rng + ?Sized>(
    rng: &mut R,
    s: &impl IsoScores,
    live: impl Fn(usize) -> u64,
    coins: &mut [usize],
) -> usize {
    flip_all(rng, s.len(), |start| chunk_weights(s, start), live, coins)
}

/// The body of [`permute_and_flip`] over any chunk-weight function (the tests run it on the reference
/// weights too).
#[inline(always)]
fn flip_all<R: Rng + ?Sized>(
    rng: &mut R,
    n: usize,
    weights: impl Fn(usize) -> [(u64, u32); CHUNK],
    live: impl Fn(usize) -> u64,
    coins: &mut [usize],
) -> usize {
    let mut successes = 0u64;
    for start in (0..n).step_by(CHUNK) {
        let w = weights(start);
        for (i, &wi) in w.iter().enumerate().take(n - start) {
            let u = next_u128(rng);
            // u ≤ ω′ 2¹²⁸ − 1: no borrow out of the subtraction.
            let success = (1 - fixed_128_minus_one(wi).overflowing_sub(u).1 as u64) & live(start + i);
            coins[start + i] = success as usize;
            successes += success;
        }
    }
    // J = ⌊R K / 2¹²⁸⌋ for 128 random bits R = (hi, lo): ⌊(hi K + ⌊lo K / 2⁶⁴⌋) / 2⁶⁴⌋.
    let (lo, hi) = (rng.next_u64(), rng.next_u64());
    let k = u128::from(successes);
    let j = ((u128::from(hi) * k + ((u128::from(lo) * k) >> 64)) >> 64) as u64;
    let mut seen = 0u64;
    let mut index = 0usize;
    for &c in &coins[..n] {
        seen += c as u64;
        index += usize::from(seen <= j);
    }
    index
}

#[inline(always)]
fn next_u128<R: Rng + ?Sized>(rng: &mut R) -> u128 {
    u128::from(rng.next_u64()) | u128::from(rng.next_u64()) << 64
}

/// k rounds of the isochronous `selector` (exponential mechanism for it and Gumbel noise, permute-and-flip
/// for it and Exponential noise) among the candidates not chosen yet, each with its own best score: the
/// chosen indices in pick order. `flags` (length n) marks the chosen candidates, updated by a pass over
/// every flag (no address depends on a pick); `coins` (length ≥ n) is permute-and-flip's scratch.
pub(crate) fn top_k<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &[f64],
    scale: IsoScale,
    out: &mut [usize],
    flags: &mut [usize],
    coins: &mut [usize],
) {
    flags.fill(0);
    for slot in out.iter_mut() {
        let pick = {
            let live = |r: usize| ct::barrier((flags[r] as u64 ^ 1).wrapping_neg());
            let s = FloatIso::new(scores, scale, live);
            match selector {
                Selector::Exponential | Selector::NoisyMax(Noise::Gumbel) => exponential(rng, &s, live),
                _ => permute_and_flip(rng, &s, live, coins),
            }
        };
        for (r, f) in flags.iter_mut().enumerate() {
            *f |= (ct::eq(r as u64, pick as u64) & 1) as usize;
        }
        *slot = pick;
    }
}

/// The ε each round of an isochronous selection of k out of n candidates runs its mechanism at, so that
/// the selection is ε-DP in total, exactly (module documentation): ε/k (rounded down) less a slack of
/// 2⁻⁴⁰ for the exponential mechanism (and Gumbel noise) or (n + 1) 2⁻⁴⁰ for permute-and-flip (and
/// Exponential noise), rounded down. A round run at ε₀ samples every output within a factor e^{±a} of the
/// mechanism at ε₀ with 2a ≤ slack, so it is (ε₀ + slack)-DP, and ε₀ + slack ≤ ε/k.
///
/// Errors: those of top-k (ε not finite and positive, k = 0 or k > n); ε/k not above the slack, or above
/// 2⁶⁴ → [`Error::InvalidEpsilon`]; Laplace noise → [`Error::Unsupported`].
pub fn isochronous_run_epsilon(selector: Selector, epsilon: f64, n: usize, k: usize) -> Result<f64, Error> {
    let round = super::per_round_epsilon(epsilon, k, n)?;
    let unit = libm::ldexp(1.0, -40);
    let slack = match selector {
        Selector::Exponential | Selector::NoisyMax(Noise::Gumbel) => unit,
        Selector::PermuteAndFlip | Selector::NoisyMax(Noise::Exponential) => mul_up(n as f64 + 1.0, unit),
        Selector::NoisyMax(Noise::Laplace) => return Err(Error::Unsupported),
    };
    let run = sub_down(round, slack);
    if run > 0.0 && run <= RUN_EPSILON_MAX {
        Ok(run)
    } else {
        Err(Error::InvalidEpsilon)
    }
}

/// The largest ε a round runs at: beyond, every candidate but the best already has weight 2⁻⁶⁴.
const RUN_EPSILON_MAX: f64 = 18_446_744_073_709_551_616.0; // 2⁶⁴

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::test_fit::assert_fits;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::vec::Vec;
    use std::{format, vec};

    const U: f64 = 1.0 / 9_007_199_254_740_992.0; // 2⁻⁵³

    /// The isochronous sampling as it was before the weights went two lanes at a time (commit 25d2e4d),
    /// kept verbatim as the reference of [`outputs_are_bit_identical_to_the_reference`].
    #[allow(clippy::needless_range_loop)]
    mod reference {
        use super::super::*;

        /// The best scaled live score of `FloatIso::new`.
        pub(super) fn best_before(scores: &[f64], scale: IsoScale, live: impl Fn(usize) -> u64) -> f64 {
            let mut best = 0u64; // below every key of a finite double
            for (r, &s) in scores.iter().enumerate() {
                best = ct::max(best, order_key(scale.scaling.apply(s)) & live(r));
            }
            from_order_key(best)
        }

        #[inline(always)]
        fn poly_before(f: f64) -> f64 {
            let f2 = f * f;
            let f4 = f2 * f2;
            let f8 = f4 * f4;
            let b = core::array::from_fn::<f64, 8, _>(|i| POLY[2 * i] + POLY[2 * i + 1] * f);
            let c = core::array::from_fn::<f64, 4, _>(|i| b[2 * i] + b[2 * i + 1] * f2);
            let d0 = c[0] + c[1] * f4;
            let d1 = c[2] + c[3] * f4;
            f64::from_bits(ct::min((d0 + d1 * f8).to_bits(), 1.0f64.to_bits()))
        }

        #[inline(always)]
        pub(super) fn chunk_weights_before(s: &impl IsoScores, start: usize) -> [(u64, u32); CHUNK] {
            let n = s.len();
            let mut k = [0u32; CHUNK];
            let mut f = [0f64; CHUNK];
            for i in 0..CHUNK {
                let y = if start + i < n { s.y(start + i) } else { 0.0 };
                (k[i], f[i]) = split(y);
            }
            let mut p = [0f64; CHUNK];
            for i in 0..CHUNK {
                p[i] = poly_before(f[i]);
            }
            let mut out = [(0u64, 0u32); CHUNK];
            for i in 0..CHUNK {
                out[i] = decompose(p[i], k[i]);
            }
            out
        }

        pub(super) fn exponential_before<R: Rng + ?Sized>(
            rng: &mut R,
            s: &impl IsoScores,
            live: impl Fn(usize) -> u64,
        ) -> usize {
            let n = s.len();
            // The weights of a chunk, the dead and the padding masked to 0.
            let weights = |start: usize| {
                let w = chunk_weights_before(s, start);
                core::array::from_fn::<u128, CHUNK, _>(|i| {
                    // The padding past n (a public condition) is dropped.
                    let keep = u128::from(if start + i < n { live(start + i) } else { 0 });
                    fixed_126(w[i]) & (keep | keep << 64)
                })
            };
            let mut total = U192::default();
            for start in (0..n).step_by(CHUNK) {
                for w in weights(start) {
                    total.add(w);
                }
            }
            let u = scaled_uniform(rng, &total);
            let mut prefix = U192::default();
            let mut index = 0usize;
            for start in (0..n).step_by(CHUNK) {
                for w in weights(start) {
                    prefix.add(w);
                    index += usize::from(prefix.le(&u));
                }
            }
            index
        }

        pub(super) fn permute_and_flip_before<R: Rng + ?Sized>(
            rng: &mut R,
            s: &impl IsoScores,
            live: impl Fn(usize) -> u64,
            coins: &mut [usize],
        ) -> usize {
            super::super::flip_all(rng, s.len(), |start| chunk_weights_before(s, start), live, coins)
        }
    }

    /// A chunk's y given directly.
    struct Ys([f64; CHUNK]);

    impl IsoScores for Ys {
        fn len(&self) -> usize {
            CHUNK
        }
        fn y(&self, r: usize) -> f64 {
            self.0[r]
        }
    }

    /// ω′ as a double (exact: m 2^{e−52}).
    fn weight_f64(y: f64) -> f64 {
        let (m, minus_e) = weight(y);
        libm::ldexp(m as f64, -(minus_e as i32) - 52)
    }

    /// The scores of `scores` at (ε, Δ), as the selectors see them.
    fn float_iso(scores: &[f64], eps: f64, delta: f64) -> FloatIso<'_> {
        FloatIso::new(scores, IsoScale::new(eps, delta).unwrap(), |_| u64::MAX)
    }

    #[test]
    fn scaling_is_exact_with_the_public_rule_at_the_edges() {
        let xs = [
            0.0,
            -0.0,
            1.0,
            -3.5,
            1e-300,
            -1e-300,
            5e-324,
            -5e-324,
            2.2e-308,
            1e300,
            -1e300,
            f64::MAX,
            -f64::MAX,
            123.456,
            0.1,
        ];
        for k in [0, 1, -1, 10, -10, -51, -52, 900, -900, 1023, -1074] {
            for &x in &xs {
                let want = libm::ldexp(x, -k);
                let got = scaled_any(x, k);
                assert_eq!(
                    got.to_bits(),
                    Scaling::of(k).apply(x).to_bits(),
                    "both scalings, x = {x}, k = {k}"
                );
                if want.is_infinite() || want.abs() > f64::MAX {
                    assert_eq!(got, f64::MAX.copysign(x), "x = {x}, k = {k}");
                } else if want.abs() < libm::ldexp(1.0, -970) {
                    assert_eq!(got.to_bits(), 0, "x = {x}, k = {k}");
                } else {
                    assert_eq!(got, want, "x = {x}, k = {k}");
                }
            }
            let max = libm::ldexp(f64::MAX, -k).min(f64::MAX);
            let max = if max < libm::ldexp(1.0, -970) { 0.0 } else { max };
            for scaling in [Scaling::of(k), Scaling::Any(k)] {
                assert_eq!(scaling.apply(f64::NAN), -max, "k = {k}");
                assert_eq!(scaling.apply(f64::INFINITY), max, "k = {k}");
                assert_eq!(scaling.apply(f64::NEG_INFINITY), -max, "k = {k}");
            }
        }
        for x in [0.0, -1.0, 1e-300, 7.5, -f64::MAX, f64::MAX] {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
        assert!(order_key(-1.0) < order_key(0.0) && order_key(0.0) < order_key(1e-200));
    }

    #[test]
    fn the_polynomial_is_within_its_bound() {
        // |p(f) − 2^{−f}| ≤ 77.4 u 2^{−f} (module documentation); libm's exp2 is within an ulp.
        let bound = 78.5 * U;
        let mut worst = 0.0f64;
        for i in 0..=1_000_000u64 {
            let f = i as f64 / 1_000_001.0;
            let err = (poly(f) - libm::exp2(-f)).abs() / libm::exp2(-f);
            worst = worst.max(err);
            assert!(err <= bound, "f = {f}: error {err:e}");
            assert!(poly(f) <= 1.0);
        }
        assert_eq!(poly(0.0), 1.0);
        std::eprintln!("polynomial: worst error 2^{:.2}", libm::log2(worst));
    }

    #[test]
    fn weights_are_exact_fixed_point_numbers() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for i in 0..200_000 {
            let y = match i % 4 {
                0 => (i / 4) as f64 * 64.0 / 50_000.0,
                1 => (rng.next_u64() >> 11) as f64 * U * 64.0,
                2 => ((i / 4) % 65) as f64,
                _ => libm::ldexp(1.0, -((i / 4) % 80)),
            };
            let w = weight_f64(y);
            let rel = (w * libm::exp2(y) - 1.0).abs();
            assert!(rel <= 80.0 * U, "y = {y}: relative error {rel:e}");
            // The fixed-point forms hold ω′ exactly.
            assert_eq!(fixed_126(weight(y)) as f64, libm::ldexp(w, 126), "y = {y}");
            let f128 = fixed_128_minus_one(weight(y)).wrapping_add(1);
            if w == 1.0 {
                assert_eq!(f128, 0, "2^128 wraps");
            } else {
                assert_eq!(f128 as f64, libm::ldexp(w, 128), "y = {y}");
            }
        }
        // Two lanes at a time, the same: y over [0, 64] in steps of 1/1000, a chunk at a time.
        for i in (0..64_008).step_by(CHUNK) {
            let y: [f64; CHUNK] = core::array::from_fn(|j| ((i + j) % 64_001) as f64 / 1000.0);
            assert_eq!(chunk_weights(&Ys(y), 0), y.map(weight), "i = {i}");
        }
        assert_eq!(fixed_126(weight(64.0)), 1 << 62);
        assert_eq!(fixed_126(weight(0.0)), 1 << 126);
        assert_eq!(fixed_128_minus_one(weight(0.0)), u128::MAX);
    }

    #[test]
    fn y_is_within_its_bound_and_capped() {
        // ε = 1, Δ = ½: γ = the gap exactly, y = gap log₂e.
        let scores: Vec<f64> = (0..4000).map(|i| -(i as f64) * 0.015625 + 7.0).collect();
        let s = float_iso(&scores, 1.0, 0.5);
        for (r, &x) in scores.iter().enumerate() {
            let want = ((7.0 - x) * core::f64::consts::LOG2_E).min(64.0);
            assert!((s.y(r) - want).abs() <= libm::ldexp(1.0, -44), "r = {r}");
            assert!(s.y(r) <= 64.0);
        }
        assert_eq!(s.y(0), 0.0);
        // Extremes: NaN and ±∞ by the public rule, tiny and huge magnitudes, and ε/Δ at both ends.
        let odd = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            5e-324,
            -f64::MAX,
            f64::MAX,
            0.0,
            1e-300,
        ];
        // No range of Δ is refused: the scores are scaled by Δ's power of two first.
        for (e, d) in [
            (1.0, 1.0),
            (1e-6, 1e200),
            (1e6, 1e-200),
            (1.0, 5e-300),
            (1e-9, 5e-324),
            (1e9, f64::MAX),
        ] {
            let s = float_iso(&odd, e, d);
            for r in 0..odd.len() {
                let y = s.y(r);
                assert!((0.0..=64.0).contains(&y), "ε = {e}, Δ = {d}, r = {r}: y = {y}");
            }
            assert_eq!(s.y(1), 0.0, "+∞ is the best");
            assert_eq!(
                s.y(5),
                if d < 2.0 { 0.0 } else { s.y(5) },
                "f64::MAX ties with +∞ when scaling saturates"
            );
            assert_eq!(s.y(0), s.y(2), "NaN counts as −∞, the lowest");
            assert_eq!(s.y(0), 64.0);
        }
    }

    #[test]
    fn wide_arithmetic() {
        let mut a = U192::default();
        a.add(u128::MAX);
        a.add(1);
        assert_eq!(a.0, [0, 0, 1]);
        let b = U192([5, 0, 1]);
        assert!(a.le(&b) && !b.le(&a) && a.le(&a));
        assert!(U192([0, 1, 0]).le(&U192([u64::MAX, 0, 1])));
        assert!(!U192([0, 0, 2]).le(&U192([u64::MAX, u64::MAX, 1])));
        // U − prefix ≥ 0 (top bit clear) exactly when prefix ≤ U, across word borrows.
        let u = U192([5, 0, 1]);
        for (w, stays) in [
            (5u128, true),
            (6, true),
            (7, false),
            (1 << 64, false),
            (u128::MAX, false),
        ] {
            let mut rest = u;
            let mut prefix = U192::default();
            rest.sub(u128::MAX);
            prefix.add(u128::MAX);
            rest.sub(w);
            prefix.add(w);
            assert_eq!(rest.0[2] >> 63 == 0, prefix.le(&u), "w = {w}");
            assert_eq!(prefix.le(&u), stays, "w = {w}");
        }
        // ⌊R T / 2²⁵⁶⌋ against a direct computation for T below 2⁶⁴ and R = (r, r, r, r).
        struct Const(u64);
        impl rand_core::TryRng for Const {
            type Error = core::convert::Infallible;
            fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
                Ok(self.0 as u32)
            }
            fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
                Ok(self.0)
            }
            fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
                Ok(())
            }
        }
        for t in [1u64, 2, 3, 1000, u64::MAX] {
            for r in [0u64, 1, u64::MAX / 2, u64::MAX] {
                let u = scaled_uniform(&mut Const(r), &U192([t, 0, 0]));
                // R / 2²⁵⁶ = r (1 − 2⁻²⁵⁶) / (2⁶⁴ − 1), so ⌊R T / 2²⁵⁶⌋ = ⌊r T / (2⁶⁴ − 1)⌋, one less when
                // that quotient is a positive integer.
                let (num, den) = (u128::from(r) * u128::from(t), u128::from(u64::MAX));
                let want = (if num > 0 && num % den == 0 {
                    num / den - 1
                } else {
                    num / den
                }) as u64;
                assert_eq!(u.0, [want, 0, 0], "t = {t}, r = {r}");
            }
        }
    }

    /// The capped mechanism's weights ω_r = exp(−min(γ_r, 64 ln 2)) with γ exact (ε/(2Δ) dyadic, dyadic
    /// scores) and the exponential mechanism's probabilities.
    fn capped_weights(scores: &[f64], epsilon: f64, delta: f64) -> Vec<f64> {
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        scores
            .iter()
            .map(|&s| libm::exp(-(epsilon * (best - s) / (2.0 * delta)).min(64.0 * core::f64::consts::LN_2)))
            .collect()
    }

    fn normalise(w: &[f64]) -> Vec<f64> {
        let t: f64 = w.iter().sum();
        w.iter().map(|x| x / t).collect()
    }

    /// Permute-and-flip's probabilities for coin probabilities p: p_r ∫₀¹ Π_{j≠r} (1 − p_j t) dt, by
    /// Gauss–Legendre quadrature on 64 panels (the integrand is a polynomial of degree n − 1).
    fn pf_probabilities(p: &[f64]) -> Vec<f64> {
        let nodes = [
            (-0.861_136_311_594_052_6, 0.347_854_845_137_453_9),
            (-0.339_981_043_584_856_3, 0.652_145_154_862_546_1),
            (0.339_981_043_584_856_3, 0.652_145_154_862_546_1),
            (0.861_136_311_594_052_6, 0.347_854_845_137_453_9),
        ];
        (0..p.len())
            .map(|r| {
                let panels = 64;
                let mut sum = 0.0;
                for k in 0..panels {
                    let (a, b) = (k as f64 / panels as f64, (k + 1) as f64 / panels as f64);
                    for &(x, w) in &nodes {
                        let t = 0.5 * (b - a) * x + 0.5 * (a + b);
                        let f: f64 = p
                            .iter()
                            .enumerate()
                            .filter(|&(j, _)| j != r)
                            .map(|(_, &q)| 1.0 - q * t)
                            .product();
                        sum += 0.5 * (b - a) * w * f;
                    }
                }
                p[r] * sum
            })
            .collect()
    }

    fn score_sets() -> Vec<(&'static str, Vec<f64>, f64, f64)> {
        vec![
            ("ties", vec![3.0, 3.0, 2.0, 3.0, 0.0], 1.0, 1.0),
            ("spread", (0..12).map(|i| -(i as f64) * 0.75).collect(), 1.0, 0.5),
            ("far", vec![0.0, -1.0, -40.0, -90.0, -1e300, f64::NAN], 2.0, 1.0),
            ("wide", (0..40).map(|i| ((i * 37) % 23) as f64).collect(), 0.5, 1.0),
        ]
    }

    #[test]
    fn exponential_output_probabilities_are_within_the_bound() {
        // P′(r) = W_r / T up to the uniform's bias 2⁻⁶⁶: within e^{±2ζ} of the capped mechanism's.
        for (label, scores, eps, delta) in score_sets() {
            let s = float_iso(&scores, eps, delta);
            let w: Vec<f64> = (0..scores.len()).map(|r| fixed_126(weight(s.y(r))) as f64).collect();
            let clean_scores: Vec<f64> = scores.iter().map(|&x| crate::select::finite(x)).collect();
            let want = normalise(&capped_weights(&clean_scores, eps, delta));
            for (r, (p, q)) in normalise(&w).iter().zip(&want).enumerate() {
                let loss = (libm::log(*p) - libm::log(*q)).abs();
                assert!(loss <= libm::ldexp(1.0, -42), "{label}, r = {r}: {loss:e}");
            }
        }
    }

    #[test]
    fn samplers_fit_the_capped_mechanisms() {
        for (i, (label, scores, eps, delta)) in score_sets().into_iter().enumerate() {
            let n = scores.len();
            let clean_scores: Vec<f64> = scores.iter().map(|&x| crate::select::finite(x)).collect();
            let w = capped_weights(&clean_scores, eps, delta);
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(70 + i as u64);
            let s = float_iso(&scores, eps, delta);
            let draws = 200_000;
            let mut em = vec![0u64; n];
            let mut pf = vec![0u64; n];
            let mut coins = vec![0usize; n];
            for _ in 0..draws {
                em[exponential(&mut rng, &s, |_| u64::MAX)] += 1;
                pf[permute_and_flip(&mut rng, &s, |_| u64::MAX, &mut coins)] += 1;
            }
            assert_fits(&format!("isochronous exponential, {label}"), &em, &normalise(&w));
            assert_fits(
                &format!("isochronous permute-and-flip, {label}"),
                &pf,
                &pf_probabilities(&w),
            );
        }
    }

    #[test]
    fn the_checker_catches_a_broken_sampler() {
        // Weights of 2^{−2y} (ε doubled) are rejected by the same test.
        let scores: Vec<f64> = (0..12).map(|i| -(i as f64) * 0.75).collect();
        let w = capped_weights(&scores, 1.0, 0.5);
        let s = float_iso(&scores, 2.0, 0.5);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut em = vec![0u64; scores.len()];
        for _ in 0..200_000 {
            em[exponential(&mut rng, &s, |_| u64::MAX)] += 1;
        }
        assert!(crate::test_fit::chi_square_p_value(&em, &normalise(&w)) < crate::test_fit::ALPHA);
    }

    /// Score sets for the bit-identity test: typical, tied, extreme and arbitrary bit patterns, at lengths
    /// around the chunk size.
    fn identity_cases(rng: &mut Xoshiro256PlusPlus) -> Vec<Vec<f64>> {
        let special = [
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            2.2e-308,
            -2.2e-308,
            1e-300,
            f64::MAX,
            -f64::MAX,
            1e300,
            -1e300,
            1.0,
            -1.0,
        ];
        let mut cases = Vec::new();
        for n in [1usize, 2, 3, 7, 8, 9, 15, 16, 17, 33, 64, 101, 1000] {
            let unit = |rng: &mut Xoshiro256PlusPlus| (rng.next_u64() >> 11) as f64 * U;
            cases.push((0..n).map(|_| 100.0 * unit(rng)).collect());
            cases.push((0..n).map(|_| 10.0 * (unit(rng) - 0.5) * 40.0).collect());
            cases.push((0..n).map(|r| if r == n / 2 { 0.0 } else { -1e6 }).collect());
            cases.push((0..n).map(|r| ((r * 37) % 5) as f64).collect());
            cases.push((0..n).map(|_| f64::from_bits(rng.next_u64())).collect());
            cases.push(
                (0..n)
                    .map(|_| special[(rng.next_u64() % special.len() as u64) as usize])
                    .collect(),
            );
            // Gaps around the clamps: the best minus tiny and large multiples of powers of two.
            cases.push(
                (0..n)
                    .map(|_| {
                        let e = (rng.next_u64() % 140) as i32 - 100;
                        let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
                        3.0 - sign * libm::ldexp(unit(rng), e)
                    })
                    .collect(),
            );
        }
        cases
    }

    #[test]
    fn outputs_are_bit_identical_to_the_reference() {
        // The weights of every chunk, the outputs and the generator's position after the call, for the
        // double and the integer scores, with and without candidates left out, against the code before
        // the weights went two lanes at a time.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
        let params = [
            (1.0, 1.0),
            (0.1, 1.0),
            (7.0, 0.5),
            (1e-6, 1e200),
            (1e6, 1e-200),
            (1.0, 5e-300),
            (1e-9, 5e-324),
            (1e9, f64::MAX),
            (2.0, 3e-16),
            (1.0, 1e-15),
        ];
        let mut checked = 0usize;
        for scores in identity_cases(&mut rng) {
            let n = scores.len();
            for &(eps, delta) in &params {
                let scale = IsoScale::new(eps, delta).unwrap();
                // Everyone live, then every third candidate left out (some above the best live one).
                let out_of = |r: usize| if r % 3 == 1 { 0 } else { u64::MAX };
                for live in [(|_| u64::MAX) as fn(usize) -> u64, out_of] {
                    let s = FloatIso::new(&scores, scale, live);
                    assert_eq!(
                        s.best.to_bits(),
                        reference::best_before(&scores, scale, live).to_bits(),
                        "ε = {eps}, Δ = {delta}, n = {n}"
                    );
                    for start in (0..n).step_by(CHUNK) {
                        assert_eq!(
                            chunk_weights(&s, start),
                            reference::chunk_weights_before(&s, start),
                            "ε = {eps}, Δ = {delta}, n = {n}, start = {start}"
                        );
                        checked += 1;
                    }
                    let seed = rng.next_u64();
                    let (mut a, mut b) = (
                        rand_chacha::ChaCha20Rng::seed_from_u64(seed),
                        rand_chacha::ChaCha20Rng::seed_from_u64(seed),
                    );
                    let (mut ca, mut cb) = (vec![7usize; n], vec![7usize; n]);
                    for _ in 0..3 {
                        assert_eq!(
                            exponential(&mut a, &s, live),
                            reference::exponential_before(&mut b, &s, live)
                        );
                        assert_eq!(
                            permute_and_flip(&mut a, &s, live, &mut ca),
                            reference::permute_and_flip_before(&mut b, &s, live, &mut cb)
                        );
                        assert_eq!(ca, cb);
                        assert_eq!(a.get_word_pos(), b.get_word_pos());
                    }
                }
            }
            // Integer scores: the scores' integer parts, clamped to ±2¹²⁰, on grids of 1 and 3 units.
            let words: Vec<u64> = scores
                .iter()
                .flat_map(|&x| {
                    let v = crate::select::finite(x).clamp(-1e36, 1e36) as i128;
                    [v as u64, (v >> 64) as u64]
                })
                .collect();
            for units in [1u64, 3] {
                let s = IntIso::new(&words, IntScale::new(0.5, units).unwrap(), |_| u64::MAX);
                for start in (0..n).step_by(CHUNK) {
                    assert_eq!(chunk_weights(&s, start), reference::chunk_weights_before(&s, start));
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }

    #[test]
    fn the_identity_check_sees_one_rounding() {
        // The same polynomial by Horner's rule rounds differently somewhere on [0, 1): bit identity is a
        // check that fails on a change of evaluation order.
        let horner = |f: f64| POLY.iter().rev().fold(0.0, |acc, &a| acc * f + a);
        let differs = (0..10_000).any(|i| {
            let f = i as f64 / 10_000.0;
            horner(f).to_bits() != estrin(f).to_bits()
        });
        assert!(differs);
    }

    #[test]
    fn top_k_masks_the_chosen_and_uses_their_own_best() {
        // Scores (1000, 500, 0): after 1000, the second round must favour 500 as the mechanism on {500, 0}
        // would (a global best would cap both at 2⁻⁶⁴ and pick uniformly).
        let scores = [1000.0, 500.0, 0.0];
        let scale = IsoScale::new(0.1, 1.0).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let (mut flags, mut coins) = ([0usize; 3], [0usize; 3]);
        for selector in [Selector::Exponential, Selector::PermuteAndFlip] {
            let mut seconds = [0u64; 3];
            for _ in 0..2000 {
                let mut out = [9usize; 3];
                top_k(&mut rng, selector, &scores, scale, &mut out, &mut flags, &mut coins);
                let mut sorted = out;
                sorted.sort();
                assert_eq!(sorted, [0, 1, 2], "{selector:?}");
                seconds[out[1]] += 1;
            }
            assert!(seconds[1] > 1990, "{selector:?}: {seconds:?}");
        }
    }

    #[test]
    fn randomness_consumed_is_fixed() {
        // Neighbouring score sets — tied counts against tied + 1 — leave the stream at the same position.
        let tied = [5.0; 100];
        let mut plus = tied;
        plus[17] = 6.0;
        let mut coins = [0usize; 100];
        for seed in 0..20 {
            let mut a = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
            let mut b = a.clone();
            exponential(&mut a, &float_iso(&tied, 1.0, 1.0), |_| u64::MAX);
            exponential(&mut b, &float_iso(&plus, 1.0, 1.0), |_| u64::MAX);
            assert_eq!(a.get_word_pos(), b.get_word_pos());
            assert_eq!(a.get_word_pos(), 8);
            permute_and_flip(&mut a, &float_iso(&tied, 1.0, 1.0), |_| u64::MAX, &mut coins);
            permute_and_flip(&mut b, &float_iso(&plus, 1.0, 1.0), |_| u64::MAX, &mut coins);
            assert_eq!(a.get_word_pos(), b.get_word_pos());
        }
    }

    /// The largest privacy loss of the isochronous exponential mechanism (as implemented: W_r/T) and of
    /// permute-and-flip (from its coins' exact probabilities) over the counting model with 3 candidates,
    /// counts 0..=4, neighbours differing by one in one count, with the weights of (ε, Δ).
    fn worst_losses(eps: f64, delta: f64) -> (f64, f64) {
        let mut worlds = Vec::new();
        for a in 0..5 {
            for b in 0..5 {
                for c in 0..5 {
                    worlds.push([a as f64, b as f64, c as f64]);
                }
            }
        }
        let probs = |x: &[f64; 3]| {
            let s = float_iso(x, eps, delta);
            let em: Vec<f64> = (0..3).map(|r| fixed_126(weight(s.y(r))) as f64).collect();
            let coins: Vec<f64> = (0..3).map(|r| weight_f64(s.y(r))).collect();
            (normalise(&em), pf_probabilities(&coins))
        };
        let mut worst = (0.0f64, 0.0f64);
        for x in &worlds {
            for i in 0..3 {
                let mut y = *x;
                y[i] += 1.0;
                if y[i] > 4.0 {
                    continue;
                }
                let ((ex, px), (ey, py)) = (probs(x), probs(&y));
                for r in 0..3 {
                    worst.0 = worst.0.max((libm::log(ex[r]) - libm::log(ey[r])).abs());
                    worst.1 = worst.1.max((libm::log(px[r]) - libm::log(py[r])).abs());
                }
            }
        }
        worst
    }

    #[test]
    fn privacy_in_a_small_world() {
        // The uniform's bias (2⁻⁶⁶ relative) is below what these doubles resolve; the quadrature's error
        // is far below the slack.
        let eps = 1.0;
        let (em, pf) = worst_losses(eps, 1.0);
        std::eprintln!("small world: worst losses {em} (EM), {pf} (P&F) at ε = {eps}");
        // Run at ε₀ = the isochronous ε for a requested ε of 1: the loss stays below 1.
        let unit = libm::ldexp(1.0, -40);
        assert!(em <= eps + unit + 4.0 * U);
        assert!(pf <= eps + 4.0 * unit + 1e-12);
        // The checker fails a sampler that treats Δ = 1 as ¼ (weights four times too steep).
        let (em, pf) = worst_losses(eps, 0.25);
        assert!(em > eps && pf > eps, "broken variant not caught: {em}, {pf}");
    }

    #[test]
    fn run_epsilon() {
        let unit = libm::ldexp(1.0, -40);
        let run = |sel, e, n, k| isochronous_run_epsilon(sel, e, n, k);
        assert_eq!(run(Selector::Exponential, 1.0, 10, 1).unwrap(), 1.0 - unit);
        assert_eq!(run(Selector::NoisyMax(Noise::Gumbel), 1.5, 10, 3).unwrap(), 0.5 - unit);
        assert_eq!(run(Selector::PermuteAndFlip, 0.5, 10, 2).unwrap(), 0.25 - 11.0 * unit);
        assert_eq!(
            run(Selector::NoisyMax(Noise::Laplace), 1.0, 10, 1),
            Err(Error::Unsupported)
        );
        assert_eq!(run(Selector::Exponential, 1.0, 10, 11), Err(Error::InvalidArgument));
        assert_eq!(run(Selector::Exponential, unit, 10, 1), Err(Error::InvalidEpsilon));
        assert_eq!(
            run(Selector::PermuteAndFlip, 1e-9, 10_000, 1),
            Err(Error::InvalidEpsilon)
        );
        // Rounded down: ε₀ + slack never exceeds ε.
        for e in [0.1, 1.0 / 3.0, 7.7, 1e-6] {
            let r = run(Selector::Exponential, e, 5, 1).unwrap();
            assert!(crate::float::add_up(r, unit) <= e);
        }
    }
}
