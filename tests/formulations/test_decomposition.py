"""The decomposition bound (ddlsched.formulations.decomposition): column generation over the
schedules of one server, and its Lagrangian bound at every round.

Truths used: the brute-force optimum (tests/oracles.py, no code shared), the objectives of
schedules the independent verifier accepts (list schedules and online policies), the pooled
LP on the same grid (which the converged bound dominates), and hand-worked values. No test
reads a clock: generations are stopped by rounds, by a ``give_up`` that counts its calls,
and pricing MILPs by nodes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ddlsched.formulations.decomposition import (
    Column,
    decomposition_bound,
    decomposition_data,
    initial_columns,
    lagrangian_value,
    priced_bound,
)
from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, time_indexed_bound
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.api import simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import brute_force_a
from tests.strategies import (
    exact_family_instances,
    fragmenting_instances,
    weighted_instances,
)

ALLOWANCE = 1e-7
"""Relative slack for HiGHS's tolerances when a bound is compared with an optimum."""


def _below(bound: float, truth: float) -> bool:
    return bound <= truth * (1 + ALLOWANCE) + 1e-9


def _fragmented() -> Instance:
    """Two servers of 2 GPUs (inter-server links a quarter of the intra-server ones). Four
    2-GPU chains of 1 s iterations (2 s each on one server; spanning adds 4 s per
    iteration) and one 1-GPU job released at 1. Pooled, the 1-GPU job fills half of one
    server and half of the other beside the chains; on servers it blocks a whole server for
    a 2-GPU job. Brute force: 76; the pooled LP gives 74."""
    shapes = [(2, 0.0, 3, 1.0), (2, 0.0, 2, 2.0), (2, 0.0, 3, 5.0), (2, 1.0, 2, 2.0)]
    shapes.append((1, 1.0, 2, 1.0))
    jobs = tuple(
        Job(
            id=f"j{k}",
            release=release,
            iterations=iterations,
            compute_time=1.0,
            gpus=gpus,
            weight=weight,
            edges=((0, 1, 1.0),) if gpus == 2 else (),
        )
        for k, (gpus, release, iterations, weight) in enumerate(shapes)
    )
    return Instance(Cluster((2, 2), 1.0, 0.25), jobs)


@settings(max_examples=25, deadline=None)
@given(
    st.one_of(
        weighted_instances(max_jobs=3),
        weighted_instances(max_jobs=3, typed=True),
        exact_family_instances(),
        exact_family_instances(integral=False),
    ),
    st.booleans(),
)
def test_the_bound_is_below_the_brute_force_optimum(instance: Instance, windows: bool) -> None:
    """On tiny weighted, typed, multi-GPU, integral and off-grid instances the bound never
    exceeds the optimum, with job windows from the optimum itself or without."""
    optimum = brute_force_a(instance)
    bound = decomposition_bound(instance, optimum if windows else None, node_limit=200)
    assert bound.valid
    assert _below(bound.value, optimum), (bound, optimum)
    assert bound.flow_value <= optimum - sum(j.weight * j.release for j in instance.jobs) + 1e-6


@settings(max_examples=15, deadline=None)
@given(fragmenting_instances(), st.sampled_from(["fifo", "sjf", "asrpt"]))
def test_the_bound_is_below_every_verified_schedule(instance: Instance, policy: str) -> None:
    """On uneven servers with jobs wider than a server, released in a batch and spread at
    non-integral instants, the bound is below the objective of the online policies'
    schedules, recomputed by the verifier (the windows come from that objective)."""
    result = simulate(instance, policy, bound=False)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible
    bound = decomposition_bound(instance, report.total_completion_time, node_limit=200)
    assert bound.valid and _below(bound.value, report.total_completion_time), (
        bound,
        report.total_completion_time,
    )


@settings(max_examples=15, deadline=None)
@given(
    st.one_of(weighted_instances(max_jobs=3), exact_family_instances(integral=False)),
    st.integers(0, 2**32 - 1),
)
def test_every_dual_gives_a_bound_below_the_optimum(instance: Instance, seed: int) -> None:
    """The Lagrangian bound holds for any duals (pi free, sigma <= 0), not only the master's:
    random ones, priced exactly, never exceed the brute-force optimum."""
    optimum = brute_force_a(instance)
    data = decomposition_data(instance, BoundInputs.of(instance), optimum)
    rng = np.random.default_rng(seed)
    scale = optimum / data.unit / max(1, len(instance.jobs))
    pi = rng.uniform(-scale, 3 * scale, len(instance.jobs))
    sigma = -rng.uniform(0, scale / 4, data.horizon) * (rng.random(data.horizon) < 0.3)
    value, _ = priced_bound(data, pi, sigma, node_limit=10_000)
    assert _below(value * data.unit, optimum)


def test_positive_slot_duals_are_refused() -> None:
    """A slot row is ``<= M``: its dual is at most 0, and the bound's proof needs that."""
    instance = _fragmented()
    data = decomposition_data(instance, BoundInputs.of(instance), None)
    sigma = np.zeros(data.horizon)
    sigma[0] = 1.0
    with pytest.raises(ValueError, match="sigma"):
        lagrangian_value(data, np.zeros(instance.num_jobs), sigma, [0.0] * len(data.classes))


def test_the_bound_sees_servers_the_pooled_lp_does_not() -> None:
    """On the fragmented instance the pooled LP is 2 below the optimum; the decomposition
    bound, converged, closes it (76) and stays below the brute-force optimum."""
    instance = _fragmented()
    optimum = brute_force_a(instance)
    assert optimum == pytest.approx(76.0)
    inputs = BoundInputs.of(instance)
    lp, _ = time_indexed_bound(instance, inputs, LpSettings(max_variables=20_000), optimum)
    assert lp.value == pytest.approx(74.0, rel=1e-6)
    bound = decomposition_bound(instance, optimum)
    assert "converged: the master LP's optimum" in bound.notes
    assert bound.value == pytest.approx(76.0, rel=1e-6)
    assert _below(bound.value, optimum)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_converged_bound_dominates_the_pooled_lp(seed: int) -> None:
    """At convergence the master's LP is at least the pooled LP on the same grid (module
    docstring, "Strength"), on generated batch instances of 10 jobs on 2 x 4 GPUs."""
    config = GeneratorConfig(
        num_jobs=10, servers=2, gpus_per_server=4, integral=True, bandwidth_intra=2.0
    )
    instance = generate(config, seed)
    inputs = BoundInputs.of(instance)
    upper = simulate(instance, "sjf", bound=False).objective
    lp, _ = time_indexed_bound(instance, inputs, LpSettings(max_variables=20_000), upper)
    bound = decomposition_bound(instance, upper)
    assert "converged: the master LP's optimum" in bound.notes
    assert bound.value >= lp.value * (1 - 1e-7), (bound, lp)
    assert _below(bound.value, upper)


@settings(max_examples=10, deadline=None)
@given(exact_family_instances(integral=False), st.integers(0, 6))
def test_a_stopped_generation_is_still_a_bound(instance: Instance, asked: int) -> None:
    """Stopped after a few rounds (a ``give_up`` counting its calls, or a round limit), the
    bound is valid, below the optimum and at most the converged one; stopped before any
    exact pricing it says it has no bound."""
    optimum = brute_force_a(instance)
    calls = [0]

    def give_up() -> bool:
        calls[0] += 1
        return calls[0] > asked

    stopped = decomposition_bound(instance, optimum, give_up=give_up)
    full = decomposition_bound(instance, optimum)
    if asked == 0:
        assert not stopped.valid and math.isnan(stopped.value)
        return
    if stopped.valid:
        assert _below(stopped.value, optimum)
        assert stopped.value <= full.value * (1 + 1e-7) + 1e-9
    limited = decomposition_bound(instance, optimum, rounds=1)
    assert limited.valid and _below(limited.value, optimum)


def test_initial_columns_respect_each_servers_capacity() -> None:
    """The list schedule's columns never hold more than a server's GPUs in a slot, and
    every job of a column fits one server of its class."""
    instance = generate(GeneratorConfig(num_jobs=16, servers=3, gpus_per_server=4), 3)
    data = decomposition_data(instance, BoundInputs.of(instance), None)
    columns = initial_columns(data)
    assert columns
    for column in columns:
        _check_column(data, column)


def _check_column(data: object, column: Column) -> None:
    """Each slot's GPUs within the class's capacity; each job at most once, in its window."""
    from ddlsched.formulations.decomposition import Decomposition

    assert isinstance(data, Decomposition)
    server_class = data.classes[column.server_class]
    load = np.zeros(data.horizon, dtype=int)
    jobs = [i for i, _ in column.starts]
    assert len(jobs) == len(set(jobs))
    for i, t in column.starts:
        assert server_class.slots[i] >= 0
        assert data.grid.release_slot[i] <= t <= data.grid.last[i]
        load[t : t + server_class.slots[i]] += data.gpus[i]
    assert int(np.max(load)) <= server_class.capacity


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_stopped_generation_never_passes_the_converged_lp(seed: int) -> None:
    """A generation stopped after 1, 2, 3, 5 or 8 rounds gives a Lagrangian bound: never
    above the master LP's optimum (the converged bound), and never lower for more rounds
    (the same rounds are run again, then more). A restricted master's own LP value, which
    lies above that optimum until convergence, is no bound (10 batch jobs on 2 x 4 GPUs)."""
    config = GeneratorConfig(
        num_jobs=10, servers=2, gpus_per_server=4, integral=True, bandwidth_intra=2.0
    )
    instance = generate(config, seed)
    upper = simulate(instance, "sjf", bound=False).objective
    converged = decomposition_bound(instance, upper)
    assert "converged: the master LP's optimum" in converged.notes
    values = [decomposition_bound(instance, upper, rounds=r).value for r in (1, 2, 3, 5, 8)]
    assert values == sorted(values)
    assert values[-1] <= converged.value * (1 + 1e-9), (values, converged)
