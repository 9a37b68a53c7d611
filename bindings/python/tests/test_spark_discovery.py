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


def test_a_unit_split_over_tasks_is_caught(spark, monkeypatch):
    """The broken variant: events partitioned by (unit, item), so a unit's items spread over tasks and each
    task bounds (and weighs, 1/√|S_u| with its own |S_u|) its share of the unit: a unit contributes up to L
    items per task. The released sets then follow another law, and the χ² test says so."""
    from dpmo import spark as dps

    units, items, _ = world_events()
    frame = events_frame(spark, units, items, [0.0] * len(units))
    kw = dict(max_items=1, epsilon=4.0, delta=0.2, mechanism="weighted_gaussian")
    ref = local_sets(units, items, REPS, **kw)
    monkeypatch.setattr(dps, "_by_unit", lambda f, parts: f.repartition(parts, "unit", "item"))
    broken = spark_sets(spark, frame, REPS, **kw)
    assert homogeneity_pvalue(broken, ref) < ALPHA, (broken, ref)


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
    with pytest.raises(dpmo.UnsupportedError, match="cannot run dpmo"):
        dps.select_top_k_from_events(frame, unit="user", item="item", k=1, max_items=1, epsilon=0.5, delta=1e-4,
                                     budget=budget)
    assert (budget.spent, budget.delta_spent) == (0.0, 0.0)


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


# ---- The bounded data itself: each bounding task sums its kept contributions per item (one row per item and
# task), so the per-item statistics that the releases use are checked here against their exact law.

# unit -> item -> the values of its events (binary fractions: exact on the grid of bounds (-1, 1), g = 2⁻²⁰).
BOUND_WORLD = {
    0: {1: [0.25, 0.5, 1.0], 2: [0.5], 3: [-1.0, 0.5]},
    1: {1: [0.75], 4: [0.25, 0.25]},
    2: {2: [1.0, -0.5], 3: [0.5], 4: [0.75], 5: [0.125]},
    3: {5: [0.5, 0.25, 0.25]},
    4: {1: [0.5], 3: [0.25], 5: [1.0]},
}
BOUND_L, BOUND_C, GRID = 2, 2, 1 << 20


def exact_statistics_law(world, l, c, statistic, weight_grid=0):
    """The exact law of the per-item statistic vector (items ascending) of the core's bounding: per unit
    independently, a uniform min(L, d)-subset of its d items and, per kept item, a uniform C-subset of its
    events (when it has more), summed: 1, the kept events, max(0, kept sum) in grid units, or ⌊G/√|S_u|⌋."""
    from fractions import Fraction
    from itertools import combinations
    from math import comb, isqrt

    items = sorted({i for its in world.values() for i in its})
    law = {tuple([0] * len(items)): Fraction(1)}
    for its in world.values():
        names = sorted(its)
        s = min(l, len(names))
        outcomes = {}  # this unit's contribution vector -> probability
        for kept in combinations(names, s):
            partial = {(): Fraction(1, comb(len(names), s))}  # over the kept items, in order
            for i in kept:
                evs = its[i]
                t = min(c, len(evs))
                nxt = {}
                for chosen in combinations(range(len(evs)), t):
                    if statistic == "units":
                        v = 1
                    elif statistic == "events":
                        v = t
                    elif statistic == "sum":
                        v = max(0, sum(int(evs[e] * GRID) for e in chosen))
                    else:
                        v = isqrt(weight_grid * weight_grid // s)
                    for vec, p in partial.items():
                        key = vec + ((i, v),)
                        nxt[key] = nxt.get(key, 0) + p * Fraction(1, comb(len(evs), t))
                partial = nxt
            for vec, p in partial.items():
                full = [0] * len(items)
                for i, v in vec:
                    full[items.index(i)] = v
                outcomes[tuple(full)] = outcomes.get(tuple(full), 0) + p
        new = {}
        for a, pa in law.items():
            for b, pb in outcomes.items():
                key = tuple(x + y for x, y in zip(a, b))
                new[key] = new.get(key, 0) + pa * pb
        law = new
    assert sum(law.values()) == 1
    return items, law


def bound_world_frame(spark, world=BOUND_WORLD, slots=5):
    """The events of ``world`` in ``slots`` input partitions, each unit's events dealt round-robin over them
    (so every unit with several events is spread over several partitions: asserted)."""
    from pyspark.sql import functions as F

    units, items, values = [], [], []
    for u, its in world.items():
        for i, vals in its.items():
            for v in vals:
                units.append(u)
                items.append(i)
                values.append(v)
    rows = [(u, i, v, n % slots) for n, (u, i, v) in enumerate(zip(units, items, values))]
    frame = spark.createDataFrame(rows, "user long, item long, amount double, slot int")
    frame = frame.repartitionByRange(slots, "slot").drop("slot").cache()
    spread = (frame.select("user", F.spark_partition_id().alias("p")).distinct().groupBy("user").count()
              .collect())
    for r in spread:
        n_events = sum(len(v) for v in world[r["user"]].values())
        assert r["count"] >= min(2, n_events), (r, "a unit's events must be spread over the input partitions")
    return frame


def spark_statistics(frame, statistic, reps, weight_grid=0):
    """The per-item statistics computed on Spark (``dps._item_statistics``, as the releases compute them),
    ``reps`` repetitions of fresh bounding choices in three bounding tasks: a Counter of vectors."""
    from dpmo import spark as dps

    items = sorted({i for its in BOUND_WORLD.values() for i in its})
    out = Counter()
    for seed in range(reps // 1000):
        rows = dps._item_statistics(frame, "user", "item", "amount" if statistic == "sum" else None, 3,
                                    dpmo.StreamKey.for_simulation(100 + seed), BOUND_L, BOUND_C, (-1.0, 1.0),
                                    statistic, weight_grid, 1000).collect()
        vecs = [[0] * len(items) for _ in range(1000)]
        for r in rows:
            vecs[r["rep"]][items.index(r["item"])] = int(r["stat"])
        out.update(tuple(v) for v in vecs)
    return out


def law_pvalue(observed: Counter, law: dict) -> float:
    from conftest import chi2_pvalue

    if set(observed) - set(law):
        return 0.0  # an impossible outcome
    keys = sorted(law)
    return chi2_pvalue([observed.get(k, 0) for k in keys], [float(law[k]) for k in keys])


@pytest.mark.parametrize("statistic", ["units", "events", "sum", "weight"])
def test_the_bounded_statistics_have_the_cores_law(spark, statistic):
    """Each bounding task sums its kept contributions per item before anything leaves it; the per-item
    statistics summed over the tasks have exactly the law of the core's bounding of the whole dataset (each
    unit: a uniform subset of min(L, d) items, a uniform C-subset of each kept item's events), with every
    unit's events spread over five input partitions and the units over three bounding tasks. χ² against the
    exact law, enumerated."""
    grid = int(dpmo._native._partition_plan("weighted_gaussian", 1, 1.0, 1e-3, BOUND_L)) if statistic == "weight" else 0
    frame = bound_world_frame(spark)
    _, law = exact_statistics_law(BOUND_WORLD, BOUND_L, BOUND_C, statistic, grid)
    assert sum(1 for p in law.values() if p >= 0.01) >= 5 and max(law.values()) < 0.5, law  # the test has power
    got = spark_statistics(frame, statistic, REPS, grid)
    assert law_pvalue(got, law) > ALPHA, (got, law)
    frame.unpersist()


def test_bounding_before_the_shuffle_by_unit_is_caught(spark, monkeypatch):
    """The broken variant of a map-side pre-bounding: each input partition bounds its own share of a unit (no
    shuffle by unit first), so a unit spread over partitions keeps up to L items per partition. The law test
    above rejects it."""
    from dpmo import spark as dps

    frame = bound_world_frame(spark)
    _, law = exact_statistics_law(BOUND_WORLD, BOUND_L, BOUND_C, "units")
    monkeypatch.setattr(dps, "_by_unit", lambda f, parts: f)
    got = spark_statistics(frame, "units", REPS)
    assert law_pvalue(got, law) < ALPHA, got
    frame.unpersist()


def test_canonical_codes_depend_on_the_values_only():
    """The bounding tasks' unit and item codes: equal exactly for equal values (large integers not merged as
    floats, strings and binary by their bytes, every null one value), and the same codes for the same values
    whatever their order or chunking — so a recomputed task makes the same choices."""
    import pyarrow as pa

    from dpmo.spark import canonical_codes

    rs = np.random.default_rng(5)
    cases = [
        pa.array([2**53, 2**53 + 1, -1, 2**53, 7], pa.int64()),
        pa.array([2**53, None, 2**53 + 1, None, -3], pa.int64()),
        pa.array([3, -2, 3, 100], pa.int8()),
        pa.array(["b", "a", None, "b", "ab", ""]),
        pa.array([b"\xff", b"a", None, b"\xff", b""], pa.binary()),
    ]
    for col in cases:
        values = col.to_pylist()
        codes, labels = canonical_codes(col)
        same = [[values[i] == values[j] for j in range(len(values))] for i in range(len(values))]
        assert [[codes[i] == codes[j] for j in range(len(values))] for i in range(len(values))] == same
        if labels is None:  # integers without nulls: their own codes
            assert codes.tolist() == values
        else:
            assert [labels[int(c)].as_py() for c in codes] == values
        for _ in range(5):
            perm = rs.permutation(len(values))
            shuffled = pa.chunked_array([col.take(pa.array(perm[:2])), col.take(pa.array(perm[2:]))])
            c2, _ = canonical_codes(shuffled)
            assert c2.tolist() == codes[perm].tolist()


def test_null_and_large_units_on_spark(spark):
    """Null units are one unit (Spark's grouping), ids 2⁵³ and 2⁵³ + 1 two units: with L = 1 and a clear
    release, each of them counts once."""
    import pandas as pd

    from dpmo import spark as dps

    ids = pd.array([2**53, 2**53 + 1, None, None, None], dtype="Int64")
    frame = spark.createDataFrame(pd.DataFrame({"user": ids, "item": [1, 1, 1, 2, 3]}))
    rows = dps._item_statistics(frame, "user", "item", None, 2, dpmo.StreamKey.for_simulation(1), 1, 1,
                                (0.0, 0.0), "units", 0, 200).collect()
    per_rep, null_pick = Counter(), Counter()
    for r in rows:
        per_rep[r["rep"]] += int(r["stat"])
        if r["item"] != 1 or int(r["stat"]) == 3:  # the item the null unit kept
            null_pick[r["item"]] += 1
    assert set(per_rep.values()) == {3}  # three units, one item each
    # The null unit (three events, three items) keeps one of them, uniformly: 200 picks, each item ~67.
    assert sum(null_pick.values()) == 200 and set(null_pick) == {1, 2, 3} and min(null_pick.values()) > 30
