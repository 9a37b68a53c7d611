-- The aggregates refuse to run as window functions (a window aggregate would be finalised once per row
-- and charged per frame); nothing is charged.
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE TABLE wt AS SELECT g::bigint AS id, g::float8 AS score FROM generate_series(1, 10) g;
CREATE ROLE windowed;
GRANT SELECT ON wt TO windowed;
SELECT dp_budget_grant('windowed', 1);
SET SESSION AUTHORIZATION windowed;
SELECT dp_select(id, 0.5, score, 1) OVER () FROM wt;
SELECT dp_select(id, 0.5, score, 1) OVER (ORDER BY id) FROM wt;
SELECT dp_select_top_k(id, 0.5, 2, score, 1) OVER (PARTITION BY id % 2) FROM wt;
SELECT dp_pareto_select(id, 0.5, ARRAY[score, -score]) OVER w FROM wt WINDOW w AS (ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING);
SELECT dp_budget_remaining() AS nothing_charged;
-- As a plain aggregate it works.
SELECT dp_select(id, 0.5, score, 1) IS NOT NULL AS selected FROM wt;
SELECT dp_budget_remaining();
RESET SESSION AUTHORIZATION;
