-- dp_discover_partitions and dp_discover_top_k: raw (unit, item) events; popular items found, an item of one
-- unit never released, NULL units or items dropped, (epsilon, delta) charged once per group (parallel plans
-- included), a pure-epsilon grant refuses and argument errors charge nothing (texts shared: surface.cases).
SET search_path = public, dpmo;
CREATE TABLE ev AS SELECT i::bigint AS u, 7::bigint AS i, i % 2 AS g FROM generate_series(0, 399) i;
INSERT INTO ev SELECT i, -3, i % 2 FROM generate_series(0, 299) i;
INSERT INTO ev SELECT 1000, 99, 0 FROM generate_series(1, 50);
INSERT INTO ev SELECT NULL, 5, 0 FROM generate_series(1, 500);
INSERT INTO ev SELECT i, NULL, 1 FROM generate_series(0, 499) i;
CREATE ROLE disc_pure;
CREATE ROLE disc_analyst;
GRANT SELECT ON ev TO disc_pure, disc_analyst;
SELECT dp_budget_grant('disc_pure', 5);
SELECT dp_budget_grant('disc_analyst', 100, NULL, 1e-3);

-- a pure-epsilon grant refuses, nothing charged
SET SESSION AUTHORIZATION disc_pure;
SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1) FROM ev;
SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 1, 1) FROM ev;
SELECT dp_budget_remaining(), dp_budget_remaining_delta();
RESET SESSION AUTHORIZATION;

SET SESSION AUTHORIZATION disc_analyst;
-- argument errors: nothing charged
SELECT dp_discover_partitions(u, i, 0, 1e-6, 1) FROM ev;
SELECT dp_discover_partitions(u, i, 1, 1.5, 1) FROM ev;
SELECT dp_discover_partitions(u, i, 1, 1e-6, 0) FROM ev;
SELECT dp_discover_partitions(u, i, 1, 1e-6, 1, 'nope') FROM ev;
SELECT dp_discover_partitions(u, i, 1e-12, 1e-6, 1000, 'laplace') FROM ev;
SELECT dp_discover_partitions(u, i, 1, 1e-6, 1) FROM ev WHERE false;
SELECT dp_discover_top_k(u, i, 1, 1e-6, 2, 1, 1) FROM ev;
SELECT dp_discover_partitions(u, i, 1, 1e-6, 1 + (u > 5)::int) FROM ev;
SELECT dp_discover_partitions(u, i, 200, 1e-6, 1) FROM ev;
SELECT dp_budget_remaining(), dp_budget_remaining_delta();

-- results: 7 (400 units) and -3 (300) found, 99 (one unit, 50 events) and 5 (NULL units) never
SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1) FROM ev;
SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1, 'truncated_geometric') FROM ev;
SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1, 'laplace') FROM ev;
SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1, 'gaussian') FROM ev;
SELECT dp_discover_partitions(u, i, 1.0, 1e-6, 1, 'sips=3') FROM ev;
SELECT dp_discover_top_k(u, i, 1.0, 1e-6, 2, 1) FROM ev;
SELECT (dp_discover_top_k(u, i, 1.0, 1e-6, 3, 1, 5))[1:2] FROM ev;
-- every event dropped: an empty dataset, charged; one charge per group
SELECT dp_discover_partitions(CASE WHEN u < 0 THEN u END, i, 1.0, 1e-6, 1) FROM ev;
SELECT g, dp_discover_partitions(u, i, 1.0, 1e-6, 1) FROM ev GROUP BY g ORDER BY g;
-- a parallel plan: partial states (one part may hold dropped events only), one charge
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT dp_discover_partitions(u, CASE WHEN u < 350 THEN i END, 1.0, 1e-6, 1) FROM ev;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT round(dp_budget_remaining()::numeric, 9) AS epsilon_left, round(dp_budget_remaining_delta()::numeric, 12) AS delta_left;
RESET SESSION AUTHORIZATION;
SELECT epsilon, mechanism, delta FROM dp_audit WHERE role = 'disc_analyst' ORDER BY seq;
SELECT count(*) AS pure_charges FROM dp_audit WHERE role = 'disc_pure';
