"""asrpt-elastic: the round's exact choice, its restart pricing, its remaining-time predictor."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest
from ddlsched.algorithms.elastic import simulate_elastic
from ddlsched.algorithms.elastic.asrpt_elastic import AsrptElastic, AsrptElasticParams
from ddlsched.algorithms.elastic.remaining import RemainingTime
from ddlsched.algorithms.elastic.round_milp import solve_choice
from ddlsched.algorithms.elastic.simulator import (
    Allocation,
    ElasticSimParams,
    JobState,
    RoundState,
    application_of,
)
from ddlsched.proofs_checks.elastic import check_elastic
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.elastic import ElasticCluster, ElasticJob, ElasticWorkload

ROUND, DELAY = 60.0, 30.0


def _best(app, gpus: int, per_node: int, epoch: int) -> float:
    """Best-batch goodput of ``gpus`` GPUs (one node, or whole nodes) during ``epoch``."""
    nodes = 1 if gpus <= per_node else gpus // per_node
    return app.best_batch(nodes, gpus, epoch).goodput


def _seconds_left(job: JobState, gpus: int, per_node: int) -> float:
    """Remaining seconds at ``gpus``, epoch by epoch, written from the model alone."""
    app, total, progress = job.app, 0.0, job.progress
    for epoch in range(app.epochs):
        end = float(app.epoch_ends[epoch])
        if end > progress:
            total += (end - progress) / _best(app, gpus, per_node, epoch)
            progress = end
    return total


def _term(state: RoundState, job: JobState, k: int, params: AsrptElasticParams) -> float:
    """Job ``job``'s term of the round's objective at ``k`` GPUs: w / (s f + epsilon)."""
    per_node = state.cluster.gpus_per_node
    fair = math.ceil(state.cluster.total_gpus / len(state.jobs))
    weight = (_seconds_left(job, 1, per_node) / state.round_length) ** -params.srpt_power
    good = _best(job.app, k, per_node, job.epoch) if k else 0.0
    if good == 0:
        return weight / params.epsilon
    speedup = good / job.app.best_batch(1, fair, job.epoch).goodput / per_node
    held = job.allocation.replicas if job.allocation else 0
    if k != held:
        age_factor = max(job.age - job.num_restarts * DELAY, 0) / (job.age + DELAY)
        left = _seconds_left(job, k, per_node)
        idle = params.restart_weight * DELAY * max(1.0, k / fair)
        speedup *= age_factor * left / (left + idle)
    return weight / (speedup + params.epsilon)


def _brute_force(
    state: RoundState, params: AsrptElasticParams
) -> tuple[float, dict[tuple[int, ...], float]]:
    """The objective of every combination of widths that fits (0, 1, 2, 4 GPUs, whole
    nodes per job), and the least of them."""
    widths = (0, 1, 2, 4, *range(8, state.cluster.total_gpus + 1, 4))
    terms = [{k: _term(state, job, k, params) for k in widths} for job in state.jobs]
    values = {
        combo: sum(t[k] for t, k in zip(terms, combo, strict=True))
        for combo in itertools.product(widths, repeat=len(state.jobs))
        if sum(combo) <= state.cluster.total_gpus
    }
    return min(values.values()), values


def _job_state(job: ElasticJob, progress: float, held: int, age: float, restarts: int) -> JobState:
    app = application_of(job)
    alloc = None
    if held:
        atomic, accum = app.rigid_batch(held, job.asked_batch_size)
        alloc = Allocation(((0, held),), atomic, accum)
    return JobState(job, app, progress, alloc, restarts, 0.0, age)


ROUNDS = [
    # Three fresh jobs of different lengths on one node: who gets the 4 GPUs.
    ([("cifar10", 2, 0.0, 0), ("bert", 1, 0.0, 0), ("deepspeech2", 2, 0.0, 0)], 1),
    # Mid-run jobs holding GPUs on two nodes: resizing against restart prices.
    ([("cifar10", 3, 0.5, 2), ("yolov3", 1, 0.2, 4), ("bert", 1, 0.7, 1)], 2),
    # Four jobs, one a nearly finished cifar10: SRPT weight against fairness.
    (
        [
            ("cifar10", 2, 0.9, 1),
            ("cifar10", 2, 0.1, 0),
            ("bert", 1, 0.4, 2),
            ("imagenet", 1, 0.0, 0),
        ],
        2,
    ),
]


@pytest.mark.parametrize(("rows", "nodes"), ROUNDS)
@pytest.mark.parametrize(
    "params", [AsrptElasticParams(), AsrptElasticParams(srpt_power=1.0, restart_weight=0.5)]
)
def test_round_choice_equals_a_brute_force(rows, nodes: int, params: AsrptElasticParams) -> None:
    """The exact round's widths reach the least objective over every combination of widths.

    The brute force enumerates 0, 1, 2, 4 GPUs (and whole nodes) per job within
    the cluster and evaluates the objective written from its definition with the
    model's best-batch goodputs (no policy code); the policy's choice, evaluated
    the same way, must equal the minimum (several jobs, held GPUs, restarts
    priced, several epochs, weighted by remaining time).
    """
    jobs = []
    for number, (model, epochs, done, held) in enumerate(rows):
        job = ElasticJob(f"{model}-{number}", model, 0.0, 1, 128, epochs)
        progress = done * application_of(job).target_progress
        jobs.append(_job_state(job, progress, held, 900.0 + 300 * number, number % 2))
    cluster = ElasticCluster(nodes, 4)
    state = RoundState(1200.0, cluster, tuple(jobs), ROUND, DELAY)
    policy = AsrptElastic(params)
    problem, options = policy.problem(state)
    picks = solve_choice(problem)
    chosen = tuple(opts.gpus[c] for opts, c in zip(options, picks, strict=True))
    best, values = _brute_force(state, params)
    assert values[chosen] == pytest.approx(best, rel=1e-9)


@st.composite
def tiny_rounds(draw: st.DrawFn) -> RoundState:
    """Two or three jobs (several models, 1-2 epochs, any progress, 0-4 GPUs held, ages,
    restarts) on one or two 4-GPU nodes."""
    nodes = draw(st.integers(1, 2))
    jobs = []
    for number in range(draw(st.integers(2, 3))):
        model = draw(st.sampled_from(["cifar10", "bert", "deepspeech2", "yolov3"]))
        job = ElasticJob(f"{model}-{number}", model, 0.0, 1, 128, draw(st.integers(1, 2)))
        done = draw(st.floats(0.0, 0.95))
        held = draw(st.sampled_from([0, 1, 2, 4]))
        age = draw(st.floats(30.0, 1e5))
        restarts = draw(st.integers(0, 3))
        progress = done * application_of(job).target_progress
        jobs.append(_job_state(job, progress, held, age, restarts))
    return RoundState(age, ElasticCluster(nodes, 4), tuple(jobs), ROUND, DELAY)


@settings(max_examples=12, deadline=None)
@given(state=tiny_rounds(), power=st.sampled_from([0.0, 0.5, 1.5]))
def test_round_choice_equals_a_brute_force_on_drawn_rounds(
    state: RoundState, power: float
) -> None:
    """On drawn tiny rounds the exact choice reaches the brute force's least objective."""
    params = AsrptElasticParams(srpt_power=power)
    problem, options = AsrptElastic(params).problem(state)
    picks = solve_choice(problem)
    chosen = tuple(opts.gpus[c] for opts, c in zip(options, picks, strict=True))
    best, values = _brute_force(state, params)
    assert values[chosen] == pytest.approx(best, rel=1e-9)


def _one_job_round(remaining: float, held: int) -> RoundState:
    """A one-epoch cifar10 job, ``remaining`` progress left, on ``held`` GPUs of one node."""
    job = ElasticJob("c", "cifar10", 0.0, 1, 128, 1)
    target = application_of(job).target_progress
    # Very old and never restarted: Pollux's age factor is ~1, only the new price acts.
    state = _job_state(job, target - remaining, held, 1e9, 0)
    return RoundState(1e9, ElasticCluster(1, 4), (state,), ROUND, DELAY)


def test_a_restart_that_does_not_pay_keeps_the_job() -> None:
    """2 -> 4 GPUs pays iff g4 T / (T + h d) > g2 (T: the time left on 4 GPUs, h d = 120 s).

    By hand: T* = h d g2 / (g4 - g2). With 0.8 T* left on 4 GPUs the job keeps
    its 2 GPUs (the free GPUs idle: a restart costs more than it gains); with
    1.25 T* it moves to 4.
    """
    params = AsrptElasticParams()
    app = application_of(ElasticJob("c", "cifar10", 0.0, 1, 128, 1))
    g2, g4 = (app.best_batch(1, k, 0).goodput for k in (2, 4))
    assert g4 > g2
    threshold = params.restart_weight * DELAY * g2 / (g4 - g2)
    for share, expected in ((0.8, 2), (1.25, 4)):
        state = _one_job_round(share * threshold * g4, 2)
        problem, options = AsrptElastic(params).problem(state)
        assert options[0].gpus[solve_choice(problem)[0]] == expected


def test_restart_price_grows_with_the_gpus_idled() -> None:
    """Moving to k GPUs above the fair share is charged k / fair times the delay.

    Three jobs on 12 GPUs (fair share 4): a bert job holding 4 GPUs whose only
    better option that fits is 8 pays 2 h d = 240 s beside two 1-GPU ncf jobs; its
    time at 8 GPUs decides. Checked against the closed form: it moves iff
    g8 T / (T + 240) > g4.
    """
    params = AsrptElasticParams(srpt_power=0.0)
    job = ElasticJob("b", "bert", 0.0, 1, 128, 1)
    other = ElasticJob("n", "ncf", 0.0, 1, 32768, 1)
    app = application_of(job)
    g4, g8 = app.best_batch(1, 4, 0).goodput, app.best_batch(2, 8, 0).goodput
    threshold = 2 * params.restart_weight * DELAY * g4 / (g8 - g4)
    for share, expected in ((0.9, 4), (1.1, 8)):
        state = RoundState(
            1e9,
            ElasticCluster(3, 4),
            (
                _job_state(job, app.target_progress - share * threshold * g8, 4, 1e9, 0),
                _job_state(other, 0.0, 1, 1e9, 0),
                _job_state(replace(other, name="m"), 0.0, 1, 1e9, 0),
            ),
            ROUND,
            DELAY,
        )
        problem, options = AsrptElastic(params).problem(state)
        assert options[0].gpus[solve_choice(problem)[0]] == expected


class _Fixed:
    """Every round: the one job on ``gpus`` GPUs at its epoch's best batch (no restarts)."""

    name = "fixed"

    def __init__(self, gpus: int) -> None:
        self.gpus = gpus

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        (job,) = state.jobs
        nodes = max(1, self.gpus // 4)
        placement = tuple((n, self.gpus // nodes) for n in range(nodes))
        best = job.app.best_batch(nodes, self.gpus, job.epoch)
        return {job.job.name: Allocation(placement, best.atomic_bsz, best.accum_steps)}


@pytest.mark.parametrize(("model", "epochs", "gpus"), [("cifar10", 3, 2), ("deepspeech2", 2, 8)])
def test_remaining_time_matches_a_run_on_a_fixed_width(model: str, epochs: int, gpus: int) -> None:
    """The predicted seconds on k GPUs equal what the simulator still takes on k GPUs.

    The job runs alone from time 0 with no restart delay, its batch re-chosen
    each 1 s round (so an epoch's batch is used within a second of the epoch
    boundary). From the start, and from the progress recorded after rounds a
    quarter, a half and three quarters of the way (later epochs, mid-epoch), the
    prediction must match the rest of the run within 0.5 %.
    """
    job = ElasticJob("j", model, 0.0, 1, 128, epochs)
    cluster = ElasticCluster(2, 4)
    params = ElasticSimParams(round_length=1.0, restart_time=0.0)
    result = simulate_elastic(ElasticWorkload((job,)), _Fixed(gpus), cluster, params)
    predictor = RemainingTime(AsrptElasticParams().limits)
    count = len(result.records)
    for index in (None, count // 4, count // 2, 3 * count // 4):
        progress = 0.0 if index is None else result.records[index].progress["j"]
        elapsed = 0.0 if index is None else result.records[index].time + 1.0
        now = JobState(job, application_of(job), progress, None, 0, 0.0, elapsed)
        state = RoundState(elapsed, cluster, (now,), 1.0, 0.0)
        seconds = predictor.seconds(now, state)[predictor.gpus(now, state).index(gpus)]
        assert seconds == pytest.approx(result.completion["j"] - elapsed, rel=5e-3)


def test_runs_pass_the_independent_check(mixed_workload, small_cluster) -> None:
    """On a contended two-node cluster, and on a typed one, every asrpt-elastic run checks out."""
    typed = ElasticCluster.from_type_counts([("v100", 1), ("k80", 1)])
    for cluster in (small_cluster, typed):
        result = simulate_elastic(mixed_workload, AsrptElastic(), cluster)
        assert check_elastic(result) == []
        assert set(result.completion) == {job.name for job in mixed_workload.jobs}


def test_a_shorter_job_gets_at_least_as_many_gpus() -> None:
    """Two fresh cifar10 jobs differing only in budget (1 vs 3 epochs): the shorter one
    is weighted more and gets at least as many GPUs."""
    jobs = [
        ElasticJob("long", "cifar10", 0.0, 1, 128, 3),
        ElasticJob("short", "cifar10", 0.0, 1, 128, 1),
    ]
    states = tuple(_job_state(job, 0.0, 0, 120.0, 0) for job in jobs)
    state = RoundState(120.0, ElasticCluster(1, 4), states, ROUND, DELAY)
    problem, options = AsrptElastic().problem(state)
    widths = [opts.gpus[c] for opts, c in zip(options, solve_choice(problem), strict=True)]
    assert widths[1] >= widths[0] >= 1


@pytest.mark.parametrize(
    ("field", "value"),
    [("srpt_power", -0.5), ("restart_weight", math.nan), ("reference_gpus", 0), ("epsilon", 0.0)],
)
def test_params_are_validated(field: str, value: float) -> None:
    """A bad setting is refused with a one-line error naming the field."""
    with pytest.raises(ValueError, match=field):
        AsrptElasticParams(**{field: value})
