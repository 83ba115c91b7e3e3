"""Figures: what each draws, checked on the artists (ddlsched.plotting)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import Rectangle

from ddlsched.core.model import Instance, Schedule, ScheduledJob
from ddlsched.plotting import gantt, gpu_lanes, jct_cdf, ratio_distribution


def test_gantt_draws_one_box_per_gpu(ring_instance: Instance) -> None:
    """A Gantt chart has one rectangle per (job, GPU) and hatches spanning jobs."""
    schedule = Schedule(
        (
            ScheduledJob("ring", 0.0, 8.0, (0, 0, 1, 1)),
            ScheduledJob("solo", 8.0, 11.0, (1,)),
        )
    )
    ax = gantt(ring_instance, schedule)
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(boxes) == 5
    assert sum(bool(b.get_hatch()) for b in boxes) == 4  # the ring spans both servers
    segments = {job_id: lanes for job_id, _, _, lanes in gpu_lanes(ring_instance, schedule)}
    assert len(set(segments["ring"])) == 4
    plt.close("all")


def test_ratio_and_cdf_plots_have_one_series_per_method() -> None:
    """Ratio plot: one box per method; CDF: one line per method ending at 1."""
    ax = ratio_distribution({"a": [1.0, 1.2], "b": [1.1, 1.5, 1.3]})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    ax = jct_cdf({"a": [1.0, 2.0], "b": [3.0]})
    assert len(ax.get_lines()) == 2
    assert all(line.get_ydata()[-1] == pytest.approx(1.0) for line in ax.get_lines())
    plt.close("all")


def test_gantt_draws_pieces_of_preempted_jobs(ring_instance: Instance) -> None:
    """A preempted job is drawn piece by piece (LAS schedules)."""
    from ddlsched.core.model import Piece

    pieces = (Piece(0.0, 3.0, (0, 0, 1, 1)), Piece(6.0, 12.0, (0, 0, 1, 1)))
    schedule = Schedule(
        (ScheduledJob("ring", 0.0, 12.0, None, pieces), ScheduledJob("solo", 3.0, 6.0, (0,))),
        restart_cost=1.0,
    )
    ax = gantt(ring_instance, schedule)
    assert len([p for p in ax.patches if isinstance(p, Rectangle)]) == 4 + 4 + 1
    plt.close("all")
