//! Small random helpers over `rand_core::Rng`, from the core's samplers.

use rand_core::Rng;

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

/// Shuffles in place (Fisher–Yates).
pub fn shuffle<T, R: Rng + ?Sized>(rng: &mut R, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = below(rng, i + 1);
        v.swap(i, j);
    }
}
