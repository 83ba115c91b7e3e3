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
tail. A start ``t`` in a block ``[a, a + l)`` covers the ``d_i - l + 1`` slots
``[a + l - 1, a + d_i)`` every start of the block covers (none when ``l > d_i``) and
``min(l - 1, d_i)`` others, all in ``[a, a + l - 1 + d_i)``; so it costs at least
``w_i max(Delta a, r_i)`` plus ``g_i`` times the multipliers of the common slots plus
``min(l - 1, d_i)`` times the least multiplier over ``[a, a + l - 1 + d_i)`` (a
sparse table answers each such query in two look-ups): a lower bound on the block's
minimum, exact for single slots. Past the last block every start costs at least
``w_i (max(Delta a, r_i) + p_i)``. So each job's value is at most its true minimum
and the theorem still holds, whatever the blocks. A job of no whole slot (``d_i =
0``) costs only its wait, least at ``R_i``, its one start. The least multiplier
keeps a job that would start long after its release, past the first blocks,
charged for its slots where multipliers are smooth; the blocks' lengths trade the
rest of the strength for work: blocks are capped at half the shortest duration of
the job's class (durations within a factor 2, :func:`duration_classes`) for the
first :attr:`StartLagrangianSettings.blocks` of them; the growth keeps the work per
job independent of the horizon.

**Multipliers.** Projected supergradient ascent (the load of each slot, from the
chosen blocks, minus ``M``; a block's ``min(l - 1, d_i)`` other slots are loaded on
its slot of least multiplier) over levels, coarse to fine
(:attr:`StartLagrangianSettings.levels`): at a level of ``G`` slots the
multipliers move by whole groups of ``G`` consecutive slots, along the supergradient
summed over each group (the supergradient of ``L`` restricted to multipliers constant
on the groups, a function of far fewer variables, whose ascent is far faster at
trace scale; any such multipliers are still multipliers, so every value is still a
bound), each level starting from the best multipliers so far. The step is Polyak's
towards a target above the best value so far by a fraction (:data:`AMBITION` at
first, raised after a gain, halved after a round without one; never above an upper
bound's objective, when given), a variable-target rule in the spirit of Goffin and
Kiwiel's level method (Math. Programming 85, 1999). A fixed count of rounds
(:attr:`StartLagrangianSettings.rounds`), never a clock. Every ``lambda`` tried
gives a valid bound; the largest is kept. ``lambda = 0`` gives the job bound, where
the method starts.

**Flow time.** ``L(lambda)`` is computed on the flow time, each job's least cost minus
``w_i r_i`` (the waits ``max(Delta t, r_i) - r_i``, never a difference of two sums near
``10^12``), and made safe against rounding at the scale of the times as the fast bounds
are: ``max(sum_i w_i p_i, L - A)`` with the allowance ``A`` of
:func:`~ddlsched.formulations.lower_bounds.flow_allowance` ("Flow time" in
:mod:`~ddlsched.formulations.lower_bounds`); each wait is one rounding of a time, well
within it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from ddlsched.formulations.lower_bounds import SAFETY, BoundInputs, safe_flow_value
from ddlsched.formulations.memory import START_LAGRANGIAN, MiB

from ddlsched.core.params import DEFAULT_MEMORY_LIMIT
from ddlsched.core.result import LowerBound

AMBITION = 0.3
"""Polyak's target at first: the best value so far raised by this fraction of itself (raised
half again after each gain, at most doubled; halved after each round without one)."""

NAME = "start-lagrangian"
"""The bound's name in :class:`~ddlsched.core.result.LowerBound`."""


MAX_SLOTS = 2_000_000
"""Most slots over the horizon (ten times the default :attr:`StartLagrangianSettings.slots`):
the sparse table of least multipliers takes about ``16 log2(T)`` bytes per slot (some 700 MB
at this limit), so a finer ``slot`` is refused before anything is allocated."""

SLOTS_PER_JOB = 50
"""Slots per job over the horizon (up to :attr:`StartLagrangianSettings.slots`): each round
costs time in proportion to the slots as well as to the jobs."""


@dataclass(frozen=True)
class StartLagrangianSettings:
    """Settings of the start-time Lagrangian bound (module docstring).

    Attributes
    ----------
    slot
        ``Delta`` in seconds (``None``: the horizon over the slots below); one giving
        more than :data:`MAX_SLOTS` slots over the horizon is refused (``ValueError``).
    slots
        Most slots over the horizon when ``slot`` is ``None`` (default 200,000; at most
        :data:`MAX_SLOTS`); fewer
        on small instances, :data:`SLOTS_PER_JOB` per job but at least 1,000.
    rounds
        Supergradient rounds (default 300; on full Philly about 160 s of CPU): a count,
        never a clock.
    single_starts
        Starts taken one slot at a time before the blocks grow (default 32).
    growth
        Each further block's length over its offset (default 0.05).
    blocks
        Blocks per job, at most half the job's duration long, before they grow freely
        (default 200).
    chunk
        Jobs evaluated together (memory: about ``chunk x blocks x 100`` bytes per
        round, beside the tables kept for all rounds, about 30 bytes per job and block:
        some 450 MB on full Philly).
    levels
        Group sizes, in slots, of the multipliers' levels, coarse to fine (default
        4096, 1024, 256, 64, 16, 4, 1): the rounds are shared out over them.
    memory_limit
        Bytes the bound may need (default
        :data:`~ddlsched.core.params.DEFAULT_MEMORY_LIMIT`, 2 GiB; ``None``: no limit),
        estimated by :data:`ddlsched.formulations.memory.START_LAGRANGIAN` before anything
        is allocated. Past it the horizon is cut into fewer slots (halved until it fits,
        down to 1,000; a coarser grid keeps the bound valid) with a note; with ``slot``
        given, or still past it at 1,000 slots, the bound is refused
        (:class:`~ddlsched.formulations.memory.ModelTooLarge`).
    """

    slot: float | None = None
    slots: int = 200_000
    rounds: int = 300
    single_starts: int = 32
    growth: float = 0.05
    blocks: int = 200
    chunk: int = 4_096
    levels: tuple[int, ...] = (4096, 1024, 256, 64, 16, 4, 1)
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT

    def __post_init__(self) -> None:
        if self.slot is not None and not (math.isfinite(self.slot) and self.slot > 0):
            raise ValueError(f"slot: must be a finite number > 0, got {self.slot!r}")
        for name in ("slots", "rounds", "single_starts", "blocks", "chunk"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < (0 if name == "rounds" else 1):
                raise ValueError(f"{name}: must be a positive integer, got {value!r}")
        if self.slots > MAX_SLOTS:
            raise ValueError(f"slots: must be at most {MAX_SLOTS:,}, got {self.slots!r}")
        if not self.levels or not all(isinstance(size, int) and size >= 1 for size in self.levels):
            raise ValueError(f"levels: must be positive integers, got {self.levels!r}")
        if not (math.isfinite(self.growth) and self.growth > 0):
            raise ValueError(f"growth: must be a finite number > 0, got {self.growth!r}")
        if self.memory_limit is not None and (
            not isinstance(self.memory_limit, int) or self.memory_limit < 1
        ):
            raise ValueError(
                f"memory_limit: must be an integer >= 1 (bytes), got {self.memory_limit!r}"
            )


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
    horizon = _horizon(span, delta)
    reach = max(1, horizon - int(np.min(release_slot, initial=horizon)))
    kinds = duration_classes(duration)
    classes = []
    for kind in np.unique(kinds):
        cap = None if kind == 0 else max(1, 2 ** max(0, int(kind) - 2))
        blocks = block_offsets(
            settings.single_starts, settings.growth, reach, cap, settings.blocks
        )
        if kind == 0:  # no slot to charge: the wait alone, least at the release slot
            blocks = (np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64))
        classes.append((np.flatnonzero(kinds == kind), *blocks))
    return _Slots(delta, release_slot, duration, horizon, tuple(classes))


def _size(grid: _Slots, settings: StartLagrangianSettings) -> tuple[int, int, int]:
    """The counts :data:`~ddlsched.formulations.memory.START_LAGRANGIAN` prices: the
    least-multiplier table's entries (``T + 1`` per level, ``floor(log2(T + 1)) + 1``
    levels), the (job, block) pairs kept for all rounds, and those one chunk evaluates."""
    size = grid.horizon + 1
    pairs = sum(len(jobs) * len(offsets) for jobs, offsets, _ in grid.classes)
    widest = max(len(offsets) for _, offsets, _ in grid.classes)
    chunk = min(settings.chunk, len(grid.release_slot))
    return size * size.bit_length(), pairs, chunk * widest


def _fitted_slots(
    inputs: BoundInputs, settings: StartLagrangianSettings
) -> tuple[_Slots, tuple[str, ...]]:
    """:func:`_slots`, on fewer slots where their estimated memory exceeds
    ``settings.memory_limit`` (halved until it fits, down to 1,000), and the note saying so.

    Raises
    ------
    ModelTooLarge
        When it does not fit with ``settings.slot`` given, or at 1,000 slots.
    """
    grid = _slots(inputs, settings)
    limit = settings.memory_limit
    if limit is None:
        return grid, ()
    first = grid.horizon
    while START_LAGRANGIAN.estimate(*_size(grid, settings)) > limit:
        fewer = dataclasses.replace(settings, slots=max(1_000, grid.horizon // 2))
        if settings.slot is not None or fewer.slots >= settings.slots:
            START_LAGRANGIAN.check(
                _size(grid, settings),
                limit,
                "use a larger slot, fewer blocks or a smaller chunk",
                "StartLagrangianSettings.memory_limit",
            )
        settings = fewer
        grid = _slots(inputs, settings)
    if grid.horizon == first:
        return grid, ()
    return grid, (
        f"{grid.horizon:,} slots instead of {first:,}: the memory limit of {limit / MiB:,.0f} MiB",
    )


def _horizon(span: float, delta: float) -> int:
    """The slots over ``span`` seconds (``ceil(span / delta)``, at least 1).

    Raises
    ------
    ValueError
        Past :data:`MAX_SLOTS`, naming ``slot`` and the least one allowed.
    """
    count = max(1.0, math.ceil(span / delta))
    if count > MAX_SLOTS:
        raise ValueError(
            f"slot: {delta!r} s gives {count:.4g} slots over the horizon of {span:.6g} s, "
            f"more than {MAX_SLOTS:,}; use a slot of at least {span / MAX_SLOTS:.6g} s"
        )
    return int(count)


def _table_ends(low: np.ndarray, high: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions, in a :class:`_RangeMin` table over ``size`` values, of the two
    overlapping power-of-two windows covering each ``[low, high)`` (``high > low``)."""
    level = np.frexp(high - low)[1].astype(np.int64) - 1  # floor(log2), exact on integers
    row = level * size
    return row + low, row + high - np.left_shift(1, level)


class _RangeMin:
    """The least multiplier over any range of slots, and where it is, by a sparse table
    (``O(T log T)`` to build, two look-ups per query). Slot ``T`` (past the horizon) is
    priced 0, so a range reaching past the horizon has minimum 0, as the proof has it."""

    def __init__(self, multipliers: np.ndarray) -> None:
        size = len(multipliers) + 1
        levels = size.bit_length()  # windows 1, 2, 4, ... up to the largest <= size
        values = np.empty(levels * size)
        where = np.empty(levels * size, dtype=np.int32 if size < 2**31 else np.int64)
        values[: size - 1] = multipliers
        values[size - 1] = 0.0
        where[:size] = np.arange(size)
        width = 1
        for level in range(1, levels):
            last = slice((level - 1) * size, level * size)
            this = slice(level * size, (level + 1) * size)
            last_v, last_i = values[last], where[last]
            this_v, this_i = values[this], where[this]
            # A window reaching past the end is the one starting at the same slot.
            take = last_v[width:] < last_v[:-width]
            np.minimum(last_v[:-width], last_v[width:], out=this_v[:-width])
            np.copyto(this_i[:-width], np.where(take, last_i[width:], last_i[:-width]))
            this_v[-width:] = last_v[-width:]
            this_i[-width:] = last_i[-width:]
            width *= 2
        self.size = size
        self.values = values
        self.where = where

    def _ends(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The two overlapping power-of-two windows covering ``[low, high)``, as
        positions in the flat table."""
        return _table_ends(low, high, self.size)

    def least_at(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """:meth:`least` of ranges given by their windows' positions (:func:`_table_ends`)."""
        return np.minimum(self.values[left], self.values[right])

    def least(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """The least multiplier over each ``[low, high)`` (``high > low``)."""
        left, right = self._ends(low, high)
        return np.minimum(self.values[left], self.values[right])

    def argleast(self, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """A slot of least multiplier in each ``[low, high)`` (``high > low``)."""
        left, right = self._ends(low, high)
        take = self.values[right] < self.values[left]
        return np.where(take, self.where[right], self.where[left])


@dataclass
class _Evaluation:
    """``L(lambda)`` on the flow time (``sum_i`` of each job's least cost minus ``w_i
    r_i``, minus ``M sum lambda``) and its supergradient (each slot's load minus ``M``)."""

    flow: float
    slope: np.ndarray


def _block_spans(
    release: np.ndarray,
    duration: np.ndarray,
    offsets: np.ndarray,
    lengths: np.ndarray,
    horizon: int,
) -> tuple[np.ndarray, ...]:
    """For jobs released at slot ``release`` of ``duration`` slots and blocks at
    ``offsets`` of ``lengths`` (broadcast together): each block's first start, the slots
    every start covers (``[low, high)``), how many other slots each start covers
    (``count``) and the slots some start covers (``[union_low, reach)``)."""
    first = release + offsets
    spare = np.maximum(lengths - 1, 0)
    low = np.minimum(first + spare, horizon)
    high = np.maximum(np.minimum(first + duration, horizon), low)
    count = np.minimum(spare, duration)
    union_low = np.minimum(first, horizon)
    reach = np.maximum(np.minimum(first + spare + duration, horizon + 1), union_low + 1)
    return first, low, high, count, union_low, reach


@dataclass(frozen=True)
class _Chunk:
    """What the multipliers do not change for a chunk of jobs of one class: each block's
    waiting cost, its sure slots ``[low, high)``, and, from the first block of several
    starts (``multi``) on, its other slots' count and the positions of its least
    multiplier's range in the :class:`_RangeMin` table."""

    rows: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    wait: np.ndarray
    low: np.ndarray
    high: np.ndarray
    multi: int
    count: np.ndarray
    left: np.ndarray
    right: np.ndarray

    def charges(self, prefix: np.ndarray, least: _RangeMin) -> np.ndarray:
        """Each block's charge (module docstring) at the multipliers of cumulative sums
        ``prefix`` and range minima ``least``: its sure slots' multipliers, plus its other
        slots' count times the least multiplier over the slots some start covers."""
        charge = prefix[self.high] - prefix[self.low]
        charge[:, self.multi :] += self.count * least.least_at(self.left, self.right)
        return charge


def _chunks(grid: _Slots, inputs: BoundInputs, chunk: int) -> list[_Chunk]:
    """The :class:`_Chunk` of every ``chunk`` jobs of each class, computed once for all
    rounds (indices as 32-bit integers: the table has under ``2^31`` entries)."""
    w, r = inputs.weights, inputs.releases
    size = grid.horizon + 1
    small = np.int32 if size * (size.bit_length() + 1) < 2**31 else np.int64
    found = []
    for jobs, offsets, lengths in grid.classes:
        multi = int(np.searchsorted(lengths[:-1], 2))
        for begin in range(0, len(jobs), chunk):
            rows = jobs[begin : begin + chunk]
            first, low, high, count, union_low, reach = _block_spans(
                grid.release_slot[rows, None],
                grid.duration[rows, None],
                offsets[None, :],
                lengths[None, :],
                grid.horizon,
            )
            wait = w[rows, None] * np.maximum(grid.delta * first - r[rows, None], 0.0)
            left, right = _table_ends(union_low[:, multi:], reach[:, multi:], size)
            found.append(
                _Chunk(
                    rows,
                    offsets,
                    lengths,
                    wait,
                    low.astype(small),
                    high.astype(small),
                    multi,
                    count[:, multi:].astype(small),
                    left.astype(small),
                    right.astype(small),
                )
            )
    return found


def _evaluate(
    multipliers: np.ndarray,
    grid: _Slots,
    inputs: BoundInputs,
    chunk: int,
    chunks: list[_Chunk] | None = None,
) -> _Evaluation:
    """Each job's least cost over its blocks (module docstring), in chunks of jobs, and the
    supergradient: the slots the chosen block covers for sure, plus its other slots'
    count on the slot of least multiplier among those its starts cover (``chunks``:
    :func:`_chunks`, computed here when not given)."""
    horizon = grid.horizon
    prefix = np.concatenate(([0.0], np.cumsum(multipliers)))
    least = _RangeMin(multipliers)
    w, g, p = inputs.weights, inputs.gpus, inputs.processing
    costs = np.empty(len(w))
    chosen = np.zeros((5, len(w)), dtype=np.int64)  # low, high, count, union_low, reach
    for part in _chunks(grid, inputs, chunk) if chunks is None else chunks:
        cost = part.wait + g[part.rows, None] * part.charges(prefix, least)
        best = np.argmin(cost, axis=1)
        costs[part.rows] = cost[np.arange(len(part.rows)), best]
        spans = _block_spans(
            grid.release_slot[part.rows],
            grid.duration[part.rows],
            part.offsets[best],
            part.lengths[best],
            horizon,
        )
        chosen[:, part.rows] = spans[1:]
    low, high, count, union_low, reach = chosen
    load = np.bincount(low, weights=g, minlength=horizon + 1)
    load -= np.bincount(high, weights=g, minlength=horizon + 1)
    at = least.argleast(union_low, reach)
    load = np.cumsum(load) + np.bincount(at, weights=g * count, minlength=horizon + 1)
    flow = math.fsum((costs + w * p).tolist()) - inputs.num_gpus * math.fsum(multipliers.tolist())
    return _Evaluation(flow, load[:horizon] - inputs.num_gpus)


def _ascend(
    grid: _Slots,
    inputs: BoundInputs,
    settings: StartLagrangianSettings,
    target: float | None,
    progress: Callable[[int, int], None] | None = None,
) -> float:
    """The largest ``L(lambda)`` met by the ascent (module docstring), from ``lambda = 0``.

    The rounds are shared out over the levels; at each level the multipliers move by
    groups of that many slots, with the supergradient summed over each group (the
    supergradient of ``L`` restricted to prices constant on the groups). Each level starts
    from the best multipliers so far.
    """
    multipliers = np.zeros(grid.horizon)
    chunks = _chunks(grid, inputs, settings.chunk)
    current = _evaluate(multipliers, grid, inputs, settings.chunk, chunks)
    best, best_multipliers, best_slope = current.flow, multipliers, current.slope
    ambition = AMBITION
    shares = np.array_split(np.arange(settings.rounds), len(settings.levels))
    done = 0
    for size, share in zip(settings.levels, shares, strict=True):
        groups = np.arange(0, grid.horizon, size)
        multipliers, current = best_multipliers, _Evaluation(best, best_slope)
        ambition = max(ambition, AMBITION / 4)
        for _ in share:
            if progress is not None:
                progress(done, settings.rounds)
            done += 1
            slope = np.add.reduceat(current.slope, groups)
            norm = float(np.dot(slope, slope))
            if norm == 0.0:
                break
            aim = best + ambition * abs(best)
            if target is not None and best < target < aim:
                aim = target
            step = np.repeat((aim - current.flow) / norm * slope, size)[: grid.horizon]
            multipliers = np.maximum(multipliers + step, 0.0)
            current = _evaluate(multipliers, grid, inputs, settings.chunk, chunks)
            if current.flow > best:
                best, best_multipliers, best_slope = current.flow, multipliers, current.slope
                ambition = min(1.5 * ambition, 1.0)
            else:
                ambition /= 2.0
    return best


def start_lagrangian_bound(
    inputs: BoundInputs,
    settings: StartLagrangianSettings | None = None,
    upper_bound: float | None = None,
    progress: Callable[[int, int], None] | None = None,
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
        (module docstring). It steers the search only: the bound is valid whatever
        it is.
    progress
        Called as ``progress(rounds_done, rounds)`` before each round.

    Returns
    -------
    LowerBound
        Named :data:`NAME`, valid for problem A (non-preemptive), never for a
        preemptive schedule.
    """
    settings = settings or StartLagrangianSettings()
    began = time.perf_counter()
    grid, capped = _fitted_slots(inputs, settings)
    release_weight = inputs.release_weight
    target = None if upper_bound is None else upper_bound - release_weight
    best = _ascend(grid, inputs, settings, target, progress)
    notes = (
        *inputs.notes(),
        f"slot {grid.delta:.6g} s, {grid.horizon} slots, "
        f"{max(len(offsets) for _, offsets, _ in grid.classes)} blocks per job at most, "
        f"{settings.rounds} rounds",
        *capped,
    )
    flow = safe_flow_value(inputs, best)
    value = (best + release_weight) * SAFETY
    return LowerBound(value, NAME, True, time.perf_counter() - began, notes, flow)
