#!/usr/bin/python3
"""Checks one engine against the SQL surface written down in bindings/SQL.md:

  * the function table of SQL.md (names, argument names and order, the optional options argument) against
    the engine's catalog (PostgreSQL: pg_proc with argument types; SQLite: pragma_function_list; DuckDB:
    duckdb_functions() with argument types, every overload);
  * every case of surface.cases (same results, same error texts in every engine).

  surface.py sqlite     EXT = path of build/dpmo.so (Debian's /usr/bin/python3 can load extensions)
  surface.py postgres   PGHOST, PGPORT, PGUSER of a server with dpmo preloaded; the user holds a budget;
                        the extension's schema dpmo on the search path (PGOPTIONS='-c search_path=dpmo,public')
  surface.py duckdb     EXT = path of build/dpmo.duckdb_extension (run by the Python of a venv holding the
                        duckdb package; build/dpmo-ledger beside it grants the budget)

Prints one line per check and "N passed, N failed" last; exits 1 when anything failed.
"""
import ctypes
import itertools
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SQL_MD = os.path.join(HERE, "..", "SQL.md")
CASES = os.path.join(HERE, "surface.cases")

# The type of each argument name in PostgreSQL (SQLite: numbers, or JSON text for arrays).
PG_TYPES = {
    "id": ["bigint"], "epsilon": ["double precision"], "k": ["integer"], "score": ["double precision"],
    "utility": ["double precision"], "sensitivity": ["double precision"],
    "delta": ["double precision", "double precision[]"], "utilities": ["double precision[]"],
    "deltas": ["double precision[]"], "weights": ["double precision[]"], "sensitivities": ["double precision[]"],
    "options": ["text"], "unit": ["bigint"], "item": ["bigint"], "max_items": ["integer"], "k_bar": ["integer"],
    "mechanism": ["text"], "value": ["double precision"], "max_per_item": ["integer"], "lo": ["double precision"],
    "hi": ["double precision"],
}
# The same in DuckDB (lists for arrays; one overload per choice, every one of them registered).
DUCKDB_TYPES = {
    "id": ["BIGINT"], "epsilon": ["DOUBLE"], "k": ["BIGINT"], "score": ["DOUBLE"], "utility": ["DOUBLE"],
    "sensitivity": ["DOUBLE"], "delta": ["DOUBLE", "DOUBLE[]"], "utilities": ["DOUBLE[]"],
    "deltas": ["DOUBLE[]", "DOUBLE[][]"], "weights": ["DOUBLE[]"], "sensitivities": ["DOUBLE[]"],
    "options": ["VARCHAR"], "unit": ["BIGINT"], "item": ["BIGINT"], "max_items": ["BIGINT"], "k_bar": ["BIGINT"],
    "mechanism": ["VARCHAR"], "value": ["DOUBLE"], "max_per_item": ["BIGINT"], "lo": ["DOUBLE"], "hi": ["DOUBLE"],
}


def spec_functions():
    """{name: [argument names]} from the function tables of SQL.md: rows "| `dp_x(a, b [, options])` | ..." (the
    discovery functions' optional last argument is named otherwise: "[, mechanism]", "[, k_bar]")."""
    out = {}
    for line in open(SQL_MD, encoding="utf-8"):
        m = re.match(r"\|\s*`(dp_[a-z_]+)\(([^)]*)\)`\s*\|", line)
        opt = m and re.search(r"\s*\[, ([a-z_]+)\]$", m.group(2))
        if opt:
            out[m.group(1)] = [a.strip() for a in m.group(2)[:opt.start()].split(",")]
            OPTIONAL[m.group(1)] = opt.group(1)
    return out


OPTIONAL = {}  # the optional last argument of each function: "options", "mechanism" or "k_bar"


def read_cases():
    setup, cases = [], []
    for line in open(CASES, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        if line.startswith("setup: "):
            setup.append(line[len("setup: "):])
        elif line.startswith("=> "):
            cases[-1][1].append(line[3:])
        elif line.startswith("=>") and " " in line:
            # "=>postgres ERROR: ...": what one engine answers instead (its lines replace the others')
            engine, text = line[2:].split(" ", 1)
            cases[-1][2].setdefault(engine, []).append(text)
        else:
            cases.append((line, [], {}))
    return setup, cases


def to_sqlite(sql):
    """ARRAY[...] (possibly nested) -> dp_array(...)."""
    out, i = [], 0
    stack = []
    while i < len(sql):
        if sql.startswith("ARRAY[", i):
            out.append("dp_array(")
            stack.append(True)
            i += 6
        elif sql[i] == "[" :
            stack.append(False)
            out.append("[")
            i += 1
        elif sql[i] == "]" and stack:
            out.append(")" if stack.pop() else "]")
            i += 1
        else:
            out.append(sql[i])
            i += 1
    return "".join(out)


def normalise(value):
    """PostgreSQL's {1,2} and SQLite's [1,2] compare equal; numbers compare as numbers (2 = 2.0)."""
    v = value.strip()
    if v.startswith("{") and v.endswith("}"):
        v = "[" + v[1:-1] + "]"
    try:
        return repr(float(v))
    except ValueError:
        return v


class Sqlite:
    def __init__(self):
        import sqlite3
        self.tmp = tempfile.mkdtemp(prefix="dpmo-surface.")
        db = os.path.join(self.tmp, "surface.db")
        ext = os.path.abspath(os.environ.get("EXT", os.path.join(HERE, "..", "sqlite", "build", "dpmo.so")))
        lib = ctypes.CDLL(ext)
        lib.dpmo_sqlite_grant.argtypes = [ctypes.c_char_p, ctypes.c_double, ctypes.c_void_p]
        if lib.dpmo_sqlite_grant((db + ".dpmo-ledger").encode(), 1e15, None) != 0:
            raise SystemExit("cannot grant a budget to the test database")
        self.con = sqlite3.connect(db, isolation_level=None)
        self.con.enable_load_extension(True)
        self.con.load_extension(ext)
        self.con.enable_load_extension(False)

    def run(self, sql):
        try:
            rows = self.con.execute(to_sqlite(sql)).fetchall()
        except Exception as e:  # sqlite3.OperationalError and friends
            return ["ERROR: " + str(e)]
        return ["|".join("" if x is None else str(x) for x in row) for row in rows]

    def functions(self):
        rows = self.con.execute("SELECT name, narg FROM pragma_function_list "
                                "WHERE name LIKE 'dp\\_%' ESCAPE '\\' AND type = 'a'").fetchall()
        out = {}
        for name, narg in rows:
            out.setdefault(name, set()).add(narg)
        return out

    def close(self):
        self.con.close()
        subprocess.run(["rm", "-rf", self.tmp], check=False)


class Duckdb:
    def __init__(self):
        import duckdb
        self.error = duckdb.Error
        self.tmp = tempfile.mkdtemp(prefix="dpmo-surface.")
        db = os.path.join(self.tmp, "surface.duckdb")
        ext = os.path.abspath(os.environ.get("EXT", os.path.join(HERE, "..", "duckdb", "build",
                                                                 "dpmo.duckdb_extension")))
        tool = os.environ.get("TOOL", os.path.join(os.path.dirname(ext), "dpmo-ledger"))
        subprocess.run([tool, "grant", db + ".dpmo-ledger", "1e15"], check=True)
        self.con = duckdb.connect(db, config={"allow_unsigned_extensions": "true"})
        self.con.load_extension(ext)  # the ledger is <database>.dpmo-ledger

    @staticmethod
    def text(x):
        if x is None:
            return ""
        if isinstance(x, list):
            return "[" + ",".join(Duckdb.text(v) for v in x) + "]"
        return str(x)

    def run(self, sql):
        try:
            rows = self.con.execute(sql).fetchall()
        except self.error as e:  # "Invalid Input Error: dp_select: ...": the engine's error class, then ours
            return ["ERROR: " + re.sub(r"^[A-Za-z ]+ Error: ", "", str(e).splitlines()[0])]
        return ["|".join(self.text(x) for x in row) for row in rows]

    def functions(self):
        rows = self.con.execute("SELECT function_name, parameter_types FROM duckdb_functions() "
                                "WHERE function_name LIKE 'dp\\_%' ESCAPE '\\' AND function_type = 'aggregate'").fetchall()
        out = {}
        for name, types in rows:
            out.setdefault(name, set()).add(tuple(types))
        return out

    def close(self):
        self.con.close()
        subprocess.run(["rm", "-rf", self.tmp], check=False)


class Postgres:
    def __init__(self):
        self.db = "surface_%d" % os.getpid()
        self.psql(["-c", "CREATE DATABASE " + self.db], db="postgres")
        self.psql(["-c", "CREATE EXTENSION dpmo"])

    def psql(self, args, check=True, db=None):
        r = subprocess.run(["psql", "-X", "-q", "-At", "-d", db or self.db] + args, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SystemExit("psql failed: " + r.stderr)
        return r

    def run(self, sql):
        r = self.psql(["-c", sql], check=False)
        if r.returncode != 0:
            for line in r.stderr.splitlines():
                if line.startswith("ERROR:"):
                    return ["ERROR: " + line[len("ERROR:"):].strip()]
            return ["ERROR: " + r.stderr.strip()]
        return [line for line in r.stdout.splitlines()]

    def functions(self):
        r = self.psql(["-F", "\t", "-c",
                       "SELECT p.proname, pg_get_function_identity_arguments(p.oid) FROM pg_proc p "
                       "JOIN pg_namespace n ON n.oid = p.pronamespace "
                       "WHERE p.prokind = 'a' AND p.proname LIKE 'dp\\_%' AND n.nspname = 'dpmo'"])
        out = {}
        for line in r.stdout.splitlines():
            name, args = line.split("\t")
            out.setdefault(name, []).append([a.strip().split(" ", 1) for a in args.split(",")])
        return out

    def close(self):
        self.psql(["-c", "DROP DATABASE " + self.db], check=False, db="postgres")


def main():
    engine = sys.argv[1] if len(sys.argv) > 1 else ""
    if engine not in ("sqlite", "postgres", "duckdb"):
        raise SystemExit("usage: surface.py sqlite|postgres|duckdb")
    e = {"sqlite": Sqlite, "postgres": Postgres, "duckdb": Duckdb}[engine]()
    passed = failed = 0

    def report(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok   " + what)
        else:
            failed += 1
            print("FAIL " + what)

    try:
        spec = spec_functions()
        report(len(spec) == 16, "SQL.md lists the 16 functions (%d found)" % len(spec))
        have = e.functions()
        report(set(have) == set(spec), "%s has exactly the functions of SQL.md (extra: %s, missing: %s)"
               % (engine, sorted(set(have) - set(spec)), sorted(set(spec) - set(have))))
        for name, args in sorted(spec.items()):
            if engine == "sqlite":
                ok = have.get(name) == {len(args), len(args) + 1}
                report(ok, "%s takes %d or %d arguments (%s)" % (name, len(args), len(args) + 1, sorted(have.get(name, []))))
            elif engine == "duckdb":
                # every choice of the types of SQL.md, with and without options, and nothing else
                want = set()
                # the discovery functions' delta is the guarantee's δ (a number), not a local sensitivity
                types = [["DOUBLE"] if a == "delta" and name.startswith("dp_discover") else DUCKDB_TYPES[a]
                         for a in args]
                for sig in itertools.product(*types):
                    want.add(sig)
                    want.add(sig + (DUCKDB_TYPES[OPTIONAL[name]][0],))
                got = have.get(name, set())
                report(got == want, "%s(%s [, %s]): %d overloads, types %s" % (
                    name, ", ".join(args), OPTIONAL[name], len(got), "as specified" if got == want else
                    "extra %s, missing %s" % (sorted(got - want), sorted(want - got))))
            else:
                sigs = have.get(name, [])
                names = sorted({tuple(a[0] for a in s) for s in sigs})
                want = sorted({tuple(args), tuple(args + [OPTIONAL[name]])})
                types_ok = all(a[1] in PG_TYPES.get(a[0], []) for s in sigs for a in s)
                report(names == want and types_ok,
                       "%s(%s [, %s]): argument names %s, types %s" % (
                           name, ", ".join(args), OPTIONAL[name], "as specified" if names == want else names,
                           "as specified" if types_ok else sigs))
        setup, cases = read_cases()
        for sql in setup:
            got = e.run(sql)
            if got and got[0].startswith("ERROR"):
                report(False, "setup %s: %s" % (sql, got))
        for sql, want, instead in cases:
            want = instead.get(engine, want)
            got = e.run(sql)
            ok = [normalise(x) for x in got] == [normalise(x) for x in want]
            report(ok, sql if ok else "%s\n     expected: %s\n     actual:   %s" % (sql, want, got))
    finally:
        e.close()
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
