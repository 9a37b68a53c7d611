"""Run a SQL script from standard input in a DuckDB database file, statement by statement, as
`duckdb -unsigned FILE < script.sql` does: with DuckDB's Python package (2.0 or later), for hosts whose
`duckdb` shell is older (PyPI's duckdb-cli is 1.5.6, which dpmo refuses: duckdb/duckdb#21537).

    python bindings/duckdb/run_sql.py demo.duckdb < demo.sql

Each row a query returns is printed with its columns separated by "|"; a failing statement prints "Error: <message>" on
standard error and the script goes on, as the shell does; the exit status is 1 if any statement failed.
"""
import sys

import duckdb


def main(argv):
    if len(argv) != 2:
        print("usage: run_sql.py DATABASE < SCRIPT", file=sys.stderr)
        return 2
    con = duckdb.connect(argv[1], config={"allow_unsigned_extensions": "true"})
    failed = False
    for statement in duckdb.extract_statements(sys.stdin.read()):
        try:
            cur = con.execute(statement)
            # the shell shows what a query returns, not the row counts of CREATE ... AS, INSERT, UPDATE, DELETE
            counts_rows = duckdb.ExpectedResultType.CHANGED_ROWS in statement.expected_result_type
            if cur.description is not None and (statement.type == duckdb.StatementType.MULTI or not counts_rows):
                for row in cur.fetchall():
                    print("|".join("NULL" if v is None else str(v) for v in row))
        except duckdb.Error as e:
            print("Error: %s" % str(e).splitlines()[0], file=sys.stderr)
            failed = True
    con.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
