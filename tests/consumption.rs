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
