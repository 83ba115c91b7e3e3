"""The least-attained-service baseline (algorithms.las): preemption and restarts, verified."""

from __future__ import annotations

from algorithms.registry import POLICIES as REGISTERED_POLICIES
from algorithms.simulator import simulate
from ddlsched.core.model import Cluster, Instance, Job
from proofs_checks.verifier import verify

POLICIES = REGISTERED_POLICIES.names()


def test_las_preempts_and_restarts_verifiably() -> None:
    """Demotions and Tiresias's order decide preemptions; resumed pieces pay the restart cost.

    One 4-GPU server, one limit of 10 GPU-s, restart cost 0.5 s. 'a' (2
    GPUs, 10 s) runs from 0; 'wide' (4 GPUs, 3 s) arrives at 1 and waits;
    'b' (2 GPUs, 20 s) arrives at 2 and starts beside 'a'. 'a' reaches the
    limit at 5 and moves to queue 1, where it still fits. 'b' reaches it
    at 7: queue 0 is now just 'wide', which starts, and 'a' and 'b' are
    preempted. 'wide' reaches the limit at 9.5 and joins queue 1 behind
    'a' and 'b', which resume (restoring until 10) and push it out: 'a'
    ends at 10 + 3 = 13, 'b' at 10 + 15 = 25, and 'wide', resuming at 25,
    at 25.5 + 0.5 = 26.
    """
    from algorithms.las import LeastAttainedService

    cluster = Cluster((4,), 1.0, 1.0)
    jobs = (
        Job(id="a", release=0.0, iterations=10, compute_time=1.0, gpus=2),
        Job(id="wide", release=1.0, iterations=3, compute_time=1.0, gpus=4),
        Job(id="b", release=2.0, iterations=20, compute_time=1.0, gpus=2),
    )
    instance = Instance(cluster, jobs)
    policy = LeastAttainedService(cluster, thresholds=(10.0,))
    result = simulate(instance, policy, restart_cost=0.5)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    pieces = {e.id: [(p.start, p.end) for p in e.pieces or ()] for e in result.schedule.jobs}
    assert pieces["a"] == [(0.0, 7.0), (9.5, 13.0)]
    assert pieces["b"] == [(2.0, 7.0), (9.5, 25.0)]
    assert pieces["wide"] == [(7.0, 9.5), (25.0, 26.0)]
