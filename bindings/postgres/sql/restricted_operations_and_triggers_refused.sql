-- Who pays. The ledger charges the session user: the role whose statement the selection is part of, and
-- whose client gets the result. Where that is not so, selections are refused before anything is charged:
-- in security-restricted operations (ANALYZE, CREATE INDEX, REINDEX, CLUSTER, VACUUM FULL, materialized
-- views, where PostgreSQL runs a table owner's expressions for whoever started the operation and keeps their
-- results in catalogs), in triggers (whose results reach the trigger's author, not the role that fired it),
-- and outside client sessions (autovacuum, WAL senders: run-tests.sh). Selections inside SECURITY DEFINER
-- functions still work.
CREATE TABLE st AS SELECT g::bigint AS id, (g % 7)::float8 AS score FROM generate_series(1, 30) g;
CREATE ROLE tinker;
CREATE ROLE colleague;
GRANT SELECT ON st TO tinker, colleague;
GRANT CREATE ON SCHEMA public TO tinker;
SELECT dpmo.dp_budget_grant('tinker', 4), dpmo.dp_budget_grant('colleague', 1);
SELECT count(*) AS charges_before FROM dpmo.dp_audit \gset

-- tinker's table, with an expression statistic and an index expression that make a selection (the
-- function claims to be IMMUTABLE, which nobody checks), and a materialized view of one.
SET SESSION AUTHORIZATION tinker;
CREATE FUNCTION public.peek(x int) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT dpmo.dp_select(id, 0.5, score, 1) FROM public.st $$;
CREATE TABLE public.bait (x int) WITH (autovacuum_enabled = false);
INSERT INTO public.bait SELECT g FROM generate_series(1, 20) g;
CREATE STATISTICS public.bait_peek ON (public.peek(x)) FROM public.bait;
ANALYZE public.bait;
CREATE INDEX bait_peek_idx ON public.bait ((public.peek(x)));
CREATE MATERIALIZED VIEW public.picked AS SELECT dpmo.dp_select(id, 0.5, score, 1) AS pick FROM public.st;
CREATE MATERIALIZED VIEW public.picked AS SELECT dpmo.dp_select(id, 0.5, score, 1) AS pick FROM public.st
WITH NO DATA;
REFRESH MATERIALIZED VIEW public.picked;
-- An index expression that makes a selection only once a switch is on: built while it is off, then
-- rebuilt by REINDEX, CLUSTER and VACUUM FULL.
CREATE TABLE public.switch (flag boolean);
INSERT INTO public.switch VALUES (false);
CREATE FUNCTION public.maybe_peek(x int) RETURNS bigint LANGUAGE sql IMMUTABLE
AS $$ SELECT CASE WHEN (SELECT flag FROM public.switch) THEN (SELECT dpmo.dp_select(id, 0.5, score, 1) FROM public.st)
                  ELSE x END $$;
CREATE INDEX bait_maybe_idx ON public.bait ((public.maybe_peek(x)));
UPDATE public.switch SET flag = true;
REINDEX INDEX public.bait_maybe_idx;
CLUSTER public.bait USING bait_maybe_idx;
VACUUM FULL public.bait;
RESET SESSION AUTHORIZATION;
-- The superuser's maintenance runs tinker's expressions as tinker, and would have charged the superuser.
ANALYZE public.bait;
VACUUM (ANALYZE) public.bait;
REFRESH MATERIALIZED VIEW public.picked;
REINDEX TABLE public.bait;
SELECT count(null_frac) AS expression_statistics FROM pg_stats_ext_exprs WHERE statistics_name = 'bait_peek';
SELECT count(*) - :charges_before AS charged FROM dpmo.dp_audit;

-- tinker's tables, written by a colleague: triggers that would spend the colleague's budget and keep the
-- result for tinker. Row, statement, deferred constraint and INSTEAD OF triggers, and a SECURITY DEFINER
-- function inside a trigger: all refused.
SET SESSION AUTHORIZATION tinker;
CREATE TABLE public.outbox (pick bigint);
CREATE TABLE public.inbox (msg text);
CREATE TABLE public.inbox_statement (msg text);
CREATE TABLE public.inbox_deferred (msg text);
CREATE VIEW public.inbox_view AS SELECT msg FROM public.inbox;
GRANT INSERT ON public.outbox, public.inbox, public.inbox_statement, public.inbox_deferred, public.inbox_view
  TO colleague;
CREATE FUNCTION public.spend() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.outbox SELECT dpmo.dp_select(id, 0.25, score, 1) FROM public.st;
  RETURN NEW;
END $$;
CREATE FUNCTION public.pick_as_owner() RETURNS bigint LANGUAGE sql SECURITY DEFINER
AS $$ SELECT dpmo.dp_select(id, 0.25, score, 1) FROM public.st $$;
CREATE FUNCTION public.spend_as_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.outbox VALUES (public.pick_as_owner());
  RETURN NULL;
END $$;
CREATE TRIGGER spend_row BEFORE INSERT ON public.inbox FOR EACH ROW EXECUTE FUNCTION public.spend();
CREATE TRIGGER spend_statement AFTER INSERT ON public.inbox_statement
  FOR EACH STATEMENT EXECUTE FUNCTION public.spend_as_owner();
CREATE CONSTRAINT TRIGGER spend_at_commit AFTER INSERT ON public.inbox_deferred
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.spend();
CREATE TRIGGER spend_instead INSTEAD OF INSERT ON public.inbox_view FOR EACH ROW EXECUTE FUNCTION public.spend();
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION colleague;
INSERT INTO public.inbox VALUES ('hello');
INSERT INTO public.inbox_statement VALUES ('hello');
BEGIN;
INSERT INTO public.inbox_deferred VALUES ('hello');
COMMIT;
INSERT INTO public.inbox_view VALUES ('hello');
-- A trigger that catches the refusal does not leave the session refusing: the colleague's own selections,
-- and those made in a SECURITY DEFINER function, still work once the trigger is over.
DO $$
BEGIN
  BEGIN
    INSERT INTO public.inbox VALUES ('caught');
  EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'refused: %', SQLERRM;
  END;
END $$;
SELECT dpmo.dp_select(id, 0.25, score, 1) BETWEEN 1 AND 30 AS own_selection FROM public.st;
SELECT public.pick_as_owner() IS NOT NULL AS in_security_definer;
RESET SESSION AUTHORIZATION;
SELECT count(*) AS picks_kept_for_tinker FROM public.outbox;

-- An event trigger, which a superuser's DDL would fire: refused too.
CREATE FUNCTION public.spend_on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM dpmo.dp_select(id, 0.25, score, 1) FROM public.st;
END $$;
CREATE EVENT TRIGGER spend_on_ddl ON ddl_command_end EXECUTE FUNCTION public.spend_on_ddl();
CREATE TABLE public.any_ddl (x int);
DROP EVENT TRIGGER spend_on_ddl;

-- Not refused, and documented: a rule (like a view, a function, a column default or a policy) written by
-- another role runs inside the statement that uses it, with that statement's budget, as functions in it run
-- with that statement's privileges. The colleague's INSERT into tinker's table pays for tinker's rule.
SET SESSION AUTHORIZATION tinker;
CREATE TABLE public.inbox_rule (msg text);
GRANT INSERT ON public.inbox_rule TO colleague;
CREATE RULE spend_rule AS ON INSERT TO public.inbox_rule
  DO ALSO INSERT INTO public.outbox SELECT dpmo.dp_select(id, 0.25, score, 1) FROM public.st;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION colleague;
INSERT INTO public.inbox_rule VALUES ('hello');
RESET SESSION AUTHORIZATION;

-- Every charge made by this test: the colleague's own selection, the one in tinker's SECURITY DEFINER
-- function, and the rule's.
SELECT role, epsilon, mechanism FROM dpmo.dp_audit ORDER BY seq OFFSET :charges_before;
SELECT role, spent FROM dpmo.dp_budget_grants() WHERE role IN ('tinker', 'colleague') ORDER BY grant_id;
DROP STATISTICS public.bait_peek;
UPDATE public.switch SET flag = false;
