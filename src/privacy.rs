//! Privacy budget accounting: sequential composition with a caller-owned accountant, and the advanced
//! composition bound.

use crate::float::{add_up, sub_down};
use crate::Error;

/// A privacy budget under sequential (basic) composition: running mechanisms that are ε₁-, ε₂-, … -DP on
/// the same data is (Σ ε_j)-DP. The caller owns the value (plain `repr(C)` data, two doubles) and charges
/// each mechanism's ε before running it.
///
/// Floating point: the accountant never lets the *exact* real sum of the charged values exceed the total.
/// `spent` is kept as an upper bound of that exact sum (each addition is rounded up one ulp when it was
/// inexact, detected by TwoSum), and [`remaining`](Self::remaining) is rounded down. Consequently
/// - charging exactly `remaining()` always succeeds (the exact sum is then ≤ total, and rounding it up to
///   the next double cannot pass the double `total`);
/// - no tolerance is applied, so decimal values that are not exact doubles can be refused at the end: the
///   double nearest 0.1 is 0.1000000000000000055…, so ten charges of `0.1` against a total of `1.0`
///   would spend 1.000000000000000055… and the tenth is refused. Charge `remaining()` for the last
///   mechanism, or use exactly representable shares (such as 0.125), when a budget must be used up.
///
/// A refused charge leaves the accountant unchanged.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct PrivacyBudget {
    total: f64,
    spent: f64,
}

impl PrivacyBudget {
    /// A fresh budget of `total_epsilon`. Errors: not finite or ≤ 0 → [`Error::InvalidEpsilon`].
    pub fn new(total_epsilon: f64) -> Result<Self, Error> {
        if !(total_epsilon.is_finite() && total_epsilon > 0.0) {
            return Err(Error::InvalidEpsilon);
        }
        Ok(PrivacyBudget {
            total: total_epsilon,
            spent: 0.0,
        })
    }

    /// The total budget.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The ε spent so far: an upper bound of the exact sum of the successful charges (equal to it when
    /// every addition was exact), never above [`total`](Self::total).
    pub fn spent(&self) -> f64 {
        self.spent
    }

    /// The ε still available: a lower bound of total − spent, never negative. Charging exactly this value
    /// succeeds when it is > 0.
    pub fn remaining(&self) -> f64 {
        sub_down(self.total, self.spent).max(0.0)
    }

    /// Records a mechanism run with `epsilon` (sequential composition).
    ///
    /// Errors (state unchanged): `epsilon` not finite or ≤ 0 → [`Error::InvalidEpsilon`]; the exact sum of
    /// the charges would exceed the total → [`Error::BudgetExhausted`].
    pub fn charge(&mut self, epsilon: f64) -> Result<(), Error> {
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(Error::InvalidEpsilon);
        }
        let spent = add_up(self.spent, epsilon);
        if spent > self.total {
            return Err(Error::BudgetExhausted);
        }
        self.spent = spent;
        Ok(())
    }
}

fn check_composition(eps0: f64, k: usize, delta_prime: f64) -> Result<(f64, f64), Error> {
    if !(eps0.is_finite() && eps0 > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if k == 0 || !(delta_prime > 0.0 && delta_prime < 1.0) {
        return Err(Error::InvalidArgument);
    }
    Ok((k as f64, libm::log(1.0 / delta_prime)))
}

/// The advanced composition bound as stated in Kearns et al., *Private algorithms for the protected in
/// social network search* (SI, Lemma 4, after Dwork–Rothblum–Vadhan): k adaptively composed ε₀-DP
/// mechanisms are (ε, δ′)-DP with ε = ε₀ · √(8 k ln(1/δ′)).
///
/// That closed form is a simplification of the Dwork–Rothblum–Vadhan bound ([`drv_composition_epsilon`],
/// ε₀√(2k ln(1/δ′)) + k ε₀ (e^ε₀ − 1)) and is only implied by it when k (e^ε₀ − 1) ≤ √(2k ln(1/δ′))
/// (for example when ε₀ is small; the usual statement assumes a total ε < 1). So that the returned value
/// is always a valid guarantee, it is the larger of the two: the Lemma 4 value wherever Lemma 4 is valid,
/// the exact bound otherwise. Basic composition (k ε₀, with δ′ = 0) may still be smaller; compare if needed.
///
/// Errors: ε₀ not finite or ≤ 0 → [`Error::InvalidEpsilon`]; k = 0 or δ′ ∉ (0, 1) →
/// [`Error::InvalidArgument`]; a non-finite result → [`Error::Overflow`].
pub fn advanced_composition_epsilon(eps0: f64, k: usize, delta_prime: f64) -> Result<f64, Error> {
    let (kf, log_inv) = check_composition(eps0, k, delta_prime)?;
    let lemma4 = eps0 * libm::sqrt(8.0 * kf * log_inv);
    let eps = lemma4.max(drv_composition_epsilon(eps0, k, delta_prime)?);
    if !eps.is_finite() {
        return Err(Error::Overflow);
    }
    Ok(eps)
}

/// The Dwork–Rothblum–Vadhan advanced composition bound (Dwork and Roth, *The Algorithmic Foundations of
/// Differential Privacy*, Thm. 3.20, for pure ε₀-DP mechanisms): k adaptively composed ε₀-DP mechanisms
/// are (ε, δ′)-DP with ε = ε₀ √(2 k ln(1/δ′)) + k ε₀ (e^ε₀ − 1).
///
/// Errors: as [`advanced_composition_epsilon`].
pub fn drv_composition_epsilon(eps0: f64, k: usize, delta_prime: f64) -> Result<f64, Error> {
    let (kf, log_inv) = check_composition(eps0, k, delta_prime)?;
    let eps = eps0 * libm::sqrt(2.0 * kf * log_inv) + kf * eps0 * libm::expm1(eps0);
    if !eps.is_finite() {
        return Err(Error::Overflow);
    }
    Ok(eps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    #[test]
    fn charges_and_refuses() {
        let mut b = PrivacyBudget::new(1.0).unwrap();
        b.charge(0.25).unwrap();
        b.charge(0.5).unwrap();
        assert_eq!((b.spent(), b.remaining()), (0.75, 0.25));
        let before = b;
        assert_eq!(b.charge(0.25 + 1e-16), Err(Error::BudgetExhausted));
        assert_eq!(b, before);
        assert_eq!(b.charge(0.0), Err(Error::InvalidEpsilon));
        assert_eq!(b.charge(f64::NAN), Err(Error::InvalidEpsilon));
        assert_eq!(b.charge(-1.0), Err(Error::InvalidEpsilon));
        assert_eq!(b.charge(f64::INFINITY), Err(Error::InvalidEpsilon));
        b.charge(b.remaining()).unwrap();
        assert_eq!(b.remaining(), 0.0);
        assert_eq!(b.charge(f64::MIN_POSITIVE), Err(Error::BudgetExhausted));
        for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(PrivacyBudget::new(t), Err(Error::InvalidEpsilon));
        }
    }

    #[test]
    fn never_overspends_in_exact_arithmetic() {
        // Ten doubles 0.1 sum to more than 1 exactly, although naive summation gives 0.9999999999999999.
        let mut b = PrivacyBudget::new(1.0).unwrap();
        for _ in 0..9 {
            b.charge(0.1).unwrap();
        }
        assert_eq!(b.charge(0.1), Err(Error::BudgetExhausted));
        b.charge(b.remaining()).unwrap();
        assert!(b.spent() <= 1.0);
        // Dyadic shares are exact and use the budget up.
        let mut b = PrivacyBudget::new(1.0).unwrap();
        for _ in 0..8 {
            b.charge(0.125).unwrap();
        }
        assert_eq!((b.spent(), b.remaining()), (1.0, 0.0));
    }

    #[test]
    fn remaining_can_always_be_charged() {
        // Awkward totals and charges: after any charges, charging `remaining()` succeeds.
        for total in [1.0, 0.3, 1e-300, 7.123456789, 1e300] {
            for eps in [0.1, 1.0 / 3.0, 1e-17, 0.7] {
                let mut b = PrivacyBudget::new(total).unwrap();
                let mut n = 0;
                while n < 50 && b.charge(eps * total).is_ok() {
                    n += 1;
                }
                let r = b.remaining();
                if r > 0.0 {
                    b.charge(r).unwrap();
                }
                assert!(b.spent() <= total);
            }
        }
    }

    #[test]
    fn composition_matches_hand_computed_values() {
        // ε₀ = 0.1, k = 10, δ′ = 1e−5: 0.1·√(80·ln 1e5) = 3.034854258770293 (Lemma 4 valid here;
        // DRV gives 0.1·√(20·ln 1e5) + 10·0.1·(e^0.1 − 1) = 1.6225980474607942).
        assert!(close(
            advanced_composition_epsilon(0.1, 10, 1e-5).unwrap(),
            3.034854258770293
        ));
        assert!(close(
            drv_composition_epsilon(0.1, 10, 1e-5).unwrap(),
            1.6225980474607942
        ));
        // ε₀ = 0.5, k = 4, δ′ = 1e−6: 0.5·√(32·ln 1e6) = 10.513043539513864.
        assert!(close(
            advanced_composition_epsilon(0.5, 4, 1e-6).unwrap(),
            10.513043539513864
        ));
        // ε₀ = 1, k = 100, δ′ = 0.5: Lemma 4 would claim √(800 ln 2) = 23.548…, which the DRV bound
        // √(200 ln 2) + 100(e − 1) = 183.60228307105925 does not support, so the latter is returned.
        assert!(close(
            advanced_composition_epsilon(1.0, 100, 0.5).unwrap(),
            183.60228307105925
        ));
        assert_eq!(advanced_composition_epsilon(0.0, 1, 0.5), Err(Error::InvalidEpsilon));
        assert_eq!(
            advanced_composition_epsilon(f64::NAN, 1, 0.5),
            Err(Error::InvalidEpsilon)
        );
        assert_eq!(advanced_composition_epsilon(1.0, 0, 0.5), Err(Error::InvalidArgument));
        for d in [0.0, 1.0, -0.1, f64::NAN] {
            assert_eq!(advanced_composition_epsilon(1.0, 3, d), Err(Error::InvalidArgument));
        }
        assert_eq!(advanced_composition_epsilon(710.0, 10, 0.5), Err(Error::Overflow));
    }
}
