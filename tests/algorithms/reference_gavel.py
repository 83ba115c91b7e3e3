"""The Gavel baseline as it was before its waiting lists were filed by request (commit
ed8b8d3): a sort of every waiting job at every event, a walk over all active jobs at
every boundary. Kept only as the reference that the fast version must agree with,
decision for decision (tests/algorithms/test_fast_queues.py).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator

from algorithms.gavel import GAVEL_ROUND
from algorithms.mapping import FreeGPUs, GraphMapper, Mapper
from algorithms.policy import Policy
from algorithms.prediction.view import JobView
from ddlsched.core.alpha import AlphaMinCache
from ddlsched.core.model import Cluster


class ReferenceGavel(Policy):
    """``gavel``: rounds of fixed length, fair by normalised service, types by sensitivity.

    Parameters
    ----------
    cluster
        The cluster (its GPU types decide each job's sensitivity).
    mapper
        Chooses GPUs; default the type-aware :class:`~algorithms.mapping.GraphMapper`.
    round_length
        Seconds between reallocations (> 0).
    restart_cost
        Seconds a resumed job spends restoring; ``None``: the simulator's.
    """

    name = "gavel"

    def __init__(
        self,
        cluster: Cluster,
        mapper: Mapper | None = None,
        round_length: float = GAVEL_ROUND,
        *,
        restart_cost: float | None = None,
    ) -> None:
        if not (isinstance(round_length, (int, float)) and 0 < round_length < math.inf):
            raise ValueError(f"round_length: must be a number > 0, got {round_length!r}")
        self.cluster = cluster
        self.mapper = mapper or GraphMapper()
        self.round_length = float(round_length)
        self.restart_cost = restart_cost
        self._fastest = AlphaMinCache(cluster)
        self._views: dict[str, JobView] = {}
        self._order: dict[str, int] = {}
        self._served: dict[str, float] = {}
        self._since: dict[str, float] = {}
        self._rate: dict[str, float] = {}
        self._best: dict[str, float] = {}
        self._sensitivity: dict[str, float] = {}
        self._waiting: list[str] = []
        self._next_round = 0.0
        self._admit: list[str] = []

    def on_arrival(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        self._order[job.id] = len(self._order)
        self._served[job.id] = 0.0
        self._best[job.id] = self._fastest(job)[0]  # type: ignore[arg-type]
        self._sensitivity[job.id] = self._type_sensitivity(job)
        self._waiting.append(job.id)
        if not self._since and len(self._waiting) == 1:
            self._next_round = now  # an idle cluster starts a round at once

    def _type_sensitivity(self, job: JobView) -> float:
        """One-server ``alpha`` on the slowest type over that on the fastest
        (``c_i(t) + Q_i / B_intra(t)``; 1 on a cluster of one type)."""
        values = [
            job.compute_on(t) + job.total_traffic / self.cluster.intra_of(t)
            for t in self.cluster.types
        ]
        return max(values) / min(values)

    def _key(self, job_id: str, now: float) -> tuple[float, int]:
        served = self._served[job_id]
        if job_id in self._since:
            served += (now - self._since[job_id]) * self._rate[job_id]
        return served / self._views[job_id].weight, self._order[job_id]

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

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._since.pop(job.id, None)

    def next_wakeup(self) -> float | None:
        """The next round boundary while a job waits (with none waiting, rounds change nothing)."""
        return self._next_round if self._waiting else None
