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
//! The one approximation: with the private 𝓛′, the noise Z_x is drawn only for elements with
//! |ρ(x, D)| ≥ T − B, B = 50 s; the others would enter 𝓛′ with probability at most e^{−50} each, so the
//! simulated release differs from the core's in total variation by less than N · c · e^{−50} < 10⁻¹².

use super::space::Space;
use anyhow::{anyhow, Result};
use dpmo::generalize::frequency::frequency_noise;
use dpmo::generalize::sampling::bernoulli;
use dpmo::generalize::{FrequentSet, Lattice, Objective, Parameters, Settings, UtilityMeasure};
use rand_core::Rng;
use std::collections::HashMap;

/// The public model constants (Model II risk, Φ ≡ 1; utility d_i = ln(n_i(⊥)/n_i(x_i))).
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// λ of the Lagrangian f = λ|ρ|/Φ + u^κ.
    pub lambda: f64,
    /// κ.
    pub kappa: u32,
    /// The utility threshold c of the threshold model.
    pub c: f64,
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
}

impl Kind {
    /// Name in file and method names.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lagrangian => "lagrangian",
            Kind::Threshold => "threshold",
        }
    }
}

/// How step 1 builds 𝓛′.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step1 {
    /// The paper's exact t-frequent set (not differentially private, see `dpmo::generalize::frequency`).
    Exact,
    /// dpmo's noisy frequent set with ε_F = ε, δ_F = δ (total (2ε, 2δ)).
    Private,
}

impl Step1 {
    /// Name in method names.
    pub fn name(self) -> &'static str {
        match self {
            Step1::Exact => "exact-L'",
            Step1::Private => "private-L'",
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
        Kind::Threshold => Objective::Threshold {
            c: model.c,
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
            Kind::Threshold => {
                u[j] >= model.c && best.is_none_or(|(b, _)| r < b.risk || (r == b.risk && u[j] > b.utility))
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

/// The parameters for (kind, ε, β, step 1), or the reason none exist (condition (10) unsatisfiable).
pub fn setting(
    lattice: &Lattice<'_>,
    model: &Model,
    kind: Kind,
    epsilon: f64,
    beta: f64,
    step1: Step1,
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
            Step1::Private => FrequentSet::Private {
                epsilon,
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

/// The candidates of class ci given a membership test `member(j, count)` for 𝓛′.
pub fn candidates(
    space: &Space,
    params: &Parameters,
    ci: usize,
    member: &mut dyn FnMut(usize, u64) -> bool,
) -> Candidates {
    let phi = space.phi_model_ii();
    let counts = space.counts_of(ci);
    let mut u: Option<Vec<f64>> = None;
    let mut out = Candidates::default();
    let t = params.settings().t;
    for (j, &c) in counts.iter().enumerate() {
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
        .map(|ci| candidates(space, params, ci, &mut |_, count| count >= t))
        .collect()
}

/// The candidates of every class under a freshly drawn private 𝓛′: x ∈ 𝓛′ when |ρ(x, D)| + Z_x ≥ T, Z_x
/// the core's noise for a key of 32 bytes from `rng` (module docs for the cut-off B).
pub fn private_candidates<R: Rng>(rng: &mut R, space: &Space, params: &Parameters) -> Result<Vec<Candidates>> {
    let nt = params
        .noisy_threshold()
        .ok_or_else(|| anyhow!("the private frequent set needs its noisy threshold"))?;
    let mut key = [0u8; 32];
    rng.fill_bytes(&mut key);
    let cutoff = nt.threshold.saturating_sub(nt.scale.saturating_mul(50));
    let mut memo: HashMap<u64, bool> = HashMap::new();
    let mut err = None;
    let out = (0..space.classes_len())
        .map(|ci| {
            let mut keys: Option<Vec<u64>> = None;
            candidates(space, params, ci, &mut |j, count| {
                if count < cutoff {
                    return false;
                }
                let ks = keys.get_or_insert_with(|| {
                    let mut k = vec![0u64; space.n];
                    space.keys(ci, &mut k);
                    k
                });
                *memo
                    .entry(ks[j])
                    .or_insert_with(|| match frequency_noise(&key, ks[j], nt.scale) {
                        Ok(z) => i128::from(count) + i128::from(z) >= i128::from(nt.threshold),
                        Err(e) => {
                            err = Some(e);
                            false
                        }
                    })
            })
        })
        .collect();
    match err {
        Some(e) => Err(anyhow!("{e:?}")),
        None => Ok(out),
    }
}

fn distinct_frequent(space: &Space, cands: &[Candidates]) -> usize {
    let mut keys = std::collections::HashSet::new();
    let mut buf = vec![0u64; space.n];
    for (ci, c) in cands.iter().enumerate() {
        if c.j.is_empty() {
            continue;
        }
        space.keys(ci, &mut buf);
        keys.extend(c.j.iter().map(|&j| buf[j]));
    }
    keys.len()
}
