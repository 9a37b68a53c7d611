"""From a CSV of events to a private top-k, with the privacy budget printed.

    python events_to_topk.py                           # a synthetic CSV of purchases
    python events_to_topk.py events.csv user item amount

Each row of the CSV is one event: (privacy unit, candidate, value). The candidates must be a public list
fixed before looking at the data: here the catalogue (given, not taken from the CSV).
"""

import csv
import os
import sys
import tempfile

import numpy as np

import dpmo

# %% 1. The data: a CSV of events (written here when none is given).
if len(sys.argv) > 1:
    path, unit_col, item_col, value_col = sys.argv[1:5]
    catalogue = None
else:
    path = os.path.join(tempfile.mkdtemp(), "events.csv")
    unit_col, item_col, value_col = "user", "item", "amount"
    rs = np.random.default_rng(7)
    catalogue = [f"book-{i:02d}" for i in range(25)]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([unit_col, item_col, value_col])
        for user in range(3000):
            taste = rs.zipf(1.4) % 25
            for _ in range(rs.integers(1, 30)):               # some users buy a lot
                item = taste if rs.random() < 0.7 else rs.integers(0, 25)
                w.writerow([f"u{user}", catalogue[item], round(float(rs.exponential(15.0)), 2)])
    print(f"wrote {path}")

with open(path, newline="") as f:
    rows = list(csv.DictReader(f))
units = [r[unit_col] for r in rows]
items = [r[item_col] for r in rows]
values = np.array([float(r[value_col]) for r in rows])
if catalogue is None:
    # Only for the demonstration with your own file: a real release needs a list fixed in advance.
    catalogue = sorted(set(items))
print(f"{len(rows)} events, {len(set(units))} units, {len(catalogue)} candidates")

# %% 2. Bound each unit's contribution: at most 3 items per person, values clamped to [0, 50].
rng = dpmo.Rng()
budget = dpmo.Budget(1.0)
agg = dpmo.bound_contributions(rng, units, items, values, candidate_list=catalogue, max_candidates=3,
                               bounds=(0.0, 50.0))
print(f"count sensitivity {agg.count_sensitivity}, sum sensitivity {agg.sum_sensitivity}")

# %% 3. A private top-5 by buyers (permute-and-flip, ε = 0.6) and the best seller by revenue (ε = 0.4).
top5 = dpmo.select_top_k(rng, agg.counts, 5, sensitivity=agg.count_sensitivity, epsilon=0.6,
                         selector="permute_and_flip", budget=budget)
print("private top-5 by buyers:", [agg.candidates[i] for i in top5])
print(f"budget: spent {budget.spent}, remaining {budget.remaining}")
best = dpmo.select_exponential(rng, agg.sums, sensitivity=agg.sum_sensitivity, epsilon=budget.remaining,
                               budget=budget)
print("private best seller by revenue:", agg.candidates[best])
print(f"budget: spent {budget.spent} of {budget.total}, remaining {budget.remaining}")
