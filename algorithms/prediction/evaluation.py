"""Judging iteration predictions: the forest against running-mean baselines.

Jobs are ordered by submission; the first share is history only, the rest
are predicted as they arrive, each from earlier jobs only (a chronological
split: no prediction sees its own future).

**Predictors**: ``forest`` (:mod:`ddlsched.algorithms.prediction.forest`) and the
running means of :mod:`ddlsched.algorithms.prediction.running_mean`: ``global_mean``,
``model_mean``, ``group_mean`` and ``group_median`` (each falling back to
the next coarser level when it has no history).

**Metrics**: MAE, median absolute relative error, ``R^2`` and the share of
jobs within 10%, 25% and 50% of the truth.
"""

from __future__ import annotations

import math
from typing import TypedDict

import numpy as np
import pandas as pd
from ddlsched.algorithms.prediction.forest import (
    CATEGORICAL,
    HISTORY,
    NUMERIC,
    FeatureSet,
    forest_predictions,
    model_column,
)
from ddlsched.algorithms.prediction.running_mean import RunningMeans

from ddlsched.core.model import InputError

BASELINES = ("global_mean", "model_mean", "group_mean", "group_median")
"""The running-mean baselines of the offline evaluation."""


def baseline_predictions(frame: pd.DataFrame, features: FeatureSet, target: str) -> pd.DataFrame:
    """Each baseline's prediction for every row, from earlier rows only."""
    values = frame[target].to_numpy(dtype=float)
    groups = list(frame[list(features.names)].itertuples(index=False, name=None))
    column = model_column(features)
    models = frame[column].tolist() if column else [None] * len(frame)
    means = RunningMeans(track_medians=True)
    out = np.full((len(frame), len(BASELINES)), np.nan)
    for k, (group, model, value) in enumerate(zip(groups, models, values, strict=True)):
        out[k] = (
            means.mean("global", model, group),
            means.mean("model", model, group),
            means.mean("group", model, group),
            means.group_median(model, group),
        )
        means.add(model, group, float(value))
    return pd.DataFrame(out, columns=list(BASELINES), index=frame.index)


def accuracy(predicted: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """MAE, median absolute relative error, R^2, and shares within 10/25/50%."""
    predicted = np.asarray(predicted, dtype=float)
    truth = np.asarray(truth, dtype=float)
    relative = np.abs(predicted - truth) / truth
    residual = float(np.sum((truth - predicted) ** 2))
    spread = float(np.sum((truth - truth.mean()) ** 2))
    return {
        "mae": float(np.mean(np.abs(predicted - truth))),
        "median_rel_error": float(np.median(relative)),
        "r2": 1.0 - residual / spread if spread > 0 else math.nan,
        "within_10": float(np.mean(relative <= 0.10)),
        "within_25": float(np.mean(relative <= 0.25)),
        "within_50": float(np.mean(relative <= 0.50)),
    }


SIGNAL_R2 = 0.3
"""Below this best R^2 (over all predictors) a report says there is no signal."""


def verdict(results: dict[str, dict[str, float]], target: str = "iterations") -> str:
    """One plain sentence: is there signal, and does the forest beat every baseline?"""
    best = max(results, key=lambda name: results[name]["r2"])
    best_r2 = results[best]["r2"]
    if not best_r2 >= SIGNAL_R2:
        return (
            f"no signal: the best R^2 is {best_r2:.2f} ({best}); {target} is not "
            "predictable from the submission-time features here"
        )
    forest = results["forest"]
    beaten = [
        name
        for name in BASELINES
        if forest["mae"] <= results[name]["mae"]
        and forest["median_rel_error"] <= results[name]["median_rel_error"]
    ]
    if len(beaten) == len(BASELINES):
        return (
            f"signal (forest R^2 {forest['r2']:.2f}); the forest beats every baseline on "
            "MAE and median relative error"
        )
    missed = sorted(set(BASELINES) - set(beaten))
    return (
        f"signal (best R^2 {best_r2:.2f}); the forest does not beat {', '.join(missed)} on "
        "both MAE and median relative error"
    )


class Evaluation(TypedDict):
    """What :func:`evaluate` found: the verdict, the split and each predictor's
    :func:`accuracy`, by name (the forest and each baseline)."""

    verdict: str
    source: str
    target: str
    train_jobs: int
    test_jobs: int
    features: list[str]
    retrain_every: int
    predictors: dict[str, dict[str, float]]


def evaluate(
    frame: pd.DataFrame,
    target: str = "iterations",
    train_fraction: float = 0.7,
    retrain_every: int | None = None,
    seed: int = 0,
    source: str = "data",
    max_rows: int = 20_000,
) -> Evaluation:
    """Chronological evaluation of the forest and the baselines.

    Jobs are ordered by submission; the first ``train_fraction`` are history
    only, the rest are predicted as they arrive (each from earlier jobs).
    The forest is refitted every ``retrain_every`` predicted jobs (default:
    250, or a twentieth of the predicted jobs when that is more) on the
    latest ``max_rows`` earlier jobs, as the online predictor does; so the
    whole Philly trace costs about twenty fits.

    Raises
    ------
    InputError
        If the target column is missing or not positive, or too few jobs.
    """
    if target not in frame.columns:
        raise InputError(
            f"{source}: no target column {target!r} (columns: "
            f"{', '.join(map(str, frame.columns))})"
        )
    values = pd.to_numeric(frame[target], errors="coerce")
    refused = (values.isna() | (values <= 0)).to_numpy()
    if refused.any():
        bad = int(np.flatnonzero(refused)[0])
        shown = frame[target].iloc[bad]
        shown = shown.item() if isinstance(shown, np.generic) else shown  # 0.0, not np.float64
        raise InputError(
            f"{source}: row {bad + 2}: {target} must be a positive number, got {shown!r}"
        )
    if "submit_time" in frame.columns:
        frame = frame.sort_values("submit_time", kind="stable")
    frame = frame.reset_index(drop=True)
    features = FeatureSet.of(list(frame.columns), target)
    if not features.names:
        raise InputError(
            f"{source}: no usable feature column (looked for {', '.join(CATEGORICAL + NUMERIC)})"
        )
    start = int(len(frame) * train_fraction)
    if start < 10 or len(frame) - start < 5:
        raise InputError(f"{source}: {len(frame)} jobs are too few to split chronologically")
    truth = frame[target].to_numpy(dtype=float)[start:]
    if retrain_every is None:
        retrain_every = max(250, math.ceil((len(frame) - start) / 20))
    results = {
        "forest": accuracy(
            forest_predictions(
                frame, features, target, start, retrain_every, seed, max_rows=max_rows
            ),
            truth,
        )
    }
    baselines = baseline_predictions(frame, features, target).iloc[start:]
    for name in BASELINES:
        results[name] = accuracy(baselines[name].to_numpy(), truth)
    return {
        "verdict": verdict(results, target),
        "source": source,
        "target": target,
        "train_jobs": start,
        "test_jobs": len(frame) - start,
        "features": list(features.names) + list(HISTORY),
        "retrain_every": retrain_every,
        "predictors": results,
    }
