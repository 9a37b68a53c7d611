//! Exact output distributions of the discovery mechanisms (`dpmo::discover`) in small worlds, computed
//! from the plans' public parameters only — the noise laws summed term by term, the bounding as the
//! uniform average over every unit's possible kept subsets — and never from the library's samplers. Shared
//! by the privacy proofs (`discover_privacy.rs`) and the goodness-of-fit tests (`discover.rs`).
#![allow(dead_code)]

use dpmo::discover::{weight, PartitionPlan, PartitionSelection, TopKPlan};
use std::collections::BTreeMap;

/// An output (partition selection: the kept items, sorted; DP-SIPS: the rounds' items separated by
/// [`SEP`]; top-k: the items in selection order) and its probability.
pub type Dist = BTreeMap<Vec<u64>, f64>;

/// The item ids of the worlds.
pub const ITEMS: [u64; 4] = [10, 20, 30, 40];

/// Separates the rounds of a DP-SIPS transcript.
pub const SEP: u64 = u64::MAX;

/// A unit's raw events: its multiplicity of events on each item (0 = none).
pub type Unit = [u8; 4];

/// A unit with one event on each item of the bit mask.
pub fn unit_of_mask(mask: u8) -> Unit {
    let mut u = [0; 4];
    for (i, x) in u.iter_mut().enumerate() {
        *x = (mask >> i) & 1;
    }
    u
}

fn mask_of(u: &Unit) -> u8 {
    u.iter()
        .enumerate()
        .fold(0, |m, (i, &x)| if x > 0 { m | 1 << i } else { m })
}

/// The equally likely bounded versions of a unit under L (every L-subset of its items when it has more;
/// events beyond C on an item are dropped, which for counts is the same whichever are kept).
pub fn choices(u: &Unit, l: usize, c: u8) -> Vec<Unit> {
    let raw = mask_of(u);
    let cap = |m: u8| {
        let mut v = [0u8; 4];
        for i in 0..4 {
            if m >> i & 1 == 1 {
                v[i] = u[i].min(c);
            }
        }
        v
    };
    if raw.count_ones() as usize <= l {
        return vec![cap(raw)];
    }
    (0..16u8)
        .filter(|&m| m & !raw == 0 && m.count_ones() as usize == l)
        .map(cap)
        .collect()
}

/// The average of `f` over the product of the units' bounding choices.
pub fn mixture(units: &[Unit], l: usize, c: u8, f: &dyn Fn(&[Unit]) -> Dist) -> Dist {
    let options: Vec<Vec<Unit>> = units.iter().map(|u| choices(u, l, c)).collect();
    let total: usize = options.iter().map(|o| o.len()).product();
    let mut out = Dist::new();
    let mut idx = vec![0usize; units.len()];
    for _ in 0..total {
        let bounded: Vec<Unit> = idx.iter().zip(&options).map(|(&i, o)| o[i]).collect();
        for (k, v) in f(&bounded) {
            *out.entry(k).or_default() += v / total as f64;
        }
        for j in 0..idx.len() {
            idx[j] += 1;
            if idx[j] < options[j].len() {
                break;
            }
            idx[j] = 0;
        }
    }
    out
}

/// A symmetric integer noise law, as its upper tails P(Z ≥ m) summed term by term from the top.
#[derive(Clone, Debug)]
pub struct Noise {
    w: i64,
    tail: Vec<f64>,
}

impl Noise {
    fn from_masses(w: i64, mass: impl Fn(i64) -> f64) -> Noise {
        let m: Vec<f64> = (-w..=w).map(&mass).collect();
        let total: f64 = m.iter().sum();
        let mut tail = vec![0.0; m.len() + 1];
        for i in (0..m.len()).rev() {
            tail[i] = tail[i + 1] + m[i] / total;
        }
        Noise { w, tail }
    }

    /// P(Z = z) ∝ e^{−a|z|}, truncated to |z| ≤ k when given.
    pub fn laplace(a: f64, truncation: Option<u64>) -> Noise {
        let w = truncation.map_or((80.0 / a).ceil() as i64 + 2, |k| k as i64);
        Noise::from_masses(w, |z| (-a * z.abs() as f64).exp())
    }

    /// P(Z = z) ∝ e^{−z²/(2σ²)}.
    pub fn gaussian(s2: f64) -> Noise {
        let w = (40.0 * s2.sqrt()).ceil() as i64 + 5;
        Noise::from_masses(w, |z| (-((z * z) as f64) / (2.0 * s2)).exp())
    }

    /// P(Z ≥ m).
    pub fn at_least(&self, m: i64) -> f64 {
        if m <= -self.w {
            1.0
        } else if m > self.w {
            0.0
        } else {
            self.tail[(m + self.w) as usize]
        }
    }
}

/// A partition-selection mechanism as the model sees it: what is compared with what.
#[derive(Clone, Debug)]
pub enum Model {
    /// Keep iff units + Z ≥ threshold (truncated geometric: threshold k + 1, Laplace, Gaussian).
    Count { noise: Noise, threshold: i64 },
    /// Keep iff Σ w_{s_u} + Z ≥ threshold (weighted Gaussian), in grid units.
    Weighted { grid: u64, noise: Noise, threshold: i64 },
    /// DP-SIPS: one (noise, threshold) per round.
    Sips { grid: u64, rounds: Vec<(Noise, i64)> },
}

/// The model of a plan (ε and L give the Laplace rate ε/L).
pub fn model_of(plan: &PartitionPlan, epsilon: f64) -> Model {
    let l = plan.max_items() as f64;
    if let Some(k) = plan.truncation() {
        return Model::Count {
            noise: Noise::laplace(epsilon / l, Some(k)),
            threshold: k as i64 + 1,
        };
    }
    let rounds = |r: usize| {
        (
            Noise::gaussian(plan.variance(r).unwrap().value()),
            plan.threshold(r).unwrap() as i64,
        )
    };
    match plan.mechanism() {
        PartitionSelection::Laplace => Model::Count {
            noise: Noise::laplace(epsilon / l, None),
            threshold: plan.threshold(0).unwrap() as i64,
        },
        PartitionSelection::Gaussian => {
            let (noise, threshold) = rounds(0);
            Model::Count { noise, threshold }
        }
        PartitionSelection::WeightedGaussian => {
            let (noise, threshold) = rounds(0);
            Model::Weighted {
                grid: plan.grid().unwrap(),
                noise,
                threshold,
            }
        }
        PartitionSelection::Sips { .. } => Model::Sips {
            grid: plan.grid().unwrap(),
            rounds: (0..plan.rounds()).map(rounds).collect(),
        },
        PartitionSelection::TruncatedGeometric => unreachable!(),
    }
}

/// The weight w_s = ⌊G/√s⌋, recomputed in floating point (and checked against the library's integer
/// square root).
pub fn model_weight(grid: u64, s: usize) -> u64 {
    let w = (grid as f64 / (s as f64).sqrt()).floor() as u64;
    assert_eq!(w, weight(grid, s as u64), "w_{s} for G = {grid}");
    w
}

/// The distribution of one round's kept set, given each present item's keep probability.
fn product(present: &[(u64, f64)], prefix: &[u64]) -> Vec<(Vec<u64>, f64)> {
    let mut out = vec![(prefix.to_vec(), 1.0)];
    for &(item, p) in present {
        let mut next = Vec::with_capacity(out.len() * 2);
        for (o, q) in out {
            if p > 0.0 {
                let mut with = o.clone();
                with.push(item);
                next.push((with, q * p));
            }
            if p < 1.0 {
                next.push((o, q * (1.0 - p)));
            }
        }
        out = next;
    }
    out
}

/// The output distribution of a model on bounded units.
pub fn partition_dist(m: &Model, units: &[Unit]) -> Dist {
    let mut out = Dist::new();
    match m {
        Model::Count { noise, threshold } => {
            let present: Vec<(u64, f64)> = (0..4)
                .filter_map(|i| {
                    let n = units.iter().filter(|u| u[i] > 0).count() as i64;
                    (n > 0).then(|| (ITEMS[i], noise.at_least(threshold - n)))
                })
                .collect();
            for (o, p) in product(&present, &[]) {
                *out.entry(o).or_default() += p;
            }
        }
        Model::Weighted { grid, noise, threshold } => {
            let present: Vec<(u64, f64)> = (0..4)
                .filter_map(|i| {
                    let holders: Vec<&Unit> = units.iter().filter(|u| u[i] > 0).collect();
                    let w: u64 = holders
                        .iter()
                        .map(|u| model_weight(*grid, u.iter().filter(|&&x| x > 0).count()))
                        .sum();
                    (!holders.is_empty()).then(|| (ITEMS[i], noise.at_least(threshold - w as i64)))
                })
                .collect();
            for (o, p) in product(&present, &[]) {
                *out.entry(o).or_default() += p;
            }
        }
        Model::Sips { grid, rounds } => sips(*grid, rounds, units, 0, &[], &mut Vec::new(), 1.0, &mut out),
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn sips(
    grid: u64,
    rounds: &[(Noise, i64)],
    units: &[Unit],
    r: usize,
    selected: &[usize],
    prefix: &mut Vec<u64>,
    p: f64,
    out: &mut Dist,
) {
    if r == rounds.len() {
        *out.entry(prefix.clone()).or_default() += p;
        return;
    }
    let (noise, threshold) = &rounds[r];
    let left = |u: &Unit| (0..4).filter(|&i| u[i] > 0 && !selected.contains(&i)).count();
    let present: Vec<(usize, f64)> = (0..4)
        .filter(|i| !selected.contains(i))
        .filter_map(|i| {
            let holders: Vec<&Unit> = units.iter().filter(|u| u[i] > 0).collect();
            let w: u64 = holders.iter().map(|u| model_weight(grid, left(u))).sum();
            (!holders.is_empty()).then(|| (i, noise.at_least(threshold - w as i64)))
        })
        .collect();
    let as_items: Vec<(u64, f64)> = present.iter().map(|&(i, q)| (i as u64, q)).collect();
    for (kept, q) in product(&as_items, &[]) {
        let mut sel = selected.to_vec();
        let base = prefix.len();
        for &i in &kept {
            sel.push(i as usize);
            prefix.push(ITEMS[i as usize]);
        }
        prefix.push(SEP);
        sips(grid, rounds, units, r + 1, &sel, prefix, p * q, out);
        prefix.truncate(base);
    }
}

/// The final output of a DP-SIPS transcript: its items, sorted.
pub fn union_of(transcript: &[u64]) -> Vec<u64> {
    let mut v: Vec<u64> = transcript.iter().copied().filter(|&x| x != SEP).collect();
    v.sort_unstable();
    v
}

/// Unknown-domain top-k as the model sees it.
#[derive(Clone, Copy, Debug)]
pub struct TopKModel {
    pub k: usize,
    pub k_bar: usize,
    pub epsilon_round: f64,
    pub sensitivity: f64,
    pub bottom_offset: f64,
    /// Score units per count (1; ⌊hi/g⌋ for sums of values all equal to hi).
    pub scale: f64,
}

impl TopKModel {
    pub fn of(plan: &TopKPlan, k: usize, k_bar: usize) -> TopKModel {
        TopKModel {
            k,
            k_bar,
            epsilon_round: plan.epsilon_round(),
            sensitivity: plan.sensitivity() as f64,
            bottom_offset: plan.bottom_offset() as f64,
            scale: 1.0,
        }
    }
}

/// Which score the top-k ranks by, for the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Units,
    Events,
}

/// The output distribution of unknown-domain top-k on bounded units: candidates the top k̄ items by
/// (score desc, id asc) with a score > 0, ⊥ at h₍k̄₊₁₎ + offset, exponential-mechanism peeling with
/// P ∝ exp(ε₀ h/Δ∞) until ⊥ or k items.
pub fn top_k_dist(m: &TopKModel, score: Score, units: &[Unit]) -> Dist {
    let mut scored: Vec<(u64, f64)> = (0..4)
        .map(|i| {
            let s: u64 = units
                .iter()
                .map(|u| match score {
                    Score::Units => u64::from(u[i] > 0),
                    Score::Events => u64::from(u[i]),
                })
                .sum();
            (ITEMS[i], s as f64 * m.scale)
        })
        .filter(|&(_, s)| s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let h_next = scored.get(m.k_bar).map_or(0.0, |x| x.1);
    scored.truncate(m.k_bar);
    let bottom = h_next + m.bottom_offset;
    let mut out = Dist::new();
    fn go(m: &TopKModel, live: Vec<(u64, f64)>, bottom: f64, prefix: Vec<u64>, p: f64, out: &mut Dist) {
        if prefix.len() == m.k {
            *out.entry(prefix).or_default() += p;
            return;
        }
        let top = live.iter().map(|x| x.1).fold(bottom, f64::max);
        let wb = (m.epsilon_round * (bottom - top) / m.sensitivity).exp();
        let ws: Vec<f64> = live
            .iter()
            .map(|x| (m.epsilon_round * (x.1 - top) / m.sensitivity).exp())
            .collect();
        let total = wb + ws.iter().sum::<f64>();
        *out.entry(prefix.clone()).or_default() += p * wb / total;
        for (j, &w) in ws.iter().enumerate() {
            let mut rest = live.clone();
            let (item, _) = rest.remove(j);
            let mut pre = prefix.clone();
            pre.push(item);
            go(m, rest, bottom, pre, p * w / total, out);
        }
    }
    go(m, scored, bottom, Vec::new(), 1.0, &mut out);
    out
}

/// Σ_o max(0, P(o) − e^{c(o)} Q(o)): the hockey-stick divergence with an output-dependent privacy loss.
pub fn hockey(p: &Dist, q: &Dist, charge: &dyn Fn(&[u64]) -> f64) -> f64 {
    p.iter()
        .map(|(o, &x)| (x - charge(o).exp() * q.get(o).copied().unwrap_or(0.0)).max(0.0))
        .sum()
}

/// Every multiset of at most `k` units from `types` (as sorted index lists).
pub fn datasets(types: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    let mut frontier = vec![Vec::new()];
    for _ in 0..k {
        let mut next = Vec::new();
        for d in &frontier {
            let from = d.last().copied().unwrap_or(0);
            for t in from..types {
                let mut e: Vec<usize> = d.clone();
                e.push(t);
                next.push(e);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}
