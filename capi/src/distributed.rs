//! The pieces of the exact distributed report-noisy-max (the core's `distributed` module), for bindings that
//! spread the candidates' scores over partitions (Spark tasks) and want exactly the law of the one-process
//! exact selectors: the keyed streams of the partitions, the two partition steps and the driver's weighted
//! choice. Python's `dpmo.distributed` and the JVM's `org.dpmo.spark.DpmoSpark.select` are built on them.
//!
//! * Permute-and-flip (≡ report-noisy-max with Exponential noise): every partition j calls
//!   `dpmo_distributed_pf_partition` on its candidates with the round's best score s* and its own stream;
//!   the driver picks partition j with probability |H_j| / Σ|H| (`dpmo_distributed_choose_weighted`) and
//!   returns its element.
//! * Exponential mechanism (≡ Gumbel noise): every partition calls `dpmo_distributed_em_partition` with one
//!   proposal stream shared by all and a coin stream of its own; the driver takes the kept proposal with the
//!   smallest position (none kept: a larger batch on new streams).
//!
//! Streams: the partition steps take a secret 32-byte key and stream numbers and draw from the ChaCha20
//! generator of (key, stream) (`dpmo_rng_init_stream`), never from the data; a task retried with the same
//! numbers repeats its answer. Give every (purpose, round, attempt, partition) a stream of its own, and make
//! the key fresh from a secure source for every release. Scores follow the public rule of every selection
//! (NaN is the lowest score, ±∞ is ±DBL_MAX): no status depends on a score.

use crate::buffers::{check_disjoint, check_out, input, Region};
use crate::rng::{dpmo_rng, rng_region, with_generator};
use crate::status::{dpmo_status, status_of};
use dpmo_core::distributed::{self, Coins};
use dpmo_core::Error;

/// The 32-byte key at `key`.
///
/// # Safety
/// `key`: 32 readable bytes.
unsafe fn key_of(key: *const u8) -> Result<[u8; 32], Error> {
    // SAFETY: forwarded caller contract.
    let k = unsafe { input(key, 32) }?;
    let mut out = [0u8; 32];
    out.copy_from_slice(k);
    Ok(out)
}

/// `excluded` may be null when `n_excluded` is 0.
///
/// # Safety
/// `excluded`: null or `n_excluded` readable words.
unsafe fn excluded_of<'a>(excluded: *const i64, n_excluded: usize) -> Result<(&'a [i64], Region), Error> {
    if excluded.is_null() && n_excluded == 0 {
        return Ok((&[], Region::EMPTY));
    }
    // SAFETY: forwarded caller contract.
    Ok((
        unsafe { input(excluded, n_excluded) }?,
        Region::of(excluded, n_excluded),
    ))
}

/// A partition step's inputs: the key, the candidates, their scores, the excluded candidates.
type PartitionInputs<'a> = ([u8; 32], &'a [i64], &'a [f64], &'a [i64]);

/// The inputs of a partition step — the key, the partition's candidates and scores, the excluded
/// candidates — read, and checked disjoint from the step's two outputs `outs`.
///
/// # Safety
/// `key` 32 readable bytes; `candidates` and `scores` `n` readable values each; `excluded` as
/// [`excluded_of`].
unsafe fn partition_inputs<'a>(
    key: *const u8,
    candidates: *const i64,
    scores: *const f64,
    n: usize,
    excluded: *const i64,
    n_excluded: usize,
    outs: [Region; 2],
) -> Result<PartitionInputs<'a>, Error> {
    // SAFETY: forwarded caller contract.
    let (k, c, s, (x, xr)) = unsafe {
        (
            key_of(key)?,
            input(candidates, n)?,
            input(scores, n)?,
            excluded_of(excluded, n_excluded)?,
        )
    };
    check_disjoint(
        &outs,
        &[
            Region::of(key, 32),
            Region::of(candidates, n),
            Region::of(scores, n),
            xr,
        ],
    )?;
    Ok((k, c, s, x))
}

/// Initialises `rng` as the ChaCha20 generator of stream `stream` of the secret 32-byte `key`: ChaCha20 keyed
/// by the first 32 bytes of the keystream of `key` on stream `stream`, a pseudorandom function of (key,
/// stream). Distinct stream numbers give generators independent for anyone who does not know the key; the
/// same (key, stream) gives the same generator (a retried task repeats its draws). Python's
/// `dpmo.StreamKey(...).rng(stream)` is the same generator. Make the key fresh from a secure source
/// (getrandom(2)) for every release; a known key is a reproducible simulation.
///
/// Errors (nothing written): a null or misaligned pointer, or `rng` overlapping `key`.
///
/// # Safety
/// `rng`: writable memory for one `dpmo_rng`; `key`: 32 readable bytes.
#[no_mangle]
pub unsafe extern "C" fn dpmo_rng_init_stream(rng: *mut dpmo_rng, key: *const u8, stream: u64) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        // SAFETY: forwarded caller contract.
        let k = unsafe { key_of(key) }?;
        check_disjoint(&[rng_region(rng)], &[Region::of(key, 32)])?;
        let state = distributed::stream_state(&k, stream);
        // SAFETY: checked non-null and aligned; the caller promises it is writable.
        unsafe { rng.write(dpmo_rng { opaque: state.words }) };
        Ok(())
    })())
}

/// Partition step of the distributed permute-and-flip: flips, from the generator of (`key`, `stream`), the
/// coin exp(−ε (⌊s* / g⌋ − ⌊s_r/g⌋) / 2N) (g = Δ/N the grid of the sensitivity, ε the round's, exactly the
/// coins of `dpmo_select_permute_and_flip`) of every candidate `candidates[i]` (sorted, distinct, ≥ 0;
/// score `scores[i]`) not in `excluded` (sorted, distinct: the candidates earlier top-k rounds chose), and
/// writes the number of successes |H_j| to `*out_heads` and a uniform element of H_j (exact reservoir
/// sampling) to `*out_pick`, or −1 when no coin succeeds. `best` is s*, the largest score (after the public
/// rule) of the candidates still in play over every partition.
///
/// Errors (nothing written): `best` not finite → `DPMO_NON_FINITE_INPUT`; an invalid sensitivity or ε;
/// candidates or exclusions not sorted and distinct, a negative candidate, or a candidate in play scoring
/// above `best` → `DPMO_INVALID_ARGUMENT`; the common pointer errors (`excluded` may be null when
/// `n_excluded` is 0).
///
/// # Safety
/// `key`: 32 readable bytes; `candidates`, `scores`: n readable values; `excluded`: null or `n_excluded`
/// readable words; `out_heads`, `out_pick`: one writable value each, overlapping no input.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dpmo_distributed_pf_partition(
    key: *const u8,
    stream: u64,
    candidates: *const i64,
    scores: *const f64,
    n: usize,
    best: f64,
    sensitivity: f64,
    epsilon: f64,
    excluded: *const i64,
    n_excluded: usize,
    out_heads: *mut u64,
    out_pick: *mut i64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_heads)?;
        check_out(out_pick)?;
        let outs = [Region::of(out_heads, 1), Region::of(out_pick, 1)];
        // SAFETY: forwarded caller contract.
        let (k, c, s, x) = unsafe { partition_inputs(key, candidates, scores, n, excluded, n_excluded, outs) }?;
        let coins = Coins::new(best, sensitivity, epsilon)?;
        let mut g = distributed::stream_state(&k, stream).load()?;
        let (heads, pick) = distributed::pf_partition(&mut g, &coins, c, s, x)?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_heads.write(heads);
            out_pick.write(pick);
        }
        Ok(())
    })())
}

/// Partition step of one batch of the distributed exponential mechanism (rejection sampling with uniform
/// proposals, the coins of `dpmo_select_exponential`): regenerates the `batch` proposals of the generator of
/// (`key`, `proposal_stream`) — uniform in [0, `total`), the same in every partition — and flips, from the
/// generator of (`key`, `coin_stream`), the coin of every proposal this partition holds (`candidates`
/// sorted, distinct, in [0, `total`), with their `scores`) and has not `excluded`; writes the first kept
/// position to `*out_position` and its candidate to `*out_candidate`, or −1 and −1. The driver takes the
/// smallest position over the partitions. The work is `batch` proposals, whatever the data.
///
/// Errors (nothing written): `total` = 0, `batch` above 2^62 or a candidate ≥ `total` →
/// `DPMO_INVALID_ARGUMENT`; those of `dpmo_distributed_pf_partition`.
///
/// # Safety
/// As `dpmo_distributed_pf_partition`, with `out_position`, `out_candidate` one writable value each.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dpmo_distributed_em_partition(
    key: *const u8,
    proposal_stream: u64,
    coin_stream: u64,
    total: u64,
    batch: u64,
    candidates: *const i64,
    scores: *const f64,
    n: usize,
    best: f64,
    sensitivity: f64,
    epsilon: f64,
    excluded: *const i64,
    n_excluded: usize,
    out_position: *mut i64,
    out_candidate: *mut i64,
) -> dpmo_status {
    status_of((|| {
        check_out(out_position)?;
        check_out(out_candidate)?;
        let outs = [Region::of(out_position, 1), Region::of(out_candidate, 1)];
        // SAFETY: forwarded caller contract.
        let (k, c, s, x) = unsafe { partition_inputs(key, candidates, scores, n, excluded, n_excluded, outs) }?;
        let coins = Coins::new(best, sensitivity, epsilon)?;
        let mut p = distributed::stream_state(&k, proposal_stream).load()?;
        let mut g = distributed::stream_state(&k, coin_stream).load()?;
        let (pos, cand) = distributed::em_partition(&mut p, &mut g, &coins, total, batch, c, s, x)?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe {
            out_position.write(pos);
            out_candidate.write(cand);
        }
        Ok(())
    })())
}

/// The driver step of the distributed permute-and-flip: writes to `*out_index` an index j drawn with
/// probability `weights[j]` / Σ weights, exactly (the weights are the partitions' |H_j|). Draws one key (four
/// words) from the generator, whatever the weights.
///
/// Errors (nothing written, generator unchanged): every weight 0, or n = 0 → `DPMO_EMPTY_INPUT`; Σ weights
/// above 2^64 − 1 → `DPMO_OVERFLOW`; an invalid generator; the common pointer errors.
///
/// # Safety
/// `rng`: an initialised generator; `weights`: n readable words; `out_index`: one writable size_t. No output
/// may overlap another buffer.
#[no_mangle]
pub unsafe extern "C" fn dpmo_distributed_choose_weighted(
    rng: *mut dpmo_rng,
    weights: *const u64,
    n: usize,
    out_index: *mut usize,
) -> dpmo_status {
    status_of((|| {
        check_out(rng)?;
        check_out(out_index)?;
        // SAFETY: forwarded caller contract.
        let w = unsafe { input(weights, n) }?;
        check_disjoint(&[rng_region(rng), Region::of(out_index, 1)], &[Region::of(weights, n)])?;
        // SAFETY: the generator is disjoint from the slices the closure uses.
        let j = unsafe { with_generator(rng, |g| distributed::choose_weighted(g, w)) }?;
        // SAFETY: checked non-null, aligned and disjoint.
        unsafe { out_index.write(j) };
        Ok(())
    })())
}
