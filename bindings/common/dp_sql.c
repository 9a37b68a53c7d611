/*
 * dp_sql.c: the SQL surface shared by the PostgreSQL and SQLite bindings. See dp_sql.h and bindings/SQL.md.
 */
#include "dp_sql.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The functions ---------------------------------------------------------------------------------- */

/*                 name                          kind             top_k  id eps  k   w   u   d   s  nargs */
const dp_function dp_functions[] = {
    {"dp_select", DP_SELECT, false, 0, 1, -1, -1, 2, -1, 3, 4, "id, epsilon, score, sensitivity", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_select_top_k", DP_SELECT, true, 0, 1, 2, -1, 3, -1, 4, 5, "id, epsilon, k, score, sensitivity", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_select_local", DP_SELECT_LOCAL, false, 0, 1, -1, -1, 2, 3, 4, 5,
     "id, epsilon, utility, delta, sensitivity", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_select_local_top_k", DP_SELECT_LOCAL, true, 0, 1, 2, -1, 3, 4, 5, 6,
     "id, epsilon, k, utility, delta, sensitivity", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_pareto_select", DP_PARETO, false, 0, 1, -1, -1, 2, -1, -1, 3, "id, epsilon, utilities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_pareto_select_top_k", DP_PARETO, true, 0, 1, 2, -1, 3, -1, -1, 4, "id, epsilon, k, utilities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_pareto_select_local", DP_PARETO_LOCAL, false, 0, 1, -1, -1, 2, 3, 4, 5,
     "id, epsilon, utilities, deltas, sensitivities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_pareto_select_local_top_k", DP_PARETO_LOCAL, true, 0, 1, 2, -1, 3, 4, 5, 6,
     "id, epsilon, k, utilities, deltas, sensitivities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_agg_select", DP_AGG, false, 0, 1, -1, 2, 3, -1, 4, 5, "id, epsilon, weights, utilities, sensitivities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_agg_select_top_k", DP_AGG, true, 0, 1, 2, 3, 4, -1, 5, 6,
     "id, epsilon, k, weights, utilities, sensitivities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_agg_select_local", DP_AGG_LOCAL, false, 0, 1, -1, 2, 3, 4, 5, 6,
     "id, epsilon, weights, utilities, deltas, sensitivities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_agg_select_local_top_k", DP_AGG_LOCAL, true, 0, 1, 2, 3, 4, 5, 6, 7,
     "id, epsilon, k, weights, utilities, deltas, sensitivities", -1, -1, -1, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    /* unit = id, item, epsilon, delta, max_items [, mechanism]; unit, item, epsilon, delta, k, max_items [, k_bar] */
    {"dp_discover_partitions", DP_DISCOVER, true, 0, 2, -1, -1, -1, -1, -1, 5, "unit, item, epsilon, delta, max_items",
     1, 3, 4, -1, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    {"dp_discover_top_k", DP_DISCOVER_TOP_K, true, 0, 2, 4, -1, -1, -1, -1, 6,
     "unit, item, epsilon, delta, k, max_items", 1, 3, 5, 6, -1, -1, -1, -1, DPMO_SCORE_UNITS},
    /* unit, item, epsilon, delta, k, max_items, max_per_item [, k_bar];
     * unit, item, value, epsilon, delta, k, max_items, max_per_item, lo, hi [, k_bar] */
    {"dp_discover_top_k_events", DP_DISCOVER_TOP_K, true, 0, 2, 4, -1, -1, -1, -1, 7,
     "unit, item, epsilon, delta, k, max_items, max_per_item", 1, 3, 5, 7, -1, 6, -1, -1, DPMO_SCORE_EVENTS},
    {"dp_discover_top_k_sum", DP_DISCOVER_TOP_K, true, 0, 3, 5, -1, -1, -1, -1, 10,
     "unit, item, value, epsilon, delta, k, max_items, max_per_item, lo, hi", 1, 4, 6, 10, 2, 7, 8, 9, DPMO_SCORE_SUM},
};
const size_t dp_function_count = sizeof dp_functions / sizeof dp_functions[0];

const dp_function *dp_function_find(const char *name) {
    for (size_t i = 0; i < dp_function_count; i++)
        if (strcmp(dp_functions[i].name, name) == 0) return &dp_functions[i];
    return NULL;
}

bool dp_is_discovery(const dp_function *f) { return f->kind == DP_DISCOVER || f->kind == DP_DISCOVER_TOP_K; }

bool dp_is_public_arg(const dp_function *f, int i) {
    /* The row's data: the candidate id or the event's unit, its score or utilities, its local sensitivities
     * (the `d` column of the _local functions), the event's item and value. Everything else is public, the
     * optional last argument (options, mechanism or k̄) included. */
    return i >= 0 && i != f->id && i != f->utilities && i != f->deltas && i != f->item && i != f->value;
}

static bool is_local(dp_kind k) { return k == DP_SELECT_LOCAL || k == DP_PARETO_LOCAL || k == DP_AGG_LOCAL; }
static bool is_array_kind(dp_kind k) { return k != DP_SELECT && k != DP_SELECT_LOCAL; }

/* ---- Errors and numbers ----------------------------------------------------------------------------- */

void dp_format_double(double x, char *buf, size_t len) {
    if (isnan(x)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (isinf(x)) {
        snprintf(buf, len, x > 0 ? "Infinity" : "-Infinity");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) return;
    }
}

dp_err_class dp_fail(dp_error *err, dp_err_class cls, int status, const char *fmt, ...) {
    va_list ap;
    err->cls = cls;
    err->status = status;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return cls;
}

/* ---- Options ---------------------------------------------------------------------------------------- */

static const char *const SELECTORS[] = {"exponential", "permute_and_flip", "noisy_max_laplace", "noisy_max_gumbel",
                                        "noisy_max_exponential"}; /* in DPMO_SELECTOR_* order */

static bool word_is(const char *w, size_t len, const char *lit) {
    if (strlen(lit) != len) return false;
    for (size_t i = 0; i < len; i++) {
        char c = w[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != lit[i]) return false;
    }
    return true;
}

/* The functions that run isochronously (constant time): all but PrivPareto, whose Pareto score sorts the
 * data (its time depends on it); it runs exactly. */
static bool has_isochronous(dp_kind k) { return k != DP_PARETO && k != DP_PARETO_LOCAL; }

static void expected_options(const dp_function *f, char *buf, size_t len) {
    snprintf(buf, len, "exponential, permute_and_flip, noisy_max_gumbel, noisy_max_exponential%s%s%s",
             has_isochronous(f->kind) ? ", isochronous, exact" : "",
             is_local(f->kind) ? ", plain, shifted, t_max=N" : "",
             f->kind == DP_PARETO || f->kind == DP_PARETO_LOCAL ? ", textbook, weak" : "");
}

dp_err_class dp_options_parse(const dp_function *f, const char *text, size_t len, dp_options *o, dp_error *err) {
    const char *seen[5] = {NULL, NULL, NULL, NULL, NULL}; /* the word that set each category */
    size_t seen_len[5] = {0, 0, 0, 0, 0};
    char expected[200];

    o->selector = DPMO_SELECTOR_EXPONENTIAL;
    o->dampening = DPMO_DAMPENING_PLAIN;
    o->dominance = DPMO_DOMINANCE_TEXTBOOK;
    o->t_max = 0;
    o->arithmetic = has_isochronous(f->kind) ? DPMO_ISOCHRONOUS : 0;
    if (len > DP_MAX_OPTIONS_TEXT)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the options text is longer than %d bytes", f->name,
                       DP_MAX_OPTIONS_TEXT);
    size_t i = 0;
    while (i < len) {
        while (i < len && (text[i] == ' ' || text[i] == ',' || text[i] == '\t' || text[i] == '\n')) i++;
        size_t start = i;
        while (i < len && text[i] != ' ' && text[i] != ',' && text[i] != '\t' && text[i] != '\n') i++;
        if (i == start) break;
        const char *w = text + start;
        size_t wl = i - start;
        int cat = -1;
        for (uint32_t s = 0; s < sizeof SELECTORS / sizeof SELECTORS[0]; s++)
            if (word_is(w, wl, SELECTORS[s])) {
                cat = 0;
                o->selector = s;
            }
        if (cat == 0 && o->selector == DPMO_SELECTOR_NOISY_MAX_LAPLACE)
            return dp_fail(err, DP_ERR_ARGUMENT, DPMO_UNSUPPORTED,
                           "%s: option \"%.*s\": report-noisy-max with Laplace noise has no exact implementation (use "
                           "noisy_max_gumbel, the exponential mechanism's distribution, or noisy_max_exponential, "
                           "permute-and-flip's)",
                           f->name, (int)wl, w);
        if (cat < 0 && (word_is(w, wl, "plain") || word_is(w, wl, "shifted"))) {
            if (!is_local(f->kind))
                return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: option \"%.*s\" applies only to the _local functions",
                               f->name, (int)wl, w);
            cat = 1;
            o->dampening = word_is(w, wl, "plain") ? DPMO_DAMPENING_PLAIN : DPMO_DAMPENING_SHIFTED;
        }
        if (cat < 0 && (word_is(w, wl, "textbook") || word_is(w, wl, "weak"))) {
            if (f->kind != DP_PARETO && f->kind != DP_PARETO_LOCAL)
                return dp_fail(err, DP_ERR_ARGUMENT, -1,
                               "%s: option \"%.*s\" applies only to the dp_pareto_ functions", f->name, (int)wl, w);
            cat = 2;
            o->dominance = word_is(w, wl, "textbook") ? DPMO_DOMINANCE_TEXTBOOK : DPMO_DOMINANCE_WEAK;
        }
        if (cat < 0 && (word_is(w, wl, "isochronous") || word_is(w, wl, "exact"))) {
            if (!has_isochronous(f->kind))
                return dp_fail(err, DP_ERR_ARGUMENT, -1,
                               "%s: option \"%.*s\" does not apply to PrivPareto (it runs exactly, not in constant "
                               "time)",
                               f->name, (int)wl, w);
            cat = 4;
            o->arithmetic = word_is(w, wl, "isochronous") ? DPMO_ISOCHRONOUS : 0;
        }
        if (cat < 0 && wl > 6 && word_is(w, 6, "t_max=")) {
            if (!is_local(f->kind))
                return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: option \"%.*s\" applies only to the _local functions",
                               f->name, (int)wl, w);
            uint32_t v = 0;
            bool ok = wl - 6 <= 5;
            for (size_t j = 6; ok && j < wl; j++) {
                if (w[j] < '0' || w[j] > '9') ok = false;
                else v = v * 10 + (uint32_t)(w[j] - '0');
            }
            if (!ok || v < 1 || v > DP_MAX_DISTANCE)
                return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: option \"%.*s\": t_max must be a whole number from 1 to %d",
                               f->name, (int)wl, w, DP_MAX_DISTANCE);
            cat = 3;
            o->t_max = v;
        }
        if (cat < 0) {
            expected_options(f, expected, sizeof expected);
            return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: unknown option \"%.*s\" (expected: %s)", f->name, (int)wl, w,
                           expected);
        }
        if (seen[cat] != NULL)
            return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: option \"%.*s\" conflicts with \"%.*s\"", f->name, (int)wl, w,
                           (int)seen_len[cat], seen[cat]);
        seen[cat] = w;
        seen_len[cat] = wl;
    }
    return DP_OK;
}

/* ---- Reading a row ---------------------------------------------------------------------------------- */

/* An integer value (SQLite types each value: a REAL, TEXT or BLOB unit is not one). */
static bool is_integer_value(const dp_reader *r, int i) {
    int64_t ignored;
    return r->type(r->ctx, i) == DP_ARG_NUMBER && r->integer(r->ctx, i, &ignored);
}

/* A private value of another type than the query's expression gives it (possible in SQLite only, which
 * types each value: TEXT, a BLOB, an array's JSON text where a number is expected, a number where an array
 * is) reads as NULL: the public rule, never a status. */
static bool reads_as_null(dp_arg_type t, bool array_expected) {
    return array_expected ? t != DP_ARG_ARRAY : t != DP_ARG_NUMBER;
}

/* Where values carry their own types (SQLite), a private array that does not parse (JSON text stored in a
 * column) reads as NULL too; out of memory stays an error, and so does a shape error of a typed engine.
 * DP_OK with *got set when it parsed. */
static dp_err_class private_array(const dp_reader *r, int i, dp_array *a, bool *got, dp_error *err) {
    *got = false;
    dp_err_class c = r->array(r->ctx, i, a, err);
    if (c == DP_ERR_ARGUMENT && r->per_value_types) return DP_OK;
    if (c == DP_OK) *got = true;
    return c;
}


static dp_err_class want_number(const dp_function *f, const dp_reader *r, int i, const char *what, double *out,
                                dp_error *err) {
    dp_arg_type t = r->type(r->ctx, i);
    if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must not be NULL", f->name, what);
    if (t != DP_ARG_NUMBER) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must be a number", f->name, what);
    *out = r->number(r->ctx, i);
    return DP_OK;
}

static dp_err_class positive(const dp_function *f, const char *what, double x, int status, dp_error *err) {
    char b[40];
    if (isfinite(x) && x > 0.0) return DP_OK;
    dp_format_double(x, b, sizeof b);
    return dp_fail(err, DP_ERR_ARGUMENT, status, "%s: %s must be a finite number greater than zero (got %s)", f->name,
                   what, b);
}

/* A public array argument: not NULL, one-dimensional, no NULL elements, m elements (m = 0: any, 1 to 16). */
static dp_err_class mismatch(const dp_function *f, const char *what, int64_t len, const char *other, int32_t m,
                             dp_error *err) {
    return dp_fail(err, DP_ERR_ARGUMENT, DPMO_LENGTH_MISMATCH,
                   "%s: %s has %lld element%s but %s has %d: every array needs one element per objective", f->name,
                   what, (long long)len, len == 1 ? "" : "s", other, m);
}

static dp_err_class public_array(const dp_function *f, const dp_reader *r, int i, const char *what, int32_t *m,
                                 const char **m_from, dp_array *a, dp_error *err) {
    dp_arg_type t = r->type(r->ctx, i);
    if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must not be NULL", f->name, what);
    if (t != DP_ARG_ARRAY) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must be an array of numbers", f->name, what);
    if (r->array(r->ctx, i, a, err) != DP_OK) return err->cls;
    if (a->ndim > 1) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must be a one-dimensional array", f->name, what);
    if (a->has_null) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must not contain NULL elements", f->name, what);
    if (*m == 0) {
        if (a->len < 1 || a->len > DP_MAX_OBJECTIVES)
            return dp_fail(err, DP_ERR_ARGUMENT, DPMO_CAPACITY_EXCEEDED,
                           "%s: %s must have 1 to %d elements, one per objective (got %lld)", f->name, what,
                           DP_MAX_OBJECTIVES, (long long)a->len);
        *m = (int32_t)a->len;
        *m_from = what;
    } else if (a->len != *m) {
        return mismatch(f, what, a->len, *m_from, *m, err);
    }
    return DP_OK;
}

/* ---- The discovery functions' public arguments ------------------------------------------------------- */

static const char *const PARTITION_MECHANISMS[] = {"truncated_geometric", "laplace", "gaussian", "weighted_gaussian",
                                                   "sips"}; /* in DPMO_PARTITION_* order */
#define DP_EXPECTED_MECHANISMS "truncated_geometric, laplace, gaussian, weighted_gaussian, sips, sips=R (1 <= R <= 8)"

static dp_err_class want_integer(const dp_function *f, const dp_reader *r, int i, const char *what, int64_t *out,
                                 dp_error *err) {
    dp_arg_type t = r->type(r->ctx, i);
    if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must not be NULL", f->name, what);
    if (!r->integer(r->ctx, i, out)) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must be an integer", f->name, what);
    return DP_OK;
}

/* The mechanism text of dp_discover_partitions: one word (blanks around it allowed), case-insensitive. */
static dp_err_class parse_mechanism(const dp_function *f, const char *text, size_t len, dp_options *o, dp_error *err) {
    size_t a = 0, b = len;
    if (len > DP_MAX_OPTIONS_TEXT)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the mechanism text is longer than %d bytes", f->name,
                       DP_MAX_OPTIONS_TEXT);
    while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\n')) a++;
    while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\n')) b--;
    const char *w = text + a;
    size_t wl = b - a;
    for (uint32_t m = 0; m < sizeof PARTITION_MECHANISMS / sizeof PARTITION_MECHANISMS[0]; m++)
        if (word_is(w, wl, PARTITION_MECHANISMS[m])) {
            o->mechanism = m;
            o->rounds = m == DPMO_PARTITION_SIPS ? 1 : 0;
            return DP_OK;
        }
    if (wl == 6 && word_is(w, 5, "sips=") && w[5] >= '1' && w[5] <= '0' + DPMO_PARTITION_MAX_ROUNDS) {
        o->mechanism = DPMO_PARTITION_SIPS;
        o->rounds = (uint32_t)(w[5] - '0');
        return DP_OK;
    }
    return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: unknown mechanism \"%.*s\" (expected: %s)", f->name, (int)(wl > 64 ? 64 : wl),
                   w, DP_EXPECTED_MECHANISMS);
}

static dp_err_class read_discovery_params(const dp_function *f, const dp_reader *r, dp_params *p, dp_error *err) {
    char b[40];
    if (r->nargs != f->nargs && r->nargs != f->nargs + 1)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: expected %d or %d arguments (%s [, %s]), got %d", f->name,
                       f->nargs, f->nargs + 1, f->signature, f->kind == DP_DISCOVER ? "mechanism" : "k_bar", r->nargs);
    /* Stored doubles per row: the item's bits; for the events score also the row's event count, for the sum
     * score the event's value (clamped): see dp_discover_compact. */
    p->m = f->score == DPMO_SCORE_UNITS ? 1 : 2;
    p->options.mechanism = DPMO_PARTITION_WEIGHTED_GAUSSIAN;
    if (want_number(f, r, f->epsilon, "epsilon", &p->epsilon, err)) return err->cls;
    if (positive(f, "epsilon", p->epsilon, DPMO_INVALID_EPSILON, err)) return err->cls;
    if (want_number(f, r, f->delta, "delta", &p->delta, err)) return err->cls;
    if (!(p->delta >= 0x1p-300 && p->delta < 1.0)) { /* NaN too */
        dp_format_double(p->delta, b, sizeof b);
        return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_ARGUMENT,
                       "%s: delta must be a number from 2^-300 up to, not including, 1 (got %s)", f->name, b);
    }
    if (want_integer(f, r, f->max_items, "max_items", &p->max_items, err)) return err->cls;
    if (p->max_items < 1 || p->max_items > DPMO_DISCOVER_MAX_ITEMS)
        return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_ARGUMENT, "%s: max_items must be from 1 to %d (got %lld)",
                       f->name, DPMO_DISCOVER_MAX_ITEMS, (long long)p->max_items);
    if (f->max_per_item >= 0) {
        if (want_integer(f, r, f->max_per_item, "max_per_item", &p->max_per_item, err)) return err->cls;
        if (p->max_per_item < 1 || p->max_per_item > (int64_t)UINT32_MAX)
            return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_ARGUMENT,
                           "%s: max_per_item must be from 1 to %lld (got %lld)", f->name, (long long)UINT32_MAX,
                           (long long)p->max_per_item);
    }
    if (f->lo >= 0) {
        char c[40];
        if (want_number(f, r, f->lo, "lo", &p->lo, err)) return err->cls;
        if (want_number(f, r, f->hi, "hi", &p->hi, err)) return err->cls;
        /* the C ABI's clamp for the sum score: 0 <= lo <= hi, hi > 0, M = hi within [2^-600, 2^600] */
        if (!(p->lo >= 0.0 && p->lo <= p->hi && p->hi >= 0x1p-600 && p->hi <= 0x1p600)) { /* NaN too */
            dp_format_double(p->lo, b, sizeof b);
            dp_format_double(p->hi, c, sizeof c);
            return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_ARGUMENT,
                           "%s: lo and hi must satisfy 0 <= lo <= hi and 2^-600 <= hi <= 2^600 (got lo = %s, hi = %s)",
                           f->name, b, c);
        }
        if (p->lo == 0.0) p->lo = 0.0; /* -0 is 0: one clamp, one stored value for a clamped 0 */
    }
    if (f->kind == DP_DISCOVER_TOP_K) {
        if (want_integer(f, r, f->k, "k", &p->k, err)) return err->cls;
        if (p->k < 1 || p->k > DPMO_DISCOVER_MAX_ITEMS)
            return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_ARGUMENT, "%s: k must be from 1 to %d (got %lld)", f->name,
                           DPMO_DISCOVER_MAX_ITEMS, (long long)p->k);
        p->k_bar = p->k;
        if (r->nargs == f->nargs + 1) {
            if (want_integer(f, r, f->k_bar, "k_bar", &p->k_bar, err)) return err->cls;
            if (p->k_bar < p->k || p->k_bar > DPMO_DISCOVER_MAX_ITEMS)
                return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_ARGUMENT,
                               "%s: k_bar must be from k = %lld to %d (got %lld)", f->name, (long long)p->k,
                               DPMO_DISCOVER_MAX_ITEMS, (long long)p->k_bar);
        }
    } else if (r->nargs == f->nargs + 1) {
        size_t len = 0;
        dp_arg_type t = r->type(r->ctx, f->nargs);
        if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the mechanism must not be NULL", f->name);
        if (t != DP_ARG_TEXT) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the mechanism must be text", f->name);
        const char *text = r->text(r->ctx, f->nargs, &len);
        if (parse_mechanism(f, text, len, &p->options, err)) return err->cls;
    }
    return DP_OK;
}

dp_err_class dp_read_params(const dp_function *f, int32_t function_index, const dp_reader *r, dp_params *p,
                            dp_error *err) {
    dp_array a;
    char p_m_from[32] = "the utilities array";
    memset(p, 0, sizeof *p);
    p->function = function_index;
    p->k = 1;
    if (dp_is_discovery(f)) return read_discovery_params(f, r, p, err);
    if (r->nargs != f->nargs && r->nargs != f->nargs + 1)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: expected %d or %d arguments (%s [, options]), got %d", f->name,
                       f->nargs, f->nargs + 1, f->signature, r->nargs);

    if (want_number(f, r, f->epsilon, "epsilon", &p->epsilon, err)) return err->cls;
    if (positive(f, "epsilon", p->epsilon, DPMO_INVALID_EPSILON, err)) return err->cls;

    if (f->k >= 0) {
        dp_arg_type t = r->type(r->ctx, f->k);
        if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: k must not be NULL", f->name);
        if (!r->integer(r->ctx, f->k, &p->k))
            return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: k must be an integer", f->name);
        if (p->k < 1) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: k must be at least 1 (got %lld)", f->name, (long long)p->k);
    }

    /* The number of objectives m, from the public arrays (weights, sensitivities) or, for global PrivPareto,
     * from the utilities array (m = 0 when that array is NULL: a data problem). */
    if (!is_array_kind(f->kind)) {
        p->m = 1;
        if (want_number(f, r, f->sensitivities, "the sensitivity", &p->sensitivities[0], err)) return err->cls;
        if (positive(f, "the sensitivity", p->sensitivities[0], DPMO_INVALID_SENSITIVITY, err)) return err->cls;
    } else {
        int32_t m = 0;
        const char *m_from = "";
        if (f->weights >= 0) {
            if (public_array(f, r, f->weights, "the weights array", &m, &m_from, &a, err)) return err->cls;
            bool nonzero = false;
            for (int32_t i = 0; i < m; i++) {
                char b[40];
                if (!isfinite(a.vals[i])) {
                    dp_format_double(a.vals[i], b, sizeof b);
                    return dp_fail(err, DP_ERR_ARGUMENT, DPMO_NON_FINITE_INPUT,
                                   "%s: every weight must be a finite number (weight %d is %s)", f->name, i + 1, b);
                }
                p->weights[i] = a.vals[i];
                nonzero |= a.vals[i] != 0.0;
            }
            if (!nonzero) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: at least one weight must be non-zero", f->name);
        }
        if (f->sensitivities >= 0) {
            if (public_array(f, r, f->sensitivities, "the sensitivities array", &m, &m_from, &a, err)) return err->cls;
            for (int32_t i = 0; i < m; i++) {
                char b[40];
                if (!(isfinite(a.vals[i]) && a.vals[i] > 0.0)) {
                    dp_format_double(a.vals[i], b, sizeof b);
                    return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_SENSITIVITY,
                                   "%s: every sensitivity must be a finite number greater than zero (sensitivity %d is %s)",
                                   f->name, i + 1, b);
                }
                p->sensitivities[i] = a.vals[i];
            }
        }
        /* The utilities array's length is public; its elements are data (NULL elements allowed here). */
        dp_arg_type t = r->type(r->ctx, f->utilities);
        bool got = false;
        if (!reads_as_null(t, true) && private_array(r, f->utilities, &a, &got, err) != DP_OK) return err->cls;
        if (got) {
            if (a.ndim > 1)
                return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the utilities array must be a one-dimensional array",
                               f->name);
            if (m == 0) {
                if (a.len < 1 || a.len > DP_MAX_OBJECTIVES)
                    return dp_fail(err, DP_ERR_ARGUMENT, DPMO_CAPACITY_EXCEEDED,
                                   "%s: the utilities array must have 1 to %d elements, one per objective (got %lld)",
                                   f->name, DP_MAX_OBJECTIVES, (long long)a.len);
                m = (int32_t)a.len;
                m_from = "the utilities array";
            } else if (a.len != m) {
                return mismatch(f, "the utilities array", a.len, m_from, m, err);
            }
        }
        p->m = m;
        if (m != 0) {
            /* for the deltas below */
            snprintf(p_m_from, sizeof p_m_from, "%s", m_from);
        }
    }

    /* The shape of the local sensitivities: numbers (width 1) or table rows (width T); -1 when NULL. */
    if (f->deltas >= 0) {
        dp_arg_type t = r->type(r->ctx, f->deltas);
        bool got = false;
        p->width = -1;
        if (f->kind == DP_SELECT_LOCAL) {
            if (t == DP_ARG_NUMBER) {
                p->width = 1;
            } else if (t == DP_ARG_ARRAY && private_array(r, f->deltas, &a, &got, err) != DP_OK) {
                return err->cls;
            } else if (got) {
                if (a.ndim > 1)
                    return dp_fail(err, DP_ERR_ARGUMENT, -1,
                                   "%s: delta must be a number or a one-dimensional array (a row of a delta table)",
                                   f->name);
                if (a.len < 1 || a.len > DP_MAX_DISTANCE)
                    return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: a delta table row must have 1 to %d values (got %lld)",
                                   f->name, DP_MAX_DISTANCE, (long long)a.len);
                p->width = (int32_t)a.len;
                p->table = 1;
            } /* anything else is private data read as NULL (reads_as_null): the shape stays unknown */
        } else if (t == DP_ARG_ARRAY && private_array(r, f->deltas, &a, &got, err) != DP_OK) {
            return err->cls;
        } else if (got) {
            if (a.ndim <= 1) {
                if (a.len != p->m) return mismatch(f, "the deltas array", a.len, p_m_from, p->m, err);
                p->width = 1;
            } else {
                if (a.dims[0] != p->m)
                    return dp_fail(err, DP_ERR_ARGUMENT, DPMO_LENGTH_MISMATCH,
                                   "%s: the deltas array has %lld rows but %s has %d: one row per objective", f->name,
                                   (long long)a.dims[0], p_m_from, p->m);
                if (a.dims[1] < 1 || a.dims[1] > DP_MAX_DISTANCE)
                    return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: a delta table row must have 1 to %d values (got %lld)",
                                   f->name, DP_MAX_DISTANCE, (long long)a.dims[1]);
                p->width = (int32_t)a.dims[1];
                p->table = 1;
            }
        } /* anything else is private data read as NULL (reads_as_null): the shape stays unknown */
    }

    if (r->nargs == f->nargs + 1) {
        int oi = f->nargs;
        dp_arg_type t = r->type(r->ctx, oi);
        size_t len = 0;
        if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the options must not be NULL", f->name);
        if (t != DP_ARG_TEXT) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the options must be text", f->name);
        const char *text = r->text(r->ctx, oi, &len);
        if (dp_options_parse(f, text, len, &p->options, err)) return err->cls;
    } else {
        dp_options_parse(f, "", 0, &p->options, err);
    }
    if (p->table && p->options.t_max != 0)
        return dp_fail(err, DP_ERR_ARGUMENT, -1,
                       "%s: option t_max applies to a delta given as a number; a delta table saturates at its width",
                       f->name);
    return DP_OK;
}

static dp_err_class differs(const dp_function *f, const char *what, dp_error *err) {
    return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must be the same in every row of a group", f->name, what);
}

dp_err_class dp_params_merge(const dp_function *f, dp_params *g, const dp_params *r, dp_error *err) {
    if (g->function != r->function) return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: rows of different functions", f->name);
    if (g->epsilon != r->epsilon) return differs(f, "epsilon", err);
    if (g->k != r->k) return differs(f, "k", err);
    if (g->delta != r->delta) return differs(f, "delta", err);
    if (g->max_items != r->max_items) return differs(f, "max_items", err);
    if (g->k_bar != r->k_bar) return differs(f, "k_bar", err);
    if (g->max_per_item != r->max_per_item) return differs(f, "max_per_item", err);
    if (g->lo != r->lo) return differs(f, "lo", err);
    if (g->hi != r->hi) return differs(f, "hi", err);
    if (memcmp(&g->options, &r->options, sizeof g->options) != 0)
        return differs(f, dp_is_discovery(f) ? "the mechanism" : "the options", err);
    if (g->m != 0 && r->m != 0 && g->m != r->m) return differs(f, "the number of objectives", err);
    if (memcmp(g->weights, r->weights, sizeof g->weights) != 0) return differs(f, "the weights array", err);
    if (memcmp(g->sensitivities, r->sensitivities, sizeof g->sensitivities) != 0)
        return differs(f, is_array_kind(f->kind) ? "the sensitivities array" : "the sensitivity", err);
    if (g->width >= 0 && r->width >= 0 && (g->width != r->width || g->table != r->table))
        return dp_fail(err, DP_ERR_ARGUMENT, -1,
                       "%s: the local sensitivities must have the same shape in every row of a group (numbers, or "
                       "table rows of one width)",
                       f->name);
    if (g->m == 0) g->m = r->m; /* shapes first seen on this row (earlier rows held NULLs) */
    if (g->width < 0) {
        g->width = r->width;
        g->table = r->table;
    }
    return DP_OK;
}

int64_t dp_row_vals(const dp_params *p) { return p->m > 0 ? p->m : 0; }

int64_t dp_row_dels(const dp_params *p) {
    return (dp_functions[p->function].deltas >= 0 && p->m > 0 && p->width > 0) ? (int64_t)p->m * p->width : 0;
}

void dp_fill_nan(double *v, int64_t count) {
    for (int64_t i = 0; i < count; i++) v[i] = NAN;
}

void dp_params_settle(dp_params *p) {
    if (p->m == 0) p->m = 1; /* every row's utilities were NULL: one objective, every value the lowest */
    if (dp_functions[p->function].deltas >= 0 && p->width < 0) {
        p->width = 1; /* every row's δ was NULL: δ = Δ for every candidate (NaN counts as Δ) */
        p->table = 0;
    }
}

/* Units and items are private: one that is not an integer value (NULL, or in SQLite a REAL, TEXT or BLOB)
 * drops its event by the public rule, never a status (a status that told a neighbouring dataset apart would
 * be a free probe). */
bool dp_row_dropped(const dp_function *f, const dp_reader *r) {
    return dp_is_discovery(f) && (!is_integer_value(r, f->id) || !is_integer_value(r, f->item));
}


dp_err_class dp_read_row(const dp_function *f, const dp_params *p, const dp_reader *r, int64_t *id,
                         double *utilities, double *deltas, dp_error *err) {
    dp_array a;
    if (dp_is_discovery(f)) {
        int64_t item;
        if (want_integer(f, r, f->id, "unit", id, err)) return err->cls;
        if (want_integer(f, r, f->item, "item", &item, err)) return err->cls;
        if (utilities == NULL) return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: no storage for the item", f->name);
        memcpy(utilities, &item, sizeof item); /* the item's 64 bits, never computed with */
        if (f->score == DPMO_SCORE_EVENTS) utilities[1] = 1.0; /* one event */
        if (f->score == DPMO_SCORE_SUM) {
            /* The value is private: NULL, NaN (and in SQLite a value of another type) count as 0, then every
             * value is clamped to [lo, hi] — the C ABI's public rule (src/discover/bound.rs), applied here
             * already so that equal kept values are equal bits (dp_discover_compact); the C ABI's own clamp
             * then changes nothing. Never a status. */
            double v = 0.0;
            dp_arg_type t = r->type(r->ctx, f->value);
            if (t == DP_ARG_NUMBER) v = r->number(r->ctx, f->value);
            else if (t != DP_ARG_NULL && !r->per_value_types)
                return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: the value must be a number", f->name);
            utilities[1] = dp_discover_value(p, v);
        }
        return DP_OK;
    }
    dp_arg_type t = r->type(r->ctx, f->id);
    if (t == DP_ARG_NULL) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: id must not be NULL", f->name);
    if (!r->integer(r->ctx, f->id, id)) return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: id must be an integer", f->name);

    /* Private values are never a status (issue 20.4): a NULL utility, or a NULL element, is NaN — the
     * lowest score — and a NULL δ is NaN, which the library counts as Δ. A pointer is NULL when the group
     * does not know the shape yet (every earlier row held a NULL array): the row is backfilled with NaN
     * once the shape is known (dp_row_vals, dp_row_dels). */
    if (utilities != NULL) {
        t = r->type(r->ctx, f->utilities);
        if (reads_as_null(t, is_array_kind(f->kind))) {
            dp_fill_nan(utilities, p->m);
        } else if (!is_array_kind(f->kind)) {
            if (t != DP_ARG_NUMBER)
                return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: %s must be a number", f->name,
                               f->kind == DP_SELECT ? "the score" : "the utility");
            utilities[0] = r->number(r->ctx, f->utilities);
        } else {
            bool got;
            if (private_array(r, f->utilities, &a, &got, err) != DP_OK) return err->cls;
            if (!got) {
                dp_fill_nan(utilities, p->m);
            } else {
                if (a.len != p->m) return differs(f, "the number of objectives", err);
                memcpy(utilities, a.vals, (size_t)p->m * sizeof(double)); /* NULL elements read as NaN */
            }
        }
    }
    if (f->deltas >= 0 && deltas != NULL) {
        int64_t len = (int64_t)p->m * p->width;
        t = r->type(r->ctx, f->deltas);
        bool got = false;
        if (t == DP_ARG_NUMBER) {
            deltas[0] = r->number(r->ctx, f->deltas);
        } else if (t == DP_ARG_ARRAY && private_array(r, f->deltas, &a, &got, err) != DP_OK) {
            return err->cls;
        } else if (!got) {
            dp_fill_nan(deltas, len); /* NULL, or private data of another type (reads_as_null) */
        } else {
            if (a.len != len) return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: delta shape", f->name);
            memcpy(deltas, a.vals, (size_t)a.len * sizeof(double)); /* NULL elements read as NaN */
        }
    }
    return DP_OK;
}

/* ---- Preparing and running a group ------------------------------------------------------------------ */

typedef struct id_row {
    int64_t id;
    int64_t row;
} id_row;

static int cmp_id_row(const void *a, const void *b) {
    int64_t x = ((const id_row *)a)->id, y = ((const id_row *)b)->id;
    return (x > y) - (x < y);
}

/* count · size bytes, or 0 when that overflows (a caller treats 0 as too large for n ≥ 1). */
static size_t bytes_of(int64_t count, size_t size) {
    if (count < 1) count = 1;
    if ((uint64_t)count > SIZE_MAX / size) return 0;
    return (size_t)count * size;
}

static void *alloc_n(const dp_alloc *a, int64_t count, size_t size) {
    size_t b = bytes_of(count, size);
    return b ? a->alloc(a->ctx, b) : NULL;
}

void dp_group_free(dp_group *g, const dp_alloc *a) {
    if (g->ids) a->free(a->ctx, g->ids);
    if (g->utilities) a->free(a->ctx, g->utilities);
    if (g->deltas) a->free(a->ctx, g->deltas);
    memset(g, 0, sizeof *g);
}

dp_err_class dp_group_prepare(const dp_params *p, int64_t n, const int64_t *ids, const double *utilities,
                              const double *deltas, const dp_alloc *a, dp_group *g, dp_error *err) {
    const dp_function *f = &dp_functions[p->function];
    memset(g, 0, sizeof *g);
    if (n < 1) return dp_fail(err, DP_ERR_ARGUMENT, DPMO_EMPTY_INPUT, "%s: the group has no rows", f->name);
    /* n is public (the candidates are), but it is not repeated here: where a deployment breaks that rule,
     * a free error should not hand out an exact count */
    if (p->k > n)
        return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: k = %lld exceeds the number of candidates in the group", f->name,
                       (long long)p->k);
    if (p->options.arithmetic == DPMO_ISOCHRONOUS) {
        /* The isochronous mechanism runs at epsilon/k less a slack (dpmo_isochronous_run_epsilon): a public
         * fact about epsilon, k and n, refused before the charge when nothing is left. */
        double run;
        if (dpmo_isochronous_run_epsilon(p->options.selector, p->epsilon, (size_t)n, (size_t)p->k, &run) != DPMO_OK)
            return dp_fail(err, DP_ERR_ARGUMENT, DPMO_INVALID_EPSILON,
                           "%s: epsilon is too small for the isochronous mode (add the option \"exact\")", f->name);
    }
    id_row *order = alloc_n(a, n, sizeof *order);
    if (order == NULL) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory for %lld candidates", f->name, (long long)n);
    for (int64_t i = 0; i < n; i++) {
        order[i].id = ids[i];
        order[i].row = i;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_id_row);
    for (int64_t i = 1; i < n; i++)
        if (order[i].id == order[i - 1].id) {
            long long dup = (long long)order[i].id;
            a->free(a->ctx, order);
            return dp_fail(err, DP_ERR_ARGUMENT, -1, "%s: id %lld appears more than once in the group", f->name, dup);
        }
    int64_t m = p->m, w = p->width > 0 ? p->width : 0;
    g->n = n;
    g->ids = alloc_n(a, n, sizeof(int64_t));
    if (utilities != NULL) {
        g->utilities = alloc_n(a, n * m, sizeof(double));
        if (w > 0 && deltas != NULL) g->deltas = alloc_n(a, n * m * w, sizeof(double));
    }
    if (g->ids == NULL || (utilities != NULL && g->utilities == NULL) ||
        (utilities != NULL && w > 0 && deltas != NULL && g->deltas == NULL)) {
        a->free(a->ctx, order);
        dp_group_free(g, a);
        return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory for %lld candidates", f->name, (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t r = order[i].row;
        g->ids[i] = order[i].id;
        if (g->utilities) memcpy(g->utilities + i * m, utilities + r * m, (size_t)m * sizeof(double));
        if (g->deltas)
            for (int64_t o = 0; o < m; o++)
                memcpy(g->deltas + (o * n + i) * w, deltas + (r * m + o) * w, (size_t)w * sizeof(double));
    }
    a->free(a->ctx, order);
    return DP_OK;
}

void dp_budget_refusal(char *buf, size_t len, const char *name, bool no_delta, double epsilon, double delta,
                       double epsilon_left, double delta_left) {
    char e[40], el[40], d[40], dl[40];
    dp_format_double(epsilon, e, sizeof e);
    dp_format_double(epsilon_left, el, sizeof el);
    dp_format_double(delta, d, sizeof d);
    dp_format_double(delta_left, dl, sizeof dl);
    if (no_delta)
        snprintf(buf, len,
                 "%s: the privacy budget has no delta (it was granted with epsilon only) but delta = %s is "
                 "requested; nothing was charged",
                 name, d);
    else if (delta > 0.0)
        snprintf(buf, len,
                 "%s: the privacy budget is exhausted (epsilon = %s requested, %s left; delta = %s requested, %s "
                 "left); nothing was charged",
                 name, e, el, d, dl);
    else
        snprintf(buf, len, "%s: the privacy budget is exhausted (epsilon = %s requested, %s left); nothing was charged",
                 name, e, el);
}

void dp_mechanism_label(const dp_params *p, char *buf, size_t len) {
    const dp_function *f = &dp_functions[p->function];
    if (f->kind == DP_DISCOVER) {
        if (p->options.mechanism == DPMO_PARTITION_SIPS)
            snprintf(buf, len, "%s/sips=%u", f->name, (unsigned)p->options.rounds);
        else
            snprintf(buf, len, "%s/%s", f->name, PARTITION_MECHANISMS[p->options.mechanism]);
        return;
    }
    if (f->kind == DP_DISCOVER_TOP_K) {
        snprintf(buf, len, "%s/durfee_rogers", f->name);
        return;
    }
    snprintf(buf, len, "%s/%s%s%s", f->name, SELECTORS[p->options.selector],
             is_local(f->kind) && p->options.dampening == DPMO_DAMPENING_SHIFTED ? "/shifted" : "",
             has_isochronous(f->kind) && p->options.arithmetic == 0 ? "/exact" : "");
}

static dp_err_class run_status(const dp_function *f, dpmo_status st, dp_error *err) {
    switch (st) {
    case DPMO_OK:
        return DP_OK;
    case DPMO_UNSUPPORTED: /* refused by the options parser already; kept for a library that refuses more */
    default: /* every argument was checked before the charge, and no status depends on the data: a bug */
        return dp_fail(err, DP_ERR_INTERNAL, (int)st, "%s: unexpected dpmo status %d: %s (epsilon was charged)", f->name,
                       (int)st, dpmo_status_message((uint32_t)st));
    }
}

/* The one place where the bindings call the selecting functions of the C ABI. */
dp_err_class dp_group_run(const dp_params *p, const dp_group *g, dpmo_rng *rng, const dp_alloc *a, int64_t *out,
                          dp_error *err) {
    const dp_function *f = &dp_functions[p->function];
    size_t n = (size_t)g->n, m = (size_t)p->m, k = (size_t)p->k;
    dpmo_sensitivity specs[DP_MAX_OBJECTIVES];
    size_t columns = 0;
    dpmo_status st;
    double *values = NULL;
    size_t *indices = NULL, *picks = NULL;
    size_t values_len = 0, indices_len = 0;
    dp_err_class cls = DP_OK;

    if (g->utilities == NULL || (is_local(f->kind) && g->deltas == NULL)) /* dp_params_settle was not called */
        return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: the group's rows have no shape (epsilon was charged)", f->name);
    if (is_local(f->kind)) {
        size_t w = (size_t)p->width;
        uint32_t t_max = p->options.t_max ? p->options.t_max : DP_DEFAULT_T_MAX;
        memset(specs, 0, sizeof specs);
        for (size_t i = 0; i < m; i++) {
            specs[i].values = g->deltas + i * n * w;
            specs[i].global = p->sensitivities[i];
            if (p->table) {
                specs[i].kind = DPMO_DELTA_TABLE;
                specs[i].values_len = n * w;
                specs[i].columns = w;
                specs[i].t_max = w;
            } else {
                specs[i].kind = DPMO_DELTA_PER_CANDIDATE;
                specs[i].values_len = n;
                specs[i].t_max = t_max;
            }
        }
        columns = p->table ? w : t_max;
    }
    picks = alloc_n(a, (int64_t)k, sizeof(size_t));
    if (picks == NULL) goto nomem;

    /* Scratch lengths from the library's helpers (enough for either arithmetic; exact is the default). */
    switch (f->kind) {
    case DP_SELECT:
        st = dpmo_top_k_scratch_len(n, p->options.selector, &values_len, &indices_len);
        break;
    case DP_SELECT_LOCAL:
        st = dpmo_local_dampening_scratch_len(n, k, p->options.selector, &values_len, &indices_len);
        break;
    case DP_PARETO:
    case DP_PARETO_LOCAL:
        st = dpmo_privpareto_scratch_len(n, m, &values_len, &indices_len);
        break;
    default:
        st = dpmo_privagg_scratch_len(n, m, &values_len, &indices_len);
        break;
    }
    if (st != DPMO_OK) {
        cls = run_status(f, st, err);
        goto done;
    }
    values = alloc_n(a, (int64_t)(values_len ? values_len : 1), sizeof(double));
    indices = alloc_n(a, (int64_t)(indices_len ? indices_len : 1), sizeof(size_t));
    if (values == NULL || indices == NULL || values_len > (size_t)INT64_MAX || indices_len > (size_t)INT64_MAX)
        goto nomem;

    switch (f->kind) {
    case DP_SELECT:
        st = dpmo_select_top_k(rng, p->options.selector | p->options.arithmetic, g->utilities, n, p->sensitivities[0],
                               p->epsilon, k, picks,
                               values, values_len, indices, indices_len, NULL);
        break;
    case DP_SELECT_LOCAL:
        if (k == 1)
            st = dpmo_select_local_dampening(rng, g->utilities, n, &specs[0], p->options.dampening,
                                             p->options.selector | p->options.arithmetic, p->epsilon, values,
                                             values_len,
                                             indices_len ? indices : NULL, indices_len, picks, NULL);
        else
            st = dpmo_select_local_dampening_top_k(rng, g->utilities, n, &specs[0], p->options.dampening,
                                                   p->options.selector | p->options.arithmetic, p->epsilon, k, picks,
                                                   values, values_len,
                                                   indices, indices_len, NULL);
        break;
    case DP_PARETO:
    case DP_PARETO_LOCAL:
        /* Local: delta^PS examined up to the deltas' saturation distance (<= 1024), n - 1 beyond. */
        st = dpmo_select_privpareto(rng, g->utilities, n, m, p->options.dominance,
                                    f->kind == DP_PARETO_LOCAL ? specs : NULL, f->kind == DP_PARETO_LOCAL ? columns : 0,
                                    p->options.dampening, p->options.selector, p->epsilon, k, picks, values, values_len,
                                    indices, indices_len, NULL);
        break;
    default:
        /* Local: delta_agg saturates where every delta_i does (max_distance 0, automatic; <= 1024). */
        st = dpmo_select_privagg(rng, g->utilities, n, m, p->weights, p->sensitivities,
                                 f->kind == DP_AGG_LOCAL ? specs : NULL, 0, p->options.dampening,
                                 p->options.selector | p->options.arithmetic,
                                 p->epsilon, k, picks, values, values_len, indices, indices_len, NULL);
        break;
    }
    cls = run_status(f, st, err);
done:
    if (cls == DP_OK)
        for (size_t i = 0; i < k; i++) {
            if (picks[i] >= n) { /* cannot happen; never index out of bounds */
                cls = dp_fail(err, DP_ERR_INTERNAL, -1, "%s: the library returned an index out of range", f->name);
                break;
            }
            out[i] = (int64_t)picks[i];
        }
    if (values) a->free(a->ctx, values);
    if (indices) a->free(a->ctx, indices);
    a->free(a->ctx, picks);
    return cls;
nomem:
    if (values) a->free(a->ctx, values);
    if (indices) a->free(a->ctx, indices);
    if (picks) a->free(a->ctx, picks);
    return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory for the scratch of %lld candidates (epsilon was charged)",
                   f->name, (long long)n);
}

/* ---- Discovery -------------------------------------------------------------------------------------- */

/*
 * Memory bounded by the bound parameters (issue 23.3): compaction of a group's buffered events.
 *
 * A discovery group would otherwise hold every event until it ends (16 bytes each: a unit with 10^6 events
 * costs 16 MB). The engines call dp_discover_compact whenever their buffer is full (before doubling it), and
 * dp_discover_prepare applies the same reduction to whatever reaches the final function. The reduction R
 * keeps, per unit u,
 *   - at most L = max_items of u's distinct items: the L smallest by the order (h(u, i), i), where h is
 *     SipHash-2-4 under a key fixed in this file (DP_DISCOVER_KEY0, _KEY1): "bottom-L by a keyed hash". The item
 *     breaks ties, so two items whose hashes collide still have an order and L is never exceeded;
 *   - per kept (u, i): one row (the units score and partition selection, where one contribution is all
 *     that counts); for the events score one row holding min(events, C); for the sum score the C smallest
 *     values by the order (h(u, i, v), v) (values as clamped bits), with multiplicity: copies of one value
 *     are interchangeable, so which of them is kept does not matter.
 *
 * Why it is safe (the privacy argument). R is applied unit by unit: the rows R keeps for u are a function
 * of u's own events and the fixed key only — not of other units' rows, of the row order, of when or how
 * often compaction ran, or of how the engine split the group into partial states (PostgreSQL's parallel
 * workers combine serialised states, DuckDB combines thread-local states). This holds because each
 * reduction is a bottom-s under a total order on the rows of (u) or (u, i), and bottom-s is idempotent and
 * mergeable: bottom(bottom(A) ∪ B) = bottom(A ∪ B), as is the min(count, C) of the events score
 * (min(min(a, C) + b, C) = min(a + b, C)). Every partial state of a query uses the same key (compiled in),
 * and the final function applies R once more, so the result is R(all events of the group) whatever ran
 * before. A deterministic per-unit map sends neighbouring datasets (differing in all events of one unit)
 * to neighbouring datasets of at most L items per unit (C events per item), so the C ABI's
 * (ε, δ)-DP mechanism stays (ε, δ)-DP on top of it. The key need not be secret: DP holds for every fixed
 * per-unit rule, so knowing it tells an analyst nothing the guarantee does not already allow; a secret or
 * random key would add no privacy. The utility consequence (bindings/SQL.md): the kept subset is a
 * pseudo-random but fixed choice instead of the C ABI's fresh uniformly random one per call, so a unit
 * with more than L items keeps the same L items in every query.
 *
 * After R, every unit has at most L items and at most C events per item: the C ABI's own bounding then
 * keeps everything (its random choice has nothing to choose), and the group's memory is
 * O(min(events, units · L)) rows (units · L · C for the sum score).
 */

/* SipHash-2-4 key: fixed, public, the same in every process and partial state: "dpmo-sql" "-bottomL" as
 * little-endian words. */
static const uint64_t DP_DISCOVER_KEY0 = 0x6c71732d6f6d7064ULL, DP_DISCOVER_KEY1 = 0x4c6d6f74746f622dULL;

static uint64_t rotl64(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

#define SIP_ROUND(v0, v1, v2, v3)                                                                                      \
    do {                                                                                                               \
        v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32);                                                  \
        v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2;                                                                       \
        v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0;                                                                       \
        v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32);                                                  \
    } while (0)

/* SipHash-2-4 of nw 64-bit words (the message is their little-endian bytes, 8 · nw of them). */
static uint64_t dp_siphash(const uint64_t *w, int nw) {
    uint64_t v0 = DP_DISCOVER_KEY0 ^ 0x736f6d6570736575ULL, v1 = DP_DISCOVER_KEY1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = DP_DISCOVER_KEY0 ^ 0x6c7967656e657261ULL, v3 = DP_DISCOVER_KEY1 ^ 0x7465646279746573ULL;
    for (int i = 0; i < nw; i++) {
        v3 ^= w[i];
        SIP_ROUND(v0, v1, v2, v3);
        SIP_ROUND(v0, v1, v2, v3);
        v0 ^= w[i];
    }
    uint64_t b = (uint64_t)(8 * nw) << 56;
    v3 ^= b;
    SIP_ROUND(v0, v1, v2, v3);
    SIP_ROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++) SIP_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

double dp_discover_value(const dp_params *p, double v) {
    if (isnan(v)) v = 0.0;
    if (v < p->lo) v = p->lo;
    if (v > p->hi) v = p->hi;
    return v == 0.0 ? 0.0 : v; /* -0 is 0 */
}

/* One buffered row while compacting: the unit, its item's rank h(u, i), the item, the value's rank
 * h(u, i, v) (sum score; 0 elsewhere) and the row's second double (events: a count; sum: a value). */
typedef struct dp_ev {
    int64_t unit;
    uint64_t rank, item, vrank, vbits;
} dp_ev;

static int cmp_u64(uint64_t x, uint64_t y) { return (x > y) - (x < y); }

static int cmp_ev(const void *pa, const void *pb) {
    const dp_ev *a = pa, *b = pb;
    int c = (a->unit > b->unit) - (a->unit < b->unit);
    if (c == 0) c = cmp_u64(a->rank, b->rank);
    if (c == 0) c = cmp_u64(a->item, b->item);
    if (c == 0) c = cmp_u64(a->vrank, b->vrank);
    if (c == 0) c = cmp_u64(a->vbits, b->vbits);
    return c;
}

/* Loads rows into records (with their ranks) and sorts them. */
static void load_events(const dp_params *p, int64_t n, const int64_t *units, const double *rows, dp_ev *ev) {
    const dp_function *f = &dp_functions[p->function];
    int64_t m = dp_row_vals(p);
    for (int64_t r = 0; r < n; r++) {
        dp_ev *e = &ev[r];
        uint64_t w[3];
        e->unit = units[r];
        memcpy(&e->item, &rows[r * m], sizeof e->item);
        e->vbits = 0;
        if (m > 1) memcpy(&e->vbits, &rows[r * m + 1], sizeof e->vbits);
        w[0] = (uint64_t)e->unit;
        w[1] = e->item;
        w[2] = e->vbits;
        e->rank = dp_siphash(w, 2);
        e->vrank = f->score == DPMO_SCORE_SUM ? dp_siphash(w, 3) : 0;
#ifdef DPMO_SQL_TEST_BROKEN_FIRST_L
        e->rank = 0;
        e->vrank = (uint64_t)r; /* the row's position, for the broken order below */
#endif
    }
    qsort(ev, (size_t)n, sizeof *ev, cmp_ev);
#ifdef DPMO_SQL_TEST_BROKEN_FIRST_L
    /* A deliberately broken build for the tests (bindings/sqlite/Makefile, build/broken): a unit keeps the
     * FIRST L items it shows (by position in the buffer, which compaction preserves), an order-dependent rule
     * that the order-independence tests must catch. */
    for (int64_t r = 0, start = 0; r <= n; r++) {
        if (r == n || ev[r].unit != ev[start].unit || ev[r].item != ev[start].item) {
            for (int64_t j = start; j < r; j++) ev[j].rank = ev[start].vrank;
            start = r;
        }
    }
    for (int64_t r = 0; r < n; r++) ev[r].vrank = 0;
    qsort(ev, (size_t)n, sizeof *ev, cmp_ev);
#endif
}

/* The reduction R on sorted records, in place: returns the number kept. */
static int64_t reduce_events(const dp_params *p, dp_ev *ev, int64_t n) {
    const dp_function *f = &dp_functions[p->function];
    int64_t out = 0, items = 0, per = 0;
    for (int64_t r = 0; r < n; r++) {
        bool new_unit = r == 0 || ev[r].unit != ev[r - 1].unit;
        bool new_item = new_unit || ev[r].item != ev[r - 1].item;
        if (new_unit) items = 0;
        if (new_item) {
            items++;
            per = 0;
        }
        if (items > p->max_items) continue; /* beyond the unit's bottom L */
        if (f->score == DPMO_SCORE_EVENTS) {
            double c, add;
            memcpy(&add, &ev[r].vbits, sizeof add);
            if (new_item) {
                ev[out++] = ev[r];
                c = 0.0;
            } else {
                memcpy(&c, &ev[out - 1].vbits, sizeof c);
            }
            c += add; /* both at most C ≤ 2^32 − 1: exact */
            if (c > (double)p->max_per_item) c = (double)p->max_per_item;
            memcpy(&ev[out - 1].vbits, &c, sizeof c);
        } else if (f->score == DPMO_SCORE_SUM) {
            if (per < p->max_per_item) ev[out++] = ev[r]; /* the bottom C values */
            per++;
        } else if (new_item) {
            ev[out++] = ev[r];
        }
    }
    return out;
}

dp_err_class dp_discover_compact(const dp_params *p, int64_t n, int64_t *units, double *rows, const dp_alloc *a,
                                 int64_t *n_out, dp_error *err) {
    const dp_function *f = &dp_functions[p->function];
    int64_t m = dp_row_vals(p);
    *n_out = n;
    if (!dp_is_discovery(f) || n < 0 || m < 1)
        return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: not a discovery group", f->name);
    if (n < 2) return DP_OK;
    dp_ev *ev = alloc_n(a, n, sizeof *ev);
    if (ev == NULL) return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory", f->name);
    load_events(p, n, units, rows, ev);
    int64_t k = reduce_events(p, ev, n);
    for (int64_t r = 0; r < k; r++) {
        units[r] = ev[r].unit;
        memcpy(&rows[r * m], &ev[r].item, sizeof ev[r].item);
        if (m > 1) memcpy(&rows[r * m + 1], &ev[r].vbits, sizeof ev[r].vbits);
    }
    a->free(a->ctx, ev);
    *n_out = k;
    return DP_OK;
}

int64_t dp_discover_next_cap(int64_t n, int64_t cap, int64_t want) {
    int64_t c = cap > 0 ? cap : 64;
    if (want <= c && 2 * n <= c) return c; /* compaction freed at least half: no growth */
    while (c < want || 2 * n > c) c *= 2;
    return c;
}

void dp_discover_free(dp_discovery *d, const dp_alloc *a) {
    if (d->units) a->free(a->ctx, d->units);
    if (d->items) a->free(a->ctx, d->items);
    if (d->values) a->free(a->ctx, d->values);
    if (d->scratch) a->free(a->ctx, d->scratch);
    if (d->work) a->free(a->ctx, d->work);
    if (d->out) a->free(a->ctx, d->out);
    memset(d, 0, sizeof *d);
}

/* The C ABI call of any discovery function on the first n events of d. */
static dpmo_status discover_call(const dp_params *p, dp_discovery *d, size_t n, dpmo_rng *rng) {
    const dp_function *f = &dp_functions[p->function];
    if (f->kind == DP_DISCOVER) {
        memset(&d->result, 0, sizeof d->result);
        return dpmo_discover_partitions(rng, d->units, d->items, n, (size_t)p->max_items, p->options.mechanism,
                                        p->options.rounds, p->epsilon, p->delta, d->scratch, d->scratch_len, d->out,
                                        d->out_len, &d->count, NULL);
    }
    /* units: a unit adds at most 1 to an item, whatever C: C = 1 */
    bool sum = f->score == DPMO_SCORE_SUM;
    size_t c = f->score == DPMO_SCORE_UNITS ? 1 : (size_t)p->max_per_item;
    dpmo_status st = dpmo_discover_top_k(rng, d->units, d->items, sum ? d->values : NULL, n, (size_t)p->max_items, c,
                                         sum ? p->lo : 0.0, sum ? p->hi : 0.0, f->score, (size_t)p->k,
                                         (size_t)p->k_bar, p->epsilon, p->delta, d->scratch, d->scratch_len, d->work,
                                         d->work_len, d->out, d->out_len, &d->result, NULL);
    if (st == DPMO_OK) d->count = d->result.count;
    return st;
}

dp_err_class dp_discover_prepare(const dp_params *p, int64_t n, const int64_t *units, const double *rows,
                                 const dp_alloc *a, dp_discovery *d, dp_error *err) {
    const dp_function *f = &dp_functions[p->function];
    size_t words = 0;
    int64_t kept = 0, events = 0;
    dp_ev *ev = NULL;
    memset(d, 0, sizeof *d);
    if (!dp_is_discovery(f) || n < 0 || (n > 0 && (units == NULL || rows == NULL)))
        return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: not a discovery group", f->name);
    /* R once more (whether or not the engine compacted), then one C ABI event per kept event */
    if (n > 0) {
        ev = alloc_n(a, n, sizeof *ev);
        if (ev == NULL) goto nomem;
        load_events(p, n, units, rows, ev);
        kept = reduce_events(p, ev, n);
    }
    for (int64_t r = 0; r < kept; r++) {
        double c = 1.0;
        if (f->score == DPMO_SCORE_EVENTS) memcpy(&c, &ev[r].vbits, sizeof c);
        events += (int64_t)c; /* kept ≤ 2^31 rows of at most C ≤ 2^32 − 1 events: no overflow */
    }
    d->n = (size_t)events;
    if (dpmo_discover_scratch_len(d->n, &words) != DPMO_OK) goto nomem;
    d->scratch_len = words ? words : 1;
    d->scratch = alloc_n(a, (int64_t)d->scratch_len, sizeof(uint64_t));
    d->units = alloc_n(a, events, sizeof(uint64_t));
    d->items = alloc_n(a, events, sizeof(uint64_t));
    if (f->score == DPMO_SCORE_SUM && (d->values = alloc_n(a, events, sizeof(double))) == NULL) goto nomem;
    if (f->kind == DP_DISCOVER_TOP_K) {
        if (dpmo_discover_top_k_work_len((size_t)p->k_bar, &words) != DPMO_OK) goto nomem;
        d->work_len = words;
        d->work = alloc_n(a, (int64_t)words, sizeof(uint64_t));
        d->out_len = (size_t)p->k;
    } else {
        d->out_len = events > 0 ? (size_t)events : 1;
    }
    d->out = alloc_n(a, (int64_t)d->out_len, sizeof(uint64_t));
    if (d->scratch == NULL || d->units == NULL || d->items == NULL || d->out == NULL ||
        (f->kind == DP_DISCOVER_TOP_K && d->work == NULL))
        goto nomem;
    {
        size_t e = 0;
        for (int64_t r = 0; r < kept; r++) {
            int64_t c = 1;
            if (f->score == DPMO_SCORE_EVENTS) {
                double cd;
                memcpy(&cd, &ev[r].vbits, sizeof cd);
                c = (int64_t)cd;
            }
            for (int64_t j = 0; j < c; j++, e++) {
                d->units[e] = (uint64_t)ev[r].unit;
                d->items[e] = ev[r].item; /* the item's bits (dp_read_row) */
                if (d->values) memcpy(&d->values[e], &ev[r].vbits, sizeof(double));
            }
        }
    }
    if (ev) a->free(a->ctx, ev);
    ev = NULL;

    /* Every public argument the C ABI checks (the exact samplers' ranges too), before the charge: the same
     * call on no events, with a generator of its own (the caller's draws one key, in the run, whatever). */
    {
        dpmo_rng probe;
        uint8_t seed[32];
        memset(seed, 0, sizeof seed);
        dpmo_status st = dpmo_rng_init(&probe, DPMO_RNG_CHACHA20, seed);
        if (st == DPMO_OK) st = discover_call(p, d, 0, &probe);
        d->count = 0;
        memset(&d->result, 0, sizeof d->result);
        if (st != DPMO_OK) {
            dp_discover_free(d, a);
            if (st == DPMO_INVALID_ARGUMENT || st == DPMO_INVALID_EPSILON)
                return dp_fail(err, DP_ERR_ARGUMENT, (int)st,
                               "%s: epsilon, delta and max_items are outside the exact samplers' ranges (%s)", f->name,
                               dpmo_status_message((uint32_t)st));
            return dp_fail(err, DP_ERR_INTERNAL, (int)st, "%s: unexpected dpmo status %d: %s; nothing was charged",
                           f->name, (int)st, dpmo_status_message((uint32_t)st));
        }
    }
    return DP_OK;
nomem:
    if (ev) a->free(a->ctx, ev);
    dp_discover_free(d, a);
    return dp_fail(err, DP_ERR_NOMEM, -1, "%s: out of memory for %lld events; nothing was charged", f->name,
                   (long long)n);
}

bool dp_discover_refund_due(const dp_params *p, const dp_discovery *d, double *epsilon, double *delta) {
    *epsilon = p->epsilon;
    *delta = p->delta;
    if (dp_functions[p->function].kind != DP_DISCOVER_TOP_K) return false;
    const dpmo_top_k_result *r = &d->result;
    /* the C ABI's settlement amounts, never above the charge (checked again by the ledgers) */
    if (!(r->epsilon > 0.0 && r->epsilon <= p->epsilon && r->delta >= 0.0 && r->delta <= p->delta)) return false;
    if (!(r->epsilon < p->epsilon || r->delta < p->delta)) return false;
    *epsilon = r->epsilon;
    *delta = r->delta;
    return true;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return (x > y) - (x < y);
}

dp_err_class dp_discover_run(const dp_params *p, dp_discovery *d, dpmo_rng *rng, dp_error *err) {
    const dp_function *f = &dp_functions[p->function];
    dpmo_status st = discover_call(p, d, d->n, rng);
    if (st != DPMO_OK)
        return dp_fail(err, DP_ERR_INTERNAL, (int)st, "%s: unexpected dpmo status %d: %s (epsilon and delta were charged)",
                       f->name, (int)st, dpmo_status_message((uint32_t)st));
    if (d->count > d->out_len) {
        d->count = 0;
        return dp_fail(err, DP_ERR_INTERNAL, -1, "%s: the library released more items than it has room for", f->name);
    }
    /* The C ABI sorts the released items as 64-bit patterns; SQL's order is BIGINT's (post-processing). */
    if (f->kind == DP_DISCOVER) qsort(d->out, d->count, sizeof(uint64_t), cmp_i64);
    return DP_OK;
}
