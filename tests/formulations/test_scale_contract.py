"""``optimal`` is a promise at every time scale and every release offset.

The optimum of problem A does not change shape when every release moves by the same
offset ``shift`` or when every time (releases, compute and communication per iteration)
is multiplied by ``scale``: ``OPT' = scale * OPT + shift * sum_i w_i``. So the brute
force on a well-conditioned base instance (:func:`tests.oracles.brute_force_a`, which
shares no code with the solvers) gives the optimum of each shifted and scaled copy, and
every exact method's answer on the copy is held to it:

- ``optimal`` only at the optimum, within :data:`ddlsched.core.result.CLOSED_GAP` of the
  total flow time (the part of the objective a schedule controls), plus the rounding of
  the times themselves;
- a schedule that the verifier accepts, never below the optimum;
- a refusal (a slotted model too large for the offset, a grid that does not fit the
  scale) is one line, never a wrong answer.

The families are weighted (fractional weights), non-integral, multi-GPU (two-GPU jobs
whose edges make a split mapping slower) on a 2 x 2 cluster, with batch and spread
arrivals; the offsets reach 1e10 s and the scales 1e-9 to 1e9. Only deterministic limits
stop the solvers (the time limit is a safety net).
"""

from __future__ import annotations

import math
import random

import pytest
from ddlsched.formulations.prepared import ModelTooLarge
from ddlsched.proofs_checks.verifier import verify

from ddlsched import solve
from ddlsched.core.model import Cluster, InputError, Instance, Job
from ddlsched.core.params import ExactParams
from ddlsched.core.result import CLOSED_GAP, SolveStatus
from tests.oracles import brute_force_a
from tests.strategies import FRACTIONAL_WEIGHTS

LIMITS = ExactParams(time_limit=600, threads=1, deterministic_limit=20.0, node_limit=20_000)

ROUNDING = 1e-9
"""Rounding allowed on times of the instance's magnitude (about 1e7 ulps)."""

CLUSTER = Cluster((2, 2), bandwidth_intra=4.0, bandwidth_inter=1.0)


def _base(seed: int, spread: bool) -> Instance:
    """Four jobs of one or two GPUs with non-integral compute times and traffic, weights
    from :data:`FRACTIONAL_WEIGHTS`, released together or spread over a few seconds."""
    rng = random.Random(seed)
    jobs = []
    for k in range(4):
        gpus = rng.choice((1, 2))
        edges = ((0, 1, rng.uniform(0.5, 2.0)),) if gpus == 2 else ()
        jobs.append(
            Job(
                f"j{k}",
                rng.uniform(0.0, 4.0) if spread else 0.0,
                rng.randint(1, 3),
                rng.uniform(1.0, 3.0),
                gpus,
                edges=edges,
                weight=rng.choice(FRACTIONAL_WEIGHTS),
            )
        )
    return Instance(CLUSTER, tuple(jobs))


def _moved(instance: Instance, shift: float, scale: float) -> Instance:
    """Every time times ``scale`` (iterations take the part of it above 1e3, so that a
    compute time stays within its cap), every release then moved by ``shift``."""
    more = max(1, round(scale / 1e3)) if scale > 1e3 else 1
    per_iteration = scale / more
    jobs = tuple(
        job.replace(
            release=shift + scale * job.release,
            iterations=job.iterations * more,
            compute_time=job.compute_time * per_iteration,
            edges=tuple((a, b, q * per_iteration) for a, b, q in job.edges),
        )
        for job in instance.jobs
    )
    return instance.replace(jobs=jobs, slot=min(max(scale, 1e-6), 1e6))


CASES = [
    (0.0, 1.0, False),
    (0.0, 1.0, True),
    (0.0, 1e-9, False),
    (0.0, 1e-9, True),
    (0.0, 1e9, False),
    (0.0, 1e6, True),
    (1e4, 1e4, True),
    (1e7, 1.0, False),
    (1e7, 1.0, True),
    (1e7, 1e-4, True),
    (1e10, 1.0, False),
    (1e10, 1.0, True),
    (1e10, 1e-3, True),
]
"""(shift, scale, spread arrivals). Spread arrivals at 1e9 are left out for time only: on
a grid of 1e6 s (the largest slot) the slotted MILP and the pooled bound's search run their
full deterministic limits there (some 80 s each); the batch case at 1e9 checks the scale."""


@pytest.mark.parametrize(
    ("shift", "scale", "spread"),
    CASES,
    ids=[f"{s:g}+{c:g}x-{'spread' if a else 'batch'}" for s, c, a in CASES],
)
@pytest.mark.parametrize("method", ["exact", "cpsat-continuous", "milp", "cpsat"])
def test_optimal_is_the_brute_force_optimum_at_every_scale_and_offset(
    method: str, shift: float, scale: float, spread: bool
) -> None:
    """Each method's answer on the moved copy of a base instance: ``optimal`` only at the
    optimum (within CLOSED_GAP of the flow time), a feasible schedule never below it, and
    refusals only as a clear error."""
    base = _base(7 if spread else 3, spread)
    optimum_base = brute_force_a(base)
    weights = math.fsum(job.weight for job in base.jobs)
    flow = scale * (optimum_base - math.fsum(j.weight * j.release for j in base.jobs))
    optimum = scale * optimum_base + shift * weights
    instance = _moved(base, shift, scale)
    try:
        result = solve(instance, method, params=LIMITS)
    except (ModelTooLarge, InputError) as refused:
        assert method in ("milp", "cpsat"), refused  # the continuous methods take any scale
        assert "\n" not in str(refused)
        return
    rounding = ROUNDING * abs(optimum)
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    assert result.objective >= optimum - rounding - CLOSED_GAP * flow
    if result.status is SolveStatus.OPTIMAL:
        assert result.objective <= optimum + CLOSED_GAP * flow + rounding, (
            result.objective,
            optimum,
            result.notes,
        )
    if method == "exact" and shift <= 1e7 and scale >= 1e-4:
        # Where the times keep eight digits beside the releases the portfolio proves it.
        assert result.status is SolveStatus.OPTIMAL, result.notes


def test_highs_gaps_leave_at_most_the_gap_of_the_controlled_part() -> None:
    """HiGHS's relative gap for a gap of 1e-4 on ``objective - fixed`` is ``1e-4 * floor /
    (floor + fixed)`` and its absolute one ``1e-4 * floor``: with releases of 1e7 s and a
    floor of 1 s, a relative 1e-4 would stop HiGHS 1e3 s (a thousand flow times) above its
    bound. Without releases the gap is HiGHS's own; with releases and no floor both are 0.
    Catches: the relative gap left at ``mip_gap`` whatever the releases."""
    from ddlsched.formulations.solver import highs_gaps

    relative, absolute = highs_gaps(1e-4, 1e7, 1.0)
    assert math.isclose(relative, 1e-4 / (1.0 + 1e7), rel_tol=1e-12)
    assert math.isclose(absolute, 1e-4, rel_tol=1e-12)
    assert relative * (1e7 + 1.0) <= 1e-4 * 1.0 * (1 + 1e-12)
    assert highs_gaps(1e-4, 0.0, 2.0) == (1e-4, 2e-4)
    assert highs_gaps(1e-4, 5.0, 0.0) == (0.0, 0.0)


def test_units_since_rounds_down_exactly() -> None:
    """``units_since`` is ``floor((seconds - origin) * scale)`` in exact arithmetic: 1 s on a
    unit of 1/1.9 s is unit 1 (not 2), 1.7 s from an origin of 0.2 s on 1 s is unit 1, and a
    release that rounds up would make the relaxation's job later than the instance's.
    Catches: ``round`` (or ``ceil``) in place of ``floor``, a model that is no relaxation."""
    from ddlsched.formulations.continuous import units_since

    assert units_since(1.0, 0.0, 1.9) == 1
    assert units_since(1.9, 0.2, 1.0) == 1
    assert units_since(0.3, 0.1, 10.0) == 1  # 0.3 - 0.1 is just below 0.2 as doubles
    assert units_since(5.0, 5.0, 1e6) == 0


def test_model_gap_is_judged_on_the_controlled_part() -> None:
    """CP-SAT's relative gap for 1e-4 on the flow time is ``1e-4 * floor / (floor + fixed)``
    on the model's units: releases of 10 units, shortest durations of 1, weights 1 and 3
    give 1e-4 * 4 / 44; without releases it is 1e-4. Catches: the gap passed unchanged, which
    lets CP-SAT stop 11 times the gap asked for above its bound on the flow time."""
    from ddlsched.formulations.continuous import Units, model_gap

    units = Units([10, 10], [[1, 2], [1]], [[(1,), (2,)], [(1,)]], (2,), [1, 3], ((0,),), ())
    assert math.isclose(model_gap(units, 1e-4), 1e-4 * 4 / 44, rel_tol=1e-12)
    at_zero = Units([0, 0], [[1, 2], [1]], [[(1,), (2,)], [(1,)]], (2,), [1, 3], ((0,),), ())
    assert model_gap(at_zero, 1e-4) == 1e-4


def test_bound_seconds_adds_the_origin_back() -> None:
    """CP-SAT's bound of 10 (units times integer weights 1 and 1, unit 1/2 s, from an origin
    of 1e7 s) is 5 s of weighted time past the origin, so 2e7 + 5 in seconds times weights.
    Catches: the ``origin * weights`` term forgotten, a bound 2e7 below the truth (no proof
    ever closes on instances released late)."""
    from types import SimpleNamespace

    from ddlsched.formulations.continuous import _bound_seconds

    jobs = [SimpleNamespace(weight=1.0), SimpleNamespace(weight=1.0)]
    prepared = SimpleNamespace(
        slotted=SimpleNamespace(jobs=jobs),
        scale=2.0,
        units=SimpleNamespace(weights=[1, 1]),
        origin=1e7,
    )
    assert math.isclose(_bound_seconds(prepared, 10.0), 2e7 + 5.0, rel_tol=1e-15)


def test_fixed_and_floor_of_a_slotted_model_weigh_releases_and_shortest_modes() -> None:
    """The MILP's fixed part is the slot times ``sum_i w_i e_i`` (release slots 4 and 10,
    weights 2 and 0.5, slot 0.5 s: 6.5) and its floor the slot times ``sum_i w_i
    min_slots_i`` (3 and 2: 3.5). Catches: the fixed part left at 0, which hands HiGHS a
    relative gap judged on ``sum w C`` (releases then close any gap)."""
    from types import SimpleNamespace

    from ddlsched.formulations.milp import _fixed_and_floor

    jobs = [
        SimpleNamespace(weight=2.0, release_slot=4, min_slots=3),
        SimpleNamespace(weight=0.5, release_slot=10, min_slots=2),
    ]
    built = SimpleNamespace(single=None, slotted=SimpleNamespace(slot=0.5, jobs=jobs))
    assert _fixed_and_floor(built) == (6.5, 3.5)
