//! A reference implementation of the generalization models and of Algorithm 3's exact output distribution,
//! written from the paper's definitions with none of the library's shortcuts (ancestor sets instead of
//! depth walks, naive ρ counts instead of prefix sums, explicit enumeration of the sampled sets' outcomes).
#![allow(dead_code)]

use std::collections::HashMap;

/// A VGH from a parent array (the root is its own parent).
#[derive(Clone, Debug)]
pub struct Vgh {
    pub parents: Vec<u32>,
}

impl Vgh {
    pub fn new(parents: &[u32]) -> Self {
        Vgh {
            parents: parents.to_vec(),
        }
    }

    pub fn root(&self) -> u32 {
        (0..self.parents.len() as u32)
            .find(|&v| self.parents[v as usize] == v)
            .unwrap()
    }

    /// v, its parent, …, the root.
    pub fn chain(&self, v: u32) -> Vec<u32> {
        let mut c = vec![v];
        let mut x = v;
        while self.parents[x as usize] != x {
            x = self.parents[x as usize];
            c.push(x);
        }
        c
    }

    pub fn generalizes(&self, x: u32, v: u32) -> bool {
        self.chain(v).contains(&x)
    }

    pub fn is_leaf(&self, v: u32) -> bool {
        !(0..self.parents.len() as u32).any(|c| c != v && self.parents[c as usize] == v)
    }

    /// n(x): the leaves under x.
    pub fn leaves(&self, x: u32) -> u32 {
        (0..self.parents.len() as u32)
            .filter(|&v| self.is_leaf(v) && self.generalizes(x, v))
            .count() as u32
    }

    pub fn leaf_ids(&self) -> Vec<u32> {
        (0..self.parents.len() as u32).filter(|&v| self.is_leaf(v)).collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Measure {
    Reciprocal,
    LogRatio,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weights {
    /// Model I: weight w_i off ⊥, 0 at ⊥ (shared by every record).
    ModelI([f64; 3]),
    ModelII,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Obj {
    Lagrangian { lambda: f64, kappa: u32, phi_min: f64 },
    Threshold { c: f64, phi_max: f64 },
}

/// Everything the reference mechanism needs: hierarchies, models, and the parameters taken from the library
/// (ε′, β, t, n₀ — the formulas for these are checked separately against hand computations).
#[derive(Clone, Debug)]
pub struct Model {
    pub vghs: Vec<Vgh>,
    pub measure: Measure,
    pub weights: Weights,
    pub obj: Obj,
    pub beta: f64,
    pub epsilon_prime: f64,
    pub t: u64,
    pub min_records: u64,
}

pub type Element = Vec<u32>;

impl Model {
    pub fn k(&self) -> usize {
        self.vghs.len()
    }

    /// a⁺ in the library's order (levels in mixed radix, last attribute fastest).
    pub fn chain_product(&self, a: &[u32]) -> Vec<Element> {
        let chains: Vec<Vec<u32>> = self.vghs.iter().zip(a).map(|(h, &v)| h.chain(v)).collect();
        let mut out = vec![vec![]];
        for c in &chains {
            let mut next = vec![];
            for prefix in &out {
                for &v in c {
                    let mut e = prefix.clone();
                    e.push(v);
                    next.push(e);
                }
            }
            out = next;
        }
        out
    }

    pub fn generalizes(&self, x: &[u32], y: &[u32]) -> bool {
        self.vghs
            .iter()
            .zip(x.iter().zip(y))
            .all(|(h, (&xi, &yi))| h.generalizes(xi, yi))
    }

    pub fn rho(&self, x: &[u32], db: &[Element]) -> u64 {
        db.iter().filter(|t| self.generalizes(x, t)).count() as u64
    }

    pub fn utility(&self, x: &[u32]) -> f64 {
        self.vghs
            .iter()
            .zip(x)
            .map(|(h, &v)| {
                let n = h.leaves(v) as f64;
                match self.measure {
                    Measure::Reciprocal => 1.0 / n,
                    Measure::LogRatio => (h.leaves(h.root()) as f64 / n).ln(),
                }
            })
            .sum()
    }

    pub fn phi(&self, x: &[u32]) -> f64 {
        let k = self.k() as f64;
        self.vghs
            .iter()
            .zip(x)
            .enumerate()
            .map(|(i, (h, &v))| match self.weights {
                Weights::ModelI(w) => {
                    if v == h.root() {
                        0.0
                    } else {
                        w[i]
                    }
                }
                Weights::ModelII => 1.0 / k,
            })
            .sum()
    }

    /// The score whose exponential ε′·score is the weight of x for a record of a database of m records
    /// (None when x is not a candidate because of the utility threshold).
    pub fn score(&self, x: &[u32], rho: u64, m: usize) -> Option<f64> {
        let mbar = (m as f64).max(self.min_records as f64 + 1.0);
        let u = self.utility(x);
        let phi = self.phi(x);
        match self.obj {
            Obj::Lagrangian { lambda, kappa, phi_min } => {
                Some(lambda * rho as f64 / phi.max(phi_min) / mbar + u.powi(kappa as i32) / mbar)
            }
            Obj::Threshold { c, phi_max } => {
                if u < c {
                    None
                } else {
                    Some(-(phi.min(phi_max) / rho.max(self.t) as f64) / mbar)
                }
            }
        }
    }

    /// q over a⁺ for record a of `db` given 𝓛′ membership `member(x, ρ(x, db))`: (element, probability)
    /// pairs of the candidates (empty when the record has none).
    pub fn record_distribution(
        &self,
        a: &[u32],
        db: &[Element],
        member: &dyn Fn(&[u32], u64) -> bool,
    ) -> Vec<(Element, f64)> {
        let m = db.len();
        let mut cands = vec![];
        for x in self.chain_product(a) {
            let r = self.rho(&x, db);
            if !member(&x, r) {
                continue;
            }
            if let Some(s) = self.score(&x, r, m) {
                cands.push((x, s));
            }
        }
        if cands.is_empty() {
            return vec![];
        }
        let max = cands.iter().map(|c| c.1).fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = cands.iter().map(|c| (self.epsilon_prime * (c.1 - max)).exp()).collect();
        let total: f64 = w.iter().sum();
        cands.into_iter().zip(w).map(|((x, _), w)| (x, w / total)).collect()
    }

    /// The exact distribution of the released multiset when every record of `db` is kept with probability
    /// `keep` and, if kept, releases per `record_distribution` with the given 𝓛′.
    pub fn output_distribution(
        &self,
        db: &[Element],
        keep: f64,
        member: &dyn Fn(&[u32], u64) -> bool,
    ) -> HashMap<Key, f64> {
        let mut dist: HashMap<Key, f64> = HashMap::new();
        dist.insert(Key::EMPTY, 1.0);
        for a in db {
            let q: Vec<(u32, f64)> = self
                .record_distribution(a, db, member)
                .into_iter()
                .map(|(x, p)| (self.code(&x), p))
                .collect();
            let released: f64 = q.iter().map(|c| c.1).sum::<f64>() * keep;
            let mut next: HashMap<Key, f64> = HashMap::with_capacity(dist.len() * (q.len() + 1));
            for (&g, &p) in &dist {
                *next.entry(g).or_default() += p * (1.0 - released);
                for &(x, px) in &q {
                    *next.entry(g.with(x)).or_default() += p * keep * px;
                }
            }
            dist = next;
        }
        dist
    }

    /// A number for an element (mixed radix over the node counts).
    pub fn code(&self, x: &[u32]) -> u32 {
        self.vghs
            .iter()
            .zip(x)
            .fold(0u32, |acc, (h, &v)| acc * h.parents.len() as u32 + v)
    }

    pub fn decode(&self, mut code: u32) -> Element {
        let mut x = vec![0; self.k()];
        for i in (0..self.k()).rev() {
            let n = self.vghs[i].parents.len() as u32;
            x[i] = code % n;
            code /= n;
        }
        x
    }

    /// Every element some record of `db` can release (∪ a⁺).
    pub fn reachable(&self, db: &[Element]) -> Vec<Element> {
        let mut all: Vec<Element> = db.iter().flat_map(|a| self.chain_product(a)).collect();
        all.sort();
        all.dedup();
        all
    }
}

/// A multiset of at most 10 element codes below 64, packed: the length in the top 4 bits, the codes sorted
/// in 6-bit slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub u64);

impl Key {
    pub const EMPTY: Key = Key(0);

    pub fn len(self) -> usize {
        (self.0 >> 60) as usize
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    pub fn codes(self) -> Vec<u32> {
        (0..self.len()).map(|i| ((self.0 >> (6 * i)) & 63) as u32).collect()
    }

    pub fn of(codes: &[u32]) -> Key {
        let mut sorted = codes.to_vec();
        sorted.sort_unstable();
        assert!(sorted.len() <= 10 && sorted.iter().all(|&c| c < 64));
        let mut k = (sorted.len() as u64) << 60;
        for (i, &c) in sorted.iter().enumerate() {
            k |= u64::from(c) << (6 * i);
        }
        Key(k)
    }

    pub fn with(self, code: u32) -> Key {
        let mut c = self.codes();
        c.push(code);
        Key::of(&c)
    }
}

/// P(Z ≥ z) for the discrete Laplace of scale s (P(Z = z) ∝ e^{−|z|/s}).
pub fn laplace_tail(z: i64, scale: u64) -> f64 {
    let alpha = (-1.0 / scale as f64).exp();
    if z >= 1 {
        alpha.powi(z as i32) / (1.0 + alpha)
    } else {
        1.0 - alpha.powi((1 - z) as i32) / (1.0 + alpha)
    }
}

/// P(Z ≥ z) for discrete Gaussian noise of variance σ² (P(Z = x) ∝ e^{−x²/(2σ²)}), summed term by term.
pub fn gaussian_tail(z: i64, s2: f64) -> f64 {
    let w = (40.0 * s2.sqrt()).ceil() as i64 + 5;
    let mass = |x: i64| (-((x * x) as f64) / (2.0 * s2)).exp();
    let total: f64 = (-w..=w).map(mass).sum();
    if z > w {
        return 0.0;
    }
    (z.max(-w)..=w).map(mass).sum::<f64>() / total
}

/// The privacy profile of two output distributions P (database D) and Q (its neighbour D′).
#[derive(Clone, Copy, Debug, Default)]
pub struct Profile {
    /// The largest finite |ln P(G)/Q(G)| over the union of the supports.
    pub max_finite_loss: f64,
    /// Whether some output has probability 0 under one and not the other.
    pub infinite: bool,
    /// P[|loss| > ε] under P, and under Q (the mass outside e^{±ε}, Definition 4 of the paper).
    pub outside_p: f64,
    pub outside_q: f64,
    /// The (ε, δ) hockey-stick divergences Σ max(0, P − e^ε Q) and Σ max(0, Q − e^ε P).
    pub hockey_p: f64,
    pub hockey_q: f64,
}

impl Profile {
    pub fn outside(&self) -> f64 {
        self.outside_p.max(self.outside_q)
    }

    pub fn hockey(&self) -> f64 {
        self.hockey_p.max(self.hockey_q)
    }

    pub fn merge(&mut self, o: &Profile) {
        self.max_finite_loss = self.max_finite_loss.max(o.max_finite_loss);
        self.infinite |= o.infinite;
        self.outside_p = self.outside_p.max(o.outside_p);
        self.outside_q = self.outside_q.max(o.outside_q);
        self.hockey_p = self.hockey_p.max(o.hockey_p);
        self.hockey_q = self.hockey_q.max(o.hockey_q);
    }
}

/// Probabilities below this are treated as 0 (rounding residue of sums of products).
pub const ZERO: f64 = 1e-300;

pub fn profile<K: std::hash::Hash + Eq + Clone>(p: &HashMap<K, f64>, q: &HashMap<K, f64>, epsilon: f64) -> Profile {
    let mut r = Profile::default();
    let e = epsilon.exp();
    let mut keys: Vec<&K> = p.keys().collect();
    keys.extend(q.keys().filter(|k| !p.contains_key(*k)));
    for key in keys {
        let a = p.get(key).copied().unwrap_or(0.0);
        let b = q.get(key).copied().unwrap_or(0.0);
        r.hockey_p += (a - e * b).max(0.0);
        r.hockey_q += (b - e * a).max(0.0);
        if a <= ZERO && b <= ZERO {
            continue;
        }
        if a <= ZERO || b <= ZERO {
            r.infinite = true;
            r.outside_p += a;
            r.outside_q += b;
            continue;
        }
        let loss = (a / b).ln();
        r.max_finite_loss = r.max_finite_loss.max(loss.abs());
        if loss.abs() > epsilon {
            r.outside_p += a;
            r.outside_q += b;
        }
    }
    r
}
