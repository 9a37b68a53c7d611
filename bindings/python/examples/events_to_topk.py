"""From a CSV of events to a private top-k, with the privacy budget printed.

    python events_to_topk.py                                          # a synthetic CSV of purchases
    python events_to_topk.py events.csv user item amount catalogue.txt

Each row of the CSV is one event: (privacy unit, candidate, value). The candidates are a public list fixed
before looking at the data, read from their own file (one per line): the shop's catalogue, never the items
found in the CSV. A candidate taken from the data would exist only because someone bought it, and a
selection that can output it reveals that person, whatever the noise: with candidates from the data, one
customer's purchase of an item no one else bought makes that item a possible output (probability 0 without
them, 0.15 with them on the small shop of tests/test_docs.py, which measures it). Events on items outside
the catalogue are dropped.
"""

import csv
import os
import sys
import tempfile

import numpy as np

import dpmo

USAGE = "usage: events_to_topk.py [events.csv unit-column item-column value-column public-candidates.txt]"
MAX_ITEMS, BOUNDS = 3, (0.0, 50.0)  # at most 3 items per person, values clamped to [0, 50]
EPS_TOP, EPS_BEST = 0.6, 0.4  # a top-5 by buyers, then the best seller by revenue: 1.0 in all


def synthetic(directory):
    """Writes a CSV of purchases and its public catalogue; returns their paths."""
    rs = np.random.default_rng(7)
    catalogue = [f"book-{i:02d}" for i in range(25)]
    events, cands = os.path.join(directory, "events.csv"), os.path.join(directory, "catalogue.txt")
    with open(events, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["user", "item", "amount"])
        for user in range(3000):
            taste = rs.zipf(1.4) % 25
            for _ in range(rs.integers(1, 30)):  # some users buy a lot
                item = taste if rs.random() < 0.7 else rs.integers(0, 25)
                w.writerow([f"u{user}", catalogue[item], round(float(rs.exponential(15.0)), 2)])
    with open(cands, "w") as f:
        f.write("\n".join(catalogue) + "\n")
    return events, cands


def read_events(path, unit_col, item_col, value_col):
    """The events of the CSV: (units, items, values)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return [r[unit_col] for r in rows], [r[item_col] for r in rows], np.array([float(r[value_col]) for r in rows])


def read_candidates(path):
    """The public candidate list: one per line, blank lines ignored (public: not derived from the events)."""
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def aggregate(rng, units, items, values, catalogue):
    """Bounded per-candidate counts and sums over the public catalogue (events off the catalogue dropped)."""
    return dpmo.bound_contributions(rng, units, items, values, candidate_list=catalogue,
                                    max_candidates=MAX_ITEMS, bounds=BOUNDS)


def release(rng, budget, agg):
    """A private top-5 by buyers (permute-and-flip) and the best seller by revenue (exponential mechanism)."""
    top5 = dpmo.select_top_k(rng, agg.counts, min(5, len(agg.candidates)), sensitivity=agg.count_sensitivity,
                             epsilon=EPS_TOP, selector="permute_and_flip", budget=budget)
    best = dpmo.select_exponential(rng, agg.sums, sensitivity=agg.sum_sensitivity, epsilon=EPS_BEST,
                                   budget=budget)
    return [agg.candidates[i] for i in top5], agg.candidates[best]


def main(argv):
    if not argv:
        path, cands_path = synthetic(tempfile.mkdtemp())
        cols = ("user", "item", "amount")
        print(f"wrote {path} and its catalogue {cands_path}")
    elif len(argv) == 5:
        path, cols, cands_path = argv[0], tuple(argv[1:4]), argv[4]
    else:
        # No public list, no release: the candidates are never taken from the events.
        print(USAGE, file=sys.stderr)
        return 2
    units, items, values = read_events(path, *cols)
    catalogue = read_candidates(cands_path)
    print(f"{len(units)} events, {len(catalogue)} public candidates")

    rng = dpmo.Rng()
    budget = dpmo.Budget(EPS_TOP + EPS_BEST)
    agg = aggregate(rng, units, items, values, catalogue)
    print(f"count sensitivity {agg.count_sensitivity}, sum sensitivity {agg.sum_sensitivity}")
    top5, best = release(rng, budget, agg)
    print("private top-5 by buyers:", top5)
    print("private best seller by revenue:", best)
    print(f"budget: spent {budget.spent} of {budget.total}, remaining {budget.remaining}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
