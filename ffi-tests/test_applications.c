/*
 * The sensitivity functions of the applications through the C ABI: graph metrics on CSR graphs (degree,
 * egodensity, EBC and their delta tables), TPR/TNR and their delta, information gain, Gini, and the
 * maximum of two delta tables. Every error path, each with a check that nothing was written; the papers'
 * worked examples; small brute-force admissibility checks from C; and an end-to-end local dampening run.
 */
#include "common.h"

/* ------------------------------------------------------------------ CSR helpers */
#define MAXN 16
#define MAXADJ 128

typedef struct {
    size_t offsets[MAXN + 1];
    uint32_t adj[MAXADJ];
    size_t n, len;
} graph_t;

/* Builds a sorted, symmetric CSR from an undirected edge list (each edge given once). */
static graph_t make_graph(size_t n, const uint32_t (*edges)[2], size_t m) {
    graph_t g;
    size_t v, i;
    memset(&g, 0, sizeof g);
    g.n = n;
    for (v = 0; v < n; v++) {
        uint32_t w;
        g.offsets[v] = g.len;
        for (w = 0; w < n; w++)
            for (i = 0; i < m; i++)
                if ((edges[i][0] == v && edges[i][1] == w) || (edges[i][1] == v && edges[i][0] == w))
                    g.adj[g.len++] = w;
    }
    g.offsets[n] = g.len;
    return g;
}

/* Local Dampening paper, Example 1.1: a = 0 and b = 1 adjacent, both adjacent to v0..v5 = 2..7. */
static graph_t gadget(int with_ab) {
    uint32_t e[13][2];
    size_t m = 0, i;
    if (with_ab) {
        e[m][0] = 0;
        e[m][1] = 1;
        m++;
    }
    for (i = 2; i < 8; i++) {
        e[m][0] = 0;
        e[m][1] = (uint32_t)i;
        m++;
        e[m][0] = 1;
        e[m][1] = (uint32_t)i;
        m++;
    }
    return make_graph(8, (const uint32_t (*)[2])e, m);
}

/* ------------------------------------------------------------------ graph function dispatch */
enum { G_DEGREE, G_EGO, G_EBC, G_DEGREE_T, G_EGO_T, G_EBC_T, G_COUNT };
static const char *GNAMES[G_COUNT] = {"degree", "egodensity", "ebc", "degree_delta_table", "egodensity_delta_table",
                                      "ebc_delta_table"};
static uint32_t ebc_scratch[4096];

static dpmo_status run_graph(int which, const size_t *off, size_t n, const uint32_t *adj, size_t len, size_t columns,
                             double *out) {
    switch (which) {
    case G_DEGREE: return dpmo_degree(off, n, adj, len, out);
    case G_EGO: return dpmo_egodensity(off, n, adj, len, out);
    case G_EBC: return dpmo_ebc(off, n, adj, len, ebc_scratch, 4096, out);
    case G_DEGREE_T: return dpmo_degree_delta_table(off, n, adj, len, columns, out);
    case G_EGO_T: return dpmo_egodensity_delta_table(off, n, adj, len, columns, out);
    default: return dpmo_ebc_delta_table(off, n, adj, len, 1000, columns, out);
    }
}

static void graph_case(const char *name, int which, const size_t *off, size_t n, const uint32_t *adj, size_t len,
                       size_t columns, double *out, size_t out_len, dpmo_status want) {
    char label[200];
    snprintf(label, sizeof label, "%s: %s", GNAMES[which], name);
    TEST(label);
    guard(off, span(n + 1, sizeof(size_t)));
    guard(adj, span(len, sizeof(uint32_t)));
    guard(out, span(out_len, sizeof(double)));
    CHECK_STATUS(run_graph(which, off, n, adj, len, columns, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void validate_case(const char *name, const size_t *off, size_t n, const uint32_t *adj, size_t len,
                          dpmo_status want) {
    char label[200];
    snprintf(label, sizeof label, "graph_validate: %s", name);
    TEST(label);
    guard(off, span(n + 1, sizeof(size_t)));
    guard(adj, span(len, sizeof(uint32_t)));
    CHECK_STATUS(dpmo_graph_validate(off, n, adj, len), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

/* Every malformed graph, for dpmo_graph_validate and for each graph function. The triangle's arrays carry one
 * element of slack: the misaligned cases pass them one byte in with their full lengths, and the guards read
 * those lengths (they must not read past the objects: ASan checks the tests too). */
static void test_bad_graphs(void) {
    static const size_t off_unsorted[4] = {0, 2, 3, 4}, off_dup[3] = {0, 2, 4}, off_one[3] = {0, 1, 1},
                        off_decr[4] = {0, 2, 1, 2}, off_beyond[3] = {0, 5, 2}, off_start[2] = {1, 1},
                        off_end[2] = {0, 1}, off_tri[5] = {0, 2, 4, 6, 0};
    static const uint32_t adj_unsorted[4] = {2, 1, 0, 0}, adj_dup[4] = {1, 1, 0, 0}, adj_self[1] = {0},
                          adj_asym[1] = {1}, adj_big[1] = {5}, adj_decr[2] = {1, 2}, adj_beyond[2] = {1, 0},
                          adj_tri[7] = {1, 2, 0, 2, 0, 1, 0};
    double out[64];
    int w;
    size_t i;

    validate_case("triangle ok", off_tri, 3, adj_tri, 6, DPMO_OK);
    validate_case("empty graph n = 0 ok", off_tri, 0, adj_tri, 0, DPMO_OK);
    validate_case("unsorted list", off_unsorted, 3, adj_unsorted, 4, DPMO_INVALID_ARGUMENT);
    validate_case("duplicate edge", off_dup, 2, adj_dup, 4, DPMO_INVALID_ARGUMENT);
    validate_case("self loop", off_one, 2, adj_self, 1, DPMO_INVALID_ARGUMENT);
    validate_case("asymmetric", off_one, 2, adj_asym, 1, DPMO_INVALID_ARGUMENT);
    validate_case("id >= n", off_one, 2, adj_big, 1, DPMO_INVALID_ARGUMENT);
    validate_case("offsets decreasing", off_decr, 3, adj_decr, 2, DPMO_INVALID_ARGUMENT);
    validate_case("offset beyond adjacency", off_beyond, 2, adj_beyond, 2, DPMO_INVALID_ARGUMENT);
    validate_case("offsets[0] != 0", off_start, 1, adj_self, 1, DPMO_LENGTH_MISMATCH);
    validate_case("offsets[n] != adjacency_len", off_end, 1, adj_self, 0, DPMO_LENGTH_MISMATCH);
    validate_case("null offsets", NULL, 3, adj_tri, 6, DPMO_NULL_POINTER);
    validate_case("null neighbours", off_tri, 3, NULL, 6, DPMO_NULL_POINTER);
    validate_case("null neighbours, no edges", off_tri, 0, NULL, 0, DPMO_NULL_POINTER);
    validate_case("misaligned offsets", (const size_t *)misalign((void *)off_tri), 3, adj_tri, 6,
                  DPMO_INVALID_ARGUMENT);
    validate_case("misaligned neighbours", off_tri, 3, (const uint32_t *)misalign((void *)adj_tri), 6,
                  DPMO_INVALID_ARGUMENT);
    validate_case("node_count SIZE_MAX", off_tri, SIZE_MAX, adj_tri, 6, DPMO_OVERFLOW);
    validate_case("node_count overflows bytes", off_tri, SIZE_MAX / 4, adj_tri, 6, DPMO_OVERFLOW);
    validate_case("adjacency_len overflows bytes", off_tri, 3, adj_tri, SIZE_MAX / 2, DPMO_OVERFLOW);

    for (w = 0; w < G_COUNT; w++) {
        size_t c = w >= G_DEGREE_T ? 2 : 1;
        for (i = 0; i < 64; i++) out[i] = SENTINEL_D;
        graph_case("unsorted list", w, off_unsorted, 3, adj_unsorted, 4, 2, out, 3 * c, DPMO_INVALID_ARGUMENT);
        graph_case("duplicate edge", w, off_dup, 2, adj_dup, 4, 2, out, 2 * c, DPMO_INVALID_ARGUMENT);
        graph_case("self loop", w, off_one, 2, adj_self, 1, 2, out, 2 * c, DPMO_INVALID_ARGUMENT);
        graph_case("asymmetric", w, off_one, 2, adj_asym, 1, 2, out, 2 * c, DPMO_INVALID_ARGUMENT);
        graph_case("id >= n", w, off_one, 2, adj_big, 1, 2, out, 2 * c, DPMO_INVALID_ARGUMENT);
        graph_case("offsets decreasing", w, off_decr, 3, adj_decr, 2, 2, out, 3 * c, DPMO_INVALID_ARGUMENT);
        graph_case("offset beyond adjacency", w, off_beyond, 2, adj_beyond, 2, 2, out, 2 * c, DPMO_INVALID_ARGUMENT);
        graph_case("offsets[0] != 0", w, off_start, 1, adj_self, 1, 2, out, c, DPMO_LENGTH_MISMATCH);
        graph_case("offsets[n] != adjacency_len", w, off_end, 1, adj_self, 0, 2, out, c, DPMO_LENGTH_MISMATCH);
        graph_case("null offsets", w, NULL, 3, adj_tri, 6, 2, out, 3 * c, DPMO_NULL_POINTER);
        graph_case("null neighbours", w, off_tri, 3, NULL, 6, 2, out, 3 * c, DPMO_NULL_POINTER);
        graph_case("null out", w, off_tri, 3, adj_tri, 6, 2, NULL, 0, DPMO_NULL_POINTER);
        graph_case("misaligned out", w, off_tri, 3, adj_tri, 6, 2, (double *)misalign(out), 0, DPMO_INVALID_ARGUMENT);
        graph_case("misaligned offsets", w, (const size_t *)misalign((void *)off_tri), 3, adj_tri, 6, 2, out, 3 * c,
                   DPMO_INVALID_ARGUMENT);
        graph_case("node_count SIZE_MAX", w, off_tri, SIZE_MAX, adj_tri, 6, 2, out, 0, DPMO_OVERFLOW);
        graph_case("adjacency_len overflows", w, off_tri, 3, adj_tri, SIZE_MAX / 2, 2, out, 3 * c, DPMO_OVERFLOW);
        /* n = 0 is a valid empty graph: OK, nothing written. */
        graph_case("n = 0", w, off_tri, 0, adj_tri, 0, 2, out, 64, DPMO_OK);
        TEST("n = 0 writes nothing");
        for (i = 0; i < 64; i++) CHECK_DEQ(out[i], SENTINEL_D);
    }

    /* Outputs overlapping the graph arrays (kept in 8-byte aligned storage so that only overlap can fail). */
    {
        union {
            size_t z[8];
            uint32_t u[16];
            double d[8];
        } mem;
        size_t off[4] = {0, 2, 4, 6};
        union {
            uint32_t u[8];
            double d[4];
        } adj;
        memcpy(adj.u, adj_tri, sizeof adj_tri);
        memcpy(mem.z, off_tri, sizeof off_tri);
        for (w = 0; w < G_COUNT; w++) {
            graph_case("out overlaps offsets", w, mem.z, 3, adj_tri, 6, 1, mem.d, 0, DPMO_OVERLAPPING_BUFFERS);
            graph_case("out overlaps offsets tail", w, mem.z, 3, adj_tri, 6, 1, mem.d + 3, 0, DPMO_OVERLAPPING_BUFFERS);
            graph_case("out overlaps neighbours", w, off, 3, adj.u, 6, 1, adj.d + 1, 0, DPMO_OVERLAPPING_BUFFERS);
            graph_case("out adjacent to offsets ok", w, mem.z, 3, adj_tri, 6, 1, mem.d + 4, 0, DPMO_OK);
        }
    }

    /* Tables: columns = 0 and n · columns overflow. */
    for (w = G_DEGREE_T; w < G_COUNT; w++) {
        for (i = 0; i < 64; i++) out[i] = SENTINEL_D;
        graph_case("columns = 0", w, off_tri, 3, adj_tri, 6, 0, out, 64, DPMO_INVALID_ARGUMENT);
        graph_case("n * columns overflows", w, off_tri, 3, adj_tri, 6, SIZE_MAX / 2, out, 64, DPMO_OVERFLOW);
        graph_case("n * columns bytes overflow", w, off_tri, 3, adj_tri, 6, SIZE_MAX / 16, out, 64, DPMO_OVERFLOW);
    }
}

/* ------------------------------------------------------------------ EBC specifics */
static void ebc_case(const char *name, const graph_t *g, uint32_t *scratch, size_t scratch_len, double *out,
                     dpmo_status want) {
    TEST(name);
    guard(g, sizeof *g);
    guard(scratch, span(scratch_len, sizeof(uint32_t)));
    guard(out, span(g->n, sizeof(double)));
    CHECK_STATUS(dpmo_ebc(g->offsets, g->n, g->adj, g->len, scratch, scratch_len, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_ebc_errors(void) {
    graph_t g = gadget(1);
    size_t need = SENTINEL_Z, i;
    union {
        uint32_t u[160];
        double d[80];
    } mem;
    double out[8];
    uint32_t scratch[64];
    memset(&mem, 0, sizeof mem);

    TEST("ebc_scratch_len");
    CHECK_STATUS(dpmo_ebc_scratch_len(8, g.len, &need), DPMO_OK);
    CHECK_EQ(need, 4 * 8 + 1 + g.len);
    CHECK_EQ(g.len, 26);
    CHECK_STATUS(dpmo_ebc_scratch_len(0, 0, &need), DPMO_OK);
    CHECK_EQ(need, 1);
    need = SENTINEL_Z;
    CHECK_STATUS(dpmo_ebc_scratch_len(SIZE_MAX / 4 + 1, 0, &need), DPMO_OVERFLOW);
    CHECK_EQ(need, SENTINEL_Z);
    CHECK_STATUS(dpmo_ebc_scratch_len(SIZE_MAX / 16, 0, &need), DPMO_OVERFLOW); /* bytes overflow */
    CHECK_EQ(need, SENTINEL_Z);
    CHECK_STATUS(dpmo_ebc_scratch_len(SIZE_MAX / 32, 0, &need), DPMO_OK); /* 4n + 1 < SIZE_MAX / 8 */
    CHECK_EQ(need, 4 * (SIZE_MAX / 32) + 1);
    need = SENTINEL_Z;
    CHECK_EQ(need, SENTINEL_Z);
    CHECK_STATUS(dpmo_ebc_scratch_len(1, SIZE_MAX - 4, &need), DPMO_OVERFLOW);
    CHECK_EQ(need, SENTINEL_Z);
    CHECK_STATUS(dpmo_ebc_scratch_len(8, 26, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_ebc_scratch_len(8, 26, (size_t *)misalign(&need)), DPMO_INVALID_ARGUMENT);
    CHECK_EQ(need, SENTINEL_Z);

    for (i = 0; i < 8; i++) out[i] = SENTINEL_D;
    for (i = 0; i < 64; i++) scratch[i] = 0xA5A5A5A5u;
    ebc_case("ebc scratch too small by one", &g, scratch, 58, out, DPMO_SCRATCH_TOO_SMALL);
    ebc_case("ebc scratch empty", &g, scratch, 0, out, DPMO_SCRATCH_TOO_SMALL);
    ebc_case("ebc null scratch", &g, NULL, 59, out, DPMO_NULL_POINTER);
    ebc_case("ebc misaligned scratch", &g, (uint32_t *)misalign(scratch), 59, out, DPMO_INVALID_ARGUMENT);
    ebc_case("ebc scratch_len overflows", &g, scratch, SIZE_MAX / 2, out, DPMO_OVERFLOW);
    ebc_case("ebc scratch overlaps out", &g, mem.u, 128, mem.d + 60, DPMO_OVERLAPPING_BUFFERS);
    ebc_case("ebc scratch overlaps offsets", &g, (uint32_t *)(void *)g.offsets, 59, out, DPMO_OVERLAPPING_BUFFERS);
    ebc_case("ebc scratch overlaps neighbours", &g, g.adj + 2, 59, out, DPMO_OVERLAPPING_BUFFERS);
    ebc_case("ebc exact scratch ok", &g, scratch, 59, out, DPMO_OK);
    CHECK_NEAR(out[0], 7.5, 1e-12);
}

static void test_global_sensitivities(void) {
    double v = SENTINEL_D;
    TEST("ebc_global_sensitivity = max(D(D-1)/4, D) (Lemma 5.2)");
    CHECK_STATUS(dpmo_ebc_global_sensitivity(7, &v), DPMO_OK);
    CHECK_DEQ(v, 10.5);
    CHECK_STATUS(dpmo_ebc_global_sensitivity(4, &v), DPMO_OK);
    CHECK_DEQ(v, 4.0);
    CHECK_STATUS(dpmo_ebc_global_sensitivity(5, &v), DPMO_OK);
    CHECK_DEQ(v, 5.0);
    CHECK_STATUS(dpmo_ebc_global_sensitivity(1, &v), DPMO_OK);
    CHECK_DEQ(v, 1.0);
    CHECK_STATUS(dpmo_ebc_global_sensitivity(SIZE_MAX, &v), DPMO_OK);
    CHECK(isfinite(v) && v > 1e37);
    v = SENTINEL_D;
    CHECK_STATUS(dpmo_ebc_global_sensitivity(7, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_ebc_global_sensitivity(7, (double *)misalign(&v)), DPMO_INVALID_ARGUMENT);
    CHECK_DEQ(v, SENTINEL_D);

    TEST("info_gain_global_sensitivity = log2(N + 1) + 1/ln 2");
    CHECK_STATUS(dpmo_info_gain_global_sensitivity(4, &v), DPMO_OK);
    CHECK_NEAR(v, log2(5.0) + 1.0 / log(2.0), 1e-14);
    CHECK_STATUS(dpmo_info_gain_global_sensitivity(0, &v), DPMO_OK);
    CHECK_NEAR(v, 1.0 / log(2.0), 1e-14);
    CHECK_STATUS(dpmo_info_gain_global_sensitivity(UINT64_MAX, &v), DPMO_OK);
    CHECK(isfinite(v));
    v = SENTINEL_D;
    CHECK_STATUS(dpmo_info_gain_global_sensitivity(4, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_info_gain_global_sensitivity(4, (double *)misalign(&v)), DPMO_INVALID_ARGUMENT);
    CHECK_DEQ(v, SENTINEL_D);

    TEST("constant global sensitivities");
    CHECK_DEQ(DPMO_DEGREE_GLOBAL_SENSITIVITY, 1.0);
    CHECK_DEQ(DPMO_EGODENSITY_GLOBAL_SENSITIVITY, 1.0);
    CHECK_DEQ(DPMO_RATE_GLOBAL_SENSITIVITY, 1.0);
    CHECK_DEQ(DPMO_GINI_GLOBAL_SENSITIVITY, 2.0);
    CHECK_EQ(DPMO_CONTINGENCY_MAX_VALUES, 16);
    CHECK_EQ(DPMO_CONTINGENCY_MAX_CLASSES, 16);
}

/* ------------------------------------------------------------------ graph values */
static void test_graph_values(void) {
    graph_t g = gadget(1), h = gadget(0);
    double out[8], table[8 * 6];
    uint32_t scratch[64];
    size_t i, t;

    TEST("Example 1.1 gadget is a valid graph");
    CHECK_STATUS(dpmo_graph_validate(g.offsets, g.n, g.adj, g.len), DPMO_OK);
    CHECK_STATUS(dpmo_graph_validate(h.offsets, h.n, h.adj, h.len), DPMO_OK);

    TEST("Local Dampening Example 1.1: EBC(a) = 7.5");
    CHECK_STATUS(dpmo_ebc(g.offsets, g.n, g.adj, g.len, scratch, 64, out), DPMO_OK);
    CHECK_NEAR(out[0], 7.5, 1e-12);
    CHECK_NEAR(out[1], 7.5, 1e-12);
    for (i = 2; i < 8; i++) CHECK_DEQ(out[i], 0.0);

    TEST("Local Dampening Example 1.1: EBC(a) = 15 without edge (a, b)");
    CHECK_STATUS(dpmo_ebc(h.offsets, h.n, h.adj, h.len, scratch, 64, out), DPMO_OK);
    CHECK_DEQ(out[0], 15.0);
    CHECK_DEQ(out[1], 15.0);
    for (i = 2; i < 8; i++) CHECK_DEQ(out[i], 1.0); /* v_i: a and b non-adjacent, one geodesic a-v_i-b */

    TEST("degree of the gadget");
    CHECK_STATUS(dpmo_degree(g.offsets, g.n, g.adj, g.len, out), DPMO_OK);
    CHECK_DEQ(out[0], 7.0);
    CHECK_DEQ(out[1], 7.0);
    for (i = 2; i < 8; i++) CHECK_DEQ(out[i], 2.0);

    TEST("egodensity of the gadget");
    CHECK_STATUS(dpmo_egodensity(g.offsets, g.n, g.adj, g.len, out), DPMO_OK);
    CHECK_NEAR(out[0], 6.0 / 21.0, 1e-15);
    for (i = 2; i < 8; i++) CHECK_DEQ(out[i], 1.0);
    CHECK_STATUS(dpmo_egodensity(h.offsets, h.n, h.adj, h.len, out), DPMO_OK);
    CHECK_DEQ(out[0], 0.0);
    for (i = 2; i < 8; i++) CHECK_DEQ(out[i], 0.0);

    TEST("PrivPareto 7.3: egodensity 0 at v1 of the path v2-v1-v3, 1 in the triangle");
    {
        static const uint32_t path_e[2][2] = {{0, 1}, {0, 2}}, tri_e[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        graph_t p = make_graph(3, path_e, 2), tr = make_graph(3, tri_e, 3);
        CHECK_STATUS(dpmo_egodensity(p.offsets, 3, p.adj, p.len, out), DPMO_OK);
        CHECK_DEQ(out[0], 0.0);
        CHECK_DEQ(out[1], 0.0); /* fewer than two neighbours: defined as 0 */
        CHECK_DEQ(out[2], 0.0);
        CHECK_STATUS(dpmo_egodensity(tr.offsets, 3, tr.adj, tr.len, out), DPMO_OK);
        for (i = 0; i < 3; i++) CHECK_DEQ(out[i], 1.0);
        /* The pair attains Δ = 1: adding one edge moves egodensity(v1) from 0 to 1. */
    }

    TEST("degree delta table = 1");
    for (i = 0; i < 48; i++) table[i] = SENTINEL_D;
    CHECK_STATUS(dpmo_degree_delta_table(g.offsets, g.n, g.adj, g.len, 6, table), DPMO_OK);
    for (i = 0; i < 48; i++) CHECK_DEQ(table[i], 1.0);

    TEST("egodensity delta table, clamped (2 / (d - t - 2))");
    CHECK_STATUS(dpmo_egodensity_delta_table(g.offsets, g.n, g.adj, g.len, 6, table), DPMO_OK);
    CHECK_DEQ(table[0], 2.0 / 5.0); /* d = 7, t = 0 */
    CHECK_DEQ(table[1], 2.0 / 4.0);
    CHECK_DEQ(table[2], 2.0 / 3.0);
    CHECK_DEQ(table[3], 1.0);
    CHECK_DEQ(table[4], 1.0); /* printed form: 2 / 1 = 2 > Δ */
    CHECK_DEQ(table[5], 1.0);
    for (i = 2 * 6; i < 48; i++) CHECK_DEQ(table[i], 1.0); /* d = 2 */
    for (t = 0; t < 6; t++) CHECK_DEQ(table[6 + t], table[t]);

    TEST("EBC delta table (Def. 5.3) clamped to Lemma 5.2");
    CHECK_STATUS(dpmo_ebc_delta_table(g.offsets, g.n, g.adj, g.len, 7, 6, table), DPMO_OK);
    for (t = 0; t < 6; t++) CHECK_DEQ(table[t], 10.5); /* d = 7: 10.5 at t = 0, clamped beyond */
    CHECK_DEQ(table[12 + 0], 2.0);                      /* d = 2: max(0.5, 2) */
    CHECK_DEQ(table[12 + 1], 3.0);
    CHECK_DEQ(table[12 + 2], 4.0);
    CHECK_DEQ(table[12 + 3], 5.0);
    CHECK_DEQ(table[12 + 4], 7.5);
    CHECK_DEQ(table[12 + 5], 10.5);
    CHECK_STATUS(dpmo_ebc_delta_table(g.offsets, g.n, g.adj, g.len, 100, 6, table), DPMO_OK);
    CHECK_DEQ(table[1], 14.0); /* unclamped under a larger bound: 8 * 7 / 4 */

    TEST("EBC delta table: a degree above max_degree is refused");
    for (i = 0; i < 48; i++) table[i] = SENTINEL_D;
    guard(table, sizeof table);
    CHECK_STATUS(dpmo_ebc_delta_table(g.offsets, g.n, g.adj, g.len, 6, 6, table), DPMO_INVALID_ARGUMENT);
    CHECK(guards_intact());
    guard(table, sizeof table);
    CHECK_STATUS(dpmo_ebc_delta_table(g.offsets, g.n, g.adj, g.len, 0, 6, table), DPMO_INVALID_ARGUMENT);
    CHECK(guards_intact());
}

/* Admissibility of the EBC delta table over all graphs on 5 nodes, from C (Def. 3.3, t < 3): condition 1
 * |EBC(x) - EBC(y)| <= δ(x, 0), condition 2 δ(x, t + 1) >= δ(y, t), for every pair of graphs differing
 * in one edge. D = 4 (the largest possible degree). */
static void test_ebc_brute_force(void) {
    static const int pairs[10][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}};
    static double ebc[1024][5], delta[1024][5 * 4], ego[1024][5], ego_d[1024][5 * 4];
    uint32_t scratch[64];
    unsigned mask, e;
    size_t v, t;
    int ok_calls = 1, cond1 = 1, cond2 = 1, ego1 = 1, ego2 = 1;
    TEST("EBC and egodensity deltas admissible on all graphs with 5 nodes");
    for (mask = 0; mask < 1024; mask++) {
        uint32_t edges[10][2];
        size_t m = 0;
        graph_t g;
        for (e = 0; e < 10; e++)
            if (mask & (1u << e)) {
                edges[m][0] = (uint32_t)pairs[e][0];
                edges[m][1] = (uint32_t)pairs[e][1];
                m++;
            }
        g = make_graph(5, (const uint32_t (*)[2])edges, m);
        ok_calls &= dpmo_ebc(g.offsets, 5, g.adj, g.len, scratch, 64, ebc[mask]) == DPMO_OK;
        ok_calls &= dpmo_ebc_delta_table(g.offsets, 5, g.adj, g.len, 4, 4, delta[mask]) == DPMO_OK;
        ok_calls &= dpmo_egodensity(g.offsets, 5, g.adj, g.len, ego[mask]) == DPMO_OK;
        ok_calls &= dpmo_egodensity_delta_table(g.offsets, 5, g.adj, g.len, 4, ego_d[mask]) == DPMO_OK;
    }
    for (mask = 0; mask < 1024; mask++)
        for (e = 0; e < 10; e++) {
            unsigned y = mask ^ (1u << e);
            for (v = 0; v < 5; v++) {
                cond1 &= fabs(ebc[mask][v] - ebc[y][v]) <= delta[mask][v * 4] + 1e-12;
                for (t = 0; t + 1 < 4; t++) cond2 &= delta[mask][v * 4 + t + 1] >= delta[y][v * 4 + t];
                ego1 &= fabs(ego[mask][v] - ego[y][v]) <= ego_d[mask][v * 4] + 1e-12;
                for (t = 0; t + 1 < 4; t++) ego2 &= ego_d[mask][v * 4 + t + 1] >= ego_d[y][v * 4 + t];
            }
        }
    CHECK(ok_calls);
    CHECK(cond1);
    CHECK(cond2);
    CHECK(ego1);
    CHECK(ego2);
}

/* ------------------------------------------------------------------ rates */
static double rate_(uint64_t h, uint64_t m) { return h + m == 0 ? 0.0 : (double)h / (double)(h + m); }

static void test_rates(void) {
    double v = SENTINEL_D, d1, d0;
    uint32_t rel;
    TEST("tpr / tnr");
    CHECK_STATUS(dpmo_tpr(3, 1, &v), DPMO_OK);
    CHECK_DEQ(v, 0.75);
    CHECK_STATUS(dpmo_tpr(0, 0, &v), DPMO_OK);
    CHECK_DEQ(v, 0.0);
    CHECK_STATUS(dpmo_tnr(1, 3, &v), DPMO_OK);
    CHECK_DEQ(v, 0.25);
    CHECK_STATUS(dpmo_tnr(0, 0, &v), DPMO_OK);
    CHECK_DEQ(v, 0.0);
    CHECK_STATUS(dpmo_tpr(UINT64_MAX, 0, &v), DPMO_OK);
    CHECK_DEQ(v, 1.0);

    TEST("PrivPareto Example 6.2: one flipped prediction moves TPR by 1 = Delta");
    CHECK_STATUS(dpmo_tpr(1, 0, &d1), DPMO_OK);
    CHECK_STATUS(dpmo_tpr(0, 1, &d0), DPMO_OK);
    CHECK_DEQ(d1 - d0, DPMO_RATE_GLOBAL_SENSITIVITY);

    TEST("tpr / tnr null and misaligned out");
    v = SENTINEL_D;
    CHECK_STATUS(dpmo_tpr(1, 1, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_tnr(1, 1, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_tpr(1, 1, (double *)misalign(&v)), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_tnr(1, 1, (double *)misalign(&v)), DPMO_INVALID_ARGUMENT);
    CHECK_DEQ(v, SENTINEL_D);

    TEST("DESIGN.md counterexample to the printed Lemma 6.1: delta(x, 1) >= delta(y, 0)");
    /* x = (TP 1, FN 2), y = x without the true positive = (TP 0, FN 2). Printed: δ(x, 1) = 1/2 < δ(y, 0) = 1. */
    CHECK_STATUS(dpmo_rate_delta(1, 2, 1, DPMO_NEIGHBOURS_ADD_REMOVE, &d1), DPMO_OK);
    CHECK_STATUS(dpmo_rate_delta(0, 2, 0, DPMO_NEIGHBOURS_ADD_REMOVE, &d0), DPMO_OK);
    CHECK_DEQ(d1, 1.0);
    CHECK_DEQ(d0, 1.0);
    CHECK(d1 >= d0);
    /* Adding one true positive to y moves TPR from 0 to 1/3: covered by δ(y, 0). */
    CHECK(d0 >= rate_(1, 2) - rate_(0, 2));

    TEST("substitution counterexample: P = 10, TP = 5, a flip moves TPR by 0.1");
    CHECK_STATUS(dpmo_rate_delta(5, 5, 0, DPMO_NEIGHBOURS_ADD_REMOVE, &v), DPMO_OK);
    CHECK_NEAR(v, 5.0 / 90.0, 1e-17);
    CHECK_STATUS(dpmo_rate_delta(5, 5, 0, DPMO_NEIGHBOURS_SUBSTITUTION, &v), DPMO_OK);
    CHECK_NEAR(v, 0.1, 1e-17);
    CHECK(v >= rate_(6, 4) - rate_(5, 5));
    CHECK_STATUS(dpmo_rate_delta(1, 0, 0, DPMO_NEIGHBOURS_ADD_REMOVE, &v), DPMO_OK);
    CHECK_DEQ(v, 1.0); /* P' <= 1 */
    CHECK_STATUS(dpmo_rate_delta(5, 5, UINT64_MAX, DPMO_NEIGHBOURS_SUBSTITUTION, &v), DPMO_OK);
    CHECK_DEQ(v, 1.0);
    CHECK_STATUS(dpmo_rate_delta(UINT64_MAX, UINT64_MAX, 0, DPMO_NEIGHBOURS_ADD_REMOVE, &v), DPMO_OK);
    CHECK(isfinite(v) && v >= 0.0 && v <= 1.0);

    TEST("rate_delta errors");
    for (rel = 2; rel < 5; rel++) {
        v = SENTINEL_D;
        CHECK_STATUS(dpmo_rate_delta(5, 5, 0, rel, &v), DPMO_INVALID_ARGUMENT);
        CHECK_DEQ(v, SENTINEL_D);
    }
    CHECK_STATUS(dpmo_rate_delta(5, 5, 0, UINT32_MAX, &v), DPMO_INVALID_ARGUMENT);
    CHECK_STATUS(dpmo_rate_delta(5, 5, 0, DPMO_NEIGHBOURS_ADD_REMOVE, NULL), DPMO_NULL_POINTER);
    CHECK_STATUS(dpmo_rate_delta(5, 5, 0, DPMO_NEIGHBOURS_SUBSTITUTION, (double *)misalign(&v)),
                 DPMO_INVALID_ARGUMENT);
    CHECK_DEQ(v, SENTINEL_D);
}

/* Admissibility of rate_delta from C on all counts up to 12 (t < 6). Add/remove neighbours change hits or
 * misses by one; substitution neighbours also flip a hit into a miss or back. */
static void test_rate_brute_force(void) {
    enum { K = 12, T = 6 };
    static double d[2][K + 2][K + 2][T];
    uint32_t rel;
    int ok = 1, cond1 = 1, cond2 = 1;
    int h, m, k;
    size_t t;
    TEST("rate_delta admissible on all counts up to 12");
    for (rel = 0; rel < 2; rel++)
        for (h = 0; h <= K + 1; h++)
            for (m = 0; m <= K + 1; m++)
                for (t = 0; t < T; t++)
                    ok &= dpmo_rate_delta((uint64_t)h, (uint64_t)m, t, rel, &d[rel][h][m][t]) == DPMO_OK;
    for (rel = 0; rel < 2; rel++)
        for (h = 0; h <= K; h++)
            for (m = 0; m <= K; m++) {
                int ys[6][2] = {{h + 1, m}, {h - 1, m}, {h, m + 1}, {h, m - 1}, {h + 1, m - 1}, {h - 1, m + 1}};
                int ny = rel == 0 ? 4 : 6;
                for (k = 0; k < ny; k++) {
                    int yh = ys[k][0], ym = ys[k][1];
                    if (yh < 0 || ym < 0) continue;
                    cond1 &= fabs(rate_((uint64_t)h, (uint64_t)m) - rate_((uint64_t)yh, (uint64_t)ym)) <=
                             d[rel][h][m][0] + 1e-15;
                    for (t = 0; t + 1 < T; t++) cond2 &= d[rel][h][m][t + 1] >= d[rel][yh][ym][t];
                }
            }
    CHECK(ok);
    CHECK(cond1);
    CHECK(cond2);
}

static void rtable_case(const char *name, const uint64_t *hits, const uint64_t *misses, size_t n, uint32_t rel,
                        size_t columns, double *out, size_t out_len, dpmo_status want) {
    TEST(name);
    guard(hits, span(n, sizeof(uint64_t)));
    guard(misses, span(n, sizeof(uint64_t)));
    guard(out, span(out_len, sizeof(double)));
    CHECK_STATUS(dpmo_rate_delta_table(hits, misses, n, rel, columns, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_rate_table(void) {
    uint64_t hits[2] = {5, 0}, misses[2] = {5, 0};
    union {
        uint64_t u[8];
        double d[8];
    } mem;
    double out[12], v;
    size_t i, r, t;
    uint32_t rel;
    for (i = 0; i < 12; i++) out[i] = SENTINEL_D;
    memset(&mem, 0, sizeof mem);

    rtable_case("rate_delta_table ok", hits, misses, 2, DPMO_NEIGHBOURS_ADD_REMOVE, 2, out, 4, DPMO_OK);
    CHECK_NEAR(out[0], 5.0 / 90.0, 1e-17);
    CHECK_NEAR(out[1], 5.0 / 72.0, 1e-17);
    CHECK_DEQ(out[2], 1.0);
    CHECK_DEQ(out[3], 1.0);
    CHECK_DEQ(out[4], SENTINEL_D);
    TEST("rate_delta_table rows = rate_delta");
    for (rel = 0; rel < 2; rel++) {
        hits[1] = 3;
        misses[1] = 8;
        CHECK_STATUS(dpmo_rate_delta_table(hits, misses, 2, rel, 6, out), DPMO_OK);
        for (r = 0; r < 2; r++)
            for (t = 0; t < 6; t++) {
                CHECK_STATUS(dpmo_rate_delta(hits[r], misses[r], t, rel, &v), DPMO_OK);
                CHECK_DEQ(out[r * 6 + t], v);
            }
    }
    for (i = 0; i < 12; i++) out[i] = SENTINEL_D;
    rtable_case("rate_delta_table n = 0 ok", hits, misses, 0, 0, 3, out, 12, DPMO_OK);
    TEST("rate_delta_table n = 0 writes nothing");
    for (i = 0; i < 12; i++) CHECK_DEQ(out[i], SENTINEL_D);
    rtable_case("rate_delta_table unknown relation", hits, misses, 2, 2, 2, out, 12, DPMO_INVALID_ARGUMENT);
    rtable_case("rate_delta_table unknown relation max", hits, misses, 2, UINT32_MAX, 2, out, 12,
                DPMO_INVALID_ARGUMENT);
    rtable_case("rate_delta_table columns = 0", hits, misses, 2, 0, 0, out, 12, DPMO_INVALID_ARGUMENT);
    rtable_case("rate_delta_table null hits", NULL, misses, 2, 0, 2, out, 12, DPMO_NULL_POINTER);
    rtable_case("rate_delta_table null misses", hits, NULL, 2, 0, 2, out, 12, DPMO_NULL_POINTER);
    rtable_case("rate_delta_table null out", hits, misses, 2, 0, 2, NULL, 0, DPMO_NULL_POINTER);
    rtable_case("rate_delta_table misaligned hits", (const uint64_t *)misalign(hits), misses, 1, 0, 2, out, 12,
                DPMO_INVALID_ARGUMENT);
    rtable_case("rate_delta_table misaligned out", hits, misses, 2, 0, 2, (double *)misalign(out), 0,
                DPMO_INVALID_ARGUMENT);
    rtable_case("rate_delta_table n * columns overflows", hits, misses, 2, 0, SIZE_MAX, out, 12, DPMO_OVERFLOW);
    rtable_case("rate_delta_table n overflows bytes", hits, misses, SIZE_MAX / 4, 0, 1, out, 12, DPMO_OVERFLOW);
    mem.u[0] = 5;
    mem.u[1] = 5;
    rtable_case("rate_delta_table out overlaps hits", mem.u, misses, 2, 0, 2, mem.d + 1, 0, DPMO_OVERLAPPING_BUFFERS);
    rtable_case("rate_delta_table out overlaps misses", hits, mem.u + 4, 2, 0, 2, mem.d + 2, 0,
                DPMO_OVERLAPPING_BUFFERS);
    rtable_case("rate_delta_table out adjacent ok", mem.u, misses, 2, 0, 2, mem.d + 2, 0, DPMO_OK);
}

/* ------------------------------------------------------------------ information gain and Gini */
enum { C_IG, C_GINI, C_IGT };
static dpmo_status run_ct(int which, const uint64_t *counts, size_t values, size_t classes, size_t columns,
                          double *out) {
    switch (which) {
    case C_IG: return dpmo_information_gain(counts, values, classes, out);
    case C_GINI: return dpmo_gini(counts, values, classes, out);
    default: return dpmo_info_gain_delta_table(counts, values, classes, columns, out);
    }
}

static void ct_case(const char *name, int which, const uint64_t *counts, size_t values, size_t classes,
                    size_t columns, double *out, size_t out_len, dpmo_status want) {
    static const char *names[3] = {"information_gain", "gini", "info_gain_delta_table"};
    char label[200];
    snprintf(label, sizeof label, "%s: %s", names[which], name);
    TEST(label);
    guard(counts, span(values <= 64 && classes <= 64 ? values * classes : 0, sizeof(uint64_t)));
    guard(out, span(out_len, sizeof(double)));
    CHECK_STATUS(run_ct(which, counts, values, classes, columns, out), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_contingency_errors(void) {
    static uint64_t big[17 * 17];
    /* c4 has one element of slack: "misaligned counts" passes it one byte in with its full length, and the
     * guards read that length (see guard in common.h). */
    uint64_t huge[2] = {UINT64_MAX, 1}, over53[1] = {((uint64_t)1 << 53) + 1}, c4[5] = {3, 1, 0, 2, 0};
    union {
        uint64_t u[8];
        double d[8];
    } mem;
    double out[8];
    int w;
    size_t i;
    for (i = 0; i < 17 * 17; i++) big[i] = i % 3;
    for (w = 0; w < 3; w++) {
        for (i = 0; i < 8; i++) out[i] = SENTINEL_D;
        memcpy(mem.u, c4, 4 * sizeof c4[0]);
        ct_case("values = 0", w, c4, 0, 2, 4, out, 8, DPMO_EMPTY_INPUT);
        ct_case("classes = 0", w, c4, 2, 0, 4, out, 8, DPMO_EMPTY_INPUT);
        ct_case("17 values", w, big, 17, 1, 4, out, 8, DPMO_CAPACITY_EXCEEDED);
        ct_case("17 classes", w, big, 1, 17, 4, out, 8, DPMO_CAPACITY_EXCEEDED);
        ct_case("17 x 17", w, big, 17, 17, 4, out, 8, DPMO_CAPACITY_EXCEEDED);
        ct_case("SIZE_MAX values", w, big, SIZE_MAX, 2, 4, out, 8, DPMO_CAPACITY_EXCEEDED);
        ct_case("16 x 16 ok", w, big, 16, 16, 4, out, 8, DPMO_OK);
        CHECK(isfinite(out[0]));
        for (i = 0; i < 8; i++) out[i] = SENTINEL_D;
        ct_case("count sum overflows", w, huge, 1, 2, 4, out, 8, DPMO_OVERFLOW);
        ct_case("total above 2^53", w, over53, 1, 1, 4, out, 8, DPMO_OVERFLOW);
        ct_case("null counts", w, NULL, 2, 2, 4, out, 8, DPMO_NULL_POINTER);
        ct_case("null out", w, c4, 2, 2, 4, NULL, 0, DPMO_NULL_POINTER);
        ct_case("misaligned counts", w, (const uint64_t *)misalign(c4), 2, 2, 4, out, 8, DPMO_INVALID_ARGUMENT);
        ct_case("misaligned out", w, c4, 2, 2, 4, (double *)misalign(out), 0, DPMO_INVALID_ARGUMENT);
        ct_case("out overlaps counts", w, mem.u, 2, 2, 1, mem.d + 3, 0, DPMO_OVERLAPPING_BUFFERS);
        ct_case("out is counts", w, mem.u, 2, 2, 1, mem.d, 0, DPMO_OVERLAPPING_BUFFERS);
        ct_case("out adjacent to counts ok", w, mem.u, 2, 2, 1, mem.d + 4, 0, DPMO_OK);
        if (w == C_IGT) {
            ct_case("columns = 0", w, c4, 2, 2, 0, out, 8, DPMO_INVALID_ARGUMENT);
            ct_case("out overlaps counts at the row end", w, mem.u, 2, 2, 2, mem.d + 3, 0, DPMO_OVERLAPPING_BUFFERS);
            ct_case("columns overflow bytes", w, c4, 2, 2, SIZE_MAX / 4, out, 8, DPMO_OVERFLOW);
        }
    }
}

static double f_(double x) { return x <= 0 ? 0.0 : x * log2((x + 1) / x) + log2(x + 1); }
static double g_(double x) { return x <= 1 ? 0.0 : x * log2((x - 1) / x) - log2(x - 1); }
static double h_(double a, double b) {
    double p = f_(a) - f_(b), q = g_(b) - g_(a);
    return p > q ? p : q;
}

static void test_contingency_values(void) {
    uint64_t c2[2] = {3, 1}, pure[4] = {3, 0, 0, 2}, mixed[4] = {2, 1, 0, 3}, c4[2] = {4, 1};
    double v, w, row[6];
    size_t t;

    TEST("information gain by hand");
    CHECK_STATUS(dpmo_information_gain(c2, 1, 2, &v), DPMO_OK);
    CHECK_NEAR(v, 3.0 * log2(3.0 / 4.0) + log2(1.0 / 4.0), 1e-12);
    CHECK_STATUS(dpmo_information_gain(pure, 2, 2, &v), DPMO_OK);
    CHECK_DEQ(v, 0.0);
    TEST("information gain: adding a record changes IG by -(f(4) - f(3)) (Lemma 5.5)");
    CHECK_STATUS(dpmo_information_gain(c2, 1, 2, &v), DPMO_OK);
    CHECK_STATUS(dpmo_information_gain(c4, 1, 2, &w), DPMO_OK);
    CHECK_NEAR(w - v, -(f_(4) - f_(3)), 1e-12);

    TEST("info gain delta table: LS(0) = max h(tau_j, tau_jc) (Lemma 5.5), non-decreasing, unclamped");
    CHECK_STATUS(dpmo_info_gain_delta_table(c2, 1, 2, 6, row), DPMO_OK);
    CHECK_NEAR(row[0], h_(4, 3) > h_(4, 1) ? h_(4, 3) : h_(4, 1), 1e-12);
    CHECK(row[0] >= fabs(w - v));
    for (t = 0; t + 1 < 6; t++) CHECK(row[t + 1] >= row[t]);
    {
        double delta_g, big[11];
        uint64_t four[2] = {0, 4};
        CHECK_STATUS(dpmo_info_gain_global_sensitivity(4, &delta_g), DPMO_OK);
        CHECK(row[0] <= delta_g);
        /* Unclamped: at distance 10 the table of N = 4 records has neighbours of 14 records, and the value
         * exceeds the global sensitivity for N = 4 (f(14) - f(0) = 5.3 > 3.76). */
        CHECK_STATUS(dpmo_info_gain_delta_table(four, 1, 2, 11, big), DPMO_OK);
        CHECK(big[0] <= delta_g);
        CHECK_NEAR(big[0], f_(4), 1e-12);
        CHECK(big[10] > delta_g);
        CHECK_NEAR(big[10], f_(14), 1e-12);
    }

    TEST("gini by hand");
    CHECK_STATUS(dpmo_gini(pure, 2, 2, &v), DPMO_OK);
    CHECK_DEQ(v, 0.0);
    CHECK_STATUS(dpmo_gini(c2 + 1, 1, 1, &v), DPMO_OK);
    CHECK_DEQ(v, 0.0);
    CHECK_STATUS(dpmo_gini(mixed, 2, 2, &v), DPMO_OK);
    CHECK_NEAR(v, -(3.0 - 5.0 / 3.0), 1e-15);
}

/* Admissibility of the information-gain delta rows and Gini's Δ = 2 from C: all 2 × 2 tables with counts
 * up to 3, neighbours adding or removing one record. */
static void test_contingency_brute_force(void) {
    enum { K = 4, T = 4 };
    static double ig[K + 1][K + 1][K + 1][K + 1], gi[K + 1][K + 1][K + 1][K + 1], d[K + 1][K + 1][K + 1][K + 1][T];
    int ok = 1, cond1 = 1, cond2 = 1, gini_ok = 1;
    int a, b, c, e, k, s;
    size_t t;
    TEST("information gain delta admissible, Gini within 2, on all 2 x 2 tables with counts <= 3");
    for (a = 0; a <= K; a++)
        for (b = 0; b <= K; b++)
            for (c = 0; c <= K; c++)
                for (e = 0; e <= K; e++) {
                    uint64_t x[4];
                    x[0] = (uint64_t)a;
                    x[1] = (uint64_t)b;
                    x[2] = (uint64_t)c;
                    x[3] = (uint64_t)e;
                    ok &= dpmo_information_gain(x, 2, 2, &ig[a][b][c][e]) == DPMO_OK;
                    ok &= dpmo_gini(x, 2, 2, &gi[a][b][c][e]) == DPMO_OK;
                    ok &= dpmo_info_gain_delta_table(x, 2, 2, T, d[a][b][c][e]) == DPMO_OK;
                }
    for (a = 0; a < K; a++)
        for (b = 0; b < K; b++)
            for (c = 0; c < K; c++)
                for (e = 0; e < K; e++)
                    for (k = 0; k < 4; k++)
                        for (s = -1; s <= 1; s += 2) {
                            int y[4];
                            y[0] = a;
                            y[1] = b;
                            y[2] = c;
                            y[3] = e;
                            y[k] += s;
                            if (y[k] < 0) continue;
                            cond1 &= fabs(ig[a][b][c][e] - ig[y[0]][y[1]][y[2]][y[3]]) <= d[a][b][c][e][0] + 1e-9;
                            for (t = 0; t + 1 < T; t++)
                                cond2 &= d[a][b][c][e][t + 1] >= d[y[0]][y[1]][y[2]][y[3]][t] - 1e-12;
                            gini_ok &= fabs(gi[a][b][c][e] - gi[y[0]][y[1]][y[2]][y[3]]) <=
                                       DPMO_GINI_GLOBAL_SENSITIVITY + 1e-12;
                        }
    CHECK(ok);
    CHECK(cond1);
    CHECK(cond2);
    CHECK(gini_ok);
}

/* ------------------------------------------------------------------ delta_max_into */
static void max_case(const char *name, double *acc, const double *other, size_t len, dpmo_status want) {
    TEST(name);
    guard(acc, span(len, sizeof(double)));
    guard(other, span(len, sizeof(double)));
    CHECK_STATUS(dpmo_delta_max_into(acc, other, len), want);
    CHECK_UNTOUCHED_IF_FAILED(want);
}

static void test_delta_max_into(void) {
    double acc[4] = {1.0, 0.25, 0.0, 3.0}, other[4] = {0.5, 0.75, 0.0, 2.0}, buf[8] = {0};
    max_case("delta_max_into ok", acc, other, 4, DPMO_OK);
    CHECK_DEQ(acc[0], 1.0);
    CHECK_DEQ(acc[1], 0.75);
    CHECK_DEQ(acc[2], 0.0);
    CHECK_DEQ(acc[3], 3.0);
    CHECK_DEQ(other[1], 0.75);
    max_case("delta_max_into len 0 ok", acc, other, 0, DPMO_OK);
    other[2] = nan("");
    max_case("delta_max_into NaN in other", acc, other, 4, DPMO_INVALID_SENSITIVITY_VALUE);
    other[2] = INFINITY;
    max_case("delta_max_into inf in other", acc, other, 4, DPMO_INVALID_SENSITIVITY_VALUE);
    other[2] = -1.0;
    max_case("delta_max_into negative in other", acc, other, 4, DPMO_INVALID_SENSITIVITY_VALUE);
    other[2] = 0.0;
    acc[3] = -0.5;
    max_case("delta_max_into negative in acc", acc, other, 4, DPMO_INVALID_SENSITIVITY_VALUE);
    acc[3] = 3.0;
    max_case("delta_max_into null acc", NULL, other, 4, DPMO_NULL_POINTER);
    max_case("delta_max_into null other", acc, NULL, 4, DPMO_NULL_POINTER);
    max_case("delta_max_into acc is other", acc, acc, 4, DPMO_OVERLAPPING_BUFFERS);
    max_case("delta_max_into overlapping", buf, buf + 3, 4, DPMO_OVERLAPPING_BUFFERS);
    max_case("delta_max_into overlapping other way", buf + 3, buf, 4, DPMO_OVERLAPPING_BUFFERS);
    max_case("delta_max_into adjacent ok", buf, buf + 4, 4, DPMO_OK);
    max_case("delta_max_into misaligned acc", (double *)misalign(acc), other, 2, DPMO_INVALID_ARGUMENT);
    max_case("delta_max_into misaligned other", acc, (const double *)misalign(other), 2, DPMO_INVALID_ARGUMENT);
    max_case("delta_max_into len overflows", acc, other, SIZE_MAX / 4, DPMO_OVERFLOW);
}

/* ------------------------------------------------------------------ end to end */
static void test_end_to_end(void) {
    graph_t g = gadget(1);
    double u[8], table[8 * 4], scratch[32], p[8], delta_g;
    uint32_t ebc_s[64];
    size_t perm[16], idx, i, sel;
    dpmo_rng rng = make_rng(DPMO_RNG_CHACHA20, 42);
    dpmo_budget budget = make_budget(16.0, 0.0);
    dpmo_sensitivity spec;

    TEST("end to end: degree + delta table -> select_local_dampening");
    CHECK_STATUS(dpmo_degree(g.offsets, g.n, g.adj, g.len, u), DPMO_OK);
    CHECK_STATUS(dpmo_degree_delta_table(g.offsets, g.n, g.adj, g.len, 4, table), DPMO_OK);
    spec = make_spec(DPMO_DELTA_TABLE, table, 32, 4, DPMO_DEGREE_GLOBAL_SENSITIVITY, 4);
    for (sel = 0; sel < N_RUNNABLE; sel++) {
        const size_t vl = ld_values_len(8, 1, RUNNABLE[sel]), il = ld_indices_len(8, 1, RUNNABLE[sel]);
        if (!CHECK(vl <= 32 && il <= 16)) continue;
        idx = SENTINEL_Z;
        CHECK_STATUS(dpmo_select_local_dampening(&rng, u, 8, &spec, DPMO_DAMPENING_PLAIN, RUNNABLE[sel], 1.0, scratch,
                                                 vl, perm, il, &idx, &budget),
                     DPMO_OK);
        CHECK(idx < 8);
    }
    CHECK_DEQ(budget.spent, (double)N_RUNNABLE);
    CHECK_STATUS(dpmo_local_dampening_probabilities(u, 8, &spec, DPMO_DAMPENING_PLAIN, 1.0, p), DPMO_OK);
    CHECK(sums_to_one(p, 8, 1e-12));
    /* δ = Δ = 1: dampening is the identity here, so this is the exponential mechanism on the degrees. */
    CHECK_NEAR(p[0] / p[2], exp(0.5 * (7.0 - 2.0)), 1e-9);

    TEST("end to end: EBC + delta table -> select_local_dampening (shifted)");
    CHECK_STATUS(dpmo_ebc(g.offsets, g.n, g.adj, g.len, ebc_s, 64, u), DPMO_OK);
    CHECK_STATUS(dpmo_ebc_global_sensitivity(7, &delta_g), DPMO_OK);
    CHECK_STATUS(dpmo_ebc_delta_table(g.offsets, g.n, g.adj, g.len, 7, 4, table), DPMO_OK);
    spec = make_spec(DPMO_DELTA_TABLE, table, 32, 4, delta_g, 4);
    idx = SENTINEL_Z;
    CHECK_STATUS(dpmo_select_local_dampening(&rng, u, 8, &spec, DPMO_DAMPENING_SHIFTED, DPMO_SELECTOR_EXPONENTIAL, 1.0,
                                             scratch, ld_values_len(8, 1, DPMO_SELECTOR_EXPONENTIAL), NULL, 0, &idx,
                                             &budget),
                 DPMO_OK);
    CHECK(idx < 8);
    CHECK_STATUS(dpmo_local_dampening_probabilities(u, 8, &spec, DPMO_DAMPENING_PLAIN, 1.0, p), DPMO_OK);
    CHECK(sums_to_one(p, 8, 1e-12));
    CHECK(p[0] > p[2]);

    TEST("end to end: egodensity + delta table, combined with the degree table by max (Lemma 4.5)");
    {
        double ego_t[8 * 4], deg_t[8 * 4];
        CHECK_STATUS(dpmo_egodensity(g.offsets, g.n, g.adj, g.len, u), DPMO_OK);
        CHECK_STATUS(dpmo_egodensity_delta_table(g.offsets, g.n, g.adj, g.len, 4, ego_t), DPMO_OK);
        CHECK_STATUS(dpmo_degree_delta_table(g.offsets, g.n, g.adj, g.len, 4, deg_t), DPMO_OK);
        CHECK_STATUS(dpmo_delta_max_into(ego_t, deg_t, 32), DPMO_OK);
        for (i = 0; i < 32; i++) CHECK_DEQ(ego_t[i], 1.0);
        spec = make_spec(DPMO_DELTA_TABLE, ego_t, 32, 4, DPMO_EGODENSITY_GLOBAL_SENSITIVITY, 4);
        idx = SENTINEL_Z;
        CHECK_STATUS(dpmo_select_local_dampening(&rng, u, 8, &spec, DPMO_DAMPENING_PLAIN,
                                                 DPMO_SELECTOR_PERMUTE_AND_FLIP, 1.0, scratch,
                                                 ld_values_len(8, 1, DPMO_SELECTOR_PERMUTE_AND_FLIP), perm,
                                                 ld_indices_len(8, 1, DPMO_SELECTOR_PERMUTE_AND_FLIP), &idx, &budget),
                     DPMO_OK);
        CHECK(idx < 8);
        CHECK_DEQ(budget.spent, (double)N_RUNNABLE + 2.0);
    }
}

int main(void) {
    test_bad_graphs();
    test_ebc_errors();
    test_global_sensitivities();
    test_graph_values();
    test_ebc_brute_force();
    test_rates();
    test_rate_brute_force();
    test_rate_table();
    test_contingency_errors();
    test_contingency_values();
    test_contingency_brute_force();
    test_delta_max_into();
    test_end_to_end();
    return HARNESS_FINISH();
}
