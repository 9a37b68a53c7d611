-- host: (no options: the default ledger "<database>.dpmo-ledger", the generator seeded by the OS)
-- The budget is a ledger file written and synced before a result is returned: without a grant nothing is
-- selected; ROLLBACK, ROLLBACK TO and reopening the database refund nothing.
CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL);
INSERT INTO t VALUES (1, 10), (2, 5), (3, 1);
SELECT 'no grant', dp_budget_remaining();
SELECT dp_select(id, 0.5, s, 1) FROM t;
.grant 1
SELECT 'granted by the host', dp_budget_remaining();
SELECT 'charged', dp_select(id, 0.125, s, 1) IS NOT NULL, dp_budget_remaining() FROM t;
BEGIN;
SELECT 'in a transaction', dp_select(id, 0.125, s, 1) IS NOT NULL FROM t;
ROLLBACK;
SELECT 'ROLLBACK does not refund', dp_budget_remaining();
SAVEPOINT a;
SELECT 'in a savepoint', dp_select(id, 0.125, s, 1) IS NOT NULL FROM t;
ROLLBACK TO a;
RELEASE a;
SELECT 'ROLLBACK TO does not refund', dp_budget_remaining();
.reopen
SELECT 'reopening does not refund', dp_budget_remaining();
-- Exhaustion: refused, nothing charged; exactly the rest is accepted; then nothing.
SELECT dp_select(id, 0.75, s, 1) FROM t;
SELECT 'unchanged', dp_budget_remaining();
SELECT 'the rest', dp_select(id, dp_budget_remaining(), s, 1) IS NOT NULL FROM t;
SELECT dp_select(id, 1e-9, s, 1) FROM t;
.reopen
SELECT 'spent, also after reopening', dp_budget_remaining();
