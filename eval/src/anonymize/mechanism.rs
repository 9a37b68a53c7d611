//! The per-record models and Algorithm 3 on a [`Space`]: the non-private optima of the Lagrangian and the
//! threshold model, the parameters of the private release (condition (10) from the core), and the release
//! itself, simulated per run from the precomputed counts with the core's coins and selector.
//!
//! **What runs in the core and what here.** `dpmo::generalize` validates the settings, computes η(k), ε′,
//! the smallest t of condition (10) and the noisy threshold of the private 𝓛′ ([`Parameters`]); the
//! per-record coin is the core's exact Bernoulli trial, the choice the core's exact exponential mechanism
//! (`select_exponential`, or the uniform index when ε′ = 0), the noise of the private 𝓛′ the core's
//! `frequency_noise` on the core's element index. What this module does itself is what `release` does with
//! the counts — candidates a⁺ ∩ 𝓛′ (and u ≥ c), their unnormalized scores σ and the selector's scale
//! 2ε′η/m̄ — reading the counts from the [`Space`] instead of recounting D per record (see `space`). Every
//! run checks the candidates' probabilities against the core's `record_probabilities` on sampled records.
//!
//! **The private 𝓛′ without a million noise draws.** Two noises: the core's discrete Laplace frequent set
//! (`FrequentSet::Private`, kept as the "before") and its discrete Gaussian one (`FrequentSet::Gaussian`,
//! the C ABI's). The Laplace one first: x ∈ 𝓛′ when |ρ(x, D)| + Z_x ≥ T, with Z_x discrete
//! Laplace of scale s = ⌈N/ε_F⌉ for every distinct *value vector* x of ⋃ a⁺ (the core indexes the noise by
//! x's index in 𝓛, not by its level vector): 3,416,804 of them on Adult, against N = 2,160 level vectors.
//! At ~5 µs per exact draw that is ~18 s per run, and no cut-off can skip them exactly: T ≈ t + 21.5 s, so
//! an element with one record under it still enters with probability ~e^{−21.5} at ε_F = 0.1 (~e^{−33} at
//! ε_F = 5), far above any negligible bound once multiplied by 3.4 · 10⁶ elements. The simulation draws
//! the same memberships in two stages instead ([`NoisyMembership`]): with the split gap G = 10 s, an element
//! whose gap T − |ρ(x, D)| is below G (a few hundred at most, the coarse ones) gets the core's
//! `frequency_noise` on its index, as the core's release does; an element with gap g ≥ G first flips an
//! exact coin Bernoulli(P(Z ≥ G)), P(Z ≥ G) = r^G/(1 + r) with r = e^{−1/s}, and only when it comes up
//! draws Z from its law conditioned on Z ≥ G — by the memorylessness of the discrete Laplace tail,
//! G − 1 + Z′ with Z′ the core's `discrete_laplace` conditioned on Z′ ≥ 1 (rejection, two tries on
//! average). Since Z_x ≥ g implies Z_x ≥ G, each membership has exactly its probability P(Z ≥ g) and the
//! memberships stay independent; the one rounding is P(Z ≥ G) to a double (relative error ≤ 2⁻⁵⁰), a total
//! variation below 10⁻¹² per run. About 77 of the 3.4 · 10⁶ coins come up per run; a run of step 1 costs
//! ~3.4 · 10⁶ exact Bernoulli coins and a few hundred exact noise draws. The unit tests check both stages
//! against the core's noise at α = 10⁻⁶ and catch a wrong tail and an off-by-one conditional draw.
//!
//! The Gaussian frequent set ([`GaussianMembership`]) splits the same way, with the split gap G = 10σ: an
//! element whose gap is below G gets the core's `frequency_noise_gaussian` on its index; an element with gap
//! g ≥ G is a member with probability P(Z ≥ g), flipped as one exact Bernoulli coin on the double nearest
//! that tail (summed term by term once per run: a relative error of 10⁻¹⁵, a total variation below 10⁻¹²
//! per run), P(Z ≥ 10σ) being about 10⁻²³. The unit tests check both stages against the core's noise.

use super::space::Space;
use anyhow::{anyhow, Result};
use dpmo::exact::discrete::{discrete_laplace, LaplaceRate};
use dpmo::generalize::frequency::{frequency_noise, frequency_noise_gaussian, NoisyThreshold};
use dpmo::generalize::sampling::bernoulli;
use dpmo::generalize::{FrequentNoise, GaussianThreshold};
use dpmo::generalize::{FrequentSet, Lattice, Objective, Parameters, Settings, UtilityMeasure};
use rand_core::Rng;
use std::collections::{HashMap, HashSet};

/// The public model constants (Model II risk, Φ ≡ 1; utility d_i = ln(n_i(⊥)/n_i(x_i))).
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// λ of the Lagrangian f = λ|ρ|/Φ + u^κ.
    pub lambda: f64,
    /// κ.
    pub kappa: u32,
    /// The utility threshold c of the threshold model.
    pub c: f64,
    /// The smaller utility threshold of the threshold model shown beside it.
    pub c_low: f64,
    /// δ of Theorem 4 (and δ_F of the private 𝓛′).
    pub delta: f64,
    /// n₀, the public lower bound of |D| in η(k).
    pub min_records: u64,
}

/// Which per-record model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// f^a (eq. 4).
    Lagrangian,
    /// min r^a s.t. u ≥ c (Def. 1).
    Threshold,
    /// The same with the smaller utility floor c_low.
    ThresholdLow,
}

impl Kind {
    /// Name in file and method names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lagrangian => "lagrangian",
            Kind::Threshold => "threshold",
            Kind::ThresholdLow => "threshold-low-c",
        }
    }

    /// The utility floor c of the threshold kinds.
    pub fn floor(self, model: &Model) -> Option<f64> {
        match self {
            Kind::Lagrangian => None,
            Kind::Threshold => Some(model.c),
            Kind::ThresholdLow => Some(model.c_low),
        }
    }
}

/// How step 1 builds 𝓛′.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step1 {
    /// The paper's exact t-frequent set (not differentially private, see `dpmo::generalize::frequency`).
    Exact,
    /// dpmo's noisy frequent set with discrete Laplace noise, ε_F = ε, δ_F = δ (total (2ε, 2δ)).
    Laplace,
    /// dpmo's noisy frequent set with discrete Gaussian noise, ε_F = ε, δ_F = δ (total (2ε, 2δ)).
    Gaussian,
}

impl Step1 {
    /// Name in method names.
    pub fn name(self) -> &'static str {
        match self {
            Step1::Exact => "exact-L'",
            Step1::Laplace => "laplace-L'",
            Step1::Gaussian => "gaussian-L'",
        }
    }
}

/// Φ (Model II) and the objective of the core for `kind`.
pub fn objective(model: &Model, kind: Kind) -> Objective {
    match kind {
        Kind::Lagrangian => Objective::Lagrangian {
            lambda: model.lambda,
            kappa: model.kappa,
            phi_min: 1.0,
        },
        Kind::Threshold | Kind::ThresholdLow => Objective::Threshold {
            c: kind.floor(model).unwrap_or(model.c),
            phi_max: 1.0,
        },
    }
}

/// A record's optimum: its position in a⁺, utility and risk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// Index in a⁺ (core order).
    pub j: usize,
    /// u(x).
    pub utility: f64,
    /// r(x) = Φ/|ρ(x, D)|.
    pub risk: f64,
}

/// The non-private per-record optimum of class `ci` (the core's rules: the Lagrangian's first maximum; the
/// threshold model's least risk with u ≥ c, ties to larger u then the first; None when no element reaches
/// c).
pub fn optimum(space: &Space, model: &Model, kind: Kind, ci: usize) -> Result<Option<Choice>> {
    let phi = space.phi_model_ii();
    let counts = space.counts_of(ci);
    let u = space.utilities(ci);
    let mut best: Option<(Choice, f64)> = None;
    for j in 0..space.n {
        let count = u64::from(counts[j]);
        let r = phi / count as f64;
        let better = match kind {
            Kind::Lagrangian => {
                let f = dpmo::generalize::lagrangian(model.lambda, model.kappa, 1.0, phi, count, u[j])?;
                let b = best.is_none_or(|(_, bf)| f > bf);
                if b {
                    best = Some((
                        Choice {
                            j,
                            utility: u[j],
                            risk: r,
                        },
                        f,
                    ));
                }
                continue;
            }
            Kind::Threshold | Kind::ThresholdLow => {
                let c = kind.floor(model).unwrap_or(model.c);
                u[j] >= c && best.is_none_or(|(b, _)| r < b.risk || (r == b.risk && u[j] > b.utility))
            }
        };
        if better {
            best = Some((
                Choice {
                    j,
                    utility: u[j],
                    risk: r,
                },
                0.0,
            ));
        }
    }
    Ok(best.map(|b| b.0))
}

/// The validated parameters of one setting, with τ₁ chosen to make t smallest.
pub struct Setting {
    /// The core's parameters (t = the smallest admissible t of condition (10)).
    pub params: Parameters,
    /// The τ₁ that minimized t over the grid 0.05, 0.10, …, 0.95.
    pub tau1: f64,
}

/// The parameters for (kind, ε, β, step 1) with ε_F = ε, or the reason none exist (condition (10)
/// unsatisfiable).
pub fn setting(
    lattice: &Lattice<'_>,
    model: &Model,
    kind: Kind,
    epsilon: f64,
    beta: f64,
    step1: Step1,
) -> Result<Setting> {
    setting_split(lattice, model, kind, epsilon, beta, step1, epsilon)
}

/// The same with ε_F = `frequency_epsilon` (a budget split other than ε_F = ε).
pub fn setting_split(
    lattice: &Lattice<'_>,
    model: &Model,
    kind: Kind,
    epsilon: f64,
    beta: f64,
    step1: Step1,
    frequency_epsilon: f64,
) -> Result<Setting> {
    let settings = |tau1: f64, t: u64| Settings {
        epsilon,
        beta,
        delta: model.delta,
        tau1,
        t,
        min_records: model.min_records,
        objective: objective(model, kind),
        utility: UtilityMeasure::LogRatio,
        frequent: match step1 {
            Step1::Exact => FrequentSet::Exact,
            Step1::Laplace => FrequentSet::Private {
                epsilon: frequency_epsilon,
                delta: model.delta,
            },
            Step1::Gaussian => FrequentSet::Gaussian {
                epsilon: frequency_epsilon,
                delta: model.delta,
            },
        },
    };
    let mut best: Option<(u64, f64)> = None;
    for i in 1..20 {
        let tau1 = f64::from(i) * 0.05;
        if let Ok(p) = Parameters::without_condition_10(lattice, settings(tau1, 2)) {
            let t = p.smallest_t();
            if best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, tau1));
            }
        }
    }
    let (t, tau1) =
        best.ok_or_else(|| anyhow!("condition (10) cannot be met for any τ₁ (ε = {epsilon}, β = {beta})"))?;
    let params = Parameters::new(lattice, settings(tau1, t)).map_err(|e| anyhow!("{e:?}"))?;
    Ok(Setting { params, tau1 })
}

/// ε_sel = 2ε′η/m̄ rounded down, as the core's `release` computes it.
pub fn selector_scale(params: &Parameters, m: usize) -> f64 {
    let divisor = (m as f64).max(params.settings().min_records as f64 + 1.0);
    let a = 2.0 * params.epsilon_prime();
    let eta = params.eta();
    let mut b = a * eta;
    if b.is_finite() && a.mul_add(eta, -b) < 0.0 {
        b = b.next_down().max(0.0);
    }
    let mut q = b / divisor;
    if q.is_finite() && q.mul_add(divisor, -b) > 0.0 {
        q = q.next_down().max(0.0);
    }
    q
}

/// The candidates of one record: positions in a⁺ and unnormalized scores σ, as the core builds them.
#[derive(Clone, Debug, Default)]
pub struct Candidates {
    /// Positions in a⁺.
    pub j: Vec<usize>,
    /// σ = λ|ρ|/max(Φ, φ_min) + u^κ, or −min(Φ, φ_max)/max(|ρ|, t).
    pub sigma: Vec<f64>,
    /// u of each candidate.
    pub utility: Vec<f64>,
    /// Φ/|ρ| of each candidate.
    pub risk: Vec<f64>,
}

/// The candidates of class ci given a membership test `member(j, count)` for 𝓛′, asked only of elements
/// with at least `floor` records (the caller knows the others are not in 𝓛′).
pub fn candidates(
    space: &Space,
    params: &Parameters,
    ci: usize,
    floor: u64,
    member: &mut dyn FnMut(usize, u64) -> bool,
) -> Candidates {
    let phi = space.phi_model_ii();
    let counts = space.counts_of(ci);
    let mut u: Option<Vec<f64>> = None;
    let mut out = Candidates::default();
    let t = params.settings().t;
    let floor = u32::try_from(floor).unwrap_or(u32::MAX);
    for (j, &c) in counts.iter().enumerate() {
        if c < floor {
            continue;
        }
        let count = u64::from(c);
        if !member(j, count) {
            continue;
        }
        let uj = u.get_or_insert_with(|| space.utilities(ci))[j];
        let sigma = match params.settings().objective {
            Objective::Lagrangian { lambda, kappa, phi_min } => {
                lambda / phi.max(phi_min) * count as f64 + uj.powi(kappa as i32)
            }
            Objective::Threshold { c, phi_max } => {
                if uj < c {
                    continue;
                }
                -(phi.min(phi_max) / count.max(t) as f64)
            }
        };
        out.j.push(j);
        out.sigma.push(sigma);
        out.utility.push(uj);
        out.risk.push(phi / count as f64);
    }
    out
}

/// The probabilities the selector draws the candidates with: ∝ exp(scale · σ/(2η)).
pub fn probabilities(c: &Candidates, params: &Parameters, scale: f64) -> Vec<f64> {
    let top = c.sigma.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = c
        .sigma
        .iter()
        .map(|&s| ((s - top) * scale / (2.0 * params.eta())).exp())
        .collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|x| x / total).collect()
}

/// One run's release, summarized.
#[derive(Clone, Copy, Debug, Default)]
pub struct Released {
    /// Records released.
    pub count: usize,
    /// Σ u over the released generalizations.
    pub utility: f64,
    /// Σ r over them.
    pub risk: f64,
    /// |𝓛′ ∩ ⋃ a⁺|: the frequent elements the records could use.
    pub frequent: usize,
}

/// One run of Algorithm 3: the exact 𝓛′ (`fixed`, the candidates of every class, precomputed) or the
/// private one (drawn here with a fresh key).
pub fn run<R: Rng>(
    rng: &mut R,
    space: &Space,
    params: &Parameters,
    scale: f64,
    fixed: Option<&[Candidates]>,
) -> Result<Released> {
    let beta = params.settings().beta;
    let drawn;
    let cands: &[Candidates] = match fixed {
        Some(c) => c,
        None => {
            drawn = private_candidates(rng, space, params)?;
            &drawn
        }
    };
    let mut out = Released {
        frequent: distinct_frequent(space, cands),
        ..Released::default()
    };
    for (ci, c) in cands.iter().enumerate() {
        for _ in 0..space.mult[ci] {
            if bernoulli(rng, beta) {
                continue; // not sampled
            }
            if c.j.is_empty() {
                continue; // no admissible generalization: not released
            }
            let i = if scale == 0.0 {
                dpmo::sample::uniform_index(rng, c.j.len())
            } else {
                dpmo::select::select_exponential(rng, &c.sigma, params.eta(), scale).map_err(|e| anyhow!("{e:?}"))?
            };
            out.count += 1;
            out.utility += c.utility[i];
            out.risk += c.risk[i];
        }
    }
    Ok(out)
}

/// The candidates of every class under the exact 𝓛′ (|ρ| ≥ t).
pub fn exact_candidates(space: &Space, params: &Parameters) -> Vec<Candidates> {
    let t = params.settings().t;
    (0..space.classes_len())
        .map(|ci| candidates(space, params, ci, t, &mut |_, count| count >= t))
        .collect()
}

/// The split gap G in units of the noise scale s (module docs): the elements with T − |ρ| < G s draw the
/// core's noise on their index, the others two-stage.
const SPLIT_SCALES: u64 = 10;

/// P(Z ≥ g) for discrete Laplace noise of scale s (P(Z = z) ∝ e^{−|z|/s}) and g ≥ 1: the tail
/// Σ_{z ≥ g} (1 − r)/(1 + r) · r^z = r^g/(1 + r), r = e^{−1/s}.
pub fn noise_tail(g: u64, s: u64) -> f64 {
    let s = s as f64;
    (-(g as f64) / s).exp() / (1.0 + (-1.0 / s).exp())
}

/// The memberships of one private 𝓛′ (module docs): x ∈ 𝓛′ when |ρ(x, D)| + Z_x ≥ T.
pub struct NoisyMembership {
    /// The core's T and s.
    pub noisy: NoisyThreshold,
    /// G = 10 s (at least 1).
    pub gap: u64,
    /// P(Z ≥ G), rounded to a double.
    pub tail: f64,
    rate: LaplaceRate,
    key: [u8; 32],
}

impl NoisyMembership {
    /// A fresh private 𝓛′: 32 key bytes from `rng` for the core's noise of the coarse elements; G = 10 s.
    pub fn new<R: Rng>(rng: &mut R, noisy: NoisyThreshold) -> Result<NoisyMembership> {
        Self::with_gap(rng, noisy, noisy.scale.saturating_mul(SPLIT_SCALES))
    }

    /// The same with the split gap G = `gap` (at least 1): any G gives the same memberships, G only moves
    /// work between the two stages.
    pub fn with_gap<R: Rng>(rng: &mut R, noisy: NoisyThreshold, gap: u64) -> Result<NoisyMembership> {
        let rate = LaplaceRate::new(noisy.scale as f64, 1.0).map_err(|e| anyhow!("{e:?}"))?;
        let gap = gap.max(1);
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        Ok(NoisyMembership {
            noisy,
            gap,
            tail: noise_tail(gap, noisy.scale),
            rate,
            key,
        })
    }

    /// Whether an element with `count` records under it is drawn two-stage (its gap T − count is ≥ G).
    pub fn two_stage(&self, count: u64) -> bool {
        count.saturating_add(self.gap) <= self.noisy.threshold
    }

    /// The membership of an element with T − `count` ≥ G, two-stage: Bernoulli(P(Z ≥ G)), then Z given
    /// Z ≥ G as G − 1 + Z′, Z′ the core's discrete Laplace given Z′ ≥ 1.
    pub fn two_stage_member<R: Rng>(&self, rng: &mut R, count: u64) -> bool {
        debug_assert!(self.two_stage(count));
        if !bernoulli(rng, self.tail) {
            return false;
        }
        let z = loop {
            let z = discrete_laplace(rng, &self.rate);
            if z >= 1 {
                break z as u64;
            }
        };
        count.saturating_add(self.gap - 1).saturating_add(z) >= self.noisy.threshold
    }

    /// The membership of the element of index `index` in 𝓛, by the core's noise Z_x (as `release` draws it).
    pub fn core_member(&self, index: u64, count: u64) -> Result<bool> {
        let z = frequency_noise(&self.key, index, self.noisy.scale).map_err(|e| anyhow!("{e:?}"))?;
        Ok(i128::from(count) + i128::from(z) >= i128::from(self.noisy.threshold))
    }
}

/// The memberships of one Gaussian private 𝓛′ (module docs): x ∈ 𝓛′ when |ρ(x, D)| + Z_x ≥ T.
pub struct GaussianMembership {
    /// The core's σ² and T.
    pub noisy: GaussianThreshold,
    /// G = ⌈10σ⌉ (at least 1).
    pub gap: u64,
    /// P(Z ≥ g) for g = G, G + 1, … (as far as it is not 0).
    tails: Vec<f64>,
    key: [u8; 32],
}

/// P(Z ≥ g) for g = from, from + 1, … of the discrete Gaussian of variance σ², summed term by term from
/// the far tail (where the terms vanish) down, until it underflows beyond `from`.
fn gaussian_tails(s2: f64, from: u64) -> Vec<f64> {
    let sigma = s2.sqrt();
    let w = (40.0 * sigma).ceil() as i64 + 5;
    let mass = |z: i64| (-((z * z) as f64) / (2.0 * s2)).exp();
    let total: f64 = (-w..=w).map(mass).sum();
    let from = from as i64;
    if from > w {
        return Vec::new();
    }
    let mut tails = vec![0.0; (w - from + 1) as usize];
    let mut acc = 0.0;
    for z in (from..=w).rev() {
        acc += mass(z) / total;
        tails[(z - from) as usize] = acc;
    }
    while tails.last() == Some(&0.0) {
        tails.pop();
    }
    tails
}

impl GaussianMembership {
    /// A fresh Gaussian 𝓛′: 32 key bytes from `rng` for the core's noise of the coarse elements; G = ⌈10σ⌉.
    pub fn new<R: Rng>(rng: &mut R, noisy: GaussianThreshold) -> Result<GaussianMembership> {
        let gap = (10.0 * noisy.variance.value().sqrt()).ceil() as u64;
        Self::with_gap(rng, noisy, gap)
    }

    /// The same with the split gap G = `gap` (at least 1).
    pub fn with_gap<R: Rng>(rng: &mut R, noisy: GaussianThreshold, gap: u64) -> Result<GaussianMembership> {
        let gap = gap.max(1);
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        Ok(GaussianMembership {
            noisy,
            gap,
            tails: gaussian_tails(noisy.variance.value(), gap),
            key,
        })
    }

    /// Whether an element with `count` records under it is drawn by a tail coin (its gap T − count ≥ G).
    pub fn two_stage(&self, count: u64) -> bool {
        count.saturating_add(self.gap) <= self.noisy.threshold
    }

    /// The membership of an element with T − `count` ≥ G: one exact coin on P(Z ≥ T − count).
    pub fn two_stage_member<R: Rng>(&self, rng: &mut R, count: u64) -> bool {
        let g = self.noisy.threshold - count;
        let p = self.tails.get((g - self.gap) as usize).copied().unwrap_or(0.0);
        p > 0.0 && bernoulli(rng, p)
    }

    /// The membership of the element of index `index` in 𝓛, by the core's noise Z_x (as `release` draws it).
    pub fn core_member(&self, index: u64, count: u64) -> bool {
        let z = frequency_noise_gaussian(&self.key, index, &self.noisy.variance);
        i128::from(count) + i128::from(z) >= i128::from(self.noisy.threshold)
    }
}

/// One private 𝓛′, Laplace or Gaussian.
enum Membership {
    Laplace(NoisyMembership),
    Gaussian(GaussianMembership),
}

impl Membership {
    fn threshold(&self) -> u64 {
        match self {
            Membership::Laplace(m) => m.noisy.threshold,
            Membership::Gaussian(m) => m.noisy.threshold,
        }
    }
    fn gap(&self) -> u64 {
        match self {
            Membership::Laplace(m) => m.gap,
            Membership::Gaussian(m) => m.gap,
        }
    }
    fn two_stage(&self, count: u64) -> bool {
        match self {
            Membership::Laplace(m) => m.two_stage(count),
            Membership::Gaussian(m) => m.two_stage(count),
        }
    }
    fn two_stage_member<R: Rng>(&self, rng: &mut R, count: u64) -> bool {
        match self {
            Membership::Laplace(m) => m.two_stage_member(rng, count),
            Membership::Gaussian(m) => m.two_stage_member(rng, count),
        }
    }
    fn core_member(&self, index: u64, count: u64) -> Result<bool> {
        match self {
            Membership::Laplace(m) => m.core_member(index, count),
            Membership::Gaussian(m) => Ok(m.core_member(index, count)),
        }
    }
}

/// The candidates of every class under a freshly drawn private 𝓛′: x ∈ 𝓛′ when |ρ(x, D)| + Z_x ≥ T, Z_x
/// drawn once per distinct element of ⋃ a⁺ (module docs).
pub fn private_candidates<R: Rng>(rng: &mut R, space: &Space, params: &Parameters) -> Result<Vec<Candidates>> {
    let noisy = match params.frequent_noise() {
        Some(FrequentNoise::Laplace(nt)) => Membership::Laplace(NoisyMembership::new(rng, nt)?),
        Some(FrequentNoise::Gaussian(g)) => Membership::Gaussian(GaussianMembership::new(rng, g)?),
        None => return Err(anyhow!("the private frequent set needs its noise")),
    };
    // The fine elements, in index order: almost always none enters.
    let fine: HashSet<u64> = space
        .elements
        .iter()
        .filter(|&&(_, c)| noisy.two_stage(u64::from(c)))
        .filter(|&&(_, c)| noisy.two_stage_member(rng, u64::from(c)))
        .map(|&(x, _)| x)
        .collect();
    let mut coarse: HashMap<u64, bool> = HashMap::new();
    let mut err = None;
    // Without fine members only the coarse elements (T − |ρ| < G) can be in 𝓛′.
    let floor = if fine.is_empty() {
        noisy.threshold().saturating_sub(noisy.gap()) + 1
    } else {
        0
    };
    let out = (0..space.classes_len())
        .map(|ci| {
            candidates(space, params, ci, floor, &mut |j, count| {
                if noisy.two_stage(count) {
                    return !fine.is_empty() && fine.contains(&space.key_at(ci, j));
                }
                let x = space.key_at(ci, j);
                *coarse.entry(x).or_insert_with(|| {
                    noisy.core_member(x, count).unwrap_or_else(|e| {
                        err = Some(e);
                        false
                    })
                })
            })
        })
        .collect();
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn distinct_frequent(space: &Space, cands: &[Candidates]) -> usize {
    let mut keys = HashSet::new();
    for (ci, c) in cands.iter().enumerate() {
        keys.extend(c.j.iter().map(|&j| space.key_at(ci, j)));
    }
    keys.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// z of `hits` successes in n trials against probability p; |z| < 4.89 is α = 10⁻⁶ two-sided.
    fn z_of(hits: usize, n: usize, p: f64) -> f64 {
        (hits as f64 - n as f64 * p) / (n as f64 * p * (1.0 - p)).sqrt()
    }
    const Z: f64 = 4.89;

    #[test]
    fn the_tail_is_the_core_noise_tail() {
        // P(Z ≥ g) of the core's frequency_noise over 200,000 streams of one key, against r^g/(1 + r); the
        // one-sided geometric tail r^g (without 1/(1 + r)) is refused by the same test.
        let (s, n) = (3u64, 200_000usize);
        let key = [7u8; 32];
        let z: Vec<i64> = (0..n as u64).map(|i| frequency_noise(&key, i, s).unwrap()).collect();
        for g in [1u64, 2, 4, 7] {
            let hits = z.iter().filter(|&&x| x >= g as i64).count();
            let p = noise_tail(g, s);
            assert!(z_of(hits, n, p).abs() < Z, "g = {g}: {hits} of {n} against {p}");
            let broken = (-(g as f64) / s as f64).exp();
            assert!(z_of(hits, n, broken).abs() > Z, "g = {g}: the broken tail passes");
        }
    }

    /// The largest |z| of the membership frequencies of `member` (10⁶ trials per count) against the core's
    /// P(|ρ| + Z ≥ T) = P(Z ≥ T − count) for scale 3, T = 20 and counts with gaps 2 (= G), 3, 5, 9.
    fn worst_z(member: &mut dyn FnMut(u64) -> bool) -> f64 {
        let n = 1_000_000;
        [18u64, 17, 15, 11]
            .iter()
            .map(|&c| {
                let hits = (0..n).filter(|_| member(c)).count();
                z_of(hits, n, noise_tail(20 - c, 3)).abs()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn two_stage_memberships_have_the_core_probabilities() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let nt = NoisyThreshold {
            scale: 3,
            threshold: 20,
        };
        let noisy = NoisyMembership::with_gap(&mut rng, nt, 2).unwrap();
        assert!(noisy.two_stage(18) && !noisy.two_stage(19));
        let z = worst_z(&mut |c| noisy.two_stage_member(&mut rng, c));
        assert!(z < Z, "two-stage memberships off by z = {z}");
        // The same memberships drawn by the core's noise directly pass too (the reference of the test) …
        let mut i = 0u64;
        let z = worst_z(&mut |c| {
            i += 1;
            noisy.core_member(i, c).unwrap()
        });
        assert!(z < Z, "core memberships off by z = {z}");
        // … and the conditional draw off by one (G + Z′ instead of G − 1 + Z′) is caught.
        let z = worst_z(&mut |c| {
            bernoulli(&mut rng, noisy.tail) && {
                let z = loop {
                    let z = discrete_laplace(&mut rng, &noisy.rate);
                    if z >= 1 {
                        break z as u64;
                    }
                };
                c + noisy.gap + z >= 20
            }
        });
        assert!(z > Z, "an off-by-one conditional draw passes (z = {z})");
        // The split is the documented one: G = 10 s.
        let noisy = NoisyMembership::new(
            &mut rng,
            NoisyThreshold {
                scale: 432,
                threshold: 14_160,
            },
        )
        .unwrap();
        assert_eq!(noisy.gap, 4_320);
        assert!(noisy.two_stage(9_840) && !noisy.two_stage(9_841));
    }

    #[test]
    fn gaussian_memberships_have_the_core_probabilities() {
        // σ² = 4, T = 20: both stages (split at G = 3) against the exact tails P(Z ≥ 20 − count), and the
        // core's noise itself; a tail one step off is caught.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let noisy = GaussianThreshold {
            variance: dpmo::exact::gaussian::GaussianVariance::new(4, 1).unwrap(),
            threshold: 20,
        };
        let m = GaussianMembership::with_gap(&mut rng, noisy, 3).unwrap();
        assert!(m.two_stage(17) && !m.two_stage(18));
        let exact = |g: i64| gaussian_tails(4.0, g as u64).first().copied().unwrap_or(0.0);
        let worst = |member: &mut dyn FnMut(u64) -> bool, off: i64| {
            let n = 1_000_000;
            [17u64, 16, 15]
                .iter()
                .map(|&c| {
                    let hits = (0..n).filter(|_| member(c)).count();
                    z_of(hits, n, exact(20 - c as i64 + off)).abs()
                })
                .fold(0.0, f64::max)
        };
        let z = worst(&mut |c| m.two_stage_member(&mut rng, c), 0);
        assert!(z < Z, "tail coins off by z = {z}");
        let mut i = 0u64;
        let z = worst(
            &mut |c| {
                i += 1;
                m.core_member(i, c)
            },
            0,
        );
        assert!(z < Z, "core memberships off by z = {z}");
        let z = worst(&mut |c| m.two_stage_member(&mut rng, c), 1);
        assert!(z > Z, "a tail one step off passes (z = {z})");
        // G = ⌈10σ⌉.
        assert_eq!(GaussianMembership::new(&mut rng, noisy).unwrap().gap, 20);
    }
}
