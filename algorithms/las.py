"""``las``: Tiresias's discretised two-dimensional least attained service (preemptive).

It implements :class:`~ddlsched.algorithms.protocol.Policy` directly: it keeps no
queue of the non-preemptive policies and needs no predictor.

**Reference.** Gu et al., *Tiresias: A GPU Cluster Manager for Distributed
Deep Learning*, NSDI 2019, and the rules of its simulator's
``dlas_sim_jobs`` (github.com/SymbioticLab/Tiresias, Apache-2.0), which
this class follows; ``las-tiresias`` is the preset with that code's
parameters (thresholds 3,250 and 7,200 GPU-seconds, no restart cost).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Collection, Iterator

from ddlsched.algorithms.mapping import FirstFitMapper, FreeGPUs, Mapper
from ddlsched.algorithms.prediction.view import JobView
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.model import Cluster

TIRESIAS_THRESHOLDS = (3250.0, 7200.0)
"""Queue limits in GPU-seconds of Tiresias's simulator (``dlas-gpu`` runs)."""

_DEMOTION_TOLERANCE = 1e-9
"""Relative slack when comparing service with a threshold: the wake-up at the
crossing instant is computed in floating point."""


class _Waiting:
    """One queue's waiting jobs in Tiresias's list order, filed by GPU request.

    Jobs join at either end (arrivals and the preempted of a later pass at the
    tail, the preempted running part and unplaced jobs at the head) and leave
    only when started, so a sequence number per end keeps the order and each
    GPU request's jobs stay sorted in their own deque. Taking, in list order,
    every job that fits in the room left is then, because the room only
    shrinks, taking the earliest head among the requests that fit, again and
    again: a job skipped as too wide stays too wide. A pass costs the jobs it
    starts times the distinct requests, not the queue's length (walking the
    list made LAS 7x FIFO's time on the full Philly trace).
    """

    __slots__ = ("_by_size", "_head", "_tail")

    def __init__(self) -> None:
        self._by_size: dict[int, deque[tuple[int, str]]] = {}
        self._head = 0
        self._tail = 0

    def push_back(self, job_id: str, gpus: int) -> None:
        self._tail += 1
        self._by_size.setdefault(gpus, deque()).append((self._tail, job_id))

    def push_front(self, job_id: str, gpus: int) -> None:
        self._head -= 1
        self._by_size.setdefault(gpus, deque()).appendleft((self._head, job_id))

    def take(self, room: int) -> tuple[list[str], int]:
        """The jobs, in list order, that fit one after another in ``room`` GPUs; the room left."""
        started: list[str] = []
        while room > 0:
            best: tuple[int, str] | None = None
            best_gpus = 0
            for gpus, jobs in self._by_size.items():
                if gpus <= room and (best is None or jobs[0][0] < best[0]):
                    best, best_gpus = jobs[0], gpus
            if best is None:
                break
            jobs = self._by_size[best_gpus]
            jobs.popleft()
            if not jobs:
                del self._by_size[best_gpus]
            started.append(best[1])
            room -= best_gpus
        return started, room

    def __iter__(self) -> Iterator[str]:
        """The waiting jobs in list order."""
        return (job_id for _, job_id in heapq.merge(*self._by_size.values()))

    def __len__(self) -> int:
        return sum(len(jobs) for jobs in self._by_size.values())


class LeastAttainedService(Policy):
    """``las``: Tiresias's discretised 2D least attained service, preemptive.

    A job's attained service is the GPU-seconds it has held. Queue ``q``
    holds jobs whose service lies in ``[thresholds[q-1], thresholds[q])``;
    lower queues go first. Within a queue the order is **Tiresias's list
    order**: a new job joins the end of queue 0; a running job whose service
    reaches its queue's limit moves to the end of the next queue; after each
    pass every waiting job moves behind the running ones of its queue
    (keeping their relative orders). So a waiting job never overtakes a
    running job of its queue that arrived later: it waits for a demotion or
    a completion.

    The pass, at every event: walk the queues in order and each queue in
    that order, keeping each job that still fits in the cluster's ``M``
    GPUs; running jobs not kept are preempted, kept waiting jobs start (the
    mapper chooses their GPUs; one it cannot place waits at the head of the
    waiting part of its queue). A resumed job pays the simulator's restart
    cost. Service is non-clairvoyant: no iteration counts are used.

    Cost per event: the running jobs (at most ``M``) plus, per job started,
    the distinct GPU requests waiting in its queue (see :class:`_Waiting`).
    """

    name = "las"
    restart_cost: float | None = None

    def __init__(
        self,
        cluster: Cluster,
        mapper: Mapper | None = None,
        thresholds: tuple[float, ...] = (3600.0, 36_000.0),
        *,
        restart_cost: float | None = None,
        name: str = "las",
    ) -> None:
        self.cluster = cluster
        self.mapper = mapper or FirstFitMapper()
        if list(thresholds) != sorted(thresholds) or any(t <= 0 for t in thresholds):
            raise ValueError(f"thresholds: must be positive and increasing, got {thresholds!r}")
        self.thresholds = thresholds
        self.restart_cost = restart_cost
        self.name = name
        levels = len(thresholds) + 1
        self._run: list[list[str]] = [[] for _ in range(levels)]
        self._run_gpus = [0] * levels
        self._wait = [_Waiting() for _ in range(levels)]
        self._queue: dict[str, int] = {}
        self._views: dict[str, JobView] = {}
        self._order: dict[str, int] = {}
        self._attained: dict[str, float] = {}
        self._since: dict[str, float] = {}
        self._version: dict[str, int] = {}
        self._crossings: list[tuple[float, int, str]] = []
        self._admit: list[str] = []

    def on_arrival(self, job: JobView, now: float) -> None:
        """A new job waits at the end of the first queue."""
        self._views[job.id] = job
        self._order[job.id] = len(self._order)
        self._attained[job.id] = 0.0
        self._queue[job.id] = 0
        self._version[job.id] = 0
        self._wait[0].push_back(job.id, job.gpus)

    def _service(self, job_id: str, now: float) -> float:
        held = now - self._since[job_id] if job_id in self._since else 0.0
        return self._attained[job_id] + self._views[job_id].gpus * held

    def _schedule_crossing(self, job_id: str) -> None:
        """Remember when a running job reaches its queue's limit (none in the last queue)."""
        q = self._queue[job_id]
        if q < len(self.thresholds):
            gpus = self._views[job_id].gpus
            crossing = self._since[job_id] + (self.thresholds[q] - self._attained[job_id]) / gpus
            heapq.heappush(self._crossings, (crossing, self._version[job_id], job_id))

    def _valid(self, entry: tuple[float, int, str]) -> bool:
        _, version, job_id = entry
        return job_id in self._since and self._version[job_id] == version

    def _demote(self, now: float) -> list[list[str]]:
        """Move running jobs past their queue's limit to the next queue; the moved, per queue."""
        tails: list[list[str]] = [[] for _ in self._run]
        crossed = []
        horizon = now * (1 + 1e-12) + 1e-12
        while self._crossings and self._crossings[0][0] <= horizon:
            entry = heapq.heappop(self._crossings)
            if self._valid(entry):
                crossed.append(entry[2])
        for job_id in sorted(crossed, key=self._order.__getitem__):
            q = self._queue[job_id]
            self._run[q].remove(job_id)
            self._run_gpus[q] -= self._views[job_id].gpus
            self._queue[job_id] = q + 1
            self._version[job_id] += 1
            tails[q + 1].append(job_id)
        return tails

    def preempt(self, now: float, running: Collection[str]) -> list[str]:
        """The pass: running jobs to preempt now; remembers which waiting jobs to start."""
        tails = self._demote(now)
        views = self._views
        room = self.cluster.num_gpus
        preempted: list[str] = []
        admit: list[str] = []
        for q in range(len(self._run)):
            lost_run: list[str] = []
            if self._run_gpus[q] <= room:  # the whole running block still fits
                room -= self._run_gpus[q]
            else:
                before = room
                self._run[q], lost_run, room = self._fit(self._run[q], room)
                self._run_gpus[q] = before - room
            waiting = self._wait[q]
            started, room = waiting.take(room)
            kept_tail, lost_tail, room = self._fit(tails[q], room)  # behind the waiting jobs
            self._run[q] += started + kept_tail
            self._run_gpus[q] += sum(views[j].gpus for j in started + kept_tail)
            for job_id in kept_tail:
                self._schedule_crossing(job_id)
            for job_id in reversed(lost_run):  # the preempted lead the waiting part
                waiting.push_front(job_id, views[job_id].gpus)
            for job_id in lost_tail:  # the demoted that do not fit end it
                waiting.push_back(job_id, views[job_id].gpus)
            preempted += lost_run + lost_tail
            admit += started
        self._admit = admit
        return preempted

    def _fit(self, ids: list[str], room: int) -> tuple[list[str], list[str], int]:
        """The ``ids`` that fit in ``room`` GPUs (in order), the rest, and the room left."""
        kept, lost = [], []
        for job_id in ids:
            gpus = self._views[job_id].gpus
            if gpus <= room:
                room -= gpus
                kept.append(job_id)
            else:
                lost.append(job_id)
        return kept, lost, room

    def on_preempt(self, job: JobView, now: float) -> None:
        """A preempted job banks its service (it is already in its queue's waiting part)."""
        self._attained[job.id] = self._service(job.id, now)
        del self._since[job.id]
        self._version[job.id] += 1

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        self._since[job.id] = now
        self._schedule_crossing(job.id)

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._since.pop(job.id, None)
        q = self._queue.pop(job.id)
        self._run[q].remove(job.id)
        self._run_gpus[q] -= job.gpus

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        admit, self._admit = self._admit, []
        unplaced: list[str] = []
        for job_id in admit:
            view = self._views[job_id]
            mapping = self.mapper(view, self.cluster, free) if view.gpus <= free.total else None
            if mapping is None:
                unplaced.append(job_id)
            else:
                yield view, mapping
        for job_id in reversed(unplaced):  # back to the head of their waiting parts
            q = self._queue[job_id]
            self._run[q].remove(job_id)
            self._run_gpus[q] -= self._views[job_id].gpus
            self._wait[q].push_front(job_id, self._views[job_id].gpus)

    def next_wakeup(self) -> float | None:
        """When the next running job reaches its queue's limit."""
        while self._crossings and not self._valid(self._crossings[0]):
            heapq.heappop(self._crossings)
        return self._crossings[0][0] if self._crossings else None
