"""The Gavel baseline's queue as it was before its waiting jobs were filed by request
(commit ed8b8d3): a sort of every waiting job at every event, a walk over all active jobs
at every boundary. Only the queue is replaced; fairness keys, sensitivities and round
bookkeeping are the policy's own. Kept as the reference the fast version must agree with,
decision for decision (tests/algorithms/test_fast_queues.py).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator

from ddlsched.algorithms.gavel import HeterogeneityAwareRounds
from ddlsched.algorithms.mapping import FreeGPUs
from ddlsched.algorithms.prediction.view import JobView


class ReferenceGavel(HeterogeneityAwareRounds):
    """``gavel`` with its waiting jobs in one plain list."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._waiting: list[str] = []

    def on_arrival(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        self._order[job.id] = len(self._order)
        self._served[job.id] = 0.0
        self._best[job.id] = self._fastest(job)[0]  # type: ignore[arg-type]
        self._sensitivity[job.id] = self._type_sensitivity(job)
        self._waiting.append(job.id)
        if not self._since and len(self._waiting) == 1:
            self._next_round = now  # an idle cluster starts a round at once

    def preempt(self, now: float, running: Collection[str]) -> list[str]:
        """At a round boundary: the fair prefix runs, the rest of the running jobs stop."""
        tolerance = 1e-9 * max(1.0, abs(now))
        boundary = False
        if now >= self._next_round - tolerance:
            # A boundary passed while nothing waited is not one: the grid moves on.
            boundary = now <= self._next_round + tolerance
            steps = math.floor((now + tolerance - self._next_round) / self.round_length) + 1
            self._next_round += steps * self.round_length
        if not boundary:
            self._admit = sorted(self._waiting, key=lambda j: self._key(j, now))
            return []
        active = sorted([*self._since, *self._waiting], key=lambda j: self._key(j, now))
        room = self.cluster.num_gpus
        chosen: set[str] = set()
        for job_id in active:
            if self._views[job_id].gpus <= room:
                room -= self._views[job_id].gpus
                chosen.add(job_id)
        stopped = [job_id for job_id in self._since if job_id not in chosen]
        starting = [job_id for job_id in self._waiting if job_id in chosen]
        starting.sort(key=lambda j: (-self._sensitivity[j], *self._key(j, now)))
        later = [job_id for job_id in active if job_id not in chosen and job_id in self._waiting]
        self._admit = starting + later  # work-conserving: the rest only if room is left
        return stopped

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        admit, self._admit = self._admit, []
        for job_id in admit:
            view = self._views[job_id]
            if view.gpus > free.total:
                continue
            mapping = self.mapper(view, self.cluster, free)
            if mapping is not None:
                yield view, mapping

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        self._waiting.remove(job.id)
        self._since[job.id] = now
        self._rate[job.id] = self._best[job.id] / alpha

    def on_preempt(self, job: JobView, now: float) -> None:
        self._served[job.id] = self._key(job.id, now)[0] * job.weight
        del self._since[job.id]
        self._waiting.append(job.id)

    def next_wakeup(self) -> float | None:
        """The next round boundary while a job waits (with none waiting, rounds change nothing)."""
        return self._next_round if self._waiting else None
