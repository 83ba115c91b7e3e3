"""Each term of the elastic Lagrangian's value, worked by hand at positive prices, and its
cost when arrivals are far apart."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ddlsched.formulations import elastic_lagrangian
from ddlsched.formulations.elastic_bounds import JobNeeds
from ddlsched.formulations.elastic_lagrangian import (
    AreaCurve,
    _dual_value,
    _pricing,
    elastic_lagrangian_bound,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.core.elastic import ElasticJob

GPUS, BLOCK = 2, 10.0
"""Two GPUs, blocks of 10 s: each block's capacity is 20 GPU-seconds."""


def _hand_job() -> elastic_lagrangian._Pricing:
    """A job whose first round is at 0, with a restart of 5 s, floor 15 s and ``a(D)``
    infinite below 10 s, 40 GPU-seconds at 10 s, falling linearly to 20 at 20 s and flat
    after. Completion intervals of 10 s over a 30 s window end at 10, 20 and 30 s; they
    cost ``max(t, 15)`` = 15, 15, 20 and need ``5 + a(end - 5)`` = inf, 35 and 25
    GPU-seconds; the tail (completion after the window) is charged 30; blocks 0..2."""
    area = AreaCurve(np.array([10.0, 20.0]), np.array([40.0, 20.0]))
    return _pricing(JobNeeds(0.0, 15.0, 25.0), area, 30.0, 10.0, 5.0, BLOCK)


def test_the_pricing_problem_by_hand() -> None:
    """Charges, GPU-seconds needed (the restart counted once), tail at the window's end
    and the job's three blocks, as worked out in the fixture's docstring."""
    job = _hand_job()
    assert job.charges.tolist() == [15.0, 15.0, 20.0]
    assert math.isinf(job.needs[0]) and job.needs[1:].tolist() == [35.0, 25.0]
    assert job.tail == 30.0
    assert (job.first_block, job.blocks) == (0, 3)


def test_the_dual_value_at_positive_prices_by_hand() -> None:
    """Prices 1, 0.5, 0.25 on blocks 0, 1, 2. Completing by 20 s: 20 GPU-seconds in block
    1 (10) and 15 in block 0 (15), plus charge 15: 40. By 30 s: 20 in block 2 (5) and 5
    in block 1 (2.5), plus charge 20: 27.5, the cheapest (below the tail's 30). The
    capacity term is (1 + 0.5 + 0.25) x 20 = 35, so L = 27.5 - 35 = -7.5, with 0, 5 and
    20 GPU-seconds in the blocks."""
    value, usage = _dual_value(
        [_hand_job()], np.array([0]), np.array([1.0, 0.5, 0.25]), GPUS, BLOCK
    )
    assert value == pytest.approx(-7.5, abs=1e-12)
    assert usage.tolist() == pytest.approx([0.0, 5.0, 20.0])


def test_the_tail_is_taken_when_every_completion_costs_more_by_hand() -> None:
    """Prices 2 on every block: completing by 20 s costs 15 + 70, by 30 s 20 + 50; the tail
    costs 30 and uses no block. L = 30 - 6 x 20 = -90."""
    value, usage = _dual_value([_hand_job()], np.array([0]), np.full(3, 2.0), GPUS, BLOCK)
    assert value == pytest.approx(-90.0, abs=1e-12)
    assert usage.tolist() == [0.0, 0.0, 0.0]


def test_two_jobs_share_a_block_by_hand() -> None:
    """The hand job twice, the second starting 20 s later (its blocks 2..4, block 2
    shared), prices 1, 0.5, 0.25, 0.6, 0.1 on the five covered blocks. The first pays
    27.5 as alone (20 GPU-seconds in block 2, 5 in block 1). The second (charges 35, 35,
    40; needs inf, 35, 25) completes by 40 s for 35 + 20 x 0.25 + 15 x 0.6 = 49, or by
    50 s for 40 + 20 x 0.1 + 5 x 0.25 = 43.25, the cheapest, under its tail 50. The
    capacity term is 2.45 x 20 = 49: L = 27.5 + 43.25 - 49 = 21.75; block 2 holds 25."""
    first = _hand_job()
    area = AreaCurve(np.array([10.0, 20.0]), np.array([40.0, 20.0]))
    second = _pricing(JobNeeds(20.0, 15.0, 25.0), area, 30.0, 10.0, 5.0, BLOCK)
    prices = np.array([1.0, 0.5, 0.25, 0.6, 0.1])
    value, usage = _dual_value([first, second], np.array([0, 2]), prices, GPUS, BLOCK)
    assert value == pytest.approx(21.75, abs=1e-12)
    assert usage.tolist() == pytest.approx([0.0, 5.0, 25.0, 0.0, 20.0])


def test_far_apart_arrivals_price_only_the_blocks_their_windows_cover(
    priced_blocks: list[int],
) -> None:
    """Two one-epoch BERT jobs, one at 0 and one near 10^9 s: the prices cover only the
    jobs' windows (a few hundred blocks, not the 3.3 million between 0 and 10^9 s), and
    the bound is the one for the same pair 3 x 10^6 s apart (same phase on the blocks and
    rounds), so the gap changes nothing."""
    bounds = []
    for late in (999_999_900.0, 3_000_000.0):
        jobs = [ElasticJob("a", "bert", 0.0, 1, 12, 1), ElasticJob("b", "bert", late, 1, 12, 1)]
        bounds.append(elastic_lagrangian_bound(jobs, 4, steps=5).value)
    assert max(priced_blocks) < 1000
    assert bounds[0] == pytest.approx(bounds[1], rel=1e-9)


def _greedy_costs(job: elastic_lagrangian._Pricing, prices: np.ndarray, gpus: int) -> list[float]:
    """Each completion interval's charge plus its GPU-seconds bought cheapest first, one
    interval and one block at a time, straight from the definition: block ``b`` holds at
    most ``gpus`` times its overlap with ``[start, end)`` (``inf`` when the blocks cannot
    hold the need)."""
    costs = []
    for charge, need, end in zip(job.charges, job.needs, job.ends, strict=True):
        rooms = []
        for b in range(job.blocks):
            low = max((job.first_block + b) * BLOCK, job.start)
            high = min((job.first_block + b + 1) * BLOCK, end)
            rooms.append((prices[b], gpus * max(high - low, 0.0)))
        left, paid = float(need), 0.0
        for price, room in sorted(rooms):
            take = min(room, left)
            paid, left = paid + price * take, left - take
        held = math.isfinite(need) and left <= 1e-9 * max(need, 1.0)
        costs.append(charge + paid if held else math.inf)
    return costs


@settings(max_examples=150, deadline=None)
@given(
    start=st.floats(0.0, 35.0),
    step=st.floats(0.7, 23.0),
    window=st.floats(1.0, 60.0),
    restart=st.floats(0.0, 6.0),
    slope=st.floats(0.0, 4.0),
    gpus=st.integers(1, 5),
    data=st.data(),
)
def test_each_jobs_price_is_its_cheapest_interval_bought_block_by_block(
    start: float, step: float, window: float, restart: float, slope: float, gpus: int, data
) -> None:
    """Against :func:`_greedy_costs` for random jobs (start inside a block, intervals that
    do not divide the blocks, ends inside blocks and on their edges) and prices (zeros,
    ties, far apart): the job's price is the least of the intervals' costs and the tail,
    and the GPU-seconds it places fit each block's room, sum to the chosen need and cost
    the chosen price."""
    area = AreaCurve(np.array([2.0, 2.0 + 10 * slope + 1e-3]), np.array([30.0, 12.0]))
    job = _pricing(JobNeeds(start, 3.0, 12.0), area, window, step, restart, BLOCK)
    levels = st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0, 3.0, 1e-7])
    prices = np.array(data.draw(st.lists(levels, min_size=job.blocks, max_size=job.blocks)))
    cost, usage = elastic_lagrangian._price_job(job, prices, gpus, BLOCK)
    expected = min(min(_greedy_costs(job, prices, gpus)), job.tail)
    assert cost == pytest.approx(expected, rel=1e-9, abs=1e-9)
    edges = (job.first_block + np.arange(job.blocks + 1)) * BLOCK
    rooms = gpus * (edges[1:] - np.maximum(edges[:-1], job.start))
    assert np.all(usage >= 0) and np.all(usage <= rooms * (1 + 1e-12) + 1e-12)
    if cost < job.tail:
        placed = job.charges + float(usage @ prices)
        assert any(
            math.isclose(usage.sum(), need, rel_tol=1e-9) and math.isclose(at, cost, abs_tol=1e-9)
            for need, at in zip(job.needs, placed, strict=True)
        )
    else:
        assert usage.sum() == 0.0
