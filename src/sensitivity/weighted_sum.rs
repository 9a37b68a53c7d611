//! PrivAgg's aggregate utility u_agg(x, r) = Σ_i w_i · u_i(x, r) and its sensitivities (PrivPareto
//! paper, §5: Def. 5.1/5.2, Thm. 5.3 and 5.4). Weights may have any sign; the sensitivities use |w_i|.
//!
//! The sensitivity sums are rounded upward (one ulp, only when inexact), so a computed bound is never
//! below the exact-arithmetic one; the clamped table values never exceed the computed Δ_agg because both
//! are summed in the same order with the same monotone rounding.

use super::LocalSensitivity;
use crate::exact::grid::decompose;
use crate::exact::Grid;
use crate::float::{add_up, mul_up};
use crate::{Error, MAX_OBJECTIVES};

fn check_weights(weights: &[f64]) -> Result<(), Error> {
    if weights.is_empty() {
        return Err(Error::InvalidArgument);
    }
    if weights.len() > MAX_OBJECTIVES {
        return Err(Error::CapacityExceeded);
    }
    if !weights.iter().all(|w| w.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    Ok(())
}

/// Writes u_agg(x, r) = Σ_i w_i · u_i(x, r) (PrivPareto paper, §5) for every candidate into `out[r]`;
/// `utilities` is n × m row-major with m = `weights.len()`. O(n m).
///
/// Errors (nothing written to `out`): no weights → [`Error::InvalidArgument`]; more than
/// [`crate::MAX_OBJECTIVES`] → [`Error::CapacityExceeded`]; `utilities.len()` ≠ `out.len()` · m →
/// [`Error::LengthMismatch`]; n = 0 → [`Error::EmptyInput`]; a NaN or infinite weight or utility →
/// [`Error::NonFiniteInput`]; a sum beyond the `f64` range → [`Error::Overflow`].
pub fn weighted_sum(utilities: &[f64], weights: &[f64], out: &mut [f64]) -> Result<(), Error> {
    check_weights(weights)?;
    let m = weights.len();
    if out.len().checked_mul(m) != Some(utilities.len()) {
        return Err(Error::LengthMismatch);
    }
    if out.is_empty() {
        return Err(Error::EmptyInput);
    }
    if !utilities.iter().all(|u| u.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    let agg = |row: &[f64]| row.iter().zip(weights).map(|(u, w)| u * w).sum::<f64>();
    // First pass only checks, so an overflow leaves `out` untouched.
    if !utilities.chunks_exact(m).all(|row| agg(row).is_finite()) {
        return Err(Error::Overflow);
    }
    for (o, row) in out.iter_mut().zip(utilities.chunks_exact(m)) {
        *o = agg(row);
    }
    Ok(())
}

/// Δu_agg ≤ Σ_i |w_i| · Δu_i (PrivPareto paper, Thm. 5.3): the global sensitivity for PrivAgg_global
/// (Def. 5.1), from the objectives' global sensitivities `globals[i]` = Δu_i. O(m).
///
/// Errors: as [`weighted_sum`] for the weights; `globals.len()` ≠ m → [`Error::LengthMismatch`]; a Δu_i
/// not finite and > 0 → [`Error::InvalidSensitivity`]; every weight zero (Δ would be 0, not a valid
/// sensitivity) → [`Error::InvalidArgument`]; a sum beyond the `f64` range → [`Error::Overflow`].
pub fn weighted_global_sensitivity(weights: &[f64], globals: &[f64]) -> Result<f64, Error> {
    check_weights(weights)?;
    if globals.len() != weights.len() {
        return Err(Error::LengthMismatch);
    }
    if !globals.iter().all(|g| g.is_finite() && *g > 0.0) {
        return Err(Error::InvalidSensitivity);
    }
    let total = weights
        .iter()
        .zip(globals)
        .fold(0.0, |acc, (w, g)| add_up(acc, mul_up(w.abs(), *g)));
    if !total.is_finite() {
        return Err(Error::Overflow);
    }
    if total <= 0.0 {
        return Err(Error::InvalidArgument);
    }
    Ok(total)
}

/// The largest saturation distance among the objectives' sensitivities: from there on every δ_i = Δ_i,
/// hence δ_agg = Δ_agg, so it is the natural `columns` for [`weighted_sensitivity_table`] (0 for none).
pub fn weighted_saturation(deltas: &[LocalSensitivity<'_>]) -> usize {
    deltas.iter().map(|d| d.saturation()).max().unwrap_or(0)
}

/// Fills the row-major n × `columns` table `out[r * columns + t]` = δ_agg(x, t, r) = Σ_i |w_i| · δ_i(x, t, r)
/// (PrivPareto paper, Thm. 5.4: admissible, using *each* objective's own δ_i and the absolute weights),
/// and returns Δ_agg = Σ_i |w_i| Δ_i (Thm. 5.3). The table is ready for the dampening stage as
/// `LocalSensitivity::new(DeltaSource::Table { values: out, columns }, delta_agg, columns, n)`; with
/// `columns` ≥ [`weighted_saturation`] nothing is lost by the saturation beyond it. O(n · m · columns).
///
/// Errors (nothing written to `out`): as [`weighted_global_sensitivity`] for the weights (with `deltas` in
/// place of `globals`); sensitivities for different numbers of candidates, or `out.len()` ≠ n · `columns`
/// → [`Error::LengthMismatch`]; n = 0 → [`Error::EmptyInput`]; `columns` = 0 → [`Error::InvalidArgument`].
/// A NaN, negative or infinite δ_i value counts as Δ_i ([`LocalSensitivity::delta`]), never a status.
pub fn weighted_sensitivity_table(
    weights: &[f64],
    deltas: &[LocalSensitivity<'_>],
    columns: usize,
    out: &mut [f64],
) -> Result<f64, Error> {
    check_weights(weights)?;
    if deltas.len() != weights.len() {
        return Err(Error::LengthMismatch);
    }
    let n = deltas[0].len();
    if deltas.iter().any(|d| d.len() != n) {
        return Err(Error::LengthMismatch);
    }
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    if columns == 0 {
        return Err(Error::InvalidArgument);
    }
    if n.checked_mul(columns) != Some(out.len()) {
        return Err(Error::LengthMismatch);
    }
    let mut globals = [0.0; MAX_OBJECTIVES];
    for (g, d) in globals.iter_mut().zip(deltas) {
        *g = d.global();
    }
    let delta_agg = weighted_global_sensitivity(weights, &globals[..deltas.len()])?;
    let at = |r: usize, t: usize| -> Result<f64, Error> {
        let mut s = 0.0;
        for (w, d) in weights.iter().zip(deltas) {
            s = add_up(s, mul_up(w.abs(), d.delta(r, t)?));
        }
        Ok(s)
    };
    for (r, row) in out.chunks_exact_mut(columns).enumerate() {
        for (t, slot) in row.iter_mut().enumerate() {
            // Equal to Δ_agg once every δ_i is saturated; never above it (same order, monotone rounding).
            *slot = at(r, t)?.min(delta_agg);
        }
    }
    Ok(delta_agg)
}

/// The exact form of the weighted sum (PrivAgg in exact arithmetic), on a grid of unit h = 2^j with
/// j = ⌊log₂ Δ_agg⌋ − 56:
/// * the integer utility U(r) = Σ_i ⌊w_i u_i(r) / h⌋, each term computed exactly from the 106-bit product
///   and clamped to ±2⁵⁶ N (monotone and 1-Lipschitz);
/// * its sensitivity N = Σ_i ⌈|w_i| Δ_i / h⌉ grid units, exactly: |⌊a/h⌋ − ⌊b/h⌋| ≤ ⌈|a − b|/h⌉ for each
///   term, and |w_i u_i(x) − w_i u_i(y)| ≤ |w_i| Δ_i — so N h exceeds Δ_agg = Σ |w_i| Δ_i by at most m h, a
///   slack of at most 16 · 2⁻⁵⁶ relative, accounted for exactly;
/// * the local sensitivity δ′(t, r) = Σ_i ⌈|w_i| δ_i(t, r) / h⌉, admissible for U: condition 1 by the same
///   term-wise bound with δ_i(x, 0) ≥ |u_i(x) − u_i(y)|, condition 2 because each ceiling is monotone.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WeightedGrid {
    grid: Grid,
    term_limit: i128,
}

impl WeightedGrid {
    /// The grid for these weights and global sensitivities Δ_i. Errors as
    /// [`weighted_global_sensitivity`].
    pub(crate) fn new(weights: &[f64], globals: &[f64]) -> Result<Self, Error> {
        let total = weighted_global_sensitivity(weights, globals)?;
        let (m, e) = decompose(total);
        // ⌊log₂ Δ_agg⌋ from the mantissa's length; the grid is 2^56 times finer.
        let log2 = e + 63 - m.leading_zeros() as i32;
        let probe = Grid::new(log2 - 56, 1);
        let units = weights
            .iter()
            .zip(globals)
            .map(|(w, g)| probe.ceil_product_capped(w.abs(), *g, u64::MAX))
            .fold(0u64, u64::saturating_add);
        let grid = Grid::new(log2 - 56, units);
        Ok(WeightedGrid {
            grid,
            term_limit: i128::from(grid.units()) << 56,
        })
    }

    /// N, the sensitivity of [`Self::utility`] in grid units (below 2⁵⁸).
    pub(crate) fn units(&self) -> u64 {
        self.grid.units()
    }

    /// The grid itself (unit 2^j, N units).
    pub(crate) fn grid(&self) -> Grid {
        self.grid
    }

    /// U(r) for one row of utilities (NaN counts as −f64::MAX and ±∞ as ±f64::MAX: the public rule for
    /// private values).
    pub(crate) fn utility(&self, row: &[f64], weights: &[f64]) -> i128 {
        row.iter()
            .zip(weights)
            .map(|(u, w)| {
                self.grid
                    .floor_product_clamped(*w, crate::select::finite(*u), self.term_limit)
            })
            .sum()
    }

    /// δ′(t, r) for the objectives' sensitivities.
    pub(crate) fn delta(
        &self,
        weights: &[f64],
        deltas: &[LocalSensitivity<'_>],
        r: usize,
        t: usize,
    ) -> Result<u64, Error> {
        let mut s = 0u64;
        for (w, d) in weights.iter().zip(deltas) {
            s = s.saturating_add(self.grid.ceil_product_capped(w.abs(), d.delta(r, t)?, u64::MAX));
        }
        Ok(s.min(self.grid.units()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensitivity::DeltaSource;

    #[test]
    fn sums_and_sensitivities() {
        let u = [1.0, 2.0, 3.0, -4.0];
        let w = [2.0, -0.5];
        let mut out = [0.0; 2];
        weighted_sum(&u, &w, &mut out).unwrap();
        assert_eq!(out, [1.0, 8.0]);
        assert_eq!(weighted_global_sensitivity(&w, &[1.0, 4.0]), Ok(4.0));
        let d1 = LocalSensitivity::new(DeltaSource::PerCandidate(&[0.5, 1.0]), 1.0, 3, 2).unwrap();
        let t2 = [0.0, 2.0, 4.0, 1.0];
        let d2 = LocalSensitivity::new(
            DeltaSource::Table {
                values: &t2,
                columns: 2,
            },
            4.0,
            3,
            2,
        )
        .unwrap();
        assert_eq!(weighted_saturation(&[d1, d2]), 3);
        let mut table = [0.0; 6];
        let agg = weighted_sensitivity_table(&w, &[d1, d2], 3, &mut table).unwrap();
        assert_eq!(agg, 4.0);
        assert_eq!(table, [1.0, 2.0, 3.0, 4.0, 2.5, 4.0]);
    }

    #[test]
    fn errors_leave_output_alone() {
        let mut out = [7.0; 2];
        assert_eq!(weighted_sum(&[1.0, 2.0], &[], &mut out), Err(Error::InvalidArgument));
        assert_eq!(
            weighted_sum(&[1.0, 2.0], &[1.0; 17], &mut out),
            Err(Error::CapacityExceeded)
        );
        assert_eq!(
            weighted_sum(&[1.0, 2.0, 3.0], &[1.0], &mut out),
            Err(Error::LengthMismatch)
        );
        assert_eq!(weighted_sum(&[], &[1.0], &mut []), Err(Error::EmptyInput));
        assert_eq!(
            weighted_sum(&[1.0, 2.0], &[f64::NAN], &mut out),
            Err(Error::NonFiniteInput)
        );
        assert_eq!(
            weighted_sum(&[1.0, f64::INFINITY], &[1.0], &mut out),
            Err(Error::NonFiniteInput)
        );
        assert_eq!(
            weighted_sum(&[f64::MAX, f64::MAX], &[2.0], &mut out),
            Err(Error::Overflow)
        );
        assert_eq!(out, [7.0; 2]);
        assert_eq!(
            weighted_global_sensitivity(&[0.0, 0.0], &[1.0, 1.0]),
            Err(Error::InvalidArgument)
        );
        assert_eq!(
            weighted_global_sensitivity(&[1.0], &[0.0]),
            Err(Error::InvalidSensitivity)
        );
        assert_eq!(
            weighted_global_sensitivity(&[1.0], &[1.0, 1.0]),
            Err(Error::LengthMismatch)
        );
        assert_eq!(
            weighted_global_sensitivity(&[f64::MAX, f64::MAX], &[2.0, 2.0]),
            Err(Error::Overflow)
        );
        let f = |_r: usize, t: usize| if t == 1 { f64::NAN } else { 0.5 };
        let d = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, 4, 2).unwrap();
        let mut table = [7.0; 4];
        // A NaN δ value is private data: it counts as Δ (the public rule), never a status.
        assert_eq!(weighted_sensitivity_table(&[1.0], &[d], 2, &mut table), Ok(1.0));
        assert_eq!(table, [0.5, 1.0, 0.5, 1.0]);
        table = [7.0; 4];
        assert_eq!(
            weighted_sensitivity_table(&[1.0], &[d], 0, &mut []),
            Err(Error::InvalidArgument)
        );
        assert_eq!(
            weighted_sensitivity_table(&[1.0], &[d], 3, &mut table),
            Err(Error::LengthMismatch)
        );
        assert_eq!(table, [7.0; 4]);
        assert_eq!(weighted_sensitivity_table(&[1.0], &[d], 1, &mut table[..2]), Ok(1.0));
        assert_eq!(table, [0.5, 0.5, 7.0, 7.0]);
    }
}
