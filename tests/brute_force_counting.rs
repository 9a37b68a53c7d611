//! Admissibility of δ^PS (Def. 4.5) and δ_agg (Thm. 5.4) by brute force in the counting model of
//! DESIGN.md §3, and proof that the checker catches the known broken variants.
//!
//! The model: n = 3 candidates, m = 2 objectives. A record is a 0/1 pattern over (candidate, objective),
//! bit 2·c + i standing for (candidate c, objective i). The ten patterns are: the empty record 0, the six
//! single entries 1, 2, 4, 8, 16, 32, and the three "diagonal" records 3, 12, 48 that give one candidate
//! a point in both objectives at once. Replacing a record can then move one utility, move one candidate
//! up (or down) in both objectives — the move that creates and breaks dominance — or move two candidates
//! in opposite directions, which creates exact ties. (The first ten patterns by (number of ones, value),
//! 0, 1, 2, 4, 8, 16, 32, 3, 5, 6, catch strict comparisons only 82 times with textbook dominance; this
//! set catches them 162 and 366 times.)
//! A database is a multiset of K = 3 records (220 databases); neighbours replace one record; u_i(x, r) is
//! the number of records with a one at (r, i). Each u_i then changes by at most 1: δ = 1 constant, Δ = 1.

mod common;

use common::{check_admissibility, Evaluated, Report};
use dpmo::pareto::{
    pareto_scores, pareto_scores_scratch_len, pareto_sensitivity_scratch_len, pareto_sensitivity_table, Dominance,
};
use dpmo::sensitivity::weighted_sum::{weighted_sensitivity_table, weighted_sum};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use std::collections::{BTreeSet, HashMap};

const N: usize = 3;
const M: usize = 2;
const K: usize = 3;
/// δ tables reach t = 0..T_LEN − 1 and the saturated value at T_LEN; δ^PS of this model saturates at
/// n − 1 = 2 by t = 2, so 6 columns go well past it.
const T_LEN: usize = 6;

fn patterns() -> Vec<u32> {
    let empty = [0u32];
    let singles = (0..N * M).map(|bit| 1u32 << bit);
    let diagonals = (0..N).map(|c| 0b11u32 << (M * c));
    let all: Vec<u32> = empty.into_iter().chain(singles).chain(diagonals).collect();
    assert_eq!(all, [0, 1, 2, 4, 8, 16, 32, 3, 12, 48]);
    all
}

/// All databases (sorted pattern-index triples) and the neighbour pairs (one record replaced).
fn model() -> (Vec<[usize; K]>, Vec<(usize, usize)>) {
    let p = patterns().len();
    let mut dbs = Vec::new();
    for a in 0..p {
        for b in a..p {
            for c in b..p {
                dbs.push([a, b, c]);
            }
        }
    }
    let index: HashMap<[usize; K], usize> = dbs.iter().enumerate().map(|(i, d)| (*d, i)).collect();
    let mut pairs = BTreeSet::new();
    for (xi, db) in dbs.iter().enumerate() {
        for pos in 0..K {
            for q in 0..p {
                let mut y = *db;
                y[pos] = q;
                y.sort();
                let yi = index[&y];
                if yi != xi {
                    pairs.insert((xi.min(yi), xi.max(yi)));
                }
            }
        }
    }
    (dbs, pairs.into_iter().collect())
}

/// u_i(x, r) as an n × m row-major array.
fn utilities(db: &[usize; K], pats: &[u32]) -> Vec<f64> {
    let mut u = vec![0.0; N * M];
    for &rec in db {
        for (bit, slot) in u.iter_mut().enumerate() {
            *slot += f64::from((pats[rec] >> bit) & 1);
        }
    }
    u
}

fn ones() -> LocalSensitivity<'static> {
    LocalSensitivity::new(DeltaSource::PerCandidate(&[1.0; N]), 1.0, 100, N).unwrap()
}

fn ps_world(u: &[f64], dominance: Dominance) -> Evaluated {
    let mut score = vec![0.0; N];
    let mut scratch = vec![0usize; pareto_scores_scratch_len(N).unwrap()];
    pareto_scores(u, M, dominance, &mut score, &mut scratch).unwrap();
    let need = pareto_sensitivity_scratch_len(N, M).unwrap();
    let (mut idx, mut val) = (vec![0usize; need.indices], vec![0.0; need.values]);
    let mut delta = vec![0.0; N * T_LEN];
    pareto_sensitivity_table(u, M, &[ones(), ones()], T_LEN, &mut delta, &mut idx, &mut val).unwrap();
    Evaluated { score, delta }
}

/// The broken δ^PS of the authors' research code: Def. 4.5 with strict comparisons (lo < hi, hi > lo).
fn strict_delta_ps(u: &[f64], dominance: Dominance) -> Vec<f64> {
    let mut delta = vec![0.0; N * T_LEN];
    for t in 0..T_LEN {
        let s = (t + 1) as f64;
        for r in 0..N {
            let ur = &u[r * M..r * M + M];
            let mut count = 0;
            for q in (0..N).filter(|&q| q != r) {
                let uq = &u[q * M..q * M + M];
                count += usize::from(if dominance.dominates(uq, ur) {
                    (0..M).any(|i| uq[i] - s < ur[i] + s)
                } else {
                    (0..M).all(|i| uq[i] + s > ur[i] - s)
                });
            }
            delta[r * T_LEN + t] = count.min(N - 1) as f64;
        }
    }
    delta
}

enum AggVariant {
    Correct,
    FirstObjectiveOnly,
    SignedWeights,
}

fn agg_world(u: &[f64], w: &[f64; M], variant: &AggVariant) -> Evaluated {
    let mut score = vec![0.0; N];
    weighted_sum(u, w, &mut score).unwrap();
    let mut delta = vec![0.0; N * T_LEN];
    match variant {
        AggVariant::Correct => {
            weighted_sensitivity_table(w, &[ones(), ones()], T_LEN, &mut delta).unwrap();
        }
        // Each objective's δ is 1 here, so "Σ|w_i|·δ_1" would coincide with the correct value: the bug as
        // it appears in practice is keeping only the first objective's term.
        AggVariant::FirstObjectiveOnly => delta.fill(w[0].abs()),
        AggVariant::SignedWeights => delta.fill(w[0] + w[1]),
    }
    Evaluated { score, delta }
}

fn agg_global(w: &[f64; M]) -> f64 {
    w[0].abs() + w[1].abs()
}

#[test]
fn pareto_sensitivity_is_admissible_and_strict_variant_is_caught() {
    let pats = patterns();
    let (dbs, pairs) = model();
    eprintln!(
        "counting model: {} databases, {} neighbour pairs",
        dbs.len(),
        pairs.len()
    );
    assert_eq!(dbs.len(), 220);
    let us: Vec<Vec<f64>> = dbs.iter().map(|d| utilities(d, &pats)).collect();
    for dominance in [Dominance::Textbook, Dominance::Weak] {
        let worlds: Vec<Evaluated> = us.iter().map(|u| ps_world(u, dominance)).collect();
        let rep = check_admissibility(&worlds, &pairs, N, T_LEN, (N - 1) as f64, 0.0);
        rep.print(&format!("δ^PS ({dominance:?})"));
        assert_eq!(rep.violations(), 0);
        assert!(rep.cond1_checks > 0 && rep.cond2_checks > 0);

        let broken: Vec<Evaluated> = us
            .iter()
            .zip(&worlds)
            .map(|(u, w)| Evaluated {
                score: w.score.clone(),
                delta: strict_delta_ps(u, dominance),
            })
            .collect();
        let rep: Report = check_admissibility(&broken, &pairs, N, T_LEN, (N - 1) as f64, 0.0);
        rep.print(&format!("BROKEN δ^PS with strict comparisons ({dominance:?})"));
        assert!(rep.violations() >= 100, "the checker must catch strict comparisons");
    }
}

#[test]
fn weighted_sum_sensitivity_is_admissible_and_broken_variants_are_caught() {
    let pats = patterns();
    let (dbs, pairs) = model();
    let us: Vec<Vec<f64>> = dbs.iter().map(|d| utilities(d, &pats)).collect();
    let weights: [[f64; M]; 6] = [
        [1.0, 1.0],
        [1.0, -1.0],
        [0.5, 2.0],
        [-2.0, 0.75],
        [0.0, 1.0],
        [-1.0, -1.0],
    ];
    let (mut first_only, mut signed) = (0, 0);
    for w in &weights {
        let run = |variant: AggVariant| {
            let worlds: Vec<Evaluated> = us.iter().map(|u| agg_world(u, w, &variant)).collect();
            check_admissibility(&worlds, &pairs, N, T_LEN, agg_global(w), 0.0)
        };
        let rep = run(AggVariant::Correct);
        rep.print(&format!("δ_agg w = {w:?}"));
        assert_eq!(rep.violations(), 0);

        let rep = run(AggVariant::FirstObjectiveOnly);
        rep.print(&format!("BROKEN δ_agg first objective only, w = {w:?}"));
        if w[1] != 0.0 {
            assert!(
                rep.violations() > 0,
                "first-objective-only δ_agg must be caught for w = {w:?}"
            );
        }
        first_only += rep.violations();

        let rep = run(AggVariant::SignedWeights);
        rep.print(&format!("BROKEN δ_agg signed weights, w = {w:?}"));
        if w.iter().any(|&x| x < 0.0) {
            assert!(rep.violations() > 0, "signed-weight δ_agg must be caught for w = {w:?}");
        }
        signed += rep.violations();
    }
    eprintln!("broken δ_agg totals: first objective only {first_only}, signed weights {signed}");
}
