"""`make bench` (Python part): dpmo's exact exponential mechanism and permute-and-flip against OpenDP and
diffprivlib, in one run, CPU time per selection, interleaved rounds, ratios; the multi-objective selection
on the driver; and the Spark pipeline on 10^7 synthetic events on local[2] (aggregation and selection time).

Run by `make -C bindings/python bench` (the bench venv has opendp and diffprivlib; numpy and pyspark come
from the test deps venv). DPMO_BENCH_QUICK=1 runs small sizes only.
"""

import os
import statistics
import sys
import time


import numpy as np  # noqa: E402

import dpmo  # noqa: E402

QUICK = os.environ.get("DPMO_BENCH_QUICK") == "1"
EPS, SENS = 1.0, 1.0


def cpu_per_call(fn, min_seconds):
    """CPU seconds per call of fn, over a batch lasting at least min_seconds of CPU."""
    calls, start = 0, time.process_time()
    while True:
        fn()
        calls += 1
        spent = time.process_time() - start
        if spent >= min_seconds:
            return spent / calls


def selection_libraries(scores):
    libs = {}
    rng = dpmo.Rng()
    libs["dpmo exponential (exact)"] = lambda: dpmo.select_exponential(rng, scores, sensitivity=SENS, epsilon=EPS)
    libs["dpmo permute-and-flip (exact)"] = lambda: dpmo.select_permute_and_flip(
        rng, scores, sensitivity=SENS, epsilon=EPS
    )
    libs["dpmo exponential (isochronous)"] = lambda: dpmo.select_exponential(
        rng, scores, sensitivity=SENS, epsilon=EPS, arithmetic="isochronous"
    )
    libs["dpmo permute-and-flip (isochronous)"] = lambda: dpmo.select_permute_and_flip(
        rng, scores, sensitivity=SENS, epsilon=EPS, arithmetic="isochronous"
    )
    gen = np.random.default_rng()
    scale = EPS / (2 * SENS)
    # The three lines a numpy user would write: Gumbel-max in floating point (not exact: a reference for speed).
    libs["numpy Gumbel-max (float, reference)"] = lambda: int(np.argmax(scale * scores + gen.gumbel(size=scores.size)))
    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
        scale = 2 * SENS / EPS
        gumbel = dp.m.make_noisy_max(*space, dp.zero_concentrated_divergence(), scale)
        expo = dp.m.make_noisy_max(*space, dp.max_divergence(), scale)
        as_list = scores.tolist()
        libs["OpenDP noisy_max Gumbel (≡ exponential)"] = lambda: gumbel(as_list)
        libs["OpenDP noisy_max Exponential (≡ PF)"] = lambda: expo(as_list)
    except Exception as e:  # pragma: no cover - reported, not fatal
        print(f"  (OpenDP unavailable: {e})")
    try:
        import warnings

        from diffprivlib.mechanisms import Exponential

        warnings.filterwarnings("ignore")
        as_list = scores.tolist()
        libs["diffprivlib Exponential"] = lambda: Exponential(
            epsilon=EPS, sensitivity=SENS, utility=as_list, monotonic=False
        ).randomise()
    except Exception as e:  # pragma: no cover
        print(f"  (diffprivlib unavailable: {e})")
    return libs


def bench_selection():
    print("\n## Single selection, CPU time per selection (interleaved rounds; median; ratio to dpmo exponential)")
    print("Δ = 1, ε = 1; three kinds of scores: N(0, 10²), a clear best (few candidates within γ < 1 of it: the")
    print("exact sampler's uniform proposals fail and it samples by levels of γ), uniform on [0, 100) (many")
    print("near the best: a few uniform proposals), and one dominant (one score 0, all others -10^6). The")
    print("isochronous selectors take the same time on every kind (constant time).\n")
    sizes = [10**3, 10**4] if QUICK else [10**3, 10**4, 10**5, 10**6]
    rounds = 3 if QUICK else 5
    rs = np.random.default_rng(1)
    for kind in ("normal(0, 10^2)", "uniform[0, 100)", "one dominant"):
        for n in sizes:
            if kind.startswith("normal"):
                scores = rs.normal(0.0, 10.0, n)
            elif kind.startswith("uniform"):
                scores = rs.uniform(0.0, 100.0, n)
            else:
                scores = np.full(n, -1e6)
                scores[n // 2] = 0.0
            libs = selection_libraries(scores)
            times = {k: [] for k in libs}
            budget = 0.05 if n <= 10**4 else 0.3
            for _ in range(rounds):
                for name, fn in libs.items():
                    times[name].append(cpu_per_call(fn, budget))
            base = statistics.median(times["dpmo exponential (exact)"])
            print(f"{kind}, n = {n:>9,}")
            for name in libs:
                t = statistics.median(times[name])
                print(f"  {name:<42} {t * 1e3:10.3f} ms   x{t / base:7.2f}")
            iso = statistics.median(times["dpmo exponential (isochronous)"])
            numpy = statistics.median(times["numpy Gumbel-max (float, reference)"])
            verdict = "met" if iso <= numpy else "NOT met"
            print(f"  target: isochronous exponential no slower than numpy's Gumbel-max: x{numpy / iso:.2f} ({verdict})")


def bench_multi():
    print("\n## Multi-objective on the driver (m = 2, k = 1), CPU time per selection")
    rs = np.random.default_rng(2)
    rng = dpmo.Rng()
    for n in ([10**4, 10**5] if QUICK else [10**4, 10**5, 10**6]):
        u = np.column_stack([rs.poisson(50, n), rs.exponential(20, n)]).astype(float)
        t_pp = cpu_per_call(lambda: dpmo.select_privpareto(rng, u, epsilon=1.0), 0.2)
        t_ag = cpu_per_call(lambda: dpmo.select_privagg(rng, u, [1.0, 0.1], epsilon=1.0, globals=[1.0, 100.0]), 0.2)
        d = dpmo.Sensitivity.per_candidate(np.ones(n), global_sensitivity=1.0, t_max=64)
        t_loc = cpu_per_call(lambda: dpmo.select_privpareto(rng, u, epsilon=1.0, deltas=[d, d]), 0.2)
        print(f"  n = {n:>9,}: PrivPareto global {t_pp * 1e3:9.1f} ms, local {t_loc * 1e3:9.1f} ms;"
              f" PrivAgg global {t_ag * 1e3:8.1f} ms; utilities {n * 16 / 1e6:.1f} MB")


def bench_spark():
    events = 10**6 if QUICK else 10**7
    print(f"\n## Spark pipeline, {events:,} synthetic events on local[2] (wall clock: the work is in the JVM and"
          " the Python workers, on both cores)")
    try:
        import warnings

        warnings.filterwarnings("ignore")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from pyspark.sql import SparkSession
        from pyspark.sql import functions as F
    except Exception as e:  # pragma: no cover
        print(f"  (pyspark unavailable: {e})")
        return
    from dpmo import spark as dps

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "6g")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    items = 10_000
    # Users: 10^6; items: Zipf-like popularity over 10^4 items; amounts exponential.
    ev = (
        spark.range(events)
        .select(
            (F.xxhash64("id") % 1_000_000).alias("user"),
            F.floor(F.pow(F.lit(float(items)), F.rand(11))).cast("long").alias("item"),
            (-F.log(F.rand(12) + F.lit(1e-12)) * 20.0).alias("amount"),
        )
        .cache()
    )
    t = time.perf_counter()
    ev.count()
    t_gen = time.perf_counter() - t
    catalogue = list(range(items))
    t = time.perf_counter()
    agg = dps.bound_and_aggregate(ev, unit="user", candidate="item", value="amount", candidate_list=catalogue,
                                  max_candidates=5, bounds=(0.0, 100.0), partitions=8)
    agg.frame.cache()
    agg.frame.count()
    t_agg = time.perf_counter() - t
    budget = dpmo.Budget(3.0)
    res = {}
    for label, kw in [
        ("select k=1, Gumbel (exact EM)", dict(noise="gumbel")),
        ("select k=1, Exponential (exact PF)", dict(noise="exponential")),
        ("select k=10, Exponential (exact PF)", dict(noise="exponential", k=10)),
    ]:
        t = time.perf_counter()
        picks = dps.select(agg, score="count", epsilon=0.5, budget=budget, **kw)
        res[label] = (time.perf_counter() - t, picks[:3])
    t = time.perf_counter()
    multi = dps.select_multi(agg, epsilon=0.5, k=1, budget=budget)
    t_multi = time.perf_counter() - t
    print(f"  generate + cache events        {t_gen:8.2f} s (not part of the pipeline)")
    print(f"  bound + aggregate (10^4 cands)  {t_agg:8.2f} s")
    for label, (secs, picks) in res.items():
        print(f"  {label:<36} {secs:8.2f} s   picks {picks}")
    print(f"  multi-objective (collect + PrivPareto on the driver) {t_multi:6.2f} s   pick {multi}")
    print(f"  budget spent {budget.spent} of {budget.total}")
    spark.stop()


if __name__ == "__main__":
    print(f"dpmo {dpmo.__version__} Python benchmark (Python {sys.version.split()[0]}, CPU time unless said)")
    bench_selection()
    bench_multi()
    bench_spark()
