//! The *dampen* stage: the dampening function of the Local Dampening paper (Def. 3.6), plain and shifted.
//!
//! Given an admissible δ (Def. 3.3, clamped and saturated by [`LocalSensitivity`]), the breakpoints are
//! b(0) = 0, b(i) = Σ_{j<i} δ(j) for i > 0 and b(−i) = −b(i), and
//! D(u) = i + (u − b(i)) / (b(i+1) − b(i)) with i the smallest integer such that u ∈ [b(i), b(i+1)).
//! Intervals of zero width contain nothing and are skipped, so with δ(0) = 0, D(0) = 1.
//! From the saturation distance T on, δ = Δ and D is linear: D(u) = T + (u − b(T))/Δ for u ≥ b(T) and
//! D(u) = −T + (u + b(T))/Δ for u < −b(T). |D(x, r) − D(y, r)| ≤ 1 for neighbours (Lemma 3.7), so the
//! dampened scores feed any selector with Δ = 1.

pub(crate) mod exact;
pub(crate) mod iso;

use crate::select::exact::store_int;
use crate::sensitivity::LocalSensitivity;
use crate::Error;
use exact::IntDelta;

/// D_{u,δ}(x, r) for one candidate r with utility `u` (Local Dampening paper, Def. 3.6).
///
/// For u ≥ 0, i is the largest i with b(i) ≤ u; for u < 0, i = −k with k the smallest k ≥ 1 with
/// b(k) ≥ −u. Walking the breakpoints costs O(min(i, T)) evaluations of δ.
/// Errors: `u` not finite ([`Error::NonFiniteInput`]), a failing δ value, or a result beyond `f64`
/// ([`Error::Overflow`], e.g. u = 1e300 with Δ = 1e-10).
pub fn dampen_value(u: f64, r: usize, delta: &LocalSensitivity<'_>) -> Result<f64, Error> {
    if !u.is_finite() {
        return Err(Error::NonFiniteInput);
    }
    let t = delta.saturation();
    if let Some(c) = delta.constant_below_saturation(r) {
        return finite(dampen_constant(u, c, t, delta.global()));
    }
    let mut b = 0.0;
    let d = if u >= 0.0 {
        let mut found = None;
        for i in 0..t {
            let w = delta.delta(r, i)?;
            let next = b + w;
            if next > u {
                // u ∈ [b(i), b(i+1)) and the interval has positive width because b ≤ u < next.
                found = Some(i as f64 + (u - b) / w);
                break;
            }
            b = next;
        }
        match found {
            Some(v) => v,
            None => t as f64 + (u - b) / delta.global(),
        }
    } else {
        let a = -u;
        let mut found = None;
        for k in 1..=t {
            let w = delta.delta(r, k - 1)?;
            let next = b + w;
            if next >= a {
                // u ∈ [−b(k), −b(k−1)), width δ(k−1) > 0 because b(k−1) < a ≤ b(k).
                found = Some((u + next) / w - k as f64);
                break;
            }
            b = next;
        }
        match found {
            Some(v) => v,
            None => (u + b) / delta.global() - t as f64,
        }
    };
    finite(d)
}

fn finite(d: f64) -> Result<f64, Error> {
    if d.is_finite() {
        Ok(d)
    } else {
        Err(Error::Overflow)
    }
}

/// D when δ(t) = c for every t < T and Δ from T on: the breakpoints are b(i) = i·c, so inside ±T·c the
/// function is u/c, and linear with slope 1/Δ beyond. O(1), where walking the breakpoints would cost O(T)
/// (a small c with a huge T would otherwise take practically forever). With c = 0 all T first intervals
/// have zero width and D(u) = ±T + u/Δ.
fn dampen_constant(u: f64, c: f64, t: usize, global: f64) -> f64 {
    let edge = t as f64 * c;
    if c > 0.0 && u.abs() < edge {
        u / c
    } else if u >= 0.0 {
        t as f64 + (u - edge) / global
    } else {
        (u + edge) / global - t as f64
    }
}

/// The score that the *shifted* local dampening mechanism (Local Dampening paper, Def. 4.3) feeds to its
/// selector: score(r) = u(r)/Δ − Σ_{j<T} (1 − δ(x, j, r)/Δ).
///
/// Why this is exact: for a shift s larger than u(r) + b(T), u − s lies below −b(T), where D is linear, so
/// D(u − s) = (u − s + b(T))/Δ − T = score(r) − s/Δ. The term −s/Δ is common to all candidates and cancels
/// in every shift-invariant selector (exponential, permute-and-flip, report-noisy-max); the limit s → ∞ of
/// Def. 4.3 is therefore reached at a finite s and equals the selector on these scores. Each finite-s
/// mechanism is ε-DP (Lemma 3.7 applies to u − s with the same δ), so the closed form is too (Thm. 4.4).
pub fn shifted_value(u: f64, r: usize, delta: &LocalSensitivity<'_>) -> Result<f64, Error> {
    if !u.is_finite() {
        return Err(Error::NonFiniteInput);
    }
    let v = u / delta.global() - delta.shift_offset(r)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Error::Overflow)
    }
}

/// Plain or shifted dampening.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dampening {
    /// D_{u,δ} of Def. 3.6 (the local dampening mechanism, Def. 3.8).
    Plain,
    /// The closed form of the shifted mechanism, Def. 4.3 (see [`shifted_value`]).
    Shifted,
}

/// The dampening stage into `out[..n]`. With `atomic`, a caller δ function is first evaluated everywhere so
/// that a failing value leaves `out` untouched (the public functions); into scratch, that second pass of
/// n · T calls is skipped.
fn dampen_all(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [f64],
    atomic: bool,
) -> Result<(), Error> {
    let n = utilities.len();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    if delta.len() != n || out.len() < n {
        return Err(Error::LengthMismatch);
    }
    if utilities.iter().any(|u| !u.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    let one = |r: usize| match kind {
        Dampening::Plain => dampen_value(utilities[r], r, delta),
        Dampening::Shifted => shifted_value(utilities[r], r, delta),
    };
    // Plain: each interval contributes at most 1, and beyond T the slope is 1/Δ, so |D| ≤ T + |u|/Δ.
    // Shifted: |score| ≤ |u|/Δ + T. Checking this bound first means only a caller function can fail below.
    let largest = utilities.iter().fold(0.0f64, |m, u| m.max(u.abs()));
    if !(largest / delta.global() + delta.saturation() as f64 + 1.0).is_finite() {
        return Err(Error::Overflow);
    }
    if atomic && delta.is_fallible() {
        // A caller function may fail part-way: evaluate everything once first so that an error leaves
        // `out` untouched (the function must be deterministic, as documented).
        for r in 0..n {
            one(r)?;
        }
    }
    for (r, o) in out[..n].iter_mut().enumerate() {
        *o = one(r)?;
    }
    Ok(())
}

/// Dampened scores D_{u,δ}(x, r) for all r into `out[..n]` (Def. 3.6). They have global sensitivity 1.
/// O(Σ_r min(i_r, T)) δ evaluations. Nothing is written on error.
pub fn dampen(utilities: &[f64], delta: &LocalSensitivity<'_>, out: &mut [f64]) -> Result<(), Error> {
    dampen_all(utilities, delta, Dampening::Plain, out, true)
}

/// Shifted dampened scores (Def. 4.3 closed form, [`shifted_value`]) for all r into `out[..n]`; they feed
/// any selector with Δ = 1. O(n) for per-candidate δ, O(n·T) otherwise. Nothing is written on error.
pub fn dampen_shifted(utilities: &[f64], delta: &LocalSensitivity<'_>, out: &mut [f64]) -> Result<(), Error> {
    dampen_all(utilities, delta, Dampening::Shifted, out, true)
}

/// [`dampen`] or [`dampen_shifted`] according to `kind`.
pub fn dampen_with(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [f64],
) -> Result<(), Error> {
    dampen_all(utilities, delta, kind, out, true)
}

/// [`dampen_with`] into scratch: a failing δ function may leave `out` partly written (one pass of calls).
pub(crate) fn dampen_into_scratch(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [f64],
) -> Result<(), Error> {
    dampen_all(utilities, delta, kind, out, false)
}

/// Exact dampening ([`exact`]) of n integer utilities: calls `write(r, S_r)` for every candidate and returns
/// the sensitivity of the scores in grid units (2⁶⁰ for plain, N for shifted).
pub(crate) fn dampen_int_each(
    n: usize,
    utility: impl Fn(usize) -> i128,
    delta: &impl IntDelta,
    kind: Dampening,
    mut write: impl FnMut(usize, i128),
) -> Result<u64, Error> {
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    for r in 0..n {
        write(
            r,
            match kind {
                Dampening::Plain => exact::plain(utility(r), r, delta)?,
                Dampening::Shifted => exact::shifted(utility(r), r, delta)?,
            },
        );
    }
    Ok(match kind {
        Dampening::Plain => exact::PLAIN_UNITS,
        Dampening::Shifted => delta.units(),
    })
}

/// [`dampen_int_each`] into two-word integer scores in `out[..2n]` (the selectors' scratch form).
pub(crate) fn dampen_int(
    n: usize,
    utility: impl Fn(usize) -> i128,
    delta: &impl IntDelta,
    kind: Dampening,
    out: &mut [u64],
) -> Result<u64, Error> {
    if out.len() < 2 * n {
        return Err(Error::ScratchTooSmall);
    }
    dampen_int_each(n, utility, delta, kind, |r, s| store_int(out, r, s))
}

/// Validates double utilities against a [`LocalSensitivity`] for exact dampening and returns the grid view.
fn exact_inputs<'a, 'b>(utilities: &[f64], delta: &'b LocalSensitivity<'a>) -> Result<exact::GridDelta<'a, 'b>, Error> {
    if utilities.is_empty() {
        return Err(Error::EmptyInput);
    }
    if delta.len() != utilities.len() {
        return Err(Error::LengthMismatch);
    }
    if utilities.iter().any(|u| !u.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    exact::GridDelta::new(delta)
}

/// Exact dampening of double utilities with a [`LocalSensitivity`] (on the grid of its Δ): the integer
/// scores go to `out[..2n]`, and their sensitivity in grid units is returned. Errors as [`dampen`], and
/// [`Error::ScratchTooSmall`] when `out` is shorter than 2n.
pub(crate) fn dampen_exact(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [u64],
) -> Result<u64, Error> {
    let g = exact_inputs(utilities, delta)?;
    dampen_int(utilities.len(), |r| g.utility(utilities[r]), &g, kind, out)
}

/// The integer scores exact local dampening selects from (the exact stage of this module, on the grid of Δ):
/// `out[r]` = ⌊2⁶⁰ D(r)⌋ for plain dampening, or U(r) + b(T) for shifted; returns their sensitivity in the
/// same units (2⁶⁰, or N). The exact mechanism picks r with probability ∝ exp(−ε (max S − S_r) / (2 ·
/// units)). For audits and tests. Errors as [`dampen`]; nothing is written to `out` on error.
pub fn exact_dampened_scores(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [i128],
) -> Result<u64, Error> {
    let g = exact_inputs(utilities, delta)?;
    let n = utilities.len();
    if out.len() < n {
        return Err(Error::LengthMismatch);
    }
    let utility = |r: usize| g.utility(utilities[r]);
    if delta.is_fallible() {
        // A caller function may fail part-way: evaluate everything once first.
        dampen_int_each(n, utility, &g, kind, |_, _| {})?;
    }
    dampen_int_each(n, utility, &g, kind, |r, s| out[r] = s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensitivity::DeltaSource;

    #[test]
    fn constant_closed_form_equals_the_breakpoint_walk() {
        for c in [0.0, 0.25, 1.0, 3.0, 5.0] {
            for t in [1usize, 2, 7] {
                let per = [c];
                let table: [f64; 7] = [c; 7];
                let fast = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 4.0, t, 1).unwrap();
                let walk = LocalSensitivity::new(
                    DeltaSource::Table {
                        values: &table[..t],
                        columns: t,
                    },
                    4.0,
                    t,
                    1,
                )
                .unwrap();
                for i in -120..=120 {
                    let u = i as f64 * 0.37;
                    let (a, b) = (dampen_value(u, 0, &fast).unwrap(), dampen_value(u, 0, &walk).unwrap());
                    assert!((a - b).abs() < 1e-12, "c={c} T={t} u={u}: closed form {a}, walk {b}");
                }
            }
        }
    }

    #[test]
    fn huge_saturation_distance_is_immediate_for_constant_sensitivity() {
        let per = [1e-300, 0.0];
        let d = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, usize::MAX, 2).unwrap();
        assert!(dampen_value(5.0, 0, &d).unwrap().is_finite());
        assert_eq!(
            dampen_value(5.0, 1, &d).unwrap(),
            crate::sensitivity::MAX_SATURATION as f64 + 5.0
        );
        // Shifted scores keep u/Δ visible at the largest saturation distance.
        let a = shifted_value(5.0, 1, &d).unwrap() - shifted_value(4.0, 1, &d).unwrap();
        assert!((a - 1.0).abs() < 1e-5);
    }
}
