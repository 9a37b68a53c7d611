/*
 * dpmo_restrict.c: a connection restricted to an analyst (dpmo_sqlite_restrict, dpmo_sqlite.h).
 *
 * SQLite has no users or privileges; its one hook is the authorizer, consulted while a statement is
 * prepared (and re-prepared). The restriction installs an allow-list authorizer:
 *
 *   - SELECT and WITH RECURSIVE; nothing else (no INSERT, UPDATE, DELETE, CREATE of any object, TEMP or not,
 *     DROP, ALTER, ATTACH, DETACH, VACUUM (which ATTACHes), ANALYZE, REINDEX, BEGIN, SAVEPOINT, virtual
 *     tables);
 *   - reads of what the host declared readable (tables and views of the main database, each in full),
 *     wherever the read happens: at the top level, in a view, in a common table expression.
 *     SQLite reports a read inside a view under the view's name, but it reports a read inside a common table
 *     expression of the analyst's own under the expression's name, which can be any name: the extension
 *     therefore never trusts that name, and a readable view is a convenience, never a way around a table;
 *   - the eponymous virtual tables json_each and json_tree (pure functions of their arguments);
 *   - functions on an allow-list: SQLite's pure built-ins, the dp_* functions, dp_release (not
 *     load_extension, changes, total_changes, last_insert_rowid, sqlite_offset, sqlite_log, fts3_tokenizer,
 *     nor any function the allow-list does not name);
 *   - PRAGMA table_info and table_xinfo of a readable table or view; no other pragma, read or write.
 *
 * Private data reaches the analyst only through the host's releases: dp_release('name', args...) runs the
 * host's SQL text for that name on the same connection, with the host's rights (the authorizer allows what
 * it prepares), the analyst's arguments bound to its parameters. The host's own statements run through
 * dpmo_sqlite_host_exec, also with the host's rights. The host's rights hold while such a statement is
 * prepared or stepped, never while the host's callback or the analyst's SQL runs.
 */
#define _GNU_SOURCE /* strdup */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dpmo_sqlite.h"
#include "dpmo_sqlite_internal.h"

typedef struct release_entry {
    char *name, *sql;
    int nparams;
} release_entry;

typedef struct restriction {
    sqlite3 *db;
    int host_depth;    /* > 0 while the host's statement is prepared or stepped: everything is allowed */
    int in_release;    /* a release is running: dp_release refuses to nest */
    bool failed;       /* dpmo_sqlite_restrict failed: every statement is refused */
    size_t ngrants, nprivate, nreleases;
    char **grants; /* the readable tables and views */
    char **private_tables;
    release_entry *releases;
    struct restriction *next;
} restriction;

/* The restricted connections of the process (dpmo_sqlite_host_exec finds its connection's restriction). */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static restriction *registry;

static restriction *registry_find(sqlite3 *db) {
    pthread_mutex_lock(&registry_lock);
    restriction *r = registry;
    while (r != NULL && r->db != db) r = r->next;
    pthread_mutex_unlock(&registry_lock);
    return r;
}

static void restriction_free(void *p) {
    restriction *r = p;
    if (r == NULL) return;
    pthread_mutex_lock(&registry_lock);
    for (restriction **at = &registry; *at != NULL; at = &(*at)->next)
        if (*at == r) {
            *at = r->next;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
    for (size_t i = 0; i < r->ngrants; i++) free(r->grants[i]);
    for (size_t i = 0; i < r->nprivate; i++) free(r->private_tables[i]);
    for (size_t i = 0; i < r->nreleases; i++) {
        free(r->releases[i].name);
        free(r->releases[i].sql);
    }
    free(r->grants);
    free(r->private_tables);
    free(r->releases);
    free(r);
}

/* ------------------------------------------------------------------------------------------------ */
/* The authorizer.                                                                                    */

/* SQLite's built-in functions that read nothing but their arguments and reveal nothing about the
 * connection (sorted; compared case-insensitively). */
static const char *const PURE_FUNCTIONS[] = {
    "->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg", "ceil", "ceiling", "char",
    "coalesce", "concat", "concat_ws", "cos", "cosh", "count", "cume_dist", "current_date", "current_time",
    "current_timestamp", "date", "datetime", "degrees", "dense_rank", "exp", "first_value", "floor", "format", "glob",
    "group_concat", "hex", "ifnull", "iif", "instr", "json", "json_array", "json_array_length", "json_error_position",
    "json_extract", "json_group_array", "json_group_object", "json_insert", "json_object", "json_patch",
    "json_pretty", "json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid", "julianday",
    "lag", "last_value", "lead", "length", "like", "likelihood", "likely", "ln", "log", "log10", "log2", "lower",
    "ltrim", "max", "min", "mod", "nth_value", "ntile", "nullif", "octet_length", "percent_rank", "pi", "pow",
    "power", "printf", "quote", "radians", "random", "randomblob", "rank", "replace", "round", "row_number", "rtrim",
    "sign", "sin", "sinh", "soundex", "sqlite_source_id", "sqlite_version", "sqrt", "strftime", "string_agg",
    "substr", "substring", "sum", "tan", "tanh", "time", "timediff", "total", "trim", "trunc", "typeof", "unhex",
    "unicode", "unixepoch", "unlikely", "upper", "zeroblob",
};

static bool listed(const char *const *list, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(list[i], name) == 0) return true;
    return false;
}

static bool function_allowed(const char *name) {
    if (name == NULL) return false;
    if (listed(PURE_FUNCTIONS, sizeof PURE_FUNCTIONS / sizeof PURE_FUNCTIONS[0], name)) return true;
    if (strcasecmp(name, "dp_budget_remaining") == 0 || strcasecmp(name, "dp_budget_remaining_delta") == 0 ||
        strcasecmp(name, "dp_version") == 0 ||
        strcasecmp(name, "dp_array") == 0 || strcasecmp(name, "dp_release") == 0)
        return true;
    return dpmo_sqlite_is_selection(name);
}

static bool in_main(const char *dbname) { return dbname == NULL || strcmp(dbname, "main") == 0; }

/* A read of any column of a readable table or view, or of none (count(*): column ""), or of json_each and
 * json_tree. A table is readable in full or not at all: with single columns readable, the order of the rows
 * (INDEXED BY an index over a hidden column, a covering index scan) would tell about the hidden ones. */
static bool readable(const restriction *r, const char *table, const char *column, const char *dbname) {
    if (table == NULL || column == NULL || !in_main(dbname)) return false;
    if (strcasecmp(table, "json_each") == 0 || strcasecmp(table, "json_tree") == 0) return true;
    return listed((const char *const *)r->grants, r->ngrants, table);
}

static int authorize(void *user, int action, const char *a, const char *b, const char *dbname, const char *inner) {
    restriction *r = user;
    (void)inner; /* the name of a view or of a common table expression: anything the analyst wants */
    if (r == NULL || r->failed) return SQLITE_DENY;
    if (r->host_depth > 0) return SQLITE_OK;
    switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
        return SQLITE_OK;
    case SQLITE_READ:
        return readable(r, a, b, dbname) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_FUNCTION:
        return function_allowed(b) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_PRAGMA: /* a: the pragma, b: its argument, dbname: its schema (NULL when not given) */
        if (a != NULL && b != NULL && in_main(dbname) &&
            (strcasecmp(a, "table_info") == 0 || strcasecmp(a, "table_xinfo") == 0) &&
            listed((const char *const *)r->grants, r->ngrants, b))
            return SQLITE_OK;
        return SQLITE_DENY;
    default:
        return SQLITE_DENY;
    }
}

/* Installed when a restriction could not be set up: the connection refuses every statement. */
static int deny_all(void *user, int action, const char *a, const char *b, const char *c, const char *d) {
    (void)user, (void)action, (void)a, (void)b, (void)c, (void)d;
    return SQLITE_DENY;
}

/* ------------------------------------------------------------------------------------------------ */
/* The host's statements: dp_release and dpmo_sqlite_host_exec.                                      */

static void fn_release(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    restriction *r = sqlite3_user_data(ctx);
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    const release_entry *rel = NULL;
    sqlite3_stmt *st = NULL;
    char *m;

    if (argc < 1 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
        sqlite3_result_error(ctx, "dp_release: the first argument must be the name of a release", -1);
        return;
    }
    const char *name = (const char *)sqlite3_value_text(argv[0]);
    for (size_t i = 0; name != NULL && i < r->nreleases; i++)
        if (strcmp(r->releases[i].name, name) == 0) rel = &r->releases[i];
    if (rel == NULL) {
        m = sqlite3_mprintf("dp_release: no release is named %Q", name ? name : "");
        sqlite3_result_error(ctx, m ? m : "dp_release: no such release", -1);
        sqlite3_free(m);
        return;
    }
    if (r->failed || r->in_release) {
        sqlite3_result_error(ctx, r->failed ? "dp_release: the connection's restriction failed"
                                            : "dp_release: a release cannot call dp_release",
                             -1);
        return;
    }
    if (argc - 1 != rel->nparams) {
        m = sqlite3_mprintf("dp_release: the release %Q takes %d argument%s after its name (got %d)", rel->name,
                            rel->nparams, rel->nparams == 1 ? "" : "s", argc - 1);
        sqlite3_result_error(ctx, m ? m : "dp_release: wrong number of arguments", -1);
        sqlite3_free(m);
        return;
    }
    r->in_release = 1;
    r->host_depth++;
    int rc = sqlite3_prepare_v2(db, rel->sql, -1, &st, NULL);
    r->host_depth--;
    for (int i = 1; rc == SQLITE_OK && i < argc; i++) rc = sqlite3_bind_value(st, i, argv[i]);
    if (rc == SQLITE_OK) {
        r->host_depth++;
        rc = sqlite3_step(st);
        r->host_depth--;
        if (rc == SQLITE_ROW) {
            sqlite3_result_value(ctx, sqlite3_column_value(st, 0));
            r->host_depth++;
            rc = sqlite3_step(st);
            r->host_depth--;
            if (rc == SQLITE_ROW) {
                m = sqlite3_mprintf("dp_release: the release %Q returned more than one row", rel->name);
                sqlite3_result_error(ctx, m ? m : "dp_release: more than one row", -1);
                sqlite3_free(m);
                rc = SQLITE_DONE;
            }
        } else if (rc == SQLITE_DONE) {
            sqlite3_result_null(ctx);
        }
    }
    if (rc != SQLITE_DONE) {
        /* the host statement's own message, e.g. "dp_select: the privacy budget is exhausted ..." */
        sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
        sqlite3_result_error_code(ctx, rc == SQLITE_ROW || rc == SQLITE_OK ? SQLITE_ERROR : rc);
    }
    sqlite3_finalize(st);
    r->in_release = 0;
}

static char *dup_printf(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

DP_EXPORT int dpmo_sqlite_host_exec(sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **),
                                    void *arg, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (sqlite3_api == NULL || db == NULL || sql == NULL) {
        if (errmsg) *errmsg = dup_printf("dpmo: load the extension (sqlite3_load_extension) and pass a statement");
        return SQLITE_MISUSE;
    }
    restriction *r = registry_find(db);
    if (r == NULL) {
        char *m = NULL;
        int rc = sqlite3_exec(db, sql, callback, arg, &m);
        if (m != NULL && errmsg) *errmsg = strdup(m);
        sqlite3_free(m);
        return rc;
    }
    if (r->failed) {
        if (errmsg) *errmsg = dup_printf("dpmo: the restriction of this connection failed: close it");
        return SQLITE_AUTH;
    }
    sqlite3_mutex *mu = sqlite3_db_mutex(db);
    sqlite3_mutex_enter(mu);
    int rc = SQLITE_OK;
    const char *tail = sql;
    while (rc == SQLITE_OK && tail != NULL && *tail != '\0') {
        sqlite3_stmt *st = NULL;
        r->host_depth++;
        rc = sqlite3_prepare_v2(db, tail, -1, &st, &tail);
        r->host_depth--;
        if (rc != SQLITE_OK || st == NULL) break;
        int n = sqlite3_column_count(st);
        char **cols = sqlite3_malloc64((sqlite3_uint64)(2 * n + 1) * sizeof(char *));
        if (cols == NULL) rc = SQLITE_NOMEM;
        for (;;) {
            if (rc != SQLITE_OK) break;
            r->host_depth++;
            int s = sqlite3_step(st);
            r->host_depth--;
            if (s == SQLITE_DONE) break;
            if (s != SQLITE_ROW) {
                rc = s;
                break;
            }
            if (callback == NULL) continue;
            for (int i = 0; i < n; i++) {
                cols[i] = (char *)sqlite3_column_name(st, i);
                cols[n + i] = (char *)sqlite3_column_text(st, i);
            }
            if (callback(arg, n, cols + n, cols) != 0) { /* the callback runs with the analyst's rights */
                rc = SQLITE_ABORT;
                break;
            }
        }
        sqlite3_free(cols);
        if (rc != SQLITE_OK && errmsg)
            *errmsg = strdup(rc == SQLITE_ABORT ? "dpmo: the callback requested a stop" : sqlite3_errmsg(db));
        int fin = sqlite3_finalize(st);
        if (rc == SQLITE_OK) rc = fin;
    }
    if (rc != SQLITE_OK && errmsg && *errmsg == NULL) *errmsg = strdup(sqlite3_errmsg(db));
    sqlite3_mutex_leave(mu);
    return rc;
}

/* ------------------------------------------------------------------------------------------------ */
/* Setting a restriction up.                                                                         */

/* Runs a one-value query with one or two text parameters; returns its value's type, 0 when no row. */
static int probe(sqlite3 *db, const char *sql, const char *p1, const char *p2) {
    sqlite3_stmt *st = NULL;
    int type = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    sqlite3_bind_text(st, 1, p1, -1, SQLITE_STATIC);
    if (p2 != NULL) sqlite3_bind_text(st, 2, p2, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) type = sqlite3_column_type(st, 0);
    sqlite3_finalize(st);
    return type;
}

/* The type of the main database's object `name` ("table", "view"; NULL: none), in buf. */
static const char *main_object(sqlite3 *db, const char *name, char *buf, size_t len) {
    sqlite3_stmt *st = NULL;
    const char *type = NULL;
    if (sqlite3_prepare_v2(db, "SELECT type FROM main.sqlite_master WHERE name = ?1 COLLATE NOCASE", -1, &st, NULL) !=
        SQLITE_OK)
        return NULL;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL) {
        snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
        type = buf;
    }
    sqlite3_finalize(st);
    return type;
}

static bool in_temp(sqlite3 *db, const char *name) {
    return probe(db, "SELECT 1 FROM temp.sqlite_master WHERE name = ?1 COLLATE NOCASE AND type IN ('table', 'view')",
                 name, NULL) > 0;
}

static char *quote_id(const char *s) { return sqlite3_mprintf("\"%w\"", s); }

/* Checks the host's lists and fills r. Runs with the host's rights except where it says otherwise. */
static char *setup(restriction *r, sqlite3 *db, const char *const *private_tables, const char *const *readable_list,
                   const dpmo_sqlite_release *releases, int nreleases) {
    char type[32];
    size_t n = 0;
    if (nreleases < 0 || (nreleases > 0 && releases == NULL)) return dup_printf("dpmo: bad list of releases");
    for (n = 0; private_tables != NULL && private_tables[n] != NULL; n++) {}
    r->private_tables = calloc(n ? n : 1, sizeof(char *));
    if (r->private_tables == NULL) return dup_printf("dpmo: out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *t = main_object(db, private_tables[i], type, sizeof type);
        if (t == NULL || strcmp(t, "table") != 0)
            return dup_printf("dpmo: the private table \"%s\" is not a table of the main database", private_tables[i]);
        if ((r->private_tables[r->nprivate++] = strdup(private_tables[i])) == NULL) return dup_printf("dpmo: out of memory");
    }
    for (n = 0; readable_list != NULL && readable_list[n] != NULL; n++) {}
    r->grants = calloc(n ? n : 1, sizeof(char *));
    if (r->grants == NULL) return dup_printf("dpmo: out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *name = readable_list[i];
        if ((r->grants[r->ngrants++] = strdup(name)) == NULL) return dup_printf("dpmo: out of memory");
        const char *t = main_object(db, name, type, sizeof type);
        if (t == NULL || (strcmp(t, "table") != 0 && strcmp(t, "view") != 0))
            return dup_printf("dpmo: \"%s\" is not a table or view of the main database (a table is readable in full "
                              "or not at all: public columns belong in a table of their own)",
                              name);
        if (listed((const char *const *)r->private_tables, r->nprivate, name))
            return dup_printf("dpmo: \"%s\" is private: it cannot be readable too", name);
    }
    /* Names that the TEMP schema could shadow (analyst statements are refused TEMP objects; the host's
     * existing ones must not stand in for what was checked here). */
    for (size_t i = 0; i < r->nprivate + r->ngrants; i++) {
        const char *name = i < r->nprivate ? r->private_tables[i] : r->grants[i - r->nprivate];
        if (in_temp(db, name)) return dup_printf("dpmo: a TEMP table or view is named \"%s\"", name);
    }
    static const char *const EPONYMOUS[] = {"json_each", "json_tree"};
    for (size_t i = 0; i < 2; i++) {
        if (main_object(db, EPONYMOUS[i], type, sizeof type) != NULL || in_temp(db, EPONYMOUS[i]))
            return dup_printf("dpmo: a table or view is named %s, which the analyst may read as SQLite's function",
                              EPONYMOUS[i]);
        /* Instantiate it now: its first use on a connection runs SQL that the analyst's rights refuse. Should
         * that fail (an SQLite without JSON), the analyst's first use fails the same way: closed. */
        char *q = sqlite3_mprintf("SELECT 1 FROM %s('[]')", EPONYMOUS[i]);
        if (q != NULL) (void)sqlite3_exec(db, q, NULL, NULL, NULL);
        sqlite3_free(q);
    }
    r->releases = calloc(nreleases ? (size_t)nreleases : 1, sizeof(release_entry));
    if (r->releases == NULL) return dup_printf("dpmo: out of memory");
    for (int i = 0; i < nreleases; i++) {
        const dpmo_sqlite_release *d = &releases[i];
        sqlite3_stmt *st = NULL;
        const char *tail = NULL;
        if (d->name == NULL || d->name[0] == '\0' || d->sql == NULL) return dup_printf("dpmo: release %d has no name or SQL", i + 1);
        for (size_t j = 0; j < r->nreleases; j++)
            if (strcmp(r->releases[j].name, d->name) == 0) return dup_printf("dpmo: two releases are named \"%s\"", d->name);
        if (sqlite3_prepare_v2(db, d->sql, -1, &st, &tail) != SQLITE_OK || st == NULL) {
            char *m = dup_printf("dpmo: the release \"%s\" does not compile: %s", d->name,
                                 st == NULL && sqlite3_errcode(db) == SQLITE_OK ? "no statement" : sqlite3_errmsg(db));
            sqlite3_finalize(st);
            return m;
        }
        bool one = true;
        if (tail != NULL && *tail != '\0') { /* anything but blanks and comments after the statement */
            sqlite3_stmt *more = NULL;
            one = sqlite3_prepare_v2(db, tail, -1, &more, NULL) == SQLITE_OK && more == NULL;
            sqlite3_finalize(more);
        }
        int ncols = sqlite3_column_count(st), ro = sqlite3_stmt_readonly(st), np = sqlite3_bind_parameter_count(st);
        sqlite3_finalize(st);
        if (!one || !ro || ncols != 1)
            return dup_printf("dpmo: the release \"%s\" must be one read-only statement returning one column", d->name);
        release_entry *e = &r->releases[r->nreleases];
        e->name = strdup(d->name);
        e->sql = strdup(d->sql);
        e->nparams = np;
        if (e->name == NULL || e->sql == NULL) return dup_printf("dpmo: out of memory");
        r->nreleases++;
    }
    /* What is readable, checked with the analyst's rights: a view must read only what is readable. */
    r->host_depth = 0;
    for (size_t i = 0; i < r->ngrants; i++) {
        char *t = quote_id(r->grants[i]);
        char *q = t ? sqlite3_mprintf("SELECT * FROM main.%s", t) : NULL;
        sqlite3_stmt *st = NULL;
        int rc = q ? sqlite3_prepare_v2(db, q, -1, &st, NULL) : SQLITE_NOMEM;
        sqlite3_finalize(st);
        sqlite3_free(q);
        sqlite3_free(t);
        if (rc != SQLITE_OK)
            return dup_printf("dpmo: the analyst could not read \"%s\": %s (a readable view must read only what is "
                              "readable)",
                              r->grants[i], sqlite3_errmsg(db));
    }
    return NULL;
}

DP_EXPORT int dpmo_sqlite_restrict(sqlite3 *db, const char *const *private_tables, const char *const *readable_list,
                                   const dpmo_sqlite_release *releases, int nreleases, char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (sqlite3_api == NULL || db == NULL) {
        if (errmsg) *errmsg = dup_printf("dpmo: load the extension into this process (sqlite3_load_extension) first");
        return SQLITE_MISUSE;
    }
    if (registry_find(db) != NULL) {
        if (errmsg) *errmsg = dup_printf("dpmo: this connection is restricted already");
        return SQLITE_MISUSE;
    }
    sqlite3_mutex *mu = sqlite3_db_mutex(db);
    sqlite3_mutex_enter(mu);
    sqlite3_set_authorizer(db, deny_all, NULL); /* until the restriction is complete: fail closed */
    restriction *r = calloc(1, sizeof *r);
    if (r == NULL) {
        sqlite3_mutex_leave(mu);
        if (errmsg) *errmsg = dup_printf("dpmo: out of memory");
        return SQLITE_NOMEM;
    }
    r->db = db;
    r->host_depth = 1;
    /* dp_release owns the restriction: SQLite frees it with the function, when the connection closes. */
    int rc = sqlite3_create_function_v2(db, "dp_release", -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, r, fn_release, NULL,
                                        NULL, restriction_free);
    if (rc != SQLITE_OK) {
        free(r);
        sqlite3_mutex_leave(mu);
        if (errmsg) *errmsg = dup_printf("dpmo: cannot register dp_release (%s); the connection refuses every statement",
                                         sqlite3_errstr(rc));
        return rc;
    }
    pthread_mutex_lock(&registry_lock);
    r->next = registry;
    registry = r;
    pthread_mutex_unlock(&registry_lock);
    sqlite3_set_authorizer(db, authorize, r);
    char *why = setup(r, db, private_tables, readable_list, releases, nreleases);
    r->host_depth = 0;
    if (why == NULL) {
        int on = 0;
        if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, &on) != SQLITE_OK || !on)
            why = dup_printf("dpmo: cannot turn on SQLITE_DBCONFIG_DEFENSIVE");
    }
    sqlite3_mutex_leave(mu);
    if (why != NULL) {
        r->failed = true;
        if (errmsg) {
            size_t len = strlen(why) + 64;
            *errmsg = malloc(len);
            if (*errmsg) snprintf(*errmsg, len, "%s; the connection refuses every statement", why);
        }
        free(why);
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}
