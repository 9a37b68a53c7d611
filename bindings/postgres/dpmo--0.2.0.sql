-- dpmo 0.2.0: differentially private selection as aggregates, paid for from a persistent privacy ledger.
-- The SQL surface is bindings/SQL.md (shared with SQLite); README.md explains the ledger and the deployment.
-- Needs shared_preload_libraries = 'dpmo' and a ledger (SELECT dpmo.dp_ledger_init(), once per cluster):
-- without them every selection is refused.
--
-- Everything lives in the schema dpmo (dpmo.control: schema = dpmo, relocatable = false), and every name
-- below is schema-qualified. Wrappers put dpmo on a pinned search_path (pg_catalog, dpmo, pg_temp), so an
-- object in dpmo that the extension did not create would be found by them: the schema must belong to a
-- superuser, nobody else may create objects in it, and it must be empty when the extension is installed.
\echo Use "CREATE EXTENSION dpmo" to load this file. \quit

DO $check$
DECLARE
  s pg_catalog.pg_namespace%ROWTYPE;
BEGIN
  SELECT * INTO STRICT s FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) 'dpmo';
  IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid OPERATOR(pg_catalog.=) s.nspowner) THEN
    RAISE EXCEPTION 'dpmo: schema dpmo is owned by %, who is not a superuser', s.nspowner::pg_catalog.regrole
      USING HINT = 'The extension installs only into a schema dpmo owned by a superuser (or creates it).';
  END IF;
  IF EXISTS (SELECT FROM pg_catalog.aclexplode(s.nspacl) a
             WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE' AND a.grantee OPERATOR(pg_catalog.<>) s.nspowner) THEN
    RAISE EXCEPTION 'dpmo: roles other than its owner may create objects in schema dpmo'
      USING HINT = 'REVOKE CREATE ON SCHEMA dpmo FROM them first.';
  END IF;
  IF EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.relnamespace OPERATOR(pg_catalog.=) s.oid)
     OR EXISTS (SELECT FROM pg_catalog.pg_proc p WHERE p.pronamespace OPERATOR(pg_catalog.=) s.oid)
     OR EXISTS (SELECT FROM pg_catalog.pg_type t WHERE t.typnamespace OPERATOR(pg_catalog.=) s.oid)
     OR EXISTS (SELECT FROM pg_catalog.pg_operator o WHERE o.oprnamespace OPERATOR(pg_catalog.=) s.oid)
     OR EXISTS (SELECT FROM pg_catalog.pg_collation c WHERE c.collnamespace OPERATOR(pg_catalog.=) s.oid)
     OR EXISTS (SELECT FROM pg_catalog.pg_conversion c WHERE c.connamespace OPERATOR(pg_catalog.=) s.oid)
     OR EXISTS (SELECT FROM pg_catalog.pg_opfamily f WHERE f.opfnamespace OPERATOR(pg_catalog.=) s.oid) THEN
    RAISE EXCEPTION 'dpmo: schema dpmo is not empty'
      USING HINT = 'The extension installs only into an empty schema dpmo (or creates it).';
  END IF;
END
$check$;

-- Anyone may name the extension's objects; what each may do is set per object below.
GRANT USAGE ON SCHEMA dpmo TO PUBLIC;

CREATE FUNCTION dpmo.dp_version() RETURNS text
AS 'MODULE_PATHNAME', 'dpmo_pg_version' LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- The ledger ---------------------------------------------------------------------------------------------

-- Superusers only: create the cluster's ledger file (refused when one exists: it is never overwritten), or
-- accept the existing one as complete after the server found it out of step with its anchor (a promotion,
-- a restore, a copy from elsewhere). README.md, "When the ledger is lost or rolled back".
CREATE FUNCTION dpmo.dp_ledger_init() RETURNS void
AS 'MODULE_PATHNAME', 'dpmo_pg_ledger_init' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION dpmo.dp_ledger_accept() RETURNS bigint
AS 'MODULE_PATHNAME', 'dpmo_pg_ledger_accept' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE EXECUTE ON FUNCTION dpmo.dp_ledger_init() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dpmo.dp_ledger_accept() FROM PUBLIC;

-- What the session user may still spend on the current dataset (dpmo.dataset): the least remaining epsilon
-- of the grants that bind it; 0 when none does.
CREATE FUNCTION dpmo.dp_budget_remaining() RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_remaining' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
-- The same for delta: the least remaining delta of those grants (0 when none binds it, or one is pure-epsilon).
CREATE FUNCTION dpmo.dp_budget_remaining_delta() RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_remaining_delta' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Superusers only: grant a budget of (epsilon, delta) to a role (it binds the role and all its members), for
-- one dataset label or (NULL) for every dataset; raise it. delta in [0, 1), 0 by default: a budget whose
-- total delta is 0 is pure-epsilon and refuses every charge with delta > 0.
CREATE FUNCTION dpmo.dp_budget_grant(role regrole, epsilon float8, dataset text DEFAULT NULL,
                                     delta float8 DEFAULT 0) RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_grant' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION dpmo.dp_budget_top_up(role regrole, epsilon float8, dataset text DEFAULT NULL,
                                      delta float8 DEFAULT 0) RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_top_up' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE EXECUTE ON FUNCTION dpmo.dp_budget_grant(regrole, float8, text, float8) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dpmo.dp_budget_top_up(regrole, float8, text, float8) FROM PUBLIC;

-- Every grant, and every record of the ledger file (grants, top-ups, charges); the audit view lists the
-- charges. Not readable by PUBLIC: GRANT SELECT ON dpmo.dp_audit TO an auditor role if needed.
CREATE FUNCTION dpmo.dp_budget_grants(OUT grant_id int, OUT role name, OUT dataset text, OUT total float8,
                                      OUT spent float8, OUT remaining float8, OUT delta_total float8,
                                      OUT delta_spent float8, OUT delta_remaining float8) RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_grants' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dpmo.dp_ledger(OUT seq bigint, OUT at timestamptz, OUT kind text, OUT role name, OUT dataset text,
                               OUT epsilon float8, OUT mechanism text, OUT database name, OUT grants int[],
                               OUT delta float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dpmo_pg_ledger' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE EXECUTE ON FUNCTION dpmo.dp_budget_grants() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dpmo.dp_ledger() FROM PUBLIC;
CREATE VIEW dpmo.dp_audit AS
  SELECT l.seq, l.at, l.role, l.dataset, l.epsilon, l.mechanism, l.database, l.grants, l.delta
  FROM dpmo.dp_ledger() l WHERE l.kind OPERATOR(pg_catalog.=) 'charge';
REVOKE ALL ON dpmo.dp_audit FROM PUBLIC;

-- Aggregate support ---------------------------------------------------------------------------------------
-- Not executable by PUBLIC (revoked at the end): CREATE AGGREGATE needs EXECUTE on every support function,
-- so nobody else can build an aggregate out of them (one whose final function is dpmo_serialize would
-- return its rows); the aggregates below run them with their owner's right.

CREATE FUNCTION dpmo.dpmo_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo.dpmo_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'dpmo_pg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpmo.dpmo_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- The final functions charge the ledger and draw randomness: leader only (and the extension's planner hook
-- keeps whole aggregates out of parallel workers).
CREATE FUNCTION dpmo.dpmo_final_one(internal) RETURNS bigint
AS 'MODULE_PATHNAME', 'dpmo_pg_final_one' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dpmo.dpmo_final_many(internal) RETURNS bigint[]
AS 'MODULE_PATHNAME', 'dpmo_pg_final_many' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- The aggregates (bindings/SQL.md): one row per candidate; the optional last argument is the options text.
-- One C transition function reads every one of them (it finds which from the aggregate's name).

CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select(id bigint, epsilon float8, score float8, sensitivity float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select(id bigint, epsilon float8, score float8, sensitivity float8, options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_top_k(id bigint, epsilon float8, k int, score float8, sensitivity float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_top_k(id bigint, epsilon float8, k int, score float8, sensitivity float8, options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local(id bigint, epsilon float8, utility float8, delta float8, sensitivity float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local(id bigint, epsilon float8, utility float8, delta float8, sensitivity float8, options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8, float8[], float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local(id bigint, epsilon float8, utility float8, delta float8[], sensitivity float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8, float8[], float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local(id bigint, epsilon float8, utility float8, delta float8[], sensitivity float8, options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8, sensitivity float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8, sensitivity float8, options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8, float8[], float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8[], sensitivity float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8, float8[], float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8[], sensitivity float8, options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select(id bigint, epsilon float8, utilities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select(id bigint, epsilon float8, utilities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select_top_k(id bigint, epsilon float8, k int, utilities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select_top_k(id bigint, epsilon float8, k int, utilities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select_local(id bigint, epsilon float8, utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select_local(id bigint, epsilon float8, utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select_local_top_k(id bigint, epsilon float8, k int, utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_pareto_select_local_top_k(id bigint, epsilon float8, k int, utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dpmo.dp_agg_select(id bigint, epsilon float8, weights float8[], utilities float8[], sensitivities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dpmo.dp_agg_select(id bigint, epsilon float8, weights float8[], utilities float8[], sensitivities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dpmo.dp_agg_select_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], sensitivities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dpmo.dp_agg_select_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], sensitivities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8[], float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_agg_select_local(id bigint, epsilon float8, weights float8[], utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, float8[], float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_agg_select_local(id bigint, epsilon float8, weights float8[], utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_one,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_agg_select_local_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_agg_select_local_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);

-- Discovery (bindings/SQL.md, "Discovery"): one row per event (unit, item), no candidate list; the released
-- items as bigint[]. NULL units or items are dropped; (epsilon, delta) is charged per group.
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, bigint, float8, float8, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_partitions(unit bigint, item bigint, epsilon float8, delta float8, max_items int) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, bigint, float8, float8, int, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_partitions(unit bigint, item bigint, epsilon float8, delta float8, max_items int, mechanism text) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, bigint, float8, float8, int, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_top_k(unit bigint, item bigint, epsilon float8, delta float8, k int, max_items int) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, bigint, float8, float8, int, int, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_top_k(unit bigint, item bigint, epsilon float8, delta float8, k int, max_items int, k_bar int) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);

-- The events and sum scores (bindings/SQL.md): C = max_per_item events per (unit, item), values clamped to
-- [lo, hi]. dp_discover_top_k_events has a transition function of its own: with dp_discover_top_k's argument
-- types, a shared one would let PostgreSQL share one transition state between the two in a query.
CREATE FUNCTION dpmo.dpmo_events_trans(internal, bigint, bigint, float8, float8, int, int, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_top_k_events(unit bigint, item bigint, epsilon float8, delta float8, k int, max_items int, max_per_item int) (
  SFUNC = dpmo.dpmo_events_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_events_trans(internal, bigint, bigint, float8, float8, int, int, int, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_top_k_events(unit bigint, item bigint, epsilon float8, delta float8, k int, max_items int, max_per_item int, k_bar int) (
  SFUNC = dpmo.dpmo_events_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, bigint, float8, float8, float8, int, int, int, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_top_k_sum(unit bigint, item bigint, value float8, epsilon float8, delta float8, k int, max_items int, max_per_item int, lo float8, hi float8) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo.dpmo_trans(internal, bigint, bigint, float8, float8, float8, int, int, int, float8, float8, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dpmo.dp_discover_top_k_sum(unit bigint, item bigint, value float8, epsilon float8, delta float8, k int, max_items int, max_per_item int, lo float8, hi float8, k_bar int) (
  SFUNC = dpmo.dpmo_trans, STYPE = internal, FINALFUNC = dpmo.dpmo_final_many,
  COMBINEFUNC = dpmo.dpmo_combine, SERIALFUNC = dpmo.dpmo_serialize, DESERIALFUNC = dpmo.dpmo_deserialize, PARALLEL = SAFE);

DO $revoke$
DECLARE
  f pg_catalog.regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
           WHERE p.pronamespace OPERATOR(pg_catalog.=) 'dpmo'::pg_catalog.regnamespace
             AND p.proname OPERATOR(pg_catalog.~) '^dpmo_' LOOP
    EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
  END LOOP;
END
$revoke$;
