"""The status contract of every exact door, against the verifier and the brute force.

Every problem (A, A1, A2) x exact method (``exact``, ``milp``, ``cpsat``) x warm start
(none; the other problems' optima; another instance's schedule; an infeasible one; one
missing a job) on four tiny instance families: weighted, typed (a V100 and a K80
server), batch arrivals and spread arrivals. The contract:

- ``optimal`` means the verifier accepts the schedule as one of the problem solved and
  its objective is the brute-force optimum; ``feasible`` means a verified schedule no
  better than the optimum;
- a warm start that is not a schedule of the problem solved is refused, with one line
  naming why and the problem it does fit; never solved from, never a proof;
- no result reports an objective below its bound (a ratio to its bound under 1).

The seeds are ones where the relaxation A2's optimum lies below the best fast lower
bound on ``OPT(A)`` (weighted, batch, spread): a schedule of A2 taken as one of A there
"proves" an objective no schedule of A reaches. Only deterministic limits stop the
solvers (the time limit is a safety net far above what they need).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from ddlsched.formulations.certify import BoundSet
from ddlsched.proofs_checks.verifier import verify

from ddlsched import solve
from ddlsched.core.generators import generate
from ddlsched.core.model import InputError, Instance, Problem, Schedule
from ddlsched.core.params import ExactParams
from ddlsched.core.result import ContradictionError, LowerBound, Result, SolveStatus
from tests.oracles import brute_force_a, brute_force_a1, brute_force_a2
from tests.strategies import TINY_INTEGRAL

LIMITS = ExactParams(time_limit=600, threads=1, node_limit=20_000, deterministic_limit=20.0)
"""Deterministic limits far above what 3-4 jobs on 2 x 2 GPUs need."""

TOLERANCE = 1e-6


def _weighted() -> Instance:
    instance = generate(TINY_INTEGRAL.replace(num_jobs=3), 1)
    return instance.replace(
        jobs=tuple(j.replace(weight=1.0 + (k % 2)) for k, j in enumerate(instance.jobs))
    )


FAMILIES: dict[str, Callable[[], Instance]] = {
    "weighted": _weighted,
    "typed": lambda: generate(
        TINY_INTEGRAL.replace(num_jobs=3, gpu_types=(("v100", 1), ("k80", 1))), 1
    ),
    "batch": lambda: generate(TINY_INTEGRAL, 2),
    "spread": lambda: generate(TINY_INTEGRAL.replace(load=1.0), 1),
}
OTHER_FAMILY = {"weighted": "typed", "typed": "batch", "batch": "spread", "spread": "weighted"}
ORACLES = {Problem.A: brute_force_a, Problem.A1: brute_force_a1, Problem.A2: brute_force_a2}
METHODS = ("exact", "milp", "cpsat")


@functools.cache
def _instance(family: str) -> Instance:
    return FAMILIES[family]()


@functools.cache
def _optimum(family: str, problem: Problem) -> float:
    return ORACLES[problem](_instance(family))


@functools.cache
def _optimal_schedule(family: str, problem: Problem) -> Schedule:
    """An optimal schedule of ``problem`` (CP-SAT's, checked against the oracle here)."""
    from ddlsched.formulations.cpsat import solve_cpsat

    instance = _instance(family)
    result = solve_cpsat(instance, problem, LIMITS)
    assert result.proven_optimal and result.schedule is not None
    assert verify(instance, result.schedule).feasible
    assert result.objective == pytest.approx(_optimum(family, problem))
    return result.schedule


def _assert_contract(family: str, problem: Problem, result: Result) -> None:
    """The status contract (module docstring) for one result."""
    instance, optimum = _instance(family), _optimum(family, problem)
    if result.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
        assert result.schedule is not None and result.schedule.problem is problem
        report = verify(instance, result.schedule)
        assert report.feasible, report.violations
        assert report.total_completion_time == pytest.approx(result.objective)
        assert result.objective >= optimum * (1 - TOLERANCE)
    if result.proven_optimal:
        assert result.objective == pytest.approx(optimum), result.notes
    slack = TOLERANCE * max(1.0, abs(result.objective))
    if math.isfinite(result.best_bound):
        assert result.best_bound <= optimum + slack, result.notes
        assert result.objective >= result.best_bound - slack
    if result.lower_bound is not None and result.lower_bound.valid:
        assert result.lower_bound.ratio(result.objective) >= 1 - TOLERANCE
    if math.isfinite(result.flow_ratio):
        assert result.flow_ratio >= 1 - TOLERANCE


def _infeasible(schedule: Schedule) -> Schedule:
    """``schedule`` with its first job's work one second too long (an end that is not its
    start plus its duration; for A2, pieces that process more than its size)."""
    first, *rest = schedule.jobs
    if first.pieces:
        *pieces, last = first.pieces
        longer = (*pieces, last._replace(end=last.end + 1.0))
        first = dataclasses.replace(first, pieces=longer, end=longer[-1].end)
    else:
        assert first.end is not None
        first = dataclasses.replace(first, end=first.end + 1.0)
    return dataclasses.replace(schedule, jobs=(first, *rest))


def _truncated(schedule: Schedule) -> Schedule:
    """``schedule`` without its last job."""
    return dataclasses.replace(schedule, jobs=schedule.jobs[:-1])


CASES = [(f, p, m) for f in FAMILIES for p in Problem for m in METHODS]
IDS = [f"{f}-{p.value}-{m}" for f, p, m in CASES]


@pytest.mark.parametrize(("family", "problem", "method"), CASES, ids=IDS)
def test_without_a_warm_start_optimal_is_the_verified_optimum(
    family: str, problem: Problem, method: str
) -> None:
    """Without a warm start of the caller's (problem A: the online start), every method's
    result keeps the contract: a verified schedule of the problem, ``optimal`` only at the
    brute-force optimum, no bound above it. Catches: a backend or the portfolio that calls
    a wrong objective optimal, a schedule of another problem returned, or a bound above
    the optimum (a ratio to the bound under 1)."""
    result = solve(_instance(family), method, problem=problem, params=LIMITS)
    _assert_contract(family, problem, result)
    assert result.proven_optimal, result.notes  # these instances are proven within the limits


@pytest.mark.parametrize(("family", "problem", "method"), CASES, ids=IDS)
def test_a_warm_start_of_another_problem_is_refused(
    family: str, problem: Problem, method: str
) -> None:
    """The other problems' optima, and this problem's optimum made infeasible or missing
    a job, are refused as warm starts through the front door: an ``InputError`` of one
    line naming the problem solved, the first violation, and the problem the schedule
    does fit. Catches: the portfolio's proof-by-bound taking A2's optimum (below every
    bound on OPT(A)) as a schedule of A and calling it optimal; a backend solving from a
    schedule it should refuse; a refusal that does not say why."""
    instance = _instance(family)
    own = _optimal_schedule(family, problem)
    offers = {
        other.value: _optimal_schedule(family, other) for other in Problem if other != problem
    }
    offers["infeasible"] = _infeasible(own)
    offers["truncated"] = _truncated(own)
    for kind, start in offers.items():
        with pytest.raises(InputError) as refused:
            solve(instance, method, problem=problem, params=LIMITS, warm_start=start)
        message = str(refused.value)
        assert "\n" not in message
        assert message.startswith(f"the warm start is not a schedule of problem {problem.value}: ")
        if kind in ("A", "A1", "A2"):
            assert f"it is feasible for problem {kind}" in message, message
        elif kind == "truncated":
            assert f"job {own.jobs[-1].id!r}: not scheduled" in message
            assert "it is a schedule of no problem" in message


@pytest.mark.parametrize("problem", list(Problem), ids=[p.value for p in Problem])
@pytest.mark.parametrize("method", METHODS)
def test_another_instances_schedule_is_refused_or_solved_correctly(
    problem: Problem, method: str
) -> None:
    """Another instance's optimum (same job names, other durations) as the warm start:
    refused with the clear error if the verifier rejects it, else the result keeps the
    contract. Catches: a warm start checked by its job names only, its own objective
    (computed from its own ends) then standing for a schedule of this instance."""
    for family in ("batch", "spread"):
        start = _optimal_schedule(OTHER_FAMILY[family], problem)
        try:
            result = solve(
                _instance(family), method, problem=problem, params=LIMITS, warm_start=start
            )
        except InputError as refused:
            assert str(refused).startswith("the warm start is not a schedule of problem")
            continue
        _assert_contract(family, problem, result)


@pytest.mark.parametrize("method", METHODS)
def test_its_own_optimum_is_accepted_as_warm_start(method: str) -> None:
    """The problem's own optimum is a warm start every method accepts, and the result is
    that optimum. Catches: a check so strict that it refuses the schedules the methods
    write themselves (ends recomputed, labels, pieces)."""
    for problem in Problem:
        start = _optimal_schedule("spread", problem)
        result = solve(
            _instance("spread"), method, problem=problem, params=LIMITS, warm_start=start
        )
        _assert_contract("spread", problem, result)
        assert result.proven_optimal


def test_the_command_line_refuses_a_schedule_of_a2_for_problem_a(tmp_path: Path) -> None:
    """``ddlsched solve small.json --problem A --warm-start a2.json`` with ``a2.json``
    A2's optimum: exit 2, one line on stderr naming problem A2 as the one it fits, and
    nothing on stdout. Catches: the command answering ``optimal`` with A2's objective, below
    its own bound on OPT(A) and below the optimum of A (a ratio to the bound under 1)."""
    import contextlib
    import io

    from ddlsched.cli import main
    from ddlsched.core.io import write_instance, write_schedule

    instance_path, start_path = tmp_path / "small.json", tmp_path / "a2.json"
    write_instance(_instance("spread"), instance_path)
    write_schedule(_optimal_schedule("spread", Problem.A2), start_path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["solve", str(instance_path), "--warm-start", str(start_path)])
    assert code == 2 and out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and "not a schedule of problem A:" in lines[0]
    assert "it is feasible for problem A2" in lines[0]


def test_the_watch_drops_a_schedule_of_another_problem() -> None:
    """An A2 optimum offered to the portfolio's watch as an incumbent of A (as a backend
    or the pooled bound's search would report it), even relabelled as a schedule of A,
    is dropped: never the best, never a proof, named in the notes; A's optimum then
    meets the bound. Catches: internal incumbents taken unchecked, which lend a proof
    to an objective below OPT(A)."""
    from ddlsched.formulations.portfolio import _Watch

    instance = _instance("spread")
    known = BoundSet.of(instance)
    bound = known.best()
    a2 = _optimal_schedule("spread", Problem.A2)
    assert bound is not None and _optimum("spread", Problem.A2) < bound.value
    watch = _Watch(known, threading.Event(), True, Problem.A)
    for offered in (a2, dataclasses.replace(a2, problem=Problem.A)):
        assert not watch.schedule(offered, "a CP-SAT incumbent")
    assert watch.best is None and watch.proof is None and not watch.cancel.is_set()
    assert len(watch.refusal_notes()) == 2
    assert all("feasible for problem A2" in note for note in watch.refusal_notes())
    assert watch.schedule(_optimal_schedule("spread", Problem.A), "a MILP incumbent")
    assert watch.objective == pytest.approx(_optimum("spread", Problem.A))


def test_a_backend_result_with_a_schedule_of_another_problem_is_dropped() -> None:
    """A backend's result whose schedule is not one of the problem solved becomes a
    failure before the results are combined (its schedule never returned, its bound and
    its status never part of a proof), and a certified bound never promotes it. Catches:
    ``_combine`` or ``certify`` trusting a backend's schedule unchecked."""
    from ddlsched.formulations.admission import InadmissibleSchedule
    from ddlsched.formulations.certify import RawAnswer, certify
    from ddlsched.formulations.portfolio import _admitted, _combine

    instance = _instance("spread")
    good = _optimal_schedule("spread", Problem.A)
    wrong = dataclasses.replace(_optimal_schedule("spread", Problem.A2), problem=Problem.A)
    optimum = _optimum("spread", Problem.A)

    def result(name: str, schedule: Schedule, objective: float) -> Result:
        status = SolveStatus.OPTIMAL
        return Result(name, Problem.A, status, objective, objective, objective, 1.0, schedule)

    low = _optimum("spread", Problem.A2)
    outcomes, first = _admitted(
        BoundSet.empty(instance),
        Problem.A,
        {"cpsat": result("cpsat", wrong, low), "milp": result("milp", good, optimum)},
        ["cpsat"],
    )
    assert isinstance(outcomes["cpsat"], InadmissibleSchedule) and first == []
    combined = _combine(outcomes, first, 1.0)
    assert combined.objective == pytest.approx(optimum) and combined.schedule == good
    assert any("cpsat failed: InadmissibleSchedule" in note for note in combined.notes)
    feasible = dataclasses.replace(result("cpsat", wrong, low), status=SolveStatus.FEASIBLE)
    with pytest.raises(InadmissibleSchedule, match="feasible for problem A2"):
        certify(
            RawAnswer.of(dataclasses.replace(feasible, best_bound=math.nan)),
            BoundSet.of(instance),
        )


@pytest.mark.parametrize(
    ("objective", "total_jct", "best_bound", "lower", "contradiction"),
    [
        (18.25, 18.25, 19.1126, None, "below best_bound 19.1126"),  # the original report
        (18.25, 18.25, math.nan, LowerBound(19.1126, "lagrangian", True), "lagrangian"),
        (20.0, 10.0, math.nan, LowerBound(15.0, "lp", True, flow_value=11.0), "flow"),
        (20.0, 20.0, 20.0 * (1 + 1e-7), None, None),  # rounding: within the tolerance
        (18.25, 18.25, math.nan, LowerBound(19.1126, "lp", False), None),  # invalid: no claim
    ],
)
def test_a_contradiction_is_an_internal_error(
    objective: float,
    total_jct: float,
    best_bound: float,
    lower: LowerBound | None,
    contradiction: str | None,
) -> None:
    """A result whose objective lies below its best bound or its valid lower bound, or
    whose flow time lies below its flow bound, cannot be built (nor copied with
    ``dataclasses.replace``): a ``ContradictionError`` naming both values, whatever the
    status. Rounding within 1e-6 and invalid bounds are no contradiction. Catches: a
    negative gap clamped to 0 and reported ``optimal``, a ratio to the bound under 1."""
    fine = Result("exact", Problem.A, SolveStatus.FEASIBLE, 30.0, 30.0, math.nan, 1.0, None)

    def copied(status: SolveStatus) -> Result:
        return dataclasses.replace(
            fine,
            status=status,
            objective=objective,
            total_jct=total_jct,
            best_bound=best_bound,
            lower_bound=lower,
        )

    for status in SolveStatus:
        if contradiction is None:
            assert not copied(status).gap < 0
            continue
        with pytest.raises(ContradictionError, match=contradiction) as raised:
            copied(status)
        assert "a contradiction" in str(raised.value)
    if contradiction is not None:
        with pytest.raises(ContradictionError):
            Result(
                "exact",
                Problem.A,
                SolveStatus.OPTIMAL,
                objective,
                total_jct,
                best_bound,
                1.0,
                None,
                lower_bound=lower,
            )


def test_a_contradiction_exits_3_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A method whose result would be a contradiction ends ``ddlsched solve`` with an
    internal error (exit 3, one line naming both values), never with a status. Catches:
    the contradiction reported as a user's error (exit 2) or as a result (exit 0)."""
    import contextlib
    import io

    import ddlsched.api
    from ddlsched.cli import main
    from ddlsched.core.io import write_instance

    def contradicting(*_: object, **__: object) -> Result:
        return Result("exact", Problem.A, SolveStatus.OPTIMAL, 18.25, 18.25, 19.1126, 0.0, None)

    monkeypatch.setattr(ddlsched.api, "solve", contradicting)
    path = tmp_path / "small.json"
    write_instance(_instance("spread"), path)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["solve", str(path)])
    assert code == 3
    assert "ContradictionError" in err.getvalue() and "19.1126" in err.getvalue()


@pytest.mark.parametrize("policy", ["asrpt", "las", "fifo"])
def test_online_results_never_beat_their_bound(policy: str) -> None:
    """The online policies' results pass the same check (the ``Result`` they return with
    the fast lower bound): never a ratio to their bound under 1, never below OPT(A).
    Catches: a bound on OPT(A) attached to a schedule it does not bound."""
    from ddlsched import simulate

    for family in FAMILIES:
        result = simulate(_instance(family), policy)
        assert result.lower_bound is not None
        assert result.lower_bound.ratio(result.objective) >= 1 - TOLERANCE
        if policy != "las":  # LAS preempts: a schedule of preemptive A, below OPT(A) maybe
            assert result.objective >= _optimum(family, Problem.A) * (1 - TOLERANCE)
