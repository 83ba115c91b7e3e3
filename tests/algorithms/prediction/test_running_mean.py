"""Running means (algorithms.prediction.running_mean), online and offline: one implementation."""

from __future__ import annotations

import pytest

from algorithms.prediction import JobView
from ddlsched.core.workloads import WorkloadConfig

STRONG = WorkloadConfig(
    jobs=900, users=6, groups_per_user=3, job_sigma=0.1, drift=0.2, one_off=0.05
)


def test_running_mean_predictors_fall_back_and_learn() -> None:
    """Running means: coarser levels without history, the exact mean with it."""
    from algorithms.prediction import RunningMeanPredictor
    from ddlsched.core.model import Job

    def view(model: str, user: str) -> JobView:
        return JobView.of(
            Job(
                id=f"{model}-{user}",
                release=0.0,
                iterations=1,
                compute_time=1.0,
                gpus=1,
                features={"model": model, "user": user},
            )
        )

    group = RunningMeanPredictor("group")
    assert group.predict(view("bert_base", "a")) == 10_000  # the zoo's typical count
    group.observe(view("bert_base", "a"), 100)
    group.observe(view("bert_base", "a"), 300)
    group.observe(view("bert_base", "b"), 1000)
    assert group.predict(view("bert_base", "a")) == 200  # its configuration
    assert group.predict(view("bert_base", "c")) == pytest.approx(1400 / 3)  # its model
    assert RunningMeanPredictor("global").predict(view("vgg16", "z")) > 0
    with pytest.raises(ValueError, match="level"):
        RunningMeanPredictor("user")
