//! Global-sensitivity selectors over a caller array of scores.

use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::rng::{dpmo_rng, rng_region, with_generator};
use crate::status::{dpmo_status, status_of};
use dpmo_core::select::{self, Noise, Selector};
use dpmo_core::Error;

/// Report-noisy-max noise: Laplace.
pub const DPMO_NOISE_LAPLACE: u32 = 0;
/// Report-noisy-max noise: Gumbel (same distribution as the exponential mechanism).
pub const DPMO_NOISE_GUMBEL: u32 = 1;
/// Report-noisy-max noise: one-sided Exponential (same distribution as permute-and-flip).
pub const DPMO_NOISE_EXPONENTIAL: u32 = 2;

/// Selector: the exponential mechanism.
pub const DPMO_SELECTOR_EXPONENTIAL: u32 = 0;
/// Selector: permute-and-flip (needs an index scratch of n entries).
pub const DPMO_SELECTOR_PERMUTE_AND_FLIP: u32 = 1;
/// Selector: report-noisy-max with Laplace noise.
pub const DPMO_SELECTOR_NOISY_MAX_LAPLACE: u32 = 2;
/// Selector: report-noisy-max with Gumbel noise.
pub const DPMO_SELECTOR_NOISY_MAX_GUMBEL: u32 = 3;
/// Selector: report-noisy-max with Exponential noise.
pub const DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL: u32 = 4;

pub(crate) fn noise_of(noise: u32) -> Result<Noise, Error> {
    match noise {
        DPMO_NOISE_LAPLACE => Ok(Noise::Laplace),
        DPMO_NOISE_GUMBEL => Ok(Noise::Gumbel),
        DPMO_NOISE_EXPONENTIAL => Ok(Noise::Exponential),
        _ => Err(Error::InvalidArgument),
    }
}

pub(crate) fn selector_of(selector: u32) -> Result<Selector, Error> {
    match selector {
        DPMO_SELECTOR_EXPONENTIAL => Ok(Selector::Exponential),
        DPMO_SELECTOR_PERMUTE_AND_FLIP => Ok(Selector::PermuteAndFlip),
        DPMO_SELECTOR_NOISY_MAX_LAPLACE => Ok(Selector::NoisyMax(Noise::Laplace)),
        DPMO_SELECTOR_NOISY_MAX_GUMBEL => Ok(Selector::NoisyMax(Noise::Gumbel)),
        DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL => Ok(Selector::NoisyMax(Noise::Exponential)),
        _ => Err(Error::InvalidArgument),
    }
}

/// Shared body of the three index-returning selectors.
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
    selector: Selector,
    perm: (*mut usize, usize),
    out_index: *mut usize,
) -> Result<(), Error> {
    check_out(rng)?;
    check_out(out_index)?;
    if selector == Selector::PermuteAndFlip {
        check_out(perm.0)?;
    }
    // SAFETY: the caller promises n readable doubles.
    let scores_slice = unsafe { input(scores, n) }?;
    let perm_region = if selector == Selector::PermuteAndFlip {
        Region::of(perm.0, perm.1)
    } else {
        Region::EMPTY
    };
    check_disjoint(
        &[rng_region(rng), Region::of(out_index, 1), perm_region],
        &[Region::of(scores, n)],
    )?;
    let perm_slice: &mut [usize] = if selector == Selector::PermuteAndFlip {
        // SAFETY: checked disjoint from every other buffer of this call.
        unsafe { output(perm.0, perm.1) }?
    } else {
        &mut []
    };
    // SAFETY: the generator region is disjoint from the slices used inside.
    let index = unsafe {
        with_generator(rng, |g| {
            select::select(g, selector, scores_slice, sensitivity, epsilon, perm_slice)
        })
    }?;
    // SAFETY: checked non-null, aligned and disjoint.
    unsafe { out_index.write(index) };
    Ok(())
}

/// The exponential mechanism: writes to `*out_index` an index r in [0, n) drawn with probability
/// ∝ exp(epsilon · scores[r] / (2 · sensitivity)). epsilon-DP when `sensitivity` bounds how much any score
/// changes between neighbouring datasets. Scores must be finite; any finite values are safe (log space).
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `out_index`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_exponential(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    out_index: *mut usize,
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        run_selector(
            rng,
            scores,
            n,
            sensitivity,
            epsilon,
            Selector::Exponential,
            (core::ptr::null_mut(), 0),
            out_index,
        )
    })
}

/// Exact output probabilities of the exponential mechanism: writes n probabilities (summing to 1) to
/// `out_probabilities`, computed in log space.
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

/// Permute-and-flip (McKenna & Sheldon 2020): visits candidates in random order and accepts r with
/// probability exp(epsilon · (scores[r] − max) / (2 · sensitivity)). Never less accurate than the
/// exponential mechanism at the same epsilon. `perm_scratch` must hold at least n size_t entries (any
/// contents); its contents afterwards are unspecified.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `perm_scratch`: `perm_scratch_len`
/// writable size_t; `out_index`: one writable size_t; no output may overlap another buffer.
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
) -> dpmo_status {
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        run_selector(
            rng,
            scores,
            n,
            sensitivity,
            epsilon,
            Selector::PermuteAndFlip,
            (perm_scratch, perm_scratch_len),
            out_index,
        )
    })
}

/// Report-noisy-max: adds i.i.d. noise of scale 2 · sensitivity / epsilon to every score and reports the
/// argmax. `noise` is `DPMO_NOISE_LAPLACE`, `DPMO_NOISE_GUMBEL` or `DPMO_NOISE_EXPONENTIAL`.
///
/// # Safety
/// `rng`: an initialised generator; `scores`: n readable doubles; `out_index`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_noisy_max(
    rng: *mut dpmo_rng,
    scores: *const f64,
    n: usize,
    sensitivity: f64,
    epsilon: f64,
    noise: u32,
    out_index: *mut usize,
) -> dpmo_status {
    let noise = match noise_of(noise) {
        Ok(x) => x,
        Err(e) => return e.into(),
    };
    // SAFETY: forwarded caller contract.
    status_of(unsafe {
        run_selector(
            rng,
            scores,
            n,
            sensitivity,
            epsilon,
            Selector::NoisyMax(noise),
            (core::ptr::null_mut(), 0),
            out_index,
        )
    })
}
