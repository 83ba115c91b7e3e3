"""Flow bounds where the durations are below an ulp of the releases: near ``r = 10^11`` s
one ulp is ``1.5e-5`` s, so ``r + p`` rounds a whole ulp up for a shorter ``p``, and a
flow value computed from such times may exceed the optimum's. Every flow bound, the rank
and start-time Lagrangian bounds included, stays below the optimal flow time.

The truth: releases ``R + k ulp(R)`` differ from ``R`` by exact floats (Sterbenz), so the
instance shifted by ``R`` has exactly the same optimal flow time, and at that scale the
enumeration of :func:`tests.oracles.brute_force_a` (sharing no code with the bounds) is
accurate.
"""

from __future__ import annotations

import math

from ddlsched.formulations.lower_bounds import (
    BoundInputs,
    LpSettings,
    flow_allowance,
    lower_bounds,
)
from ddlsched.formulations.start_lagrangian import start_lagrangian_bound
from hypothesis import given, settings, target
from hypothesis import strategies as st

from ddlsched.core.model import Cluster, Instance, Job
from tests.oracles import brute_force_a
from tests.strategies import FRACTIONAL_WEIGHTS


def _flow_bounds(instance: Instance, time_indexed: bool = False) -> dict[str, float]:
    """Every fast bound's flow value and the start-time Lagrangian's, by name, and with
    ``time_indexed`` the LP's and the pooled bound's (each some 0.8 s on a horizon of
    ``10^11`` s: their grid has some ``4 10^5`` slots)."""
    settings = LpSettings() if time_indexed else None
    found = lower_bounds(instance, lp=settings, pooled=settings)
    flows = {bound.name: bound.flow_value for bound in found if bound.valid}
    flows["start-lagrangian"] = start_lagrangian_bound(BoundInputs.of(instance)).flow_value
    return flows


def test_twenty_tiny_jobs_at_1e11_stay_below_the_hand_worked_flow() -> None:
    """One GPU, 20 jobs released at ``10^11`` s, each 7.7e-6 s (under an ulp there): the
    optimal flow time is ``7.7e-6 (1 + ... + 20) = 0.001617`` (shortest first, all equal);
    no bound's flow value (fast, LP, pooled, start-time Lagrangian) passes it (the mean
    busy time's rounded clock once gave 0.00305)."""
    jobs = tuple(Job(f"j{k}", 1e11, 1, 7.7e-6, 1) for k in range(20))
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    optimum = 7.7e-6 * 210
    flows = _flow_bounds(instance, time_indexed=True)
    assert {"lp", "pooled", "rank", "start-lagrangian"} <= set(flows)
    for name, flow in flows.items():
        assert 0.0 < flow <= optimum, (name, flow)


@st.composite
def late_tiny_instances(draw: st.DrawFn) -> tuple[Instance, Instance, float]:
    """One to three jobs of 1-2 GPUs on one or two 2-GPU servers, weights from
    :data:`FRACTIONAL_WEIGHTS`, compute times 1e-7 to 1e-4 s, releases ``R + k ulp(R)``
    with ``R`` from ``10^9`` to ``9.9 10^10``: the instance, the same instance shifted by
    ``R`` (exactly), and ``sum_i w_i (r_i - R)``."""
    base = draw(st.sampled_from([1e9, 3.7e9, 2.5e10, 6.1e10, 9.9e10]))
    ulp = math.ulp(base)
    jobs, shifted, shift_weight = [], [], 0.0
    for index in range(draw(st.integers(1, 3))):
        offset = draw(st.integers(0, 12)) * ulp
        compute = draw(st.floats(1e-7, 1e-4))
        weight = draw(st.sampled_from(FRACTIONAL_WEIGHTS))
        gpus = draw(st.integers(1, 2))
        iterations = draw(st.integers(1, 3))
        job = Job(f"j{index}", base + offset, iterations, compute, gpus, weight=weight)
        jobs.append(job)
        exact = job.release - base
        shifted.append(job.replace(release=exact))
        shift_weight += weight * exact
    cluster = Cluster((2,) * draw(st.integers(1, 2)), 1.0, 1.0)
    return Instance(cluster, tuple(jobs)), Instance(cluster, tuple(shifted)), shift_weight


@settings(max_examples=60, deadline=None, derandomize=True)
@given(late_tiny_instances())
def test_flow_bounds_at_late_releases_stay_below_the_enumerated_optimum(
    case: tuple[Instance, Instance, float],
) -> None:
    """Releases near ``10^9``-``10^11`` s with durations around an ulp there, typed by
    weight and width: every fast flow bound (rank included) and the start-time Lagrangian's is at
    most the optimal flow time, enumerated on the exactly shifted instance."""
    instance, shifted, shift_weight = case
    optimum = brute_force_a(shifted) - shift_weight
    for name, flow in _flow_bounds(instance).items():
        target(flow / optimum, label=name)
        assert flow <= optimum * (1 + 1e-7), (name, flow, optimum)


def test_the_allowance_is_negligible_at_trace_scale() -> None:
    """At trace-like times (releases up to ``10^7`` s, a thousand jobs) the rounding
    allowance is below a millisecond per job, so it costs the bounds nothing visible."""
    jobs = tuple(Job(f"j{k}", 1e4 * k, 100, 1.0, 1) for k in range(1_000))
    inputs = BoundInputs.of(Instance(Cluster((8,), 1.0, 1.0), jobs))
    assert 0.0 < flow_allowance(inputs) < 1e-3 * len(jobs)
