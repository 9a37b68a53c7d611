//! Exact arithmetic for the selectors: every coin a selector flips has exactly the probability the
//! mathematical mechanism prescribes, with no floating-point rounding anywhere on the random path.
//!
//! Floating-point samplers are only approximately right, and the error is not benign. With uniforms of 53
//! bits, the exponential mechanism at ε = 1, Δ = 1 picks the score −73.6 (next to 0) with probability exactly
//! 0, but its neighbour −72.6 with probability 2⁻⁵³: an infinite privacy loss on that output. Exact mode
//! removes every such event. Its pieces:
//!
//! * [`wide`] — a 256-bit unsigned integer with total (overflow-reporting) operations;
//! * [`bits`] — fair random bits, buffered from 64-bit words;
//! * [`bernoulli`] — Bernoulli(p) for rational p and Bernoulli(exp(−γ)) for rational γ (Canonne, Kamath &
//!   Steinke 2020, §5.1);
//! * [`grid`] — scores as exact integers on a binary grid fitted to Δ, and their gaps to the best score;
//! * [`scale`] — γ = ε G / (2N) as an exact rational, and the coin exp(−γ);
//! * [`discrete`] — exact discrete Laplace noise, for values that are released (not for selection);
//! * [`gaussian`] — exact discrete Gaussian noise (CKS20 Algorithm 3), for the thresholds of partition
//!   selection ([`crate::discover`]) and the private frequent set of [`crate::generalize`].
//!
//! What is exact, and the two preprocessing steps that make fixed-width integers suffice (both proved in
//! [`grid`] and [`scale`] to keep the sensitivity, so the ε-DP guarantee holds exactly in the arithmetic
//! that runs):
//! 1. scores are floored onto the grid 2^(e−10) of Δ = m 2^e (about 2⁻⁶²Δ), which divides Δ, so integer
//!    scores have sensitivity N = m · 2¹⁰ units exactly — integers and most real scores are on it already;
//! 2. a gap to the best score beyond 2¹²⁶ units (about 2⁶⁴Δ), or a γ beyond 2¹⁰, is capped there.
//!
//! Selectors built on these are in [`crate::select`](mod@crate::select) (exponential mechanism by rejection from uniform
//! proposals or from proposals by level of γ, permute-and-flip, their top-k), the exact dampening stage in [`crate::dampen`](mod@crate::dampen).

pub mod bernoulli;
pub mod bits;
pub mod discrete;
pub mod gaussian;
pub mod grid;
pub mod scale;
pub mod wide;

pub use bernoulli::{Frac, Gamma};
pub use bits::Bits;
pub use grid::{Grid, GAP_CAP};
pub use scale::{Scale, GAMMA_CAP};
