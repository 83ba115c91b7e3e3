"""Fair schedulers with GPU leases: ``themis`` and ``maxmin-users`` (preemptive).

Both hand out GPUs as *leases*, as Themis does: a job that starts holds its GPUs for
``lease`` seconds (default :data:`LEASE_LENGTH`, Gavel's 6-minute rounds; Themis
leases for 10-20 minutes), and may be preempted only when its lease ends. A *contest*
is held at any event where jobs wait and GPUs are free or a lease has ended: the
contenders (the waiting jobs and the running jobs whose lease ended) are ranked by
the policy, and in ranking order each takes what fits in the GPUs the jobs still
under lease leave (a job too wide for what is left is skipped, as in LAS). Running
contenders left out are preempted, and pay the simulator's restart cost when they
resume; those kept renew their lease. Waiting jobs then start in ranking order, each
on GPUs that run it within :data:`PLACEMENT_SLACK` of its fastest (Themis's bids are
placement-sensitive: a wide job resumed across many servers can run several times
slower). If the first-ranked waiting job cannot start, no other does: the free GPUs
wait for it, which every lease ending within ``lease`` seconds bounds. Iteration
counts are never read: ``themis`` ranks by predicted remaining work,
``maxmin-users`` by service received.

- :class:`FinishTimeFair` (``themis``): Mahajan et al., *Themis: Fair and Efficient
  GPU Cluster Scheduling*, NSDI 2020. Jobs with the worst estimated finish-time
  fairness ``rho`` (:mod:`ddlsched.core.fairness`) get GPUs first. Themis's
  auction (jobs bid for GPU bundles, a fraction ``f`` of the fairest jobs left out)
  is replaced by this greedy ranking: ``f = 0``, every job takes part.
- :class:`UserMaxMin` (``maxmin-users``): Narayanan et al., *Heterogeneity-Aware
  Cluster Scheduling Policies for Deep Learning Workloads*, OSDI 2020, its
  hierarchical max-min fairness: GPUs are shared max-min among users (or virtual
  clusters), and within a user by least attained service (Tiresias's LAS, Gu et al.,
  NSDI 2019). Gavel solves an LP for time shares and realises them in rounds; here
  the shares are water-filled at each contest and realised with whole jobs, leftovers
  to the least-served users.
"""

from __future__ import annotations

import abc
import enum
import heapq
import math
from collections.abc import Collection, Iterator

import numpy as np
from ddlsched.algorithms.mapping import FirstFitMapper, FreeGPUs, GraphMapper, Mapper
from ddlsched.algorithms.prediction.view import JobView, Predictor
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.alpha import AlphaMinCache, alpha
from ddlsched.core.fairness import isolated_time
from ddlsched.core.model import Cluster
from ddlsched.core.params import DEFAULT_RESTART_COST

__all__ = [
    "GROUPINGS",
    "LEASE_LENGTH",
    "PLACEMENT_SLACK",
    "FinishTimeFair",
    "UserMaxMin",
    "max_min_shares",
]

LEASE_LENGTH = 360.0
"""Seconds of a lease: Gavel's 6-minute rounds (Themis leases for 10-20 minutes)."""

PLACEMENT_SLACK = 1.5
"""How much slower than its fastest (``alpha_i^min``) a job may be placed: a job whose
free GPUs would run it slower waits for better ones (Themis's placement-sensitive bids;
a wide job resumed across many servers may otherwise run several times slower)."""

GROUPINGS = ("user", "vc")
"""What :class:`UserMaxMin` shares GPUs among: the job feature it groups by."""


_PURE_MAPPERS = (GraphMapper, FirstFitMapper)
"""Mappers whose answer depends on the job and the free GPUs alone (no state, no
randomness): a job they placed or refused is not asked again until the free GPUs change."""


class _Column(enum.IntEnum):
    """The columns of :class:`FinishTimeFair`'s rows: ``r_i``, the restart cost a
    resume pays, ``(K_hat_i - k_i) alpha_i^min``, ``K_hat_i alpha_i^min``, ``g_i``,
    ``w_i`` and the area under the number of active jobs at ``r_i``."""

    RELEASE = 0
    RESTART = 1
    WORK_LEFT = 2
    WORK = 3
    GPUS = 4
    WEIGHT = 5
    AREA_AT_RELEASE = 6


class _Leases(Policy):
    """Per-job leases and contests over a ranking (module docstring).

    A subclass gives :meth:`_ranking`; this class keeps each job's lease, its service
    (seconds held, iterations done), the GPUs held and the waiting order.
    """

    name = "leases"

    def __init__(
        self,
        cluster: Cluster,
        mapper: Mapper | None,
        lease: float,
        restart_cost: float | None,
        placement_slack: float,
        predictor: Predictor | None,
        outrun_factor: float,
    ) -> None:
        if not (isinstance(lease, int | float) and 0 < lease < math.inf):
            raise ValueError(f"lease: must be a number of seconds > 0, got {lease!r}")
        if not (isinstance(placement_slack, int | float) and placement_slack >= 1):
            raise ValueError(f"placement_slack: must be a number >= 1, got {placement_slack!r}")
        if not outrun_factor > 1:
            raise ValueError(f"outrun_factor: must be > 1, got {outrun_factor!r}")
        self.placement_slack = float(placement_slack)
        self.predictor = predictor
        self.outrun_factor = outrun_factor
        self._predicted: dict[str, float] = {}  # K_hat_i, grown once outrun
        self._backfill_until: dict[str, float] = {}  # a job backfilled now: its lease end
        self._fastest = AlphaMinCache(cluster)
        self._alpha_min: dict[str, float] = {}
        self.cluster = cluster
        self.mapper = mapper or GraphMapper()
        self.lease = float(lease)
        self.restart_cost = restart_cost
        self._views: dict[str, JobView] = {}
        self._order: dict[str, int] = {}  # the active jobs, in arrival order
        self._arrivals = 0
        self._held: dict[str, float] = {}  # seconds on GPUs, pieces ended
        self._done: dict[str, float] = {}  # iterations, pieces ended (alpha known at start)
        self._since: dict[str, tuple[float, float, float]] = {}  # start, restart, alpha
        self._start_rank: dict[str, int] = {}  # running jobs: when their piece started
        self._starts = 0
        self._alphas: dict[str, dict[str | tuple[int, ...], float]] = {}  # by _alpha's key
        self._free_version = 0  # counts the starts and stops that change the free GPUs
        self._placements: dict[str, tuple[int, tuple[int, ...] | None]] = {}  # _placed's
        self._lease_end: dict[str, float] = {}  # running jobs
        self._ends: list[tuple[float, str]] = []  # lease ends, a heap (stale entries kept)
        self._busy = 0  # GPUs held
        self._queue: dict[str, None] = {}  # waiting jobs, in ranking order
        self._skip: set[str] = set()

    @abc.abstractmethod
    def _ranking(self, now: float, contenders: list[str], ended: list[str]) -> list[str]:
        """``contenders`` (the waiting jobs, then ``ended``: the running jobs whose lease
        ended), the first to get GPUs first; a ranking depends on the set, not its order."""

    def resume_cost(self) -> float:
        """Seconds a resumed job restores: the policy's ``restart_cost``, else the
        simulator's default."""
        return DEFAULT_RESTART_COST if self.restart_cost is None else self.restart_cost

    def on_arrival(self, job: JobView, now: float) -> None:
        self._views[job.id] = job
        self._order[job.id] = self._arrivals
        self._arrivals += 1
        self._held[job.id] = 0.0
        self._done[job.id] = 0.0
        self._alpha_min[job.id] = self._fastest(job)[0]  # type: ignore[arg-type]
        self._alphas[job.id] = {}
        self._queue[job.id] = None
        if self.predictor is not None:
            self._predicted[job.id] = max(1.0, float(self.predictor.predict(job)))

    def held(self, job_id: str, now: float) -> float:
        """Seconds ``job_id`` has held GPUs by ``now``."""
        run = self._since.get(job_id)
        return self._held[job_id] + (0.0 if run is None else now - run[0])

    def done(self, job_id: str, now: float) -> float:
        """Iterations ``job_id`` has done by ``now`` (none while it restores)."""
        run = self._since.get(job_id)
        if run is None:
            return self._done[job_id]
        start, restart, alpha = run
        return self._done[job_id] + max(0.0, now - start - restart) / alpha

    def _renew(self, job_id: str, now: float, until: float = math.inf) -> None:
        end = min(now + self.lease, until)
        self._lease_end[job_id] = end
        heapq.heappush(self._ends, (end, job_id))

    def predicted_left(self, job_id: str, now: float) -> float:
        """``K_hat_i - k_i``: the iterations ``job_id`` is predicted to have left at ``now``
        (a prediction it has outrun first grows by ``outrun_factor``, as often as
        needed: A-SRPT's rule)."""
        done = self.done(job_id, now)
        while self._predicted[job_id] <= done:
            self._predicted[job_id] *= self.outrun_factor
        return self._predicted[job_id] - done

    def _leases_ended(self, now: float) -> list[str]:
        """The running jobs whose lease has ended by ``now``, in the order their pieces
        started, taken off the heap of lease ends (each is renewed or stopped next)."""
        horizon = now + 1e-9 * max(1.0, abs(now))
        ends, ended = self._ends, set()
        while ends and ends[0][0] <= horizon:
            end, job_id = heapq.heappop(ends)
            if self._lease_end.get(job_id) == end:
                ended.add(job_id)
        return sorted(ended, key=self._start_rank.__getitem__)

    def preempt(self, now: float, running: Collection[str]) -> list[str]:
        """A contest, when jobs wait and GPUs are free or a lease has ended: the
        contenders' ranking takes, in order, what fits beside the pinned jobs; running
        contenders left out stop, the others renew their lease."""
        self._skip = set()
        if not self._queue:
            return []
        ended = self._leases_ended(now)
        if not ended and self._busy >= self.cluster.num_gpus:
            return []
        ranking = self._ranking(now, [*self._queue, *ended], ended)
        room = self.cluster.num_gpus - self._busy + sum(self._views[j].gpus for j in ended)
        undecided, kept = set(ended), set()
        for job_id in ranking:  # only whether each ended job is kept matters here
            if room == 0 or not undecided:
                break
            gpus = self._views[job_id].gpus
            if gpus <= room:
                room -= gpus
                kept.add(job_id)
            undecided.discard(job_id)
        renewed = [j for j in ended if j in kept]
        for job_id in renewed:
            self._renew(job_id, now)
        stopped = [j for j in ended if j not in kept]
        if renewed:
            ranking = [j for j in ranking if j not in kept or j in self._queue]
        self._queue = dict.fromkeys(ranking)
        self._skip = set(stopped)
        return stopped

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        """Waiting jobs in ranking order, each on GPUs that run it within
        ``placement_slack`` of its fastest. If the first cannot start, its GPUs are kept
        for it (every lease ends within ``lease`` seconds): without predictions no other
        job starts; with them, a job whose predicted end comes before the
        :meth:`shadow` time backfills, under a lease that ends by then."""
        first, shadow = True, None
        for job_id in list(self._queue):  # a start leaves the queue
            if job_id in self._skip:
                continue
            view = self._views[job_id]
            fastest = self._alpha_min[job_id]
            if shadow is not None and not self._ends_by(view, fastest, now, shadow):
                continue  # past the shadow time even at its fastest: no GPUs need be tried
            mapping = self._placed(view, free) if view.gpus <= free.total else None
            if mapping is None:
                if first and self.predictor is not None:
                    shadow = self.shadow(view.gpus, now, free.total)
                elif first or free.total == 0:
                    return
            elif shadow is None:
                yield view, mapping
            elif self._ends_by(view, self._alpha(view, mapping), now, shadow):
                self._backfill_until[job_id] = shadow
                yield view, mapping
            first = False

    def shadow(self, gpus: int, now: float, free: int) -> float:
        """EASY backfilling's shadow time (Lifka 1995; Mu'alem and Feitelson, IEEE TPDS
        2001): the first lease end after ``now`` by which ``gpus`` GPUs are sure to be
        contested, the ``free`` ones and those of each running job whose lease has ended
        (GPUs are counted, not placed: a job refused its placement although enough GPUs
        are free waits at least for the next lease end). ``now`` when no lease ends."""
        for end, held in sorted((self._lease_end[j], self._views[j].gpus) for j in self._since):
            free += held
            if free >= gpus and end > now:
                return end
        return now

    def _ends_by(self, view: JobView, per_iteration: float, now: float, shadow: float) -> bool:
        """Whether ``view`` started at ``now`` is predicted to end by ``shadow``: its
        restart cost if it resumes, then its predicted work left at ``per_iteration``
        seconds each (``alpha_i`` of the GPUs offered; ``alpha_i^min`` bounds it below)."""
        restart = self.resume_cost() if self._held[view.id] > 0.0 else 0.0
        end = now + restart + self.predicted_left(view.id, now) * per_iteration
        return end <= shadow * (1 + 1e-12)

    def _placed(self, view: JobView, free: FreeGPUs) -> tuple[int, ...] | None:
        """The mapper's GPUs for ``view``, unless they run it slower than
        ``placement_slack`` times its fastest while other jobs hold GPUs (on an idle
        cluster any GPUs do: waiting would change nothing)."""
        pure = type(self.mapper) in _PURE_MAPPERS
        if pure and view.id in self._placements:
            version, known = self._placements[view.id]
            if version == self._free_version:
                return known
        mapping = self.mapper(view, self.cluster, free)
        if mapping is not None and self._busy > 0:
            fastest = self._alpha_min[view.id] * self.placement_slack
            if self._alpha(view, mapping) > fastest * (1 + 1e-9):
                mapping = None
        if pure:
            self._placements[view.id] = (self._free_version, mapping)
        return mapping

    def _alpha(self, view: JobView, mapping: tuple[int, ...]) -> float:
        """``alpha_i`` on ``mapping``, computed once per job and mapping (on one server,
        once per GPU type: it depends on nothing else there): a job waiting for better
        GPUs is offered the same ones at event after event."""
        server = mapping[0]
        one_server = all(other == server for other in mapping)
        key = self.cluster.type_of(server) if one_server else tuple(mapping)
        known = self._alphas[view.id]
        if key not in known:
            known[key] = alpha(view, self.cluster, mapping)
        return known[key]

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        restart = self.resume_cost() if self._held[job.id] > 0.0 else 0.0
        self._since[job.id] = (now, restart, alpha)
        self._start_rank[job.id] = self._starts
        self._starts += 1
        self._renew(job.id, now, self._backfill_until.pop(job.id, math.inf))
        self._busy += job.gpus
        self._free_version += 1
        del self._queue[job.id]

    def _bank(self, job_id: str, now: float) -> None:
        self._held[job_id] = self.held(job_id, now)
        self._done[job_id] = self.done(job_id, now)
        del self._since[job_id]
        del self._start_rank[job_id]
        del self._lease_end[job_id]
        self._busy -= self._views[job_id].gpus
        self._free_version += 1

    def on_preempt(self, job: JobView, now: float) -> None:
        """A preempted job banks its service (it is already in the waiting order)."""
        self._bank(job.id, now)

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        self._bank(job.id, now)
        stores = (self._views, self._held, self._done, self._alpha_min, self._alphas)
        for store in stores:
            del store[job.id]
        self._placements.pop(job.id, None)
        if self.predictor is not None:
            del self._predicted[job.id]
            self.predictor.observe(job, iterations)
        del self._order[job.id]

    def next_wakeup(self) -> float | None:
        """The next lease end while a job waits (with none waiting, a lease that ends is
        contested at the next event)."""
        ends = self._ends
        while ends and self._lease_end.get(ends[0][1]) != ends[0][0]:
            heapq.heappop(ends)  # the job stopped, completed or renewed since
        return ends[0][0] if ends and self._queue else None


class FinishTimeFair(_Leases):
    """``themis``: GPU leases, the worst estimated finish-time fairness first.

    At a contest at ``t`` each contender's ``rho`` is estimated as in
    :mod:`ddlsched.core.fairness`, with its predicted work in place of the true one:
    ``rho_hat_i = (t - r_i + R_i + (K_hat_i - k_i) alpha_i^min) /
    T^iso(K_hat_i alpha_i^min, N_i)``: the time so far, the restart cost ``R_i`` a
    preempted job would pay, and the predicted work left ``K_hat_i - k_i`` at its
    fastest; ``N_i`` is the time-average number of active jobs since ``r_i``. Jobs
    are ranked by ``w_i rho_hat_i``, worst first (ties: arrival). A job past its
    prediction has it multiplied by ``outrun_factor`` (A-SRPT's rule) until ahead.

    Parameters
    ----------
    cluster
        The cluster.
    predictor
        Gives ``K_hat_i`` at arrival (and hears the true count at completion).
    mapper
        Chooses GPUs; default the communication-aware
        :class:`~ddlsched.algorithms.mapping.GraphMapper`.
    lease
        Seconds of a lease (> 0).
    restart_cost
        Seconds a resumed job restores (its estimate counts it); ``None``: the
        simulator's.
    outrun_factor
        What a prediction is multiplied by once the job has done that much (> 1).
    placement_slack
        How much slower than its fastest a job may be placed (>= 1).
    """

    name = "themis"

    def __init__(
        self,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper | None = None,
        lease: float = LEASE_LENGTH,
        *,
        restart_cost: float | None = None,
        outrun_factor: float = 2.0,
        placement_slack: float = PLACEMENT_SLACK,
    ) -> None:
        super().__init__(
            cluster, mapper, lease, restart_cost, placement_slack, predictor, outrun_factor
        )
        self.predictor: Predictor = predictor
        self._area_at_release: dict[str, float] = {}
        self._area = 0.0  # integral of the number of active jobs up to _area_time
        self._area_time = 0.0
        self._active = 0
        # What rho_hat reads of each job, one row per arrival (``_order``): constant
        # while the job waits, so a contest estimates every waiting job in one pass.
        self._rows = np.zeros((64, len(_Column)))

    def _advance_area(self, now: float) -> None:
        self._area += self._active * (now - self._area_time)
        self._area_time = now

    def on_arrival(self, job: JobView, now: float) -> None:
        super().on_arrival(job, now)
        self._advance_area(now)
        self._active += 1
        self._area_at_release[job.id] = self._area
        if self._order[job.id] == len(self._rows):
            self._rows = np.concatenate((self._rows, np.zeros_like(self._rows)))
        self._refresh(job.id, now)

    def on_preempt(self, job: JobView, now: float) -> None:
        super().on_preempt(job, now)
        self._refresh(job.id, now)

    def _refresh(self, job_id: str, now: float) -> None:
        """Write the row of ``job_id`` as of ``now`` (a prediction it has outrun first
        grows by ``outrun_factor``, as often as needed)."""
        view = self._views[job_id]
        left = self.predicted_left(job_id, now)
        alpha_min = self._alpha_min[job_id]
        restart = 0.0 if job_id in self._since or self._held[job_id] == 0 else self.resume_cost()
        self._rows[self._order[job_id]] = (
            view.release,
            restart,
            left * alpha_min,
            self._predicted[job_id] * alpha_min,
            view.gpus,
            view.weight,
            self._area_at_release[job_id],
        )

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        super().on_completion(job, iterations, now)
        self._advance_area(now)
        self._active -= 1
        del self._area_at_release[job.id]

    def estimated_rho(self, job_id: str, now: float) -> float:
        """``rho_hat_i`` at ``now`` (class docstring), from predicted work only."""
        return float(self._estimates([job_id], now)[1][0])

    def _estimates(self, job_ids: list[str], now: float) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``job_ids`` (:attr:`_rows`) and their ``rho_hat`` at ``now``, the
        rows of running jobs brought up to ``now`` first."""
        for job_id in job_ids:
            if job_id in self._since:
                self._refresh(job_id, now)
        slots = np.fromiter((self._order[j] for j in job_ids), np.intp, len(job_ids))
        rows = self._rows[slots]
        waited = now - rows[:, _Column.RELEASE]
        area = self._area + self._active * (now - self._area_time)
        active = np.full(len(job_ids), float(self._active))
        np.divide(area - rows[:, _Column.AREA_AT_RELEASE], waited, out=active, where=waited > 0)
        shared = waited + rows[:, _Column.RESTART] + rows[:, _Column.WORK_LEFT]
        alone = isolated_time(
            rows[:, _Column.WORK], active, rows[:, _Column.GPUS], self.cluster.num_gpus
        )
        return slots, shared / alone

    def _ranking(self, now: float, contenders: list[str], ended: list[str]) -> list[str]:
        """The contenders by ``w_i rho_hat_i``, worst first, then arrival."""
        slots, rho = self._estimates(contenders, now)
        keys = -self._rows[slots, _Column.WEIGHT] * rho
        return [contenders[k] for k in np.lexsort((slots, keys))]


def max_min_shares(capacity: float, demands: dict[str, float]) -> dict[str, float]:
    """Max-min fair shares of ``capacity`` among ``demands`` (water-filling).

    Every group gets ``min(demand, level)``, with one ``level`` for all that uses the
    whole capacity (or satisfies every demand): the least-demanding groups are served
    in full first and what they leave is split equally among the rest.
    """
    shares: dict[str, float] = {}
    left, groups = float(capacity), len(demands)
    for group in sorted(demands, key=lambda g: (demands[g], g)):
        shares[group] = min(demands[group], left / groups)
        left -= shares[group]
        groups -= 1
    return shares


class UserMaxMin(_Leases):
    """``maxmin-users``: GPUs max-min among users (or virtual clusters), LAS within.

    At a contest the active jobs are grouped by the feature ``by`` (jobs naming
    none form one group); each group's demand is its jobs' GPUs, and
    :func:`max_min_shares` splits ``M`` among the groups. Groups in order of least
    GPU-seconds received (ties: the earliest arrival) each take, within
    ``floor(share)`` GPUs, their jobs in order of least attained service (GPU-seconds
    over weight; ties: arrival). The rest follow in order of their group's service,
    then their own, taking the GPUs rounding left over.

    Parameters
    ----------
    cluster
        The cluster.
    mapper
        Chooses GPUs; default the communication-aware
        :class:`~ddlsched.algorithms.mapping.GraphMapper`.
    lease
        Seconds of a lease (> 0).
    by
        ``"user"`` or ``"vc"`` (:data:`GROUPINGS`): the job feature naming the group.
    restart_cost
        Seconds a resumed job restores; ``None``: the simulator's.
    placement_slack
        How much slower than its fastest a job may be placed (>= 1).
    predictor
        Gives ``K_hat_i`` at arrival, used only to backfill (the ranking reads service
        received); ``None``: no backfilling, the free GPUs wait for the first job.
    outrun_factor
        What a prediction is multiplied by once the job has done that much (> 1).
    """

    name = "maxmin-users"

    def __init__(
        self,
        cluster: Cluster,
        mapper: Mapper | None = None,
        lease: float = LEASE_LENGTH,
        *,
        by: str = "user",
        restart_cost: float | None = None,
        placement_slack: float = PLACEMENT_SLACK,
        predictor: Predictor | None = None,
        outrun_factor: float = 2.0,
    ) -> None:
        super().__init__(
            cluster, mapper, lease, restart_cost, placement_slack, predictor, outrun_factor
        )
        if by not in GROUPINGS:
            raise ValueError(f"by: expected one of {', '.join(GROUPINGS)}, got {by!r}")
        self.by = by
        self.name = f"maxmin-{by}s"
        self._group_served: dict[str, float] = {}  # GPU-seconds of completed jobs
        self._group: dict[str, str] = {}  # active job -> its group
        self._members: dict[str, dict[str, None]] = {}  # group -> active jobs, by arrival
        self._demand: dict[str, int] = {}  # group -> GPUs of its active jobs

    def group_of(self, job_id: str) -> str:
        """The group of ``job_id``: its ``by`` feature ("" when the trace names none)."""
        named = self._views[job_id].features.get(self.by)
        return "" if named is None else str(named)

    def service(self, job_id: str, now: float) -> float:
        """GPU-seconds ``job_id`` has held by ``now``."""
        return self.held(job_id, now) * self._views[job_id].gpus

    def on_arrival(self, job: JobView, now: float) -> None:
        super().on_arrival(job, now)
        group = self._group[job.id] = self.group_of(job.id)
        self._members.setdefault(group, {})[job.id] = None
        self._demand[group] = self._demand.get(group, 0) + job.gpus

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        group = self._group.pop(job.id)
        served = self.service(job.id, now)
        self._group_served[group] = self._group_served.get(group, 0.0) + served
        del self._members[group][job.id]
        self._demand[group] -= job.gpus
        if not self._members[group]:
            del self._members[group], self._demand[group]
        super().on_completion(job, iterations, now)

    def _group_service(self, now: float) -> dict[str, tuple[float, int]]:
        """Each active group's GPU-seconds received by ``now`` (its completed jobs', then
        its active jobs' in arrival order) and the arrival of its earliest active job."""
        held, since, views = self._held, self._since, self._views
        return {
            group: (
                self._group_served.get(group, 0.0)
                + sum(
                    (held[j] if j not in since else held[j] + (now - since[j][0])) * views[j].gpus
                    for j in jobs
                ),
                self._order[next(iter(jobs))],
            )
            for group, jobs in self._members.items()
        }

    def _ranking(self, now: float, contenders: list[str], ended: list[str]) -> list[str]:
        """Contenders within their group's share, group by group, then the rest (class
        docstring); the GPUs of a job still under lease count against its group's share."""
        group_of, views = self._group, self._views
        served = self._group_service(now)
        shares = max_min_shares(
            self.cluster.num_gpus, {g: float(d) for g, d in self._demand.items()}
        )
        budget = {g: math.floor(share + 1e-9) for g, share in shares.items()}
        for job_id in self._since:
            if job_id not in ended:
                budget[group_of[job_id]] -= views[job_id].gpus
        key = {
            j: (served[group_of[j]], self.service(j, now) / views[j].weight, self._order[j])
            for j in contenders
        }
        first: list[str] = []
        for job_id in sorted(contenders, key=key.__getitem__):
            group = group_of[job_id]
            if views[job_id].gpus <= budget[group]:
                budget[group] -= views[job_id].gpus
                first.append(job_id)
        chosen = set(first)
        rest = [j for j in contenders if j not in chosen]
        rest.sort(key=key.__getitem__)
        return first + rest
