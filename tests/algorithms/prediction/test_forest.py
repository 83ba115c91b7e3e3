"""The random forest (ddlsched.algorithms.prediction.forest): no leakage; fast path equals the
pipeline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ddlsched.algorithms.prediction import JobView, submission_features
from ddlsched.algorithms.prediction.evaluation import baseline_predictions
from ddlsched.algorithms.prediction.forest import (
    HISTORY,
    FeatureSet,
    ForestPredictor,
    _design,
    forest_predictions,
    history_features,
)

from ddlsched.core.model import Cluster
from ddlsched.core.recurring import WorkloadConfig, instance_from_history, recurring_history

STRONG = WorkloadConfig(
    jobs=900, users=6, groups_per_user=3, job_sigma=0.1, drift=0.2, one_off=0.05
)


def _history(seed: int = 0) -> pd.DataFrame:
    return recurring_history(STRONG, seed).drop(columns=["group"])


def test_no_leakage_prediction_unchanged_when_later_jobs_change() -> None:
    """The prediction for job k does not change when jobs after k change."""
    frame = _history()
    features = FeatureSet.of(list(frame.columns), "iterations")
    k = 700
    before = forest_predictions(frame, features, "iterations", start=600, retrain_every=100)
    changed = frame.copy()
    changed.loc[k + 1 :, "iterations"] = 7  # rewrite the future
    changed.loc[k + 1 :, "model"] = "vgg16"
    after = forest_predictions(changed, features, "iterations", start=600, retrain_every=100)
    assert after[k - 600] == before[k - 600]
    assert np.array_equal(after[: k - 600 + 1], before[: k - 600 + 1])
    base_before = baseline_predictions(frame, features, "iterations").iloc[: k + 1]
    base_after = baseline_predictions(changed, features, "iterations").iloc[: k + 1]
    pd.testing.assert_frame_equal(base_before, base_after)
    hist_before = history_features(frame, features, "iterations").iloc[: k + 1]
    hist_after = history_features(changed, features, "iterations").iloc[: k + 1]
    pd.testing.assert_frame_equal(hist_before, hist_after)


def test_only_submission_time_features() -> None:
    """Ids, times and run measurements are never features."""
    frame = pd.DataFrame(
        {
            c: [1]
            for c in (
                "job_id",
                "submit_time",
                "duration",
                "iteration_time",
                "interval",
                "resource_time_0",
                "model_name",
                "batch_size",
                "num_gpu",
                "iterations",
            )
        }
    )
    features = FeatureSet.of(list(frame.columns), "iterations")
    assert set(features.names) == {"model_name", "batch_size", "num_gpu"}


def test_online_forest_predictor_learns() -> None:
    """Online: cold start from the zoo, then predictions near a group's recent counts."""
    history = recurring_history(STRONG, 2)
    instance = instance_from_history(history, Cluster.uniform(4, 8, 20.0, 1.0), limit=300)
    predictor = ForestPredictor(retrain_every=50, warmup=20, trees=20)
    views = [JobView.of(job) for job in instance.jobs]
    errors = []
    for view, job in zip(views, instance.jobs, strict=True):
        errors.append(abs(np.log(predictor.predict(view) / job.iterations)))
        predictor.observe(view, job.iterations)
    assert np.median(errors[200:]) < np.median(errors[:20])


def test_fast_forest_path_equals_the_pipeline() -> None:
    """The tree-by-tree prediction equals scikit-learn's pipeline on the same rows."""
    history = recurring_history(STRONG, 4)
    instance = instance_from_history(history, Cluster.uniform(4, 8, 20.0, 1.0), limit=200)
    predictor = ForestPredictor(retrain_every=50, warmup=20, trees=15)
    views = [JobView.of(job) for job in instance.jobs]
    for view, job in zip(views[:150], instance.jobs[:150], strict=True):
        predictor.observe(view, job.iterations)
    assert predictor._features is not None and predictor._history is not None
    for view in views[150:]:
        row = submission_features(view)
        raw = {name: row.get(name, np.nan) for name in predictor._features.names}
        frame = pd.DataFrame([raw])
        hist = pd.DataFrame([predictor._history.of(row)], columns=list(HISTORY))
        expected = predictor._model.predict(_design(frame, hist, predictor._features))[0]
        assert predictor._fast_predict(row) == pytest.approx(expected, rel=1e-6)


def test_history_features_exclude_the_rows_own_target() -> None:
    """Row ``k``'s history features come from rows before ``k`` only, never from
    row ``k``'s own count (hand-worked on three recurrences of one configuration).

    Counts 10, 100, 1000 of one (user, model): row 0 has no history (NaN, count
    0); row 1 sees only log 10; row 2 the mean and median of log 10 and log
    100, count 2.

    Catches the slip: the running statistics updated with a row's count
    before its features are read (leakage of the target).
    """
    frame = pd.DataFrame(
        {"user": ["u"] * 3, "model": ["resnet50"] * 3, "iterations": [10.0, 100.0, 1000.0]}
    )
    features = FeatureSet.of(list(frame.columns), "iterations")
    history = history_features(frame, features, "iterations")
    logs = np.log([10.0, 100.0])
    assert history.loc[0].drop("group_count").isna().all()
    assert history.loc[0, "group_count"] == 0.0
    expected_1 = [logs[0], logs[0], 1.0, logs[0], logs[0]]
    expected_2 = [logs.mean(), logs.mean(), 2.0, logs.mean(), logs.mean()]
    assert history.loc[1, list(HISTORY)].tolist() == pytest.approx(expected_1)
    assert history.loc[2, list(HISTORY)].tolist() == pytest.approx(expected_2)


def test_history_features_keep_the_rows_labels() -> None:
    """Catches the features returned on a fresh 0..n-1 index: a frame sorted by submit
    time keeps its original labels, and the features of each row must be found under that
    row's label (``frame.join(history)`` lines them up). Labels 7, 3, 5 for counts 10, 100,
    1000 of one configuration: label 7 has no history, label 3 sees log 10, label 5 the
    mean of log 10 and log 100."""
    frame = pd.DataFrame(
        {"user": ["u"] * 3, "model": ["resnet50"] * 3, "iterations": [10.0, 100.0, 1000.0]},
        index=[7, 3, 5],
    )
    features = FeatureSet.of(list(frame.columns), "iterations")
    history = history_features(frame, features, "iterations")
    assert history.index.tolist() == [7, 3, 5]
    joined = frame.join(history)
    assert joined.loc[7, "group_count"] == 0.0
    assert joined.loc[3, "group_mean_log"] == pytest.approx(np.log(10.0))
    assert joined.loc[5, "group_mean_log"] == pytest.approx(np.log([10.0, 100.0]).mean())


@pytest.mark.parametrize("column", ["model", "model_name", "trace_model"])
def test_the_model_level_reads_each_traces_model_column(column: str) -> None:
    """Catches a model column name misspelt in the lookup (each trace names it its own
    way): users u1, u2, u3 submit model a (10 iterations), b (1000), then a again. The
    third row's model-level mean is log 10 (model a only); without the model column it
    would be the global mean of log 10 and log 1000."""
    frame = pd.DataFrame(
        {"user": ["u1", "u2", "u3"], column: ["a", "b", "a"], "iterations": [10.0, 1000.0, 5.0]}
    )
    features = FeatureSet.of(list(frame.columns), "iterations")
    history = history_features(frame, features, "iterations")
    assert history.loc[2, "model_mean_log"] == pytest.approx(np.log(10.0))
    assert history.loc[2, "global_mean_log"] == pytest.approx(np.log([10.0, 1000.0]).mean())


@pytest.mark.parametrize("k", [600, 650])
def test_no_leakage_prediction_unchanged_when_the_rows_own_target_changes(k: int) -> None:
    """Job ``k``'s predictions (forest, baselines, history features) do not change
    when only job ``k``'s own count changes: at the first row of a refit block
    (600) and inside one (650).

    Catches the slips: the forest fitted on rows up to and including the
    block's first row (``[0, block]``), or any running statistic updated with
    a row before it is predicted.
    """
    frame = _history()
    features = FeatureSet.of(list(frame.columns), "iterations")
    changed = frame.copy()
    changed.loc[k, "iterations"] = frame["iterations"].max() * 50  # a wild own target
    before = forest_predictions(frame, features, "iterations", 600, retrain_every=100, trees=20)
    after = forest_predictions(changed, features, "iterations", 600, retrain_every=100, trees=20)
    assert after[k - 600] == before[k - 600]
    pd.testing.assert_series_equal(
        baseline_predictions(frame, features, "iterations").loc[k],
        baseline_predictions(changed, features, "iterations").loc[k],
    )
    pd.testing.assert_series_equal(
        history_features(frame, features, "iterations").loc[k],
        history_features(changed, features, "iterations").loc[k],
    )


def test_before_its_first_fit_the_forest_falls_back_to_its_default() -> None:
    """Catches the forest's ``default`` not passed to its warm-up predictor: a job of a
    model the zoo does not know, with nothing completed yet, is predicted ``default``
    (123 here, not the warm-up predictor's own 1000)."""
    from ddlsched.core.model import Job

    job = Job("x", 0.0, 10, 1.0, 1, features={"model": "no-such-model"})
    assert ForestPredictor(default=123.0).predict(JobView.of(job)) == 123.0
