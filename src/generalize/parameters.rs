//! The parameters of Algorithm 3 (paper §3.3): β ≥ e^{−ε}, the sensitivity constant η(k), ε′, and the
//! frequency condition (10) with its smallest admissible t.
//!
//! **Choices where the paper is ambiguous or wrong** (each makes the bound valid; none loosens it):
//! * |𝓓| is private, yet η(k) (both versions) and hence ε′ depend on it, and the proof compares D with
//!   D₋ₐ₀ at one ε′. dpmo takes a public lower bound n₀ (`min_records`) in place of |𝓓| in η(k), and
//!   divides the scores by m̄ = max(|𝓓|, n₀ + 1) instead of |𝓓|; the per-record sensitivity of the score
//!   is then at most η/m̄ for every pair D ⊃ D₋ₐ₀, whatever their size (see
//!   [`mechanism`](super::mechanism)). For databases larger than n₀ the scores are the paper's.
//! * φ(k) (a lower bound of Φ^a for the Lagrangian) and φ_u(k) (an upper bound for the threshold version)
//!   are public parameters, `phi_min` and `phi_max`; the mechanism clamps Φ^a into them, so per-user
//!   weights (private, per record) cannot break the bound.
//! * In the threshold version the risk is evaluated with |ρ| replaced by max(|ρ|, t): identical on
//!   t-frequent elements, and it keeps η's bound when a less frequent element enters a private 𝓛′.
//! * h^k (the size of a chain product) is replaced by N = ∏(height_i + 1), the exact public maximum of
//!   |a⁺|, and k ln h by ln N.
//! * The second term of (10) is printed as β h^κ e^{ε′ t_f(k)}/((1−β)(1−τ₁)). Inequality (24) with (25)
//!   and t′ = (1 − τ₁)βt needs (1 − β)(1 − τ₁) t ≥ h^k e^{ε′ f_max/m} (at i ≤ i₂): there is no factor β
//!   (the printed term is smaller by β, hence insufficient) and the exponent is k, not κ. dpmo uses
//!   N e^{ε′ S}/((1 − β)(1 − τ₁)), S bounding the spread of the scores ε′ is applied to.
//! * Condition (24) itself omits the multiplicity of the output: Pr[𝒜(D₋ₐ₀) = G] counts an output with j
//!   copies of x once, not once per copy. The exact computations of `tests/generalize_privacy.rs` measure
//!   the resulting loss; they are the evidence for the guarantee in the regime of (10), not a proof.
//! * The utility version's η(k) = 2(λ/φ(k) + ν(k)^κ/|𝓓|) is kept as printed (a factor 2 above the bound
//!   λ/φ + ν^κ/(|𝓓| − 1) that Lemma 2's computation gives).

use super::frequency::{gaussian_threshold, noisy_threshold, FrequentNoise, FrequentSet, NoisyThreshold};
use super::hierarchy::Lattice;
use super::models::{check_lagrangian, max_utility, power, UtilityMeasure};
use crate::float::{add_up, mul_up, next_down, next_up, sub_down};
use crate::Error;

/// The largest exponent κ of the Lagrangian accepted.
pub const MAX_KAPPA: u32 = 64;

/// Which per-record objective the mechanism maximizes (paper §3.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Objective {
    /// The Lagrangian f^a(x) = λ|ρ(x, D)|/max(Φ^a(x), φ_min) + u(x)^κ (eq. 4), sampled with q_{f^a}^{ε′}
    /// over a⁺ ∩ 𝓛′ (conditions C1–C3).
    Lagrangian {
        /// λ ≥ 0.
        lambda: f64,
        /// κ ∈ [0, [`MAX_KAPPA`]].
        kappa: u32,
        /// φ(k) > 0, the lower bound of Φ^a in η(k) (Φ^a is clamped to it).
        phi_min: f64,
    },
    /// The threshold version: q_{r^a}^{ε′} over {g ∈ a⁺ ∩ 𝓛′ : u(g) ≥ c} (conditions C1′–C3′).
    Threshold {
        /// The utility threshold c (finite).
        c: f64,
        /// φ_u(k) > 0, the upper bound of Φ^a in η(k) (Φ^a is clamped to it).
        phi_max: f64,
    },
}

/// Everything Algorithm 3 needs besides the data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// ε of Theorem 4 (> 0).
    pub epsilon: f64,
    /// β ∈ (0, 1): each record is kept with probability 1 − β; β ≥ e^{−ε} is required (see [`min_beta`]).
    pub beta: f64,
    /// δ ∈ (0, 1) of Theorem 4, in condition (10).
    pub delta: f64,
    /// τ₁ ∈ (0, 1) of condition (10).
    pub tau1: f64,
    /// The frequency threshold t (≥ 1; ≥ 2 for the threshold version).
    pub t: u64,
    /// n₀ ≥ 1: a public lower bound of the database size used in η(k) (module docs).
    pub min_records: u64,
    /// The objective.
    pub objective: Objective,
    /// The per-attribute utility d_i.
    pub utility: UtilityMeasure,
    /// How 𝓛′ is built.
    pub frequent: FrequentSet,
}

/// Validated settings and the quantities derived from them and the lattice.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parameters {
    settings: Settings,
    max_chain: usize,
    nu_kappa: f64,
    eta: f64,
    epsilon_prime: f64,
    score_range: f64,
    smallest_t: u64,
    noise: Option<FrequentNoise>,
}

/// A relative margin covering the few roundings of η, ν^κ and S (each a short chain of correctly rounded
/// operations and `libm` logarithms, accurate to well under 2^{−45} relative), and, for η, the exact
/// selector's grid (two steps of 2^{−62} η, see [`mechanism`](super::mechanism)).
const MARGIN: f64 = 1.0 + 1.0 / (1u64 << 40) as f64;

/// The largest score spread S accepted (2^900): the unnormalized scores the selector sees are at most
/// m̄ S, finite for any database of fewer than 2^64 records.
pub const MAX_SCORE_RANGE: f64 = f64::from_bits((1023 + 900) << 52);

/// A lower bound of a/b for a ≥ 0, b > 0.
fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    if q.is_finite() && libm::fma(q, b, -a) > 0.0 {
        next_down(q).max(0.0)
    } else {
        q
    }
}

/// A lower bound of ε + ln β (ln from `libm`, within one ulp, so one step down is below the exact value).
fn epsilon_plus_log_beta_down(epsilon: f64, beta: f64) -> f64 {
    sub_down(epsilon, -next_down(libm::log(beta)))
}

/// Whether β ≥ e^{−ε} is certified: ε + ln β ≥ 0 with ln β rounded down.
pub fn beta_admissible(epsilon: f64, beta: f64) -> bool {
    epsilon.is_finite() && epsilon > 0.0 && beta > 0.0 && beta < 1.0 && epsilon_plus_log_beta_down(epsilon, beta) >= 0.0
}

/// The smallest double β that [`beta_admissible`] accepts for ε (just above e^{−ε}: within 10⁻¹² relative
/// wherever e^{−ε} is a normal double; the smallest positive double from ε ≈ 744.44 on), found by bisection
/// over the doubles: the paper's boundary choice β = e^{−ε}, where ε′ = 0 and the per-record choice is
/// uniform. Defined for every ε > 0 small enough that some β < 1 is admissible.
///
/// Errors: ε not finite or not positive → [`Error::InvalidEpsilon`]; ε so small that no double below 1 is
/// admissible → [`Error::InvalidArgument`].
pub fn min_beta(epsilon: f64) -> Result<f64, Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    // [lo, hi]: lo not admissible (or 0), hi admissible. beta_admissible is monotone in β (a rounded-down
    // logarithm, a rounded-down sum), so bisecting the bit patterns of the positive doubles between them
    // finds the smallest admissible one. Above ε ≈ 8 one ulp of ε is many ulps of β, so stepping β by ulps
    // from e^{−ε} (as this function once did, 8 steps) could stop short of it.
    let guess = libm::exp(-epsilon);
    let mut hi = next_up(guess * (1.0 + 1.0 / (1u64 << 20) as f64)).max(f64::from_bits(1));
    if hi >= 1.0 {
        hi = next_down(1.0);
    }
    if !beta_admissible(epsilon, hi) {
        return Err(Error::InvalidArgument);
    }
    let mut lo = next_down(guess * (1.0 - 1.0 / (1u64 << 20) as f64)).max(0.0);
    if lo > 0.0 && beta_admissible(epsilon, lo) {
        lo = 0.0;
    }
    // Positive doubles are ordered as their bit patterns: at most 64 steps.
    let (mut a, mut b) = (lo.to_bits(), hi.to_bits());
    while b - a > 1 {
        let mid = a + (b - a) / 2;
        if beta_admissible(epsilon, f64::from_bits(mid)) {
            b = mid;
        } else {
            a = mid;
        }
    }
    hi = f64::from_bits(b);
    Ok(hi)
}

impl Parameters {
    /// Validates `settings` for `lattice` and refuses a t below the smallest t admissible by
    /// condition (10) ([`smallest_t`](Self::smallest_t)).
    ///
    /// Errors: ε or ε_F not finite and > 0 → [`Error::InvalidEpsilon`]; β ∉ (0, 1) or β < e^{−ε}, δ, δ_F
    /// or τ₁ ∉ (0, 1), t = 0 (or t < 2 for the threshold version), n₀ = 0, λ < 0, κ > [`MAX_KAPPA`],
    /// φ_min or φ_max ≤ 0, condition (10) unsatisfiable, or **t too small for condition (10)** →
    /// [`Error::InvalidArgument`]; a non-finite λ, c, φ → [`Error::NonFiniteInput`]; ν^κ, η or ε′ not
    /// finite, or the score spread S above [`MAX_SCORE_RANGE`] → [`Error::Overflow`].
    pub fn new(lattice: &Lattice<'_>, settings: Settings) -> Result<Self, Error> {
        let p = Self::without_condition_10(lattice, settings)?;
        if settings.t < p.smallest_t {
            return Err(Error::InvalidArgument);
        }
        Ok(p)
    }

    /// As [`new`](Self::new) without refusing a t that violates condition (10). **No guarantee**: Theorem 4
    /// does not apply. For experiments that study the mechanism outside its guarantee (the brute-force
    /// tests on tiny databases, where (10) cannot hold).
    pub fn without_condition_10(lattice: &Lattice<'_>, settings: Settings) -> Result<Self, Error> {
        let s = settings;
        if !(s.epsilon.is_finite() && s.epsilon > 0.0) {
            return Err(Error::InvalidEpsilon);
        }
        if !beta_admissible(s.epsilon, s.beta) {
            return Err(Error::InvalidArgument);
        }
        let unit = |x: f64| x > 0.0 && x < 1.0;
        if !unit(s.delta) || !unit(s.tau1) || s.min_records == 0 {
            return Err(Error::InvalidArgument);
        }
        let threshold_version = matches!(s.objective, Objective::Threshold { .. });
        if s.t == 0 || (threshold_version && s.t < 2) {
            return Err(Error::InvalidArgument);
        }
        let max_chain = lattice.max_chain_product();
        let noise = match s.frequent {
            FrequentSet::Exact => None,
            FrequentSet::Private { epsilon, delta } => {
                Some(FrequentNoise::Laplace(noisy_threshold(max_chain, s.t, epsilon, delta)?))
            }
            FrequentSet::Gaussian { epsilon, delta } => Some(FrequentNoise::Gaussian(gaussian_threshold(
                max_chain, s.t, epsilon, delta,
            )?)),
        };
        let nu_kappa = match s.objective {
            Objective::Lagrangian { lambda, kappa, phi_min } => {
                check_lagrangian(lambda, phi_min)?;
                if kappa > MAX_KAPPA {
                    return Err(Error::InvalidArgument);
                }
                let nk = mul_up(power(max_utility(lattice, s.utility), kappa), MARGIN);
                if !nk.is_finite() {
                    return Err(Error::Overflow);
                }
                nk
            }
            Objective::Threshold { c, phi_max } => {
                if !(c.is_finite() && phi_max.is_finite()) {
                    return Err(Error::NonFiniteInput);
                }
                if phi_max <= 0.0 {
                    return Err(Error::InvalidArgument);
                }
                0.0
            }
        };
        let mut p = Parameters {
            settings: s,
            max_chain,
            nu_kappa,
            eta: 0.0,
            epsilon_prime: 0.0,
            score_range: 0.0,
            smallest_t: 0,
            noise,
        };
        let (eta, epsilon_prime, score_range) = p.derived(s.t)?;
        p.eta = eta;
        p.epsilon_prime = epsilon_prime;
        p.score_range = score_range;
        p.smallest_t = p.find_smallest_t()?;
        Ok(p)
    }

    /// (η, ε′, S) at frequency t: η(k) of §3.3 (rounded up), ε′ = (ε + ln β)/(3η(1 − β)) (rounded down;
    /// 0 when η = 0, i.e. when the scores do not depend on the data), and S, an upper bound of the spread
    /// of the scores ε′ multiplies (rounded up).
    fn derived(&self, t: u64) -> Result<(f64, f64, f64), Error> {
        let s = &self.settings;
        let n0 = s.min_records as f64;
        // Each bound is a handful of correctly rounded operations on positive numbers, inflated by MARGIN.
        let (eta, range) = match s.objective {
            Objective::Lagrangian { lambda, phi_min, .. } => {
                // η = 2(λ/φ + ν^κ/n₀); the scores f/m̄ lie in [0, λ/φ + ν^κ/(n₀ + 1)].
                let a = lambda / phi_min;
                (2.0 * (a + self.nu_kappa / n0), a + self.nu_kappa / (n0 + 1.0))
            }
            Objective::Threshold { phi_max, .. } => {
                // η = φ_u (1/(t(t−1)) + 1/(n₀(t−1))) = φ_u (n₀ + t)/(t (t−1) n₀); the scores −r/m̄ lie in
                // [−φ_u/(t(n₀ + 1)), 0] since r = Φ/max(|ρ|, t) ≤ φ_u/t.
                let tf = t as f64;
                (
                    phi_max * (n0 + tf) / (tf * (tf - 1.0) * n0),
                    phi_max / (tf * (n0 + 1.0)),
                )
            }
        };
        let (eta, range) = (mul_up(eta, MARGIN), mul_up(range, MARGIN));
        if !(eta.is_finite() && range.is_finite()) || range > MAX_SCORE_RANGE {
            return Err(Error::Overflow);
        }
        let numerator = epsilon_plus_log_beta_down(s.epsilon, s.beta).max(0.0);
        let epsilon_prime = if eta == 0.0 {
            0.0
        } else {
            let den = mul_up(mul_up(3.0, eta), add_up(1.0, -s.beta));
            div_down(numerator, den)
        };
        if !epsilon_prime.is_finite() {
            return Err(Error::Overflow);
        }
        Ok((eta, epsilon_prime, range))
    }

    /// The right-hand side of condition (10) at frequency t (module docs for the corrected second term):
    /// max{ 2/(β τ₁²) (ln(2/δ) + ln N), N e^{ε′ S}/((1 − β)(1 − τ₁)) }, inflated by a relative 2^{−40}
    /// above its rounding errors.
    pub fn condition_10(&self, t: u64) -> Result<f64, Error> {
        let s = &self.settings;
        let n = self.max_chain as f64;
        let first = 2.0 / (s.beta * s.tau1 * s.tau1) * (libm::log(2.0 / s.delta) + libm::log(n));
        let (_, ep, range) = self.derived(t)?;
        let second = n * libm::exp(ep * range) / ((1.0 - s.beta) * (1.0 - s.tau1));
        let rhs = mul_up(first.max(second), MARGIN);
        if rhs.is_finite() {
            Ok(rhs)
        } else {
            Err(Error::Overflow)
        }
    }

    /// The smallest t > condition_10(t). For the Lagrangian the right-hand side does not depend on t; for
    /// the threshold version it grows with t but stays below N e^{(ε + ln β)/(3(1 − β))}/((1 − β)(1 − τ₁)),
    /// so jumping to ⌊rhs(t)⌋ + 1 until t exceeds it ends.
    fn find_smallest_t(&self) -> Result<u64, Error> {
        let floor = if matches!(self.settings.objective, Objective::Threshold { .. }) {
            2
        } else {
            1
        };
        let mut t: u64 = floor;
        for _ in 0..4096 {
            let rhs = self.condition_10(t)?;
            if rhs >= (1u64 << 53) as f64 {
                return Err(Error::InvalidArgument);
            }
            if (t as f64) > rhs {
                return Ok(t);
            }
            t = (libm::floor(rhs) as u64 + 1).max(t + 1);
        }
        Err(Error::InvalidArgument)
    }

    /// The validated settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// N = ∏ (height_i + 1) of the lattice the parameters were made for.
    pub fn max_chain_product(&self) -> usize {
        self.max_chain
    }

    /// η(k) at the settings' t (rounded up).
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// ε′ = (ε + ln β)/(3η(k)(1 − β)) (rounded down; 0 at β = e^{−ε} or when the scores do not depend on
    /// the data).
    pub fn epsilon_prime(&self) -> f64 {
        self.epsilon_prime
    }

    /// S: the spread of the scores that ε′ multiplies (f/m̄ ∈ [0, S] or −r/m̄ ∈ [−S, 0]).
    pub fn score_range(&self) -> f64 {
        self.score_range
    }

    /// The smallest t admissible by condition (10) for these settings.
    pub fn smallest_t(&self) -> u64 {
        self.smallest_t
    }

    /// The noise scale and threshold of the Laplace frequent set (`None` for the other frequent sets).
    pub fn noisy_threshold(&self) -> Option<NoisyThreshold> {
        match self.noise {
            Some(FrequentNoise::Laplace(n)) => Some(n),
            _ => None,
        }
    }

    /// The noise and threshold of the private frequent set, Laplace or Gaussian (`None` for
    /// [`FrequentSet::Exact`]).
    pub fn frequent_noise(&self) -> Option<FrequentNoise> {
        self.noise
    }

    /// The total (ε, δ) the release claims with a private frequent set ([`FrequentSet::Private`] or
    /// [`FrequentSet::Gaussian`]): (ε + ε_F, δ + δ_F), both rounded up. `None` for [`FrequentSet::Exact`],
    /// which claims nothing (module docs of [`frequency`](super::frequency)).
    pub fn guarantee(&self) -> Option<(f64, f64)> {
        match self.settings.frequent {
            FrequentSet::Exact => None,
            FrequentSet::Private { epsilon, delta } | FrequentSet::Gaussian { epsilon, delta } => Some((
                add_up(self.settings.epsilon, epsilon),
                add_up(self.settings.delta, delta),
            )),
        }
    }

    /// The per-record score divisor m̄ = max(m, n₀ + 1) for a database of m records.
    pub(crate) fn score_divisor(&self, m: usize) -> f64 {
        (m as f64).max(self.settings.min_records as f64 + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22: ε in [8, 16) and ≥ 16 were refused (`InvalidArgument`, first at ε = 8.39): one ulp of ε is
    /// 8 to 2¹⁰ ulps of β there, more than the 8 steps the search took. Every ε on a fine grid up to the
    /// largest double now has its smallest admissible β, next to e^{−ε}.
    #[test]
    fn min_beta_for_large_epsilon() {
        let mut eps = 1e-9;
        let mut checked = 0;
        while eps < 800.0 {
            let b = min_beta(eps).unwrap_or_else(|e| panic!("ε = {eps}: {e:?}"));
            assert!(
                beta_admissible(eps, b) && !beta_admissible(eps, next_down(b)),
                "ε = {eps}"
            );
            let e = libm::exp(-eps);
            if e > 1e-300 {
                assert!((b - e).abs() <= 1e-12 * e, "ε = {eps}: β = {b:e}, e^-ε = {e:e}");
            }
            eps *= 1.0013;
            checked += 1;
        }
        assert!(checked > 20_000);
        for eps in [8.39, 8.0, 15.999, 16.0, 100.0, 745.0, 746.0, 1e4, f64::MAX] {
            let b = min_beta(eps).unwrap();
            assert!(beta_admissible(eps, b) && b > 0.0, "ε = {eps}");
        }
        // The smallest positive double is admissible from ε ≈ 744.44 on.
        assert_eq!(min_beta(f64::MAX), Ok(f64::from_bits(1)));
    }

    #[test]
    fn beta_boundary() {
        for eps in [0.1, 0.5, 1.0, 2.0, 5.0] {
            let b = min_beta(eps).unwrap();
            assert!(beta_admissible(eps, b));
            assert!(!beta_admissible(eps, next_down(b)));
            assert!((b - libm::exp(-eps)).abs() <= 4.0 * f64::EPSILON * b);
        }
        assert!(!beta_admissible(1.0, 0.3));
        assert!(beta_admissible(1.0, 0.5));
        assert!(!beta_admissible(1.0, 1.0));
        assert_eq!(min_beta(0.0), Err(Error::InvalidEpsilon));
    }

    #[test]
    fn division_bounds() {
        assert_eq!(div_down(1.0, 4.0), 0.25);
        assert!(div_down(1.0, 3.0) <= 1.0 / 3.0 && div_down(2.0, 3.0) <= 2.0 / 3.0);
        assert_eq!(div_down(0.0, 3.0), 0.0);
        assert_eq!(MAX_SCORE_RANGE, 2f64.powi(900));
    }
}
