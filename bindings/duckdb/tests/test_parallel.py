"""DuckDB's parallel aggregation: partial states built by several threads, combined, finalised once per group.

The tables have 1,000,000 rows in 9 row groups, scanned by several threads; the rows of each group are spread
over every row group, so every group is built from several partial states. Checked at threads = 1, 2 and 8:
exactly one charge per group, every row of the group present (top-k with k = the group's size; a repeated id
found across partial states), and, in test_statistics, the output distribution of a split group against
exact probabilities. The deliberately broken build (its combine drops a partial state when the target
already holds rows) passes at one thread and fails at eight: the checks do exercise combine.
"""
import os
import shutil
import subprocess
import tempfile

import duckdb
import pytest

from conftest import BROKEN_EXT, EXT, TOOL, charges, connect, database, error, grant, remaining, show, small_table

ROWS = 1_000_000


def big(con):
    con.execute("CREATE TABLE big AS SELECT i AS id, i %% 16 AS g, (i %% 1000)::DOUBLE AS s FROM range(%d) r(i)" % ROWS)
    # the same rows and id 0 once more, in the last row group
    con.execute("CREATE TABLE dup AS SELECT * FROM big")
    con.execute("INSERT INTO dup VALUES (0, 0, 0)")
    assert con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('big')").fetchone()[0] >= 8


@pytest.fixture(scope="module")
def bigdb():
    d = tempfile.mkdtemp(prefix="dpmo-duckdb.", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    db, con = database(d, "big.duckdb", 1e12)
    big(con)
    yield db, con
    con.close()
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_one_charge_per_group_and_every_row_of_it(bigdb, threads):
    db, con = bigdb
    con.execute("SET threads = %d" % threads)
    ledger = db + ".dpmo-ledger"
    before = len(charges(ledger))
    # no GROUP BY: one group of 10^6 rows; the exact argmax at a huge epsilon is the first id of score 999
    assert con.execute("SELECT dp_select(id, 1e9, s, 1, 'exact') FROM big WHERE s = 999 OR id < 10").fetchone()[0] \
        in range(999, ROWS, 1000)
    # 16 groups (DuckDB's perfect hash aggregate): each pick is a row of its group
    got = con.execute("SELECT g, dp_select(id, 1, s, 1) % 16 = g FROM big GROUP BY g").fetchall()
    assert len(got) == 16 and all(ok for _, ok in got)
    # 100,000 groups of 10 rows (DuckDB's radix hash table): the k = 10 picks are the group's 10 rows
    got = con.execute("SELECT count(*), min(n), max(n), bool_and(ok) FROM (SELECT id % 100000 AS grp, "
                      "len(dp_select_top_k(id, 1, 10, s, 1)) AS n, list_sort(dp_select_top_k(id, 1, 10, s, 1)) "
                      "= list_sort(list(id)) AS ok FROM big GROUP BY grp)").fetchone()
    assert got == (100000, 10, 10, True)
    # 1 + 16 + 100,000 selections (the two identical top-k calls of a group are computed once)
    assert len(charges(ledger)) - before == 1 + 16 + 100000


@pytest.mark.parametrize("threads", [1, 8])
def test_a_repeated_id_is_found_across_partial_states(bigdb, threads):
    db, con = bigdb
    con.execute("SET threads = %d" % threads)
    before = len(charges(db + ".dpmo-ledger"))
    assert error(con, "SELECT dp_select(id, 1, s, 1) FROM dup") == "dp_select: id 0 appears more than once in the group"
    assert error(con, "SELECT g, dp_select(id, 1, s, 1) FROM dup GROUP BY g") == \
        "dp_select: id 0 appears more than once in the group"
    assert len(charges(db + ".dpmo-ledger")) == before  # an argument error: nothing charged


def test_the_checks_catch_a_combine_that_drops_a_partial_state(tmp):
    db, con = database(tmp, "broken.duckdb", 1e12, ext=BROKEN_EXT)
    big(con)
    con.execute("SET threads = 1")  # one partial state per group: the broken combine is never wrong
    assert error(con, "SELECT dp_select(id, 1, s, 1) FROM dup") == "dp_select: id 0 appears more than once in the group"
    assert con.execute("SELECT sum(len(p)) FROM (SELECT id % 100000 AS grp, dp_select_top_k(id, 1, 10, s, 1) AS p "
                       "FROM big GROUP BY grp)").fetchone()[0] == 10 * 100000
    con.execute("SET threads = 8")
    # The repeated id goes unseen when a dropped partial state held one of its two rows: which thread scans
    # which row group is up to DuckDB's scheduler (on a loaded machine one thread may scan both), so the
    # query is tried up to 40 times (about 1 in 7 runs sees the id on a loaded 2-core machine).
    for _ in range(40):
        try:
            con.execute("SELECT dp_select(id, 1, s, 1) FROM dup").fetchone()
            break
        except duckdb.InvalidInputException as e:
            assert "appears more than once" in str(e)
    else:
        raise AssertionError("the broken combine never dropped a row of id 0 in 40 runs at 8 threads")
    assert "exceeds the number of candidates" in error(
        con, "SELECT sum(len(p)) FROM (SELECT id % 100000 AS grp, dp_select_top_k(id, 1, 10, s, 1) AS p FROM big "
        "GROUP BY grp)")
    con.close()


def test_windows_grouping_sets_and_repeated_calls_are_charged_per_selection(tmp):
    db, con = database(tmp, epsilon=1000)
    small_table(con)
    ledger = db + ".dpmo-ledger"

    def charged(sql):
        n = len(charges(ledger))
        con.execute(sql).fetchall()
        return len(charges(ledger)) - n

    # each grouping set's group is a group: (g) has 2, () has 1
    assert charged("SELECT g, dp_select(id, 1, s, 1) FROM t GROUP BY GROUPING SETS ((g), ())") == 3
    assert charged("SELECT g, dp_select(id, 1, s, 1) FROM t GROUP BY ROLLUP (g)") == 3
    # two identical calls are computed once; different ones each charge
    assert charged("SELECT dp_select(id, 1, s, 1) AS a, dp_select(id, 1, s, 1) AS b FROM t") == 1
    assert charged("SELECT dp_select(id, 1, s, 1) AS a, dp_select(id, 0.5, s, 1) AS b FROM t") == 2
    assert charged("SELECT dp_select(DISTINCT id, 1, s, 1) FROM t") == 1
    assert charged("SELECT dp_select(id, 1, s, 1) FILTER (WHERE g = 1) FROM t") == 1
    # a prepared statement charges at every execution
    con.execute("PREPARE p AS SELECT dp_select(id, ?, s, 1) FROM t")
    assert charged("EXECUTE p(0.5)") == 1 and charged("EXECUTE p(0.5)") == 1
    # a window with a frame is evaluated (and charged) once per frame DuckDB computes: 5 rows, 5 frames
    assert charged("SELECT dp_select(id, 1, s, 1) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                   "FROM t") == 5
    # in a scalar subquery: once
    assert charged("SELECT (SELECT dp_select(id, 1, s, 1) FROM t) FROM range(3)") == 1
    con.close()


def test_whole_partition_windows_and_ordered_calls_run_and_charge_once_per_group(tmp):
    # The plans that crashed every C API aggregate before DuckDB 2.0 (duckdb/duckdb#21537: update handed one
    # state for many rows; the extension refuses to load into 1.x): a window over the whole table, ORDER BY
    # inside the call, and both under GROUP BY, each query charged once per group and run 20 times (the crash
    # was intermittent).
    db, con = database(tmp, epsilon=1000)
    con.execute("CREATE TABLE u AS SELECT i AS id, (i % 1000)::DOUBLE AS s, i % 2 AS g FROM range(5000) r(i)")
    for _ in range(20):
        before = remaining(con)
        rows = con.execute("SELECT dp_select(id, 1, s, 1) OVER () FROM u").fetchall()
        assert len(rows) == 5000 and len({r[0] for r in rows}) == 1 and before - remaining(con) == 1
        assert con.execute("SELECT dp_select(id, 1, s, 1 ORDER BY s) FROM u").fetchone()[0] in range(5000)
        picks = con.execute("SELECT g, dp_select_top_k(id, 1, 2, s, 1 ORDER BY s DESC) FROM u GROUP BY g").fetchall()
        assert sorted(g for g, _ in picks) == [0, 1] and all(len(p) == 2 for _, p in picks)
        assert before - remaining(con) == 4
    # a window over partitions that DuckDB aggregates as groups is charged once per partition
    before = remaining(con)
    rows = con.execute("SELECT g, dp_select(id, 1, s, 1) OVER (PARTITION BY g) AS pick FROM u").fetchall()
    assert len({r[1] for r in rows if r[0] == 0}) == 1 and len({r[1] for r in rows if r[0] == 1}) == 1
    assert before - remaining(con) == 2
    con.close()


def test_export_state_finalize_and_combine_are_refused(tmp):
    db, con = database(tmp, epsilon=10)
    small_table(con)
    # (a state holds a pointer: exported, it would give it away; imported, it would be dereferenced)
    assert "export" in error(con, "SELECT dp_select(id, 1, s, 1) EXPORT_STATE FROM t").lower()
    assert "export" in error(con, "SELECT finalize(dp_select(id, 1, s, 1) EXPORT_STATE) FROM t").lower()
    with pytest.raises(duckdb.Error):
        con.execute("SELECT finalize('\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00'::BLOB)").fetchall()
    assert remaining(con) == 10
    con.close()


def test_list_aggregate_and_pivot_charge_per_group(tmp):
    db, con = database(tmp, epsilon=100)
    small_table(con)
    # list_aggregate: each list is a group, charged once
    sql = "SELECT list_aggregate([1, 2, 3]::BIGINT[], 'dp_select', 1.0, 5.0, 1.0)"
    assert con.execute(sql).fetchone()[0] in (1, 2, 3)
    assert remaining(con) == 99
    grant(db + ".dpmo-ledger", 1)
    assert remaining(con) == 100
    # PIVOT: each cell is a group (g = 0 and g = 1), charged once
    assert len(con.execute("PIVOT t ON g USING dp_select(id, 1, s, 1)").fetchall()) == 1
    assert remaining(con) == 98
    con.close()


def test_delta_grants_and_remaining_delta(tmp):
    """(epsilon, delta) budgets: a grant without delta is pure-epsilon (delta left 0); a top-up with delta shows
    it in dp_budget_remaining_delta(); the selections (pure epsilon) charge epsilon only, the delta stays;
    the ledger tool shows both."""
    db, con = database(tmp)
    assert con.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone() == (0.0, 0.0)
    ledger = db + ".dpmo-ledger"
    grant(ledger, 1)
    assert con.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone() == (1.0, 0.0)
    grant(ledger, 0.5, 1e-6)
    assert con.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone() == (1.5, 1e-6)
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 3.0), (2, 2.0)) v(id, s)")
    con.execute("SELECT dp_select(id, 0.5, s, 1) FROM t").fetchone()
    assert con.execute("SELECT dp_budget_remaining(), dp_budget_remaining_delta()").fetchone() == (1.0, 1e-6)
    assert show(ledger) == (1.5, 0.5, 1.0)
    out = subprocess.run([TOOL, "show", ledger], check=True, capture_output=True, text=True).stdout
    assert out.strip().endswith("delta total 1e-06 spent 0 remaining 1e-06")
    con.close()
