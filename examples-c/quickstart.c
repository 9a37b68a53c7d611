/*
 * dpmo quickstart: an online shop privately chooses which product to feature on its home page.
 *
 * The shop knows, for each product, how many of its customers bought it. Those counts come from private
 * purchase histories, so publishing "the best-selling product" exactly would leak information about
 * individual customers. Differentially private selection publishes one product instead, chosen at random
 * with a bias towards good products, so that no single customer changes the odds of any outcome by more
 * than a factor e^epsilon. Every release costs epsilon; a dpmo_budget adds the costs up (sequential
 * composition) and refuses a release that would exceed the total.
 *
 * Part 1: utility = number of buyers. A customer counts at most once per product, so adding or removing
 *         one customer changes every count by at most 1: the global sensitivity is Delta = 1.
 * Part 2: utility = "word of mouth", the number of pairs of buyers. Its global sensitivity is huge, its
 *         local sensitivity small: local dampening, plain and shifted.
 *
 * Every selection runs in exact arithmetic (the default): each product is chosen with exactly the
 * probability of the mathematical mechanism, so the epsilon-DP guarantee holds in the arithmetic that runs.
 *
 * Build: make demo   (or: cc -std=c11 -Iinclude examples-c/quickstart.c target/release/libdpmo.a -o quickstart)
 */
#include "dpmo.h"

#include <stdio.h>
#include <stdlib.h>

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

static void print_probabilities(const char *title, const double *p) {
    printf("  %s\n", title);
    for (size_t i = 0; i < N_PRODUCTS; i++) {
        printf("    %-17s %6.2f %%  ", PRODUCTS[i], 100.0 * p[i]);
        for (int bar = 0; bar < (int)(p[i] * 50.0 + 0.5); bar++) putchar('#');
        putchar('\n');
    }
}

/*
 * Part 2's local sensitivity. The utility is u(r) = k(k - 1)/2 pairs for k buyers. One more customer adds k
 * pairs, so the change at this dataset is at most k (the local sensitivity at distance 0); a dataset t
 * customers away has at most k + t buyers, so the change there is at most k + t:
 *     delta(x, t, r) = k_r + t.
 * Local dampening needs delta to be *admissible* (Local Dampening paper, Def. 3.3):
 *   (1) delta(x, 0, r) >= |u(x, r) - u(y, r)| for every neighbour y      (k >= k or k - 1: yes), and
 *   (2) delta(x, t + 1, r) >= delta(y, t, r) for every neighbour y       (k + t + 1 >= (k +- 1) + t: yes).
 * The library clamps every value to the global sensitivity but cannot check admissibility: a delta that is
 * too small silently breaks the privacy guarantee. It must also be deterministic.
 */
static double pairs_local_sensitivity(void *context, size_t r, size_t t) {
    const double *buyers = (const double *)context;
    return buyers[r] + (double)t;
}

int main(void) {
    const double epsilon = 1.0; /* the privacy cost of one release */
    double probabilities[N_PRODUCTS], pairs[N_PRODUCTS], left;
    double scratch[2 * N_PRODUCTS];  /* one local-dampening selection: 2n doubles */
    size_t perm_scratch[N_PRODUCTS]; /* permute-and-flip: n indices */
    size_t chosen;
    dpmo_budget budget;
    dpmo_rng rng;

    printf("dpmo %s quickstart: which product should the shop feature?\n\n", dpmo_version());

    /* One generator per stream, seeded from the operating system (getrandom). ChaCha20, for releases. */
    check(dpmo_rng_init_os(&rng), "dpmo_rng_init_os");
    /* Four releases below at epsilon each: a total of 4 epsilon. */
    check(dpmo_budget_init(&budget, 4.0 * epsilon), "dpmo_budget_init");

    /* ---------------------------------------------------------------- Part 1: global sensitivity 1 */
    printf("Part 1: most buyers (sensitivity 1, epsilon %.1f per release)\n", epsilon);
    /* The output distribution, P(r) proportional to exp(epsilon * u(r) / (2 * Delta)). Not private: it is
     * computed from the data, and shown here only to explain the example. */
    check(dpmo_exponential_probabilities(BUYERS, N_PRODUCTS, 1.0, epsilon, probabilities),
          "dpmo_exponential_probabilities");
    print_probabilities("exponential mechanism, probabilities:", probabilities);

    check(dpmo_select_exponential(&rng, BUYERS, N_PRODUCTS, 1.0, epsilon, &chosen, &budget),
          "dpmo_select_exponential");
    printf("  -> exponential mechanism features: %s\n", PRODUCTS[chosen]);

    /* Permute-and-flip: the same privacy, never less accurate. It needs n entries of index scratch. */
    check(dpmo_select_permute_and_flip(&rng, BUYERS, N_PRODUCTS, 1.0, epsilon, perm_scratch, N_PRODUCTS, &chosen,
                                       &budget),
          "dpmo_select_permute_and_flip");
    printf("  -> permute-and-flip features:      %s\n\n", PRODUCTS[chosen]);

    /* ---------------------------------------------------------------- Part 2: local dampening */
    /*
     * Word of mouth: u(r) = number of pairs of buyers of product r. One customer can change it by N - 1 (a
     * product everybody bought), so the global sensitivity is Delta = 4999 and the exponential mechanism
     * must divide every score by that: the three best sellers look almost alike. Around *this* dataset the change is
     * at most k_r + t, far smaller. Local dampening rescales each score by its local sensitivity instead (the
     * dampened scores have sensitivity 1), so at the same epsilon the best product stands out much more.
     */
    for (size_t i = 0; i < N_PRODUCTS; i++) pairs[i] = BUYERS[i] * (BUYERS[i] - 1.0) / 2.0;

    dpmo_sensitivity delta = {0};
    delta.kind = DPMO_DELTA_CALLBACK;
    delta.callback = pairs_local_sensitivity;
    delta.context = (void *)BUYERS;
    delta.global = N_CUSTOMERS - 1.0;  /* every value is clamped to this */
    delta.t_max = (size_t)N_CUSTOMERS; /* from this distance on delta = Delta (k + t has reached it anyway) */

    printf("Part 2: most pairs of buyers (global sensitivity %.0f, epsilon %.1f per release)\n", delta.global,
           epsilon);
    check(dpmo_exponential_probabilities(pairs, N_PRODUCTS, delta.global, epsilon, probabilities),
          "dpmo_exponential_probabilities");
    print_probabilities("exponential mechanism with the global sensitivity:", probabilities);

    /* Plain local dampening (Def. 3.8), then permute-and-flip on the dampened scores. */
    check(dpmo_local_dampening_probabilities(pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_PLAIN, epsilon, probabilities),
          "dpmo_local_dampening_probabilities");
    print_probabilities("local dampening (plain), exponential selector:", probabilities);
    check(dpmo_select_local_dampening(&rng, pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_PLAIN,
                                      DPMO_SELECTOR_PERMUTE_AND_FLIP, epsilon, scratch, 2 * N_PRODUCTS, perm_scratch,
                                      N_PRODUCTS, &chosen, &budget),
          "dpmo_select_local_dampening");
    printf("  -> local dampening + permute-and-flip features: %s\n", PRODUCTS[chosen]);

    /* Shifted local dampening (Def. 4.3) avoids the "inversions" plain dampening can cause when products have
     * very different sensitivities (Example 4.1). Here the pair count grows with the buyer count, and the
     * shifted scores differ exactly like the buyer counts do: it recovers Part 1's ranking. */
    check(dpmo_local_dampening_probabilities(pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_SHIFTED, epsilon,
                                             probabilities),
          "dpmo_local_dampening_probabilities");
    print_probabilities("shifted local dampening, exponential selector:", probabilities);
    check(dpmo_select_local_dampening(&rng, pairs, N_PRODUCTS, &delta, DPMO_DAMPENING_SHIFTED,
                                      DPMO_SELECTOR_EXPONENTIAL, epsilon, scratch, 2 * N_PRODUCTS, NULL, 0, &chosen,
                                      &budget),
          "dpmo_select_local_dampening");
    printf("  -> shifted local dampening features: %s\n\n", PRODUCTS[chosen]);

    /* The budget is spent: a fifth release is refused, and nothing happens (no output, no randomness used). */
    dpmo_status refused = dpmo_select_exponential(&rng, BUYERS, N_PRODUCTS, 1.0, epsilon, &chosen, &budget);
    printf("A fifth release: %s\n", dpmo_status_message((uint32_t)refused));

    /* Sequential composition: the four releases together are (4 epsilon)-DP. */
    check(dpmo_budget_remaining(&budget, &left), "dpmo_budget_remaining");
    printf("Total privacy cost of the four releases above: epsilon = %.1f (budget %.1f, %.1f left)\n", budget.spent,
           budget.total, left);
    return refused == DPMO_BUDGET_EXHAUSTED ? EXIT_SUCCESS : EXIT_FAILURE;
}
