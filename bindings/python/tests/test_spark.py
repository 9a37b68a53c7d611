"""dpmo.spark on a local[2] Spark: bounding as transformations (the 10⁴-event unit), the distributed exact
noisy-max against the centralised distribution (χ² over many repetitions), top-k, multi-objective."""

import numpy as np
import pytest

import dpmo
from conftest import ALPHA, chi2_pvalue
from test_statistics import pf_probabilities

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def events_frame(spark, units, items, values):
    import pandas as pd

    return spark.createDataFrame(pd.DataFrame({"user": units, "item": items, "amount": values}))


def test_bounding_on_spark_bounds_one_unit(spark):
    from dpmo import spark as dps

    rs = np.random.default_rng(4)
    n_ev = 4000
    units = rs.integers(0, 300, n_ev)
    items = [f"i{x}" for x in rs.integers(0, 12, n_ev)]
    values = rs.normal(3, 5, n_ev)
    cands = [f"i{x}" for x in range(12)] + ["never"]
    base = events_frame(spark, units, items, values)
    attacker = events_frame(spark, np.full(10000, 10**6), [f"i{x}" for x in rs.integers(0, 12, 10000)] + [],
                            rs.normal(0, 1e6, 10000))
    for L, C in [(2, 1), (3, 2)]:
        key = dpmo.StreamKey.for_simulation(L)
        kw = dict(unit="user", candidate="item", value="amount", candidate_list=cands, max_candidates=L,
                  max_per_candidate=C, bounds=(-1.0, 4.0), key=key)
        a = dps.bound_and_aggregate(base, **kw).frame.orderBy("candidate_index").toPandas()
        b = dps.bound_and_aggregate(base.unionByName(attacker), **kw).frame.orderBy("candidate_index").toPandas()
        assert len(a) == len(cands) and a["candidate_index"].tolist() == list(range(len(cands)))
        assert a["count"].iloc[-1] == 0  # a listed candidate without events has a row with 0
        dc = (b["count"] - a["count"]).to_numpy()
        # Other units are bounded in their own partitions from their own streams: only the attacker's moves.
        assert np.all(dc >= 0) and dc.max() <= C and 1 <= dc.sum() <= L * C
        agg = dps.bound_and_aggregate(base, **kw)
        ds = np.abs((b["sum_units"] - a["sum_units"]).to_numpy()) * agg.grid
        assert ds.max() <= C * 4.0
    # With L and C large nothing is dropped: the counts are the exact per-candidate counts.
    full = dps.bound_and_aggregate(base, unit="user", candidate="item", candidate_list=cands, max_candidates=100,
                                   max_per_candidate=10**6).frame.orderBy("candidate_index").toPandas()
    expected = [int(np.sum(np.array(items) == c)) for c in cands]
    assert full["count"].tolist() == expected


def test_distributed_noisy_max_has_the_centralised_distribution(spark):
    from dpmo import spark as dps

    scores = np.array([0.0, 1.0, 2.0, 3.0, 3.0, -1.0, 0.5])
    n = len(scores)
    import pandas as pd

    frame = spark.createDataFrame(pd.DataFrame({"candidate_index": np.arange(n), "score": scores})).repartition(3)
    reps = 7000  # power: the χ² noncentrality between EM and PF here is about 0.0127 per draw
    em = dpmo.exponential_probabilities(scores, sensitivity=1.0, epsilon=1.5)
    pf = pf_probabilities(scores, 1.0, 1.5)
    def draws(noise):
        # Two releases of reps/2 repetitions each (a release holds at most 4096).
        return np.concatenate([dps.select_scores(frame, total=n, sensitivity=1.0, epsilon=1.5, noise=noise,
                                                 repetitions=reps // 2)[:, 0] for _ in range(2)])

    obs = np.bincount(draws("gumbel"), minlength=n)
    assert chi2_pvalue(obs, em) > ALPHA and chi2_pvalue(obs, pf) < ALPHA
    obs = np.bincount(draws("exponential"), minlength=n)
    assert chi2_pvalue(obs, pf) > ALPHA and chi2_pvalue(obs, em) < ALPHA


def test_pipeline_top_k_multi_objective_and_budget(spark):
    from dpmo import spark as dps

    rs = np.random.default_rng(8)
    n_ev = 20000
    # Item i has popularity ∝ 1/(i+1): the top items are clear.
    items = rs.choice(30, size=n_ev, p=(1 / np.arange(1, 31)) / np.sum(1 / np.arange(1, 31)))
    frame = events_frame(spark, rs.integers(0, 5000, n_ev), [f"i{x}" for x in items], rs.uniform(0, 10, n_ev))
    cands = [f"i{x}" for x in range(30)]
    agg = dps.bound_and_aggregate(frame, unit="user", candidate="item", value="amount", candidate_list=cands,
                                  max_candidates=3, bounds=(0.0, 10.0))
    agg.frame.cache()
    budget = dpmo.Budget(4.0)
    top = dps.select(agg, score="count", epsilon=2.0, k=3, budget=budget)
    assert len(set(top)) == 3 and set(top) <= set(cands[:6])
    top = dps.select(agg, score="sum", epsilon=1.0, k=2, noise="exponential", budget=budget)
    assert len(set(top)) == 2 and set(top) <= set(cands[:6])
    assert budget.spent == 3.0
    multi = dps.select_multi(agg, epsilon=0.5, k=2, budget=budget)
    assert len(set(multi)) == 2
    agg_pick = dps.select_multi(agg, epsilon=0.5, mechanism="privagg", weights=[1.0, 0.1], budget=budget)
    assert len(agg_pick) == 1 and budget.spent == 4.0
    with pytest.raises(dpmo.BudgetExhaustedError):
        dps.select(agg, epsilon=0.1, budget=budget)
    with pytest.raises(dpmo.InvalidArgumentError):
        dps.select(agg, score="median", epsilon=0.1)
    with pytest.raises(dpmo.InvalidArgumentError):
        dps.bound_and_aggregate(frame, unit="user", candidate="item", value="amount", candidate_list=cands,
                                max_candidates=3)
