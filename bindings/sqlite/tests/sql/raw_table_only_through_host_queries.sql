-- host: --private salaries
-- An analyst who can read the raw table, or call dp_select on it with a utility and sensitivity of their
-- own (claiming sensitivity 1e-300 turns the selection into an exact argmax), is outside any budget. The
-- README's recipe: the host refuses the analyst's statements every read of the private table
-- (sqlite3_set_authorizer) and runs the selections itself, with fixed utilities and sensitivities.
.host CREATE TABLE salaries(id INTEGER PRIMARY KEY, salary REAL);
.host WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 40) INSERT INTO salaries SELECT i, 1000 * (i % 9) FROM g;
.grant 1
SELECT salary FROM salaries WHERE id = 42;
SELECT dp_select(id, 0.001, salary, 1e-300) FROM salaries;
.host SELECT 'the host''s fixed query', dp_select(id, 0.25, salary, 1000) BETWEEN 1 AND 40 FROM salaries;
SELECT 'charged by the host''s query only', dp_budget_remaining();
