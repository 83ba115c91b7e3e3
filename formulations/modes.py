"""Turning problems A and A1 into slotted multi-mode problems.

Problem **A**: a mode of job ``i`` is a vector of GPU counts per server
``(n_1, .., n_H)`` with ``sum_h n_h = g_i`` and ``n_h <= G_h``. Its duration
is ``K_i * alpha_i(x*)`` for the best mapping ``x*`` with those counts: the
least cut over partitions of the job graph into parts of exactly those
sizes. Because servers differ only in size (and GPU type) and ``alpha``
depends only on which nodes share a server (and the types used), that cut
depends only on the multiset of (count, type) pairs, so it is computed once
per multiset (on several types the cut is weighted: an edge inside server
``h`` counts ``B_inter / B_intra(t(h))``): by the exact branch and bound
of :func:`ddlsched.core.alpha.extreme_cut`, or, if that exceeds its budget, by
the mapping MILP with fixed counts (:mod:`ddlsched.formulations.mapping`).

Problem **A1**: one resource, the pool of ``M`` GPUs, and one mode per job
using ``g_i`` of it for ``K_i * alpha_i^max``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence

from ddlsched.formulations.grid import on_grid, release_slots, slots_needed
from ddlsched.formulations.mapping import solve_mapping
from ddlsched.formulations.slotted import SlottedJob, SlottedMode, SlottedProblem

from ddlsched.core.alpha import all_cut_alpha, alpha, extreme_cut
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus


def count_vectors(gpus: int, capacities: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every ``(n_1, .., n_H)`` with ``sum n_h = gpus`` and ``0 <= n_h <= cap_h``, in
    decreasing lexicographic order (the fullest first servers first).

    Depth-first over the servers with an explicit stack, so that any number of servers
    works (one recursion level per server stopped at a thousand servers)."""
    servers = len(capacities)
    room_after = [0] * (servers + 1)  # room_after[h]: GPUs servers h.. can still take
    for h in range(servers - 1, -1, -1):
        room_after[h] = room_after[h + 1] + capacities[h]
    if gpus > room_after[0]:
        return
    counts = [0] * servers
    # next_count[h]: the next count to try on server h, -1 once every count was tried
    next_count = [0] * (servers + 1)
    h, left = 0, gpus
    next_count[0] = min(capacities[0], gpus) if servers else 0
    while h >= 0:
        if h == servers:
            if left == 0:
                yield tuple(counts)
            h -= 1
            if h >= 0:
                left += counts[h]
            continue
        n = next_count[h]
        if n < 0 or left - n > room_after[h + 1]:  # exhausted, or the rest cannot fit
            h -= 1
            if h >= 0:
                left += counts[h]
            continue
        counts[h], next_count[h] = n, n - 1
        left -= n
        h += 1
        if h < servers:
            next_count[h] = min(capacities[h], left)


def count_vectors_total(gpus: int, capacities: Sequence[int]) -> int:
    """How many vectors :func:`count_vectors` yields, counted without listing them.

    A dynamic program over servers (``O(H * gpus)`` additions): the size
    check of the exact models runs it before any mode is enumerated.
    """
    ways = [1] + [0] * gpus  # ways[k]: vectors of the servers so far summing to k
    for cap in capacities:
        prefix = [0] * (gpus + 2)
        for k in range(gpus + 1):
            prefix[k + 1] = prefix[k] + ways[k]
        ways = [prefix[k + 1] - prefix[max(0, k - cap)] for k in range(gpus + 1)]
    return ways[gpus]


MAPPING_SHARE = 0.5
"""Most of the time left that one mapping MILP of :func:`problem_a` may take, so that a
slow mode leaves time to build and solve the model (a 64-GPU job on 16 x 4 GPUs took its
whole limit, 15 s of 15, for its one mode)."""


MAX_MAPPING_CELLS = 200_000
"""Most (node or edge) x server pairs of a mapping MILP :func:`best_mapping_for_counts`
builds (its building is not interrupted by a deadline): a 500-GPU job on 1,000 servers
(about a million pairs) kept ``solve --time-limit 10`` building for minutes. Past it the
nodes fill the servers in order, unproven, as when the time is up."""


def best_mapping_for_counts(
    job: Job,
    cluster: Cluster,
    counts: Sequence[int],
    options: ExactParams,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[tuple[int, ...], bool]:
    """A mapping with exactly ``counts[h]`` nodes on server ``h`` and the least cut.

    Returns the mapping and whether it is *proven* to have the least cut: the
    branch and bound finished, or the mapping MILP was solved to optimality.
    A mapping MILP stopped by its time limit returns its best mapping, which
    may be slower than the best: a duration built on it is not exact. With a
    ``deadline`` (a ``clock()`` value) the branch and bound stops there, the
    MILP gets at most :data:`MAPPING_SHARE` of the time left, and none once it
    has passed or its model would exceed :data:`MAX_MAPPING_CELLS` (the nodes then fill
    the servers in order, unproven).
    """
    used = sorted((h for h, n in enumerate(counts) if n > 0), key=lambda h: -counts[h])
    keep = None
    if cluster.heterogeneous:  # an edge inside server h costs q / B_intra(t(h))
        keep = [cluster.bandwidth_inter / float(cluster.intra_by_server[h]) for h in used]
    give_up = None if deadline is None else (lambda: clock() >= deadline)
    found = extreme_cut(job, [counts[h] for h in used], maximize=False, keep=keep, give_up=give_up)
    if found is not None:
        return tuple(used[part] for part in found[1]), True
    if (job.gpus + len(job.edges)) * cluster.num_servers > MAX_MAPPING_CELLS:
        return _in_order(counts), False
    if deadline is not None:
        left = deadline - clock()
        if left <= 0:
            return _in_order(counts), False
        limit = min(options.time_limit or math.inf, MAPPING_SHARE * left)
        options = options.replace(time_limit=limit)
        stop_at = time.monotonic() + limit
    else:
        stop_at = None
    result = solve_mapping(job, cluster, counts=counts, options=options, stop_at=stop_at)
    if result.mapping is None and result.status is SolveStatus.TIME_LIMIT:
        # Stopped before any mapping (a 64-node graph under a short limit): the
        # servers filled in order are a mapping with these counts, unproven.
        return _in_order(counts), False
    if result.mapping is None:
        raise RuntimeError(
            f"no mapping found for job {job.id!r} with counts {list(counts)} "
            f"({result.status.value})"
        )
    return result.mapping, result.status is SolveStatus.OPTIMAL


def _release_slot(job: Job, slot: float) -> int:
    return release_slots(job.release, slot)


def problem_a(
    instance: Instance,
    options: ExactParams | None = None,
    *,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SlottedProblem:
    """The slotted multi-mode form of problem A.

    Enumeration stops at ``deadline`` (a ``clock()`` value) or after
    ``options.mode_limit`` modes, whichever comes first; each mapping MILP gets
    at most :data:`MAPPING_SHARE` of the time left. Every job still gets at
    least one mode (the first vector of counts, its nodes filled in order: a
    feasible, maybe slow, duration, computed without any search), and the jobs
    whose modes were cut short are listed in ``unenumerated`` (the result is
    then only a feasible schedule of the instance, never proven optimal).
    """
    options = options or ExactParams()
    cluster, slot = instance.cluster, instance.slot
    exact = True
    jobs = []
    unproven: list[str] = []
    unenumerated: list[str] = []
    budget = options.mode_limit
    stopped = False
    # Best mappings per (job graph, shape): identical jobs share them, and every vector of
    # counts of one shape shares one search and one alpha (a relabelling of identical
    # servers changes neither the cut nor the types used).
    cache: dict[tuple[object, ...], tuple[tuple[int, ...], bool, float]] = {}
    for job in instance.jobs:
        modes: list[SlottedMode] = []
        graph = _graph_key(job)
        for counts in count_vectors(job.gpus, cluster.gpus_per_server):
            stopped = stopped or budget == 0 or (deadline is not None and clock() >= deadline)
            if stopped:
                if not modes:
                    modes.append(_mode(job, cluster, counts, _in_order(counts), slot))
                    unproven.append(job.id)
                unenumerated.append(job.id)
                break
            if budget is not None:
                budget -= 1
            used = _used_servers(counts, cluster)
            key = (graph, tuple((counts[h], cluster.type_of(h)) for h in used))
            if key not in cache:
                found, proven = best_mapping_for_counts(
                    job, cluster, counts, options, deadline, clock
                )
                cache[key] = (found, proven, alpha(job, cluster, found))
            best, proven, per_iteration = cache[key]
            if not proven and job.id not in unproven:
                unproven.append(job.id)
            mapping = _relabel(best, used, cluster)
            duration = job.iterations * per_iteration
            modes.append(
                SlottedMode(tuple(counts), slots_needed(duration, slot), duration, mapping)
            )
        exact &= all(on_grid(mode.duration, slot) for mode in modes)
        exact &= on_grid(job.release, slot)
        jobs.append(SlottedJob(job.id, job.weight, _release_slot(job, slot), tuple(modes)))
    classes: dict[tuple[int, str], list[int]] = {}
    for h, g in enumerate(cluster.gpus_per_server):
        classes.setdefault((g, cluster.type_of(h)), []).append(h)
    return SlottedProblem(
        tuple(jobs),
        cluster.gpus_per_server,
        slot,
        exact,
        tuple(tuple(group) for group in classes.values()),
        tuple(unproven),
        tuple(unenumerated),
    )


def _graph_key(job: Job) -> tuple[object, ...]:
    """What a job's mappings and ``alpha`` depend on: its GPUs, edges and compute times
    (not its id, release, weight or iterations)."""
    return (job.gpus, job.edges, job.compute_time, job.compute_times)


def _in_order(counts: Sequence[int]) -> tuple[int, ...]:
    """The mapping filling the servers in order: node ``k`` to the server its rank falls on."""
    return tuple(h for h, n in enumerate(counts) for _ in range(n))


def _mode(
    job: Job, cluster: Cluster, counts: Sequence[int], mapping: tuple[int, ...], slot: float
) -> SlottedMode:
    """The mode of ``job`` with these GPU counts, timed under ``mapping``."""
    duration = job.iterations * alpha(job, cluster, mapping)
    return SlottedMode(tuple(counts), slots_needed(duration, slot), duration, mapping)


def _used_servers(counts: Sequence[int], cluster: Cluster) -> list[int]:
    """The servers a vector of counts uses, most nodes first, then by type and index: with
    their counts and types, what a mode's best mapping depends on."""
    kind = cluster.type_of
    return sorted(
        (h for h, n in enumerate(counts) if n > 0), key=lambda h: (-counts[h], kind(h), h)
    )


def _relabel(mapping: tuple[int, ...], used: Sequence[int], cluster: Cluster) -> tuple[int, ...]:
    """Move a mapping's parts onto the servers ``used`` (:func:`_used_servers` of counts of
    the same shape): parts and servers both largest first, then by type, so that equal
    shapes pair up."""
    sizes: dict[int, int] = {}
    for server in mapping:
        sizes[server] = sizes.get(server, 0) + 1
    kind = cluster.type_of
    parts = sorted(sizes, key=lambda s: (-sizes[s], kind(s), s))
    relabel = dict(zip(parts, used, strict=True))
    return tuple(relabel[server] for server in mapping)


def problem_a1(instance: Instance) -> SlottedProblem:
    """The slotted form of problem A1: rigid jobs of ``K_i alpha_max`` on ``M`` GPUs."""
    cluster, slot = instance.cluster, instance.slot
    exact = True
    jobs = []
    for job in instance.jobs:
        duration = job.iterations * all_cut_alpha(job, cluster)
        exact &= on_grid(duration, slot) and on_grid(job.release, slot)
        mode = SlottedMode((job.gpus,), slots_needed(duration, slot), duration)
        jobs.append(SlottedJob(job.id, job.weight, _release_slot(job, slot), (mode,)))
    return SlottedProblem(tuple(jobs), (cluster.num_gpus,), slot, exact)
