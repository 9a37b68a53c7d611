-- Multi-objective aggregates: PrivPareto and PrivAgg, global and local, top-k, GROUP BY.
CREATE TABLE m AS
  SELECT g::bigint AS id, (g % 7)::float8 AS u1, g::float8 AS u2, g % 2 AS grp FROM generate_series(1, 30) g;
-- The Pareto front of (u1, u2) is {27 (6, 27), 30 (2, 30)}; in group 0 {20, 30}, in group 1 {27, 29}.
SELECT id FROM m a WHERE NOT EXISTS (
  SELECT 1 FROM m o WHERE o.u1 >= a.u1 AND o.u2 >= a.u2 AND (o.u1 > a.u1 OR o.u2 > a.u2)) ORDER BY id;

SELECT dp_seed('multi');

-- PrivPareto, global (Δ = n − 1): a large ε picks a Pareto-optimal candidate.
SELECT dp_pareto_select(id, 1e5, u1, u2) IN (27, 30) AS pareto_optimal FROM m;
SELECT dp_pareto_select(id, 1e5, ARRAY[u1, u2], 'permute_and_flip') IN (27, 30) AS pareto_optimal FROM m;
SELECT dp_pareto_select(id, 0.5, u1, u2, -u1) IN (SELECT id FROM m) AS is_candidate FROM m;
SELECT grp, dp_pareto_select(id, 1e5, u1, u2) AS chosen FROM m GROUP BY grp ORDER BY grp;
-- top-k: the front first (re-scored among the candidates left)
SELECT (SELECT array_agg(x ORDER BY x) FROM unnest(r[1:2]) x) AS first_two, cardinality(r) AS k
FROM (SELECT dp_pareto_select_top_k(id, 1e6, 3, u1, u2) AS r FROM m) s;

-- PrivPareto, local (δ_i per candidate and objective, Δ_i per objective): ε = 10 already suffices.
SELECT dp_pareto_select_local(id, 10, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1]) IN (27, 30) AS pareto_optimal
FROM m;
SELECT grp, dp_pareto_select_local(id, 50, ARRAY[u1, u2], ARRAY[1, 1], ARRAY[1, 1], 'noisy_max_gumbel') AS chosen
FROM m GROUP BY grp ORDER BY grp;

-- PrivAgg: u_agg = Σ w_i u_i with Δ_agg = Σ |w_i| Δ_i.
-- weights (1, 0.1): u_agg(27) = 8.7 is the unique maximum
SELECT dp_agg_select(id, 1e4, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[1, 1]) AS chosen FROM m;
-- negative weight: prefer small u2 among high u1: (6, 6) → id 6
SELECT dp_agg_select(id, 1e4, ARRAY[1, -0.1], ARRAY[u1, u2], ARRAY[1, 1], 'permute_and_flip') AS chosen FROM m;
SELECT dp_agg_select_top_k(id, 1e5, 3, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[1, 1]) AS chosen FROM m;
SELECT dp_agg_select_local(id, 1e4, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[0.5, 0.5], ARRAY[1, 1]) AS chosen FROM m;
SELECT grp, dp_agg_select(id, 1e4, ARRAY[1, 0.1], ARRAY[u1, u2], ARRAY[1, 1]) AS chosen FROM m GROUP BY grp
ORDER BY grp;
SELECT dp_agg_select(id, 0.1, ARRAY[1, 1], ARRAY[u1, u2], ARRAY[1, 1]) IN (SELECT id FROM m) AS is_candidate
FROM m;
