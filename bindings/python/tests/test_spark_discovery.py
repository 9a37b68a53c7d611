"""The unknown-domain pipeline on Spark (dpmo.spark.discover_partitions, dpmo.spark.select_top_k_from_events)
on a local[2] Spark: the law of the released set / top-k sequence equals the single-node reference's
(dpmo.discover_partitions, dpmo.select_top_k_from_events), χ² at α = 10⁻⁶ over thousands of repetitions run
inside one Spark job each (``_repetitions``: every repetition its own streams); a unit split over tasks (the
broken variant) is caught; charging, refusals, determinism."""

from collections import Counter

import numpy as np
import pytest

import dpmo
from conftest import ALPHA, _gammaincc
from test_spark import broken_executors, events_frame  # noqa: F401  (a fixture, used by name)

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

REPS = 3000


def homogeneity_pvalue(a: Counter, b: Counter) -> float:
    """p-value of Pearson's χ² test that two samples of outcomes come from one law (2 × K table); outcomes
    expected below 5 in either sample are pooled into one cell."""
    keys = sorted(set(a) | set(b), key=repr)
    na, nb = sum(a.values()), sum(b.values())
    n = na + nb
    cells, rare = [], [0, 0]
    for k in keys:
        ta = a.get(k, 0) + b.get(k, 0)
        if min(ta * na, ta * nb) / n < 5:
            rare[0] += a.get(k, 0)
            rare[1] += b.get(k, 0)
        else:
            cells.append((a.get(k, 0), b.get(k, 0)))
    if sum(rare):
        cells.append(tuple(rare))
    if len(cells) < 2:
        return 1.0
    stat = 0.0
    for ca, cb in cells:
        t = ca + cb
        ea, eb = t * na / n, t * nb / n
        stat += (ca - ea) ** 2 / ea + (cb - eb) ** 2 / eb
    return _gammaincc((len(cells) - 1) / 2.0, stat / 2.0)


# A small world: 9 units over items 1..4 (and −7, a negative id: it sorts last as a 64-bit pattern), some
# units with more items than L = 2, so the bounding's choices matter.
WORLD = {
    0: [1, 2, 3], 1: [1, 2], 2: [1, 3, 4, -7], 3: [1], 4: [2, 3], 5: [2, -7], 6: [1, 2, 3, 4], 7: [4], 8: [3, -7],
}


def world_events(world=WORLD, label=lambda i: i, repeat=2):
    units, items, values = [], [], []
    for u, its in world.items():
        for i in its:
            for r in range(repeat):  # several events per (unit, item): C matters for events and sums
                units.append(u)
                items.append(label(i))
                values.append(0.5 + 0.25 * ((u + r) % 4))
    return units, items, values


def spark_sets(spark, frame, reps, **kw):
    from dpmo import spark as dps

    out = []
    for seed in range(reps // 1000):
        res = dps.discover_partitions(frame, unit="user", item="item", key=dpmo.StreamKey.for_simulation(seed),
                                      allow_simulation=True, _repetitions=1000, **kw)
        out.extend(tuple(r) for r in res)
    return Counter(out)


def local_sets(units, items, reps, **kw):
    rng = dpmo.Rng.for_simulation(99)
    return Counter(tuple(dpmo.discover_partitions(rng, units, items, allow_simulation=True, **kw))
                   for _ in range(reps))


PARTITIONS = [
    ("truncated_geometric", 6.0, 0.2),
    ("laplace", 4.0, 0.2),
    ("gaussian", 4.0, 0.2),
    ("weighted_gaussian", 4.0, 0.2),
]


@pytest.mark.parametrize("mechanism,epsilon,delta", PARTITIONS)
def test_partition_selection_on_spark_has_the_single_node_law(spark, mechanism, epsilon, delta):
    units, items, _ = world_events()
    frame = events_frame(spark, units, items, [0.0] * len(units)).repartition(3)
    kw = dict(max_items=2, epsilon=epsilon, delta=delta, mechanism=mechanism)
    got = spark_sets(spark, frame, REPS, **kw)
    ref = local_sets(units, items, REPS, **kw)
    # The test has power: several sets each with a real share.
    assert sum(1 for v in ref.values() if v > 0.05 * REPS) >= 2, ref
    assert homogeneity_pvalue(got, ref) > ALPHA, (got, ref)


def test_a_bounding_window_per_unit_and_item_is_caught(spark, monkeypatch):
    """The broken variant: the bounding ranks each (unit, item) on its own (the window of a unit replaced by a
    window per (unit, item)), so every unit keeps all its items, each weighed 1/√1. The released sets then
    follow another law, and the χ² test says so. (The bounding is Spark SQL: how the events are partitioned
    over tasks no longer matters, Spark's windows see each unit whole whatever the partitioning.)"""
    from pyspark.sql.window import Window

    from dpmo import spark as dps

    units, items, _ = world_events()
    frame = events_frame(spark, units, items, [0.0] * len(units))
    kw = dict(max_items=1, epsilon=4.0, delta=0.2, mechanism="weighted_gaussian")
    ref = local_sets(units, items, REPS, **kw)
    monkeypatch.setattr(dps, "_unit_window", lambda order: Window.partitionBy("rep", "unit", "item").orderBy(*order)
                        if order else Window.partitionBy("rep", "unit", "item"))
    broken = spark_sets(spark, frame, REPS, **kw)
    assert homogeneity_pvalue(broken, ref) < ALPHA, (broken, ref)


def test_the_partitioning_of_the_events_does_not_change_the_law(spark, monkeypatch):
    """What the Python bounding needed (every event of a unit in one task) the SQL bounding does not: with the
    events partitioned by (unit, item), Spark shuffles them by unit for the windows, and the law stays."""
    from dpmo import spark as dps

    units, items, _ = world_events()
    frame = events_frame(spark, units, items, [0.0] * len(units))
    kw = dict(max_items=1, epsilon=4.0, delta=0.2, mechanism="weighted_gaussian")
    ref = local_sets(units, items, REPS, **kw)
    monkeypatch.setattr(dps, "_by_unit", lambda f, parts: f.repartition(parts, "unit", "item"))
    split = spark_sets(spark, frame, REPS, **kw)
    assert homogeneity_pvalue(split, ref) > ALPHA, (split, ref)


def spark_top_k(spark, frame, reps, **kw):
    from dpmo import spark as dps

    out = []
    for seed in range(reps // 1000):
        res = dps.select_top_k_from_events(frame, unit="user", item="item", key=dpmo.StreamKey.for_simulation(seed),
                                           rng=dpmo.Rng.for_simulation(seed), allow_simulation=True,
                                           _repetitions=1000, **kw)
        out.extend((tuple(r.items), r.stopped) for r in res)
    return Counter(out)


def local_top_k(units, items, values, reps, **kw):
    rng = dpmo.Rng.for_simulation(98)
    out = []
    for _ in range(reps):
        r = dpmo.select_top_k_from_events(rng, units, items, values, allow_simulation=True, **kw)
        out.append((tuple(r.items), r.stopped))
    return Counter(out)


TOP_K = [
    dict(k=2, k_bar=3, max_items=2, epsilon=6.0, delta=0.2, score="units"),
    dict(k=3, k_bar=3, max_items=2, max_per_item=2, epsilon=8.0, delta=0.2, score="events"),
    dict(k=2, k_bar=2, max_items=3, max_per_item=2, epsilon=12.0, delta=0.2, score="sum", bounds=(0.0, 1.0)),
]


@pytest.mark.parametrize("kw", TOP_K)
@pytest.mark.parametrize("labels", ["int", "str"])
def test_top_k_on_spark_has_the_single_node_law(spark, kw, labels):
    """Ties (several items with equal counts) are broken as the core breaks them: integers as 64-bit patterns
    (−7 after 4), strings by their bytes."""
    label = (lambda i: i) if labels == "int" else (lambda i: f"item{i}")
    units, items, values = world_events(label=label)
    frame = events_frame(spark, units, items, values).repartition(3)
    value = "amount" if kw["score"] == "sum" else None
    got = spark_top_k(spark, frame, REPS, value=value, **kw)
    ref = local_top_k(units, items, values if value else None, REPS, **kw)
    assert sum(1 for v in ref.values() if v > 0.05 * REPS) >= 2, ref
    assert homogeneity_pvalue(got, ref) > ALPHA, (got, ref)


def test_the_tie_order_is_the_cores(spark):
    """Items 3 and −7 tie for the k̄-th place; the core orders ids as 64-bit patterns, so 3 is the candidate
    and −7 (2⁶⁴ − 7) is not. The broken variant, integers ordered as signed numbers, would make −7 the
    candidate: then 3 never comes out and −7 does, and this test fails."""
    world = {u: [1] for u in range(5)}
    world.update({5 + u: [3] for u in range(3)})
    world.update({8 + u: [-7] for u in range(3)})
    units, items, values = world_events(world)
    frame = events_frame(spark, units, items, values).repartition(3)
    kw = dict(k=1, k_bar=2, max_items=1, epsilon=1.0, delta=0.9, score="units")
    got = spark_top_k(spark, frame, 1000, **kw)
    assert not any(-7 in seq for seq, _ in got), got
    assert sum(n for (seq, _), n in got.items() if seq == (3,)) >= 20, got  # P = e³/(2e⁵ + e³) ≈ 0.063


def test_charges_what_the_single_node_functions_charge(spark):
    from dpmo import spark as dps

    units, items, values = world_events()
    frame = events_frame(spark, units, items, values)
    budget = dpmo.Budget(10.0, delta=1e-3)
    found = dps.discover_partitions(frame, unit="user", item="item", max_items=2, epsilon=1.0, delta=1e-4,
                                    budget=budget)
    assert set(found) <= {1, 2, 3, 4, -7}
    assert (budget.spent, budget.delta_spent) == (1.0, 1e-4)
    # No event at all: ⊥ wins the first round, the run costs ε/k (pay what you get), δ.
    empty = frame.where("user < 0")
    r = dps.select_top_k_from_events(empty, unit="user", item="item", k=4, max_items=2, epsilon=2.0, delta=1e-4,
                                     budget=budget)
    assert r.items == [] and r.stopped and r.epsilon == 0.5 and r.delta == 1e-4
    assert budget.spent == 1.5 and budget.delta_spent == 2e-4
    # A clear winner: k items come out, the whole (ε, δ) is spent.
    big = events_frame(spark, list(range(3000)), ["a"] * 2000 + ["b"] * 1000, [1.0] * 3000)
    r = dps.select_top_k_from_events(big, unit="user", item="item", k=1, max_items=1, epsilon=1.0, delta=1e-4,
                                     budget=budget)
    assert r.items == ["a"] and not r.stopped and (r.epsilon, r.delta) == (1.0, 1e-4)
    # The same three charges made directly: the same ledger (spent and δ spent are rounded upper bounds).
    ref = dpmo.Budget(10.0, delta=1e-3)
    for e in (1.0, 0.5, 1.0):
        ref.charge(e, 1e-4)
    assert (budget.spent, budget.delta_spent) == (ref.spent, ref.delta_spent) and budget.spent == 2.5


def test_refusals_charge_nothing(spark, monkeypatch):
    from dpmo import spark as dps

    units, items, values = world_events()
    frame = events_frame(spark, units, items, values)
    budget = dpmo.Budget(10.0, delta=1e-3)
    part = dict(unit="user", item="item", max_items=2, epsilon=1.0, delta=1e-4, budget=budget)
    topk = dict(unit="user", item="item", k=2, max_items=2, epsilon=1.0, delta=1e-4, budget=budget)
    with pytest.raises(dpmo.UnsupportedError, match="DP-SIPS"):
        dps.discover_partitions(frame, mechanism="sips", **part)
    for bad, err in [(dict(mechanism="median"), dpmo.InvalidArgumentError), (dict(epsilon=0.0), dpmo.InvalidEpsilonError),
                     (dict(delta=1.0), dpmo.InvalidArgumentError), (dict(max_items=0), dpmo.InvalidArgumentError)]:
        with pytest.raises(err):
            dps.discover_partitions(frame, **{**part, **bad})
    for bad, err in [(dict(k=3, k_bar=2), dpmo.InvalidArgumentError), (dict(score="sum"), dpmo.InvalidArgumentError),
                     (dict(value="amount"), dpmo.InvalidArgumentError), (dict(score="median"), dpmo.InvalidArgumentError),
                     (dict(epsilon=-1.0), dpmo.InvalidEpsilonError), (dict(max_per_item=0), dpmo.InvalidArgumentError)]:
        with pytest.raises(err):
            dps.select_top_k_from_events(frame, **{**topk, **bad})
    # Simulation keys and generators: refused without the opt-in, and by a budget that does not allow them.
    with pytest.raises(dpmo.InvalidGeneratorError, match="allow_simulation"):
        dps.discover_partitions(frame, key=dpmo.StreamKey.for_simulation(1), **part)
    with pytest.raises(dpmo.InvalidGeneratorError):
        dps.discover_partitions(frame, key=dpmo.StreamKey.for_simulation(1), allow_simulation=True, **part)
    with pytest.raises(dpmo.InvalidGeneratorError):
        dps.select_top_k_from_events(frame, rng=dpmo.Rng.for_simulation(1), allow_simulation=True, **topk)
    with pytest.raises(dpmo.InvalidArgumentError, match="repetitions"):
        dps.discover_partitions(frame, _repetitions=2, **part)
    # Item columns whose equality Spark and the bounding do not share.
    from pyspark.sql import functions as F

    for cast in ("double", "string collate UTF8_LCASE"):
        f = frame.withColumn("item", F.col("item").cast(cast))
        with pytest.raises(dpmo.InvalidArgumentError, match="item column"):
            dps.discover_partitions(f, **part)
        with pytest.raises(dpmo.InvalidArgumentError, match="item column"):
            dps.select_top_k_from_events(f, **topk)
    assert (budget.spent, budget.delta_spent) == (0.0, 0.0)
    # A pure-ε budget cannot pay a δ: refused, nothing charged.
    pure = dpmo.Budget(1.0)
    with pytest.raises(dpmo.BudgetExhaustedError):
        dps.discover_partitions(frame, **{**part, "budget": pure})
    with pytest.raises(dpmo.BudgetExhaustedError):
        dps.select_top_k_from_events(frame, **{**topk, "budget": pure})
    assert pure.spent == 0.0


def test_executors_that_cannot_run_dpmo_charge_nothing(spark, broken_executors):  # noqa: F811
    from dpmo import spark as dps

    frame = events_frame(spark, [1, 2, 3], ["x", "y", "x"], [1.0, 2.0, 3.0])
    budget = dpmo.Budget(1.0, delta=1e-3)
    with pytest.raises(dpmo.UnsupportedError, match="cannot run dpmo") as info:
        dps.discover_partitions(frame, unit="user", item="item", max_items=1, epsilon=0.5, delta=1e-4, budget=budget)
    assert not info.value.charged
    assert (budget.spent, budget.delta_spent) == (0.0, 0.0)
    # The top-k runs no Python on the executors (bounding and scores in Spark SQL, the peeling on the
    # driver): executors without dpmo run it, and it is charged as usual.
    r = dps.select_top_k_from_events(frame, unit="user", item="item", k=1, max_items=1, epsilon=0.5, delta=1e-4,
                                     budget=budget)
    assert set(r.items) <= {"x", "y"} and budget.delta_spent == 1e-4


def test_the_choices_depend_on_the_multiset_of_events_only(spark):
    """A recomputed task must make the same choices whatever order the shuffle delivers its events in (else a
    unit bounded twice, differently, could count in 2L items): the same key on the same events in another
    order and another input partitioning releases the same items."""
    from dpmo import spark as dps

    units, items, values = world_events()
    a = events_frame(spark, units, items, values)
    b = events_frame(spark, units[::-1], items[::-1], values[::-1]).repartition(5)
    for mech in ("laplace", "weighted_gaussian"):
        kw = dict(unit="user", item="item", max_items=2, epsilon=2.0, delta=0.2, mechanism=mech,
                  allow_simulation=True, _repetitions=50)
        for seed in range(2):
            ra = dps.discover_partitions(a, key=dpmo.StreamKey.for_simulation(seed), **kw)
            rb = dps.discover_partitions(b, key=dpmo.StreamKey.for_simulation(seed), **kw)
            assert ra == rb
    kw = dict(unit="user", item="item", value="amount", bounds=(0.0, 1.0), score="sum", k=2, max_items=2,
              max_per_item=1, epsilon=4.0, delta=0.2, allow_simulation=True, _repetitions=50)
    ra = dps.select_top_k_from_events(a, key=dpmo.StreamKey.for_simulation(3), rng=dpmo.Rng.for_simulation(3), **kw)
    rb = dps.select_top_k_from_events(b, key=dpmo.StreamKey.for_simulation(3), rng=dpmo.Rng.for_simulation(3), **kw)
    assert ra == rb


# ---- The SQL bounding rule itself (dpmo.spark._bound_frame): what privacy needs (a unit keeps at most L items
# and C events per item, as a function of its own events and the salt) and what the law needs (uniform
# subsets), each with a broken variant caught.


def bound_rows(spark, frame, seed, l, c, sums=False, reps=1, weight_grid=0):
    from pyspark.sql import functions as F

    from dpmo import spark as dps

    ev = frame.select(F.col("user").alias("unit"), F.col("item").alias("item"), F.col("amount").alias("value"))
    if not sums:
        ev = ev.drop("value")
    kept = dps._bound_frame(dps._by_unit(ev, 3), dpmo.StreamKey.for_simulation(seed), l, c, 0.0, 1.0, sums,
                            weight_grid, reps)
    return sorted(tuple(r) for r in kept.collect())


def heavy_world():
    """Units 0..5 with 1..6 items (item j of unit u has j + 1 events, values 0.25·(event index mod 4))."""
    units, items, values = [], [], []
    for u in range(6):
        for j in range(u + 1):
            for e in range(j + 1):
                units.append(u)
                items.append(10 * u + j)
                values.append(0.25 * (e % 4))
    return units, items, values


@pytest.mark.parametrize("l,c", [(1, 1), (2, 2), (3, 1)])
def test_the_sql_bounding_keeps_at_most_l_items_and_c_events_per_unit(spark, l, c):
    units, items, values = heavy_world()
    frame = events_frame(spark, units, items, values)
    rows = bound_rows(spark, frame, 5, l, c, sums=True)
    per_unit = Counter(r[1] for r in rows)
    for u in range(6):
        assert per_unit[u] == min(u + 1, l)  # exactly min(|items|, L) items kept
    for rep, u, item, events, tag, s, w in rows:
        j = item - 10 * u
        assert events == min(j + 1, c) and tag == 0 and w == 0  # |S_u| and weights: weighted mechanisms only
        assert 0 <= s <= events * (1 << 20)  # value 0.75 at most, in grid units of 2**-20
    # The broken variant: a window per (unit, item) keeps every item of every unit.
    from pyspark.sql.window import Window

    from dpmo import spark as dps

    saved = dps._unit_window
    try:
        dps._unit_window = lambda order: (Window.partitionBy("rep", "unit", "item").orderBy(*order) if order
                                          else Window.partitionBy("rep", "unit", "item"))
        broken = Counter(r[1] for r in bound_rows(spark, frame, 5, l, c, sums=True))
    finally:
        dps._unit_window = saved
    assert any(broken[u] > l for u in range(6)), broken


def test_the_sql_bounding_depends_on_the_events_and_the_salt_only(spark):
    """Same key, the events in another order and another partitioning: the same kept rows (a retried task, a
    recomputed partition or another input split cannot make a unit keep other rows); another key: other
    rows (the salt matters)."""
    units, items, values = heavy_world()
    a = events_frame(spark, units, items, values)
    b = events_frame(spark, units[::-1], items[::-1], values[::-1]).repartition(5)
    for sums in (False, True):
        ra = bound_rows(spark, a, 7, 2, 1, sums=sums, reps=20)
        rb = bound_rows(spark, b, 7, 2, 1, sums=sums, reps=20)
        assert ra == rb
        assert bound_rows(spark, a, 8, 2, 1, sums=sums, reps=20) != ra


def test_the_sql_bounding_keeps_uniform_subsets(spark, monkeypatch):
    """The law the core's bound has: a unit with 4 items keeps each of the 6 pairs with probability 1/6 (L = 2),
    and a (unit, item) with events of values 0, 0.25, 0.5, 0.75 keeps each pair of events with probability
    1/6 (C = 2: the sum in grid units tells the pair apart), χ² over 3000 salts. The broken variant, items
    ranked by id instead of the keyed hash, always keeps the same pair and is caught."""
    from pyspark.sql.window import Window

    from conftest import chi2_pvalue
    from dpmo import spark as dps

    units, items, values = [0] * 4, [1, 2, 3, 4], [0.0] * 4
    frame = events_frame(spark, units, items, values)
    pairs = [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]

    def subsets(f):
        out = Counter()
        for seed in range(3):
            by_rep = {}
            for rep, _, item, *_ in bound_rows(spark, f, seed, 2, 1, reps=1000):
                by_rep.setdefault(rep, []).append(item)
            out.update(tuple(sorted(v)) for v in by_rep.values())
        return [out[p] for p in pairs]

    assert chi2_pvalue(subsets(frame), [1 / 6] * 6) > ALPHA
    ev_frame = events_frame(spark, [0] * 4, [1] * 4, [0.0, 0.25, 0.5, 0.75])
    sums = Counter()
    for seed in range(3):
        sums.update(r[5] for r in bound_rows(spark, ev_frame, seed, 1, 2, sums=True, reps=1000))
    from dpmo import _native

    g = round(1 / _native._value_grid(0.0, 1.0))  # grid units per 1.0 for the clamp [0, 1] (2**20)
    # Pair sums in quarters: 0+1, 0+2, 0+3, 1+2, 1+3, 2+3 → 1, 2, 3 (twice), 4, 5.
    by_quarters = Counter()
    for s, n in sums.items():
        by_quarters[s * 4 // g] += n
    assert chi2_pvalue([by_quarters[q] for q in (1, 2, 3, 4, 5)], [1 / 6, 1 / 6, 2 / 6, 1 / 6, 1 / 6]) > ALPHA
    monkeypatch.setattr(dps, "_unit_window", lambda order: Window.partitionBy("rep", "unit").orderBy("item")
                        if order else Window.partitionBy("rep", "unit"))
    assert chi2_pvalue(subsets(frame), [1 / 6] * 6) < ALPHA


def test_the_sql_weights_are_the_cores(spark):
    """The weight w_s of a unit keeping s items (weighted Gaussian) computed on the driver equals the core's
    (read from dpmo's own bounding of units with 1..L items)."""
    from dpmo import _native
    from dpmo import spark as dps

    l = 7
    grid = int(_native._partition_plan("weighted_gaussian", 1, 1.0, 1e-6, l))
    assert grid > 0
    units = [u for u in range(l) for _ in range(u + 1)]
    items = [j for u in range(l) for j in range(u + 1)]
    _, _, tags, _, weights = _native._bound_contributions(dpmo.Rng.for_simulation(1), np.array(units),
                                                          np.array(items), None, l, 1, 0.0, 0.0, grid)
    core = {int(t): int(w) for t, w in zip(tags, weights)}
    assert dps._weights(grid, l) == [core[s] for s in range(1, l + 1)]
    frame = events_frame(spark, units, items, [0.0] * len(units))
    rows = bound_rows(spark, frame, 1, l, 1, weight_grid=grid)
    assert {(r[4], r[6]) for r in rows} == {(s, core[s]) for s in range(1, l + 1)}
