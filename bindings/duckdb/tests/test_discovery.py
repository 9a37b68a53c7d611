"""dp_discover_partitions and dp_discover_top_k in DuckDB: raw (unit, item) events, (epsilon, delta) charged once per
group (parallel plans included), NULL units or items dropped, argument errors and pure-epsilon grants charge nothing."""
import subprocess

import pytest

from conftest import LIBDPMO, TOOL, audit, charges, connect, database, error, grant

REFUSED = ("the privacy budget has no delta (it was granted with epsilon only) but delta = 1e-06 is requested; "
           "nothing was charged")


def events(con):
    # 400 units have item 7, 300 item -3, one unit (1000) has item 99 fifty times; NULL units or items: dropped
    con.execute("CREATE TABLE ev AS SELECT i AS u, 7::BIGINT AS i, i % 2 AS g FROM range(400) r(i)")
    con.execute("INSERT INTO ev SELECT i, -3, i % 2 FROM range(300) r(i)")
    con.execute("INSERT INTO ev SELECT 1000, 99, 0 FROM range(50)")
    con.execute("INSERT INTO ev SELECT NULL, 5, 0 FROM range(500)")
    con.execute("INSERT INTO ev SELECT i, NULL, 1 FROM range(500) r(i)")


def deltas(ledger):
    out = subprocess.run([TOOL, "audit", ledger], check=True, capture_output=True, text=True).stdout
    return [(f[3], f[4], f[5]) for f in (line.split("|") for line in out.splitlines()) if f[2] == "charge"]


def test_popular_found_rare_never_and_one_charge_of_epsilon_delta(tmp):
    db, con = database(tmp)
    grant(db + ".dpmo-ledger", 100, 1e-3)
    events(con)
    for mech in ("", ", 'weighted_gaussian'", ", 'truncated_geometric'", ", 'laplace'", ", 'gaussian'", ", 'sips'",
                 ", 'SIPS=3'"):
        got = con.execute("SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1%s) FROM ev" % mech).fetchone()[0]
        assert got == [-3, 7], mech
    assert con.execute("SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 2, 1) FROM ev").fetchone()[0] == [7, -3]
    got = con.execute("SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 3, 1, 5) FROM ev").fetchone()[0]
    assert got[:2] == [7, -3] and 99 not in got
    d = deltas(db + ".dpmo-ledger")
    assert len(d) == 9
    assert d[0] == ("1", "dp_discover_partitions/weighted_gaussian", "1e-06")
    assert d[6] == ("1", "dp_discover_partitions/sips=3", "1e-06")
    assert d[8] == ("1", "dp_discover_top_k/durfee_rogers", "1e-06")
    left = con.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone()
    assert left[0] == pytest.approx(91.0) and left[1] == pytest.approx(1e-3 - 9e-6, abs=1e-15)


@pytest.mark.parametrize("threads", [1, 8])
def test_one_charge_per_group_in_parallel_plans_and_dropped_rows(tmp, threads):
    db, con = database(tmp)
    grant(db + ".dpmo-ledger", 1e6, 0.5)
    con.execute("SET threads = %d" % threads)
    # 10^6 events in many row groups: 64 groups g, each with its own popular item g and a lone item 10^6 + g
    con.execute("CREATE TABLE big AS SELECT i AS u, i % 64 AS g, CASE WHEN i < 64 THEN 1000000 + i ELSE i % 64 END "
                "AS i FROM range(1000000) r(i)")
    got = con.execute("SELECT g, dp_discover_partitions(u, i, 5, 1e-6, 1) FROM big GROUP BY g ORDER BY g").fetchall()
    assert got == [(g, [g]) for g in range(64)]
    # every event of a whole part dropped (NULL items everywhere but in the first 1000 rows): charged, as serially
    got = con.execute("SELECT dp_discover_partitions(u, CASE WHEN u < 1000 THEN 7 END, 5, 1e-6, 1) FROM big").fetchone()
    assert got[0] == [7]
    got = con.execute("SELECT dp_discover_top_k(CASE WHEN u < 0 THEN u END, i, 5, 1e-6, 1, 1) FROM big").fetchone()
    assert got[0] == []
    assert len(charges(db + ".dpmo-ledger")) == 66


def test_pure_epsilon_refuses_and_argument_errors_charge_nothing(tmp):
    db, con = database(tmp, epsilon=5)
    events(con)
    assert error(con, "SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1) FROM ev") == "dp_discover_partitions: " + REFUSED
    assert error(con, "SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 1, 1) FROM ev") == "dp_discover_top_k: " + REFUSED
    grant(db + ".dpmo-ledger", 1, 1e-3)  # a top-up with delta: (6, 1e-3)
    for q in ["SELECT dp_discover_partitions(u, i, 0, 1e-6, 1) FROM ev",
              "SELECT dp_discover_partitions(u, i, 1, 1.5, 1) FROM ev",
              "SELECT dp_discover_partitions(u, i, 1, 1e-6, 0) FROM ev",
              "SELECT dp_discover_partitions(u, i, 1, 1e-6, 1, 'nope') FROM ev",
              "SELECT dp_discover_partitions(u, i, 1e-12, 1e-6, 1000, 'laplace') FROM ev",
              "SELECT dp_discover_partitions(u, i, 1, 1e-6, 1) FROM ev WHERE false",
              "SELECT dp_discover_top_k(u, i, 1, 1e-6, 2, 1, 1) FROM ev",
              "SELECT dp_discover_top_k(u, i, 1, 1e-6, 1, 1, 2000000) FROM ev",
              "SELECT dp_discover_partitions(u, i, 1, 1e-6, 1 + (u > 5)::INT) FROM ev",
              "SELECT dp_discover_partitions(u, i, 7, 1e-6, 1) FROM ev"]:
        error(con, q)
    assert charges(db + ".dpmo-ledger") == []
    assert con.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone() == (6.0, 1e-3)


class CBudget:
    """libdpmo's dpmo_budget: the reference the ledger must equal to the bit (pay what you get included)."""

    def __init__(self, epsilon, delta):
        import ctypes

        class Raw(ctypes.Structure):
            _fields_ = [("total", ctypes.c_double), ("spent", ctypes.c_double), ("delta_total", ctypes.c_double),
                        ("delta_spent", ctypes.c_double)]

        self.c = ctypes
        self.lib = ctypes.CDLL(LIBDPMO)
        self.b = Raw()
        assert self.lib.dpmo_budget_init_approx(ctypes.byref(self.b), ctypes.c_double(epsilon),
                                                ctypes.c_double(delta)) == 0

    def charge(self, epsilon, delta):
        c = self.c
        assert self.lib.dpmo_budget_charge_approx(c.byref(self.b), c.c_double(epsilon), c.c_double(delta)) == 0

    def remaining(self):
        c = self.c
        e, d = c.c_double(), c.c_double()
        assert self.lib.dpmo_budget_remaining_approx(c.byref(self.b), c.byref(e), c.byref(d)) == 0
        return e.value, d.value


def top_k_spent(epsilon, k, released):
    """What dpmo_discover_top_k spends: mul_up(div_down(epsilon, k), released + 1) when it stopped at the
    threshold candidate (released < k), epsilon otherwise; exact, with fractions."""
    import math
    from fractions import Fraction
    if released == k:
        return epsilon
    e0 = epsilon / k
    if Fraction(e0) > Fraction(epsilon) / k:
        e0 = math.nextafter(e0, 0.0)
    s = e0 * (released + 1)
    if Fraction(s) < Fraction(e0) * (released + 1):
        s = math.nextafter(s, math.inf)
    return s


@pytest.mark.parametrize("threads", [1, 4])
def test_top_k_pays_what_it_gets_exactly_as_the_c_budget_and_refunds_replay(tmp, threads):
    # one popular item (400 units): k = 5 stops at the threshold candidate after it and is charged
    # (epsilon/5 (l + 1), delta) — a refund record settles the up-front charge; k = 1 releases k: full charge
    db, con = database(tmp)
    ledger = db + ".dpmo-ledger"
    grant(ledger, 8, 1e-3)
    ref = CBudget(8.0, 1e-3)
    con.execute("SET threads = %d" % threads)
    con.execute("CREATE TABLE ev AS SELECT i AS u, 7::BIGINT AS i, i % 4 AS g FROM range(1600) r(i)")
    con.execute("INSERT INTO ev SELECT i, 100 + i, i % 4 FROM range(30) r(i)")
    left = lambda c: c.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone()
    got = con.execute("SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM ev").fetchone()[0]
    assert got[:1] == [7] and len(got) < 5
    ref.charge(top_k_spent(1.0, 5, len(got)), 1e-6)
    assert left(con) == ref.remaining()  # exact: no tolerance
    stopped = 8.0 - left(con)[0]
    assert con.execute("SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 1, 1) FROM ev").fetchone()[0] == [7]
    ref.charge(1.0, 1e-6)
    assert left(con) == ref.remaining()
    assert stopped < 8.0 - stopped - left(con)[0] == 1.0  # the early stop was charged less than the full run
    # one charge and one refund per group, in a grouped (parallel) plan
    rows = con.execute("SELECT g, dp_discover_top_k(u, i, 0.5, 1e-6, 4, 1) FROM ev GROUP BY g ORDER BY g").fetchall()
    assert [g for g, _ in rows] == [0, 1, 2, 3]
    for _, out in rows:
        assert out[:1] == [7]
        ref.charge(top_k_spent(0.5, 4, len(out)), 1e-6)
    assert left(con) == ref.remaining()
    kinds = [r[0] for r in audit(ledger)]
    assert kinds.count("charge") == 6 and kinds.count("refund") == 5 and kinds.count("format") == 1
    # the listing: each refund right after its charge, settling it at what the run spent
    rows = audit(ledger)
    first = kinds.index("refund")
    assert rows[first - 2][:2] == ("charge", 1.0) and rows[first - 1][0] == "format"
    assert rows[first][1] == top_k_spent(1.0, 5, len(got)) and rows[first][2] == "dp_discover_top_k/durfee_rogers"
    # replayed by a new connection (a restarted process)
    con.close()
    con = connect(db)
    assert left(con) == ref.remaining()
    con.close()
