-- Who pays. A budget granted to a role binds every member (directly or not, with or without INHERIT):
-- a selection charges every grant that applies to the session user and is refused if any is short.
-- SET ROLE does not change who pays; SECURITY DEFINER wrappers charge their caller, never their owner;
-- dataset labels narrow which grants apply, and a wrapper fixes its label.
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE TABLE rt AS SELECT g::bigint AS id, (g % 5)::float8 AS score FROM generate_series(1, 20) g;
CREATE ROLE staff;
CREATE ROLE analysts IN ROLE staff;
CREATE ROLE bob IN ROLE analysts;
CREATE ROLE carol IN ROLE analysts;
CREATE ROLE dave NOINHERIT IN ROLE analysts;
CREATE ROLE erin;
GRANT SELECT ON rt TO staff, dave, erin;
SELECT dp_budget_grant('staff', 2), dp_budget_grant('analysts', 1), dp_budget_grant('carol', 10);
SELECT dp_budget_grant('bob', 0.25, 'enron');

CREATE FUNCTION budgets() RETURNS TABLE (role name, dataset text, spent float8, remaining float8)
LANGUAGE sql AS $$ SELECT role, dataset, spent, remaining FROM dp_budget_grants()
                   WHERE role IN ('staff', 'analysts', 'bob', 'carol', 'dave', 'erin', 'curator', 'frank')
                   ORDER BY grant_id $$;

-- bob has no grant of his own: his group's (1) and its parent's (2) bind him.
SET SESSION AUTHORIZATION bob;
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.5, score, 1) IS NOT NULL AS selected FROM rt;
RESET SESSION AUTHORIZATION;
SELECT * FROM budgets();
-- carol's own 10 does not lift the group's limit: after 0.5 more, the group is spent.
SET SESSION AUTHORIZATION carol;
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.5, score, 1) IS NOT NULL AS selected FROM rt;
SELECT dp_select(id, 0.25, score, 1) FROM rt;
RESET SESSION AUTHORIZATION;
-- NOINHERIT does not escape the group's budget; a role outside every group with no grant is refused.
SET SESSION AUTHORIZATION dave;
SELECT dp_select(id, 0.25, score, 1) FROM rt;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION erin;
SELECT dp_select(id, 0.25, score, 1) FROM rt;
RESET SESSION AUTHORIZATION;
SELECT * FROM budgets();

-- A top-up of the group lets its members go on; SET ROLE to the group still charges carol's own grant.
SELECT dp_budget_top_up('analysts', 1);
SET SESSION AUTHORIZATION carol;
SET ROLE analysts;
SELECT current_user, session_user, dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM rt;
RESET ROLE;
RESET SESSION AUTHORIZATION;
SELECT * FROM budgets();

-- Dataset labels: bob's grant for 'enron' applies only when dpmo.dataset = 'enron', on top of the others.
SET SESSION AUTHORIZATION bob;
SET dpmo.dataset = 'enron';
SELECT dp_budget_remaining();
SELECT dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM rt;
SELECT dp_select(id, 0.25, score, 1) FROM rt;
SET dpmo.dataset = 'adult';
SELECT dp_select(id, 0.25, score, 1) IS NOT NULL AS selected FROM rt;
RESET dpmo.dataset;
SET dpmo.dataset = 'a label that is far too long to be a dataset label, more than sixty-three bytes';
RESET SESSION AUTHORIZATION;
SELECT * FROM budgets();

-- The recommended deployment (README): the data owner keeps the table, analysts get only a SECURITY
-- DEFINER wrapper that fixes the dataset label (and its search_path: wrapper_hijacks_refused). The caller
-- pays, the owner never does.
CREATE ROLE curator;
CREATE ROLE frank;
CREATE TABLE secret (id bigint, salary float8);
INSERT INTO secret SELECT g, 1000 * (g % 9) FROM generate_series(1, 40) g;
ALTER TABLE secret OWNER TO curator;
REVOKE ALL ON secret FROM PUBLIC;
CREATE FUNCTION best_paid(epsilon float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo, pg_temp SET dpmo.dataset = 'payroll'
AS $$ SELECT dp_select(id, epsilon, salary, 1000::float8) FROM public.secret $$;
ALTER FUNCTION best_paid(float8) OWNER TO curator;
REVOKE ALL ON FUNCTION best_paid(float8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION best_paid(float8) TO frank, erin;
SELECT dp_budget_grant('curator', 100), dp_budget_grant('frank', 1), dp_budget_grant('frank', 0.5, 'payroll');
SET SESSION AUTHORIZATION frank;
SELECT * FROM secret;
SELECT best_paid(0.25) IN (SELECT g FROM generate_series(1, 40) g) AS selected;
SET dpmo.dataset = 'not payroll';
SELECT best_paid(0.25) IS NOT NULL AS selected;
SELECT best_paid(0.25);
SELECT current_setting('dpmo.dataset') AS dataset_after_the_wrapper;
RESET SESSION AUTHORIZATION;
-- erin has no grant: the owner's budget does not pay for her.
SET SESSION AUTHORIZATION erin;
SELECT best_paid(0.25);
RESET SESSION AUTHORIZATION;
SELECT * FROM budgets();
SELECT role, dataset, epsilon, mechanism FROM dp_audit WHERE role IN ('frank', 'erin', 'curator') ORDER BY seq;
