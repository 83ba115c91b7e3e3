"""The independent check of elastic runs (ddlsched.proofs_checks.elastic) on tampered runs.

Each test takes a real recorded run of the elastic simulator, tampers with one thing
(as ``tests/elastic/test_simulator.py`` plants its faults) and checks that the check
names it. One model (cifar10, one epoch) keeps the profiles' loading short.
"""

from __future__ import annotations

import dataclasses
import functools

import pytest
from ddlsched.algorithms.elastic.policies import FifoRigid, Pollux
from ddlsched.algorithms.elastic.simulator import ElasticResult, RoundRecord, simulate_elastic
from ddlsched.proofs_checks.elastic import check_elastic

from ddlsched.core.elastic import ElasticCluster, ElasticJob, ElasticWorkload

POLICIES = {"fifo": FifoRigid, "pollux": Pollux}


@functools.cache
def _run(policy: str) -> ElasticResult:
    """Four cifar10 jobs arriving within and across rounds on 2 x 4 GPUs (they queue)."""
    rows = [
        ("c-a", 0.0, 4, 512),
        ("c-b", 20.0, 2, 256),
        ("c-c", 61.0, 8, 1024),
        ("c-d", 70.0, 1, 128),
    ]
    workload = ElasticWorkload(
        tuple(ElasticJob(name, "cifar10", t, gpus, batch, 1) for name, t, gpus, batch in rows)
    )
    result = simulate_elastic(workload, POLICIES[policy](), ElasticCluster(2, 4))
    assert check_elastic(result) == []
    assert len(result.records) >= 3
    return result


def _arriving_at(result: ElasticResult, name: str, time: float) -> ElasticResult:
    jobs = tuple(
        dataclasses.replace(job, submit_time=time) if job.name == name else job
        for job in result.workload.jobs
    )
    return dataclasses.replace(result, workload=ElasticWorkload(jobs))


def _with_records(result: ElasticResult, records: list[RoundRecord]) -> ElasticResult:
    return dataclasses.replace(result, records=tuple(records))


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_job_given_gpus_in_a_round_starting_before_its_arrival_is_reported(
    policy: str,
) -> None:
    """Catches the arrival rule compared with the round's end instead of its start
    (``submit_time > start + length``), which passes a run giving a job GPUs up to a
    whole round before it arrives. For every job of a real run, its arrival is moved
    after the start of the first round that gave it GPUs, by a fraction of a round
    (1e-6, a quarter, a half) and by one round minus epsilon: that round is reported as
    running it before its arrival. Arriving exactly at the round's start is allowed."""
    result = _run(policy)
    length = result.params.round_length
    for job in result.workload.jobs:
        first = next(r for r in result.records if job.name in r.allocations)
        expected = f"round at {first.time}: {job.name} runs before its arrival"
        for late in (1e-6, 0.25 * length, 0.5 * length, length - 1e-9 * length):
            problems = check_elastic(_arriving_at(result, job.name, first.time + late))
            assert expected in problems, (job.name, late, problems)
        on_time = check_elastic(_arriving_at(result, job.name, first.time))
        assert not any("before its arrival" in p for p in on_time), on_time


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_rounds_at_a_repeated_or_earlier_time_are_reported(policy: str) -> None:
    """Catches the round order compared strictly (``start < previous``), which accepts
    two rounds starting at the same time (the cluster's GPUs given out twice over one
    round). For every round after the first of a real run: its start set to the
    previous round's, a copy of the previous round inserted at the same time, its start
    half a round before the previous one, and its time swapped with the previous
    round's are each reported, naming the round."""
    result = _run(policy)
    records = list(result.records)
    length = result.params.round_length
    for n in range(1, len(records)):
        previous = records[n - 1].time

        same = records.copy()
        same[n] = dataclasses.replace(records[n], time=previous)
        problems = check_elastic(_with_records(result, same))
        assert f"round {n}: time {previous} not after the previous round" in problems, problems

        copied = [*records[:n], records[n - 1], *records[n:]]
        problems = check_elastic(_with_records(result, copied))
        assert f"round {n}: time {previous} not after the previous round" in problems, problems

        earlier = records.copy()
        earlier[n] = dataclasses.replace(records[n], time=previous - length / 2)
        problems = check_elastic(_with_records(result, earlier))
        assert any(p.startswith(f"round {n}: time ") for p in problems), problems

        swapped = records.copy()
        swapped[n - 1] = dataclasses.replace(records[n - 1], time=records[n].time)
        swapped[n] = dataclasses.replace(records[n], time=previous)
        problems = check_elastic(_with_records(result, swapped))
        assert f"round {n}: time {previous} not after the previous round" in problems, problems
