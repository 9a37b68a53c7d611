-- host: (no options)
-- dpmo_sqlite_restrict with single readable columns: "staff.dept" lets the analyst read that column (and
-- count rows), nothing else of the table; "log.rowid" the rowid of a table without INTEGER PRIMARY KEY.
.host CREATE TABLE staff(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER);
.host INSERT INTO staff VALUES (1, 'a', 0), (2, 'b', 1), (3, 'c', 1);
.host CREATE TABLE log(event TEXT, secret TEXT);
.host INSERT INTO log VALUES ('x', 's1'), ('y', 's2');
.host CREATE VIEW dept_sizes AS SELECT dept, count(*) AS n FROM staff GROUP BY dept;
.readable staff.dept
.readable dept_sizes
.readable log.rowid
.readable log.event
.restrict
SELECT 'a readable column', group_concat(dept) FROM staff;
SELECT 'rows may be counted', count(*) FROM staff;
SELECT 'a view over readable columns', group_concat(dept || ':' || n) FROM dept_sizes;
SELECT 'the rowid', group_concat(rowid), group_concat(event) FROM log;
SELECT name FROM staff;
SELECT id FROM staff;
SELECT rowid FROM staff;
SELECT * FROM staff;
SELECT secret FROM log;
SELECT dept FROM staff WHERE name = 'a';
SELECT dept FROM staff ORDER BY id;
PRAGMA table_info(staff);
PRAGMA table_info(dept_sizes);
