//! Exact privacy of Algorithm 3 (Fouad et al., Theorem 4), by enumeration of its output distribution.
//!
//! * **Tiny domains** (k = 2 and 3 attributes, heights ≤ 2, every database of up to 4 records over the
//!   leaves — up to 6 with heights 1, up to 3 with k = 3 — and the neighbours removing one record): the library's per-record distributions equal an
//!   independent reference; `release` samples fit the exact distribution of the released multiset
//!   (chi-square at α = 1e-6), with the paper's 𝓛′ and with the private 𝓛′; Claim 1 of the proof (the
//!   lower bound e^{−ε} on outputs of at most i₁ records) holds exactly with 𝓛′ fixed, and the checker
//!   catches β < e^{−ε}. Condition (10) cannot hold on databases this small (it needs t ≳ 60), so the
//!   profile of the whole mechanism is reported there, not asserted, except for the broken variants.
//! * **The regime of condition (10)** (one attribute, databases of 60–200 records of two values, t the
//!   smallest admissible): the output distribution is a product of multinomials, computed exactly. With
//!   𝓛′ fixed or released privately, the mass outside e^{±ε} stays below δ (resp. e^{±(ε + ε_F)} and
//!   δ + δ_F); the published algorithm (𝓛′ recomputed on each database), the algorithm without sampling
//!   (β → 0) and without the frequency restriction (the paper's Example 1) all exceed δ.
//!
//! The private 𝓛′ is checked with both noises, discrete Laplace ([`FrequentSet::Private`]) and discrete
//! Gaussian ([`FrequentSet::Gaussian`]): the same samples fits, Claim 1 and the regime of condition (10).

mod common;
mod generalize_support;

use common::{assert_fits, chi_square_p_value, rng, ALPHA};
use dpmo::generalize::{
    lattice_scratch_len, record_probabilities, release, release_scratch_len, FrequentNoise, FrequentSet, Lattice,
    NoisyThreshold, Objective, Parameters, ReleaseScratch, RiskWeights, Settings, UtilityMeasure,
};
use dpmo::select::Arithmetic;
use generalize_support::{
    gaussian_tail, laplace_tail, profile, Element, Key, Measure, Model, Obj, Profile, Vgh, Weights,
};

/// P(|ρ| + Z ≥ T): the probability that an element of `count` records enters the private 𝓛′.
fn enter(noise: FrequentNoise, count: u64) -> f64 {
    let gap = noise.threshold() as i64 - count as i64;
    match noise {
        FrequentNoise::Laplace(nt) => laplace_tail(gap, nt.scale),
        FrequentNoise::Gaussian(g) => gaussian_tail(gap, g.variance.value()),
    }
}

/// The same noise with the threshold moved by `by` (a broken variant).
fn shifted(noise: FrequentNoise, by: i64) -> FrequentNoise {
    match noise {
        FrequentNoise::Laplace(nt) => FrequentNoise::Laplace(NoisyThreshold {
            threshold: (nt.threshold as i64 + by) as u64,
            ..nt
        }),
        FrequentNoise::Gaussian(mut g) => {
            g.threshold = (g.threshold as i64 + by) as u64;
            FrequentNoise::Gaussian(g)
        }
    }
}
use std::collections::{HashMap, HashSet};

// k = 2: A = ⊥(0) → A1(1), A2(2); A1 → a(3), b(4) (height 2); B = ⊥(0) → x(1), y(2) (height 1). N = 6.
const A_H: [u32; 5] = [0, 0, 0, 1, 1];
const B_H: [u32; 3] = [0, 0, 0];
// k = 3 adds C = ⊥ → u, v. N = 12.
const C_H: [u32; 3] = [0, 0, 0];

fn leaves(parents: &[Vec<u32>]) -> Vec<Element> {
    let per: Vec<Vec<u32>> = parents.iter().map(|p| Vgh::new(p).leaf_ids()).collect();
    let mut out = vec![vec![]];
    for l in &per {
        out = out
            .iter()
            .flat_map(|prefix| {
                l.iter().map(move |&v| {
                    let mut e: Vec<u32> = prefix.clone();
                    e.push(v);
                    e
                })
            })
            .collect();
    }
    out
}

/// Every multiset of 1..=max_m values (as sorted lists).
fn databases(values: &[Element], max_m: usize) -> Vec<Vec<Element>> {
    fn go(values: &[Element], from: usize, left: usize, cur: &mut Vec<Element>, out: &mut Vec<Vec<Element>>) {
        if !cur.is_empty() {
            out.push(cur.clone());
        }
        if left == 0 {
            return;
        }
        for i in from..values.len() {
            cur.push(values[i].clone());
            go(values, i, left - 1, cur, out);
            cur.pop();
        }
    }
    let mut out = vec![];
    go(values, 0, max_m, &mut vec![], &mut out);
    out
}

/// (D, D₋ₐ₀) for every distinct value a₀ of D.
fn neighbours(db: &[Element]) -> Vec<(Element, Vec<Element>)> {
    let mut seen = HashSet::new();
    let mut out = vec![];
    for (i, a) in db.iter().enumerate() {
        if seen.insert(a.clone()) {
            let mut d = db.to_vec();
            d.remove(i);
            out.push((a.clone(), d));
        }
    }
    out
}

fn with_lattice<T>(parents: &[Vec<u32>], f: impl FnOnce(&Lattice<'_>) -> T) -> T {
    let refs: Vec<&[u32]> = parents.iter().map(|p| p.as_slice()).collect();
    let mut scratch = vec![0u32; lattice_scratch_len(&refs).unwrap()];
    let lattice = Lattice::build(&refs, &mut scratch).unwrap();
    f(&lattice)
}

#[derive(Clone, Copy, Debug)]
struct Config {
    epsilon: f64,
    beta: f64,
    t: u64,
    obj: Obj,
    measure: Measure,
    weights: Weights,
    min_records: u64,
    frequent: FrequentSet,
}

fn settings(c: &Config) -> Settings {
    Settings {
        epsilon: c.epsilon,
        beta: c.beta,
        delta: 0.1,
        tau1: 0.5,
        t: c.t,
        min_records: c.min_records,
        objective: match c.obj {
            Obj::Lagrangian { lambda, kappa, phi_min } => Objective::Lagrangian { lambda, kappa, phi_min },
            Obj::Threshold { c, phi_max } => Objective::Threshold { c, phi_max },
        },
        utility: match c.measure {
            Measure::Reciprocal => UtilityMeasure::Reciprocal,
            Measure::LogRatio => UtilityMeasure::LogRatio,
        },
        frequent: c.frequent,
    }
}

fn model(parents: &[Vec<u32>], c: &Config, p: &Parameters) -> Model {
    Model {
        vghs: parents.iter().map(|v| Vgh::new(v)).collect(),
        measure: c.measure,
        weights: c.weights,
        obj: c.obj,
        beta: c.beta,
        epsilon_prime: p.epsilon_prime(),
        t: c.t,
        min_records: c.min_records,
    }
}

fn lib_weights(w: &Weights, k: usize) -> Vec<f64> {
    match w {
        Weights::ModelI(v) => v[..k].to_vec(),
        Weights::ModelII => vec![],
    }
}

fn risk_weights(w: &[f64]) -> RiskWeights<'_> {
    if w.is_empty() {
        RiskWeights::ModelII
    } else {
        RiskWeights::ModelI(w)
    }
}

const LAGRANGIAN: Obj = Obj::Lagrangian {
    lambda: 4.0,
    kappa: 2,
    phi_min: 0.5,
};

/// (hierarchies, settings, largest database size enumerated).
fn tiny_configs() -> Vec<(Vec<Vec<u32>>, Config, usize)> {
    let two = vec![A_H.to_vec(), B_H.to_vec()];
    let three = vec![A_H.to_vec(), B_H.to_vec(), C_H.to_vec()];
    let base = Config {
        epsilon: 5.0,
        beta: 0.5,
        t: 2,
        obj: LAGRANGIAN,
        measure: Measure::Reciprocal,
        weights: Weights::ModelII,
        min_records: 1,
        frequent: FrequentSet::Exact,
    };
    // k = 2, both of height 1 (⊥ → two leaves each): small enough to enumerate every database of ≤ 6 records.
    let flat = vec![B_H.to_vec(), B_H.to_vec()];
    vec![
        (two.clone(), base, 4),
        (
            two.clone(),
            Config {
                obj: Obj::Threshold { c: 1.0, phi_max: 1.5 },
                weights: Weights::ModelI([1.0, 0.5, 0.25]),
                measure: Measure::LogRatio,
                t: 2,
                ..base
            },
            4,
        ),
        (
            two,
            Config {
                weights: Weights::ModelI([1.0, 0.5, 0.25]),
                t: 1,
                beta: 0.7,
                epsilon: 1.0,
                ..base
            },
            4,
        ),
        (three, Config { t: 2, ..base }, 3),
        (flat, Config { epsilon: 2.0, ..base }, 6),
    ]
}

#[test]
fn per_record_distributions_equal_the_reference() {
    let mut checked = 0;
    for (parents, c, _) in tiny_configs() {
        with_lattice(&parents, |l| {
            let p = Parameters::without_condition_10(l, settings(&c)).unwrap();
            let m = model(&parents, &c, &p);
            let w = lib_weights(&c.weights, parents.len());
            let n = release_scratch_len(l);
            let (mut counts, mut scores, mut cands, mut out) =
                (vec![0u64; n], vec![0.0; n], vec![0usize; n], vec![0.0; n]);
            // the paper's 𝓛′ and an arbitrary one (every element whose code is not a multiple of 3)
            let exact = |_: &[u32], cnt: u64| cnt >= c.t;
            let odd = |x: &[u32]| !m.code(x).is_multiple_of(3);
            for db in databases(&leaves(&parents), 4) {
                let flat: Vec<u32> = db.concat();
                for (j, a) in db.iter().enumerate() {
                    for variant in 0..2 {
                        let member = |x: &[u32], cnt: u64| if variant == 0 { exact(x, cnt) } else { odd(x) };
                        let mut lib_member = member;
                        let len = record_probabilities(
                            l,
                            &flat,
                            j,
                            risk_weights(&w),
                            &p,
                            &mut lib_member,
                            ReleaseScratch {
                                counts: &mut counts,
                                scores: &mut scores,
                                candidates: &mut cands,
                            },
                            &mut out,
                        )
                        .unwrap();
                        let reference = m.record_distribution(a, &db, &member);
                        let plus = m.chain_product(a);
                        assert_eq!(len, plus.len());
                        for (x, &q) in plus.iter().zip(&out[..len]) {
                            let r = reference.iter().find(|(y, _)| y == x).map_or(0.0, |e| e.1);
                            assert!((q - r).abs() < 1e-12, "{db:?} record {j} element {x:?}: {q} vs {r}");
                        }
                        checked += 1;
                    }
                }
            }
        });
    }
    eprintln!("{checked} per-record distributions equal the reference");
}

/// The exact distribution of the released multiset with the private 𝓛′: a mixture over the memberships
/// of the reachable elements, each independent with P[x ∈ 𝓛′] = P[Z ≥ T − |ρ(x, D)|].
fn private_distribution(m: &Model, db: &[Element], keep: f64, noise: FrequentNoise) -> HashMap<Key, f64> {
    let reach = m.reachable(db);
    assert!(reach.len() <= 14, "too many elements to enumerate 𝓛′: {}", reach.len());
    let probs: Vec<f64> = reach.iter().map(|x| enter(noise, m.rho(x, db))).collect();
    let mut total: HashMap<Key, f64> = HashMap::new();
    for mask in 0u32..(1 << reach.len()) {
        let mut w = 1.0;
        let mut set = HashSet::new();
        for (i, x) in reach.iter().enumerate() {
            if mask >> i & 1 == 1 {
                w *= probs[i];
                set.insert(x.clone());
            } else {
                w *= 1.0 - probs[i];
            }
        }
        if w == 0.0 {
            continue;
        }
        for (g, p) in m.output_distribution(db, keep, &|x, _| set.contains(x)) {
            *total.entry(g).or_default() += w * p;
        }
    }
    total
}

/// Samples `release` and fits the histogram of sorted outputs to `exact`; the same histogram must be
/// rejected against `wrong` (the distribution of a broken variant).
fn fit_release(
    label: &str,
    l: &Lattice<'_>,
    m: &Model,
    p: &Parameters,
    db: &[Element],
    exact: &HashMap<Key, f64>,
    wrong: &HashMap<Key, f64>,
) {
    let flat: Vec<u32> = db.concat();
    let k = m.k();
    let n = release_scratch_len(l);
    let (mut counts, mut scores, mut cands) = (vec![0u64; n], vec![0.0; n], vec![0usize; n]);
    let mut out = vec![0u32; flat.len()];
    let keys: Vec<&Key> = exact.keys().collect();
    let index: HashMap<&Key, usize> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let probs: Vec<f64> = keys.iter().map(|k| exact[*k]).collect();
    let mut hist = vec![0u64; keys.len()];
    let mut g = rng(21);
    for _ in 0..200_000 {
        let r = release(
            &mut g,
            l,
            &flat,
            RiskWeights::ModelII,
            p,
            ReleaseScratch {
                counts: &mut counts,
                scores: &mut scores,
                candidates: &mut cands,
            },
            &mut out,
            Arithmetic::Exact,
        )
        .unwrap();
        let codes: Vec<u32> = out[..r * k].chunks(k).map(|x| m.code(x)).collect();
        assert!(codes.windows(2).all(|w| w[0] <= w[1]), "rows sorted");
        let key = Key::of(&codes);
        let i = *index
            .get(&key)
            .unwrap_or_else(|| panic!("{label}: output {key:?} has probability 0"));
        hist[i] += 1;
    }
    assert_fits(label, &hist, &probs);
    let wrong: Vec<f64> = keys.iter().map(|k| wrong.get(*k).copied().unwrap_or(0.0)).collect();
    let p_wrong = chi_square_p_value(&hist, &wrong);
    eprintln!("{label}: against the broken variant, p-value {p_wrong:.3e}");
    assert!(p_wrong < ALPHA, "{label}: the checker must reject the broken variant");
}

#[test]
fn release_samples_fit_the_exact_output_distribution() {
    let parents = vec![A_H.to_vec(), B_H.to_vec()];
    // (a, x), (a, x), (b, x), (A2, y): four records, eleven reachable elements.
    let db: Vec<Element> = vec![vec![3, 1], vec![3, 1], vec![4, 1], vec![2, 2]];
    with_lattice(&parents, |l| {
        let c = Config {
            epsilon: 5.0,
            beta: 0.5,
            t: 2,
            obj: LAGRANGIAN,
            measure: Measure::Reciprocal,
            weights: Weights::ModelII,
            min_records: 1,
            frequent: FrequentSet::Exact,
        };
        let p = Parameters::without_condition_10(l, settings(&c)).unwrap();
        let m = model(&parents, &c, &p);
        let exact = m.output_distribution(&db, 1.0 - c.beta, &|_, cnt| cnt >= c.t);
        eprintln!("paper's 𝓛′: {} possible outputs", exact.len());
        // broken: records kept with probability 0.45 instead of 0.5
        let wrong = m.output_distribution(&db, 0.45, &|_, cnt| cnt >= c.t);
        fit_release("release, paper's 𝓛′", l, &m, &p, &db, &exact, &wrong);

        let cp = Config {
            frequent: FrequentSet::Private {
                epsilon: 6.0,
                delta: 0.25,
            },
            t: 1,
            ..c
        };
        let p = Parameters::without_condition_10(l, settings(&cp)).unwrap();
        let nt = p.noisy_threshold().unwrap();
        assert_eq!(nt, NoisyThreshold { scale: 1, threshold: 4 });
        let m = model(&parents, &cp, &p);
        let noise = p.frequent_noise().unwrap();
        let exact = private_distribution(&m, &db, 1.0 - cp.beta, noise);
        eprintln!("private 𝓛′: {} possible outputs", exact.len());
        // broken: the noise threshold one lower (T = 3 instead of 4)
        let wrong = private_distribution(&m, &db, 1.0 - cp.beta, shifted(noise, -1));
        fit_release("release, private 𝓛′", l, &m, &p, &db, &exact, &wrong);

        // The Gaussian 𝓛′ (σ² ≈ 1.5, T = 4 here): the same fit, and its threshold one lower rejected.
        let cg = Config {
            frequent: FrequentSet::Gaussian {
                epsilon: 6.0,
                delta: 0.25,
            },
            ..cp
        };
        let p = Parameters::without_condition_10(l, settings(&cg)).unwrap();
        let noise = p.frequent_noise().unwrap();
        let FrequentNoise::Gaussian(g) = noise else {
            panic!("a Gaussian frequent set has Gaussian noise")
        };
        eprintln!("Gaussian 𝓛′: σ² = {:.4}, T = {}", g.variance.value(), g.threshold);
        let m = model(&parents, &cg, &p);
        let exact = private_distribution(&m, &db, 1.0 - cg.beta, noise);
        let wrong = private_distribution(&m, &db, 1.0 - cg.beta, shifted(noise, -1));
        fit_release("release, Gaussian 𝓛′", l, &m, &p, &db, &exact, &wrong);
    });
}

/// (D, D₋ₐ₀) output distributions of one variant of the mechanism.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Variant {
    /// The paper: 𝓛′ = t-frequent elements, recomputed on each database.
    Published,
    /// 𝓛′ = t-frequent elements of D, used on D₋ₐ₀ too (the reading under which the proof works).
    Fixed,
    /// The private 𝓛′ (noisy counts).
    Private,
    /// No sampling: every record is released (β → 0), 𝓛′ fixed.
    NoSampling,
    /// No frequency restriction: 𝓛′ = 𝓛 (the paper's Example 1).
    NoFrequency,
}

fn pair(m: &Model, db: &[Element], nb: &[Element], v: Variant, keep: f64, nt: Option<FrequentNoise>) -> Profile2 {
    let t = m.t;
    let fixed: HashSet<Element> = m.reachable(db).into_iter().filter(|x| m.rho(x, db) >= t).collect();
    let dist = |d: &[Element]| match v {
        Variant::Published => m.output_distribution(d, keep, &|_, c| c >= t),
        Variant::Fixed => m.output_distribution(d, keep, &|x, _| fixed.contains(x)),
        Variant::Private => private_distribution(m, d, keep, nt.unwrap()),
        Variant::NoSampling => m.output_distribution(d, 1.0, &|x, _| fixed.contains(x)),
        Variant::NoFrequency => m.output_distribution(d, keep, &|_, _| true),
    };
    (dist(db), dist(nb))
}

type Profile2 = (HashMap<Key, f64>, HashMap<Key, f64>);

/// Claim 1 of Theorem 4's proof: Pr[𝒜(D) = G] ≥ e^{−ε} Pr[𝒜(D₋ₐ₀) = G] for every output of at most
/// i₁ = (ε + ln β) m̄/(2ε′η) released records, with 𝓛′ the same on both databases. Returns the number of
/// outputs checked and of violations.
fn claim_1(p: &HashMap<Key, f64>, q: &HashMap<Key, f64>, i1: f64, epsilon: f64) -> (usize, usize) {
    let (mut checked, mut violations) = (0, 0);
    for (g, &b) in q {
        if (g.len() as f64) > i1 {
            continue;
        }
        checked += 1;
        let a = p.get(g).copied().unwrap_or(0.0);
        if a < (-epsilon).exp() * b * (1.0 - 1e-9) {
            violations += 1;
        }
    }
    (checked, violations)
}

#[test]
fn claim_1_holds_exactly_with_a_fixed_or_private_frequent_set() {
    let mut totals = [(0usize, 0usize); 3];
    for (parents, c, max_m) in tiny_configs().into_iter().take(3) {
        with_lattice(&parents, |l| {
            let p = Parameters::without_condition_10(l, settings(&c)).unwrap();
            let m = model(&parents, &c, &p);
            let keep = 1.0 - c.beta;
            for db in databases(&leaves(&parents), max_m) {
                let mbar = (db.len() as f64).max(c.min_records as f64 + 1.0);
                let i1 = (c.epsilon + c.beta.ln()) * mbar / (2.0 * p.epsilon_prime() * p.eta());
                for (_, nb) in neighbours(&db) {
                    let (d, dn) = pair(&m, &db, &nb, Variant::Fixed, keep, None);
                    let (ch, v) = claim_1(&d, &dn, i1, c.epsilon);
                    totals[0].0 += ch;
                    totals[0].1 += v;
                    // The checker catches β < e^{−ε}: keep the same ε′ but sample with β = e^{−ε}/2.
                    let broken_keep = 1.0 - (-c.epsilon).exp() / 2.0;
                    let (d, dn) = pair(&m, &db, &nb, Variant::Fixed, broken_keep, None);
                    let (ch, v) = claim_1(&d, &dn, i1, c.epsilon);
                    totals[1].0 += ch;
                    totals[1].1 += v;
                }
            }
        });
    }
    // The private 𝓛′ (ε = 1, ε_F = 1: s = 6, T = t + 19) on databases of up to 3 records: e^{−(ε + ε_F)}.
    let (parents, c, _) = tiny_configs().remove(0);
    let c = Config {
        epsilon: 1.0,
        frequent: FrequentSet::Private {
            epsilon: 1.0,
            delta: 0.25,
        },
        ..c
    };
    with_lattice(&parents, |l| {
        let p = Parameters::without_condition_10(l, settings(&c)).unwrap();
        let m = model(&parents, &c, &p);
        for db in databases(&leaves(&parents), 3) {
            if m.reachable(&db).len() > 10 {
                continue;
            }
            let mbar = (db.len() as f64).max(2.0);
            let i1 = (c.epsilon + c.beta.ln()) * mbar / (2.0 * p.epsilon_prime() * p.eta());
            for (_, nb) in neighbours(&db) {
                let (d, dn) = pair(&m, &db, &nb, Variant::Private, 1.0 - c.beta, p.frequent_noise());
                let (ch, v) = claim_1(&d, &dn, i1, c.epsilon + 1.0);
                totals[2].0 += ch;
                totals[2].1 += v;
            }
        }
    });
    // The same with the Gaussian 𝓛′ (ε_F = 1, δ_F = 0.25): Claim 1 at e^{−(ε + ε_F)}, up to the mass δ_F/2
    // of the Gaussian release, which (unlike the Laplace one) is not pure: counted, and bounded by δ_F.
    let cg = Config {
        frequent: FrequentSet::Gaussian {
            epsilon: 1.0,
            delta: 0.25,
        },
        ..c
    };
    let mut gaussian = (0usize, 0usize, 0.0f64);
    with_lattice(&parents, |l| {
        let p = Parameters::without_condition_10(l, settings(&cg)).unwrap();
        let m = model(&parents, &cg, &p);
        for db in databases(&leaves(&parents), 3) {
            if m.reachable(&db).len() > 10 {
                continue;
            }
            for (_, nb) in neighbours(&db) {
                let (d, dn) = pair(&m, &db, &nb, Variant::Private, 1.0 - cg.beta, p.frequent_noise());
                let pr = profile(&d, &dn, cg.epsilon + 1.0);
                gaussian.0 += dn.len();
                gaussian.2 = gaussian.2.max(pr.hockey());
                if pr.hockey() > 0.1 + 0.25 {
                    gaussian.1 += 1;
                }
            }
        }
    });
    eprintln!(
        "Gaussian 𝓛′ on databases of ≤ 3 records: {} outputs, worst hockey-stick δ at ε + ε_F {:.3e} (δ + δ_F = 0.35)",
        gaussian.0, gaussian.2
    );
    assert!(gaussian.0 > 100 && gaussian.1 == 0);
    eprintln!(
        "Claim 1: fixed 𝓛′ {} outputs, {} violations; private 𝓛′ {} outputs, {} violations; \
         broken β = e^(-ε)/2: {} outputs, {} violations",
        totals[0].0, totals[0].1, totals[2].0, totals[2].1, totals[1].0, totals[1].1
    );
    assert!(totals[0].0 > 10_000 && totals[2].0 > 100);
    assert_eq!((totals[0].1, totals[2].1), (0, 0));
    assert!(totals[1].1 > 100, "the checker must catch β < e^(-ε)");
}

fn summarize(label: &str, p: &Profile, pairs: usize) {
    eprintln!(
        "{label:<44} pairs {pairs:>5}  max finite |loss| {:>7.3}  infinite loss {:<5}  mass outside e^±ε {:.3e}  \
         hockey-stick δ {:.3e}",
        p.max_finite_loss,
        p.infinite,
        p.outside(),
        p.hockey()
    );
}

#[test]
fn tiny_domains_profile_and_broken_variants() {
    const NAMES: [(&str, Variant); 4] = [
        ("published (𝓛′ recomputed)", Variant::Published),
        ("𝓛′ fixed", Variant::Fixed),
        ("no sampling (β → 0)", Variant::NoSampling),
        ("no frequency restriction", Variant::NoFrequency),
    ];
    for (index, (parents, c, max_m)) in tiny_configs().into_iter().enumerate() {
        with_lattice(&parents, |l| {
            let p = Parameters::without_condition_10(l, settings(&c)).unwrap();
            let m = model(&parents, &c, &p);
            let keep = 1.0 - c.beta;
            let mut worst: HashMap<Variant, Profile> = HashMap::new();
            // the worst mass outside e^±ε with 𝓛′ fixed and published, by database size
            let mut by_size = vec![(0.0f64, 0.0f64); max_m + 1];
            let mut pairs = 0;
            for db in databases(&leaves(&parents), max_m) {
                for (_, nb) in neighbours(&db) {
                    pairs += 1;
                    for (_, v) in NAMES {
                        let (d, dn) = pair(&m, &db, &nb, v, keep, None);
                        let pr = profile(&d, &dn, c.epsilon);
                        match v {
                            Variant::Fixed => by_size[db.len()].0 = by_size[db.len()].0.max(pr.outside()),
                            Variant::Published => by_size[db.len()].1 = by_size[db.len()].1.max(pr.outside()),
                            _ => {}
                        }
                        worst.entry(v).or_default().merge(&pr);
                    }
                }
            }
            eprintln!(
                "tiny domains, k = {}, {:?}, ε = {}, β = {}, t = {}, every database of ≤ {max_m} records:",
                parents.len(),
                c.obj,
                c.epsilon,
                c.beta,
                c.t
            );
            for (name, v) in NAMES {
                summarize(name, &worst[&v], pairs);
            }
            let sizes: Vec<String> = (1..=max_m)
                .map(|n| format!("|D| = {n}: {:.3} / {:.3}", by_size[n].0, by_size[n].1))
                .collect();
            eprintln!("  worst mass outside e^±ε, 𝓛′ fixed / published: {}", sizes.join(", "));
            // Without sampling the output size is |D|: the supports of D and D₋ₐ₀ are disjoint.
            assert!(worst[&Variant::NoSampling].outside() > 1.0 - 1e-9);
            assert!(worst[&Variant::NoFrequency].outside() > 0.1);
            if index == 0 {
                assert!(worst[&Variant::Published].outside() > 2.0 * worst[&Variant::Fixed].outside());
            }
        });
    }

    let (parents, c, _) = tiny_configs().remove(0);
    with_lattice(&parents, |l| {
        let p = Parameters::without_condition_10(l, settings(&c)).unwrap();
        let m = model(&parents, &c, &p);
        let keep = 1.0 - c.beta;
        // Example 1 exactly: a₀ = (b, y) is the only record with its values; the others share (a, x).
        let db: Vec<Element> = vec![vec![4, 2], vec![3, 1], vec![3, 1], vec![3, 1]];
        let nb: Vec<Element> = db[1..].to_vec();
        let (d, dn) = pair(&m, &db, &nb, Variant::NoFrequency, keep, None);
        let ex = profile(&d, &dn, c.epsilon);
        // a₀ released as an element only it generalizes never happens without it.
        let alone: f64 = d
            .iter()
            .filter(|(g, _)| g.codes().iter().any(|&x| m.rho(&m.decode(x), &nb) == 0))
            .map(|(_, p)| p)
            .sum();
        eprintln!("Example 1 without 𝓛′: mass of outputs impossible without a₀ = {alone:.3} (δ = 0.1)");
        assert!(ex.infinite && alone > 0.1 && ex.outside() >= alone);
        let (d, dn) = pair(&m, &db, &nb, Variant::Fixed, keep, None);
        let fixed = profile(&d, &dn, c.epsilon);
        eprintln!(
            "Example 1 with 𝓛′ (t = 2):    mass outside e^±ε = {:.3}",
            fixed.outside()
        );
        assert!(fixed.outside() < alone);
    });
}

// ------------------------------------------------------------------ the regime of condition (10)

/// One attribute: ⊥(0) → p(1), q(2). Databases of n_p records p and n_q records q.
const PQ: [u32; 3] = [0, 0, 0];

/// ln of the multinomial pmf n!/(i! j! (n−i−j)!) a^i b^j c^{n−i−j}.
fn ln_multinomial(n: u64, i: u64, j: u64, a: f64, b: f64, c: f64) -> f64 {
    let lg = |x: u64| statrs::function::gamma::ln_gamma(x as f64 + 1.0);
    let term = |k: u64, p: f64| if k == 0 { 0.0 } else { k as f64 * p.ln() };
    lg(n) - lg(i) - lg(j) - lg(n - i - j) + term(i, a) + term(j, b) + term(n - i - j, c)
}

/// The exact output distribution, keyed by (copies of p, copies of q, copies of ⊥), for given
/// memberships of p, q and ⊥ in 𝓛′.
fn types_distribution(m: &Model, np: u64, nq: u64, keep: f64, member: [bool; 3]) -> HashMap<(u64, u64, u64), f64> {
    let db: Vec<Element> = (0..np).map(|_| vec![1]).chain((0..nq).map(|_| vec![2])).collect();
    let per_type = |value: u32, n: u64| -> Vec<((u64, u64), f64)> {
        if n == 0 {
            return vec![((0, 0), 1.0)];
        }
        let q = m.record_distribution(&[value], &db, &|x, _| member[x[0] as usize]);
        let own = q.iter().find(|(x, _)| x[0] == value).map_or(0.0, |e| e.1) * keep;
        let bot = q.iter().find(|(x, _)| x[0] == 0).map_or(0.0, |e| e.1) * keep;
        let none = 1.0 - own - bot;
        let mut out = vec![];
        for i in 0..=n {
            for j in 0..=(n - i) {
                if (i > 0 && own == 0.0) || (j > 0 && bot == 0.0) || (n - i - j > 0 && none <= 0.0) {
                    continue;
                }
                let lp = ln_multinomial(n, i, j, own, bot, none);
                if lp > -700.0 {
                    out.push(((i, j), lp.exp()));
                }
            }
        }
        out
    };
    let (p_side, q_side) = (per_type(1, np), per_type(2, nq));
    let mut dist = HashMap::new();
    for &((ip, jp), a) in &p_side {
        for &((iq, jq), b) in &q_side {
            *dist.entry((ip, iq, jp + jq)).or_default() += a * b;
        }
    }
    dist
}

/// The counts of p, q and ⊥ (their |ρ|) in a database of n_p p's and n_q q's.
fn pq_counts(np: u64, nq: u64) -> [u64; 3] {
    [np + nq, np, nq]
}

fn types_variant(
    m: &Model,
    (np, nq): (u64, u64),
    (np2, nq2): (u64, u64),
    v: Variant,
    keep: f64,
    noise: FrequentNoise,
) -> Profile2Types {
    let t = m.t;
    let exact = |np, nq| pq_counts(np, nq).map(|c| c >= t);
    let fixed = exact(np, nq);
    let dist = |np: u64, nq: u64| -> HashMap<(u64, u64, u64), f64> {
        match v {
            Variant::Published => types_distribution(m, np, nq, keep, exact(np, nq)),
            Variant::Fixed => types_distribution(m, np, nq, keep, fixed),
            Variant::NoSampling => types_distribution(m, np, nq, 1.0, fixed),
            Variant::NoFrequency => types_distribution(m, np, nq, keep, [true; 3]),
            Variant::Private => {
                let counts = pq_counts(np, nq);
                let probs = counts.map(|c| enter(noise, c));
                let mut total: HashMap<(u64, u64, u64), f64> = HashMap::new();
                for mask in 0..8u32 {
                    let member = [mask & 1 == 1, mask & 2 == 2, mask & 4 == 4];
                    let w: f64 = (0..3)
                        .map(|i| if member[i] { probs[i] } else { 1.0 - probs[i] })
                        .product();
                    for (g, p) in types_distribution(m, np, nq, keep, member) {
                        *total.entry(g).or_default() += w * p;
                    }
                }
                total
            }
        }
    };
    (dist(np, nq), dist(np2, nq2))
}

type Profile2Types = (HashMap<(u64, u64, u64), f64>, HashMap<(u64, u64, u64), f64>);

#[test]
fn theorem_4_in_the_regime_of_condition_10() {
    let parents = vec![PQ.to_vec()];
    for obj in [
        Obj::Lagrangian {
            lambda: 1.0,
            kappa: 1,
            phi_min: 1.0,
        },
        Obj::Threshold { c: 0.75, phi_max: 1.0 },
    ] {
        with_lattice(&parents, |l| {
            let c = Config {
                epsilon: 1.0,
                beta: 0.5,
                t: 2,
                obj,
                measure: Measure::Reciprocal,
                weights: Weights::ModelII,
                min_records: 50,
                frequent: FrequentSet::Private {
                    epsilon: 1.0,
                    delta: 0.05,
                },
            };
            let t = Parameters::without_condition_10(l, settings(&c)).unwrap().smallest_t();
            let c = Config { t, ..c };
            let p = Parameters::new(l, settings(&c)).unwrap();
            let nt = p.frequent_noise().unwrap();
            let m = model(&parents, &c, &p);
            let (eps_total, delta_total) = p.guarantee().unwrap();
            // The Gaussian 𝓛′ at the same (ε_F, δ_F), with the same t.
            let cg = Config {
                frequent: FrequentSet::Gaussian {
                    epsilon: 1.0,
                    delta: 0.05,
                },
                ..c
            };
            let pg = Parameters::new(l, settings(&cg)).unwrap();
            let ng = pg.frequent_noise().unwrap();
            eprintln!(
                "{obj:?}: N = 2, ε = 1, β = 0.5, δ = 0.1, τ₁ = 0.5 → smallest t = {t}; private 𝓛′ threshold {} \
                 (Laplace), {} (Gaussian); ε′ = {:.4}",
                nt.threshold(),
                ng.threshold(),
                p.epsilon_prime()
            );
            // The reference's per-record distribution is the library's on a database of this size.
            let db: Vec<u32> = (0..t + 5).map(|_| 1).chain((0..7).map(|_| 2)).collect();
            let dbe: Vec<Element> = db.iter().map(|&v| vec![v]).collect();
            let n = release_scratch_len(l);
            let (mut counts, mut scores, mut cands, mut out) = (vec![0u64; n], vec![0.0; n], vec![0usize; n], [0.0; 2]);
            record_probabilities(
                l,
                &db,
                0,
                RiskWeights::ModelII,
                &p,
                &mut |_, cnt| cnt >= t,
                ReleaseScratch {
                    counts: &mut counts,
                    scores: &mut scores,
                    candidates: &mut cands,
                },
                &mut out,
            )
            .unwrap();
            let r = m.record_distribution(&[1], &dbe, &|_, cnt| cnt >= t);
            for (x, q) in &r {
                assert!((out[if x[0] == 1 { 0 } else { 1 }] - q).abs() < 1e-12);
            }

            let keep = 1.0 - c.beta;
            let mut worst: HashMap<Variant, Profile> = HashMap::new();
            let mut gaussian = Profile::default();
            let mut published_at_t = Profile::default();
            let mut cases = 0;
            for np in [t, t + 1, t + 3, t + 10, 2 * t, 200] {
                for nq in [0, 6, 12] {
                    // remove a p (and, when there are q's, a q)
                    let mut removals = vec![(np - 1, nq)];
                    if nq > 0 {
                        removals.push((np, nq - 1));
                    }
                    for nb in removals {
                        cases += 1;
                        for v in [
                            Variant::Published,
                            Variant::Fixed,
                            Variant::Private,
                            Variant::NoSampling,
                        ] {
                            let eps = if v == Variant::Private { eps_total } else { c.epsilon };
                            let (d, dn) = types_variant(&m, (np, nq), nb, v, keep, nt);
                            let pr = profile(&d, &dn, eps);
                            worst.entry(v).or_default().merge(&pr);
                            if v == Variant::Published && np == t && nb.0 == t - 1 {
                                published_at_t.merge(&pr);
                            }
                        }
                        let (d, dn) = types_variant(&m, (np, nq), nb, Variant::Private, keep, ng);
                        gaussian.merge(&profile(&d, &dn, eps_total));
                    }
                }
            }
            // Example 1: one record p among q's (no frequency restriction).
            let (d, dn) = types_variant(&m, (1, 150), (0, 150), Variant::NoFrequency, keep, nt);
            worst
                .entry(Variant::NoFrequency)
                .or_default()
                .merge(&profile(&d, &dn, c.epsilon));
            for (name, v) in [
                ("𝓛′ fixed", Variant::Fixed),
                ("private 𝓛′ (at ε + ε_F)", Variant::Private),
                ("published (𝓛′ recomputed)", Variant::Published),
                ("no sampling (β → 0)", Variant::NoSampling),
                ("no frequency (Example 1, n_p = 1)", Variant::NoFrequency),
            ] {
                summarize(name, &worst[&v], cases);
            }
            summarize("Gaussian 𝓛′ (at ε + ε_F)", &gaussian, cases);
            summarize("published, a₀ under an element of count t", &published_at_t, 3);
            assert!(worst[&Variant::Fixed].outside() <= 0.1, "mass outside e^±ε must be ≤ δ");
            assert!(worst[&Variant::Private].outside() <= delta_total);
            // The Gaussian release is approximate DP itself: its hockey-stick divergence is what δ bounds.
            assert!(gaussian.hockey() <= delta_total);
            assert!(published_at_t.outside() > 0.5, "the published algorithm must be caught");
            assert!(worst[&Variant::NoSampling].outside() > 0.5);
            assert!(worst[&Variant::NoFrequency].outside() > 0.1);
        });
    }
}
