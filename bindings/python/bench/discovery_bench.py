"""Discovery + top-k from raw events with no candidate list (issue 23, item 6): dpmo against PipelineDP.

    python discovery_bench.py                      # 10^6 events over 10^5 items, 3 runs each
    python discovery_bench.py --events 10000000 --items 1000000 --runs 3

The events: users × items, item popularity Zipf(1.1) over `--items` items, each user 1 to 19 events. The
truth: the k items with the most distinct users. Both libraries get the same events, L = 4 items per user,
(ε, δ) = (1, 10⁻⁶) in all:

* dpmo: ``dpmo.select_top_k_from_events`` — Durfee & Rogers' unknown-domain top-k over the k̄ = 4k items
  with the most users and a threshold candidate, exact exponential-mechanism peeling (pays what it gets);
* PipelineDP (local backend): private partition selection (truncated geometric) + a noisy privacy-id
  count per selected partition, and the k largest noisy counts taken as the top-k (the usual recipe: no
  private selection among the partitions found; the argmax is post-processing).

Printed per library: the time of one call (events already in memory), the probability of recovering the
true top-k exactly (as a set) and the mean recall@k. PipelineDP is an optional dependency:
``pip install -r requirements-bench-discovery.txt``; without it only dpmo runs.
"""

import argparse
import time

import numpy as np

import dpmo

EPS, DELTA, L = 1.0, 1e-6, 4


def make_events(n_events, n_items, seed=0):
    rs = np.random.default_rng(seed)
    per_user = rs.integers(1, 20, size=n_events // 10 + 1)
    users = np.repeat(np.arange(len(per_user), dtype=np.int64), per_user)[:n_events]
    ranks = np.arange(1, n_items + 1, dtype=np.float64)
    p = ranks ** -1.1
    p /= p.sum()
    items = rs.choice(n_items, size=len(users), p=p).astype(np.int64)
    return users, items


def true_top_k(users, items, k):
    pairs = np.unique(users * np.int64(2**31) + items)  # distinct (user, item)
    distinct_items = pairs % np.int64(2**31)
    counts = np.bincount(distinct_items)
    order = np.lexsort((np.arange(len(counts)), -counts))
    return set(order[:k].tolist())


def run_dpmo(users, items, k):
    t = time.perf_counter()
    r = dpmo.select_top_k_from_events(dpmo.Rng(), users, items, k=k, k_bar=4 * k, max_items=L, epsilon=EPS,
                                      delta=DELTA)
    return time.perf_counter() - t, r.items


def run_pipeline_dp(users, items, k):
    import pipeline_dp

    rows = list(zip(users.tolist(), items.tolist()))
    t = time.perf_counter()
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPS, total_delta=DELTA)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
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
    result = engine.aggregate(rows, params, extractors)
    accountant.compute_budgets()
    released = list(result)
    released.sort(key=lambda pr: -pr[1].privacy_id_count)
    elapsed = time.perf_counter() - t
    return elapsed, [p for p, _ in released[:k]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    users, items = make_events(a.events, a.items)
    truth = true_top_k(users, items, a.k)
    print(f"{len(users):,} events, {len(np.unique(items)):,} distinct items, {users[-1] + 1:,} users; "
          f"k = {a.k}, L = {L}, (epsilon, delta) = ({EPS}, {DELTA})")
    try:
        import pipeline_dp  # noqa: F401
        libraries = [("dpmo", run_dpmo), ("PipelineDP", run_pipeline_dp)]
    except ImportError:
        print("PipelineDP not installed (pip install -r requirements-bench-discovery.txt): dpmo only")
        libraries = [("dpmo", run_dpmo)]
    for name, run in libraries:
        times, exact, recall = [], 0, []
        for _ in range(a.runs):
            s, got = run(users, items, a.k)
            times.append(s)
            exact += set(got) == truth
            recall.append(len(set(got) & truth) / a.k)
        print(f"{name:>10}: {np.median(times):8.2f} s per call (median of {a.runs}); true top-{a.k} recovered "
              f"{exact}/{a.runs}; mean recall@{a.k} {np.mean(recall):.2f}")


if __name__ == "__main__":
    main()
