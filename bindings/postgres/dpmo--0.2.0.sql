-- dpmo 0.2.0: differentially private selection as aggregates, paid for from a persistent privacy ledger.
-- The SQL surface is bindings/SQL.md (shared with SQLite); README.md explains the ledger. Needs
-- shared_preload_libraries = 'dpmo': without it every selection is refused.
\echo Use "CREATE EXTENSION dpmo" to load this file. \quit

CREATE FUNCTION dp_version() RETURNS text
AS 'MODULE_PATHNAME', 'dpmo_pg_version' LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- The ledger ---------------------------------------------------------------------------------------------

-- What the session user may still spend on the current dataset (dpmo.dataset): the least remaining epsilon
-- of the grants that bind it; 0 when none does.
CREATE FUNCTION dp_budget_remaining() RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_remaining' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Superusers only: grant a budget to a role (it binds the role and all its members), for one dataset label
-- or (NULL) for every dataset; raise it.
CREATE FUNCTION dp_budget_grant(role regrole, epsilon float8, dataset text DEFAULT NULL) RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_grant' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION dp_budget_top_up(role regrole, epsilon float8, dataset text DEFAULT NULL) RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_top_up' LANGUAGE C VOLATILE PARALLEL UNSAFE;
REVOKE EXECUTE ON FUNCTION dp_budget_grant(regrole, float8, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dp_budget_top_up(regrole, float8, text) FROM PUBLIC;

-- Every grant, and every record of the ledger file (grants, top-ups, charges); the audit view lists the
-- charges. Not readable by PUBLIC: GRANT SELECT ON dp_audit TO an auditor role if needed.
CREATE FUNCTION dp_budget_grants(OUT grant_id int, OUT role name, OUT dataset text, OUT total float8,
                                 OUT spent float8, OUT remaining float8) RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_grants' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dp_ledger(OUT seq bigint, OUT at timestamptz, OUT kind text, OUT role name, OUT dataset text,
                          OUT epsilon float8, OUT mechanism text, OUT database name, OUT grants int[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'dpmo_pg_ledger' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE EXECUTE ON FUNCTION dp_budget_grants() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION dp_ledger() FROM PUBLIC;
CREATE VIEW dp_audit AS
  SELECT seq, at, role, dataset, epsilon, mechanism, database, grants FROM dp_ledger() WHERE kind = 'charge';
REVOKE ALL ON dp_audit FROM PUBLIC;

-- Aggregate support ---------------------------------------------------------------------------------------

CREATE FUNCTION dpmo_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'dpmo_pg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpmo_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- The final functions charge the ledger and draw randomness: leader only (and the extension's planner hook
-- keeps whole aggregates out of parallel workers).
CREATE FUNCTION dpmo_final_one(internal) RETURNS bigint
AS 'MODULE_PATHNAME', 'dpmo_pg_final_one' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dpmo_final_many(internal) RETURNS bigint[]
AS 'MODULE_PATHNAME', 'dpmo_pg_final_many' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- The aggregates (bindings/SQL.md): one row per candidate; the optional last argument is the options text.
-- One C transition function reads every one of them (it finds which from the aggregate's name).

CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select(id bigint, epsilon float8, score float8, sensitivity float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select(id bigint, epsilon float8, score float8, sensitivity float8, options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_top_k(id bigint, epsilon float8, k int, score float8, sensitivity float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_top_k(id bigint, epsilon float8, k int, score float8, sensitivity float8, options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, delta float8, sensitivity float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, delta float8, sensitivity float8, options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8, float8[], float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, delta float8[], sensitivity float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8, float8[], float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, delta float8[], sensitivity float8, options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8, sensitivity float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8, sensitivity float8, options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8, float8[], float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8[], sensitivity float8) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8, float8[], float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_select_local_top_k(id bigint, epsilon float8, k int, utility float8, delta float8[], sensitivity float8, options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select(id bigint, epsilon float8, utilities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select(id bigint, epsilon float8, utilities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select_top_k(id bigint, epsilon float8, k int, utilities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select_top_k(id bigint, epsilon float8, k int, utilities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select_local(id bigint, epsilon float8, utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select_local(id bigint, epsilon float8, utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select_local_top_k(id bigint, epsilon float8, k int, utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_pareto_select_local_top_k(id bigint, epsilon float8, k int, utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select(id bigint, epsilon float8, weights float8[], utilities float8[], sensitivities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select(id bigint, epsilon float8, weights float8[], utilities float8[], sensitivities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], sensitivities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], sensitivities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8[], float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_agg_select_local(id bigint, epsilon float8, weights float8[], utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, float8[], float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_agg_select_local(id bigint, epsilon float8, weights float8[], utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_agg_select_local_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
CREATE FUNCTION dpmo_trans(internal, bigint, float8, int, float8[], float8[], float8[], float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE AGGREGATE dp_agg_select_local_top_k(id bigint, epsilon float8, k int, weights float8[], utilities float8[], deltas float8[], sensitivities float8[], options text) (
  SFUNC = dpmo_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize, PARALLEL = SAFE);
