//! Local sensitivity input, the dampening stage, and local dampening end to end.

use crate::budget::dpmo_budget;
use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::rng::dpmo_rng;
use crate::select::selector_of;
use crate::selection::Selection;
use crate::status::{dpmo_status, status_of};
use core::ffi::c_void;
use dpmo_core::dampen::{dampen_with, Dampening};
use dpmo_core::select::Arithmetic;
use dpmo_core::sensitivity::{max_over_candidates, DeltaFunction, DeltaSource, LocalSensitivity};
use dpmo_core::{local, Error, MAX_OBJECTIVES};

/// δ(t, r) = values[r] for every t < t_max (`values_len` = n).
pub const DPMO_DELTA_PER_CANDIDATE: u32 = 0;
/// δ(t, r) = values[r · columns + t] for t < columns, Δ beyond (`values_len` = n · columns).
pub const DPMO_DELTA_TABLE: u32 = 1;
/// δ(t, r) = values[t] for every r, for t < values_len, Δ beyond (the same for all candidates). Local
/// dampening walks it once per block of 256 candidates sorted by utility, not once per candidate:
/// O(n log n + ⌈n/256⌉ T).
pub const DPMO_DELTA_SHARED: u32 = 2;
/// δ(t, r) = callback(context, r, t). It must be deterministic and return a finite value ≥ 0; NaN, a
/// negative value or ∞ makes the calling function fail with `DPMO_INVALID_SENSITIVITY_VALUE`. A callback's
/// δ is saturated at min(t_max, 2048) (it has no closed form in t): a selection calls it at most 2048 times
/// per candidate and objective (twice that for the functions that evaluate everything before writing).
pub const DPMO_DELTA_CALLBACK: u32 = 3;

/// Plain local dampening (Local Dampening paper, Def. 3.6 / 3.8).
pub const DPMO_DAMPENING_PLAIN: u32 = 0;
/// Shifted local dampening (Local Dampening paper, Def. 4.3), computed in closed form.
pub const DPMO_DAMPENING_SHIFTED: u32 = 1;

/// A per-candidate local sensitivity δ(x, t, r), as the caller supplies it.
///
/// Whatever the source, every value is clamped to `global` (Δ) and forced to Δ for t ≥ `t_max`
/// (saturation, which keeps an admissible δ admissible). Admissibility of the values themselves (Local
/// Dampening paper, Def. 3.3) is the caller's responsibility: an inadmissible δ voids the privacy guarantee.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_sensitivity {
    /// `DPMO_DELTA_PER_CANDIDATE`, `DPMO_DELTA_TABLE`, `DPMO_DELTA_SHARED` or `DPMO_DELTA_CALLBACK`.
    pub kind: u32,
    /// The values (unused for callbacks).
    pub values: *const f64,
    /// The number of doubles at `values` (n, n · columns, or T).
    pub values_len: usize,
    /// For `DPMO_DELTA_TABLE`: the number T of distances per candidate.
    pub columns: usize,
    /// For `DPMO_DELTA_CALLBACK`: returns δ(x, t, r) for candidate r at distance t.
    pub callback: Option<unsafe extern "C" fn(context: *mut c_void, r: usize, t: usize) -> f64>,
    /// Passed unchanged to `callback`.
    pub context: *mut c_void,
    /// The global sensitivity Δ (> 0, finite).
    pub global: f64,
    /// Saturation distance T_max ≥ 1: δ(x, t, r) = Δ for t ≥ t_max. Values above 2³² − 1 are treated as
    /// 2³² − 1 (which keeps dampened scores precise; saturating earlier keeps δ admissible), and for a
    /// callback values above 2048 as 2048.
    pub t_max: usize,
}

/// A caller's δ callback and its context, as a core [`DeltaFunction`].
#[derive(Clone, Copy)]
pub(crate) struct CCallback {
    f: unsafe extern "C" fn(context: *mut c_void, r: usize, t: usize) -> f64,
    ctx: *mut c_void,
}

impl DeltaFunction for CCallback {
    fn delta(&self, r: usize, t: usize) -> f64 {
        // SAFETY: the caller supplied this function and context for exactly this use.
        unsafe { (self.f)(self.ctx, r, t) }
    }
}

/// Checks and copies the spec at `spec` (so later writes cannot race), with the region it occupies.
///
/// # Safety
/// `spec` must be null or point to a valid `dpmo_sensitivity`.
pub(crate) unsafe fn read_spec(spec: *const dpmo_sensitivity) -> Result<(dpmo_sensitivity, Region), Error> {
    check_out(spec.cast_mut())?;
    // SAFETY: non-null and aligned; validity is the caller's contract.
    Ok((unsafe { spec.read() }, Region::of(spec, 1)))
}

/// The callback of a `DPMO_DELTA_CALLBACK` spec (None for other kinds or a null callback), to be stored
/// by the caller of [`sensitivity_of`] for as long as the sensitivity is used.
pub(crate) fn callback_of(s: &dpmo_sensitivity) -> Option<CCallback> {
    match (s.kind, s.callback) {
        (DPMO_DELTA_CALLBACK, Some(f)) => Some(CCallback { f, ctx: s.context }),
        _ => None,
    }
}

/// Converts a copied spec into a validated sensitivity for n candidates, borrowing its values (and the
/// stored callback, see [`callback_of`]); returns the region of the values too, for overlap checks.
///
/// # Safety
/// `s.values` must hold `s.values_len` doubles that stay valid and unmodified for `'a`.
pub(crate) unsafe fn sensitivity_of<'a>(
    s: &dpmo_sensitivity,
    callback: &'a Option<CCallback>,
    n: usize,
) -> Result<(LocalSensitivity<'a>, Region), Error> {
    let values = |len: usize| -> Result<&'a [f64], Error> {
        // An empty table may come as (NULL, 0): δ is then Δ at every distance.
        if s.values_len == 0 && s.values.is_null() && len == 0 {
            return Ok(&[]);
        }
        // SAFETY: the caller promises `values_len` readable doubles at `values`.
        let v = unsafe { input(s.values, s.values_len) }?;
        if s.values_len != len {
            return Err(Error::LengthMismatch);
        }
        Ok(v)
    };
    let source = match s.kind {
        DPMO_DELTA_PER_CANDIDATE => DeltaSource::PerCandidate(values(n)?),
        DPMO_DELTA_TABLE => DeltaSource::Table {
            values: values(n.checked_mul(s.columns).ok_or(Error::Overflow)?)?,
            columns: s.columns,
        },
        DPMO_DELTA_SHARED => DeltaSource::Shared(values(s.values_len)?),
        DPMO_DELTA_CALLBACK => DeltaSource::Function(callback.as_ref().ok_or(Error::NullPointer)?),
        _ => return Err(Error::InvalidArgument),
    };
    let values_region = match s.kind {
        DPMO_DELTA_CALLBACK => Region::EMPTY,
        _ => Region::of(s.values, s.values_len),
    };
    Ok((LocalSensitivity::new(source, s.global, s.t_max, n)?, values_region))
}

/// A spec with nothing in it, to fill the unused slots of [`Specs`].
pub(crate) const NO_SPEC: dpmo_sensitivity = dpmo_sensitivity {
    kind: 0,
    values: core::ptr::null(),
    values_len: 0,
    columns: 0,
    callback: None,
    context: core::ptr::null_mut(),
    global: 0.0,
    t_max: 0,
};

/// Up to `DPMO_MAX_OBJECTIVES` specs copied from the caller (so later writes cannot race), with the regions
/// they read. The values are *not* validated here: a selecting function charges its budget first and builds
/// the sensitivities afterwards ([`Specs::build`]), because a NaN or negative δ in a table is a property of the
/// data, like a NaN utility, and must not be free to discover.
pub(crate) struct Specs {
    copies: [dpmo_sensitivity; MAX_OBJECTIVES],
    callbacks: [Option<CCallback>; MAX_OBJECTIVES],
    m: usize,
    regions: [Region; MAX_OBJECTIVES + 1],
}

impl Specs {
    /// Copies the m specs at `specs` (1 ≤ m ≤ `DPMO_MAX_OBJECTIVES`).
    ///
    /// # Safety
    /// `specs` must be null or point to m readable specs.
    pub(crate) unsafe fn read(specs: *const dpmo_sensitivity, m: usize) -> Result<Self, Error> {
        if m == 0 {
            return Err(Error::InvalidArgument);
        }
        if m > MAX_OBJECTIVES {
            return Err(Error::CapacityExceeded);
        }
        // SAFETY: the caller promises m readable specs.
        let given = unsafe { input(specs, m) }?;
        let mut s = Specs {
            copies: [NO_SPEC; MAX_OBJECTIVES],
            callbacks: [None; MAX_OBJECTIVES],
            m,
            regions: [Region::EMPTY; MAX_OBJECTIVES + 1],
        };
        s.copies[..m].copy_from_slice(given);
        for i in 0..m {
            s.callbacks[i] = callback_of(&s.copies[i]);
            s.regions[i] = match s.copies[i].kind {
                DPMO_DELTA_CALLBACK => Region::EMPTY,
                _ => Region::of(s.copies[i].values, s.copies[i].values_len),
            };
        }
        s.regions[m] = Region::of(specs, m);
        Ok(s)
    }

    /// The regions the specs occupy and read (their values, and the specs themselves).
    pub(crate) fn regions(&self) -> &[Region] {
        &self.regions[..=self.m]
    }

    /// The validated sensitivities for n candidates (`dpmo_sensitivity_value`'s checks), in the first m slots.
    ///
    /// # Safety
    /// Every spec's `values` must hold `values_len` doubles that stay valid and unmodified during the call.
    pub(crate) unsafe fn build(&self, n: usize) -> Result<[LocalSensitivity<'_>; MAX_OBJECTIVES], Error> {
        if n == 0 {
            return Err(Error::EmptyInput);
        }
        let placeholder = LocalSensitivity::new(DeltaSource::Shared(&[]), 1.0, 1, 1)?;
        let mut deltas = [placeholder; MAX_OBJECTIVES];
        for (i, d) in deltas.iter_mut().enumerate().take(self.m) {
            // SAFETY: forwarded caller contract; the callbacks live in `self`, which outlives `deltas`.
            *d = unsafe { sensitivity_of(&self.copies[i], &self.callbacks[i], n) }?.0;
        }
        Ok(deltas)
    }
}

/// Copies the spec, borrows its values and runs `f` with the validated sensitivity. The region of the
/// values is returned too so callers can check their outputs against it.
///
/// # Safety
/// `spec` must be null or point to a valid `dpmo_sensitivity` whose `values` hold `values_len` doubles.
pub(crate) unsafe fn with_sensitivity<T>(
    spec: *const dpmo_sensitivity,
    n: usize,
    f: impl FnOnce(&LocalSensitivity<'_>, [Region; 2]) -> Result<T, Error>,
) -> Result<T, Error> {
    // SAFETY: forwarded caller contract.
    let (s, spec_region) = unsafe { read_spec(spec) }?;
    let callback = callback_of(&s);
    // SAFETY: forwarded caller contract.
    let (delta, values_region) = unsafe { sensitivity_of(&s, &callback, n) }?;
    f(&delta, [spec_region, values_region])
}

pub(crate) fn dampening_of(kind: u32) -> Result<Dampening, Error> {
    match kind {
        DPMO_DAMPENING_PLAIN => Ok(Dampening::Plain),
        DPMO_DAMPENING_SHIFTED => Ok(Dampening::Shifted),
        _ => Err(Error::InvalidArgument),
    }
}

/// Writes δ(x, t, r) after clamping and saturation to `*out_value`, for candidate r < n.
///
/// # Safety
/// `sensitivity`: a valid spec for n candidates; `out_value`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_sensitivity_value(
    sensitivity: *const dpmo_sensitivity,
    n: usize,
    r: usize,
    t: usize,
    out_value: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_value)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_sensitivity(sensitivity, n, |d, inputs| {
                check_disjoint(&[Region::of(out_value, 1)], &inputs)?;
                let v = d.delta(r, t)?;
                out_value.write(v);
                Ok(())
            })
        }
    })())
}

/// The largest n `dpmo_sensitivity_max_over_candidates` accepts (2^32): with a callback or shared spec no
/// buffer bounds n, and the work is n · T evaluations.
pub const DPMO_MAX_UNBUFFERED_CANDIDATES: u64 = 4_294_967_296;

/// The "δ replacement" of the Local Dampening paper (§4.2): writes δ̂(t) = max over r of δ(x, t, r) for
/// t < T to `out[0..T]`, T = min(t_max, table columns, `out_capacity`… see below), and T to `*out_len`.
/// Build a `DPMO_DELTA_SHARED` spec over `out` to dampen every candidate with the same scale (no
/// inversions). The work is n · T evaluations of δ; n above `DPMO_MAX_UNBUFFERED_CANDIDATES` →
/// `DPMO_INVALID_ARGUMENT`; `out_capacity` below T → `DPMO_SCRATCH_TOO_SMALL`.
///
/// # Safety
/// `sensitivity`: a valid spec for n candidates; `out`: `out_capacity` writable doubles; `out_len`: one
/// writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_sensitivity_max_over_candidates(
    sensitivity: *const dpmo_sensitivity,
    n: usize,
    out: *mut f64,
    out_capacity: usize,
    out_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_len)?;
        check_out(out)?;
        if n as u64 > DPMO_MAX_UNBUFFERED_CANDIDATES {
            return Err(Error::InvalidArgument);
        }
        // SAFETY: forwarded caller contract; outputs checked disjoint from inputs before slicing.
        unsafe {
            with_sensitivity(sensitivity, n, |d, inputs| {
                check_disjoint(&[Region::of(out, out_capacity), Region::of(out_len, 1)], &inputs)?;
                let out = output(out, out_capacity)?;
                let m = max_over_candidates(d, out)?;
                out_len.write(m.saturation());
                Ok(())
            })
        }
    })())
}

/// The dampening stage: writes the dampened scores of the n utilities to `out_scores` — D_{u,δ} of Def. 3.6
/// (`DPMO_DAMPENING_PLAIN`) or the closed form of the shifted mechanism, Def. 4.3 (`DPMO_DAMPENING_SHIFTED`).
/// The results have global sensitivity 1, so any selector may follow with sensitivity 1.
///
/// # Safety
/// `utilities`: n readable doubles; `sensitivity`: a valid spec for n candidates; `out_scores`: n writable
/// doubles overlapping no input.
#[no_mangle]
pub unsafe extern "C" fn dpmo_dampen(
    utilities: *const f64,
    n: usize,
    sensitivity: *const dpmo_sensitivity,
    dampening: u32,
    out_scores: *mut f64,
) -> dpmo_status {
    status_of((|| {
        let kind = dampening_of(dampening)?;
        // SAFETY: the caller promises n readable doubles.
        let u = unsafe { input(utilities, n) }?;
        check_out(out_scores)?;
        // SAFETY: forwarded caller contract; outputs checked disjoint from inputs before slicing.
        unsafe {
            with_sensitivity(sensitivity, n, |d, [a, b]| {
                check_disjoint(&[Region::of(out_scores, n)], &[Region::of(utilities, n), a, b])?;
                dampen_with(u, d, kind, output(out_scores, n)?)
            })
        }
    })())
}

/// Exact output probabilities of local dampening (plain or shifted) followed by the exponential mechanism,
/// P(r) ∝ exp(epsilon · D(x, r) / 2), written to `out_probabilities[0..n]`.
///
/// # Safety
/// As for `dpmo_dampen`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_local_dampening_probabilities(
    utilities: *const f64,
    n: usize,
    sensitivity: *const dpmo_sensitivity,
    dampening: u32,
    epsilon: f64,
    out_probabilities: *mut f64,
) -> dpmo_status {
    status_of((|| {
        let kind = dampening_of(dampening)?;
        // SAFETY: the caller promises n readable doubles.
        let u = unsafe { input(utilities, n) }?;
        check_out(out_probabilities)?;
        // SAFETY: forwarded caller contract; outputs checked disjoint from inputs before slicing.
        unsafe {
            with_sensitivity(sensitivity, n, |d, [a, b]| {
                check_disjoint(&[Region::of(out_probabilities, n)], &[Region::of(utilities, n), a, b])?;
                local::local_dampening_probabilities(u, d, kind, epsilon, output(out_probabilities, n)?)
            })
        }
    })())
}

/// Writes scratch lengths that suffice for both `dpmo_select_local_dampening` and
/// `dpmo_select_local_dampening_top_k` with n candidates, k picks and `selector`, in either arithmetic:
/// `*out_values_len` = 4n doubles (exact arithmetic keeps each dampened score as a 128-bit integer, and top-k
/// a working copy of them) and `*out_indices_len` size_t = n, plus n for a selector that needs a
/// permutation (permute-and-flip, and report-noisy-max with Exponential noise in exact arithmetic). A single
/// selection needs only 2n doubles and, for such a selector, n size_t of `perm_scratch`.
///
/// Errors: k = 0 or k > n, or an unknown selector → `DPMO_INVALID_ARGUMENT` (Laplace noise without
/// `DPMO_FLOAT` → `DPMO_UNSUPPORTED`); null, misaligned or overlapping outputs; a length not representable
/// → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_values_len`, `out_indices_len`: one writable size_t each.
#[no_mangle]
pub unsafe extern "C" fn dpmo_local_dampening_scratch_len(
    n: usize,
    k: usize,
    selector: u32,
    out_values_len: *mut usize,
    out_indices_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        let (selector, _) = selector_of(selector)?;
        if k == 0 || k > n {
            return Err(Error::InvalidArgument);
        }
        let values = local::local_dampening_scratch_len(n)?
            .checked_mul(2)
            .ok_or(Error::Overflow)?;
        // Exact arithmetic needs a permutation wherever float does (and for exponential noise too).
        let perm = if selector.needs_permutation(Arithmetic::Exact) {
            n
        } else {
            0
        };
        write_lengths(
            values,
            n.checked_add(perm).ok_or(Error::Overflow)?,
            out_values_len,
            out_indices_len,
        )
    })())
}

/// Checks that `values` doubles and `indices` size_t are representable, and writes the two lengths.
pub(crate) fn write_lengths(
    values: usize,
    indices: usize,
    out_values_len: *mut usize,
    out_indices_len: *mut usize,
) -> Result<(), Error> {
    check_out(out_values_len)?;
    check_out(out_indices_len)?;
    check_disjoint(&[Region::of(out_values_len, 1), Region::of(out_indices_len, 1)], &[])?;
    let bytes_ok = |len: usize, size: usize| len.checked_mul(size).is_some_and(|b| b <= isize::MAX as usize);
    if !bytes_ok(values, core::mem::size_of::<f64>()) || !bytes_ok(indices, core::mem::size_of::<usize>()) {
        return Err(Error::Overflow);
    }
    // SAFETY: checked non-null, aligned and disjoint.
    unsafe {
        out_values_len.write(values);
        out_indices_len.write(indices);
    }
    Ok(())
}

/// Local dampening end to end: dampen the n utilities with δ (plain or shifted), then select with
/// `selector` (`DPMO_SELECTOR_*`, optionally `| DPMO_FLOAT`) at sensitivity 1. epsilon-DP when δ is
/// admissible (Local Dampening paper, Thms. 3.10 and 4.4; any selector is valid because dampened scores
/// have sensitivity 1, Lemma 3.7). In exact arithmetic (the default) δ is rounded up and the utilities
/// floored onto a grid of about 2^-62 Δ, the dampened scores are computed without rounding, and the
/// selection is exact. `scratch` and `perm_scratch` as `dpmo_local_dampening_scratch_len(n, 1, selector)`
/// reports (`perm_scratch` may be NULL with length 0 when the selector needs no permutation). `budget`
/// (nullable) is charged epsilon.
///
/// # Safety
/// `rng`: an initialised generator; buffers valid for their lengths; no output overlapping another buffer;
/// `budget`: NULL or a valid budget.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_local_dampening(
    rng: *mut dpmo_rng,
    utilities: *const f64,
    n: usize,
    sensitivity: *const dpmo_sensitivity,
    dampening: u32,
    selector: u32,
    epsilon: f64,
    scratch: *mut f64,
    scratch_len: usize,
    perm_scratch: *mut usize,
    perm_scratch_len: usize,
    out_index: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let kind = dampening_of(dampening)?;
        let (selector, arithmetic) = selector_of(selector)?;
        let perm = if selector.needs_permutation(arithmetic) {
            (perm_scratch, perm_scratch_len)
        } else {
            (core::ptr::null_mut(), 0)
        };
        let selection = Selection {
            rng,
            budget,
            out: (out_index, 1),
            values: (scratch, scratch_len),
            indices: perm,
        };
        selection.check()?;
        check_out(scratch)?;
        // SAFETY: the caller promises n readable doubles.
        let u = unsafe { input(utilities, n) }?;
        // SAFETY: the caller promises one readable spec.
        let specs = unsafe { Specs::read(sensitivity, 1) }?;
        // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer, and the
        // sensitivity is built (its values validated) only once the budget is charged.
        unsafe {
            selection.run(
                epsilon,
                &[Region::of(utilities, n)],
                specs.regions(),
                |g, out, scores, perm| {
                    let d = &specs.build(n)?[0];
                    out[0] = local::select_local_dampening(g, u, d, kind, selector, epsilon, scores, perm, arithmetic)?;
                    Ok(())
                },
            )
        }
    })())
}
