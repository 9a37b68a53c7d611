/*
 * dp_sql.h: the SQL surface of dpmo, shared by the PostgreSQL and SQLite bindings (bindings/SQL.md).
 *
 * One table of functions, one argument layout, one options parser, one set of error texts, and the only
 * calls into the dpmo C ABI that select something. Each engine supplies
 *   - a row reader (how to read argument i of the current row: NULL, number, integer, array, text),
 *   - an allocator (palloc or sqlite3_malloc),
 *   - the storage of the group's rows, and the privacy ledger that is charged between dp_group_prepare
 *     (argument checks: nothing charged when they fail) and dp_group_run (the data is examined: a failure
 *     keeps the charge).
 *
 * Plain C11, no engine headers, no global state, no allocation except through the caller's allocator.
 */
#ifndef DP_SQL_H
#define DP_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dpmo.h"

#define DP_MAX_OBJECTIVES DPMO_MAX_OBJECTIVES /* 16 */
#define DP_MAX_DISTANCE 1024                  /* bound of t_max and of a δ table's width */
#define DP_DEFAULT_T_MAX 64                   /* saturation distance of a δ given as a number */
#define DP_MAX_OPTIONS_TEXT 256               /* bytes of the options argument */
#define DP_MAX_ROWS ((int64_t)1 << 31)        /* candidates in one group */
#define DP_MSG_LEN 400

/* What a failure means for the budget. */
typedef enum dp_err_class {
    DP_OK = 0,
    DP_ERR_ARGUMENT, /* a public argument is wrong: found before the charge, nothing charged */
    DP_ERR_NOMEM,    /* out of memory */
    DP_ERR_INTERNAL  /* cannot happen; reported rather than ignored */
} dp_err_class;

typedef struct dp_error {
    dp_err_class cls;
    int status; /* the dpmo_status behind it, or -1 */
    char msg[DP_MSG_LEN];
} dp_error;

typedef enum dp_kind {
    DP_SELECT,       /* one score per row, global sensitivity */
    DP_SELECT_LOCAL, /* one utility and its local sensitivity per row: local dampening */
    DP_PARETO,       /* m utilities per row: PrivPareto, global */
    DP_PARETO_LOCAL, /* m utilities and m local sensitivities: PrivPareto, local (δ^PS) */
    DP_AGG,          /* m utilities, weights and sensitivities: PrivAgg, global */
    DP_AGG_LOCAL,    /* m utilities, weights, local sensitivities: PrivAgg, local (δ_agg) */
    DP_DISCOVER,     /* raw events (unit, item): partition selection (dpmo_discover_partitions) */
    DP_DISCOVER_TOP_K /* raw events (unit, item): unknown-domain top-k (dpmo_discover_top_k) */
} dp_kind;

typedef struct dp_function {
    const char *name;
    dp_kind kind;
    bool top_k;
    /* Argument positions (0-based; -1 when absent). The options text, optional, follows the last. */
    int id, epsilon, k, weights, utilities, deltas, sensitivities;
    int nargs; /* without the options (for the discovery functions: without the optional last argument) */
    const char *signature;
    /* The discovery functions' arguments (-1 elsewhere): the event's item, delta, L, k̄. Their unit is `id`;
     * dp_discover_partitions' optional last argument is its mechanism (text), dp_discover_top_k's is k̄. */
    int item, delta, max_items, k_bar;
    /* dp_discover_top_k_events and dp_discover_top_k_sum (-1 elsewhere): the event's value (sum), C, lo, hi;
     * and the top-k score (DPMO_SCORE_*; DPMO_SCORE_UNITS for every other function). */
    int value, max_per_item, lo, hi;
    uint32_t score;
} dp_function;

/* True for the discovery functions (rows are raw events, not candidates). */
bool dp_is_discovery(const dp_function *f);

/* True when argument i (0-based) of f is a public argument (ε, k, weights, sensitivities, δ, L, C, lo, hi,
 * k̄, options), false for the row's data. */
bool dp_is_public_arg(const dp_function *f, int i);

extern const dp_function dp_functions[];
extern const size_t dp_function_count;
const dp_function *dp_function_find(const char *name);

typedef struct dp_options {
    uint32_t selector;  /* DPMO_SELECTOR_* */
    uint32_t dampening; /* DPMO_DAMPENING_*, local forms */
    uint32_t dominance; /* DPMO_DOMINANCE_*, PrivPareto */
    uint32_t t_max;     /* saturation distance of a δ given as a number, local forms */
    uint32_t arithmetic; /* DPMO_ISOCHRONOUS (the default where it exists: dp_select*) or 0 (exact) */
    uint32_t mechanism;  /* DPMO_PARTITION_*, dp_discover_partitions */
    uint32_t rounds;     /* DP-SIPS rounds (1 to 8), 0 for the other mechanisms */
} dp_options;

/* The public constants of a group: the same in every row. Plain data (serialised as is by PostgreSQL). */
typedef struct dp_params {
    int32_t function; /* index into dp_functions */
    int32_t m;        /* objectives (1 for dp_select*) */
    int32_t width;    /* δ values per objective and row: 0 (no δ), 1 (a number) or T (a table row) */
    int32_t table;    /* 1 when the δ are table rows (Δ from T on), 0 when numbers (Δ from t_max on) */
    int64_t k;        /* picks (1 for the single-result functions) */
    double epsilon;
    double delta;     /* what the group's selection charges besides ε: 0 for every pure-ε function */
    double weights[DP_MAX_OBJECTIVES];
    double sensitivities[DP_MAX_OBJECTIVES];
    dp_options options;
    int64_t max_items; /* L, the discovery functions (0 elsewhere) */
    int64_t k_bar;     /* k̄, dp_discover_top_k* (0 elsewhere) */
    int64_t max_per_item; /* C, dp_discover_top_k_events and _sum (0 elsewhere) */
    double lo, hi;        /* the clamp of the values, dp_discover_top_k_sum (0 elsewhere) */
} dp_params;

/* ---- Reading one row ------------------------------------------------------------------------------ */

typedef enum dp_arg_type { DP_ARG_NULL, DP_ARG_NUMBER, DP_ARG_ARRAY, DP_ARG_TEXT, DP_ARG_OTHER } dp_arg_type;

/* An array argument: 1-D (dims[1] = 0) or 2-D, row-major; NULL elements are NaN with has_null set. */
typedef struct dp_array {
    int ndim; /* 0 (empty), 1 or 2 */
    int64_t dims[2];
    int64_t len;
    const double *vals;
    bool has_null;
} dp_array;

typedef struct dp_reader {
    void *ctx;
    int nargs; /* arguments of this call, options included */
    dp_arg_type (*type)(void *ctx, int i);
    double (*number)(void *ctx, int i);
    /* true and *out when argument i is an integer (SQL bigint/int, or SQLite INTEGER) */
    bool (*integer)(void *ctx, int i, int64_t *out);
    /* DP_OK and *out (valid until the next row) when argument i is an array; else an error */
    dp_err_class (*array)(void *ctx, int i, dp_array *out, dp_error *err);
    /* the text of argument i (not NUL-terminated) */
    const char *(*text)(void *ctx, int i, size_t *len);
    /* true where each value has a type of its own (SQLite): a private value may then be of another type than
     * its expression, or an array's JSON text that does not parse, and reads as NULL (the public rule); false
     * where the query fixes every argument's type (PostgreSQL, DuckDB), whose array errors are about shapes */
    bool per_value_types;
} dp_reader;

/*
 * Reads the public arguments of the current row into *p (function, ε, k, m, δ shape, weights,
 * sensitivities, options) and checks them. Errors are DP_ERR_ARGUMENT.
 */
dp_err_class dp_read_params(const dp_function *f, int32_t function_index, const dp_reader *r, dp_params *p,
                            dp_error *err);

/*
 * Compares a row's public arguments with the group's (every row must repeat them). A shape the group does
 * not know yet (m = 0 or width = -1: its earlier rows held NULLs) is taken from the row.
 */
dp_err_class dp_params_merge(const dp_function *f, dp_params *group, const dp_params *row, dp_error *err);

/*
 * Reads the row's candidate: its id (an argument error when NULL or not an integer), m utilities and, for
 * the local forms, m · width local sensitivities (objective-major within the row). Private values are
 * never a status: a NULL utility or element is stored as NaN (the lowest score), a NULL δ as NaN (counted
 * as Δ). utilities (deltas) is NULL while the group does not know m (width) yet: nothing is stored then.
 */
dp_err_class dp_read_row(const dp_function *f, const dp_params *p, const dp_reader *r, int64_t *id,
                         double *utilities, double *deltas, dp_error *err);

/*
 * The discovery functions' public rule for events with a NULL unit or item: they are dropped (not events),
 * never an error. True when the current row is such a row of a discovery function: the engine checks the
 * row's public arguments (dp_read_params, dp_params_merge) and then stores nothing.
 */
bool dp_row_dropped(const dp_function *f, const dp_reader *r);

/* Doubles stored per row for the utilities and for the local sensitivities: 0 while the group does not know
 * the shape (rows read before it are NaN, to be written with dp_fill_nan when the stride becomes known). */
int64_t dp_row_vals(const dp_params *p);
int64_t dp_row_dels(const dp_params *p);
void dp_fill_nan(double *v, int64_t count);

/* Before preparing a group: a shape never seen (every row NULL) becomes m = 1, width = 1 (all NaN). */
void dp_params_settle(dp_params *p);

/* Parses the options text (NUL-terminated) for function f. */
dp_err_class dp_options_parse(const dp_function *f, const char *text, size_t len, dp_options *o, dp_error *err);

/* ---- The selection --------------------------------------------------------------------------------- */

typedef struct dp_alloc {
    void *ctx;
    void *(*alloc)(void *ctx, size_t bytes); /* NULL when out of memory; bytes may exceed 1 GB */
    void (*free)(void *ctx, void *p);
} dp_alloc;

/* A group ready to select from: rows sorted by id (unique). Freed with dp_group_free. */
typedef struct dp_group {
    int64_t n;
    int64_t *ids;      /* n, ascending */
    double *utilities; /* n · m, row-major */
    double *deltas;    /* m blocks of n · width (objective-major: what dpmo_sensitivity wants), or NULL */
} dp_group;

/*
 * Checks before the charge (public facts: the group is not empty, k ≤ n, ids unique) and builds the sorted
 * group from the engine's rows (ids[n], utilities[n · m], deltas[n · m · width], each row as dp_read_row
 * wrote it). Errors: DP_ERR_ARGUMENT or DP_ERR_NOMEM; nothing to free then.
 */
dp_err_class dp_group_prepare(const dp_params *p, int64_t n, const int64_t *ids, const double *utilities,
                              const double *deltas, const dp_alloc *a, dp_group *g, dp_error *err);

/*
 * Runs the mechanism (call it once the ledger has been charged ε = p->epsilon): writes the k chosen rows
 * of the sorted group to out[0..k) (indices into g->ids), in pick order. No status depends on the private
 * values. Errors: DP_ERR_NOMEM, DP_ERR_INTERNAL (a bug; the charge stays).
 */
dp_err_class dp_group_run(const dp_params *p, const dp_group *g, dpmo_rng *rng, const dp_alloc *a, int64_t *out,
                          dp_error *err);

void dp_group_free(dp_group *g, const dp_alloc *a);

/* ---- Discovery (dp_discover_partitions, dp_discover_top_k, dp_discover_top_k_events, _sum) -------------
 *
 * The engines store a discovery group like the others: ids[n] holds each row's unit and the m doubles per
 * row hold its item's 64 bits (copied with memcpy by dp_read_row, never computed with) and, for the events
 * score, the row's count of events (1 when read, up to C after compaction), for the sum score the event's
 * clamped value. Their buffering, parallel combine and serialisation need nothing new. Memory stays
 * bounded by the bound parameters: when a buffer is full the engine compacts it (dp_discover_compact) and
 * grows it only to dp_discover_next_cap; see the privacy argument in dp_sql.c.
 */

/* The stored value of the sum score: NaN (a NULL value) counts as 0, then clamped to [lo, hi]; -0 is 0. */
double dp_discover_value(const dp_params *p, double v);

/*
 * Compacts a discovery group's rows in place (units[n], rows[n · m]): keeps per unit the bottom max_items
 * of its distinct items by a keyed hash, per kept (unit, item) one row (the events score: its count capped
 * at C; the sum score: the bottom C values by a keyed hash). Writes the rows kept to *n_out (≤ n); their
 * order is unspecified. The result is a function of each unit's own rows only (idempotent and mergeable),
 * so compacting at any time, in any partial state, never changes what a group releases.
 * Errors: DP_ERR_NOMEM (a temporary of 40 bytes per row), DP_ERR_INTERNAL; the rows are unchanged then.
 */
dp_err_class dp_discover_compact(const dp_params *p, int64_t n, int64_t *units, double *rows, const dp_alloc *a,
                                 int64_t *n_out, dp_error *err);

/* The capacity a discovery buffer of capacity cap grows to once compacted to n rows, to hold want rows: cap
 * itself when want fits and the compaction freed at least half (so compactions cost O(log) per row,
 * amortised), else cap doubled until both hold. cap = 0: from 64. */
int64_t dp_discover_next_cap(int64_t n, int64_t cap, int64_t want);

typedef struct dp_discovery {
    size_t n;                 /* the events handed to the C ABI (after the reduction) */
    uint64_t *units, *items;  /* n each */
    double *values;           /* n: the sum score's values, else NULL */
    uint64_t *scratch, *work; /* dpmo_discover_scratch_len(n), dpmo_discover_top_k_work_len(k̄) words */
    size_t scratch_len, work_len;
    uint64_t *out; /* the released items: n (partitions) or k (top-k) entries */
    size_t out_len;
    size_t count;            /* items released */
    dpmo_top_k_result result; /* the top-k functions: what the run spent (pay what you get) */
} dp_discovery;

/*
 * Before the charge: applies the compaction's reduction to the group's rows (units[n], rows[n · m], as the
 * engine stored them, compacted or not: the result is the same), expands them into the C ABI's events,
 * allocates everything the run needs (so that no allocation fails after the charge) and checks every
 * public argument the C ABI would refuse (the samplers' ranges too), by a run on no events with a
 * generator of its own (the caller's is not touched). n = 0 (every event dropped) is an empty dataset: it
 * is charged and releases nothing. Errors: DP_ERR_ARGUMENT, DP_ERR_NOMEM; nothing to free then.
 */
dp_err_class dp_discover_prepare(const dp_params *p, int64_t n, const int64_t *units, const double *rows,
                                 const dp_alloc *a, dp_discovery *d, dp_error *err);

/* After the charge of (p->epsilon, p->delta): the release, into d->out[0..d->count). */
dp_err_class dp_discover_run(const dp_params *p, dp_discovery *d, dpmo_rng *rng, dp_error *err);

void dp_discover_free(dp_discovery *d, const dp_alloc *a);

/*
 * Pay what you get (dp_discover_top_k): after a successful dp_discover_run, true when the run spent less
 * than the (p->epsilon, p->delta) charged before it (it stopped at ⊥ after ℓ < k items), with what it
 * spent in *epsilon, *delta (dpmo_top_k_result: (ε/k · (ℓ + 1), δ)), for the engine's ledger to settle the
 * charge at (dp_ledger.h: a refund record). False for every other function and for a run that released k.
 */
bool dp_discover_refund_due(const dp_params *p, const dp_discovery *d, double *epsilon, double *delta);

/* "dp_select_top_k/permute_and_flip": what the ledger records as the mechanism. */
void dp_mechanism_label(const dp_params *p, char *buf, size_t len);

/*
 * The texts of a refused charge, the same in every engine ("name: ..."; nothing was charged):
 *   no_delta: delta > 0 requested from a pure-ε budget (granted without delta);
 *   otherwise the budget is exhausted: epsilon_left and delta_left are what is left (delta mentioned only
 *   when the charge has one, so a pure-ε refusal reads as it always did).
 */
void dp_budget_refusal(char *buf, size_t len, const char *name, bool no_delta, double epsilon, double delta,
                       double epsilon_left, double delta_left);

/* Formats an error into err (cls, status, "function: message"). Returns cls. */
dp_err_class dp_fail(dp_error *err, dp_err_class cls, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* %g-like shortest round-trip text of a double (17 significant digits at most). */
void dp_format_double(double x, char *buf, size_t len);

#endif
