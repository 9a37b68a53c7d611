-- host: (no options)
-- The analyst's SQL has no way to seed the generator, grant or set a budget, load an extension, or write
-- the ledger file (ATTACH and VACUUM INTO see a file that is not a database). The host decides. This
-- connection is not restricted (dpmo_sqlite_restrict refuses ATTACH and VACUUM outright).
CREATE TABLE t(id INTEGER PRIMARY KEY, s REAL);
INSERT INTO t VALUES (1, 10), (2, 5), (3, 1);
-- Before any grant the ledger exists already, holding its create record: an empty file would be an empty
-- database to ATTACH, which would write into it and leave a ledger that no grant could use (and the error
-- would show its path).
ATTACH '@DB@.dpmo-ledger' AS early;
CREATE TABLE early.t(x);
VACUUM INTO '@DB@.dpmo-ledger';
SELECT dp_select(id, 0.5, s, 1) FROM t;
.grant 0.5
SELECT dp_seed(1);
SELECT dp_seed('00000000000000000000000000000000000000000000000000000000000000ff');
SELECT dp_budget_grant(10);
SELECT dp_budget_set(10);
SELECT dp_budget_top_up(10);
SELECT load_extension('./build/dpmo');
ATTACH '@DB@.dpmo-ledger' AS ledger;
VACUUM INTO '@DB@.dpmo-ledger';
SELECT 'the ledger survived', dp_budget_remaining();
.grant 0.25
SELECT 'only the host grants', dp_budget_remaining();
