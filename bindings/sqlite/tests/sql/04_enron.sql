-- Influential nodes of the Enron e-mail graph (36,692 nodes, 183,831 undirected edges), with and without
-- GROUP BY. Degree and egodensity have global sensitivity 1 under edge-DP. Checks are properties that hold
-- with overwhelming probability for any seed (failure probabilities noted).
.load ./build/dpmo
.mode list
.headers off
SELECT 'nodes', count(*), 'edges', sum(degree) / 2, 'max degree', max(degree) FROM nodes;
SELECT 'egodensity in [0, 1]', min(egodensity) >= 0 AND max(egodensity) <= 1 FROM nodes;
SELECT 'delta columns', (SELECT value FROM meta WHERE key = 'delta_columns'), min(length(ego_delta)) = max(length(ego_delta)) FROM nodes;
SELECT 'budget', dp_budget_set(32);

-- Exponential mechanism on degree at epsilon 1: a node 60 below the top has relative weight e^-30, so with
-- 36,692 nodes the chosen degree is >= max - 60 except with probability < 4e-9.
CREATE TEMP TABLE pick AS SELECT dp_select(id, 1.0, degree, 1.0) AS id FROM nodes;
SELECT 'degree pick is a node', (SELECT count(*) FROM nodes WHERE id = (SELECT id FROM pick));
SELECT 'degree pick is a hub', (SELECT degree FROM nodes WHERE id = (SELECT id FROM pick)) >= (SELECT max(degree) - 60 FROM nodes);
CREATE TEMP TABLE pick_pf AS SELECT dp_select(id, 1.0, degree, 1.0, 'permute_and_flip') AS id FROM nodes;
SELECT 'permute-and-flip pick is a hub', (SELECT degree FROM nodes WHERE id = (SELECT id FROM pick_pf)) >= (SELECT max(degree) - 60 FROM nodes);

-- GROUP BY shard (id % 8): one pick per shard, from that shard, among its hubs.
CREATE TEMP TABLE shard_pick AS SELECT shard, dp_select(id, 1.0, degree, 1.0) AS id FROM nodes GROUP BY shard;
SELECT 'one pick per shard', count(*) FROM shard_pick;
SELECT 'each pick in its shard', count(*) FROM shard_pick p JOIN nodes n ON n.id = p.id AND n.shard = p.shard;
SELECT 'each pick a hub of its shard', count(*) FROM shard_pick p JOIN nodes n ON n.id = p.id
  WHERE n.degree >= (SELECT max(degree) - 60 FROM nodes m WHERE m.shard = p.shard);
SELECT 'budget after 2 + 8 selections', dp_budget_remaining();

-- Top-10 hubs at epsilon 10 (1 per round): ten distinct nodes of degree >= 500 (failure < 1e-100).
CREATE TEMP TABLE top10 AS SELECT dp_select_topk(id, 10.0, 10, degree, 1.0) AS v FROM nodes;
SELECT 'top-10 distinct', (SELECT count(DISTINCT value) FROM json_each((SELECT v FROM top10)));
SELECT 'top-10 are hubs', (SELECT count(*) FROM json_each((SELECT v FROM top10)) j JOIN nodes n ON n.id = j.value WHERE n.degree >= 500);

-- Local dampening on egodensity with its delta table; PrivPareto and PrivAgg on (degree, egodensity).
SELECT 'local egodensity pick is a node', dp_select_local(id, 1.0, egodensity, ego_delta, 1.0) IN (SELECT id FROM nodes) FROM nodes;
SELECT 'shifted local pick is a node', dp_select_local(id, 1.0, egodensity, ego_delta, 1.0, 'shifted') IN (SELECT id FROM nodes) FROM nodes;
SELECT 'pareto pick is a node', dp_pareto_select(id, 1.0, degree, egodensity) IN (SELECT id FROM nodes) FROM nodes;
SELECT 'local pareto pick is a node', dp_pareto_select_local(id, 1.0, degree, degree_delta, 1, egodensity, ego_delta, 1) IN (SELECT id FROM nodes) FROM nodes;
-- PrivAgg with weights (1, 100): u_agg = degree + 100 egodensity, Delta_agg = 101; at epsilon 2 the pick
-- scores within 101 * 60 of the best except with probability < 4e-9.
CREATE TEMP TABLE agg_pick AS SELECT dp_agg_select(id, 2.0, 1, degree, 1, 100, egodensity, 1) AS id FROM nodes;
SELECT 'agg pick near the best', (SELECT degree + 100 * egodensity FROM nodes WHERE id = (SELECT id FROM agg_pick))
  >= (SELECT max(degree + 100 * egodensity) - 101 * 60 FROM nodes);
SELECT 'local agg per shard', count(*) FROM (SELECT shard, dp_agg_select_local(id, 0.25, 1, degree, degree_delta, 1, 1, egodensity, ego_delta, 1) FROM nodes GROUP BY shard);
SELECT 'budget left', dp_budget_remaining();
-- 5 more would overspend: refused, nothing charged.
SELECT dp_select(id, 5, degree, 1.0) FROM nodes;
SELECT 'budget left after refusal', dp_budget_remaining();
