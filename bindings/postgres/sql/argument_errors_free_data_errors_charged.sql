-- Bad input is a clean ERROR (texts shared with SQLite, see bindings/testdata/surface.cases), never a
-- crash; an error in the public arguments charges nothing, and the private data never causes an error (NULL,
-- NaN and bad local sensitivities follow the public rule of bindings/SQL.md). Checked on a role of its own with a grant of 1.125
-- (0.125 for the two calls whose public arguments are constants folded by the planner or parameters).
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE TABLE e AS SELECT g::bigint AS id, g::float8 AS score FROM generate_series(1, 5) g;
CREATE ROLE err_analyst;
GRANT SELECT ON e TO err_analyst;
SELECT dp_budget_grant('err_analyst', 1.125);
SET SESSION AUTHORIZATION err_analyst;

-- argument errors: nothing charged
SELECT dp_select(id, 1, score, 1) FROM e WHERE false;
SELECT dp_select(id, 1, score, 1) FILTER (WHERE id > 100) FROM e;
SELECT dp_select(id, 0, score, 1) FROM e;
SELECT dp_select(id, 'NaN', score, 1) FROM e;
SELECT dp_select(id, 1, score, 'Infinity') FROM e;
SELECT dp_select(NULL, 1, score, 1) FROM e;
SELECT dp_select(1, 1, score, 1) FROM e;
SELECT dp_select(id, id::float8, score, 1) FROM e;
-- public arguments computed from the rows are refused from the plan, before the first row is used (a refusal
-- of such a value would be a free answer about the data): columns, subqueries, aggregates, in every position
SELECT dp_select(id, 1, score, score) FROM e;
SELECT dp_select(id, (SELECT min(score) FROM e), score, 1) FROM e;
SELECT dp_select_top_k(id, 1, (SELECT count(*) FROM e)::int, score, 1) FROM e;
SELECT dp_select(id, 1, score, 1, CASE WHEN score > 2 THEN 'exact' END) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, (SELECT max(score) FROM e)], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_discover_top_k(id, id, 1, 1e-6, 1, (SELECT count(*) FROM e)::int) FROM e;
SELECT dp_discover_top_k_sum(id, id, score, 1, 1e-6, 1, 1, 1, 0, score) FROM e;
SELECT id % 2 AS g, dp_select(id, 1, score, score) FROM e GROUP BY id % 2;
SELECT id % 2 AS g, dp_select(id, 1, score, 1, CASE WHEN id % 2 = 0 THEN 'exact' END) FROM e GROUP BY GROUPING SETS ((id % 2), ());
SELECT dp_budget_remaining() AS nothing_charged_yet;
-- constants folded by the planner, parameters and functions that read no rows pass
PREPARE p(float8, int) AS SELECT dp_select_top_k(id, $1, $2, score, 1) IS NOT NULL AS ok FROM e;
EXECUTE p(0.0625, 1);
DEALLOCATE p;
SELECT dp_select(id, 1.0 / 16, score, 2 - 1, 'ex' || 'act') IS NOT NULL AS ok FROM e;
-- (a GROUP BY key is one value per group, public by SQL.md's rule: bindings/postgres/sql/surface.sql passes the
-- selector that way)
SELECT dp_select(id, 1, score, 1, 'argmax') FROM e;
SELECT dp_select(id, 1, score, 1, 'exponential, permute_and_flip') FROM e;
SELECT dp_select(id, 1, score, 1, 'shifted') FROM e;
SELECT dp_select_local(id, 1, score, 0.5, 1, 't_max=0') FROM e;
SELECT dp_select_local(id, 1, score, 0.5, 1, 't_max=1025') FROM e;
SELECT dp_select_local(id, 1, score, ARRAY[0.5], 1, 't_max=4') FROM e;
SELECT dp_select_local(id, 1, score, ARRAY[]::float8[], 1) FROM e;
SELECT dp_select_local(id, 1, score, array_fill(0.5::float8, ARRAY[1025]), 1) FROM e;
SELECT dp_select_local(id, 1, score, CASE WHEN id = 2 THEN ARRAY[1.0] ELSE ARRAY[0.5, 1] END, 1) FROM e;
SELECT dp_select_top_k(id, 1, 0, score, 1) FROM e;
SELECT dp_select_top_k(id, 1, 6, score, 1) FROM e;
SELECT dp_pareto_select(id, 1, ARRAY[]::float8[]) FROM e;
SELECT dp_pareto_select(id, 1, array_fill(1.0::float8, ARRAY[17])) FROM e;
SELECT dp_pareto_select(id, 1, ARRAY[[score, score], [score, score]]) FROM e;
SELECT dp_pareto_select(id, 1, CASE WHEN id = 2 THEN ARRAY[score] ELSE ARRAY[score, score] END) FROM e;
SELECT dp_pareto_select_local(id, 1, ARRAY[score, score], ARRAY[1], ARRAY[1, 1]) FROM e;
SELECT dp_pareto_select_local(id, 1, ARRAY[score, score], ARRAY[[1, 1], [1, 1], [1, 1]], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[0, 0], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, 'NaN'::float8], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, NULL], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, id], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, 1], ARRAY[score, score], ARRAY[1, 0]) FROM e;
SELECT dp_budget_remaining() AS nothing_charged;

-- a NaN or infinite score is data, never an error: NaN and -Infinity count as the lowest score (charged 0.0625 each)
SELECT dp_select(id, 0.0625, CASE WHEN id = 2 THEN 'NaN' ELSE score END, 1) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_select(id, 0.0625, CASE WHEN id = 2 THEN '-Infinity' ELSE score END, 1) IN (SELECT id FROM e) AS chosen FROM e;
-- NULLs and bad local sensitivities are data too, never an error (issue 20: no free probing): a NULL utility
-- counts as the lowest score, a NULL, negative or NaN delta as the sensitivity; charged 0.0625 each, a row chosen
SELECT dp_select(id, 0.0625, CASE WHEN id = 3 THEN NULL ELSE score END, 1) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_select_local(id, 0.0625, score, -0.5, 1) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_select_local(id, 0.0625, score, NULL::float8, 1) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_select_local(id, 0.0625, score, ARRAY[0.5, NULL], 1) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_pareto_select(id, 0.0625, CASE WHEN id = 1 THEN NULL ELSE ARRAY[score, score] END) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_pareto_select(id, 0.0625, ARRAY[score, NULL]) IN (SELECT id FROM e) AS chosen FROM e;
SELECT dp_budget_remaining() AS half_charged;

-- exhausted: a clear error, nothing charged
SELECT dp_select(id, 0.75, score, 1) FROM e;
SELECT dp_budget_remaining() AS unchanged;

-- the 6-probe attack of issue 20 (bisection for the NULL record at epsilon 5e-324) learns nothing: every probe
-- selects, and each is charged (a charge below the budget's resolution is rounded up to one ulp of the total)
SELECT count(*) FILTER (WHERE ok) AS probes_selected, count(*) AS probes
FROM (SELECT (SELECT dp_select(id, 5e-324, CASE WHEN id = 3 THEN NULL ELSE score END, 1, 'exact')
              FROM e WHERE id BETWEEN lo AND hi) BETWEEN lo AND hi AS ok
      FROM (VALUES (1, 5), (1, 2), (3, 5), (3, 3), (4, 5), (1, 1)) AS v(lo, hi)) AS probes;
SELECT dp_budget_remaining() < 0.5 AS probes_charged;

-- extreme but valid input is accepted; the session is intact. An epsilon below the isochronous mode's slack
-- (2^-40) is refused there, free; in exact arithmetic it runs.
SELECT dp_select(id, 1e-300, score * 1e300, 1e300) IN (SELECT id FROM e) AS ok FROM e;
SELECT dp_select(id, 1e-300, score * 1e300, 1e300, 'exact') IN (SELECT id FROM e) AS ok FROM e;
SELECT dp_select(id, dp_budget_remaining(), score, 1e-300) AS best FROM e;
RESET SESSION AUTHORIZATION;
SELECT role, total, spent, remaining FROM dp_budget_grants() WHERE role = 'err_analyst';
