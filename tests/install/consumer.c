/* An outside program built against an installed dpmo (`make install-test`): checks that the header and the
 * library it runs with agree, then makes one exact selection charged to a budget. */
#include <dpmo.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", DPMO_VERSION_MAJOR, DPMO_VERSION_MINOR, DPMO_VERSION_PATCH);
    if (strcmp(header, dpmo_version()) != 0) {
        fprintf(stderr, "header %s but library %s\n", header, dpmo_version());
        return 1;
    }
    dpmo_rng rng;
    dpmo_budget budget;
    if (dpmo_rng_init_os(&rng) != DPMO_OK || dpmo_budget_init(&budget, 1.0) != DPMO_OK) return 1;
    const double counts[4] = {120, 95, 130, 40};
    size_t chosen;
    dpmo_status st = dpmo_select_exponential(&rng, counts, 4, 1.0, 0.5, &chosen, &budget);
    if (st != DPMO_OK) {
        fprintf(stderr, "dpmo: %s\n", dpmo_status_message(st));
        return 1;
    }
    double left;
    dpmo_budget_remaining(&budget, &left);
    printf("dpmo %s: candidate %zu chosen, epsilon left %.2f\n", dpmo_version(), chosen, left);
    return left == 0.5 ? 0 : 1;
}
