//! Samplers for the continuous distributions the mechanisms need, from any `rand_core::Rng`.
//!
//! Floating-point caveat: these are the textbook inverse-CDF constructions on a 53-bit uniform. They are
//! exact to the resolution of `f64` but do not defend against floating-point attacks on the Laplace
//! mechanism's low-order bits (Mironov, CCS 2012); the selection mechanisms release only an index, which
//! limits but does not formally remove that channel. See docs/guarantees.md, "Guarantees and their limits".

use rand_core::Rng;

const TWO_POW_MINUS_53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// Uniform on the open interval (0, 1): k · 2⁻⁵³ for k uniform on {1, …, 2⁵³ − 1}, from 53 random bits
/// (k = 0 is redrawn, which happens with probability 2⁻⁵³).
#[inline]
pub fn uniform_open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let k = rng.next_u64() >> 11;
        if k != 0 {
            return k as f64 * TWO_POW_MINUS_53;
        }
    }
}

/// Standard exponential (rate 1): −ln U. Always finite and strictly positive.
#[inline]
pub fn exponential<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    -libm::log(uniform_open01(rng))
}

/// Standard Gumbel (location 0, scale 1): −ln(−ln U).
#[inline]
pub fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    -libm::log(exponential(rng))
}

/// Standard Laplace (location 0, scale 1, density ½e^{−|x|}): an exponential with a random sign.
#[inline]
pub fn laplace<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let e = exponential(rng);
    if rng.next_u32() & 1 == 0 {
        e
    } else {
        -e
    }
}

/// Uniform integer in [0, bound) without modulo bias (Lemire's multiply-and-reject). `bound` must be > 0;
/// 0 is returned for `bound` = 0 so the function cannot panic.
#[inline]
pub fn uniform_index<R: Rng + ?Sized>(rng: &mut R, bound: usize) -> usize {
    if bound <= 1 {
        return 0;
    }
    let b = bound as u64;
    let threshold = b.wrapping_neg() % b;
    loop {
        let m = u128::from(rng.next_u64()) * u128::from(b);
        if (m as u64) >= threshold {
            return (m >> 64) as usize;
        }
    }
}

/// True with probability e^{x} for x ≤ 0 (and always for x ≥ 0): compares an exponential draw with −x,
/// which avoids computing e^{x} and is exact at x = −∞ (never true).
#[inline]
pub fn bernoulli_exp<R: Rng + ?Sized>(rng: &mut R, x: f64) -> bool {
    exponential(rng) > -x
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    struct Fixed(u64);
    impl rand_core::TryRng for Fixed {
        type Error = core::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok(self.0 as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            Ok(self.0)
        }
        fn try_fill_bytes(&mut self, d: &mut [u8]) -> Result<(), Self::Error> {
            d.fill(0);
            Ok(())
        }
    }

    #[test]
    fn uniform_stays_strictly_inside_the_unit_interval() {
        let top = uniform_open01(&mut Fixed(u64::MAX));
        assert!(top < 1.0 && top > 0.999_999_999);
        let bottom = uniform_open01(&mut Fixed(1 << 11));
        assert_eq!(bottom, TWO_POW_MINUS_53);
        assert!(exponential(&mut Fixed(u64::MAX)) > 0.0);
        assert!(gumbel(&mut Fixed(u64::MAX)).is_finite());
        assert!(gumbel(&mut Fixed(1 << 11)).is_finite());
    }

    #[test]
    fn uniform_index_covers_the_range() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let i = uniform_index(&mut rng, 7);
            seen[i] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(uniform_index(&mut rng, 0), 0);
        assert_eq!(uniform_index(&mut rng, 1), 0);
    }
}
