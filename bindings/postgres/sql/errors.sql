-- Bad input: a clean ERROR with the dpmo message, never a crash; the session keeps working.
CREATE TABLE e AS SELECT g::bigint AS id, g::float8 AS score FROM generate_series(1, 5) g;

-- empty input
SELECT dp_select(id, 1, score, 1) FROM e WHERE false;
SELECT dp_pareto_select(id, 1, score, score) FROM e WHERE false;
SELECT dp_select(id, 1, score, 1) FILTER (WHERE id > 100) FROM e;
-- ε ≤ 0, NaN, ∞; bad sensitivity
SELECT dp_select(id, 0, score, 1) FROM e;
SELECT dp_select(id, -1, score, 1) FROM e;
SELECT dp_select(id, 'NaN', score, 1) FROM e;
SELECT dp_select(id, 'Infinity', score, 1) FROM e;
SELECT dp_select(id, 1, score, 0) FROM e;
SELECT dp_select(id, 1, score, 'NaN') FROM e;
SELECT dp_select_local(id, 1, score, 0.5, -1) FROM e;
-- NULLs
SELECT dp_select(NULL, 1, score, 1) FROM e;
SELECT dp_select(id, NULL, score, 1) FROM e;
SELECT dp_select(id, 1, CASE WHEN id = 3 THEN NULL ELSE score END, 1) FROM e;
SELECT dp_select(id, 1, score, NULL) FROM e;
SELECT dp_select(id, 1, score, 1, NULL) FROM e;
SELECT dp_select_local(id, 1, score, NULL::float8, 1) FROM e;
SELECT dp_pareto_select(id, 1, score, NULL) FROM e;
SELECT dp_pareto_select(id, 1, NULL::float8[], 'exponential') FROM e;
SELECT dp_select_top_k(id, 1, score, 1, NULL) FROM e;
-- NaN and infinite utilities, invalid local sensitivities
SELECT dp_select(id, 1, CASE WHEN id = 2 THEN 'NaN' ELSE score END, 1) FROM e;
SELECT dp_select(id, 1, CASE WHEN id = 2 THEN '-Infinity' ELSE score END, 1) FROM e;
SELECT dp_pareto_select(id, 1, score, 'NaN') FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, 'NaN'::float8], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_select_local(id, 1, score, -0.5, 1) FROM e;
SELECT dp_select_local(id, 1, score, ARRAY[0.5, 'NaN'], 1) FROM e;
-- mismatched lengths and counts
SELECT dp_agg_select(id, 1, ARRAY[1], ARRAY[score, score], ARRAY[1, 1]) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, 1], ARRAY[score, score], ARRAY[1]) FROM e;
SELECT dp_pareto_select_local(id, 1, ARRAY[score, score], ARRAY[1], ARRAY[1, 1]) FROM e;
SELECT dp_pareto_select(id, 1, VARIADIC CASE WHEN id = 2 THEN ARRAY[score] ELSE ARRAY[score, score] END) FROM e;
SELECT dp_select_local(id, 1, score, CASE WHEN id = 2 THEN ARRAY[1.0] ELSE ARRAY[0.5, 1] END, 1) FROM e;
SELECT dp_pareto_select(id, 1, VARIADIC ARRAY[]::float8[]) FROM e;
SELECT dp_pareto_select(id, 1, VARIADIC array_fill(1.0::float8, ARRAY[17])) FROM e;
SELECT dp_pareto_select(id, 1, ARRAY[[score, score], [score, score]], 'exponential') FROM e;
SELECT dp_pareto_select(id, 1, ARRAY[score, NULL], 'exponential') FROM e;
SELECT dp_select_local(id, 1, score, ARRAY[]::float8[], 1) FROM e;
-- per-group constants that differ between rows
SELECT dp_select(id, id::float8, score, 1) FROM e;
SELECT dp_select(id, 1, score, id::float8) FROM e;
SELECT dp_select(id, 1, score, 1, CASE WHEN id = 2 THEN 'permute_and_flip' ELSE 'exponential' END) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[1, id], ARRAY[score, score], ARRAY[1, 1]) FROM e;
-- k out of range, unknown selector, duplicate ids, all weights zero
SELECT dp_select_top_k(id, 1, score, 1, 0) FROM e;
SELECT dp_select_top_k(id, 1, score, 1, 6) FROM e;
SELECT dp_pareto_select_top_k(id, 1, 6, score, score) FROM e;
SELECT dp_select(id, 1, score, 1, 'argmax') FROM e;
SELECT dp_select(1, 1, score, 1) FROM e;
SELECT dp_agg_select(id, 1, ARRAY[0, 0], ARRAY[score, score], ARRAY[1, 1]) FROM e;
-- extreme but valid input is accepted
SELECT dp_select(id, 1e-300, score * 1e300, 1e300) IN (SELECT id FROM e) AS ok FROM e;
SELECT dp_select(id, 1e300, score, 1e-300) AS best FROM e;
-- the session is intact
SELECT dp_select(id, 1e4, score, 1) AS still_works FROM e;
