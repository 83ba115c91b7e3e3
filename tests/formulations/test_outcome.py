"""Status honesty where a backend's answer becomes a result (formulations.outcome), CP-SAT's
reading of its own status, and the portfolio's proof watcher: each input that makes a proof
inexact demotes ``optimal`` on its own, and an invalid bound never proves anything."""

from __future__ import annotations

import math
import threading
from types import SimpleNamespace

import pytest

from ddlsched.core.result import LowerBound, SolveStatus
from formulations.outcome import honest_status

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
    from formulations.cpsat import _status

    assert _status(_solver(101.0, 100.0), 4) == "FEASIBLE"
    assert _status(_solver(100.0, 100.0), 4) == "OPTIMAL"
    assert _status(_solver(100.0, 99.9999999), 4) == "OPTIMAL"


def test_the_portfolio_watch_takes_no_proof_from_an_invalid_bound() -> None:
    """A time-limited LP's value is not a bound: equal to the best schedule's objective it
    must neither stop the race nor be kept; a valid one of the same value does both."""
    from formulations.portfolio import _Watch

    cancel = threading.Event()
    watch = _Watch(SimpleNamespace(), cancel, None)
    watch.best, watch.objective = (object(), "cpsat"), 100.0  # type: ignore[assignment]
    watch.bound(LowerBound(100.0, "lp", False))
    assert not cancel.is_set() and watch.proof is None and watch.bounds == []
    watch.bound(LowerBound(100.0, "lp", True))
    assert cancel.is_set() and watch.proof is not None and watch.proof[2].valid
