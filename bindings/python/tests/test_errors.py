"""Every bad argument raises a DpmoError with the C ABI's status and charges nothing; private data never
fails (NaN, ±∞ and bad δ values follow a public rule, issue 20) and is charged like any selection; the
probing attack of issue 20; generators that are busy, copied or pickled; δ callbacks that raise or re-enter."""

import copy
import pickle
import threading

import numpy as np
import pytest

import dpmo

S = [1.0, 2.0, 3.0]
U = np.array([[5, 1], [3, 3], [1, 5]], dtype=float)


@pytest.fixture()
def rng():
    return dpmo.Rng.for_simulation(7)


def one(rng, **kw):
    return dpmo.select_exponential(rng, S, sensitivity=1.0, epsilon=1.0, **kw)


ARGUMENT_ERRORS = [
    (dpmo.InvalidEpsilonError, lambda r, b: dpmo.select_exponential(r, S, sensitivity=1.0, epsilon=0.0, budget=b)),
    (dpmo.InvalidEpsilonError, lambda r, b: dpmo.select_exponential(r, S, sensitivity=1.0, epsilon=float("nan"), budget=b)),
    (dpmo.InvalidEpsilonError, lambda r, b: dpmo.select_permute_and_flip(r, S, sensitivity=1.0, epsilon=float("inf"), budget=b)),
    (dpmo.InvalidSensitivityError, lambda r, b: dpmo.select_exponential(r, S, sensitivity=0.0, epsilon=1.0, budget=b)),
    (dpmo.InvalidSensitivityError, lambda r, b: dpmo.select_exponential(r, S, sensitivity=-1.0, epsilon=1.0, budget=b)),
    (dpmo.EmptyInputError, lambda r, b: dpmo.select_exponential(r, [], sensitivity=1.0, epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select(r, S, sensitivity=1.0, epsilon=1.0, selector="best", budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select(r, S, sensitivity=1.0, epsilon=1.0, arithmetic="approx", budget=b)),
    (dpmo.UnsupportedError, lambda r, b: dpmo.select_noisy_max(r, S, sensitivity=1.0, epsilon=1.0, noise="laplace", budget=b)),
    (dpmo.UnsupportedError, lambda r, b: dpmo.select_top_k(r, S, 2, sensitivity=1.0, epsilon=1.0, selector="noisy_max_laplace", budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_top_k(r, S, 0, sensitivity=1.0, epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_top_k(r, S, 4, sensitivity=1.0, epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_top_k(r, S, -1, sensitivity=1.0, epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_top_k_gumbel(r, S, 5, sensitivity=1.0, epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_local_dampening(r, S, dpmo.Sensitivity.per_candidate([1, 1, 1], global_sensitivity=1, t_max=3), epsilon=1.0, dampening="soft", budget=b)),
    (dpmo.LengthMismatchError, lambda r, b: dpmo.select_local_dampening(r, S, dpmo.Sensitivity.per_candidate([1, 1], global_sensitivity=1, t_max=3), epsilon=1.0, budget=b)),
    (dpmo.EmptyInputError, lambda r, b: dpmo.select_local_dampening_top_k(r, [], dpmo.Sensitivity.shared([1.0], global_sensitivity=1), 1, epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_privpareto(r, U, epsilon=1.0, k=4, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_privpareto(r, U, epsilon=1.0, dominance="strong", budget=b)),
    (dpmo.LengthMismatchError, lambda r, b: dpmo.select_privpareto(r, U, epsilon=1.0, deltas=[dpmo.Sensitivity.per_candidate([1, 1, 1], global_sensitivity=1, t_max=2)], budget=b)),
    (dpmo.CapacityExceededError, lambda r, b: dpmo.select_privpareto(r, np.zeros((3, 17)), epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_privpareto(r, np.zeros((3, 0)), epsilon=1.0, budget=b)),
    (dpmo.NullPointerError, lambda r, b: dpmo.select_privagg(r, U, [1, 1], epsilon=1.0, budget=b)),
    (dpmo.InvalidArgumentError, lambda r, b: dpmo.select_privagg(r, U, [1, 1], epsilon=1.0, globals=[1, 1], deltas=[], budget=b)),
    (dpmo.LengthMismatchError, lambda r, b: dpmo.select_privagg(r, U, [1, 1, 1], epsilon=1.0, globals=[1, 1], budget=b)),
    (dpmo.NonFiniteInputError, lambda r, b: dpmo.select_privagg(r, U, [1, float("nan")], epsilon=1.0, globals=[1, 1], budget=b)),
    (dpmo.InvalidSensitivityError, lambda r, b: dpmo.select_privagg(r, U, [1, 1], epsilon=1.0, globals=[1, 0], budget=b)),
]


@pytest.mark.parametrize("error,call", ARGUMENT_ERRORS)
def test_argument_errors_raise_and_charge_nothing(rng, error, call):
    budget = dpmo.Budget(1.0, allow_simulation=True)  # the fixture is a simulation generator
    before = rng.sample("uniform", 4)
    rng2 = dpmo.Rng.for_simulation(7)
    rng2.sample("uniform", 4)
    with pytest.raises(error) as info:
        call(rng, budget)
    assert info.value.status == error.status and not info.value.charged
    assert budget.spent == 0.0
    # The generator did not move either.
    assert rng.sample("uniform") == rng2.sample("uniform")
    assert before is not None


MAX = float(np.finfo(np.float64).max)
NAN, INF = float("nan"), float("inf")


def _per(values):
    return dpmo.Sensitivity.per_candidate(values, global_sensitivity=1, t_max=3)


def _table(rows):
    return dpmo.Sensitivity.table(rows, global_sensitivity=1)


# (call on data with private values that used to fail, the same call on the data rewritten by the public rule:
# a NaN utility is the lowest score (-MAX), ±inf is ±MAX, a δ value that is NaN, negative or infinite is Δ and
# one above Δ is Δ).
PRIVATE_DATA = [
    (lambda r, b: dpmo.select_exponential(r, [1.0, NAN, 0.5], sensitivity=1.0, epsilon=0.5, budget=b),
     lambda r, b: dpmo.select_exponential(r, [1.0, -MAX, 0.5], sensitivity=1.0, epsilon=0.5, budget=b)),
    (lambda r, b: dpmo.select_top_k(r, [1.0, INF, 0.0, -INF], 2, sensitivity=1.0, epsilon=0.5, budget=b),
     lambda r, b: dpmo.select_top_k(r, [1.0, MAX, 0.0, -MAX], 2, sensitivity=1.0, epsilon=0.5, budget=b)),
    (lambda r, b: dpmo.select_top_k_gumbel(r, [1.0, NAN, 0.0], 2, sensitivity=1.0, epsilon=0.5, budget=b),
     lambda r, b: dpmo.select_top_k_gumbel(r, [1.0, -MAX, 0.0], 2, sensitivity=1.0, epsilon=0.5, budget=b)),
    (lambda r, b: dpmo.select(r, [NAN, 2.0, INF], sensitivity=1.0, epsilon=0.5, arithmetic="isochronous", budget=b),
     lambda r, b: dpmo.select(r, [-MAX, 2.0, MAX], sensitivity=1.0, epsilon=0.5, arithmetic="isochronous", budget=b)),
    (lambda r, b: dpmo.select(r, [NAN, 2.0, INF], sensitivity=1.0, epsilon=0.5, selector="noisy_max_laplace",
                              arithmetic="float", budget=b),
     lambda r, b: dpmo.select(r, [-MAX, 2.0, MAX], sensitivity=1.0, epsilon=0.5, selector="noisy_max_laplace",
                              arithmetic="float", budget=b)),
    (lambda r, b: dpmo.select_privpareto(r, [[1.0, NAN], [0, 0], [INF, -INF]], epsilon=0.5, k=2, budget=b),
     lambda r, b: dpmo.select_privpareto(r, [[1.0, -MAX], [0, 0], [MAX, -MAX]], epsilon=0.5, k=2, budget=b)),
    (lambda r, b: dpmo.select_local_dampening(r, [1.0, NAN, 3.0], _per([1, -1, 1]), epsilon=0.5, budget=b),
     lambda r, b: dpmo.select_local_dampening(r, [1.0, -MAX, 3.0], _per([1, 1, 1]), epsilon=0.5, budget=b)),
    (lambda r, b: dpmo.select_local_dampening(r, S, _per([0.5, NAN, INF]), epsilon=0.5, dampening="shifted", budget=b),
     lambda r, b: dpmo.select_local_dampening(r, S, _per([0.5, 1, 1]), epsilon=0.5, dampening="shifted", budget=b)),
    (lambda r, b: dpmo.select_local_dampening(r, S, _table([[0.5, 0], [NAN, 0.5], [7.0, -0.0]]), epsilon=0.5,
                                              arithmetic="isochronous", budget=b),
     lambda r, b: dpmo.select_local_dampening(r, S, _table([[0.5, 0], [1.0, 0.5], [1.0, 0.0]]), epsilon=0.5,
                                              arithmetic="isochronous", budget=b)),
    (lambda r, b: dpmo.select_local_dampening_top_k(r, [INF, 1.0, NAN], _table([[1.0], [NAN], [1.0]]), 2,
                                                    epsilon=0.5, budget=b),
     lambda r, b: dpmo.select_local_dampening_top_k(r, [MAX, 1.0, -MAX], _table([[1.0], [1.0], [1.0]]), 2,
                                                    epsilon=0.5, budget=b)),
    # a callback's NaN is a value like any other (an exception it raises is the caller's bug: see below)
    (lambda r, b: dpmo.select_privagg(r, U, [1, 1], epsilon=0.5, deltas=[_per([0.5, 0.5, 0.5]), dpmo.Sensitivity.callback(
        lambda r_, t: NAN if r_ == 1 else 0.5, global_sensitivity=1, t_max=2)], budget=b),
     lambda r, b: dpmo.select_privagg(r, U, [1, 1], epsilon=0.5, deltas=[_per([0.5, 0.5, 0.5]), dpmo.Sensitivity.callback(
         lambda r_, t: 1.0 if r_ == 1 else 0.5, global_sensitivity=1, t_max=2)], budget=b)),
    (lambda r, b: dpmo.select_privagg(r, [[1.0, NAN], [0, 0], [INF, 2]], [1, 1], epsilon=0.5, globals=[1, 1], k=2,
                                      arithmetic="isochronous", budget=b),
     lambda r, b: dpmo.select_privagg(r, [[1.0, -MAX], [0, 0], [MAX, 2]], [1, 1], epsilon=0.5, globals=[1, 1], k=2,
                                      arithmetic="isochronous", budget=b)),
]


@pytest.mark.parametrize("bad,rule", PRIVATE_DATA)
def test_private_data_never_fails_and_is_charged_by_the_public_rule(bad, rule):
    """Issue 20.4: a status that depends on the private data would let the analyst probe it at any ε he likes.
    A NaN or infinite utility and a bad δ value are sanitised by a public rule instead: the call succeeds, is
    charged ε, and returns what the same seed returns on the data rewritten by the rule, leaving the generator
    in the same state."""
    budget = dpmo.Budget(1.0, allow_simulation=True)
    a, b = dpmo.Rng.for_simulation(11), dpmo.Rng.for_simulation(11)
    got = bad(a, budget)
    assert budget.spent == 0.5
    assert np.array_equal(np.asarray(got), np.asarray(rule(b, None)))
    assert a.sample("uniform") == b.sample("uniform")
    bad(a, budget)
    with pytest.raises(dpmo.BudgetExhaustedError):
        bad(a, budget)
    assert budget.spent == 1.0


def test_no_free_probing():
    """The attack of issue 20: with a budget, many selections at a negligible ε over the data with one NaN
    record, against the same data without it. Each probe used to fail with NonFiniteInputError exactly when the
    NaN was there (locating the record among 40 for ~1e-319 of budget); now every probe succeeds, both budgets
    are charged the same, and the generators consumed the same: the status, the charge and the randomness
    consumed carry nothing about the NaN (only the outputs do, at the ε paid)."""
    n, tiny = 40, 5e-324
    clean = np.arange(n, dtype=float)
    probes = [
        lambda r, d, b: dpmo.select_exponential(r, d, sensitivity=1.0, epsilon=tiny, budget=b),
        lambda r, d, b: dpmo.select_permute_and_flip(r, d, sensitivity=1.0, epsilon=tiny, budget=b),
        # top-2 at 2·tiny: ε/k = 5e-324 per round (ε/k rounding to 0 is an argument error, the same on both)
        lambda r, d, b: dpmo.select_top_k(r, d, 2, sensitivity=1.0, epsilon=2 * tiny, budget=b),
        lambda r, d, b: dpmo.select_top_k_gumbel(r, d, 2, sensitivity=1.0, epsilon=2 * tiny, budget=b),
        lambda r, d, b: dpmo.select_local_dampening(
            r, d, dpmo.Sensitivity.per_candidate(np.where(np.isnan(d), NAN, 1.0), global_sensitivity=1.0, t_max=4),
            epsilon=tiny, budget=b),
        lambda r, d, b: dpmo.select_privpareto(r, np.column_stack([d, clean]), epsilon=tiny, budget=b),
        lambda r, d, b: dpmo.select_privagg(r, np.column_stack([d, clean]), [1, 1], epsilon=tiny,
                                            globals=[1, 1], budget=b),
    ]
    for where in (0, 17, n - 1):
        with_nan = clean.copy()
        with_nan[where] = NAN
        b_nan = dpmo.Budget(1.0, allow_simulation=True)
        b_clean = dpmo.Budget(1.0, allow_simulation=True)
        r_nan, r_clean = dpmo.Rng.for_simulation(where), dpmo.Rng.for_simulation(where)
        for i in range(20):
            for probe in probes:
                out_nan = probe(r_nan, with_nan, b_nan)  # never raises
                out_clean = probe(r_clean, clean, b_clean)
                assert np.all((np.asarray(out_nan) >= 0) & (np.asarray(out_nan) < n))
                assert np.asarray(out_nan).shape == np.asarray(out_clean).shape
                assert b_nan.spent == b_clean.spent > 0.0
        assert r_nan.sample("uniform") == r_clean.sample("uniform")
    # Arithmetic on a negligible ε: the probes were charged (20 · 9 · 5e-324, not rounded away).
    assert b_nan.spent == b_clean.spent >= 180 * tiny


BUDGETED_RELEASES = [
    lambda r, b: dpmo.select_exponential(r, S, sensitivity=1.0, epsilon=0.25, budget=b),
    lambda r, b: dpmo.select(r, S, sensitivity=1.0, epsilon=0.25, selector="noisy_max_laplace", arithmetic="float", budget=b),
    lambda r, b: dpmo.select_permute_and_flip(r, S, sensitivity=1.0, epsilon=0.25, budget=b),
    lambda r, b: dpmo.select_top_k(r, S, 2, sensitivity=1.0, epsilon=0.25, budget=b),
    lambda r, b: dpmo.select_top_k_gumbel(r, S, 2, sensitivity=1.0, epsilon=0.25, budget=b),
    lambda r, b: dpmo.select_local_dampening(r, S, dpmo.Sensitivity.per_candidate([1, 1, 1], global_sensitivity=1, t_max=3), epsilon=0.25, budget=b),
    lambda r, b: dpmo.select_local_dampening_top_k(r, S, dpmo.Sensitivity.shared([1.0], global_sensitivity=1), 2, epsilon=0.25, budget=b),
    lambda r, b: dpmo.select_privpareto(r, U, epsilon=0.25, budget=b),
    lambda r, b: dpmo.select_privagg(r, U, [1, 1], epsilon=0.25, globals=[1, 1], budget=b),
]


@pytest.mark.parametrize("call", BUDGETED_RELEASES)
def test_a_simulation_generator_is_refused_for_a_budgeted_release(call):
    """A reproducible generator's draws are known to whoever knows the seed: a release charged to a budget
    refuses it (nothing charged, the generator unmoved) unless the budget was made for a simulation."""
    sim, twin = dpmo.Rng.for_simulation(3), dpmo.Rng.for_simulation(3)
    budget = dpmo.Budget(1.0)
    with pytest.raises(dpmo.InvalidGeneratorError, match="allow_simulation") as info:
        call(sim, budget)
    assert not info.value.charged and budget.spent == 0.0
    assert sim.sample("uniform") == twin.sample("uniform")
    for stream in (dpmo.StreamKey.for_simulation(3).rng(0),):
        with pytest.raises(dpmo.InvalidGeneratorError):
            call(stream, budget)
    call(dpmo.Rng(), budget)  # a production generator: charged as usual
    assert budget.spent == 0.25
    sim_budget = dpmo.Budget(1.0, allow_simulation=True)
    assert sim_budget.allow_simulation and "allow_simulation=True" in repr(sim_budget)
    call(sim, sim_budget)
    call(sim, None)  # no budget: a simulation by definition
    assert sim_budget.spent == 0.25


def test_a_simulation_key_or_generator_is_refused_for_a_budgeted_distributed_release():
    from dpmo import distributed as dd

    mp = dd.local_partitions(np.arange(3), [0.0, 1.0, 2.0], 2)
    budget = dpmo.Budget(1.0)
    for rng, key in ((dpmo.Rng.for_simulation(1), None), (dpmo.Rng(), dpmo.StreamKey.for_simulation(1))):
        with pytest.raises(dpmo.InvalidGeneratorError, match="allow_simulation"):
            dd.select_partitioned(rng, mp, 3, sensitivity=1.0, epsilon=0.5, budget=budget, key=key)
    assert budget.spent == 0.0
    dd.select_partitioned(dpmo.Rng.for_simulation(1), mp, 3, sensitivity=1.0, epsilon=0.5,
                          budget=dpmo.Budget(1.0, allow_simulation=True), key=dpmo.StreamKey.for_simulation(1))


def test_budget_exhausted_changes_nothing(rng):
    budget = dpmo.Budget(0.75, allow_simulation=True)
    one(rng, budget=budget) if False else dpmo.select_exponential(rng, S, sensitivity=1.0, epsilon=0.5, budget=budget)
    with pytest.raises(dpmo.BudgetExhaustedError) as info:
        dpmo.select_exponential(rng, S, sensitivity=1.0, epsilon=0.5, budget=budget)
    assert not info.value.charged and budget.spent == 0.5
    dpmo.select_exponential(rng, S, sensitivity=1.0, epsilon=budget.remaining, budget=budget)
    assert budget.remaining == 0.0


def test_budget_validation_and_accounting():
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(dpmo.InvalidEpsilonError):
            dpmo.Budget(bad)
    b = dpmo.Budget(1.0)
    for _ in range(9):
        b.charge(0.1)
    with pytest.raises(dpmo.BudgetExhaustedError):
        b.charge(0.1)  # ten doubles 0.1 sum to more than 1 exactly
    b.charge(b.remaining)
    assert b.spent <= 1.0 and b.remaining == 0.0
    with pytest.raises(TypeError):
        copy.copy(b)
    with pytest.raises(TypeError):
        pickle.dumps(b)


def test_generators_cannot_be_copied_or_pickled_and_seeds_are_checked():
    r = dpmo.Rng()
    assert r.kind == "chacha20" and not r.reproducible
    for f in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError):
            f(r)
    for bad in (-1, 2**256, b"short", True):
        with pytest.raises(dpmo.InvalidArgumentError):
            dpmo.Rng.for_simulation(bad)
    with pytest.raises(TypeError):
        dpmo.Rng.for_simulation(1.5)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Rng.for_simulation(1, kind="mt19937")
    assert dpmo.Rng.for_simulation(1).kind == "xoshiro256pp" and dpmo.Rng.for_simulation(1).reproducible
    # Two OS-seeded generators differ; two simulation generators with one seed agree.
    assert dpmo.Rng().sample("uniform", 4).tolist() != dpmo.Rng().sample("uniform", 4).tolist()
    assert dpmo.Rng.for_simulation(5).sample("uniform", 4).tolist() == dpmo.Rng.for_simulation(5).sample("uniform", 4).tolist()
    with pytest.raises(dpmo.InvalidArgumentError):
        r.sample("cauchy")
    with pytest.raises(dpmo.InvalidArgumentError):
        r.discrete_laplace(0.0)
    with pytest.raises(dpmo.InvalidArgumentError):
        r.sample("uniform", -2)


def test_stream_keys_pickle_and_derive_distinct_streams():
    k = dpmo.StreamKey()
    k2 = pickle.loads(pickle.dumps(k))
    assert k.rng(3).sample("uniform", 3).tolist() == k2.rng(3).sample("uniform", 3).tolist()
    assert k.rng(3).sample("uniform", 3).tolist() != k.rng(4).sample("uniform", 3).tolist()
    assert dpmo.StreamKey().rng(3).sample("uniform") != k.rng(3).sample("uniform")
    assert not k.reproducible and dpmo.StreamKey.for_simulation(1).rng(0).reproducible


def test_a_callback_that_raises_is_a_data_failure_with_its_cause(rng):
    """An exception in the caller's own δ callback is the caller's bug, visible to the caller whatever the
    data: the call still fails (its exception as __cause__) and keeps the charge. A NaN it returns is a value
    and counts as Δ (test_private_data_never_fails_and_is_charged_by_the_public_rule)."""
    def delta(r, t):
        if r == 1:
            raise KeyError("secret row")
        return 0.5

    budget = dpmo.Budget(1.0, allow_simulation=True)
    cb = dpmo.Sensitivity.callback(delta, global_sensitivity=1.0, t_max=4)
    for damp in ("plain", "shifted"):
        with pytest.raises(dpmo.InvalidSensitivityValueError) as info:
            dpmo.select_local_dampening(rng, S, cb, epsilon=0.25, dampening=damp, budget=budget)
        assert isinstance(info.value.__cause__, KeyError) and info.value.charged
    assert budget.spent == 0.5
    with pytest.raises(dpmo.InvalidSensitivityValueError) as info:
        dpmo.Sensitivity.callback(lambda r, t: "x", global_sensitivity=1.0, t_max=2).value(0, 0, n=3)
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(TypeError):
        dpmo.Sensitivity.callback(3, global_sensitivity=1.0, t_max=2)


def test_a_callback_that_reenters_with_the_same_generator_is_refused(rng):
    def delta(r, t):
        dpmo.select_exponential(rng, S, sensitivity=1.0, epsilon=1.0)
        return 1.0

    cb = dpmo.Sensitivity.callback(delta, global_sensitivity=1.0, t_max=2)
    with pytest.raises(dpmo.InvalidSensitivityValueError) as info:
        dpmo.select_local_dampening(rng, S, cb, epsilon=1.0, dampening="shifted")
    assert isinstance(info.value.__cause__, dpmo.InvalidGeneratorError)
    # Another generator inside the callback is fine, and the outer generator works afterwards.
    other = dpmo.Rng()
    ok = dpmo.Sensitivity.callback(lambda r, t: float(dpmo.select_exponential(other, S, sensitivity=1, epsilon=1) >= 0),
                                   global_sensitivity=1.0, t_max=2)
    assert 0 <= dpmo.select_local_dampening(rng, S, ok, epsilon=1.0, dampening="shifted") < 3


def test_a_callback_that_charges_the_budget_keeps_both_charges(rng):
    budget = dpmo.Budget(1.0, allow_simulation=True)

    def delta(r, t):
        budget.charge(0.125)
        raise ValueError("x")

    with pytest.raises(dpmo.InvalidSensitivityValueError):
        dpmo.select_local_dampening(rng, S, dpmo.Sensitivity.callback(delta, global_sensitivity=1, t_max=2),
                                    epsilon=0.25, dampening="shifted", budget=budget)
    assert budget.spent == 0.375


def test_threads_share_a_generator_safely():
    """The GIL is released during a call: a second thread using the same generator either waits its turn
    (the call is done) or is refused with InvalidGeneratorError; it never draws the same randomness."""
    rng = dpmo.Rng()
    scores = np.arange(200000.0)
    results, errors = [], []

    def work():
        for _ in range(20):
            try:
                results.append(dpmo.select_permute_and_flip(rng, scores, sensitivity=1e9, epsilon=1e-3))
            except dpmo.InvalidGeneratorError:
                errors.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) + len(errors) == 80 and results
    assert len(set(results)) > len(results) // 2  # nearly uniform over 2e5: repeats would mean reused randomness


def test_other_bad_inputs():
    with pytest.raises(dpmo.InvalidSensitivityError):
        dpmo.Sensitivity.per_candidate([1.0], global_sensitivity=0.0, t_max=1)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Sensitivity.per_candidate([1.0], global_sensitivity=1.0, t_max=0)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Sensitivity.shared([1.0], global_sensitivity=1.0).value(0, 0)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Sensitivity.per_candidate([1.0, 1.0], global_sensitivity=1.0, t_max=2).value(2, 0)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Graph.from_edges(3, [[0, 0]])
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Graph.from_edges(3, [[0, 1], [1, 0]])
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Graph.from_edges(3, [[0, 3]])
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Graph([0, 1, 1], [1])  # missing reverse edge
    with pytest.raises(dpmo.LengthMismatchError):
        dpmo.Graph([0, 1], [1, 0])
    g = dpmo.Graph.from_edges(4, [[0, 1], [1, 2], [2, 3]])
    with pytest.raises(dpmo.InvalidArgumentError):
        g.degree_delta_table(0)
    with pytest.raises(dpmo.InvalidArgumentError):
        g.ebc_delta_table(1, 3)  # a node of degree 2 above the public bound
    with pytest.raises(dpmo.EmptyInputError):
        dpmo.information_gain(np.zeros((0, 2), dtype=np.int64))
    with pytest.raises(dpmo.CapacityExceededError):
        dpmo.gini_utility(np.ones((17, 2), dtype=np.int64))
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.information_gain([[1, -1]])
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.rate_delta(1, 2, 0, neighbours="bounded")
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.tpr(-1, 2)
    with pytest.raises(dpmo.InvalidSensitivityValueError):
        dpmo.delta_max([[1.0, float("nan")]], [[1.0, 1.0]])
    with pytest.raises(dpmo.LengthMismatchError):
        dpmo.delta_max([[1.0]], [[1.0, 1.0]])
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.advanced_composition(0.1, 0, 1e-5)
    with pytest.raises(dpmo.NonFiniteInputError):
        dpmo.pareto_scores([[1.0, float("nan")]])
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.pareto_global_sensitivity(1)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.weighted_global_sensitivity([0.0, 0.0], [1.0, 1.0])
    with pytest.raises(dpmo.InvalidEpsilonError):
        dpmo.exponential_probabilities(S, sensitivity=1.0, epsilon=-1.0)
    with pytest.raises(TypeError):
        dpmo.select_exponential(dpmo.Rng(), S, sensitivity="1", epsilon=1.0)
    with pytest.raises(TypeError):
        dpmo.select_exponential(None, S, sensitivity=1.0, epsilon=1.0)
