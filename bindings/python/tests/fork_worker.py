"""Tasks for the multiprocessing tests of test_fork.py (a module of its own, so that the forkserver can preload
it and the workers can import it). ``RNG`` is made at import: a process that forks after importing this
module (the test process, or the forkserver after preloading it) hands the same generator to every child."""

import os

import dpmo

RNG = dpmo.Rng()
CREATOR = os.getpid()  # the process that made RNG
SCORES = [0.0] * 1000  # a uniform selection over 1000 candidates: repeats are rare unless randomness repeats


def draw(_task):
    """One task: (its pid, the pid that made RNG, four uniforms and one selection from RNG)."""
    u = tuple(RNG.sample("uniform", 4).tolist())
    pick = dpmo.select_exponential(RNG, SCORES, sensitivity=1.0, epsilon=1.0)
    return os.getpid(), CREATOR, u + (pick,)


def draw_from(rng):
    """A task given a generator as its argument (it cannot be pickled: this never runs)."""
    return rng.sample("uniform")


def charge(budget):
    """A task given a budget as its argument (it cannot be pickled: this never runs)."""
    budget.charge(0.1)
