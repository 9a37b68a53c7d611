-- host: (no options)
-- dpmo_sqlite_restrict: the analyst's statements change nothing and reach no file. Each statement below was,
-- or could be, a way around a deny-list authorizer (the old recipe denied reads of the private table only):
-- renaming the table or its columns and reading it under the new name, copying it (VACUUM INTO, ATTACH,
-- CREATE TABLE AS, INSERT INTO ... SELECT), shadowing it for the host's unqualified query (TEMP objects),
-- views in main over it, triggers, virtual tables, pragmas that write or leak, functions that leak.
.host CREATE TABLE salaries(id INTEGER PRIMARY KEY, salary REAL);
.host CREATE TABLE staff(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER);
.host WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 40) INSERT INTO staff SELECT i, 'p' || i, i % 4 FROM g;
.host INSERT INTO salaries SELECT id, 1000 * (id % 9) FROM staff WHERE id <= 30;
.host CREATE VIEW depts AS SELECT DISTINCT dept FROM staff;
.host CREATE INDEX salaries_by_salary ON salaries(salary);
.grant 1
.private salaries
.readable staff
.readable depts
.restrict
-- rename, then read under the new name (the red team's first attack), and its variants
ALTER TABLE salaries RENAME TO s2;
SELECT salary FROM s2;
ALTER TABLE salaries RENAME COLUMN salary TO pay;
ALTER TABLE staff RENAME TO salaries_copy;
ALTER TABLE depts RENAME TO d2;
ALTER TABLE staff ADD COLUMN salary REAL;
ALTER TABLE staff DROP COLUMN name;
-- copy the database to a file and attach it (the second attack); attach anything
VACUUM INTO '@DB@.copy';
.system test -e '@DB@.copy' && echo 'the copy exists' || echo 'no copy was written'
VACUUM;
ATTACH '@DB@' AS again;
ATTACH ':memory:' AS scratch;
ATTACH '@DB@.dpmo-ledger' AS ledger;
DETACH main;
-- shadow the private table for the host's unqualified query (the third attack): TEMP views, tables, triggers
CREATE TEMP VIEW salaries AS SELECT id, salary * 1e300 AS salary FROM main.salaries;
CREATE TEMP TABLE salaries(id INTEGER PRIMARY KEY, salary REAL);
CREATE TEMP VIEW staff AS SELECT 1 AS id, 'x' AS name, 0 AS dept;
CREATE TEMP TRIGGER t AFTER INSERT ON staff BEGIN SELECT 1; END;
CREATE VIRTUAL TABLE temp.pages USING dbstat;
.host SELECT 'the host''s unqualified query reads the real table', count(*), sum(salary) FROM salaries;
-- objects in main: views and tables over the private table, triggers, indexes, virtual tables
CREATE VIEW main.salary_view AS SELECT * FROM salaries;
CREATE VIEW main.staff2 AS SELECT * FROM staff;
CREATE TABLE main.copy AS SELECT * FROM salaries;
CREATE TABLE main.empty(x);
CREATE TRIGGER main.leak AFTER INSERT ON staff BEGIN INSERT INTO staff SELECT id + 100, salary, 0 FROM salaries; END;
CREATE INDEX main.i ON staff(dept);
CREATE VIRTUAL TABLE main.pages USING dbstat;
CREATE VIRTUAL TABLE main.ft USING fts5(x);
-- writes, with or without a read of the private table; drops of data and schema
INSERT INTO staff SELECT id + 100, salary, 0 FROM salaries;
INSERT INTO staff VALUES (1000, 'x', 0);
UPDATE staff SET name = 'x';
DELETE FROM staff;
REPLACE INTO staff VALUES (1, 'x', 0);
DROP TABLE salaries;
DROP TABLE staff;
DROP VIEW depts;
DROP INDEX salaries_by_salary;
ANALYZE;
REINDEX;
-- transactions: BEGIN EXCLUSIVE would lock the host's other sessions out; ROLLBACK would undo the host's work
BEGIN EXCLUSIVE;
BEGIN;
SAVEPOINT s;
COMMIT;
ROLLBACK;
-- pragmas: writes (writable_schema, recursive_triggers, journal_mode, locking_mode, trusted_schema, ...) and
-- reads that leak (page counts, file names, statistics, change counters, integrity checks over the data)
PRAGMA writable_schema = 1;
PRAGMA recursive_triggers = 1;
PRAGMA journal_mode = OFF;
PRAGMA locking_mode = EXCLUSIVE;
PRAGMA trusted_schema = 1;
PRAGMA query_only = 0;
PRAGMA foreign_keys = 0;
PRAGMA cache_size = 1;
PRAGMA max_page_count = 1;
PRAGMA page_count;
PRAGMA freelist_count;
PRAGMA database_list;
PRAGMA data_version;
PRAGMA schema_version;
PRAGMA stats;
PRAGMA integrity_check;
PRAGMA quick_check;
PRAGMA foreign_key_check;
PRAGMA optimize;
PRAGMA function_list;
PRAGMA compile_options;
PRAGMA wal_checkpoint;
PRAGMA incremental_vacuum;
PRAGMA shrink_memory;
PRAGMA temp.table_info(staff);
-- functions that load code or reveal the connection's activity; a function outside the allow-list
SELECT load_extension('build/dpmo');
SELECT changes();
SELECT total_changes();
SELECT last_insert_rowid();
SELECT sqlite_compileoption_get(0);
SELECT sqlite_log(1, 'x');
SELECT fts3_tokenizer('simple');
SELECT unknown_function(1);
-- what the allow-list keeps: pure functions, SQLite's own generator (separate from dpmo's), JSON, dates
SELECT 'pure', abs(-2), round(2.5), upper('a'), json_array(1, 2) ->> '$[1]', length(randomblob(4)), typeof(random()), date('2000-01-01');
-- every statement above was refused, and nothing was charged
SELECT 'nothing charged', dp_budget_remaining();
.host SELECT 'the private table is intact', count(*), sum(salary) FROM main.salaries;
.host SELECT 'no new object', group_concat(name, ' ') FROM (SELECT name FROM main.sqlite_master ORDER BY name);
.host SELECT 'no TEMP object', count(*) FROM temp.sqlite_master;
