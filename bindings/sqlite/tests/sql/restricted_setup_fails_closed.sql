-- host: (no options)
-- dpmo_sqlite_restrict checks the host's lists; a mistake fails the call and leaves the connection refusing
-- every statement (a host that ignores the error does not hand out an open connection).
.host CREATE TABLE salaries(id INTEGER PRIMARY KEY, salary REAL);
.host CREATE TABLE staff(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER);
.host INSERT INTO staff VALUES (1, 'a', 0), (2, 'b', 1);
.host INSERT INTO salaries VALUES (1, 5000);
.host CREATE VIEW payroll AS SELECT s.id, s.name, p.salary FROM staff s LEFT JOIN salaries p USING (id);
.host CREATE VIEW dept_pay AS SELECT dept, (SELECT sum(salary) FROM salaries) AS total FROM staff;
-- a readable view over the private table: the analyst could not read it anyway (SQLite's name for a read
-- inside a view can be forged by a CTE), so the setup refuses it, naming what it reads
.private salaries
.readable staff
.readable payroll
.restrict
SELECT count(*) FROM staff;
SELECT 1;
.host SELECT 'and the host''s own statements too';
.clear
.reopen
.readable staff
.readable dept_pay
.restrict
.clear
.reopen
-- a private table that is readable as well; one that does not exist (a typo); a readable name that does
-- not exist; a single column (a table is readable in full or not at all: with one column readable, the
-- order of its rows, say INDEXED BY an index over another column, would tell about the others)
.private salaries
.readable salaries
.restrict
.clear
.reopen
.private salary
.restrict
.clear
.reopen
.readable staf
.restrict
.clear
.reopen
.readable staff.dept
.restrict
.clear
.reopen
-- a TEMP object that would stand in for a checked name; a table that would stand in for json_each
.host CREATE TEMP TABLE staff(id, name, dept);
.private salaries
.readable staff
.restrict
.clear
.reopen
.host CREATE TABLE json_each(x);
.readable staff
.restrict
.clear
.reopen
.host DROP TABLE json_each;
-- releases: not one read-only statement returning one column; two of one name
.release w INSERT INTO staff VALUES (3, 'c', 0)
.restrict
.clear
.reopen
.release two SELECT 1, 2
.restrict
.clear
.reopen
.release many SELECT 1; SELECT 2
.restrict
.clear
.reopen
.release bad SELECT dp_select(FROM
.restrict
.clear
.reopen
.release r SELECT 1
.release r SELECT 2
.restrict
.clear
.reopen
-- a correct setup, once: a second restriction of the connection is refused (the first one stays)
.private salaries
.readable staff
.restrict
.restrict
SELECT 'still restricted', count(*) FROM staff;
SELECT count(*) FROM salaries;
