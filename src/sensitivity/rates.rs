//! True positive rate and true negative rate of a classifier (PrivPareto paper, §6.2.3), with admissible
//! sensitivity functions that replace the printed Lemma 6.1.
//!
//! TPR = TP / P with P = TP + FN, and TNR = TN / N with N = TN + FP; a rate over an empty class is defined
//! as 0. Both lie in [0, 1], and Example 6.2 (one positive record whose prediction flips) attains a change
//! of 1, so Δ = 1.
//!
//! **Why not Lemma 6.1 as printed.** Its δ keeps the true positives fixed while t ≤ P − TP, i.e. it
//! assumes the worst neighbour at distance t removes false negatives. For x = (TP 1, FN 2) that gives
//! δ(x, 1) = 1/2, yet the neighbour y = (TP 0, FN 2) has δ(y, 0) = 1 (adding one true positive moves TPR
//! from 0 to 1/3, and the printed formula evaluates to 1 there), violating condition 2 of Local Dampening
//! Def. 3.3. Under substitution neighbours even condition 1 fails (P = 10, TP = 5: flipping one prediction
//! moves TPR by 1/10 > 5/90). The worst case at distance t removes records from the *smaller* of TP and
//! FN, which the functions below account for (docs/DESIGN.md §2). Both relations are verified by brute force
//! over all confusion counts up to 24 in `tests/admissibility.rs`, where the printed formula is caught.
//!
//! Let P′ = P − t (in the counts of x). With k = max(TP, FN):
//! - add/remove one record: δ(x, t) = 1 if P′ ≤ 1, otherwise min(1, min(P′, k) / (P′(P′ − 1)));
//! - substitute one record: the maximum of the above and 1/P′ (a flipped prediction moves TPR by 1/P).
//!
//! **Proof** (for hits = TP, misses = FN; TNR is symmetric). Write k = max(TP, FN), so k ≥ P/2, and
//! note that δ is non-decreasing in k at fixed P′ and non-decreasing in t (P′ shrinks).
//! *Condition 1* (t = 0, P ≥ 2; P ≤ 1 gives δ = 1 = Δ): removing a TP moves TPR by FN/(P(P − 1)), removing
//! a FN by TP/(P(P − 1)), adding either by at most max(TP, FN)/(P(P + 1)), a flip by 1/P; all are covered.
//! *Condition 2*: let p = P − t − 1 be x's P′ at t + 1; if p ≤ 1 then δ(x, t + 1) = 1. Otherwise, for a
//! neighbour y at distance t: (i) y = x with a record of the other class added or removed: monotone in t;
//! (ii) y has one positive fewer: same P′ = p and k_y ≤ k; (iii) y has one positive more: P′_y = p + 2,
//! k_y ≤ k + 1; if k ≥ p, δ(y) ≤ 1/(p + 1) < 1/(p − 1) = δ(x); if k < p we need
//! (k + 1)p(p − 1) ≤ k(p + 2)(p + 1), i.e. p(p − 1) ≤ k(4p + 2), true as k ≥ (p + 1)/2; the 1/P′ term
//! shrinks; (iv) substitution flip: P′_y = p + 1, k_y ≤ k + 1; if k ≥ p, δ(y) ≤ 1/p ≤ δ(x); if k < p we need
//! (k + 1)(p − 1) ≤ k(p + 1), i.e. p − 1 ≤ 2k, true as 2k ≥ P = p + t + 1; and 1/(p + 1) ≤ 1/p.
//! The brute-force test confirms both relations on all counts up to 24 (0 violations) and catches the
//! printed formula, which also fails condition 1: at t = 0 it covers only FN/(P(P − 1)), not TP/(P(P − 1)).

use crate::Error;

/// Δ = 1: the global sensitivity of TPR and TNR (PrivPareto paper, Example 6.2), under both relations.
pub const RATE_GLOBAL_SENSITIVITY: f64 = 1.0;

/// Which databases are neighbours for the rate sensitivities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RateNeighbours {
    /// Databases differing by one added or removed record (unbounded DP, the paper's relation).
    AddRemove,
    /// Databases of the same size differing in one record's value (bounded DP). A substitution may change
    /// a record's class or prediction, so it includes the flip TP ↔ FN.
    Substitution,
}

/// The rate hits / (hits + misses), 0 when there are no records in the class.
#[inline]
fn rate(hits: u64, misses: u64) -> f64 {
    let total = hits as f64 + misses as f64;
    if total == 0.0 {
        0.0
    } else {
        hits as f64 / total
    }
}

/// TPR = TP / (TP + FN), defined as 0 when there are no positives (PrivPareto paper, §6.2.3).
/// Neighbour relation: [`RateNeighbours`]; Δ = 1.
#[inline]
pub fn tpr(tp: u64, fn_: u64) -> f64 {
    rate(tp, fn_)
}

/// TNR = TN / (TN + FP), defined as 0 when there are no negatives (PrivPareto paper, §6.2.3).
/// Neighbour relation: [`RateNeighbours`]; Δ = 1.
#[inline]
pub fn tnr(tn: u64, fp: u64) -> f64 {
    rate(tn, fp)
}

/// The admissible δ of a rate hits / (hits + misses) at distance `t` (the corrected form of PrivPareto
/// Lemma 6.1 described in the module documentation), already clamped to Δ = 1.
pub fn rate_delta(hits: u64, misses: u64, t: u64, relation: RateNeighbours) -> f64 {
    let p = hits.saturating_add(misses);
    let pp = p.saturating_sub(t);
    if pp <= 1 {
        return RATE_GLOBAL_SENSITIVITY;
    }
    let ppf = pp as f64;
    let k = hits.max(misses).min(pp) as f64;
    let remove = k / (ppf * (ppf - 1.0));
    let d = match relation {
        RateNeighbours::AddRemove => remove,
        RateNeighbours::Substitution => remove.max(1.0 / ppf),
    };
    d.min(RATE_GLOBAL_SENSITIVITY)
}

/// δ^TPR(x, t) for the confusion counts (TP, FN) of one candidate; see [`rate_delta`]. Δ = 1.
#[inline]
pub fn tpr_delta(tp: u64, fn_: u64, t: u64, relation: RateNeighbours) -> f64 {
    rate_delta(tp, fn_, t, relation)
}

/// δ^TNR(x, t) for the confusion counts (TN, FP) of one candidate; see [`rate_delta`]. Δ = 1.
#[inline]
pub fn tnr_delta(tn: u64, fp: u64, t: u64, relation: RateNeighbours) -> f64 {
    rate_delta(tn, fp, t, relation)
}

/// Fills the n × `columns` row-major table `out[r · columns + t]` = [`rate_delta`]`(hits[r], misses[r], t)`
/// for n candidates (e.g. trees), ready for
/// [`DeltaSource::Table`](crate::sensitivity::DeltaSource::Table). Pass (TP, FN) for TPR, (TN, FP) for TNR.
///
/// Errors: `hits` and `misses` of different lengths, or `out.len()` ≠ n · `columns` → [`Error::LengthMismatch`].
pub fn rate_delta_table(
    hits: &[u64],
    misses: &[u64],
    relation: RateNeighbours,
    columns: usize,
    out: &mut [f64],
) -> Result<(), Error> {
    if hits.len() != misses.len() || hits.len().checked_mul(columns) != Some(out.len()) {
        return Err(Error::LengthMismatch);
    }
    if columns == 0 {
        return Ok(());
    }
    for (r, row) in out.chunks_exact_mut(columns).enumerate() {
        for (t, slot) in row.iter_mut().enumerate() {
            *slot = rate_delta(hits[r], misses[r], t as u64, relation);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_example_6_2() {
        assert_eq!(tpr(0, 0), 0.0);
        assert_eq!(tpr(1, 0) - tpr(0, 1), 1.0); // Example 6.2: ΔTPR = 1
        assert_eq!(tnr(3, 1), 0.75);
        assert_eq!(rate_delta(1, 0, 0, RateNeighbours::AddRemove), 1.0);
        assert_eq!(rate_delta(1, 2, 1, RateNeighbours::AddRemove), 1.0); // printed Lemma 6.1: 1/2
        assert_eq!(rate_delta(5, 5, 0, RateNeighbours::AddRemove), 5.0 / 90.0);
        assert_eq!(rate_delta(5, 5, 0, RateNeighbours::Substitution), 0.1);
        let huge = rate_delta(u64::MAX, u64::MAX, 0, RateNeighbours::AddRemove);
        assert!(huge.is_finite() && huge >= 0.0);
        let mut out = [0.0; 4];
        rate_delta_table(&[5, 0], &[5, 0], RateNeighbours::AddRemove, 2, &mut out).unwrap();
        assert_eq!(out, [5.0 / 90.0, 5.0 / 72.0, 1.0, 1.0]);
        assert_eq!(
            rate_delta_table(&[5], &[5, 0], RateNeighbours::AddRemove, 2, &mut out),
            Err(Error::LengthMismatch)
        );
    }
}
