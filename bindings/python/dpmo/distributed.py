"""Distributed exact report-noisy-max: the selection when the per-candidate scores are spread over
partitions (Spark, or any map over chunks), with exactly the distribution of the centralised exact
selectors.

Report-noisy-max with Gumbel noise *is* the exponential mechanism and with Exponential noise *is*
permute-and-flip. The textbook distributed form — every partition adds noise to its scores and keeps its
best, the driver takes the largest — needs the noisy values, which are floating-point numbers: the float
samplers are ε-DP in real arithmetic only (an output can have probability 0 on one dataset and 2⁻⁵³ on its
neighbour). dpmo's exact mode has no noisy values to compare. Instead both selections are decomposed into
coins that are exact and independent, so partitions can flip them where the scores live:

* **Permute-and-flip / Exponential noise** (one pass after the maximum). Permute-and-flip visits the
  candidates in a random order and stops at the first r whose coin exp(−ε (s* − s_r) / 2Δ) succeeds. The
  coins do not depend on the order, so its output is a uniform element of H = {r : coin r succeeds}, all coins
  flipped independently. Each partition flips its coins (from its own stream) and reports |H_j| and a
  uniform element of H_j; the driver picks partition j with probability |H_j| / Σ|H| (an exact integer
  draw) and returns its element — a uniform element of H.
* **Exponential mechanism / Gumbel noise** (rounds after the maximum). Here it is sampled by rejection: propose
  r uniformly among the n candidates, keep it with its coin, repeat. The proposals come from one stream that
  every partition derives identically (so no proposal list is shipped); each partition flips, from its own
  stream, the coins of the proposals it holds, and reports the first position kept; the driver takes the
  smallest position. A batch without a kept proposal is followed by one twice as large (new streams). The
  expected number of proposals is n / Σ_r exp(−ε (s* − s_r) / 2Δ) ≤ n, as for the core.

Both need s*, the largest score: a first pass returns each partition's k largest scores (for top-k, the
maximum of the remaining candidates in every round). The coins are the core's own (scores floored onto the
grid of Δ, γ an exact rational, ``dpmo::exact``), so the output distribution is exactly the core's
``select_permute_and_flip`` / ``select_exponential`` (and their top-k by peeling at ε/k per round); the
tests compare both with χ² at α = 10⁻⁶.

Randomness: every partition draws from its own stream of a :class:`~dpmo.StreamKey` made fresh from
``os.urandom`` for each release (never from data); the stream number encodes (purpose, round, attempt,
repetition, partition), so no two coins share randomness. A retried task reuses its stream and produces the
same answer. The driver's own draws use its :class:`~dpmo.Rng`. A reproducible generator or key
(``for_simulation``) is refused when a budget is charged, unless the budget allows simulation
(``Budget(total, allow_simulation=True)``).

The partitions are abstract: ``map_partitions(fn)`` must call ``fn(j, candidates, scores)`` once for every
partition j (candidates: sorted int64 indices into the public list; scores: float64) and return the results
in a list. :func:`local_partitions` does it in-process; :mod:`dpmo.spark` does it with Spark. Every index in
[0, n) must be held by exactly one partition (candidates without data must be present with their score,
usually 0).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from . import _native
from ._native import Budget, Rng, StreamKey
from .errors import (
    EmptyInputError,
    InvalidArgumentError,
    InvalidEpsilonError,
    InvalidSensitivityError,
    LengthMismatchError,
    UnsupportedError,
)

MapPartitions = Callable[[Callable[[int, np.ndarray, np.ndarray], Any]], List[Any]]

# Stream numbers: purpose (4 bits) | round (16) | attempt (8) | repetition (4+... see _stream) | partition (24).
_PF, _EM_PROPOSALS, _EM_COINS, BOUNDING = 1, 2, 3, 4
# dpmo.spark.discover_partitions / select_top_k_from_events: the per-unit bounding, the per-item decisions.
DISCOVERY_BOUNDING, PARTITION_NOISE = 5, 6
_INVALID = "An argument is outside its documented range."
_LENGTHS = "The lengths of the arguments do not agree with each other."


def stream_number(purpose: int, round_: int, attempt: int, repetition: int, partition: int) -> int:
    """The stream of one (purpose, round, attempt, repetition, partition): distinct tuples, distinct streams."""
    if not (0 <= purpose < 16 and 0 <= round_ < 1 << 16 and 0 <= attempt < 1 << 8):
        raise InvalidArgumentError(_INVALID, "stream fields out of range")
    if not (0 <= repetition < 1 << 12 and 0 <= partition < 1 << 24):
        raise InvalidArgumentError(_INVALID, "more than 2**12 repetitions or 2**24 partitions")
    return (purpose << 60) | (round_ << 44) | (attempt << 36) | (repetition << 24) | partition


def round_epsilon(epsilon: float, k: int) -> float:
    """The largest double not above ε/k (as the core's top-k gives each round), so k rounds never spend more
    than ε."""
    e = epsilon / k
    while e > 0 and Fraction(e) * k > Fraction(epsilon):
        e = float(np.nextafter(e, 0.0))
    return e


def local_partitions(candidates: Sequence[int], scores: Sequence[float], parts: int) -> MapPartitions:
    """An in-process ``map_partitions`` over ``parts`` contiguous chunks (for tests and single machines)."""
    c = np.asarray(candidates, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64)
    if c.shape != s.shape:
        raise LengthMismatchError(_LENGTHS, "candidates and scores")
    order = np.argsort(c, kind="stable")
    chunks = [(c[order[i::parts]], s[order[i::parts]]) for i in range(parts)]
    chunks = [(cc[np.argsort(cc)], ss[np.argsort(cc)]) for cc, ss in chunks]

    def run(fn: Callable[[int, np.ndarray, np.ndarray], Any]) -> List[Any]:
        return [fn(j, cc, ss) for j, (cc, ss) in enumerate(chunks)]

    return run


_MAX = float(np.finfo(np.float64).max)


def _public_rule(scores: np.ndarray) -> np.ndarray:
    """Scores are private data and never make a selection fail (issue 20): a NaN counts as the lowest score
    (−MAX) and ±∞ as ±MAX, the rule the core applies to every selection, so the partition steps see the scores
    :func:`dpmo.select_exponential` would."""
    s = np.asarray(scores, dtype=np.float64)
    if s.size and not np.all(np.isfinite(s)):
        s = np.nan_to_num(s, nan=-_MAX, posinf=_MAX, neginf=-_MAX)
    return s


def _top(k: int) -> Callable[[int, np.ndarray, np.ndarray], Any]:
    def fn(j: int, cands: np.ndarray, scores: np.ndarray) -> Any:
        scores = _public_rule(scores)
        take = min(k, scores.size)
        if take == 0:
            return ("ok", 0, [])
        idx = np.argpartition(-scores, take - 1)[:take] if take < scores.size else np.arange(scores.size)
        return ("ok", int(cands.size), [(float(scores[i]), int(cands[i])) for i in idx])

    return fn


def _check(epsilon: float, sensitivity: float, k: int, total: int, noise: str) -> None:
    if noise not in ("gumbel", "exponential"):
        if noise == "laplace":
            raise UnsupportedError(
                "Not supported: this mechanism has no exact implementation (report-noisy-max with Laplace "
                "noise: ask for floating-point arithmetic explicitly, or use Gumbel or exponential noise), or "
                "the platform lacks the facility asked for.",
                "the distributed selection is exact only: noise='gumbel' or 'exponential'",
            )
        raise InvalidArgumentError(_INVALID, f"noise {noise!r}: expected 'gumbel' or 'exponential'")
    if not (isinstance(epsilon, (int, float)) and np.isfinite(epsilon) and epsilon > 0):
        raise InvalidEpsilonError("The privacy parameter epsilon must be a finite number greater than zero.")
    if not (isinstance(sensitivity, (int, float)) and np.isfinite(sensitivity) and sensitivity > 0):
        raise InvalidSensitivityError("The global sensitivity must be a finite number greater than zero.")
    if total <= 0:
        raise EmptyInputError("There are no candidates to choose from (n = 0 or an empty group).")
    if not (1 <= k <= total):
        raise InvalidArgumentError(_INVALID, f"k = {k} must be in [1, n = {total}]")
    if round_epsilon(float(epsilon), k) <= 0:
        raise InvalidEpsilonError("The privacy parameter epsilon must be a finite number greater than zero.")


def select_partitioned(
    rng: Rng,
    map_partitions: MapPartitions,
    total: int,
    *,
    sensitivity: float,
    epsilon: float,
    k: int = 1,
    noise: str = "gumbel",
    budget: Optional[Budget] = None,
    key: Optional[StreamKey] = None,
    repetitions: int = 1,
    first_batch: int = 1024,
) -> np.ndarray:
    """Exact distributed report-noisy-max (see the module documentation): top-k without replacement, k
    rounds at ε/k (rounded down) each, over the ``total`` candidates held by the partitions.

    ``noise="gumbel"`` has the distribution of :func:`dpmo.select_exponential` (k = 1) and of
    :func:`dpmo.select_top_k_gumbel` (exact peeling); ``noise="exponential"`` that of
    :func:`dpmo.select_permute_and_flip` and of :func:`dpmo.select_top_k` with ``"permute_and_flip"``.
    ``budget`` is charged ε once, after the argument checks and before any partition is read; a NaN or
    infinite score is not an error but follows the public rule of every selection (NaN is the lowest score,
    ±∞ is ±MAX), so no status depends on the scores. With a budget, a reproducible ``rng`` or
    ``key`` raises ``InvalidGeneratorError`` unless the budget allows simulation (nothing charged).
    Returns the k candidate indices in pick order (shape (k,)), or, with ``repetitions`` R > 1
    (independent selections over one data pass, for tests and simulations; charged R·ε), an (R, k) array.
    """
    _check(epsilon, sensitivity, k, total, noise)
    if not (1 <= repetitions <= 1 << 12):
        raise InvalidArgumentError(_INVALID, "repetitions must be in [1, 4096]")
    if key is None:
        key = StreamKey()
    eps_round = round_epsilon(float(epsilon), k)
    if budget is not None:
        budget._check_release(rng.reproducible or key.reproducible)
        budget.charge(float(epsilon) * repetitions if repetitions > 1 else float(epsilon))
    # Pass 1: the k largest scores of every partition (NaN and ±∞ by the public rule: never an error).
    tops = map_partitions(_top(k))
    if sum(t[1] for t in tops) != total:
        raise LengthMismatchError(_LENGTHS, "the partitions do not hold exactly the candidates 0..n-1")
    best = sorted((p for t in tops for p in t[2]), key=lambda p: (-p[0], p[1]))
    chosen: List[List[int]] = [[] for _ in range(repetitions)]
    for rnd in range(k):
        stars = []
        for rep in range(repetitions):
            taken = set(chosen[rep])
            stars.append(next(s for s, c in best if c not in taken))
        excluded = [np.array(sorted(c), dtype=np.int64) for c in chosen]
        if noise == "exponential":
            picks = _pf_round(rng, map_partitions, key, rnd, stars, excluded, sensitivity, eps_round)
        else:
            picks = _em_round(map_partitions, key, rnd, total, stars, excluded, sensitivity, eps_round, first_batch)
        for rep in range(repetitions):
            chosen[rep].append(picks[rep])
    out = np.array(chosen, dtype=np.int64)
    return out[0] if repetitions == 1 else out


def _pf_round(
    rng: Rng,
    map_partitions: MapPartitions,
    key: StreamKey,
    rnd: int,
    stars: List[float],
    excluded: List[np.ndarray],
    sensitivity: float,
    eps: float,
) -> List[int]:
    def fn(j: int, cands: np.ndarray, scores: np.ndarray) -> List[Tuple[int, int]]:
        return [
            _native._pf_partition(
                key, stream_number(_PF, rnd, 0, rep, j), cands, _public_rule(scores), stars[rep], sensitivity, eps,
                excluded[rep],
            )
            for rep in range(len(stars))
        ]

    results = map_partitions(fn)
    picks = []
    for rep in range(len(stars)):
        heads = np.array([r[rep][0] for r in results], dtype=np.int64)
        j = _native._choose_weighted(rng, heads)
        picks.append(int(results[j][rep][1]))
    return picks


def _em_round(
    map_partitions: MapPartitions,
    key: StreamKey,
    rnd: int,
    total: int,
    stars: List[float],
    excluded: List[np.ndarray],
    sensitivity: float,
    eps: float,
    first_batch: int,
) -> List[int]:
    reps = len(stars)
    picks: List[Optional[int]] = [None] * reps
    batch = max(1, int(first_batch))
    for attempt in range(256):
        active = [rep for rep in range(reps) if picks[rep] is None]
        if not active:
            break

        def fn(j: int, cands: np.ndarray, scores: np.ndarray, active=active, attempt=attempt, batch=batch) -> Any:
            return [
                _native._em_partition(
                    key,
                    stream_number(_EM_PROPOSALS, rnd, attempt, rep, 0xFFFFFF),
                    stream_number(_EM_COINS, rnd, attempt, rep, j),
                    total,
                    batch,
                    cands,
                    _public_rule(scores),
                    stars[rep],
                    sensitivity,
                    eps,
                    excluded[rep],
                )
                for rep in active
            ]

        results = map_partitions(fn)
        for i, rep in enumerate(active):
            kept = [r[i] for r in results if r[i][0] >= 0]
            if kept:
                picks[rep] = int(min(kept)[1])
        batch = min(batch * 2, 1 << 40)
    if any(p is None for p in picks):
        # 256 doubling batches without a kept proposal: probability below exp(-2**200) on any input.
        raise RuntimeError("distributed exponential mechanism: no proposal kept")
    return [int(p) for p in picks]  # type: ignore[arg-type]
