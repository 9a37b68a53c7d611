-- Enron email graph (SNAP, 36,692 nodes, 183,831 edges): influential accounts by degree and egocentric
-- density, computed with the C ABI (tools/enron_features.c -> data/enron_nodes.csv), checked against SQL.
CREATE TABLE enron_nodes (node bigint PRIMARY KEY, degree float8, egodensity float8, egodensity_delta float8[]);
\copy enron_nodes FROM 'data/enron_nodes.csv' CSV HEADER
CREATE TABLE enron_edges (src bigint, dst bigint);
\copy enron_edges FROM PROGRAM 'grep -v "^#" ../../../shared/data/enron/Email-Enron.txt'

SELECT count(*) AS nodes, sum(degree) / 2 AS edges FROM enron_nodes;
-- degrees from the library equal the SQL count of distinct neighbours
SELECT count(*) AS degree_mismatches
FROM enron_nodes n
FULL JOIN (SELECT src, count(DISTINCT dst) AS d FROM enron_edges WHERE src <> dst GROUP BY src) s ON s.src = n.node
WHERE coalesce(s.d, 0) <> n.degree;
SELECT node, degree, round(egodensity::numeric, 4) AS egodensity FROM enron_nodes ORDER BY degree DESC LIMIT 5;

CREATE FUNCTION dominators(bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT count(*) FROM enron_nodes o, enron_nodes c
  WHERE c.node = $1 AND o.degree >= c.degree AND o.egodensity >= c.egodensity
    AND (o.degree > c.degree OR o.egodensity > c.egodensity) $$;

SELECT dp_seed('enron');
SELECT dp_budget_set(40);

-- Most connected account, ε = 1, Δ = 1 (edge-DP): the gap to the 6th degree (1099) is huge.
SELECT dp_select(node, 1, degree, 1) IN (5038, 273, 458, 140, 1028) AS among_top5 FROM enron_nodes;
SELECT dp_select_top_k(node, 1, degree, 1, 3) <@ ARRAY[5038, 273, 458, 140, 1028, 195, 370]::bigint[]
       AS top3_among_top7 FROM enron_nodes;
-- Egocentric density with its admissible local sensitivity δ(t) (8 distances): a valid account.
SELECT dp_select_local(node, 1, egodensity, egodensity_delta, 1) IN (SELECT node FROM enron_nodes) AS valid
FROM enron_nodes;
-- Both objectives at once. Global PrivPareto has Δ = n − 1 = 36,691; local PrivPareto (δ^PS) picks a
-- Pareto-optimal account (no other account is at least as good in both) already at ε = 10.
SELECT dominators(dp_pareto_select_local(node, 10, ARRAY[degree, egodensity], ARRAY[1, 1], ARRAY[1, 1]))
       AS local_dominators
FROM enron_nodes;
SELECT dp_pareto_select(node, 10, degree, egodensity) IN (SELECT node FROM enron_nodes) AS global_valid
FROM enron_nodes;
SELECT dp_agg_select(node, 1, ARRAY[1, 1], ARRAY[degree, egodensity], ARRAY[1, 1]) IN (5038, 273, 458, 140, 1028)
       AS agg_among_top5
FROM enron_nodes;
-- GROUP BY: the most connected account of each of 4 disjoint parts of the graph (ε = 1 each).
SELECT part, degree >= (SELECT max(degree) FROM enron_nodes WHERE node % 4 = part) - 20 AS near_part_max
FROM (SELECT node % 4 AS part, dp_select(node, 1, degree, 1) AS chosen FROM enron_nodes GROUP BY node % 4) s
JOIN enron_nodes ON node = chosen ORDER BY part;
SELECT dp_budget_remaining();
