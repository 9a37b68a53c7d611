-- host: --seed fixture
-- The bindings' shared fixture (bindings/testdata): 300 nodes of the Enron e-mail graph, node features from
-- the one loader (graph_features, imported by run.sh), checked against SQL over the edge list and against
-- the expected figures; then private selections on it.
.grant 1000
SELECT 'figure', name, value = CAST(CASE name
    WHEN 'nodes' THEN (SELECT count(*) FROM enron)
    WHEN 'edges' THEN (SELECT count(*) FROM enron_edges)
    WHEN 'max_degree' THEN (SELECT max(d) FROM sql_degree)
    WHEN 'top5_by_degree' THEN (SELECT group_concat(node || ':' || d, ' ') FROM
                                 (SELECT * FROM sql_degree ORDER BY d DESC, node LIMIT 5))
    WHEN 'sum_egodensity' THEN (SELECT printf('%.12f', sum(egodensity)) FROM enron)
    WHEN 'pareto_front_size' THEN (SELECT count(*) FROM front)
    WHEN 'pareto_front' THEN (SELECT group_concat(node, ' ') FROM (SELECT node FROM front ORDER BY node))
  END AS TEXT) FROM expected ORDER BY name;
SELECT 'loader degrees equal SQL degrees', count(*) FROM enron n LEFT JOIN sql_degree s USING (node) WHERE coalesce(s.d, 0) <> n.degree;
SELECT 'delta tables', count(*), min(json_array_length(ego_delta)), max(json_array_length(ego_delta)) FROM enron;
-- The hub: degree 169 against 102 next, at epsilon 1 a factor e^33.5.
SELECT 'hub', dp_select(node, 1, degree, 1) FROM enron;
SELECT 'top 3 among the top 5', (SELECT count(*) FROM json_each(dp_select_top_k(node, 30, 3, degree, 1)) WHERE value IN (78, 54, 56, 76, 74)) FROM enron LIMIT 1;
SELECT 'local egodensity, a node', dp_select_local(node, 1, egodensity, ego_delta, 1) IN (SELECT node FROM enron) FROM enron;
SELECT 'local pareto, on the front', dp_pareto_select_local(node, 100, dp_array(degree, egodensity),
       dp_array(dp_array(1, 1, 1, 1, 1, 1, 1, 1), ego_delta), '[1, 1]') IN (SELECT node FROM front) FROM enron;
SELECT 'global pareto, a node', dp_pareto_select(node, 10, dp_array(degree, egodensity)) IN (SELECT node FROM enron) FROM enron;
SELECT 'agg, a node', dp_agg_select(node, 1, '[1, 100]', dp_array(degree, egodensity), '[1, 1]') IN (SELECT node FROM enron) FROM enron;
-- a best connected node of each part: within 20 of the part's maximum (e^-42 or less for the others)
SELECT 'part', part, e.degree >= (SELECT max(degree) FROM enron WHERE node % 4 = part) - 20
FROM (SELECT node % 4 AS part, dp_select(node, 4, degree, 1) AS chosen FROM enron GROUP BY node % 4) JOIN enron e ON e.node = chosen ORDER BY part;
