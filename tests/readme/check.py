#!/usr/bin/env python3
"""Runs every code block of README.md and of the pages of docs/, so that what a newcomer copies works as written.

  ```c       compiled as a complete program against target/release/libdpmo.a, and run
  ```sh      run with bash from the repository root, HOME in a scratch folder; a `make test`, `make bench`,
             `make reproduce` or `make -C bindings/postgres install` (system-wide) line is only dry-run
             (`make -n`), every other command runs for real
  ```java    compiled and run against the jar of bindings/java/build
  ```python  run by the Python of the wheel's test venv (bindings/python); a block that imports duckdb by the
             DuckDB binding's venv (build/duckdb/venv, with bindings/duckdb/build: `make duckdb` first)
  ```rust    compiled and run by `cargo test --doc`: checked there; the page must be one src/lib.rs includes
             as doctests
  ```sql     run against SQLite and PostgreSQL by their bindings' test runners (bindings/testdata/snippets.py),
             which read docs/sql.md: a sql block anywhere else is an error
  ```text    not code (diagrams, output)

Any other language, or a block without one, is an error. Besides the blocks:
  - a ```c block followed by a ```sh block that compiles examples-c/NAME.c must be that file, byte for byte
    (the "complete program" shown is the one the next command compiles);
  - every relative link resolves: the file exists, and a #fragment names a heading of the Markdown file;
  - README.md's first screen (its first 60 lines) holds "What you supply", the example and the install lines.
Prints one line per block and check and "N passed, N failed". `check.py selftest` shows that each of these
checks catches a broken page (without running any block).
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
SQL_PAGE = "docs/sql.md"  # what bindings/sqlite/tests/run.sh and bindings/postgres/run-tests.sh run
FIRST_SCREEN = 60


def blocks(text):
    out, cur, lang, start = [], None, None, 0
    for n, line in enumerate(text.splitlines(keepends=True), 1):
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
    src, exe = os.path.join(BUILD, "snippet_%s.c" % n), os.path.join(BUILD, "snippet_%s" % n)
    open(src, "w").write(code)
    r = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Iinclude", src,
             "target/release/libdpmo.a", "-o", exe])
    if r.returncode != 0:
        return r.stdout + r.stderr
    r = run([exe])
    return None if r.returncode == 0 else "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr)


def check_sh(n, code):
    dry = re.compile(r"^(\s*)make\s+(test|bench|reproduce|-C bindings/postgres install)\b")
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
    d = os.path.join(BUILD, "java_%s" % n)
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


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    h = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(text):
    out, seen, fence = set(), {}, False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"^#{1,6} ", line):
            a = slug(line.lstrip("#"))
            k = seen.get(a, 0)
            seen[a] = k + 1
            out.add(a if k == 0 else "%s-%d" % (a, k))
    return out


def link_problems(rel, text, read=lambda p: open(p, encoding="utf-8").read(), exists=os.path.exists):
    """Every relative link of the page `rel` (a path from the root) names a file, and a heading when it has a
    #fragment. Links inside code blocks and inline code are not links."""
    problems, fence = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, frag = target.partition("#")
            full = os.path.normpath(os.path.join(ROOT, os.path.dirname(rel), path)) if path else os.path.join(ROOT, rel)
            if not exists(full):
                problems.append("%s:%d: link %r: no such file" % (rel, n, target))
            elif frag and full.endswith(".md") and frag not in anchors(read(full)):
                problems.append("%s:%d: link %r: no heading #%s in %s" % (rel, n, target, frag, os.path.relpath(full, ROOT)))
    return problems


def program_problems(rel, found, read=lambda p: open(p, encoding="utf-8").read()):
    """A c block followed by a sh block compiling examples-c/NAME.c is that file."""
    problems = []
    for (n, lang, code), nxt in zip(found, found[1:]):
        m = nxt[1] == "sh" and re.search(r"^\s*cc\b.*?\b(examples-c/\w+\.c)\b", nxt[2], flags=re.M)
        if lang == "c" and m and read(os.path.join(ROOT, m.group(1))) != code:
            problems.append("%s:%d: the program shown is not %s, which the next block compiles" % (rel, n, m.group(1)))
    return problems


def first_screen_problems(text):
    lines = text.splitlines()[:FIRST_SCREEN]
    screen = "\n".join(lines)
    kinds = [lang for _, lang, _ in blocks(screen + "\n")]
    problems = []
    if "**What you supply**" not in screen:
        problems.append("README.md: \"What you supply\" is not in the first %d lines" % FIRST_SCREEN)
    if "python" not in kinds:
        problems.append("README.md: the example does not end in the first %d lines" % FIRST_SCREEN)
    install = [code for _, lang, code in blocks(screen + "\n") if lang == "sh"]
    for what in ("make install", "make wheel", "bindings/sqlite", "bindings/postgres", "make java-install"):
        if not any(what in code for code in install):
            problems.append("README.md: no install line with %r in the first %d lines" % (what, FIRST_SCREEN))
    return problems


def page_problems(rel, text, lib_rs):
    """The checks that do not run anything."""
    found = blocks(text)
    problems = link_problems(rel, text) + program_problems(rel, found)
    if rel == "README.md":
        problems += first_screen_problems(text)
    for n, lang, _ in found:
        if lang == "sql" and rel != SQL_PAGE:
            problems.append("%s:%d: a sql block outside %s is run by no SQL runner" % (rel, n, SQL_PAGE))
        if lang == "rust" and 'include_str!("../%s")' % rel not in lib_rs:
            problems.append("%s:%d: a rust block in a page src/lib.rs does not include as doctests" % (rel, n))
    return problems


def pages():
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def selftest():
    """Each check catches a broken variant of the real pages."""
    lib_rs = open(os.path.join(ROOT, "src", "lib.rs"), encoding="utf-8").read()
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    c_page = open(os.path.join(ROOT, "docs", "c.md"), encoding="utf-8").read()
    sql_page = open(os.path.join(ROOT, SQL_PAGE), encoding="utf-8").read()
    assert not page_problems("README.md", readme, lib_rs) and not page_problems("docs/c.md", c_page, lib_rs)
    cases = [
        ("a link to a missing page", "README.md", readme.replace("(docs/c.md)", "(docs/cc.md)", 1)),
        ("a link to a missing heading", "README.md", readme.replace("\n", "\nSee [x](docs/guarantees.md#nope).\n", 1)),
        ("a shown program that is not the compiled file", "docs/c.md", c_page.replace("featured %zu", "picked %zu", 1)),
        ("the example pushed below the first screen", "README.md", readme.replace("\n\n", "\n" + "\n" * 30, 1)),
        ("an install line missing", "README.md", readme.replace("make java-install", "make java", 1)),
        ("a sql block outside " + SQL_PAGE, "docs/c.md", c_page + "\n```sql\nSELECT 1;\n```\n"),
        ("a rust block in a page not doctested", "docs/sql.md", sql_page + "\n```rust\nfn main() {}\n```\n"),
    ]
    failed = 0
    for what, rel, text in cases:
        got = page_problems(rel, text, lib_rs)
        print("%s selftest: %s%s" % ("ok  " if got else "FAIL", what, " caught: " + got[0] if got else " not caught"))
        failed += not got
    sys.exit(1 if failed else 0)


def main():
    if sys.argv[1:] == ["selftest"]:
        selftest()
    os.makedirs(BUILD, exist_ok=True)
    lib_rs = open(os.path.join(ROOT, "src", "lib.rs"), encoding="utf-8").read()
    handlers = {"c": check_c, "sh": check_sh, "java": check_java, "python": check_python}
    passed = failed = 0
    for rel in sys.argv[1:] or pages():
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        problems = page_problems(rel, text, lib_rs)
        for problem in problems:
            print("FAIL " + problem)
        failed += len(problems)
        for n, lang, code in blocks(text):
            where = "%s:%d %s" % (rel, n, lang or "(none)")
            if lang in ELSEWHERE:
                print("ok   %s%s" % (where, " (checked by %s)" % ELSEWHERE[lang] if ELSEWHERE[lang] else ""))
                passed += 1
                continue
            handler = handlers.get(lang)
            key = "%s_%d" % (re.sub(r"\W", "_", rel[:-3]), n)
            error = handler(key, code) if handler else "a block must name its language (c, sh, rust, java, sql, python, text)"
            if error is None:
                print("ok   " + where)
                passed += 1
            else:
                print("FAIL %s: %s" % (where, error))
                failed += 1
        if not problems:
            print("ok   %s: links, programs%s" % (rel, ", first screen" if rel == "README.md" else ""))
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
