//! The arithmetic of the public parameters: noise scales and thresholds computed from (ε, δ, L), each
//! rounded in the safe direction.
//!
//! Nothing here touches private data or the random path: these functions turn public parameters into the
//! integers and rationals the exact samplers use (a truncation point, a threshold, a variance p/q). They use
//! floating point and `libm`'s logarithms, exponentials and complementary error function, so every bound
//! they return is inflated (or deflated) by a relative [`MARGIN`] of 2⁻³⁰ on top of the directed
//! rounding of each step. The error of each evaluated expression is far below that margin:
//! * every expression is a chain of at most a dozen correctly rounded operations and `libm` calls, each
//!   within a few ulps (2⁻⁵⁰ relative);
//! * an exponential e^{−y} computed from an argument y with relative error η has relative error ≤ |y| η:
//!   the arguments here are at most a few thousand (beyond that the values underflow to 0 or are far
//!   below δ, see [`MIN_DELTA`]), so |y| η ≤ 2¹² · 2⁻⁴⁸ ≪ 2⁻³⁰;
//! * Q(x) = erfc(x/√2)/2 has relative sensitivity |d ln Q/dx| ≤ x + 1/x to its argument, again at most a
//!   few hundred times 2⁻⁵⁰ where Q does not underflow.
//!
//! A result that underflows to 0 is below 2⁻¹⁰²², far below any δ ≥ [`MIN_DELTA`] divided by any count
//! of at most 2⁶⁴, so a comparison "≤ δ/count" it takes part in is still correct.

use crate::exact::gaussian::{GaussianVariance, MAX_VARIANCE};
use crate::float::{add_up, div_down, mul_up, next_down, next_up};
use crate::Error;

/// The relative safety margin of every bound computed here (module documentation).
pub const MARGIN: f64 = 1.0 + 1.0 / (1u64 << 30) as f64;

/// The smallest δ accepted by the discovery mechanisms (2⁻³⁰⁰ ≈ 4.9 · 10⁻⁹¹).
pub const MIN_DELTA: f64 = 4.909_093_465_297_727e-91;

const SQRT_2: f64 = core::f64::consts::SQRT_2;
/// √(2π), rounded up.
const SQRT_2PI: f64 = 2.506_628_274_631_000_7;

/// x inflated by the margin (an upper bound of a value computed to within the margin).
pub(crate) fn up(x: f64) -> f64 {
    mul_up(x, MARGIN)
}

/// x deflated by the margin.
pub(crate) fn down(x: f64) -> f64 {
    div_down(x, MARGIN)
}

/// An upper bound of a/b for a ≥ 0, b > 0.
pub(crate) fn div_up(a: f64, b: f64) -> f64 {
    let q = a / b;
    if q.is_finite() && q != 0.0 && libm::fma(-q, b, a) > 0.0 {
        next_up(q)
    } else if q == 0.0 && a > 0.0 {
        f64::from_bits(1)
    } else {
        q
    }
}

/// Checks ε (finite, > 0) and δ ([`MIN_DELTA`] ≤ δ < 1).
pub(crate) fn check_epsilon_delta(epsilon: f64, delta: f64) -> Result<(), Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if !(delta.is_finite() && (MIN_DELTA..1.0).contains(&delta)) {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

/// An upper bound of P(Z ≥ m) for Z discrete Gaussian with variance σ² (`variance`) and m ≥ 0.
///
/// **Proof.** Let f(y) = e^{−y²/(2σ²)}. For m ≥ 1, f decreases on [m − 1, ∞), so
/// Σ_{z ≥ m} f(z) ≤ f(m) + ∫_m^∞ f = f(m) + σ√(2π) Q(m/σ); and the normaliser Σ_{z∈ℤ} f(z) equals
/// σ√(2π) Σ_{k∈ℤ} e^{−2π²σ²k²} ≥ σ√(2π) by Poisson summation. Hence
/// P(Z ≥ m) ≤ Q(m/σ) + φ(m/σ)/σ with φ the standard normal density. For m = 0 the bound is 1.
pub fn gaussian_tail(variance: &GaussianVariance, m: u64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    let sigma = libm::sqrt(variance.value());
    let x = m as f64 / sigma;
    let q = 0.5 * libm::erfc(x / SQRT_2);
    let phi = libm::exp(-0.5 * x * x) / (sigma * SQRT_2PI);
    up(q + phi).min(1.0)
}

/// An upper bound of P(Z ≥ m) for Z discrete Laplace with P(Z = z) ∝ e^{−a|z|}, for a rate bounded below
/// by `rate_down` > 0 and m ≥ 1: P(Z ≥ m) = e^{−am}/(1 + e^{−a}) ≤ e^{−a m} / (1 + e^{−a}), decreasing in a,
/// evaluated at the lower bound of a (the denominator at a + one ulp ≥ a, which only lowers it).
pub fn laplace_tail(rate_down: f64, m: u64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    let num = libm::exp(-rate_down * m as f64);
    let den = 1.0 + libm::exp(-next_up(rate_down));
    up(num / den).min(1.0)
}

/// An upper bound of e^{−ak}/C_k, the probability of the largest value k of the truncated discrete
/// Laplace distribution P(Z = z) ∝ e^{−a|z|} on {−k, …, k}, where
/// C_k = Σ_{|z| ≤ k} e^{−a|z|} = 1 + 2 e^{−a}(1 − e^{−ak})/(1 − e^{−a}). The numerator decreases in a and
/// the normaliser too, so the numerator is evaluated at `rate_down` ≤ a and the normaliser at
/// `next_up(rate_down)` ≥ a (a is within one ulp above `rate_down`).
pub fn truncated_top(rate_down: f64, k: u64) -> f64 {
    let a_hi = next_up(rate_down);
    let num = libm::exp(-rate_down * k as f64);
    // 1 − e^{−a} = −expm1(−a) and 1 − e^{−ak} = −expm1(−ak), without cancellation.
    let c = 1.0 + 2.0 * libm::exp(-a_hi) * (-libm::expm1(-a_hi * k as f64)) / (-libm::expm1(-a_hi));
    up(num / down(c)).min(1.0)
}

/// The privacy-loss exponent of the conversion below at one α: L(α) = (α − 1)(αρ − ε) − ln(α − 1) +
/// α ln(1 − 1/α), and an upper bound of its absolute evaluation error.
fn conversion_exponent(rho: f64, epsilon: f64, alpha: f64) -> (f64, f64) {
    let am1 = alpha - 1.0;
    let a = am1 * (alpha * rho - epsilon);
    let b = libm::log(am1);
    let c = alpha * libm::log1p(-1.0 / alpha);
    let value = a - b + c;
    // Each term is within a few ulps of its exact value (α − 1 is exact for α ≤ 2⁵², and the products
    // and libm calls add a few relative ulps each): 2⁻⁴⁰ of the terms' magnitudes covers them.
    let err = (libm::fabs(a) + alpha * rho + libm::fabs(am1 * epsilon) + libm::fabs(b) + libm::fabs(c) + 1.0)
        * (1.0 / (1u64 << 40) as f64);
    (value, err)
}

/// An upper bound of the δ such that a ρ-zCDP mechanism is (ε, δ)-DP, by the conversion of Canonne,
/// Kamath & Steinke 2020 (Proposition 12 / Corollary 13, after Asoodeh et al.): for every α > 1,
/// δ = exp((α − 1)(αρ − ε))/(α − 1) · (1 − 1/α)^α. The α is found by a golden-section search on
/// ln(α − 1) (any α gives a valid δ, so the search only affects tightness); the value at that α is then
/// evaluated with its error bound added to the exponent and the [`MARGIN`] on top.
pub fn zcdp_delta(rho: f64, epsilon: f64) -> f64 {
    if !(rho > 0.0 && rho.is_finite()) {
        return 1.0;
    }
    let f = |u: f64| conversion_exponent(rho, epsilon, 1.0 + libm::exp(u)).0;
    // ln(α − 1) ∈ [−40, 40]: α from 1 + 4 · 10⁻¹⁸ to 2.4 · 10¹⁷.
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    let g = 0.618_033_988_749_894_8;
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (f(x1), f(x2));
    // 0.618⁶⁰ · 80 < 10⁻¹⁰: far finer than the optimum needs (the bound is flat there).
    for _ in 0..60 {
        if f1 <= f2 {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = f(x1);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = f(x2);
        }
    }
    let alpha = 1.0 + libm::exp(0.5 * (lo + hi));
    let (value, err) = conversion_exponent(rho, epsilon, alpha);
    let exponent = add_up(value, err);
    if !exponent.is_finite() {
        return 1.0;
    }
    up(libm::exp(exponent)).min(1.0)
}

/// The largest ρ (to a relative 10⁻⁷, found by bisection on log₂ ρ and rounded down) with
/// [`zcdp_delta`] at (ρ, ε) is at most δ. The bracket starts around ρ̃ = (√(ε + ln(1/δ)) − √(ln(1/δ)))², the ρ of the
/// classical conversion ε = ρ + 2√(ρ ln(1/δ)), and widens until it holds the answer.
/// Errors: none exists in (2⁻¹⁰⁰⁰, 2¹⁰⁰⁰) → [`Error::InvalidArgument`].
pub fn zcdp_rho(epsilon: f64, delta: f64) -> Result<f64, Error> {
    let ok = |log_rho: f64| zcdp_delta(libm::exp2(log_rho), epsilon) <= delta;
    let l = -libm::log(delta);
    let root = libm::sqrt(epsilon + l) - libm::sqrt(l);
    let guess = libm::log2((root * root).max(1e-300));
    let (mut lo, mut hi) = ((guess - 2.0).max(-1000.0), (guess + 4.0).min(1000.0));
    while !ok(lo) {
        if lo <= -1000.0 {
            return Err(Error::InvalidArgument);
        }
        (lo, hi) = ((lo - 8.0).max(-1000.0), lo);
    }
    while ok(hi) {
        if hi >= 1000.0 {
            return Ok(libm::exp2(hi));
        }
        (lo, hi) = (hi, (hi + 8.0).min(1000.0));
    }
    while hi - lo > 1e-7 {
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // ok(lo) was checked for this very lo.
    Ok(libm::exp2(lo))
}

/// The least discrete Gaussian variance σ² ≥ Δ₂²/(2ρ), for Δ₂² = `l2_squared` (an integer in grid units),
/// as a [`GaussianVariance`] (σ² rounded up). Errors: σ² beyond [`MAX_VARIANCE`] or not finite →
/// [`Error::InvalidArgument`].
pub fn variance_for_rho(rho: f64, l2_squared: u64) -> Result<GaussianVariance, Error> {
    let s2 = div_up(l2_squared as f64, 2.0 * rho);
    if !(s2.is_finite() && s2 <= MAX_VARIANCE) || l2_squared == 0 {
        return Err(Error::InvalidArgument);
    }
    GaussianVariance::at_least(s2.max(crate::exact::gaussian::MIN_VARIANCE))
}

/// An upper bound of the ρ = Δ₂²/(2σ²) of the multivariate discrete Gaussian with this variance and
/// Δ₂² = `l2_squared`: by Canonne, Kamath & Steinke 2020 (Theorem 14), adding independent discrete
/// Gaussian noise of variance σ² to each coordinate of an integer vector whose ℓ2 sensitivity is Δ₂ is
/// Δ₂²/(2σ²)-zCDP.
pub fn rho_of(variance: &GaussianVariance, l2_squared: u64) -> f64 {
    div_up(l2_squared as f64, 2.0 * next_down(variance.lower()))
}

/// The discrete Gaussian variance of a Gaussian mechanism that is (ε, δ)-DP for an ℓ2 sensitivity Δ₂ with
/// Δ₂² = `l2_squared` (an integer in grid units): σ² = Δ₂²/(2ρ) with ρ from [`zcdp_rho`], rounded up
/// ([`variance_for_rho`]). The ρ actually obtained ([`rho_of`]) is checked against δ again, and σ² raised
/// until it passes.
///
/// Errors: ε, δ invalid (as `check_epsilon_delta`: ε finite and > 0, δ in [[`MIN_DELTA`], 1)); `l2_squared` = 0, or σ² beyond [`MAX_VARIANCE`] (ε
/// too small or Δ₂ too large for the sampler) → [`Error::InvalidArgument`].
pub fn gaussian_variance(epsilon: f64, delta: f64, l2_squared: u64) -> Result<GaussianVariance, Error> {
    check_epsilon_delta(epsilon, delta)?;
    if l2_squared == 0 {
        return Err(Error::InvalidArgument);
    }
    let mut rho = zcdp_rho(epsilon, delta)?;
    for _ in 0..64 {
        let v = variance_for_rho(rho, l2_squared)?;
        if zcdp_delta(rho_of(&v, l2_squared), epsilon) <= delta {
            return Ok(v);
        }
        rho = div_down(rho, 1.0 + 1.0 / (1u64 << 20) as f64);
    }
    Err(Error::InvalidArgument)
}

/// The least m ≥ 1 with `count` · tail(m) ≤ δ, for a tail bound decreasing in m (`tail`), by doubling and
/// bisection. Errors: none below 2⁶² → [`Error::InvalidArgument`].
pub(crate) fn least_margin(count: u64, delta: f64, tail: impl Fn(u64) -> f64) -> Result<u64, Error> {
    let ok = |m: u64| mul_up(count as f64, tail(m)) <= delta;
    let mut hi: u64 = 1;
    while !ok(hi) {
        if hi >= 1 << 62 {
            return Err(Error::InvalidArgument);
        }
        hi *= 2;
    }
    let mut lo = hi / 2; // not ok (or 0)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;

    /// The exact δ(ε) of the continuous Gaussian mechanism with sensitivity 1 and noise σ (Balle & Wang
    /// 2018): Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ).
    fn analytic_gaussian_delta(sigma: f64, eps: f64) -> f64 {
        let phi = |x: f64| 0.5 * libm::erfc(-x / SQRT_2);
        phi(0.5 / sigma - eps * sigma) - eps.exp() * phi(-0.5 / sigma - eps * sigma)
    }

    #[test]
    fn the_conversion_bounds_the_exact_gaussian_delta() {
        // A Gaussian mechanism of sensitivity 1 and noise σ is 1/(2σ²)-zCDP; the converted δ must be at
        // least its exact δ, and not wildly above it (within a factor 10 here: the conversion through
        // Rényi divergences is not tight).
        for sigma in [0.5, 1.0, 2.0, 5.0, 20.0] {
            for eps in [0.1, 0.5, 1.0, 3.0] {
                let exact = analytic_gaussian_delta(sigma, eps);
                let bound = zcdp_delta(1.0 / (2.0 * sigma * sigma), eps);
                assert!(bound >= exact, "σ {sigma} ε {eps}: {bound} < {exact}");
                if exact > 1e-12 {
                    assert!(bound <= 10.0 * exact, "σ {sigma} ε {eps}: {bound} vs {exact}");
                }
            }
        }
        // A wrong formula is caught: the classic bound with the exponent halved is below the exact δ.
        let (sigma, eps): (f64, f64) = (2.0, 1.0);
        let rho = 1.0 / (2.0 * sigma * sigma);
        let wrong = (-(eps - rho) * (eps - rho) / (2.0 * rho)).exp() / 100.0;
        assert!(wrong < analytic_gaussian_delta(sigma, eps));
    }

    #[test]
    fn variances_meet_their_delta() {
        for (eps, delta, l2) in [
            (1.0, 1e-6, 1u64),
            (0.5, 1e-9, 4),
            (1.0, 5e-7, 2160),
            (3.0, 1e-3, 1 << 20),
        ] {
            let v = gaussian_variance(eps, delta, l2).unwrap();
            let rho = l2 as f64 / (2.0 * v.value());
            assert!(zcdp_delta(rho, eps) <= delta);
            // Not much more noise than needed: 1 % less σ² would not meet δ.
            assert!(
                zcdp_delta(rho / 0.99, eps) > delta,
                "{eps} {delta} {l2}: σ² = {}",
                v.value()
            );
        }
        assert_eq!(gaussian_variance(0.0, 1e-6, 1), Err(Error::InvalidEpsilon));
        assert_eq!(gaussian_variance(1.0, 0.0, 1), Err(Error::InvalidArgument));
        assert_eq!(gaussian_variance(1.0, 1e-6, 0), Err(Error::InvalidArgument));
        assert_eq!(gaussian_variance(1e-12, 1e-80, 1 << 40), Err(Error::InvalidArgument));
    }

    #[test]
    fn tails_bound_the_exact_tails() {
        // Discrete Gaussian tails summed exactly against the bound, and the bound not loose by much.
        for (p, q) in [(1u64, 1u64), (9, 4), (400, 1), (10_000, 3)] {
            let v = GaussianVariance::new(p, q).unwrap();
            let s2 = p as f64 / q as f64;
            let w = (40.0 * s2.sqrt()) as i64 + 40;
            let mass = |z: i64| (-(z * z) as f64 / (2.0 * s2)).exp();
            let total: f64 = (-w..=w).map(mass).sum();
            for m in [1u64, 2, 5, 10, 30, 100] {
                let exact: f64 = (m as i64..=w).map(mass).sum::<f64>() / total;
                let bound = gaussian_tail(&v, m);
                assert!(bound >= exact, "σ² {s2} m {m}: {bound} < {exact}");
            }
        }
        // Discrete Laplace: e^{−am}/(1 + e^{−a}) exactly (no slack beyond the margin).
        for a in [0.1, 0.5, 2.0] {
            for m in [1u64, 3, 20] {
                let w = 2000;
                let total: f64 = (-w..=w).map(|z: i64| (-a * z.abs() as f64).exp()).sum();
                let exact: f64 = (m as i64..=w).map(|z| (-a * z as f64).exp()).sum::<f64>() / total;
                let bound = laplace_tail(a, m);
                assert!(
                    bound >= exact && bound <= exact * (1.0 + 1e-8),
                    "{a} {m}: {bound} vs {exact}"
                );
            }
        }
        // The top of the truncated distribution.
        for a in [0.05, 0.7, 3.0] {
            for k in [1u64, 4, 50] {
                let c: f64 = (-(k as i64)..=k as i64).map(|z| (-a * z.abs() as f64).exp()).sum();
                let exact = (-a * k as f64).exp() / c;
                let bound = truncated_top(a, k);
                assert!(
                    bound >= exact && bound <= exact * (1.0 + 1e-8),
                    "{a} {k}: {bound} vs {exact}"
                );
            }
        }
        assert_eq!(least_margin(4, 0.01, |m| laplace_tail(1.0, m)).unwrap(), 6);
        // 4e^{−m}/(1 + e^{−1}) ≤ 0.01 from m = 6
    }
}
