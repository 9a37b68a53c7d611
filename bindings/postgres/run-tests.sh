#!/usr/bin/env bash
# dpmo PostgreSQL extension: deps -> build -> install -> throwaway server -> installcheck -> stop.
# Prints "N passed, N failed" (pg_regress tests) as its last line; exits non-zero on any failure.
# Usage (from the repository root): make lib && make -C bindings/postgres test
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$HERE"

make deps
[ -f "$ROOT/target/release/libdpmo.a" ] || make -C "$ROOT" lib
make
make install
make enron-data

PGBIN=$(pg_config --bindir)
TMP=$(mktemp -d /tmp/dpmo-pg.XXXXXX)
chmod 755 "$TMP"

# Run a command as the cluster owner: the postgres user when we are root (initdb refuses root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}
if [ "$(id -u)" = 0 ]; then chown postgres: "$TMP"; fi

cleanup() {
  if [ -f "$TMP/data/postmaster.pid" ]; then
    as_owner "'$PGBIN/pg_ctl' -D '$TMP/data' -m fast -w stop" >/dev/null 2>&1 || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# A free loopback port, starting at 54329.
PORT=${DPMO_PG_PORT:-54329}
while (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do PORT=$((PORT + 1)); done

as_owner "'$PGBIN/initdb' -D '$TMP/data' -A trust -U postgres --no-sync -E UTF8 --locale=C" >"$TMP/initdb.log" 2>&1 \
  || { cat "$TMP/initdb.log"; exit 1; }
as_owner "'$PGBIN/pg_ctl' -D '$TMP/data' -l '$TMP/server.log' -w -t 60 \
  -o \"-c listen_addresses=127.0.0.1 -p $PORT -k '$TMP' -c max_worker_processes=8 -c max_parallel_workers=8\" start" \
  >/dev/null || { cat "$TMP/server.log"; exit 1; }

export PGHOST="$TMP" PGPORT="$PORT" PGUSER=postgres
status=0
make installcheck >"$TMP/installcheck.log" 2>&1 || status=$?
cat "$TMP/installcheck.log"
if [ -f regression.diffs ] && [ "$status" != 0 ]; then
  echo "---- regression.diffs ----"; cat regression.diffs
fi
if grep -q -E "PANIC|terminated by signal|server process .* was terminated" "$TMP/server.log"; then
  echo "---- server log reports a crash ----"; grep -E "PANIC|terminated by signal" "$TMP/server.log"; status=1
fi

passed=$(grep -c -E '^(test| ) +[a-z_]+ +\.\.\. ok' "$TMP/installcheck.log" || true)
failed=$(grep -c -E '\.\.\. FAILED|\.\.\. failed' "$TMP/installcheck.log" || true)
if [ "$status" != 0 ] && [ "$failed" = 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$status" = 0 ] && [ "$failed" = 0 ]
