"""``Result``: its one-line repr and its gap."""

from __future__ import annotations

import math

from ddlsched.core.model import Problem
from ddlsched.core.result import Result, SolveStatus


def _result(objective: float, bound: float, status: SolveStatus) -> Result:
    return Result("cpsat", Problem.A, status, objective, objective - 1.0, bound, 1.2345, None)


def test_repr_is_one_short_line_with_what_a_reader_checks_first() -> None:
    """A notebook shows a result as one line: method, problem, status, objective, bound,
    gap and time; never the schedule (a 1.7k-character dump before)."""
    shown = repr(_result(200.0, 150.0, SolveStatus.FEASIBLE))
    assert shown == (
        "Result('cpsat', problem A, feasible, objective=200, bound=150, gap=25.00%, 1.23 s)"
    )
    assert "\n" not in shown and len(shown) < 120


def test_repr_leaves_out_an_unknown_bound_and_gap() -> None:
    """Without a bound the repr says nothing of one (not 'bound=nan, gap=nan%')."""
    shown = repr(_result(200.0, math.nan, SolveStatus.FEASIBLE))
    assert "bound" not in shown and "gap" not in shown and "objective=200" in shown


def test_gap_is_relative_to_the_objective_and_never_negative() -> None:
    """(objective - bound) / objective; a bound above the objective (rounding) gives 0."""
    assert _result(200.0, 150.0, SolveStatus.FEASIBLE).gap == 0.25
    assert _result(200.0, 200.0000001, SolveStatus.OPTIMAL).gap == 0.0
    assert math.isnan(_result(math.nan, 150.0, SolveStatus.ERROR).gap)
