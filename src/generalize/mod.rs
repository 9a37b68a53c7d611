//! Private data generalization: Fouad, Elbassioni and Bertino, *Towards a Differentially Private Data
//! Anonymization* (CERIAS TR 2012-1). Each record is released as a generalization of itself, chosen per
//! record by the exponential mechanism over its chain product a⁺, trading re-identification risk against
//! utility, after Bernoulli sampling of the records (Algorithm 3).
//!
//! | paper | here |
//! |---|---|
//! | VGHs 𝓛_i, the lattice 𝓛, ⪰, a⁺, ρ(x, D) (§2.1.2) | [`Hierarchy`], [`Lattice`] ([`hierarchy`]) |
//! | u(x) = Σ d_i(x_i), r^a(x) = Φ^a(x)/\|ρ(x, Θ)\|, Models I and II (§2.1.2) | [`models`] |
//! | threshold model (Def. 1; NP-hard, Thm. 1), Lagrangian f^a (eq. 4, Thm. 2) | [`threshold_optimum`], [`lagrangian_optimum`] (exact, by enumeration) |
//! | t-frequent elements, 𝓛′ (§3.2) | [`frequency`] |
//! | η(k), ε′, β ≥ e^{−ε}, condition (10) (§3.3) | [`parameters`] |
//! | Algorithm 3 | [`release`] ([`mechanism`]) |
//!
//! Everything is `no_std` and allocation-free: the hierarchies are caller parent arrays, their leaf counts
//! and every per-record buffer are caller scratch whose lengths are known from the hierarchies alone
//! (N = ∏(height_i + 1) ≤ [`MAX_CHAIN_PRODUCT`]), and every bad input is an [`Error`](crate::Error).
//!
//! # Privacy: what holds and what does not
//!
//! Theorem 4 claims (ε, δ)-differential privacy for Algorithm 3 when t satisfies condition (10). Checked
//! against the exact output distribution (`tests/generalize_privacy.rs`), the claim fails as printed and
//! holds in the repaired form dpmo implements:
//! * **Step 1 leaks** (see [`frequency`]): 𝓛′ is computed from D, and the proof treats it as the same set
//!   on D and on D₋ₐ₀. On a database where an element of a₀⁺ generalizes exactly t records, the published
//!   algorithm puts (almost) all its output mass outside e^{±ε}. dpmo releases 𝓛′ with noisy counts at a
//!   cost of (ε_F, δ_F): [`FrequentSet::Gaussian`] (discrete Gaussian noise, the C ABI's choice: a record
//!   moves N counts, so ℓ2 noise ∝ √N beats ℓ1 noise ∝ N) or [`FrequentSet::Private`] (discrete Laplace);
//!   [`FrequentSet::Exact`] is the paper's step 1, kept only for comparison.
//! * **The sampling step and the frequency restriction are both necessary**, as the paper says (Example 1
//!   and the remark after condition (10)): without sampling (β → 0) the output size reveals |D|, and
//!   without 𝓛′ a record with a unique value is released as itself with constant probability. The tests
//!   show both failures.
//! * With 𝓛′ fixed, the remaining argument is the paper's, with the corrections listed in [`parameters`]
//!   and [`mechanism`] (a public n₀ in place of |𝓓| in η(k), clamped Φ, the corrected second term of (10),
//!   N in place of h^k). Inequality (24) ignores how many copies of the chosen element the output holds;
//!   the exact computations measure the loss this could cause and find the mass outside e^{±ε} below δ in
//!   the regime of (10), but this is evidence, not a proof.
//!
//! The guarantee is for adding or removing one record (the paper's D₋ₐ₀), with the total
//! (ε + ε_F, δ + δ_F) of [`Parameters::guarantee`]. Condition (10) needs t ≳ 2 ln(2N/δ)/(β τ₁²): the
//! mechanism is meant for databases much larger than t. The hierarchies, the settings and n₀ are public;
//! the records and their per-record Model I weights are private: a node id out of range reads as ⊥
//! ([`Hierarchy::node_or_root`]) and a per-record weight that is not finite and ≥ 0 as 0 ([`public_weight`]),
//! so that no status of the release depends on them.

pub mod frequency;
pub mod hierarchy;
pub mod mechanism;
pub mod models;
pub mod parameters;
pub mod sampling;

pub use frequency::{
    gaussian_threshold, is_frequent, noisy_threshold, FrequentNoise, FrequentSet, GaussianThreshold, NoisyThreshold,
};
pub use hierarchy::{
    lattice_scratch_len, Hierarchy, Lattice, MAX_ATTRIBUTES, MAX_CHAIN_PRODUCT, MAX_HEIGHT, MAX_NODES,
};
pub use mechanism::{record_probabilities, release, release_scratch_len, ReleaseScratch};
pub use models::{
    chain_product_scores, lagrangian, lagrangian_optimum, max_utility, phi, public_weight, risk, threshold_optimum,
    utility, ChainScores, RiskModel, RiskWeights, UtilityMeasure,
};
pub use parameters::{beta_admissible, min_beta, Objective, Parameters, Settings, MAX_KAPPA};
