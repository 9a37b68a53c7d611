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

static void select_plain_delta_zero(void) {
    double scratch[2];
    size_t out = SENTINEL_Z;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 3);
    dpmo_sensitivity s = make_spec(DPMO_DELTA_PER_CANDIDATE, zero2, 2, 0, 1.0, SIZE_MAX);
    CHECK_STATUS(dpmo_select_local_dampening(&rng, u2, 2, &s, DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_EXPONENTIAL, 1.0,
                                             scratch, 2, NULL, 0, &out),
                 DPMO_OK);
}

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
    bounded("dampen shifted, per-candidate, t_max SIZE_MAX returns", shifted_per_candidate);
    return HARNESS_FINISH();
}
