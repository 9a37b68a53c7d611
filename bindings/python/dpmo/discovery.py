"""Private selection over an unknown domain: which items to release, and the top-k of them, from raw events
``(unit, item[, value])`` with no candidate list (see ``docs/discovery.md``).

Every other selection of dpmo needs a public candidate list. A list taken from the data leaks: an item only
one person produced reveals that person whatever the selection does afterwards. These functions find the
items privately, in the Rust core (``dpmo::discover``), exact on the random path:

* :func:`discover_partitions` — partition selection: bounds each unit to ``max_items`` items, then keeps
  the items whose noisy unit count passes a threshold (truncated geometric, Laplace, Gaussian, weighted
  Gaussian or DP-SIPS). (ε, δ)-DP for adding or removing all the events of one unit.
* :func:`select_top_k_from_events` — the top-k items: Durfee & Rogers' unknown-domain top-k (the top k̄
  items plus a threshold candidate ⊥, exact exponential-mechanism peeling until ⊥), charged what it spent
  (pay what you get). With ``candidate_list=`` the list stays public and the known-domain top-k of
  :func:`dpmo.select_top_k` runs on the bounded counts instead (pure ε, δ = 0).

Both charge a :class:`dpmo.Budget` made with a δ (``dpmo.Budget(1.0, delta=1e-6)``) before they look at the
events, draw a fixed number of keys from the generator whatever the events (one; two with a candidate list:
the bounding's and the selection's), and treat private data by public rules (no event at all is an empty
dataset; a NaN value counts as 0; values are clamped to ``bounds``).

Item and unit labels may be any hashable values: integers are used as they are (as 64-bit patterns), other
labels are numbered in their sorted order (a public order: which labels exist is never released except
through the mechanism's output).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ._native import Budget, Rng, _discover_partitions, _discover_top_k, select_top_k
from .bounding import bound_contributions, refuse_simulation, unit_codes
from .errors import InvalidArgumentError

MECHANISMS = ("truncated_geometric", "laplace", "gaussian", "weighted_gaussian", "sips")
SCORES = ("units", "events", "sum")


@dataclass(frozen=True)
class TopKFromEvents:
    """The outcome of :func:`select_top_k_from_events`.

    Attributes:
        items: the selected items (labels), in selection order (best first).
        stopped: True when the unknown-domain mechanism stopped at its threshold candidate ⊥ before k items.
        epsilon: the ε spent (what the budget was charged): ε/k · (len(items) + 1) when stopped, else ε.
        delta: the δ spent (0 with a public candidate list).
    """

    items: List[Any]
    stopped: bool
    epsilon: float
    delta: float


def _item_codes(items: Any) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """64-bit ids of the item labels and, for non-integer labels, the sorted labels to map them back."""
    arr = np.asarray(items)
    if arr.ndim != 1:
        arr = np.asarray(list(items), dtype=object)
    if arr.dtype.kind in "iu" or (arr.dtype.kind == "O" and len(arr) == 0):
        return arr.astype(np.int64, copy=False), None
    if arr.dtype.kind == "b":
        return arr.astype(np.int64), None
    keys = arr.astype(str) if arr.dtype.kind == "O" else arr
    labels, codes = np.unique(keys, return_inverse=True)
    if arr.dtype.kind == "O":
        # Map back to the original objects (the first of each string form).
        first = {}
        for x, k in zip(arr.tolist(), keys.tolist()):
            first.setdefault(k, x)
        labels = np.array([first[k] for k in labels.tolist()], dtype=object)
    return codes.astype(np.int64), labels


def _labels(ids: np.ndarray, labels: Optional[np.ndarray]) -> List[Any]:
    if labels is None:
        return [int(x) for x in ids.tolist()]
    return [labels[int(x)].item() if hasattr(labels[int(x)], "item") else labels[int(x)] for x in ids.tolist()]


def _check_rng(rng: Rng, allow_simulation: bool) -> None:
    if rng.reproducible and not allow_simulation:
        refuse_simulation("the generator")


def discover_partitions(
    rng: Rng,
    units: Any,
    items: Any,
    *,
    max_items: int,
    epsilon: float,
    delta: float,
    mechanism: str = "weighted_gaussian",
    rounds: int = 1,
    budget: Optional[Budget] = None,
    allow_simulation: bool = False,
) -> List[Any]:
    """Private partition selection: the items to release, from raw events, with no candidate list.

    Each unit keeps at most ``max_items`` (L) of its distinct items, chosen uniformly at random from a
    stream of its own; then each item whose noisy count of units passes a threshold is released.
    (ε, δ)-DP for adding or removing all the events of one unit; an item no unit has is never released.

    Args:
        rng: the private generator (``dpmo.Rng()``); one key is drawn from it whatever the events.
        units: the privacy unit of each event (any hashable ids, or ints).
        items: the item of each event (any hashable labels, or ints).
        max_items: L ≥ 1, the most items one unit contributes to.
        epsilon, delta: the guarantee (ε > 0, 2⁻³⁰⁰ ≤ δ < 1).
        mechanism: ``"truncated_geometric"`` (optimal for L = 1), ``"laplace"``, ``"gaussian"``,
            ``"weighted_gaussian"`` (weights 1/√|S_u|, the default) or ``"sips"`` (DP-SIPS, ``rounds``
            rounds, 1 to 8).
        budget: charged (ε, δ) before the events are read (a pure-ε budget refuses: make it with
            ``delta=``).
        allow_simulation: accept a reproducible generator (simulations and tests only).

    Returns:
        The selected items, sorted (integers ascending as 64-bit patterns; other labels in sorted order).
    """
    _check_rng(rng, allow_simulation)
    if budget is not None:
        budget._check_release(rng.reproducible)
    if mechanism not in MECHANISMS:
        raise InvalidArgumentError(
            "An argument is outside its documented range.", f"mechanism must be one of {', '.join(MECHANISMS)}"
        )
    codes = unit_codes(units)
    ids, labels = _item_codes(items)
    out = _discover_partitions(
        rng, codes, ids, int(max_items), mechanism, int(rounds), float(epsilon), float(delta), budget
    )
    return _labels(np.asarray(out), labels)


def select_top_k_from_events(
    rng: Rng,
    units: Any,
    items: Any,
    values: Any = None,
    *,
    k: int,
    max_items: int,
    epsilon: float,
    delta: Optional[float] = None,
    k_bar: Optional[int] = None,
    max_per_item: int = 1,
    score: str = "units",
    bounds: Optional[Tuple[float, float]] = None,
    candidate_list: Optional[Sequence[Any]] = None,
    budget: Optional[Budget] = None,
    allow_simulation: bool = False,
) -> TopKFromEvents:
    """The top-k items of raw events, selected privately, with or without a candidate list.

    Without ``candidate_list`` (the unknown domain): Durfee & Rogers' mechanism. Each unit's contributions
    are bounded (at most ``max_items`` items, ``max_per_item`` events per item, values clamped to
    ``bounds``); the k̄ items with the largest ``score`` and a threshold candidate ⊥ compete in up to k
    rounds of the exact exponential mechanism at ε/k each; the run stops when ⊥ wins. A run that stops
    after ℓ items costs (ε/k · (ℓ + 1), δ), one that returns k items (ε, δ): the budget is charged (ε, δ)
    up front and refunded the difference.

    With ``candidate_list`` (a public list, fixed before looking at the data): events on other items are
    dropped, the bounded scores of the listed items go to :func:`dpmo.select_top_k` (exact exponential
    mechanism, k rounds), ε-DP; ``delta`` and ``k_bar`` are not used.

    Args:
        rng: the private generator (``dpmo.Rng()``).
        units, items: the unit and the item of each event (any hashable labels, or ints).
        values: the value of each event (for ``score="sum"``), or None.
        k: how many items at most.
        max_items: L, the most items a unit contributes to.
        epsilon: the total ε (ε/k per round).
        delta: δ of the unknown-domain mechanism (required without ``candidate_list``).
        k_bar: k̄ ≥ k, how many of the top items compete (default k).
        max_per_item: C, the most events a unit contributes to one item.
        score: ``"units"`` (distinct units, Δ = 1), ``"events"`` (kept events, Δ = C) or ``"sum"`` (sum of
            the kept values clamped to ``bounds`` = (lo, hi), 0 ≤ lo ≤ hi, hi > 0; Δ = C · hi).
        bounds: (lo, hi), required with ``values``.
        candidate_list: a public list of items, or None for the unknown domain.
        budget: charged before the events are read (see above).
        allow_simulation: accept a reproducible generator (simulations and tests only).

    Returns:
        :class:`TopKFromEvents` (items in selection order, whether it stopped at ⊥, the ε and δ spent).
    """
    _check_rng(rng, allow_simulation)
    if budget is not None:
        budget._check_release(rng.reproducible)
    if score not in SCORES:
        raise InvalidArgumentError("An argument is outside its documented range.", "score must be 'units', 'events' or 'sum'")
    if values is not None and bounds is None:
        raise InvalidArgumentError("An argument is outside its documented range.", "bounds=(lo, hi) is required with values")
    if score == "sum" and values is None:
        raise InvalidArgumentError("An argument is outside its documented range.", "score='sum' needs values")
    if candidate_list is not None:
        return _top_k_public(
            rng, units, items, values, k=k, max_items=max_items, epsilon=epsilon, max_per_item=max_per_item,
            score=score, bounds=bounds, candidate_list=candidate_list, budget=budget,
            allow_simulation=allow_simulation,
        )
    if delta is None:
        raise InvalidArgumentError(
            "An argument is outside its documented range.",
            "delta is required without a candidate list (the unknown-domain mechanism is (epsilon, delta)-DP)",
        )
    codes = unit_codes(units)
    ids, labels = _item_codes(items)
    vals = None if values is None else np.asarray(values, dtype=np.float64)
    lo, hi = (0.0, 0.0) if bounds is None else (float(bounds[0]), float(bounds[1]))
    out, stopped, eps, dlt = _discover_top_k(
        rng, codes, ids, vals, score, int(k), int(k if k_bar is None else k_bar), int(max_items),
        int(max_per_item), lo, hi, float(epsilon), float(delta), budget,
    )
    return TopKFromEvents(items=_labels(np.asarray(out), labels), stopped=bool(stopped), epsilon=eps, delta=dlt)


def _top_k_public(rng, units, items, values, *, k, max_items, epsilon, max_per_item, score, bounds,
                  candidate_list, budget, allow_simulation) -> TopKFromEvents:
    """The known-domain path: bounded scores of the public list, then dpmo.select_top_k (pure ε)."""
    c = 1 if score == "units" else int(max_per_item)
    agg = bound_contributions(
        rng, units, items, values if score == "sum" else None, candidate_list=candidate_list,
        max_candidates=max_items, max_per_candidate=c, bounds=bounds if score == "sum" else None,
        allow_simulation=allow_simulation,
    )
    if score == "sum":
        if bounds is None or not (0.0 <= float(bounds[0]) <= float(bounds[1]) and float(bounds[1]) > 0.0):
            raise InvalidArgumentError(
                "An argument is outside its documented range.", "score='sum' needs bounds 0 <= lo <= hi, hi > 0"
            )
        scores, sensitivity = agg.sums, c * float(bounds[1])
    else:
        scores, sensitivity = agg.counts, float(c)
    cands = list(candidate_list)
    k = min(int(k), len(cands))  # the list is public: asking for more than it holds returns all of it
    picked = select_top_k(rng, scores, k, sensitivity=sensitivity, epsilon=float(epsilon), budget=budget)
    return TopKFromEvents(items=[cands[int(i)] for i in picked], stopped=False, epsilon=float(epsilon), delta=0.0)
