//! t-frequent elements (paper §3.2) and the frequent set 𝓛′ of Algorithm 3, step 1.
//!
//! x ∈ 𝓛 is t-frequent for D when it generalizes at least t records: |ρ(x, D)| ≥ t. The paper calls the
//! t-frequent elements a sublattice; they form an up-set of 𝓛 (x ⪰ y and y frequent imply x frequent),
//! closed under joins but not under meets (two frequent siblings can have an infrequent meet).
//!
//! **Why step 1 must be private.** Theorem 4's proof compares Algorithm 3 on D and D₋ₐ₀ with the same
//! 𝓛′ (Lemma 1 is applied over one product space 𝓢^𝓘). But 𝓛′ is computed from the data: an element of
//! a₀⁺ with exactly t records under it is in 𝓛′(D) and not in 𝓛′(D₋ₐ₀). Any output containing it has
//! probability 0 on D₋ₐ₀ and, when those t records are likely to choose it, probability close to 1 on D —
//! the exact enumeration in `tests/generalize_privacy.rs` finds the whole output mass outside e^{±ε}.
//! [`FrequentSet::Private`] repairs step 1 with the standard noisy threshold: x ∈ 𝓛′ when
//! |ρ(x, D)| + Z_x ≥ T, with Z_x independent discrete Laplace noise of scale s = ⌈N/ε_F⌉, where
//! N = ∏(height_i + 1) ≥ |a₀⁺| bounds how many counts one record moves (each by 1), and
//! T = t − 1 + ⌈s ln(N/δ_F)⌉. Then
//! * on the elements other records can output, the memberships on D and D₋ₐ₀ differ by at most a factor
//!   e^{N/s} ≤ e^{ε_F} (each shifted count costs e^{1/s}); and
//! * with probability ≥ 1 − δ_F every member of a₀⁺ ∩ 𝓛′ is t-frequent (P[Z ≥ T − t + 1] ≤ δ_F/N for each
//!   of at most N elements), which is what Theorem 4's Claims 2–3 need of 𝓛′. Elements only a₀
//!   generalizes (|ρ| = 1) are among them.
//!
//! Outside that event of probability δ_F, Theorem 4 with 𝓛′ fixed bounds the release by (ε, δ), and
//! moving the noisy counts from D to D₋ₐ₀ (or back) costs e^{ε_F} on any event of the noise: the release is
//! (ε + ε_F, δ + δ_F)-differentially private in both directions.
//!
//! **The Gaussian frequent set ([`FrequentSet::Gaussian`], dpmo's default through the C ABI).** The same
//! test with exact discrete Gaussian noise: x ∈ 𝓛′ when |ρ(x, D)| + Z_x ≥ T, P(Z = z) ∝ e^{−z²/(2σ²)}.
//! 𝓛′ is a partition selection over the public, finite domain 𝓛 in which one record contributes to the
//! |a₀⁺| ≤ N elements of its chain product, each by 1: an ℓ0-bounded contribution with ℓ2 sensitivity √N.
//! Laplace noise pays for it with scale N/ε_F (ℓ1 sensitivity N), Gaussian noise with σ ∝ √N/ε_F — on
//! Adult's lattice (N = 2,160) the threshold drops from t + 46,426 to about t + 1,500 at ε_F = 1.
//! * σ² = N/(2ρ) with ρ the zCDP budget of (ε_F, δ_F/2) ([`crate::discover::accounting::zcdp_rho`]): the
//!   vector of all |𝓛| noisy counts is ρ-zCDP (Canonne, Kamath & Steinke 2020, Theorem 14), hence
//!   (ε_F, δ_F/2)-DP, and 𝓛′ is a function of it;
//! * T = t − 1 + m with m the least integer such that N · P(Z ≥ m) ≤ δ_F/2
//!   ([`crate::discover::accounting::gaussian_tail`], rounded up): with probability ≥ 1 − δ_F/2 every member
//!   of a₀⁺ ∩ 𝓛′ is t-frequent, on D and on D₋ₐ₀ alike.
//!
//! The composition: for any set S of outputs, with G the event that every member of a₀⁺ ∩ 𝓛′ is
//! t-frequent, P_D(S) ≤ P(not G) + Σ_{𝓛′ ∈ G} P_D(𝓛′) min(1, e^ε P_{D₋ₐ₀}(S | 𝓛′)) + δ, and the
//! (ε_F, δ_F/2) release of 𝓛′ bounds the middle sum (a [0, 1]-valued function of 𝓛′) by
//! e^{ε_F} E_{D₋ₐ₀}[min(1, e^ε P(S | 𝓛′))] + δ_F/2: the release is (ε + ε_F, δ + δ_F)-DP, in both
//! directions, like the Laplace one.
//!
//! The noise Z_x is drawn lazily, when an element is first examined, from ChaCha20 keyed by 32 fresh bytes of
//! the caller's generator with x's index in 𝓛 as the stream: every examination of x sees the same Z_x
//! without storing it, and distinct elements get independent streams.

use super::hierarchy::Lattice;
use crate::discover::accounting::{gaussian_tail, gaussian_variance, least_margin, MIN_DELTA};
use crate::exact::discrete::{discrete_laplace, LaplaceRate};
use crate::exact::gaussian::{discrete_gaussian, GaussianVariance};
use crate::float::{mul_up, next_up};
use crate::Error;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// How step 1 of Algorithm 3 builds 𝓛′.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FrequentSet {
    /// The paper's step 1: 𝓛′ = {x : |ρ(x, D)| ≥ t}, computed exactly. **Not differentially private**
    /// (module docs): for comparisons with the paper and for analysis only.
    Exact,
    /// 𝓛′ = {x : |ρ(x, D)| + Z_x ≥ T} with discrete Laplace noise, (ε_F, δ_F) as in the module docs; the
    /// release then spends (ε + ε_F, δ + δ_F).
    Private {
        /// ε_F > 0, the privacy cost of 𝓛′.
        epsilon: f64,
        /// δ_F ∈ (0, 1), the probability that an element of a₀⁺ with fewer than t records enters 𝓛′.
        delta: f64,
    },
    /// 𝓛′ = {x : |ρ(x, D)| + Z_x ≥ T} with discrete Gaussian noise (module docs): (ε_F, δ_F), half of
    /// δ_F for the Gaussian release of the counts and half for an element of a₀⁺ with fewer than t records
    /// entering 𝓛′; the release then spends (ε + ε_F, δ + δ_F). A far lower threshold than
    /// [`FrequentSet::Private`]'s for the same (ε_F, δ_F) whenever N is more than a few.
    Gaussian {
        /// ε_F > 0.
        epsilon: f64,
        /// δ_F ∈ [2⁻²⁹⁹, 1).
        delta: f64,
    },
}

/// Whether an element with `count` = |ρ(x, D)| records under it is t-frequent.
pub fn is_frequent(count: u64, t: u64) -> bool {
    count >= t
}

/// The noise scale and threshold of [`FrequentSet::Private`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoisyThreshold {
    /// s = ⌈N/ε_F⌉: Z_x has P(Z = z) ∝ e^{−|z|/s}.
    pub scale: u64,
    /// T = t − 1 + ⌈s ln(N/δ_F)⌉.
    pub threshold: u64,
}

/// The noise variance and threshold of [`FrequentSet::Gaussian`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaussianThreshold {
    /// σ²: Z_x has P(Z = z) ∝ e^{−z²/(2σ²)}.
    pub variance: GaussianVariance,
    /// T = t − 1 + m, m the least integer with N · P(Z ≥ m) ≤ δ_F/2.
    pub threshold: u64,
}

/// The noise of a private frequent set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrequentNoise {
    /// [`FrequentSet::Private`].
    Laplace(NoisyThreshold),
    /// [`FrequentSet::Gaussian`].
    Gaussian(GaussianThreshold),
}

impl FrequentNoise {
    /// The threshold T on the noisy counts.
    pub fn threshold(&self) -> u64 {
        match self {
            FrequentNoise::Laplace(n) => n.threshold,
            FrequentNoise::Gaussian(g) => g.threshold,
        }
    }
}

/// The variance and threshold of the Gaussian frequent set for N = `max_chain_product`, frequency t and
/// (ε_F, δ_F) (module docs): σ² rounded up, T rounded up.
///
/// Errors: ε_F not finite and > 0 → [`Error::InvalidEpsilon`]; δ_F outside [2⁻²⁹⁹, 1), t = 0, N = 0, or a
/// variance beyond the exact sampler's 2⁶² → [`Error::InvalidArgument`]; a threshold beyond 2⁶² →
/// [`Error::Overflow`].
pub fn gaussian_threshold(
    max_chain_product: usize,
    t: u64,
    epsilon: f64,
    delta: f64,
) -> Result<GaussianThreshold, Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    let half = 0.5 * delta;
    if !(delta < 1.0 && half >= MIN_DELTA) || t == 0 || max_chain_product == 0 {
        return Err(Error::InvalidArgument);
    }
    let n = max_chain_product as u64;
    let variance = gaussian_variance(epsilon, half, n)?;
    let m = least_margin(n, half, |m| gaussian_tail(&variance, m))?;
    let threshold = (t - 1)
        .checked_add(m)
        .filter(|&x| x < (1 << 62))
        .ok_or(Error::Overflow)?;
    Ok(GaussianThreshold { variance, threshold })
}

/// The largest noise scale s accepted (larger would need ε_F below N · 2^{−32}).
pub const MAX_NOISE_SCALE: u64 = 1 << 32;

/// The scale and threshold of the private frequent set for N = `max_chain_product`, frequency t and
/// (ε_F, δ_F). Both are rounded up (more noise and a higher threshold than the exact real values), so the
/// guarantees of the module docs hold exactly.
///
/// Errors: ε_F not finite and > 0 → [`Error::InvalidEpsilon`]; δ_F ∉ (0, 1), t = 0, N = 0, or a scale
/// above [`MAX_NOISE_SCALE`] → [`Error::InvalidArgument`]; a threshold beyond 2^62 → [`Error::Overflow`].
pub fn noisy_threshold(max_chain_product: usize, t: u64, epsilon: f64, delta: f64) -> Result<NoisyThreshold, Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if !(delta > 0.0 && delta < 1.0) || t == 0 || max_chain_product == 0 {
        return Err(Error::InvalidArgument);
    }
    let n = max_chain_product as f64;
    let q = n / epsilon;
    if q.is_nan() || q > MAX_NOISE_SCALE as f64 {
        return Err(Error::InvalidArgument);
    }
    let mut scale = (libm::ceil(q) as u64).max(1);
    // s · ε_F ≥ N exactly: the sign of a fused multiply-add is the sign of the exact s·ε_F − N.
    while libm::fma(scale as f64, epsilon, -n) < 0.0 {
        scale += 1;
    }
    if scale > MAX_NOISE_SCALE {
        return Err(Error::InvalidArgument);
    }
    let log = next_up(libm::log(next_up(n / delta)));
    let gap = libm::ceil(mul_up(scale as f64, log));
    if gap.is_nan() || gap >= (1u64 << 62) as f64 {
        return Err(Error::Overflow);
    }
    let threshold = (t - 1)
        .checked_add(gap as u64)
        .filter(|&x| x < (1 << 62))
        .ok_or(Error::Overflow)?;
    Ok(NoisyThreshold { scale, threshold })
}

/// The membership test of 𝓛′ used by the mechanism.
#[derive(Clone, Copy)]
pub(crate) enum Membership {
    Exact {
        t: u64,
    },
    Private {
        key: [u8; 32],
        rate: LaplaceRate,
        threshold: u64,
    },
    Gaussian {
        key: [u8; 32],
        variance: GaussianVariance,
        threshold: u64,
    },
}

impl Membership {
    /// The test for `frequent` with threshold t; the private key comes from `key`, called once, after the
    /// noise rate is built (so an error draws nothing) and never for the paper's exact 𝓛′.
    pub(crate) fn new(
        key: impl FnOnce() -> [u8; 32],
        frequent: FrequentSet,
        t: u64,
        noise: Option<FrequentNoise>,
    ) -> Result<Self, Error> {
        match (frequent, noise) {
            (FrequentSet::Private { .. }, Some(FrequentNoise::Laplace(noisy))) => {
                let rate = LaplaceRate::new(noisy.scale as f64, 1.0)?;
                Ok(Membership::Private {
                    key: key(),
                    rate,
                    threshold: noisy.threshold,
                })
            }
            (FrequentSet::Gaussian { .. }, Some(FrequentNoise::Gaussian(g))) => Ok(Membership::Gaussian {
                key: key(),
                variance: g.variance,
                threshold: g.threshold,
            }),
            (FrequentSet::Exact, _) => Ok(Membership::Exact { t }),
            _ => Err(Error::InvalidArgument),
        }
    }

    /// Whether the checked element x with |ρ(x, D)| = `count` is in 𝓛′.
    pub(crate) fn contains(&self, lattice: &Lattice<'_>, x: &[u32], count: u64) -> bool {
        match self {
            Membership::Exact { t } => is_frequent(count, *t),
            Membership::Private { key, rate, threshold } => {
                let z = noise(key, lattice.element_index(x), rate);
                i128::from(count) + i128::from(z) >= i128::from(*threshold)
            }
            Membership::Gaussian {
                key,
                variance,
                threshold,
            } => {
                let z = gaussian_noise(key, lattice.element_index(x), variance);
                i128::from(count) + i128::from(z) >= i128::from(*threshold)
            }
        }
    }
}

fn gaussian_noise(key: &[u8; 32], index: u64, variance: &GaussianVariance) -> i64 {
    let mut g = ChaCha20Rng::from_seed(*key);
    g.set_stream(index);
    discrete_gaussian(&mut g, variance)
}

/// Z_x of the Gaussian frequent set for the element of index `index` under `key`: exact discrete Gaussian
/// noise of `variance` ([`crate::exact::gaussian`]), drawn from the ChaCha20 stream `index` of `key` (the
/// same (key, index) always gives the same value).
pub fn frequency_noise_gaussian(key: &[u8; 32], index: u64, variance: &GaussianVariance) -> i64 {
    gaussian_noise(key, index, variance)
}

fn noise(key: &[u8; 32], index: u64, rate: &LaplaceRate) -> i64 {
    let mut g = ChaCha20Rng::from_seed(*key);
    g.set_stream(index);
    discrete_laplace(&mut g, rate)
}

/// Z_x for the element of index `index` under `key`: exact discrete Laplace noise with
/// P(Z = z) ∝ e^{−|z|/scale} ([`crate::exact::discrete`]), drawn from the ChaCha20 stream `index` of `key`.
/// The same (key, index) always gives the same value. Errors: `scale` = 0 or above [`MAX_NOISE_SCALE`] →
/// [`Error::InvalidArgument`].
pub fn frequency_noise(key: &[u8; 32], index: u64, scale: u64) -> Result<i64, Error> {
    if scale == 0 {
        return Err(Error::InvalidArgument);
    }
    Ok(noise(key, index, &LaplaceRate::new(scale as f64, 1.0)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_and_scale_are_rounded_up() {
        // N = 4, ε_F = 1: s = 4; ln(4/0.01) = 5.99…, s·ln = 23.96… → gap 24, T = t − 1 + 24.
        let nt = noisy_threshold(4, 10, 1.0, 0.01).unwrap();
        assert_eq!(
            nt,
            NoisyThreshold {
                scale: 4,
                threshold: 33
            }
        );
        // N/ε_F just above an integer: 3 / 0.3 rounds to 10 in doubles, but the double 0.3 is slightly below
        // 3/10, so the exact ratio is above 10 and s = 11.
        assert_eq!(noisy_threshold(3, 1, 0.3, 0.5).unwrap().scale, 11);
        assert_eq!(noisy_threshold(2, 1, 0.5, 0.5).unwrap().scale, 4);
        assert_eq!(noisy_threshold(4, 1, 0.0, 0.5), Err(Error::InvalidEpsilon));
        assert_eq!(noisy_threshold(4, 1, 1.0, 1.0), Err(Error::InvalidArgument));
        assert_eq!(noisy_threshold(4, 0, 1.0, 0.5), Err(Error::InvalidArgument));
        assert_eq!(noisy_threshold(4, 1, 1e-12, 0.5), Err(Error::InvalidArgument));
    }

    #[test]
    fn noise_is_a_function_of_key_and_index() {
        let key = [9u8; 32];
        let a = frequency_noise(&key, 17, 5);
        assert_eq!(a, frequency_noise(&key, 17, 5));
        let distinct = (0..64)
            .map(|i| frequency_noise(&key, i, 5).unwrap())
            .collect::<heapless::Vec<i64, 64>>();
        assert!(distinct.iter().any(|&z| z != distinct[0]));
        assert_eq!(frequency_noise(&key, 1, 0), Err(Error::InvalidArgument));
        assert_eq!(
            frequency_noise(&key, 1, MAX_NOISE_SCALE + 1),
            Err(Error::InvalidArgument)
        );
    }
}
