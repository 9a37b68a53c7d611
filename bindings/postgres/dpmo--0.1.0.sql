-- dpmo 0.1.0: differentially private selection as aggregates (see README.md).
\echo Use "CREATE EXTENSION dpmo" to load this file. \quit

-- Session functions ----------------------------------------------------------------------------------

CREATE FUNCTION dp_version() RETURNS text
AS 'MODULE_PATHNAME', 'dpmo_pg_version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION dp_budget_set(total_epsilon float8) RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_set' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION dp_budget_remaining() RETURNS float8
AS 'MODULE_PATHNAME', 'dpmo_pg_budget_remaining' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Testing only: makes the session's generator reproducible. Superusers only.
CREATE FUNCTION dp_seed(seed text) RETURNS void
AS 'MODULE_PATHNAME', 'dpmo_pg_seed' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
REVOKE EXECUTE ON FUNCTION dp_seed(text) FROM PUBLIC;

-- Support functions shared by every aggregate ------------------------------------------------------------

CREATE FUNCTION dpmo_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'dpmo_pg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION dpmo_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- The final functions draw randomness and charge the session budget: leader only.
CREATE FUNCTION dpmo_final_one(internal) RETURNS bigint
AS 'MODULE_PATHNAME', 'dpmo_pg_final_one' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dpmo_final_many(internal) RETURNS bigint[]
AS 'MODULE_PATHNAME', 'dpmo_pg_final_many' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

-- Single objective, global sensitivity ---------------------------------------------------------------------

CREATE FUNCTION dpmo_single_trans(internal, bigint, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_single_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_single_trans(internal, bigint, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_single_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_topk_trans(internal, bigint, float8, float8, float8, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_topk_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_topk_trans(internal, bigint, float8, float8, float8, int, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_topk_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE dp_select(id bigint, epsilon float8, score float8, sensitivity float8) (
  SFUNC = dpmo_single_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select(id bigint, epsilon float8, score float8, sensitivity float8, selector text) (
  SFUNC = dpmo_single_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_top_k(id bigint, epsilon float8, score float8, sensitivity float8, k int) (
  SFUNC = dpmo_topk_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_top_k(id bigint, epsilon float8, score float8, sensitivity float8, k int,
                                 selector text) (
  SFUNC = dpmo_topk_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);

-- Single objective, local sensitivity (local dampening, shifted) -------------------------------------------

CREATE FUNCTION dpmo_local_trans(internal, bigint, float8, float8, float8, float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_local_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_local_trans(internal, bigint, float8, float8, float8, float8, text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_local_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_local_topk_trans(internal, bigint, float8, float8, float8, float8, int) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_local_topk_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_local_topk_trans(internal, bigint, float8, float8, float8, float8, int, text)
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_local_topk_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_local_table_trans(internal, bigint, float8, float8, float8[], float8) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_local_table_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_local_table_trans(internal, bigint, float8, float8, float8[], float8, text)
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_local_table_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, delta float8,
                                 sensitivity float8) (
  SFUNC = dpmo_local_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, delta float8,
                                 sensitivity float8, selector text) (
  SFUNC = dpmo_local_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, deltas float8[],
                                 sensitivity float8) (
  SFUNC = dpmo_local_table_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_local(id bigint, epsilon float8, utility float8, deltas float8[],
                                 sensitivity float8, selector text) (
  SFUNC = dpmo_local_table_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_local_top_k(id bigint, epsilon float8, utility float8, delta float8,
                                       sensitivity float8, k int) (
  SFUNC = dpmo_local_topk_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_select_local_top_k(id bigint, epsilon float8, utility float8, delta float8,
                                       sensitivity float8, k int, selector text) (
  SFUNC = dpmo_local_topk_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);

-- PrivPareto -----------------------------------------------------------------------------------------------

CREATE FUNCTION dpmo_pareto_trans(internal, bigint, float8, float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_pareto_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_pareto_trans(internal, bigint, float8, float8[], text) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_pareto_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_pareto_topk_trans(internal, bigint, float8, int, float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_pareto_topk_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_pareto_local_trans(internal, bigint, float8, float8[], float8[], float8[])
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_pareto_local_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_pareto_local_trans(internal, bigint, float8, float8[], float8[], float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_pareto_local_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE dp_pareto_select(id bigint, epsilon float8, VARIADIC utilities float8[]) (
  SFUNC = dpmo_pareto_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_pareto_select(id bigint, epsilon float8, utilities float8[], selector text) (
  SFUNC = dpmo_pareto_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_pareto_select_top_k(id bigint, epsilon float8, k int, VARIADIC utilities float8[]) (
  SFUNC = dpmo_pareto_topk_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_pareto_select_local(id bigint, epsilon float8, utilities float8[], deltas float8[],
                                        sensitivities float8[]) (
  SFUNC = dpmo_pareto_local_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_pareto_select_local(id bigint, epsilon float8, utilities float8[], deltas float8[],
                                        sensitivities float8[], selector text) (
  SFUNC = dpmo_pareto_local_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);

-- PrivAgg --------------------------------------------------------------------------------------------------

CREATE FUNCTION dpmo_agg_trans(internal, bigint, float8, float8[], float8[], float8[]) RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_agg_trans(internal, bigint, float8, float8[], float8[], float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_agg_topk_trans(internal, bigint, float8, int, float8[], float8[], float8[])
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_agg_topk_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_agg_local_trans(internal, bigint, float8, float8[], float8[], float8[], float8[])
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_agg_local_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dpmo_agg_local_trans(internal, bigint, float8, float8[], float8[], float8[], float8[], text)
RETURNS internal
AS 'MODULE_PATHNAME', 'dpmo_pg_agg_local_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE dp_agg_select(id bigint, epsilon float8, weights float8[], utilities float8[],
                               sensitivities float8[]) (
  SFUNC = dpmo_agg_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select(id bigint, epsilon float8, weights float8[], utilities float8[],
                               sensitivities float8[], selector text) (
  SFUNC = dpmo_agg_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select_top_k(id bigint, epsilon float8, k int, weights float8[],
                                     utilities float8[], sensitivities float8[]) (
  SFUNC = dpmo_agg_topk_trans, STYPE = internal, FINALFUNC = dpmo_final_many,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select_local(id bigint, epsilon float8, weights float8[], utilities float8[],
                                     deltas float8[], sensitivities float8[]) (
  SFUNC = dpmo_agg_local_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
CREATE AGGREGATE dp_agg_select_local(id bigint, epsilon float8, weights float8[], utilities float8[],
                                     deltas float8[], sensitivities float8[], selector text) (
  SFUNC = dpmo_agg_local_trans, STYPE = internal, FINALFUNC = dpmo_final_one,
  COMBINEFUNC = dpmo_combine, SERIALFUNC = dpmo_serialize, DESERIALFUNC = dpmo_deserialize,
  PARALLEL = SAFE);
