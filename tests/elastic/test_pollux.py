"""Pollux's re-allocation factor and costs, by hand (Qiao et al., OSDI 2021, Section 4.2)."""

from __future__ import annotations

import pytest
from ddlsched.algorithms.elastic.policies import (
    JobOptions,
    PolluxParams,
    pollux_costs,
    realloc_factor,
)
from ddlsched.algorithms.elastic.simulator import Allocation, JobState, RoundState, application_of

from ddlsched.core.elastic import ElasticCluster, ElasticJob


def _held(gpus: int, age: float, num_restarts: int) -> JobState:
    """A BERT job holding ``gpus`` GPUs on node 0, ``age`` s old, restarted so often."""
    job = ElasticJob("bert-0", "bert", 0.0, gpus, 12 * gpus)
    app = application_of(job)
    alloc = Allocation(((0, gpus),), 12, 0) if gpus else None
    return JobState(job, app, 0.0, alloc, num_restarts, 0.0, age)


@pytest.mark.parametrize(
    ("age", "num_restarts", "expected"),
    [
        (60.0, 1, 30.0 / 90.0),  # (60 - 30) / (60 + 30)
        (60.0, 0, 60.0 / 90.0),
        (60.0, 2, 0.0),  # 60 - 60 = 0: nothing left
        (30.0, 2, 0.0),  # 30 - 60 < 0 is clamped: never a negative value
        (0.0, 0, 0.0),  # a new job: 0 / 30
    ],
)
def test_realloc_factor_by_hand_and_clamped_at_zero(
    age: float, num_restarts: int, expected: float
) -> None:
    """Catches the clamp ``max(age - lost, 0)`` dropped (age 30 after two restarts of
    30 s would give (30 - 60) / 60 = -0.5, a negative factor that turns a move's value
    into a cost) and restarts charged wrongly; hand values of
    ``max(age - restarts x delta, 0) / (age + delta)`` with delta 30."""
    job = _held(4, age, num_restarts)
    assert realloc_factor(job, 30.0) == pytest.approx(expected, abs=1e-15)
    assert realloc_factor(job, 30.0) >= 0.0


def test_pollux_penalises_only_the_options_that_move_the_job() -> None:
    """Catches the factor applied to the job's current GPU count instead of the others
    (``gpus != current`` flipped). A job holding 4 GPUs on 4-GPU nodes, age 60, one
    restart: factor (60 - 30) / 90 = 1/3. Speedups 0, 1, 2, 3 for 0, 1, 2, 4 GPUs give
    scaled speedups 0, 1/4 x 1/3, 2/4 x 1/3 and (unpenalised, it stays) 3/4; the cost
    of each is 1 / (scaled + 1e-3)."""
    job = _held(4, 60.0, 1)
    options = JobOptions(
        gpus=(0, 1, 2, 4),
        nodes=(0, 1, 1, 1),
        atomic=(0, 12, 12, 12),
        accum=(0, 0, 0, 0),
        goodput=(0.0, 1.0, 2.0, 3.0),
        fair_goodput=1.0,
    )
    state = RoundState(60.0, ElasticCluster(2, 4), (job,), 60.0, 30.0)
    params = PolluxParams()
    costs = pollux_costs(job, options, state, params)
    scaled = [0.0, 0.25 / 3.0, 0.5 / 3.0, 0.75]
    assert costs == pytest.approx([1.0 / (s + 1e-3) for s in scaled], rel=1e-12)
    # Staying is the cheapest option; the slip would make it the dearest but one.
    assert min(range(4), key=costs.__getitem__) == 3


@pytest.mark.parametrize("model", ["ncf", "cifar10"])
def test_the_fair_share_goodput_is_that_of_one_node(model: str) -> None:
    """Catches Pollux's base (the goodput at the fair share, which every speedup divides
    by) computed on two nodes instead of one, on the fixed-batch path (ncf at 32768) or
    the searched one. Two jobs on 2 x 4 GPUs, no per-model cap: the fair share is 4 GPUs,
    one of the options, on one node; its goodput must be the base."""
    from ddlsched.algorithms.elastic.policies import OptionLimits, job_options

    cluster = ElasticCluster(2, 4)
    jobs = [
        ElasticJob(f"{model}-{i}", model, 0.0, 1, 32768 if model == "ncf" else 128)
        for i in range(2)
    ]
    states = tuple(JobState(job, application_of(job), 0.0, None, 0, 0.0, 0.0) for job in jobs)
    state = RoundState(0.0, cluster, states, 60.0, 30.0)
    options = job_options(states[0], state, OptionLimits(max_replicas={}))
    four = options.gpus.index(4)
    assert options.nodes[four] == 1
    assert options.fair_goodput == pytest.approx(options.goodput[four], rel=1e-12)
    assert options.speedup[four] == pytest.approx(1.0, rel=1e-12)
