//! Private selection over an unknown domain: which items (partitions, candidates) to release when there is
//! no public candidate list, and the top-k of them, from raw events (unit, item[, value]).
//!
//! Every other selector of dpmo needs a public candidate list. A list taken from the data leaks: an item
//! only one person produced reveals that person whatever the selection does afterwards. This module finds
//! the items privately:
//!
//! | step | function | guarantee |
//! |---|---|---|
//! | contribution bounding: ≤ L items per unit, ≤ C events per (unit, item), values clamped | [`bound()`] | (none alone: part of the mechanisms below) |
//! | partition selection: truncated geometric, Laplace, Gaussian, weighted Gaussian, DP-SIPS | [`select_partitions`] | (ε, δ)-DP |
//! | top-k over an unknown domain (Durfee & Rogers), pay-what-you-get | [`select_top_k_unknown`] | (ε₀(ℓ + 1), δ) for ℓ items before ⊥ |
//! | both in one call, from events | [`discover_partitions`], [`discover_top_k`] | as above |
//! | the selections from per-item statistics or scores aggregated elsewhere (a distributed bounding) | [`select_partitions_from_statistics`], [`select_top_k_from_scores`] | as above, if the aggregation has the bounding's law |
//!
//! **Neighbouring datasets** differ in all the events of one privacy unit (added or removed). Items are
//! arbitrary 64-bit ids from the data; none is ever released unless the mechanism selects it.
//!
//! **Which mechanism.** With one item per unit (L = 1), truncated geometric thresholding is optimal
//! (Desfontaines et al. 2022). With many items per unit, the Gaussian mechanisms scale with √L instead of L;
//! weighted Gaussian thresholding gives each unit the same total weight whatever its number of items, and
//! DP-SIPS re-spends the weight of the items already found over a few rounds (Swanberg et al. 2023), usually
//! finding the most. Laplace thresholding is the pure-noise baseline.
//!
//! **Exact arithmetic on the random path.** Every noise is exact (discrete Laplace, its truncation,
//! discrete Gaussian: [`crate::exact`]), every threshold and weight an integer, every comparison exact; the
//! top-k runs the exact exponential mechanism on integer scores. The public parameters (noise variances,
//! thresholds, truncation points, the ⊥ offset) come from (ε, δ, L) in floating point, each rounded in the
//! safe direction with a proof in [`accounting`] and the mechanism files.
//!
//! **What the caller can observe.** Each public call draws exactly one key — four words — from the
//! caller's generator ([`crate::rng::call_stream`], as every selector of dpmo) and takes all its randomness
//! (the bounding streams' key, the noise) from that private ChaCha20 stream, so the caller's generator
//! advances the same whatever the events (`tests/consumption.rs`); every argument is checked before the
//! draw; private data is never a status (no event at all is an empty dataset; a NaN value counts as 0 and
//! ±∞ is clamped, [`bound()`]); the outputs are sorted (partition selection) or in selection order (top-k),
//! never in data order. Not hidden: the time a call takes, which grows with the
//! number of events, of distinct items and of rounds (there is no constant-time mode for discovery).
//!
//! # Example
//!
//! The two most popular of three items, with no candidate list, charged what the run spent:
//!
//! ```
//! use dpmo::discover::{discover_top_k, top_k_work_len, Bounds, Contribution, Events, TopKScore};
//! use dpmo::privacy::PrivacyBudget;
//! use dpmo::GeneratorState;
//!
//! let mut rng = GeneratorState::chacha20([7; 32]).load()?; // seed from the OS in production
//! let (units, items): (Vec<u64>, Vec<u64>) = (0..600u64).map(|u| (u, [11, 22, 33][(u % 3) as usize])).unzip();
//! let events = Events { units: &units, items: &items, values: None };
//! let bounds = Bounds { max_items: 1, max_per_item: 1, clamp: None };
//! let mut scratch = vec![Contribution::default(); 600];
//! let (mut work, mut top) = (vec![0; top_k_work_len(10).unwrap()], [0; 2]);
//! let mut budget = PrivacyBudget::new_approx(1.0, 1e-6)?;
//! let r = discover_top_k(&mut rng, &events, &bounds, TopKScore::Units, 2, 10, 1.0, 1e-6, &mut scratch, &mut work, &mut top)?;
//! budget.charge_approx(r.epsilon, r.delta)?; // what the run cost: at most (1, 1e-6)
//! assert!(r.len <= 2 && top[..r.len].iter().all(|i| [11, 22, 33].contains(i)));
//! # Ok::<(), dpmo::Error>(())
//! ```

pub mod accounting;
pub mod bound;
mod geometric;
pub mod sips;
mod threshold;
pub mod topk;
pub mod weighted;

pub use bound::{bound, Bounded, Bounds, Contribution, Events, ItemTotal, MAX_ITEMS_PER_UNIT};
pub use topk::{
    select_top_k_from_scores, select_top_k_unknown, select_top_k_with_plan, top_k_work_len, TopKOutcome, TopKPlan,
    TopKScore, MAX_SCORE,
};
pub use weighted::weight;

use crate::exact::gaussian::GaussianVariance;
use crate::Error;
use bound::{item_runs, sort_by_item, sort_by_unit, SELECTED};
use rand_chacha::ChaCha20Rng;
use rand_core::Rng;

/// A partition-selection mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartitionSelection {
    /// Truncated geometric thresholding (Desfontaines et al., PoPETs 2022), per partition at (ε/L, δ/L).
    TruncatedGeometric,
    /// Unit counts plus discrete Laplace noise of rate ε/L, thresholded.
    Laplace,
    /// Unit counts plus discrete Gaussian noise (ℓ2 sensitivity √L), thresholded.
    Gaussian,
    /// Weights 1/√|S_u| per unit (ℓ2 norm 1) summed per item, plus discrete Gaussian noise, thresholded
    /// (Gopi et al., ICML 2020).
    WeightedGaussian,
    /// DP-SIPS (Swanberg et al., PoPETs 2023): weighted Gaussian thresholding over `rounds` rounds
    /// (1 ≤ rounds ≤ [`sips::MAX_ROUNDS`]), each spreading the units' weight over the items not yet found.
    Sips {
        /// The number of rounds R.
        rounds: u32,
    },
}

// The DP-SIPS plan (eight rounds) is the largest: a plan is a small value computed once per call, not
// worth a box (and there is no allocator).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq)]
enum Inner {
    Geometric(geometric::Geometric),
    Laplace(threshold::Laplace),
    Gaussian(threshold::Gaussian),
    Weighted(weighted::Weighted),
    Sips(sips::Sips),
}

/// The public parameters of a partition selection, computed from (ε, δ, L) alone: what the mechanism
/// compares to what. Computing it touches no data and draws nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartitionPlan {
    how: PartitionSelection,
    max_items: usize,
    inner: Inner,
}

impl PartitionPlan {
    /// The plan of `how` at (ε, δ) for contributions of at most `max_items` = L items per unit.
    ///
    /// Errors: ε not finite or ≤ 0 → [`Error::InvalidEpsilon`]; δ outside
    /// [[`accounting::MIN_DELTA`], 1), L = 0 or above [`MAX_ITEMS_PER_UNIT`], DP-SIPS rounds outside
    /// [1, [`sips::MAX_ROUNDS`]], or parameters beyond the exact samplers' ranges (L/ε above 2³² for the
    /// Laplace-type noises, σ² above 2⁶²) → [`Error::InvalidArgument`].
    pub fn new(how: PartitionSelection, epsilon: f64, delta: f64, max_items: usize) -> Result<Self, Error> {
        accounting::check_epsilon_delta(epsilon, delta)?;
        if max_items == 0 || max_items > MAX_ITEMS_PER_UNIT {
            return Err(Error::InvalidArgument);
        }
        let l = max_items;
        let inner = match how {
            PartitionSelection::TruncatedGeometric => Inner::Geometric(geometric::plan(epsilon, delta, l)?),
            PartitionSelection::Laplace => Inner::Laplace(threshold::laplace_plan(epsilon, delta, l)?),
            PartitionSelection::Gaussian => Inner::Gaussian(threshold::gaussian_plan(epsilon, delta, l)?),
            PartitionSelection::WeightedGaussian => Inner::Weighted(weighted::plan(epsilon, delta, l)?),
            PartitionSelection::Sips { rounds } => Inner::Sips(sips::plan(epsilon, delta, l, rounds)?),
        };
        Ok(PartitionPlan { how, max_items, inner })
    }

    /// The mechanism.
    pub fn mechanism(&self) -> PartitionSelection {
        self.how
    }

    /// L.
    pub fn max_items(&self) -> usize {
        self.max_items
    }

    /// Truncated geometric: the truncation k (an item with n units is kept when n + Z ≥ k + 1, Z on
    /// {−k, …, k} with P(Z = z) ∝ e^{−|z|ε/L}).
    pub fn truncation(&self) -> Option<u64> {
        match self.inner {
            Inner::Geometric(g) => Some(g.truncation),
            _ => None,
        }
    }

    /// The number of rounds (1 except for DP-SIPS).
    pub fn rounds(&self) -> usize {
        match self.inner {
            Inner::Sips(s) => s.rounds as usize,
            _ => 1,
        }
    }

    /// The threshold T of round `round` (0-based): an item is kept when its count (Laplace, Gaussian) or
    /// weight in grid units (weighted, DP-SIPS) plus the noise is ≥ T. None for the truncated geometric
    /// mechanism (see [`truncation`](Self::truncation)) and for rounds beyond the last.
    pub fn threshold(&self, round: usize) -> Option<u64> {
        match self.inner {
            Inner::Laplace(p) if round == 0 => Some(p.threshold),
            Inner::Gaussian(p) if round == 0 => Some(p.threshold),
            Inner::Weighted(p) if round == 0 => Some(p.threshold),
            Inner::Sips(s) if round < s.rounds as usize => Some(s.round[round].1),
            _ => None,
        }
    }

    /// The variance of the discrete Gaussian noise of round `round` (in grid units for the weighted
    /// mechanisms); None for the Laplace-type noises.
    pub fn variance(&self, round: usize) -> Option<GaussianVariance> {
        match self.inner {
            Inner::Gaussian(p) if round == 0 => Some(p.variance),
            Inner::Weighted(p) if round == 0 => Some(p.variance),
            Inner::Sips(s) if round < s.rounds as usize => Some(s.round[round].0),
            _ => None,
        }
    }

    /// The weight grid G of the weighted mechanisms: a unit with s items gives each w_s = [`weight`] at (G, s).
    pub fn grid(&self) -> Option<u64> {
        match self.inner {
            Inner::Weighted(p) => Some(p.grid),
            Inner::Sips(s) => Some(s.grid),
            _ => None,
        }
    }
}

/// Private partition selection over bounded contributions: writes the selected items to `out`, sorted
/// ascending, and returns their number. `how` runs at (ε, δ) with the L of `bounded`. Draws exactly one key
/// (four words) from `rng` ([`crate::rng::call_stream`]: the noise comes from its private stream), after
/// every argument check, whatever the contributions.
///
/// Guarantee: (ε, δ)-differential privacy for adding or removing one unit's events, the bounding included
/// (see each mechanism's module and [`PartitionSelection`]).
///
/// Errors (nothing drawn, nothing written): those of [`PartitionPlan::new`]; `out` shorter than the number
/// of events given to [`bound()`] (the public bound on the number of distinct items) →
/// [`Error::LengthMismatch`].
pub fn select_partitions<R: Rng + ?Sized>(
    rng: &mut R,
    bounded: &mut Bounded<'_>,
    how: PartitionSelection,
    epsilon: f64,
    delta: f64,
    out: &mut [u64],
) -> Result<usize, Error> {
    let plan = PartitionPlan::new(how, epsilon, delta, bounded.bounds.max_items)?;
    select_partitions_with_plan(rng, bounded, &plan, out)
}

/// [`select_partitions`] with a plan computed beforehand ([`PartitionPlan::new`], which costs about a
/// tenth of a millisecond for the Gaussian mechanisms): for repeated selections with the same parameters.
///
/// Errors (nothing drawn, nothing written): a plan made for another L than the bounds of `bounded` →
/// [`Error::InvalidArgument`]; `out` shorter than the number of events given to [`bound()`] →
/// [`Error::LengthMismatch`].
pub fn select_partitions_with_plan<R: Rng + ?Sized>(
    rng: &mut R,
    bounded: &mut Bounded<'_>,
    plan: &PartitionPlan,
    out: &mut [u64],
) -> Result<usize, Error> {
    if plan.max_items != bounded.bounds.max_items {
        return Err(Error::InvalidArgument);
    }
    if out.len() < bounded.events {
        return Err(Error::LengthMismatch);
    }
    let mut g = crate::rng::call_stream(rng);
    let entries = &mut *bounded.entries;
    let mut n = 0;
    match &plan.inner {
        Inner::Sips(s) => n = sips_run(&mut g, entries, s, out),
        inner => {
            sort_by_item(entries);
            for run in item_runs(entries) {
                let units = run.len() as u64;
                let keep = match inner {
                    Inner::Geometric(p) => geometric::keep(&mut g, p, units),
                    Inner::Laplace(p) => threshold::laplace_keep(&mut g, p, units),
                    Inner::Gaussian(p) => threshold::gaussian_keep(&mut g, &p.variance, p.threshold, units),
                    Inner::Weighted(p) => {
                        let w = run.iter().map(|c| weight(p.grid, u64::from(c.tag))).sum();
                        threshold::gaussian_keep(&mut g, &p.variance, p.threshold, w)
                    }
                    Inner::Sips(_) => false,
                };
                if keep {
                    out[n] = run[0].item;
                    n += 1;
                }
            }
        }
    }
    out[..n].sort_unstable();
    Ok(n)
}

/// Partition selection from per-item statistics computed elsewhere — by a distributed bounding (a Spark
/// job, `dpmo.spark.discover_partitions`) that applied [`bound()`]'s law per unit and summed per item: for
/// truncated geometric, Laplace and Gaussian thresholding the statistic of an item is its number of units
/// with a kept contribution; for weighted Gaussian thresholding it is Σ [`weight`]`(plan.grid(), |S_u|)`
/// over those units (|S_u| the unit's number of kept items). Writes the selected items to `out`, sorted,
/// and returns their number.
///
/// The decision of each item is the one [`select_partitions_with_plan`] makes (the same sampler, plan and
/// integer comparison), independent across items given the statistics: so a selection split over several
/// calls (each with its own generator, each item in exactly one call) has the law of one call over all
/// the items, and that of [`select_partitions_with_plan`] when the statistics have the bounding's law.
/// The guarantee ((ε, δ)-DP for adding or removing one unit) holds only if the statistics come from
/// contributions bounded per *unit* to at most L items (the plan's), and every item with a kept
/// contribution is in exactly one call. `items` must be strictly ascending (distinct, and a canonical
/// order: the same items and statistics give the same draws, whatever order they were aggregated in).
///
/// Draws exactly one key (four words) from `rng` ([`crate::rng::call_stream`]), after every argument
/// check, whatever the statistics.
///
/// Errors (nothing drawn, nothing written): DP-SIPS (its rounds re-weight units by the items already found,
/// which per-item statistics cannot express) → [`Error::Unsupported`]; `items` and `statistics` of
/// different lengths, or `out` shorter than `items` → [`Error::LengthMismatch`]; a statistic 0 (an item
/// without a contribution is never a candidate) or `items` not strictly ascending →
/// [`Error::InvalidArgument`].
pub fn select_partitions_from_statistics<R: Rng + ?Sized>(
    rng: &mut R,
    plan: &PartitionPlan,
    items: &[u64],
    statistics: &[u64],
    out: &mut [u64],
) -> Result<usize, Error> {
    if matches!(plan.inner, Inner::Sips(_)) {
        return Err(Error::Unsupported);
    }
    if items.len() != statistics.len() || out.len() < items.len() {
        return Err(Error::LengthMismatch);
    }
    if statistics.contains(&0) {
        return Err(Error::InvalidArgument);
    }
    if items.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::InvalidArgument);
    }
    let mut g = crate::rng::call_stream(rng);
    let mut n = 0;
    for (&item, &s) in items.iter().zip(statistics) {
        let keep = match &plan.inner {
            Inner::Geometric(p) => geometric::keep(&mut g, p, s),
            Inner::Laplace(p) => threshold::laplace_keep(&mut g, p, s),
            Inner::Gaussian(p) => threshold::gaussian_keep(&mut g, &p.variance, p.threshold, s),
            Inner::Weighted(p) => threshold::gaussian_keep(&mut g, &p.variance, p.threshold, s),
            Inner::Sips(_) => false,
        };
        if keep {
            out[n] = item;
            n += 1;
        }
    }
    Ok(n)
}

/// The end of the run of equal `key` starting at `start`.
fn run_end(c: &[Contribution], start: usize, key: impl Fn(&Contribution) -> u64) -> usize {
    let k = key(&c[start]);
    let mut end = start + 1;
    while end < c.len() && key(&c[end]) == k {
        end += 1;
    }
    end
}

/// The rounds of DP-SIPS (see [`sips`]); restores each contribution's tag (its unit's item count) after.
fn sips_run(g: &mut ChaCha20Rng, entries: &mut [Contribution], s: &sips::Sips, out: &mut [u64]) -> usize {
    let mut n = 0;
    for r in 0..s.rounds as usize {
        let (variance, threshold) = s.round[r];
        // Each unit's items not selected yet, in the low bits of the tag.
        sort_by_unit(entries);
        let mut i = 0;
        while i < entries.len() {
            let end = run_end(entries, i, |c| c.unit);
            let left = entries[i..end].iter().filter(|c| c.tag & SELECTED == 0).count() as u32;
            for c in &mut entries[i..end] {
                c.tag = (c.tag & SELECTED) | left;
            }
            i = end;
        }
        sort_by_item(entries);
        let mut i = 0;
        while i < entries.len() {
            let end = run_end(entries, i, |c| c.item);
            if entries[i].tag & SELECTED == 0 {
                let w = entries[i..end]
                    .iter()
                    .map(|c| weight(s.grid, u64::from(c.tag & !SELECTED)))
                    .sum();
                if threshold::gaussian_keep(g, &variance, threshold, w) {
                    for c in &mut entries[i..end] {
                        c.tag |= SELECTED;
                    }
                    out[n] = entries[i].item;
                    n += 1;
                }
            }
            i = end;
        }
    }
    // Restore the tags: each unit's number of kept items.
    sort_by_unit(entries);
    let mut i = 0;
    while i < entries.len() {
        let end = run_end(entries, i, |c| c.unit);
        let kept = (end - i) as u32;
        for c in &mut entries[i..end] {
            c.tag = kept;
        }
        i = end;
    }
    n
}

/// Contribution bounding and partition selection in one call: bounds `events` with `bounds` into
/// `scratch` (one entry per event), runs `how` at (ε, δ) and writes the selected items to `out` (at least
/// one entry per event), sorted. Draws exactly one key (four words) from `rng` ([`crate::rng::call_stream`];
/// the bounding and the noise draw from its private stream), after every argument check (those of
/// [`bound()`], [`PartitionPlan::new`] and `out`'s length), whatever the events.
#[allow(clippy::too_many_arguments)]
pub fn discover_partitions<R: Rng + ?Sized>(
    rng: &mut R,
    events: &Events<'_>,
    bounds: &Bounds,
    how: PartitionSelection,
    epsilon: f64,
    delta: f64,
    scratch: &mut [Contribution],
    out: &mut [u64],
) -> Result<usize, Error> {
    bound::check(events, bounds, scratch.len())?;
    let plan = PartitionPlan::new(how, epsilon, delta, bounds.max_items)?;
    if out.len() < events.units.len() {
        return Err(Error::LengthMismatch);
    }
    // One key from the caller's generator; the bounding and the selection draw theirs from its stream.
    let stream = &mut crate::rng::call_stream(rng);
    let mut b = bound(stream, events, bounds, scratch)?;
    select_partitions_with_plan(stream, &mut b, &plan, out)
}

/// Contribution bounding and unknown-domain top-k in one call (see [`select_top_k_unknown`]). Draws
/// exactly one key (four words) from `rng` ([`crate::rng::call_stream`]), after every argument check,
/// whatever the events.
#[allow(clippy::too_many_arguments)]
pub fn discover_top_k<R: Rng + ?Sized>(
    rng: &mut R,
    events: &Events<'_>,
    bounds: &Bounds,
    score: TopKScore,
    k: usize,
    k_bar: usize,
    epsilon: f64,
    delta: f64,
    scratch: &mut [Contribution],
    work: &mut [u64],
    out: &mut [u64],
) -> Result<TopKOutcome, Error> {
    bound::check(events, bounds, scratch.len())?;
    let plan = TopKPlan::new(score, k, k_bar, epsilon, delta, bounds)?;
    if top_k_work_len(k_bar).is_none_or(|n| work.len() < n) {
        return Err(Error::ScratchTooSmall);
    }
    if out.len() < k {
        return Err(Error::LengthMismatch);
    }
    let stream = &mut crate::rng::call_stream(rng);
    let mut b = bound(stream, events, bounds, scratch)?;
    select_top_k_with_plan(stream, &mut b, score, &plan, work, out)
}
