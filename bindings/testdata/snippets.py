#!/usr/bin/python3
"""Runs every ```sql block of a binding's README, so that what a reader copies works as written.

  snippets.py postgres README.md   psql against PGHOST/PGPORT/PGUSER (a superuser, dpmo preloaded); each block
                                   in a fresh database with the extension created
  snippets.py sqlite README.md     the sqlite3 shell on a fresh database file in a temporary directory; a
                                   comment "dpmo-ledger grant FILE EPSILON" in the block is done first (by
                                   build/dpmo-ledger, as the README's shell lines do); FILE's directory is
                                   the temporary one

A page showing both engines (docs/sql.md) marks each block with a first line "-- sqlite" or
"-- postgres"; a tagged block runs only on its own engine. Both run from the repository root, as the READMEs'
commands do. A statement annotated "-- error: TEXT" must
fail with a message containing TEXT; every other statement must succeed. Prints one line per block and
"N passed, N failed" last.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def blocks(readme):
    out, cur, lang, start = [], None, None, 0
    for n, line in enumerate(open(readme, encoding="utf-8"), 1):
        if cur is None:
            m = re.match(r"^```(\w+)\s*$", line)
            if m:
                cur, lang, start = [], m.group(1), n
        elif line.startswith("```"):
            if lang == "sql":
                out.append((start, "".join(cur)))
            cur = None
        else:
            cur.append(line)
    return out


def expected_errors(sql):
    return re.findall(r"--\s*error:\s*(.+?)\s*$", sql, flags=re.M)


def run_postgres(n, sql):
    db = "snippet_%d_%d" % (os.getpid(), n)
    subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c", "CREATE DATABASE " + db], check=True,
                   capture_output=True)
    try:
        subprocess.run(["psql", "-X", "-q", "-d", db, "-c", "CREATE EXTENSION dpmo"], check=True, capture_output=True)
        r = subprocess.run(["psql", "-X", "-q", "-d", db, "-v", "ON_ERROR_STOP=0", "-f", "-"], input=sql,
                           capture_output=True, text=True, cwd=ROOT)
        errors = [m.group(1) for m in re.finditer(r"ERROR:\s+(.*)", r.stderr)]
        return errors, r.stdout + r.stderr
    finally:
        subprocess.run(["psql", "-X", "-q", "-d", "postgres", "-c", "DROP DATABASE " + db], capture_output=True)


def run_sqlite(n, sql):
    tmp = tempfile.mkdtemp(prefix="dpmo-snippet.")
    try:
        tool = os.path.join(ROOT, "bindings", "sqlite", "build", "dpmo-ledger")
        for ledger, eps in re.findall(r"dpmo-ledger grant (\S+) ([0-9.eE+-]+)", sql):
            subprocess.run([tool, "grant", os.path.join(tmp, os.path.basename(ledger)), eps], check=True)
        m = re.search(r"^--\s*sqlite3 (\S+)", sql, flags=re.M)
        db = os.path.join(tmp, os.path.basename(m.group(1)) if m else "snippet.db")
        r = subprocess.run(["sqlite3", db], input=sql, capture_output=True, text=True, cwd=ROOT)
        errors = [m.group(1) for m in re.finditer(r"(?:Error|error)[^:]*: (?:.*?near line \d+: )?(.*)", r.stderr)]
        return errors, r.stdout + r.stderr
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("postgres", "sqlite"):
        raise SystemExit("usage: snippets.py postgres|sqlite README.md")
    engine, readme = sys.argv[1], os.path.abspath(sys.argv[2])
    passed = failed = 0
    found = blocks(readme)
    if not found:
        print("FAIL no ```sql block in %s" % readme)
        failed += 1
    other = "-- postgres" if engine == "sqlite" else "-- sqlite"
    found = [(line, sql) for line, sql in found if not sql.lstrip().startswith(other)]
    for line, sql in found:
        want = expected_errors(sql)
        errors, output = (run_postgres if engine == "postgres" else run_sqlite)(line, sql)
        ok = len(errors) == len(want) and all(w in e for w, e in zip(want, errors))
        if ok:
            passed += 1
            print("ok   %s:%d (%d statements expected to fail)" % (os.path.basename(readme), line, len(want)))
        else:
            failed += 1
            print("FAIL %s:%d: expected errors %s, got %s\n%s" % (os.path.basename(readme), line, want, errors, output))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
