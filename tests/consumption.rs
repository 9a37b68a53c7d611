//! What a call consumes from the caller's generator must not depend on the data (issue 20): every public
//! function that takes a generator draws one key from it and samples from a private stream. Neighbouring
//! inputs — 100 tied counts against the same with one count + 1, the case where a rejection sampler's
//! consumption differs most — must leave the caller's generator in the same state, for every entry point,
//! selector and arithmetic.

mod common;

use dpmo::dampen::Dampening;
use dpmo::multi::{select_privagg, select_privpareto, AggSensitivity, ParetoSensitivity};
use dpmo::select::{select, select_top_k, select_top_k_gumbel, Arithmetic, Noise, Selector};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{select_local_dampening, select_local_dampening_top_k, Dominance, GeneratorState};
use rand_core::SeedableRng;

const N: usize = 100;

fn neighbours() -> ([f64; N], [f64; N]) {
    let tied = [5.0; N];
    let mut plus = tied;
    plus[17] += 1.0;
    (tied, plus)
}

/// Runs `call` on both inputs from the same seed, for both generator kinds, and checks the caller's state
/// afterwards is identical.
fn same_state(label: &str, call: &mut dyn FnMut(&mut dpmo::Generator, &[f64])) {
    let (tied, plus) = neighbours();
    for seed in 0..4u8 {
        for state in [
            GeneratorState::chacha20([seed; 32]),
            GeneratorState::xoshiro256pp([seed; 32]),
        ] {
            let (mut a, mut b) = (state, state);
            a.with(|g| call(g, &tied)).unwrap();
            b.with(|g| call(g, &plus)).unwrap();
            assert_eq!(
                a, b,
                "{label}: the caller's generator advanced differently (seed {seed})"
            );
        }
    }
}

const SELECTORS: [Selector; 5] = [
    Selector::Exponential,
    Selector::PermuteAndFlip,
    Selector::NoisyMax(Noise::Gumbel),
    Selector::NoisyMax(Noise::Exponential),
    Selector::NoisyMax(Noise::Laplace),
];
const ARITHMETIC: [Arithmetic; 3] = [Arithmetic::Exact, Arithmetic::Isochronous, Arithmetic::Float];

fn runs(selector: Selector, a: Arithmetic) -> bool {
    a == Arithmetic::Float || selector != Selector::NoisyMax(Noise::Laplace)
}

#[test]
fn global_selectors_and_top_k() {
    for selector in SELECTORS {
        for a in ARITHMETIC.into_iter().filter(|&a| runs(selector, a)) {
            same_state(&format!("select {selector:?} {a:?}"), &mut |g, s| {
                let mut perm = [0usize; N];
                select(g, selector, s, 1.0, 1.0, &mut perm, a).unwrap();
            });
            same_state(&format!("top-3 {selector:?} {a:?}"), &mut |g, s| {
                let (mut out, mut w, mut ix, mut perm) = ([0usize; 3], [0.0; N], [0usize; N], [0usize; N]);
                select_top_k(g, selector, s, 1.0, 1.0, &mut out, &mut w, &mut ix, &mut perm, a).unwrap();
            });
        }
    }
    for a in ARITHMETIC {
        same_state(&format!("one-shot Gumbel top-3 {a:?}"), &mut |g, s| {
            let (mut out, mut w, mut ix) = ([0usize; 3], [0.0; N], [0usize; N]);
            select_top_k_gumbel(g, s, 1.0, 1.0, &mut out, &mut w, &mut ix, a).unwrap();
        });
    }
    // The named selectors are `select` with a fixed selector.
    same_state("select_exponential", &mut |g, s| {
        dpmo::select_exponential(g, s, 1.0, 1.0).unwrap();
    });
    same_state("select_permute_and_flip", &mut |g, s| {
        dpmo::select_permute_and_flip(g, s, 1.0, 1.0, &mut [0usize; N]).unwrap();
    });
    same_state("select_noisy_max", &mut |g, s| {
        dpmo::select_noisy_max(g, s, 1.0, 1.0, Noise::Gumbel, &mut []).unwrap();
    });
}

#[test]
fn local_dampening() {
    let table: Vec<f64> = (0..3 * N).map(|i| [0.5, 1.0, 0.25][i % 3]).collect();
    let per = [0.5; N];
    let tab = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: 3,
        },
        2.0,
        3,
        N,
    )
    .unwrap();
    let pc = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 2.0, 16, N).unwrap();
    for delta in [&tab, &pc] {
        for kind in [Dampening::Plain, Dampening::Shifted] {
            for selector in SELECTORS {
                for a in ARITHMETIC.into_iter().filter(|&a| runs(selector, a)) {
                    same_state(&format!("local {kind:?} {selector:?} {a:?}"), &mut |g, s| {
                        let (mut scores, mut perm) = ([0.0; 2 * N], [0usize; N]);
                        select_local_dampening(g, s, delta, kind, selector, 1.0, &mut scores, &mut perm, a).unwrap();
                    });
                    same_state(&format!("local top-2 {kind:?} {selector:?} {a:?}"), &mut |g, s| {
                        let (mut out, mut d, mut w) = ([0usize; 2], [0.0; 2 * N], [0.0; 2 * N]);
                        let (mut ix, mut perm) = ([0usize; N], [0usize; N]);
                        select_local_dampening_top_k(
                            g, s, delta, kind, selector, 1.0, &mut out, &mut d, &mut w, &mut ix, &mut perm, a,
                        )
                        .unwrap();
                    });
                }
            }
        }
    }
}

#[test]
fn multi_objective() {
    let per = [0.5; N];
    let deltas = [
        LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, 8, N).unwrap(),
        LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, 8, N).unwrap(),
    ];
    let two = |s: &[f64]| -> Vec<f64> { s.iter().zip(s.iter().rev()).flat_map(|(a, b)| [*a, *b]).collect() };
    for a in ARITHMETIC {
        for selector in [Selector::Exponential, Selector::PermuteAndFlip] {
            if a != Arithmetic::Isochronous {
                for sens in [
                    ParetoSensitivity::Global,
                    ParetoSensitivity::Local {
                        deltas: &deltas,
                        max_distance: 0,
                        dampening: Dampening::Plain,
                    },
                ] {
                    same_state(&format!("PrivPareto {selector:?} {a:?}"), &mut |g, s| {
                        let u = two(s);
                        let need = dpmo::multi::privpareto_scratch_len(N, 2).unwrap();
                        let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
                        let mut out = [0usize; 2];
                        select_privpareto(
                            g,
                            &u,
                            2,
                            Dominance::Textbook,
                            sens,
                            selector,
                            1.0,
                            &mut out,
                            &mut values,
                            &mut indices,
                            a,
                        )
                        .unwrap();
                    });
                }
            }
            let globals = [1.0, 1.0];
            for sens in [
                AggSensitivity::Global(&globals),
                AggSensitivity::Local {
                    deltas: &deltas,
                    max_distance: 0,
                    dampening: Dampening::Plain,
                },
            ] {
                same_state(&format!("PrivAgg {selector:?} {a:?}"), &mut |g, s| {
                    let u = two(s);
                    let need = dpmo::multi::privagg_scratch_len(N, 2).unwrap();
                    let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
                    let mut out = [0usize; 2];
                    select_privagg(
                        g,
                        &u,
                        &[1.0, 0.5],
                        sens,
                        selector,
                        1.0,
                        &mut out,
                        &mut values,
                        &mut indices,
                        a,
                    )
                    .unwrap();
                });
            }
        }
    }
}

/// Runs `call` on two neighbouring event sets — 100 units with 1 to 6 events on overlapping items, and
/// the same without unit 17 (all its events) — and on no event at all, from the same seed, for both
/// generator kinds: the caller's state afterwards must be identical.
fn same_state_events(label: &str, call: &mut dyn FnMut(&mut dpmo::Generator, &dpmo::discover::Events<'_>)) {
    let (mut units, mut items, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for u in 0..N as u64 {
        for e in 0..1 + u % 6 {
            units.push(u);
            items.push((u * 7 + e * 3) % 23);
            values.push(if e == 2 { f64::NAN } else { (u % 5) as f64 - 1.0 });
        }
    }
    let keep: Vec<usize> = (0..units.len()).filter(|&i| units[i] != 17).collect();
    let (u2, i2, v2): (Vec<u64>, Vec<u64>, Vec<f64>) = (
        keep.iter().map(|&i| units[i]).collect(),
        keep.iter().map(|&i| items[i]).collect(),
        keep.iter().map(|&i| values[i]).collect(),
    );
    let sets = [
        dpmo::discover::Events {
            units: &units,
            items: &items,
            values: Some(&values),
        },
        dpmo::discover::Events {
            units: &u2,
            items: &i2,
            values: Some(&v2),
        },
        dpmo::discover::Events {
            units: &[],
            items: &[],
            values: Some(&[]),
        },
    ];
    for seed in 0..4u8 {
        for state in [
            GeneratorState::chacha20([seed; 32]),
            GeneratorState::xoshiro256pp([seed; 32]),
        ] {
            let mut after = Vec::new();
            for ev in &sets {
                let mut s = state;
                s.with(|g| call(g, ev)).unwrap();
                after.push(s);
            }
            assert!(
                after.iter().all(|s| *s == after[0]),
                "{label}: the caller's generator advanced differently (seed {seed})"
            );
            // Exactly one key: four words.
            let mut reference = state;
            reference
                .with(|g| {
                    dpmo::rng::call_stream(g);
                })
                .unwrap();
            assert_eq!(after[0], reference, "{label}: not exactly one key (seed {seed})");
        }
    }
}

#[test]
fn discovery_and_unknown_domain_top_k() {
    use dpmo::discover::{
        bound, discover_partitions, discover_top_k, select_partitions, select_top_k_unknown, top_k_work_len, Bounds,
        Contribution, PartitionSelection, TopKScore,
    };
    let bounds = Bounds {
        max_items: 3,
        max_per_item: 2,
        clamp: Some((0.0, 4.0)),
    };
    let mechanisms = [
        PartitionSelection::TruncatedGeometric,
        PartitionSelection::Laplace,
        PartitionSelection::Gaussian,
        PartitionSelection::WeightedGaussian,
        PartitionSelection::Sips { rounds: 3 },
    ];
    let scratch_for = |ev: &dpmo::discover::Events<'_>| vec![Contribution::default(); ev.units.len()];
    same_state_events("bound", &mut |g, ev| {
        let mut s = scratch_for(ev);
        bound(g, ev, &bounds, &mut s).unwrap();
    });
    for how in mechanisms {
        same_state_events(&format!("discover_partitions {how:?}"), &mut |g, ev| {
            let (mut s, mut out) = (scratch_for(ev), vec![0u64; ev.units.len()]);
            discover_partitions(g, ev, &bounds, how, 1.0, 1e-6, &mut s, &mut out).unwrap();
        });
        // The selection alone, after a bounding that used another generator.
        same_state_events(&format!("select_partitions {how:?}"), &mut |g, ev| {
            let (mut s, mut out) = (scratch_for(ev), vec![0u64; ev.units.len()]);
            let mut other = dpmo::rng::call_stream(&mut rand_xoshiro::Xoshiro256PlusPlus::from_seed([9; 32]));
            let mut b = bound(&mut other, ev, &bounds, &mut s).unwrap();
            select_partitions(g, &mut b, how, 1.0, 1e-6, &mut out).unwrap();
        });
    }
    for score in [TopKScore::Units, TopKScore::Events, TopKScore::Sum] {
        let mut work = vec![0u64; top_k_work_len(8).unwrap()];
        same_state_events(&format!("discover_top_k {score:?}"), &mut |g, ev| {
            let (mut s, mut out) = (scratch_for(ev), [0u64; 3]);
            discover_top_k(g, ev, &bounds, score, 3, 8, 3.0, 1e-6, &mut s, &mut work, &mut out).unwrap();
        });
        same_state_events(&format!("select_top_k_unknown {score:?}"), &mut |g, ev| {
            let (mut s, mut out) = (scratch_for(ev), [0u64; 3]);
            let mut other = dpmo::rng::call_stream(&mut rand_xoshiro::Xoshiro256PlusPlus::from_seed([9; 32]));
            let mut b = bound(&mut other, ev, &bounds, &mut s).unwrap();
            select_top_k_unknown(g, &mut b, score, 3, 8, 3.0, 1e-6, &mut work, &mut out).unwrap();
        });
    }
}

#[test]
fn generalization_release() {
    use dpmo::generalize::{
        lattice_scratch_len, release, release_scratch_len, FrequentSet, Lattice, Objective, Parameters, ReleaseScratch,
        RiskWeights, Settings, UtilityMeasure,
    };
    // The city and age hierarchies of tests/generalize.rs; 400 records on their leaves, and the same
    // without the last one (a neighbour), and no record at all.
    let city: [u32; 8] = [0, 0, 0, 1, 1, 1, 2, 2];
    let age: [u32; 6] = [0, 0, 0, 1, 1, 2];
    let parents: [&[u32]; 2] = [&city, &age];
    let mut lscratch = vec![0u32; lattice_scratch_len(&parents).unwrap()];
    let l = Lattice::build(&parents, &mut lscratch).unwrap();
    let db: Vec<u32> = (0..400u32).flat_map(|i| [3 + i % 5, 3 + (i / 5) % 3]).collect();
    for frequent in [
        FrequentSet::Exact,
        FrequentSet::Private {
            epsilon: 9.0,
            delta: 0.01,
        },
        FrequentSet::Gaussian {
            epsilon: 9.0,
            delta: 0.01,
        },
    ] {
        for objective in [
            Objective::Lagrangian {
                lambda: 1.0,
                kappa: 2,
                phi_min: 0.5,
            },
            Objective::Threshold { c: 0.9, phi_max: 1.0 },
        ] {
            let settings = Settings {
                epsilon: 1.0,
                beta: 0.5,
                delta: 0.1,
                tau1: 0.5,
                t: 84,
                min_records: 100,
                objective,
                utility: UtilityMeasure::Reciprocal,
                frequent,
            };
            let p = Parameters::without_condition_10(&l, settings).unwrap();
            let n = release_scratch_len(&l);
            for a in [Arithmetic::Exact, Arithmetic::Float] {
                for seed in 0..4u8 {
                    for state in [
                        GeneratorState::chacha20([seed; 32]),
                        GeneratorState::xoshiro256pp([seed; 32]),
                    ] {
                        let mut after = Vec::new();
                        for records in [&db[..], &db[..db.len() - 2], &[]] {
                            let mut s = state;
                            let (mut counts, mut scores, mut cands) = (vec![0u64; n], vec![0.0; n], vec![0usize; n]);
                            let mut out = vec![0u32; db.len()];
                            s.with(|g| {
                                release(
                                    g,
                                    &l,
                                    records,
                                    RiskWeights::ModelII,
                                    &p,
                                    ReleaseScratch {
                                        counts: &mut counts,
                                        scores: &mut scores,
                                        candidates: &mut cands,
                                    },
                                    &mut out,
                                    a,
                                )
                                .unwrap()
                            })
                            .unwrap();
                            after.push(s);
                        }
                        assert!(
                            after.iter().all(|s| *s == after[0]),
                            "generalize {frequent:?} {objective:?} {a:?}: the caller's generator advanced differently"
                        );
                    }
                }
            }
        }
    }
}
