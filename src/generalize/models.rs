//! The utility and risk models (paper §2.1–2.3) and their exact per-record optima.
//!
//! * Utility u(x) = Σ_i d_i(x_i) with d_i = 1/n_i(x_i) ([`UtilityMeasure::Reciprocal`], eq. (5) of its reference 13) or
//!   d_i = ln(n_i(⊥)/n_i(x_i)) ([`UtilityMeasure::LogRatio`], eq. (6) there); n_i(x) is the number of
//!   leaves under x. Both are non-negative and decrease towards ⊥.
//! * Risk r^a(x) = Φ^a(x)/|ρ(x, Θ)| with Φ^a(x) = Σ_i w_i^a(x_i): Model I, w_i^a(x_i) = 0 at ⊥ and a fixed
//!   weight w_i^a elsewhere (per record, or shared); Model II, w_i^a ≡ 1/k (so Φ^a ≡ 1).
//! * The threshold model (Def. 1): min r^a(x) subject to u(x) ≥ c over x ∈ a⁺. It is NP-hard when k is
//!   part of the input (Thm. 1, a reduction from densest ℓ-subgraph); [`threshold_optimum`] solves it
//!   exactly by enumerating a⁺, which the capacity [`MAX_CHAIN_PRODUCT`](super::MAX_CHAIN_PRODUCT) keeps
//!   bounded.
//! * The Lagrangian f^a(x) = λ/r^a(x) + u(x)^κ = λ|ρ(x, Θ)|/Φ^a(x) + u(x)^κ (eq. 4); polynomial by
//!   supermodular maximization (Thm. 2); [`lagrangian_optimum`] enumerates.
//!
//! **Where the paper's formulas are not defined.** Under Model I, Φ^a(⊥, …, ⊥) = 0, so r^a = 0 and
//! λ/r^a = ∞ at the top of every a⁺: the Lagrangian is unbounded and always picks ⊥, and the sensitivity
//! bound η(k) = 2(λ/φ(k) + …) of §3.3 needs Φ^a ≥ φ(k) > 0. dpmo therefore evaluates the Lagrangian with
//! Φ^a clamped below at a positive φ_min (the φ(k) of η(k)), which changes nothing where Φ^a ≥ φ_min.
//! The risk r^a(x) itself is reported unclamped; it needs |ρ(x, Θ)| ≥ 1, which holds for every x ∈ a⁺
//! when Θ contains a record that a generalizes (in particular when a ∈ Θ, as in §3 where Θ = D).

use super::hierarchy::{Chains, Hierarchy, Lattice};
use crate::Error;

/// The per-attribute utility d_i of the paper (§2.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilityMeasure {
    /// d_i(x) = 1 / n_i(x) (reference 13 of the paper, eq. (5)): 1 at a leaf, 1/n_i(⊥) at ⊥.
    Reciprocal,
    /// d_i(x) = ln(n_i(⊥) / n_i(x)) (reference 13, eq. (6)): ln n_i(⊥) at a leaf, 0 at ⊥.
    LogRatio,
}

impl UtilityMeasure {
    /// d_i(x) for a checked node x of `h`.
    pub(crate) fn d(self, h: &Hierarchy<'_>, x: u32) -> f64 {
        let n = f64::from(h.leaves_of(x));
        match self {
            UtilityMeasure::Reciprocal => 1.0 / n,
            UtilityMeasure::LogRatio => libm::log(f64::from(h.leaves_of(h.root())) / n),
        }
    }
}

/// u(x) = Σ_i d_i(x_i) for an element x of 𝓛. Errors: as [`Lattice::check_element`].
pub fn utility(lattice: &Lattice<'_>, x: &[u32], measure: UtilityMeasure) -> Result<f64, Error> {
    lattice.check_element(x)?;
    Ok(lattice.hierarchies().iter().zip(x).map(|(h, &v)| measure.d(h, v)).sum())
}

/// ν(k) = max_x u(x) = Σ_i max_v d_i(v), reached at the leaves: k for [`UtilityMeasure::Reciprocal`],
/// Σ_i ln n_i(⊥) for [`UtilityMeasure::LogRatio`]. It depends on the hierarchies only (public).
pub fn max_utility(lattice: &Lattice<'_>, measure: UtilityMeasure) -> f64 {
    lattice
        .hierarchies()
        .iter()
        .map(|h| match measure {
            UtilityMeasure::Reciprocal => 1.0,
            UtilityMeasure::LogRatio => measure.d(h, leaf_of(h)),
        })
        .sum()
}

/// A node with a single leaf under it (n = 1, where d_i is largest); every hierarchy has one.
fn leaf_of(h: &Hierarchy<'_>) -> u32 {
    (0..h.len() as u32).find(|&v| h.leaves_of(v) == 1).unwrap_or(h.root())
}

/// The risk weights of one record (paper §2.1.2, after its reference 13).
#[derive(Clone, Copy, Debug)]
pub enum RiskModel<'a> {
    /// Model I: w_i(x_i) = 0 when x_i = ⊥, `weights[i]` otherwise (k finite values ≥ 0).
    ModelI(&'a [f64]),
    /// Model II: w_i(x_i) = 1/k for every x_i, so Φ ≡ 1.
    ModelII,
}

/// The risk weights of a database of m records: Model I with k weights shared by every record or m × k
/// per-record weights (row-major), or Model II.
#[derive(Clone, Copy, Debug)]
pub enum RiskWeights<'a> {
    /// Model I with `weights.len()` = k (shared) or m · k (record j uses `weights[j·k..(j+1)·k]`).
    ModelI(&'a [f64]),
    /// Model II.
    ModelII,
}

impl<'a> RiskModel<'a> {
    /// Checks the weights against k. Errors: Model I with a length ≠ k → [`Error::LengthMismatch`]; a
    /// non-finite weight → [`Error::NonFiniteInput`]; a negative one → [`Error::InvalidArgument`].
    pub fn check(&self, k: usize) -> Result<(), Error> {
        match self {
            RiskModel::ModelI(w) => {
                if w.len() != k {
                    return Err(Error::LengthMismatch);
                }
                check_weights(w)
            }
            RiskModel::ModelII => Ok(()),
        }
    }

    /// w_i(v) for attribute i of `h` (checked ids; a weight is read by [`public_weight`], the identity on
    /// checked weights).
    fn weight(&self, h: &Hierarchy<'_>, i: usize, k: usize, v: u32) -> f64 {
        match self {
            RiskModel::ModelI(w) => {
                if v == h.root() {
                    0.0
                } else {
                    public_weight(w[i])
                }
            }
            RiskModel::ModelII => 1.0 / k as f64,
        }
    }
}

/// The public rule for a per-record Model I weight (private data, like the record it belongs to): the weight
/// itself when it is finite and ≥ 0, else 0 (the attribute carries no risk). Like
/// [`Hierarchy::node_or_root`](super::Hierarchy::node_or_root) it maps each record (with its weights) by a
/// function of that record alone, so neighbouring databases stay neighbours and the release's guarantee holds
/// for the database so read; and no status depends on the weights. Shared weights (k of them, one set for
/// every record) are public arguments: [`RiskWeights::check`] refuses bad ones.
#[inline]
pub fn public_weight(w: f64) -> f64 {
    if w.is_finite() && w >= 0.0 {
        w
    } else {
        0.0
    }
}

impl<'a> RiskWeights<'a> {
    /// Checks the weights for m records of k attributes: lengths k (shared: public, checked as
    /// [`RiskModel::check`]) or m · k (per record: private, only the length is checked; each weight is read
    /// by [`public_weight`]). Errors: another length → [`Error::LengthMismatch`]; a non-finite shared weight →
    /// [`Error::NonFiniteInput`]; a negative one → [`Error::InvalidArgument`].
    pub fn check(&self, m: usize, k: usize) -> Result<(), Error> {
        match self {
            RiskWeights::ModelI(w) if w.len() == k => check_weights(w),
            RiskWeights::ModelI(w) => {
                if Some(w.len()) != m.checked_mul(k) {
                    return Err(Error::LengthMismatch);
                }
                Ok(())
            }
            RiskWeights::ModelII => Ok(()),
        }
    }

    /// The model of record j (checked weights).
    pub(crate) fn of(&self, j: usize, k: usize) -> RiskModel<'a> {
        match *self {
            RiskWeights::ModelI(w) if w.len() == k => RiskModel::ModelI(w),
            RiskWeights::ModelI(w) => RiskModel::ModelI(&w[j * k..(j + 1) * k]),
            RiskWeights::ModelII => RiskModel::ModelII,
        }
    }

    /// Whether every record has the same weights.
    pub(crate) fn shared(&self, k: usize) -> bool {
        match self {
            RiskWeights::ModelI(w) => w.len() == k,
            RiskWeights::ModelII => true,
        }
    }
}

fn check_weights(w: &[f64]) -> Result<(), Error> {
    if !w.iter().all(|x| x.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    if w.iter().any(|&x| x < 0.0) {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

/// Φ^a(x) = Σ_i w_i^a(x_i). Errors: as [`Lattice::check_element`] and [`RiskModel::check`].
pub fn phi(lattice: &Lattice<'_>, x: &[u32], model: RiskModel<'_>) -> Result<f64, Error> {
    lattice.check_element(x)?;
    model.check(lattice.attributes())?;
    let k = lattice.attributes();
    Ok(lattice
        .hierarchies()
        .iter()
        .zip(x)
        .enumerate()
        .map(|(i, (h, &v))| model.weight(h, i, k, v))
        .sum())
}

/// r = Φ / |ρ|. Errors: count = 0 (x generalizes no record of Θ: the risk is undefined) →
/// [`Error::InvalidArgument`]; Φ not finite or negative → [`Error::NonFiniteInput`] /
/// [`Error::InvalidArgument`].
pub fn risk(phi: f64, count: u64) -> Result<f64, Error> {
    check_phi(phi)?;
    if count == 0 {
        return Err(Error::InvalidArgument);
    }
    Ok(phi / count as f64)
}

/// The Lagrangian f = λ|ρ|/max(Φ, φ_min) + u^κ (eq. 4 with λ/r = λ|ρ|/Φ, Φ clamped below at φ_min; see the
/// module docs). Errors: λ negative or not finite, φ_min not finite and > 0, Φ or u not finite and ≥ 0 →
/// [`Error::InvalidArgument`] / [`Error::NonFiniteInput`]; a non-finite result → [`Error::Overflow`].
pub fn lagrangian(lambda: f64, kappa: u32, phi_min: f64, phi: f64, count: u64, utility: f64) -> Result<f64, Error> {
    check_lagrangian(lambda, phi_min)?;
    check_phi(phi)?;
    if !utility.is_finite() {
        return Err(Error::NonFiniteInput);
    }
    if utility < 0.0 {
        return Err(Error::InvalidArgument);
    }
    let f = lagrangian_unchecked(lambda, kappa, phi_min, phi, count, utility);
    if f.is_finite() {
        Ok(f)
    } else {
        Err(Error::Overflow)
    }
}

pub(crate) fn check_lagrangian(lambda: f64, phi_min: f64) -> Result<(), Error> {
    if !(lambda.is_finite() && phi_min.is_finite()) {
        return Err(Error::NonFiniteInput);
    }
    if lambda < 0.0 || phi_min <= 0.0 {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

fn check_phi(phi: f64) -> Result<(), Error> {
    if !phi.is_finite() {
        return Err(Error::NonFiniteInput);
    }
    if phi < 0.0 {
        return Err(Error::InvalidArgument);
    }
    Ok(())
}

#[inline]
pub(crate) fn lagrangian_unchecked(lambda: f64, kappa: u32, phi_min: f64, phi: f64, count: u64, utility: f64) -> f64 {
    lambda * count as f64 / phi.max(phi_min) + power(utility, kappa)
}

/// u^κ by repeated squaring (κ = 0 gives 1).
#[inline]
pub(crate) fn power(mut base: f64, mut exp: u32) -> f64 {
    let mut acc = 1.0;
    while exp > 0 {
        if exp & 1 == 1 {
            acc *= base;
        }
        base *= base;
        exp >>= 1;
    }
    acc
}

/// Per-level tables of one record: d_i and w_i at each level of each chain a_i⁺, so that u(x) and Φ^a(x) of
/// an element of a⁺ are k additions.
pub(crate) struct LevelTables {
    pub(crate) d: [[f64; super::MAX_HEIGHT + 1]; super::MAX_ATTRIBUTES],
    pub(crate) w: [[f64; super::MAX_HEIGHT + 1]; super::MAX_ATTRIBUTES],
}

impl LevelTables {
    pub(crate) fn new(lattice: &Lattice<'_>, c: &Chains, measure: UtilityMeasure, model: RiskModel<'_>) -> Self {
        let mut t = LevelTables {
            d: [[0.0; super::MAX_HEIGHT + 1]; super::MAX_ATTRIBUTES],
            w: [[0.0; super::MAX_HEIGHT + 1]; super::MAX_ATTRIBUTES],
        };
        let k = lattice.attributes();
        for (i, h) in lattice.hierarchies().iter().enumerate() {
            for l in 0..c.len[i] {
                let v = c.nodes[i][l];
                t.d[i][l] = measure.d(h, v);
                t.w[i][l] = model.weight(h, i, k, v);
            }
        }
        t
    }

    /// (u(x), Φ(x)) of element j of a⁺.
    #[inline]
    pub(crate) fn utility_phi(&self, c: &Chains, j: usize) -> (f64, f64) {
        let (mut u, mut p) = (0.0, 0.0);
        for i in 0..c.k {
            let l = c.level(j, i);
            u += self.d[i][l];
            p += self.w[i][l];
        }
        (u, p)
    }
}

/// The three quantities of §2 for every element of a⁺, in the order of the hierarchy module.
pub struct ChainScores<'s> {
    /// u(x).
    pub utility: &'s mut [f64],
    /// r^a(x) = Φ^a(x)/|ρ(x, Θ)|.
    pub risk: &'s mut [f64],
    /// f^a(x) = λ|ρ(x, Θ)|/max(Φ^a(x), φ_min) + u(x)^κ.
    pub lagrangian: &'s mut [f64],
}

/// Evaluates u, r^a and f^a (with λ, κ, φ_min) over a⁺ for the record a against the side database Θ
/// (`theta`, m × k), writing |ρ(x, Θ)| to `counts` and the scores to `out`; returns |a⁺|.
///
/// Errors: those of [`Lattice::count_chain_product`], [`RiskModel::check`] and [`lagrangian`]; a record a
/// that generalizes no record of Θ (some |ρ(x, Θ)| = 0) → [`Error::InvalidArgument`]; an output shorter than
/// |a⁺| → [`Error::LengthMismatch`]; a non-finite f → [`Error::Overflow`]. Nothing is written on error.
#[allow(clippy::too_many_arguments)]
pub fn chain_product_scores(
    lattice: &Lattice<'_>,
    record: &[u32],
    theta: &[u32],
    model: RiskModel<'_>,
    measure: UtilityMeasure,
    lambda: f64,
    kappa: u32,
    phi_min: f64,
    counts: &mut [u64],
    out: ChainScores<'_>,
) -> Result<usize, Error> {
    lattice.check_element(record)?;
    lattice.check_records(theta)?;
    model.check(lattice.attributes())?;
    check_lagrangian(lambda, phi_min)?;
    let c = lattice.chains(record);
    let n = c.total;
    if counts.len() < n || out.utility.len() < n || out.risk.len() < n || out.lagrangian.len() < n {
        return Err(Error::LengthMismatch);
    }
    let counts = &mut counts[..n];
    lattice.count_into(&c, theta, counts);
    // ρ is monotone and a is the bottom of a⁺: ρ(a) = 0 is the only way a count can be 0.
    if counts[0] == 0 {
        return Err(Error::InvalidArgument);
    }
    let tables = LevelTables::new(lattice, &c, measure, model);
    // The only failure left is a non-finite f: check every value before writing any.
    for (j, &count) in counts.iter().enumerate() {
        let (u, p) = tables.utility_phi(&c, j);
        if !lagrangian_unchecked(lambda, kappa, phi_min, p, count, u).is_finite() {
            return Err(Error::Overflow);
        }
    }
    for (j, &count) in counts.iter().enumerate() {
        let (u, p) = tables.utility_phi(&c, j);
        out.utility[j] = u;
        out.risk[j] = p / count as f64;
        out.lagrangian[j] = lagrangian_unchecked(lambda, kappa, phi_min, p, count, u);
    }
    Ok(n)
}

/// The threshold model (Def. 1), solved exactly by enumeration of a⁺: the index (in a⁺ order) of an x
/// minimizing r^a(x) = Φ^a(x)/|ρ(x, Θ)| subject to u(x) ≥ c, or `None` when no x ∈ a⁺ reaches utility c.
/// Ties go to the larger utility, then to the smaller index. NP-hard in general (Thm. 1); here
/// O(|Θ| · k · height + |a⁺| · k). `counts` needs |a⁺| entries.
///
/// Errors: those of [`chain_product_scores`] (c must be finite → [`Error::NonFiniteInput`]).
#[allow(clippy::too_many_arguments)]
pub fn threshold_optimum(
    lattice: &Lattice<'_>,
    record: &[u32],
    theta: &[u32],
    model: RiskModel<'_>,
    measure: UtilityMeasure,
    c: f64,
    counts: &mut [u64],
) -> Result<Option<usize>, Error> {
    if !c.is_finite() {
        return Err(Error::NonFiniteInput);
    }
    let (chains, tables, counts) = prepare(lattice, record, theta, model, measure, counts)?;
    let mut best: Option<(usize, f64, f64)> = None;
    for (j, &count) in counts.iter().enumerate() {
        let (u, p) = tables.utility_phi(&chains, j);
        if u < c {
            continue;
        }
        let r = p / count as f64;
        let better = match best {
            None => true,
            Some((_, br, bu)) => r < br || (r == br && u > bu),
        };
        if better {
            best = Some((j, r, u));
        }
    }
    Ok(best.map(|(j, _, _)| j))
}

/// The Lagrangian model (eq. 4), solved exactly by enumeration of a⁺: the index of an x maximizing
/// f^a(x) = λ|ρ(x, Θ)|/max(Φ^a(x), φ_min) + u(x)^κ; ties go to the smaller index. `counts` needs |a⁺|
/// entries. Errors: those of [`chain_product_scores`].
#[allow(clippy::too_many_arguments)]
pub fn lagrangian_optimum(
    lattice: &Lattice<'_>,
    record: &[u32],
    theta: &[u32],
    model: RiskModel<'_>,
    measure: UtilityMeasure,
    lambda: f64,
    kappa: u32,
    phi_min: f64,
    counts: &mut [u64],
) -> Result<usize, Error> {
    check_lagrangian(lambda, phi_min)?;
    let (chains, tables, counts) = prepare(lattice, record, theta, model, measure, counts)?;
    let mut best = (0usize, f64::NEG_INFINITY);
    for (j, &count) in counts.iter().enumerate() {
        let (u, p) = tables.utility_phi(&chains, j);
        let f = lagrangian_unchecked(lambda, kappa, phi_min, p, count, u);
        if !f.is_finite() {
            return Err(Error::Overflow);
        }
        if f > best.1 {
            best = (j, f);
        }
    }
    Ok(best.0)
}

fn prepare<'c>(
    lattice: &Lattice<'_>,
    record: &[u32],
    theta: &[u32],
    model: RiskModel<'_>,
    measure: UtilityMeasure,
    counts: &'c mut [u64],
) -> Result<(Chains, LevelTables, &'c [u64]), Error> {
    lattice.check_element(record)?;
    lattice.check_records(theta)?;
    model.check(lattice.attributes())?;
    let c = lattice.chains(record);
    if counts.len() < c.total {
        return Err(Error::LengthMismatch);
    }
    let counts = &mut counts[..c.total];
    lattice.count_into(&c, theta, counts);
    if counts[0] == 0 {
        return Err(Error::InvalidArgument);
    }
    let tables = LevelTables::new(lattice, &c, measure, model);
    Ok((c, tables, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_and_scalar_models() {
        assert_eq!(power(3.0, 0), 1.0);
        assert_eq!(power(3.0, 5), 243.0);
        assert_eq!(power(0.5, 3), 0.125);
        assert_eq!(risk(2.0, 4), Ok(0.5));
        assert_eq!(risk(2.0, 0), Err(Error::InvalidArgument));
        assert_eq!(risk(f64::NAN, 1), Err(Error::NonFiniteInput));
        assert_eq!(lagrangian(2.0, 2, 0.5, 1.0, 3, 1.5), Ok(6.0 + 2.25));
        // Φ = 0 (Model I at ⊥) is clamped to φ_min.
        assert_eq!(lagrangian(2.0, 1, 0.5, 0.0, 3, 1.0), Ok(12.0 + 1.0));
        assert_eq!(lagrangian(2.0, 1, 0.0, 1.0, 3, 1.0), Err(Error::InvalidArgument));
        assert_eq!(lagrangian(-1.0, 1, 1.0, 1.0, 3, 1.0), Err(Error::InvalidArgument));
        assert_eq!(lagrangian(1e300, 1, 1e-300, 1e-300, 3, 1.0), Err(Error::Overflow));
    }
}
