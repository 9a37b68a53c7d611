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
                  max_per_candidate=C, bounds=(-1.0, 4.0), key=key, allow_simulation=True)
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


@pytest.mark.parametrize("driver_limit", [0, 1 << 20], ids=["on-executors", "on-driver"])
def test_distributed_noisy_max_has_the_centralised_distribution(spark, driver_limit):
    """Both paths of select_scores: the scores kept on the executors (driver_limit=0) and collected to the
    driver (the default for few candidates) have the law of the exponential mechanism / permute-and-flip."""
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
                                                 repetitions=reps // 2, driver_limit=driver_limit)[:, 0]
                               for _ in range(2)])

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


SPELLINGS = ["ann", "Ann", "ANN", "aNn", "anN", "AnN", "ANn", "aNN", "ann", "ANN"]  # 8 spellings, 10 events


def collated(spark, collation):
    """One person, 'ann', with 10 events on candidate x under 8 case variants of the name."""
    from pyspark.sql import functions as F

    frame = events_frame(spark, SPELLINGS, ["x"] * 10, [1.0] * 10)
    return frame.withColumn("user", F.col("user").cast(f"string collate {collation}"))


@pytest.mark.parametrize("collation", ["UTF8_LCASE", "UNICODE_CI", "UTF8_LCASE_RTRIM", "UNICODE_CI_AI", "UNICODE"])
def test_a_unit_column_with_a_non_binary_collation_is_refused(spark, collation):
    """The attack: with a case-insensitive collation Spark sees one unit, and the bounding (exact bytes) saw
    8, so one person counted 8 times with C = 1. Every collation but UTF8_BINARY is refused."""
    from dpmo import spark as dps

    events = collated(spark, collation)
    assert events.schema["user"].dataType.collation == collation
    with pytest.raises(dpmo.InvalidArgumentError, match=f"collation {collation}") as info:
        dps.bound_and_aggregate(events, unit="user", candidate="item", candidate_list=["x"], max_candidates=1)
    assert "lower(" in info.value.detail


def test_without_the_collation_check_one_case_insensitive_unit_counts_eight_times(spark, monkeypatch):
    """The broken variant the check above prevents, measured: Spark groups the 10 events as 1 unit, the
    bounding (without the check) keeps one event per spelling; lower() with the binary collation is the fix."""
    from pyspark.sql import functions as F

    from dpmo import spark as dps

    events = collated(spark, "UTF8_LCASE")
    assert events.groupBy("user").count().count() == 1  # one unit to Spark
    kw = dict(unit="user", candidate="item", candidate_list=["x"], max_candidates=1)
    monkeypatch.setattr(dps, "check_unit_type", lambda data_type, name: None)
    broken = dps.bound_and_aggregate(events, **kw).frame.toPandas()
    assert broken["count"].tolist() == [8]  # C = 1, yet one person moved the count by 8
    monkeypatch.undo()
    fixed = events.withColumn("user", F.lower(F.col("user")).cast("string collate UTF8_BINARY"))
    assert dps.bound_and_aggregate(fixed, **kw).frame.toPandas()["count"].tolist() == [1]
    plain = events.withColumn("user", F.col("user").cast("string"))  # binary: 8 distinct units, as Spark says
    assert plain.groupBy("user").count().count() == 8
    assert dps.bound_and_aggregate(plain, **kw).frame.toPandas()["count"].tolist() == [8]


def test_unit_types_whose_equality_is_not_exact_are_refused_and_nulls_are_one_unit(spark):
    from pyspark.sql import functions as F

    from dpmo import spark as dps

    base = events_frame(spark, [1, 2, 3, 4], ["x"] * 4, [1.0] * 4)
    kw = dict(unit="user", candidate="item", candidate_list=["x"], max_candidates=1)
    for t in ("double", "float", "decimal(10,2)", "date", "array<long>"):
        if t == "date":
            frame = base.withColumn("user", F.to_date(F.lit("2024-01-01")))
        elif t == "array<long>":
            frame = base.withColumn("user", F.array(F.col("user")))
        else:
            frame = base.withColumn("user", F.col("user").cast(t))
        with pytest.raises(dpmo.InvalidArgumentError, match="cast the column"):
            dps.bound_and_aggregate(frame, **kw)
    for t in ("int", "short", "binary", "string"):
        frame = base.withColumn("user", F.col("user").cast("string" if t == "binary" else t).cast(t))
        assert dps.bound_and_aggregate(frame, **kw).frame.toPandas()["count"].tolist() == [4]
    # Large ids with nulls (Arrow hands them over as float64 when nulls are present): exact, nulls one unit.
    import pandas as pd

    ids = pd.array([2**53, 2**53 + 1, None, None], dtype="Int64")
    frame = spark.createDataFrame(pd.DataFrame({"user": ids, "item": ["x"] * 4}))
    assert frame.groupBy("user").count().count() == 3
    assert dps.bound_and_aggregate(frame, **kw).frame.toPandas()["count"].tolist() == [3]
    # The codes taken through numpy (as before) merge the two ids into one float: 2 units, not Spark's 3.
    import pyarrow as pa

    from dpmo.bounding import unit_codes

    column = pa.chunked_array([pa.array([2**53, 2**53 + 1, None, None], pa.int64())])
    assert len(set(dps.arrow_unit_codes(column).tolist())) == 3
    assert len(set(unit_codes(column.to_numpy(zero_copy_only=False)).tolist())) == 2


def test_simulation_keys_need_an_explicit_opt_in_for_budgeted_releases(spark):
    from dpmo import spark as dps

    import pandas as pd

    events = events_frame(spark, [1, 2, 3], ["x", "y", "x"], [1.0, 2.0, 3.0])
    kw = dict(unit="user", candidate="item", candidate_list=["x", "y"], max_candidates=1)
    with pytest.raises(dpmo.InvalidGeneratorError, match="allow_simulation"):
        dps.bound_and_aggregate(events, key=dpmo.StreamKey.for_simulation(1), **kw)
    agg = dps.bound_and_aggregate(events, key=dpmo.StreamKey.for_simulation(1), allow_simulation=True, **kw)
    assert agg.reproducible and not dps.bound_and_aggregate(events, **kw).reproducible
    budget = dpmo.Budget(1.0)
    with pytest.raises(dpmo.InvalidGeneratorError, match="allow_simulation"):
        dps.select(agg, epsilon=0.5, budget=budget)
    with pytest.raises(dpmo.InvalidGeneratorError):
        dps.select(dps.bound_and_aggregate(events, **kw), epsilon=0.5, budget=budget,
                   key=dpmo.StreamKey.for_simulation(2))
    with pytest.raises(dpmo.InvalidGeneratorError):
        dps.select(dps.bound_and_aggregate(events, **kw), epsilon=0.5, budget=budget,
                   rng=dpmo.Rng.for_simulation(2))
    frame = spark.createDataFrame(pd.DataFrame({"candidate_index": [0, 1], "score": [1.0, 2.0]}))
    with pytest.raises(dpmo.InvalidGeneratorError):
        dps.select_scores(frame, total=2, sensitivity=1.0, epsilon=0.5, budget=budget,
                          key=dpmo.StreamKey.for_simulation(3))
    with pytest.raises(dpmo.InvalidGeneratorError):
        dps.select_multi(dps.bound_and_aggregate(events, value="amount", bounds=(0.0, 3.0),
                                                 key=dpmo.StreamKey.for_simulation(1), allow_simulation=True, **kw),
                         epsilon=0.5, budget=budget)
    assert budget.spent == 0.0
    sim = dpmo.Budget(1.0, allow_simulation=True)
    assert dps.select(agg, epsilon=0.5, budget=sim, key=dpmo.StreamKey.for_simulation(2),
                      rng=dpmo.Rng.for_simulation(2))[0] in ("x", "y")
    assert sim.spent == 0.5
    # Without a budget a reproducible key is a simulation by definition (nothing is charged).
    assert len(dps.select(agg, epsilon=0.5, key=dpmo.StreamKey.for_simulation(2))) == 1


@pytest.fixture()
def broken_executors(spark, tmp_path):
    """The executors' Python finds a dpmo that fails to import (a shadowing package on their PYTHONPATH): a
    cluster whose workers lack the wheel."""
    shadow = tmp_path / "shadow" / "dpmo"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no dpmo on this executor')\n")
    env = spark.sparkContext.environment
    saved = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(shadow.parent)
    yield
    if saved is None:
        del env["PYTHONPATH"]
    else:
        env["PYTHONPATH"] = saved


def test_a_release_whose_executors_cannot_import_dpmo_charges_nothing(spark, broken_executors):
    import pandas as pd

    from dpmo import distributed as dd
    from dpmo import spark as dps

    frame = spark.createDataFrame(pd.DataFrame({"candidate_index": [0, 1, 2], "score": [1.0, 2.0, 0.0]}))
    budget = dpmo.Budget(1.0)
    with pytest.raises(dpmo.UnsupportedError, match="no dpmo on this executor") as info:
        dps.check_executors(spark)
    assert not info.value.charged
    # Both paths check first: on the executors (driver_limit=0) and on the driver (the frame itself may need
    # dpmo on the executors, as bound_and_aggregate's does).
    for limit in (0, 1 << 20):
        with pytest.raises(dpmo.UnsupportedError, match="cannot run dpmo"):
            dps.select_scores(frame, total=3, sensitivity=1.0, epsilon=0.5, budget=budget, driver_limit=limit)
    assert budget.spent == 0.0
    # The broken variant, without the check: the release charged, then failed on the executors.
    packed = frame.mapInArrow(dps._pack, "part int, cands binary, scores binary")
    with pytest.raises(Exception, match="no dpmo on this executor"):
        dd.select_partitioned(dpmo.Rng(), dps._spark_map(packed), 3, sensitivity=1.0, epsilon=0.5, budget=budget)
    assert budget.spent == 0.5


@pytest.mark.parametrize("driver_limit", [0, 1 << 20], ids=["on-executors", "on-driver"])
def test_a_frame_that_does_not_hold_the_candidates_keeps_its_charge(spark, driver_limit):
    """The attack: the analyst filters the scores frame on a private condition and asks for n candidates;
    a refusal before the charge would answer "did the condition drop a row?" for free. The frame is read
    after the charge on both paths, so the LENGTH_MISMATCH costs ε."""
    import pandas as pd

    from dpmo import spark as dps

    frame = spark.createDataFrame(pd.DataFrame({"candidate_index": [0, 1, 2], "score": [1.0, 2.0, 0.0]}))
    probe = frame.filter("score < 1.5")  # a private condition dropped candidate 1
    budget = dpmo.Budget(1.0)
    with pytest.raises(dpmo.LengthMismatchError):
        dps.select_scores(probe, total=3, sensitivity=1.0, epsilon=0.5, budget=budget, driver_limit=driver_limit)
    assert budget.spent == 0.5
    assert dps.select_scores(frame, total=3, sensitivity=1.0, epsilon=0.5, budget=budget,
                             driver_limit=driver_limit)[0] in (0, 1, 2)
    assert budget.spent == 1.0


def test_multi_objective_releases_check_the_executors_first(spark, broken_executors):
    from dpmo import spark as dps

    events = events_frame(spark, [1, 2, 3], ["x", "y", "x"], [1.0, 2.0, 3.0])
    agg = dps.bound_and_aggregate(events, unit="user", candidate="item", value="amount", bounds=(0.0, 3.0),
                                  candidate_list=["x", "y"], max_candidates=1)
    budget = dpmo.Budget(1.0)
    # select: the check runs first on both paths (on the driver, the default here, and on the executors).
    for release in (dps.select_multi, dps.select, lambda a, **kw: dps.select(a, driver_limit=0, **kw)):
        with pytest.raises(dpmo.UnsupportedError, match="cannot run dpmo") as info:
            release(agg, epsilon=0.5, budget=budget)
        assert not info.value.charged
    assert budget.spent == 0.0


def test_the_executor_check_runs_one_task_on_a_local_master(spark):
    """A local master is one executor whose Python workers all come from one daemon with one environment: one
    task checks what any would (the broken-executor tests above run on it and still fail the check). Any other
    master, and a master that cannot be read, gets the default parallelism."""
    from dpmo import spark as dps

    class Conf:
        def __init__(self, master):
            self.master = master

        def get(self, key, default=None):
            if self.master is KeyError:
                raise RuntimeError("not shown")
            return self.master if key == "spark.master" else default

    class Session:
        def __init__(self, master):
            self.conf = Conf(master)

    for master, local in [("local", True), ("local[2]", True), ("local[*]", True), ("local[4, 3]", True),
                          ("local-cluster[2, 1, 1024]", False), ("spark://127.0.0.1:7077", False),
                          ("yarn", False), ("k8s://https://x", False), (None, False), (KeyError, False),
                          ("locally", False), ("local[2]x", False)]:
        assert dps.local_master(Session(master)) is local, master
    assert dps.local_master(spark)
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    for tasks, want in [(None, 1), (3, 3)]:
        group = f"dpmo-check-{tasks}"
        sc.setJobGroup(group, "executor check")
        try:
            dps.check_executors(spark, tasks=tasks)
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)
            sc.setLocalProperty("spark.job.description", None)
        jobs = tracker.getJobIdsForGroup(group)
        stages = [st for j in jobs for st in tracker.getJobInfo(j).stageIds]
        assert sum(tracker.getStageInfo(st).numTasks for st in stages) == want


def test_the_executor_check_passes_on_a_working_cluster(spark):
    from dpmo import spark as dps

    dps.check_executors(spark)
    dps.check_executors(spark, tasks=3)
