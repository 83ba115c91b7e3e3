"""The figures of where the JCT gap sits (ddlsched.plotting), checked on their artists."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from ddlsched.plotting import jct_against_bound, jct_parts, slowdown_tail


def test_each_group_draws_its_share_and_its_excess_above_it() -> None:
    """One grey bar (the bound's share) and one red bar stacked on it (the excess) per
    group, the red bar's top at the group's total JCT."""
    summary = pd.DataFrame({"bound_share": [2.0, 5.0], "excess": [1.0, 4.0]}, index=[3, 7])
    ax = jct_against_bound(summary, xlabel="GPUs")
    bars = ax.patches
    assert len(bars) == 4
    tops = [bar.get_y() + bar.get_height() for bar in bars[2:]]
    assert tops == pytest.approx([3.0, 9.0])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["3", "7"]
    plt.close("all")


def test_the_slowdown_tail_has_one_line_per_schedule_falling_from_one() -> None:
    """One step line per schedule with a job slowed, the share of jobs slowed more than
    each value (3 jobs: 2/3 above the first, 1/3 above the second), on log axes."""
    ax = slowdown_tail({"a": [1.0, 1.5, 3.0], "b": [1.0, 1.0]})
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["a"].get_ydata()) == pytest.approx([2 / 3, 1 / 3])
    assert list(lines["a"].get_xdata()) == pytest.approx([1.0, 1.5])
    assert len(lines["b"].get_xdata()) == 1
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    plt.close("all")


def test_the_parts_are_stacked_over_the_bound() -> None:
    """Each policy's parts are stacked from 0 in order, in units of its bound: the last
    bar ends at the policy's total over its bound; a bound of 0 is refused."""
    ax = jct_parts({"p": {"bound": 2.0, "order": 3.0, "placement": -1.0, "servers": 2.0}})
    ends = [bar.get_x() + bar.get_width() for bar in ax.patches]
    assert ends == pytest.approx([1.0, 2.5, 2.0, 3.0])
    with pytest.raises(ValueError, match="first \\(the bound\\) must be > 0"):
        jct_parts({"p": {"bound": 0.0, "order": 1.0}})
    plt.close("all")
