"""Relax-and-pack and the neighbourhood search (ddlsched.formulations.pack).

Truths used: the brute-force optimum of problem A (tests.oracles), the independent verifier
for every schedule, and a hand-worked instance the pooled relaxation cannot be packed on.
Every CP-SAT call runs on one worker under a deterministic limit, and HiGHS under a time
limit no run reaches: no test depends on the machine's speed.
"""

from __future__ import annotations

import itertools
import math

import pytest
from ddlsched.formulations.certify import BoundSet, RawAnswer, certify, pooled_bound_and_schedules
from ddlsched.formulations.lower_bounds import BoundInputs, LpSettings, time_indexed_bound
from ddlsched.formulations.outcome import objectives, schedule_from_plan
from ddlsched.formulations.pack import (
    PackSettings,
    Plan,
    coarsened,
    compact_modes,
    improve,
    pack,
    pooled_start_slots,
    search_problem,
)
from ddlsched.formulations.slotted import SlottedProblem
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.model import Cluster, Instance, Job, Problem, Schedule
from ddlsched.core.result import LowerBound, SolveStatus, fixed_part, gap_closed
from tests.oracles import brute_force_a
from tests.strategies import FRACTIONAL_WEIGHTS, typed_instances

POOLED = LpSettings(max_variables=5_000, time_limit=1e7, integer=True)
"""Integral, with a limit no run reaches."""

SMALL = PackSettings(windows=(0, 2, 1000), pack_work=5.0, rounds=6, free_jobs=3, round_work=1.0)
"""Limits for tiny instances: deterministic, far more than four jobs need, and a last window
longer than all their durations together (so some packing always exists)."""


@st.composite
def hard_instances(draw: st.DrawFn) -> Instance:
    """Three or four jobs of 1 to (largest server + 1) GPUs, so some are wider than any
    server, on 2-3 servers of 1-3 GPUs (or a typed cluster), weights fractional or not,
    released together at 0 or spread over whole seconds; whole-second durations (with
    edges of whole seconds at either bandwidth), so the pooled bound runs on the grid."""
    if draw(st.booleans()):
        instance = draw(typed_instances(max_jobs=3, integral=True))
    else:
        servers = draw(st.integers(2, 3))
        gpus = tuple(draw(st.integers(1, 3)) for _ in range(servers))
        cluster = Cluster(gpus, 2.0, 1.0)
        batch = draw(st.booleans())
        jobs = []
        for k in range(draw(st.integers(3, 4))):
            width = draw(st.integers(1, min(sum(gpus), max(gpus) + 1)))
            edges = tuple((n, n + 1, 2.0) for n in range(width - 1))
            jobs.append(
                Job(
                    id=f"j{k}",
                    release=0.0 if batch else float(draw(st.integers(0, 3))),
                    iterations=draw(st.integers(1, 3)),
                    compute_time=float(draw(st.integers(1, 2))),
                    gpus=width,
                    edges=edges,
                )
            )
        instance = Instance(cluster, tuple(jobs))
    weights = [draw(st.sampled_from(FRACTIONAL_WEIGHTS)) for _ in instance.jobs]
    jobs = tuple(job.replace(weight=w) for job, w in zip(instance.jobs, weights, strict=True))
    return instance.replace(jobs=jobs)


def _pooled(instance: Instance) -> tuple[float, list[float] | None]:
    """The pooled bound's value (``nan`` unless valid) and its solution's starts."""
    bound, starts = time_indexed_bound(instance, BoundInputs.of(instance), POOLED)
    return (bound.value if bound.valid else math.nan), starts


def _checked(instance: Instance, problem: SlottedProblem, plan: Plan) -> float:
    """The verified objective of ``plan``'s schedule (the verifier's own)."""
    report = verify(instance, schedule_from_plan(instance, Problem.A, problem, plan))
    assert report.feasible, report.violations
    return report.total_completion_time


@settings(max_examples=25, deadline=None, derandomize=True)
@given(instance=hard_instances())
def test_a_packing_is_feasible_and_meets_the_pooled_bound_only_at_the_optimum(
    instance: Instance,
) -> None:
    """On hard tiny families: the packing of the pooled starts, on every mode and on the
    compact modes, is a schedule the verifier accepts, never below the brute-force optimum;
    when it meets the pooled bound (a proof) the optimum is that value. Catches: a packing
    that ignores a server's capacity, or a mode's length, or a release."""
    optimum = brute_force_a(instance)
    bound, starts = _pooled(instance)
    assert starts is not None and bound <= optimum * (1 + 1e-9)
    for problem in (search_problem(instance), compact_modes(instance)):
        plan = pack(problem, pooled_start_slots(problem, starts), SMALL, target=bound)
        assert plan is not None  # the last window lets every job wait for all the others
        value = _checked(instance, problem, plan)
        assert value >= optimum - 1e-9
        if gap_closed(value, bound, fixed_part(instance)):
            assert value == pytest.approx(optimum)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(instance=hard_instances(), seed=st.integers(0, 3))
def test_the_neighbourhood_search_keeps_schedules_feasible_and_never_worsens(
    instance: Instance, seed: int
) -> None:
    """From a list schedule of the instance, every plan the search reports is feasible (the
    verifier), strictly better than the one before, and no better than the brute-force
    optimum; its answer is the last reported (or the start). Catches: fixed jobs left out
    of the capacity, a worse plan kept, a plan reported that is not better."""
    from ddlsched.formulations.slotted import greedy_schedule

    problem = search_problem(instance)
    start = greedy_schedule(problem)
    reported: list[Plan] = []
    answer = improve(problem, start, SMALL, seed=seed, on_better=reported.append)
    values = [_checked(instance, problem, plan) for plan in [start, *reported]]
    assert all(later < earlier for earlier, later in itertools.pairwise(values))
    assert values[-1] >= brute_force_a(instance) - 1e-9
    assert problem.objective(answer) == pytest.approx(
        problem.objective(reported[-1] if reported else start)
    )


def _fragmenting() -> Instance:
    """Three 2-GPU jobs released at 0 on two servers of 3 GPUs, each 2 s on one server (1 s
    of compute, an edge of 2 GB at 2 GB/s) and 3 s split over both (the edge at 1 GB/s).
    The pooled model (6 GPUs, every job 2 s) starts all three at 0: bound 6. Each server
    holds one of them at a time, so no packing keeps those starts; the optimum runs two at
    0 on their own servers and splits the third over the GPUs left: 2 + 2 + 3 = 7."""
    jobs = tuple(
        Job(
            id=f"j{k}",
            release=0.0,
            iterations=1,
            compute_time=1.0,
            gpus=2,
            edges=((0, 1, 2.0),),
        )
        for k in range(3)
    )
    return Instance(Cluster((3, 3), 2.0, 1.0), jobs)


def test_starts_that_cannot_be_packed_are_moved_and_nothing_is_proven() -> None:
    """Hand-worked (:func:`_fragmenting`): kept at the pooled starts no packing exists; a
    window lets the third job wait a slot (8: the packing keeps the fastest modes); the
    pooled child's schedules are all feasible, at least the optimum 7, and certifying them
    with its bound 6 proves nothing. Catches: a packing that ignores a server's capacity
    (it would keep the starts), and a proof claimed when the packing moved a start."""
    instance = _fragmenting()
    assert brute_force_a(instance) == pytest.approx(7.0)
    bound, starts = _pooled(instance)
    assert bound == pytest.approx(6.0) and starts == [0.0, 0.0, 0.0]
    problem = search_problem(instance)
    slots = pooled_start_slots(problem, starts)
    assert pack(problem, slots, PackSettings(windows=(0,)), target=bound) is None
    plan = pack(problem, slots, SMALL, target=bound)
    assert plan is not None and _checked(instance, problem, plan) == pytest.approx(8.0)

    reports: list[tuple[str, object]] = []
    import ddlsched.formulations.isolation as isolation

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(isolation, "report", reports.append)
        pooled_bound_and_schedules(instance, 10.0, 1e7, iterations=5, search=SMALL)
    schedules = [item for _, item in reports if isinstance(item, Schedule)]
    assert schedules
    known = BoundSet.of(instance).added(
        *(item for kind, item in reports if isinstance(item, LowerBound))
    )
    for schedule in schedules:
        assert verify(instance, schedule).feasible
        objective, flow = objectives(instance, schedule)
        result = certify(
            RawAnswer("exact", Problem.A, SolveStatus.FEASIBLE, schedule, objective, flow),
            known,
        )
        assert result.objective >= 7.0 - 1e-9
        assert result.status is SolveStatus.FEASIBLE
        assert result.lower_bound is not None and result.lower_bound.value <= 7.0


def test_a_coarser_slot_keeps_plans_feasible() -> None:
    """Durations and releases off a coarse slot round up: a plan packed on slots of 2 s of
    an instance with 1 s and 3 s jobs released at 1 s is still a feasible schedule (the
    verifier). Catches: rounding a duration or a release down when coarsening."""
    jobs = (
        Job(id="a", release=1.0, iterations=1, compute_time=1.0, gpus=2),
        Job(id="b", release=0.0, iterations=3, compute_time=1.0, gpus=2),
        Job(id="c", release=1.0, iterations=1, compute_time=3.0, gpus=1),
    )
    instance = Instance(Cluster((2, 2), 2.0, 1.0), jobs)
    problem = coarsened(search_problem(instance), instance, 2.0)
    assert [job.release_slot for job in problem.jobs] == [1, 0, 1]
    assert [job.min_slots for job in problem.jobs] == [1, 2, 2]
    plan = pack(problem, [job.release_slot for job in problem.jobs], SMALL)
    assert plan is not None
    _checked(instance, problem, plan)


def test_settings_are_checked() -> None:
    """A window below zero or a limit that is not positive is refused, naming the field."""
    with pytest.raises(ValueError, match="windows"):
        PackSettings(windows=(-1,))
    with pytest.raises(ValueError, match="round_work"):
        PackSettings(round_work=0.0)
    with pytest.raises(ValueError, match="free_jobs"):
        PackSettings(free_jobs=0)


@pytest.mark.slow
@pytest.mark.parametrize("load", [None, 1.0], ids=["batch", "spread"])
def test_the_pooled_bound_is_below_every_schedule_the_project_produces(
    load: float | None,
) -> None:
    """On 24 exact-friendly jobs on 4 x 4 GPUs (released together, and at load 1): the
    pooled child's bound is at most the verified objective of every non-preemptive online
    policy's schedule, of the list schedules, and of every schedule the child itself
    reports; and a reported schedule that meets the bound is the best of them all. Catches
    a bound that overshoots (a packing taken as a bound, a rounding up off the grid)."""
    import ddlsched.formulations.isolation as isolation
    from ddlsched.algorithms.registry import POLICIES, PREEMPTIVE_POLICIES
    from ddlsched.formulations.slotted import greedy_schedule

    from ddlsched.api import simulate
    from ddlsched.core.generators import GeneratorConfig, generate

    instance = generate(GeneratorConfig.exact_friendly(24, 4, 4, load), 0)
    reports: list[tuple[str, object]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(isolation, "report", reports.append)
        bound = pooled_bound_and_schedules(instance, math.inf, 1e7, iterations=50, search=SMALL)
    assert bound.valid
    produced = [item for _, item in reports if isinstance(item, Schedule)]
    for name in POLICIES.names():
        if name not in PREEMPTIVE_POLICIES:
            produced.append(simulate(instance, name, bound=False).schedule)
    problem = search_problem(instance)
    produced.append(schedule_from_plan(instance, Problem.A, problem, greedy_schedule(problem)))
    values = []
    for schedule in produced:
        assert schedule is not None
        report = verify(instance, schedule)
        assert report.feasible, report.violations
        values.append(report.total_completion_time)
    assert bound.value <= min(values) * (1 + 1e-9)
    fixed = fixed_part(instance)
    for _, item in reports:
        if isinstance(item, Schedule) and gap_closed(
            objectives(instance, item)[0], bound.value, fixed
        ):
            assert objectives(instance, item)[0] <= min(values) + 1e-9


@pytest.mark.slow
def test_where_no_model_fits_the_pooled_searches_answer() -> None:
    """Three jobs of about 11 hours (a horizon of 1 s slots far beyond the slotted models')
    on 2 x 2 GPUs, one released at 0.5 s, and a memory limit no CP-SAT model fits: the
    exact method answers from the bounds' children alone (its note says so), without a
    time limit (deterministic), with a schedule the verifier accepts, no better than the
    brute-force optimum and a bound below it; ``optimal`` only at the optimum. Catches: a
    refused continuous model ending the call with an error, a bound above a schedule."""
    from ddlsched.api import solve
    from ddlsched.core.params import ExactParams

    jobs = (
        Job(id="a", release=0.0, iterations=1, compute_time=40_000.0, gpus=2),
        Job(id="b", release=0.5, iterations=1, compute_time=30_000.0, gpus=1, weight=2.0),
        Job(id="c", release=0.0, iterations=1, compute_time=50_000.0, gpus=3),
    )
    instance = Instance(Cluster((2, 2), 2.0, 1.0), jobs)
    optimum = brute_force_a(instance)
    result = solve(instance, "exact", params=ExactParams(time_limit=None, memory_limit=1))
    assert any("were refused" in note for note in result.notes), result.notes
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert report.total_completion_time >= optimum * (1 - 1e-9)
    assert result.lower_bound is not None and result.lower_bound.value <= optimum * (1 + 1e-9)
    if result.status is SolveStatus.OPTIMAL:
        assert report.total_completion_time == pytest.approx(optimum)


@pytest.mark.slow
def test_the_decomposition_bound_joins_the_proof_after_the_pooled_search() -> None:
    """Hand-worked (:func:`_fragmenting`: pooled bound 6, optimum 7), with a memory limit no
    model fits, no time limit: the bounds run in turn (the LP, the pooled bound and its
    searches, then the decomposition bound, which reaches 7 by charging each server its own
    jobs); the searches find 7 (the third job split over both servers), so the answer is
    ``optimal`` by the decomposition bound, the verifier agreeing. Catches: the
    decomposition step not run after the pooled child, or its bound not reaching the proof."""
    from ddlsched.api import solve
    from ddlsched.core.params import ExactParams

    instance = _fragmenting()
    result = solve(instance, "exact", params=ExactParams(time_limit=None, memory_limit=1))
    assert result.status is SolveStatus.OPTIMAL, result.notes
    assert result.lower_bound is not None and result.lower_bound.name == "decomposition"
    assert result.schedule is not None
    assert verify(instance, result.schedule).total_completion_time == pytest.approx(7.0)
