"""Preemptive priority policies: a greedy pass over every active job at each event.

At each event instant the policy ranks every job that has arrived and not
completed, running or waiting, by a priority key, and walks them in key order
keeping each job that still fits in the cluster's ``M`` GPUs (backfilling: a
job too wide for the room left is skipped, not waited for). Kept running jobs
go on where they are; running jobs not kept are preempted (they resume later,
paying the restart cost, possibly on other servers); kept waiting jobs start,
placed by the mapper on any free GPUs. Ties go to the running job, so equal
keys never cause a preemption.

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

The pass costs the running jobs (at most ``M``) times the distinct GPU
requests waiting, and only the first part of it when no waiting job beats
the worst running one (then nothing is preempted).
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Hashable, Iterator

from ddlsched.algorithms.mapping import FreeGPUs, GraphMapper, Mapper
from ddlsched.algorithms.policies import BackfillQueue, Entry, tie_key
from ddlsched.algorithms.prediction.view import JobView, Predictor
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.alpha import AlphaMinCache, virtual_size
from ddlsched.core.model import Cluster, Job
from ddlsched.core.virtual import VirtualMachine


class PreemptivePriorityPolicy(Policy, abc.ABC):
    """The greedy preemptive pass (module docstring) over a priority key.

    Parameters
    ----------
    cluster
        The cluster.
    mapper
        Places started and resumed jobs (default: A-SRPT's graph mapper).
    restart_cost
        Seconds a resumed job restores (the simulator's value: it reads this
        attribute when given none).
    """

    name = "preemptive-base"

    def __init__(self, cluster: Cluster, mapper: Mapper | None, restart_cost: float) -> None:
        self.cluster = cluster
        self.mapper = mapper or GraphMapper()
        self.restart_cost = restart_cost
        self.waiting = BackfillQueue()
        self.views: dict[str, JobView] = {}
        self.arrival_order: dict[str, int] = {}
        self._running: dict[str, JobView] = {}
        self._running_gpus = 0
        self._admit: list[Entry] = []

    @abc.abstractmethod
    def key(self, job_id: str, now: float) -> Hashable:
        """The job's priority now (smaller runs first)."""

    def running_keys(self, now: float) -> dict[str, Hashable]:
        """The key of every running job now (one call per pass: subclasses may batch it)."""
        return {job_id: self.key(job_id, now) for job_id in self._running}

    def _advance(self, now: float) -> None:
        """Hook: bring the policy's own state to ``now`` before a pass."""

    def on_arrival(self, job: JobView, now: float) -> None:
        self.views[job.id] = job
        self.arrival_order[job.id] = len(self.arrival_order)
        self._advance(now)
        self.waiting.push(job, self.key(job.id, now))

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        self._running[job.id] = job
        self._running_gpus += job.gpus

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        if self._running.pop(job.id, None) is not None:
            self._running_gpus -= job.gpus

    def on_preempt(self, job: JobView, now: float) -> None:
        del self._running[job.id]
        self._running_gpus -= job.gpus
        self.waiting.push(job, self.key(job.id, now))

    def preempt(self, now: float, running: Collection[str]) -> list[str]:
        """The pass: the running jobs to preempt now; remembers which waiting jobs start."""
        self._advance(now)
        keys = self.running_keys(now)
        best_waiting = self.waiting.best_key()
        if not keys or best_waiting is None or best_waiting >= max(keys.values()):
            # No waiting job beats a running one: nothing to preempt.
            self._admit = self._fill(self.cluster.num_gpus - self._running_gpus)
            return []
        order = self.arrival_order
        ranked = sorted((key, order[j], j) for j, key in keys.items())
        kept, self._admit = self._merge(ranked)
        return [j for _, _, j in ranked if j not in kept]

    def _fill(self, room: int) -> list[Entry]:
        """Waiting jobs in key order that fit, one after another, in ``room`` GPUs."""
        admit = []
        while room > 0 and (entry := self.waiting.pop_entry(room)) is not None:
            admit.append(entry)
            room -= entry[2].gpus
        return admit

    def _merge(self, ranked: list[tuple[Hashable, int, str]]) -> tuple[set[str], list[Entry]]:
        """The greedy walk over running (``ranked``) and waiting jobs together: the
        running jobs kept and the waiting entries to start."""
        room = self.cluster.num_gpus
        kept: set[str] = set()
        admit: list[Entry] = []
        candidate = self.waiting.pop_entry(room)
        position = 0
        while room > 0:
            while position < len(ranked) and self.views[ranked[position][2]].gpus > room:
                position += 1  # too wide for the room left: preempted
            if candidate is not None and candidate[2].gpus > room:
                self.waiting.restore(candidate)
                candidate = self.waiting.pop_entry(room)
            running_next = ranked[position] if position < len(ranked) else None
            if running_next is not None and (candidate is None or running_next[0] <= candidate[0]):
                kept.add(running_next[2])
                room -= self.views[running_next[2]].gpus
                position += 1
            elif candidate is not None:
                admit.append(candidate)
                room -= candidate[2].gpus
                candidate = self.waiting.pop_entry(room) if room > 0 else None
            else:
                break
        if candidate is not None:
            self.waiting.restore(candidate)
        return kept, admit

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        admit, self._admit = self._admit, []
        for entry in admit:
            job = entry[2]
            mapping = self.mapper(job, self.cluster, free) if job.gpus <= free.total else None
            if mapping is None:  # a placement rule refused the free GPUs: the job waits
                self.waiting.restore(entry)
                continue
            yield job, mapping


class PreemptiveASRPT(PreemptivePriorityPolicy):
    """``asrpt-preemptive``: virtual-completion order on a preempting cluster.

    The virtual machine runs SRPT on ``v_hat_i = g_i K_hat_i alpha_i^max / M``
    (:class:`~ddlsched.core.virtual.VirtualMachine`); a job's key is ``(0,
    C^V_i)`` once virtually complete, else ``(1, virtual remaining size)``.
    Claim 7 (:ref:`model-asrpt-preemptive`) bounds its total completion time
    when predictions are exact and restarts free.
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

    def key(self, job_id: str, now: float) -> Hashable:
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


class RemainingAreaSRPT(PreemptivePriorityPolicy):
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

    def key(self, job_id: str, now: float) -> Hashable:
        # Unrounded: computed for every running job at every event, and a tie with a
        # waiting job's rounded key at worst preempts once.
        return max(0.0, self._left_now(job_id, now)) * self._area_per_iteration[job_id]

    def running_keys(self, now: float) -> dict[str, Hashable]:
        keys: dict[str, Hashable] = {}
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
