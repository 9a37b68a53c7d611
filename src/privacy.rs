//! Privacy budget accounting: sequential composition of (ε, δ) charges with a caller-owned accountant, and
//! the advanced composition bound.

use crate::float::{add_up, sub_down};
use crate::Error;

/// A privacy budget under sequential (basic) composition: running mechanisms that are (ε₁, δ₁)-,
/// (ε₂, δ₂)-, … -DP on the same data is (Σ ε_j, Σ δ_j)-DP (Dwork & Roth, *The Algorithmic Foundations of
/// Differential Privacy*, Thm. 3.16; Dwork, Rothblum & Vadhan 2010 for adaptively chosen mechanisms and
/// parameters). The caller owns the value (plain `repr(C)` data, four doubles) and charges each mechanism's
/// (ε, δ) before running it. A pure-ε budget ([`new`](Self::new)) has a δ total of 0: it accepts every
/// pure-ε charge ([`charge`](Self::charge), δ = 0) and refuses any charge with δ > 0.
///
/// Floating point: the accountant never lets the *exact* real sum of the charged values exceed the total,
/// for ε and for δ separately. Each `spent` is kept as an upper bound of that exact sum (each addition is
/// rounded up one ulp when it was inexact, detected by TwoSum), and each remaining amount is rounded down.
/// Consequently
/// - charging exactly `remaining()` (and `remaining_delta()`) always succeeds (the exact sum is then ≤ total,
///   and rounding it up to the next double cannot pass the double `total`);
/// - no tolerance is applied, so decimal values that are not exact doubles can be refused at the end: the
///   double nearest 0.1 is 0.1000000000000000055…, so ten charges of `0.1` against a total of `1.0`
///   would spend 1.000000000000000055… and the tenth is refused. Charge `remaining()` for the last
///   mechanism, or use exactly representable shares (such as 0.125), when a budget must be used up.
///
/// A refused charge leaves the accountant unchanged (ε and δ alike).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct PrivacyBudget {
    total: f64,
    spent: f64,
    delta_total: f64,
    delta_spent: f64,
}

/// Whether δ is a usable δ total or charge: finite, 0 ≤ δ < 1.
fn valid_delta(delta: f64) -> bool {
    delta.is_finite() && (0.0..1.0).contains(&delta)
}

impl PrivacyBudget {
    /// A fresh pure-ε budget of `total_epsilon` (δ total 0). Errors: not finite or ≤ 0 →
    /// [`Error::InvalidEpsilon`].
    pub fn new(total_epsilon: f64) -> Result<Self, Error> {
        Self::new_approx(total_epsilon, 0.0)
    }

    /// A fresh (ε, δ) budget: `total_epsilon` > 0 and `total_delta` ∈ [0, 1) (0 makes it pure-ε, as
    /// [`new`](Self::new)).
    ///
    /// Errors: ε not finite or ≤ 0 → [`Error::InvalidEpsilon`]; δ not finite or outside [0, 1) →
    /// [`Error::InvalidArgument`].
    pub fn new_approx(total_epsilon: f64, total_delta: f64) -> Result<Self, Error> {
        if !(total_epsilon.is_finite() && total_epsilon > 0.0) {
            return Err(Error::InvalidEpsilon);
        }
        if !valid_delta(total_delta) {
            return Err(Error::InvalidArgument);
        }
        Ok(PrivacyBudget {
            total: total_epsilon,
            spent: 0.0,
            delta_total: total_delta,
            delta_spent: 0.0,
        })
    }

    /// A budget with the given state, as [`total`](Self::total), [`spent`](Self::spent),
    /// [`delta_total`](Self::delta_total) and [`delta_spent`](Self::delta_spent) report it (for a state
    /// kept outside this type: a C `dpmo_budget`, a database ledger).
    ///
    /// Errors: any state a sequence of [`new_approx`](Self::new_approx) and charges could not have
    /// produced — a total not finite or ≤ 0, a spent ε not finite, negative or above the total, a δ total
    /// outside [0, 1), a spent δ negative or above the δ total → [`Error::InvalidArgument`].
    pub fn restore(total: f64, spent: f64, delta_total: f64, delta_spent: f64) -> Result<Self, Error> {
        let eps_ok = total.is_finite() && total > 0.0 && spent.is_finite() && spent >= 0.0 && spent <= total;
        let delta_ok =
            valid_delta(delta_total) && delta_spent.is_finite() && delta_spent >= 0.0 && delta_spent <= delta_total;
        if !(eps_ok && delta_ok) {
            return Err(Error::InvalidArgument);
        }
        // +0.0 normalises a spent −0.0.
        Ok(PrivacyBudget {
            total,
            spent: spent + 0.0,
            delta_total: delta_total + 0.0,
            delta_spent: delta_spent + 0.0,
        })
    }

    /// The total ε.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The ε spent so far: an upper bound of the exact sum of the successful charges (equal to it when
    /// every addition was exact), never above [`total`](Self::total).
    pub fn spent(&self) -> f64 {
        self.spent
    }

    /// The ε still available: a lower bound of total − spent, never negative. Charging exactly this value
    /// succeeds when it is > 0 (and the δ of the charge fits).
    pub fn remaining(&self) -> f64 {
        sub_down(self.total, self.spent).max(0.0)
    }

    /// The total δ (0 for a pure-ε budget).
    pub fn delta_total(&self) -> f64 {
        self.delta_total
    }

    /// The δ spent so far: an upper bound of the exact sum of the δ of the successful charges, never above
    /// [`delta_total`](Self::delta_total).
    pub fn delta_spent(&self) -> f64 {
        self.delta_spent
    }

    /// The δ still available: a lower bound of δ total − δ spent, never negative.
    pub fn remaining_delta(&self) -> f64 {
        sub_down(self.delta_total, self.delta_spent).max(0.0)
    }

    /// Records a pure ε-DP mechanism run with `epsilon` (sequential composition): the charge (ε, 0) of
    /// [`charge_approx`](Self::charge_approx).
    ///
    /// Errors (state unchanged): `epsilon` not finite or ≤ 0 → [`Error::InvalidEpsilon`]; the exact sum of
    /// the charges would exceed the total → [`Error::BudgetExhausted`].
    pub fn charge(&mut self, epsilon: f64) -> Result<(), Error> {
        self.charge_approx(epsilon, 0.0)
    }

    /// Records an (ε, δ)-DP mechanism run (sequential composition: the ε's add up and the δ's add up).
    ///
    /// Errors (state unchanged): `epsilon` not finite or ≤ 0 → [`Error::InvalidEpsilon`]; `delta` not finite
    /// or outside [0, 1) → [`Error::InvalidArgument`]; the exact sum of the ε charges would exceed the total,
    /// or that of the δ charges the δ total → [`Error::BudgetExhausted`].
    pub fn charge_approx(&mut self, epsilon: f64, delta: f64) -> Result<(), Error> {
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(Error::InvalidEpsilon);
        }
        if !valid_delta(delta) {
            return Err(Error::InvalidArgument);
        }
        let spent = add_up(self.spent, epsilon);
        // A δ of 0 (a pure-ε charge) leaves the δ account exactly as it was.
        let delta_spent = if delta > 0.0 {
            add_up(self.delta_spent, delta)
        } else {
            self.delta_spent
        };
        if spent > self.total || delta_spent > self.delta_total {
            return Err(Error::BudgetExhausted);
        }
        self.spent = spent;
        self.delta_spent = delta_spent;
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
    fn delta_is_charged_and_composed_separately() {
        // A pure-ε budget takes pure-ε charges and refuses any δ > 0.
        let mut b = PrivacyBudget::new(1.0).unwrap();
        assert_eq!((b.delta_total(), b.delta_spent(), b.remaining_delta()), (0.0, 0.0, 0.0));
        let before = b;
        assert_eq!(b.charge_approx(0.5, 1e-9), Err(Error::BudgetExhausted));
        assert_eq!(b, before);
        b.charge_approx(0.5, 0.0).unwrap();
        assert_eq!((b.spent(), b.delta_spent()), (0.5, 0.0));
        // (ε, δ): both add up; either running out refuses the whole charge.
        let mut b = PrivacyBudget::new_approx(1.0, 1e-6).unwrap();
        b.charge_approx(0.25, 2.5e-7).unwrap();
        b.charge(0.25).unwrap();
        b.charge_approx(0.25, 5e-7).unwrap();
        assert_eq!((b.spent(), b.delta_spent()), (0.75, 7.5e-7));
        assert!(b.remaining_delta() <= 1e-6 - 7.5e-7 && b.remaining_delta() > 2.4e-7);
        let before = b;
        assert_eq!(b.charge_approx(0.25, 3e-7), Err(Error::BudgetExhausted)); // δ short
        assert_eq!(b.charge_approx(0.5, 1e-7), Err(Error::BudgetExhausted)); // ε short
        assert_eq!(b, before);
        b.charge_approx(b.remaining(), b.remaining_delta()).unwrap();
        assert!(b.spent() <= 1.0 && b.delta_spent() <= 1e-6);
        for d in [-1e-9, 1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(b.charge_approx(0.1, d), Err(Error::InvalidArgument), "{d}");
            assert_eq!(PrivacyBudget::new_approx(1.0, d), Err(Error::InvalidArgument), "{d}");
        }
        assert_eq!(PrivacyBudget::new_approx(0.0, 0.5), Err(Error::InvalidEpsilon));
        // The exact sum of the δ charges never exceeds the δ total: ten 1e-7 against 1e-6.
        let mut b = PrivacyBudget::new_approx(10.0, 1e-6).unwrap();
        let mut n = 0;
        while b.charge_approx(0.5, 1e-7).is_ok() {
            n += 1;
        }
        assert!(n <= 10 && b.delta_spent() <= 1e-6, "{n}");
    }

    #[test]
    fn restore_accepts_exactly_the_reachable_states() {
        let b = PrivacyBudget::restore(1.0, 0.25, 1e-6, 1e-7).unwrap();
        assert_eq!(
            (b.total(), b.spent(), b.delta_total(), b.delta_spent()),
            (1.0, 0.25, 1e-6, 1e-7)
        );
        assert_eq!(
            PrivacyBudget::restore(1.0, -0.0, 0.0, -0.0).unwrap(),
            PrivacyBudget::new(1.0).unwrap()
        );
        for (t, s, dt, ds) in [
            (0.0, 0.0, 0.0, 0.0),
            (1.0, 1.5, 0.0, 0.0),
            (1.0, -0.1, 0.0, 0.0),
            (1.0, f64::NAN, 0.0, 0.0),
            (f64::INFINITY, 0.0, 0.0, 0.0),
            (1.0, 0.0, 1.0, 0.0),
            (1.0, 0.0, -1e-9, 0.0),
            (1.0, 0.0, 1e-6, 2e-6),
            (1.0, 0.0, 1e-6, -1e-9),
            (1.0, 0.0, f64::NAN, 0.0),
            (1.0, 0.0, 0.0, 1e-9),
        ] {
            assert_eq!(
                PrivacyBudget::restore(t, s, dt, ds),
                Err(Error::InvalidArgument),
                "{t} {s} {dt} {ds}"
            );
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
