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
/// The utility is private data and never refused: it is read through `utility` (NaN the lowest, and
/// clamped to ±2⁶⁰Δ, as the exact stage clamps it), so the result is finite. Errors: r ≥ n.
pub fn dampen_value(u: f64, r: usize, delta: &LocalSensitivity<'_>) -> Result<f64, Error> {
    let u = utility(u, delta);
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
    // |D| ≤ T + 2⁶⁰ for a clamped utility: always finite.
    Ok(d)
}

/// A utility as the dampening stage reads it: NaN → −f64::MAX and ±∞ → ±f64::MAX (the public rule for
/// private values), then clamped to ±2⁶⁰Δ — a monotone 1-Lipschitz map, which keeps δ admissible, and the
/// clamp the exact stage applies on its grid — so that u/Δ can never overflow.
#[inline]
pub(crate) fn utility(u: f64, delta: &LocalSensitivity<'_>) -> f64 {
    let limit = libm::ldexp(delta.global(), 60).min(f64::MAX);
    crate::select::finite(u).clamp(-limit, limit)
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
    Ok(utility(u, delta) / delta.global() - delta.shift_offset(r)?)
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
    let one = |r: usize| match kind {
        Dampening::Plain => dampen_value(utilities[r], r, delta),
        Dampening::Shifted => shifted_value(utilities[r], r, delta),
    };
    if delta.is_shared() {
        // The same δ for every candidate (a slice, so nothing can fail): one walk for many candidates.
        shared_float(utilities, delta, kind, &mut out[..n])?;
        return Ok(());
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

/// [`dampen_value`] or [`shifted_value`] of every candidate when δ is shared (the same for every
/// candidate), bit for bit: the shifted offset is the same for all, computed once; for plain dampening the
/// breakpoints b(t) are common, so the candidates of a block of [`exact::SWEEP_BLOCK`] are sorted by |u|
/// (each sign apart) and the breakpoints are summed once for the whole block, each candidate stopping where
/// the walk of [`dampen_value`] would. O(n log n + ⌈n / 256⌉ T) instead of O(n T). Returns the number of
/// breakpoint steps taken (for the tests).
fn shared_float(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [f64],
) -> Result<u64, Error> {
    if kind == Dampening::Shifted {
        let offset = delta.shift_offset(0)?;
        for (o, &u) in out.iter_mut().zip(utilities) {
            *o = utility(u, delta) / delta.global() - offset;
        }
        return Ok(0);
    }
    let t_sat = delta.saturation();
    let mut steps = 0u64;
    for (first, chunk) in utilities.chunks(exact::SWEEP_BLOCK).enumerate() {
        let start = first * exact::SWEEP_BLOCK;
        let mut keys = [(0.0f64, 0u32); exact::SWEEP_BLOCK];
        for negative in [false, true] {
            let mut len = 0;
            for (k, &u) in chunk.iter().enumerate() {
                let u = utility(u, delta);
                if (u < 0.0) == negative {
                    keys[len] = (u.abs(), (start + k) as u32);
                    len += 1;
                }
            }
            let block = &mut keys[..len];
            block.sort_unstable_by(|a, b| crate::float::cmp(a.0, b.0));
            let (mut t, mut b) = (0usize, 0.0f64);
            for &(a, r) in block.iter() {
                let u = utility(utilities[r as usize], delta);
                let d = loop {
                    if t >= t_sat {
                        break if negative {
                            (u + b) / delta.global() - t_sat as f64
                        } else {
                            t_sat as f64 + (u - b) / delta.global()
                        };
                    }
                    steps += 1;
                    let w = delta.delta(r as usize, t)?;
                    let next = b + w;
                    if negative && next >= a {
                        // u ∈ [−b(t+1), −b(t)): the step k = t + 1 of `dampen_value`.
                        break (u + next) / w - (t + 1) as f64;
                    }
                    if !negative && next > u {
                        break t as f64 + (u - b) / w;
                    }
                    (b, t) = (next, t + 1);
                };
                out[r as usize] = finite(d)?;
            }
        }
    }
    Ok(steps)
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
    match (kind, delta.shared()) {
        (Dampening::Plain, true) => {
            exact::plain_shared(n, &utility, delta, &mut write)?;
        }
        (Dampening::Shifted, true) => {
            let b = exact::shifted_shared(delta)? as i128;
            for r in 0..n {
                write(r, utility(r) + b);
            }
        }
        _ => {
            for r in 0..n {
                write(
                    r,
                    match kind {
                        Dampening::Plain => exact::plain(utility(r), r, delta)?,
                        Dampening::Shifted => exact::shifted(utility(r), r, delta)?,
                    },
                );
            }
        }
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

    /// A shared δ (one slice for every candidate) gives exactly the scores of the same δ as a table (one
    /// row per candidate, walked candidate by candidate): float and exact, plain and shifted, on utilities
    /// with ties, zeros of both signs and values beyond the saturation, for blocks of one and several
    /// [`exact::SWEEP_BLOCK`]s; and the sweeps take at most 2 ⌈n / 256⌉ T + n steps.
    #[test]
    fn shared_sweeps_equal_the_per_candidate_walk() {
        extern crate std;
        use std::vec;
        use std::vec::Vec;
        let mut state = 0x51ab_2222_u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        for (n, t_len) in [(1usize, 5usize), (7, 1), (300, 40), (700, 9), (600, 0)] {
            let shared: Vec<f64> = (0..t_len)
                .map(|_| [0.0, 0.25, 0.5, 0.1, 3.0][next(5) as usize])
                .collect();
            let table: Vec<f64> = (0..n).flat_map(|_| shared.iter().copied()).collect();
            let u: Vec<f64> = (0..n)
                .map(|_| match next(6) {
                    0 => 0.0,
                    1 => -0.0,
                    _ => (next(400) as f64 - 200.0) * 0.05,
                })
                .collect();
            let global = 2.0;
            let sd = LocalSensitivity::new(DeltaSource::Shared(&shared), global, 100, n).unwrap();
            let td = LocalSensitivity::new(
                DeltaSource::Table {
                    values: &table,
                    columns: t_len,
                },
                global,
                100,
                n,
            )
            .unwrap();
            assert!(sd.is_shared() && !td.is_shared());
            for kind in [Dampening::Plain, Dampening::Shifted] {
                let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
                dampen_with(&u, &sd, kind, &mut a).unwrap();
                dampen_with(&u, &td, kind, &mut b).unwrap();
                assert_eq!(
                    a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    "float {kind:?}, n = {n}, T = {t_len}"
                );
                let (mut a, mut b) = (vec![0i128; n], vec![0i128; n]);
                let ua = exact_dampened_scores(&u, &sd, kind, &mut a).unwrap();
                let ub = exact_dampened_scores(&u, &td, kind, &mut b).unwrap();
                assert_eq!((a, ua), (b, ub), "exact {kind:?}, n = {n}, T = {t_len}");
            }
            let blocks = n.div_ceil(exact::SWEEP_BLOCK) as u64;
            let bound = 2 * blocks * t_len as u64 + n as u64;
            let mut out = vec![0.0; n];
            assert!(shared_float(&u, &sd, Dampening::Plain, &mut out).unwrap() <= bound);
            let g = exact::GridDelta::new(&sd).unwrap();
            let steps = exact::plain_shared(n, &|r| g.utility(u[r]), &g, &mut |_, _| {}).unwrap();
            assert!(steps <= bound, "{steps} > {bound}");
        }
    }

    /// Issue 22: a long shared δ (10⁶ distances of zeros, then Δ) with n = 1000 candidates is walked once
    /// per block of candidates, not once per candidate (10⁹ steps before): at most 2 ⌈n / 256⌉ T + n.
    #[test]
    fn a_long_shared_delta_is_walked_once_per_block() {
        extern crate std;
        use std::vec;
        let (n, t_len) = (1000, 1_000_000);
        let shared = vec![0.0; t_len];
        let u: std::vec::Vec<f64> = (0..n).map(|r| r as f64 - 500.0).collect();
        let d = LocalSensitivity::new(DeltaSource::Shared(&shared), 1.0, usize::MAX, n).unwrap();
        let bound = 2 * 4 * t_len as u64 + n as u64;
        let mut out = vec![0.0; n];
        assert!(shared_float(&u, &d, Dampening::Plain, &mut out).unwrap() <= bound);
        let g = exact::GridDelta::new(&d).unwrap();
        let steps = exact::plain_shared(n, &|r| g.utility(u[r]), &g, &mut |_, _| {}).unwrap();
        assert!(steps <= bound && steps >= t_len as u64, "{steps}");
    }
}
