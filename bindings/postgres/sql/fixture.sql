-- The bindings' shared fixture (bindings/testdata): the Enron e-mail graph induced by nodes 0..299, its
-- node features computed by the one loader (graph_features, with the C ABI), checked against SQL over the
-- edge list and against the expected figures, then private selections on it.
-- The extension lives in schema dpmo; these tests name its functions through the search path (after
-- public, where the tests create their objects).
SET search_path = public, dpmo;
CREATE OR REPLACE FUNCTION dp_seed(text) RETURNS void AS '$libdir/dpmo', 'dpmo_pg_seed' LANGUAGE C STRICT;
CREATE TABLE enron (node bigint PRIMARY KEY, degree float8, egodensity float8, ego_delta text);
\copy enron FROM PROGRAM 'cat "$PG_ABS_SRCDIR/../testdata/build/enron300.csv"' CSV HEADER
ALTER TABLE enron ALTER ego_delta TYPE float8[] USING translate(ego_delta, '[]', '{}')::float8[];
CREATE TABLE enron_edges (src bigint, dst bigint);
\copy enron_edges FROM PROGRAM 'grep -v "^#" "$PG_ABS_SRCDIR/../testdata/enron300.txt"'
CREATE TABLE expected_lines (line text);
\copy expected_lines FROM PROGRAM 'grep -v "^#" "$PG_ABS_SRCDIR/../testdata/enron300.expected"'
CREATE TABLE expected AS
  SELECT split_part(line, ' ', 1) AS name, substr(line, length(split_part(line, ' ', 1)) + 2) AS value
  FROM expected_lines;

-- The figures, from SQL over the edges, equal the expected ones.
CREATE VIEW sql_degree AS
  SELECT v AS node, count(*) AS degree
  FROM (SELECT src AS v FROM enron_edges UNION ALL SELECT dst FROM enron_edges) e GROUP BY v;
SELECT name, value = CASE name
    WHEN 'nodes' THEN (SELECT count(*)::text FROM enron)
    WHEN 'edges' THEN (SELECT count(*)::text FROM enron_edges)
    WHEN 'max_degree' THEN (SELECT max(degree)::text FROM sql_degree)
    WHEN 'top5_by_degree' THEN (SELECT string_agg(node || ':' || degree, ' ' ORDER BY degree DESC, node)
                                FROM (SELECT * FROM sql_degree ORDER BY degree DESC, node LIMIT 5) s)
    WHEN 'sum_egodensity' THEN (SELECT round(sum(egodensity)::numeric, 12)::text FROM enron)
    WHEN 'pareto_front_size' THEN (SELECT count(*)::text FROM enron a WHERE NOT EXISTS (
        SELECT 1 FROM enron o WHERE o.degree >= a.degree AND o.egodensity >= a.egodensity
                                AND (o.degree > a.degree OR o.egodensity > a.egodensity)))
    WHEN 'pareto_front' THEN (SELECT string_agg(node::text, ' ' ORDER BY node) FROM enron a WHERE NOT EXISTS (
        SELECT 1 FROM enron o WHERE o.degree >= a.degree AND o.egodensity >= a.egodensity
                                AND (o.degree > a.degree OR o.egodensity > a.egodensity)))
  END AS equal
FROM expected ORDER BY name;
-- The loader's degrees equal the SQL count of distinct neighbours, node by node.
SELECT count(*) AS degree_mismatches
FROM enron n FULL JOIN sql_degree s USING (node) WHERE coalesce(s.degree, 0) <> n.degree;
SELECT count(*) AS delta_rows, min(cardinality(ego_delta)) AS columns, max(cardinality(ego_delta)) AS same
FROM enron;

-- Private selections (seeded for a reproducible output; each property holds with overwhelming probability).
SELECT dp_seed('fixture');
-- The hub (degree 169; the next has 102): at epsilon 1 and sensitivity 1 a gap of 67 is a factor e^33.
SELECT dp_select(node, 1, degree, 1) AS hub FROM enron;
-- at epsilon 30 (10 a round) the fourth and fifth (94, 88) outweigh the sixth (82) by e^30 or more
SELECT dp_select_top_k(node, 30, 3, degree, 1) <@ ARRAY[78, 54, 56, 76, 74]::bigint[] AS top3_among_top5 FROM enron;
-- Egocentric density with its admissible local sensitivity (a delta table of 8 distances).
SELECT dp_select_local(node, 1, egodensity, ego_delta, 1) IN (SELECT node FROM enron) AS valid FROM enron;
-- Both objectives: PrivPareto (local, delta^PS from the objectives' deltas) and PrivAgg.
SELECT dp_pareto_select_local(node, 100, ARRAY[degree, egodensity], ARRAY[ARRAY[1, 1, 1, 1, 1, 1, 1, 1], ego_delta],
                              ARRAY[1, 1]) IN (SELECT x::bigint FROM expected, unnest(string_to_array(value, ' ')) v(x)
                                               WHERE name = 'pareto_front') AS on_the_front
FROM enron;
SELECT dp_pareto_select(node, 10, ARRAY[degree, egodensity]) IN (SELECT node FROM enron) AS valid FROM enron;
SELECT dp_agg_select(node, 1, ARRAY[1, 100], ARRAY[degree, egodensity], ARRAY[1, 1]) IN (SELECT node FROM enron) AS valid
FROM enron;
-- GROUP BY: a best connected node of each of 4 parts of the graph: within 20 of the part's maximum at
-- epsilon 4 (a node 21 or more below weighs e^-42 or less against the maximum; 75 nodes per part).
SELECT part, degree >= (SELECT max(degree) FROM enron WHERE node % 4 = part) - 20 AS near_part_max
FROM (SELECT node % 4 AS part, dp_select(node, 4, degree, 1) AS chosen FROM enron GROUP BY node % 4) s
JOIN enron ON node = chosen ORDER BY part;
