-- Pay what you get: dp_discover_top_k charges (epsilon, delta) before the run and, when the run stops at the
-- threshold candidate after l < k items, a refund record settles the charge at (epsilon/k (l + 1), delta).
-- The budget left is then exactly what libdpmo's dpmo_budget shows after the same calls (the literals below
-- are its values, computed with dpmo_budget_init_approx/charge_approx/remaining_approx: no tolerance). Replay
-- at restart, and a crash between the charge and the refund: run-tests.sh.
SET search_path = public, dpmo;
CREATE TABLE pwyg_ev AS SELECT i::bigint AS u, 7::bigint AS i, i % 2 AS g FROM generate_series(0, 399) i;
INSERT INTO pwyg_ev SELECT i, 100 + i, i % 2 FROM generate_series(0, 29) i;
CREATE ROLE pwyg;
GRANT SELECT ON pwyg_ev TO pwyg;
SELECT dp_budget_grant('pwyg', 4, NULL, 1e-3);
SET SESSION AUTHORIZATION pwyg;
-- k = 5, one popular item: 7, then the threshold candidate (l = 1): charged 1, settled at 2 (1/5 rounded down)
SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 5, 1) FROM pwyg_ev;
SELECT dp_budget_remaining() = 3.5999999999999996::float8 AS epsilon_is_c_budgets,
       dp_budget_remaining_delta() = 0.0009989999999999999::float8 AS delta_is_c_budgets;
-- k = 1 releases k items: the full charge stays, no refund
SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 1, 1) FROM pwyg_ev;
SELECT dp_budget_remaining() = 2.5999999999999996::float8 AS epsilon_is_c_budgets,
       dp_budget_remaining_delta() = 0.000998::float8 AS delta_is_c_budgets;
-- the early stop cost 0.39999999999999997, the full run 1
-- k = 4 at 0.5: l = 1, settled at 2 (0.5/4) = 0.25
SELECT dp_discover_top_k(u, i, 0.5, 1e-6, 4, 1) FROM pwyg_ev;
SELECT dp_budget_remaining() = 2.3499999999999996::float8 AS epsilon_is_c_budgets,
       dp_budget_remaining_delta() = 0.0009969999999999998::float8 AS delta_is_c_budgets;
RESET SESSION AUTHORIZATION;
-- the records: each refund right after its charge (the file's one format-3 record comes before its first), with the
-- charge's role, mechanism and grants, and the amounts spent
SELECT kind, epsilon, mechanism, delta,
       grants = (SELECT array_agg(grant_id) FROM dp_budget_grants() WHERE role = 'pwyg') AS its_grant
  FROM dp_ledger() l WHERE l.role = 'pwyg' ORDER BY seq;
SELECT count(*) AS format_3_records FROM dp_ledger() WHERE kind = 'format' AND mechanism LIKE '%format 3%';
SELECT spent, remaining, delta_spent FROM dp_budget_grants() WHERE role = 'pwyg';
-- dp_audit lists the charges as made before each run (the refunds are in dp_ledger())
SELECT epsilon, mechanism FROM dp_audit WHERE role = 'pwyg' ORDER BY seq;
