"""Private selection over an unknown domain from Python (docs/discovery.md): (ε, δ) budgets, partition
selection and the unknown-domain top-k from raw events, a public list kept public, and what the analyst can
observe — the generator's state after a call (the same on neighbouring event sets), the charge, the status."""

import numpy as np
import pytest

import dpmo

SIM = dict(allow_simulation=True)


def sim(seed):
    return dpmo.Rng.for_simulation(seed)


def events(n_units=3000):
    """Every unit visits one of three popular items (1, 2, 3) and one item nobody else has (1000 + u)."""
    units, items = [], []
    for u in range(n_units):
        units += [u, u]
        items += [1 + u % 3, 1000 + u]
    return np.array(units), np.array(items)


def state_after(call, data):
    """The caller's generator, seen through its next draws after `call` ran on `data`."""
    r = sim(7)
    call(r, *data)
    return r.sample("uniform", 4).tolist()


# --- (ε, δ) budgets -----------------------------------------------------------------------------------------


def test_budgets_carry_delta_and_compose_it_sequentially():
    b = dpmo.Budget(1.0, delta=1e-6)
    assert (b.total, b.delta_total, b.delta_spent, b.remaining_delta) == (1.0, 1e-6, 0.0, 1e-6)
    b.charge(0.25, 5e-7)
    assert (b.spent, b.delta_spent) == (0.25, 5e-7)
    with pytest.raises(dpmo.BudgetExhaustedError):
        b.charge(0.25, 6e-7)  # the δ's add up: 1.1e-6 > 1e-6
    assert (b.spent, b.delta_spent) == (0.25, 5e-7), "a refused charge changes nothing"
    b.charge(0.25)  # a pure-ε charge spends no δ
    assert (b.spent, b.delta_spent) == (0.5, 5e-7)
    assert "delta=1e-6" in repr(b) and "delta_spent=5e-7" in repr(b)
    with pytest.raises(dpmo.InvalidArgumentError):
        b.charge(0.1, -1e-9)
    with pytest.raises(dpmo.InvalidArgumentError):
        dpmo.Budget(1.0, delta=1.0)


def test_a_pure_epsilon_budget_is_unchanged_and_refuses_any_delta():
    pure = dpmo.Budget(1.0)
    assert pure.delta_total == 0.0 and "delta" not in repr(pure)
    with pytest.raises(dpmo.BudgetExhaustedError):
        pure.charge(0.5, 1e-9)
    pure.charge(0.5)
    assert (pure.spent, pure.delta_spent) == (0.5, 0.0)


# --- partition selection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism,rounds",
    [("truncated_geometric", 1), ("laplace", 1), ("gaussian", 1), ("weighted_gaussian", 1), ("sips", 3)],
)
def test_partitions_find_the_popular_items_and_never_a_lonely_one(mechanism, rounds):
    u, i = events()
    for seed in range(3):
        b = dpmo.Budget(2.0, delta=1e-5, **SIM)
        found = dpmo.discover_partitions(sim(seed), u, i, max_items=2, epsilon=1.0, delta=1e-6,
                                         mechanism=mechanism, rounds=rounds, budget=b, **SIM)
        # 1,000 units on each popular item; one on each of the 3,000 others (a unit's item reveals it).
        assert found == [1, 2, 3]
        assert (b.spent, b.delta_spent) == (1.0, 1e-6)


def test_partitions_with_labels_and_the_default_generator():
    units = [f"user{u}" for u in range(3000) for _ in range(2)]
    items = [("tea", "cake", "jam")[u % 3] if j == 0 else f"own-{u}" for u in range(3000) for j in range(2)]
    b = dpmo.Budget(1.0, delta=1e-6)
    found = dpmo.discover_partitions(dpmo.Rng(), units, items, max_items=2, epsilon=1.0, delta=1e-6, budget=b)
    assert found == ["cake", "jam", "tea"]
    assert b.remaining == 0.0 and b.remaining_delta == 0.0


def test_no_event_is_an_empty_dataset_not_an_error():
    b = dpmo.Budget(2.0, delta=1e-5)
    assert dpmo.discover_partitions(dpmo.Rng(), [], [], max_items=1, epsilon=1.0, delta=1e-6, budget=b) == []
    r = dpmo.select_top_k_from_events(dpmo.Rng(), [], [], k=3, max_items=1, epsilon=0.5, delta=1e-6, budget=b)
    assert r.items == [] and r.stopped
    # Pay what you get: ⊥ won the first round, which costs ε/k.
    assert r.epsilon == pytest.approx(0.5 / 3) and b.spent == pytest.approx(1.0 + 0.5 / 3)


# --- unknown-domain top-k -----------------------------------------------------------------------------------


def test_top_k_pays_for_what_comes_out():
    u, i = events()
    for seed in range(3):
        b = dpmo.Budget(1.0, delta=1e-6, **SIM)
        r = dpmo.select_top_k_from_events(sim(seed), u, i, k=10, k_bar=20, max_items=2, epsilon=1.0, delta=1e-6,
                                          budget=b, **SIM)
        assert r.stopped and 1 <= len(r.items) <= 3 and set(r.items) <= {1, 2, 3}
        assert r.epsilon == pytest.approx(0.1 * (len(r.items) + 1)) and r.delta == 1e-6
        assert b.spent == r.epsilon and b.delta_spent == 1e-6, "the budget is charged what the run spent"


def test_top_k_by_sum_with_labels_and_nan_values():
    units = [f"u{u}" for u in range(3000) for _ in range(2)]
    items = [("tea", "cake", "jam")[u % 3] if j == 0 else f"own-{u}" for u in range(3000) for j in range(2)]
    # A NaN value counts as 0 (a public rule), never an error: the data cannot choose a status.
    values = [float(1 + u % 7) if j == 0 else float("nan") for u in range(3000) for j in range(2)]
    r = dpmo.select_top_k_from_events(sim(5), units, items, values, k=3, k_bar=5, max_items=2, score="sum",
                                      bounds=(0.0, 10.0), epsilon=3.0, delta=1e-6, **SIM)
    assert set(r.items) <= {"tea", "cake", "jam"} and len(r.items) >= 1
    assert all(isinstance(x, str) for x in r.items)


def test_a_public_list_stays_public():
    u, i = events()
    b = dpmo.Budget(1.0, **SIM)  # the known-domain top-k is pure ε
    for seed in range(4):
        r = dpmo.select_top_k_from_events(sim(seed), u, i, k=2, max_items=2, epsilon=0.25,
                                          candidate_list=[3, 2, 99], budget=b, **SIM)
        # Item 1 is as popular as 2 and 3 but not on the list: never returned. 99 has no event: it can be.
        assert set(r.items) <= {2, 3, 99} and len(r.items) == 2 and not r.stopped
        assert (r.epsilon, r.delta) == (0.25, 0.0)
    assert b.spent == pytest.approx(1.0) and b.delta_spent == 0.0
    # Asking for more than the list holds returns all of it (the list is public).
    r = dpmo.select_top_k_from_events(sim(1), u, i, k=5, max_items=2, epsilon=0.2, candidate_list=[3, 2], **SIM)
    assert sorted(r.items) == [2, 3]


# --- what the caller's generator shows ----------------------------------------------------------------------


CALLS = {
    "discover_partitions": lambda r, u, i: dpmo.discover_partitions(
        r, u, i, max_items=2, epsilon=1.0, delta=1e-6, mechanism="sips", rounds=3, **SIM),
    "discover_partitions truncated_geometric": lambda r, u, i: dpmo.discover_partitions(
        r, u, i, max_items=1, epsilon=1.0, delta=1e-6, mechanism="truncated_geometric", **SIM),
    "select_top_k_from_events": lambda r, u, i: dpmo.select_top_k_from_events(
        r, u, i, k=3, k_bar=10, max_items=2, epsilon=1.0, delta=1e-6, **SIM),
    "select_top_k_from_events events": lambda r, u, i: dpmo.select_top_k_from_events(
        r, u, i, k=5, k_bar=8, max_items=3, max_per_item=2, score="events", epsilon=1.0, delta=1e-6, **SIM),
    "public list": lambda r, u, i: dpmo.select_top_k_from_events(
        r, u, i, k=2, max_items=2, epsilon=1.0, candidate_list=[1, 2, 3, 7], **SIM),
    "bound_contributions": lambda r, u, i: dpmo.bound_contributions(
        r, u, i, candidate_list=[1, 2, 3], max_candidates=2, **SIM),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_generator_advances_the_same_on_neighbouring_event_sets(name):
    """The attack: read the generator after a release (or count its refills) to learn the data beyond the
    output. Removing one unit (17, on the popular item 3), removing every event, or keeping only events
    off the public list must leave the caller's generator in the same state."""
    u, i = events(300)
    keep = u != 17
    empty = (np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    off_list = (u[i >= 1000], i[i >= 1000])
    call = CALLS[name]
    states = [state_after(call, d) for d in [(u, i), (u[keep], i[keep]), empty, off_list]]
    assert all(s == states[0] for s in states), name
    # The probe sees consumption: a call that draws differs from one that does not.
    assert states[0] != state_after(lambda r, u, i: None, (u, i))


# --- argument errors: nothing charged, nothing drawn --------------------------------------------------------


def unchanged(b, r, seed):
    assert (b.spent, b.delta_spent) == (0.0, 0.0)
    assert r.sample("uniform") == sim(seed).sample("uniform"), "the generator moved"


@pytest.mark.parametrize("kw,error", [
    (dict(mechanism="nope"), dpmo.InvalidArgumentError),
    (dict(epsilon=0.0), dpmo.InvalidEpsilonError),
    (dict(delta=0.0), dpmo.InvalidArgumentError),
    (dict(delta=1.0), dpmo.InvalidArgumentError),
    (dict(max_items=0), dpmo.InvalidArgumentError),
    (dict(mechanism="sips", rounds=9), dpmo.InvalidArgumentError),
    (dict(mechanism="sips", rounds=0), dpmo.InvalidArgumentError),
    (dict(rounds=2), dpmo.InvalidArgumentError),
])
def test_partition_argument_errors_charge_nothing_and_draw_nothing(kw, error):
    u, i = events(50)
    b = dpmo.Budget(5.0, delta=1e-3, **SIM)
    args = dict(max_items=2, epsilon=1.0, delta=1e-6, mechanism="gaussian", budget=b, **SIM)
    args.update(kw)
    r = sim(1)
    with pytest.raises(error):
        dpmo.discover_partitions(r, u, i, **args)
    unchanged(b, r, 1)


@pytest.mark.parametrize("kw,error", [
    (dict(k=0), dpmo.InvalidArgumentError),
    (dict(k=11), dpmo.InvalidArgumentError),  # k > k_bar
    (dict(delta=None), dpmo.InvalidArgumentError),
    (dict(score="nope"), dpmo.InvalidArgumentError),
    (dict(score="sum"), dpmo.InvalidArgumentError),  # no values
    (dict(epsilon=-1.0), dpmo.InvalidEpsilonError),
    (dict(max_per_item=0), dpmo.InvalidArgumentError),
    # 6 (k̄ + 1) words of work, about 206 GB: a MemoryError before any charge, not an aborted interpreter
    (dict(k_bar=2**32 - 1), MemoryError),
    (dict(k=2**32 - 1, k_bar=2**32 - 1), MemoryError),
])
def test_top_k_argument_errors_charge_nothing_and_draw_nothing(kw, error):
    u, i = events(50)
    b = dpmo.Budget(5.0, delta=1e-3, **SIM)
    args = dict(k=3, k_bar=10, max_items=2, epsilon=1.0, delta=1e-6, budget=b, **SIM)
    args.update(kw)
    r = sim(2)
    with pytest.raises(error):
        dpmo.select_top_k_from_events(r, u, i, **args)
    unchanged(b, r, 2)
    r = sim(2)
    with pytest.raises(dpmo.InvalidArgumentError):  # values with a negative lower bound for sums
        dpmo.select_top_k_from_events(r, u, i, np.ones(len(u)), k=3, k_bar=10, max_items=2, epsilon=1.0,
                                      delta=1e-6, score="sum", bounds=(-1.0, 1.0), budget=b, **SIM)
    unchanged(b, r, 2)
    r = sim(2)
    with pytest.raises(dpmo.LengthMismatchError):
        dpmo.discover_partitions(r, u[:-1], i, max_items=2, epsilon=1.0, delta=1e-6, budget=b, **SIM)
    unchanged(b, r, 2)


def test_a_pure_epsilon_budget_refuses_the_delta_and_nothing_happens():
    u, i = events(50)
    b = dpmo.Budget(5.0, **SIM)
    r = sim(3)
    with pytest.raises(dpmo.BudgetExhaustedError):
        dpmo.discover_partitions(r, u, i, max_items=2, epsilon=1.0, delta=1e-6, budget=b, **SIM)
    with pytest.raises(dpmo.BudgetExhaustedError):
        dpmo.select_top_k_from_events(r, u, i, k=2, max_items=2, epsilon=1.0, delta=1e-6, budget=b, **SIM)
    unchanged(b, r, 3)


def test_a_known_seed_is_refused_without_allow_simulation():
    u, i = events(50)
    with pytest.raises(dpmo.InvalidGeneratorError):
        dpmo.discover_partitions(sim(1), u, i, max_items=2, epsilon=1.0, delta=1e-6)
    with pytest.raises(dpmo.InvalidGeneratorError):
        dpmo.select_top_k_from_events(sim(1), u, i, k=2, max_items=2, epsilon=1.0, delta=1e-6)
    with pytest.raises(dpmo.InvalidGeneratorError):  # a budget that accounts for releases refuses it too
        dpmo.discover_partitions(sim(1), u, i, max_items=2, epsilon=1.0, delta=1e-6,
                                 budget=dpmo.Budget(1.0, delta=1e-6), allow_simulation=True)
