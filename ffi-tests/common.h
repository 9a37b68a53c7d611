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
 * `bad_value` at one (r, t). Counts its calls. */
typedef struct {
    const double *table;
    size_t columns;
    int has_bad;
    size_t bad_r, bad_t;
    double bad_value;
    unsigned long calls;
} cb_ctx;

static inline double cb_table(void *context, size_t r, size_t t) {
    cb_ctx *c = (cb_ctx *)context;
    c->calls++;
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
