//! Truncated geometric thresholding (Desfontaines, Voss, Gipson & Mandayam, *Differentially private
//! partition selection*, PoPETs 2022): the optimal partition selection for one partition per unit, applied
//! per partition at (ε/L, δ/L) when a unit may contribute to L partitions.
//!
//! **Mechanism.** For a partition with n ≥ 1 distinct units, keep it when n + Z ≥ k + 1, where Z follows
//! the symmetric discrete Laplace distribution P(Z = z) ∝ e^{−a|z|}, a = ε/L, *truncated* to {−k, …, k}.
//! A partition nobody contributed to (n = 0) is never kept: n + Z ≤ k. The paper shows that the optimal
//! keep probability π(n) is this noisy threshold when δ is the probability e^{−ak}/C_k of the top value k
//! (C_k the normaliser); dpmo takes the least integer k with e^{−ak}/C_k ≤ δ/L
//! ([`accounting::truncated_top`](super::accounting::truncated_top), rounded in the safe direction), so the
//! guarantee holds with the δ asked for, slightly more than spent.
//!
//! **Privacy, per partition.** Write p(j) = P(Z = j) and S(m) = P(Z ≥ m); the partition is kept iff
//! Z ≥ m with m = k + 1 − n (m = k + 1 for n = 0: S(k + 1) = 0). Adding a unit moves n to n + 1, so m to
//! m − 1. For every integer j, |j + 1| ≥ |j| − 1 gives p(j) ≤ e^a p(j + 1) (where both are in the support),
//! hence S(m − 1) = Σ_{j=m−1}^{k−1} p(j) + p(k) ≤ e^a S(m) + p(k); mirrored, P(Z ≤ m − 1) ≤
//! e^a P(Z ≤ m − 2) + p(−k), with p(−k) = p(k). The other two inequalities hold with no δ, since S is
//! monotone. Each decision is therefore (a, δ_k)-DP in its count with δ_k = p(k) = e^{−ak}/C_k; the
//! decisions are independent given the counts, and a unit changes at most L counts by 1, so the released
//! set is (L a, L δ_k)-DP, within (ε, δ), by basic composition. The exact enumeration of
//! `tests/discover_privacy.rs` confirms it (and catches the truncation k − 1).
//!
//! **Exactness.** a = ε/L is the exact rational of the double ε over the integer L; Z is the exact discrete
//! Laplace sampler ([`crate::exact::discrete`]) conditioned on |Z| ≤ k by rejection, which is exactly the
//! truncated distribution. The comparison is on integers.

use super::accounting::{least_margin, truncated_top};
use crate::exact::discrete::{discrete_laplace, LaplaceRate};
use crate::float::div_down;
use crate::Error;
use rand_core::Rng;

/// The public parameters of truncated geometric thresholding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Geometric {
    pub(crate) rate: LaplaceRate,
    pub(crate) truncation: u64,
}

/// The rate ε/L (as the exact [`LaplaceRate`] of scale L over granularity ε) and the least truncation k
/// with e^{−ak}/C_k ≤ δ/L. Errors: L/ε outside the discrete Laplace sampler's range [2⁻⁶⁴, 2³²], or k
/// beyond 2⁶² → [`Error::InvalidArgument`].
pub(crate) fn plan(epsilon: f64, delta: f64, l: usize) -> Result<Geometric, Error> {
    let rate = LaplaceRate::new(l as f64, epsilon)?;
    let a_down = div_down(epsilon, l as f64);
    let delta_item = div_down(delta, l as f64);
    let truncation = least_margin(1, delta_item, |k| truncated_top(a_down, k))?;
    Ok(Geometric { rate, truncation })
}

/// One draw of the truncated discrete Laplace noise: redraw until |Z| ≤ k.
fn noise<R: Rng + ?Sized>(rng: &mut R, g: &Geometric) -> i64 {
    loop {
        let z = discrete_laplace(rng, &g.rate);
        if z.unsigned_abs() <= g.truncation {
            return z;
        }
    }
}

/// Whether a partition with `units` ≥ 1 distinct units is kept.
pub(crate) fn keep<R: Rng + ?Sized>(rng: &mut R, g: &Geometric, units: u64) -> bool {
    i128::from(units) + i128::from(noise(rng, g)) > i128::from(g.truncation)
}
