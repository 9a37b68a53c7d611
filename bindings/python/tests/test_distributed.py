"""The distributed exact report-noisy-max (partitions in-process) has the centralised distribution: χ² at
α = 1e-6 against the core's exact probabilities, for both noises, top-k, ties and far candidates."""

import itertools

import numpy as np
import pytest

import dpmo
from dpmo import distributed as dd
from conftest import ALPHA, chi2_pvalue
from test_statistics import pf_probabilities

R = 4000


def pair_probs(scores, eps_round, single):
    n = len(scores)
    out = {}
    p1 = single(scores, eps_round)
    for a in range(n):
        rest = [i for i in range(n) if i != a]
        p2 = single(scores[rest], eps_round)
        for j, b in enumerate(rest):
            out[(a, b)] = p1[a] * p2[j]
    return out


def em(scores, eps):
    return dpmo.exponential_probabilities(scores, sensitivity=1.0, epsilon=eps)


def pf(scores, eps):
    return pf_probabilities(scores, 1.0, eps)


@pytest.mark.parametrize("noise,probs", [("gumbel", em), ("exponential", pf)])
@pytest.mark.parametrize("parts", [1, 3, 6])
def test_single_pick_matches_the_centralised_distribution(noise, probs, parts):
    scores = np.array([0.0, 1.0, 2.0, 3.0, 3.0, -1.0])
    mp = dd.local_partitions(np.arange(6), scores, parts)
    out = dd.select_partitioned(dpmo.Rng.for_simulation(parts), mp, 6, sensitivity=1.0, epsilon=1.5, noise=noise,
                                repetitions=R, key=dpmo.StreamKey.for_simulation(parts), first_batch=2)
    assert out.shape == (R, 1)
    p = probs(scores, 1.5)
    assert chi2_pvalue(np.bincount(out[:, 0], minlength=6), p) > ALPHA
    # The check has power: the other mechanism, or ε off by 30 %, is rejected.
    other = pf if probs is em else em
    assert min(chi2_pvalue(np.bincount(out[:, 0], minlength=6), other(scores, 1.5)),
               chi2_pvalue(np.bincount(out[:, 0], minlength=6), probs(scores, 1.95))) < ALPHA


@pytest.mark.parametrize("noise,probs", [("gumbel", em), ("exponential", pf)])
def test_top_2_matches_peeling(noise, probs):
    scores = np.array([0.0, 2.0, 2.0, 4.0, 1.0])
    mp = dd.local_partitions(np.arange(5), scores, 2)
    out = dd.select_partitioned(dpmo.Rng(), mp, 5, sensitivity=1.0, epsilon=2.0, k=2, noise=noise, repetitions=R)
    pairs = pair_probs(scores, dd.round_epsilon(2.0, 2), probs)
    keys = sorted(pairs)
    obs = [int(np.sum((out[:, 0] == a) & (out[:, 1] == b))) for a, b in keys]
    assert sum(obs) == R
    assert chi2_pvalue(obs, [pairs[k] for k in keys]) > ALPHA


def test_far_candidates_and_many_partitions():
    scores = np.concatenate([[1000.0], np.zeros(300)])
    mp = dd.local_partitions(np.arange(301), scores, 7)
    for noise in ("gumbel", "exponential"):
        out = dd.select_partitioned(dpmo.Rng(), mp, 301, sensitivity=1.0, epsilon=1.0, noise=noise, repetitions=50,
                                    first_batch=1)
        assert np.all(out[:, 0] == 0)


def test_arguments_budget_and_data_failures():
    scores = np.array([0.0, 1.0, 2.0])
    mp = dd.local_partitions(np.arange(3), scores, 2)
    rng = dpmo.Rng()
    budget = dpmo.Budget(1.0)
    for kw, err in [
        (dict(epsilon=0.0), dpmo.InvalidEpsilonError),
        (dict(sensitivity=-1.0), dpmo.InvalidSensitivityError),
        (dict(k=4), dpmo.InvalidArgumentError),
        (dict(k=0), dpmo.InvalidArgumentError),
        (dict(noise="laplace"), dpmo.UnsupportedError),
        (dict(noise="normal"), dpmo.InvalidArgumentError),
    ]:
        args = dict(sensitivity=1.0, epsilon=0.5, budget=budget)
        args.update(kw)
        with pytest.raises(err):
            dd.select_partitioned(rng, mp, 3, **args)
    assert budget.spent == 0.0
    with pytest.raises(dpmo.EmptyInputError):
        dd.select_partitioned(rng, mp, 0, sensitivity=1.0, epsilon=0.5, budget=budget)
    # A NaN or infinite score is private data: never an error, it follows the public rule of every selection
    # (NaN the lowest score, ±inf ±MAX), and the call is charged as usual.
    big = float(np.finfo(np.float64).max)
    bad = dd.local_partitions(np.arange(4), [0.0, float("nan"), 1.0, float("-inf")], 2)
    rule = dd.local_partitions(np.arange(4), [0.0, -big, 1.0, -big], 2)
    for noise in ("gumbel", "exponential"):
        key = dpmo.StreamKey.for_simulation(9)
        got = dd.select_partitioned(dpmo.Rng.for_simulation(9), bad, 4, sensitivity=1.0, epsilon=0.5, noise=noise,
                                    key=key, k=2, repetitions=8)
        want = dd.select_partitioned(dpmo.Rng.for_simulation(9), rule, 4, sensitivity=1.0, epsilon=0.5, noise=noise,
                                     key=key, k=2, repetitions=8)
        assert np.array_equal(got, want)
    assert dd.select_partitioned(rng, bad, 4, sensitivity=1.0, epsilon=0.25, budget=budget).shape == (1,)
    dd.select_partitioned(rng, bad, 4, sensitivity=1.0, epsilon=0.25, budget=budget)
    assert budget.spent == 0.5
    assert dd.select_partitioned(rng, mp, 3, sensitivity=1.0, epsilon=0.5, budget=budget).shape == (1,)
    with pytest.raises(dpmo.BudgetExhaustedError):
        dd.select_partitioned(rng, mp, 3, sensitivity=1.0, epsilon=0.5, budget=budget)
    with pytest.raises(dpmo.LengthMismatchError):
        dd.select_partitioned(rng, mp, 4, sensitivity=1.0, epsilon=0.5)
    assert dd.round_epsilon(1.0, 3) * 3 <= 1.0
    streams = {dd.stream_number(p, r, a, rep, j) for p, r, a, rep, j in itertools.product(range(1, 4), range(3), range(2), range(3), range(3))}
    assert len(streams) == 3 * 3 * 2 * 3 * 3


@pytest.mark.parametrize("noise", ["gumbel", "exponential"])
def test_the_callers_generator_advances_by_public_parameters_only(noise):
    # Issue 20: tied counts against tied + 1. Permute-and-flip's choice among the partitions' heads used to draw
    # from the caller's generator by rejection, so its state after the call depended on the scores; now each
    # round draws one key (rng::call_stream), whatever the data.
    tied = np.full(40, 7.0)
    bumped = tied.copy()
    bumped[13] += 1.0
    after = []
    for scores in (tied, bumped):
        rng = dpmo.Rng.for_simulation(5)
        mp = dd.local_partitions(np.arange(40), scores, 4)
        for seed in range(6):
            dd.select_partitioned(rng, mp, 40, sensitivity=1.0, epsilon=1.0, noise=noise, k=2,
                                  key=dpmo.StreamKey.for_simulation(seed))
        after.append([rng.sample("uniform") for _ in range(4)])
    assert after[0] == after[1]
