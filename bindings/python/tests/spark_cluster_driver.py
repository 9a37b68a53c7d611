"""The Spark driver of tests/test_spark_cluster.py, run in a process of its own (one SparkContext per process):

    spark_cluster_driver.py MODE URL [ARCHIVE]

MODE ``ship``: the README's classic cluster block (MASTER = URL: spark.archives) then its pipeline block;
``bare``: the same without the block's spark.archives line (the executors' Python has no dpmo: the outside
tester's attack); ``connect``: the README's Spark Connect block (REMOTE = URL: spark.addArtifacts) then the
pipeline block. ARCHIVE is the path of dpmo.tar.gz (the blocks name it relative to the working directory). Prints
one JSON object on its last line."""

import json
import os
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import dpmo  # noqa: E402
from dpmo import spark as dps  # noqa: E402


def executor_files(spark):
    """Where the executors import dpmo from (the shipped archive, not a local install)."""

    def where(batches):
        import pyarrow as pa

        import dpmo

        for _ in batches:
            pass
        yield pa.RecordBatch.from_arrays([pa.array([dpmo.__file__])], names=["file"])

    return sorted({r[0] for r in spark.range(0, 4, 1, 4).mapInArrow(where, "file string").collect()})


def readme_blocks():
    import re

    with open(os.environ["DPMO_README"], encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), flags=re.S)
    cluster = [b for b in blocks if "tests/test_spark_cluster.py\n# runs this block" in b]
    pipeline = [b for b in blocks if "bound_and_aggregate(events" in b and "getActiveSession" in b]
    assert len(cluster) == 2 and len(pipeline) == 1, "the README's Spark section changed: update this driver"
    return cluster[0], cluster[1], pipeline[0]


def error(e):
    return {"class": type(e).__name__, "detail": getattr(e, "detail", str(e)[-500:]),
            "charged": getattr(e, "charged", None)}


def pipeline(spark, ns, out):
    """Checks what the README's pipeline block (run in ``ns``) did, and that the cluster aggregates exactly."""
    pdf = ns["events"].toPandas()
    catalogue = ns["catalogue"]
    # Nothing dropped (L and C large): the cluster's counts are the exact counts.
    exact = dps.bound_and_aggregate(ns["events"], unit="user", candidate="item", candidate_list=catalogue,
                                    max_candidates=100, max_per_candidate=10**6)
    out["exact_counts"] = exact.frame.orderBy("candidate_index").toPandas()["count"].tolist()
    out["expected_counts"] = [int((pdf["item"] == c).sum()) for c in catalogue]
    counts = ns["agg"].frame.orderBy("candidate_index").toPandas()["count"].tolist()
    distinct = [int(pdf[pdf["item"] == c]["user"].nunique()) for c in catalogue]
    out["bounded_ok"] = all(0 <= a <= d for a, d in zip(counts, distinct)) and sum(counts) <= 3 * 2000
    out["spent"] = ns["budget"].spent
    out["top3"], out["best_sum"], out["multi"], printed_spent = ns["printed"]  # the block's four prints
    assert printed_spent == out["spent"]
    out["by_distinct_users"] = [catalogue[i] for i in np.argsort(-np.array(distinct), kind="stable")]
    out["executor_files"] = executor_files(spark)


def bare(ns, out):
    """The outside tester's attack: the documented pipeline on executors without dpmo."""
    budget = ns["budget"]
    out["spent"] = budget.spent
    try:
        dps.select_multi(ns["agg"], epsilon=0.5, budget=budget)
        out["multi_error"] = None
    except dpmo.DpmoError as e:
        out["multi_error"] = error(e)
    out["spent_multi"] = budget.spent
    # The broken variant: the same release without the executor check charges, then fails on the executors.
    # The selection kept on the executors (driver_limit=0): the driver path collects before it charges.
    dps.check_executors = lambda *a, **k: None
    try:
        dps.select(ns["agg"], epsilon=0.5, budget=budget, driver_limit=0)
        out["unchecked_error"] = None
    except Exception as e:  # noqa: BLE001 — a Py4J / Spark error
        out["unchecked_error"] = "No module named 'dpmo'" in str(e)
    out["unchecked_spent"] = budget.spent


def main():
    mode, url = sys.argv[1], sys.argv[2]
    archive = sys.argv[3] if len(sys.argv) > 3 else None
    classic, connect, steps = readme_blocks()
    if archive:
        os.chdir(os.path.dirname(archive))  # the README's blocks name dpmo.tar.gz in the working directory
    start = time.time()
    out = {"mode": mode}
    setup = {"MASTER": url} if mode != "connect" else {"REMOTE": url}
    if mode == "bare":  # the shipping forgotten: the same block without its spark.archives line
        lines = [ln for ln in classic.splitlines() if "spark.archives" not in ln]
        assert len(lines) == len(classic.splitlines()) - 1
        classic = "\n".join(lines) + "\n"
    try:
        exec(compile(classic if mode != "connect" else connect, "README cluster block", "exec"), setup)
        out["check"] = None
    except dpmo.DpmoError as e:
        out["check"] = error(e)
    spark = SparkSession.getActiveSession()
    assert spark is not None
    printed = []
    ns = {"__name__": "__readme__", "printed": printed, "print": lambda *a: printed.extend(a)}
    try:
        try:
            exec(compile(steps, "README pipeline block", "exec"), ns)
            out["pipeline_error"] = None
        except dpmo.DpmoError as e:
            out["pipeline_error"] = error(e)
        if mode == "bare":
            bare(ns, out)
        else:
            pipeline(spark, ns, out)
    finally:
        out["seconds"] = round(time.time() - start, 1)
        spark.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
