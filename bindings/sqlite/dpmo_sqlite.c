/*
 * dpmo_sqlite.c: a SQLite loadable extension exposing dpmo's differentially private selection as SQL
 * aggregate functions, with a per-connection privacy budget and a per-connection ChaCha20 generator.
 *
 *   .load ./build/dpmo                       -- sqlite3 shell
 *   SELECT dp_select(id, 1.0, degree, 1.0) FROM nodes;
 *
 * Aggregates (every one is ε-DP in total and charges ε to the connection's budget when it returns a result):
 *   dp_select(id, ε, score, Δ [, options])                        exponential mechanism / any selector
 *   dp_select_local(id, ε, score, δ, Δ [, options])               local dampening (per-row δ)
 *   dp_pareto_select(id, ε, u1, u2, ... [, options])              PrivPareto, global
 *   dp_pareto_select_local(id, ε, u1, δ1, Δ1, u2, δ2, Δ2, ... [, options])
 *   dp_agg_select(id, ε, w1, u1, Δ1, w2, u2, Δ2, ... [, options]) PrivAgg, global
 *   dp_agg_select_local(id, ε, w1, u1, δ1, Δ1, ... [, options])
 *   ... and the top-k forms dp_select_topk, dp_select_local_topk, dp_pareto_select_topk,
 *   dp_pareto_select_local_topk, dp_agg_select_topk, dp_agg_select_local_topk taking k after ε and
 *   returning a JSON array of ids in pick order.
 * Scalars: dp_budget_set(ε | NULL), dp_budget_remaining(), dp_budget_spent(), dp_budget_charge(ε),
 *   dp_seed(hex | integer | NULL), dp_version().
 *
 * See README.md next to this file for the full contract.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "dpmo.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DP_EXPORT __attribute__((visibility("default")))
#define MAXM DPMO_MAX_OBJECTIVES
#define DEFAULT_COLUMNS 64

/* ------------------------------------------------------------------------------------------------ */
/* Per-connection state: one generator stream and an optional budget, shared by every function.      */

typedef struct conn_state {
    dpmo_rng rng;
    int has_budget;
    dpmo_budget budget;
    int refs; /* one per registered function; freed by the last xDestroy */
} conn_state;

static void conn_state_release(void *p) {
    conn_state *s = (conn_state *)p;
    if (s != NULL && --s->refs == 0) {
        sqlite3_free(s);
    }
}

static int conn_state_reseed_secure(conn_state *s) {
    uint8_t seed[32];
    sqlite3_randomness(32, seed);
    dpmo_status st = dpmo_rng_init(&s->rng, DPMO_RNG_CHACHA20, seed);
    memset(seed, 0, sizeof seed);
    return st == DPMO_OK;
}

/* ------------------------------------------------------------------------------------------------ */
/* Function descriptors.                                                                             */

enum { K_SELECT = 0, K_PARETO = 1, K_AGG = 2 };

typedef struct fn_spec {
    const char *name;
    int kind;
    int local;  /* per-row δ columns */
    int topk;   /* k argument after ε; JSON array result */
    int single; /* exactly one objective (dp_select*) */
    int has_w;  /* weight per objective (PrivAgg) */
    int has_D;  /* global sensitivity per objective */
} fn_spec;

static const fn_spec SPECS[] = {
    {"dp_select", K_SELECT, 0, 0, 1, 0, 1},
    {"dp_select_local", K_SELECT, 1, 0, 1, 0, 1},
    {"dp_select_topk", K_SELECT, 0, 1, 1, 0, 1},
    {"dp_select_local_topk", K_SELECT, 1, 1, 1, 0, 1},
    {"dp_pareto_select", K_PARETO, 0, 0, 0, 0, 0},
    {"dp_pareto_select_local", K_PARETO, 1, 0, 0, 0, 1},
    {"dp_pareto_select_topk", K_PARETO, 0, 1, 0, 0, 0},
    {"dp_pareto_select_local_topk", K_PARETO, 1, 1, 0, 0, 1},
    {"dp_agg_select", K_AGG, 0, 0, 0, 1, 1},
    {"dp_agg_select_local", K_AGG, 1, 0, 0, 1, 1},
    {"dp_agg_select_topk", K_AGG, 0, 1, 0, 1, 1},
    {"dp_agg_select_local_topk", K_AGG, 1, 1, 0, 1, 1},
};

typedef struct fn_data {
    const fn_spec *spec;
    conn_state *conn;
} fn_data;

static void fn_data_release(void *p) {
    fn_data *f = (fn_data *)p;
    if (f != NULL) {
        conn_state_release(f->conn);
        sqlite3_free(f);
    }
}

static int group_width(const fn_spec *s) { return s->has_w + 1 + s->local + s->has_D; }
static int leading(const fn_spec *s) { return 2 + s->topk; }

/* ------------------------------------------------------------------------------------------------ */
/* Options: trailing TEXT arguments starting with a letter, each a list of words separated by commas or */
/* blanks.                                                                                            */

typedef struct options {
    uint32_t selector;
    uint32_t dampening;
    uint32_t dominance;
    size_t columns; /* 0: default */
    size_t t_max;   /* 0: default (no saturation for numeric δ; the table width for table δ) */
} options;

static void options_default(options *o) {
    o->selector = DPMO_SELECTOR_EXPONENTIAL;
    o->dampening = DPMO_DAMPENING_PLAIN;
    o->dominance = DPMO_DOMINANCE_WEAK;
    o->columns = 0;
    o->t_max = 0;
}

static int is_option_value(sqlite3_value *v) {
    if (sqlite3_value_type(v) != SQLITE_TEXT) return 0;
    const unsigned char *t = sqlite3_value_text(v);
    if (t == NULL) return 0;
    while (*t == ' ' || *t == '\t') t++;
    return isalpha(*t) != 0;
}

static int parse_size(const char *s, size_t len, size_t *out) {
    size_t v = 0;
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        if (v > (SIZE_MAX - 9) / 10) return 0;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    *out = v;
    return 1;
}

static int word_is(const char *w, size_t len, const char *lit) {
    return strlen(lit) == len && sqlite3_strnicmp(w, lit, (int)len) == 0;
}

/* Parses one word into *o; returns NULL on success or an error message (sqlite3_malloc'd). */
static char *options_word(const fn_spec *s, options *o, const char *w, size_t len) {
    if (word_is(w, len, "exponential") || word_is(w, len, "em")) {
        o->selector = DPMO_SELECTOR_EXPONENTIAL;
    } else if (word_is(w, len, "permute_and_flip") || word_is(w, len, "pf")) {
        o->selector = DPMO_SELECTOR_PERMUTE_AND_FLIP;
    } else if (word_is(w, len, "laplace") || word_is(w, len, "noisy_max_laplace")) {
        o->selector = DPMO_SELECTOR_NOISY_MAX_LAPLACE;
    } else if (word_is(w, len, "gumbel") || word_is(w, len, "noisy_max_gumbel")) {
        o->selector = DPMO_SELECTOR_NOISY_MAX_GUMBEL;
    } else if (word_is(w, len, "exponential_noise") || word_is(w, len, "noisy_max_exponential")) {
        o->selector = DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL;
    } else if (s->local && word_is(w, len, "plain")) {
        o->dampening = DPMO_DAMPENING_PLAIN;
    } else if (s->local && word_is(w, len, "shifted")) {
        o->dampening = DPMO_DAMPENING_SHIFTED;
    } else if (s->kind == K_PARETO && word_is(w, len, "weak")) {
        o->dominance = DPMO_DOMINANCE_WEAK;
    } else if (s->kind == K_PARETO && word_is(w, len, "textbook")) {
        o->dominance = DPMO_DOMINANCE_TEXTBOOK;
    } else if (s->local && s->kind != K_SELECT && len > 8 && sqlite3_strnicmp(w, "columns=", 8) == 0) {
        if (!parse_size(w + 8, len - 8, &o->columns) || o->columns == 0) {
            return sqlite3_mprintf("%s: option '%.*s' needs a whole number >= 1", s->name, (int)len, w);
        }
    } else if (s->local && len > 6 && sqlite3_strnicmp(w, "t_max=", 6) == 0) {
        if (!parse_size(w + 6, len - 6, &o->t_max) || o->t_max == 0) {
            return sqlite3_mprintf("%s: option '%.*s' needs a whole number >= 1", s->name, (int)len, w);
        }
    } else {
        return sqlite3_mprintf("%s: unknown option '%.*s' (see README: selectors exponential, permute_and_flip, "
                               "laplace, gumbel, exponential_noise%s%s%s)",
                               s->name, (int)len, w, s->local ? "; plain, shifted, t_max=N" : "",
                               s->local && s->kind != K_SELECT ? ", columns=N" : "",
                               s->kind == K_PARETO ? "; weak, textbook" : "");
    }
    return NULL;
}

static char *options_parse(const fn_spec *s, options *o, int argc, sqlite3_value **argv) {
    options_default(o);
    for (int i = 0; i < argc; i++) {
        const char *t = (const char *)sqlite3_value_text(argv[i]);
        if (t == NULL) continue;
        while (*t) {
            while (*t == ' ' || *t == '\t' || *t == ',' || *t == '\n') t++;
            const char *w = t;
            while (*t && *t != ' ' && *t != '\t' && *t != ',' && *t != '\n') t++;
            if (t > w) {
                char *err = options_word(s, o, w, (size_t)(t - w));
                if (err) return err;
            }
        }
    }
    return NULL;
}

static int options_equal(const options *a, const options *b) {
    return a->selector == b->selector && a->dampening == b->dampening && a->dominance == b->dominance &&
           a->columns == b->columns && a->t_max == b->t_max;
}

/* ------------------------------------------------------------------------------------------------ */
/* Aggregate state, kept in the aggregate context. Arrays grow with sqlite3_realloc64 and are freed in */
/* xFinal, which SQLite also calls when a statement fails or is reset part way.                      */

enum { DELTA_UNSET = 0, DELTA_NUMERIC = 1, DELTA_TABLE_ROW = 2 };

typedef struct agg_state {
    int init;
    int failed;      /* a row raised an error: xFinal (called by SQLite's cleanup) must only free */
    size_t m;        /* objectives */
    size_t n, cap;   /* rows stored, rows allocated */
    double epsilon;
    sqlite3_int64 k;
    options opts;
    double w[MAXM];
    double D[MAXM];
    sqlite3_value **ids;    /* n duplicated id values */
    double *u;              /* n · m utilities, row-major */
    int delta_mode[MAXM];   /* per objective */
    size_t T[MAXM];         /* table width per objective (1 for numeric) */
    double *d[MAXM];        /* n · T[i] δ values per objective */
} agg_state;

static void agg_state_free(agg_state *p) {
    if (p == NULL || !p->init) return;
    for (size_t i = 0; i < p->n; i++) sqlite3_value_free(p->ids[i]);
    sqlite3_free(p->ids);
    sqlite3_free(p->u);
    for (size_t i = 0; i < MAXM; i++) sqlite3_free(p->d[i]);
    memset(p, 0, sizeof *p);
}

static void error_fmt(sqlite3_context *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    if (msg == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_error(ctx, msg, -1);
    sqlite3_free(msg);
}

static void error_status(sqlite3_context *ctx, const char *name, dpmo_status st) {
    error_fmt(ctx, "%s: %s", name, dpmo_status_message((uint32_t)st));
}

/* Reads a number; on failure reports an error naming the argument and returns 0. */
static int read_number(sqlite3_context *ctx, const fn_spec *s, sqlite3_value *v, const char *what, size_t obj,
                       double *out) {
    int type = sqlite3_value_numeric_type(v);
    if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
        *out = sqlite3_value_double(v);
        return 1;
    }
    char label[48];
    if (s->single || obj == (size_t)-1) {
        sqlite3_snprintf(sizeof label, label, "%s", what);
    } else {
        sqlite3_snprintf(sizeof label, label, "%s of objective %d", what, (int)obj + 1);
    }
    if (type == SQLITE_NULL) {
        error_fmt(ctx, "%s: %s is NULL on a row (NaN is stored as NULL by SQLite); every row needs a finite "
                       "number: filter NULLs with WHERE",
                  s->name, label);
    } else {
        error_fmt(ctx, "%s: %s must be a number, not %s", s->name, label, type == SQLITE_TEXT ? "text" : "a blob");
    }
    return 0;
}

static int grow(sqlite3_context *ctx, void **ptr, size_t elem, size_t count) {
    if (count != 0 && elem > SIZE_MAX / count) {
        sqlite3_result_error_toobig(ctx);
        return 0;
    }
    void *q = sqlite3_realloc64(*ptr, (sqlite3_uint64)(elem * count));
    if (q == NULL) {
        sqlite3_result_error_nomem(ctx);
        return 0;
    }
    *ptr = q;
    return 1;
}

/* Parses a δ table row from TEXT ("[0.1, 0.2]" or "0.1,0.2") into a freshly allocated array. */
static double *parse_delta_text(const char *t, size_t *out_len, int *bad) {
    size_t cap = 16, len = 0;
    double *vals = sqlite3_malloc64(cap * sizeof(double));
    *bad = 0;
    if (vals == NULL) return NULL;
    while (*t == ' ' || *t == '\t' || *t == '\n') t++;
    int bracket = (*t == '[');
    if (bracket) t++;
    for (;;) {
        while (*t == ' ' || *t == '\t' || *t == '\n') t++;
        if (bracket && *t == ']' && len == 0) {
            t++;
            break;
        }
        char *end;
        errno = 0;
        double x = strtod(t, &end);
        if (end == t) {
            *bad = 1;
            break;
        }
        if (len == cap) {
            void *q = sqlite3_realloc64(vals, (sqlite3_uint64)(cap * 2 * sizeof(double)));
            if (q == NULL) {
                sqlite3_free(vals);
                return NULL;
            }
            vals = q;
            cap *= 2;
        }
        vals[len++] = x;
        t = end;
        while (*t == ' ' || *t == '\t' || *t == '\n') t++;
        if (*t == ',') {
            t++;
            continue;
        }
        if (bracket) {
            if (*t == ']') t++;
            else *bad = 1;
        }
        break;
    }
    while (*t == ' ' || *t == '\t' || *t == '\n') t++;
    if (*t != '\0' || len == 0) *bad = 1;
    *out_len = len;
    return vals;
}

static const char *delta_label(const fn_spec *s, size_t i, char *buf, int size) {
    if (s->single) sqlite3_snprintf(size, buf, "delta");
    else sqlite3_snprintf(size, buf, "delta of objective %d", (int)i + 1);
    return buf;
}

/* Stores the δ argument of objective i for row p->n. Returns 0 after reporting an error. */
static int store_delta(sqlite3_context *ctx, const fn_spec *s, agg_state *p, size_t i, sqlite3_value *v) {
    int type = sqlite3_value_type(v);
    int mode;
    size_t len = 1;
    double one;
    double *vals = NULL;
    int owned = 0;
    char label[40];
    if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
        mode = DELTA_NUMERIC;
        one = sqlite3_value_double(v);
        vals = &one;
    } else if (type == SQLITE_BLOB) {
        mode = DELTA_TABLE_ROW;
        int bytes = sqlite3_value_bytes(v);
        if (bytes <= 0 || bytes % 8 != 0) {
            error_fmt(ctx, "%s: a delta blob must hold 1 or more native doubles (8 bytes each), got %d bytes",
                      s->name, bytes);
            return 0;
        }
        len = (size_t)bytes / 8;
        vals = sqlite3_malloc64((sqlite3_uint64)bytes);
        if (vals == NULL) {
            sqlite3_result_error_nomem(ctx);
            return 0;
        }
        owned = 1;
        memcpy(vals, sqlite3_value_blob(v), (size_t)bytes);
    } else if (type == SQLITE_TEXT) {
        int bad = 0;
        mode = DELTA_TABLE_ROW;
        vals = parse_delta_text((const char *)sqlite3_value_text(v), &len, &bad);
        if (vals == NULL) {
            sqlite3_result_error_nomem(ctx);
            return 0;
        }
        owned = 1;
        if (bad) {
            sqlite3_free(vals);
            error_fmt(ctx, "%s: %s must be a number, a JSON array of numbers or a blob of doubles", s->name,
                      delta_label(s, i, label, sizeof label));
            return 0;
        }
    } else {
        delta_label(s, i, label, sizeof label);
        error_fmt(ctx, "%s: %s is NULL on a row (NaN is stored as NULL by SQLite); every row needs a value: "
                       "filter NULLs with WHERE",
                  s->name, label);
        return 0;
    }
    if (p->delta_mode[i] == DELTA_UNSET) {
        p->delta_mode[i] = mode;
        p->T[i] = len;
        if (!grow(ctx, (void **)&p->d[i], sizeof(double) * len, p->cap)) goto fail;
    } else if (p->delta_mode[i] != mode || p->T[i] != len) {
        char first[48], now[48];
        if (p->delta_mode[i] == DELTA_NUMERIC) sqlite3_snprintf(sizeof first, first, "a number");
        else sqlite3_snprintf(sizeof first, first, "a table of %llu values", (unsigned long long)p->T[i]);
        if (mode == DELTA_NUMERIC) sqlite3_snprintf(sizeof now, now, "a number");
        else sqlite3_snprintf(sizeof now, now, "a table of %llu values", (unsigned long long)len);
        error_fmt(ctx, "%s: %s must have the same shape on every row of a group (a number on every row, or "
                       "tables of one length): %s on an earlier row, %s on this one",
                  s->name, delta_label(s, i, label, sizeof label), first, now);
        goto fail;
    }
    memcpy(p->d[i] + p->n * len, vals, len * sizeof(double));
    if (owned) sqlite3_free(vals);
    return 1;
fail:
    if (owned) sqlite3_free(vals);
    return 0;
}

static int agg_step_impl(sqlite3_context *ctx, agg_state *p, int argc, sqlite3_value **argv);

static void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    agg_state *p = (agg_state *)sqlite3_aggregate_context(ctx, (int)sizeof(agg_state));
    if (p == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    if (p->failed) return;
    if (!agg_step_impl(ctx, p, argc, argv)) p->failed = 1;
}

/* Adds one row; returns 0 after reporting an error with sqlite3_result_error*. */
static int agg_step_impl(sqlite3_context *ctx, agg_state *p, int argc, sqlite3_value **argv) {
    fn_data *fd = (fn_data *)sqlite3_user_data(ctx);
    const fn_spec *s = fd->spec;
    int g = group_width(s), lead = leading(s);
    /* Split off the trailing options. */
    int nopt = 0;
    while (argc - nopt > lead && is_option_value(argv[argc - 1 - nopt])) nopt++;
    int body = argc - lead - nopt;
    if (body <= 0 || body % g != 0 || (s->single && body != g)) {
        if (s->single) {
            error_fmt(ctx, "%s: expected %d arguments before the options (%s), got %d", s->name, lead + g,
                      s->local ? (s->topk ? "id, epsilon, k, score, delta, sensitivity"
                                          : "id, epsilon, score, delta, sensitivity")
                               : (s->topk ? "id, epsilon, k, score, sensitivity" : "id, epsilon, score, sensitivity"),
                      argc - nopt);
        } else {
            const char *group = s->kind == K_PARETO ? (s->local ? "(u, delta, sensitivity)" : "u")
                                                    : (s->local ? "(w, u, delta, sensitivity)" : "(w, u, sensitivity)");
            error_fmt(ctx, "%s: expected id, epsilon%s, then one or more groups %s per objective; got %d "
                           "argument(s) after %s, not a positive multiple of %d",
                      s->name, s->topk ? ", k" : "", group, body < 0 ? 0 : body,
                      s->topk ? "id, epsilon, k" : "id, epsilon", g);
        }
        return 0;
    }
    size_t m = (size_t)(body / g);
    if (m > MAXM) {
        error_status(ctx, s->name, DPMO_CAPACITY_EXCEEDED);
        return 0;
    }
    options o;
    char *err = options_parse(s, &o, nopt, argv + argc - nopt);
    if (err) {
        sqlite3_result_error(ctx, err, -1);
        sqlite3_free(err);
        return 0;
    }

    double eps;
    if (!read_number(ctx, s, argv[1], "epsilon", (size_t)-1, &eps)) return 0;
    sqlite3_int64 k = 1;
    if (s->topk) {
        int kt = sqlite3_value_numeric_type(argv[2]);
        if (kt != SQLITE_INTEGER) {
            error_fmt(ctx, "%s: k must be a whole number%s", s->name, kt == SQLITE_NULL ? ", not NULL" : "");
            return 0;
        }
        k = sqlite3_value_int64(argv[2]);
    }
    double w[MAXM], D[MAXM];
    for (size_t i = 0; i < m; i++) {
        sqlite3_value **grp = argv + lead + (int)i * g;
        int at = 0;
        w[i] = 1.0;
        D[i] = 1.0;
        if (s->has_w && !read_number(ctx, s, grp[at++], "weight", i, &w[i])) return 0;
        at++;                /* u, per row */
        at += s->local;      /* δ, per row */
        if (s->has_D && !read_number(ctx, s, grp[at], "sensitivity", i, &D[i])) return 0;
    }

    if (!p->init) {
        memset(p, 0, sizeof *p);
        p->init = 1;
        p->m = m;
        p->epsilon = eps;
        p->k = k;
        p->opts = o;
        memcpy(p->w, w, sizeof(double) * m);
        memcpy(p->D, D, sizeof(double) * m);
    } else {
        if (p->m != m) {
            error_fmt(ctx, "%s: the number of objectives changed between rows (%llu, then %llu)", s->name,
                      (unsigned long long)p->m, (unsigned long long)m);
            return 0;
        }
        if (!(p->epsilon == eps || (p->epsilon != p->epsilon && eps != eps))) {
            error_fmt(ctx, "%s: epsilon must be the same on every row of a group (%!.17g, then %!.17g)", s->name,
                      p->epsilon, eps);
            return 0;
        }
        if (p->k != k) {
            error_fmt(ctx, "%s: k must be the same on every row of a group", s->name);
            return 0;
        }
        if (!options_equal(&p->opts, &o)) {
            error_fmt(ctx, "%s: the options must be the same on every row of a group", s->name);
            return 0;
        }
        for (size_t i = 0; i < m; i++) {
            if (memcmp(&p->w[i], &w[i], sizeof(double)) != 0 || memcmp(&p->D[i], &D[i], sizeof(double)) != 0) {
                error_fmt(ctx, "%s: weights and global sensitivities must be the same on every row of a group",
                          s->name);
                return 0;
            }
        }
    }

    /* Room for one more row. */
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        if (!grow(ctx, (void **)&p->ids, sizeof(sqlite3_value *), nc)) return 0;
        if (!grow(ctx, (void **)&p->u, sizeof(double) * m, nc)) return 0;
        for (size_t i = 0; i < m; i++) {
            if (p->delta_mode[i] != DELTA_UNSET && !grow(ctx, (void **)&p->d[i], sizeof(double) * p->T[i], nc)) {
                return 0;
            }
        }
        p->cap = nc;
    }
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
        error_fmt(ctx, "%s: id is NULL on a row; every candidate needs an id", s->name);
        return 0;
    }
    for (size_t i = 0; i < m; i++) {
        sqlite3_value **grp = argv + lead + (int)i * g;
        int at = s->has_w;
        if (!read_number(ctx, s, grp[at], s->single ? "score" : "utility", i, &p->u[p->n * m + i])) return 0;
        if (s->local && !store_delta(ctx, s, p, i, grp[at + 1])) return 0;
    }
    sqlite3_value *id = sqlite3_value_dup(argv[0]);
    if (id == NULL) {
        sqlite3_result_error_nomem(ctx);
        return 0;
    }
    p->ids[p->n++] = id;
    return 1;
}

/* Appends id as a JSON value to the string builder. */
static void json_id(sqlite3_str *out, sqlite3_value *v) {
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        sqlite3_str_appendf(out, "%lld", sqlite3_value_int64(v));
        break;
    case SQLITE_FLOAT:
        sqlite3_str_appendf(out, "%!.17g", sqlite3_value_double(v));
        break;
    case SQLITE_TEXT: {
        const unsigned char *t = sqlite3_value_text(v);
        sqlite3_str_appendchar(out, 1, '"');
        for (; t && *t; t++) {
            if (*t == '"' || *t == '\\') sqlite3_str_appendf(out, "\\%c", *t);
            else if (*t < 0x20) sqlite3_str_appendf(out, "\\u%04x", *t);
            else sqlite3_str_appendchar(out, 1, (char)*t);
        }
        sqlite3_str_appendchar(out, 1, '"');
        break;
    }
    default: { /* blob: hex string */
        const unsigned char *b = sqlite3_value_blob(v);
        int len = sqlite3_value_bytes(v);
        sqlite3_str_appendchar(out, 1, '"');
        for (int i = 0; i < len; i++) sqlite3_str_appendf(out, "%02x", b[i]);
        sqlite3_str_appendchar(out, 1, '"');
        break;
    }
    }
}

static dpmo_status run_mechanism(conn_state *c, const fn_spec *s, agg_state *p, size_t k, size_t *out) {
    size_t n = p->n, m = p->m;
    const options *o = &p->opts;
    dpmo_sensitivity specs[MAXM];
    size_t columns = 0;
    dpmo_status st = DPMO_OK;
    double *values = NULL;
    size_t *indices = NULL;
    size_t values_len = 0, indices_len = 0;

    if (s->local) {
        size_t widest = 0;
        for (size_t i = 0; i < m; i++) {
            memset(&specs[i], 0, sizeof specs[i]);
            specs[i].global = p->D[i];
            specs[i].values = p->d[i];
            if (p->delta_mode[i] == DELTA_NUMERIC) {
                specs[i].kind = DPMO_DELTA_PER_CANDIDATE;
                specs[i].values_len = n;
                specs[i].t_max = o->t_max ? o->t_max : SIZE_MAX;
            } else {
                specs[i].kind = DPMO_DELTA_TABLE;
                specs[i].columns = p->T[i];
                specs[i].values_len = n * p->T[i];
                specs[i].t_max = (o->t_max && o->t_max < p->T[i]) ? o->t_max : p->T[i];
                if (p->T[i] > widest) widest = p->T[i];
            }
        }
        columns = o->columns ? o->columns : (widest ? widest : DEFAULT_COLUMNS);
    }

    if (s->kind == K_SELECT) {
        const double *u = p->u;
        size_t need_d = s->local ? 2 * n : n;
        values = sqlite3_malloc64((sqlite3_uint64)need_d * sizeof(double));
        indices = sqlite3_malloc64((sqlite3_uint64)2 * n * sizeof(size_t));
        if (values == NULL || indices == NULL) {
            st = DPMO_OVERFLOW; /* reported as out of memory below */
            goto nomem;
        }
        if (!s->local && !s->topk) {
            switch (o->selector) {
            case DPMO_SELECTOR_EXPONENTIAL:
                st = dpmo_select_exponential(&c->rng, u, n, p->D[0], p->epsilon, out);
                break;
            case DPMO_SELECTOR_PERMUTE_AND_FLIP:
                st = dpmo_select_permute_and_flip(&c->rng, u, n, p->D[0], p->epsilon, indices, n, out);
                break;
            default:
                st = dpmo_select_noisy_max(&c->rng, u, n, p->D[0], p->epsilon,
                                           o->selector == DPMO_SELECTOR_NOISY_MAX_LAPLACE  ? DPMO_NOISE_LAPLACE
                                           : o->selector == DPMO_SELECTOR_NOISY_MAX_GUMBEL ? DPMO_NOISE_GUMBEL
                                                                                           : DPMO_NOISE_EXPONENTIAL,
                                           out);
                break;
            }
        } else if (!s->local) {
            st = dpmo_select_top_k(&c->rng, o->selector, u, n, p->D[0], p->epsilon, k, out, values, n, indices, 2 * n,
                                   NULL);
        } else if (!s->topk) {
            st = dpmo_select_local_dampening(&c->rng, u, n, &specs[0], o->dampening, o->selector, p->epsilon, values,
                                             n, indices, n, out);
        } else {
            st = dpmo_select_local_dampening_top_k(&c->rng, u, n, &specs[0], o->dampening, o->selector, p->epsilon, k,
                                                   out, values, 2 * n, indices, 2 * n, NULL);
        }
    } else {
        if (s->kind == K_PARETO) {
            st = dpmo_privpareto_scratch_len(n, m, s->local ? columns : 0, &values_len, &indices_len);
        } else {
            st = dpmo_privagg_scratch_len(n, s->local ? columns : 0, &values_len, &indices_len);
        }
        if (st != DPMO_OK) goto done;
        if (values_len > SIZE_MAX / sizeof(double) || indices_len > SIZE_MAX / sizeof(size_t)) {
            st = DPMO_OVERFLOW;
            goto done;
        }
        values = sqlite3_malloc64((sqlite3_uint64)(values_len ? values_len : 1) * sizeof(double));
        indices = sqlite3_malloc64((sqlite3_uint64)(indices_len ? indices_len : 1) * sizeof(size_t));
        if (values == NULL || indices == NULL) goto nomem;
        if (s->kind == K_PARETO) {
            st = dpmo_select_privpareto(&c->rng, p->u, n, m, o->dominance, s->local ? specs : NULL, columns,
                                        o->dampening, o->selector, p->epsilon, k, out, values, values_len, indices,
                                        indices_len, NULL);
        } else {
            st = dpmo_select_privagg(&c->rng, p->u, n, m, p->w, s->local ? NULL : p->D, s->local ? specs : NULL,
                                     columns, o->dampening, o->selector, p->epsilon, k, out, values, values_len,
                                     indices, indices_len, NULL);
        }
    }
done:
    sqlite3_free(values);
    sqlite3_free(indices);
    return st;
nomem:
    sqlite3_free(values);
    sqlite3_free(indices);
    return (dpmo_status)-1;
}

static void agg_final(sqlite3_context *ctx) {
    fn_data *fd = (fn_data *)sqlite3_user_data(ctx);
    const fn_spec *s = fd->spec;
    conn_state *c = fd->conn;
    agg_state *p = (agg_state *)sqlite3_aggregate_context(ctx, 0);
    size_t *out = NULL;

    if (p != NULL && p->failed) goto cleanup; /* the error was reported by xStep */
    if (p == NULL || !p->init || p->n == 0) {
        error_status(ctx, s->name, DPMO_EMPTY_INPUT);
        goto cleanup;
    }
    if (s->topk && (p->k < 1 || (sqlite3_uint64)p->k > (sqlite3_uint64)p->n)) {
        error_fmt(ctx, "%s: k must be between 1 and the number of rows (k = %lld, %llu rows): %s", s->name, p->k,
                  (unsigned long long)p->n, dpmo_status_message(DPMO_INVALID_ARGUMENT));
        goto cleanup;
    }
    size_t k = (size_t)p->k;
    if (s->kind == K_AGG) {
        int nonzero = 0;
        for (size_t i = 0; i < p->m; i++) nonzero |= p->w[i] != 0.0;
        if (!nonzero) {
            error_fmt(ctx, "%s: at least one weight must be non-zero: %s", s->name,
                      dpmo_status_message(DPMO_INVALID_ARGUMENT));
            goto cleanup;
        }
    }

    /* Budget: charge a copy first; commit it only if the mechanism succeeds. */
    dpmo_budget charged;
    if (c->has_budget) {
        charged = c->budget;
        dpmo_status bs = dpmo_budget_charge(&charged, p->epsilon);
        if (bs != DPMO_OK) {
            if (bs == DPMO_BUDGET_EXHAUSTED) {
                double left = 0.0;
                dpmo_budget_remaining(&c->budget, &left);
                error_fmt(ctx, "%s: %s (epsilon %!.17g requested, %!.17g left of %!.17g; nothing was charged)",
                          s->name, dpmo_status_message(bs), p->epsilon, left, c->budget.total);
            } else {
                error_status(ctx, s->name, bs);
            }
            goto cleanup;
        }
    }

    out = sqlite3_malloc64((sqlite3_uint64)k * sizeof(size_t));
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        goto cleanup;
    }
    dpmo_status st = run_mechanism(c, s, p, k, out);
    if ((int)st == -1) {
        sqlite3_result_error_nomem(ctx);
        goto cleanup;
    }
    if (st != DPMO_OK) {
        error_status(ctx, s->name, st);
        goto cleanup;
    }
    for (size_t i = 0; i < k; i++) {
        if (out[i] >= p->n) { /* cannot happen; never index out of bounds */
            error_status(ctx, s->name, DPMO_INVALID_ARGUMENT);
            goto cleanup;
        }
    }
    if (s->topk) {
        sqlite3_str *js = sqlite3_str_new(NULL);
        sqlite3_str_appendchar(js, 1, '[');
        for (size_t i = 0; i < k; i++) {
            if (i) sqlite3_str_appendchar(js, 1, ',');
            json_id(js, p->ids[out[i]]);
        }
        sqlite3_str_appendchar(js, 1, ']');
        if (sqlite3_str_errcode(js) != SQLITE_OK) {
            sqlite3_free(sqlite3_str_finish(js));
            sqlite3_result_error_nomem(ctx);
            goto cleanup;
        }
        int len = sqlite3_str_length(js);
        sqlite3_result_text(ctx, sqlite3_str_finish(js), len, sqlite3_free);
    } else {
        sqlite3_result_value(ctx, p->ids[out[0]]);
    }
    if (c->has_budget) c->budget = charged;

cleanup:
    sqlite3_free(out);
    agg_state_free(p);
}

/* ------------------------------------------------------------------------------------------------ */
/* Scalar functions: budget, seed, version.                                                          */

static void fn_budget_set(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    conn_state *c = (conn_state *)sqlite3_user_data(ctx);
    (void)argc;
    int type = sqlite3_value_numeric_type(argv[0]);
    if (type == SQLITE_NULL) {
        c->has_budget = 0;
        sqlite3_result_null(ctx);
        return;
    }
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
        error_fmt(ctx, "dp_budget_set: epsilon must be a number (or NULL to remove the budget)");
        return;
    }
    dpmo_budget b;
    dpmo_status st = dpmo_budget_init(&b, sqlite3_value_double(argv[0]));
    if (st != DPMO_OK) {
        error_status(ctx, "dp_budget_set", st);
        return;
    }
    c->budget = b;
    c->has_budget = 1;
    sqlite3_result_double(ctx, b.total);
}

static void fn_budget_remaining(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    conn_state *c = (conn_state *)sqlite3_user_data(ctx);
    (void)argc;
    (void)argv;
    if (!c->has_budget) {
        sqlite3_result_null(ctx);
        return;
    }
    double left = 0.0;
    dpmo_status st = dpmo_budget_remaining(&c->budget, &left);
    if (st != DPMO_OK) {
        error_status(ctx, "dp_budget_remaining", st);
        return;
    }
    sqlite3_result_double(ctx, left);
}

static void fn_budget_spent(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    conn_state *c = (conn_state *)sqlite3_user_data(ctx);
    (void)argc;
    (void)argv;
    if (!c->has_budget) sqlite3_result_null(ctx);
    else sqlite3_result_double(ctx, c->budget.spent);
}

static void fn_budget_charge(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    conn_state *c = (conn_state *)sqlite3_user_data(ctx);
    (void)argc;
    int type = sqlite3_value_numeric_type(argv[0]);
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
        error_status(ctx, "dp_budget_charge", DPMO_INVALID_EPSILON);
        return;
    }
    if (!c->has_budget) {
        error_fmt(ctx, "dp_budget_charge: no budget is set on this connection (call dp_budget_set first)");
        return;
    }
    dpmo_budget b = c->budget;
    dpmo_status st = dpmo_budget_charge(&b, sqlite3_value_double(argv[0]));
    if (st != DPMO_OK) {
        error_status(ctx, "dp_budget_charge", st);
        return;
    }
    c->budget = b;
    double left = 0.0;
    dpmo_budget_remaining(&c->budget, &left);
    sqlite3_result_double(ctx, left);
}

static int hexval(int ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void fn_seed(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    conn_state *c = (conn_state *)sqlite3_user_data(ctx);
    uint8_t seed[32];
    (void)argc;
    memset(seed, 0, sizeof seed);
    switch (sqlite3_value_type(argv[0])) {
    case SQLITE_NULL:
        if (!conn_state_reseed_secure(c)) error_status(ctx, "dp_seed", DPMO_INVALID_GENERATOR);
        else sqlite3_result_null(ctx);
        return;
    case SQLITE_INTEGER: {
        sqlite3_uint64 v = (sqlite3_uint64)sqlite3_value_int64(argv[0]);
        for (int i = 0; i < 8; i++) seed[i] = (uint8_t)(v >> (8 * i));
        break;
    }
    case SQLITE_TEXT: {
        const unsigned char *t = sqlite3_value_text(argv[0]);
        if (sqlite3_value_bytes(argv[0]) != 64) goto bad;
        for (int i = 0; i < 32; i++) {
            int hi = hexval(t[2 * i]), lo = hexval(t[2 * i + 1]);
            if (hi < 0 || lo < 0) goto bad;
            seed[i] = (uint8_t)(hi * 16 + lo);
        }
        break;
    }
    default:
        goto bad;
    }
    {
        dpmo_status st = dpmo_rng_init(&c->rng, DPMO_RNG_CHACHA20, seed);
        if (st != DPMO_OK) error_status(ctx, "dp_seed", st);
        else sqlite3_result_null(ctx);
    }
    return;
bad:
    error_fmt(ctx, "dp_seed: the seed must be 64 hexadecimal digits (32 bytes), an integer, or NULL for a fresh "
                   "secure seed");
}

static void fn_version(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    (void)argv;
    sqlite3_result_text(ctx, dpmo_version(), -1, SQLITE_STATIC);
}

/* ------------------------------------------------------------------------------------------------ */
/* Entry point.                                                                                      */

DP_EXPORT int sqlite3_dpmo_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
    SQLITE_EXTENSION_INIT2(pApi);
    conn_state *c = sqlite3_malloc64(sizeof *c);
    if (c == NULL) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    if (!conn_state_reseed_secure(c)) {
        sqlite3_free(c);
        if (pzErrMsg) *pzErrMsg = sqlite3_mprintf("dpmo: %s", dpmo_status_message(DPMO_INVALID_GENERATOR));
        return SQLITE_ERROR;
    }
    c->refs = 1; /* held by this function until registration ends */
    int rc = SQLITE_OK;
    const int flags = SQLITE_UTF8; /* aggregates are random: not SQLITE_DETERMINISTIC */

    static const struct {
        const char *name;
        int nargs;
        void (*fn)(sqlite3_context *, int, sqlite3_value **);
    } scalars[] = {
        {"dp_budget_set", 1, fn_budget_set},   {"dp_budget_remaining", 0, fn_budget_remaining},
        {"dp_budget_spent", 0, fn_budget_spent}, {"dp_budget_charge", 1, fn_budget_charge},
        {"dp_seed", 1, fn_seed},               {"dp_version", 0, fn_version},
    };
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof scalars / sizeof scalars[0]; i++) {
        c->refs++;
        rc = sqlite3_create_function_v2(db, scalars[i].name, scalars[i].nargs, flags | SQLITE_DIRECTONLY, c,
                                        scalars[i].fn, NULL, NULL, conn_state_release);
    }
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof SPECS / sizeof SPECS[0]; i++) {
        fn_data *fd = sqlite3_malloc64(sizeof *fd);
        if (fd == NULL) {
            rc = SQLITE_NOMEM;
            break;
        }
        fd->spec = &SPECS[i];
        fd->conn = c;
        c->refs++;
        rc = sqlite3_create_function_v2(db, SPECS[i].name, -1, flags, fd, NULL, agg_step, agg_final, fn_data_release);
    }
    conn_state_release(c);
    if (rc != SQLITE_OK && pzErrMsg) *pzErrMsg = sqlite3_mprintf("dpmo: could not register the functions");
    return rc;
}
