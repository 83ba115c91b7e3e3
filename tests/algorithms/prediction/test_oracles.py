"""Views and oracle predictors: no true counts leak; the noisy oracle is seeded."""

from __future__ import annotations

import numpy as np
import pytest
from ddlsched.algorithms.policies import GreedyASRPT
from ddlsched.algorithms.prediction import JobView, NoisyOraclePredictor
from ddlsched.algorithms.registry import POLICIES as REGISTERED_POLICIES
from ddlsched.algorithms.simulator import simulate
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Cluster, Instance, Job

POLICIES = REGISTERED_POLICIES.names()


def test_views_hide_iterations() -> None:
    """Policies get JobViews, which carry no iteration count."""
    job = Job(id="a", release=0.0, iterations=7, compute_time=1.0, gpus=1)
    view = JobView.of(job)
    assert not hasattr(view, "iterations")


def test_noisy_predictor_seeded_and_adaptive_rule() -> None:
    """Same seed, same predictions; underestimated jobs get their prediction doubled."""
    instance = generate(GeneratorConfig(num_jobs=12, load=1.0), 4)
    views = [JobView.of(j) for j in instance.jobs]
    a = [NoisyOraclePredictor(instance, 0.8, np.random.default_rng(5)).predict(v) for v in views]
    b = [NoisyOraclePredictor(instance, 0.8, np.random.default_rng(5)).predict(v) for v in views]
    assert a == b
    policy = GreedyASRPT(
        instance.cluster, NoisyOraclePredictor(instance, 0.8, np.random.default_rng(5))
    )
    first = simulate(instance, policy)
    assert first.schedule is not None and verify(instance, first.schedule).feasible
    truth = {j.id: j.iterations for j in instance.jobs}
    entries = {e.id: e for e in first.schedule.jobs}
    last_decision = max(e.start for e in entries.values())
    under = [k for k, v in policy.predicted.items() if v < truth[k]]
    # A job whose predicted end passed before the last decision was revised
    # upward until its prediction reached the truth (or it completed).
    for job_id in under:
        entry = entries[job_id]
        alpha_job = (entry.end - entry.start) / truth[job_id]  # type: ignore[operator]
        assert entry.start + policy.predicted[job_id] * alpha_job >= last_decision - 1e-9
    assert len(under) < len(truth)


@pytest.mark.parametrize(("distribution", "sigma"), [("lognormal", 3.0), ("uniform", 0.99)])
def test_noisy_oracle_never_predicts_below_one_iteration(distribution: str, sigma: float) -> None:
    """The noisy oracle's ``K_hat`` is at least 1 iteration, whatever the error drawn.

    One-iteration jobs under a large error: about half the draws scale the
    truth below 1, and each must come out as exactly 1; the others keep
    their drawn value above 1 (the clamp is a floor, not a constant).

    Catches the slips: the ``max(1, ...)`` floor dropped, or applied to the
    error factor instead of the count.
    """
    jobs = tuple(
        Job(id=f"j{k}", release=0.0, iterations=1, compute_time=1.0, gpus=1) for k in range(200)
    )
    instance = Instance(Cluster((1,), 1.0, 1.0), jobs)
    predictor = NoisyOraclePredictor(instance, sigma, np.random.default_rng(0), distribution)
    predictions = np.array([predictor.predict(JobView.of(job)) for job in jobs])
    assert predictions.min() == 1.0
    assert 40 < np.sum(predictions == 1.0) < 160
    assert np.all((predictions == 1.0) | (predictions > 1.0))
    assert predictions.max() > 1.5


def test_noisy_oracle_floor_is_on_the_count_not_the_factor() -> None:
    """On a 10-iteration job, an error factor below 1 still lowers the prediction
    (to no less than 1): the floor is on ``K_hat``, not on the factor.

    Catches the slip: ``max(1, factor)`` (then no job is ever underestimated).
    """
    job = Job(id="j", release=0.0, iterations=10, compute_time=1.0, gpus=1)
    instance = Instance(Cluster((1,), 1.0, 1.0), (job,))
    predictor = NoisyOraclePredictor(instance, 1.0, np.random.default_rng(0))
    predictions = np.array([predictor.predict(JobView.of(job)) for _ in range(100)])
    assert predictions.min() >= 1.0
    assert np.sum(predictions < 10.0) > 20
