"""The application sensitivity functions equal the C ABI's (graph metrics and δ tables, rates, information
gain, Gini, δ maxima), bit for bit."""

import ctypes

import numpy as np

import dpmo
from conftest import c_doubles

SIZE = ctypes.c_size_t


def random_graph(n, p, seed):
    rs = np.random.default_rng(seed)
    edges = [(u, v) for u in range(n) for v in range(u + 1, n) if rs.random() < p]
    return dpmo.Graph.from_edges(n, np.array(edges, dtype=np.int64).reshape(-1, 2)), edges


def csr(n, edges):
    adj = [[] for _ in range(n)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    offsets = np.cumsum([0] + [len(a) for a in adj]).astype(np.uint64)
    neigh = np.array([w for a in adj for w in sorted(a)], dtype=np.uint32)
    return offsets, neigh


def test_graph_metrics_equal_the_c_abi(libdpmo):
    n = 40
    g, edges = random_graph(n, 0.15, 3)
    offsets, neigh = csr(n, edges)
    assert g.node_count == n and g.edge_count == len(edges)
    po = offsets.ctypes.data_as(ctypes.POINTER(ctypes.c_size_t))
    pn = neigh.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))
    args = (po, SIZE(n), pn, SIZE(len(neigh)))
    for name, mine in (("dpmo_degree", g.degree()), ("dpmo_egodensity", g.egodensity())):
        out = np.zeros(n)
        assert getattr(libdpmo, name)(*args, c_doubles(out)[1]) == 0
        assert mine.tobytes() == out.tobytes()
    sl = SIZE()
    libdpmo.dpmo_ebc_scratch_len(SIZE(n), SIZE(len(neigh)), ctypes.byref(sl))
    scratch, out = (ctypes.c_uint32 * sl.value)(), np.zeros(n)
    assert libdpmo.dpmo_ebc(*args, scratch, sl, c_doubles(out)[1]) == 0
    assert g.ebc().tobytes() == out.tobytes()
    cols = 5
    for name, mine, extra in (
        ("dpmo_degree_delta_table", g.degree_delta_table(cols), ()),
        ("dpmo_egodensity_delta_table", g.egodensity_delta_table(cols), ()),
        ("dpmo_ebc_delta_table", g.ebc_delta_table(g.max_degree, cols), (SIZE(g.max_degree),)),
    ):
        out = np.zeros((n, cols))
        assert getattr(libdpmo, name)(*args, *extra, SIZE(cols), c_doubles(out)[1]) == 0
        assert mine.shape == (n, cols) and mine.tobytes() == out.tobytes()
    same = dpmo.Graph(offsets.astype(np.int64), neigh.astype(np.int64))
    assert same.degree().tobytes() == g.degree().tobytes()
    d = ctypes.c_double()
    libdpmo.dpmo_ebc_global_sensitivity(SIZE(7), ctypes.byref(d))
    assert dpmo.ebc_global_sensitivity(7) == d.value


def test_rates_and_split_criteria_equal_the_c_abi(libdpmo):
    d = ctypes.c_double()
    for tp, fn_ in ((3, 4), (0, 0), (10, 1)):
        libdpmo.dpmo_tpr(ctypes.c_uint64(tp), ctypes.c_uint64(fn_), ctypes.byref(d))
        assert dpmo.tpr(tp, fn_) == d.value
        libdpmo.dpmo_tnr(ctypes.c_uint64(tp), ctypes.c_uint64(fn_), ctypes.byref(d))
        assert dpmo.tnr(tp, fn_) == d.value
        for t in range(4):
            for rel, name in ((0, "add_remove"), (1, "substitution")):
                libdpmo.dpmo_rate_delta(ctypes.c_uint64(tp), ctypes.c_uint64(fn_), ctypes.c_uint64(t), rel, ctypes.byref(d))
                assert dpmo.rate_delta(tp, fn_, t, neighbours=name) == d.value
    hits, misses = np.array([3, 0, 10], dtype=np.uint64), np.array([4, 0, 1], dtype=np.uint64)
    out = np.zeros((3, 4))
    assert libdpmo.dpmo_rate_delta_table(hits.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)),
                                         misses.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)), SIZE(3), 1, SIZE(4),
                                         c_doubles(out)[1]) == 0
    assert dpmo.rate_delta_table(hits.astype(np.int64), misses.astype(np.int64), 4, neighbours="substitution").tobytes() == out.tobytes()
    counts = np.array([[10, 2], [3, 7], [0, 5]], dtype=np.uint64)
    pc = counts.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64))
    libdpmo.dpmo_information_gain(pc, SIZE(3), SIZE(2), ctypes.byref(d))
    assert dpmo.information_gain(counts.astype(np.int64)) == d.value
    libdpmo.dpmo_gini(pc, SIZE(3), SIZE(2), ctypes.byref(d))
    assert dpmo.gini_utility(counts.astype(np.int64)) == d.value
    libdpmo.dpmo_info_gain_global_sensitivity(ctypes.c_uint64(1000), ctypes.byref(d))
    assert dpmo.info_gain_global_sensitivity(1000) == d.value
    row = np.zeros(6)
    assert libdpmo.dpmo_info_gain_delta_table(pc, SIZE(3), SIZE(2), SIZE(6), c_doubles(row)[1]) == 0
    assert dpmo.info_gain_delta_table(counts.astype(np.int64), 6).tobytes() == row.tobytes()
    a, b = np.array([[1.0, 0.5], [0.2, 3.0]]), np.array([[0.5, 0.7], [0.1, 4.0]])
    assert dpmo.delta_max(a, b).tolist() == np.maximum(a, b).tolist()
    libdpmo.dpmo_advanced_composition(ctypes.c_double(0.1), SIZE(10), ctypes.c_double(1e-5), ctypes.byref(d))
    assert dpmo.advanced_composition(0.1, 10, 1e-5) == d.value


def test_score_stages():
    u = np.array([[1, 1], [1, 1], [0, 0]], dtype=float)
    assert dpmo.pareto_scores(u).tolist() == [0, 0, -2]
    assert dpmo.pareto_scores(u, dominance="weak").tolist() == [-1, -1, -2]
    assert dpmo.pareto_global_sensitivity(3) == 2.0
    assert dpmo.weighted_sum(u, [2.0, -1.0]).tolist() == [1.0, 1.0, 0.0]
    assert dpmo.weighted_global_sensitivity([2.0, -1.0], [1.0, 3.0]) == 5.0
    d = dpmo.Sensitivity.per_candidate([0.5, 1.0, 0.25], global_sensitivity=1.0, t_max=4)
    table, g = dpmo.weighted_sensitivity_table([2.0, -1.0], [d, d], 3)
    assert g == 3.0 and table.shape == (3, 3) and table[0, 0] == 1.5
    ps = dpmo.pareto_sensitivity_table(u, [d, d], 3)
    assert ps.shape == (3, 3) and np.all(np.diff(ps, axis=1) >= 0)
    assert d.value(2, 1) == 0.25 and d.value(2, 4) == 1.0
    m = dpmo.Sensitivity.table([[0.5, 1.0], [0.25, 0.75]], global_sensitivity=1.0).max_over_candidates()
    assert m.kind == "shared" and m.values.tolist() == [0.5, 1.0]
    assert dpmo.dampen([3.0, 1.0, 2.0], d).shape == (3,)
