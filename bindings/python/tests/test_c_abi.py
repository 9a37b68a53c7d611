"""The binding against the C ABI (target/release/libdpmo.so through ctypes): the same probabilities bit for
bit, the same selections from the same ChaCha20 seed, the same status codes and messages."""

import ctypes

import numpy as np
import pytest

import dpmo
from conftest import CBudget, CRng, CSensitivity, c_doubles

SEED = bytes(range(32))
SIZE = ctypes.c_size_t
P_SIZE = ctypes.POINTER(ctypes.c_size_t)


def c_rng(lib):
    r = CRng()
    assert lib.dpmo_rng_init(ctypes.byref(r), 0, ctypes.c_char_p(SEED)) == 0
    return r


def py_rng():
    return dpmo.Rng.for_simulation(SEED, kind="chacha20")


def spec_table(values, global_, t_max=None):
    a, p = c_doubles(values)
    rows, cols = a.shape
    s = CSensitivity(1, p, a.size, cols, None, None, global_, t_max or cols)
    s._keep = a
    return s


def spec_per(values, global_, t_max):
    a, p = c_doubles(values)
    s = CSensitivity(0, p, a.size, 0, None, None, global_, t_max)
    s._keep = a
    return s


SCORES = np.array([3.0, 0.0, -2.5, 3.0, 1.25, 7.0, 6.5])
UTIL = np.array([[5, 1], [3, 3], [1, 5], [2, 2], [4, 4], [0, 0]], dtype=float)
DELTA = np.array([[0.5, 1, 1], [1, 1, 1], [0.25, 0.5, 1], [1, 1, 1], [0.5, 0.5, 1], [1, 1, 1]])


def test_status_codes_and_messages_are_the_c_abis(libdpmo):
    for status, cls in dpmo.errors._BY_STATUS.items():
        assert libdpmo.dpmo_status_message(status).decode()
        e = dpmo.errors._make(status, libdpmo.dpmo_status_message(status).decode(), None, False)
        assert isinstance(e, cls) and e.status == status
    with pytest.raises(dpmo.InvalidEpsilonError) as info:
        dpmo.select_exponential(py_rng(), SCORES, sensitivity=1.0, epsilon=0.0)
    assert info.value.message == libdpmo.dpmo_status_message(4).decode()
    assert str(info.value) == info.value.message


def test_exponential_probabilities_equal_bitwise(libdpmo):
    for eps, sens in [(1.0, 1.0), (0.3, 2.5), (7.0, 0.1)]:
        a, p = c_doubles(SCORES)
        out = np.zeros(len(a))
        assert libdpmo.dpmo_exponential_probabilities(p, SIZE(len(a)), ctypes.c_double(sens), ctypes.c_double(eps),
                                                      c_doubles(out)[1]) == 0
        mine = dpmo.exponential_probabilities(SCORES, sensitivity=sens, epsilon=eps)
        assert mine.tobytes() == out.tobytes()


def test_local_dampening_probabilities_equal_bitwise(libdpmo):
    u = np.array([10.0, 3.0, 7.5, 0.0, 9.0, 1.0])
    for damp, code in [("plain", 0), ("shifted", 1)]:
        s = spec_table(DELTA, 1.0)
        out = np.zeros(6)
        assert libdpmo.dpmo_local_dampening_probabilities(c_doubles(u)[1], SIZE(6), ctypes.byref(s), code,
                                                          ctypes.c_double(0.8), c_doubles(out)[1]) == 0
        mine = dpmo.local_dampening_probabilities(u, dpmo.Sensitivity.table(DELTA, global_sensitivity=1.0),
                                                  epsilon=0.8, dampening=damp)
        assert mine.tobytes() == out.tobytes()


def _c_privpareto_probabilities(lib, u, deltas, damp_code, eps):
    n, m = u.shape
    vl, il = SIZE(), SIZE()
    assert lib.dpmo_privpareto_scratch_len(SIZE(n), SIZE(m), ctypes.byref(vl), ctypes.byref(il)) == 0
    values, indices = np.zeros(vl.value), (ctypes.c_size_t * il.value)()
    out = np.zeros(n)
    specs = (CSensitivity * m)(*deltas) if deltas else None
    st = lib.dpmo_privpareto_probabilities(c_doubles(u)[1], SIZE(n), SIZE(m), 0, specs, SIZE(0), damp_code,
                                           ctypes.c_double(eps), c_doubles(out)[1], c_doubles(values)[1], vl,
                                           indices, il)
    assert st == 0
    return out


def test_privpareto_and_privagg_probabilities_equal_bitwise(libdpmo):
    d0 = DELTA
    d1 = np.minimum(DELTA * 2, 1.0)
    c_specs = [spec_table(d0, 1.0), spec_table(d1, 1.0)]
    py_specs = [dpmo.Sensitivity.table(d0, global_sensitivity=1.0), dpmo.Sensitivity.table(d1, global_sensitivity=1.0)]
    for damp, code in [("plain", 0), ("shifted", 1)]:
        c = _c_privpareto_probabilities(libdpmo, UTIL, c_specs, code, 0.7)
        mine = dpmo.privpareto_probabilities(UTIL, epsilon=0.7, deltas=py_specs, dampening=damp)
        assert mine.tobytes() == c.tobytes()
    c = _c_privpareto_probabilities(libdpmo, UTIL, None, 0, 0.7)
    assert dpmo.privpareto_probabilities(UTIL, epsilon=0.7).tobytes() == c.tobytes()
    # PrivAgg, global and local.
    n, m = UTIL.shape
    vl, il = SIZE(), SIZE()
    assert libdpmo.dpmo_privagg_scratch_len(SIZE(n), SIZE(m), ctypes.byref(vl), ctypes.byref(il)) == 0
    w, g = np.array([1.0, -0.5]), np.array([1.0, 2.0])
    for local in (False, True):
        out, values = np.zeros(n), np.zeros(vl.value)
        specs = (CSensitivity * m)(*c_specs) if local else None
        st = libdpmo.dpmo_privagg_probabilities(c_doubles(UTIL)[1], SIZE(n), SIZE(m), c_doubles(w)[1],
                                                c_doubles(g)[1], specs, SIZE(0), 0, ctypes.c_double(0.9),
                                                c_doubles(out)[1], c_doubles(values)[1], vl)
        assert st == 0
        kw = {"deltas": py_specs} if local else {"globals": g}
        mine = dpmo.privagg_probabilities(UTIL, w, epsilon=0.9, **kw)
        assert mine.tobytes() == out.tobytes()


def test_the_same_seed_gives_the_same_selections_as_the_c_abi(libdpmo):
    c, py = c_rng(libdpmo), py_rng()
    a, p = c_doubles(SCORES)
    n = len(a)
    out = SIZE()
    budget = CBudget(1e6, 0.0)
    mine_budget = dpmo.Budget(1e6, allow_simulation=True)  # a seeded generator: the C ABI's stream
    perm = (ctypes.c_size_t * n)()
    for i in range(200):
        eps = 0.1 + 0.05 * i
        assert libdpmo.dpmo_select_exponential(ctypes.byref(c), p, SIZE(n), ctypes.c_double(1.0),
                                               ctypes.c_double(eps), ctypes.byref(out), ctypes.byref(budget)) == 0
        assert dpmo.select_exponential(py, SCORES, sensitivity=1.0, epsilon=eps, budget=mine_budget) == out.value
        assert libdpmo.dpmo_select_permute_and_flip(ctypes.byref(c), p, SIZE(n), ctypes.c_double(1.0),
                                                    ctypes.c_double(eps), perm, SIZE(n), ctypes.byref(out), None) == 0
        assert dpmo.select_permute_and_flip(py, SCORES, sensitivity=1.0, epsilon=eps) == out.value
    assert budget.spent == mine_budget.spent
    # Top-k (permute-and-flip) and discrete Laplace.
    k = 3
    picks = (ctypes.c_size_t * k)()
    scratch, iscratch = np.zeros(n), (ctypes.c_size_t * (2 * n))()
    assert libdpmo.dpmo_select_top_k(ctypes.byref(c), 1, p, SIZE(n), ctypes.c_double(1.0), ctypes.c_double(2.0),
                                     SIZE(k), picks, c_doubles(scratch)[1], SIZE(n), iscratch, SIZE(2 * n), None) == 0
    mine = dpmo.select_top_k(py, SCORES, k, sensitivity=1.0, epsilon=2.0, selector="permute_and_flip")
    assert list(mine) == list(picks)
    noise = (ctypes.c_int64 * 50)()
    assert libdpmo.dpmo_sample_discrete_laplace(ctypes.byref(c), ctypes.c_double(3.0), ctypes.c_double(1.0),
                                                noise, SIZE(50)) == 0
    assert list(py.discrete_laplace(3.0, 50)) == list(noise)
    # PrivPareto, local, top-2.
    n2, m2 = UTIL.shape
    vl, il = SIZE(), SIZE()
    libdpmo.dpmo_privpareto_scratch_len(SIZE(n2), SIZE(m2), ctypes.byref(vl), ctypes.byref(il))
    values, indices, picks2 = np.zeros(vl.value), (ctypes.c_size_t * il.value)(), (ctypes.c_size_t * 2)()
    specs = (CSensitivity * 2)(spec_table(DELTA, 1.0), spec_table(DELTA, 1.0))
    assert libdpmo.dpmo_select_privpareto(ctypes.byref(c), c_doubles(UTIL)[1], SIZE(n2), SIZE(m2), 0, specs,
                                          SIZE(0), 0, 0, ctypes.c_double(1.0), SIZE(2), picks2,
                                          c_doubles(values)[1], vl, indices, il, None) == 0
    d = dpmo.Sensitivity.table(DELTA, global_sensitivity=1.0)
    assert list(dpmo.select_privpareto(py, UTIL, epsilon=1.0, k=2, deltas=[d, d])) == list(picks2)
