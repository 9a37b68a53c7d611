//! Combining sensitivity functions, and which combinations keep admissibility (Local Dampening paper,
//! Def. 3.3: (1) δ(x, 0, r) ≥ LS(x, 0, r), (2) δ(x, t+1, r) ≥ δ(y, t, r) for neighbours x, y).
//!
//! - **Maximum** of admissible functions (of the same utility, or of several utilities when the utility is
//!   their maximum element-local bound): admissible (Lemma 4.5). [`max_into`], [`max_of`].
//! - **Clamp** min(δ, Δ) with Δ the utility's global sensitivity: admissible (Lemma 3.5). [`clamp_in_place`].
//! - **Saturation** δ := Δ for t ≥ T_max (T_max ≥ 1) after clamping: admissible, see
//!   [`crate::sensitivity`]. [`saturate_in_place`].
//! - **Weighted sum** Σ |w_i| δ_i for u = Σ w_i u_i: admissible (PrivPareto paper, Thm. 5.4); implemented
//!   with the aggregation mechanism, not here.
//! - **Minimum** of two admissible functions: *not* admissible in general. Condition 2 needs
//!   min(δ₁, δ₂)(x, t+1) ≥ min(δ₁, δ₂)(y, t), but δ₁ may be the smaller one at x and δ₂ the smaller one at
//!   y, and nothing relates δ₁(x, t+1) to δ₂(y, t). (The clamp is the special case where one of the two is
//!   the constant Δ, which is why it is safe.) No function here takes a minimum of two δ tables.

use crate::Error;

fn valid(d: f64) -> bool {
    d.is_finite() && d >= 0.0
}

/// The largest of `values` (0 for an empty slice): the shared δ̂(x, t) = max_r δ(x, t, r) of Local
/// Dampening §4.2 at one t, or the maximum of several admissible δ at one (t, r) (Lemma 4.5).
///
/// Errors: a NaN, negative or infinite value → [`Error::InvalidSensitivityValue`].
pub fn max_of(values: &[f64]) -> Result<f64, Error> {
    let mut m: f64 = 0.0;
    for &d in values {
        if !valid(d) {
            return Err(Error::InvalidSensitivityValue);
        }
        m = m.max(d);
    }
    Ok(m)
}

/// Element-wise `acc[i] = max(acc[i], other[i])` over two tables of the same shape (Local Dampening
/// Lemma 4.5: the maximum of admissible functions is admissible). Nothing is written on error.
///
/// Errors: different lengths → [`Error::LengthMismatch`]; a NaN, negative or infinite value in either →
/// [`Error::InvalidSensitivityValue`].
pub fn max_into(acc: &mut [f64], other: &[f64]) -> Result<(), Error> {
    if acc.len() != other.len() {
        return Err(Error::LengthMismatch);
    }
    if !acc.iter().chain(other).all(|&d| valid(d)) {
        return Err(Error::InvalidSensitivityValue);
    }
    for (a, &b) in acc.iter_mut().zip(other) {
        *a = a.max(b);
    }
    Ok(())
}

/// Replaces every value by min(δ, Δ) (Local Dampening Lemma 3.5, admissibility preserved). Nothing is
/// written on error.
///
/// Errors: Δ not finite or ≤ 0 → [`Error::InvalidSensitivity`]; a NaN, negative or infinite value →
/// [`Error::InvalidSensitivityValue`].
pub fn clamp_in_place(values: &mut [f64], global: f64) -> Result<(), Error> {
    if !(global.is_finite() && global > 0.0) {
        return Err(Error::InvalidSensitivity);
    }
    if !values.iter().all(|&d| valid(d)) {
        return Err(Error::InvalidSensitivityValue);
    }
    for v in values.iter_mut() {
        *v = v.min(global);
    }
    Ok(())
}

/// Clamps an n × `columns` row-major table to Δ and sets δ(x, t, r) := Δ for every t ≥ `t_max`
/// (saturation; admissibility preserved, see [`crate::sensitivity`]). Nothing is written on error.
///
/// Errors: Δ not finite or ≤ 0 → [`Error::InvalidSensitivity`]; `t_max` = 0 → [`Error::InvalidArgument`];
/// `columns` = 0 with a non-empty table, or a length that is not a multiple of `columns` →
/// [`Error::LengthMismatch`]; a NaN, negative or infinite value → [`Error::InvalidSensitivityValue`].
pub fn saturate_in_place(values: &mut [f64], columns: usize, t_max: usize, global: f64) -> Result<(), Error> {
    if t_max == 0 {
        return Err(Error::InvalidArgument);
    }
    if columns == 0 {
        return if values.is_empty() {
            Ok(())
        } else {
            Err(Error::LengthMismatch)
        };
    }
    if !values.len().is_multiple_of(columns) {
        return Err(Error::LengthMismatch);
    }
    clamp_in_place(values, global)?;
    for row in values.chunks_exact_mut(columns) {
        for v in row.iter_mut().skip(t_max) {
            *v = global;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_clamp_saturate() {
        assert_eq!(max_of(&[]), Ok(0.0));
        assert_eq!(max_of(&[0.5, 2.0, 1.0]), Ok(2.0));
        assert_eq!(max_of(&[f64::NAN]), Err(Error::InvalidSensitivityValue));
        let mut a = [1.0, 0.25];
        max_into(&mut a, &[0.5, 0.75]).unwrap();
        assert_eq!(a, [1.0, 0.75]);
        assert_eq!(max_into(&mut a, &[-1.0, 0.0]), Err(Error::InvalidSensitivityValue));
        assert_eq!(a, [1.0, 0.75]);
        assert_eq!(max_into(&mut a, &[0.0]), Err(Error::LengthMismatch));
        let mut t = [0.1, 3.0, 0.2, 0.3, 0.4, 0.5];
        saturate_in_place(&mut t, 3, 2, 1.0).unwrap();
        assert_eq!(t, [0.1, 1.0, 1.0, 0.3, 0.4, 1.0]);
        assert_eq!(saturate_in_place(&mut t, 4, 2, 1.0), Err(Error::LengthMismatch));
        assert_eq!(clamp_in_place(&mut t, 0.0), Err(Error::InvalidSensitivity));
    }
}
