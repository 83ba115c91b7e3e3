"""Solving a Pyomo model with HiGHS: options translated and status checked here.

Every formulation goes through :func:`solve_model`, the one place where
solver options are translated (after the practice of mpi-sppy and PyJobShop)
and where the termination status is checked **before** any value is read.

We use Pyomo's APPSI interface to HiGHS (``pyomo.contrib.appsi.solvers.
Highs``, backed by ``highspy``) because it passes a MIP start to HiGHS
(``setSolution``) from the values set on the model's variables.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.appsi.base import TerminationCondition
from pyomo.contrib.appsi.solvers.highs import Highs

from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus, gap_closed, whole_objective_gap


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


@dataclass(frozen=True)
class MipHooks:
    """What a caller does while HiGHS runs (HiGHS's MIP callbacks, highspy >= 1.8).

    Values are those of ``variables``, in that order (for the time-indexed
    models: ``x`` in ``INDEX`` order).

    Attributes
    ----------
    variables
        The variables the hooks see and set.
    on_incumbent
        Called with each improving solution's values, its objective and
        HiGHS's bound at that moment (``nan`` before it has one).
    offer
        Called when HiGHS takes a solution from the user, with HiGHS's current
        best objective (``inf`` when it has none); returns values of a better
        feasible solution, or ``None``. HiGHS checks what it is given.
    stop_at
        A ``time.monotonic()`` value at which HiGHS is interrupted (reported
        as the time limit, never as Ctrl-C).
    """

    variables: Sequence[pyo.Var]
    on_incumbent: Callable[[np.ndarray, float, float], None] | None = None
    offer: Callable[[float], np.ndarray | None] | None = None
    stop_at: float | None = None


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
    model: pyo.ConcreteModel,
    options: ExactParams,
    *,
    warm_start: bool = False,
    highs_options: dict[str, object] | None = None,
    hooks: MipHooks | None = None,
    fixed: float = 0.0,
    floor: float = 0.0,
) -> SolveOutcome:
    """Solve ``model`` with HiGHS and load the solution if there is one.

    Parameters
    ----------
    model
        A linear (mixed-integer) Pyomo model with one active objective.
    options
        Time limit, gap, threads, node and solution limits, verbosity.
    warm_start
        Pass the values currently set on the variables to HiGHS as a MIP
        start.
    highs_options
        HiGHS options of the formulation (e.g. presolve off for the
        time-indexed models), set after the translated ones.
    hooks
        Incumbents out, solutions in and a hard stop while HiGHS runs
        (:class:`MipHooks`).
    fixed
        The part of the objective no solution changes (``sum_i w_i r_i`` of a
        scheduling model): the gap is judged on the rest
        (:func:`model_status`), and so are HiGHS's own gaps
        (:func:`highs_gaps`).
    floor
        A lower bound on the rest, ``objective - fixed`` (0 when none is known).
    """
    solver = Highs()
    solver.config.load_solution = False
    solver.config.stream_solver = options.verbose
    solver.config.warmstart = warm_start
    relative, absolute = highs_gaps(options.mip_gap, fixed, floor)
    solver.config.mip_gap = relative
    if options.time_limit is not None:
        solver.config.time_limit = options.time_limit
    translated: dict[str, object] = {"random_seed": 0, "mip_abs_gap": absolute}
    if options.threads is not None:
        translated["threads"] = options.threads
        # HiGHS keeps one thread scheduler per process, sized by the first solve that runs;
        # a later solve asking for another count fails ('the scheduler has already been
        # initialized'). Solves in this process (isolate=False, tests, notebooks) would then
        # depend on what ran before them: reset it to the count asked for.
        highspy.Highs.resetGlobalScheduler(True)
    if options.node_limit is not None:
        translated["mip_max_nodes"] = options.node_limit
    if options.solution_limit is not None:
        translated["mip_max_improving_sols"] = options.solution_limit
    solver.highs_options = {**translated, **(highs_options or {})}

    began = time.perf_counter()
    stopped: list[bool] = []
    if hooks is not None:
        solver.set_instance(model)  # the HiGHS object the hooks attach to; solve() reuses it
        _attach(solver, hooks, stopped)
    with _quiet_when(stopped):
        results = solver.solve(model)
    runtime = time.perf_counter() - began
    # HiGHS catches Ctrl-C itself (Pyomo turns on its HandleKeyboardInterrupt)
    # and returns as if nothing happened; APPSI reports "unknown". Give the
    # interrupt back to the caller, so that long runs stop when asked. The
    # raw status is only reachable through APPSI's solver object.
    raw_status = solver._solver_model.getModelStatus()
    if raw_status in _INTERRUPTED and not stopped:
        raise KeyboardInterrupt
    condition = results.termination_condition
    objective = _number(results.best_feasible_objective)
    bound = _number(results.best_objective_bound)
    if stopped and condition != TerminationCondition.optimal:
        # The hard stop is the time limit. APPSI reports HiGHS's "interrupt" status as
        # unknown and gives no incumbent: read it from HiGHS itself.
        condition = TerminationCondition.maxTimeLimit
        objective, bound = _read_interrupted(solver)
    if condition == TerminationCondition.optimal:  # or stopped at a gap of mip_gap
        status = model_status(objective, bound, fixed)
    elif condition in _LIMITS:
        status = SolveStatus.FEASIBLE if math.isfinite(objective) else SolveStatus.TIME_LIMIT
    elif condition == TerminationCondition.infeasible:
        status = SolveStatus.INFEASIBLE
    else:
        status = SolveStatus.ERROR
    if status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE) and not stopped:
        solver.load_vars()
    return SolveOutcome(status, objective, bound, runtime, condition.name)


def model_status(objective: float, bound: float, fixed: float) -> SolveStatus:
    """The status of a model HiGHS reports solved: ``optimal`` when its own bound closes its
    own gap (:func:`~ddlsched.core.result.gap_closed` on the model's numbers, ``fixed`` the
    part of its objective no solution changes), ``feasible`` when it stopped at a larger
    ``mip_gap``. A model's word only: the mapping MILP's proven mappings rest on it, and a
    scheduling model's answer is certified for the instance by
    :func:`ddlsched.formulations.certify.certify`."""
    return SolveStatus.OPTIMAL if gap_closed(objective, bound, fixed) else SolveStatus.FEASIBLE


def highs_gaps(mip_gap: float, fixed: float, floor: float) -> tuple[float, float]:
    """HiGHS's relative and absolute MIP gaps for a gap of ``mip_gap`` on ``objective -
    fixed``, given ``floor <= objective - fixed``.

    HiGHS stops when ``objective - bound`` is within ``mip_rel_gap * |objective|`` or
    ``mip_abs_gap``. Both are set so that either stop leaves at most ``mip_gap *
    (objective - fixed)``: the absolute gap is ``mip_gap * floor`` (its default, 1e-6,
    would close every gap of a model whose objective is below 1e-6), and the relative one
    :func:`~ddlsched.core.result.whole_objective_gap`'s.
    """
    return whole_objective_gap(mip_gap, fixed, floor), mip_gap * floor


_FEASIBLE_SOLUTION = 2  # HiGHS's kSolutionStatusFeasible


def _read_interrupted(solver: Highs) -> tuple[float, float]:
    """Objective and bound of an interrupted HiGHS, with its incumbent's values loaded into the
    model's variables (``nan`` objective, nothing loaded, when it has none)."""
    highs = solver._solver_model
    info = highs.getInfo()
    bound = _number(info.mip_dual_bound)
    if int(info.primal_solution_status) != _FEASIBLE_SOLUTION:
        return math.nan, bound
    values = highs.getSolution().col_value
    for var_id, column in solver._pyomo_var_to_solver_var_map.items():
        solver._vars[var_id][0].set_value(values[column], skip_validation=True)
    return _number(info.objective_function_value), bound


@contextlib.contextmanager
def _quiet_when(stopped: list[bool]) -> Iterator[None]:
    """Drop APPSI's warning about HiGHS's "interrupt" status when our hard stop caused it."""
    log = logging.getLogger("pyomo.contrib.appsi.solvers.highs")

    def keep(record: logging.LogRecord) -> bool:
        return not (stopped and "kInterrupt" in record.getMessage())

    log.addFilter(keep)
    try:
        yield
    finally:
        log.removeFilter(keep)


def _attach(solver: Highs, hooks: MipHooks, stopped: list[bool]) -> None:
    """Subscribe the hooks to the HiGHS object of ``solver`` (after ``set_instance``)."""
    highs = solver._solver_model
    columns = np.fromiter(
        (solver._pyomo_var_to_solver_var_map[id(var)] for var in hooks.variables),
        dtype=np.int64,
        count=len(hooks.variables),
    )
    width = highs.getNumCol()
    if hooks.on_incumbent is not None:
        on_incumbent = hooks.on_incumbent

        def improving(event: highspy.highs.HighsCallbackEvent) -> None:
            out = event.data_out
            values = np.asarray(out.mip_solution)[columns]
            bound = _number(out.mip_dual_bound)
            on_incumbent(values, float(out.objective_function_value), bound)

        highs.cbMipImprovingSolution.subscribe(improving)
    if hooks.offer is not None:
        offer = hooks.offer

        def user_solution(event: highspy.highs.HighsCallbackEvent) -> None:
            values = offer(float(event.data_out.mip_primal_bound))
            if values is not None and event.data_in is not None:
                full = np.zeros(width)
                full[columns] = values
                event.data_in.setSolution(full)

        highs.cbMipUserSolution.subscribe(user_solution)
    if hooks.stop_at is not None:
        stop_at = hooks.stop_at

        def interrupt(event: highspy.highs.HighsCallbackEvent) -> None:
            if time.monotonic() > stop_at:
                stopped.append(True)
                event.interrupt()

        highs.cbMipInterrupt.subscribe(interrupt)
        highs.cbSimplexInterrupt.subscribe(interrupt)


def _number(value: float | None) -> float:
    """A reported value, or ``nan`` when there is none (HiGHS reports a missing bound as -inf)."""
    return math.nan if value is None or not math.isfinite(value) else float(value)
