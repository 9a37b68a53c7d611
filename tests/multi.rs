//! PrivPareto and PrivAgg end to end: exact probabilities against the stages composed by hand, samples
//! against the exact probabilities, top-k re-scoring, and input validation.

mod common;

use common::*;
use dpmo::dampen::Dampening;
use dpmo::multi::{privagg_scratch_len, privpareto_saturation, privpareto_scratch_len};
use dpmo::pareto::pareto_scores_naive;
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{
    exponential_probabilities, privagg_probabilities, privpareto_probabilities, select_privagg, select_privpareto,
    AggSensitivity, Arithmetic, Dominance, Error, ParetoSensitivity, Selector,
};

const BOTH: [Arithmetic; 2] = [Arithmetic::Exact, Arithmetic::Float];

const DRAWS: usize = 200_000;

/// Five candidates, two objectives (the shape of PrivPareto Example 4.4), with ties.
const U: [f64; 10] = [5.0, 1.0, 1.0, 5.0, 3.0, 3.0, 2.0, 2.0, 1.0, 0.5];

fn scratch(n: usize, m: usize) -> (Vec<f64>, Vec<usize>) {
    let a = privpareto_scratch_len(n, m).unwrap();
    let b = privagg_scratch_len(n, m).unwrap();
    (vec![0.0; a.values.max(b.values)], vec![0; a.indices.max(b.indices)])
}

#[test]
fn global_privpareto_is_the_exponential_mechanism_on_pareto_scores() {
    let (mut v, mut ix) = scratch(5, 2);
    for dom in [Dominance::Textbook, Dominance::Weak] {
        let mut ps = [0.0; 5];
        pareto_scores_naive(&U, 2, dom, &mut ps).unwrap();
        let mut expected = [0.0; 5];
        exponential_probabilities(&ps, 4.0, 2.0, &mut expected).unwrap();
        let mut p = [0.0; 5];
        privpareto_probabilities(&U, 2, dom, ParetoSensitivity::Global, 2.0, &mut p, &mut v, &mut ix).unwrap();
        for (a, b) in p.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-15);
        }
        let mut g = rng(21);
        let mut out = [0usize; 1];
        for a in BOTH {
            let counts = histogram(5, DRAWS, || {
                select_privpareto(
                    &mut g,
                    &U,
                    2,
                    dom,
                    ParetoSensitivity::Global,
                    Selector::Exponential,
                    2.0,
                    &mut out,
                    &mut v,
                    &mut ix,
                    a,
                )
                .unwrap();
                out[0]
            });
            assert_fits(&format!("{a:?} global PrivPareto {dom:?}"), &counts, &p);
        }
    }
}

#[test]
fn local_privpareto_samples_match_its_exact_probabilities() {
    let ones = [1.0; 5];
    let halves = [0.5, 1.0, 0.5, 1.0, 0.5];
    let d = [
        LocalSensitivity::new(DeltaSource::PerCandidate(&ones), 1.0, 4, 5).unwrap(),
        LocalSensitivity::new(DeltaSource::PerCandidate(&halves), 1.0, 4, 5).unwrap(),
    ];
    let (mut v, mut ix) = scratch(5, 2);
    for damp in [Dampening::Plain, Dampening::Shifted] {
        let sens = ParetoSensitivity::Local {
            deltas: &d,
            max_distance: 3,
            dampening: damp,
        };
        let mut p = [0.0; 5];
        privpareto_probabilities(&U, 2, Dominance::Textbook, sens, 3.0, &mut p, &mut v, &mut ix).unwrap();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut g = rng(22);
        let mut out = [0usize; 1];
        for a in BOTH {
            let counts = histogram(5, DRAWS, || {
                select_privpareto(
                    &mut g,
                    &U,
                    2,
                    Dominance::Textbook,
                    sens,
                    Selector::Exponential,
                    3.0,
                    &mut out,
                    &mut v,
                    &mut ix,
                    a,
                )
                .unwrap();
                out[0]
            });
            assert_fits(&format!("{a:?} local PrivPareto {damp:?}"), &counts, &p);
        }
    }
}

#[test]
fn privpareto_top_k_rescores_the_remaining_candidates() {
    // The exact distribution of two global rounds: each round is the exponential mechanism over the Pareto
    // scores of the candidates left, with Δ = (candidates left) − 1 and ε/2.
    let n = 5;
    let rows: Vec<[f64; 2]> = (0..n).map(|r| [U[2 * r], U[2 * r + 1]]).collect();
    let round = |left: &[usize]| -> Vec<f64> {
        let sub: Vec<f64> = left.iter().flat_map(|&r| rows[r]).collect();
        let mut ps = vec![0.0; left.len()];
        pareto_scores_naive(&sub, 2, Dominance::Textbook, &mut ps).unwrap();
        let mut p = vec![0.0; left.len()];
        exponential_probabilities(&ps, (left.len() - 1) as f64, 1.5, &mut p).unwrap();
        p
    };
    let mut exact = Vec::new();
    let all: Vec<usize> = (0..n).collect();
    let p1 = round(&all);
    for (i, &a) in all.iter().enumerate() {
        let left: Vec<usize> = all.iter().copied().filter(|&r| r != a).collect();
        let p2 = round(&left);
        for (j, &b) in left.iter().enumerate() {
            exact.push((vec![a, b], p1[i] * p2[j]));
        }
    }
    let (mut v, mut ix) = scratch(n, 2);
    let mut g = rng(23);
    let mut out = [0usize; 2];
    for a in BOTH {
        assert_tuples_fit(&format!("{a:?} global PrivPareto top-2"), &exact, DRAWS, || {
            select_privpareto(
                &mut g,
                &U,
                2,
                Dominance::Textbook,
                ParetoSensitivity::Global,
                Selector::Exponential,
                3.0,
                &mut out,
                &mut v,
                &mut ix,
                a,
            )
            .unwrap();
            out.to_vec()
        });
    }
    // k = n returns every candidate once, for every selector and both sensitivities.
    let ones = [1.0; 5];
    let d = [
        LocalSensitivity::new(DeltaSource::PerCandidate(&ones), 1.0, 4, 5).unwrap(),
        LocalSensitivity::new(DeltaSource::PerCandidate(&ones), 1.0, 4, 5).unwrap(),
    ];
    let (mut v, mut ix) = scratch(n, 2);
    for sens in [
        ParetoSensitivity::Global,
        ParetoSensitivity::Local {
            deltas: &d,
            max_distance: 4,
            dampening: Dampening::Shifted,
        },
    ] {
        for (sel, a) in [
            (Selector::Exponential, Arithmetic::Exact),
            (Selector::PermuteAndFlip, Arithmetic::Exact),
            (Selector::NoisyMax(dpmo::Noise::Exponential), Arithmetic::Exact),
            (Selector::NoisyMax(dpmo::Noise::Laplace), Arithmetic::Float),
        ] {
            let mut all = [0usize; 5];
            select_privpareto(
                &mut g,
                &U,
                2,
                Dominance::Weak,
                sens,
                sel,
                1.0,
                &mut all,
                &mut v,
                &mut ix,
                a,
            )
            .unwrap();
            all.sort();
            assert_eq!(all, [0, 1, 2, 3, 4]);
        }
    }
}

#[test]
fn privagg_matches_the_weighted_sum_with_its_sensitivities() {
    let w = [2.0, -1.0];
    let globals = [1.0, 3.0];
    let agg: Vec<f64> = (0..5).map(|r| 2.0 * U[2 * r] - U[2 * r + 1]).collect();
    let mut expected = [0.0; 5];
    exponential_probabilities(&agg, 2.0 * 1.0 + 1.0 * 3.0, 1.0, &mut expected).unwrap();
    let (mut v, mut ix) = scratch(5, 2);
    let mut p = [0.0; 5];
    privagg_probabilities(&U, &w, AggSensitivity::Global(&globals), 1.0, &mut p, &mut v).unwrap();
    for (a, b) in p.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-15);
    }
    let mut g = rng(24);
    let mut out = [0usize; 1];
    for a in BOTH {
        let counts = histogram(5, DRAWS, || {
            select_privagg(
                &mut g,
                &U,
                &w,
                AggSensitivity::Global(&globals),
                Selector::Exponential,
                1.0,
                &mut out,
                &mut v,
                &mut ix,
                a,
            )
            .unwrap();
            out[0]
        });
        assert_fits(&format!("{a:?} global PrivAgg"), &counts, &p);
    }

    // Local: δ_agg = 2·δ_1 + 1·δ_2, Δ_agg = 5, then dampening.
    let d1 = [0.5, 1.0, 0.25, 1.0, 1.0];
    let d2 = [1.0, 2.0, 3.0, 0.5, 0.0];
    let d = [
        LocalSensitivity::new(DeltaSource::PerCandidate(&d1), 1.0, 2, 5).unwrap(),
        LocalSensitivity::new(DeltaSource::PerCandidate(&d2), 3.0, 2, 5).unwrap(),
    ];
    let table: Vec<f64> = (0..5).flat_map(|r| [2.0 * d1[r] + d2[r]; 2]).collect();
    let by_hand = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: 2,
        },
        5.0,
        2,
        5,
    )
    .unwrap();
    let mut expected = [0.0; 5];
    dpmo::local_dampening_probabilities(&agg, &by_hand, Dampening::Plain, 1.0, &mut expected).unwrap();
    let sens = AggSensitivity::Local {
        deltas: &d,
        max_distance: 2,
        dampening: Dampening::Plain,
    };
    privagg_probabilities(&U, &w, sens, 1.0, &mut p, &mut v).unwrap();
    for (a, b) in p.iter().zip(&expected) {
        assert!((a - b).abs() < 1e-15, "{p:?} vs {expected:?}");
    }
    for a in BOTH {
        let counts = histogram(5, DRAWS, || {
            select_privagg(
                &mut g,
                &U,
                &w,
                sens,
                Selector::Exponential,
                1.0,
                &mut out,
                &mut v,
                &mut ix,
                a,
            )
            .unwrap();
            out[0]
        });
        assert_fits(&format!("{a:?} local PrivAgg"), &counts, &p);
    }
}

#[test]
fn multi_objective_inputs_are_validated_and_nothing_is_written() {
    let (mut v, mut ix) = scratch(5, 2);
    let mut g = rng(25);
    let mut out = [9usize; 2];
    let sel = Selector::Exponential;
    let run = |u: &[f64], m: usize, eps: f64, out: &mut [usize], v: &mut [f64], ix: &mut [usize], g: &mut _| {
        select_privpareto(
            g,
            u,
            m,
            Dominance::Textbook,
            ParetoSensitivity::Global,
            sel,
            eps,
            out,
            v,
            ix,
            Arithmetic::Exact,
        )
    };
    assert_eq!(
        run(&U, 0, 1.0, &mut out, &mut v, &mut ix, &mut g),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        run(&U, 17, 1.0, &mut out, &mut v, &mut ix, &mut g),
        Err(Error::CapacityExceeded)
    );
    assert_eq!(
        run(&U, 3, 1.0, &mut out, &mut v, &mut ix, &mut g),
        Err(Error::LengthMismatch)
    );
    assert_eq!(
        run(&[], 2, 1.0, &mut out, &mut v, &mut ix, &mut g),
        Err(Error::EmptyInput)
    );
    // A NaN utility is private data: it follows the public rule (the lowest score), never a status.
    let mut one = [9];
    assert_eq!(run(&[1.0, f64::NAN], 2, 1.0, &mut one, &mut v, &mut ix, &mut g), Ok(()));
    assert_eq!(one, [0]);
    // k > n is an argument error and is reported before the data is looked at.
    assert_eq!(
        run(&[1.0, f64::NAN], 2, 1.0, &mut out, &mut v, &mut ix, &mut g),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        run(&U, 2, 0.0, &mut out, &mut v, &mut ix, &mut g),
        Err(Error::InvalidEpsilon)
    );
    assert_eq!(
        run(&U, 2, 1.0, &mut [0; 6], &mut v, &mut ix, &mut g),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        run(&U, 2, 1.0, &mut out, &mut v[..3], &mut ix, &mut g),
        Err(Error::ScratchTooSmall)
    );
    assert_eq!(out, [9, 9]);
    let w = [1.0, f64::INFINITY];
    assert_eq!(
        select_privagg(
            &mut g,
            &U,
            &w,
            AggSensitivity::Global(&[1.0, 1.0]),
            sel,
            1.0,
            &mut out,
            &mut v,
            &mut ix,
            Arithmetic::Exact
        ),
        Err(Error::NonFiniteInput)
    );
    assert_eq!(
        select_privagg(
            &mut g,
            &U,
            &[1.0, 1.0],
            AggSensitivity::Global(&[1.0]),
            sel,
            1.0,
            &mut out,
            &mut v,
            &mut ix,
            Arithmetic::Exact
        ),
        Err(Error::LengthMismatch)
    );
    let bad = |_r: usize, _t: usize| f64::NAN;
    let d = LocalSensitivity::new(DeltaSource::Function(&bad), 1.0, 2, 5).unwrap();
    let ds = [d, d];
    let sens = ParetoSensitivity::Local {
        deltas: &ds,
        max_distance: 2,
        dampening: Dampening::Plain,
    };
    assert_eq!(
        select_privpareto(
            &mut g,
            &U,
            2,
            Dominance::Textbook,
            sens,
            sel,
            1.0,
            &mut out,
            &mut v,
            &mut ix,
            Arithmetic::Exact
        ),
        Ok(()),
        "a NaN δ value is private data: it counts as Δ (the public rule), never a status"
    );
    // One candidate: it is the only possible answer, with probability 1.
    let mut p = [0.0; 1];
    privpareto_probabilities(
        &[1.0, 2.0],
        2,
        Dominance::Textbook,
        ParetoSensitivity::Global,
        1.0,
        &mut p,
        &mut v,
        &mut ix,
    )
    .unwrap();
    assert_eq!(p, [1.0]);
}

/// Local PrivPareto's probabilities with automatic saturation (`max_distance` = 0).
fn automatic_probabilities(
    u: &[f64],
    m: usize,
    dominance: Dominance,
    deltas: &[LocalSensitivity<'_>],
    dampening: Dampening,
    eps: f64,
) -> Vec<f64> {
    let n = u.len() / m;
    let need = privpareto_scratch_len(n, m).unwrap();
    let (mut v, mut ix) = (vec![0.0; need.values], vec![0usize; need.indices]);
    let mut p = vec![0.0; n];
    let sens = ParetoSensitivity::Local {
        deltas,
        max_distance: 0,
        dampening,
    };
    privpareto_probabilities(u, m, dominance, sens, eps, &mut p, &mut v, &mut ix).unwrap();
    p
}

/// The reference for automatic saturation: PS, the whole δ^PS table up to `columns` distances, exact
/// dampening with it, and the exponential mechanism's probabilities on the integer scores. Also whether every
/// candidate's δ^PS has reached n − 1 in the last column (then the table stands for the unbounded one).
fn table_probabilities(
    u: &[f64],
    m: usize,
    dominance: Dominance,
    deltas: &[LocalSensitivity<'_>],
    columns: usize,
    dampening: Dampening,
    eps: f64,
) -> (Vec<f64>, bool) {
    use dpmo::dampen::exact_dampened_scores;
    use dpmo::pareto::{
        pareto_scores, pareto_scores_scratch_len, pareto_sensitivity_scratch_len, pareto_sensitivity_table,
    };
    let n = u.len() / m;
    let mut ps = vec![0.0; n];
    let mut order = vec![0usize; pareto_scores_scratch_len(n, m).unwrap()];
    pareto_scores(u, m, dominance, &mut ps, &mut order).unwrap();
    let s = pareto_sensitivity_scratch_len(n, m).unwrap();
    let (mut tix, mut tv) = (vec![0usize; s.indices], vec![0.0; s.values]);
    let mut table = vec![0.0; n * columns];
    pareto_sensitivity_table(u, m, deltas, columns, &mut table, &mut tix, &mut tv).unwrap();
    let saturated = (0..n).all(|r| table[r * columns + columns - 1] == (n - 1) as f64);
    let d = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns,
        },
        (n - 1) as f64,
        columns,
        n,
    )
    .unwrap();
    let mut ints = vec![0i128; n];
    let units = exact_dampened_scores(&ps, &d, dampening, &mut ints).unwrap();
    let best = ints.iter().copied().max().unwrap();
    let unit: Vec<f64> = ints.iter().map(|&x| -((best - x) as f64 / units as f64)).collect();
    let mut p = vec![0.0; n];
    exponential_probabilities(&unit, 1.0, eps, &mut p).unwrap();
    (p, saturated)
}

/// Local PrivPareto with automatic saturation (`max_distance` = 0, runs of constant δ^PS crossed at once)
/// gives exactly the distribution of dampening with the whole δ^PS table up to the automatic limit
/// (`privpareto_saturation`), on random utilities with ties and dyadic local sensitivities (per-candidate,
/// and tables whose δ grows with t).
#[test]
fn automatic_saturation_equals_the_saturated_table() {
    let mut g = rng(31);
    for case in 0..60 {
        let n = 3 + case % 9;
        let m = 2 + case % 2;
        let u: Vec<f64> = (0..n * m)
            .map(|_| (dpmo::sample::uniform_index(&mut g, 12) as f64) * 0.5)
            .collect();
        let eps = [0.25, 1.0, 4.0][case % 3];
        // Objective i: per-candidate δ (even cases) or a table growing with t over 5 columns.
        let per: Vec<Vec<f64>> = (0..m)
            .map(|_| {
                (0..n)
                    .map(|_| [0.0, 0.5, 1.0][dpmo::sample::uniform_index(&mut g, 3)])
                    .collect()
            })
            .collect();
        let tables: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                (0..n * 5)
                    .map(|k| (per[i][k / 5] + 0.25 * (k % 5) as f64).min(2.0))
                    .collect()
            })
            .collect();
        let deltas: Vec<LocalSensitivity<'_>> = (0..m)
            .map(|i| {
                let src = if case % 2 == 0 {
                    DeltaSource::PerCandidate(&per[i])
                } else {
                    DeltaSource::Table {
                        values: &tables[i],
                        columns: 5,
                    }
                };
                LocalSensitivity::new(src, 2.0, 40, n).unwrap()
            })
            .collect();
        for damp in [Dampening::Plain, Dampening::Shifted] {
            let limit = privpareto_saturation(n, m, 1, eps, damp, 0);
            let auto = automatic_probabilities(&u, m, Dominance::Textbook, &deltas, damp, eps);
            let (want, _) = table_probabilities(&u, m, Dominance::Textbook, &deltas, limit, damp, eps);
            for (a, b) in auto.iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-12,
                    "case {case} {damp:?} ε={eps}: {auto:?} vs table {want:?}"
                );
            }
        }
    }
}

/// The same equality on inputs large enough for every path of the δ^PS probes (the sweep with its kept
/// orders while many candidates are open, the direct count once few are, the divide-and-conquer count for
/// m = 3), with heavy ties, m = 1, 2, 3, both dominance relations and both dampenings; the reference is the
/// table up to the automatic limit.
#[test]
fn automatic_saturation_equals_the_table_on_larger_inputs() {
    let mut g = rng(47);
    for case in 0..12 {
        let n = [70, 130, 200][case % 3];
        let m = 1 + case % 3;
        let u: Vec<f64> = (0..n * m)
            .map(|_| (dpmo::sample::uniform_index(&mut g, 9) as f64) * 0.5)
            .collect();
        let eps = [1.0, 4.0][case % 2];
        let per: Vec<Vec<f64>> = (0..m)
            .map(|_| {
                (0..n)
                    .map(|_| [0.0, 0.25, 0.5][dpmo::sample::uniform_index(&mut g, 3)])
                    .collect()
            })
            .collect();
        let tables: Vec<Vec<f64>> = (0..m)
            .map(|i| {
                (0..n * 5)
                    .map(|k| (per[i][k / 5] + 0.125 * (k % 5) as f64).min(1.0))
                    .collect()
            })
            .collect();
        let deltas: Vec<LocalSensitivity<'_>> = (0..m)
            .map(|i| {
                let src = if (case + i) % 2 == 0 {
                    DeltaSource::PerCandidate(&per[i])
                } else {
                    DeltaSource::Table {
                        values: &tables[i],
                        columns: 5,
                    }
                };
                LocalSensitivity::new(src, 1.0, 12, n).unwrap()
            })
            .collect();
        for dominance in [Dominance::Weak, Dominance::Textbook] {
            for damp in [Dampening::Plain, Dampening::Shifted] {
                let limit = privpareto_saturation(n, m, 1, eps, damp, 0);
                let auto = automatic_probabilities(&u, m, dominance, &deltas, damp, eps);
                let (want, _) = table_probabilities(&u, m, dominance, &deltas, limit, damp, eps);
                for (a, b) in auto.iter().zip(&want) {
                    assert!(
                        (a - b).abs() <= 1e-12,
                        "case {case} n={n} m={m} {dominance:?} {damp:?} ε={eps}: {a} vs {b}"
                    );
                }
            }
        }
    }
}

/// Shifted dampening saturates δ^PS at ⌈2 (16 + ln n) / ε⌉ when automatic: exactly the table saturated
/// there, not the unbounded one (D and E keep δ^PS = 1 for 5,000 distances, half a unit of deficit per
/// distance: far below C and F in the unbounded table, within the automatic distance here). C and F have
/// δ^PS = n − 1 from t = 0.
#[test]
fn shifted_automatic_saturation_is_the_public_distance() {
    // C, D, E, F (two objectives); δ per candidate, Δ = 1000, saturated at 5,000.
    let u = [0.0, 0.0, 10.0, 0.0, 0.0, 10.0, -1.0, -1.0];
    let per = [1000.0, 0.0, 0.0, 1000.0];
    let (m, eps) = (2, 1.0);
    let s = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1000.0, 5000, 4).unwrap();
    let deltas = [s, s];
    let table = |columns| table_probabilities(&u, m, Dominance::Textbook, &deltas, columns, Dampening::Shifted, eps);
    let t = privpareto_saturation(4, m, 1, eps, Dampening::Shifted, 0);
    assert_eq!(t, (2.0 * (16.0 + 4f64.ln()) / eps).ceil() as usize);
    let (saturated, _) = table(t);
    let (unbounded, full) = table(5002);
    assert!(full, "the reference table must reach n − 1 for D and E");
    let auto = automatic_probabilities(&u, m, Dominance::Textbook, &deltas, Dampening::Shifted, eps);
    for (a, b) in auto.iter().zip(&saturated) {
        assert!((a - b).abs() <= 1e-12, "{auto:?} vs {saturated:?}");
    }
    assert!(auto[1] > 0.0 && unbounded[1] == 0.0, "{auto:?} vs {unbounded:?}");
}
