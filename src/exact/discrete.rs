//! Exact discrete Laplace noise for released values (Canonne, Kamath & Steinke 2020, Algorithm 2).
//!
//! Releasing f(x) + b·Z with continuous, double-precision Laplace noise leaks f(x): the set of doubles the
//! sum can take depends on f(x) (Mironov, CCS 2012). The discrete Laplace mechanism avoids this: with f(x)
//! on a grid of step g (an integer count, or a value rounded to g), release f(x)/g + Z with
//! P(Z = z) ∝ exp(−|z| g / b) on the integers. Every output is an integer, each with exactly its
//! prescribed probability; for a sensitivity Δ (a multiple of g) it is (Δ/b)-DP, like the Laplace
//! mechanism of scale b.

use super::bernoulli::{bernoulli_exp_minus, bernoulli_exp_minus_one, bernoulli_ratio, Frac, Gamma};
use super::bits::Bits;
use super::grid::decompose;
use super::wide::U256;
use crate::Error;
use rand_core::Rng;

/// The largest scale/granularity ratio accepted (2³²): it keeps every intermediate within 128 bits and the
/// chance of a draw beyond ±(2⁶³ − 1) below exp(−2³⁰), see [`discrete_laplace`].
pub const MAX_SCALE_RATIO: f64 = 4_294_967_296.0;

/// The rate g/b = s/t of a discrete Laplace distribution, as two integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaplaceRate {
    s: u128,
    t: u128,
    /// t = odd · 2^shift, for exact Bernoulli(exp(−U/t)) coins.
    t_odd: u64,
    t_shift: u32,
}

impl LaplaceRate {
    /// The rate for noise of `scale` b on a grid of `granularity` g: P(Z = z) ∝ exp(−|z| g / b).
    ///
    /// Errors: b or g not finite and > 0 → [`Error::InvalidArgument`]; b/g above [`MAX_SCALE_RATIO`] or
    /// below 2⁻⁶⁴ → [`Error::InvalidArgument`].
    pub fn new(scale: f64, granularity: f64) -> Result<LaplaceRate, Error> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(scale) || !positive(granularity) {
            return Err(Error::InvalidArgument);
        }
        let ratio = scale / granularity;
        if !(1.0 / 18_446_744_073_709_551_616.0..=MAX_SCALE_RATIO).contains(&ratio) {
            return Err(Error::InvalidArgument);
        }
        // g / b = (m_g / m_b) 2^(e_g − e_b), both mantissas odd after removing their trailing zeros.
        let odd = |x: f64| {
            let (m, e) = decompose(x);
            let z = m.trailing_zeros();
            ((m as u64) >> z, e + z as i32)
        };
        let ((mg, eg), (mb, eb)) = (odd(granularity), odd(scale));
        let d = eg - eb;
        // The ratio bounds keep |d| ≤ 64 + 53, so the shifted mantissa fits in 128 bits.
        let (s, t) = if d >= 0 {
            (u128::from(mg) << d, u128::from(mb))
        } else {
            (u128::from(mg), u128::from(mb) << (-d))
        };
        let t_shift = t.trailing_zeros();
        Ok(LaplaceRate {
            s,
            t,
            t_odd: (t >> t_shift) as u64,
            t_shift,
        })
    }
}

/// A uniform integer in [0, bound) for bound ≥ 1, by rejection on the smallest covering power of two.
fn uniform_below<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, bound: u128) -> u128 {
    if bound <= 1 {
        return 0;
    }
    let width = 128 - (bound - 1).leading_zeros();
    loop {
        let mut x = 0u128;
        for _ in 0..width {
            x = (x << 1) | u128::from(bits.bit());
        }
        if x < bound {
            return x;
        }
    }
}

/// One draw of Z with P(Z = z) ∝ exp(−|z| s/t) (CKS20 Algorithm 2), exactly. A draw whose magnitude does
/// not fit in an `i64` is redrawn; with s/t ≥ 2⁻³² that event has probability below 2 exp(−2³⁰), the only
/// departure from the exact distribution.
///
/// ```
/// use dpmo::exact::discrete::{discrete_laplace, LaplaceRate};
/// # let mut rng = dpmo::GeneratorState::chacha20([5; 32]).load()?;
/// // Release a count with sensitivity 1 under ε = 0.5: scale 1/ε = 2 on the integers.
/// let count: i64 = 1234;
/// let released = count + discrete_laplace(&mut rng, &LaplaceRate::new(2.0, 1.0)?);
/// # let _ = released;
/// # Ok::<(), dpmo::Error>(())
/// ```
pub fn discrete_laplace<R: Rng + ?Sized>(rng: &mut R, rate: &LaplaceRate) -> i64 {
    let mut bits = Bits::new(rng);
    loop {
        // X = U + t V is geometric with success probability 1 − e^{−1/t}: U uniform in [0, t) kept with
        // probability exp(−U/t), V ~ Geometric(1 − e^{−1}).
        let u = uniform_below(&mut bits, rate.t);
        // U / t = (U / t_odd) / 2^shift: the fraction form of the Bernoulli samplers.
        let (q, r) = (u / u128::from(rate.t_odd), (u % u128::from(rate.t_odd)) as u64);
        let frac = Frac {
            t: U256::from_u128(q),
            rho: r,
            b: rate.t_odd,
            f: rate.t_shift,
        };
        if !bernoulli_exp_minus(&mut bits, &Gamma { whole: 0, frac }) {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_minus_one(&mut bits) {
            v += 1;
        }
        let x = match v.checked_mul(rate.t).and_then(|tv| tv.checked_add(u)) {
            Some(x) => x,
            None => continue,
        };
        let y = x / rate.s;
        let negative = bernoulli_ratio(&mut bits, 1, 2);
        if negative && y == 0 {
            continue;
        }
        let Ok(y) = i64::try_from(y) else {
            continue;
        };
        return if negative { -y } else { y };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_exact_ratios() {
        let r = LaplaceRate::new(2.0, 1.0).unwrap();
        assert_eq!((r.s, r.t), (1, 2));
        let r = LaplaceRate::new(0.75, 0.25).unwrap(); // g/b = 1/3
        assert_eq!((r.s, r.t), (1, 3));
        let r = LaplaceRate::new(1.0, 0.1).unwrap();
        assert_eq!(r.s as f64 / r.t as f64, 0.1);
        for (b, g) in [
            (0.0, 1.0),
            (1.0, 0.0),
            (f64::NAN, 1.0),
            (1.0, f64::INFINITY),
            (1e10, 1.0),
            (1.0, 1e30),
        ] {
            assert_eq!(LaplaceRate::new(b, g), Err(Error::InvalidArgument), "{b} {g}");
        }
    }
}
