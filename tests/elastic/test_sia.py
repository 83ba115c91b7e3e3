"""Sia's round ILP: its costs by hand, its choice equal to a brute force of Sia's objective."""

from __future__ import annotations

import itertools
import math

import pytest
from ddlsched.algorithms.elastic.policies import Sia, SiaParams, job_options, sia_costs

from ddlsched.core.elastic import ElasticCluster, ElasticJob
from tests.elastic.rounds import round_state


def sia_objective(
    goodputs: list[list[float]],
    gpus: list[list[int]],
    picks: tuple[int, ...],
    factors: list[float],
    current: list[int],
    p: float,
    lambda_n: float,
) -> float:
    """Sia's objective from its definition (minimised, p < 0), independent of sia_costs."""
    total = 0.0
    for j, c in enumerate(picks):
        if gpus[j][c] == 0:
            total += lambda_n
            continue
        base = min(g for g in goodputs[j] if g > 0)
        value = goodputs[j][c] / base
        if gpus[j][c] != current[j]:
            value *= factors[j]
        total += min(value**p, 3000.0)
    return total


def test_costs_by_hand_for_a_young_job() -> None:
    """A job younger than the restart delay: factor 1; least option costs 1^p = 1; pausing 1.1."""
    cluster = ElasticCluster(2, 4)
    state = round_state([ElasticJob("c", "cifar10", 0.0, 1, 128, 1)], cluster, 20.0)
    job = state.jobs[0]
    options = job_options(job, state, SiaParams().limits)
    costs = sia_costs(job, options, SiaParams())
    assert costs[0] == 1.1
    base = min(g for g in options.goodput if g > 0)
    for good, cost in zip(options.goodput[1:], costs[1:], strict=True):
        assert cost == pytest.approx((good / base) ** -0.5, rel=1e-12)
    assert max(costs[1:]) == pytest.approx(1.0)


def test_positive_p_maximises() -> None:
    """With p > 0 costs are negated powers (the ILP maximises sum s^p); pausing costs lambda_n."""
    cluster = ElasticCluster(1, 4)
    state = round_state([ElasticJob("c", "cifar10", 0.0, 1, 128, 1)], cluster, 10.0)
    job = state.jobs[0]
    params = SiaParams(p=0.5)
    options = job_options(job, state, params.limits)
    costs = sia_costs(job, options, params)
    base = min(g for g in options.goodput if g > 0)
    assert costs[0] == 1.1
    assert costs[1:] == pytest.approx([-((g / base) ** 0.5) for g in options.goodput[1:]])


def test_restart_factor_spares_the_current_count() -> None:
    """An old job holding 2 GPUs: the 2-GPU option is undiscounted, others by Pollux's factor."""
    cluster = ElasticCluster(2, 4)
    state = round_state(
        [ElasticJob("c", "cifar10", 0.0, 2, 256, 2)], cluster, 600.0, {"c": (0, 2)}
    )
    job = state.jobs[0]
    options = job_options(job, state, SiaParams().limits)
    costs = sia_costs(job, options, SiaParams())
    factor = (600.0 - 30.0) / (600.0 + 30.0)  # one restart so far
    base = min(g for g in options.goodput if g > 0)
    for gpus, good, cost in zip(options.gpus[1:], options.goodput[1:], costs[1:], strict=True):
        value = good / base * (1.0 if gpus == 2 else factor)
        assert cost == pytest.approx(value**-0.5, rel=1e-12)


@pytest.mark.parametrize(
    ("num_nodes", "models", "time", "held"),
    [
        (1, ["cifar10", "bert", "yolov3"], 20.0, {}),
        (2, ["cifar10", "bert", "yolov3"], 300.0, {"bert-1": (0, 2)}),
        (2, ["imagenet", "ncf", "deepspeech2", "cifar10"], 90.0, {"imagenet-0": (0, 4)}),
        (1, ["bert", "bert", "cifar10", "yolov3", "deepspeech2"], 45.0, {}),
    ],
)
def test_sia_round_equals_brute_force(
    num_nodes: int, models: list[str], time: float, held: dict[str, tuple[int, int]]
) -> None:
    """Sia's choice attains the least value of its objective over all option sets that fit.

    The brute force evaluates Sia's objective from the options' goodputs
    (normalised, discounted, powered, lambda_n for a paused job) without
    sia_costs or the MILP; the last case has more jobs than one node's
    GPUs, so some must be paused.
    """
    cluster = ElasticCluster(num_nodes, 4)
    jobs = [
        ElasticJob(f"{m}-{i}", m, 0.0, 1, 128 if m != "ncf" else 32768)
        for i, m in enumerate(models)
    ]
    state = round_state(jobs, cluster, time, held)
    policy = Sia()
    _, options = policy.problem(state)
    goodputs = [list(o.goodput) for o in options]
    gpus = [list(o.gpus) for o in options]
    current = [j.allocation.replicas if j.allocation else 0 for j in state.jobs]
    factors = [
        1.0 if j.age < 30 else max(j.age - j.num_restarts * 30, 0) / (j.age + 30)
        for j in state.jobs
    ]
    best = math.inf
    for combo in itertools.product(*[range(len(g)) for g in gpus]):
        if sum(gpus[j][c] for j, c in enumerate(combo)) <= cluster.total_gpus:
            best = min(best, sia_objective(goodputs, gpus, combo, factors, current, -0.5, 1.1))
    allocations = policy.allocate(state)
    chosen = tuple(
        gpus[j].index(allocations[job.job.name].replicas if job.job.name in allocations else 0)
        for j, job in enumerate(state.jobs)
    )
    assert sia_objective(goodputs, gpus, chosen, factors, current, -0.5, 1.1) == pytest.approx(
        best, rel=1e-9
    )


def test_params_are_validated() -> None:
    """p = 0 (no power mean) and a non-positive clip are refused, naming the field."""
    with pytest.raises(ValueError, match=r"SiaParams\.p"):
        SiaParams(p=0.0)
    with pytest.raises(ValueError, match=r"SiaParams\.clip"):
        SiaParams(clip=0.0)
