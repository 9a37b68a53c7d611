//! Top-k without replacement: sequential peeling at ε/k per round against the exact distribution of ordered
//! k-tuples, and one-shot Gumbel top-k against the same distribution (Durfee & Rogers 2019).

mod common;

use common::*;
use dpmo::dampen::Dampening;
use dpmo::select::{select_top_k, select_top_k_gumbel, Arithmetic, Noise, Selector};
use dpmo::sensitivity::{DeltaSource, LocalSensitivity};
use dpmo::{select_local_dampening_top_k, Error};

const DRAWS: usize = 200_000;

#[test]
fn peeling_and_one_shot_gumbel_match_the_exact_top_k_distribution() {
    let s = [0.0, 1.5, 3.0, 3.0, -1.0];
    let (delta, eps, k) = (1.0, 4.0, 2);
    let exact = exact_peeling(&s, k, &|sub| exact_exponential(sub, delta, eps / k as f64));
    let total: f64 = exact.iter().map(|e| e.1).sum();
    assert!((total - 1.0).abs() < 1e-12);
    let n = s.len();
    let (mut w, mut idx, mut perm, mut out) = (vec![0.0; n], vec![0; n], vec![0; n], vec![0; k]);
    let mut g = rng(11);
    for a in [Arithmetic::Exact, Arithmetic::Float] {
        assert_tuples_fit(
            &format!("{a:?} peeling with the exponential mechanism"),
            &exact,
            DRAWS,
            || {
                select_top_k(
                    &mut g,
                    Selector::Exponential,
                    &s,
                    delta,
                    eps,
                    &mut out,
                    &mut w,
                    &mut idx,
                    &mut perm,
                    a,
                )
                .unwrap();
                out.clone()
            },
        );
        assert_tuples_fit(&format!("{a:?} peeling with noisy-max Gumbel"), &exact, DRAWS, || {
            select_top_k(
                &mut g,
                Selector::NoisyMax(Noise::Gumbel),
                &s,
                delta,
                eps,
                &mut out,
                &mut w,
                &mut idx,
                &mut perm,
                a,
            )
            .unwrap();
            out.clone()
        });
        assert_tuples_fit(&format!("{a:?} one-shot Gumbel top-k"), &exact, DRAWS, || {
            select_top_k_gumbel(&mut g, &s, delta, eps, &mut out, &mut w, &mut idx, a).unwrap();
            out.clone()
        });
        let exact_pf = exact_peeling(&s, k, &|sub| exact_permute_and_flip(sub, delta, eps / k as f64));
        assert_tuples_fit(
            &format!("{a:?} peeling with permute-and-flip"),
            &exact_pf,
            DRAWS,
            || {
                select_top_k(
                    &mut g,
                    Selector::PermuteAndFlip,
                    &s,
                    delta,
                    eps,
                    &mut out,
                    &mut w,
                    &mut idx,
                    &mut perm,
                    a,
                )
                .unwrap();
                out.clone()
            },
        );
    }
}

#[test]
fn local_dampening_top_k_peels_the_dampened_scores() {
    let u = [6.5, 6.5, 0.0, 2.0];
    let table = [3.0, 5.0, 3.0, 5.0, 2.0, 2.0, 1.0, 4.0];
    let d = LocalSensitivity::new(
        DeltaSource::Table {
            values: &table,
            columns: 2,
        },
        8.0,
        4,
        4,
    )
    .unwrap();
    let mut damp = [0.0; 4];
    dpmo::dampen::dampen_shifted(&u, &d, &mut damp).unwrap();
    let exact = exact_peeling(&damp, 3, &|sub| exact_exponential(sub, 1.0, 3.0 / 3.0));
    let (mut a, mut w, mut idx, mut out) = ([0.0; 8], [0.0; 8], [0; 4], [0; 3]);
    let mut g = rng(12);
    for ar in [Arithmetic::Exact, Arithmetic::Float] {
        assert_tuples_fit(&format!("{ar:?} shifted local dampening top-3"), &exact, DRAWS, || {
            select_local_dampening_top_k(
                &mut g,
                &u,
                &d,
                Dampening::Shifted,
                Selector::Exponential,
                3.0,
                &mut out,
                &mut a,
                &mut w,
                &mut idx,
                &mut [],
                ar,
            )
            .unwrap();
            out.to_vec()
        });
    }
}

#[test]
fn top_k_refuses_bad_k_and_writes_nothing() {
    let s = [1.0, 2.0];
    let (mut w, mut idx, mut perm) = ([0.0; 2], [0; 2], [0; 2]);
    let mut g = rng(13);
    let mut out = [9usize; 3];
    assert_eq!(
        select_top_k(
            &mut g,
            Selector::Exponential,
            &s,
            1.0,
            1.0,
            &mut out,
            &mut w,
            &mut idx,
            &mut perm,
            Arithmetic::Exact
        ),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        select_top_k_gumbel(&mut g, &s, 1.0, 1.0, &mut out, &mut w, &mut idx, Arithmetic::Float),
        Err(Error::InvalidArgument)
    );
    let mut none: [usize; 0] = [];
    assert_eq!(
        select_top_k_gumbel(&mut g, &s, 1.0, 1.0, &mut none, &mut w, &mut idx, Arithmetic::Exact),
        Err(Error::InvalidArgument)
    );
    let mut out = [9usize; 2];
    assert_eq!(
        select_top_k_gumbel(&mut g, &s, 1.0, 1.0, &mut out, &mut w[..1], &mut idx, Arithmetic::Float),
        Err(Error::ScratchTooSmall)
    );
    assert_eq!(out, [9, 9]);
    // A NaN score is data, never a status: it counts as −f64::MAX (the public rule), so it comes last.
    select_top_k(
        &mut g,
        Selector::Exponential,
        &[1.0, f64::NAN],
        1.0,
        1.0,
        &mut out,
        &mut w,
        &mut idx,
        &mut perm,
        Arithmetic::Exact,
    )
    .unwrap();
    assert_eq!(out, [0, 1]);
    // k = n returns a permutation of all candidates.
    select_top_k(
        &mut g,
        Selector::PermuteAndFlip,
        &s,
        1.0,
        1.0,
        &mut out,
        &mut w,
        &mut idx,
        &mut perm,
        Arithmetic::Exact,
    )
    .unwrap();
    out.sort();
    assert_eq!(out, [0, 1]);
}
