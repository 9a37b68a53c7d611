//! Exact privacy of private selection over an unknown domain (`dpmo::discover`), by enumeration.
//!
//! World: four items; a unit is any non-empty set of them (15 kinds, one event per item, or 26 kinds of
//! event multiplicities 0–2 on three items for the event-count top-k); a dataset is a multiset of at most
//! three units; neighbours add or remove one unit (D, D + u for every D of at most two units and every
//! kind u). The output distribution on each dataset is computed exactly from the plan's public parameters
//! (`common/discover_model.rs`), the contribution bounding included: a unit with more than L items keeps a
//! uniformly random L-subset, so the output law is the average over every unit's choices.
//!
//! For every neighbouring pair and both directions the hockey-stick divergence
//! Σ_o max(0, P_D(o) − e^ε P_D′(o)) must be at most δ — the definition of (ε, δ)-DP, checked on every event
//! at once. For DP-SIPS the outputs are the whole transcripts of the rounds. For the unknown-domain top-k
//! the loss allowed is the pay-what-you-get charge of each output, c(o) = ε₀(ℓ + 1) after ℓ items and ⊥,
//! ε after k items: Σ_o max(0, P_D(o) − e^{c(o)} P_D′(o)) ≤ δ.
//!
//! Every check is shown to fail on a broken variant of the mechanism it checks.

#[path = "common/discover_model.rs"]
mod model;

use dpmo::discover::{Bounds, PartitionPlan, PartitionSelection, TopKPlan, TopKScore};
use model::*;
use std::collections::HashMap;

/// Kinds of units with one event per item: every non-empty subset of the four items.
fn set_kinds() -> Vec<Unit> {
    (1..16u8).map(unit_of_mask).collect()
}

/// Kinds of units with 0–2 events on each of three items (not all zero).
fn multiplicity_kinds() -> Vec<Unit> {
    let mut out = Vec::new();
    for a in 0..3u8 {
        for b in 0..3u8 {
            for c in 0..3u8 {
                if a + b + c > 0 {
                    out.push([a, b, c, 0]);
                }
            }
        }
    }
    out
}

/// The result of a privacy check: neighbouring pairs, violations, and the worst divergence over δ.
#[derive(Debug)]
struct Outcome {
    pairs: usize,
    violations: usize,
    worst: f64,
}

/// Checks every neighbouring pair (D, D + u) of datasets of at most three units from `kinds`, with the
/// output law `dist` and the allowed loss `charge`.
fn check(kinds: &[Unit], delta: f64, dist: &dyn Fn(&[Unit]) -> Dist, charge: &dyn Fn(&[u64]) -> f64) -> Outcome {
    let mut cache: HashMap<Vec<usize>, Dist> = HashMap::new();
    let mut get = |d: &Vec<usize>| -> Dist {
        cache
            .entry(d.clone())
            .or_insert_with(|| dist(&d.iter().map(|&i| kinds[i]).collect::<Vec<_>>()))
            .clone()
    };
    let (mut pairs, mut violations, mut worst) = (0, 0, 0.0f64);
    for d in datasets(kinds.len(), 2) {
        let q = get(&d);
        for t in 0..kinds.len() {
            let mut e = d.clone();
            e.push(t);
            e.sort_unstable();
            let p = get(&e);
            for hs in [hockey(&p, &q, charge), hockey(&q, &p, charge)] {
                worst = worst.max(hs / delta);
                if hs > delta * (1.0 + 1e-9) + 1e-15 {
                    violations += 1;
                }
            }
            pairs += 1;
        }
    }
    Outcome {
        pairs,
        violations,
        worst,
    }
}

fn check_partitions(model: &Model, l: usize, epsilon: f64, delta: f64) -> Outcome {
    check(
        &set_kinds(),
        delta,
        &|units| mixture(units, l, 1, &|b| partition_dist(model, b)),
        &|_| epsilon,
    )
}

/// (ε, δ, L) settings: large δ and ε, where the thresholds sit among the small counts of the world and
/// the ε part of the guarantee is exercised, and a realistic δ, where the δ part is.
const SETTINGS: [(f64, f64, usize); 7] = [
    (1.0, 0.1, 1),
    (2.0, 0.05, 2),
    (0.5, 0.2, 3),
    (3.0, 0.01, 2),
    (4.0, 0.3, 1),
    (8.0, 0.3, 2),
    (1.0, 1e-6, 1),
];

fn mechanisms() -> [PartitionSelection; 6] {
    [
        PartitionSelection::TruncatedGeometric,
        PartitionSelection::Laplace,
        PartitionSelection::Gaussian,
        PartitionSelection::WeightedGaussian,
        PartitionSelection::Sips { rounds: 2 },
        PartitionSelection::Sips { rounds: 3 },
    ]
}

#[test]
fn every_partition_selection_is_dp_in_the_small_world() {
    let mut total = 0;
    for how in mechanisms() {
        for (eps, delta, l) in SETTINGS {
            let plan = PartitionPlan::new(how, eps, delta, l).unwrap();
            let o = check_partitions(&model_of(&plan, eps), l, eps, delta);
            eprintln!(
                "{how:?} ε={eps} δ={delta} L={l}: {} pairs, {} violations, worst divergence/δ {:.4}",
                o.pairs, o.violations, o.worst
            );
            assert_eq!(o.violations, 0, "{how:?} ε={eps} δ={delta} L={l}");
            assert!(o.pairs >= 2040);
            total += o.pairs;
        }
    }
    eprintln!("partition selection: {total} neighbouring pairs checked, no violation");
}

/// A broken model: the plan's model with one thing changed.
fn caught(label: &str, model: Model, l: usize, eps: f64, delta: f64) {
    let o = check_partitions(&model, l, eps, delta);
    eprintln!(
        "broken: {label}: {} violations of {} pairs (worst divergence/δ {:.3})",
        o.violations, o.pairs, o.worst
    );
    assert!(o.violations > 0, "{label} passes the check");
}

#[test]
fn the_check_catches_broken_partition_selections() {
    // Truncated geometric with the truncation one lower (δ_{k−1} > δ/L).
    let (eps, delta, l) = (1.0, 0.1, 1);
    let plan = PartitionPlan::new(PartitionSelection::TruncatedGeometric, eps, delta, l).unwrap();
    let k = plan.truncation().unwrap();
    caught(
        "truncated geometric, truncation k − 1",
        Model::Count {
            noise: Noise::laplace(eps, Some(k - 1)),
            threshold: k as i64,
        },
        l,
        eps,
        delta,
    );
    // Truncated geometric sized for δ instead of δ/L (L = 2): the plan for L = 1 at ε/L = 1 and the whole
    // δ. δ = 0.0675 is just above the top probability e^{−2}/C₂ = 0.06745 of the truncation k = 2, so the
    // broken per-item δ is nearly all of δ and two new items of one unit exceed it.
    let plan1 = PartitionPlan::new(PartitionSelection::TruncatedGeometric, 1.0, 0.0675, 1).unwrap();
    let k1 = plan1.truncation().unwrap();
    assert_eq!(k1, 2);
    assert_eq!(
        PartitionPlan::new(PartitionSelection::TruncatedGeometric, 2.0, 0.0675, 2)
            .unwrap()
            .truncation(),
        Some(3)
    );
    caught(
        "truncated geometric, δ not divided by L",
        Model::Count {
            noise: Noise::laplace(1.0, Some(k1)),
            threshold: k1 as i64 + 1,
        },
        2,
        2.0,
        0.0675,
    );
    // Laplace thresholding: threshold without its tail term, and noise of half the scale.
    let plan = PartitionPlan::new(PartitionSelection::Laplace, 1.0, 0.1, 1).unwrap();
    let t = plan.threshold(0).unwrap() as i64;
    caught(
        "Laplace, T = 1 (no ln(L/δ) term)",
        Model::Count {
            noise: Noise::laplace(1.0, None),
            threshold: 1,
        },
        1,
        1.0,
        0.1,
    );
    caught(
        "Laplace, scale halved",
        Model::Count {
            noise: Noise::laplace(2.0, None),
            threshold: t,
        },
        1,
        1.0,
        0.1,
    );
    // Gaussian thresholding: no tail term; σ halved.
    let plan = PartitionPlan::new(PartitionSelection::Gaussian, 2.0, 0.05, 2).unwrap();
    let v = plan.variance(0).unwrap().value();
    caught(
        "Gaussian, T = 1",
        Model::Count {
            noise: Noise::gaussian(v),
            threshold: 1,
        },
        2,
        2.0,
        0.05,
    );
    // σ halved is within the conversion's slack at (2, 0.05); at ε = 4, δ = 0.3 the threshold sits among
    // the world's counts and the halved noise is caught.
    let plan = PartitionPlan::new(PartitionSelection::Gaussian, 4.0, 0.3, 1).unwrap();
    caught(
        "Gaussian, σ halved",
        Model::Count {
            noise: Noise::gaussian(plan.variance(0).unwrap().value() / 4.0),
            threshold: plan.threshold(0).unwrap() as i64,
        },
        1,
        4.0,
        0.3,
    );
    // Weighted Gaussian: threshold at the weight of a lone unit (no tail term); σ halved.
    let plan = PartitionPlan::new(PartitionSelection::WeightedGaussian, 2.0, 0.05, 2).unwrap();
    let (grid, v, t) = (
        plan.grid().unwrap(),
        plan.variance(0).unwrap().value(),
        plan.threshold(0).unwrap() as i64,
    );
    caught(
        "weighted Gaussian, T = G (no tail term)",
        Model::Weighted {
            grid,
            noise: Noise::gaussian(v),
            threshold: grid as i64,
        },
        2,
        2.0,
        0.05,
    );
    caught(
        "weighted Gaussian, σ halved",
        Model::Weighted {
            grid,
            noise: Noise::gaussian(v / 4.0),
            threshold: t,
        },
        2,
        2.0,
        0.05,
    );
    // DP-SIPS: every round's threshold without its tail term.
    let plan = PartitionPlan::new(PartitionSelection::Sips { rounds: 2 }, 2.0, 0.05, 2).unwrap();
    let grid = plan.grid().unwrap();
    caught(
        "DP-SIPS, T_i = G (no tail term)",
        Model::Sips {
            grid,
            rounds: (0..2)
                .map(|r| (Noise::gaussian(plan.variance(r).unwrap().value()), grid as i64))
                .collect(),
        },
        2,
        2.0,
        0.05,
    );
}

/// Top-k settings: (score, k, k̄, ε, δ, L, C). With ε₀ = ε/k ≥ 4 and δ = 0.2 the ⊥ sits two counts
/// above h₍k̄₊₁₎, below the largest counts of the world, so items beat it and the ε part is exercised.
const TOP_K: [(TopKScore, usize, usize, f64, f64, usize, usize); 10] = [
    (TopKScore::Units, 2, 2, 8.0, 0.2, 2, 1),
    (TopKScore::Units, 1, 2, 4.0, 0.2, 2, 1),
    (TopKScore::Events, 2, 3, 8.0, 0.2, 2, 2),
    (TopKScore::Units, 1, 1, 2.0, 0.1, 1, 1),
    (TopKScore::Units, 2, 2, 2.0, 0.1, 2, 1),
    (TopKScore::Units, 2, 3, 3.0, 0.05, 2, 1),
    (TopKScore::Units, 3, 3, 1.0, 0.2, 3, 1),
    (TopKScore::Units, 2, 2, 1.0, 1e-6, 2, 1),
    (TopKScore::Events, 2, 2, 2.0, 0.1, 2, 2),
    (TopKScore::Events, 1, 2, 2.0, 0.1, 2, 1),
];

fn top_k_check(
    m: &TopKModel,
    score: TopKScore,
    l: usize,
    c: usize,
    delta: f64,
    charge: &dyn Fn(&[u64]) -> f64,
) -> Outcome {
    let (kinds, s) = match score {
        TopKScore::Units => (set_kinds(), Score::Units),
        _ => (multiplicity_kinds(), Score::Events),
    };
    check(
        &kinds,
        delta,
        &|units| mixture(units, l, c as u8, &|b| top_k_dist(m, s, b)),
        charge,
    )
}

fn plan_of(score: TopKScore, k: usize, k_bar: usize, eps: f64, delta: f64, l: usize, c: usize) -> TopKPlan {
    let bounds = Bounds {
        max_items: l,
        max_per_item: c,
        clamp: None,
    };
    TopKPlan::new(score, k, k_bar, eps, delta, &bounds).unwrap()
}

#[test]
fn unknown_domain_top_k_pays_what_it_gets() {
    let mut total = 0;
    for (score, k, k_bar, eps, delta, l, c) in TOP_K {
        let plan = plan_of(score, k, k_bar, eps, delta, l, c);
        let m = TopKModel::of(&plan, k, k_bar);
        let charge = |o: &[u64]| plan.charge(o.len(), o.len() < k).0;
        let o = top_k_check(&m, score, l, c, delta, &charge);
        eprintln!(
            "top-k {score:?} k={k} k̄={k_bar} ε={eps} δ={delta} L={l} C={c}: {} pairs, {} violations, worst/δ {:.4}",
            o.pairs, o.violations, o.worst
        );
        assert_eq!(o.violations, 0);
        total += o.pairs;
        // The whole run is (ε, δ)-DP too (every charge is at most ε).
        let o = top_k_check(&m, score, l, c, delta, &|_| eps);
        assert_eq!(o.violations, 0);
    }
    eprintln!("unknown-domain top-k: {total} neighbouring pairs checked, no violation");
}

#[test]
fn the_check_catches_broken_top_k() {
    let (score, k, k_bar, eps, delta, l, c) = (TopKScore::Units, 2, 2, 2.0, 0.1, 2, 1);
    let plan = plan_of(score, k, k_bar, eps, delta, l, c);
    let m = TopKModel::of(&plan, k, k_bar);
    let fair = |o: &[u64]| plan.charge(o.len(), o.len() < k).0;
    // Charging ε₀ ℓ when stopped (the ⊥ round unpaid).
    let unpaid = |o: &[u64]| {
        if o.len() < k {
            plan.epsilon_round() * o.len() as f64
        } else {
            eps
        }
    };
    let o = top_k_check(&m, score, l, c, delta, &unpaid);
    eprintln!("broken: top-k charging ε₀ℓ: {} violations", o.violations);
    assert!(o.violations > 0);
    // ⊥ without its logarithmic term (offset Δ∞ only).
    let low = TopKModel {
        bottom_offset: m.sensitivity,
        ..m
    };
    let o = top_k_check(&low, score, l, c, delta, &fair);
    eprintln!("broken: top-k with h_⊥ = h₍k̄₊₁₎ + Δ∞: {} violations", o.violations);
    assert!(o.violations > 0);
    // A per-round ε twice what is charged (where items beat ⊥, ε₀ = 4).
    let big = plan_of(score, k, k_bar, 8.0, 0.2, l, c);
    let sharp = TopKModel {
        epsilon_round: 2.0 * big.epsilon_round(),
        ..TopKModel::of(&big, k, k_bar)
    };
    let o = top_k_check(&sharp, score, l, c, 0.2, &|o: &[u64]| {
        big.charge(o.len(), o.len() < k).0
    });
    eprintln!("broken: top-k at 2ε₀ per round: {} violations", o.violations);
    assert!(o.violations > 0);
    // Event counts scored with the plan of C = 1 (Δ∞ = 1) while the bounding keeps C = 2 events.
    let wrong = plan_of(TopKScore::Events, 2, 3, 8.0, 0.2, 2, 1);
    let m = TopKModel::of(&wrong, 2, 3);
    let o = top_k_check(&m, TopKScore::Events, 2, 2, 0.2, &|o: &[u64]| {
        wrong.charge(o.len(), o.len() < 2).0
    });
    eprintln!(
        "broken: event-count top-k with Δ∞ = 1 for C = 2: {} violations",
        o.violations
    );
    assert!(o.violations > 0);
}
