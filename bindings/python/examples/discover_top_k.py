"""The most-searched queries of a search log, privately, with no candidate list (docs/discovery.md).

    python discover_top_k.py                       # a synthetic log of 20,000 users
    python discover_top_k.py log.csv user query    # your CSV: one row per search

No list of queries exists before the data, and a list taken from the log would leak: a query only one person
typed names that person whatever the selection does afterwards. Two releases, under one (ε, δ) budget:

1. which queries may be named at all: partition selection (DP-SIPS), (0.5, 5·10⁻⁷)-DP;
2. the top 10 by number of users: Durfee & Rogers' unknown-domain top-k, paying only for what comes out.

Each user counts at most 5 distinct queries (more are dropped at random, per user).
"""

import csv
import sys

import numpy as np

import dpmo

USAGE = "usage: discover_top_k.py [log.csv user-column query-column]"
MAX_QUERIES = 5  # L: the most distinct queries one user contributes


def synthetic(users=20000, seed=1):
    """A log with a few popular queries (Zipf-like) and one private query per user."""
    rs = np.random.default_rng(seed)
    popular = [f"query {j}" for j in range(40)]
    weights = 1.0 / np.arange(1, 41)
    weights /= weights.sum()
    units, queries = [], []
    for u in range(users):
        for q in rs.choice(40, size=1 + u % 4, p=weights):
            units.append(f"user{u}")
            queries.append(popular[q])
        units.append(f"user{u}")
        queries.append(f"my own address {u}")  # typed by this user only: must never come out
    return units, queries


def read_log(path, user_col, query_col):
    units, queries = [], []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            units.append(row[user_col])
            queries.append(row[query_col])
    return units, queries


def main(argv):
    if len(argv) == 1:
        units, queries = synthetic()
    elif len(argv) == 4:
        units, queries = read_log(argv[1], argv[2], argv[3])
    else:
        print(USAGE, file=sys.stderr)
        return 2
    rng = dpmo.Rng()
    budget = dpmo.Budget(1.0, delta=1e-6)

    found = dpmo.discover_partitions(rng, units, queries, max_items=MAX_QUERIES, epsilon=0.5, delta=5e-7,
                                     mechanism="sips", rounds=3, budget=budget)
    print(f"{len(found)} queries may be named (DP-SIPS, epsilon 0.5, delta 5e-7)")

    top = dpmo.select_top_k_from_events(rng, units, queries, k=10, k_bar=30, max_items=MAX_QUERIES,
                                        epsilon=0.5, delta=5e-7, budget=budget)
    print(f"private top-{len(top.items)} by users: {', '.join(top.items)}")
    print(f"the top-k cost epsilon {top.epsilon:.3f}, delta {top.delta:g}"
          f"{' (stopped at the threshold: paid less)' if top.stopped else ''}")
    print(f"budget left: epsilon {budget.remaining:.3f}, delta {budget.remaining_delta:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
