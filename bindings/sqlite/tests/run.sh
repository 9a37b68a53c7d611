#!/usr/bin/env bash
# Runs the SQLite extension's tests: SQL scripts through the sqlite3 shell (each output line compared with
# tests/sql/*.expected, whose lines are properties, not random outcomes), then the Python client test.
# Environment: ENRON_DB (database built by enron_load), EXT (build/dpmo.so), PYTHON (/usr/bin/python3).
# The last line printed is "N passed, N failed"; the exit status is non-zero when anything failed.
set -u
cd "$(dirname "$0")/.."
ENRON_DB=${ENRON_DB:-build/enron.db}
EXT=${EXT:-build/dpmo.so}
PYTHON=${PYTHON:-/usr/bin/python3}
passed=0
failed=0

# The extension must export its entry point and nothing else.
exports=$(nm -D --defined-only "$EXT" | awk '{print $3}' | sort | tr '\n' ' ')
if [ "$exports" = "sqlite3_dpmo_init " ]; then
  passed=$((passed + 1)); echo "ok   exports: only sqlite3_dpmo_init"
else
  failed=$((failed + 1)); echo "FAIL exports: expected only sqlite3_dpmo_init, got: $exports"
fi

for sql in tests/sql/*.sql; do
  name=$(basename "$sql" .sql)
  expected=${sql%.sql}.expected
  actual=build/$name.out
  # Line-buffered stdout keeps results and error messages in statement order.
  stdbuf -oL sqlite3 -readonly "$ENRON_DB" < "$sql" > "$actual" 2>&1
  rc=$?
  if [ $rc -ge 128 ]; then
    failed=$((failed + 1)); echo "FAIL $name: sqlite3 died with signal $((rc - 128))"
  fi
  mapfile -t want < "$expected"
  mapfile -t got < "$actual"
  n=${#want[@]}; [ ${#got[@]} -gt $n ] && n=${#got[@]}
  file_fail=0
  for ((i = 0; i < n; i++)); do
    if [ "${want[i]-<missing>}" == "${got[i]-<missing>}" ]; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1)); file_fail=$((file_fail + 1))
      echo "FAIL $name line $((i + 1)):"
      echo "     expected: ${want[i]-<missing>}"
      echo "     actual:   ${got[i]-<missing>}"
    fi
  done
  echo "$( [ $file_fail -eq 0 ] && echo 'ok  ' || echo 'FAIL') $name: ${#want[@]} checks, $file_fail failed"
done

# Memory safety of the success and error paths (every aggregate state freed, no invalid access), when
# valgrind is installed (the top-level `make tools` installs it).
if command -v valgrind >/dev/null; then
  for name in 01_select 03_errors; do
    valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
      sqlite3 :memory: < tests/sql/$name.sql > /dev/null 2> build/$name.valgrind
    if [ $? -eq 99 ] || grep -q '^==' build/$name.valgrind; then
      failed=$((failed + 1)); echo "FAIL valgrind $name: see build/$name.valgrind"
    else
      passed=$((passed + 1)); echo "ok   valgrind $name: no errors, no leaks"
    fi
  done
else
  echo "skip valgrind (not installed)"
fi

# The client-library test (Python's sqlite3 module loading the extension).
if out=$(ENRON_DB="$ENRON_DB" EXT="$EXT" "$PYTHON" tests/test_sqlite.py 2>&1); then :; fi
echo "$out" | grep -v '^RESULT '
res=$(echo "$out" | grep '^RESULT ' | tail -1)
if [ -n "$res" ]; then
  passed=$((passed + $(echo "$res" | awk '{print $2}')))
  failed=$((failed + $(echo "$res" | awk '{print $3}')))
else
  failed=$((failed + 1)); echo "FAIL python test did not report a result"
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
