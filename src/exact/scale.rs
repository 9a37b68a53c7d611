//! The exact rate of the exponential-type selectors: γ(G) = ε · G / (2N) for an integer score gap G in grid
//! units and an integer sensitivity N in the same units, as an exact rational, and the coin
//! Bernoulli(exp(−γ(G))) that the exponential mechanism (by rejection) and permute-and-flip flip.
//!
//! With ε = m · 2^e (m odd) and N = b · 2^z (b odd), γ = (m G / b) · 2^(e − 1 − z): a 256-bit numerator, a
//! 64-bit odd denominator and a binary exponent. [`Scale::gamma`] splits it into ⌊γ⌋ and the fraction in
//! the [`Frac`] form the Bernoulli samplers read digit by digit.
//!
//! **Cap.** γ is capped at [`GAMMA_CAP`] = 2¹⁰. That is the mechanism on the scores max(s_r, s* − 2¹¹Δ/ε),
//! which have the same sensitivity (see [`super::grid`]), so the guarantee is unchanged. It bounds the
//! number of e^{−1} coins of one candidate, lets stages that compute scores lazily stop once every
//! remaining candidate is beyond it (local PrivPareto's sweep), and changes a weight only where it is
//! below e^{−1024} ≈ 10⁻⁴⁴⁵ — not representable as a double at all.

use super::bernoulli::{bernoulli_exp_minus, bernoulli_exp_minus_one, Frac, Gamma};
use super::bits::Bits;
use super::grid::decompose;
use super::wide::U256;
use crate::Error;
use rand_core::Rng;

/// The largest γ a coin is flipped for (see the module documentation).
pub const GAMMA_CAP: u64 = 1 << 10;

/// The least distance T such that a score gap of T units of sensitivity has γ = ε T / 2 beyond
/// [`GAMMA_CAP`] at privacy parameter ε, capped at [`crate::sensitivity::MAX_SATURATION`]: beyond it the
/// exact selectors treat every gap alike. (Rounded up with a margin of one, so it is never too small.)
pub fn distance_beyond_cap(epsilon: f64) -> usize {
    let t = 2.0 * GAMMA_CAP as f64 / epsilon;
    let cap = crate::sensitivity::MAX_SATURATION;
    if t.is_finite() && t < cap as f64 {
        t as usize + 2
    } else {
        cap
    }
}

/// ε / (2N) as an exact rational, ready to turn gaps into γ.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    m: u64,
    b: u64,
    exponent: i32,
    /// `reaches[i]`: the smallest gap with γ ≥ 2^i (u128::MAX when no representable gap reaches it), for
    /// 2^i up to [`GAMMA_CAP`].
    reaches: [u128; LEVELS],
}

/// Thresholds γ ≥ 1, 2, 4, …, [`GAMMA_CAP`].
const LEVELS: usize = GAMMA_CAP.trailing_zeros() as usize + 1;

impl Scale {
    /// The scale for privacy parameter ε and an integer sensitivity of `units` grid units.
    ///
    /// Errors: ε not finite and > 0 → [`Error::InvalidEpsilon`]; `units` = 0 → [`Error::InvalidSensitivity`].
    pub fn new(epsilon: f64, units: u64) -> Result<Scale, Error> {
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(Error::InvalidEpsilon);
        }
        if units == 0 {
            return Err(Error::InvalidSensitivity);
        }
        let (m, e) = decompose(epsilon);
        let (m, e) = ((m as u64) >> m.trailing_zeros(), e + m.trailing_zeros() as i32);
        let z = units.trailing_zeros();
        let b = units >> z;
        let exponent = e - 1 - z as i32;
        let mut s = Scale {
            m,
            b,
            exponent,
            reaches: [u128::MAX; LEVELS],
        };
        for i in 0..LEVELS {
            s.reaches[i] = s.smallest_gap_reaching(1 << i);
        }
        Ok(s)
    }

    /// γ per grid unit, ε / (2N), rounded to a double: for estimates that only guide a search, never for
    /// a probability.
    pub fn rate_estimate(&self) -> f64 {
        libm::ldexp(self.m as f64 / self.b as f64, self.exponent)
    }

    /// The least gap G with γ(G) ≥ k (γ uncapped), i.e. m G 2^exponent ≥ k b; `u128::MAX` when no gap
    /// below 2¹²⁸ reaches it.
    pub fn smallest_gap_reaching(&self, k: u64) -> u128 {
        let m = U256::from_u128(u128::from(self.m));
        let b = U256::from_u128(u128::from(self.b) * u128::from(k));
        // G ≥ b / (m 2^exponent) = (b 2^-exponent) / m, rounded up.
        let (num, den) = if self.exponent >= 0 {
            match m.checked_shl(self.exponent as u32) {
                Some(den) if den >= b => return 1,
                Some(den) => (b, den.to_u128().unwrap_or(u128::MAX)),
                None => return 1,
            }
        } else {
            match b.checked_shl(self.exponent.unsigned_abs()) {
                Some(num) => (num, u128::from(self.m)),
                None => return u128::MAX,
            }
        };
        // den < k b < 2^75 in the first branch and < 2^53 in the second: divide through U256 by parts.
        if den > u128::from(u64::MAX) {
            // Only in the first branch, where num = k b < 2^75 and den > 2^64: the quotient is small.
            let (n, d) = (num.to_u128().unwrap_or(u128::MAX), den);
            return n.div_ceil(d).max(1);
        }
        let den = den as u64;
        match num.div_rem_u64(den) {
            Some((q, r)) => q
                .checked_add(U256::from_u128(u128::from(r != 0)))
                .and_then(|x| x.to_u128())
                .unwrap_or(u128::MAX),
            None => u128::MAX,
        }
    }

    /// γ(G) = ε G / (2N), exactly, capped at [`GAMMA_CAP`].
    pub fn gamma(&self, gap: u128) -> Gamma {
        if gap == 0 {
            return Gamma::ZERO;
        }
        let capped = Gamma::integer(GAMMA_CAP);
        // m < 2^53 and G < 2^128: the product has at most 181 bits.
        let a = match U256::from_u128(gap).checked_mul_u64(self.m) {
            Some(a) => a,
            None => return capped,
        };
        let whole_and_rest = |x: U256| x.div_rem_u64(self.b);
        if self.exponent >= 0 {
            let x = match a.checked_shl(self.exponent as u32) {
                Some(x) => x,
                None => return capped,
            };
            let Some((q, rho)) = whole_and_rest(x) else {
                return capped;
            };
            return match q.to_u128() {
                Some(q) if q < u128::from(GAMMA_CAP) => Gamma {
                    whole: q as u64,
                    frac: if rho == 0 {
                        Frac::ZERO
                    } else {
                        Frac {
                            t: U256::ZERO,
                            rho,
                            b: self.b,
                            f: 0,
                        }
                    },
                },
                _ => capped,
            };
        }
        let f = self.exponent.unsigned_abs();
        // a = hi · 2^f + lo; ⌊γ⌋ = ⌊hi / b⌋ and γ − ⌊γ⌋ = ((hi mod b) · 2^f + lo) / (b 2^f).
        let (hi, lo) = (a.shr_floor(f), a.low_bits(f));
        let Some((q, r)) = whole_and_rest(hi) else {
            return capped;
        };
        let whole = match q.to_u128() {
            Some(q) if q < u128::from(GAMMA_CAP) => q as u64,
            _ => return capped,
        };
        // r > 0 only when hi > 0, that is a ≥ 2^f with f < 181, so r · 2^f < 2^245 and the sum fits.
        let x = U256::from_u128(u128::from(r))
            .checked_shl(f)
            .and_then(|x| x.checked_add(lo));
        let Some((t, rho)) = x.and_then(whole_and_rest) else {
            return capped;
        };
        let frac = if t.is_zero() && rho == 0 {
            Frac::ZERO
        } else {
            Frac { t, rho, b: self.b, f }
        };
        Gamma { whole, frac }
    }

    /// True with probability exactly exp(−γ(G)) (γ capped at [`GAMMA_CAP`]).
    ///
    /// A gap whose γ is known to be at least 2^i (from thresholds computed once) first flips 2^i of its ⌊γ⌋
    /// independent e^{−1} coins; each fails with probability 0.63, so for a far candidate the rational γ is
    /// almost never computed. The result has the same distribution.
    #[inline]
    pub fn keep<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>, gap: u128) -> bool {
        if gap == 0 {
            return true;
        }
        // Far candidates are the common case: look from the highest level down.
        let known = self.reaches.iter().rposition(|&g| gap >= g).map_or(0, |i| i + 1);
        if known > 0 {
            let coins = 1u64 << (known - 1);
            for _ in 0..coins {
                if !bernoulli_exp_minus_one(bits) {
                    return false;
                }
            }
            let mut g = self.gamma(gap);
            g.whole = g.whole.saturating_sub(coins);
            return bernoulli_exp_minus(bits, &g);
        }
        bernoulli_exp_minus(bits, &self.gamma(gap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// γ as a double, from its parts (for comparisons only).
    fn approx(g: &Gamma) -> f64 {
        let mut t = 0.0;
        for i in (0..g.frac.t.bit_len()).rev() {
            t = 2.0 * t + if g.frac.t.bit(i) { 1.0 } else { 0.0 };
        }
        g.whole as f64 + (t + g.frac.rho as f64 / g.frac.b as f64) / 2f64.powi(g.frac.f as i32)
    }

    #[test]
    fn gamma_is_epsilon_gap_over_twice_the_sensitivity() {
        for &(eps, units, gap) in &[
            (1.0, 1u64 << 62, 5u128 << 62),
            (1.0, 1 << 62, 3 << 60),
            (0.5, 3, 7),
            (0.1, 0x0019_9999_9999_999a << 10, 12345 << 70),
            (1e-300, 1 << 62, 1 << 100),
            (3.0, 1, 1),
            (1e300, 1, 1),
        ] {
            let s = Scale::new(eps, units).unwrap();
            let g = s.gamma(gap);
            let want = (eps / 2.0) * (gap as f64 / units as f64);
            let want = want.min(GAMMA_CAP as f64);
            let got = approx(&g);
            assert!(
                (got - want).abs() <= 1e-12 * want.max(1.0),
                "{eps} {units} {gap}: {got} vs {want}"
            );
            assert!(g.frac.rho < g.frac.b);
            assert!(g.frac.t.bit_len() <= g.frac.f);
        }
    }

    #[test]
    fn integer_gammas_have_no_fraction() {
        let s = Scale::new(2.0, 1).unwrap(); // γ = G
        assert_eq!(s.gamma(7), Gamma::integer(7));
        assert_eq!(s.gamma(1 << 40), Gamma::integer(GAMMA_CAP));
        assert_eq!(s.reaches[0], 1);
        assert_eq!(s.reaches[3], 8);
        let s = Scale::new(1.0, 1 << 62).unwrap(); // γ = G / 2^63
        assert_eq!(s.reaches[0], 1 << 63);
        assert_eq!(s.reaches[1], 1 << 64);
        assert_eq!(s.gamma(1 << 63), Gamma::integer(1));
        assert_eq!(s.gamma((1 << 63) - 1).whole, 0);
        let s = Scale::new(0.5, 3).unwrap(); // γ = G / 12
        assert_eq!(s.reaches[0], 12);
        assert_eq!(s.reaches[10], 12 * 1024);
        // Every threshold is the least gap reaching its level.
        for (eps, units) in [(0.3, 7u64), (1e-3, 1 << 62), (7.5, 0x000f_ffff_ffff_fff1)] {
            let s = Scale::new(eps, units).unwrap();
            for (i, &g) in s.reaches.iter().enumerate() {
                if g == u128::MAX {
                    continue;
                }
                assert!(s.gamma(g).whole >= 1 << i, "{eps} {units} level {i}");
                assert!(g == 1 || s.gamma(g - 1).whole < 1 << i, "{eps} {units} level {i}");
            }
        }
    }
}
