-- host: --seed types
-- Private values are never a status (issue 20.4), and SQLite types each value: a score, utility or delta
-- that is TEXT, a BLOB, JSON text that does not parse, a number where an array is expected (or an array's
-- text where a number is), and a discovery unit or item that is not an INTEGER, read as NULL by the public
-- rule. Each query below selects and is charged, as its neighbour with a well-typed value would be (a
-- status here would tell the two datasets apart for free).
.grant 100 0.001
CREATE TABLE t(id, s REAL, d REAL, tx TEXT);
INSERT INTO t VALUES (1, 10, 1, 'a'), (2, 5, 1, 'b'), (3, 1, 1, 'c');
SELECT 'text score', dp_select(id, 1, tx, 1) IN (1, 2, 3) FROM t;
SELECT 'one text score', dp_select(id, 1, CASE WHEN id = 2 THEN 'x' ELSE s END, 1) IN (1, 2, 3) FROM t;
SELECT 'blob score', dp_select(id, 1, CASE WHEN id = 2 THEN x'01' ELSE s END, 1) IN (1, 2, 3) FROM t;
SELECT 'array text as a score', dp_select(id, 1, CASE WHEN id = 2 THEN '[1]' ELSE s END, 1) IN (1, 2, 3) FROM t;
SELECT 'number for an array', dp_pareto_select(id, 1, s) IN (1, 2, 3) FROM t;
SELECT 'unterminated', dp_pareto_select(id, 1, CASE WHEN id = 2 THEN '[1, 2' ELSE dp_array(s, d) END) IN (1, 2, 3) FROM t;
SELECT 'ragged', dp_pareto_select(id, 1, CASE WHEN id = 2 THEN '[1, [2]]' ELSE dp_array(s, d) END) IN (1, 2, 3) FROM t;
SELECT 'ragged rows', dp_pareto_select(id, 1, '[[1, 2], [3]]') IN (1, 2, 3) FROM t;
SELECT 'three dimensions', dp_pareto_select(id, 1, '[[[1]]]') IN (1, 2, 3) FROM t;
SELECT 'text element', dp_pareto_select(id, 1, CASE WHEN id = 1 THEN '[1, "two"]' ELSE dp_array(s, d) END) IN (1, 2, 3) FROM t;
SELECT 'first row unreadable', dp_pareto_select(id, 1, CASE WHEN id = 1 THEN 'x' ELSE dp_array(s, d) END) IN (1, 2, 3) FROM t;
SELECT 'delta trailing', dp_select_local(id, 1, s, '[0.5, 1] trailing', 1) IN (1, 2, 3) FROM t;
SELECT 'delta blob', dp_select_local(id, 1, s, x'0000', 1) IN (1, 2, 3) FROM t;
SELECT 'one delta text', dp_select_local(id, 1, s, CASE WHEN id = 3 THEN 'x' ELSE d END, 1) IN (1, 2, 3) FROM t;
SELECT 'agg deltas text', dp_agg_select_local(id, 1, '[1, 1]', dp_array(s, d), CASE WHEN id = 3 THEN 'x' ELSE dp_array(d, d) END, '[1, 1]') IN (1, 2, 3) FROM t;
CREATE TABLE e(u, i);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200) INSERT INTO e SELECT x % 50, 7 FROM n;
INSERT INTO e VALUES ('text unit', 7), (3.5, 7), (x'01', 7), (1, 'text item'), (2, 7.5), (NULL, 7), (4, NULL);
SELECT 'discovery', dp_discover_partitions(u, i, 1, 1e-6, 1, 'laplace') = '[7]' FROM e;
SELECT 'charged', dp_budget_remaining(), dp_budget_remaining_delta() < 0.001;
