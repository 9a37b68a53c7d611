//! Scores as exact integers on a binary grid, and the gaps between them.
//!
//! Every finite double is an exact dyadic rational x = M · 2^E (|M| < 2⁵³). On the grid of unit g = 2^j
//! the score becomes the integer ⌊x / g⌋, computed here without rounding for any finite x and any j.
//!
//! **Why flooring to a grid keeps the sensitivity exact.** If g divides Δ (Δ = N·g for an integer N) and
//! |a − b| ≤ Δ, then |⌊a/g⌋ − ⌊b/g⌋| ≤ N: from a ≤ b + N·g follows ⌊a/g⌋ ≤ ⌊b/g + N⌋ = ⌊b/g⌋ + N. So
//! integer scores ⌊s/g⌋ have sensitivity N grid units whenever the scores s have sensitivity Δ, with no
//! slack at all. [`Grid::of`] picks g = 2^(e − 10) for Δ = m · 2^e (m the 53-bit mantissa), so N = m · 2¹⁰
//! and every score that is a multiple of about 2⁻⁶²Δ (integers, and any score within a few binades of Δ
//! or above) is on the grid exactly.
//!
//! **Why clamping the gap keeps it too.** Only the gaps G_r = ⌊s*/g⌋ − ⌊s_r/g⌋ to the best score s* enter
//! a selector (all of them are shift invariant). Capping G_r at a constant L is the mechanism on the scores
//! max(⌊s_r/g⌋, ⌊s*/g⌋ − L), and the maximum of two functions of sensitivity N has sensitivity N; the best
//! score is unchanged. [`GAP_CAP`] = 2¹²⁶ grid units is about 2⁶⁴Δ: a candidate that far below the best is
//! treated as exactly that far below it.

use super::wide::U256;
use crate::Error;

/// The largest gap a selector sees, in grid units (see the module documentation).
pub const GAP_CAP: u128 = 1 << 126;

/// x = mantissa · 2^exponent exactly, for finite x (|mantissa| < 2⁵³; zero gives (0, 0)).
pub fn decompose(x: f64) -> (i64, i32) {
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1 << 52) - 1)) as i64;
    let (m, e) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    if m == 0 {
        return (0, 0);
    }
    if bits >> 63 == 1 {
        (-m, e)
    } else {
        (m, e)
    }
}

/// ⌊x / 2^j⌋ as p · 2^q exactly (p = 0 implies q = 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Floor {
    p: i64,
    q: u32,
}

/// A binary grid fitted to a sensitivity: unit g = 2^`exponent`, and Δ = `units` · g exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    exponent: i32,
    units: u64,
}

/// Extra binary digits below Δ's own last mantissa digit that the grid resolves.
const EXTRA_DIGITS: u32 = 10;

impl Grid {
    /// The grid for a global sensitivity Δ: g = 2^(e − 10) where Δ = m · 2^e with m its integer mantissa,
    /// so Δ = N · g with N = m · 2¹⁰ < 2⁶³. Errors: Δ not finite and > 0 → [`Error::InvalidSensitivity`].
    pub fn of(sensitivity: f64) -> Result<Grid, Error> {
        if !(sensitivity.is_finite() && sensitivity > 0.0) {
            return Err(Error::InvalidSensitivity);
        }
        let (m, e) = decompose(sensitivity);
        Ok(Grid {
            exponent: e - EXTRA_DIGITS as i32,
            units: (m as u64) << EXTRA_DIGITS,
        })
    }

    /// A grid of unit 2^`exponent` on which the sensitivity is `units` (≥ 1) grid units.
    pub fn new(exponent: i32, units: u64) -> Grid {
        Grid {
            exponent,
            units: units.max(1),
        }
    }

    /// The binary exponent j of the unit g = 2^j.
    pub fn exponent(&self) -> i32 {
        self.exponent
    }

    /// The sensitivity in grid units, N = Δ / g.
    pub fn units(&self) -> u64 {
        self.units
    }

    /// ⌊x / g⌋ exactly, for finite x.
    pub fn floor(&self, x: f64) -> Floor {
        let (m, e) = decompose(x);
        if m == 0 {
            return Floor { p: 0, q: 0 };
        }
        let k = i64::from(e) - i64::from(self.exponent);
        if k >= 0 {
            // |k| ≤ 971 + 1084: a u32 holds it.
            Floor { p: m, q: k as u32 }
        } else {
            let s = -k;
            // An arithmetic shift floors; beyond 62 places a 53-bit mantissa leaves 0 or −1.
            let p = if s >= 63 { m >> 63 } else { m >> s };
            Floor { p, q: 0 }
        }
    }

    /// ⌊x / g⌋ clamped to [−`limit`, `limit`] (limit > 0), as an `i128`. Clamping is monotone and
    /// 1-Lipschitz, so it never increases a sensitivity.
    pub fn floor_clamped(&self, x: f64, limit: i128) -> i128 {
        let f = self.floor(x);
        clamp_shifted(i128::from(f.p), f.q as i64, limit)
    }

    /// ⌊a · b / g⌋ clamped to [−`limit`, `limit`], exactly (the product of two doubles is a 106-bit
    /// integer times a power of two).
    pub fn floor_product_clamped(&self, a: f64, b: f64, limit: i128) -> i128 {
        let ((ma, ea), (mb, eb)) = (decompose(a), decompose(b));
        let p = i128::from(ma) * i128::from(mb);
        clamp_shifted(p, i64::from(ea) + i64::from(eb) - i64::from(self.exponent), limit)
    }

    /// ⌈a · b / g⌉ for a, b ≥ 0, capped at `cap`, exactly.
    pub fn ceil_product_capped(&self, a: f64, b: f64, cap: u64) -> u64 {
        let ((ma, ea), (mb, eb)) = (decompose(a), decompose(b));
        if ma <= 0 || mb <= 0 {
            return 0;
        }
        let p = (ma as u128) * (mb as u128);
        ceil_shifted(p, i64::from(ea) + i64::from(eb) - i64::from(self.exponent), cap)
    }

    /// ⌈x / g⌉ for 0 ≤ x, capped at `cap`. Used to round a local sensitivity up onto the grid, which keeps it
    /// admissible (ceilings are monotone, so both conditions of Def. 3.3 survive).
    pub fn ceil_capped(&self, x: f64, cap: u64) -> u64 {
        let (m, e) = decompose(x);
        if m <= 0 {
            return 0;
        }
        ceil_shifted(m as u128, i64::from(e) - i64::from(self.exponent), cap)
    }

    /// min(⌊best / g⌋ − ⌊x / g⌋, [`GAP_CAP`]) for `best` ≥ `x`, exactly.
    #[inline]
    pub fn gap(&self, best: Floor, x: f64) -> u128 {
        capped_difference(best, self.floor(x))
    }
}

/// ⌊p · 2^k⌋ clamped to [−limit, limit], for |p| < 2¹²⁷ and limit > 0.
fn clamp_shifted(p: i128, k: i64, limit: i128) -> i128 {
    if p == 0 {
        return 0;
    }
    let v = if k >= 0 {
        let bits = 128 - p.unsigned_abs().leading_zeros() as i64;
        if bits + k >= 127 {
            return if p > 0 { limit } else { -limit };
        }
        p << k
    } else if k <= -127 {
        // An arithmetic shift floors: the result is 0 or −1.
        p >> 127
    } else {
        p >> -k
    };
    v.clamp(-limit, limit)
}

/// ⌈p · 2^k⌉ capped at `cap`, for p > 0.
fn ceil_shifted(p: u128, k: i64, cap: u64) -> u64 {
    let v = if k >= 0 {
        if 128 - p.leading_zeros() as i64 + k > 127 {
            return cap;
        }
        p << k
    } else if k <= -128 {
        1
    } else {
        let s = (-k) as u32;
        (p >> s) + u128::from(p & ((1u128 << s) - 1) != 0)
    };
    v.min(u128::from(cap)) as u64
}

/// min(a − b, GAP_CAP) for a ≥ b given as p · 2^q.
fn capped_difference(a: Floor, b: Floor) -> u128 {
    if a == b {
        return 0;
    }
    // a − b = 2^q (a.p 2^sa − b.p 2^sb). A zero has q = 0, so it never raises q.
    let q = if a.p == 0 {
        b.q
    } else if b.p == 0 {
        a.q
    } else {
        a.q.min(b.q)
    };
    let (sa, sb) = (a.q.saturating_sub(q), b.q.saturating_sub(q));
    let inner = if sa.max(sb) <= 70 {
        // |p| < 2⁵³, so each term is below 2¹²³ and the difference below 2¹²⁴.
        let d = (i128::from(a.p) << sa) - (i128::from(b.p) << sb);
        if d <= 0 {
            return 0;
        }
        U256::from_u128(d as u128)
    } else if sa.max(sb) > 190 {
        // The term shifted by more than 190 places exceeds 2¹⁹⁰ and the other is below 2⁵³; since a ≥ b
        // the difference is at least 2¹⁹⁰ − 2⁵³, far above the cap.
        return GAP_CAP;
    } else {
        let term = |p: i64, s: u32| U256::from_u128(u128::from(p.unsigned_abs())).checked_shl(s);
        let (ta, tb) = match (term(a.p, sa), term(b.p, sb)) {
            (Some(x), Some(y)) => (x, y),
            _ => return GAP_CAP,
        };
        let d = match (a.p >= 0, b.p >= 0) {
            (true, true) => ta.checked_sub(tb),
            (true, false) => ta.checked_add(tb),
            (false, false) => tb.checked_sub(ta),
            (false, true) => None,
        };
        match d {
            Some(d) => d,
            None => return 0, // unreachable for a ≥ b
        }
    };
    if inner.bit_len() + q > 126 {
        return GAP_CAP;
    }
    inner
        .checked_shl(q)
        .and_then(|x| x.to_u128())
        .map_or(GAP_CAP, |x| x.min(GAP_CAP))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decompose_is_exact() {
        for x in [
            1.0,
            -1.0,
            0.1,
            -73.6,
            1e300,
            -f64::MAX,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
        ] {
            let (m, e) = decompose(x);
            assert!(m.unsigned_abs() < 1 << 53);
            // m · 2^e rebuilt in two steps to stay in range.
            let half = e / 2;
            let back = m as f64 * 2f64.powi(half) * 2f64.powi(e - half);
            assert_eq!(back, x, "{x}");
        }
        assert_eq!(decompose(0.0), (0, 0));
        assert_eq!(decompose(-0.0), (0, 0));
    }

    #[test]
    fn grid_of_sensitivity_divides_it() {
        let g = Grid::of(1.0).unwrap();
        assert_eq!((g.exponent(), g.units()), (-62, 1 << 62));
        let g = Grid::of(0.1).unwrap();
        assert_eq!(g.units(), 0x0019_9999_9999_999a << 10);
        assert!(Grid::of(0.0).is_err() && Grid::of(f64::NAN).is_err() && Grid::of(-1.0).is_err());
        let g = Grid::of(5e-324).unwrap();
        assert_eq!((g.exponent(), g.units()), (-1084, 1 << 10));
    }

    #[test]
    fn gaps_of_small_integers_are_exact() {
        let g = Grid::of(1.0).unwrap(); // unit 2^-62
        let best = g.floor(3.0);
        assert_eq!(g.gap(best, 3.0), 0);
        assert_eq!(g.gap(best, 2.0), 1 << 62);
        assert_eq!(g.gap(best, -1.0), 4 << 62);
        assert_eq!(g.gap(best, 2.75), 1 << 60);
        // 0.1 is a multiple of 2^-56: on the grid.
        assert_eq!(g.gap(g.floor(0.1), 0.0), (0.1f64 * 2f64.powi(62)) as u128);
        // Far below: capped.
        assert_eq!(g.gap(best, -1e300), GAP_CAP);
        assert_eq!(g.gap(g.floor(f64::MAX), -f64::MAX), GAP_CAP);
    }

    #[test]
    fn gaps_of_huge_translated_scores_are_exact() {
        let g = Grid::of(1.0).unwrap();
        let top = 1e25;
        let below = 1e25 - 2f64.powi(31); // one ulp of 1e25 is 2^31
        assert_eq!(g.gap(g.floor(top), below), 1u128 << 93);
        let big = 2f64.powi(900);
        let next_down = f64::from_bits(big.to_bits() - 1);
        assert_eq!(g.gap(g.floor(big), next_down), GAP_CAP); // 2^847 below: capped
        let g = Grid::of(2f64.powi(800)).unwrap();
        assert_eq!(g.gap(g.floor(big), next_down), 1u128 << 109);
    }

    #[test]
    fn floors_round_towards_minus_infinity() {
        let g = Grid::new(0, 1); // unit 1
        assert_eq!(g.floor_clamped(2.5, 1 << 100), 2);
        assert_eq!(g.floor_clamped(-2.5, 1 << 100), -3);
        assert_eq!(g.floor_clamped(-1e-300, 1 << 100), -1);
        assert_eq!(g.floor_clamped(1e-300, 1 << 100), 0);
        assert_eq!(g.floor_clamped(1e30, 1 << 60), 1 << 60);
        assert_eq!(g.floor_clamped(-1e30, 1 << 60), -(1 << 60));
        assert_eq!(g.floor_clamped(-f64::MAX, 1 << 60), -(1 << 60));
        assert_eq!(g.floor_product_clamped(0.5, -3.0, 1 << 60), -2);
        assert_eq!(g.floor_product_clamped(0.1, 10.0, 1 << 60), 1); // 0.1 (double) · 10 = 1.0000000000000000555
        assert_eq!(g.floor_product_clamped(-0.1, 10.0, 1 << 60), -2);
        assert_eq!(g.floor_product_clamped(1e200, 1e200, 1 << 60), 1 << 60);
        assert_eq!(g.ceil_product_capped(0.1, 10.0, 100), 2);
        assert_eq!(g.ceil_product_capped(0.5, 4.0, 100), 2);
        assert_eq!(g.ceil_product_capped(1e-200, 1e-200, 100), 1);
        assert_eq!(g.gap(g.floor(0.5), -0.5), 1);
        assert_eq!(g.ceil_capped(2.5, 100), 3);
        assert_eq!(g.ceil_capped(2.0, 100), 2);
        assert_eq!(g.ceil_capped(1e-300, 100), 1);
        assert_eq!(g.ceil_capped(0.0, 100), 0);
        assert_eq!(g.ceil_capped(1e30, 100), 100);
    }
}
