-- host: --seed fork
-- A host that forks while a connection is open (SQLite says not to; the extension must still hold): every
-- process that uses the inherited connection re-keys its generator from the operating system before its
-- first draw, so no child repeats the parent's stream or a sibling's, even under a test seed.
.grant 1000
CREATE TABLE u(id INTEGER PRIMARY KEY);
WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 1000) INSERT INTO u SELECT i FROM g;
SELECT 'the parent draws first', dp_select(id, 0.001, 0, 1) IS NOT NULL FROM u;
-- 8 children and the parent, 4 uniform picks among 1000 each: a shared stream repeats all 4 picks
-- (distinct streams collide with probability below 1e-10)
.fork 8 4 SELECT dp_select(id, 0.001, 0, 1) FROM u;
.system build/dpmo-ledger show @DB@.dpmo-ledger
.system build/dpmo-ledger audit @DB@.dpmo-ledger | grep -c '|charge|'
