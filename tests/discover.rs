//! Private selection over an unknown domain (`dpmo::discover`): the library's draws against the exact
//! output distributions of `common/discover_model.rs` (chi-square at α = 10⁻⁶, each fit shown to reject a
//! wrong reference), contribution bounding (what one unit with 10⁴ events can move, uniform choices), and
//! what a caller can observe (argument errors draw and write nothing; the generator advances by a fixed 64
//! bytes whatever the data; outputs sorted).

mod common;
#[path = "common/discover_model.rs"]
mod model;

use common::{assert_fits, chi_square_p_value, rng, ALPHA};
use dpmo::discover::{
    bound, discover_partitions, discover_top_k, select_partitions_with_plan, select_top_k_with_plan, top_k_work_len,
    Bounds, Contribution, Events, ItemTotal, PartitionPlan, PartitionSelection, TopKPlan, TopKScore,
};
use dpmo::Error;
use model::*;
use rand_core::Rng;

/// Events of `units` (unit i has id 1000 + i and `u[j]` events on item j), with value `value` each.
fn events_of(units: &[Unit], value: f64) -> (Vec<u64>, Vec<u64>, Vec<f64>) {
    let (mut us, mut is, mut vs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, u) in units.iter().enumerate() {
        for (j, &n) in u.iter().enumerate() {
            for _ in 0..n {
                us.push(1000 + i as u64);
                is.push(ITEMS[j]);
                vs.push(value);
            }
        }
    }
    (us, is, vs)
}

/// Whether the draws `counts` reject the reference `probs` at α: either the chi-square p-value is below α,
/// or the rare cells (expected below 5, pooled) hold far more draws than the reference allows (the test
/// helper refuses such a sample outright).
fn rejected(counts: &[u64], probs: &[f64]) -> bool {
    let n: u64 = counts.iter().sum();
    let (obs, exp) = counts
        .iter()
        .zip(probs)
        .filter(|(_, &p)| p * (n as f64) < 5.0)
        .fold((0.0, 0.0), |(o, e), (&c, &p)| (o + c as f64, e + p * n as f64));
    if exp < 5.0 && obs > 20.0 + 10.0 * exp {
        return true;
    }
    chi_square_p_value(counts, probs) < ALPHA
}

/// Counts the outputs of `draw` against the outcomes of `exact` (an impossible output fails at once).
fn histogram(label: &str, exact: &Dist, draws: usize, mut draw: impl FnMut() -> Vec<u64>) -> (Vec<u64>, Vec<f64>) {
    let keys: Vec<&Vec<u64>> = exact.keys().collect();
    let mut counts = vec![0u64; keys.len()];
    for _ in 0..draws {
        let o = draw();
        let pos = keys
            .iter()
            .position(|k| **k == o)
            .unwrap_or_else(|| panic!("{label}: impossible output {o:?}"));
        counts[pos] += 1;
    }
    (counts, exact.values().copied().collect())
}

/// The dataset of the fits: units with more than L items (so the bounding's choices matter) and counts
/// around the thresholds of the settings below.
fn fit_units() -> Vec<Unit> {
    [0b0011u8, 0b0111, 0b0001, 0b1110, 0b0001, 0b0011]
        .iter()
        .map(|&m| unit_of_mask(m))
        .collect()
}

#[test]
fn partition_selection_samples_its_exact_distribution() {
    let units = fit_units();
    let (us, is, _) = events_of(&units, 0.0);
    let ev = Events {
        units: &us,
        items: &is,
        values: None,
    };
    let mut scratch = vec![Contribution::default(); us.len()];
    let mut out = vec![0u64; us.len()];
    let mut g = rng(41);
    for how in [
        PartitionSelection::TruncatedGeometric,
        PartitionSelection::Laplace,
        PartitionSelection::Gaussian,
        PartitionSelection::WeightedGaussian,
        PartitionSelection::Sips { rounds: 2 },
    ] {
        for (eps, delta, l) in [(4.0, 0.3, 1usize), (8.0, 0.3, 2)] {
            let plan = PartitionPlan::new(how, eps, delta, l).unwrap();
            let m = model_of(&plan, eps);
            let mut exact = mixture(&units, l, 1, &|b| partition_dist(&m, b));
            if let Model::Sips { .. } = m {
                // The library releases the union of the rounds.
                let mut union = Dist::new();
                for (t, p) in exact {
                    *union.entry(union_of(&t)).or_default() += p;
                }
                exact = union;
            }
            let bounds = Bounds {
                max_items: l,
                max_per_item: 1,
                clamp: None,
            };
            let label = format!("{how:?} ε={eps} δ={delta} L={l}");
            let (counts, probs) = histogram(&label, &exact, 100_000, || {
                let mut b = bound(&mut g, &ev, &bounds, &mut scratch).unwrap();
                let n = select_partitions_with_plan(&mut g, &mut b, &plan, &mut out).unwrap();
                out[..n].to_vec()
            });
            // The one-call form draws from the same law (a few draws: it recomputes the plan each time).
            for _ in 0..200 {
                let n = discover_partitions(&mut g, &ev, &bounds, how, eps, delta, &mut scratch, &mut out).unwrap();
                assert!(exact.contains_key(&out[..n]), "{label}: impossible output");
            }
            assert_fits(&label, &counts, &probs);
            // The same draws against the model with the threshold one higher: rejected.
            let off = match m {
                Model::Count { noise, threshold } => Model::Count {
                    noise,
                    threshold: threshold + 1,
                },
                Model::Weighted { grid, noise, threshold } => Model::Weighted {
                    grid,
                    noise,
                    threshold: threshold + grid as i64 / 2,
                },
                Model::Sips { grid, rounds } => Model::Sips {
                    grid,
                    rounds: rounds.into_iter().map(|(n, t)| (n, t + grid as i64 / 2)).collect(),
                },
            };
            let mut wrong = mixture(&units, l, 1, &|b| partition_dist(&off, b));
            if matches!(how, PartitionSelection::Sips { .. }) {
                let mut union = Dist::new();
                for (t, p) in wrong {
                    *union.entry(union_of(&t)).or_default() += p;
                }
                wrong = union;
            }
            let wrong: Vec<f64> = exact.keys().map(|k| wrong.get(k).copied().unwrap_or(0.0)).collect();
            assert!(
                rejected(&counts, &wrong),
                "{label}: a threshold off by one (half a unit's weight) passes"
            );
        }
    }
}

#[test]
fn top_k_samples_its_exact_distribution() {
    let units: Vec<Unit> = vec![[2, 1, 0, 1], [1, 2, 1, 0], [0, 1, 2, 2], [1, 0, 0, 1], [2, 2, 2, 2]];
    let mut g = rng(42);
    for (score, k, k_bar, eps, delta, l, c) in [
        (TopKScore::Units, 2, 2, 8.0, 0.2, 2, 1),
        (TopKScore::Units, 3, 3, 6.0, 0.1, 3, 1),
        (TopKScore::Events, 2, 3, 8.0, 0.2, 2, 2),
        (TopKScore::Sum, 2, 3, 8.0, 0.2, 2, 2),
    ] {
        let (us, is, vs) = events_of(&units, 1.0);
        let with_values = score == TopKScore::Sum;
        let ev = Events {
            units: &us,
            items: &is,
            values: with_values.then_some(&vs[..]),
        };
        let bounds = Bounds {
            max_items: l,
            max_per_item: c,
            clamp: with_values.then_some((0.0, 1.0)),
        };
        let plan = TopKPlan::new(score, k, k_bar, eps, delta, &bounds).unwrap();
        let mut m = TopKModel::of(&plan, k, k_bar);
        if with_values {
            m.scale = (1u64 << 20) as f64; // the value 1 is 2²⁰ units of the grid 2⁻²⁰
        }
        let s = if score == TopKScore::Units {
            Score::Units
        } else {
            Score::Events
        };
        let exact = mixture(&units, l, c as u8, &|b| top_k_dist(&m, s, b));
        let mut scratch = vec![Contribution::default(); us.len()];
        let mut work = vec![0u64; top_k_work_len(k_bar).unwrap()];
        let mut out = vec![0u64; k];
        let label = format!("top-k {score:?} k={k} k̄={k_bar} ε={eps} δ={delta} L={l} C={c}");
        let (counts, probs) = histogram(&label, &exact, 100_000, || {
            let mut b = bound(&mut g, &ev, &bounds, &mut scratch).unwrap();
            let r = select_top_k_with_plan(&mut g, &mut b, score, &plan, &mut work, &mut out).unwrap();
            assert_eq!(r.stopped, r.len < k);
            assert_eq!((r.epsilon, r.delta), plan.charge(r.len, r.stopped));
            out[..r.len].to_vec()
        });
        for _ in 0..200 {
            let r = discover_top_k(
                &mut g,
                &ev,
                &bounds,
                score,
                k,
                k_bar,
                eps,
                delta,
                &mut scratch,
                &mut work,
                &mut out,
            )
            .unwrap();
            assert!(exact.contains_key(&out[..r.len]), "{label}: impossible output");
        }
        assert_fits(&label, &counts, &probs);
        // Against ⊥ one count lower: rejected.
        let low = TopKModel {
            bottom_offset: m.bottom_offset - m.sensitivity,
            ..m
        };
        let wrong = mixture(&units, l, c as u8, &|b| top_k_dist(&low, s, b));
        let wrong: Vec<f64> = exact.keys().map(|k| wrong.get(k).copied().unwrap_or(0.0)).collect();
        assert!(rejected(&counts, &wrong), "{label}: ⊥ one count lower passes");
    }
}

#[test]
fn one_unit_with_ten_thousand_events_moves_little() {
    // The attack: one unit with 10⁴ events over every item and piled on one. It may add at most L
    // contributions, each of at most C events and C·M of value; everyone else's are unchanged.
    let mut g = rng(7);
    let (mut us, mut is, mut vs) = (Vec::new(), Vec::new(), Vec::new());
    for e in 0..3000u64 {
        us.push(e % 200);
        is.push((e * 7) % 20);
        vs.push((e % 13) as f64 - 3.0);
    }
    let (lo, hi) = (-2.0, 10.0);
    for (l, c) in [(1usize, 1usize), (3, 1), (2, 4)] {
        let bounds = Bounds {
            max_items: l,
            max_per_item: c,
            clamp: Some((lo, hi)),
        };
        let totals = |us: &[u64], is: &[u64], vs: &[f64], seed: u64| {
            let mut scratch = vec![Contribution::default(); us.len()];
            let mut r = rng(seed);
            let ev = Events {
                units: us,
                items: is,
                values: Some(vs),
            };
            let mut b = bound(&mut r, &ev, &bounds, &mut scratch).unwrap();
            let mut t = vec![ItemTotal::default(); us.len()];
            let n = b.totals(&mut t).unwrap();
            let grid = b.value_grid();
            t.truncate(n);
            (t, grid, b.contributions().to_vec())
        };
        let seed = g.next_u64();
        let (without, grid, cw) = totals(&us, &is, &vs, seed);
        let (mut au, mut ai, mut av) = (us.clone(), is.clone(), vs.clone());
        for e in 0..10_000u64 {
            au.push(1 << 40);
            ai.push(if e % 2 == 0 { e % 20 } else { 3 });
            av.push(1e6 * if e % 3 == 0 { -1.0 } else { 1.0 });
        }
        let (with, _, cwith) = totals(&au, &ai, &av, seed);
        let find = |t: &[ItemTotal], item: u64| t.iter().find(|x| x.item == item).copied().unwrap_or_default();
        let (mut touched, mut units_l1) = (0, 0);
        for item in 0..20u64 {
            let (a, b) = (find(&with, item), find(&without, item));
            assert!(a.units - b.units <= 1 && a.events - b.events <= c as u64);
            let ds = (a.sum - b.sum).unsigned_abs() as f64 * grid;
            assert!(ds <= c as f64 * 10.0, "sum moved by {ds}");
            touched += usize::from(a.units != b.units);
            units_l1 += a.units - b.units;
        }
        assert!(touched <= l && units_l1 as usize <= l && units_l1 >= 1);
        // The other units' contributions are the same, not merely alike in law.
        let mut others: Vec<Contribution> = cwith.into_iter().filter(|x| x.unit != 1 << 40).collect();
        let mut before = cw;
        others.sort_by_key(|x| (x.unit, x.item));
        before.sort_by_key(|x| (x.unit, x.item));
        assert_eq!(others, before);
    }
}

#[test]
fn bounding_keeps_uniform_subsets() {
    // One unit with 5 items and L = 2: each of the 10 pairs with probability 1/10.
    let mut g = rng(8);
    let bounds = Bounds {
        max_items: 2,
        max_per_item: 1,
        clamp: None,
    };
    let (us, is) = ([9u64; 5], [1u64, 2, 3, 4, 5]);
    let ev = Events {
        units: &us,
        items: &is,
        values: None,
    };
    let mut scratch = vec![Contribution::default(); 5];
    let mut pairs = vec![0u64; 10];
    let index = |a: u64, b: u64| {
        let mut k = 0;
        for x in 1..=5u64 {
            for y in x + 1..=5 {
                if (x, y) == (a, b) {
                    return k;
                }
                k += 1;
            }
        }
        unreachable!()
    };
    for _ in 0..50_000 {
        let b = bound(&mut g, &ev, &bounds, &mut scratch).unwrap();
        let mut kept: Vec<u64> = b.contributions().iter().map(|c| c.item).collect();
        kept.sort_unstable();
        assert!(b.contributions().iter().all(|c| c.tag == 2));
        pairs[index(kept[0], kept[1])] += 1;
    }
    assert_fits("L = 2 of 5 items", &pairs, &[0.1; 10]);
    // C = 1 of 4 events with values 0, 1, 2, 3: each value kept with probability 1/4.
    let bounds = Bounds {
        max_items: 1,
        max_per_item: 1,
        clamp: Some((0.0, 3.0)),
    };
    let (us, is, vs) = ([9u64; 4], [1u64; 4], [0.0, 1.0, 2.0, 3.0]);
    let ev = Events {
        units: &us,
        items: &is,
        values: Some(&vs),
    };
    let mut vals = vec![0u64; 4];
    for _ in 0..40_000 {
        let b = bound(&mut g, &ev, &bounds, &mut scratch).unwrap();
        let c = b.contributions()[0];
        assert_eq!(c.events, 1);
        vals[(c.sum as f64 * b.value_grid()) as usize] += 1;
    }
    assert_fits("C = 1 of 4 values", &vals, &[0.25; 4]);
    let p = chi_square_p_value(&vals, &[0.4, 0.2, 0.2, 0.2]);
    assert!(p < ALPHA, "a biased reference passes: p = {p}");
}

#[test]
fn argument_errors_draw_nothing_and_write_nothing() {
    let (us, is) = (vec![1u64, 2, 2, 3], vec![10u64, 10, 20, 30]);
    let ev = Events {
        units: &us,
        items: &is,
        values: None,
    };
    let ok = Bounds {
        max_items: 2,
        max_per_item: 1,
        clamp: None,
    };
    let how = PartitionSelection::Gaussian;
    let mut g = rng(9);
    let before = g.clone();
    let mut scratch = vec![Contribution::default(); 4];
    let mut out = vec![77u64; 4];
    let mut call = |ev: &Events<'_>, b: &Bounds, how, eps, delta, s: usize, o: usize| {
        discover_partitions(&mut g, ev, b, how, eps, delta, &mut scratch[..s], &mut out[..o])
    };
    assert_eq!(call(&ev, &ok, how, 0.0, 1e-6, 4, 4), Err(Error::InvalidEpsilon));
    assert_eq!(call(&ev, &ok, how, f64::NAN, 1e-6, 4, 4), Err(Error::InvalidEpsilon));
    for d in [0.0, 1.0, 1e-300, f64::NAN, -1e-6] {
        assert_eq!(
            call(&ev, &ok, how, 1.0, d, 4, 4),
            Err(Error::InvalidArgument),
            "δ = {d}"
        );
    }
    assert_eq!(
        call(&ev, &ok, PartitionSelection::Sips { rounds: 0 }, 1.0, 1e-6, 4, 4),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        call(&ev, &ok, PartitionSelection::Sips { rounds: 9 }, 1.0, 1e-6, 4, 4),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        call(&ev, &Bounds { max_items: 0, ..ok }, how, 1.0, 1e-6, 4, 4),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        call(&ev, &ok, PartitionSelection::Laplace, 1e-12, 1e-6, 4, 4),
        Err(Error::InvalidArgument)
    ); // L/ε beyond the discrete Laplace sampler
    assert_eq!(call(&ev, &ok, how, 1.0, 1e-6, 3, 4), Err(Error::ScratchTooSmall));
    assert_eq!(call(&ev, &ok, how, 1.0, 1e-6, 4, 3), Err(Error::LengthMismatch));
    let short = Events { units: &us[..3], ..ev };
    assert_eq!(call(&short, &ok, how, 1.0, 1e-6, 4, 4), Err(Error::LengthMismatch));
    assert_eq!(g, before);
    assert_eq!(out, vec![77u64; 4]);
    // Top-k.
    let mut work = vec![0u64; top_k_work_len(3).unwrap()];
    let mut top = |score, k, kb, eps, delta, b: &Bounds, w: usize, o: usize| {
        let mut out = vec![77u64; 4];
        let r = discover_top_k(
            &mut g,
            &ev,
            b,
            score,
            k,
            kb,
            eps,
            delta,
            &mut scratch,
            &mut work[..w],
            &mut out[..o],
        )
        .map(|_| ());
        assert_eq!(out, vec![77u64; 4]);
        r
    };
    let w = top_k_work_len(3).unwrap();
    assert_eq!(
        top(TopKScore::Units, 0, 3, 1.0, 1e-6, &ok, w, 4),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        top(TopKScore::Units, 4, 3, 1.0, 1e-6, &ok, w, 4),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        top(TopKScore::Units, 2, 3, 1.0, 1e-6, &ok, w - 1, 4),
        Err(Error::ScratchTooSmall)
    );
    assert_eq!(
        top(TopKScore::Units, 2, 3, 1.0, 1e-6, &ok, w, 1),
        Err(Error::LengthMismatch)
    );
    assert_eq!(
        top(TopKScore::Sum, 2, 3, 1.0, 1e-6, &ok, w, 4),
        Err(Error::InvalidArgument)
    ); // no clamp
    let negative = Bounds {
        clamp: Some((-1.0, 1.0)),
        ..ok
    };
    assert_eq!(
        top(TopKScore::Sum, 2, 3, 1.0, 1e-6, &negative, w, 4),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        top(TopKScore::Units, 2, 3, -1.0, 1e-6, &ok, w, 4),
        Err(Error::InvalidEpsilon)
    );
    assert_eq!(g, before);
    // A plan made for other bounds (or another score) than the contributions': refused, nothing drawn.
    let mut r = rng(99);
    let mut b = bound(&mut r, &ev, &ok, &mut scratch).unwrap();
    let after = r.clone();
    let other = PartitionPlan::new(PartitionSelection::Gaussian, 1.0, 1e-6, 3).unwrap();
    let mut out = vec![0u64; 4];
    assert_eq!(
        select_partitions_with_plan(&mut r, &mut b, &other, &mut out),
        Err(Error::InvalidArgument)
    );
    let bounds3 = Bounds { max_items: 3, ..ok };
    let plan3 = TopKPlan::new(TopKScore::Units, 1, 3, 1.0, 1e-6, &bounds3).unwrap();
    let plan_events = TopKPlan::new(TopKScore::Events, 1, 3, 1.0, 1e-6, &ok).unwrap();
    let mut work = vec![0u64; top_k_work_len(3).unwrap()];
    for plan in [&plan3, &plan_events] {
        assert_eq!(
            select_top_k_with_plan(&mut r, &mut b, TopKScore::Units, plan, &mut work, &mut out).map(|_| ()),
            Err(Error::InvalidArgument)
        );
    }
    assert_eq!(r, after);
}

#[test]
fn the_generator_advances_by_a_fixed_amount_whatever_the_data() {
    // Datasets of different sizes and shapes: the caller's generator advances by exactly one key, four
    // words (dpmo::rng::call_stream), as every selecting call's.
    for (n, items) in [(5usize, 2u64), (500, 50), (3000, 3000)] {
        let us: Vec<u64> = (0..n as u64).map(|e| e % 97).collect();
        let is: Vec<u64> = (0..n as u64).map(|e| (e * 31) % items).collect();
        let ev = Events {
            units: &us,
            items: &is,
            values: None,
        };
        let bounds = Bounds {
            max_items: 3,
            max_per_item: 1,
            clamp: None,
        };
        let mut scratch = vec![Contribution::default(); n];
        let mut out = vec![0u64; n];
        for how in [
            PartitionSelection::TruncatedGeometric,
            PartitionSelection::WeightedGaussian,
            PartitionSelection::Sips { rounds: 3 },
        ] {
            let mut g = rng(n as u64);
            let mut expect = g.clone();
            dpmo::rng::call_stream(&mut expect);
            let k = discover_partitions(&mut g, &ev, &bounds, how, 1.0, 1e-6, &mut scratch, &mut out).unwrap();
            assert_eq!(g, expect, "{how:?} n = {n}");
            assert!(out[..k].windows(2).all(|w| w[0] < w[1]), "output not sorted");
            assert!(out[..k].iter().all(|x| is.contains(x)), "an item nobody has");
        }
        let mut g = rng(1);
        let mut expect = g.clone();
        dpmo::rng::call_stream(&mut expect);
        let mut work = vec![0u64; top_k_work_len(10).unwrap()];
        discover_top_k(
            &mut g,
            &ev,
            &bounds,
            TopKScore::Units,
            5,
            10,
            1.0,
            1e-6,
            &mut scratch,
            &mut work,
            &mut out,
        )
        .unwrap();
        assert_eq!(g, expect, "top-k n = {n}");
    }
}

#[test]
fn totals_count_units_events_and_sums() {
    let mut g = rng(10);
    let (us, is, vs) = (
        [1u64, 1, 2, 2, 2, 3],
        [5u64, 5, 5, 6, 6, 6],
        [1.0, 2.0, 4.0, 8.0, f64::NAN, -3.0],
    );
    let ev = Events {
        units: &us,
        items: &is,
        values: Some(&vs),
    };
    let bounds = Bounds {
        max_items: 2,
        max_per_item: 2,
        clamp: Some((-1.0, 4.0)),
    };
    let mut scratch = vec![Contribution::default(); 6];
    let mut b = bound(&mut g, &ev, &bounds, &mut scratch).unwrap();
    let grid = b.value_grid();
    assert_eq!(grid, 2f64.powi(-18)); // M = 4 ≤ 2^(k + 20) with k = −18
    let mut t = vec![ItemTotal::default(); 6];
    assert_eq!(b.totals(&mut t[..5]), Err(Error::LengthMismatch));
    let n = b.totals(&mut t).unwrap();
    assert_eq!(n, 2);
    let s = |x: &ItemTotal| x.sum as f64 * grid;
    assert_eq!((t[0].item, t[0].units, t[0].events, s(&t[0])), (5, 2, 3, 7.0));
    // Item 6: unit 2's 8 (clamped to 4) and NaN (0), unit 3's −3 (clamped to −1).
    assert_eq!((t[1].item, t[1].units, t[1].events, s(&t[1])), (6, 2, 3, 3.0));
}

#[test]
fn the_thresholds_quoted_in_docs_discovery() {
    // docs/discovery.md: at ε = 1, δ = 10⁻⁶, an item is kept with
    // probability ≥ 1/2 from 15 units (truncated geometric and Laplace) and 25 (Gaussian) at L = 1; from
    // 1,314, 1,775 and 270 at L = 100.
    for (l, geometric, laplace, gaussian) in [(1usize, 15u64, 15u64, 25u64), (100, 1314, 1775, 270)] {
        let plan = |how| PartitionPlan::new(how, 1.0, 1e-6, l).unwrap();
        assert_eq!(
            plan(PartitionSelection::TruncatedGeometric).truncation().unwrap() + 1,
            geometric
        );
        assert_eq!(plan(PartitionSelection::Laplace).threshold(0).unwrap(), laplace);
        assert_eq!(plan(PartitionSelection::Gaussian).threshold(0).unwrap(), gaussian);
    }
}

/// The selections from statistics and scores aggregated elsewhere (what `dpmo.spark` runs after a distributed
/// bounding) make the same draws as the one-process forms: the same generator, the statistics of the same
/// bounded contributions in item order → the very same output, draw for draw. A weight computed from
/// another |S_u| (a unit's items counted per Spark task instead of per unit) changes the output.
#[test]
fn selections_from_aggregated_statistics_match_the_one_process_forms() {
    use dpmo::discover::{select_partitions_from_statistics, select_top_k_from_scores, weight};
    let units: Vec<Unit> = vec![[2, 1, 0, 1], [1, 2, 1, 0], [0, 1, 2, 2], [1, 0, 0, 1], [2, 2, 2, 2]];
    let (us, is, vs) = events_of(&units, 0.75);
    let mut scratch = vec![Contribution::default(); us.len()];
    let mut out = vec![0u64; us.len()];
    let mut out2 = vec![0u64; us.len()];
    let mut totals = vec![ItemTotal::default(); us.len()];
    let mut differs = 0;
    for how in [
        PartitionSelection::TruncatedGeometric,
        PartitionSelection::Laplace,
        PartitionSelection::Gaussian,
        PartitionSelection::WeightedGaussian,
    ] {
        let l = 2;
        let plan = PartitionPlan::new(how, 1.0, 0.3, l).unwrap();
        let bounds = Bounds {
            max_items: l,
            max_per_item: 1,
            clamp: None,
        };
        let ev = Events {
            units: &us,
            items: &is,
            values: None,
        };
        for seed in 0..300 {
            let mut b = bound(&mut rng(seed), &ev, &bounds, &mut scratch).unwrap();
            let kept: Vec<Contribution> = b.contributions().to_vec();
            let k = b.totals(&mut totals).unwrap();
            let items: Vec<u64> = totals[..k].iter().map(|t| t.item).collect();
            let stat = |per_unit: &dyn Fn(&Contribution) -> u64| -> Vec<u64> {
                items
                    .iter()
                    .map(|&i| kept.iter().filter(|c| c.item == i).map(per_unit).sum())
                    .collect()
            };
            let stats = match how {
                PartitionSelection::WeightedGaussian => stat(&|c| weight(plan.grid().unwrap(), u64::from(c.tag))),
                _ => stat(&|_| 1),
            };
            let (mut g1, mut g2) = (rng(1000 + seed), rng(1000 + seed));
            let n1 = select_partitions_with_plan(&mut g1, &mut b, &plan, &mut out).unwrap();
            let n2 = select_partitions_from_statistics(&mut g2, &plan, &items, &stats, &mut out2).unwrap();
            assert_eq!(out[..n1], out2[..n2], "{how:?} seed {seed}");
            assert_eq!(g1.next_u64(), g2.next_u64(), "one key drawn by both");
            if how == PartitionSelection::WeightedGaussian {
                // The broken variant: every unit weighted as if it kept one item (its share of one task).
                let broken = stat(&|_| weight(plan.grid().unwrap(), 1));
                let mut g3 = rng(1000 + seed);
                let n3 = select_partitions_from_statistics(&mut g3, &plan, &items, &broken, &mut out2).unwrap();
                differs += usize::from(out[..n1] != out2[..n3]);
            }
        }
    }
    assert!(differs > 0, "weights from the wrong |S_u| went unnoticed");
    // Top-k: the scores of the bounded contributions, in any order, give the same picks and charge.
    for score in [TopKScore::Units, TopKScore::Events, TopKScore::Sum] {
        let bounds = Bounds {
            max_items: 2,
            max_per_item: 2,
            clamp: (score == TopKScore::Sum).then_some((0.0, 1.0)),
        };
        let ev = Events {
            units: &us,
            items: &is,
            values: (score == TopKScore::Sum).then_some(&vs[..]),
        };
        let plan = TopKPlan::new(score, 2, 3, 2.0, 0.2, &bounds).unwrap();
        let mut work = vec![0u64; top_k_work_len(3).unwrap()];
        let (mut o1, mut o2) = ([0u64; 2], [0u64; 2]);
        for seed in 0..300 {
            let mut b = bound(&mut rng(seed), &ev, &bounds, &mut scratch).unwrap();
            let k = b.totals(&mut totals).unwrap();
            let mut items: Vec<u64> = totals[..k].iter().map(|t| t.item).collect();
            let mut scores: Vec<u128> = totals[..k]
                .iter()
                .map(|t| match score {
                    TopKScore::Units => u128::from(t.units),
                    TopKScore::Events => u128::from(t.events),
                    TopKScore::Sum => t.sum.max(0) as u128,
                })
                .collect();
            items.reverse();
            scores.reverse();
            let (mut g1, mut g2) = (rng(2000 + seed), rng(2000 + seed));
            let r1 = select_top_k_with_plan(&mut g1, &mut b, score, &plan, &mut work, &mut o1).unwrap();
            let r2 = select_top_k_from_scores(&mut g2, &plan, &items, &scores, &mut work, &mut o2).unwrap();
            assert_eq!(
                (r1, o1[..r1.len].to_vec()),
                (r2, o2[..r2.len].to_vec()),
                "{score:?} seed {seed}"
            );
            assert_eq!(g1.next_u64(), g2.next_u64());
        }
    }
}

#[test]
fn selections_from_aggregated_statistics_refuse_bad_arguments_and_draw_nothing() {
    use dpmo::discover::{select_partitions_from_statistics, select_top_k_from_scores, MAX_SCORE};
    let mut g = rng(7);
    let before = g.clone();
    let mut out = [0u64; 4];
    let plan = PartitionPlan::new(PartitionSelection::Laplace, 1.0, 1e-3, 1).unwrap();
    let sips = PartitionPlan::new(PartitionSelection::Sips { rounds: 2 }, 1.0, 1e-3, 1).unwrap();
    for (p, items, stats, want) in [
        (&sips, &[1u64, 2][..], &[1u64, 1][..], Error::Unsupported),
        (&plan, &[1, 2], &[1], Error::LengthMismatch),
        (&plan, &[1, 2, 3, 4, 5], &[1, 1, 1, 1, 1], Error::LengthMismatch),
        (&plan, &[1, 2], &[1, 0], Error::InvalidArgument),
        (&plan, &[3, 2, 3], &[1, 1, 1], Error::InvalidArgument),
        (&plan, &[2, 2], &[1, 1], Error::InvalidArgument),
    ] {
        assert_eq!(
            select_partitions_from_statistics(&mut g, p, items, stats, &mut out),
            Err(want)
        );
    }
    let bounds = Bounds {
        max_items: 1,
        max_per_item: 1,
        clamp: None,
    };
    let tk = TopKPlan::new(TopKScore::Units, 2, 2, 1.0, 1e-3, &bounds).unwrap();
    let mut work = vec![0u64; top_k_work_len(2).unwrap()];
    assert_eq!(
        select_top_k_from_scores(&mut g, &tk, &[1, 2], &[1], &mut work, &mut out).map(|_| ()),
        Err(Error::LengthMismatch)
    );
    assert_eq!(
        select_top_k_from_scores(&mut g, &tk, &[1], &[MAX_SCORE], &mut work, &mut out).map(|_| ()),
        Err(Error::InvalidArgument)
    );
    assert_eq!(
        select_top_k_from_scores(&mut g, &tk, &[1], &[1], &mut work[..5], &mut out).map(|_| ()),
        Err(Error::ScratchTooSmall)
    );
    assert_eq!(
        select_top_k_from_scores(&mut g, &tk, &[1], &[1], &mut work, &mut out[..1]).map(|_| ()),
        Err(Error::LengthMismatch)
    );
    assert_eq!(g, before);
    assert_eq!(out, [0; 4]);
}
