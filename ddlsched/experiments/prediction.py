"""Iteration prediction as an experiment: how accurate, and what errors cost.

- :func:`evaluate` (re-exported from :mod:`ddlsched.algorithms.prediction.evaluation`): the
  forest against running-mean baselines, chronologically;
- :func:`history_frame`: a trace or a history CSV as the typed frame it reads;
- :func:`relative_errors`: per predictor, ``K_hat / K - 1`` on the
  predicted part of a history, for plots;
- :func:`cost_of_errors`: A-SRPT's total JCT with a noisy oracle of growing
  error and with the learning predictors, relative to the exact oracle.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ddlsched.algorithms.prediction.evaluation import evaluate
from ddlsched.api import simulate
from ddlsched.core.data import resolve_trace
from ddlsched.core.model import InputError, Instance
from ddlsched.core.params import OnlineParams
from ddlsched.core.traces import UnknownTraceColumns, read_rows

__all__ = ["cost_of_errors", "evaluate", "history_frame", "relative_errors"]

NUMERIC_HISTORY_COLUMNS = ("submit_time", "batch_size", "num_gpu", "num_gpus")
"""Columns of a history CSV (not a trace) that must hold finite numbers."""


def history_frame(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A trace file (any format :func:`~ddlsched.core.traces.read_rows` reads) or a
    history CSV, as the frame :func:`evaluate` takes.

    Trace rows are typed as they are read (a bad cell is named by line and
    column) and sorted by submit time. Other CSV files are read with pandas;
    their numeric columns must hold finite numbers (the first bad row is
    named).

    Raises
    ------
    InputError
        One line naming the file, the row and the column.
    """
    path = resolve_trace(path)  # a bare name is looked up in the data folder
    try:
        _, rows = read_rows(path)
    except UnknownTraceColumns:
        return _history_csv(path)
    frame = pd.DataFrame(
        {
            "submit_time": [r.submit for r in rows],
            "duration": [r.duration for r in rows],
            "num_gpus": [r.gpus for r in rows],
            "iterations": [r.iterations for r in rows],
            "model_name": [r.model for r in rows],
            "batch_size": [r.batch_size for r in rows],
            "user": [r.user for r in rows],
        }
    ).dropna(axis="columns", how="all")
    return frame.sort_values("submit_time", kind="stable").reset_index(drop=True)


def _history_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, encoding="utf-8-sig")
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as error:
        raise InputError(f"{path}: not a readable CSV ({' '.join(str(error).split())})") from None
    for column in NUMERIC_HISTORY_COLUMNS:
        if column in frame.columns:
            values = pd.to_numeric(frame[column], errors="coerce")
            bad = ~values.map(lambda v: math.isfinite(v) if v == v else False)
            if bad.any():
                row = int(bad.to_numpy().nonzero()[0][0])
                raise InputError(
                    f"{path}: row {row + 2}: {column}: not a finite number: "
                    f"{frame[column].iloc[row]!r}"
                )
            frame[column] = values
    return frame


def relative_errors(
    frame: pd.DataFrame,
    target: str = "iterations",
    train_fraction: float = 0.7,
    baselines: Sequence[str] = ("group_mean", "model_mean"),
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """``K_hat / K - 1`` of the forest and of ``baselines`` on the rows after the split."""
    from ddlsched.algorithms.prediction.evaluation import baseline_predictions
    from ddlsched.algorithms.prediction.forest import FeatureSet, forest_predictions

    frame = frame.reset_index(drop=True)
    features = FeatureSet.of(list(frame.columns), target)
    start = int(train_fraction * len(frame))
    truth = frame[target].to_numpy(dtype=float)[start:]
    forest = forest_predictions(frame, features, target, start, seed=seed)
    base = baseline_predictions(frame, features, target).iloc[start:]
    return {
        "forest": forest / truth - 1,
        **{name: base[name].to_numpy() / truth - 1 for name in baselines},
    }


def cost_of_errors(
    instance: Instance,
    policies: Sequence[str],
    sigmas: Sequence[float],
    learned: Sequence[str] = ("forest", "group-mean", "model-mean", "global-mean"),
    seed: int = 0,
) -> tuple[dict[str, list[float]], pd.DataFrame]:
    """Total JCT relative to the exact oracle, per policy.

    Returns
    -------
    curves
        Per policy, the ratio with the noisy oracle at each of ``sigmas``.
    learned_ratios
        Rows: policies; columns: the learning predictors.
    """
    curves: dict[str, list[float]] = {}
    table: dict[str, dict[str, float]] = {}
    for policy in policies:
        oracle = simulate(instance, policy).total_jct
        curves[policy] = [
            simulate(
                instance, policy, params=OnlineParams(predictor="noisy", noise=s), seed=seed
            ).total_jct
            / oracle
            for s in sigmas
        ]
        table[policy] = {
            name: simulate(
                instance, policy, params=OnlineParams(predictor=name), seed=seed
            ).total_jct
            / oracle
            for name in learned
        }
    return curves, pd.DataFrame(table).T
