"""The slotted optimum of malleable jobs: MILP = brute force, bounds, certificates for policies."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES, simulate_elastic
from ddlsched.formulations.elastic import (
    MalleableInstance,
    MalleableJob,
    MalleableResult,
    brute_force_malleable,
    malleable_from_elastic,
    solve_malleable,
)

from ddlsched.core.elastic import (
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    load_application,
)


def _random_instance(seed: int) -> MalleableInstance:
    """2-3 jobs, 1-2 GPUs, 4 slots of 60 s, 30 s restarts, concave rates, releases inside slots."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(2, 4))
    capacity = int(rng.integers(1, 3))
    jobs = []
    for j in range(size):
        one = float(rng.uniform(0.5, 2.0))
        rates = (one, one * float(rng.uniform(1.0, 2.0)))
        jobs.append(
            MalleableJob(
                f"j{j}",
                float(rng.choice([0.0, 10.0, 60.0, 75.0])),
                float(rng.uniform(10.0, 70.0)),
                rates,
                float(rng.choice([1.0, 2.0])),
            )
        )
    return MalleableInstance(tuple(jobs), capacity, horizon=4 if size == 3 else 5)


@pytest.mark.parametrize("seed", range(8))
def test_milp_equals_brute_force(seed: int) -> None:
    """On tiny weighted instances the MILP's optimum is the enumerated full-slot optimum.

    The brute force simulates every width per slot (restart rule,
    interpolated completion) and shares no code with the MILP; both bounds
    lie below the optimum.
    """
    instance = _random_instance(seed)
    expected = brute_force_malleable(instance)
    if not np.isfinite(expected):
        with pytest.raises(RuntimeError, match="HiGHS status"):
            solve_malleable(instance)
        return
    result = solve_malleable(instance)
    assert result.optimal
    assert result.objective == pytest.approx(expected, rel=1e-6)
    assert result.lp_bound <= result.objective + 1e-6
    assert result.job_bound <= result.objective + 1e-6


def test_by_hand_two_jobs_one_gpu() -> None:
    """Two jobs of 15 s work on one GPU at rate 1, both at 0: 30 s restart each.

    Slot 0: a runs (30 s restart, 15 s work): C_a = 45. Slot 1: b, C_b =
    60 + 45 = 105. Sum 150 (either order), and the widths say so.
    """
    jobs = (MalleableJob("a", 0.0, 15.0, (1.0,)), MalleableJob("b", 0.0, 15.0, (1.0,)))
    instance = MalleableInstance(jobs, 1, 3)
    result = solve_malleable(instance)
    assert result.objective == pytest.approx(150.0)
    assert sorted(result.completion.values()) == pytest.approx([45.0, 105.0])
    assert brute_force_malleable(instance) == pytest.approx(150.0)
    assert result.mean_jct(instance) == pytest.approx(75.0)


Certified = tuple[ElasticWorkload, ElasticCluster, MalleableInstance, MalleableResult]


@pytest.fixture(scope="module")
def certified() -> Certified:
    """Three one-epoch jobs on one 4-GPU node (cifar10, deepspeech2, cifar10 arriving later).

    Interesting because the jobs overlap, scale differently (deepspeech2
    barely gains past 2 GPUs) and one arrives inside a round.
    """
    workload = ElasticWorkload(
        (
            ElasticJob("c1", "cifar10", 0.0, 2, 256, 1),
            ElasticJob("d1", "deepspeech2", 20.0, 1, 20, 1),
            ElasticJob("c2", "cifar10", 70.0, 1, 128, 1),
        )
    )
    cluster = ElasticCluster(1, 4)
    instance = malleable_from_elastic(workload, cluster)
    return workload, cluster, instance, solve_malleable(instance)


@pytest.mark.parametrize("name", ELASTIC_POLICIES.names())
def test_every_policy_is_at_least_the_slotted_optimum(name: str, certified: Certified) -> None:
    """Each policy's sum of completion times is >= OPT on the same grid and restart rule.

    Valid because the run ends within the MILP's horizon (checked) and the
    MILP's rates are the best any policy can get per width.
    """
    workload, cluster, instance, optimum = certified
    result = simulate_elastic(workload, ELASTIC_POLICIES[name](), cluster)
    assert max(result.completion.values()) <= instance.horizon * instance.slot_length
    assert sum(result.completion.values()) >= optimum.objective * (1 - 1e-7)
    assert result.mean_jct >= optimum.mean_jct(instance) * (1 - 1e-7)


def test_optimum_bounds_on_the_elastic_instance(certified: Certified) -> None:
    """The LP relaxation and the job bound are below the optimum; the optimum is proven."""
    _, _, _, optimum = certified
    assert optimum.optimal
    assert max(optimum.lp_bound, optimum.job_bound) <= optimum.objective + 1e-6


def test_multi_epoch_jobs_are_refused() -> None:
    """Goodput changes with the epoch, so only one-epoch jobs convert (named in the error)."""
    workload = ElasticWorkload((ElasticJob("b", "bert", 0.0, 1, 12, 2),))
    with pytest.raises(ValueError, match="b: 2 epochs"):
        malleable_from_elastic(workload, ElasticCluster(1, 4))


def test_instances_are_validated() -> None:
    """Bad fields are named: negative work, restart longer than a slot, duplicate names."""
    with pytest.raises(ValueError, match=r"MalleableJob\.work"):
        MalleableJob("a", 0.0, 0.0, (1.0,))
    job = MalleableJob("a", 0.0, 1.0, (1.0,))
    with pytest.raises(ValueError, match="restart_time"):
        MalleableInstance((job,), 1, 2, 60.0, 61.0)
    with pytest.raises(ValueError, match="unique names"):
        MalleableInstance((job, job), 1, 2)


@pytest.mark.parametrize(("model", "batch"), [("yolov3", 8), ("bert", 12), ("ncf", 32768)])
def test_each_malleable_rate_is_what_the_simulator_runs_at(model: str, batch: int) -> None:
    """Catches the malleable rates taken from another epoch's goodput (``best_batch(...,
    1)`` for the one epoch 0 these jobs have: yolov3 on 2 GPUs would get 4.36 instead of
    2.97 per second, an "optimum" no run can reach). A one-epoch job alone, held on 1, 2
    and 4 GPUs of one node, once at each configuration the policies choose from (the best
    batch of epoch 0, the asked batch): the rate at that width is the work over the
    fastest run's time after its 30 s restart."""
    from ddlsched.algorithms.elastic.simulator import Allocation, RoundState

    class Hold:
        name = "hold"

        def __init__(self, allocation: Allocation) -> None:
            self.allocation = allocation

        def allocate(self, state: RoundState) -> dict[str, Allocation]:
            return {"j": self.allocation}

    job = ElasticJob("j", model, 0.0, 1, batch, 1)
    cluster = ElasticCluster(1, 4)
    (malleable,) = malleable_from_elastic(ElasticWorkload((job,)), cluster).jobs
    app = load_application(model, 1)
    for k in (1, 2, 4):
        best = app.best_batch(1, k, 0)
        fastest = math.inf
        for atomic, accum in ((best.atomic_bsz, best.accum_steps), app.rigid_batch(k, batch)):
            held = Hold(Allocation(((0, k),), atomic, accum))
            run = simulate_elastic(ElasticWorkload((job,)), held, cluster)
            fastest = min(fastest, run.completion["j"])
        assert malleable.rates[k - 1] == pytest.approx(
            malleable.work / (fastest - 30.0), rel=1e-9
        ), (model, k)
