"""Legal but extreme elastic settings and inputs: free restarts, oversized batches,
budgets past a model's profile."""

from __future__ import annotations

import math
import re

import pytest
from ddlsched.algorithms.elastic import ELASTIC_POLICIES
from ddlsched.algorithms.elastic.simulator import ElasticSimParams, simulate_elastic
from ddlsched.formulations import elastic_lagrangian
from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound
from ddlsched.proofs_checks.elastic import check_elastic

from ddlsched.core.elastic import (
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    load_application,
)


@pytest.mark.parametrize("policy", sorted(ELASTIC_POLICIES.names()))
def test_every_policy_runs_with_free_restarts(policy: str) -> None:
    """Restart time 0 is a legal setting: every policy completes a one-job run (a fresh
    job has age 0, so Pollux's re-allocation factor meets ``0 / 0``) and the run passes
    the independent check."""
    job = ElasticJob("a", "bert", 0.0, 1, 12, epochs=1)
    result = simulate_elastic(
        ElasticWorkload((job,)),
        ELASTIC_POLICIES[policy](),
        ElasticCluster(1, 2),
        ElasticSimParams(restart_time=0.0),
    )
    assert check_elastic(result) == []
    assert result.completion["a"] > 0


def test_fifo_with_free_restarts_completes_at_the_hand_computed_time() -> None:
    """BERT at its initial batch on one GPU with no restart cost: it starts at 0 and needs
    ``target`` iterations of ``alpha_grad + 12 beta_grad`` seconds, nothing more."""
    job = ElasticJob("a", "bert", 0.0, 1, 12, epochs=1)
    result = simulate_elastic(
        ElasticWorkload((job,)),
        ELASTIC_POLICIES["fifo"](),
        ElasticCluster(1, 2),
        ElasticSimParams(restart_time=0.0),
    )
    app = load_application("bert", 1)
    work = app.target_progress * (app.perf.alpha_grad + 12 * app.perf.beta_grad)
    assert result.completion["a"] == pytest.approx(work, rel=1e-9)


def test_a_batch_above_the_models_largest_runs_at_the_largest() -> None:
    """A rigid job asking a batch far above its model's ``max_batch_size`` runs exactly
    as one asking that largest batch (it completes, rather than running at zero speed)."""
    runs = []
    for batch in (999_999_999_999, load_application("bert").max_batch_size):
        job = ElasticJob("a", "bert", 0.0, 1, batch, epochs=1)
        result = simulate_elastic(
            ElasticWorkload((job,)), ELASTIC_POLICIES["fifo"](), ElasticCluster(1, 2)
        )
        assert check_elastic(result) == []
        runs.append(result.completion["a"])
    assert runs[0] == runs[1]


@pytest.mark.parametrize(("model", "most"), [("bert", 2), ("ncf", 10), ("cifar10", 100)])
def test_epochs_past_the_models_profile_are_refused_naming_job_model_and_range(
    model: str, most: int
) -> None:
    """A budget beyond the epochs the model's profile covers is refused when the job is
    built, naming the job, the model and the allowed range; the last profiled epoch is
    accepted."""
    assert ElasticJob("j", model, 0.0, 1, 64, epochs=most).epochs == most
    with pytest.raises(ValueError, match=rf"'j'.*1\.\.{most}.*'{model}'"):
        ElasticJob("j", model, 0.0, 1, 64, epochs=most + 1)


@pytest.mark.parametrize("upper", [math.nan, math.inf, -math.inf])
def test_a_lagrangian_target_that_is_no_number_is_refused(upper: float) -> None:
    """The Lagrangian bound's ``upper`` (the target of its steps) must be finite: a nan
    target would turn every step into nan prices, and the bound with them."""
    jobs = [ElasticJob("a", "bert", 0.0, 1, 12, 1)]
    with pytest.raises(ValueError, match="upper must be finite"):
        elastic_lagrangian_bound(jobs, 4, steps=3, upper=upper)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"block": math.inf}, "block must be a finite number > 0, got inf"),
        ({"block": 0.0}, "block must be"),
        ({"step": math.inf}, "step must be a finite number > 0, got inf"),
        ({"step": -1.0}, "step must be"),
        ({"windows": [math.nan]}, "windows must be finite numbers > 0, got nan"),
        ({"windows": [math.inf]}, "windows must be finite"),
        ({"windows": []}, "0 windows for 1 jobs"),
        ({"windows": [100.0, 100.0]}, "2 windows for 1 jobs"),
        ({"steps": 2.5}, "steps must be an integer >= 0, got 2.5"),
        ({"steps": True}, "steps must be an integer >= 0, got True"),
        ({"steps": -1}, "steps must be an integer >= 0"),
    ],
)
def test_lagrangian_settings_that_are_no_length_are_refused_by_name(
    settings: dict[str, object], named: str
) -> None:
    """Each setting of the elastic Lagrangian bound that is not a finite positive length
    (or a step count, or one window per job) is refused in one line naming it, never a
    nan bound or a conversion error from deep inside."""
    jobs = [ElasticJob("a", "bert", 0.0, 1, 12, 1)]
    keywords = {"steps": 2, **settings}
    with pytest.raises(ValueError, match=re.escape(named)) as caught:
        elastic_lagrangian_bound(jobs, 4, **keywords)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("step", "block"), [(0.01, 300.0), (15.0, 0.01), (1e7, 300.0)])
def test_lagrangian_settings_past_the_size_limit_are_refused_before_allocating(
    step: float, block: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tiny step (many completion intervals), a tiny block or a step far past the window
    (many blocks) is refused naming step and block once the pairs exceed the limit (set
    low here, so a missing check would only cost a small allocation)."""
    monkeypatch.setattr(elastic_lagrangian, "MAX_INTERVALS", 50_000)
    jobs = [ElasticJob("a", "bert", 0.0, 1, 12, 1)]
    with pytest.raises(ValueError, match=f"step {step!r} s and block {block!r} s give"):
        elastic_lagrangian_bound(jobs, 4, step=step, block=block, steps=1)
    assert elastic_lagrangian_bound(jobs, 4, steps=1).value > 0
