/*
 * enron_load: reads a SNAP edge list (comments '#', tab or space separated, any direction), builds the
 * undirected simple graph as CSR, computes with dpmo per node the degree, the egocentric density and their
 * δ tables, and writes them to a SQLite database:
 *
 *   nodes(id INTEGER PRIMARY KEY, degree INTEGER, egodensity REAL,
 *         degree_delta REAL,        -- δ of the degree: 1 at every distance (= its global sensitivity)
 *         ego_delta BLOB,           -- δ(t) of egodensity for t < T, T native doubles (Δ = 1 beyond)
 *         shard INTEGER)            -- id % 8, a public partition for GROUP BY tests
 *   meta(key TEXT PRIMARY KEY, value)  -- nodes, edges, max_degree, delta_columns
 *
 * Usage: enron_load EDGE_LIST DATABASE [T]
 */
#include "dpmo.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
    fprintf(stderr, "enron_load: %s\n", what);
    exit(1);
}

static void check(dpmo_status st, const char *what) {
    if (st != DPMO_OK) {
        fprintf(stderr, "enron_load: %s: %s\n", what, dpmo_status_message((uint32_t)st));
        exit(1);
    }
}

static void sql_ok(sqlite3 *db, int rc, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "enron_load: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) die("usage: enron_load EDGE_LIST DATABASE [T]");
    size_t T = argc > 3 ? (size_t)strtoul(argv[3], NULL, 10) : 32;
    if (T == 0) die("T must be >= 1");
    FILE *f = fopen(argv[1], "r");
    if (f == NULL) die("cannot open the edge list");

    /* Read both directions of every edge. */
    size_t cap = 1 << 20, len = 0;
    uint32_t *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst);
    if (!src || !dst) die("out of memory");
    char line[256];
    uint32_t maxid = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (line[0] == '#' || sscanf(line, "%lu %lu", &a, &b) != 2) continue;
        if (a == b) continue;
        if (a > UINT32_MAX - 1 || b > UINT32_MAX - 1) die("node id too large");
        if (len + 2 > cap) {
            cap *= 2;
            src = realloc(src, cap * sizeof *src);
            dst = realloc(dst, cap * sizeof *dst);
            if (!src || !dst) die("out of memory");
        }
        src[len] = (uint32_t)a, dst[len++] = (uint32_t)b;
        src[len] = (uint32_t)b, dst[len++] = (uint32_t)a;
        if (a > maxid) maxid = (uint32_t)a;
        if (b > maxid) maxid = (uint32_t)b;
    }
    fclose(f);
    size_t n = (size_t)maxid + 1;

    /* CSR by counting, then sort and deduplicate every neighbour list. */
    size_t *offsets = calloc(n + 1, sizeof *offsets);
    uint32_t *adj = malloc((len ? len : 1) * sizeof *adj);
    size_t *fill = calloc(n, sizeof *fill);
    if (!offsets || !adj || !fill) die("out of memory");
    for (size_t i = 0; i < len; i++) offsets[src[i] + 1]++;
    for (size_t v = 0; v < n; v++) offsets[v + 1] += offsets[v];
    for (size_t i = 0; i < len; i++) adj[offsets[src[i]] + fill[src[i]]++] = dst[i];
    size_t out = 0;
    size_t start = 0;
    for (size_t v = 0; v < n; v++) {
        size_t end = offsets[v + 1];
        qsort(adj + start, end - start, sizeof *adj, cmp_u32);
        offsets[v] = out;
        for (size_t i = start; i < end; i++) {
            if (i == start || adj[i] != adj[i - 1]) adj[out++] = adj[i];
        }
        start = end;
    }
    offsets[n] = out;
    size_t m2 = out;
    free(src);
    free(dst);
    free(fill);
    check(dpmo_graph_validate(offsets, n, adj, m2), "dpmo_graph_validate");

    double *degree = malloc(n * sizeof *degree), *ego = malloc(n * sizeof *ego);
    double *ego_delta = malloc(n * T * sizeof *ego_delta), *deg_delta = malloc(n * sizeof *deg_delta);
    if (!degree || !ego || !ego_delta || !deg_delta) die("out of memory");
    check(dpmo_degree(offsets, n, adj, m2, degree), "dpmo_degree");
    check(dpmo_egodensity(offsets, n, adj, m2, ego), "dpmo_egodensity");
    check(dpmo_egodensity_delta_table(offsets, n, adj, m2, T, ego_delta), "dpmo_egodensity_delta_table");
    check(dpmo_degree_delta_table(offsets, n, adj, m2, 1, deg_delta), "dpmo_degree_delta_table");

    sqlite3 *db;
    if (sqlite3_open(argv[2], &db) != SQLITE_OK) die("cannot open the database");
    sql_ok(db,
           sqlite3_exec(db,
                        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                        "CREATE TABLE nodes(id INTEGER PRIMARY KEY, degree INTEGER NOT NULL, egodensity REAL NOT NULL,"
                        " degree_delta REAL NOT NULL, ego_delta BLOB NOT NULL, shard INTEGER NOT NULL);"
                        "CREATE TABLE meta(key TEXT PRIMARY KEY, value);",
                        NULL, NULL, NULL),
           "create");
    sqlite3_stmt *ins;
    sql_ok(db, sqlite3_prepare_v2(db, "INSERT INTO nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &ins, NULL), "prepare");
    size_t max_degree = 0;
    for (size_t v = 0; v < n; v++) {
        size_t d = offsets[v + 1] - offsets[v];
        if (d > max_degree) max_degree = d;
        sqlite3_bind_int64(ins, 1, (sqlite3_int64)v);
        sqlite3_bind_int64(ins, 2, (sqlite3_int64)degree[v]);
        sqlite3_bind_double(ins, 3, ego[v]);
        sqlite3_bind_double(ins, 4, deg_delta[v]);
        sqlite3_bind_blob(ins, 5, ego_delta + v * T, (int)(T * sizeof(double)), SQLITE_STATIC);
        sqlite3_bind_int64(ins, 6, (sqlite3_int64)(v % 8));
        sql_ok(db, sqlite3_step(ins), "insert");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO meta VALUES ('nodes', %zu), ('edges', %zu), ('max_degree', %zu), ('delta_columns', %zu);"
             "COMMIT;",
             n, m2 / 2, max_degree, T);
    sql_ok(db, sqlite3_exec(db, sql, NULL, NULL, NULL), "meta");
    sqlite3_close(db);
    printf("enron_load: %zu nodes, %zu edges, max degree %zu, egodensity delta table of %zu columns -> %s\n", n,
           m2 / 2, max_degree, T, argv[2]);
    free(offsets);
    free(adj);
    free(degree);
    free(ego);
    free(ego_delta);
    free(deg_delta);
    return 0;
}
