//! A 256-bit unsigned integer with exactly the operations the exact samplers need. Every operation is
//! total: shifts and products report overflow instead of wrapping, so no caller can silently lose bits.

use core::cmp::Ordering;

/// An unsigned integer below 2²⁵⁶, four little-endian 64-bit limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct U256(pub [u64; 4]);

impl U256 {
    /// Zero.
    pub const ZERO: U256 = U256([0; 4]);

    /// The value of a `u128`.
    pub const fn from_u128(x: u128) -> U256 {
        U256([x as u64, (x >> 64) as u64, 0, 0])
    }

    /// The value if it fits in a `u128`.
    pub fn to_u128(self) -> Option<u128> {
        if self.0[2] == 0 && self.0[3] == 0 {
            Some(u128::from(self.0[0]) | (u128::from(self.0[1]) << 64))
        } else {
            None
        }
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The number of significant bits (0 for zero).
    pub fn bit_len(&self) -> u32 {
        for i in (0..4).rev() {
            if self.0[i] != 0 {
                return 64 * i as u32 + (64 - self.0[i].leading_zeros());
            }
        }
        0
    }

    /// Bit `i` (false beyond 255).
    #[inline]
    pub fn bit(&self, i: u32) -> bool {
        i < 256 && (self.0[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    /// self · m for a 64-bit factor, or None when the product needs more than 256 bits.
    pub fn checked_mul_u64(self, m: u64) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut carry = 0u128;
        for (o, &limb) in out.iter_mut().zip(&self.0) {
            let p = u128::from(limb) * u128::from(m) + carry;
            *o = p as u64;
            carry = p >> 64;
        }
        (carry == 0).then_some(U256(out))
    }

    /// self · 2^s, or None when a set bit would be shifted out.
    pub fn checked_shl(self, s: u32) -> Option<U256> {
        if self.is_zero() {
            return Some(self);
        }
        if self.bit_len() + s > 256 {
            return None;
        }
        Some(self.shl_unchecked(s))
    }

    fn shl_unchecked(self, s: u32) -> U256 {
        let (words, bits) = ((s / 64) as usize, s % 64);
        let mut out = [0u64; 4];
        for i in (words..4).rev() {
            let src = i - words;
            let mut v = self.0[src] << bits;
            if bits > 0 && src > 0 {
                v |= self.0[src - 1] >> (64 - bits);
            }
            out[i] = v;
        }
        U256(out)
    }

    /// ⌊self / 2^s⌋ (zero for s ≥ 256).
    pub fn shr_floor(self, s: u32) -> U256 {
        if s >= 256 {
            return U256::ZERO;
        }
        let (words, bits) = ((s / 64) as usize, s % 64);
        let mut out = [0u64; 4];
        for (i, o) in out.iter_mut().enumerate().take(4 - words) {
            let src = i + words;
            let mut v = self.0[src] >> bits;
            if bits > 0 && src + 1 < 4 {
                v |= self.0[src + 1] << (64 - bits);
            }
            *o = v;
        }
        U256(out)
    }

    /// self mod 2^s.
    pub fn low_bits(self, s: u32) -> U256 {
        if s >= 256 {
            return self;
        }
        let mut out = self.0;
        let (words, bits) = ((s / 64) as usize, s % 64);
        for (i, o) in out.iter_mut().enumerate() {
            if i > words || (i == words && bits == 0) {
                *o = 0;
            } else if i == words {
                *o &= (1u64 << bits) - 1;
            }
        }
        U256(out)
    }

    /// self + other, or None on overflow.
    pub fn checked_add(self, other: U256) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut carry = false;
        for (i, o) in out.iter_mut().enumerate() {
            let (s1, c1) = self.0[i].overflowing_add(other.0[i]);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *o = s2;
            carry = c1 || c2;
        }
        (!carry).then_some(U256(out))
    }

    /// self − other, or None when other > self.
    pub fn checked_sub(self, other: U256) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for (i, o) in out.iter_mut().enumerate() {
            let (d1, b1) = self.0[i].overflowing_sub(other.0[i]);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *o = d2;
            borrow = b1 || b2;
        }
        (!borrow).then_some(U256(out))
    }

    /// (⌊self / d⌋, self mod d) for d > 0 (None for d = 0).
    pub fn div_rem_u64(self, d: u64) -> Option<(U256, u64)> {
        if d == 0 {
            return None;
        }
        let mut q = [0u64; 4];
        let mut rem = 0u128;
        for i in (0..4).rev() {
            let cur = (rem << 64) | u128::from(self.0[i]);
            q[i] = (cur / u128::from(d)) as u64;
            rem = cur % u128::from(d);
        }
        Some((U256(q), rem as u64))
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for U256 {
    fn cmp(&self, other: &Self) -> Ordering {
        for i in (0..4).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => continue,
                o => return o,
            }
        }
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(hi: u128, lo: u128) -> U256 {
        U256([lo as u64, (lo >> 64) as u64, hi as u64, (hi >> 64) as u64])
    }

    #[test]
    fn shifts_round_trip_and_report_overflow() {
        let x = U256::from_u128(0xdead_beef_0123_4567_89ab_cdef_f00d_cafe);
        for s in [0, 1, 13, 63, 64, 65, 127, 128] {
            let y = x.checked_shl(s).unwrap();
            assert_eq!(y.shr_floor(s), x, "s={s}");
            assert_eq!(y.bit_len(), x.bit_len() + s);
            assert_eq!(y.low_bits(s), U256::ZERO);
        }
        assert!(x.checked_shl(256 - x.bit_len() + 1).is_none());
        assert_eq!(U256::ZERO.checked_shl(1000), Some(U256::ZERO));
        assert_eq!(x.shr_floor(300), U256::ZERO);
        assert_eq!(x.low_bits(8).to_u128(), Some(0xfe));
        assert_eq!(x.low_bits(64).to_u128(), Some(0x89ab_cdef_f00d_cafe));
    }

    #[test]
    fn arithmetic_matches_u128_where_it_fits() {
        let vals = [0u128, 1, 3, u64::MAX as u128, (1 << 100) + 12345, u128::MAX >> 3];
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (U256::from_u128(a), U256::from_u128(b));
                if let Some(s) = a.checked_add(b) {
                    assert_eq!(x.checked_add(y).unwrap().to_u128(), Some(s));
                }
                assert_eq!(x.checked_sub(y).and_then(|d| d.to_u128()), a.checked_sub(b));
                assert_eq!(x.cmp(&y), a.cmp(&b));
            }
            for d in [1u64, 3, 10, u64::MAX] {
                let (q, r) = U256::from_u128(a).div_rem_u64(d).unwrap();
                assert_eq!(q.to_u128(), Some(a / u128::from(d)));
                assert_eq!(u128::from(r), a % u128::from(d));
            }
        }
        let m = big(1 << 60, 7).checked_mul_u64(1 << 3).unwrap();
        assert_eq!(m, big(1 << 63, 56));
        assert!(big(1 << 127, 0).checked_mul_u64(2).is_none());
        assert!(big(u128::MAX, 0).checked_add(big(1 << 127, 0)).is_none());
        assert_eq!(U256::from_u128(5).div_rem_u64(0), None);
        let (q, r) = big(1, 0).div_rem_u64(3).unwrap(); // 2^128 = 3 · q + r
        assert_eq!(r, 1);
        assert_eq!(
            q.checked_mul_u64(3).unwrap().checked_add(U256::from_u128(1)).unwrap(),
            big(1, 0)
        );
    }
}
