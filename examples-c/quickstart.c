/*
 * dpmo quickstart: an online shop privately chooses which product to feature on its home page.
 *
 * The shop knows, for each product, how many of its customers bought it. Those counts are computed from
 * private purchase histories, so publishing "the best-selling product" exactly would leak information about
 * individual customers. Differentially private selection publishes one product index instead, chosen at
 * random with a bias towards good products, so that no single customer's history changes the outcome
 * distribution by more than a factor e^epsilon.
 *
 * Part 1: utility = number of buyers. Each customer counts at most once per product, so adding or removing
 *         one customer changes every count by at most 1: the global sensitivity is Delta = 1. We select with
 *         the exponential mechanism and with permute-and-flip, and print the exact probabilities.
 * Part 2: utility = "word of mouth", the number of pairs of buyers of the product. Its global sensitivity is
 *         huge, but its local sensitivity is small: local dampening, plain and shifted.
 *
 * Build: make demo   (or: cc -std=c11 -Wall -Wextra -pedantic -Iinclude examples-c/quickstart.c
 *                         target/release/libdpmo.a -o build/quickstart)
 */
#define _DEFAULT_SOURCE /* getrandom() under -std=c11 */
#include "dpmo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#define N_PRODUCTS 8
#define N_CUSTOMERS 5000.0

static const char *const PRODUCTS[N_PRODUCTS] = {
    "wireless earbuds", "espresso machine", "running shoes", "desk lamp",
    "yoga mat",         "board game",       "water bottle",  "phone charger",
};

/* Private data: how many distinct customers bought each product. */
static const double BUYERS[N_PRODUCTS] = {1204, 950, 1201, 400, 90, 15, 600, 1198};

/* Every dpmo function returns a status; stop with its sentence on any error. */
static void check(dpmo_status status, const char *what) {
    if (status != DPMO_OK) {
        fprintf(stderr, "quickstart: %s failed: %s\n", what, dpmo_status_message((uint32_t)status));
        exit(EXIT_FAILURE);
    }
}

/* 32 bytes from the operating system's secure source: getrandom(2), else /dev/urandom. A fixed seed would
 * make the "random" choice predictable, which voids the privacy guarantee. */
static void secure_seed(uint8_t seed[32]) {
    size_t got = 0;
    while (got < 32) {
        ssize_t r = getrandom(seed + got, 32 - got, 0);
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got < 32) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (f == NULL || fread(seed, 1, 32, f) != 32) {
            fprintf(stderr, "quickstart: no secure random source\n");
            exit(EXIT_FAILURE);
        }
        fclose(f);
    }
}

static void print_probabilities(const char *title, const double *p) {
    size_t r;
    printf("  %s\n", title);
    for (size_t i = 0; i < N_PRODUCTS; i++) {
        printf("    %-17s %6.2f %%  ", PRODUCTS[i], 100.0 * p[i]);
        for (r = 0; r < (size_t)(p[i] * 50.0 + 0.5); r++) putchar('#');
        putchar('\n');
    }
}

/*
 * Part 2's local sensitivity. The utility is u(r) = k(k - 1)/2 pairs for k buyers. One more customer adds k
 * pairs, so the change at this dataset is at most k (the local sensitivity at distance 0), and on a dataset
 * t customers away the count is at most k + t, so the change there is at most k + t:
 *     delta(x, t, r) = k_r + t.
 * Local dampening needs delta to be *admissible* (Local Dampening paper, Def. 3.3):
 *   (1) delta(x, 0, r) >= |u(x, r) - u(y, r)| for every neighbour y      (k >= k or k - 1: yes), and
 *   (2) delta(x, t + 1, r) >= delta(y, t, r) for every neighbour y       (k + t + 1 >= (k +- 1) + t: yes).
 * The library clamps every value to the global sensitivity and cannot check admissibility: a delta that
 * is too small silently breaks the privacy guarantee, so derive it carefully (or use the library's own
 * sensitivity functions when one fits). It must also be deterministic.
 */
static double pairs_local_sensitivity(void *context, size_t r, size_t t) {
    const double *buyers = (const double *)context;
    return buyers[r] + (double)t;
}

int main(void) {
    const double epsilon = 1.0; /* the privacy cost of one release */
    double probabilities[N_PRODUCTS], scratch[N_PRODUCTS], pairs[N_PRODUCTS];
    size_t perm_scratch[N_PRODUCTS], chosen;
    uint8_t seed[32];
    dpmo_rng rng;

    printf("dpmo %s quickstart: which product should the shop feature?\n\n", dpmo_version());

    /* One generator state per stream, seeded once from the OS. ChaCha20 is the generator for releases. */
    secure_seed(seed);
    check(dpmo_rng_init(&rng, DPMO_RNG_CHACHA20, seed), "dpmo_rng_init");

    /* ---------------------------------------------------------------- Part 1: global sensitivity 1 */
    printf("Part 1: most buyers (sensitivity 1, epsilon %.1f)\n", epsilon);
    /* The exact output distribution, P(r) proportional to exp(epsilon * u(r) / (2 * Delta)). */
    check(dpmo_exponential_probabilities(BUYERS, N_PRODUCTS, 1.0, epsilon, probabilities),
          "dpmo_exponential_probabilities");
    print_probabilities("exponential mechanism, exact probabilities:", probabilities);

    check(dpmo_select_exponential(&rng, BUYERS, N_PRODUCTS, 1.0, epsilon, &chosen), "dpmo_select_exponential");
    printf("  -> exponential mechanism features: %s\n", PRODUCTS[chosen]);

    /* Permute-and-flip: the same privacy, never less accurate. It needs n entries of index scratch. */
    check(dpmo_select_permute_and_flip(&rng, BUYERS, N_PRODUCTS, 1.0, epsilon, perm_scratch, N_PRODUCTS, &chosen),
          "dpmo_select_permute_and_flip");
    printf("  -> permute-and-flip features:      %s\n\n", PRODUCTS[chosen]);

    /* ---------------------------------------------------------------- Part 2: local dampening */
    /*
     * Word of mouth: u(r) = number of pairs of buyers of product r. In the worst case one customer changes it
     * by N - 1 (a product everybody bought), so the global sensitivity is Delta = 4999 and the exponential
     * mechanism must divide every score by that: the products look almost alike. Around *this* dataset the
     * change is at most k_r + t (see pairs_local_sensitivity), far smaller. Local dampening rescales each
     * score by its local sensitivity instead of the global one (the dampened scores have sensitivity 1), so
     * at the same epsilon the best product stands out much more.
     */
    for (size_t i = 0; i < N_PRODUCTS; i++) pairs[i] = BUYERS[i] * (BUYERS[i] - 1.0) / 2.0;

    dpmo_sensitivity delta = {0};
    delta.kind = DPMO_DELTA_CALLBACK;
    delta.callback = pairs_local_sensitivity;
    delta.context = (void *)BUYERS;
    delta.global = N_CUSTOMERS - 1.0; /* every value is clamped to this */
    delta.t_max = (size_t)N_CUSTOMERS; /* from this distance on delta = Delta (k + t has reached it anyway) */

    printf("Part 2: most pairs of buyers (global sensitivity %.0f, epsilon %.1f)\n", delta.global, epsilon);
    check(dpmo_exponential_probabilities(pairs, N_PRODUCTS, delta.global, epsilon, probabilities),
          "dpmo_exponential_probabilities");
    print_probabilities("exponential mechanism with the global sensitivity:", probabilities);

    /* Plain local dampening (Def. 3.8): exact probabilities, then a selection. Any selector may follow the
     * dampening; permute-and-flip is used here. */
    check(dpmo_local_dampening_probabilities(pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_PLAIN, epsilon, probabilities),
          "dpmo_local_dampening_probabilities");
    print_probabilities("local dampening (plain), exponential selector:", probabilities);
    check(dpmo_select_local_dampening(&rng, pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_PLAIN,
                                      DPMO_SELECTOR_PERMUTE_AND_FLIP, epsilon, scratch, N_PRODUCTS, perm_scratch,
                                      N_PRODUCTS, &chosen),
          "dpmo_select_local_dampening");
    printf("  -> local dampening + permute-and-flip features: %s\n", PRODUCTS[chosen]);

    /* Shifted local dampening (Def. 4.3) avoids the "inversions" plain dampening can cause when products
     * have very different sensitivities (a higher utility with a larger sensitivity dampened below a lower
     * one, Example 4.1). Here the pair count is an increasing function of the buyer count, and the shifted
     * scores differ exactly like the buyer counts do: it recovers the sensitivity-1 ranking of Part 1. */
    check(dpmo_local_dampening_probabilities(pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_SHIFTED, epsilon,
                                             probabilities),
          "dpmo_local_dampening_probabilities");
    print_probabilities("shifted local dampening, exponential selector:", probabilities);
    check(dpmo_select_local_dampening(&rng, pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_SHIFTED,
                                      DPMO_SELECTOR_EXPONENTIAL, epsilon, scratch, N_PRODUCTS, NULL, 0, &chosen),
          "dpmo_select_local_dampening");
    printf("  -> shifted local dampening features: %s\n\n", PRODUCTS[chosen]);

    /* Each release above cost epsilon; by sequential composition the whole demo spent 5 * epsilon. A real
     * shop would make one release per decision and account for the total. */
    printf("Private selection: feature \"%s\" (privacy cost of this release: epsilon = %.1f)\n", PRODUCTS[chosen],
           epsilon);
    return 0;
}
