/*
 * Generators through the C API: reproducibility (same seed, same selections, for both generators and every
 * selector), different seeds differ, selections in range, and simple statistical sanity checks of the
 * samplers and selectors against exact probabilities (a chi-square test at about 1e-6; the seeds are fixed
 * so the outcome is deterministic). The rigorous statistics are in the Rust tests.
 */
#include "common.h"

#define DRAWS 20000

/* One selection with selector `sel` (DPMO_SELECTOR_*) over fixed scores, or local dampening when `ld`. */
static size_t pick(dpmo_rng *rng, uint32_t sel, int ld, const double *s, size_t n) {
    static size_t perm[1024];
    static double scratch[1024];
    size_t out = SENTINEL_Z;
    dpmo_status st = DPMO_OK;
    double ones[1] = {1.0};
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, ones, 1, 0, 2.0, 3);
    if (ld)
        st = dpmo_select_local_dampening(rng, s, n, &spec, DPMO_DAMPENING_PLAIN, sel, 1.0, scratch, n, perm, n, &out);
    else if (sel == DPMO_SELECTOR_EXPONENTIAL)
        st = dpmo_select_exponential(rng, s, n, 1.0, 1.0, &out);
    else if (sel == DPMO_SELECTOR_PERMUTE_AND_FLIP)
        st = dpmo_select_permute_and_flip(rng, s, n, 1.0, 1.0, perm, n, &out);
    else
        st = dpmo_select_noisy_max(rng, s, n, 1.0, 1.0, sel - DPMO_SELECTOR_NOISY_MAX_LAPLACE, &out);
    return st == DPMO_OK ? out : SIZE_MAX; /* callers check the range, which catches a failure */
}

static void test_reproducibility(void) {
    double s[1000];
    size_t i, k;
    uint32_t kind, sel;
    int ld;
    for (i = 0; i < 1000; i++) s[i] = (double)(i % 7) * 0.01; /* nearly uniform: many possible outcomes */
    for (kind = 0; kind < 2; kind++)
        for (ld = 0; ld < 2; ld++)
            for (sel = 0; sel < 5; sel++) {
                dpmo_rng a = make_rng(kind, 1), b = make_rng(kind, 1), c = make_rng(kind, 2);
                int all_in_range = 1, same = 1, differ = 0;
                TEST(kind ? "xoshiro: same seed, same selections; other seed differs"
                          : "chacha20: same seed, same selections; other seed differs");
                for (k = 0; k < 40; k++) {
                    size_t x = pick(&a, sel, ld, s, 1000), y = pick(&b, sel, ld, s, 1000), z = pick(&c, sel, ld, s, 1000);
                    all_in_range &= x < 1000 && z < 1000;
                    same &= x == y;
                    differ |= x != z;
                }
                CHECK(all_in_range);
                CHECK(same);
                CHECK(differ);
                CHECK(memcmp(&a, &b, sizeof a) == 0);
                CHECK(memcmp(&a, &c, sizeof a) != 0);
            }

    TEST("samples: same seed same draws, generators differ");
    {
        dpmo_rng a = make_rng(DPMO_RNG_CHACHA20, 9), b = make_rng(DPMO_RNG_CHACHA20, 9);
        dpmo_rng x = make_rng(DPMO_RNG_XOSHIRO256PP, 9);
        double da[64], db[64], dx[64];
        CHECK_STATUS(dpmo_sample(&a, DPMO_DIST_UNIFORM, da, 64), DPMO_OK);
        CHECK_STATUS(dpmo_sample(&b, DPMO_DIST_UNIFORM, db, 32), DPMO_OK); /* two calls = one call */
        CHECK_STATUS(dpmo_sample(&b, DPMO_DIST_UNIFORM, db + 32, 32), DPMO_OK);
        CHECK_STATUS(dpmo_sample(&x, DPMO_DIST_UNIFORM, dx, 64), DPMO_OK);
        CHECK(memcmp(da, db, sizeof da) == 0);
        CHECK(memcmp(da, dx, sizeof da) != 0);
        CHECK(memcmp(&a, &b, sizeof a) == 0);
    }
}

static void test_samplers(void) {
    static double d[DRAWS];
    uint32_t kind, dist;
    /* mean and variance of each standard distribution */
    const double mean[4] = {0.5, 1.0, 0.57721566490153286, 0.0};
    const double var[4] = {1.0 / 12.0, 1.0, 1.6449340668482264, 2.0};
    for (kind = 0; kind < 2; kind++)
        for (dist = 0; dist < 4; dist++) {
            dpmo_rng rng = make_rng(kind, 21 + dist);
            double m = 0.0, v = 0.0;
            int ok = 1;
            size_t i;
            TEST("sampler moments");
            CHECK_STATUS(dpmo_sample(&rng, dist, d, DRAWS), DPMO_OK);
            for (i = 0; i < DRAWS; i++) {
                ok &= isfinite(d[i]) ? 1 : 0;
                if (dist == DPMO_DIST_UNIFORM) ok &= d[i] > 0.0 && d[i] < 1.0;
                if (dist == DPMO_DIST_EXPONENTIAL) ok &= d[i] > 0.0;
                m += d[i];
            }
            m /= DRAWS;
            for (i = 0; i < DRAWS; i++) v += (d[i] - m) * (d[i] - m);
            v /= DRAWS - 1;
            CHECK(ok);
            /* 6 standard errors of the mean; variance within 10 % */
            CHECK_NEAR(m, mean[dist], 6.0 * sqrt(var[dist] / DRAWS));
            CHECK_NEAR(v, var[dist], 0.1 * var[dist]);
        }
}

/* Exact permute-and-flip probabilities for n = 3 (sum over the 6 visiting orders). */
static void pf_probabilities(const double *q, double *p) {
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    int k, j;
    p[0] = p[1] = p[2] = 0.0;
    for (k = 0; k < 6; k++) {
        double reach = 1.0 / 6.0;
        for (j = 0; j < 3; j++) {
            int r = perms[k][j];
            p[r] += reach * q[r];
            reach *= 1.0 - q[r];
        }
    }
}

static double chi_square(const unsigned long *count, const double *p, size_t n, unsigned long total) {
    double c = 0.0;
    size_t i;
    for (i = 0; i < n; i++) {
        double e = p[i] * (double)total;
        c += ((double)count[i] - e) * ((double)count[i] - e) / e;
    }
    return c;
}

static void test_selector_frequencies(void) {
    /* Scores giving exponential-mechanism probabilities 1/7, 2/7, 4/7 at ε = 1, Δ = 1. */
    const double ln2 = 0.69314718055994530942;
    double s[3], em[3], pf[3], q[3], ld[8], u[8] = {6.5, 6.5, 0, 0, 0, 0, 0, 0}, delta[2] = {3.0, 5.0};
    uint32_t sel;
    size_t i;
    s[0] = 0.0;
    s[1] = 2.0 * ln2;
    s[2] = 4.0 * ln2;
    CHECK_STATUS(dpmo_exponential_probabilities(s, 3, 1.0, 1.0, em), DPMO_OK);
    for (i = 0; i < 3; i++) q[i] = exp((s[i] - s[2]) / 2.0);
    pf_probabilities(q, pf);
    TEST("exact probabilities for the frequency tests");
    CHECK_NEAR(em[0], 1.0 / 7.0, 1e-15);
    CHECK_NEAR(pf[0] + pf[1] + pf[2], 1.0, 1e-15);

    for (sel = 0; sel < 5; sel++) {
        dpmo_rng rng = make_rng(DPMO_RNG_XOSHIRO256PP, 50 + sel);
        unsigned long count[3] = {0, 0, 0};
        size_t k;
        TEST(sel == 0 ? "frequencies: exponential" : sel == 1 ? "frequencies: permute-and-flip"
             : sel == 2 ? "frequencies: noisy max laplace" : sel == 3 ? "frequencies: noisy max gumbel"
                                                               : "frequencies: noisy max exponential");
        for (k = 0; k < DRAWS; k++) {
            size_t r = pick(&rng, sel, 0, s, 3);
            if (r < 3) count[r]++;
        }
        CHECK_EQ(count[0] + count[1] + count[2], DRAWS);
        if (sel == DPMO_SELECTOR_EXPONENTIAL || sel == DPMO_SELECTOR_NOISY_MAX_GUMBEL)
            CHECK(chi_square(count, em, 3, DRAWS) < 30.0); /* 2 df: P(χ² > 30) ≈ 3e-7 */
        else if (sel == DPMO_SELECTOR_PERMUTE_AND_FLIP || sel == DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL)
            CHECK(chi_square(count, pf, 3, DRAWS) < 30.0);
        else
            CHECK(count[2] > count[1] && count[1] > count[0]);
    }

    TEST("frequencies: local dampening, example 3.9");
    {
        dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, delta, 2, 0, 5.0, 2);
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 60);
        unsigned long count[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        double scratch[8];
        size_t k, out;
        CHECK_STATUS(dpmo_local_dampening_probabilities(u, 8, &spec, DPMO_DAMPENING_PLAIN, 2.0, ld), DPMO_OK);
        unsigned long failures = 0;
        for (k = 0; k < DRAWS; k++) {
            out = SENTINEL_Z;
            if (dpmo_select_local_dampening(&rng, u, 8, &spec, DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_EXPONENTIAL, 2.0,
                                            scratch, 8, NULL, 0, &out) != DPMO_OK || out >= 8)
                failures++;
            else
                count[out]++;
        }
        CHECK_EQ(failures, 0);
        CHECK(chi_square(count, ld, 8, DRAWS) < 45.0); /* 7 df: P(χ² > 45) ≈ 1.4e-7 */
    }
}

int main(void) {
    test_reproducibility();
    test_samplers();
    test_selector_frequencies();
    return HARNESS_FINISH();
}
