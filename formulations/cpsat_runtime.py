"""What every CP-SAT model of the project shares: settings in, an answer out.

Both CP-SAT backends, the slotted one (:mod:`ddlsched.formulations.cpsat`) and the
continuous-time one (:mod:`ddlsched.formulations.continuous`), build their own model in a
child interpreter and meet OR-Tools through the same few steps, kept here so each has one
home:

- :func:`deadline`: the ``time.monotonic()`` at which a call must end, fixed when it
  begins;
- :func:`integer_weights`: the jobs' weights scaled exactly to CP-SAT's integer objective
  coefficients;
- :func:`set_parameters`: the exact-method settings translated into CP-SAT's parameters
  (the one place);
- :func:`checked_status`: CP-SAT's status name, read before any value, ``OPTIMAL`` only
  when the bound meets the objective;
- :class:`Answer` and :func:`isolated_answer`: what a child returns, and the child run in
  a reused fresh interpreter (:func:`ddlsched.formulations.isolation.run_isolated`; the
  reason is in :mod:`ddlsched.formulations.cpsat`), a crash turned into an ``ERROR``
  answer.

OR-Tools itself is imported only inside the children, never here.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, TypeVar

from ddlsched.formulations.isolation import Cancelled, Report, ReportHandler, run_isolated

from ddlsched.core.params import ExactParams

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import CpSolver

Task = TypeVar("Task")
"""The plain data a backend's child builds its model from (each backend has its own)."""


@dataclass(frozen=True)
class Answer:
    """What a CP-SAT child returns.

    Attributes
    ----------
    status
        CP-SAT's status name (:func:`checked_status`), or ``ERROR (child: ...)``.
    plan
        The model's solution in the backend's own terms (a ``(mode, start)`` per job, or
        the slots of problem A2), or ``None`` without one.
    bound
        CP-SAT's best objective bound, in its objective units (``nan`` without one).
    """

    status: str
    plan: list[tuple[int, int]] | None
    bound: float


def integer_weights(ids: Sequence[str], weights: Sequence[float]) -> list[int]:
    """The weights scaled by one factor to integers, exactly.

    Parameters
    ----------
    ids
        The jobs' ids, to name a job whose weight cannot be scaled.
    weights
        ``w_i``, one per job.

    Returns
    -------
    list[int]
        ``w_i`` times the least common multiple of their denominators.

    Raises
    ------
    ValueError
        For a weight that is not a ratio of integers with a denominator of at most 1000.
    """
    fractions = [Fraction(weight).limit_denominator(1000) for weight in weights]
    for job_id, weight, fraction in zip(ids, weights, fractions, strict=True):
        if not math.isclose(float(fraction), weight, rel_tol=1e-12):
            raise ValueError(
                f"job {job_id!r}: weight {weight!r} is not a ratio of small integers; "
                "CP-SAT needs integer objective coefficients (use the milp method)"
            )
    scale = math.lcm(*(f.denominator for f in fractions))
    return [int(f * scale) for f in fractions]


def deadline(params: ExactParams) -> float:
    """``time.monotonic()`` at which the call must end (``inf`` without a time limit)."""
    limit = params.time_limit
    return math.inf if limit is None else time.monotonic() + limit


def set_parameters(solver: CpSolver, options: ExactParams, seed: int, ends: float) -> None:
    """Translate the exact-method settings into CP-SAT's parameters (the one place).

    ``ends`` is a ``time.monotonic()`` value (one clock for every process of the
    machine): the search gets what is left of the limit once the child has started and
    built its model (both took 0.6-0.8 s of a 2 s limit, which the search then overran).

    Parameters
    ----------
    solver
        A ``cp_model.CpSolver``, whose ``parameters`` are set.
    options
        The time limit, deterministic limit, threads, gap and verbosity.
    seed
        CP-SAT's ``random_seed``.
    ends
        :func:`deadline`'s value for the call.
    """
    params = solver.parameters
    if options.time_limit is not None:
        params.max_time_in_seconds = max(0.01, ends - time.monotonic())
    if options.deterministic_limit is not None:
        params.max_deterministic_time = options.deterministic_limit
    params.num_workers = options.threads or 1
    params.random_seed = seed
    params.relative_gap_limit = options.mip_gap
    params.log_search_progress = options.verbose


def checked_status(solver: CpSolver, code: int) -> str:
    """CP-SAT's status name, ``OPTIMAL`` only when its bound meets its objective.

    CP-SAT also says ``OPTIMAL`` when it stops at ``relative_gap_limit`` (a
    ``mip_gap`` above zero); the objective is integral, so the gap is closed
    exactly when the bound equals it.

    Parameters
    ----------
    solver
        The ``cp_model.CpSolver`` that returned ``code``.
    code
        The status code ``solver.Solve`` returned.
    """
    name: str = solver.StatusName(code)
    if name == "OPTIMAL" and solver.ObjectiveValue() > solver.BestObjectiveBound() + 0.5:
        return "FEASIBLE"
    return name


def isolated_answer(
    solver: Callable[[Task], Answer],
    task: Task,
    cancel: threading.Event | None,
    on_report: ReportHandler[Report] | None = None,
) -> Answer:
    """``solver(task)`` in a reused fresh interpreter (every CP-SAT model of the project);
    a child that crashed or raised becomes an ``ERROR`` answer, a cancel stays one.

    Raises
    ------
    Cancelled
        When ``cancel`` is set while the child runs.
    """
    try:
        return run_isolated(solver, task, cancel=cancel, reuse=True, on_report=on_report)
    except Cancelled:
        raise
    except Exception as error:  # the child crashed or raised: reported as a status
        return Answer(f"ERROR (child: {type(error).__name__}: {error})", None, math.nan)
