#!/usr/bin/env bash
# dpmo PostgreSQL extension: deps -> build -> private install -> throwaway server -> tests -> stop.
#
# Nothing is installed system-wide (apart from the Debian packages `make deps` installs when missing): the
# extension goes into a private copy of the server's directory tree under /tmp, where a copy of the
# `postgres` executable finds it (PostgreSQL locates its lib/ and share/ directories relative to its own
# executable). The server listens on 127.0.0.1 on the first free port from 54329 (DPMO_PG_PORT) and on a
# socket in the temporary directory; everything is removed at the end, also on failure.
#
# Tests, in order: the server without shared_preload_libraries refuses every selection; then, preloaded, a
# cluster without a ledger refuses them until a superuser creates one; pg_regress (sql/*.sql against
# expected/*.out), the attack tests below (each named after what it attacks), the shared SQL surface cases
# (bindings/testdata) and the README snippets. Every database allows CREATE on schema public to PUBLIC (the
# default before PostgreSQL 15, kept by upgraded databases), so that analysts can plant objects there.
# Prints "N passed, N failed" last; exits non-zero on any failure.
# Usage (from the repository root): make lib && make -C bindings/postgres test
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TESTDATA=$ROOT/bindings/testdata
cd "$HERE"

make deps
[ -f "$ROOT/target/release/libdpmo.a" ] || make -C "$ROOT" lib
make >/dev/null
make -C "$TESTDATA" >/dev/null

BIN=$(pg_config --bindir)
PKGLIB=$(pg_config --pkglibdir)
SHARE=$(pg_config --sharedir)
TMP=$(mktemp -d /tmp/dpmo-pg.XXXXXX)
chmod 755 "$TMP"
INST=$TMP/inst
DATA=$TMP/data
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# Run a command as the cluster owner: the postgres user when we are root (initdb refuses root).
as_owner() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

cleanup() {
  for d in "$DATA" "$TMP/standby"; do
    if [ -f "$d/postmaster.pid" ]; then
      as_owner "'$BIN/pg_ctl' -D '$d' -m immediate -w stop" >/dev/null 2>&1 || true
    fi
  done
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

# The extension exports the server's entry points and its fmgr functions, nothing of libdpmo or ../common.
other=$(nm -D --defined-only dpmo.so | awk '{print $3}' | { grep -v -E '^(_PG_init|Pg_magic_func|dpmo_pg_[a-z_]+|pg_finfo_dpmo_pg_[a-z_]+)$' || true; } | tr '\n' ' ')
if [ -z "$other" ]; then ok "exports: only _PG_init, Pg_magic_func and dpmo_pg_*"; else fail "exports: unexpected $other"; fi

# --- A private installation: the extension's files, and links to everything else of the server's tree.
make install DESTDIR="$INST" >/dev/null
mkdir -p "$INST$BIN" "$INST$PKGLIB" "$INST$SHARE/extension"
ln "$BIN/postgres" "$INST$BIN/postgres" 2>/dev/null || cp "$BIN/postgres" "$INST$BIN/postgres"
for dir in "$PKGLIB" "$SHARE" "$SHARE/extension"; do
  for f in "$dir"/*; do
    name=$(basename "$f")
    case "$name" in dpmo.so | dpmo.control | dpmo--*) continue ;; esac # a system-wide copy must not leak in
    [ -e "$INST$dir/$name" ] || ln -s "$f" "$INST$dir/$name"
  done
done
POSTGRES=$INST$BIN/postgres
if [ "$(id -u)" = 0 ]; then chown -R postgres: "$TMP"; fi

as_owner "'$BIN/initdb' -D '$DATA' -A trust -U postgres --no-sync -E UTF8 --locale=C" >"$TMP/initdb.log" 2>&1 \
  || { cat "$TMP/initdb.log"; exit 1; }

PORT=${DPMO_PG_PORT:-54329}
# Starts the server with extra settings ($1); on a port taken meanwhile by someone else, tries the next.
start_server() {
  local extra=$1 tries=0
  while :; do
    while (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do PORT=$((PORT + 1)); done
    if as_owner "'$BIN/pg_ctl' -D '$DATA' -p '$POSTGRES' -l '$TMP/server.log' -w -t 60 \
        -o \"-c listen_addresses=127.0.0.1 -p $PORT -k '$TMP' -c max_worker_processes=8 \
            -c max_parallel_workers=8 $extra\" start" >/dev/null; then
      export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres
      return 0
    fi
    tries=$((tries + 1))
    if [ $tries -ge 20 ] || ! grep -q "could not bind\|already in use" "$TMP/server.log"; then
      tail -20 "$TMP/server.log"; return 1
    fi
    PORT=$((PORT + 1))
  done
}
stop_server() { as_owner "'$BIN/pg_ctl' -D '$DATA' -m ${1:-fast} -w stop" >/dev/null; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }             # quiet, unaligned, tuples only
qe() { psql -X -q -At "$@" 2>&1 || true; }                   # the same, errors captured as output

# Checks that "$2" (actual) equals "$3" (expected) for test $1.
check() { if [ "$2" == "$3" ]; then ok "$1: $2"; else fail "$1: expected [$3], got [$2]"; fi; }
contains() { if [[ "$2" == *"$3"* ]]; then ok "$1"; else fail "$1: expected output containing [$3], got [$2]"; fi; }

# --- 1. Without shared_preload_libraries every selection is refused (fail closed).
start_server ""
for db in template1 postgres; do q -d "$db" -c "GRANT CREATE ON SCHEMA public TO PUBLIC"; done
q -c "CREATE EXTENSION dpmo"
q -c "CREATE TABLE t0 AS SELECT g::bigint AS id, g::float8 AS score FROM generate_series(1, 10) g"
contains no_preload_selection_refused "$(qe -c 'SELECT dpmo.dp_select(id, 1, score, 1) FROM t0')" \
  "the privacy ledger is not loaded: add dpmo to shared_preload_libraries"
contains no_preload_grant_refused "$(qe -c "SELECT dpmo.dp_budget_grant('postgres', 1)")" "the privacy ledger is not loaded"
stop_server

# --- 2. Preloaded (and dpmo.test_seeding on, so that the tests can create dp_seed for themselves; autovacuum
# every second, for the autovacuum attack). The new cluster has no ledger: the server does not create one,
# and refuses selections and grants until a superuser does, explicitly.
PRELOAD="-c shared_preload_libraries=dpmo -c dpmo.test_seeding=on -c autovacuum_naptime=1"
start_server "$PRELOAD"
q -c "CREATE ROLE outsider LOGIN; GRANT SELECT ON t0 TO outsider"
contains missing_ledger_selection_refused "$(qe -c 'SELECT dpmo.dp_select(id, 1, score, 1) FROM t0')" \
  "dp_select: the privacy ledger is unusable: there is no privacy ledger (dpmo_ledger in the data directory): a superuser creates one with SELECT dpmo.dp_ledger_init()"
contains missing_ledger_grant_refused "$(qe -c "SELECT dpmo.dp_budget_grant('postgres', 1)")" \
  "dp_budget_grant: the privacy ledger is unusable: there is no privacy ledger"
check missing_ledger_reason_only_for_superusers "$(qe -U outsider -c 'SELECT dpmo.dp_select(id, 1, score, 1) FROM t0')" \
  "ERROR:  dp_select: the privacy ledger is unusable: private selections are refused until an administrator repairs it"
contains ledger_init_not_executable_by_public "$(qe -U outsider -c 'SELECT dpmo.dp_ledger_init()')" \
  "permission denied for function dp_ledger_init"
q -c "GRANT EXECUTE ON FUNCTION dpmo.dp_ledger_init(), dpmo.dp_ledger_accept() TO outsider"
check ledger_init_superuser_only "$(qe -U outsider -c 'SELECT dpmo.dp_ledger_init()') $(qe -U outsider -c 'SELECT dpmo.dp_ledger_accept()')" \
  "ERROR:  dp_ledger_init: only a superuser can create or accept the privacy ledger ERROR:  dp_ledger_accept: only a superuser can create or accept the privacy ledger"
q -c "REVOKE EXECUTE ON FUNCTION dpmo.dp_ledger_init(), dpmo.dp_ledger_accept() FROM outsider"
q -c "SELECT dpmo.dp_ledger_init()" >/dev/null
contains ledger_init_never_overwrites "$(qe -c 'SELECT dpmo.dp_ledger_init()')" \
  "dp_ledger_init: the privacy ledger exists (dpmo_ledger in the data directory); it is never overwritten"
q -c "SELECT dpmo.dp_budget_grant('postgres', 1e15)" >/dev/null # the superuser's own budget for the regression tests

status=0
make installcheck >"$TMP/installcheck.log" 2>&1 || status=$?
n_ok=$(grep -c -E '^(test| ) +[a-z_0-9]+ +\.\.\. ok' "$TMP/installcheck.log" || true)
n_bad=$(grep -c -E '\.\.\. FAILED|\.\.\. failed' "$TMP/installcheck.log" || true)
passed=$((passed + n_ok))
failed=$((failed + n_bad))
grep -E '^(test| ) +[a-z_0-9]+ +\.\.\. ' "$TMP/installcheck.log" | sed 's/^/     pg_regress /' || true
if [ "$status" != 0 ]; then
  [ "$n_bad" = 0 ] && fail "pg_regress exited with status $status" && cat "$TMP/installcheck.log"
  [ -f regression.diffs ] && { echo "---- regression.diffs ----"; cat regression.diffs; }
fi

# The analysts of the attack tests: every one reads table t directly (the budget is what is tested).
q >/dev/null <<'SQL'
CREATE TABLE t AS SELECT g::bigint AS id, (g % 7)::float8 AS score FROM generate_series(1, 30) g;
CREATE ROLE reconnect LOGIN; CREATE ROLE optioned LOGIN; CREATE ROLE racer LOGIN; CREATE ROLE crasher LOGIN;
CREATE ROLE approx LOGIN;
GRANT SELECT ON t TO reconnect, optioned, racer, crasher, approx;
SELECT dpmo.dp_budget_grant('reconnect', 2), dpmo.dp_budget_grant('optioned', 0.5), dpmo.dp_budget_grant('racer', 1),
       dpmo.dp_budget_grant('crasher', 1), dpmo.dp_budget_grant('approx', 1, delta => 0.000001),
       dpmo.dp_budget_top_up('approx', 0.5, delta => 0.000002);
SQL

# --- Attack: an analyst's expression statistic makes a selection (its function claims to be IMMUTABLE);
# autovacuum's ANALYZE evaluates it in a worker whose session user is the bootstrap superuser, who holds a
# grant here: that grant used to pay (12,000 selections), and the outputs were kept in pg_stats_ext_exprs.
# Refused outside client sessions (and in every security-restricted operation): nobody is charged.
q >/dev/null <<'SQL'
CREATE ROLE statistician LOGIN;
GRANT SELECT ON t TO statistician;
SQL
q -U statistician >/dev/null <<'SQL'
CREATE FUNCTION public.peek(x int) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT dpmo.dp_select(id, 2, score, 1) FROM public.t $$;
CREATE TABLE public.avbait (x int)
  WITH (autovacuum_analyze_threshold = 0, autovacuum_analyze_scale_factor = 0, autovacuum_vacuum_threshold = 1000000);
CREATE STATISTICS public.avbait_peek ON (public.peek(x)) FROM public.avbait;
INSERT INTO public.avbait SELECT g FROM generate_series(1, 100) g;
SQL
charges_before=$(q -c "SELECT count(*) FROM dpmo.dp_audit")
for i in $(seq 1 120); do
  grep -q 'automatic analyze of table "postgres.public.avbait"' "$TMP/server.log" && break
  sleep 0.5
done
refused=$(grep -c 'dp_select: private selections are refused outside client sessions (here: autovacuum worker); nothing was charged' "$TMP/server.log" || true)
check autovacuum_expression_statistic_refused "refused: $([ "$refused" -gt 0 ] && echo yes || echo no), charged $(( $(q -c "SELECT count(*) FROM dpmo.dp_audit") - charges_before )), statistics kept $(q -c "SELECT count(null_frac) FROM pg_stats_ext_exprs WHERE statistics_name = 'avbait_peek'")" \
  "refused: yes, charged 0, statistics kept 0"
q -U statistician -c "DROP TABLE public.avbait" >/dev/null
# A WAL sender (a replication=database connection also runs SQL) is no client session either.
check walsender_selection_refused "$(qe "replication=database" -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t' | head -1)" \
  "ERROR:  dp_select: private selections are refused outside client sessions (here: walsender); nothing was charged"

# --- Attack: the extension installs into a schema dpmo that an analyst prepared (one with CREATE on the
# database), with an exact-match dp_select overload in it that the pinned wrappers would find. Refused
# unless the schema belongs to a superuser, nobody else may create in it, and it is empty.
q >/dev/null <<'SQL'
CREATE ROLE squatter LOGIN;
CREATE DATABASE squatted;
GRANT CREATE ON DATABASE squatted TO squatter;
SQL
q -U squatter -d squatted >/dev/null <<'SQL'
CREATE SCHEMA dpmo;
CREATE FUNCTION dpmo.dp_select(bigint, float8, float8, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
SQL
install() { qe -d squatted -c 'CREATE EXTENSION dpmo' | head -1; }
out="$(install) | "
q -d squatted -c "ALTER SCHEMA dpmo OWNER TO postgres; GRANT CREATE ON SCHEMA dpmo TO squatter"
out="$out$(install) | "
q -d squatted -c "REVOKE CREATE ON SCHEMA dpmo FROM squatter"
out="$out$(install) | "
q -d squatted -c "DROP FUNCTION dpmo.dp_select(bigint, float8, float8, integer)"
out="$out$(install)$(q -d squatted -c "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'dpmo'")"
check install_refuses_a_prepared_dpmo_schema "$out" \
  "ERROR:  dpmo: schema dpmo is owned by squatter, who is not a superuser | ERROR:  dpmo: roles other than its owner may create objects in schema dpmo | ERROR:  dpmo: schema dpmo is not empty | dpmo"

# --- Attack: reconnect 200 times, each new session trying to spend ε = 0.25 of a grant of 2.
answered=0
for i in $(seq 1 200); do
  if q -U reconnect -c "SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t" >/dev/null 2>&1; then
    answered=$((answered + 1))
  fi
done
spent=$(q -c "SELECT spent FROM dpmo.dp_budget_grants() WHERE role = 'reconnect'")
charges=$(q -c "SELECT count(*) || ' charges, ' || sum(epsilon) || ' in total' FROM dpmo.dp_audit WHERE role = 'reconnect'")
check reconnect_200_never_exceeds_grant "$answered answered, spent $spent of 2; audit $charges" \
  "8 answered, spent 2 of 2; audit 8 charges, 2 in total"

# --- Attack: settings sent at connection time (startup packet options, PGOPTIONS) cannot widen a budget.
contains startup_options_unknown_budget_setting_refused \
  "$(qe "options='-c dpmo.session_budget=100'" -U optioned -c 'SELECT dpmo.dp_budget_remaining()')" \
  'invalid configuration parameter name "dpmo.session_budget"'
contains startup_options_pgoptions_refused \
  "$(PGOPTIONS='-c dpmo.session_budget=100' qe -U optioned -c 'SELECT dpmo.dp_budget_remaining()')" \
  'invalid configuration parameter name "dpmo.session_budget"'
contains startup_options_test_seeding_refused \
  "$(PGOPTIONS='-c dpmo.test_seeding=off' qe -U optioned -c 'SELECT 1')" \
  'parameter "dpmo.test_seeding" cannot be changed without restarting the server'
out=""
for ds in "" "other" "a_dataset_nobody_granted"; do
  out="$out$(PGOPTIONS="-c dpmo.dataset=$ds" qe -U optioned -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) IS NOT NULL FROM t' | tr '\n' ' ')|"
done
spent=$(q -c "SELECT spent FROM dpmo.dp_budget_grants() WHERE role = 'optioned'")
check startup_options_dataset_cannot_widen "$(echo "$out" | grep -o 'exhausted' | wc -l) refused of 3 at 0.25 each, spent $spent of 0.5" \
  "1 refused of 3 at 0.25 each, spent 0.5 of 0.5"

# --- Attack: 16 concurrent clients race one grant of 1 at ε = 1/16, 20 tries each.
for c in $(seq 1 16); do
  (for i in $(seq 1 20); do
     q -U racer -c "SELECT dpmo.dp_select(id, 0.0625, score, 1) FROM t" 2>/dev/null || true
   done >"$TMP/racer.$c") &
done
wait
answered=$(cat "$TMP"/racer.* | grep -c . || true)
spent=$(q -c "SELECT spent FROM dpmo.dp_budget_grants() WHERE role = 'racer'")
charges=$(q -c "SELECT count(*) || ' charges, ' || sum(epsilon) || ' in total' FROM dpmo.dp_audit WHERE role = 'racer'")
check concurrent_16_clients_total_within_grant "$answered answered of 320, spent $spent of 1; audit $charges" \
  "16 answered of 320, spent 1 of 1; audit 16 charges, 1 in total"

# --- (epsilon, delta) grants: arguments checked, nothing written on refusal; the file's first record is its
# format record (a reader built before delta refuses the file there); a pure-epsilon grant has no delta left.
records=$(q -c "SELECT count(*) FROM dpmo.dp_ledger()")
check delta_grant_arguments "$(qe -c "SELECT dpmo.dp_budget_grant('racer', 1, 'other', 1)") | $(qe -c "SELECT dpmo.dp_budget_top_up('approx', 1, delta => 0.999999)") | $(qe -c "SELECT dpmo.dp_budget_grant('racer', 1, 'other', NULL)") | $(q -c "SELECT count(*) - $records FROM dpmo.dp_ledger()") written" \
  "ERROR:  dp_budget_grant: delta must be a number from 0 (included) to 1 (excluded) | ERROR:  dp_budget_top_up: the total delta would not be below 1 | ERROR:  dp_budget_grant: the role, epsilon and delta must not be NULL | 0 written"
check ledger_starts_with_its_format_record "$(q -c "SELECT seq, kind, epsilon, delta, mechanism FROM dpmo.dp_ledger() ORDER BY seq LIMIT 1")" \
  "1|format|0|0|dpmo ledger format 2: readers before dpmo 0.3 refuse this file"
check pure_grant_has_no_delta_left "$(q -U crasher -c 'SELECT dpmo.dp_budget_remaining(), dpmo.dp_budget_remaining_delta()')" "1|0"

# --- Attack: an immediate shutdown (no checkpoint, backends killed) keeps every charge and grant.
q -U crasher -c "SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t" >/dev/null
q -U crasher -c "BEGIN; SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t; ROLLBACK" >/dev/null
q -U approx -c "SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t" >/dev/null
before=$(q -c "SELECT string_agg(concat_ws(':', grant_id, role, dataset, total, spent, delta_total, delta_spent), ' ' ORDER BY grant_id) FROM dpmo.dp_budget_grants()")
records=$(q -c "SELECT count(*) FROM dpmo.dp_ledger()")
stop_server immediate
start_server "$PRELOAD"
after=$(q -c "SELECT string_agg(concat_ws(':', grant_id, role, dataset, total, spent, delta_total, delta_spent), ' ' ORDER BY grant_id) FROM dpmo.dp_budget_grants()")
check immediate_shutdown_keeps_ledger "$(q -c "SELECT spent FROM dpmo.dp_budget_grants() WHERE role = 'crasher'") spent after restart, $(q -c 'SELECT count(*) FROM dpmo.dp_ledger()') records, grants equal: $([ "$before" == "$after" ] && echo yes || echo no)" \
  "0.5 spent after restart, $records records, grants equal: yes"
# (1e-6 + 2e-6, rounded down as every top-up is: the total never exceeds the exact sum of the grants)
check delta_budget_replayed_at_restart "$(q -U approx -c 'SELECT dpmo.dp_budget_remaining(), dpmo.dp_budget_remaining_delta()'); $(q -c "SELECT total, spent, delta_total, delta_spent, delta_remaining FROM dpmo.dp_budget_grants() WHERE role = 'approx'")" \
  "1.25|2.9999999999999997e-06; 1.5|0.25|2.9999999999999997e-06|0|2.9999999999999997e-06"

# --- A torn last record (a writer killed inside its write) is cut off at restart; nothing else is lost.
stop_server immediate
as_owner "head -c 100 /dev/urandom >> '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
after=$(q -c "SELECT string_agg(concat_ws(':', grant_id, role, dataset, total, spent, delta_total, delta_spent), ' ' ORDER BY grant_id) FROM dpmo.dp_budget_grants()")
check torn_last_record_cut_at_restart "$(grep -c 'was incomplete and was cut off' "$TMP/server.log") cut, grants equal: $([ "$before" == "$after" ] && echo yes || echo no), then $(q -U crasher -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) IS NOT NULL FROM t')" \
  "1 cut, grants equal: yes, then t"

# --- A damaged record that is not the last: the server starts, but every selection is refused.
stop_server fast
size=$(stat -c %s "$DATA/dpmo_ledger")
as_owner "cp '$DATA/dpmo_ledger' '$TMP/ledger.good'"
as_owner "printf 'XXXX' | dd of='$DATA/dpmo_ledger' bs=1 seek=400 conv=notrunc status=none"
start_server "$PRELOAD"
contains corrupt_ledger_fails_closed "$(qe -U crasher -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t') | $(qe -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t')" \
  "dp_select: the privacy ledger is unusable: private selections are refused until an administrator repairs it | ERROR:  dp_select: the privacy ledger is unusable: record 2 (byte 312) is invalid and is not the last one"
stop_server fast
as_owner "cp '$TMP/ledger.good' '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
check repaired_ledger_accepted "$(stat -c %s "$DATA/dpmo_ledger") bytes, $(q -U crasher -c 'SELECT round(dpmo.dp_budget_remaining()::numeric, 4)')" \
  "$size bytes, 0.2500"

# --- Pay what you get: a dp_discover_top_k that stops at ⊥ is settled by a refund record, replayed at restart
# (the values are libdpmo's dpmo_budget after the same calls: sql/pay_what_you_get.sql); a crash between its
# charge and its refund (dpmo.test_crash_before_refund: a PANIC, then crash recovery) keeps the full charge,
# and the refund is never written afterwards.
q -c "CREATE TABLE pwyg_ev AS SELECT i::bigint AS u, 7::bigint AS i FROM generate_series(0, 399) i" >/dev/null
q -c "CREATE ROLE pwyg_r LOGIN; GRANT SELECT ON pwyg_ev TO pwyg_r" >/dev/null
q -c "SELECT dpmo.dp_budget_grant('pwyg_r', 4, NULL, 1e-3)" >/dev/null
q -U pwyg_r -c "SELECT dpmo.dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM pwyg_ev" >/dev/null
stop_server immediate
start_server "$PRELOAD"
check refund_replayed_at_restart "$(q -U pwyg_r -c 'SELECT dpmo.dp_budget_remaining(), dpmo.dp_budget_remaining_delta()'); $(q -c "SELECT string_agg(kind, ' ' ORDER BY seq) FROM dpmo.dp_ledger() WHERE role = 'pwyg_r'")" \
  "3.5999999999999996|0.0009989999999999999; grant charge refund"
qe -c "SET dpmo.test_crash_before_refund = on; SET SESSION AUTHORIZATION pwyg_r; SELECT dpmo.dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM pwyg_ev" >"$TMP/crash.out"
for _ in $(seq 120); do q -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
# (the deliberate PANIC and its crash recovery: the final check below counts only crashes beyond these lines)
expected_crash_lines=$(grep -c -E "PANIC|terminated by signal|server process .* was terminated" "$TMP/server.log" || true)
check crash_between_charge_and_refund_keeps_the_full_charge "$(grep -c 'test crash between a charge and its refund' "$TMP/server.log") panic; $(q -U pwyg_r -c 'SELECT dpmo.dp_budget_remaining(), dpmo.dp_budget_remaining_delta()'); $(q -c "SELECT string_agg(kind, ' ' ORDER BY seq) FROM dpmo.dp_ledger() WHERE role = 'pwyg_r'")" \
  "1 panic; 2.5999999999999996|0.000998; grant charge refund charge"
q -U pwyg_r -c "SELECT dpmo.dp_discover_top_k(u, i, 1.0, 1e-6, 1, 1) FROM pwyg_ev" >/dev/null
check after_the_crash_the_next_call_is_charged_as_usual "$(q -U pwyg_r -c 'SELECT dpmo.dp_budget_remaining(), dpmo.dp_budget_remaining_delta()'); $(q -c "SELECT string_agg(kind, ' ' ORDER BY seq) FROM dpmo.dp_ledger() WHERE role = 'pwyg_r'")" \
  "1.5999999999999996|0.0009969999999999998; grant charge refund charge charge"

# --- A hot standby made from a base backup holds a copy of the ledger; spending it there would spend the
# primary's budget twice: selections are refused on a server in recovery.
as_owner "'$BIN/pg_basebackup' -h 127.0.0.1 -p $PORT -U postgres -D '$TMP/standby' -R -X stream -c fast" >/dev/null 2>&1 \
  || fail "pg_basebackup for the standby test"
# The standby's port: the next free one; a port that no server answers on may still be bound (an outgoing
# connection's ephemeral port: "could not bind ... Address already in use"), so a failed start on such a port
# tries the next, as start_server does.
start_standby() {
  local tries=0
  SPORT=$((PORT + 1))
  while :; do
    while (exec 3<>"/dev/tcp/127.0.0.1/$SPORT") 2>/dev/null; do SPORT=$((SPORT + 1)); done
    if as_owner "'$BIN/pg_ctl' -D '$TMP/standby' -p '$POSTGRES' -l '$TMP/standby.log' -w -t 60 \
        -o \"-c listen_addresses=127.0.0.1 -p $SPORT -k '$TMP' -c shared_preload_libraries=dpmo\" start" >/dev/null; then
      return 0
    fi
    tries=$((tries + 1))
    if [ $tries -ge 20 ] || ! grep -q "could not bind\|already in use" "$TMP/standby.log"; then return 1; fi
    SPORT=$((SPORT + 1))
  done
}
if start_standby; then
  contains standby_refuses_selections "$(qe -p "$SPORT" -U crasher -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t')" \
    "private selections are refused on a server in recovery"
  # Promoted, it is on a new timeline: its ledger (a copy) may lack the primary's latest records, so it
  # refuses until a superuser has put the primary's ledger in place and accepts it.
  as_owner "'$BIN/pg_ctl' -D '$TMP/standby' -w promote" >/dev/null
  check promoted_standby_fails_closed_until_accept \
    "$(qe -p "$SPORT" -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t' | head -1) | $(qe -p "$SPORT" -U crasher -c 'SELECT dpmo.dp_ledger_accept()') | $(q -p "$SPORT" -c 'SELECT dpmo.dp_ledger_accept() > 0') | $(q -p "$SPORT" -U crasher -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) IS NOT NULL FROM t')" \
    "ERROR:  dp_select: the privacy ledger is unusable: this server is on WAL timeline 2 but the ledger was last written on timeline 1: the server was promoted or restored to a point in time since, and dpmo_ledger may lack records of the server it came from; put that server's dpmo_ledger in place with this one stopped, then SELECT dpmo.dp_ledger_accept() | ERROR:  permission denied for function dp_ledger_accept | t | t"
  as_owner "'$BIN/pg_ctl' -D '$TMP/standby' -m fast -w stop" >/dev/null
else
  fail "standby_refuses_selections: the standby did not start"; tail -5 "$TMP/standby.log"
fi

# --- A lost or rolled-back ledger stops selections: the server never starts from an empty or older ledger
# on its own. (Each case restores the ledger, then checks that selections work again.)
q -c "SELECT dpmo.dp_budget_top_up('crasher', 10)" >/dev/null
select_as_crasher() { qe -U crasher -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) IS NOT NULL FROM t' | head -1; }
select_as_superuser() { qe -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) IS NOT NULL FROM t' | head -1; }
REFUSED="ERROR:  dp_select: the privacy ledger is unusable: private selections are refused until an administrator repairs it"

# Removed with the server stopped: refused at restart (the anchor says how many records there were).
records=$(q -c "SELECT count(*) FROM dpmo.dp_ledger()")
stop_server fast
as_owner "mv '$DATA/dpmo_ledger' '$TMP/ledger.saved'"
start_server "$PRELOAD"
check deleted_ledger_fails_closed_at_restart \
  "$(select_as_crasher) | $(select_as_superuser) | $(qe -c "SELECT dpmo.dp_budget_grant('crasher', 100, 'x')" | head -1)" \
  "$REFUSED | ERROR:  dp_select: the privacy ledger is unusable: dpmo_ledger is missing but its anchor dpmo_ledger.anchor is not (it says the ledger held $records records): put the ledger back with the server stopped; SELECT dpmo.dp_ledger_init() starts an empty one instead, and every budget with it | ERROR:  dp_budget_grant: the privacy ledger is unusable: dpmo_ledger is missing but its anchor dpmo_ledger.anchor is not (it says the ledger held $records records): put the ledger back with the server stopped; SELECT dpmo.dp_ledger_init() starts an empty one instead, and every budget with it"
stop_server fast
as_owner "mv '$TMP/ledger.saved' '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
check deleted_ledger_put_back "$(select_as_crasher)" "t"

# Replaced by an older copy with the server stopped (a restore from a file backup, a mistake): refused at
# restart; superusers may still inspect it; the complete file put back is accepted again.
stop_server fast
as_owner "cp '$DATA/dpmo_ledger' '$TMP/ledger.old'"
start_server "$PRELOAD"
select_as_crasher >/dev/null
records=$(q -c "SELECT count(*) FROM dpmo.dp_ledger()")
stop_server fast
as_owner "cp '$DATA/dpmo_ledger' '$TMP/ledger.complete' && cp '$TMP/ledger.old' '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
check rolled_back_ledger_fails_closed \
  "$(select_as_crasher) | $(select_as_superuser) | inspected $(q -c 'SELECT count(*) FROM dpmo.dp_ledger()') records" \
  "$REFUSED | ERROR:  dp_select: the privacy ledger is unusable: dpmo_ledger holds $((records - 1)) records but held $records: it was rolled back (an older copy?); put the complete file back with the server stopped, or accept this one with SELECT dpmo.dp_ledger_accept() | inspected $((records - 1)) records"
stop_server fast
as_owner "cp '$TMP/ledger.complete' '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
check rolled_back_ledger_put_back "$(select_as_crasher)" "t"

# Without its anchor (removed, or a ledger from before anchors): refused until a superuser accepts it.
stop_server fast
as_owner "rm '$DATA/dpmo_ledger.anchor'"
start_server "$PRELOAD"
records=$(q -c "SELECT count(*) FROM dpmo.dp_ledger()")
check missing_anchor_fails_closed_until_accept \
  "$(select_as_superuser) | $(q -c 'SELECT dpmo.dp_ledger_accept()') | $(select_as_crasher)" \
  "ERROR:  dp_select: the privacy ledger is unusable: dpmo_ledger has no anchor (dpmo_ledger.anchor): if it holds every record, a superuser accepts it with SELECT dpmo.dp_ledger_accept() | $records | t"

# Removed, replaced or truncated while the server runs: new sessions find another file (or none), the next
# append a shorter one; every selection is refused until a restart checks the file against its anchor.
as_owner "mv '$DATA/dpmo_ledger' '$TMP/ledger.moved'"
check ledger_removed_while_running_fails_closed \
  "$(select_as_crasher) | $(select_as_superuser) | $(qe -c 'SELECT dpmo.dp_ledger_accept()' | head -1)" \
  "$REFUSED | ERROR:  dp_select: the privacy ledger is unusable: dpmo_ledger was removed while the server was running: restart the server | ERROR:  dp_ledger_accept: the privacy ledger is unusable: dpmo_ledger was removed while the server was running: restart the server"
stop_server fast
as_owner "mv '$TMP/ledger.moved' '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
as_owner "cp '$DATA/dpmo_ledger' '$TMP/ledger.copy' && mv '$TMP/ledger.copy' '$DATA/dpmo_ledger'"
check ledger_replaced_while_running_fails_closed "$(select_as_superuser)" \
  "ERROR:  dp_select: the privacy ledger is unusable: dpmo_ledger was replaced while the server was running: restart the server"
stop_server fast
start_server "$PRELOAD"
check ledger_replaced_by_an_identical_copy_accepted_at_restart "$(select_as_crasher)" "t"
size=$(stat -c %s "$DATA/dpmo_ledger")
as_owner "cp '$DATA/dpmo_ledger' '$TMP/ledger.full' && truncate -s -312 '$DATA/dpmo_ledger'"
out="$(select_as_superuser)"
stop_server fast
start_server "$PRELOAD"
check ledger_truncated_while_running_fails_closed "$out | $(select_as_superuser | grep -o 'dpmo_ledger holds [0-9]* records but held [0-9]*: it was rolled back')" \
  "ERROR:  dp_select: the privacy ledger is unusable: dpmo_ledger is shorter than the $size bytes the server wrote: it was truncated or overwritten while the server was running: restart the server | dpmo_ledger holds $((size / 312 - 1)) records but held $((size / 312)): it was rolled back"
stop_server fast
as_owner "cp '$TMP/ledger.full' '$DATA/dpmo_ledger'"
start_server "$PRELOAD"
check ledger_truncated_put_back "$(select_as_crasher)" "t"

# --- The shared SQL surface (bindings/testdata/surface.cases) and the README snippets.
if out=$(PGOPTIONS='-c search_path=dpmo,public' PYTHON=/usr/bin/python3 /usr/bin/python3 "$TESTDATA/surface.py" postgres 2>&1); then
  ok "surface cases: $(echo "$out" | tail -1)"
else
  echo "$out" | grep -v '^ok ' || true; fail "surface cases"
fi
if out=$(/usr/bin/python3 "$TESTDATA/snippets.py" postgres "$HERE/README.md" 2>&1); then
  ok "README snippets: $(echo "$out" | tail -1)"
else
  echo "$out"; fail "README snippets"
fi
if out=$(/usr/bin/python3 "$TESTDATA/snippets.py" postgres "$HERE/../../docs/sql.md" 2>&1); then
  ok "docs/sql.md snippets: $(echo "$out" | tail -1)"
else
  echo "$out"; fail "docs/sql.md snippets"
fi

# --- Starting over is explicit: with the ledger removed, a superuser creates an empty one; every budget is
# gone (selections refused for want of a grant), and the old file is never overwritten.
stop_server fast
as_owner "mv '$DATA/dpmo_ledger' '$TMP/ledger.retired'"
start_server "$PRELOAD"
check ledger_init_after_loss_starts_empty \
  "$(q -c 'SELECT dpmo.dp_ledger_init()')grants $(q -c 'SELECT count(*) FROM dpmo.dp_budget_grants()'), records $(q -c 'SELECT count(*) FROM dpmo.dp_ledger()') | $(qe -U crasher -c 'SELECT dpmo.dp_select(id, 0.25, score, 1) FROM t')" \
  "grants 0, records 0 | ERROR:  dp_select: no privacy budget applies to role \"crasher\"
HINT:  A superuser grants one with dp_budget_grant()."
check ledger_init_new_file_gets_its_format_record \
  "$(q -c "SELECT dpmo.dp_budget_grant('crasher', 1, delta => 0.5)"); $(q -c "SELECT string_agg(kind || ':' || delta, ',' ORDER BY seq) FROM dpmo.dp_ledger()")" \
  "1; format:0,grant:0.5"

if [ "$(grep -c -E "PANIC|terminated by signal|server process .* was terminated" "$TMP/server.log" || true)" != "${expected_crash_lines:-0}" ]; then
  fail "the server log reports a crash:"; grep -E "PANIC|terminated by signal" "$TMP/server.log" || true
fi
stop_server fast
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
