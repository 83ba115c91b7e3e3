"""Status honesty where a backend's answer becomes a result (ddlsched.formulations.certify),
CP-SAT's
reading of its own status, and the portfolio's proof watcher: each input that makes a proof
inexact demotes ``optimal`` on its own, and an invalid bound never proves anything."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import pytest
from ddlsched.formulations.certify import BoundSet, honest_status

from ddlsched.core.result import LowerBound, SolveStatus

INEXACT = {
    "not integral": {"integral": False},
    "unproven modes": {"unproven": ("j1",)},
    "modes cut short": {"unenumerated": ("j2",)},
}


@pytest.mark.parametrize("cause", list(INEXACT))
def test_each_inexact_input_alone_demotes_optimal_and_withdraws_the_bound(cause: str) -> None:
    """A slotted optimum is the instance's only on an integral instance with every mode
    enumerated and proven: any one of the three missing is enough to say ``feasible``,
    with no bound and a note naming it (a gate that tested only some of them passed
    every test where the causes came together)."""
    inputs = {"integral": True, "unproven": (), "unenumerated": ()} | INEXACT[cause]
    status, bound, notes = honest_status(
        SolveStatus.OPTIMAL, 100.0, inputs["integral"], inputs["unproven"], inputs["unenumerated"]
    )
    assert status is SolveStatus.FEASIBLE and math.isnan(bound) and len(notes) == 1


def test_an_exact_input_keeps_the_solvers_status_and_bound() -> None:
    status, bound, notes = honest_status(SolveStatus.OPTIMAL, 100.0, True, (), ())
    assert (status, bound, notes) == (SolveStatus.OPTIMAL, 100.0, [])
    status, bound, _ = honest_status(SolveStatus.TIME_LIMIT, 90.0, True, (), ())
    assert (status, bound) == (SolveStatus.TIME_LIMIT, 90.0)


def _solver(objective: float, bound: float) -> SimpleNamespace:
    return SimpleNamespace(
        StatusName=lambda code: "OPTIMAL",
        ObjectiveValue=lambda: objective,
        BestObjectiveBound=lambda: bound,
    )


def test_cpsat_optimal_at_a_gap_of_one_unit_is_only_feasible() -> None:
    """CP-SAT says OPTIMAL when it stops at its relative gap limit; its objective is
    integral, so one unit between objective and bound is an open gap."""
    from ddlsched.formulations.cpsat_runtime import checked_status

    assert checked_status(_solver(101.0, 100.0), 4) == "FEASIBLE"
    assert checked_status(_solver(100.0, 100.0), 4) == "OPTIMAL"
    assert checked_status(_solver(100.0, 99.9999999), 4) == "OPTIMAL"


def test_the_portfolio_watch_takes_no_proof_from_an_invalid_bound() -> None:
    """A time-limited LP's value is not a bound: equal to the best schedule's objective it
    must neither stop the race nor be kept; a valid one of the same value does both."""
    from ddlsched.formulations.portfolio import _Watch

    cancel = threading.Event()
    watch = _Watch(BoundSet(SimpleNamespace(jobs=())), cancel)  # type: ignore[arg-type]
    watch.best, watch.objective = (object(), "cpsat"), 100.0  # type: ignore[assignment]
    watch.bound(LowerBound(100.0, "lp", False))
    assert not cancel.is_set() and watch.proof is None and watch.bounds.bounds == ()
    watch.bound(LowerBound(100.0, "lp", True))
    assert cancel.is_set() and watch.proof is not None and watch.proof[2].valid


def test_the_portfolio_watch_proves_with_its_strongest_bound() -> None:
    """Catches the watch comparing its weakest bound with the best schedule (``min`` for
    ``max``): a combinatorial bound 1 is known, then a valid LP bound 100 arrives equal to
    the best schedule's objective 100: the gap is closed, the race stops and the proof
    names the LP bound."""
    from ddlsched.formulations.portfolio import _Watch

    cancel = threading.Event()
    watch = _Watch(BoundSet(SimpleNamespace(jobs=())), cancel)  # type: ignore[arg-type]
    watch.best, watch.objective = (object(), "cpsat"), 100.0  # type: ignore[assignment]
    watch.bound(LowerBound(1.0, "combinatorial", True))
    assert not cancel.is_set() and watch.proof is None
    watch.bound(LowerBound(100.0, "lp", True))
    assert cancel.is_set() and watch.proof is not None and watch.proof[2].name == "lp"


@pytest.mark.parametrize(
    ("status", "objective"),
    [(SolveStatus.TIME_LIMIT, 7.0), (SolveStatus.ERROR, math.nan), (SolveStatus.FEASIBLE, 7.0)],
)
def test_a_watched_schedule_better_than_the_backends_is_returned_feasible(
    status: SolveStatus, objective: float
) -> None:
    """Catches the portfolio returning a better schedule it watched (the warm start, the
    pooled search's) under the backends' status, or dropping it: on one GPU, a job of 1 s
    released at 0.5 and one of 3 s released at 0; the backends' answer runs the long one
    first (objective 3 + 4 = 7, or no answer at all), the watched schedule the short one
    first (1.5 + 4.5 = 6, flow time 1 + 4.5 = 5.5). The result is the watched schedule,
    ``feasible`` (no proof met it), objective 6 and total JCT 5.5; a watched schedule no
    better (7) leaves the result as it was, and so does an ``optimal`` result."""
    import dataclasses

    from ddlsched.formulations.portfolio import _Watch, _with_watched_schedule

    from ddlsched.core.model import Cluster, Instance, Job, Problem, Schedule, ScheduledJob
    from ddlsched.core.result import Result

    instance = Instance(
        Cluster((1,), 1.0, 1.0), (Job("s", 0.5, 1, 1.0, 1), Job("l", 0.0, 3, 1.0, 1))
    )
    short_first = Schedule((ScheduledJob("s", 0.5, 1.5, (0,)), ScheduledJob("l", 1.5, 4.5, (0,))))
    long_first = Schedule((ScheduledJob("l", 0.0, 3.0, (0,)), ScheduledJob("s", 3.0, 4.0, (0,))))
    backends = Result(
        method="exact",
        problem=Problem.A,
        status=status,
        objective=objective,
        total_jct=objective - 0.5,
        best_bound=math.nan,
        runtime_s=1.0,
        schedule=None if math.isnan(objective) else long_first,
    )
    watch = _Watch(BoundSet.empty(instance), threading.Event())
    watch.schedule(short_first, "the warm start")
    result = _with_watched_schedule(backends, watch)
    assert result.status is SolveStatus.FEASIBLE
    assert result.schedule is short_first
    assert result.objective == 6.0 and result.total_jct == 5.5
    assert any("the warm start is returned" in note for note in result.notes)

    if not math.isnan(objective):
        no_better = _Watch(BoundSet.empty(instance), threading.Event())
        no_better.schedule(long_first, "the warm start")
        assert _with_watched_schedule(backends, no_better) is backends
    proven = dataclasses.replace(backends, status=SolveStatus.OPTIMAL)
    assert _with_watched_schedule(proven, watch) is proven
