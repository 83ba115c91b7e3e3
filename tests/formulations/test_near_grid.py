"""Times a hair off the slot grid: neither the grid bounds nor the slotted exact models may
round them a whole slot up while calling the instance integral.

A release or duration of ``k + e`` slots with ``e`` between about ``1e-9`` and ``1e-6`` is
the dangerous band: a test of "on the grid" that forgives more noise than the rounding
does calls the instance integral, and the rounding then charges ``k + 1`` slots, so a
"lower bound" and a slotted "optimum" both land near a slot above the truth.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from ddlsched.formulations.grid import on_grid, slots_needed
from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, lower_bounds, proven_grid
from ddlsched.formulations.start_lagrangian import (
    StartLagrangianSettings,
    _slots,
    start_lagrangian_bound,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched import solve
from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import brute_force_a

OFFSETS = st.sampled_from([0.0, 3e-10, 2e-9, 5e-8, 1e-7, 9e-7])
"""Fractions of a slot added to whole times: on the grid, inside the float noise, and the
band between the noise and a visible offset."""


@st.composite
def near_grid_instances(draw: st.DrawFn) -> Instance:
    """One to three single-GPU jobs on one or two 1-GPU servers, weights 1-3, releases and
    compute times whole numbers of slots plus one of :data:`OFFSETS`."""
    jobs = []
    for index in range(draw(st.integers(1, 3))):
        release = draw(st.integers(0, 2)) + draw(OFFSETS)
        compute = draw(st.integers(1, 3)) + draw(OFFSETS)
        weight = float(draw(st.integers(1, 3)))
        jobs.append(Job(f"j{index}", release, 1, compute, 1, weight=weight))
    servers = draw(st.integers(1, 2))
    return Instance(Cluster((1,) * servers, 1.0, 1.0), tuple(jobs), slot=1.0)


def test_on_grid_and_the_rounding_agree() -> None:
    """A value is on the grid exactly when rounding it up gives the nearest multiple."""
    for whole in (1, 2, 7, 1_000, 10**7):
        for offset in (0.0, 1e-12, 5e-11, 5e-10, 2e-9, 1e-8, 5e-8, 1e-7, 1e-3):
            value = whole * (1 + offset) if whole > 1 else whole + offset
            assert on_grid(value, 1.0) == (slots_needed(value, 1.0) == round(value)), value


def test_a_release_a_hair_past_the_grid_is_not_on_it() -> None:
    """The reviewer's instance: release and compute 1.00000005 s on a 1 s slot. Its optimum
    is 2.0000001; the LP and pooled bounds said 4."""
    job = Job("a", 1.00000005, 1, 1.00000005, 1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,), slot=1.0)
    assert proven_grid(instance) is None
    found = lower_bounds(instance, lp=LpSettings(), pooled=LpSettings())
    for bound in found:
        assert bound.value <= 2.0000001 * (1 + 1e-9), bound


@settings(max_examples=60, deadline=None, derandomize=True)
@given(near_grid_instances())
def test_grid_bounds_stay_below_the_brute_force_optimum(instance: Instance) -> None:
    """Every bound, the LP and pooled ones on the grid included, is at most the optimum
    found by enumeration (which shares no code with them)."""
    optimum = brute_force_a(instance)
    for bound in lower_bounds(instance, lp=LpSettings(), pooled=LpSettings()):
        if bound.valid:
            assert bound.value <= optimum * (1 + 1e-9) + 1e-9, (bound, optimum)


BELOW = st.sampled_from([0.0, 3e-13, 1e-12, 3e-10, 2e-9, 5e-8])
"""Fractions of a slot taken off whole times: a hair below the grid, where rounding a
ratio up by its float noise lands a whole slot later or longer."""


@st.composite
def below_grid_instances(draw: st.DrawFn) -> Instance:
    """:func:`near_grid_instances`, but releases and compute times a hair *below* whole
    numbers of slots (:data:`BELOW`), and durations up to 40 slots, so that a rounding
    bias of ``1e-9`` (relative) moves a duration a whole slot."""
    jobs = []
    for index in range(draw(st.integers(1, 3))):
        release = max(0.0, draw(st.integers(0, 2)) - draw(BELOW))
        compute = draw(st.integers(1, 40)) - draw(BELOW)
        weight = float(draw(st.integers(1, 3)))
        jobs.append(Job(f"j{index}", release, 1, compute, 1, weight=weight))
    servers = draw(st.integers(1, 2))
    return Instance(Cluster((1,) * servers, 1.0, 1.0), tuple(jobs), slot=1.0)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.one_of(near_grid_instances(), below_grid_instances()), st.sampled_from([1.0, 0.5]))
def test_start_time_bound_never_rounds_a_job_later_or_longer(
    instance: Instance, slot: float
) -> None:
    """On the start-time bound's grid each release slot and duration is at most the floor
    of the exact ratio (checked in rationals), and at most one slot below it (the bias
    against float error may round a whole ratio down): no job is released a slot later or
    made a slot longer by float noise, whichever side of the grid its times lie."""
    grid = _slots(BoundInputs.of(instance), StartLagrangianSettings(slot=slot))
    for job, release_slot, duration in zip(
        instance.jobs, grid.release_slot, grid.duration, strict=True
    ):
        for rounded, time in ((release_slot, job.release), (duration, job.compute_time)):
            exact = math.floor(Fraction(time) / Fraction(slot))
            assert exact - 1 <= rounded <= exact, (job, rounded, exact)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.one_of(near_grid_instances(), below_grid_instances()))
def test_start_time_bound_stays_below_the_brute_force_optimum(instance: Instance) -> None:
    """The start-time Lagrangian bound on the instance's own grid, on ``sum w C`` and on the
    flow time, is at most the optimum found by enumeration, on either side of the grid."""
    optimum = brute_force_a(instance)
    releases = sum(job.weight * job.release for job in instance.jobs)
    inputs = BoundInputs.of(instance)
    bound = start_lagrangian_bound(inputs, StartLagrangianSettings(slot=1.0, rounds=30))
    assert bound.value <= optimum * (1 + 1e-9) + 1e-9, (bound, optimum)
    assert bound.flow_value <= (optimum - releases) + 1e-9 * optimum, (bound, optimum)


@pytest.mark.parametrize("method", ["milp", "cpsat", "exact"])
@settings(max_examples=12, deadline=None, derandomize=True)
@given(instance=near_grid_instances())
def test_an_exact_optimum_off_the_grid_is_the_true_one(method: str, instance: Instance) -> None:
    """A method that says ``optimal`` reports the enumerated optimum (to 1e-6), never a
    slotted value a slot away; one that cannot prove it says so."""
    result = solve(instance, method=method, seed=0)
    if result.proven_optimal:
        assert math.isclose(result.objective, brute_force_a(instance), rel_tol=1e-6)
