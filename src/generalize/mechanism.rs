//! Algorithm 3 of the paper, 𝒜(D, β, ε, t): release a private multiset of generalizations of the records.
//!
//! 1. 𝓛′: the t-frequent elements ([`FrequentSet::Exact`], the paper) or their private version, with
//!    discrete Laplace or discrete Gaussian noise ([`FrequentSet::Private`], [`FrequentSet::Gaussian`], see
//!    [`frequency`](super::frequency)).
//! 2. ε′ = (ε + ln β)/(3η(k)(1 − β)) ([`Parameters::epsilon_prime`]).
//! 3. Each record is kept independently with probability 1 − β: a Bernoulli(β) trial decided exactly on the
//!    bits of the double β ([`bernoulli`](super::sampling::bernoulli())).
//! 4. For each kept record a (steps 4–6), the exponential mechanism over its candidates: with the
//!    Lagrangian, a⁺ ∩ 𝓛′ with P(x) ∝ exp(ε′ f^a(x)/m̄); with the threshold version,
//!    {g ∈ a⁺ ∩ 𝓛′ : u(g) ≥ c} with P(x) ∝ exp(−ε′ r^a(x)/m̄). f^a and r^a depend on D only through the counts |ρ(x, D)| of the
//!    candidates (count queries), and on a only through a⁺ (and a's Model I weights).
//! 5. The chosen generalizations (step 7), as a multiset: the rows are written sorted, so that the output is a
//!    function of the multiset alone (in record order, a row's position would name its record).
//!
//! **Departures from the printed algorithm** (each explained in the module docs named):
//! * ⊥′, the constant extra copy of ⊥ that makes (C1) hold formally, is not written: it carries nothing.
//! * A kept record with no candidate (a⁺ ∩ 𝓛′ empty, which happens when |D| < t, or no frequent
//!   generalization reaching utility c in the threshold version) is not released. The paper asserts (C1′)
//!   "with probability 1", which no mechanism can ensure for such a record: releasing ⊥ for it alone would
//!   single it out (no other record would produce that ⊥), and dropping it is indistinguishable from not
//!   sampling it.
//! * Scores are divided by m̄ = max(|D|, n₀ + 1), Φ^a is clamped into [φ_min, ∞) (Lagrangian) or
//!   [0, φ_max] (threshold) and the threshold version's count is max(|ρ|, t)
//!   ([`parameters`](super::parameters)).
//!
//! **Sensitivity of one record's score** (Lemma 2, per record). Let D ⊃ D₋ₐ₀ with m = |D|, a ≠ a₀ a
//! record of both, x a candidate of a, ρ = |ρ(x, D)| and ρ′ = |ρ(x, D₋ₐ₀)| ∈ {ρ, ρ − 1}, m̄ and m̄′ the
//! divisors (m̄′ = m̄ − 1 when m > n₀ + 1, else m̄′ = m̄ = n₀ + 1).
//! * Lagrangian, s = (λ/Φ̃)(ρ/m̄) + u^κ/m̄: ρ/m̄ − ρ′/m̄′ lies in [−1/m̄, 1/m̄] (it is (m − ρ)/(m(m − 1)) or
//!   −ρ/(m(m − 1)) when m̄ = m, and 0 or 1/m̄ otherwise), and u^κ(1/m̄′ − 1/m̄) ≤ ν^κ/(m̄ n₀). So
//!   |s − s′| ≤ (λ/φ + ν^κ/n₀)/m̄ ≤ η/m̄.
//! * Threshold, s = −Φ̃/(ρ̃ m̄) with ρ̃ = max(ρ, t) ≥ t: 1/(ρ̃′m̄′) − 1/(ρ̃m̄) ≤ (ρ̃ + m̄ − 1)/(ρ̃(ρ̃ − 1)m̄(m̄ − 1))
//!   = (1/((ρ̃ − 1)(m̄ − 1)) + 1/(ρ̃(ρ̃ − 1)))/m̄, so |s − s′| ≤ φ_u(1/(n₀(t − 1)) + 1/(t(t − 1)))/m̄ = η/m̄.
//!
//! This is what Lemma 1 and Claims 1–2 use, with the paper's |𝓓| read as m̄.

#[cfg(doc)]
use super::frequency::FrequentSet;
use super::frequency::Membership;
use super::hierarchy::{Chains, Lattice, MAX_ATTRIBUTES};
use super::models::{power, LevelTables, RiskWeights};
use super::parameters::{Objective, Parameters};
use super::sampling::bernoulli;
use crate::float::next_down;
use crate::rng::call_stream;
use crate::select::{probabilities_in_place, select_exponential, select_exponential_float, Arithmetic};
use crate::{sample, Error};
use rand_chacha::ChaCha20Rng;
use rand_core::Rng;

/// The caller scratch of [`release`] and [`record_probabilities`], each of length
/// [`release_scratch_len`] (N = ∏(height_i + 1)).
pub struct ReleaseScratch<'s> {
    /// |ρ(x, D)| for x ∈ a⁺.
    pub counts: &'s mut [u64],
    /// The candidates' scores.
    pub scores: &'s mut [f64],
    /// The candidates' positions in a⁺.
    pub candidates: &'s mut [usize],
}

/// The length of each slice of [`ReleaseScratch`]: N, the largest |a⁺| of the lattice.
pub fn release_scratch_len(lattice: &Lattice<'_>) -> usize {
    lattice.max_chain_product()
}

/// The one place the mechanism calls a selector. Step 5 draws x with P(x) ∝ exp(ε′ σ(x)/m̄), where σ is
/// the unnormalized score of [`build_candidates`] (f^a or −r^a). It is the exponential mechanism with
/// sensitivity η and ε_sel = 2ε′η/m̄ ([`exponent_scale`], rounded down): exp(ε_sel σ/(2η)) = exp(ε′σ/m̄).
///
/// In exact arithmetic ([`Arithmetic::Exact`], the default) the selector floors σ onto a grid g of about
/// 2^{−62} η ([`crate::exact::grid`]), the same grid on every database, so the floored score σ̂/m̄ moves by
/// at most |σ/m̄ − σ′/m̄′| + g/m̄′ ≤ (η + 2g)/m̄ between neighbours: the relative margin of 2^{−40} built into
/// η covers the 2g. ε_sel = 0 (β = e^{−ε}, scores that do not depend on the data, or an underflow) is the
/// uniform choice, exact in both arithmetics.
fn choose<R: Rng + ?Sized>(
    rng: &mut R,
    sigma: &[f64],
    eta: f64,
    scale: f64,
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    if scale == 0.0 {
        return Ok(sample::uniform_index(rng, sigma.len()));
    }
    match arithmetic {
        Arithmetic::Exact | Arithmetic::Isochronous => select_exponential(rng, sigma, eta, scale),
        Arithmetic::Float => select_exponential_float(rng, sigma, eta, scale),
    }
}

/// The probabilities [`choose`] samples from, in place over the scores, in floating point (the exact
/// sampler's grid of 2^{−62} η is below double resolution here).
fn choice_probabilities(sigma: &mut [f64], eta: f64, scale: f64) -> Result<(), Error> {
    if scale == 0.0 {
        let p = 1.0 / sigma.len() as f64;
        sigma.fill(p);
        return Ok(());
    }
    probabilities_in_place(sigma, eta, scale)
}

/// ε_sel = 2ε′η/m̄, rounded down (a smaller exponent scale only lowers every privacy loss).
fn exponent_scale(params: &Parameters, divisor: f64) -> f64 {
    let a = 2.0 * params.epsilon_prime();
    let eta = params.eta();
    let mut b = a * eta;
    if b.is_finite() && libm::fma(a, eta, -b) < 0.0 {
        b = next_down(b).max(0.0);
    }
    let mut q = b / divisor;
    if q.is_finite() && libm::fma(q, divisor, -b) > 0.0 {
        q = next_down(q).max(0.0);
    }
    q
}

/// Everything checked before the first random draw.
struct Checked {
    m: usize,
    k: usize,
}

fn check(
    lattice: &Lattice<'_>,
    records: &[u32],
    weights: RiskWeights<'_>,
    params: &Parameters,
    scratch: &ReleaseScratch<'_>,
    allow_empty: bool,
) -> Result<Checked, Error> {
    let k = lattice.attributes();
    if params.max_chain_product() != lattice.max_chain_product() {
        return Err(Error::InvalidArgument);
    }
    let n = lattice.max_chain_product();
    if scratch.counts.len() < n || scratch.scores.len() < n || scratch.candidates.len() < n {
        return Err(Error::ScratchTooSmall);
    }
    // The records are private: an id out of range is read as ⊥ (`Hierarchy::node_or_root`), not refused.
    let m = lattice.record_count(records)?;
    if m == 0 && !allow_empty {
        return Err(Error::EmptyInput);
    }
    weights.check(m, k)?;
    Ok(Checked { m, k })
}

/// Writes the candidates of record `j` (unnormalized scores σ and positions in a⁺) and returns how many
/// there are: σ = λ|ρ|/Φ̃ + u^κ (Lagrangian) or σ = −Φ̃/max(|ρ|, t) (threshold version, only u ≥ c). The
/// mechanism's score is σ/m̄; σ ≤ m̄ S stays finite (S ≤ [`super::parameters::MAX_SCORE_RANGE`]).
#[allow(clippy::too_many_arguments)]
fn build_candidates(
    lattice: &Lattice<'_>,
    chains: &Chains,
    counts: &[u64],
    tables: &LevelTables,
    params: &Parameters,
    member: &mut dyn FnMut(&[u32], u64) -> bool,
    scores: &mut [f64],
    candidates: &mut [usize],
) -> usize {
    let k = lattice.attributes();
    let t = params.settings().t;
    let mut x = [0u32; MAX_ATTRIBUTES];
    let mut n = 0;
    for (j, &count) in counts.iter().enumerate().take(chains.total) {
        chains.element(j, &mut x[..k]);
        if !member(&x[..k], count) {
            continue;
        }
        let (u, phi) = tables.utility_phi(chains, j);
        let score = match params.settings().objective {
            Objective::Lagrangian { lambda, kappa, phi_min } => {
                lambda / phi.max(phi_min) * count as f64 + power(u, kappa)
            }
            Objective::Threshold { c, phi_max } => {
                if u < c {
                    continue;
                }
                -(phi.min(phi_max) / count.max(t) as f64)
            }
        };
        scores[n] = score;
        candidates[n] = j;
        n += 1;
    }
    n
}

/// Algorithm 3: writes the released generalizations (k node ids each, rows sorted lexicographically) to
/// `out[..r·k]` and returns r, the number released. `records` is the database D (m × k node ids),
/// `weights` the risk weights (used by both objectives through Φ^a), `params` the validated settings made
/// for this `lattice` ([`Parameters::new`]).
///
/// **Guarantee** ([`FrequentSet::Private`] or [`FrequentSet::Gaussian`]): (ε + ε_F, δ + δ_F)-differential
/// privacy for adding or removing
/// one record, by Theorem 4 with 𝓛′ released privately, under the corrections listed in the module docs of
/// [`generalize`](super) — whose remaining gap (the multiplicity in (24)) is checked by exact computation,
/// not proven. [`FrequentSet::Exact`] (the paper's step 1) is **not** differentially private.
///
/// `arithmetic`: [`Arithmetic::Exact`] (the default: the exponential mechanism's coins are exact) or
/// [`Arithmetic::Float`] (the floating-point sampler, exact only up to double rounding).
///
/// No record at all is a database like any other (nothing is released), not an error: whether the data
/// is empty must not show as a status.
///
/// Randomness: exactly one key (four words) from `rng` ([`crate::rng::call_stream`]), after every check;
/// everything else comes from the call's private stream, so the caller's generator advances the same
/// whatever the records and the number of records sampled.
///
/// Cost: for each kept record, O(m · k · height) to count a⁺ (skipped when the record equals the previous
/// kept one: sort D to group equal records) and O(|a⁺| · k) for the scores, plus, with the private 𝓛′, one
/// ChaCha20 block per element examined.
///
/// Errors (all before any random draw; nothing is written): `params` made for a lattice with another N →
/// [`Error::InvalidArgument`]; a scratch slice shorter than N → [`Error::ScratchTooSmall`]; `out` shorter
/// than m · k → [`Error::LengthMismatch`]; `records` not m · k ids → [`Error::LengthMismatch`]; those of
/// [`RiskWeights::check`] (shared weights only). Nothing in the records or their per-record weights is an
/// error: records are private, so a node id out of range reads as the root ⊥ of its hierarchy
/// ([`Hierarchy::node_or_root`](super::Hierarchy::node_or_root), which says why this keeps the guarantee) and a
/// per-record weight that is not finite and ≥ 0 as 0 ([`public_weight`](super::public_weight)); the status
/// never depends on them.
#[allow(clippy::too_many_arguments)]
pub fn release<R: Rng + ?Sized>(
    rng: &mut R,
    lattice: &Lattice<'_>,
    records: &[u32],
    weights: RiskWeights<'_>,
    params: &Parameters,
    scratch: ReleaseScratch<'_>,
    out: &mut [u32],
    arithmetic: Arithmetic,
) -> Result<usize, Error> {
    if arithmetic == Arithmetic::Isochronous {
        return Err(Error::Unsupported);
    }
    let Checked { m, k } = check(lattice, records, weights, params, &scratch, true)?;
    if out.len() < m * k {
        return Err(Error::LengthMismatch);
    }
    let settings = params.settings();
    // One key from the caller's generator (issue 20): every draw below — 𝓛′'s key, the Bernoulli trials,
    // the exponential mechanisms — comes from the call's private stream, so the caller's generator
    // advances by four words whatever the records. It is drawn after every check.
    let mut stream: Option<ChaCha20Rng> = None;
    let membership = Membership::new(
        || {
            let mut key = [0u8; 32];
            stream.get_or_insert_with(|| call_stream(rng)).fill_bytes(&mut key);
            key
        },
        settings.frequent,
        settings.t,
        params.frequent_noise(),
    )?;
    let rng = &mut stream.unwrap_or_else(|| call_stream(rng));
    if m == 0 {
        return Ok(0); // no record: nothing to release (the key is drawn all the same)
    }
    let mut member = |x: &[u32], count: u64| membership.contains(lattice, x, count);
    let scale = exponent_scale(params, params.score_divisor(m));
    let shared_weights = weights.shared(k);
    let ReleaseScratch {
        counts,
        scores,
        candidates,
    } = scratch;
    let mut counted: Option<usize> = None; // the record whose counts are in `counts`
    let mut scored: Option<usize> = None; // the record whose candidates are in `scores`/`candidates`
    let mut chains = lattice.chains(&records[..k]);
    let mut n_candidates = 0;
    let mut released = 0;
    for (j, record) in records.chunks_exact(k).enumerate() {
        if bernoulli(rng, settings.beta) {
            continue; // not sampled (probability β)
        }
        let same_as = |i: Option<usize>| i.is_some_and(|i| &records[i * k..(i + 1) * k] == record);
        if !same_as(counted) {
            chains = lattice.chains(record);
            lattice.count_into(&chains, records, &mut counts[..chains.total]);
            counted = Some(j);
            scored = None;
        }
        if !(shared_weights && same_as(scored)) {
            let tables = LevelTables::new(lattice, &chains, settings.utility, weights.of(j, k));
            n_candidates = build_candidates(
                lattice,
                &chains,
                &counts[..chains.total],
                &tables,
                params,
                &mut member,
                scores,
                candidates,
            );
            scored = Some(j);
        }
        if n_candidates == 0 {
            continue; // no admissible generalization: not released (module docs)
        }
        // Cannot fail: the scores are finite (σ ≤ m̄ S), η is finite and > 0 whenever the scale is > 0.
        let choice = choose(rng, &scores[..n_candidates], params.eta(), scale, arithmetic)?;
        chains.element(candidates[choice], &mut out[released * k..(released + 1) * k]);
        released += 1;
    }
    sort_rows(&mut out[..released * k], k);
    Ok(released)
}

/// The exact distribution of one kept record's generalization for a given 𝓛′: writes, for each element of
/// a⁺ (a = record `j` of `records`, in a⁺ order), the probability that step 5 chooses it, to `out[..|a⁺|]`,
/// and returns |a⁺|. `member(x, |ρ(x, D)|)` decides membership in 𝓛′ (for the paper's 𝓛′:
/// `|_, c| c >= t`). All zeros means the record would not be released. The probabilities are computed in
/// floating point; the exact sampler of [`release`] draws from them up to its grid of 2^{−62} η.
///
/// Errors: as [`release`]; j ≥ m → [`Error::InvalidArgument`]; `out` shorter than |a⁺| →
/// [`Error::LengthMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn record_probabilities(
    lattice: &Lattice<'_>,
    records: &[u32],
    j: usize,
    weights: RiskWeights<'_>,
    params: &Parameters,
    member: &mut dyn FnMut(&[u32], u64) -> bool,
    scratch: ReleaseScratch<'_>,
    out: &mut [f64],
) -> Result<usize, Error> {
    let Checked { m, k } = check(lattice, records, weights, params, &scratch, false)?;
    if j >= m {
        return Err(Error::InvalidArgument);
    }
    let record = &records[j * k..(j + 1) * k];
    let chains = lattice.chains(record);
    if out.len() < chains.total {
        return Err(Error::LengthMismatch);
    }
    let ReleaseScratch {
        counts,
        scores,
        candidates,
    } = scratch;
    lattice.count_into(&chains, records, &mut counts[..chains.total]);
    let tables = LevelTables::new(lattice, &chains, params.settings().utility, weights.of(j, k));
    let n = build_candidates(
        lattice,
        &chains,
        &counts[..chains.total],
        &tables,
        params,
        member,
        scores,
        candidates,
    );
    if n > 0 {
        choice_probabilities(
            &mut scores[..n],
            params.eta(),
            exponent_scale(params, params.score_divisor(m)),
        )?;
    }
    let out = &mut out[..chains.total];
    out.fill(0.0);
    for (&c, &p) in candidates[..n].iter().zip(&scores[..n]) {
        out[c] = p;
    }
    Ok(chains.total)
}

/// Sorts the rows (k values each) of `data` lexicographically, in place (heapsort: no allocation,
/// O(r log r · k)).
fn sort_rows(data: &mut [u32], k: usize) {
    let n = data.len() / k;
    let less = |d: &[u32], a: usize, b: usize| d[a * k..(a + 1) * k] < d[b * k..(b + 1) * k];
    let swap = |d: &mut [u32], a: usize, b: usize| {
        for i in 0..k {
            d.swap(a * k + i, b * k + i);
        }
    };
    let sift = |d: &mut [u32], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && less(d, child, child + 1) {
            child += 1;
        }
        if !less(d, root, child) {
            break;
        }
        swap(d, root, child);
        root = child;
    };
    for start in (0..n / 2).rev() {
        sift(data, start, n);
    }
    for end in (1..n).rev() {
        swap(data, 0, end);
        sift(data, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_sorted() {
        let mut d = [3, 1, 0, 2, 3, 0, 0, 9, 3, 1];
        sort_rows(&mut d, 2);
        assert_eq!(d, [0, 2, 0, 9, 3, 0, 3, 1, 3, 1]);
        let mut one = [5u32, 4];
        sort_rows(&mut one, 2);
        assert_eq!(one, [5, 4]);
        let mut empty: [u32; 0] = [];
        sort_rows(&mut empty, 3);
    }
}
