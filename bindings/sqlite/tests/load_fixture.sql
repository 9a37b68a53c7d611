-- Loads the shared fixture into an SQLite database with the sqlite3 shell (run from bindings/sqlite):
-- the loader's CSV (../testdata/build/enron300.csv), the edge list and the expected figures.
CREATE TABLE enron_csv(node, degree, egodensity, ego_delta);
.import --csv --skip 1 ../testdata/build/enron300.csv enron_csv
CREATE TABLE enron(node INTEGER PRIMARY KEY, degree REAL, egodensity REAL, ego_delta TEXT);
INSERT INTO enron SELECT CAST(node AS INTEGER), CAST(degree AS REAL), CAST(egodensity AS REAL), ego_delta FROM enron_csv;
DROP TABLE enron_csv;
CREATE TABLE enron_edges(src INTEGER, dst INTEGER);
.separator "\t"
.import '|grep -v "^#" ../testdata/enron300.txt' enron_edges
CREATE TABLE expected_lines(line TEXT);
.separator "|"
.import '|grep -v "^#" ../testdata/enron300.expected' expected_lines
CREATE VIEW expected AS SELECT substr(line, 1, instr(line, ' ') - 1) AS name, substr(line, instr(line, ' ') + 1) AS value FROM expected_lines;
CREATE VIEW sql_degree AS SELECT v AS node, count(*) AS d FROM (SELECT src AS v FROM enron_edges UNION ALL SELECT dst FROM enron_edges) GROUP BY v;
CREATE VIEW front AS SELECT node FROM enron a WHERE NOT EXISTS (SELECT 1 FROM enron o WHERE o.degree >= a.degree AND o.egodensity >= a.egodensity AND (o.degree > a.degree OR o.egodensity > a.egodensity));
