//! The fast Pareto score and δ^PS against their literal references on random inputs with many ties, the
//! paper's examples, and every error path.

mod common;

use common::Rng;
use dpmo::pareto::{
    pareto_global_sensitivity, pareto_scores, pareto_scores_naive, pareto_scores_scratch_len, pareto_sensitivity,
    pareto_sensitivity_naive, pareto_sensitivity_scratch_len, pareto_sensitivity_table, Dominance,
};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{Error, MAX_OBJECTIVES};

const BOTH: [Dominance; 2] = [Dominance::Textbook, Dominance::Weak];

/// Small integers (many ties), sometimes halves, signed zeros, or arbitrary reals.
fn random_utilities(rng: &mut Rng, n: usize, m: usize) -> Vec<f64> {
    let style = rng.below(4);
    (0..n * m)
        .map(|_| match style {
            0 => rng.below(3) as f64,
            1 => rng.below(7) as f64 * 0.5 - 1.0,
            2 => [0.0, -0.0, 1.0][rng.below(3)],
            _ => (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 10.0 - 5.0,
        })
        .collect()
}

fn fast_scores(u: &[f64], m: usize, d: Dominance) -> Vec<f64> {
    let n = u.len() / m;
    let mut out = vec![f64::NAN; n];
    let mut scratch = vec![usize::MAX; pareto_scores_scratch_len(n, m).unwrap()];
    pareto_scores(u, m, d, &mut out, &mut scratch).unwrap();
    out
}

fn naive_scores(u: &[f64], m: usize, d: Dominance) -> Vec<f64> {
    let mut out = vec![f64::NAN; u.len() / m];
    pareto_scores_naive(u, m, d, &mut out).unwrap();
    out
}

#[test]
fn example_4_4() {
    let u = [3.0, 5.0, 5.0, 3.0, 4.0, 2.0, 2.0, 4.0, 1.0, 1.0];
    for d in BOTH {
        assert_eq!(fast_scores(&u, 2, d), [0.0, 0.0, -1.0, -1.0, -4.0]);
        assert_eq!(naive_scores(&u, 2, d), [0.0, 0.0, -1.0, -1.0, -4.0]);
    }
    assert_eq!(pareto_global_sensitivity(5), Ok(4.0));
    assert_eq!(pareto_global_sensitivity(1), Err(Error::InvalidArgument));
    assert_eq!(pareto_global_sensitivity(0), Err(Error::EmptyInput));
}

#[test]
fn ties_follow_the_chosen_relation() {
    // a = b = (2, 3), c = (2, 4), d = (1, 1).
    let u = [2.0, 3.0, 2.0, 3.0, 2.0, 4.0, 1.0, 1.0];
    assert_eq!(fast_scores(&u, 2, Dominance::Textbook), [-1.0, -1.0, 0.0, -3.0]);
    assert_eq!(fast_scores(&u, 2, Dominance::Weak), [-2.0, -2.0, 0.0, -3.0]);
    // Three identical candidates: all optimal under textbook dominance, −2 each under weak dominance.
    for m in [1, 2, 3, 5] {
        let u = vec![1.5; 3 * m];
        assert_eq!(fast_scores(&u, m, Dominance::Textbook), [0.0; 3]);
        assert_eq!(fast_scores(&u, m, Dominance::Weak), [-2.0; 3]);
    }
}

#[test]
fn fast_scores_equal_naive_on_random_inputs() {
    let mut rng = Rng(1);
    let mut cases = 0;
    for _ in 0..3000 {
        let m = [1, 2, 2, 3, 5][rng.below(5)];
        let n = 1 + rng.below(40);
        let u = random_utilities(&mut rng, n, m);
        for d in BOTH {
            assert_eq!(fast_scores(&u, m, d), naive_scores(&u, m, d), "m={m} u={u:?} {d:?}");
            cases += 1;
        }
    }
    // Larger inputs exercise the Fenwick tree, the splits and the bitsets beyond toy sizes.
    for (n, m) in [(3000, 2), (1500, 3), (800, 5), (2000, 1)] {
        let u = random_utilities(&mut rng, n, m);
        for d in BOTH {
            assert_eq!(fast_scores(&u, m, d), naive_scores(&u, m, d));
            cases += 1;
        }
    }
    eprintln!("pareto scores: {cases} random cases, fast == naive");
}

/// Random admissibility-free δ inputs: what matters here is that the fast identity equals Def. 4.5.
fn random_deltas(rng: &mut Rng, n: usize, m: usize, columns: usize) -> Vec<(Vec<f64>, f64)> {
    (0..m)
        .map(|_| {
            let global = [1.0, 2.0, 0.7][rng.below(3)];
            let style = rng.below(3);
            let values = (0..n * columns)
                .map(|_| match style {
                    0 => [0.0, 0.5, 1.0][rng.below(3)],
                    1 => rng.below(3) as f64 * 0.3,
                    _ => 0.0,
                })
                .collect();
            (values, global)
        })
        .collect()
}

#[test]
fn fast_sensitivity_equals_definition_4_5_on_random_inputs() {
    let mut rng = Rng(7);
    let mut cases = 0;
    for _ in 0..1500 {
        let m = [1, 2, 2, 3, 5][rng.below(5)];
        let n = 1 + rng.below(30);
        let columns = 1 + rng.below(5);
        let u = random_utilities(&mut rng, n, m);
        let raw = random_deltas(&mut rng, n, m, columns);
        let t_max = 1 + rng.below(6);
        let deltas: Vec<LocalSensitivity> = raw
            .iter()
            .map(|(v, g)| LocalSensitivity::new(DeltaSource::Table { values: v, columns }, *g, t_max, n).unwrap())
            .collect();
        let need = pareto_sensitivity_scratch_len(n, m).unwrap();
        let (mut idx, mut val) = (vec![usize::MAX; need.indices], vec![f64::NAN; need.values]);
        let t_len = 1 + rng.below(7);
        let mut table = vec![f64::NAN; n * t_len];
        pareto_sensitivity_table(&u, m, &deltas, t_len, &mut table, &mut idx, &mut val).unwrap();
        for t in 0..t_len {
            let mut fast = vec![f64::NAN; n];
            pareto_sensitivity(&u, m, &deltas, t, &mut fast, &mut idx, &mut val).unwrap();
            for r in 0..n {
                assert_eq!(table[r * t_len + t], fast[r]);
                assert!(fast[r] >= 0.0 && fast[r] <= (n - 1) as f64);
            }
            for d in BOTH {
                let mut naive = vec![f64::NAN; n];
                pareto_sensitivity_naive(&u, m, &deltas, t, d, &mut naive).unwrap();
                assert_eq!(fast, naive, "m={m} t={t} u={u:?} raw={raw:?} {d:?}");
                cases += 1;
            }
            if t > 0 {
                // S grows with t, so δ^PS is non-decreasing in t.
                assert!((0..n).all(|r| table[r * t_len + t] >= table[r * t_len + t - 1]));
            }
        }
    }
    eprintln!("δ^PS: {cases} random (input, t, relation) cases, fast == Def. 4.5");
}

#[test]
fn example_4_6_and_function_sources() {
    let u = [1.0, 1.0, 3.0, 3.0, 5.0, 5.0];
    let f = |r: usize, _t: usize| [0.5, 1.0, 1.5][r];
    let s = LocalSensitivity::new(DeltaSource::Function(&f), 2.0, 8, 3).unwrap();
    let need = pareto_sensitivity_scratch_len(3, 2).unwrap();
    let (mut idx, mut val) = (vec![0; need.indices], vec![0.0; need.values]);
    let mut out = [9.0; 3];
    pareto_sensitivity(&u, 2, &[s, s], 0, &mut out, &mut idx, &mut val).unwrap();
    assert_eq!(out[1], 1.0);
    // Far beyond saturation the sums are one product, so even t = usize::MAX is immediate.
    pareto_sensitivity(&u, 2, &[s, s], usize::MAX, &mut out, &mut idx, &mut val).unwrap();
    assert_eq!(out, [2.0; 3]);
    pareto_sensitivity_naive(&u, 2, &[s, s], usize::MAX, Dominance::Weak, &mut out).unwrap();
    assert_eq!(out, [2.0; 3]);
}

/// The scratch of the Pareto score is sized for the m at hand (issue 22: it was sized for 16 objectives
/// whatever m, 288 bytes per candidate at n ≥ 3·10⁴): on 64-bit targets 6n + 1 words for m ≤ 2 (48 bytes
/// per candidate), growing with m, and the scores computed in exactly that much.
#[test]
fn score_scratch_takes_m() {
    for n in [1usize, 5, 1000, 100_000] {
        let words = |m| pareto_scores_scratch_len(n, m).unwrap();
        if usize::BITS == 64 {
            assert_eq!(words(1), 6 * n + 1);
            assert_eq!(words(2), 6 * n + 1);
        }
        for m in 2..MAX_OBJECTIVES {
            assert!(words(m) <= words(m + 1), "n = {n}, m = {m}");
        }
    }
    if usize::BITS == 64 {
        assert!(pareto_scores_scratch_len(100_000, 16).unwrap() >= 30 * 100_000);
    }
    for m in 1..=MAX_OBJECTIVES {
        let n = 300;
        let u: Vec<f64> = (0..n * m).map(|k| ((k * 7919) % 13) as f64).collect();
        let need = pareto_scores_scratch_len(n, m).unwrap();
        let mut scratch = vec![usize::MAX; need];
        let mut out = vec![f64::NAN; n];
        pareto_scores(&u, m, Dominance::Textbook, &mut out, &mut scratch).unwrap();
        let mut naive = vec![0.0; n];
        pareto_scores_naive(&u, m, Dominance::Textbook, &mut naive).unwrap();
        assert_eq!(out, naive, "m = {m}");
        assert_eq!(
            pareto_scores(&u, m, Dominance::Textbook, &mut out, &mut scratch[..need - 1]),
            Err(Error::ScratchTooSmall)
        );
    }
}

#[test]
fn score_errors_write_nothing() {
    let mut scratch = vec![0usize; pareto_scores_scratch_len(3, 2).unwrap()];
    let mut out = [7.0; 3];
    let u = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let d = Dominance::Textbook;
    assert_eq!(
        pareto_scores(&u, 0, d, &mut out, &mut scratch),
        Err(Error::InvalidArgument)
    );
    let big = vec![0.0; MAX_OBJECTIVES + 1];
    assert_eq!(
        pareto_scores(&big, MAX_OBJECTIVES + 1, d, &mut out[..1], &mut scratch),
        Err(Error::CapacityExceeded)
    );
    assert_eq!(
        pareto_scores(&u[..5], 2, d, &mut out, &mut scratch),
        Err(Error::LengthMismatch)
    );
    assert_eq!(
        pareto_scores(&u, 2, d, &mut out[..2], &mut scratch),
        Err(Error::LengthMismatch)
    );
    assert_eq!(pareto_scores(&[], 2, d, &mut [], &mut scratch), Err(Error::EmptyInput));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut v = u;
        v[4] = bad;
        assert_eq!(
            pareto_scores(&v, 2, d, &mut out, &mut scratch),
            Err(Error::NonFiniteInput)
        );
        assert_eq!(pareto_scores_naive(&v, 2, d, &mut out), Err(Error::NonFiniteInput));
    }
    let need = pareto_scores_scratch_len(3, 2).unwrap();
    assert_eq!(
        pareto_scores(&u, 2, d, &mut out, &mut scratch[..need - 1]),
        Err(Error::ScratchTooSmall)
    );
    assert_eq!(pareto_scores_naive(&u, 2, d, &mut out[..2]), Err(Error::LengthMismatch));
    assert_eq!(out, [7.0; 3]);
    assert_eq!(pareto_scores_scratch_len(usize::MAX / 2, 2), Err(Error::Overflow));
    assert_eq!(pareto_scores_scratch_len(3, 0), Err(Error::InvalidArgument));
    assert_eq!(
        pareto_scores_scratch_len(3, MAX_OBJECTIVES + 1),
        Err(Error::CapacityExceeded)
    );
    pareto_scores(&u, 2, d, &mut out, &mut scratch[..need]).unwrap();
    assert_eq!(out, [-2.0, -1.0, 0.0]);
}

#[test]
fn sensitivity_errors_write_nothing() {
    let u = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let ones = [1.0; 3];
    let s = LocalSensitivity::new(DeltaSource::PerCandidate(&ones), 1.0, 4, 3).unwrap();
    let s2 = LocalSensitivity::new(DeltaSource::PerCandidate(&[1.0; 2]), 1.0, 4, 2).unwrap();
    let bad = |_r: usize, t: usize| if t == 2 { f64::NAN } else { 1.0 };
    let sf = LocalSensitivity::new(DeltaSource::Function(&bad), 1.0, 4, 3).unwrap();
    let need = pareto_sensitivity_scratch_len(3, 2).unwrap();
    let (mut idx, mut val) = (vec![0; need.indices], vec![0.0; need.values]);
    let mut out = [7.0; 3];
    let mut table = [7.0; 9];
    let dd = Dominance::Weak;
    let e = |r: Result<(), Error>| r.unwrap_err();
    assert_eq!(
        e(pareto_sensitivity(&u, 0, &[], 0, &mut out, &mut idx, &mut val)),
        Error::InvalidArgument
    );
    assert_eq!(
        e(pareto_sensitivity(&u, 2, &[s], 0, &mut out, &mut idx, &mut val)),
        Error::LengthMismatch
    );
    assert_eq!(
        e(pareto_sensitivity(&u, 2, &[s, s2], 0, &mut out, &mut idx, &mut val)),
        Error::LengthMismatch
    );
    assert_eq!(
        e(pareto_sensitivity(&u, 2, &[s, s], 0, &mut out[..2], &mut idx, &mut val)),
        Error::LengthMismatch
    );
    let mut v = u;
    v[0] = f64::NAN;
    assert_eq!(
        e(pareto_sensitivity(&v, 2, &[s, s], 0, &mut out, &mut idx, &mut val)),
        Error::NonFiniteInput
    );
    assert_eq!(
        e(pareto_sensitivity_naive(&v, 2, &[s, s], 0, dd, &mut out)),
        Error::NonFiniteInput
    );
    assert_eq!(
        e(pareto_sensitivity(
            &u,
            2,
            &[s, s],
            0,
            &mut out,
            &mut idx[..need.indices - 1],
            &mut val
        )),
        Error::ScratchTooSmall
    );
    assert_eq!(
        e(pareto_sensitivity(
            &u,
            2,
            &[s, s],
            0,
            &mut out,
            &mut idx,
            &mut val[..need.values - 1]
        )),
        Error::ScratchTooSmall
    );
    // A NaN δ value counts as Δ (the public rule for private values): the fast and the naive computation
    // agree on it, and neither returns a status.
    let mut fast = [7.0; 3];
    let mut naive = [7.0; 3];
    pareto_sensitivity(&u, 2, &[s, sf], 2, &mut fast, &mut idx, &mut val).unwrap();
    pareto_sensitivity_naive(&u, 2, &[s, sf], 2, dd, &mut naive).unwrap();
    assert_eq!(fast, naive);
    assert_eq!(
        e(pareto_sensitivity_naive(&u, 2, &[s], 2, dd, &mut out)),
        Error::LengthMismatch
    );
    assert_eq!(out, [7.0; 3]);
    assert_eq!(
        e(pareto_sensitivity_table(&u, 2, &[s, s], 0, &mut [], &mut idx, &mut val)),
        Error::InvalidArgument
    );
    assert_eq!(
        e(pareto_sensitivity_table(
            &u,
            2,
            &[s, s],
            2,
            &mut table,
            &mut idx,
            &mut val
        )),
        Error::LengthMismatch
    );
    assert_eq!(table, [7.0; 9]);
    // A NaN δ value at t = 2 counts as Δ: the table is written, never refused.
    pareto_sensitivity_table(&u, 2, &[s, sf], 3, &mut table, &mut idx, &mut val).unwrap();
    assert_eq!(pareto_sensitivity_scratch_len(usize::MAX / 4, 1), Err(Error::Overflow));
    // The prefix before the NaN value is as before.
    pareto_sensitivity_table(&u, 2, &[s, sf], 2, &mut table[..6], &mut idx, &mut val).unwrap();
    // Hand-computed from Def. 4.5: S = 1 then 2 for every candidate and objective.
    assert_eq!(table[..6], [1.0, 2.0, 2.0, 2.0, 1.0, 2.0]);
}
