"""Solving a Pyomo model with HiGHS: options translated and status checked here.

Every formulation goes through :func:`solve_model`, the one place where
solver options are translated (after the practice of mpi-sppy and PyJobShop)
and where the termination status is checked **before** any value is read.

We use Pyomo's APPSI interface to HiGHS (``pyomo.contrib.appsi.solvers.
Highs``, backed by ``highspy``) because it passes a MIP start to HiGHS
(``setSolution``) from the values set on the model's variables.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import highspy
import pyomo.environ as pyo
from pyomo.contrib.appsi.base import TerminationCondition
from pyomo.contrib.appsi.solvers.highs import Highs

from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus


@dataclass(frozen=True)
class SolveOutcome:
    """What HiGHS reported, with the status already interpreted.

    Attributes
    ----------
    status
        OPTIMAL, FEASIBLE (limit hit with an incumbent), TIME_LIMIT (no
        incumbent), INFEASIBLE or ERROR.
    objective
        The incumbent's objective value, or ``nan``.
    bound
        HiGHS's best bound on the objective, or ``nan``.
    runtime_s
        Seconds in HiGHS.
    message
        HiGHS's termination condition, for notes.
    """

    status: SolveStatus
    objective: float
    bound: float
    runtime_s: float
    message: str

    @property
    def has_solution(self) -> bool:
        """True when variable values were loaded into the model."""
        return self.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)


_INTERRUPTED = {
    getattr(highspy.HighsModelStatus, name)
    for name in ("kInterrupt", "kHighsInterrupt")
    if hasattr(highspy.HighsModelStatus, name)
}

_LIMITS = {
    TerminationCondition.maxTimeLimit,
    TerminationCondition.maxIterations,
    TerminationCondition.objectiveLimit,
    TerminationCondition.interrupted,
}


def solve_model(
    model: pyo.ConcreteModel, options: ExactParams, *, warm_start: bool = False
) -> SolveOutcome:
    """Solve ``model`` with HiGHS and load the solution if there is one.

    Parameters
    ----------
    model
        A linear (mixed-integer) Pyomo model with one active objective.
    options
        Time limit, gap, threads, verbosity.
    warm_start
        Pass the values currently set on the variables to HiGHS as a MIP
        start.
    """
    solver = Highs()
    solver.config.load_solution = False
    solver.config.stream_solver = options.verbose
    solver.config.warmstart = warm_start
    solver.config.mip_gap = options.mip_gap
    if options.time_limit is not None:
        solver.config.time_limit = options.time_limit
    highs_options: dict[str, object] = {"random_seed": 0}
    if options.threads is not None:
        highs_options["threads"] = options.threads
    solver.highs_options = highs_options

    began = time.perf_counter()
    results = solver.solve(model)
    runtime = time.perf_counter() - began
    # HiGHS catches Ctrl-C itself (Pyomo turns on its HandleKeyboardInterrupt)
    # and returns as if nothing happened; APPSI reports "unknown". Give the
    # interrupt back to the caller, so that long runs stop when asked. The
    # raw status is only reachable through APPSI's solver object.
    raw_status = solver._solver_model.getModelStatus()
    if raw_status in _INTERRUPTED:
        raise KeyboardInterrupt
    condition = results.termination_condition
    objective = _number(results.best_feasible_objective)
    bound = _number(results.best_objective_bound)
    if condition == TerminationCondition.optimal:
        status = SolveStatus.OPTIMAL
    elif condition in _LIMITS:
        status = SolveStatus.FEASIBLE if math.isfinite(objective) else SolveStatus.TIME_LIMIT
    elif condition == TerminationCondition.infeasible:
        status = SolveStatus.INFEASIBLE
    else:
        status = SolveStatus.ERROR
    if status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
        solver.load_vars()
    return SolveOutcome(status, objective, bound, runtime, condition.name)


def _number(value: float | None) -> float:
    """A reported value, or ``nan`` when there is none (HiGHS reports a missing bound as -inf)."""
    return math.nan if value is None or not math.isfinite(value) else float(value)
