"""Solves in one process do not depend on the solves that ran before them."""

from __future__ import annotations

from ddlsched.algorithms.elastic.round_milp import ChoiceProblem, solve_choice
from ddlsched.formulations.lower_bounds import LpSettings, lower_bounds
from ddlsched.formulations.mapping import solve_mapping
from ddlsched.formulations.milp import solve_milp

from ddlsched.core.model import Cluster, Job
from ddlsched.core.params import ExactParams
from tests.examples import ring_instance


def test_a_thread_count_after_another_solve_in_the_same_process() -> None:
    """HiGHS sizes one thread scheduler per process at its first solve: a later in-process
    solve with another thread count failed ('HiGHS status Not Set'; the MILP result was an
    error), so the outcome of a test depended on the tests before it in its worker.

    Catches the scheduler not being reset where a thread count is set, and a thread count
    forced on the elastic round MILP, and the LP bound's thread count (it said 'Not Set')."""
    ring = Job(
        id="r", release=0, iterations=1, compute_time=1.0, gpus=4,
        edges=((0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (0, 3, 1.0)),
    )  # fmt: skip
    assert solve_mapping(ring, Cluster((4, 4), 2.0, 1.0), counts=(3, 1)).mapping is not None
    choice = ChoiceProblem(costs=((1.0, 0.5), (1.0, 0.2)), gpus=((0, 1), (0, 2)), capacity=2)
    assert solve_choice(choice) == [0, 1]
    lp = lower_bounds(ring_instance(), lp=LpSettings(5_000, 600.0, threads=1))
    assert all(bound.valid for bound in lp if bound.name == "lp") and any(
        bound.name == "lp" for bound in lp
    )
    one = solve_milp(ring_instance(), "A", ExactParams(threads=1, isolate=False))
    two = solve_milp(ring_instance(), "A", ExactParams(threads=2, isolate=False))
    assert one.proven_optimal and two.proven_optimal
    assert one.objective == two.objective
