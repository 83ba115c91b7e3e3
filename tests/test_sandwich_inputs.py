"""The sandwich API (ddlsched.sandwich) against wrong inputs and the sums it reports:
one-line errors naming the argument, a table only for a schedule of its instance, and
the period and GPU sums checked by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from ddlsched.formulations.start_lagrangian import NAME as START_LAGRANGIAN
from ddlsched.formulations.start_lagrangian import StartLagrangianSettings

from ddlsched.api import simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.sandwich import (
    by_gpus,
    by_period,
    decompose_jct,
    flow_sandwich,
    job_table,
    model_lower_bounds,
)
from tests.examples import ring_instance

QUICK = StartLagrangianSettings(slots=500, rounds=20)
"""A few rounds on a coarse grid: enough for tiny instances, fast."""


def _one_line(caught: pytest.ExceptionInfo) -> None:
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("keywords", "argument"),
    [
        ({"settings": "x"}, "settings"),
        ({"preemptive": "no"}, "preemptive"),
        ({"preemptive": 0}, "preemptive"),
        ({"preemptive": False, "evaluations": 1.5}, "evaluations"),
        ({"preemptive": False, "seed": -1}, "seed"),
        ({"preemptive": False, "restart_cost": math.inf}, "restart_cost"),
    ],
)
def test_the_sandwich_refuses_arguments_of_the_wrong_kind(keywords: dict, argument: str) -> None:
    """flow_sandwich refuses settings that are not StartLagrangianSettings, a model flag
    that is not a bool, and the upper side's bad arguments, naming each in one line."""
    keywords = {"preemptive": False, **keywords}
    with pytest.raises(ValueError, match=f"^{argument}: ") as caught:
        flow_sandwich(ring_instance(), **keywords)
    _one_line(caught)


def test_problem_as_lower_side_holds_the_start_time_bound() -> None:
    """Problem A's bounds include the start-time Lagrangian bound (valid only there), and
    the sandwich's lower end is at least its flow value; the preemptive model's do not."""
    instance = generate(GeneratorConfig.exact_friendly(6, 2, 2), 1)
    names = [b.name for b in model_lower_bounds(instance, preemptive=False, settings=QUICK)]
    assert START_LAGRANGIAN in names
    start = next(
        b
        for b in model_lower_bounds(instance, preemptive=False, settings=QUICK)
        if b.name == START_LAGRANGIAN
    )
    sandwich = flow_sandwich(instance, preemptive=False, evaluations=0, settings=QUICK)
    assert sandwich.lower.flow_value >= start.flow_value * (1 - 1e-9)
    names = [b.name for b in model_lower_bounds(instance, preemptive=True)]
    assert START_LAGRANGIAN not in names


def test_a_table_needs_a_schedule_of_its_own_instance() -> None:
    """job_table refuses ``None`` and another instance's schedule (same job ids, other
    releases and sizes), naming ``schedule``, instead of reporting a negative excess."""
    config = GeneratorConfig.exact_friendly(4, 2, 2)
    zero, one = generate(config, 0), generate(config, 1)
    schedule = simulate(zero, "sjf", bound=False).schedule
    assert {j.id for j in zero.jobs} == {j.id for j in one.jobs}
    with pytest.raises(ValueError, match=r"^schedule: must be a Schedule") as caught:
        job_table(zero, None, preemptive=False)  # type: ignore[arg-type]
    _one_line(caught)
    with pytest.raises(ValueError, match=r"^schedule: not a feasible schedule") as caught:
        job_table(one, schedule, preemptive=False)
    _one_line(caught)
    assert job_table(zero, schedule, preemptive=False)["excess"].sum() >= 0


@pytest.mark.parametrize("lower", [math.nan, math.inf, -1.0, "1", None, True])
def test_the_decomposition_refuses_a_lower_bound_that_is_not_a_number(lower: object) -> None:
    """decompose_jct takes a finite bound >= 0 only, naming ``lower`` in one line."""
    with pytest.raises(ValueError, match=r"^lower: ") as caught:
        decompose_jct(ring_instance(), "sjf", lower)  # type: ignore[arg-type]
    _one_line(caught)


def _hand_table() -> pd.DataFrame:
    """Three jobs released at 0, 0.6 and 1.4 (1, 2 and 2 GPUs) with weighted JCTs 4, 6
    and 10 against shares 2, 3 and 4."""
    return pd.DataFrame(
        {
            "release": [0.0, 0.6, 1.4],
            "gpus": [1, 2, 2],
            "weighted_jct": [4.0, 6.0, 10.0],
            "bound_share": [2.0, 3.0, 4.0],
            "excess": [2.0, 3.0, 6.0],
        }
    )


def test_periods_floor_the_release_and_ratios_are_jct_over_share() -> None:
    """By 1-second periods the jobs at 0 and 0.6 share period 0, the one at 1.4 is in
    period 1 (floor, not rounding); each period's over_bound is its weighted JCT over its
    share (10 / 5 and 10 / 4), its share_of_excess its excess over the total (5 / 11)."""
    periods = by_period(_hand_table(), 1.0)
    assert list(periods.index) == [0, 1]
    assert list(periods["jobs"]) == [2, 1]
    assert list(periods["over_bound"]) == pytest.approx([2.0, 2.5])
    assert periods.loc[0, "share_of_excess"] == pytest.approx(5 / 11)
    gpus = by_gpus(_hand_table())
    assert list(gpus["over_bound"]) == pytest.approx([2.0, 16 / 7])


@pytest.mark.parametrize("seconds", [1e-300, 5e-324])
def test_a_period_giving_too_many_bins_is_refused(seconds: float) -> None:
    """A period so short that the releases span more bins than can be counted is refused
    by name, never an integer overflow or a silent wrong grouping."""
    with pytest.raises(ValueError, match=r"^seconds: ") as caught:
        by_period(_hand_table(), seconds)
    _one_line(caught)
