"""``las``: a Tiresias-style least-attained-service baseline (preemptive).

It implements :class:`~algorithms.policy.Policy` directly: it keeps no
queue of the non-preemptive policies and needs no predictor.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Iterator

from algorithms.mapping import FirstFitMapper, FreeGPUs, Mapper
from algorithms.policy import Policy
from algorithms.prediction.view import JobView
from ddlsched.core.model import Cluster


class LeastAttainedService(Policy):
    """``las``: Tiresias-style discretised least attained service, preemptive.

    After Gu et al., *Tiresias: A GPU Cluster Manager for Distributed Deep
    Learning*, NSDI 2019 (its discretised two-dimensional LAS). A job's
    attained service is the GPU-seconds it has held. Queue ``q`` holds jobs
    whose service lies between ``thresholds[q-1]`` and ``thresholds[q]``;
    lower queues go first, first-come first-served within a queue. At every
    event the policy walks all active jobs (waiting and running) in that
    order and keeps each one that still fits in the cluster's ``M`` GPUs;
    running jobs not kept are preempted, kept waiting jobs start
    (consolidating first-fit mapping). A resumed job pays ``restart_cost``
    seconds of restoring (see :func:`algorithms.simulator.simulate`). Service
    is non-clairvoyant: no iteration counts and no predictor are used.

    Cost per event is ``O(a log a)`` in the active jobs ``a``, so LAS is for
    instances and moderate traces, not the 82,000-job replay.
    """

    name = "las"

    def __init__(
        self,
        cluster: Cluster,
        mapper: Mapper | None = None,
        thresholds: tuple[float, ...] = (3600.0, 36_000.0),
    ) -> None:
        self.cluster = cluster
        self.mapper = mapper or FirstFitMapper()
        if list(thresholds) != sorted(thresholds) or any(t <= 0 for t in thresholds):
            raise ValueError(f"thresholds: must be positive and increasing, got {thresholds!r}")
        self.thresholds = thresholds
        self._views: dict[str, JobView] = {}
        self._order: dict[str, int] = {}
        self._attained: dict[str, float] = {}
        self._since: dict[str, float] = {}
        self._waiting: set[str] = set()
        self._admit: list[str] = []
        self._now = 0.0

    def on_arrival(self, job: JobView, now: float) -> None:
        """A new job waits in the first queue, after every earlier arrival."""
        self._views[job.id] = job
        self._order[job.id] = len(self._order)
        self._attained[job.id] = 0.0
        self._waiting.add(job.id)

    def _service(self, job_id: str, now: float) -> float:
        held = now - self._since[job_id] if job_id in self._since else 0.0
        return self._attained[job_id] + self._views[job_id].gpus * held

    def _key(self, job_id: str, now: float) -> tuple[int, int]:
        queue = bisect.bisect_right(self.thresholds, self._service(job_id, now))
        return queue, self._order[job_id]

    def preempt(self, now: float, running: Collection[str]) -> list[str]:
        """Running jobs to preempt now; remembers which waiting jobs to start."""
        self._now = now
        active = sorted([*running, *self._waiting], key=lambda j: self._key(j, now))
        room = self.cluster.num_gpus
        keep: set[str] = set()
        for job_id in active:
            if self._views[job_id].gpus <= room:
                keep.add(job_id)
                room -= self._views[job_id].gpus
        self._admit = [j for j in active if j in keep and j in self._waiting]
        return [j for j in running if j not in keep]

    def on_preempt(self, job: JobView, now: float) -> None:
        """A preempted job banks its service and waits again."""
        self._attained[job.id] = self._service(job.id, now)
        del self._since[job.id]
        self._waiting.add(job.id)

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        self._since[job.id] = now
        self._waiting.discard(job.id)

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._since.pop(job.id, None)

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        admit, self._admit = self._admit, []
        for job_id in admit:
            view = self._views[job_id]
            if job_id in self._waiting and view.gpus <= free.total:
                mapping = self.mapper(view, self.cluster, free)
                if mapping is not None:
                    yield view, mapping

    def next_wakeup(self) -> float | None:
        """When the next running job crosses into a lower-priority queue (after now)."""
        times = []
        for job_id, since in self._since.items():
            banked, gpus = self._attained[job_id], self._views[job_id].gpus
            crossings = [since + (t - banked) / gpus for t in self.thresholds if t > banked]
            later = [t for t in crossings if t > self._now * (1 + 1e-12) + 1e-12]
            if later:
                times.append(later[0])
        return min(times) if times else None
