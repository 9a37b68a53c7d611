-- host: --seed errors
-- Bounds and forms of the arguments in SQLite (the shared error texts are bindings/testdata/surface.cases):
-- arrays, argument counts, dp_array. Every error is a clean message; nothing is charged. (Private values of
-- another type are not errors: private_values_of_another_type_read_as_null.sql.)
.grant 1
CREATE TABLE t(id, s REAL, d REAL, tx TEXT);
INSERT INTO t VALUES (1, 10, 1, 'a'), (2, 5, 1, 'b'), (3, 1, 1, 'c');
SELECT dp_select(tx, 1, s, 1) FROM t;
SELECT dp_select(id + 0.5, 1, s, 1) FROM t;
SELECT dp_select(id, '1', s, 1) FROM t;
SELECT dp_select(id, 1, s, x'01') FROM t;
SELECT dp_select(id, 1e999, s, 1) FROM t;
SELECT dp_select(id, 1, s, 1, 42) FROM t;
SELECT dp_select_top_k(id, 1, 1.5, s, 1) FROM t;
SELECT dp_select_top_k(id, 1, '2', s, 1) FROM t;
SELECT dp_select(id, 1, s) FROM t;
SELECT dp_select(id, 1, s, 1, 'exponential', 'plain') FROM t;
SELECT dp_pareto_select(id, 1, '[]') FROM t;
SELECT dp_agg_select(id, 1, '[1, 1]', '[[1, 2]]', '[1, 1]') FROM t;
-- options are bounded: t_max from 1 to 1024, no columns= (the library saturates on its own), one per kind
SELECT dp_select_local(id, 1, s, d, 1, 't_max=100000000') FROM t;
SELECT dp_select_local(id, 1, s, d, 1, 't_max=99999999999999999999999') FROM t;
SELECT dp_select_local(id, 1, s, d, 1, 't_max=-1') FROM t;
SELECT dp_pareto_select_local(id, 1, dp_array(s, d), '[1, 1]', '[1, 1]', 'columns=100000000') FROM t;
SELECT dp_select_local(id, 1, s, d, 1, 'plain shifted') FROM t;
SELECT dp_select_local(id, 1, s, '[' || replace(hex(zeroblob(1025)), '00', '1,') || '1]', 1) FROM t;
SELECT dp_select(id, 1, s, 1, printf('%.300c', 'x')) FROM t;
SELECT dp_array(x'00');
SELECT dp_array('not an array');
SELECT dp_array('[[1]]');
SELECT 'nothing charged', dp_budget_remaining();
SELECT 'alive', dp_select(id, 0.5, s, 1) IS NOT NULL FROM t;
