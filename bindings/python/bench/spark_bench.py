"""`make python-bench`, Spark part (issue 24, item 4): dpmo.spark side by side with plain Spark and PipelineDP on
one local[2] session, CPU time of ALL the processes (the driver's Python, the JVM it starts, the Python workers
the JVM forks: the whole process tree under this script, /proc), interleaved rounds, ratios from the same run.

Rows (each printed with a ``target: ... met/missed`` line):

(a) the full DP pipeline, ``dpmo.spark.select_top_k_from_events`` (bounding + scores + top-k̄ + peeling)
    against a plain ``groupBy(item).count()`` collected, on the same cached events — target ≤ 5×;
(b) ``dpmo.spark.select`` on cached aggregates (a public candidate list) against collecting the scores to
    the driver (``toArrow``) and calling ``dpmo.select_exponential`` there — target ≤ 2×;
(c) dpmo's partition selection (``dpmo.spark.discover_partitions``) and its full top-k pipeline against
    PipelineDP 0.3.1 on the same Spark (``SparkRDDBackend``: partition selection + privacy-id count, the
    same L, ε, δ) — target: dpmo faster.

    python spark_bench.py [--events N] [--items N] [--rounds R] [--pipeline-dp-events N]

Defaults: 10^7 events over 10^6 users and 10^5 items (Zipf-like), 3 rounds; PipelineDP on the first 10^6
of the same kind of events (--pipeline-dp-events: it maps every event through Python, about 25 s of CPU per
10^6 events here, so 10^7 would take ~25 minutes for three rounds), with dpmo run on those same 10^6
events for its ratio (never a ratio across sizes). The load of the machine (1-minute load average
before and after) is printed: other processes share the cores.
"""

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

import dpmo

CLK = os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds (user + system) of this process and every process that was ever its descendant: a thread
    reads /proc every `interval` seconds and keeps, per process (pid and start time), the last CPU time seen.
    A process that leaves the tree (a Python worker orphaned when its daemon is killed, reparented to init)
    still counts; its children's cutime is not used (a reaped child would count twice). What can be missed:
    a process that lives and dies between two readings, and a dying process's last `interval`. The thread's
    own CPU time is subtracted (it would be charged to whichever case runs)."""

    def __init__(self, interval=0.2):
        import threading

        self.seen = {}
        self.own = 0.0
        self.lock = threading.Lock()
        self.interval = interval
        self.root = os.getpid()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _scan(self):
        t0 = time.thread_time()
        stats = {}
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            rest = s[s.rindex(")") + 2:].split()
            # after the name: state(0) ppid(1) ... utime(11) stime(12) ... starttime(19)
            stats[int(d)] = (int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[19]))
        children = {}
        for pid, (ppid, _, _) in stats.items():
            children.setdefault(ppid, []).append(pid)
        with self.lock:
            todo = [self.root]
            while todo:
                p = todo.pop()
                if p in stats:
                    self.seen.setdefault((p, stats[p][2]), 0)
                todo.extend(children.get(p, []))
            for (pid, start) in self.seen:
                st = stats.get(pid)
                if st is not None and st[2] == start:
                    self.seen[(pid, start)] = max(self.seen[(pid, start)], st[1])
            self.own += time.thread_time() - t0

    def _loop(self):
        while not self.stop.wait(self.interval):
            self._scan()

    def total(self):
        self._scan()
        with self.lock:
            return sum(self.seen.values()) / CLK - self.own


METER = None


def measure(fn):
    c0, w0 = METER.total(), time.perf_counter()
    out = fn()
    return METER.total() - c0, time.perf_counter() - w0, out


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def run_rounds(cases, rounds):
    """cases: name -> fn. Interleaved: round r runs every case once, in a rotated order."""
    cpu = {k: [] for k in cases}
    wall = {k: [] for k in cases}
    names = list(cases)
    for r in range(rounds):
        for i in range(len(names)):
            name = names[(i + r) % len(names)]
            c, w, _ = measure(cases[name])
            cpu[name].append(c)
            wall[name].append(w)
    return cpu, wall


def report(cpu, wall, base):
    b = statistics.median(cpu[base])
    for name in cpu:
        c = statistics.median(cpu[name])
        print(f"  {name:<58} CPU {c:7.2f} s  wall {statistics.median(wall[name]):6.2f} s  x{c / b:6.2f}"
              f"   (CPU per round: {', '.join(f'{x:.2f}' for x in cpu[name])})")


def ratio_per_round(cpu, a, b):
    return [x / y for x, y in zip(cpu[a], cpu[b])]


def verdict(label, ratios, limit, below=True):
    med = statistics.median(ratios)
    ok = med <= limit if below else med < limit
    print(f"  target: {label}: x{med:.2f} (rounds {', '.join(f'{r:.2f}' for r in ratios)}) "
          f"({'met' if ok else 'missed'})")


def main():
    quick = os.environ.get("DPMO_BENCH_QUICK") == "1"  # small sizes (as bench.py)
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10**6 if quick else 10**7)
    ap.add_argument("--items", type=int, default=10**5)
    ap.add_argument("--users", type=int, default=10**6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pipeline-dp-events", type=int, default=10**5 if quick else 10**6)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--only", default="abc", help="the sections to run, e.g. 'a' or 'bc'")
    a = ap.parse_args()
    global METER
    METER = CpuMeter()
    warnings.filterwarnings("ignore")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F
    except Exception as e:  # pragma: no cover
        print(f"  (pyspark unavailable: {e})")
        return
    from dpmo import spark as dps

    print(f"\n## Spark side by side (issue 24 item 4): {a.events:,} events, {a.users:,} users, {a.items:,} items "
          f"(Zipf-like), local[2], {a.partitions} shuffle partitions; CPU of every process (driver, JVM, Python "
          f"workers), median of {a.rounds} interleaved rounds; load average {loadavg()} at the start")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", str(a.partitions))
        .config("spark.default.parallelism", str(a.partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    def events(n):
        return (
            spark.range(0, n, 1, a.partitions)
            .select(
                (F.xxhash64("id") % a.users).alias("user"),
                F.floor(F.pow(F.lit(float(a.items)), F.rand(11))).cast("long").alias("item"),
                (-F.log(F.rand(12) + F.lit(1e-12)) * 20.0).alias("amount"),
            )
            .cache()
        )

    ev = events(a.events)
    ev.count()
    warm = events(min(a.events, 10**5))
    warm.count()
    L, EPS, DELTA, K = 4, 1.0, 1e-6, 10

    def group_count(frame):
        return lambda: frame.groupBy("item").count().collect()

    def dpmo_top_k(frame):
        return lambda: dps.select_top_k_from_events(frame, unit="user", item="item", k=K, k_bar=4 * K,
                                                    max_items=L, epsilon=EPS, delta=DELTA)

    def dpmo_partitions(frame):
        return lambda: dps.discover_partitions(frame, unit="user", item="item", max_items=L, epsilon=EPS,
                                               delta=DELTA, mechanism="truncated_geometric")

    if "a" in a.only:
        section_a(a, ev, warm, group_count, dpmo_top_k, dpmo_partitions, K, L)
    if "b" in a.only:
        section_b(a, ev, dps, L, EPS)
    if "c" in a.only:
        section_c(a, spark, ev, events, dpmo_partitions, dpmo_top_k, K, L, EPS, DELTA)
    print(f"  load average {loadavg()} at the end")
    spark.stop()


def section_a(a, ev, warm, group_count, dpmo_top_k, dpmo_partitions, K, L):
    print("\n(a) the full DP pipeline against a plain groupBy(item).count()")
    # Warm-up (not counted): the JVM compiles the plans' code on its first runs.
    for fn in (group_count(warm), dpmo_top_k(warm), dpmo_partitions(warm)):
        fn()
    cases = {
        "groupBy(item).count().collect()": group_count(ev),
        f"dpmo.spark.select_top_k_from_events (k={K}, k_bar={4 * K}, L={L})": dpmo_top_k(ev),
        "dpmo.spark.discover_partitions (truncated geometric, L=4)": dpmo_partitions(ev),
    }
    cpu, wall = run_rounds(cases, a.rounds)
    names = list(cases)
    report(cpu, wall, names[0])
    verdict("full DP pipeline (select_top_k_from_events) <= 5x groupBy(item).count()",
            ratio_per_round(cpu, names[1], names[0]), 5.0)



def section_b(a, ev, dps, L, EPS):
    print("\n(b) dpmo.spark.select against collect-and-select on the driver (10^4 public candidates, cached counts)")
    n_cands = min(a.items, 10**4)
    agg = dps.bound_and_aggregate(ev, unit="user", candidate="item", candidate_list=list(range(n_cands)),
                                  max_candidates=L, partitions=a.partitions)
    agg.frame.cache().count()
    rng = dpmo.Rng()

    def collect_and_select():
        # The fastest collect a user has (Arrow, no pandas), the scores put in candidate order, one selection.
        t = agg.scores("count").toArrow()
        c = t.column("candidate_index").to_numpy()
        scores = np.empty(len(c))
        scores[c] = t.column("score").to_numpy()
        return dpmo.select_exponential(rng, scores, sensitivity=agg.count_sensitivity, epsilon=EPS)

    cases = {
        "collect scores + dpmo.select_exponential on the driver": collect_and_select,
        "dpmo.spark.select (k=1, Gumbel = exact EM)": lambda: dps.select(agg, score="count", epsilon=EPS, rng=rng),
        "dpmo.spark.select (k=1, Exponential = exact PF)": lambda: dps.select(agg, score="count", epsilon=EPS,
                                                                              noise="exponential", rng=rng),
    }
    cpu, wall = run_rounds(cases, a.rounds)
    names = list(cases)
    report(cpu, wall, names[0])
    verdict("dpmo.spark.select (EM) <= 2x collect-and-select", ratio_per_round(cpu, names[1], names[0]), 2.0)
    agg.frame.unpersist()



def section_c(a, spark, ev, events, dpmo_partitions, dpmo_top_k, K, L, EPS, DELTA):
    print("\n(c) against PipelineDP 0.3.1 on Spark (SparkRDDBackend: partition selection + privacy-id count)")
    try:
        import pipeline_dp
    except ImportError:
        print("  PipelineDP not installed (requirements-bench.txt installs it into the bench venv)")
        print("  target: dpmo faster than PipelineDP on Spark: (missed: not measured)")
        return
    small = ev
    if a.pipeline_dp_events and a.pipeline_dp_events < a.events:
        small = events(a.pipeline_dp_events)
        small.count()
    n_small = small.count()

    def pipeline_dp_run():
        accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=DELTA)
        engine = pipeline_dp.DPEngine(accountant, pipeline_dp.SparkRDDBackend(spark.sparkContext))
        params = pipeline_dp.AggregateParams(
            noise_kind=pipeline_dp.NoiseKind.LAPLACE,
            metrics=[pipeline_dp.Metrics.PRIVACY_ID_COUNT],
            max_partitions_contributed=L,
            max_contributions_per_partition=1,
            partition_selection_strategy=pipeline_dp.PartitionSelectionStrategy.TRUNCATED_GEOMETRIC,
        )
        extractors = pipeline_dp.DataExtractors(
            privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1], value_extractor=lambda r: 0
        )
        rdd = small.select("user", "item").rdd.map(tuple)
        result = engine.aggregate(rdd, params, extractors)
        accountant.compute_budgets()
        return result.collect()

    print(f"  on {n_small:,} events")
    cases = {
        "PipelineDP SparkRDDBackend (partition selection + count)": pipeline_dp_run,
        "dpmo.spark.discover_partitions (truncated geometric)": dpmo_partitions(small),
        f"dpmo.spark.select_top_k_from_events (k={K})": dpmo_top_k(small),
    }
    cpu, wall = run_rounds(cases, a.rounds)
    names = list(cases)
    report(cpu, wall, names[0])
    verdict("dpmo.spark.discover_partitions faster than PipelineDP (ratio < 1)",
            ratio_per_round(cpu, names[1], names[0]), 1.0, below=False)
    verdict("dpmo.spark.select_top_k_from_events faster than PipelineDP (ratio < 1)",
            ratio_per_round(cpu, names[2], names[0]), 1.0, below=False)


if __name__ == "__main__":
    print(f"dpmo {dpmo.__version__} Spark benchmark (Python {sys.version.split()[0]})")
    main()
