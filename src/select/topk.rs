//! Top-k without replacement for set-independent scores: k sequential selections at ε/k each (sequential
//! composition, Dwork & Roth 2014 Thm. 3.16), and the one-shot Gumbel variant.
//!
//! Scores that depend on the candidate set (the Pareto score) are re-computed between rounds by the
//! multi-objective layer instead; single utilities and dampened scores do not depend on the set, so removing
//! the chosen candidate is all a round needs.

use super::{select, validate, Gap, Selector};
use crate::{sample, Error};
use rand_core::Rng;

/// The ε each of the k rounds receives, or an error when k is 0, above n, or ε/k is not a usable budget.
pub(crate) fn per_round_epsilon(epsilon: f64, k: usize, n: usize) -> Result<f64, Error> {
    if !(epsilon.is_finite() && epsilon > 0.0) {
        return Err(Error::InvalidEpsilon);
    }
    if k == 0 || k > n {
        return Err(Error::InvalidArgument);
    }
    let e = epsilon / k as f64;
    if e > 0.0 {
        Ok(e)
    } else {
        Err(Error::InvalidEpsilon)
    }
}

/// Top-k without replacement: k = `out.len()` rounds of `selector` at ε/k each over the candidates not yet
/// chosen; writes the chosen indices to `out` in the order they were picked. ε-DP in total.
///
/// Scratch: `score_scratch` and `index_scratch` of length ≥ n; `perm_scratch` of length ≥ n for
/// permute-and-flip (may be empty otherwise). A chosen candidate is removed by swapping the last remaining
/// one into its place, which every selector tolerates because each is invariant under relabelling. O(k · n).
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
) -> Result<(), Error> {
    let n = scores.len();
    let k = out.len();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    let round_eps = per_round_epsilon(epsilon, k, n)?;
    validate(scores, sensitivity, round_eps)?;
    if score_scratch.len() < n
        || index_scratch.len() < n
        || (selector == Selector::PermuteAndFlip && perm_scratch.len() < n)
    {
        return Err(Error::ScratchTooSmall);
    }
    let work = &mut score_scratch[..n];
    let index = &mut index_scratch[..n];
    work.copy_from_slice(scores);
    for (i, x) in index.iter_mut().enumerate() {
        *x = i;
    }
    // Every round selects over a subset of already validated scores, so no round can fail after the first
    // check above; `out` is written only once all rounds are done.
    let mut remaining = n;
    for _ in 0..k {
        let p = select(rng, selector, &work[..remaining], sensitivity, round_eps, perm_scratch)?;
        let chosen = index[p];
        remaining -= 1;
        work[p] = work[remaining];
        index[p] = index[remaining];
        // Park the chosen index at the end of the index scratch; copied to `out` at the end.
        index[remaining] = chosen;
    }
    for (o, &c) in out.iter_mut().zip(index[n - k..].iter().rev()) {
        *o = c;
    }
    Ok(())
}

/// One-shot top-k with Gumbel noise (Durfee & Rogers, NeurIPS 2019): add Gumbel noise of scale 2kΔ/ε to
/// every score once and report the k largest in decreasing order. Equal in distribution to k sequential
/// exponential mechanisms at ε/k each (peeling), so ε-DP in total, at O(n + k log k) cost.
///
/// Scratch: `noisy_scratch` and `index_scratch` of length ≥ n. The equality with peeling is exact as long as
/// every scaled gap ε (s* − s) / (2kΔ) is below ~1e308; beyond that, candidates that are all infinitely far
/// below the best are ordered among themselves by index.
pub fn select_top_k_gumbel<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    out: &mut [usize],
    noisy_scratch: &mut [f64],
    index_scratch: &mut [usize],
) -> Result<(), Error> {
    let n = scores.len();
    let k = out.len();
    if n == 0 {
        return Err(Error::EmptyInput);
    }
    let round_eps = per_round_epsilon(epsilon, k, n)?;
    let max = validate(scores, sensitivity, round_eps)?;
    if noisy_scratch.len() < n || index_scratch.len() < n {
        return Err(Error::ScratchTooSmall);
    }
    let gap = Gap::new(max, sensitivity, round_eps);
    let noisy = &mut noisy_scratch[..n];
    let index = &mut index_scratch[..n];
    for (i, (v, &s)) in noisy.iter_mut().zip(scores).enumerate() {
        *v = gap.of(s) + sample::gumbel(rng);
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
