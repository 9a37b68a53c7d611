//! Property tests of the dominance counting behind `pareto_scores` and `pareto_sensitivity`: the fast
//! functions equal the literal O(n² m) references (Def. 4.3, Def. 4.5) on inputs built to stress ties —
//! utilities from tiny integer ranges, duplicated rows, −0.0 beside +0.0, constant columns — for every m
//! from 1 to 8, a few up to 16, both dominance relations, many seeds, and sizes that reach every path of
//! the divide and conquer (direct leaves, two-coordinate merges, splits with long runs of equal keys).
//! The checker is shown to catch a broken variant: the relations swapped (a strict/non-strict mix-up).

mod common;

use common::Rng;
use dpmo::pareto::{
    pareto_scores, pareto_scores_naive, pareto_scores_scratch_len, pareto_sensitivity, pareto_sensitivity_naive,
    pareto_sensitivity_scratch_len, Dominance,
};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::MAX_OBJECTIVES;

const BOTH: [Dominance; 2] = [Dominance::Textbook, Dominance::Weak];

/// An n × m utility array of one of several tie-heavy shapes.
fn tied_utilities(rng: &mut Rng, n: usize, m: usize) -> Vec<f64> {
    let style = rng.below(6);
    let range = 1 + rng.below(4);
    let mut u: Vec<f64> = (0..n * m)
        .map(|_| match style {
            // Integers from a tiny range: most pairs tie somewhere.
            0 | 1 => rng.below(range + 1) as f64,
            // Signed zeros and one other value: −0.0 and +0.0 must tie.
            2 => [0.0, -0.0, 1.0, -1.0][rng.below(4)],
            // Halves, some negative.
            3 => rng.below(2 * range + 1) as f64 * 0.5 - 1.0,
            // Reals without ties (the continuous case).
            _ => (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 10.0 - 5.0,
        })
        .collect();
    // Duplicate some rows exactly (copies must follow the relation), and sometimes make a column constant.
    if n > 1 {
        for _ in 0..rng.below(n / 2 + 1) {
            let (a, b) = (rng.below(n), rng.below(n));
            let row: Vec<f64> = u[a * m..(a + 1) * m].to_vec();
            u[b * m..(b + 1) * m].copy_from_slice(&row);
        }
    }
    if rng.below(4) == 0 {
        let c = rng.below(m);
        let v = [0.0, -0.0, 2.0][rng.below(3)];
        for r in 0..n {
            u[r * m + c] = if rng.below(2) == 0 { v } else { -v };
        }
    }
    u
}

fn scores(u: &[f64], m: usize, d: Dominance) -> Vec<f64> {
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

/// The checker: the first (n, m, seed) whose fast scores under relation `fast` differ from the reference
/// under `reference`, over `seeds` random tie-heavy inputs.
fn first_score_mismatch(fast: Dominance, reference: Dominance, seeds: u64) -> Option<(usize, usize, u64)> {
    for seed in 0..seeds {
        let mut rng = Rng(0xD0_0000 + seed);
        let m = match seed % 10 {
            8 => 9 + rng.below(MAX_OBJECTIVES - 8),
            _ => 1 + rng.below(8),
        };
        // Mostly small, sometimes a few hundred candidates so that the recursion splits many times.
        let n = match rng.below(8) {
            0 => 200 + rng.below(500),
            1 => 40 + rng.below(120),
            _ => 1 + rng.below(40),
        };
        let u = tied_utilities(&mut rng, n, m);
        if scores(&u, m, fast) != naive_scores(&u, m, reference) {
            return Some((n, m, seed));
        }
    }
    None
}

#[test]
fn scores_equal_the_reference_for_every_m_and_both_relations() {
    for d in BOTH {
        assert_eq!(first_score_mismatch(d, d, 1500), None, "{d:?}");
    }
}

#[test]
fn the_score_checker_catches_swapped_relations() {
    // Textbook and Weak differ exactly on exact copies, i.e. on whether a tie counts (≥ vs >): the
    // tie-heavy inputs must expose the swap, and quickly.
    let caught = first_score_mismatch(Dominance::Weak, Dominance::Textbook, 1500);
    assert!(matches!(caught, Some((_, _, seed)) if seed < 20), "{caught:?}");
    let caught = first_score_mismatch(Dominance::Textbook, Dominance::Weak, 1500);
    assert!(matches!(caught, Some((_, _, seed)) if seed < 20), "{caught:?}");
}

#[test]
fn larger_inputs_reach_deep_recursion() {
    let mut rng = Rng(42);
    for (n, m) in [(3000, 3), (2500, 4), (1500, 5), (1200, 8), (600, 16)] {
        for style in 0..3 {
            let u: Vec<f64> = (0..n * m)
                .map(|_| match style {
                    0 => rng.below(4) as f64,
                    1 => rng.below(60) as f64,
                    _ => (rng.next_u64() >> 11) as f64,
                })
                .collect();
            for d in BOTH {
                assert_eq!(
                    scores(&u, m, d),
                    naive_scores(&u, m, d),
                    "n={n} m={m} style={style} {d:?}"
                );
            }
        }
    }
}

/// Points on the simplex Σ u_i = 1 (anti-correlated): few dominate each other, most pairs are
/// incomparable, the hard case for pruning.
#[test]
fn anticorrelated_inputs() {
    let mut rng = Rng(5);
    for (n, m) in [(2000, 3), (1500, 4), (1000, 6)] {
        let mut u = Vec::with_capacity(n * m);
        for _ in 0..n {
            let e: Vec<f64> = (0..m).map(|_| 1.0 + rng.below(20) as f64).collect();
            let s: f64 = e.iter().sum();
            u.extend(e.iter().map(|x| x / s));
        }
        for d in BOTH {
            assert_eq!(scores(&u, m, d), naive_scores(&u, m, d), "n={n} m={m} {d:?}");
        }
    }
}

/// δ^PS through the identity (two dominance counts, one strict and one not) against Def. 4.5 read
/// literally, for every m from 1 to 8 and a few up to 16, with δ values that make the corners tie.
#[test]
fn sensitivity_equals_definition_4_5_for_every_m() {
    let mut cases = 0;
    for seed in 0..700u64 {
        let mut rng = Rng(0x5E_0000 + seed);
        let m = match seed % 10 {
            9 => 9 + rng.below(MAX_OBJECTIVES - 8),
            _ => 1 + rng.below(8),
        };
        let n = match rng.below(6) {
            0 => 100 + rng.below(200),
            _ => 1 + rng.below(40),
        };
        let u = tied_utilities(&mut rng, n, m);
        let columns = 1 + rng.below(3);
        let raw: Vec<(Vec<f64>, f64)> = (0..m)
            .map(|_| {
                let global = [1.0, 0.5, 2.0][rng.below(3)];
                let vals = (0..n * columns)
                    .map(|_| [0.0, 0.5, 1.0, 0.25][rng.below(4)] * global)
                    .collect();
                (vals, global)
            })
            .collect();
        let deltas: Vec<LocalSensitivity> = raw
            .iter()
            .map(|(v, g)| LocalSensitivity::new(DeltaSource::Table { values: v, columns }, *g, columns, n).unwrap())
            .collect();
        let need = pareto_sensitivity_scratch_len(n, m).unwrap();
        let (mut idx, mut val) = (vec![usize::MAX; need.indices], vec![f64::NAN; need.values]);
        for t in [0, columns, columns + 2] {
            let mut fast = vec![f64::NAN; n];
            pareto_sensitivity(&u, m, &deltas, t, &mut fast, &mut idx, &mut val).unwrap();
            for d in BOTH {
                let mut naive = vec![f64::NAN; n];
                pareto_sensitivity_naive(&u, m, &deltas, t, d, &mut naive).unwrap();
                assert_eq!(fast, naive, "seed={seed} n={n} m={m} t={t} {d:?}");
                cases += 1;
            }
        }
    }
    eprintln!("δ^PS: {cases} cases equal Def. 4.5");
}
