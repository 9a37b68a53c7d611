//! Multi-objective selection (PrivPareto paper): the score stages (Pareto score, δ^PS, weighted sums,
//! δ_agg), PrivPareto and PrivAgg end to end, and top-k without replacement for single-objective scores.
//!
//! Utilities are an n × m row-major array: `utilities[r * m + i]` = u_i(x, r), larger is better, with
//! 1 ≤ m ≤ `DPMO_MAX_OBJECTIVES` (m = 0 → `DPMO_INVALID_ARGUMENT`, more → `DPMO_CAPACITY_EXCEEDED`).
//! Local sensitivities are an array of m `dpmo_sensitivity` specs, spec i describing δ_i of objective i for
//! the n candidates (each with its own Δ_i and T_max).
//!
//! The selecting functions take k (top-k without replacement: k rounds at ε/k each, ε-DP in total by
//! sequential composition; indices written in pick order) and an optional `dpmo_budget *`. With a budget,
//! ε is charged atomically: when the budget left is smaller than ε the call returns
//! `DPMO_BUDGET_EXHAUSTED` and nothing else happens; the budget is written only when the selection
//! succeeded. The budget is checked after the pointer and overlap checks, before the mechanism runs.

use crate::budget::dpmo_budget;
use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::local::{dampening_of, dpmo_sensitivity, write_lengths, Specs};
use crate::rng::dpmo_rng;
use crate::select::{flags_of, selector_of};
use crate::selection::Selection;
use crate::status::{dpmo_status, status_of};
use core::mem::size_of;
use dpmo_core::multi::{self, AggSensitivity, ParetoSensitivity};
use dpmo_core::pareto::{self, Dominance};
use dpmo_core::select::{self, Arithmetic};
use dpmo_core::sensitivity::weighted_sum;
use dpmo_core::sensitivity::LocalSensitivity;
use dpmo_core::{local, Error, MAX_OBJECTIVES};

/// The largest number m of objectives; more gives `DPMO_CAPACITY_EXCEEDED`.
pub const DPMO_MAX_OBJECTIVES: usize = 16;

/// Dominance: r′ dominates r when u_i(r′) ≥ u_i(r) for every objective and > for at least one (the usual
/// Pareto dominance: exact ties do not penalise each other).
pub const DPMO_DOMINANCE_TEXTBOOK: u32 = 0;
/// Dominance: r′ ≠ r dominates r when u_i(r′) ≥ u_i(r) for every objective (the relation ⪰ of the PrivPareto
/// paper, Def. 4.3: exact ties dominate each other).
pub const DPMO_DOMINANCE_WEAK: u32 = 1;

const _: () = assert!(DPMO_MAX_OBJECTIVES == MAX_OBJECTIVES);

fn dominance_of(d: u32) -> Result<Dominance, Error> {
    match d {
        DPMO_DOMINANCE_TEXTBOOK => Ok(Dominance::Textbook),
        DPMO_DOMINANCE_WEAK => Ok(Dominance::Weak),
        _ => Err(Error::InvalidArgument),
    }
}

/// Validates m, then returns n · m (the number of utilities).
fn utilities_len(n: usize, m: usize) -> Result<usize, Error> {
    if m == 0 {
        return Err(Error::InvalidArgument);
    }
    if m > MAX_OBJECTIVES {
        return Err(Error::CapacityExceeded);
    }
    n.checked_mul(m).ok_or(Error::Overflow)
}

/// `len` elements of T, as a length whose byte size is representable (else `Error::Overflow`).
fn representable<T>(len: usize) -> Result<usize, Error> {
    match len.checked_mul(size_of::<T>()) {
        Some(b) if b <= isize::MAX as usize => Ok(len),
        _ => Err(Error::Overflow),
    }
}

/// `check_disjoint` with the inputs given in two lists.
fn disjoint(outputs: &[Region], inputs: &[Region], more: &[Region]) -> Result<(), Error> {
    let mut all = [Region::EMPTY; 2 * MAX_OBJECTIVES + 4];
    for (slot, r) in all.iter_mut().zip(inputs.iter().chain(more)) {
        *slot = *r;
    }
    if inputs.len() + more.len() > all.len() {
        return Err(Error::Overflow);
    }
    check_disjoint(outputs, &all[..inputs.len() + more.len()])
}

/// Copies the m specs at `specs`, validates them for n candidates (as `dpmo_sensitivity_value` does for
/// one) and runs `f` with the m sensitivities and the regions they read (the specs and their values). For the
/// functions without a budget; a selecting function builds its sensitivities after charging ([`Specs`]).
///
/// # Safety
/// `specs` must be null or point to m valid specs whose values stay valid and unmodified during the call.
unsafe fn with_sensitivities<T>(
    specs: *const dpmo_sensitivity,
    m: usize,
    n: usize,
    f: impl FnOnce(&[LocalSensitivity<'_>], &[Region]) -> Result<T, Error>,
) -> Result<T, Error> {
    // SAFETY: forwarded caller contract.
    let specs = unsafe { Specs::read(specs, m) }?;
    // SAFETY: as above.
    let deltas = unsafe { specs.build(n) }?;
    f(&deltas[..m], specs.regions())
}

/// The optional specs of a selecting function: None for the global mechanisms (`specs` null).
///
/// # Safety
/// As for `Specs::read`.
unsafe fn optional_specs(specs: *const dpmo_sensitivity, m: usize) -> Result<Option<Specs>, Error> {
    if specs.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded caller contract.
        unsafe { Specs::read(specs, m).map(Some) }
    }
}

/// `with_sensitivities`, or `f(None, [])` when `specs` is null (the global mechanisms).
///
/// # Safety
/// As for `with_sensitivities`.
unsafe fn with_optional_sensitivities<T>(
    specs: *const dpmo_sensitivity,
    m: usize,
    n: usize,
    f: impl FnOnce(Option<&[LocalSensitivity<'_>]>, &[Region]) -> Result<T, Error>,
) -> Result<T, Error> {
    if specs.is_null() {
        f(None, &[])
    } else {
        // SAFETY: forwarded caller contract.
        unsafe { with_sensitivities(specs, m, n, |d, r| f(Some(d), r)) }
    }
}

// ------------------------------------------------------------------------------------------ score stages

/// Writes to `*out_len` the number of size_t of scratch `dpmo_pareto_scores` needs for n candidates and m
/// objectives: 6n + 1 on 64-bit targets for m ≤ 2 (48 bytes per candidate), 11n for m = 3, up to 36n for
/// m = 16 (n ≥ 3·10⁴).
///
/// Errors: m = 0 → `DPMO_INVALID_ARGUMENT`; m > `DPMO_MAX_OBJECTIVES` → `DPMO_CAPACITY_EXCEEDED`; a null
/// or misaligned `out_len`; the length, or its size in bytes, not representable → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_len`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_pareto_scores_scratch_len(n: usize, m: usize, out_len: *mut usize) -> dpmo_status {
    status_of((|| {
        check_out(out_len)?;
        let len = representable::<usize>(pareto::pareto_scores_scratch_len(n, m)?)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_len.write(len) };
        Ok(())
    })())
}

/// The Pareto score (PrivPareto paper, Def. 4.3): writes PS(x, r) = −#{r′ ≠ r : r′ dominates r} to
/// `out_scores[r]` for the n candidates, under `dominance` (`DPMO_DOMINANCE_TEXTBOOK` or
/// `DPMO_DOMINANCE_WEAK`). Scores are integers in [−(n − 1), 0]; their global sensitivity is n − 1.
/// `scratch` needs `dpmo_pareto_scores_scratch_len(n, m)` size_t. O(n log n) for m ≤ 2, O(n log^(m−1) n) for
/// m ≥ 3 (a divide and conquer over integer ranks, with chunked bitsets for small subproblems).
///
/// Errors: m = 0, an unknown `dominance` → `DPMO_INVALID_ARGUMENT`; m > `DPMO_MAX_OBJECTIVES` →
/// `DPMO_CAPACITY_EXCEEDED`; n = 0 → `DPMO_EMPTY_INPUT`; a NaN or infinite utility →
/// `DPMO_NON_FINITE_INPUT`; a short scratch → `DPMO_SCRATCH_TOO_SMALL`; null, misaligned or overlapping
/// buffers.
///
/// # Safety
/// `utilities`: n · m readable doubles; `out_scores`: n writable doubles; `scratch`: `scratch_len` writable
/// size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_pareto_scores(
    utilities: *const f64,
    n: usize,
    m: usize,
    dominance: u32,
    out_scores: *mut f64,
    scratch: *mut usize,
    scratch_len: usize,
) -> dpmo_status {
    status_of((|| {
        let dominance = dominance_of(dominance)?;
        let len = utilities_len(n, m)?;
        // SAFETY: the caller promises n · m readable doubles.
        let u = unsafe { input(utilities, len) }?;
        check_out(out_scores)?;
        check_out(scratch)?;
        check_disjoint(
            &[Region::of(out_scores, n), Region::of(scratch, scratch_len)],
            &[Region::of(utilities, len)],
        )?;
        // SAFETY: checked disjoint from every other buffer of this call.
        let (out, s) = unsafe { (output(out_scores, n)?, output(scratch, scratch_len)?) };
        pareto::pareto_scores(u, m, dominance, out, s)
    })())
}

/// Writes the scratch lengths `dpmo_pareto_sensitivity_table` needs for n candidates and m objectives:
/// `*out_index_len` size_t (O(n m): the dominance counts' sorts and records) and `*out_value_len` = 3 n m
/// doubles.
///
/// Errors: null, misaligned or overlapping outputs; a length not representable → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_index_len`, `out_value_len`: one writable size_t each.
#[no_mangle]
pub unsafe extern "C" fn dpmo_pareto_sensitivity_scratch_len(
    n: usize,
    m: usize,
    out_index_len: *mut usize,
    out_value_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_index_len)?;
        check_out(out_value_len)?;
        check_disjoint(&[Region::of(out_index_len, 1), Region::of(out_value_len, 1)], &[])?;
        let s = pareto::pareto_sensitivity_scratch_len(n, m)?;
        let (i, v) = (representable::<usize>(s.indices)?, representable::<f64>(s.values)?);
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_index_len.write(i);
            out_value_len.write(v);
        }
        Ok(())
    })())
}

/// The admissible sensitivity function δ^PS of the Pareto score (PrivPareto paper, Def. 4.5, Thm. 4.7),
/// built from the m objectives' admissible δ_i (`deltas`, m specs for n candidates): writes δ^PS(x, t, r)
/// to `out[r · columns + t]` for t < `columns`. The result is the same for both dominance relations.
/// With `global` = n − 1 it is ready for a `DPMO_DELTA_TABLE` spec (and `dpmo_dampen`). Scratch: see
/// `dpmo_pareto_sensitivity_scratch_len`.
///
/// Errors: m = 0 or `columns` = 0 → `DPMO_INVALID_ARGUMENT`; m > `DPMO_MAX_OBJECTIVES` →
/// `DPMO_CAPACITY_EXCEEDED`; n = 0 → `DPMO_EMPTY_INPUT`; a non-finite utility; a spec error (as for
/// `dpmo_sensitivity_value`); a short scratch; n · columns not representable → `DPMO_OVERFLOW`; null,
/// misaligned or overlapping buffers.
///
/// # Safety
/// `utilities`: n · m readable doubles; `deltas`: m valid specs for n candidates; `out`: n · columns
/// writable doubles; the scratches writable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn dpmo_pareto_sensitivity_table(
    utilities: *const f64,
    n: usize,
    m: usize,
    deltas: *const dpmo_sensitivity,
    columns: usize,
    out: *mut f64,
    index_scratch: *mut usize,
    index_len: usize,
    value_scratch: *mut f64,
    value_len: usize,
) -> dpmo_status {
    status_of((|| {
        let len = utilities_len(n, m)?;
        // SAFETY: the caller promises n · m readable doubles.
        let u = unsafe { input(utilities, len) }?;
        let out_len = n.checked_mul(columns).ok_or(Error::Overflow)?;
        check_out(out)?;
        check_out(index_scratch)?;
        check_out(value_scratch)?;
        // SAFETY: forwarded caller contract; outputs checked disjoint from every input before slicing.
        unsafe {
            with_sensitivities(deltas, m, n, |ds, regions| {
                disjoint(
                    &[
                        Region::of(out, out_len),
                        Region::of(index_scratch, index_len),
                        Region::of(value_scratch, value_len),
                    ],
                    &[Region::of(utilities, len)],
                    regions,
                )?;
                pareto::pareto_sensitivity_table(
                    u,
                    m,
                    ds,
                    columns,
                    output(out, out_len)?,
                    output(index_scratch, index_len)?,
                    output(value_scratch, value_len)?,
                )
            })
        }
    })())
}

/// The aggregated utility of PrivAgg (PrivPareto paper, §5): writes u_agg(x, r) = Σ_i w_i u_i(x, r) to
/// `out[r]` for the n candidates; weights of any sign (m of them).
///
/// Errors: m = 0 → `DPMO_INVALID_ARGUMENT`; m > `DPMO_MAX_OBJECTIVES` → `DPMO_CAPACITY_EXCEEDED`; n = 0 →
/// `DPMO_EMPTY_INPUT`; a non-finite weight or utility → `DPMO_NON_FINITE_INPUT`; a sum beyond the double
/// range → `DPMO_OVERFLOW`; null, misaligned or overlapping buffers.
///
/// # Safety
/// `utilities`: n · m readable doubles; `weights`: m readable doubles; `out`: n writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_weighted_sum(
    utilities: *const f64,
    n: usize,
    m: usize,
    weights: *const f64,
    out: *mut f64,
) -> dpmo_status {
    status_of((|| {
        let len = utilities_len(n, m)?;
        // SAFETY: the caller promises n · m and m readable doubles.
        let (u, w) = unsafe { (input(utilities, len)?, input(weights, m)?) };
        check_out(out)?;
        check_disjoint(
            &[Region::of(out, n)],
            &[Region::of(utilities, len), Region::of(weights, m)],
        )?;
        // SAFETY: checked disjoint from the inputs.
        let o = unsafe { output(out, n) }?;
        weighted_sum::weighted_sum(u, w, o)
    })())
}

/// The global sensitivity of u_agg (PrivPareto paper, Thm. 5.3): writes Δ_agg = Σ_i |w_i| Δ_i to
/// `*out_global`, from the objectives' global sensitivities `globals[i]` = Δ_i.
///
/// Errors: m = 0, or every weight zero → `DPMO_INVALID_ARGUMENT`; m > `DPMO_MAX_OBJECTIVES` →
/// `DPMO_CAPACITY_EXCEEDED`; a non-finite weight → `DPMO_NON_FINITE_INPUT`; a Δ_i not finite and > 0 →
/// `DPMO_INVALID_SENSITIVITY`; a sum beyond the double range → `DPMO_OVERFLOW`; null, misaligned or
/// overlapping buffers.
///
/// # Safety
/// `weights`, `globals`: m readable doubles each; `out_global`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_weighted_global_sensitivity(
    weights: *const f64,
    m: usize,
    globals: *const f64,
    out_global: *mut f64,
) -> dpmo_status {
    status_of((|| {
        utilities_len(1, m)?;
        // SAFETY: the caller promises m readable doubles at each.
        let (w, g) = unsafe { (input(weights, m)?, input(globals, m)?) };
        check_out(out_global)?;
        check_disjoint(
            &[Region::of(out_global, 1)],
            &[Region::of(weights, m), Region::of(globals, m)],
        )?;
        let d = weighted_sum::weighted_global_sensitivity(w, g)?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out_global.write(d) };
        Ok(())
    })())
}

/// The admissible sensitivity function of u_agg (PrivPareto paper, Thm. 5.4): writes
/// δ_agg(x, t, r) = Σ_i |w_i| δ_i(x, t, r) to `out[r · columns + t]` for t < `columns`, each objective with
/// its own δ_i (`deltas`, m specs for n candidates), and Δ_agg = Σ_i |w_i| Δ_i (Thm. 5.3) to `*out_global`:
/// ready for a `DPMO_DELTA_TABLE` spec with `global` = Δ_agg. `columns` ≥ the largest T_max loses nothing.
///
/// Errors: m = 0, `columns` = 0, or every weight zero → `DPMO_INVALID_ARGUMENT`; m >
/// `DPMO_MAX_OBJECTIVES` → `DPMO_CAPACITY_EXCEEDED`; n = 0 → `DPMO_EMPTY_INPUT`; a non-finite weight; a
/// spec error (as for `dpmo_sensitivity_value`); n · columns not representable → `DPMO_OVERFLOW`; null,
/// misaligned or overlapping buffers.
///
/// # Safety
/// `weights`: m readable doubles; `deltas`: m valid specs for n candidates; `out`: n · columns writable
/// doubles; `out_global`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_weighted_sensitivity_table(
    weights: *const f64,
    m: usize,
    deltas: *const dpmo_sensitivity,
    n: usize,
    columns: usize,
    out: *mut f64,
    out_global: *mut f64,
) -> dpmo_status {
    status_of((|| {
        utilities_len(n, m)?;
        // SAFETY: the caller promises m readable doubles.
        let w = unsafe { input(weights, m) }?;
        let out_len = n.checked_mul(columns).ok_or(Error::Overflow)?;
        check_out(out)?;
        check_out(out_global)?;
        // SAFETY: forwarded caller contract; outputs checked disjoint from every input before slicing.
        unsafe {
            with_sensitivities(deltas, m, n, |ds, regions| {
                disjoint(
                    &[Region::of(out, out_len), Region::of(out_global, 1)],
                    &[Region::of(weights, m)],
                    regions,
                )?;
                let g = weighted_sum::weighted_sensitivity_table(w, ds, columns, output(out, out_len)?)?;
                out_global.write(g);
                Ok(())
            })
        }
    })())
}

// ------------------------------------------------------------------------------------------ PrivPareto

/// Writes the scratch lengths `dpmo_select_privpareto` and `dpmo_privpareto_probabilities` need for n
/// candidates and m objectives, global or local, in either arithmetic: `*out_values_len` doubles
/// ((3m + 2) n: the running δ sums, the δ^PS probes' corners, the breakpoints or integer scores) and
/// `*out_indices_len` size_t (2n plus a stage area shared by the Pareto score's count, the δ^PS walk's
/// 32-bit arrays and the selector's permutation: 5n + 1 for m ≤ 2 on 64-bit targets, 9n + 1 for m = 2 on
/// 32-bit ones; for m ≥ 3 the larger of the score's count and n plus the δ^PS count's). At m = 2 on a
/// 64-bit target that is 120 bytes per candidate. Memory is O(n m): δ^PS is never tabulated.
///
/// Errors: null, misaligned or overlapping outputs; a length not representable → `DPMO_OVERFLOW`;
/// otherwise n ≥ 2³² → `DPMO_CAPACITY_EXCEEDED`.
///
/// # Safety
/// `out_values_len`, `out_indices_len`: one writable size_t each.
#[no_mangle]
pub unsafe extern "C" fn dpmo_privpareto_scratch_len(
    n: usize,
    m: usize,
    out_values_len: *mut usize,
    out_indices_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        let s = multi::privpareto_scratch_len(n, m)?;
        write_lengths(s.values, s.indices, out_values_len, out_indices_len)
    })())
}

fn pareto_sensitivity<'a>(
    deltas: Option<&'a [LocalSensitivity<'a>]>,
    max_distance: usize,
    dampening: dpmo_core::Dampening,
) -> ParetoSensitivity<'a> {
    match deltas {
        None => ParetoSensitivity::Global,
        Some(deltas) => ParetoSensitivity::Local {
            deltas,
            max_distance,
            dampening,
        },
    }
}

/// PrivPareto (PrivPareto paper, §4.3): selects k of the n candidates without replacement by their Pareto
/// score (Def. 4.3, under `dominance`), each round by `selector` (`DPMO_SELECTOR_*`, optionally
/// `| DPMO_FLOAT`) at ε/k over the candidates left, re-scored among themselves. ε-DP in total. Writes the k
/// indices in pick order to `out_indices`.
/// * `deltas` NULL: global sensitivity Δ = n′ − 1 (n′ candidates left); `max_distance` and `dampening` are
///   unused (`dampening` must still be a `DPMO_DAMPENING_*` value).
/// * `deltas` = m specs, δ_i admissible for objective i: local sensitivity, the Pareto score dampened
///   (`dampening`: `DPMO_DAMPENING_PLAIN` or `DPMO_DAMPENING_SHIFTED`) with δ^PS (Def. 4.5, Thm. 4.7), then
///   selected with Δ = 1. δ^PS is computed exactly (integer grids, PrivPareto paper Thm. 4.7 holds in the
///   arithmetic that runs) one distance at a time, and saturated to n′ − 1 from a public distance T on,
///   which keeps it admissible: T = `max_distance`, or with `max_distance` = 0 (automatic) min(L, C) for
///   plain dampening (L = ⌈2048/ε′⌉ + 2, beyond which the exact selectors weigh every candidate alike) and
///   min(⌈2 (16 + ln n′) / ε′⌉, C) for shifted dampening, ε′ = ε/k; never beyond the work cap
///   C = ⌊C_m / k⌋ with C_m = 2048 (m ≤ 2), 256 (m = 3), 128 (m = 4), 64 (m ≤ 8), 32 (m ≤ 16) (C = 0 when
///   k > C_m: each round is then the global mechanism). The
///   walk stops earlier once every score is determined. A round probes δ^PS at most 3T + 1 times (each
///   O(n log n) for m ≤ 2) and calls a δ callback at most 8 n m T times: at n = 1000 a selection takes at
///   most about 0.8 s of CPU for any m, k and input.
///
/// Scratch: `values` and `indices` of the lengths `dpmo_privpareto_scratch_len(n, m)` reports; their
/// contents afterwards are unspecified. `budget` (nullable) is charged ε.
///
/// Errors: as for `dpmo_pareto_scores` and `dpmo_pareto_sensitivity_table`; an unknown `selector` or
/// `dampening`, k = 0 or k > n → `DPMO_INVALID_ARGUMENT`; Laplace noise without `DPMO_FLOAT` →
/// `DPMO_UNSUPPORTED`; ε not finite or ≤ 0 → `DPMO_INVALID_EPSILON`; an invalid generator or budget; null,
/// misaligned or overlapping buffers.
///
/// # Safety
/// `rng`: an initialised generator; `utilities`: n · m readable doubles; `deltas`: NULL or m valid specs;
/// `out_indices`: k writable size_t; the scratches writable for their lengths; `budget`: NULL or a valid
/// budget. No output may overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_privpareto(
    rng: *mut dpmo_rng,
    utilities: *const f64,
    n: usize,
    m: usize,
    dominance: u32,
    deltas: *const dpmo_sensitivity,
    max_distance: usize,
    dampening: u32,
    selector: u32,
    epsilon: f64,
    k: usize,
    out_indices: *mut usize,
    values: *mut f64,
    values_len: usize,
    indices: *mut usize,
    indices_len: usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let dominance = dominance_of(dominance)?;
        let dampening = dampening_of(dampening)?;
        let (selector, arithmetic) = selector_of(selector)?;
        let len = utilities_len(n, m)?;
        let selection = Selection {
            rng,
            budget,
            out: (out_indices, k),
            values: (values, values_len),
            indices: (indices, indices_len),
        };
        selection.check()?;
        check_out(values)?;
        check_out(indices)?;
        // SAFETY: the caller promises n · m readable doubles.
        let u = unsafe { input(utilities, len) }?;
        // SAFETY: the caller promises NULL or m readable specs.
        let specs = unsafe { optional_specs(deltas, m) }?;
        let regions = specs.as_ref().map_or(&[][..], |s| s.regions());
        // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer, and the
        // sensitivities are built (their values validated) only once the budget is charged.
        unsafe {
            selection.run(epsilon, &[Region::of(utilities, len)], regions, |g, out, v, ix| {
                let built = specs.as_ref().map(|s| s.build(n)).transpose()?;
                let sens = pareto_sensitivity(built.as_ref().map(|b| &b[..m]), max_distance, dampening);
                multi::select_privpareto(g, u, m, dominance, sens, selector, epsilon, out, v, ix, arithmetic)
            })
        }
    })())
}

/// Output probabilities of PrivPareto with the exponential mechanism and k = 1, in floating point: global,
/// P(r) ∝ exp(ε PS(r) / (2(n − 1))); local, P(r) ∝ exp(ε D(PS, δ^PS)(r) / 2) (Local Dampening paper,
/// Def. 3.8, with δ^PS). Writes n probabilities to `out_probabilities`. Arguments, scratch and errors as
/// for `dpmo_select_privpareto`.
///
/// # Safety
/// As for `dpmo_select_privpareto`; `out_probabilities`: n writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_privpareto_probabilities(
    utilities: *const f64,
    n: usize,
    m: usize,
    dominance: u32,
    deltas: *const dpmo_sensitivity,
    max_distance: usize,
    dampening: u32,
    epsilon: f64,
    out_probabilities: *mut f64,
    values: *mut f64,
    values_len: usize,
    indices: *mut usize,
    indices_len: usize,
) -> dpmo_status {
    status_of((|| {
        let dominance = dominance_of(dominance)?;
        let dampening = dampening_of(dampening)?;
        let len = utilities_len(n, m)?;
        check_out(out_probabilities)?;
        check_out(values)?;
        check_out(indices)?;
        // SAFETY: the caller promises n · m readable doubles.
        let u = unsafe { input(utilities, len) }?;
        // SAFETY: forwarded caller contract; outputs checked disjoint from every buffer before slicing.
        unsafe {
            with_optional_sensitivities(deltas, m, n, |ds, regions| {
                disjoint(
                    &[
                        Region::of(out_probabilities, n),
                        Region::of(values, values_len),
                        Region::of(indices, indices_len),
                    ],
                    &[Region::of(utilities, len)],
                    regions,
                )?;
                let out = output(out_probabilities, n)?;
                let v = output(values, values_len)?;
                let ix = output(indices, indices_len)?;
                let sens = pareto_sensitivity(ds, max_distance, dampening);
                multi::privpareto_probabilities(u, m, dominance, sens, epsilon, out, v, ix)
            })
        }
    })())
}

// ------------------------------------------------------------------------------------------ PrivAgg

/// Writes the scratch lengths `dpmo_select_privagg` needs for n candidates and m objectives, global or
/// local, in either arithmetic: `*out_values_len` doubles = 4n, `*out_indices_len` size_t = 2n
/// (`dpmo_privagg_probabilities` needs only the values).
///
/// Errors: m = 0 → `DPMO_INVALID_ARGUMENT`; null, misaligned or overlapping outputs; a length not
/// representable → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_values_len`, `out_indices_len`: one writable size_t each.
#[no_mangle]
pub unsafe extern "C" fn dpmo_privagg_scratch_len(
    n: usize,
    m: usize,
    out_values_len: *mut usize,
    out_indices_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        let s = multi::privagg_scratch_len(n, m)?;
        write_lengths(s.values, s.indices, out_values_len, out_indices_len)
    })())
}

/// The PrivAgg sensitivity: local when `deltas` is given, else global from `globals` (m doubles, read
/// here, whose region is returned for the overlap checks).
///
/// # Safety
/// `globals`: m readable doubles when `deltas` is None.
unsafe fn agg_sensitivity<'a>(
    deltas: Option<&'a [LocalSensitivity<'a>]>,
    globals: *const f64,
    m: usize,
    max_distance: usize,
    dampening: dpmo_core::Dampening,
) -> Result<(AggSensitivity<'a>, Region), Error> {
    match deltas {
        None => {
            // SAFETY: the caller promises m readable doubles.
            let g = unsafe { input(globals, m) }?;
            Ok((AggSensitivity::Global(g), Region::of(globals, m)))
        }
        Some(deltas) => Ok((
            AggSensitivity::Local {
                deltas,
                max_distance,
                dampening,
            },
            Region::EMPTY,
        )),
    }
}

/// PrivAgg (PrivPareto paper, §5): selects k of the n candidates without replacement by
/// u_agg = Σ_i w_i u_i (m weights of any sign), each round by `selector` (`DPMO_SELECTOR_*`, optionally
/// `| DPMO_FLOAT`) at ε/k. ε-DP in total. Writes the k indices in pick order to `out_indices`.
/// * `deltas` NULL: global, Δ_agg = Σ |w_i| Δ_i (Thm. 5.3) from `globals` (m values Δ_i > 0);
///   `max_distance` and `dampening` are unused (`dampening` must still be a `DPMO_DAMPENING_*` value).
/// * `deltas` = m specs (δ_i admissible for objective i, Δ_i = its `global`): local, u_agg dampened
///   (`dampening`) with δ_agg = Σ |w_i| δ_i (Thm. 5.4), evaluated on demand and saturated where every δ_i is
///   (`max_distance` = 0) or at `max_distance` if earlier, and at 2048 distances at most when an objective's
///   δ is `DPMO_DELTA_SHARED` (callbacks are saturated there anyway): each candidate's dampening evaluates
///   δ_agg at most once per distance; then selected with Δ = 1; `globals` is unused and may be NULL.
///
/// In exact arithmetic (the default) the weighted sum is computed exactly on a grid of about 2^-56 Δ_agg
/// (each term floored, each sensitivity term rounded up, both accounted for exactly). Scratch: `values` and
/// `indices` of the lengths `dpmo_privagg_scratch_len(n, m)` reports. `budget` (nullable) is charged ε.
///
/// Errors: as for `dpmo_weighted_sum`, `dpmo_weighted_global_sensitivity` and
/// `dpmo_weighted_sensitivity_table`; an unknown `selector` or `dampening`, k = 0 or k > n →
/// `DPMO_INVALID_ARGUMENT`; Laplace noise without `DPMO_FLOAT` → `DPMO_UNSUPPORTED`; ε not finite or ≤ 0 →
/// `DPMO_INVALID_EPSILON`; a short scratch; an invalid generator or budget; null, misaligned or
/// overlapping buffers.
///
/// # Safety
/// `rng`: an initialised generator; `utilities`: n · m readable doubles; `weights`: m readable doubles;
/// `globals`: m readable doubles when `deltas` is NULL; `deltas`: NULL or m valid specs; `out_indices`: k
/// writable size_t; the scratches writable for their lengths; `budget`: NULL or a valid budget.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_privagg(
    rng: *mut dpmo_rng,
    utilities: *const f64,
    n: usize,
    m: usize,
    weights: *const f64,
    globals: *const f64,
    deltas: *const dpmo_sensitivity,
    max_distance: usize,
    dampening: u32,
    selector: u32,
    epsilon: f64,
    k: usize,
    out_indices: *mut usize,
    values: *mut f64,
    values_len: usize,
    indices: *mut usize,
    indices_len: usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let dampening = dampening_of(dampening)?;
        let (selector, arithmetic) = selector_of(selector)?;
        let len = utilities_len(n, m)?;
        let selection = Selection {
            rng,
            budget,
            out: (out_indices, k),
            values: (values, values_len),
            indices: (indices, indices_len),
        };
        selection.check()?;
        check_out(values)?;
        check_out(indices)?;
        // SAFETY: the caller promises n · m and m readable doubles.
        let (u, w) = unsafe { (input(utilities, len)?, input(weights, m)?) };
        if w.iter().any(|x| !x.is_finite()) {
            // Weights are public: refused before anything is charged.
            return Err(Error::NonFiniteInput);
        }
        // SAFETY: the caller promises NULL or m readable specs.
        let specs = unsafe { optional_specs(deltas, m) }?;
        let regions = specs.as_ref().map_or(&[][..], |s| s.regions());
        // The global sensitivities are public arguments: read and checked before the charge.
        // SAFETY: the caller promises m readable doubles at `globals` when `deltas` is NULL.
        let (global_values, globals_region) = if specs.is_none() {
            (Some(unsafe { input(globals, m) }?), Region::of(globals, m))
        } else {
            (None, Region::EMPTY)
        };
        let inputs = [Region::of(utilities, len), Region::of(weights, m), globals_region];
        // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer, and the
        // sensitivities are built (their values validated) only once the budget is charged.
        unsafe {
            selection.run(epsilon, &inputs, regions, |g, out, v, ix| {
                let built = specs.as_ref().map(|s| s.build(n)).transpose()?;
                let sens = match (&built, global_values) {
                    (Some(b), _) => AggSensitivity::Local {
                        deltas: &b[..m],
                        max_distance,
                        dampening,
                    },
                    (None, Some(g)) => AggSensitivity::Global(g),
                    (None, None) => return Err(Error::NullPointer),
                };
                multi::select_privagg(g, u, w, sens, selector, epsilon, out, v, ix, arithmetic)
            })
        }
    })())
}

/// Output probabilities of PrivAgg with the exponential mechanism and k = 1, in floating point: global,
/// P(r) ∝ exp(ε u_agg(r) / (2 Δ_agg)); local, P(r) ∝ exp(ε D(u_agg, δ_agg)(r) / 2). Writes n probabilities
/// to `out_probabilities`. Arguments and errors as for `dpmo_select_privagg`; `values` as reported by
/// `dpmo_privagg_scratch_len` (no index scratch).
///
/// # Safety
/// As for `dpmo_select_privagg`; `out_probabilities`: n writable doubles.
#[no_mangle]
pub unsafe extern "C" fn dpmo_privagg_probabilities(
    utilities: *const f64,
    n: usize,
    m: usize,
    weights: *const f64,
    globals: *const f64,
    deltas: *const dpmo_sensitivity,
    max_distance: usize,
    dampening: u32,
    epsilon: f64,
    out_probabilities: *mut f64,
    values: *mut f64,
    values_len: usize,
) -> dpmo_status {
    status_of((|| {
        let dampening = dampening_of(dampening)?;
        let len = utilities_len(n, m)?;
        check_out(out_probabilities)?;
        check_out(values)?;
        // SAFETY: the caller promises n · m and m readable doubles.
        let (u, w) = unsafe { (input(utilities, len)?, input(weights, m)?) };
        // SAFETY: forwarded caller contract; outputs checked disjoint from every buffer before slicing.
        unsafe {
            with_optional_sensitivities(deltas, m, n, |ds, regions| {
                let (sens, globals_region) = agg_sensitivity(ds, globals, m, max_distance, dampening)?;
                disjoint(
                    &[Region::of(out_probabilities, n), Region::of(values, values_len)],
                    &[Region::of(utilities, len), Region::of(weights, m), globals_region],
                    regions,
                )?;
                let out = output(out_probabilities, n)?;
                let v = output(values, values_len)?;
                multi::privagg_probabilities(u, w, sens, epsilon, out, v)
            })
        }
    })())
}

// ------------------------------------------------------------------------------------------ top-k

/// Splits the index scratch into (index map, permutation): the first n entries, then the rest. A scratch
/// shorter than n is passed whole (the core then reports `DPMO_SCRATCH_TOO_SMALL`).
fn split_n<T>(s: &mut [T], n: usize) -> (&mut [T], &mut [T]) {
    if s.len() >= n {
        s.split_at_mut(n)
    } else {
        (s, &mut [])
    }
}

/// Writes the scratch lengths of `dpmo_select_top_k` and `dpmo_select_top_k_gumbel` for n candidates and
/// `selector` (any selector for the Gumbel function: pass `DPMO_SELECTOR_EXPONENTIAL`): `*out_values_len` =
/// n doubles and `*out_indices_len` = n size_t, or 2n for a selector that needs a permutation
/// (permute-and-flip, and report-noisy-max with Exponential noise in exact arithmetic). The lengths suffice
/// for either arithmetic.
///
/// Errors: an unknown selector → `DPMO_INVALID_ARGUMENT` (Laplace noise without `DPMO_FLOAT` →
/// `DPMO_UNSUPPORTED`); null, misaligned or overlapping outputs; a length not representable →
/// `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_values_len`, `out_indices_len`: one writable size_t each.
#[no_mangle]
pub unsafe extern "C" fn dpmo_top_k_scratch_len(
    n: usize,
    selector: u32,
    out_values_len: *mut usize,
    out_indices_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        let (selector, _) = selector_of(selector)?;
        let indices = if selector.needs_permutation(Arithmetic::Exact) {
            n.checked_mul(2).ok_or(Error::Overflow)?
        } else {
            n
        };
        write_lengths(n, indices, out_values_len, out_indices_len)
    })())
}

/// Top-k without replacement over single-objective scores: k rounds of `selector` (`DPMO_SELECTOR_*`,
/// optionally `| DPMO_FLOAT`) at ε/k each (rounded down, so the rounds never spend more than ε) with global
/// sensitivity `sensitivity`, over the candidates not yet chosen (sequential composition: ε-DP in total).
/// Writes the k indices in pick order to `out_indices`; k = n gives a random permutation.
///
/// Scratch: as `dpmo_top_k_scratch_len(n, selector)` reports. `budget` (nullable) is charged ε.
///
/// Errors: n = 0 → `DPMO_EMPTY_INPUT`; k = 0, k > n or an unknown selector → `DPMO_INVALID_ARGUMENT`;
/// Laplace noise without `DPMO_FLOAT` → `DPMO_UNSUPPORTED`; ε not finite or ≤ 0 → `DPMO_INVALID_EPSILON`; a
/// sensitivity not finite or ≤ 0 → `DPMO_INVALID_SENSITIVITY`; a non-finite score; a short scratch; an
/// invalid generator or budget; null, misaligned or overlapping buffers.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `out_indices`: k writable size_t; the
/// scratches writable for their lengths; `budget`: NULL or a valid budget.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_top_k(
    rng: *mut dpmo_rng,
    selector: u32,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    k: usize,
    out_indices: *mut usize,
    scratch: *mut f64,
    scratch_len: usize,
    index_scratch: *mut usize,
    index_len: usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let (selector, arithmetic) = selector_of(selector)?;
        let selection = Selection {
            rng,
            budget,
            out: (out_indices, k),
            values: (scratch, scratch_len),
            indices: (index_scratch, index_len),
        };
        selection.check()?;
        check_out(scratch)?;
        check_out(index_scratch)?;
        // SAFETY: the caller promises n readable doubles.
        let s = unsafe { input(scores, n) }?;
        // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer.
        unsafe {
            selection.run(epsilon, &[Region::of(scores, n)], &[], |g, out, work, ix| {
                let (index, perm) = split_n(ix, n);
                select::select_top_k(g, selector, s, sensitivity, epsilon, out, work, index, perm, arithmetic)
            })
        }
    })())
}

/// One-shot top-k with Gumbel noise (Durfee & Rogers 2019): its distribution is that of k sequential
/// exponential mechanisms at ε/k each (ε-DP in total). `flags` = 0 runs exactly that peeling, exactly
/// (O(k n)); `flags` = `DPMO_FLOAT` runs the one-shot form in floating point — Gumbel noise of scale 2kΔ/ε
/// added once, the k largest reported in decreasing order (O(n + k log k)).
///
/// Scratch: `scratch` n doubles, `index_scratch` n size_t. Budget and errors as for `dpmo_select_top_k`;
/// `flags` other than 0 or `DPMO_FLOAT` → `DPMO_INVALID_ARGUMENT`.
///
/// # Safety
/// As for `dpmo_select_top_k`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_top_k_gumbel(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    k: usize,
    flags: u32,
    out_indices: *mut usize,
    scratch: *mut f64,
    scratch_len: usize,
    index_scratch: *mut usize,
    index_len: usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let arithmetic = flags_of(flags)?;
        let selection = Selection {
            rng,
            budget,
            out: (out_indices, k),
            values: (scratch, scratch_len),
            indices: (index_scratch, index_len),
        };
        selection.check()?;
        check_out(scratch)?;
        check_out(index_scratch)?;
        // SAFETY: the caller promises n readable doubles.
        let s = unsafe { input(scores, n) }?;
        // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer.
        unsafe {
            selection.run(epsilon, &[Region::of(scores, n)], &[], |g, out, work, ix| {
                select::select_top_k_gumbel(g, s, sensitivity, epsilon, out, work, ix, arithmetic)
            })
        }
    })())
}

/// Top-k without replacement with local dampening (Local Dampening paper, Defs. 3.6/4.3): the n utilities
/// are dampened once with δ (`sensitivity`, plain or shifted `dampening`), then k rounds of `selector`
/// (optionally `| DPMO_FLOAT`) at ε/k each run on the dampened scores with Δ = 1. ε-DP in total when δ is
/// admissible.
///
/// Scratch: as `dpmo_local_dampening_scratch_len(n, k, selector)` reports. Budget and errors as for
/// `dpmo_select_top_k` and `dpmo_dampen`.
///
/// # Safety
/// As for `dpmo_select_top_k`; `sensitivity`: a valid spec for n candidates.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_local_dampening_top_k(
    rng: *mut dpmo_rng,
    utilities: *const f64,
    n: usize,
    sensitivity: *const dpmo_sensitivity,
    dampening: u32,
    selector: u32,
    epsilon: f64,
    k: usize,
    out_indices: *mut usize,
    scratch: *mut f64,
    scratch_len: usize,
    index_scratch: *mut usize,
    index_len: usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let kind = dampening_of(dampening)?;
        let (selector, arithmetic) = selector_of(selector)?;
        let selection = Selection {
            rng,
            budget,
            out: (out_indices, k),
            values: (scratch, scratch_len),
            indices: (index_scratch, index_len),
        };
        selection.check()?;
        check_out(scratch)?;
        check_out(index_scratch)?;
        // SAFETY: the caller promises n readable doubles.
        let u = unsafe { input(utilities, n) }?;
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        // SAFETY: the caller promises one readable spec.
        let specs = unsafe { Specs::read(sensitivity, 1) }?;
        // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer, and the
        // sensitivity is built (its values validated) only once the budget is charged.
        unsafe {
            selection.run(
                epsilon,
                &[Region::of(utilities, n)],
                specs.regions(),
                |g, out, scratch, ix| {
                    let delta = &specs.build(n)?[0];
                    let half = scratch.len() / 2;
                    let (dampened, work) = scratch.split_at_mut(half);
                    let (index, perm) = split_n(ix, n);
                    local::select_local_dampening_top_k(
                        g, u, delta, kind, selector, epsilon, out, dampened, work, index, perm, arithmetic,
                    )
                },
            )
        }
    })())
}
