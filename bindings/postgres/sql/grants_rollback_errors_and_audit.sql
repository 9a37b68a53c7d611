-- The privacy ledger: budgets granted by superusers; selections refused without one (fail closed); the
-- session user pays; ROLLBACK, savepoints and errors after the selection refund nothing; the audit trail.
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE OR REPLACE FUNCTION dp_seed(text) RETURNS void AS '$libdir/dpmo', 'dpmo_pg_seed' LANGUAGE C STRICT;
CREATE TABLE lt AS SELECT g::bigint AS id, g::float8 AS score FROM generate_series(1, 10) g;
CREATE ROLE alice;
CREATE ROLE mallory;
GRANT SELECT ON lt TO alice, mallory;

-- No grant: every selection refused, nothing to spend.
SET SESSION AUTHORIZATION mallory;
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.1, score, 1) FROM lt;
-- An analyst cannot grant, top up, list grants, read the ledger or the audit view, or seed the generator.
SELECT dp_budget_grant('mallory', 100);
SELECT dp_budget_top_up('mallory', 100);
SELECT * FROM dp_budget_grants();
SELECT * FROM dp_ledger();
SELECT * FROM dp_audit;
SELECT dp_seed('predictable');
SET dpmo.test_seeding = on;
RESET SESSION AUTHORIZATION;

-- Granting, topping up, inspecting.
SELECT dp_budget_grant('alice', 1);
SELECT dp_budget_grant('alice', 1);
SELECT dp_budget_top_up('alice', 0.5);
SELECT dp_budget_top_up('mallory', 0.5);
SELECT dp_budget_grant('mallory', 0);
SELECT dp_budget_grant('mallory', 'NaN');
SELECT dp_budget_grant('mallory', 'Infinity');
SELECT dp_budget_grant(NULL, 1);
SELECT dp_budget_grant('mallory', 1, repeat('x', 64));
SELECT dp_budget_grant(0::oid::regrole, 1);
SELECT role, dataset, total, spent, remaining FROM dp_budget_grants() WHERE role IN ('alice', 'mallory');

SET SESSION AUTHORIZATION alice;
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM lt;
-- BEGIN ... ROLLBACK does not refund: the result reached the client before the transaction ended.
BEGIN;
SELECT dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM lt;
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT dp_select(id, 0.125, score, 1) IS NOT NULL AS selected FROM lt;
ROLLBACK TO SAVEPOINT s;
COMMIT;
-- An error later in the statement or in the transaction does not refund either.
SELECT dp_select(id, 0.125, score, 1) / 0 FROM lt;
BEGIN;
SELECT dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM lt;
SELECT 1 / 0;
COMMIT;
SELECT dp_budget_remaining();
-- Exhaustion: refused with nothing charged; exactly the rest is accepted; then nothing.
SELECT dp_select(id, 0.75, score, 1) FROM lt;
SELECT dp_select(id, dp_budget_remaining(), score, 1) IS NOT NULL AS selected FROM lt;
SELECT dp_select(id, 1e-9, score, 1) FROM lt;
SELECT dp_budget_remaining();
RESET SESSION AUTHORIZATION;

-- The audit view: every charge, with the session user, the dataset, epsilon and the mechanism.
SELECT role, dataset, epsilon, mechanism, database = current_database() AS this_db, cardinality(grants) AS grants
FROM dp_audit WHERE role = 'alice' ORDER BY seq;
SELECT kind, epsilon FROM dp_ledger() WHERE role = 'alice' ORDER BY seq;
SELECT count(*) = count(DISTINCT seq) AND min(seq) = 1 AND max(seq) = count(*) AS seq_dense,
       bool_and(at <= now()) AS times_past
FROM dp_ledger();
-- The test-only seed needs a server started with dpmo.test_seeding = on; it is, here.
SHOW dpmo.test_seeding;
SELECT dp_seed('works for a superuser here');

-- The support functions take `internal` arguments: not callable from SQL. Only a superuser can build an
-- aggregate on them (its state is `internal`), and one that is not a dpmo aggregate is refused.
CREATE SCHEMA mallorys AUTHORIZATION mallory;
SET SESSION AUTHORIZATION mallory;
SELECT dpmo_final_one(NULL);
CREATE AGGREGATE mallorys.my_select(bigint, float8, float8, float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one);
RESET SESSION AUTHORIZATION;
CREATE AGGREGATE not_dpmo(bigint, float8, float8, float8) (SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one);
SELECT not_dpmo(g, 1, g, 1) FROM generate_series(1, 3) g;
