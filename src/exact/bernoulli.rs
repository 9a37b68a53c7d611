//! Exact Bernoulli samplers: Bernoulli(p) for a rational p, and Bernoulli(exp(−γ)) for a rational γ ≥ 0
//! (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", §5.1, Algorithms 1
//! and 2). No floating point is involved: each probability is exactly the stated rational or exp(−γ).
//!
//! **Bernoulli(p), p rational.** A uniform U ∈ [0, 1) is compared with p one binary digit at a time: the
//! digits of U are fair random bits, the digits of p come from long division, and the first digit where
//! they differ decides U < p. P(U < p) = p exactly; two bits are used on average, whatever the size of p's
//! denominator.
//!
//! **Bernoulli(exp(−γ)), γ ∈ [0, 1]** (CKS20 Algorithm 1): K ← 1; while Bernoulli(γ/K) succeeds, K ← K + 1;
//! return whether K is odd. P(K odd) = Σ_k odd γ^{k−1}/(k−1)! (1 − γ/k) = e^{−γ}. Bernoulli(γ/K) is drawn as
//! Bernoulli(1/K) ∧ Bernoulli(γ), two independent exact coins.
//!
//! **γ > 1** (Algorithm 2): ⌊γ⌋ independent Bernoulli(e^{−1}) coins, then Bernoulli(exp(−(γ − ⌊γ⌋))); all
//! must succeed. Each e^{−1} coin fails with probability 1 − e^{−1} ≈ 0.63, so the expected work is O(1)
//! for any γ.
//!
//! Termination: every loop here ends at the first failing coin and each iteration fails with probability
//! at least 1/2 (digit comparison) or 1 − 1/K (Algorithm 1), so the number of iterations has a geometric
//! (or faster) tail; no iteration count is capped, because a cap would change the distribution.

use super::bits::Bits;
use super::wide::U256;
use rand_core::Rng;

/// A rational in [0, 1): (t + ρ/b) / 2^f with t < 2^f (t = 0 when f = 0), ρ < b. Every fraction the
/// samplers meet has this shape: a dyadic part from the binary exponents of ε and the scores, and an
/// odd-denominator part from the sensitivity's mantissa.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frac {
    /// The integer numerator of the dyadic part, below 2^f.
    pub t: U256,
    /// The numerator of the odd-denominator part, below `b`.
    pub rho: u64,
    /// The odd-denominator part's denominator (≥ 1).
    pub b: u64,
    /// The binary exponent of the common denominator 2^f.
    pub f: u32,
}

impl Frac {
    /// The fraction 0.
    pub const ZERO: Frac = Frac {
        t: U256::ZERO,
        rho: 0,
        b: 1,
        f: 0,
    };

    /// True for the fraction 0.
    pub fn is_zero(&self) -> bool {
        self.t.is_zero() && self.rho == 0
    }
}

/// γ ≥ 0 as its integer part and its fractional part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gamma {
    /// ⌊γ⌋.
    pub whole: u64,
    /// γ − ⌊γ⌋.
    pub frac: Frac,
}

impl Gamma {
    /// γ = 0.
    pub const ZERO: Gamma = Gamma {
        whole: 0,
        frac: Frac::ZERO,
    };

    /// The integer γ = `whole`.
    pub fn integer(whole: u64) -> Gamma {
        Gamma {
            whole,
            frac: Frac::ZERO,
        }
    }
}

/// True with probability exactly `num / den` (true when num ≥ den, false when num = 0 or den = 0 with
/// num = 0). Two random bits on average.
pub fn bernoulli_ratio<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, num: u64, den: u64) -> bool {
    if num >= den {
        return true;
    }
    digits_below(bits, num, den)
}

/// U < ρ/b for U uniform in [0, 1), by comparing binary digits; ρ < b.
#[inline]
fn digits_below<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, mut rho: u64, b: u64) -> bool {
    // Digits of ρ/b by long division: the next digit is ⌊2ρ/b⌋ and ρ becomes 2ρ mod b. Once ρ = 0 every
    // further digit of p is 0, and U (whose digits so far equal p's) can no longer be below p. With ρ < b,
    // 2ρ − b < ρ, so the subtraction below never wraps and 2ρ needs at most one bit more than b.
    if b <= 1 << 63 {
        while rho != 0 {
            let twice = rho << 1;
            let digit = twice >= b;
            rho = if digit { twice - b } else { twice };
            if bits.bit() != digit {
                return digit; // u = 0 < 1 = digit: U < p; u = 1 > 0 = digit: U > p
            }
        }
        return false;
    }
    while rho != 0 {
        let twice = u128::from(rho) << 1;
        let digit = twice >= u128::from(b);
        rho = if digit {
            (twice - u128::from(b)) as u64
        } else {
            twice as u64
        };
        if bits.bit() != digit {
            return digit;
        }
    }
    false
}

/// True with probability exactly the fraction `p`.
pub fn bernoulli_frac<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, p: &Frac) -> bool {
    if p.is_zero() {
        return false;
    }
    // The first f digits of p are those of t (t < 2^f); then come the digits of ρ/b.
    for i in (0..p.f).rev() {
        let digit = p.t.bit(i);
        if bits.bit() != digit {
            return digit;
        }
    }
    digits_below(bits, p.rho, p.b)
}

/// True with probability exactly e^{−1} (CKS20 Algorithm 1 with γ = 1).
pub fn bernoulli_exp_minus_one<R: Rng + ?Sized>(bits: &mut Bits<'_, R>) -> bool {
    let mut k: u64 = 1;
    // Bernoulli(γ/K) with γ = 1 is Bernoulli(1/K); K = 1 always succeeds.
    while bernoulli_ratio(bits, 1, k) {
        k = k.saturating_add(1);
    }
    k % 2 == 1
}

/// True with probability exactly exp(−x) for a fraction x ∈ [0, 1) (CKS20 Algorithm 1).
pub fn bernoulli_exp_minus_frac<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, x: &Frac) -> bool {
    if x.is_zero() {
        return true;
    }
    let mut k: u64 = 1;
    while bernoulli_ratio(bits, 1, k) && bernoulli_frac(bits, x) {
        k = k.saturating_add(1);
    }
    k % 2 == 1
}

/// True with probability exactly e^{−1} / (3/8) = 8/(3e) ≈ 0.981: the correction coin of a proposal that
/// used the rational 3/8 in place of e^{−1} (the exponential mechanism by levels,
/// [`crate::select`](mod@crate::select)).
///
/// **Why it is exact.** 3/8 = 1 − 1 + 1/2! − 1/3! + 1/4! is a partial sum of e^{−1} = Σ_k (−1)^k / k!, so
/// e^{−1} = 3/8 − Σ_{i≥0} (−1)^i / (5 + i)! and
///
/// 1 − 8/(3e) = Σ_{i≥0} (−1)^i a_i,  a_i = (8/3) / (5 + i)!,  a_0 = 1/45,  a_i / a_{i−1} = 1/(5 + i).
///
/// An alternating sum of decreasing terms a_0 ≤ 1 is the probability that K is odd in: K ← 0; if
/// Bernoulli(a_0) succeeds, K ← 1 and then K ← K + 1 while Bernoulli(a_K / a_{K−1}) succeeds (P(K ≥ j) =
/// a_{j−1}, so P(K odd) = (a_0 − a_1) + (a_2 − a_3) + … ) — the same construction as CKS20 Algorithm 1,
/// with every coin a rational. The coin fails with probability 0.019, after two random bits on average.
pub fn bernoulli_inv_e_over_three_eighths<R: Rng + ?Sized>(bits: &mut Bits<'_, R>) -> bool {
    if !bernoulli_ratio(bits, 1, 45) {
        return true; // K = 0: even
    }
    let mut k: u64 = 1;
    while bernoulli_ratio(bits, 1, 5 + k) {
        k = k.saturating_add(1);
    }
    // K odd: the event of probability 1 − 8/(3e); the coin is its complement.
    k.is_multiple_of(2)
}

/// True with probability exactly exp(−γ) (CKS20 Algorithm 2).
pub fn bernoulli_exp_minus<R: Rng + ?Sized>(bits: &mut Bits<'_, R>, gamma: &Gamma) -> bool {
    for _ in 0..gamma.whole {
        if !bernoulli_exp_minus_one(bits) {
            return false;
        }
    }
    bernoulli_exp_minus_frac(bits, &gamma.frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A generator that replays fixed words, then zeros.
    struct Tape(&'static [u64], usize);
    impl rand_core::TryRng for Tape {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.try_next_u64()? as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            let w = self.0.get(self.1).copied().unwrap_or(0);
            self.1 += 1;
            Ok(w)
        }
        fn try_fill_bytes(&mut self, d: &mut [u8]) -> Result<(), Self::Error> {
            d.fill(0);
            Ok(())
        }
    }

    #[test]
    fn ratio_compares_digits() {
        // p = 1/3 = 0.010101…: U = 0.00… is below, U = 0.1… is above, U = 0.0101 1… is above.
        let mut t = Tape(&[0], 0);
        assert!(bernoulli_ratio(&mut Bits::new(&mut t), 1, 3));
        let mut t = Tape(&[1 << 63], 0);
        assert!(!bernoulli_ratio(&mut Bits::new(&mut t), 1, 3));
        let mut t = Tape(&[0b01011 << 59], 0);
        assert!(!bernoulli_ratio(&mut Bits::new(&mut t), 1, 3));
        let mut t = Tape(&[0b01010 << 59], 0);
        assert!(bernoulli_ratio(&mut Bits::new(&mut t), 1, 3));
        // p = 1/2 = 0.1000…: U = 0.1000… equals p on every digit drawn, and U ≥ p.
        let mut t = Tape(&[1 << 63], 0);
        assert!(!bernoulli_ratio(&mut Bits::new(&mut t), 1, 2));
        let mut t = Tape(&[u64::MAX], 0);
        assert!(bernoulli_ratio(&mut Bits::new(&mut t), 5, 5));
        assert!(!bernoulli_ratio(&mut Bits::new(&mut t), 0, 5));
    }

    #[test]
    fn correction_coin_fails_only_when_k_is_odd() {
        // First bit 1: U ≥ 1/45 = 0.000001…, K = 0, the coin succeeds.
        let mut t = Tape(&[1 << 63], 0);
        assert!(bernoulli_inv_e_over_three_eighths(&mut Bits::new(&mut t)));
        // 000000: U < 1/45 at its first 1 digit; then 1: U > 1/6 = 0.0010…, so K = 1 and the coin fails.
        let mut t = Tape(&[0b000_0001 << 57], 0);
        assert!(!bernoulli_inv_e_over_three_eighths(&mut Bits::new(&mut t)));
        // 000000, then 000 (U < 1/6 at its first 1 digit), then 1 (U > 1/7 = 0.001…): K = 2, success.
        let mut t = Tape(&[0b000_0000_0001 << 53], 0);
        assert!(bernoulli_inv_e_over_three_eighths(&mut Bits::new(&mut t)));
    }

    #[test]
    fn frac_reads_the_dyadic_digits_first() {
        // p = (5 + 1/3) / 8 = 0.101 0101…
        let p = Frac {
            t: U256::from_u128(5),
            rho: 1,
            b: 3,
            f: 3,
        };
        let mut t = Tape(&[0b100 << 61], 0); // 0.100… < 0.101…
        assert!(bernoulli_frac(&mut Bits::new(&mut t), &p));
        let mut t = Tape(&[0b110 << 61], 0); // 0.110… > p
        assert!(!bernoulli_frac(&mut Bits::new(&mut t), &p));
        // U = 0.101 0101 1…: equal to p on seven digits, then 1 > 0.
        let mut t = Tape(&[0b1010_1011 << 56], 0);
        assert!(!bernoulli_frac(&mut Bits::new(&mut t), &p));
        // U = 0.101 0100…: below p at the seventh digit.
        let mut t = Tape(&[0b101_0100 << 57], 0);
        assert!(bernoulli_frac(&mut Bits::new(&mut t), &p));
        assert!(!bernoulli_frac(&mut Bits::new(&mut Tape(&[0], 0)), &Frac::ZERO));
    }
}
