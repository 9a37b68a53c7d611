/*
 * graph_features: per-node features of a SNAP edge list, computed with the dpmo C ABI, as CSV. The one
 * edge-list loader of the bindings' tests: PostgreSQL reads its output with \copy, SQLite with .import.
 *
 *   graph_features enron300.txt > enron300.csv
 *
 * Input: SNAP edge list ('#' comment lines, "u<TAB>v" per line; either or both directions). The graph is
 * made undirected and simple (self loops and duplicate edges dropped). Output, a header line, then one line
 * per node id 0 .. max id: node,degree,egodensity,"[delta_0,...,delta_(T-1)]" where the last column (a
 * JSON array) is the admissible local sensitivity of egodensity at distances t < T = 8
 * (dpmo_egodensity_delta_table, Δ = 1). Numbers are printed with 17 significant digits (exact).
 */
#define _DEFAULT_SOURCE
#include "dpmo.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELTA_COLUMNS 8

static void die(const char *what) {
    fprintf(stderr, "graph_features: %s\n", what);
    exit(1);
}

static void check(dpmo_status st, const char *what) {
    if (st != DPMO_OK) {
        fprintf(stderr, "graph_features: %s: %s\n", what, dpmo_status_message(st));
        exit(1);
    }
}

static int cmp_edge(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 2) die("usage: graph_features EDGE_LIST");
    FILE *f = fopen(argv[1], "r");
    if (!f) die(strerror(errno));

    size_t cap = 1 << 20, len = 0;
    uint64_t *edges = malloc(cap * sizeof *edges); /* (u << 32) | v, both directions */
    if (!edges) die("out of memory");
    uint32_t max_id = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n' || line[0] == '\r') continue;
        unsigned long u, v;
        if (sscanf(line, "%lu %lu", &u, &v) != 2 || u >= UINT32_MAX || v >= UINT32_MAX) die("bad edge line");
        if (u == v) continue;
        if (len + 2 > cap) {
            cap *= 2;
            edges = realloc(edges, cap * sizeof *edges);
            if (!edges) die("out of memory");
        }
        edges[len++] = ((uint64_t)u << 32) | v;
        edges[len++] = ((uint64_t)v << 32) | u;
        if (u > max_id) max_id = (uint32_t)u;
        if (v > max_id) max_id = (uint32_t)v;
    }
    fclose(f);
    if (len == 0) die("no edges");
    qsort(edges, len, sizeof *edges, cmp_edge);
    size_t m = 0;
    for (size_t i = 0; i < len; i++)
        if (m == 0 || edges[i] != edges[m - 1]) edges[m++] = edges[i];

    size_t n = (size_t)max_id + 1;
    size_t *offsets = calloc(n + 1, sizeof *offsets);
    uint32_t *adj = malloc(m * sizeof *adj);
    double *degree = malloc(n * sizeof *degree), *ego = malloc(n * sizeof *ego);
    double *delta = malloc(n * DELTA_COLUMNS * sizeof *delta);
    if (!offsets || !adj || !degree || !ego || !delta) die("out of memory");
    for (size_t i = 0; i < m; i++) {
        offsets[(edges[i] >> 32) + 1]++;
        adj[i] = (uint32_t)edges[i];
    }
    for (size_t v = 0; v < n; v++) offsets[v + 1] += offsets[v];

    check(dpmo_graph_validate(offsets, n, adj, m), "graph");
    check(dpmo_degree(offsets, n, adj, m, degree), "degree");
    check(dpmo_egodensity(offsets, n, adj, m, ego), "egodensity");
    check(dpmo_egodensity_delta_table(offsets, n, adj, m, DELTA_COLUMNS, delta), "egodensity delta table");

    printf("node,degree,egodensity,egodensity_delta\n");
    for (size_t v = 0; v < n; v++) {
        printf("%zu,%.17g,%.17g,\"[", v, degree[v], ego[v]);
        for (size_t t = 0; t < DELTA_COLUMNS; t++)
            printf(t ? ",%.17g" : "%.17g", delta[v * DELTA_COLUMNS + t]);
        printf("]\"\n");
    }
    fprintf(stderr, "graph_features: %zu nodes, %zu undirected edges\n", n, m / 2);
    free(edges);
    free(offsets);
    free(adj);
    free(degree);
    free(ego);
    free(delta);
    return 0;
}
