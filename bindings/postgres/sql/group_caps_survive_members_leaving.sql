-- A budget granted to a role binds all its members. A member must not escape it by leaving: a member WITH
-- ADMIN OPTION could revoke herself (and then spend beyond the group's cap), a member of a role in between
-- could leave that one, a CREATEROLE administrator could drop the role in between or the budgeted role
-- itself. Statements that end memberships (REVOKE, ALTER GROUP ... DROP USER, DROP ROLE) fail, unless run
-- by a superuser, when a role bound by a budget would no longer be a member of the role holding it.
SET search_path = public, dpmo;
CREATE TABLE gt AS SELECT g::bigint AS id, (g % 5)::float8 AS score FROM generate_series(1, 20) g;
CREATE ROLE team;
CREATE ROLE mid IN ROLE team;
CREATE ROLE leaver;
CREATE ROLE quitter;
CREATE ROLE keeper CREATEROLE;
GRANT team TO leaver WITH ADMIN OPTION;
GRANT mid TO quitter WITH ADMIN OPTION;
GRANT SELECT ON gt TO leaver, quitter;
SELECT dp_budget_grant('team', 1), dp_budget_grant('leaver', 3), dp_budget_grant('quitter', 3);

-- leaver spends the team's cap, then tries to leave the team to spend her own 3.
SET SESSION AUTHORIZATION leaver;
SELECT dp_select(id, 1, score, 1) BETWEEN 1 AND 20 AS selected FROM gt;
REVOKE team FROM leaver;
SELECT pg_has_role('leaver', 'team', 'MEMBER') AS still_member;
SELECT dp_select(id, 1, score, 1) FROM gt;
SELECT dp_select(id, 1, score, 1) FROM gt;
-- Giving up only the ADMIN OPTION ends no membership.
REVOKE ADMIN OPTION FOR team FROM leaver;
RESET SESSION AUTHORIZATION;

-- quitter is bound through mid, and administers mid.
SET SESSION AUTHORIZATION quitter;
REVOKE mid FROM quitter;
RESET SESSION AUTHORIZATION;
-- keeper (CREATEROLE) cannot take them out either, nor drop the role in between or the budgeted role.
SET SESSION AUTHORIZATION keeper;
ALTER GROUP mid DROP USER quitter;
ALTER GROUP team DROP USER leaver;
DROP ROLE mid;
DROP ROLE team;
-- It may manage roles no budget binds; joining a budgeted role is one-way for anyone but a superuser.
CREATE ROLE helper;
CREATE ROLE helpers;
GRANT helpers TO helper;
REVOKE helpers FROM helper;
GRANT team TO helper;
REVOKE team FROM helper;
DROP ROLE helpers;
RESET SESSION AUTHORIZATION;
SELECT r.rolname AS role, pg_has_role(r.oid, 'team', 'MEMBER') AS bound_by_team
FROM pg_roles r WHERE r.rolname IN ('leaver', 'quitter', 'mid') ORDER BY 1;

-- A superuser may: the former member is then bound by her own budget only (the ledger keeps what she spent).
REVOKE team FROM leaver;
SET SESSION AUTHORIZATION leaver;
SELECT dp_budget_remaining();
RESET SESSION AUTHORIZATION;
SELECT role, total, spent, remaining FROM dp_budget_grants() WHERE role IN ('team', 'leaver', 'quitter')
ORDER BY grant_id;
