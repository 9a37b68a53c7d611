"""dp_discover_partitions and dp_discover_top_k in DuckDB: raw (unit, item) events, (epsilon, delta) charged once per
group (parallel plans included), NULL units or items dropped, argument errors and pure-epsilon grants charge nothing."""
import subprocess

import pytest

from conftest import TOOL, charges, database, error, grant

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
