-- Per-connection privacy budget: every result charges its epsilon; a query that would overspend fails and
-- charges nothing. Dyadic epsilons keep the arithmetic exact.
.load ./build/dpmo
.mode list
.headers off
.bail off
CREATE TEMP TABLE t(id, s REAL, d REAL, g INTEGER);
INSERT INTO t VALUES (1, 10, 1, 0), (2, 5, 1, 0), (3, 1, 1, 1), (4, 0, 1, 1), (5, 7, 1, 2), (6, 7, 1, 3);
SELECT 'unset: remaining is NULL', dp_budget_remaining() IS NULL;
SELECT 'set 1', dp_budget_set(1);
SELECT 'fresh', dp_budget_remaining(), dp_budget_spent();
SELECT 'select at 0.25', dp_select(id, 0.25, s, 1) IS NOT NULL FROM t;
SELECT 'after 0.25', dp_budget_remaining(), dp_budget_spent();
SELECT 'GROUP BY charges each group', count(*) FROM (SELECT dp_select(id, 0.125, s, 1) FROM t WHERE g < 2 GROUP BY g);
SELECT 'after 2 x 0.125', dp_budget_remaining();
SELECT 'topk charges epsilon once', json_array_length(dp_select_topk(id, 0.125, 3, s, 1)) FROM t;
SELECT 'after topk', dp_budget_remaining();
-- Overspending fails with the dpmo message and charges nothing.
SELECT dp_pareto_select(id, 0.5, s, d) FROM t;
SELECT 'unchanged after refusal', dp_budget_remaining();
-- Failing for another reason charges nothing either.
SELECT dp_select(id, 0.125, CASE WHEN id = 3 THEN NULL ELSE s END, 1) FROM t;
SELECT dp_select(id, 0.125, s, 1) FROM t WHERE 0;
SELECT dp_agg_select(id, 0.125, 0, s, 1) FROM t;
SELECT 'unchanged after errors', dp_budget_remaining();
-- Charging exactly what is left succeeds; then everything is refused.
SELECT 'spend the rest', dp_agg_select(id, dp_budget_remaining(), 1, s, 1, 1, d, 1) IS NOT NULL FROM t;
SELECT 'exhausted', dp_budget_remaining(), dp_budget_spent();
SELECT dp_select(id, 0.0001, s, 1) FROM t;
SELECT dp_select_local_topk(id, 1e-300, 1, s, d, 1) FROM t;
-- A GROUP BY query that runs out part way: the groups already returned stay charged.
SELECT 'reset to 0.5', dp_budget_set(0.5);
SELECT g, dp_select(id, 0.1875, s, 1) IS NOT NULL FROM t GROUP BY g ORDER BY g;
SELECT 'two groups charged', dp_budget_spent();
-- dp_budget_charge accounts for releases made elsewhere.
SELECT 'external charge', dp_budget_charge(0.0625);
SELECT dp_budget_charge(1);
SELECT dp_budget_charge(-1);
SELECT 'after external', dp_budget_remaining();
-- Invalid totals are refused and leave the budget as it was; NULL removes it.
SELECT dp_budget_set(0);
SELECT dp_budget_set(-2);
SELECT dp_budget_set(1e999);
SELECT dp_budget_set('lots');
SELECT 'still set', dp_budget_remaining();
SELECT 'removed', dp_budget_set(NULL) IS NULL AND dp_budget_remaining() IS NULL;
SELECT 'unlimited again', dp_select(id, 100, s, 1) FROM t;
SELECT dp_budget_charge(0.5);
