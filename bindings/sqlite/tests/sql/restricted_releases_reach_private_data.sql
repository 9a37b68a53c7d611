-- host: --seed releases
-- dpmo_sqlite_restrict: private data reaches the analyst only through the host's releases. A release is
-- the host's SQL text, run by dp_release('name', args...) with the host's rights; the analyst chooses only
-- the name, the arguments the host bound (here ε), and how often to run it, and every run is charged.
-- Candidates come from the public table (staff LEFT JOIN salaries: staff without a salary row are still
-- candidates, with utility 0), never from the private rows.
.host CREATE TABLE salaries(id INTEGER PRIMARY KEY, salary REAL);
.host CREATE TABLE staff(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER);
.host WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 40) INSERT INTO staff SELECT i, 'p' || i, i % 4 FROM g;
.host INSERT INTO salaries SELECT id, 1000 * (id % 9) FROM staff WHERE id <= 30;
.grant 1
.private salaries
.readable staff
.release top_earner SELECT dp_select(s.id, ?1, coalesce(p.salary, 0), 10000) FROM main.staff s LEFT JOIN main.salaries p ON p.id = s.id
.release top_earners SELECT dp_select_top_k(s.id, 0.25, 3, coalesce(p.salary, 0), 10000, 'permute_and_flip') FROM main.staff s LEFT JOIN main.salaries p ON p.id = s.id
.release by_dept SELECT json_group_array(json_array(dept, pick)) FROM (SELECT s.dept, dp_select(s.id, 0.0625, coalesce(p.salary, 0), 10000) AS pick FROM main.staff s LEFT JOIN main.salaries p ON p.id = s.id GROUP BY s.dept ORDER BY s.dept)
.release k_too_large SELECT dp_select_top_k(s.id, 0.25, 41, coalesce(p.salary, 0), 10000) FROM main.staff s LEFT JOIN main.salaries p ON p.id = s.id
.release nested SELECT dp_release('top_earner', 0.25)
.release two_rows SELECT dp_select(s.id, 0.0625, coalesce(p.salary, 0), 10000) FROM main.staff s LEFT JOIN main.salaries p ON p.id = s.id GROUP BY s.dept
.restrict
SELECT 'one pick among the staff', dp_release('top_earner', 0.125) IN (SELECT id FROM staff);
SELECT 'charged 0.125', dp_budget_remaining();
SELECT 'three picks', json_array_length(dp_release('top_earners'));
SELECT 'one pick per department, 4 x 0.0625', (SELECT count(*) FROM json_each(dp_release('by_dept')));
SELECT 'charged 0.125 + 0.25 + 0.25', dp_budget_remaining();
-- the analyst's arguments: checked by the release's own functions, before anything is charged
SELECT dp_release('top_earner', 0);
SELECT dp_release('top_earner', NULL);
SELECT dp_release('top_earner', '0.5');
SELECT dp_release('top_earner');
SELECT dp_release('top_earner', 0.125, 1);
SELECT dp_release('no_such_release');
SELECT dp_release(NULL);
SELECT dp_release();
SELECT dp_release('TOP_EARNER', 0.125);
SELECT dp_release('k_too_large');
SELECT dp_release('nested');
SELECT 'argument errors charge nothing', dp_budget_remaining();
-- a release returning two rows is the host's mistake: refused at the second row (the two groups that ran,
-- 2 x 0.0625, are charged)
SELECT dp_release('two_rows');
SELECT 'two groups charged', dp_budget_remaining();
-- run it again and again: each run is charged, the budget holds (0.25 left: two runs at 0.125, then the third
-- is refused and nothing more is charged)
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 10) SELECT count(dp_release('top_earner', 0.125 + 0 * i)) FROM c;
SELECT 'the budget holds', dp_budget_remaining();
.grant 1
SELECT 'evaluated for every row: 16 rows at 1/16', count(*) FROM staff WHERE id <= 16 AND dp_release('top_earner', 0.0625) > 0;
SELECT 'charged 16 x 1/16', dp_budget_remaining();
SELECT dp_release('top_earner', 0.0625);
-- dp_release exists on restricted connections only; the analyst cannot call the host's entry points
.clear
.reopen
SELECT dp_release('top_earner', 0.125);
SELECT dpmo_sqlite_grant('x', 1);
