"""Shared helpers of the DuckDB binding's tests (pytest, against the duckdb package and shell from PyPI).

Environment (set by the Makefile; defaults for a run from the repository): EXT (build/dpmo.duckdb_extension),
BROKEN_EXT (the deliberately wrong build), TOOL (build/dpmo-ledger), DUCKDB_CLI (the duckdb shell),
FIXTURE_CSV (bindings/testdata/build/enron300.csv), DPMO_LIBDPMO (target/release/libdpmo.so).

Databases and ledgers live in /dev/shm when it exists: the ledger fdatasyncs every charge, and the statistical
tests make tens of thousands of them.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import duckdb
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.dirname(HERE)
ROOT = os.path.normpath(os.path.join(BINDING, "..", ".."))
EXT = os.environ.get("EXT", os.path.join(BINDING, "build", "dpmo.duckdb_extension"))
BROKEN_EXT = os.environ.get("BROKEN_EXT", os.path.join(BINDING, "build", "broken", "dpmo.duckdb_extension"))
TOOL = os.environ.get("TOOL", os.path.join(BINDING, "build", "dpmo-ledger"))
DUCKDB_CLI = os.environ.get("DUCKDB_CLI", os.path.join(ROOT, "build", "duckdb", "venv", "bin", "duckdb"))
FIXTURE_CSV = os.environ.get("FIXTURE_CSV", os.path.join(ROOT, "bindings", "testdata", "build", "enron300.csv"))
LIBDPMO = os.environ.get("DPMO_LIBDPMO", os.path.join(ROOT, "target", "release", "libdpmo.so"))
PYTHON = sys.executable


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="dpmo-duckdb.", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def grant(ledger, epsilon, delta=None):
    extra = [] if delta is None else [repr(float(delta))]
    subprocess.run([TOOL, "grant", ledger, repr(float(epsilon))] + extra, check=True)


def show(ledger):
    """(total, spent, remaining) from `dpmo-ledger show`."""
    out = subprocess.run([TOOL, "show", ledger], check=True, capture_output=True, text=True).stdout.split()
    return float(out[1]), float(out[3]), float(out[5])


def audit(ledger):
    """[(kind, epsilon, mechanism)] from `dpmo-ledger audit` (its sixth field, delta, is audit_delta's)."""
    out = subprocess.run([TOOL, "audit", ledger], check=True, capture_output=True, text=True).stdout
    return [(f[2], float(f[3]), f[4]) for f in (line.split("|") for line in out.splitlines())]


def charges(ledger):
    return [r for r in audit(ledger) if r[0] == "charge"]


def connect(db=":memory:", ext=EXT, lock=False):
    """A connection that loaded the extension the documented way (allow_unsigned_extensions, then LOAD); with
    lock, the host's lock-down after it (no file reachable from SQL, configuration locked)."""
    con = duckdb.connect(db, config={"allow_unsigned_extensions": "true"})
    con.load_extension(ext)
    if lock:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


def database(tmp, name="t.duckdb", epsilon=None, ext=EXT, lock=False):
    """A database file in tmp whose ledger (<file>.dpmo-ledger) holds epsilon, and a connection to it."""
    db = os.path.join(tmp, name)
    if epsilon is not None:
        grant(db + ".dpmo-ledger", epsilon)
    return db, connect(db, ext=ext, lock=lock)


def error(con, sql, params=None):
    """The message of the error that sql raises, without DuckDB's error class ("Invalid Input Error: ")."""
    with pytest.raises(duckdb.Error) as e:
        con.execute(sql, params).fetchall()
    return re.sub(r"^[A-Za-z ]+ Error: ", "", str(e.value).splitlines()[0])


def remaining(con):
    return con.execute("SELECT dp_budget_remaining()").fetchone()[0]


def small_table(con):
    con.execute("CREATE TABLE t (id BIGINT, s DOUBLE, d DOUBLE, g INT)")
    con.execute("INSERT INTO t VALUES (1, 10, 1, 0), (2, 5, 1, 0), (3, 1, 1, 1), (4, 0, 1, 1), (5, 7, 1, 1)")
