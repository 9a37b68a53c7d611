#!/usr/bin/env bash
# Binaries built before refund records (ledger format 3) against a ledger that holds one: they must refuse
# the ledger at its format-3 record (fail closed), never cut a record off, never write. A manual check, not
# part of `make test` (it needs the git history): run from a checkout, as root (PostgreSQL runs as postgres),
# after `make lib` and `make -C bindings/sqlite build` and `make -C bindings/postgres`:
#   bindings/common/tests/old_readers.sh [GIT_REF]     (default: the commit before format 3, cc94150)
# Builds GIT_REF's dpmo-ledger (SQLite/DuckDB ledger reader) and PostgreSQL extension against this tree's
# libdpmo.a (their ledger code calls only the dpmo_budget functions, unchanged), writes a ledger with a
# refund with this tree's binaries, and reads it with the old ones. Prints "ok"/"FAIL" lines.
set -uo pipefail
REF=${1:-cc94150}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OLD=$(mktemp -d /tmp/dpmo-old-readers.XXXXXX); chmod 755 "$OLD"
fails=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
git -C "$ROOT" archive "$REF" bindings/common bindings/sqlite bindings/postgres include | tar -x -C "$OLD"
mkdir -p "$OLD/target/release" && cp "$ROOT/target/release/libdpmo.a" "$OLD/target/release/"
(cd "$OLD/bindings/sqlite" && cc -std=c11 -O2 -I../../include -I../common -I. dpmo_ledger.c ../common/dp_sql.c \
  ../common/dp_ledger.c ledger.c ../../target/release/libdpmo.a -lm -lpthread -ldl -o "$OLD/dpmo-ledger-old") || exit 1
make -C "$OLD/bindings/postgres" >/dev/null 2>&1 || { echo "cannot build $REF's PostgreSQL extension"; exit 1; }

# --- SQLite/DuckDB ledger files: a refund written by this tree's extension, read by the old dpmo-ledger.
EXT=$ROOT/bindings/sqlite/build/dpmo.so
D=$OLD/sqlite
mkdir -p "$D"
/usr/bin/python3 - "$D" "$EXT" <<'EOF'
import ctypes, os, sqlite3, sys
d, ext = sys.argv[1], sys.argv[2]
db = os.path.join(d, "p.db")
host = ctypes.CDLL(ext)
host.dpmo_sqlite_grant_approx.argtypes = [ctypes.c_char_p, ctypes.c_double, ctypes.c_double, ctypes.c_void_p]
con = sqlite3.connect(db, isolation_level=None)
con.enable_load_extension(True)
con.load_extension(ext)
con.execute("CREATE TABLE ev(u INTEGER, i INTEGER)")
con.executemany("INSERT INTO ev VALUES (?, ?)", [(u, 7) for u in range(400)])
assert host.dpmo_sqlite_grant_approx((db + ".dpmo-ledger").encode(), 4.0, 1e-3, None) == 0
con.execute("SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM ev").fetchone()
EOF
L=$D/p.db.dpmo-ledger
kinds=$("$ROOT/bindings/sqlite/build/dpmo-ledger" audit "$L" | cut -d'|' -f3 | tr '\n' ' ')
[ "$kinds" = "created grant charge format refund " ] && ok "this tree wrote: $kinds" || fail "this tree wrote: $kinds"
cp "$L" "$L.orig"
out=$("$OLD/dpmo-ledger-old" grant "$L" 1 2>&1); rc=$?
if [ $rc != 0 ] && [[ "$out" == *"record 4 does not fit the ledger's state"* ]] && cmp -s "$L" "$L.orig"; then
  ok "old dpmo-ledger refuses at the format-3 record, file unchanged"
else fail "old dpmo-ledger: rc $rc, $out"; fi
head -c $((312 * 4)) "$L.orig" > "$L"
out=$("$OLD/dpmo-ledger-old" grant "$L" 1 2>&1); rc=$?
if [ $rc != 0 ] && [ "$(stat -c %s "$L")" = $((312 * 4)) ]; then
  ok "... also with the format-3 record last (not cut off as torn)"
else fail "format-3 record last: rc $rc, $out, $(stat -c %s "$L") bytes"; fi

# --- PostgreSQL: a server with this tree's extension writes a refund; the old extension must refuse.
BIN=$(pg_config --bindir); PKGLIB=$(pg_config --pkglibdir); SHARE=$(pg_config --sharedir)
INST=$OLD/inst; DATA=$OLD/data
as_owner() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi; }
trap '[ -f "$DATA/postmaster.pid" ] && as_owner "$BIN/pg_ctl -D $DATA -m immediate -w stop" >/dev/null 2>&1; rm -rf "$OLD"' EXIT
make -C "$ROOT/bindings/postgres" install DESTDIR="$INST" >/dev/null
mkdir -p "$INST$BIN" "$INST$PKGLIB" "$INST$SHARE/extension"
cp "$BIN/postgres" "$INST$BIN/postgres"
for dir in "$PKGLIB" "$SHARE" "$SHARE/extension"; do for f in "$dir"/*; do n=$(basename "$f")
  case "$n" in dpmo.so | dpmo.control | dpmo--*) continue ;; esac; [ -e "$INST$dir/$n" ] || ln -s "$f" "$INST$dir/$n"; done; done
[ "$(id -u)" = 0 ] && chown -R postgres: "$OLD"
as_owner "'$BIN/initdb' -D '$DATA' -A trust -U postgres --no-sync -E UTF8 --locale=C" >/dev/null 2>&1
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start() { as_owner "'$BIN/pg_ctl' -D '$DATA' -p '$INST$BIN/postgres' -l '$OLD/server.log' -w -t 60 -o \"-c listen_addresses=127.0.0.1 -p $PORT -k '$OLD' -c shared_preload_libraries=dpmo\" start" >/dev/null; }
stop() { as_owner "'$BIN/pg_ctl' -D '$DATA' -m fast -w stop" >/dev/null; }
export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
q() { psql -X -q -At "$@" 2>&1; }
start
q -c "CREATE EXTENSION dpmo" -c "SELECT dpmo.dp_ledger_init()" \
  -c "CREATE TABLE ev AS SELECT i::bigint AS u, 7::bigint AS i FROM generate_series(0, 399) i" \
  -c "SELECT dpmo.dp_budget_grant('postgres', 4, NULL, 1e-3)" -c "SELECT dpmo.dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM ev" >/dev/null
kinds=$(q -c "SELECT string_agg(kind, ' ' ORDER BY seq) FROM dpmo.dp_ledger()")
[ "$kinds" = "format grant charge format refund" ] && ok "this tree's server wrote: $kinds" || fail "this tree's server wrote: $kinds"
stop
cp "$DATA/dpmo_ledger" "$OLD/ledger.orig"; chmod 644 "$OLD/ledger.orig"
cp "$OLD/bindings/postgres/dpmo.so" "$INST$PKGLIB/dpmo.so"
start
out=$(q -c 'SELECT dpmo.dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM ev')
stop
if [[ "$out" == *"record 4 does not fit the ledger's state"* ]] && cmp -s "$DATA/dpmo_ledger" "$OLD/ledger.orig"; then
  ok "old server refuses at the format-3 record, file unchanged"
else fail "old server: $out"; fi
as_owner "head -c $((312 * 4)) '$OLD/ledger.orig' > '$DATA/dpmo_ledger'"
start
out=$(q -c 'SELECT dpmo.dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM ev')
stop
if [[ "$out" == *"record 4 does not fit the ledger's state"* ]] && [ "$(stat -c %s "$DATA/dpmo_ledger")" = $((312 * 4)) ]; then
  ok "... also with the format-3 record last (not cut off as torn)"
else fail "old server, format-3 record last: $out"; fi
echo "$fails failed"
[ $fails = 0 ]
