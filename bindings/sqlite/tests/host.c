/*
 * host: a tiny host program for the SQLite extension's tests, playing the part of an application that runs
 * an analyst's SQL. It loads build/dpmo.so through the C API only (SQL's load_extension() stays disabled),
 * attaches a privacy ledger and, for reproducible tests, seeds the generator, then runs the script read from
 * standard input (the analyst's SQL) and prints each result row as "a|b|c" and each error as "Error: message".
 *
 *   host DATABASE EXTENSION [--ledger PATH] [--seed TEXT] < script
 *
 * Lines of the script starting with a dot are host commands, not SQL:
 *   .grant EPSILON [DELTA] the host adds EPSILON (and DELTA) to the ledger (dpmo_sqlite_grant, _grant_approx)
 *   .reopen                close the connection and open it again (load, configure, restrict) as a new
 *                          session would
 *   .system COMMAND        run a shell command (to damage or replace a ledger file between statements)
 *   .host SQL              run SQL (one line) as the host's own statement: dpmo_sqlite_host_exec on a
 *                          restricted connection, plain SQL otherwise
 *   .private TABLE         \
 *   .readable NAME         |  collect the arguments of dpmo_sqlite_restrict (private tables, what the analyst
 *   .release NAME SQL      |  may read, the host's releases) ...
 *   .restrict              /  ... and restrict the connection (again after each .reopen)
 *   .clear                 forget those lists: the next .reopen opens a connection that is not restricted
 *   .fork N REPEAT SQL     fork N children that, like this process, run SQL (one line) REPEAT times on the
 *                          connection they inherit; prints how many answers and which errors all of them got
 *                          and, when every run answered, how many distinct answer sequences there were
 * --seed TEXT seeds ChaCha20 with the 32 bytes of TEXT repeated (tests only); without it, the OS seeds it.
 * In the script, @DB@ stands for the database's path.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct release_def {
    const char *name, *sql;
} release_def;

typedef int (*configure_fn)(sqlite3 *, const char *, const unsigned char *, char **);
typedef int (*grant_fn)(const char *, double, char **);
typedef int (*grant_approx_fn)(const char *, double, double, char **);
typedef int (*restrict_fn)(sqlite3 *, const char *const *, const char *const *, const release_def *, int, char **);
typedef int (*host_exec_fn)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);

#define MAX_NAMES 64
static const char *db_path, *ext_path, *ledger;
static unsigned char seed[32];
static int seeded;
static configure_fn configure;
static grant_fn grant;
static grant_approx_fn grant_approx;
static restrict_fn restrict_conn;
static host_exec_fn host_exec;
static const char *private_tables[MAX_NAMES + 1], *readable[MAX_NAMES + 1];
static release_def releases[MAX_NAMES];
static int n_private, n_readable, n_releases, restricted;
static FILE *out; /* where results go: stdout, or a pipe in a forked child */

static void apply_restriction(sqlite3 *db) {
    char *msg = NULL;
    private_tables[n_private] = NULL; /* NULL-terminated lists */
    readable[n_readable] = NULL;
    if (restrict_conn == NULL) {
        fprintf(out, "Error: the extension does not export dpmo_sqlite_restrict\n");
        return;
    }
    if (restrict_conn(db, private_tables, readable, releases, n_releases, &msg) != SQLITE_OK)
        fprintf(out, "Error: %s\n", msg ? msg : "dpmo_sqlite_restrict failed");
    free(msg);
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
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    if (configure == NULL) {
        /* POSIX's way to turn dlsym's object pointer into a function pointer */
        *(void **)&configure = dlsym(RTLD_DEFAULT, "dpmo_sqlite_configure");
        *(void **)&grant = dlsym(RTLD_DEFAULT, "dpmo_sqlite_grant");
        *(void **)&grant_approx = dlsym(RTLD_DEFAULT, "dpmo_sqlite_grant_approx");
        *(void **)&restrict_conn = dlsym(RTLD_DEFAULT, "dpmo_sqlite_restrict");
        *(void **)&host_exec = dlsym(RTLD_DEFAULT, "dpmo_sqlite_host_exec");
        if (configure == NULL || grant == NULL) {
            fprintf(stderr, "host: the extension does not export dpmo_sqlite_configure and dpmo_sqlite_grant\n");
            exit(1);
        }
    }
    if (ledger != NULL || seeded) {
        char *msg = NULL;
        if (configure(db, ledger, seeded ? seed : NULL, &msg) != SQLITE_OK) {
            fprintf(stderr, "host: %s\n", msg ? msg : "configure failed");
            exit(1);
        }
        free(msg);
    }
    if (restricted) apply_restriction(db);
    return db;
}

static void run(sqlite3 *db, const char *sql) {
    while (sql && *sql) {
        sqlite3_stmt *st = NULL;
        const char *tail = NULL;
        if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK) {
            fprintf(out, "Error: %s\n", sqlite3_errmsg(db));
            return;
        }
        if (st == NULL) return; /* only blanks or comments left */
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            for (int i = 0; i < sqlite3_column_count(st); i++) {
                const unsigned char *t = sqlite3_column_text(st, i);
                fprintf(out, "%s%s", i ? "|" : "", t ? (const char *)t : "");
            }
            fprintf(out, "\n");
        }
        if (rc != SQLITE_DONE) fprintf(out, "Error: %s\n", sqlite3_errmsg(db));
        sqlite3_finalize(st);
        sql = tail;
    }
}

static int print_row(void *ctx, int n, char **vals, char **names) {
    (void)ctx;
    (void)names;
    for (int i = 0; i < n; i++) fprintf(out, "%s%s", i ? "|" : "", vals[i] ? vals[i] : "");
    fprintf(out, "\n");
    return 0;
}

static void host_statement(sqlite3 *db, const char *sql) {
    if (!restricted) {
        run(db, sql);
        return;
    }
    char *msg = NULL;
    if (host_exec == NULL) fprintf(out, "Error: the extension does not export dpmo_sqlite_host_exec\n");
    else if (host_exec(db, sql, print_row, NULL, &msg) != SQLITE_OK) fprintf(out, "Error: %s\n", msg ? msg : "?");
    free(msg);
}

/* ---- .fork: the same connection used by several processes (which SQLite forbids; the ledger must hold). */

#define MAX_PROCS 64
typedef struct proc_out {
    char *text;
    size_t len;
} proc_out;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void fork_run(sqlite3 *db, int n, int repeat, const char *sql) {
    proc_out outs[MAX_PROCS + 1];
    int fds[MAX_PROCS];
    pid_t pids[MAX_PROCS];
    FILE *saved = out;
    if (n < 1 || n > MAX_PROCS || repeat < 1) {
        fprintf(out, "Error: .fork N REPEAT SQL: 1 <= N <= %d, REPEAT >= 1\n", MAX_PROCS);
        return;
    }
    fflush(out);
    for (int i = 0; i < n; i++) {
        int p[2];
        if (pipe(p) != 0) exit(1);
        pids[i] = fork();
        if (pids[i] < 0) exit(1);
        if (pids[i] == 0) {
            close(p[0]);
            out = fdopen(p[1], "w");
            for (int r = 0; r < repeat; r++) run(db, sql);
            fflush(out);
            _exit(0);
        }
        close(p[1]);
        fds[i] = p[0];
    }
    /* this process takes part too */
    out = open_memstream(&outs[n].text, &outs[n].len);
    for (int r = 0; r < repeat; r++) run(db, sql);
    fclose(out);
    out = saved;
    for (int i = 0; i < n; i++) {
        FILE *f = open_memstream(&outs[i].text, &outs[i].len);
        char buf[4096];
        ssize_t got;
        while ((got = read(fds[i], buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)got, f);
        fclose(f);
        close(fds[i]);
        int status;
        waitpid(pids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fprintf(out, "Error: child %d died\n", i);
    }
    /* answers and errors over every process; answer sequences (each process's answers, joined) */
    int answered = 0, nerr = 0, all_answered = 1;
    char *errors[MAX_PROCS * 64], *seqs[MAX_PROCS + 1];
    for (int i = 0; i <= n; i++) {
        char *save = NULL, *seq = calloc(outs[i].len + 1, 1);
        int lines = 0;
        for (char *l = strtok_r(outs[i].text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            if (strncmp(l, "Error: ", 7) == 0) {
                all_answered = 0;
                if (nerr < MAX_PROCS * 64) errors[nerr++] = l;
            } else {
                answered++;
                strcat(seq, l);
                strcat(seq, ";");
            }
            lines++;
        }
        if (lines != repeat) all_answered = 0;
        seqs[i] = seq;
    }
    fprintf(out, "fork: %d answered\n", answered);
    qsort(errors, (size_t)nerr, sizeof errors[0], cmp_str);
    for (int i = 0; i < nerr;) {
        int j = i;
        while (j < nerr && strcmp(errors[j], errors[i]) == 0) j++;
        fprintf(out, "fork: %d x %s\n", j - i, errors[i]);
        i = j;
    }
    if (all_answered) {
        qsort(seqs, (size_t)n + 1, sizeof seqs[0], cmp_str);
        int distinct = 1;
        for (int i = 1; i <= n; i++) distinct += strcmp(seqs[i], seqs[i - 1]) != 0;
        fprintf(out, "fork: %d processes, %d distinct answer sequences\n", n + 1, distinct);
    }
    for (int i = 0; i <= n; i++) {
        free(outs[i].text);
        free(seqs[i]);
    }
}

int main(int argc, char **argv) {
    out = stdout;
    if (argc < 3) {
        fprintf(stderr, "usage: host DATABASE EXTENSION [--ledger PATH] [--seed TEXT] < script\n");
        return 2;
    }
    db_path = argv[1];
    ext_path = argv[2];
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ledger") == 0) ledger = argv[i + 1];
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
            int n, repeat, off = 0;
            char name[256];
            char *msg = NULL;
            line[strcspn(line, "\n")] = '\0';
            double delta = 0.0;
            int fields = sscanf(line, ".grant %lf %lf", &eps, &delta);
            if (fields >= 1) {
                const char *path = ledger;
                char fallback[4096];
                if (path == NULL) {
                    snprintf(fallback, sizeof fallback, "%s.dpmo-ledger", sqlite3_db_filename(db, "main"));
                    path = fallback;
                }
                int rc = fields == 2 && grant_approx != NULL ? grant_approx(path, eps, delta, &msg) : grant(path, eps, &msg);
                if (rc != SQLITE_OK) printf("Error: %s\n", msg ? msg : "grant failed");
                free(msg);
            } else if (strncmp(line, ".host ", 6) == 0) {
                host_statement(db, line + 6);
            } else if (strncmp(line, ".system ", 8) == 0) {
                fflush(stdout);
                if (system(line + 8) != 0) printf("Error: command failed: %s\n", line + 8);
            } else if (strcmp(line, ".reopen") == 0) {
                sqlite3_close(db);
                db = open_session();
            } else if (sscanf(line, ".private %255s", name) == 1 && n_private < MAX_NAMES) {
                private_tables[n_private++] = strdup(name);
            } else if (sscanf(line, ".readable %255s", name) == 1 && n_readable < MAX_NAMES) {
                readable[n_readable++] = strdup(name);
            } else if (sscanf(line, ".release %255s %n", name, &off) == 1 && off > 0 && n_releases < MAX_NAMES) {
                releases[n_releases].name = strdup(name);
                releases[n_releases++].sql = strdup(line + off);
            } else if (strcmp(line, ".clear") == 0) {
                for (int i = 0; i < n_private; i++) free((char *)private_tables[i]);
                for (int i = 0; i < n_readable; i++) free((char *)readable[i]);
                for (int i = 0; i < n_releases; i++) {
                    free((char *)releases[i].name);
                    free((char *)releases[i].sql);
                }
                n_private = n_readable = n_releases = restricted = 0;
            } else if (strcmp(line, ".restrict") == 0) {
                restricted = 1;
                apply_restriction(db);
            } else if (sscanf(line, ".fork %d %d %n", &n, &repeat, &off) == 2 && off > 0) {
                fork_run(db, n, repeat, line + off);
            } else {
                fprintf(stderr, "host: unknown command %s\n", line);
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
