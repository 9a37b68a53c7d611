//! Top-k without replacement for set-independent scores: k sequential selections at ε/k each (sequential
//! composition, Dwork & Roth 2014 Thm. 3.16), and the one-shot Gumbel variant.
//!
//! Scores that depend on the candidate set (the Pareto score) are re-computed between rounds by the
//! multi-objective layer instead; single utilities and dampened scores do not depend on the set, so removing
//! the chosen candidate is all a round needs.

use super::exact::{load_int, store_int};
use super::{finite, select_int, select_on, validate, Arithmetic, Gap, Selector};
use crate::float::div_down;
use crate::{sample, Error};
use rand_core::Rng;

/// The ε each of the k rounds receives — the largest double not above ε/k, so the k rounds never spend
/// more than ε in exact arithmetic — or an error when k is 0, above n, or ε/k is not a usable budget.
pub(crate) fn per_round_epsilon(epsilon: f64, k: usize, n: usize) -> Result<f64, Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if k == 0 || k > n {
        return Err(Error::InvalidArgument);
    }
    // k ≤ n < 2^53 (n counts elements of a slice), so k is exact as a double.
    let e = div_down(epsilon, k as f64);
    if e > 0.0 {
        Ok(e)
    } else {
        Err(Error::InvalidEpsilon)
    }
}

/// k rounds of "pick one of the `live` first work items, then remove it": `pick` chooses among the first
/// `live` items, `remove(work, p, last)` moves item `last` into slot p. The indices picked are written to
/// `out` in pick order only after every round succeeded.
fn peel<W: ?Sized>(
    out: &mut [usize],
    index: &mut [usize],
    work: &mut W,
    mut pick: impl FnMut(&W, usize) -> Result<usize, Error>,
    remove: impl Fn(&mut W, usize, usize),
) -> Result<(), Error> {
    let (n, k) = (index.len(), out.len());
    for (i, x) in index.iter_mut().enumerate() {
        *x = i;
    }
    let mut live = n;
    for _ in 0..k {
        let p = pick(work, live)?;
        let chosen = index[p];
        live -= 1;
        remove(work, p, live);
        index[p] = index[live];
        // Park the chosen index at the end of the index scratch; copied to `out` at the end.
        index[live] = chosen;
    }
    for (o, &c) in out.iter_mut().zip(index[n - k..].iter().rev()) {
        *o = c;
    }
    Ok(())
}

/// Top-k without replacement: k = `out.len()` rounds of `selector` at ε/k each (rounded down) over the
/// candidates not yet chosen, in `arithmetic`; writes the chosen indices to `out` in the order they were
/// picked. ε-DP in total by sequential composition (in isochronous arithmetic each round runs at
/// [`super::isochronous_run_epsilon`]). Draws one key from `rng`, as [`super::select`].
///
/// Scratch: `score_scratch` and `index_scratch` of length ≥ n; `perm_scratch` of length ≥ n when
/// [`Selector::needs_permutation`] (may be empty otherwise). A chosen candidate is removed by swapping the
/// last remaining one into its place, which every selector tolerates because each is invariant under
/// relabelling (in isochronous arithmetic it is masked out instead, by a flag per candidate). O(k · n).
#[allow(clippy::too_many_arguments)]
pub fn select_top_k<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    out: &mut [usize],
    score_scratch: &mut [f64],
    index_scratch: &mut [usize],
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    let mut stream = crate::rng::call_stream(rng);
    top_k_on(
        &mut stream,
        selector,
        scores,
        sensitivity,
        epsilon,
        out,
        score_scratch,
        index_scratch,
        perm_scratch,
        arithmetic,
    )
}

/// [`select_top_k`] on a stream the caller already derived.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn top_k_on<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    out: &mut [usize],
    score_scratch: &mut [f64],
    index_scratch: &mut [usize],
    perm_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    let n = scores.len();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    let round_eps = per_round_epsilon(epsilon, out.len(), n)?;
    if arithmetic != Arithmetic::Float && selector == Selector::NoisyMax(super::Noise::Laplace) {
        return Err(Error::Unsupported);
    }
    if score_scratch.len() < n
        || index_scratch.len() < n
        || (selector.needs_permutation(arithmetic) && perm_scratch.len() < n)
    {
        return Err(Error::ScratchTooSmall);
    }
    super::check_arguments(n, sensitivity, round_eps)?;
    if arithmetic == Arithmetic::Isochronous {
        let run = super::iso::isochronous_run_epsilon(selector, epsilon, n, out.len())?;
        let scale = super::iso::IsoScale::new(run, sensitivity)?;
        super::iso::top_k(rng, selector, scores, scale, out, &mut index_scratch[..n], perm_scratch);
        return Ok(());
    }
    let work = &mut score_scratch[..n];
    work.copy_from_slice(scores);
    // Every round selects over a subset of the scores, and no round can fail after the checks above.
    peel(
        out,
        &mut index_scratch[..n],
        work,
        |w, live| {
            select_on(
                rng,
                selector,
                &w[..live],
                sensitivity,
                round_eps,
                perm_scratch,
                arithmetic,
            )
        },
        |w, p, last| w[p] = w[last],
    )
}

/// Top-k in exact arithmetic over integer scores (two `u64` words each, `units` grid units of
/// sensitivity): the stage after exact dampening or an exact weighted sum. `work` holds 2n words.
#[allow(clippy::too_many_arguments)]
pub(crate) fn top_k_int<R: Rng + ?Sized>(
    rng: &mut R,
    selector: Selector,
    words: &[u64],
    units: u64,
    epsilon: f64,
    out: &mut [usize],
    work: &mut [u64],
    index_scratch: &mut [usize],
    perm_scratch: &mut [usize],
) -> Result<(), Error> {
    let n = words.len() / 2;
    let round_eps = per_round_epsilon(epsilon, out.len(), n)?;
    if work.len() < 2 * n || index_scratch.len() < n {
        return Err(Error::ScratchTooSmall);
    }
    let work = &mut work[..2 * n];
    work.copy_from_slice(&words[..2 * n]);
    peel(
        out,
        &mut index_scratch[..n],
        work,
        |w, live| select_int(rng, selector, &w[..2 * live], units, round_eps, perm_scratch),
        |w, p, last| store_int(w, p, load_int(w, last)),
    )
}

/// One-shot top-k with Gumbel noise (Durfee & Rogers, NeurIPS 2019): add Gumbel noise of scale 2kΔ/ε to
/// every score once and report the k largest in decreasing order. Its distribution is that of k sequential
/// exponential mechanisms at ε/k each (peeling), so ε-DP in total.
///
/// In exact and isochronous arithmetic it *is* that peeling ([`select_top_k`] with the exponential
/// mechanism, O(k n)); in float arithmetic the one-shot form, O(n + k log k). Scratch: `noisy_scratch` and
/// `index_scratch` of length ≥ n. In float the equality with peeling holds as long as every scaled gap
/// ε (s* − s) / (2kΔ) is below ~1e308; beyond that, candidates infinitely far below the best are ordered
/// among themselves by index.
#[allow(clippy::too_many_arguments)]
pub fn select_top_k_gumbel<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    out: &mut [usize],
    noisy_scratch: &mut [f64],
    index_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    let mut stream = crate::rng::call_stream(rng);
    top_k_gumbel_on(
        &mut stream,
        scores,
        sensitivity,
        epsilon,
        out,
        noisy_scratch,
        index_scratch,
        arithmetic,
    )
}

/// [`select_top_k_gumbel`] on a stream the caller already derived.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn top_k_gumbel_on<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    out: &mut [usize],
    noisy_scratch: &mut [f64],
    index_scratch: &mut [usize],
    arithmetic: Arithmetic,
) -> Result<(), Error> {
    if arithmetic != Arithmetic::Float {
        return top_k_on(
            rng,
            Selector::Exponential,
            scores,
            sensitivity,
            epsilon,
            out,
            noisy_scratch,
            index_scratch,
            &mut [],
            arithmetic,
        );
    }
    let n = scores.len();
    let k = out.len();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    let round_eps = per_round_epsilon(epsilon, k, n)?;
    if noisy_scratch.len() < n || index_scratch.len() < n {
        return Err(Error::ScratchTooSmall);
    }
    let max = validate(scores, sensitivity, round_eps)?;
    let gap = Gap::new(max, sensitivity, round_eps);
    let noisy = &mut noisy_scratch[..n];
    let index = &mut index_scratch[..n];
    for (i, (v, &s)) in noisy.iter_mut().zip(scores).enumerate() {
        *v = gap.of(finite(s)) + sample::gumbel(rng);
        index[i] = i;
    }
    let larger_first = |a: &usize, b: &usize| noisy[*b].total_cmp(&noisy[*a]).then(a.cmp(b));
    if k < n {
        index.select_nth_unstable_by(k - 1, larger_first);
    }
    index[..k].sort_unstable_by(larger_first);
    out.copy_from_slice(&index[..k]);
    Ok(())
}
