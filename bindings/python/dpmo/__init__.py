"""dpmo — differentially private selection, single- and multi-objective.

A Python binding (PyO3) over dpmo's Rust core: the exponential mechanism, permute-and-flip and
report-noisy-max, local dampening, Pareto scores and δ^PS, PrivPareto and PrivAgg, the sensitivity functions
of the papers' applications, exact probabilities, discrete Laplace noise, a generator and a privacy budget;
plus contribution bounding of raw events (:func:`bound_contributions`), private selection from raw events
with no candidate list (:func:`discover_partitions`, :func:`select_top_k_from_events`, (ε, δ) budgets) and a
Spark pipeline (:mod:`dpmo.spark`).

Every selection is **exact** by default: each output has exactly the probability of the mathematical
mechanism, so the ε-DP guarantee holds in the arithmetic that runs. ``arithmetic="float"`` opts into the
floating-point samplers (ε-DP in real arithmetic only; for comparisons, not for releases).

Quick start::

    import dpmo
    rng = dpmo.Rng()                       # ChaCha20 seeded from os.urandom
    budget = dpmo.Budget(1.0)
    counts = [120, 95, 130, 40]            # one person changes one count by at most 1
    best = dpmo.select_exponential(rng, counts, sensitivity=1.0, epsilon=0.5, budget=budget)
    print(best, budget.remaining)

Every failure raises a :class:`DpmoError` subclass carrying the C ABI's status code and message.
"""

from __future__ import annotations

from . import errors
from ._native import (
    CONTINGENCY_MAX_CLASSES,
    CONTINGENCY_MAX_VALUES,
    DEGREE_GLOBAL_SENSITIVITY,
    EGODENSITY_GLOBAL_SENSITIVITY,
    GINI_GLOBAL_SENSITIVITY,
    MAX_OBJECTIVES,
    RATE_GLOBAL_SENSITIVITY,
    Budget,
    Graph,
    Rng,
    Sensitivity,
    StreamKey,
    __version__,
    advanced_composition,
    dampen,
    delta_max,
    ebc_global_sensitivity,
    exponential_probabilities,
    isochronous_run_epsilon,
    gini_utility,
    info_gain_delta_table,
    info_gain_global_sensitivity,
    information_gain,
    local_dampening_probabilities,
    pareto_global_sensitivity,
    pareto_scores,
    pareto_sensitivity_table,
    privagg_probabilities,
    privpareto_probabilities,
    rate_delta,
    rate_delta_table,
    select,
    select_exponential,
    select_local_dampening,
    select_local_dampening_top_k,
    select_noisy_max,
    select_permute_and_flip,
    select_privagg,
    select_privpareto,
    select_top_k,
    select_top_k_gumbel,
    tnr,
    tpr,
    weighted_global_sensitivity,
    weighted_sensitivity_table,
    weighted_sum,
)
from .bounding import BoundedAggregates, bound_contributions
from .discovery import TopKFromEvents, discover_partitions, select_top_k_from_events
from .errors import (
    BudgetExhaustedError,
    CapacityExceededError,
    DpmoError,
    DpmoOverflowError,
    EmptyInputError,
    InvalidArgumentError,
    InvalidEpsilonError,
    InvalidGeneratorError,
    InvalidSensitivityError,
    InvalidSensitivityValueError,
    LengthMismatchError,
    NonFiniteInputError,
    NullPointerError,
    OverlappingBuffersError,
    ScratchTooSmallError,
    UnsupportedError,
)

__all__ = [
    "__version__",
    # state
    "Rng",
    "StreamKey",
    "Budget",
    "Sensitivity",
    # single objective
    "select",
    "select_exponential",
    "select_permute_and_flip",
    "select_noisy_max",
    "select_top_k",
    "select_top_k_gumbel",
    "exponential_probabilities",
    "isochronous_run_epsilon",
    "dampen",
    "local_dampening_probabilities",
    "select_local_dampening",
    "select_local_dampening_top_k",
    # multi-objective
    "pareto_scores",
    "pareto_global_sensitivity",
    "pareto_sensitivity_table",
    "weighted_sum",
    "weighted_global_sensitivity",
    "weighted_sensitivity_table",
    "select_privpareto",
    "privpareto_probabilities",
    "select_privagg",
    "privagg_probabilities",
    "MAX_OBJECTIVES",
    # applications
    "Graph",
    "ebc_global_sensitivity",
    "tpr",
    "tnr",
    "rate_delta",
    "rate_delta_table",
    "information_gain",
    "info_gain_global_sensitivity",
    "info_gain_delta_table",
    "gini_utility",
    "delta_max",
    "advanced_composition",
    "DEGREE_GLOBAL_SENSITIVITY",
    "EGODENSITY_GLOBAL_SENSITIVITY",
    "RATE_GLOBAL_SENSITIVITY",
    "GINI_GLOBAL_SENSITIVITY",
    "CONTINGENCY_MAX_VALUES",
    "CONTINGENCY_MAX_CLASSES",
    # raw events
    "bound_contributions",
    "BoundedAggregates",
    # raw events, no candidate list (docs/discovery.md)
    "discover_partitions",
    "select_top_k_from_events",
    "TopKFromEvents",
    # errors: the module and every exception class it exports
    "errors",
    *errors.__all__,
]
