"""Online policies: A-SRPT (guided and greedy) and the baselines.

Every policy here implements :class:`~ddlsched.algorithms.protocol.Policy` through
:class:`QueuePolicy`, the shared machinery of the non-preemptive ones; the
preemptive ``las`` baseline is in :mod:`ddlsched.algorithms.las`, and the names are
bound to factories in :mod:`ddlsched.algorithms.registry`.

Waiting jobs sit in one of two queues, each ``O(log n)`` per operation:

- :class:`StrictQueue`: start jobs in key order while the head fits;
  the head blocks the rest (no backfilling);
- :class:`BackfillQueue`: start the best-keyed job that fits, repeatedly
  (backfilling). A job fits iff its GPUs are at most the free GPUs in the
  whole cluster (any mapping is allowed), so jobs are bucketed by GPU count
  and only the heads of the buckets that fit are compared: a dispatch
  costs ``O(#sizes + started * log n)``, whatever the queue length.

The policies (:ref:`model-asrpt`):

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
import heapq
import itertools
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from ddlsched.algorithms.mapping import FreeGPUs, GraphMapper, Mapper
from ddlsched.algorithms.prediction.view import JobView, Predictor
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.alpha import virtual_size
from ddlsched.core.model import Cluster
from ddlsched.core.virtual import VirtualMachine

K = TypeVar("K", bound=Hashable)
"""A queue's key type (smaller starts first): a number, or a tuple of numbers."""

Entry = tuple[K, int, JobView]
"""A queued job: ``(key, sequence, job)``; the sequence breaks ties by push order."""


class StrictQueue(Generic[K]):
    """Jobs in key order; only the head may start."""

    strict = True

    def __init__(self) -> None:
        self._heap: list[Entry[K]] = []
        self._seq = itertools.count()

    def push(self, job: JobView, key: K) -> None:
        """Add ``job`` with ``key`` (smaller starts first)."""
        heapq.heappush(self._heap, (key, next(self._seq), job))

    def pop_entry(
        self, total_free: int, fits: Callable[[int], bool] | None = None
    ) -> Entry[K] | None:
        """The head if it fits in ``total_free`` GPUs (and its GPU count ``fits``, when
        given), removed; else ``None``."""
        head = self._heap[0][2].gpus if self._heap else None
        if head is not None and head <= total_free and (fits is None or fits(head)):
            return heapq.heappop(self._heap)
        return None

    def restore(self, entry: Entry[K]) -> None:
        """Put back a popped entry where it was (a job its mapper could not place)."""
        heapq.heappush(self._heap, entry)

    def __len__(self) -> int:
        return len(self._heap)


class BackfillQueue(Generic[K]):
    """Jobs bucketed by GPU count; the best-keyed job that fits starts first.

    Keys may change (:meth:`push` again): stale entries are skipped lazily.
    """

    strict = False

    def __init__(self) -> None:
        self._buckets: dict[int, list[Entry[K]]] = {}
        self._current: dict[str, int] = {}
        self._seq = itertools.count()

    def push(self, job: JobView, key: K) -> None:
        """Add ``job`` or change its key."""
        seq = next(self._seq)
        self._current[job.id] = seq
        heapq.heappush(self._buckets.setdefault(job.gpus, []), (key, seq, job))

    def __contains__(self, job_id: str) -> bool:
        return job_id in self._current

    def restore(self, entry: Entry[K]) -> None:
        """Put back a popped entry with its key and place in ties."""
        self._current[entry[2].id] = entry[1]
        heapq.heappush(self._buckets.setdefault(entry[2].gpus, []), entry)

    def _best(self, total_free: int, fits: Callable[[int], bool] | None = None) -> Entry[K] | None:
        """The best-keyed entry with at most ``total_free`` GPUs (and a GPU count that
        ``fits``, when given), left in place."""
        best: Entry[K] | None = None
        for gpus, bucket in self._buckets.items():
            if gpus > total_free or (fits is not None and not fits(gpus)):
                continue
            while bucket and self._current.get(bucket[0][2].id) != bucket[0][1]:
                heapq.heappop(bucket)  # stale
            if bucket and (best is None or bucket[0][:2] < best[:2]):
                best = bucket[0]
        return best

    def best_key(self) -> K | None:
        """The smallest key of any waiting job, whatever its width, or ``None``."""
        best = self._best(max(self._buckets, default=0))
        return None if best is None else best[0]

    def pop_entry(
        self, total_free: int, fits: Callable[[int], bool] | None = None
    ) -> Entry[K] | None:
        """The best-keyed entry with at most ``total_free`` GPUs and a GPU count that
        ``fits`` (when given), removed; or ``None``."""
        best = self._best(total_free, fits)
        if best is None:
            return None
        heapq.heappop(self._buckets[best[2].gpus])
        del self._current[best[2].id]
        return best

    def __len__(self) -> int:
        return len(self._current)


@dataclass
class _Running:
    job: JobView
    start: float
    alpha: float
    predicted: float


class QueuePolicy(Policy, abc.ABC):
    """Shared machinery of the non-preemptive policies: a queue of waiting jobs,
    the adaptive prediction checks of running jobs, and mapping."""

    name = "base"
    whole = False
    """Start a job that fits one server only on one server (the waiting jobs behind it
    backfill meanwhile): checked before the mapper is asked, so a waiting job costs
    nothing per event while no server has room for it."""

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

    def _revised(self, job: JobView, now: float) -> None:
        """A prediction grew; policies with a virtual machine resize it."""

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        self._revise_outrun(now)
        self._before_dispatch(now)
        unplaced = []
        fits = self._whole_fit(free) if self.whole else None
        while (entry := self.queue.pop_entry(free.total, fits)) is not None:
            job = entry[2]
            mapping = self.mapper(job, self.cluster, free)
            if mapping is None:  # a placement rule refused the free GPUs: the job waits
                unplaced.append(entry)
                if self.queue.strict:
                    break
                continue
            yield job, mapping
        for entry in unplaced:
            self.queue.restore(entry)

    def _whole_fit(self, free: FreeGPUs) -> Callable[[int], bool]:
        """Whether a job of so many GPUs may start whole now: on one server when it fits
        the largest, else anywhere (read live: ``free`` shrinks as jobs start)."""
        largest = self.cluster.max_gpus_per_server
        return lambda gpus: gpus > largest or gpus <= max(free)

    def _before_dispatch(self, now: float) -> None:
        """Hook: bring internal state to ``now``."""

    def next_wakeup(self) -> float | None:
        return self._checks[0][0] if self._checks else None


class GuidedASRPT(QueuePolicy):
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
        return virtual_size(job, self.cluster, self.predicted[job.id])

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


def tie_key(value: float) -> float:
    """``value`` rounded to 12 significant digits, for priority keys.

    Keys computed in floating point (``K * alpha``, virtual remaining sizes)
    differ by rounding noise where they are mathematically equal (three
    17-second jobs keyed 17.000000000000004, 16.999999999999996 and 17.0);
    rounded, they tie, and ties go to arrival order.
    """
    return float(f"{value:.12g}")


class GreedyASRPT(GuidedASRPT):
    """``asrpt-greedy``: priority by virtual remaining size, backfilling."""

    name = "asrpt-greedy"

    def __init__(
        self,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper | None = None,
        outrun_factor: float = 2.0,
    ) -> None:
        self._arrival_order: dict[str, int] = {}  # the last part of every key: ties by arrival
        super().__init__(cluster, predictor, mapper, outrun_factor)

    def _new_queue(self) -> StrictQueue | BackfillQueue:
        """Greedy: jobs wait from arrival, the best-keyed that fits starts."""
        self.waiting: BackfillQueue[tuple[int, float, int]] = BackfillQueue()
        return self.waiting

    def _arrive(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        self._arrival_order[job.id] = len(self._arrival_order)
        size = self._virtual_size(job)
        self.queue.push(job, (1, tie_key(size), self._arrival_order[job.id]))
        self.machine.add(job.id, size, now)

    def _virtual_complete(self, job_id: str, time: float) -> None:
        if job_id in self.waiting:
            key = (0, tie_key(time), self._arrival_order[job_id])
            self.waiting.push(self._views[job_id], key)

    def _virtual_preempt(self, job_id: str, remaining: float) -> None:
        if job_id in self.waiting:
            key = (1, tie_key(remaining), self._arrival_order[job_id])
            self.waiting.push(self._views[job_id], key)


class StaticPriorityPolicy(QueuePolicy):
    """A baseline: fixed key at arrival, strict or backfilling queue."""

    def __init__(
        self,
        name: str,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper,
        key: Callable[[JobView, float], Hashable],
        backfill: bool,
        outrun_factor: float = 2.0,
        whole: bool = False,
    ) -> None:
        super().__init__(
            cluster,
            predictor,
            mapper,
            BackfillQueue() if backfill else StrictQueue(),
            outrun_factor,
        )
        self.name = name
        self._key = key
        self.whole = whole

    def _arrive(self, job: JobView, now: float) -> None:
        self.queue.push(job, self._key(job, self.predicted[job.id]))
