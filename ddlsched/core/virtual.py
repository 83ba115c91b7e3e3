"""The virtual single machine: preemptive SRPT, online (:ref:`model-problem-a2`).

Job ``i`` enters at ``r_i`` with size ``v_i = g_i K_i alpha_i^max / M``; the
machine always processes the job with the shortest remaining size,
preempting when a shorter one arrives. For unit weights this is optimal for
``sum C_i`` (Schrage, *A Proof of the Optimality of the Shortest Remaining
Processing Time Discipline*, Oper. Res. 1968).

The machine is a heap keyed by remaining size. Only the job at the root is
processed, and its remaining size only falls while it is there, so the
root stays the root: advancing time touches the root alone and costs
``O(log n)`` per completion. A job's key elsewhere in the heap is its
remaining size when it was last preempted (or its size), which is exact.

Hooks let a policy follow the machine: ``on_complete(job, time)`` at each
virtual completion and ``on_preempt(job, remaining)`` when the running job
is displaced.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

TOLERANCE = 1e-12


@dataclass
class _Entry:
    remaining: float
    seq: int
    job: str
    valid: bool = True

    def __lt__(self, other: _Entry) -> bool:
        return (self.remaining, self.seq) < (other.remaining, other.seq)


class VirtualMachine:
    """Preemptive SRPT on one unit-speed machine, advanced by the caller.

    Parameters
    ----------
    on_complete
        Called as ``on_complete(job, time)`` at each virtual completion.
    on_preempt
        Called as ``on_preempt(job, remaining)`` when the processed job is
        displaced by a shorter arrival.
    record_pieces
        Keep each job's processing intervals (for A2 schedules).
    """

    def __init__(
        self,
        on_complete: Callable[[str, float], None] | None = None,
        on_preempt: Callable[[str, float], None] | None = None,
        record_pieces: bool = False,
    ) -> None:
        self._heap: list[_Entry] = []
        self._entries: dict[str, _Entry] = {}
        self._sizes: dict[str, float] = {}
        self._seq = itertools.count()
        self.time = 0.0
        self.completion: dict[str, float] = {}
        self._on_complete = on_complete
        self._on_preempt = on_preempt
        self.pieces: dict[str, list[tuple[float, float]]] | None = {} if record_pieces else None
        self._running_since = 0.0

    def _top(self) -> _Entry | None:
        while self._heap and not self._heap[0].valid:
            heapq.heappop(self._heap)
        return self._heap[0] if self._heap else None

    def _record(self, job: str, begin: float, end: float) -> None:
        if self.pieces is not None and end > begin:
            pieces = self.pieces.setdefault(job, [])
            if pieces and abs(pieces[-1][1] - begin) <= TOLERANCE * max(1.0, begin):
                pieces[-1] = (pieces[-1][0], end)
            else:
                pieces.append((begin, end))

    def advance(self, now: float) -> None:
        """Process jobs up to time ``now``, completing those that finish."""
        if now < self.time:
            raise ValueError(f"cannot go back in time from {self.time} to {now}")
        while True:
            top = self._top()
            if top is None:
                self.time = now
                return
            finish = self.time + top.remaining
            if finish <= now + TOLERANCE * max(1.0, now):
                heapq.heappop(self._heap)
                del self._entries[top.job]
                self._record(top.job, self.time, finish)
                self.time = finish
                self.completion[top.job] = finish
                if self._on_complete is not None:
                    self._on_complete(top.job, finish)
            else:
                self._record(top.job, self.time, now)
                top.remaining -= now - self.time
                self.time = now
                return

    def add(self, job: str, size: float, now: float) -> None:
        """Release ``job`` of ``size`` at ``now`` (advancing to ``now`` first)."""
        if job in self._entries or job in self.completion:
            raise ValueError(f"job {job!r} is already on the virtual machine")
        self.advance(now)
        top = self._top()
        entry = _Entry(size, next(self._seq), job)
        if top is not None and entry < top and self._on_preempt is not None:
            self._on_preempt(top.job, top.remaining)
        self._entries[job] = entry
        self._sizes[job] = size
        heapq.heappush(self._heap, entry)

    def resize(self, job: str, size: float, now: float) -> None:
        """Change an incomplete job's total size (a revised prediction).

        The work already done is kept: the new remaining size is ``size``
        minus the work done so far (at least 0). Completed jobs are left
        alone.
        """
        self.advance(now)
        old = self._entries.get(job)
        if old is None:
            return
        previous = self._top()
        old.valid = False
        done = self._sizes[job] - old.remaining
        entry = _Entry(max(size - done, 0.0), next(self._seq), job)
        self._entries[job] = entry
        self._sizes[job] = size
        heapq.heappush(self._heap, entry)
        current = self._top()
        if self._on_preempt is not None and previous is not None:
            if previous is old and current is not entry:
                self._on_preempt(job, entry.remaining)
            elif previous is not old and current is entry:
                self._on_preempt(previous.job, previous.remaining)
        self.advance(now)

    def remaining(self, job: str) -> float:
        """Remaining virtual size of ``job`` at :attr:`time` (0 when complete)."""
        entry = self._entries.get(job)
        return 0.0 if entry is None else entry.remaining

    def next_completion(self) -> float | None:
        """When the job now processed will complete, if nothing arrives first."""
        top = self._top()
        return None if top is None else self.time + top.remaining

    def __len__(self) -> int:
        return len(self._entries)


def srpt(
    sizes: Sequence[float], releases: Sequence[float], ids: Sequence[str] | None = None
) -> tuple[dict[str, float], dict[str, list[tuple[float, float]]]]:
    """Offline preemptive SRPT: completion times and processing pieces per job.

    Ties in remaining size go to the earlier arrival (then the lower index).
    """
    names = list(ids) if ids is not None else [str(k) for k in range(len(sizes))]
    machine = VirtualMachine(record_pieces=True)
    for k in sorted(range(len(sizes)), key=lambda k: (releases[k], k)):
        machine.add(names[k], sizes[k], releases[k])
    while (finish := machine.next_completion()) is not None:
        machine.advance(finish)
    assert machine.pieces is not None
    return dict(machine.completion), machine.pieces


def rank_combined(floors: Sequence[float], srpt_completions: Sequence[float]) -> list[float]:
    """The least ``sum_j C_j`` over completion times with ``C_j >= floors[j]`` for every
    job and whose ``k``-th smallest is at least the ``k``-th smallest SRPT completion, as
    one term per rank (ascending).

    Why it bounds a schedule. Preemptive SRPT on one machine completes, by every instant,
    at least as many jobs as any preemptive (or processor-sharing) schedule of the same
    sizes and releases (Schrage 1968; D. R. Smith, *A New Proof of the Optimality of the
    Shortest Remaining Processing Time Discipline*, Oper. Res. 26(1), 1978). So where a
    relaxation maps every real schedule to such a single-machine schedule in which each
    job completes no later than in the real one, the real completion times, sorted,
    dominate SRPT's sorted completions rank by rank; and each job still completes after
    its own floor. Every such vector ``C`` assigns the jobs to ranks one to one (by the order
    of ``C``) with ``C_j >= max(floors[j], s_(rank j))``, and ``sum_j max(a_j, b_pi(j))``
    over the bijections ``pi`` is least when both are sorted the same way (``max`` is
    submodular on the line: ``max(a1, b1) + max(a2, b2) <= max(a1, b2) + max(a2, b1)``
    for ``a1 <= a2``, ``b1 <= b2``). Hence ``sum_k max(floor_(k), s_(k))`` is at most every
    schedule's ``sum_j C_j``, and it is at least both ``sum floors`` and ``sum s``.
    Unit weights only: with weights the ranks no longer carry the objective.
    """
    if len(floors) != len(srpt_completions):
        raise ValueError(
            f"rank_combined: {len(floors)} floors against {len(srpt_completions)} completions"
        )
    return [max(a, b) for a, b in zip(sorted(floors), sorted(srpt_completions), strict=True)]
