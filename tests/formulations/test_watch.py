"""The portfolio's own checks (ddlsched.formulations.portfolio): what its watch admits and proves,
which backend schedules it trusts, and which schedule an unproven race returns.

Each test reaches one piece directly (``_Watch``, ``_Race``, ``_admitted``,
``_with_watched_schedule``, ``_from_watch``) or the whole race with fake backends, over
a small family of one-GPU instances whose schedules are written by hand: every order of
the jobs is a schedule of A (and, without mappings, of A1), and preemptive SRPT is a
schedule of A2 whose objective is at most A's optimum (SRPT is optimal for the
unweighted preemptive single machine). No solver runs and no time limit decides
anything.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import threading
from collections.abc import Callable

import pytest
from ddlsched.formulations.admission import InadmissibleSchedule, fitting_problems
from ddlsched.formulations.certify import BoundSet
from ddlsched.formulations.outcome import objectives
from ddlsched.formulations.portfolio import (
    _admitted,
    _from_watch,
    _Race,
    _Watch,
    _with_watched_schedule,
    solve_exact,
)
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.model import (
    Cluster,
    InputError,
    Instance,
    Job,
    Piece,
    Problem,
    Schedule,
    ScheduledJob,
)
from ddlsched.core.params import ExactParams
from ddlsched.core.result import LowerBound, Result, SolveStatus, fixed_part, gap_closed

SHAPES = (
    ((0.5, 1), (0.0, 3)),  # SRPT preempts the long job for the short one: 5.5 < A's 6
    ((0.0, 4), (1.0, 1), (2.0, 1)),
    ((0.0, 3), (1.0, 1), (1.5, 2)),
    ((0.0, 2), (0.0, 1), (3.0, 2)),  # SRPT does not preempt; its pieces still rule out A
)
"""(release, seconds) of each 1-GPU job on one GPU."""


def _instance(shape: tuple[tuple[float, int], ...]) -> Instance:
    jobs = tuple(Job(f"j{k}", release, n, 1.0, 1) for k, (release, n) in enumerate(shape))
    return Instance(Cluster((1,), 1.0, 1.0), jobs)


INSTANCES = [_instance(shape) for shape in SHAPES]
IDS = [f"{len(shape)}jobs-{k}" for k, shape in enumerate(SHAPES)]


def _in_order(
    instance: Instance, order: tuple[Job, ...], problem: Problem = Problem.A
) -> Schedule:
    """The jobs of ``order`` one after the other on the one GPU, each at its release at
    the earliest: a schedule of A (with the mapping), or of A1 (without)."""
    entries, t = [], 0.0
    for job in order:
        start = max(t, job.release)
        t = start + job.iterations * job.compute_time
        mapping = (0,) if problem is Problem.A else None
        entries.append(ScheduledJob(job.id, start, t, mapping))
    return Schedule(tuple(entries), problem=problem)


def _orders(instance: Instance) -> list[Schedule]:
    """Every order of the jobs as a schedule of A."""
    return [_in_order(instance, order) for order in itertools.permutations(instance.jobs)]


def _srpt(instance: Instance) -> Schedule:
    """Preemptive shortest remaining time first on the one GPU: a schedule of A2, every
    job in pieces."""
    left = {job.id: job.iterations * job.compute_time for job in instance.jobs}
    pieces: dict[str, list[Piece]] = {job.id: [] for job in instance.jobs}
    t = 0.0
    while any(value > 0 for value in left.values()):
        ready = [j for j in instance.jobs if j.release <= t and left[j.id] > 0]
        later = [j.release for j in instance.jobs if j.release > t]
        if not ready:
            t = min(later)
            continue
        job = min(ready, key=lambda j: (left[j.id], j.id))
        run = min(left[job.id], min(later, default=math.inf) - t)
        own = pieces[job.id]
        if own and own[-1].end == t:
            own[-1] = Piece(own[-1].start, t + run)
        else:
            own.append(Piece(t, t + run))
        left[job.id] -= run
        t += run
    return Schedule(
        tuple(
            ScheduledJob(
                j.id, pieces[j.id][0].start, pieces[j.id][-1].end, pieces=tuple(pieces[j.id])
            )
            for j in instance.jobs
        ),
        problem=Problem.A2,
    )


def _late(schedule: Schedule) -> Schedule:
    """``schedule`` with its first job ending one second too late: a schedule of nothing."""
    first, *rest = schedule.jobs
    assert first.end is not None
    return dataclasses.replace(
        schedule, jobs=(dataclasses.replace(first, end=first.end + 1.0), *rest)
    )


def _foreign(instance: Instance) -> list[Schedule]:
    """Schedules that are not schedules of A: A2's SRPT (as tagged, and relabelled A), an
    order without mappings (A1's), and an order with a wrong end."""
    a2 = _srpt(instance)
    return [
        a2,
        dataclasses.replace(a2, problem=Problem.A),
        _in_order(instance, instance.jobs, Problem.A1),
        _late(_orders(instance)[0]),
    ]


def test_the_hand_written_schedules_are_what_the_tests_take_them_for() -> None:
    """The family itself: every order is a schedule of A (and only of A), SRPT one of A2
    only and never worse than A's best order, the late one a schedule of nothing."""
    for instance in INSTANCES:
        for schedule in _orders(instance):
            assert verify(instance, schedule).feasible
            assert fitting_problems(instance, schedule) == (Problem.A,)
        a2 = _srpt(instance)
        assert fitting_problems(instance, a2) == (Problem.A2,), verify(instance, a2).violations
        best_a = min(objectives(instance, s)[0] for s in _orders(instance))
        assert objectives(instance, a2)[0] <= best_a
        assert fitting_problems(instance, _late(_orders(instance)[0])) == ()
    first = INSTANCES[0]
    assert objectives(first, _srpt(first))[0] < min(
        objectives(first, s)[0] for s in _orders(first)
    )


def _forbid_backends(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Both backends replaced by fakes that record their call and fail; the bounds do not
    race (no child starts). The list of calls is returned."""
    import ddlsched.formulations.cpsat as cpsat_module
    import ddlsched.formulations.milp as exact_module

    calls: list[str] = []

    def fake(name: str) -> Callable[..., Result]:
        def run(*_: object, **__: object) -> Result:
            calls.append(name)
            raise AssertionError(f"{name} ran on a warm start the portfolio should refuse")

        return run

    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)
    monkeypatch.setattr(cpsat_module, "solve_cpsat", fake("cpsat"))
    monkeypatch.setattr(exact_module, "solve_milp", fake("milp"))
    return calls


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
def test_the_portfolio_refuses_a_bad_warm_start_before_any_backend_runs(
    monkeypatch: pytest.MonkeyPatch, instance: Instance
) -> None:
    """Every problem, every warm start that is not one of its schedules (another
    problem's, one ending late): ``solve_exact`` raises the one-line ``InputError`` naming
    the problem solved, and neither backend is ever called. Prevents: the portfolio's own
    check dropped (the backends' later check then refuses it, so the front door still
    fails, but only after starting the race on a schedule that, for A, can sit below
    every bound on OPT(A) and lend a proof before a backend answers)."""
    calls = _forbid_backends(monkeypatch)
    a_order = _orders(instance)[0]
    starts = [
        a_order,
        _in_order(instance, instance.jobs, Problem.A1),
        _srpt(instance),
        _late(a_order),
    ]
    refused = 0
    for problem in Problem:
        for start in starts:
            if problem in fitting_problems(instance, start):
                continue
            with pytest.raises(InputError) as error:
                solve_exact(instance, problem, ExactParams(time_limit=600), warm_start=start)
            message = str(error.value)
            assert message.startswith(
                f"the warm start is not a schedule of problem {problem.value}: "
            )
            assert "\n" not in message
            refused += 1
    assert calls == []
    assert refused == 3 * len(starts) - 3  # each start fits exactly one problem but the late one


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
def test_an_invalid_bound_at_or_above_the_schedule_proves_nothing(instance: Instance) -> None:
    """A watch holding a schedule of A (each order in turn) is offered invalid bounds (an
    LP stopped by its time limit) equal to its objective, just above, and far above: no
    proof, the race not stopped, the bound not kept; a valid bound equal to the objective
    then proves it. Prevents: the watch taking an invalid bound's value as a bound (an
    unproven schedule returned ``optimal``)."""
    for schedule in _orders(instance):
        objective = objectives(instance, schedule)[0]
        cancel = threading.Event()
        watch = _Watch(BoundSet.empty(instance), cancel)
        assert watch.schedule(schedule, "a CP-SAT incumbent")
        for value in (objective, objective * (1 + 1e-9), objective + 1.0, 10 * objective):
            watch.bound(LowerBound(value, "lp", False))
        assert watch.proof is None and not cancel.is_set() and watch.bounds.bounds == ()
        watch.bound(LowerBound(objective, "lp", True))
        assert watch.proof is not None and cancel.is_set()
        assert watch.proof[0] is schedule and watch.proof[2].valid


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
def test_bounds_before_the_schedule_prove_with_the_strongest(instance: Instance) -> None:
    """Valid bounds arrive before any schedule, in every order (the strongest, equal to
    the best order's objective, first, in the middle or last; or as the combinatorial
    bound the watch starts with); then the schedule arrives: it is proven by the
    strongest bound, whichever came last. Prevents: the watch comparing its latest bound
    with the schedule (a weaker bound arriving later hides the one that proves it)."""
    best = min(_orders(instance), key=lambda s: objectives(instance, s)[0])
    objective = objectives(instance, best)[0]
    strong = LowerBound(objective, "lp", True)
    weak = [
        LowerBound(objective / 2, "job", True),
        LowerBound(objective - 1.0, "squashed-area", True),
    ]
    for order in itertools.permutations([strong, *weak]):
        watch = _Watch(BoundSet.empty(instance), threading.Event())
        for bound in order:
            watch.bound(bound)
        assert watch.proof is None  # no schedule yet
        watch.schedule(best, "the warm start")
        assert watch.proof is not None and watch.proof[2] is strong, order
        assert watch.cancel.is_set()
    for order in itertools.permutations(weak):
        watch = _Watch(BoundSet.empty(instance).added(strong), threading.Event())
        for bound in order:
            watch.bound(bound)
        watch.schedule(best, "the warm start")
        assert watch.proof is not None and watch.proof[2] is strong


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
def test_a_race_stopped_with_only_invalid_bounds_reports_no_lower_bound(
    instance: Instance,
) -> None:
    """A race stopped before either backend answered, its watch holding a schedule and
    offered only invalid bounds (below the objective, so nothing is proven): the result is
    ``feasible`` with no ``lower_bound`` and no ``best_bound``; offered valid bounds too, the
    largest valid one is reported. Prevents: an invalid bound (or the placeholder for none)
    reported as the result's ``lower_bound``."""
    for schedule in _orders(instance):
        objective = objectives(instance, schedule)[0]
        watch = _Watch(BoundSet.empty(instance), threading.Event())
        watch.schedule(schedule, "a MILP incumbent")
        for fraction in (0.25, 0.5, 0.9):
            watch.bound(LowerBound(fraction * objective, "lp", False))
        result = _from_watch(Problem.A, watch, {}, 1.0)
        assert result.status is SolveStatus.FEASIBLE and result.schedule is schedule
        assert result.lower_bound is None and math.isnan(result.best_bound)
        valid = [LowerBound(0.3 * objective, "job", True), LowerBound(0.6 * objective, "lp", True)]
        for bound in valid:
            watch.bound(bound)
        result = _from_watch(Problem.A, watch, {}, 1.0)
        assert result.lower_bound is valid[1] and result.best_bound == valid[1].value
        assert result.status is SolveStatus.FEASIBLE


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
def test_a_refused_cpsat_incumbent_never_crosses_to_the_milp(instance: Instance) -> None:
    """CP-SAT (and the pooled bound's search) report schedules that are not schedules of A
    (A2's SRPT, relabelled or not, A1's, one ending late): none joins CP-SAT's incumbents
    (the MILP's warm start) or the MILP's offers, and each is named as dropped; a schedule
    of A then crosses. Prevents: refused incumbents handed to the MILP as its start or its
    offered solutions."""
    race = _Race(BoundSet.empty(instance), Problem.A, ExactParams(), None, 0, 0.0, False)
    for schedule in _foreign(instance):
        race.from_cpsat(schedule)
        race._received(("schedule", schedule))
    assert race.found == [] and race.offers.empty()
    assert race.milp_start() is None
    assert len(race.watch.refused) == 2 * len(_foreign(instance))
    good = _orders(instance)[-1]
    race.from_cpsat(good)
    assert race.found == [good] and race.offers.get_nowait() is good


def _backend(
    problem: Problem, status: SolveStatus, instance: Instance, schedule: Schedule
) -> Result:
    """A backend's result holding ``schedule``, tagged ``problem``, its bound at its objective
    when ``optimal``."""
    objective, total_jct = objectives(instance, schedule)
    bound = objective if status is SolveStatus.OPTIMAL else math.nan
    return Result("cpsat", problem, status, objective, total_jct, bound, 1.0, schedule)


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
@pytest.mark.parametrize("tag", [Problem.A, Problem.A2], ids=["result-A", "result-A2"])
def test_a_backends_a2_schedule_is_refused_for_problem_a(instance: Instance, tag: Problem) -> None:
    """A backend returns, for problem A, an A2 schedule (SRPT, tagged A2) in a result tagged
    A or A2, ``optimal`` and first to prove: it is turned into a failure and not first.
    Prevents: a backend's schedule checked against its own tags (the result's or the
    schedule's problem) instead of the problem solved, an A2 objective below OPT(A) then
    returned as A's optimum."""
    a2 = _srpt(instance)
    good = _orders(instance)[0]
    outcomes: dict[str, Result | BaseException] = {
        "cpsat": _backend(tag, SolveStatus.OPTIMAL, instance, a2),
        "milp": _backend(Problem.A, SolveStatus.FEASIBLE, instance, good),
    }
    kept, first = _admitted(BoundSet.empty(instance), Problem.A, outcomes, ["cpsat"])
    assert isinstance(kept["cpsat"], InadmissibleSchedule) and first == []
    assert kept["milp"] is outcomes["milp"]


def _fake_backends(monkeypatch: pytest.MonkeyPatch, cpsat: Result, milp: Result) -> None:
    """Both backends replaced by fakes returning ``cpsat`` and ``milp`` (neither proven, so
    both always run); the bounds do not race."""
    import ddlsched.formulations.cpsat as cpsat_module
    import ddlsched.formulations.milp as exact_module

    monkeypatch.setattr("ddlsched.formulations.portfolio.RACE_BOUNDS", False)
    monkeypatch.setattr(cpsat_module, "solve_cpsat", lambda *_, **__: cpsat)
    monkeypatch.setattr(exact_module, "solve_milp", lambda *_, **__: milp)


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
@pytest.mark.parametrize("tag", [Problem.A, Problem.A2], ids=["result-A", "result-A2"])
def test_the_race_never_answers_problem_a_with_a_backends_a2_schedule(
    monkeypatch: pytest.MonkeyPatch, instance: Instance, tag: Problem
) -> None:
    """The whole race for problem A: CP-SAT returns SRPT's A2 schedule with its objective
    as bound (result tagged A or A2), the MILP a schedule of A; the answer is the MILP's
    schedule, verified as one of A, not ``optimal`` (nothing proves it), with CP-SAT named
    as failed. Prevents: the A2 schedule admitted by its own tag and, its bound meeting its
    objective, returned as A's ``optimal`` answer."""
    a2 = _srpt(instance)
    good = _orders(instance)[-1]
    cpsat = dataclasses.replace(
        _backend(tag, SolveStatus.FEASIBLE, instance, a2), best_bound=objectives(instance, a2)[0]
    )
    _fake_backends(monkeypatch, cpsat, _backend(Problem.A, SolveStatus.FEASIBLE, instance, good))
    result = solve_exact(instance, Problem.A, ExactParams(time_limit=600))
    assert result.schedule is good and verify(instance, result.schedule).feasible
    assert result.status is SolveStatus.FEASIBLE and not result.proven_optimal
    assert any("cpsat failed: InadmissibleSchedule" in note for note in result.notes)


@pytest.mark.parametrize("instance", INSTANCES, ids=IDS)
def test_an_unproven_race_returns_the_better_of_the_watched_and_the_backends(
    instance: Instance,
) -> None:
    """Every ordered pair of job orders with different objectives: one the backends'
    unproven answer, the other the watch's best (the warm start, say). The better is
    returned: the watch's (``feasible``, with its objective and a note) when it beats the
    backends', the backends' result unchanged otherwise. Prevents: the comparison turned
    round, returning the worse schedule of the two."""
    schedules = _orders(instance)
    pairs = 0
    for watched, backends_own in itertools.permutations(schedules, 2):
        mine, theirs = objectives(instance, watched)[0], objectives(instance, backends_own)[0]
        fixed = fixed_part(instance)
        if gap_closed(mine, theirs, fixed) and gap_closed(theirs, mine, fixed):
            continue  # a tie: either is right
        backends = _backend(Problem.A, SolveStatus.FEASIBLE, instance, backends_own)
        watch = _Watch(BoundSet.empty(instance), threading.Event())
        watch.schedule(watched, "the warm start")
        result = _with_watched_schedule(backends, watch)
        if mine < theirs:
            assert result.schedule is watched and result.objective == mine
            assert result.status is SolveStatus.FEASIBLE
            assert any("the warm start is returned" in note for note in result.notes)
        else:
            assert result is backends
        pairs += 1
    assert pairs >= 2
