/*
 * dpmo_sqlite.h: what a host program calls in the dpmo SQLite extension (build/dpmo.so). SQL cannot reach
 * these functions: the host decides which privacy ledger a connection spends from, grants budgets, and,
 * in tests only, seeds the generator.
 *
 *   sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, NULL);   // C API only, not SQL's
 *   sqlite3_load_extension(db, "build/dpmo", NULL, &err);                    // entry point sqlite3_dpmo_init
 *   dpmo_sqlite_configure(db, "analyst-7.ledger", NULL, &err);             // from dlsym, see tests/host.c
 *
 * Loading the extension without dpmo_sqlite_configure attaches the ledger "<main database file>.dpmo-ledger"
 * when the main database is a file (none for :memory:); without a ledger holding a grant, every selection
 * is refused.
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
 * not NULL, which makes every draw predictable: tests only. Call it outside any statement. Returns
 * SQLITE_OK, or an error code with *errmsg (sqlite3_free it) when errmsg is not NULL.
 */
int dpmo_sqlite_configure(sqlite3 *db, const char *ledger_path, const unsigned char *test_seed, char **errmsg);

/*
 * Adds epsilon (finite, > 0) to the budget of the ledger file ledger_path (created when missing); durable
 * when it returns SQLITE_OK. Needs no connection; the connections using that ledger see it at their next
 * charge. Returns SQLITE_OK, or an error code with *errmsg (free() it) when errmsg is not NULL.
 */
int dpmo_sqlite_grant(const char *ledger_path, double epsilon, char **errmsg);

#ifdef __cplusplus
}
#endif

#endif
