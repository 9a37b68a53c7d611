-- Parallel plans: workers build partial states (Partial Aggregate below a Gather), the leader finalises
-- (Finalize Aggregate: one draw, one charge). A whole selection is never placed inside a worker, so
-- queries with cheap parallelism, such as a grouped selection joined by a parallel hash join, work.
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE OR REPLACE FUNCTION dp_seed(text) RETURNS void AS '$libdir/dpmo', 'dpmo_pg_seed' LANGUAGE C STRICT;
CREATE TABLE p AS
  SELECT g::bigint AS id, ((g::bigint * 7919) % 1000)::float8 AS u1, ((g::bigint * 104729) % 997)::float8 AS u2,
         g % 4 AS grp
  FROM generate_series(1, 50000) g;
CREATE TABLE q AS SELECT g % 4 AS grp, g AS x FROM generate_series(1, 200000) g;
ANALYZE p;
ANALYZE q;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

EXPLAIN (COSTS OFF) SELECT dp_select(id, 1, u1, 1) FROM p;
EXPLAIN (COSTS OFF) SELECT grp, dp_pareto_select(id, 1, ARRAY[u1, u2]) FROM p GROUP BY grp;

-- Workers really ran (EXPLAIN ANALYZE), and the result is valid.
CREATE FUNCTION workers_launched(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
  RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Workers Launched')::int;
END $$;
SELECT workers_launched('SELECT dp_select(id, 1, u1, 1) FROM p') > 0 AS parallel_workers_ran;

-- Issue 11, item 5: a selection on the inner side of a hash join below a Gather. With the aggregates
-- PARALLEL SAFE and nothing else, the planner ran the whole aggregate (here without a partial form, because
-- of DISTINCT) inside every worker, and the query failed with "cannot be finalised in a parallel worker"
-- (checked by disabling the extension's planner hook). Now the aggregate stays in the leader, above a
-- Gather of the parallel scans (the join runs in the leader too).
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM q JOIN (SELECT dp_select(DISTINCT id, 1, u1, 1) AS pick FROM p) s ON q.x = s.pick;
SELECT count(*) AS joined FROM q JOIN (SELECT dp_select(DISTINCT id, 1, u1, 1) AS pick FROM p) s ON q.x = s.pick;
-- The grouped form keeps its partial aggregation in the workers.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM q JOIN (SELECT grp, dp_select(id, 1, u1, 1) AS pick FROM p GROUP BY grp) s USING (grp);
SELECT count(*) AS joined FROM q JOIN (SELECT grp, dp_select(id, 1, u1, 1) AS pick FROM p GROUP BY grp) s USING (grp);
RESET enable_mergejoin;
RESET enable_nestloop;
SELECT count(*) AS picks_in_their_group FROM (SELECT grp, dp_select(id, 10, u1, 1) AS pick FROM p GROUP BY grp) s
JOIN p ON p.id = s.pick AND p.grp = s.grp;

SELECT dp_seed('parallel');
CREATE TEMP TABLE par AS
  SELECT dp_select(id, 10, u1, 1) AS a,
         dp_select_top_k(id, 50, 5, u1, 1) AS b,
         dp_pareto_select(id, 10, ARRAY[u1, u2]) AS c,
         dp_agg_select(id, 1, ARRAY[1, 1], ARRAY[u1, u2], ARRAY[1, 1]) AS d,
         dp_select_local(id, 10, u1, ARRAY[1.0, 1.0], 1) AS e
  FROM p;
CREATE TEMP TABLE par_grp AS
  SELECT grp, dp_pareto_select_local(id, 10, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1]) AS c FROM p GROUP BY grp;

-- valid: best u1 is 999, 50 rows each value; at epsilon 10 (sensitivity 1) a value below 990 weighs e^-50 or
-- less against a 999; every id a candidate; each group's choice from its group
SELECT (SELECT u1 FROM p WHERE id = a) >= 990 AS a_near_best,
       b <@ (SELECT array_agg(id) FROM p WHERE u1 >= 990) AS b_near_best,
       c BETWEEN 1 AND 50000 AS c_valid, d BETWEEN 1 AND 50000 AS d_valid,
       (SELECT u1 FROM p WHERE id = e) >= 990 AS e_near_best
FROM par;
SELECT par_grp.grp, p.grp = par_grp.grp AS from_own_group FROM par_grp JOIN p ON p.id = par_grp.c ORDER BY 1;

-- the same seed without parallelism gives the same results (candidates are sorted by id)
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT dp_select(id, 1, u1, 1) FROM p;
SELECT dp_seed('parallel');
SELECT (par.*) = (s.*) AS same_as_parallel
FROM par, (SELECT dp_select(id, 10, u1, 1) AS a,
                  dp_select_top_k(id, 50, 5, u1, 1) AS b,
                  dp_pareto_select(id, 10, ARRAY[u1, u2]) AS c,
                  dp_agg_select(id, 1, ARRAY[1, 1], ARRAY[u1, u2], ARRAY[1, 1]) AS d,
                  dp_select_local(id, 10, u1, ARRAY[1.0, 1.0], 1) AS e
           FROM p) s;
-- groups are finalised in the same order (0, 1, 2, 3) as by the parallel Finalize GroupAggregate
SET enable_hashagg = off;
SELECT bool_and(s.c = par_grp.c) AS same_as_parallel
FROM (SELECT grp, dp_pareto_select_local(id, 10, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1]) AS c FROM p GROUP BY grp) s
JOIN par_grp USING (grp);
