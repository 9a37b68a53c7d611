-- Per-session privacy budget: charged by each final function that returns a result; an overspending
-- selection fails and charges nothing.
CREATE TABLE b AS SELECT g::bigint AS id, g::float8 AS score, g % 3 AS grp FROM generate_series(1, 30) g;

SELECT dp_budget_remaining() IS NULL AS no_budget_yet;
SELECT dp_budget_set(0);
SELECT dp_budget_set('NaN');
SELECT dp_budget_set(1.0);
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM b;
SELECT dp_budget_remaining();
SELECT dp_pareto_select(id, 0.125, score, -score) IS NOT NULL AS selected FROM b;
SELECT dp_budget_remaining();
-- overspending: a clear error, nothing charged
SELECT dp_select(id, 0.75, score, 1) FROM b;
SELECT dp_budget_remaining();
-- failed queries charge nothing
SELECT dp_select(id, 0.125, 'NaN'::float8, 1) FROM b;
SELECT dp_select(id, 0.125, score, 1) FROM b WHERE false;
SELECT dp_budget_remaining();
-- GROUP BY: every group's selection is charged (3 groups × 0.125)
SELECT grp, dp_select(id, 0.125, score, 1) IS NOT NULL AS selected FROM b GROUP BY grp ORDER BY grp;
SELECT dp_budget_remaining();
-- two aggregates in one query: both charged
SELECT dp_select(id, 0.0625, score, 1) IS NOT NULL AS a, dp_select_top_k(id, 0.0625, score, 1, 2) IS NOT NULL AS b
FROM b;
SELECT dp_budget_remaining();
-- exactly the remaining budget is accepted, then nothing more
SELECT dp_select(id, dp_budget_remaining(), score, 1) IS NOT NULL AS selected FROM b;
SELECT dp_budget_remaining();
SELECT dp_select(id, 1e-9, score, 1) FROM b;
-- a GROUP BY that runs out part way: groups already returned stay charged, the failing one is not
SELECT dp_budget_set(0.25);
SELECT grp, dp_select(id, 0.125, score, 1) IS NOT NULL FROM b GROUP BY grp ORDER BY grp;
SELECT dp_budget_remaining();

-- Non-superusers: no dp_seed, and the budget can only be lowered.
CREATE ROLE dpmo_analyst;
GRANT SELECT ON b TO dpmo_analyst;
SELECT dp_budget_set(1);
SET ROLE dpmo_analyst;
SELECT dp_seed('x');
SELECT dp_budget_set(10);
SELECT dp_budget_set(0.5);
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.125, score, 1) IS NOT NULL AS selected FROM b;
SELECT dp_budget_remaining();
RESET ROLE;

-- dpmo.session_budget (superuser-only setting) gives every new session of a role its budget.
ALTER ROLE dpmo_analyst SET dpmo.session_budget = 0.5;
ALTER ROLE dpmo_analyst LOGIN;
\c - dpmo_analyst
SHOW dpmo.session_budget;
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.5, score, 1) IS NOT NULL AS selected FROM b;
SELECT dp_select(id, 0.5, score, 1) FROM b;
SET dpmo.session_budget = 100;
SELECT dp_budget_set(100);
\c - postgres
REVOKE SELECT ON b FROM dpmo_analyst;
DROP ROLE dpmo_analyst;
