/*
 * Fixtures shared by the dpmo C tests: seeded generators, sensitivity specs, a configurable callback, and
 * "guards" that snapshot memory before a failing call and verify afterwards that nothing was written.
 * Valid C11 and C++17.
 */
#ifndef DPMO_FFI_TEST_COMMON_H
#define DPMO_FFI_TEST_COMMON_H

#include "dpmo.h"
#include "harness.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL_D (-12345.6789)
#define SENTINEL_Z ((size_t)0xDEADBEEFu)

/* A generator of `kind` seeded with bytes seed_byte, seed_byte + 1, ..., seed_byte + 31. */
static inline dpmo_rng make_rng(uint32_t kind, unsigned seed_byte) {
    uint8_t seed[32];
    dpmo_rng rng;
    size_t i;
    memset(&rng, 0, sizeof rng);
    for (i = 0; i < 32; i++) seed[i] = (uint8_t)(seed_byte + i);
    if (dpmo_rng_init(&rng, kind, seed) != DPMO_OK) {
        printf("make_rng: dpmo_rng_init failed\n");
        exit(2);
    }
    return rng;
}

static inline dpmo_sensitivity make_spec(uint32_t kind, const double *values, size_t values_len, size_t columns,
                                  double global, size_t t_max) {
    dpmo_sensitivity s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.values = values;
    s.values_len = values_len;
    s.columns = columns;
    s.callback = NULL;
    s.context = NULL;
    s.global = global;
    s.t_max = t_max;
    return s;
}

/* Callback context: reads a row-major table (Δ-like 1e300 beyond its columns) and can be told to return
 * `bad_value` at one (r, t), or at its n-th call (to fail as late as possible in a call). Counts its calls. */
typedef struct {
    const double *table;
    size_t columns;
    int has_bad;
    size_t bad_r, bad_t;
    double bad_value;
    unsigned long calls;
    unsigned long fail_at; /* when > 0: return bad_value at that call (1-based) whatever (r, t) */
} cb_ctx;

static inline double cb_table(void *context, size_t r, size_t t) {
    cb_ctx *c = (cb_ctx *)context;
    c->calls++;
    if (c->fail_at != 0 && c->calls == c->fail_at) return c->bad_value;
    if (c->has_bad && r == c->bad_r && t == c->bad_t) return c->bad_value;
    if (t < c->columns) return c->table[r * c->columns + t];
    return 1e300;
}

static inline cb_ctx make_ctx(const double *table, size_t columns) {
    cb_ctx c;
    memset(&c, 0, sizeof c);
    c.table = table;
    c.columns = columns;
    return c;
}

static inline dpmo_sensitivity make_cb_spec(cb_ctx *ctx, double global, size_t t_max) {
    dpmo_sensitivity s = make_spec(DPMO_DELTA_CALLBACK, NULL, 0, 0, global, t_max);
    s.callback = cb_table;
    s.context = ctx;
    return s;
}

/* ---- guards: snapshot memory, then check it is byte-for-byte unchanged ---- */
#define MAX_GUARDS 16
static struct {
    const void *p;
    size_t len;
    unsigned char *copy;
} guards[MAX_GUARDS];
static int guard_count = 0;

/* The whole region [p, p + len) must be readable: a case that claims a longer length than its object has (to
 * provoke an error) gives the object slack, since the guard reads what the call claims. `make ffi-tests` also
 * runs every program under AddressSanitizer, which reports any read past an object. */
static inline void guard(const void *p, size_t len) {
    if (p == NULL || len == 0 || guard_count == MAX_GUARDS) return;
    guards[guard_count].p = p;
    guards[guard_count].len = len;
    guards[guard_count].copy = (unsigned char *)malloc(len);
    memcpy(guards[guard_count].copy, p, len);
    guard_count++;
}

/* True when every guarded region is unchanged; releases the guards. */
static inline int guards_intact(void) {
    int ok = 1, i;
    for (i = 0; i < guard_count; i++) {
        if (memcmp(guards[i].p, guards[i].copy, guards[i].len) != 0) {
            ok = 0;
            printf("      guarded region %d (%zu bytes) was modified\n", i, guards[i].len);
        }
        free(guards[i].copy);
    }
    guard_count = 0;
    return ok;
}

/* A spec, field by field (its padding bytes are not values). */
static inline void guard_spec(const dpmo_sensitivity *s) {
    if (s == NULL) return;
    guard(&s->kind, sizeof s->kind);
    guard(&s->values, sizeof *s - offsetof(dpmo_sensitivity, values));
}

/* For a call expected to fail: CHECK that nothing guarded changed. For a call expected to succeed: just
 * release the guards (outputs are written then). */
#define CHECK_UNTOUCHED_IF_FAILED(want)                                                             \
    do {                                                                                            \
        if ((want) != DPMO_OK) CHECK(guards_intact());                                              \
        else { int harness_i_; for (harness_i_ = 0; harness_i_ < guard_count; harness_i_++) free(guards[harness_i_].copy); guard_count = 0; } \
    } while (0)

/* Bytes of n elements of `size`, or 0 when n is absurd (the overflow cases never touch memory). */
static inline size_t span(size_t n, size_t size) { return n <= 4096 ? n * size : 0; }

/* A pointer one byte past `p`: misaligned for every type wider than a byte. Never dereferenced by a
 * correct library (it must refuse it). */
static inline void *misalign(void *p) { return (void *)((uintptr_t)p + 1u); }

/* ---- ABI 0.2: the arithmetic flag, scratch lengths, budgets ---- */

/* The selector without the DPMO_FLOAT flag, and whether it needs a permutation scratch in its arithmetic
 * (permute-and-flip always; noisy max with Exponential noise in exact arithmetic, where it runs as
 * permute-and-flip). */
static inline uint32_t base_selector(uint32_t sel) { return sel & ~(uint32_t)DPMO_FLOAT; }
static inline int is_float(uint32_t sel) { return (sel & DPMO_FLOAT) != 0; }
static inline int needs_perm(uint32_t sel) {
    return base_selector(sel) == DPMO_SELECTOR_PERMUTE_AND_FLIP ||
           (base_selector(sel) == DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL && !is_float(sel));
}
/* Every selector the library runs, in both arithmetics: the five exact ones but Laplace (unsupported
 * exactly), then the five floating-point ones. */
#define N_RUNNABLE 9
static const uint32_t RUNNABLE[N_RUNNABLE] = {
    DPMO_SELECTOR_EXPONENTIAL,
    DPMO_SELECTOR_PERMUTE_AND_FLIP,
    DPMO_SELECTOR_NOISY_MAX_GUMBEL,
    DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL,
    DPMO_SELECTOR_EXPONENTIAL | DPMO_FLOAT,
    DPMO_SELECTOR_PERMUTE_AND_FLIP | DPMO_FLOAT,
    DPMO_SELECTOR_NOISY_MAX_LAPLACE | DPMO_FLOAT,
    DPMO_SELECTOR_NOISY_MAX_GUMBEL | DPMO_FLOAT,
    DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL | DPMO_FLOAT,
};
/* The noise argument of dpmo_select_noisy_max for a noisy-max selector (keeps the flag). */
static inline uint32_t noise_of_selector(uint32_t sel) {
    return (base_selector(sel) - DPMO_SELECTOR_NOISY_MAX_LAPLACE) | (sel & (uint32_t)DPMO_FLOAT);
}
static inline const char *selector_name(uint32_t sel) {
    static const char *const names[10] = {
        "exponential",       "permute-and-flip",       "noisy-max laplace",       "noisy-max gumbel",
        "noisy-max exponential", "exponential|float",  "permute-and-flip|float",  "noisy-max laplace|float",
        "noisy-max gumbel|float", "noisy-max exponential|float"};
    uint32_t b = base_selector(sel);
    return b < 5 ? names[b + (is_float(sel) ? 5 : 0)] : "unknown selector";
}

/* Scratch lengths from the library's own helpers (a test that hard-codes them would not notice a change).
 * Exits on failure: every later check would be meaningless. */
static inline void lens_or_die(dpmo_status st, const char *what) {
    if (st != DPMO_OK) {
        printf("%s failed: %s\n", what, dpmo_status_message((uint32_t)st));
        exit(2);
    }
}
static inline size_t ld_values_len(size_t n, size_t k, uint32_t sel) {
    size_t v = 0, i = 0;
    lens_or_die(dpmo_local_dampening_scratch_len(n, k, sel, &v, &i), "dpmo_local_dampening_scratch_len");
    return v;
}
static inline size_t ld_indices_len(size_t n, size_t k, uint32_t sel) {
    size_t v = 0, i = 0;
    lens_or_die(dpmo_local_dampening_scratch_len(n, k, sel, &v, &i), "dpmo_local_dampening_scratch_len");
    return i;
}
static inline size_t topk_values_len(size_t n, uint32_t sel) {
    size_t v = 0, i = 0;
    lens_or_die(dpmo_top_k_scratch_len(n, sel, &v, &i), "dpmo_top_k_scratch_len");
    return v;
}
static inline size_t topk_indices_len(size_t n, uint32_t sel) {
    size_t v = 0, i = 0;
    lens_or_die(dpmo_top_k_scratch_len(n, sel, &v, &i), "dpmo_top_k_scratch_len");
    return i;
}

static inline dpmo_budget make_budget(double total, double spent) {
    dpmo_budget b;
    memset(&b, 0, sizeof b); /* a pure-epsilon budget: delta_total = delta_spent = 0 */
    b.total = total;
    b.spent = spent;
    return b;
}

/* ---- statistics: Pearson's chi-square against given probabilities ---- */

/* The regularised upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a): a power series below a + 1,
 * a continued fraction (modified Lentz) above. Accurate to ~1e-12, far beyond what a test at 1e-6 needs. */
static inline double gamma_q(double a, double x) {
    const double tiny = 1e-300;
    double lead;
    int i;
    if (x <= 0.0) return 1.0;
    lead = exp(-x + a * log(x) - lgamma(a));
    if (x < a + 1.0) {
        double term = 1.0 / a, sum = term;
        for (i = 1; i < 100000; i++) {
            term *= x / (a + i);
            sum += term;
            if (term < sum * 1e-16) break;
        }
        return 1.0 - sum * lead;
    } else {
        double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
        for (i = 1; i < 100000; i++) {
            double an = -i * (i - a), delta;
            b += 2.0;
            d = an * d + b;
            if (fabs(d) < tiny) d = tiny;
            c = b + an / c;
            if (fabs(c) < tiny) c = tiny;
            d = 1.0 / d;
            delta = d * c;
            h *= delta;
            if (fabs(delta - 1.0) < 1e-16) break;
        }
        return h * lead;
    }
}

/* The significance level of every statistical check (the project standard). */
#define ALPHA 1e-6

/* Pearson's chi-square of `count[0..bins]` (a total of `total` draws) against the probabilities p; bins
 * whose expected count is below 5 are pooled into one, as the approximation needs. Returns the p-value
 * (0 when a draw fell in a bin of probability 0); writes the statistic and degrees of freedom. */
static inline double chi2_pvalue(const unsigned long *count, const double *p, size_t bins, unsigned long total,
                                 double *stat_out, size_t *df_out) {
    double stat = 0.0, pooled_e = 0.0, psum = 0.0;
    unsigned long pooled_c = 0, seen = 0;
    size_t used = 0, i;
    for (i = 0; i < bins; i++) {
        double e = p[i] * (double)total;
        psum += p[i];
        seen += count[i];
        if (p[i] <= 0.0 && count[i] > 0) {
            if (stat_out) *stat_out = INFINITY;
            if (df_out) *df_out = 0;
            return 0.0;
        }
        if (e < 5.0) {
            pooled_e += e;
            pooled_c += count[i];
            continue;
        }
        stat += ((double)count[i] - e) * ((double)count[i] - e) / e;
        used++;
    }
    if (pooled_e > 0.0) {
        stat += ((double)pooled_c - pooled_e) * ((double)pooled_c - pooled_e) / pooled_e;
        used++;
    } else if (pooled_c > 0) {
        used = 0;
    }
    if (stat_out) *stat_out = stat;
    if (df_out) *df_out = used > 0 ? used - 1 : 0;
    if (seen != total || fabs(psum - 1.0) > 1e-9) return 0.0; /* draws lost, or p is not a distribution */
    if (used == 0) return 0.0;                               /* draws where nothing was expected */
    if (used == 1) return 1.0;                               /* one bin holds everything: nothing to test */
    return gamma_q((double)(used - 1) / 2.0, stat / 2.0);
}

/* CHECK that the counts are consistent with p at ALPHA; prints the statistic on failure. */
#define CHECK_CHI2(count, p, bins, total)                                                          \
    do {                                                                                            \
        double chi2_s_ = 0.0, chi2_p_;                                                              \
        size_t chi2_df_ = 0;                                                                        \
        chi2_p_ = chi2_pvalue((count), (p), (bins), (total), &chi2_s_, &chi2_df_);                  \
        if (!harness_record(chi2_p_ >= ALPHA, __FILE__, __LINE__, "chi-square of " #count " vs " #p)) \
            printf("      chi2 = %.3f, df = %zu, p-value = %.3g < %g\n", chi2_s_, chi2_df_, chi2_p_, ALPHA); \
    } while (0)

/* CHECK that the counts are NOT consistent with p (the checker's power: a wrong model is caught). */
#define CHECK_CHI2_REJECTS(count, p, bins, total)                                                  \
    do {                                                                                            \
        double chi2_s_ = 0.0, chi2_p_;                                                              \
        size_t chi2_df_ = 0;                                                                        \
        chi2_p_ = chi2_pvalue((count), (p), (bins), (total), &chi2_s_, &chi2_df_);                  \
        if (!harness_record(chi2_p_ < ALPHA, __FILE__, __LINE__, "chi-square rejects " #count " vs " #p)) \
            printf("      chi2 = %.3f, df = %zu, p-value = %.3g >= %g\n", chi2_s_, chi2_df_, chi2_p_, ALPHA); \
    } while (0)

static inline int sums_to_one(const double *p, size_t n, double tol) {
    double s = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        if (!(p[i] >= 0.0 && p[i] <= 1.0)) return 0;
        s += p[i];
    }
    return fabs(s - 1.0) <= tol;
}

#endif /* DPMO_FFI_TEST_COMMON_H */
