//! The dampening stage in exact integer arithmetic: the dampened score D_{u,δ}(x, r) of Def. 3.6 (plain)
//! or the shifted closed form of Def. 4.3, computed without rounding on grid integers, then floored onto
//! a fixed grid so that the selectors receive exact integer scores of known sensitivity.
//!
//! **Inputs on a grid.** Utilities are floored and local sensitivities rounded *up* onto a grid of unit g
//! with Δ = N g: U = ⌊u/g⌋ (clamped to ±2⁶⁰N, a monotone 1-Lipschitz map), δ′(t) = ⌈δ(t)/g⌉ ≤ N. The pair
//! stays admissible (Local Dampening paper, Def. 3.3): condition 1, because
//! |⌊u(x)/g⌋ − ⌊u(y)/g⌋| ≤ ⌈|u(x) − u(y)|/g⌉ ≤ ⌈δ(x, 0)/g⌉ = δ′(x, 0); condition 2, because ceilings are
//! monotone, δ(x, t+1) ≥ δ(y, t) ⇒ δ′(x, t+1) ≥ δ′(y, t). So Lemma 3.7 holds for D computed on them.
//!
//! **Plain.** With integer breakpoints b(i) = Σ_{j<i} δ′(j), D = i + (U − b(i))/δ′(i) is an exact rational,
//! and the score handed on is S = ⌊M D⌋ with M = 2⁶⁰. Since |D(x) − D(y)| ≤ 1 (Lemma 3.7) and M is an
//! integer, |⌊M D(x)⌋ − ⌊M D(y)⌋| ≤ M: the integer scores have sensitivity exactly M units.
//!
//! **Shifted.** The closed form (see [`super::shifted_value`]) is (U + b(T))/N − T on the grid; T is common
//! to all candidates and cancels in every selector, so S = U + b(T) with sensitivity N units, exactly.
//!
//! Ranges (all checked): N < 2⁶³, T ≤ 2³², |U| ≤ 2⁶⁰N < 2¹²³; then |S| < 2¹²⁴ in both forms, so gaps fit
//! in 125 bits.

use crate::exact::Grid;
use crate::sensitivity::LocalSensitivity;
use crate::Error;

/// The output grid of plain exact dampening: scores ⌊M D⌋ with M = 2⁶⁰ (sensitivity M units).
pub const PLAIN_UNITS: u64 = 1 << 60;

/// |u| is clamped to 2⁶⁰ Δ before dampening (see the module documentation).
const UTILITY_BITS: u32 = 60;

/// A local sensitivity in integer grid units: δ′(x, t, r) ≤ N for t < T, and N from T on.
pub(crate) trait IntDelta {
    /// N, the global sensitivity in grid units.
    fn units(&self) -> u64;
    /// T, the distance from which δ′ = N.
    fn saturation(&self) -> usize;
    /// Some((c, end)) when δ′(x, t′, r) = c for every t ≤ t′ < end ≤ T: the walks then jump the whole run in
    /// O(1) (a per-candidate δ is one run up to T, however large T is).
    fn run(&self, r: usize, t: usize) -> Result<Option<(u64, usize)>, Error>;
    /// δ′(x, t, r) for t < T.
    fn delta(&self, r: usize, t: usize) -> Result<u64, Error>;
    /// True when δ′(x, t, r) does not depend on r: the breakpoints are then walked once for many candidates
    /// at a time ([`plain_shared`], [`shifted_shared`]).
    fn shared(&self) -> bool {
        false
    }
}

/// The largest |U| allowed for a sensitivity of N units.
pub(crate) fn utility_limit(units: u64) -> i128 {
    i128::from(units) << UTILITY_BITS
}

/// A [`LocalSensitivity`] of doubles seen on the grid of its Δ ([`Grid::of`]).
pub(crate) struct GridDelta<'a, 'b> {
    pub(crate) delta: &'b LocalSensitivity<'a>,
    pub(crate) grid: Grid,
}

impl<'a, 'b> GridDelta<'a, 'b> {
    pub(crate) fn new(delta: &'b LocalSensitivity<'a>) -> Result<Self, Error> {
        Ok(GridDelta {
            delta,
            grid: Grid::of(delta.global())?,
        })
    }

    /// U = ⌊u/g⌋ clamped to ±2⁶⁰N.
    pub(crate) fn utility(&self, u: f64) -> i128 {
        // NaN counts as the lowest utility and ±∞ as ±f64::MAX (the public rule), then clamped.
        self.grid
            .floor_clamped(crate::select::finite(u), utility_limit(self.grid.units()))
    }
}

impl IntDelta for GridDelta<'_, '_> {
    fn units(&self) -> u64 {
        self.grid.units()
    }
    fn saturation(&self) -> usize {
        self.delta.saturation()
    }
    fn run(&self, r: usize, _t: usize) -> Result<Option<(u64, usize)>, Error> {
        let n = self.grid.units();
        let end = self.delta.saturation();
        Ok(self
            .delta
            .constant_below_saturation(r)
            .map(|c| (self.grid.ceil_capped(c, n), end)))
    }
    fn delta(&self, r: usize, t: usize) -> Result<u64, Error> {
        Ok(self.grid.ceil_capped(self.delta.delta(r, t)?, self.grid.units()))
    }
    fn shared(&self) -> bool {
        self.delta.is_shared()
    }
}

/// ⌊m x / n⌋ for x ≥ 0 without overflowing: m x / n = m ⌊x/n⌋ + m (x mod n)/n. Needs m (x mod n) and
/// m ⌊x/n⌋ below 2¹²⁸, which the ranges of the module documentation guarantee.
fn mul_div_floor(m: u128, x: u128, n: u128) -> u128 {
    m * (x / n) + (m * (x % n)) / n
}

/// ⌈m x / n⌉ for x ≥ 0, likewise.
fn mul_div_ceil(m: u128, x: u128, n: u128) -> u128 {
    m * (x / n) + (m * (x % n)).div_ceil(n)
}

/// ⌊M D⌋ for the plain dampened score of integer utility `u` of candidate r (Def. 3.6 on the grid). Runs of
/// constant δ′ are crossed in one step each.
pub(crate) fn plain(u: i128, r: usize, delta: &impl IntDelta) -> Result<i128, Error> {
    let t_sat = delta.saturation();
    let mut b: u128 = 0;
    let mut t = 0;
    while t < t_sat {
        if let Some((c, end)) = delta.run(r, t)? {
            let end = end.min(t_sat).max(t + 1);
            if let Some(s) = plain_run(u, t, end - t, c, &mut b) {
                return Ok(s);
            }
            t = end;
            continue;
        }
        if let Some(s) = plain_step(u, t, delta.delta(r, t)?, &mut b) {
            return Ok(s);
        }
        t += 1;
    }
    Ok(plain_end(u, t_sat, delta.units(), b))
}

/// A run of `len` distances t, t + 1, … with the same δ′ = `c`, for the plain walk: Some(⌊M D⌋) when u's
/// interval lies in the run (found by one division, whatever `len`), else `b` advances by len · c.
pub(crate) fn plain_run(u: i128, t: usize, len: usize, c: u64, b: &mut u128) -> Option<i128> {
    let (m, c, len) = (u128::from(PLAIN_UNITS), u128::from(c), len as u128);
    let a = u.unsigned_abs();
    // Breakpoints b + j c for j = 0..=len.
    if c > 0 && u >= 0 && a < *b + len * c {
        let j = (a - *b) / c;
        return Some((m * (t as u128 + j)) as i128 + (m * ((a - *b) % c) / c) as i128);
    }
    if c > 0 && u < 0 && a <= *b + len * c {
        // The first breakpoint at or beyond −u: j = ⌈(a − b)/c⌉ ≥ 1 steps into the run.
        let j = (a - *b).div_ceil(c);
        let k = t as u128 + j;
        return Some(-((m * k) as i128) + (m * (*b + j * c - a) / c) as i128);
    }
    *b += len * c;
    None
}

/// One step of the plain walk at distance t, with δ′(t) = `w` and `b` = b(t) for u ≥ 0 (the breakpoint
/// reached so far) or b(t) for u < 0 likewise: Some(⌊M D⌋) when u's interval is [b(t), b(t+1)) (u ≥ 0) or
/// [−b(t+1), −b(t)) (u < 0); otherwise `b` advances to b(t + 1). Walking t = 0, 1, … with these steps
/// and [`plain_end`] at the saturation distance is Def. 3.6; doing it one distance at a time lets a
/// caller produce δ′ one sweep at a time (the automatic saturation of local PrivPareto).
pub(crate) fn plain_step(u: i128, t: usize, w: u64, b: &mut u128) -> Option<i128> {
    let (m, w) = (u128::from(PLAIN_UNITS), u128::from(w));
    let mi = m as i128;
    let a = u.unsigned_abs();
    if u >= 0 {
        if *b + w > a {
            // b ≤ u < b + w, so w > 0 and 0 ≤ u − b < w.
            return Some(mi * t as i128 + (m * (a - *b) / w) as i128);
        }
    } else if *b + w >= a {
        // b(t) < −u ≤ b(t+1): u lies in [−b(t+1), −b(t)), at offset b(t+1) − (−u) from its left end.
        return Some(-(mi * (t as i128 + 1)) + (m * (*b + w - a) / w) as i128);
    }
    *b += w;
    None
}

/// ⌊M D⌋ for a utility beyond the saturation distance T (D = ±T + (u ∓ b(T))/N), with `b` = b(T).
pub(crate) fn plain_end(u: i128, t: usize, units: u64, b: u128) -> i128 {
    let (m, n) = (u128::from(PLAIN_UNITS), u128::from(units));
    let mt = PLAIN_UNITS as i128 * t as i128;
    let a = u.unsigned_abs();
    if u >= 0 {
        mt + mul_div_floor(m, a - b, n) as i128
    } else {
        -mt - mul_div_ceil(m, a - b, n) as i128
    }
}

/// Candidates sorted together by the shared-δ sweeps ([`plain_shared`]): a block's keys live on the stack.
pub(crate) const SWEEP_BLOCK: usize = 256;

/// ⌊M D⌋ of Def. 3.6 for n candidates when δ′ is the same for every candidate ([`IntDelta::shared`]): the
/// breakpoints b(t) are common, so the candidates of a block of [`SWEEP_BLOCK`] are sorted by |U| (each
/// sign apart) and the breakpoints are walked once for the whole block, each candidate stopping where
/// [`plain_step`] would. The same scores as [`plain`], with O(n log n + ⌈n / 256⌉ T) work instead of
/// O(n T). Calls `write(r, S_r)`; returns the number of breakpoint steps (δ′ evaluations) taken.
pub(crate) fn plain_shared(
    n: usize,
    utility: &impl Fn(usize) -> i128,
    delta: &impl IntDelta,
    write: &mut impl FnMut(usize, i128),
) -> Result<u64, Error> {
    let t_sat = delta.saturation();
    let mut steps = 0u64;
    let mut start = 0;
    while start < n {
        let end = n.min(start + SWEEP_BLOCK);
        let mut keys = [(0u128, 0u32); SWEEP_BLOCK];
        for negative in [false, true] {
            let mut len = 0;
            for r in start..end {
                let u = utility(r);
                if (u < 0) == negative {
                    keys[len] = (u.unsigned_abs(), r as u32);
                    len += 1;
                }
            }
            let block = &mut keys[..len];
            block.sort_unstable();
            let (mut t, mut b) = (0usize, 0u128);
            for &(_, r) in block.iter() {
                let u = utility(r as usize);
                let s = loop {
                    if t >= t_sat {
                        break plain_end(u, t_sat, delta.units(), b);
                    }
                    steps += 1;
                    let mut next = b;
                    if let Some(s) = plain_step(u, t, delta.delta(r as usize, t)?, &mut next) {
                        // A later candidate of the block (larger |U|) starts from the same breakpoint.
                        break s;
                    }
                    (b, t) = (next, t + 1);
                };
                write(r as usize, s);
            }
        }
        start = end;
    }
    Ok(steps)
}

/// b(T) = Σ_{t<T} δ′(t) when δ′ is the same for every candidate: the shifted score of every candidate is
/// U + b(T) ([`shifted`]), so one walk serves them all.
pub(crate) fn shifted_shared(delta: &impl IntDelta) -> Result<u128, Error> {
    Ok(shifted(0, 0, delta)? as u128)
}

/// U + b(T) for the shifted dampened score of integer utility `u` of candidate r (Def. 4.3 closed form).
pub(crate) fn shifted(u: i128, r: usize, delta: &impl IntDelta) -> Result<i128, Error> {
    let t_sat = delta.saturation();
    let mut b: u128 = 0;
    let mut t = 0;
    while t < t_sat {
        if let Some((c, end)) = delta.run(r, t)? {
            let end = end.min(t_sat).max(t + 1);
            b += u128::from(c) * (end - t) as u128;
            t = end;
        } else {
            b += u128::from(delta.delta(r, t)?);
            t += 1;
        }
    }
    Ok(u + b as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensitivity::DeltaSource;

    /// D as a double, for comparison with the floating-point dampening.
    fn d_of(s: i128) -> f64 {
        s as f64 / PLAIN_UNITS as f64
    }

    #[test]
    fn plain_matches_the_float_dampening_on_grid_values() {
        let table = [0.0, 0.5, 1.0, 0.25, 2.0, 0.0, 1.5, 1.0];
        let per = [0.5, 0.0];
        let tab = LocalSensitivity::new(
            DeltaSource::Table {
                values: &table,
                columns: 4,
            },
            2.0,
            4,
            2,
        )
        .unwrap();
        let pc = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 2.0, 5, 2).unwrap();
        for d in [&tab, &pc] {
            let g = GridDelta::new(d).unwrap();
            for r in 0..2 {
                for i in -60..=60 {
                    let u = i as f64 * 0.125;
                    let want = crate::dampen::dampen_value(u, r, d).unwrap();
                    let got = d_of(plain(g.utility(u), r, &g).unwrap());
                    assert!((got - want).abs() < 1e-12, "r={r} u={u}: exact {got}, float {want}");
                    let want = crate::dampen::shifted_value(u, r, d).unwrap();
                    let s = shifted(g.utility(u), r, &g).unwrap();
                    let got = s as f64 / g.units() as f64 - d.saturation() as f64;
                    assert!(
                        (got - want).abs() < 1e-12,
                        "shifted r={r} u={u}: exact {got}, float {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn extremes_stay_in_range() {
        let per = [1e-300, 0.0, 1.0];
        let d = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, usize::MAX, 3).unwrap();
        let g = GridDelta::new(&d).unwrap();
        for u in [f64::MAX, -f64::MAX, 1e300, -1e300, 0.0, 5e-324] {
            for r in 0..3 {
                let p = plain(g.utility(u), r, &g).unwrap();
                let s = shifted(g.utility(u), r, &g).unwrap();
                assert!(
                    p.unsigned_abs() < 1 << 124 && s.unsigned_abs() < 1 << 124,
                    "u={u} r={r}"
                );
            }
        }
    }
}
