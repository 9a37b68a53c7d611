//! Thresholding of noisy unit counts with exact discrete Laplace or exact discrete Gaussian noise (the
//! "Laplace thresholding" and "Gaussian thresholding" of partition selection: Korolova et al. 2009,
//! Wilson et al. 2020, Desfontaines et al. 2022 §2; PipelineDP and OpenDP offer both).
//!
//! **Mechanism.** For a partition with n ≥ 1 distinct units, keep it when n + Z ≥ T. A unit changes at
//! most L counts, each by 1. Let D′ = D plus one unit u; of u's partitions, O had a count ≥ 1 on D (they
//! move from n to n + 1) and A had none (they appear with count 1).
//! * **Laplace** (P(Z = z) ∝ e^{−|z|ε/L}): the counts of O form an ε-DP release (ℓ1 sensitivity |O| ≤ L at
//!   rate ε/L). Each partition of A is kept on D′ with probability q = P(Z ≥ T − 1) and never on D. For an
//!   output set S: P_{D′}(S) ≤ P_{D′}(S, nothing of A kept) + |A| q ≤ e^ε P_D(S) + L q; and
//!   P_D(S) − e^ε P_{D′}(S) ≤ P_D(S)(1 − e^{ε − |O|ε/L}(1 − q)^{|A|}) ≤ 1 − (e^{ε/L}(1 − q))^{|A|} ≤ |A| q.
//!   So the release is (ε, L q)-DP, and T = 1 + m with m the least integer where L · P(Z ≥ m) ≤ δ.
//! * **Gaussian** (P(Z = z) ∝ e^{−z²/(2σ²)}): the counts of O have ℓ2 sensitivity √|O| ≤ √L, so with
//!   σ² = L/(2ρ) they are ρ-zCDP (Canonne, Kamath & Steinke 2020, Theorem 14) and (ε, δ/2)-DP for the ρ of
//!   [`accounting::zcdp_rho`](super::accounting::zcdp_rho)(ε, δ/2). Conditioning on "nothing of A kept"
//!   (probability ≥ 1 − L q on D′, 1 on D) writes both output distributions as mixtures whose main parts
//!   are that Gaussian release, so the hockey-stick divergence is at most δ/2 + L q in both directions; T =
//!   1 + m with L · P(Z ≥ m) ≤ δ/2 ([`accounting::gaussian_tail`](super::accounting::gaussian_tail)).
//!
//! Both thresholds are integers computed from upper bounds of the tails (rounded up), both noises exact
//! ([`crate::exact::discrete`], [`crate::exact::gaussian`]) and the comparison is on integers. The exact
//! enumeration of `tests/discover_privacy.rs` checks both, and catches a threshold without the tail term and
//! a Gaussian noise of half the scale.

use super::accounting::{gaussian_tail, gaussian_variance, laplace_tail, least_margin};
use crate::exact::discrete::{discrete_laplace, LaplaceRate};
use crate::exact::gaussian::{discrete_gaussian, GaussianVariance};
use crate::float::div_down;
use crate::Error;
use rand_core::Rng;

/// The public parameters of Laplace thresholding: rate ε/L and threshold T.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Laplace {
    pub(crate) rate: LaplaceRate,
    pub(crate) threshold: u64,
}

/// The public parameters of Gaussian thresholding: σ² and threshold T.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Gaussian {
    pub(crate) variance: GaussianVariance,
    pub(crate) threshold: u64,
}

/// T = 1 + m, checked.
fn one_plus(m: u64) -> Result<u64, Error> {
    m.checked_add(1).filter(|&t| t < 1 << 62).ok_or(Error::InvalidArgument)
}

/// Laplace thresholding for (ε, δ) and L. Errors: L/ε outside the sampler's range, or T beyond 2⁶² →
/// [`Error::InvalidArgument`].
pub(crate) fn laplace_plan(epsilon: f64, delta: f64, l: usize) -> Result<Laplace, Error> {
    let rate = LaplaceRate::new(l as f64, epsilon)?;
    let a_down = div_down(epsilon, l as f64);
    let m = least_margin(l as u64, delta, |m| laplace_tail(a_down, m))?;
    Ok(Laplace {
        rate,
        threshold: one_plus(m)?,
    })
}

/// Gaussian thresholding for (ε, δ) and L: σ² for (ε, δ/2) at Δ₂² = L, T for the other δ/2.
pub(crate) fn gaussian_plan(epsilon: f64, delta: f64, l: usize) -> Result<Gaussian, Error> {
    let half = 0.5 * delta; // exact: δ ≥ 2⁻³⁰⁰ is a normal double
    let variance = gaussian_variance(epsilon, half, l as u64)?;
    let m = least_margin(l as u64, half, |m| gaussian_tail(&variance, m))?;
    Ok(Gaussian {
        variance,
        threshold: one_plus(m)?,
    })
}

/// Whether a partition of `units` ≥ 1 units is kept under Laplace thresholding.
pub(crate) fn laplace_keep<R: Rng + ?Sized>(rng: &mut R, p: &Laplace, units: u64) -> bool {
    i128::from(units) + i128::from(discrete_laplace(rng, &p.rate)) >= i128::from(p.threshold)
}

/// Whether a partition of noisy weight `weight` + Z clears the Gaussian threshold.
pub(crate) fn gaussian_keep<R: Rng + ?Sized>(
    rng: &mut R,
    variance: &GaussianVariance,
    threshold: u64,
    weight: u64,
) -> bool {
    i128::from(weight) + i128::from(discrete_gaussian(rng, variance)) >= i128::from(threshold)
}
