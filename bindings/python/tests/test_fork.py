"""Fork: a generator never yields the same stream in two processes, a budget is not spent twice by copies,
and neither can be shipped to another process by pickling.

The attack (issue 21): a process holding a dpmo.Rng forks (os.fork, multiprocessing's fork or forkserver
start methods, or C code calling fork), and every child draws what the parent draws next — 2 distinct draws
among 8 multiprocessing tasks before the fix. Each child here reports its draws through a pipe; the parent
compares them with its own and with its other children's."""

import ctypes
import multiprocessing as mp
import os
import pickle
import platform
import select
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dpmo
import fork_worker

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")

UNIFORM = [0.0] * 1000


def _raw_clone():
    """fork(2) as a raw clone system call: no C-library atfork handlers, no Python hooks. clone(SIGCHLD, 0, ...)
    with every other argument 0 (their order differs between x86_64 and aarch64; zeros are zeros)."""
    number = {"x86_64": 56, "aarch64": 220}[platform.machine()]
    libc = ctypes.PyDLL(None)  # PyDLL: the GIL stays held across the call
    libc.syscall.restype = ctypes.c_long
    sigchld = 17
    return libc.syscall(ctypes.c_long(number), ctypes.c_long(sigchld), *[ctypes.c_long(0)] * 4)


def _libc_fork():
    """fork() of the C library called directly (Python's os.fork hooks do not run)."""
    libc = ctypes.PyDLL(None)
    libc.fork.restype = ctypes.c_int
    return libc.fork()


FORKS = {"os.fork": os.fork, "libc fork()": _libc_fork, "raw clone(2)": _raw_clone}


def outcome(fn):
    """("ok", value) or ("err", exception class name, detail, charged)."""
    try:
        return ("ok", fn())
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        return ("err", type(e).__name__, getattr(e, "detail", str(e)), getattr(e, "charged", None))


def report(fd, value):
    data = pickle.dumps(value)
    while data:
        data = data[os.write(fd, data):]


def collect(pid, fd, timeout=60.0):
    """The child's report, waiting at most `timeout` seconds (a hung child is killed and fails the test)."""
    deadline, chunks = time.monotonic() + timeout, []
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                os.kill(pid, 9)
                pytest.fail("a child process hung")
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks))


def in_child(fn, fork=os.fork):
    """Runs fn() in a forked child and returns outcome(fn) from there."""
    r, w = os.pipe()
    pid = fork()
    if pid == 0:
        try:
            os.close(r)
            report(w, outcome(fn))
        finally:
            os._exit(0)
    assert pid > 0
    os.close(w)
    return collect(pid, r)


def draws(rng, first):
    """Draws through both native paths (a selection: call::run; sample/discrete_laplace: Rng::with)."""
    if first == "select":
        pick = dpmo.select_exponential(rng, UNIFORM, sensitivity=1.0, epsilon=1.0)
        return (pick, tuple(rng.sample("uniform", 4).tolist()), int(rng.discrete_laplace(100.0)))
    u = tuple(rng.sample("uniform", 4).tolist())
    return (dpmo.select_exponential(rng, UNIFORM, sensitivity=1.0, epsilon=1.0), u, int(rng.discrete_laplace(100.0)))


def test_the_kernel_wipes_the_process_token_in_children():
    """On Linux ≥ 4.14 the token lives in a MADV_WIPEONFORK page: any fork is seen, even one that runs no
    handler (the raw clone below)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("MADV_WIPEONFORK is Linux-only; elsewhere an atfork handler and the pid are used")
    assert dpmo._native._fork_detection() == "wipe-on-fork"


@pytest.mark.parametrize("first", ["select", "sample"])
@pytest.mark.parametrize("how", list(FORKS))
def test_children_never_repeat_the_parents_draws(how, first):
    linux = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64")
    if how == "raw clone(2)" and not linux:
        pytest.skip("raw clone numbers known for Linux x86_64 and aarch64 only")
    if how == "os.fork":
        children_never_repeat_the_parents_draws(how, first)
        return
    # A fork that bypasses Python's own fork handling is safe only in a process with one thread: a child
    # copied while another Python thread waits for the GIL inherits CPython's pending "drop the GIL" request
    # and waits forever for that thread to take it (CPython, not dpmo; this pytest process has the threads of
    # the in-process Spark session, e.g. pyspark's accumulator server). So these forks run in a fresh
    # interpreter, which checks that it has a single thread.
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys, test_fork; assert __import__('threading').active_count() == 1; "
            f"test_fork.children_never_repeat_the_parents_draws({how!r}, {first!r})")
    run = subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def children_never_repeat_the_parents_draws(how, first):
    rng = dpmo.Rng()
    rng.sample("uniform", 3)  # used before the fork
    children = [in_child(lambda: draws(rng, first), fork=FORKS[how]) for _ in range(4)]
    assert all(c[0] == "ok" for c in children), children
    mine = draws(rng, first)
    # Before the fix all four children drew exactly what the parent then drew.
    assert len({c[1] for c in children} | {mine}) == 5
    # The parent's generator was not disturbed: it keeps working and draws fresh values.
    assert draws(rng, first) != mine


def test_the_check_sees_a_repeated_stream():
    """Control: the same stream in every child (a stream key is the same key everywhere, by design) is
    exactly what the distinctness check above catches."""
    key = dpmo.StreamKey()
    children = [in_child(lambda: draws(key.rng(7), "select")) for _ in range(3)]
    assert len({c[1] for c in children} | {draws(key.rng(7), "select")}) == 1


def test_a_generator_busy_in_another_thread_at_the_fork_is_fresh_in_the_child():
    """A thread is inside a call on the generator (its δ callback waits) when the main thread forks: the
    child has no such call, and gets a fresh generator instead of one marked busy forever."""
    rng = dpmo.Rng()
    inside, release = threading.Event(), threading.Event()

    def delta(r, t):
        inside.set()
        release.wait(30)
        return 1.0

    cb = dpmo.Sensitivity.callback(delta, global_sensitivity=1.0, t_max=2)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault(
        "pick", dpmo.select_local_dampening(rng, [0.0, 1.0], cb, epsilon=1.0, dampening="shifted")))
    t.start()
    assert inside.wait(30)
    with pytest.raises(dpmo.InvalidGeneratorError):
        rng.sample("uniform")  # busy here, in the parent
    child = in_child(lambda: draws(rng, "select"))
    release.set()
    t.join(30)
    assert child[0] == "ok", child
    assert result["pick"] in (0, 1)


def test_a_fork_inside_a_callback_withholds_the_childs_result():
    """A δ callback forks in the middle of a selection: both processes would finish the selection from the
    same generator state. The child gets InvalidGeneratorError (charged: its copy of the budget was charged
    before the fork); the parent gets its result."""
    rng, budget = dpmo.Rng(), dpmo.Budget(1.0)
    r, w = os.pipe()
    state = {}

    def delta(row, t):
        if "pid" not in state:
            state["pid"] = os.fork()
        return 1.0

    cb = dpmo.Sensitivity.callback(delta, global_sensitivity=1.0, t_max=2)
    out = outcome(lambda: dpmo.select_local_dampening(rng, UNIFORM, cb, epsilon=0.5, dampening="shifted",
                                                      budget=budget))
    if state["pid"] == 0:
        try:
            os.close(r)
            report(w, out)
        finally:
            os._exit(0)
    os.close(w)
    child = collect(state["pid"], r)
    assert out[0] == "ok" and 0 <= out[1] < 1000 and budget.spent == 0.5
    assert child[:2] == ("err", "InvalidGeneratorError") and child[3] is True and "forked" in child[2]


def test_reproducible_generators_refuse_in_a_child_and_per_process_streams_stay_reproducible():
    sim = dpmo.Rng.for_simulation(5)
    sim.sample("uniform")
    child = in_child(lambda: sim.sample("uniform", 2).tolist())
    assert child[:2] == ("err", "InvalidGeneratorError") and "fork" in child[2]
    child = in_child(lambda: dpmo.select_exponential(sim, UNIFORM, sensitivity=1.0, epsilon=1.0))
    assert child[:2] == ("err", "InvalidGeneratorError")
    # The parent's stream is untouched by the children.
    fresh = dpmo.Rng.for_simulation(5)
    fresh.sample("uniform")
    assert sim.sample("uniform", 3).tolist() == fresh.sample("uniform", 3).tolist()
    # The documented way: one stream per worker, derived in the worker, reproducible.
    key = dpmo.StreamKey.for_simulation(11)
    children = [in_child(lambda i=i: key.rng(i).sample("uniform", 2).tolist()) for i in range(3)]
    assert [c[1] for c in children] == [key.rng(i).sample("uniform", 2).tolist() for i in range(3)]


def test_a_budget_copied_by_fork_refuses_to_charge():
    budget = dpmo.Budget(1.0)
    rng = dpmo.Rng()

    def child():
        out = [outcome(lambda: budget.charge(0.1)),
               outcome(lambda: dpmo.select_exponential(rng, UNIFORM, sensitivity=1.0, epsilon=0.5, budget=budget))]
        own = dpmo.Budget(0.5)  # a budget made in the child charges normally
        own.charge(0.5)
        return out, budget.spent, own.spent, budget.remaining

    res = in_child(child)
    assert res[0] == "ok", res
    (charge, select_), spent, own, remaining = res[1]
    assert charge[:2] == ("err", "InvalidArgumentError") and "fork" in charge[2]
    assert select_[:2] == ("err", "InvalidArgumentError") and select_[3] is False
    assert spent == 0.0 and own == 0.5 and remaining == 1.0  # readable, not chargeable
    budget.charge(0.25)  # the parent's budget is its own
    assert budget.spent == 0.25


def test_allow_fork_lets_copies_charge_and_double_spend_as_documented():
    budget = dpmo.Budget(1.0, allow_fork=True)
    assert budget.allow_fork and "allow_fork=True" in repr(budget)
    child = in_child(lambda: (budget.charge(0.75), budget.spent)[1])
    budget.charge(0.75)
    assert child == ("ok", 0.75) and budget.spent == 0.75  # 1.5 spent in all from a budget of 1.0


def _pool_draws(method):
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["fork_worker"])
        # The server must find the module (Python < 3.12 ignores the sys.path it is sent).
        here = os.path.dirname(os.path.abspath(fork_worker.__file__))
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, saved) if p)
    try:
        # One task per worker process, so that every draw comes from a process of its own.
        pool = ctx.Pool(4, maxtasksperchild=1)
    finally:
        if method == "forkserver":
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
    with pool:
        return pool.map_async(fork_worker.draw, range(8), chunksize=1).get(timeout=120)


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_multiprocessing_pool_tasks_draw_distinct_streams(method):
    """The issue's attack: a Pool(4) running 8 tasks on a module-level generator. With fork the workers
    inherit the test process's generator; with forkserver, the server's (it preloaded the module)."""
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    results = _pool_draws(method)
    assert len({pid for pid, _, _ in results}) == 8
    if method == "fork":  # every worker inherited this process's generator
        assert {creator for _, creator, _ in results} == {os.getpid()}
    if method == "forkserver":  # every worker inherited the server's generator
        assert len({creator for _, creator, _ in results}) == 1
        assert all(creator != pid for pid, creator, _ in results)
    if method == "spawn":  # every worker made its own
        assert all(creator == pid for pid, creator, _ in results)
    assert len({d for _, _, d in results}) == 8


def test_generators_and_budgets_cannot_be_shipped_to_a_spawned_process():
    """Pickling is refused (a pickled state would be a copy), so passing one to a spawned or forkserver
    process fails in the parent, before any process starts; a StreamKey is what to ship."""
    ctx = mp.get_context("spawn")
    for target, arg in ((fork_worker.draw_from, dpmo.Rng()), (fork_worker.draw_from, dpmo.Rng.for_simulation(1)),
                        (fork_worker.charge, dpmo.Budget(1.0))):
        p = ctx.Process(target=target, args=(arg,))
        with pytest.raises(TypeError, match="cannot be pickled"):
            p.start()
    key = pickle.loads(pickle.dumps(dpmo.StreamKey()))
    assert isinstance(key.rng(0).sample("uniform"), float)
    assert np.isfinite(key.rng(1).sample("uniform"))
