//! The Pareto score PS(x, r) = −|{r′ ≠ r : r′ dominates r}| (PrivPareto paper, Def. 4.3).

use super::count::{self, self_dominance_counts};
use super::{check_utilities, Dominance};
use crate::float::cmp;
use crate::{Error, MAX_OBJECTIVES};
use core::cmp::Ordering;

/// The `usize` scratch length [`pareto_scores`] needs for n candidates and m objectives: n for the counts
/// plus the counting path's need. On 64-bit targets that is 6n + 1 words for m ≤ 2 (48 bytes per
/// candidate: the counts, two n-arrays and a key of W words per candidate for the sweep), and for m ≥ 3
/// records of n (m + 1) words with their work area: 11n for m = 3, 15n for m = 8, 36n for m = 16 at
/// n ≥ 3·10⁴ (below that the chunked bitsets' work space dominates, at most about 10⁶ words in all).
///
/// Errors: m = 0 → [`Error::InvalidArgument`]; m > [`MAX_OBJECTIVES`] → [`Error::CapacityExceeded`]; the
/// length overflows `usize` → [`Error::Overflow`].
pub fn pareto_scores_scratch_len(n: usize, m: usize) -> Result<usize, Error> {
    if m == 0 {
        return Err(Error::InvalidArgument);
    }
    if m > MAX_OBJECTIVES {
        return Err(Error::CapacityExceeded);
    }
    count::self_scratch_len(n, m)
        .and_then(|a| a.checked_add(n))
        .ok_or(Error::Overflow)
}

/// Writes the Pareto score PS(x, r) = −#{r′ ≠ r : r′ dominates r} (PrivPareto paper, Def. 4.3, with the
/// chosen [`Dominance`]) of every candidate into `out[r]`; scores are integers in [−(n − 1), 0].
///
/// `utilities` is n × m row-major (larger is better), `out.len()` = n, `scratch.len()` ≥
/// [`pareto_scores_scratch_len`]`(n, m)`.
///
/// Method: every candidate counts the candidates that are ≥ it in every objective (itself included),
/// C(r); then PS = −(C(r) − 1) for [`Dominance::Weak`], and PS = −(C(r) − E(r)) for
/// [`Dominance::Textbook`], E(r) being the number of exact copies of r's utility vector (itself included),
/// found by one lexicographic sort. Complexity:
/// - m ≤ 2: O(n log n), radix sorts and a sweep with a Fenwick tree over the ranks of the second objective;
/// - m ≥ 3: O(n log^(m−1) n), multidimensional divide and conquer (Bentley 1980; Kung, Luccio & Preparata
///   1975) on integer ranks computed once by radix sorts: O(n log² n) for m = 3, where two-objective
///   subproblems are merges; for m ≥ 4 subproblems of up to a few thousand candidates are counted by
///   chunked bitsets (O(s² m / 64) word operations with popcounts). No input makes it quadratic in n.
///
/// Memory: only `scratch`; recursion depth O(m log n).
///
/// Errors (nothing written to `out`): m = 0 → [`Error::InvalidArgument`]; m > [`crate::MAX_OBJECTIVES`] →
/// [`Error::CapacityExceeded`]; `utilities.len()` not a multiple of m, or `out.len()` ≠ n →
/// [`Error::LengthMismatch`]; n = 0 → [`Error::EmptyInput`]; a NaN or infinite utility →
/// [`Error::NonFiniteInput`]; `scratch` too short → [`Error::ScratchTooSmall`].
pub fn pareto_scores(
    utilities: &[f64],
    m: usize,
    dominance: Dominance,
    out: &mut [f64],
    scratch: &mut [usize],
) -> Result<(), Error> {
    let n = check_utilities(utilities, m)?;
    if out.len() != n {
        return Err(Error::LengthMismatch);
    }
    if scratch.len() < pareto_scores_scratch_len(n, m)? {
        return Err(Error::ScratchTooSmall);
    }
    let (covering, rest) = scratch.split_at_mut(n);
    dominator_counts(n, m, |k, i| utilities[k * m + i], dominance, covering, rest);
    for (o, &c) in out.iter_mut().zip(covering.iter()) {
        *o = -(c as f64);
    }
    Ok(())
}

/// `counts[r]` = #{r′ ≠ r : r′ dominates r} = −PS(x, r) for the n candidates whose utility i is `u(r, i)`
/// (see [`pareto_scores`] for the method). Requires m ≥ 1, finite utilities, `counts.len()` ≥ n and
/// `scratch.len()` ≥ [`count::self_scratch_len`]`(n, m)` (callers check); then it cannot panic.
pub(crate) fn dominator_counts<U>(
    n: usize,
    m: usize,
    u: U,
    dominance: Dominance,
    counts: &mut [usize],
    scratch: &mut [usize],
) where
    U: Fn(usize, usize) -> f64,
{
    let covering = &mut counts[..n];
    self_dominance_counts(n, m, &u, covering, scratch);
    match dominance {
        // Every candidate covers itself; under weak dominance every other covering candidate dominates.
        Dominance::Weak => {
            for c in covering.iter_mut() {
                *c = c.saturating_sub(1);
            }
        }
        // Exact copies cover each other without a strict improvement: remove them by their multiplicity.
        Dominance::Textbook => {
            let lex = |a: usize, b: usize| {
                (0..m)
                    .map(|i| cmp(u(a, i), u(b, i)))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or(Ordering::Equal)
            };
            let order = &mut scratch[..n];
            for (k, slot) in order.iter_mut().enumerate() {
                *slot = k;
            }
            order.sort_unstable_by(|&a, &b| lex(a, b));
            let mut start = 0;
            while start < n {
                let mut end = start + 1;
                while end < n && lex(order[start], order[end]) == Ordering::Equal {
                    end += 1;
                }
                for &k in &order[start..end] {
                    covering[k] = covering[k].saturating_sub(end - start);
                }
                start = end;
            }
        }
    }
}

/// The O(n² m) reference for [`pareto_scores`]: Def. 4.3 read literally, a double loop over candidate
/// pairs with [`Dominance::dominates`]. Meant for tests and benchmarks; same inputs, errors and output.
pub fn pareto_scores_naive(utilities: &[f64], m: usize, dominance: Dominance, out: &mut [f64]) -> Result<(), Error> {
    let n = check_utilities(utilities, m)?;
    if out.len() != n {
        return Err(Error::LengthMismatch);
    }
    for (r, (o, ur)) in out.iter_mut().zip(utilities.chunks_exact(m)).enumerate() {
        let dominators = utilities
            .chunks_exact(m)
            .enumerate()
            .filter(|&(q, uq)| q != r && dominance.dominates(uq, ur))
            .count();
        *o = -(dominators as f64);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PrivPareto paper, Example 4.4 (candidates a..e, two objectives).
    #[test]
    fn example_4_4() {
        let u = [3.0, 5.0, 5.0, 3.0, 4.0, 2.0, 2.0, 4.0, 1.0, 1.0];
        let mut scratch = [0usize; 2048];
        assert!(scratch.len() >= pareto_scores_scratch_len(5, 2).unwrap());
        for d in [Dominance::Textbook, Dominance::Weak] {
            let mut out = [9.0; 5];
            pareto_scores(&u, 2, d, &mut out, &mut scratch).unwrap();
            assert_eq!(out, [0.0, 0.0, -1.0, -1.0, -4.0]);
            pareto_scores_naive(&u, 2, d, &mut out).unwrap();
            assert_eq!(out, [0.0, 0.0, -1.0, -1.0, -4.0]);
        }
    }
}
