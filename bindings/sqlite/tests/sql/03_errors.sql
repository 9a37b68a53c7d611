-- Bad input gives a clean SQL error carrying the dpmo message; the shell survives every one of them.
.load ./build/dpmo
.mode list
.headers off
.bail off
CREATE TEMP TABLE t(id, s REAL, d REAL, tx TEXT);
INSERT INTO t VALUES (1, 10, 1, 'a'), (2, 5, 1, 'b'), (3, 1, 1, 'c');
-- NULLs and NaN (SQLite stores NaN as NULL).
SELECT dp_select(id, 1, CASE WHEN id = 2 THEN NULL ELSE s END, 1) FROM t;
SELECT dp_select(id, 1, s, 0.0 / 0.0) FROM t;
SELECT dp_select(NULL, 1, s, 1) FROM t;
SELECT dp_select(id, NULL, s, 1) FROM t;
SELECT dp_select_local(id, 1, s, NULL, 1) FROM t;
SELECT dp_pareto_select(id, 1, s, NULL) FROM t;
SELECT dp_agg_select(id, 1, NULL, s, 1) FROM t;
-- Non-numbers and infinities.
SELECT dp_select(id, 1, tx, 1) FROM t;
SELECT dp_select(id, 1, s, x'01') FROM t;
SELECT dp_select(id, 1, s * 1e308 * 10, 1) FROM t;
SELECT dp_select(id, 1e999, s, 1) FROM t;
SELECT dp_select(id, 1, s, 1e999) FROM t;
SELECT dp_agg_select(id, 1, 1e999, s, 1) FROM t;
-- Empty input.
SELECT dp_select(id, 1, s, 1) FROM t WHERE 0;
SELECT dp_pareto_select_topk(id, 1, 1, s, d) FROM t WHERE id > 99;
-- epsilon and sensitivities <= 0.
SELECT dp_select(id, 0, s, 1) FROM t;
SELECT dp_select(id, -1, s, 1) FROM t;
SELECT dp_select(id, 1, s, 0) FROM t;
SELECT dp_select_local(id, 1, s, d, -1) FROM t;
SELECT dp_pareto_select_local(id, 1, s, d, 0, s, d, 1) FROM t;
SELECT dp_agg_select(id, 1, 1, s, -1) FROM t;
SELECT dp_agg_select(id, 1, 0, s, 1, 0, d, 1) FROM t;
-- epsilon, weights and sensitivities must not vary within a group.
SELECT dp_select(id, id, s, 1) FROM t;
SELECT dp_select(id, 1, s, id) FROM t;
SELECT dp_agg_select(id, 1, id, s, 1) FROM t;
-- Argument counts.
SELECT dp_select(id, 1, s) FROM t;
SELECT dp_select(id, 1, s, 1, 2) FROM t;
SELECT dp_select_local(id, 1, s, 1) FROM t;
SELECT dp_pareto_select(id, 1) FROM t;
SELECT dp_pareto_select_local(id, 1, s, d, 1, s) FROM t;
SELECT dp_agg_select(id, 1, 1, s, 1, 1, s) FROM t;
SELECT dp_agg_select_local(id, 1, 1, s, d) FROM t;
SELECT dp_pareto_select(id, 1, s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s) FROM t;
SELECT dp_select_topk(id, 1, s, 1) FROM t;
-- k.
SELECT dp_select_topk(id, 1, 0, s, 1) FROM t;
SELECT dp_select_topk(id, 1, 4, s, 1) FROM t;
SELECT dp_agg_select_topk(id, 1, NULL, 1, s, 1) FROM t;
SELECT dp_pareto_select_topk(id, 1, 1.5, s, d) FROM t;
SELECT dp_select_topk(id, 1, id, s, 1) FROM t;
-- Options.
SELECT dp_select(id, 1, s, 1, 'fastest') FROM t;
SELECT dp_select(id, 1, s, 1, 'shifted') FROM t;
SELECT dp_select_local(id, 1, s, d, 1, 't_max=0') FROM t;
SELECT dp_pareto_select_local(id, 1, s, d, 1, 'columns=x') FROM t;
SELECT dp_select(id, 1, s, 1, CASE WHEN id = 2 THEN 'pf' ELSE 'em' END) FROM t;
-- Local sensitivity values.
SELECT dp_select_local(id, 1, s, -0.5, 1) FROM t;
SELECT dp_select_local(id, 1, s, '[0.5, -1]', 1) FROM t;
SELECT dp_select_local(id, 1, s, '[0.5, 1', 1) FROM t;
SELECT dp_select_local(id, 1, s, '[]', 1) FROM t;
SELECT dp_select_local(id, 1, s, x'0102', 1) FROM t;
SELECT dp_select_local(id, 1, s, CASE WHEN id = 1 THEN '[1, 1]' ELSE '[1]' END, 1) FROM t;
SELECT dp_select_local(id, 1, s, CASE WHEN id = 1 THEN 1 ELSE '[1]' END, 1) FROM t;
SELECT dp_select_local(id, 1, s, 1e999, 1) FROM t;
-- Seeds and budgets.
SELECT dp_seed('not hex');
SELECT dp_seed('00');
SELECT dp_seed(1.5);
SELECT dp_budget_charge(0.5);
SELECT dp_budget_set(1);
SELECT dp_select(id, 2, s, 1) FROM t;
-- Still alive, and the budget untouched by all of the above.
SELECT 'alive', dp_select(id, 1, s, 1) IS NOT NULL FROM t;
SELECT 'spent', dp_budget_remaining();
