/*
 * A tiny test harness for the dpmo C tests. Header-only; valid C11 and C++17.
 *
 *   TEST(name)            starts a named group (its name is printed with every failure inside it)
 *   CHECK(cond)           one check
 *   CHECK_EQ(a, b)        integer equality (statuses, indices, sizes), prints both values on failure
 *   CHECK_STATUS(call, s) the call returns dpmo_status s, prints both statuses by name on failure
 *   CHECK_NEAR(a, b, tol) |a - b| <= tol for doubles (false for NaN)
 *   CHECK_DEQ(a, b)       exact (bitwise-equal value) double equality
 *   HARNESS_FINISH()      prints the final line "N passed, N failed" and evaluates to the exit code
 *
 * The final line format is parsed by CI: keep it exactly "%d passed, %d failed".
 */
#ifndef DPMO_FFI_TEST_HARNESS_H
#define DPMO_FFI_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

static int harness_passed = 0;
static int harness_failed = 0;
static const char *harness_test = "(none)";

#define TEST(name) (harness_test = (name))

static int harness_record(int ok, const char *file, int line, const char *what) {
    if (ok) {
        harness_passed++;
    } else {
        harness_failed++;
        printf("FAIL [%s] %s:%d: %s\n", harness_test, file, line, what);
        fflush(stdout);
    }
    return ok;
}

#define CHECK(cond) harness_record((cond) ? 1 : 0, __FILE__, __LINE__, #cond)

#define CHECK_EQ(a, b)                                                                              \
    do {                                                                                            \
        long long harness_a_ = (long long)(a), harness_b_ = (long long)(b);                         \
        if (!harness_record(harness_a_ == harness_b_, __FILE__, __LINE__, #a " == " #b))            \
            printf("      got %lld, expected %lld\n", harness_a_, harness_b_);                      \
    } while (0)

#define CHECK_STATUS(call, expected)                                                                \
    do {                                                                                            \
        int harness_s_ = (int)(call), harness_e_ = (int)(expected);                                 \
        if (!harness_record(harness_s_ == harness_e_, __FILE__, __LINE__, #call " == " #expected))  \
            printf("      got status %d (%s), expected %d (%s)\n", harness_s_,                      \
                   dpmo_status_message((uint32_t)harness_s_), harness_e_,                           \
                   dpmo_status_message((uint32_t)harness_e_));                                      \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                       \
    do {                                                                                            \
        double harness_x_ = (double)(a), harness_y_ = (double)(b), harness_t_ = (double)(tol);      \
        double harness_d_ = harness_x_ > harness_y_ ? harness_x_ - harness_y_ : harness_y_ - harness_x_; \
        if (!harness_record(harness_d_ <= harness_t_, __FILE__, __LINE__, #a " ~= " #b))            \
            printf("      got %.17g, expected %.17g (tolerance %g)\n", harness_x_, harness_y_,      \
                   harness_t_);                                                                     \
    } while (0)

#define CHECK_DEQ(a, b)                                                                             \
    do {                                                                                            \
        double harness_x_ = (double)(a), harness_y_ = (double)(b);                                  \
        if (!harness_record(harness_x_ == harness_y_, __FILE__, __LINE__, #a " == " #b))            \
            printf("      got %.17g, expected %.17g\n", harness_x_, harness_y_);                    \
    } while (0)

#define HARNESS_FINISH()                                                                            \
    (printf("%d passed, %d failed\n", harness_passed, harness_failed), fflush(stdout),              \
     harness_failed == 0 ? 0 : 1)

#endif /* DPMO_FFI_TEST_HARNESS_H */
