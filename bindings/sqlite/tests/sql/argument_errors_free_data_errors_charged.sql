-- host: --seed charges
-- What a selection charges: each group of a GROUP BY; nothing for an error in the public arguments (found
-- before the charge); the data never causes an error (issue 20, no free probing: a NULL utility is the lowest
-- score, a negative delta counts as the sensitivity), so such a call selects and is charged like any other;
-- nothing for a window function (refused by SQLite).
.grant 1
CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL);
INSERT INTO t VALUES (1, 10), (2, 5), (3, 1);
SELECT 'three groups', count(*) FROM (SELECT id % 3, dp_select(id, 0.0625, s, 1) AS pick FROM t GROUP BY id % 3) WHERE pick IS NOT NULL;
SELECT 'charged 3 x 0.0625', dp_budget_remaining();
SELECT dp_select(id, 0.0625, s, 0) FROM t;
SELECT dp_select(id, 0.0625, s, 1, 'argmax') FROM t;
SELECT dp_select(1, 0.0625, s, 1) FROM t;
SELECT dp_select_top_k(id, 0.0625, 4, s, 1) FROM t;
SELECT dp_select(id, 0.0625, s, 1) FROM t WHERE id > 9;
SELECT 'argument errors charge nothing', dp_budget_remaining();
SELECT 'NULL utility: a row chosen', dp_select(id, 0.0625, CASE WHEN id = 2 THEN NULL ELSE s END, 1) IN (1, 2, 3) FROM t;
SELECT 'negative delta: a row chosen', dp_select_local(id, 0.0625, s, CASE WHEN id = 2 THEN -1 ELSE 0.5 END, 1) IN (1, 2, 3) FROM t;
SELECT 'both charged like valid data', dp_budget_remaining();
SELECT dp_select(id, 0.125, s, 1) OVER () FROM t;
SELECT 'window: nothing charged', dp_budget_remaining();
