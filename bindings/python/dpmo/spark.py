"""dpmo on Spark (pyspark): contribution bounding and per-candidate aggregation as Spark transformations, an
exact distributed report-noisy-max for single-objective selection (top-k too), and multi-objective selection
on the driver.

The pipeline, for events (unit, candidate, value) in a DataFrame and a public candidate list::

    from dpmo import spark as dps
    agg = dps.bound_and_aggregate(events, unit="user", candidate="item", value="amount",
                                  candidate_list=items, max_candidates=5, bounds=(0.0, 100.0))
    budget = dpmo.Budget(1.0)
    top3 = dps.select(agg, score="count", epsilon=0.5, k=3, budget=budget)    # labels, in pick order

* **Bounding** (:func:`bound_and_aggregate`): events on candidates outside the list are dropped (a broadcast
  join); the events are repartitioned by unit, so all of a unit's events meet in one task, which bounds them
  as :func:`dpmo.bound_contributions` does (at most L candidates per unit, C events per (unit, candidate),
  values clamped), with a generator derived for that task from a fresh :class:`dpmo.StreamKey` (never from
  data); a ``groupBy`` sums the partial counts and sums (exact integers), and a join with the range 0..n−1
  gives every listed candidate a row (0 without events). Counts have ℓ∞ sensitivity C, sums C·max(|lo|, |hi|).
* **Selection** (:func:`select`, :func:`select_scores`): the exact distributed report-noisy-max of
  :mod:`dpmo.distributed` — Gumbel noise (≡ the exponential mechanism) or Exponential noise (≡
  permute-and-flip). Up to ``driver_limit`` candidates (2²⁰ by default) the scores are collected in one Arrow
  job and the selection runs on the driver (the decomposition is exact: the same law on one partition);
  above it they stay on the executors: one pass for the k largest scores, then per round one pass of coins
  (permute-and-flip) or a few passes of proposals (exponential mechanism), only a handful of numbers per
  partition reaching the driver. The budget is charged once per release, on the driver.
* **No candidate list** (:func:`discover_partitions`, :func:`select_top_k_from_events`): the unknown-domain
  pipeline of :mod:`dpmo.discovery` with the single-node law — bounding per unit on the executors, partition
  decisions per item on the executors (the core's samplers), or the top k̄ + 1 scores peeled on the driver
  (Durfee & Rogers, pay what you get). DP-SIPS is refused on Spark.
* **Multi-objective** (:func:`select_multi`): the n × m utilities are aggregated on the cluster and collected;
  PrivPareto or PrivAgg runs on the driver with the core (n · m · 8 bytes on the driver; see the README for
  the n up to which this is sensible).

The secret :class:`dpmo.StreamKey` travels to the executors inside the task closures: on a shared cluster
enable Spark's RPC encryption and authentication (``spark.authenticate``, ``spark.network.crypto.enabled``).

Guards (each a test in ``tests/test_spark.py``):

* **The unit is what Spark groups on.** The bounding runs in the task that Spark's hash partitioning on
  the unit column sends a unit to, and tells units apart by their exact bytes (Arrow dictionary codes). A
  string column with a non-binary collation (``UTF8_LCASE``, ``UNICODE_CI``, ``..._RTRIM``, ...) makes
  ``"ann"`` and ``"Ann"`` one unit to Spark and two to the bounding — one person could then contribute
  C events per spelling — so it is refused, as is any unit type other than integers, binary-collated
  strings and binary (cast the column, e.g. ``lower(user)`` for a case-insensitive unit).
* **Executors are checked before anything is charged.** :func:`select_multi`, the discovery functions and
  :func:`select_scores` above ``driver_limit`` first run :func:`check_executors`, a tiny job whose tasks
  import dpmo and report its version; a failure raises ``UnsupportedError`` with the budget untouched.
  :func:`select_scores` up to ``driver_limit`` collects the scores before it charges, and runs the check
  when the collection fails (the aggregates of :func:`bound_and_aggregate` are computed by dpmo there).
* **Simulation keys.** A reproducible key (``StreamKey.for_simulation``) is refused by the bounding unless
  ``allow_simulation=True``, and aggregates made with one are refused by a budget that does not allow
  simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional, Sequence

import numpy as np

from . import _native
from ._native import Budget, Rng, StreamKey
from .bounding import refuse_simulation
from .distributed import BOUNDING, DISCOVERY_BOUNDING, PARTITION_NOISE, select_partitioned, stream_number
from .errors import InvalidArgumentError, LengthMismatchError, NullPointerError, UnsupportedError

__all__ = [
    "SparkAggregates",
    "bound_and_aggregate",
    "check_executors",
    "select",
    "select_scores",
    "select_multi",
    "discover_partitions",
    "select_top_k_from_events",
]

_INVALID = "An argument is outside its documented range."
_UNSUPPORTED = (
    "Not supported: this mechanism has no exact implementation (report-noisy-max with Laplace noise: ask for "
    "floating-point arithmetic explicitly, or use Gumbel or exponential noise), or the platform lacks the "
    "facility asked for."
)


@dataclass(frozen=True)
class SparkAggregates:
    """Bounded per-candidate aggregates on the cluster.

    Attributes:
        frame: a DataFrame (candidate_index long, count long, sum_units long) with one row for every index
            0..n−1 of ``candidate_list`` (cache it if you select several times).
        candidate_list: the public candidates.
        grid: the value grid: a candidate's sum is ``sum_units * grid``.
        count_sensitivity: ℓ∞ sensitivity of a count (C).
        sum_sensitivity: ℓ∞ sensitivity of a sum (C · max(|lo|, |hi|)), or None without values.
        count_l1_sensitivity, sum_l1_sensitivity: the ℓ1 sensitivities (L · C, L · C · max(|lo|, |hi|)).
        reproducible: True when a reproducible key made the bounding's choices (``allow_simulation``): a
            budget refuses releases from these aggregates unless it allows simulation.
    """

    frame: Any
    candidate_list: List[Any]
    grid: float
    count_sensitivity: float
    sum_sensitivity: Optional[float]
    count_l1_sensitivity: float
    sum_l1_sensitivity: Optional[float]
    reproducible: bool = False

    def scores(self, score: str = "count") -> Any:
        """A DataFrame (candidate_index, score double) of ``"count"`` or ``"sum"``."""
        from pyspark.sql import functions as F

        if score == "count":
            col = F.col("count").cast("double")
        elif score == "sum":
            if self.sum_sensitivity is None:
                raise InvalidArgumentError(_INVALID, "no values were aggregated: score='count'")
            col = F.col("sum_units").cast("double") * F.lit(self.grid)
        else:
            raise InvalidArgumentError(_INVALID, f"score {score!r}: expected 'count' or 'sum'")
        return self.frame.select("candidate_index", col.alias("score"))

    def sensitivity(self, score: str = "count") -> float:
        """The ℓ∞ sensitivity of ``score`` (the Δ a selection uses)."""
        if score == "sum":
            if self.sum_sensitivity is None:
                raise InvalidArgumentError(_INVALID, "no values were aggregated")
            return self.sum_sensitivity
        if score != "count":
            raise InvalidArgumentError(_INVALID, f"score {score!r}: expected 'count' or 'sum'")
        return self.count_sensitivity


def arrow_unit_codes(column: Any) -> np.ndarray:
    """Integer codes of the units of an Arrow column: equal codes exactly for equal values (their bytes, for
    strings and binary; nulls are one unit, as in Spark's grouping)."""
    import pyarrow.compute as pc

    col = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    enc = pc.dictionary_encode(col, null_encoding="encode")
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def check_unit_type(data_type: Any, name: str, role: str = "unit") -> None:
    """Refuses a unit (or item: ``role="item"``) column whose equality in Spark differs from the bounding's
    (exact values): anything but integers, strings with the binary collation (``UTF8_BINARY``) and binary."""
    from pyspark.sql import types as T

    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.BinaryType)):
        return
    if type(data_type) is T.StringType:
        collation = getattr(data_type, "collation", "UTF8_BINARY")
        if collation == "UTF8_BINARY":
            return
        raise InvalidArgumentError(
            _INVALID,
            f"the {role} column {name!r} has collation {collation}: Spark groups values that collation calls "
            f"equal (such as 'ann' and 'Ann') as one {role}, the bounding would count each spelling as a {role} "
            f"of its own; map the column to one canonical value per {role} with the UTF8_BINARY collation (for "
            "example lower(...) for a case-insensitive value)",
        )
    raise InvalidArgumentError(
        _INVALID,
        f"the {role} column {name!r} has type {data_type.simpleString()}: a {role} must be an integer, a string "
        "(UTF8_BINARY collation) or binary, whose equality is exact; cast the column",
    )


def _report_versions(batches: Iterator[Any]) -> Iterator[Any]:
    # Runs on an executor: its unpickling imports dpmo.spark, so it fails there if dpmo cannot be imported.
    import pyarrow as pa

    import dpmo

    for _ in batches:
        pass
    yield pa.RecordBatch.from_arrays(
        [pa.array([dpmo.__version__]), pa.array([_native.__version__])], names=["dpmo", "native"]
    )


def _failure_summary(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    named = [ln for ln in lines if ln.split(":")[0].endswith(("Error", "Exception"))]
    text = (named or lines or [type(e).__name__])[-1]
    return text[:300]


def default_parallelism(session: Any) -> int:
    """The session's default parallelism: ``sparkContext.defaultParallelism`` on classic Spark; through Spark
    Connect (no SparkContext) ``spark.default.parallelism`` if set, else ``spark.sql.shuffle.partitions``."""
    try:
        return max(1, int(session.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect: no SparkContext (PySparkNotImplementedError)
        pass
    value = session.conf.get("spark.default.parallelism", None)
    if not value:
        value = session.conf.get("spark.sql.shuffle.partitions", "2")
    return max(1, int(value))


def local_master(session: Any) -> bool:
    """True when ``session`` runs on a local master (``local``, ``local[N]``, ``local[*]``, ``local[N, F]``):
    one executor, the driver's JVM, whose Python workers are all forked from one daemon with one
    environment. ``local-cluster[...]`` (separate executor processes) and anything unreadable are not."""
    import re

    try:
        master = session.conf.get("spark.master", None)
    except Exception:  # a Spark Connect server that does not show it
        return False
    return bool(master) and re.fullmatch(r"local(\[[^\]]*\])?", str(master).strip()) is not None


def check_executors(spark: Any = None, *, tasks: Optional[int] = None) -> None:
    """Runs a tiny job of ``tasks`` tasks that import dpmo on the executors and report its version; raises
    ``UnsupportedError`` if a task fails or reports another version than the driver's. Every release of this
    module runs it before it charges a budget, so a cluster that cannot run dpmo costs nothing. It checks the
    executors its tasks reach: an executor that joins later (dynamic allocation) and cannot import dpmo fails
    the release after the charge (the safe side). ``tasks`` defaults to :func:`default_parallelism`, and to
    one on a local master (:func:`local_master`: every task runs in the same executor with Python workers of
    one daemon and one environment, so one task sees what any would). A DataFrame job (``mapInArrow``), so it
    runs on classic Spark and through Spark Connect alike."""
    from pyspark.sql import SparkSession

    session = spark or SparkSession.getActiveSession()
    if session is None:
        raise UnsupportedError(_UNSUPPORTED, "no active Spark session")
    if tasks:
        n = max(1, int(tasks))
    else:
        n = 1 if local_master(session) else default_parallelism(session)
    expected = (_native.__version__, _native.__version__)
    try:
        rows = session.range(0, n, 1, n).mapInArrow(_report_versions, "dpmo string, native string").collect()
        seen = {(r[0], r[1]) for r in rows}
    except Exception as e:  # a JVM or Python worker failure: the executors cannot run dpmo
        raise UnsupportedError(
            _UNSUPPORTED, f"the Spark executors cannot run dpmo {expected[0]}: {_failure_summary(e)}"
        ) from e
    if seen != {expected}:
        raise UnsupportedError(
            _UNSUPPORTED,
            f"the Spark executors run dpmo {sorted(v[0] for v in seen)}, the driver {expected[0]}",
        )


def _bound_partition(key: StreamKey, n: int, l: int, c: int, lo: float, hi: float, has_values: bool):
    def fn(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        tables = list(batches)
        if not tables:
            return
        t = pa.Table.from_batches(tables)
        if t.num_rows == 0:
            return
        # A canonical order first, so the unit codes (hence the streams, hence every choice) depend on the
        # task's multiset of events only: a recomputed task makes the same choices.
        order = [("unit", "ascending"), ("candidate_index", "ascending")]
        t = t.sort_by(order + ([("value", "ascending")] if has_values else []))
        j = TaskContext.get().partitionId()
        units = arrow_unit_codes(t.column("unit"))
        cands = t.column("candidate_index").to_numpy(zero_copy_only=False).astype(np.int64)
        vals = t.column("value").to_numpy(zero_copy_only=False).astype(np.float64) if has_values else None
        rng = key.rng(stream_number(BOUNDING, 0, 0, 0, j))
        counts, sums, _ = _native._bound_events(rng, units, cands, vals, n, l, c, lo, hi)
        nz = np.flatnonzero(counts)
        yield pa.RecordBatch.from_arrays(
            [pa.array(nz.astype(np.int64)), pa.array(counts[nz]), pa.array(sums[nz])],
            names=["candidate_index", "count", "sum_units"],
        )

    return fn


def bound_and_aggregate(
    events: Any,
    *,
    unit: str,
    candidate: str,
    value: Optional[str] = None,
    candidate_list: Sequence[Any],
    max_candidates: int,
    max_per_candidate: int = 1,
    bounds: Optional[tuple] = None,
    partitions: Optional[int] = None,
    key: Optional[StreamKey] = None,
    allow_simulation: bool = False,
) -> SparkAggregates:
    """Contribution bounding and per-candidate aggregation of the events DataFrame ``events`` (columns
    ``unit``, ``candidate`` and optionally ``value``) against the public ``candidate_list``. See the module
    documentation and :func:`dpmo.bound_contributions` for the recipe and the sensitivities. ``partitions``:
    the number of tasks bounding units (default: the session's default parallelism). The unit column must
    be an integer, a string with the binary collation, or binary (``InvalidArgumentError`` otherwise: see
    the module documentation). A reproducible ``key`` needs ``allow_simulation=True``."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    if value is not None and bounds is None:
        raise InvalidArgumentError(_INVALID, "bounds=(lo, hi) is required with value=")
    if int(max_candidates) < 1 or int(max_per_candidate) < 1:
        raise InvalidArgumentError(_INVALID, "max_candidates and max_per_candidate must be >= 1")
    lo, hi = (0.0, 0.0) if bounds is None else (float(bounds[0]), float(bounds[1]))
    if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi):
        raise InvalidArgumentError(_INVALID, "bounds must be finite with lo <= hi")
    cands = list(candidate_list)
    if len(set(cands)) != len(cands):
        raise InvalidArgumentError(_INVALID, "the candidate list has duplicates")
    if not cands:
        raise InvalidArgumentError(_INVALID, "the candidate list is empty")
    check_unit_type(events.schema[unit].dataType, unit)
    if key is not None and key.reproducible and not allow_simulation:
        refuse_simulation("the stream key")
    spark = events.sparkSession
    key = key if key is not None else StreamKey()
    n = len(cands)
    ctype = events.schema[candidate].dataType
    lookup = spark.createDataFrame([(c, i) for i, c in enumerate(cands)], f"label {ctype.simpleString()}, candidate_index long")
    cols = [F.col(unit).alias("unit"), F.col(candidate).alias("label")]
    if value is not None:
        cols.append(F.col(value).cast("double").alias("value"))
    ev = events.select(*cols).join(F.broadcast(lookup), "label", "inner").drop("label")
    parts = int(partitions) if partitions else default_parallelism(spark)
    ev = ev.repartition(parts, "unit")
    bounded = ev.mapInArrow(
        _bound_partition(key, n, int(max_candidates), int(max_per_candidate), lo, hi, value is not None),
        "candidate_index long, count long, sum_units long",
    )
    agg = bounded.groupBy("candidate_index").agg(F.sum("count").alias("count"), F.sum("sum_units").alias("sum_units"))
    full = (
        spark.range(n)
        .withColumnRenamed("id", "candidate_index")
        .join(agg, "candidate_index", "left")
        .fillna(0, subset=["count", "sum_units"])
    )
    m = max(abs(lo), abs(hi))
    grid = _native._value_grid(lo, hi)
    c = float(max_per_candidate)
    return SparkAggregates(
        frame=full,
        candidate_list=cands,
        grid=grid,
        count_sensitivity=c,
        sum_sensitivity=None if value is None else c * m,
        count_l1_sensitivity=float(max_candidates) * c,
        sum_l1_sensitivity=None if value is None else float(max_candidates) * c * m,
        reproducible=key.reproducible,
    )


def _pack(batches: Iterator[Any]) -> Iterator[Any]:
    # One row per partition: its candidate indices (sorted) and scores as raw bytes.
    import pyarrow as pa
    from pyspark import TaskContext

    tables = list(batches)
    j = TaskContext.get().partitionId()
    if tables:
        t = pa.Table.from_batches(tables)
        c = t.column("candidate_index").to_numpy(zero_copy_only=False).astype(np.int64)
        s = t.column("score").to_numpy(zero_copy_only=False).astype(np.float64)
    else:
        c, s = np.zeros(0, np.int64), np.zeros(0, np.float64)
    order = np.argsort(c, kind="stable")
    yield pa.RecordBatch.from_arrays(
        [pa.array([j], pa.int32()), pa.array([c[order].tobytes()], pa.binary()), pa.array([s[order].tobytes()], pa.binary())],
        names=["part", "cands", "scores"],
    )


def _spark_map(packed: Any):
    # One DataFrame job per pass (mapInArrow, as Spark Connect has no RDDs): each partition's result is
    # pickled into one row, and the results come back in partition order.
    def run(fn):
        def apply(batches: Iterator[Any]) -> Iterator[Any]:
            import pickle

            import pyarrow as pa

            parts, out = [], []
            for b in batches:
                for j, c, s in zip(b.column(0).to_pylist(), b.column(1).to_pylist(), b.column(2).to_pylist()):
                    parts.append(int(j))
                    out.append(pickle.dumps(fn(int(j), np.frombuffer(c, dtype=np.int64),
                                               np.frombuffer(s, dtype=np.float64))))
            yield pa.RecordBatch.from_arrays(
                [pa.array(parts, pa.int32()), pa.array(out, pa.binary())], names=["part", "result"]
            )

        import pickle

        rows = packed.mapInArrow(apply, "part int, result binary").collect()
        return [pickle.loads(r[1]) for r in sorted(rows, key=lambda r: r[0])]

    return run


DRIVER_LIMIT = 1 << 20


def _collect_scores(scores: Any, total: int) -> tuple:
    """The (candidate_index, score) columns of ``scores`` on the driver, through Arrow (one job, no Python
    worker of its own; the aggregates of :func:`bound_and_aggregate` are computed by dpmo on the executors).
    It runs after the charge (see :func:`select_scores`): a frame whose rows depend on the private data
    must not answer "does it hold the n candidates?" for free."""
    from pyspark.sql import functions as F

    cols = [F.col("candidate_index").cast("long").alias("c"), F.col("score").cast("double").alias("s")]
    t = scores.select(*cols).toArrow()
    c = t.column("c").to_numpy(zero_copy_only=False)
    s = t.column("s").to_numpy(zero_copy_only=False)
    if len(c) != total or (total and (c.min() < 0 or c.max() >= total or np.unique(c).size != total)):
        raise LengthMismatchError(
            "The lengths of the arguments do not agree with each other.",
            "the frame must hold each index 0..n-1 exactly once",
        )
    return c.astype(np.int64), s.astype(np.float64)


def select_scores(
    scores: Any,
    *,
    total: int,
    sensitivity: float,
    epsilon: float,
    k: int = 1,
    noise: str = "gumbel",
    budget: Optional[Budget] = None,
    rng: Optional[Rng] = None,
    key: Optional[StreamKey] = None,
    repetitions: int = 1,
    driver_limit: int = DRIVER_LIMIT,
) -> np.ndarray:
    """The exact distributed report-noisy-max (:func:`dpmo.distributed.select_partitioned`) over a DataFrame
    ``scores`` (candidate_index long, score double) holding each index 0..``total``−1 exactly once. Returns
    the k chosen indices in pick order.

    Where it runs: with ``total`` ≤ ``driver_limit`` (default 2²⁰ candidates, 16 MiB of scores) the scores
    are collected to the driver in one Arrow job and the same ``select_partitioned`` runs there over one
    partition — the decomposition is exact, so the law is the same whatever the partitions — with no dpmo
    task of its own and one Spark job instead of one per pass. Both paths run :func:`check_executors`
    first (the frame itself may need dpmo on the executors, e.g. :func:`bound_and_aggregate`'s), then
    charge, then read the scores: a frame that turns out not to hold each index once, or a job that fails
    on a value, keeps its charge, since the frame's rows may depend on the private data (a free refusal
    would answer a yes/no question about them). Above it (or ``driver_limit=0``) the scores stay on
    the executors: one cached pass for the k largest scores, then per round a pass of coins or proposals
    (see :mod:`dpmo.distributed`), after :func:`check_executors` (nothing is charged when the executors
    cannot run dpmo)."""
    if rng is None:
        rng = Rng()
    if int(total) <= int(driver_limit):
        # The arguments first (nothing collected, nothing charged, on bad arguments), then the data.
        from .distributed import _check, local_partitions

        _check(epsilon, sensitivity, int(k), int(total), noise)
        check_executors(scores.sparkSession)
        collected: List[Any] = []

        def on_driver(fn: Callable[[int, np.ndarray, np.ndarray], Any]) -> List[Any]:
            # Called by select_partitioned after its charge: the scores are read only then.
            if not collected:
                collected.append(local_partitions(*_collect_scores(scores, int(total)), 1))
            return collected[0](fn)

        return select_partitioned(
            rng, on_driver, int(total), sensitivity=sensitivity, epsilon=epsilon, k=int(k),
            noise=noise, budget=budget, key=key, repetitions=repetitions,
        )
    check_executors(scores.sparkSession)
    packed = scores.select("candidate_index", "score").mapInArrow(_pack, "part int, cands binary, scores binary").cache()
    try:
        return select_partitioned(
            rng,
            _spark_map(packed),
            int(total),
            sensitivity=sensitivity,
            epsilon=epsilon,
            k=int(k),
            noise=noise,
            budget=budget,
            key=key,
            repetitions=repetitions,
        )
    finally:
        packed.unpersist()


def select(
    aggregates: SparkAggregates,
    *,
    score: str = "count",
    epsilon: float,
    k: int = 1,
    noise: str = "gumbel",
    budget: Optional[Budget] = None,
    rng: Optional[Rng] = None,
    key: Optional[StreamKey] = None,
    driver_limit: int = DRIVER_LIMIT,
) -> List[Any]:
    """Private top-k of the candidates by ``score`` ("count" or "sum") with the exact distributed
    report-noisy-max at the score's ℓ∞ sensitivity (on the driver up to ``driver_limit`` candidates: see
    :func:`select_scores`). Returns the k candidate labels in pick order."""
    sens = aggregates.sensitivity(score)
    if budget is not None:
        budget._check_release(aggregates.reproducible)
    picks = select_scores(
        aggregates.scores(score),
        total=len(aggregates.candidate_list),
        sensitivity=sens,
        epsilon=epsilon,
        k=k,
        noise=noise,
        budget=budget,
        rng=rng,
        key=key,
        driver_limit=driver_limit,
    )
    return [aggregates.candidate_list[int(i)] for i in picks]


def collect_utilities(frame: Any, columns: Sequence[str], total: int) -> np.ndarray:
    """The n × m utilities of ``frame`` (candidate_index, columns...) on the driver, row r = index r."""
    pdf = frame.select("candidate_index", *columns).toPandas()
    if len(pdf) != total or set(pdf["candidate_index"]) != set(range(total)):
        raise LengthMismatchError(
            "The lengths of the arguments do not agree with each other.", "the frame must hold indices 0..n-1 once"
        )
    pdf = pdf.sort_values("candidate_index")
    return pdf[list(columns)].to_numpy(dtype=np.float64)


def select_multi(
    aggregates: SparkAggregates,
    *,
    epsilon: float,
    k: int = 1,
    mechanism: str = "privpareto",
    weights: Optional[Sequence[float]] = None,
    selector: str = "exponential",
    budget: Optional[Budget] = None,
    rng: Optional[Rng] = None,
) -> List[Any]:
    """Multi-objective selection over (count, sum): the n × 2 utilities are aggregated on the cluster,
    collected, and PrivPareto (global, Δ = n − 1) or PrivAgg (global, Δ_agg = Σ|w_i|Δ_i with the bounding's
    sensitivities) runs on the driver with the core. Returns the k labels in pick order."""
    if aggregates.sum_sensitivity is None:
        raise InvalidArgumentError(_INVALID, "multi-objective selection needs values (count and sum)")
    if mechanism not in ("privpareto", "privagg"):
        raise InvalidArgumentError(_INVALID, f"mechanism {mechanism!r}: expected 'privpareto' or 'privagg'")
    if mechanism == "privagg" and weights is None:
        raise NullPointerError("A required pointer argument is null.", "weights= is required for privagg")
    if budget is not None:
        budget._check_release(aggregates.reproducible)
    check_executors(aggregates.frame.sparkSession)
    if rng is None:
        rng = Rng()
    n = len(aggregates.candidate_list)
    from pyspark.sql import functions as F

    frame = aggregates.frame.select(
        "candidate_index",
        F.col("count").cast("double").alias("count"),
        (F.col("sum_units").cast("double") * F.lit(aggregates.grid)).alias("sum"),
    )
    u = collect_utilities(frame, ["count", "sum"], n)
    if mechanism == "privpareto":
        picks = _native.select_privpareto(rng, u, epsilon=epsilon, k=k, selector=selector, budget=budget)
    else:
        picks = _native.select_privagg(
            rng,
            u,
            list(weights or []),
            epsilon=epsilon,
            k=k,
            globals=[aggregates.count_sensitivity, aggregates.sum_sensitivity],
            selector=selector,
            budget=budget,
        )
    return [aggregates.candidate_list[int(i)] for i in picks]


# ---- The unknown-domain pipeline: raw events, no candidate list (dpmo.discover_partitions and
# dpmo.select_top_k_from_events on a cluster).

_MAX_REPETITIONS = 4096  # the repetition field of the stream numbers (tests only: _repetitions)


def _by_unit(frame: Any, parts: int) -> Any:
    """Every event of a unit in one task: Spark's hash partitioning on the unit (a test replaces this to show
    that a unit split over tasks breaks the law: tests/test_spark_discovery.py)."""
    return frame.repartition(parts, "unit")


def canonical_codes(column: Any) -> tuple:
    """Integer codes of an Arrow column's values that depend on the set of values only, not on their order:
    an integer column without nulls is its own codes (as 64-bit patterns, ``labels`` None); otherwise the
    rank of each value among the distinct values sorted (strings and binary by their bytes, a null last:
    one value, as in Spark's grouping), with ``labels`` the sorted distinct values (code i ↔ labels[i]).
    Returns (codes int64, labels)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if pa.types.is_integer(col.type) and col.null_count == 0:
        return col.to_numpy(zero_copy_only=False).astype(np.int64, copy=False), None
    enc = pc.dictionary_encode(col, null_encoding="encode")
    order = pc.array_sort_indices(enc.dictionary, order="ascending", null_placement="at_end")
    rank = np.empty(len(enc.dictionary), np.int64)
    rank[order.to_numpy()] = np.arange(len(enc.dictionary), dtype=np.int64)
    return rank[enc.indices.to_numpy(zero_copy_only=False)], enc.dictionary.take(order)


def _bound_units(key: StreamKey, l: int, c: int, lo: float, hi: float, has_values: bool, weight_grid: int,
                 reps: int, statistic: str, decimal: bool):
    """The task function of the bounding: the core's ``bound`` of the task's units (each unit whole), from
    the task's stream of ``key``, and the sum of ``statistic`` ("units", "events", "sum": max(0, sum) in
    grid units, "weight") per item over the task's kept contributions: one row (rep, item, stat) per item
    and repetition — stat as ``decimal(38,0)`` if ``decimal`` (exact whatever its size), else ``long`` (units
    and weights: at most 2²⁰ per event of the task). Summing these partial statistics per item over the
    tasks gives exactly the sums over the kept (unit, item) rows, so the bounded data's law is the core's."""

    def fn(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        tables = list(batches)
        if not tables:
            return
        t = pa.Table.from_batches(tables)
        if t.num_rows == 0:
            return
        # Canonical codes: the unit and item codes, hence every choice (the core sorts the events by (unit,
        # item, value) itself), are a function of the task's multiset of events and the key, whatever order
        # the shuffle delivered them in (a retried or recomputed task makes the same choices, so no unit is
        # ever bounded twice with different choices).
        j = TaskContext.get().partitionId()
        units, _ = canonical_codes(t.column("unit"))
        codes, labels = canonical_codes(t.column("item"))
        item_type = t.schema.field("item").type
        vals = t.column("value").to_numpy(zero_copy_only=False).astype(np.float64) if has_values else None
        for r in range(reps):
            rng = key.rng(stream_number(DISCOVERY_BOUNDING, 0, 0, r, j))
            items, raw = _native._bound_item_statistics(rng, units, codes, vals, l, c, lo, hi, weight_grid, statistic)
            n = len(items)
            item_col = labels.take(pa.array(items)) if labels is not None else pa.array(items).cast(item_type)
            if decimal:
                stat = pa.Array.from_buffers(pa.decimal128(38, 0), n, [None, pa.py_buffer(raw)])
            else:
                words = np.frombuffer(raw, dtype="<u8").reshape(n, 2)
                if n and (words[:, 1].any() or words[:, 0].max() >= 1 << 63):
                    raise OverflowError("a partial statistic above 2**63 - 1")  # at most 2**20 per event
                stat = pa.array(words[:, 0].astype(np.int64))
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.full(n, r, np.int32)), item_col, stat], names=["rep", "item", "stat"]
            )

    return fn


def _decide_items(key: StreamKey, mechanism: str, epsilon: float, delta: float, l: int):
    """The task function of the partition selection: the core's decisions for the task's items (each item
    whole, after the group-by), from the task's stream of ``key``, in item order."""

    def fn(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        from pyspark import TaskContext

        tables = list(batches)
        if not tables:
            return
        t = pa.Table.from_batches(tables)
        if t.num_rows == 0:
            return
        t = t.sort_by([("rep", "ascending"), ("item", "ascending")])
        j = TaskContext.get().partitionId()
        reps = t.column("rep").to_numpy(zero_copy_only=False)
        stats = t.column("stat").to_numpy(zero_copy_only=False).astype(np.int64)
        starts = np.flatnonzero(np.r_[True, reps[1:] != reps[:-1]])
        ends = np.r_[starts[1:], len(reps)]
        for s, e in zip(starts, ends):
            r = int(reps[s])
            rng = key.rng(stream_number(PARTITION_NOISE, 0, 0, r, j))
            kept = _native._select_partitions_from_statistics(
                rng, np.arange(e - s, dtype=np.int64), stats[s:e], mechanism, epsilon, delta, l
            )
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.full(len(kept), r, np.int32)), t.column("item").take(pa.array(kept + s)).combine_chunks()],
                names=["rep", "item"],
            )

    return fn


def _plain(x: Any) -> Any:
    """A collected label as a hashable value (Spark returns binary as bytearray)."""
    return bytes(x) if isinstance(x, bytearray) else x


def _label_key(x: Any) -> Any:
    """The single-node order of released labels (dpmo.discovery): integers as 64-bit patterns, others as
    they sort."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return (0, int(x) & 0xFFFF_FFFF_FFFF_FFFF)
    return (1, x)


def _discovery_frame(events: Any, unit: str, item: str, value: Optional[str], partitions: Optional[int]) -> Any:
    from pyspark.sql import functions as F

    cols = [F.col(unit).alias("unit"), F.col(item).alias("item")]
    if value is not None:
        cols.append(F.col(value).cast("double").alias("value"))
    ev = events.select(*cols).where(F.col("item").isNotNull())
    parts = int(partitions) if partitions else default_parallelism(events.sparkSession)
    return _by_unit(ev, parts)


def _item_statistics(events: Any, unit: str, item: str, value: Optional[str], partitions: Optional[int],
                     key: StreamKey, l: int, c: int, clamp: tuple, statistic: str, weight_grid: int,
                     reps: int) -> Any:
    """The bounded events' per-item statistic, a DataFrame (rep int, item, stat) with one row per item with a
    kept contribution and repetition: the events repartitioned by unit (:func:`_by_unit`), each task bounding
    its units with the core and summing ``statistic`` per item (:func:`_bound_units`), a ``groupBy`` summing
    the tasks' partial sums. Distinct units and weights (at most 2²⁰ per event) are summed as ``long`` (a
    DataFrame has fewer than 2⁶³ rows), kept events and sums (up to C, C·2²⁰ per event) as ``decimal(38,0)``:
    no sum wraps."""
    from pyspark.sql import functions as F

    itype = events.schema[item].dataType.simpleString()
    decimal = statistic in ("events", "sum")
    lo, hi = clamp
    kept = _discovery_frame(events, unit, item, value, partitions).mapInArrow(
        _bound_units(key, l, c, lo, hi, value is not None, weight_grid, reps, statistic, decimal),
        f"rep int, item {itype}, stat {'decimal(38,0)' if decimal else 'long'}",
    )
    return kept.groupBy("rep", "item").agg(F.sum("stat").alias("stat"))


def _prepare(events: Any, unit: str, item: str, key: Optional[StreamKey], reproducible_rng: bool,
             allow_simulation: bool, budget: Optional[Budget], repetitions: int) -> StreamKey:
    check_unit_type(events.schema[unit].dataType, unit)
    check_unit_type(events.schema[item].dataType, item, "item")
    if key is not None and key.reproducible and not allow_simulation:
        refuse_simulation("the stream key")
    if reproducible_rng and not allow_simulation:
        refuse_simulation("the generator")
    key = key if key is not None else StreamKey()
    if budget is not None:
        budget._check_release(key.reproducible or reproducible_rng)
    if not 1 <= int(repetitions) <= _MAX_REPETITIONS:
        raise InvalidArgumentError(_INVALID, f"repetitions must be between 1 and {_MAX_REPETITIONS}")
    if repetitions > 1 and budget is not None:
        raise InvalidArgumentError(_INVALID, "repetitions are for simulations: no budget")
    return key


def discover_partitions(
    events: Any,
    *,
    unit: str,
    item: str,
    max_items: int,
    epsilon: float,
    delta: float,
    mechanism: str = "weighted_gaussian",
    budget: Optional[Budget] = None,
    key: Optional[StreamKey] = None,
    partitions: Optional[int] = None,
    allow_simulation: bool = False,
    _repetitions: int = 1,
) -> List[Any]:
    """Private partition selection on Spark: the items of the events DataFrame ``events`` (columns ``unit``
    and ``item``) to release, with no candidate list — the law of :func:`dpmo.discover_partitions`.

    * **Bounding on the executors.** The events are repartitioned by unit (``partitions`` tasks, default the
      session's default parallelism), so each task holds every event of its units, and bounds them with the
      core's ``bound`` (at most L = ``max_items`` distinct items per unit, a uniformly random subset) from the
      task's stream of a fresh :class:`dpmo.StreamKey`. Each task sums, per item, over its kept (unit, item)
      contributions: 1 (distinct units) or, for the weighted Gaussian, the unit's weight ⌊G/√|S_u|⌋ (the
      core's ``weight``) — one row per item and task instead of one per kept contribution.
    * **Decisions on the executors.** A ``groupBy`` by item of these partial sums gives each item its
      statistic (distinct units, or the sum of the weights); each task of that shuffle decides its items with
      the core's exact sampler and plan (``select_partitions_from_statistics``) from its own stream; only the
      released items reach the driver. The decisions are independent given the statistics, so the released
      set has exactly the single-node law (``tests/test_spark_discovery.py`` checks it with χ²).

    ``mechanism``: ``"truncated_geometric"``, ``"laplace"``, ``"gaussian"`` or ``"weighted_gaussian"``.
    DP-SIPS (``"sips"``) is refused with ``UnsupportedError``: its later rounds re-weight every unit by the
    items the earlier rounds found, one more shuffle of all the kept contributions per round; use
    :func:`dpmo.discover_partitions` on collected events for it. Events with a null item are dropped (a
    null is no item); null units are one unit (Spark's grouping).

    Order of the checks and the charge: arguments (nothing charged), :func:`check_executors` (nothing
    charged if the executors cannot run dpmo), then (ε, δ) is charged to ``budget`` — before any event is
    read; a job that fails afterwards keeps the charge. A reproducible ``key`` needs
    ``allow_simulation=True`` (and a budget that allows simulation). Returns the released items, sorted as
    :func:`dpmo.discover_partitions` sorts them.
    """
    if mechanism == "sips":
        raise UnsupportedError(
            _UNSUPPORTED,
            "DP-SIPS is not available on Spark (each round re-weights every unit by the items found before: "
            "one more shuffle of all the contributions per round); use 'weighted_gaussian', or "
            "dpmo.discover_partitions on the collected events",
        )
    if mechanism not in ("truncated_geometric", "laplace", "gaussian", "weighted_gaussian"):
        raise InvalidArgumentError(
            _INVALID, "mechanism must be 'truncated_geometric', 'laplace', 'gaussian' or 'weighted_gaussian'"
        )
    eps, dlt, l = float(epsilon), float(delta), int(max_items)
    grid = int(_native._partition_plan(mechanism, 1, eps, dlt, l))
    key = _prepare(events, unit, item, key, False, allow_simulation, budget, int(_repetitions))
    reps = int(_repetitions)
    spark = events.sparkSession
    check_executors(spark)
    if budget is not None:
        budget.charge(eps, dlt)
    itype = events.schema[item].dataType.simpleString()
    weighted = mechanism == "weighted_gaussian"
    stats = _item_statistics(events, unit, item, None, partitions, key, l, 1, (0.0, 0.0),
                             "weight" if weighted else "units", grid if weighted else 0, reps)
    rows = stats.mapInArrow(_decide_items(key, mechanism, eps, dlt, l), f"rep int, item {itype}").collect()
    out: List[List[Any]] = [[] for _ in range(reps)]
    for r in rows:
        out[r[0]].append(_plain(r[1]))
    result = [sorted(o, key=_label_key) for o in out]
    return result[0] if reps == 1 else result  # type: ignore[return-value]


def select_top_k_from_events(
    events: Any,
    *,
    unit: str,
    item: str,
    value: Optional[str] = None,
    k: int,
    max_items: int,
    epsilon: float,
    delta: float,
    k_bar: Optional[int] = None,
    max_per_item: int = 1,
    score: str = "units",
    bounds: Optional[tuple] = None,
    budget: Optional[Budget] = None,
    rng: Optional[Rng] = None,
    key: Optional[StreamKey] = None,
    partitions: Optional[int] = None,
    allow_simulation: bool = False,
    _repetitions: int = 1,
) -> Any:
    """Durfee & Rogers' unknown-domain top-k on Spark: the law of :func:`dpmo.select_top_k_from_events`
    (without a candidate list) for the events DataFrame ``events`` (columns ``unit``, ``item`` and
    optionally ``value``).

    * **Bounding on the executors**, as :func:`discover_partitions` (L = ``max_items`` items per unit, C =
      ``max_per_item`` events per (unit, item), values clamped to ``bounds`` onto the core's grid).
    * **Scores on the cluster:** each bounding task sums its kept contributions per item, and a ``groupBy``
      by item of these partial sums gives each item with a kept contribution its score (distinct units, kept
      events, or the sum of max(0, kept sum) in grid units; events and sums as ``decimal(38,0)`` so no sum
      wraps); the top k̄ + 1 in the core's order — score descending, ties by item (integers as
      64-bit patterns, strings and binary by their bytes, as the single-node ids order them) — come to the
      driver (``orderBy(...).limit(k̄ + 1)``).
    * **Peeling on the driver:** the core's threshold candidate ⊥ and exact peeling
      (``select_top_k_from_scores``) with ``rng`` (one key drawn), pay what you get.

    Charging: arguments checked (nothing charged), then :func:`check_executors`, then (ε, δ) is charged to
    ``budget`` before any event is read; when the peeling stops at ⊥ after ℓ < k items the charge becomes
    (ε/k · (ℓ + 1), δ), exactly as :func:`dpmo.select_top_k_from_events`. A job that fails keeps the full
    charge. A public candidate list is not taken here: use :func:`bound_and_aggregate` and :func:`select`.

    Returns :class:`dpmo.TopKFromEvents`.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .discovery import SCORES, TopKFromEvents

    if score not in SCORES:
        raise InvalidArgumentError(_INVALID, "score must be 'units', 'events' or 'sum'")
    if value is not None and bounds is None:
        raise InvalidArgumentError(_INVALID, "bounds=(lo, hi) is required with value=")
    if score == "sum" and value is None:
        raise InvalidArgumentError(_INVALID, "score='sum' needs value=")
    eps, dlt, l, c = float(epsilon), float(delta), int(max_items), int(max_per_item)
    k, kb = int(k), int(k if k_bar is None else k_bar)
    clamp = None if value is None else (float(bounds[0]), float(bounds[1]))  # type: ignore[index]
    _native._top_k_plan(score, k, kb, l, c, clamp, eps, dlt)
    if rng is None:
        rng = Rng()
    key = _prepare(events, unit, item, key, rng.reproducible, allow_simulation, budget, int(_repetitions))
    reps = int(_repetitions)
    spark = events.sparkSession
    check_executors(spark)
    prepaid = _native._prepay(budget, key.reproducible or rng.reproducible, eps, dlt) if budget is not None else None
    idtype = events.schema[item].dataType
    per_item = _item_statistics(events, unit, item, value, partitions, key, l, c, clamp or (0.0, 0.0), score, 0,
                                reps).withColumnRenamed("stat", "score")
    integer = isinstance(idtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType))
    # The core's order: score descending, then the item id ascending (integers as unsigned 64-bit patterns).
    ties = [(F.col("item") < 0).asc(), F.col("item").asc()] if integer else [F.col("item").asc()]
    order = [F.col("score").desc(), *ties]
    if reps == 1:
        rows = per_item.orderBy(*order).limit(kb + 1).collect()
    else:
        from pyspark.sql.window import Window

        w = Window.partitionBy("rep").orderBy(*order)
        rows = per_item.withColumn("_rank", F.row_number().over(w)).where(F.col("_rank") <= kb + 1).collect()
    by_rep: List[List[Any]] = [[] for _ in range(reps)]
    for r in rows:
        by_rep[r["rep"]].append((_plain(r["item"]), int(r["score"])))
    results = []
    for top in by_rep:
        labels = [x for x, _ in top]
        if integer:
            ids = np.array([int(x) for x in labels], dtype=np.int64)
            back = {int(x): x for x in labels}
        else:
            ranked = sorted(labels)
            rank = {x: i for i, x in enumerate(ranked)}
            ids = np.array([rank[x] for x in labels], dtype=np.int64)
            back = dict(enumerate(ranked))
        picked, stopped, e_spent, d_spent = _native._top_k_from_scores(
            rng, ids, [sc for _, sc in top], score, k, kb, l, c, clamp, eps, dlt, prepaid
        )
        results.append(TopKFromEvents(items=[back[int(i)] for i in picked], stopped=bool(stopped),
                                      epsilon=e_spent, delta=d_spent))
    return results[0] if reps == 1 else results
