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

/// m · 2^s as a 128-bit integer, for m < 2⁶³ and 0 ≤ s ≤ 127 with m 2^s < 2¹²⁸ (or wrapping past it):
/// both halves computed for s < 64 and for s ≥ 64 and chosen by a mask (a `u128` shift compiles to a
/// `cmov`).
#[inline(always)]
pub(crate) fn shl_wide(m: u64, s: u32) -> u128 {
    let big = bit(u64::from(s >> 6)); // s ≥ 64
    let lo_small = m.wrapping_shl(s); // shifts by s mod 64
    let hi_small = (m >> 1).wrapping_shr(63u32.wrapping_sub(s)); // s ≤ 63: the bits that leave the low word
    let hi_big = m.wrapping_shl(s.wrapping_sub(64));
    let lo = lo_small & !big;
    let hi = pick(big, hi_big, hi_small);
    u128::from(lo) | u128::from(hi) << 64
}

/// A 64-bit mask stretched to 128 bits.
#[inline(always)]
pub(crate) fn wide(m: u64) -> u128 {
    u128::from(m) | u128::from(m) << 64
}

/// All ones when a < b (unsigned 128-bit), else 0.
#[inline(always)]
pub(crate) fn lt_u128(a: u128, b: u128) -> u64 {
    barrier((a.overflowing_sub(b).1 as u64).wrapping_neg())
}

/// All ones when a < b, for |a|, |b| < 2¹²⁶ (so that a − b cannot overflow), else 0.
#[inline(always)]
pub(crate) fn lt_i128(a: i128, b: i128) -> u64 {
    barrier(((a - b) >> 127) as u64)
}

/// `a` where `m` is all ones, `b` where it is 0 (128-bit).
#[inline(always)]
pub(crate) fn pick_u128(m: u64, a: u128, b: u128) -> u128 {
    b ^ ((a ^ b) & wide(m))
}

/// `a` where `m` is all ones, `b` where it is 0 (signed 128-bit).
#[inline(always)]
pub(crate) fn pick_i128(m: u64, a: i128, b: i128) -> i128 {
    pick_u128(m, a as u128, b as u128) as i128
}

/// (⌊x / d⌋, x mod d) for d ≥ 1 when the quotient has at most `bits` bits (x / 2^bits < d): restoring
/// division, one quotient bit per step, each step a subtraction kept or not by a mask. `bits` is public;
/// the time depends on nothing else (unlike the processor's `div`, whose latency depends on its operands).
#[inline(always)]
pub(crate) fn div_rem(x: u128, d: u64, bits: u32) -> (u128, u64) {
    let d = u128::from(d);
    let mut r = if bits >= 128 { 0 } else { x >> bits };
    let mut q = 0u128;
    for i in (0..bits.min(128)).rev() {
        r = (r << 1) | ((x >> i) & 1);
        let ge = !lt_u128(r, d);
        r -= d & wide(ge);
        q |= u128::from(ge & 1) << i;
    }
    (q, r as u64)
}

/// A double as (sign mask, magnitude m, exponent e) with |x| = m 2^e, for finite and infinite x alike
/// (subnormals have e = −1074; infinities and NaNs the biased exponent 2047, see [`special`]).
#[inline(always)]
pub(crate) fn parts(x: f64) -> (u64, u64, i64) {
    let b = x.to_bits();
    let biased = (b >> 52) & 0x7ff;
    let normal = !eq(biased, 0);
    let m = (b & ((1 << 52) - 1)) | (normal & (1 << 52));
    // Subnormals: exponent 1 − 1075 with no implicit bit.
    let e = max(biased, 1) as i64 - 1075;
    (bit(b >> 63), m, e)
}

/// (all ones for ±∞ or NaN, all ones for NaN).
#[inline(always)]
pub(crate) fn special(x: f64) -> (u64, u64) {
    let b = x.to_bits();
    let huge = eq((b >> 52) & 0x7ff, 0x7ff);
    (huge, huge & !eq(b & ((1 << 52) - 1), 0))
}

/// All ones when k < 0, for any i64.
#[inline(always)]
pub(crate) fn negative(k: i64) -> u64 {
    barrier((k >> 63) as u64)
}

/// min(k, cap) for 0 ≤ cap and any k, as a shift amount (k < 0 gives 0).
#[inline(always)]
fn shift_amount(k: i64, cap: u32) -> u32 {
    let k = (k as u64) & !negative(k);
    min(k, u64::from(cap)) as u32
}

/// ⌊x / 2^j⌋ clamped to [−`limit`, `limit`] (0 < limit < 2¹²⁶), for any double: NaN gives −limit (the
/// lowest score) and ±∞ give ±limit. The same value as [`crate::exact::Grid::floor_clamped`] on finite x.
#[inline(always)]
pub(crate) fn floor_on_grid(x: f64, j: i32, limit: u128) -> i128 {
    let (sign, m, e) = parts(x);
    let (huge, nan) = special(x);
    let k = e - i64::from(j);
    let up = !negative(k); // x / 2^j = m 2^k with k ≥ 0: exact
                           // k ≥ 0: m 2^k, which passes the limit whenever k > 75 (m ≥ 1) or the value does.
    let big = shl_wide(m, shift_amount(k, 75));
    let over = (negative(75 - k) & !eq(m, 0) & up) | (lt_u128(limit, big) & up);
    // k < 0: ⌊m / 2^s⌋ and ⌈m / 2^s⌉ with s = min(−k, 63), exact for m < 2⁵³.
    let s = shift_amount(k.wrapping_neg(), 63);
    let down_floor = m >> s;
    let down_ceil = (m + ((1u64 << s) - 1)) >> s;
    // ⌊x/g⌋ = ⌊|x|/g⌋ for x ≥ 0 and −⌈|x|/g⌉ for x < 0.
    let magnitude = pick_u128(up, big, u128::from(pick(sign, down_ceil, down_floor)));
    let magnitude = pick_u128(over | huge, limit, magnitude);
    let v = pick_i128(sign, (magnitude as i128).wrapping_neg(), magnitude as i128);
    pick_i128(nan, -(limit as i128), v)
}

/// ⌈x / 2^j⌉ capped at `cap` (< 2⁶⁴) for x ≥ 0; a negative, infinite or NaN x gives `cap` (the public rule
/// for an invalid local sensitivity, whose safe value is Δ), −0 gives 0. The same value as
/// [`crate::exact::Grid::ceil_capped`] on finite x ≥ 0.
#[inline(always)]
pub(crate) fn ceil_on_grid(x: f64, j: i32, cap: u64) -> u64 {
    let (sign, m, e) = parts(x);
    let (huge, _) = special(x);
    let invalid = huge | (sign & !eq(m, 0));
    let k = e - i64::from(j);
    let up = !negative(k);
    let big = shl_wide(m, shift_amount(k, 75));
    let over = (negative(75 - k) & !eq(m, 0) & up) | (lt_u128(u128::from(cap), big) & up);
    let s = shift_amount(k.wrapping_neg(), 63);
    let down_ceil = (m + ((1u64 << s) - 1)) >> s;
    let v = pick(up, big as u64, down_ceil);
    let v = pick(over, cap, min(v, cap));
    pick(invalid, cap, v)
}

/// x · 2^s for x < 2¹²⁸ and 0 ≤ s ≤ 127 (bits past 2¹²⁸ dropped), with the limb shifts chosen by masks.
#[inline(always)]
pub(crate) fn shl_u128(x: u128, s: u32) -> u128 {
    let (lo, hi) = (x as u64, (x >> 64) as u64);
    let big = bit(u64::from(s >> 6));
    let r = s & 63;
    // s mod 64 = 0 shifts nothing across: (lo >> 1) >> 63 = 0.
    let hi_small = hi.wrapping_shl(r) | (lo >> 1).wrapping_shr(63u32.wrapping_sub(r) & 63);
    let lo_small = lo.wrapping_shl(r);
    let hi_big = lo.wrapping_shl(r);
    u128::from(lo_small & !big) | u128::from(pick(big, hi_big, hi_small)) << 64
}

/// ⌊x / 2^s⌋ for 0 ≤ s ≤ 127, likewise.
#[inline(always)]
pub(crate) fn shr_u128(x: u128, s: u32) -> u128 {
    let (lo, hi) = (x as u64, (x >> 64) as u64);
    let big = bit(u64::from(s >> 6));
    let r = s & 63;
    let lo_small = lo.wrapping_shr(r) | (hi << 1).wrapping_shl(63u32.wrapping_sub(r) & 63);
    let hi_small = hi.wrapping_shr(r);
    let lo_big = hi.wrapping_shr(r);
    u128::from(pick(big, lo_big, lo_small)) | u128::from(hi_small & !big) << 64
}

/// |x| as (sign mask, 53-bit magnitude, exponent) for a double, with NaN taken as −f64::MAX and ±∞ as
/// ±f64::MAX (the public rule for private data).
#[inline(always)]
fn finite_parts(x: f64) -> (u64, u64, i64) {
    let (huge, nan) = special(x);
    let b = x.to_bits();
    let b = pick(huge, 0x7fef_ffff_ffff_ffff | (b & (1 << 63)) | (nan & (1 << 63)), b);
    parts(f64::from_bits(b))
}

/// ⌊a b / 2^j⌋ clamped to [−`limit`, `limit`] (limit < 2¹²⁶) for a public finite a and any b (NaN → −f64::MAX,
/// ±∞ → ±f64::MAX first): the 106-bit product of the mantissas shifted exactly, by masks. The same value as
/// [`crate::exact::Grid::floor_product_clamped`] on finite b.
#[inline(always)]
pub(crate) fn floor_product_on_grid(a: f64, b: f64, j: i32, limit: u128) -> i128 {
    let (sa, ma, ea) = parts(a);
    let (sb, mb, eb) = finite_parts(b);
    let sign = sa ^ sb;
    let m = u128::from(ma) * u128::from(mb); // < 2¹⁰⁶
    let k = ea + eb - i64::from(j);
    let up = !negative(k);
    // k ≥ 0: m 2^k, past any limit once k > 21 (m ≥ 1) — 2¹⁰⁶ 2²¹ < 2¹²⁸.
    let big = shl_u128(m, shift_amount(k, 21));
    let over = negative(21 - k) & up & !eq_u128(m, 0);
    // k < 0: ⌊m / 2^s⌋ and ⌈m / 2^s⌉ with s = min(−k, 127), exact for m < 2¹⁰⁶.
    let s = shift_amount(k.wrapping_neg(), 127);
    let floor = shr_u128(m, s);
    let ceil = shr_u128(m + (shl_u128(1, s) - 1), s);
    let magnitude = pick_u128(up, big, pick_u128(sign, ceil, floor));
    let magnitude = pick_u128(over | lt_u128(limit, magnitude), limit, magnitude);
    pick_i128(sign, (magnitude as i128).wrapping_neg(), magnitude as i128)
}

/// ⌈a b / 2^j⌉ capped at `cap` for public finite a ≥ 0 and b ≥ 0 finite (the callers make it so), as
/// [`crate::exact::Grid::ceil_product_capped`].
#[inline(always)]
pub(crate) fn ceil_product_on_grid(a: f64, b: f64, j: i32, cap: u64) -> u64 {
    let (_, ma, ea) = parts(a);
    let (_, mb, eb) = parts(b);
    let m = u128::from(ma) * u128::from(mb);
    let k = ea + eb - i64::from(j);
    let up = !negative(k);
    let big = shl_u128(m, shift_amount(k, 21));
    let over = (negative(21 - k) & up & !eq_u128(m, 0)) | (lt_u128(u128::from(cap), big) & up);
    let s = shift_amount(k.wrapping_neg(), 127);
    let ceil = shr_u128(m + (shl_u128(1, s) - 1), s);
    let v = pick_u128(up, big, ceil);
    let v = pick_u128(lt_u128(u128::from(cap), v), u128::from(cap), v);
    pick(over, cap, v as u64)
}

/// All ones when a == b (128-bit), else 0.
#[inline(always)]
pub(crate) fn eq_u128(a: u128, b: u128) -> u64 {
    let d = a ^ b;
    eq((d as u64) | ((d >> 64) as u64), 0)
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
            for s in 0..=(127 - (64 - m.leading_zeros())) {
                assert_eq!(shl_wide(m, s), u128::from(m) << s, "m = {m}, s = {s}");
            }
        }
        // 2⁵² · 2⁷⁶ = 2¹²⁸ wraps to 0, as the P&F coin of weight 1 needs.
        assert_eq!(shl_wide(1 << 52, 76), 0);
    }

    #[test]
    fn wide_comparisons_and_division() {
        let v = [
            0u128,
            1,
            2,
            u128::from(u64::MAX),
            1 << 64,
            (1 << 100) + 7,
            (1 << 125) - 1,
        ];
        for &a in &v {
            for &b in &v {
                assert_eq!(lt_u128(a, b) == u64::MAX, a < b);
                let (x, y) = (a as i128 - (1 << 124), b as i128);
                assert_eq!(lt_i128(x, y) == u64::MAX, x < y);
                assert_eq!(pick_u128(u64::MAX, a, b), a);
                assert_eq!(pick_u128(0, a, b), b);
            }
        }
        let mut x = 0x1234_5678_9abc_def0_u128;
        for d in [1u64, 2, 3, 7, 1000, (1 << 63) - 25, u64::MAX] {
            for _ in 0..50 {
                x = x
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
                    .rotate_left(17);
                for bits in [60u32, 64, 100, 128] {
                    let y = if bits >= 128 { x } else { x % (u128::from(d) << bits) };
                    assert_eq!(div_rem(y, d, bits), (y / u128::from(d), (y % u128::from(d)) as u64));
                }
            }
        }
    }

    #[test]
    fn grid_conversions_agree_with_the_exact_grid() {
        use crate::exact::Grid;
        let xs = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.75,
            -0.75,
            2.5,
            -2.5,
            1e-300,
            -1e-300,
            5e-324,
            -5e-324,
            1e300,
            -1e300,
            f64::MAX,
            -f64::MAX,
            123456.789,
            -98765.4321,
            0.1,
            3.0e15,
            1.0 / 3.0,
        ];
        for delta in [1.0, 0.5, 0.1, 1e-300, 1e300, 5e-324, 12345.0] {
            let g = Grid::of(delta).unwrap();
            let limit = u128::from(g.units()) << 60;
            for &x in &xs {
                assert_eq!(
                    floor_on_grid(x, g.exponent(), limit),
                    g.floor_clamped(x, limit as i128),
                    "floor Δ = {delta}, x = {x}"
                );
                if x >= 0.0 {
                    assert_eq!(
                        ceil_on_grid(x, g.exponent(), g.units()),
                        g.ceil_capped(x, g.units()),
                        "ceil Δ = {delta}, x = {x}"
                    );
                }
            }
            let lim = limit as i128;
            assert_eq!(floor_on_grid(f64::NAN, g.exponent(), limit), -lim);
            assert_eq!(floor_on_grid(f64::INFINITY, g.exponent(), limit), lim);
            assert_eq!(floor_on_grid(f64::NEG_INFINITY, g.exponent(), limit), -lim);
            for bad in [f64::NAN, -1.0, -5e-324, f64::INFINITY, f64::NEG_INFINITY] {
                assert_eq!(
                    ceil_on_grid(bad, g.exponent(), g.units()),
                    g.units(),
                    "Δ = {delta}, δ = {bad}"
                );
            }
        }
    }

    #[test]
    fn wide_shifts_and_products_agree_with_the_exact_grid() {
        let xs = [
            0u128,
            1,
            3,
            (1 << 63) + 5,
            u128::from(u64::MAX),
            (1 << 105) + 12345,
            (1 << 127) - 1,
        ];
        for &x in &xs {
            for s in 0..128 {
                assert_eq!(shr_u128(x, s), x >> s, "x = {x}, s = {s}");
                assert_eq!(shl_u128(x, s), x.wrapping_shl(s), "x = {x}, s = {s}");
            }
        }
        use crate::exact::Grid;
        let ws = [1.0, -0.5, 3.25, 1e-10, -7e6, 0.0];
        let us = [
            0.0,
            1.0,
            -1.0,
            0.3,
            -2.7,
            1e300,
            -1e300,
            5e-324,
            1e-200,
            123456.789,
            f64::MAX,
        ];
        for g in [
            Grid::new(-40, 1 << 50),
            Grid::new(0, 3),
            Grid::new(-1070, 7),
            Grid::new(900, 1),
        ] {
            let limit = u128::from(g.units()) << 56;
            for &w in &ws {
                for &u in &us {
                    assert_eq!(
                        floor_product_on_grid(w, u, g.exponent(), limit),
                        g.floor_product_clamped(w, u, limit as i128),
                        "floor w = {w}, u = {u}, j = {}",
                        g.exponent()
                    );
                    if w >= 0.0 && u >= 0.0 {
                        assert_eq!(
                            ceil_product_on_grid(w, u, g.exponent(), u64::MAX),
                            g.ceil_product_capped(w, u, u64::MAX),
                            "ceil w = {w}, u = {u}"
                        );
                        assert_eq!(
                            ceil_product_on_grid(w, u, g.exponent(), 1000),
                            g.ceil_product_capped(w, u, 1000),
                            "ceil capped w = {w}, u = {u}"
                        );
                    }
                }
                let lim = limit as i128;
                let sign = if w > 0.0 { 1 } else { -1 };
                if w != 0.0 {
                    assert_eq!(floor_product_on_grid(w, f64::NAN, g.exponent(), limit), -sign * lim);
                    assert_eq!(floor_product_on_grid(w, f64::INFINITY, g.exponent(), limit), sign * lim);
                }
            }
        }
    }
}
