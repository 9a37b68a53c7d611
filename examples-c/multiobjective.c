/*
 * dpmo multi-objective example: privately pick the most influential accounts of a small social network.
 *
 * A platform wants to feature three "influential" accounts. Influence has two sides here:
 *   - degree: how many friends an account has (reach);
 *   - egocentric density: how tightly its friends know each other (a cohesive community trusts it).
 * The friendship graph is private: publishing the exact top accounts would reveal information about
 * individual friendships. Under edge differential privacy (neighbouring graphs differ in one friendship),
 * each release below is epsilon-DP, and a dpmo_budget adds the epsilons up (sequential composition) and
 * refuses any release that would exceed the total.
 *
 * Four mechanisms, each picking a top 3 without replacement (3 rounds at epsilon / 3 each):
 *   1. PrivPareto, global: the Pareto score PS(r) = -(number of accounts dominating r in both objectives)
 *      (PrivPareto paper, Def. 4.3), selected with its global sensitivity n - 1.
 *   2. PrivPareto, local: the Pareto score dampened with delta^PS (Def. 4.5, Thm. 4.7), built from the
 *      admissible local sensitivities of degree (delta = 1) and egodensity (min(1, 2 / (d - t - 2)), 1 when
 *      d - t - 2 <= 0), then selected with sensitivity 1.
 *   3. PrivAgg, global: the weighted sum degree + 100 * egodensity (§5), sensitivity 1 * 1 + 100 * 1.
 *   4. PrivAgg, local: the same sum dampened with delta_agg = 1 * delta_degree + 100 * delta_egodensity.
 *
 * Build: make examples   (or: cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -Iinclude
 *                             examples-c/multiobjective.c target/release/libdpmo.a -o build/multiobjective)
 */
#include "dpmo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N_ACCOUNTS 40
#define N_OBJECTIVES 2
#define TOP_K 3
/* Distances t < COLUMNS of the objectives' local sensitivities are tabulated; beyond, delta is the global
 * sensitivity. Egodensity's delta reaches 1 once d - t - 2 <= 2, so a few more columns than the largest degree
 * lose nothing. (The combined delta^PS and delta_agg are never tabulated: the selections evaluate them one
 * distance at a time, as far as needed, with max_distance = 0.) */
#define COLUMNS 16

/* Account handles (public: only their friendships are private). */
static const char *const HANDLES[N_ACCOUNTS] = {
    "@ada",   "@bo",    "@cy",    "@dee",   "@eli",   "@fay",   "@gus",   "@hal",   "@ivy",   "@jo",
    "@kai",   "@lou",   "@max",   "@nia",   "@oz",    "@pam",   "@quin",  "@rae",   "@sol",   "@tess",
    "@uma",   "@vic",   "@wes",   "@xan",   "@yara",  "@zed",   "@abe",   "@bea",   "@cal",   "@dot",
    "@emil",  "@flo",   "@gil",   "@hana",  "@ike",   "@jan",   "@kit",   "@lea",   "@moe",   "@ned",
};

/* The private data: 75 undirected friendships. @ada is a hub whose friends barely know each other; @kai,
 * @max, @nia, @oz, @pam and @quin form a tight clique; @uma runs a star; the rest are a ring with chords. */
static const uint32_t EDGES[][2] = {
    {0, 1},   {0, 2},   {0, 3},   {0, 4},   {0, 5},   {0, 6},   {0, 7},   {0, 8},   {0, 9},   {0, 10},
    {0, 20},  {0, 30},  {1, 7},   {1, 9},   {2, 6},   {2, 9},   {3, 6},   {3, 12},  {5, 33},  {7, 27},
    {10, 11}, {10, 12}, {10, 13}, {10, 14}, {10, 15}, {10, 16}, {10, 17}, {10, 20}, {11, 12}, {11, 14},
    {11, 15}, {11, 16}, {11, 39}, {12, 13}, {12, 14}, {12, 15}, {12, 16}, {12, 18}, {13, 14}, {13, 15},
    {13, 16}, {13, 25}, {14, 15}, {14, 16}, {15, 16}, {15, 19}, {16, 36}, {17, 18}, {20, 21}, {20, 22},
    {20, 23}, {20, 24}, {20, 25}, {20, 26}, {20, 27}, {20, 28}, {20, 29}, {20, 30}, {21, 24}, {21, 26},
    {21, 28}, {21, 38}, {30, 31}, {30, 35}, {30, 39}, {31, 32}, {31, 34}, {32, 33}, {32, 37}, {33, 34},
    {34, 35}, {35, 36}, {36, 37}, {37, 38}, {38, 39},
};
#define N_EDGES (sizeof EDGES / sizeof EDGES[0])

/* Every dpmo function returns a status; stop with its sentence on any unexpected error. */
static void check(dpmo_status status, const char *what) {
    if (status != DPMO_OK) {
        fprintf(stderr, "multiobjective: %s failed: %s\n", what, dpmo_status_message((uint32_t)status));
        exit(EXIT_FAILURE);
    }
}

static void *alloc(size_t count, size_t size) {
    void *p = calloc(count == 0 ? 1 : count, size);
    if (p == NULL) {
        fprintf(stderr, "multiobjective: out of memory\n");
        exit(EXIT_FAILURE);
    }
    return p;
}

/* The graph in CSR form, as dpmo's graph functions take it: node v's friends are
 * neighbours[offsets[v] .. offsets[v + 1]], sorted ascending, every friendship stored in both directions. */
static size_t offsets[N_ACCOUNTS + 1];
static uint32_t neighbours[2 * N_EDGES];

static void build_csr(void) {
    size_t fill[N_ACCOUNTS] = {0}, e, v, i, j;
    for (e = 0; e < N_EDGES; e++) {
        offsets[EDGES[e][0] + 1]++;
        offsets[EDGES[e][1] + 1]++;
    }
    for (v = 0; v < N_ACCOUNTS; v++) offsets[v + 1] += offsets[v];
    for (e = 0; e < N_EDGES; e++) {
        uint32_t a = EDGES[e][0], b = EDGES[e][1];
        neighbours[offsets[a] + fill[a]++] = b;
        neighbours[offsets[b] + fill[b]++] = a;
    }
    for (v = 0; v < N_ACCOUNTS; v++) /* insertion sort of each (short) list */
        for (i = offsets[v] + 1; i < offsets[v + 1]; i++)
            for (j = i; j > offsets[v] && neighbours[j - 1] > neighbours[j]; j--) {
                uint32_t t = neighbours[j];
                neighbours[j] = neighbours[j - 1];
                neighbours[j - 1] = t;
            }
    check(dpmo_graph_validate(offsets, N_ACCOUNTS, neighbours, 2 * N_EDGES), "dpmo_graph_validate");
}

static double degree[N_ACCOUNTS], egodensity[N_ACCOUNTS];

static void print_pick(const char *title, const size_t *picks, const dpmo_budget *budget) {
    double left;
    size_t i;
    check(dpmo_budget_remaining(budget, &left), "dpmo_budget_remaining");
    printf("  %-34s", title);
    for (i = 0; i < TOP_K; i++)
        printf(" %-6s (deg %2.0f, ego %.2f)%s", HANDLES[picks[i]], degree[picks[i]], egodensity[picks[i]],
               i + 1 < TOP_K ? "," : "");
    printf("\n  %-34s budget left: %.2f of %.2f\n", "", left, budget->total);
}

int main(void) {
    const double epsilon = 3.0; /* privacy cost of each top-3 release (1 per pick) */
    const double weights[N_OBJECTIVES] = {1.0, 100.0};
    const double globals[N_OBJECTIVES] = {DPMO_DEGREE_GLOBAL_SENSITIVITY, DPMO_EGODENSITY_GLOBAL_SENSITIVITY};
    double utilities[N_ACCOUNTS * N_OBJECTIVES], scores[N_ACCOUNTS];
    double degree_delta[N_ACCOUNTS * COLUMNS], ego_delta[N_ACCOUNTS * COLUMNS];
    size_t picks[TOP_K], values_len, indices_len, len, v, front = 0;
    dpmo_sensitivity deltas[N_OBJECTIVES] = {{0}};
    dpmo_budget budget;
    dpmo_status status;
    dpmo_rng rng;
    double *values;
    size_t *indices;

    printf("dpmo %s: which %d accounts of a %d-account network are most influential?\n\n", dpmo_version(), TOP_K,
           N_ACCOUNTS);

    /* A ChaCha20 generator seeded from the operating system (getrandom). */
    check(dpmo_rng_init_os(&rng), "dpmo_rng_init_os");
    /* Four releases of epsilon each: a total of 4 epsilon. */
    check(dpmo_budget_init(&budget, 4.0 * epsilon), "dpmo_budget_init");

    /* ------------------------------------------------------------ the two objectives, row-major n x m */
    build_csr();
    check(dpmo_degree(offsets, N_ACCOUNTS, neighbours, 2 * N_EDGES, degree), "dpmo_degree");
    check(dpmo_egodensity(offsets, N_ACCOUNTS, neighbours, 2 * N_EDGES, egodensity), "dpmo_egodensity");
    for (v = 0; v < N_ACCOUNTS; v++) {
        utilities[v * N_OBJECTIVES + 0] = degree[v];
        utilities[v * N_OBJECTIVES + 1] = egodensity[v];
    }

    /* For orientation only (NOT private, never publish it): the exact Pareto front. */
    check(dpmo_pareto_scores_scratch_len(N_ACCOUNTS, N_OBJECTIVES, &len), "dpmo_pareto_scores_scratch_len");
    indices = (size_t *)alloc(len, sizeof *indices);
    check(dpmo_pareto_scores(utilities, N_ACCOUNTS, N_OBJECTIVES, DPMO_DOMINANCE_TEXTBOOK, scores, indices, len),
          "dpmo_pareto_scores");
    free(indices);
    printf("Exact Pareto front (private data, shown only to explain the example):\n ");
    for (v = 0; v < N_ACCOUNTS; v++)
        if (scores[v] == 0.0) {
            printf(" %s (deg %.0f, ego %.2f)", HANDLES[v], degree[v], egodensity[v]);
            front++;
        }
    printf("\n  %zu accounts dominated by nobody.\n\n", front);

    /* ------------------------------------------------------------ local sensitivities, one spec per objective */
    /* delta tables with the library's rules (edge-DP): degree 1; egodensity min(1, 2 / (d - t - 2)). */
    check(dpmo_degree_delta_table(offsets, N_ACCOUNTS, neighbours, 2 * N_EDGES, COLUMNS, degree_delta),
          "dpmo_degree_delta_table");
    check(dpmo_egodensity_delta_table(offsets, N_ACCOUNTS, neighbours, 2 * N_EDGES, COLUMNS, ego_delta),
          "dpmo_egodensity_delta_table");
    deltas[0].kind = DPMO_DELTA_TABLE;
    deltas[0].values = degree_delta;
    deltas[0].values_len = N_ACCOUNTS * COLUMNS;
    deltas[0].columns = COLUMNS;
    deltas[0].global = DPMO_DEGREE_GLOBAL_SENSITIVITY;
    deltas[0].t_max = COLUMNS;
    deltas[1] = deltas[0];
    deltas[1].values = ego_delta;
    deltas[1].global = DPMO_EGODENSITY_GLOBAL_SENSITIVITY;

    /* One work space large enough for every call below (PrivPareto's is the larger). */
    check(dpmo_privpareto_scratch_len(N_ACCOUNTS, N_OBJECTIVES, &values_len, &indices_len),
          "dpmo_privpareto_scratch_len");
    {
        size_t agg_values, agg_indices;
        check(dpmo_privagg_scratch_len(N_ACCOUNTS, N_OBJECTIVES, &agg_values, &agg_indices),
              "dpmo_privagg_scratch_len");
        if (agg_values > values_len) values_len = agg_values;
        if (agg_indices > indices_len) indices_len = agg_indices;
    }
    values = (double *)alloc(values_len, sizeof *values);
    indices = (size_t *)alloc(indices_len, sizeof *indices);

    printf("Private top %d, epsilon %.1f per release (%.2f per pick), budget %.1f:\n", TOP_K, epsilon,
           epsilon / TOP_K, budget.total);

    /* 1. PrivPareto, global sensitivity (deltas = NULL): Δ = n - 1 makes every score change look huge, so the
     *    picks are close to uniform at this epsilon. Permute-and-flip is never worse than exponential. */
    check(dpmo_select_privpareto(&rng, utilities, N_ACCOUNTS, N_OBJECTIVES, DPMO_DOMINANCE_TEXTBOOK, NULL, 0,
                                 DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_PERMUTE_AND_FLIP, epsilon, TOP_K, picks, values,
                                 values_len, indices, indices_len, &budget),
          "dpmo_select_privpareto (global)");
    print_pick("PrivPareto, global:", picks, &budget);

    /* 2. PrivPareto, local: one friendship rarely changes who dominates whom, and delta^PS says so. Plain
     *    dampening (Local Dampening paper, Def. 3.6); DPMO_DAMPENING_SHIFTED avoids inversions between
     *    candidates of very different sensitivities, which does not pay off on this graph. max_distance 0:
     *    delta^PS is followed as far as the dampened scores need (automatic saturation). */
    check(dpmo_select_privpareto(&rng, utilities, N_ACCOUNTS, N_OBJECTIVES, DPMO_DOMINANCE_TEXTBOOK, deltas, 0,
                                 DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_PERMUTE_AND_FLIP, epsilon, TOP_K, picks,
                                 values, values_len, indices, indices_len, &budget),
          "dpmo_select_privpareto (local)");
    print_pick("PrivPareto, local (delta^PS):", picks, &budget);

    /* 3. PrivAgg, global: u = degree + 100 * egodensity, Δ = 1 * 1 + 100 * 1. */
    check(dpmo_select_privagg(&rng, utilities, N_ACCOUNTS, N_OBJECTIVES, weights, globals, NULL, 0,
                              DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_PERMUTE_AND_FLIP, epsilon, TOP_K, picks, values,
                              values_len, indices, indices_len, &budget),
          "dpmo_select_privagg (global)");
    print_pick("PrivAgg 1:100, global:", picks, &budget);

    /* 4. PrivAgg, local: delta_agg = 1 * delta_degree + 100 * delta_egodensity, dampened. */
    check(dpmo_select_privagg(&rng, utilities, N_ACCOUNTS, N_OBJECTIVES, weights, NULL, deltas, 0,
                              DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_PERMUTE_AND_FLIP, epsilon, TOP_K, picks, values,
                              values_len, indices, indices_len, &budget),
          "dpmo_select_privagg (local)");
    print_pick("PrivAgg 1:100, local (delta_agg):", picks, &budget);

    /* Diagnostics, NOT private (computed from the private graph, for the reader of this example only): the
     * exact probability that the first pick is on the Pareto front, for each mechanism at epsilon / 3. */
    {
        double p[4][N_ACCOUNTS], mass[4] = {0, 0, 0, 0};
        const char *const names[4] = {"PrivPareto global", "PrivPareto local", "PrivAgg global", "PrivAgg local"};
        size_t m;
        check(dpmo_privpareto_probabilities(utilities, N_ACCOUNTS, N_OBJECTIVES, DPMO_DOMINANCE_TEXTBOOK, NULL, 0,
                                            DPMO_DAMPENING_PLAIN, epsilon / TOP_K, p[0], values, values_len, indices,
                                            indices_len),
              "dpmo_privpareto_probabilities (global)");
        check(dpmo_privpareto_probabilities(utilities, N_ACCOUNTS, N_OBJECTIVES, DPMO_DOMINANCE_TEXTBOOK, deltas, 0,
                                            DPMO_DAMPENING_PLAIN, epsilon / TOP_K, p[1], values, values_len, indices,
                                            indices_len),
              "dpmo_privpareto_probabilities (local)");
        check(dpmo_privagg_probabilities(utilities, N_ACCOUNTS, N_OBJECTIVES, weights, globals, NULL, 0,
                                         DPMO_DAMPENING_PLAIN, epsilon / TOP_K, p[2], values, values_len),
              "dpmo_privagg_probabilities (global)");
        check(dpmo_privagg_probabilities(utilities, N_ACCOUNTS, N_OBJECTIVES, weights, NULL, deltas, 0,
                                         DPMO_DAMPENING_PLAIN, epsilon / TOP_K, p[3], values, values_len),
              "dpmo_privagg_probabilities (local)");
        printf("\nNot private, for the reader: P(first pick is on the exact Pareto front), exponential selector,\n"
               "epsilon %.2f per pick (uniform guessing: %.2f):\n",
               epsilon / TOP_K, (double)front / N_ACCOUNTS);
        for (m = 0; m < 4; m++) {
            for (v = 0; v < N_ACCOUNTS; v++)
                if (scores[v] == 0.0) mass[m] += p[m][v];
            printf("  %-18s %.2f\n", names[m], mass[m]);
        }
        printf("Small graphs need a larger epsilon (or a larger network) for sharp picks; local sensitivity helps\n"
               "most where the global bound is loose.\n");
    }

    /* A fifth release would exceed the total: the budget refuses it and nothing happens (no randomness drawn,
     * no output written, the budget unchanged). */
    status = dpmo_select_privagg(&rng, utilities, N_ACCOUNTS, N_OBJECTIVES, weights, globals, NULL, 0,
                                 DPMO_DAMPENING_PLAIN, DPMO_SELECTOR_EXPONENTIAL, epsilon, TOP_K, picks, values,
                                 values_len, indices, indices_len, &budget);
    if (status != DPMO_BUDGET_EXHAUSTED) {
        fprintf(stderr, "multiobjective: a fifth release was not refused (%s)\n", dpmo_status_message((uint32_t)status));
        return EXIT_FAILURE;
    }
    printf("\nA fifth release is refused: %s\n", dpmo_status_message((uint32_t)status));
    printf("Total privacy cost of everything published above: epsilon = %.1f (the budget's total %.1f).\n",
           budget.spent, budget.total);

    free(values);
    free(indices);
    return 0;
}
