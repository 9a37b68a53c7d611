/*
 * host: a tiny host program for the SQLite extension's tests, playing the part of an application that runs
 * an analyst's SQL. It loads build/dpmo.so through the C API only (SQL's load_extension() stays disabled),
 * attaches a privacy ledger and, for reproducible tests, seeds the generator, then runs the script read from
 * standard input and prints each result row as "a|b|c" and each error as "Error: message".
 *
 *   host DATABASE EXTENSION [--ledger PATH] [--seed TEXT] [--private TABLE] < script
 *
 * Lines of the script starting with a dot are host commands, not SQL:
 *   .grant EPSILON   the host adds EPSILON to the ledger (dpmo_sqlite_grant)
 *   .reopen          close the connection and open it again (load, configure) as a new session would
 *   .system COMMAND  run a shell command (to damage or replace a ledger file between statements)
 *   .host SQL        run SQL (one line) as the host's own fixed query: the authorizer lets it read TABLE
 * --private TABLE installs an authorizer that refuses the analyst's statements any read of TABLE (the
 * README's recipe: analysts see private data only through the host's fixed dp_* queries).
 * --seed TEXT seeds ChaCha20 with the 32 bytes of TEXT repeated (tests only); without it, the OS seeds it.
 * In the script, @DB@ stands for the database's path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*configure_fn)(sqlite3 *, const char *, const unsigned char *, char **);
typedef int (*grant_fn)(const char *, double, char **);

static const char *db_path, *ext_path, *ledger;
static unsigned char seed[32];
static int seeded;
static const char *private_table;
static int host_mode;
static configure_fn configure;
static grant_fn grant;

static int authorizer(void *user, int action, const char *a, const char *b, const char *db, const char *view) {
    (void)user;
    (void)b;
    (void)db;
    (void)view;
    if (!host_mode && action == SQLITE_READ && a != NULL && strcmp(a, private_table) == 0) return SQLITE_DENY;
    return SQLITE_OK;
}

static sqlite3 *open_session(void) {
    sqlite3 *db;
    char *err = NULL;
    if (sqlite3_open(db_path, &db) != SQLITE_OK) {
        fprintf(stderr, "host: cannot open %s: %s\n", db_path, sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 1, NULL); /* C API only */
    if (sqlite3_load_extension(db, ext_path, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "host: cannot load %s: %s\n", ext_path, err ? err : "?");
        exit(1);
    }
    if (configure == NULL) {
        /* POSIX's way to turn dlsym's object pointer into a function pointer */
        *(void **)&configure = dlsym(RTLD_DEFAULT, "dpmo_sqlite_configure");
        *(void **)&grant = dlsym(RTLD_DEFAULT, "dpmo_sqlite_grant");
        if (configure == NULL || grant == NULL) {
            fprintf(stderr, "host: the extension does not export dpmo_sqlite_configure and dpmo_sqlite_grant\n");
            exit(1);
        }
    }
    if (private_table != NULL) sqlite3_set_authorizer(db, authorizer, NULL);
    if (ledger != NULL || seeded) {
        char *msg = NULL;
        if (configure(db, ledger, seeded ? seed : NULL, &msg) != SQLITE_OK) {
            fprintf(stderr, "host: %s\n", msg ? msg : "configure failed");
            exit(1);
        }
        free(msg);
    }
    return db;
}

static void run(sqlite3 *db, const char *sql) {
    while (sql && *sql) {
        sqlite3_stmt *st = NULL;
        const char *tail = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK) {
            printf("Error: %s\n", sqlite3_errmsg(db));
            return;
        }
        if (st == NULL) return; /* only blanks or comments left */
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(st); i++) {
                const unsigned char *t = sqlite3_column_text(st, i);
                printf("%s%s", i ? "|" : "", t ? (const char *)t : "");
            }
            printf("\n");
        }
        if (rc != SQLITE_DONE) printf("Error: %s\n", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sql = tail;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: host DATABASE EXTENSION [--ledger PATH] [--seed TEXT] < script\n");
        return 2;
    }
    db_path = argv[1];
    ext_path = argv[2];
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ledger") == 0) ledger = argv[i + 1];
        else if (strcmp(argv[i], "--private") == 0) private_table = argv[i + 1];
        else if (strcmp(argv[i], "--seed") == 0) {
            size_t n = strlen(argv[i + 1]);
            for (size_t j = 0; j < 32; j++) seed[j] = n ? (unsigned char)argv[i + 1][j % n] : 0;
            seeded = 1;
        } else {
            fprintf(stderr, "host: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    fflush(stdout);
    setvbuf(stdout, NULL, _IOLBF, 0);
    sqlite3 *db = open_session();
    char line[8192];
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL) return 1;
    buf[0] = '\0';
    while (fgets(line, sizeof line, stdin)) {
        char *at;
        while ((at = strstr(line, "@DB@")) != NULL) { /* substitute the database path */
            char rest[8192];
            snprintf(rest, sizeof rest, "%s", at + 4);
            snprintf(at, sizeof line - (size_t)(at - line), "%s%s", db_path, rest);
        }
        if (len == 0 && (line[0] == '\n' || strncmp(line, "--", 2) == 0)) continue; /* blank, comment */
        if (len == 0 && line[0] == '.') {
            double eps;
            char *msg = NULL;
            if (sscanf(line, ".grant %lf", &eps) == 1) {
                const char *path = ledger;
                char fallback[4096];
                if (path == NULL) {
                    snprintf(fallback, sizeof fallback, "%s.dpmo-ledger", sqlite3_db_filename(db, "main"));
                    path = fallback;
                }
                if (grant(path, eps, &msg) != SQLITE_OK) printf("Error: %s\n", msg ? msg : "grant failed");
                free(msg);
            } else if (strncmp(line, ".host ", 6) == 0) {
                host_mode = 1;
                run(db, line + 6);
                host_mode = 0;
            } else if (strncmp(line, ".system ", 8) == 0) {
                fflush(stdout);
                if (system(line + 8) != 0) printf("Error: command failed: %s", line + 8);
            } else if (strncmp(line, ".reopen", 7) == 0) {
                sqlite3_close(db);
                db = open_session();
            } else {
                fprintf(stderr, "host: unknown command %s", line);
                return 2;
            }
            continue;
        }
        size_t l = strlen(line);
        if (len + l + 1 > cap) {
            cap = 2 * (len + l + 1);
            char *nb = realloc(buf, cap);
            if (nb == NULL) return 1;
            buf = nb;
        }
        memcpy(buf + len, line, l + 1);
        len += l;
        if (sqlite3_complete(buf)) {
            run(db, buf);
            len = 0;
            buf[0] = '\0';
        }
    }
    if (len) run(db, buf);
    free(buf);
    sqlite3_close(db);
    return 0;
}
