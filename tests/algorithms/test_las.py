"""The least-attained-service baseline (algorithms.las): preemption and restarts, verified."""

from __future__ import annotations

import pytest

from algorithms.registry import POLICIES as REGISTERED_POLICIES
from algorithms.simulator import simulate
from ddlsched.core.model import Cluster, Instance, Job
from proofs_checks.verifier import verify

POLICIES = REGISTERED_POLICIES.names()


def test_las_preempts_and_restarts_verifiably() -> None:
    """LAS preempts a backfilled job when an earlier one fits; pieces pay the restart cost.

    One 4-GPU server: 'a' (2 GPUs, 10 s) at 0, 'wide' (4 GPUs) at 1 cannot
    start, 'b' (2 GPUs) at 2 backfills; when 'a' ends at 10, 'wide' (earlier
    than 'b') is admitted and 'b' is preempted, to resume after 'wide' with
    a restart cost of 0.5 s.
    """
    from algorithms.las import LeastAttainedService

    cluster = Cluster((4,), 1.0, 1.0)
    jobs = (
        Job(id="a", release=0.0, iterations=10, compute_time=1.0, gpus=2),
        Job(id="wide", release=1.0, iterations=3, compute_time=1.0, gpus=4),
        Job(id="b", release=2.0, iterations=20, compute_time=1.0, gpus=2),
    )
    instance = Instance(cluster, jobs)
    result = simulate(instance, LeastAttainedService(cluster), restart_cost=0.5)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    entries = result.schedule.by_id()
    assert entries["b"].pieces is not None and len(entries["b"].pieces) == 2
    first, second = entries["b"].pieces
    assert (first.start, first.end) == (2.0, 10.0) and second.start == pytest.approx(13.0)
    # 8 iterations before, 12 after, plus the 0.5 s restart.
    assert entries["b"].end == pytest.approx(13.0 + 0.5 + 12.0)
