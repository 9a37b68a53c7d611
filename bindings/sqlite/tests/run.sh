#!/usr/bin/env bash
# The SQLite extension's tests, against the real sqlite3 library and shell:
#   - exports: only sqlite3_dpmo_init and the host's dpmo_sqlite_configure, dpmo_sqlite_grant;
#   - tests/sql/*.sql through tests/host.c (a host program: C-API loading, ledger, test seed), each output
#     line compared with tests/sql/*.expected (properties and error messages, never random outcomes);
#   - the attacks, each a test named after what it attacks (seeding from SQL, concurrent processes racing one
#     ledger, a torn, damaged, emptied or replaced ledger file); the README's host program;
#   - valgrind over two scripts; the shared SQL surface cases; the README's SQL snippets; the Python client
#     test (statistics against exact probabilities, ledger sharing, the fixture).
# Environment: EXT, TOOL, HOST, PYTHON (set by the Makefile). Prints "N passed, N failed" last.
set -u
cd "$(dirname "$0")/.."
EXT=${EXT:-build/dpmo.so}
TOOL=${TOOL:-build/dpmo-ledger}
HOST=${HOST:-build/host}
PYTHON=${PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d /tmp/dpmo-sqlite.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { if [ "$2" == "$3" ]; then ok "$1: $2"; else fail "$1: expected [$3], got [$2]"; fi; }
contains() { if [[ "$2" == *"$3"* ]]; then ok "$1"; else fail "$1: expected output containing [$3], got [$2]"; fi; }

# The extension exports its entry point and the host's functions, nothing else.
exports=$(nm -D --defined-only "$EXT" | awk '{print $3}' | sort | tr '\n' ' ')
check exports "$exports" "dpmo_sqlite_configure dpmo_sqlite_grant dpmo_sqlite_grant_approx dpmo_sqlite_host_exec dpmo_sqlite_restrict sqlite3_dpmo_init "

# The shared fixture, loaded with the sqlite3 shell.
FIXTURE=$TMP/enron300.db
sqlite3 "$FIXTURE" < tests/load_fixture.sql || fail "loading the fixture"

# --- The host scripts.
for sql in tests/sql/*.sql; do
  name=$(basename "$sql" .sql)
  db=$TMP/$name.db
  [ "$name" = fixture ] && cp "$FIXTURE" "$db"
  opts=$(sed -n '1s/^-- host: \(--.*\)$/\1/p' "$sql")
  # shellcheck disable=SC2086
  "$HOST" "$db" "$EXT" $opts < "$sql" > "$TMP/$name.raw" 2>&1
  rc=$?
  sed "s|$db|@DB@|g" "$TMP/$name.raw" > "$TMP/$name.out"
  [ $rc -ge 128 ] && fail "$name: the host died with signal $((rc - 128))"
  mapfile -t want < "${sql%.sql}.expected"
  mapfile -t got < "$TMP/$name.out"
  n=${#want[@]}; [ ${#got[@]} -gt "$n" ] && n=${#got[@]}
  bad=0
  for ((i = 0; i < n; i++)); do
    if [ "${want[i]-<missing>}" != "${got[i]-<missing>}" ]; then
      bad=$((bad + 1))
      echo "     $name line $((i + 1)): expected [${want[i]-<missing>}]"
      echo "     $name line $((i + 1)):   actual [${got[i]-<missing>}]"
    fi
  done
  if [ $bad = 0 ]; then ok "$name: ${#want[@]} lines"; else fail "$name: $bad of $n lines differ"; fi
done

# --- Attack: seed the generator from SQL (the shell loads the extension like any user would).
out=$(printf '.load ./build/dpmo\nSELECT dp_seed(1);\nSELECT dp_seed(NULL);\n' | sqlite3 :memory: 2>&1)
contains dp_seed_not_reachable_from_sql "$out" "no such function: dp_seed"

# --- Attack: 8 processes race one ledger granted 1, each trying 20 selections at 1/16.
db=$TMP/race.db
"$TOOL" grant "$db.dpmo-ledger" 1
sqlite3 "$db" "CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL); INSERT INTO t VALUES (1, 3), (2, 2), (3, 1);"
for p in $(seq 1 8); do
  (for i in $(seq 1 20); do echo "SELECT dp_select(id, 0.0625, s, 1) FROM t;"; done | "$HOST" "$db" "$EXT" > "$TMP/racer.$p.out") &
done
wait
answered=$(cat "$TMP"/racer.*.out | grep -c -v '^Error' || true)
refused=$(cat "$TMP"/racer.*.out | grep -c 'the privacy budget is exhausted' || true)
audit=$("$TOOL" audit "$db.dpmo-ledger" | awk -F'|' '{n[$3]++} END {printf "%d grant, %d charges", n["grant"], n["charge"]}')
check concurrent_processes_share_one_ledger "$answered answered, $refused refused; $("$TOOL" show "$db.dpmo-ledger"); $audit" \
  "16 answered, 144 refused; total 1 spent 1 remaining 0; 1 grant, 16 charges"

# --- Attack: a torn last record (a writer killed inside its write) is cut off by the next writer.
db=$TMP/torn.db
"$TOOL" grant "$db.dpmo-ledger" 1
sqlite3 "$db" "CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL); INSERT INTO t VALUES (1, 3), (2, 2);"
head -c 100 /dev/urandom >> "$db.dpmo-ledger"
out=$(echo "SELECT dp_select(id, 0.25, s, 1) IS NOT NULL FROM t;" | "$HOST" "$db" "$EXT")
check torn_ledger_tail_cut "$out, $(stat -c %s "$db.dpmo-ledger") bytes, $("$TOOL" show "$db.dpmo-ledger")" \
  "1, 936 bytes, total 1 spent 0.25 remaining 0.75"

# --- (epsilon, delta) budgets in the ledger file, without SQL: grants, exact composition, pure-epsilon
# refusals, version-1 files read as they are, and a version-1 reader refusing version-2 files (fail closed).
mkdir -p "$TMP/delta"
out=$(build/ledger_delta "$TMP/delta")
if [ "$(echo "$out" | tail -1)" = PASSED ]; then ok "ledger_delta: $(echo "$out" | grep -c '^ok') checks"
else echo "$out" | grep -v '^ok'; fail "ledger_delta"; fi

# --- dpmo-ledger with a delta: grant, show, audit.
l=$TMP/delta/tool.ledger
"$TOOL" grant "$l" 1 0.000001
"$TOOL" grant "$l" 0.5
check tool_grant_with_delta "$("$TOOL" show "$l"); $("$TOOL" audit "$l" | cut -d'|' -f1,3,4,6 | tr '\n' ' ')" \
  "total 1.5 spent 0 remaining 1.5 delta total 1e-06 spent 0 remaining 1e-06; 1|created|0|0 2|grant|1|1e-06 3|top-up|0.5|0 "
out=$("$TOOL" grant "$l" 1 1 2>&1); contains tool_grant_refuses_delta_1 "$out" "delta must be a number from 0 (included) to 1 (excluded)"
out=$("$TOOL" grant "$l" 1 x 2>&1); contains tool_grant_refuses_delta_text "$out" "DELTA must be a number"

# --- A ledger file left empty (by an older version, or cut to nothing): the first writer gives it its create
# record, so that it is never an empty file that SQLite would take for an empty database.
empty=$TMP/empty.dpmo-ledger
: > "$empty"
"$TOOL" grant "$empty" 1
check empty_ledger_file_gets_its_create_record "$("$TOOL" audit "$empty" | cut -d'|' -f1,3,4 | tr '\n' ' ')" \
  "1|created|0 2|grant|1 "

# --- Attack: a damaged record that is not the last: every selection is refused (fail closed).
printf 'XXXX' | dd of="$db.dpmo-ledger" bs=1 seek=100 conv=notrunc status=none
out=$(echo "SELECT dp_select(id, 0.25, s, 1) FROM t;" | "$HOST" "$db" "$EXT")
contains damaged_ledger_fails_closed "$out" "is unusable: record 1 (byte 0) is invalid and is not the last one; nothing was charged"

# --- Attack: replace the ledger file under an open connection (say, to start from a fresh one).
db=$TMP/replaced.db
sqlite3 "$db" "CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL); INSERT INTO t VALUES (1, 3), (2, 2);"
out=$("$HOST" "$db" "$EXT" <<EOF | tr '\n' ' '
.grant 1
SELECT dp_select(id, 0.25, s, 1) IS NOT NULL FROM t;
.system mv '$db.dpmo-ledger' '$db.old'
.grant 5
SELECT dp_select(id, 0.25, s, 1) FROM t;
.reopen
SELECT dp_budget_remaining();
EOF
)
contains replaced_ledger_refused "$out" "was removed or replaced since this connection opened it; nothing was charged"

# --- The host program of the README (its one C block), compiled and run: a restricted analyst connection.
rh=$TMP/readme-host
mkdir -p "$rh"
awk '/^```c$/ {f = 1; next} /^```$/ {if (f) exit} f' README.md > "$rh/host.c"
ln -s "$PWD/build" "$rh/build"
if cc -std=c11 -Wall -Wextra -Werror -pedantic -I. "$rh/host.c" build/dpmo.so -lsqlite3 -o "$rh/host" 2> "$rh/cc.err"; then
  out=$(cd "$rh" && ./host 2>&1)
  check readme_host_program "$(echo "$out" | tr '\n' '~')" "$(tr '\n' '~' <<'EOF'
SELECT count(*), count(DISTINCT dept) FROM staff -> 40 4
SELECT dp_release('top_earner', 0.25) IN (SELECT id FROM staff) -> 1
SELECT json_valid(dp_release('top_per_dept')) -> 1
SELECT dp_budget_remaining() -> 0.25
SELECT salary FROM salaries -> refused: access to salaries.salary is prohibited
ALTER TABLE salaries RENAME TO s2 -> refused: not authorized
WITH staff AS (SELECT salary FROM salaries) SELECT * FROM staff -> refused: access to salaries.salary is prohibited
host -> 30
EOF
)"
else
  fail "readme_host_program does not compile: $(cat "$rh/cc.err")"
fi

# --- Memory safety of the success and error paths (selections, releases, restrictions that fail), when
# valgrind is installed (`make tools` installs it).
if command -v valgrind >/dev/null; then
  for name in surface option_and_argument_bounds restricted_releases_reach_private_data restricted_setup_fails_closed \
      discovery_compaction_is_memory_safe; do
    rm -f "$TMP/vg.db" "$TMP/vg.db.dpmo-ledger"
    valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
      "$HOST" "$TMP/vg.db" "$EXT" --seed vg < "tests/sql/$name.sql" > /dev/null 2> "$TMP/$name.valgrind"
    if [ $? -eq 99 ] || grep -q '^==' "$TMP/$name.valgrind"; then
      fail "valgrind $name"; cat "$TMP/$name.valgrind"
    else
      ok "valgrind $name: no errors, no leaks"
    fi
  done
else
  echo "skip valgrind (not installed)"
fi

# --- The shared SQL surface and the README's SQL snippets.
if out=$(EXT="$EXT" "$PYTHON" ../testdata/surface.py sqlite 2>&1); then ok "surface cases: $(echo "$out" | tail -1)"
else echo "$out" | grep -v '^ok '; fail "surface cases"; fi
if out=$("$PYTHON" ../testdata/snippets.py sqlite README.md 2>&1); then ok "README snippets: $(echo "$out" | tail -1)"
else echo "$out"; fail "README snippets"; fi
if out=$("$PYTHON" ../testdata/snippets.py sqlite ../../docs/sql.md 2>&1); then
  ok "docs/sql.md snippets: $(echo "$out" | tail -1)"
else echo "$out"; fail "docs/sql.md snippets"; fi

# --- The client-library test (Python's sqlite3 module loading the extension).
out=$(EXT="$EXT" FIXTURE_DB="$FIXTURE" "$PYTHON" tests/test_sqlite.py 2>&1)
echo "$out" | grep -v '^RESULT ' | grep -E ' \.\.\. |Error|FAIL|Traceback' | sed 's/^/     /'
res=$(echo "$out" | grep '^RESULT ' | tail -1)
if [ -n "$res" ]; then
  passed=$((passed + $(echo "$res" | awk '{print $2}')))
  failed=$((failed + $(echo "$res" | awk '{print $3}')))
  [ "$(echo "$res" | awk '{print $3}')" = 0 ] || echo "$out" | sed -n '/^=====/,$p'
else
  fail "the Python test did not report a result"; echo "$out" | tail -20
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
