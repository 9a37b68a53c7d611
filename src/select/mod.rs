//! The *select* stage: choose one index from n finite scores with global sensitivity Δ under ε-DP.
//!
//! All selectors work on the scaled gaps x(r) = ε (s(r) − s*) / (2Δ) ≤ 0, where s* is the largest score, so
//! nothing overflows for any finite input: the gap is computed as s/2 − s*/2 (finite even for ±1e300), and
//! a gap that underflows or overflows the scale only moves x towards 0 or −∞, where every formula stays
//! defined (the best candidate always has x = 0 exactly). There is no non-private fallback anywhere.

mod exponential;
mod noisy_max;
mod permute_flip;
mod topk;

pub(crate) use exponential::probabilities_in_place;
pub use exponential::{exponential_probabilities, select_exponential};
pub use noisy_max::{select_noisy_max, Noise};
pub use permute_flip::select_permute_and_flip;
pub(crate) use topk::per_round_epsilon;
pub use topk::{select_top_k, select_top_k_gumbel};

use crate::Error;
use rand_core::Rng;

/// A global-sensitivity selector, for the stages and wrappers that let the caller choose one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selector {
    /// The exponential mechanism ([`select_exponential`]).
    Exponential,
    /// Permute-and-flip ([`select_permute_and_flip`]); needs an index scratch of n entries.
    PermuteAndFlip,
    /// Report-noisy-max with the given noise ([`select_noisy_max`]).
    NoisyMax(Noise),
}

/// Runs `selector` on `scores`. `perm_scratch` is used only by permute-and-flip (length ≥ n there; it may
/// be empty otherwise).
pub fn select<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    match selector {
        Selector::Exponential => select_exponential(rng, scores, sensitivity, epsilon),
        Selector::PermuteAndFlip => select_permute_and_flip(rng, scores, sensitivity, epsilon, perm_scratch),
        Selector::NoisyMax(noise) => select_noisy_max(rng, scores, sensitivity, epsilon, noise),
    }
}

/// Validates the common arguments and returns the maximum score.
pub(crate) fn validate(scores: &[f64], sensitivity: f64, epsilon: f64) -> Result<f64, Error> {
    if scores.is_empty() {
        return Err(Error::EmptyInput);
    }
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if !(sensitivity.is_finite() && sensitivity > 0.0) {
        return Err(Error::InvalidSensitivity);
    }
    let mut max = f64::NEG_INFINITY;
    for &s in scores {
        if !s.is_finite() {
            return Err(Error::NonFiniteInput);
        }
        if s > max {
            max = s;
        }
    }
    Ok(max)
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
        assert_eq!(validate(&[1.0, f64::NAN], 1.0, 1.0), Err(Error::NonFiniteInput));
        assert_eq!(validate(&[f64::NEG_INFINITY], 1.0, 1.0), Err(Error::NonFiniteInput));
        assert_eq!(validate(&[-0.0, 2.0, 1.0], 1.0, 1.0), Ok(2.0));
    }
}
