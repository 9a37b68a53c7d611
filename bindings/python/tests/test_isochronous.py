"""arithmetic="isochronous": constant-time selection, still ε-DP and charged ε (the mechanism runs at
dpmo.isochronous_run_epsilon), and what every selection consumes from the caller's generator (a fixed key,
whatever the data)."""

import math

import numpy as np
import pytest

import dpmo

TIED = np.full(100, 5.0)
PLUS = TIED.copy()
PLUS[17] += 1.0


def test_charged_epsilon_runs_a_hair_below():
    unit = math.ldexp(1.0, -40)
    assert dpmo.isochronous_run_epsilon(1.0, 10) == 1.0 - unit
    assert dpmo.isochronous_run_epsilon(0.5, 10, k=2, selector="permute_and_flip") == 0.25 - 11 * unit
    budget = dpmo.Budget(1.0)
    dpmo.select_exponential(dpmo.Rng(), TIED, sensitivity=1.0, epsilon=0.5, arithmetic="isochronous", budget=budget)
    assert budget.spent == 0.5
    # ε not above the slack is refused, nothing charged.
    with pytest.raises(dpmo.InvalidEpsilonError):
        dpmo.select_permute_and_flip(dpmo.Rng(), TIED, sensitivity=1.0, epsilon=1e-12, arithmetic="isochronous",
                                     budget=budget)
    assert budget.spent == 0.5
    with pytest.raises(dpmo.UnsupportedError):
        dpmo.select_noisy_max(dpmo.Rng(), TIED, sensitivity=1.0, epsilon=1.0, noise="laplace",
                              arithmetic="isochronous")
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.select(dpmo.Rng(), TIED, sensitivity=1.0, epsilon=1.0, arithmetic="constant-time")


def test_nan_scores_are_never_an_error():
    s = np.array([1.0, math.nan, math.inf, -math.inf])
    for arithmetic in ("exact", "isochronous", "float"):
        for _ in range(20):
            assert dpmo.select_exponential(dpmo.Rng(), s, sensitivity=1.0, epsilon=1.0, arithmetic=arithmetic) == 2


def _entry_points(scores):
    """Every selecting function of the binding, in every arithmetic it offers, on `scores`."""
    n = len(scores)
    table = dpmo.Sensitivity.table(np.full((n, 3), 0.5), global_sensitivity=1.0)
    per = dpmo.Sensitivity.per_candidate(np.full(n, 0.5), global_sensitivity=1.0, t_max=16)
    u2 = np.column_stack([scores, scores[::-1]])
    calls = []
    for a in ("exact", "isochronous", "float"):
        for sel in ("exponential", "permute_and_flip", "noisy_max_gumbel", "noisy_max_exponential"):
            calls.append(lambda g, a=a, sel=sel: dpmo.select(g, scores, sensitivity=1.0, epsilon=1.0, selector=sel,
                                                             arithmetic=a))
            calls.append(lambda g, a=a, sel=sel: dpmo.select_top_k(g, scores, 3, sensitivity=1.0, epsilon=1.0,
                                                                   selector=sel, arithmetic=a))
            for d in (table, per):
                calls.append(lambda g, a=a, sel=sel, d=d: dpmo.select_local_dampening(
                    g, scores, d, epsilon=1.0, selector=sel, arithmetic=a))
                calls.append(lambda g, a=a, sel=sel, d=d: dpmo.select_local_dampening_top_k(
                    g, scores, d, 2, epsilon=1.0, selector=sel, arithmetic=a))
        calls.append(lambda g, a=a: dpmo.select_top_k_gumbel(g, scores, 3, sensitivity=1.0, epsilon=1.0,
                                                             arithmetic=a))
    for a in ("exact", "float"):
        calls.append(lambda g, a=a: dpmo.select_privpareto(g, u2, epsilon=1.0, k=2, arithmetic=a))
    for a in ("exact", "isochronous", "float"):
        calls.append(lambda g, a=a: dpmo.select_privagg(g, u2, [1.0, 0.5], epsilon=1.0, k=2, globals=[1.0, 1.0],
                                                        arithmetic=a))
        calls.append(lambda g, a=a: dpmo.select_privagg(g, u2, [1.0, 0.5], epsilon=1.0, k=2, deltas=[per, per],
                                                        arithmetic=a))
    return calls


def test_generator_advances_the_same_on_neighbours():
    """Tied counts against tied + 1: after every entry point, the caller's generator is in the same state (its
    next draw is the same), in every arithmetic."""
    for i, (left, right) in enumerate(zip(_entry_points(TIED), _entry_points(PLUS))):
        a, b = dpmo.Rng.for_simulation(1000 + i), dpmo.Rng.for_simulation(1000 + i)
        left(a)
        right(b)
        assert a.sample("uniform") == b.sample("uniform"), f"entry point {i}"
