//! The local dampening mechanisms end to end: dampen with an admissible δ, then select with Δ = 1.
//!
//! * Local dampening (Local Dampening paper, Def. 3.8): the exponential mechanism on D_{u,δ}, ε-DP by
//!   Thm. 3.10.
//! * Shifted local dampening (Def. 4.3): the exponential mechanism on the shifted closed form, ε-DP by
//!   Thm. 4.4.
//! * Because the dampened scores have sensitivity 1 (Lemma 3.7), any global-sensitivity selector may follow
//!   instead of the exponential mechanism; permute-and-flip is never less accurate.

use crate::dampen::iso::{dampen_iso, iso_units};
use crate::dampen::{dampen_exact, dampen_into_scratch, dampen_with, Dampening};
use crate::select::exact::as_words;
use crate::select::{
    iso, probabilities_in_place, select_int, select_on, top_k_int, top_k_on, Arithmetic, Noise, Selector,
};
use crate::sensitivity::LocalSensitivity;
use crate::Error;
use rand_core::Rng;

/// Exact output probabilities of local dampening (plain or shifted) followed by the exponential mechanism:
/// P(r) ∝ exp(ε D(x, r) / 2). Writes n probabilities into `out[..n]`; nothing on error.
pub fn local_dampening_probabilities(
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    epsilon: f64,
    out: &mut [f64],
) -> Result<(), Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if out.len() < utilities.len() {
        return Err(Error::LengthMismatch);
    }
    // The dampened scores are computed in `out` itself, then turned into probabilities in place: the
    // dampening validates before writing, and the second step cannot fail on its finite output.
    dampen_with(utilities, delta, kind, out)?;
    probabilities_in_place(&mut out[..utilities.len()], 1.0, epsilon)
}

/// The double scratch [`select_local_dampening`] needs for n candidates (2n: exact arithmetic keeps each
/// dampened score as a 128-bit integer), and the same for each of the two double scratches of
/// [`select_local_dampening_top_k`]. [`Error::Overflow`] when 2n does not fit.
pub fn local_dampening_scratch_len(n: usize) -> Result<usize, Error> {
    n.checked_mul(2).ok_or(Error::Overflow)
}

/// Local dampening (plain or shifted) followed by `selector` with Δ = 1, in `arithmetic`.
///
/// In exact arithmetic the dampened scores are computed without rounding on the grid of Δ (the δ values
/// rounded up, the utilities floored: [`crate::dampen`](mod@crate::dampen)'s exact stage) and the selector runs exactly on
/// them; in float arithmetic both stages use doubles.
///
/// `score_scratch` (length ≥ [`local_dampening_scratch_len`]) holds the dampened scores; `perm_scratch`
/// (length ≥ n) is needed only when [`Selector::needs_permutation`] and may be empty otherwise. O(n) plus
/// the dampening cost.
#[allow(clippy::too_many_arguments)]
pub fn select_local_dampening<R: Rng + ?Sized>(
    rng: &mut R,
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    selector: Selector,
    epsilon: f64,
    score_scratch: &mut [f64],
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    select_local_dampening_on(
        &mut crate::rng::call_stream(rng),
        utilities,
        delta,
        kind,
        selector,
        epsilon,
        score_scratch,
        perm_scratch,
        arithmetic,
    )
}

/// [`select_local_dampening`] on a stream the caller already derived (no key drawn): for replays that must
/// consume randomness exactly as a composite mechanism's rounds do (see [`crate::testing`]).
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn select_local_dampening_on<R: Rng + ?Sized>(
    rng: &mut R,
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    selector: Selector,
    epsilon: f64,
    score_scratch: &mut [f64],
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    let n = utilities.len();
    if arithmetic != Arithmetic::Float && selector == Selector::NoisyMax(Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    let need = match arithmetic {
        Arithmetic::Exact | Arithmetic::Isochronous => local_dampening_scratch_len(n)?,
        Arithmetic::Float => n,
    };
    if score_scratch.len() < need || (selector.needs_permutation(arithmetic) && perm_scratch.len() < n) {
        return Err(Error::ScratchTooSmall);
    }
    match arithmetic {
        Arithmetic::Float => {
            dampen_into_scratch(utilities, delta, kind, score_scratch)?;
            select_on(
                rng,
                selector,
                &score_scratch[..n],
                1.0,
                epsilon,
                perm_scratch,
                arithmetic,
            )
        }
        Arithmetic::Exact => {
            let words = as_words(&mut score_scratch[..need]);
            let units = dampen_exact(utilities, delta, kind, words)?;
            select_int(rng, selector, words, units, epsilon, perm_scratch)
        }
        Arithmetic::Isochronous => {
            let run = iso::isochronous_run_epsilon(selector, epsilon, n, 1)?;
            let scale = iso::IntScale::new(run, iso_units(delta, kind)?)?;
            let words = as_words(&mut score_scratch[..need]);
            dampen_iso(utilities, delta, kind, words)?;
            Ok(iso::select_int(rng, selector, words, scale, perm_scratch))
        }
    }
}

/// Top-k without replacement with local dampening: the dampened scores do not depend on the candidate set
/// (δ(x, t, r) is per candidate), so they are computed once and k rounds of `selector` at ε/k each run on
/// them with Δ = 1 ([`crate::select::select_top_k`]), in `arithmetic`. ε-DP in total by sequential composition.
///
/// Scratch: `dampened` and `score_scratch` of length ≥ [`local_dampening_scratch_len`], `index_scratch` of
/// length ≥ n, `perm_scratch` of length ≥ n when [`Selector::needs_permutation`] (may be empty
/// otherwise). Writes k = `out.len()` indices in pick order.
#[allow(clippy::too_many_arguments)]
pub fn select_local_dampening_top_k<R: Rng + ?Sized>(
    rng: &mut R,
    utilities: &[f64],
    delta: &LocalSensitivity<'_>,
    kind: Dampening,
    selector: Selector,
    epsilon: f64,
    out: &mut [usize],
    dampened: &mut [f64],
    score_scratch: &mut [f64],
    index_scratch: &mut [usize],
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    let rng = &mut crate::rng::call_stream(rng);
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    let n = utilities.len();
    if out.is_empty() || out.len() > n {
        return Err(Error::InvalidArgument);
    }
    if arithmetic != Arithmetic::Float && selector == Selector::NoisyMax(Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    match arithmetic {
        Arithmetic::Float => {
            if dampened.len() < n
                || score_scratch.len() < n
                || index_scratch.len() < n
                || (selector.needs_permutation(arithmetic) && perm_scratch.len() < n)
            {
                return Err(Error::ScratchTooSmall);
            }
            dampen_into_scratch(utilities, delta, kind, dampened)?;
            top_k_on(
                rng,
                selector,
                &dampened[..n],
                1.0,
                epsilon,
                out,
                score_scratch,
                index_scratch,
                perm_scratch,
                arithmetic,
            )
        }
        Arithmetic::Exact | Arithmetic::Isochronous => {
            let need = local_dampening_scratch_len(n)?;
            if dampened.len() < need
                || score_scratch.len() < need
                || index_scratch.len() < n
                || (selector.needs_permutation(arithmetic) && perm_scratch.len() < n)
            {
                return Err(Error::ScratchTooSmall);
            }
            let words = as_words(&mut dampened[..need]);
            if arithmetic == Arithmetic::Isochronous {
                let run = iso::isochronous_run_epsilon(selector, epsilon, n, out.len())?;
                let scale = iso::IntScale::new(run, iso_units(delta, kind)?)?;
                dampen_iso(utilities, delta, kind, words)?;
                iso::top_k_int(rng, selector, words, scale, out, &mut index_scratch[..n], perm_scratch);
                return Ok(());
            }
            let units = dampen_exact(utilities, delta, kind, words)?;
            let work = as_words(&mut score_scratch[..need]);
            top_k_int(
                rng,
                selector,
                words,
                units,
                epsilon,
                out,
                work,
                index_scratch,
                perm_scratch,
            )
        }
    }
}
