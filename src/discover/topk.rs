//! Top-k over an unknown domain (Durfee & Rogers, *Practical differentially private top-k selection with
//! pay-what-you-get composition*, NeurIPS 2019, the "limited domain" mechanism, Algorithm 1): no candidate
//! list; the mechanism looks at the k̄ items with the largest counts only, and adds a threshold candidate ⊥.
//!
//! **Mechanism.** Let h₍₁₎ ≥ h₍₂₎ ≥ … be the items' scores (ties broken by item id, a public order) and
//! h₍k̄₊₁₎ the (k̄ + 1)-th (0 when fewer items have a contribution). The candidates are the top k̄ items and
//! ⊥ with score h_⊥ = h₍k̄₊₁₎ + Δ∞ (1 + ln(min(L, k̄)/δ)/ε₀), Δ∞ the most one unit adds to one score and ε₀
//! = ε/k the per-round budget. Then, for up to k rounds, the exponential mechanism with
//! P(i) ∝ exp(ε₀ h_i/Δ∞) picks one of the remaining candidates (exactly: the exact exponential mechanism of
//! [`crate::select`](mod@crate::select) on integer scores); if it picks ⊥ the mechanism stops, otherwise the item is output and
//! removed. By Durfee & Rogers' Lemma (one-shot Gumbel noise ≡ peeling), this is their mechanism with
//! Gumbel noise of scale Δ∞/ε₀ added once to every candidate score, output in decreasing order until ⊥.
//!
//! **Privacy.** A unit adds to at most L items, each score by at most Δ∞ and never lowers one (the scores
//! — distinct units, kept events, sums of values clamped to [0, hi] — are monotone), so the exponential
//! mechanism with exp(ε₀ h/Δ∞) (no factor 1/2) is ε₀-DP per round on a common candidate set (Durfee &
//! Rogers; the quality is monotone and of range Δ∞). The candidate sets of neighbours differ only in items
//! within Δ∞ of h₍k̄₊₁₎, at most min(L, k̄) of them, and each beats ⊥ with probability at most
//! e^{−ε₀(h_⊥ − h₍k̄₊₁₎ − Δ∞)/Δ∞} = δ/min(L, k̄): together at most δ. A run that outputs ℓ items is (ℓ + 1)
//! such rounds when it stopped at ⊥, and k rounds otherwise.
//!
//! **Pay what you get.** The cost is therefore charged after the fact: (ε₀ (ℓ + 1), δ) when ⊥ was drawn
//! after ℓ items, (ε, δ) when k items came out ([`TopKOutcome`]). Durfee & Rogers (§5) show this accounting
//! composes: the privacy loss of an output is at most its charge, except on an event of probability δ.
//! `tests/discover_privacy.rs` checks exactly that on small worlds, Σ_o max(0, P_D(o) − e^{c(o)} P_D′(o)) ≤ δ
//! in both directions for the output-dependent charge c(o), and catches a charge of ε₀ ℓ (the ⊥ round
//! unpaid) and a ⊥ without its logarithmic term. A caller holding a budget charges (ε, δ) up front and
//! refunds the difference afterwards (the C ABI does).
//!
//! **Exactness.** Scores are integers (units, events, or sums in value-grid units); Δ∞ is an integer of
//! the same units and the ⊥ offset is rounded up to an integer (a higher ⊥ only lowers the δ). The
//! exponential mechanism is the exact one of [`crate::select`](mod@crate::select) at ε = 2ε₀ with sensitivity Δ∞, i.e.
//! weights exp(ε₀ G/Δ∞) for a gap G.

use super::accounting::{check_epsilon_delta, div_up};
use super::bound::{item_runs, sort_by_item, Bounded, Bounds};
use crate::float::{div_down, mul_up, next_up};
use crate::select::{select_int, Selector};
use crate::Error;
use rand_core::Rng;

/// The largest k̄ accepted (2³² − 1).
pub const MAX_K_BAR: usize = u32::MAX as usize;

/// What an item's score is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopKScore {
    /// The number of distinct units with a kept contribution to the item (Δ∞ = 1).
    Units,
    /// The number of kept events on the item (Δ∞ = C).
    Events,
    /// The sum of the kept values, clamped to [lo, hi] with lo ≥ 0 (Δ∞ = C · ⌊hi/g⌋ grid units).
    Sum,
}

/// The public parameters of one unknown-domain top-k: per-round ε₀, Δ∞ and the ⊥ offset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopKPlan {
    score: TopKScore,
    bounds: Bounds,
    k: usize,
    k_bar: usize,
    epsilon: f64,
    delta: f64,
    epsilon_round: f64,
    sensitivity: u64,
    bottom_offset: u128,
}

impl TopKPlan {
    /// The plan for k outputs among the top k̄ under (ε, δ), for contributions bounded by `bounds`.
    ///
    /// Errors: ε not finite or ≤ 0, or ε/k not usable → [`Error::InvalidEpsilon`]; δ outside
    /// [[`MIN_DELTA`](super::accounting::MIN_DELTA), 1), k = 0, k > k̄, k̄ > [`MAX_K_BAR`], `Sum` without a
    /// clamp or with lo < 0 or hi ≤ 0 (or a sensitivity beyond 2⁵³), or a ⊥ offset beyond 2¹⁰⁰ →
    /// [`Error::InvalidArgument`].
    pub fn new(
        score: TopKScore,
        k: usize,
        k_bar: usize,
        epsilon: f64,
        delta: f64,
        bounds: &Bounds,
    ) -> Result<Self, Error> {
        check_epsilon_delta(epsilon, delta)?;
        if k == 0 || k > k_bar || k_bar > MAX_K_BAR || bounds.max_items == 0 {
            return Err(Error::InvalidArgument);
        }
        let epsilon_round = div_down(epsilon, k as f64);
        if !(epsilon_round > 0.0 && (2.0 * epsilon_round).is_finite()) {
            return Err(Error::InvalidEpsilon);
        }
        let c = bounds.max_per_item as u64;
        let sensitivity = match score {
            TopKScore::Units => 1,
            TopKScore::Events => c,
            TopKScore::Sum => {
                let (lo, hi, k) = match bounds.clamp {
                    Some(cl) => super::bound::value_grid(cl)?,
                    None => return Err(Error::InvalidArgument),
                };
                if lo < 0.0 || hi <= 0.0 {
                    return Err(Error::InvalidArgument);
                }
                c.checked_mul(super::bound::grid_units(hi, k))
                    .ok_or(Error::InvalidArgument)?
            }
        };
        if sensitivity == 0 || sensitivity > 1 << 53 {
            return Err(Error::InvalidArgument);
        }
        // ⌈Δ∞ ln(min(L, k̄)/δ)/ε₀⌉, every step rounded up (log within one ulp, hence next_up).
        let reach = bounds.max_items.min(k_bar) as f64;
        let log = next_up(libm::log(div_up(reach, delta)));
        let z = div_up(mul_up(sensitivity as f64, log.max(0.0)), epsilon_round);
        if !(z.is_finite() && z < 1e30) {
            return Err(Error::InvalidArgument);
        }
        let bottom_offset = u128::from(sensitivity) + libm::ceil(z) as u128;
        Ok(TopKPlan {
            score,
            bounds: *bounds,
            k,
            k_bar,
            epsilon,
            delta,
            epsilon_round,
            sensitivity,
            bottom_offset,
        })
    }

    /// ε₀ = ε/k (rounded down), the budget of one round.
    pub fn epsilon_round(&self) -> f64 {
        self.epsilon_round
    }

    /// Δ∞ in score units.
    pub fn sensitivity(&self) -> u64 {
        self.sensitivity
    }

    /// h_⊥ − h₍k̄₊₁₎ = Δ∞ + ⌈Δ∞ ln(min(L, k̄)/δ)/ε₀⌉, in score units.
    pub fn bottom_offset(&self) -> u128 {
        self.bottom_offset
    }

    /// The charge of a run that output `len` items: (ε₀ (len + 1), δ) if it stopped at ⊥, (ε, δ) if not.
    pub fn charge(&self, len: usize, stopped: bool) -> (f64, f64) {
        if stopped && len < self.k {
            (mul_up(self.epsilon_round, (len + 1) as f64), self.delta)
        } else {
            (self.epsilon, self.delta)
        }
    }
}

/// The outcome of [`select_top_k_unknown`]: how many items were written and the pay-what-you-get charge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopKOutcome {
    /// The number of items written (ℓ ≤ k), in selection order.
    pub len: usize,
    /// True when the run stopped at ⊥ (ℓ < k).
    pub stopped: bool,
    /// The ε actually spent: ε₀ (ℓ + 1) when stopped, else ε.
    pub epsilon: f64,
    /// The δ spent.
    pub delta: f64,
}

/// The work words [`select_top_k_unknown`] needs for k̄: 6 (k̄ + 1), or None on overflow.
pub fn top_k_work_len(k_bar: usize) -> Option<usize> {
    k_bar.checked_add(1)?.checked_mul(6)
}

fn better(a: (u128, u64), b: (u128, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
}

/// A bounded heap of (score, item) triples in `u64` words, the *worst* kept entry at the root.
struct Heap<'w> {
    w: &'w mut [u64],
    len: usize,
}

impl Heap<'_> {
    fn get(&self, i: usize) -> (u128, u64) {
        (
            u128::from(self.w[3 * i]) | (u128::from(self.w[3 * i + 1]) << 64),
            self.w[3 * i + 2],
        )
    }
    fn set(&mut self, i: usize, e: (u128, u64)) {
        self.w[3 * i] = e.0 as u64;
        self.w[3 * i + 1] = (e.0 >> 64) as u64;
        self.w[3 * i + 2] = e.1;
    }
    fn swap(&mut self, i: usize, j: usize) {
        let (a, b) = (self.get(i), self.get(j));
        self.set(i, b);
        self.set(j, a);
    }
    /// Sift down within [0, end): the root is the worst.
    fn sift_down(&mut self, mut i: usize, end: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut worst = i;
            if l < end && better(self.get(worst), self.get(l)) {
                worst = l;
            }
            if r < end && better(self.get(worst), self.get(r)) {
                worst = r;
            }
            if worst == i {
                return;
            }
            self.swap(i, worst);
            i = worst;
        }
    }
    fn push(&mut self, e: (u128, u64), cap: usize) {
        if self.len < cap {
            let mut i = self.len;
            self.set(i, e);
            self.len += 1;
            while i > 0 {
                let p = (i - 1) / 2;
                if better(self.get(p), self.get(i)) {
                    self.swap(p, i);
                    i = p;
                } else {
                    break;
                }
            }
        } else if better(e, self.get(0)) {
            self.set(0, e);
            self.sift_down(0, self.len);
        }
    }
    /// Sorts the entries best first (heapsort: the worst goes to the end first).
    fn sort_best_first(&mut self) {
        for end in (1..self.len).rev() {
            self.swap(0, end);
            self.sift_down(0, end);
        }
    }
}

/// The score of one item's contributions.
fn score_of(run: &[super::bound::Contribution], score: TopKScore) -> u128 {
    match score {
        TopKScore::Units => run.len() as u128,
        TopKScore::Events => run.iter().map(|c| u128::from(c.events)).sum(),
        // Sums of values clamped to [lo, hi] with lo ≥ 0 are ≥ 0.
        TopKScore::Sum => run.iter().map(|c| c.sum.max(0) as u128).sum(),
    }
}

/// Unknown-domain top-k (module documentation) over bounded contributions: writes up to k items to `out`
/// in selection order and returns how many, whether it stopped at ⊥, and the charge. Draws exactly one key
/// (four words) from `rng` ([`crate::rng::call_stream`]: the peeling samples from its private ChaCha20
/// stream), after every argument check, whatever the contributions.
///
/// `work`: at least [`top_k_work_len`] of k̄ words; `out`: at least k entries.
///
/// Errors (nothing drawn, nothing written): those of [`TopKPlan::new`] (with the bounds of `bounded`);
/// a short `work` → [`Error::ScratchTooSmall`]; `out` shorter than k → [`Error::LengthMismatch`].
#[allow(clippy::too_many_arguments)]
pub fn select_top_k_unknown<R: Rng + ?Sized>(
    rng: &mut R,
    bounded: &mut Bounded<'_>,
    score: TopKScore,
    k: usize,
    k_bar: usize,
    epsilon: f64,
    delta: f64,
    work: &mut [u64],
    out: &mut [u64],
) -> Result<TopKOutcome, Error> {
    let plan = TopKPlan::new(score, k, k_bar, epsilon, delta, &bounded.bounds)?;
    select_top_k_with_plan(rng, bounded, score, &plan, work, out)
}

/// [`select_top_k_unknown`] with a plan computed beforehand ([`TopKPlan::new`]) for the same `score`.
///
/// Errors (nothing drawn, nothing written): a plan made for other bounds than those of `bounded` or
/// another score → [`Error::InvalidArgument`]; a short `work` → [`Error::ScratchTooSmall`]; `out` shorter
/// than k → [`Error::LengthMismatch`].
pub fn select_top_k_with_plan<R: Rng + ?Sized>(
    rng: &mut R,
    bounded: &mut Bounded<'_>,
    score: TopKScore,
    plan: &TopKPlan,
    work: &mut [u64],
    out: &mut [u64],
) -> Result<TopKOutcome, Error> {
    if plan.bounds != bounded.bounds || plan.score != score {
        return Err(Error::InvalidArgument);
    }
    let cap = plan.k_bar + 1;
    if top_k_work_len(plan.k_bar).is_none_or(|n| work.len() < n) {
        return Err(Error::ScratchTooSmall);
    }
    if out.len() < plan.k {
        return Err(Error::LengthMismatch);
    }
    let mut stream = crate::rng::call_stream(rng);
    let (heap_w, rest) = work.split_at_mut(3 * cap);
    let mut heap = Heap { w: heap_w, len: 0 };
    sort_by_item(bounded.entries);
    for run in item_runs(bounded.entries) {
        heap.push((score_of(run, score), run[0].item), cap);
    }
    peel(&mut stream, plan, heap, rest, out)
}

/// The candidates' scores in score units stay below 2¹²⁰ (so that with the ⊥ offset, below 2¹⁰⁰, they fit
/// an i128): the bound [`select_top_k_from_scores`] checks.
pub const MAX_SCORE: u128 = 1 << 120;

/// [`select_top_k_with_plan`] from per-item scores aggregated elsewhere — by a distributed bounding (a
/// Spark job, `dpmo.spark.select_top_k_from_events`) that applied [`bound()`](super::bound())'s law per unit
/// and summed per item with the plan's score (distinct units, kept events, or Σ max(0, sum) in value-grid
/// units). `items[i]` has score `scores[i]`; the items must be distinct and include the top k̄ + 1 of all
/// the items with a kept contribution in the order (score descending, item ascending) — the core's order,
/// ties broken by item id — or all of them when there are fewer (more are allowed: the top k̄ + 1 are taken
/// here). Then the candidates, ⊥ and the exact peeling are those of [`select_top_k_with_plan`], and so is
/// the output's law when the scores have the bounding's law. Draws exactly one key (four words) from `rng`
/// ([`crate::rng::call_stream`]), after every argument check, whatever the scores.
///
/// Errors (nothing drawn, nothing written): `items` and `scores` of different lengths, or `out` shorter
/// than k → [`Error::LengthMismatch`]; a score ≥ [`MAX_SCORE`] → [`Error::InvalidArgument`]; a short
/// `work` → [`Error::ScratchTooSmall`]. Repeated items are the caller's to rule out (they would be
/// candidates twice).
pub fn select_top_k_from_scores<R: Rng + ?Sized>(
    rng: &mut R,
    plan: &TopKPlan,
    items: &[u64],
    scores: &[u128],
    work: &mut [u64],
    out: &mut [u64],
) -> Result<TopKOutcome, Error> {
    let cap = plan.k_bar + 1;
    if top_k_work_len(plan.k_bar).is_none_or(|n| work.len() < n) {
        return Err(Error::ScratchTooSmall);
    }
    if out.len() < plan.k || items.len() != scores.len() {
        return Err(Error::LengthMismatch);
    }
    if scores.iter().any(|&s| s >= MAX_SCORE) {
        return Err(Error::InvalidArgument);
    }
    let mut stream = crate::rng::call_stream(rng);
    let (heap_w, rest) = work.split_at_mut(3 * cap);
    let mut heap = Heap { w: heap_w, len: 0 };
    for (&item, &s) in items.iter().zip(scores) {
        heap.push((s, item), cap);
    }
    peel(&mut stream, plan, heap, rest, out)
}

/// The top k̄ of `heap` (at most k̄ + 1 entries), ⊥ at h₍k̄₊₁₎ + offset, and the exact peeling; `rest` is
/// the work after the heap's 3 (k̄ + 1) words.
fn peel<R: Rng + ?Sized>(
    stream: &mut R,
    plan: &TopKPlan,
    mut heap: Heap<'_>,
    rest: &mut [u64],
    out: &mut [u64],
) -> Result<TopKOutcome, Error> {
    let cap = plan.k_bar + 1;
    let (words, rest) = rest.split_at_mut(2 * cap);
    let items = &mut rest[..cap];
    heap.sort_best_first();
    let m = heap.len.min(plan.k_bar);
    let h_next = if heap.len > plan.k_bar {
        heap.get(plan.k_bar).0
    } else {
        0
    };
    let put = |words: &mut [u64], i: usize, v: u128| {
        // Scores are below 2¹²⁰ (n · 2⁵²) and the offset below 2¹⁰⁰: they fit an i128.
        words[2 * i] = v as u64;
        words[2 * i + 1] = (v >> 64) as u64;
    };
    for (j, slot) in items.iter_mut().enumerate().take(m) {
        let (s, item) = heap.get(j);
        put(words, j, s);
        *slot = item;
    }
    put(words, m, h_next + plan.bottom_offset);
    let mut bottom = m;
    let mut live = m + 1;
    let mut len = 0;
    let mut stopped = false;
    for _ in 0..plan.k {
        let p = select_int(
            stream,
            Selector::Exponential,
            &words[..2 * live],
            plan.sensitivity,
            2.0 * plan.epsilon_round,
            &mut [],
        )?;
        if p == bottom {
            stopped = true;
            break;
        }
        out[len] = items[p];
        len += 1;
        live -= 1;
        words.copy_within(2 * live..2 * live + 2, 2 * p);
        items[p] = items[live];
        if bottom == live {
            bottom = p;
        }
    }
    let (epsilon, delta) = plan.charge(len, stopped);
    Ok(TopKOutcome {
        len,
        stopped,
        epsilon,
        delta,
    })
}
