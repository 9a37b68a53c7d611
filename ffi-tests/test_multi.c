/*
 * The multi-objective C API: score stages (Pareto score, delta^PS, weighted sums), PrivPareto and PrivAgg
 * (global and local, top-k), single-objective top-k, the privacy budget and advanced composition.
 *
 * Values: the PrivPareto paper's Examples 4.4 and 4.6, mechanisms equal to the exponential mechanism over the
 * stage outputs, top-k returning distinct indices. Errors: every status each function can produce, and for
 * every failing call nothing written to the outputs, the generator and the budget byte-for-byte unchanged.
 */
#include "common.h"

#include <float.h>

static double nan_(void) { return nan(""); }

/* PrivPareto paper, Example 4.4: candidates a..e, u1 = (3, 5, 4, 2, 1), u2 = (5, 3, 2, 4, 1), row-major n x m. */
#define N44 5
static const double U44[N44 * 2] = {3, 5, 5, 3, 4, 2, 2, 4, 1, 1};
static const double PS44[N44] = {0, 0, -1, -1, -4};

/* Example 4.6: candidates a, b, c with u1 = u2 = (1, 3, 5), delta^{u_i}(x, 0, .) = (0.5, 1, 1.5). */
#define N46 3
static const double U46[N46 * 2] = {1, 1, 3, 3, 5, 5};
static const double D46[N46] = {0.5, 1.0, 1.5};

/* Per-candidate deltas for Example 4.4 (any admissible-looking values; Δ_i = 4, t_max 3). */
static const double D44A[N44] = {0.5, 1.0, 0.25, 2.0, 1.0};
static const double D44B[N44] = {1.0, 0.5, 1.5, 0.25, 3.0};

static int distinct_below(const size_t *v, size_t k, size_t n) {
    size_t i, j;
    for (i = 0; i < k; i++) {
        if (v[i] >= n) return 0;
        for (j = 0; j < i; j++)
            if (v[i] == v[j]) return 0;
    }
    return 1;
}

static void fill_z(size_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = SENTINEL_Z;
}

static void fill_d(double *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = SENTINEL_D;
}

/* ================================================================== Pareto scores */
static void ps_case(const char *name, const double *u, size_t n, size_t m, uint32_t dom, double *out, size_t *scratch,
                    size_t scratch_len, dpmo_status want) {
    TEST(name);
    guard(out, span(n, sizeof(double)));
    guard(scratch, span(scratch_len, sizeof(size_t)));
    CHECK_STATUS(dpmo_pareto_scores(u, n, m, dom, out, scratch, scratch_len), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_pareto_scores(void) {
    double out[8], u[16];
    size_t scratch[4096], len = 0, i;
    const double ties[6] = {1, 1, 1, 1, 0, 2};
    fill_z(scratch, 4096);

    TEST("pareto_scores_scratch_len");
    CHECK_STATUS(dpmo_pareto_scores_scratch_len(N44, 2, &len), DPMO_OK);
    CHECK(len > 0 && len <= 4096);
    CHECK_STATUS(dpmo_pareto_scores_scratch_len(N44, 2, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_pareto_scores_scratch_len(N44, 2, (size_t *)misalign(scratch)), DPMO_INVALID_ARGUMENT);
    i = SENTINEL_Z;
    CHECK_STATUS(dpmo_pareto_scores_scratch_len(SIZE_MAX / 2, 2, &i), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_pareto_scores_scratch_len(N44, 0, &i), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_pareto_scores_scratch_len(N44, DPMO_MAX_OBJECTIVES + 1, &i), DPMO_CAPACITY_EXCEEDED);
    CHECK_EQ(i, SENTINEL_Z);

    TEST("pareto_scores_scratch_len takes m: 6n + 1 words at m = 2 on 64-bit targets (288 bytes per candidate "
         "before issue 22), growing with m");
    {
        size_t two = 0, three = 0, sixteen = 0;
        CHECK_STATUS(dpmo_pareto_scores_scratch_len(100000, 2, &two), DPMO_OK);
        CHECK_STATUS(dpmo_pareto_scores_scratch_len(100000, 3, &three), DPMO_OK);
        CHECK_STATUS(dpmo_pareto_scores_scratch_len(100000, 16, &sixteen), DPMO_OK);
        if (sizeof(size_t) == 8) CHECK_EQ(two, 6 * 100000 + 1);
        CHECK(two < three && three < sixteen);
    }

    TEST("example 4.4 Pareto scores (0, 0, -1, -1, -4)");
    for (i = 0; i < 2; i++) {
        fill_d(out, 8);
        CHECK_STATUS(dpmo_pareto_scores(U44, N44, 2, (uint32_t)i, out, scratch, len), DPMO_OK);
        CHECK_DEQ(out[0], PS44[0]);
        CHECK_DEQ(out[1], PS44[1]);
        CHECK_DEQ(out[2], PS44[2]);
        CHECK_DEQ(out[3], PS44[3]);
        CHECK_DEQ(out[4], PS44[4]);
        CHECK_DEQ(out[5], SENTINEL_D);
    }

    TEST("pareto scores with ties: textbook vs weak");
    CHECK_STATUS(dpmo_pareto_scores(ties, 3, 2, DPMO_DOMINANCE_TEXTBOOK, out, scratch, 4096), DPMO_OK);
    CHECK_DEQ(out[0], 0.0);
    CHECK_DEQ(out[1], 0.0);
    CHECK_DEQ(out[2], 0.0);
    CHECK_STATUS(dpmo_pareto_scores(ties, 3, 2, DPMO_DOMINANCE_WEAK, out, scratch, 4096), DPMO_OK);
    CHECK_DEQ(out[0], -1.0);
    CHECK_DEQ(out[1], -1.0);
    CHECK_DEQ(out[2], 0.0);

    fill_d(out, 8);
    memcpy(u, U44, sizeof U44);
    ps_case("pareto_scores null utilities", NULL, N44, 2, 0, out, scratch, len, DPMO_NULL_POINTER);
    ps_case("pareto_scores null out", u, N44, 2, 0, NULL, scratch, len, DPMO_NULL_POINTER);
    ps_case("pareto_scores null scratch", u, N44, 2, 0, out, NULL, len, DPMO_NULL_POINTER);
    ps_case("pareto_scores m = 0", u, N44, 0, 0, out, scratch, len, DPMO_INVALID_ARGUMENT);
    ps_case("pareto_scores m = 17", u, 0, 17, 0, out, scratch, len, DPMO_CAPACITY_EXCEEDED);
    ps_case("pareto_scores n = 0", u, 0, 2, 0, out, scratch, len, DPMO_EMPTY_INPUT);
    ps_case("pareto_scores unknown dominance", u, N44, 2, 2, out, scratch, len, DPMO_INVALID_ARGUMENT);
    ps_case("pareto_scores unknown dominance max", u, N44, 2, UINT32_MAX, out, scratch, len, DPMO_INVALID_ARGUMENT);
    ps_case("pareto_scores scratch too small", u, N44, 2, 0, out, scratch, len - 1, DPMO_SCRATCH_TOO_SMALL);
    ps_case("pareto_scores n * m overflows", u, SIZE_MAX / 2, 3, 0, out, scratch, len, DPMO_OVERFLOW);
    ps_case("pareto_scores out overlaps utilities", u, N44, 2, 0, u + 3, scratch, len, DPMO_OVERLAPPING_BUFFERS);
    ps_case("pareto_scores scratch overlaps out", u, N44, 2, 0, out, (size_t *)(void *)out, 4,
            DPMO_OVERLAPPING_BUFFERS);
    ps_case("pareto_scores misaligned out", u, N44, 2, 0, (double *)misalign(out), scratch, len, DPMO_INVALID_ARGUMENT);
    u[5] = nan_();
    ps_case("pareto_scores NaN utility", u, N44, 2, 0, out, scratch, len, DPMO_NON_FINITE_INPUT);
    u[5] = INFINITY;
    ps_case("pareto_scores infinite utility", u, N44, 2, 0, out, scratch, len, DPMO_NON_FINITE_INPUT);
}

/* ================================================================== delta^PS table */
static void pst_case(const char *name, const double *u, size_t n, size_t m, const dpmo_sensitivity *deltas,
                     size_t columns, double *out, size_t *ix, size_t ix_len, double *vs, size_t vs_len,
                     dpmo_status want) {
    TEST(name);
    guard(out, span(n * columns, sizeof(double)));
    CHECK_STATUS(dpmo_pareto_sensitivity_table(u, n, m, deltas, columns, out, ix, ix_len, vs, vs_len), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_pareto_sensitivity(void) {
    dpmo_sensitivity specs[17];
    double out[32], vs[64], cbt[N46 * 2], d[N46];
    size_t ix[64], ix_len = 0, vs_len = 0, i;
    cb_ctx ctx;
    fill_z(ix, 64);
    fill_d(vs, 64);

    TEST("pareto_sensitivity_scratch_len");
    CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(N46, 2, &ix_len, &vs_len), DPMO_OK);
    CHECK(ix_len >= 8 * N46 + 1 && ix_len <= 64);
    CHECK_EQ(vs_len, 3 * N46 * 2);
    CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(N46, 2, NULL, &vs_len), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(N46, 2, &ix_len, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(N46, 2, &ix_len, &ix_len), DPMO_OVERLAPPING_BUFFERS);
    {
        size_t before = ix_len;
        CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(SIZE_MAX / 4, 2, &ix_len, &vs_len), DPMO_OVERFLOW);
        CHECK_EQ(ix_len, before);
    }

    /* Example 4.6 (delta per candidate, constant in t, Δ_i = 10 so nothing is clamped):
     * t = 0: a 0 (no dominator close, nothing non-dominated above), b 1 (the example), c 1 (b within reach);
     * t = 1: S = 2 delta, every pair within reach: 2, 2, 2. */
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D46, N46, 0, 10.0, 5);
    specs[1] = specs[0];
    TEST("example 4.6 delta^PS(x, 0, b) = 1");
    fill_d(out, 32);
    CHECK_STATUS(dpmo_pareto_sensitivity_table(U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len), DPMO_OK);
    CHECK_DEQ(out[1 * 2 + 0], 1.0);
    CHECK_DEQ(out[0 * 2 + 0], 0.0);
    CHECK_DEQ(out[2 * 2 + 0], 1.0);
    CHECK_DEQ(out[0 * 2 + 1], 2.0);
    CHECK_DEQ(out[1 * 2 + 1], 2.0);
    CHECK_DEQ(out[2 * 2 + 1], 2.0);
    CHECK_DEQ(out[6], SENTINEL_D);

    TEST("delta^PS from a callback spec equals the per-candidate one");
    for (i = 0; i < N46; i++) cbt[i * 2] = cbt[i * 2 + 1] = D46[i];
    ctx = make_ctx(cbt, 2);
    specs[1] = make_cb_spec(&ctx, 10.0, 5);
    fill_d(out + 8, 6);
    CHECK_STATUS(dpmo_pareto_sensitivity_table(U46, N46, 2, specs, 2, out + 8, ix, ix_len, vs, vs_len), DPMO_OK);
    for (i = 0; i < 6; i++) CHECK_DEQ(out[8 + i], out[i]);
    CHECK(ctx.calls > 0);

    TEST("delta^PS clamping: delta_i clamped to Δ_i = 0.25 puts nobody within reach at t = 0");
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D46, N46, 0, 0.25, 5);
    specs[1] = specs[0];
    CHECK_STATUS(dpmo_pareto_sensitivity_table(U46, N46, 2, specs, 1, out, ix, ix_len, vs, vs_len), DPMO_OK);
    CHECK_DEQ(out[0], 0.0);
    CHECK_DEQ(out[1], 0.0);
    CHECK_DEQ(out[2], 0.0);

    /* errors */
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D46, N46, 0, 10.0, 5);
    for (i = 1; i < 17; i++) specs[i] = specs[0];
    fill_d(out, 32);
    pst_case("pst null utilities", NULL, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_NULL_POINTER);
    pst_case("pst null deltas", U46, N46, 2, NULL, 2, out, ix, ix_len, vs, vs_len, DPMO_NULL_POINTER);
    pst_case("pst null out", U46, N46, 2, specs, 2, NULL, ix, ix_len, vs, vs_len, DPMO_NULL_POINTER);
    pst_case("pst null index scratch", U46, N46, 2, specs, 2, out, NULL, ix_len, vs, vs_len, DPMO_NULL_POINTER);
    pst_case("pst null value scratch", U46, N46, 2, specs, 2, out, ix, ix_len, NULL, vs_len, DPMO_NULL_POINTER);
    pst_case("pst m = 0", U46, N46, 0, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_INVALID_ARGUMENT);
    pst_case("pst m = 17", U46, 1, 17, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_CAPACITY_EXCEEDED);
    pst_case("pst n = 0", U46, 0, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_EMPTY_INPUT);
    pst_case("pst columns = 0", U46, N46, 2, specs, 0, out, ix, ix_len, vs, vs_len, DPMO_INVALID_ARGUMENT);
    pst_case("pst index scratch too small", U46, N46, 2, specs, 2, out, ix, ix_len - 1, vs, vs_len,
             DPMO_SCRATCH_TOO_SMALL);
    pst_case("pst value scratch too small", U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len - 1,
             DPMO_SCRATCH_TOO_SMALL);
    pst_case("pst n * columns overflows", U46, N46, 2, specs, SIZE_MAX / 2, out, ix, ix_len, vs, vs_len,
             DPMO_OVERFLOW);
    pst_case("pst out overlaps utilities", U46, N46, 2, specs, 2, (double *)(void *)U46, ix, ix_len, vs, vs_len,
             DPMO_OVERLAPPING_BUFFERS);
    pst_case("pst out overlaps the specs", U46, N46, 2, specs, 2, (double *)(void *)&specs[1], ix, ix_len, vs, vs_len,
             DPMO_OVERLAPPING_BUFFERS);
    pst_case("pst out overlaps delta values", U46, N46, 2, specs, 1, (double *)(void *)D46, ix, ix_len, vs, vs_len,
             DPMO_OVERLAPPING_BUFFERS);
    pst_case("pst value scratch overlaps out", U46, N46, 2, specs, 2, out, ix, ix_len, out + 2, vs_len,
             DPMO_OVERLAPPING_BUFFERS);
    pst_case("pst index scratch overlaps value scratch", U46, N46, 2, specs, 2, out, ix, ix_len,
             (double *)(void *)(ix + 4), vs_len, DPMO_OVERLAPPING_BUFFERS);
    specs[1].kind = 9;
    pst_case("pst unknown delta kind", U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_INVALID_ARGUMENT);
    specs[1] = specs[0];
    specs[1].values_len = N46 - 1;
    pst_case("pst delta values length mismatch", U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len,
             DPMO_LENGTH_MISMATCH);
    specs[1] = specs[0];
    specs[1].global = 0.0;
    pst_case("pst delta global 0", U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_INVALID_SENSITIVITY);
    specs[1] = specs[0];
    memcpy(d, D46, sizeof d);
    /* δ values are private data, never a status: a NaN, negative or infinite δ_i value counts as Δ_i = 10
     * (the public rule), so the table is the one computed with 10 in its place. */
    {
        double ref[32], dref[N46];
        dpmo_sensitivity rspecs[2];
        const double bad[3] = {nan_(), -1.0, INFINITY};
        const char *const names[3] = {"pst NaN delta value counts as Δ", "pst negative delta value counts as Δ",
                                      "pst infinite delta value counts as Δ"};
        memcpy(dref, D46, sizeof dref);
        dref[2] = 10.0;
        rspecs[0] = specs[0];
        rspecs[1] = specs[0];
        rspecs[1].values = dref;
        fill_d(ref, 32);
        CHECK_STATUS(dpmo_pareto_sensitivity_table(U46, N46, 2, rspecs, 2, ref, ix, ix_len, vs, vs_len), DPMO_OK);
        for (i = 0; i < 3; i++) {
            d[2] = bad[i];
            specs[1].values = d;
            fill_d(out, 32);
            pst_case(names[i], U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_OK);
            CHECK(memcmp(out, ref, N46 * 2 * sizeof(double)) == 0);
            CHECK_DEQ(out[N46 * 2], SENTINEL_D);
        }
        /* The contrast: the valid table (δ = D46) gives another table, so the comparison sees that value. */
        specs[1].values = D46;
        CHECK_STATUS(dpmo_pareto_sensitivity_table(U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len), DPMO_OK);
        CHECK(memcmp(out, ref, N46 * 2 * sizeof(double)) != 0);
        /* A callback returning -1 at (2, 1): as a callback returning Δ = 10 there. */
        for (i = 0; i < N46; i++) cbt[i * 2] = cbt[i * 2 + 1] = D46[i];
        ctx = make_ctx(cbt, 2);
        ctx.has_bad = 1;
        ctx.bad_r = 2;
        ctx.bad_t = 1;
        ctx.bad_value = -1.0;
        specs[1] = make_cb_spec(&ctx, 10.0, 5);
        fill_d(out, 32);
        pst_case("pst callback returns -1: counts as Δ", U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_OK);
        {
            double cref[N46 * 2];
            cb_ctx c2;
            memcpy(cref, cbt, sizeof cref);
            cref[2 * 2 + 1] = 10.0;
            c2 = make_ctx(cref, 2);
            rspecs[1] = make_cb_spec(&c2, 10.0, 5);
            fill_d(ref, 32);
            CHECK_STATUS(dpmo_pareto_sensitivity_table(U46, N46, 2, rspecs, 2, ref, ix, ix_len, vs, vs_len), DPMO_OK);
            CHECK(memcmp(out, ref, N46 * 2 * sizeof(double)) == 0);
        }
    }
    specs[1].callback = NULL;
    pst_case("pst null callback", U46, N46, 2, specs, 2, out, ix, ix_len, vs, vs_len, DPMO_NULL_POINTER);
}

/* ================================================================== weighted sums */
static void test_weighted(void) {
    const double w[2] = {1.0, -2.0}, g[2] = {1.0, 0.5}, zero[2] = {0.0, 0.0};
    double out[16], wb[2], glob = SENTINEL_D, table[16];
    dpmo_sensitivity specs[17];
    size_t i, t;

    TEST("weighted_sum example 4.4, w = (1, -2)");
    fill_d(out, 16);
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, w, out), DPMO_OK);
    for (i = 0; i < N44; i++) CHECK_DEQ(out[i], U44[2 * i] - 2.0 * U44[2 * i + 1]);
    CHECK_DEQ(out[N44], SENTINEL_D);

    TEST("weighted_sum errors");
    fill_d(out, 16);
    guard(out, sizeof out);
    CHECK_STATUS(dpmo_weighted_sum(NULL, N44, 2, w, out), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, NULL, out), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, w, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 0, w, out), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_weighted_sum(U44, 0, 17, w, out), DPMO_CAPACITY_EXCEEDED);
    CHECK_STATUS(dpmo_weighted_sum(U44, 0, 2, w, out), DPMO_EMPTY_INPUT);
    CHECK_STATUS(dpmo_weighted_sum(U44, SIZE_MAX / 2, 2, w, out), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, w, (double *)(void *)U44), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, w, (double *)(void *)w), DPMO_OVERLAPPING_BUFFERS);
    wb[0] = 1.0;
    wb[1] = nan_();
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, wb, out), DPMO_NON_FINITE_INPUT);
    wb[1] = -INFINITY;
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, wb, out), DPMO_NON_FINITE_INPUT);
    wb[0] = wb[1] = 1e308;
    {
        const double big[2] = {1e308, 1e308};
        CHECK_STATUS(dpmo_weighted_sum(big, 1, 2, wb, out), DPMO_OVERFLOW);
    }
    CHECK(guards_intact());

    TEST("weighted_global_sensitivity = sum |w_i| Δ_i");
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 2, g, &glob), DPMO_OK);
    CHECK_DEQ(glob, 2.0);
    glob = SENTINEL_D;
    CHECK_STATUS(dpmo_weighted_global_sensitivity(zero, 2, g, &glob), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 2, zero, &glob), DPMO_INVALID_SENSITIVITY);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 0, g, &glob), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 17, g, &glob), DPMO_CAPACITY_EXCEEDED);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(NULL, 2, g, &glob), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 2, NULL, &glob), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 2, g, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_global_sensitivity(w, 2, g, (double *)(void *)&g[1]), DPMO_OVERLAPPING_BUFFERS);
    CHECK_DEQ(glob, SENTINEL_D);

    TEST("weighted_sensitivity_table = sum |w_i| delta_i, Δ_agg");
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44A, N44, 0, 4.0, 2);
    specs[1] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44B, N44, 0, 2.0, 3);
    fill_d(table, 16);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 3, table, &glob), DPMO_OK);
    CHECK_DEQ(glob, 1.0 * 4.0 + 2.0 * 2.0);
    for (i = 0; i < N44; i++)
        for (t = 0; t < 3; t++) {
            double a = t < 2 ? D44A[i] : 4.0, b = D44B[i] > 2.0 ? 2.0 : D44B[i];
            CHECK_DEQ(table[i * 3 + t], a + 2.0 * b);
        }
    CHECK_DEQ(table[15], SENTINEL_D);

    TEST("weighted_sensitivity_table errors");
    fill_d(table, 16);
    glob = SENTINEL_D;
    guard(table, sizeof table);
    guard(&glob, sizeof glob);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(NULL, 2, specs, N44, 3, table, &glob), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, NULL, N44, 3, table, &glob), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 3, NULL, &glob), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 3, table, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 0, specs, N44, 3, table, &glob), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 17, specs, N44, 3, table, &glob), DPMO_CAPACITY_EXCEEDED);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, 0, 3, table, &glob), DPMO_EMPTY_INPUT);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 0, table, &glob), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(zero, 2, specs, N44, 3, table, &glob), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44 - 1, 3, table, &glob), DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, SIZE_MAX / 2, table, &glob), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 3, table, table + 14), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 3, (double *)(void *)specs, &glob),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, 3, table, (double *)(void *)&w[0]),
                 DPMO_OVERLAPPING_BUFFERS);
    wb[0] = nan_();
    wb[1] = 1.0;
    CHECK_STATUS(dpmo_weighted_sensitivity_table(wb, 2, specs, N44, 3, table, &glob), DPMO_NON_FINITE_INPUT);
    CHECK(guards_intact());
}

/* ================================================================== scratch lengths */
static void test_scratch_lens(void) {
    size_t v = SENTINEL_Z, ix = SENTINEL_Z, n;
    uint32_t k10;
    TEST("privpareto_scratch_len: (3m + 2)n doubles, 2n indices plus the stages' shared area, the same for global and local");
    CHECK_STATUS(dpmo_privpareto_scratch_len(7, 3, &v, &ix), DPMO_OK);
    CHECK_EQ(v, (3 * 3 + 2) * 7);
    {
        /* 2n plus one stage area: at least the δ^PS count's scratch (less its own 2n counts) plus the walk's
         * two 32-bit δ^PS arrays, at most that or the Pareto score's for any m (the stages run one after the
         * other; the Pareto score is sized for the m at hand, not for eight objectives) */
        size_t a = 0, sx = 0, sv = 0;
        CHECK_STATUS(dpmo_pareto_scores_scratch_len(7, 3, &a), DPMO_OK);
        CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(7, 3, &sx, &sv), DPMO_OK);
        CHECK(ix >= sx + 2 * 7);
        CHECK(ix <= (a > sx + 2 * 7 ? a : sx + 2 * 7) + 2 * 7);
    }
    for (n = 1; n < 40; n += 7) {
        size_t v1 = 0, i1 = 0;
        CHECK_STATUS(dpmo_privpareto_scratch_len(n, 2, &v1, &i1), DPMO_OK);
        CHECK_EQ(v1, (3 * 2 + 2) * n);
        /* 64-bit: 2n + 5n + 1; 32-bit: 2n + 9n + 1 (the walk's 32-bit arrays take a word each) */
        CHECK_EQ(i1, sizeof(size_t) == 8 ? 7 * n + 1 : 11 * n + 1);
    }
    if (sizeof(size_t) == 8) {
        /* candidates are indexed by 32-bit integers in the walk */
        CHECK_STATUS(dpmo_privpareto_scratch_len((size_t)1 << 32, 2, &v, &ix), DPMO_CAPACITY_EXCEEDED);
        CHECK_STATUS(dpmo_privpareto_scratch_len(((size_t)1 << 32) - 1, 2, &v, &ix), DPMO_OK);
    }
    v = ix = SENTINEL_Z;
    CHECK_STATUS(dpmo_privpareto_scratch_len(7, 3, NULL, &ix), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privpareto_scratch_len(7, 3, &v, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privpareto_scratch_len(7, 3, &v, &v), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_privpareto_scratch_len(7, 3, (size_t *)misalign(&v), &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_privpareto_scratch_len(SIZE_MAX / 8, 3, &v, &ix), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_privpareto_scratch_len(7, SIZE_MAX / 4, &v, &ix), DPMO_OVERFLOW);
    CHECK_EQ(v, SENTINEL_Z);
    CHECK_EQ(ix, SENTINEL_Z);

    TEST("privagg_scratch_len: 4n doubles, 2n indices");
    CHECK_STATUS(dpmo_privagg_scratch_len(7, 4, &v, &ix), DPMO_OK);
    CHECK_EQ(v, 4 * 7);
    CHECK_EQ(ix, 2 * 7);
    v = ix = SENTINEL_Z;
    CHECK_STATUS(dpmo_privagg_scratch_len(7, 0, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_privagg_scratch_len(7, 4, NULL, &ix), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privagg_scratch_len(7, 4, &v, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privagg_scratch_len(7, 4, &ix, &ix), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_privagg_scratch_len(SIZE_MAX / 2, 1, &v, &ix), DPMO_OVERFLOW);
    CHECK_EQ(v, SENTINEL_Z);
    CHECK_EQ(ix, SENTINEL_Z);

    TEST("top_k_scratch_len: n doubles; n indices, 2n for a selector that needs a permutation");
    for (k10 = 0; k10 < N_RUNNABLE; k10++) {
        const uint32_t sel = RUNNABLE[k10];
        v = ix = SENTINEL_Z;
        CHECK_STATUS(dpmo_top_k_scratch_len(9, sel, &v, &ix), DPMO_OK);
        CHECK_EQ(v, 9);
        /* the lengths suffice for both arithmetics: exponential noise counts as needing a permutation */
        CHECK_EQ(ix, (base_selector(sel) == DPMO_SELECTOR_PERMUTE_AND_FLIP ||
                      base_selector(sel) == DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL)
                         ? 18
                         : 9);
    }
    v = ix = SENTINEL_Z;
    CHECK_STATUS(dpmo_top_k_scratch_len(9, DPMO_SELECTOR_NOISY_MAX_LAPLACE, &v, &ix), DPMO_UNSUPPORTED);
    CHECK_STATUS(dpmo_top_k_scratch_len(9, 5, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_top_k_scratch_len(9, DPMO_SELECTOR_EXPONENTIAL | 0x400u, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_top_k_scratch_len(9, UINT32_MAX, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_top_k_scratch_len(9, 0, NULL, &ix), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_top_k_scratch_len(9, 0, &v, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_top_k_scratch_len(9, 0, &v, &v), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_top_k_scratch_len(SIZE_MAX / 2, DPMO_SELECTOR_PERMUTE_AND_FLIP, &v, &ix), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_top_k_scratch_len(SIZE_MAX / 4, DPMO_SELECTOR_EXPONENTIAL, &v, &ix), DPMO_OVERFLOW);
    CHECK_EQ(v, SENTINEL_Z);
    CHECK_EQ(ix, SENTINEL_Z);

    TEST("local_dampening_scratch_len: 4n doubles, n indices (+ n for a permutation), for any k");
    for (k10 = 0; k10 < N_RUNNABLE; k10++) {
        const uint32_t sel = RUNNABLE[k10];
        const int perm = base_selector(sel) == DPMO_SELECTOR_PERMUTE_AND_FLIP ||
                         base_selector(sel) == DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL;
        size_t k;
        for (k = 1; k <= 9; k += 4) {
            CHECK_STATUS(dpmo_local_dampening_scratch_len(9, k, sel, &v, &ix), DPMO_OK);
            CHECK_EQ(v, 36);
            CHECK_EQ(ix, perm ? 18 : 9);
        }
    }
    /* The helper's lengths suffice for top-k with k = 1 too. Regression: at 21c59e7 the helper reported the
     * single selection's lengths for k = 1 (2n, 0 or n), which select_local_dampening_top_k refused. */
    TEST("local_dampening_scratch_len(n, 1) suffices for select_local_dampening_top_k with k = 1");
    {
        unsigned refused = 0;
        for (k10 = 0; k10 < N_RUNNABLE; k10++) {
            const uint32_t sel = RUNNABLE[k10];
            const double u[3] = {1.0, 2.0, 0.5}, one[1] = {1.0};
            dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, one, 1, 0, 1.0, 2);
            dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 9);
            double sd[64];
            size_t si[64], out[1] = {SENTINEL_Z};
            dpmo_status st;
            CHECK_STATUS(dpmo_local_dampening_scratch_len(3, 1, sel, &v, &ix), DPMO_OK);
            st = dpmo_select_local_dampening_top_k(&rng, u, 3, &spec, DPMO_DAMPENING_PLAIN, sel, 1.0, 1, out, sd, v, si,
                                                   ix, NULL);
            if (st != DPMO_OK || out[0] >= 3) {
                if (refused++ == 0)
                    printf("      %s: lengths (%zu, %zu) refused: %s\n", selector_name(sel), v, ix,
                           dpmo_status_message((uint32_t)st));
            }
        }
        CHECK_EQ(refused, 0);
    }
    v = ix = SENTINEL_Z;
    CHECK_STATUS(dpmo_local_dampening_scratch_len(9, 0, 0, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(9, 10, 0, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(0, 1, 0, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(9, 1, DPMO_SELECTOR_NOISY_MAX_LAPLACE, &v, &ix), DPMO_UNSUPPORTED);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(9, 1, 5 | DPMO_FLOAT, &v, &ix), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(9, 1, 0, NULL, &ix), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(9, 1, 0, &v, &v), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_local_dampening_scratch_len(SIZE_MAX / 4, 2, 0, &v, &ix), DPMO_OVERFLOW);
    CHECK_EQ(v, SENTINEL_Z);
    CHECK_EQ(ix, SENTINEL_Z);
}

/* ================================================================== probabilities */
#define BIG_COLUMNS 64 /* more distances than any δ^PS / δ_agg below needs to saturate */

static void test_probabilities(void) {
    static double vals[4096];
    static size_t ix[4096], sc[4096], pix[4096];
    double p[N44], q[N44], ps[N44], agg[N44], damp[N44], table[N44 * BIG_COLUMNS], gagg = 0;
    size_t i, vl, il, avl, ail;
    dpmo_sensitivity specs[2], tspec;
    const double w[2] = {1.0, 100.0}, g[2] = {1.0, 0.5};
    const double eps = 1.3;
    const size_t cols[2] = {4, BIG_COLUMNS};
    uint32_t dom, damping;
    size_t c;

    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44A, N44, 0, 4.0, 3);
    specs[1] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44B, N44, 0, 4.0, 3);
    CHECK_STATUS(dpmo_privpareto_scratch_len(N44, 2, &vl, &il), DPMO_OK);
    CHECK_STATUS(dpmo_privagg_scratch_len(N44, 2, &avl, &ail), DPMO_OK);
    CHECK(vl <= 4096 && il <= 4096 && avl <= 4096);

    for (dom = 0; dom < 2; dom++) {
        TEST("global PrivPareto probabilities = exponential(PS, n - 1)");
        CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, dom, NULL, 0, 0, eps, p, vals, vl, ix, il), DPMO_OK);
        CHECK_STATUS(dpmo_exponential_probabilities(PS44, N44, N44 - 1, eps, q), DPMO_OK);
        for (i = 0; i < N44; i++) CHECK_NEAR(p[i], q[i], 1e-15);
        CHECK(sums_to_one(p, N44, 1e-14));
        CHECK_NEAR(p[0] / p[4], exp(eps * 4.0 / (2.0 * 4.0)), 1e-12);

        for (damping = 0; damping < 2; damping++)
            for (c = 0; c < 2; c++) {
                /* max_distance = 4 equals a δ^PS table of 4 columns saturated to n - 1 beyond; max_distance = 0
                 * (automatic) equals an unbounded table (here: 64 columns, long saturated). */
                const size_t md = c == 0 ? 4 : 0;
                TEST(c == 0 ? "local PrivPareto probabilities, max_distance 4 = stages with a 4-column delta^PS table"
                            : "local PrivPareto probabilities, max_distance 0 (automatic) = stages, unbounded table");
                CHECK_STATUS(dpmo_pareto_scores(U44, N44, 2, dom, ps, sc, 4096), DPMO_OK);
                CHECK_STATUS(dpmo_pareto_sensitivity_table(U44, N44, 2, specs, cols[c], table, pix, 4096, vals, 4096),
                             DPMO_OK);
                tspec = make_spec(DPMO_DELTA_TABLE, table, N44 * cols[c], cols[c], N44 - 1, cols[c]);
                CHECK_STATUS(dpmo_dampen(ps, N44, &tspec, damping, damp), DPMO_OK);
                CHECK_STATUS(dpmo_exponential_probabilities(damp, N44, 1.0, eps, q), DPMO_OK);
                CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, dom, specs, md, damping, eps, p, vals, vl, ix,
                                                           il),
                             DPMO_OK);
                for (i = 0; i < N44; i++) CHECK_NEAR(p[i], q[i], 1e-14);
                CHECK(sums_to_one(p, N44, 1e-14));
            }
    }

    TEST("global PrivAgg probabilities = exponential(u_agg, sum |w_i| Δ_i)");
    CHECK_STATUS(dpmo_weighted_sum(U44, N44, 2, w, agg), DPMO_OK);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, g, NULL, 0, 0, eps, p, vals, avl), DPMO_OK);
    CHECK_STATUS(dpmo_exponential_probabilities(agg, N44, 1.0 * 1.0 + 100.0 * 0.5, eps, q), DPMO_OK);
    for (i = 0; i < N44; i++) CHECK_NEAR(p[i], q[i], 1e-15);
    CHECK(sums_to_one(p, N44, 1e-14));

    for (damping = 0; damping < 2; damping++)
        for (c = 0; c < 2; c++) {
            const size_t md = c == 0 ? 4 : 0;
            TEST(c == 0 ? "local PrivAgg probabilities, max_distance 4 = stages with a 4-column delta_agg table"
                        : "local PrivAgg probabilities, max_distance 0 = stages with a saturated delta_agg table");
            CHECK_STATUS(dpmo_weighted_sensitivity_table(w, 2, specs, N44, cols[c], table, &gagg), DPMO_OK);
            CHECK_DEQ(gagg, 404.0);
            tspec = make_spec(DPMO_DELTA_TABLE, table, N44 * cols[c], cols[c], gagg, cols[c]);
            CHECK_STATUS(dpmo_dampen(agg, N44, &tspec, damping, damp), DPMO_OK);
            CHECK_STATUS(dpmo_exponential_probabilities(damp, N44, 1.0, eps, q), DPMO_OK);
            CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, NULL, specs, md, damping, eps, p, vals, avl),
                         DPMO_OK);
            for (i = 0; i < N44; i++) CHECK_NEAR(p[i], q[i], 1e-14);
        }

    TEST("probabilities errors");
    fill_d(p, N44);
    guard(p, sizeof p);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, NULL, 0, 0, eps, NULL, vals, vl, ix, il),
                 DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, NULL, 0, 0, 0.0, p, vals, vl, ix, il),
                 DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 2, NULL, 0, 0, eps, p, vals, vl, ix, il),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, NULL, 0, 2, eps, p, vals, vl, ix, il),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, specs, 0, 2, eps, p, vals, vl, ix, il),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 17, 0, NULL, 0, 0, eps, p, vals, 4096, ix, 4096),
                 DPMO_CAPACITY_EXCEEDED);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, 0, 2, 0, NULL, 0, 0, eps, p, vals, vl, ix, il), DPMO_EMPTY_INPUT);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, NULL, 0, 0, eps, p, vals, vl - 1, ix, il),
                 DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, specs, 0, 0, eps, p, vals, vl, ix, il - 1),
                 DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, NULL, 0, 0, eps, p, p, 256, ix, 256),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_privpareto_probabilities(U44, N44, 2, 0, specs, 4, 0, eps, p, vals, vl,
                                               (size_t *)(void *)specs, 8),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, NULL, NULL, 0, 0, eps, p, vals, avl), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, NULL, g, NULL, 0, 0, eps, p, vals, avl), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, g, NULL, 0, 0, eps, p, vals, avl - 1),
                 DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, NULL, specs, 0, 0, eps, p, vals, avl - 1),
                 DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, g, NULL, 0, 0, nan_(), p, vals, avl), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, g, specs, 0, 2, eps, p, vals, avl), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_privagg_probabilities(U44, N44, 2, w, g, NULL, 0, 0, eps, p, (double *)(void *)g, 2),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK(guards_intact());
}

/* ================================================================== selecting functions: one argument set */
enum { F_PRIVPARETO, F_PRIVAGG, F_TOPK, F_TOPK_GUMBEL, F_LD_TOPK, F_COUNT };
static const char *const FNAME[F_COUNT] = {"select_privpareto", "select_privagg", "select_top_k",
                                           "select_top_k_gumbel", "select_local_dampening_top_k"};

typedef struct {
    dpmo_rng *rng;
    const double *utilities; /* n x m, or n scores */
    size_t n, m;
    uint32_t dominance, dampening, selector;
    const double *weights, *globals;
    const dpmo_sensitivity *deltas; /* m specs, or one for local dampening top-k */
    size_t max_distance;            /* 0: automatic */
    uint32_t flags;                 /* top_k_gumbel: 0 or DPMO_FLOAT */
    double sensitivity, epsilon;
    size_t k;
    size_t *out;
    double *values;
    size_t values_len;
    size_t *indices;
    size_t indices_len;
    dpmo_budget *budget;
} sel_args;

static dpmo_status call(int f, const sel_args *a) {
    switch (f) {
    case F_PRIVPARETO:
        return dpmo_select_privpareto(a->rng, a->utilities, a->n, a->m, a->dominance, a->deltas, a->max_distance,
                                      a->dampening, a->selector, a->epsilon, a->k, a->out, a->values, a->values_len,
                                      a->indices, a->indices_len, a->budget);
    case F_PRIVAGG:
        return dpmo_select_privagg(a->rng, a->utilities, a->n, a->m, a->weights, a->globals, a->deltas, a->max_distance,
                                   a->dampening, a->selector, a->epsilon, a->k, a->out, a->values, a->values_len,
                                   a->indices, a->indices_len, a->budget);
    case F_TOPK:
        return dpmo_select_top_k(a->rng, a->selector, a->utilities, a->n, a->sensitivity, a->epsilon, a->k, a->out,
                                 a->values, a->values_len, a->indices, a->indices_len, a->budget);
    case F_TOPK_GUMBEL:
        return dpmo_select_top_k_gumbel(a->rng, a->utilities, a->n, a->sensitivity, a->epsilon, a->k, a->flags,
                                        a->out, a->values, a->values_len, a->indices, a->indices_len, a->budget);
    default:
        return dpmo_select_local_dampening_top_k(a->rng, a->utilities, a->n, a->deltas, a->dampening, a->selector,
                                                 a->epsilon, a->k, a->out, a->values, a->values_len, a->indices,
                                                 a->indices_len, a->budget);
    }
}

/* Shared state of the selecting tests. */
static dpmo_rng S_RNG;
static dpmo_budget S_BUDGET;
static double S_UTIL[N44 * 2], S_VALUES[4096];
static size_t S_OUT[8], S_INDICES[4096];
static dpmo_sensitivity S_SPECS[17];
static const double S_W[2] = {1.0, 100.0}, S_G[2] = {1.0, 1.0};

/* A valid argument set for function f: Example 4.4 (n = 5), k = 2, local where the function has a choice. */
static sel_args defaults(int f) {
    sel_args a;
    size_t i;
    memset(&a, 0, sizeof a);
    S_RNG = make_rng(DPMO_RNG_CHACHA20, 11);
    S_BUDGET.total = 1.0;
    S_BUDGET.spent = 0.25;
    memcpy(S_UTIL, U44, sizeof U44);
    fill_z(S_OUT, 8);
    S_SPECS[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44A, N44, 0, 4.0, 3);
    for (i = 1; i < 17; i++) S_SPECS[i] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44B, N44, 0, 4.0, 3);
    a.rng = &S_RNG;
    a.utilities = S_UTIL;
    a.n = N44;
    a.m = (f == F_PRIVPARETO || f == F_PRIVAGG) ? 2 : 1;
    a.dominance = DPMO_DOMINANCE_TEXTBOOK;
    a.dampening = DPMO_DAMPENING_SHIFTED;
    a.selector = DPMO_SELECTOR_PERMUTE_AND_FLIP;
    a.weights = S_W;
    a.globals = S_G;
    a.deltas = S_SPECS;
    a.max_distance = 0;
    a.flags = 0;
    a.sensitivity = 1.0;
    a.epsilon = 0.5;
    a.k = 2;
    a.out = S_OUT;
    a.values = S_VALUES;
    a.values_len = 4096;
    a.indices = S_INDICES;
    a.indices_len = 4096;
    a.budget = &S_BUDGET;
    return a;
}

/* A call expected to return `want` with the budget unchanged (argument errors) or charged on success. */
static void expect(int f, const char *what, const sel_args *a, dpmo_status want) {
    char label[200];
    snprintf(label, sizeof label, "%s: %s", FNAME[f], what);
    TEST(label);
    guard(&S_RNG, sizeof S_RNG);
    guard(&S_BUDGET, sizeof S_BUDGET);
    guard(S_OUT, sizeof S_OUT);
    guard(S_UTIL, sizeof S_UTIL);
    CHECK_STATUS(call(f, a), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

/* A call on private data that the public rule sanitises (no free probing, issue 20: NaN utility → -DBL_MAX,
 * ±inf → ±DBL_MAX, a NaN, negative or infinite δ value → Δ): DPMO_OK, k distinct indices written, the budget
 * charged exactly epsilon, the utilities unchanged. The picks and the final generator state are kept for
 * expect_as_sanitised. */
static size_t R_OUT[8];
static dpmo_rng R_RNG;
static void expect_released(int f, const char *what, const sel_args *a) {
    char label[200];
    dpmo_budget before = S_BUDGET;
    const dpmo_rng start = S_RNG;
    snprintf(label, sizeof label, "%s: %s (released and charged)", FNAME[f], what);
    TEST(label);
    guard(S_UTIL, sizeof S_UTIL);
    CHECK_STATUS(call(f, a), DPMO_OK);
    CHECK(guards_intact());
    CHECK(distinct_below(S_OUT, a->k, N44));
    CHECK_EQ(S_OUT[a->k], SENTINEL_Z);
    CHECK(memcmp(&S_RNG, &start, sizeof start) != 0);
    if (a->budget == &S_BUDGET) {
        CHECK_DEQ(S_BUDGET.spent, before.spent + a->epsilon);
        CHECK_DEQ(S_BUDGET.total, before.total);
    }
    memcpy(R_OUT, S_OUT, sizeof R_OUT);
    R_RNG = S_RNG;
}

/* The same call on the sanitised data (from the same seed: defaults() reseeds) gives the same picks and the
 * same generator state as the last expect_released: the release is the mechanism on the sanitised data. */
static void expect_as_sanitised(int f, const char *what, const sel_args *a) {
    char label[200];
    snprintf(label, sizeof label, "%s: %s equals the call on the sanitised data", FNAME[f], what);
    TEST(label);
    CHECK_STATUS(call(f, a), DPMO_OK);
    CHECK(memcmp(S_OUT, R_OUT, a->k * sizeof(size_t)) == 0);
    CHECK(memcmp(&S_RNG, &R_RNG, sizeof R_RNG) == 0);
}

/* Callback contexts for the selecting tests: δ from D44A / D44B (per candidate, constant in t), one of them
 * returning a bad value at one (r, t). */
static double S_CBTAB[2][N44 * 4];
static cb_ctx S_CTX[2];
static void use_callbacks(const sel_args *a, int f) {
    size_t i, t, j;
    (void)a;
    for (j = 0; j < 2; j++) {
        for (i = 0; i < N44; i++)
            for (t = 0; t < 4; t++) S_CBTAB[j][i * 4 + t] = j == 0 ? D44A[i] : D44B[i];
        S_CTX[j] = make_ctx(S_CBTAB[j], 4);
    }
    if (f == F_LD_TOPK) {
        S_SPECS[0] = make_cb_spec(&S_CTX[0], 4.0, 3);
    } else {
        S_SPECS[0] = make_cb_spec(&S_CTX[0], 4.0, 3);
        S_SPECS[1] = make_cb_spec(&S_CTX[1], 4.0, 3);
    }
}

static int has_m(int f) { return f == F_PRIVPARETO || f == F_PRIVAGG; }
static int has_selector(int f) { return f != F_TOPK_GUMBEL; }
static int has_dampening(int f) { return f == F_PRIVPARETO || f == F_PRIVAGG || f == F_LD_TOPK; }
static int has_deltas(int f) { return f == F_PRIVPARETO || f == F_PRIVAGG || f == F_LD_TOPK; }
static int has_sensitivity(int f) { return f == F_TOPK || f == F_TOPK_GUMBEL; }

static void test_selection_errors(void) {
    int f;
    for (f = 0; f < F_COUNT; f++) {
        sel_args a;
        dpmo_rng bad;
        const double bad_eps[4] = {0.0, -1.0, nan_(), INFINITY};
        size_t i;

        a = defaults(f);
        expect(f, "valid defaults", &a, DPMO_OK);
        CHECK(distinct_below(S_OUT, 2, N44));
        CHECK_DEQ(S_BUDGET.spent, 0.75);
        CHECK_DEQ(S_BUDGET.total, 1.0);
        CHECK_EQ(S_OUT[2], SENTINEL_Z);

        a = defaults(f), a.rng = NULL;
        expect(f, "null rng", &a, DPMO_NULL_POINTER);
        a = defaults(f), a.utilities = NULL;
        expect(f, "null utilities", &a, DPMO_NULL_POINTER);
        a = defaults(f), a.out = NULL;
        expect(f, "null out_indices", &a, DPMO_NULL_POINTER);
        a = defaults(f), a.values = NULL;
        expect(f, "null value scratch", &a, DPMO_NULL_POINTER);
        a = defaults(f), a.indices = NULL;
        expect(f, "null index scratch", &a, DPMO_NULL_POINTER);
        a = defaults(f), a.n = 0;
        expect(f, "n = 0", &a, DPMO_EMPTY_INPUT);
        a = defaults(f), a.k = 0;
        expect(f, "k = 0", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), a.k = N44 + 1;
        expect(f, "k > n", &a, DPMO_INVALID_ARGUMENT);
        for (i = 0; i < 4; i++) {
            a = defaults(f), a.epsilon = bad_eps[i];
            expect(f, "bad epsilon", &a, DPMO_INVALID_EPSILON);
            a.budget = NULL;
            expect(f, "bad epsilon, no budget", &a, DPMO_INVALID_EPSILON);
        }
        /* Private data is never a status (no free probing, issue 20): scores and utilities follow the public
         * rule (NaN counts as -DBL_MAX, +-inf as +-DBL_MAX) and the call releases its output, charged. */
        if (has_sensitivity(f)) {
            a = defaults(f), S_UTIL[3] = nan_();
            expect(f, "NaN score: chosen by the public rule", &a, DPMO_OK);
            CHECK(distinct_below(S_OUT, 2, N44));
            a = defaults(f), S_UTIL[3] = INFINITY;
            expect(f, "+inf score: chosen by the public rule", &a, DPMO_OK);
            CHECK(S_OUT[0] == 3);
            goto argument_errors_decide;
        }
        a = defaults(f), S_UTIL[3] = nan_();
        expect_released(f, "NaN utility", &a);
        a = defaults(f), S_UTIL[3] = -DBL_MAX;
        expect_as_sanitised(f, "NaN utility as -DBL_MAX", &a);
        a = defaults(f), S_UTIL[3] = -INFINITY;
        expect_released(f, "infinite utility", &a);
        a = defaults(f), S_UTIL[3] = -DBL_MAX;
        expect_as_sanitised(f, "-inf utility as -DBL_MAX", &a);
        a = defaults(f), S_UTIL[3] = INFINITY;
        expect_released(f, "+inf utility", &a);
        a = defaults(f), S_UTIL[3] = DBL_MAX;
        expect_as_sanitised(f, "+inf utility as DBL_MAX", &a);
        a = defaults(f), S_UTIL[3] = nan_(), a.budget = NULL;
        expect_released(f, "NaN utility, no budget", &a);
        a = defaults(f), S_UTIL[3] = -DBL_MAX, a.budget = NULL;
        expect_as_sanitised(f, "NaN utility, no budget, as -DBL_MAX", &a);
        a = defaults(f), S_UTIL[0] = nan_(), a.deltas = has_deltas(f) && f != F_LD_TOPK ? NULL : a.deltas;
        expect_released(f, "NaN utility, global", &a);
        a = defaults(f), S_UTIL[0] = -DBL_MAX, a.deltas = has_deltas(f) && f != F_LD_TOPK ? NULL : a.deltas;
        expect_as_sanitised(f, "NaN utility, global, as -DBL_MAX", &a);
    argument_errors_decide:
        /* ... but an argument error, or a budget that cannot pay, decides the status whatever the data: else a
         * deliberately short scratch (or k > n) returns a free status on clean data and a charged one on the
         * NaN neighbour, and "no NaN" is learnt for free. Regression: at 21c59e7 select_privpareto and
         * select_privagg checked the utilities before k and the scratch lengths. */
        a = defaults(f), S_UTIL[3] = nan_(), a.values_len = 1;
        expect(f, "NaN utility and value scratch too small: SCRATCH_TOO_SMALL, free", &a, DPMO_SCRATCH_TOO_SMALL);
        a = defaults(f), S_UTIL[3] = nan_(), a.indices_len = 1;
        expect(f, "NaN utility and index scratch too small: SCRATCH_TOO_SMALL, free", &a, DPMO_SCRATCH_TOO_SMALL);
        a = defaults(f), S_UTIL[3] = nan_(), a.k = N44 + 1;
        expect(f, "NaN utility and k > n: INVALID_ARGUMENT, free", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), S_UTIL[3] = nan_(), S_BUDGET.spent = 0.75;
        expect(f, "NaN utility and budget short: BUDGET_EXHAUSTED", &a, DPMO_BUDGET_EXHAUSTED);
        a = defaults(f), S_UTIL[3] = nan_(), a.epsilon = -1.0;
        expect(f, "NaN utility and epsilon -1: INVALID_EPSILON", &a, DPMO_INVALID_EPSILON);
        if (has_selector(f)) {
            a = defaults(f), S_UTIL[3] = nan_(), a.selector = 5;
            expect(f, "NaN utility and unknown selector: INVALID_ARGUMENT, free", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), S_UTIL[3] = nan_(), a.selector = DPMO_SELECTOR_NOISY_MAX_LAPLACE;
            expect(f, "NaN utility and laplace exact: UNSUPPORTED, free", &a, DPMO_UNSUPPORTED);
        }
        if (has_deltas(f)) {
            /* A δ callback returning NaN, -1 or ∞: data, counted as Δ = 4, charged, released. */
            const double bad[3] = {nan_(), -1.0, INFINITY};
            for (i = 0; i < 3; i++) {
                a = defaults(f), use_callbacks(&a, f);
                S_CTX[0].has_bad = 1, S_CTX[0].bad_r = 2, S_CTX[0].bad_t = 0, S_CTX[0].bad_value = bad[i];
                expect_released(f, i == 0 ? "callback NaN" : i == 1 ? "callback -1" : "callback inf", &a);
                a = defaults(f), use_callbacks(&a, f);
                S_CBTAB[0][2 * 4 + 0] = 4.0;
                expect_as_sanitised(f, "callback bad value as Δ", &a);
            }
            a = defaults(f), use_callbacks(&a, f);
            expect(f, "callbacks ok", &a, DPMO_OK);
            CHECK(S_CTX[0].calls > 0);
            {
                /* The same call failing at the callback's very last evaluation (in the last round when δ is
                 * evaluated round by round): still nothing written but the charge. */
                const unsigned long last = S_CTX[0].calls;
                a = defaults(f), use_callbacks(&a, f);
                S_CTX[0].fail_at = last, S_CTX[0].bad_value = nan_();
                expect_released(f, "callback NaN at its last evaluation", &a);
                CHECK_EQ(S_CTX[0].calls, last);
            }
            a = defaults(f), use_callbacks(&a, f), a.values_len = 1;
            S_CTX[0].has_bad = 1, S_CTX[0].bad_r = 0, S_CTX[0].bad_t = 0, S_CTX[0].bad_value = nan_();
            expect(f, "callback NaN and value scratch too small: SCRATCH_TOO_SMALL, free", &a, DPMO_SCRATCH_TOO_SMALL);
            /* A bad δ value read from a table is data too (regression: free at 21c59e7, unlike a callback's). */
            {
                double dbad[N44];
                memcpy(dbad, D44A, sizeof dbad);
                dbad[2] = nan_();
                a = defaults(f), S_SPECS[0].values = dbad;
                expect_released(f, "NaN delta in a per-candidate table", &a);
                dbad[2] = 4.0;
                a = defaults(f), S_SPECS[0].values = dbad;
                expect_as_sanitised(f, "NaN delta in a per-candidate table as Δ", &a);
            }
        }
        a = defaults(f), a.values_len = 1;
        expect(f, "value scratch too small", &a, DPMO_SCRATCH_TOO_SMALL);
        a = defaults(f), a.indices_len = 1;
        expect(f, "index scratch too small", &a, DPMO_SCRATCH_TOO_SMALL);
        {
            /* The lengths the helpers report suffice, and are needed, in exact arithmetic (the default). */
            size_t vl = 0, il = 0;
            if (f == F_PRIVPARETO)
                CHECK_STATUS(dpmo_privpareto_scratch_len(N44, 2, &vl, &il), DPMO_OK);
            else if (f == F_PRIVAGG)
                CHECK_STATUS(dpmo_privagg_scratch_len(N44, 2, &vl, &il), DPMO_OK);
            else if (f == F_LD_TOPK)
                CHECK_STATUS(dpmo_local_dampening_scratch_len(N44, 2, a.selector, &vl, &il), DPMO_OK);
            else
                CHECK_STATUS(dpmo_top_k_scratch_len(N44, f == F_TOPK ? a.selector : DPMO_SELECTOR_EXPONENTIAL, &vl, &il),
                             DPMO_OK);
            CHECK(vl <= 4096 && il <= 4096);
            a = defaults(f), a.values_len = vl, a.indices_len = il;
            expect(f, "exact scratch lengths", &a, DPMO_OK);
            a = defaults(f), a.values_len = vl - 1, a.indices_len = il;
            expect(f, "value scratch one short", &a, DPMO_SCRATCH_TOO_SMALL);
            a = defaults(f), a.values_len = vl, a.indices_len = il - 1;
            expect(f, "index scratch one short", &a, DPMO_SCRATCH_TOO_SMALL);
            a = defaults(f), a.values_len = vl - 1, a.indices_len = il, S_UTIL[1] = nan_();
            expect(f, "value scratch one short and a NaN utility: SCRATCH_TOO_SMALL, free", &a,
                   DPMO_SCRATCH_TOO_SMALL);
        }
        if (f == F_TOPK || f == F_LD_TOPK) {
            a = defaults(f), a.indices_len = f == F_TOPK ? N44 : 2 * N44 - 1;
            expect(f, "permute-and-flip needs 2n index scratch", &a, DPMO_SCRATCH_TOO_SMALL);
            a.selector = DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL;
            expect(f, "exact noisy-max exponential runs as permute-and-flip: 2n index scratch", &a,
                   DPMO_SCRATCH_TOO_SMALL);
            a.selector = DPMO_SELECTOR_EXPONENTIAL;
            a.indices_len = f == F_TOPK ? N44 : N44;
            expect(f, "exponential needs n index scratch", &a, DPMO_OK);
        }
        if (has_m(f)) {
            a = defaults(f), a.m = 0;
            expect(f, "m = 0", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.m = 17, a.n = 0;
            expect(f, "m = 17", &a, DPMO_CAPACITY_EXCEEDED);
            a = defaults(f), a.m = 17, a.n = 0, a.deltas = NULL;
            expect(f, "m = 17 global", &a, DPMO_CAPACITY_EXCEEDED);
            a = defaults(f), a.n = SIZE_MAX / 2, a.m = 3;
            expect(f, "n * m overflows", &a, DPMO_OVERFLOW);
            a = defaults(f), a.max_distance = 0;
            expect(f, "local, max_distance 0 (automatic)", &a, DPMO_OK);
            a = defaults(f), a.max_distance = 1;
            expect(f, "local, max_distance 1", &a, DPMO_OK);
            a = defaults(f), a.max_distance = SIZE_MAX;
            expect(f, "local, max_distance SIZE_MAX", &a, DPMO_OK);
            a = defaults(f), a.max_distance = SIZE_MAX, a.deltas = NULL;
            expect(f, "global, max_distance unused", &a, DPMO_OK);
        }
        if (f == F_PRIVPARETO) {
            a = defaults(f), a.dominance = 2;
            expect(f, "unknown dominance", &a, DPMO_INVALID_ARGUMENT);
        }
        if (f == F_PRIVAGG) {
            a = defaults(f), a.weights = NULL;
            expect(f, "null weights", &a, DPMO_NULL_POINTER);
            a = defaults(f), a.deltas = NULL, a.globals = NULL;
            expect(f, "global with null globals", &a, DPMO_NULL_POINTER);
            a = defaults(f), a.globals = NULL;
            expect(f, "local with null globals", &a, DPMO_OK);
            {
                const double zg[2] = {0.0, 1.0}, zw[2] = {0.0, 0.0}, nw[2] = {1.0, nan_()};
                double gl[2] = {1.0, 1.0};
                a = defaults(f), a.deltas = NULL, a.globals = zg;
                expect(f, "global with Δ_1 = 0", &a, DPMO_INVALID_SENSITIVITY);
                a = defaults(f), a.weights = zw;
                expect(f, "all weights zero", &a, DPMO_INVALID_ARGUMENT);
                a = defaults(f), a.weights = nw;
                expect(f, "NaN weight", &a, DPMO_NON_FINITE_INPUT);
                a = defaults(f), a.deltas = NULL, a.globals = gl, a.out = (size_t *)(void *)gl;
                expect(f, "out_indices overlaps globals", &a, DPMO_OVERLAPPING_BUFFERS);
                a = defaults(f), a.values = (double *)(void *)S_W, a.values_len = 2;
                expect(f, "value scratch overlaps weights", &a, DPMO_OVERLAPPING_BUFFERS);
            }
        }
        if (has_selector(f)) {
            a = defaults(f), a.selector = 5;
            expect(f, "unknown selector", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.selector = 5 | DPMO_FLOAT;
            expect(f, "unknown selector 5|float", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.selector = UINT32_MAX;
            expect(f, "unknown selector max", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.selector = DPMO_SELECTOR_EXPONENTIAL | 0x400u;
            expect(f, "unknown flag bit 0x400", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.selector = DPMO_SELECTOR_EXPONENTIAL | DPMO_FLOAT | DPMO_ISOCHRONOUS;
            expect(f, "float and isochronous at once", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.selector = DPMO_SELECTOR_NOISY_MAX_LAPLACE;
            expect(f, "laplace without DPMO_FLOAT: UNSUPPORTED", &a, DPMO_UNSUPPORTED);
            a = defaults(f), a.selector = DPMO_SELECTOR_NOISY_MAX_LAPLACE, a.deltas = f == F_LD_TOPK ? a.deltas : NULL;
            expect(f, "laplace without DPMO_FLOAT, global: UNSUPPORTED", &a, DPMO_UNSUPPORTED);
            a = defaults(f), a.selector = DPMO_SELECTOR_NOISY_MAX_LAPLACE | DPMO_FLOAT;
            expect(f, "laplace|float", &a, DPMO_OK);
            CHECK(distinct_below(S_OUT, 2, N44));
        } else {
            a = defaults(f), a.flags = 1;
            expect(f, "flags 1", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.flags = 0x400;
            expect(f, "flags 0x400", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.flags = DPMO_FLOAT | 1u;
            expect(f, "flags DPMO_FLOAT | 1", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.flags = UINT32_MAX;
            expect(f, "flags max", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), a.flags = DPMO_FLOAT;
            expect(f, "flags DPMO_FLOAT", &a, DPMO_OK);
            CHECK(distinct_below(S_OUT, 2, N44));
        }
        if (has_dampening(f)) {
            a = defaults(f), a.dampening = 2;
            expect(f, "unknown dampening", &a, DPMO_INVALID_ARGUMENT);
        }
        if (has_deltas(f)) {
            if (f == F_LD_TOPK) {
                a = defaults(f), a.deltas = NULL;
                expect(f, "null sensitivity", &a, DPMO_NULL_POINTER);
            }
            a = defaults(f), S_SPECS[f == F_LD_TOPK ? 0 : 1].kind = 7;
            expect(f, "unknown delta kind", &a, DPMO_INVALID_ARGUMENT);
            a = defaults(f), S_SPECS[0].global = nan_();
            expect(f, "delta global NaN", &a, DPMO_INVALID_SENSITIVITY);
            a = defaults(f), S_SPECS[0].values_len = N44 - 1;
            expect(f, "delta values length mismatch", &a, DPMO_LENGTH_MISMATCH);
            a = defaults(f), a.out = (size_t *)(void *)&S_SPECS[0];
            expect(f, "out_indices overlaps a spec", &a, DPMO_OVERLAPPING_BUFFERS);
            a = defaults(f), a.values = (double *)(void *)D44A, a.values_len = 1;
            expect(f, "value scratch overlaps delta values", &a, DPMO_OVERLAPPING_BUFFERS);
        }
        if (has_sensitivity(f)) {
            a = defaults(f), a.sensitivity = 0.0;
            expect(f, "sensitivity 0", &a, DPMO_INVALID_SENSITIVITY);
            a = defaults(f), a.sensitivity = nan_();
            expect(f, "sensitivity NaN", &a, DPMO_INVALID_SENSITIVITY);
        }

        /* generator */
        a = defaults(f), memset(&bad, 0, sizeof bad), a.rng = &bad;
        guard(&bad, sizeof bad);
        expect(f, "zeroed rng", &a, DPMO_INVALID_GENERATOR);
        CHECK(guards_intact());
        a = defaults(f), a.rng = (dpmo_rng *)misalign(&S_RNG);
        expect(f, "misaligned rng", &a, DPMO_INVALID_ARGUMENT);

        /* overlaps: every output against every other buffer */
        a = defaults(f), a.out = S_INDICES + 3;
        expect(f, "out_indices inside the index scratch", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.out = (size_t *)(void *)(S_VALUES + 7);
        expect(f, "out_indices inside the value scratch", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.out = (size_t *)(void *)S_UTIL;
        expect(f, "out_indices overlaps utilities", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.out = (size_t *)(void *)&S_RNG;
        expect(f, "out_indices overlaps rng", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.out = (size_t *)(void *)&S_BUDGET;
        expect(f, "out_indices overlaps budget", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.values = (double *)(void *)&S_RNG, a.values_len = 8;
        expect(f, "value scratch is the rng", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.values = (double *)(void *)&S_BUDGET, a.values_len = 2;
        expect(f, "value scratch is the budget", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.indices = (size_t *)(void *)&S_BUDGET, a.indices_len = 2;
        expect(f, "index scratch is the budget", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.indices = (size_t *)(void *)S_VALUES;
        expect(f, "index scratch overlaps value scratch", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.values = S_UTIL + 1, a.values_len = 4;
        expect(f, "value scratch overlaps utilities", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.budget = (dpmo_budget *)(void *)&S_RNG;
        expect(f, "budget overlaps rng", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.budget = (dpmo_budget *)(void *)S_UTIL;
        expect(f, "budget overlaps utilities", &a, DPMO_OVERLAPPING_BUFFERS);
        a = defaults(f), a.out = (size_t *)misalign(S_OUT);
        expect(f, "misaligned out_indices", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), a.k = SIZE_MAX / 4;
        expect(f, "k overflows", &a, DPMO_OVERFLOW);

        /* budget */
        a = defaults(f), S_BUDGET.spent = 0.75;
        expect(f, "budget exhausted (0.25 left, 0.5 asked)", &a, DPMO_BUDGET_EXHAUSTED);
        a = defaults(f), S_BUDGET.spent = 1.0;
        expect(f, "budget spent", &a, DPMO_BUDGET_EXHAUSTED);
        a = defaults(f), S_BUDGET.spent = 1.5;
        expect(f, "invalid budget: spent > total", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), S_BUDGET.spent = -0.5;
        expect(f, "invalid budget: spent < 0", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), S_BUDGET.total = nan_();
        expect(f, "invalid budget: NaN total", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), S_BUDGET.total = 0.0, S_BUDGET.spent = 0.0;
        expect(f, "invalid budget: total 0", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), a.budget = (dpmo_budget *)misalign(&S_BUDGET);
        expect(f, "misaligned budget", &a, DPMO_INVALID_ARGUMENT);
        a = defaults(f), S_BUDGET.spent = 0.5;
        expect(f, "remaining budget spent exactly", &a, DPMO_OK);
        CHECK_DEQ(S_BUDGET.spent, 1.0);
        a = defaults(f), a.budget = NULL;
        expect(f, "no budget", &a, DPMO_OK);
        CHECK(distinct_below(S_OUT, 2, N44));
        CHECK_DEQ(S_BUDGET.spent, 0.25);
    }
}

/* ================================================================== selecting functions: values */
static void test_selection_values(void) {
    int f;
    uint32_t sel;
    for (f = 0; f < F_COUNT; f++) {
        for (sel = 0; sel < N_RUNNABLE; sel++) {
            sel_args a = defaults(f);
            size_t k, rep;
            char label[200];
            if (!has_selector(f) && sel >= 2) break;
            snprintf(label, sizeof label, "%s %s: k distinct, k = n a permutation", FNAME[f],
                     has_selector(f) ? selector_name(RUNNABLE[sel]) : sel ? "flags DPMO_FLOAT" : "flags 0");
            TEST(label);
            a.selector = RUNNABLE[sel];
            a.flags = sel ? DPMO_FLOAT : 0u;
            a.budget = NULL;
            for (k = 1; k <= N44; k++) {
                for (rep = 0; rep < 20; rep++) {
                    size_t damp;
                    a.k = k;
                    for (damp = 0; damp < 2; damp++) {
                        a.dampening = (uint32_t)damp;
                        a.deltas = (rep & 1) && f != F_LD_TOPK ? NULL : S_SPECS;
                        fill_z(S_OUT, 8);
                        CHECK_STATUS(call(f, &a), DPMO_OK);
                        CHECK(distinct_below(S_OUT, k, N44));
                        CHECK_EQ(S_OUT[k], SENTINEL_Z);
                    }
                }
            }
        }
    }

    TEST("same seed, same picks; the generator advances");
    for (f = 0; f < F_COUNT; f++) {
        sel_args a = defaults(f);
        dpmo_rng r1 = make_rng(DPMO_RNG_XOSHIRO256PP, 3), r2 = r1, before = r1;
        size_t o1[8], o2[8];
        a.budget = NULL;
        a.k = 3;
        a.rng = &r1;
        a.out = o1;
        CHECK_STATUS(call(f, &a), DPMO_OK);
        a.rng = &r2;
        a.out = o2;
        CHECK_STATUS(call(f, &a), DPMO_OK);
        CHECK(memcmp(o1, o2, 3 * sizeof(size_t)) == 0);
        CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
        CHECK(memcmp(&r1, &before, sizeof r1) != 0);
    }

    TEST("global PrivPareto at a huge epsilon picks a Pareto-optimal candidate (a or b)");
    {
        sel_args a = defaults(F_PRIVPARETO);
        size_t rep;
        a.deltas = NULL;
        a.k = 1;
        a.epsilon = 500.0;
        a.budget = NULL;
        for (rep = 0; rep < 54; rep++) {
            a.selector = RUNNABLE[rep % N_RUNNABLE];
            CHECK_STATUS(call(F_PRIVPARETO, &a), DPMO_OK);
            CHECK(S_OUT[0] == 0 || S_OUT[0] == 1);
        }
        /* k = 2 at a huge epsilon: a Pareto-optimal candidate, then one that is Pareto-optimal among those left
         * (re-scored: without a, d is undominated; without b, c is). */
        a.k = 2;
        a.epsilon = 1000.0;
        for (rep = 0; rep < 20; rep++) {
            a.selector = RUNNABLE[rep % N_RUNNABLE];
            CHECK_STATUS(call(F_PRIVPARETO, &a), DPMO_OK);
            CHECK((S_OUT[0] == 0 && (S_OUT[1] == 1 || S_OUT[1] == 3)) ||
                  (S_OUT[0] == 1 && (S_OUT[1] == 0 || S_OUT[1] == 2)));
        }
        /* k = 4: e (dominated by everything) is never among them */
        a.k = 4;
        for (rep = 0; rep < 20; rep++) {
            size_t i;
            CHECK_STATUS(call(F_PRIVPARETO, &a), DPMO_OK);
            for (i = 0; i < 4; i++) CHECK(S_OUT[i] != 4);
        }
    }

    TEST("global PrivAgg at a huge epsilon follows u_agg = u1 + 100 u2 (a, d, b, c, e)");
    {
        sel_args a = defaults(F_PRIVAGG);
        size_t rep;
        a.deltas = NULL;
        a.k = 5;
        a.epsilon = 1e5;
        a.budget = NULL;
        for (rep = 0; rep < 18; rep++) {
            a.selector = RUNNABLE[rep % N_RUNNABLE];
            CHECK_STATUS(call(F_PRIVAGG, &a), DPMO_OK);
            CHECK_EQ(S_OUT[0], 0);
            CHECK_EQ(S_OUT[1], 3);
            CHECK_EQ(S_OUT[2], 1);
            CHECK_EQ(S_OUT[3], 2);
            CHECK_EQ(S_OUT[4], 4);
        }
    }

    TEST("top-k at a huge epsilon returns the k best in order");
    {
        const double s[6] = {3.0, 9.0, -1.0, 7.0, 5.0, 0.0};
        size_t out[6], sc_i[12], rep;
        double sc_d[12];
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 5);
        for (rep = 0; rep < 18; rep++) {
            const uint32_t sel9 = RUNNABLE[rep % N_RUNNABLE];
            CHECK(topk_values_len(6, sel9) <= 12 && topk_indices_len(6, sel9) <= 12);
            CHECK_STATUS(dpmo_select_top_k(&rng, sel9, s, 6, 1.0, 1e6, 3, out, sc_d, topk_values_len(6, sel9), sc_i,
                                           topk_indices_len(6, sel9), NULL),
                         DPMO_OK);
            CHECK(out[0] == 1 && out[1] == 3 && out[2] == 4);
            CHECK_STATUS(dpmo_select_top_k_gumbel(&rng, s, 6, 1.0, 1e6, 6, (rep & 1) ? DPMO_FLOAT : 0u, out, sc_d,
                                                  topk_values_len(6, 0), sc_i, topk_indices_len(6, 0), NULL),
                         DPMO_OK);
            CHECK(out[0] == 1 && out[1] == 3 && out[2] == 4 && out[3] == 0 && out[4] == 5 && out[5] == 2);
        }
    }

    TEST("local dampening top-k with a shared delta at a huge epsilon follows the utilities");
    {
        const double u[4] = {10.0, 40.0, 20.0, 30.0}, dl[1] = {1.0};
        dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, dl, 1, 0, 5.0, 1);
        size_t out[4], sc_i[8], k9;
        double sc_d[16];
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 6);
        for (k9 = 0; k9 < N_RUNNABLE; k9++) {
            const uint32_t sel9 = RUNNABLE[k9];
            CHECK(ld_values_len(4, 4, sel9) <= 16 && ld_indices_len(4, 4, sel9) <= 8);
            CHECK_STATUS(dpmo_select_local_dampening_top_k(&rng, u, 4, &spec, DPMO_DAMPENING_PLAIN, sel9, 1e6, 4, out,
                                                           sc_d, ld_values_len(4, 4, sel9), sc_i,
                                                           ld_indices_len(4, 4, sel9), NULL),
                         DPMO_OK);
            CHECK(out[0] == 1 && out[1] == 3 && out[2] == 2 && out[3] == 0);
        }
    }
}

/* ================================================================== budget */
static void test_budget(void) {
    dpmo_budget b, before;
    double r = SENTINEL_D, e = SENTINEL_D;
    int i;
    union {
        dpmo_budget b;
        double d[5];
    } mem;

    TEST("budget_init");
    memset(&b, 0xAB, sizeof b);
    CHECK_STATUS(dpmo_budget_init(&b, 2.0), DPMO_OK);
    CHECK_DEQ(b.total, 2.0);
    CHECK_DEQ(b.spent, 0.0);
    before = b;
    CHECK_STATUS(dpmo_budget_init(&b, 0.0), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_init(&b, -1.0), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_init(&b, nan_()), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_init(&b, INFINITY), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_init(NULL, 1.0), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_budget_init((dpmo_budget *)misalign(&mem), 1.0), DPMO_INVALID_ARGUMENT);
    CHECK(memcmp(&b, &before, sizeof b) == 0);

    TEST("budget: dyadic shares use it up exactly");
    CHECK_STATUS(dpmo_budget_init(&b, 1.0), DPMO_OK);
    for (i = 0; i < 8; i++) CHECK_STATUS(dpmo_budget_charge(&b, 0.125), DPMO_OK);
    CHECK_DEQ(b.spent, 1.0);
    CHECK_STATUS(dpmo_budget_remaining(&b, &r), DPMO_OK);
    CHECK_DEQ(r, 0.0);
    before = b;
    CHECK_STATUS(dpmo_budget_charge(&b, 1e-300), DPMO_BUDGET_EXHAUSTED);
    CHECK(memcmp(&b, &before, sizeof b) == 0);

    TEST("budget: charge 0.1 until exhausted, then the remaining amount exactly");
    CHECK_STATUS(dpmo_budget_init(&b, 1.0), DPMO_OK);
    for (i = 0; i < 9; i++) CHECK_STATUS(dpmo_budget_charge(&b, 0.1), DPMO_OK);
    before = b;
    CHECK_STATUS(dpmo_budget_charge(&b, 0.1), DPMO_BUDGET_EXHAUSTED); /* 10 x 0.1 > 1 exactly */
    CHECK(memcmp(&b, &before, sizeof b) == 0);
    CHECK_STATUS(dpmo_budget_remaining(&b, &r), DPMO_OK);
    CHECK(r > 0.0999 && r < 0.1);
    CHECK_STATUS(dpmo_budget_charge(&b, r), DPMO_OK);
    CHECK(b.spent <= 1.0);
    CHECK_STATUS(dpmo_budget_remaining(&b, &r), DPMO_OK);
    CHECK_DEQ(r, 0.0);

    TEST("budget: remaining after 0.25 + 0.5 of 1");
    CHECK_STATUS(dpmo_budget_init(&b, 1.0), DPMO_OK);
    CHECK_STATUS(dpmo_budget_charge(&b, 0.25), DPMO_OK);
    CHECK_STATUS(dpmo_budget_charge(&b, 0.5), DPMO_OK);
    CHECK_STATUS(dpmo_budget_remaining(&b, &r), DPMO_OK);
    CHECK_DEQ(r, 0.25);
    CHECK_DEQ(b.spent, 0.75);

    TEST("budget errors");
    before = b;
    r = SENTINEL_D;
    CHECK_STATUS(dpmo_budget_charge(&b, 0.0), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_charge(&b, -0.1), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_charge(&b, nan_()), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_charge(&b, INFINITY), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_budget_charge(&b, 0.25 + 1e-16), DPMO_BUDGET_EXHAUSTED);
    CHECK_STATUS(dpmo_budget_charge(NULL, 0.1), DPMO_NULL_POINTER);
    CHECK(memcmp(&b, &before, sizeof b) == 0);
    CHECK_STATUS(dpmo_budget_remaining(NULL, &r), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_budget_remaining(&b, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_budget_remaining(&b, &b.spent), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(dpmo_budget_remaining(&b, (double *)misalign(&r)), DPMO_INVALID_ARGUMENT);
    CHECK(memcmp(&b, &before, sizeof b) == 0);
    CHECK_DEQ(r, SENTINEL_D);
    {
        const double bad[5][2] = {{1.0, 1.5}, {1.0, -0.1}, {0.0, 0.0}, {-1.0, 0.0}, {INFINITY, 0.0}};
        for (i = 0; i < 5; i++) {
            b.total = bad[i][0];
            b.spent = bad[i][1];
            before = b;
            CHECK_STATUS(dpmo_budget_charge(&b, 0.1), DPMO_INVALID_ARGUMENT);
            CHECK_STATUS(dpmo_budget_remaining(&b, &r), DPMO_INVALID_ARGUMENT);
            CHECK(memcmp(&b, &before, sizeof b) == 0);
        }
        b.total = 1.0;
        b.spent = nan_();
        CHECK_STATUS(dpmo_budget_charge(&b, 0.1), DPMO_INVALID_ARGUMENT);
        CHECK_STATUS(dpmo_budget_remaining(&b, &r), DPMO_INVALID_ARGUMENT);
        CHECK_DEQ(r, SENTINEL_D);
    }

    TEST("a mechanism charges the budget until it is exhausted");
    {
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 9), rb;
        size_t out[4], ix[10], ob[4];
        double sc[5];
        CHECK_STATUS(dpmo_budget_init(&b, 1.0), DPMO_OK);
        for (i = 0; i < 4; i++) {
            CHECK_STATUS(dpmo_select_top_k(&rng, DPMO_SELECTOR_EXPONENTIAL, PS44, N44, 4.0, 0.25, 2, out, sc, 5, ix, 10,
                                           &b),
                         DPMO_OK);
            CHECK_DEQ(b.spent, 0.25 * (i + 1));
        }
        before = b;
        rb = rng;
        fill_z(out, 4);
        memcpy(ob, out, sizeof out);
        CHECK_STATUS(dpmo_select_top_k(&rng, DPMO_SELECTOR_EXPONENTIAL, PS44, N44, 4.0, 0.25, 2, out, sc, 5, ix, 10, &b),
                     DPMO_BUDGET_EXHAUSTED);
        CHECK(memcmp(&b, &before, sizeof b) == 0);
        CHECK(memcmp(&rng, &rb, sizeof rng) == 0);
        CHECK(memcmp(out, ob, sizeof out) == 0);
        /* a failing mechanism (scratch too small) charges nothing */
        CHECK_STATUS(dpmo_budget_init(&b, 1.0), DPMO_OK);
        before = b;
        CHECK_STATUS(dpmo_select_top_k(&rng, DPMO_SELECTOR_EXPONENTIAL, PS44, N44, 4.0, 0.25, 4, out, sc, 4, ix, 10, &b),
                     DPMO_SCRATCH_TOO_SMALL);
        CHECK(memcmp(&b, &before, sizeof b) == 0);
        CHECK(memcmp(&rng, &rb, sizeof rng) == 0);
    }

    TEST("advanced composition, hand-computed");
    /* eps0 = 0.1, k = 10, delta' = 1e-5: 0.1 * sqrt(8 * 10 * ln(1e5)) (Lemma 4 holds here) */
    CHECK_STATUS(dpmo_advanced_composition(0.1, 10, 1e-5, &e), DPMO_OK);
    CHECK_NEAR(e, 0.1 * sqrt(80.0 * log(1e5)), 1e-12);
    CHECK_NEAR(e, 3.034854258770293, 1e-12);
    /* eps0 = 1, k = 100, delta' = 0.5: the DRV bound sqrt(200 ln 2) + 100 (e - 1) is returned */
    CHECK_STATUS(dpmo_advanced_composition(1.0, 100, 0.5, &e), DPMO_OK);
    CHECK_NEAR(e, sqrt(200.0 * log(2.0)) + 100.0 * (exp(1.0) - 1.0), 1e-10);
    e = SENTINEL_D;
    CHECK_STATUS(dpmo_advanced_composition(0.0, 10, 1e-5, &e), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_advanced_composition(nan_(), 10, 1e-5, &e), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_advanced_composition(0.1, 0, 1e-5, &e), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_advanced_composition(0.1, 10, 0.0, &e), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_advanced_composition(0.1, 10, 1.0, &e), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_advanced_composition(0.1, 10, nan_(), &e), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_advanced_composition(710.0, 10, 0.5, &e), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_advanced_composition(0.1, 10, 1e-5, NULL), DPMO_NULL_POINTER);
    CHECK_DEQ(e, SENTINEL_D);
    CHECK(sizeof(dpmo_budget) == 4 * sizeof(double));
}

int main(void) {
    test_pareto_scores();
    test_pareto_sensitivity();
    test_weighted();
    test_scratch_lens();
    test_probabilities();
    test_selection_errors();
    test_selection_values();
    test_budget();
    return HARNESS_FINISH();
}
