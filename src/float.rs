//! Directed rounding for the few places where a rounding error could make a privacy quantity too small
//! (a sensitivity bound, a spent budget) or too large (a remaining budget). Round-to-nearest alone can lose
//! half an ulp in the unsafe direction; these helpers detect the exact error of one operation (TwoSum /
//! FMA) and step one ulp in the safe direction only when the operation was inexact, so exact inputs
//! (integers, dyadic fractions) give exactly the textbook results.

/// a + b rounded to nearest, and the exact error (a + b) − fl(a + b) (Knuth's TwoSum; finite inputs, no
/// overflow).
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// The smallest double greater than x (x itself for +∞ and NaN). `f64::next_up` needs Rust 1.86.
#[inline]
pub(crate) fn next_up(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f64::from_bits(1);
    }
    let bits = x.to_bits();
    if x > 0.0 {
        f64::from_bits(bits + 1)
    } else {
        f64::from_bits(bits - 1)
    }
}

/// The largest double smaller than x.
#[inline]
pub(crate) fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// An upper bound on the exact a + b: fl(a + b), moved up one ulp when the rounding went down.
#[inline]
pub fn add_up(a: f64, b: f64) -> f64 {
    let (s, err) = two_sum(a, b);
    if !s.is_finite() {
        return s;
    }
    if err > 0.0 {
        next_up(s)
    } else {
        s
    }
}

/// A lower bound on the exact a − b.
#[inline]
pub fn sub_down(a: f64, b: f64) -> f64 {
    let (s, err) = two_sum(a, -b);
    if !s.is_finite() {
        return s;
    }
    if err < 0.0 {
        next_down(s)
    } else {
        s
    }
}

/// An upper bound on the exact a · b.
#[inline]
pub fn mul_up(a: f64, b: f64) -> f64 {
    let p = a * b;
    if !p.is_finite() {
        return p;
    }
    if libm::fma(a, b, -p) > 0.0 {
        next_up(p)
    } else {
        p
    }
}

/// A lower bound on the exact a / b for finite a ≥ 0 and b > 0: fl(a / b), moved down one ulp when the
/// rounding went up (the remainder a − q·b, exact by FMA, is then negative).
#[inline]
pub fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    if !q.is_finite() || q == 0.0 {
        return q;
    }
    if libm::fma(-q, b, a) < 0.0 {
        next_down(q)
    } else {
        q
    }
}

/// A total order on non-NaN doubles that agrees with IEEE comparison (so −0 and +0 tie, unlike
/// `f64::total_cmp`). Callers validate that no NaN reaches it.
#[inline]
pub(crate) fn cmp(a: f64, b: f64) -> core::cmp::Ordering {
    if a < b {
        core::cmp::Ordering::Less
    } else if a > b {
        core::cmp::Ordering::Greater
    } else {
        core::cmp::Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_brackets_the_exact_result() {
        // 0.1 + 0.2 rounds up to 0.30000000000000004; the exact sum is below it.
        let s = add_up(0.1, 0.2);
        assert!(s >= 0.1 + 0.2);
        assert_eq!(add_up(1.0, 2.0), 3.0);
        assert_eq!(sub_down(3.0, 2.0), 1.0);
        let (s, e) = two_sum(1.0, 1e-20);
        assert_eq!((s, e), (1.0, 1e-20));
        assert_eq!(add_up(1.0, 1e-20), next_up(1.0));
        assert_eq!(sub_down(1.0, 1e-20), next_down(1.0));
        assert_eq!(mul_up(3.0, 0.5), 1.5);
        assert!(mul_up(0.1, 3.0) >= 0.1 * 3.0);
        assert_eq!(next_up(-f64::from_bits(1)), -0.0);
        assert_eq!(next_down(0.0), -f64::from_bits(1));
        assert_eq!(cmp(-0.0, 0.0), core::cmp::Ordering::Equal);
        assert_eq!(div_down(1.0, 4.0), 0.25);
        for (a, b) in [(1.0, 3.0), (0.1, 7.0), (2.0, 3.0), (1e-300, 3.0), (5.0, 1e10)] {
            let q = div_down(a, b);
            assert!(libm::fma(-q, b, a) >= 0.0, "{a}/{b}: {q}·{b} exceeds {a}");
            assert!(q == a / b || next_up(q) == a / b);
        }
    }
}
