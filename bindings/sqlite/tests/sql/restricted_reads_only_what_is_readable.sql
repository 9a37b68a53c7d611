-- host: (no options)
-- dpmo_sqlite_restrict: the analyst's statements read only what the host declared readable (an allow-list),
-- wherever the read happens. Setup by the host: a private table (salaries), a public one (staff), a view
-- over it, statistics, a sequence; the analyst may read staff and depts.
.host CREATE TABLE salaries(id INTEGER PRIMARY KEY AUTOINCREMENT, salary REAL);
.host CREATE TABLE staff(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER);
.host WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 40) INSERT INTO staff SELECT i, 'p' || i, i % 4 FROM g;
.host INSERT INTO salaries SELECT id, 1000 * (id % 9) FROM staff WHERE id <= 30;
.host CREATE INDEX salaries_by_salary ON salaries(salary);
.host CREATE VIEW depts AS SELECT DISTINCT dept FROM staff;
.host ANALYZE;
.grant 1
.private salaries
.readable staff
.readable depts
.restrict
SELECT 'readable', count(*), sum(dept) FROM staff;
SELECT 'a readable view', group_concat(dept) FROM (SELECT dept FROM depts ORDER BY dept);
PRAGMA table_info(staff);
-- the private table, directly, by count, quoted, upper-cased, schema-qualified, in a subquery, a join, EXPLAIN
SELECT salary FROM salaries;
SELECT count(*) FROM salaries;
SELECT * FROM "SALARIES";
SELECT max(id) FROM main.salaries;
SELECT name FROM staff WHERE id IN (SELECT id FROM salaries WHERE salary > 7000);
SELECT s.name FROM staff s JOIN salaries p USING (id) ORDER BY p.salary DESC LIMIT 1;
EXPLAIN SELECT salary FROM salaries;
SELECT name FROM staff WHERE id IN salaries;
SELECT name FROM staff WHERE id NOT IN main.salaries;
SELECT (1, 1000) IN (SELECT id, salary FROM salaries);
SELECT * FROM staff NATURAL JOIN salaries;
SELECT name FROM staff WHERE EXISTS (SELECT 1 FROM salaries WHERE salaries.id = staff.id);
SELECT 1 FROM staff WHERE EXISTS (SELECT 1 FROM salaries);
SELECT 1 FROM salaries LIMIT 0;
SELECT id, name, dept FROM staff UNION ALL SELECT id, salary, 0 FROM salaries;
VALUES ((SELECT max(salary) FROM salaries));
SELECT printf('%s', (SELECT 1 FROM salaries WHERE salary > 7000));
-- the selection itself with the analyst's own sensitivity: an exact argmax, if it could read the table
SELECT dp_select(id, 0.001, salary, 1e-300) FROM salaries;
-- common table expressions named like a readable table or view: SQLite reports the reads inside them under
-- that name (as it does inside a view); the extension does not trust the name
WITH staff AS (SELECT salary FROM salaries) SELECT * FROM staff;
WITH depts(dept) AS (SELECT salary FROM salaries) SELECT * FROM depts;
WITH RECURSIVE depts(n) AS (SELECT salary FROM salaries UNION ALL SELECT n FROM depts WHERE 0) SELECT * FROM depts;
SELECT * FROM (SELECT salary FROM salaries) AS depts;
-- functions of the data: json_each over the private column, a scalar subquery
SELECT * FROM json_each((SELECT json_group_array(salary) FROM salaries));
SELECT (SELECT max(salary) FROM salaries);
-- the schema and what SQLite keeps about the data: statistics (row counts), the AUTOINCREMENT sequence,
-- pages (dbstat), prepared statements (sqlite_stmt), table-valued pragmas
SELECT * FROM sqlite_master;
SELECT * FROM sqlite_schema;
SELECT * FROM temp.sqlite_master;
SELECT * FROM sqlite_stat1;
SELECT * FROM sqlite_sequence;
SELECT * FROM dbstat;
.host SELECT 'the host reads dbstat (the module is now instantiated)', count(*) > 0 FROM dbstat;
SELECT * FROM dbstat;
SELECT name, pageno FROM dbstat WHERE name = 'salaries';
SELECT * FROM sqlite_stmt;
SELECT * FROM pragma_table_info('salaries');
SELECT * FROM pragma_index_list('salaries');
SELECT * FROM pragma_table_info('staff');
PRAGMA table_info(salaries);
PRAGMA main.table_info(salaries);
PRAGMA index_list(salaries);
PRAGMA index_info(salaries_by_salary);
PRAGMA table_list;
-- nothing of that was charged; the host's own query still reads the table
SELECT 'nothing charged', dp_budget_remaining();
.host SELECT 'the host reads', count(*), sum(salary) FROM main.salaries;
-- the restriction belongs to the connection: a new session is restricted again by the host
.reopen
SELECT count(*) FROM salaries;
SELECT 'reopened, readable', count(*) FROM staff;
