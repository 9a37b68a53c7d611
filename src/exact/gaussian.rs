//! Exact discrete Gaussian noise (Canonne, Kamath & Steinke 2020, *The Discrete Gaussian for Differential
//! Privacy*, Algorithm 3): Z on the integers with P(Z = z) ∝ exp(−z²/(2σ²)), for a rational σ² = p/q, with
//! every coin exact.
//!
//! **The sampler.** With t = ⌊σ⌋ + 1, draw Y from the discrete Laplace distribution P(Y = y) ∝ e^{−|y|/t}
//! ([`super::discrete`]) and keep it with probability exp(−(|Y| − σ²/t)²/(2σ²)); otherwise draw again.
//! A round returns y with probability ∝ e^{−|y|/t − (|y| − σ²/t)²/(2σ²)} = e^{−y²/(2σ²) − σ²/(2t²)}, and the
//! second factor does not depend on y: the output is exactly the discrete Gaussian, whatever t is (t only
//! sets the acceptance rate, a constant above 1/2 per round for this choice, CKS20 §5.3).
//!
//! **The coin.** With σ² = p/q, (|Y| − σ²/t)²/(2σ²) = W²/B with the integers W = |Y|·t·q − p and
//! B = 2·p·q·t²: the coin is Bernoulli(exp(−W²/B)) for a 254-bit W² and a B below 2¹²⁷, drawn as ⌊W²/B⌋
//! independent Bernoulli(e^{−1}) coins and one Bernoulli(exp(−r/B)) for the remainder r (CKS20 Algorithms 1
//! and 2, with the division and the digits of r/B in exact integer arithmetic).
//!
//! **Limits.** σ² ≤ 2⁶² and the sizes above (checked by [`GaussianVariance::new`]) keep every quantity
//! within its integer type. The discrete Laplace proposals are redrawn beyond ±(2⁶³ − 1)
//! ([`super::discrete::discrete_laplace`]), an event of probability below 2 exp(−2³⁰) whose only effect is
//! a redraw: that is the one departure from the exact distribution.

use super::bernoulli::{bernoulli_exp_minus_one, bernoulli_ratio};
use super::bits::Bits;
use super::discrete::{discrete_laplace, LaplaceRate};
use super::wide::U256;
use crate::Error;
use rand_core::Rng;

/// The largest σ² accepted (2⁶²).
pub const MAX_VARIANCE: f64 = 4_611_686_018_427_387_904.0;

/// The smallest σ² accepted by [`GaussianVariance::at_least`] (2⁻²⁰; below it the distribution is a point
/// mass at 0 up to e^{−2¹⁹}).
pub const MIN_VARIANCE: f64 = 1.0 / 1_048_576.0;

/// σ² = p/q of a discrete Gaussian, with the constants of the sampler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GaussianVariance {
    p: u64,
    q: u64,
    /// ⌊σ⌋ + 1.
    t: u64,
    /// B = 2 p q t² < 2¹²⁷.
    b: u128,
}

impl GaussianVariance {
    /// σ² = `p`/`q` exactly.
    ///
    /// Errors: p = 0 or q = 0, σ² above [`MAX_VARIANCE`], or sizes beyond the sampler's integers
    /// (t·q > 2⁶⁴ or 2·p·q·t² ≥ 2¹²⁷, with t = ⌊σ⌋ + 1) → [`Error::InvalidArgument`].
    pub fn new(p: u64, q: u64) -> Result<Self, Error> {
        // σ² = p/q ≤ 2⁶², exactly.
        if p == 0 || q == 0 || u128::from(p) > u128::from(q) << 62 {
            return Err(Error::InvalidArgument);
        }
        // s = ⌊√(p/q)⌋: the largest s with s² q ≤ p, from a float estimate corrected exactly.
        let fits = |s: u128| {
            s.checked_mul(s)
                .and_then(|s2| s2.checked_mul(u128::from(q)))
                .is_some_and(|v| v <= u128::from(p))
        };
        let mut s = libm::sqrt(p as f64 / q as f64) as u128;
        while s > 0 && !fits(s) {
            s -= 1;
        }
        while fits(s + 1) {
            s += 1;
        }
        let t = s + 1;
        let tq = t.checked_mul(u128::from(q)).filter(|&v| v <= 1 << 64);
        let b = t
            .checked_mul(t)
            .and_then(|t2| t2.checked_mul(2 * u128::from(p)))
            .and_then(|x| x.checked_mul(u128::from(q)))
            .filter(|&b| b < 1 << 127);
        match (tq, b, u64::try_from(t)) {
            (Some(_), Some(b), Ok(t)) => Ok(GaussianVariance { p, q, t, b }),
            _ => Err(Error::InvalidArgument),
        }
    }

    /// The least σ² = p/2^k not below `sigma_sq` with p < 2³¹ (or k = 0): σ² rounded up by a relative
    /// 2⁻³⁰ at most. Rounding σ² up only adds noise, so every privacy bound computed for `sigma_sq` holds.
    ///
    /// Errors: `sigma_sq` not finite or outside [[`MIN_VARIANCE`], [`MAX_VARIANCE`]] →
    /// [`Error::InvalidArgument`].
    pub fn at_least(sigma_sq: f64) -> Result<Self, Error> {
        if !(sigma_sq.is_finite() && (MIN_VARIANCE..=MAX_VARIANCE).contains(&sigma_sq)) {
            return Err(Error::InvalidArgument);
        }
        // k with 2³⁰ ≤ σ² 2^k < 2³¹ (k ≤ 50 for σ² ≥ 2⁻²⁰), or 0 for σ² ≥ 2³⁰; scaling by 2^k is exact.
        let e = libm::ilogb(sigma_sq);
        let k = (30 - e).max(0) as u32;
        let p = libm::ceil(libm::ldexp(sigma_sq, k as i32)) as u64;
        Self::new(p, 1u64 << k)
    }

    /// The numerator p of σ² = p/q.
    pub fn numerator(&self) -> u64 {
        self.p
    }

    /// The denominator q of σ² = p/q.
    pub fn denominator(&self) -> u64 {
        self.q
    }

    /// t = ⌊σ⌋ + 1, the scale of the discrete Laplace proposals.
    pub fn proposal_scale(&self) -> u64 {
        self.t
    }

    /// σ² as the nearest double (for display and for estimates; the bounds below are directed).
    pub fn value(&self) -> f64 {
        self.p as f64 / self.q as f64
    }

    /// A lower bound of σ² (at most two ulps below), for quantities that decrease with the noise, such as
    /// a privacy loss.
    pub fn lower(&self) -> f64 {
        crate::float::next_down(crate::float::next_down(self.value())).max(0.0)
    }

    /// An upper bound of σ² (at most two ulps above).
    pub fn upper(&self) -> f64 {
        crate::float::next_up(crate::float::next_up(self.value()))
    }
}

/// (⌊a / b⌋, a mod b) for 0 < b < 2¹²⁷, by binary long division (the remainder stays below 2¹²⁷, so its
/// double fits in a `u128`).
fn div_rem_u128(a: U256, b: u128) -> (U256, u128) {
    let mut q = [0u64; 4];
    let mut r: u128 = 0;
    for i in (0..256u32).rev() {
        r = (r << 1) | u128::from(a.bit(i));
        if r >= b {
            r -= b;
            q[(i / 64) as usize] |= 1 << (i % 64);
        }
    }
    (U256(q), r)
}

/// U < ρ/b for U uniform in [0, 1), ρ < b < 2¹²⁷, by comparing binary digits (as `bernoulli_ratio`).
fn below_u128<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, mut rho: u128, b: u128) -> bool {
    while rho != 0 {
        let twice = rho << 1;
        let digit = twice >= b;
        rho = if digit { twice - b } else { twice };
        if bits.bit() != digit {
            return digit;
        }
    }
    false
}

/// True with probability exactly exp(−a/b), for b in (0, 2¹²⁷) (CKS20 Algorithm 2 with Algorithm 1 for
/// the fractional part).
pub(crate) fn bernoulli_exp_ratio<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, a: U256, b: u128) -> bool {
    let (q, r) = div_rem_u128(a, b);
    let mut i = U256::ZERO;
    let one = U256::from_u128(1);
    while i < q {
        if !bernoulli_exp_minus_one(bits) {
            return false;
        }
        // i < q < 2²⁵⁶: the increment cannot overflow.
        i = i.checked_add(one).unwrap_or(q);
    }
    if r == 0 {
        return true;
    }
    // Algorithm 1 with γ = r/b ∈ (0, 1): K ← 1; while Bernoulli(1/K) ∧ Bernoulli(γ): K ← K + 1.
    let mut k: u64 = 1;
    while bernoulli_ratio(bits, 1, k) && below_u128(bits, r, b) {
        k = k.saturating_add(1);
    }
    k % 2 == 1
}

/// x² as a 256-bit integer.
fn square(x: u128) -> U256 {
    let w = U256::from_u128(x);
    let lo = w.checked_mul_u64(x as u64).unwrap_or(U256::ZERO);
    let hi = w
        .checked_mul_u64((x >> 64) as u64)
        .and_then(|h| h.checked_shl(64))
        .unwrap_or(U256::ZERO);
    // x < 2¹²⁸: x² < 2²⁵⁶, so neither part nor their sum overflows.
    lo.checked_add(hi).unwrap_or(U256::ZERO)
}

/// One draw of Z with P(Z = z) ∝ exp(−z²/(2σ²)) on the integers, exactly (module documentation).
///
/// ```
/// use dpmo::exact::gaussian::{discrete_gaussian, GaussianVariance};
/// # let mut rng = dpmo::GeneratorState::chacha20([5; 32]).load()?;
/// let z = discrete_gaussian(&mut rng, &GaussianVariance::new(9, 4)?); // σ² = 2.25
/// # let _ = z;
/// # Ok::<(), dpmo::Error>(())
/// ```
pub fn discrete_gaussian<R: Rng + ?Sized>(rng: &mut R, variance: &GaussianVariance) -> i64 {
    // t ≤ 2³² (σ² ≤ 2⁶²) is an exact double and a valid discrete Laplace scale.
    let Ok(rate) = LaplaceRate::new(variance.t as f64, 1.0) else {
        return 0; // unreachable: t ∈ [1, 2³² + 1] is accepted by LaplaceRate::new
    };
    let (t, q, p) = (u128::from(variance.t), u128::from(variance.q), u128::from(variance.p));
    loop {
        let y = discrete_laplace(rng, &rate);
        // |Y| < 2⁶³ and t q ≤ 2⁶⁴: |Y| t q < 2¹²⁷.
        let w = (u128::from(y.unsigned_abs()) * t * q).abs_diff(p);
        if bernoulli_exp_ratio(&mut Bits::new(rng), square(w), variance.b) {
            return y;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fit::assert_fits;
    use rand_core::SeedableRng;
    extern crate std;
    use std::vec::Vec;

    #[test]
    fn variances_and_their_limits() {
        let v = GaussianVariance::new(9, 4).unwrap(); // σ = 1.5
        assert_eq!(v.proposal_scale(), 2);
        assert_eq!(GaussianVariance::new(4, 1).unwrap().proposal_scale(), 3); // σ = 2 exactly
        assert_eq!(GaussianVariance::new(1, 3).unwrap().proposal_scale(), 1);
        assert_eq!(GaussianVariance::new(0, 1), Err(Error::InvalidArgument));
        assert_eq!(GaussianVariance::new(1, 0), Err(Error::InvalidArgument));
        assert_eq!(GaussianVariance::new(u64::MAX, 1), Err(Error::InvalidArgument));
        assert!(GaussianVariance::new(1 << 62, 1).is_ok());
        assert_eq!(GaussianVariance::new((1 << 62) + 1, 1), Err(Error::InvalidArgument)); // σ² > 2⁶²
        assert_eq!(GaussianVariance::new(1 << 63, 1 << 62), Err(Error::InvalidArgument)); // B = 2¹²⁸
        assert!(GaussianVariance::new(1, u64::MAX).is_ok()); // tiny σ²: t = 1, B < 2⁶⁶
        for s2 in [MIN_VARIANCE, 0.3, 1.0, 2.25, 1e3, 123_456.789, 1e15, MAX_VARIANCE] {
            let v = GaussianVariance::at_least(s2).unwrap();
            let exact = v.numerator() as f64 / v.denominator() as f64;
            assert!(exact >= s2 && exact <= s2 * (1.0 + 1e-9), "{s2}: {exact}");
            assert!(v.lower() <= exact && v.upper() >= exact);
        }
        for bad in [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            MIN_VARIANCE / 2.0,
            MAX_VARIANCE * 2.0,
        ] {
            assert_eq!(GaussianVariance::at_least(bad), Err(Error::InvalidArgument), "{bad}");
        }
    }

    #[test]
    fn long_division_and_squares_are_exact() {
        let a = square(0xdead_beef_0123_4567_89ab_cdef_f00d_cafe);
        for b in [1u128, 3, 0xffff_ffff_ffff_ffff_ffff, (1 << 126) + 12345] {
            let (q, r) = div_rem_u128(a, b);
            assert!(r < b);
            // q b + r = a, checked limb by limb through b's two halves.
            let lo = q.checked_mul_u64(b as u64).unwrap_or(U256::ZERO);
            let hi = q.checked_mul_u64((b >> 64) as u64).and_then(|h| h.checked_shl(64));
            let back = match hi {
                Some(h) if b >> 64 != 0 => lo.checked_add(h),
                _ => Some(lo),
            };
            if let Some(back) = back.and_then(|x| x.checked_add(U256::from_u128(r))) {
                assert_eq!(back, a, "b = {b}");
            }
        }
        assert_eq!(square(3), U256::from_u128(9));
        assert_eq!(square(1 << 100).bit_len(), 201);
    }

    /// P(Z = z) for |z| ≤ w, straight from the definition.
    fn pmf(s2: f64, w: i64) -> Vec<f64> {
        let mass: Vec<f64> = (-w..=w).map(|z| (-(z * z) as f64 / (2.0 * s2)).exp()).collect();
        let total: f64 = mass.iter().sum();
        mass.iter().map(|m| m / total).collect()
    }

    #[test]
    fn draws_follow_the_discrete_gaussian() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        for (p, q, w) in [
            (1u64, 3u64, 4i64),
            (9, 4, 9),
            (2, 1, 8),
            (1001, 10, 50),
            (1 << 40, 1, 0),
        ] {
            let v = GaussianVariance::new(p, q).unwrap();
            let s2 = p as f64 / q as f64;
            if w == 0 {
                // A large σ: the mean and variance of 10⁵ draws (z-scores at α = 10⁻⁶).
                let n = 100_000;
                let xs: Vec<f64> = (0..n).map(|_| discrete_gaussian(&mut rng, &v) as f64).collect();
                let mean = xs.iter().sum::<f64>() / n as f64;
                let var = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
                assert!(mean.abs() / (s2 / n as f64).sqrt() < 4.9, "mean {mean}");
                assert!(
                    (var / s2 - 1.0).abs() / (2.0 / n as f64).sqrt() < 4.9,
                    "variance {var} vs {s2}"
                );
                continue;
            }
            let n = 200_000;
            let mut counts = std::vec![0u64; (2 * w + 1) as usize];
            for _ in 0..n {
                let z = discrete_gaussian(&mut rng, &v);
                assert!(z.abs() <= w * 3, "draw {z} for σ² = {s2}");
                if z.abs() <= w {
                    counts[(z + w) as usize] += 1;
                }
            }
            let probs = pmf(s2, w);
            assert_fits(&std::format!("discrete Gaussian σ² = {p}/{q}"), &counts, &probs);
        }
    }

    #[test]
    fn the_check_catches_a_wrong_variance() {
        // Draws with σ² = 9/4 do not fit σ² = 2 (the same test, on a broken reference).
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(12);
        let v = GaussianVariance::new(9, 4).unwrap();
        let w = 9;
        let mut counts = std::vec![0u64; 19];
        for _ in 0..200_000 {
            let z = discrete_gaussian(&mut rng, &v);
            if z.abs() <= w {
                counts[(z + w) as usize] += 1;
            }
        }
        let p = crate::test_fit::chi_square_p_value(&counts, &pmf(2.0, w));
        assert!(p < crate::test_fit::ALPHA, "σ² = 2 not rejected: p = {p}");
    }

    #[test]
    fn the_exp_coin_has_its_probability() {
        // exp(−a/b) for a few rationals, with a whole part and without.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(13);
        for (a, b) in [(1u128, 3u128), (7, 2), (5, 5), (0, 9), (1 << 100, (1 << 100) + 1)] {
            let n = 200_000;
            let hits = (0..n)
                .filter(|_| bernoulli_exp_ratio(&mut Bits::new(&mut rng), U256::from_u128(a), b))
                .count() as u64;
            let p = (-(a as f64) / b as f64).exp();
            assert_fits(&std::format!("exp(-{a}/{b})"), &[hits, n - hits], &[p, 1.0 - p]);
        }
    }
}
