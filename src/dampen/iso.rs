//! The dampening stage in constant time: the same integer scores as [`super::exact`] — plain ⌊M D⌋ with
//! M = 2⁶⁰ and shifted U + b(T) — computed so that control flow, memory addresses and the instructions run
//! depend only on the public T and Δ, never on a utility or a local sensitivity.
//!
//! * The utility U = ⌊u/g⌋ (clamped to ±2⁶⁰N) and every δ′(t) = ⌈δ(t)/g⌉ (capped at N) come from
//!   branch-free conversions ([`crate::select::ct`]); a NaN utility counts as the lowest one and a NaN,
//!   negative or infinite δ as Δ — the public rule that keeps every status independent of the data.
//! * A row of T values is scanned whole: each breakpoint b(t + 1) = b(t) + δ′(t) is compared with |U| and
//!   the interval that holds U is *selected by masks* (its breakpoint, width and index), never found by a
//!   loop that stops. A per-candidate constant δ′ = c uses the closed form b(t) = t c with one division.
//! * Both signs of U are computed and one is selected by a mask; the one division a plain score needs,
//!   ⌊M x / w⌋ for the selected numerator and width, is a restoring division with a public number of steps
//!   ([`crate::select::ct::div_rem`]): the processor's `div` takes longer on some operands.
//!
//! The tests check every score equal to the exact stage's, bit for bit.

use super::Dampening;
use crate::exact::Grid;
use crate::select::ct;
use crate::select::exact::store_int;
use crate::sensitivity::{DeltaFunction, LocalSensitivity};
use crate::Error;

/// The output grid of plain dampening (sensitivity M units), as in [`super::exact::PLAIN_UNITS`].
const M: u128 = super::exact::PLAIN_UNITS as u128;

/// The largest number of distances a row may have in isochronous dampening: each costs a step for every
/// candidate, whatever the data.
pub const MAX_ISOCHRONOUS_DISTANCES: usize = 4096;

/// One candidate's local sensitivities below the saturation distance T, as raw doubles.
#[derive(Clone, Copy)]
pub(crate) enum Row<'a> {
    /// δ(t) = the value for every t < T.
    Constant(f64),
    /// δ(t) = values[t], t < T.
    Values(&'a [f64]),
    /// δ(t) = f(r, t), t < T.
    Function(&'a dyn DeltaFunction, usize),
}

impl Row<'_> {
    #[inline(always)]
    pub(crate) fn raw(&self, t: usize) -> f64 {
        match *self {
            Row::Constant(c) => c,
            Row::Values(v) => v[t],
            Row::Function(f, r) => f.delta(r, t),
        }
    }
}

/// The public constants of isochronous dampening: the grid of Δ and the saturation distance T.
#[derive(Clone, Copy)]
pub(crate) struct IsoDampening {
    exponent: i32,
    units: u64,
    t: usize,
    /// Steps of the constant-row division ⌊min(|U|, T c) / c⌋ ≤ T.
    t_bits: u32,
}

impl IsoDampening {
    /// For utilities and local sensitivities given as doubles on the grid of Δ, saturated at T.
    pub(crate) fn new(grid: Grid, saturation: usize) -> Self {
        IsoDampening {
            exponent: grid.exponent(),
            units: grid.units(),
            t: saturation,
            t_bits: usize::BITS - saturation.leading_zeros() + 1,
        }
    }

    /// U = ⌊u/g⌋ clamped to ±2⁶⁰N (NaN → the lowest).
    #[inline(always)]
    fn utility(&self, u: f64) -> i128 {
        ct::floor_on_grid(u, self.exponent, u128::from(self.units) << 60)
    }

    #[inline(always)]
    fn delta(&self, raw: f64) -> u64 {
        ct::ceil_on_grid(raw, self.exponent, self.units)
    }

    /// δ′ on the grid for a row: Some(c) when it is constant (a public fact about the source), and δ′(t).
    fn int_row<'r>(&'r self, row: Row<'r>) -> (Option<u64>, impl Fn(usize) -> u64 + 'r) {
        let constant = match row {
            Row::Constant(c) => Some(self.delta(c)),
            _ => None,
        };
        (constant, move |t| self.delta(row.raw(t)))
    }

    /// U + b(T): the shifted dampened score of [`super::exact::shifted`].
    pub(crate) fn shifted(&self, u: f64, row: Row<'_>) -> i128 {
        let (constant, at) = self.int_row(row);
        self.shifted_int(self.utility(u), constant, at)
    }

    /// ⌊M D⌋: the plain dampened score of [`super::exact::plain`].
    pub(crate) fn plain(&self, u: f64, row: Row<'_>) -> i128 {
        let (constant, at) = self.int_row(row);
        self.plain_int(self.utility(u), constant, at)
    }

    /// [`Self::shifted`] for an integer utility U (|U| ≤ 2⁶⁰N) and local sensitivities already on the grid
    /// (each ≤ N): `constant` when they are one value below T, else δ′(t) = `at(t)`, read for every t < T.
    pub(crate) fn shifted_int(&self, u: i128, constant: Option<u64>, at: impl Fn(usize) -> u64) -> i128 {
        let b = match constant {
            Some(c) => u128::from(c) * self.t as u128,
            None => (0..self.t).map(|t| u128::from(at(t))).sum(),
        };
        u + b as i128
    }

    /// [`Self::plain`] for an integer utility and grid sensitivities, as [`Self::shifted_int`].
    pub(crate) fn plain_int(&self, u: i128, constant: Option<u64>, at: impl Fn(usize) -> u64) -> i128 {
        let negative = ct::lt_i128(u, 0);
        let a = u.unsigned_abs();
        let n = self.units;
        let t_all = self.t as u128;
        // For each sign: whether U lies below the saturation distance, its interval's index j, the
        // numerator x and width w of ⌊M x / w⌋, and b(T).
        let (inside_pos, j_pos, x_pos, w_pos, inside_neg, j_neg, x_neg, w_neg, b_end) = match constant {
            Some(c) => {
                let tc = u128::from(c) * t_all;
                let c_pos = !ct::eq(c, 0);
                // q = ⌊min(|U|, T c) / c⌋ ≤ T, r the remainder.
                let (q, r) = ct::div_rem(ct::pick_u128(ct::lt_u128(a, tc), a, tc), ct::max(c, 1), self.t_bits);
                let inside_pos = c_pos & ct::lt_u128(a, tc);
                let inside_neg = c_pos & !ct::lt_u128(tc, a);
                // U < 0: the first breakpoint at or past |U| is ⌈|U|/c⌉ c.
                let up = !ct::eq(r, 0);
                let j_neg = q + u128::from(up & 1);
                let x_neg = u128::from(ct::pick(up, c.wrapping_sub(r), 0));
                (inside_pos, q, u128::from(r), c, inside_neg, j_neg, x_neg, c, tc)
            }
            None => {
                let (mut b, mut j_pos, mut b_pos, mut w_pos, mut found_pos) = (0u128, 0u128, 0u128, 0u64, 0u64);
                let (mut j_neg, mut x_neg, mut w_neg, mut found_neg) = (0u128, 0u128, 0u64, 0u64);
                for t in 0..self.t {
                    let w = at(t);
                    let next = b + u128::from(w);
                    // U ≥ 0: the interval is the first t with b(t + 1) > U.
                    let passed = !ct::lt_u128(a, next);
                    j_pos += u128::from(passed & 1);
                    b_pos = ct::pick_u128(passed, next, b_pos);
                    w_pos = ct::pick(!passed & !found_pos, w, w_pos);
                    found_pos |= !passed;
                    // U < 0: the interval ends at the first t with b(t + 1) ≥ |U|.
                    let reached = !ct::lt_u128(next, a);
                    let first = reached & !found_neg;
                    j_neg = ct::pick_u128(first, t as u128 + 1, j_neg);
                    x_neg = ct::pick_u128(first, next.wrapping_sub(a), x_neg);
                    w_neg = ct::pick(first, w, w_neg);
                    found_neg |= reached;
                    b = next;
                }
                (
                    found_pos,
                    j_pos,
                    a.wrapping_sub(b_pos),
                    w_pos,
                    found_neg,
                    j_neg,
                    x_neg,
                    w_neg,
                    b,
                )
            }
        };
        // The one division: the selected sign's numerator and width, or (a − b(T), N) beyond T.
        let inside = ct::pick(negative, inside_neg, inside_pos);
        let x_inside = ct::pick_u128(negative, x_neg, x_pos);
        let w_inside = ct::pick(negative, w_neg, w_pos);
        let x = ct::pick_u128(inside, x_inside, a.wrapping_sub(b_end));
        let w = ct::max(ct::pick(inside, w_inside, n), 1);
        // ⌊M x / w⌋ = M ⌊x / w⌋ + ⌊M (x mod w) / w⌋ with x < 2⁶¹ w; and whether it was exact (for the ceiling).
        let (q1, r1) = ct::div_rem(x, w, 61);
        let (q2, r2) = ct::div_rem(u128::from(r1) << 60, w, 60);
        let floor = (M * q1 + q2) as i128;
        let ceil = floor + i128::from((!ct::eq(r2, 0) & 1) as u8);
        let m_t = (M * t_all) as i128;
        let j = ct::pick_u128(negative, j_neg, j_pos);
        let at = (M * j) as i128;
        let pos = ct::pick_i128(inside, at + floor, m_t + floor);
        let neg = ct::pick_i128(inside, floor - at, -m_t - ceil);
        ct::pick_i128(negative, neg, pos)
    }
}

/// The sensitivity of the integer scores [`dampen_iso`] produces, in their units: 2⁶⁰ for plain
/// dampening, N (Δ in grid units) for shifted.
pub(crate) fn iso_units(delta: &LocalSensitivity<'_>, kind: Dampening) -> Result<u64, Error> {
    Ok(match kind {
        Dampening::Plain => super::exact::PLAIN_UNITS,
        Dampening::Shifted => Grid::of(delta.global())?.units(),
    })
}

/// The integer scores of isochronous local dampening, in `out` (2n words), equal to the exact stage's;
/// returns their sensitivity in the same units (2⁶⁰ for plain, N for shifted). A row of values (a table, a
/// shared δ, a function without a constant) is scanned whole, so its length T must be at most
/// [`MAX_ISOCHRONOUS_DISTANCES`] ([`Error::Unsupported`]); per-candidate constants have no such limit.
pub(crate) fn dampen_iso(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    out: &mut [u64],
) -> Result<u64, Error> {
    let n = utilities.len();
    if n != delta.len() {
        return Err(Error::LengthMismatch);
    }
    if out.len() < 2 * n {
        return Err(Error::ScratchTooSmall);
    }
    let grid = Grid::of(delta.global())?;
    let t = delta.saturation();
    let scanned = (0..n).any(|r| !matches!(delta.iso_row(r), Row::Constant(_)));
    if scanned && t > MAX_ISOCHRONOUS_DISTANCES {
        return Err(Error::Unsupported);
    }
    let d = IsoDampening::new(grid, t);
    for (r, &u) in utilities.iter().enumerate() {
        let row = delta.iso_row(r);
        let s = match kind {
            Dampening::Plain => d.plain(u, row),
            Dampening::Shifted => d.shifted(u, row),
        };
        store_int(out, r, s);
    }
    iso_units(delta, kind)
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;
    use crate::dampen::exact::{plain, shifted, GridDelta};
    use crate::sensitivity::{DeltaSource, LocalSensitivity};
    use std::vec::Vec;

    fn utilities() -> Vec<f64> {
        let mut u: Vec<f64> = (-80..=80).map(|i| i as f64 * 0.125).collect();
        u.extend([
            0.0,
            -0.0,
            1e-300,
            -1e-300,
            1e15,
            -1e15,
            1e300,
            -1e300,
            f64::MAX,
            -f64::MAX,
            3.3,
            -7.77,
        ]);
        u.extend([5e-324, 0.1, -0.1, 123.456, -987.654]);
        u
    }

    #[test]
    fn plain_and_shifted_equal_the_exact_stage() {
        let table = [
            0.0, 0.5, 1.0, 0.25, 2.0, 0.0, 1.5, 1.0, 0.3, 0.3, 0.0, 7.0, 1e-300, 5.0, 0.75, 0.1,
        ];
        let per = [0.5, 0.0, 1.0, 2.0, 1e-9, 0.3];
        for (delta, t_max) in [(2.0, 4), (1.0, 3), (0.1, 4), (3.0, 1)] {
            let tab = LocalSensitivity::new(
                DeltaSource::Table {
                    values: &table,
                    columns: 4,
                },
                delta,
                t_max,
                4,
            )
            .unwrap();
            let pc = LocalSensitivity::new(DeltaSource::PerCandidate(&per), delta, 5, per.len()).unwrap();
            let pc_far = LocalSensitivity::new(DeltaSource::PerCandidate(&per), delta, 1 << 20, per.len()).unwrap();
            for d in [&tab, &pc, &pc_far] {
                let g = GridDelta::new(d).unwrap();
                let iso = IsoDampening::new(g.grid, d.saturation());
                for r in 0..d.len() {
                    let row = match d.constant_below_saturation(r) {
                        Some(c) => Row::Constant(c),
                        None => Row::Values(&table[r * 4..r * 4 + d.saturation()]),
                    };
                    for &u in &utilities() {
                        let want = plain(g.utility(u), r, &g).unwrap();
                        assert_eq!(iso.plain(u, row), want, "plain Δ = {delta}, r = {r}, u = {u}");
                        let want = shifted(g.utility(u), r, &g).unwrap();
                        assert_eq!(iso.shifted(u, row), want, "shifted Δ = {delta}, r = {r}, u = {u}");
                    }
                }
            }
        }
    }

    #[test]
    fn invalid_values_follow_the_public_rule() {
        // A NaN utility is the lowest; a NaN, negative or infinite δ is Δ.
        let g = Grid::of(1.0).unwrap();
        let iso = IsoDampening::new(g, 3);
        let lowest = iso.plain(-f64::MAX, Row::Constant(1.0));
        assert_eq!(iso.plain(f64::NAN, Row::Constant(1.0)), lowest);
        for bad in [f64::NAN, -1.0, f64::INFINITY] {
            assert_eq!(iso.plain(2.5, Row::Constant(bad)), iso.plain(2.5, Row::Constant(1.0)));
            let row = [0.5, bad, 0.25];
            let fixed = [0.5, 1.0, 0.25];
            assert_eq!(iso.plain(1.7, Row::Values(&row)), iso.plain(1.7, Row::Values(&fixed)));
            assert_eq!(
                iso.shifted(1.7, Row::Values(&row)),
                iso.shifted(1.7, Row::Values(&fixed))
            );
        }
    }
}
