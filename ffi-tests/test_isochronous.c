/*
 * The isochronous selectors (DPMO_ISOCHRONOUS) are constant time: checked the way constant-time crypto code
 * is checked, by running them under valgrind memcheck with the scores marked undefined. Memcheck then
 * reports every conditional jump and every memory address that depends on a score; the Makefile runs this
 * program with --error-exitcode, so one such report fails `make test`.
 *
 * With --control (run by the Makefile under valgrind without --error-exitcode), the same marking is applied
 * to the *exact* selectors, whose running time does depend on the scores: the program checks that memcheck
 * does report there (VALGRIND_COUNT_ERRORS grows), so the check above can fail.
 *
 * Natively (no valgrind) the marking does nothing and the checks of results, charges and consumption run.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>

#include "dpmo.h"
#include "harness.h"

enum { N = 64, K = 3 };

/* Score sets an analyst could choose: ties, tied + 1, huge and tiny magnitudes, NaN and infinities. */
static void fill(double *s, int kind) {
    for (int i = 0; i < N; i++) {
        switch (kind) {
        case 0: s[i] = 5.0; break;                                 /* all tied */
        case 1: s[i] = (i == 17) ? 6.0 : 5.0; break;               /* tied + 1 */
        case 2: s[i] = (double)((i * 37) % 23) - 11.0; break;      /* spread */
        case 3: s[i] = (i % 3 == 0) ? 1e300 : -1e300; break;       /* huge */
        case 4: s[i] = (i % 2) ? 4.9e-324 : -2.2e-310; break;      /* subnormal */
        default:                                                    /* NaN, infinities, zeros */
            s[i] = (i % 4 == 0) ? NAN : (i % 4 == 1) ? INFINITY : (i % 4 == 2) ? -INFINITY : -0.0;
        }
    }
}
#define KINDS 6

static dpmo_rng rng_of(uint8_t seed) {
    dpmo_rng g;
    uint8_t bytes[32];
    memset(bytes, seed, sizeof bytes);
    dpmo_rng_init(&g, DPMO_RNG_CHACHA20, bytes);
    return g;
}

static const uint32_t SELECTORS[] = {
    DPMO_SELECTOR_EXPONENTIAL, DPMO_SELECTOR_PERMUTE_AND_FLIP, DPMO_SELECTOR_NOISY_MAX_GUMBEL,
    DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL};
#define NSEL 4

/* Runs every isochronous entry point on `scores`, marked undefined for the duration of each call. */
static void run_all(const double *scores_in, uint32_t mode, dpmo_rng *g) {
    static double scores[N], work[N];
    static size_t perm[N], index[2 * N], out[K];
    size_t pick = 0;
    memcpy(scores, scores_in, sizeof scores);
    for (int s = 0; s < NSEL; s++) {
        VALGRIND_MAKE_MEM_UNDEFINED(scores, sizeof scores);
        dpmo_status st = dpmo_select(g, SELECTORS[s] | mode, scores, N, 1.0, 1.0, perm, N, &pick, NULL);
        VALGRIND_MAKE_MEM_DEFINED(&pick, sizeof pick);
        VALGRIND_MAKE_MEM_DEFINED(perm, sizeof perm);
        VALGRIND_MAKE_MEM_DEFINED(scores, sizeof scores);
        CHECK_STATUS(st, DPMO_OK);
        CHECK(pick < N);

        VALGRIND_MAKE_MEM_UNDEFINED(scores, sizeof scores);
        st = dpmo_select_top_k(g, SELECTORS[s] | mode, scores, N, 1.0, 1.0, K, out, work, N, index, 2 * N, NULL);
        VALGRIND_MAKE_MEM_DEFINED(out, sizeof out);
        VALGRIND_MAKE_MEM_DEFINED(index, sizeof index);
        VALGRIND_MAKE_MEM_DEFINED(work, sizeof work);
        VALGRIND_MAKE_MEM_DEFINED(scores, sizeof scores);
        CHECK_STATUS(st, DPMO_OK);
        CHECK(out[0] < N && out[1] < N && out[2] < N && out[0] != out[1] && out[1] != out[2] && out[0] != out[2]);
    }
    VALGRIND_MAKE_MEM_UNDEFINED(scores, sizeof scores);
    dpmo_status st = dpmo_select_top_k_gumbel(g, scores, N, 1.0, 1.0, K, mode, out, work, N, index, N, NULL);
    VALGRIND_MAKE_MEM_DEFINED(out, sizeof out);
    VALGRIND_MAKE_MEM_DEFINED(index, sizeof index);
    VALGRIND_MAKE_MEM_DEFINED(work, sizeof work);
    VALGRIND_MAKE_MEM_DEFINED(scores, sizeof scores);
    CHECK_STATUS(st, DPMO_OK);
}

/* Local dampening, plain and shifted, with a table of 4 distances and with one δ per candidate: the
 * utilities and the δ values (private data too, never validated: a NaN, negative or infinite δ counts as Δ)
 * are marked undefined (the utilities only when `mark_utilities`). `bad_deltas` puts such values (and values
 * above Δ) among the δs. */
static void run_local(const double *util_in, uint32_t mode, dpmo_rng *g, int bad_deltas, int mark_utilities) {
    static double u[N], table[4 * N], per[N], scratch[4 * N];
    static size_t perm[N], index[2 * N], out[K];
    static const double BAD[4] = {NAN, -1.0, INFINITY, 7.0};
    size_t pick = 0;
    memcpy(u, util_in, sizeof u);
    for (int i = 0; i < 4 * N; i++) table[i] = (i % 5 == 0) ? 0.0 : (i % 7) * 0.25;
    for (int i = 0; i < N; i++) per[i] = (i % 3) * 0.5;
    if (bad_deltas) {
        for (int i = 0; i < 4 * N; i += 9) table[i] = BAD[(i / 9) % 4];
        for (int i = 0; i < N; i += 5) per[i] = BAD[(i / 5) % 4];
    }
    const dpmo_sensitivity specs[2] = {
        {DPMO_DELTA_TABLE, table, 4 * N, 4, NULL, NULL, 2.0, 4},
        {DPMO_DELTA_PER_CANDIDATE, per, N, 0, NULL, NULL, 2.0, 16},
    };
    for (int sp = 0; sp < 2; sp++) {
        for (uint32_t damp = DPMO_DAMPENING_PLAIN; damp <= DPMO_DAMPENING_SHIFTED; damp++) {
            for (int s = 0; s < NSEL; s++) {
                if (mark_utilities) VALGRIND_MAKE_MEM_UNDEFINED(u, sizeof u);
                VALGRIND_MAKE_MEM_UNDEFINED(table, sizeof table);
                VALGRIND_MAKE_MEM_UNDEFINED(per, sizeof per);
                dpmo_status st = dpmo_select_local_dampening(g, u, N, &specs[sp], damp, SELECTORS[s] | mode, 1.0,
                                                             scratch, 2 * N, perm, N, &pick, NULL);
                VALGRIND_MAKE_MEM_DEFINED(&pick, sizeof pick);
                VALGRIND_MAKE_MEM_DEFINED(scratch, sizeof scratch);
                VALGRIND_MAKE_MEM_DEFINED(perm, sizeof perm);
                VALGRIND_MAKE_MEM_DEFINED(u, sizeof u);
                VALGRIND_MAKE_MEM_DEFINED(table, sizeof table);
                VALGRIND_MAKE_MEM_DEFINED(per, sizeof per);
                CHECK_STATUS(st, DPMO_OK);
                CHECK(pick < N);
                if (mark_utilities) VALGRIND_MAKE_MEM_UNDEFINED(u, sizeof u);
                VALGRIND_MAKE_MEM_UNDEFINED(table, sizeof table);
                VALGRIND_MAKE_MEM_UNDEFINED(per, sizeof per);
                st = dpmo_select_local_dampening_top_k(g, u, N, &specs[sp], damp, SELECTORS[s] | mode, 1.0, K, out,
                                                       scratch, 4 * N, index, 2 * N, NULL);
                VALGRIND_MAKE_MEM_DEFINED(out, sizeof out);
                VALGRIND_MAKE_MEM_DEFINED(scratch, sizeof scratch);
                VALGRIND_MAKE_MEM_DEFINED(index, sizeof index);
                VALGRIND_MAKE_MEM_DEFINED(u, sizeof u);
                VALGRIND_MAKE_MEM_DEFINED(table, sizeof table);
                VALGRIND_MAKE_MEM_DEFINED(per, sizeof per);
                CHECK_STATUS(st, DPMO_OK);
                CHECK(out[0] < N && out[1] < N && out[2] < N);
            }
        }
    }
}

/* PrivAgg, global and local (plain, shifted), two objectives: the utilities are marked undefined. */
static void run_privagg(const double *util_in, uint32_t mode, dpmo_rng *g) {
    static double u[2 * N], per0[N], per1[N], values[4 * N];
    static size_t indices[2 * N], out[K];
    for (int i = 0; i < N; i++) {
        u[2 * i] = util_in[i];
        u[2 * i + 1] = util_in[(i * 7) % N];
        per0[i] = (i % 3) * 0.5;
        per1[i] = (i % 4) * 0.25;
    }
    const double weights[2] = {1.0, -0.5}, globals[2] = {2.0, 1.0};
    const dpmo_sensitivity specs[2] = {
        {DPMO_DELTA_PER_CANDIDATE, per0, N, 0, NULL, NULL, 2.0, 8},
        {DPMO_DELTA_PER_CANDIDATE, per1, N, 0, NULL, NULL, 1.0, 8},
    };
    for (int local = 0; local < 2; local++) {
        for (uint32_t damp = DPMO_DAMPENING_PLAIN; damp <= DPMO_DAMPENING_SHIFTED; damp++) {
            for (int s = 0; s < NSEL; s++) {
                VALGRIND_MAKE_MEM_UNDEFINED(u, sizeof u);
                dpmo_status st = dpmo_select_privagg(g, u, N, 2, weights, local ? NULL : globals, local ? specs : NULL,
                                                     0, damp, SELECTORS[s] | mode, 1.0, K, out, values, 4 * N,
                                                     indices, 2 * N, NULL);
                VALGRIND_MAKE_MEM_DEFINED(out, sizeof out);
                VALGRIND_MAKE_MEM_DEFINED(values, sizeof values);
                VALGRIND_MAKE_MEM_DEFINED(indices, sizeof indices);
                VALGRIND_MAKE_MEM_DEFINED(u, sizeof u);
                CHECK_STATUS(st, DPMO_OK);
                CHECK(out[0] < N && out[1] < N && out[2] < N);
            }
            if (!local) break;
        }
    }
}

static void constant_time(void) {
    TEST("isochronous selectors under memcheck with undefined scores");
    double s[N];
    dpmo_rng g = rng_of(1);
    for (int kind = 0; kind < KINDS; kind++) {
        fill(s, kind);
        run_all(s, DPMO_ISOCHRONOUS, &g);
        run_local(s, DPMO_ISOCHRONOUS, &g, 0, 1);
        run_local(s, DPMO_ISOCHRONOUS, &g, 1, 1);
        run_privagg(s, DPMO_ISOCHRONOUS, &g);
    }
}

/* The exact selectors branch on the scores: memcheck must say so, or the check above proves nothing. */
static void control(void) {
    TEST("control: memcheck reports the exact selectors");
    double s[N];
    dpmo_rng g = rng_of(2);
    fill(s, 1);
    unsigned before = VALGRIND_COUNT_ERRORS;
    run_all(s, 0, &g);
    unsigned after = VALGRIND_COUNT_ERRORS;
    printf("memcheck reported %u errors in the exact selectors\n", after - before);
    CHECK(after > before);
    before = after;
    run_local(s, 0, &g, 1, 1);
    after = VALGRIND_COUNT_ERRORS;
    printf("memcheck reported %u errors in exact local dampening\n", after - before);
    CHECK(after > before);
    /* The δ values alone (utilities defined): the marking of the δs is seen too. */
    before = after;
    run_local(s, 0, &g, 1, 0);
    after = VALGRIND_COUNT_ERRORS;
    printf("memcheck reported %u errors in exact local dampening with only the deltas undefined\n",
           after - before);
    CHECK(after > before);
    before = after;
    run_privagg(s, 0, &g);
    after = VALGRIND_COUNT_ERRORS;
    printf("memcheck reported %u errors in exact PrivAgg\n", after - before);
    CHECK(after > before);
}

static void charges_and_consumption(void) {
    TEST("isochronous charges epsilon, runs a hair below, and consumes a fixed amount");
    double tied[N], plus[N];
    fill(tied, 0);
    fill(plus, 1);
    size_t perm[N], pick;
    double e;
    CHECK_STATUS(dpmo_isochronous_run_epsilon(DPMO_SELECTOR_EXPONENTIAL, 1.0, N, 1, &e), DPMO_OK);
    CHECK_DEQ(e, 1.0 - ldexp(1.0, -40));
    CHECK_STATUS(dpmo_isochronous_run_epsilon(DPMO_SELECTOR_PERMUTE_AND_FLIP | DPMO_ISOCHRONOUS, 0.5, N, 2, &e),
                 DPMO_OK);
    CHECK_DEQ(e, 0.25 - (N + 1) * ldexp(1.0, -40));
    CHECK_STATUS(dpmo_isochronous_run_epsilon(DPMO_SELECTOR_NOISY_MAX_LAPLACE, 1.0, N, 1, &e), DPMO_UNSUPPORTED);
    CHECK_STATUS(dpmo_isochronous_run_epsilon(DPMO_SELECTOR_EXPONENTIAL | DPMO_FLOAT, 1.0, N, 1, &e),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_isochronous_run_epsilon(DPMO_SELECTOR_EXPONENTIAL, 1.0, N, N + 1, &e), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_isochronous_run_epsilon(DPMO_SELECTOR_EXPONENTIAL, ldexp(1.0, -40), N, 1, &e),
                 DPMO_INVALID_EPSILON);
    /* Both arithmetic flags at once are refused, nothing charged. */
    dpmo_budget b;
    dpmo_budget_init(&b, 1.0);
    dpmo_rng g = rng_of(3);
    CHECK_STATUS(dpmo_select(&g, DPMO_SELECTOR_EXPONENTIAL | DPMO_FLOAT | DPMO_ISOCHRONOUS, tied, N, 1.0, 0.5, NULL,
                             0, &pick, &b),
                 DPMO_INVALID_ARGUMENT);
    CHECK_DEQ(b.spent, 0.0);
    /* The charge is epsilon, exactly; an epsilon below the slack is refused, free. */
    CHECK_STATUS(dpmo_select(&g, DPMO_SELECTOR_EXPONENTIAL | DPMO_ISOCHRONOUS, tied, N, 1.0, 0.5, NULL, 0, &pick, &b),
                 DPMO_OK);
    CHECK_DEQ(b.spent, 0.5);
    CHECK_STATUS(dpmo_select(&g, DPMO_SELECTOR_PERMUTE_AND_FLIP | DPMO_ISOCHRONOUS, tied, N, 1.0, 1e-12, perm, N,
                             &pick, &b),
                 DPMO_INVALID_EPSILON);
    CHECK_DEQ(b.spent, 0.5);
    /* Tied counts and tied + 1 leave the caller's generator in the same state, in every arithmetic. */
    const uint32_t modes[] = {0, DPMO_FLOAT, DPMO_ISOCHRONOUS};
    for (int m = 0; m < 3; m++) {
        for (int s = 0; s < NSEL; s++) {
            for (uint8_t seed = 0; seed < 8; seed++) {
                dpmo_rng a = rng_of(seed), c = rng_of(seed);
                CHECK_STATUS(dpmo_select(&a, SELECTORS[s] | modes[m], tied, N, 1.0, 1.0, perm, N, &pick, NULL),
                             DPMO_OK);
                CHECK_STATUS(dpmo_select(&c, SELECTORS[s] | modes[m], plus, N, 1.0, 1.0, perm, N, &pick, NULL),
                             DPMO_OK);
                CHECK(memcmp(&a, &c, sizeof a) == 0);
            }
        }
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--control") == 0) {
        if (RUNNING_ON_VALGRIND) {
            control();
        } else {
            printf("--control needs valgrind; skipped\n");
        }
        return HARNESS_FINISH();
    }
    constant_time();
    charges_and_consumption();
    return HARNESS_FINISH();
}
