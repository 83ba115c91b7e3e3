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


def test_relative_errors_are_predicted_over_true_minus_one_from_earlier_rows() -> None:
    """``relative_errors`` gives ``K_hat / K - 1`` on the rows after the split, each
    predicted from earlier rows only (hand-worked on one configuration).

    Twelve recurrences of one (user, model): nine of 10 iterations, then 20, 5
    and 10; the split at 0.75 predicts rows 9-11. The group's running mean is
    10, then 110 / 10 = 11, then 115 / 11: errors 10/20 - 1, 11/5 - 1 and
    (115/11)/10 - 1.

    Catches the slips: the ratio inverted (``K / K_hat - 1``), the rows
    before the split scored, or a row's own count in its prediction.
    """
    from ddlsched.experiments.prediction import relative_errors

    counts = [10.0] * 9 + [20.0, 5.0, 10.0]
    frame = pd.DataFrame({"user": ["u"] * 12, "model": ["resnet50"] * 12, "iterations": counts})
    errors = relative_errors(frame, train_fraction=0.75)
    expected = [10 / 20 - 1, 11 / 5 - 1, (115 / 11) / 10 - 1]
    assert errors["group_mean"] == pytest.approx(expected)
    assert errors["model_mean"] == pytest.approx(expected)
    assert len(errors["forest"]) == 3 and np.all(np.isfinite(errors["forest"]))


def test_history_frame_reads_a_trace_in_submit_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A trace file becomes the evaluation's frame: typed rows sorted by submit time
    (microseconds read as seconds for Muri lists), iterations kept.

    Catches the slip: rows left in file order (the chronological split would
    then train on the future).
    """
    from ddlsched.experiments.prediction import history_frame

    path = tmp_path / "m.csv"
    path.write_text(
        "job_id,num_gpu,submit_time,iterations,model_name,duration,iteration_time\n"
        "a,1,3000000,30,vgg16,1000000,10\n"
        "b,2,1000000,10,bert,1000000,10\n"
        "c,4,2000000,20,dqn,1000000,10\n"
    )
    frame = history_frame(path)
    assert frame["submit_time"].tolist() == [1.0, 2.0, 3.0]
    assert frame["iterations"].tolist() == [10, 20, 30]
    assert frame["num_gpus"].tolist() == [2, 4, 1]
