//! Global-sensitivity selectors over a caller array of scores, and the selector and arithmetic arguments
//! every selecting function shares.

use crate::budget::dpmo_budget;
use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::rng::dpmo_rng;
use crate::selection::Selection;
use crate::status::{dpmo_status, status_of};
use dpmo_core::select::{self, Arithmetic, Noise, Selector};
use dpmo_core::Error;

/// Report-noisy-max noise: Laplace (floating point only: needs `DPMO_FLOAT`).
pub const DPMO_NOISE_LAPLACE: u32 = 0;
/// Report-noisy-max noise: Gumbel (same distribution as the exponential mechanism).
pub const DPMO_NOISE_GUMBEL: u32 = 1;
/// Report-noisy-max noise: one-sided Exponential (same distribution as permute-and-flip).
pub const DPMO_NOISE_EXPONENTIAL: u32 = 2;

/// Selector: the exponential mechanism.
pub const DPMO_SELECTOR_EXPONENTIAL: u32 = 0;
/// Selector: permute-and-flip (needs an index scratch of n entries).
pub const DPMO_SELECTOR_PERMUTE_AND_FLIP: u32 = 1;
/// Selector: report-noisy-max with Laplace noise (floating point only: needs `DPMO_FLOAT`).
pub const DPMO_SELECTOR_NOISY_MAX_LAPLACE: u32 = 2;
/// Selector: report-noisy-max with Gumbel noise.
pub const DPMO_SELECTOR_NOISY_MAX_GUMBEL: u32 = 3;
/// Selector: report-noisy-max with Exponential noise (in exact arithmetic it runs as permute-and-flip and
/// needs the same index scratch).
pub const DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL: u32 = 4;

/// Flag OR-ed into a `selector` (`DPMO_SELECTOR_*`), a `noise` (`DPMO_NOISE_*`) or a `flags` argument: run
/// the whole call (dampening, sums and selection) in floating point, as dpmo 0.1 did. Without it every
/// selection is exact: each output has exactly the probability of the mathematical mechanism (on the
/// scores floored onto a grid of about 2^-62 Δ), so it is ε-DP in the arithmetic that runs. With it,
/// probabilities are only as exact as 53-bit uniforms: an output can have probability 0 on one dataset and
/// 2^-53 on its neighbour, so the guarantee holds in real arithmetic only. For comparisons and
/// compatibility; not for releases.
pub const DPMO_FLOAT: u32 = 0x100;

/// Flag OR-ed into a `selector` (`DPMO_SELECTOR_*`), a `noise` (`DPMO_NOISE_*`) or a `flags` argument: run
/// the selection in constant time. Control flow, memory addresses and the randomness consumed then depend
/// only on the public arguments (n, k, epsilon, sensitivity, the flags), never on the scores, so an analyst
/// who times the call or counts the generator's words learns nothing more than the output. Every output
/// probability is within a factor e^(±a) of the mechanism's (on scores whose gap to the best is capped at
/// 128 ln 2 · sensitivity / epsilon); to pay for it the mechanism runs at the slightly smaller epsilon
/// `dpmo_isochronous_run_epsilon` gives, so the call is epsilon-DP and charges epsilon, as always. For the
/// exponential mechanism, permute-and-flip, report-noisy-max (Gumbel, Exponential), their top-k and local
/// dampening; the other functions refuse it with `DPMO_UNSUPPORTED`. Not combinable with `DPMO_FLOAT`.
pub const DPMO_ISOCHRONOUS: u32 = 0x200;

/// Splits the arithmetic flags (`DPMO_FLOAT`, `DPMO_ISOCHRONOUS`; not both) off an enum argument.
pub(crate) fn arithmetic_of(value: u32) -> Result<(u32, Arithmetic), Error> {
    let bare = value & !(DPMO_FLOAT | DPMO_ISOCHRONOUS);
    match (value & DPMO_FLOAT != 0, value & DPMO_ISOCHRONOUS != 0) {
        (true, true) => Err(Error::InvalidArgument),
        (true, false) => Ok((bare, Arithmetic::Float)),
        (false, true) => Ok((bare, Arithmetic::Isochronous)),
        (false, false) => Ok((bare, Arithmetic::Exact)),
    }
}

/// A `flags` argument: 0, `DPMO_FLOAT` or `DPMO_ISOCHRONOUS`.
pub(crate) fn flags_of(flags: u32) -> Result<Arithmetic, Error> {
    match arithmetic_of(flags)? {
        (0, a) => Ok(a),
        _ => Err(Error::InvalidArgument),
    }
}

pub(crate) fn noise_of(noise: u32) -> Result<(Noise, Arithmetic), Error> {
    let (noise, a) = arithmetic_of(noise)?;
    let noise = match noise {
        DPMO_NOISE_LAPLACE => Noise::Laplace,
        DPMO_NOISE_GUMBEL => Noise::Gumbel,
        DPMO_NOISE_EXPONENTIAL => Noise::Exponential,
        _ => return Err(Error::InvalidArgument),
    };
    check_supported(Selector::NoisyMax(noise), a)?;
    Ok((noise, a))
}

/// A `selector` argument, with its arithmetic. Laplace noise in exact arithmetic → `DPMO_UNSUPPORTED`.
pub(crate) fn selector_of(selector: u32) -> Result<(Selector, Arithmetic), Error> {
    let (selector, a) = arithmetic_of(selector)?;
    let s = match selector {
        DPMO_SELECTOR_EXPONENTIAL => Selector::Exponential,
        DPMO_SELECTOR_PERMUTE_AND_FLIP => Selector::PermuteAndFlip,
        DPMO_SELECTOR_NOISY_MAX_LAPLACE => Selector::NoisyMax(Noise::Laplace),
        DPMO_SELECTOR_NOISY_MAX_GUMBEL => Selector::NoisyMax(Noise::Gumbel),
        DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL => Selector::NoisyMax(Noise::Exponential),
        _ => return Err(Error::InvalidArgument),
    };
    check_supported(s, a)?;
    Ok((s, a))
}

fn check_supported(s: Selector, a: Arithmetic) -> Result<(), Error> {
    if a != Arithmetic::Float && s == Selector::NoisyMax(Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    Ok(())
}

/// Shared body of the three index-returning selectors: the index scratch is used (and must hold n) only
/// when the selector needs a permutation.
///
/// # Safety
/// As for the public functions: valid pointers for the lengths given.
#[allow(clippy::too_many_arguments)]
unsafe fn run_selector(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    (selector, arithmetic): (Selector, Arithmetic),
    perm: (*mut usize, usize),
    out_index: *mut usize,
    budget: *mut dpmo_budget,
) -> Result<(), Error> {
    let perm = if selector.needs_permutation(arithmetic) {
        check_out(perm.0)?;
        perm
    } else {
        (core::ptr::null_mut(), 0)
    };
    let selection = Selection {
        rng,
        budget,
        out: (out_index, 1),
        values: (core::ptr::null_mut(), 0),
        indices: perm,
    };
    selection.check()?;
    // SAFETY: the caller promises n readable doubles.
    let s = unsafe { input(scores, n) }?;
    // SAFETY: forwarded caller contract; `run` checks the outputs disjoint from every buffer.
    unsafe {
        selection.run(epsilon, &[Region::of(scores, n)], &[], |g, out, _, perm| {
            out[0] = select::select(g, selector, s, sensitivity, epsilon, perm, arithmetic)?;
            Ok(())
        })
    }
}

/// Any single selector: `selector` is a `DPMO_SELECTOR_*`, optionally OR-ed with `DPMO_FLOAT` (floating
/// point) or `DPMO_ISOCHRONOUS` (constant time; see it). Writes the
/// chosen index to `*out_index`. `perm_scratch` (n size_t) is needed by permute-and-flip and by
/// report-noisy-max with Exponential noise unless floating point is asked for; it may be NULL with length 0
/// otherwise. `budget` (nullable) is charged epsilon.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `perm_scratch`: NULL or
/// `perm_scratch_len` writable size_t; `out_index`: one writable size_t; `budget`: NULL or a valid budget.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select(
    rng: *mut dpmo_rng,
    selector: u32,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: *mut usize,
    perm_scratch_len: usize,
    out_index: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let how = selector_of(selector)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            run_selector(
                rng,
                scores,
                n,
                sensitivity,
                epsilon,
                how,
                (perm_scratch, perm_scratch_len),
                out_index,
                budget,
            )
        }
    })())
}

/// The epsilon each round of an isochronous selection of k out of n candidates at a total `epsilon` runs its
/// mechanism at (see `DPMO_ISOCHRONOUS`), so that the selection is epsilon-DP exactly: epsilon/k rounded
/// down, less 2^-40 for the exponential mechanism and Gumbel noise or (n + 1) 2^-40 for permute-and-flip
/// and Exponential noise, rounded down. `selector` may carry `DPMO_ISOCHRONOUS`. Errors: epsilon not finite
/// and positive, or epsilon/k not above that slack → `DPMO_INVALID_EPSILON`; k = 0 or k > n, an unknown
/// selector or one with `DPMO_FLOAT` → `DPMO_INVALID_ARGUMENT`; Laplace noise → `DPMO_UNSUPPORTED`.
///
/// # Safety
/// `out_epsilon`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_isochronous_run_epsilon(
    selector: u32,
    epsilon: f64,
    n: usize,
    k: usize,
    out_epsilon: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_epsilon)?;
        let (s, _) = selector_of(selector | DPMO_ISOCHRONOUS)?;
        let e = select::isochronous_run_epsilon(s, epsilon, n, k)?;
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { out_epsilon.write(e) };
        Ok(())
    })())
}

/// The exponential mechanism, exactly: writes to `*out_index` an index r in [0, n) drawn with probability
/// exactly ∝ exp(epsilon · scores[r] / (2 · sensitivity)) (scores floored onto a grid of about
/// 2^-62 · sensitivity; integers and most real scores are on it). epsilon-DP in the arithmetic that runs,
/// when `sensitivity` bounds how much any score changes between neighbouring datasets. `budget` (nullable)
/// is charged epsilon; see "Budgets" in the header's introduction.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `out_index`: one writable size_t;
/// `budget`: NULL or a valid budget.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_exponential(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    out_index: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    let how = (Selector::Exponential, Arithmetic::Exact);
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        run_selector(
            rng,
            scores,
            n,
            sensitivity,
            epsilon,
            how,
            (core::ptr::null_mut(), 0),
            out_index,
            budget,
        )
    })
}

/// Output probabilities of the exponential mechanism, computed in floating point (log space): writes n
/// probabilities (summing to 1) to `out_probabilities`. For audits and tests.
///
/// # Safety
/// `scores`: n readable doubles; `out_probabilities`: n writable doubles not overlapping `scores`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_exponential_probabilities(
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    out_probabilities: *mut f64,
) -> dpmo_status {
    status_of((|| {
        // SAFETY: the caller promises n readable doubles.
        let s = unsafe { input(scores, n) }?;
        check_out(out_probabilities)?;
        check_disjoint(&[Region::of(out_probabilities, n)], &[Region::of(scores, n)])?;
        // SAFETY: checked disjoint from `scores`.
        let out = unsafe { output(out_probabilities, n) }?;
        select::exponential_probabilities(s, sensitivity, epsilon, out)
    })())
}

/// Permute-and-flip (McKenna & Sheldon 2020), exactly: visits candidates in random order and keeps r with
/// probability exactly exp(epsilon · (scores[r] − max) / (2 · sensitivity)) (on the same grid as
/// `dpmo_select_exponential`). Never less accurate than the exponential mechanism at the same epsilon.
/// `perm_scratch` must hold at least n size_t entries (any contents; unspecified afterwards). `budget`
/// (nullable) is charged epsilon.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `perm_scratch`: `perm_scratch_len`
/// writable size_t; `out_index`: one writable size_t; `budget`: NULL or a valid budget; no output may
/// overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_permute_and_flip(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: *mut usize,
    perm_scratch_len: usize,
    out_index: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    let how = (Selector::PermuteAndFlip, Arithmetic::Exact);
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        run_selector(
            rng,
            scores,
            n,
            sensitivity,
            epsilon,
            how,
            (perm_scratch, perm_scratch_len),
            out_index,
            budget,
        )
    })
}

/// Report-noisy-max: the argmax of the scores plus i.i.d. noise of scale 2 · sensitivity / epsilon.
/// `noise` is `DPMO_NOISE_GUMBEL` (run exactly as the exponential mechanism, its distribution) or
/// `DPMO_NOISE_EXPONENTIAL` (run exactly as permute-and-flip, which needs `perm_scratch` of n size_t; it may
/// be NULL with length 0 otherwise). `DPMO_NOISE_LAPLACE` exists in floating point only: pass
/// `DPMO_NOISE_LAPLACE | DPMO_FLOAT` (else `DPMO_UNSUPPORTED`). Any noise may carry `DPMO_FLOAT`.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `perm_scratch`: NULL or
/// `perm_scratch_len` writable size_t; `out_index`: one writable size_t; `budget`: NULL or a valid budget.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_noisy_max(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    noise: u32,
    perm_scratch: *mut usize,
    perm_scratch_len: usize,
    out_index: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        let (noise, arithmetic) = noise_of(noise)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            run_selector(
                rng,
                scores,
                n,
                sensitivity,
                epsilon,
                (Selector::NoisyMax(noise), arithmetic),
                (perm_scratch, perm_scratch_len),
                out_index,
                budget,
            )
        }
    })())
}
