//! The admissible sensitivity function δ^PS of the Pareto score (PrivPareto paper, Def. 4.5, Thm. 4.7).
//!
//! With S_i(t, r) = Σ_{j=0..t} δ^{u_i}(x, j, r) (inclusive of t), lo_i(r) = u_i(r) − S_i(t, r) and
//! hi_i(r) = u_i(r) + S_i(t, r), Def. 4.5 is δ^PS(x, t, r) = |dom⁻| + |ndom⁺| where dom⁻ holds the
//! dominators r′ of r with lo_i(r′) ≤ hi_i(r) for some i, and ndom⁺ the other candidates r′ ≠ r with
//! hi_i(r′) ≥ lo_i(r) for all i. The comparisons are non-strict: strict ones make δ^PS too small and
//! break admissibility (the brute-force test in `tests/` keeps that broken variant and catches it).
//!
//! The fast functions use the identity (docs/DESIGN.md §2)
//!
//! δ^PS(x, t, r) = #{r′ ≠ r : hi(r′) ≥ lo(r) in every objective} − #{r′ : lo(r′) > hi(r) in every objective}:
//! every dominator lies in the first set (so dominators plus ndom⁺ is that set), and every member of
//! the second set dominates r strictly in every objective, so dom⁻ is the dominators minus the second
//! set. The dominators cancel, hence δ^PS is the **same function for both [`Dominance`] relations**, and
//! at each t it is two dominance counts between the n upper and n lower corners.
//!
//! **Exact arithmetic.** Each objective is put on an integer grid of its own (PrivPareto paper, Thm. 4.7 needs
//! nothing else): unit g_i = 2^j with 2³¹ ≤ Δ_i / g_i < 2³² ([`objective_grid`]), U_i(r) = ⌊u_i(r) / g_i⌋
//! clamped to ±2⁹² (a monotone, 1-Lipschitz map), δ′_i(t, r) = ⌈δ_i(t, r) / g_i⌉ ≤ N_i = ⌈Δ_i / g_i⌉ ≤ 2³², and
//! S′_i(t, r) = Σ_{j≤t} δ′_i(j, r) summed in integers (below the saturation T_i ≤ 2³² − 1 the sum is below
//! 2⁶⁴; beyond it every term is N_i, added as one product). The corners U ± S′ are exact integers, and each
//! is turned into a `f64` key by one fixed monotone rounding (to nearest, exact below 2⁵³ grid units); every
//! comparison is then between keys. Why that is admissible, for neighbours x, y:
//! - (U_i, δ′_i) is an admissible pair: |U(x) − U(y)| ≤ ⌈|u(x) − u(y)| / g⌉ ≤ ⌈δ(x, 0) / g⌉ = δ′(x, 0), and
//!   ceilings are monotone, so δ(x, t+1) ≥ δ(y, t) gives δ′(x, t+1) ≥ δ′(y, t) (`dampen/exact.rs` argues the
//!   same). Hence S′(x, t+1, r) ≥ |U(x, r) − U(y, r)| + S′(y, t, r): y's integer interval at t lies inside x's
//!   at t + 1, for every candidate.
//! - With A_t(r) = {r′ ≠ r : key(hi(r′)) ≥ key(lo(r)) in every objective} and B_t(r) = {r′ : key(lo(r′)) >
//!   key(hi(r)) in every objective}, the value computed is |A \ B| (the identity below). Nested intervals
//!   and a monotone key give A_t(y) ⊆ A_{t+1}(x) and B_{t+1}(x) ⊆ B_t(y): **δ^PS(x, t+1, r) ≥ δ^PS(y, t, r)**.
//! - At t = 0, a candidate r′ that dominates r in x but not in y is in A_0(x) (U is monotone), and not in
//!   B_0(x): that would give lo(r′) > hi(r) exactly, so U(y, r′) > U(y, r) in every objective, so
//!   u(y, r′) > u(y, r) everywhere and r′ still dominates r in y. A non-dominator of r in x that dominates it
//!   in y is in A_0(x) (u(y, r′) ≥ u(y, r) ⇒ U(y, r′) ≥ U(y, r), inside x's intervals) and not in B_0(x)
//!   (that would make it a dominator in x). So **δ^PS(x, 0, r) ≥ |PS(x, r) − PS(y, r)|**, PS being the Pareto
//!   score of the real utilities.
//!
//! The floating-point corners this replaces (sums rounded up, hi up, lo down) were upper bounds of the exact
//! values but not a monotone function of them: y's rounding could cross a threshold that x's did not, and
//! the computed δ^PS was then not admissible (a pair with a privacy loss of 1.83 at ε = 1 is a regression test
//! in `tests/privacy_multi.rs`).

use super::count::{self, dominance_counts};
use super::{check_utilities, Dominance, ScratchLen};
use crate::exact::grid::decompose;
use crate::exact::Grid;
use crate::select::exact::as_words;
use crate::sensitivity::LocalSensitivity;
use crate::{Error, MAX_OBJECTIVES};

/// |U_i| is clamped to 2⁹² grid units (2⁶⁰ N_i at most: the clamp of `dampen/exact.rs`).
const UTILITY_LIMIT: i128 = 1 << 92;

/// The integer grid of one objective for δ^PS: unit g = 2^j with 2³¹ ≤ Δ / g < 2³², and N = ⌈Δ / g⌉ ≤ 2³² (so
/// a sum of fewer than 2³² terms δ′ ≤ N stays below 2⁶⁴). Errors: Δ not finite and > 0 →
/// [`Error::InvalidSensitivity`].
pub(crate) fn objective_grid(global: f64) -> Result<Grid, Error> {
    if !(global.is_finite() && global > 0.0) {
        return Err(Error::InvalidSensitivity);
    }
    let (m, e) = decompose(global);
    let bits = 64 - (m as u64).leading_zeros() as i32;
    let exponent = e + bits - 32;
    Ok(Grid::new(
        exponent,
        Grid::new(exponent, 1).ceil_capped(global, u64::MAX),
    ))
}

/// U_i(r) on the grid of its objective.
#[inline(always)]
pub(crate) fn grid_utility(grid: &Grid, u: f64) -> i128 {
    // Fast path: u / g = u · 2^−j is exact unless it underflows, and then floors the same way unless it
    // rounds to zero (a negative u must floor to −1): both checked, so the result is ⌊u / g⌋ exactly.
    let j = grid.exponent();
    if (-1000..=1000).contains(&j) {
        let x = u * f64::from_bits(((1023 - j) as u64) << 52);
        if x.abs() < 4.0e18 && (x != 0.0 || u == 0.0) {
            return i128::from(libm::floor(x) as i64);
        }
    }
    grid.floor_clamped(u, UTILITY_LIMIT)
}

/// δ′_i on the grid of its objective (δ already clamped to Δ by [`LocalSensitivity`]).
#[inline(always)]
pub(crate) fn grid_delta(grid: &Grid, d: f64) -> u64 {
    grid.ceil_capped(d, grid.units())
}

/// The part of S′_i(t, ·) beyond the saturation T (every term N): (t + 1 − T) N, or 0 for t < T.
#[inline(always)]
pub(crate) fn saturated_part(grid: &Grid, saturation: usize, t: usize) -> u128 {
    if t < saturation {
        0
    } else {
        (t - saturation) as u128 * u128::from(grid.units()) + u128::from(grid.units())
    }
}

/// The two keys (hi, lo) of utility `u` with sum S′ = `base` + `extra`: the exact corners U ± S′, each
/// rounded to the nearest double (ties to even; the same rounding from i64 and from i128), a monotone map.
#[inline(always)]
pub(crate) fn corner_keys(grid: &Grid, u: f64, base: u64, extra: u128) -> (f64, f64) {
    let v = grid_utility(grid, u);
    let s = u128::from(base) + extra;
    // The common case in 64-bit integers (one instruction per conversion; LLVM turns a fallback on the same
    // i128 value into a library call for every corner).
    if let (Ok(v), Ok(s)) = (i64::try_from(v), i64::try_from(s)) {
        if let (Some(h), Some(l)) = (v.checked_add(s), v.checked_sub(s)) {
            return (h as f64, l as f64);
        }
    }
    // |U| ≤ 2⁹², base < 2⁶⁴, extra ≤ (2⁶⁴ + 1) 2³²: the sums stay far inside i128.
    let s = s as i128;
    ((v + s) as f64, (v - s) as f64)
}

/// Scratch lengths [`pareto_sensitivity`] and [`pareto_sensitivity_table`] need for n candidates and m
/// objectives: `indices` = 2n plus the dominance count's need — (7 + 5W) n + 1 for m ≤ 2 (W words per
/// 64-bit key: 1 on 64-bit targets, 2 on 32-bit), and for m ≥ 3 records of 2n (m + 1) words and a work
/// area of 2n · max(m + 2, 6) words or the bitset count's, whichever is larger (on 64-bit targets, for
/// n ≥ 10⁵: 22n for m = 3, 24n for m = 4, 40n for m = 8, 72n for m = 16); `values` = 3 · n · m.
///
/// Errors: a length overflows `usize` → [`Error::Overflow`].
pub fn pareto_sensitivity_scratch_len(n: usize, m: usize) -> Result<ScratchLen, Error> {
    let indices = count::scratch_len(n, m).and_then(|s| s.checked_add(n.checked_mul(2)?));
    let values = n.checked_mul(m).and_then(|v| v.checked_mul(3));
    match (indices, values) {
        (Some(indices), Some(values)) => Ok(ScratchLen { indices, values }),
        _ => Err(Error::Overflow),
    }
}

/// The objectives' grids ([`objective_grid`]) in the first m slots.
pub(crate) fn objective_grids(deltas: &[LocalSensitivity<'_>]) -> Result<[Grid; MAX_OBJECTIVES], Error> {
    let mut grids = [Grid::new(0, 1); MAX_OBJECTIVES];
    if deltas.len() > MAX_OBJECTIVES {
        return Err(Error::CapacityExceeded);
    }
    for (g, d) in grids.iter_mut().zip(deltas) {
        *g = objective_grid(d.global())?;
    }
    Ok(grids)
}

/// Validates everything shared by the fast functions; returns n and the objectives' grids.
fn check_inputs(
    utilities: &[f64],
    m: usize,
    deltas: &[LocalSensitivity<'_>],
    indices: &[usize],
    values: &[f64],
) -> Result<(usize, [Grid; MAX_OBJECTIVES]), Error> {
    let n = check_utilities(utilities, m)?;
    if deltas.len() != m || deltas.iter().any(|d| d.len() != n) {
        return Err(Error::LengthMismatch);
    }
    let need = pareto_sensitivity_scratch_len(n, m)?;
    if indices.len() < need.indices || values.len() < need.values {
        return Err(Error::ScratchTooSmall);
    }
    Ok((n, objective_grids(deltas)?))
}

/// base[r·m + i] += δ′_i(x, t, r) for the objectives not yet saturated at t. Beyond its saturation T_i an
/// objective's terms are all N_i and are added in one product by [`saturated_part`], so the work per call
/// does not grow with t.
fn accumulate(
    deltas: &[LocalSensitivity<'_>],
    grids: &[Grid],
    n: usize,
    t: usize,
    base: &mut [u64],
) -> Result<(), Error> {
    let m = deltas.len();
    for (i, (d, g)) in deltas.iter().zip(grids).enumerate() {
        if t >= d.saturation() {
            continue;
        }
        for r in 0..n {
            // Fewer than 2³² terms of at most 2³² each: no overflow (see the module documentation).
            base[r * m + i] += grid_delta(g, d.delta(r, t)?);
        }
    }
    Ok(())
}

/// δ^PS at distance t of every candidate from the integer sums in `values[..n·m]` (see [`accumulate`]),
/// through the identity; the corner keys hi and lo go to the next 2·n·m values. Calls `write(r, value)`.
#[allow(clippy::too_many_arguments)]
fn from_sums(
    utilities: &[f64],
    deltas: &[LocalSensitivity<'_>],
    grids: &[Grid],
    n: usize,
    t: usize,
    values: &mut [f64],
    indices: &mut [usize],
    mut write: impl FnMut(usize, f64),
) {
    let m = deltas.len();
    let (base, rest) = values.split_at_mut(n * m);
    let base = as_words(base);
    let (hi, lo) = rest.split_at_mut(n * m);
    // Corners computed once: the sorts and sweeps below read each many times.
    for (k, ((h, l), b)) in hi.iter_mut().zip(lo.iter_mut()).zip(base.iter()).enumerate() {
        let i = k % m;
        let extra = saturated_part(&grids[i], deltas[i].saturation(), t);
        (*h, *l) = corner_keys(&grids[i], utilities[k], *b, extra);
    }
    let (hi, lo) = (&*hi, &*lo);
    let hi = |k: usize, i: usize| hi[k * m + i];
    let lo = |k: usize, i: usize| lo[k * m + i];
    let (reach, rest) = indices.split_at_mut(n);
    let (beyond, rest) = rest.split_at_mut(n);
    // reach(r) = #{r′ : hi(r′) ≥ lo(r)}, r itself included since hi(r) ≥ lo(r).
    dominance_counts(n, m, hi, lo, false, reach, rest);
    // beyond(r) = #{r′ : lo(r′) > hi(r)}, a subset of reach(r) \ {r}.
    dominance_counts(n, m, lo, hi, true, beyond, rest);
    for r in 0..n {
        let v = reach[r].saturating_sub(1).saturating_sub(beyond[r]).min(n - 1);
        write(r, v as f64);
    }
}

/// Writes δ^PS(x, t, r) (PrivPareto paper, Def. 4.5; admissible by Thm. 4.7) of every candidate r at one
/// distance t into `out[r]`, clamped to n − 1 (the global sensitivity of PS), computed exactly on the
/// objectives' integer grids (see the module documentation).
///
/// `deltas[i]` is the admissible sensitivity of objective i for the same n candidates (clamped to its Δ_i
/// and saturated, see [`LocalSensitivity`]); S_i(t, r) sums δ_i(x, j, r) for j = 0..=t. The result does not
/// depend on the [`Dominance`] relation (see the module documentation), so this function has no such
/// parameter. `indices` and `values` are scratch of the lengths [`pareto_sensitivity_scratch_len`] reports.
///
/// Complexity: O(n m min(t, T)) for the sums (T the largest saturation; terms beyond it are N_i and are
/// added as one product, and so are the terms of a per-candidate δ), plus two dominance counts between the n
/// upper and n lower corners: O(n log n) for m ≤ 2, O(n log^(m−1) n) for m ≥ 3 (see
/// [`crate::pareto::pareto_scores`]).
///
/// Errors (nothing written to `out`): those of [`crate::pareto::pareto_scores`] for `utilities` and m;
/// `deltas.len()` ≠ m or a sensitivity for another number of candidates, or `out.len()` ≠ n →
/// [`Error::LengthMismatch`]; scratch too short → [`Error::ScratchTooSmall`]; a failing δ function value →
/// [`Error::InvalidSensitivityValue`].
pub fn pareto_sensitivity(
    utilities: &[f64],
    m: usize,
    deltas: &[LocalSensitivity<'_>],
    t: usize,
    out: &mut [f64],
    indices: &mut [usize],
    values: &mut [f64],
) -> Result<(), Error> {
    let (n, grids) = check_inputs(utilities, m, deltas, indices, values)?;
    if out.len() != n {
        return Err(Error::LengthMismatch);
    }
    advance_sums(deltas, &grids[..m], n, as_words(&mut values[..n * m]), None, t)?;
    from_sums(utilities, deltas, &grids[..m], n, t, values, indices, |r, v| out[r] = v);
    Ok(())
}

/// Brings the running sums `base[r·m + i]` = S′_i(·, r) (the terms below each saturation, as
/// [`pareto_sensitivity`] sums them) from distance `from` (`None`: nothing summed, `base` is overwritten)
/// to distance `t` ≥ `from`, adding only the terms in between. A per-candidate δ is constant below its
/// saturation, so its sum is one product at any t.
pub(crate) fn advance_sums(
    deltas: &[LocalSensitivity<'_>],
    grids: &[Grid],
    n: usize,
    base: &mut [u64],
    from: Option<usize>,
    t: usize,
) -> Result<(), Error> {
    let m = deltas.len();
    if from.is_none() {
        base.fill(0);
    }
    let first = from.map_or(0, |f| f.saturating_add(1));
    for (i, (d, g)) in deltas.iter().zip(grids).enumerate() {
        let terms = d.saturation().min(t.saturating_add(1));
        if from.is_some() && first >= terms {
            continue; // no new term below saturation: neither a sum nor a product changes
        }
        // Each candidate on its own: a function may know the constant of some candidates only.
        for r in 0..n {
            let s = &mut base[r * m + i];
            match d.constant_below_saturation(r) {
                Some(c) => *s = grid_delta(g, c) * terms as u64,
                None => {
                    for j in first..terms {
                        *s += grid_delta(g, d.delta(r, j)?);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Fills the row-major n × `columns` table `out[r * columns + t]` = δ^PS(x, t, r) for t < `columns`
/// (PrivPareto paper, Def. 4.5, computed exactly as [`pareto_sensitivity`] does), ready for the dampening
/// stage as `LocalSensitivity::new(DeltaSource::Table { values: out, columns }, (n − 1) as f64, columns, n)`.
///
/// Choosing `columns` is choosing the saturation distance T_max: beyond the table the dampening stage uses
/// δ = Δ = n − 1, which keeps δ^PS admissible for any `columns` ≥ 1 (docs/DESIGN.md §2, "Clamping and
/// saturation"). δ^PS is non-decreasing in t and reaches n − 1 eventually; a larger table only helps
/// accuracy while it is still below n − 1. Row r is written only from the running sums S′_i, which are
/// updated by one δ′_i(x, t, r) per column below saturation and by one product beyond it (no prefix sum
/// is recomputed).
///
/// Complexity: O(columns · (n m + n log n)) for m ≤ 2, O(columns · (n m + n log^(m−1) n)) for m ≥ 3.
///
/// Errors (nothing written to `out`): as [`pareto_sensitivity`]; `columns` = 0 →
/// [`Error::InvalidArgument`]; `out.len()` ≠ n · `columns` → [`Error::LengthMismatch`]. Sensitivities
/// given as functions are evaluated once in advance to validate them (so the table is never half written).
pub fn pareto_sensitivity_table(
    utilities: &[f64],
    m: usize,
    deltas: &[LocalSensitivity<'_>],
    columns: usize,
    out: &mut [f64],
    indices: &mut [usize],
    values: &mut [f64],
) -> Result<(), Error> {
    let (n, grids) = check_inputs(utilities, m, deltas, indices, values)?;
    if columns == 0 {
        return Err(Error::InvalidArgument);
    }
    if n.checked_mul(columns) != Some(out.len()) {
        return Err(Error::LengthMismatch);
    }
    for d in deltas.iter().filter(|d| d.is_fallible()) {
        for t in 0..columns.min(d.saturation()) {
            for r in 0..n {
                d.delta(r, t)?;
            }
        }
    }
    as_words(&mut values[..n * m]).fill(0);
    for t in 0..columns {
        accumulate(deltas, &grids[..m], n, t, as_words(&mut values[..n * m]))?;
        from_sums(utilities, deltas, &grids[..m], n, t, values, indices, |r, v| {
            out[r * columns + t] = v
        });
    }
    Ok(())
}

/// The O(n² m (t + 1)) reference for [`pareto_sensitivity`]: Def. 4.5 read literally, building dom⁻ and
/// ndom⁺ from the chosen [`Dominance`] relation, on the same integer grids and corner keys (see the module
/// documentation). For tests and benchmarks: the fast function must equal it for either relation.
///
/// Errors: as [`pareto_sensitivity`] without the scratch checks (nothing written to `out`).
pub fn pareto_sensitivity_naive(
    utilities: &[f64],
    m: usize,
    deltas: &[LocalSensitivity<'_>],
    t: usize,
    dominance: Dominance,
    out: &mut [f64],
) -> Result<(), Error> {
    let n = check_utilities(utilities, m)?;
    if deltas.len() != m || deltas.iter().any(|d| d.len() != n) || out.len() != n {
        return Err(Error::LengthMismatch);
    }
    let grids = objective_grids(deltas)?;
    let corners = |r: usize, i: usize| -> Result<(f64, f64), Error> {
        let (d, g) = (&deltas[i], &grids[i]);
        let mut base = 0u64;
        for j in 0..d.saturation().min(t.saturating_add(1)) {
            base += grid_delta(g, d.delta(r, j)?);
        }
        Ok(corner_keys(
            g,
            utilities[r * m + i],
            base,
            saturated_part(g, d.saturation(), t),
        ))
    };
    // Validate every value first so that a failing function leaves `out` untouched.
    for r in 0..n {
        for i in 0..m {
            corners(r, i)?;
        }
    }
    let hi = |r: usize, i: usize| corners(r, i).map(|c| c.0);
    let lo = |r: usize, i: usize| corners(r, i).map(|c| c.1);
    for r in 0..n {
        let ur = &utilities[r * m..(r + 1) * m];
        let mut count = 0usize;
        for q in (0..n).filter(|&q| q != r) {
            let uq = &utilities[q * m..(q + 1) * m];
            let counted = if dominance.dominates(uq, ur) {
                // dom⁻: a dominator that may stop dominating r within distance t.
                let mut any = false;
                for i in 0..m {
                    any |= lo(q, i)? <= hi(r, i)?;
                }
                any
            } else {
                // ndom⁺: a non-dominator that may come to dominate r within distance t.
                let mut all = true;
                for i in 0..m {
                    all &= hi(q, i)? >= lo(r, i)?;
                }
                all
            };
            count += usize::from(counted);
        }
        out[r] = count.min(n - 1) as f64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensitivity::DeltaSource;

    /// A δ function that knows the constant of some candidates only: each candidate's sum is its own
    /// (the sums once took the product form for every candidate when candidate 0 had a constant, leaving
    /// the others at 0, which made δ^PS too small). Checked against the literal definition.
    #[test]
    fn a_constant_known_for_some_candidates_only() {
        struct Half;
        impl crate::sensitivity::DeltaFunction for Half {
            fn delta(&self, r: usize, t: usize) -> f64 {
                if r.is_multiple_of(2) {
                    0.5
                } else {
                    0.25 * (1 + t % 2) as f64
                }
            }
            fn constant(&self, r: usize) -> Option<f64> {
                r.is_multiple_of(2).then_some(0.5)
            }
        }
        let u = [0.0, 0.0, 1.0, 0.5, 2.0, 1.0, 3.0, 1.5, 4.0, 2.0, 5.0, 2.5];
        let s = LocalSensitivity::new(DeltaSource::Function(&Half), 8.0, 8, 6).unwrap();
        let deltas = [s, s];
        let need = pareto_sensitivity_scratch_len(6, 2).unwrap();
        let (mut idx, mut val) = ([0usize; 256], [0.0; 64]);
        assert!(idx.len() >= need.indices && val.len() >= need.values);
        for t in 0..10 {
            let (mut fast, mut naive) = ([0.0; 6], [0.0; 6]);
            pareto_sensitivity(&u, 2, &deltas, t, &mut fast, &mut idx, &mut val).unwrap();
            pareto_sensitivity_naive(&u, 2, &deltas, t, Dominance::Weak, &mut naive).unwrap();
            assert_eq!(fast, naive, "t = {t}");
        }
    }

    /// The fast path of `grid_utility` equals the exact floor of `Grid` on every kind of double and grid:
    /// subnormals, values that underflow to zero (negative ones must floor to −1), powers of two, the
    /// clamp, and random bit patterns.
    #[test]
    fn grid_utility_is_the_exact_floor() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let special = [
            0.0,
            -0.0,
            5e-324,
            -5e-324,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.0 - f64::EPSILON / 2.0,
            -(1.0 - f64::EPSILON / 2.0),
            1e300,
            -1e300,
            f64::MAX,
            f64::MIN,
            4.0e18,
            -4.0e18,
            3.0e18,
        ];
        for global in [1.0, 3.0, 1e-300, 1e300, 0.1, 5e-324, 7.0e15, f64::MAX] {
            let g = objective_grid(global).unwrap();
            let check = |u: f64| {
                assert_eq!(
                    grid_utility(&g, u),
                    g.floor_clamped(u, UTILITY_LIMIT),
                    "u = {u:e}, Δ = {global:e}"
                );
            };
            for &u in &special {
                check(u);
            }
            for _ in 0..20_000 {
                let u = f64::from_bits(next());
                if u.is_finite() {
                    check(u);
                    check(u * 1e-300);
                    check(u * global);
                }
            }
        }
    }

    /// PrivPareto paper, Example 4.6: δ^PS(x, 0, b) = 1.
    #[test]
    fn example_4_6() {
        let u = [1.0, 1.0, 3.0, 3.0, 5.0, 5.0];
        let d = [0.5, 1.0, 1.5];
        let s = LocalSensitivity::new(DeltaSource::PerCandidate(&d), 2.0, 8, 3).unwrap();
        let deltas = [s, s];
        let mut out = [0.0; 3];
        let mut idx = [0usize; 64];
        let mut val = [0.0; 18];
        pareto_sensitivity(&u, 2, &deltas, 0, &mut out, &mut idx, &mut val).unwrap();
        assert_eq!(out[1], 1.0);
        for dom in [Dominance::Weak, Dominance::Textbook] {
            let mut naive = [0.0; 3];
            pareto_sensitivity_naive(&u, 2, &deltas, 0, dom, &mut naive).unwrap();
            assert_eq!(naive, out);
        }
    }
}
