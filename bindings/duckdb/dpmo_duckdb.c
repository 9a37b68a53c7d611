/*
 * dpmo_duckdb.c: DuckDB loadable extension over the dpmo C ABI: differentially private selection as
 * aggregates, paid for from a privacy ledger file.
 *
 *   LOAD 'bindings/duckdb/build/dpmo.duckdb_extension';     -- allow_unsigned_extensions (duckdb -unsigned)
 *   SELECT dp_select(id, 1.0, degree, 1.0) FROM nodes;
 *
 * The SQL surface (names, arguments, options, error texts) is bindings/SQL.md, implemented once for every
 * engine in bindings/common/dp_sql.c; arrays are DuckDB lists (DOUBLE[], DOUBLE[][]). Built against
 * DuckDB's stable C extension API v1.2.0 (vendor/duckdb-1.5.6/duckdb_extension.h), and loads into DuckDB 2.0
 * and later only (see engine_is_supported).
 *
 * The ledger (bindings/sqlite/ledger.c, the format of bindings/common/dp_ledger.h) is chosen by the host
 * when the extension is loaded into a database: the file named by the environment variable
 * DPMO_DUCKDB_LEDGER, else "<database file>.dpmo-ledger"; an in-memory database without the variable has
 * none. Budgets are granted by the host (build/dpmo-ledger). Nothing in SQL seeds the generator, grants, or
 * names a ledger.
 *
 * Parallel aggregation: DuckDB builds partial states in several threads and combines them. A state holds
 * the rows of its part of the group; combine copies the source's rows into the target (the source is left
 * as it was: window frames combine one state into many); finalize, once per group, sorts the rows by id,
 * charges the ledger and selects. The result depends on the set of rows only, never on how the plan split
 * them, so a parallel plan has exactly the distribution of a serial one and charges once per group.
 * Finalize runs in many threads at once: the database's generator and ledger are used under one mutex.
 */
#define _GNU_SOURCE /* MADV_WIPEONFORK, realpath */

#define DUCKDB_EXTENSION_API_VERSION_MAJOR 1
#define DUCKDB_EXTENSION_API_VERSION_MINOR 2
#define DUCKDB_EXTENSION_API_VERSION_PATCH 0
#include "duckdb_extension.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp_ledger.h"
#include "dp_sql.h"
#include "dpmo.h"
#include "ledger.h"

#define DP_EXPORT __attribute__((visibility("default")))
#define API_VERSION "v1.2.0"
#define MAX_ARGS 11 /* dp_discover_top_k_sum with k_bar */
/* Elements read from one array argument: 16 objectives of 1024 distances (a δ table row per objective). */
#define MAX_ARRAY_ELEMENTS ((idx_t)DP_MAX_OBJECTIVES * DP_MAX_DISTANCE)

/* The extension API of the DuckDB that loaded us (every DuckDB loading us in this process must be the same). */
duckdb_ext_api_v1 duckdb_ext_api;
static bool api_set;
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------------------------------------------ */
/* Per-database state: one generator and one ledger, shared by every function of the database.      */

/*
 * The generator lives in a page of its own, marked MADV_WIPEONFORK (Linux 4.14+): a forked child sees the
 * page zeroed, hence not keyed, and keys a fresh generator from the operating system before its first draw.
 * The process id is checked too, so two processes never draw from one stream.
 */
#define RNG_KEYED 0x64706d6f2d726e67ull /* "dpmo-rng" */
typedef struct rng_page {
    uint64_t keyed; /* RNG_KEYED once rng holds a key of process pid */
    pid_t pid;
    dpmo_rng rng;
} rng_page;

typedef struct dd_db {
    pthread_mutex_t lock; /* the generator and the ledger (finalize runs in several threads) */
    rng_page *page;       /* mmap'ed, page-sized */
    size_t page_len;
    bool has_ledger;
    sq_ledger ledger;
    atomic_int refs; /* one per registered function; freed by the last delete callback */
} dd_db;

static void db_unref(dd_db *db) {
    if (db == NULL || atomic_fetch_sub(&db->refs, 1) != 1) return;
    if (db->has_ledger) sq_ledger_close(&db->ledger);
    if (db->page != NULL) {
        memset(db->page, 0, sizeof *db->page);
        munmap(db->page, db->page_len);
    }
    pthread_mutex_destroy(&db->lock);
    free(db);
}

static dpmo_status rng_page_new(dd_db *db) {
    long pg = sysconf(_SC_PAGESIZE);
    size_t len = pg > 0 && (size_t)pg >= sizeof(rng_page) ? (size_t)pg : 4096;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return DPMO_INVALID_ARGUMENT;
#ifdef MADV_WIPEONFORK
#ifndef DPMO_DUCKDB_TEST_BROKEN
    (void)madvise(m, len, MADV_WIPEONFORK); /* best effort: the process id check remains */
#endif
#endif
#ifdef MADV_DONTDUMP
    (void)madvise(m, len, MADV_DONTDUMP); /* keep the key out of core dumps */
#endif
    db->page = m;
    db->page_len = len;
    return DPMO_OK;
}

/* The database's generator for this process (call with db->lock held): keyed from the OS when not keyed
 * here yet. */
static dpmo_status db_rng(dd_db *db, dpmo_rng **out) {
    rng_page *p = db->page;
    pid_t self = getpid();
#ifdef DPMO_DUCKDB_TEST_BROKEN /* a deliberately broken build for the tests: forked children share a stream */
    self = p->keyed == RNG_KEYED ? p->pid : self;
#endif
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
/* The functions: one per overload, each knowing the logical types of its arguments.                 */

typedef enum arg_type { A_BIGINT, A_DOUBLE, A_LIST, A_LIST2, A_VARCHAR } arg_type;

typedef struct dd_fn {
    const dp_function *f;
    int32_t index; /* into dp_functions */
    int nargs;     /* of this overload, options included */
    uint8_t types[MAX_ARGS];
    dd_db *db;
} dd_fn;

static void fn_delete(void *p) {
    dd_fn *fn = p;
    if (fn != NULL) {
        db_unref(fn->db);
        free(fn);
    }
}

static void db_delete(void *p) { db_unref(p); }

/* ------------------------------------------------------------------------------------------------ */
/* Reading the arguments of a row from the flat vectors of a chunk.                                   */

static bool valid(const uint64_t *v, idx_t row) { return v == NULL || ((v[row / 64] >> (row % 64)) & 1) != 0; }

typedef struct list_vec { /* a LIST vector: entries, and its child's size */
    const duckdb_list_entry *entries;
    const uint64_t *validity;
    idx_t size;
} list_vec;

typedef struct dd_reader {
    const dd_fn *fn;
    idx_t row;
    const uint64_t *validity[MAX_ARGS];
    const void *data[MAX_ARGS];
    list_vec outer[MAX_ARGS]; /* A_LIST, A_LIST2: the argument's own list */
    list_vec inner[MAX_ARGS]; /* A_LIST2: the rows */
    const double *nums[MAX_ARGS];
    const uint64_t *nums_validity[MAX_ARGS];
    /* the array read for the current row */
    bool parsed[MAX_ARGS];
    bool all_rows_null[MAX_ARGS];
    double *buf[MAX_ARGS];
    idx_t cap[MAX_ARGS];
    dp_array arr[MAX_ARGS];
    dp_error array_err[MAX_ARGS];
    dp_err_class array_cls[MAX_ARGS];
} dd_reader;

static list_vec list_of(duckdb_vector v) {
    list_vec l;
    l.entries = duckdb_vector_get_data(v);
    l.validity = duckdb_vector_get_validity(v);
    l.size = duckdb_list_vector_get_size(v);
    return l;
}

static void reader_init(dd_reader *r, const dd_fn *fn, duckdb_data_chunk chunk) {
    memset(r, 0, sizeof *r);
    r->fn = fn;
    for (int i = 0; i < fn->nargs; i++) {
        duckdb_vector v = duckdb_data_chunk_get_vector(chunk, (idx_t)i);
        r->validity[i] = duckdb_vector_get_validity(v);
        r->data[i] = duckdb_vector_get_data(v);
        if (fn->types[i] == A_LIST || fn->types[i] == A_LIST2) {
            r->outer[i] = list_of(v);
            duckdb_vector child = duckdb_list_vector_get_child(v);
            if (fn->types[i] == A_LIST2) {
                r->inner[i] = list_of(child);
                child = duckdb_list_vector_get_child(child);
            }
            r->nums[i] = duckdb_vector_get_data(child);
            r->nums_validity[i] = duckdb_vector_get_validity(child);
        }
    }
}

static void reader_row(dd_reader *r, idx_t row) {
    r->row = row;
    memset(r->parsed, 0, sizeof r->parsed);
}

static void reader_free(dd_reader *r) {
    for (int i = 0; i < MAX_ARGS; i++) free(r->buf[i]);
}

/* The list at position `at` of l: offset and length, within the child's size. */
static bool list_at(const list_vec *l, idx_t at, idx_t *off, idx_t *len) {
    duckdb_list_entry e = l->entries[at];
    if (e.offset > l->size || e.length > l->size - e.offset) return false;
    *off = e.offset;
    *len = e.length;
    return true;
}

static bool reserve(dd_reader *r, int i, idx_t n) {
    if (n <= r->cap[i]) return true;
    double *b = realloc(r->buf[i], (size_t)n * sizeof(double));
    if (b == NULL) return false;
    r->buf[i] = b;
    r->cap[i] = n;
    return true;
}

/* Copies numbers [off, off + len) of argument i's child into dst (NULL elements as NaN). */
static bool copy_nums(dd_reader *r, int i, idx_t off, idx_t len, double *dst) {
    bool has_null = false;
    for (idx_t j = 0; j < len; j++) {
        if (valid(r->nums_validity[i], off + j)) {
            dst[j] = r->nums[i][off + j];
        } else {
            dst[j] = NAN;
            has_null = true;
        }
    }
    return has_null;
}

/* Reads argument i of the current row as an array (once per row). */
static void parse_array(dd_reader *r, int i) {
    const char *name = r->fn->f->name;
    dp_array *a = &r->arr[i];
    idx_t off, len;
    r->parsed[i] = true;
    r->array_cls[i] = DP_OK;
    r->all_rows_null[i] = false;
    memset(a, 0, sizeof *a);
    if (!list_at(&r->outer[i], r->row, &off, &len)) goto bad;
    if (r->fn->types[i] == A_LIST) {
        if (len > MAX_ARRAY_ELEMENTS) goto too_long;
        if (!reserve(r, i, len ? len : 1)) goto nomem;
        a->has_null = copy_nums(r, i, off, len, r->buf[i]);
        a->ndim = len ? 1 : 0;
        a->dims[0] = (int64_t)len;
        a->len = (int64_t)len;
        a->vals = r->buf[i];
        return;
    }
    /* Two dimensions: rows of one width; a NULL row is a row of NULLs (data), unless every row is NULL (then
     * the width is unknown: the argument counts as NULL). */
    idx_t width = 0, rows = len;
    bool known = false;
    for (idx_t j = 0; j < rows; j++) {
        idx_t o, l;
        if (!valid(r->inner[i].validity, off + j)) continue;
        if (!list_at(&r->inner[i], off + j, &o, &l)) goto bad;
        if (known && l != width) {
            r->array_cls[i] = dp_fail(&r->array_err[i], DP_ERR_ARGUMENT, -1,
                                      "%s: the rows of a two-dimensional array must have one length", name);
            return;
        }
        width = l;
        known = true;
    }
    if (!known) {
        r->all_rows_null[i] = rows > 0;
        width = 0;
    }
    if (rows > MAX_ARRAY_ELEMENTS || (width > 0 && rows > MAX_ARRAY_ELEMENTS / width)) goto too_long;
    if (!reserve(r, i, rows * width > 0 ? rows * width : 1)) goto nomem;
    for (idx_t j = 0; j < rows; j++) {
        idx_t o, l;
        double *dst = r->buf[i] + j * width;
        if (!valid(r->inner[i].validity, off + j)) {
            for (idx_t c = 0; c < width; c++) dst[c] = NAN;
            a->has_null = a->has_null || width > 0;
            continue;
        }
        if (!list_at(&r->inner[i], off + j, &o, &l)) goto bad;
        if (copy_nums(r, i, o, width, dst)) a->has_null = true;
    }
    a->ndim = rows ? 2 : 0;
    a->dims[0] = (int64_t)rows;
    a->dims[1] = (int64_t)width;
    a->len = (int64_t)(rows * width);
    a->vals = r->buf[i];
    return;
bad: /* cannot happen with DuckDB's vectors; never read out of bounds */
    r->array_cls[i] = dp_fail(&r->array_err[i], DP_ERR_INTERNAL, -1, "%s: a list vector is malformed", name);
    return;
too_long:
    r->array_cls[i] = dp_fail(&r->array_err[i], DP_ERR_ARGUMENT, -1, "%s: an array argument has more than %llu elements",
                              name, (unsigned long long)MAX_ARRAY_ELEMENTS);
    return;
nomem:
    r->array_cls[i] = dp_fail(&r->array_err[i], DP_ERR_NOMEM, -1, "%s: out of memory", name);
}

static dp_arg_type rd_type(void *ctx, int i) {
    dd_reader *r = ctx;
    if (!valid(r->validity[i], r->row)) return DP_ARG_NULL;
    switch (r->fn->types[i]) {
    case A_BIGINT:
    case A_DOUBLE:
        return DP_ARG_NUMBER;
    case A_LIST:
        return DP_ARG_ARRAY;
    case A_LIST2:
        if (!r->parsed[i]) parse_array(r, i);
        return r->array_cls[i] == DP_OK && r->all_rows_null[i] ? DP_ARG_NULL : DP_ARG_ARRAY;
    case A_VARCHAR:
        return DP_ARG_TEXT;
    default:
        return DP_ARG_OTHER;
    }
}

static double rd_number(void *ctx, int i) {
    dd_reader *r = ctx;
    if (r->fn->types[i] == A_BIGINT) return (double)((const int64_t *)r->data[i])[r->row];
    return ((const double *)r->data[i])[r->row];
}

static bool rd_integer(void *ctx, int i, int64_t *out) {
    dd_reader *r = ctx;
    if (r->fn->types[i] != A_BIGINT) return false;
    *out = ((const int64_t *)r->data[i])[r->row];
    return true;
}

static dp_err_class rd_array(void *ctx, int i, dp_array *out, dp_error *err) {
    dd_reader *r = ctx;
    if (!r->parsed[i]) parse_array(r, i);
    if (r->array_cls[i] != DP_OK) {
        *err = r->array_err[i];
        return err->cls;
    }
    *out = r->arr[i];
    return DP_OK;
}

static const char *rd_text(void *ctx, int i, size_t *len) {
    dd_reader *r = ctx;
    duckdb_string_t *s = (duckdb_string_t *)r->data[i] + r->row;
    *len = duckdb_string_t_length(*s);
    return duckdb_string_t_data(s);
}

/* ------------------------------------------------------------------------------------------------ */
/* The aggregate state: one pointer to the rows of (a part of) a group.                              */

typedef struct dd_rows {
    bool init;
    dp_params p;
    int64_t n, cap;
    int64_t *ids;
    double *vals; /* n · m */
    double *dels; /* n · m · width */
} dd_rows;

typedef struct dd_state {
    dd_rows *rows;
} dd_state;

/* Doubles per row: 0 while the group does not know its shape (dp_row_vals; those rows are NaN). */
static int64_t row_vals(const dd_rows *s) { return dp_row_vals(&s->p); }
static int64_t row_dels(const dd_rows *s) { return dp_row_dels(&s->p); }

static bool regrow(void **p, int64_t count, int64_t per, size_t size) {
    if (per == 0) return true;
    if ((uint64_t)count > (uint64_t)INT64_MAX / ((uint64_t)per * size) || (uint64_t)(count * per) > SIZE_MAX / size)
        return false;
    void *q = realloc(*p, (size_t)(count * per) * size);
    if (q == NULL) return false;
    *p = q;
    return true;
}

/* The group learnt its shape after rows whose arrays were NULL: those rows had no storage and are NaN (the
 * public rule: the lowest score, δ = Δ). Called with the strides from before the shape changed. */
static bool restride(dd_rows *s, int64_t old_vals, int64_t old_dels) {
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

static void *dd_alloc(void *ctx, size_t bytes) {
    (void)ctx;
    return malloc(bytes ? bytes : 1);
}
static void dd_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}
static const dp_alloc DD_ALLOC = {NULL, dd_alloc, dd_free};

/* Room for `want` rows: DP_ERR_ARGUMENT beyond DP_MAX_ROWS, DP_ERR_NOMEM when out of memory. */
static dp_err_class grow(const dp_function *f, dd_rows *s, int64_t want, dp_error *err) {
    if (want <= s->cap) return DP_OK;
    if (dp_is_discovery(f) && s->cap >= 64 && s->n > 0) {
        /* a full discovery buffer is compacted first (bounded memory: dp_discover_compact) */
        int64_t kept, extra = want - s->n;
        if (dp_discover_compact(&s->p, s->n, s->ids, s->vals, &DD_ALLOC, &kept, err) != DP_OK) return err->cls;
        s->n = kept;
        want = kept + extra;
        if (dp_discover_next_cap(kept, s->cap, want) == s->cap) return DP_OK;
    }
    if (want > DP_MAX_ROWS)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: a group has more than %lld candidates", f->name,
                       (long long)DP_MAX_ROWS);
    int64_t cap = s->cap ? 2 * s->cap : 4; /* small: a parallel plan holds a partial state per group and thread */
    if (cap < want) cap = want;
    if (cap > DP_MAX_ROWS) cap = DP_MAX_ROWS;
    if (!regrow((void **)&s->ids, cap, 1, sizeof(int64_t)) ||
        !regrow((void **)&s->vals, cap, row_vals(s), sizeof(double)) ||
        !regrow((void **)&s->dels, cap, row_dels(s), sizeof(double)))
        return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory for %lld candidates", f->name, (long long)want);
    s->cap = cap;
    return DP_OK;
}

static void rows_free(dd_rows *s) {
    if (s == NULL) return;
    free(s->ids);
    free(s->vals);
    free(s->dels);
    free(s);
}

static void report(duckdb_function_info info, const dp_error *err) {
    duckdb_aggregate_function_set_error(info, err->msg);
}

static idx_t agg_state_size(duckdb_function_info info) {
    (void)info;
    return sizeof(dd_state);
}

static void agg_init(duckdb_function_info info, duckdb_aggregate_state state) {
    (void)info;
    ((dd_state *)(void *)state)->rows = NULL;
}

static void agg_destroy(duckdb_aggregate_state *states, idx_t count) {
    for (idx_t i = 0; i < count; i++) {
        dd_state *st = (dd_state *)(void *)states[i];
        rows_free(st->rows);
        st->rows = NULL;
    }
}

/* One row into the state (as SQLite's xStep does). */
static dp_err_class add_row(const dd_fn *fn, dd_state *st, const dp_reader *r, dp_error *err) {
    const dp_function *f = fn->f;
    dp_params row;
    int64_t id = 0;
    if (dp_read_params(f, fn->index, r, &row, err) != DP_OK) return err->cls;
    dd_rows *s = st->rows;
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory", f->name);
        st->rows = s;
    }
    if (!s->init) {
        s->init = true;
        s->p = row;
    } else {
        int64_t old_vals = row_vals(s), old_dels = row_dels(s);
        if (dp_params_merge(f, &s->p, &row, err) != DP_OK) return err->cls;
        if (!restride(s, old_vals, old_dels)) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory", f->name);
    }
    if (dp_row_dropped(f, r)) return DP_OK; /* an event with a NULL unit or item: dropped (the public rule) */
    if (grow(f, s, s->n + 1, err) != DP_OK) return err->cls;
    if (dp_read_row(f, &s->p, r, &id, row_vals(s) ? s->vals + s->n * row_vals(s) : NULL,
                    row_dels(s) ? s->dels + s->n * row_dels(s) : NULL, err) != DP_OK)
        return err->cls;
    s->ids[s->n++] = id;
    return DP_OK;
}

static void agg_update(duckdb_function_info info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
    const dd_fn *fn = duckdb_aggregate_function_get_extra_info(info);
    dd_reader rd;
    dp_reader reader = {&rd, fn->nargs, rd_type, rd_number, rd_integer, rd_array, rd_text, false};
    dp_error err;
    idx_t n = duckdb_data_chunk_get_size(input);
    if (duckdb_data_chunk_get_column_count(input) != (idx_t)fn->nargs) {
        dp_fail(&err, DP_ERR_INTERNAL, -1, "%s: unexpected number of arguments", fn->f->name);
        report(info, &err);
        return;
    }
    reader_init(&rd, fn, input);
    for (idx_t row = 0; row < n; row++) {
        reader_row(&rd, row);
        if (add_row(fn, (dd_state *)(void *)states[row], &reader, &err) != DP_OK) {
            report(info, &err);
            break;
        }
    }
    reader_free(&rd);
}

/* Adds the rows of src to dst; src is left as it was. */
static dp_err_class combine_rows(const dp_function *f, dd_state *target, const dd_rows *src, dp_error *err) {
    /* a part without rows exists only for discovery (every event dropped): its constants make the group */
    if (src == NULL || !src->init || (src->n == 0 && !dp_is_discovery(f))) return DP_OK;
    dd_rows *dst = target->rows;
    if (dst == NULL) {
        dst = calloc(1, sizeof *dst);
        if (dst == NULL) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory", f->name);
        target->rows = dst;
    }
    if (!dst->init) {
        dst->init = true;
        dst->p = src->p;
    } else {
        int64_t old_vals = row_vals(dst), old_dels = row_dels(dst);
        if (dp_params_merge(f, &dst->p, &src->p, err) != DP_OK) return err->cls;
        if (!restride(dst, old_vals, old_dels)) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory", f->name);
    }
    if (src->n == 0) return DP_OK;
#ifdef DPMO_DUCKDB_TEST_BROKEN /* a deliberately broken build for the tests: a second partial state is lost */
    if (dst->n > 0) return DP_OK;
#endif
    if (src->n > DP_MAX_ROWS - dst->n)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: a group has more than %lld candidates", f->name,
                       (long long)DP_MAX_ROWS);
    if (grow(f, dst, dst->n + src->n, err) != DP_OK) return err->cls;
    memcpy(dst->ids + dst->n, src->ids, (size_t)src->n * sizeof(int64_t));
    int64_t v = row_vals(dst), d = row_dels(dst);
    /* src's strides are dst's or 0 (src never saw the shape: its rows are NaN) */
    if (v > 0) {
        if (row_vals(src) == v) memcpy(dst->vals + dst->n * v, src->vals, (size_t)(src->n * v) * sizeof(double));
        else dp_fill_nan(dst->vals + dst->n * v, src->n * v);
    }
    if (d > 0) {
        if (row_dels(src) == d) memcpy(dst->dels + dst->n * d, src->dels, (size_t)(src->n * d) * sizeof(double));
        else dp_fill_nan(dst->dels + dst->n * d, src->n * d);
    }
    dst->n += src->n;
    return DP_OK;
}

static void agg_combine(duckdb_function_info info, duckdb_aggregate_state *source, duckdb_aggregate_state *target,
                        idx_t count) {
    const dd_fn *fn = duckdb_aggregate_function_get_extra_info(info);
    dp_error err;
    for (idx_t i = 0; i < count; i++) {
        const dd_rows *src = ((dd_state *)(void *)source[i])->rows;
        if (combine_rows(fn->f, (dd_state *)(void *)target[i], src, &err) != DP_OK) {
            report(info, &err);
            return;
        }
    }
}


/* Charges the database's ledger (db->lock held); on failure formats the error (nothing charged). */
static bool charge(dd_db *db, const dp_params *p, dp_error *err) {
    const char *name = dp_functions[p->function].name;
    char why[300], mech[DP_LEDGER_NAME], msg[DP_MSG_LEN];
    double left = 0, dleft = 0;
    if (!db->has_ledger) {
        dp_fail(err, DP_ERR_ARGUMENT, -1,
                "%s: no privacy ledger is attached to this database (the host program attaches one: see the README)",
                name);
        return false;
    }
    dp_mechanism_label(p, mech, sizeof mech);
    sq_result res = sq_ledger_charge(&db->ledger, p->epsilon, p->delta, mech, &left, &dleft, why, sizeof why);
    switch (res) {
    case SQ_OK:
        return true;
    case SQ_NO_FILE:
    case SQ_NO_BUDGET: /* the ledger's path is the host's business: not in a message that SQL shows */
        dp_fail(err, DP_ERR_ARGUMENT, -1,
                "%s: no privacy budget has been granted in this database's ledger (the host program grants one)", name);
        return false;
    case SQ_EXHAUSTED:
    case SQ_NO_DELTA:
        dp_budget_refusal(msg, sizeof msg, name, res == SQ_NO_DELTA, p->epsilon, p->delta, left, dleft);
        dp_fail(err, DP_ERR_ARGUMENT, -1, "%s", msg);
        return false;
    default:
        dp_fail(err, DP_ERR_INTERNAL, -1, "%s: %s; nothing was charged", name, why);
        return false;
    }
}

/*
 * Pay what you get (dp_discover_top_k), after a successful run (db->lock held): settles the charge at what
 * the run spent (dp_ledger.h: a refund record, only while the charge is the ledger's last record). Any
 * failure here leaves the full charge (the safe side) and does not hold back the result it paid for.
 */
static void refund_unspent(dd_db *db, const dp_params *p, const dp_discovery *d) {
    double epsilon, delta;
    bool refunded;
    char why[300];
    if (dp_discover_refund_due(p, d, &epsilon, &delta))
        (void)sq_ledger_refund(&db->ledger, epsilon, delta, &refunded, why, sizeof why);
}

/* Selects from one finished group: the k chosen ids into out[0..k). */
static dp_err_class select_group(const dd_fn *fn, const dd_rows *s, int64_t *out, dp_error *err) {
    const dp_function *f = fn->f;
    dd_db *db = fn->db;
    dp_group g;
    dpmo_rng *rng = NULL;
    int64_t *picks = NULL;
    dp_err_class cls;
    if (s == NULL || !s->init || s->n == 0)
        return dp_fail(err, DP_ERR_ARGUMENT, DPMO_EMPTY_INPUT, "%s: the group has no rows", f->name);
    /* public checks before the charge: empty group, k <= n, unique ids (and the rows sorted by id) */
    /* A shape never seen (every row NULL): m = 1, width 1, every value NaN. The state stays as it is. */
    dp_params p = s->p;
    const double *vals = s->vals, *dels = s->dels;
    double *own_vals = NULL, *own_dels = NULL;
    dp_params_settle(&p);
    if (dp_row_vals(&p) != row_vals(s) || dp_row_dels(&p) != row_dels(s)) {
        if (dp_row_vals(&p) != row_vals(s)) vals = own_vals = calloc((size_t)(s->n * dp_row_vals(&p)), sizeof(double));
        if (dp_row_dels(&p) != row_dels(s)) dels = own_dels = calloc((size_t)(s->n * dp_row_dels(&p)), sizeof(double));
        if ((dp_row_vals(&p) != row_vals(s) && own_vals == NULL) || (dp_row_dels(&p) != row_dels(s) && own_dels == NULL)) {
            free(own_vals);
            free(own_dels);
            return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory; nothing was charged", f->name);
        }
        if (own_vals) dp_fill_nan(own_vals, s->n * dp_row_vals(&p));
        if (own_dels) dp_fill_nan(own_dels, s->n * dp_row_dels(&p));
    }
    cls = dp_group_prepare(&p, s->n, s->ids, vals, dels, &DD_ALLOC, &g, err);
    free(own_vals);
    free(own_dels);
    if (cls != DP_OK) return cls;
    picks = malloc((size_t)s->p.k * sizeof(int64_t));
    if (picks == NULL) {
        dp_group_free(&g, &DD_ALLOC);
        return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory; nothing was charged", f->name);
    }
    pthread_mutex_lock(&db->lock);
    dpmo_status rs = db_rng(db, &rng); /* keyed here first when this process forked: before the charge */
    if (rs != DPMO_OK)
        cls = dp_fail(err, DP_ERR_INTERNAL, (int)rs, "%s: cannot key the generator: %s; nothing was charged", f->name,
                      dpmo_status_message((uint32_t)rs));
    else if (!charge(db, &p, err))
        cls = err->cls;
    else
        cls = dp_group_run(&p, &g, rng, &DD_ALLOC, picks, err);
    pthread_mutex_unlock(&db->lock);
    if (cls == DP_OK)
        for (int64_t i = 0; i < s->p.k; i++) out[i] = g.ids[picks[i]];
    free(picks);
    dp_group_free(&g, &DD_ALLOC);
    return cls;
}

/* A discovery group: checks and allocation, the charge of (epsilon, delta), the release into *d. */
static dp_err_class discover_group(const dd_fn *fn, const dd_rows *s, dp_discovery *d, dp_error *err) {
    dd_db *db = fn->db;
    dpmo_rng *rng = NULL;
    dp_err_class cls;
    if (s == NULL || !s->init)
        return dp_fail(err, DP_ERR_ARGUMENT, DPMO_EMPTY_INPUT, "%s: the group has no rows", fn->f->name);
    /* s->n = 0 (every event dropped) is an empty dataset: charged, nothing released */
    if (dp_discover_prepare(&s->p, s->n, s->ids, s->vals, &DD_ALLOC, d, err) != DP_OK) return err->cls;
    pthread_mutex_lock(&db->lock);
    dpmo_status rs = db_rng(db, &rng); /* keyed here first when this process forked: before the charge */
    if (rs != DPMO_OK)
        cls = dp_fail(err, DP_ERR_INTERNAL, (int)rs, "%s: cannot key the generator: %s; nothing was charged",
                      fn->f->name, dpmo_status_message((uint32_t)rs));
    else if (!charge(db, &s->p, err))
        cls = err->cls;
    else if ((cls = dp_discover_run(&s->p, d, rng, err)) == DP_OK)
        refund_unspent(db, &s->p, d);
    pthread_mutex_unlock(&db->lock);
    if (cls != DP_OK) dp_discover_free(d, &DD_ALLOC);
    return cls;
}

static void discover_finalize(const dd_fn *fn, duckdb_function_info info, duckdb_aggregate_state *source,
                              duckdb_vector result, idx_t count, idx_t offset) {
    dp_error err;
    for (idx_t i = 0; i < count; i++) {
        dp_discovery d;
        if (discover_group(fn, ((dd_state *)(void *)source[i])->rows, &d, &err) != DP_OK) {
            report(info, &err);
            return;
        }
        idx_t base = duckdb_list_vector_get_size(result);
        if (duckdb_list_vector_reserve(result, base + (idx_t)d.count) != DuckDBSuccess) {
            dp_discover_free(&d, &DD_ALLOC);
            dp_fail(&err, DP_ERR_NOMEM, -1, "%s: out of memory for the result (epsilon and delta were charged)",
                    fn->f->name);
            report(info, &err);
            return;
        }
        int64_t *out = (int64_t *)duckdb_vector_get_data(duckdb_list_vector_get_child(result)) + base;
        for (size_t j = 0; j < d.count; j++) out[j] = (int64_t)d.out[j];
        duckdb_list_entry *entries = duckdb_vector_get_data(result);
        entries[offset + i].offset = base;
        entries[offset + i].length = (uint64_t)d.count;
        duckdb_list_vector_set_size(result, base + (idx_t)d.count);
        dp_discover_free(&d, &DD_ALLOC);
    }
}

static void agg_finalize(duckdb_function_info info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
                         idx_t offset) {
    const dd_fn *fn = duckdb_aggregate_function_get_extra_info(info);
    dp_error err;
    if (dp_is_discovery(fn->f)) {
        discover_finalize(fn, info, source, result, count, offset);
        return;
    }
    for (idx_t i = 0; i < count; i++) {
        const dd_rows *s = ((dd_state *)(void *)source[i])->rows;
        int64_t k = s != NULL && s->init ? s->p.k : 1;
        int64_t one;
        int64_t *out = &one;
        idx_t base = 0;
        if (fn->f->top_k) {
            /* the k ids go to the list's child vector, at its end */
            base = duckdb_list_vector_get_size(result);
            if (duckdb_list_vector_reserve(result, base + (idx_t)k) != DuckDBSuccess) {
                dp_fail(&err, DP_ERR_NOMEM, -1, "%s: out of memory; nothing was charged", fn->f->name);
                report(info, &err);
                return;
            }
            out = (int64_t *)duckdb_vector_get_data(duckdb_list_vector_get_child(result)) + base;
        }
        if (select_group(fn, s, out, &err) != DP_OK) {
            report(info, &err);
            return;
        }
        if (fn->f->top_k) {
            duckdb_list_entry *entries = duckdb_vector_get_data(result);
            entries[offset + i].offset = base;
            entries[offset + i].length = (uint64_t)k;
            duckdb_list_vector_set_size(result, base + (idx_t)k);
        } else {
            ((int64_t *)duckdb_vector_get_data(result))[offset + i] = one;
        }
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Scalars: dp_budget_remaining(), dp_budget_remaining_delta(), dp_version().                           */

/* The ε (or δ) left: 0 without ledger or grant. */
static void budget_remaining(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output, bool delta) {
    dd_db *db = duckdb_scalar_function_get_extra_info(info);
    double left = 0, total = 0, dleft = 0, dtotal = 0;
    char why[300], msg[400];
    if (db->has_ledger) {
        pthread_mutex_lock(&db->lock);
        sq_result r = sq_ledger_remaining(&db->ledger, &left, &total, &dleft, &dtotal, why, sizeof why);
        pthread_mutex_unlock(&db->lock);
        if (r == SQ_FAILED) {
            snprintf(msg, sizeof msg, "%s: %s", delta ? "dp_budget_remaining_delta" : "dp_budget_remaining", why);
            duckdb_scalar_function_set_error(info, msg);
            return;
        }
    }
    double *out = duckdb_vector_get_data(output);
    for (idx_t i = 0, n = duckdb_data_chunk_get_size(input); i < n; i++) out[i] = delta ? dleft : left;
}

static void fn_budget_remaining(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
    budget_remaining(info, input, output, false);
}

static void fn_budget_remaining_delta(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
    budget_remaining(info, input, output, true);
}

static void fn_version(duckdb_function_info info, duckdb_data_chunk input, duckdb_vector output) {
    (void)info;
    for (idx_t i = 0, n = duckdb_data_chunk_get_size(input); i < n; i++)
        duckdb_vector_assign_string_element(output, i, dpmo_version());
}

/* ------------------------------------------------------------------------------------------------ */
/* Loading: the ledger of the database, and the registration of every function.                      */

typedef struct types {
    duckdb_logical_type bigint, dbl, varchar, list, list2, ids;
} types;

static duckdb_logical_type type_of(const types *t, arg_type a) {
    switch (a) {
    case A_BIGINT:
        return t->bigint;
    case A_DOUBLE:
        return t->dbl;
    case A_LIST:
        return t->list;
    case A_LIST2:
        return t->list2;
    default:
        return t->varchar;
    }
}

/* The type of argument i of f: delta is a number or a δ-table row, deltas an array or a table (two
 * overloads each, chosen by `alt`). */
static arg_type arg_of(const dp_function *f, int i, bool alt) {
    if (dp_is_discovery(f)) { /* unit, item, k, max_items, k_bar BIGINT; epsilon, delta DOUBLE; mechanism */
        if (i == f->epsilon || i == f->delta || i == f->value || i == f->lo || i == f->hi) return A_DOUBLE;
        return f->kind == DP_DISCOVER && i == f->nargs ? A_VARCHAR : A_BIGINT;
    }
    if (i == f->id || i == f->k) return A_BIGINT;
    if (i == f->deltas) {
        if (f->kind == DP_SELECT_LOCAL) return alt ? A_LIST : A_DOUBLE;
        return alt ? A_LIST2 : A_LIST;
    }
    if (i == f->weights || i == f->sensitivities || i == f->utilities) {
        bool arrays = f->kind != DP_SELECT && f->kind != DP_SELECT_LOCAL;
        return arrays ? A_LIST : A_DOUBLE;
    }
    if (i == f->nargs) return A_VARCHAR; /* options */
    return A_DOUBLE;                     /* epsilon */
}

static duckdb_state register_function(duckdb_connection con, dd_db *db, const types *t, size_t index) {
    const dp_function *f = &dp_functions[index];
    duckdb_aggregate_function_set set = duckdb_create_aggregate_function_set(f->name);
    duckdb_state rc = set != NULL ? DuckDBSuccess : DuckDBError;
    for (int alt = 0; rc == DuckDBSuccess && alt < (f->deltas >= 0 ? 2 : 1); alt++) {
        for (int with_options = 0; rc == DuckDBSuccess && with_options < 2; with_options++) {
            dd_fn *fn = calloc(1, sizeof *fn);
            duckdb_aggregate_function a = duckdb_create_aggregate_function();
            if (fn == NULL || a == NULL) {
                free(fn);
                if (a != NULL) duckdb_destroy_aggregate_function(&a);
                rc = DuckDBError;
                break;
            }
            fn->f = f;
            fn->index = (int32_t)index;
            fn->nargs = f->nargs + with_options;
            fn->db = db;
            atomic_fetch_add(&db->refs, 1);
            duckdb_aggregate_function_set_name(a, f->name);
            for (int i = 0; i < fn->nargs; i++) {
                fn->types[i] = (uint8_t)arg_of(f, i, alt != 0);
                duckdb_aggregate_function_add_parameter(a, type_of(t, (arg_type)fn->types[i]));
            }
            duckdb_aggregate_function_set_return_type(a, f->top_k ? t->ids : t->bigint);
            duckdb_aggregate_function_set_functions(a, agg_state_size, agg_init, agg_update, agg_combine, agg_finalize);
            duckdb_aggregate_function_set_destructor(a, agg_destroy);
            duckdb_aggregate_function_set_special_handling(a); /* NULL arguments reach us: our errors, our rules */
            duckdb_aggregate_function_set_extra_info(a, fn, fn_delete);
            rc = duckdb_add_aggregate_function_to_set(set, a);
            duckdb_destroy_aggregate_function(&a);
        }
    }
    if (rc == DuckDBSuccess) rc = duckdb_register_aggregate_function_set(con, set);
    if (set != NULL) duckdb_destroy_aggregate_function_set(&set);
    return rc;
}

static duckdb_state register_scalar(duckdb_connection con, const char *name, duckdb_logical_type ret,
                                    duckdb_scalar_function_t call, dd_db *db) {
    duckdb_scalar_function s = duckdb_create_scalar_function();
    if (s == NULL) return DuckDBError;
    duckdb_scalar_function_set_name(s, name);
    duckdb_scalar_function_set_return_type(s, ret);
    duckdb_scalar_function_set_function(s, call);
    if (db != NULL) {
        atomic_fetch_add(&db->refs, 1);
        duckdb_scalar_function_set_extra_info(s, db, db_delete);
        duckdb_scalar_function_set_volatile(s); /* read when run, never folded into a plan */
    }
    duckdb_state rc = duckdb_register_scalar_function(con, s);
    duckdb_destroy_scalar_function(&s);
    return rc;
}

/* The path of the database's main file ("" for an in-memory database), made absolute. */
static bool database_file(duckdb_connection con, char *out, size_t len) {
    duckdb_result res;
    out[0] = '\0';
    if (duckdb_query(con,
                     "SELECT path FROM duckdb_databases() WHERE database_name = current_database() AND path IS NOT "
                     "NULL AND path <> ':memory:'",
                     &res) != DuckDBSuccess) {
        duckdb_destroy_result(&res);
        return false;
    }
    bool ok = true;
    if (duckdb_row_count(&res) == 1 && !duckdb_value_is_null(&res, 0, 0)) {
        char *p = duckdb_value_varchar(&res, 0, 0);
        if (p == NULL) {
            ok = false;
        } else if (p[0] == '/') {
            ok = snprintf(out, len, "%s", p) < (int)len;
        } else {
            char cwd[PATH_MAX];
            ok = getcwd(cwd, sizeof cwd) != NULL && snprintf(out, len, "%s/%s", cwd, p) < (int)len;
        }
        duckdb_free(p);
    }
    duckdb_destroy_result(&res);
    return ok;
}

/*
 * The database's state: a generator keyed from the OS now, and its ledger: $DPMO_DUCKDB_LEDGER (created when
 * missing; failing to, the load fails), else "<database file>.dpmo-ledger" (created where it can be; else
 * looked for at each use), else none.
 */
static dd_db *db_new(duckdb_connection con, char *msg, size_t msg_len) {
    char why[300], path[PATH_MAX + 32];
    dd_db *db = calloc(1, sizeof *db);
    if (db == NULL) {
        snprintf(msg, msg_len, "dpmo: out of memory");
        return NULL;
    }
    pthread_mutex_init(&db->lock, NULL);
    atomic_init(&db->refs, 1);
    dpmo_rng *unused;
    dpmo_status st = rng_page_new(db);
    if (st == DPMO_OK) st = db_rng(db, &unused);
    if (st != DPMO_OK) {
        snprintf(msg, msg_len, "dpmo: %s", dpmo_status_message((uint32_t)st));
        db_unref(db);
        return NULL;
    }
    const char *env = getenv("DPMO_DUCKDB_LEDGER");
    bool from_env = env != NULL && env[0] != '\0';
    if (from_env) {
        if (snprintf(path, sizeof path, "%s", env) >= (int)sizeof path) {
            snprintf(msg, msg_len, "dpmo: DPMO_DUCKDB_LEDGER is too long");
            db_unref(db);
            return NULL;
        }
    } else {
        char file[PATH_MAX];
        if (!database_file(con, file, sizeof file)) {
            snprintf(msg, msg_len, "dpmo: cannot find the database's file");
            db_unref(db);
            return NULL;
        }
        if (file[0] != '\0') snprintf(path, sizeof path, "%s.dpmo-ledger", file);
        else path[0] = '\0';
    }
    if (path[0] != '\0') {
        sq_result r = sq_ledger_open(&db->ledger, path, true, why, sizeof why);
        if (r != SQ_OK && !from_env) {
            sq_ledger_close(&db->ledger);
            r = sq_ledger_open(&db->ledger, path, false, why, sizeof why);
        }
        if (r != SQ_OK) {
            snprintf(msg, msg_len, "dpmo: %s: %s", path, why); /* the host's load error, not an analyst's */
            sq_ledger_close(&db->ledger);
            db_unref(db);
            return NULL;
        }
        db->has_ledger = true;
    }
    return db;
}

static bool init(duckdb_connection con, char *msg, size_t msg_len) {
    dd_db *db = db_new(con, msg, msg_len);
    if (db == NULL) return false;
    types t;
    t.bigint = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    t.dbl = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    t.varchar = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    t.list = duckdb_create_list_type(t.dbl);
    t.list2 = duckdb_create_list_type(t.list);
    t.ids = duckdb_create_list_type(t.bigint);
    duckdb_state rc = DuckDBSuccess;
    for (size_t i = 0; rc == DuckDBSuccess && i < dp_function_count; i++) rc = register_function(con, db, &t, i);
    if (rc == DuckDBSuccess) rc = register_scalar(con, "dp_budget_remaining", t.dbl, fn_budget_remaining, db);
    if (rc == DuckDBSuccess)
        rc = register_scalar(con, "dp_budget_remaining_delta", t.dbl, fn_budget_remaining_delta, db);
    if (rc == DuckDBSuccess) rc = register_scalar(con, "dp_version", t.varchar, fn_version, NULL);
    duckdb_destroy_logical_type(&t.bigint);
    duckdb_destroy_logical_type(&t.dbl);
    duckdb_destroy_logical_type(&t.varchar);
    duckdb_destroy_logical_type(&t.list);
    duckdb_destroy_logical_type(&t.list2);
    duckdb_destroy_logical_type(&t.ids);
    db_unref(db); /* the registered functions hold the rest */
    if (rc != DuckDBSuccess) snprintf(msg, msg_len, "dpmo: could not register the functions");
    return rc == DuckDBSuccess;
}

/* True for DuckDB 2.0 and later: "v2.0.1", "v2.1.0-dev12", "2.0.0" (a leading 'v' is optional). */
static bool engine_is_supported(const char *version) {
    if (version == NULL) return false;
    if (*version == 'v') version++;
    long major = 0;
    int digits = 0;
    for (; *version >= '0' && *version <= '9' && digits < 6; version++, digits++) major = major * 10 + (*version - '0');
    return digits > 0 && (*version == '.' || *version == '\0' || *version == '-') && major >= 2;
}

/* The entry point DuckDB looks for in dpmo.duckdb_extension (ABI type C_STRUCT, C API v1.2.0). */
DP_EXPORT bool dpmo_init_c_api(duckdb_extension_info info, struct duckdb_extension_access *access) {
    char msg[PATH_MAX + 400];
    const duckdb_ext_api_v1 *api = access->get_api(info, API_VERSION);
    if (api == NULL) return false; /* get_api set the error */
    pthread_mutex_lock(&api_lock);
    bool same = !api_set || memcmp(&duckdb_ext_api, api, sizeof duckdb_ext_api) == 0;
    if (!api_set) {
        duckdb_ext_api = *api;
        api_set = true;
    }
    pthread_mutex_unlock(&api_lock);
    if (!same) {
        access->set_error(info, "dpmo: the extension is already loaded by another DuckDB library in this process");
        return false;
    }
    const char *version = duckdb_library_version ? duckdb_library_version() : NULL;
    if (!engine_is_supported(version)) {
        /* Before 2.0, DuckDB calls a C API aggregate's update with a one-element state array and the number
         * of rows for a window over a whole partition (OVER (), OVER (PARTITION BY ...)) and for ORDER BY
         * inside the call (duckdb/duckdb#21537): every extension aggregate then reads past that array, and no
         * check inside update can tell (reading the second entry is the read past the end). So the extension
         * does not load there, rather than leave the analyst a query that crashes the host. */
        snprintf(msg, sizeof msg,
                 "dpmo: DuckDB %s is not supported: dpmo needs DuckDB 2.0 or later (before 2.0, DuckDB hands an "
                 "extension's aggregates one state for many rows in some windows and ordered calls, "
                 "duckdb/duckdb#21537, which no extension can detect)",
                 version ? version : "(unknown version)");
        access->set_error(info, msg);
        return false;
    }
    duckdb_database *database = access->get_database(info);
    duckdb_connection con;
    if (database == NULL || duckdb_connect(*database, &con) != DuckDBSuccess) {
        access->set_error(info, "dpmo: cannot connect to the database");
        return false;
    }
    bool ok = init(con, msg, sizeof msg);
    duckdb_disconnect(&con);
    if (!ok) access->set_error(info, msg);
    return ok;
}
