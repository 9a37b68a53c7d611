-- Single-objective aggregates: properties that hold whatever the draw, and reproducibility under dp_seed.
SELECT dp_version() ~ '^[0-9]+\.[0-9]+\.[0-9]+' AS version_ok;

CREATE TABLE items AS
  SELECT g::bigint AS id, (g % 7)::float8 AS score, g % 3 AS grp, 0.5::float8 AS delta
  FROM generate_series(1, 30) g;

SELECT dp_seed('basic');

-- Any ε: the result is one of the candidates.
SELECT dp_select(id, 0.1, score, 1) IN (SELECT id FROM items) AS is_candidate FROM items;
SELECT s AS selector, dp_select(id, 0.1, score, 1, s) IN (SELECT id FROM items) AS is_candidate
FROM items, unnest(ARRAY['exponential', 'permute_and_flip', 'noisy_max_laplace', 'noisy_max_gumbel',
                         'noisy_max_exponential']) s
GROUP BY s ORDER BY s;

-- A huge ε makes every selector pick a best candidate (score 6: ids 6, 13, 20, 27).
SELECT s AS selector, (SELECT score FROM items i WHERE i.id = dp_select(t.id, 1e4, t.score, 1, s)) AS chosen_score
FROM items t, unnest(ARRAY['exponential', 'permute_and_flip', 'noisy_max_laplace', 'noisy_max_gumbel',
                           'noisy_max_exponential']) s
GROUP BY s ORDER BY s;

-- GROUP BY: one private choice per group, from that group.
SELECT grp, dp_select(id, 1e4, score, 1) AS chosen FROM items GROUP BY grp ORDER BY grp;
SELECT c.grp, c.grp = i.grp AS from_own_group
FROM (SELECT grp, dp_select(id, 0.5, score, 1) AS chosen FROM items GROUP BY grp) c
JOIN items i ON i.id = c.chosen ORDER BY c.grp;

-- Top-k: k distinct candidates; at a huge ε, the k best in order of score.
SELECT cardinality(r) AS k, cardinality(r) = (SELECT count(DISTINCT x) FROM unnest(r) x) AS distinct_ids,
       r <@ (SELECT array_agg(id) FROM items) AS candidates
FROM (SELECT dp_select_top_k(id, 1, score, 1, 5) AS r FROM items) s;
SELECT (SELECT array_agg(score ORDER BY ord) FROM unnest(r) WITH ORDINALITY u(x, ord) JOIN items ON id = x)
       AS scores_in_pick_order
FROM (SELECT dp_select_top_k(id, 1e5, score, 1, 6, 'permute_and_flip') AS r FROM items) s;
SELECT cardinality(dp_select_top_k(id, 0.1, score, 1, 30)) AS full_permutation FROM items;

-- Local dampening: scalar δ per candidate, and δ(t) arrays.
SELECT (SELECT score FROM items WHERE id = dp_select_local(t.id, 1e4, t.score, t.delta, 1)) AS chosen_score
FROM items t;
SELECT (SELECT score FROM items WHERE id = dp_select_local(t.id, 1e4, t.score, ARRAY[t.delta, 0.75, 1], 1,
                                                            'permute_and_flip')) AS chosen_score
FROM items t;
SELECT dp_select_local(id, 0.1, score, delta, 1) IN (SELECT id FROM items) AS is_candidate FROM items;
SELECT (SELECT array_agg(score ORDER BY ord) FROM unnest(r) WITH ORDINALITY u(x, ord) JOIN items ON id = x)
       AS scores_in_pick_order
FROM (SELECT dp_select_local_top_k(id, 1e5, score, delta, 1, 4) AS r FROM items) s;
SET dpmo.dampening = shifted;
SELECT dp_select_local(id, 0.1, score, delta, 1) IN (SELECT id FROM items) AS is_candidate FROM items;
RESET dpmo.dampening;

-- Results do not depend on row order: candidates are sorted by id before selection.
SELECT dp_seed('order');
CREATE TEMP TABLE first_draw AS SELECT dp_select_top_k(id, 0.5, score, 1, 3) AS r FROM items;
SELECT dp_seed('order');
SELECT dp_select_top_k(id, 0.5, score, 1, 3 ORDER BY id DESC) = (SELECT r FROM first_draw) AS same_result
FROM items;
-- ... and the next draw differs in general (the generator advances): equal only by chance.
SELECT dp_seed('order');
SELECT count(DISTINCT r) > 1 AS generator_advances
FROM (SELECT dp_select_top_k(id, 0.5, score, 1, 3) AS r FROM items, generate_series(1, 5) GROUP BY generate_series) s;

-- An empty FILTER/WHERE inside GROUP BY simply produces no group.
SELECT grp, dp_select(id, 1, score, 1) FROM items WHERE grp > 5 GROUP BY grp;
