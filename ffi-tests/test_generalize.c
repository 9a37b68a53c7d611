/*
 * The private data generalization C API (Fouad et al.): hierarchies, chain products, counts, scores, the
 * exact optima, the parameters of Algorithm 3 and the release.
 *
 * Values: a VGH of the shape of the paper's Fig. 2 (city -> state -> any) with an age hierarchy, hand-computed
 * chain product, counts, utilities, risks, Lagrangian values and optima; the smallest t of condition (10).
 * Errors: every status each function can produce; for every failing call nothing written to the outputs, the
 * generator unchanged, and the budget unchanged except after a failure caused by the records (charged then).
 */
#include "common.h"

/* city: 0 = any, 1 = Indiana, 2 = Illinois, 3 = West Lafayette, 4 = Lafayette, 5 = Indianapolis,
 * 6 = Chicago, 7 = Springfield. age: 0 = any, 1 = under 40, 2 = 40+, 3 = 20s, 4 = 30s, 5 = 40s. */
static const uint32_t CITY[8] = {0, 0, 0, 1, 1, 1, 2, 2};
static const uint32_t AGE[6] = {0, 0, 0, 1, 1, 2};
static const uint32_t DB[12] = {3, 4, 4, 4, 3, 3, 6, 4, 5, 5, 0, 3};
static const uint32_t A[2] = {3, 4};
static const uint32_t A_PLUS[18] = {3, 4, 3, 1, 3, 0, 1, 4, 1, 1, 1, 0, 0, 4, 0, 1, 0, 0};
static const uint64_t RHO[9] = {1, 2, 2, 2, 3, 4, 3, 5, 6};

static dpmo_hierarchy H[2];
static uint32_t LEAF[14];

static void setup(void) {
    H[0].parents = CITY;
    H[0].n = 8;
    H[1].parents = AGE;
    H[1].n = 6;
}

static void fill_u32(uint32_t *p, size_t n, uint32_t v) {
    size_t i;
    for (i = 0; i < n; i++) p[i] = v;
}

/* ================================================================== hierarchies */
static void test_lattice(void) {
    size_t len = 0, n = 0;
    uint32_t scratch[64];
    dpmo_hierarchy bad[2];
    uint32_t forest[3] = {0, 1, 0}, cycle[3] = {0, 2, 1}, out_of_range[3] = {0, 0, 7}, path[17];
    size_t i;
    for (i = 0; i < 17; i++) path[i] = i == 0 ? 0 : (uint32_t)(i - 1);

    TEST("lattice scratch length and N");
    CHECK_STATUS(dpmo_lattice_scratch_len(H, 2, &len), DPMO_OK);
    CHECK_EQ(len, 14);
    CHECK_STATUS(dpmo_lattice_check(H, 2, LEAF, 14, &n), DPMO_OK);
    CHECK_EQ(n, 9);

    TEST("lattice errors");
    n = SENTINEL_Z;
    CHECK_STATUS(dpmo_lattice_check(H, 0, LEAF, 14, &n), DPMO_EMPTY_INPUT);
    CHECK_STATUS(dpmo_lattice_check(H, 17, LEAF, 14, &n), DPMO_CAPACITY_EXCEEDED);
    CHECK_STATUS(dpmo_lattice_check(NULL, 2, LEAF, 14, &n), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_lattice_check(H, 2, NULL, 14, &n), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_lattice_check(H, 2, LEAF, 14, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_lattice_check(H, 2, (uint32_t *)misalign(scratch), 14, &n), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_lattice_check(H, 2, LEAF, 13, &n), DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(dpmo_lattice_scratch_len(H, 2, NULL), DPMO_NULL_POINTER);
    bad[0] = H[0];
    bad[1].parents = forest;
    bad[1].n = 3;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_INVALID_ARGUMENT);
    bad[1].parents = cycle;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_INVALID_ARGUMENT);
    bad[1].parents = out_of_range;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_INVALID_ARGUMENT);
    bad[1].parents = path;
    bad[1].n = 17;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_CAPACITY_EXCEEDED);
    bad[1].n = 16;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_OK);
    CHECK_EQ(n, 3 * 16);
    bad[1].n = 0;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_EMPTY_INPUT);
    bad[1].parents = NULL;
    bad[1].n = 3;
    CHECK_STATUS(dpmo_lattice_check(bad, 2, scratch, 64, &n), DPMO_NULL_POINTER);
    /* the leaf scratch may not overlap a parent array */
    CHECK_STATUS(dpmo_lattice_check(H, 2, (uint32_t *)CITY, 14, &n), DPMO_OVERLAPPING_BUFFERS);
    CHECK_EQ(n, 48);
}

/* ================================================================== chain product and counts */
static void test_chain_product_and_counts(void) {
    uint32_t out[18];
    uint64_t counts[9];
    size_t count = SENTINEL_Z, i;
    uint32_t bad_record[2] = {8, 0};

    TEST("chain product of (West Lafayette, 30s)");
    CHECK_STATUS(dpmo_chain_product(H, 2, LEAF, 14, A, out, 18, &count), DPMO_OK);
    CHECK_EQ(count, 9);
    for (i = 0; i < 18; i++) CHECK_EQ(out[i], A_PLUS[i]);

    TEST("counts over the chain product");
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, DB, 6, counts, 9, &count), DPMO_OK);
    CHECK_EQ(count, 9);
    for (i = 0; i < 9; i++) CHECK_EQ(counts[i], RHO[i]);
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, NULL, 0, counts, 9, &count), DPMO_OK);
    for (i = 0; i < 9; i++) CHECK_EQ(counts[i], 0);

    TEST("chain product and counts: errors write nothing");
    fill_u32(out, 18, 99);
    count = SENTINEL_Z;
    guard(out, sizeof out);
    guard(&count, sizeof count);
    CHECK_STATUS(dpmo_chain_product(H, 2, LEAF, 14, A, out, 17, &count), DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_chain_product(H, 2, LEAF, 14, bad_record, out, 18, &count), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_chain_product(H, 2, LEAF, 14, NULL, out, 18, &count), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_chain_product(H, 2, LEAF, 14, A, out, 18, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_chain_product(H, 2, LEAF, 14, A, LEAF, 14, &count), DPMO_OVERLAPPING_BUFFERS);
    CHECK(guards_intact());
    guard(counts, sizeof counts);
    guard(&count, sizeof count);
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, DB, 6, counts, 8, &count), DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, bad_record, 1, counts, 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, NULL, 3, counts, 9, &count), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, DB, (size_t)-1, counts, 9, &count), DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_generalized_counts(H, 2, LEAF, 14, A, DB, 6, (uint64_t *)misalign(counts), 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK(guards_intact());
}

/* ================================================================== scores and optima */
static void test_scores_and_optima(void) {
    const double w[2] = {2.0, 1.0}, neg[2] = {2.0, -1.0}, nan_w[2] = {2.0, NAN};
    const double u_rec[9] = {2.0, 1.5, 4.0 / 3.0, 4.0 / 3.0, 5.0 / 6.0, 2.0 / 3.0, 1.2, 0.7, 8.0 / 15.0};
    const double phi1[9] = {3, 3, 2, 3, 3, 2, 1, 1, 0};
    const uint32_t lonely[2] = {6, 4};
    double u[9], r[9], f[9];
    uint64_t counts[9];
    size_t count = 0, i, index = SENTINEL_Z;
    bool found = false;

    TEST("utility, risk and Lagrangian over the chain product (Model I)");
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, DPMO_UTILITY_RECIPROCAL, 1.0, 2, 0.5, counts, u,
                                        r, f, 9, &count),
                 DPMO_OK);
    CHECK_EQ(count, 9);
    for (i = 0; i < 9; i++) {
        double phi = phi1[i] > 0.5 ? phi1[i] : 0.5;
        CHECK_EQ(counts[i], RHO[i]);
        CHECK_NEAR(u[i], u_rec[i], 1e-15);
        CHECK_DEQ(r[i], phi1[i] / (double)RHO[i]);
        CHECK_NEAR(f[i], (double)RHO[i] / phi + u_rec[i] * u_rec[i], 1e-14);
    }

    TEST("Model II (NULL weights): risk 1/rho");
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, NULL, DPMO_UTILITY_LOG_RATIO, 0.0, 1, 1.0, counts,
                                        u, r, f, 9, &count),
                 DPMO_OK);
    for (i = 0; i < 9; i++) CHECK_DEQ(r[i], 1.0 / (double)RHO[i]);
    CHECK_NEAR(u[0], log(5.0) + log(3.0), 1e-15);
    CHECK_DEQ(u[8], 0.0);
    CHECK_NEAR(f[0], u[0], 1e-15);

    TEST("scores: errors write nothing");
    guard(u, sizeof u);
    guard(r, sizeof r);
    guard(f, sizeof f);
    guard(counts, sizeof counts);
    guard(&count, sizeof count);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, neg, 0, 1.0, 2, 0.5, counts, u, r, f, 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, nan_w, 0, 1.0, 2, 0.5, counts, u, r, f, 9, &count),
                 DPMO_NON_FINITE_INPUT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 7, 1.0, 2, 0.5, counts, u, r, f, 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 0, -1.0, 2, 0.5, counts, u, r, f, 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 0, NAN, 2, 0.5, counts, u, r, f, 9, &count),
                 DPMO_NON_FINITE_INPUT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 0, 1.0, 2, 0.0, counts, u, r, f, 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, lonely, 1, w, 0, 1.0, 2, 0.5, counts, u, r, f, 9, &count),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 0, 1e300, 1, 1e-300, counts, u, r, f, 9, &count),
                 DPMO_OVERFLOW);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 0, 1.0, 2, 0.5, counts, u, r, f, 8, &count),
                 DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_generalize_scores(H, 2, LEAF, 14, A, DB, 6, w, 0, 1.0, 2, 0.5, counts, u, u, f, 9, &count),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK(guards_intact());

    TEST("exact optima");
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, DPMO_UTILITY_RECIPROCAL,
                                         DPMO_OBJECTIVE_THRESHOLD, 0, 0, 1, 1.25, counts, 9, &index, &found),
                 DPMO_OK);
    CHECK(found);
    CHECK_EQ(index, 2);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, DPMO_UTILITY_RECIPROCAL,
                                         DPMO_OBJECTIVE_THRESHOLD, 0, 0, 1, 1.1, counts, 9, &index, &found),
                 DPMO_OK);
    CHECK_EQ(index, 6);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, DPMO_UTILITY_RECIPROCAL,
                                         DPMO_OBJECTIVE_THRESHOLD, 0, 0, 1, 3.0, counts, 9, &index, &found),
                 DPMO_OK);
    CHECK(!found);
    CHECK_EQ(index, 0);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, DPMO_UTILITY_RECIPROCAL,
                                         DPMO_OBJECTIVE_LAGRANGIAN, 1.0, 2, 0.5, 0, counts, 9, &index, &found),
                 DPMO_OK);
    CHECK(found);
    CHECK_EQ(index, 8);

    TEST("optima: errors write nothing");
    index = SENTINEL_Z;
    guard(&index, sizeof index);
    guard(&found, sizeof found);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, 0, 2, 1.0, 2, 0.5, 0, counts, 9, &index, &found),
                 DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, 0, DPMO_OBJECTIVE_THRESHOLD, 0, 0, 1, NAN,
                                         counts, 9, &index, &found),
                 DPMO_NON_FINITE_INPUT);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, 0, DPMO_OBJECTIVE_THRESHOLD, 0, 0, 1, 1.0,
                                         counts, 8, &index, &found),
                 DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(dpmo_generalize_optimum(H, 2, LEAF, 14, A, DB, 6, w, 0, DPMO_OBJECTIVE_THRESHOLD, 0, 0, 1, 1.0,
                                         counts, 9, &index, NULL),
                 DPMO_NULL_POINTER);
    CHECK(guards_intact());
}

/* ================================================================== parameters */
static dpmo_generalize_params base_params(uint64_t t) {
    dpmo_generalize_params p;
    memset(&p, 0, sizeof p);
    p.epsilon = 1.0;
    p.beta = 0.5;
    p.delta = 0.1;
    p.tau1 = 0.5;
    p.lambda = 1.0;
    p.kappa = 2;
    p.phi_min = 0.5;
    p.c = 0.9;
    p.phi_max = 1.0;
    p.frequency_epsilon = 9.0;
    p.frequency_delta = 0.01;
    p.t = t;
    p.min_records = 100;
    p.objective = DPMO_OBJECTIVE_LAGRANGIAN;
    p.utility = DPMO_UTILITY_RECIPROCAL;
    return p;
}

static void test_parameters(void) {
    dpmo_generalize_params p = base_params(2);
    dpmo_generalize_derived d;
    double beta = 0;
    double ep = (1.0 + log(0.5)) / (3.0 * 4.08 * 0.5);

    TEST("min beta");
    CHECK_STATUS(dpmo_generalize_min_beta(1.0, &beta), DPMO_OK);
    CHECK(beta >= exp(-1.0) && beta < exp(-1.0) * (1 + 1e-15));
    CHECK_STATUS(dpmo_generalize_min_beta(0.0, &beta), DPMO_INVALID_EPSILON);
    CHECK_STATUS(dpmo_generalize_min_beta(1.0, NULL), DPMO_NULL_POINTER);

    TEST("min beta for large epsilon (refused in [8, 16) and from 16 on before issue 22)");
    {
        const double eps[] = {8.0, 8.39, 10.0, 15.999, 16.0, 50.0, 300.0, 744.0, 1000.0};
        size_t i;
        for (i = 0; i < sizeof eps / sizeof eps[0]; i++) {
            beta = 0;
            CHECK_STATUS(dpmo_generalize_min_beta(eps[i], &beta), DPMO_OK);
            CHECK(beta > 0 && beta < 1);
            if (eps[i] < 700) CHECK(fabs(beta - exp(-eps[i])) <= 1e-12 * exp(-eps[i]));
        }
    }

    TEST("derived quantities (hand-computed: eta = 4.08, t = 84; the Gaussian noise of L': sigma^2 = 1.6869, T = 6)");
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_OK);
    CHECK_NEAR(d.eta, 4.08, 1e-10);
    CHECK_NEAR(d.epsilon_prime, ep, 1e-12);
    CHECK_EQ(d.min_t, 84);
    /* sigma^2 = N/(2 rho) for N = 9 and the zCDP rho of (9, 0.005); T = t - 1 + 5: 9 P(Z >= 5) <= 0.005
       (the conversion and the tail bound are checked in the core's tests) */
    CHECK(d.noise_variance > 1.6868 && d.noise_variance < 1.6869);
    CHECK_EQ(d.noise_threshold, 6);
    CHECK_DEQ(d.total_epsilon, 10.0);
    CHECK_NEAR(d.total_delta, 0.11, 1e-15);
    CHECK_EQ(d.max_chain_product, 9);
    p.objective = DPMO_OBJECTIVE_THRESHOLD;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_OK);
    CHECK_EQ(d.min_t, 84);

    TEST("derive: errors write nothing");
    memset(&d, 0x5A, sizeof d);
    guard(&d, sizeof d);
    p = base_params(2);
    p.epsilon = 0;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_EPSILON);
    p = base_params(2);
    p.beta = 0.3; /* below e^-1 */
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_ARGUMENT);
    p = base_params(2);
    p.objective = 9;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_ARGUMENT);
    p = base_params(2);
    p.utility = 9;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_ARGUMENT);
    p = base_params(2);
    p.frequency_epsilon = -1;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_EPSILON);
    p = base_params(2);
    p.frequency_delta = 1e-300; /* half of it below 2^-300 */
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_ARGUMENT);
    p = base_params(2);
    p.kappa = 65;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_ARGUMENT);
    p = base_params(2);
    p.phi_min = NAN;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_NON_FINITE_INPUT);
    p = base_params(2);
    p.min_records = 0;
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, &p, &d), DPMO_INVALID_ARGUMENT);
    p = base_params(2);
    CHECK_STATUS(dpmo_generalize_derive(H, 2, LEAF, 14, NULL, &d), DPMO_NULL_POINTER);
    CHECK(guards_intact());
}

/* ================================================================== release */
#define M 400

static uint32_t records[M * 2];

static void make_records(void) {
    static const uint32_t cities[5] = {3, 4, 5, 6, 7}, ages[3] = {3, 4, 5};
    uint64_t x = 12345;
    size_t i;
    for (i = 0; i < M; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        records[2 * i] = cities[(x >> 33) % 5];
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        records[2 * i + 1] = ages[(x >> 33) % 3];
    }
}

static int is_ancestor(const uint32_t *parents, uint32_t x, uint32_t v) {
    for (;;) {
        if (v == x) return 1;
        if (parents[v] == v) return 0;
        v = parents[v];
    }
}

static int row_generalizes_some_record(const uint32_t *row) {
    size_t i;
    for (i = 0; i < M; i++)
        if (is_ancestor(CITY, row[0], records[2 * i]) && is_ancestor(AGE, row[1], records[2 * i + 1])) return 1;
    return 0;
}

static int rows_sorted(const uint32_t *rows, size_t n) {
    size_t i;
    for (i = 1; i < n; i++) {
        const uint32_t *a = rows + 2 * (i - 1), *b = rows + 2 * i;
        if (a[0] > b[0] || (a[0] == b[0] && a[1] > b[1])) return 0;
    }
    return 1;
}

static dpmo_status run(dpmo_rng *rng, const uint32_t *recs, size_t m, const double *w, size_t wl,
                       const dpmo_generalize_params *p, size_t scratch_n, uint32_t *out, size_t out_len,
                       size_t *released, dpmo_budget *budget) {
    static uint64_t counts[9];
    static double scores[9];
    static size_t cands[9];
    return dpmo_generalize_release(rng, H, 2, LEAF, 14, recs, m, w, wl, p, counts, scratch_n, scores, scratch_n,
                                   cands, scratch_n, out, out_len, released, budget);
}

static void test_release(void) {
    static uint32_t out[M * 2];
    static uint32_t bad[M * 2];
    const double w[2] = {2.0, 1.0}, neg[2] = {2.0, -1.0};
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 7), before;
    dpmo_budget budget, budget_before;
    dpmo_generalize_params p = base_params(84);
    size_t released = 0, i;
    int ok = 1;

    make_records();
    TEST("release, Lagrangian: about half the records, sorted generalizations; budget charged (10, 0.11)");
    CHECK_STATUS(dpmo_budget_init_approx(&budget, 35.0, 0.5), DPMO_OK);
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, out, M * 2, &released, &budget), DPMO_OK);
    CHECK(released > 120 && released < 280);
    CHECK(rows_sorted(out, released));
    for (i = 0; i < released; i++) ok &= row_generalizes_some_record(out + 2 * i);
    CHECK(ok);
    CHECK_DEQ(budget.spent, 10.0);
    CHECK_NEAR(budget.delta_spent, 0.11, 1e-15);
    {
        /* a pure-epsilon budget has no delta for the release: refused, nothing else happens */
        dpmo_budget pure;
        dpmo_rng before_pure = rng;
        CHECK_STATUS(dpmo_budget_init(&pure, 25.0), DPMO_OK);
        CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, out, M * 2, &released, &pure), DPMO_BUDGET_EXHAUSTED);
        CHECK_DEQ(pure.spent, 0.0);
        CHECK(memcmp(&rng, &before_pure, sizeof rng) == 0);
    }

    TEST("release, threshold objective with per-record weights and no budget");
    p.objective = DPMO_OBJECTIVE_THRESHOLD;
    {
        static double per_record[M * 2];
        for (i = 0; i < M * 2; i++) per_record[i] = (double)(i % 3);
        CHECK_STATUS(run(&rng, records, M, per_record, M * 2, &p, 9, out, M * 2, &released, NULL), DPMO_OK);
        CHECK(released > 60 && released < 280);
        CHECK(rows_sorted(out, released));
        ok = 1;
        for (i = 0; i < released; i++) ok &= row_generalizes_some_record(out + 2 * i);
        CHECK(ok);
    }
    p = base_params(84);

    TEST("release: argument errors write nothing and charge nothing");
    fill_u32(out, M * 2, 77);
    released = SENTINEL_Z;
    before = rng;
    budget_before = budget;
    guard(out, sizeof out);
    guard(&released, sizeof released);
    guard(&rng, sizeof rng);
    guard(&budget, sizeof budget);
    p.t = 83; /* below the smallest t of condition (10) */
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, out, M * 2, &released, &budget), DPMO_INVALID_ARGUMENT);
    p = base_params(84);
    CHECK_STATUS(run(&rng, records, M, w, 3, &p, 9, out, M * 2, &released, &budget), DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(run(&rng, records, M, NULL, 2, &p, 9, out, M * 2, &released, &budget), DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 8, out, M * 2, &released, &budget), DPMO_SCRATCH_TOO_SMALL);
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, out, M * 2 - 1, &released, &budget), DPMO_LENGTH_MISMATCH);
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, records, M * 2, &released, &budget), DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, out, M * 2, &released, (dpmo_budget *)(void *)&rng),
                 DPMO_OVERLAPPING_BUFFERS);
    CHECK_STATUS(run(&rng, records, M, w, 2, NULL, 9, out, M * 2, &released, &budget), DPMO_NULL_POINTER);
    CHECK_STATUS(run(NULL, records, M, w, 2, &p, 9, out, M * 2, &released, &budget), DPMO_NULL_POINTER);
    budget.total = 9.0;
    budget.spent = 0.0;
    CHECK_STATUS(run(&rng, records, M, w, 2, &p, 9, out, M * 2, &released, &budget), DPMO_BUDGET_EXHAUSTED);
    budget = budget_before;
    CHECK(guards_intact());
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);

    TEST("release: shared weights are public arguments: a bad one is refused, nothing charged or drawn");
    budget_before = budget;
    before = rng;
    guard(out, sizeof out);
    guard(&released, sizeof released);
    guard(&rng, sizeof rng);
    guard(&budget, sizeof budget);
    CHECK_STATUS(run(&rng, records, M, neg, 2, &p, 9, out, M * 2, &released, &budget), DPMO_INVALID_ARGUMENT);
    {
        const double inf[2] = {2.0, INFINITY};
        CHECK_STATUS(run(&rng, records, M, inf, 2, &p, 9, out, M * 2, &released, &budget), DPMO_NON_FINITE_INPUT);
    }
    CHECK(guards_intact());
    CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    CHECK(memcmp(&rng, &before, sizeof rng) == 0);

    /* Per-record weights are private: one that is not finite and >= 0 reads as 0 (it was
     * DPMO_INVALID_ARGUMENT / DPMO_NON_FINITE_INPUT after the charge: a status that told the neighbours apart). */
    TEST("release: a per-record weight out of range reads as 0: status, budget, generator and rows as with 0");
    {
        static double per[M * 2], zero[M * 2];
        static uint32_t out2[M * 2];
        const double bad_weights[4] = {-1.0, INFINITY, -INFINITY, NAN};
        size_t v, released2 = 0;
        for (i = 0; i < M * 2; i++) per[i] = zero[i] = 1.0 + (double)(i % 3);
        for (v = 0; v < 4; v++) {
            dpmo_rng a = rng, b = rng;
            dpmo_budget ba, bb;
            CHECK_STATUS(dpmo_budget_init_approx(&ba, 35.0, 0.5), DPMO_OK);
            bb = ba;
            per[7] = bad_weights[v];
            zero[7] = 0.0;
            CHECK_STATUS(run(&a, records, M, per, M * 2, &p, 9, out, M * 2, &released, &ba), DPMO_OK);
            CHECK_STATUS(run(&b, records, M, zero, M * 2, &p, 9, out2, M * 2, &released2, &bb), DPMO_OK);
            CHECK(memcmp(&a, &b, sizeof a) == 0);
            CHECK(memcmp(&ba, &bb, sizeof ba) == 0);
            CHECK_DEQ(ba.spent, 10.0);
            CHECK_EQ(released, released2);
            CHECK(memcmp(out, out2, released * 2 * sizeof(uint32_t)) == 0);
        }
    }

    /* A node id out of range in a record is private data: no status of its own (it was DPMO_INVALID_ARGUMENT,
     * a free probe of "some record holds a bad id"). It reads as the root of its hierarchy, so D' = D with a
     * bad id gives the status, the budget bytes, the generator state and the rows of D with the root there;
     * and the neighbour D + {record with a bad id} the status, budget bytes and generator state of D. */
    TEST("release: a record's node id out of range reads as the root: neighbours alike (status, budget, generator)");
    {
        static uint32_t rooted[M * 2], out2[M * 2], plus[(M + 1) * 2], out3[(M + 1) * 2];
        const uint32_t bad_values[3] = {6, 7, 0xFFFFFFFFu};
        size_t v, released2 = 0, released3 = 0;
        for (v = 0; v < 3; v++) {
            dpmo_rng a = rng, b = rng, c = rng;
            dpmo_budget ba, bb, bc;
            CHECK_STATUS(dpmo_budget_init_approx(&ba, 35.0, 0.5), DPMO_OK);
            bb = ba;
            bc = ba;
            memcpy(bad, records, sizeof bad);
            memcpy(rooted, records, sizeof rooted);
            bad[2 * M - 1] = bad_values[v]; /* age id out of range (AGE has 6 nodes) */
            rooted[2 * M - 1] = 0;          /* the age root */
            bad[0] = bad_values[v] + 2;     /* city id out of range (CITY has 8 nodes) */
            rooted[0] = 0;
            CHECK_STATUS(run(&a, bad, M, w, 2, &p, 9, out, M * 2, &released, &ba), DPMO_OK);
            CHECK_STATUS(run(&b, rooted, M, w, 2, &p, 9, out2, M * 2, &released2, &bb), DPMO_OK);
            CHECK(memcmp(&a, &b, sizeof a) == 0);
            CHECK(memcmp(&ba, &bb, sizeof ba) == 0);
            CHECK_EQ(released, released2);
            CHECK(memcmp(out, out2, released * 2 * sizeof(uint32_t)) == 0);
            /* the neighbour D + {bad record} against D */
            memcpy(plus, records, sizeof records);
            plus[2 * M] = 3;
            plus[2 * M + 1] = bad_values[v];
            CHECK_STATUS(run(&c, plus, M + 1, w, 2, &p, 9, out3, (M + 1) * 2, &released3, &bc), DPMO_OK);
            b = rng;
            bb = ba;
            CHECK_STATUS(dpmo_budget_init_approx(&bb, 35.0, 0.5), DPMO_OK);
            CHECK_STATUS(run(&b, records, M, w, 2, &p, 9, out2, M * 2, &released2, &bb), DPMO_OK);
            CHECK(memcmp(&c, &b, sizeof c) == 0);
            CHECK(memcmp(&bc, &bb, sizeof bc) == 0);
            CHECK_DEQ(bc.spent, 10.0);
        }
    }

    TEST("release: no record is a database (nothing released, charged); one key drawn whatever the records");
    {
        dpmo_rng a = rng, b = rng;
        budget_before = budget;
        released = SENTINEL_Z;
        CHECK_STATUS(run(&a, records, 0, NULL, 0, &p, 9, out, M * 2, &released, &budget), DPMO_OK);
        CHECK_EQ(released, 0);
        CHECK_DEQ(budget.spent, budget_before.spent + 10.0);
        /* all M records against the first M - 1 (a neighbour): the same generator state afterwards, and the
           same as with no record at all */
        a = rng;
        CHECK_STATUS(run(&a, records, M, NULL, 0, &p, 9, out, M * 2, &released, NULL), DPMO_OK);
        CHECK_STATUS(run(&b, records, M - 1, NULL, 0, &p, 9, out, M * 2, &released, NULL), DPMO_OK);
        CHECK(memcmp(&a, &b, sizeof a) == 0);
        b = rng;
        CHECK_STATUS(run(&b, records, 0, NULL, 0, &p, 9, out, M * 2, &released, NULL), DPMO_OK);
        CHECK(memcmp(&a, &b, sizeof a) == 0);
    }

    TEST("release: an invalid generator");
    {
        dpmo_rng zero;
        memset(&zero, 0, sizeof zero);
        budget_before = budget;
        CHECK_STATUS(run(&zero, records, M, w, 2, &p, 9, out, M * 2, &released, NULL), DPMO_INVALID_GENERATOR);
        CHECK_STATUS(run(&zero, records, M, w, 2, &p, 9, out, M * 2, &released, &budget), DPMO_INVALID_GENERATOR);
        CHECK(memcmp(&budget, &budget_before, sizeof budget) == 0);
    }
}

int main(void) {
    setup();
    test_lattice();
    test_chain_product_and_counts();
    test_scores_and_optima();
    test_parameters();
    test_release();
    return HARNESS_FINISH();
}
