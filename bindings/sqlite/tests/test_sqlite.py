#!/usr/bin/python3
"""Client-library test of the dpmo SQLite extension through Python's sqlite3 module (Debian's /usr/bin/python3,
which supports enable_load_extension).

Statistical checks draw many selections in one query (GROUP BY over a table of repetitions) with a fixed seed,
so they are reproducible, and compare the frequencies with exact probabilities by a chi-square test at a
significance level of 1e-6. Exact probabilities come from closed forms (exponential mechanism, PrivPareto and
PrivAgg globally, sequential top-k) and, for local dampening, from libdpmo.so's own
dpmo_local_dampening_probabilities through ctypes.

Environment: EXT (path of build/dpmo.so), ENRON_DB (database built by enron_load). Prints
"RESULT <passed> <failed>" last.
"""
import ctypes
import itertools
import json
import math
import os
import sqlite3
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
EXT = os.path.abspath(os.environ.get("EXT", os.path.join(HERE, "..", "build", "dpmo.so")))
ENRON_DB = os.path.abspath(os.environ.get("ENRON_DB", os.path.join(HERE, "..", "build", "enron.db")))
LIBDPMO_SO = os.path.join(ROOT, "target", "release", "libdpmo.so")

# Chi-square critical values at significance 1e-6 for 1..15 degrees of freedom.
CHI2_CRIT = {1: 23.93, 2: 27.63, 3: 30.66, 4: 33.38, 5: 35.89, 6: 38.26, 7: 40.52, 8: 42.70, 9: 44.81,
             10: 46.86, 11: 48.87, 12: 50.83, 13: 52.75, 14: 54.64, 15: 56.50}


def connect(path=":memory:"):
    con = sqlite3.connect(path)
    con.enable_load_extension(True)
    con.load_extension(EXT[:-3] if EXT.endswith(".so") else EXT)  # entry point sqlite3_dpmo_init
    con.enable_load_extension(False)
    return con


def softmax(xs):
    top = max(xs)
    w = [math.exp(x - top) for x in xs]
    s = sum(w)
    return [x / s for x in w]


def chi_square(counts, probs, total):
    stat = 0.0
    dof = -1
    for key, p in probs.items():
        if p * total < 1e-9:
            if counts.get(key, 0) != 0:
                return float("inf"), 1
            continue
        dof += 1
        stat += (counts.get(key, 0) - p * total) ** 2 / (p * total)
    return stat, max(dof, 1)


class Base(unittest.TestCase):
    DRAWS = 20000

    def setUp(self):
        self.con = connect()
        self.con.execute("CREATE TEMP TABLE reps(rep INTEGER PRIMARY KEY)")
        self.con.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?) "
                         "INSERT INTO reps SELECT i FROM c", (self.DRAWS,))

    def tearDown(self):
        self.con.close()

    def tiny(self, rows, columns):
        self.con.execute("DROP TABLE IF EXISTS t")
        self.con.execute("CREATE TEMP TABLE t(%s)" % ", ".join(columns))
        self.con.executemany("INSERT INTO t VALUES (%s)" % ", ".join("?" * len(columns)), rows)

    def draw(self, expr, seed=12345):
        self.con.execute("SELECT dp_seed(?)", (seed,))
        counts = {}
        for (v,) in self.con.execute("SELECT %s FROM reps, t GROUP BY rep" % expr):
            counts[v] = counts.get(v, 0) + 1
        self.assertEqual(sum(counts.values()), self.DRAWS)
        return counts

    def assertDistribution(self, counts, probs):
        stat, dof = chi_square(counts, probs, self.DRAWS)
        self.assertLess(stat, CHI2_CRIT[min(dof, 15)], "chi-square %.2f with %d dof: counts %s, expected %s" % (
            stat, dof, counts, {k: round(p * self.DRAWS, 1) for k, p in probs.items()}))


class Statistics(Base):
    SCORES = [(1, 0.0), (2, 1.0), (3, 2.5), (4, 3.0)]

    def exponential_probs(self, scores, eps, sens):
        p = softmax([eps * s / (2 * sens) for _, s in scores])
        return {i: q for (i, _), q in zip(scores, p)}

    def test_exponential_mechanism_matches_exact_probabilities(self):
        self.tiny(self.SCORES, ["id", "s"])
        counts = self.draw("dp_select(id, 1.0, s, 1.0)")
        self.assertDistribution(counts, self.exponential_probs(self.SCORES, 1.0, 1.0))

    def test_gumbel_noisy_max_is_the_exponential_mechanism(self):
        self.tiny(self.SCORES, ["id", "s"])
        counts = self.draw("dp_select(id, 2.0, s, 2.0, 'gumbel')")
        self.assertDistribution(counts, self.exponential_probs(self.SCORES, 2.0, 2.0))

    def test_permute_and_flip_matches_exact_probabilities(self):
        # P&F = report-noisy-max with one-sided exponential noise; exact probabilities by inclusion-exclusion
        # over the candidates visited before (McKenna & Sheldon 2020, Thm. 2 / closed form by subsets).
        self.tiny(self.SCORES, ["id", "s"])
        eps, sens = 1.0, 1.0
        top = max(s for _, s in self.SCORES)
        acc = {i: math.exp(eps * (s - top) / (2 * sens)) for i, s in self.SCORES}
        ids = [i for i, _ in self.SCORES]
        probs = {}
        for r in ids:
            others = [j for j in ids if j != r]
            total = 0.0
            for size in range(len(others) + 1):
                for subset in itertools.combinations(others, size):
                    term = 1.0
                    for j in subset:
                        term *= -acc[j]
                    total += term / (size + 1)
            probs[r] = acc[r] * total
        self.assertAlmostEqual(sum(probs.values()), 1.0, places=12)
        counts = self.draw("dp_select(id, 1.0, s, 1.0, 'permute_and_flip')")
        self.assertDistribution(counts, probs)
        counts = self.draw("dp_select(id, 1.0, s, 1.0, 'exponential_noise')")
        self.assertDistribution(counts, probs)

    def test_top2_matches_sequential_exponential_mechanism(self):
        self.tiny(self.SCORES, ["id", "s"])
        eps = 2.0
        probs = {}
        first = self.exponential_probs(self.SCORES, eps / 2, 1.0)
        for a, _ in self.SCORES:
            rest = [(i, s) for i, s in self.SCORES if i != a]
            second = self.exponential_probs(rest, eps / 2, 1.0)
            for b, _ in rest:
                probs["[%d,%d]" % (a, b)] = first[a] * second[b]
        counts = self.draw("dp_select_topk(id, 2.0, 2, s, 1.0)")
        self.assertDistribution(counts, probs)

    def test_privpareto_global_matches_exact_probabilities(self):
        rows = [(1, 1.0, 5.0), (2, 2.0, 4.0), (3, 0.5, 0.5), (4, 2.0, 1.0), (5, 0.0, 0.0)]
        self.tiny(rows, ["id", "u1", "u2"])
        eps = 8.0
        n = len(rows)
        # Weak dominance (the default, PrivPareto Def. 4.3): r' != r with u_i(r') >= u_i(r) for every i.
        ps = [-sum(1 for o in rows if o is not r and o[1] >= r[1] and o[2] >= r[2]) for r in rows]
        p = softmax([eps * s / (2 * (n - 1)) for s in ps])
        counts = self.draw("dp_pareto_select(id, 8.0, u1, u2)")
        self.assertDistribution(counts, {r[0]: q for r, q in zip(rows, p)})

    def test_privagg_global_matches_exact_probabilities(self):
        rows = [(1, 1.0, 5.0), (2, 2.0, 4.0), (3, 0.5, 0.5), (4, 3.0, 1.0)]
        self.tiny(rows, ["id", "u1", "u2"])
        w, sens, eps = (0.5, -0.25), (1.0, 2.0), 3.0
        agg = [w[0] * r[1] + w[1] * r[2] for r in rows]
        d_agg = abs(w[0]) * sens[0] + abs(w[1]) * sens[1]
        p = softmax([eps * a / (2 * d_agg) for a in agg])
        counts = self.draw("dp_agg_select(id, 3.0, 0.5, u1, 1.0, -0.25, u2, 2.0)")
        self.assertDistribution(counts, {r[0]: q for r, q in zip(rows, p)})

    def test_local_dampening_matches_libdpmo_exact_probabilities(self):
        if not os.path.exists(LIBDPMO_SO):
            self.skipTest("target/release/libdpmo.so not built")
        lib = ctypes.CDLL(LIBDPMO_SO)

        class Spec(ctypes.Structure):
            _fields_ = [("kind", ctypes.c_uint32), ("values", ctypes.POINTER(ctypes.c_double)),
                        ("values_len", ctypes.c_size_t), ("columns", ctypes.c_size_t),
                        ("callback", ctypes.c_void_p), ("context", ctypes.c_void_p),
                        ("global_", ctypes.c_double), ("t_max", ctypes.c_size_t)]

        utilities = [10.0, 9.0, 4.0, 1.0]
        table = [[0.5, 1.0, 2.0], [1.0, 1.0, 3.0], [0.25, 0.5, 1.0], [2.0, 2.0, 2.0]]  # delta(t, r), T = 3
        global_sens = 3.0
        flat = (ctypes.c_double * 12)(*[x for row in table for x in row])
        spec = Spec(1, flat, 12, 3, None, None, global_sens, 3)  # DPMO_DELTA_TABLE
        rows = [(i + 1, u, json.dumps(d)) for i, (u, d) in enumerate(zip(utilities, table))]
        self.tiny(rows, ["id", "u", "d"])
        for dampening, option in ((0, "plain"), (1, "shifted")):
            out = (ctypes.c_double * 4)()
            st = lib.dpmo_local_dampening_probabilities((ctypes.c_double * 4)(*utilities), ctypes.c_size_t(4),
                                                        ctypes.byref(spec), ctypes.c_uint32(dampening),
                                                        ctypes.c_double(1.5), out)
            self.assertEqual(st, 0)
            counts = self.draw("dp_select_local(id, 1.5, u, d, 3.0, '%s')" % option)
            self.assertDistribution(counts, {i + 1: out[i] for i in range(4)})


class Behaviour(Base):
    DRAWS = 50

    def setUp(self):
        super().setUp()
        self.tiny([(1, 10.0, 1.0), (2, 5.0, 1.0), ("x", 1.0, 1.0)], ["id", "s", "d"])

    def test_seed_reproducible_across_connections(self):
        other = connect()
        try:
            other.execute("CREATE TEMP TABLE t(id, s, d)")
            other.executemany("INSERT INTO t VALUES (?, ?, ?)", self.con.execute("SELECT * FROM t").fetchall())
            q = "SELECT dp_select_topk(id, 0.5, 3, s, 1) FROM t"
            seed = "ab" * 32
            self.con.execute("SELECT dp_seed(?)", (seed,))
            other.execute("SELECT dp_seed(?)", (seed,))
            a = [self.con.execute(q).fetchone()[0] for _ in range(20)]
            b = [other.execute(q).fetchone()[0] for _ in range(20)]
            self.assertEqual(a, b)
            self.assertGreater(len(set(a)), 1)
        finally:
            other.close()

    def test_budgets_are_per_connection(self):
        other = connect()
        try:
            self.con.execute("SELECT dp_budget_set(1.0)")
            self.assertIsNone(other.execute("SELECT dp_budget_remaining()").fetchone()[0])
            self.con.execute("SELECT dp_select(id, 0.75, s, 1) FROM t").fetchone()
            self.assertEqual(self.con.execute("SELECT dp_budget_remaining()").fetchone()[0], 0.25)
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.con.execute("SELECT dp_select(id, 0.5, s, 1) FROM t").fetchone()
            self.assertIn("remaining privacy budget is smaller than the epsilon requested", str(cm.exception))
            self.assertEqual(self.con.execute("SELECT dp_budget_remaining()").fetchone()[0], 0.25)
        finally:
            other.close()

    def test_nan_and_none_parameters_raise(self):
        for value in (float("nan"), None):
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.con.execute("SELECT dp_select(id, ?, s, 1) FROM t", (value,)).fetchone()
            self.assertIn("epsilon is NULL", str(cm.exception))
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.con.execute("SELECT dp_select(id, 1, ?, 1) FROM t", (float("inf"),)).fetchone()
        self.assertIn("NaN or infinite", str(cm.exception))
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.con.execute("SELECT dp_select(id, -1, s, 1) FROM t").fetchone()
        self.assertIn("epsilon must be a finite number greater than zero", str(cm.exception))
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.con.execute("SELECT dp_pareto_select(id, 1, s, d) FROM t WHERE 0").fetchone()
        self.assertIn("no candidates", str(cm.exception))

    def test_many_errors_leave_the_connection_usable(self):
        bad = ["SELECT dp_select(id, 1, s) FROM t", "SELECT dp_agg_select(id, 1, 1, s) FROM t",
               "SELECT dp_select_local(id, 1, s, '[1,', 1) FROM t", "SELECT dp_select_topk(id, 1, 9, s, 1) FROM t",
               "SELECT dp_select(id, 1, CASE WHEN id = 2 THEN NULL ELSE s END, 1) FROM t"]
        for _ in range(200):
            for q in bad:
                with self.assertRaises(sqlite3.OperationalError):
                    self.con.execute(q).fetchone()
        self.assertIn(self.con.execute("SELECT dp_select(id, 1, s, 1) FROM t").fetchone()[0], (1, 2, "x"))

    def test_text_ids_and_top_k_json(self):
        got = json.loads(self.con.execute("SELECT dp_select_topk(id, 1, 3, s, 1) FROM t").fetchone()[0])
        self.assertEqual(sorted(map(str, got)), ["1", "2", "x"])


class Enron(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.con = connect(ENRON_DB)
        cls.con.execute("SELECT dp_seed(2024)")
        cls.degree = dict(cls.con.execute("SELECT id, degree FROM nodes"))
        cls.shard = dict(cls.con.execute("SELECT id, shard FROM nodes"))

    @classmethod
    def tearDownClass(cls):
        cls.con.close()

    def test_graph_as_published(self):
        n, m, dmax = self.con.execute("SELECT count(*), sum(degree) / 2, max(degree) FROM nodes").fetchone()
        self.assertEqual((n, m, dmax), (36692, 183831, 1383))

    def test_influential_node_without_group_by(self):
        # A node 60 below the top has relative weight e^-30 at epsilon 1: failure probability < 4e-9.
        top = max(self.degree.values())
        for selector in ("exponential", "permute_and_flip", "gumbel"):
            (pick,) = self.con.execute("SELECT dp_select(id, 1.0, degree, 1.0, ?) FROM nodes", (selector,)).fetchone()
            self.assertIn(pick, self.degree)
            self.assertGreaterEqual(self.degree[pick], top - 60, selector)

    def test_influential_nodes_with_group_by(self):
        self.con.execute("SELECT dp_budget_set(8.0)")
        try:
            rows = self.con.execute("SELECT shard, dp_select(id, 1.0, degree, 1.0) FROM nodes GROUP BY shard").fetchall()
            self.assertEqual(len(rows), 8)
            for shard, pick in rows:
                self.assertEqual(self.shard[pick], shard)
                best = max(d for i, d in self.degree.items() if self.shard[i] == shard)
                self.assertGreaterEqual(self.degree[pick], best - 60)
            self.assertEqual(self.con.execute("SELECT dp_budget_remaining()").fetchone()[0], 0.0)
            with self.assertRaises(sqlite3.OperationalError):
                self.con.execute("SELECT dp_select(id, 1.0, degree, 1.0) FROM nodes").fetchone()
        finally:
            self.con.execute("SELECT dp_budget_set(NULL)")

    def test_local_and_multi_objective_on_enron(self):
        queries = [
            "SELECT dp_select_local(id, 1.0, egodensity, ego_delta, 1.0, 'shifted') FROM nodes",
            "SELECT dp_pareto_select(id, 1.0, degree, egodensity) FROM nodes",
            "SELECT dp_pareto_select_local(id, 1.0, degree, degree_delta, 1, egodensity, ego_delta, 1) FROM nodes",
            "SELECT dp_agg_select(id, 1.0, 1, degree, 1, 10, egodensity, 1) FROM nodes",
            "SELECT dp_agg_select_local(id, 1.0, 1, degree, degree_delta, 1, 10, egodensity, ego_delta, 1) FROM nodes",
        ]
        for q in queries:
            (pick,) = self.con.execute(q).fetchone()
            self.assertIn(pick, self.degree, q)
        rows = self.con.execute("SELECT shard, dp_pareto_select_local_topk(id, 2.0, 3, degree, degree_delta, 1, "
                                "egodensity, ego_delta, 1) FROM nodes WHERE shard < 2 GROUP BY shard").fetchall()
        self.assertEqual(len(rows), 2)
        for shard, picks in rows:
            picks = json.loads(picks)
            self.assertEqual(len(set(picks)), 3)
            self.assertTrue(all(self.shard[p] == shard for p in picks))

    def test_top_10_hubs(self):
        (picks,) = self.con.execute("SELECT dp_select_topk(id, 10.0, 10, degree, 1.0) FROM nodes").fetchone()
        picks = json.loads(picks)
        self.assertEqual(len(set(picks)), 10)
        self.assertTrue(all(self.degree[p] >= 500 for p in picks))


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    bad = len(result.failures) + len(result.errors)
    print("RESULT %d %d" % (result.testsRun - bad - len(result.skipped), bad))
    sys.exit(1 if bad else 0)
