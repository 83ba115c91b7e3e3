"""Helpers of the exact-formulation tests: solve, then check with the independent verifier."""

from __future__ import annotations

from ddlsched.formulations.milp import solve_milp
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.model import Instance, Job
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus


def solve_verified(instance: Instance, problem: str, **kwargs: object) -> float:
    """Solve exactly, require OPTIMAL, and check the schedule and objective with the verifier."""
    result = solve_milp(instance, problem, ExactParams(time_limit=600), **kwargs)  # type: ignore[arg-type]
    assert result.status == SolveStatus.OPTIMAL, result.notes
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert abs(result.objective - report.total_completion_time) <= 1e-9
    assert abs(result.total_jct - report.total_jct) <= 1e-9
    assert result.best_bound <= result.objective + 1e-6
    return result.objective


def unit_job(name: str, gpus: int, iterations: int, release: float = 0.0, **kw: object) -> Job:
    """A job of compute time 1 s per iteration (and no edges unless given)."""
    return Job(id=name, release=release, iterations=iterations, compute_time=1.0, gpus=gpus, **kw)  # type: ignore[arg-type]


def pyomo_lock_then_wait() -> None:
    """In an isolated child: import Pyomo as a solve does (it makes a multiprocessing lock),
    say so to the caller, then wait to be stopped (on an event that never comes)."""
    import threading

    import pyomo.environ  # noqa: F401
    from ddlsched.formulations.isolation import report
    from pyomo.common import dependencies

    assert dependencies.multiprocessing.Lock is not None  # Pyomo's deferred import resolved
    report("lock made")
    threading.Event().wait()
