//! Exact privacy of the output distributions in the counting model (docs/DESIGN.md §3, level 2).
//!
//! World: a database is a multiset of K = 3 records, each one of the 2^n = 8 patterns of 0/1 entries over
//! n = 3 candidates; neighbours replace one record. c_r(x) counts the records with entry r set. Utilities:
//! * `count`  u = c_r, global sensitivity 1 (constant local sensitivity);
//! * `square` u = c_r², local sensitivity 2c + 1 grows with the count (Δ = 5);
//! * `pairs`  u = C(c_r, 2), whose local sensitivity is 0 at c_r = 0 (zero-width dampening intervals, Δ = 2);
//! * `steep`  u = [0, 9, 10, 10][c_r]: flat near the top, a cliff two steps away (Δ = 9), the shape that
//!   makes plain local sensitivity (without the growth over distance) leak;
//! * `thirds` u = c_r / 3 in doubles: values and sensitivities that are not dyadic, so the exact mode's
//!   grid (utilities floored, δ rounded up) really rounds.
//!
//! Every mechanism is checked in both arithmetics: the exact mode's distribution is computed from the very
//! integer scores it selects from ([`exact_dampened_scores`]), the float mode's from its double scores.
//!
//! The local sensitivity at distance t, LS(x, t, r) (Local Dampening paper, Def. 3.1), is computed exactly by
//! breadth-first search over the neighbour graph; it is the smallest admissible δ (Lemma 3.4).
//! For every database x, every neighbour y and every candidate r we check |ln P_x(r) − ln P_y(r)| ≤ ε.

mod common;

use dpmo::dampen::{exact_dampened_scores, Dampening};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{exponential_probabilities, local_dampening_probabilities};
use std::collections::HashMap;

const N: usize = 3;
const K: usize = 3;
const PATTERNS: usize = 1 << N;
const T: usize = K + 2; // past the diameter of the neighbour graph: LS has converged to its maximum

type Db = [usize; K]; // sorted pattern ids

struct World {
    dbs: Vec<Db>,
    neighbours: Vec<Vec<usize>>,
}

fn world() -> World {
    let mut dbs = Vec::new();
    for a in 0..PATTERNS {
        for b in a..PATTERNS {
            for c in b..PATTERNS {
                dbs.push([a, b, c]);
            }
        }
    }
    let index: HashMap<Db, usize> = dbs.iter().enumerate().map(|(i, d)| (*d, i)).collect();
    let neighbours = dbs
        .iter()
        .map(|d| {
            let mut out = Vec::new();
            for k in 0..K {
                for p in 0..PATTERNS {
                    let mut e = *d;
                    e[k] = p;
                    e.sort();
                    if e != *d {
                        let j = index[&e];
                        if !out.contains(&j) {
                            out.push(j);
                        }
                    }
                }
            }
            out
        })
        .collect();
    World { dbs, neighbours }
}

fn counts(d: &Db) -> [u32; N] {
    let mut c = [0; N];
    for &p in d {
        for (r, cr) in c.iter_mut().enumerate() {
            *cr += ((p >> r) & 1) as u32;
        }
    }
    c
}

#[derive(Clone, Copy, Debug)]
enum Utility {
    Count,
    Square,
    Pairs,
    Steep,
    Thirds,
}

fn utility(kind: Utility, d: &Db) -> [f64; N] {
    counts(d).map(|c| {
        let c = c as f64;
        match kind {
            Utility::Count => c,
            Utility::Square => c * c,
            Utility::Pairs => c * (c - 1.0) / 2.0,
            Utility::Steep => [0.0, 9.0, 10.0, 10.0][c as usize],
            Utility::Thirds => c / 3.0,
        }
    })
}

/// LS(x, t, r) for t < T by dynamic programming over distance: LS(x, t) = max(LS(x, t−1), LS(y, t−1) for y ~ x).
fn local_sensitivity(w: &World, u: &[[f64; N]]) -> Vec<[[f64; N]; T]> {
    let mut ls = vec![[[0.0; N]; T]; w.dbs.len()];
    for (x, nb) in w.neighbours.iter().enumerate() {
        for &y in nb {
            for r in 0..N {
                ls[x][0][r] = f64::max(ls[x][0][r], (u[x][r] - u[y][r]).abs());
            }
        }
    }
    for t in 1..T {
        for x in 0..w.dbs.len() {
            let mut v = ls[x][t - 1];
            for &y in &w.neighbours[x] {
                for r in 0..N {
                    v[r] = v[r].max(ls[y][t - 1][r]);
                }
            }
            ls[x][t] = v;
        }
    }
    ls
}

fn global_sensitivity(w: &World, u: &[[f64; N]]) -> f64 {
    let mut g: f64 = 0.0;
    for (x, nb) in w.neighbours.iter().enumerate() {
        for &y in nb {
            for (a, b) in u[x].iter().zip(&u[y]) {
                g = g.max((a - b).abs());
            }
        }
    }
    g
}

/// How a mechanism's probabilities are computed for one database.
#[derive(Clone, Copy, Debug)]
enum Mechanism {
    Exponential,
    Local(Dampening),
    LocalPermuteAndFlip(Dampening),
    /// The exact mode: the exponential mechanism on the integer dampened scores it computes.
    ExactLocal(Dampening),
    /// The exact mode with permute-and-flip on its integer dampened scores.
    ExactLocalPermuteAndFlip(Dampening),
    /// Broken: the mechanism is run with twice the budget it claims.
    ExponentialDoubleEpsilon,
    /// Broken: δ(x, t, r) = LS(x, 0, r) for every t, i.e. plain local sensitivity without the growth over
    /// distance that admissibility condition 2 requires.
    LocalFlatSensitivity,
}

fn probabilities(m: Mechanism, u: &[f64; N], ls: &[[f64; N]; T], global: f64, eps: f64) -> [f64; N] {
    let mut table = vec![0.0; N * T];
    for r in 0..N {
        for t in 0..T {
            table[r * T + t] = match m {
                Mechanism::LocalFlatSensitivity => ls[0][r],
                _ => ls[t][r],
            };
        }
    }
    let delta = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: T,
        },
        global,
        T,
        N,
    )
    .unwrap();
    let mut p = [0.0; N];
    match m {
        Mechanism::Exponential => exponential_probabilities(u, global, eps, &mut p).unwrap(),
        Mechanism::ExponentialDoubleEpsilon => exponential_probabilities(u, global, 2.0 * eps, &mut p).unwrap(),
        Mechanism::Local(kind) => local_dampening_probabilities(u, &delta, kind, eps, &mut p).unwrap(),
        Mechanism::LocalFlatSensitivity => {
            local_dampening_probabilities(u, &delta, Dampening::Plain, eps, &mut p).unwrap()
        }
        Mechanism::LocalPermuteAndFlip(kind) => {
            let mut d = [0.0; N];
            dpmo::dampen::dampen_with(u, &delta, kind, &mut d).unwrap();
            p.copy_from_slice(&common::exact_permute_and_flip(&d, 1.0, eps));
        }
        Mechanism::ExactLocal(kind) | Mechanism::ExactLocalPermuteAndFlip(kind) => {
            let mut s = [0i128; N];
            let units = exact_dampened_scores(u, &delta, kind, &mut s).unwrap();
            let best = s.iter().copied().max().unwrap();
            // Gaps in units of sensitivity: exact integers, divided once.
            let d = s.map(|x| -((best - x) as f64 / units as f64));
            p.copy_from_slice(&match m {
                Mechanism::ExactLocal(_) => common::exact_exponential(&d, 1.0, eps),
                _ => common::exact_permute_and_flip(&d, 1.0, eps),
            });
        }
    }
    p
}

/// Returns (pairs checked, violations, worst log-ratio / ε).
fn check(m: Mechanism, kind: Utility, eps: f64) -> (usize, usize, f64) {
    let w = world();
    let u: Vec<[f64; N]> = w.dbs.iter().map(|d| utility(kind, d)).collect();
    let ls = local_sensitivity(&w, &u);
    let global = global_sensitivity(&w, &u);
    let probs: Vec<[f64; N]> = (0..w.dbs.len())
        .map(|x| probabilities(m, &u[x], &ls[x], global, eps))
        .collect();
    let (mut pairs, mut violations, mut worst) = (0, 0, 0.0f64);
    for (x, nb) in w.neighbours.iter().enumerate() {
        for &y in nb {
            pairs += 1;
            let ratio = (0..N)
                .map(|r| (probs[x][r].ln() - probs[y][r].ln()).abs())
                .fold(0.0, f64::max);
            worst = worst.max(ratio / eps);
            if ratio > eps * (1.0 + 1e-9) {
                violations += 1;
            }
        }
    }
    (pairs, violations, worst)
}

const EPSILONS: [f64; 3] = [0.1, 1.0, 3.0];

#[test]
fn counting_world_has_the_expected_shape_and_sensitivities() {
    let w = world();
    assert_eq!(w.dbs.len(), 120); // multisets of 3 out of 8 patterns
    for (kind, expected) in [
        (Utility::Count, 1.0),
        (Utility::Square, 5.0),
        (Utility::Pairs, 2.0),
        (Utility::Steep, 9.0),
    ] {
        let u: Vec<[f64; N]> = w.dbs.iter().map(|d| utility(kind, d)).collect();
        assert_eq!(global_sensitivity(&w, &u), expected, "{kind:?}");
    }
    // The pairs utility has zero local sensitivity at c_r = 0, so zero-width intervals really occur.
    let u: Vec<[f64; N]> = w.dbs.iter().map(|d| utility(Utility::Pairs, d)).collect();
    let ls = local_sensitivity(&w, &u);
    assert!(ls.iter().any(|l| l[0].contains(&0.0)));
}

#[test]
fn every_mechanism_is_epsilon_dp_in_the_counting_world() {
    let mechanisms = [
        Mechanism::Exponential,
        Mechanism::Local(Dampening::Plain),
        Mechanism::Local(Dampening::Shifted),
        Mechanism::LocalPermuteAndFlip(Dampening::Plain),
        Mechanism::LocalPermuteAndFlip(Dampening::Shifted),
        Mechanism::ExactLocal(Dampening::Plain),
        Mechanism::ExactLocal(Dampening::Shifted),
        Mechanism::ExactLocalPermuteAndFlip(Dampening::Plain),
        Mechanism::ExactLocalPermuteAndFlip(Dampening::Shifted),
    ];
    for m in mechanisms {
        for kind in [
            Utility::Count,
            Utility::Square,
            Utility::Pairs,
            Utility::Steep,
            Utility::Thirds,
        ] {
            for eps in EPSILONS {
                let (pairs, violations, worst) = check(m, kind, eps);
                eprintln!("{m:?} {kind:?} ε={eps}: {pairs} neighbour pairs, {violations} violations, worst ratio/ε {worst:.4}");
                assert_eq!(violations, 0, "{m:?} {kind:?} ε={eps}");
                assert!(pairs > 1000);
            }
        }
    }
}

#[test]
fn the_privacy_check_catches_broken_mechanisms() {
    let (_, v, worst) = check(Mechanism::ExponentialDoubleEpsilon, Utility::Count, 1.0);
    eprintln!("exponential mechanism with doubled ε: {v} violations (worst ratio/ε {worst:.3})");
    assert!(v > 0);
    let (_, v, worst) = check(Mechanism::LocalFlatSensitivity, Utility::Steep, 1.0);
    eprintln!("local dampening with δ = LS(x, 0) for every t: {v} violations (worst ratio/ε {worst:.3})");
    assert!(v > 0);
}
