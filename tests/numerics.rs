//! Numerical safety of every selector for every finite input: no overflow, no NaN, no argmax fallback.

mod common;

use dpmo::dampen::Dampening;
use dpmo::select::{exponential_probabilities, select, Arithmetic, Noise, Selector};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{dampen, local_dampening_probabilities, Error};

const SELECTORS: [Selector; 5] = [
    Selector::Exponential,
    Selector::PermuteAndFlip,
    Selector::NoisyMax(Noise::Laplace),
    Selector::NoisyMax(Noise::Gumbel),
    Selector::NoisyMax(Noise::Exponential),
];

/// Every selector in every arithmetic that implements it (Laplace noise has no exact form).
fn runnable() -> Vec<(Selector, Arithmetic)> {
    let mut v = Vec::new();
    for a in [Arithmetic::Exact, Arithmetic::Float] {
        for sel in SELECTORS {
            if !(a == Arithmetic::Exact && sel == Selector::NoisyMax(Noise::Laplace)) {
                v.push((sel, a));
            }
        }
    }
    v
}

fn extreme_inputs() -> Vec<(Vec<f64>, f64, f64)> {
    let mut v = Vec::new();
    for scores in [
        vec![1e300, -1e300, 0.0],
        vec![f64::MAX, -f64::MAX],
        vec![-1e300, -1e300 + 1e285, -1e300],
        vec![42.0],
        vec![3.0; 10],
        vec![5e-324, 0.0, -5e-324],
    ] {
        for (eps, delta) in [
            (1.0, 1.0),
            (1e-12, 1.0),
            (1e12, 1.0),
            (1.0, 1e-12),
            (1e-300, 1e300),
            (1e300, 1e-300),
        ] {
            v.push((scores.clone(), delta, eps));
        }
    }
    v
}

#[test]
fn probabilities_are_finite_and_sum_to_one_for_extreme_inputs() {
    for (s, delta, eps) in extreme_inputs() {
        let mut p = vec![0.0; s.len()];
        exponential_probabilities(&s, delta, eps, &mut p).unwrap();
        assert!(
            p.iter().all(|x| x.is_finite() && *x >= 0.0),
            "{s:?} {delta} {eps}: {p:?}"
        );
        assert!(
            (p.iter().sum::<f64>() - 1.0).abs() < 1e-12,
            "{s:?} {delta} {eps}: {p:?}"
        );
    }
}

#[test]
fn every_selector_returns_a_valid_index_for_extreme_inputs() {
    let mut g = common::rng(1);
    for (s, delta, eps) in extreme_inputs() {
        let mut perm = vec![0; s.len()];
        for (sel, a) in runnable() {
            for _ in 0..20 {
                let r = select(&mut g, sel, &s, delta, eps, &mut perm, a).unwrap();
                assert!(r < s.len());
            }
        }
    }
}

#[test]
fn tiny_budgets_stay_random_and_huge_budgets_concentrate() {
    // No argmax fallback: with ε/Δ = 1e-12, scores 2e12 apart keep probabilities 1/(1+e) and e/(1+e).
    let s = [-1e12, 1e12];
    let mut p = [0.0; 2];
    exponential_probabilities(&s, 1.0, 1e-12, &mut p).unwrap();
    assert!((p[0] - 1.0 / (1.0 + std::f64::consts::E)).abs() < 1e-12, "{p:?}");
    let s = [0.0, 1.0];
    exponential_probabilities(&s, 1.0, 1e-12, &mut p).unwrap();
    assert!((p[0] - 0.5).abs() < 1e-9);
    let mut g = common::rng(2);
    let mut perm = [0; 2];
    for (sel, a) in runnable() {
        let picks: usize = (0..2000)
            .map(|_| select(&mut g, sel, &s, 1.0, 1e-12, &mut perm, a).unwrap())
            .sum();
        assert!(
            (800..1200).contains(&picks),
            "{sel:?} {a:?} picked index 1 {picks} times out of 2000"
        );
    }
    exponential_probabilities(&s, 1.0, 1e12, &mut p).unwrap();
    assert_eq!(p, [0.0, 1.0]);
}

#[test]
fn invalid_inputs_are_refused_by_every_selector() {
    let mut g = common::rng(3);
    let mut perm = [0; 4];
    for (sel, a) in runnable() {
        assert_eq!(select(&mut g, sel, &[], 1.0, 1.0, &mut perm, a), Err(Error::EmptyInput));
        // Scores are data: a NaN counts as −f64::MAX and ±∞ as ±f64::MAX (the public rule), never a status.
        assert_eq!(select(&mut g, sel, &[1.0, f64::NAN], 1.0, 1.0, &mut perm, a), Ok(0));
        assert_eq!(
            select(&mut g, sel, &[1.0, f64::INFINITY], 1.0, 1.0, &mut perm, a),
            Ok(1)
        );
        assert_eq!(
            select(&mut g, sel, &[f64::NEG_INFINITY, 1.0], 1.0, 1.0, &mut perm, a),
            Ok(1)
        );
        assert_eq!(
            select(&mut g, sel, &[1.0], 1.0, 0.0, &mut perm, a),
            Err(Error::InvalidEpsilon)
        );
        assert_eq!(
            select(&mut g, sel, &[1.0], 1.0, -0.0, &mut perm, a),
            Err(Error::InvalidEpsilon)
        );
        assert_eq!(
            select(&mut g, sel, &[1.0], 1.0, f64::NAN, &mut perm, a),
            Err(Error::InvalidEpsilon)
        );
        assert_eq!(
            select(&mut g, sel, &[1.0], -1.0, 1.0, &mut perm, a),
            Err(Error::InvalidSensitivity)
        );
        assert_eq!(
            select(&mut g, sel, &[1.0], f64::NAN, 1.0, &mut perm, a),
            Err(Error::InvalidSensitivity)
        );
    }
    // Laplace noise has no exact implementation: refused before anything else is looked at.
    let laplace = Selector::NoisyMax(Noise::Laplace);
    for s in [&[][..], &[1.0, f64::NAN][..], &[1.0][..]] {
        assert_eq!(
            select(&mut g, laplace, s, 1.0, 1.0, &mut perm, Arithmetic::Exact),
            Err(Error::Unsupported)
        );
    }
    let mut short = [0usize; 1];
    assert_eq!(
        select(
            &mut g,
            Selector::PermuteAndFlip,
            &[1.0, 2.0],
            1.0,
            1.0,
            &mut short,
            Arithmetic::Exact
        ),
        Err(Error::ScratchTooSmall)
    );
    for a in [Arithmetic::Exact, Arithmetic::Float] {
        assert_eq!(
            select(&mut g, Selector::PermuteAndFlip, &[1.0, 2.0], 1.0, 1.0, &mut short, a),
            Err(Error::ScratchTooSmall)
        );
    }
    assert_eq!(
        select(
            &mut g,
            Selector::NoisyMax(Noise::Exponential),
            &[1.0, 2.0],
            1.0,
            1.0,
            &mut short,
            Arithmetic::Exact
        ),
        Err(Error::ScratchTooSmall),
        "exact report-noisy-max with exponential noise runs as permute-and-flip"
    );
    let mut out = [7.0; 1];
    assert_eq!(
        exponential_probabilities(&[1.0, 2.0], 1.0, 1.0, &mut out),
        Err(Error::LengthMismatch)
    );
    assert_eq!(out, [7.0]);
}

#[test]
fn dampening_sanitises_private_values_by_the_public_rule() {
    // Private data never becomes a status: a score beyond ±2⁶⁰Δ is clamped there, a NaN δ counts as Δ, a NaN
    // utility is the lowest score (−MAX, then clamped).
    let d = LocalSensitivity::new(DeltaSource::PerCandidate(&[1e-10, 1e-10]), 1e-10, 4, 2).unwrap();
    let mut out = [7.0; 2];
    assert_eq!(dampen(&[1e300, 0.0], &d, &mut out), Ok(()));
    assert!(out[0] > out[1] && out[0].is_finite());
    let clamped = out[0];
    assert_eq!(dampen(&[1e200, 0.0], &d, &mut out), Ok(()));
    assert_eq!(out[0], clamped, "both clamped at 2⁶⁰Δ");
    let f = |r: usize, t: usize| if r == 1 && t == 1 { f64::NAN } else { 1.0 };
    let g = |r: usize, t: usize| if r == 1 && t == 1 { 2.0 } else { 1.0 };
    let d = LocalSensitivity::new(DeltaSource::Function(&f), 2.0, 4, 2).unwrap();
    let d_delta = LocalSensitivity::new(DeltaSource::Function(&g), 2.0, 4, 2).unwrap();
    let mut want = [0.0; 2];
    assert_eq!(dampen(&[0.5, 5.0], &d, &mut out), Ok(()));
    dampen(&[0.5, 5.0], &d_delta, &mut want).unwrap();
    assert_eq!(out, want, "NaN δ = Δ");
    let mut p = [7.0; 2];
    let mut q = [7.0; 2];
    local_dampening_probabilities(&[0.5, 5.0], &d, Dampening::Shifted, 1.0, &mut p).unwrap();
    local_dampening_probabilities(&[0.5, 5.0], &d_delta, Dampening::Shifted, 1.0, &mut q).unwrap();
    assert_eq!(p, q);
    assert_eq!(dampen(&[0.5, f64::NAN], &d, &mut out), Ok(()));
    assert!(out[1] < out[0] && out[1].is_finite(), "NaN utility is the lowest score");
    // Large but representable dampened scores are fine, and probabilities stay finite.
    let d = LocalSensitivity::new(DeltaSource::PerCandidate(&[1.0, 1.0]), 1.0, 4, 2).unwrap();
    local_dampening_probabilities(&[1e300, -1e300], &d, Dampening::Plain, 1.0, &mut p).unwrap();
    assert_eq!(p, [1.0, 0.0]);
}

#[test]
fn goodness_of_fit_test_has_power_against_a_wrong_distribution() {
    // The statistical tests would be worthless if they could not fail: samples of the exponential
    // mechanism at ε are rejected against the probabilities at 1.2 ε.
    let s = [0.0, 1.0, 2.0, 3.0];
    let mut g = common::rng(4);
    let counts = common::histogram(4, 200_000, || dpmo::select_exponential(&mut g, &s, 1.0, 1.0).unwrap());
    let wrong = common::exact_exponential(&s, 1.0, 1.2);
    assert!(common::chi_square_p_value(&counts, &wrong) < common::ALPHA);
    let wrong_pf = common::exact_permute_and_flip(&s, 1.0, 1.0);
    assert!(
        common::chi_square_p_value(&counts, &wrong_pf) < common::ALPHA,
        "EM and PF differ and the test sees it"
    );
}

#[test]
fn long_sums_are_compensated_and_callbacks_evaluated_once_per_distance() {
    use std::cell::Cell;
    // δ(t) = 0.1 (not a dyadic number) for T = 4·10^6 distances of a shared δ: a plain running sum of
    // 1 − δ/Δ drifts by about 10⁻¹⁰ relative; the compensated sum does not.
    let t = 4_000_000usize;
    let shared = vec![0.1; t];
    let d = LocalSensitivity::new(DeltaSource::Shared(&shared), 1.0, usize::MAX, 1).unwrap();
    let mut out = [0.0];
    dpmo::dampen::dampen_shifted(&[0.0], &d, &mut out).unwrap();
    let exact = -(t as f64) * (1.0 - 0.1);
    assert!(((out[0] - exact) / exact).abs() < 1e-12, "{} vs {exact}", out[0]);
    // A callback's δ has no closed form in t: it is saturated at MAX_WALKED_DISTANCE whatever t_max says.
    let calls = Cell::new(0u64);
    let f = |_r: usize, _t: usize| {
        calls.set(calls.get() + 1);
        0.1
    };
    let d = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, 10_000_000, 1).unwrap();
    dpmo::dampen::dampen_shifted(&[0.0], &d, &mut out).unwrap();
    let walked = dpmo::sensitivity::MAX_WALKED_DISTANCE as f64;
    assert!((out[0] + walked * 0.9).abs() < 1e-9, "{}", out[0]);
    // Selections dampen into scratch: one call per (candidate, distance), not two.
    calls.set(0);
    let (mut scratch, mut perm) = ([0.0; 4], [0usize; 2]);
    let d2 = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, 1000, 2).unwrap();
    let mut g = common::rng(9);
    dpmo::select_local_dampening(
        &mut g,
        &[0.0, 1.0],
        &d2,
        Dampening::Shifted,
        Selector::Exponential,
        1.0,
        &mut scratch,
        &mut perm,
        Arithmetic::Float,
    )
    .unwrap();
    assert_eq!(calls.get(), 2 * 1000);
}
