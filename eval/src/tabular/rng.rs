//! Small random helpers over `rand_core::Rng` and per-run seed derivation.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Uniform integer in 0..n (n ≥ 1), from the core's unbiased sampler.
#[inline]
pub fn below<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    dpmo::sample::uniform_index(rng, n)
}

/// Uniform in (0, 1), from the core's 53-bit sampler.
#[inline]
pub fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    dpmo::sample::uniform_open01(rng)
}

/// A Laplace(0, b) draw, from the core's sampler.
pub fn laplace<R: Rng + ?Sized>(rng: &mut R, b: f64) -> f64 {
    b * dpmo::sample::laplace(rng)
}

/// A generator for one run, derived from the base seed and the run's coordinates (SplitMix-style mixing),
/// so that parallel runs are reproducible whatever the scheduling.
pub fn run_rng(seed: u64, parts: &[u64]) -> Xoshiro256PlusPlus {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    for &p in parts {
        h = (h ^ p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
    }
    Xoshiro256PlusPlus::seed_from_u64(h)
}

/// Shuffles in place (Fisher–Yates).
pub fn shuffle<T, R: Rng + ?Sized>(rng: &mut R, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = below(rng, i + 1);
        v.swap(i, j);
    }
}
