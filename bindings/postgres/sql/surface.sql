-- The aggregates of bindings/SQL.md on small tables: properties that hold whatever the draw, results at a
-- huge epsilon, GROUP BY, options, and reproducibility under the test-only seed. (The superuser running
-- the regression tests holds a large grant, made by run-tests.sh.)
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE OR REPLACE FUNCTION dp_seed(text) RETURNS void AS '$libdir/dpmo', 'dpmo_pg_seed' LANGUAGE C STRICT;
SELECT dp_version() ~ '^[0-9]+\.[0-9]+\.[0-9]+$' AS version_ok;

CREATE TABLE items AS
  SELECT g::bigint AS id, (g % 7)::float8 AS score, g % 3 AS grp, 0.5::float8 AS delta
  FROM generate_series(1, 30) g;
SELECT dp_seed('surface');

-- Any epsilon: the result is one of the candidates, for every selector.
SELECT s AS selector, dp_select(id, 0.1, score, 1, s) IN (SELECT id FROM items) AS is_candidate
FROM items, unnest(ARRAY['exponential', 'permute_and_flip', 'noisy_max_gumbel', 'noisy_max_exponential']) s
GROUP BY s ORDER BY s;
-- A huge epsilon makes every selector pick a best candidate (score 6: ids 6, 13, 20, 27).
SELECT s AS selector, (SELECT score FROM items i WHERE i.id = dp_select(t.id, 1e4, t.score, 1, s)) AS chosen_score
FROM items t, unnest(ARRAY['exponential', 'permute_and_flip', 'noisy_max_gumbel', 'noisy_max_exponential']) s
GROUP BY s ORDER BY s;
-- Options are case-insensitive words separated by commas or blanks.
SELECT dp_select(id, 1e4, score, 1, 'Permute_And_Flip') IN (6, 13, 20, 27) AS best FROM items;

-- GROUP BY: one private choice per group, from that group.
SELECT c.grp, c.grp = i.grp AS from_own_group
FROM (SELECT grp, dp_select(id, 0.5, score, 1) AS chosen FROM items GROUP BY grp) c
JOIN items i ON i.id = c.chosen ORDER BY c.grp;
-- An empty group is no group: GROUP BY over no rows returns no rows.
SELECT grp, dp_select(id, 1, score, 1) FROM items WHERE grp > 5 GROUP BY grp;

-- Top-k: k after epsilon; k distinct candidates; at a huge epsilon, the k best in order of score.
SELECT cardinality(r) AS k, cardinality(r) = (SELECT count(DISTINCT x) FROM unnest(r) x) AS distinct_ids,
       r <@ (SELECT array_agg(id) FROM items) AS candidates
FROM (SELECT dp_select_top_k(id, 1, 5, score, 1) AS r FROM items) s;
SELECT (SELECT array_agg(score ORDER BY ord) FROM unnest(r) WITH ORDINALITY u(x, ord) JOIN items ON id = x)
       AS scores_in_pick_order
FROM (SELECT dp_select_top_k(id, 1e5, 6, score, 1, 'permute_and_flip') AS r FROM items) s;
SELECT cardinality(dp_select_top_k(id, 0.1, 30, score, 1)) AS full_permutation FROM items;

-- Local dampening: a number delta (constant up to t_max), or a row of a delta table.
SELECT (SELECT score FROM items WHERE id = dp_select_local(t.id, 1e4, t.score, t.delta, 1)) AS chosen_score
FROM items t;
SELECT (SELECT score FROM items WHERE id = dp_select_local(t.id, 1e4, t.score, ARRAY[t.delta, 0.75, 1], 1,
                                                            'permute_and_flip')) AS chosen_score
FROM items t;
SELECT dp_select_local(id, 0.1, score, delta, 1, 'shifted, t_max=8') IN (SELECT id FROM items) AS is_candidate
FROM items;
SELECT (SELECT array_agg(score ORDER BY ord) FROM unnest(r) WITH ORDINALITY u(x, ord) JOIN items ON id = x)
       AS scores_in_pick_order
FROM (SELECT dp_select_local_top_k(id, 1e5, 4, score, delta, 1) AS r FROM items) s;

-- Multi-objective: the Pareto front of (u1, u2) is {27 (6, 27), 30 (2, 30)}.
CREATE TABLE m AS
  SELECT g::bigint AS id, (g % 7)::float8 AS u1, g::float8 AS u2, g % 2 AS grp FROM generate_series(1, 30) g;
SELECT id FROM m a WHERE NOT EXISTS (
  SELECT 1 FROM m o WHERE o.u1 >= a.u1 AND o.u2 >= a.u2 AND (o.u1 > a.u1 OR o.u2 > a.u2)) ORDER BY id;
-- PrivPareto, global (sensitivity n - 1): a large epsilon picks a Pareto-optimal candidate.
SELECT dp_pareto_select(id, 1e5, ARRAY[u1, u2]) IN (27, 30) AS pareto_optimal FROM m;
SELECT dp_pareto_select(id, 1e5, ARRAY[u1, u2], 'permute_and_flip, weak') IN (27, 30) AS pareto_optimal FROM m;
SELECT c.grp, c.chosen IN (SELECT id FROM m a WHERE a.grp = c.grp AND NOT EXISTS (
         SELECT 1 FROM m o WHERE o.grp = c.grp AND o.u1 >= a.u1 AND o.u2 >= a.u2 AND (o.u1 > a.u1 OR o.u2 > a.u2)))
       AS on_the_group_front
FROM (SELECT grp, dp_pareto_select(id, 1e5, ARRAY[u1, u2]) AS chosen FROM m GROUP BY grp) c ORDER BY grp;
-- top-k re-scores the candidates left: after 30 (or 27), 29 (or 27) joins the front.
SELECT r[1] IN (27, 30) AS first_on_the_front, r[2] IN (27, 29, 30, 20, 26) AS second_on_the_next_front,
       cardinality(r) AS k
FROM (SELECT dp_pareto_select_top_k(id, 1e6, 3, ARRAY[u1, u2]) AS r FROM m) s;
-- PrivPareto, local: per-objective deltas as numbers, or as rows of delta tables (a 2-D array). With
-- delta = 1 everywhere, P(front) = 0.46 at epsilon 10, 1 - 1e-9 at 200 (dpmo_privpareto_probabilities).
SELECT dp_pareto_select_local(id, 300, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1]) IN (27, 30) AS pareto_optimal FROM m;
SELECT dp_pareto_select_local(id, 300, ARRAY[u1, u2], ARRAY[[1, 1, 1], [1, 1, 1]], ARRAY[1, 1]) IN (27, 30)
       AS pareto_optimal
FROM m;
SELECT r[1] IN (27, 30) AS first_on_the_front, cardinality(r) AS k
FROM (SELECT dp_pareto_select_local_top_k(id, 600, 2, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1], 'noisy_max_gumbel')
      AS r FROM m) s;
-- PrivAgg: u_agg = sum of w_i u_i, sensitivity sum of |w_i| Delta_i; weights (1, 0.1): 27 (8.7) is the best.
SELECT dp_agg_select(id, 1e4, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[1, 1]) AS chosen FROM m;
SELECT dp_agg_select(id, 1e4, ARRAY[1, -0.1], ARRAY[u1, u2], ARRAY[1, 1], 'permute_and_flip') AS chosen FROM m;
SELECT dp_agg_select_top_k(id, 1e5, 3, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[1, 1]) AS chosen FROM m;
SELECT dp_agg_select_local(id, 1e4, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[0.5, 0.5], ARRAY[1, 1]) AS chosen FROM m;
SELECT dp_agg_select_local_top_k(id, 1e5, 2, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[0.5, 0.5], ARRAY[1, 1]) AS chosen
FROM m;

-- Results do not depend on row order: candidates are sorted by id before selection.
SELECT dp_seed('order');
CREATE TEMP TABLE first_draw AS SELECT dp_select_top_k(id, 0.5, 3, score, 1) AS r FROM items;
SELECT dp_seed('order');
SELECT dp_select_top_k(id, 0.5, 3, score, 1 ORDER BY id DESC) = (SELECT r FROM first_draw) AS same_result
FROM items;
-- ... and the generator advances: five draws are not all equal (equal only with tiny probability).
SELECT count(DISTINCT r) > 1 AS generator_advances
FROM (SELECT dp_select_top_k(id, 0.5, 3, score, 1) AS r FROM items, generate_series(1, 5) GROUP BY generate_series) s;

-- What is charged, on a role of its own: two identical aggregates in one query are computed once (one
-- draw, one charge); two different ones are charged twice; a GROUP BY once per group; an aggregate whose
-- result the query never uses is not computed at all (the planner drops it), hence not charged.
CREATE ROLE counter;
GRANT SELECT ON items TO counter;
SELECT dp_budget_grant('counter', 10);
SET SESSION AUTHORIZATION counter;
SELECT dp_budget_remaining() AS before \gset
SELECT dp_select(id, 0.5, score, 1) = dp_select(id, 0.5, score, 1) AS same_pick FROM items;
SELECT :before - dp_budget_remaining() AS charged;
SELECT dp_select(id, 0.5, score, 1) IS NOT NULL AS a, dp_select(id, 0.25, score, 1) IS NOT NULL AS b FROM items;
SELECT :before - dp_budget_remaining() AS charged;
SELECT count(pick) AS groups FROM (SELECT grp, dp_select(id, 0.125, score, 1) AS pick FROM items GROUP BY grp) s;
SELECT :before - dp_budget_remaining() AS charged;
SELECT count(*) AS groups FROM (SELECT grp, dp_select(id, 0.125, score, 1) AS unused FROM items GROUP BY grp) s;
SELECT :before - dp_budget_remaining() AS charged;
RESET SESSION AUTHORIZATION;
