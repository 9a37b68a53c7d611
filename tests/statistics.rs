//! Every sampler and selector against exact probabilities, by chi-square tests at level 1e-6 with at least
//! 10^5 draws (docs/DESIGN.md §3, level 3).

mod common;

use common::*;
use dpmo::dampen::Dampening;
use dpmo::sample;
use dpmo::select::{
    exponential_probabilities, select_exponential, select_exponential_float, select_noisy_max, select_noisy_max_float,
    select_permute_and_flip, select_permute_and_flip_float, Arithmetic, Noise, Selector,
};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{local_dampening_probabilities, select_local_dampening, GeneratorState};

const DRAWS: usize = 200_000;

/// Bins continuous draws at the given cut points and compares with the exact CDF.
fn check_continuous(
    label: &str,
    draw: impl Fn(&mut rand_xoshiro::Xoshiro256PlusPlus) -> f64,
    cdf: impl Fn(f64) -> f64,
    cuts: &[f64],
) {
    let mut g = rng(label.len() as u64 * 7919);
    let mut counts = vec![0u64; cuts.len() + 1];
    for _ in 0..DRAWS {
        let x = draw(&mut g);
        assert!(x.is_finite(), "{label}: non-finite draw");
        let bin = cuts.partition_point(|&c| c <= x);
        counts[bin] += 1;
    }
    let mut probs = Vec::with_capacity(counts.len());
    let mut prev = 0.0;
    for &c in cuts {
        let f = cdf(c);
        probs.push(f - prev);
        prev = f;
    }
    probs.push(1.0 - prev);
    assert_fits(label, &counts, &probs);
}

fn cuts(lo: f64, hi: f64, k: usize) -> Vec<f64> {
    (0..=k).map(|i| lo + (hi - lo) * i as f64 / k as f64).collect()
}

#[test]
fn uniform_sampler_is_uniform_on_the_open_interval() {
    check_continuous(
        "uniform(0,1)",
        sample::uniform_open01,
        |x| x.clamp(0.0, 1.0),
        &cuts(0.02, 0.98, 48),
    );
    let mut g = rng(5);
    for _ in 0..DRAWS {
        let u = sample::uniform_open01(&mut g);
        assert!(u > 0.0 && u < 1.0);
    }
}

#[test]
fn exponential_sampler_matches_its_cdf() {
    check_continuous(
        "exponential",
        sample::exponential,
        |x| 1.0 - (-x).exp(),
        &cuts(0.05, 6.0, 40),
    );
}

#[test]
fn gumbel_sampler_matches_its_cdf() {
    check_continuous("gumbel", sample::gumbel, |x| (-(-x).exp()).exp(), &cuts(-2.0, 6.0, 40));
}

#[test]
fn laplace_sampler_matches_its_cdf() {
    check_continuous(
        "laplace",
        sample::laplace,
        |x| if x < 0.0 { 0.5 * x.exp() } else { 1.0 - 0.5 * (-x).exp() },
        &cuts(-6.0, 6.0, 48),
    );
}

#[test]
fn uniform_index_is_unbiased() {
    let mut g = rng(17);
    let n = 7;
    let counts = histogram(n, DRAWS, || sample::uniform_index(&mut g, n));
    assert_fits("uniform_index(7)", &counts, &vec![1.0 / n as f64; n]);
}

/// Score vectors with ties, a dominant candidate, negative values and a spread of gaps.
fn score_sets() -> Vec<(Vec<f64>, f64, f64)> {
    vec![
        (vec![0.0, 1.0, 2.0, 3.0], 1.0, 1.0),
        (vec![5.0, 5.0, 1.0, -2.0, 4.5], 2.0, 3.0),
        (vec![10.0, 0.0, 0.0], 1.0, 0.5),
        (vec![-1.0, 3.0, 2.0, 2.0, 0.0, 1.5], 1.0, 2.0),
    ]
}

#[test]
fn exponential_mechanism_matches_its_exact_probabilities() {
    for (i, (s, delta, eps)) in score_sets().into_iter().enumerate() {
        let exact = exact_exponential(&s, delta, eps);
        let mut lib = vec![0.0; s.len()];
        exponential_probabilities(&s, delta, eps, &mut lib).unwrap();
        for (a, b) in lib.iter().zip(&exact) {
            assert!(
                (a - b).abs() < 1e-12,
                "library probabilities {lib:?} vs definition {exact:?}"
            );
        }
        let mut g = rng(100 + i as u64);
        let counts = histogram(s.len(), DRAWS, || select_exponential(&mut g, &s, delta, eps).unwrap());
        assert_fits(&format!("exact exponential mechanism, set {i}"), &counts, &exact);
        let counts = histogram(s.len(), DRAWS, || {
            select_exponential_float(&mut g, &s, delta, eps).unwrap()
        });
        assert_fits(&format!("float exponential mechanism, set {i}"), &counts, &exact);
    }
}

#[test]
fn permute_and_flip_matches_enumerated_probabilities() {
    for (i, (s, delta, eps)) in score_sets().into_iter().enumerate() {
        let exact = exact_permute_and_flip(&s, delta, eps);
        let mut g = rng(200 + i as u64);
        let mut perm = vec![0usize; s.len()];
        let counts = histogram(s.len(), DRAWS, || {
            select_permute_and_flip(&mut g, &s, delta, eps, &mut perm).unwrap()
        });
        assert_fits(&format!("exact permute-and-flip, set {i}"), &counts, &exact);
        let counts = histogram(s.len(), DRAWS, || {
            select_permute_and_flip_float(&mut g, &s, delta, eps, &mut perm).unwrap()
        });
        assert_fits(&format!("float permute-and-flip, set {i}"), &counts, &exact);
    }
}

#[test]
fn noisy_max_gumbel_equals_the_exponential_mechanism() {
    for (i, (s, delta, eps)) in score_sets().into_iter().enumerate() {
        let exact = exact_exponential(&s, delta, eps);
        let mut g = rng(300 + i as u64);
        // The float version is the Gumbel-max trick, a different algorithm from the reservoir sampler.
        let counts = histogram(s.len(), DRAWS, || {
            select_noisy_max_float(&mut g, &s, delta, eps, Noise::Gumbel).unwrap()
        });
        assert_fits(
            &format!("float noisy max (Gumbel) vs exponential mechanism, set {i}"),
            &counts,
            &exact,
        );
        let counts = histogram(s.len(), DRAWS, || {
            select_noisy_max(&mut g, &s, delta, eps, Noise::Gumbel, &mut []).unwrap()
        });
        assert_fits(
            &format!("exact noisy max (Gumbel) vs exponential mechanism, set {i}"),
            &counts,
            &exact,
        );
    }
}

#[test]
fn noisy_max_exponential_equals_permute_and_flip() {
    for (i, (s, delta, eps)) in score_sets().into_iter().enumerate() {
        let exact = exact_permute_and_flip(&s, delta, eps);
        let mut g = rng(400 + i as u64);
        let counts = histogram(s.len(), DRAWS, || {
            select_noisy_max_float(&mut g, &s, delta, eps, Noise::Exponential).unwrap()
        });
        assert_fits(
            &format!("float noisy max (Exponential) vs permute-and-flip, set {i}"),
            &counts,
            &exact,
        );
        let mut perm = vec![0usize; s.len()];
        let counts = histogram(s.len(), DRAWS, || {
            select_noisy_max(&mut g, &s, delta, eps, Noise::Exponential, &mut perm).unwrap()
        });
        assert_fits(
            &format!("exact noisy max (Exponential) vs permute-and-flip, set {i}"),
            &counts,
            &exact,
        );
    }
}

#[test]
fn noisy_max_laplace_matches_numerical_integration() {
    for (i, (s, delta, eps)) in score_sets().into_iter().enumerate() {
        let exact = exact_noisy_max_laplace(&s, delta, eps);
        assert!(
            (exact.iter().sum::<f64>() - 1.0).abs() < 1e-8,
            "quadrature check {exact:?}"
        );
        let mut g = rng(500 + i as u64);
        let counts = histogram(s.len(), DRAWS, || {
            select_noisy_max_float(&mut g, &s, delta, eps, Noise::Laplace).unwrap()
        });
        assert_fits(&format!("noisy max (Laplace), set {i}"), &counts, &exact);
    }
}

/// The Local Dampening paper's Example 3.9 setting plus a candidate with a zero-width first interval.
fn local_world() -> (Vec<f64>, Vec<f64>, usize) {
    let u = vec![6.5, 6.5, 0.0, 0.0, 2.0, 0.0, -1.0];
    #[rustfmt::skip]
    let table = vec![
        3.0, 5.0, 5.0,
        3.0, 5.0, 5.0,
        2.0, 2.0, 4.0,
        0.0, 1.0, 2.0,
        1.0, 0.5, 3.0,
        0.0, 0.0, 1.0,
        1.0, 2.0, 2.0,
    ];
    (u, table, 3)
}

#[test]
fn local_dampening_samples_match_their_exact_probabilities() {
    let (u, table, cols) = local_world();
    let delta = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: cols,
        },
        8.0,
        6,
        u.len(),
    )
    .unwrap();
    let mut scratch = vec![0.0; 2 * u.len()];
    let mut perm = vec![0usize; u.len()];
    let runs = [Dampening::Plain, Dampening::Shifted]
        .into_iter()
        .flat_map(|k| [Arithmetic::Exact, Arithmetic::Float].map(move |a| (k, a)));
    for (k, (kind, arithmetic)) in runs.enumerate() {
        let eps = 1.5;
        let mut exact = vec![0.0; u.len()];
        local_dampening_probabilities(&u, &delta, kind, eps, &mut exact).unwrap();
        let mut g = rng(600 + k as u64);
        let counts = histogram(u.len(), DRAWS, || {
            select_local_dampening(
                &mut g,
                &u,
                &delta,
                kind,
                Selector::Exponential,
                eps,
                &mut scratch,
                &mut perm,
                arithmetic,
            )
            .unwrap()
        });
        assert_fits(
            &format!("{arithmetic:?} local dampening {kind:?} + exponential"),
            &counts,
            &exact,
        );

        // Permute-and-flip on the dampened scores (sensitivity 1), against enumeration.
        let mut damp = vec![0.0; u.len()];
        dpmo::dampen::dampen_with(&u, &delta, kind, &mut damp).unwrap();
        let exact_pf = exact_permute_and_flip(&damp, 1.0, eps);
        let counts = histogram(u.len(), DRAWS, || {
            select_local_dampening(
                &mut g,
                &u,
                &delta,
                kind,
                Selector::PermuteAndFlip,
                eps,
                &mut scratch,
                &mut perm,
                arithmetic,
            )
            .unwrap()
        });
        assert_fits(
            &format!("{arithmetic:?} local dampening {kind:?} + permute-and-flip"),
            &counts,
            &exact_pf,
        );
    }
}

#[test]
fn both_library_generators_drive_the_selectors_correctly() {
    let s = [0.0, 1.0, 2.0, 2.5];
    let exact = exact_exponential(&s, 1.0, 1.0);
    for (label, mut state) in [
        ("chacha20", GeneratorState::chacha20([9; 32])),
        ("xoshiro256++", GeneratorState::xoshiro256pp([9; 32])),
    ] {
        let mut g = state.load().unwrap();
        let counts = histogram(s.len(), DRAWS, || select_exponential(&mut g, &s, 1.0, 1.0).unwrap());
        state.store(&g);
        assert_fits(&format!("exponential mechanism with {label}"), &counts, &exact);
    }
}
