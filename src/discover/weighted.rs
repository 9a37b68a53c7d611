//! Weighted Gaussian thresholding (Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, *Differentially
//! private set union*, ICML 2020, the "Gaussian weighting" policy; Google's and PipelineDP's
//! `GAUSSIAN`-weighted partition selection): each unit u spreads a weight 1/√|S_u| over each of its
//! |S_u| ≤ L kept items, so its weight vector has ℓ2 norm exactly 1 whatever |S_u| is; the per-item weight
//! sums get Gaussian noise and are thresholded.
//!
//! **Exact weights.** 1/√s is irrational. dpmo puts the weights on the integer grid G = 2^(10 + ⌈⌈log₂ L⌉/2⌉)
//! (so that G/√L ≥ 2¹⁰): a unit with s items gives each of them w_s = ⌊G/√s⌋ = ⌊√⌊G²/s⌋⌋ grid units, an
//! exact integer square root. Flooring only lowers weights: s·w_s² ≤ G², so every unit's vector has ℓ2
//! norm at most G — the sensitivity the noise is calibrated to — and the weight sums are exact integers.
//!
//! **Privacy** (as Gaussian thresholding, the `threshold` module, in grid units): adding a unit with s items
//! moves the weight sums of the items other units also have by an integer vector of ℓ2 norm ≤ G, released
//! with discrete Gaussian noise of variance σ² = G²/(2ρ) (ρ-zCDP, (ε, δ/2)-DP); each of its new items
//! (weight w_s alone) is kept with probability P(Z ≥ T − w_s), at most s of them. The threshold T is the
//! least integer with s · P(Z ≥ T − w_s) ≤ δ/2 for every s ≤ L (Gopi et al.'s ρ = max_s 1/√s + σΦ⁻¹(…),
//! with the tail bound of [`accounting::gaussian_tail`](super::accounting::gaussian_tail)). Checking every
//! s up to 2²⁰ would be slow, so above s = 64 the s are taken in blocks [s₁, s₂] with s₂ ≈ s₁(1 + 1/64):
//! inside a block w_s ≤ w_{s₁} and the tail margin for s₂ units covers every s ≤ s₂, so T ≥ w_{s₁} + m_{s₂}
//! is sufficient for the whole block (a threshold a few grid units above the optimum, never below it).

use super::accounting::{gaussian_tail, gaussian_variance, least_margin};
use super::bound::isqrt;
use crate::exact::gaussian::GaussianVariance;
use crate::Error;

/// The public parameters of weighted Gaussian thresholding (weights in grid units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Weighted {
    pub(crate) grid: u64,
    pub(crate) variance: GaussianVariance,
    pub(crate) threshold: u64,
}

/// G = 2^(10 + ⌈⌈log₂ L⌉/2⌉), for L ≥ 1 (G ≤ 2²⁰ for L ≤ 2²⁰).
pub(crate) fn grid_of(l: usize) -> u64 {
    let bits = usize::BITS - l.saturating_sub(1).leading_zeros(); // ⌈log₂ L⌉ (0 for L = 1)
    1u64 << (10 + bits.div_ceil(2))
}

/// w_s = ⌊G/√s⌋ = ⌊√⌊G²/s⌋⌋ grid units, for s ≥ 1 (0 for s = 0).
pub fn weight(grid: u64, s: u64) -> u64 {
    if s == 0 {
        return 0;
    }
    isqrt(u128::from(grid) * u128::from(grid) / u128::from(s)) as u64
}

/// The least integer T (block-wise, module documentation) with s · P(Z ≥ T − w_s) ≤ δ_T for every
/// s ∈ [1, L], for noise of `variance` in grid units.
pub(crate) fn threshold(variance: &GaussianVariance, grid: u64, l: usize, delta_t: f64) -> Result<u64, Error> {
    let l = l as u64;
    let margin = |count: u64| least_margin(count, delta_t, |m| gaussian_tail(variance, m));
    let mut t: u64 = 0;
    let mut s1: u64 = 1;
    while s1 <= l {
        let s2 = if s1 <= 64 { s1 } else { (s1 + s1 / 64).min(l) };
        let candidate = weight(grid, s1)
            .checked_add(margin(s2)?)
            .filter(|&x| x < 1 << 62)
            .ok_or(Error::InvalidArgument)?;
        t = t.max(candidate);
        s1 = s2 + 1;
    }
    Ok(t)
}

/// Weighted Gaussian thresholding for (ε, δ) and L: σ² for (ε, δ/2) at Δ₂ = G, T for the other δ/2.
pub(crate) fn plan(epsilon: f64, delta: f64, l: usize) -> Result<Weighted, Error> {
    let half = 0.5 * delta;
    let grid = grid_of(l);
    let variance = gaussian_variance(epsilon, half, grid * grid)?;
    Ok(Weighted {
        grid,
        variance,
        threshold: threshold(&variance, grid, l, half)?,
    })
}
