"""A server-aware list schedule: backfilling that never delays a reservation.

Plain backfilling with whole-server placement starves a job that needs many GPUs
of one server: while it waits for a server to empty, narrower jobs behind it in
the list keep starting on every GPU that frees, so no server ever empties.
:class:`ReservingPolicy` is backfilling with reservations held on *servers*, after
EASY backfilling (D. Lifka, *The ANL/IBM SP scheduling system*, JSSPP 1995) and
conservative backfilling (A. W. Mu'alem and D. G. Feitelson, *Utilization,
predictability, workloads, and user runtime estimates in scheduling the IBM SP2
with backfilling*, IEEE TPDS 2001), which hold them on a pool of processors:

1. jobs wait in the order of a fixed key; a job that fits one server starts only
   on one server (the mapper's best fit: the fewest free GPUs that hold it);
2. when the best-keyed waiting job (the **head**) cannot start, it becomes a
   **holder**: it claims the unclaimed server that can hold it earliest, given
   when the running jobs end (their predicted ends, exact with the oracle
   predictor), or, for a job wider than every server, the unclaimed servers that
   empty earliest until they hold it. At most ``reservations`` jobs hold claims
   at once (by default 3/8 of the servers' count); a holder keeps its servers
   until it starts;
3. at every event each claim's time ``T`` is recomputed on its servers, the
   holders start first (oldest claim first, anywhere that spares the other
   claims), then the other jobs in key order (**backfilling**): a job may
   start now if it spares every claim, i.e. on each claimed server it either
   ends by ``T`` or takes at most the **slack**, the GPUs free there at ``T``
   beyond the holder's need (each job running past ``T`` spends the slack it
   takes).

No job started after a claim holds the claimed GPUs past ``T``, so the time
recomputed never grows: **every holder starts by the time of its first claim**
(exactly when the predicted ends are exact). The tests check this promise on
every claim of hypothesis-drawn instances.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass

from ddlsched.algorithms.mapping import FreeGPUs, Mapper
from ddlsched.algorithms.policies import BackfillQueue, Entry, QueuePolicy
from ddlsched.algorithms.prediction.view import JobView, Predictor

from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster


@dataclass
class Claim:
    """A reservation on one server: at ``time`` the holder needs its GPUs there; a job
    running past ``time`` may hold at most ``slack`` of the server's GPUs that will be
    free then."""

    time: float
    slack: int


class Claims:
    """The reservations of one event, by server."""

    def __init__(self) -> None:
        self.by_server: dict[int, Claim] = {}

    def offer(self, free: FreeGPUs) -> list[int]:
        """Free GPUs per server a job may take whatever its end: a claimed server
        offers at most its slack."""
        offer = list(free)
        for server, claim in self.by_server.items():
            offer[server] = min(offer[server], max(0, claim.slack))
        return offer

    def spares(self, mapping: tuple[int, ...], end: float) -> bool:
        """Whether a job on ``mapping`` ending at ``end`` leaves every claim whole."""
        return all(
            count <= claim.slack
            for server, count in Counter(mapping).items()
            if (claim := self.by_server.get(server)) is not None and end > claim.time
        )

    def spend(self, mapping: tuple[int, ...], end: float) -> None:
        """A job on ``mapping`` ending at ``end`` started: it holds the slack it takes
        on each claimed server it runs past the claim on."""
        for server, count in Counter(mapping).items():
            claim = self.by_server.get(server)
            if claim is not None and end > claim.time:
                claim.slack -= count


class HeadQueue(BackfillQueue):
    """A backfilling queue that also gives out its best-keyed job, whatever its width."""

    def head(self) -> Entry | None:
        """The best-keyed waiting entry, left in place, or ``None``."""
        return self._best(max(self._buckets, default=0))

    def remove(self, entry: Entry) -> None:
        """Take ``entry`` (the current :meth:`head`) out of the queue."""
        del self._current[entry[2].id]


RESERVING_SHARE = 3 / 8
"""By default this share of the servers' count (rounded down, at least one) may hold a
reservation at once: on full Philly at 32 x 8 by GPU-area, 8 holders gave 2.16 x the
fast flow bound, 12 gave 2.03 and 16 2.07 (2.64 at load 0.9 for both 12 and 16)."""


def default_reservations(cluster: Cluster) -> int:
    """How many jobs may hold a reservation at once by default (:data:`RESERVING_SHARE`)."""
    return max(1, int(cluster.num_servers * RESERVING_SHARE))


@dataclass
class Holder:
    """A waiting job holding a reservation: the GPUs it needs on each claimed server."""

    job: JobView
    needs: dict[int, int]


class ReservingPolicy(QueuePolicy):
    """Backfilling that never delays the reservations of the first jobs in the list
    (module docstring).

    Parameters
    ----------
    name
        The policy's name in results.
    cluster
        The cluster.
    predictor
        Gives ``K_hat_i`` at arrival; a running job's end is predicted as ``start +
        K_hat_i alpha_i(x)`` (with the oracle predictor, exactly its end).
    mapper
        Places a starting job on the GPUs offered (A-SRPT's graph mapper in the
        offline schedules).
    key
        Each job's fixed priority (smaller starts first).
    reservations
        The most jobs holding a reservation at once (1: EASY backfilling; ``None``:
        :func:`default_reservations`).
    outrun_factor
        The adaptive rule of :class:`~ddlsched.algorithms.policies.QueuePolicy`
        for a job running past its predicted end.

    Raises
    ------
    ValueError
        If ``reservations`` is below 1.
    """

    def __init__(
        self,
        name: str,
        cluster: Cluster,
        predictor: Predictor,
        mapper: Mapper,
        key: Callable[[JobView], Hashable],
        reservations: int | None = None,
        outrun_factor: float = 2.0,
    ) -> None:
        if reservations is None:
            reservations = default_reservations(cluster)
        if reservations < 1:
            raise ValueError(f"reservations: must be >= 1, got {reservations!r}")
        self.waiting = HeadQueue()
        super().__init__(cluster, predictor, mapper, self.waiting, outrun_factor)
        self.name = name
        self.reservations = reservations
        self._key = key
        self.holders: dict[str, Holder] = {}
        """The jobs holding a reservation, oldest first."""
        self._servers_of: dict[str, dict[int, int]] = {}
        self._on_server: list[dict[str, int]] = [{} for _ in cluster.gpus_per_server]
        self._emptying: list[dict[int, tuple[float, int]]] = [{} for _ in self._on_server]

    def _arrive(self, job: JobView, now: float) -> None:
        self.waiting.push(job, self._key(job))

    def on_start(self, job: JobView, mapping: tuple[int, ...], alpha: float, now: float) -> None:
        super().on_start(job, mapping, alpha, now)
        self._servers_of[job.id] = Counter(mapping)
        for server, count in self._servers_of[job.id].items():
            self._on_server[server][job.id] = count
            self._emptying[server].clear()

    def on_completion(self, job: JobView, iterations: int, now: float) -> None:
        super().on_completion(job, iterations, now)
        for server in self._servers_of.pop(job.id, {}):
            del self._on_server[server][job.id]
            self._emptying[server].clear()

    def _revised(self, job: JobView, now: float) -> None:
        for server in self._servers_of.get(job.id, {}):
            self._emptying[server].clear()

    def dispatch(self, now: float, free: FreeGPUs) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        self._revise_outrun(now)
        if free.total == 0:
            return
        claims = Claims()
        held = {
            job_id: self.claims_of(holder, now, free) for job_id, holder in self.holders.items()
        }
        for own in held.values():
            claims.by_server.update(own)
        for job_id, holder in list(self.holders.items()):
            for server in held[job_id]:
                del claims.by_server[server]
            mapping = self._backfilled(holder.job, now, free, claims)
            if mapping is None:
                claims.by_server.update(held[job_id])
                continue
            del self.holders[job_id]
            yield holder.job, mapping
        yield from self._heads(now, free, claims)
        yield from self._backfill(now, free, claims)

    def _heads(
        self, now: float, free: FreeGPUs, claims: Claims
    ) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        """Start the best-keyed waiting jobs while they spare every claim; the first
        that cannot becomes a holder, and the next one is tried, while holders are
        fewer than :attr:`reservations` and unclaimed servers can hold it."""
        while free.total > 0 and (head := self.waiting.head()) is not None:
            job = head[2]
            mapping = self._backfilled(job, now, free, claims)
            if mapping is None:
                needs = self._claimable(job, now, free, claims)
                if needs is None or len(self.holders) >= self.reservations:
                    return
                self.holders[job.id] = Holder(job, needs)
                claims.by_server.update(self.claims_of(self.holders[job.id], now, free))
            self.waiting.remove(head)
            if mapping is not None:
                yield job, mapping

    def _backfill(
        self, now: float, free: FreeGPUs, claims: Claims
    ) -> Iterator[tuple[JobView, tuple[int, ...]]]:
        """Start the best-keyed waiting jobs that spare every claim; a width whose best
        job cannot start is passed over for the rest of this event."""
        passed: set[int] = set()
        unplaced = []
        while (entry := self.waiting.pop_entry(free.total, lambda g: g not in passed)) is not None:
            mapping = self._backfilled(entry[2], now, free, claims)
            if mapping is None:
                passed.add(entry[2].gpus)
                unplaced.append(entry)
                continue
            yield entry[2], mapping
        for entry in unplaced:
            self.waiting.restore(entry)

    def _backfilled(
        self, job: JobView, now: float, free: FreeGPUs, claims: Claims
    ) -> tuple[int, ...] | None:
        """A mapping for ``job`` now that spares every claim (the slack it takes spent),
        or ``None``."""
        mapping = self._place(job, free)
        if mapping is None:
            return None
        end = now + self._duration(job, mapping)
        if not claims.spares(mapping, end):
            mapping = self._place(job, claims.offer(free))
            if mapping is None:
                return None
            end = now + self._duration(job, mapping)
        claims.spend(mapping, end)
        return mapping

    def _place(self, job: JobView, free: FreeGPUs | list[int]) -> tuple[int, ...] | None:
        """The mapper's mapping on ``free``, refused (``None``) for a job that fits one
        server when no server has room for all of it."""
        if isinstance(free, FreeGPUs):
            enough = job.gpus <= free.total
            one_server = free.best_fit(job.gpus) is not None
        else:
            enough, one_server = job.gpus <= sum(free), job.gpus <= max(free)
        if not enough or (job.gpus <= self.cluster.max_gpus_per_server and not one_server):
            return None
        return self.mapper(job, self.cluster, free)

    def _duration(self, job: JobView, mapping: tuple[int, ...]) -> float:
        """Predicted seconds of ``job`` on ``mapping``."""
        return self.predicted[job.id] * alpha(job, self.cluster, mapping)

    def _ends(self, server: int) -> list[tuple[float, int]]:
        """The predicted end and GPUs on ``server`` of each job running there, by end."""
        running = self._running
        return sorted(
            (running[job_id].start + running[job_id].predicted * running[job_id].alpha, count)
            for job_id, count in self._on_server[server].items()
        )

    def _free_by(self, gpus: int, now: float, free: FreeGPUs, server: int) -> tuple[float, int]:
        """When ``server`` first has ``gpus`` GPUs free, and how many it has then
        (remembered until a job starts or ends there, or its predicted end grows)."""
        found = self._emptying[server].get(gpus)
        if found is None or found[0] < now:
            found = _free_by(gpus, now, free[server], self._ends(server))
            self._emptying[server][gpus] = found
        return found

    def claims_of(self, holder: Holder, now: float, free: FreeGPUs) -> dict[int, Claim]:
        """The holder's claims now: the earliest instant all its servers have the GPUs it
        needs, and each server's slack then."""
        reached = {h: self._free_by(need, now, free, h) for h, need in holder.needs.items()}
        when = max(time for time, _ in reached.values())
        claims = {}
        for server, (time, held) in reached.items():
            if time < when:
                held = free[server] + sum(n for end, n in self._ends(server) if end <= when)
            claims[server] = Claim(when, held - holder.needs[server])
        return claims

    def _claimable(
        self, job: JobView, now: float, free: FreeGPUs, claims: Claims
    ) -> dict[int, int] | None:
        """The GPUs per server a job that cannot start now would claim, on servers nobody
        claimed: the server that holds it earliest (ties: the lower index); for a job
        wider than every server, the servers that empty earliest (all of each, the rest
        on the last) until they hold it. ``None`` if the unclaimed servers cannot."""
        sizes = self.cluster.gpus_per_server
        unclaimed = [h for h in range(len(sizes)) if h not in claims.by_server]
        if job.gpus <= self.cluster.max_gpus_per_server:
            times = [
                (self._free_by(job.gpus, now, free, h)[0], h)
                for h in unclaimed
                if sizes[h] >= job.gpus
            ]
            return {min(times)[1]: job.gpus} if times else None
        emptied = sorted((self._free_by(sizes[h], now, free, h)[0], h) for h in unclaimed)
        needs: dict[int, int] = {}
        left = job.gpus
        for _, server in emptied:
            needs[server] = min(left, sizes[server])
            left -= needs[server]
            if left == 0:
                return needs
        return None


def _free_by(
    gpus: int, now: float, free_now: int, ends: Sequence[tuple[float, int]]
) -> tuple[float, int]:
    """The earliest instant a server has ``gpus`` GPUs free, given ``free_now`` and the
    ``(end, GPUs)`` of each job running on it in order of end, and its free GPUs then
    (every job ending by that instant has left)."""
    held, when = free_now, now
    for end, count in ends:
        if held >= gpus and end > when:
            break
        held += count
        when = max(when, end)
    return when, held
