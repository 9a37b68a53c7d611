"""Every Python code block of bindings/python/README.md runs, and so does the example script, whose candidates
come from a public list only (its output distribution does not reveal a candidate present only in the data)."""

import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import dpmo

README = os.environ.get("DPMO_README") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
EXAMPLES = os.environ.get("DPMO_EXAMPLES", "")


CLUSTER_MARK = "tests/test_spark_cluster.py\n# runs this block"


def all_blocks(path=None):
    with open(path or README, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def blocks():
    """The blocks run here; those that need a cluster (they say so) are run by tests/test_spark_cluster.py."""
    return [b for b in all_blocks() if CLUSTER_MARK not in b]


def test_the_cluster_blocks_are_run_by_the_cluster_test():
    cluster = [b for b in all_blocks() if CLUSTER_MARK in b]
    assert len(cluster) == 2 and "MASTER" in cluster[0] and "REMOTE" in cluster[1]


def test_the_readme_has_python_blocks():
    assert len(blocks()) >= 7


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("index", range(len(blocks())))
def test_readme_block_runs(index, spark):
    code = blocks()
    exec(compile(code[index], f"README.md block {index}", "exec"), {"__name__": "__readme__"})


def example_path():
    return os.path.join(EXAMPLES, "events_to_topk.py")


def test_example_script_runs():
    out = subprocess.run([sys.executable, example_path()], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "private top-5 by buyers" in out.stdout and "remaining 0.0" in out.stdout


def load_example():
    spec = importlib.util.spec_from_file_location("events_to_topk", example_path())
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SHOP = ["tea", "cake", "jam", "scones", "honey", "butter"]  # the public catalogue


def neighbours():
    """D: 12 customers, at most 3 items each and one purchase per item (the bounding keeps everything, so the
    aggregates do not depend on its random choices). D': D and one more customer, the only one who ever
    bought "secret-item" (not on the catalogue)."""
    units, items, values = [], [], []
    for u in range(12):
        for j in range(1 + u % 3):
            units.append(f"c{u}")
            items.append(SHOP[(u + 2 * j) % len(SHOP)])
            values.append(float(4 + (u * 7 + j) % 9))
    d = (units, items, values)
    d2 = (units + ["mallory"], items + ["secret-item"], values + [50.0])
    return d, d2


def p_best_seller(example, data, catalogue):
    """The exact distribution of the example's best seller (its second release) on `data`, as a dict."""
    units, items, values = data
    agg = example.aggregate(dpmo.Rng(), units, items, np.array(values), catalogue)
    p = dpmo.exponential_probabilities(agg.sums, sensitivity=agg.sum_sensitivity, epsilon=example.EPS_BEST)
    return dict(zip(agg.candidates, p.tolist())), agg


def test_the_example_takes_candidates_from_a_public_list_only(tmp_path):
    """The attack (issue 21): the example used to take its candidates from the CSV, so a customer who alone
    bought an item made it a possible output: P(best seller = X | D) = 0, P(... | D') > 0, which no ε
    allows. With the public catalogue, D and D' give the same aggregates, hence exactly the same output
    distribution (ratio 1), and X has probability 0 on both."""
    example = load_example()
    d, d2 = neighbours()
    # The broken variant (candidates from the data), measured exactly: the check below catches it.
    on_d, _ = p_best_seller(example, d, sorted(set(d[1])))
    on_d2, _ = p_best_seller(example, d2, sorted(set(d2[1])))
    assert "secret-item" not in on_d and on_d2["secret-item"] > 0.1  # 0 on D, 0.151 on D'
    # The example as it is: the public catalogue.
    on_d, agg = p_best_seller(example, d, SHOP)
    on_d2, agg2 = p_best_seller(example, d2, SHOP)
    assert agg.candidates == agg2.candidates == SHOP
    assert agg.counts.tolist() == agg2.counts.tolist() and agg.sums.tolist() == agg2.sums.tolist()
    assert on_d == on_d2 and "secret-item" not in on_d2
    # End to end: the script needs the public list, and its outputs are drawn from it.
    csv_path, cands = tmp_path / "events.csv", tmp_path / "catalogue.txt"
    csv_path.write_text("user,item,amount\n" + "".join(f"{u},{i},{v}\n" for u, i, v in zip(*d2)))
    cands.write_text("\n".join(SHOP) + "\n")
    args = [sys.executable, example_path(), str(csv_path), "user", "item", "amount"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "public-candidates" in out.stderr  # no list, no release
    for _ in range(3):
        out = subprocess.run(args + [str(cands)], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        assert "6 public candidates" in out.stdout and "secret-item" not in out.stdout


def test_discovery_example_runs_and_never_names_a_private_query():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "discover_top_k.py")], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "queries may be named" in out.stdout and "private top-" in out.stdout
    assert "budget left" in out.stdout
    # 20,000 queries typed by one user each: none passes the threshold or beats the threshold candidate.
    assert "my own address" not in out.stdout
