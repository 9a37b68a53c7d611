#include <stdio.h>
#include "dpmo.h"

int main(void) {
    dpmo_rng rng;                                  /* 64 bytes, owned by you; no allocation anywhere */
    dpmo_budget budget;                            /* sequential composition: total epsilon 1 */
    if (dpmo_rng_init_os(&rng) != DPMO_OK || dpmo_budget_init(&budget, 1.0) != DPMO_OK) return 1;

    /* Private counts: one customer changes each count by at most 1 (sensitivity 1). */
    const double counts[4] = {120, 95, 130, 40};
    size_t chosen;
    dpmo_status st = dpmo_select_exponential(&rng, counts, 4, /*sensitivity*/ 1.0, /*epsilon*/ 0.5,
                                             &chosen, &budget);
    if (st != DPMO_OK) {
        fprintf(stderr, "dpmo: %s\n", dpmo_status_message(st));
        return 1;
    }

    /* Permute-and-flip is never less accurate than the exponential mechanism; it needs n indices of scratch. */
    size_t perm[4], second;
    st = dpmo_select_permute_and_flip(&rng, counts, 4, 1.0, 0.5, perm, 4, &second, &budget);
    if (st != DPMO_OK) {
        fprintf(stderr, "dpmo: %s\n", dpmo_status_message(st));
        return 1;
    }
    printf("featured %zu, then %zu; epsilon spent %.2f of %.2f\n", chosen, second, budget.spent, budget.total);
    return 0;
}
