/*
 * dpmo_sqlite.h: what a host program calls in the dpmo SQLite extension (build/dpmo.so). SQL cannot reach
 * these functions: the host decides which privacy ledger a connection spends from, grants budgets, restricts
 * a connection to an analyst, and, in tests only, seeds the generator.
 *
 *   sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, NULL);   // C API only, not SQL's
 *   sqlite3_load_extension(db, "build/dpmo", NULL, &err);                    // entry point sqlite3_dpmo_init
 *   dpmo_sqlite_configure(db, "analyst-7.ledger", NULL, &err);             // from dlsym, see tests/host.c
 *   dpmo_sqlite_restrict(db, private_tables, readable, releases, n, &err);  // the analyst's connection
 *
 * Loading the extension without dpmo_sqlite_configure attaches the ledger "<main database file>.dpmo-ledger"
 * when the main database is a file (none for :memory:), creating it (empty of budget) where it can; without
 * a ledger holding a grant, every selection is refused.
 *
 * Processes: a connection must not be used across fork(2) (SQLite's rule). If a host does it anyway, the
 * extension still holds: each process keys its own generator from the operating system before its first
 * draw (no two processes draw one stream), and charges the ledger through its own open file description.
 */
#ifndef DPMO_SQLITE_H
#define DPMO_SQLITE_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Replaces the dpmo state of connection db (the extension must have been loaded into the process): its
 * functions then charge the ledger file ledger_path (created when missing; NULL: the default above) and
 * draw from a ChaCha20 generator seeded from the operating system, or from test_seed (32 bytes) when it is
 * not NULL, which makes every draw predictable in this process: tests only. Call it outside any statement.
 * Returns SQLITE_OK, or an error code with *errmsg (free() it) when errmsg is not NULL.
 */
int dpmo_sqlite_configure(sqlite3 *db, const char *ledger_path, const unsigned char *test_seed, char **errmsg);

/*
 * Adds epsilon (finite, > 0) to the budget of the ledger file ledger_path (created when missing); durable
 * when it returns SQLITE_OK. Needs no connection; the connections using that ledger see it at their next
 * charge. Returns SQLITE_OK, or an error code with *errmsg (free() it) when errmsg is not NULL.
 */
int dpmo_sqlite_grant(const char *ledger_path, double epsilon, char **errmsg);

/*
 * dpmo_sqlite_grant with a δ: adds (epsilon, delta) to the budget, delta in [0, 1) and the total δ below 1.
 * A budget whose total δ is 0 (every grant made without one) is pure-ε: it refuses every charge with δ > 0.
 * Charges compose sequentially (Σ ε, Σ δ), exactly as dpmo_budget_charge_approx.
 */
int dpmo_sqlite_grant_approx(const char *ledger_path, double epsilon, double delta, char **errmsg);

/* A release: what an analyst's dp_release('name', arg1, ...) runs. */
typedef struct dpmo_sqlite_release {
    const char *name; /* as the analyst writes it (case-sensitive) */
    const char *sql;  /* one read-only statement returning one column and at most one row; ?1, ?2, ... are
                         bound to arg1, arg2, ... */
} dpmo_sqlite_release;

/*
 * Restricts connection db to an analyst, for good (the extension must be loaded into the process). From
 * then on the SQL prepared on db may only SELECT (WITH RECURSIVE included):
 *   - reading the tables and views of the main database that `readable` names (NULL-terminated), each in
 *     full, wherever the read happens (a view is a convenience: what it reads must be readable too), and
 *     the functions json_each and json_tree;
 *   - calling SQLite's pure built-in functions, the dp_* functions and dp_release (an allow-list);
 *   - PRAGMA table_info / table_xinfo of what is readable;
 * and nothing else: no INSERT, UPDATE, DELETE, CREATE (TEMP or not), DROP, ALTER, ATTACH, DETACH, VACUUM,
 * ANALYZE, REINDEX, BEGIN, SAVEPOINT, other pragmas, virtual tables, load_extension. `private_tables`
 * (NULL-terminated) names the tables that hold private data; unnamed tables are unreadable too (allow-list),
 * the list catches mistakes: a private table must exist in the main database and cannot be readable.
 * `releases` (nreleases of them) are the host's queries that the analyst runs as dp_release('name', ...):
 * with the host's rights, the analyst's arguments bound to ?1, ?2, ...; they are how private data reaches
 * the analyst, through the dp_* selections they make (utilities, sensitivities, candidates fixed by the
 * host). The host writes them schema-qualified (main.t) and takes candidates from public tables.
 * Also turns SQLITE_DBCONFIG_DEFENSIVE on. Call it outside any statement, after dpmo_sqlite_configure.
 * Returns SQLITE_OK, or an error code with *errmsg (free() it) when errmsg is not NULL; after an error the
 * connection refuses every statement (close it).
 */
int dpmo_sqlite_restrict(sqlite3 *db, const char *const *private_tables, const char *const *readable,
                         const dpmo_sqlite_release *releases, int nreleases, char **errmsg);

/*
 * Runs the host's own SQL on db as sqlite3_exec does, with the host's rights on a restricted connection
 * (everything is allowed while each statement is prepared and stepped; callback runs with the analyst's
 * rights, so it must not run the analyst's SQL on db expecting more). On a connection that is not
 * restricted, it is sqlite3_exec. Returns an SQLite result code, with *errmsg (free() it) on error.
 */
int dpmo_sqlite_host_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *arg,
                          char **errmsg);

#ifdef __cplusplus
}
#endif

#endif
