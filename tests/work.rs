//! Every selecting call is bounded by a documented public function of its arguments (issue 22): the cases
//! that ran for seconds to minutes before are counted here in δ evaluations, not timed.
//!
//! * A δ given by a function (the C ABI's callbacks) is saturated at `MAX_WALKED_DISTANCE` = 2048: local
//!   dampening calls it at most 2 n · 2048 times (the public functions evaluate everything once before
//!   writing), PrivAgg at most 2 n m · 2048 times, local PrivPareto at most 8 n m T per round (about 2 n m T measured) (T its
//!   saturation distance, `privpareto_saturation`, at most `privpareto_distance_cap`).
//! * Local PrivPareto with automatic saturation and ε far below 10⁻⁶ (no stopping rule can help) walks
//!   exactly to the cap.
//!
//! Each bound is checked on a δ that is tiny everywhere (no candidate's interval is ever found before the
//! cap), so the walks are as long as they can be; the counts before the caps are given in the tests.

use dpmo::dampen::Dampening;
use dpmo::local::{local_dampening_probabilities, select_local_dampening};
use dpmo::multi::{privagg_scratch_len, privpareto_distance_cap, privpareto_saturation, privpareto_scratch_len};
use dpmo::sensitivity::{DeltaFunction, DeltaSource, LocalSensitivity, MAX_WALKED_DISTANCE};
use dpmo::{
    privagg_probabilities, privpareto_probabilities, select_privagg, select_privpareto, AggSensitivity, Arithmetic,
    Dominance, ParetoSensitivity, Selector,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cell::Cell;

/// δ(r, t) = 10⁻¹² · (1 + r mod 7), counting its calls.
struct Counting {
    calls: Cell<u64>,
}

impl Counting {
    fn new() -> Self {
        Counting { calls: Cell::new(0) }
    }

    fn take(&self) -> u64 {
        self.calls.replace(0)
    }
}

impl DeltaFunction for Counting {
    fn delta(&self, r: usize, _t: usize) -> f64 {
        self.calls.set(self.calls.get() + 1);
        1e-12 * (1 + r % 7) as f64
    }
}

/// n × m utilities spread over [0, 1000): no tiny δ closes an interval before the cap.
fn utilities(n: usize, m: usize) -> Vec<f64> {
    (0..n * m).map(|k| ((k * 7919) % 1000) as f64).collect()
}

#[test]
fn callbacks_are_saturated_at_the_walked_distance() {
    let f = Counting::new();
    let d = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, usize::MAX, 10).unwrap();
    assert_eq!(d.saturation(), MAX_WALKED_DISTANCE);
    assert_eq!(d.delta(0, MAX_WALKED_DISTANCE).unwrap(), 1.0);
    let small = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, 7, 10).unwrap();
    assert_eq!(small.saturation(), 7);
    // Other sources keep their T_max.
    let per = [0.5; 10];
    let p = LocalSensitivity::new(DeltaSource::PerCandidate(&per), 1.0, 1 << 20, 10).unwrap();
    assert_eq!(p.saturation(), 1 << 20);
}

/// Local dampening with a callback at n = 1000 (before: up to n · 2³² calls, more than 60 s).
#[test]
fn local_dampening_calls_a_callback_at_most_2_n_2048_times() {
    let n = 1000;
    let f = Counting::new();
    let d = LocalSensitivity::new(DeltaSource::Function(&f), 1.0, usize::MAX, n).unwrap();
    let u = utilities(n, 1);
    let bound = 2 * n as u64 * MAX_WALKED_DISTANCE as u64;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let (mut scores, mut perm) = (vec![0.0; 2 * n], vec![0usize; n]);
    for kind in [Dampening::Plain, Dampening::Shifted] {
        for arithmetic in [Arithmetic::Exact, Arithmetic::Float] {
            select_local_dampening(
                &mut rng,
                &u,
                &d,
                kind,
                Selector::Exponential,
                1e-9,
                &mut scores,
                &mut perm,
                arithmetic,
            )
            .unwrap();
            let calls = f.take();
            assert!(
                calls <= bound && calls >= n as u64,
                "{kind:?} {arithmetic:?}: {calls} calls"
            );
        }
        let mut p = vec![0.0; n];
        local_dampening_probabilities(&u, &d, kind, 1e-9, &mut p).unwrap();
        let calls = f.take();
        assert!(calls <= bound, "probabilities {kind:?}: {calls} calls");
    }
}

/// PrivAgg with m = 4 callbacks at n = 1000.
#[test]
fn privagg_calls_its_callbacks_at_most_2_n_m_2048_times() {
    let (n, m) = (1000, 4);
    let f = Counting::new();
    let deltas: Vec<LocalSensitivity<'_>> = (0..m)
        .map(|_| LocalSensitivity::new(DeltaSource::Function(&f), 1.0, usize::MAX, n).unwrap())
        .collect();
    let u = utilities(n, m);
    let w = [1.0, -2.0, 0.5, 3.0];
    let bound = 2 * (n * m * MAX_WALKED_DISTANCE) as u64;
    let need = privagg_scratch_len(n, m).unwrap();
    let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    for dampening in [Dampening::Plain, Dampening::Shifted] {
        let sens = AggSensitivity::Local {
            deltas: &deltas,
            max_distance: 0,
            dampening,
        };
        let mut out = [0usize; 2];
        select_privagg(
            &mut rng,
            &u,
            &w,
            sens,
            Selector::Exponential,
            1e-9,
            &mut out,
            &mut values,
            &mut indices,
            Arithmetic::Exact,
        )
        .unwrap();
        let calls = f.take();
        assert!(
            calls <= bound && calls >= (n * m) as u64,
            "{dampening:?}: {calls} calls"
        );
        let mut p = vec![0.0; n];
        privagg_probabilities(&u, &w, sens, 1e-9, &mut p, &mut values).unwrap();
        let calls = f.take();
        assert!(calls <= bound, "probabilities {dampening:?}: {calls} calls");
    }
}

/// Local PrivPareto with callbacks at n = 1000, m = 2, ε = 10⁻⁹ (the case: more than 12 s of CPU
/// for shifted dampening before, the walk heading for 2³² distances): the saturation distance is the cap,
/// and the callbacks are called at most 8 n m T times per round (2 n m T here).
#[test]
fn privpareto_walks_to_the_cap_and_no_further() {
    let (n, m) = (1000, 2);
    let f = Counting::new();
    let deltas: Vec<LocalSensitivity<'_>> = (0..m)
        .map(|_| LocalSensitivity::new(DeltaSource::Function(&f), 1.0, usize::MAX, n).unwrap())
        .collect();
    let u = utilities(n, m);
    let need = privpareto_scratch_len(n, m).unwrap();
    let (mut values, mut indices) = (vec![0.0; need.values], vec![0usize; need.indices]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for dampening in [Dampening::Plain, Dampening::Shifted] {
        for k in [1usize, 3] {
            let t = privpareto_saturation(n, m, k, 1e-9 / k as f64, dampening, 0);
            assert_eq!(t, privpareto_distance_cap(m, k));
            let sens = ParetoSensitivity::Local {
                deltas: &deltas,
                max_distance: 0,
                dampening,
            };
            let mut out = vec![0usize; k];
            select_privpareto(
                &mut rng,
                &u,
                m,
                Dominance::Textbook,
                sens,
                Selector::Exponential,
                1e-9,
                &mut out,
                &mut values,
                &mut indices,
                Arithmetic::Exact,
            )
            .unwrap();
            let calls = f.take();
            let bound = (8 * n * m * t * k) as u64;
            assert!(calls <= bound, "{dampening:?} k = {k}: {calls} calls > {bound}");
            assert!(
                calls >= (n * m * t) as u64 / 2,
                "{dampening:?} k = {k}: only {calls} calls"
            );
        }
        let mut p = vec![0.0; n];
        let sens = ParetoSensitivity::Local {
            deltas: &deltas,
            max_distance: 0,
            dampening,
        };
        privpareto_probabilities(
            &u,
            m,
            Dominance::Textbook,
            sens,
            1e-9,
            &mut p,
            &mut values,
            &mut indices,
        )
        .unwrap();
        let calls = f.take();
        let bound = (8 * n * m * privpareto_distance_cap(m, 1)) as u64;
        assert!(calls <= bound, "probabilities {dampening:?}: {calls} calls");
    }
}
