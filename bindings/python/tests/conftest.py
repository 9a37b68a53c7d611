"""Shared helpers: the χ² test (α = 1e-6, no scipy), the C library through ctypes, a Spark session."""

import ctypes
import math
import os

import numpy as np
import pytest

ALPHA = 1e-6


def _gammaincc(a: float, x: float) -> float:
    """The regularised upper incomplete gamma Q(a, x) (series below a + 1, continued fraction above)."""
    if x <= 0:
        return 1.0
    lg = math.lgamma(a)
    if x < a + 1:
        term = s = 1.0 / a
        ap = a
        for _ in range(10000):
            ap += 1
            term *= x / ap
            s += term
            if abs(term) < abs(s) * 1e-16:
                break
        return max(0.0, 1.0 - s * math.exp(-x + a * math.log(x) - lg))
    b, c, d = x + 1 - a, 1e300, 1 / (x + 1 - a)
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - lg) * h


def chi2_pvalue(observed, probabilities) -> float:
    """p-value of Pearson's χ² test of counts against probabilities; cells expected below 5 are pooled, and an
    observation in a cell of probability 0 gives p = 0."""
    obs = np.asarray(observed, dtype=float)
    p = np.asarray(probabilities, dtype=float)
    total = obs.sum()
    if np.any((p == 0) & (obs > 0)):
        return 0.0
    exp = p * total
    order = np.argsort(exp)
    cells_o, cells_e, acc_o, acc_e = [], [], 0.0, 0.0
    for i in order:
        acc_o += obs[i]
        acc_e += exp[i]
        if acc_e >= 5:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0:
        if cells_e:
            cells_o[-1] += acc_o
            cells_e[-1] += acc_e
        else:
            cells_o.append(acc_o)
            cells_e.append(acc_e)
    if len(cells_e) < 2:
        return 1.0
    stat = sum((o - e) ** 2 / e for o, e in zip(cells_o, cells_e))
    return _gammaincc((len(cells_e) - 1) / 2.0, stat / 2.0)


@pytest.fixture(scope="session")
def libdpmo():
    """The C library (target/release/libdpmo.so) through ctypes."""
    path = os.environ.get("DPMO_LIBDPMO")
    if not path or not os.path.exists(path):
        pytest.fail(f"DPMO_LIBDPMO does not name the C library (run `make lib`): {path!r}")
    lib = ctypes.CDLL(path)
    lib.dpmo_status_message.restype = ctypes.c_char_p
    lib.dpmo_version.restype = ctypes.c_char_p
    return lib


def c_doubles(values):
    a = np.ascontiguousarray(values, dtype=np.float64)
    return a, a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


class CRng(ctypes.Structure):
    _fields_ = [("opaque", ctypes.c_uint64 * 8)]


class CBudget(ctypes.Structure):
    """dpmo_budget: ε total and spent, then δ total and spent (0 for a pure-ε budget)."""
    _fields_ = [("total", ctypes.c_double), ("spent", ctypes.c_double),
                ("delta_total", ctypes.c_double), ("delta_spent", ctypes.c_double)]


class CSensitivity(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("values", ctypes.POINTER(ctypes.c_double)),
        ("values_len", ctypes.c_size_t),
        ("columns", ctypes.c_size_t),
        ("callback", ctypes.c_void_p),
        ("context", ctypes.c_void_p),
        ("global_", ctypes.c_double),
        ("t_max", ctypes.c_size_t),
    ]


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session whose Python workers run this interpreter (the fresh venv)."""
    import sys

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    from pyspark.sql import SparkSession

    s = (
        SparkSession.builder.master("local[2]")
        .appName("dpmo-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()
