-- Selections on a tiny table: validity, seeded reproducibility, every function and option, GROUP BY.
-- Every line printed is "<check>|<value>" and must be deterministic (properties, not random outcomes).
.load ./build/dpmo
.mode list
.headers off
CREATE TEMP TABLE t(id, s REAL, d REAL, g INTEGER);
INSERT INTO t VALUES (1, 10, 1, 0), (2, 5, 1, 0), ('x', 1, 1, 1), (4, 0, 1, 1), (5, 7, 1, 1);
CREATE TEMP TABLE reps(rep INTEGER PRIMARY KEY);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200) INSERT INTO reps SELECT i FROM c;
CREATE TEMP TABLE r(name TEXT, v);

SELECT 'version is set', length(dp_version()) > 0;
SELECT 'no budget by default', dp_budget_remaining() IS NULL AND dp_budget_spent() IS NULL;

-- Each function returns an id of the table (small epsilon: any candidate may come out).
INSERT INTO r SELECT 'dp_select', dp_select(id, 0.1, s, 1) FROM t;
INSERT INTO r SELECT 'dp_select pf', dp_select(id, 0.1, s, 1, 'permute_and_flip') FROM t;
INSERT INTO r SELECT 'dp_select laplace', dp_select(id, 0.1, s, 1, 'laplace') FROM t;
INSERT INTO r SELECT 'dp_select gumbel', dp_select(id, 0.1, s, 1, 'gumbel') FROM t;
INSERT INTO r SELECT 'dp_select exponential_noise', dp_select(id, 0.1, s, 1, 'exponential_noise') FROM t;
INSERT INTO r SELECT 'dp_select_local', dp_select_local(id, 0.1, s, d, 2) FROM t;
INSERT INTO r SELECT 'dp_select_local shifted pf', dp_select_local(id, 0.1, s, d, 2, 'shifted', 'pf') FROM t;
INSERT INTO r SELECT 'dp_select_local json table', dp_select_local(id, 0.1, s, '[0.5, 1, 2]', 2) FROM t;
INSERT INTO r SELECT 'dp_pareto_select', dp_pareto_select(id, 0.1, s, -s, d) FROM t;
INSERT INTO r SELECT 'dp_pareto_select textbook', dp_pareto_select(id, 0.1, s, -s, 'textbook') FROM t;
INSERT INTO r SELECT 'dp_pareto_select_local', dp_pareto_select_local(id, 0.1, s, d, 1, -s, '[0.5,1]', 1, 'shifted, columns=4') FROM t;
INSERT INTO r SELECT 'dp_agg_select', dp_agg_select(id, 0.1, 0.5, s, 1, -0.25, d, 1) FROM t;
INSERT INTO r SELECT 'dp_agg_select_local', dp_agg_select_local(id, 0.1, 0.5, s, d, 1, 0.5, s, 0.5, 1, 'gumbel') FROM t;
SELECT 'valid id: ' || name, v IN (SELECT id FROM t) FROM r ORDER BY rowid;

-- Ids keep their SQL type.
SELECT 'text id stays text', typeof(dp_select(id, 0.1, s, 1)) FROM t WHERE id = 'x';
SELECT 'integer id stays integer', typeof(dp_select(id, 0.1, s, 1)) FROM t WHERE id = 4;

-- A large epsilon picks the best candidate with overwhelming probability (failure below e^-2000).
SELECT 'argmax at large epsilon: ' || sel, ok FROM (
  SELECT 'exponential' sel, dp_select(id, 1000, s, 1) = 1 ok FROM t UNION ALL
  SELECT 'permute_and_flip', dp_select(id, 1000, s, 1, 'pf') = 1 FROM t UNION ALL
  SELECT 'laplace', dp_select(id, 1000, s, 1, 'laplace') = 1 FROM t UNION ALL
  SELECT 'gumbel', dp_select(id, 1000, s, 1, 'gumbel') = 1 FROM t UNION ALL
  SELECT 'exponential_noise', dp_select(id, 1000, s, 1, 'exponential_noise') = 1 FROM t UNION ALL
  SELECT 'topk', dp_select_topk(id, 3000, 3, s, 1) = '[1,5,2]' FROM t UNION ALL
  SELECT 'agg', dp_agg_select(id, 1000, 1, s, 1, 1, s, 1) = 1 FROM t);

-- Seeded reproducibility: the same seed gives the same sequence of 200 draws (GROUP BY rep).
SELECT 'seed 7', dp_seed(7) IS NULL;
CREATE TEMP TABLE a1 AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select(id, 0.5, s, 1) x FROM reps, t GROUP BY rep);
SELECT 'seed 000102030405', dp_seed('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f') IS NULL;
CREATE TEMP TABLE b1 AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select(id, 0.5, s, 1) x FROM reps, t GROUP BY rep);
SELECT 'seed 7', dp_seed(7) IS NULL;
CREATE TEMP TABLE a2 AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select(id, 0.5, s, 1) x FROM reps, t GROUP BY rep);
SELECT 'same seed, same draws', (SELECT v FROM a1) = (SELECT v FROM a2);
SELECT 'other seed, other draws', (SELECT v FROM a1) <> (SELECT v FROM b1);
SELECT 'seed NULL', dp_seed(NULL) IS NULL;
CREATE TEMP TABLE c1 AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select(id, 0.5, s, 1) x FROM reps, t GROUP BY rep);
SELECT 'secure reseed, other draws', (SELECT v FROM a1) <> (SELECT v FROM c1);
SELECT 'one draw per group', (SELECT count(*) FROM (SELECT dp_select(id, 0.5, s, 1) FROM reps, t GROUP BY rep));

-- The three delta forms describe the same function here (delta(0) = 1, Delta = 2 from t = 1): same draws.
SELECT 'seed 11', dp_seed(11) IS NULL;
CREATE TEMP TABLE dn AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select_local(id, 0.5, s, 1.0, 2, 't_max=1') x FROM reps, t GROUP BY rep);
SELECT 'seed 11', dp_seed(11) IS NULL;
CREATE TEMP TABLE dj AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select_local(id, 0.5, s, '[1]', 2) x FROM reps, t GROUP BY rep);
SELECT 'seed 11', dp_seed(11) IS NULL;
CREATE TEMP TABLE db AS SELECT group_concat(x, ' ') v FROM (SELECT dp_select_local(id, 0.5, s, x'000000000000f03f', 2) x FROM reps, t GROUP BY rep);
SELECT 'delta as number = as JSON', (SELECT v FROM dn) = (SELECT v FROM dj);
SELECT 'delta as JSON = as blob', (SELECT v FROM dj) = (SELECT v FROM db);

-- Top-k: a JSON array of k distinct valid ids; k = n is a permutation.
CREATE TEMP TABLE tk(name, v);
INSERT INTO tk SELECT 'dp_select_topk', dp_select_topk(id, 0.5, 3, s, 1) FROM t;
INSERT INTO tk SELECT 'dp_select_topk pf', dp_select_topk(id, 0.5, 3, s, 1, 'pf') FROM t;
INSERT INTO tk SELECT 'dp_select_local_topk', dp_select_local_topk(id, 0.5, 3, s, d, 1, 'shifted') FROM t;
INSERT INTO tk SELECT 'dp_pareto_select_topk', dp_pareto_select_topk(id, 0.5, 3, s, -s) FROM t;
INSERT INTO tk SELECT 'dp_pareto_select_local_topk', dp_pareto_select_local_topk(id, 0.5, 3, s, d, 1, -s, d, 1) FROM t;
INSERT INTO tk SELECT 'dp_agg_select_topk', dp_agg_select_topk(id, 0.5, 3, 1, s, 1, 2, -s, 1) FROM t;
INSERT INTO tk SELECT 'dp_agg_select_local_topk', dp_agg_select_local_topk(id, 0.5, 3, 1, s, d, 1, 2, -s, d, 1) FROM t;
SELECT 'top-3 ' || name, json_array_length(v) = 3
  AND (SELECT count(DISTINCT value) FROM json_each(v)) = 3
  AND (SELECT count(*) FROM json_each(v) WHERE value IN (SELECT id FROM t)) = 3 FROM tk ORDER BY rowid;
SELECT 'k = n is a permutation', (SELECT group_concat(value) FROM (SELECT value FROM json_each(p) ORDER BY CAST(value AS TEXT)))
  FROM (SELECT dp_select_topk(id, 0.5, 5, s, 1) p FROM t);

-- GROUP BY: one selection per group, each from its own group.
SELECT 'group ' || g, dp_select(id, 0.5, s, 1) IN (SELECT id FROM t t2 WHERE t2.g = t.g) FROM t GROUP BY g ORDER BY g;
SELECT 'group topk ' || g, json_array_length(dp_select_topk(id, 0.5, 2, s, 1)) FROM t GROUP BY g ORDER BY g;
SELECT 'empty table with GROUP BY: no rows', count(*) FROM (SELECT dp_select(id, 1, s, 1) FROM t WHERE 0 GROUP BY g);
