//! The record-sampling coin of Algorithm 3: a Bernoulli trial whose probability is a double, taken exactly
//! on the bits of that double (no rounding of a uniform). The noise of the private frequent set comes from
//! [`crate::exact::discrete`].

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
}
