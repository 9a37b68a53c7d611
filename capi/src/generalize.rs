//! Private data generalization (Fouad, Elbassioni and Bertino, *Towards a Differentially Private Data
//! Anonymization*): value generalization hierarchies, the chain product a⁺ of a record, the counts
//! ρ(x, D), the utility/risk/Lagrangian scores, the exact non-private optima, the parameters of
//! Algorithm 3 and the mechanism itself.
//!
//! Hierarchies are `dpmo_hierarchy` parent arrays (the root ⊥ is the node that is its own parent; at most
//! `DPMO_GENERALIZE_MAX_HEIGHT` levels below it). Every function takes the k hierarchies and a `uint32_t`
//! leaf scratch of `dpmo_lattice_scratch_len` entries, validates the hierarchies (O(Σ n_i · height)) and
//! fills the scratch with the leaf counts; its contents afterwards are unspecified. Records are k node ids
//! each, row-major (m × k). Per-record buffers need at most N = ∏(height_i + 1) entries
//! (`dpmo_lattice_check`); a⁺ is listed in the order of the core's `generalize::hierarchy` module
//! (the record itself first, (⊥, …, ⊥) last, the last attribute varying fastest).
//!
//! Errors common to every function: a null or misaligned pointer; k = 0 → `DPMO_EMPTY_INPUT`; k above
//! `DPMO_GENERALIZE_MAX_ATTRIBUTES`, a hierarchy deeper than `DPMO_GENERALIZE_MAX_HEIGHT` or N above
//! `DPMO_GENERALIZE_MAX_CHAIN_PRODUCT` → `DPMO_CAPACITY_EXCEEDED`; a hierarchy with no node →
//! `DPMO_EMPTY_INPUT`; a parent id out of range, a forest or a cycle → `DPMO_INVALID_ARGUMENT`; a short
//! leaf scratch → `DPMO_SCRATCH_TOO_SMALL`; a node id of a record out of range → `DPMO_INVALID_ARGUMENT`
//! (except in `dpmo_generalize_release`, whose records are private: there such an id reads as the root ⊥ of
//! its hierarchy); an output overlapping an input or another output → `DPMO_OVERLAPPING_BUFFERS`.

use crate::budget::{budget_region, dpmo_budget, Charged};
use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::rng::{dpmo_rng, rng_region, with_generator};
use crate::status::{dpmo_status, status_of};
use dpmo_core::generalize::{
    self, lattice_scratch_len, FrequentNoise, FrequentSet, Lattice, Objective, Parameters, ReleaseScratch, RiskModel,
    RiskWeights, Settings, UtilityMeasure, MAX_ATTRIBUTES,
};
use dpmo_core::select::Arithmetic;
use dpmo_core::Error;

/// The largest number of attributes k.
pub const DPMO_GENERALIZE_MAX_ATTRIBUTES: usize = 16;
/// The largest height of a hierarchy (edges from the root to the deepest node).
pub const DPMO_GENERALIZE_MAX_HEIGHT: usize = 15;
/// The largest N = ∏(height_i + 1), the size of the largest chain product a⁺.
pub const DPMO_GENERALIZE_MAX_CHAIN_PRODUCT: usize = 65536;

const _: () = assert!(DPMO_GENERALIZE_MAX_ATTRIBUTES == MAX_ATTRIBUTES);
const _: () = assert!(DPMO_GENERALIZE_MAX_HEIGHT == generalize::MAX_HEIGHT);
const _: () = assert!(DPMO_GENERALIZE_MAX_CHAIN_PRODUCT == generalize::MAX_CHAIN_PRODUCT);

/// Utility d_i(x) = 1/n_i(x) (n_i(x): the leaves under x).
pub const DPMO_UTILITY_RECIPROCAL: u32 = 0;
/// Utility d_i(x) = ln(n_i(⊥)/n_i(x)).
pub const DPMO_UTILITY_LOG_RATIO: u32 = 1;

/// Objective: the Lagrangian f(x) = λ|ρ(x)|/max(Φ(x), φ_min) + u(x)^κ (eq. 4), maximized.
pub const DPMO_OBJECTIVE_LAGRANGIAN: u32 = 0;
/// Objective: the threshold model, risk r(x) = Φ(x)/|ρ(x)| minimized subject to u(x) ≥ c (Def. 1).
pub const DPMO_OBJECTIVE_THRESHOLD: u32 = 1;

/// One value generalization hierarchy: `parents[v]` is the parent of node v (0 ≤ v < n); the root ⊥ is its
/// own parent.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_hierarchy {
    /// n node ids.
    pub parents: *const u32,
    /// The number of nodes.
    pub n: usize,
}

/// The settings of Algorithm 3 (`dpmo_generalize_release`). The frequent set 𝓛′ is always released
/// privately (counts with exact discrete Gaussian noise, `frequency_epsilon`, `frequency_delta`): the
/// paper's exact 𝓛′ is not differentially private and is not offered through the C ABI.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_generalize_params {
    /// ε of Theorem 4 (> 0).
    pub epsilon: f64,
    /// β ∈ (0, 1), at least e^{−ε} (`dpmo_generalize_min_beta`): each record is kept with probability 1 − β.
    pub beta: f64,
    /// δ ∈ (0, 1) of condition (10).
    pub delta: f64,
    /// τ₁ ∈ (0, 1) of condition (10).
    pub tau1: f64,
    /// λ ≥ 0 (Lagrangian).
    pub lambda: f64,
    /// φ_min > 0: Φ is clamped below at it (Lagrangian).
    pub phi_min: f64,
    /// The utility threshold c (threshold objective; finite).
    pub c: f64,
    /// φ_max > 0: Φ is clamped above at it (threshold objective).
    pub phi_max: f64,
    /// ε_F > 0, the cost of releasing 𝓛′.
    pub frequency_epsilon: f64,
    /// δ_F ∈ [2^-299, 1): half for the Gaussian release of the counts, half for an element with fewer than t
    /// records entering 𝓛′.
    pub frequency_delta: f64,
    /// The frequency threshold t; must satisfy condition (10) (`dpmo_generalize_derive` reports the
    /// smallest admissible t).
    pub t: u64,
    /// n₀ ≥ 1, a public lower bound of the number of records, used in η(k).
    pub min_records: u64,
    /// `DPMO_OBJECTIVE_LAGRANGIAN` or `DPMO_OBJECTIVE_THRESHOLD`.
    pub objective: u32,
    /// `DPMO_UTILITY_RECIPROCAL` or `DPMO_UTILITY_LOG_RATIO`.
    pub utility: u32,
    /// κ ∈ [0, 64] (Lagrangian).
    pub kappa: u32,
}

/// The quantities `dpmo_generalize_derive` computes from the settings and the hierarchies.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_generalize_derived {
    /// ε′ = (ε + ln β)/(3η(1 − β)), the exponent scale of the per-record exponential mechanism.
    pub epsilon_prime: f64,
    /// η(k), the per-record sensitivity constant of §3.3.
    pub eta: f64,
    /// The total ε the release spends (ε + ε_F), charged to the budget.
    pub total_epsilon: f64,
    /// The total δ the release spends (δ + δ_F), charged to the budget.
    pub total_delta: f64,
    /// The smallest t admissible by condition (10).
    pub min_t: u64,
    /// The variance σ² of the discrete Gaussian noise on the counts of 𝓛′ (rounded up to a double).
    pub noise_variance: f64,
    /// The threshold T on the noisy counts: x ∈ 𝓛′ when |ρ(x)| + Z_x ≥ T.
    pub noise_threshold: u64,
    /// N = ∏(height_i + 1).
    pub max_chain_product: usize,
}

fn utility_of(u: u32) -> Result<UtilityMeasure, Error> {
    match u {
        DPMO_UTILITY_RECIPROCAL => Ok(UtilityMeasure::Reciprocal),
        DPMO_UTILITY_LOG_RATIO => Ok(UtilityMeasure::LogRatio),
        _ => Err(Error::InvalidArgument),
    }
}

fn settings_of(p: &dpmo_generalize_params) -> Result<Settings, Error> {
    let objective = match p.objective {
        DPMO_OBJECTIVE_LAGRANGIAN => Objective::Lagrangian {
            lambda: p.lambda,
            kappa: p.kappa,
            phi_min: p.phi_min,
        },
        DPMO_OBJECTIVE_THRESHOLD => Objective::Threshold {
            c: p.c,
            phi_max: p.phi_max,
        },
        _ => return Err(Error::InvalidArgument),
    };
    Ok(Settings {
        epsilon: p.epsilon,
        beta: p.beta,
        delta: p.delta,
        tau1: p.tau1,
        t: p.t,
        min_records: p.min_records,
        objective,
        utility: utility_of(p.utility)?,
        frequent: FrequentSet::Gaussian {
            epsilon: p.frequency_epsilon,
            delta: p.frequency_delta,
        },
    })
}

/// Input regions of one call, for overlap checks (hierarchy array, parent arrays, other inputs).
struct Inputs {
    regions: [Region; MAX_ATTRIBUTES + 8],
    len: usize,
}

impl Inputs {
    fn push(&mut self, r: Region) {
        if self.len < self.regions.len() {
            self.regions[self.len] = r;
            self.len += 1;
        }
    }

    fn all(&self) -> &[Region] {
        &self.regions[..self.len]
    }
}

/// Reads the k hierarchies (checking every pointer) and returns their parent slices and input regions.
///
/// # Safety
/// `h` must point to k readable `dpmo_hierarchy`, each with `n` readable ids at `parents`.
unsafe fn read_hierarchies<'a>(
    h: *const dpmo_hierarchy,
    k: usize,
) -> Result<([&'a [u32]; MAX_ATTRIBUTES], Inputs), Error> {
    if k == 0 {
        check_out(h.cast_mut())?;
        return Err(Error::EmptyInput);
    }
    if k > MAX_ATTRIBUTES {
        return Err(Error::CapacityExceeded);
    }
    // SAFETY: the caller promises k readable hierarchies.
    let hs = unsafe { input(h, k) }?;
    let mut parents: [&[u32]; MAX_ATTRIBUTES] = [&[]; MAX_ATTRIBUTES];
    let mut inputs = Inputs {
        regions: [Region::EMPTY; MAX_ATTRIBUTES + 8],
        len: 0,
    };
    inputs.push(Region::of(h, k));
    for (slot, hi) in parents.iter_mut().zip(hs) {
        // SAFETY: the caller promises n readable ids at `parents`.
        *slot = unsafe { input(hi.parents, hi.n) }?;
        inputs.push(Region::of(hi.parents, hi.n));
    }
    Ok((parents, inputs))
}

/// Builds the lattice with the leaf scratch (checked disjoint from the hierarchies, the `more` inputs and
/// the `outputs`), then runs `f`.
///
/// # Safety
/// As for [`read_hierarchies`]; `leaf` writable for `leaf_len` ids; every region valid.
unsafe fn with_lattice<T>(
    h: *const dpmo_hierarchy,
    k: usize,
    leaf: *mut u32,
    leaf_len: usize,
    more: &[Region],
    outputs: &[Region],
    f: impl FnOnce(&Lattice<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    // SAFETY: forwarded caller contract.
    let (parents, mut inputs) = unsafe { read_hierarchies(h, k) }?;
    for r in more {
        inputs.push(*r);
    }
    check_out(leaf)?;
    let mut outs = [Region::EMPTY; 8];
    let n_out = outputs.len() + 1;
    if n_out > outs.len() {
        return Err(Error::Overflow); // not reachable: the functions of this module pass at most 7 outputs
    }
    outs[0] = Region::of(leaf, leaf_len);
    outs[1..n_out].copy_from_slice(outputs);
    check_disjoint(&outs[..n_out], inputs.all())?;
    if leaf_len < lattice_scratch_len(&parents[..k])? {
        return Err(Error::ScratchTooSmall);
    }
    // SAFETY: checked non-null, aligned and disjoint from every other buffer of the call.
    let scratch = unsafe { output(leaf, leaf_len) }?;
    let lattice = Lattice::build(&parents[..k], scratch)?;
    f(&lattice)
}

/// Writes to `*out_len` the number of `uint32_t` of leaf scratch every function of this module needs:
/// the total number of nodes Σ n_i. Only the pointers and k are checked here.
///
/// # Safety
/// `hierarchies`: k readable `dpmo_hierarchy`, each with n readable ids; `out_len`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_lattice_scratch_len(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    out_len: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_len)?;
        // SAFETY: forwarded caller contract.
        let (parents, inputs) = unsafe { read_hierarchies(hierarchies, k) }?;
        check_disjoint(&[Region::of(out_len, 1)], inputs.all())?;
        let len = lattice_scratch_len(&parents[..k])?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out_len.write(len) };
        Ok(())
    })())
}

/// Validates the k hierarchies (the common errors of this module) and writes N = ∏(height_i + 1), the
/// largest |a⁺|, to `*out_max_chain_product`: the length of every per-record buffer.
///
/// # Safety
/// `hierarchies` as for `dpmo_lattice_scratch_len`; `leaf_scratch`: `leaf_scratch_len` writable ids;
/// `out_max_chain_product`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_lattice_check(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    out_max_chain_product: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_max_chain_product)?;
        let outs = [Region::of(out_max_chain_product, 1)];
        // SAFETY: forwarded caller contract.
        let n = unsafe {
            with_lattice(hierarchies, k, leaf_scratch, leaf_scratch_len, &[], &outs, |l| {
                Ok(l.max_chain_product())
            })
        }?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out_max_chain_product.write(n) };
        Ok(())
    })())
}

/// The chain product a⁺ of `record` (k node ids): writes its |a⁺| elements, k node ids each, to
/// `out_elements` (row-major) and |a⁺| to `*out_count`.
///
/// Errors (besides the common ones): `out_elements_len` < |a⁺| · k → `DPMO_LENGTH_MISMATCH`.
///
/// # Safety
/// The hierarchies and leaf scratch as for `dpmo_lattice_check`; `record`: k readable ids;
/// `out_elements`: `out_elements_len` writable ids; `out_count`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_chain_product(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    record: *const u32,
    out_elements: *mut u32,
    out_elements_len: usize,
    out_count: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_count)?;
        check_out(out_elements)?;
        // SAFETY: the caller promises k readable ids.
        let a = unsafe { input(record, k) }?;
        let outs = [Region::of(out_elements, out_elements_len), Region::of(out_count, 1)];
        // SAFETY: forwarded caller contract; the outputs are checked disjoint from every input.
        unsafe {
            with_lattice(
                hierarchies,
                k,
                leaf_scratch,
                leaf_scratch_len,
                &[Region::of(record, k)],
                &outs,
                |l| {
                    let out = output(out_elements, out_elements_len)?;
                    let n = l.chain_product(a, out)?;
                    out_count.write(n);
                    Ok(())
                },
            )
        }
    })())
}

/// ρ(x, D) for every x ∈ a⁺: writes |a⁺| counts (in the order of `dpmo_chain_product`) of the m records
/// at `records` that each x generalizes, and |a⁺| to `*out_count`. O(m · k · height + |a⁺| · k).
///
/// Errors (besides the common ones): `out_counts_len` < |a⁺| → `DPMO_LENGTH_MISMATCH`.
///
/// # Safety
/// As for `dpmo_chain_product`; `records`: m · k readable ids (may be NULL when m = 0); `out_counts`:
/// `out_counts_len` writable uint64_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_generalized_counts(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    record: *const u32,
    records: *const u32,
    m: usize,
    out_counts: *mut u64,
    out_counts_len: usize,
    out_count: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(out_count)?;
        check_out(out_counts)?;
        // SAFETY: the caller promises k and m · k readable ids.
        let (a, db) = unsafe { (input(record, k)?, records_of(records, m, k)?) };
        let outs = [Region::of(out_counts, out_counts_len), Region::of(out_count, 1)];
        let more = [Region::of(record, k), Region::of(records, db.len())];
        // SAFETY: forwarded caller contract; the outputs are checked disjoint from every input.
        unsafe {
            with_lattice(hierarchies, k, leaf_scratch, leaf_scratch_len, &more, &outs, |l| {
                let out = output(out_counts, out_counts_len)?;
                let n = l.count_chain_product(a, db, out)?;
                out_count.write(n);
                Ok(())
            })
        }
    })())
}

/// m · k ids at `records` (an empty slice for m = 0, whatever the pointer).
///
/// # Safety
/// `records`: m · k readable ids when m > 0.
unsafe fn records_of<'a>(records: *const u32, m: usize, k: usize) -> Result<&'a [u32], Error> {
    if m == 0 {
        return Ok(&[]);
    }
    let len = m.checked_mul(k).ok_or(Error::Overflow)?;
    // SAFETY: forwarded caller contract.
    unsafe { input(records, len) }
}

/// The k Model I weights at `weights`, or Model II for NULL.
///
/// # Safety
/// `weights`: NULL or k readable doubles.
unsafe fn model_of<'a>(weights: *const f64, k: usize) -> Result<(RiskModel<'a>, Region), Error> {
    if weights.is_null() {
        return Ok((RiskModel::ModelII, Region::EMPTY));
    }
    // SAFETY: forwarded caller contract.
    let w = unsafe { input(weights, k) }?;
    Ok((RiskModel::ModelI(w), Region::of(weights, k)))
}

/// The scores of §2 for every x ∈ a⁺ against the side database Θ (`theta`, m records): u(x) to
/// `out_utility`, r(x) = Φ(x)/|ρ(x, Θ)| to `out_risk`, f(x) = λ|ρ(x, Θ)|/max(Φ(x), φ_min) + u(x)^κ to
/// `out_lagrangian`, |ρ(x, Θ)| to `out_counts` (each `out_len` long), and |a⁺| to `*out_count`. `weights`:
/// NULL for Model II (w_i ≡ 1/k), or k Model I weights (w_i at every value but ⊥, 0 at ⊥).
///
/// Errors (besides the common ones): an unknown `utility`; λ < 0 or φ_min ≤ 0 → `DPMO_INVALID_ARGUMENT`;
/// a non-finite λ, φ_min or weight → `DPMO_NON_FINITE_INPUT`; a negative weight → `DPMO_INVALID_ARGUMENT`;
/// no record of Θ under a (the risk is undefined) → `DPMO_INVALID_ARGUMENT`; `out_len` < |a⁺| →
/// `DPMO_LENGTH_MISMATCH`; a non-finite f → `DPMO_OVERFLOW`.
///
/// # Safety
/// As for `dpmo_generalized_counts`; `weights`: NULL or k readable doubles; each output `out_len` writable
/// elements.
#[no_mangle]
pub unsafe extern "C" fn dpmo_generalize_scores(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    record: *const u32,
    theta: *const u32,
    m: usize,
    weights: *const f64,
    utility: u32,
    lambda: f64,
    kappa: u32,
    phi_min: f64,
    out_counts: *mut u64,
    out_utility: *mut f64,
    out_risk: *mut f64,
    out_lagrangian: *mut f64,
    out_len: usize,
    out_count: *mut usize,
) -> dpmo_status {
    status_of((|| {
        let measure = utility_of(utility)?;
        check_out(out_count)?;
        check_out(out_counts)?;
        check_out(out_utility)?;
        check_out(out_risk)?;
        check_out(out_lagrangian)?;
        // SAFETY: the caller promises the lengths documented above.
        let (a, db, (model, w_region)) =
            unsafe { (input(record, k)?, records_of(theta, m, k)?, model_of(weights, k)?) };
        let more = [Region::of(record, k), Region::of(theta, db.len()), w_region];
        let outs = [
            Region::of(out_counts, out_len),
            Region::of(out_utility, out_len),
            Region::of(out_risk, out_len),
            Region::of(out_lagrangian, out_len),
            Region::of(out_count, 1),
        ];
        // SAFETY: forwarded caller contract; the outputs are checked disjoint from every input.
        unsafe {
            with_lattice(hierarchies, k, leaf_scratch, leaf_scratch_len, &more, &outs, |l| {
                let n = generalize::chain_product_scores(
                    l,
                    a,
                    db,
                    model,
                    measure,
                    lambda,
                    kappa,
                    phi_min,
                    output(out_counts, out_len)?,
                    generalize::ChainScores {
                        utility: output(out_utility, out_len)?,
                        risk: output(out_risk, out_len)?,
                        lagrangian: output(out_lagrangian, out_len)?,
                    },
                )?;
                out_count.write(n);
                Ok(())
            })
        }
    })())
}

/// The exact non-private optimum of one record over a⁺ against Θ (`theta`, m records), by enumeration:
/// `DPMO_OBJECTIVE_LAGRANGIAN` maximizes f(x) = λ|ρ(x, Θ)|/max(Φ(x), φ_min) + u(x)^κ;
/// `DPMO_OBJECTIVE_THRESHOLD` minimizes r(x) = Φ(x)/|ρ(x, Θ)| subject to u(x) ≥ c (Def. 1, NP-hard when k
/// grows; ties to the larger utility). Writes the position of the optimum in a⁺ to `*out_index` and
/// whether one exists (false when no x reaches utility c) to `*out_found`; `*out_index` is 0 when none.
/// `counts_scratch`: N uint64_t.
///
/// Errors: as for `dpmo_generalize_scores`; an unknown `objective`; a non-finite c →
/// `DPMO_NON_FINITE_INPUT`; a short `counts_scratch` → `DPMO_LENGTH_MISMATCH`.
///
/// # Safety
/// As for `dpmo_generalize_scores`; `counts_scratch`: `counts_len` writable uint64_t; `out_index`: one
/// writable size_t; `out_found`: one writable bool.
#[no_mangle]
pub unsafe extern "C" fn dpmo_generalize_optimum(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    record: *const u32,
    theta: *const u32,
    m: usize,
    weights: *const f64,
    utility: u32,
    objective: u32,
    lambda: f64,
    kappa: u32,
    phi_min: f64,
    c: f64,
    counts_scratch: *mut u64,
    counts_len: usize,
    out_index: *mut usize,
    out_found: *mut bool,
) -> dpmo_status {
    status_of((|| {
        let measure = utility_of(utility)?;
        if objective != DPMO_OBJECTIVE_LAGRANGIAN && objective != DPMO_OBJECTIVE_THRESHOLD {
            return Err(Error::InvalidArgument);
        }
        check_out(out_index)?;
        check_out(out_found)?;
        check_out(counts_scratch)?;
        // SAFETY: the caller promises the lengths documented above.
        let (a, db, (model, w_region)) =
            unsafe { (input(record, k)?, records_of(theta, m, k)?, model_of(weights, k)?) };
        let more = [Region::of(record, k), Region::of(theta, db.len()), w_region];
        let outs = [
            Region::of(counts_scratch, counts_len),
            Region::of(out_index, 1),
            Region::of(out_found, 1),
        ];
        // SAFETY: forwarded caller contract; the outputs are checked disjoint from every input.
        unsafe {
            with_lattice(hierarchies, k, leaf_scratch, leaf_scratch_len, &more, &outs, |l| {
                let counts = output(counts_scratch, counts_len)?;
                let best = if objective == DPMO_OBJECTIVE_LAGRANGIAN {
                    Some(generalize::lagrangian_optimum(
                        l, a, db, model, measure, lambda, kappa, phi_min, counts,
                    )?)
                } else {
                    generalize::threshold_optimum(l, a, db, model, measure, c, counts)?
                };
                out_index.write(best.unwrap_or(0));
                out_found.write(best.is_some());
                Ok(())
            })
        }
    })())
}

/// The smallest β that `dpmo_generalize_release` accepts for ε (β ≥ e^{−ε} certified, within 10^-12
/// relative of e^{−ε} wherever e^{−ε} is a normal double, for every finite ε > 0): the boundary choice of
/// the paper, where the per-record choice is uniform.
///
/// Errors: ε not finite or ≤ 0 → `DPMO_INVALID_EPSILON`; ε too small for any β < 1 →
/// `DPMO_INVALID_ARGUMENT`; a null or misaligned `out_beta`.
///
/// # Safety
/// `out_beta`: one writable double.
#[no_mangle]
pub unsafe extern "C" fn dpmo_generalize_min_beta(epsilon: f64, out_beta: *mut f64) -> dpmo_status {
    status_of((|| {
        check_out(out_beta)?;
        let b = generalize::min_beta(epsilon)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_beta.write(b) };
        Ok(())
    })())
}

/// Validates `params` for the hierarchies, except that t may violate condition (10), and writes the
/// derived quantities (ε′, η, the smallest admissible t, the noise of 𝓛′, the total (ε, δ)) to `*out`.
///
/// Errors (besides the common ones): ε or ε_F not finite or ≤ 0 → `DPMO_INVALID_EPSILON`; β < e^{−ε} or
/// β ∉ (0, 1), δ, δ_F or τ₁ ∉ (0, 1), t = 0 (t < 2 for the threshold objective), n₀ = 0, λ < 0, κ > 64,
/// φ ≤ 0, an unknown objective or utility, δ_F below 2^-299, a noise variance above 2^62, or condition (10)
/// unsatisfiable
/// → `DPMO_INVALID_ARGUMENT`; a non-finite λ, c or φ → `DPMO_NON_FINITE_INPUT`; ν^κ, η or ε′ not finite →
/// `DPMO_OVERFLOW`.
///
/// # Safety
/// The hierarchies and leaf scratch as for `dpmo_lattice_check`; `params`: one readable
/// `dpmo_generalize_params`; `out`: one writable `dpmo_generalize_derived`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_generalize_derive(
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    params: *const dpmo_generalize_params,
    out: *mut dpmo_generalize_derived,
) -> dpmo_status {
    status_of((|| {
        check_out(out)?;
        check_out(params.cast_mut())?;
        // SAFETY: non-null and aligned; the caller promises a readable struct.
        let p = unsafe { params.read() };
        let settings = settings_of(&p)?;
        let outs = [Region::of(out, 1)];
        // SAFETY: forwarded caller contract.
        let derived = unsafe {
            with_lattice(
                hierarchies,
                k,
                leaf_scratch,
                leaf_scratch_len,
                &[Region::of(params, 1)],
                &outs,
                |l| {
                    let q = Parameters::without_condition_10(l, settings)?;
                    let noisy = match q.frequent_noise() {
                        Some(FrequentNoise::Gaussian(g)) => g,
                        _ => return Err(Error::InvalidArgument),
                    };
                    let (total_epsilon, total_delta) = q.guarantee().ok_or(Error::InvalidArgument)?;
                    Ok(dpmo_generalize_derived {
                        epsilon_prime: q.epsilon_prime(),
                        eta: q.eta(),
                        total_epsilon,
                        total_delta,
                        min_t: q.smallest_t(),
                        noise_variance: noisy.variance.upper(),
                        noise_threshold: noisy.threshold,
                        max_chain_product: q.max_chain_product(),
                    })
                },
            )
        }?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out.write(derived) };
        Ok(())
    })())
}

/// Algorithm 3 (Fouad et al.) with a private frequent set: keeps each of the m records independently with
/// probability 1 − β (an exact Bernoulli trial on the bits of β), releases 𝓛′ = {x : |ρ(x, D)| + Z_x ≥ T}
/// with exact discrete Gaussian noise (one record moves N counts by 1: ℓ2 sensitivity √N; σ and T from
/// (ε_F, δ_F), see the core's `generalize::frequency`), and for each kept record draws a generalization
/// from a⁺ ∩ 𝓛′ (threshold objective: those with u ≥ c) by the exponential mechanism in exact arithmetic
/// with P(x) ∝ exp(ε′ f(x)/m̄) (or exp(−ε′ r(x)/m̄)). Writes the released generalizations, k node ids each, sorted lexicographically (a
/// multiset: the rows carry no record order), to `out_rows`, and their number to `*out_released`. A kept
/// record without any admissible generalization is not released.
///
/// Guarantee: (ε + ε_F, δ + δ_F)-differential privacy for adding or removing a record, by Theorem 4 with
/// the corrections documented in the core's `generalize` module, when t satisfies condition (10) (checked).
///
/// `weights`: `weights_len` = 0 for Model II (`weights` may then be NULL), k shared Model I weights, or m · k
/// per-record weights.
/// Scratch: `counts`, `scores` and `candidates` each N entries (`dpmo_lattice_check`); `out_rows`: m · k
/// ids. `budget` (nullable) is charged (ε + ε_F, δ + δ_F) after the arguments are checked and before the
/// records are read. m = 0 is a database like any other: nothing released, charged as always.
///
/// The records and their per-record weights are private, so nothing in them is an error (a status that
/// depends on them would be a free probe): a node id out of range reads as the root ⊥ of its hierarchy
/// (the core's `Hierarchy::node_or_root`), and a per-record weight that is not finite and ≥ 0 reads as 0
/// (`public_weight`). Each is a map of each record by itself, so neighbouring databases stay neighbours and
/// the guarantee below holds for the database so read; the status, the budget and the generator's state
/// are those of the database with ⊥ (or 0) in its place. Shared weights (k of them) are public arguments. The generator advances by one key (four words) whatever the records: every draw comes from
/// that key's private stream.
///
/// Errors (besides the common ones): those of `dpmo_generalize_derive`; t below the smallest admissible t
/// → `DPMO_INVALID_ARGUMENT`; `weights_len` not 0, k or m · k, or NULL weights
/// with a nonzero length → `DPMO_LENGTH_MISMATCH`; a shared weight (`weights_len` = k) not finite →
/// `DPMO_NON_FINITE_INPUT`, negative → `DPMO_INVALID_ARGUMENT`; `out_rows_len` < m · k → `DPMO_LENGTH_MISMATCH`; a
/// short scratch → `DPMO_SCRATCH_TOO_SMALL`; an invalid generator or budget; the budget left smaller than
/// (ε + ε_F, δ + δ_F) (a pure-ε budget has no δ) → `DPMO_BUDGET_EXHAUSTED` (nothing else happens); every
/// argument error, an invalid generator included, is reported before the budget is charged.
///
/// # Safety
/// `rng`: an initialised generator; the hierarchies and leaf scratch as for `dpmo_lattice_check`;
/// `records`: m · k readable ids; `weights`: NULL or `weights_len` readable doubles; `params`: one readable
/// struct; the scratches and `out_rows` writable for their lengths; `out_released`: one writable size_t;
/// `budget`: NULL or a valid budget. No output may overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_generalize_release(
    rng: *mut dpmo_rng,
    hierarchies: *const dpmo_hierarchy,
    k: usize,
    leaf_scratch: *mut u32,
    leaf_scratch_len: usize,
    records: *const u32,
    m: usize,
    weights: *const f64,
    weights_len: usize,
    params: *const dpmo_generalize_params,
    counts: *mut u64,
    counts_len: usize,
    scores: *mut f64,
    scores_len: usize,
    candidates: *mut usize,
    candidates_len: usize,
    out_rows: *mut u32,
    out_rows_len: usize,
    out_released: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(out_released)?;
        check_out(out_rows)?;
        check_out(counts)?;
        check_out(scores)?;
        check_out(candidates)?;
        if !budget.is_null() {
            check_out(budget)?;
        }
        check_out(params.cast_mut())?;
        // SAFETY: non-null and aligned; the caller promises a readable struct.
        let settings = settings_of(&unsafe { params.read() })?;
        // SAFETY: the caller promises m · k readable ids.
        let db = unsafe { records_of(records, m, k) }?;
        let weights_slice: &[f64] = if weights.is_null() {
            if weights_len != 0 {
                return Err(Error::LengthMismatch);
            }
            &[]
        } else {
            // SAFETY: the caller promises `weights_len` readable doubles.
            unsafe { input(weights, weights_len) }?
        };
        let more = [
            Region::of(records, db.len()),
            Region::of(weights, weights_slice.len()),
            Region::of(params, 1),
        ];
        let outs = [
            rng_region(rng),
            budget_region(budget),
            Region::of(counts, counts_len),
            Region::of(scores, scores_len),
            Region::of(candidates, candidates_len),
            Region::of(out_rows, out_rows_len),
            Region::of(out_released, 1),
        ];
        // SAFETY: forwarded caller contract; the outputs are checked disjoint from every input.
        unsafe {
            with_lattice(hierarchies, k, leaf_scratch, leaf_scratch_len, &more, &outs, |l| {
                let p = Parameters::new(l, settings)?;
                let (total_epsilon, total_delta) = p.guarantee().ok_or(Error::InvalidArgument)?;
                let n = l.max_chain_product();
                if counts_len < n || scores_len < n || candidates_len < n {
                    return Err(Error::ScratchTooSmall);
                }
                if out_rows_len < db.len() {
                    return Err(Error::LengthMismatch);
                }
                if !(weights_slice.is_empty() || weights_slice.len() == k || weights_slice.len() == db.len()) {
                    return Err(Error::LengthMismatch);
                }
                let risk = if weights_slice.is_empty() {
                    RiskWeights::ModelII
                } else {
                    RiskWeights::ModelI(weights_slice)
                };
                // Shared weights (k) are public: refused before the charge. Per-record ones (m · k) are
                // private: only their length is checked, and a bad one reads as 0 (`public_weight`).
                risk.check(db.len() / k, k)?;
                // SAFETY: `rng` is non-null and aligned (checked); the caller promises a readable state.
                dpmo_core::rng::GeneratorState { words: (*rng).opaque }.kind()?;
                // Every argument is checked: charge the budget before the records are read. Every failure
                // after this point is caused by the records or their weights, and keeps the charge.
                let _kept = Charged::charge_approx(budget, total_epsilon, total_delta)?;
                let scratch = ReleaseScratch {
                    counts: output(counts, counts_len)?,
                    scores: output(scores, scores_len)?,
                    candidates: output(candidates, candidates_len)?,
                };
                let out = output(out_rows, out_rows_len)?;
                let released = with_generator(rng, |g| {
                    generalize::release(g, l, db, risk, &p, scratch, out, Arithmetic::Exact)
                })?;
                out_released.write(released);
                Ok(())
            })
        }
    })())
}
