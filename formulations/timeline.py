"""The free GPUs of each resource over real time, for placing jobs one by one.

A :class:`Timeline` keeps the load as a step function: sorted breakpoints (every start and
end placed so far) and, on each segment between two breakpoints, the GPUs still free on
each resource (a server, or the pool of problem A1). :meth:`Timeline.earliest` answers,
for every mode of a job at once, the first instant from which the mode's GPUs are free for
its duration, with NumPy over the segments: ``O(modes x segments x resources)`` array
operations per job where checking every candidate instant against every placed job cost
``O(placed^2)`` Python steps per mode (60 jobs with 43,060 modes took 40 s).

The first instant is exact: only the earliest allowed instant and the breakpoints can be
it, and a mode fits from an instant ``c`` exactly when every segment meeting ``[c, c +
d)`` has room, i.e. ``c + d`` is at most the start of the first segment without room
after ``c`` (the same float comparison as checking each placed start inside the
interval).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np

WINDOW = 64
"""Segments :meth:`Timeline.earliest` examines first; the window doubles for the modes not
yet placed that might still complete first."""


class Timeline:
    """Free GPUs per resource on each segment ``[times[k], times[k + 1])``, the last one
    unbounded (the whole capacity free after every placed job)."""

    def __init__(self, capacities: Sequence[int]) -> None:
        self.times: list[float] = [-math.inf]
        self.free = np.array([list(capacities)], dtype=np.int64)

    def _split(self, moment: float) -> int:
        """The index of the segment starting at ``moment``, splitting the one containing it."""
        k = bisect.bisect_right(self.times, moment) - 1
        if self.times[k] == moment:
            return k
        self.times.insert(k + 1, moment)
        self.free = np.insert(self.free, k + 1, self.free[k], axis=0)
        return k + 1

    def place(self, start: float, end: float, usage: Sequence[int]) -> None:
        """Hold ``usage`` GPUs of each resource on ``[start, end)``."""
        first = self._split(start)
        last = self._split(end)
        self.free[first:last] -= np.asarray(usage, dtype=np.int64)

    def earliest(self, usages: np.ndarray, durations: np.ndarray, lowest: float) -> np.ndarray:
        """Per mode (row of ``usages``, GPUs per resource, and entry of ``durations``), the
        first instant ``>= lowest`` from which it fits for its duration, or ``inf`` for a
        mode that cannot complete before another mode of the same job does (it is never
        the one completing first; a tie is computed, so the first mode of equal completion
        wins as in a full scan)."""
        first = bisect.bisect_right(self.times, lowest) - 1
        starts = np.full(len(durations), math.inf)
        pending = np.arange(len(durations))
        best = math.inf
        width = WINDOW
        while pending.size:
            found, floor, complete = self._window(
                usages[pending], durations[pending], lowest, first, width
            )
            starts[pending] = found
            done = np.isfinite(found)
            if done.any():
                best = min(best, float(np.min(found[done] + durations[pending][done])))
            if complete:
                break
            open_ = ~done & (floor + durations[pending] <= best)
            pending = pending[open_]
            width *= 2
        return starts

    def _window(
        self, usages: np.ndarray, durations: np.ndarray, lowest: float, first: int, width: int
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """The first instants found within ``width`` segments from segment ``first`` (``inf``
        where none is sure yet), a lower bound on every mode's start, and whether the window
        reached the last, unbounded segment (then every start is found)."""
        stop = min(len(self.times), first + width)
        complete = stop == len(self.times)
        times = np.asarray(self.times[first:stop])
        edge = math.inf if complete else self.times[stop]
        moments = np.maximum(times, lowest)
        count = stop - first
        fits = (self.free[None, first:stop, :] >= usages[:, None, :]).all(axis=2)
        blocked = np.where(fits, count, np.arange(count)[None, :])
        next_blocked = np.minimum.accumulate(blocked[:, ::-1], axis=1)[:, ::-1]
        run_end = np.append(times, edge)[next_blocked]
        valid = fits & (moments[None, :] + durations[:, None] <= run_end)
        found = np.where(valid.any(axis=1), moments[np.argmax(valid, axis=1)], math.inf)
        trailing = fits & (next_blocked == count)
        floor = np.where(trailing.any(axis=1), moments[np.argmax(trailing, axis=1)], edge)
        return found, floor, complete
