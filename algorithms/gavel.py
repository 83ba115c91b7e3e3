"""``gavel``: a heterogeneity-aware, round-based baseline after Gavel (preemptive).

**Reference.** Narayanan et al., *Heterogeneity-Aware Cluster Scheduling
Policies for Deep Learning Workloads*, OSDI 2020. Gavel expresses a policy
over *effective throughputs* (a job's throughput on each GPU type,
normalised by its best), solves it for the time share each job should get
on each type, and realises that share with a round-based mechanism (rounds
of 6 minutes: jobs whose received share lags furthest behind their target
run next). This class is a simplified reading of its max-min fairness policy
(Gavel's heterogeneity-aware LAS), written for this project's model (:ref:`model-problem-a`):

- **who runs** (fairness): at each round boundary, jobs in order of least
  *normalised attained service*, ``sum over pieces of duration *
  alpha_min / alpha(piece)`` (seconds of progress at the job's best speed)
  divided by the weight, then arrival; the prefix that fits in the
  cluster's ``M`` GPUs is chosen (a job that does not fit is skipped, as
  in LAS). Running jobs not chosen are preempted;
- **where** (max-sum normalised throughput, greedily): the chosen waiting
  jobs are placed in order of decreasing *type sensitivity*, the one-server
  ``alpha`` on the slowest type over that on the fastest, so jobs that gain
  most from fast GPUs get them first; each job
  takes the free GPUs with the least ``alpha`` (the type-aware mapper: the
  fastest free type that holds it, or a mix when quicker);
- **between boundaries**: work-conserving without preemption: freed GPUs go
  to waiting jobs in fairness order.

Simplifications, said plainly: no LP (the greedy above stands for Gavel's
allocation), no migration of running jobs at a boundary (a chosen running
job keeps its GPUs), no space sharing; iteration counts are never used.
A resumed job pays the simulator's restart cost. On a one-type cluster it is
a round-based LAS on normalised service.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Collection, Iterator

from ddlsched.algorithms.mapping import FreeGPUs, GraphMapper, Mapper
from ddlsched.algorithms.prediction.view import JobView
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.alpha import AlphaMinCache
from ddlsched.core.model import Cluster

GAVEL_ROUND = 360.0
"""Round length in seconds: Gavel's 6 minutes."""


class HeterogeneityAwareRounds(Policy):
    """``gavel``: rounds of fixed length, fair by normalised service, types by sensitivity.

    Parameters
    ----------
    cluster
        The cluster (its GPU types decide each job's sensitivity).
    mapper
        Chooses GPUs; default the type-aware :class:`~ddlsched.algorithms.mapping.GraphMapper`.
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
        # Waiting jobs per GPU request, each list sorted by the fairness key, which does
        # not change while a job waits (a sort of every waiting job at every event made
        # gavel 430x FIFO's time on the full Philly trace).
        self._by_size: dict[int, list[tuple[float, int, str]]] = {}
        self._wait_key: dict[str, tuple[float, int, str]] = {}
        self._next_round = 0.0
        self._admit: list[str] = []
        self._skip: set[str] = set()
        self._later = True

    def on_arrival(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        self._order[job.id] = len(self._order)
        self._served[job.id] = 0.0
        self._best[job.id] = self._fastest(job)[0]  # type: ignore[arg-type]
        self._sensitivity[job.id] = self._type_sensitivity(job)
        self._file(job.id)
        if not self._since and len(self._wait_key) == 1:
            self._next_round = now  # an idle cluster starts a round at once

    def _file(self, job_id: str) -> None:
        """A job starts waiting: filed under its GPU request by its (fixed) fairness key."""
        key = (self._served[job_id] / self._views[job_id].weight, self._order[job_id], job_id)
        self._wait_key[job_id] = key
        bisect.insort(self._by_size.setdefault(self._views[job_id].gpus, []), key)

    def _unfile(self, job_id: str) -> None:
        gpus = self._views[job_id].gpus
        entries = self._by_size[gpus]
        del entries[bisect.bisect_left(entries, self._wait_key.pop(job_id))]
        if not entries:
            del self._by_size[gpus]

    def _waiting_in_order(self, room: object) -> Iterator[str]:
        """Waiting jobs in fairness order whose request fits in ``room()`` GPUs.

        ``room`` is asked again at every step and may only shrink; jobs may leave
        the waiting lists between steps (each list resumes after the last key it gave).
        """
        cursor: dict[int, tuple[float, int, str]] = {}
        while True:
            left = room()  # type: ignore[operator]
            best: tuple[float, int, str] | None = None
            best_gpus = 0
            for gpus, entries in self._by_size.items():
                if gpus > left:
                    continue
                last = cursor.get(gpus)
                i = 0 if last is None else bisect.bisect_right(entries, last)
                if i < len(entries) and (best is None or entries[i] < best):
                    best, best_gpus = entries[i], gpus
            if best is None:
                return
            cursor[best_gpus] = best
            yield best[2]

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
        """At a round boundary: the fair prefix runs, the rest of the running jobs stop.

        The prefix is found by merging the running jobs (at most ``M``, sorted by
        their current keys) with the waiting lists of the requests that still fit:
        the same greedy walk over all active jobs in fairness order, costing the
        jobs chosen rather than the queue's length.
        """
        tolerance = 1e-9 * max(1.0, abs(now))
        boundary = False
        if now >= self._next_round - tolerance:
            # A boundary passed while nothing waited is not one: the grid moves on.
            boundary = now <= self._next_round + tolerance
            steps = math.floor((now + tolerance - self._next_round) / self.round_length) + 1
            self._next_round += steps * self.round_length
        self._admit, self._skip, self._later = [], set(), True
        if not boundary:
            return []  # dispatch offers every waiting job in fairness order
        views = self._views
        room = self.cluster.num_gpus
        keys = {job_id: self._key(job_id, now) for job_id in self._since}
        ahead = sorted(keys, key=keys.__getitem__)
        kept: set[str] = set()
        chosen: list[str] = []
        waiting = self._waiting_in_order(lambda: room)
        candidate = next(waiting, None)
        index = 0
        while index < len(ahead) or candidate is not None:
            if candidate is not None and (
                index == len(ahead) or self._wait_key[candidate][:2] < keys[ahead[index]]
            ):
                chosen.append(candidate)
                room -= views[candidate].gpus
                candidate = next(waiting, None)  # asks for the room left
                continue
            job_id = ahead[index]
            index += 1
            if views[job_id].gpus <= room:
                room -= views[job_id].gpus
                kept.add(job_id)
                if candidate is not None and views[candidate].gpus > room:
                    candidate = next(waiting, None)  # the walk moves past what no longer fits
        stopped = [job_id for job_id in self._since if job_id not in kept]
        chosen.sort(key=lambda j: (-self._sensitivity[j], *self._key(j, now)))
        self._admit = chosen
        self._skip = set(chosen) | set(stopped)  # the rest only if room is left
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
        if not self._later:
            return
        self._later = False  # once per preempt call, as the admit list was
        for job_id in self._waiting_in_order(lambda: free.total):
            if job_id in self._skip:
                continue
            view = self._views[job_id]
            mapping = self.mapper(view, self.cluster, free)
            if mapping is not None:
                yield view, mapping

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        self._unfile(job.id)
        self._since[job.id] = now
        self._rate[job.id] = self._best[job.id] / alpha

    def on_preempt(self, job: JobView, now: float) -> None:
        self._served[job.id] = self._key(job.id, now)[0] * job.weight
        del self._since[job.id]
        self._file(job.id)

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._since.pop(job.id, None)

    def next_wakeup(self) -> float | None:
        """The next round boundary while a job waits (with none waiting, rounds change nothing)."""
        return self._next_round if self._wait_key else None
