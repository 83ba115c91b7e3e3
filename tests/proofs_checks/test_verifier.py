"""The verifier accepts feasible schedules and rejects each broken rule.

Feasible schedules here are built by a tiny serial list scheduler written in
the test (every job alone after the previous one, all nodes on its first
fitting server or spread in order), independent of every method.
"""

from __future__ import annotations

import dataclasses

import pytest
from ddlsched.proofs_checks.verifier import verify
from hypothesis import given

from ddlsched.core.model import Cluster, Instance, Job, Piece, Schedule, ScheduledJob
from tests.oracles import per_iteration_on
from tests.strategies import generated_instances, hand_instances


def serial_schedule(instance: Instance) -> Schedule:
    """Jobs one at a time in release order; nodes fill servers in order."""
    time = 0.0
    entries = []
    for job in sorted(instance.jobs, key=lambda j: j.release):
        mapping = []
        for server, gpus in enumerate(instance.cluster.gpus_per_server):
            mapping += [server] * min(gpus, job.gpus - len(mapping))
        start = max(time, job.release)
        end = start + job.iterations * per_iteration_on(job, instance.cluster, mapping)
        entries.append(ScheduledJob(job.id, start, end, tuple(mapping)))
        time = end
    return Schedule(tuple(entries))


@given(generated_instances())
def test_serial_schedule_feasible_objective_recomputed(instance: Instance) -> None:
    """A serial schedule is feasible and its objective is sum w_i C_i."""
    schedule = serial_schedule(instance)
    report = verify(instance, schedule)
    assert report.feasible, report.violations
    expected = sum(
        job.weight * entry.end
        for job in instance.jobs
        for entry in schedule.jobs
        if entry.id == job.id
    )
    assert report.total_completion_time == pytest.approx(expected)
    jct = sum(
        job.weight * (report.completion_times[job.id] - job.release) for job in instance.jobs
    )
    assert report.total_jct == pytest.approx(jct)


def _replace_entry(schedule: Schedule, index: int, **changes: object) -> Schedule:
    entries = list(schedule.jobs)
    entries[index] = dataclasses.replace(entries[index], **changes)
    return Schedule(tuple(entries), schedule.problem)


@given(hand_instances())
def test_mutations_break_each_rule(instance: Instance) -> None:
    """Every kind of mutation of a feasible schedule is caught and described."""
    schedule = serial_schedule(instance)
    first = schedule.jobs[0]
    job = next(j for j in instance.jobs if j.id == first.id)

    missing = Schedule(schedule.jobs[1:])
    assert "not scheduled" in " ".join(verify(instance, missing).violations)

    twice = Schedule((*schedule.jobs, first))
    assert "more than once" in " ".join(verify(instance, twice).violations)

    stranger = Schedule((*schedule.jobs, ScheduledJob("nobody", 0.0)))
    assert "not in the instance" in " ".join(verify(instance, stranger).violations)

    assert first.end is not None
    wrong_end = _replace_entry(schedule, 0, end=first.end + 1.0)
    assert "differs from start + K * alpha" in " ".join(verify(instance, wrong_end).violations)

    short = _replace_entry(schedule, 0, mapping=first.mapping[:-1] if first.mapping else ())
    assert "mapping has" in " ".join(verify(instance, short).violations)

    off_cluster = _replace_entry(schedule, 0, mapping=(instance.cluster.num_servers,) * job.gpus)
    assert "uses server" in " ".join(verify(instance, off_cluster).violations)

    if job.release > 0:
        early = _replace_entry(schedule, 0, start=0.0, end=None)
        assert "before its release" in " ".join(verify(instance, early).violations)


def test_capacity_violation_found_in_continuous_time(ring_instance: Instance) -> None:
    """Overlapping by a fraction of a slot on a full server is a violation; touching is not."""
    # ring: 2 iterations x alpha 4 on [0,0,1,1] -> [0, 8); solo needs 1 GPU.
    ring = ScheduledJob("ring", 0.0, 8.0, (0, 0, 1, 1))
    touching = Schedule((ring, ScheduledJob("solo", 8.0, 11.0, (1,))))
    assert verify(ring_instance, touching).feasible
    overlap = Schedule((ring, ScheduledJob("solo", 7.75, 10.75, (1,))))
    report = verify(ring_instance, overlap)
    assert not report.feasible
    assert any("server 1: 3 GPUs in use at time 7.75" in v for v in report.violations)


def test_all_violations_reported(ring_instance: Instance) -> None:
    """Several broken rules are all listed, not just the first."""
    bad = Schedule(
        (
            ScheduledJob("ring", 0.0, 99.0, (0, 0, 1, 1)),
            ScheduledJob("solo", 0.5, None, (0,)),
        )
    )
    report = verify(ring_instance, bad)
    text = " ".join(report.violations)
    assert "before its release" in text and "differs from" in text and "server 0" in text
    assert len(report.violations) >= 3


def test_a1_and_a2_rules(ring_instance: Instance) -> None:
    """A1 pools M GPUs with all-cut durations; A2 is one preemptive machine."""
    # A1: ring (4 GPUs) lasts 2 * 5 = 10, solo 3; M = 4, so they cannot overlap.
    a1_bad = Schedule(
        (ScheduledJob("ring", 0.0, 10.0), ScheduledJob("solo", 1.0, 4.0)), problem="A1"
    )
    assert "the cluster: 5 GPUs in use" in " ".join(verify(ring_instance, a1_bad).violations)
    a1_ok = Schedule(
        (ScheduledJob("ring", 0.0, 10.0), ScheduledJob("solo", 10.0, 13.0)), problem="A1"
    )
    assert verify(ring_instance, a1_ok).feasible
    # A2 sizes: ring 4*2*5/4 = 10, solo 1*3*1/4 = 0.75. Preempt ring at 1.
    a2_ok = Schedule(
        (
            ScheduledJob("ring", 0.0, 10.75, pieces=((0.0, 1.0), (1.75, 10.75))),
            ScheduledJob("solo", 1.0, 1.75, pieces=((1.0, 1.75),)),
        ),
        problem="A2",
    )
    report = verify(ring_instance, a2_ok)
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(10.75 + 1.75)
    a2_overlap = Schedule(
        (
            ScheduledJob("ring", 0.0, 10.0, pieces=((0.0, 10.0),)),
            ScheduledJob("solo", 2.0, 2.75, pieces=((2.0, 2.75),)),
        ),
        problem="A2",
    )
    assert "overlap" in " ".join(verify(ring_instance, a2_overlap).violations)
    a2_short = Schedule(
        (
            ScheduledJob("ring", 0.0, 9.0, pieces=((0.0, 9.0),)),
            ScheduledJob("solo", 9.0, 9.75, pieces=((9.0, 9.75),)),
        ),
        problem="A2",
    )
    assert "its size is 10" in " ".join(verify(ring_instance, a2_short).violations)


def test_preemptive_cluster_schedules(ring_instance: Instance) -> None:
    """Preempted jobs: pieces need mappings, must not overlap, and must do exactly K iterations."""
    from ddlsched.core.model import Piece

    # ring: alpha 4 on (0, 0, 1, 1), K = 2: 8 s of work; 3 s, then 5 s after a 1 s restart.
    pieces = (Piece(0.0, 3.0, (0, 0, 1, 1)), Piece(6.0, 12.0, (0, 0, 1, 1)))
    good = Schedule(
        (ScheduledJob("ring", 0.0, 12.0, None, pieces), ScheduledJob("solo", 3.0, 6.0, (0,))),
        restart_cost=1.0,
    )
    report = verify(ring_instance, good)
    assert report.feasible, report.violations
    short = Schedule(
        (
            ScheduledJob("ring", 0.0, 11.0, None, (pieces[0], Piece(6.0, 11.0, (0, 0, 1, 1)))),
            ScheduledJob("solo", 3.0, 6.0, (0,)),
        ),
        restart_cost=1.0,
    )
    assert "iterations of work, it needs 2" in " ".join(verify(ring_instance, short).violations)
    no_map = Schedule(
        (
            ScheduledJob("ring", 0.0, 12.0, None, (Piece(0.0, 3.0), pieces[1])),
            ScheduledJob("solo", 3.0, 6.0, (0,)),
        ),
        restart_cost=1.0,
    )
    assert "piece 0: has no mapping" in " ".join(verify(ring_instance, no_map).violations)
    clash = Schedule(
        (ScheduledJob("ring", 0.0, 12.0, None, pieces), ScheduledJob("solo", 2.0, 5.0, (0,))),
        restart_cost=1.0,
    )
    assert "server 0: 3 GPUs in use" in " ".join(verify(ring_instance, clash).violations)


def _one_gpu_jobs(*iterations: int) -> Instance:
    """Jobs of 1 GPU, compute 1 s, no edges, released at 0, on a 1-GPU cluster: the A2
    size of each is its iteration count (g K alpha_max / M = K)."""
    from ddlsched.core.model import Cluster, Job

    jobs = tuple(
        Job(id=f"j{k}", release=0.0, iterations=n, compute_time=1.0, gpus=1)
        for k, n in enumerate(iterations)
    )
    return Instance(Cluster((1,), 1.0, 1.0), jobs)


def test_a2_piece_reaching_past_a_short_neighbour_is_caught() -> None:
    """(0,10,j0), (1,2,j1), (3,4,j2): j2 overlaps j0 but not its sorted neighbour j1."""
    from ddlsched.core.model import Piece

    instance = _one_gpu_jobs(10, 1, 1)
    schedule = Schedule(
        (
            ScheduledJob("j0", 0.0, 10.0, pieces=(Piece(0.0, 10.0),)),
            ScheduledJob("j1", 1.0, 2.0, pieces=(Piece(1.0, 2.0),)),
            ScheduledJob("j2", 3.0, 4.0, pieces=(Piece(3.0, 4.0),)),
        ),
        problem="A2",
    )
    report = verify(instance, schedule)
    assert any("'j0' and 'j2' overlap" in v for v in report.violations), report.violations


def test_a2_piece_before_release() -> None:
    """An A2 piece that starts before its job's release is a violation."""
    from ddlsched.core.model import Cluster, Job, Piece

    job = Job(id="late", release=5.0, iterations=2, compute_time=1.0, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    schedule = Schedule((ScheduledJob("late", 4.0, 6.0, pieces=(Piece(4.0, 6.0),)),), problem="A2")
    report = verify(instance, schedule)
    assert any("before its release" in v for v in report.violations), report.violations


def test_tolerance_is_tight() -> None:
    """An end off by one part in a million (10 s job, end 10.00001) is a violation: the
    tolerance is 1e-9 relative, not a loose one that would pass it."""
    instance = _one_gpu_jobs(10)
    report = verify(instance, Schedule((ScheduledJob("j0", 0.0, 10.00001, (0,)),)))
    assert not report.feasible
    exact = verify(instance, Schedule((ScheduledJob("j0", 0.0, 10.0, (0,)),)))
    assert exact.feasible


def test_the_json_report_names_every_field_and_nulls_unknown_totals() -> None:
    """``verify --json``: the document has exactly feasible, violations and the two totals,
    with an unknown (non-finite) total as null, never NaN or a value of another field.
    Catches a misspelt key, a total swapped or dropped, and NaN leaking into JSON."""
    import json
    import math

    from ddlsched.proofs_checks.verifier import VerificationReport

    report = VerificationReport(False, ("job 'a': too early",), 12.5, 7.25)
    assert report.to_dict() == {
        "feasible": False,
        "violations": ["job 'a': too early"],
        "total_completion_time": 12.5,
        "total_jct": 7.25,
    }
    unknown = VerificationReport(True, (), math.inf, math.nan).to_dict()
    assert unknown["total_completion_time"] is None and unknown["total_jct"] is None
    json.dumps(unknown, allow_nan=False)


def _restarted(
    pieces: tuple[tuple[float, float], ...], restart_cost: float = 0.0
) -> tuple[Instance, Schedule]:
    job = Job(id="j", release=0.0, iterations=2, compute_time=1.0, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    schedule = Schedule(
        (
            ScheduledJob(
                "j",
                pieces[0][0],
                pieces[-1][1],
                pieces=tuple(Piece(s, e, (0,)) for s, e in pieces),
            ),
        ),
        restart_cost=restart_cost,
    )
    return instance, schedule


def test_a_piece_shorter_than_its_restart_does_no_negative_work() -> None:
    """Catches the work of a resumed piece not clamped at 0 (``max(0, length - restart)``):
    2 iterations of 1 s, restart cost 1 s; pieces [0, 1), [2, 2.5) (shorter than the
    restart: no work, never minus half an iteration) and [3, 5) (1 s of work): feasible."""
    instance, schedule = _restarted(((0.0, 1.0), (2.0, 2.5), (3.0, 5.0)), restart_cost=1.0)
    report = verify(instance, schedule)
    assert report.feasible, report.violations


def test_a_zero_length_piece_is_not_an_error() -> None:
    """Catches a piece of length 0 taken as ending before it starts (``<=`` for ``<``):
    pieces [0, 2) and [2, 2) of a 2-iteration job are feasible, total 2."""
    instance, schedule = _restarted(((0.0, 2.0), (2.0, 2.0)))
    report = verify(instance, schedule)
    assert report.feasible, report.violations
    assert report.total_completion_time == pytest.approx(2.0)


def _spread_over_a_full_server(
    cluster: Cluster, full: int, order: tuple[int, ...], preempted: bool, room: bool
) -> tuple[Instance, Schedule]:
    """A job ``fill`` holding every GPU of server ``full`` (all but one if ``room``) over
    [3, 3 + 10 c), and a job ``spread`` with one node on each server, in ``order``,
    starting at 4 while ``fill`` runs: alone (K = 2, from 4), or preempted (K = 3: one
    iteration from 0, before ``fill`` starts, then two from 4). When it starts at 4,
    ``spread`` is the job starting, and server ``full`` is the ``order.index(full)``-th
    of its servers."""
    compute = {"k80": 2.0} if cluster.server_types else {}
    size = cluster.gpus_per_server[full] - (1 if room else 0)
    fill = Job(id="fill", release=0.0, iterations=10, compute_time=1.0, gpus=size)
    spread = Job(
        id="spread",
        release=0.0,
        iterations=3 if preempted else 2,
        compute_time=1.0,
        gpus=len(order),
        compute_times=tuple(compute.items()),
    )
    instance = Instance(cluster, (fill, spread))
    alpha = per_iteration_on(spread, cluster, order)
    if preempted:
        pieces = (Piece(0.0, alpha, order), Piece(4.0, 4.0 + 2 * alpha, order))
        entry = ScheduledJob("spread", 0.0, 4.0 + 2 * alpha, None, pieces)
    else:
        entry = ScheduledJob("spread", 4.0, None, order)
    return instance, Schedule((ScheduledJob("fill", 3.0, None, (full,) * size), entry))


@pytest.mark.parametrize(
    "cluster",
    [
        Cluster((2, 2), 10.0, 1.0),
        Cluster((2, 2, 2), 10.0, 1.0),
        Cluster((3, 1, 2, 4), 10.0, 1.0),
        Cluster((2, 4, 1), 10.0, 1.0, ("v100", "k80", "v100"), (("k80", 5.0),)),
        Cluster((1, 2, 3, 2), 10.0, 1.0, ("k80", "k80", "v100", "v100")),
    ],
    ids=["2x2", "3x2", "3-1-2-4", "typed-2-4-1", "typed-1-2-3-2"],
)
@pytest.mark.parametrize("preempted", [False, True], ids=["whole", "pieces"])
def test_an_overload_on_any_server_of_a_starting_spread_job_is_reported(
    cluster: Cluster, preempted: bool
) -> None:
    """Catches the capacity sweep checking only the first server of a job that starts
    (``for server in list(usage)[:1]``), a false "feasible": a job spread with one node
    on every server starts (whole, or its second piece under problem A's preemption)
    while another job fills server ``h``; for every ``h`` and every position of ``h``
    in the spread job's mapping (rotations: second, third, ... server too), on uniform,
    uneven and typed clusters, the overload of ``h`` by one GPU is reported and names
    ``h``. With one GPU left free on ``h`` the same schedule is feasible."""
    servers = cluster.num_servers
    for full in range(servers):
        for shift in range(servers):
            order = tuple((full - shift + k) % servers for k in range(servers))
            assert order.index(full) == shift
            instance, schedule = _spread_over_a_full_server(
                cluster, full, order, preempted, room=False
            )
            report = verify(instance, schedule)
            capacity = cluster.gpus_per_server[full]
            expected = (
                f"server {full}: {capacity + 1} GPUs in use at time 4 (capacity {capacity}) "
                "by jobs fill, spread"
            )
            assert expected in report.violations, (order, report.violations)
            assert not report.feasible
            if capacity > 1:
                instance, schedule = _spread_over_a_full_server(
                    cluster, full, order, preempted, room=True
                )
                report = verify(instance, schedule)
                assert report.feasible, (order, report.violations)
