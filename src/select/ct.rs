//! Constant-time building blocks for the isochronous selectors: comparisons that yield masks, minima and
//! shifts without a branch *or a conditional move* on their operands.
//!
//! Conditional moves run in constant time, but valgrind's memcheck — the checker `make test` runs the
//! isochronous selectors under, with the scores marked undefined — reports them like jumps, and an
//! optimising compiler freely turns a mask-and-xor into a branch or a `cmov`. Every mask therefore goes
//! through [`barrier`], an empty assembly block the compiler cannot see through, so the arithmetic stays
//! arithmetic.

/// `x`, hidden from the optimiser (an empty `asm!` on 64-bit targets, `black_box` elsewhere), so that
/// masks built from it are not turned back into selects.
#[inline(always)]
pub(crate) fn barrier(x: u64) -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64"))]
    {
        let mut x = x;
        // SAFETY: an empty instruction sequence that only claims to read and write one register.
        unsafe { core::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags)) };
        x
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64", target_arch = "riscv64")))]
    {
        core::hint::black_box(x)
    }
}

/// All ones when a < b (unsigned), else 0: the borrow of a − b, stretched.
#[inline(always)]
pub(crate) fn lt(a: u64, b: u64) -> u64 {
    barrier((a.overflowing_sub(b).1 as u64).wrapping_neg())
}

/// All ones when the lowest bit of `bit` is set, else 0.
#[inline(always)]
pub(crate) fn bit(bit: u64) -> u64 {
    barrier((bit & 1).wrapping_neg())
}

/// `a` where `m` is all ones, `b` where it is 0.
#[inline(always)]
pub(crate) fn pick(m: u64, a: u64, b: u64) -> u64 {
    b ^ ((a ^ b) & m)
}

/// min(a, b), unsigned.
#[inline(always)]
pub(crate) fn min(a: u64, b: u64) -> u64 {
    pick(lt(a, b), a, b)
}

/// max(a, b), unsigned.
#[inline(always)]
pub(crate) fn max(a: u64, b: u64) -> u64 {
    pick(lt(a, b), b, a)
}

/// All ones when a == b, else 0.
#[inline(always)]
pub(crate) fn eq(a: u64, b: u64) -> u64 {
    let d = a ^ b;
    // d | −d has its top bit set exactly when d ≠ 0.
    barrier(((d | d.wrapping_neg()) >> 63).wrapping_sub(1))
}

/// m · 2^s as a 128-bit integer, for m < 2⁶⁴ and 1 ≤ s ≤ 127 with m 2^s < 2¹²⁸ (or wrapping past it): both
/// halves computed for s < 64 and for s ≥ 64 and chosen by a mask (a `u128` shift compiles to a `cmov`).
#[inline(always)]
pub(crate) fn shl_wide(m: u64, s: u32) -> u128 {
    let big = bit(u64::from(s >> 6)); // s ≥ 64
    let lo_small = m.wrapping_shl(s); // shifts by s mod 64
    let hi_small = m.wrapping_shr(64u32.wrapping_sub(s)); // s in 1..=63: the bits that leave the low word
    let hi_big = m.wrapping_shl(s.wrapping_sub(64));
    let lo = lo_small & !big;
    let hi = pick(big, hi_big, hi_small);
    u128::from(lo) | u128::from(hi) << 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_minima_and_shifts() {
        let values = [
            0u64,
            1,
            2,
            63,
            64,
            1 << 62,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ];
        for &a in &values {
            for &b in &values {
                assert_eq!(lt(a, b) == u64::MAX, a < b);
                assert_eq!(lt(a, b) == 0, a >= b);
                assert_eq!(min(a, b), a.min(b));
                assert_eq!(max(a, b), a.max(b));
                assert_eq!(eq(a, b) == u64::MAX, a == b);
                assert_eq!(eq(a, b) == 0, a != b);
            }
            assert_eq!(bit(a), if a & 1 == 1 { u64::MAX } else { 0 });
        }
        for m in [1u64, 3, (1 << 52) | 12345, (1 << 53) - 1] {
            for s in 1..=(127 - (64 - m.leading_zeros())) {
                assert_eq!(shl_wide(m, s), u128::from(m) << s, "m = {m}, s = {s}");
            }
        }
        // 2⁵² · 2⁷⁶ = 2¹²⁸ wraps to 0, as the P&F coin of weight 1 needs.
        assert_eq!(shl_wide(1 << 52, 76), 0);
    }
}
