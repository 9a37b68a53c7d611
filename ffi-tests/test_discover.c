/*
 * The C ABI of private selection over an unknown domain and of (epsilon, delta) budgets: contribution
 * bounding (dpmo_bound_events), partition selection (dpmo_discover_partitions, every mechanism),
 * unknown-domain top-k with pay-what-you-get charges (dpmo_discover_top_k), and the approximate budget
 * functions. Every argument error writes nothing, charges nothing and leaves the generator unchanged; the
 * generator advances by the same amount whatever the data.
 */
#include "common.h"

#define N_EV 400
#define HEAVY 7u      /* every unit has it */
#define LONELY 99999u /* one unit only */

static uint64_t U[N_EV], I[N_EV];
static double V[N_EV];
static uint64_t SCRATCH[4 * N_EV], OUT[N_EV], WORK[6 * 64];
static dpmo_item_total TOTALS[N_EV];

/* 100 units; unit u has the heavy item, item 100 + (u mod 5), and (unit 0 only) the lonely item. */
static size_t make_events(void) {
    size_t n = 0, u;
    for (u = 0; u < 100; u++) {
        U[n] = 1000 + u, I[n] = HEAVY, V[n] = 1.0, n++;
        U[n] = 1000 + u, I[n] = 100 + u % 5, V[n] = 2.0, n++;
        U[n] = 1000 + u, I[n] = HEAVY, V[n] = 50.0, n++; /* a second event on the heavy item */
    }
    U[n] = 1000, I[n] = LONELY, V[n] = 1e9, n++;
    return n;
}

static dpmo_budget approx(double eps, double delta) {
    dpmo_budget b;
    if (dpmo_budget_init_approx(&b, eps, delta) != DPMO_OK) {
        printf("dpmo_budget_init_approx failed\n");
        exit(2);
    }
    return b;
}

static void test_budget_approx(void) {
    dpmo_budget b, before;
    double e = SENTINEL_D, d = SENTINEL_D;

    TEST("budget_init keeps meaning a pure-epsilon budget");
    CHECK_STATUS(dpmo_budget_init(&b, 1.0), DPMO_OK);
    CHECK_DEQ(b.delta_total, 0.0);
    CHECK_DEQ(b.delta_spent, 0.0);
    before = b;
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.5, 1e-9), DPMO_BUDGET_EXHAUSTED);
    CHECK(memcmp(&b, &before, sizeof b) == 0);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.5, 0.0), DPMO_OK);
    CHECK_DEQ(b.spent, 0.5);

    TEST("approximate budgets: epsilons add, deltas add");
    b = approx(1.0, 1e-6);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.25, 2.5e-7), DPMO_OK);
    CHECK_STATUS(dpmo_budget_charge(&b, 0.25), DPMO_OK);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.25, 5e-7), DPMO_OK);
    CHECK_DEQ(b.spent, 0.75);
    CHECK_DEQ(b.delta_spent, 7.5e-7);
    CHECK_STATUS(dpmo_budget_remaining_approx(&b, &e, &d), DPMO_OK);
    CHECK_DEQ(e, 0.25);
    CHECK(d > 2.49e-7 && d <= 1e-6 - 7.5e-7);
    before = b;
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.25, 3e-7), DPMO_BUDGET_EXHAUSTED);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.5, 1e-8), DPMO_BUDGET_EXHAUSTED);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.1, -1e-9), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.1, 1.0), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, 0.0, 1e-9), DPMO_INVALID_EPSILON);
    CHECK(memcmp(&b, &before, sizeof b) == 0);
    CHECK_STATUS(dpmo_budget_charge_approx(&b, e, d), DPMO_OK);
    CHECK(b.spent <= 1.0 && b.delta_spent <= 1e-6);

    TEST("approximate budget errors");
    CHECK_STATUS(dpmo_budget_init_approx(&b, 1.0, 1.0), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_budget_init_approx(&b, 1.0, -0.1), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_budget_init_approx(&b, 0.0, 0.1), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_init_approx(NULL, 1.0, 0.1), DPMO_NULL_POINTER);
    b = approx(1.0, 1e-6);
    b.delta_spent = 2e-6; /* more delta spent than the total: no init/charge sequence gives it */
    CHECK_STATUS(dpmo_budget_charge(&b, 0.1), DPMO_INVALID_ARGUMENT);
    e = d = SENTINEL_D;
    CHECK_STATUS(dpmo_budget_remaining_approx(&b, &e, &d), DPMO_INVALID_ARGUMENT);
    b = approx(1.0, 1e-6);
    CHECK_STATUS(dpmo_budget_remaining_approx(&b, &e, &e), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_budget_remaining_approx(&b, &b.delta_spent, &d), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_budget_remaining_approx(&b, NULL, &d), DPMO_NULL_POINTER);
    CHECK_DEQ(e, SENTINEL_D);
    CHECK_DEQ(d, SENTINEL_D);
    CHECK(sizeof(dpmo_budget) == 4 * sizeof(double));
}

static void test_lengths(void) {
    size_t w = SENTINEL_Z;
    TEST("scratch and work lengths");
    CHECK_STATUS(dpmo_discover_scratch_len(10, &w), DPMO_OK);
    CHECK_EQ(w, 40);
    CHECK_STATUS(dpmo_discover_top_k_work_len(9, &w), DPMO_OK);
    CHECK_EQ(w, 60);
    CHECK_STATUS(dpmo_discover_scratch_len(SIZE_MAX / 2, &w), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_discover_top_k_work_len(SIZE_MAX, &w), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_discover_scratch_len(1, NULL), DPMO_NULL_POINTER);
    CHECK_EQ(w, 60);
}

static void test_bound_events(void) {
    size_t n = make_events(), count = SENTINEL_Z, i;
    double grid = SENTINEL_D;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 3), before;

    TEST("bound_events: exact totals when nothing is dropped");
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 8, 8, 0.0, 10.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_OK);
    CHECK_EQ(count, 7); /* heavy, five of 100..104, lonely */
    CHECK_DEQ(grid, 1.0 / 65536.0); /* 10 <= 2^4: grid 2^(4 - 20) */
    CHECK_EQ(TOTALS[0].item, HEAVY);
    CHECK_EQ(TOTALS[0].units, 100);
    CHECK_EQ(TOTALS[0].events, 200);
    CHECK_DEQ((double)TOTALS[0].sum * grid, 100 * (1.0 + 10.0)); /* 50 clamped to 10 */
    CHECK_EQ(TOTALS[6].item, LONELY);
    CHECK_DEQ((double)TOTALS[6].sum * grid, 10.0);
    for (i = 1; i < 6; i++) CHECK_EQ(TOTALS[i].units, 20);

    TEST("bound_events: L = 1, C = 1");
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, NULL, n, 1, 1, 0.0, 0.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_OK);
    {
        uint64_t units = 0, events = 0;
        for (i = 0; i < count; i++) units += TOTALS[i].units, events += TOTALS[i].events;
        CHECK_EQ(units, 100);
        CHECK_EQ(events, 100);
        CHECK_DEQ(grid, 1.0);
    }

    TEST("bound_events: argument errors write nothing and leave the generator");
    before = rng;
    count = SENTINEL_Z;
    grid = SENTINEL_D;
    guard(TOTALS, sizeof TOTALS);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 0, 1, 0.0, 1.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 1, 0, 0.0, 1.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 1, 1, 2.0, 1.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, NULL, n, 1, 1, 0.0, 1.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_INVALID_ARGUMENT); /* lo, hi without values */
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 1, 1, 0.0, 1.0, SCRATCH, 4 * n - 1, TOTALS, N_EV, &count, &grid),
                 DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 1, 1, 0.0, 1.0, SCRATCH, 4 * N_EV, TOTALS, n - 1, &count, &grid),
                 DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 1, 1, 0.0, 1.0, (uint64_t *)U, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_bound_events(&rng, U, NULL, V, n, 1, 1, 0.0, 1.0, SCRATCH, 4 * N_EV, TOTALS, N_EV, &count, &grid),
                 DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_bound_events(&rng, U, I, V, n, 1, 1, 0.0, 1.0, (uint64_t *)misalign(SCRATCH), 4 * N_EV - 1, TOTALS,
                                   N_EV, &count, &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK(guards_intact());
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK_EQ(count, SENTINEL_Z);
    CHECK_DEQ(grid, SENTINEL_D);
}

static int contains(const uint64_t *v, size_t n, uint64_t x) {
    size_t i;
    for (i = 0; i < n; i++)
        if (v[i] == x) return 1;
    return 0;
}

static void test_partitions(void) {
    static const uint32_t mech[5] = {DPMO_PARTITION_TRUNCATED_GEOMETRIC, DPMO_PARTITION_LAPLACE, DPMO_PARTITION_GAUSSIAN,
                                     DPMO_PARTITION_WEIGHTED_GAUSSIAN, DPMO_PARTITION_SIPS};
    size_t n = make_events(), count = SENTINEL_Z, i, m, run;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 4), before, a, b;
    dpmo_budget budget, budget_before;

    TEST("discover_partitions: the heavy item is found, the lonely one never; sorted; charged (eps, delta)");
    for (m = 0; m < 5; m++) {
        uint32_t rounds = mech[m] == DPMO_PARTITION_SIPS ? 3 : 0;
        int heavy = 1, lonely = 0, sorted = 1;
        budget = approx(10.0, 1e-4);
        for (run = 0; run < 5; run++) {
            CHECK_STATUS(dpmo_discover_partitions(&rng, U, I, n, 2, mech[m], rounds, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT,
                                                  N_EV, &count, &budget),
                         DPMO_OK);
            heavy &= contains(OUT, count, HEAVY);
            lonely |= contains(OUT, count, LONELY);
            for (i = 1; i < count; i++) sorted &= OUT[i - 1] < OUT[i];
        }
        CHECK(heavy);
        CHECK(!lonely);
        CHECK(sorted);
        CHECK_DEQ(budget.spent, 5.0);
        CHECK_NEAR(budget.delta_spent, 5e-6, 1e-18);
    }

    TEST("discover_partitions: a pure-epsilon budget refuses the delta, nothing else happens");
    CHECK_STATUS(dpmo_budget_init(&budget, 10.0), DPMO_OK);
    before = rng;
    count = SENTINEL_Z;
    CHECK_STATUS(dpmo_discover_partitions(&rng, U, I, n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT,
                                          N_EV, &count, &budget),
                 DPMO_BUDGET_EXHAUSTED);
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK_DEQ(budget.spent, 0.0);
    CHECK_EQ(count, SENTINEL_Z);

    TEST("discover_partitions: argument errors write nothing, charge nothing, draw nothing");
    budget = approx(10.0, 1e-4);
    budget_before = budget;
    before = rng;
    guard(OUT, sizeof OUT);
#define PART(n_, l_, mech_, rounds_, eps_, delta_, scr_, scrlen_, out_, outlen_, want)                            \
    CHECK_STATUS(dpmo_discover_partitions(&rng, U, I, n_, l_, mech_, rounds_, eps_, delta_, scr_, scrlen_, out_, outlen_, \
                                          &count, &budget),                                                          \
                 want)
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 0.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_EPSILON);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 0.0, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1.0, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, 2, 5, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 2, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, 2, DPMO_PARTITION_SIPS, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, 2, DPMO_PARTITION_SIPS, DPMO_PARTITION_MAX_ROUNDS + 1, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV,
         DPMO_INVALID_ARGUMENT);
    PART(n, 0, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, DPMO_DISCOVER_MAX_ITEMS + 1, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV,
         DPMO_INVALID_ARGUMENT);
    PART(n, 2, DPMO_PARTITION_LAPLACE, 0, 1e-12, 1e-6, SCRATCH, 4 * N_EV, OUT, N_EV, DPMO_INVALID_ARGUMENT);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * n - 1, OUT, N_EV, DPMO_SCRATCH_TOO_SMALL);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT, n - 1, DPMO_LENGTH_MISMATCH);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, (uint64_t *)I, N_EV, DPMO_OVERLAPPING_BUFFERS);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV, SCRATCH + 8, N_EV, DPMO_OVERLAPPING_BUFFERS);
    PART(n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, NULL, 4 * N_EV, OUT, N_EV, DPMO_NULL_POINTER);
#undef PART
    CHECK_STATUS(dpmo_discover_partitions(&rng, U, I, n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV,
                                          OUT, N_EV, &count, (dpmo_budget *)(void *)&rng),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK(guards_intact());
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    CHECK_EQ(count, SENTINEL_Z);
    {
        dpmo_rng bad = rng;
        bad.opaque[0] ^= 0x5555;
        CHECK_STATUS(dpmo_discover_partitions(&bad, U, I, n, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 4 * N_EV,
                                              OUT, N_EV, &count, &budget),
                     DPMO_INVALID_GENERATOR);
        CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    }

    TEST("discover_partitions: the generator advances by the same amount whatever the data");
    a = rng;
    b = rng;
    CHECK_STATUS(dpmo_discover_partitions(&a, U, I, n, 2, DPMO_PARTITION_SIPS, 3, 1.0, 1e-6, SCRATCH, 4 * N_EV, OUT,
                                          N_EV, &count, NULL),
                 DPMO_OK);
    CHECK_STATUS(dpmo_discover_partitions(&b, U + 7, I + 5, 3, 1, DPMO_PARTITION_TRUNCATED_GEOMETRIC, 0, 2.0, 1e-3,
                                          SCRATCH, 4 * N_EV, OUT, N_EV, &count, NULL),
                 DPMO_OK);
    CHECK(memcmp(&a, &b, sizeof a) == 0);

    TEST("discover_partitions: no event is an empty dataset (nothing released, charged), not a status");
    b = rng;
    budget = approx(10.0, 1e-4);
    count = SENTINEL_Z;
    CHECK_STATUS(dpmo_discover_partitions(&b, U, I, 0, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, SCRATCH, 0, OUT, 0,
                                          &count, &budget),
                 DPMO_OK);
    CHECK_EQ(count, 0);
    CHECK_DEQ(budget.spent, 1.0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    {
        double grid = 0;
        b = rng;
        CHECK_STATUS(dpmo_bound_events(&b, U, I, NULL, 0, 1, 1, 0.0, 0.0, SCRATCH, 0, (dpmo_item_total *)(void *)OUT, 0,
                                       &count, &grid),
                     DPMO_OK);
        CHECK_EQ(count, 0);
        CHECK_DEQ(grid, 1.0);
        CHECK(memcmp(&a, &b, sizeof a) == 0);
    }
}

static void test_top_k(void) {
    size_t n = make_events(), i;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 5), before, a, b;
    dpmo_budget budget, budget_before;
    dpmo_top_k_result res, sentinel;
    memset(&sentinel, 0xAB, sizeof sentinel);

    TEST("discover_top_k: the heavy item first; pay what you get");
    budget = approx(20.0, 1e-3);
    CHECK_STATUS(dpmo_discover_top_k(&rng, U, I, NULL, n, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 3, 10, 3.0, 1e-6, SCRATCH,
                                     4 * N_EV, WORK, 6 * 64, OUT, N_EV, &res, &budget),
                 DPMO_OK);
    CHECK(res.count >= 1 && res.count <= 3);
    CHECK_EQ(OUT[0], HEAVY);
    CHECK(!contains(OUT, res.count, LONELY));
    CHECK_EQ(res.stopped, res.count < 3);
    if (res.stopped)
        CHECK_DEQ(res.epsilon, (double)(res.count + 1) * 1.0);
    else
        CHECK_DEQ(res.epsilon, 3.0);
    CHECK_DEQ(res.delta, 1e-6);
    CHECK_DEQ(budget.spent, res.epsilon);
    CHECK_DEQ(budget.delta_spent, 1e-6);

    TEST("discover_top_k: few items stop early and pay for what came out");
    {
        int stopped_early = 0;
        for (i = 0; i < 20; i++) {
            budget = approx(20.0, 1e-3);
            CHECK_STATUS(dpmo_discover_top_k(&rng, U, I, V, n, 3, 2, 0.0, 64.0, DPMO_SCORE_SUM, 10, 20, 10.0, 1e-6,
                                             SCRATCH, 4 * N_EV, WORK, 6 * 64, OUT, N_EV, &res, &budget),
                         DPMO_OK);
            CHECK(res.count <= 6); /* at most the six items with a unit (never the lonely one, w.h.p.) */
            stopped_early |= res.stopped;
            CHECK_DEQ(budget.spent, res.stopped ? (double)(res.count + 1) : 10.0);
        }
        CHECK(stopped_early);
    }

    TEST("discover_top_k: argument errors write nothing, charge nothing, draw nothing");
    budget = approx(20.0, 1e-3);
    budget_before = budget;
    before = rng;
    res = sentinel;
    guard(OUT, sizeof OUT);
#define TOPK(vals, lo_, hi_, score_, k_, kb_, eps_, delta_, wlen_, outlen_, want)                                   \
    CHECK_STATUS(dpmo_discover_top_k(&rng, U, I, vals, n, 2, 2, lo_, hi_, score_, k_, kb_, eps_, delta_, SCRATCH,      \
                                     4 * N_EV, WORK, wlen_, OUT, outlen_, &res, &budget),                           \
                 want)
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_UNITS, 0, 10, 1.0, 1e-6, 6 * 64, N_EV, DPMO_INVALID_ARGUMENT);
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_UNITS, 11, 10, 1.0, 1e-6, 6 * 64, N_EV, DPMO_INVALID_ARGUMENT);
    TOPK(NULL, 0.0, 0.0, 3, 2, 10, 1.0, 1e-6, 6 * 64, N_EV, DPMO_INVALID_ARGUMENT);
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_SUM, 2, 10, 1.0, 1e-6, 6 * 64, N_EV, DPMO_INVALID_ARGUMENT);
    TOPK(V, -1.0, 1.0, DPMO_SCORE_SUM, 2, 10, 1.0, 1e-6, 6 * 64, N_EV, DPMO_INVALID_ARGUMENT);
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 10, -1.0, 1e-6, 6 * 64, N_EV, DPMO_INVALID_EPSILON);
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 10, 1.0, 0.0, 6 * 64, N_EV, DPMO_INVALID_ARGUMENT);
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 10, 1.0, 1e-6, 65, N_EV, DPMO_SCRATCH_TOO_SMALL);
    TOPK(NULL, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 10, 1.0, 1e-6, 6 * 64, 1, DPMO_LENGTH_MISMATCH);
#undef TOPK
    CHECK_STATUS(dpmo_discover_top_k(&rng, U, I, NULL, n, 2, 2, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 10, 1.0, 1e-6, SCRATCH,
                                     4 * N_EV, WORK, 6 * 64, OUT, N_EV, (dpmo_top_k_result *)(void *)WORK, &budget),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK(guards_intact());
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    CHECK(memcmp(&res, &sentinel, sizeof res) == 0);

    TEST("discover_top_k: too little budget left for the whole (epsilon, delta) up front");
    budget = approx(1.0, 1e-3);
    CHECK_STATUS(dpmo_discover_top_k(&rng, U, I, NULL, n, 2, 2, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 10, 2.0, 1e-6, SCRATCH,
                                     4 * N_EV, WORK, 6 * 64, OUT, N_EV, &res, &budget),
                 DPMO_BUDGET_EXHAUSTED);
    CHECK_DEQ(budget.spent, 0.0);

    TEST("discover_top_k: the generator advances by the same amount whatever the data");
    a = rng;
    b = rng;
    CHECK_STATUS(dpmo_discover_top_k(&a, U, I, NULL, n, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 3, 10, 3.0, 1e-6, SCRATCH,
                                     4 * N_EV, WORK, 6 * 64, OUT, N_EV, &res, NULL),
                 DPMO_OK);
    CHECK_STATUS(dpmo_discover_top_k(&b, U + 3, I + 9, NULL, 2, 1, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 1, 1, 1.0, 1e-6,
                                     SCRATCH, 4 * N_EV, WORK, 6 * 64, OUT, N_EV, &res, NULL),
                 DPMO_OK);
    CHECK(memcmp(&a, &b, sizeof a) == 0);

    TEST("discover_top_k: no event is an empty dataset (stops at the threshold candidate, pays one round)");
    b = rng;
    budget = approx(10.0, 1e-4);
    CHECK_STATUS(dpmo_discover_top_k(&b, U, I, NULL, 0, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 3, 10, 3.0, 1e-6, SCRATCH, 0,
                                     WORK, 6 * 64, OUT, N_EV, &res, &budget),
                 DPMO_OK);
    CHECK_EQ(res.count, 0);
    CHECK_EQ(res.stopped, 1);
    CHECK_DEQ(res.epsilon, 1.0);
    CHECK_DEQ(budget.spent, 1.0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
}

int main(void) {
    test_budget_approx();
    test_lengths();
    test_bound_events();
    test_partitions();
    test_top_k();
    return HARNESS_FINISH();
}
