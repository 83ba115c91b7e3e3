"""A round as a policy sees it, built by hand for the policy tests."""

from __future__ import annotations

from ddlsched.algorithms.elastic.simulator import Allocation, JobState, RoundState, application_of

from ddlsched.core.elastic import ElasticCluster, ElasticJob


def round_state(
    jobs: list[ElasticJob],
    cluster: ElasticCluster,
    time: float,
    held: dict[str, tuple[int, int]] | None = None,
) -> RoundState:
    """The round at ``time`` (60 s rounds, 30 s restarts) with every job at progress 0;
    ``held`` maps a job to the (node, GPUs) it ran on last round, at its asked batch size
    (one start so far)."""
    held = held or {}
    states = []
    for job in jobs:
        app = application_of(job)
        alloc = None
        if job.name in held:
            node, gpus = held[job.name]
            atomic, accum = app.rigid_batch(gpus, job.asked_batch_size)
            alloc = Allocation(((node, gpus),), atomic, accum)
        states.append(
            JobState(job, app, 0.0, alloc, 1 if alloc else 0, 0.0, time - job.submit_time)
        )
    return RoundState(time, cluster, tuple(states), 60.0, 30.0)
