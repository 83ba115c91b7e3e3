"""The start-time Lagrangian bound's machinery at scale: the least-multiplier queries its
blocks are charged with, the levelled ascent's strength against the linear programme it
is the dual of (solved by HiGHS from a model built here), and its determinism."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from ddlsched.formulations.lower_bounds import BoundInputs
from ddlsched.formulations.start_lagrangian import (
    StartLagrangianSettings,
    _chunks,
    _RangeMin,
    _Slots,
    _slots,
    block_offsets,
    start_lagrangian_bound,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

from ddlsched.core.model import Cluster, Instance, Job


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    values=st.lists(st.floats(0.0, 1e6, allow_nan=False), min_size=1, max_size=70),
    data=st.data(),
)
def test_range_min_is_the_least_multiplier_of_the_range(
    values: list[float], data: st.DataObject
) -> None:
    """The sparse table's least value over ``[low, high)`` is the least multiplier there,
    with slot ``T`` (past the horizon) priced 0, and its slot lies in the range and holds
    that value."""
    multipliers = np.array(values)
    table = _RangeMin(multipliers)
    padded = np.concatenate((multipliers, [0.0]))
    pairs = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(values)), st.integers(1, len(values) + 1)),
            min_size=1,
            max_size=20,
        )
    )
    low = np.array([min(a, b - 1) for a, b in pairs])
    high = np.array([max(a + 1, b) for a, b in pairs])
    least, where = table.least(low, high), table.argleast(low, high)
    for k in range(len(low)):
        assert least[k] == padded[low[k] : high[k]].min()
        assert low[k] <= where[k] < high[k]
        assert padded[where[k]] == least[k]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    horizon=st.integers(1, 40),
    release=st.integers(0, 45),
    duration=st.integers(1, 12),
    single=st.integers(1, 3),
    growth=st.sampled_from([0.3, 1.0, 2.0]),
    cap=st.sampled_from([None, 1, 2, 4]),
    shape=st.sampled_from(["random", "constant", "increasing", "decreasing"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_block_is_charged_at_most_its_cheapest_start(
    horizon: int,
    release: int,
    duration: int,
    single: int,
    growth: float,
    cap: int | None,
    shape: str,
    seed: int,
) -> None:
    """Each block's charge is at most the least sum of multipliers over the ``d`` slots of
    any of its starts (slots past the horizon priced 0), and equal to it for a block of
    one start: shorter or longer blocks than the job, any price shape (a block charged for
    more other slots than the job has, or the least price of a range that misses a slot
    some start covers, is caught here)."""
    rng = np.random.default_rng(seed)
    prices = {
        "random": rng.exponential(3.0, horizon),
        "constant": np.full(horizon, 2.0),
        "increasing": np.sort(rng.exponential(3.0, horizon)) + 1.0,
        "decreasing": np.sort(rng.exponential(3.0, horizon))[::-1] + 1.0,
    }[shape]
    offsets, lengths = block_offsets(single, growth, max(1, horizon - release), cap, 2)
    classes = ((np.array([0]), offsets, lengths),)
    grid = _Slots(1.0, np.array([release]), np.array([duration]), horizon, classes)
    one_job = SimpleNamespace(weights=np.ones(1), releases=np.array([float(release)]))
    prefix = np.concatenate(([0.0], np.cumsum(prices)))
    (part,) = _chunks(grid, one_job, 1)  # type: ignore[arg-type]
    charge = part.charges(prefix, _RangeMin(prices))
    padded = np.concatenate((prices, np.zeros(horizon + 200)))
    for k, length in enumerate(lengths):
        starts = range(release + int(offsets[k]), release + int(offsets[k]) + max(int(length), 1))
        cheapest = min(padded[t : t + duration].sum() for t in starts)
        assert charge[0, k] <= cheapest + 1e-9 * (1 + cheapest), (k, charge[0, k], cheapest)
        if length == 1:
            assert charge[0, k] == pytest.approx(cheapest, rel=1e-12, abs=1e-12)


def _time_indexed_lp(inputs: BoundInputs, settings: StartLagrangianSettings) -> float:
    """The LP whose Lagrangian dual the bound is, built from the slots' definition: starts
    ``t`` in ``[R_i, T]`` costing ``w_i (max(Delta t, r_i) + p_i)``, one start per job in
    all, and at most ``M`` GPUs on each slot ``s < T`` from the jobs whose ``d_i`` slots
    from their start cover it; the flow time (``- sum w r``) of its optimum."""
    grid = _slots(inputs, settings)
    horizon, delta = grid.horizon, grid.delta
    columns = [
        (i, t)
        for i in range(len(inputs.releases))
        for t in range(int(grid.release_slot[i]), horizon + 1)
    ]
    cost = [
        inputs.weights[i] * (max(delta * t, inputs.releases[i]) + inputs.processing[i])
        for i, t in columns
    ]
    capacity = lil_matrix((horizon, len(columns)))
    once = lil_matrix((len(inputs.releases), len(columns)))
    for c, (i, t) in enumerate(columns):
        once[i, c] = 1.0
        for s in range(t, min(t + int(grid.duration[i]), horizon)):
            capacity[s, c] = inputs.gpus[i]
    solved = linprog(
        cost,
        A_ub=capacity.tocsr(),
        b_ub=np.full(horizon, float(inputs.num_gpus)),
        A_eq=once.tocsr(),
        b_eq=np.ones(len(inputs.releases)),
        bounds=(0, None),
        method="highs",
    )
    assert solved.status == 0, solved.message
    return float(solved.fun) - inputs.release_weight


def _congested() -> Instance:
    """Nine jobs of 1-3 GPUs and 2-9 s, weights 1, 2 and 0.5, on one 4-GPU server: six at
    0, three spread over 1.5-4 s. Most jobs wait, several for longer than they run."""
    shapes = [
        (0.0, 1, 6, 1.0),
        (0.0, 2, 3, 2.0),
        (0.0, 3, 5, 1.0),
        (0.0, 1, 9, 0.5),
        (0.0, 2, 2, 1.0),
        (0.0, 1, 4, 2.0),
        (1.5, 2, 7, 1.0),
        (2.0, 3, 2, 1.0),
        (4.0, 1, 3, 0.5),
    ]
    jobs = tuple(
        Job(id=f"j{k}", release=r, iterations=n, compute_time=1.0, gpus=g, weight=w)
        for k, (r, g, n, w) in enumerate(shapes)
    )
    return Instance(cluster=Cluster((4,), bandwidth_intra=1.0, bandwidth_inter=1.0), jobs=jobs)


@pytest.mark.parametrize(
    ("blocks", "share"),
    [
        ({"single_starts": 4_000}, 0.97),
        ({"single_starts": 1, "growth": 1.0, "blocks": 1}, 0.8),
    ],
    ids=["single-starts", "doubling-blocks"],
)
def test_the_ascent_reaches_the_linear_programme_it_is_the_dual_of(
    blocks: dict, share: float
) -> None:
    """On a congested instance (weighted, multi-GPU, batch and spread releases), on slots of
    a quarter second, the bound after 120 rounds is at most the time-indexed LP of the same
    slots (its best possible value) and at least 97% of it with every start priced on its
    own, 80% with blocks doubling in length (charged through the least multiplier of their
    slots): the levelled ascent converges, and long blocks are still charged."""
    instance = _congested()
    inputs = BoundInputs.of(instance)
    exact = StartLagrangianSettings(slot=0.25, rounds=120, levels=(8, 2, 1), **blocks)
    lp = _time_indexed_lp(inputs, StartLagrangianSettings(slot=0.25))
    bound = start_lagrangian_bound(inputs, exact)
    assert bound.flow_value <= lp * (1 + 1e-9)
    assert bound.flow_value >= share * lp, (bound.flow_value, lp)


def test_the_same_inputs_give_the_same_bound() -> None:
    """Rounds are counted, never timed: two runs give the same value to the last bit."""
    inputs = BoundInputs.of(_congested())
    chosen = StartLagrangianSettings(slot=0.5, rounds=30)
    first = start_lagrangian_bound(inputs, chosen, upper_bound=200.0)
    again = start_lagrangian_bound(inputs, chosen, upper_bound=200.0)
    assert first.value == again.value
    assert first.flow_value == again.flow_value


@pytest.mark.parametrize("levels", [(), (0,), (4, -1), (2.5,)])
def test_bad_levels_are_refused_by_name(levels: tuple) -> None:
    """Levels must be positive whole numbers of slots, at least one."""
    with pytest.raises(ValueError, match="levels"):
        StartLagrangianSettings(levels=levels)
