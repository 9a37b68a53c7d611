-- The README's SECURITY DEFINER wrapper against an analyst, mallet, who may create objects in schema public
-- (the default before PostgreSQL 15, kept by upgraded databases), in her temporary schema and in her session.
-- The recipe: the extension in its own schema, dpmo, where only a superuser creates objects; the wrapper in
-- the data owner's schema, with search_path pinned to pg_catalog, dpmo, pg_temp (pg_temp last), its names
-- qualified and its arguments of the exact types. Each hijack is first shown to work against a wrapper that
-- breaks one rule (so that this test can fail), then to fail against the recipe: nothing is copied, and
-- every call is one charge to mallet. No search_path is set here: the recipe does not depend on it.
GRANT CREATE ON SCHEMA public TO PUBLIC;
CREATE ROLE hijack_owner;
CREATE ROLE mallet;
CREATE ROLE vera;
CREATE SCHEMA payroll AUTHORIZATION hijack_owner;
GRANT USAGE ON SCHEMA payroll TO mallet, vera;
CREATE TABLE payroll.salaries (employee bigint PRIMARY KEY, salary float8 NOT NULL);
INSERT INTO payroll.salaries SELECT g, 1000 * (g % 9) FROM generate_series(1, 40) g;
ALTER TABLE payroll.salaries OWNER TO hijack_owner;
REVOKE ALL ON payroll.salaries FROM PUBLIC;
SELECT dpmo.dp_budget_grant('mallet', 100), dpmo.dp_budget_grant('vera', 100);

-- The recipe (README): the body is parsed when the function is created (BEGIN ATOMIC), every name is
-- qualified, every argument of dp_select has its exact type (bigint, float8, float8, float8).
CREATE FUNCTION payroll.best_paid(epsilon float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo, pg_temp SET dpmo.dataset = 'payroll'
BEGIN ATOMIC
  SELECT dpmo.dp_select(s.employee, epsilon, least(s.salary, 10000::float8), 10000::float8)
  FROM payroll.salaries AS s;
END;
-- The recipe with a body in a string, parsed at each call under the pinned search_path: here dp_select is
-- unqualified and an integer literal meets an operator on purpose; nothing mallet can create is on that path
-- (pg_temp is never searched for functions and operators, and comes last for tables and types).
CREATE FUNCTION payroll.best_paid_text(epsilon float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo, pg_temp SET dpmo.dataset = 'payroll'
AS $$ SELECT dp_select(employee, epsilon, least(salary, 10000::float8), 10000::float8)
      FROM payroll.salaries WHERE salary <= 10000 $$;
-- Broken wrappers, one rule each:
-- public on the path and an integer sensitivity (the README before this test);
CREATE FUNCTION payroll.literal_with_public(epsilon float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo, public, pg_temp SET dpmo.dataset = 'payroll'
AS $$ SELECT dp_select(employee, epsilon, least(salary, 10000::float8), 10000) FROM payroll.salaries $$;
-- public on the path (last but for pg_temp), exact types for dp_select, an operator on an integer literal;
CREATE FUNCTION payroll.operator_with_public(epsilon float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo, public, pg_temp SET dpmo.dataset = 'payroll'
AS $$ SELECT dp_select(employee, epsilon, least(salary, 10000::float8), 10000::float8)
      FROM payroll.salaries WHERE salary <= 10000 $$;
-- pg_temp not named (so searched first for tables), and the table not qualified.
CREATE FUNCTION payroll.temp_first(epsilon float8) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo, payroll SET dpmo.dataset = 'payroll'
AS $$ SELECT dp_select(employee, epsilon, least(salary, 10000::float8), 10000::float8) FROM salaries $$;
DO $$
DECLARE f text;
BEGIN
  FOREACH f IN ARRAY ARRAY['best_paid', 'best_paid_text', 'literal_with_public', 'operator_with_public', 'temp_first'] LOOP
    EXECUTE format('ALTER FUNCTION payroll.%I(float8) OWNER TO hijack_owner', f);
    EXECUTE format('REVOKE ALL ON FUNCTION payroll.%I(float8) FROM PUBLIC', f);
    EXECUTE format('GRANT EXECUTE ON FUNCTION payroll.%I(float8) TO mallet, vera', f);
  END LOOP;
END $$;
CREATE FUNCTION public.mallet_charges() RETURNS TABLE (charges bigint, epsilon float8)
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, dpmo
AS $$ SELECT count(*), coalesce(sum(epsilon), 0) FROM dpmo.dp_audit WHERE role = 'mallet' $$;
GRANT EXECUTE ON FUNCTION public.mallet_charges() TO mallet;
-- The extension stays in its schema.
ALTER EXTENSION dpmo SET SCHEMA public;

SET SESSION AUTHORIZATION mallet;
SELECT * FROM payroll.salaries;
-- What mallet cannot do: create objects in dpmo, change a cast between built-in types, build an aggregate
-- out of the extension's support functions (one whose final function is dpmo_serialize would return the
-- rows it was given: PostgreSQL keeps internal-state aggregates to superusers, and the extension revokes
-- EXECUTE on those functions from PUBLIC; run by a superuser, such an aggregate is refused by the functions).
CREATE FUNCTION dpmo.dp_select(bigint, float8, float8, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint';
CREATE FUNCTION public.int_to_float(integer) RETURNS float8 LANGUAGE sql AS 'SELECT 0::float8';
CREATE CAST (integer AS float8) WITH FUNCTION public.int_to_float(integer) AS IMPLICIT;
CREATE AGGREGATE public.dump(bigint, float8, float8, float8)
  (SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_serialize);

-- What she can: plant, in public and in pg_temp, objects that copy what they see into her own table
-- (INSERT granted to everyone), as whoever runs them: the wrapper's owner, inside the wrapper.
CREATE TABLE public.loot (employee bigint, salary float8);
GRANT INSERT ON public.loot TO PUBLIC;
CREATE FUNCTION public.grab(e bigint, s float8) RETURNS float8 LANGUAGE sql
AS $$ INSERT INTO public.loot VALUES (e, s) RETURNING s $$;
-- an exact match for dp_select with an integer sensitivity: copies the whole table;
CREATE FUNCTION public.dp_select(id bigint, epsilon float8, score float8, sensitivity integer) RETURNS bigint
LANGUAGE sql AS $$ INSERT INTO public.loot SELECT employee, salary FROM payroll.salaries; SELECT id $$;
-- and one with exact types, for a wrapper that puts public first;
CREATE FUNCTION public.dp_select(id bigint, epsilon float8, score float8, sensitivity float8) RETURNS bigint
LANGUAGE sql AS $$ INSERT INTO public.loot SELECT employee, salary FROM payroll.salaries; SELECT id $$;
-- an exact match for float8 <= integer: copies each salary it compares;
CREATE FUNCTION public.spy_le(a float8, b integer) RETURNS boolean LANGUAGE sql
AS $$ INSERT INTO public.loot VALUES (NULL, a); SELECT a OPERATOR(pg_catalog.<=) b $$;
CREATE OPERATOR public.<= (LEFTARG = float8, RIGHTARG = integer, FUNCTION = public.spy_le);
-- in pg_temp: a dp_select, a float8 type, and a view named like the table that copies each row it reads
-- (security_invoker: it reads payroll.salaries with the rights of whoever queries it).
CREATE FUNCTION pg_temp.dp_select(id bigint, epsilon float8, score float8, sensitivity float8) RETURNS bigint
LANGUAGE sql AS $$ INSERT INTO public.loot SELECT employee, salary FROM payroll.salaries; SELECT id $$;
CREATE DOMAIN pg_temp.float8 AS integer;
CREATE TEMP VIEW salaries WITH (security_invoker = true) AS
  SELECT employee, public.grab(employee, salary) AS salary FROM payroll.salaries;
GRANT SELECT ON salaries TO PUBLIC;
-- and a session search_path of her choosing.
SET search_path = pg_temp, public, dpmo;

-- The broken wrappers are hijacked: all 40 salaries copied (once with no charge at all).
SELECT payroll.literal_with_public(0.5) IS NOT NULL AS answered;
SELECT count(*) AS copied, count(DISTINCT employee) AS employees FROM public.loot;
SELECT * FROM public.mallet_charges();
TRUNCATE public.loot;
SELECT payroll.operator_with_public(0.5) IS NOT NULL AS answered;
SELECT count(*) AS copied FROM public.loot;
TRUNCATE public.loot;
SELECT payroll.temp_first(0.5) IS NOT NULL AS answered;
SELECT count(*) AS copied, count(DISTINCT employee) AS employees FROM public.loot;
TRUNCATE public.loot;
SELECT * FROM public.mallet_charges();

-- The recipe is not: nothing copied, one charge of 0.5 per call.
SELECT payroll.best_paid(0.5) IS NOT NULL AS answered;
SELECT payroll.best_paid_text(0.5) IS NOT NULL AS answered;
SELECT count(*) AS copied FROM public.loot;
SELECT * FROM public.mallet_charges();
-- (Where pg_temp is not named, it comes first for types: float8 is then her domain. Named last, it is not.)
RESET search_path;
SELECT 1.5::float8 AS by_default;
SET search_path = pg_catalog, dpmo, pg_temp;
SELECT 1.5::float8 AS with_pg_temp_last;

-- Callers name the wrapper with its schema too: an unqualified call, on a search_path with public in it
-- (even after payroll), prefers mallet's overload for a numeric argument, and runs her code as the caller.
CREATE FUNCTION public.best_paid(epsilon numeric) RETURNS bigint
LANGUAGE sql AS $$ INSERT INTO public.loot SELECT NULL, s FROM generate_series(1, 3) s; SELECT 0::bigint $$;
RESET search_path;
RESET SESSION AUTHORIZATION;
SET SESSION AUTHORIZATION vera;
SET search_path = payroll, public;
SELECT best_paid(0.5) AS unqualified;
SELECT payroll.best_paid(0.5) IS NOT NULL AS qualified;
-- Each evaluation is a charge: BETWEEN names its operand twice.
SELECT payroll.best_paid(0.5) BETWEEN 1 AND 40 AS evaluated_twice;
RESET SESSION AUTHORIZATION;
SELECT count(*) AS copied_by_veras_unqualified_call FROM public.loot;
SELECT role, dataset, epsilon, mechanism FROM dpmo.dp_audit WHERE role IN ('mallet', 'vera', 'hijack_owner')
ORDER BY seq;

-- Clean up what mallet planted, for the tests that follow in this database.
DISCARD TEMP;
RESET search_path;
DROP FUNCTION public.dp_select(bigint, float8, float8, integer), public.dp_select(bigint, float8, float8, float8),
  public.best_paid(numeric);
DROP OPERATOR public.<= (float8, integer);
-- Schema dpmo holds the extension's objects only.
SELECT count(*) AS objects_in_dpmo_not_of_the_extension FROM (
  SELECT 'pg_proc'::regclass AS cls, oid FROM pg_proc WHERE pronamespace = 'dpmo'::regnamespace
  UNION ALL SELECT 'pg_class'::regclass, oid FROM pg_class WHERE relnamespace = 'dpmo'::regnamespace
  UNION ALL SELECT 'pg_operator'::regclass, oid FROM pg_operator WHERE oprnamespace = 'dpmo'::regnamespace) o
WHERE NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = o.cls AND d.objid = o.oid AND d.deptype = 'e');
