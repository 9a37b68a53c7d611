-- host: --seed surface
-- Every function on a small table: results at a huge epsilon, GROUP BY, arrays and JSON results, and
-- reproducibility under the host's test seed (SQL cannot seed). Lines are "check|value".
.grant 1000000000
CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL, d REAL, g INTEGER);
INSERT INTO t VALUES (1, 10, 1, 0), (2, 5, 1, 0), (3, 1, 1, 1), (4, 0, 1, 1), (5, 7, 1, 1);
CREATE TABLE reps(rep INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) INSERT INTO reps SELECT i FROM c;
SELECT 'dp_select', dp_select(id, 1e4, s, 1) FROM t;
SELECT 'any epsilon, a candidate', dp_select(id, 0.01, s, 1) IN (SELECT id FROM t) FROM t;
SELECT 'selectors', dp_select(id, 1e4, s, 1, 'permute_and_flip'), dp_select(id, 1e4, s, 1, 'noisy_max_gumbel'),
       dp_select(id, 1e4, s, 1, 'noisy_max_exponential') FROM t;
SELECT 'group by', g, dp_select(id, 1e4, s, 1) FROM t GROUP BY g ORDER BY g;
SELECT 'an empty GROUP BY gives no rows', count(*) FROM (SELECT g, dp_select(id, 1, s, 1) FROM t WHERE g > 5 GROUP BY g);
SELECT 'top-k in pick order', dp_select_top_k(id, 1e5, 3, s, 1) FROM t;
SELECT 'top-k is JSON', json_valid(r), json_type(r), json_array_length(r) FROM (SELECT dp_select_top_k(id, 0.1, 5, s, 1) AS r FROM t);
SELECT 'local, number delta', dp_select_local(id, 1e4, s, d, 1) FROM t;
SELECT 'local, table row', dp_select_local(id, 1e4, s, dp_array(0.5, d), 1, 'shifted') FROM t;
SELECT 'local top-k', dp_select_local_top_k(id, 1e5, 2, s, d, 1, 't_max=2') FROM t;
SELECT 'pareto', dp_pareto_select(id, 1e5, dp_array(s, d)) FROM t;
SELECT 'pareto top-k, weak', dp_pareto_select_top_k(id, 1e6, 2, dp_array(s, -d), 'weak') FROM t;
SELECT 'pareto local', dp_pareto_select_local(id, 1e5, dp_array(s, d), '[1, 1]', '[1, 1]') FROM t;
SELECT 'pareto local, tables', dp_pareto_select_local_top_k(id, 1e6, 1, dp_array(s, d), '[[1, 1], [1, 1]]', '[1, 1]') FROM t;
SELECT 'agg', dp_agg_select(id, 1e4, '[1, 0]', dp_array(s, d), '[1, 1]'), dp_agg_select(id, 1e4, '[-1, 0.5]', dp_array(s, d), '[1, 1]') FROM t;
SELECT 'agg top-k', dp_agg_select_top_k(id, 1e5, 2, '[1, 0]', dp_array(s, d), '[1, 1]') FROM t;
SELECT 'agg local', dp_agg_select_local(id, 1e4, '[1, 0]', dp_array(s, d), '[1, 1]', '[1, 1]') FROM t;
SELECT 'agg local top-k', dp_agg_select_local_top_k(id, 1e5, 2, '[1, 0]', dp_array(s, d), '[1, 1]', '[1, 1]') FROM t;
-- Arrays: dp_array keeps every digit; SQLite's json_array keeps 15.
SELECT 'dp_array is exact', dp_array(0.1, 1.0 / 3, NULL, 7, dp_array(1, 2));
SELECT 'and reads back exactly', json_extract(dp_array(1.0 / 3), '$[0]') = 1.0 / 3, json_extract(json_array(1.0 / 3), '$[0]') = 1.0 / 3;
-- Order independence: candidates are sorted by id before the selection.
.reopen
CREATE TABLE draws(session, rep, v);
INSERT INTO draws SELECT 1, rep, dp_select_top_k(id, 0.5, 3, s, 1) FROM reps, t GROUP BY rep;
.reopen
INSERT INTO draws SELECT 2, rep, dp_select_top_k(id, 0.5, 3, s, 1) FROM reps, (SELECT * FROM t ORDER BY id DESC) GROUP BY rep;
SELECT 'same seed, same draws, any row order', (SELECT group_concat(v, ';') FROM (SELECT v FROM draws WHERE session = 1 ORDER BY rep))
  = (SELECT group_concat(v, ';') FROM (SELECT v FROM draws WHERE session = 2 ORDER BY rep));
SELECT 'the generator advances', count(DISTINCT v) > 10 FROM draws;
SELECT 'version', dp_version() = (SELECT dp_version());
