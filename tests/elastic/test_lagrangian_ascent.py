"""The elastic Lagrangian's ascent seen from outside: what its target may and may not
change, and how its value grows with the steps.

Truths: the per-job floors (:func:`ddlsched.formulations.elastic_bounds.elastic_flow_bound`),
the bound's own value at fewer steps, and the same workload moved in time by a multiple of
the block, the round and the completion step (the relaxation is then the same problem, so
its bound must be the same number).
"""

from __future__ import annotations

import itertools
import math

import pytest
from ddlsched.formulations.elastic_bounds import elastic_flow_bound
from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound

from ddlsched.core.elastic import ElasticJob
from tests.elastic.workloads import MIXED_ROWS

GPUS = 4
"""One 4-GPU node: the eight mixed jobs cannot all run wide, so the prices lift the bound."""

SHIFTS = (3_000_000.0, 1_000_000_200.0)
"""Moves of every arrival, multiples of the default block (300 s), round (60 s) and
completion step (15 s): the blocks and rounds fall on the same phase."""


def _moved(shift: float) -> list[ElasticJob]:
    """The mixed workload with every arrival ``shift`` seconds later."""
    return [ElasticJob(n, m, t + shift, g, b, e) for n, m, t, g, b, e in MIXED_ROWS]


@pytest.mark.parametrize("upper", [0.0, -1e12, 1e-300])
def test_a_target_below_the_floors_steers_nothing(upper: float) -> None:
    """A known run's total below the per-job floors (wrong, as a caller may pass) caps the
    step's target only when it is above the best value met: the bound equals the one with
    no target at all, and the prices still lift it above the floors."""
    jobs = _moved(0.0)
    free = elastic_lagrangian_bound(jobs, GPUS, steps=10).value
    aimed = elastic_lagrangian_bound(jobs, GPUS, steps=10, upper=upper).value
    assert aimed == free
    assert free > 1.05 * elastic_flow_bound(jobs, GPUS).per_job


def test_more_steps_never_lower_the_bound() -> None:
    """The ascent is deterministic and the bound is the best value met, so each further
    step keeps or raises it (0 to 8 steps), from the floors at 0 steps."""
    jobs = _moved(0.0)
    values = [elastic_lagrangian_bound(jobs, GPUS, steps=n).value for n in range(9)]
    assert values[0] == pytest.approx(elastic_flow_bound(jobs, GPUS).per_job, rel=1e-8)
    assert all(later >= earlier for earlier, later in itertools.pairwise(values))
    assert values[-1] > values[0]


def test_a_known_runs_total_is_read_against_the_jobs_releases() -> None:
    """``upper`` is a total JCT (completions less releases): with arrivals 3 x 10^6 s and
    10^9 s late the target it sets is the same above the releases, so the two bounds are
    equal, and lift the floors (a target read without the releases would sit far below
    the best value and steer nothing)."""
    bounds = [elastic_lagrangian_bound(_moved(s), GPUS, steps=10, upper=6000.0) for s in SHIFTS]
    assert bounds[0].value == pytest.approx(bounds[1].value, rel=1e-9)
    assert bounds[0].value > 1.05 * elastic_flow_bound(_moved(0.0), GPUS).per_job


@pytest.mark.parametrize("shift", SHIFTS)
def test_the_bound_does_not_depend_on_where_the_clock_starts(shift: float) -> None:
    """The same workload moved by a multiple of the block, round and step is the same
    relaxation: with no known run, its bound after 10 steps is the one of the unmoved
    workload (which lifts the floors by more than 5%)."""
    here = elastic_lagrangian_bound(_moved(0.0), GPUS, steps=10).value
    later = elastic_lagrangian_bound(_moved(shift), GPUS, steps=10).value
    assert later == pytest.approx(here, rel=1e-6)


def test_an_infinite_block_is_refused_or_bounds_by_a_number() -> None:
    """``block=inf`` is no usable block length: the bound either refuses it naming
    ``block`` or returns a finite value (a nan 'bound' would be a promise it cannot keep)."""
    jobs = _moved(0.0)[:2]
    try:
        value = elastic_lagrangian_bound(jobs, GPUS, block=math.inf, steps=2).value
    except ValueError as error:
        assert "block" in str(error)
    else:
        assert math.isfinite(value)


def test_every_price_the_ascent_tries_is_non_negative(monkeypatch: pytest.MonkeyPatch) -> None:
    """Weak duality holds for prices ``mu >= 0`` only (a negative price rewards holding
    GPU-seconds in a block): every price vector the ascent evaluates on a crowded node,
    with or without a known run's total, has no negative entry, while some are positive."""
    from ddlsched.formulations import elastic_lagrangian

    lowest: list[float] = []
    highest: list[float] = []
    original = elastic_lagrangian._dual_value

    def recording(problems, firsts, prices, gpus, block):  # type: ignore[no-untyped-def]
        lowest.append(float(prices.min()))
        highest.append(float(prices.max()))
        return original(problems, firsts, prices, gpus, block)

    monkeypatch.setattr(elastic_lagrangian, "_dual_value", recording)
    for upper in (None, 6000.0):
        elastic_lagrangian_bound(_moved(0.0), GPUS, steps=25, upper=upper)
    assert min(lowest) >= 0.0
    assert max(highest) > 0.0


def test_the_steps_reported_are_the_steps_taken(priced_blocks: list[int]) -> None:
    """One job alone on 64 GPUs leaves every block slack at zero prices: the supergradient
    projects to zero and the ascent stops before its first step, so the result's ``steps``
    ("steps taken") is the number of price vectors evaluated after the first, 0."""
    bound = elastic_lagrangian_bound(_moved(0.0)[:1], 64, steps=50)
    assert bound.steps == len(priced_blocks) - 1
