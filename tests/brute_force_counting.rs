//! Admissibility of δ^PS (Def. 4.5) and δ_agg (Thm. 5.4) by brute force in the counting model of
//! docs/DESIGN.md §3, and proof that the checker catches the known broken variants.
//!
//! The model (`tests/common/counting.rs`): n = 3 candidates, m = 2 objectives, databases of K = 3
//! records out of ten 0/1 patterns over (candidate, objective), 220 databases; neighbours replace one
//! record; u_i(x, r) counts the records with a one at (r, i), so each u_i has δ = 1 constant and Δ = 1.

mod common;

use common::counting::{model, patterns, utilities, M, N};
use common::{both_ways, check_admissibility, Bounds, Evaluated, Report};
use dpmo::pareto::{
    pareto_scores, pareto_scores_scratch_len, pareto_sensitivity_scratch_len, pareto_sensitivity_table, Dominance,
};
use dpmo::sensitivity::weighted_sum::{weighted_sensitivity_table, weighted_sum};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};

/// δ tables reach t = 0..T_LEN − 1 and the saturated value at T_LEN; δ^PS of this model saturates at
/// n − 1 = 2 by t = 2, so 6 columns go well past it.
const T_LEN: usize = 6;

fn ones() -> LocalSensitivity<'static> {
    LocalSensitivity::new(DeltaSource::PerCandidate(&[1.0; N]), 1.0, 100, N).unwrap()
}

fn ps_world(u: &[f64], dominance: Dominance) -> Evaluated {
    let mut score = vec![0.0; N];
    let mut scratch = vec![0usize; pareto_scores_scratch_len(N, M).unwrap()];
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

fn bounds(global: f64) -> Bounds {
    Bounds {
        t_len: T_LEN,
        global: Some(global),
        tolerance: 0.0,
    }
}

#[test]
fn pareto_sensitivity_is_admissible_and_strict_variant_is_caught() {
    let pats = patterns();
    let (dbs, pairs) = model();
    eprintln!(
        "counting model: {} databases, {} neighbour pairs (checked in both directions)",
        dbs.len(),
        pairs.len()
    );
    let pairs = both_ways(&pairs);
    assert_eq!(dbs.len(), 220);
    let us: Vec<Vec<f64>> = dbs.iter().map(|d| utilities(d, &pats)).collect();
    for dominance in [Dominance::Textbook, Dominance::Weak] {
        let worlds: Vec<Evaluated> = us.iter().map(|u| ps_world(u, dominance)).collect();
        let rep = check_admissibility(&worlds, &pairs, bounds((N - 1) as f64));
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
        let rep: Report = check_admissibility(&broken, &pairs, bounds((N - 1) as f64));
        rep.print(&format!("BROKEN δ^PS with strict comparisons ({dominance:?})"));
        assert!(rep.violations() >= 100, "the checker must catch strict comparisons");
    }
}

#[test]
fn weighted_sum_sensitivity_is_admissible_and_broken_variants_are_caught() {
    let pats = patterns();
    let (dbs, pairs) = model();
    let pairs = both_ways(&pairs);
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
            check_admissibility(&worlds, &pairs, bounds(agg_global(w)))
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
