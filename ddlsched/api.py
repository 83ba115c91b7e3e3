"""The façades: one ``solve`` for every method, one ``simulate`` for traces.

Like :mod:`ddlsched.cli`, this module sits on top of every layer and imports
``formulations`` and ``algorithms`` lazily, inside the call that needs them,
so that importing :mod:`ddlsched` never pays for Pyomo.
"""

from __future__ import annotations

from ddlsched.model import Instance, Schedule
from ddlsched.result import Result

EXACT_METHODS = ("milp",)
ONLINE_METHODS = ("asrpt", "asrpt-greedy", "fifo", "sjf", "srpt-naive", "las")
METHODS = EXACT_METHODS + ONLINE_METHODS


def solve(
    instance: Instance,
    method: str = "milp",
    *,
    problem: str = "A",
    time_limit: float | None = 60.0,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    warm_start: Schedule | None = None,
    seed: int = 0,
    predictor: str = "oracle",
    verbose: bool = False,
) -> Result:
    """Schedule ``instance`` with ``method``.

    Parameters
    ----------
    instance
        The instance.
    method
        ``"milp"`` (exact, :mod:`formulations`) or an online policy:
        ``"asrpt"`` (guided A-SRPT), ``"asrpt-greedy"``, ``"fifo"``,
        ``"sjf"``, ``"srpt-naive"``, ``"las"`` (:mod:`algorithms`).
    problem
        For ``milp``: ``"A"``, ``"A1"`` or ``"A2"``. Online policies solve A.
    time_limit, mip_gap, threads, warm_start, verbose
        For ``milp`` (see :func:`formulations.exact.solve_milp`).
    seed
        Randomness of online policies (random mappings, noisy predictors).
    predictor
        Iteration predictor of online policies: ``"oracle"``, ``"noisy"``.

    Raises
    ------
    ValueError
        On an unknown method or problem.
    """
    if method == "milp":
        from formulations.exact import solve_milp

        return solve_milp(
            instance,
            problem,
            time_limit=time_limit,
            mip_gap=mip_gap,
            threads=threads,
            warm_start=warm_start,
            verbose=verbose,
        )
    if method in ONLINE_METHODS:
        if problem != "A":
            raise ValueError(f"problem: online methods solve problem A, not {problem!r}")
        from algorithms.simulator import simulate_policy

        return simulate_policy(instance, method, seed=seed, predictor=predictor)
    raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")
