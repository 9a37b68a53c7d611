//! Permute-and-flip (McKenna & Sheldon, NeurIPS 2020).

use super::{finite, validate, Arithmetic, Gap, Selector};
use crate::{sample, Error};
use rand_core::Rng;

/// Permute-and-flip in exact arithmetic: visit the candidates in a uniformly random order and keep r with
/// probability exactly exp(−ε (⌊s*/g⌋ − ⌊s(r)/g⌋) g / (2Δ)) on the grid g of Δ ([`crate::exact::grid`]).
/// The best candidate is always kept, so at most n coins are flipped. ε-DP when Δ bounds the sensitivity
/// of s, exactly, and never less accurate than the exponential mechanism (McKenna & Sheldon 2020,
/// Thms. 1–2).
///
/// The random order is a lazy Fisher–Yates shuffle in `perm_scratch` (length ≥ n; its contents on entry
/// do not matter). O(n) time for the initialisation and the maximum, plus the expected number of flips.
pub fn select_permute_and_flip<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    super::select(
        rng,
        Selector::PermuteAndFlip,
        scores,
        sensitivity,
        epsilon,
        perm_scratch,
        Arithmetic::Exact,
    )
}

/// Permute-and-flip in floating point: as [`select_permute_and_flip`], each coin exp(x) compared with a
/// 53-bit exponential draw (see [`super::Arithmetic::Float`]).
pub fn select_permute_and_flip_float<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    super::select(
        rng,
        Selector::PermuteAndFlip,
        scores,
        sensitivity,
        epsilon,
        perm_scratch,
        Arithmetic::Float,
    )
}

/// Floating-point permute-and-flip on the call's stream (`perm_scratch` checked by the caller).
pub(super) fn float<R: Rng + ?Sized>(
    rng: &mut R,
    scores: &[f64],
    sensitivity: f64,
    epsilon: f64,
    perm_scratch: &mut [usize],
) -> Result<usize, Error> {
    let n = scores.len();
    let max = validate(scores, sensitivity, epsilon)?;
    let perm = &mut perm_scratch[..n];
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let gap = Gap::new(max, sensitivity, epsilon);
    for i in 0..n {
        let j = i + sample::uniform_index(rng, n - i);
        perm.swap(i, j);
        let r = perm[i];
        let x = gap.of(finite(scores[r]));
        if x == 0.0 || sample::bernoulli_exp(rng, x) {
            return Ok(r);
        }
    }
    // Unreachable: a candidate with the maximum score has x = 0 and is accepted when visited.
    Err(Error::InvalidArgument)
}
