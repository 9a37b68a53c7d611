"""Contribution bounding: what one unit can move (the attack: one unit with 10⁴ events), uniform choices,
clamping, public candidates only, independence of the event order."""

import numpy as np
import pytest

import dpmo
from conftest import ALPHA, chi2_pvalue


def base_events(seed=0, units=200, events=3000, candidates=20):
    rs = np.random.default_rng(seed)
    return (rs.integers(0, units, events), rs.integers(0, candidates, events), rs.normal(5.0, 8.0, events))


@pytest.mark.parametrize("L,C", [(1, 1), (3, 1), (2, 4)])
def test_one_unit_with_ten_thousand_events_moves_counts_by_at_most_L_C(L, C):
    u, c, v = base_events()
    cands = list(range(20))
    rs = np.random.default_rng(1)
    # The attacker: one unit, 10⁴ events, spread over every candidate and piled on a few.
    au = np.full(10000, 10**6)
    ac = np.concatenate([rs.integers(0, 20, 5000), np.full(5000, 3)])
    av = rs.normal(0, 1e6, 10000)
    lo, hi = -2.0, 10.0
    for trial in range(5):
        seed = 100 + trial
        without = dpmo.bound_contributions(dpmo.Rng.for_simulation(seed), u, c, v, candidate_list=cands,
                                           max_candidates=L, max_per_candidate=C, bounds=(lo, hi),
                                           allow_simulation=True)
        # The same generator state for the other units: the attacker sorts last (largest id).
        with_ = dpmo.bound_contributions(dpmo.Rng.for_simulation(seed), np.concatenate([u, au]),
                                         np.concatenate([c, ac]), np.concatenate([v, av]), candidate_list=cands,
                                         max_candidates=L, max_per_candidate=C, bounds=(lo, hi),
                                         allow_simulation=True)
        dc = with_.counts - without.counts
        ds = with_.sums - without.sums
        assert np.all(dc >= 0) and dc.max() <= C and dc.sum() <= L * C and dc.sum() >= 1
        assert np.abs(ds).max() <= C * max(abs(lo), abs(hi))
        assert np.abs(ds).sum() <= L * C * max(abs(lo), abs(hi))
    assert with_.count_sensitivity == C and with_.count_l1_sensitivity == L * C
    assert with_.sum_sensitivity == C * 10.0 and with_.sum_l1_sensitivity == L * C * 10.0


def test_a_known_seed_is_refused_and_one_unit_never_moves_another_units_choices():
    """With a seed the analyst knows, bounding is a known function of the data: a reproducible generator is
    refused without allow_simulation=True. And whatever the seed, each unit's choices come from a stream of
    its own (the core's dpmo::discover::bound, keyed once per call): a unit that sorts before everyone (the
    attack that, with one shared stream, shifted every later unit's draws and moved the counts by 76 against
    L · C = 2) changes only its own contribution."""
    u, c, v = base_events(units=200, events=3000)
    cands = list(range(20))
    L, C = 2, 1
    with pytest.raises(dpmo.InvalidGeneratorError) as info:
        dpmo.bound_contributions(dpmo.Rng.for_simulation(1), u, c, candidate_list=cands, max_candidates=L)
    assert "allow_simulation" in info.value.detail
    assert not dpmo.bound_contributions(dpmo.Rng(), u, c, candidate_list=cands, max_candidates=L).reproducible
    kw = dict(candidate_list=cands, max_candidates=L, max_per_candidate=C, allow_simulation=True)
    for seed in range(5):
        without = dpmo.bound_contributions(dpmo.Rng.for_simulation(seed), u, c, **kw)
        # The attacker's id sorts before everyone's, and it touches 5 candidates (L = 2 kept).
        with_ = dpmo.bound_contributions(dpmo.Rng.for_simulation(seed), np.concatenate([[-1] * 5, u]),
                                         np.concatenate([[0, 1, 2, 3, 4], c]), **kw)
        assert with_.reproducible
        moved = with_.counts - without.counts
        assert moved.min() >= 0 and moved.sum() == L * C and moved.max() == C


def test_candidates_come_from_the_public_list_only():
    agg = dpmo.bound_contributions(dpmo.Rng(), ["a", "b", "c"], ["x", "secret", "y"], candidate_list=["x", "y"],
                                   max_candidates=5)
    assert agg.candidates == ["x", "y"] and agg.counts.tolist() == [1.0, 1.0]
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.bound_contributions(dpmo.Rng(), [1], ["x"], candidate_list=["x", "x"], max_candidates=1)


def test_choices_are_uniform():
    # One unit with 5 candidates, L = 2: each pair of candidates is kept with probability 1/10.
    rng = dpmo.Rng.for_simulation(3)
    obs = np.zeros(5)
    for _ in range(5000):
        agg = dpmo.bound_contributions(rng, [0] * 5, [0, 1, 2, 3, 4], candidate_list=range(5), max_candidates=2,
                                       allow_simulation=True)
        obs += agg.counts
    assert chi2_pvalue(obs, np.full(5, 0.2)) > ALPHA
    # C = 1 of 4 events with values 0..3: each value kept with probability 1/4.
    vals = np.zeros(4)
    for _ in range(4000):
        agg = dpmo.bound_contributions(rng, [0] * 4, [0] * 4, [0.0, 1.0, 2.0, 3.0], candidate_list=[0],
                                       max_candidates=1, bounds=(0.0, 3.0), allow_simulation=True)
        vals[int(agg.sums[0])] += 1
    assert chi2_pvalue(vals, np.full(4, 0.25)) > ALPHA
    assert chi2_pvalue(vals, [0.4, 0.2, 0.2, 0.2]) < ALPHA


def test_clamping_truncation_and_order_independence():
    u, c, v = base_events(5)
    args = dict(candidate_list=list(range(20)), max_candidates=2, max_per_candidate=2, bounds=(-1.0, 3.0),
                allow_simulation=True)
    a = dpmo.bound_contributions(dpmo.Rng.for_simulation(9), u, c, v, **args)
    perm = np.random.default_rng(2).permutation(len(u))
    b = dpmo.bound_contributions(dpmo.Rng.for_simulation(9), u[perm], c[perm], v[perm], **args)
    assert a.counts.tolist() == b.counts.tolist() and a.sums.tolist() == b.sums.tolist()
    assert np.all(a.sums <= 3.0 * a.counts) and np.all(a.sums >= -1.0 * a.counts)
    # Large L and C keep everything: the exact per-candidate counts and clamped sums (on the value grid).
    full = dpmo.bound_contributions(dpmo.Rng(), u, c, v, candidate_list=list(range(20)), max_candidates=20,
                                    max_per_candidate=10**6, bounds=(-1.0, 3.0))
    assert full.counts.tolist() == np.bincount(c, minlength=20).astype(float).tolist()
    g = 2.0 ** -18  # max(|lo|, |hi|) = 3 ≤ 2^2: grid 2^(2 - 20)
    expected = np.zeros(20)
    np.add.at(expected, c, np.trunc(np.clip(v, -1.0, 3.0) / g) * g)
    assert np.allclose(full.sums, expected, rtol=0, atol=1e-9)
    # NaN values count as 0; missing bounds with values, bad L and bad bounds raise.
    nan = dpmo.bound_contributions(dpmo.Rng(), [1], [0], [float("nan")], candidate_list=[0], max_candidates=1,
                                   bounds=(1.0, 2.0))
    assert nan.sums.tolist() == [1.0]
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.bound_contributions(dpmo.Rng(), [1], [0], [1.0], candidate_list=[0], max_candidates=1)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.bound_contributions(dpmo.Rng(), [1], [0], candidate_list=[0], max_candidates=0)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.bound_contributions(dpmo.Rng(), [1], [0], [1.0], candidate_list=[0], max_candidates=1, bounds=(2.0, 1.0))
    with pytest.raises(dpmo.LengthMismatchError):
        dpmo.bound_contributions(dpmo.Rng(), [1, 2], [0], candidate_list=[0], max_candidates=1)
