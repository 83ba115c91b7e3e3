"""A lower bound on ``OPT(A)`` at trace scale: the start-time-indexed model with the GPU
capacity priced by Lagrange multipliers.

Notation as in :mod:`ddlsched.formulations.lower_bounds`: job ``i`` has ``g_i`` GPUs,
release ``r_i``, weight ``w_i`` and least processing time ``p_i = K_i alpha_i^min``
(the fastest mode); ``M`` GPUs in all, pooled.

**The relaxation.** Cut time into slots of ``Delta`` seconds. Job ``i`` is released
in slot ``R_i = floor(r_i / Delta)`` and covers ``d_i = floor(p_i / Delta)`` slots.
Starting in slot ``t >= R_i`` costs it ``w_i (max(Delta t, r_i) + p_i)`` and puts
``g_i`` GPUs on each of the slots ``t, ..., t + d_i - 1``. With a multiplier
``lambda_s >= 0`` on each slot's capacity (``lambda_s = 0`` outside ``[0, T)``),

    ``L(lambda) = sum_i min_{t >= R_i} [w_i (max(Delta t, r_i) + p_i)
    + g_i sum_{s = t}^{t + d_i - 1} lambda_s] - M sum_s lambda_s``.

*Theorem.* ``L(lambda) <= OPT(A)`` for every ``lambda >= 0``.

*Proof.* Take any schedule of A and let ``t_i = floor(S_i / Delta)``, so
``t_i >= R_i`` (as ``S_i >= r_i``). Job ``i`` runs during ``[S_i, S_i + K_i
alpha_i(x_i))``, which contains ``[S_i, S_i + p_i)``. For ``s`` in ``[t_i, t_i +
d_i)`` the instant ``(s + 1) Delta - epsilon`` lies in that interval for every small
``epsilon > 0`` (``(s + 1) Delta > S_i`` as ``s >= t_i``, and ``(s + 1) Delta <=
t_i Delta + p_i <= S_i + p_i``), so every job charged to slot ``s`` runs at that
instant, and their GPUs add up to at most ``M`` (whatever the servers, the mappings
or the GPU types). Hence ``sum_s lambda_s (load_s - M) <= 0``, and as ``C_i = S_i +
K_i alpha_i(x_i) >= max(Delta t_i, r_i) + p_i``, the schedule's ``sum w_i C_i`` is at
least the bracket at ``t = t_i`` summed over jobs, minus ``M sum lambda_s``, which
is at least ``L(lambda)``. The horizon ``T`` is not part of the proof: multipliers
on a finite set of slots are simply a relaxation of fewer capacity constraints. A
schedule with preemption does *not* map to this model (a job's slots need not be
consecutive): the bound is for the non-preemptive problem A only.

This is the Lagrangian relaxation of the time-indexed formulation of Dyer and
Wolsey (Discrete Appl. Math. 26, 1990) and Sousa and Wolsey (Math. Programming 54,
1992), with the pooled capacity of ``P | size_j | sum w_j C_j``; its best value
equals the LP relaxation of that model (bound 4 of
:mod:`~ddlsched.formulations.lower_bounds`) on the same slots, but each evaluation
is one small minimisation per job, so the slots can be fine at trace scale (the
subgradient method follows Held and Karp, Math. Programming 1, 1971, and Polyak's
step, 1969).

**Each job's minimum, bounded below in blocks.** The minimum over ``t >= R_i`` is
taken over blocks of consecutive starts ``[R_i + o_k, R_i + o_k + l_k)``: single
slots first, then blocks growing geometrically (:func:`block_offsets`), then the
tail. Over a block every start ``t`` costs at least ``w_i max(Delta a, r_i)``
(``a`` its first start) plus ``g_i`` times the multipliers of the slots every such
start covers, ``[a + l - 1, a + d_i)`` (none when ``l > d_i``): a lower bound on the
block's minimum, exact for single slots. Past the last block every start costs at
least ``w_i (max(Delta a, r_i) + p_i)``. So each job's value is at most its true
minimum and the theorem still holds, whatever the blocks. Their lengths trade
strength for work: a block at most half as long as the job is charged at least half
its slots, so blocks are capped at half the shortest duration of the job's class
(durations within a factor 2, :func:`duration_classes`) for the first
:attr:`StartLagrangianSettings.blocks` of them; the growth keeps the work per job
independent of the horizon.

**Multipliers.** Projected supergradient ascent (the load of each slot, from the
chosen blocks, minus ``M``) with Polyak's step towards a target (an upper bound's
objective, when given, but never above 1.5 times the best value so far), the step
halved after five rounds without progress; a
fixed count of rounds (:attr:`StartLagrangianSettings.rounds`), never a clock. Every
``lambda`` tried gives a valid bound; the largest is kept. ``lambda = 0`` gives the
job bound, where the method starts.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from ddlsched.formulations.lower_bounds import SAFETY, BoundInputs

from ddlsched.core.result import LowerBound

NAME = "start-lagrangian"
"""The bound's name in :class:`~ddlsched.core.result.LowerBound`."""


SLOTS_PER_JOB = 50
"""Slots per job over the horizon (up to :attr:`StartLagrangianSettings.slots`): each round
costs time in proportion to the slots as well as to the jobs."""


@dataclass(frozen=True)
class StartLagrangianSettings:
    """Settings of the start-time Lagrangian bound (module docstring).

    Attributes
    ----------
    slot
        ``Delta`` in seconds (``None``: the horizon over the slots below).
    slots
        Most slots over the horizon when ``slot`` is ``None`` (default 200,000); fewer
        on small instances, :data:`SLOTS_PER_JOB` per job but at least 1,000.
    rounds
        Supergradient rounds (default 150): a count, never a clock.
    single_starts
        Starts taken one slot at a time before the blocks grow (default 32).
    growth
        Each further block's length over its offset (default 0.05).
    blocks
        Blocks per job, at most half the job's duration long, before they grow freely
        (default 400).
    chunk
        Jobs evaluated together (memory: about ``chunk x blocks x 40`` bytes).
    """

    slot: float | None = None
    slots: int = 200_000
    rounds: int = 150
    single_starts: int = 32
    growth: float = 0.05
    blocks: int = 400
    chunk: int = 8_192

    def __post_init__(self) -> None:
        if self.slot is not None and not (math.isfinite(self.slot) and self.slot > 0):
            raise ValueError(f"slot: must be a finite number > 0, got {self.slot!r}")
        for name in ("slots", "rounds", "single_starts", "blocks", "chunk"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < (0 if name == "rounds" else 1):
                raise ValueError(f"{name}: must be a positive integer, got {value!r}")
        if not (math.isfinite(self.growth) and self.growth > 0):
            raise ValueError(f"growth: must be a finite number > 0, got {self.growth!r}")


def block_offsets(
    single: int, growth: float, reach: int, cap: int | None = None, most: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The blocks' offsets ``o_k`` from a job's release slot and their lengths ``l_k``:
    ``single`` blocks of one slot, then each ``max(1, floor(growth * o_k))`` long but at
    most ``cap`` while there are fewer than ``most`` blocks, contiguous, until the offsets
    reach ``reach``; the last offset (length 0) is the tail, from which on only the waiting
    is counted."""
    offsets: list[int] = []
    lengths: list[int] = []
    offset = 0
    while offset < reach:
        length = 1 if offset < single else max(1, int(growth * offset))
        if cap is not None and (most is None or len(offsets) < most):
            length = min(length, cap)
        offsets.append(offset)
        lengths.append(length)
        offset += length
    offsets.append(offset)
    lengths.append(0)
    return np.array(offsets, dtype=np.int64), np.array(lengths, dtype=np.int64)


def duration_classes(duration: np.ndarray) -> np.ndarray:
    """Each job's class ``c``: 0 for ``d = 0``, else ``d`` in ``[2^(c-1), 2^c)``; its blocks
    are at most ``max(1, 2^(c-2))`` long (:func:`block_offsets`), half its shortest duration,
    so each block is charged at least half of the job's slots."""
    return np.array([int(d).bit_length() for d in duration], dtype=np.int64)


@dataclass(frozen=True)
class _Slots:
    """The inputs on the slot grid: ``delta``, each job's release slot and duration in
    slots, the horizon ``T`` (slots with a multiplier), and per duration class
    (:func:`duration_classes`) its jobs and its blocks (offsets, lengths)."""

    delta: float
    release_slot: np.ndarray
    duration: np.ndarray
    horizon: int
    classes: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]


def _slots(inputs: BoundInputs, settings: StartLagrangianSettings) -> _Slots:
    """The grid: rounding safe as the proof needs (releases and durations down, with a
    bias against floating-point error), the horizon long enough for a pooled list
    schedule (``max r + sum g p / M + max p``; a choice for strength, not validity)."""
    r, p, g = inputs.releases, inputs.processing, inputs.gpus
    span = float(np.max(r) + np.sum(g * p) / inputs.num_gpus + np.max(p)) if len(r) else 1.0
    count = min(settings.slots, max(1_000, SLOTS_PER_JOB * len(r)))
    delta = settings.slot if settings.slot is not None else max(span, 1e-9) / count
    release_slot = np.floor(r / delta * (1 - 1e-12)).astype(np.int64)
    duration = np.floor(p / delta * (1 - 1e-12)).astype(np.int64)
    horizon = max(1, math.ceil(span / delta))
    reach = max(1, horizon - int(np.min(release_slot, initial=horizon)))
    kinds = duration_classes(duration)
    classes = []
    for kind in np.unique(kinds):
        cap = None if kind == 0 else max(1, 2 ** max(0, int(kind) - 2))
        blocks = block_offsets(
            settings.single_starts, settings.growth, reach, cap, settings.blocks
        )
        classes.append((np.flatnonzero(kinds == kind), *blocks))
    return _Slots(delta, release_slot, duration, horizon, tuple(classes))


@dataclass
class _Evaluation:
    """``L(lambda)`` on the flow time (``sum_i`` of each job's least cost minus ``w_i
    r_i``, minus ``M sum lambda``) and its supergradient (each slot's load minus ``M``)."""

    flow: float
    slope: np.ndarray


def _evaluate(
    multipliers: np.ndarray, grid: _Slots, inputs: BoundInputs, chunk: int
) -> _Evaluation:
    """Each job's least cost over its blocks (module docstring), in chunks of jobs."""
    horizon = grid.horizon
    prefix = np.concatenate(([0.0], np.cumsum(multipliers)))
    w, r, g, p = inputs.weights, inputs.releases, inputs.gpus, inputs.processing
    costs = np.empty(len(r))
    covered_from = np.full(len(r), horizon, dtype=np.int64)
    covered_to = np.full(len(r), horizon, dtype=np.int64)
    for jobs, offsets, lengths in grid.classes:
        for begin in range(0, len(jobs), chunk):
            rows = jobs[begin : begin + chunk]
            first = grid.release_slot[rows, None] + offsets[None, :]
            low = np.minimum(first + np.maximum(lengths - 1, 0)[None, :], horizon)
            high = np.minimum(first + grid.duration[rows, None], horizon)
            # The tail (length 0) and blocks longer than the job cover no slot for sure.
            high = np.where((lengths > 0)[None, :], np.maximum(high, low), low)
            waiting = np.maximum(grid.delta * first - r[rows, None], 0.0)
            cost = w[rows, None] * waiting + g[rows, None] * (prefix[high] - prefix[low])
            best = np.argmin(cost, axis=1)
            picked = np.arange(cost.shape[0])
            costs[rows] = cost[picked, best]
            covered_from[rows] = low[picked, best]
            covered_to[rows] = high[picked, best]
    load = np.bincount(covered_from, weights=g, minlength=horizon + 1)
    load -= np.bincount(covered_to, weights=g, minlength=horizon + 1)
    slope = np.cumsum(load)[:horizon] - inputs.num_gpus
    flow = math.fsum((costs + w * p).tolist()) - inputs.num_gpus * math.fsum(multipliers.tolist())
    return _Evaluation(flow, slope)


def start_lagrangian_bound(
    inputs: BoundInputs,
    settings: StartLagrangianSettings | None = None,
    upper_bound: float | None = None,
) -> LowerBound:
    """The start-time Lagrangian bound on ``OPT(A)`` (module docstring), with its flow value.

    Parameters
    ----------
    inputs
        The instance's :class:`~ddlsched.formulations.lower_bounds.BoundInputs`.
    settings
        Slot, rounds and blocks (default :class:`StartLagrangianSettings`).
    upper_bound
        ``sum w C`` of any feasible schedule, a cap on the target of Polyak's step
        (1.5 times the best value so far). It steers the search only: the bound
        is valid whatever it is.

    Returns
    -------
    LowerBound
        Named :data:`NAME`, valid for problem A (non-preemptive), never for a
        preemptive schedule.
    """
    settings = settings or StartLagrangianSettings()
    began = time.perf_counter()
    grid = _slots(inputs, settings)
    release_weight = inputs.release_weight
    target = None if upper_bound is None else upper_bound - release_weight
    multipliers = np.zeros(grid.horizon)
    evaluation = _evaluate(multipliers, grid, inputs, settings.chunk)
    best, step, stalled = evaluation.flow, 1.0, 0
    for _ in range(settings.rounds):
        norm = float(np.dot(evaluation.slope, evaluation.slope))
        if norm == 0.0:
            break
        aim = min(target, 1.5 * best) if target is not None and target > best else 1.5 * best
        multipliers = np.maximum(
            multipliers + step * (aim - evaluation.flow) / norm * evaluation.slope, 0.0
        )
        evaluation = _evaluate(multipliers, grid, inputs, settings.chunk)
        if evaluation.flow > best:
            best, stalled = evaluation.flow, 0
        else:
            stalled += 1
            if stalled == 5:
                step, stalled = step / 2.0, 0
    notes = (
        *inputs.notes(),
        f"slot {grid.delta:.6g} s, {grid.horizon} slots, "
        f"{max(len(offsets) for _, offsets, _ in grid.classes)} blocks per job at most, "
        f"{settings.rounds} rounds",
    )
    flow = best * SAFETY
    value = (best + release_weight) * SAFETY
    return LowerBound(value, NAME, True, time.perf_counter() - began, notes, flow)
