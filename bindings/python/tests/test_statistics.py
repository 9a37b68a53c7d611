"""Sampling checks: χ² at α = 1e-6 of every selector of the binding against exact probabilities, and each
check shown to reject a wrong distribution."""

import itertools
import math

import numpy as np
import pytest

import dpmo
from conftest import ALPHA, chi2_pvalue

DRAWS = 20000
SCORES = np.array([0.0, 1.0, 2.0, 3.0, 3.0, -1.0])


def pf_probabilities(scores, sensitivity, epsilon):
    """Permute-and-flip's exact distribution: a uniform element of the heads of independent coins."""
    p = np.exp(epsilon * (scores - scores.max()) / (2 * sensitivity))
    n = len(scores)
    out = np.zeros(n)
    for heads in itertools.product([0, 1], repeat=n):
        h = [i for i in range(n) if heads[i]]
        if not h:
            continue
        w = math.prod(p[i] if heads[i] else 1 - p[i] for i in range(n))
        for i in h:
            out[i] += w / len(h)
    return out / out.sum()


def counts(draws, n):
    return np.bincount(np.asarray(draws), minlength=n)


@pytest.fixture()
def rng():
    return dpmo.Rng.for_simulation(20261124)


def test_the_chi2_check_rejects_wrong_distributions(rng):
    em = [dpmo.select_exponential(rng, SCORES, sensitivity=1.0, epsilon=1.0) for _ in range(DRAWS)]
    good = dpmo.exponential_probabilities(SCORES, sensitivity=1.0, epsilon=1.0)
    assert chi2_pvalue(counts(em, 6), good) > ALPHA
    assert chi2_pvalue(counts(em, 6), dpmo.exponential_probabilities(SCORES, sensitivity=1.0, epsilon=1.3)) < ALPHA
    assert chi2_pvalue(counts(em, 6), pf_probabilities(SCORES, 1.0, 1.0)) < ALPHA
    assert chi2_pvalue([1, 0], [1.0, 0.0]) > ALPHA and chi2_pvalue([0, 1], [1.0, 0.0]) == 0.0


@pytest.mark.parametrize("arithmetic", ["exact", "isochronous", "float"])
def test_exponential_mechanism_and_gumbel_noise(rng, arithmetic):
    p = dpmo.exponential_probabilities(SCORES, sensitivity=2.0, epsilon=3.0)
    em = [dpmo.select_exponential(rng, SCORES, sensitivity=2.0, epsilon=3.0, arithmetic=arithmetic) for _ in range(DRAWS)]
    assert chi2_pvalue(counts(em, 6), p) > ALPHA
    g = [dpmo.select_noisy_max(rng, SCORES, sensitivity=2.0, epsilon=3.0, noise="gumbel", arithmetic=arithmetic)
         for _ in range(DRAWS)]
    assert chi2_pvalue(counts(g, 6), p) > ALPHA


@pytest.mark.parametrize("arithmetic", ["exact", "isochronous", "float"])
def test_permute_and_flip_and_exponential_noise(rng, arithmetic):
    p = pf_probabilities(SCORES, 1.0, 2.0)
    pf = [dpmo.select_permute_and_flip(rng, SCORES, sensitivity=1.0, epsilon=2.0, arithmetic=arithmetic)
          for _ in range(DRAWS)]
    assert chi2_pvalue(counts(pf, 6), p) > ALPHA
    e = [dpmo.select(rng, SCORES, sensitivity=1.0, epsilon=2.0, selector="noisy_max_exponential", arithmetic=arithmetic)
         for _ in range(DRAWS)]
    assert chi2_pvalue(counts(e, 6), p) > ALPHA


def test_top_k_gumbel_is_peeling(rng):
    s = np.array([0.0, 1.0, 2.0, 2.5])
    p1 = dpmo.exponential_probabilities(s, sensitivity=1.0, epsilon=1.5)
    pairs = {}
    for a in range(4):
        rest = [i for i in range(4) if i != a]
        p2 = dpmo.exponential_probabilities(s[rest], sensitivity=1.0, epsilon=1.5)
        for j, b in enumerate(rest):
            pairs[(a, b)] = p1[a] * p2[j]
    keys = sorted(pairs)
    for fn in (lambda: dpmo.select_top_k_gumbel(rng, s, 2, sensitivity=1.0, epsilon=3.0),
               lambda: dpmo.select_top_k(rng, s, 2, sensitivity=1.0, epsilon=3.0),
               lambda: dpmo.select_top_k(rng, s, 2, sensitivity=1.0, epsilon=3.0, arithmetic="isochronous"),
               lambda: dpmo.select_top_k_gumbel(rng, s, 2, sensitivity=1.0, epsilon=3.0, arithmetic="isochronous")):
        draws = [tuple(fn()) for _ in range(DRAWS)]
        obs = [sum(1 for d in draws if d == key) for key in keys]
        assert chi2_pvalue(obs, [pairs[key] for key in keys]) > ALPHA


@pytest.mark.parametrize("dampening", ["plain", "shifted"])
@pytest.mark.parametrize("arithmetic", ["exact", "isochronous"])
def test_local_dampening(rng, dampening, arithmetic):
    u = np.array([10.0, 3.0, 7.5, 0.0, 9.0])
    delta = dpmo.Sensitivity.table([[0.5, 1, 1], [1, 1, 1], [0.25, 0.5, 1], [1, 1, 1], [0.5, 0.5, 1]],
                                   global_sensitivity=1.0)
    p = dpmo.local_dampening_probabilities(u, delta, epsilon=0.5, dampening=dampening)
    draws = [dpmo.select_local_dampening(rng, u, delta, epsilon=0.5, dampening=dampening, arithmetic=arithmetic)
             for _ in range(DRAWS)]
    assert chi2_pvalue(counts(draws, 5), p) > ALPHA
    # The same δ as a callback gives the same distribution.
    table = np.asarray(delta.values)
    cb = dpmo.Sensitivity.callback(lambda r, t: float(table[r, t]) if t < 3 else 1.0, global_sensitivity=1.0, t_max=3)
    draws = [dpmo.select_local_dampening(rng, u, cb, epsilon=0.5, dampening=dampening, arithmetic=arithmetic)
             for _ in range(5000)]
    assert chi2_pvalue(counts(draws, 5), p) > ALPHA


def test_privpareto_and_privagg(rng):
    u = np.array([[5, 1], [3, 3], [1, 5], [2, 2], [4, 4], [0, 0]], dtype=float)
    p = dpmo.privpareto_probabilities(u, epsilon=2.0)
    draws = [int(dpmo.select_privpareto(rng, u, epsilon=2.0)[0]) for _ in range(DRAWS)]
    assert chi2_pvalue(counts(draws, 6), p) > ALPHA
    p = dpmo.privagg_probabilities(u, [1.0, 0.5], epsilon=1.0, globals=[1.0, 1.0])
    for arithmetic in ("exact", "isochronous"):
        draws = [int(dpmo.select_privagg(rng, u, [1.0, 0.5], epsilon=1.0, globals=[1.0, 1.0],
                                         arithmetic=arithmetic)[0]) for _ in range(DRAWS)]
        assert chi2_pvalue(counts(draws, 6), p) > ALPHA


def test_discrete_laplace(rng):
    z = rng.discrete_laplace(2.0, 100000)
    support = np.arange(-12, 13)
    w = np.exp(-np.abs(support) / 2.0)
    tail = 2 * math.exp(-13 / 2.0) / (1 - math.exp(-0.5))
    p = np.append(w, tail) / (w.sum() + tail)
    obs = np.append([np.sum(z == s) for s in support], np.sum(np.abs(z) > 12))
    assert chi2_pvalue(obs, p) > ALPHA
    # A wrong scale is rejected.
    w2 = np.exp(-np.abs(support) / 2.3)
    tail2 = 2 * math.exp(-13 / 2.3) / (1 - math.exp(-1 / 2.3))
    assert chi2_pvalue(obs, np.append(w2, tail2) / (w2.sum() + tail2)) < ALPHA
