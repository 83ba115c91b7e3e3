"""Online policies: A-SRPT (guided and greedy) and the baselines.

A :class:`Policy` is told of arrivals and completions, asked which waiting
jobs to start now (with their mappings), and may ask to be woken at a
future instant (a virtual completion, a prediction check). It sees jobs as
:class:`~algorithms.predictors.JobView` s: no true iteration counts.

Waiting jobs sit in one of two queues, each ``O(log n)`` per operation:

- :class:`StrictQueue`: start jobs in key order while the head fits;
  the head blocks the rest (no backfilling);
- :class:`BackfillQueue`: start the best-keyed job that fits, repeatedly
  (backfilling). A job fits iff its GPUs are at most the free GPUs in the
  whole cluster (any mapping is allowed), so jobs are bucketed by GPU count
  and only the heads of the buckets that fit are compared: a dispatch
  costs ``O(#sizes + started * log n)``, whatever the queue length.

The policies (SPEC "A-SRPT, the online policy"):

``asrpt``
    Guided A-SRPT, the rule of Theorem 1: the virtual machine runs SRPT on
    ``v_hat_i = g_i K_hat_i alpha_i^max / M``; a job joins the real queue
    at its virtual completion ``C^V_i``; jobs start strictly in ``C^V``
    order as soon as enough GPUs are free anywhere; never preempted.
``asrpt-greedy``
    Jobs wait from arrival, keyed by virtual remaining size (virtually
    complete jobs first, by ``C^V``); whatever fits starts (backfilling).
``fifo``
    Arrival order, strict (no backfilling), consolidating first-fit mapping.
``sjf``
    Oracle processing time ``K_i alpha_i^min`` (shortest first), backfilling,
    consolidating first-fit mapping.
``srpt-naive``
    Predicted remaining compute ``K_hat_i c_i`` (communication ignored),
    backfilling, uniformly random mapping: SRPT without communication
    awareness. (Jobs are never preempted, so remaining = whole.)

**Adaptive rule** *(choice)*: a running job still running at its predicted
end (``start + K_hat alpha``) has its prediction multiplied by
``outrun_factor`` (default 2, a doubling rule; for a virtually incomplete
job the virtual size grows accordingly), and is checked again at the new
predicted end.
"""

from __future__ import annotations

import abc
import bisect
import heapq
import itertools
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from algorithms.mapping import FirstFitMapper, FreeGPUs, GraphMapper, Mapper, RandomMapper
from algorithms.predictors import JobView, Predictor
from algorithms.virtual import VirtualMachine
from ddlsched.alpha import all_cut_alpha
from ddlsched.model import Cluster


class Policy(Protocol):
    """An online scheduler driven by :class:`algorithms.simulator.Simulator`."""

    name: str

    def on_arrival(self, job: JobView, now: float) -> None:
        """``job`` is released at ``now``."""
        ...

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        """``job`` started at ``now`` with ``mapping`` (``alpha`` s per iteration)."""
        ...

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        """``job`` completed at ``now`` after ``iterations`` (now known)."""
        ...

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        """Jobs to start now with their mappings, one at a time.

        The caller takes each job's GPUs from ``free`` before asking for
        the next, so every mapping fits what is left.
        """
        ...

    def next_wakeup(self) -> float | None:
        """The next instant the policy wants to act at, if any."""
        ...


class StrictQueue:
    """Jobs in key order; only the head may start."""

    def __init__(self) -> None:
        self._heap: list[tuple[Hashable, int, JobView]] = []
        self._seq = itertools.count()

    def push(self, job: JobView, key: Hashable) -> None:
        """Add ``job`` with ``key`` (smaller starts first)."""
        heapq.heappush(self._heap, (key, next(self._seq), job))

    def pop_fitting(self, total_free: int) -> JobView | None:
        """The head if it fits in ``total_free`` GPUs (removed), else ``None``."""
        if self._heap and self._heap[0][2].gpus <= total_free:
            return heapq.heappop(self._heap)[2]
        return None

    def __len__(self) -> int:
        return len(self._heap)


class BackfillQueue:
    """Jobs bucketed by GPU count; the best-keyed job that fits starts first.

    Keys may change (:meth:`push` again): stale entries are skipped lazily.
    """

    def __init__(self) -> None:
        self._buckets: dict[int, list[tuple[Hashable, int, JobView]]] = {}
        self._current: dict[str, int] = {}
        self._seq = itertools.count()

    def push(self, job: JobView, key: Hashable) -> None:
        """Add ``job`` or change its key."""
        seq = next(self._seq)
        self._current[job.id] = seq
        heapq.heappush(self._buckets.setdefault(job.gpus, []), (key, seq, job))

    def __contains__(self, job_id: str) -> bool:
        return job_id in self._current

    def pop_fitting(self, total_free: int) -> JobView | None:
        """The best-keyed job with at most ``total_free`` GPUs (removed), or ``None``."""
        best: tuple[Hashable, int, JobView] | None = None
        for gpus, bucket in self._buckets.items():
            if gpus > total_free:
                continue
            while bucket and self._current.get(bucket[0][2].id) != bucket[0][1]:
                heapq.heappop(bucket)  # stale
            if bucket and (best is None or bucket[0][:2] < best[:2]):
                best = bucket[0]
        if best is None:
            return None
        heapq.heappop(self._buckets[best[2].gpus])
        del self._current[best[2].id]
        return best[2]

    def __len__(self) -> int:
        return len(self._current)


@dataclass
class _Running:
    job: JobView
    start: float
    alpha: float
    predicted: float


class _BasePolicy(abc.ABC):
    """Shared machinery: prediction checks of running jobs and mapping."""

    name = "base"

    def __init__(
        self,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper,
        queue: StrictQueue | BackfillQueue,
        outrun_factor: float = 2.0,
    ) -> None:
        if outrun_factor <= 1:
            raise ValueError(f"outrun_factor: must be > 1, got {outrun_factor!r}")
        self.cluster = cluster
        self.predictor = predictor
        self.mapper = mapper
        self.queue = queue
        self.outrun_factor = outrun_factor
        self.predicted: dict[str, float] = {}
        self._running: dict[str, _Running] = {}
        self._checks: list[tuple[float, int, str]] = []
        self._seq = itertools.count()

    def on_arrival(self, job: JobView, now: float) -> None:
        self.predicted[job.id] = max(1.0, float(self.predictor.predict(job)))
        self._arrive(job, now)

    @abc.abstractmethod
    def _arrive(self, job: JobView, now: float) -> None:
        """Put a newly arrived job where the policy keeps waiting jobs."""

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        running = _Running(job, now, alpha, self.predicted[job.id])
        self._running[job.id] = running
        heapq.heappush(self._checks, (now + running.predicted * alpha, next(self._seq), job.id))

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._running.pop(job.id, None)
        self.predictor.observe(job, iterations)

    def _revise_outrun(self, now: float) -> None:
        """The adaptive rule: jobs running past their predicted end."""
        while self._checks and self._checks[0][0] <= now:
            _, _, job_id = heapq.heappop(self._checks)
            running = self._running.get(job_id)
            if running is None:
                continue
            running.predicted *= self.outrun_factor
            self.predicted[job_id] = running.predicted
            self._revised(running.job, now)
            end = running.start + running.predicted * running.alpha
            heapq.heappush(self._checks, (end, next(self._seq), job_id))

    def _revised(self, job: JobView, now: float) -> None:  # noqa: B027 - optional hook
        """A prediction grew; policies with a virtual machine resize it."""

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        self._revise_outrun(now)
        self._before_dispatch(now)
        while (job := self.queue.pop_fitting(free.total)) is not None:
            mapping = self.mapper(job, self.cluster, free)
            if mapping is None:  # pragma: no cover - fits by total, so a mapping exists
                raise RuntimeError(f"mapper found no GPUs for {job.id!r}")
            yield job, mapping

    def _before_dispatch(self, now: float) -> None:  # noqa: B027 - optional hook
        """Hook: bring internal state to ``now``."""

    def next_wakeup(self) -> float | None:
        return self._checks[0][0] if self._checks else None


class GuidedASRPT(_BasePolicy):
    """``asrpt``: the provable guided mode of Theorem 1."""

    name = "asrpt"

    def __init__(
        self,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper | None = None,
        outrun_factor: float = 2.0,
    ) -> None:
        super().__init__(
            cluster, predictor, mapper or GraphMapper(), self._new_queue(), outrun_factor
        )
        self.machine = VirtualMachine(
            on_complete=self._virtual_complete, on_preempt=self._virtual_preempt
        )
        self._views: dict[str, JobView] = {}

    def _new_queue(self) -> StrictQueue | BackfillQueue:
        """Guided: jobs wait in strict virtual-completion order."""
        return StrictQueue()

    def _virtual_preempt(self, job_id: str, remaining: float) -> None:
        """Guided order depends on virtual completions only, not on preemptions."""

    def _virtual_size(self, job: JobView) -> float:
        predicted = self.predicted[job.id]
        return job.gpus * predicted * all_cut_alpha(job, self.cluster) / self.cluster.num_gpus

    def _arrive(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        self.machine.add(job.id, self._virtual_size(job), now)

    def _virtual_complete(self, job_id: str, time: float) -> None:
        self.queue.push(self._views.pop(job_id), time)

    def _revised(self, job: JobView, now: float) -> None:
        self.machine.resize(job.id, self._virtual_size(job), now)

    def _before_dispatch(self, now: float) -> None:
        self.machine.advance(now)

    def next_wakeup(self) -> float | None:
        times = [
            t for t in (self.machine.next_completion(), super().next_wakeup()) if t is not None
        ]
        return min(times) if times else None


class GreedyASRPT(GuidedASRPT):
    """``asrpt-greedy``: priority by virtual remaining size, backfilling."""

    name = "asrpt-greedy"

    def _new_queue(self) -> StrictQueue | BackfillQueue:
        """Greedy: jobs wait from arrival, the best-keyed that fits starts."""
        self.waiting = BackfillQueue()
        return self.waiting

    def _arrive(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        size = self._virtual_size(job)
        self.queue.push(job, (1, size))
        self.machine.add(job.id, size, now)

    def _virtual_complete(self, job_id: str, time: float) -> None:
        if job_id in self.waiting:
            self.waiting.push(self._views[job_id], (0, time))

    def _virtual_preempt(self, job_id: str, remaining: float) -> None:
        if job_id in self.waiting:
            self.waiting.push(self._views[job_id], (1, remaining))


class StaticPriorityPolicy(_BasePolicy):
    """A baseline: fixed key at arrival, strict or backfilling queue."""

    def __init__(
        self,
        name: str,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper,
        key: Callable[[JobView, float], Hashable],
        backfill: bool,
    ) -> None:
        super().__init__(
            cluster, predictor, mapper, BackfillQueue() if backfill else StrictQueue()
        )
        self.name = name
        self._key = key

    def _arrive(self, job: JobView, now: float) -> None:
        self.queue.push(job, self._key(job, self.predicted[job.id]))


class LeastAttainedService(_BasePolicy):
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
    is non-clairvoyant: no iteration counts are used.

    Cost per event is ``O(a log a)`` in the active jobs ``a``, so LAS is for
    instances and moderate traces, not the 82,000-job replay.
    """

    name = "las"
    preemptive = True

    def __init__(
        self,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper | None = None,
        thresholds: tuple[float, ...] = (3600.0, 36_000.0),
    ) -> None:
        super().__init__(cluster, predictor, mapper or FirstFitMapper(), StrictQueue())
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

    def _arrive(self, job: JobView, now: float) -> None:
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

    def preempt(self, now: float, running: tuple[str, ...]) -> list[str]:
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
        self.predictor.observe(job, iterations)

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


def make_policy(
    method: str,
    cluster: Cluster,
    predictor: Predictor,
    rng: np.random.Generator,
    oracle_processing: Callable[[JobView], float] | None = None,
) -> _BasePolicy:
    """The policy called ``method`` (see the module docstring)."""
    if method == "asrpt":
        return GuidedASRPT(cluster, predictor)
    if method == "asrpt-greedy":
        return GreedyASRPT(cluster, predictor)
    if method == "fifo":
        return StaticPriorityPolicy(
            "fifo",
            cluster,
            predictor,
            FirstFitMapper(),
            key=lambda job, _: (job.release, job.id),
            backfill=False,
        )
    if method == "sjf":
        if oracle_processing is None:
            raise ValueError("sjf needs the oracle processing times")
        return StaticPriorityPolicy(
            "sjf",
            cluster,
            predictor,
            FirstFitMapper(),
            key=lambda job, _: (oracle_processing(job), job.release),
            backfill=True,
        )
    if method == "las":
        return LeastAttainedService(cluster, predictor)
    if method == "srpt-naive":
        return StaticPriorityPolicy(
            "srpt-naive",
            cluster,
            predictor,
            RandomMapper(rng),
            key=lambda job, k_hat: (k_hat * job.compute_time, job.release),
            backfill=True,
        )
    raise ValueError(
        f"method: unknown policy {method!r}; expected asrpt, asrpt-greedy, fifo, sjf, "
        "srpt-naive, las"
    )
