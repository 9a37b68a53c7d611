#!/usr/bin/env python3
"""Runs every code block of the top-level README.md (or of the Markdown file named as the argument, such as
docs/discovery.md), so that what a newcomer copies works as written.

  ```c       compiled as a complete program against target/release/libdpmo.a, and run
  ```sh      run with bash from the repository root, HOME in a scratch folder; a `make test`, `make bench` or
             `make reproduce` line is only dry-run (`make -n`), every other command runs for real
  ```java    compiled and run against the jar of bindings/java/build
  ```python  run by the Python of the wheel's test venv (bindings/python); a block that imports duckdb by the
             DuckDB binding's venv (build/duckdb/venv, with bindings/duckdb/build: `make duckdb` first)
  ```rust    compiled and run by `cargo test --doc` (src/lib.rs includes the README as doctests): checked there
  ```sql     run against SQLite and PostgreSQL by their bindings' test runners (bindings/testdata/snippets.py)
  ```text    not code (diagrams, output)

Any other language, or a block without one, is an error. Prints one line per block and "N passed, N failed".
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.path.join(ROOT, "build", "readme")
ELSEWHERE = {"rust": "cargo test --doc", "sql": "the SQLite and PostgreSQL test runners", "text": None}


def blocks(path):
    out, cur, lang, start = [], None, None, 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if cur is None:
            m = re.match(r"^```(\S*)\s*$", line)
            if m:
                cur, lang, start = [], m.group(1), n
        elif line.startswith("```"):
            out.append((start, lang, "".join(cur)))
            cur = None
        else:
            cur.append(line)
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=kw.pop("cwd", ROOT), **kw)


def check_c(n, code):
    src, exe = os.path.join(BUILD, "snippet_%d.c" % n), os.path.join(BUILD, "snippet_%d" % n)
    open(src, "w").write(code)
    r = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Iinclude", src,
             "target/release/libdpmo.a", "-o", exe])
    if r.returncode != 0:
        return r.stdout + r.stderr
    r = run([exe])
    return None if r.returncode == 0 else "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


def check_sh(n, code):
    dry = re.compile(r"^(\s*)make\s+(test|bench|reproduce)\b")
    lines = [dry.sub(r"\1make -n \2", l) for l in code.splitlines()]
    home = tempfile.mkdtemp(prefix="dpmo-readme-home.")
    try:
        real = os.path.expanduser("~")
        env = dict(os.environ, HOME=home)
        # rustup and cargo keep finding the real toolchain and caches.
        env.setdefault("RUSTUP_HOME", os.path.join(real, ".rustup"))
        env.setdefault("CARGO_HOME", os.path.join(real, ".cargo"))
        env.pop("MAKEFLAGS", None)
        env.pop("MAKELEVEL", None)
        r = run(["bash", "-euo", "pipefail", "-c", "\n".join(lines)], env=env)
        return None if r.returncode == 0 else "exit %d\n%s%s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    finally:
        shutil.rmtree(home, ignore_errors=True)


def check_java(n, code):
    jars = sorted(glob.glob(os.path.join(ROOT, "bindings/java/build/dpmo-[0-9]*[0-9].jar")))
    if not jars:
        return "no jar in bindings/java/build: run `make java` first"
    m = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", code)
    if not m:
        return "no public class"
    d = os.path.join(BUILD, "java_%d" % n)
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, m.group(1) + ".java"), "w").write(code)
    r = run(["javac", "-cp", jars[-1], "-d", d, os.path.join(d, m.group(1) + ".java")])
    if r.returncode != 0:
        return r.stdout + r.stderr
    r = run(["java", "-cp", jars[-1] + os.pathsep + d, m.group(1)])
    return None if r.returncode == 0 else "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


def check_python(n, code):
    py = os.path.join(ROOT, "build", "python", "venv", "bin", "python")
    if re.search(r"^import duckdb\b", code, flags=re.M):
        py = os.path.join(ROOT, "build", "duckdb", "venv", "bin", "python")
        if not os.path.exists(py) or not os.path.exists(os.path.join(ROOT, "bindings/duckdb/build/dpmo-ledger")):
            return "no DuckDB test venv at %s or no bindings/duckdb/build: run `make duckdb` first" % py
    if not os.path.exists(py):
        return "no Python test venv at %s: run `make python` first" % py
    r = run([py, "-c", code])
    return None if r.returncode == 0 else "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


def main():
    readme = os.path.join(ROOT, sys.argv[1] if len(sys.argv) > 1 else "README.md")
    name = os.path.relpath(readme, ROOT)
    os.makedirs(BUILD, exist_ok=True)
    handlers = {"c": check_c, "sh": check_sh, "java": check_java, "python": check_python}
    passed = failed = 0
    for n, lang, code in blocks(readme):
        if lang in ELSEWHERE:
            print("ok   %s:%d %s%s" % (name, n, lang, " (checked by %s)" % ELSEWHERE[lang] if ELSEWHERE[lang] else ""))
            passed += 1
            continue
        handler = handlers.get(lang)
        error = handler(n, code) if handler else "a block must name its language (c, sh, rust, java, sql, python, text)"
        if error is None:
            print("ok   %s:%d %s" % (name, n, lang))
            passed += 1
        else:
            print("FAIL %s:%d %s: %s" % (name, n, lang or "(none)", error))
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
