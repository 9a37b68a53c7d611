"""The ledger and what the analyst can do from SQL, attack by attack (the README's table names these tests).

DuckDB has no users, privileges or authorizer: whoever runs SQL on a database reads its tables. What the
extension guarantees against SQL is that no statement seeds the generator, grants, names or reaches the
ledger (with the host's lock-down: enable_external_access = false, lock_configuration = true), gives ε back
(rollback, reconnect, errors), or gets a selection without its charge (shadowing, prepared statements,
processes, forks).
"""
import os
import subprocess
import textwrap

import duckdb
import pytest

from conftest import (BROKEN_EXT, EXT, PYTHON, TOOL, audit, charges, connect, database, error, grant, remaining,
                      show, small_table)

SQL_MD_FUNCTIONS = {"dp_select", "dp_select_top_k", "dp_select_local", "dp_select_local_top_k", "dp_pareto_select",
                    "dp_pareto_select_top_k", "dp_pareto_select_local", "dp_pareto_select_local_top_k",
                    "dp_agg_select", "dp_agg_select_top_k", "dp_agg_select_local", "dp_agg_select_local_top_k",
                    "dp_discover_partitions", "dp_discover_top_k", "dp_discover_top_k_events", "dp_discover_top_k_sum"}


def run_python(code, env=None, cwd=None):
    return subprocess.run([PYTHON, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})), cwd=cwd)


# ---- SQL cannot seed, grant, choose or reach the ledger

def test_sql_has_no_seed_grant_or_ledger_function_and_no_setting(tmp):
    db, con = database(tmp, epsilon=1)
    names = {r[0] for r in con.execute("SELECT DISTINCT function_name FROM duckdb_functions() "
                                       "WHERE function_name ILIKE '%dp%' OR function_name ILIKE '%ledger%' "
                                       "OR function_name ILIKE '%budget%'").fetchall()}
    scalars = {"dp_budget_remaining", "dp_budget_remaining_delta", "dp_version"}
    assert {n for n in names if n.startswith("dp_")} == SQL_MD_FUNCTIONS | scalars
    assert not {n for n in names if "ledger" in n or ("budget" in n and n not in scalars)}
    assert con.execute("SELECT count(*) FROM duckdb_settings() WHERE name ILIKE '%dpmo%' OR name ILIKE '%ledger%' "
                       "OR name ILIKE '%seed%' OR CAST(value AS VARCHAR) ILIKE '%dpmo-ledger%'").fetchone()[0] == 0
    for sql in ("SELECT dp_seed(1)", "SELECT dp_budget_grant(1)", "SET dpmo_ledger = 'x'", "SET dp_seed = 1"):
        error(con, sql)
    assert remaining(con) == 1
    con.close()


def test_lockdown_keeps_sql_from_every_file_and_from_undoing_it(tmp):
    db, con = database(tmp, epsilon=1, lock=True)
    small_table(con)
    ledger = db + ".dpmo-ledger"
    other = os.path.join(tmp, "evil.duckdb_extension")
    subprocess.run(["cp", BROKEN_EXT, other], check=True)
    for sql in ("SELECT * FROM read_blob('%s')" % ledger, "SELECT * FROM read_text('%s')" % ledger,
                "SELECT * FROM read_csv('%s')" % ledger, "SELECT * FROM glob('%s/*')" % tmp,
                "COPY (SELECT 1) TO '%s'" % ledger, "COPY t TO '%s/t.csv'" % tmp, "ATTACH '%s' AS l" % ledger,
                "ATTACH '%s/new.duckdb' AS n" % tmp, "EXPORT DATABASE '%s/exported'" % tmp,
                "LOAD '%s'" % other, "INSTALL httpfs"):
        msg = error(con, sql)
        assert "disabled" in msg, (sql, msg)
    for sql in ("SET enable_external_access = true", "RESET enable_external_access", "SET lock_configuration = false",
                "SET allow_unsigned_extensions = true", "SET threads = 1"):
        assert "the configuration has been locked" in error(con, sql)
    assert os.path.getsize(ledger) == 2 * 312 and show(ledger) == (1, 0, 1)  # created, grant
    assert con.execute("SELECT dp_select(id, 0.5, s, 1) FROM t").fetchone()[0] in range(1, 6)
    con.close()


def test_without_lockdown_sql_reaches_the_ledger_and_a_replaced_ledger_fails_closed(tmp):
    # What the README says the lock-down is for: without it, SQL reads and overwrites any file, the ledger too.
    db, con = database(tmp, epsilon=1)
    small_table(con)
    ledger = db + ".dpmo-ledger"
    assert con.execute("SELECT size FROM read_blob('%s')" % ledger).fetchone()[0] == 2 * 312
    con.execute("COPY (SELECT 'x' AS a) TO '%s' (FORMAT csv, HEADER false)" % ledger)
    msg = error(con, "SELECT dp_select(id, 0.5, s, 1) FROM t")
    assert msg == "dp_select: the privacy ledger was removed or replaced since this connection opened it; " \
                  "nothing was charged"
    assert ledger not in msg and tmp not in error(con, "SELECT dp_budget_remaining()")
    con.close()
    # reopened, the overwritten file holds no grant: every selection is refused, none is free
    con = connect(db)
    assert error(con, "SELECT dp_select(id, 0.5, s, 1) FROM t") == \
        "dp_select: no privacy budget has been granted in this database's ledger (the host program grants one)"
    con.close()


def test_a_macro_shadowing_a_selection_cannot_reach_the_system_function(tmp):
    # A macro in the database (its creator could have written it into the file) shadows dp_select for
    # unqualified calls, e.g. as an exact argmax, uncharged. The host writes system.main.dp_select.
    db, con = database(tmp, epsilon=1)
    small_table(con)
    con.execute("CREATE MACRO dp_select(i, e, s, d) AS arg_max(i, s)")
    con.execute("CREATE MACRO dp_budget_remaining() AS 1e9")
    assert con.execute("SELECT dp_select(id, 1, s, 1) FROM t").fetchone()[0] == 1
    assert con.execute("SELECT system.main.dp_budget_remaining()").fetchone()[0] == 1
    assert con.execute("SELECT system.main.dp_select(id, 0.5, s, 1) FROM t").fetchone()[0] in range(1, 6)
    assert len(charges(db + ".dpmo-ledger")) == 1
    assert "system catalog" in error(con, "CREATE MACRO system.main.dp_select(a, b, c, d) AS 42")
    assert "internal catalog entry" in error(con, "DROP FUNCTION system.main.dp_select")
    con.execute("CREATE SCHEMA s2")
    con.execute("CREATE MACRO s2.dp_select(a, b, c, d) AS 7")
    con.execute("SET search_path = 's2'")
    assert con.execute("SELECT system.main.dp_select(id, 0.5, main.t.s, 1) FROM main.t").fetchone()[0] in range(1, 6)
    assert show(db + ".dpmo-ledger")[1] == 1
    con.close()


# ---- nothing gives epsilon back

def test_rollback_errors_and_reopening_do_not_refund(tmp):
    db, con = database(tmp, epsilon=1)
    small_table(con)
    con.execute("BEGIN")
    con.execute("SELECT dp_select(id, 0.25, s, 1) FROM t").fetchall()
    con.execute("ROLLBACK")
    assert remaining(con) == 0.75
    # an error later in the statement: the selection ran and was charged
    assert error(con, "SELECT (p::VARCHAR || 'x')::INT FROM (SELECT dp_select(id, 0.25, s, 1) AS p FROM t)") \
        .startswith("Could not convert string")
    assert remaining(con) == 0.5
    con.close()
    con = connect(db)  # a new database instance replays the ledger
    assert remaining(con) == 0.5
    con.execute("SELECT dp_select(id, 0.5, s, 1) FROM t").fetchall()
    assert error(con, "SELECT dp_select(id, 0.125, s, 1) FROM t") == \
        "dp_select: the privacy budget is exhausted (epsilon = 0.125 requested, 0 left); nothing was charged"
    con.close()
    assert [r[1] for r in charges(db + ".dpmo-ledger")] == [0.25, 0.25, 0.5]


def test_argument_errors_are_free_and_the_data_never_errs(tmp):
    db, con = database(tmp, epsilon=1)
    small_table(con)
    bad = ["SELECT dp_select(id, 1, s, 1, 'argmax') FROM t", "SELECT dp_select_top_k(id, 1, 9, s, 1) FROM t",
           "SELECT dp_agg_select(id, 1, [1], [s, s], [1]) FROM t", "SELECT dp_select(id, 2, s, 1) FROM t",
           "SELECT dp_select(id, 1, s, 1) FROM t WHERE id > 9", "SELECT dp_select(id % 2, 1, s, 1) FROM t",
           "SELECT dp_pareto_select_local(id, 1, [s, s], [[1, 1], [1]], [1, 1]) FROM t",
           "SELECT dp_select(id, 1, s, 1, repeat('x', 300)) FROM t",
           "SELECT dp_select_local(id, 1, s, [d, d], 1, 't_max=4') FROM t",
           # too small an epsilon for the isochronous default: a public fact, refused before the charge
           "SELECT dp_select(id, 1e-13, s, 1) FROM t", "SELECT dp_select_top_k(id, 1e-13, 2, s, 1) FROM t",
           "SELECT dp_agg_select(id, 1e-13, [1], [s], [1]) FROM t"]
    for _ in range(50):
        for sql in bad:
            error(con, sql)
    assert remaining(con) == 1 and charges(db + ".dpmo-ledger") == []
    # a NULL utility is data (issue 20, no free probing): the lowest score, charged as any selection
    assert con.execute("SELECT dp_select(id, 0.25, CASE WHEN id = 3 THEN NULL ELSE s END, 1) "
                       "FROM t").fetchone()[0] in range(1, 6)
    assert remaining(con) == 0.75
    # NaN and infinite scores are not errors: chosen by the public rule, charged as any selection
    assert con.execute("SELECT dp_select(id, 0.25, CASE WHEN id = 3 THEN 'nan'::DOUBLE ELSE s END, 1) "
                       "FROM t").fetchone()[0] in range(1, 6)
    assert remaining(con) == 0.5
    con.close()


def test_the_ledger_names_each_mechanism_and_its_arithmetic(tmp):
    # The mechanism label of bindings/common: "/exact" only where the isochronous default was turned off;
    # PrivPareto runs exactly and has no isochronous mode, so it carries no "/exact".
    db, con = database(tmp, epsilon=10)
    small_table(con)
    calls = [("dp_select(id, 0.1, s, 1)", "dp_select/exponential"),
             ("dp_select(id, 0.1, s, 1, 'exact')", "dp_select/exponential/exact"),
             ("dp_select_top_k(id, 0.1, 2, s, 1, 'permute_and_flip')", "dp_select_top_k/permute_and_flip"),
             ("dp_select_local(id, 0.1, s, d, 1, 'shifted exact')", "dp_select_local/exponential/shifted/exact"),
             ("dp_agg_select(id, 0.1, [1], [s], [1])", "dp_agg_select/exponential"),
             ("dp_agg_select(id, 0.1, [1], [s], [1], 'exact')", "dp_agg_select/exponential/exact"),
             ("dp_pareto_select(id, 0.1, [s, s])", "dp_pareto_select/exponential")]
    for expr, _ in calls:
        con.execute("SELECT %s FROM t" % expr).fetchall()
    assert [(c[1], c[2]) for c in charges(db + ".dpmo-ledger")] == [(0.1, label) for _, label in calls]
    con.close()


def test_errors_never_name_the_ledger_file(tmp):
    db, con = database(tmp, "secret-name.duckdb")
    small_table(con)
    msgs = [error(con, "SELECT dp_select(id, 1, s, 1) FROM t")]
    grant(db + ".dpmo-ledger", 0.5)
    msgs.append(error(con, "SELECT dp_select(id, 1, s, 1) FROM t"))
    with open(db + ".dpmo-ledger", "r+b") as f:  # damage the first record
        f.seek(100)
        f.write(b"XXXX")
    con.close()
    con = connect(db)
    msgs.append(error(con, "SELECT dp_select(id, 0.25, s, 1) FROM t"))
    msgs.append(error(con, "SELECT dp_budget_remaining()"))
    assert "the privacy ledger is unusable: record 1 (byte 0) is invalid and is not the last one" in msgs[2]
    assert not [m for m in msgs if "secret-name" in m or tmp in m], msgs
    con.close()


# ---- the ledger: grants, in-memory databases, the host's choice of file

def test_a_grant_reaches_an_open_database_and_in_memory_has_no_ledger(tmp):
    db, con = database(tmp)
    small_table(con)
    assert remaining(con) == 0
    assert error(con, "SELECT dp_select(id, 0.5, s, 1) FROM t") == \
        "dp_select: no privacy budget has been granted in this database's ledger (the host program grants one)"
    grant(db + ".dpmo-ledger", 0.5)
    assert con.execute("SELECT dp_select(id, 0.5, s, 1) FROM t").fetchone()[0] in range(1, 6)
    con.close()
    mem = connect(":memory:")
    small_table(mem)
    assert mem.execute("SELECT dp_budget_remaining()").fetchone()[0] == 0
    assert error(mem, "SELECT dp_select(id, 1, s, 1) FROM t") == \
        "dp_select: no privacy ledger is attached to this database (the host program attaches one: see the README)"
    mem.close()


def test_the_host_chooses_the_ledger_with_an_environment_variable(tmp):
    ledger = os.path.join(tmp, "analyst.dpmo-ledger")
    grant(ledger, 1)
    code = """
        import duckdb
        for path in (":memory:", %r):
            con = duckdb.connect(path, config={"allow_unsigned_extensions": "true"})
            con.load_extension(%r)
            con.execute("SELECT dp_select(i, 0.25, i, 1) FROM range(5) r(i)").fetchall()
            print(con.execute("SELECT dp_budget_remaining()").fetchone()[0])
            con.close()
    """ % (os.path.join(tmp, "file.duckdb"), EXT)
    r = run_python(code, env={"DPMO_DUCKDB_LEDGER": ledger})
    assert r.stdout.split() == ["0.75", "0.5"], r.stderr
    assert not os.path.exists(os.path.join(tmp, "file.duckdb.dpmo-ledger"))  # the variable wins
    # a ledger the variable names but that cannot be created: the load fails (the host's error names it)
    r = run_python(code, env={"DPMO_DUCKDB_LEDGER": "/nonexistent/dir/x.dpmo-ledger"})
    assert r.returncode != 0 and "/nonexistent/dir/x.dpmo-ledger" in r.stderr


# ---- processes: racing, forking, damaged files

def test_concurrent_processes_share_one_ledger(tmp):
    ledger = os.path.join(tmp, "race.dpmo-ledger")
    grant(ledger, 1)
    code = """
        import duckdb
        con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
        con.load_extension(%r)
        for _ in range(20):
            try:
                con.execute("SELECT dp_select(i, 0.0625, i, 1) FROM range(3) r(i)").fetchall()
                print("answered")
            except duckdb.Error as e:
                print("refused" if "the privacy budget is exhausted" in str(e) else e)
    """ % EXT
    env = dict(os.environ, DPMO_DUCKDB_LEDGER=ledger)
    procs = [subprocess.Popen([PYTHON, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(8)]
    out = "".join(p.communicate(timeout=300)[0] for p in procs)
    assert (out.count("answered"), out.count("refused")) == (16, 144), out
    assert show(ledger) == (1, 1, 0) and len(charges(ledger)) == 16


FORK = """
    import duckdb, os, sys
    con = duckdb.connect(%r, config={"allow_unsigned_extensions": "true"})
    con.load_extension(%r)
    con.execute("CREATE TABLE u AS SELECT i AS id FROM range(1000) r(i)")
    con.execute("SELECT dp_select(id, 0.001, 0, 1) FROM u").fetchall()   # the parent draws first
    kids = []
    for _ in range(4):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            picks = con.execute("SELECT dp_select_top_k(id, 0.001, 8, 0, 1) FROM u").fetchone()[0]
            os.write(w, (" ".join(map(str, picks)) + "\\n").encode())
            os._exit(0)
        os.close(w)
        kids.append((pid, r))
    for pid, r in kids:
        os.waitpid(pid, 0)
        sys.stdout.write(os.read(r, 4096).decode())
    # the parent's own stream goes on: not one that a child drew
    picks = con.execute("SELECT dp_select_top_k(id, 0.001, 8, 0, 1) FROM u").fetchone()[0]
    sys.stdout.write(" ".join(map(str, picks)) + "\\n")
"""


@pytest.mark.parametrize("ext,distinct", [(EXT, 5), (BROKEN_EXT, 1)])
def test_fork_children_draw_new_streams_and_share_the_ledger(tmp, ext, distinct):
    # Children of a process that used the extension: each keys its own generator (MADV_WIPEONFORK and the
    # process id), so their 8 picks among 1000 equal candidates differ from each other's and from the picks
    # the parent makes after them; the broken build (no re-keying) repeats the parent's stream in every child.
    # Each child charges through its own open file description.
    db = os.path.join(tmp, "fork.duckdb")
    grant(db + ".dpmo-ledger", 1)
    r = run_python(FORK % (db, ext))
    lines = r.stdout.split("\n")[:-1]
    assert len(lines) == 5, r.stderr
    assert len(set(lines)) == distinct
    assert [c[1] for c in charges(db + ".dpmo-ledger")] == [0.001] * 6


def test_torn_tail_cut_damaged_ledger_fails_closed(tmp):
    db, con = database(tmp, epsilon=1)
    small_table(con)
    con.close()
    ledger = db + ".dpmo-ledger"
    with open(ledger, "ab") as f:  # a writer killed inside its write
        f.write(os.urandom(100))
    con = connect(db)
    assert con.execute("SELECT dp_select(id, 0.25, s, 1) FROM t").fetchone()[0] in range(1, 6)
    assert os.path.getsize(ledger) == 3 * 312 and show(ledger) == (1, 0.25, 0.75)  # the tail cut
    con.close()
    with open(ledger, "r+b") as f:  # a damaged record that is not the last
        f.seek(400)
        f.write(b"XXXX")
    con = connect(db)
    assert "the privacy ledger is unusable" in error(con, "SELECT dp_select(id, 0.25, s, 1) FROM t")
    r = subprocess.run([TOOL, "show", ledger], capture_output=True, text=True)
    assert r.returncode == 1 and "is unusable" in r.stderr  # the host's tool fails closed as well
    con.close()


def test_the_shell_from_pypi_refuses_it_unsigned_and_as_too_old(tmp):
    # duckdb-cli on PyPI is DuckDB 1.5.6: without -unsigned the signature check refuses the file; with it,
    # the extension itself refuses to load into a DuckDB before 2.0 (duckdb/duckdb#21537), before any function
    # or ledger exists.
    from conftest import DUCKDB_CLI
    r = subprocess.run([DUCKDB_CLI, os.path.join(tmp, "x.duckdb")], input="LOAD '%s';\n" % EXT, capture_output=True,
                       text=True, timeout=120)
    assert "signature" in (r.stdout + r.stderr).lower()
    r = subprocess.run([DUCKDB_CLI, "-unsigned", os.path.join(tmp, "x.duckdb")],
                       input="LOAD '%s';\nSELECT dp_version();\n" % EXT, capture_output=True, text=True, timeout=120)
    assert "dpmo: DuckDB v1.5.6 is not supported: dpmo needs DuckDB 2.0 or later" in r.stderr, r.stderr
    assert "dp_version does not exist" in r.stderr and not os.path.exists(os.path.join(tmp, "x.duckdb.dpmo-ledger"))
