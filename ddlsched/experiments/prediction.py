"""Iteration prediction as an experiment: how accurate, and what errors cost.

- :func:`evaluate` (re-exported from :mod:`algorithms.prediction.evaluation`): the
  forest against running-mean baselines, chronologically;
- :func:`relative_errors`: per predictor, ``K_hat / K - 1`` on the
  predicted part of a history, for plots;
- :func:`cost_of_errors`: A-SRPT's total JCT with a noisy oracle of growing
  error and with the learning predictors, relative to the exact oracle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from algorithms.prediction.evaluation import evaluate
from ddlsched.api import simulate
from ddlsched.core.model import Instance
from ddlsched.core.params import OnlineParams

__all__ = ["cost_of_errors", "evaluate", "relative_errors"]


def relative_errors(
    frame: pd.DataFrame,
    target: str = "iterations",
    train_fraction: float = 0.7,
    baselines: Sequence[str] = ("group_mean", "model_mean"),
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """``K_hat / K - 1`` of the forest and of ``baselines`` on the rows after the split."""
    from algorithms.prediction.evaluation import baseline_predictions
    from algorithms.prediction.forest import FeatureSet, forest_predictions

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
