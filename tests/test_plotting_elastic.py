"""The elastic figures: what each panel draws, checked on the artists (ddlsched.plotting)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from ddlsched.plotting import elastic_figure, gpus_in_use


def test_gpus_in_use_draws_one_step_line_per_run_and_the_cluster() -> None:
    """One step line per run through its (time, GPUs) points, times in hours, and a dashed
    line at the cluster's GPUs."""
    usage = {"a": ([0.0, 60.0, 180.0], [4, 8, 0]), "b": ([60.0, 120.0], [2, 0])}
    ax = gpus_in_use(usage, 8)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["a", "b", "cluster"]
    assert list(lines[0].get_xdata()) == pytest.approx([0.0, 60 / 3600, 180 / 3600])
    assert list(lines[0].get_ydata()) == [4, 8, 0]
    assert lines[0].get_drawstyle() == "steps-post"
    assert set(lines[2].get_ydata()) == {8} and lines[2].get_linestyle() == "--"
    plt.close("all")


def test_the_elastic_figure_has_the_jct_cdf_above_the_gpus_in_use() -> None:
    """Two panels: the runs' JCT CDFs (each ending at 1), then their GPUs in use."""
    figure = elastic_figure(
        {"a": [100.0, 300.0], "b": [200.0]},
        {"a": ([0.0, 60.0], [4, 0]), "b": ([0.0, 60.0], [2, 0])},
        4,
    )
    top, bottom = figure.axes
    assert top.get_title() == "JCT CDF" and bottom.get_title() == "GPUs in use"
    assert all(line.get_ydata()[-1] == pytest.approx(1.0) for line in top.get_lines())
    assert len(bottom.get_lines()) == 3
    plt.close("all")
