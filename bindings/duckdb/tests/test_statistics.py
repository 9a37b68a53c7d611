"""Output distributions against exact probabilities: chi-square at a significance level of 1e-6.

Many selections are drawn in one query (GROUP BY over a table of repetitions, each group the same candidates)
and their frequencies compared with closed forms (exponential mechanism, permute-and-flip, PrivPareto and
PrivAgg globally, sequential top-k) and, for local dampening, libdpmo.so's own exact probabilities
(dpmo_local_dampening_probabilities, through ctypes). The isochronous default and the exact arithmetic are
both checked. A group split over partial states by a parallel plan has the same distribution as a serial one
(threads = 1 and 8; the broken build that drops a partial state fails the same test). The generator is keyed
by the operating system (SQL cannot seed it), so a run fails by chance with probability about 1e-6 per test.
"""
import ctypes
import itertools
import math
import os

import pytest

from conftest import BROKEN_EXT, LIBDPMO, database

# Chi-square critical values at significance 1e-6 for 1..15 degrees of freedom.
CHI2_CRIT = {1: 23.93, 2: 27.63, 3: 30.66, 4: 33.38, 5: 35.89, 6: 38.26, 7: 40.52, 8: 42.70, 9: 44.81,
             10: 46.86, 11: 48.87, 12: 50.83, 13: 52.75, 14: 54.64, 15: 56.50}
DRAWS = 20000
SCORES = [(1, 0.0), (2, 1.0), (3, 2.5), (4, 3.0)]


def softmax(xs):
    top = max(xs)
    w = [math.exp(x - top) for x in xs]
    return [x / sum(w) for x in w]


def exponential_probs(scores, eps, sens):
    return {i: q for (i, _), q in zip(scores, softmax([eps * s / (2 * sens) for _, s in scores]))}


def permute_and_flip_probs(scores, eps, sens):
    # Permute-and-flip (McKenna & Sheldon 2020): inclusion-exclusion over the candidates visited first.
    top = max(s for _, s in scores)
    acc = {i: math.exp(eps * (s - top) / (2 * sens)) for i, s in scores}
    ids = [i for i, _ in scores]
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
    assert abs(sum(probs.values()) - 1.0) < 1e-12
    return probs


def chi_square(counts, probs, total):
    stat, dof = 0.0, -1
    for key, p in probs.items():
        if p * total < 1e-9:
            if counts.get(key, 0) != 0:
                return float("inf"), 1
            continue
        dof += 1
        stat += (counts.get(key, 0) - p * total) ** 2 / (p * total)
    if set(counts) - set(probs):
        return float("inf"), 1
    return stat, max(dof, 1)


def passes(counts, probs, total=DRAWS):
    stat, dof = chi_square(counts, probs, total)
    return stat < CHI2_CRIT[min(dof, 15)]


@pytest.fixture
def db(tmp):
    path, con = database(tmp, epsilon=1e9)
    con.execute("CREATE TABLE reps AS SELECT i AS rep FROM range(%d) r(i)" % DRAWS)
    yield con
    con.close()


def tiny(con, rows, columns):
    con.execute("DROP TABLE IF EXISTS t")
    con.execute("CREATE TABLE t (%s)" % ", ".join(columns))
    con.executemany("INSERT INTO t VALUES (%s)" % ", ".join("?" * len(columns)), rows)


def draw(con, expr, table="reps, t", total=DRAWS):
    counts = {}
    for (v,) in con.execute("SELECT %s FROM %s GROUP BY rep" % (expr, table)).fetchall():
        key = "[%s]" % ",".join(str(x) for x in v) if isinstance(v, list) else v
        counts[key] = counts.get(key, 0) + 1
    assert sum(counts.values()) == total
    return counts


@pytest.mark.parametrize("arith", ["", " exact"])
def test_exponential_mechanism_and_gumbel_noisy_max(db, arith):
    tiny(db, SCORES, ["id BIGINT", "s DOUBLE"])
    assert passes(draw(db, "dp_select(id, 1.0, s, 1.0, 'exponential%s')" % arith), exponential_probs(SCORES, 1.0, 1.0))
    assert passes(draw(db, "dp_select(id, 2.0, s, 2.0, 'noisy_max_gumbel%s')" % arith),
                  exponential_probs(SCORES, 2.0, 2.0))


@pytest.mark.parametrize("arith", ["", " exact"])
def test_permute_and_flip_and_exponential_noisy_max(db, arith):
    tiny(db, SCORES, ["id BIGINT", "s DOUBLE"])
    probs = permute_and_flip_probs(SCORES, 1.0, 1.0)
    assert passes(draw(db, "dp_select(id, 1.0, s, 1.0, 'permute_and_flip%s')" % arith), probs)
    assert passes(draw(db, "dp_select(id, 1.0, s, 1.0, 'noisy_max_exponential%s')" % arith), probs)


def test_top2_is_the_sequential_exponential_mechanism(db):
    tiny(db, SCORES, ["id BIGINT", "s DOUBLE"])
    probs = {}
    first = exponential_probs(SCORES, 1.0, 1.0)
    for a, _ in SCORES:
        rest = [(i, s) for i, s in SCORES if i != a]
        second = exponential_probs(rest, 1.0, 1.0)
        for b, _ in rest:
            probs["[%d,%d]" % (a, b)] = first[a] * second[b]
    assert passes(draw(db, "dp_select_top_k(id, 2.0, 2, s, 1.0)"), probs)


def test_privpareto_global_textbook_and_weak(db):
    # Ties (1 and 6 are equal) separate the two relations; textbook is the default.
    rows = [(1, 1.0, 5.0), (2, 2.0, 4.0), (3, 0.5, 0.5), (4, 2.0, 1.0), (5, 0.0, 0.0), (6, 1.0, 5.0)]
    tiny(db, rows, ["id BIGINT", "u1 DOUBLE", "u2 DOUBLE"])
    eps, n = 8.0, len(rows)
    for option, strict in (("", True), (", 'weak'", False)):
        ps = [-sum(1 for o in rows if o is not r and o[1] >= r[1] and o[2] >= r[2]
                   and (not strict or o[1] > r[1] or o[2] > r[2])) for r in rows]
        p = softmax([eps * s / (2 * (n - 1)) for s in ps])
        assert passes(draw(db, "dp_pareto_select(id, 8.0, [u1, u2]%s)" % option), {r[0]: q for r, q in zip(rows, p)})


@pytest.mark.parametrize("arith", ["", ", 'exact'"])
def test_privagg_global(db, arith):
    rows = [(1, 1.0, 5.0), (2, 2.0, 4.0), (3, 0.5, 0.5), (4, 3.0, 1.0)]
    tiny(db, rows, ["id BIGINT", "u1 DOUBLE", "u2 DOUBLE"])
    w, sens, eps = (0.5, -0.25), (1.0, 2.0), 3.0
    agg = [w[0] * r[1] + w[1] * r[2] for r in rows]
    d_agg = abs(w[0]) * sens[0] + abs(w[1]) * sens[1]
    p = softmax([eps * a / (2 * d_agg) for a in agg])
    assert passes(draw(db, "dp_agg_select(id, 3.0, [0.5, -0.25], [u1, u2], [1, 2]%s)" % arith), {r[0]: q for r, q in zip(rows, p)})


@pytest.mark.skipif(not os.path.exists(LIBDPMO), reason="target/release/libdpmo.so not built")
def test_local_dampening_matches_libdpmo_exact_probabilities(db):
    lib = ctypes.CDLL(LIBDPMO)

    class Spec(ctypes.Structure):
        _fields_ = [("kind", ctypes.c_uint32), ("values", ctypes.POINTER(ctypes.c_double)),
                    ("values_len", ctypes.c_size_t), ("columns", ctypes.c_size_t),
                    ("callback", ctypes.c_void_p), ("context", ctypes.c_void_p),
                    ("global_", ctypes.c_double), ("t_max", ctypes.c_size_t)]

    utilities = [10.0, 9.0, 4.0, 1.0]
    table = [[0.5, 1.0, 2.0], [1.0, 1.0, 3.0], [0.25, 0.5, 1.0], [2.0, 2.0, 2.0]]  # delta(t, r), T = 3
    flat = (ctypes.c_double * 12)(*[x for row in table for x in row])
    spec = Spec(1, flat, 12, 3, None, None, 3.0, 3)  # DPMO_DELTA_TABLE, global sensitivity 3
    tiny(db, [(i + 1, u, d) for i, (u, d) in enumerate(zip(utilities, table))], ["id BIGINT", "u DOUBLE", "d DOUBLE[]"])
    for dampening, option in ((0, "plain"), (1, "shifted"), (1, "shifted exact")):
        out = (ctypes.c_double * 4)()
        st = lib.dpmo_local_dampening_probabilities((ctypes.c_double * 4)(*utilities), ctypes.c_size_t(4),
                                                    ctypes.byref(spec), ctypes.c_uint32(dampening),
                                                    ctypes.c_double(1.5), out)
        assert st == 0
        assert passes(draw(db, "dp_select_local(id, 1.5, u, d, 3.0, '%s')" % option), {i + 1: out[i] for i in range(4)})


def test_checker_catches_a_wrong_distribution(db):
    # The same draws tested against the exponential mechanism at twice the epsilon must fail.
    tiny(db, SCORES, ["id BIGINT", "s DOUBLE"])
    assert not passes(draw(db, "dp_select(id, 1.0, s, 1.0)"), exponential_probs(SCORES, 2.0, 1.0))


# ---- a group split over the partial states of a parallel plan

SPLIT_REPS = 60000
SPLIT = [(c, float(c) / 2) for c in range(8)]  # 8 candidates, scores 0 to 3.5


def spread(con):
    """480,000 rows, candidate-major: the 8 rows of each repetition lie in 4 different row groups."""
    con.execute("CREATE TABLE spread AS SELECT c AS id, c / 2 AS s, rep FROM range(8) a(c), range(%d) b(rep) "
                "ORDER BY c, rep" % SPLIT_REPS)
    assert con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('spread')").fetchone()[0] >= 4


@pytest.mark.parametrize("threads", [1, 8])
def test_a_group_split_by_a_parallel_plan_has_the_serial_distribution(tmp, threads):
    path, con = database(tmp, epsilon=1e9)
    spread(con)
    con.execute("SET threads = %d" % threads)
    counts = draw(con, "dp_select(id, 1.0, s, 1.0)", table="spread", total=SPLIT_REPS)
    assert passes(counts, exponential_probs(SPLIT, 1.0, 1.0), SPLIT_REPS)
    con.close()


def test_the_split_check_catches_a_combine_that_drops_a_partial_state(tmp):
    path, con = database(tmp, epsilon=1e9, ext=BROKEN_EXT)
    spread(con)
    con.execute("SET threads = 8")
    counts = draw(con, "dp_select(id, 1.0, s, 1.0)", table="spread", total=SPLIT_REPS)
    assert not passes(counts, exponential_probs(SPLIT, 1.0, 1.0), SPLIT_REPS)
    con.close()
