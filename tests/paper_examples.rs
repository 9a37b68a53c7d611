//! The worked examples of the Local Dampening paper (Farias et al., PVLDB 14(4), 2021).

use dpmo::dampen::{dampen, dampen_shifted, dampen_value, Dampening};
use dpmo::sensitivity::{max_over_candidates, DeltaSource, LocalSensitivity};
use dpmo::{exponential_probabilities, local_dampening_probabilities};

/// Example 3.9: the graph of Figure 2a, EBC(a) = EBC(b) = 6.5 and six nodes v_i with EBC 0; local
/// sensitivity LS(G, 0) = 3 and LS(G, 1) = 5 (the same for every node: the §3 mechanism with LS(x, t)).
#[test]
fn example_3_9_dampened_scores_and_probabilities() {
    let u = [6.5, 6.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    let ls = [3.0, 5.0];
    let delta = LocalSensitivity::new(DeltaSource::Shared(&ls), 5.0, 2, u.len()).unwrap();
    let mut d = [0.0; 8];
    dampen(&u, &delta, &mut d).unwrap();
    assert!((d[0] - 1.7).abs() < 1e-12 && (d[1] - 1.7).abs() < 1e-12, "{d:?}");
    assert!(d[2..].iter().all(|&x| x == 0.0));

    let mut p = [0.0; 8];
    local_dampening_probabilities(&u, &delta, Dampening::Plain, 2.0, &mut p).unwrap();
    let z = 2.0 * 1.7f64.exp() + 6.0;
    assert!((p[0] - 1.7f64.exp() / z).abs() < 1e-12);
    assert!((p[2] - 1.0 / z).abs() < 1e-12);
    // The paper rounds these to 0.32 and 0.06.
    assert_eq!((p[0] * 100.0).round() / 100.0, 0.32);
    assert_eq!((p[2] * 100.0).round() / 100.0, 0.06);

    // The paper's exponential-mechanism figures (0.22 and 0.09) imply Δ ≈ 7.6, which no stated sensitivity
    // gives; Lemma 5.2 gives ΔEBC = max(7·6/4, 7) = 10.5 for maximum degree 7. Either way local dampening
    // puts more mass on the best nodes.
    let mut em = [0.0; 8];
    exponential_probabilities(&u, 10.5, 2.0, &mut em).unwrap();
    assert!(
        p[0] > em[0],
        "local dampening favours the best nodes more than the exponential mechanism"
    );
}

/// Example 4.1: the inversion problem. r1: δ(0) = 1, δ(1) = 2, u = 3; r2: δ(0) = 4, u = 4.
#[test]
fn example_4_1_inversion_and_its_fix_by_delta_replacement() {
    let u = [3.0, 4.0];
    let table = [1.0, 2.0, 4.0, 4.0];
    let delta = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: 2,
        },
        4.0,
        2,
        2,
    )
    .unwrap();
    assert_eq!(dampen_value(3.0, 0, &delta).unwrap(), 2.0);
    assert_eq!(dampen_value(4.0, 1, &delta).unwrap(), 1.0);
    let mut d = [0.0; 2];
    dampen(&u, &delta, &mut d).unwrap();
    assert!(d[0] > d[1], "the inversion of Example 4.1");

    // §4.2: with δ̂(t) = max_r δ(t, r) every candidate is dampened on the same scale and the order returns.
    let mut shared = [0.0; 2];
    let replaced = max_over_candidates(&delta, &mut shared).unwrap();
    assert_eq!((replaced.delta(0, 0), replaced.delta(1, 1)), (Ok(4.0), Ok(4.0)));
    dampen(&u, &replaced, &mut d).unwrap();
    assert!(d[1] > d[0], "δ replacement removes the inversion: {d:?}");
}

/// Example 4.2, qualitatively (its printed numbers are inconsistent, see shared/papers/README.md): when the
/// utility is positively correlated with the local sensitivity, shifting raises the probability of the best
/// candidates above plain local dampening, which is itself above the exponential mechanism.
#[test]
fn example_4_2_shifting_improves_the_top_probability() {
    // a, b: EBC 6.5, δ(t) = 3 + 2t; six v_i: EBC 0, δ(t) = 2; Δ = 30, saturated from T_max = 14.
    let u = [6.5, 6.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    let f = |r: usize, t: usize| if r < 2 { 3.0 + 2.0 * t as f64 } else { 2.0 };
    let delta = LocalSensitivity::new(DeltaSource::Function(&f), 30.0, 14, u.len()).unwrap();
    let (mut plain, mut shifted, mut em) = ([0.0; 8], [0.0; 8], [0.0; 8]);
    local_dampening_probabilities(&u, &delta, Dampening::Plain, 2.0, &mut plain).unwrap();
    local_dampening_probabilities(&u, &delta, Dampening::Shifted, 2.0, &mut shifted).unwrap();
    exponential_probabilities(&u, 30.0, 2.0, &mut em).unwrap();
    eprintln!(
        "P(a): exponential {:.4}, local {:.4}, shifted {:.4}",
        em[0], plain[0], shifted[0]
    );
    assert!(shifted[0] > plain[0] && plain[0] > em[0]);

    // The closed form is the limit of Def. 4.3: D(u − s) + s/Δ is constant in s once s is large enough.
    let mut d = [0.0; 8];
    dampen_shifted(&u, &delta, &mut d).unwrap();
    for s in [1e3, 1e4] {
        for r in 0..8 {
            let limit = dampen_value(u[r] - s, r, &delta).unwrap() + s / 30.0;
            assert!((limit - d[r]).abs() < 1e-9, "r={r} s={s}: {limit} vs {}", d[r]);
        }
    }
}

/// Def. 3.6 details: zero-width intervals are skipped, negative utilities mirror the breakpoints, and beyond
/// saturation the function is linear with slope 1/Δ.
#[test]
fn dampening_function_edge_cases() {
    // δ(0) = 0: [b(0), b(1)) is empty, so D(0) = 1 (0 lies in [b(1), b(2))).
    let zero_first = [0.0, 2.0];
    let d = LocalSensitivity::new(DeltaSource::Shared(&zero_first), 4.0, 8, 1).unwrap();
    assert_eq!(dampen_value(0.0, 0, &d).unwrap(), 1.0);
    assert_eq!(dampen_value(1.0, 0, &d).unwrap(), 1.5);
    // Negative side: b(−1) = −δ(0) = 0, b(−2) = −2, so u = −1 lies in [b(−2), b(−1)) and D = −2 + 1/2.
    assert_eq!(dampen_value(-1.0, 0, &d).unwrap(), -1.5);
    // Beyond saturation (T = 2, b(2) = 2; from then on δ = Δ = 4): D(10) = 2 + (10 − 2)/4.
    assert_eq!(dampen_value(10.0, 0, &d).unwrap(), 4.0);
    assert_eq!(dampen_value(-10.0, 0, &d).unwrap(), -4.0);
    // Two zero-width intervals in a row.
    let zeros = [0.0, 0.0, 1.0];
    let d = LocalSensitivity::new(DeltaSource::Shared(&zeros), 1.0, 8, 1).unwrap();
    assert_eq!(dampen_value(0.0, 0, &d).unwrap(), 2.0);
    assert_eq!(dampen_value(-0.0, 0, &d).unwrap(), 2.0);
    // With δ = Δ everywhere, dampening is u/Δ: local dampening reduces to the exponential mechanism.
    let d = LocalSensitivity::new(DeltaSource::PerCandidate(&[2.0, 2.0]), 2.0, 5, 2).unwrap();
    for u in [-7.0, -1.0, 0.0, 0.5, 3.0, 100.0] {
        assert!((dampen_value(u, 1, &d).unwrap() - u / 2.0).abs() < 1e-12);
    }
    // D is monotone and continuous away from zero-width breakpoints.
    let table = [0.5, 1.0, 0.0, 3.0];
    let d = LocalSensitivity::new(DeltaSource::Shared(&table), 4.0, 6, 1).unwrap();
    let mut prev = f64::NEG_INFINITY;
    for i in -400..400 {
        let v = dampen_value(i as f64 * 0.05, 0, &d).unwrap();
        assert!(v >= prev);
        prev = v;
    }
}
