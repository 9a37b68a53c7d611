//! DP-SIPS (Swanberg, Desfontaines & Haney, *DP-SIPS: A simpler, more scalable mechanism for differentially
//! private partition selection*, PoPETs 2023): weighted Gaussian thresholding ([`super::weighted`]) run for
//! R rounds with the privacy budget split across them; each round spreads every unit's unit weight over
//! its items *not yet selected*, so the units of the heavy items found early push the lighter ones over
//! the threshold later.
//!
//! **Budget split** (dpmo's choice within the paper's scheme of a geometric split with later rounds
//! richer): with ρ the zCDP budget of (ε, δ/2) ([`accounting::zcdp_rho`](super::accounting::zcdp_rho)),
//! round i ∈ {0, …, R − 1} receives ρ_i = ρ · 2^i/(2^R − 1) and δ_i = (δ/2) · 2^i/(2^R − 1), rounded down.
//!
//! **Privacy.** Round i, given the items selected before it (public at that point), is weighted Gaussian
//! thresholding: on the items both neighbours can have, a discrete Gaussian release of ℓ2 sensitivity ≤ G
//! (ρ_i-zCDP); a new item of the added unit crosses its threshold T_i with probability at most δ_i in all
//! (T_i as in [`super::weighted`] for δ_i). Each round is thus δ_i-approximately ρ_i-zCDP (Bun & Steinke
//! 2016, Def. 8.1: both output distributions are mixtures, with weight ≥ 1 − δ_i, of two ρ_i-zCDP-close
//! parts); approximate zCDP composes adaptively (ρ's and δ's add), so the R rounds are δ/2-approximately
//! ρ-zCDP with Σ ρ_i ≤ ρ, and (ε, δ/2 + δ/2)-DP by the conversion of [`zcdp_delta`]. The exact
//! enumeration of `tests/discover_privacy.rs` checks the transcripts of all rounds.
//!
//! Work: R sorts of the contributions by unit and R by item, O(R n log n).

use super::accounting::{rho_of, variance_for_rho, zcdp_delta, zcdp_rho};
use super::weighted::{grid_of, threshold};
use crate::exact::gaussian::GaussianVariance;
use crate::float::{add_up, div_down};
use crate::Error;

/// The most rounds accepted.
pub const MAX_ROUNDS: u32 = 8;

/// The public parameters of DP-SIPS: the weight grid and each round's σ² and threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sips {
    pub(crate) grid: u64,
    pub(crate) rounds: u32,
    pub(crate) round: [(GaussianVariance, u64); MAX_ROUNDS as usize],
}

/// DP-SIPS for (ε, δ), L and R rounds. Errors: R = 0 or above [`MAX_ROUNDS`], or a round's noise beyond
/// the sampler's range → [`Error::InvalidArgument`].
pub(crate) fn plan(epsilon: f64, delta: f64, l: usize, rounds: u32) -> Result<Sips, Error> {
    if rounds == 0 || rounds > MAX_ROUNDS {
        return Err(Error::InvalidArgument);
    }
    let half = 0.5 * delta;
    let grid = grid_of(l);
    let l2 = grid * grid;
    let parts = ((1u64 << rounds) - 1) as f64;
    let mut rho = zcdp_rho(epsilon, half)?;
    for _ in 0..64 {
        let mut round = [(GaussianVariance::new(1, 1)?, 0u64); MAX_ROUNDS as usize];
        let mut spent = 0.0;
        for (i, r) in round.iter_mut().enumerate().take(rounds as usize) {
            let share = (1u64 << i) as f64; // exact
            let v = variance_for_rho(div_down(rho * share, parts), l2)?;
            spent = add_up(spent, rho_of(&v, l2));
            let delta_i = div_down(half * share, parts);
            *r = (v, threshold(&v, grid, l, delta_i)?);
        }
        if zcdp_delta(spent, epsilon) <= half {
            return Ok(Sips { grid, rounds, round });
        }
        rho = div_down(rho, 1.0 + 1.0 / (1u64 << 20) as f64);
    }
    Err(Error::InvalidArgument)
}
