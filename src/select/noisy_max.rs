//! Report-noisy-max: add i.i.d. noise of scale 2Δ/ε to every score and report the argmax.

use super::{finite, validate, Arithmetic, Gap, Selector};
use crate::{sample, Error};
use rand_core::Rng;

/// The noise distribution of report-noisy-max. With scale 2Δ/ε:
/// Gumbel noise gives exactly the exponential mechanism's distribution, and one-sided Exponential noise
/// gives exactly permute-and-flip's (Ding, Kifer et al., "The permute-and-flip mechanism is identical to
/// report-noisy-max with exponential noise", 2021).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Noise {
    /// Laplace noise (Dwork & Roth 2014, Claim 3.9 uses scale Δ/ε for monotone counts; 2Δ/ε covers
    /// general utilities).
    Laplace,
    /// Gumbel noise: the Gumbel-max trick, equal in distribution to the exponential mechanism.
    Gumbel,
    /// One-sided exponential noise: equal in distribution to permute-and-flip.
    Exponential,
}

/// Report-noisy-max in exact arithmetic. With Gumbel noise its distribution is the exponential
/// mechanism's and with Exponential noise permute-and-flip's, so it runs as [`super::select_exponential`]
/// or [`super::select_permute_and_flip`] (which needs `perm_scratch` of length ≥ n; it may be empty for
/// Gumbel). Laplace noise has no exact implementation here: [`Error::Unsupported`] (use
/// [`select_noisy_max_float`] explicitly, or Gumbel/Exponential noise).
pub fn select_noisy_max<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    noise: Noise,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    super::select(
        rng,
        Selector::NoisyMax(noise),
        scores,
        sensitivity,
        epsilon,
        perm_scratch,
        Arithmetic::Exact,
    )
}

/// Report-noisy-max in floating point: argmax_r s(r) + (2Δ/ε) Z_r with Z_r i.i.d. standard `noise`. ε-DP in
/// real arithmetic when Δ bounds the sensitivity of s. Draws one key from `rng`, as [`super::select`].
pub fn select_noisy_max_float<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    noise: Noise,
) -> Result<usize, Error> {
    super::select(
        rng,
        Selector::NoisyMax(noise),
        scores,
        sensitivity,
        epsilon,
        &mut [],
        Arithmetic::Float,
    )
}

/// Floating-point report-noisy-max on the call's stream: argmax_r x_r + Z_r with
/// x_r = ε (s(r) − s*) / (2Δ), which is the same argmax and cannot overflow. O(n) time, one noise draw per
/// candidate.
pub(super) fn float<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    noise: Noise,
) -> Result<usize, Error> {
    let max = validate(scores, sensitivity, epsilon)?;
    let gap = Gap::new(max, sensitivity, epsilon);
    let mut best = 0;
    let mut best_value = f64::NEG_INFINITY;
    for (r, &s) in scores.iter().enumerate() {
        let z = match noise {
            Noise::Laplace => sample::laplace(rng),
            Noise::Gumbel => sample::gumbel(rng),
            Noise::Exponential => sample::exponential(rng),
        };
        let v = gap.of(finite(s)) + z;
        if v > best_value {
            best_value = v;
            best = r;
        }
    }
    Ok(best)
}
