/*
 * The pieces of a distributed discovery (dpmo_partition_weight_grid, dpmo_bound_contributions,
 * dpmo_select_partitions_from_statistics, dpmo_select_top_k_from_scores, dpmo_top_k_from_scores_work_len):
 * composed as a Spark job composes them, they give the very same output as the one-process forms
 * (dpmo_discover_partitions, dpmo_discover_top_k) from the same seed; every argument error writes nothing,
 * charges nothing and leaves the generator unchanged; the budget is charged as the one-process forms charge it.
 *
 * The one-process forms draw one key K (four words) from the caller's generator and run the bounding and the
 * selection from the ChaCha20 stream keyed by K. With a ChaCha20 generator seeded by X, K is the first 32
 * bytes of ChaCha20's keystream for the key X (block 0, nonce 0): a generator seeded by K, given to the two
 * pieces in turn, makes the one-process form's draws.
 */
#include "common.h"

#define N_EV 400
#define HEAVY 7u
#define LONELY 99999u

static uint64_t U[N_EV], I[N_EV];
static double V[N_EV];
static uint64_t SCRATCH[4 * N_EV], OUT[N_EV], OUT2[N_EV], WORK[6 * 64 + 2 * N_EV + 1];
static dpmo_contribution KEPT[N_EV];
static uint64_t ITEMS[N_EV], STATS[N_EV], SCORES[2 * N_EV];

/* 100 units; unit u has the heavy item (two events), item 100 + (u mod 5), and (unit 0 only) the lonely item. */
static size_t make_events(void) {
    size_t n = 0, u;
    for (u = 0; u < 100; u++) {
        U[n] = 1000 + u, I[n] = HEAVY, V[n] = 1.0, n++;
        U[n] = 1000 + u, I[n] = 100 + u % 5, V[n] = 2.0, n++;
        U[n] = 1000 + u, I[n] = HEAVY, V[n] = 50.0, n++;
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

/* ---- ChaCha20 (20 rounds, 64-bit counter and stream: rand_chacha's layout), block 0 of key `key` ---- */
static uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
#define QR(a, b, c, d) (a += b, d = rotl(d ^ a, 16), c += d, b = rotl(b ^ c, 12), a += b, d = rotl(d ^ a, 8), \
                        c += d, b = rotl(b ^ c, 7))
static void chacha20_block0(const uint8_t key[32], uint8_t out[64]) {
    uint32_t s[16], x[16];
    int i;
    s[0] = 0x61707865u, s[1] = 0x3320646eu, s[2] = 0x79622d32u, s[3] = 0x6b206574u;
    for (i = 0; i < 8; i++)
        s[4 + i] = (uint32_t)key[4 * i] | (uint32_t)key[4 * i + 1] << 8 | (uint32_t)key[4 * i + 2] << 16 |
                   (uint32_t)key[4 * i + 3] << 24;
    for (i = 12; i < 16; i++) s[i] = 0;
    memcpy(x, s, sizeof s);
    for (i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]), QR(x[1], x[5], x[9], x[13]), QR(x[2], x[6], x[10], x[14]),
            QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]), QR(x[1], x[6], x[11], x[12]), QR(x[2], x[7], x[8], x[13]),
            QR(x[3], x[4], x[9], x[14]);
    }
    for (i = 0; i < 16; i++) {
        uint32_t w = x[i] + s[i];
        out[4 * i] = (uint8_t)w, out[4 * i + 1] = (uint8_t)(w >> 8), out[4 * i + 2] = (uint8_t)(w >> 16),
                  out[4 * i + 3] = (uint8_t)(w >> 24);
    }
}

/* The generator of the one-process form's private stream: ChaCha20 keyed by the first four words a ChaCha20
 * generator seeded by seed_byte, seed_byte + 1, ... draws. */
static dpmo_rng stream_of(unsigned seed_byte) {
    uint8_t seed[32], block[64];
    dpmo_rng rng;
    size_t i;
    for (i = 0; i < 32; i++) seed[i] = (uint8_t)(seed_byte + i);
    chacha20_block0(seed, block);
    memset(&rng, 0, sizeof rng);
    if (dpmo_rng_init(&rng, DPMO_RNG_CHACHA20, block) != DPMO_OK) exit(2);
    return rng;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The per-item statistics of the kept contributions, items ascending: `what` 0 = units, 1 = weights,
 * 2 = events, 3 = max(0, sum) (the last two as 128-bit score pairs in SCORES). Returns the number of items. */
static size_t aggregate(size_t kept, int what) {
    size_t m = 0, i, j;
    for (i = 0; i < kept; i++) ITEMS[m++] = KEPT[i].item;
    qsort(ITEMS, m, sizeof ITEMS[0], cmp_u64);
    for (i = 0, j = 0; i < m; i++)
        if (j == 0 || ITEMS[j - 1] != ITEMS[i]) ITEMS[j++] = ITEMS[i];
    m = j;
    for (j = 0; j < m; j++) {
        uint64_t s = 0;
        for (i = 0; i < kept; i++) {
            if (KEPT[i].item != ITEMS[j]) continue;
            s += what == 0 ? 1 : what == 1 ? KEPT[i].weight : what == 2 ? KEPT[i].events
                                                            : (uint64_t)(KEPT[i].sum > 0 ? KEPT[i].sum : 0);
        }
        STATS[j] = s;
        SCORES[2 * j] = s;
        SCORES[2 * j + 1] = 0;
    }
    return m;
}

static void test_same_as_one_process(void) {
    size_t n = make_events(), seed, count, count2, kept, m;
    unsigned mech;
    double grid;
    int differs = 0;
    TEST("pieces: partition selection from statistics = dpmo_discover_partitions, draw for draw");
    for (mech = DPMO_PARTITION_TRUNCATED_GEOMETRIC; mech <= DPMO_PARTITION_WEIGHTED_GAUSSIAN; mech++) {
        uint64_t g = 0;
        size_t l = 2;
        double eps = 0.3, delta = 0.2; /* small ε, large δ: decisions that vary with the seed */
        CHECK_STATUS(dpmo_partition_weight_grid(mech, 0, eps, delta, l, &g), DPMO_OK);
        CHECK(mech == DPMO_PARTITION_WEIGHTED_GAUSSIAN ? g > 0 : g == 0);
        for (seed = 0; seed < 40; seed++) {
            dpmo_rng one = make_rng(DPMO_RNG_CHACHA20, (unsigned)(3 * seed + mech));
            dpmo_rng two = stream_of((unsigned)(3 * seed + mech));
            CHECK_STATUS(dpmo_discover_partitions(&one, U, I, n, l, mech, 0, eps, delta, SCRATCH, 4 * N_EV, OUT, N_EV,
                                                  &count, NULL),
                         DPMO_OK);
            CHECK_STATUS(dpmo_bound_contributions(&two, U, I, NULL, n, l, 1, 0.0, 0.0, g, SCRATCH, 4 * N_EV, KEPT,
                                                  N_EV, &kept, &grid),
                         DPMO_OK);
            m = aggregate(kept, mech == DPMO_PARTITION_WEIGHTED_GAUSSIAN ? 1 : 0);
            CHECK_STATUS(dpmo_select_partitions_from_statistics(&two, ITEMS, STATS, m, l, mech, 0, eps, delta, OUT2,
                                                                N_EV, &count2, NULL),
                         DPMO_OK);
            CHECK_EQ(count2, count);
            CHECK(count == count2 && memcmp(OUT, OUT2, count * sizeof OUT[0]) == 0);
            differs += count != 6;
        }
    }
    CHECK(differs > 0); /* the decisions vary: the comparison above is not vacuous */

    TEST("pieces: top-k from scores = dpmo_discover_top_k, draw for draw");
    {
        uint32_t score;
        differs = 0;
        for (score = DPMO_SCORE_UNITS; score <= DPMO_SCORE_SUM; score++) {
            const double *vals = score == DPMO_SCORE_SUM ? V : NULL;
            double lo = 0.0, hi = score == DPMO_SCORE_SUM ? 10.0 : 0.0;
            for (seed = 0; seed < 40; seed++) {
                dpmo_rng one = make_rng(DPMO_RNG_CHACHA20, (unsigned)(5 * seed + score));
                dpmo_rng two = stream_of((unsigned)(5 * seed + score));
                dpmo_top_k_result r1, r2;
                size_t wl = 0;
                CHECK_STATUS(dpmo_discover_top_k(&one, U, I, vals, n, 2, 2, lo, hi, score, 3, 4, 0.6, 0.1, SCRATCH,
                                                 4 * N_EV, WORK, 6 * 5, OUT, N_EV, &r1, NULL),
                             DPMO_OK);
                CHECK_STATUS(dpmo_bound_contributions(&two, U, I, vals, n, 2, 2, lo, hi, 0, SCRATCH, 4 * N_EV, KEPT,
                                                      N_EV, &kept, &grid),
                             DPMO_OK);
                m = aggregate(kept, score == DPMO_SCORE_UNITS ? 0 : score == DPMO_SCORE_EVENTS ? 2 : 3);
                CHECK_STATUS(dpmo_top_k_from_scores_work_len(m, 4, &wl), DPMO_OK);
                CHECK_EQ(wl, 6 * 5 + 2 * m + 1);
                CHECK_STATUS(dpmo_select_top_k_from_scores(&two, ITEMS, SCORES, m, 2, 2, lo, hi, score, 3, 4, 0.6, 0.1,
                                                           WORK, wl, OUT2, N_EV, &r2, NULL),
                             DPMO_OK);
                CHECK_EQ(r2.count, r1.count);
                CHECK_EQ(r2.stopped, r1.stopped);
                CHECK_DEQ(r2.epsilon, r1.epsilon);
                CHECK_DEQ(r2.delta, r1.delta);
                CHECK(r1.count == r2.count && memcmp(OUT, OUT2, r1.count * sizeof OUT[0]) == 0);
                differs += r1.count != 3 || OUT[0] != HEAVY;
            }
        }
        CHECK(differs > 0);
    }
}

static void test_errors_and_charges(void) {
    size_t n = make_events(), kept, count, m;
    double grid;
    uint64_t g;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 1), before;
    dpmo_budget budget, budget_before;
    dpmo_top_k_result res, sentinel;

    TEST("weight grid: the plan's checks, nothing written on error");
    g = 77;
    CHECK_STATUS(dpmo_partition_weight_grid(DPMO_PARTITION_GAUSSIAN, 0, 0.0, 1e-6, 2, &g), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_partition_weight_grid(DPMO_PARTITION_GAUSSIAN, 1, 1.0, 1e-6, 2, &g), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_partition_weight_grid(9, 0, 1.0, 1e-6, 2, &g), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_partition_weight_grid(DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, 0, &g), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_partition_weight_grid(DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, 2, NULL), DPMO_NULL_POINTER);
    CHECK_EQ(g, 77);
    CHECK_STATUS(dpmo_partition_weight_grid(DPMO_PARTITION_SIPS, 3, 1.0, 1e-6, 4, &g), DPMO_OK);
    CHECK(g > 0);

    TEST("bound_contributions: rows per kept (unit, item), |S_u| <= L, weights ⌊G/√|S_u|⌋");
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 2, 1, 0.0, 10.0, 1024, SCRATCH, 4 * N_EV, KEPT, N_EV,
                                          &kept, &grid),
                 DPMO_OK);
    CHECK_EQ(kept, 200); /* every unit keeps 2 of its 2 or 3 items */
    {
        size_t i, ok = 1;
        for (i = 0; i < kept; i++) {
            ok &= KEPT[i].unit_items == 2 && KEPT[i].events == 1 && KEPT[i].weight == 724; /* ⌊1024/√2⌋ */
            ok &= KEPT[i].sum >= 0;
        }
        CHECK(ok);
    }
    TEST("bound_contributions: argument errors write nothing, draw nothing");
    before = rng;
    kept = SENTINEL_Z;
    guard(KEPT, sizeof KEPT);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 0, 1, 0.0, 10.0, 0, SCRATCH, 4 * N_EV, KEPT, N_EV, &kept,
                                          &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 2, 1, 5.0, 1.0, 0, SCRATCH, 4 * N_EV, KEPT, N_EV, &kept,
                                          &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, NULL, n, 2, 1, 0.0, 1.0, 0, SCRATCH, 4 * N_EV, KEPT, N_EV,
                                          &kept, &grid),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 2, 1, 0.0, 10.0, 0, SCRATCH, 4 * n - 1, KEPT, N_EV, &kept,
                                          &grid),
                 DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 2, 1, 0.0, 10.0, 0, SCRATCH, 4 * N_EV, KEPT, n - 1, &kept,
                                          &grid),
                 DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 2, 1, 0.0, 10.0, 0, SCRATCH, 4 * N_EV,
                                          (dpmo_contribution *)(void *)SCRATCH, N_EV / 4, &kept, &grid),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, V, n, 2, 1, 0.0, 10.0, 0, SCRATCH, 4 * N_EV, NULL, N_EV, &kept,
                                          &grid),
                 DPMO_NULL_POINTER);
    CHECK(guards_intact());
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK_EQ(kept, SENTINEL_Z);

    TEST("select_partitions_from_statistics: errors write nothing, charge nothing, draw nothing");
    CHECK_STATUS(dpmo_bound_contributions(&rng, U, I, NULL, n, 2, 1, 0.0, 0.0, 0, SCRATCH, 4 * N_EV, KEPT, N_EV,
                                          &kept, &grid),
                 DPMO_OK);
    m = aggregate(kept, 0);
    budget = approx(10.0, 1e-4);
    budget_before = budget;
    before = rng;
    count = SENTINEL_Z;
    guard(OUT, sizeof OUT);
#define SEL(items_, stats_, m_, l_, mech_, rounds_, eps_, delta_, outlen_, want)                                      \
    CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, items_, stats_, m_, l_, mech_, rounds_, eps_, delta_, OUT, \
                                                        outlen_, &count, &budget),                                     \
                 want)
    SEL(ITEMS, STATS, m, 2, DPMO_PARTITION_SIPS, 2, 1.0, 1e-6, N_EV, DPMO_UNSUPPORTED);
    SEL(ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 0.0, 1e-6, N_EV, DPMO_INVALID_EPSILON);
    SEL(ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 0.0, N_EV, DPMO_INVALID_ARGUMENT);
    SEL(ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 1, 1.0, 1e-6, N_EV, DPMO_INVALID_ARGUMENT);
    SEL(ITEMS, STATS, m, 2, 9, 0, 1.0, 1e-6, N_EV, DPMO_INVALID_ARGUMENT);
    SEL(ITEMS, STATS, m, 0, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, N_EV, DPMO_INVALID_ARGUMENT);
    SEL(ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6, m - 1, DPMO_LENGTH_MISMATCH);
#undef SEL
    {
        uint64_t desc[2] = {9, 3}, st[2] = {1, 1}, zero[2] = {1, 0}, inc[2] = {3, 9};
        CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, desc, st, 2, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                            OUT, N_EV, &count, &budget),
                     DPMO_INVALID_ARGUMENT);
        CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, inc, zero, 2, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                            OUT, N_EV, &count, &budget),
                     DPMO_INVALID_ARGUMENT);
        inc[1] = 3;
        CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, inc, st, 2, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                            OUT, N_EV, &count, &budget),
                     DPMO_INVALID_ARGUMENT);
    }
    CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                        ITEMS, N_EV, &count, &budget),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                        OUT, N_EV, &count, (dpmo_budget *)(void *)&rng),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK(guards_intact());
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    CHECK_EQ(count, SENTINEL_Z);

    TEST("select_partitions_from_statistics: charged (ε, δ) on success; a refused charge draws nothing");
    CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                        OUT, N_EV, &count, &budget),
                 DPMO_OK);
    CHECK_DEQ(budget.spent, 1.0);
    CHECK_DEQ(budget.delta_spent, 1e-6);
    {
        size_t i;
        int heavy = 0, lonely = 0;
        for (i = 0; i < count; i++) heavy |= OUT[i] == HEAVY, lonely |= OUT[i] == LONELY;
        CHECK(heavy);
        CHECK(!lonely);
    }
    budget = approx(0.5, 1e-4);
    budget_before = budget;
    before = rng;
    CHECK_STATUS(dpmo_select_partitions_from_statistics(&rng, ITEMS, STATS, m, 2, DPMO_PARTITION_GAUSSIAN, 0, 1.0, 1e-6,
                                                        OUT, N_EV, &count, &budget),
                 DPMO_BUDGET_EXHAUSTED);
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);
    CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);

    TEST("select_top_k_from_scores: errors write nothing, charge nothing, draw nothing");
    m = aggregate(kept, 0);
    budget = approx(10.0, 1e-4);
    budget_before = budget;
    before = rng;
    memset(&sentinel, 0xA5, sizeof sentinel);
    res = sentinel;
    guard(OUT, sizeof OUT);
    guard(WORK, sizeof WORK);
#define TK(items_, scores_, m_, l_, c_, lo_, hi_, score_, k_, kb_, eps_, delta_, wl_, outlen_, want)                 \
    CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, items_, scores_, m_, l_, c_, lo_, hi_, score_, k_, kb_, eps_,     \
                                               delta_, WORK, wl_, OUT, outlen_, &res, &budget),                        \
                 want)
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 0, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 5, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, 3, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV, DPMO_INVALID_ARGUMENT);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_SUM, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT); /* a sum without a clamp */
    TK(ITEMS, SCORES, m, 2, 1, -1.0, 1.0, DPMO_SCORE_SUM, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT); /* lo < 0 */
    TK(ITEMS, SCORES, m, 2, 1, 3.0, 1.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT); /* lo > hi */
    TK(ITEMS, SCORES, m, 0, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT);
    TK(ITEMS, SCORES, m, 2, 0, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 0.0, 1e-6, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_EPSILON);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1.0, 6 * 5 + 2 * m + 1, N_EV,
       DPMO_INVALID_ARGUMENT);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m, N_EV,
       DPMO_SCRATCH_TOO_SMALL);
    TK(ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6, 6 * 5 + 2 * m + 1, 1,
       DPMO_LENGTH_MISMATCH);
#undef TK
    {
        uint64_t desc[2] = {9, 3}, twice[2] = {3, 3}, sc[4] = {1, 0, 2, 0};
        uint64_t big[4] = {1, 0, 0, (uint64_t)1 << 56}; /* 2^120 */
        uint64_t inc[2] = {3, 9};
        size_t wl = 6 * 5 + 5;
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, desc, sc, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   WORK, wl, OUT, N_EV, &res, &budget),
                     DPMO_INVALID_ARGUMENT);
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, twice, sc, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   WORK, wl, OUT, N_EV, &res, &budget),
                     DPMO_INVALID_ARGUMENT);
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, inc, big, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   WORK, wl, OUT, N_EV, &res, &budget),
                     DPMO_INVALID_ARGUMENT);
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, inc, sc, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   WORK, wl, OUT, N_EV, &res, (dpmo_budget *)(void *)&rng),
                     DPMO_OVERLAPPING_BUFFERS);
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, inc, sc, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   WORK, wl, sc, N_EV, &res, &budget),
                     DPMO_OVERLAPPING_BUFFERS);
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, inc, sc, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   NULL, wl, OUT, N_EV, &res, &budget),
                     DPMO_NULL_POINTER);
        CHECK(guards_intact());
        CHECK(memcmp(&rng, &before, sizeof rng) == 0);
        CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
        CHECK(memcmp(&res, &sentinel, sizeof res) == 0);
        big[3] = ((uint64_t)1 << 56) - 1; /* just below 2^120: accepted */
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, inc, big, 2, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 2, 4, 1.0, 1e-6,
                                                   WORK, wl, OUT, N_EV, &res, NULL),
                     DPMO_OK);
        CHECK_EQ(OUT[0], 9); /* 2^120 - 2^64 ahead of 1: always first */
    }

    TEST("select_top_k_from_scores: pay what you get, as dpmo_discover_top_k");
    {
        int stopped_early = 0, full = 0, trial;
        for (trial = 0; trial < 60; trial++) {
            dpmo_budget b = approx(10.0, 1e-4);
            CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 5, 6,
                                                       1.0, 1e-6, WORK, 6 * 7 + 2 * m + 1, OUT, N_EV, &res, &b),
                         DPMO_OK);
            CHECK_DEQ(b.spent, res.epsilon);
            CHECK_DEQ(b.delta_spent, 1e-6);
            if (res.stopped) {
                stopped_early = 1;
                CHECK_NEAR(res.epsilon, 1.0 / 5 * (double)(res.count + 1), 1e-12);
                CHECK(res.epsilon < 1.0);
            } else {
                full = 1;
                CHECK_DEQ(res.epsilon, 1.0);
            }
        }
        CHECK(stopped_early);
        (void)full;
        budget = approx(0.5, 1e-4);
        budget_before = budget;
        before = rng;
        CHECK_STATUS(dpmo_select_top_k_from_scores(&rng, ITEMS, SCORES, m, 2, 1, 0.0, 0.0, DPMO_SCORE_UNITS, 5, 6, 1.0,
                                                   1e-6, WORK, 6 * 7 + 2 * m + 1, OUT, N_EV, &res, &budget),
                     DPMO_BUDGET_EXHAUSTED);
        CHECK(memcmp(&rng, &before, sizeof rng) == 0);
        CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    }
}

int main(void) {
    test_same_as_one_process();
    test_errors_and_charges();
    return HARNESS_FINISH();
}
