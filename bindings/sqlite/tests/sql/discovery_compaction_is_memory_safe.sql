-- Discovery groups whose buffers are compacted many times (bounded memory, bindings/SQL.md): every function and
-- score, with groups, NULL units, items and values, multi-unit compactions and a one-unit stream; run under
-- valgrind too. Lines are "check|value" (certain outcomes: epsilon huge, or one unit, which is never released).
.grant 1000000000 0.5
CREATE TABLE ev(u INTEGER, i INTEGER, v REAL, g INTEGER);
WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 19999)
INSERT INTO ev SELECT x % 500, x % 37, CASE WHEN x % 11 = 0 THEN NULL ELSE (x % 7) * 0.5 END, x % 2 FROM c;
INSERT INTO ev VALUES (NULL, 1, 1, 0), (1, NULL, 1, 1), (2, 3, NULL, 0);
SELECT 'partitions, 500 units, L = 3', json_array_length(dp_discover_partitions(u, i, 1e4, 1e-6, 3)) > 0 FROM ev;
SELECT 'partitions, sips, by group', g, json_valid(dp_discover_partitions(u, i, 1e4, 1e-6, 2, 'sips=2')) FROM ev GROUP BY g ORDER BY g;
SELECT 'top-k units', json_array_length(dp_discover_top_k(u, i, 1e4, 1e-6, 3, 2, 5)) BETWEEN 1 AND 3 FROM ev;
SELECT 'top-k events', json_array_length(dp_discover_top_k_events(u, i, 1e4, 1e-6, 3, 2, 4)) BETWEEN 1 AND 3 FROM ev;
SELECT 'top-k sum', json_array_length(dp_discover_top_k_sum(u, i, v, 1e4, 1e-6, 3, 2, 4, 0.25, 2, 6)) BETWEEN 1 AND 3 FROM ev;
WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 99999)
SELECT 'one unit, 10^5 events', dp_discover_partitions(7, x % 5000, 1, 1e-6, 4), dp_discover_top_k(7, x, 1, 1e-6, 1, 4),
       dp_discover_top_k_events(7, x % 3, 1, 1e-6, 1, 2, 9), dp_discover_top_k_sum(7, x % 3, x, 1, 1e-6, 1, 2, 9, 0, 1e6) FROM c;
