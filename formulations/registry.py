"""The names of the exact methods, each bound to a solver.

A solver takes the instance, the :class:`~ddlsched.core.model.Problem`, the
:class:`~ddlsched.core.params.ExactParams` and an optional warm-start
schedule, and returns a :class:`~ddlsched.core.result.Result`. Pyomo and
HiGHS are imported only when a solver runs, so reading the names is cheap.
"""

from __future__ import annotations

from collections.abc import Callable

from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.params import ExactParams
from ddlsched.core.registry import Registry
from ddlsched.core.result import Result

ExactSolver = Callable[[Instance, Problem, ExactParams, Schedule | None], Result]

EXACT_METHODS: Registry[ExactSolver] = Registry("exact method")
"""Every exact method by name."""


@EXACT_METHODS.register(
    "exact", "portfolio: the MILP and CP-SAT raced on two cores, the first proof wins"
)
def _exact(
    instance: Instance, problem: Problem, params: ExactParams, warm_start: Schedule | None
) -> Result:
    from ddlsched.formulations.portfolio import solve_exact

    return solve_exact(instance, problem, params, warm_start=warm_start)


@EXACT_METHODS.register("milp", "time-indexed MILP of problem A, A1 or A2 (Pyomo + HiGHS)")
def _milp(
    instance: Instance, problem: Problem, params: ExactParams, warm_start: Schedule | None
) -> Result:
    from ddlsched.formulations.milp import solve_milp

    return solve_milp(instance, problem, params, warm_start=warm_start)


@EXACT_METHODS.register("cpsat", "problems A and A1 with OR-Tools CP-SAT (intervals, cumulatives)")
def _cpsat(
    instance: Instance, problem: Problem, params: ExactParams, warm_start: Schedule | None
) -> Result:
    from ddlsched.formulations.cpsat import solve_cpsat

    return solve_cpsat(instance, problem, params, warm_start=warm_start)


@EXACT_METHODS.register(
    "cpsat-continuous",
    "problems A and A1 with CP-SAT in continuous time: no slot grid, a rounding bracket",
)
def _cpsat_continuous(
    instance: Instance, problem: Problem, params: ExactParams, warm_start: Schedule | None
) -> Result:
    from ddlsched.formulations.continuous import solve_continuous

    return solve_continuous(instance, problem, params, warm_start=warm_start)
