/*
 * dpmo_sqlite.c: SQLite loadable extension over the dpmo C ABI: differentially private selection as
 * aggregates, paid for from a privacy ledger file.
 *
 *   .load ./build/dpmo
 *   SELECT dp_select(id, 1.0, degree, 1.0) FROM nodes;
 *
 * The SQL surface (names, arguments, options, error texts) is bindings/SQL.md, implemented once for SQLite
 * and PostgreSQL in bindings/common/dp_sql.c. Arrays are JSON text: dp_array(...) writes them exactly
 * (17 significant digits; SQLite's json_array keeps only 15). The ledger is ledger.c; the host program
 * attaches it and grants budgets (dpmo_sqlite.h); SQL cannot seed the generator, grant, or pick a ledger.
 * dpmo_restrict.c restricts a connection to an analyst. Each process keys its own generator (below).
 */
#define _GNU_SOURCE /* strdup */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp_ledger.h"
#include "dp_sql.h"
#include "dpmo.h"
#include "dpmo_sqlite.h"
#include "dpmo_sqlite_internal.h"
#include "ledger.h"

#define JSON_SUBTYPE 74 /* 'J': SQLite's JSON functions read such text as JSON */

bool dpmo_sqlite_is_selection(const char *name) {
    for (size_t i = 0; name != NULL && i < dp_function_count; i++)
        if (strcasecmp(dp_functions[i].name, name) == 0) return true;
    return false;
}

/* ------------------------------------------------------------------------------------------------ */
/* Per-connection state: one generator and one ledger, shared by every function of the connection.    */

/*
 * The generator lives in a page of its own, marked MADV_WIPEONFORK (Linux 4.14+): a forked child sees the
 * page zeroed, hence not keyed, and keys a fresh generator from the operating system before its first draw.
 * The process id is checked too (kernels without MADV_WIPEONFORK, and any other way to copy the page), so
 * two processes never draw from one stream. A test seed holds in the process that configured it only.
 */
#define RNG_KEYED 0x64706d6f2d726e67ull /* "dpmo-rng" */
typedef struct rng_page {
    uint64_t keyed; /* RNG_KEYED once rng holds a key of process pid */
    pid_t pid;
    dpmo_rng rng;
} rng_page;

typedef struct conn_state {
    rng_page *page; /* mmap'ed, page-sized */
    size_t page_len;
    bool has_ledger;
    sq_ledger ledger;
    int refs; /* one per registered function; freed by the last xDestroy */
} conn_state;

static void conn_state_release(void *p) {
    conn_state *c = p;
    if (c != NULL && --c->refs == 0) {
        if (c->has_ledger) sq_ledger_close(&c->ledger);
        if (c->page != NULL) {
            memset(c->page, 0, sizeof *c->page);
            munmap(c->page, c->page_len);
        }
        sqlite3_free(c);
    }
}

static dpmo_status rng_page_new(conn_state *c, const unsigned char *seed32) {
    long pg = sysconf(_SC_PAGESIZE);
    size_t len = pg > 0 && (size_t)pg >= sizeof(rng_page) ? (size_t)pg : 4096;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return DPMO_INVALID_ARGUMENT;
#ifdef MADV_WIPEONFORK
    (void)madvise(m, len, MADV_WIPEONFORK); /* best effort: the process id check remains */
#endif
#ifdef MADV_DONTDUMP
    (void)madvise(m, len, MADV_DONTDUMP); /* keep the key out of core dumps */
#endif
    c->page = m;
    c->page_len = len;
    if (seed32 == NULL) return DPMO_OK; /* keyed from the OS at the first draw */
    dpmo_status st = dpmo_rng_init(&c->page->rng, DPMO_RNG_CHACHA20, seed32);
    if (st == DPMO_OK) {
        c->page->pid = getpid();
        c->page->keyed = RNG_KEYED;
    }
    return st;
}

/* The connection's generator for this process: keyed from the OS when not keyed here yet. */
static dpmo_status conn_rng(conn_state *c, dpmo_rng **out) {
    rng_page *p = c->page;
    pid_t self = getpid();
    if (p->keyed != RNG_KEYED || p->pid != self) {
        p->keyed = 0;
        dpmo_status st = dpmo_rng_init_os(&p->rng);
        if (st != DPMO_OK) return st;
        p->pid = self;
        p->keyed = RNG_KEYED;
    }
    *out = &p->rng;
    return DPMO_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Arrays: JSON text of numbers (and null), one or two dimensions.                                    */

typedef struct num_buf {
    double *v;
    size_t len, cap;
} num_buf;

static bool push(num_buf *b, double x) {
    if (b->len == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        double *v = sqlite3_realloc64(b->v, (sqlite3_uint64)cap * sizeof(double));
        if (v == NULL) return false;
        b->v = v;
        b->cap = cap;
    }
    b->v[b->len++] = x;
    return true;
}

static const char *skip_ws(const char *s) {
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/*
 * Parses "[x, ...]" or "[[x, ...], ...]" (rectangular) into b; NULL elements are NaN (*has_null). Returns
 * 0, -1 for bad syntax, -2 when out of memory.
 */
static int parse_json_array(const char *s, num_buf *b, int *ndim, int64_t dims[2], bool *has_null) {
    int64_t rows = 0, width = -1;
    *has_null = false;
    b->len = 0;
    s = skip_ws(s);
    if (*s++ != '[') return -1;
    s = skip_ws(s);
    *ndim = 1;
    if (*s == '[') *ndim = 2;
    if (*s == ']') {
        *ndim = 0;
        dims[0] = dims[1] = 0;
        return *skip_ws(s + 1) == '\0' ? 0 : -1;
    }
    for (;;) {
        int64_t in_row = 0;
        if (*ndim == 2) {
            s = skip_ws(s);
            if (*s++ != '[') return -1;
        }
        for (;;) {
            s = skip_ws(s);
            if (strncmp(s, "null", 4) == 0) {
                if (!push(b, NAN)) return -2;
                *has_null = true;
                s += 4;
            } else {
                char *end;
                if (*s == '[' || *s == ']' || *s == '\0') return -1;
                errno = 0;
                double x = strtod(s, &end);
                if (end == s) return -1;
                if (!push(b, x)) return -2;
                s = end;
            }
            in_row++;
            s = skip_ws(s);
            if (*s == ',') {
                s++;
                continue;
            }
            if (*s++ != ']') return -1;
            break;
        }
        if (*ndim == 1) {
            dims[0] = in_row;
            dims[1] = 0;
            break;
        }
        if (width >= 0 && in_row != width) return -1;
        width = in_row;
        rows++;
        s = skip_ws(s);
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s++ != ']') return -1;
        dims[0] = rows;
        dims[1] = width;
        break;
    }
    return *skip_ws(s) == '\0' ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------------ */
/* Reading the arguments of a row.                                                                   */

#define MAX_ARGS 11 /* dp_discover_top_k_sum with k_bar */

typedef struct sq_reader {
    const dp_function *f;
    sqlite3_value **argv;
    num_buf buf[MAX_ARGS];
    bool parsed[MAX_ARGS];
    dp_array arr[MAX_ARGS];
} sq_reader;

static bool is_array_text(sqlite3_value *v) {
    const unsigned char *t = sqlite3_value_text(v);
    return t != NULL && *skip_ws((const char *)t) == '[';
}

static dp_arg_type sq_type(void *ctx, int i) {
    sq_reader *r = ctx;
    switch (sqlite3_value_type(r->argv[i])) {
    case SQLITE_NULL:
        return DP_ARG_NULL;
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
        return DP_ARG_NUMBER;
    case SQLITE_TEXT:
        return is_array_text(r->argv[i]) ? DP_ARG_ARRAY : DP_ARG_TEXT;
    default:
        return DP_ARG_OTHER;
    }
}

static double sq_number(void *ctx, int i) { return sqlite3_value_double(((sq_reader *)ctx)->argv[i]); }

static bool sq_integer(void *ctx, int i, int64_t *out) {
    sq_reader *r = ctx;
    if (sqlite3_value_type(r->argv[i]) != SQLITE_INTEGER) return false;
    *out = sqlite3_value_int64(r->argv[i]);
    return true;
}

static dp_err_class sq_array(void *ctx, int i, dp_array *out, dp_error *err) {
    sq_reader *r = ctx;
    if (!r->parsed[i]) {
        int nd = 0;
        int64_t dims[2];
        bool has_null;
        int rc = parse_json_array((const char *)sqlite3_value_text(r->argv[i]), &r->buf[i], &nd, dims, &has_null);
        if (rc == -2) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory", r->f->name);
        if (rc != 0)
            return dp_fail(err, DP_ERR_ARGUMENT, -1,
                           "%s: an array argument is not a JSON array of numbers (one or two dimensions)", r->f->name);
        r->arr[i].ndim = nd;
        r->arr[i].dims[0] = dims[0];
        r->arr[i].dims[1] = dims[1];
        r->arr[i].len = (int64_t)r->buf[i].len;
        r->arr[i].vals = r->buf[i].v;
        r->arr[i].has_null = has_null;
        r->parsed[i] = true;
    }
    *out = r->arr[i];
    return DP_OK;
}

static const char *sq_text(void *ctx, int i, size_t *len) {
    sq_reader *r = ctx;
    const char *t = (const char *)sqlite3_value_text(r->argv[i]);
    *len = (size_t)sqlite3_value_bytes(r->argv[i]);
    return t ? t : "";
}

static void reader_free(sq_reader *r) {
    for (int i = 0; i < MAX_ARGS; i++) sqlite3_free(r->buf[i].v);
}

/* ------------------------------------------------------------------------------------------------ */
/* Aggregates.                                                                                       */

typedef struct fn_data {
    const dp_function *f;
    int32_t index;
    conn_state *conn;
} fn_data;

static void fn_data_release(void *p) {
    fn_data *d = p;
    if (d != NULL) {
        conn_state_release(d->conn);
        sqlite3_free(d);
    }
}

typedef struct agg_state {
    bool init;
    bool failed; /* xStep reported an error: xFinal (SQLite's cleanup) must only free */
    dp_params p;
    int64_t n, cap;
    int64_t *ids;
    double *vals; /* n · m */
    double *dels; /* n · m · width */
} agg_state;

/* Doubles per row: 0 while the group does not know its shape (dp_row_vals; those rows are NaN). */
static int64_t row_vals(const agg_state *s) { return dp_row_vals(&s->p); }
static int64_t row_dels(const agg_state *s) { return dp_row_dels(&s->p); }

static void agg_free(agg_state *s) {
    if (s == NULL) return;
    sqlite3_free(s->ids);
    sqlite3_free(s->vals);
    sqlite3_free(s->dels);
    memset(s, 0, sizeof *s);
}

static bool regrow(void **p, int64_t count, int64_t per, size_t size) {
    if (per == 0) return true;
    if ((uint64_t)count > (uint64_t)INT64_MAX / ((uint64_t)per * size)) return false;
    void *q = sqlite3_realloc64(*p, (sqlite3_uint64)(count * per) * size);
    if (q == NULL) return false;
    *p = q;
    return true;
}

static void *sq_alloc(void *ctx, size_t bytes);
static void sq_free(void *ctx, void *p);
static const dp_alloc SQ_ALLOC = {NULL, sq_alloc, sq_free};

static bool grow(agg_state *s, int64_t want) {
    if (want <= s->cap) return true;
    int64_t cap = s->cap ? 2 * s->cap : 64;
    if (dp_is_discovery(&dp_functions[s->p.function]) && s->n > 0) {
        /* a full discovery buffer is compacted first (bounded memory: dp_discover_compact) */
        dp_error err;
        int64_t kept, extra = want - s->n;
        if (dp_discover_compact(&s->p, s->n, s->ids, s->vals, &SQ_ALLOC, &kept, &err) != DP_OK) return false;
        s->n = kept;
        want = kept + extra;
        cap = dp_discover_next_cap(kept, s->cap, want);
        if (cap == s->cap) return true;
    }
    if (want > DP_MAX_ROWS) return false;
    if (cap < want) cap = want;
    if (!regrow((void **)&s->ids, cap, 1, sizeof(int64_t)) || !regrow((void **)&s->vals, cap, row_vals(s), sizeof(double)) ||
        !regrow((void **)&s->dels, cap, row_dels(s), sizeof(double)))
        return false;
    s->cap = cap;
    return true;
}

/* The group learnt its shape after rows whose arrays were NULL: those rows had no storage and are NaN (the
 * public rule: the lowest score, δ = Δ). Called with the strides from before the shape changed. */
static bool restride(agg_state *s, int64_t old_vals, int64_t old_dels) {
    if (row_vals(s) != old_vals && s->cap > 0) {
        if (!regrow((void **)&s->vals, s->cap, row_vals(s), sizeof(double))) return false;
        dp_fill_nan(s->vals, s->n * row_vals(s));
    }
    if (row_dels(s) != old_dels && s->cap > 0) {
        if (!regrow((void **)&s->dels, s->cap, row_dels(s), sizeof(double))) return false;
        dp_fill_nan(s->dels, s->n * row_dels(s));
    }
    return true;
}

static void report(sqlite3_context *ctx, const dp_error *err) {
    if (err->cls == DP_ERR_NOMEM) sqlite3_result_error_nomem(ctx);
    else sqlite3_result_error(ctx, err->msg, -1);
}

static void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    fn_data *fd = sqlite3_user_data(ctx);
    agg_state *s = sqlite3_aggregate_context(ctx, (int)sizeof(agg_state));
    sq_reader rd;
    dp_reader reader = {&rd, argc, sq_type, sq_number, sq_integer, sq_array, sq_text, true};
    dp_params row;
    dp_error err;
    int64_t id = 0;

    if (s == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (s->failed) return;
    memset(&rd, 0, sizeof rd);
    rd.f = fd->f;
    rd.argv = argv;
    if (argc > MAX_ARGS) {
        dp_fail(&err, DP_ERR_ARGUMENT, -1, "%s: too many arguments", fd->f->name);
        goto fail;
    }
    if (dp_read_params(fd->f, fd->index, &reader, &row, &err) != DP_OK) goto fail;
    if (!s->init) {
        s->init = true;
        s->p = row;
    } else {
        int64_t old_vals = row_vals(s), old_dels = row_dels(s);
        if (dp_params_merge(fd->f, &s->p, &row, &err) != DP_OK) goto fail;
        if (!restride(s, old_vals, old_dels)) {
            dp_fail(&err, DP_ERR_NOMEM, -1, "%s: out of memory", fd->f->name);
            goto fail;
        }
    }
    if (dp_row_dropped(fd->f, &reader)) { /* an event with a NULL unit or item: dropped (the public rule) */
        reader_free(&rd);
        return;
    }
    if (!grow(s, s->n + 1)) {
        dp_fail(&err, s->n + 1 > DP_MAX_ROWS ? DP_ERR_ARGUMENT : DP_ERR_NOMEM, -1,
                "%s: a group has more than %lld candidates", fd->f->name, (long long)DP_MAX_ROWS);
        goto fail;
    }
    if (dp_read_row(fd->f, &s->p, &reader, &id, row_vals(s) ? s->vals + s->n * row_vals(s) : NULL,
                    row_dels(s) ? s->dels + s->n * row_dels(s) : NULL, &err) != DP_OK)
        goto fail;
    s->ids[s->n++] = id;
    reader_free(&rd);
    return;
fail:
    reader_free(&rd);
    s->failed = true;
    report(ctx, &err);
}

static void *sq_alloc(void *ctx, size_t bytes) {
    (void)ctx;
    return sqlite3_malloc64((sqlite3_uint64)bytes);
}
static void sq_free(void *ctx, void *p) {
    (void)ctx;
    sqlite3_free(p);
}

/* Charges the connection's ledger; on failure reports the error (nothing charged) and returns false. */
static bool charge(sqlite3_context *ctx, conn_state *c, const dp_params *p) {
    const char *name = dp_functions[p->function].name;
    char why[300], mech[DP_LEDGER_NAME], msg[DP_MSG_LEN];
    double left = 0, dleft = 0;
    if (!c->has_ledger) {
        dp_error err;
        dp_fail(&err, DP_ERR_ARGUMENT, -1,
                "%s: no privacy ledger is attached to this connection (the host program attaches one: see the README)",
                name);
        report(ctx, &err);
        return false;
    }
    dp_mechanism_label(p, mech, sizeof mech);
    sq_result res = sq_ledger_charge(&c->ledger, p->epsilon, p->delta, mech, &left, &dleft, why, sizeof why);
    switch (res) {
    case SQ_OK:
        return true;
    case SQ_NO_FILE:
    case SQ_NO_BUDGET: { /* the ledger's path is the host's business: not in a message that SQL shows */
        char *m = sqlite3_mprintf(
            "%s: no privacy budget has been granted in this connection's ledger (the host program grants one)", name);
        sqlite3_result_error(ctx, m ? m : "out of memory", -1);
        sqlite3_free(m);
        return false;
    }
    case SQ_EXHAUSTED:
    case SQ_NO_DELTA:
        dp_budget_refusal(msg, sizeof msg, name, res == SQ_NO_DELTA, p->epsilon, p->delta, left, dleft);
        sqlite3_result_error(ctx, msg, -1);
        return false;
    default: {
        char *m = sqlite3_mprintf("%s: %s; nothing was charged", name, why);
        sqlite3_result_error(ctx, m ? m : "out of memory", -1);
        sqlite3_free(m);
        return false;
    }
    }
}

/*
 * Pay what you get (dp_discover_top_k), after a successful run: settles the charge at what the run spent
 * (dp_ledger.h: a refund record, only while the charge is the ledger's last record). Any failure here
 * leaves the full charge (the safe side) and does not hold back the result it paid for.
 */
static void refund_unspent(conn_state *c, const dp_params *p, const dp_discovery *d) {
    double epsilon, delta;
    bool refunded;
    char why[300];
    if (dp_discover_refund_due(p, d, &epsilon, &delta))
        (void)sq_ledger_refund(&c->ledger, epsilon, delta, &refunded, why, sizeof why);
}

/* Writes ids[0..n) as a JSON array of integers (subtype JSON) as the result. */
static void result_ids(sqlite3_context *ctx, const int64_t *ids, int64_t n) {
    sqlite3_str *js = sqlite3_str_new(NULL);
    sqlite3_str_appendchar(js, 1, '[');
    for (int64_t i = 0; i < n; i++) sqlite3_str_appendf(js, i ? ",%lld" : "%lld", (long long)ids[i]);
    sqlite3_str_appendchar(js, 1, ']');
    int len = sqlite3_str_length(js);
    if (sqlite3_str_errcode(js) != SQLITE_OK) {
        sqlite3_free(sqlite3_str_finish(js));
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, sqlite3_str_finish(js), len, sqlite3_free);
    sqlite3_result_subtype(ctx, JSON_SUBTYPE);
}

/* The discovery functions: checks and allocation, the charge of (epsilon, delta), the release. */
static void discover_final(sqlite3_context *ctx, fn_data *fd, agg_state *s) {
    dp_discovery d;
    dp_error err;
    dpmo_rng *rng = NULL;
    if (dp_discover_prepare(&s->p, s->n, s->ids, s->vals, &SQ_ALLOC, &d, &err) != DP_OK) {
        report(ctx, &err);
        return;
    }
    dpmo_status rs = conn_rng(fd->conn, &rng); /* keyed here first when this process forked: before the charge */
    if (rs != DPMO_OK) {
        dp_fail(&err, DP_ERR_INTERNAL, (int)rs, "%s: cannot key the generator: %s; nothing was charged", fd->f->name,
                dpmo_status_message((uint32_t)rs));
        report(ctx, &err);
    } else if (charge(ctx, fd->conn, &s->p)) {
        if (dp_discover_run(&s->p, &d, rng, &err) != DP_OK) {
            report(ctx, &err);
        } else {
            refund_unspent(fd->conn, &s->p, &d);
            result_ids(ctx, (const int64_t *)d.out, (int64_t)d.count);
        }
    }
    dp_discover_free(&d, &SQ_ALLOC);
}

static void agg_final(sqlite3_context *ctx) {
    fn_data *fd = sqlite3_user_data(ctx);
    agg_state *s = sqlite3_aggregate_context(ctx, 0);
    dp_group g;
    dp_error err;
    int64_t *picks = NULL;
    dpmo_rng *rng = NULL;

    memset(&g, 0, sizeof g);
    if (s != NULL && s->failed) goto done; /* xStep reported the error */
    if (s == NULL || !s->init || (s->n == 0 && !dp_is_discovery(fd->f))) {
        dp_fail(&err, DP_ERR_ARGUMENT, DPMO_EMPTY_INPUT, "%s: the group has no rows", fd->f->name);
        report(ctx, &err);
        goto done;
    }
    if (dp_is_discovery(fd->f)) { /* rows are events; every one dropped (NULL) is an empty dataset */
        discover_final(ctx, fd, s);
        goto done;
    }
    {
        /* A shape never seen (every row NULL): m = 1, width 1, every value NaN. */
        int64_t old_vals = row_vals(s), old_dels = row_dels(s);
        dp_params_settle(&s->p);
        if (!restride(s, old_vals, old_dels)) {
            sqlite3_result_error_nomem(ctx);
            goto done;
        }
    }
    if (dp_group_prepare(&s->p, s->n, s->ids, s->vals, s->dels, &SQ_ALLOC, &g, &err) != DP_OK) {
        report(ctx, &err);
        goto done;
    }
    dpmo_status rs = conn_rng(fd->conn, &rng); /* keyed here first when this process forked: before the charge */
    if (rs != DPMO_OK) {
        dp_fail(&err, DP_ERR_INTERNAL, (int)rs, "%s: cannot key the generator: %s; nothing was charged", fd->f->name,
                dpmo_status_message((uint32_t)rs));
        report(ctx, &err);
        goto done;
    }
    if (!charge(ctx, fd->conn, &s->p)) goto done;
    picks = sqlite3_malloc64((sqlite3_uint64)s->p.k * sizeof(int64_t));
    if (picks == NULL) {
        sqlite3_result_error_nomem(ctx);
        goto done;
    }
    if (dp_group_run(&s->p, &g, rng, &SQ_ALLOC, picks, &err) != DP_OK) {
        report(ctx, &err);
        goto done;
    }
    if (!fd->f->top_k) {
        sqlite3_result_int64(ctx, g.ids[picks[0]]);
    } else {
        for (int64_t i = 0; i < s->p.k; i++) picks[i] = g.ids[picks[i]];
        result_ids(ctx, picks, s->p.k);
    }
done:
    sqlite3_free(picks);
    dp_group_free(&g, &SQ_ALLOC);
    agg_free(s);
}

/* ------------------------------------------------------------------------------------------------ */
/* Scalars: dp_budget_remaining(), dp_version(), dp_array(...).                                       */

/* dp_budget_remaining() and dp_budget_remaining_delta(): the ε and the δ left (0 without ledger or grant). */
static void budget_remaining(sqlite3_context *ctx, bool delta) {
    conn_state *c = sqlite3_user_data(ctx);
    double left = 0, total = 0, dleft = 0, dtotal = 0;
    char why[300];
    if (c->has_ledger) {
        sq_result r = sq_ledger_remaining(&c->ledger, &left, &total, &dleft, &dtotal, why, sizeof why);
        if (r == SQ_FAILED) {
            char *m = sqlite3_mprintf("%s: %s", delta ? "dp_budget_remaining_delta" : "dp_budget_remaining", why);
            sqlite3_result_error(ctx, m ? m : "out of memory", -1);
            sqlite3_free(m);
            return;
        }
    }
    sqlite3_result_double(ctx, delta ? dleft : left);
}

static void fn_budget_remaining(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    (void)argv;
    budget_remaining(ctx, false);
}

static void fn_budget_remaining_delta(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    (void)argv;
    budget_remaining(ctx, true);
}

static void fn_version(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    (void)argv;
    sqlite3_result_text(ctx, dpmo_version(), -1, SQLITE_STATIC);
}

/* dp_array(x, ...): a JSON array of numbers (17 significant digits, exact), NULLs and nested arrays. */
static void fn_array(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    sqlite3_str *js = sqlite3_str_new(NULL);
    char num[40];
    sqlite3_str_appendchar(js, 1, '[');
    for (int i = 0; i < argc; i++) {
        if (i) sqlite3_str_appendchar(js, 1, ',');
        switch (sqlite3_value_type(argv[i])) {
        case SQLITE_NULL:
            sqlite3_str_appendall(js, "null");
            break;
        case SQLITE_INTEGER:
            sqlite3_str_appendf(js, "%lld", (long long)sqlite3_value_int64(argv[i]));
            break;
        case SQLITE_FLOAT: {
            double x = sqlite3_value_double(argv[i]);
            if (isfinite(x)) snprintf(num, sizeof num, "%.17g", x);
            else snprintf(num, sizeof num, "%s", x > 0 ? "Infinity" : "-Infinity");
            sqlite3_str_appendall(js, num);
            break;
        }
        case SQLITE_TEXT: {
            num_buf b = {NULL, 0, 0};
            int nd;
            int64_t dims[2];
            bool has_null;
            const char *t = (const char *)sqlite3_value_text(argv[i]);
            int rc = parse_json_array(t, &b, &nd, dims, &has_null);
            sqlite3_free(b.v);
            if (rc == 0 && nd <= 1) {
                sqlite3_str_appendall(js, t);
                break;
            }
            if (rc == -2) {
                sqlite3_free(sqlite3_str_finish(js));
                sqlite3_result_error_nomem(ctx);
                return;
            }
        } /* fall through */
        default:
            sqlite3_free(sqlite3_str_finish(js));
            sqlite3_result_error(ctx, "dp_array: every argument must be a number, NULL or a one-dimensional array", -1);
            return;
        }
    }
    sqlite3_str_appendchar(js, 1, ']');
    int len = sqlite3_str_length(js);
    if (sqlite3_str_errcode(js) != SQLITE_OK) {
        sqlite3_free(sqlite3_str_finish(js));
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, sqlite3_str_finish(js), len, sqlite3_free);
    sqlite3_result_subtype(ctx, JSON_SUBTYPE);
}

/* ------------------------------------------------------------------------------------------------ */
/* Registration and the host's entry points.                                                          */

static char *dup_msg(const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

/*
 * Registers every dpmo function on db with a fresh state (ledger_path NULL: the default ledger). The ledger
 * file is created when missing (holding its create record, so that SQL cannot ATTACH it as an empty
 * database); the default one only where it can be (else it is looked for at each use).
 */
static int register_all(sqlite3 *db, const char *ledger_path, const unsigned char *seed32, char **msg) {
    char why[300];
    int rc = SQLITE_OK;
    conn_state *c = sqlite3_malloc64(sizeof *c);
    if (c == NULL) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    /* ChaCha20 from getrandom(2) (keyed now, to fail here rather than later), or from the host's test seed */
    dpmo_rng *unused;
    dpmo_status st = rng_page_new(c, seed32);
    if (st == DPMO_OK && seed32 == NULL) st = conn_rng(c, &unused);
    if (st != DPMO_OK) {
        if (c->page != NULL) munmap(c->page, c->page_len);
        sqlite3_free(c);
        if (msg) *msg = dup_msg("dpmo: %s", dpmo_status_message((uint32_t)st));
        return SQLITE_ERROR;
    }
    char *fallback = NULL;
    bool is_default = ledger_path == NULL;
    if (is_default) {
        const char *main_file = sqlite3_db_filename(db, "main");
        if (main_file != NULL && main_file[0] != '\0') fallback = sqlite3_mprintf("%s.dpmo-ledger", main_file);
        ledger_path = fallback;
    }
    if (ledger_path != NULL) {
        sq_result r = sq_ledger_open(&c->ledger, ledger_path, true, why, sizeof why);
        if (r != SQ_OK && is_default) {
            sq_ledger_close(&c->ledger);
            r = sq_ledger_open(&c->ledger, ledger_path, false, why, sizeof why);
        }
        if (r != SQ_OK) {
            if (msg) *msg = dup_msg("dpmo: %s: %s", ledger_path, why);
            sq_ledger_close(&c->ledger);
            sqlite3_free(fallback);
            munmap(c->page, c->page_len);
            sqlite3_free(c);
            return SQLITE_CANTOPEN;
        }
        c->has_ledger = true;
    }
    sqlite3_free(fallback);
    c->refs = 1; /* held by this function until registration ends */

    const int side_effects = SQLITE_UTF8 | SQLITE_DIRECTONLY; /* random, and they spend the budget */
    const int pure = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    c->refs++;
    rc = sqlite3_create_function_v2(db, "dp_budget_remaining", 0, side_effects, c, fn_budget_remaining, NULL, NULL,
                                    conn_state_release);
    if (rc == SQLITE_OK) {
        c->refs++;
        rc = sqlite3_create_function_v2(db, "dp_budget_remaining_delta", 0, side_effects, c, fn_budget_remaining_delta,
                                        NULL, NULL, conn_state_release);
    }
    if (rc == SQLITE_OK) rc = sqlite3_create_function_v2(db, "dp_version", 0, pure, NULL, fn_version, NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function_v2(db, "dp_array", -1, pure, NULL, fn_array, NULL, NULL, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < dp_function_count; i++) {
        for (int with_options = 0; rc == SQLITE_OK && with_options < 2; with_options++) {
            fn_data *d = sqlite3_malloc64(sizeof *d);
            if (d == NULL) {
                rc = SQLITE_NOMEM;
                break;
            }
            d->f = &dp_functions[i];
            d->index = (int32_t)i;
            d->conn = c;
            c->refs++;
            rc = sqlite3_create_function_v2(db, dp_functions[i].name, dp_functions[i].nargs + with_options, side_effects,
                                            d, NULL, agg_step, agg_final, fn_data_release);
        }
    }
    conn_state_release(c);
    if (rc != SQLITE_OK && msg) *msg = dup_msg("dpmo: could not register the functions (%s)", sqlite3_errstr(rc));
    return rc;
}

DP_EXPORT int dpmo_sqlite_configure(sqlite3 *db, const char *ledger_path, const unsigned char *test_seed,
                                    char **errmsg) {
    if (errmsg) *errmsg = NULL;
    if (sqlite3_api == NULL) {
        if (errmsg) *errmsg = dup_msg("dpmo: load the extension into this process (sqlite3_load_extension) first");
        return SQLITE_MISUSE;
    }
    return register_all(db, ledger_path, test_seed, errmsg);
}

DP_EXPORT int dpmo_sqlite_grant(const char *ledger_path, double epsilon, char **errmsg) {
    return dpmo_sqlite_grant_approx(ledger_path, epsilon, 0.0, errmsg);
}

DP_EXPORT int dpmo_sqlite_grant_approx(const char *ledger_path, double epsilon, double delta, char **errmsg) {
    char why[300];
    if (errmsg) *errmsg = NULL;
    if (ledger_path == NULL) {
        if (errmsg) *errmsg = dup_msg("dpmo: no ledger path");
        return SQLITE_MISUSE;
    }
    if (sq_ledger_grant(ledger_path, epsilon, delta, why, sizeof why) != SQ_OK) {
        if (errmsg) *errmsg = dup_msg("dpmo: %s: %s", ledger_path, why);
        return SQLITE_ERROR;
    }
    return SQLITE_OK;
}

DP_EXPORT int sqlite3_dpmo_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
    char *msg = NULL;
    SQLITE_EXTENSION_INIT2(pApi);
    int rc = register_all(db, NULL, NULL, &msg);
    if (rc != SQLITE_OK && pzErrMsg) *pzErrMsg = sqlite3_mprintf("%s", msg ? msg : "dpmo: cannot load");
    free(msg);
    return rc;
}
