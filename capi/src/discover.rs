//! Private selection over an unknown domain: contribution bounding of raw events, partition selection
//! (which items to release when there is no public candidate list) and top-k over an unknown domain with
//! pay-what-you-get charges. See the core's `discover` module for the mechanisms and their proofs.
//!
//! Events are three parallel arrays of n entries: `units[i]` (the privacy unit: a user, a device), `items[i]`
//! (any 64-bit id from the data) and optionally `values[i]`. Neighbouring datasets differ in all the events
//! of one unit. Every function bounds the contributions first: at most `max_items` (L) items per unit and
//! `max_per_item` (C) events per (unit, item), chosen uniformly at random per unit from a stream of its own
//! (so no unit's choice depends on another unit's data), values clamped to [lo, hi] (a NaN value counts as
//! 0) and put on the grid 2^(⌈log₂ max(|lo|, |hi|)⌉ − 20).
//!
//! Memory: a `uint64_t` scratch of `dpmo_discover_scratch_len(n)` words (32 bytes per event) and outputs
//! sized by n (or k), never by the data. Randomness: each call draws exactly one key (four 64-bit words)
//! from the generator, whatever the data, and takes everything else from that key's private ChaCha20 stream
//! (as every selecting call). Private data is never a status: n = 0 is an empty dataset (nothing kept,
//! nothing selected), a NaN value counts as 0 and ±∞ is clamped. Not hidden: the time a call takes.

use crate::budget::{budget_region, dpmo_budget, Charged};
use crate::buffers::{check_disjoint, check_out, input, output, Region};
use crate::rng::{dpmo_rng, rng_region, with_generator};
use crate::status::{dpmo_status, status_of};
use dpmo_core::discover::{
    self, bound::validate, Bounds, Contribution, Events, ItemTotal, PartitionPlan, PartitionSelection, TopKPlan,
    TopKScore,
};
use dpmo_core::rng::call_stream;
use dpmo_core::Error;

/// Partition selection: truncated geometric thresholding (Desfontaines et al. 2022; optimal for L = 1).
pub const DPMO_PARTITION_TRUNCATED_GEOMETRIC: u32 = 0;
/// Partition selection: unit counts plus discrete Laplace noise, thresholded.
pub const DPMO_PARTITION_LAPLACE: u32 = 1;
/// Partition selection: unit counts plus discrete Gaussian noise, thresholded.
pub const DPMO_PARTITION_GAUSSIAN: u32 = 2;
/// Partition selection: weights 1/√|S_u| per unit, plus discrete Gaussian noise, thresholded (Gopi et al.).
pub const DPMO_PARTITION_WEIGHTED_GAUSSIAN: u32 = 3;
/// Partition selection: DP-SIPS (Swanberg et al. 2023), `rounds` rounds of weighted Gaussian thresholding.
pub const DPMO_PARTITION_SIPS: u32 = 4;
/// The most DP-SIPS rounds.
pub const DPMO_PARTITION_MAX_ROUNDS: u32 = 8;

/// Top-k score: distinct units with a kept contribution to the item (a unit adds at most 1).
pub const DPMO_SCORE_UNITS: u32 = 0;
/// Top-k score: kept events on the item (a unit adds at most C).
pub const DPMO_SCORE_EVENTS: u32 = 1;
/// Top-k score: the sum of the kept values, clamped to [lo, hi] with 0 ≤ lo < hi (a unit adds at most C·hi).
pub const DPMO_SCORE_SUM: u32 = 2;

/// The most items per unit, L.
pub const DPMO_DISCOVER_MAX_ITEMS: usize = 1_048_576;

const _: () = assert!(DPMO_PARTITION_MAX_ROUNDS == discover::sips::MAX_ROUNDS);
const _: () = assert!(DPMO_DISCOVER_MAX_ITEMS == discover::MAX_ITEMS_PER_UNIT);
/// Scratch words per event: one `Contribution` of the core is four 64-bit words.
const WORDS: usize = 4;
const _: () = assert!(core::mem::size_of::<Contribution>() == WORDS * 8);
const _: () = assert!(core::mem::align_of::<Contribution>() == 8);

/// The bounded contributions of one item (`dpmo_bound_events`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_item_total {
    /// The item.
    pub item: u64,
    /// The distinct units with a kept contribution (a unit adds at most 1 to one item, L in all).
    pub units: u64,
    /// The kept events (a unit adds at most C to one item, L·C in all).
    pub events: u64,
    /// The sum of the kept, clamped values, in units of the value grid (multiply by the grid).
    pub sum: i64,
}

const _: () = assert!(core::mem::size_of::<dpmo_item_total>() == core::mem::size_of::<ItemTotal>());

/// The outcome of `dpmo_discover_top_k`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_top_k_result {
    /// The number of items written, ℓ ≤ k, in selection order.
    pub count: usize,
    /// 1 when the run stopped at the threshold candidate ⊥ (ℓ < k), else 0.
    pub stopped: u32,
    /// The ε spent (pay what you get): ε/k · (ℓ + 1) when stopped, ε otherwise.
    pub epsilon: f64,
    /// The δ spent.
    pub delta: f64,
}

/// Writes to `*out_words` the scratch size, in `uint64_t` words, of every discovery function for n events:
/// 4 n.
///
/// Errors: a null or misaligned `out_words`; 4 n beyond `SIZE_MAX` → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_words`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_discover_scratch_len(n_events: usize, out_words: *mut usize) -> dpmo_status {
    status_of((|| {
        check_out(out_words)?;
        let w = n_events.checked_mul(WORDS).ok_or(Error::Overflow)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_words.write(w) };
        Ok(())
    })())
}

/// Writes to `*out_words` the work size, in `uint64_t` words, of `dpmo_discover_top_k` for k̄: 6 (k̄ + 1).
///
/// Errors: a null or misaligned `out_words`; an overflow → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_words`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_discover_top_k_work_len(k_bar: usize, out_words: *mut usize) -> dpmo_status {
    status_of((|| {
        check_out(out_words)?;
        let w = discover::top_k_work_len(k_bar).ok_or(Error::Overflow)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_words.write(w) };
        Ok(())
    })())
}

/// The events and the bounds as core values, with their input regions; `values` may be null (then lo and
/// hi must be 0).
struct Raw<'a> {
    events: Events<'a>,
    bounds: Bounds,
    regions: [Region; 3],
}

/// # Safety
/// `units`, `items`: n readable words; `values`: null or n readable doubles.
#[allow(clippy::too_many_arguments)]
unsafe fn raw<'a>(
    units: *const u64,
    items: *const u64,
    values: *const f64,
    n: usize,
    max_items: usize,
    max_per_item: usize,
    lo: f64,
    hi: f64,
) -> Result<Raw<'a>, Error> {
    // SAFETY: forwarded caller contract.
    let (u, i) = unsafe { (input(units, n)?, input(items, n)?) };
    let v = if values.is_null() {
        if lo != 0.0 || hi != 0.0 {
            return Err(Error::InvalidArgument);
        }
        None
    } else {
        // SAFETY: forwarded caller contract.
        Some(unsafe { input(values, n) }?)
    };
    Ok(Raw {
        events: Events {
            units: u,
            items: i,
            values: v,
        },
        bounds: Bounds {
            max_items,
            max_per_item,
            clamp: v.map(|_| (lo, hi)),
        },
        regions: [
            Region::of(units, n),
            Region::of(items, n),
            if values.is_null() {
                Region::EMPTY
            } else {
                Region::of(values, n)
            },
        ],
    })
}

/// The scratch as core contributions.
///
/// # Safety
/// `scratch`: `words` writable words, disjoint from every other buffer (checked by the callers).
unsafe fn contributions<'a>(scratch: *mut u64, words: usize) -> Result<&'a mut [Contribution], Error> {
    // SAFETY: forwarded caller contract.
    let s = unsafe { output(scratch, words) }?;
    // SAFETY: Contribution is four u64-sized fields (repr(C), size 32, alignment 8, checked above), every
    // bit pattern is valid for it, and the slice is exclusively ours for the call.
    Ok(unsafe { core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<Contribution>(), s.len() / WORDS) })
}

/// Validates the generator state without drawing.
///
/// # Safety
/// `rng`: checked non-null and aligned; validity is the caller's contract.
unsafe fn check_generator(rng: *mut dpmo_rng) -> Result<(), Error> {
    // SAFETY: forwarded caller contract.
    dpmo_core::GeneratorState {
        words: unsafe { rng.read() }.opaque,
    }
    .load()
    .map(|_| ())
}

/// Contribution bounding alone, with the bounded aggregates per item: writes one `dpmo_item_total` per
/// distinct kept item, sorted by item, to `out_totals` (at least n entries: the public bound on the
/// number of items), their number to `*out_count` and the value grid g to `*out_value_grid` (1 without
/// values). Not a release: the totals are exact, for a mechanism of the caller's to add noise to with the
/// sensitivities of `dpmo_item_total`. No budget is charged. Draws one key (four words) from the generator.
///
/// `values`: null for counts only (then `lo` = `hi` = 0); otherwise n doubles clamped to [lo, hi] (finite,
/// lo ≤ hi, max(|lo|, |hi|) 0 or within [2^-600, 2^600]).
///
/// n = 0 is valid (no item). Errors (nothing written, generator unchanged): L = 0 or above
/// `DPMO_DISCOVER_MAX_ITEMS`, C = 0 or above 2^32 − 1, or an invalid clamp → `DPMO_INVALID_ARGUMENT`; a
/// scratch shorter than `dpmo_discover_scratch_len(n)` → `DPMO_SCRATCH_TOO_SMALL`; `out_totals_len` < n →
/// `DPMO_LENGTH_MISMATCH`; an invalid generator; the common pointer errors.
///
/// # Safety
/// `rng`: an initialised generator; `units`, `items`: n readable words; `values`: null or n readable
/// doubles; `scratch`: `scratch_len` writable words; `out_totals`: `out_totals_len` writable entries;
/// `out_count`, `out_value_grid`: one writable value each. No output may overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_bound_events(
    rng: *mut dpmo_rng,
    units: *const u64,
    items: *const u64,
    values: *const f64,
    n: usize,
    max_items: usize,
    max_per_item: usize,
    lo: f64,
    hi: f64,
    scratch: *mut u64,
    scratch_len: usize,
    out_totals: *mut dpmo_item_total,
    out_totals_len: usize,
    out_count: *mut usize,
    out_value_grid: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(scratch)?;
        check_out(out_totals)?;
        check_out(out_count)?;
        check_out(out_value_grid)?;
        // SAFETY: forwarded caller contract.
        let r = unsafe { raw(units, items, values, n, max_items, max_per_item, lo, hi) }?;
        check_disjoint(
            &[
                rng_region(rng),
                Region::of(scratch, scratch_len),
                Region::of(out_totals, out_totals_len),
                Region::of(out_count, 1),
                Region::of(out_value_grid, 1),
            ],
            &r.regions,
        )?;
        validate(&r.events, &r.bounds, scratch_len / WORDS)?;
        if out_totals_len < n {
            return Err(Error::LengthMismatch);
        }
        // SAFETY: checked disjoint from every other buffer.
        let (s, totals) = unsafe {
            (
                contributions(scratch, scratch_len)?,
                output(out_totals, out_totals_len)?,
            )
        };
        // SAFETY: dpmo_item_total and ItemTotal are the same four 64-bit fields in the same order (repr(C),
        // sizes checked above); every bit pattern is valid for both.
        let totals = unsafe { core::slice::from_raw_parts_mut(totals.as_mut_ptr().cast::<ItemTotal>(), totals.len()) };
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let (count, grid) = unsafe {
            with_generator(rng, |g| {
                let mut b = discover::bound(g, &r.events, &r.bounds, s)?;
                Ok((b.totals(totals)?, b.value_grid()))
            })
        }?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_count.write(count);
            out_value_grid.write(grid);
        }
        Ok(())
    })())
}

fn mechanism_of(mechanism: u32, rounds: u32) -> Result<PartitionSelection, Error> {
    let how = match mechanism {
        DPMO_PARTITION_TRUNCATED_GEOMETRIC => PartitionSelection::TruncatedGeometric,
        DPMO_PARTITION_LAPLACE => PartitionSelection::Laplace,
        DPMO_PARTITION_GAUSSIAN => PartitionSelection::Gaussian,
        DPMO_PARTITION_WEIGHTED_GAUSSIAN => PartitionSelection::WeightedGaussian,
        DPMO_PARTITION_SIPS => return Ok(PartitionSelection::Sips { rounds }),
        _ => return Err(Error::InvalidArgument),
    };
    if rounds != 0 {
        return Err(Error::InvalidArgument);
    }
    Ok(how)
}

/// Private partition selection from raw events: bounds each unit's contributions to at most `max_items`
/// (L) items, then releases the items chosen by `mechanism` (`DPMO_PARTITION_*`; `rounds` is the number of
/// DP-SIPS rounds, 1 to `DPMO_PARTITION_MAX_ROUNDS`, and must be 0 for the other mechanisms) at
/// (epsilon, delta): writes them to `out_items`, sorted ascending, and their number to `*out_count`. An
/// item no unit has is never released. (epsilon, delta)-DP for adding or removing all the events of one
/// unit; `budget` (nullable) is charged (epsilon, delta) before the events are read (a pure-ε budget
/// refuses the charge: initialise it with `dpmo_budget_init_approx`). Draws one key (four words) from the
/// generator, whatever the events; n = 0 is an empty dataset (nothing released, still charged).
///
/// Every noise is exact (discrete Laplace, truncated, discrete Gaussian) and every comparison an integer
/// one; the thresholds are computed from (epsilon, delta, L) and rounded in the safe direction.
///
/// Errors (nothing written, nothing charged, generator unchanged): epsilon not finite or ≤ 0 → `DPMO_INVALID_EPSILON`; delta outside [2^-300, 1), an unknown mechanism, a wrong
/// `rounds`, L = 0 or above `DPMO_DISCOVER_MAX_ITEMS`, or parameters beyond the exact samplers' ranges (L/ε
/// above 2^32 for the Laplace-type noises, a Gaussian variance above 2^62) → `DPMO_INVALID_ARGUMENT`; a
/// scratch shorter than `dpmo_discover_scratch_len(n)` → `DPMO_SCRATCH_TOO_SMALL`; `out_items_len` < n →
/// `DPMO_LENGTH_MISMATCH`; an invalid generator or budget; too little budget left →
/// `DPMO_BUDGET_EXHAUSTED`; the common pointer errors.
///
/// # Safety
/// `rng`: an initialised generator; `units`, `items`: n readable words; `scratch`: `scratch_len` writable
/// words; `out_items`: `out_items_len` writable words; `out_count`: one writable size_t; `budget`: null or
/// a valid budget. No output may overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_discover_partitions(
    rng: *mut dpmo_rng,
    units: *const u64,
    items: *const u64,
    n: usize,
    max_items: usize,
    mechanism: u32,
    rounds: u32,
    epsilon: f64,
    delta: f64,
    scratch: *mut u64,
    scratch_len: usize,
    out_items: *mut u64,
    out_items_len: usize,
    out_count: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(scratch)?;
        check_out(out_items)?;
        check_out(out_count)?;
        if !budget.is_null() {
            check_out(budget)?;
        }
        // SAFETY: forwarded caller contract.
        let r = unsafe { raw(units, items, core::ptr::null(), n, max_items, 1, 0.0, 0.0) }?;
        check_disjoint(
            &[
                rng_region(rng),
                budget_region(budget),
                Region::of(scratch, scratch_len),
                Region::of(out_items, out_items_len),
                Region::of(out_count, 1),
            ],
            &r.regions,
        )?;
        let how = mechanism_of(mechanism, rounds)?;
        validate(&r.events, &r.bounds, scratch_len / WORDS)?;
        let plan = PartitionPlan::new(how, epsilon, delta, max_items)?;
        if out_items_len < n {
            return Err(Error::LengthMismatch);
        }
        // SAFETY: checked disjoint from every other buffer.
        let (s, out) = unsafe { (contributions(scratch, scratch_len)?, output(out_items, out_items_len)?) };
        // SAFETY: checked non-null and aligned.
        unsafe { check_generator(rng) }?;
        // SAFETY: the budget is disjoint from every other buffer.
        let charge = unsafe { Charged::charge_approx(budget, epsilon, delta) }?;
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let result = unsafe {
            with_generator(rng, |g| {
                // One key from the caller's generator; the bounding and the noise draw from its stream.
                let stream = &mut call_stream(g);
                let mut b = discover::bound(stream, &r.events, &r.bounds, s)?;
                discover::select_partitions_with_plan(stream, &mut b, &plan, out)
            })
        };
        let count = Charged::settle(charge, result)?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out_count.write(count) };
        Ok(())
    })())
}

/// Top-k over an unknown domain (Durfee & Rogers 2019), from raw events: bounds the contributions (L items
/// per unit, C events per (unit, item), values clamped to [lo, hi]), takes the k̄ items with the largest
/// `score` (`DPMO_SCORE_*`) and a threshold candidate ⊥ at h₍k̄₊₁₎ + Δ∞ (1 + ln(min(L, k̄)/delta)/ε₀),
/// ε₀ = epsilon/k, and picks up to k of them by the exact exponential mechanism (exp(ε₀ h/Δ∞)), stopping at
/// ⊥. Writes the items to `out_items` in selection order and the outcome to `*out_result`.
///
/// Pay what you get: a run that stops at ⊥ after ℓ items costs (ε₀ (ℓ + 1), delta), one that outputs k
/// items (epsilon, delta) (`out_result->epsilon`, `->delta`). `budget` (nullable) is charged (epsilon,
/// delta) before the events are read and refunded the difference after the run. Draws one key (four
/// words) from the generator, whatever the events; n = 0 is an empty dataset (⊥ competes alone).
///
/// `values`: null for `DPMO_SCORE_UNITS` and `DPMO_SCORE_EVENTS` if wanted (then lo = hi = 0); required by
/// `DPMO_SCORE_SUM`, with 0 ≤ lo ≤ hi and hi > 0. `work`: `dpmo_discover_top_k_work_len(k_bar)` words.
///
/// Errors (nothing written, nothing charged, generator unchanged): those of `dpmo_discover_partitions` for
/// the events, bounds, scratch and budget; k = 0, k > k̄, k̄ above 2^32 − 1, an unknown score, or a sum score
/// without values or with lo < 0 → `DPMO_INVALID_ARGUMENT`; a short `work` → `DPMO_SCRATCH_TOO_SMALL`;
/// `out_items_len` < k → `DPMO_LENGTH_MISMATCH`.
///
/// # Safety
/// As `dpmo_discover_partitions`, plus `values`: null or n readable doubles; `work`: `work_len` writable
/// words; `out_result`: one writable `dpmo_top_k_result`.
#[no_mangle]
pub unsafe extern "C" fn dpmo_discover_top_k(
    rng: *mut dpmo_rng,
    units: *const u64,
    items: *const u64,
    values: *const f64,
    n: usize,
    max_items: usize,
    max_per_item: usize,
    lo: f64,
    hi: f64,
    score: u32,
    k: usize,
    k_bar: usize,
    epsilon: f64,
    delta: f64,
    scratch: *mut u64,
    scratch_len: usize,
    work: *mut u64,
    work_len: usize,
    out_items: *mut u64,
    out_items_len: usize,
    out_result: *mut dpmo_top_k_result,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(scratch)?;
        check_out(work)?;
        check_out(out_items)?;
        check_out(out_result)?;
        if !budget.is_null() {
            check_out(budget)?;
        }
        // SAFETY: forwarded caller contract.
        let r = unsafe { raw(units, items, values, n, max_items, max_per_item, lo, hi) }?;
        check_disjoint(
            &[
                rng_region(rng),
                budget_region(budget),
                Region::of(scratch, scratch_len),
                Region::of(work, work_len),
                Region::of(out_items, out_items_len),
                Region::of(out_result, 1),
            ],
            &r.regions,
        )?;
        let score = match score {
            DPMO_SCORE_UNITS => TopKScore::Units,
            DPMO_SCORE_EVENTS => TopKScore::Events,
            DPMO_SCORE_SUM => TopKScore::Sum,
            _ => return Err(Error::InvalidArgument),
        };
        validate(&r.events, &r.bounds, scratch_len / WORDS)?;
        let plan = TopKPlan::new(score, k, k_bar, epsilon, delta, &r.bounds)?;
        if discover::top_k_work_len(k_bar).is_none_or(|w| work_len < w) {
            return Err(Error::ScratchTooSmall);
        }
        if out_items_len < k {
            return Err(Error::LengthMismatch);
        }
        // SAFETY: checked disjoint from every other buffer.
        let (s, w, out) = unsafe {
            (
                contributions(scratch, scratch_len)?,
                output(work, work_len)?,
                output(out_items, out_items_len)?,
            )
        };
        // SAFETY: checked non-null and aligned.
        unsafe { check_generator(rng) }?;
        // SAFETY: the budget is disjoint from every other buffer.
        let charge = unsafe { Charged::charge_approx(budget, epsilon, delta) }?;
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let result = unsafe {
            with_generator(rng, |g| {
                let stream = &mut call_stream(g);
                let mut b = discover::bound(stream, &r.events, &r.bounds, s)?;
                discover::select_top_k_with_plan(stream, &mut b, score, &plan, w, out)
            })
        };
        let outcome = match result {
            Ok(o) => {
                Charged::settle_actual(charge, o.epsilon, o.delta);
                o
            }
            Err(e) => return Charged::settle(charge, Err(e)),
        };
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_result.write(dpmo_top_k_result {
                count: outcome.len,
                stopped: u32::from(outcome.stopped),
                epsilon: outcome.epsilon,
                delta: outcome.delta,
            })
        };
        Ok(())
    })())
}

// ---- The pieces of a distributed discovery (a Spark job, the JVM's `org.dpmo.spark.DpmoSpark`): the
// bounding of one task's units with each kept (unit, item) contribution, the partition decisions from
// per-item statistics, and the unknown-domain top-k peeling from per-item scores.

/// One kept (unit, item) contribution of `dpmo_bound_contributions`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct dpmo_contribution {
    /// The unit.
    pub unit: u64,
    /// The item.
    pub item: u64,
    /// The kept events on (unit, item), 1 to C.
    pub events: u64,
    /// |S_u|: the number of items the unit keeps, 1 to L.
    pub unit_items: u64,
    /// The sum of the kept, clamped values on (unit, item), in units of the value grid (0 without values).
    pub sum: i64,
    /// The weighted-Gaussian weight w = ⌊G/√|S_u|⌋ for the `weight_grid` G given (0 when G = 0).
    pub weight: u64,
}

/// Writes to `*out_grid` the weight grid G of a partition selection's plan (`DPMO_PARTITION_WEIGHTED_GAUSSIAN`
/// and `DPMO_PARTITION_SIPS`: a unit with s kept items gives each of them ⌊G/√s⌋), or 0 for the other
/// mechanisms. Checks every argument as `dpmo_discover_partitions` does; draws nothing, charges nothing.
///
/// Errors (nothing written): those of `dpmo_discover_partitions` for `mechanism`, `rounds`, epsilon, delta
/// and L; a null or misaligned `out_grid`.
///
/// # Safety
/// `out_grid`: one writable word.
#[no_mangle]
pub unsafe extern "C" fn dpmo_partition_weight_grid(
    mechanism: u32,
    rounds: u32,
    epsilon: f64,
    delta: f64,
    max_items: usize,
    out_grid: *mut u64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_grid)?;
        let how = mechanism_of(mechanism, rounds)?;
        let plan = PartitionPlan::new(how, epsilon, delta, max_items)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_grid.write(plan.grid().unwrap_or(0)) };
        Ok(())
    })())
}

/// Contribution bounding alone, with every kept (unit, item) contribution: the bounding of
/// `dpmo_bound_events` (at most L items per unit, C events per (unit, item), values clamped), writing one
/// `dpmo_contribution` per kept (unit, item) — with |S_u| and, for `weight_grid` G > 0 (from
/// `dpmo_partition_weight_grid`), the weight ⌊G/√|S_u|⌋ — to `out` (at least n entries), in no meaningful
/// order, their number to `*out_count` and the value grid to `*out_value_grid`. For a distributed bounding:
/// each task holds every event of its units and bounds them with a generator of its own; the per-item
/// statistics (distinct units, or the sum of the weights) or scores summed over the tasks are then those of
/// the one-process bounding, for `dpmo_select_partitions_from_statistics` and
/// `dpmo_select_top_k_from_scores`. Not a release; no budget is charged. Draws one key (four words) from the
/// generator, whatever the events.
///
/// Errors (nothing written, generator unchanged): those of `dpmo_bound_events`; `out_len` < n →
/// `DPMO_LENGTH_MISMATCH`.
///
/// # Safety
/// As `dpmo_bound_events`, with `out`: `out_len` writable entries.
#[no_mangle]
pub unsafe extern "C" fn dpmo_bound_contributions(
    rng: *mut dpmo_rng,
    units: *const u64,
    items: *const u64,
    values: *const f64,
    n: usize,
    max_items: usize,
    max_per_item: usize,
    lo: f64,
    hi: f64,
    weight_grid: u64,
    scratch: *mut u64,
    scratch_len: usize,
    out: *mut dpmo_contribution,
    out_len: usize,
    out_count: *mut usize,
    out_value_grid: *mut f64,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(scratch)?;
        check_out(out)?;
        check_out(out_count)?;
        check_out(out_value_grid)?;
        // SAFETY: forwarded caller contract.
        let r = unsafe { raw(units, items, values, n, max_items, max_per_item, lo, hi) }?;
        check_disjoint(
            &[
                rng_region(rng),
                Region::of(scratch, scratch_len),
                Region::of(out, out_len),
                Region::of(out_count, 1),
                Region::of(out_value_grid, 1),
            ],
            &r.regions,
        )?;
        validate(&r.events, &r.bounds, scratch_len / WORDS)?;
        if out_len < n {
            return Err(Error::LengthMismatch);
        }
        // SAFETY: checked disjoint from every other buffer.
        let (s, o) = unsafe { (contributions(scratch, scratch_len)?, output(out, out_len)?) };
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let (count, grid) = unsafe {
            with_generator(rng, |g| {
                let b = discover::bound(g, &r.events, &r.bounds, s)?;
                for (dst, c) in o.iter_mut().zip(b.contributions()) {
                    let s = u64::from(c.tag);
                    *dst = dpmo_contribution {
                        unit: c.unit,
                        item: c.item,
                        events: u64::from(c.events),
                        unit_items: s,
                        sum: c.sum,
                        weight: if weight_grid > 0 {
                            discover::weight(weight_grid, s)
                        } else {
                            0
                        },
                    };
                }
                Ok((b.len(), b.value_grid()))
            })
        }?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_count.write(count);
            out_value_grid.write(grid);
        }
        Ok(())
    })())
}

/// Partition selection from per-item statistics aggregated elsewhere (the core's
/// `select_partitions_from_statistics`): `items[i]` (strictly ascending as unsigned 64-bit words) has the
/// statistic `statistics[i]` ≥ 1 — its number of units with a kept contribution for the truncated geometric,
/// Laplace and Gaussian mechanisms, Σ ⌊G/√|S_u|⌋ over those units for the weighted Gaussian (G from
/// `dpmo_partition_weight_grid`; `dpmo_bound_contributions` gives each unit's weight). Each item is kept or
/// not exactly as `dpmo_discover_partitions` decides it (the same plan, sampler and integer comparison),
/// independently given the statistics; the kept items are written to `out_items`, ascending, and their
/// number to `*out_count`. (epsilon, delta)-DP for adding or removing one unit only if the statistics come
/// from contributions bounded per unit to at most L items and every item with a kept contribution is in
/// this call (or in exactly one of several calls, each with its own generator). `budget` (nullable) is
/// charged (epsilon, delta) on success, as `dpmo_discover_partitions` charges it. Draws one key (four
/// words) from the generator, whatever the statistics; n = 0 selects nothing (still charged).
///
/// Errors (nothing written, nothing charged, generator unchanged): DP-SIPS (its rounds re-weight units by
/// the items already found, which per-item statistics cannot express) → `DPMO_UNSUPPORTED`; the errors of
/// `dpmo_discover_partitions` for the mechanism, rounds, epsilon, delta and L; a statistic 0 or items not
/// strictly ascending → `DPMO_INVALID_ARGUMENT`; `out_items_len` < n → `DPMO_LENGTH_MISMATCH`; an invalid
/// generator or budget; too little budget left → `DPMO_BUDGET_EXHAUSTED`; the common pointer errors.
///
/// # Safety
/// `rng`: an initialised generator; `items`, `statistics`: n readable words; `out_items`: `out_items_len`
/// writable words; `out_count`: one writable size_t; `budget`: null or a valid budget. No output may
/// overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_partitions_from_statistics(
    rng: *mut dpmo_rng,
    items: *const u64,
    statistics: *const u64,
    n: usize,
    max_items: usize,
    mechanism: u32,
    rounds: u32,
    epsilon: f64,
    delta: f64,
    out_items: *mut u64,
    out_items_len: usize,
    out_count: *mut usize,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(out_items)?;
        check_out(out_count)?;
        if !budget.is_null() {
            check_out(budget)?;
        }
        // SAFETY: forwarded caller contract.
        let (is, st) = unsafe { (input(items, n)?, input(statistics, n)?) };
        check_disjoint(
            &[
                rng_region(rng),
                budget_region(budget),
                Region::of(out_items, out_items_len),
                Region::of(out_count, 1),
            ],
            &[Region::of(items, n), Region::of(statistics, n)],
        )?;
        let how = mechanism_of(mechanism, rounds)?;
        if matches!(how, PartitionSelection::Sips { .. }) {
            return Err(Error::Unsupported);
        }
        let plan = PartitionPlan::new(how, epsilon, delta, max_items)?;
        if st.contains(&0) || is.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidArgument);
        }
        if out_items_len < n {
            return Err(Error::LengthMismatch);
        }
        // SAFETY: checked disjoint from every other buffer.
        let out = unsafe { output(out_items, out_items_len) }?;
        // SAFETY: checked non-null and aligned.
        unsafe { check_generator(rng) }?;
        // SAFETY: the budget is disjoint from every other buffer.
        let charge = unsafe { Charged::charge_approx(budget, epsilon, delta) }?;
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let result = unsafe {
            with_generator(rng, |g| {
                discover::select_partitions_from_statistics(g, &plan, is, st, out)
            })
        };
        let count = Charged::settle(charge, result)?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out_count.write(count) };
        Ok(())
    })())
}

/// Unknown-domain top-k (Durfee & Rogers 2019) from per-item scores aggregated elsewhere (the core's
/// `select_top_k_from_scores`): `items[i]` (strictly ascending as unsigned 64-bit words) has the score
/// `scores[2i] + 2^64 · scores[2i + 1]` (below 2^120) in the units of `score` (`DPMO_SCORE_*`: distinct units,
/// kept events, or the sum of max(0, kept sum) in value-grid units), summed over the kept contributions of a
/// bounding with L = `max_items`, C = `max_per_item` and, for `DPMO_SCORE_SUM`, values clamped to [lo, hi]
/// (lo = hi = 0: no values). The items must include the top k̄ + 1 of all the items with a kept
/// contribution in the order (score descending, item ascending as unsigned words), or all of them when
/// there are fewer; more are allowed. The candidates, ⊥ and the exact peeling are then those of
/// `dpmo_discover_top_k`, and so is the output's law when the scores have the bounding's law. Writes the
/// items in selection order to `out_items` and the outcome to `*out_result`.
///
/// Pay what you get, as `dpmo_discover_top_k`: `budget` (nullable) is charged (epsilon, delta) before the
/// peeling and refunded the difference to (ε/k · (ℓ + 1), delta) when it stopped at ⊥ after ℓ items. Draws
/// one key (four words) from the generator, whatever the scores.
///
/// Errors (nothing written, nothing charged, generator unchanged): those of `dpmo_discover_top_k` for the
/// score, k, k̄, epsilon, delta, L, C, the clamp and `out_items_len`; a score ≥ 2^120 or items not
/// strictly ascending → `DPMO_INVALID_ARGUMENT`; `work_len` below `dpmo_top_k_from_scores_work_len(n, k_bar)`
/// → `DPMO_SCRATCH_TOO_SMALL`; an invalid generator or budget; too little budget left →
/// `DPMO_BUDGET_EXHAUSTED`; the common pointer errors.
///
/// # Safety
/// `rng`: an initialised generator; `items`: n readable words; `scores`: 2n readable words; `work`:
/// `work_len` writable words; `out_items`: `out_items_len` writable words; `out_result`: one writable
/// `dpmo_top_k_result`; `budget`: null or a valid budget. No output may overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_select_top_k_from_scores(
    rng: *mut dpmo_rng,
    items: *const u64,
    scores: *const u64,
    n: usize,
    max_items: usize,
    max_per_item: usize,
    lo: f64,
    hi: f64,
    score: u32,
    k: usize,
    k_bar: usize,
    epsilon: f64,
    delta: f64,
    work: *mut u64,
    work_len: usize,
    out_items: *mut u64,
    out_items_len: usize,
    out_result: *mut dpmo_top_k_result,
    budget: *mut dpmo_budget,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(work)?;
        check_out(out_items)?;
        check_out(out_result)?;
        if !budget.is_null() {
            check_out(budget)?;
        }
        let words = n.checked_mul(2).ok_or(Error::Overflow)?;
        // SAFETY: forwarded caller contract.
        let (is, sw) = unsafe { (input(items, n)?, input(scores, words)?) };
        check_disjoint(
            &[
                rng_region(rng),
                budget_region(budget),
                Region::of(work, work_len),
                Region::of(out_items, out_items_len),
                Region::of(out_result, 1),
            ],
            &[Region::of(items, n), Region::of(scores, words)],
        )?;
        let score = match score {
            DPMO_SCORE_UNITS => TopKScore::Units,
            DPMO_SCORE_EVENTS => TopKScore::Events,
            DPMO_SCORE_SUM => TopKScore::Sum,
            _ => return Err(Error::InvalidArgument),
        };
        let clamp = (lo != 0.0 || hi != 0.0).then_some((lo, hi));
        let bounds = Bounds {
            max_items,
            max_per_item,
            clamp,
        };
        let none = Events {
            units: &[],
            items: &[],
            values: clamp.map(|_| &[][..]),
        };
        validate(&none, &bounds, 0)?;
        let plan = TopKPlan::new(score, k, k_bar, epsilon, delta, &bounds)?;
        let need = from_scores_work_len(n, k_bar).ok_or(Error::Overflow)?;
        if work_len < need {
            return Err(Error::ScratchTooSmall);
        }
        if out_items_len < k {
            return Err(Error::LengthMismatch);
        }
        if is.windows(2).any(|w| w[0] >= w[1])
            || sw
                .chunks_exact(2)
                .any(|p| (u128::from(p[0]) | (u128::from(p[1]) << 64)) >= discover::MAX_SCORE)
        {
            return Err(Error::InvalidArgument);
        }
        // SAFETY: checked disjoint from every other buffer.
        let (w, out) = unsafe { (output(work, work_len)?, output(out_items, out_items_len)?) };
        let (w, tail) = w.split_at_mut(need - (2 * n + 1));
        // SAFETY: every bit pattern is a valid u128; `align_to_mut` gives the aligned middle of the tail,
        // which holds at least n values since the tail has 2n + 1 words (at most one skipped for alignment).
        let (_, packed, _) = unsafe { tail.align_to_mut::<u128>() };
        let packed = packed.get_mut(..n).ok_or(Error::ScratchTooSmall)?;
        // SAFETY: checked non-null and aligned.
        unsafe { check_generator(rng) }?;
        // SAFETY: the budget is disjoint from every other buffer.
        let charge = unsafe { Charged::charge_approx(budget, epsilon, delta) }?;
        for (dst, p) in packed.iter_mut().zip(sw.chunks_exact(2)) {
            *dst = u128::from(p[0]) | (u128::from(p[1]) << 64);
        }
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let result = unsafe {
            with_generator(rng, |g| {
                discover::select_top_k_from_scores(g, &plan, is, packed, w, out)
            })
        };
        let outcome = match result {
            Ok(o) => {
                Charged::settle_actual(charge, o.epsilon, o.delta);
                o
            }
            Err(e) => return Charged::settle(charge, Err(e)),
        };
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_result.write(dpmo_top_k_result {
                count: outcome.len,
                stopped: u32::from(outcome.stopped),
                epsilon: outcome.epsilon,
                delta: outcome.delta,
            })
        };
        Ok(())
    })())
}

/// The work words of `dpmo_select_top_k_from_scores`: the peeling's 6 (k̄ + 1) and the n scores unpacked
/// (2 n + 1 words: 16-byte values at a 16-byte boundary).
fn from_scores_work_len(n: usize, k_bar: usize) -> Option<usize> {
    discover::top_k_work_len(k_bar)?.checked_add(n.checked_mul(2)?.checked_add(1)?)
}

/// Writes to `*out_words` the work size, in `uint64_t` words, of `dpmo_select_top_k_from_scores` for n
/// items and k̄: 6 (k̄ + 1) + 2 n + 1.
///
/// Errors: a null or misaligned `out_words`; an overflow → `DPMO_OVERFLOW`.
///
/// # Safety
/// `out_words`: one writable size_t.
#[no_mangle]
pub unsafe extern "C" fn dpmo_top_k_from_scores_work_len(n: usize, k_bar: usize, out_words: *mut usize) -> dpmo_status {
    status_of((|| {
        check_out(out_words)?;
        let w = from_scores_work_len(n, k_bar).ok_or(Error::Overflow)?;
        // SAFETY: checked non-null and aligned.
        unsafe { out_words.write(w) };
        Ok(())
    })())
}
