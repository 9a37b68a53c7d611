//! The partition and driver steps of the exact distributed report-noisy-max: the selection when the
//! candidates' scores are spread over partitions (Spark tasks, or any map over chunks), with exactly the
//! distribution of the centralised exact selectors [`crate::select_permute_and_flip`] and
//! [`crate::select_exponential`] (and their top-k by peeling).
//!
//! Report-noisy-max with Exponential noise *is* permute-and-flip (McKenna & Sheldon 2020, Thm. 2; Ding et
//! al. 2021) and with Gumbel noise *is* the exponential mechanism (McSherry & Talwar 2007; Durfee & Rogers
//! 2019). The textbook distributed form needs the noisy values, which are floating-point numbers; here both
//! selections are decomposed into exact, independent coins that the partitions flip where the scores live.
//! Each coin succeeds with probability exp(−γ_r), γ_r = ε (⌊s* / g⌋ − ⌊s_r/g⌋) / (2N) on the grid g = Δ/N of
//! the sensitivity ([`crate::exact`]) — exactly the coins of the core's exact selectors:
//!
//! * **Permute-and-flip** (one pass after the maximum s*). Visiting the candidates in a random order and
//!   stopping at the first coin that succeeds returns a uniform element of H = {r : coin r succeeds}, all
//!   coins flipped independently (the coins do not depend on the order). Each partition j flips its coins and
//!   reports |H_j| and a uniform element of H_j ([`pf_partition`]); the driver picks partition j with
//!   probability |H_j| / Σ|H| ([`choose_weighted`]) and returns its element: a uniform element of H.
//! * **Exponential mechanism**, by rejection: propose r uniformly among the n candidates and keep it with its
//!   coin, repeat. The proposals come from one stream every partition derives identically; each partition
//!   flips (from its own stream) the coins of the proposals it holds and reports the first position kept
//!   ([`em_partition`]); the driver takes the smallest position. A batch without a kept proposal is followed
//!   by a larger one on new streams.
//!
//! The streams of the partitions are ChaCha20 generators derived from one secret 32-byte key and a stream
//! number ([`stream_state`]): a pseudorandom function of (key, stream), never of the data. Every score goes
//! through the public rule of every selection first ([`public_rule`]: NaN is the lowest score, ±∞ is
//! ±`f64::MAX`), so no status depends on a score.

use crate::exact::grid::Floor;
use crate::exact::{Bits, Grid, Scale};
use crate::rng::{call_stream, GeneratorState};
use crate::sample::uniform_index;
use crate::Error;
use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};

/// The generator of stream `stream` of the secret `key`: ChaCha20 keyed by the first 32 bytes of the
/// ChaCha20 keystream of `key` on stream `stream` (a pseudorandom function of (key, stream)), so distinct
/// stream numbers give generators independent for anyone who does not know the key. Python's
/// `dpmo.StreamKey(...).rng(stream)` is this generator.
pub fn stream_state(key: &[u8; 32], stream: u64) -> GeneratorState {
    let mut prf = ChaCha20Rng::from_seed(*key);
    prf.set_stream(stream);
    let mut seed = [0u8; 32];
    prf.fill_bytes(&mut seed);
    GeneratorState::chacha20(seed)
}

/// The public rule every selection applies to a score (issue 20): NaN counts as the lowest score
/// (−`f64::MAX`) and ±∞ as ±`f64::MAX`, so a score is private data that never makes a call fail.
#[inline]
pub fn public_rule(score: f64) -> f64 {
    if score.is_nan() {
        -f64::MAX
    } else {
        score.clamp(-f64::MAX, f64::MAX)
    }
}

/// The coins of one round: the grid g = Δ/N of the sensitivity, the exact scale ε/(2N), and ⌊s* / g⌋ of the
/// round's best score s* (the coins of [`crate::select_exponential`] and [`crate::select_permute_and_flip`]).
#[derive(Clone, Copy, Debug)]
pub struct Coins {
    grid: Grid,
    scale: Scale,
    best: Floor,
    best_score: f64,
}

impl Coins {
    /// The coins for the best score `best` (s*, after [`public_rule`]), the sensitivity Δ and ε of the round.
    ///
    /// Errors: `best` not finite → [`Error::NonFiniteInput`]; Δ not finite and > 0 →
    /// [`Error::InvalidSensitivity`]; ε not finite and > 0 (or too small for the exact scale) →
    /// [`Error::InvalidEpsilon`].
    pub fn new(best: f64, sensitivity: f64, epsilon: f64) -> Result<Coins, Error> {
        if !best.is_finite() {
            return Err(Error::NonFiniteInput);
        }
        let grid = Grid::of(sensitivity)?;
        let scale = Scale::new(epsilon, grid.units())?;
        Ok(Coins {
            best: grid.floor(best),
            grid,
            scale,
            best_score: best,
        })
    }

    /// Flips the coin of a score (after [`public_rule`], at most s*): true with probability exp(−γ).
    #[inline]
    fn flip<R: Rng + ?Sized>(&self, bits: &mut Bits<'_, R>, score: f64) -> bool {
        self.scale.keep(bits, self.grid.gap(self.best, score))
    }
}

fn sorted_distinct(v: &[i64]) -> bool {
    v.windows(2).all(|w| w[0] < w[1])
}

/// The checks shared by both partition steps: equal lengths, `candidates` (≥ 0) and `excluded` sorted and
/// distinct, and no candidate still in play above s*.
fn check(coins: &Coins, candidates: &[i64], scores: &[f64], excluded: &[i64]) -> Result<(), Error> {
    if candidates.len() != scores.len() {
        return Err(Error::LengthMismatch);
    }
    if !sorted_distinct(candidates) || !sorted_distinct(excluded) || candidates.first().is_some_and(|&c| c < 0) {
        return Err(Error::InvalidArgument);
    }
    let above = candidates
        .iter()
        .zip(scores)
        .any(|(c, &s)| public_rule(s) > coins.best_score && excluded.binary_search(c).is_err());
    if above {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

/// Partition step of distributed permute-and-flip: flips, from `g`, the coin of every candidate of the
/// partition (`candidates` sorted and distinct, ≥ 0, with their `scores`) not in `excluded` (sorted: the
/// candidates already chosen by earlier top-k rounds), and returns (|H_j|, a uniform element of H_j) — the
/// element by reservoir sampling, exact — or (0, −1) when no coin succeeds.
///
/// Errors (nothing drawn): lengths that differ → [`Error::LengthMismatch`]; candidates or exclusions not
/// sorted and distinct, a negative candidate, or a candidate in play scoring above s* →
/// [`Error::InvalidArgument`].
pub fn pf_partition<R: Rng + ?Sized>(
    g: &mut R,
    coins: &Coins,
    candidates: &[i64],
    scores: &[f64],
    excluded: &[i64],
) -> Result<(u64, i64), Error> {
    check(coins, candidates, scores, excluded)?;
    let mut bits = Bits::new(g);
    let (mut heads, mut pick) = (0u64, -1i64);
    for (&cand, &score) in candidates.iter().zip(scores) {
        if excluded.binary_search(&cand).is_ok() {
            continue;
        }
        if coins.flip(&mut bits, public_rule(score)) {
            heads += 1;
            // Reservoir: the i-th head replaces the pick with probability 1/i (exact).
            if uniform_index(bits.rng(), heads as usize) == 0 {
                pick = cand;
            }
        }
    }
    Ok((heads, pick))
}

/// Partition step of one batch of the distributed exponential mechanism: regenerates the `batch` proposals
/// of `proposals` (each uniform in [0, `total`)), flips from `g` the coin of every proposal this partition
/// holds (`candidates` sorted and distinct, in [0, `total`), with their `scores`) and has not `excluded`,
/// and returns the first kept (position, candidate), or (−1, −1). The work is `batch` proposals and their
/// binary searches, whatever the data.
///
/// Errors (nothing drawn): `total` = 0, `batch` above 2^62, or a candidate ≥ `total` →
/// [`Error::InvalidArgument`]; and those of [`pf_partition`].
#[allow(clippy::too_many_arguments)]
pub fn em_partition<P: Rng + ?Sized, R: Rng + ?Sized>(
    proposals: &mut P,
    g: &mut R,
    coins: &Coins,
    total: u64,
    batch: u64,
    candidates: &[i64],
    scores: &[f64],
    excluded: &[i64],
) -> Result<(i64, i64), Error> {
    check(coins, candidates, scores, excluded)?;
    let n = usize::try_from(total).map_err(|_| Error::InvalidArgument)?;
    if n == 0 || batch > 1 << 62 || candidates.last().is_some_and(|&c| c as u64 >= total) {
        return Err(Error::InvalidArgument);
    }
    let mut bits = Bits::new(g);
    for pos in 0..batch {
        let r = uniform_index(proposals, n) as i64;
        if let Ok(i) = candidates.binary_search(&r) {
            if excluded.binary_search(&r).is_err() && coins.flip(&mut bits, public_rule(scores[i])) {
                return Ok((pos as i64, r));
            }
        }
    }
    Ok((-1, -1))
}

/// Driver step: index j with probability `weights[j]` / Σ weights, exactly, drawn from one key of `rng`
/// ([`call_stream`]: the caller's generator advances by four words whatever the weights, which depend on the
/// partitions' coins and so on the scores).
///
/// Errors (nothing drawn): every weight 0 (or none) → [`Error::EmptyInput`]; Σ weights above 2^64 − 1 →
/// [`Error::Overflow`].
pub fn choose_weighted<R: Rng + ?Sized>(rng: &mut R, weights: &[u64]) -> Result<usize, Error> {
    let mut total: u64 = 0;
    for &w in weights {
        total = total.checked_add(w).ok_or(Error::Overflow)?;
    }
    if total == 0 {
        return Err(Error::EmptyInput);
    }
    let bound = usize::try_from(total).map_err(|_| Error::Overflow)?;
    let g = &mut call_stream(rng);
    let mut u = uniform_index(g, bound) as u64;
    for (j, &w) in weights.iter().enumerate() {
        if u < w {
            return Ok(j);
        }
        u -= w;
    }
    Err(Error::InvalidArgument) // unreachable: u < total = Σ weights
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        let k = [7u8; 32];
        assert_eq!(stream_state(&k, 3), stream_state(&k, 3));
        assert_ne!(stream_state(&k, 3), stream_state(&k, 4));
        assert_ne!(stream_state(&k, 3), stream_state(&[8u8; 32], 3));
    }

    #[test]
    fn checks_refuse_before_drawing() {
        let coins = Coins::new(2.0, 1.0, 1.0).unwrap();
        let mut g = stream_state(&[1; 32], 0).load().unwrap();
        let before = g.clone().next_u64();
        assert_eq!(
            pf_partition(&mut g, &coins, &[1, 0], &[0.0, 0.0], &[]),
            Err(Error::InvalidArgument)
        );
        assert_eq!(
            pf_partition(&mut g, &coins, &[0], &[3.0], &[]),
            Err(Error::InvalidArgument)
        );
        assert_eq!(pf_partition(&mut g, &coins, &[0], &[3.0], &[0]), Ok((0, -1)));
        assert_eq!(pf_partition(&mut g, &coins, &[0], &[], &[]), Err(Error::LengthMismatch));
        let mut p = stream_state(&[1; 32], 1).load().unwrap();
        assert_eq!(
            em_partition(&mut p, &mut g, &coins, 2, 4, &[2], &[0.0], &[]),
            Err(Error::InvalidArgument)
        );
        assert_eq!(
            em_partition(&mut p, &mut g, &coins, 0, 4, &[], &[], &[]),
            Err(Error::InvalidArgument)
        );
        assert_eq!(choose_weighted(&mut g, &[0, 0]), Err(Error::EmptyInput));
        assert_eq!(choose_weighted(&mut g, &[u64::MAX, 1]), Err(Error::Overflow));
        assert_eq!(g.next_u64(), before);
        assert!(Coins::new(f64::NAN, 1.0, 1.0).is_err());
    }

    #[test]
    fn the_public_rule() {
        assert_eq!(public_rule(f64::NAN), -f64::MAX);
        assert_eq!(public_rule(f64::INFINITY), f64::MAX);
        assert_eq!(public_rule(f64::NEG_INFINITY), -f64::MAX);
        assert_eq!(public_rule(1.5), 1.5);
    }

    /// The driver's choice is exactly ∝ the weights: with weights (1, 0, 3), over every value of the one
    /// uniform drawn, index 0 takes a quarter and index 2 three quarters (checked by counting outcomes over
    /// many keys; the exact split follows from `uniform_index`).
    #[test]
    fn choose_weighted_is_proportional() {
        let mut counts = [0u32; 3];
        for s in 0..4000u64 {
            let mut g = stream_state(&[3; 32], s).load().unwrap();
            counts[choose_weighted(&mut g, &[1, 0, 3]).unwrap()] += 1;
        }
        assert_eq!(counts[1], 0);
        // Binomial(4000, 1/4): mean 1000, sd 27.4; ±6 sd.
        assert!((835..=1165).contains(&counts[0]), "{counts:?}");
    }
}
