-- Parallel aggregation: partial states built in workers, serialised, combined in the leader, where the
-- final function selects. Candidates are sorted by id, so the plan does not change a seeded result.
CREATE TABLE p AS
  SELECT g::bigint AS id, ((g::bigint * 7919) % 1000)::float8 AS u1, ((g::bigint * 104729) % 997)::float8 AS u2, g % 4 AS grp
  FROM generate_series(1, 50000) g;
ANALYZE p;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;

EXPLAIN (COSTS OFF) SELECT dp_select(id, 1, u1, 1) FROM p;
EXPLAIN (COSTS OFF) SELECT grp, dp_pareto_select(id, 1, u1, u2) FROM p GROUP BY grp;

-- Workers really ran (EXPLAIN ANALYZE), and the result is valid.
CREATE FUNCTION workers_launched(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO plan;
  RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Workers Launched')::int;
END $$;
SELECT workers_launched('SELECT dp_select(id, 1, u1, 1) FROM p') > 0 AS parallel_workers_ran;

SELECT dp_seed('parallel');
CREATE TEMP TABLE par AS
  SELECT dp_select(id, 1, u1, 1) AS a,
         dp_select_top_k(id, 50, u1, 1, 5) AS b,
         dp_pareto_select(id, 10, u1, u2) AS c,
         dp_agg_select(id, 1, ARRAY[1, 1], ARRAY[u1, u2], ARRAY[1, 1]) AS d,
         dp_select_local(id, 1, u1, ARRAY[1.0, 1.0], 1) AS e
  FROM p;
CREATE TEMP TABLE par_grp AS
  SELECT grp, dp_pareto_select_local(id, 10, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1]) AS c FROM p GROUP BY grp;

-- valid: best u1 is 999 (Δ = 1, ε = 1); every id a candidate; each group's choice from its group
SELECT (SELECT u1 FROM p WHERE id = a) >= 990 AS a_near_best,
       b <@ (SELECT array_agg(id) FROM p WHERE u1 >= 990) AS b_near_best,
       c BETWEEN 1 AND 50000 AS c_valid, d BETWEEN 1 AND 50000 AS d_valid,
       (SELECT u1 FROM p WHERE id = e) >= 990 AS e_near_best
FROM par;
SELECT par_grp.grp, p.grp = par_grp.grp AS from_own_group FROM par_grp JOIN p ON p.id = par_grp.c ORDER BY 1;

-- the same seed without parallelism gives the same results
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT dp_select(id, 1, u1, 1) FROM p;
SELECT dp_seed('parallel');
SELECT (par.*) = (s.*) AS same_as_parallel
FROM par, (SELECT dp_select(id, 1, u1, 1) AS a,
                  dp_select_top_k(id, 50, u1, 1, 5) AS b,
                  dp_pareto_select(id, 10, u1, u2) AS c,
                  dp_agg_select(id, 1, ARRAY[1, 1], ARRAY[u1, u2], ARRAY[1, 1]) AS d,
                  dp_select_local(id, 1, u1, ARRAY[1.0, 1.0], 1) AS e
           FROM p) s;
-- groups are finalised in the same order (0, 1, 2, 3) as by the parallel Finalize GroupAggregate
SET enable_hashagg = off;
SELECT bool_and(s.c = par_grp.c) AS same_as_parallel
FROM (SELECT grp, dp_pareto_select_local(id, 10, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1]) AS c FROM p GROUP BY grp) s
JOIN par_grp USING (grp);
