"""Running means (ddlsched.algorithms.prediction.running_mean), online and offline: one
implementation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ddlsched.algorithms.prediction import JobView

from ddlsched.core.recurring import WorkloadConfig

STRONG = WorkloadConfig(
    jobs=900, users=6, groups_per_user=3, job_sigma=0.1, drift=0.2, one_off=0.05
)


def test_running_mean_predictors_fall_back_and_learn() -> None:
    """Running means: coarser levels without history, the exact mean with it."""
    from ddlsched.algorithms.prediction import RunningMeanPredictor

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


def _brute_force_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Per row, the means over strictly earlier rows, written out with pandas (no shared code)."""
    rows = []
    for k in range(len(frame)):
        earlier = frame.iloc[:k]
        row = frame.iloc[k]
        same_model = earlier[earlier.model == row.model]
        same_group = same_model[
            (same_model.user == row.user) & (same_model.num_gpus == row.num_gpus)
        ]
        overall = earlier.iterations.mean() if k else float("nan")
        model = same_model.iterations.mean() if len(same_model) else overall
        group = same_group.iterations.mean() if len(same_group) else model
        median = same_group.iterations.median() if len(same_group) else model
        rows.append((overall, model, group, median))
    return pd.DataFrame(rows, columns=["global_mean", "model_mean", "group_mean", "group_median"])


def test_offline_baselines_equal_brute_force_and_the_online_predictor() -> None:
    """One running mean: the evaluation's baselines equal a brute force, and the online
    predictor (fed the same jobs as views) predicts the same values row by row."""
    from ddlsched.algorithms.prediction import RunningMeanPredictor
    from ddlsched.algorithms.prediction.evaluation import baseline_predictions
    from ddlsched.algorithms.prediction.forest import FeatureSet

    from ddlsched.core.model import Job

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "model": rng.choice(["bert_base", "resnet50", "vgg16"], 60),
            "user": rng.choice(["u1", "u2"], 60),
            "num_gpus": rng.choice([1, 2], 60),
            "iterations": rng.integers(1, 1000, 60).astype(float),
        }
    )
    features = FeatureSet.of(list(frame.columns), "iterations")
    offline = baseline_predictions(frame, features, "iterations")
    expected = _brute_force_means(frame)
    assert np.allclose(offline.to_numpy(), expected.to_numpy(), equal_nan=True)

    online = {level: RunningMeanPredictor(level) for level in ("global", "model", "group")}
    for k, row in frame.iterrows():
        view = JobView.of(
            Job(
                id=f"j{k}",
                release=0.0,
                iterations=int(row.iterations),
                compute_time=1.0,
                gpus=int(row.num_gpus),
                features={"model": row.model, "user": row.user},
            )
        )
        if k > 0:
            for level, predictor in online.items():
                assert predictor.predict(view) == pytest.approx(offline[f"{level}_mean"][k])
        for predictor in online.values():
            predictor.observe(view, int(row.iterations))
