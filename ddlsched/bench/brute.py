"""An optimum of problem A by enumeration, for the library's small tier.

Small on purpose and sharing no code with the solvers or the bounds, so that a proven
optimum of tier S is checked by an argument of its own. Every job order and every vector
of GPUs per server ("mode") of every job runs through the serial schedule generation
scheme in continuous time: each job, in order, starts at the earliest instant at or after
its release where its GPUs are free on each server for its whole duration, given the jobs
placed before it. The serial scheme generates exactly the *active* schedules (no job can
start earlier without delaying another), and for a regular objective such as ``sum_i w_i
C_i`` some active schedule is optimal (Kolisch, *Serial and parallel resource-constrained
project scheduling methods revisited: theory and computation*, EJOR 90(2), 1996; Sprecher,
Kolisch, Drexl, *Semi-active, active, and non-delay schedules for the resource-constrained
project scheduling problem*, EJOR 80(1), 1995).

A mode's duration is ``K_i`` times the fastest ``alpha_i(x)`` over every node-to-server map
``x`` with those counts (a faster map with the same GPUs per server dominates), computed
edge by edge from the instance: the slowest used GPU type's compute time plus each edge's
traffic at its server's intra-server bandwidth or at ``B_inter``.

The enumeration is a depth-first search over order prefixes that discards a prefix once a
lower bound on every completion of it reaches the best objective known: the prefix's own
``sum w C`` plus, for each job still to place, its weight times the earliest it could
finish in its fastest-ending mode given the jobs already placed (jobs placed later only
take GPUs away, so no completion of the prefix finishes it earlier). Jobs that are
interchangeable (same release, weight, GPUs and modes) are placed in one fixed order, and
of two servers of one type and size that are loaded alike so far, the first takes at least
as many of the next job's GPUs as the second (mirror images are not searched twice). A
partial schedule reached again by another order of the same placements (jobs that do not
meet commute) is not searched again.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

from ddlsched.core.model import Cluster, Instance, Job

MAX_MAPS = 200_000
"""Most node-to-server maps enumerated per job (``servers ** gpus``)."""
MAX_NODES = 300_000
"""Most search nodes before :func:`brute_force_optimum` gives up by default (a deterministic
limit: about half a minute on a laptop; tier S holds only instances that need fewer)."""
TOLERANCE = 1e-9
"""Relative slack on times and objectives (floating-point sums of durations)."""

Usage = tuple[int, ...]


@dataclass(frozen=True)
class BruteForceAnswer:
    """The enumeration's answer.

    Attributes
    ----------
    optimum
        The least ``sum_i w_i C_i``; with a ``known`` objective given, that objective
        itself when no schedule is better (``known`` is then proven optimal).
    nodes
        Search nodes visited (placements tried).
    """

    optimum: float
    nodes: int


class TooBigError(ValueError):
    """The enumeration would exceed its limits (:data:`MAX_MAPS`, :data:`MAX_NODES`)."""


def alpha_of(job: Job, cluster: Cluster, mapping: tuple[int, ...]) -> float:
    """``alpha_i(x)``: seconds per iteration of ``job`` with node ``u`` on server
    ``mapping[u]``."""
    kinds = cluster.server_types or ("",) * cluster.num_servers
    own = dict(job.compute_times)
    compute = max(own.get(kinds[h], job.compute_time) for h in set(mapping))
    intra = dict(cluster.type_bandwidth)
    communication = 0.0
    for u, v, traffic in job.edges:
        if mapping[u] == mapping[v]:
            communication += traffic / intra.get(kinds[mapping[u]], cluster.bandwidth_intra)
        else:
            communication += traffic / cluster.bandwidth_inter
    return compute + communication


def modes(job: Job, cluster: Cluster) -> list[tuple[Usage, float]]:
    """Every vector of GPUs per server that fits the empty cluster, with the least duration
    ``K_i * alpha_i(x)`` over the maps ``x`` having those counts, sorted by vector.

    Raises
    ------
    TooBigError
        When there are more than :data:`MAX_MAPS` maps.
    """
    servers = cluster.num_servers
    if servers**job.gpus > MAX_MAPS:
        raise TooBigError(
            f"job {job.id!r}: {servers}^{job.gpus} node-to-server maps, more than {MAX_MAPS:,}"
        )
    fastest: dict[Usage, float] = {}
    for mapping in itertools.product(range(servers), repeat=job.gpus):
        counts = tuple(mapping.count(h) for h in range(servers))
        if any(c > g for c, g in zip(counts, cluster.gpus_per_server, strict=True)):
            continue
        duration = job.iterations * alpha_of(job, cluster, mapping)
        fastest[counts] = min(fastest.get(counts, math.inf), duration)
    return sorted(fastest.items())


Profile = tuple[tuple[float, Usage], ...]
"""Free GPUs per server over time: ``(time, free)`` pairs in time order, each ``free`` from
its time until the next pair's; the last pair's lasts for ever (every GPU free)."""

Placement = tuple[int, float, Usage]
"""A placed job: its index, start and GPUs per server."""


def earliest_start(profile: Profile, release: float, usage: Usage, duration: float) -> float:
    """The earliest start at or after ``release`` where ``usage`` is free for ``duration``.
    A segment short of GPUs rules out every start before its end, so the next start tried
    is that end (the last segment has every GPU free, so the search ends)."""
    k = max(j for j, (time, _) in enumerate(profile) if time <= release)
    start = release
    while True:
        j = k
        while j < len(profile) and (j == k or profile[j][0] < start + duration):
            if any(f < u for f, u in zip(profile[j][1], usage, strict=True)):
                break
            j += 1
        else:
            return start
        k = j + 1
        start = profile[k][0]


def with_job(profile: Profile, start: float, end: float, usage: Usage) -> Profile:
    """``profile`` with ``usage`` taken over ``[start, end)``."""
    changed = []
    k = 0
    free = profile[0][1]
    for time in sorted({time for time, _ in profile} | {start, end}):
        while k < len(profile) and profile[k][0] <= time:
            free = profile[k][1]
            k += 1
        if start <= time < end:
            changed.append((time, tuple(f - u for f, u in zip(free, usage, strict=True))))
        else:
            changed.append((time, free))
    return tuple(changed)


class _Search:
    """The depth-first search of the module docstring on one instance."""

    def __init__(self, instance: Instance, known: float, max_nodes: int) -> None:
        self.max_nodes = max_nodes
        self.jobs = instance.jobs
        cluster = instance.cluster
        self.modes = [modes(job, cluster) for job in instance.jobs]
        self.before = _interchangeable_predecessors(self.jobs, self.modes)
        self.best = known
        self.nodes = 0
        self.seen: set[frozenset[Placement]] = set()
        kinds = cluster.server_types or ("",) * cluster.num_servers
        sizes = cluster.gpus_per_server
        self.alike = [
            (h, k)
            for h, k in itertools.combinations(range(cluster.num_servers), 2)
            if (sizes[h], kinds[h]) == (sizes[k], kinds[k])
        ]

    def mirrored_pairs(self, profile: Profile) -> list[tuple[int, int]]:
        """Pairs of servers ``h < k`` of one size and type loaded alike so far: swapping
        them in every later placement maps each completion to one of equal cost, so only
        modes with at least as many GPUs on ``h`` as on ``k`` are tried."""
        return [(h, k) for h, k in self.alike if all(f[h] == f[k] for _, f in profile)]

    def floor(self, profile: Profile, left: frozenset[int]) -> float:
        """A lower bound on the cost still to come: each job of ``left`` at the earliest it
        can finish, any mode, beside the jobs placed (later ones only take GPUs away)."""
        return math.fsum(
            self.jobs[i].weight
            * min(
                earliest_start(profile, self.jobs[i].release, usage, duration) + duration
                for usage, duration in self.modes[i]
            )
            for i in left
        )

    def run(
        self, profile: Profile, placed: frozenset[Placement], left: frozenset[int], cost: float
    ) -> None:
        """Place every job of ``left`` in every order and mode after the ``placed`` ones."""
        if not left:
            self.best = min(self.best, cost)
            return
        if placed in self.seen or cost + self.floor(profile, left) >= self.best * (1 - TOLERANCE):
            return
        self.seen.add(placed)
        mirrored = self.mirrored_pairs(profile)
        for i in sorted(left):
            if self.before[i] in left:
                continue
            job = self.jobs[i]
            for usage, duration in self.modes[i]:
                if any(usage[h] < usage[k] for h, k in mirrored):
                    continue
                self.nodes += 1
                if self.nodes > self.max_nodes:
                    raise TooBigError(f"more than {self.max_nodes:,} search nodes")
                start = earliest_start(profile, job.release, usage, duration)
                end = start + duration
                self.run(
                    with_job(profile, start, end, usage),
                    placed | {(i, start, usage)},
                    left - {i},
                    cost + job.weight * end,
                )


def _interchangeable_predecessors(
    jobs: tuple[Job, ...], job_modes: list[list[tuple[Usage, float]]]
) -> list[int]:
    """For each job, the previous job it is interchangeable with (-1: none): such a pair
    is only placed in index order, which loses no objective value."""
    before = [-1] * len(jobs)
    last: dict[tuple[object, ...], int] = {}
    for i, job in enumerate(jobs):
        key = (job.release, job.weight, job.gpus, tuple(job_modes[i]))
        before[i] = last.get(key, -1)
        last[key] = i
    return before


def brute_force_optimum(
    instance: Instance,
    known: float = math.inf,
    progress: Callable[[str], None] | None = None,
    max_nodes: int = MAX_NODES,
) -> BruteForceAnswer:
    """The optimal ``sum_i w_i C_i`` of problem A on ``instance``, by enumeration.

    Parameters
    ----------
    instance
        A small instance (tier S).
    known
        The objective of a feasible schedule, if one is known: branches that cannot beat
        it are cut, and it is the answer when none does (then it is proven optimal).
    progress
        Called with one line before the search (its size).
    max_nodes
        Most placements tried before giving up.

    Raises
    ------
    TooBigError
        When the instance is beyond the enumeration's limits.
    """
    ceiling = known * (1 + TOLERANCE) if math.isfinite(known) else known
    search = _Search(instance, ceiling, max_nodes)
    if progress is not None:
        count = sum(len(m) for m in search.modes)
        progress(f"brute force: {instance.num_jobs} jobs, {count} modes in all")
    empty: Profile = ((0.0, instance.cluster.gpus_per_server),)
    search.run(empty, frozenset(), frozenset(range(instance.num_jobs)), 0.0)
    optimum = min(search.best, known)
    return BruteForceAnswer(optimum, search.nodes)
