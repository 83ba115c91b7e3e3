"""The random-forest iteration predictor, offline and online.

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

**The forest**: a scikit-learn pipeline (ordinal-encoded categoricals,
numeric columns, history features) into a seeded ``RandomForestRegressor``
(Breiman, *Random Forests*, Machine Learning 2001) trained on ``log K``.
Offline (:func:`forest_predictions`) it is refitted every ``retrain_every``
jobs on all jobs submitted before the refit, so no prediction sees its own
future; online (:class:`ForestPredictor`) it learns from completed jobs.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from ddlsched.algorithms.prediction.running_mean import RunningMeanPredictor, RunningMeans
from ddlsched.algorithms.prediction.view import JobView, submission_features
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OrdinalEncoder

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


def model_column(features: FeatureSet) -> str | None:
    for name in ("model", "model_name", "trace_model"):
        if name in features.categorical:
            return name
    return None


class _RunningHistory:
    """The history features of :func:`history_features`, kept up to date one job at a time."""

    def __init__(self, features: FeatureSet) -> None:
        self.features = features
        self.model_column = model_column(features)
        self.means = RunningMeans(track_medians=True)

    def _keys(self, row: dict[str, object]) -> tuple[Hashable, Hashable]:
        model = row.get(self.model_column) if self.model_column else None
        return model, tuple(row.get(name) for name in self.features.names)

    def of(self, row: dict[str, object]) -> list[float]:
        """History features of a new job (NaN when there is none)."""
        model, group = self._keys(row)
        return [
            self.means.at("group", model, group),
            self.means.median_at(group),
            float(self.means.count("group", model, group)),
            self.means.at("model", model, group),
            self.means.at("global", model, group),
        ]

    def add(self, row: dict[str, object], log_value: float) -> None:
        """Count a completed job."""
        self.means.add(*self._keys(row), log_value)


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
    max_rows: int | None = None,
) -> np.ndarray:
    """Forest predictions for rows ``start..``, refitted every ``retrain_every`` rows.

    The model predicting rows ``[b, b + retrain_every)`` is fitted on rows
    ``[0, b)`` only (the latest ``max_rows`` of them, if given).
    """
    if start < 1:
        raise ValueError("the forest needs at least one earlier job to learn from")
    history = history_features(frame, features, target)
    design = _design(frame, history, features)
    logs = np.log(frame[target].to_numpy(dtype=float))
    predictions = np.empty(len(frame) - start)
    for block in range(start, len(frame), retrain_every):
        model = _forest(features, seed, trees)
        first = 0 if max_rows is None else max(0, block - max_rows)
        model.fit(design.iloc[first:block], logs[first:block])
        end = min(block + retrain_every, len(frame))
        predictions[block - start : end - start] = np.exp(model.predict(design.iloc[block:end]))
    return predictions


class _Tree(Protocol):
    """A fitted tree of the forest (scikit-learn's Cython ``Tree``): the one method the
    predictor calls, on the encoded rows."""

    def predict(self, design: np.ndarray) -> np.ndarray:
        """Each row's leaf value, one column per output."""
        ...


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
        self._trees: list[_Tree] = []
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
