/*
 * Positive checks of the dpmo C API against hand computations and the Local Dampening paper's examples.
 * This file is also compiled as C++17 (see the Makefile): keep it in the common subset of C11 and C++17
 * (no designated initialisers, no compound literals, explicit casts from void *).
 */
#include "common.h"

static const double LN2 = 0.69314718055994530942;

/* ------------------------------------------------------------------ exponential mechanism, by hand */
static void test_exponential_by_hand(void) {
    double s[3], p[3], q[3], e1, e2, e3, z;
    const double sens = 1.5, eps = 0.7;
    size_t i;
    TEST("exponential probabilities 1/3, 2/3");
    s[0] = 0.0;
    s[1] = LN2 * 2.0 * sens / eps;
    CHECK_STATUS(dpmo_exponential_probabilities(s, 2, sens, eps, p), DPMO_OK);
    CHECK_NEAR(p[0], 1.0 / 3.0, 1e-15);
    CHECK_NEAR(p[1], 2.0 / 3.0, 1e-15);
    CHECK(sums_to_one(p, 2, 1e-15));

    TEST("exponential probabilities are shift invariant");
    s[0] += 1e6;
    s[1] += 1e6;
    CHECK_STATUS(dpmo_exponential_probabilities(s, 2, sens, eps, q), DPMO_OK);
    CHECK_NEAR(q[0], 1.0 / 3.0, 1e-9);
    CHECK_NEAR(q[1], 2.0 / 3.0, 1e-9);

    TEST("exponential probabilities e^1 : e^2 : e^3");
    s[0] = 1.0;
    s[1] = 2.0;
    s[2] = 3.0;
    CHECK_STATUS(dpmo_exponential_probabilities(s, 3, 1.0, 2.0, p), DPMO_OK);
    e1 = exp(1.0);
    e2 = exp(2.0);
    e3 = exp(3.0);
    z = e1 + e2 + e3;
    CHECK_NEAR(p[0], e1 / z, 1e-15);
    CHECK_NEAR(p[1], e2 / z, 1e-15);
    CHECK_NEAR(p[2], e3 / z, 1e-15);
    for (i = 0; i < 3; i++) CHECK(p[i] > 0.0);
}

/* ------------------------------------------------------------------ Local Dampening paper, Example 3.9 */
static void test_example_3_9(void) {
    double u[8] = {6.5, 6.5, 0, 0, 0, 0, 0, 0}, delta[2] = {3.0, 5.0}, d[8], p[8], q[8], v;
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, delta, 2, 0, 5.0, 2);
    const double z = 2.0 * exp(1.7) + 6.0;
    size_t i;

    TEST("example 3.9 sensitivity values");
    CHECK_STATUS(dpmo_sensitivity_value(&spec, 8, 0, 0, &v), DPMO_OK);
    CHECK_DEQ(v, 3.0);
    CHECK_STATUS(dpmo_sensitivity_value(&spec, 8, 7, 1, &v), DPMO_OK);
    CHECK_DEQ(v, 5.0);
    CHECK_STATUS(dpmo_sensitivity_value(&spec, 8, 3, 2, &v), DPMO_OK);
    CHECK_DEQ(v, 5.0);
    CHECK_STATUS(dpmo_sensitivity_value(&spec, 8, 3, SIZE_MAX, &v), DPMO_OK);
    CHECK_DEQ(v, 5.0);

    TEST("example 3.9 dampened scores 1.7 and 0");
    CHECK_STATUS(dpmo_dampen(u, 8, &spec, DPMO_DAMPENING_PLAIN, d), DPMO_OK);
    CHECK_NEAR(d[0], 1.7, 1e-15);
    CHECK_NEAR(d[1], 1.7, 1e-15);
    for (i = 2; i < 8; i++) CHECK_DEQ(d[i], 0.0);

    TEST("example 3.9 probabilities at epsilon 2");
    CHECK_STATUS(dpmo_local_dampening_probabilities(u, 8, &spec, DPMO_DAMPENING_PLAIN, 2.0, p), DPMO_OK);
    CHECK_NEAR(p[0], exp(1.7) / z, 1e-15);
    CHECK_NEAR(p[1], exp(1.7) / z, 1e-15);
    CHECK_NEAR(p[0], 0.32, 0.005);
    for (i = 2; i < 8; i++) {
        CHECK_NEAR(p[i], 1.0 / z, 1e-15);
        CHECK_NEAR(p[i], 0.06, 0.005);
    }
    CHECK(sums_to_one(p, 8, 1e-14));
    /* = the exponential mechanism over the dampened scores with sensitivity 1 */
    CHECK_STATUS(dpmo_exponential_probabilities(d, 8, 1.0, 2.0, q), DPMO_OK);
    for (i = 0; i < 8; i++) CHECK_NEAR(p[i], q[i], 1e-15);

    TEST("example 3.9 shifted");
    /* u/Δ − Σ_{j<2} (1 − δ_j/Δ) = u/5 − 0.4 */
    CHECK_STATUS(dpmo_dampen(u, 8, &spec, DPMO_DAMPENING_SHIFTED, d), DPMO_OK);
    CHECK_NEAR(d[0], 0.9, 1e-15);
    for (i = 2; i < 8; i++) CHECK_NEAR(d[i], -0.4, 1e-15);
    /* A shared δ makes shifted dampening the global exponential mechanism with sensitivity Δ. */
    CHECK_STATUS(dpmo_local_dampening_probabilities(u, 8, &spec, DPMO_DAMPENING_SHIFTED, 2.0, p), DPMO_OK);
    CHECK_STATUS(dpmo_exponential_probabilities(u, 8, 5.0, 2.0, q), DPMO_OK);
    for (i = 0; i < 8; i++) CHECK_NEAR(p[i], q[i], 1e-15);

    TEST("example 3.9 values are clamped to the global sensitivity");
    delta[1] = 7.0;
    CHECK_STATUS(dpmo_dampen(u, 8, &spec, DPMO_DAMPENING_PLAIN, d), DPMO_OK);
    CHECK_NEAR(d[0], 1.7, 1e-15);
    CHECK_STATUS(dpmo_sensitivity_value(&spec, 8, 0, 1, &v), DPMO_OK);
    CHECK_DEQ(v, 5.0);
}

/* ------------------------------------------------------------------ Example 4.1: inversions, shifted */
static double shifted_by_hand(const double *table, size_t columns, size_t r, double u, double global, size_t t) {
    double off = 0.0;
    size_t j;
    for (j = 0; j < t; j++) {
        double dj = j < columns ? table[r * columns + j] : global;
        if (dj > global) dj = global;
        off += 1.0 - dj / global;
    }
    return u / global - off;
}

static void test_example_4_1(void) {
    double table[4] = {1.0, 2.0, 4.0, 4.0}, u[2] = {3.0, 4.0}, d[2], w[2], p[2];
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_TABLE, table, 4, 2, 4.0, 10);
    size_t t_max, k;
    const double us[7] = {3.0, -3.0, 1.3, -1.3, 0.0, 25.0, -0.5};

    TEST("example 4.1 plain dampening 2 and 1 (an inversion)");
    CHECK_STATUS(dpmo_dampen(u, 2, &spec, DPMO_DAMPENING_PLAIN, d), DPMO_OK);
    CHECK_DEQ(d[0], 2.0);
    CHECK_DEQ(d[1], 1.0);
    CHECK_STATUS(dpmo_local_dampening_probabilities(u, 2, &spec, DPMO_DAMPENING_PLAIN, 2.0, p), DPMO_OK);
    CHECK_NEAR(p[0], exp(2.0) / (exp(2.0) + exp(1.0)), 1e-15);

    TEST("example 4.1 shifted dampening");
    CHECK_STATUS(dpmo_dampen(u, 2, &spec, DPMO_DAMPENING_SHIFTED, d), DPMO_OK);
    CHECK_NEAR(d[0], -0.5, 1e-15);
    CHECK_NEAR(d[1], 1.0, 1e-15);
    CHECK_STATUS(dpmo_local_dampening_probabilities(u, 2, &spec, DPMO_DAMPENING_SHIFTED, 2.0, p), DPMO_OK);
    CHECK_NEAR(p[1], exp(1.0) / (exp(1.0) + exp(-0.5)), 1e-15);

    TEST("shifted = u/Delta - sum_{j<T} (1 - delta_j/Delta)");
    for (t_max = 1; t_max <= 4; t_max++) {
        size_t t = t_max < 2 ? t_max : 2;
        spec.t_max = t_max;
        for (k = 0; k < 7; k++) {
            w[0] = us[k];
            w[1] = -us[k] / 2.0;
            CHECK_STATUS(dpmo_dampen(w, 2, &spec, DPMO_DAMPENING_SHIFTED, d), DPMO_OK);
            CHECK_NEAR(d[0], shifted_by_hand(table, 2, 0, w[0], 4.0, t), 1e-14);
            CHECK_NEAR(d[1], shifted_by_hand(table, 2, 1, w[1], 4.0, t), 1e-14);
        }
    }

    TEST("plain dampening by hand, both signs, t_max 1");
    spec.t_max = 1; /* δ(0) from the table, Δ = 4 beyond */
    CHECK_STATUS(dpmo_dampen(u, 2, &spec, DPMO_DAMPENING_PLAIN, d), DPMO_OK);
    CHECK_DEQ(d[0], 1.5); /* 1 + (3 − 1)/4 */
    CHECK_DEQ(d[1], 1.0);
    spec.t_max = 10;
    w[0] = -3.0;
    w[1] = 1.3;
    CHECK_STATUS(dpmo_dampen(w, 2, &spec, DPMO_DAMPENING_PLAIN, d), DPMO_OK);
    CHECK_DEQ(d[0], -2.0);
    CHECK_NEAR(d[1], 1.3 / 4.0, 1e-15);
    /* D is odd: D(−u) = −D(u) */
    for (k = 0; k < 7; k++) {
        double a[2], b[2];
        w[0] = us[k];
        w[1] = us[k];
        CHECK_STATUS(dpmo_dampen(w, 2, &spec, DPMO_DAMPENING_PLAIN, a), DPMO_OK);
        w[0] = -us[k];
        w[1] = -us[k];
        CHECK_STATUS(dpmo_dampen(w, 2, &spec, DPMO_DAMPENING_PLAIN, b), DPMO_OK);
        CHECK_NEAR(a[0], -b[0], 1e-14);
        CHECK_NEAR(a[1], -b[1], 1e-14);
    }
    /* δ(0) = 0: the first interval is empty, D(0) = 1 */
    {
        double z[2] = {0.0, 0.0}, u0[1] = {0.0}, out[1];
        dpmo_sensitivity s0 = make_spec(DPMO_DELTA_PER_CANDIDATE, z, 1, 0, 1.0, 3);
        CHECK_STATUS(dpmo_dampen(u0, 1, &s0, DPMO_DAMPENING_PLAIN, out), DPMO_OK);
        CHECK_DEQ(out[0], 3.0); /* three empty intervals, then slope 1/Δ from b(3) = 0 */
        s0.t_max = 1;
        CHECK_STATUS(dpmo_dampen(u0, 1, &s0, DPMO_DAMPENING_PLAIN, out), DPMO_OK);
        CHECK_DEQ(out[0], 1.0);
    }

    TEST("example 4.1 max over candidates removes the inversion");
    {
        double out[4] = {SENTINEL_D, SENTINEL_D, SENTINEL_D, SENTINEL_D};
        size_t len = SENTINEL_Z;
        dpmo_sensitivity shared;
        CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&spec, 2, out, 4, &len), DPMO_OK);
        CHECK_EQ(len, 2);
        CHECK_DEQ(out[0], 4.0);
        CHECK_DEQ(out[1], 4.0);
        CHECK_DEQ(out[2], SENTINEL_D);
        shared = make_spec(DPMO_DELTA_SHARED, out, len, 0, 4.0, 10);
        CHECK_STATUS(dpmo_dampen(u, 2, &shared, DPMO_DAMPENING_PLAIN, d), DPMO_OK);
        CHECK_DEQ(d[0], 0.75);
        CHECK_DEQ(d[1], 1.0);
    }
}

/* ------------------------------------------------------------------ callbacks, sensitivity values, max */
static void test_callback_matches_table(void) {
    double table[12] = {0.5, 1.0, 2.5, 0.0, 0.25, 3.0, 1.0, 1.0, 1.0, 0.5, 0.75, 9.0};
    double u[4] = {2.0, -1.75, 0.0, 40.0}, a[4], b[4], ma[8], mb[8];
    cb_ctx ctx = make_ctx(table, 3);
    dpmo_sensitivity tab = make_spec(DPMO_DELTA_TABLE, table, 12, 3, 2.0, 5);
    dpmo_sensitivity cb = make_cb_spec(&ctx, 2.0, 5);
    size_t r, t, la = 0, lb = 0;
    uint32_t kind, sel;

    TEST("callback = table: sensitivity values");
    for (r = 0; r < 4; r++)
        for (t = 0; t < 7; t++) {
            double va = SENTINEL_D, vb = SENTINEL_D, want = t < 3 ? table[r * 3 + t] : 2.0;
            if (want > 2.0) want = 2.0;
            CHECK_STATUS(dpmo_sensitivity_value(&tab, 4, r, t, &va), DPMO_OK);
            CHECK_STATUS(dpmo_sensitivity_value(&cb, 4, r, t, &vb), DPMO_OK);
            CHECK_DEQ(va, want);
            /* The callback returns 1e300 beyond the table: clamped to Δ, and saturated from t_max = 5. */
            CHECK_DEQ(vb, want);
        }
    CHECK(ctx.calls > 0);

    for (kind = 0; kind < 2; kind++) {
        TEST(kind ? "callback = table: shifted dampening" : "callback = table: plain dampening");
        CHECK_STATUS(dpmo_dampen(u, 4, &tab, kind, a), DPMO_OK);
        CHECK_STATUS(dpmo_dampen(u, 4, &cb, kind, b), DPMO_OK);
        for (r = 0; r < 4; r++) CHECK_DEQ(a[r], b[r]);
        CHECK_STATUS(dpmo_local_dampening_probabilities(u, 4, &tab, kind, 1.0, a), DPMO_OK);
        CHECK_STATUS(dpmo_local_dampening_probabilities(u, 4, &cb, kind, 1.0, b), DPMO_OK);
        for (r = 0; r < 4; r++) CHECK_DEQ(a[r], b[r]);
        CHECK(sums_to_one(a, 4, 1e-14));
        for (sel = 0; sel < N_RUNNABLE; sel++) {
            dpmo_rng ra = make_rng(DPMO_RNG_XOSHIRO256PP, 40 + sel), rb = ra;
            const uint32_t selector = RUNNABLE[sel];
            const size_t vl = ld_values_len(4, 1, selector), il = ld_indices_len(4, 1, selector);
            double sa[16], sb[16];
            size_t pa[8], pb[8], ia = SENTINEL_Z, ib = SENTINEL_Z, k;
            CHECK(vl <= 16 && il <= 8);
            for (k = 0; k < 20 && vl <= 16 && il <= 8; k++) {
                CHECK_STATUS(dpmo_select_local_dampening(&ra, u, 4, &tab, kind, selector, 1.0, sa, vl, pa, il, &ia, NULL),
                             DPMO_OK);
                CHECK_STATUS(dpmo_select_local_dampening(&rb, u, 4, &cb, kind, selector, 1.0, sb, vl, pb, il, &ib, NULL),
                             DPMO_OK);
                CHECK_EQ(ia, ib);
                CHECK(ia < 4);
            }
            CHECK(memcmp(&ra, &rb, sizeof ra) == 0);
        }
    }

    TEST("callback = table: max over candidates");
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&tab, 4, ma, 8, &la), DPMO_OK);
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&cb, 4, mb, 8, &lb), DPMO_OK);
    CHECK_EQ(la, 3);
    CHECK_EQ(lb, 5); /* a callback is not limited by columns: T = t_max */
    CHECK_DEQ(ma[0], 1.0);
    CHECK_DEQ(ma[1], 1.0);
    CHECK_DEQ(ma[2], 2.0);
    for (t = 0; t < 3; t++) CHECK_DEQ(ma[t], mb[t]);
    CHECK_DEQ(mb[3], 2.0);
    CHECK_DEQ(mb[4], 2.0);
}

static void test_max_over_candidates(void) {
    double out[8], pc[2] = {1.0, 3.0}, sh[3] = {0.5, 9.0, 1.0}, table[4] = {0.5, 3.0, 1.0, 0.25};
    size_t len = SENTINEL_Z, i;
    dpmo_sensitivity s;
    for (i = 0; i < 8; i++) out[i] = SENTINEL_D;

    TEST("max over candidates: table");
    s = make_spec(DPMO_DELTA_TABLE, table, 4, 2, 2.0, 8);
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&s, 2, out, 8, &len), DPMO_OK);
    CHECK_EQ(len, 2);
    CHECK_DEQ(out[0], 1.0);
    CHECK_DEQ(out[1], 2.0);
    CHECK_DEQ(out[2], SENTINEL_D);
    s.t_max = 1;
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&s, 2, out, 1, &len), DPMO_OK);
    CHECK_EQ(len, 1);

    TEST("max over candidates: per candidate");
    s = make_spec(DPMO_DELTA_PER_CANDIDATE, pc, 2, 0, 2.0, 3);
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&s, 2, out, 8, &len), DPMO_OK);
    CHECK_EQ(len, 3);
    for (i = 0; i < 3; i++) CHECK_DEQ(out[i], 2.0);
    pc[1] = 0.5;
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&s, 2, out, 8, &len), DPMO_OK);
    for (i = 0; i < 3; i++) CHECK_DEQ(out[i], 1.0);

    TEST("max over candidates: shared");
    s = make_spec(DPMO_DELTA_SHARED, sh, 3, 0, 2.0, 2);
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(&s, 5, out, 8, &len), DPMO_OK);
    CHECK_EQ(len, 2);
    CHECK_DEQ(out[0], 0.5);
    CHECK_DEQ(out[1], 2.0);
}

/* ------------------------------------------------------------------ extreme but valid inputs */
/* Every index-returning selector, in both arithmetics, with and without a budget. */
static void check_all_selectors(const double *scores, size_t n, double sens, double eps, const char *what) {
    static const uint32_t noises[5] = {DPMO_NOISE_GUMBEL, DPMO_NOISE_EXPONENTIAL, DPMO_NOISE_LAPLACE | DPMO_FLOAT,
                                       DPMO_NOISE_GUMBEL | DPMO_FLOAT, DPMO_NOISE_EXPONENTIAL | DPMO_FLOAT};
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 99);
    dpmo_budget budget = make_budget(1e308, 0.0);
    size_t *perm = (size_t *)malloc(n * sizeof(size_t)), out, k, j;
    TEST(what);
    for (k = 0; k < 3; k++) {
        dpmo_budget *b = k == 1 ? &budget : NULL;
        out = SENTINEL_Z;
        CHECK_STATUS(dpmo_select_exponential(&rng, scores, n, sens, eps, &out, b), DPMO_OK);
        CHECK(out < n);
        out = SENTINEL_Z;
        CHECK_STATUS(dpmo_select_permute_and_flip(&rng, scores, n, sens, eps, perm, n, &out, b), DPMO_OK);
        CHECK(out < n);
        for (j = 0; j < 5; j++) {
            out = SENTINEL_Z;
            CHECK_STATUS(dpmo_select_noisy_max(&rng, scores, n, sens, eps, noises[j], perm, n, &out, b), DPMO_OK);
            CHECK(out < n);
        }
    }
    /* spent is an upper bound of the exact sum of the charges (7 eps, exact in long double), and tight. */
    CHECK((long double)budget.spent >= 7.0L * (long double)eps);
    CHECK(budget.spent <= 7.0 * eps * (1.0 + 1e-14));
    free(perm);
}

static void check_probabilities(const double *scores, size_t n, double sens, double eps, const char *what) {
    double *p = (double *)malloc(n * sizeof(double));
    size_t i;
    int finite = 1;
    TEST(what);
    CHECK_STATUS(dpmo_exponential_probabilities(scores, n, sens, eps, p), DPMO_OK);
    for (i = 0; i < n; i++) finite &= isfinite(p[i]) ? 1 : 0;
    CHECK(finite);
    CHECK(sums_to_one(p, n, 1e-9));
    free(p);
    check_all_selectors(scores, n, sens, eps, what);
}

static void test_extremes(void) {
    double big[4] = {1e300, -1e300, 0.0, 1e300}, small[3] = {0.0, 1.0, 0.5}, one[1] = {42.0}, eq[5], p[5];
    double ratios[6][2] = {{1e-12, 1.0}, {1e12, 1.0}, {1.0, 1e-12}, {1.0, 1e12}, {1e-300, 1e300}, {1e300, 1e-300}};
    size_t i, k;
    for (i = 0; i < 5; i++) eq[i] = -7.25;

    check_probabilities(big, 4, 1.0, 1.0, "extremes: scores +-1e300");
    TEST("extremes: scores +-1e300 exact");
    CHECK_STATUS(dpmo_exponential_probabilities(big, 4, 1.0, 1.0, p), DPMO_OK);
    CHECK_DEQ(p[0], 0.5);
    CHECK_DEQ(p[1], 0.0);
    CHECK_DEQ(p[3], 0.5);
    for (k = 0; k < 6; k++) {
        char label[96];
        snprintf(label, sizeof label, "extremes: epsilon %g, sensitivity %g", ratios[k][0], ratios[k][1]);
        check_probabilities(small, 3, ratios[k][1], ratios[k][0], label);
        check_probabilities(big, 4, ratios[k][1], ratios[k][0], label);
        check_probabilities(eq, 5, ratios[k][1], ratios[k][0], label);
    }
    TEST("extremes: epsilon / sensitivity 1e12 always picks the best");
    {
        dpmo_rng rng = make_rng(DPMO_RNG_XOSHIRO256PP, 5);
        size_t perm[3], out;
        uint32_t noise, flt;
        CHECK_STATUS(dpmo_exponential_probabilities(small, 3, 1.0, 1e12, p), DPMO_OK);
        CHECK_DEQ(p[1], 1.0);
        for (k = 0; k < 50; k++) {
            CHECK_STATUS(dpmo_select_exponential(&rng, small, 3, 1.0, 1e12, &out, NULL), DPMO_OK);
            CHECK_EQ(out, 1);
            CHECK_STATUS(dpmo_select_permute_and_flip(&rng, small, 3, 1.0, 1e12, perm, 3, &out, NULL), DPMO_OK);
            CHECK_EQ(out, 1);
            for (flt = 0; flt < 2; flt++)
                for (noise = flt ? 0 : 1; noise < 3; noise++) {
                    CHECK_STATUS(dpmo_select_noisy_max(&rng, small, 3, 1.0, 1e12, noise | (flt ? DPMO_FLOAT : 0u), perm, 3,
                                                       &out, NULL),
                                 DPMO_OK);
                    CHECK_EQ(out, 1);
                }
        }
    }
    TEST("extremes: epsilon / sensitivity 1e-12 is uniform");
    CHECK_STATUS(dpmo_exponential_probabilities(small, 3, 1.0, 1e-12, p), DPMO_OK);
    for (i = 0; i < 3; i++) CHECK_NEAR(p[i], 1.0 / 3.0, 1e-11);

    check_probabilities(one, 1, 1.0, 1.0, "extremes: n = 1");
    TEST("extremes: n = 1 exact");
    CHECK_STATUS(dpmo_exponential_probabilities(one, 1, 1.0, 1.0, p), DPMO_OK);
    CHECK_DEQ(p[0], 1.0);
    check_probabilities(eq, 5, 1.0, 1.0, "extremes: all equal");
    TEST("extremes: all equal exact");
    CHECK_STATUS(dpmo_exponential_probabilities(eq, 5, 1.0, 1.0, p), DPMO_OK);
    for (i = 0; i < 5; i++) CHECK_NEAR(p[i], 0.2, 1e-15);

    TEST("extremes: local dampening with utilities +-1e300");
    {
        double d1[4] = {1.0, 1.0, 1.0, 1.0}, out[4], scratch[16];
        size_t perm[8], idx = SENTINEL_Z;
        uint32_t kind, sel;
        dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, d1, 4, 0, 1.0, 3);
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 6);
        for (kind = 0; kind < 2; kind++) {
            CHECK_STATUS(dpmo_dampen(big, 4, &s, kind, out), DPMO_OK);
            for (i = 0; i < 4; i++) CHECK(isfinite(out[i]));
            CHECK_STATUS(dpmo_local_dampening_probabilities(big, 4, &s, kind, 1.0, out), DPMO_OK);
            CHECK(sums_to_one(out, 4, 1e-12));
            s.values_len = 3;
            CHECK_STATUS(dpmo_local_dampening_probabilities(small, 3, &s, kind, 1e-12, out), DPMO_OK);
            s.values_len = 4;
            CHECK(sums_to_one(out, 3, 1e-12));
            for (sel = 0; sel < N_RUNNABLE; sel++) {
                const size_t vl = ld_values_len(4, 1, RUNNABLE[sel]), il = ld_indices_len(4, 1, RUNNABLE[sel]);
                if (!CHECK(vl <= 16 && il <= 8)) continue;
                idx = SENTINEL_Z;
                CHECK_STATUS(dpmo_select_local_dampening(&rng, big, 4, &s, kind, RUNNABLE[sel], 1e12, scratch, vl, perm,
                                                         il, &idx, NULL),
                             DPMO_OK);
                CHECK(idx == 0 || idx == 3);
            }
        }
    }
}

/* ------------------------------------------------------------------ large n */
static void test_large_n(void) {
    const size_t n = 1000000;
    double *s = (double *)malloc(n * sizeof(double)), *p = (double *)malloc(n * sizeof(double));
    double *d = (double *)malloc(4 * n * sizeof(double));
    size_t *perm = (size_t *)malloc(n * sizeof(size_t)), i, out;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 77);
    dpmo_budget budget = make_budget(10.0, 0.0);
    dpmo_sensitivity spec;
    double one = 1.0;
    TEST("large n = 1e6");
    for (i = 0; i < n; i++) s[i] = (double)(i % 1000);
    CHECK_STATUS(dpmo_exponential_probabilities(s, n, 1.0, 0.01, p), DPMO_OK);
    CHECK(sums_to_one(p, n, 1e-9));
    CHECK_NEAR(p[999] / p[0], exp(0.01 * 999.0 / 2.0), 1e-9);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_exponential(&rng, s, n, 1.0, 0.01, &out, &budget), DPMO_OK);
    CHECK(out < n);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_permute_and_flip(&rng, s, n, 1.0, 0.01, perm, n, &out, &budget), DPMO_OK);
    CHECK(out < n);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_noisy_max(&rng, s, n, 1.0, 0.01, DPMO_NOISE_GUMBEL, NULL, 0, &out, &budget), DPMO_OK);
    CHECK(out < n);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_noisy_max(&rng, s, n, 1.0, 0.01, DPMO_NOISE_GUMBEL | DPMO_FLOAT, NULL, 0, &out, &budget),
                 DPMO_OK);
    CHECK(out < n);
    CHECK((long double)budget.spent >= 4.0L * (long double)0.01);
    CHECK(budget.spent <= 0.04 * (1.0 + 1e-14));
    TEST("large n = 1e6 local dampening");
    spec = make_spec(DPMO_DELTA_SHARED, &one, 1, 0, 2.0, 4);
    CHECK_STATUS(dpmo_local_dampening_probabilities(s, n, &spec, DPMO_DAMPENING_SHIFTED, 0.5, p), DPMO_OK);
    CHECK(sums_to_one(p, n, 1e-9));
    /* the helper's lengths (4n, 2n: enough for top-k too) and a single selection's minimum (2n, n) */
    CHECK_EQ(ld_values_len(n, 1, DPMO_SELECTOR_PERMUTE_AND_FLIP), 4 * n);
    CHECK_EQ(ld_indices_len(n, 1, DPMO_SELECTOR_PERMUTE_AND_FLIP), 2 * n);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_local_dampening(&rng, s, n, &spec, DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_PERMUTE_AND_FLIP,
                                             0.5, d, 2 * n, perm, n, &out, &budget),
                 DPMO_OK);
    CHECK(out < n);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_local_dampening(&rng, s, n, &spec, DPMO_DAMPENING_SHIFTED,
                                             DPMO_SELECTOR_PERMUTE_AND_FLIP | DPMO_FLOAT, 0.5, d, 2 * n, perm, n, &out,
                                             &budget),
                 DPMO_OK);
    CHECK(out < n);
    free(s);
    free(p);
    free(d);
    free(perm);
}

int main(void) {
    test_exponential_by_hand();
    test_example_3_9();
    test_example_4_1();
    test_callback_matches_table();
    test_max_over_candidates();
    test_extremes();
    test_large_n();
    return HARNESS_FINISH();
}
