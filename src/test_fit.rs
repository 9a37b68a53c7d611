//! Goodness of fit at a tiny significance level, for tests only: the core's unit tests of samplers that are
//! not public (`src/select/levels.rs`) and, through `#[path]`, the integration tests (`tests/common`).

extern crate std;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use std::eprintln;

/// Significance level of every statistical test: a correct sampler fails about once in a million runs.
pub const ALPHA: f64 = 1e-6;

/// Pearson chi-square goodness of fit of `counts` against `probs`. Cells with expected count below 5 are
/// pooled into one cell so that the chi-square approximation holds. Returns the p-value.
pub fn chi_square_p_value(counts: &[u64], probs: &[f64]) -> f64 {
    assert_eq!(counts.len(), probs.len());
    let total: u64 = counts.iter().sum();
    let n = total as f64;
    let (mut stat, mut cells) = (0.0, 0usize);
    let (mut pooled_obs, mut pooled_exp) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        let e = p * n;
        if e < 5.0 {
            pooled_obs += c as f64;
            pooled_exp += e;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            cells += 1;
        }
    }
    if pooled_exp > 0.0 {
        if pooled_exp >= 5.0 {
            stat += (pooled_obs - pooled_exp).powi(2) / pooled_exp;
            cells += 1;
        } else {
            // Too rare to test by chi-square: an observation there is still checked not to be absurd.
            assert!(
                pooled_obs <= 20.0 + 10.0 * pooled_exp,
                "{pooled_obs} draws in cells expecting {pooled_exp}"
            );
        }
    }
    if cells < 2 {
        return 1.0;
    }
    ChiSquared::new((cells - 1) as f64).unwrap().sf(stat)
}

/// Asserts that `counts` are a plausible sample from `probs` at level [`ALPHA`].
pub fn assert_fits(label: &str, counts: &[u64], probs: &[f64]) {
    let p = chi_square_p_value(counts, probs);
    eprintln!(
        "{label}: chi-square p-value {p:.3e} over {} draws",
        counts.iter().sum::<u64>()
    );
    assert!(
        p >= ALPHA,
        "{label}: p-value {p:e} < {ALPHA:e}\ncounts {counts:?}\nprobs {probs:?}"
    );
}
