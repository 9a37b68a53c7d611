//! Exact discrete samplers for the generalization mechanism: a Bernoulli trial whose probability is a
//! double, taken exactly (no rounding of a uniform), and the discrete Laplace distribution of Canonne,
//! Kamath and Steinke (*The Discrete Gaussian for Differential Privacy*, NeurIPS 2020, Algorithms 1–2),
//! which needs only integer comparisons.

use rand_core::Rng;

/// True with probability exactly `p` (the real number the double denotes), for p in [0, 1]; false for
/// p ≤ 0 or NaN, true for p ≥ 1.
///
/// A double p in (0, 1) is m · 2^{−q} with m < 2^53 an integer and 53 ≤ q ≤ 1074. With U uniform on
/// [0, 1), U < p exactly when the first q bits of U, read as an integer V, satisfy V < m: the q − 53 high
/// bits of V must all be zero and the low 53 bits below m. The high bits are drawn 64 at a time and the
/// answer is known at the first non-zero word, so about one or two words are drawn on average, whatever p
/// is. There is no floating-point comparison anywhere.
pub fn bernoulli<R: Rng + ?Sized>(rng: &mut R, p: f64) -> bool {
    if p.is_nan() || p <= 0.0 {
        return false;
    }
    if p >= 1.0 {
        return true;
    }
    let bits = p.to_bits();
    let exponent = (bits >> 52) as u32; // 0 for subnormals; p < 1 so the sign bit is 0 and exponent ≤ 1022
    let fraction = bits & ((1u64 << 52) - 1);
    let (m, q) = if exponent == 0 {
        (fraction, 1074u32)
    } else {
        (fraction | (1u64 << 52), 1075 - exponent)
    };
    // q − 53 leading bits of U must be zero.
    let mut zeros = q - 53;
    while zeros >= 64 {
        if rng.next_u64() != 0 {
            return false;
        }
        zeros -= 64;
    }
    if zeros > 0 && rng.next_u64() >> (64 - zeros) != 0 {
        return false;
    }
    (rng.next_u64() >> 11) < m
}

/// Uniform integer in [0, bound) without modulo bias (Lemire's multiply-and-reject), for u64 bounds on
/// every target. Returns 0 for bound ≤ 1.
pub(crate) fn uniform_u64<R: Rng + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    if bound <= 1 {
        return 0;
    }
    let threshold = bound.wrapping_neg() % bound;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(bound);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// Bernoulli(exp(−n/d)) for integers 0 ≤ n ≤ d, d ≥ 1 (Canonne–Kamath–Steinke Algorithm 1 with γ = n/d ≤ 1):
/// draw A_K ~ Bernoulli(γ/K) for K = 1, 2, … until one fails and return whether that K is odd. Each
/// Bernoulli(γ/K) is the conjunction of Bernoulli(n/d) and Bernoulli(1/K), both exact integer comparisons.
/// The loop runs e^γ ≤ e times on average.
fn bernoulli_exp_ratio<R: Rng + ?Sized>(rng: &mut R, n: u64, d: u64) -> bool {
    let mut k: u64 = 1;
    loop {
        let a = uniform_u64(rng, d) < n && uniform_u64(rng, k) == 0;
        if !a {
            return k % 2 == 1;
        }
        k = k.saturating_add(1);
    }
}

/// Discrete Laplace with integer scale s ≥ 1: P(Z = z) = (1 − α)/(1 + α) · α^{|z|} with α = e^{−1/s}
/// (Canonne–Kamath–Steinke Algorithm 2 with t = s, s_CKS = 1). Exact: every decision is an integer
/// comparison of uniform draws. O(1) draws on average. Its tail is P(Z ≥ z) = α^z / (1 + α) for z ≥ 1.
pub fn discrete_laplace<R: Rng + ?Sized>(rng: &mut R, scale: u64) -> i64 {
    let s = scale.max(1);
    loop {
        let u = uniform_u64(rng, s);
        if !bernoulli_exp_ratio(rng, u, s) {
            continue;
        }
        let mut v: u64 = 0;
        while bernoulli_exp_ratio(rng, 1, 1) {
            v = v.saturating_add(1);
        }
        // X = U + s·V is geometric: P(X = x) ∝ e^{−x/s}. It fits in i64 except with probability below
        // e^{−2^62/s} (s ≤ 2^32); saturating keeps the function total without a panic.
        let x = u.saturating_add(s.saturating_mul(v)).min(i64::MAX as u64) as i64;
        let negative = rng.next_u32() & 1 == 1;
        if negative && x == 0 {
            continue;
        }
        return if negative { -x } else { x };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replays a fixed list of words, then zeros.
    struct Words<'a>(&'a [u64], usize);
    impl rand_core::TryRng for Words<'_> {
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
    fn bernoulli_compares_bits_exactly() {
        // p = 1/2 = 2^52 · 2^{−53}: true iff the top 53 bits of the word are below 2^52, i.e. the top bit is 0.
        assert!(bernoulli(&mut Words(&[0x7FFF_FFFF_FFFF_FFFF], 0), 0.5));
        assert!(!bernoulli(&mut Words(&[0x8000_0000_0000_0000], 0), 0.5));
        // p = 3/4: U = 0.1011… < 0.11 ; U = 0.11 exactly is not below p.
        assert!(bernoulli(&mut Words(&[0xB000_0000_0000_0000], 0), 0.75));
        assert!(!bernoulli(&mut Words(&[0xC000_0000_0000_0000], 0), 0.75));
        // p = 2^{−70}: 17 leading zero bits first, then the mantissa 2^52 against the next 53 bits.
        let p = 2f64.powi(-70);
        assert!(!bernoulli(&mut Words(&[1 << 47], 0), p));
        assert!(!bernoulli(&mut Words(&[0, 1 << 59], 0), p));
        assert!(bernoulli(&mut Words(&[0, 1 << 58, 0x7FFF_FFFF_FFFF_FFFF], 0), p));
        assert!(!bernoulli(&mut Words(&[0, 1 << 58, 0x8000_0000_0000_0000], 0), p));
        // the smallest subnormal: 1020 zero bits, then the last 53 bits must be 0.
        let tiny = f64::from_bits(1);
        assert!(bernoulli(&mut Words(&[], 0), tiny));
        assert!(!bernoulli(
            &mut Words(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 << 11], 0),
            tiny
        ));
        assert!(!bernoulli(&mut Words(&[], 0), 0.0));
        assert!(!bernoulli(&mut Words(&[], 0), f64::NAN));
        assert!(bernoulli(&mut Words(&[u64::MAX], 0), 1.0));
    }

    #[test]
    fn uniform_u64_and_exp_ratio_edges() {
        let mut w = Words(&[u64::MAX, u64::MAX], 0);
        assert_eq!(uniform_u64(&mut w, 1), 0);
        assert_eq!(uniform_u64(&mut w, 10), 9);
        // exp(−0) = 1: A_1 ~ Bernoulli(0) fails at once, K = 1 is odd.
        assert!(bernoulli_exp_ratio(&mut Words(&[u64::MAX; 4], 0), 0, 5));
    }
}
