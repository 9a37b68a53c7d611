/*
 * The C ABI's exact mode (issue 10), the default arithmetic of every selecting function.
 *
 * 1. Distributions: every exact selector — exponential mechanism, permute-and-flip, report-noisy-max with
 *    Gumbel and Exponential noise, top-k peeling with each of them, one-shot Gumbel top-k (flags 0), local
 *    dampening plain and shifted (one pick and top-k), PrivPareto and PrivAgg global and local (one pick and
 *    k = 2) — is checked by a chi-square test at α = 1e-6 against probabilities computed here (in double
 *    precision: plenty for the expectations): the exponential mechanism and permute-and-flip by their
 *    formulas, peeling by composing rounds, dampening and Pareto scores by hand, δ^PS from the library's
 *    floating-point stage functions (a code path independent of the exact selection). Each family is also
 *    shown to reject a wrong model (the other mechanism, or ε off by 25 %), so the check can fail.
 * 2. The neighbouring pair of the issue (ε = 1, Δ = 1, scores {0, -73.6} and {0, -72.6}): index 1 has
 *    probability ~1e-16 there, which cannot be observed; the exact mode must accept both, and a chi-square on
 *    {0, -5.6}, where the same tail is observable, checks the probability itself.
 * 3. Extreme inputs — ε from 1e-300 to 1e300, scores ±DBL_MAX, n = 1, translated scores (1e25 and
 *    1e25 - 2^31), differences of 1e-20 (relative to 1 and to Δ), subnormals — give a result or a clear status,
 *    never a crash or a hang (each function runs in a child process under a watchdog); where the result is
 *    defined at that scale, its distribution is checked too.
 * 4. dpmo_sample_discrete_laplace: chi-square against P(z) ∝ exp(-|z| g / b) for several (b, g), dyadic and
 *    not; symmetry; a wrong scale rejected; every bad argument refused with nothing written.
 *
 * The number of draws per test is DPMO_TEST_DRAWS (environment) or the first argument, 100000 by default;
 * `make ffi-tests` runs it under valgrind with a few thousand and once natively with the default. Seeds are
 * fixed: the outcome is deterministic. C only (POSIX fork/alarm for the watchdog).
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <float.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long DRAWS = 100000;
/* The power checks need enough draws to tell a 25 % error in ε apart; below this they are skipped. */
#define POWER_DRAWS 50000ul
static int powerful(void) { return DRAWS >= POWER_DRAWS; }

static double nan_(void) { return nan(""); }

/* ================================================================== reference distributions */
#define MAXN 8

/* The exponential mechanism: P(r) ∝ exp(ε s_r / 2Δ). */
static void em_probs(const double *s, size_t n, double sens, double eps, double *p) {
    double best = s[0], z = 0.0;
    size_t i;
    for (i = 1; i < n; i++)
        if (s[i] > best) best = s[i];
    for (i = 0; i < n; i++) z += p[i] = exp(eps * (s[i] - best) / (2.0 * sens));
    for (i = 0; i < n; i++) p[i] /= z;
}

/* Permute-and-flip (McKenna & Sheldon 2020): candidates in a uniformly random order, r kept with probability
 * q_r = exp(ε (s_r - max) / 2Δ). The set visited before r is a given S with probability |S|! (n-1-|S|)! / n!,
 * so P(r) = q_r Σ_k e_k(r) / (n C(n-1, k)), e_k(r) the elementary symmetric sums of {1 - q_j : j ≠ r}. */
static void pf_probs(const double *s, size_t n, double sens, double eps, double *p) {
    double q[MAXN], best = s[0];
    size_t i, j, k;
    for (i = 1; i < n; i++)
        if (s[i] > best) best = s[i];
    for (i = 0; i < n; i++) q[i] = exp(eps * (s[i] - best) / (2.0 * sens));
    for (i = 0; i < n; i++) {
        double e[MAXN + 1] = {1.0}, total = 0.0, binom = 1.0;
        size_t deg = 0;
        for (j = 0; j < n; j++) {
            if (j == i) continue;
            deg++;
            for (k = deg; k > 0; k--) e[k] += e[k - 1] * (1.0 - q[j]);
        }
        for (k = 0; k < n; k++) {
            total += e[k] / ((double)n * binom); /* binom = C(n-1, k) */
            binom = binom * (double)(n - 1 - k) / (double)(k + 1);
        }
        p[i] = q[i] * total;
    }
}

enum { MECH_EM, MECH_PF };
static void mech_probs(int mech, const double *s, size_t n, double sens, double eps, double *p) {
    if (mech == MECH_EM)
        em_probs(s, n, sens, eps, p);
    else
        pf_probs(s, n, sens, eps, p);
}

/* Two rounds of peeling at ε each over fixed scores: P[i n + j] = P1(i) P2(j | i removed). */
static void peel2_probs(int mech, const double *s, size_t n, double sens, double eps, double *pairs) {
    double p1[MAXN], rest[MAXN], p2[MAXN];
    size_t i, j, m;
    mech_probs(mech, s, n, sens, eps, p1);
    for (i = 0; i < n * n; i++) pairs[i] = 0.0;
    for (i = 0; i < n; i++) {
        for (j = 0, m = 0; j < n; j++)
            if (j != i) rest[m++] = s[j];
        mech_probs(mech, rest, n - 1, sens, eps, p2);
        for (j = 0, m = 0; j < n; j++)
            if (j != i) pairs[i * n + j] = p1[i] * p2[m++];
    }
}

/* Plain local dampening (Local Dampening paper, Def. 3.6) for a δ constant per candidate: δ(t) = min(d, Δ) for
 * t < t_max and Δ beyond, so b(t) = t δ up to t_max. D is odd. */
static double plain_dampened(double u, double d, double global, size_t t_max) {
    const double dd = d < global ? d : global, knee = (double)t_max * dd;
    if (u < 0.0) return -plain_dampened(-u, d, global, t_max);
    if (u < knee) return u / dd;
    return (double)t_max + (u - knee) / global;
}

/* Shifted local dampening (Def. 4.3, closed form): u/Δ - Σ_{t < t_max} (1 - δ(t)/Δ). */
static double shifted_dampened(double u, double d, double global, size_t t_max) {
    const double dd = d < global ? d : global;
    return u / global - (double)t_max * (1.0 - dd / global);
}

/* Pareto score (PrivPareto paper, Def. 4.3, textbook dominance) of the candidates listed in `live`. */
static void pareto_by_hand(const double *u, size_t m, const size_t *live, size_t n, double *ps) {
    size_t a, b, i;
    for (a = 0; a < n; a++) {
        int count = 0;
        for (b = 0; b < n; b++) {
            int ge = 1, gt = 0;
            if (a == b) continue;
            for (i = 0; i < m; i++) {
                double x = u[live[b] * m + i], y = u[live[a] * m + i];
                ge &= x >= y;
                gt |= x > y;
            }
            count += ge && gt;
        }
        ps[a] = -(double)count;
    }
}

/* ================================================================== one selection, any function */
enum { F_EXP, F_PF, F_NM, F_TOPK, F_GUMBEL, F_LD, F_LD_TOPK, F_PARETO, F_AGG, F_COUNT };
static const char *const FN_NAMES[F_COUNT] = {
    "select_exponential", "select_permute_and_flip", "select_noisy_max",         "select_top_k",
    "select_top_k_gumbel", "select_local_dampening", "select_local_dampening_top_k", "select_privpareto",
    "select_privagg"};

typedef struct {
    int fn;
    uint32_t sel; /* selector; noise for F_NM; flags for F_GUMBEL */
    const double *s; /* scores, utilities (n x m for the multi-objective functions) */
    size_t n, m, k;
    double sens, eps;
    const dpmo_sensitivity *spec; /* F_LD*: one spec; F_PARETO / F_AGG: m specs or NULL (global) */
    uint32_t damp;
    const double *w, *g; /* F_AGG */
    size_t max_distance;
} cfg_t;

static cfg_t cfg(int fn, uint32_t sel, const double *s, size_t n, double sens, double eps) {
    cfg_t c;
    memset(&c, 0, sizeof c);
    c.fn = fn;
    c.sel = sel;
    c.s = s;
    c.n = n;
    c.m = 1;
    c.k = 1;
    c.sens = sens;
    c.eps = eps;
    return c;
}

#define SCRATCH (1u << 18) /* the multi-objective score stage needs ~1,500 words even for tiny n */
static double g_values[SCRATCH];
static size_t g_indices[SCRATCH];

/* Runs one call of c's function; writes k indices to out. Scratch lengths come from the helpers. */
static dpmo_status run_cfg(dpmo_rng *rng, const cfg_t *c, size_t *out, dpmo_budget *budget) {
    size_t vl = 0, il = 0;
    dpmo_status st = DPMO_OK;
    switch (c->fn) {
    case F_EXP: return dpmo_select_exponential(rng, c->s, c->n, c->sens, c->eps, out, budget);
    case F_PF: return dpmo_select_permute_and_flip(rng, c->s, c->n, c->sens, c->eps, g_indices, c->n, out, budget);
    case F_NM:
        return dpmo_select_noisy_max(rng, c->s, c->n, c->sens, c->eps, c->sel, g_indices, c->n, out, budget);
    case F_TOPK:
    case F_GUMBEL:
        st = dpmo_top_k_scratch_len(c->n, c->fn == F_TOPK ? c->sel : DPMO_SELECTOR_EXPONENTIAL, &vl, &il);
        if (st != DPMO_OK || vl > SCRATCH || il > SCRATCH) return st != DPMO_OK ? st : DPMO_SCRATCH_TOO_SMALL;
        if (c->fn == F_TOPK)
            return dpmo_select_top_k(rng, c->sel, c->s, c->n, c->sens, c->eps, c->k, out, g_values, vl, g_indices, il,
                                     budget);
        return dpmo_select_top_k_gumbel(rng, c->s, c->n, c->sens, c->eps, c->k, c->sel, out, g_values, vl, g_indices,
                                        il, budget);
    case F_LD:
    case F_LD_TOPK:
        st = dpmo_local_dampening_scratch_len(c->n, c->k, c->sel, &vl, &il);
        if (st != DPMO_OK || vl > SCRATCH || il > SCRATCH) return st != DPMO_OK ? st : DPMO_SCRATCH_TOO_SMALL;
        if (c->fn == F_LD)
            return dpmo_select_local_dampening(rng, c->s, c->n, c->spec, c->damp, c->sel, c->eps, g_values, vl,
                                               g_indices, il, out, budget);
        return dpmo_select_local_dampening_top_k(rng, c->s, c->n, c->spec, c->damp, c->sel, c->eps, c->k, out,
                                                 g_values, vl, g_indices, il, budget);
    case F_PARETO:
        st = dpmo_privpareto_scratch_len(c->n, c->m, &vl, &il);
        if (st != DPMO_OK || vl > SCRATCH || il > SCRATCH) return st != DPMO_OK ? st : DPMO_SCRATCH_TOO_SMALL;
        return dpmo_select_privpareto(rng, c->s, c->n, c->m, DPMO_DOMINANCE_TEXTBOOK, c->spec, c->max_distance,
                                      c->damp, c->sel, c->eps, c->k, out, g_values, vl, g_indices, il, budget);
    default:
        st = dpmo_privagg_scratch_len(c->n, c->m, &vl, &il);
        if (st != DPMO_OK || vl > SCRATCH || il > SCRATCH) return st != DPMO_OK ? st : DPMO_SCRATCH_TOO_SMALL;
        return dpmo_select_privagg(rng, c->s, c->n, c->m, c->w, c->g, c->spec, c->max_distance, c->damp, c->sel,
                                   c->eps, c->k, out, g_values, vl, g_indices, il, budget);
    }
}

/* DRAWS selections; count[out[0]] (k = 1) or count[out[0] n + out[1]] (k = 2). Every call must succeed with
 * k distinct indices below n. */
static void counts_of(const cfg_t *c, unsigned long *count, unsigned seed) {
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, seed);
    unsigned long d, failures = 0, bad = 0;
    const size_t bins = c->k == 1 ? c->n : c->n * c->n;
    size_t i;
    for (i = 0; i < bins; i++) count[i] = 0;
    for (d = 0; d < DRAWS; d++) {
        size_t out[2] = {SENTINEL_Z, SENTINEL_Z};
        dpmo_status st = run_cfg(&rng, c, out, NULL);
        if (st != DPMO_OK) {
            if (failures++ == 0) printf("      %s failed: %s\n", FN_NAMES[c->fn], dpmo_status_message((uint32_t)st));
            continue;
        }
        if (out[0] >= c->n || (c->k == 2 && (out[1] >= c->n || out[1] == out[0]))) {
            bad++;
            continue;
        }
        count[c->k == 1 ? out[0] : out[0] * c->n + out[1]]++;
    }
    CHECK_EQ(failures, 0);
    CHECK_EQ(bad, 0);
}

/* The counts of c against p (bins entries), and, when powerful, rejected against the wrong model q. */
static void check_dist(const char *name, const cfg_t *c, const double *p, const double *q, unsigned seed) {
    unsigned long count[MAXN * MAXN];
    const size_t bins = c->k == 1 ? c->n : c->n * c->n;
    char label[200];
    snprintf(label, sizeof label, "exact %s %s", FN_NAMES[c->fn], name);
    TEST(label);
    CHECK(sums_to_one(p, bins, 1e-12));
    counts_of(c, count, seed);
    CHECK_CHI2(count, p, bins, DRAWS);
    if (q != NULL && powerful()) CHECK_CHI2_REJECTS(count, q, bins, DRAWS);
}

/* ================================================================== 0. the checker itself */
static void test_chi2_helper(void) {
    const double xs[5] = {0.5, 3.0, 12.0, 23.928, 60.0};
    size_t i;
    TEST("chi-square p-values: Q(1/2, x/2) = erfc(sqrt(x/2)) (1 df), Q(1, x/2) = exp(-x/2) (2 df)");
    for (i = 0; i < 5; i++) {
        CHECK_NEAR(gamma_q(0.5, xs[i] / 2.0), erfc(sqrt(xs[i] / 2.0)), 1e-12 * erfc(sqrt(xs[i] / 2.0)) + 1e-300);
        CHECK_NEAR(gamma_q(1.0, xs[i] / 2.0), exp(-xs[i] / 2.0), 1e-12 * exp(-xs[i] / 2.0) + 1e-300);
    }
    CHECK_NEAR(gamma_q(0.5, 23.928 / 2.0), 1e-6, 2e-9); /* the 1-df critical value at α = 1e-6 */
    TEST("chi-square helper: accepts the expected counts, rejects shifted ones, pools small bins");
    {
        const double p[4] = {0.5, 0.3, 0.1999, 0.0001};
        unsigned long exact[4] = {50000, 30000, 19990, 10}, off[4] = {51000, 29000, 19990, 10};
        unsigned long lost[4] = {50000, 30000, 19990, 9}, impossible[3] = {1, 5, 4};
        const double p3[3] = {0.0, 0.5, 0.5};
        double stat = 0.0;
        size_t df = 0;
        CHECK(chi2_pvalue(exact, p, 4, 100000, &stat, &df) > 0.99);
        CHECK_EQ(df, 3);
        CHECK(chi2_pvalue(off, p, 4, 100000, &stat, &df) < ALPHA);
        CHECK_EQ(chi2_pvalue(lost, p, 4, 100000, &stat, &df), 0.0);       /* a draw missing */
        CHECK_EQ(chi2_pvalue(impossible, p3, 3, 10, &stat, &df), 0.0);    /* a draw of probability 0 */
        CHECK(chi2_pvalue(exact, p, 4, 1000 * 100, &stat, &df) > 0.99);
        {
            /* expected 50, 30, 17, 2, 1: the last two (below 5) are pooled into one bin of 3 */
            const double q[5] = {0.5, 0.3, 0.17, 0.02, 0.01};
            unsigned long small[5] = {50, 30, 17, 0, 3};
            CHECK(chi2_pvalue(small, q, 5, 100, &stat, &df) > 0.99);
            CHECK_EQ(df, 3);
        }
    }
}

/* ================================================================== 1. distributions */
static const double S5[5] = {0.0, 1.0, 2.5, -1.0, 3.0}; /* Δ = 1.5, ε = 1.1 below: nothing dyadic */

static void test_global_selectors(void) {
    double em[5], pf[5], em_wrong[5], pf_wrong[5];
    const double sens = 1.5, eps = 1.1;
    cfg_t c;
    em_probs(S5, 5, sens, eps, em);
    pf_probs(S5, 5, sens, eps, pf);
    em_probs(S5, 5, sens, 1.25 * eps, em_wrong);
    pf_probs(S5, 5, sens, 1.25 * eps, pf_wrong);

    TEST("reference: permute-and-flip probabilities = enumeration of the 120 orders");
    {
        /* cross-check of pf_probs by brute force over all orders */
        double q[5], brute[5] = {0, 0, 0, 0, 0}, best = 3.0;
        size_t perm[5] = {0, 1, 2, 3, 4}, i, j;
        int more = 1;
        for (i = 0; i < 5; i++) q[i] = exp(eps * (S5[i] - best) / (2.0 * sens));
        while (more) {
            double reach = 1.0 / 120.0;
            for (j = 0; j < 5; j++) {
                brute[perm[j]] += reach * q[perm[j]];
                reach *= 1.0 - q[perm[j]];
            }
            /* next permutation (lexicographic) */
            more = 0;
            for (i = 4; i > 0; i--)
                if (perm[i - 1] < perm[i]) {
                    size_t a = i - 1, b = 4, t;
                    while (perm[b] < perm[a]) b--;
                    t = perm[a], perm[a] = perm[b], perm[b] = t;
                    for (b = 4, j = i; j < b; j++, b--) t = perm[j], perm[j] = perm[b], perm[b] = t;
                    more = 1;
                    break;
                }
        }
        for (i = 0; i < 5; i++) CHECK_NEAR(pf[i], brute[i], 1e-15);
        CHECK(fabs(pf[4] - em[4]) > 0.02); /* the two mechanisms differ visibly here */
    }

    c = cfg(F_EXP, 0, S5, 5, sens, eps);
    check_dist("= P(r) ∝ exp(ε s / 2Δ); rejects permute-and-flip's", &c, em, pf, 1);
    check_dist("rejects ε × 1.25", &c, em, em_wrong, 1);
    c = cfg(F_PF, 0, S5, 5, sens, eps);
    check_dist("= permute-and-flip's formula; rejects the exponential mechanism's", &c, pf, em, 2);
    check_dist("rejects ε × 1.25", &c, pf, pf_wrong, 2);
    c = cfg(F_NM, DPMO_NOISE_GUMBEL, S5, 5, sens, eps);
    check_dist("gumbel noise = the exponential mechanism", &c, em, pf, 3);
    c = cfg(F_NM, DPMO_NOISE_EXPONENTIAL, S5, 5, sens, eps);
    check_dist("exponential noise = permute-and-flip", &c, pf, em, 4);
}

static void test_top_k(void) {
    static const uint32_t sels[4] = {DPMO_SELECTOR_EXPONENTIAL, DPMO_SELECTOR_PERMUTE_AND_FLIP,
                                     DPMO_SELECTOR_NOISY_MAX_GUMBEL, DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL};
    const double s[4] = {1.0, 0.0, 2.0, -0.5}, sens = 1.0, eps = 3.0; /* ε/2 = 1.5 per round */
    double em[16], pf[16];
    size_t i;
    cfg_t c;
    peel2_probs(MECH_EM, s, 4, sens, eps / 2.0, em);
    peel2_probs(MECH_PF, s, 4, sens, eps / 2.0, pf);
    for (i = 0; i < 4; i++) {
        const int is_em = sels[i] == DPMO_SELECTOR_EXPONENTIAL || sels[i] == DPMO_SELECTOR_NOISY_MAX_GUMBEL;
        char name[120];
        c = cfg(F_TOPK, sels[i], s, 4, sens, eps);
        c.k = 2;
        snprintf(name, sizeof name, "%s, k = 2: ordered pairs of two rounds at ε/2", selector_name(sels[i]));
        check_dist(name, &c, is_em ? em : pf, is_em ? pf : em, 10 + (unsigned)i);
    }
    c = cfg(F_GUMBEL, 0, s, 4, sens, eps);
    c.k = 2;
    check_dist("flags 0, k = 2: exactly two exponential mechanisms at ε/2", &c, em, pf, 15);
}

/* Local dampening with a per-candidate δ: D by hand, then the selector on D with Δ = 1. */
static const double LU[5] = {0.5, 3.0, -1.0, 7.5, 2.0}, LD_[5] = {0.5, 1.0, 0.25, 2.0, 1.5};
#define L_GLOBAL 2.0
#define L_TMAX 3

static void test_local_dampening(void) {
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_PER_CANDIDATE, LD_, 5, 0, L_GLOBAL, L_TMAX);
    const double eps = 1.5;
    uint32_t damp;
    size_t r;
    for (damp = 0; damp < 2; damp++) {
        double d[5], em[5], pf[5], pairs[25], plain_em[5], lib[5];
        cfg_t c;
        for (r = 0; r < 5; r++)
            d[r] = damp ? shifted_dampened(LU[r], LD_[r], L_GLOBAL, L_TMAX)
                        : plain_dampened(LU[r], LD_[r], L_GLOBAL, L_TMAX);
        TEST(damp ? "reference: shifted dampening by hand = dpmo_dampen" : "reference: plain dampening by hand = dpmo_dampen");
        CHECK_STATUS(dpmo_dampen(LU, 5, &spec, damp, lib), DPMO_OK);
        for (r = 0; r < 5; r++) CHECK_NEAR(lib[r], d[r], 1e-12);
        em_probs(d, 5, 1.0, eps, em);
        pf_probs(d, 5, 1.0, eps, pf);
        em_probs(LU, 5, L_GLOBAL, eps, plain_em); /* no dampening: the global mechanism */
        c = cfg(F_LD, DPMO_SELECTOR_EXPONENTIAL, LU, 5, 1.0, eps);
        c.spec = &spec;
        c.damp = damp;
        check_dist(damp ? "shifted, exponential" : "plain, exponential", &c, em, plain_em, 20 + damp);
        c.sel = DPMO_SELECTOR_PERMUTE_AND_FLIP;
        check_dist(damp ? "shifted, permute-and-flip" : "plain, permute-and-flip", &c, pf, em, 22 + damp);
        c.sel = DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL;
        check_dist(damp ? "shifted, noisy max exponential" : "plain, noisy max exponential", &c, pf, em, 24 + damp);
        c = cfg(F_LD_TOPK, DPMO_SELECTOR_EXPONENTIAL, LU, 5, 1.0, 2.0 * eps);
        c.spec = &spec;
        c.damp = damp;
        c.k = 2;
        peel2_probs(MECH_EM, d, 5, 1.0, eps, pairs);
        check_dist(damp ? "top-k, shifted, k = 2" : "top-k, plain, k = 2", &c, pairs, NULL, 26 + damp);
    }
}

/* PrivPareto paper, Example 4.4 (n = 5, m = 2). */
static const double U44[10] = {3, 5, 5, 3, 4, 2, 2, 4, 1, 1};
static const double D44A[5] = {0.5, 1.0, 0.25, 2.0, 1.0}, D44B[5] = {1.0, 0.5, 1.5, 0.25, 3.0};

static void test_privpareto(void) {
    const size_t all[5] = {0, 1, 2, 3, 4};
    const double eps = 2.0;
    double ps[5], em[5], pf[5], wrong[5], pairs[25];
    dpmo_sensitivity specs[2];
    cfg_t c;
    size_t i, j, m;

    TEST("reference: Pareto scores by hand = Example 4.4 (0, 0, -1, -1, -4)");
    pareto_by_hand(U44, 2, all, 5, ps);
    CHECK(ps[0] == 0 && ps[1] == 0 && ps[2] == -1 && ps[3] == -1 && ps[4] == -4);

    /* global: Δ = n - 1 */
    em_probs(ps, 5, 4.0, eps, em);
    pf_probs(ps, 5, 4.0, eps, pf);
    em_probs(ps, 5, 1.0, eps, wrong); /* Δ = 1 instead of n - 1 */
    c = cfg(F_PARETO, DPMO_SELECTOR_EXPONENTIAL, U44, 5, 0.0, eps);
    c.m = 2;
    check_dist("global, exponential = exp(ε PS / 2(n-1)); rejects Δ = 1", &c, em, wrong, 30);
    c.sel = DPMO_SELECTOR_PERMUTE_AND_FLIP;
    check_dist("global, permute-and-flip", &c, pf, em, 31);
    /* k = 2: the second round re-scores the four candidates left, Δ = 3 */
    for (i = 0; i < 25; i++) pairs[i] = 0.0;
    for (i = 0; i < 5; i++) {
        size_t live[4];
        double ps2[4], p2[4];
        for (j = 0, m = 0; j < 5; j++)
            if (j != i) live[m++] = j;
        pareto_by_hand(U44, 2, live, 4, ps2);
        em_probs(ps2, 4, 3.0, eps / 2.0, p2);
        em_probs(ps, 5, 4.0, eps / 2.0, em);
        for (j = 0; j < 4; j++) pairs[i * 5 + live[j]] = em[i] * p2[j];
    }
    c.sel = DPMO_SELECTOR_EXPONENTIAL;
    c.k = 2;
    check_dist("global, k = 2: re-scored among the candidates left", &c, pairs, NULL, 32);

    /* local: δ^PS from the floating-point stages (a table long enough to saturate), dampened, Δ = 1 */
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44A, 5, 0, 4.0, 3);
    specs[1] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44B, 5, 0, 4.0, 3);
    {
        double table[5 * 64], vs[256], d[5];
        size_t ix[256], il = 0, vl = 0, sl = 0;
        uint32_t damp;
        dpmo_sensitivity tspec = make_spec(DPMO_DELTA_TABLE, table, 5 * 64, 64, 4.0, 64);
        CHECK_STATUS(dpmo_pareto_sensitivity_scratch_len(5, 2, &il, &vl), DPMO_OK);
        CHECK(il <= 256 && vl <= 256);
        CHECK_STATUS(dpmo_pareto_sensitivity_table(U44, 5, 2, specs, 64, table, ix, il, vs, vl), DPMO_OK);
        CHECK_DEQ(table[0 * 64 + 63], 4.0); /* saturated long before the last column */
        CHECK_STATUS(dpmo_pareto_scores_scratch_len(5, 2, &sl), DPMO_OK);
        CHECK(sl <= SCRATCH);
        CHECK_STATUS(dpmo_pareto_scores(U44, 5, 2, DPMO_DOMINANCE_TEXTBOOK, d, g_indices, sl), DPMO_OK);
        for (damp = 0; damp < 2; damp++) {
            double dd[5];
            CHECK_STATUS(dpmo_dampen(d, 5, &tspec, damp, dd), DPMO_OK);
            em_probs(dd, 5, 1.0, eps, em);
            em_probs(ps, 5, 4.0, eps, wrong); /* the global mechanism */
            c = cfg(F_PARETO, DPMO_SELECTOR_EXPONENTIAL, U44, 5, 0.0, eps);
            c.m = 2;
            c.spec = specs;
            c.damp = damp;
            c.max_distance = 0;
            check_dist(damp ? "local, shifted, max_distance 0 (automatic)" : "local, plain, max_distance 0 (automatic)",
                       &c, em, wrong, 33 + damp);
        }
    }
}

static void test_privagg(void) {
    /* u_agg = 0.3 u1 - 1.7 u2 (weights not dyadic, of both signs) */
    const double w[2] = {0.3, -1.7}, g[2] = {4.0, 2.0}, eps = 1.25;
    const double gagg = 0.3 * 4.0 + 1.7 * 2.0;
    double agg[5], em[5], pf[5], wrong[5], pairs[25];
    dpmo_sensitivity specs[2];
    size_t r;
    cfg_t c;
    for (r = 0; r < 5; r++) agg[r] = w[0] * U44[2 * r] + w[1] * U44[2 * r + 1];
    em_probs(agg, 5, gagg, eps, em);
    pf_probs(agg, 5, gagg, eps, pf);
    em_probs(agg, 5, 0.3 * 4.0, eps, wrong); /* the first objective's sensitivity only */
    c = cfg(F_AGG, DPMO_SELECTOR_EXPONENTIAL, U44, 5, 0.0, eps);
    c.m = 2;
    c.w = w;
    c.g = g;
    check_dist("global, exponential = exp(ε u_agg / 2 Σ|w_i| Δ_i)", &c, em, wrong, 40);
    c.sel = DPMO_SELECTOR_NOISY_MAX_EXPONENTIAL;
    check_dist("global, noisy max exponential", &c, pf, em, 41);
    c.sel = DPMO_SELECTOR_EXPONENTIAL;
    c.k = 2;
    peel2_probs(MECH_EM, agg, 5, gagg, eps / 2.0, pairs);
    check_dist("global, k = 2", &c, pairs, NULL, 42);

    /* local: δ_agg(r) = Σ |w_i| min(δ_i(r), Δ_i) up to t_max = 3 (both), Δ_agg beyond; dampened by hand */
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44A, 5, 0, 4.0, 3);
    specs[1] = make_spec(DPMO_DELTA_PER_CANDIDATE, D44B, 5, 0, 2.0, 3);
    {
        uint32_t damp;
        for (damp = 0; damp < 2; damp++) {
            double d[5];
            for (r = 0; r < 5; r++) {
                const double da = 0.3 * (D44A[r] < 4.0 ? D44A[r] : 4.0) + 1.7 * (D44B[r] < 2.0 ? D44B[r] : 2.0);
                d[r] = damp ? shifted_dampened(agg[r], da, gagg, 3) : plain_dampened(agg[r], da, gagg, 3);
            }
            em_probs(d, 5, 1.0, eps, em);
            c = cfg(F_AGG, DPMO_SELECTOR_EXPONENTIAL, U44, 5, 0.0, eps);
            c.m = 2;
            c.w = w;
            c.spec = specs;
            c.damp = damp;
            check_dist(damp ? "local, shifted: δ_agg = Σ |w_i| δ_i, dampened by hand"
                            : "local, plain: δ_agg = Σ |w_i| δ_i, dampened by hand",
                       &c, em, wrong, 43 + damp);
        }
    }
}

/* ================================================================== 2. the neighbouring pair of the issue */
static void test_issue_pair(void) {
    const double x[2] = {0.0, -73.6}, y[2] = {0.0, -72.6}, obs[2] = {0.0, -5.6};
    static const int fns[6] = {F_EXP, F_PF, F_NM, F_NM, F_TOPK, F_GUMBEL};
    static const uint32_t sels[6] = {0, 0, DPMO_NOISE_GUMBEL, DPMO_NOISE_EXPONENTIAL, DPMO_SELECTOR_PERMUTE_AND_FLIP,
                                     0};
    double em[2], pf[2];
    size_t f;
    em_probs(obs, 2, 1.0, 1.0, em);
    pf_probs(obs, 2, 1.0, 1.0, pf);
    TEST("issue pair: P(1) on {0, -73.6} is about 1e-16 (not observable: only its status is checked)");
    CHECK(em[1] > 0.05 && em[1] < 0.06); /* e^-2.8 / (1 + e^-2.8) */
    {
        double p[2];
        em_probs(x, 2, 1.0, 1.0, p);
        CHECK(p[1] > 1e-17 && p[1] < 1e-15);
    }
    for (f = 0; f < 6; f++) {
        const int is_em = fns[f] == F_EXP || fns[f] == F_GUMBEL || (fns[f] == F_NM && sels[f] == DPMO_NOISE_GUMBEL);
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 50 + (unsigned)f);
        cfg_t cx = cfg(fns[f], sels[f], x, 2, 1.0, 1.0), cy = cfg(fns[f], sels[f], y, 2, 1.0, 1.0), co;
        char label[160];
        size_t d, out[2];
        int ok = 1;
        snprintf(label, sizeof label, "issue pair: exact %s accepts {0, -73.6} and {0, -72.6}", FN_NAMES[fns[f]]);
        TEST(label);
        for (d = 0; d < 200; d++) {
            out[0] = SENTINEL_Z;
            ok &= run_cfg(&rng, &cx, out, NULL) == DPMO_OK && out[0] < 2;
            out[0] = SENTINEL_Z;
            ok &= run_cfg(&rng, &cy, out, NULL) == DPMO_OK && out[0] < 2;
        }
        CHECK(ok);
        co = cfg(fns[f], sels[f], obs, 2, 1.0, 1.0);
        check_dist("on {0, -5.6}: the same tail where it is observable", &co, is_em ? em : pf, is_em ? pf : em,
                   60 + (unsigned)f);
    }
}

/* ================================================================== 3. extreme inputs */
#define LIMIT_SECONDS 10u /* each child takes milliseconds natively, about a second under valgrind */

/* Runs `body` in a child process with a time limit; the child's checks decide its exit status. */
static void bounded(const char *name, void (*body)(void)) {
    pid_t pid;
    int status = 0;
    TEST(name);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int failed_before = harness_failed;
        alarm(LIMIT_SECONDS);
        body();
        fflush(stdout);
        _exit(harness_failed == failed_before ? 0 : 1);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        CHECK(!"fork/waitpid failed");
        return;
    }
    if (WIFSIGNALED(status))
        printf("      the child %s (signal %d)\n", WTERMSIG(status) == SIGALRM ? "hung" : "crashed", WTERMSIG(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#define N_EPS 9
static const double EXTREME_EPS[N_EPS] = {1e-300, 1e-100, 1e-20, 1e-9, 1.0, 1e9, 1e20, 1e100, 1e300};
#define N_SETS 12
static double SETS[N_SETS][4];
static size_t SET_N[N_SETS];
static const char *SET_NAMES[N_SETS];

static void fill_sets(void) {
    const double two31 = 2147483648.0;
    double v[N_SETS][4] = {
        {DBL_MAX, -DBL_MAX, 0.0, DBL_MAX},
        {DBL_MAX, DBL_MAX, DBL_MAX, DBL_MAX},
        {-DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX * 0.5},
        {42.0, 0, 0, 0},
        {1e25, 1e25 - two31, 1e25 - 2.0 * two31, 1e25},
        {1.0, 1.0 + 1e-20, 1.0 + DBL_EPSILON, 1.0 - DBL_EPSILON / 2.0},
        {0.0, 1e-20, 2e-20, -1e-20},
        {4.9e-324, 0.0, -4.9e-324, DBL_MIN},
        {1e300, -1e-300, 1e-300, 0.0},
        {-1e308, 1e308, -1e308, 1e308},
        {0.0, -73.6, -72.6, -1e6},
        {5.0, 5.0, 5.0, 5.0},
    };
    const char *names[N_SETS] = {"±DBL_MAX",       "all DBL_MAX",        "all -DBL_MAX",     "n = 1",
                                 "1e25 - k 2^31",   "1 + 1e-20, 1 + eps", "multiples of 1e-20", "subnormals",
                                 "1e300 and ±1e-300", "±1e308",           "issue scores",       "all equal"};
    size_t i;
    memcpy(SETS, v, sizeof v);
    for (i = 0; i < N_SETS; i++) {
        SET_N[i] = i == 3 ? 1 : 4;
        SET_NAMES[i] = names[i];
    }
}

/* Every exact selecting function on every extreme set, ε and Δ: OK with valid indices, or a documented status
 * (OVERFLOW for a result beyond the library's fixed-width integers), with nothing written on failure. */
static unsigned long extreme_calls, extreme_ok, extreme_overflow;

static void extreme_one(const cfg_t *c, dpmo_rng *rng, const char *what) {
    size_t out[4] = {SENTINEL_Z, SENTINEL_Z, SENTINEL_Z, SENTINEL_Z}, i;
    dpmo_rng before = *rng;
    dpmo_status st = run_cfg(rng, c, out, NULL);
    extreme_calls++;
    if (st == DPMO_OK) {
        int ok = 1;
        extreme_ok++;
        for (i = 0; i < c->k; i++) ok &= out[i] < c->n && (i == 0 || out[i] != out[0]);
        ok &= out[c->k] == SENTINEL_Z;
        if (!harness_record(ok, __FILE__, __LINE__, "extreme input: valid indices"))
            printf("      %s %s\n", FN_NAMES[c->fn], what);
    } else {
        extreme_overflow += st == DPMO_OVERFLOW;
        if (!harness_record(st == DPMO_OVERFLOW, __FILE__, __LINE__, "extreme input: OK or OVERFLOW"))
            printf("      %s (selector %s) %s: %s\n", FN_NAMES[c->fn], selector_name(c->sel), what,
                   dpmo_status_message((uint32_t)st));
        if (!harness_record(out[0] == SENTINEL_Z && memcmp(&before, rng, sizeof before) == 0, __FILE__, __LINE__,
                            "extreme input: nothing written on failure"))
            printf("      %s %s\n", FN_NAMES[c->fn], what);
    }
}

/* For PrivPareto and PrivAgg: 0 = global, and local with max_distance 16; 1 = local with max_distance 0
 * (automatic saturation) only. */
static int g_auto_local;

static void extremes_of(int fn) {
    static const double sens_list[3] = {1.0, 1e-300, 1e300};
    double util[8];
    const double w[2] = {1.0, 1.0}, g[2] = {1.0, 1.0}, dl[4] = {1.0, 0.5, 2.0, 1.0};
    dpmo_sensitivity spec = make_spec(DPMO_DELTA_PER_CANDIDATE, dl, 4, 0, 2.0, 3), specs[2];
    dpmo_rng rng = make_rng(DPMO_RNG_XOSHIRO256PP, 70 + (unsigned)fn);
    size_t set, e, sv, v, i;
    char what[200];
    for (set = 0; set < N_SETS; set++)
        for (e = 0; e < N_EPS; e++)
            for (sv = 0; sv < 3; sv++)
                for (v = 0; v < 4; v++) {
                    cfg_t c = cfg(fn, 0, SETS[set], SET_N[set], sens_list[sv], EXTREME_EPS[e]);
                    snprintf(what, sizeof what, "on %s, ε %g, Δ %g, variant %zu", SET_NAMES[set], EXTREME_EPS[e],
                             sens_list[sv], v);
                    switch (fn) {
                    case F_EXP:
                    case F_PF:
                        if (v > 0) continue;
                        break;
                    case F_NM:
                        if (v > 1) continue;
                        c.sel = v ? DPMO_NOISE_EXPONENTIAL : DPMO_NOISE_GUMBEL;
                        break;
                    case F_TOPK:
                        c.sel = v < 2 ? v : v + 1; /* exponential, permute-and-flip, gumbel, exponential noise */
                        c.k = c.n > 1 ? 2 : 1;
                        break;
                    case F_GUMBEL:
                        if (v > 1) continue;
                        c.k = c.n > 1 && v ? 2 : 1;
                        break;
                    case F_LD:
                    case F_LD_TOPK:
                        if (sv > 0 && v > 1) continue; /* Δ comes from the spec */
                        spec = make_spec(DPMO_DELTA_PER_CANDIDATE, dl, c.n, 0, sens_list[sv] * 2.0, 3);
                        c.spec = &spec;
                        c.sel = (v & 1) ? DPMO_SELECTOR_PERMUTE_AND_FLIP : DPMO_SELECTOR_EXPONENTIAL;
                        c.damp = v >> 1;
                        c.k = fn == F_LD_TOPK && c.n > 1 ? 2 : 1;
                        break;
                    default:
                        if (sv > 0) continue;
                        if (g_auto_local && v < 2) continue;
                        for (i = 0; i < c.n; i++) util[2 * i] = util[2 * i + 1] = SETS[set][i];
                        c.s = util;
                        c.m = 2;
                        c.w = w;
                        c.g = g;
                        c.k = c.n > 1 && (v & 1) ? 2 : 1;
                        if (v >= 2) {
                            specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, dl, c.n, 0, 2.0, 3);
                            specs[1] = specs[0];
                            c.spec = specs;
                            c.damp = (uint32_t)(v & 1);
                            c.max_distance = g_auto_local ? 0 : 16;
                        }
                        break;
                    }
                    extreme_one(&c, &rng, what);
                }
}

static void ext_exp(void) { extremes_of(F_EXP); }
static void ext_pf(void) { extremes_of(F_PF); }
static void ext_nm(void) { extremes_of(F_NM); }
static void ext_topk(void) { extremes_of(F_TOPK); }
static void ext_gumbel(void) { extremes_of(F_GUMBEL); }
static void ext_ld(void) { extremes_of(F_LD); }
static void ext_ld_topk(void) { extremes_of(F_LD_TOPK); }
static void ext_pareto(void) { extremes_of(F_PARETO); }
static void ext_agg(void) { extremes_of(F_AGG); }
static void ext_pareto_auto(void) {
    g_auto_local = 1;
    extremes_of(F_PARETO);
}
static void ext_agg_auto(void) {
    g_auto_local = 1;
    extremes_of(F_AGG);
}

/* Regression: local PrivPareto with automatic saturation (max_distance 0) once walked the distances one by one
 * until δ^PS reached the candidates' utility gap when ε was small: n = 2, utilities (0, 0) and (G, G), δ_i = 1,
 * Δ_i = 2, t_max 3, ε = 1e-12 took 29 s at G = 1e7 (about 3 µs per distance; hours at the 2^32 - 1 cap). Now a
 * run of constant δ^PS is crossed in one step: G up to 1e12, both dampenings, well within the time limit. */
static void ext_pareto_far_apart(void) {
    static const double gaps[3] = {1e7, 1e9, 1e12};
    const double dl[2] = {1.0, 1.0};
    dpmo_sensitivity specs[2];
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 91);
    size_t i, damp;
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, dl, 2, 0, 2.0, 3);
    specs[1] = specs[0];
    for (i = 0; i < 3; i++)
        for (damp = 0; damp < 2; damp++) {
            double util[4] = {0.0, 0.0, gaps[i], gaps[i]};
            size_t out[2] = {SENTINEL_Z, SENTINEL_Z};
            cfg_t c = cfg(F_PARETO, DPMO_SELECTOR_EXPONENTIAL, util, 2, 0.0, 1e-12);
            c.m = 2;
            c.spec = specs;
            c.damp = (uint32_t)damp;
            CHECK_EQ(run_cfg(&rng, &c, out, NULL), DPMO_OK);
            CHECK(out[0] < 2 && out[1] == SENTINEL_Z);
        }
}

static void test_extremes(void) {
    fill_sets();
    bounded("extreme inputs: select_exponential", ext_exp);
    bounded("extreme inputs: select_permute_and_flip", ext_pf);
    bounded("extreme inputs: select_noisy_max (gumbel, exponential)", ext_nm);
    bounded("extreme inputs: select_top_k (4 exact selectors)", ext_topk);
    bounded("extreme inputs: select_top_k_gumbel (flags 0)", ext_gumbel);
    bounded("extreme inputs: select_local_dampening (plain, shifted)", ext_ld);
    bounded("extreme inputs: select_local_dampening_top_k", ext_ld_topk);
    bounded("extreme inputs: select_privpareto (global, local with max_distance 16)", ext_pareto);
    bounded("extreme inputs: select_privagg (global, local with max_distance 16)", ext_agg);
    bounded("extreme inputs: select_privpareto local, max_distance 0", ext_pareto_auto);
    bounded("extreme inputs: select_privagg local, max_distance 0", ext_agg_auto);
    bounded("automatic saturation with a tiny ε and huge utility gaps (regression)", ext_pareto_far_apart);
}

/* Where the exact result is defined at these scales, it is also the right one: the mechanism depends only on
 * (s_r - s_r') / Δ, which is ±1 here whatever the magnitudes. */
static void test_extreme_distributions(void) {
    const double two31 = 2147483648.0;
    struct {
        const char *name;
        double a, b, sens, eps;
    } cases[6] = {
        {"{1e25, 1e25 - 2^31}, Δ = 1, ε = 2^-30 (translated scores)", 1e25, 1e25 - two31, 1.0, 1.0 / (two31 / 2.0)},
        {"{1e-20, 0}, Δ = 1e-20 (differences of 1e-20)", 1e-20, 0.0, 1e-20, 2.0},
        {"{1 + 2^-52, 1}, Δ = 2^-52 (relative differences of 2e-16)", 1.0 + DBL_EPSILON, 1.0, DBL_EPSILON, 2.0},
        {"{1e-300, 0}, Δ = 1e-300", 1e-300, 0.0, 1e-300, 2.0},
        {"{2^-1074, 0}, Δ = 2^-1074 (subnormal)", 4.9406564584124654e-324, 0.0, 4.9406564584124654e-324, 2.0},
        {"{DBL_MAX, DBL_MAX - ulp}, Δ = ulp = 2^971", DBL_MAX, DBL_MAX - ldexp(1.0, 971), ldexp(1.0, 971), 2.0},
    };
    size_t i;
    for (i = 0; i < 6; i++) {
        /* γ = ε (a - b) / 2Δ = 1: P(b) = e^-1 / (1 + e^-1) for the exponential mechanism */
        const double s[2] = {cases[i].a, cases[i].b}, unit[2] = {1.0, 0.0};
        double em[2], pf[2];
        cfg_t c;
        TEST("extreme distributions: the case is exact in doubles");
        CHECK_DEQ(cases[i].a - cases[i].b, (i == 0 ? two31 : cases[i].sens));
        em_probs(unit, 2, 1.0, 2.0, em);
        pf_probs(unit, 2, 1.0, 2.0, pf);
        c = cfg(F_EXP, 0, s, 2, cases[i].sens, cases[i].eps);
        check_dist(cases[i].name, &c, em, pf, 80 + (unsigned)i);
        c = cfg(F_PF, 0, s, 2, cases[i].sens, cases[i].eps);
        check_dist(cases[i].name, &c, pf, em, 90 + (unsigned)i);
    }
}

/* ================================================================== 4. discrete Laplace */
/* P(z) = c e^{-a|z|}, a = g / b, c = (1 - e^-a) / (1 + e^-a); bins z = -Z .. Z and the two tails. */
#define DL_MAXBINS 203
static size_t dl_bins(double a, size_t *zmax) {
    size_t z = (size_t)ceil(12.0 / a);
    if (z > 100) z = 100;
    *zmax = z;
    return 2 * z + 3;
}
static void dl_probs(double a, size_t zmax, double *p) {
    const double c = (1.0 - exp(-a)) / (1.0 + exp(-a)), tail = exp(-a * (double)(zmax + 1)) / (1.0 + exp(-a));
    size_t i;
    p[0] = tail;
    for (i = 0; i <= 2 * zmax; i++) p[1 + i] = c * exp(-a * fabs((double)i - (double)zmax));
    p[2 * zmax + 2] = tail;
}
static size_t dl_bin(int64_t z, size_t zmax) {
    if (z < -(int64_t)zmax) return 0;
    if (z > (int64_t)zmax) return 2 * zmax + 2;
    return (size_t)(z + (int64_t)zmax) + 1;
}

static void test_discrete_laplace(void) {
    const double params[6][2] = {{1.0, 1.0}, {0.3, 0.1}, {2.5, 1.0}, {0.1, 0.3}, {7.0, 0.7}, {1.0 / 3.0, 1.0}};
    static int64_t z[4096];
    size_t t;
    for (t = 0; t < 6; t++) {
        const double b = params[t][0], g = params[t][1], a = g / b;
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 100 + (unsigned)t);
        unsigned long count[DL_MAXBINS], pos = 0, neg = 0, done = 0;
        double p[DL_MAXBINS], wrong[DL_MAXBINS];
        size_t zmax, bins = dl_bins(a, &zmax), i;
        char label[160];
        snprintf(label, sizeof label, "discrete laplace b = %g, g = %g: P(z) ∝ exp(-|z| g/b)", b, g);
        TEST(label);
        dl_probs(a, zmax, p);
        dl_probs(a * 1.1, zmax, wrong);
        CHECK(sums_to_one(p, bins, 1e-12));
        for (i = 0; i < bins; i++) count[i] = 0;
        while (done < DRAWS) {
            size_t chunk = DRAWS - done < 4096 ? (size_t)(DRAWS - done) : 4096;
            CHECK_STATUS(dpmo_sample_discrete_laplace(&rng, b, g, z, chunk), DPMO_OK);
            for (i = 0; i < chunk; i++) {
                count[dl_bin(z[i], zmax)]++;
                pos += z[i] > 0;
                neg += z[i] < 0;
            }
            done += chunk;
        }
        CHECK_CHI2(count, p, bins, DRAWS);
        if (powerful()) CHECK_CHI2_REJECTS(count, wrong, bins, DRAWS); /* a scale 10 % off is caught */
        /* symmetry: the sign of a non-zero draw is a fair coin (|pos - neg| within 4.9 standard deviations) */
        CHECK(fabs((double)pos - (double)neg) <= 4.9 * sqrt((double)(pos + neg)) + 1.0);
    }

    TEST("discrete laplace: granularity = scale 2^32 (the widest) and 2^-64 (the narrowest)");
    {
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 110);
        int64_t big[256], small[256];
        size_t i, zeros = 0, wide = 0;
        CHECK_STATUS(dpmo_sample_discrete_laplace(&rng, 4294967296.0, 1.0, big, 256), DPMO_OK);
        CHECK_STATUS(dpmo_sample_discrete_laplace(&rng, 1.0, 18446744073709551616.0, small, 256), DPMO_OK);
        for (i = 0; i < 256; i++) {
            wide += big[i] > 4194304 || big[i] < -4194304; /* |z| > 2^22: probability e^-(2^-10) ≈ 0.999 */
            zeros += small[i] == 0;
        }
        CHECK(wide > 240);
        CHECK_EQ(zeros, 256);
    }

    TEST("discrete laplace: bad arguments refused, nothing written, generator unchanged");
    {
        dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 111), bad;
        union {
            int64_t z[16];
            dpmo_rng r;
        } mem;
        int64_t out[8];
        const double bad_values[5] = {0.0, -1.0, nan_(), INFINITY, -0.0};
        size_t i;
        for (i = 0; i < 8; i++) out[i] = (int64_t)0x5A5A5A5A;
#define DL_FAILS(call, want)                                                                       \
    do {                                                                                           \
        guard(&rng, sizeof rng);                                                                   \
        guard(out, sizeof out);                                                                    \
        CHECK_STATUS(call, want);                                                                  \
        CHECK(guards_intact());                                                                    \
    } while (0)
        for (i = 0; i < 5; i++) {
            DL_FAILS(dpmo_sample_discrete_laplace(&rng, bad_values[i], 1.0, out, 8), DPMO_INVALID_ARGUMENT);
            DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, bad_values[i], out, 8), DPMO_INVALID_ARGUMENT);
        }
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 8589934592.0, 1.0, out, 8), DPMO_INVALID_ARGUMENT); /* 2^33 */
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, 36893488147419103232.0, out, 8),
                 DPMO_INVALID_ARGUMENT); /* 2^-65 */
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1e300, 1e-300, out, 8), DPMO_INVALID_ARGUMENT);
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, DBL_MAX, DBL_MAX, out, 0), DPMO_OK); /* ratio 1: fine */
        DL_FAILS(dpmo_sample_discrete_laplace(NULL, 1.0, 1.0, out, 8), DPMO_NULL_POINTER);
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, 1.0, NULL, 8), DPMO_NULL_POINTER);
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, 1.0, (int64_t *)misalign(out), 2), DPMO_INVALID_ARGUMENT);
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, 1.0, out, SIZE_MAX / 4), DPMO_OVERFLOW);
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, 1.0, (int64_t *)(void *)&rng, 1), DPMO_OVERLAPPING_BUFFERS);
        mem.r = make_rng(DPMO_RNG_CHACHA20, 112);
        guard(&mem, sizeof mem);
        CHECK_STATUS(dpmo_sample_discrete_laplace(&mem.r, 1.0, 1.0, mem.z + 4, 8), DPMO_OVERLAPPING_BUFFERS);
        CHECK(guards_intact());
        memset(&bad, 0, sizeof bad);
        guard(&bad, sizeof bad);
        DL_FAILS(dpmo_sample_discrete_laplace(&bad, 1.0, 1.0, out, 8), DPMO_INVALID_GENERATOR);
        CHECK(guards_intact());
        DL_FAILS(dpmo_sample_discrete_laplace(&rng, 1.0, 1.0, out, 0), DPMO_OK); /* count 0: nothing drawn */
        CHECK_STATUS(dpmo_sample_discrete_laplace(&rng, 1.0, 1.0, (int64_t *)(void *)(&rng + 1), 0), DPMO_OK);
#undef DL_FAILS
        TEST("discrete laplace: one key per call whatever the count and the noise; the generator advances");
        {
            dpmo_rng a = make_rng(DPMO_RNG_XOSHIRO256PP, 113), b2 = a, before = a;
            int64_t x[8], y[1];
            CHECK_STATUS(dpmo_sample_discrete_laplace(&a, 3.0, 1.0, x, 8), DPMO_OK);
            CHECK_STATUS(dpmo_sample_discrete_laplace(&b2, 1000.0, 1.0, y, 1), DPMO_OK);
            CHECK(memcmp(&a, &b2, sizeof a) == 0);
            CHECK(memcmp(&a, &before, sizeof a) != 0);
        }
    }
}

int main(int argc, char **argv) {
    const char *env = getenv("DPMO_TEST_DRAWS");
    const char *arg = argc > 1 ? argv[1] : env;
    if (arg != NULL && strtoul(arg, NULL, 10) > 0) DRAWS = strtoul(arg, NULL, 10);
    printf("test_exact: %lu draws per statistical test%s\n", DRAWS, powerful() ? "" : " (power checks skipped)");
    test_chi2_helper();
    test_global_selectors();
    test_top_k();
    test_local_dampening();
    test_privpareto();
    test_privagg();
    test_issue_pair();
    test_extreme_distributions();
    test_discrete_laplace();
    test_extremes();
    return HARNESS_FINISH();
}
