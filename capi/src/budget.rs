//! The privacy budget (sequential composition of (ε, δ) charges) and the advanced composition bound.

use crate::buffers::{check_disjoint, check_out, Region};
use crate::status::{dpmo_status, status_of};
use dpmo_core::privacy::{advanced_composition_epsilon, PrivacyBudget};
use dpmo_core::Error;

/// A privacy budget under sequential (basic) composition: mechanisms that are (ε₁, δ₁)-, (ε₂, δ₂)-, … -DP
/// run on the same data are (Σ ε_j, Σ δ_j)-DP together. Plain data owned by the caller; initialise it with
/// `dpmo_budget_init` (pure ε: δ total 0) or `dpmo_budget_init_approx` and let every mechanism taking a
/// `dpmo_budget *` charge it (or charge it yourself with `dpmo_budget_charge` or
/// `dpmo_budget_charge_approx`). A pure-ε budget accepts every pure-ε charge and refuses any charge with
/// δ > 0 (`DPMO_BUDGET_EXHAUSTED`).
///
/// `spent` and `delta_spent` are kept as upper bounds of the exact sums of the successful charges, and the
/// remaining amounts are rounded down, so neither exact sum ever exceeds its total, and charging exactly
/// what `dpmo_budget_remaining_approx` reports always succeeds. No tolerance is applied: ten charges of 0.1
/// against a total of 1 are refused at the tenth (the double 0.1 is slightly above 1/10); charge the
/// remaining amount last, or use dyadic shares (0.125).
///
/// Every function taking a budget refuses, with `DPMO_INVALID_ARGUMENT`, one that is not finite with
/// 0 < `total`, 0 ≤ `spent` ≤ `total`, 0 ≤ `delta_total` < 1 and 0 ≤ `delta_spent` ≤ `delta_total` (that
/// is, one the init and charge functions could not have produced).
///
/// Source compatibility: the δ fields come last, so code written for the two-field struct of dpmo 0.2 still
/// compiles; such code must initialise the budget with `dpmo_budget_init` (or zero the whole struct) rather
/// than set `total` and `spent` alone, since uninitialised δ fields make it invalid.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_budget {
    /// The total ε (> 0, finite).
    pub total: f64,
    /// The ε spent so far (0 ≤ spent ≤ total).
    pub spent: f64,
    /// The total δ (0 ≤ delta_total < 1; 0 for a pure-ε budget).
    pub delta_total: f64,
    /// The δ spent so far (0 ≤ delta_spent ≤ delta_total).
    pub delta_spent: f64,
}

/// Checks and copies the budget at `budget` into the core accountant.
///
/// # Safety
/// `budget` must be null or point to a readable `dpmo_budget`.
pub(crate) unsafe fn load(budget: *const dpmo_budget) -> Result<PrivacyBudget, Error> {
    check_out(budget.cast_mut())?;
    // SAFETY: non-null and aligned (checked); validity is the caller's contract.
    let b = unsafe { budget.read() };
    PrivacyBudget::restore(b.total, b.spent, b.delta_total, b.delta_spent)
}

fn store(budget: *mut dpmo_budget, p: &PrivacyBudget) {
    // SAFETY: every caller checked `budget` non-null, aligned and disjoint from the other buffers.
    unsafe {
        budget.write(dpmo_budget {
            total: p.total(),
            spent: p.spent(),
            delta_total: p.delta_total(),
            delta_spent: p.delta_spent(),
        })
    };
}

/// The region of an optional budget (empty when null), for overlap checks.
pub(crate) fn budget_region(budget: *const dpmo_budget) -> Region {
    if budget.is_null() {
        Region::EMPTY
    } else {
        Region::of(budget, 1)
    }
}

/// An optional budget charge, written *before* a mechanism looks at the private data, so that no failure
/// caused by the data can be free (a refused selection would otherwise reveal something at no cost).
///
/// The charge is refused up front (`DPMO_BUDGET_EXHAUSTED`, nothing written) when the budget left is too
/// small. Once the mechanism has run, [`Charged::settle`] keeps the charge on success and on a failure
/// caused by the data (a non-finite utility, an invalid local-sensitivity value, an overflow), and refunds it
/// on a failure caused by the arguments — unless a callback of the caller changed the budget meanwhile, in
/// which case the charge is kept (over-charging is the safe side).
pub(crate) struct Charged {
    budget: *mut dpmo_budget,
    before: dpmo_budget,
    after: dpmo_budget,
}

/// True for the failures a mechanism reports about the private data rather than about its arguments.
pub(crate) fn caused_by_data(e: Error) -> bool {
    matches!(
        e,
        Error::NonFiniteInput | Error::InvalidSensitivityValue | Error::Overflow
    )
}

fn same(a: &dpmo_budget, b: &dpmo_budget) -> bool {
    a.total.to_bits() == b.total.to_bits()
        && a.spent.to_bits() == b.spent.to_bits()
        && a.delta_total.to_bits() == b.delta_total.to_bits()
        && a.delta_spent.to_bits() == b.delta_spent.to_bits()
}

impl Charged {
    /// Loads the budget (if not null), charges `epsilon` and writes it back.
    ///
    /// # Safety
    /// `budget` must be null or point to a valid `dpmo_budget`, disjoint from every other buffer.
    pub(crate) unsafe fn charge(budget: *mut dpmo_budget, epsilon: f64) -> Result<Option<Self>, Error> {
        // SAFETY: forwarded caller contract.
        unsafe { Self::charge_approx(budget, epsilon, 0.0) }
    }

    /// Loads the budget (if not null), charges (`epsilon`, `delta`) and writes it back.
    ///
    /// # Safety
    /// As [`Charged::charge`].
    pub(crate) unsafe fn charge_approx(
        budget: *mut dpmo_budget,
        epsilon: f64,
        delta: f64,
    ) -> Result<Option<Self>, Error> {
        if budget.is_null() {
            return Ok(None);
        }
        // SAFETY: forwarded caller contract.
        let mut p = unsafe { load(budget) }?;
        // SAFETY: as above.
        let before = unsafe { budget.read() };
        p.charge_approx(epsilon, delta)?;
        store(budget, &p);
        // SAFETY: as above.
        let after = unsafe { budget.read() };
        Ok(Some(Charged { budget, before, after }))
    }

    /// Pay-what-you-get: after a successful run whose actual cost (`epsilon`, `delta`) is at most what was
    /// charged up front, replaces the up-front charge by the actual one — as if only the actual charge had
    /// been made (the exact sums stay upper-bounded as for any charge). Leaves the budget as it is when a
    /// callback changed it meanwhile, or when the actual charge cannot be made (over-charging is the safe
    /// side).
    pub(crate) fn settle_actual(charge: Option<Self>, epsilon: f64, delta: f64) {
        let Some(c) = charge else { return };
        // SAFETY: `charge` checked the pointer; the budget outlives the call (caller contract).
        let now = unsafe { c.budget.read() };
        if !same(&now, &c.after) {
            return;
        }
        let Ok(mut p) = PrivacyBudget::restore(
            c.before.total,
            c.before.spent,
            c.before.delta_total,
            c.before.delta_spent,
        ) else {
            return;
        };
        if p.charge_approx(epsilon, delta).is_ok() {
            store(c.budget, &p);
        }
    }

    /// Keeps or refunds the charge according to the mechanism's result (see the type's documentation).
    pub(crate) fn settle<T>(charge: Option<Self>, result: Result<T, Error>) -> Result<T, Error> {
        if let (Some(c), Err(e)) = (charge, &result) {
            // SAFETY: `charge` checked the pointer; the budget outlives the call (caller contract).
            let now = unsafe { c.budget.read() };
            if !caused_by_data(*e) && same(&now, &c.after) {
                // SAFETY: as above.
                unsafe { c.budget.write(c.before) };
            }
        }
        result
    }
}

/// Initialises `*budget` to a fresh pure-ε budget of `total_epsilon` (spent = 0, δ total 0).
///
/// Errors: a null or misaligned `budget`; `total_epsilon` not finite or ≤ 0 → `DPMO_INVALID_EPSILON`.
///
/// # Safety
/// `budget`: one writable `dpmo_budget`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_budget_init(budget: *mut dpmo_budget, total_epsilon: f64) -> dpmo_status {
    status_of((|| {
        check_out(budget)?;
        let p = PrivacyBudget::new(total_epsilon)?;
        store(budget, &p);
        Ok(())
    })())
}

/// Initialises `*budget` to a fresh (ε, δ) budget: `total_epsilon` > 0, `total_delta` ∈ [0, 1) (0 gives
/// the pure-ε budget of `dpmo_budget_init`); nothing spent.
///
/// Errors: a null or misaligned `budget`; `total_epsilon` not finite or ≤ 0 → `DPMO_INVALID_EPSILON`;
/// `total_delta` not finite or outside [0, 1) → `DPMO_INVALID_ARGUMENT`.
///
/// # Safety
/// `budget`: one writable `dpmo_budget`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_budget_init_approx(
    budget: *mut dpmo_budget,
    total_epsilon: f64,
    total_delta: f64,
) -> dpmo_status {
    status_of((|| {
        check_out(budget)?;
        let p = PrivacyBudget::new_approx(total_epsilon, total_delta)?;
        store(budget, &p);
        Ok(())
    })())
}

/// Records an (ε, δ)-DP mechanism run outside dpmo (sequential composition): adds `epsilon` to `spent`
/// and `delta` to `delta_spent`.
///
/// Errors (budget unchanged): a null, misaligned or invalid budget; `epsilon` not finite or ≤ 0 →
/// `DPMO_INVALID_EPSILON`; `delta` not finite or outside [0, 1) → `DPMO_INVALID_ARGUMENT`; the exact sum of
/// the ε charges would exceed `total`, or that of the δ charges `delta_total` → `DPMO_BUDGET_EXHAUSTED`.
///
/// # Safety
/// `budget`: one readable and writable `dpmo_budget`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_budget_charge_approx(budget: *mut dpmo_budget, epsilon: f64, delta: f64) -> dpmo_status {
    status_of((|| {
        // SAFETY: forwarded caller contract.
        let mut p = unsafe { load(budget) }?;
        p.charge_approx(epsilon, delta)?;
        store(budget, &p);
        Ok(())
    })())
}

/// Writes the ε and the δ still available to `*out_epsilon` and `*out_delta`: lower bounds of
/// total − spent and delta_total − delta_spent, never negative (δ is 0 for a pure-ε budget). Charging
/// exactly these values succeeds when the ε is > 0.
///
/// Errors: a null, misaligned or invalid budget; a null, misaligned or overlapping output.
///
/// # Safety
/// `budget`: one readable `dpmo_budget`; `out_epsilon`, `out_delta`: one writable double each.
#[no_mangle]
pub unsafe extern "C" fn dpmo_budget_remaining_approx(
    budget: *const dpmo_budget,
    out_epsilon: *mut f64,
    out_delta: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_epsilon)?;
        check_out(out_delta)?;
        // SAFETY: forwarded caller contract.
        let p = unsafe { load(budget) }?;
        let (e, d) = (Region::of(out_epsilon, 1), Region::of(out_delta, 1));
        check_disjoint(&[e, d], &[Region::of(budget, 1)])?;
        // SAFETY: checked non-null, aligned and disjoint from each other and from the budget.
        unsafe {
            out_epsilon.write(p.remaining());
            out_delta.write(p.remaining_delta());
        }
        Ok(())
    })())
}

/// Records a pure ε-DP mechanism run with `epsilon` outside dpmo (sequential composition): adds it to
/// `spent` (the charge (ε, 0) of `dpmo_budget_charge_approx`).
///
/// Errors (budget unchanged): a null, misaligned or invalid budget; `epsilon` not finite or ≤ 0 →
/// `DPMO_INVALID_EPSILON`; the exact sum of the charges would exceed `total` → `DPMO_BUDGET_EXHAUSTED`.
///
/// # Safety
/// `budget`: one readable and writable `dpmo_budget`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_budget_charge(budget: *mut dpmo_budget, epsilon: f64) -> dpmo_status {
    status_of((|| {
        // SAFETY: forwarded caller contract.
        let mut p = unsafe { load(budget) }?;
        p.charge(epsilon)?;
        store(budget, &p);
        Ok(())
    })())
}

/// Writes the ε still available to `*out_remaining`: a lower bound of total − spent, never negative.
/// Charging exactly this value succeeds when it is > 0.
///
/// Errors: a null, misaligned or invalid budget; a null, misaligned or overlapping `out_remaining`.
///
/// # Safety
/// `budget`: one readable `dpmo_budget`; `out_remaining`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_budget_remaining(budget: *const dpmo_budget, out_remaining: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out_remaining)?;
        // SAFETY: forwarded caller contract.
        let p = unsafe { load(budget) }?;
        check_disjoint(&[Region::of(out_remaining, 1)], &[Region::of(budget, 1)])?;
        // SAFETY: checked non-null, aligned and disjoint from the budget.
        unsafe { out_remaining.write(p.remaining()) };
        Ok(())
    })())
}

/// Advanced composition (Kearns et al., SI Lemma 4, after Dwork–Rothblum–Vadhan): k adaptively composed
/// ε₀-DP mechanisms are (ε, δ′)-DP with ε = ε₀ √(8 k ln(1/δ′)). Where that simplified form is not implied
/// by the Dwork–Rothblum–Vadhan bound ε₀ √(2 k ln(1/δ′)) + k ε₀ (e^ε₀ − 1) (Dwork and Roth, Thm. 3.20), the
/// latter is returned instead, so the value written to `*out_epsilon` is always a valid guarantee. Basic
/// composition (k ε₀, δ′ = 0) may be smaller: compare if needed.
///
/// Errors: ε₀ not finite or ≤ 0 → `DPMO_INVALID_EPSILON`; k = 0 or δ′ ∉ (0, 1) → `DPMO_INVALID_ARGUMENT`;
/// a non-finite result → `DPMO_OVERFLOW`; a null or misaligned `out_epsilon`.
///
/// # Safety
/// `out_epsilon`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_advanced_composition(
    eps0: f64,
    k: usize,
    delta_prime: f64,
    out_epsilon: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_epsilon)?;
        let e = advanced_composition_epsilon(eps0, k, delta_prime)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_epsilon.write(e) };
        Ok(())
    })())
}
