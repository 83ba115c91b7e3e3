"""The chronological evaluation (algorithms.prediction.evaluation): seeded, honest verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from algorithms.prediction.evaluation import evaluate
from ddlsched.core.model import InputError
from ddlsched.core.workloads import WorkloadConfig, recurring_history

STRONG = WorkloadConfig(
    jobs=900, users=6, groups_per_user=3, job_sigma=0.1, drift=0.2, one_off=0.05
)


def _history(seed: int = 0) -> pd.DataFrame:
    return recurring_history(STRONG, seed).drop(columns=["group"])


def test_seeded_runs_reproduce_exactly() -> None:
    """Same seed, same history and the same predictions, bit for bit."""
    assert recurring_history(STRONG, 3).equals(recurring_history(STRONG, 3))
    first = evaluate(_history(3), seed=5)
    second = evaluate(_history(3), seed=5)
    assert first == second


def test_forest_beats_group_mean_with_strong_recurrence() -> None:
    """With strong recurrence and drift the forest beats every baseline on MAE and median error."""
    report = evaluate(_history(1), retrain_every=150)
    forest = report["predictors"]["forest"]  # type: ignore[index]
    for name in ("global_mean", "model_mean", "group_mean", "group_median"):
        other = report["predictors"][name]  # type: ignore[index]
        assert forest["mae"] < other["mae"], name
        assert forest["median_rel_error"] < other["median_rel_error"], name
    assert report["verdict"].startswith("signal")


def test_no_signal_is_said_plainly() -> None:
    """Iterations independent of every feature: the verdict says there is no signal."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "submit_time": np.arange(400.0),
            "model_name": rng.choice(["a", "b"], 400),
            "num_gpu": rng.choice([1, 2], 400),
            "iterations": rng.lognormal(8, 1.5, 400).round() + 1,
        }
    )
    assert evaluate(frame)["verdict"].startswith("no signal")


def test_missing_target_is_a_clear_error() -> None:
    """A trace without the target column names it and the columns it has."""
    frame = pd.DataFrame({"timestamp": ["x"], "duration": [1.0], "num_gpus": [1]})
    with pytest.raises(InputError, match=r"no target column 'iterations'.*duration"):
        evaluate(frame, source="philly.csv")
    bad = _history().assign(iterations=-1)
    with pytest.raises(InputError, match=r"row 2: iterations must be a positive number"):
        evaluate(bad)
