-- Bounded memory of the discovery aggregates (bindings/SQL.md, "Bounded memory"): a group's rows are compacted
-- to each unit's bottom L items by a fixed keyed hash (SipHash-2-4, bindings/testdata/bottom_l.py), so memory
-- follows L, not the events, and what a unit keeps depends neither on the row order nor on the parallel split.
-- And the events and sum scores: released, charged, refusals free, an item of one unit never released.
SET search_path = public, dpmo;
CREATE ROLE bnd_analyst;
CREATE ROLE bnd_pure;
CREATE ROLE bnd_small;
SELECT dp_budget_grant('bnd_analyst', 1e9, NULL, 0.5);
SELECT dp_budget_grant('bnd_pure', 5);
SELECT dp_budget_grant('bnd_small', 1, NULL, 1e-3);

-- Memory: one unit streams 10^6 events over 10^5 items (L = C = 4). The events alone are 16 MB; the peak RSS
-- of this backend (VmHWM) grows by less than 8 MB.
CREATE FUNCTION pg_temp.hwm_kb() RETURNS bigint LANGUAGE sql
AS $$ SELECT (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::bigint $$;
SELECT count(*), sum(x % 100000) FROM generate_series(0, 999999) x;  -- the scan's own memory first
CREATE TEMP TABLE hwm AS SELECT pg_temp.hwm_kb() AS before;
GRANT SELECT ON hwm TO bnd_analyst;
SET SESSION AUTHORIZATION bnd_analyst;
SELECT dp_discover_partitions(7, x % 100000, 1.0, 1e-6, 4) FROM generate_series(0, 999999) x;
SELECT dp_discover_top_k(7, x % 100000, 1.0, 1e-6, 2, 4) FROM generate_series(0, 999999) x;
SELECT dp_discover_top_k_events(7, x % 100000, 1.0, 1e-6, 2, 4, 4) FROM generate_series(0, 999999) x;
SELECT dp_discover_top_k_sum(7, x % 100000, x * 1e-3, 1.0, 1e-6, 2, 4, 4, 0, 1) FROM generate_series(0, 999999) x;
RESET SESSION AUTHORIZATION;
SELECT pg_temp.hwm_kb() - before < 8192 AS peak_growth_below_8_mb FROM hwm;

-- Order and split: 30,000 units, each with the items 1, 2, 3 (two events each). At L = 1 a unit keeps the item of
-- smallest hash; bottom_l.py predicts the kept counts 2: 10024, 3: 9996, 1: 9980, so a top-3 at a very large
-- epsilon releases {2,3,1} whatever the order of the rows and however the workers split them.
CREATE TABLE bev AS SELECT u::bigint AS u, i::bigint AS i FROM generate_series(0, 29999) u, generate_series(1, 3) i,
  generate_series(1, 2) r;
ANALYZE bev;
GRANT SELECT ON bev TO bnd_analyst;
SET SESSION AUTHORIZATION bnd_analyst;
SELECT dp_discover_top_k(u, i, 300.0, 1e-6, 3, 1) FROM bev;
SELECT dp_discover_top_k(u, i, 300.0, 1e-6, 3, 1) FROM (SELECT * FROM bev ORDER BY i, u OFFSET 0) s;
SELECT dp_discover_top_k(u, i, 300.0, 1e-6, 3, 1) FROM (SELECT * FROM bev ORDER BY i DESC, u OFFSET 0) s;
SELECT dp_discover_top_k_events(u, i, 600.0, 1e-6, 3, 1, 2) FROM (SELECT * FROM bev ORDER BY i DESC, u OFFSET 0) s;
SELECT dp_discover_top_k_sum(u, i, 5, 600.0, 1e-6, 3, 1, 2, 0, 1) FROM (SELECT * FROM bev ORDER BY i, u OFFSET 0) s;
-- a parallel plan: workers build partial states, serialise them, the leader combines them
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT dp_discover_top_k(u, i, 300.0, 1e-6, 3, 1) FROM bev;
SELECT dp_discover_top_k(u, i, 300.0, 1e-6, 3, 1) FROM bev;
SELECT dp_discover_top_k_events(u, i, 600.0, 1e-6, 3, 1, 2) FROM bev;
SELECT dp_discover_top_k_sum(u, i, 5, 600.0, 1e-6, 3, 1, 2, 0, 1) FROM bev;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
RESET SESSION AUTHORIZATION;

-- The events and sum scores: 400 units with one event of 0.25 on item 7, 300 with two of 1.0 on -3, one unit
-- with 50 events of 1e9 on 99 (its score is at most the sensitivity), NULL values on 5 and NaN on 6 (count as 0).
CREATE TABLE sev (u bigint, i bigint, v float8);
INSERT INTO sev SELECT r, 7, 0.25 FROM generate_series(0, 399) r;
INSERT INTO sev SELECT r, -3, 1.0 FROM generate_series(0, 299) r, generate_series(1, 2);
INSERT INTO sev SELECT 1000, 99, 1e9 FROM generate_series(1, 50);
INSERT INTO sev SELECT r, 5, NULL FROM generate_series(0, 499) r;
INSERT INTO sev SELECT r, 6, 'NaN' FROM generate_series(500, 799) r;
GRANT SELECT ON sev TO bnd_analyst, bnd_pure, bnd_small;
SET SESSION AUTHORIZATION bnd_pure;
SELECT dp_discover_top_k_events(u, i, 1.0, 1e-6, 1, 1, 1) FROM sev;
SELECT dp_discover_top_k_sum(u, i, v, 1.0, 1e-6, 1, 1, 1, 0, 1) FROM sev;
SELECT dp_budget_remaining() AS pure_left;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION bnd_small;
SELECT dp_discover_top_k_sum(u, i, v, 2, 1e-6, 1, 1, 1, 0, 1) FROM sev;
SELECT dp_budget_remaining() AS small_left;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION bnd_analyst;
CREATE TEMP TABLE spent AS SELECT dp_budget_remaining() AS eps, dp_budget_remaining_delta() AS dlt;
-- refusals: nothing charged
SELECT dp_discover_top_k_events(u, i, 1, 1e-6, 1, 1, 0) FROM sev;
SELECT dp_discover_top_k_events(u, i, 1, 1e-6, 1, 1, 1 + u::int) FROM sev;
SELECT dp_discover_top_k_sum(u, i, v, 1, 1e-6, 1, 1, 1, -1, 1) FROM sev;
SELECT dp_discover_top_k_sum(u, i, v, 1, 1e-6, 1, 1, 1, 0, 'Infinity') FROM sev;
SELECT dp_discover_top_k_sum(u, i, v, 1, 1e-6, 1, 1, 1, 0, NULL) FROM sev;
SELECT dp_budget_remaining() = eps AS epsilon_unchanged, dp_budget_remaining_delta() = dlt AS delta_unchanged FROM spent;
-- released and charged (at ε = 20 the released sets are certain up to about e^-30: the gaps between the
-- scores are at least 50, the noise scale 0.6)
SELECT dp_discover_top_k_events(u, i, 20.0, 1e-9, 2, 4, 3) FROM sev;
SELECT dp_discover_top_k_sum(u, i, v, 20.0, 1e-9, 2, 4, 3, 0, 1) FROM sev;
SELECT dp_discover_top_k_sum(u, i, v, 20.0, 1e-9, 4, 4, 3, 0.5, 1) FROM sev;
-- 99 never: in 50 runs of each score at epsilon 200 it beats the threshold with probability about delta each
SELECT count(*) FILTER (WHERE 99 = ANY(t)) AS with_99, count(*) FILTER (WHERE -3 = ANY(t)) AS with_minus_3
FROM (SELECT r, dp_discover_top_k(u, i, 200.0, 1e-10, 5, 4) AS t FROM generate_series(1, 50) r, sev GROUP BY r) s;
SELECT count(*) FILTER (WHERE 99 = ANY(t)) AS with_99, count(*) FILTER (WHERE -3 = ANY(t)) AS with_minus_3
FROM (SELECT r, dp_discover_top_k_events(u, i, 200.0, 1e-10, 5, 4, 3) AS t FROM generate_series(1, 50) r, sev GROUP BY r) s;
SELECT count(*) FILTER (WHERE 99 = ANY(t)) AS with_99, count(*) FILTER (WHERE -3 = ANY(t)) AS with_minus_3
FROM (SELECT r, dp_discover_top_k_sum(u, i, v, 200.0, 1e-10, 5, 4, 3, 0, 1) AS t FROM generate_series(1, 50) r, sev GROUP BY r) s;
RESET SESSION AUTHORIZATION;
SELECT mechanism, count(*) FILTER (WHERE epsilon > 0) AS charges FROM dp_audit WHERE role = 'bnd_analyst'
GROUP BY mechanism ORDER BY mechanism;
SELECT count(*) AS refused_charges FROM dp_audit WHERE role IN ('bnd_pure', 'bnd_small');
