"""compare and the figures: verified results, structural checks on plots."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.patches import Rectangle

from ddlsched.core.model import Instance, Schedule, ScheduledJob
from ddlsched.experiments import CompareConfig, compare
from ddlsched.plotting import gantt, gpu_lanes, jct_cdf, ratio_distribution


def test_compare_ratios_against_proven_optima() -> None:
    """Non-preemptive methods never beat the optimum; every schedule is verified.

    LAS preempts, so the non-preemptive OPT(A) does not bound it from below.
    """
    report = compare(CompareConfig(jobs=5, instances=4))
    summary = report.summary()
    assert summary["optima_proven"] == 4
    for method, row in summary["methods"].items():  # type: ignore[union-attr]
        assert row["verified"] == 4
        assert row["worst_ratio"] >= row["mean_ratio"] - 1e-9
        if method != "las":
            assert row["mean_ratio"] >= 1 - 1e-9


def test_compare_rejects_unknown_method() -> None:
    """An unknown method is named."""
    with pytest.raises(ValueError, match="methods: unknown policy 'magic'"):
        CompareConfig(methods=("magic",))


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


def test_compare_cli_json_and_plot(tmp_path: Path) -> None:
    """compare --json has the summary; --plot writes a PNG."""
    png = tmp_path / "f.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ddlsched.cli",
            "compare",
            "--jobs",
            "4",
            "--instances",
            "2",
            "--json",
            "--plot",
            str(png),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["instances"] == 2 and set(doc["methods"]) >= {"asrpt", "fifo"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


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


def test_compare_stops_cleanly_on_ctrl_c() -> None:
    """SIGINT stops compare within seconds, with the table of what finished and exit 130.

    Regression: HiGHS catches SIGINT during a solve and returned normally, so
    Ctrl-C was swallowed and the whole run went on.
    """
    import signal

    process = subprocess.Popen(
        [sys.executable, "-m", "ddlsched.cli", "compare", "--instances", "500", "--jobs", "12"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(6)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted" in out and "| asrpt |" in out
