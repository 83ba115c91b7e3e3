"""What every exact model starts from (ddlsched.formulations.prepared): the warm start's plan, the
size
estimate, and the gates that keep an inexact input from becoming ``optimal``."""

from __future__ import annotations

import math

import pytest
from ddlsched.formulations import prepared
from ddlsched.formulations.modes import problem_a, problem_a1
from ddlsched.formulations.prepared import plan_from_schedule, prepare_slotted
from ddlsched.formulations.slotted import greedy_schedule
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.model import Cluster, Instance, Job, Problem, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus
from tests.oracles import brute_force_a1
from tests.strategies import typed_instances, weighted_instances


def _three_on_one_server() -> Instance:
    """One server of 2 GPUs, 1 s per iteration: B (2 GPUs, 6 it., r 0), A (2 GPUs, 6 it.,
    r 1), C (1 GPU, 5 it., r 3).

    By hand: the list schedules try B, A, C (6 + 12 + 17 = 35), Smith's C, A, B (C at 3-8
    keeps A and B off the server until 8: 8 + 14 + 20 = 42) and release-then-widest
    (B, A, C again: 35); the optimum runs B, C, A: 6 + 11 + 17 = 34.
    """
    cluster = Cluster((2,), 2.0, 1.0)
    jobs = (
        Job("A", 1.0, 6, 1.0, 2),
        Job("B", 0.0, 6, 1.0, 2),
        Job("C", 3.0, 5, 1.0, 1),
    )
    return Instance(cluster, jobs)


def _schedule(entries: dict[str, tuple[float, float]], instance: Instance) -> Schedule:
    mapping = {job.id: (0,) * job.gpus for job in instance.jobs}
    return Schedule(
        tuple(ScheduledJob(i, s, e, mapping[i]) for i, (s, e) in entries.items()),
        problem=Problem.A1,
    )


def test_a_warm_start_better_than_the_list_schedules_is_kept() -> None:
    """Catches the comparison of the warm start with the list schedules turned around
    (or the warm start dropped): the optimum 34 given as warm start must be the plan, not
    the list schedules' 35."""
    instance = _three_on_one_server()
    slotted = problem_a1(instance)
    assert slotted.objective(greedy_schedule(slotted)) == 35.0  # by hand, above
    assert brute_force_a1(instance) == 34.0
    best = _schedule({"A": (11.0, 17.0), "B": (0.0, 6.0), "C": (6.0, 11.0)}, instance)
    kept = prepare_slotted(instance, Problem.A1, best, None)
    assert kept.slotted.objective(kept.plan) == 34.0


def test_a_warm_start_worse_than_the_list_schedules_is_not_kept() -> None:
    """Catches a warm start taken whatever its value: C, A, B in a row (5 + 11 + 17 ... here
    8 + 14 + 20 = 42) loses to the list schedules' 35."""
    instance = _three_on_one_server()
    worse = _schedule({"C": (3.0, 8.0), "A": (8.0, 14.0), "B": (14.0, 20.0)}, instance)
    assert (
        prepare_slotted(instance, Problem.A1, None, None).slotted.objective(
            prepare_slotted(instance, Problem.A1, worse, None).plan
        )
        == 35.0
    )


def test_the_warm_starts_servers_choose_the_mode() -> None:
    """Catches the warm start's mapping ignored (each job placed in whatever mode ends
    first, the first mode on ties): for every mode of a 2-GPU job on 2 x 2, a warm start
    with that mode's mapping gives a plan in that mode."""
    cluster = Cluster((2, 2), 2.0, 1.0)
    instance = Instance(cluster, (Job("j", 0.0, 3, 1.0, 2, ((0, 1, 1.0),)),))
    slotted = problem_a(instance)
    (job,) = slotted.jobs
    assert len(job.modes) >= 2
    for m, mode in enumerate(job.modes):
        assert mode.mapping is not None
        start = ScheduledJob("j", 0.0, mode.duration, mode.mapping)
        (chosen,) = plan_from_schedule(instance, slotted, Schedule((start,)))
        assert chosen == (m, 0)


def test_a_warm_start_between_slots_starts_at_the_slot_before() -> None:
    """Catches the warm start's start rounded up instead of down: a job that starts at 2.5
    (slot 1 s) may start at slot 2 of the slotted model, never later than in the warm start."""
    instance = Instance(Cluster((2,), 2.0, 1.0), (Job("j", 0.0, 3, 1.0, 1),))
    slotted = problem_a1(instance)
    given_start = ScheduledJob("j", 2.5, 5.5, (0,))
    (plan,) = plan_from_schedule(instance, slotted, Schedule((given_start,), problem=Problem.A1))
    assert plan == (0, 2)


@settings(max_examples=40, deadline=None)
@given(st.one_of(typed_instances(max_jobs=3), weighted_instances(max_jobs=3, typed=True)))
def test_the_size_estimate_never_exceeds_the_model(instance: Instance) -> None:
    """Catches over-refusals: ``estimate_size`` refuses a model before enumerating its
    modes, so its counts must be lower bounds of the real ones. Over typed, weighted,
    multi-GPU instances, the modes it counts are the modes enumerated, and its horizon is
    at most the makespan of a feasible plan (a slowest GPU type's compute time for the
    fastest, or the work not shared over every GPU, would exceed it)."""
    seen: list[tuple[int, int]] = []
    real_guard = prepared.guard

    def spy(variables: int, horizon: int, slot: float, problem: str, nonzeros: int = 0) -> None:
        seen.append((variables, horizon))

    try:
        prepared.guard = spy
        prepared.estimate_size(instance, Problem.A)
    finally:
        prepared.guard = real_guard
    ((modes, horizon),) = seen
    slotted = problem_a(instance)
    assert modes == sum(len(job.modes) for job in slotted.jobs)
    plan = greedy_schedule(slotted)
    pairs = zip(slotted.jobs, plan, strict=True)
    makespan = max(start + job.modes[m].slots for job, (m, start) in pairs)
    assert horizon <= makespan


def test_a_model_too_large_is_refused_before_its_modes_are_enumerated() -> None:
    """The control of the test above: a horizon past the guard's limit is refused by the
    estimate itself (a 1e-6 s slot on a 10 s job)."""
    instance = Instance(Cluster((2,), 2.0, 1.0), (Job("j", 0.0, 10, 1.0, 1),), slot=1e-6)
    with pytest.raises(prepared.ModelTooLarge):
        prepared.estimate_size(instance, Problem.A)


@pytest.mark.parametrize("method", ["milp", "cpsat"])
def test_modes_not_proven_fastest_are_never_optimal(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Catches a backend that drops the unproven-modes gate (CP-SAT's once survived a
    planted slip): every mapping reported unproven, as a time-limited mapping MILP reports
    it, with every mode enumerated. The instance's optimum 13 is not met by the
    combinatorial bounds (11.9), so only the solver's own proof could call it optimal,
    and that proof is for the modes' durations, not the instance's. The control: the same
    call without the patch is ``optimal``."""
    import ddlsched.formulations.modes as modes
    from ddlsched.formulations.cpsat import solve_cpsat
    from ddlsched.formulations.milp import solve_milp

    from tests.formulations.test_modes import _wide_and_narrow

    instance = _wide_and_narrow()
    params = ExactParams(time_limit=None, threads=1, isolate=False)
    solve = solve_cpsat if method == "cpsat" else solve_milp
    control = solve(instance, "A", params)
    assert control.status is SolveStatus.OPTIMAL and control.objective == pytest.approx(13.0)

    proven = modes.best_mapping_for_counts

    def unproven(*args: object, **kwargs: object) -> tuple[tuple[int, ...], bool]:
        mapping, _ = proven(*args, **kwargs)  # type: ignore[arg-type]
        return mapping, False

    monkeypatch.setattr(modes, "best_mapping_for_counts", unproven)
    assert problem_a(instance).unenumerated == ()  # every mode there, none proven
    result = solve(instance, "A", params)
    assert result.objective == pytest.approx(13.0)
    assert result.status is SolveStatus.FEASIBLE
    assert result.facts["modes_proven"] is False
    assert not result.best_bound >= 13.0 - 1e-6  # no bound from the solver's proof
    assert any("did not prove fastest" in note for note in result.notes)


def test_the_milp_gets_the_limit_left_after_building(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches the build time added to (or not taken from) the MILP's time limit: a model
    that took 3 s to build under a 10 s limit is solved with 7 s, and one that took longer
    than the limit with a hundredth of a second (to read its start). The build time is set
    by hand, so no clock is read."""
    import dataclasses

    import ddlsched.formulations.milp as exact

    seen: list[float | None] = []
    real = exact.solve_model

    def spy(model: object, options: ExactParams, **kwargs: object) -> object:
        seen.append(options.time_limit)
        return real(model, options, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(exact, "solve_model", spy)
    instance = _three_on_one_server()
    built = exact.build(instance, "A1", options=ExactParams(isolate=False))
    for took, expected in ((3.0, 7.0), (25.0, 0.01)):
        exact.solve_built(
            dataclasses.replace(built, build_time_s=took), ExactParams(time_limit=10.0)
        )
        assert seen[-1] == pytest.approx(expected)


def test_incumbents_of_modes_cut_short_carry_no_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catches the incumbent exchange's honesty gate ignoring modes not all enumerated: the
    MILP's incumbents reported to the portfolio must carry ``nan`` as HiGHS's bound when
    ``mode_limit`` cut the modes short (the bound is then the optimum of the modes tried,
    not a bound for the instance); with every mode enumerated they carry a number."""
    import ddlsched.formulations.milp as exact
    import numpy as np

    from tests.formulations.test_modes import _wide_and_narrow

    # mode_limit 4 of 5: every job has a proven mode, the last job's second one is missing
    for limit, honest in ((4, False), (None, True)):
        reports: list[tuple[str, object, float]] = []
        monkeypatch.setattr(exact, "report", reports.append)
        built = exact.build(_wide_and_narrow(), "A", options=ExactParams(mode_limit=limit))
        assert built.slotted is not None and built.incumbent_plan is not None
        assert built.slotted.unproven_modes == ()
        assert (built.slotted.unenumerated != ()) is not honest
        hooks = exact._exchange(built, None)
        keys = list(built.model.INDEX)
        values = np.zeros(len(keys))
        for i, (m, t) in enumerate(built.incumbent_plan):
            values[keys.index((i, m, t))] = 1.0
        assert hooks.on_incumbent is not None
        hooks.on_incumbent(values, 13.0, 12.5)
        ((kind, _, bound),) = reports
        assert kind == "incumbent"
        assert math.isfinite(bound) is honest
