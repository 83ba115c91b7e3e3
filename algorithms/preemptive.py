"""Preemptive priority policies: a server-aware greedy pass over every active job.

At each event instant the policy ranks every job that has arrived and not
completed, running or waiting, by a priority key, and walks them in key order,
each taking GPUs from what the jobs before it left (backfilling: a job that
does not fit is skipped, not waited for):

- a running job keeps its GPUs if they are all still unclaimed, else it is
  preempted (it resumes later, paying the restart cost, possibly elsewhere);
- a waiting job that fits on one server (``g_i <= G_max``) starts only on one
  server, on GPUs no job holds if some server has enough of them, else on a
  server where it preempts jobs ranked after it; a wider job takes any
  unclaimed GPUs (the mapper chooses). Ties go to the running job, so equal
  keys never cause a preemption.

Placing whole on one server is what makes the pass server-aware: on the full
Philly trace at 32 x 8 the same order with any free GPUs (small jobs split
over fragments of servers, at the inter-server bandwidth) used 2.56 times the
GPU-time of every job at ``alpha_i^min``.

The policies:

``asrpt-preemptive``
    The virtual SRPT machine of A-SRPT (:ref:`model-asrpt`) guides the
    order: a virtually complete job is keyed by its virtual completion
    ``C^V_i``, a virtually incomplete one comes after all of them, by its
    virtual remaining size. Non-clairvoyant: sizes use the predictor's
    ``K_hat_i``.
``srpt-area``
    Clairvoyant SRPT by remaining GPU-area ``g_i * K_i^left * alpha_i^min``
    (true iteration counts: an oracle, like ``sjf``), the preemptive
    schedule of the offline upper bound
    (:func:`ddlsched.algorithms.offline.best_upper_bound`).

The pass costs the running jobs (at most ``M``) times the servers and the
distinct GPU requests waiting; when no waiting job beats the worst running
one, only the free GPUs are walked (nothing is preempted).
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Iterator
from typing import Generic, Protocol, Self, TypeVar

from ddlsched.algorithms.mapping import FreeGPUs, GraphMapper, Mapper
from ddlsched.algorithms.policies import BackfillQueue, Entry, tie_key
from ddlsched.algorithms.prediction.view import JobView, Predictor
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.alpha import AlphaMinCache, virtual_size
from ddlsched.core.model import Cluster, Job
from ddlsched.core.virtual import VirtualMachine


class _Priority(Protocol):
    """What a job's key supports: order (smaller runs first) and a hash (it is a queue
    key). A number, or a tuple of numbers."""

    def __lt__(self, other: Self, /) -> bool: ...

    def __le__(self, other: Self, /) -> bool: ...

    def __ge__(self, other: Self, /) -> bool: ...

    def __hash__(self) -> int: ...


KeyT = TypeVar("KeyT", bound=_Priority)


class _Room:
    """GPUs per server not yet claimed by the pass (``room``) and, of those, the ones
    no running job holds (``free``): a placement takes free GPUs first, so that a job
    preempts a lower-ranked one only where the free GPUs would not do."""

    def __init__(self, room: list[int], free: list[int], largest: int) -> None:
        self.room = room
        self.free = free
        self.largest = largest
        self.total = sum(room)
        self.widest_single = max(room, default=0)

    def fits(self, gpus: int) -> bool:
        """On one server when the job fits the cluster's largest, else anywhere."""
        return gpus <= self.widest_single if gpus <= self.largest else gpus <= self.total

    def fits_counts(self, counts: dict[int, int]) -> bool:
        return all(self.room[h] >= n for h, n in counts.items())

    def claim(self, counts: dict[int, int]) -> None:
        for h, n in counts.items():
            self.room[h] -= n
            self.free[h] = max(0, min(self.free[h] - n, self.room[h]))
            self.total -= n
        self.widest_single = max(self.room, default=0)

    def place(self, job: JobView, cluster: Cluster, mapper: Mapper) -> tuple[int, ...] | None:
        """A mapping in the room: one server (free GPUs first) when the job fits one."""
        if job.gpus > self.largest:
            return mapper(job, cluster, self.room) if job.gpus <= self.total else None
        for vector in (self.free, self.room):
            offered = [n if n >= job.gpus else 0 for n in vector]
            if any(offered):
                mapping = mapper(job, cluster, offered)
                if mapping is not None:
                    return mapping
        return None


def _counts(mapping: tuple[int, ...]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for server in mapping:
        counts[server] = counts.get(server, 0) + 1
    return counts


class PreemptivePriorityPolicy(Policy, abc.ABC, Generic[KeyT]):
    """The greedy preemptive pass (module docstring) over a priority key.

    Parameters
    ----------
    cluster
        The cluster.
    mapper
        Places started and resumed jobs (default: A-SRPT's graph mapper); it
        is offered only servers that hold the whole job when one can.
    restart_cost
        Seconds a resumed job restores (the simulator's value: it reads this
        attribute when given none).
    """

    name = "preemptive-base"

    def __init__(self, cluster: Cluster, mapper: Mapper | None, restart_cost: float) -> None:
        self.cluster = cluster
        self.mapper = mapper or GraphMapper()
        self.restart_cost = restart_cost
        self.waiting: BackfillQueue[KeyT] = BackfillQueue()
        self.views: dict[str, JobView] = {}
        self.arrival_order: dict[str, int] = {}
        self._held: dict[str, dict[int, int]] = {}  # running job -> GPUs per server
        self._free = list(cluster.gpus_per_server)
        self._admit: list[tuple[Entry[KeyT], tuple[int, ...]]] = []

    @abc.abstractmethod
    def key(self, job_id: str, now: float) -> KeyT:
        """The job's priority now (smaller runs first)."""

    def running_keys(self, now: float) -> dict[str, KeyT]:
        """The key of every running job now (one call per pass: subclasses may batch it)."""
        return {job_id: self.key(job_id, now) for job_id in self._held}

    def _advance(self, now: float) -> None:
        """Hook: bring the policy's own state to ``now`` before a pass."""

    def on_arrival(self, job: JobView, now: float) -> None:
        self.views[job.id] = job
        self.arrival_order[job.id] = len(self.arrival_order)
        self._advance(now)
        self.waiting.push(job, self.key(job.id, now))

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        counts = self._held[job.id] = _counts(mapping)
        for h, n in counts.items():
            self._free[h] -= n

    def _release(self, job_id: str) -> None:
        for h, n in self._held.pop(job_id, {}).items():
            self._free[h] += n

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._release(job.id)

    def on_preempt(self, job: JobView, now: float) -> None:
        self._release(job.id)
        self.waiting.push(job, self.key(job.id, now))

    def preempt(self, now: float, running: Collection[str]) -> list[str]:
        """The pass: the running jobs to preempt now; remembers which waiting jobs start."""
        self._advance(now)
        keys = self.running_keys(now)
        best_waiting = self.waiting.best_key()
        largest = self.cluster.max_gpus_per_server
        if not keys or best_waiting is None or best_waiting >= max(keys.values()):
            # No waiting job beats a running one: nothing to preempt.
            room = _Room(list(self._free), list(self._free), largest)
            self._admit = self._walk([], room)[1]
            return []
        order = self.arrival_order
        ranked = sorted((key, order[j], j) for j, key in keys.items())
        room = _Room(list(self.cluster.gpus_per_server), list(self._free), largest)
        kept, self._admit = self._walk(ranked, room)
        return [j for _, _, j in ranked if j not in kept]

    def _next_waiting(self, room: _Room) -> Entry | None:
        return self.waiting.pop_entry(room.total, room.fits) if room.total > 0 else None

    def _walk(
        self, ranked: list[tuple[KeyT, int, str]], room: _Room
    ) -> tuple[set[str], list[tuple[Entry, tuple[int, ...]]]]:
        """The greedy walk over running (``ranked``) and waiting jobs together, each
        taking its GPUs from ``room``: the running jobs kept, the waiting entries to
        start with their mappings."""
        kept: set[str] = set()
        admit: list[tuple[Entry, tuple[int, ...]]] = []
        refused: list[Entry] = []
        candidate = self._next_waiting(room)
        position = 0
        while room.total > 0:
            while position < len(ranked) and not room.fits_counts(self._held[ranked[position][2]]):
                position += 1  # its GPUs went to a job ranked before it: preempted
            if candidate is not None and not room.fits(candidate[2].gpus):
                self.waiting.restore(candidate)
                candidate = self._next_waiting(room)
            running_next = ranked[position] if position < len(ranked) else None
            if running_next is not None and (candidate is None or running_next[0] <= candidate[0]):
                kept.add(running_next[2])
                room.claim(self._held[running_next[2]])
                position += 1
            elif candidate is not None:
                mapping = room.place(candidate[2], self.cluster, self.mapper)
                if mapping is None:  # the mapper refused the room offered: the job waits
                    refused.append(candidate)
                else:
                    admit.append((candidate, mapping))
                    room.claim(_counts(mapping))
                candidate = self._next_waiting(room)
            else:
                break
        for entry in refused + ([candidate] if candidate is not None else []):
            self.waiting.restore(entry)
        return kept, admit

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        admit, self._admit = self._admit, []
        for entry, mapping in admit:
            yield entry[2], mapping


class PreemptiveASRPT(PreemptivePriorityPolicy[tuple[int, float]]):
    """``asrpt-preemptive``: virtual-completion order on a preempting cluster.

    The virtual machine runs SRPT on ``v_hat_i = g_i K_hat_i alpha_i^max / M``
    (:class:`~ddlsched.core.virtual.VirtualMachine`); a job's key is ``(0,
    C^V_i)`` once virtually complete, else ``(1, virtual remaining size)``.
    Claim 7 (:ref:`preemptive-claim`) bounds each job's completion when
    predictions are exact and restarts free.
    """

    name = "asrpt-preemptive"

    def __init__(
        self,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper | None = None,
        restart_cost: float = 0.0,
    ) -> None:
        super().__init__(cluster, mapper, restart_cost)
        self.predictor = predictor
        self._completion_key: dict[str, tuple[int, float]] = {}
        self.machine = VirtualMachine(
            on_complete=self._virtual_complete, on_preempt=self._virtual_preempt
        )

    def on_arrival(self, job: JobView, now: float) -> None:
        predicted = max(1.0, float(self.predictor.predict(job)))
        self.machine.add(job.id, virtual_size(job, self.cluster, predicted), now)
        super().on_arrival(job, now)

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        super().on_completion(job, iterations, now)
        self.predictor.observe(job, iterations)

    def key(self, job_id: str, now: float) -> tuple[int, float]:
        completion = self._completion_key.get(job_id)
        if completion is not None:
            return completion
        return (1, tie_key(self.machine.remaining(job_id)))

    def _advance(self, now: float) -> None:
        self.machine.advance(now)

    def _virtual_complete(self, job_id: str, time: float) -> None:
        key = self._completion_key[job_id] = (0, tie_key(time))
        if job_id in self.waiting:
            self.waiting.push(self.views[job_id], key)

    def _virtual_preempt(self, job_id: str, remaining: float) -> None:
        if job_id in self.waiting:
            self.waiting.push(self.views[job_id], (1, tie_key(remaining)))

    def next_wakeup(self) -> float | None:
        return self.machine.next_completion()


class RemainingAreaSRPT(PreemptivePriorityPolicy[float]):
    """``srpt-area``: clairvoyant SRPT by remaining GPU-area ``g_i K_i^left alpha_i^min``.

    An oracle (it reads true iteration counts from ``jobs``). A running
    piece's progress is ``(elapsed - restart) / alpha`` of its mapping, as
    the simulator counts it.
    """

    name = "srpt-area"

    def __init__(
        self,
        cluster: Cluster,
        jobs: tuple[Job, ...],
        mapper: Mapper | None = None,
        restart_cost: float = 0.0,
    ) -> None:
        super().__init__(cluster, mapper, restart_cost)
        fastest = AlphaMinCache(cluster)
        self._area_per_iteration = {job.id: job.gpus * fastest(job)[0] for job in jobs}
        self._left = {job.id: float(job.iterations) for job in jobs}
        # A running piece: iterations left at its start, when it starts progressing
        # (start + restart), alpha of its mapping, GPU-area per iteration.
        self._piece: dict[str, tuple[float, float, float, float]] = {}
        self._started: set[str] = set()

    def _left_now(self, job_id: str, now: float) -> float:
        piece = self._piece.get(job_id)
        if piece is None:
            return self._left[job_id]
        left, progressing, alpha, _ = piece
        return left - max(0.0, now - progressing) / alpha

    def key(self, job_id: str, now: float) -> float:
        # Unrounded: computed for every running job at every event, and a tie with a
        # waiting job's rounded key at worst preempts once.
        return max(0.0, self._left_now(job_id, now)) * self._area_per_iteration[job_id]

    def running_keys(self, now: float) -> dict[str, float]:
        keys: dict[str, float] = {}
        for job_id, (left, progressing, alpha, area) in self._piece.items():
            done = (now - progressing) / alpha if now > progressing else 0.0
            keys[job_id] = (left - done) * area if left > done else 0.0
        return keys

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        super().on_start(job, mapping, alpha, now)
        restart = self.restart_cost if job.id in self._started else 0.0
        self._started.add(job.id)
        area = self._area_per_iteration[job.id]
        self._piece[job.id] = (self._left[job.id], now + restart, alpha, area)

    def on_preempt(self, job: JobView, now: float) -> None:
        self._left[job.id] = self._left_now(job.id, now)
        del self._piece[job.id]
        super().on_preempt(job, now)

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._piece.pop(job.id, None)
        super().on_completion(job, iterations, now)
