//! Private data generalization (Fouad et al.): the lattice, the models, the parameters and the samplers
//! against hand-computed values on a VGH of the shape of the paper's Fig. 2 (city → state → ⊥), against an
//! independent reference implementation on random hierarchies, and the validation of every entry point.

mod common;
mod generalize_support;

use common::{assert_fits, chi_square_p_value, rng, ALPHA};
use dpmo::generalize::frequency::frequency_noise;
use dpmo::generalize::sampling::bernoulli;
use dpmo::generalize::{
    chain_product_scores, lagrangian_optimum, lattice_scratch_len, max_utility, min_beta, noisy_threshold, phi,
    public_weight, release, release_scratch_len, threshold_optimum, utility, ChainScores, FrequentSet, Hierarchy,
    Lattice, NoisyThreshold, Objective, Parameters, ReleaseScratch, RiskModel, RiskWeights, Settings, UtilityMeasure,
    MAX_CHAIN_PRODUCT,
};
use dpmo::select::Arithmetic;
use dpmo::Error;
use generalize_support::{Measure, Model, Obj, Vgh, Weights};
use rand_core::Rng;

// The city VGH (the shape of Fig. 2; the figure itself is not in the text): 0 = ⊥, 1 = Indiana,
// 2 = Illinois, 3 = West Lafayette, 4 = Lafayette, 5 = Indianapolis (Indiana), 6 = Chicago,
// 7 = Springfield (Illinois).
const CITY: [u32; 8] = [0, 0, 0, 1, 1, 1, 2, 2];
// Age: 0 = ⊥, 1 = under 40, 2 = 40 and over, 3 = 20s, 4 = 30s (under 40), 5 = 40s (40 and over).
const AGE: [u32; 6] = [0, 0, 0, 1, 1, 2];
// D: (West Lafayette, 30s), (Lafayette, 30s), (West Lafayette, 20s), (Chicago, 30s), (Indianapolis, 40s),
// (city missing = ⊥, 20s).
const DB: [u32; 12] = [3, 4, 4, 4, 3, 3, 6, 4, 5, 5, 0, 3];
const A: [u32; 2] = [3, 4];

fn with_city<T>(f: impl FnOnce(&Lattice<'_>) -> T) -> T {
    let parents: [&[u32]; 2] = [&CITY, &AGE];
    let mut scratch = vec![0u32; lattice_scratch_len(&parents).unwrap()];
    let lattice = Lattice::build(&parents, &mut scratch).unwrap();
    f(&lattice)
}

/// a⁺ for a = (West Lafayette, 30s), in the library's order (age fastest).
const A_PLUS: [[u32; 2]; 9] = [[3, 4], [3, 1], [3, 0], [1, 4], [1, 1], [1, 0], [0, 4], [0, 1], [0, 0]];

#[test]
fn chain_product_and_counts_on_the_city_vgh() {
    with_city(|l| {
        assert_eq!(l.attributes(), 2);
        assert_eq!(l.max_chain_product(), 9);
        assert_eq!(l.hierarchies()[0].leaf_count(0), Ok(5));
        assert_eq!(l.hierarchies()[0].leaf_count(1), Ok(3));
        assert_eq!(l.hierarchies()[1].leaf_count(2), Ok(1)); // "40 and over" has a single leaf
        assert_eq!(l.chain_product_len(&A), Ok(9));
        let mut out = [0u32; 18];
        assert_eq!(l.chain_product(&A, &mut out), Ok(9));
        assert_eq!(out.to_vec(), A_PLUS.concat());
        // ρ(x, D), counted by hand from the six records.
        let expected: [u64; 9] = [1, 2, 2, 2, 3, 4, 3, 5, 6];
        let mut counts = [0u64; 9];
        assert_eq!(l.count_chain_product(&A, &DB, &mut counts), Ok(9));
        assert_eq!(counts, expected);
        for (x, &e) in A_PLUS.iter().zip(&expected) {
            assert_eq!(l.count_generalized(x, &DB), Ok(e));
        }
        // ⪰: (Indiana, under 40) generalizes (Lafayette, 30s) but not (Chicago, 30s) nor (⊥, 20s).
        assert_eq!(l.generalizes(&[1, 1], &[4, 4]), Ok(true));
        assert_eq!(l.generalizes(&[1, 1], &[6, 4]), Ok(false));
        assert_eq!(l.generalizes(&[1, 1], &[0, 3]), Ok(false));
        assert_eq!(l.generalizes(&[0, 0], &[0, 3]), Ok(true));
        // a record already at ⊥ in one attribute: its chain there has one element.
        assert_eq!(l.chain_product_len(&[0, 3]), Ok(3));
    });
}

#[test]
fn models_on_the_city_vgh() {
    with_city(|l| {
        // u with d = 1/n: city WL 1, Indiana 1/3, ⊥ 1/5; age 30s 1, under 40 1/2, ⊥ 1/3.
        let u_rec = [
            2.0,
            1.5,
            4.0 / 3.0,
            4.0 / 3.0,
            5.0 / 6.0,
            2.0 / 3.0,
            1.2,
            0.7,
            8.0 / 15.0,
        ];
        // d = ln(n(⊥)/n): city ln 5, ln(5/3), 0; age ln 3, ln(3/2), 0.
        let (c, a) = ([5f64.ln(), (5.0f64 / 3.0).ln(), 0.0], [3f64.ln(), 1.5f64.ln(), 0.0]);
        // Model I with weights (2, 1): Φ = 2·[city ≠ ⊥] + 1·[age ≠ ⊥].
        let phi_1 = [3.0, 3.0, 2.0, 3.0, 3.0, 2.0, 1.0, 1.0, 0.0];
        let rho = [1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 3.0, 5.0, 6.0];
        for (j, x) in A_PLUS.iter().enumerate() {
            assert!((utility(l, x, UtilityMeasure::Reciprocal).unwrap() - u_rec[j]).abs() < 1e-15);
            let lr = c[j / 3] + a[j % 3];
            assert!((utility(l, x, UtilityMeasure::LogRatio).unwrap() - lr).abs() < 1e-15);
            assert_eq!(phi(l, x, RiskModel::ModelI(&[2.0, 1.0])).unwrap(), phi_1[j]);
            assert_eq!(phi(l, x, RiskModel::ModelII).unwrap(), 1.0);
        }
        assert_eq!(max_utility(l, UtilityMeasure::Reciprocal), 2.0);
        assert!((max_utility(l, UtilityMeasure::LogRatio) - 15f64.ln()).abs() < 1e-15);
        // r = Φ/ρ and f = λρ/max(Φ, φ_min) + u^κ with λ = 1, κ = 2, φ_min = 0.5 (Φ(⊥) = 0 is clamped).
        let mut counts = [0u64; 9];
        let (mut u, mut r, mut f) = ([0.0; 9], [0.0; 9], [0.0; 9]);
        let n = chain_product_scores(
            l,
            &A,
            &DB,
            RiskModel::ModelI(&[2.0, 1.0]),
            UtilityMeasure::Reciprocal,
            1.0,
            2,
            0.5,
            &mut counts,
            ChainScores {
                utility: &mut u,
                risk: &mut r,
                lagrangian: &mut f,
            },
        );
        assert_eq!(n, Ok(9));
        for j in 0..9 {
            assert!((u[j] - u_rec[j]).abs() < 1e-15);
            assert_eq!(r[j], phi_1[j] / rho[j]);
            let expect = rho[j] / phi_1[j].max(0.5) + u_rec[j] * u_rec[j];
            assert!((f[j] - expect).abs() < 1e-14, "f[{j}] = {} vs {expect}", f[j]);
        }
        assert_eq!(r, [3.0, 1.5, 1.0, 1.5, 1.0, 0.5, 1.0 / 3.0, 0.2, 0.0]);
        assert!((f[8] - (12.0 + 64.0 / 225.0)).abs() < 1e-14);
        // Θ without any record a generalizes: the risk is undefined.
        let mut sink = ([0.0; 9], [0.0; 9], [0.0; 9]);
        let err = chain_product_scores(
            l,
            &A,
            &[6, 4],
            RiskModel::ModelII,
            UtilityMeasure::Reciprocal,
            1.0,
            1,
            1.0,
            &mut counts,
            ChainScores {
                utility: &mut sink.0,
                risk: &mut sink.1,
                lagrangian: &mut sink.2,
            },
        );
        assert_eq!(err, Err(Error::InvalidArgument));
        assert_eq!(sink, ([0.0; 9], [0.0; 9], [0.0; 9]));
    });
}

#[test]
fn exact_optima_of_the_threshold_and_lagrangian_models() {
    with_city(|l| {
        let mut counts = [0u64; 9];
        let m1 = RiskModel::ModelI(&[2.0, 1.0]);
        let rec = UtilityMeasure::Reciprocal;
        // u ≥ 1.25: elements 0–3 (risks 3, 1.5, 1, 1.5) → 2 = (West Lafayette, ⊥).
        assert_eq!(threshold_optimum(l, &A, &DB, m1, rec, 1.25, &mut counts), Ok(Some(2)));
        // u ≥ 1.1 adds (⊥, 30s) with risk 1/3.
        assert_eq!(threshold_optimum(l, &A, &DB, m1, rec, 1.1, &mut counts), Ok(Some(6)));
        assert_eq!(threshold_optimum(l, &A, &DB, m1, rec, 3.0, &mut counts), Ok(None));
        // no constraint: ⊥ has risk 0 under Model I.
        assert_eq!(threshold_optimum(l, &A, &DB, m1, rec, 0.0, &mut counts), Ok(Some(8)));
        // Model II, u ≥ 1.25: risks 1/ρ = 1, 1/2, 1/2, 1/2 → ties broken by utility: 1 (u = 1.5).
        assert_eq!(
            threshold_optimum(l, &A, &DB, RiskModel::ModelII, rec, 1.25, &mut counts),
            Ok(Some(1))
        );
        // Lagrangian (λ = 1, κ = 2, φ_min = 0.5): f(⊥) = 12.28 is the largest.
        assert_eq!(lagrangian_optimum(l, &A, &DB, m1, rec, 1.0, 2, 0.5, &mut counts), Ok(8));
        // λ = 0: f = u, largest at a itself.
        assert_eq!(lagrangian_optimum(l, &A, &DB, m1, rec, 0.0, 1, 0.5, &mut counts), Ok(0));
        // Model II, λ = 0.1, κ = 3: f = 0.1ρ + u³: 0.1 + 8 at a itself beats the rest.
        assert_eq!(
            lagrangian_optimum(l, &A, &DB, RiskModel::ModelII, rec, 0.1, 3, 1.0, &mut counts),
            Ok(0)
        );
        assert_eq!(
            threshold_optimum(l, &A, &DB, m1, rec, f64::NAN, &mut counts),
            Err(Error::NonFiniteInput)
        );
        assert_eq!(
            threshold_optimum(l, &A, &DB, m1, rec, 1.0, &mut counts[..8]),
            Err(Error::LengthMismatch)
        );
    });
}

/// A random tree of n nodes (node 0 the root) with height ≤ `height`.
fn random_parents(r: &mut impl Rng, n: usize, height: usize) -> Vec<u32> {
    let mut parents = vec![0u32; n];
    let mut depth = vec![0usize; n];
    for v in 1..n {
        loop {
            let p = (r.next_u64() % v as u64) as usize;
            if depth[p] < height {
                parents[v] = p as u32;
                depth[v] = depth[p] + 1;
                break;
            }
        }
    }
    parents
}

#[test]
fn fast_counts_and_scores_match_the_reference_on_random_hierarchies() {
    let mut r = rng(11);
    let mut checked = 0;
    for trial in 0..300 {
        let k = 1 + (trial % 4);
        let parents: Vec<Vec<u32>> = (0..k)
            .map(|_| {
                let n = 1 + (r.next_u64() % 9) as usize;
                let height = 1 + (r.next_u64() % 3) as usize;
                random_parents(&mut r, n, height)
            })
            .collect();
        let refs: Vec<&[u32]> = parents.iter().map(|p| p.as_slice()).collect();
        let mut scratch = vec![0u32; lattice_scratch_len(&refs).unwrap()];
        let lattice = Lattice::build(&refs, &mut scratch).unwrap();
        let model = Model {
            vghs: parents.iter().map(|p| Vgh::new(p)).collect(),
            measure: Measure::LogRatio,
            weights: Weights::ModelII,
            obj: Obj::Lagrangian {
                lambda: 0.5,
                kappa: 2,
                phi_min: 1.0,
            },
            beta: 0.5,
            epsilon_prime: 1.0,
            t: 1,
            min_records: 1,
        };
        let m = 1 + (r.next_u64() % 12) as usize;
        let db: Vec<u32> = (0..m)
            .flat_map(|_| {
                parents
                    .iter()
                    .map(|p| (r.next_u64() % p.len() as u64) as u32)
                    .collect::<Vec<_>>()
            })
            .collect();
        let rows: Vec<Vec<u32>> = db.chunks(k).map(|c| c.to_vec()).collect();
        for a in &rows {
            let plus = model.chain_product(a);
            let mut out = vec![0u32; plus.len() * k];
            assert_eq!(lattice.chain_product(a, &mut out), Ok(plus.len()));
            assert_eq!(out, plus.concat());
            let mut counts = vec![0u64; plus.len()];
            lattice.count_chain_product(a, &db, &mut counts).unwrap();
            let naive: Vec<u64> = plus.iter().map(|x| model.rho(x, &rows)).collect();
            assert_eq!(counts, naive);
            let (mut u, mut rk, mut f) = (vec![0.0; plus.len()], vec![0.0; plus.len()], vec![0.0; plus.len()]);
            chain_product_scores(
                &lattice,
                a,
                &db,
                RiskModel::ModelII,
                UtilityMeasure::LogRatio,
                0.5,
                2,
                1.0,
                &mut counts,
                ChainScores {
                    utility: &mut u,
                    risk: &mut rk,
                    lagrangian: &mut f,
                },
            )
            .unwrap();
            for (j, x) in plus.iter().enumerate() {
                let ur = model.utility(x);
                assert!((u[j] - ur).abs() <= 1e-12 * (1.0 + ur));
                assert!((rk[j] - 1.0 / naive[j] as f64).abs() <= 1e-15);
                let fr = 0.5 * naive[j] as f64 + ur * ur;
                assert!((f[j] - fr).abs() <= 1e-12 * (1.0 + fr));
                assert_eq!(lattice.generalizes(x, a), Ok(true));
            }
            checked += plus.len();
        }
    }
    eprintln!("checked {checked} elements of chain products");
}

#[test]
fn hierarchy_and_lattice_validation() {
    let mut s = [7u32; 8];
    assert_eq!(Hierarchy::new(&[0, 0, 9], &mut s).err(), Some(Error::InvalidArgument));
    assert_eq!(Hierarchy::new(&[0, 1, 0], &mut s).err(), Some(Error::InvalidArgument)); // forest
    assert_eq!(Hierarchy::new(&[2, 0, 1], &mut s).err(), Some(Error::InvalidArgument)); // cycle, no root
    assert_eq!(
        Hierarchy::new(&[0, 3, 1, 2], &mut s).err(),
        Some(Error::InvalidArgument)
    ); // cycle + root
    assert_eq!(s, [7; 8], "nothing written on error");
    let empty: [&[u32]; 0] = [];
    let mut sc = [0u32; 64];
    assert_eq!(Lattice::build(&empty, &mut sc).err(), Some(Error::EmptyInput));
    let many: Vec<&[u32]> = vec![&[0u32][..]; 17];
    assert_eq!(Lattice::build(&many, &mut sc).err(), Some(Error::CapacityExceeded));
    assert_eq!(
        Lattice::build(&[&CITY[..], &AGE[..]], &mut sc[..13]).err(),
        Some(Error::ScratchTooSmall)
    );
    // N = 16^4 = 65536 is the largest chain product accepted; one more level is refused.
    let path16: Vec<u32> = (0..16u32).map(|v| v.saturating_sub(1)).collect();
    let four: Vec<&[u32]> = vec![&path16; 4];
    let mut big = vec![0u32; 64];
    assert_eq!(
        Lattice::build(&four, &mut big).unwrap().max_chain_product(),
        MAX_CHAIN_PRODUCT
    );
    let five: Vec<&[u32]> = vec![&path16[..2]; 1].into_iter().chain(four.iter().copied()).collect();
    let mut big5 = vec![0u32; 66];
    assert_eq!(Lattice::build(&five, &mut big5).err(), Some(Error::CapacityExceeded));
    with_city(|l| {
        assert_eq!(l.check_element(&[3]), Err(Error::LengthMismatch));
        assert_eq!(l.check_element(&[8, 0]), Err(Error::InvalidArgument));
        assert_eq!(l.check_records(&[3, 4, 4]), Err(Error::LengthMismatch));
        assert_eq!(l.check_records(&[3, 4, 4, 6]), Err(Error::InvalidArgument));
        assert_eq!(l.check_records(&[]), Ok(0));
        let mut out = [9u32; 17];
        assert_eq!(l.chain_product(&A, &mut out), Err(Error::LengthMismatch));
        assert_eq!(out, [9; 17]);
        let mut c = [9u64; 8];
        assert_eq!(l.count_chain_product(&A, &DB, &mut c), Err(Error::LengthMismatch));
        assert_eq!(c, [9; 8]);
        assert_eq!(l.count_generalized(&[0, 0], &[]), Ok(0));
    });
}

fn settings(t: u64) -> Settings {
    Settings {
        epsilon: 1.0,
        beta: 0.5,
        delta: 0.1,
        tau1: 0.5,
        t,
        min_records: 100,
        objective: Objective::Lagrangian {
            lambda: 1.0,
            kappa: 2,
            phi_min: 0.5,
        },
        utility: UtilityMeasure::Reciprocal,
        frequent: FrequentSet::Private {
            epsilon: 9.0,
            delta: 0.01,
        },
    }
}

#[test]
fn parameters_against_hand_computation() {
    with_city(|l| {
        let p = Parameters::without_condition_10(l, settings(2)).unwrap();
        // ν = k = 2 (d = 1/n), ν^κ = 4; η = 2(λ/φ + ν^κ/n₀) = 2(2 + 0.04) = 4.08.
        assert!((p.eta() / 4.08 - 1.0).abs() < 1e-11 && p.eta() >= 4.08);
        // ε′ = (1 + ln 0.5)/(3 · 4.08 · 0.5).
        let ep = (1.0 + 0.5f64.ln()) / (3.0 * 4.08 * 0.5);
        assert!((p.epsilon_prime() / ep - 1.0).abs() < 1e-11 && p.epsilon_prime() <= ep);
        // S = λ/φ + ν^κ/(n₀ + 1).
        assert!((p.score_range() / (2.0 + 4.0 / 101.0) - 1.0).abs() < 1e-11);
        // (10): 2/(β τ₁²)(ln(2/δ) + ln N) = 16 (ln 20 + ln 9) = 83.09; N e^{ε′ S}/((1−β)(1−τ₁)) = 39.88.
        let first = 16.0 * (20f64.ln() + 9f64.ln());
        let second = 9.0 * (ep * (2.0 + 4.0 / 101.0)).exp() / 0.25;
        assert!((p.condition_10(2).unwrap() / first.max(second) - 1.0).abs() < 1e-11);
        assert!(second > 39.8 && second < 40.0 && first > 83.0 && first < 83.2);
        assert_eq!(p.smallest_t(), 84);
        assert_eq!(Parameters::new(l, settings(83)).err(), Some(Error::InvalidArgument));
        let ok = Parameters::new(l, settings(84)).unwrap();
        // Private 𝓛′: s = ⌈9/9⌉ = 1, T = t − 1 + ⌈ln(9/0.01)⌉ = 83 + 7.
        assert_eq!(
            ok.noisy_threshold(),
            Some(NoisyThreshold {
                scale: 1,
                threshold: 90
            })
        );
        assert_eq!(
            noisy_threshold(9, 84, 9.0, 0.01),
            Ok(NoisyThreshold {
                scale: 1,
                threshold: 90
            })
        );
        let (e, d) = ok.guarantee().unwrap();
        assert_eq!(e, 10.0);
        assert!((0.11..0.11 + 1e-16).contains(&d));
        let exact = Settings {
            frequent: FrequentSet::Exact,
            ..settings(84)
        };
        assert_eq!(Parameters::new(l, exact).unwrap().guarantee(), None);

        // The threshold version: η = φ_u (n₀ + t)/(t(t − 1) n₀); with φ_u = 1, n₀ = 100, t = 50:
        // 150/(50 · 49 · 100); (10)'s second term grows with t, the first is 83.09 as above.
        let thr = Settings {
            objective: Objective::Threshold { c: 1.0, phi_max: 1.0 },
            t: 50,
            ..settings(2)
        };
        let pt = Parameters::without_condition_10(l, thr).unwrap();
        assert!((pt.eta() / (150.0 / (50.0 * 49.0 * 100.0)) - 1.0).abs() < 1e-11);
        assert_eq!(pt.smallest_t(), 84);
        assert!(Parameters::new(l, Settings { t: 84, ..thr }).is_ok());

        // Refusals.
        let bad = |f: &dyn Fn(&mut Settings)| {
            let mut s = settings(84);
            f(&mut s);
            Parameters::new(l, s).err()
        };
        assert_eq!(bad(&|s| s.epsilon = 0.0), Some(Error::InvalidEpsilon));
        assert_eq!(bad(&|s| s.beta = 0.3), Some(Error::InvalidArgument)); // below e^{−1}
        assert_eq!(bad(&|s| s.beta = 1.0), Some(Error::InvalidArgument));
        assert_eq!(bad(&|s| s.delta = 0.0), Some(Error::InvalidArgument));
        assert_eq!(bad(&|s| s.tau1 = 1.0), Some(Error::InvalidArgument));
        assert_eq!(bad(&|s| s.min_records = 0), Some(Error::InvalidArgument));
        assert_eq!(bad(&|s| s.t = 0), Some(Error::InvalidArgument));
        assert_eq!(
            bad(&|s| s.frequent = FrequentSet::Private {
                epsilon: -1.0,
                delta: 0.1
            }),
            Some(Error::InvalidEpsilon)
        );
        assert_eq!(
            bad(&|s| s.objective = Objective::Lagrangian {
                lambda: 1.0,
                kappa: 65,
                phi_min: 1.0
            }),
            Some(Error::InvalidArgument)
        );
        assert_eq!(
            bad(&|s| s.objective = Objective::Lagrangian {
                lambda: f64::NAN,
                kappa: 1,
                phi_min: 1.0
            }),
            Some(Error::NonFiniteInput)
        );
        assert_eq!(
            bad(&|s| s.objective = Objective::Threshold { c: 1.0, phi_max: 0.0 }),
            Some(Error::InvalidArgument)
        );
        assert_eq!(
            bad(&|s| s.objective = Objective::Threshold { c: 1.0, phi_max: 1.0 }),
            None,
            "t = 84 is admissible for the threshold version too"
        );
        let thr1 = Settings { t: 1, ..thr };
        assert_eq!(
            Parameters::without_condition_10(l, thr1).err(),
            Some(Error::InvalidArgument)
        );
        // The boundary β = e^{−ε}: ε′ = 0 (uniform choice) is accepted.
        let edge = Settings {
            beta: min_beta(1.0).unwrap(),
            ..settings(84)
        };
        let pe = Parameters::without_condition_10(l, edge).unwrap();
        assert!(pe.epsilon_prime() < 1e-15);
    });
}

#[test]
fn bernoulli_and_the_frequency_noise_match_their_distributions() {
    let mut r = rng(5);
    for &p in &[0.5, 0.3, 0.999, 1.0 / 3.0, 1e-3] {
        let n = 400_000;
        let hits = (0..n).filter(|_| bernoulli(&mut r, p)).count() as u64;
        assert_fits(&format!("bernoulli({p})"), &[hits, n - hits], &[p, 1.0 - p]);
    }
    // The checker catches a wrong probability.
    let hits = (0..400_000).filter(|_| bernoulli(&mut r, 0.3)).count() as u64;
    assert!(chi_square_p_value(&[hits, 400_000 - hits], &[0.31, 0.69]) < ALPHA);

    for &s in &[1u64, 3, 10] {
        let alpha = (-1.0 / s as f64).exp();
        let width = 12 * s as i64;
        let cells = (2 * width + 1) as usize;
        let pmf: Vec<f64> = (-width..=width)
            .map(|z| (1.0 - alpha) / (1.0 + alpha) * alpha.powi(z.abs() as i32))
            .collect();
        let mut probs = pmf.clone();
        probs.push(1.0 - pmf.iter().sum::<f64>()); // |z| > width
        let mut counts = vec![0u64; cells + 1];
        // the frequent set's noise: one draw per element index (ChaCha20 stream) under one key
        let key: [u8; 32] = core::array::from_fn(|i| i as u8 ^ s as u8);
        for index in 0..300_000 {
            let z = frequency_noise(&key, index, s).unwrap();
            let cell = if z.abs() > width { cells } else { (z + width) as usize };
            counts[cell] += 1;
        }
        assert_fits(&format!("discrete Laplace, scale {s}"), &counts, &probs);
        if s == 3 {
            // samples of scale 3 are rejected against the pmf of scale 4
            let a4 = (-0.25f64).exp();
            let mut p4: Vec<f64> = (-width..=width)
                .map(|z| (1.0 - a4) / (1.0 + a4) * a4.powi(z.abs() as i32))
                .collect();
            p4.push(1.0 - p4.iter().sum::<f64>());
            assert!(chi_square_p_value(&counts, &p4) < ALPHA);
        }
    }
}

#[test]
fn release_validates_before_drawing_and_writes_nothing_on_error() {
    with_city(|l| {
        let p = Parameters::without_condition_10(l, settings(2)).unwrap();
        let n = release_scratch_len(l);
        assert_eq!(n, 9);
        let (mut counts, mut scores, mut cands) = (vec![0u64; n], vec![0.0; n], vec![0usize; n]);
        let mut out = vec![77u32; DB.len()];
        let mut g = rng(3);
        let reference = g.clone();
        let mut run = |records: &[u32],
                       weights: RiskWeights<'_>,
                       n_scratch: usize,
                       out: &mut [u32],
                       g: &mut rand_xoshiro::Xoshiro256PlusPlus| {
            release(
                g,
                l,
                records,
                weights,
                &p,
                ReleaseScratch {
                    counts: &mut counts[..n_scratch],
                    scores: &mut scores[..n_scratch],
                    candidates: &mut cands[..n_scratch],
                },
                out,
                Arithmetic::Exact,
            )
        };
        assert_eq!(
            run(&DB, RiskWeights::ModelII, 8, &mut out, &mut g),
            Err(Error::ScratchTooSmall)
        );
        assert_eq!(
            run(&DB, RiskWeights::ModelII, 9, &mut out[..11], &mut g),
            Err(Error::LengthMismatch)
        );
        assert_eq!(
            run(&DB[..11], RiskWeights::ModelII, 9, &mut out, &mut g),
            Err(Error::LengthMismatch)
        );
        assert_eq!(
            run(&DB, RiskWeights::ModelI(&[1.0; 3]), 9, &mut out, &mut g),
            Err(Error::LengthMismatch)
        );
        assert_eq!(
            run(&DB, RiskWeights::ModelI(&[1.0, f64::INFINITY]), 9, &mut out, &mut g),
            Err(Error::NonFiniteInput)
        );
        assert_eq!(
            run(&DB, RiskWeights::ModelI(&[1.0, -1.0]), 9, &mut out, &mut g),
            Err(Error::InvalidArgument)
        );
        assert!(out.iter().all(|&v| v == 77), "nothing written on error");
        assert_eq!(
            g.clone().next_u64(),
            reference.clone().next_u64(),
            "no random draw on error"
        );
        // No record is a database like any other (nothing released), not a status: whether D is empty
        // must not show. It draws the call's one key, as every release does.
        let mut h = reference.clone();
        assert_eq!(run(&[], RiskWeights::ModelII, 9, &mut out, &mut h), Ok(0));
        // Parameters made for a lattice with another N are refused.
        let mut other_scratch = [0u32; 8];
        let other = Lattice::build(&[&CITY], &mut other_scratch).unwrap();
        let po = Parameters::without_condition_10(&other, settings(2)).unwrap();
        let r = release(
            &mut g,
            l,
            &DB,
            RiskWeights::ModelII,
            &po,
            ReleaseScratch {
                counts: &mut counts,
                scores: &mut scores,
                candidates: &mut cands,
            },
            &mut out,
            Arithmetic::Exact,
        );
        assert_eq!(r, Err(Error::InvalidArgument));
    });
}

/// A Model I release of `records` with `weights` under a generator seeded `seed`: its result, the rows it
/// wrote, and the generator's next word after the call (what a caller observes).
fn release_outcome(
    l: &Lattice<'_>,
    p: &Parameters,
    records: &[u32],
    weights: &[f64],
    seed: u64,
) -> (Result<usize, Error>, Vec<u32>, u64) {
    let n = release_scratch_len(l);
    let (mut counts, mut scores, mut cands) = (vec![0u64; n], vec![0.0; n], vec![0usize; n]);
    let mut out = vec![0u32; records.len()];
    let mut g = rng(seed);
    let r = release(
        &mut g,
        l,
        records,
        RiskWeights::ModelI(weights),
        p,
        ReleaseScratch {
            counts: &mut counts,
            scores: &mut scores,
            candidates: &mut cands,
        },
        &mut out,
        Arithmetic::Exact,
    );
    let released = *r.as_ref().unwrap_or(&0);
    (r, out[..released * 2].to_vec(), g.next_u64())
}

/// A node id out of range in a record is private data, not an argument error: it reads as the root ⊥ of
/// its hierarchy (`Hierarchy::node_or_root`). The release on a database holding such ids is the release on
/// the database with ⊥ in their place — status, rows and the generator's state after the call all equal,
/// under the same generator (so also the same law) — whatever the bad value (n_i, n_i + 1, u32::MAX). A
/// neighbour D + {bad record} therefore shows the same status as D. Broken variant: the old check
/// (`Lattice::check_records` in the release) fails the first assertion with `InvalidArgument`.
#[test]
fn record_ids_out_of_range_read_as_the_root() {
    with_city(|l| {
        let p = Parameters::without_condition_10(l, settings(2)).unwrap();
        let run = |records: &[u32], seed: u64| release_outcome(l, &p, records, &[2.0, 1.0], seed);
        assert_eq!(l.hierarchies()[1].node_or_root(6), 0);
        assert_eq!(l.hierarchies()[1].node_or_root(5), 5);
        for bad_value in [6u32, 7, 8, u32::MAX] {
            for (pos, as_root) in [(5usize, 0u32), (0, 0), (10, 0)] {
                let mut bad = DB;
                bad[pos] = bad_value;
                let mut rooted = DB;
                rooted[pos] = as_root;
                for seed in 0..20 {
                    let got = run(&bad, seed);
                    assert!(got.0.is_ok(), "an id out of range is no status: {:?}", got.0);
                    assert_eq!(got, run(&rooted, seed), "reads as ⊥ (value {bad_value} at {pos})");
                }
            }
        }
        // A neighbour: D and D + {a record with a bad id} both succeed, and the caller's generator advances
        // alike (one key).
        let mut plus = DB.to_vec();
        plus.extend_from_slice(&[3, 9]);
        for seed in 0..5 {
            let (a, b) = (run(&DB, seed), run(&plus, seed));
            assert!(a.0.is_ok() && b.0.is_ok());
            assert_eq!(a.2, b.2, "the same generator state after the call");
        }
        // The public functions that take records (no release, not private) still refuse the id.
        let mut bad = DB;
        bad[5] = 6;
        assert_eq!(l.count_generalized(&A, &bad), Err(Error::InvalidArgument));
    });
}

/// Per-record Model I weights are private too: one that is not finite and ≥ 0 reads as 0
/// (`public_weight`), so the release equals the one with 0 in its place (status, rows, generator), while
/// shared weights (k of them, public) are still refused. Broken variant: checking every weight (the old
/// `check_weights` over per-record weights) fails the first assertion.
#[test]
fn per_record_weights_out_of_range_read_as_zero() {
    with_city(|l| {
        let p = Parameters::without_condition_10(l, settings(2)).unwrap();
        let run = |w: &[f64], seed: u64| release_outcome(l, &p, &DB, w, seed);
        let base = [2.0, 1.0, 0.5, 3.0, 1.0, 1.0, 2.0, 2.0, 0.25, 4.0, 1.0, 1.0];
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -f64::MIN_POSITIVE] {
            for pos in [0usize, 5, 11] {
                let mut w = base;
                w[pos] = bad;
                let mut zero = base;
                zero[pos] = 0.0;
                for seed in 0..10 {
                    let got = run(&w, seed);
                    assert!(got.0.is_ok(), "a per-record weight is no status: {:?}", got.0);
                    assert_eq!(got, run(&zero, seed), "reads as 0 ({bad} at {pos})");
                }
            }
        }
        assert_eq!(public_weight(f64::NAN), 0.0);
        assert_eq!(public_weight(2.5), 2.5);
        // shared weights are public: still refused
        assert_eq!(run(&[1.0, f64::NAN], 0).0, Err(Error::NonFiniteInput));
        assert_eq!(run(&[1.0, -1.0], 0).0, Err(Error::InvalidArgument));
    });
}

#[test]
fn released_rows_are_sorted_frequent_generalizations() {
    with_city(|l| {
        // 400 records drawn from the leaves; t = 84 satisfies (10).
        let mut r = rng(8);
        let leaves_city = [3u32, 4, 5, 6, 7];
        let leaves_age = [3u32, 4, 5];
        let db: Vec<u32> = (0..400)
            .flat_map(|_| {
                [
                    leaves_city[(r.next_u64() % 5) as usize],
                    leaves_age[(r.next_u64() % 3) as usize],
                ]
            })
            .collect();
        let rows: Vec<&[u32]> = db.chunks(2).collect();
        for frequent in [FrequentSet::Exact, settings(84).frequent] {
            for objective in [settings(84).objective, Objective::Threshold { c: 0.9, phi_max: 1.0 }] {
                let p = Parameters::new(
                    l,
                    Settings {
                        frequent,
                        objective,
                        ..settings(84)
                    },
                )
                .unwrap();
                let n = release_scratch_len(l);
                let (mut counts, mut scores, mut cands) = (vec![0u64; n], vec![0.0; n], vec![0usize; n]);
                let mut out = vec![0u32; db.len()];
                let released = release(
                    &mut r,
                    l,
                    &db,
                    RiskWeights::ModelI(&[2.0, 1.0]),
                    &p,
                    ReleaseScratch {
                        counts: &mut counts,
                        scores: &mut scores,
                        candidates: &mut cands,
                    },
                    &mut out,
                    Arithmetic::Exact,
                )
                .unwrap();
                assert!(released > 100 && released < 300, "about half the records: {released}");
                let out_rows: Vec<&[u32]> = out[..released * 2].chunks(2).collect();
                assert!(out_rows.windows(2).all(|w| w[0] <= w[1]), "rows sorted");
                for x in &out_rows {
                    let rho = l.count_generalized(x, &db).unwrap();
                    assert!(rows.iter().any(|t| l.generalizes(x, t).unwrap()));
                    if frequent == FrequentSet::Exact {
                        assert!(rho >= 84, "exact 𝓛′: only t-frequent elements ({rho})");
                    }
                    if let Objective::Threshold { c, .. } = objective {
                        assert!(utility(l, x, UtilityMeasure::Reciprocal).unwrap() >= c);
                    }
                }
            }
        }
    });
}

/// P(Z ≥ m) for the discrete Gaussian of variance σ², summed term by term.
fn discrete_gaussian_tail(s2: f64, m: i64) -> f64 {
    let w = (40.0 * s2.sqrt()) as i64 + 5;
    let mass = |z: i64| (-((z * z) as f64) / (2.0 * s2)).exp();
    let total: f64 = (-w..=w).map(mass).sum();
    (m..=w).map(mass).sum::<f64>() / total
}

#[test]
fn the_gaussian_frequent_set_threshold_and_noise() {
    use dpmo::generalize::frequency::frequency_noise_gaussian;
    use dpmo::generalize::gaussian_threshold;
    // N = 9, t = 84, (ε_F, δ_F) = (9, 0.01): T = t − 1 + m with 9 P(Z ≥ m) ≤ δ_F/2 for the exact tail (the
    // bound the library uses is above it, so m may be one more than the exact least, never less).
    let g = gaussian_threshold(9, 84, 9.0, 0.01).unwrap();
    let s2 = g.variance.value();
    let m = (g.threshold - 83) as i64;
    assert!(9.0 * discrete_gaussian_tail(s2, m) <= 0.005, "σ² {s2}, m {m}");
    assert!(
        9.0 * discrete_gaussian_tail(s2, m - 2) > 0.005,
        "the threshold is not wastefully high"
    );
    // The variance meets (9, 0.005) through zCDP with Δ₂² = N = 9, and barely more noise than needed.
    let rho = 9.0 / (2.0 * s2);
    assert!(dpmo::discover::accounting::zcdp_delta(rho, 9.0) <= 0.005);
    assert!(dpmo::discover::accounting::zcdp_delta(rho * 1.01, 9.0) > 0.005);
    // On Adult's lattice (N = 2,160) at (ε_F, δ_F) = (1, 10⁻⁶) the threshold is 1,354 above t − 1, against
    // 46,426 for the Laplace frequent set.
    let adult = gaussian_threshold(2160, 1, 1.0, 1e-6).unwrap();
    assert_eq!(adult.threshold, 1354);
    assert_eq!(noisy_threshold(2160, 1, 1.0, 1e-6).unwrap().threshold, 46_426);
    // The errors.
    assert_eq!(gaussian_threshold(9, 84, 0.0, 0.01), Err(Error::InvalidEpsilon));
    assert_eq!(gaussian_threshold(9, 84, 1.0, 1.0), Err(Error::InvalidArgument));
    assert_eq!(gaussian_threshold(9, 84, 1.0, 1e-300), Err(Error::InvalidArgument));
    assert_eq!(gaussian_threshold(9, 0, 1.0, 0.01), Err(Error::InvalidArgument));
    assert_eq!(gaussian_threshold(0, 84, 1.0, 0.01), Err(Error::InvalidArgument));
    // The noise of element x is a function of (key, x), discrete Gaussian across elements.
    let key = [3u8; 32];
    let v = g.variance;
    assert_eq!(
        frequency_noise_gaussian(&key, 5, &v),
        frequency_noise_gaussian(&key, 5, &v)
    );
    let width = 8i64;
    let mut counts = vec![0u64; (2 * width + 3) as usize];
    for index in 0..200_000 {
        let z = frequency_noise_gaussian(&key, index, &v);
        let cell = if z < -width {
            0
        } else if z > width {
            (2 * width + 2) as usize
        } else {
            (z + width + 1) as usize
        };
        counts[cell] += 1;
    }
    let mut probs = vec![discrete_gaussian_tail(s2, width + 1)];
    for z in -width..=width {
        probs.push(discrete_gaussian_tail(s2, z) - discrete_gaussian_tail(s2, z + 1));
    }
    probs.push(discrete_gaussian_tail(s2, width + 1));
    assert_fits("the Gaussian frequent set's noise", &counts, &probs);
    // rejected against a variance 20 % larger
    let mut wrong = vec![discrete_gaussian_tail(1.2 * s2, width + 1)];
    for z in -width..=width {
        wrong.push(discrete_gaussian_tail(1.2 * s2, z) - discrete_gaussian_tail(1.2 * s2, z + 1));
    }
    wrong.push(discrete_gaussian_tail(1.2 * s2, width + 1));
    assert!(chi_square_p_value(&counts, &wrong) < ALPHA);
}
