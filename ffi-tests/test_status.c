/*
 * Every status code the dpmo C API can produce, for every exported function and every pointer argument,
 * and for each failing call: nothing written to any output (sentinels / byte snapshots), the generator
 * state byte-for-byte unchanged, and nothing charged. Private data (utilities, scores, δ values) is never a
 * status (no free probing, issue 20): it follows a public rule (NaN → the lowest score, ±inf → ±DBL_MAX,
 * utilities clamped to ±2^60 Δ by dampening, a NaN, negative or infinite δ → Δ), and the call releases its
 * output and charges ε exactly as on valid data.
 */
#include "common.h"

#include <float.h>

static const double SCORES5[5] = {1.0, 2.0, 3.0, 4.0, 5.0};
static double nan_(void) { return nan(""); }

/* ------------------------------------------------------------------ version / messages */
static void test_version_and_messages(void) {
    const char *v = dpmo_version();
    unsigned a = 99, b = 99, c = 99;
    char expect[64];
    uint32_t s;
    TEST("version");
    CHECK(v != NULL);
    CHECK(v != NULL && sscanf(v, "%u.%u.%u", &a, &b, &c) == 3);
    CHECK(dpmo_version() == v);

    TEST("version macros describe the linked library");
    CHECK_EQ(a, DPMO_VERSION_MAJOR);
    CHECK_EQ(b, DPMO_VERSION_MINOR);
    CHECK_EQ(c, DPMO_VERSION_PATCH);
    snprintf(expect, sizeof expect, "%d.%d.%d", DPMO_VERSION_MAJOR, DPMO_VERSION_MINOR, DPMO_VERSION_PATCH);
    CHECK(v != NULL && strcmp(v, expect) == 0);
    CHECK_EQ(DPMO_VERSION_MAJOR, 0);
    CHECK_EQ(DPMO_VERSION_MINOR, 2);

    TEST("status_message");
    CHECK(strcmp(dpmo_status_message(DPMO_OK), "Success.") == 0);
    CHECK_EQ(DPMO_UNSUPPORTED, 15);
    for (s = 0; s <= DPMO_UNSUPPORTED; s++) {
        const char *m = dpmo_status_message(s);
        uint32_t t;
        size_t len = m ? strlen(m) : 0;
        CHECK(m != NULL && len > 5 && m[len - 1] == '.');
        CHECK(m != NULL && strcmp(m, "Unknown dpmo status code.") != 0);
        CHECK(dpmo_status_message(s) == m);
        for (t = 0; t < s; t++) CHECK(strcmp(dpmo_status_message(t), m) != 0);
    }
    CHECK(strcmp(dpmo_status_message(DPMO_NULL_POINTER), "A required pointer argument is null.") == 0);
    CHECK(strcmp(dpmo_status_message(DPMO_CAPACITY_EXCEEDED),
                 "An input exceeds a fixed capacity of the library (more than 16 objectives, a contingency table larger "
                 "than 16 x 16, or a generalization hierarchy beyond its documented limits).") == 0);
    CHECK(strcmp(dpmo_status_message(DPMO_BUDGET_EXHAUSTED),
                 "The remaining privacy budget is smaller than the epsilon requested.") == 0);
    CHECK(strcmp(dpmo_status_message(DPMO_OVERLAPPING_BUFFERS), "An output buffer overlaps an input buffer.") == 0);
    CHECK(strstr(dpmo_status_message(DPMO_UNSUPPORTED), "DPMO_FLOAT") != NULL ||
          strstr(dpmo_status_message(DPMO_UNSUPPORTED), "floating") != NULL);
    CHECK(strcmp(dpmo_status_message(16), "Unknown dpmo status code.") == 0);
    CHECK(strcmp(dpmo_status_message(1000), "Unknown dpmo status code.") == 0);
    CHECK(strcmp(dpmo_status_message(UINT32_MAX), "Unknown dpmo status code.") == 0);
    CHECK(sizeof(dpmo_rng) == 64);
    CHECK(sizeof(dpmo_status) == sizeof(int));
    CHECK_EQ(DPMO_FLOAT, 0x100);
}

/* ------------------------------------------------------------------ header constants */
/* The header's constants are usable in C expressions. Regression: at 21c59e7 include/dpmo.h defined
 * DPMO_MAX_UNBUFFERED_CANDIDATES as (1 << 32), an int shift by the width of int: undefined behaviour in C and
 * C++, rejected by -Werror (-Wshift-count-overflow), and 0 with gcc when the warning is silenced; only the
 * preprocessor, which computes in intmax_t, saw 2^32. (The warning stays silenced here so that this file
 * compiles against such a header and the check below reports it.) */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshift-count-overflow"
#endif
static uint64_t max_unbuffered_as_compiled(void) { return (uint64_t)DPMO_MAX_UNBUFFERED_CANDIDATES; }
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static void test_header_constants(void) {
    TEST("DPMO_MAX_UNBUFFERED_CANDIDATES in the preprocessor");
#if DPMO_MAX_UNBUFFERED_CANDIDATES == 4294967296
    CHECK(1);
#else
    CHECK(!"DPMO_MAX_UNBUFFERED_CANDIDATES is not 2^32 in #if");
#endif
    TEST("DPMO_MAX_UNBUFFERED_CANDIDATES in a C expression");
    CHECK(max_unbuffered_as_compiled() == ((uint64_t)1 << 32));
}

/* ------------------------------------------------------------------ rng_init */
static void init_case(const char *name, dpmo_rng *rng, uint32_t kind, const uint8_t *seed, dpmo_status want) {
    TEST(name);
    guard(rng, sizeof *rng);
    guard(seed, 32);
    CHECK_STATUS(dpmo_rng_init(rng, kind, seed), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_rng_init(void) {
    uint8_t seed[32];
    union {
        dpmo_rng rng;
        unsigned char bytes[128];
    } mem;
    dpmo_rng a, b;
    size_t i;
    for (i = 0; i < 32; i++) seed[i] = (uint8_t)(3 * i + 1);
    memset(&mem, 0xAB, sizeof mem);

    init_case("rng_init null rng", NULL, DPMO_RNG_CHACHA20, seed, DPMO_NULL_POINTER);
    init_case("rng_init null seed", &mem.rng, DPMO_RNG_CHACHA20, NULL, DPMO_NULL_POINTER);
    init_case("rng_init unknown kind 2", &mem.rng, 2, seed, DPMO_INVALID_ARGUMENT);
    init_case("rng_init unknown kind max", &mem.rng, UINT32_MAX, seed, DPMO_INVALID_ARGUMENT);
    init_case("rng_init seed is the state", &mem.rng, DPMO_RNG_CHACHA20, mem.bytes, DPMO_OVERLAPPING_BUFFERS);
    init_case("rng_init seed overlaps the state end", &mem.rng, DPMO_RNG_XOSHIRO256PP, mem.bytes + 40,
              DPMO_OVERLAPPING_BUFFERS);
    init_case("rng_init misaligned rng", (dpmo_rng *)misalign(&mem.rng), DPMO_RNG_CHACHA20, seed,
              DPMO_INVALID_ARGUMENT);

    TEST("rng_init ok");
    memset(&a, 0, sizeof a);
    memset(&b, 0xFF, sizeof b);
    CHECK_STATUS(dpmo_rng_init(&a, DPMO_RNG_CHACHA20, seed), DPMO_OK);
    CHECK_STATUS(dpmo_rng_init(&b, DPMO_RNG_CHACHA20, seed), DPMO_OK);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK_STATUS(dpmo_rng_init(&b, DPMO_RNG_XOSHIRO256PP, seed), DPMO_OK);
    CHECK(memcmp(&a, &b, sizeof a) != 0);
    seed[31] ^= 1;
    CHECK_STATUS(dpmo_rng_init(&b, DPMO_RNG_CHACHA20, seed), DPMO_OK);
    CHECK(memcmp(&a, &b, sizeof a) != 0);
    /* A seed right after the state (adjacent, not overlapping) is fine. */
    CHECK_STATUS(dpmo_rng_init(&mem.rng, DPMO_RNG_CHACHA20, mem.bytes + 64), DPMO_OK);
    memset(seed, 0, sizeof seed);
    CHECK_STATUS(dpmo_rng_init(&a, DPMO_RNG_XOSHIRO256PP, seed), DPMO_OK); /* all-zero seed is accepted */
    CHECK_STATUS(dpmo_rng_init(&a, DPMO_RNG_CHACHA20, seed), DPMO_OK);

    TEST("rng_init_os null rng");
    CHECK_STATUS(dpmo_rng_init_os(NULL), DPMO_NULL_POINTER);
    TEST("rng_init_os misaligned rng");
    memset(&mem, 0xAB, sizeof mem);
    guard(&mem, sizeof mem);
    CHECK_STATUS(dpmo_rng_init_os((dpmo_rng *)misalign(&mem.rng)), DPMO_INVALID_ARGUMENT);
    CHECK(guards_intact());
}

/* ------------------------------------------------------------------ sample */
static void sample_case(const char *name, dpmo_rng *rng, uint32_t dist, double *out, size_t count, dpmo_status want) {
    TEST(name);
    guard(rng, sizeof *rng);
    guard(out, span(count, sizeof(double)));
    CHECK_STATUS(dpmo_sample(rng, dist, out, count), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_sample(void) {
    dpmo_rng good = make_rng(DPMO_RNG_CHACHA20, 1), bad;
    double out[8];
    size_t i;
    for (i = 0; i < 8; i++) out[i] = SENTINEL_D;

    sample_case("sample null rng", NULL, DPMO_DIST_UNIFORM | DPMO_FLOAT, out, 8, DPMO_NULL_POINTER);
    sample_case("sample null out", &good, DPMO_DIST_UNIFORM | DPMO_FLOAT, NULL, 8, DPMO_NULL_POINTER);
    sample_case("sample unknown distribution", &good, 4, out, 8, DPMO_INVALID_ARGUMENT);
    sample_case("sample unknown distribution max", &good, UINT32_MAX, out, 8, DPMO_INVALID_ARGUMENT);
    memset(&bad, 0, sizeof bad);
    sample_case("sample zeroed rng", &bad, DPMO_DIST_UNIFORM | DPMO_FLOAT, out, 8, DPMO_INVALID_GENERATOR);
    memset(&bad, 0x5A, sizeof bad);
    sample_case("sample garbage rng", &bad, DPMO_DIST_LAPLACE | DPMO_FLOAT, out, 8, DPMO_INVALID_GENERATOR);
    sample_case("sample out aliases rng", &good, DPMO_DIST_UNIFORM | DPMO_FLOAT, (double *)(void *)&good, 1,
                DPMO_OVERLAPPING_BUFFERS);
    sample_case("sample misaligned out", &good, DPMO_DIST_UNIFORM | DPMO_FLOAT, (double *)misalign(out), 2,
                DPMO_INVALID_ARGUMENT);
    sample_case("sample count overflows", &good, DPMO_DIST_UNIFORM | DPMO_FLOAT, out, SIZE_MAX / 4,
                DPMO_OVERFLOW);

    /* Floating-point draws are opt-in (issue 22): without DPMO_FLOAT every distribution is refused before any
     * other check, and the generator does not move. */
    {
        uint32_t dist;
        for (dist = DPMO_DIST_UNIFORM; dist <= DPMO_DIST_LAPLACE; dist++) {
            char label[80];
            snprintf(label, sizeof label, "sample distribution %u without DPMO_FLOAT", (unsigned)dist);
            sample_case(label, &good, dist, out, 8, DPMO_UNSUPPORTED);
        }
        sample_case("sample without DPMO_FLOAT, null rng", NULL, DPMO_DIST_LAPLACE, out, 8, DPMO_UNSUPPORTED);
        sample_case("sample unknown flag", &good, DPMO_DIST_UNIFORM | DPMO_FLOAT | 0x200, out, 8,
                    DPMO_INVALID_ARGUMENT);
    }

    TEST("sample count 0");
    {
        dpmo_rng before = good;
        CHECK_STATUS(dpmo_sample(&good, DPMO_DIST_UNIFORM | DPMO_FLOAT, out, 0), DPMO_OK);
        CHECK(memcmp(&before, &good, sizeof good) == 0);
        CHECK_DEQ(out[0], SENTINEL_D);
    }
}

/* ------------------------------------------------------------------ global-sensitivity selectors */
/* The three index-returning functions; noisy max in every runnable noise and arithmetic. */
enum { SEL_EXP, SEL_PF, SEL_NM };
typedef struct {
    const char *name;
    int fn;
    uint32_t noise; /* for SEL_NM */
    int perm;       /* needs the permutation scratch */
} sel_kind;
#define N_SEL_KINDS 8
static const sel_kind SEL_KINDS[N_SEL_KINDS] = {
    {"select_exponential", SEL_EXP, 0, 0},
    {"select_permute_and_flip", SEL_PF, 0, 1},
    {"select_noisy_max gumbel", SEL_NM, DPMO_NOISE_GUMBEL, 0},
    {"select_noisy_max exponential", SEL_NM, DPMO_NOISE_EXPONENTIAL, 1},
    {"select_noisy_max laplace|float", SEL_NM, DPMO_NOISE_LAPLACE | DPMO_FLOAT, 0},
    {"select_noisy_max gumbel|float", SEL_NM, DPMO_NOISE_GUMBEL | DPMO_FLOAT, 0},
    {"select_noisy_max exponential|float", SEL_NM, DPMO_NOISE_EXPONENTIAL | DPMO_FLOAT, 0},
    {"select_noisy_max raw DPMO_FLOAT (= laplace|float)", SEL_NM, DPMO_FLOAT, 0},
};

static dpmo_status run_sel(const sel_kind *k, dpmo_rng *rng, const double *scores, size_t n, double sens, double eps,
                           size_t *perm, size_t perm_len, uint32_t noise, size_t *out, dpmo_budget *budget) {
    switch (k->fn) {
    case SEL_EXP: return dpmo_select_exponential(rng, scores, n, sens, eps, out, budget);
    case SEL_PF: return dpmo_select_permute_and_flip(rng, scores, n, sens, eps, perm, perm_len, out, budget);
    default: return dpmo_select_noisy_max(rng, scores, n, sens, eps, noise, perm, perm_len, out, budget);
    }
}

/* One call expected to return `want`. `budget` (may be NULL) must be charged exactly `charge` (0: left
 * byte-for-byte unchanged); on failure the generator, the scores, the scratch and the output are unchanged. */
static void sel_case(const char *name, const sel_kind *k, dpmo_rng *rng, const double *scores, size_t n, double sens,
                     double eps, size_t *perm, size_t perm_len, uint32_t noise, size_t *out, dpmo_budget *budget,
                     double charge, dpmo_status want) {
    dpmo_budget before;
    TEST(name);
    memset(&before, 0, sizeof before);
    guard(rng, sizeof *rng);
    guard(scores, span(n, sizeof(double)));
    guard(perm, want == DPMO_OK ? 0 : span(perm_len, sizeof(size_t)));
    guard(out, sizeof *out);
    if (budget != NULL && charge == 0.0) guard(budget, sizeof *budget);
    if (budget != NULL && charge != 0.0) memcpy(&before, budget, sizeof before);
    CHECK_STATUS(run_sel(k, rng, scores, n, sens, eps, perm, perm_len, noise, out, budget), want);
    if (budget != NULL && charge != 0.0) {
        CHECK_DEQ(budget->spent, before.spent + charge);
        CHECK_DEQ(budget->total, before.total);
    }
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_selectors(void) {
    char label[200];
    int w;
    for (w = 0; w < N_SEL_KINDS; w++) {
        const sel_kind *k = &SEL_KINDS[w];
        dpmo_rng rng = make_rng(DPMO_RNG_XOSHIRO256PP, 7), bad;
        dpmo_budget bud = make_budget(10.0, 0.0), *B = &bud;
        double s[5];
        size_t perm[8], out = SENTINEL_Z, i;
        union {
            double d[8];
            size_t z[8];
            dpmo_budget b[4];
        } shared;
        const double bad_eps[5] = {0.0, -1.0, nan_(), INFINITY, -INFINITY};
        const double bad_sens[5] = {0.0, -2.0, nan_(), INFINITY, -0.0};
        const double bad_score[3] = {nan_(), INFINITY, -INFINITY};
        const uint32_t noise = k->noise;
        memcpy(s, SCORES5, sizeof s);
        for (i = 0; i < 8; i++) perm[i] = SENTINEL_Z;
#define L(what) (snprintf(label, sizeof label, "%s %s", k->name, what), label)
#define FRESH (bud = make_budget(10.0, 0.0), B)
        /* Argument errors: nothing written, nothing charged. */
        sel_case(L("null rng"), k, NULL, s, 5, 1, 1, perm, 8, noise, &out, FRESH, 0, DPMO_NULL_POINTER);
        sel_case(L("null scores"), k, &rng, NULL, 5, 1, 1, perm, 8, noise, &out, FRESH, 0, DPMO_NULL_POINTER);
        sel_case(L("null out_index"), k, &rng, s, 5, 1, 1, perm, 8, noise, NULL, FRESH, 0, DPMO_NULL_POINTER);
        sel_case(L("n = 0"), k, &rng, s, 0, 1, 1, perm, 8, noise, &out, FRESH, 0, DPMO_EMPTY_INPUT);
        for (i = 0; i < 5; i++)
            sel_case(L("bad epsilon"), k, &rng, s, 5, 1, bad_eps[i], perm, 8, noise, &out, FRESH, 0,
                     DPMO_INVALID_EPSILON);
        for (i = 0; i < 5; i++)
            sel_case(L("bad sensitivity"), k, &rng, s, 5, bad_sens[i], 1, perm, 8, noise, &out, FRESH, 0,
                     DPMO_INVALID_SENSITIVITY);
        memset(&bad, 0, sizeof bad);
        sel_case(L("zeroed rng"), k, &bad, s, 5, 1, 1, perm, 8, noise, &out, FRESH, 0, DPMO_INVALID_GENERATOR);
        memset(&bad, 0xC3, sizeof bad);
        sel_case(L("garbage rng"), k, &bad, s, 5, 1, 1, perm, 8, noise, &out, FRESH, 0, DPMO_INVALID_GENERATOR);
        sel_case(L("out_index aliases scores"), k, &rng, s, 5, 1, 1, perm, 8, noise, (size_t *)(void *)&s[2], FRESH,
                 0, DPMO_OVERLAPPING_BUFFERS);
        sel_case(L("out_index aliases rng"), k, &rng, s, 5, 1, 1, perm, 8, noise, (size_t *)(void *)&rng, FRESH, 0,
                 DPMO_OVERLAPPING_BUFFERS);
        bud = make_budget(10.0, 0.0);
        sel_case(L("out_index aliases budget"), k, &rng, s, 5, 1, 1, perm, 8, noise, (size_t *)(void *)&bud.spent, B,
                 0, DPMO_OVERLAPPING_BUFFERS);
        sel_case(L("scores overlap rng"), k, &rng, (const double *)(const void *)&rng, 8, 1, 1, perm, 8, noise, &out,
                 FRESH, 0, DPMO_OVERLAPPING_BUFFERS);
        sel_case(L("misaligned scores"), k, &rng, (const double *)misalign(s), 4, 1, 1, perm, 8, noise, &out, FRESH,
                 0, DPMO_INVALID_ARGUMENT);
        sel_case(L("misaligned out_index"), k, &rng, s, 5, 1, 1, perm, 8, noise, (size_t *)misalign(perm), FRESH, 0,
                 DPMO_INVALID_ARGUMENT);
        sel_case(L("n overflows"), k, &rng, s, SIZE_MAX / 4, 1, 1, perm, 8, noise, &out, FRESH, 0, DPMO_OVERFLOW);

        /* Budget arguments. */
        bud = make_budget(1.0, 0.75);
        sel_case(L("budget short (0.25 left, 0.5 asked)"), k, &rng, s, 5, 1, 0.5, perm, 8, noise, &out, B, 0,
                 DPMO_BUDGET_EXHAUSTED);
        bud = make_budget(1.0, 1.0);
        sel_case(L("budget spent"), k, &rng, s, 5, 1, 1e-300, perm, 8, noise, &out, B, 0, DPMO_BUDGET_EXHAUSTED);
        bud = make_budget(1.0, 1.5);
        sel_case(L("invalid budget: spent > total"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, &out, B, 0,
                 DPMO_INVALID_ARGUMENT);
        bud = make_budget(nan_(), 0.0);
        sel_case(L("invalid budget: NaN total"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, &out, B, 0,
                 DPMO_INVALID_ARGUMENT);
        bud = make_budget(1.0, -0.5);
        sel_case(L("invalid budget: spent < 0"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, &out, B, 0,
                 DPMO_INVALID_ARGUMENT);
        shared.b[0] = make_budget(1.0, 0.0);
        sel_case(L("misaligned budget"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, &out,
                 (dpmo_budget *)misalign(&shared.b[0]), 0, DPMO_INVALID_ARGUMENT);
        sel_case(L("budget overlaps rng"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, &out, (dpmo_budget *)(void *)&rng,
                 0, DPMO_OVERLAPPING_BUFFERS);
        memcpy(shared.d, SCORES5, sizeof SCORES5);
        sel_case(L("budget overlaps scores"), k, &rng, shared.d, 5, 1, 0.25, perm, 8, noise, &out,
                 &shared.b[1], 0, DPMO_OVERLAPPING_BUFFERS);
        bud = make_budget(10.0, 0.0);
        sel_case(L("budget is out_index"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, (size_t *)(void *)&bud, B, 0,
                 DPMO_OVERLAPPING_BUFFERS);
        /* The budget and the generator are checked before the data is read: a NaN score does not change
         * the status of a call that cannot be paid for, or that has no valid generator. */
        s[3] = nan_();
        bud = make_budget(1.0, 0.75);
        sel_case(L("budget short and a NaN score: BUDGET_EXHAUSTED"), k, &rng, s, 5, 1, 0.5, perm, 8, noise, &out, B,
                 0, DPMO_BUDGET_EXHAUSTED);
        memset(&bad, 0, sizeof bad);
        sel_case(L("zeroed rng and a NaN score: INVALID_GENERATOR"), k, &bad, s, 5, 1, 1, perm, 8, noise, &out, FRESH,
                 0, DPMO_INVALID_GENERATOR);
        sel_case(L("bad sensitivity and a NaN score: INVALID_SENSITIVITY"), k, &rng, s, 5, -1, 1, perm, 8, noise,
                 &out, FRESH, 0, DPMO_INVALID_SENSITIVITY);
        s[3] = 4.0;

        /* Scores are data and never a status: NaN counts as -DBL_MAX, +-inf as +-DBL_MAX (charged as usual). */
        for (i = 0; i < 3; i++) {
            s[3] = bad_score[i];
            sel_case(L("non-finite score, budget charged"), k, &rng, s, 5, 1, 0.25, perm, 8, noise, &out, FRESH, 0.25,
                     DPMO_OK);
            CHECK(out < 5);
            if (bad_score[i] > 0) CHECK_EQ(out, 3);
            sel_case(L("non-finite score, no budget"), k, &rng, s, 5, 1, 1, perm, 8, noise, &out, NULL, 0, DPMO_OK);
            s[3] = 4.0;
        }

        if (k->perm) {
            sel_case(L("null perm_scratch"), k, &rng, s, 5, 1, 1, NULL, 8, noise, &out, FRESH, 0, DPMO_NULL_POINTER);
            sel_case(L("perm_scratch too small"), k, &rng, s, 5, 1, 1, perm, 4, noise, &out, FRESH, 0,
                     DPMO_SCRATCH_TOO_SMALL);
            sel_case(L("perm_scratch empty"), k, &rng, s, 5, 1, 1, perm, 0, noise, &out, FRESH, 0,
                     DPMO_SCRATCH_TOO_SMALL);
            /* An argument error must win over the data: otherwise the status of a call with a deliberately short
             * scratch depends on the data, and its uncharged outcome (SCRATCH_TOO_SMALL) is impossible on the
             * NaN neighbour — "no NaN" learnt for free. Regression: at 21c59e7 the scores were checked first. */
            s[3] = nan_();
            sel_case(L("perm_scratch too small and a NaN score: SCRATCH_TOO_SMALL, free"), k, &rng, s, 5, 1, 1, perm, 4,
                     noise, &out, FRESH, 0, DPMO_SCRATCH_TOO_SMALL);
            s[3] = 4.0;
            memcpy(shared.d, SCORES5, sizeof SCORES5);
            sel_case(L("perm_scratch aliases scores"), k, &rng, shared.d, 5, 1, 1, shared.z, 5, noise, &out, FRESH, 0,
                     DPMO_OVERLAPPING_BUFFERS);
            sel_case(L("perm_scratch contains out_index"), k, &rng, s, 5, 1, 1, perm, 8, noise, &perm[6], FRESH, 0,
                     DPMO_OVERLAPPING_BUFFERS);
            sel_case(L("perm_scratch aliases rng"), k, &rng, s, 5, 1, 1, (size_t *)(void *)&rng, 8, noise, &out, FRESH,
                     0, DPMO_OVERLAPPING_BUFFERS);
            bud = make_budget(10.0, 0.0);
            sel_case(L("perm_scratch aliases budget"), k, &rng, s, 5, 1, 1, (size_t *)(void *)&bud, 2, noise, &out, B,
                     0, DPMO_OVERLAPPING_BUFFERS);
            sel_case(L("misaligned perm_scratch"), k, &rng, s, 5, 1, 1, (size_t *)misalign(perm), 5, noise, &out,
                     FRESH, 0, DPMO_INVALID_ARGUMENT);
        } else {
            /* perm_scratch is ignored: NULL, empty, or even overlapping nothing it would need. */
            sel_case(L("null perm ignored"), k, &rng, s, 5, 1, 1, NULL, 0, noise, &out, NULL, 0, DPMO_OK);
            CHECK(out < 5);
            out = SENTINEL_Z;
            sel_case(L("short perm ignored"), k, &rng, s, 5, 1, 1, perm, 2, noise, &out, NULL, 0, DPMO_OK);
            CHECK(out < 5);
            out = SENTINEL_Z;
        }
        if (k->fn == SEL_NM) {
            sel_case(L("unknown noise 3"), k, &rng, s, 5, 1, 1, perm, 8, 3, &out, FRESH, 0, DPMO_INVALID_ARGUMENT);
            sel_case(L("unknown noise 3|float"), k, &rng, s, 5, 1, 1, perm, 8, 3 | DPMO_FLOAT, &out, FRESH, 0,
                     DPMO_INVALID_ARGUMENT);
            sel_case(L("unknown noise max"), k, &rng, s, 5, 1, 1, perm, 8, UINT32_MAX, &out, FRESH, 0,
                     DPMO_INVALID_ARGUMENT);
            sel_case(L("unknown flag bit 0x400"), k, &rng, s, 5, 1, 1, perm, 8, noise | 0x400u, &out, FRESH, 0,
                     DPMO_INVALID_ARGUMENT);
            sel_case(L("unknown flag bit 0x80000000"), k, &rng, s, 5, 1, 1, perm, 8, noise | 0x80000000u, &out, FRESH,
                     0, DPMO_INVALID_ARGUMENT);
            sel_case(L("laplace without DPMO_FLOAT: UNSUPPORTED"), k, &rng, s, 5, 1, 1, perm, 8, DPMO_NOISE_LAPLACE,
                     &out, FRESH, 0, DPMO_UNSUPPORTED);
            s[3] = nan_();
            sel_case(L("laplace exact and a NaN score: UNSUPPORTED, free"), k, &rng, s, 5, 1, 1, perm, 8,
                     DPMO_NOISE_LAPLACE, &out, FRESH, 0, DPMO_UNSUPPORTED);
            s[3] = 4.0;
        }
        /* The success path, with the same fixtures: charged exactly epsilon, the state advanced. */
        {
            dpmo_rng before = rng;
            sel_case(L("ok, budget charged"), k, &rng, s, 5, 1, 0.25, perm, 5, noise, &out, FRESH, 0.25, DPMO_OK);
            CHECK(out < 5);
            CHECK(memcmp(&before, &rng, sizeof rng) != 0);
            out = SENTINEL_Z;
            bud = make_budget(1.0, 0.75);
            sel_case(L("ok, the last 0.25 of the budget"), k, &rng, s, 5, 1, 0.25, perm, 5, noise, &out, B, 0.25,
                     DPMO_OK);
            CHECK_DEQ(bud.spent, 1.0);
            CHECK(out < 5);
            out = SENTINEL_Z;
            sel_case(L("ok, no budget"), k, &rng, s, 5, 1, 1, perm, 5, noise, &out, NULL, 0, DPMO_OK);
            CHECK(out < 5);
            out = SENTINEL_Z;
        }
#undef FRESH
#undef L
    }
}

/* ------------------------------------------------------------------ exponential_probabilities */
static void prob_case(const char *name, const double *scores, size_t n, double sens, double eps, double *out,
                      dpmo_status want) {
    TEST(name);
    guard(scores, span(n, sizeof(double)));
    guard(out, span(n, sizeof(double)));
    CHECK_STATUS(dpmo_exponential_probabilities(scores, n, sens, eps, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_exponential_probabilities(void) {
    double s[5], out[6], both[10] = {0};
    size_t i;
    memcpy(s, SCORES5, sizeof s);
    for (i = 0; i < 6; i++) out[i] = SENTINEL_D;
    memcpy(both, SCORES5, sizeof s);
    prob_case("probabilities null scores", NULL, 5, 1, 1, out, DPMO_NULL_POINTER);
    prob_case("probabilities null out", s, 5, 1, 1, NULL, DPMO_NULL_POINTER);
    prob_case("probabilities n = 0", s, 0, 1, 1, out, DPMO_EMPTY_INPUT);
    /* The probabilities of what the selector does: a NaN score counts as -DBL_MAX, -inf likewise. */
    s[0] = nan_();
    prob_case("probabilities NaN score", s, 5, 1, 1, out, DPMO_OK);
    CHECK(sums_to_one(out, 5, 1e-12) && out[0] == 0.0);
    s[0] = -INFINITY;
    prob_case("probabilities -inf score", s, 5, 1, 1, out, DPMO_OK);
    CHECK(out[0] == 0.0);
    s[0] = 1.0;
    prob_case("probabilities epsilon 0", s, 5, 1, 0, out, DPMO_INVALID_EPSILON);
    prob_case("probabilities epsilon NaN", s, 5, 1, nan_(), out, DPMO_INVALID_EPSILON);
    prob_case("probabilities epsilon inf", s, 5, 1, INFINITY, out, DPMO_INVALID_EPSILON);
    prob_case("probabilities sensitivity -1", s, 5, -1, 1, out, DPMO_INVALID_SENSITIVITY);
    prob_case("probabilities sensitivity NaN", s, 5, nan_(), 1, out, DPMO_INVALID_SENSITIVITY);
    prob_case("probabilities sensitivity inf", s, 5, INFINITY, 1, out, DPMO_INVALID_SENSITIVITY);
    prob_case("probabilities out == scores", s, 5, 1, 1, s, DPMO_OVERLAPPING_BUFFERS);
    prob_case("probabilities out overlaps scores tail", both, 5, 1, 1, both + 4, DPMO_OVERLAPPING_BUFFERS);
    prob_case("probabilities out overlaps scores head", both + 4, 5, 1, 1, both, DPMO_OVERLAPPING_BUFFERS);
    prob_case("probabilities misaligned out", s, 5, 1, 1, (double *)misalign(out), DPMO_INVALID_ARGUMENT);
    prob_case("probabilities misaligned scores", (const double *)misalign(both), 5, 1, 1, out, DPMO_INVALID_ARGUMENT);
    prob_case("probabilities n overflows", s, SIZE_MAX / 2, 1, 1, out, DPMO_OVERFLOW);
    TEST("probabilities adjacent buffers ok");
    CHECK_STATUS(dpmo_exponential_probabilities(both, 5, 1, 1, both + 5), DPMO_OK);
    CHECK(sums_to_one(both + 5, 5, 1e-12));
}

/* ------------------------------------------------------------------ sensitivity_value */
static void value_case(const char *name, const dpmo_sensitivity *spec, size_t n, size_t r, size_t t, double *out,
                       dpmo_status want) {
    TEST(name);
    guard_spec(spec);
    guard(out, sizeof *out);
    if (spec) guard(spec->values, span(spec->values_len, sizeof(double)));
    CHECK_STATUS(dpmo_sensitivity_value(spec, n, r, t, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_sensitivity_value(void) {
    double v3[3] = {0.5, 1.0, 2.0}, table6[6] = {0.5, 1.0, 1.5, 0.25, 0.5, 0.75}, out = SENTINEL_D;
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_PER_CANDIDATE, v3, 3, 0, 4.0, 5), s;
    cb_ctx ctx = make_ctx(table6, 3);
    size_t i;
    value_case("value null spec", NULL, 3, 0, 0, &out, DPMO_NULL_POINTER);
    value_case("value null out", &spec, 3, 0, 0, NULL, DPMO_NULL_POINTER);
    s = spec; s.values = NULL;
    value_case("value null values", &s, 3, 0, 0, &out, DPMO_NULL_POINTER);
    s = spec; s.kind = 4;
    value_case("value unknown kind", &s, 3, 0, 0, &out, DPMO_INVALID_ARGUMENT);
    s = spec; s.kind = UINT32_MAX;
    value_case("value unknown kind max", &s, 3, 0, 0, &out, DPMO_INVALID_ARGUMENT);
    s = spec; s.global = 0.0;
    value_case("value global 0", &s, 3, 0, 0, &out, DPMO_INVALID_SENSITIVITY);
    s = spec; s.global = -1.0;
    value_case("value global -1", &s, 3, 0, 0, &out, DPMO_INVALID_SENSITIVITY);
    s = spec; s.global = nan_();
    value_case("value global NaN", &s, 3, 0, 0, &out, DPMO_INVALID_SENSITIVITY);
    s = spec; s.global = INFINITY;
    value_case("value global inf", &s, 3, 0, 0, &out, DPMO_INVALID_SENSITIVITY);
    s = spec; s.t_max = 0;
    value_case("value t_max 0", &s, 3, 0, 0, &out, DPMO_INVALID_ARGUMENT);
    s = spec; s.values_len = 2;
    value_case("value per-candidate length mismatch", &s, 3, 0, 0, &out, DPMO_LENGTH_MISMATCH);
    s = make_spec(DPMO_DELTA_TABLE, table6, 6, 3, 4.0, 5);
    value_case("value table ok shape", &s, 2, 1, 2, &out, DPMO_OK);
    CHECK_DEQ(out, 0.75);
    out = SENTINEL_D;
    s.values_len = 5;
    value_case("value table length mismatch", &s, 2, 0, 0, &out, DPMO_LENGTH_MISMATCH);
    s.values_len = 6; s.columns = 2;
    value_case("value table columns mismatch", &s, 2, 0, 0, &out, DPMO_LENGTH_MISMATCH);
    s.columns = SIZE_MAX;
    value_case("value table n * columns overflows", &s, 2, 0, 0, &out, DPMO_OVERFLOW);
    /* δ values are private data: never a status. The public rule: a NaN, negative or infinite value counts
     * as Δ (here 4), a value above Δ as Δ, and the other entries are read as given. */
    {
        const double bad_values[5] = {nan_(), -1.0, INFINITY, -INFINITY, 9.0};
        const char *const bad_names[5] = {"value NaN entry is Δ", "value negative entry is Δ",
                                          "value inf entry is Δ", "value -inf entry is Δ",
                                          "value entry above Δ is Δ"};
        for (i = 0; i < 5; i++) {
            s = spec; v3[1] = bad_values[i];
            value_case(bad_names[i], &s, 3, 1, 0, &out, DPMO_OK);
            CHECK_DEQ(out, 4.0);
            out = SENTINEL_D;
            value_case("value: a bad entry leaves the others as given", &s, 3, 2, 0, &out, DPMO_OK);
            CHECK_DEQ(out, 2.0);
            out = SENTINEL_D;
        }
        v3[1] = -0.0;
        value_case("value -0 entry is +0", &s, 3, 1, 0, &out, DPMO_OK);
        CHECK(out == 0.0 && !signbit(out));
        out = SENTINEL_D;
        v3[1] = 1.0;
        value_case("value valid entry, for contrast", &s, 3, 1, 0, &out, DPMO_OK);
        CHECK_DEQ(out, 1.0);
        out = SENTINEL_D;
    }
    s = make_spec(DPMO_DELTA_SHARED, v3, 3, 0, 4.0, 5);
    table6[4] = nan_();
    s.values = table6; s.values_len = 6;
    value_case("value shared NaN entry is Δ", &s, 1, 0, 4, &out, DPMO_OK);
    CHECK_DEQ(out, 4.0);
    out = SENTINEL_D;
    value_case("value shared: the other entries as given", &s, 1, 0, 3, &out, DPMO_OK);
    CHECK_DEQ(out, 0.25);
    out = SENTINEL_D;
    table6[4] = 0.5;
    value_case("value r = n", &spec, 3, 3, 0, &out, DPMO_INVALID_ARGUMENT);
    value_case("value r = SIZE_MAX", &spec, 3, SIZE_MAX, 0, &out, DPMO_INVALID_ARGUMENT);
    value_case("value out aliases values", &spec, 3, 0, 0, &v3[2], DPMO_OVERLAPPING_BUFFERS);
    s = spec;
    value_case("value out aliases spec", &s, 3, 0, 0, &s.global, DPMO_OVERLAPPING_BUFFERS);
    value_case("value misaligned out", &spec, 3, 0, 0, (double *)misalign(table6), DPMO_INVALID_ARGUMENT);
    value_case("value misaligned values", &s, 3, 0, 0, &out, DPMO_OK); /* reset below */
    s.values = (const double *)misalign(table6);
    value_case("value misaligned values", &s, 3, 0, 0, &out, DPMO_INVALID_ARGUMENT);
    s = make_spec(DPMO_DELTA_PER_CANDIDATE, v3, SIZE_MAX / 4, 0, 4.0, 5);
    value_case("value values_len overflows", &s, 3, 0, 0, &out, DPMO_OVERFLOW);

    s = make_cb_spec(&ctx, 4.0, 5);
    s.callback = NULL;
    value_case("value null callback", &s, 2, 0, 0, &out, DPMO_NULL_POINTER);
    s = make_cb_spec(&ctx, 4.0, 5);
    ctx.has_bad = 1; ctx.bad_r = 1; ctx.bad_t = 2;
    /* A callback's NaN, negative or infinite value counts as Δ = 4, like a table's (the public rule). */
    {
        const double bad_values[4] = {nan_(), -1.0, INFINITY, -INFINITY};
        const char *const bad_names[4] = {"value callback NaN is Δ", "value callback -1 is Δ",
                                          "value callback INFINITY is Δ", "value callback -INFINITY is Δ"};
        for (i = 0; i < 4; i++) {
            ctx.bad_value = bad_values[i];
            value_case(bad_names[i], &s, 2, 1, 2, &out, DPMO_OK);
            CHECK_DEQ(out, 4.0);
            out = SENTINEL_D;
        }
        value_case("value callback: other (r, t) as given", &s, 2, 1, 1, &out, DPMO_OK);
        CHECK_DEQ(out, 0.5);
        out = SENTINEL_D;
    }
    /* At t >= t_max the value is Δ without asking the callback (whatever it would answer). */
    ctx.bad_value = 0.125;
    value_case("value callback valid 0.125 below t_max", &s, 2, 1, 2, &out, DPMO_OK);
    CHECK_DEQ(out, 0.125);
    out = SENTINEL_D;
    s.t_max = 2;
    {
        const unsigned long calls = ctx.calls;
        value_case("value callback saturated at t_max: Δ, never asked", &s, 2, 1, 2, &out, DPMO_OK);
        CHECK_DEQ(out, 4.0);
        CHECK_EQ(ctx.calls, calls);
    }
    out = SENTINEL_D;
    s.t_max = 5;
    value_case("value callback r = n", &s, 2, 2, 0, &out, DPMO_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------ max_over_candidates */
static void max_case(const char *name, const dpmo_sensitivity *spec, size_t n, double *out, size_t cap,
                     size_t *out_len, dpmo_status want) {
    TEST(name);
    guard_spec(spec);
    if (spec) guard(spec->values, span(spec->values_len, sizeof(double)));
    guard(out, span(cap, sizeof(double)));
    guard(out_len, sizeof *out_len);
    CHECK_STATUS(dpmo_sensitivity_max_over_candidates(spec, n, out, cap, out_len), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_max_over_candidates(void) {
    /* Two doubles of slack after the table: "max length mismatch" claims 7 values, and the guards read what
     * a call claims (they must not read past the object: ASan checks the tests too). */
    double table6[8] = {0.5, 1.0, 1.5, 0.25, 2.0, 0.75, 0.0, 0.0}, out[8], both[16] = {0};
    size_t len = SENTINEL_Z, i;
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_TABLE, table6, 6, 3, 4.0, 10), s;
    cb_ctx ctx = make_ctx(table6, 3);
    for (i = 0; i < 8; i++) out[i] = SENTINEL_D;
    max_case("max null spec", NULL, 2, out, 8, &len, DPMO_NULL_POINTER);
    max_case("max null out", &spec, 2, NULL, 8, &len, DPMO_NULL_POINTER);
    max_case("max null out_len", &spec, 2, out, 8, NULL, DPMO_NULL_POINTER);
    max_case("max capacity too small", &spec, 2, out, 2, &len, DPMO_SCRATCH_TOO_SMALL);
    max_case("max capacity 0", &spec, 2, out, 0, &len, DPMO_SCRATCH_TOO_SMALL);
    s = spec; s.kind = 9;
    max_case("max unknown kind", &s, 2, out, 8, &len, DPMO_INVALID_ARGUMENT);
    s = spec; s.global = -0.0;
    max_case("max global -0", &s, 2, out, 8, &len, DPMO_INVALID_SENSITIVITY);
    s = spec; s.values_len = 7;
    max_case("max length mismatch", &s, 2, out, 8, &len, DPMO_LENGTH_MISMATCH);
    max_case("max out aliases values", &spec, 2, table6 + 3, 3, &len, DPMO_OVERLAPPING_BUFFERS);
    max_case("max out_len inside out", &spec, 2, out, 8, (size_t *)(void *)&out[7], DPMO_OVERLAPPING_BUFFERS);
    s = spec;
    max_case("max out_len aliases spec", &s, 2, out, 8, &s.columns, DPMO_OVERLAPPING_BUFFERS);
    max_case("max out aliases spec", &s, 2, &s.global, 1, &len, DPMO_OVERLAPPING_BUFFERS);
    max_case("max misaligned out_len", &spec, 2, out, 8, (size_t *)misalign(both), DPMO_INVALID_ARGUMENT);
    {
        /* The inputs live in static storage, below the stack: the huge output range (on the stack) then
         * overlaps none of them and the size check is what refuses it. */
        static double st_table[6] = {0.5, 1.0, 1.5, 0.25, 2.0, 0.75};
        static dpmo_sensitivity st_spec;
        static size_t st_len = SENTINEL_Z;
        st_spec = make_spec(DPMO_DELTA_TABLE, st_table, 6, 3, 4.0, 10);
        if ((uintptr_t)out > (uintptr_t)&st_spec && (uintptr_t)out > (uintptr_t)&st_len)
            max_case("max capacity overflows", &st_spec, 2, out, SIZE_MAX / 2, &st_len, DPMO_OVERFLOW);
    }
    s = make_cb_spec(&ctx, 4.0, 3);
    ctx.has_bad = 1; ctx.bad_r = 1; ctx.bad_t = 2;
    /* A bad callback value counts as Δ = 4 (the public rule): max(0.75, Δ) at t = 2, the rest unchanged
     * (rows {0.5, 1, 1.5} and {0.25, 2, 0.75}). */
    {
        const double bad_values[3] = {nan_(), -1.0, INFINITY};
        const char *const bad_names[3] = {"max callback NaN counts as Δ", "max callback -1 counts as Δ",
                                          "max callback INFINITY counts as Δ"};
        for (i = 0; i < 3; i++) {
            ctx.bad_value = bad_values[i];
            for (size_t j = 0; j < 8; j++) out[j] = SENTINEL_D;
            len = SENTINEL_Z;
            max_case(bad_names[i], &s, 2, out, 8, &len, DPMO_OK);
            CHECK_EQ(len, 3);
            CHECK_DEQ(out[0], 0.5);
            CHECK_DEQ(out[1], 2.0);
            CHECK_DEQ(out[2], 4.0);
            CHECK_DEQ(out[3], SENTINEL_D);
        }
        ctx.has_bad = 0;
        for (size_t j = 0; j < 8; j++) out[j] = SENTINEL_D;
        max_case("max callback valid, for contrast", &s, 2, out, 8, &len, DPMO_OK);
        CHECK_EQ(len, 3);
        CHECK_DEQ(out[2], 1.5);
        ctx.has_bad = 1;
        for (size_t j = 0; j < 8; j++) out[j] = SENTINEL_D;
        len = SENTINEL_Z;
    }
    s.callback = NULL;
    max_case("max null callback", &s, 2, out, 8, &len, DPMO_NULL_POINTER);
    /* n = 0: there is no candidate to take a maximum over; the API documents DPMO_EMPTY_INPUT for n = 0.
     * (Reported: currently returns DPMO_OK and writes δ̂ = 0 for every t, which would make every later
     * candidate's dampening use δ̂ = 0.) */
    ctx.has_bad = 0;
    s = make_cb_spec(&ctx, 4.0, 3);
    max_case("max_over_candidates n = 0 gives EMPTY_INPUT", &s, 0, out, 8, &len, DPMO_EMPTY_INPUT);

    /* With a callback or a shared spec no buffer bounds n: n is capped (the work is n · T evaluations).
     * Refused before a single evaluation. */
    {
        const uint64_t cap = (uint64_t)1 << 32; /* DPMO_MAX_UNBUFFERED_CANDIDATES, see test_header_constants */
        ctx = make_ctx(table6, 3);
        s = make_cb_spec(&ctx, 4.0, 3);
        if (sizeof(size_t) > 4) {
            max_case("max_over_candidates callback, n = cap + 1", &s, (size_t)(cap + 1), out, 8, &len,
                     DPMO_INVALID_ARGUMENT);
            max_case("max_over_candidates callback, n = 2 cap", &s, (size_t)(2 * cap), out, 8, &len,
                     DPMO_INVALID_ARGUMENT);
        }
        max_case("max_over_candidates callback, n = SIZE_MAX", &s, SIZE_MAX, out, 8, &len, DPMO_INVALID_ARGUMENT);
        TEST("max_over_candidates refuses a huge n before calling the callback");
        CHECK_EQ(ctx.calls, 0);
        s = make_spec(DPMO_DELTA_SHARED, table6, 3, 0, 4.0, 10);
        if (sizeof(size_t) > 4)
            max_case("max_over_candidates shared, n = cap + 1", &s, (size_t)(cap + 1), out, 8, &len,
                     DPMO_INVALID_ARGUMENT);
        max_case("max_over_candidates shared, n = SIZE_MAX", &s, SIZE_MAX, out, 8, &len, DPMO_INVALID_ARGUMENT);
        /* n = cap with a shared spec is accepted (T = 3 here, and a shared δ is the same for every r: the
         * result is the shared row itself). Skipped under a 32-bit size_t. */
    }
    s = make_spec(DPMO_DELTA_SHARED, table6, 3, 0, 4.0, 10);
    max_case("max_over_candidates shared n = 0 gives EMPTY_INPUT", &s, 0, out, 8, &len, DPMO_EMPTY_INPUT);
}

/* ------------------------------------------------------------------ dampen / local_dampening_probabilities */
static dpmo_status run_damp(int probs, const double *u, size_t n, const dpmo_sensitivity *spec, uint32_t kind,
                            double eps, double *out) {
    return probs ? dpmo_local_dampening_probabilities(u, n, spec, kind, eps, out)
                 : dpmo_dampen(u, n, spec, kind, out);
}

static void damp_case(const char *name, int probs, const double *u, size_t n, const dpmo_sensitivity *spec,
                      uint32_t kind, double eps, double *out, dpmo_status want) {
    TEST(name);
    guard(u, span(n, sizeof(double)));
    guard_spec(spec);
    if (spec) guard(spec->values, span(spec->values_len, sizeof(double)));
    guard(out, span(n, sizeof(double)));
    CHECK_STATUS(run_damp(probs, u, n, spec, kind, eps, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

/* A call on private data that the public rule sanitises: DPMO_OK, every output written and finite, and
 * bit-for-bit the output of the same call on the sanitised data (u_ref, spec_ref). When `contrast` is given, a
 * call on other valid data (u_c, spec_c) must differ: the comparison can see the value in question. */
static void damp_rule_case(const char *name, int probs, const double *u, size_t n, const dpmo_sensitivity *spec,
                           uint32_t kind, const double *u_ref, const dpmo_sensitivity *spec_ref, const double *u_c,
                           const dpmo_sensitivity *spec_c) {
    double got[4], want[4], other[4];
    size_t i;
    for (i = 0; i < 4; i++) got[i] = want[i] = other[i] = SENTINEL_D;
    TEST(name);
    CHECK_STATUS(run_damp(probs, u, n, spec, kind, 1.0, got), DPMO_OK);
    CHECK_STATUS(run_damp(probs, u_ref, n, spec_ref, kind, 1.0, want), DPMO_OK);
    for (i = 0; i < n; i++) CHECK(isfinite(got[i]));
    CHECK(memcmp(got, want, n * sizeof(double)) == 0);
    if (probs) CHECK(sums_to_one(got, n, 1e-12));
    if (u_c != NULL) {
        CHECK_STATUS(run_damp(probs, u_c, n, spec_c, kind, 1.0, other), DPMO_OK);
        CHECK(memcmp(got, other, n * sizeof(double)) != 0);
    }
}

static void test_dampen(void) {
    static const char *fn[2] = {"dampen", "local_dampening_probabilities"};
    static const char *dk[2] = {"plain", "shifted"};
    char label[200];
    int probs;
    uint32_t kind;
    for (probs = 0; probs < 2; probs++) {
        for (kind = 0; kind < 2; kind++) {
            double u[4] = {3.0, 1.0, 0.0, -2.0}, v4[4] = {1.0, 1.0, 2.0, 0.5}, out[4], table8[8];
            double huge[2] = {1e300, 0.0}, tiny_delta[2] = {1e-10, 1e-10}, both[8] = {0};
            dpmo_sensitivity spec = make_spec(DPMO_DELTA_PER_CANDIDATE, v4, 4, 0, 2.0, 6), s;
            cb_ctx ctx;
            size_t i;
            for (i = 0; i < 4; i++) out[i] = SENTINEL_D;
            for (i = 0; i < 8; i++) table8[i] = 1.0;
            ctx = make_ctx(table8, 2);
#define L(what) (snprintf(label, sizeof label, "%s %s %s", fn[probs], dk[kind], what), label)
            damp_case(L("null utilities"), probs, NULL, 4, &spec, kind, 1, out, DPMO_NULL_POINTER);
            damp_case(L("null spec"), probs, u, 4, NULL, kind, 1, out, DPMO_NULL_POINTER);
            damp_case(L("null out"), probs, u, 4, &spec, kind, 1, NULL, DPMO_NULL_POINTER);
            s = spec; s.values = NULL;
            damp_case(L("null values"), probs, u, 4, &s, kind, 1, out, DPMO_NULL_POINTER);
            damp_case(L("unknown dampening"), probs, u, 4, &spec, 2, 1, out, DPMO_INVALID_ARGUMENT);
            damp_case(L("unknown dampening max"), probs, u, 4, &spec, UINT32_MAX, 1, out, DPMO_INVALID_ARGUMENT);
            s = spec; s.values_len = 0;
            damp_case(L("n = 0"), probs, u, 0, &s, kind, 1, out, DPMO_EMPTY_INPUT);
            /* Utilities are private data, never a status (no free probing, issue 20): NaN counts as -DBL_MAX
             * (the lowest score), +-inf as +-DBL_MAX, and dampening clamps every utility to +-2^60 Δ. */
            {
                double ref[4], c[4];
                memcpy(ref, u, sizeof ref);
                memcpy(c, u, sizeof c);
                c[1] = -3.0;
                u[1] = nan_();
                ref[1] = -DBL_MAX;
                damp_rule_case(L("NaN utility: the lowest score, as -DBL_MAX"), probs, u, 4, &spec, kind, ref, &spec,
                               c, &spec);
                damp_case(L("NaN utility: written"), probs, u, 4, &spec, kind, 1, out, DPMO_OK);
                for (i = 0; i < 4; i++) if (i != 1) CHECK(out[1] < out[i] || (probs && out[1] == 0.0));
                if (probs) CHECK_DEQ(out[1], 0.0);
                ref[1] = -INFINITY;
                damp_rule_case(L("NaN utility scores as -inf"), probs, u, 4, &spec, kind, ref, &spec, NULL, NULL);
                u[1] = INFINITY;
                ref[1] = DBL_MAX;
                damp_rule_case(L("inf utility scores as DBL_MAX"), probs, u, 4, &spec, kind, ref, &spec, c, &spec);
                u[1] = -INFINITY;
                ref[1] = -DBL_MAX;
                damp_rule_case(L("-inf utility scores as -DBL_MAX"), probs, u, 4, &spec, kind, ref, &spec, c, &spec);
                u[1] = 1.0;
                for (i = 0; i < 4; i++) out[i] = SENTINEL_D;
            }
            /* No overflow from data: 1e300 / 1e-10 is past a double, the utility is clamped to 2^60 Δ first. */
            s = make_spec(DPMO_DELTA_PER_CANDIDATE, tiny_delta, 2, 0, 1e-10, 4);
            {
                double ref[2] = {ldexp(1e-10, 60), 0.0}, c[2] = {ldexp(1e-10, 59), 0.0};
                damp_rule_case(L("1e300 / 1e-10: clamped to 2^60 Δ, no overflow"), probs, huge, 2, &s, kind, ref, &s,
                               probs ? NULL : c, &s);
                huge[0] = -1e300;
                ref[0] = -ref[0];
                c[0] = -c[0];
                damp_rule_case(L("-1e300 / 1e-10: clamped to -2^60 Δ, no overflow"), probs, huge, 2, &s, kind, ref,
                               &s, probs ? NULL : c, &s);
                huge[0] = 1e300;
            }
            s = spec; s.kind = 4;
            damp_case(L("unknown delta kind"), probs, u, 4, &s, kind, 1, out, DPMO_INVALID_ARGUMENT);
            s = spec; s.global = 0.0;
            damp_case(L("global 0"), probs, u, 4, &s, kind, 1, out, DPMO_INVALID_SENSITIVITY);
            s = spec; s.global = nan_();
            damp_case(L("global NaN"), probs, u, 4, &s, kind, 1, out, DPMO_INVALID_SENSITIVITY);
            s = spec; s.t_max = 0;
            damp_case(L("t_max 0"), probs, u, 4, &s, kind, 1, out, DPMO_INVALID_ARGUMENT);
            s = spec; s.values_len = 3;
            damp_case(L("values length mismatch"), probs, u, 4, &s, kind, 1, out, DPMO_LENGTH_MISMATCH);
            s = make_spec(DPMO_DELTA_TABLE, table8, 8, 3, 2.0, 6);
            damp_case(L("table length mismatch"), probs, u, 4, &s, kind, 1, out, DPMO_LENGTH_MISMATCH);
            /* δ values are private data: a NaN, negative or infinite value (or one above Δ) counts as Δ = 2.
             * Candidate 0 (utility 3, δ = 1) so that δ matters to plain dampening too. */
            {
                const double bad[4] = {-0.5, nan_(), INFINITY, 5.0};
                const char *const names[4] = {"negative delta value counts as Δ", "NaN delta value counts as Δ",
                                              "infinite delta value counts as Δ", "delta value above Δ counts as Δ"};
                double vref[4] = {2.0, 1.0, 2.0, 0.5};
                dpmo_sensitivity ref = make_spec(DPMO_DELTA_PER_CANDIDATE, vref, 4, 0, 2.0, 6);
                for (i = 0; i < 4; i++) {
                    v4[0] = bad[i];
                    damp_rule_case(L(names[i]), probs, u, 4, &spec, kind, u, &ref, NULL, NULL);
                }
                v4[0] = 1.0;
                /* The contrast: the valid δ = 1 gives another output, so the comparison above sees δ. */
                damp_rule_case(L("delta value 1 is not Δ"), probs, u, 4, &spec, kind, u, &spec, u, &ref);
            }
            s = make_cb_spec(&ctx, 2.0, 6);
            s.callback = NULL;
            damp_case(L("null callback"), probs, u, 4, &s, kind, 1, out, DPMO_NULL_POINTER);
            s = make_cb_spec(&ctx, 2.0, 6);
            /* The last candidate fails, after the others were computed: still nothing written. */
            /* The last candidate's first callback value is bad: it counts as Δ = 2, exactly as a callback
             * returning 2 there (candidate 3, utility -2: δ(0) = 1 gives D = -2, Δ gives D = -1). */
            ctx.has_bad = 1; ctx.bad_r = 3; ctx.bad_t = 0;
            {
                const double bad[3] = {nan_(), -1.0, INFINITY};
                const char *const names[3] = {"callback NaN counts as Δ", "callback -1 counts as Δ",
                                              "callback INFINITY counts as Δ"};
                double table_ref[8];
                cb_ctx ctx_ref;
                dpmo_sensitivity s_ref, s_plain;
                memcpy(table_ref, table8, sizeof table_ref);
                table_ref[3 * 2 + 0] = 2.0;
                ctx_ref = make_ctx(table_ref, 2);
                s_ref = make_cb_spec(&ctx_ref, 2.0, 6);
                s_plain = make_spec(DPMO_DELTA_TABLE, table8, 8, 2, 2.0, 6);
                for (i = 0; i < 3; i++) {
                    ctx.bad_value = bad[i];
                    damp_rule_case(L(names[i]), probs, u, 4, &s, kind, u, &s_ref, u, &s_plain);
                }
            }
            ctx.has_bad = 0;
            damp_case(L("out == utilities"), probs, u, 4, &spec, kind, 1, u, DPMO_OVERLAPPING_BUFFERS);
            memcpy(both, u, sizeof u);
            damp_case(L("out overlaps utilities"), probs, both, 4, &spec, kind, 1, both + 2, DPMO_OVERLAPPING_BUFFERS);
            damp_case(L("out aliases values"), probs, u, 4, &spec, kind, 1, v4, DPMO_OVERLAPPING_BUFFERS);
            s = spec; s.values_len = 1;
            damp_case(L("out aliases spec"), probs, u, 1, &s, kind, 1, &s.global, DPMO_OVERLAPPING_BUFFERS);
            damp_case(L("misaligned out"), probs, u, 4, &spec, kind, 1, (double *)misalign(both), DPMO_INVALID_ARGUMENT);
            damp_case(L("n overflows"), probs, u, SIZE_MAX / 4, &spec, kind, 1, out, DPMO_OVERFLOW);
            if (probs) {
                damp_case(L("epsilon 0"), probs, u, 4, &spec, kind, 0.0, out, DPMO_INVALID_EPSILON);
                damp_case(L("epsilon -1"), probs, u, 4, &spec, kind, -1.0, out, DPMO_INVALID_EPSILON);
                damp_case(L("epsilon NaN"), probs, u, 4, &spec, kind, nan_(), out, DPMO_INVALID_EPSILON);
                damp_case(L("epsilon inf"), probs, u, 4, &spec, kind, INFINITY, out, DPMO_INVALID_EPSILON);
            }
            TEST(L("ok"));
            CHECK_STATUS(run_damp(probs, u, 4, &spec, kind, 1.0, out), DPMO_OK);
            for (i = 0; i < 4; i++) CHECK(isfinite(out[i]));
            if (probs) CHECK(sums_to_one(out, 4, 1e-12));
#undef L
        }
    }
}

/* ------------------------------------------------------------------ select_local_dampening */
static void ld_case(const char *name, dpmo_rng *rng, const double *u, size_t n, const dpmo_sensitivity *spec,
                    uint32_t damp, uint32_t sel, double eps, double *scratch, size_t scratch_len, size_t *perm,
                    size_t perm_len, size_t *out, dpmo_budget *budget, double charge, dpmo_status want) {
    dpmo_budget before;
    TEST(name);
    memset(&before, 0, sizeof before);
    guard(rng, sizeof *rng);
    guard(u, span(n, sizeof(double)));
    guard_spec(spec);
    if (spec) guard(spec->values, span(spec->values_len, sizeof(double)));
    guard(out, sizeof *out);
    if (budget != NULL && charge == 0.0) guard(budget, sizeof *budget);
    if (budget != NULL && charge != 0.0) memcpy(&before, budget, sizeof before);
    CHECK_STATUS(dpmo_select_local_dampening(rng, u, n, spec, damp, sel, eps, scratch, scratch_len, perm, perm_len,
                                             out, budget),
                 want);
    if (budget != NULL && charge != 0.0) CHECK_DEQ(budget->spent, before.spent + charge);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

/* A selection on private data that the public rule sanitises: DPMO_OK, the index written, the budget charged
 * exactly ε, and from the same generator state the same index and the same final state as the call on the
 * sanitised data (u_ref, spec_ref): the selection is the one on the sanitised data, so its distribution is. */
static void ld_rule_case(const char *name, const dpmo_rng *rng, const double *u, size_t n,
                         const dpmo_sensitivity *spec, const double *u_ref, const dpmo_sensitivity *spec_ref,
                         uint32_t damp, uint32_t sel, double eps, double *scratch, size_t scratch_len, size_t *perm,
                         size_t perm_len, int with_budget) {
    dpmo_rng a = *rng, b = *rng;
    dpmo_budget ba = make_budget(10.0, 0.0), bb = make_budget(10.0, 0.0);
    size_t out_a = SENTINEL_Z, out_b = SENTINEL_Z;
    TEST(name);
    CHECK_STATUS(dpmo_select_local_dampening(&a, u, n, spec, damp, sel, eps, scratch, scratch_len, perm, perm_len,
                                             &out_a, with_budget ? &ba : NULL),
                 DPMO_OK);
    CHECK_STATUS(dpmo_select_local_dampening(&b, u_ref, n, spec_ref, damp, sel, eps, scratch, scratch_len, perm,
                                             perm_len, &out_b, with_budget ? &bb : NULL),
                 DPMO_OK);
    CHECK(out_a < n);
    CHECK_EQ(out_a, out_b);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    CHECK(memcmp(&a, rng, sizeof a) != 0);
    if (with_budget) {
        CHECK_DEQ(ba.spent, eps);
        CHECK_DEQ(ba.total, 10.0);
    }
}

static void test_select_local_dampening(void) {
    char label[240];
    uint32_t s10, damp;
    for (s10 = 0; s10 < 10; s10++) {
        const uint32_t sel = (s10 % 5) | (s10 >= 5 ? (uint32_t)DPMO_FLOAT : 0u);
        const int unsupported = sel == DPMO_SELECTOR_NOISY_MAX_LAPLACE;
        for (damp = 0; damp < 2; damp++) {
            dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 11), bad;
            dpmo_budget bud = make_budget(10.0, 0.0), *B = &bud;
            double u[4] = {3.0, 1.0, 0.0, -2.0}, v4[4] = {1.0, 1.0, 2.0, 0.5}, scratch[16], table8[8], both[32] = {0};
            const double v5[5] = {1.0, 1.0, 2.0, 0.5, 1.0};
            double huge[2] = {1e300, 0.0}, tiny[2] = {1e-10, 1e-10};
            size_t perm[8], out = SENTINEL_Z, i, VL, IL, PL;
            dpmo_sensitivity spec = make_spec(DPMO_DELTA_PER_CANDIDATE, v4, 4, 0, 2.0, 6), s;
            cb_ctx ctx;
            const int pf = needs_perm(sel);
            /* Laplace without DPMO_FLOAT: the helper refuses it too; every valid call is UNSUPPORTED. */
            const dpmo_status OKS = unsupported ? DPMO_UNSUPPORTED : DPMO_OK;
            const double C = unsupported ? 0.0 : 0.5; /* the charge of a data error */
            if (unsupported) {
                size_t v = SENTINEL_Z, ix = SENTINEL_Z;
                TEST("local_dampening_scratch_len laplace exact");
                CHECK_STATUS(dpmo_local_dampening_scratch_len(4, 1, sel, &v, &ix), DPMO_UNSUPPORTED);
                CHECK_EQ(v, SENTINEL_Z);
                CHECK_EQ(ix, SENTINEL_Z);
                VL = 16;
                IL = 4;
            } else {
                VL = ld_values_len(4, 1, sel);
                IL = ld_indices_len(4, 1, sel);
            }
            /* The helper's lengths suffice for one selection and for top-k (4n doubles, n indices plus n for a
             * permutation); one selection needs only 2n doubles and, for a permutation, n indices. */
            TEST("local_dampening_scratch_len: 4n doubles, n (+ n for a permutation) indices");
            CHECK_EQ(VL, 16);
            CHECK_EQ(IL, needs_perm(sel & ~(uint32_t)DPMO_FLOAT) ? 8 : 4);
            PL = IL;
            for (i = 0; i < 16; i++) scratch[i] = SENTINEL_D;
            for (i = 0; i < 8; i++) perm[i] = SENTINEL_Z;
            for (i = 0; i < 8; i++) table8[i] = 1.0;
            ctx = make_ctx(table8, 2);
#define L(what) (snprintf(label, sizeof label, "select_local_dampening %s %s %s", selector_name(sel), damp ? "shifted" : "plain", what), label)
#define FRESH (bud = make_budget(10.0, 0.0), B)
            ld_case(L("null rng"), NULL, u, 4, &spec, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_NULL_POINTER);
            ld_case(L("null utilities"), &rng, NULL, 4, &spec, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_NULL_POINTER);
            ld_case(L("null spec"), &rng, u, 4, NULL, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_NULL_POINTER);
            ld_case(L("null scratch"), &rng, u, 4, &spec, damp, sel, 1, NULL, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_NULL_POINTER);
            ld_case(L("null out"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL, perm, PL, NULL, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_NULL_POINTER);
            ld_case(L("null perm"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL, NULL, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : pf ? DPMO_NULL_POINTER : DPMO_OK);
            out = SENTINEL_Z;
            ld_case(L("null perm, length 0"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL, NULL, 0, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : pf ? DPMO_SCRATCH_TOO_SMALL : DPMO_OK);
            out = SENTINEL_Z;
            ld_case(L("unknown selector"), &rng, u, 4, &spec, damp, 5, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    DPMO_INVALID_ARGUMENT);
            ld_case(L("unknown selector 5|float"), &rng, u, 4, &spec, damp, 5 | DPMO_FLOAT, 1, scratch, VL, perm, PL,
                    &out, FRESH, 0, DPMO_INVALID_ARGUMENT);
            ld_case(L("unknown flag bit 0x400"), &rng, u, 4, &spec, damp, sel | 0x400u, 1, scratch, VL, perm, PL,
                    &out, FRESH, 0, DPMO_INVALID_ARGUMENT);
            ld_case(L("unknown dampening"), &rng, u, 4, &spec, 2, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    DPMO_INVALID_ARGUMENT);
            ld_case(L("scratch of n doubles"), &rng, u, 4, &spec, damp, sel, 1, scratch, 3, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_SCRATCH_TOO_SMALL);
            if (!is_float(sel))
                ld_case(L("scratch one short of 2n"), &rng, u, 4, &spec, damp, sel, 1, scratch, 7, perm, PL, &out,
                        FRESH, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_SCRATCH_TOO_SMALL);
            ld_case(L("scratch of 2n doubles and n indices suffice"), &rng, u, 4, &spec, damp, sel, 1, scratch, 8, perm,
                    4, &out, NULL, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_OK);
            out = SENTINEL_Z;
            ld_case(L("perm one short of n"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL, perm, 3, &out, NULL, 0,
                    unsupported ? DPMO_UNSUPPORTED : pf ? DPMO_SCRATCH_TOO_SMALL : DPMO_OK);
            out = SENTINEL_Z;
            ld_case(L("epsilon 0"), &rng, u, 4, &spec, damp, sel, 0.0, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_EPSILON);
            ld_case(L("epsilon NaN"), &rng, u, 4, &spec, damp, sel, nan_(), scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_EPSILON);
            ld_case(L("epsilon -inf"), &rng, u, 4, &spec, damp, sel, -INFINITY, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_EPSILON);
            ld_case(L("epsilon inf"), &rng, u, 4, &spec, damp, sel, INFINITY, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_EPSILON);
            s = spec; s.values_len = 0;
            ld_case(L("n = 0"), &rng, u, 0, &s, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_EMPTY_INPUT);
            memset(&bad, 0, sizeof bad);
            ld_case(L("zeroed rng"), &bad, u, 4, &spec, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_GENERATOR);
            bud = make_budget(1.0, 0.75);
            ld_case(L("budget short"), &rng, u, 4, &spec, damp, sel, 0.5, scratch, VL, perm, PL, &out, B, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_BUDGET_EXHAUSTED);
            ld_case(L("budget overlaps the spec"), &rng, u, 4, &spec, damp, sel, 0.5, scratch, VL, perm, PL, &out,
                    (dpmo_budget *)(void *)&spec, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            ld_case(L("budget inside scratch"), &rng, u, 4, &spec, damp, sel, 0.5, scratch, VL, perm, PL, &out,
                    (dpmo_budget *)(void *)&scratch[2], 0, unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            s = spec; s.global = INFINITY;
            ld_case(L("global inf"), &rng, u, 4, &s, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_SENSITIVITY);
            s = make_spec(DPMO_DELTA_PER_CANDIDATE, v5, 5, 0, 2.0, 6);
            ld_case(L("length mismatch"), &rng, u, 4, &s, damp, sel, 1, scratch, VL, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_LENGTH_MISMATCH);

            /* Private data is never a status (no free probing, issue 20): a NaN utility counts as -DBL_MAX, a
             * NaN, negative or infinite δ value as Δ; the call selects, charges ε and equals the call on the
             * sanitised data. Argument errors and the budget still decide the status first. */
            {
                double uref[4] = {3.0, 1.0, 0.0, -2.0}, vref[4] = {1.0, 1.0, 2.0, 0.5};
                dpmo_sensitivity sref = make_spec(DPMO_DELTA_PER_CANDIDATE, vref, 4, 0, 2.0, 6);
                u[0] = nan_();
                uref[0] = -DBL_MAX;
                if (unsupported)
                    ld_case(L("NaN utility"), &rng, u, 4, &spec, damp, sel, 0.5, scratch, VL, perm, PL, &out, FRESH,
                            0, DPMO_UNSUPPORTED);
                else
                    ld_rule_case(L("NaN utility: selected as -DBL_MAX, charged"), &rng, u, 4, &spec, uref, &spec,
                                 damp, sel, 0.5, scratch, VL, perm, PL, 1);
                ld_case(L("NaN utility and scratch short: SCRATCH_TOO_SMALL, free"), &rng, u, 4, &spec, damp, sel, 0.5,
                        scratch, 3, perm, PL, &out, FRESH, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_SCRATCH_TOO_SMALL);
                bud = make_budget(1.0, 0.75);
                ld_case(L("NaN utility and budget short: BUDGET_EXHAUSTED"), &rng, u, 4, &spec, damp, sel, 0.5,
                        scratch, VL, perm, PL, &out, B, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_BUDGET_EXHAUSTED);
                u[0] = 3.0;
                /* A dampened score of 1e310 (1e300 / 1e-10): the utility is clamped to 2^60 Δ, in every
                 * arithmetic; the selection picks the clear winner. */
                s = make_spec(DPMO_DELTA_PER_CANDIDATE, tiny, 2, 0, 1e-10, 3);
                ld_case(L("dampened score 1e310: no overflow, charged"), &rng, huge, 2, &s, damp, sel, 0.5, scratch,
                        VL, perm, PL, &out, FRESH, C, OKS);
                if (!unsupported) CHECK_EQ(out, 0);
                out = SENTINEL_Z;
                if (!unsupported) {
                    double href[2] = {ldexp(1e-10, 60), 0.0};
                    ld_rule_case(L("dampened score 1e310 is the one of 2^60 Δ"), &rng, huge, 2, &s, href, &s, damp,
                                 sel, 0.5, scratch, VL, perm, PL, 1);
                }
                /* A bad δ value read from a table is data like the same value from a callback (a δ table is
                 * computed from the private data, e.g. dpmo_egodensity_delta_table). Candidate 0 (utility 3). */
                {
                    const double bad[3] = {-0.5, nan_(), INFINITY};
                    const char *const names[3] = {"negative delta value in a table counts as Δ, charged",
                                                  "NaN delta value in a table counts as Δ, charged",
                                                  "infinite delta value in a table counts as Δ, charged"};
                    vref[0] = 2.0;
                    for (i = 0; i < 3; i++) {
                        v4[0] = bad[i];
                        if (unsupported)
                            ld_case(L(names[i]), &rng, u, 4, &spec, damp, sel, 0.5, scratch, VL, perm, PL, &out,
                                    FRESH, 0, DPMO_UNSUPPORTED);
                        else
                            ld_rule_case(L(names[i]), &rng, u, 4, &spec, u, &sref, damp, sel, 0.5, scratch, VL, perm,
                                         PL, 1);
                    }
                    v4[0] = 1.0;
                }
            }
            {
                /* A callback's bad value at (2, 0) counts as Δ = 2, as a callback answering 2 there. */
                double table_ref[8];
                cb_ctx ctx_ref;
                dpmo_sensitivity s_ref;
                const double bad[3] = {nan_(), -1.0, INFINITY};
                const char *const names[3] = {"callback NaN counts as Δ, charged", "callback -1 counts as Δ, charged",
                                              "callback INFINITY counts as Δ, charged"};
                memcpy(table_ref, table8, sizeof table_ref);
                table_ref[2 * 2 + 0] = 2.0;
                ctx_ref = make_ctx(table_ref, 2);
                s_ref = make_cb_spec(&ctx_ref, 2.0, 4);
                s = make_cb_spec(&ctx, 2.0, 4);
                ctx.has_bad = 1; ctx.bad_r = 2; ctx.bad_t = 0;
                for (i = 0; i < 3; i++) {
                    ctx.bad_value = bad[i];
                    if (unsupported)
                        ld_case(L(names[i]), &rng, u, 4, &s, damp, sel, 0.5, scratch, VL, perm, PL, &out, FRESH, 0,
                                DPMO_UNSUPPORTED);
                    else
                        ld_rule_case(L(names[i]), &rng, u, 4, &s, u, &s_ref, damp, sel, 0.5, scratch, VL, perm, PL,
                                     1);
                }
                ctx.bad_value = nan_();
                if (!unsupported)
                    ld_rule_case(L("callback NaN, no budget"), &rng, u, 4, &s, u, &s_ref, damp, sel, 0.5, scratch,
                                 VL, perm, PL, 0);
                /* The budget is public: a budget that cannot pay decides the status, whatever the callback says
                 * (and before it is asked). */
                bud = make_budget(1.0, 0.75);
                {
                    const unsigned long calls = ctx.calls;
                    ld_case(L("callback NaN, budget short: BUDGET_EXHAUSTED, free"), &rng, u, 4, &s, damp, sel, 0.5,
                            scratch, VL, perm, PL, &out, B, 0,
                            unsupported ? DPMO_UNSUPPORTED : DPMO_BUDGET_EXHAUSTED);
                    CHECK_EQ(ctx.calls, calls);
                }
                bud = make_budget(1.0, 1.0);
                ld_case(L("callback NaN, budget spent: BUDGET_EXHAUSTED, free"), &rng, u, 4, &s, damp, sel, 1e-300,
                        scratch, VL, perm, PL, &out, B, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_BUDGET_EXHAUSTED);
                /* A short permutation scratch is an argument error, reported whatever the data, and free. */
                ld_case(L("callback NaN and perm short"), &rng, u, 4, &s, damp, sel, 0.5, scratch, VL, perm, 3, &out,
                        FRESH, pf ? 0.0 : C, unsupported ? DPMO_UNSUPPORTED : pf ? DPMO_SCRATCH_TOO_SMALL : DPMO_OK);
                if (!unsupported && !pf) CHECK(out < 4);
                out = SENTINEL_Z;
                ctx.has_bad = 0;
            }

            ld_case(L("scratch == utilities"), &rng, u, 4, &spec, damp, sel, 1, u, 4, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            ld_case(L("scratch aliases values"), &rng, u, 4, &spec, damp, sel, 1, v4, 4, perm, PL, &out, FRESH, 0,
                    unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            ld_case(L("scratch aliases rng"), &rng, u, 4, &spec, damp, sel, 1, (double *)(void *)&rng, 8, perm, PL,
                    &out, FRESH, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            ld_case(L("out_index inside scratch"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL, perm, PL,
                    (size_t *)(void *)&scratch[5], FRESH, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            ld_case(L("out_index aliases rng"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL, perm, PL,
                    (size_t *)(void *)&rng, FRESH, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            s = spec;
            ld_case(L("out_index aliases spec"), &rng, u, 4, &s, damp, sel, 1, scratch, VL, perm, PL, &s.t_max, FRESH,
                    0, unsupported ? DPMO_UNSUPPORTED : DPMO_OVERLAPPING_BUFFERS);
            if (pf) {
                ld_case(L("perm overlaps scratch"), &rng, u, 4, &spec, damp, sel, 1, both, VL,
                        (size_t *)(void *)(both + VL - 1), IL, &out, FRESH, 0, DPMO_OVERLAPPING_BUFFERS);
                ld_case(L("perm aliases utilities"), &rng, u, 4, &spec, damp, sel, 1, scratch, VL,
                        (size_t *)(void *)u, 4, &out, FRESH, 0, DPMO_OVERLAPPING_BUFFERS);
            }
            ld_case(L("misaligned scratch"), &rng, u, 4, &spec, damp, sel, 1, (double *)misalign(both), VL, perm, PL,
                    &out, FRESH, 0, unsupported ? DPMO_UNSUPPORTED : DPMO_INVALID_ARGUMENT);
            {
                dpmo_rng before = rng;
                ld_case(L("ok, charged"), &rng, u, 4, &spec, damp, sel, 0.5, scratch, VL, perm, PL, &out, FRESH, C,
                        OKS);
                if (!unsupported) {
                    CHECK(out < 4);
                    CHECK(memcmp(&before, &rng, sizeof rng) != 0);
                }
                out = SENTINEL_Z;
            }
#undef FRESH
#undef L
        }
    }
}

/* ------------------------------------------------------------------ no free probing (issue 20) */
/* The attack: an analyst who may choose ε calls a selection with a tiny ε (5e-324, 4.9e-324 in the issue's
 * PostgreSQL run) on the data and reads the status: at the commit before this rule, a NaN record or a bad δ
 * value returned a data-dependent error, charged only that tiny ε, so 6 probes located a NaN record among 40.
 * Now neighbouring inputs D (valid) and D' (one record with a NaN utility, a NaN δ or a negative δ) must give
 * the same status, the same charge and the same generator consumption; only the (ε-DP) index may differ. */
static void test_no_free_probing(void) {
    static const char *const NAME =
        "no free probing: a NaN utility, a NaN δ and a negative δ give DPMO_OK and a charge, exactly like valid data";
    const double epsilons[2] = {0.5, 4.9e-324};
    char label[400];
    int r, src, variant, e;
    uint32_t damp;
    for (r = 0; r < N_RUNNABLE; r++) {
        const uint32_t sel = RUNNABLE[r];
        for (damp = 0; damp < 2; damp++)
            for (src = 0; src < 3; src++)
                for (variant = 0; variant < 3; variant++)
                    for (e = 0; e < 2; e++) {
                        const double eps = epsilons[e];
                        double u[4] = {3.0, 1.0, 0.0, -2.0}, u2[4];
                        double v[4] = {1.0, 1.0, 2.0, 0.5}, v2[4];
                        double tab[8] = {1.0, 0.5, 1.0, 0.5, 2.0, 1.0, 0.5, 0.25}, tab2[8];
                        double scratch[16];
                        size_t perm[8], out = SENTINEL_Z, out2 = SENTINEL_Z;
                        dpmo_rng a = make_rng(DPMO_RNG_CHACHA20, 90), b = a;
                        dpmo_budget ba = make_budget(1.0, 0.25), bb = ba;
                        dpmo_sensitivity s, s2;
                        cb_ctx ca, cb;
                        dpmo_status st, st2;
                        const double bad = variant == 2 ? -1.0 : nan_();
                        memcpy(u2, u, sizeof u);
                        memcpy(v2, v, sizeof v);
                        memcpy(tab2, tab, sizeof tab);
                        if (variant == 0) u2[1] = nan_();
                        if (src == 0) {
                            if (variant) v2[1] = bad;
                            s = make_spec(DPMO_DELTA_PER_CANDIDATE, v, 4, 0, 2.0, 6);
                            s2 = make_spec(DPMO_DELTA_PER_CANDIDATE, v2, 4, 0, 2.0, 6);
                        } else if (src == 1) {
                            if (variant) tab2[1 * 2 + 0] = bad;
                            s = make_spec(DPMO_DELTA_TABLE, tab, 8, 2, 2.0, 6);
                            s2 = make_spec(DPMO_DELTA_TABLE, tab2, 8, 2, 2.0, 6);
                        } else {
                            ca = make_ctx(tab, 2);
                            cb = make_ctx(tab, 2);
                            if (variant) cb.has_bad = 1, cb.bad_r = 1, cb.bad_t = 0, cb.bad_value = bad;
                            s = make_cb_spec(&ca, 2.0, 6);
                            s2 = make_cb_spec(&cb, 2.0, 6);
                        }
                        snprintf(label, sizeof label, "%s [%s, %s, %s, %s, eps %g]", NAME, selector_name(sel),
                                 damp ? "shifted" : "plain",
                                 src == 0 ? "per-candidate" : src == 1 ? "table" : "callback",
                                 variant == 0 ? "NaN utility" : variant == 1 ? "NaN delta" : "negative delta", eps);
                        TEST(label);
                        st = dpmo_select_local_dampening(&a, u, 4, &s, damp, sel, eps, scratch, 16, perm, 8, &out,
                                                         &ba);
                        st2 = dpmo_select_local_dampening(&b, u2, 4, &s2, damp, sel, eps, scratch, 16, perm, 8,
                                                          &out2, &bb);
                        CHECK_STATUS(st2, st);
                        CHECK_STATUS(st, DPMO_OK);
                        CHECK(out < 4 && out2 < 4);
                        CHECK(memcmp(&ba, &bb, sizeof ba) == 0);
                        /* ε is charged, rounded up to the next double when 0.25 + ε is inexact (the tiny ε). */
                        CHECK(bb.spent > 0.25 && bb.spent >= 0.25 + eps && bb.spent <= nextafter(0.25 + eps, 1.0));
                        if (e == 0) CHECK_DEQ(bb.spent, 0.75);
                        CHECK_DEQ(bb.total, 1.0);
                        CHECK(memcmp(&a, &b, sizeof a) == 0); /* the same generator consumption */
                        /* A budget that cannot pay: the same (public) status on both, nothing charged. */
                        ba = make_budget(1.0, 1.0);
                        bb = ba;
                        out = out2 = SENTINEL_Z;
                        st = dpmo_select_local_dampening(&a, u, 4, &s, damp, sel, 0.5, scratch, 16, perm, 8, &out, &ba);
                        st2 = dpmo_select_local_dampening(&b, u2, 4, &s2, damp, sel, 0.5, scratch, 16, perm, 8,
                                                          &out2, &bb);
                        CHECK_STATUS(st2, st);
                        CHECK_STATUS(st, DPMO_BUDGET_EXHAUSTED);
                        CHECK(out == SENTINEL_Z && out2 == SENTINEL_Z);
                        CHECK(memcmp(&ba, &bb, sizeof ba) == 0 && ba.spent == 1.0);
                        CHECK(memcmp(&a, &b, sizeof a) == 0);
                    }
    }
    /* The checker can fail: the same comparison on a deliberately invalid argument (ε = -1) on one side only
     * gives different statuses and charges. */
    TEST("no free probing: the comparison sees a status that differs");
    {
        double u[4] = {3.0, 1.0, 0.0, -2.0}, v[4] = {1.0, 1.0, 2.0, 0.5}, scratch[16];
        size_t perm[8], out = SENTINEL_Z;
        dpmo_rng a = make_rng(DPMO_RNG_CHACHA20, 90), b = a;
        dpmo_budget ba = make_budget(1.0, 0.25), bb = ba;
        dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, v, 4, 0, 2.0, 6);
        dpmo_status st = dpmo_select_local_dampening(&a, u, 4, &s, 0, DPMO_SELECTOR_EXPONENTIAL, 0.5, scratch, 16,
                                                     perm, 8, &out, &ba);
        dpmo_status st2 = dpmo_select_local_dampening(&b, u, 4, &s, 0, DPMO_SELECTOR_EXPONENTIAL, -1.0, scratch, 16,
                                                      perm, 8, &out, &bb);
        CHECK(st != st2);
        CHECK(memcmp(&ba, &bb, sizeof ba) != 0);
        CHECK(memcmp(&a, &b, sizeof a) != 0);
    }
}

int main(void) {
    test_version_and_messages();
    test_header_constants();
    test_rng_init();
    test_sample();
    test_selectors();
    test_exponential_probabilities();
    test_sensitivity_value();
    test_max_over_candidates();
    test_dampen();
    test_select_local_dampening();
    test_no_free_probing();
    return HARNESS_FINISH();
}
