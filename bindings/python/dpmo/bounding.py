"""Contribution bounding: from raw events (unit, candidate, value) to per-candidate scores of known
sensitivity.

A selection needs scores whose sensitivity Δ is known. Raw events do not have one: a single person (the
*privacy unit*: a user, a household, a device) may have 10⁴ events. The recipe, for neighbouring datasets
that differ by **all the events of one unit** (added or removed):

1. **Public candidates.** Candidates come from a list you supply, fixed before looking at the data. Events
   on other candidates are dropped. (Taking the candidates from the data would leak: a candidate that
   exists only because one person produced it reveals that person, whatever the selection does.)
2. **At most L candidates per unit** (``max_candidates``): of the distinct candidates a unit touches, keep
   L chosen uniformly at random (from the private generator, never from the data).
3. **At most C events per (unit, candidate)** (``max_per_candidate``, default 1): keep C of them uniformly at
   random.
4. **Clamp** each kept value to [lo, hi] (``bounds``), and truncate it toward zero onto a grid of 2⁻²⁰ of
   M = max(|lo|, |hi|) so sums are exact integers (a NaN value counts as 0).

Then, with ``count[r]`` = kept events on r and ``sum[r]`` = Σ kept values on r, adding or removing a unit
changes

* every single ``count[r]`` by at most **C** and every ``sum[r]`` by at most **C · M** (the ℓ∞ sensitivity:
  the Δ a selection uses, since the exponential mechanism's Δ is a per-candidate bound);
* all counts together by at most **L · C** and all sums by at most **L · C · M** (the ℓ1 sensitivity: the one
  to use when releasing every count with noise, e.g. discrete Laplace of scale L·C/ε).

With C = 1, ``count[r]`` is the number of distinct units on r. Bounding is part of the mechanism: its output
is not private by itself, only what a mechanism releases from it with the sensitivities above.

The random choices come from the Rust core (``dpmo::discover::bound``): each unit's from a stream of its own,
keyed once per call by one key drawn from the generator, so one unit's events never change another unit's
choices, and the generator advances by that one key whatever the events. They must be secret too: with a
known seed (``Rng.for_simulation``) the bounding is a known function of the data, so a reproducible
generator is refused unless ``allow_simulation=True`` (for simulations and tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from ._native import Rng, _bound_events
from .errors import InvalidArgumentError, InvalidGeneratorError, LengthMismatchError

_GENERATOR = "The random generator state is not initialised or is corrupted."


def refuse_simulation(what: str) -> None:
    """Raises the refusal of a reproducible generator or key where ``allow_simulation`` was not given."""
    raise InvalidGeneratorError(
        _GENERATOR,
        f"{what} is reproducible (for_simulation): whoever knows the seed knows every random choice, so the "
        "result cannot feed a private release; use dpmo.Rng() / dpmo.StreamKey(), or pass "
        "allow_simulation=True for a simulation",
    )


@dataclass(frozen=True)
class BoundedAggregates:
    """Per-candidate aggregates of bounded contributions, with their sensitivities.

    Attributes:
        candidates: the public candidate list, in the order of the arrays.
        counts: kept events per candidate (float64; integers).
        sums: sum of the kept, clamped values per candidate (float64), or None without values.
        count_sensitivity: Δ of every single count (ℓ∞) = C.
        sum_sensitivity: Δ of every single sum (ℓ∞) = C · max(|lo|, |hi|), or None.
        count_l1_sensitivity: change of all counts together (ℓ1) = L · C.
        sum_l1_sensitivity: change of all sums together (ℓ1) = L · C · max(|lo|, |hi|), or None.
        max_candidates: L.
        max_per_candidate: C.
        bounds: (lo, hi), or None.
        reproducible: True when a reproducible generator made the random choices (``allow_simulation``):
            nothing released from these aggregates is private.
    """

    candidates: Sequence[Any]
    counts: np.ndarray
    sums: Optional[np.ndarray]
    count_sensitivity: float
    sum_sensitivity: Optional[float]
    count_l1_sensitivity: float
    sum_l1_sensitivity: Optional[float]
    max_candidates: int
    max_per_candidate: int
    bounds: Optional[Tuple[float, float]]
    reproducible: bool = False


def candidate_index(candidates: Sequence[Any], labels: Any) -> np.ndarray:
    """Maps event labels to indices in the public ``candidates`` list; −1 for a label not on the list."""
    cands = list(candidates)
    lookup = {c: i for i, c in enumerate(cands)}
    if len(lookup) != len(cands):
        raise InvalidArgumentError(
            "An argument is outside its documented range.", "the candidate list has duplicates"
        )
    labels = np.asarray(labels, dtype=object) if not isinstance(labels, np.ndarray) else labels
    return np.fromiter((lookup.get(x, -1) for x in labels.tolist()), dtype=np.int64, count=len(labels))


def unit_codes(units: Any) -> np.ndarray:
    """Integer codes of the privacy units (equal ids get equal codes)."""
    arr = np.asarray(units)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    _, codes = np.unique(arr.astype(str) if arr.dtype.kind == "O" else arr, return_inverse=True)
    return codes.astype(np.int64)


def bound_contributions(
    rng: Rng,
    units: Any,
    candidates: Any,
    values: Any = None,
    *,
    candidate_list: Sequence[Any],
    max_candidates: int,
    max_per_candidate: int = 1,
    bounds: Optional[Tuple[float, float]] = None,
    allow_simulation: bool = False,
) -> BoundedAggregates:
    """Bounds each unit's contribution and aggregates per candidate (see the module documentation).

    Args:
        rng: the private generator for the random choices (``dpmo.Rng()``).
        units: the privacy unit of each event (any hashable ids, or ints).
        candidates: the candidate of each event (labels as in ``candidate_list``).
        values: the value of each event, or None (counts only).
        candidate_list: the public candidates, fixed independently of the data.
        max_candidates: L, the most candidates a unit may contribute to.
        max_per_candidate: C, the most events a unit may contribute to one candidate.
        bounds: (lo, hi) clamping the values (required with ``values``).
        allow_simulation: accept a reproducible generator (``Rng.for_simulation``; simulations and tests
            only). Without it such a generator raises ``InvalidGeneratorError``.

    Returns:
        :class:`BoundedAggregates` with the counts, sums and their sensitivities.
    """
    if rng.reproducible and not allow_simulation:
        refuse_simulation("the generator")
    if values is not None and bounds is None:
        raise InvalidArgumentError(
            "An argument is outside its documented range.", "bounds=(lo, hi) is required with values"
        )
    cand_list = list(candidate_list)
    cand_idx = candidate_index(cand_list, candidates)
    codes = unit_codes(units)
    if len(codes) != len(cand_idx):
        raise LengthMismatchError(
            "The lengths of the arguments do not agree with each other.", "units and candidates"
        )
    lo, hi = (0.0, 0.0) if bounds is None else (float(bounds[0]), float(bounds[1]))
    vals = None if values is None else np.asarray(values, dtype=np.float64)
    counts, sum_units, grid = _bound_events(
        rng, codes, cand_idx, vals, len(cand_list), int(max_candidates), int(max_per_candidate), lo, hi
    )
    c = float(max_per_candidate)
    m = max(abs(lo), abs(hi))
    return BoundedAggregates(
        candidates=cand_list,
        counts=counts.astype(np.float64),
        sums=None if vals is None else sum_units.astype(np.float64) * grid,
        count_sensitivity=c,
        sum_sensitivity=None if vals is None else c * m,
        count_l1_sensitivity=float(max_candidates) * c,
        sum_l1_sensitivity=None if vals is None else float(max_candidates) * c * m,
        max_candidates=int(max_candidates),
        max_per_candidate=int(max_per_candidate),
        bounds=None if bounds is None else (lo, hi),
        reproducible=rng.reproducible,
    )
