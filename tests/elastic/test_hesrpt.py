"""asrpt-elastic: heSRPT's closed form against the fluid optimum, and its widths by hand."""

from __future__ import annotations

import numpy as np
import pytest
from ddlsched.algorithms.elastic.hesrpt import (
    AsrptElastic,
    AsrptElasticParams,
    discretise_widths,
    fit_exponent,
    hesrpt_fractions,
    keep_unless_worth_moving,
)
from ddlsched.algorithms.elastic.policies import JobOptions
from ddlsched.algorithms.elastic.simulator import Allocation, JobState, RoundState, application_of
from scipy.optimize import minimize

from ddlsched.core.elastic import ElasticCluster, ElasticJob


def fluid_flow_time(
    sizes: list[float], shares: list[np.ndarray], servers: float, p: float
) -> float:
    """Total flow time of the fluid model: phase l gives shares[l][r] to the job of rank r.

    Ranks are by remaining size, shortest first; a phase ends when a job
    finishes; speed on ``k`` servers is ``k^p``. Written from the model, not
    from the policy's code.
    """
    left = sorted(sizes)
    now, total = 0.0, 0.0
    for share in shares:
        speeds = (np.asarray(share) * servers) ** p
        times = [x / s if s > 0 else np.inf for x, s in zip(left, speeds, strict=True)]
        first = int(np.argmin(times))
        step = times[first]
        now += step
        total += now
        left = sorted(
            x - s * step for i, (x, s) in enumerate(zip(left, speeds, strict=True)) if i != first
        )
    return total


@pytest.mark.parametrize(
    ("sizes", "p"), [([3.0, 10.0], 0.5), ([2.0, 5.0, 9.0], 0.4), ([1.0, 1.5, 6.0], 0.8)]
)
def test_closed_form_is_the_fluid_optimum(sizes: list[float], p: float) -> None:
    """No allocation a numerical optimiser finds beats heSRPT's on the fluid model (no arrivals).

    Free shares per phase (a softmax per phase), Nelder-Mead from several
    starts; heSRPT's total flow time must be the least, within 1e-6.
    """
    servers = 8.0
    closed = fluid_flow_time(
        sizes, [hesrpt_fractions(m, p) for m in range(len(sizes), 0, -1)], servers, p
    )

    def unpack(vector: np.ndarray) -> list[np.ndarray]:
        shares, at = [], 0
        for m in range(len(sizes), 0, -1):
            raw = np.exp(vector[at : at + m])
            shares.append(raw / raw.sum())
            at += m
        return shares

    size = sum(range(1, len(sizes) + 1))
    rng = np.random.default_rng(0)
    best = np.inf
    for _ in range(6):
        result = minimize(
            lambda v: fluid_flow_time(sizes, unpack(v), servers, p),
            rng.normal(size=size),
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000},
        )
        best = min(best, result.fun)
    assert closed <= best + 1e-6 * best


def test_fractions_by_hand() -> None:
    """m = 2, p = 0.5: the shorter gets 1 - (1/2)^2 = 3/4, the longer 1/4; they sum to 1."""
    assert hesrpt_fractions(2, 0.5) == pytest.approx([0.75, 0.25])
    shares = hesrpt_fractions(5, 0.3)
    assert shares.sum() == pytest.approx(1.0)
    assert np.all(np.diff(shares) < 0)  # shorter jobs get more
    assert hesrpt_fractions(3, 0.0) == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError, match="exponent"):
        hesrpt_fractions(2, 1.0)


def test_fit_exponent_recovers_a_power_law() -> None:
    """Goodputs exactly k^0.6 give p = 0.6; no 1-GPU option gives None."""
    gpus = (0, 1, 2, 4, 8)
    assert fit_exponent(gpus, [0.0] + [k**0.6 for k in gpus[1:]]) == pytest.approx(0.6)
    assert fit_exponent((0, 2, 4), (0.0, 1.0, 2.0)) is None


def _options(goodput: dict[int, float]) -> JobOptions:
    gpus = (0, *goodput)
    return JobOptions(
        gpus,
        tuple(1 if g else 0 for g in gpus),
        (0,) + (1,) * len(goodput),
        (0,) * len(gpus),
        (0.0, *goodput.values()),
        1.0,
    )


def test_discretise_widths_by_hand() -> None:
    """Targets 5.6, 1.6, 0.8 on 8 GPUs with options 1, 2, 4: 4, 1, 1 then the shortest grows.

    Pass 1, shortest first: job 0 takes 4 (largest option <= 5.6), job 1
    takes 1 (<= 1.6), job 2 takes 1 (a target below 1 still gets one GPU);
    2 GPUs left. Pass 2: job 0 cannot grow (no option in 5..6), job 1
    grows to 2 (higher goodput), 1 left; job 2 holds 1, so 2 fits and it
    grows too. All 8 used.
    """
    options = [_options({1: 1.0, 2: 1.8, 4: 3.0})] * 3
    picks = discretise_widths([0, 1, 2], [5.6, 1.6, 0.8], options, 8)
    assert [options[j].gpus[c] for j, c in enumerate(picks)] == [4, 2, 2]


def test_discretise_skips_widths_of_lower_goodput() -> None:
    """A job whose 4-GPU goodput is below its 2-GPU goodput takes 2 even when 4 fit."""
    options = [_options({1: 1.0, 2: 1.5, 4: 1.2})]
    picks = discretise_widths([0], [4.0], options, 4)
    assert options[0].gpus[picks[0]] == 2


def test_waiting_when_more_jobs_than_gpus() -> None:
    """Three jobs on 2 GPUs: the two shortest run on one GPU each, the longest waits."""
    options = [_options({1: 1.0, 2: 1.5})] * 3
    picks = discretise_widths([2, 0, 1], [1.0, 0.3, 0.7], options, 2)
    assert [options[j].gpus[c] for j, c in enumerate(picks)] == [1, 0, 1]


def _state_holding(held: int, progress: float) -> RoundState:
    job = ElasticJob("c", "cifar10", 0.0, 2, 256, 3)
    app = application_of(job)
    alloc = Allocation(((0, held),), *app.rigid_batch(held, 256))
    return RoundState(
        600.0,
        ElasticCluster(1, 4),
        (JobState(job, app, progress, alloc, 0, 0.0, 600.0),),
        60.0,
        30.0,
    )


def test_keep_unless_worth_moving_by_hand() -> None:
    """Moving 2 -> 4 GPUs with goodputs 1.8 -> 3.0: pays iff 3.0 (T - 30) > 1.8 T, T = rest / 3.0.

    That is T > 75 s, i.e. remaining progress > 225. A job near its end keeps
    its 2 GPUs; a job far from it moves.
    """
    options = [_options({1: 1.0, 2: 1.8, 4: 3.0})]
    target = application_of(ElasticJob("c", "cifar10", 0.0, 2, 256, 3)).target_progress
    near = _state_holding(2, target - 200.0)  # T = 66.7 s < 75 s
    assert options[0].gpus[keep_unless_worth_moving(near, [0], options, [3])[0]] == 2
    far = _state_holding(2, target - 300.0)  # T = 100 s > 75 s
    assert options[0].gpus[keep_unless_worth_moving(far, [0], options, [3])[0]] == 4


def test_a_kept_job_may_use_exactly_the_free_gpus() -> None:
    """Catches ``held - new <= left`` made strict: a job holding 4 GPUs of a 4-GPU node,
    picked to shrink to 2 (goodput 3.0 -> 1.8: staying always pays), leaves exactly 2 GPUs
    free, exactly what keeping its 4 needs: it keeps them. Picked down to 1, with the other
    3 free, it keeps 4 as well; the same job beside a second one holding 1 GPU of the
    2 left cannot (1 free, 2 needed)."""
    options = [_options({1: 1.0, 2: 1.8, 4: 3.0})]
    state = _state_holding(4, 100.0)
    assert options[0].gpus[keep_unless_worth_moving(state, [0], options, [2])[0]] == 4
    assert options[0].gpus[keep_unless_worth_moving(state, [0], options, [1])[0]] == 4
    other = ElasticJob("d", "cifar10", 0.0, 1, 128, 3)
    crowded = RoundState(
        state.time,
        state.cluster,
        (*state.jobs, JobState(other, application_of(other), 0.0, None, 0, 0.0, 600.0)),
        60.0,
        30.0,
    )
    both = [*options, _options({1: 1.0})]
    kept = keep_unless_worth_moving(crowded, [0, 1], both, [2, 1])
    assert [both[0].gpus[kept[0]], both[1].gpus[kept[1]]] == [2, 1]


def test_plan_orders_by_remaining_work_at_one_gpu() -> None:
    """A short cifar10 job ranks before a long bert job and gets at least as many GPUs."""
    jobs = (
        ElasticJob("bert", "bert", 0.0, 1, 12, 2),
        ElasticJob("cifar", "cifar10", 0.0, 1, 128, 1),
    )
    cluster = ElasticCluster(2, 4)
    state = RoundState(
        0.0,
        cluster,
        tuple(JobState(j, application_of(j), 0.0, None, 0, 0.0, 0.0) for j in jobs),
        60.0,
        30.0,
    )
    options, order, exponent, picks = AsrptElastic().plan(state)
    assert order == [1, 0]
    assert 0.05 <= exponent <= 0.95
    widths = [options[j].gpus[c] for j, c in enumerate(picks)]
    assert widths[1] >= widths[0] >= 1 and sum(widths) <= cluster.total_gpus


def test_params_are_validated() -> None:
    """An exponent range reaching 1 (heSRPT undefined) is refused, naming the field."""
    with pytest.raises(ValueError, match="exponent_range"):
        AsrptElasticParams(exponent_range=(0.1, 1.0))
