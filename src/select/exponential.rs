//! The exponential mechanism (McSherry & Talwar 2007): P(r) ∝ exp(ε s(r) / (2Δ)).

use super::{finite, validate, Arithmetic, Gap, Selector};
use crate::{sample, Error};
use rand_core::Rng;

/// Exact output probabilities of the exponential mechanism, P(r) = exp(x_r) / Σ exp(x_j) with
/// x_r = ε (s(r) − s*) / (2Δ) ≤ 0 (computed in log space, so the sum is at least 1 and nothing overflows).
///
/// Writes n probabilities into `out[..n]`. Errors: empty scores, ε or Δ not finite and positive, a
/// non-finite score, `out` shorter than n ([`Error::LengthMismatch`]); `out` is untouched on error.
pub fn exponential_probabilities(scores: &[f64], sensitivity: f64, epsilon: f64, out: &mut [f64]) -> Result<(), Error> {
    validate(scores, sensitivity, epsilon)?;
    if out.len() < scores.len() {
        return Err(Error::LengthMismatch);
    }
    let out = &mut out[..scores.len()];
    out.copy_from_slice(scores);
    probabilities_in_place(out, sensitivity, epsilon)
}

/// Replaces finite scores by their exponential-mechanism probabilities, in place (validated first).
pub(crate) fn probabilities_in_place(values: &mut [f64], sensitivity: f64, epsilon: f64) -> Result<(), Error> {
    let gap = Gap::new(validate(values, sensitivity, epsilon)?, sensitivity, epsilon);
    let mut total = 0.0;
    for v in values.iter_mut() {
        *v = libm::exp(gap.of(finite(*v)));
        total += *v;
    }
    for v in values.iter_mut() {
        *v /= total;
    }
    Ok(())
}

/// The exponential mechanism in exact arithmetic: returns r with probability exactly
/// ∝ exp(ε ⌊s(r)/g⌋ g / (2Δ)) on the grid g of Δ ([`crate::exact::grid`]; scores on the grid, such as
/// integers, are not changed). ε-DP when Δ bounds the sensitivity of s (McSherry & Talwar 2007, Thm. 6),
/// exactly, in the arithmetic that runs. Sampled by rejection (the exact selectors of
/// [`crate::select`](mod@crate::select)): one pass for the extremes, then uniform proposals, and after
/// n/256 + 64 of them without success, proposals by level of γ (two more passes, then a few rounds):
/// O(n) expected work on any scores.
///
/// ```
/// # let mut rng = dpmo::GeneratorState::chacha20([1; 32]).load()?;
/// // Scores 0 and −73.6 at ε = 1, Δ = 1: index 1 has probability e^{−36.8} ≈ 1e−16 — small but not zero,
/// // on this dataset and on its neighbour alike (a floating-point sampler gives it probability 0).
/// let r = dpmo::select_exponential(&mut rng, &[0.0, -73.6], 1.0, 1.0)?;
/// assert!(r < 2);
/// # Ok::<(), dpmo::Error>(())
/// ```
pub fn select_exponential<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
) -> Result<usize, Error> {
    super::select(
        rng,
        Selector::Exponential,
        scores,
        sensitivity,
        epsilon,
        &mut [],
        Arithmetic::Exact,
    )
}

/// The exponential mechanism in floating point: returns r with probability ∝ exp(ε s(r) / (2Δ)) up to
/// double rounding (see [`super::Arithmetic::Float`]). Draws one key from `rng`, as [`super::select`].
pub fn select_exponential_float<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
) -> Result<usize, Error> {
    super::select(
        rng,
        Selector::Exponential,
        scores,
        sensitivity,
        epsilon,
        &mut [],
        Arithmetic::Float,
    )
}

/// The floating-point exponential mechanism on the call's stream.
///
/// Sampled in one pass by weighted reservoir sampling: after candidate r has been seen, the running choice
/// is replaced by r with probability w_r / W_r, where W_r = Σ_{j≤r} w_j, which leaves each r chosen with
/// probability w_r / W_n exactly. That is one exponential and one uniform per candidate and no scratch. It
/// is deliberately not Gumbel-max, so that the test "report-noisy-max with Gumbel noise has the same
/// distribution" compares two different algorithms. O(n) time.
pub(super) fn float<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
) -> Result<usize, Error> {
    let max = validate(scores, sensitivity, epsilon)?;
    let gap = Gap::new(max, sensitivity, epsilon);
    let mut total = 0.0;
    let mut chosen = 0;
    for (r, &s) in scores.iter().enumerate() {
        let w = libm::exp(gap.of(finite(s)));
        if w > 0.0 {
            total += w;
            // The first candidate of positive weight is always taken (u < 1), so `chosen` is never stale.
            if sample::uniform_open01(rng) * total < w {
                chosen = r;
            }
        }
    }
    Ok(chosen)
}
