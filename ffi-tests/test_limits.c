/*
 * Calls that must return in bounded time whatever the (valid) arguments. Each case runs in a child process
 * under a watchdog (alarm): a child that does not finish within the limit is killed and the case counts as
 * failed. C only (uses POSIX fork/alarm/waitpid).
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIMIT_SECONDS 10u

/* Runs `body` in a child with a time limit; the child's own checks decide its exit status. */
static void bounded(const char *name, void (*body)(void)) {
    pid_t pid;
    int status = 0;
    TEST(name);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int failed_before = harness_failed; /* the counters were copied from the parent */
        alarm(LIMIT_SECONDS);
        body();
        fflush(stdout);
        _exit(harness_failed == failed_before ? 0 : 1);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        CHECK(!"fork/waitpid failed");
        return;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        printf("      the call did not return within %u s\n", LIMIT_SECONDS);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static double u2[2] = {1.0, 5.0}, zero2[2] = {0.0, 0.0}, tiny2[2] = {1e-300, 1e-300};

/* A per-candidate δ = 0 (a candidate whose utility cannot change) is valid, and t_max = SIZE_MAX is treated as
 * the documented maximum saturation distance 2^32 - 1. The dampened score has a closed form (T + u/Δ); a walk
 * over the breakpoints one by one would take 2^32 iterations. */
static void plain_delta_zero(void) {
    double out[2];
    dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, zero2, 2, 0, 1.0, SIZE_MAX);
    CHECK_STATUS(dpmo_dampen(u2, 2, &s, DPMO_DAMPENING_PLAIN, out), DPMO_OK);
    CHECK_DEQ(out[0], (double)UINT32_MAX + 1.0);
}

static void plain_delta_tiny(void) {
    double out[2];
    dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, tiny2, 2, 0, 1.0, SIZE_MAX);
    CHECK_STATUS(dpmo_dampen(u2, 2, &s, DPMO_DAMPENING_PLAIN, out), DPMO_OK);
}

/* Both arithmetics: the exact one computes the dampened score 2^32 - 1 + 5 as an integer, in closed form. */
static void select_plain_delta_zero(void) {
    double scratch[16];
    size_t out = SENTINEL_Z, k;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 3);
    dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, zero2, 2, 0, 1.0, SIZE_MAX);
    for (k = 0; k < 2; k++) {
        const uint32_t sel = DPMO_SELECTOR_EXPONENTIAL | (k ? DPMO_FLOAT : 0u);
        if (!CHECK(ld_values_len(2, 1, sel) <= 16)) continue;
        CHECK_STATUS(dpmo_select_local_dampening(&rng, u2, 2, &s, DPMO_DAMPENING_PLAIN, sel, 1.0, scratch,
                                                 ld_values_len(2, 1, sel), NULL, 0, &out, NULL),
                     DPMO_OK);
        CHECK(out < 2);
    }
}

/* The same in the multi-objective functions, whose δ is evaluated one distance at a time with automatic
 * saturation (max_distance = 0): PrivPareto stops as soon as every dampened score is determined; PrivAgg must
 * not walk 2^32 distances either when every δ_i is 0 up to t_max = SIZE_MAX (a per-candidate δ is constant up to
 * t_max, so the dampened score has a closed form, as dpmo_dampen uses). Regression: at 21c59e7
 * dpmo_select_privagg walked the distances one by one here, about 5 s per 10^8 distances in exact arithmetic
 * (~4 min for 2^32 - 1, 4x that in floating point). */
static const double MU[4] = {1.0, 5.0, 2.0, 0.0}, MW[2] = {1.0, 1.0};

static void select_multi_delta_zero(int privagg) {
    dpmo_sensitivity specs[2];
    double values[4096];
    size_t indices[4096], out[2], vl = 0, il = 0, k;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 4);
    specs[0] = make_spec(DPMO_DELTA_PER_CANDIDATE, zero2, 2, 0, 1.0, SIZE_MAX);
    specs[1] = specs[0];
    for (k = 0; k < 2; k++) {
        const uint32_t sel = DPMO_SELECTOR_EXPONENTIAL | (k ? DPMO_FLOAT : 0u);
        if (privagg) {
            CHECK_STATUS(dpmo_privagg_scratch_len(2, 2, &vl, &il), DPMO_OK);
            CHECK(vl <= 4096 && il <= 4096);
            CHECK_STATUS(dpmo_select_privagg(&rng, MU, 2, 2, MW, NULL, specs, 0, DPMO_DAMPENING_PLAIN, sel, 1.0, 1, out,
                                             values, vl, indices, il, NULL),
                         DPMO_OK);
            CHECK(out[0] < 2);
        } else {
            CHECK_STATUS(dpmo_privpareto_scratch_len(2, 2, &vl, &il), DPMO_OK);
            CHECK(vl <= 4096 && il <= 4096);
            CHECK_STATUS(dpmo_select_privpareto(&rng, MU, 2, 2, DPMO_DOMINANCE_TEXTBOOK, specs, 0, DPMO_DAMPENING_PLAIN,
                                                sel, 1.0, 2, out, values, vl, indices, il, NULL),
                         DPMO_OK);
            CHECK(out[0] < 2 && out[1] < 2 && out[0] != out[1]);
        }
    }
}
static void select_privpareto_delta_zero(void) { select_multi_delta_zero(0); }
static void select_privagg_delta_zero(void) { select_multi_delta_zero(1); }

static void shifted_per_candidate(void) {
    double out[2];
    dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, zero2, 2, 0, 1.0, SIZE_MAX);
    CHECK_STATUS(dpmo_dampen(u2, 2, &s, DPMO_DAMPENING_SHIFTED, out), DPMO_OK);
    CHECK_DEQ(out[0], 1.0 - (double)UINT32_MAX);
}

int main(void) {
    bounded("dampen plain, per-candidate delta 0, t_max SIZE_MAX returns", plain_delta_zero);
    bounded("dampen plain, per-candidate delta 1e-300, t_max SIZE_MAX returns", plain_delta_tiny);
    bounded("select_local_dampening plain, per-candidate delta 0, t_max SIZE_MAX returns", select_plain_delta_zero);
    bounded("select_privpareto local, delta 0, t_max SIZE_MAX, max_distance 0 returns", select_privpareto_delta_zero);
    bounded("select_privagg local, delta 0, t_max SIZE_MAX, max_distance 0 returns", select_privagg_delta_zero);
    bounded("dampen shifted, per-candidate, t_max SIZE_MAX returns", shifted_per_candidate);
    return HARNESS_FINISH();
}
