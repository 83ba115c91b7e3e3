"""A Lagrangian lower bound on the total JCT of any elastic run: finishing fast costs GPU-seconds.

:func:`~ddlsched.formulations.elastic_bounds.elastic_flow_bound` charges each job its
floor (alone at its ceiling, on as many GPUs as it likes) and the cluster its least
GPU-seconds (every job at its per-GPU ceiling), combined only through the ranks of the
completion times. But a job that finishes fast runs wide, at a low goodput per GPU, so
it holds many GPU-seconds; when jobs overlap they cannot all have that. This bound
charges the trade-off, job by job, and prices the cluster's GPU-seconds over time.

**A job's least area for a given duration.** For epoch ``e`` with work ``w_e`` and the
least concave majorant ``H_e`` of ``(0, 0), (R, h_e(R))`` (``h_e`` from
:func:`~ddlsched.formulations.elastic_bounds.rate_curve`: progress per second on ``R``
GPUs, any placement and batch), progressing for ``tau`` seconds in all needs at least
``tau * H_e^-1(w_e / tau)`` GPU-seconds (any mix of allocations over time is a point
under the majorant's perspective): piecewise linear in ``tau`` through ``(w_e / h_i,
g_i w_e / h_i)`` for the majorant's vertices ``(g_i, h_i)``, convex and non-increasing.
The least total over the epochs with ``sum_e tau_e <= D``, ``a(D)``
(:func:`area_curve`), is convex, non-increasing, and found greedily: each epoch starts
at its fastest vertex and the segments that save most GPU-seconds per second are taken
first. A job whose first round is ``s`` and that completes at ``C`` progresses for at
most ``C - s - restart`` seconds, so it holds at least ``restart + a(C - s - restart)``
GPU-seconds, all within ``[s, C]``.

**Relaxation.** Time is cut into blocks of ``block`` seconds; in each, the jobs hold at
most ``G`` times its length GPU-seconds. Only the blocks some job's window covers get a
price (the others hold nothing, so their price would stay 0), so the cost follows the
jobs' windows, not the span of their arrivals. A job's possible completion times are cut into
intervals of ``step`` seconds from its first round (finer than the rounds: completion is
interpolated inside a round). Every run satisfies, for every job: completion in ``[t, t +
step)`` costs ``C >= max(t, s + floor)`` and needs at least ``restart + a(t + step - s -
restart)`` GPU-seconds inside ``[s, t + step]`` (``a`` is non-increasing), at most ``G``
times the overlap in each block; or completion after the job's window, charged the
window's end. Pricing each block's GPU-seconds at ``mu_b >= 0`` (Lagrange multipliers of
the capacities), each job alone picks its cheapest interval and spreads its GPU-seconds
over the cheapest blocks of its window; for **every** ``mu >= 0``

.. code-block:: text

   L(mu) = sum_j min_t [ max(t, s_j + floor_j) + cheapest GPU-seconds ] - sum_b mu_b G |b|

is at most the least ``sum_j C_j`` of any run (weak duality), so the bound is the best
``L`` met by a fixed number of projected supergradient steps (deterministic, no clock),
less the releases. The step is Polyak's towards a target above the best value so far
(:data:`AMBITION`, adapted after each step; never above a known run's total, when given:
Goffin and Kiwiel's variable target, Math. Programming 85, 1999). Releases, restarts
after the first, node boundaries, epoch order and the tie between a job's GPU-seconds
and the times it runs are relaxed. With ``mu = 0`` it is
the per-job floors. (Lagrangian relaxation of capacity with one pricing problem per job:
Fisher, *The Lagrangian relaxation method for solving integer programming problems*,
Management Science 1981; the time-indexed form for parallel machines: van den Akker,
Hurkens and Savelsbergh, *Time-indexed formulations for machine scheduling problems:
column generation*, INFORMS J. Computing 2000.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from ddlsched.formulations.elastic_bounds import (
    SAFETY,
    JobNeeds,
    check_bound_settings,
    job_needs,
    rate_curve,
)

from ddlsched.core.elastic import Application, ElasticJob, load_application
from ddlsched.core.params import DEFAULT_MEMORY_LIMIT

AMBITION = 1.0
"""Polyak's target at first: the best value so far raised by this fraction of the best flow
time (the value less the releases; raised half again after a step that gains, at most
doubled; halved after one that does not). Bold first steps pay here: on workload 8, 1.0
gave 0.6 % more than 0.1 after 100 steps."""

MAX_INTERVALS = 5_000_000
"""Most (job, completion interval) and (job, block) pairs in all: the pricing problems
hold a few numbers per pair, so a tiny ``step`` or ``block`` (or a huge window) is
refused before anything is allocated (the eight Pollux workloads at the defaults use
about 300,000)."""

__all__ = ["AreaCurve", "ElasticLagrangianBound", "area_curve", "elastic_lagrangian_bound"]


@dataclass(frozen=True)
class AreaCurve:
    """``a(D)``: the least GPU-seconds of a job's progress within ``D`` seconds (module
    docstring), piecewise linear through ``(durations[k], areas[k])``, ``inf`` below the
    first duration (faster than the job's ceilings allow) and flat after the last."""

    durations: np.ndarray
    areas: np.ndarray

    def __call__(self, seconds: np.ndarray) -> np.ndarray:
        """``a`` at each of ``seconds``."""
        seconds = np.asarray(seconds, dtype=float)
        inside = np.interp(seconds, self.durations, self.areas)
        return np.where(seconds < self.durations[0] * (1 - 1e-12), np.inf, inside)


def majorant_vertices(curve: np.ndarray) -> list[tuple[float, float]]:
    """The vertices ``(g, h)`` of the least concave majorant of ``(0, 0)`` and ``(R,
    curve[R - 1])``, ``R = 1 .. len(curve)``, after the origin and up to its highest."""
    hull: list[tuple[float, float]] = [(0.0, 0.0)]
    for r, value in enumerate(curve):
        point = (float(r + 1), float(value))
        while len(hull) >= 2 and _turns_up(hull[-2], hull[-1], point):
            hull.pop()
        hull.append(point)
    top = max(range(1, len(hull)), key=lambda k: (hull[k][1], -k))
    return hull[1 : top + 1]


def _turns_up(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether ``a`` lies on or under the segment from ``o`` to ``b`` (so it is no vertex)."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]) >= 0


def area_curve(app: Application, most_gpus: int) -> AreaCurve:
    """``a(D)`` of ``app`` on at most ``most_gpus`` GPUs (module docstring). Epochs whose
    ceiling is infinite take no time and no GPU-seconds (as in the floors)."""
    works = np.diff(np.concatenate(([0.0], app.epoch_ends[: app.epochs])))
    fastest_time, fastest_area = 0.0, 0.0
    slopes: list[float] = []
    lengths: list[float] = []
    for epoch, work in enumerate(works):
        curve = rate_curve(app, epoch, most_gpus)
        if work <= 0 or not np.all(np.isfinite(curve)):
            continue
        vertices = majorant_vertices(curve)
        times = [work / h for _, h in reversed(vertices)]  # fastest first
        areas = [g * work / h for g, h in reversed(vertices)]
        fastest_time += times[0]
        fastest_area += areas[0]
        for k in range(1, len(times)):
            slopes.append((areas[k] - areas[k - 1]) / (times[k] - times[k - 1]))
            lengths.append(times[k] - times[k - 1])
    order = np.argsort(slopes, kind="stable")  # most GPU-seconds saved per second first
    steps = np.asarray(lengths, dtype=float)[order]
    saved = steps * np.asarray(slopes, dtype=float)[order]
    durations = fastest_time + np.concatenate(([0.0], np.cumsum(steps)))
    least = np.maximum(fastest_area + np.concatenate(([0.0], np.cumsum(saved))), 0.0)
    return AreaCurve(durations, least)


@dataclass(frozen=True)
class ElasticLagrangianBound:
    """The Lagrangian bound on ``sum_j (C_j - r_j)`` of any run.

    Attributes
    ----------
    value
        The best ``L(mu)`` met, less the releases (made safe by
        :data:`~ddlsched.formulations.elastic_bounds.SAFETY`); at least the per-job floors.
    steps
        Supergradient steps taken (fewer than asked when the prices reached the
        maximum of ``L``: no block over or under its capacity at a positive price).
    """

    value: float
    steps: int


@dataclass
class _Pricing:
    """One job's pricing problem: its candidate completion rounds, their charges and
    GPU-seconds needed, and the blocks of its window."""

    charges: np.ndarray
    needs: np.ndarray
    ends: np.ndarray
    start: float
    tail: float
    first_block: int
    blocks: int


def _pricing(
    need: JobNeeds,
    area: AreaCurve,
    window: float,
    step: float,
    restart: float,
    block: float,
) -> _Pricing:
    """The job's completion intervals of ``step`` seconds from its first round to the end
    of ``window``, and what each costs."""
    count = max(1, math.ceil(window / step))
    starts = need.start + step * np.arange(count)
    ends = starts + step
    charges = np.maximum(starts, need.start + need.floor)
    needs = restart + area(ends - need.start - restart)
    tail = max(float(ends[-1]), need.start + need.floor)
    first = math.floor(need.start / block)
    return _Pricing(
        charges, needs, ends, need.start, tail, first, math.ceil(ends[-1] / block) - first
    )


def _price_job(
    job: _Pricing, price: np.ndarray, gpus: int, block: float
) -> tuple[float, np.ndarray]:
    """The job's least ``charge + priced GPU-seconds`` over its rounds and the tail, and
    the GPU-seconds it puts in each of its blocks (``price``: its blocks' prices).

    A completion interval ending in block ``m`` may use blocks ``0 .. m - 1`` whole and
    block ``m`` up to the interval's end; its GPU-seconds go to the cheapest first (a
    fractional knapsack). The intervals are taken block by block: the whole blocks sorted
    once per ``m``, each interval's cost read from their running sums."""
    edges = (job.first_block + np.arange(job.blocks + 1)) * block
    low, high = np.maximum(edges[:-1], job.start), edges[1:]
    whole = gpus * (high - low)
    where = np.minimum(np.searchsorted(high, job.ends, side="left"), job.blocks - 1)
    bounds = np.searchsorted(where, np.arange(job.blocks + 1), side="left")
    cost = np.full(len(job.needs), np.inf)
    for m in np.flatnonzero(bounds[1:] > bounds[:-1]):
        first, last = bounds[m], bounds[m + 1]
        cost[first:last] = _interval_costs(
            price[:m],
            whole[:m],
            price[m],
            gpus * (job.ends[first:last] - low[m]),
            job.needs[first:last],
        )
    total = job.charges + cost
    best = int(np.argmin(total))
    usage = np.zeros(job.blocks)
    if total[best] >= job.tail:
        return job.tail, usage
    order = np.argsort(price, kind="stable")
    room = gpus * np.clip(np.minimum(high[order], job.ends[best]) - low[order], 0, None)
    before = np.cumsum(room) - room
    usage[order] = np.clip(job.needs[best] - before, 0.0, room)
    return float(total[best]), usage


def _interval_costs(
    prices: np.ndarray,
    rooms: np.ndarray,
    partial_price: float,
    partial: np.ndarray,
    needs: np.ndarray,
) -> np.ndarray:
    """The least priced GPU-seconds of ``needs`` from whole blocks (``prices``,
    ``rooms``) and one more block with room ``partial`` at ``partial_price``, cheapest
    first; ``inf`` where they do not hold the need."""
    order = np.argsort(prices, kind="stable")
    sorted_prices = prices[order]
    held = np.concatenate(([0.0], np.cumsum(rooms[order])))
    paid = np.concatenate(([0.0], np.cumsum(rooms[order] * sorted_prices)))
    cheaper = int(np.searchsorted(sorted_prices, partial_price, side="right"))

    def from_whole(amount: np.ndarray) -> np.ndarray:
        if len(prices) == 0:
            return np.zeros_like(amount)
        k = np.clip(np.searchsorted(held, amount, side="left"), 1, len(prices))
        return paid[k - 1] + sorted_prices[k - 1] * (amount - held[k - 1])

    with np.errstate(invalid="ignore"):  # a need of inf: cost inf, masked below
        cost = np.where(
            needs <= held[cheaper],
            from_whole(np.minimum(needs, held[cheaper])),
            np.where(
                needs <= held[cheaper] + partial,
                paid[cheaper] + partial_price * (needs - held[cheaper]),
                partial_price * partial + from_whole(np.clip(needs - partial, 0.0, held[-1])),
            ),
        )
        enough = (held[-1] + partial >= needs * (1 + 1e-12)) & np.isfinite(needs)
    return np.where(enough, cost, np.inf)


def _covered_blocks(problems: list[_Pricing]) -> np.ndarray:
    """Where each job's blocks start among the blocks some job's window covers, in time
    order. A block no window covers holds no GPU-seconds, so its price stays 0 and it
    adds nothing to ``L``; leaving it out makes the prices' length the jobs' windows,
    not the span of the arrivals."""
    covered = np.unique(np.concatenate([p.first_block + np.arange(p.blocks) for p in problems]))
    return np.searchsorted(covered, [p.first_block for p in problems])


def _dual_value(
    problems: list[_Pricing], firsts: np.ndarray, prices: np.ndarray, gpus: int, block: float
) -> tuple[float, np.ndarray]:
    """``L(mu)`` at the covered blocks' ``prices`` (each job's blocks from ``firsts``): the
    jobs' cheapest choices less every block's priced capacity ``mu_b G |b|``; and the
    GPU-seconds the choices put in each block."""
    usage = np.zeros(len(prices))
    value = -float(prices.sum()) * gpus * block
    for problem, first in zip(problems, firsts, strict=True):
        cost, used = _price_job(problem, prices[first : first + problem.blocks], gpus, block)
        value += cost
        usage[first : first + len(used)] += used
    return value, usage


def elastic_lagrangian_bound(
    jobs: Sequence[ElasticJob],
    total_gpus: int,
    round_length: float = 60.0,
    restart_time: float = 30.0,
    *,
    block: float = 300.0,
    step: float = 15.0,
    steps: int = 100,
    windows: Sequence[float] | None = None,
    applications: Sequence[Application] | None = None,
    upper: float | None = None,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> ElasticLagrangianBound:
    """The Lagrangian bound of the module docstring on the total JCT of any run.

    Parameters
    ----------
    jobs, total_gpus, round_length, restart_time
        The workload, the cluster's GPUs and the simulation's settings.
    block
        Seconds per capacity block (one multiplier each).
    step
        Seconds per completion interval (shorter: tighter and slower).
    steps
        Subgradient steps (any number gives a valid bound; more, a larger one).
    windows
        Per job, the seconds after its first round its rounds cover (completion later is
        charged the window's end); default: four hours after its least-area duration.
    applications
        Each job's :class:`Application` (default: loaded for its model and budget).
    upper
        The total JCT of some run, if known: caps the target of Polyak's step. It
        steers the search only; the bound is valid whatever it is.
    memory_limit
        Bytes the pricing problems may need (default 2 GiB; ``None``: no limit), estimated
        by :data:`ddlsched.formulations.memory.ELASTIC_LAGRANGIAN` before they are built.

    Raises
    ------
    ValueError
        On bad settings (``block``, ``step`` or a window not a finite number > 0,
        ``steps`` not an integer >= 0, windows not one per job, ``upper`` not finite),
        or more than :data:`MAX_INTERVALS` intervals or blocks.
    ModelTooLarge
        When the pricing problems' estimated memory exceeds ``memory_limit`` (a
        ``ValueError`` too).
    """
    if not jobs:
        return ElasticLagrangianBound(0.0, 0)
    check_bound_settings("elastic_lagrangian_bound", total_gpus, round_length, restart_time)
    _check_settings(len(jobs), block, step, steps, windows, upper)
    apps = applications or [load_application(job.model, job.epochs) for job in jobs]
    needs = job_needs(jobs, total_gpus, round_length, restart_time, apps)
    curves: dict[int, AreaCurve] = {}
    for app in apps:
        if id(app) not in curves:
            curves[id(app)] = area_curve(app, total_gpus)
    if windows is None:
        windows = [restart_time + float(curves[id(app)].durations[-1]) + 14400.0 for app in apps]
    _check_size(windows, step, block, memory_limit)
    problems = [
        _pricing(need, curves[id(app)], window, step, restart_time, block)
        for need, app, window in zip(needs, apps, windows, strict=True)
    ]
    released = math.fsum(job.submit_time for job in jobs)
    best, taken = _ascend(problems, total_gpus, block, steps, released, upper)
    return ElasticLagrangianBound(max(best - released, 0.0) * SAFETY, taken)


def _check_settings(
    jobs: int,
    block: float,
    step: float,
    steps: object,
    windows: Sequence[float] | None,
    upper: float | None,
) -> None:
    """Refuse settings that are not finite, positive numbers where they must be, in one
    line naming the setting."""
    name = "elastic_lagrangian_bound"
    for label, value in (("block", block), ("step", step)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name}: {label} must be a finite number > 0, got {value!r}")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"{name}: steps must be an integer >= 0, got {steps!r}")
    if windows is not None:
        if len(windows) != jobs:
            raise ValueError(f"{name}: {len(windows)} windows for {jobs} jobs")
        bad = [w for w in windows if not (math.isfinite(w) and w > 0)]
        if bad:
            raise ValueError(f"{name}: windows must be finite numbers > 0, got {bad[0]!r}")
    if upper is not None and not math.isfinite(upper):
        raise ValueError(f"{name}: upper must be finite, got {upper!r}")


def _check_size(
    windows: Sequence[float], step: float, block: float, memory_limit: int | None
) -> None:
    """Refuse, before allocating, settings that give more than :data:`MAX_INTERVALS`
    (job, interval) or (job, block) pairs (a job's intervals reach at most a step past its
    window, its blocks cover that and one more at each end), or more memory than
    ``memory_limit`` (:data:`ddlsched.formulations.memory.ELASTIC_LAGRANGIAN`)."""
    from ddlsched.formulations.memory import ELASTIC_LAGRANGIAN

    intervals = sum(max(1.0, math.ceil(w / step)) for w in windows)
    blocks = sum((max(w, step) + step) / block + 2 for w in windows)
    if max(intervals, blocks) > MAX_INTERVALS:
        raise ValueError(
            f"elastic_lagrangian_bound: step {step!r} s and block {block!r} s give "
            f"{intervals:.3g} completion intervals and {blocks:.3g} blocks over the jobs' "
            f"windows, more than {MAX_INTERVALS:,}; use a longer step, block or window"
        )
    ELASTIC_LAGRANGIAN.check(
        (math.ceil(intervals), math.ceil(blocks)),
        memory_limit,
        f"step {step!r} s, block {block!r} s: use a longer step, block or window",
        "elastic_lagrangian_bound(memory_limit=...)",
    )


def _ascend(
    problems: list[_Pricing],
    gpus: int,
    block: float,
    steps: int,
    released: float,
    upper: float | None,
) -> tuple[float, int]:
    """Projected supergradient ascent on the block prices from 0 (module docstring): the
    supergradient is each block's GPU-seconds used less its capacity, without the parts
    that would push a zero price below zero; the step is Polyak's towards the best value
    so far raised by the ambition times the best flow time (the value less the
    ``released`` sum: where the clock starts changes nothing), capped at ``upper`` (a
    run's total JCT) plus the releases. The best ``L`` met and the steps taken."""
    firsts = _covered_blocks(problems)
    prices = np.zeros(max(int(f) + p.blocks for f, p in zip(firsts, problems, strict=True)))
    capacity = gpus * block
    value, usage = _dual_value(problems, firsts, prices, gpus, block)
    best, ambition = value, AMBITION
    target = None if upper is None else upper + released
    for taken in range(steps):
        slope = usage - capacity
        slope[(prices <= 0.0) & (slope < 0.0)] = 0.0
        norm = float(slope @ slope)
        if norm == 0.0:
            return best, taken  # no block over or under capacity at a positive price
        aim = best + ambition * abs(best - released)
        if target is not None and best < target < aim:
            aim = target
        prices = np.maximum(prices + (aim - value) / norm * slope, 0.0)
        value, usage = _dual_value(problems, firsts, prices, gpus, block)
        if value > best:
            best, ambition = value, min(1.5 * ambition, 2 * AMBITION)
        else:
            ambition /= 2.0
    return best, steps
