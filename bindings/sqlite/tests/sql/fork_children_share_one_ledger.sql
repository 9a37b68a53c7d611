-- host: (no options)
-- Forked processes that use an inherited connection charge one ledger correctly: each process locks the
-- ledger through its own open file description (flock locks belong to the description, so a shared one lets
-- every process "hold" the lock at once and write its record over another's). The parent and 8 children
-- race 20 selections each at 1/16 against a grant of 1: exactly 16 are answered, and the audit has all 16.
.grant 1
CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL);
INSERT INTO t VALUES (1, 3), (2, 2), (3, 1);
SELECT 'the parent has read the ledger', dp_budget_remaining();
.fork 8 20 SELECT dp_select(id, 0.0625, s, 1) IS NOT NULL FROM t;
.system build/dpmo-ledger show @DB@.dpmo-ledger
.system build/dpmo-ledger audit @DB@.dpmo-ledger | grep -c '|charge|'
