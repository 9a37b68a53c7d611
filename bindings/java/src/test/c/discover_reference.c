/*
 * The reference for the Java binding's discovery tests ("discovery: the same seed gives the C ABI's outputs"):
 * runs dpmo_bound_events, dpmo_discover_partitions (every mechanism) and dpmo_discover_top_k (every score) on
 * the events DpmoTest.referenceEvents() makes, from one ChaCha20 generator seeded with the bytes 0..31 and one
 * (100, 0.01) budget, and prints every output (unsigned 64-bit words in decimal, doubles in C99 hex); the Java
 * test makes the same calls through the jar and compares line by line. Built and run by `make unit-tests`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpmo.h"

#define N 2400

static uint64_t U[N], I[N], SCRATCH[4 * N], OUT[N], WORK[6 * 64];
static double V[N];
static dpmo_item_total TOTALS[N];

static uint64_t trailing_zeros(uint64_t x) {
    uint64_t z = 0;
    while ((x & 1) == 0) x >>= 1, z++;
    return z;
}

/* Must match DpmoTest.referenceEvents(): 600 units (ids with the top bit set for odd u, so signed and unsigned
 * orders differ), each with two events on item tz(u + 1) (the number of trailing zero bits: item j has about
 * 600 / 2^(j+1) units), one on item 2^63 + u % 3 and one on an item of its own, 1000 + u. */
static size_t make_events(void) {
    size_t n = 0;
    for (uint64_t u = 0; u < 600; u++) {
        uint64_t unit = (u % 2 ? UINT64_C(0x8000000000000000) : 0) + 17 * u;
        U[n] = unit, I[n] = trailing_zeros(u + 1), V[n] = (double)(u % 5) - 1.5, n++;
        U[n] = unit, I[n] = UINT64_C(0x8000000000000000) + u % 3, V[n] = 0.25 * (double)(u % 9), n++;
        U[n] = unit, I[n] = trailing_zeros(u + 1), V[n] = 7.0, n++;
        U[n] = unit, I[n] = 1000 + u, V[n] = 1.0, n++;
    }
    return n;
}

static int fail(const char *what, dpmo_status st) {
    printf("FAIL %s: status %d\n", what, (int)st);
    return 1;
}

int main(void) {
    uint8_t seed[32];
    for (int i = 0; i < 32; i++) seed[i] = (uint8_t)i;
    dpmo_rng rng;
    dpmo_budget budget;
    dpmo_status st;
    if ((st = dpmo_rng_init(&rng, DPMO_RNG_CHACHA20, seed)) != DPMO_OK) return fail("rng", st);
    if ((st = dpmo_budget_init_approx(&budget, 100.0, 0.01)) != DPMO_OK) return fail("budget", st);
    size_t n = make_events(), count = 0;
    double grid = 0.0;

    if ((st = dpmo_bound_events(&rng, U, I, V, n, 2, 1, -1.0, 3.0, SCRATCH, 4 * N, TOTALS, N, &count, &grid)) != DPMO_OK)
        return fail("bound_events", st);
    printf("bound %a", grid);
    for (size_t r = 0; r < count; r++)
        printf(" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64, TOTALS[r].item, TOTALS[r].units, TOTALS[r].events,
               TOTALS[r].sum);
    printf("\n");

    for (uint32_t m = 0; m <= DPMO_PARTITION_SIPS; m++) {
        st = dpmo_discover_partitions(&rng, U, I, n, 2, m, m == DPMO_PARTITION_SIPS ? 3 : 0, 1.0, 1e-6, SCRATCH, 4 * N,
                                      OUT, N, &count, &budget);
        if (st != DPMO_OK) return fail("discover_partitions", st);
        printf("partitions %u", m);
        for (size_t r = 0; r < count; r++) printf(" %" PRIu64, OUT[r]);
        printf("\n");
    }

    /* score, k, k_bar, L, C, values, lo, hi, epsilon */
    static const struct {
        uint32_t score;
        size_t k, k_bar, l, c;
        int values;
        double lo, hi, eps;
    } runs[] = {
        {DPMO_SCORE_UNITS, 3, 5, 2, 1, 0, 0.0, 0.0, 4.0},
        {DPMO_SCORE_EVENTS, 4, 6, 3, 2, 0, 0.0, 0.0, 6.0},
        {DPMO_SCORE_SUM, 4, 8, 2, 2, 1, 0.0, 4.0, 5.0},
        {DPMO_SCORE_UNITS, 6, 10, 1, 1, 0, 0.0, 0.0, 1.0},
    };
    for (size_t j = 0; j < sizeof runs / sizeof runs[0]; j++) {
        dpmo_top_k_result res;
        st = dpmo_discover_top_k(&rng, U, I, runs[j].values ? V : NULL, n, runs[j].l, runs[j].c, runs[j].lo, runs[j].hi,
                                 runs[j].score, runs[j].k, runs[j].k_bar, runs[j].eps, 1e-6, SCRATCH, 4 * N, WORK, 6 * 64,
                                 OUT, N, &res, &budget);
        if (st != DPMO_OK) return fail("discover_top_k", st);
        printf("topk %zu %u %a %a", j, (unsigned)res.stopped, res.epsilon, res.delta);
        for (size_t r = 0; r < res.count; r++) printf(" %" PRIu64, OUT[r]);
        printf("\n");
    }

    printf("budget %a %a %a %a\n", budget.total, budget.spent, budget.delta_total, budget.delta_spent);
    double after[2];
    if ((st = dpmo_sample(&rng, DPMO_DIST_UNIFORM | DPMO_FLOAT, after, 2)) != DPMO_OK) return fail("sample", st);
    printf("after %a %a\n", after[0], after[1]);
    return 0;
}
