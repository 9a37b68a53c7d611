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

/// Sets of many candidates with gaps of every size, for the exact selectors' fast path on far candidates
/// (the integer part of γ decided first by e^−1 coins against precomputed thresholds, the rational
/// remainder only if they all succeed): most of the mass on far candidates (⌊γ⌋ = 1), a spread of gaps,
/// ties, one dominant candidate among thousands (⌊γ⌋ = 8 for the rest, a fifth of the mass there), and
/// ascending scores.
fn many_candidate_sets() -> Vec<(&'static str, Vec<f64>, f64, f64)> {
    let mut most_far = vec![0.0];
    most_far.extend([-1.0; 63]);
    most_far.extend([-3.0; 236]);
    let spread: Vec<f64> = (0..500)
        .map(|i| -0.11 * i as f64 - 0.5 * ((i * 37) % 11) as f64)
        .collect();
    let ties: Vec<f64> = (0..200).map(|i| if i % 2 == 0 { 0.0 } else { -0.7 }).collect();
    let mut dominant = vec![-16.0; 3000];
    dominant[1717] = 0.0;
    for j in 0..20 {
        dominant[j * 149 + 3] = -4.0;
    }
    let ascending: Vec<f64> = (0..150).map(|i| 0.03 * i as f64).collect();
    vec![
        ("most mass far", most_far, 1.0, 1.0),
        ("spread", spread, 1.5, 2.0),
        ("ties across the near boundary", ties, 1.0, 1.0),
        ("dominant among 3,000", dominant, 1.0, 1.0),
        ("ascending", ascending, 1.0, 1.0),
    ]
}

#[test]
fn permute_and_flip_integral_equals_enumeration() {
    for (s, delta, eps) in score_sets() {
        let a = exact_permute_and_flip(&s, delta, eps);
        let b = exact_permute_and_flip_integral(&s, delta, eps);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-13, "{a:?} vs {b:?}");
        }
    }
    for (label, s, delta, eps) in many_candidate_sets() {
        let p = exact_permute_and_flip_integral(&s, delta, eps);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{label}");
    }
}

#[test]
fn exact_selectors_with_far_candidates_match_their_probabilities() {
    for (i, (label, s, delta, eps)) in many_candidate_sets().into_iter().enumerate() {
        let n = s.len();
        let em = exact_exponential(&s, delta, eps);
        let pf = exact_permute_and_flip_integral(&s, delta, eps);
        let mut g = rng(700 + i as u64);
        let mut perm = vec![0usize; n];
        let counts = histogram(n, DRAWS, || select_exponential(&mut g, &s, delta, eps).unwrap());
        assert_fits(&format!("exact exponential mechanism, {label}"), &counts, &em);
        // A broken far path that flipped exp(−L) on top of the whole coin exp(−γ) (here L = 1) is caught.
        let far_twice: Vec<f64> = s
            .iter()
            .map(|&x| if x == -3.0 { (-1.0f64).exp() } else { 1.0 })
            .collect();
        if i == 0 {
            let mut broken: Vec<f64> = em.iter().zip(&far_twice).map(|(p, f)| p * f).collect();
            let t: f64 = broken.iter().sum();
            broken.iter_mut().for_each(|p| *p /= t);
            assert!(
                chi_square_p_value(&counts, &broken) < ALPHA,
                "{label}: EM fits the broken far path"
            );
        }
        let counts = histogram(n, DRAWS, || {
            select_noisy_max(&mut g, &s, delta, eps, Noise::Gumbel, &mut []).unwrap()
        });
        assert_fits(&format!("exact noisy max (Gumbel), {label}"), &counts, &em);
        let counts = histogram(n, DRAWS, || {
            select_permute_and_flip(&mut g, &s, delta, eps, &mut perm).unwrap()
        });
        assert_fits(&format!("exact permute-and-flip, {label}"), &counts, &pf);
        if i == 0 {
            let max = 0.0;
            let coins: Vec<f64> = s
                .iter()
                .zip(&far_twice)
                .map(|(&x, f)| (eps * (x - max) / (2.0 * delta)).exp() * f)
                .collect();
            let broken = permute_and_flip_from_coins(&coins);
            assert!(
                chi_square_p_value(&counts, &broken) < ALPHA,
                "{label}: P&F fits the broken far path"
            );
        }
        let counts = histogram(n, DRAWS, || {
            select_noisy_max(&mut g, &s, delta, eps, Noise::Exponential, &mut perm).unwrap()
        });
        assert_fits(&format!("exact noisy max (Exponential), {label}"), &counts, &pf);
    }
}

/// The integer-score path (dampened scores) with far candidates: 300 candidates, per-candidate δ.
#[test]
fn exact_local_dampening_with_far_candidates_matches_its_probabilities() {
    let n = 300;
    let u: Vec<f64> = (0..n).map(|i| 40.0 - ((i * 53) % 97) as f64 * 0.9).collect();
    let d: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
    let delta = LocalSensitivity::new(DeltaSource::PerCandidate(&d), 3.0, 40, n).unwrap();
    let (mut scratch, mut perm) = (vec![0.0; 2 * n], vec![0usize; n]);
    for (k, kind) in [Dampening::Plain, Dampening::Shifted].into_iter().enumerate() {
        let eps = 1.0;
        let mut em = vec![0.0; n];
        local_dampening_probabilities(&u, &delta, kind, eps, &mut em).unwrap();
        let mut damp = vec![0.0; n];
        dpmo::dampen::dampen_with(&u, &delta, kind, &mut damp).unwrap();
        let pf = exact_permute_and_flip_integral(&damp, 1.0, eps);
        for (selector, probs) in [(Selector::Exponential, &em), (Selector::PermuteAndFlip, &pf)] {
            let mut g = rng(800 + k as u64);
            let counts = histogram(n, DRAWS, || {
                select_local_dampening(
                    &mut g,
                    &u,
                    &delta,
                    kind,
                    selector,
                    eps,
                    &mut scratch,
                    &mut perm,
                    Arithmetic::Exact,
                )
                .unwrap()
            });
            assert_fits(
                &format!("exact local dampening {kind:?} + {selector:?}, 300 candidates"),
                &counts,
                probs,
            );
        }
    }
}

/// Scores that are NaN or −∞ are read by the public rule (as −f64::MAX: never chosen in practice) through
/// every path of the exact selectors — the uniform proposals, the levels, the walk and the stream of
/// permute-and-flip — and the others keep their exact distribution: 1,000 candidates, a clear best and a
/// spread of near ones, a fifth of them NaN or −∞.
#[test]
fn exact_selectors_read_non_finite_scores_by_the_public_rule() {
    let n = 1000;
    let s: Vec<f64> = (0..n)
        .map(|i| match i % 10 {
            0 => f64::NAN,
            5 => f64::NEG_INFINITY,
            _ if i == 417 => 4.0,
            _ => -0.05 * ((i * 7919) % 400) as f64,
        })
        .collect();
    let read: Vec<f64> = s.iter().map(|&x| if x.is_finite() { x } else { -f64::MAX }).collect();
    let em = exact_exponential(&read, 1.0, 1.0);
    let pf = exact_permute_and_flip_integral(&read, 1.0, 1.0);
    let mut g = rng(901);
    let mut perm = vec![0usize; n];
    let counts = histogram(n, DRAWS, || select_exponential(&mut g, &s, 1.0, 1.0).unwrap());
    assert_fits("exact exponential mechanism, NaN and −∞ scores", &counts, &em);
    let counts = histogram(n, DRAWS, || {
        select_permute_and_flip(&mut g, &s, 1.0, 1.0, &mut perm).unwrap()
    });
    assert_fits("exact permute-and-flip, NaN and −∞ scores", &counts, &pf);
}
