//! The *select* stage: choose one index from n finite scores with global sensitivity Δ under ε-DP.
//!
//! Every selector runs in one of two arithmetics ([`Arithmetic`]):
//! * **exact** (the default): the output distribution is exactly the mathematical mechanism's on the
//!   scores floored onto the grid of Δ, with every coin an exact rational or exp(−γ) of a rational γ
//!   ([`crate::exact`] and the exact selectors of this module). The exponential mechanism is sampled by
//!   rejection, from uniform proposals first and, when those keep failing, from proposals by level of γ
//!   that are close to the target (`levels`); report-noisy-max with Gumbel noise *is* the exponential mechanism and with Exponential
//!   noise *is* permute-and-flip (same distributions), so those run exactly too; report-noisy-max with
//!   Laplace noise has no exact form here and is refused with [`Error::Unsupported`].
//! * **float**: the textbook floating-point samplers on the scaled gaps x(r) = ε (s(r) − s*) / (2Δ) ≤ 0.
//!   Nothing overflows for any finite input (the gap is computed as s/2 − s*/2), but probabilities are only
//!   as exact as 53-bit uniforms: an output can have probability 0 on one dataset and 2⁻⁵³ on its
//!   neighbour, so the guarantee is ε-DP in real arithmetic, not in the arithmetic that runs.
//!
//! There is no non-private fallback anywhere.

pub(crate) mod ct;
pub(crate) mod exact;
mod exponential;
pub(crate) mod iso;
mod levels;
mod noisy_max;
mod permute_flip;
mod topk;

pub(crate) use exponential::probabilities_in_place;
pub use exponential::{exponential_probabilities, select_exponential, select_exponential_float};
pub use iso::isochronous_run_epsilon;
pub use noisy_max::{select_noisy_max, select_noisy_max_float, Noise};
pub use permute_flip::{select_permute_and_flip, select_permute_and_flip_float};
pub(crate) use topk::{per_round_epsilon, top_k_int};
pub use topk::{select_top_k, select_top_k_gumbel};
#[doc(hidden)]
pub use topk::{top_k_gumbel_on, top_k_on};

use crate::exact::{Grid, Scale};
use crate::Error;
use exact::{ExactScores, Finite, FloatScores, IntScores, Raw};
use rand_core::Rng;

/// The arithmetic a mechanism runs in (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arithmetic {
    /// Every coin exact: ε-DP in the arithmetic that runs (the default). The running time depends on the
    /// scores.
    #[default]
    Exact,
    /// Floating-point samplers: ε-DP in real arithmetic only.
    Float,
    /// Constant time (`iso`): control flow, memory addresses and randomness consumed depend only on the
    /// public arguments, never on the scores. Every output probability is within a factor e^{±a} of the
    /// mechanism's, paid for by running it at an ε₀ a hair below ε ([`isochronous_run_epsilon`]), so the
    /// selection is still pure ε-DP. For an analyst who can time the call (SQL, a service).
    Isochronous,
}

/// A global-sensitivity selector, for the stages and wrappers that let the caller choose one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The exponential mechanism ([`select_exponential`]).
    Exponential,
    /// Permute-and-flip ([`select_permute_and_flip`]); needs an index scratch of n entries.
    PermuteAndFlip,
    /// Report-noisy-max with the given noise ([`select_noisy_max`]). With Exponential noise in exact
    /// arithmetic it runs as permute-and-flip and needs the same index scratch.
    NoisyMax(Noise),
}

impl Selector {
    /// True when this selector needs an index scratch of n entries in `arithmetic`.
    pub fn needs_permutation(self, arithmetic: Arithmetic) -> bool {
        match self {
            Selector::PermuteAndFlip => true,
            Selector::NoisyMax(Noise::Exponential) => arithmetic != Arithmetic::Float,
            _ => false,
        }
    }
}

/// Runs `selector` on `scores` in `arithmetic`. `perm_scratch` is used only when
/// [`Selector::needs_permutation`] (length ≥ n there; it may be empty otherwise).
///
/// Draws exactly one key (four words) from `rng` and samples from a private stream keyed by it
/// ([`crate::rng::call_stream`]), so the caller's generator advances by the same amount whatever the scores.
/// Scores that are NaN count as −f64::MAX and ±∞ as ±f64::MAX (a public rule, so that no status depends on
/// the data).
pub fn select<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    let mut stream = crate::rng::call_stream(rng);
    select_on(
        &mut stream,
        selector,
        scores,
        sensitivity,
        epsilon,
        perm_scratch,
        arithmetic,
    )
}

/// [`select`] on a stream the caller already derived (the stages of a larger mechanism).
#[doc(hidden)]
pub fn select_on<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    // Every argument is checked before the scores (data) are looked at, and no check looks at them, so that
    // no error can hide or reveal a property of the data.
    if arithmetic != Arithmetic::Float && selector == Selector::NoisyMax(Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    check_arguments(scores.len(), sensitivity, epsilon)?;
    if selector.needs_permutation(arithmetic) && perm_scratch.len() < scores.len() {
        return Err(Error::ScratchTooSmall);
    }
    match arithmetic {
        Arithmetic::Float => match selector {
            Selector::Exponential => exponential::float(rng, scores, sensitivity, epsilon),
            Selector::PermuteAndFlip => permute_flip::float(rng, scores, sensitivity, epsilon, perm_scratch),
            Selector::NoisyMax(noise) => noisy_max::float(rng, scores, sensitivity, epsilon, noise),
        },
        Arithmetic::Exact => {
            let grid = Grid::of(sensitivity)?;
            let scale = Scale::new(epsilon, grid.units())?;
            if scores.iter().all(|s| s.is_finite()) {
                select_exact(
                    rng,
                    selector,
                    &FloatScores::<Raw>::new(scores, grid),
                    &scale,
                    perm_scratch,
                )
            } else {
                // Rare, and slower: every read of a score goes through the public rule.
                select_exact(
                    rng,
                    selector,
                    &FloatScores::<Finite>::new(scores, grid),
                    &scale,
                    perm_scratch,
                )
            }
        }
        Arithmetic::Isochronous => {
            let run = iso::isochronous_run_epsilon(selector, epsilon, scores.len(), 1)?;
            let scale = iso::IsoScale::new(run, sensitivity)?;
            let everyone = |_| u64::MAX;
            let s = iso::FloatIso::new(scores, scale, everyone);
            if selector.needs_permutation(arithmetic) {
                return Ok(iso::permute_and_flip(rng, &s, everyone, perm_scratch));
            }
            Ok(iso::exponential(rng, &s, everyone))
        }
    }
}

/// Runs `selector` exactly on integer scores (two `u64` words each) with a sensitivity of `units` grid
/// units, as the exact dampening and weighted-sum stages produce them.
pub(crate) fn select_int<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    words: &[u64],
    units: u64,
    epsilon: f64,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    if words.len() < 2 {
        return Err(Error::EmptyInput);
    }
    let scale = Scale::new(epsilon, units)?;
    select_exact(rng, selector, &IntScores { words }, &scale, perm_scratch)
}

fn select_exact<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &impl ExactScores,
    scale: &Scale,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    match selector {
        Selector::Exponential | Selector::NoisyMax(Noise::Gumbel) => Ok(exact::exponential(rng, scores, scale)),
        Selector::PermuteAndFlip | Selector::NoisyMax(Noise::Exponential) => {
            exact::permute_and_flip(rng, scores, scale, perm_scratch)
        }
        Selector::NoisyMax(Noise::Laplace) => Err(Error::Unsupported),
    }
}

/// Checks the public arguments every selector shares: n > 0, ε and Δ finite and positive.
pub(crate) fn check_arguments(n: usize, sensitivity: f64, epsilon: f64) -> Result<(), Error> {
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        return Err(Error::InvalidSensitivity);
    }
    Ok(())
}

/// A score made finite by the public rule of every selector: NaN → −f64::MAX, ±∞ → ±f64::MAX.
#[inline]
pub(crate) fn finite(s: f64) -> f64 {
    if s.is_nan() {
        -f64::MAX
    } else {
        s.clamp(-f64::MAX, f64::MAX)
    }
}

/// Checks the common arguments and returns the maximum score, each score made [`finite`].
pub(crate) fn validate(scores: &[f64], sensitivity: f64, epsilon: f64) -> Result<f64, Error> {
    check_arguments(scores.len(), sensitivity, epsilon)?;
    Ok(scores.iter().fold(f64::NEG_INFINITY, |m, &s| m.max(finite(s))))
}

/// ε (s − s*) / (2Δ) without overflow or NaN: the halved gap is finite for finite s, s*; the scale ε/Δ is
/// applied as one factor when it is a normal number, else in two steps (which can only saturate to 0 or −∞).
#[derive(Clone, Copy)]
pub(crate) struct Gap {
    max: f64,
    epsilon: f64,
    sensitivity: f64,
    ratio: f64,
}

impl Gap {
    pub(crate) fn new(max: f64, sensitivity: f64, epsilon: f64) -> Self {
        Gap {
            max,
            epsilon,
            sensitivity,
            ratio: epsilon / sensitivity,
        }
    }

    #[inline]
    pub(crate) fn of(&self, s: f64) -> f64 {
        let half_gap = 0.5 * s - 0.5 * self.max;
        let x = if self.ratio.is_normal() {
            half_gap * self.ratio
        } else {
            half_gap * self.epsilon / self.sensitivity
        };
        // −0 and tiny positive rounding cannot occur for s ≤ max, but keep the invariant x ≤ 0 explicit.
        if x > 0.0 {
            0.0
        } else {
            x
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_is_never_nan_and_never_positive() {
        let extremes = [1e300, -1e300, f64::MAX, -f64::MAX, 0.0, -0.0, 1e-300, 5e-324];
        for &max in &extremes {
            for &s in &extremes {
                if s > max {
                    continue;
                }
                for &(eps, delta) in &[
                    (1.0, 1.0),
                    (1e-12, 1.0),
                    (1e12, 1.0),
                    (1.0, 1e-300),
                    (1e-300, 1e300),
                    (1e300, 1e-300),
                ] {
                    let x = Gap::new(max, delta, eps).of(s);
                    assert!(!x.is_nan() && x <= 0.0, "s={s} max={max} eps={eps} delta={delta} x={x}");
                    if s == max {
                        assert_eq!(x, 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn validation() {
        assert_eq!(validate(&[], 1.0, 1.0), Err(Error::EmptyInput));
        assert_eq!(validate(&[1.0], 1.0, 0.0), Err(Error::InvalidEpsilon));
        assert_eq!(validate(&[1.0], 1.0, -1.0), Err(Error::InvalidEpsilon));
        assert_eq!(validate(&[1.0], 1.0, f64::NAN), Err(Error::InvalidEpsilon));
        assert_eq!(validate(&[1.0], 1.0, f64::INFINITY), Err(Error::InvalidEpsilon));
        assert_eq!(validate(&[1.0], 0.0, 1.0), Err(Error::InvalidSensitivity));
        assert_eq!(validate(&[1.0], f64::INFINITY, 1.0), Err(Error::InvalidSensitivity));
        assert_eq!(validate(&[1.0, f64::NAN], 1.0, 1.0), Ok(1.0));
        assert_eq!(validate(&[f64::NEG_INFINITY], 1.0, 1.0), Ok(-f64::MAX));
        assert_eq!(validate(&[f64::INFINITY, 3.0], 1.0, 1.0), Ok(f64::MAX));
        assert_eq!(validate(&[-0.0, 2.0, 1.0], 1.0, 1.0), Ok(2.0));
    }
}
