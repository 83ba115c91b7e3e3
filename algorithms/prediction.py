"""Predicting iteration counts of recurring jobs, and judging the predictions.

**Features** are only what is known at submission: categorical columns
(user, model, dataset, the trace's model name, the virtual cluster) and
numeric ones (batch size, GPUs), whichever the data has
(:data:`CATEGORICAL`, :data:`NUMERIC`); ids, timestamps and anything
measured during or after a run (duration, iteration time, resource times,
intervals) are never features. A job's *configuration* is the tuple of its
feature values: jobs with equal configurations are taken to recur.

**History features** of job ``k`` use only jobs submitted before ``k``: the
running mean and median of ``log K`` over earlier jobs of the same
configuration and how many there were, the running mean over earlier jobs
of the same model, and over all earlier jobs.

**Predictors**:

- ``forest``: a scikit-learn pipeline (ordinal-encoded categoricals,
  numeric columns, history features) into a seeded ``RandomForestRegressor``
  trained on ``log K``; it is refitted every ``retrain_every`` jobs on all
  jobs submitted before the refit, so no prediction sees its own future;
- ``global_mean``, ``model_mean``, ``group_mean``, ``group_median``: running
  means (medians) of ``K`` over earlier jobs, overall, of the same model, of
  the same configuration; each falls back to the next coarser one when it
  has no history (configuration -> model -> all jobs).

**Metrics**: MAE, median absolute relative error, ``R^2`` and the share of
jobs within 10%, 25% and 50% of the truth.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder

from algorithms.predictors import JobView
from ddlsched.model import InputError
from ddlsched.zoo import ZOO

CATEGORICAL = ("user", "model", "model_name", "trace_model", "dataset", "cluster")
"""Categorical columns used as features when present."""
NUMERIC = ("batch_size", "num_gpu", "num_gpus")
"""Numeric columns used as features when present."""
NEVER = (
    "job_id",
    "submit_time",
    "timestamp",
    "duration",
    "iteration_time",
    "interval",
    "gpu_time",
    "resource_time_0",
    "resource_time_1",
    "resource_time_2",
    "group",
    "priority",
)
"""Columns never used: ids, times, measurements of the run, ground-truth labels."""
HISTORY = (
    "group_mean_log",
    "group_median_log",
    "group_count",
    "model_mean_log",
    "global_mean_log",
)
BASELINES = ("global_mean", "model_mean", "group_mean", "group_median")


@dataclass(frozen=True)
class FeatureSet:
    """The columns used, decided from what the data has."""

    categorical: tuple[str, ...]
    numeric: tuple[str, ...]

    @classmethod
    def of(cls, columns: Sequence[str], target: str) -> FeatureSet:
        """The feature columns of a frame with ``columns`` (never ``target``)."""
        present = set(columns) - {target}
        return cls(
            tuple(c for c in CATEGORICAL if c in present),
            tuple(c for c in NUMERIC if c in present),
        )

    @property
    def names(self) -> tuple[str, ...]:
        """Every raw feature column."""
        return self.categorical + self.numeric


def _model_column(features: FeatureSet) -> str | None:
    for name in ("model", "model_name", "trace_model"):
        if name in features.categorical:
            return name
    return None


class _RunningHistory:
    """The history features of :func:`history_features`, kept up to date one job at a time."""

    def __init__(self, features: FeatureSet) -> None:
        self.features = features
        self.model_column = _model_column(features)
        self.group_sum: dict[tuple, float] = defaultdict(float)
        self.group_sorted: dict[tuple, list[float]] = defaultdict(list)
        self.model_sum: dict[object, float] = defaultdict(float)
        self.model_count: dict[object, int] = defaultdict(int)
        self.total = 0.0
        self.count = 0

    def _key(self, row: dict[str, object]) -> tuple:
        return tuple(row.get(name) for name in self.features.names)

    def of(self, row: dict[str, object]) -> list[float]:
        """History features of a new job (NaN when there is none)."""
        key = self._key(row)
        seen = self.group_sorted[key]
        model = row.get(self.model_column) if self.model_column else None
        middle = len(seen) // 2
        return [
            self.group_sum[key] / len(seen) if seen else math.nan,
            (seen[middle] if len(seen) % 2 else (seen[middle - 1] + seen[middle]) / 2)
            if seen
            else math.nan,
            float(len(seen)),
            self.model_sum[model] / self.model_count[model]
            if self.model_count[model]
            else math.nan,
            self.total / self.count if self.count else math.nan,
        ]

    def add(self, row: dict[str, object], log_value: float) -> None:
        """Count a completed job."""
        key = self._key(row)
        model = row.get(self.model_column) if self.model_column else None
        self.group_sum[key] += log_value
        bisect.insort(self.group_sorted[key], log_value)
        self.model_sum[model] += log_value
        self.model_count[model] += 1
        self.total += log_value
        self.count += 1


def history_features(frame: pd.DataFrame, features: FeatureSet, target: str) -> pd.DataFrame:
    """Per row, statistics of ``log target`` over **earlier** rows only (NaN when none)."""
    running = _RunningHistory(features)
    logs = np.log(frame[target].to_numpy(dtype=float))
    rows = frame[list(features.names)].to_dict("records")
    out = np.empty((len(frame), len(HISTORY)))
    for k, (row, value) in enumerate(zip(rows, logs, strict=True)):
        out[k] = running.of(row)
        running.add(row, float(value))
    return pd.DataFrame(out, columns=list(HISTORY), index=frame.index)


def baseline_predictions(frame: pd.DataFrame, features: FeatureSet, target: str) -> pd.DataFrame:
    """Each baseline's prediction for every row, from earlier rows only."""
    values = frame[target].to_numpy(dtype=float)
    keys = list(frame[list(features.names)].itertuples(index=False, name=None))
    model_column = _model_column(features)
    models = frame[model_column].tolist() if model_column else [None] * len(frame)
    group: dict[tuple, list[float]] = defaultdict(list)
    model_sum: dict[object, float] = defaultdict(float)
    model_count: dict[object, int] = defaultdict(int)
    total = 0.0
    out = np.full((len(frame), len(BASELINES)), np.nan)
    for k, (key, model, value) in enumerate(zip(keys, models, values, strict=True)):
        overall = total / k if k else np.nan
        by_model = model_sum[model] / model_count[model] if model_count[model] else overall
        seen = group[key]
        out[k] = (
            overall,
            by_model,
            float(np.mean(seen)) if seen else by_model,
            float(np.median(seen)) if seen else by_model,
        )
        seen.append(value)
        model_sum[model] += value
        model_count[model] += 1
        total += value
    return pd.DataFrame(out, columns=list(BASELINES), index=frame.index)


def _forest(features: FeatureSet, seed: int, trees: int) -> Pipeline:
    encode = ColumnTransformer(
        [
            (
                "categories",
                OrdinalEncoder(
                    handle_unknown="use_encoded_value", unknown_value=-1, encoded_missing_value=-2
                ),
                list(features.categorical),
            )
        ],
        remainder="passthrough",
    )
    forest = RandomForestRegressor(
        n_estimators=trees, min_samples_leaf=2, random_state=seed, n_jobs=1
    )
    return Pipeline([("encode", encode), ("forest", forest)])


def _design(frame: pd.DataFrame, history: pd.DataFrame, features: FeatureSet) -> pd.DataFrame:
    design = frame[list(features.names)].copy()
    for column in features.categorical:
        design[column] = design[column].astype(str)
    # Random forests need numbers: missing history is marked, not guessed.
    return pd.concat([design, history.fillna(-1.0)], axis=1)


def forest_predictions(
    frame: pd.DataFrame,
    features: FeatureSet,
    target: str,
    start: int,
    retrain_every: int = 250,
    seed: int = 0,
    trees: int = 100,
) -> np.ndarray:
    """Forest predictions for rows ``start..``, refitted every ``retrain_every`` rows.

    The model predicting rows ``[b, b + retrain_every)`` is fitted on rows
    ``[0, b)`` only.
    """
    if start < 1:
        raise ValueError("the forest needs at least one earlier job to learn from")
    history = history_features(frame, features, target)
    design = _design(frame, history, features)
    logs = np.log(frame[target].to_numpy(dtype=float))
    predictions = np.empty(len(frame) - start)
    for block in range(start, len(frame), retrain_every):
        model = _forest(features, seed, trees)
        model.fit(design.iloc[:block], logs[:block])
        end = min(block + retrain_every, len(frame))
        predictions[block - start : end - start] = np.exp(model.predict(design.iloc[block:end]))
    return predictions


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


def verdict(results: dict[str, dict[str, float]]) -> str:
    """One plain sentence: is there signal, and does the forest beat every baseline?"""
    best = max(results, key=lambda name: results[name]["r2"])
    best_r2 = results[best]["r2"]
    if not best_r2 >= SIGNAL_R2:
        return (
            f"no signal: the best R^2 is {best_r2:.2f} ({best}); iteration counts are not "
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


def evaluate(
    frame: pd.DataFrame,
    target: str = "iterations",
    train_fraction: float = 0.7,
    retrain_every: int = 250,
    seed: int = 0,
    source: str = "data",
) -> dict[str, object]:
    """Chronological evaluation of the forest and the baselines.

    Jobs are ordered by submission; the first ``train_fraction`` are history
    only, the rest are predicted as they arrive (each from earlier jobs).

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
    if values.isna().any() or (values <= 0).any():
        bad = int(np.flatnonzero((values.isna() | (values <= 0)).to_numpy())[0])
        raise InputError(
            f"{source}: row {bad + 2}: {target} must be a positive number, got "
            f"{frame[target].iloc[bad]!r}"
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
    results = {
        "forest": accuracy(
            forest_predictions(frame, features, target, start, retrain_every, seed), truth
        )
    }
    baselines = baseline_predictions(frame, features, target).iloc[start:]
    for name in BASELINES:
        results[name] = accuracy(baselines[name].to_numpy(), truth)
    return {
        "verdict": verdict(results),
        "source": source,
        "target": target,
        "train_jobs": start,
        "test_jobs": len(frame) - start,
        "features": list(features.names) + list(HISTORY),
        "retrain_every": retrain_every,
        "predictors": results,
    }


def submission_features(job: JobView) -> dict[str, object]:
    """What an online predictor knows of a job: its features and its GPU count."""
    row: dict[str, object] = dict(job.features)
    row.setdefault("num_gpus", job.gpus)
    return row


class ForestPredictor:
    """The random forest as an online A-SRPT predictor (the Predictor protocol).

    It learns from jobs as they complete (:meth:`observe`). It refits when
    it has ``warmup`` completions, then whenever completions have grown by
    ``retrain_every`` **and** by ``growth`` times since the last fit (so a
    trace of ``n`` jobs costs ``O(log n)`` fits), on the latest ``max_rows``
    completions. Until the first fit it predicts as
    ``RunningMeanPredictor("group")`` does (configuration, then model, then
    all completed jobs, then the zoo's ``typical_iterations`` or
    ``default``).
    """

    def __init__(
        self,
        retrain_every: int = 50,
        warmup: int = 20,
        seed: int = 0,
        trees: int = 50,
        growth: float = 1.25,
        max_rows: int = 20_000,
        default: float = 1000.0,
    ) -> None:
        self.retrain_every = retrain_every
        self.warmup = warmup
        self.seed = seed
        self.trees = trees
        self.growth = growth
        self.max_rows = max_rows
        self._rows: list[dict[str, object]] = []
        self._model: Pipeline | None = None
        self._features: FeatureSet | None = None
        self._history: _RunningHistory | None = None
        self._fitted_at = 0
        self._codes: list[dict[str, float]] = []
        self._trees: list[Any] = []  # sklearn's Cython Tree objects
        self._warmup = RunningMeanPredictor("group", default)

    def predict(self, job: JobView) -> float:
        """``K_hat`` from the forest, or the fallbacks before its first fit."""
        row = submission_features(job)
        if self._model is not None and self._features is not None and self._history:
            return float(np.exp(self._fast_predict(row)))
        return self._warmup.predict(job)

    def observe(self, job: JobView, iterations: int) -> None:
        """Learn a completed job's count; refit on schedule."""
        row = submission_features(job)
        self._rows.append({**row, "iterations": float(iterations)})
        self._warmup.observe(job, iterations)
        if self._history is not None:
            self._history.add(row, math.log(iterations))
        count = len(self._rows)
        due = count >= max(self._fitted_at + self.retrain_every, self._fitted_at * self.growth)
        if count >= self.warmup and (self._model is None or due):
            self._fit()

    def _design_row(self, row: dict[str, object]) -> np.ndarray:
        """One design row, encoded exactly as the fitted pipeline encodes it.

        The pipeline's column order is the encoded categoricals, then the
        passthrough columns (numeric, then history); categoricals are
        compared as strings (``_design`` casts them, NaN included).
        """
        assert self._features is not None and self._history is not None
        values: list[float] = []
        for name, codes in zip(self._features.categorical, self._codes, strict=True):
            value = row.get(name, np.nan)
            values.append(codes.get(str(value), -1.0))
        for name in self._features.numeric:
            value = row.get(name, np.nan)
            values.append(float(value) if isinstance(value, (int, float)) else np.nan)
        values.extend(-1.0 if math.isnan(v) else v for v in self._history.of(row))
        return np.asarray([values], dtype=np.float32)

    def _fast_predict(self, row: dict[str, object]) -> float:
        """The forest's ``log K`` for one row, tree by tree.

        Equal to ``self._model.predict`` (the mean of the trees), without
        scikit-learn's per-call overhead (column transformer, joblib
        dispatch), which dominated one-row predictions: about 15 ms each.
        """
        design = self._design_row(row)
        return float(np.mean([tree.predict(design)[0, 0] for tree in self._trees]))

    def _fit(self) -> None:
        frame = pd.DataFrame(self._rows[-self.max_rows :])
        self._features = FeatureSet.of(list(frame.columns), "iterations")
        history = history_features(frame, self._features, "iterations")
        model = _forest(self._features, self.seed, self.trees)
        model.fit(
            _design(frame, history, self._features),
            np.log(frame["iterations"].to_numpy(dtype=float)),
        )
        self._model = model
        encoder = model.named_steps["encode"].named_transformers_["categories"]
        self._codes = [
            {str(category): float(code) for code, category in enumerate(categories)}
            for categories in getattr(encoder, "categories_", [])
        ]
        self._trees = [tree.tree_ for tree in model.named_steps["forest"].estimators_]
        self._fitted_at = len(self._rows)
        running = _RunningHistory(self._features)
        for kept in self._rows:
            running.add(kept, math.log(float(kept["iterations"])))  # type: ignore[arg-type]
        self._history = running


class RunningMeanPredictor:
    """A baseline as an online predictor: the mean ``K`` of completed jobs.

    ``level`` is ``"global"`` (all completed jobs), ``"model"`` (same model)
    or ``"group"`` (same configuration: every feature equal); each falls back
    to the next coarser level without history, and to the zoo's
    ``typical_iterations`` (or ``default``) with none at all.
    """

    LEVELS = ("global", "model", "group")

    def __init__(self, level: str, default: float = 1000.0) -> None:
        if level not in self.LEVELS:
            raise ValueError(f"level: expected one of {', '.join(self.LEVELS)}, got {level!r}")
        self.level = level
        self.default = default
        self._sums: dict[object, list[float]] = defaultdict(lambda: [0.0, 0.0])

    @staticmethod
    def _keys(job: JobView) -> dict[str, object]:
        features = submission_features(job)
        return {
            "group": ("group", tuple(sorted(features.items()))),
            "model": ("model", features.get("model")),
            "global": ("global",),
        }

    def predict(self, job: JobView) -> float:
        """The running mean at this predictor's level (or a coarser one)."""
        keys = self._keys(job)
        for level in self.LEVELS[self.LEVELS.index(self.level) :: -1]:
            total, count = self._sums.get(keys[level], (0.0, 0.0))
            if count:
                return total / count
        model = job.features.get("model")
        if isinstance(model, str) and model in ZOO:
            return float(ZOO[model].typical_iterations)
        return self.default

    def observe(self, job: JobView, iterations: int) -> None:
        """Count a completed job at every level."""
        for key in self._keys(job).values():
            entry = self._sums[key]
            entry[0] += iterations
            entry[1] += 1
