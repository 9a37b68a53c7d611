//! Small random helpers over `rand_core::Rng` and per-run seed derivation.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Uniform integer in 0..n (n ≥ 1), by Lemire's multiply-shift (bias below 2⁻⁶⁴·n, negligible here).
#[inline]
pub fn below<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    ((rng.next_u64() as u128 * n as u128) >> 64) as usize
}

/// Uniform in [0, 1).
#[inline]
pub fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A Laplace(0, b) draw.
pub fn laplace<R: Rng + ?Sized>(rng: &mut R, b: f64) -> f64 {
    let u = unit(rng) - 0.5;
    -b * u.signum() * (1.0 - 2.0 * u.abs()).max(f64::MIN_POSITIVE).ln()
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
