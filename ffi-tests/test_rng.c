/*
 * Generators through the C API: reproducibility (same seed, same selections, for both generators and every
 * selector in both arithmetics), different seeds differ, selections in range, simple statistical sanity checks
 * of the samplers and selectors against exact probabilities (chi-square at 1e-6; the seeds are fixed so the
 * outcome is deterministic; the exact mode's own statistics are in test_exact.c), the OS-seeded initialiser,
 * and the busy mark that refuses re-entrant use of a generator from a callback of the call using it.
 */
#include "common.h"

#define DRAWS 20000

/* One selection with selector `sel` (DPMO_SELECTOR_*, optionally | DPMO_FLOAT) over fixed scores, or local
 * dampening when `ld`. Exponential and permute-and-flip have their own functions in exact arithmetic only;
 * their floating-point forms go through local dampening's selector argument with a δ equal to Δ (dampening
 * by the global sensitivity: the scores divided by Δ = 1). */
static size_t pick(dpmo_rng *rng, uint32_t sel, int ld, const double *s, size_t n) {
    static size_t perm[2048];
    static double scratch[4096];
    size_t out = SENTINEL_Z;
    dpmo_status st = DPMO_OK;
    double ones[1] = {1.0}, delta_is_global[1] = {1.0};
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, ones, 1, 0, 2.0, 3);
    dpmo_sensitivity global = make_spec(DPMO_DELTA_SHARED, delta_is_global, 1, 0, 1.0, 1);
    const uint32_t b = base_selector(sel);
    if (ld)
        st = dpmo_select_local_dampening(rng, s, n, &spec, DPMO_DAMPENING_PLAIN, sel, 1.0, scratch,
                                         ld_values_len(n, 1, sel), perm, ld_indices_len(n, 1, sel), &out, NULL);
    else if (b >= DPMO_SELECTOR_NOISY_MAX_LAPLACE)
        st = dpmo_select_noisy_max(rng, s, n, 1.0, 1.0, noise_of_selector(sel), perm, n, &out, NULL);
    else if (is_float(sel))
        st = dpmo_select_local_dampening(rng, s, n, &global, DPMO_DAMPENING_PLAIN, sel, 1.0, scratch,
                                         ld_values_len(n, 1, sel), perm, ld_indices_len(n, 1, sel), &out, NULL);
    else if (b == DPMO_SELECTOR_EXPONENTIAL)
        st = dpmo_select_exponential(rng, s, n, 1.0, 1.0, &out, NULL);
    else
        st = dpmo_select_permute_and_flip(rng, s, n, 1.0, 1.0, perm, n, &out, NULL);
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
            for (sel = 0; sel < N_RUNNABLE; sel++) {
                dpmo_rng a = make_rng(kind, 1), b = make_rng(kind, 1), c = make_rng(kind, 2);
                int all_in_range = 1, same = 1, differ = 0;
                TEST(kind ? "xoshiro: same seed, same selections; other seed differs"
                          : "chacha20: same seed, same selections; other seed differs");
                for (k = 0; k < 40; k++) {
                    size_t x = pick(&a, RUNNABLE[sel], ld, s, 1000), y = pick(&b, RUNNABLE[sel], ld, s, 1000);
                    size_t z = pick(&c, RUNNABLE[sel], ld, s, 1000);
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

    TEST("samples: same seed same draws, generators differ, one key per call whatever the count");
    {
        dpmo_rng a = make_rng(DPMO_RNG_CHACHA20, 9), b = make_rng(DPMO_RNG_CHACHA20, 9);
        dpmo_rng c = make_rng(DPMO_RNG_CHACHA20, 9);
        dpmo_rng x = make_rng(DPMO_RNG_XOSHIRO256PP, 9);
        double da[64], db[64], dx[64], dc[1];
        CHECK_STATUS(dpmo_sample(&a, DPMO_DIST_UNIFORM | DPMO_FLOAT, da, 64), DPMO_OK);
        CHECK_STATUS(dpmo_sample(&b, DPMO_DIST_UNIFORM | DPMO_FLOAT, db, 64), DPMO_OK);
        CHECK_STATUS(dpmo_sample(&c, DPMO_DIST_LAPLACE | DPMO_FLOAT, dc, 1), DPMO_OK);
        CHECK_STATUS(dpmo_sample(&x, DPMO_DIST_UNIFORM | DPMO_FLOAT, dx, 64), DPMO_OK);
        CHECK(memcmp(da, db, sizeof da) == 0);
        CHECK(memcmp(da, dx, sizeof da) != 0);
        CHECK(memcmp(&a, &b, sizeof a) == 0);
        CHECK(memcmp(&a, &c, sizeof a) == 0); /* 64 uniforms and 1 Laplace consume the same key */
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
            CHECK_STATUS(dpmo_sample(&rng, dist | DPMO_FLOAT, d, DRAWS), DPMO_OK);
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

static void test_selector_frequencies(void) {
    /* Scores giving exponential-mechanism probabilities 1/7, 2/7, 4/7 at ε = 1, Δ = 1. */
    const double ln2 = 0.69314718055994530942;
    double s[3], em[3], pf[3], q[3], ld[8], u[8] = {6.5, 6.5, 0, 0, 0, 0, 0, 0}, delta[2] = {3.0, 5.0};
    uint32_t k10;
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

    for (k10 = 0; k10 < N_RUNNABLE; k10++) {
        const uint32_t sel = RUNNABLE[k10], b = base_selector(sel);
        dpmo_rng rng = make_rng(DPMO_RNG_XOSHIRO256PP, 50 + k10);
        unsigned long count[3] = {0, 0, 0};
        size_t k;
        char label[120];
        snprintf(label, sizeof label, "frequencies: %s", selector_name(sel));
        TEST(label);
        for (k = 0; k < DRAWS; k++) {
            size_t r = pick(&rng, sel, 0, s, 3);
            if (r < 3) count[r]++;
        }
        CHECK_EQ(count[0] + count[1] + count[2], DRAWS);
        if (b == DPMO_SELECTOR_EXPONENTIAL || b == DPMO_SELECTOR_NOISY_MAX_GUMBEL) {
            CHECK_CHI2(count, em, 3, DRAWS);
            CHECK_CHI2_REJECTS(count, pf, 3, DRAWS); /* the checker tells the two mechanisms apart */
        } else if (b == DPMO_SELECTOR_PERMUTE_AND_FLIP || b == DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL) {
            CHECK_CHI2(count, pf, 3, DRAWS);
            CHECK_CHI2_REJECTS(count, em, 3, DRAWS);
        } else {
            CHECK(count[2] > count[1] && count[1] > count[0]);
        }
    }

    TEST("frequencies: local dampening, example 3.9, both arithmetics");
    for (k10 = 0; k10 < 2; k10++) {
        dpmo_sensitivity spec = make_spec(DPMO_DELTA_SHARED, delta, 2, 0, 5.0, 2);
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 60 + k10);
        const uint32_t sel = DPMO_SELECTOR_EXPONENTIAL | (k10 ? DPMO_FLOAT : 0u);
        unsigned long count[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        double scratch[32];
        size_t k, out;
        unsigned long failures = 0;
        CHECK_STATUS(dpmo_local_dampening_probabilities(u, 8, &spec, DPMO_DAMPENING_PLAIN, 2.0, ld), DPMO_OK);
        if (!CHECK(ld_values_len(8, 1, sel) <= 32)) continue;
        for (k = 0; k < DRAWS; k++) {
            out = SENTINEL_Z;
            if (dpmo_select_local_dampening(&rng, u, 8, &spec, DPMO_DAMPENING_PLAIN, sel, 2.0, scratch,
                                            ld_values_len(8, 1, sel), NULL, 0, &out, NULL) != DPMO_OK ||
                out >= 8)
                failures++;
            else
                count[out]++;
        }
        CHECK_EQ(failures, 0);
        CHECK_CHI2(count, ld, 8, DRAWS);
    }
}

/* ------------------------------------------------------------------ dpmo_rng_init_os */
static void test_rng_init_os(void) {
    dpmo_rng a, b, c;
    const double s[4] = {0.0, 1.0, 2.0, 3.0};
    size_t out = SENTINEL_Z, perm[4];
    double da[4], db[4];
    TEST("rng_init_os: two initialisations differ");
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    CHECK_STATUS(dpmo_rng_init_os(&a), DPMO_OK);
    CHECK_STATUS(dpmo_rng_init_os(&b), DPMO_OK);
    CHECK(memcmp(&a, &b, sizeof a) != 0);
    c = a;
    TEST("rng_init_os: the state drives selections and samples");
    CHECK_STATUS(dpmo_select_exponential(&a, s, 4, 1.0, 1.0, &out, NULL), DPMO_OK);
    CHECK(out < 4);
    CHECK(memcmp(&a, &c, sizeof a) != 0);
    out = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_permute_and_flip(&a, s, 4, 1.0, 1.0, perm, 4, &out, NULL), DPMO_OK);
    CHECK(out < 4);
    CHECK_STATUS(dpmo_sample(&a, DPMO_DIST_UNIFORM | DPMO_FLOAT, da, 4), DPMO_OK);
    CHECK_STATUS(dpmo_sample(&b, DPMO_DIST_UNIFORM | DPMO_FLOAT, db, 4), DPMO_OK);
    CHECK(memcmp(da, db, sizeof da) != 0);
    TEST("rng_init_os: a ChaCha20 state (a copy repeats the stream, like a seeded one)");
    a = c;
    CHECK_STATUS(dpmo_sample(&a, DPMO_DIST_UNIFORM | DPMO_FLOAT, da, 4), DPMO_OK);
    CHECK_STATUS(dpmo_sample(&c, DPMO_DIST_UNIFORM | DPMO_FLOAT, db, 4), DPMO_OK);
    CHECK(memcmp(da, db, sizeof da) == 0);
}

/* ------------------------------------------------------------------ re-entrancy */
/* A δ callback that tries to use the generator of the running call (and a second, independent one), records
 * what the library answered, and returns δ = 1 (or a bad value when told to). */
typedef struct {
    dpmo_rng *same;  /* the generator of the outer call */
    dpmo_rng *other; /* an independent generator */
    int mode; /* 0: sample; 1: a selection; 2: sample then return bad_value (NaN); 3: do nothing; 4: copy the
               * state; 5: do nothing and return Δ = 2 */
    unsigned long calls, refused, other_ok, other_failed, unexpected;
    double bad_value;
    dpmo_rng snapshot;
} reentry_ctx;

static double reentrant_delta(void *context, size_t r, size_t t) {
    reentry_ctx *c = (reentry_ctx *)context;
    double d[2] = {SENTINEL_D, SENTINEL_D};
    size_t out = SENTINEL_Z;
    dpmo_status st = DPMO_OK;
    const double s[2] = {0.0, 1.0};
    (void)r;
    (void)t;
    c->calls++;
    if (c->mode == 3) return 1.0;
    if (c->mode == 5) return 2.0;
    if (c->mode == 4) {
        memcpy(&c->snapshot, c->same, sizeof c->snapshot);
        return 1.0;
    }
    if (c->mode == 1)
        st = dpmo_select_exponential(c->same, s, 2, 1.0, 1.0, &out, NULL);
    else
        st = dpmo_sample(c->same, DPMO_DIST_UNIFORM | DPMO_FLOAT, d, 2);
    if (st == DPMO_INVALID_GENERATOR && out == SENTINEL_Z && d[0] == SENTINEL_D)
        c->refused++;
    else
        c->unexpected++;
    /* Another generator is not busy: the callback may use it. */
    if (c->other != NULL) {
        if (dpmo_sample(c->other, DPMO_DIST_UNIFORM | DPMO_FLOAT, d, 2) == DPMO_OK)
            c->other_ok++;
        else
            c->other_failed++;
    }
    return c->mode == 2 ? c->bad_value : 1.0;
}

static reentry_ctx make_reentry(dpmo_rng *same, dpmo_rng *other, int mode) {
    reentry_ctx c;
    memset(&c, 0, sizeof c);
    c.same = same;
    c.other = other;
    c.mode = mode;
    c.bad_value = nan("");
    return c;
}

/* The selecting functions that take a δ callback, one call each with k = 1 (or 2). */
enum { RE_LD, RE_LD_TOPK, RE_PARETO, RE_AGG, RE_COUNT };
static const char *const RE_NAMES[RE_COUNT] = {"select_local_dampening", "select_local_dampening_top_k",
                                               "select_privpareto", "select_privagg"};

static dpmo_status reentrant_call(int f, dpmo_rng *rng, reentry_ctx *ctx, uint32_t sel, size_t *out,
                                  dpmo_budget *budget) {
    static const double u[4] = {3.0, 1.0, 0.0, 2.0}, um[8] = {3, 1, 1, 3, 0, 0, 2, 2}, w[2] = {1.0, 2.0};
    static double values[4096];
    static size_t indices[4096];
    dpmo_sensitivity specs[2];
    size_t vl = 0, il = 0;
    specs[0] = make_spec(DPMO_DELTA_CALLBACK, NULL, 0, 0, 2.0, 3);
    specs[0].callback = reentrant_delta;
    specs[0].context = ctx;
    specs[1] = specs[0];
    switch (f) {
    case RE_LD:
        return dpmo_select_local_dampening(rng, u, 4, specs, DPMO_DAMPENING_PLAIN, sel, 1.0, values,
                                           ld_values_len(4, 1, sel), indices, ld_indices_len(4, 1, sel), out, budget);
    case RE_LD_TOPK:
        return dpmo_select_local_dampening_top_k(rng, u, 4, specs, DPMO_DAMPENING_SHIFTED, sel, 1.0, 2, out, values,
                                                 ld_values_len(4, 2, sel), indices, ld_indices_len(4, 2, sel), budget);
    case RE_PARETO:
        lens_or_die(dpmo_privpareto_scratch_len(4, 2, &vl, &il), "dpmo_privpareto_scratch_len");
        return dpmo_select_privpareto(rng, um, 4, 2, DPMO_DOMINANCE_TEXTBOOK, specs, 0, DPMO_DAMPENING_PLAIN, sel, 1.0,
                                      2, out, values, vl, indices, il, budget);
    default:
        lens_or_die(dpmo_privagg_scratch_len(4, 2, &vl, &il), "dpmo_privagg_scratch_len");
        return dpmo_select_privagg(rng, um, 4, 2, w, NULL, specs, 0, DPMO_DAMPENING_PLAIN, sel, 1.0, 2, out, values, vl,
                                   indices, il, budget);
    }
}

static void test_reentrancy(void) {
    int f, k;
    char label[200];
    for (f = 0; f < RE_COUNT; f++)
        for (k = 0; k < 2; k++) {
            const uint32_t sel = k ? (DPMO_SELECTOR_PERMUTE_AND_FLIP | DPMO_FLOAT) : DPMO_SELECTOR_PERMUTE_AND_FLIP;
            dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 70), ref = rng, other = make_rng(DPMO_RNG_XOSHIRO256PP, 71);
            dpmo_rng before;
            dpmo_budget budget = make_budget(8.0, 0.0);
            size_t out[2] = {SENTINEL_Z, SENTINEL_Z}, ref_out[2] = {SENTINEL_Z, SENTINEL_Z};
            reentry_ctx quiet = make_reentry(&ref, NULL, 3), ctx;
            const size_t kk = f == RE_LD ? 1 : 2;
            double d[2];
            int mode;

            for (mode = 0; mode < 2; mode++) {
                snprintf(label, sizeof label, "%s %s: a callback's %s with the same generator is refused", RE_NAMES[f],
                         selector_name(sel), mode ? "selection" : "dpmo_sample");
                TEST(label);
                rng = make_rng(DPMO_RNG_CHACHA20, 70);
                ref = rng;
                quiet = make_reentry(&ref, NULL, 3);
                ctx = make_reentry(&rng, &other, mode);
                out[0] = out[1] = ref_out[0] = ref_out[1] = SENTINEL_Z;
                CHECK_STATUS(reentrant_call(f, &rng, &ctx, sel, out, &budget), DPMO_OK);
                CHECK(ctx.calls > 0);
                CHECK_EQ(ctx.refused, ctx.calls);
                CHECK_EQ(ctx.unexpected, 0);
                CHECK_EQ(ctx.other_ok, ctx.calls);
                /* The refused attempts changed nothing: the same picks and the same final state as a run whose
                 * callback does not touch the generator. */
                CHECK_STATUS(reentrant_call(f, &ref, &quiet, sel, ref_out, NULL), DPMO_OK);
                CHECK(memcmp(out, ref_out, kk * sizeof(size_t)) == 0);
                CHECK(memcmp(&rng, &ref, sizeof rng) == 0);
                CHECK(out[0] < 4);
                TEST("after the outer call the generator works again");
                CHECK_STATUS(dpmo_sample(&rng, DPMO_DIST_UNIFORM | DPMO_FLOAT, d, 2), DPMO_OK);
            }

            /* A bad δ value is private data, never a status (no free probing, issue 20): it counts as Δ = 2.
             * The re-entrant attempts are still refused, and the call selects exactly as one whose quiet
             * callback answers Δ, charged. */
            snprintf(label, sizeof label, "%s %s: a callback's bad values count as Δ, its re-entry refused",
                     RE_NAMES[f], selector_name(sel));
            TEST(label);
            {
                const double bad[2] = {nan(""), -1.0};
                int b;
                budget = make_budget(8.0, 0.0);
                for (b = 0; b < 2; b++) {
                    rng = make_rng(DPMO_RNG_CHACHA20, 70);
                    ref = rng;
                    before = rng;
                    ctx = make_reentry(&rng, &other, 2);
                    ctx.bad_value = bad[b];
                    quiet = make_reentry(&ref, NULL, 5);
                    out[0] = out[1] = ref_out[0] = ref_out[1] = SENTINEL_Z;
                    CHECK_STATUS(reentrant_call(f, &rng, &ctx, sel, out, &budget), DPMO_OK);
                    CHECK(ctx.calls > 0);
                    CHECK_EQ(ctx.refused, ctx.calls);
                    CHECK_EQ(ctx.unexpected, 0);
                    CHECK_DEQ(budget.spent, (double)(b + 1)); /* ε = 1 charged each time */
                    CHECK_STATUS(reentrant_call(f, &ref, &quiet, sel, ref_out, NULL), DPMO_OK);
                    CHECK(out[0] < 4);
                    CHECK(memcmp(out, ref_out, kk * sizeof(size_t)) == 0);
                    CHECK(memcmp(&rng, &ref, sizeof rng) == 0);
                    CHECK(memcmp(&rng, &before, sizeof rng) != 0);
                    CHECK_STATUS(dpmo_sample(&rng, DPMO_DIST_UNIFORM | DPMO_FLOAT, d, 2), DPMO_OK);
                }
            }
        }

    TEST("a state copied during a call carries the busy mark: the copy cannot replay the stream");
    {
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 72), before = rng;
        reentry_ctx c = make_reentry(&rng, NULL, 4);
        size_t out = SENTINEL_Z;
        double d[2] = {SENTINEL_D, SENTINEL_D};
        CHECK_STATUS(reentrant_call(RE_LD, &rng, &c, DPMO_SELECTOR_EXPONENTIAL, &out, NULL), DPMO_OK);
        CHECK(c.calls > 0);
        CHECK(memcmp(&c.snapshot, &before, sizeof before) != 0);
        CHECK_STATUS(dpmo_sample(&c.snapshot, DPMO_DIST_UNIFORM | DPMO_FLOAT, d, 2), DPMO_INVALID_GENERATOR);
        CHECK_DEQ(d[0], SENTINEL_D);
        CHECK_STATUS(dpmo_select_exponential(&c.snapshot, d, 1, 1.0, 1.0, &out, NULL), DPMO_INVALID_GENERATOR);
        CHECK_STATUS(dpmo_sample(&rng, DPMO_DIST_UNIFORM | DPMO_FLOAT, d, 2), DPMO_OK); /* the real state is fine */
    }
}

int main(void) {
    test_reproducibility();
    test_samplers();
    test_selector_frequencies();
    test_rng_init_os();
    test_reentrancy();
    return HARNESS_FINISH();
}
