"""The round-based elastic simulator and its independent check."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES
from ddlsched.algorithms.elastic.policies import FifoRigid, LasPollux, Pollux
from ddlsched.algorithms.elastic.simulator import (
    Allocation,
    ElasticResult,
    ElasticSimParams,
    RoundState,
    simulate_elastic,
)
from ddlsched.proofs_checks.elastic import check_elastic

from ddlsched.core.elastic import (
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    load_application,
)


def test_one_job_completes_at_the_hand_computed_time() -> None:
    """BERT at its initial batch (12) on one GPU: 30 s restart, then one iteration per T_grad.

    At M = M0 the gain is 1 whatever the epoch, and one replica has no sync,
    so the job needs ``target`` iterations of ``alpha_grad + 12 beta_grad``
    seconds after the 30 s start-up; it arrives at 10 s and starts at the
    round at 60 s.
    """
    job = ElasticJob("bert-0", "bert", 10.0, 1, 12)
    result = simulate_elastic(ElasticWorkload((job,)), FifoRigid(), ElasticCluster(1, 4))
    app = load_application("bert")
    per_iteration = app.perf.alpha_grad + 12 * app.perf.beta_grad
    expected = 60.0 + 30.0 + app.target_progress * per_iteration
    assert result.completion["bert-0"] == pytest.approx(expected, rel=1e-12)
    assert result.mean_jct == pytest.approx(expected - 10.0, rel=1e-12)
    assert check_elastic(result) == []


def test_restart_costs_are_charged_on_every_placement_change() -> None:
    """A policy that moves a job every round makes it lose 30 s each round (by hand).

    BERT at batch 12 on one GPU, alternating between nodes 0 and 1: every
    round gives 30 s of work, so the job needs ceil(T / 30) rounds and finishes
    30 s into the last round plus the rest.
    """

    class Hopper:
        name = "hopper"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            node = int(state.time // 60) % 2
            return {j.job.name: Allocation(((node, 1),), 12, 0) for j in state.jobs}

    job = ElasticJob("bert-0", "bert", 0.0, 1, 12, epochs=1)
    result = simulate_elastic(ElasticWorkload((job,)), Hopper(), ElasticCluster(2, 4))
    app = load_application("bert", 1)
    work = app.target_progress * (app.perf.alpha_grad + 12 * app.perf.beta_grad)
    full_rounds = int(work // 30)
    expected = full_rounds * 60 + 30 + (work - 30 * full_rounds)
    assert result.completion["bert-0"] == pytest.approx(expected, rel=1e-9)
    assert result.restarts["bert-0"] == full_rounds + 1
    assert check_elastic(result) == []


def test_a_policy_sees_the_rounds_settings_and_time() -> None:
    """What a policy written by a user reads each round: the round's start on the grid of
    the round length given, that length and the restart time (no built-in policy reads
    the last two, so only this test would see them lost)."""
    from ddlsched.algorithms.elastic.simulator import ElasticSimParams

    seen: list[tuple[float, float, float]] = []

    class Recorder:
        name = "recorder"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            seen.append((state.time, state.round_length, state.restart_time))
            return {j.job.name: Allocation(((0, 1),), 12, 0) for j in state.jobs}

    job = ElasticJob("bert-0", "bert", 100.0, 1, 12, epochs=1)
    params = ElasticSimParams(round_length=45.0, restart_time=7.0)
    simulate_elastic(ElasticWorkload((job,)), Recorder(), ElasticCluster(1, 4), params)
    assert seen and all(length == 45.0 and restart == 7.0 for _, length, restart in seen)
    assert [t for t, _, _ in seen] == [135.0 + 45.0 * k for k in range(len(seen))]


@pytest.mark.parametrize("name", ELASTIC_POLICIES.names())
def test_every_policy_passes_the_independent_check(
    name: str, mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """Each policy's run completes every job and the check recomputes it exactly."""
    result = simulate_elastic(mixed_workload, ELASTIC_POLICIES[name](), small_cluster)
    assert set(result.completion) == {j.name for j in mixed_workload.jobs}
    assert check_elastic(result) == []


@pytest.mark.parametrize("name", ELASTIC_POLICIES.names())
def test_simulation_is_deterministic(
    name: str, mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """The same workload and policy give the same allocations and completion times."""
    first = simulate_elastic(mixed_workload, ELASTIC_POLICIES[name](), small_cluster)
    second = simulate_elastic(mixed_workload, ELASTIC_POLICIES[name](), small_cluster)
    assert first == second


def _replace_round(result: ElasticResult, number: int, **changes: Any) -> ElasticResult:
    records = list(result.records)
    records[number] = dataclasses.replace(records[number], **changes)
    return dataclasses.replace(result, records=tuple(records))


def test_check_catches_an_over_allocated_node(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """A planted allocation putting 5 GPUs on a 4-GPU node is reported."""
    result = simulate_elastic(mixed_workload, LasPollux(), small_cluster)
    record = result.records[0]
    name, alloc = next(iter(record.allocations.items()))
    bigger = Allocation(((0, 5),), alloc.atomic_bsz, alloc.accum_steps)
    planted = _replace_round(
        result, 0, allocations=MappingProxyType({**record.allocations, name: bigger})
    )
    assert any("node 0 holds" in p for p in check_elastic(planted))


def test_check_reports_every_bad_part_of_a_placement(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """Catches the check stopping at the first bad part of a placement (``break`` for
    ``continue``): a planted placement of 5 GPUs on node 1 (which has 4) after 1 GPU on
    node -1 (no such node) gets both reported, not the first alone."""
    result = simulate_elastic(mixed_workload, LasPollux(), small_cluster)
    record = result.records[0]
    name, alloc = next(iter(record.allocations.items()))
    planted_alloc = Allocation(((-1, 1), (1, 5)), alloc.atomic_bsz, alloc.accum_steps)
    planted = _replace_round(
        result, 0, allocations=MappingProxyType({**record.allocations, name: planted_alloc})
    )
    problems = check_elastic(planted)
    assert any("bad node/GPUs -1/1" in p for p in problems), problems
    assert any("node 1 holds" in p for p in problems), problems


def test_check_catches_missing_progress(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """Dropping a job's allocation from one round leaves its reported progress unexplained."""
    result = simulate_elastic(mixed_workload, Pollux(), small_cluster)
    number, record = next(
        (i, r) for i, r in enumerate(result.records) if "cifar10-a" in r.allocations
    )
    kept = {k: v for k, v in record.allocations.items() if k != "cifar10-a"}
    planted = _replace_round(result, number, allocations=MappingProxyType(kept))
    problems = check_elastic(planted)
    assert any("cifar10-a" in p for p in problems)


def test_check_catches_a_wrong_completion_time(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """A reported completion time 1 s off is reported."""
    result = simulate_elastic(mixed_workload, FifoRigid(), small_cluster)
    completion = dict(result.completion)
    completion["ncf-a"] += 1.0
    planted = dataclasses.replace(result, completion=MappingProxyType(completion))
    assert any(p.startswith("ncf-a: completion") for p in check_elastic(planted))


def test_simulator_refuses_an_over_allocating_policy() -> None:
    """A policy asking 5 GPUs of a 4-GPU node is stopped with the round and node named."""

    class Greedy:
        name = "greedy"

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            return {j.job.name: Allocation(((0, 5),), 12, 0) for j in state.jobs}

    workload = ElasticWorkload((ElasticJob("bert-0", "bert", 0.0, 1, 12),))
    with pytest.raises(ValueError, match="round at 0 s: node 0 holds 5 GPUs"):
        simulate_elastic(workload, Greedy(), ElasticCluster(1, 4))


@pytest.mark.parametrize(
    ("placement", "atomic", "accum", "says"),
    [
        (((0, 1.5),), 12, 0, "whole numbers"),  # half a GPU ran as 1.5 GPUs
        (((0, 2),), 12.0, 0, "whole numbers"),  # a float batch
        (((0, 2),), 12, 0.5, "whole numbers"),
        (((True, 2),), 12, 0, "whole numbers"),  # a bool is not a node
        (((0, 2),), 2**62, 0, "more than"),  # int64 wrapped round: a negative batch
        (((0, 4), (1, 4)), 2**51, 0, "more than"),  # 8 x 2**51 = 2**54
    ],
)
def test_an_allocation_of_fractional_gpus_or_an_overflowing_batch_is_refused(
    placement: tuple[tuple[Any, Any], ...], atomic: Any, accum: Any, says: str
) -> None:
    """What a policy written in a notebook may return by mistake is refused where it is made,
    naming the value, instead of running as 1.5 GPUs or a batch numpy's int64 wraps round;
    numpy's own integers are whole numbers (a policy computing with numpy may return them),
    and the largest batch allowed (2**53) is accepted."""
    import numpy as np

    with pytest.raises(ValueError, match=says):
        Allocation(placement, atomic, accum)
    whole = Allocation(((np.int64(0), np.int64(2)),), np.int64(8), np.int64(1))
    assert whole.batch_size == 32
    assert Allocation(((0, 2),), 2**52, 0).batch_size == 2**53


def test_pollux_resizes_and_rigid_policies_do_not(
    mixed_workload: ElasticWorkload, small_cluster: ElasticCluster
) -> None:
    """Pollux changes GPU counts over time; LAS and FIFO always give the asked count."""
    asked = {j.name: min(j.asked_replicas, 8) for j in mixed_workload.jobs}
    for policy in (LasPollux(), FifoRigid()):
        result = simulate_elastic(mixed_workload, policy, small_cluster)
        for record in result.records:
            assert all(a.replicas == asked[n] for n, a in record.allocations.items())
    pollux = simulate_elastic(mixed_workload, Pollux(), small_cluster)
    counts = {(n, a.replicas) for r in pollux.records for n, a in r.allocations.items()}
    assert len(counts) > len({n for n, _ in counts})


def test_las_demotes_after_the_threshold() -> None:
    """With a 1-GPU-minute threshold, a long job yields to a later short one (Tiresias's LAS).

    Two 1-GPU BERT jobs on one GPU: the first runs, exceeds the threshold,
    is demoted, so the second (in queue 0) preempts it at the next round.
    """
    jobs = (
        ElasticJob("long", "bert", 0.0, 1, 12),
        ElasticJob("short", "bert", 30.0, 1, 12, epochs=1),
    )
    result = simulate_elastic(
        ElasticWorkload(jobs), LasPollux(threshold=60.0), ElasticCluster(1, 1)
    )
    assert set(result.records[0].allocations) == {"long"}
    assert set(result.records[1].allocations) == {"short"}
    assert check_elastic(result) == []


def test_params_are_validated() -> None:
    """Simulation settings name the bad field."""
    with pytest.raises(ValueError, match="round_length"):
        ElasticSimParams(round_length=0)


def test_a_policy_sees_restarts_after_the_first_start_only() -> None:
    """Catches ``num_restarts`` handed to the policy as the count of starts (the first
    start included): Pollux's factor would then charge a job that never moved. A job kept
    on one placement sees 0 restarts every round; a job moved every round (after its
    first start in round 0) sees 0, 0, 1, 2, ... (by hand: round k has k - 1 moves). It
    sees the allocation of the round before too (none in the first)."""

    class Recorder:
        name = "recorder"

        def __init__(self, hop: bool) -> None:
            self.hop = hop
            self.seen: list[int] = []
            self.held: list[Allocation | None] = []
            self.given: list[Allocation] = []

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            self.seen.extend(j.num_restarts for j in state.jobs)
            self.held.extend(j.allocation for j in state.jobs)
            node = int(state.time // 60) % 2 if self.hop else 0
            given = {j.job.name: Allocation(((node, 1),), 12, 0) for j in state.jobs}
            self.given.extend(given.values())
            return given

    job = ElasticJob("bert-0", "bert", 0.0, 1, 12, epochs=1)
    for hop in (False, True):
        policy = Recorder(hop)
        simulate_elastic(ElasticWorkload((job,)), policy, ElasticCluster(2, 4))
        assert len(policy.seen) > 3
        expected = (
            [max(k - 1, 0) for k in range(len(policy.seen))] if hop else [0] * len(policy.seen)
        )
        assert policy.seen == expected, hop
        # Each round the policy also sees what the job ran with in the round before.
        assert policy.held == [None, *policy.given[:-1]], hop


def test_a_job_whose_work_ends_with_its_round_completes_in_that_round() -> None:
    """Catches the completion test ``now + needed <= end`` made strict: a job whose work
    ends exactly at the round's end would stay active into one more round (the policy sees
    a finished job and is asked to place it). BERT at batch 12 on one GPU, one epoch, no
    restart time, round length equal to its work (the simulator's own ``needed``): one
    round, completion at its end."""
    job = ElasticJob("bert-0", "bert", 0.0, 1, 12, epochs=1)
    app = load_application("bert", 1)
    rate = float(app.goodput(1, 1, 12, 0, 0))
    work = (min(float(app.epoch_ends[0]), app.target_progress) - 0.0) / rate
    assert app.target_progress <= float(app.epoch_ends[0])
    params = ElasticSimParams(round_length=work, restart_time=0.0)
    result = simulate_elastic(ElasticWorkload((job,)), FifoRigid(), ElasticCluster(1, 4), params)
    assert [r.time for r in result.records] == [0.0]
    assert result.completion["bert-0"] == work
    assert check_elastic(result) == []
