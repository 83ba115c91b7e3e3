"""The least-attained-service baseline (ddlsched.algorithms.las): preemption and restarts,
verified."""

from __future__ import annotations

from ddlsched.algorithms.registry import POLICIES as REGISTERED_POLICIES
from ddlsched.algorithms.simulator import simulate
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.model import Cluster, Instance, Job

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
    from ddlsched.algorithms.las import LeastAttainedService

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


def test_las_keeps_an_admitted_job_it_could_not_place_at_the_head_of_its_queue() -> None:
    """An admitted job the mapper refuses waits at the head of its queue's waiting
    part, holding no GPUs in the policy's books.

    Three servers of 2 GPUs, ``consolidated`` placement, one queue (no
    demotions), unit compute, no edges. At 0: 'a' (3 GPUs, until 20) takes
    servers 0 and 1 (2 + 1), 'b' (1 GPU, until 5) server 1, 'c' (1 GPU, until
    100) server 2. After 5, one GPU is free on servers 1 and 2. 'w' (2 GPUs)
    arrives at 6: LAS admits it (2 GPUs free in all) but the rule refuses to
    split it, so it waits at the head. 'z' (7) and 'y' (8), 1 GPU each, queue
    behind it: at each pass 'w' is admitted first and takes the whole room, so
    they wait (Tiresias's order). At 20 'a' ends: 'w' starts on server 0, 'z'
    on server 2, 'y' on server 1. By hand: every start below.

    Catches the slips: a refused job appended at the end of the waiting part
    (then 'z' and 'y' start at 8 around it), or left in the running books
    (then its phantom GPUs shrink the room and 'y' starts late).
    """
    from ddlsched.algorithms.las import LeastAttainedService
    from ddlsched.algorithms.mapping import FirstFitMapper, PlacementRule

    cluster = Cluster((2, 2, 2), 1.0, 1.0)
    jobs = (
        Job(id="a", release=0.0, iterations=20, compute_time=1.0, gpus=3),
        Job(id="b", release=0.0, iterations=5, compute_time=1.0, gpus=1),
        Job(id="c", release=0.0, iterations=100, compute_time=1.0, gpus=1),
        Job(id="w", release=6.0, iterations=10, compute_time=1.0, gpus=2),
        Job(id="z", release=7.0, iterations=10, compute_time=1.0, gpus=1),
        Job(id="y", release=8.0, iterations=10, compute_time=1.0, gpus=1),
    )
    instance = Instance(cluster, jobs)
    policy = LeastAttainedService(
        cluster, PlacementRule("consolidated", FirstFitMapper()), thresholds=(1e9,)
    )
    result = simulate(instance, policy, restart_cost=0.0)
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    entries = result.schedule.by_id()
    assert {k: (e.start, e.mapping) for k, e in entries.items()} == {
        "a": (0.0, (0, 0, 1)),
        "b": (0.0, (1,)),
        "c": (0.0, (2,)),
        "w": (20.0, (0, 0)),
        "z": (20.0, (2,)),
        "y": (20.0, (1,)),
    }
    assert all(e.pieces is None for e in entries.values())  # nothing was preempted


def test_las_keeps_the_order_of_several_admitted_jobs_it_could_not_place() -> None:
    """Several refused jobs return to the head of their queue in their own order.

    Four servers of 3 GPUs, ``consolidated`` placement, unit compute, no edges.
    At 0 'p', 'q', 'r', 's' (2 GPUs each, until 5, 6, 7, 8) take two GPUs of
    servers 0-3 (best fit), leaving one free on each. 'w1' then 'w2' (2 GPUs)
    arrive at 1: both are admitted (4 GPUs free in all) and both refused (each
    wants one server). At 5 server 0 frees: 'w1', first in the queue, takes
    it; at 6 'w2' takes server 1. By hand: 'w1' [5, 15] on server 0, 'w2'
    [6, 16] on server 1.

    Catches the slip: refused jobs put back in reverse order (then 'w2'
    overtakes 'w1').
    """
    from ddlsched.algorithms.las import LeastAttainedService
    from ddlsched.algorithms.mapping import FirstFitMapper, PlacementRule

    cluster = Cluster((3, 3, 3, 3), 1.0, 1.0)
    releases = {"p": 0.0, "q": 0.0, "r": 0.0, "s": 0.0, "w1": 1.0, "w2": 1.0}
    counts = {"p": 5, "q": 6, "r": 7, "s": 8, "w1": 10, "w2": 10}
    jobs = tuple(
        Job(id=name, release=releases[name], iterations=counts[name], compute_time=1.0, gpus=2)
        for name in releases
    )
    instance = Instance(cluster, jobs)
    policy = LeastAttainedService(
        cluster, PlacementRule("consolidated", FirstFitMapper()), thresholds=(1e9,)
    )
    result = simulate(instance, policy, restart_cost=0.0)
    assert result.schedule is not None
    assert verify(instance, result.schedule).feasible
    entries = result.schedule.by_id()
    assert [entries[k].mapping for k in "pqrs"] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert (entries["w1"].start, entries["w1"].mapping) == (5.0, (0, 0))
    assert (entries["w2"].start, entries["w2"].mapping) == (6.0, (1, 1))


def test_las_keeps_started_jobs_ahead_of_demoted_ones_in_its_running_order() -> None:
    """Three one-GPU servers, thresholds 300 and 1,000 GPU-seconds. Worked through the pass
    order: at 720 the two-GPU ``j1`` arrives and the job preempted is the one demoted last,
    not the one started in the same queue earlier: ``j2`` runs [400, 720) and [721, 901),
    ``j6`` [0, 300) and [700, 1000). Catches: the pass appending demoted jobs ahead of the
    jobs it starts (then ``j6`` ends at 1001 and ``j2`` runs unbroken)."""
    from ddlsched.algorithms.las import LeastAttainedService
    from ddlsched.algorithms.mapping import FirstFitMapper

    instance = Instance(
        Cluster((1, 1, 1), 10.0, 1.0),
        (
            Job("j0", 150.0, 100, 1.0, 3),
            Job("j1", 720.0, 1, 1.0, 2),
            Job("j2", 300.0, 500, 1.0, 1),
            Job("j3", 360.0, 400, 1.0, 1),
            Job("j5", 400.0, 400, 1.0, 1),
            Job("j6", 0.0, 600, 1.0, 1),
        ),
    )
    policy = LeastAttainedService(instance.cluster, FirstFitMapper(), thresholds=(300.0, 1000.0))
    result = simulate(instance, policy, restart_cost=0.0)
    assert result.schedule is not None and verify(instance, result.schedule).feasible
    entries = result.schedule.by_id()
    pieces = {
        k: [(round(a, 6), round(b, 6)) for a, b, *_ in entries[k].pieces] for k in ("j2", "j6")
    }
    assert pieces["j2"] == [(400.0, 720.0), (721.0, 901.0)]
    assert pieces["j6"] == [(0.0, 300.0), (700.0, 1000.0)]
