"""Views and oracle predictors: no true counts leak; the noisy oracle is seeded."""

from __future__ import annotations

import numpy as np

from algorithms.policies import GreedyASRPT
from algorithms.prediction import JobView, NoisyOraclePredictor
from algorithms.registry import POLICIES as REGISTERED_POLICIES
from algorithms.simulator import simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Job
from proofs_checks.verifier import verify

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
