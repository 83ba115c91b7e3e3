"""Independent exact oracles for tiny instances, sharing no code with the MILPs.

- :func:`brute_force_a` / :func:`brute_force_a1`: every job order times every
  mode, each run through a serial schedule generation scheme in continuous
  time (each job at the earliest instant it fits, given the jobs placed
  before it). The serial scheme generates exactly the *active* schedules
  (Kolisch, *Serial and parallel resource-constrained project scheduling
  methods revisited*, EJOR 1996), and for a regular objective such as
  ``sum w_i C_i`` some active schedule is optimal. Modes of problem A are
  enumerated from **all** node-to-server maps here, keeping per vector of
  counts the fastest one (a faster mapping with the same GPUs per server
  dominates); durations are recomputed from the edges.
- :func:`brute_force_a2`: dynamic programming over unit slots of the
  preemptive single machine (which job runs in each slot), exact on
  integral data where an optimal schedule switches only at slot boundaries.
- :func:`preemptive_optimum_by_seconds`: dynamic programming over seconds of the
  preemptive model with pooled GPUs (which jobs run in each second), for edgeless
  jobs with whole-second data; an upper estimate of the preemptive optimum.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import cache

from ddlsched.core.model import Cluster, Instance, Job

Mode = tuple[tuple[int, ...], float]  # (GPUs per resource, duration)


def all_alphas(
    job: Job,
    cluster: Cluster,
    free: Sequence[int] | None = None,
    counts: Sequence[int] | None = None,
) -> list[float]:
    """``alpha`` of every node-to-server map within ``free`` (default: the empty
    cluster), optionally with exactly ``counts`` nodes per server."""
    limit = list(cluster.gpus_per_server if free is None else free)
    values = []
    for mapping in itertools.product(range(cluster.num_servers), repeat=job.gpus):
        used = [mapping.count(h) for h in range(cluster.num_servers)]
        if any(u > f for u, f in zip(used, limit, strict=True)):
            continue
        if counts is not None and used != list(counts):
            continue
        values.append(per_iteration_on(job, cluster, mapping))
    return values


def per_iteration_on(job: Job, cluster: Cluster, mapping: Sequence[int]) -> float:
    """``alpha`` of ``mapping``, edge by edge (the tests' own, independent of every method).

    With GPU types: the slowest used type's compute time (the job's own
    ``compute_times`` entry, else ``compute_time``), and an edge inside server
    ``h`` at that type's bandwidth (``type_bandwidth``, else ``bandwidth_intra``).
    """
    kinds = list(cluster.server_types) or [""] * cluster.num_servers
    times = dict(job.compute_times)
    speeds = dict(cluster.type_bandwidth)
    compute = max(times.get(kinds[h], job.compute_time) for h in set(mapping))
    return compute + sum(
        q
        / (
            speeds.get(kinds[mapping[u]], cluster.bandwidth_intra)
            if mapping[u] == mapping[v]
            else cluster.bandwidth_inter
        )
        for u, v, q in job.edges
    )


def all_cut_on(job: Job, cluster: Cluster) -> float:
    """``alpha^max``: the slowest of the cluster's types, every edge at ``B_inter``."""
    kinds = set(cluster.server_types) or {""}
    times = dict(job.compute_times)
    compute = max(times.get(kind, job.compute_time) for kind in kinds)
    return compute + sum(q for *_, q in job.edges) / cluster.bandwidth_inter


def modes_a(job: Job, instance: Instance) -> list[Mode]:
    """Per vector of counts, the fastest of all node-to-server maps."""
    servers = instance.cluster.num_servers
    best: dict[tuple[int, ...], float] = {}
    for mapping in itertools.product(range(servers), repeat=job.gpus):
        counts = tuple(mapping.count(h) for h in range(servers))
        if any(c > g for c, g in zip(counts, instance.cluster.gpus_per_server, strict=True)):
            continue
        duration = job.iterations * per_iteration_on(job, instance.cluster, mapping)
        best[counts] = min(best.get(counts, math.inf), duration)
    return sorted(best.items())


def _earliest_start(
    placed: list[tuple[float, float, tuple[int, ...]]],
    capacity: tuple[int, ...],
    release: float,
    usage: tuple[int, ...],
    duration: float,
) -> float:
    candidates = sorted({release} | {end for _, end, _ in placed if end > release})
    for start in candidates:
        finish = start + duration
        # Load changes only at starts of placed jobs; check there and at start.
        checkpoints = [start] + [s for s, _, _ in placed if start < s < finish - 1e-12]
        fits = True
        for point in checkpoints:
            load = [0] * len(capacity)
            for s, e, use in placed:
                if s <= point + 1e-12 and e > point + 1e-12:
                    for r, amount in enumerate(use):
                        load[r] += amount
            if any(load[r] + usage[r] > capacity[r] for r in range(len(capacity))):
                fits = False
                break
        if fits:
            return start
    raise AssertionError("unreachable: after every placed job the resources are free")


def _brute_force(instance: Instance, modes: list[list[Mode]], capacity: tuple[int, ...]) -> float:
    jobs = instance.jobs
    best = math.inf
    for order in itertools.permutations(range(len(jobs))):
        for choice in itertools.product(*(modes[i] for i in order)):
            placed: list[tuple[float, float, tuple[int, ...]]] = []
            total = 0.0
            for i, (usage, duration) in zip(order, choice, strict=True):
                start = _earliest_start(placed, capacity, jobs[i].release, usage, duration)
                placed.append((start, start + duration, usage))
                total += jobs[i].weight * (start + duration)
                if total >= best:
                    break
            best = min(best, total)
    return best


def brute_force_a(instance: Instance) -> float:
    """The optimal ``sum w_i C_i`` of problem A, by enumeration."""
    modes = [modes_a(job, instance) for job in instance.jobs]
    return _brute_force(instance, modes, instance.cluster.gpus_per_server)


def brute_force_a1(instance: Instance) -> float:
    """The optimal ``sum w_i C_i`` of problem A1, by enumeration."""
    modes = [
        [((job.gpus,), job.iterations * all_cut_on(job, instance.cluster))]
        for job in instance.jobs
    ]
    return _brute_force(instance, modes, (instance.cluster.num_gpus,))


def brute_force_a2(instance: Instance) -> float:
    """The optimal ``sum w_i C_i`` of problem A2, by dynamic programming over slots."""
    machine = instance.cluster.num_gpus
    delta = instance.slot / machine
    sizes = []
    releases = []
    for job in instance.jobs:
        size = job.gpus * job.iterations * all_cut_on(job, instance.cluster) / machine
        units = size / delta
        assert abs(units - round(units)) < 1e-6, "brute_force_a2 needs an integral instance"
        sizes.append(round(units))
        start = job.release / delta
        assert abs(start - round(start)) < 1e-6
        releases.append(round(start))
    weights = [job.weight for job in instance.jobs]

    @cache
    def cost(time: int, remaining: tuple[int, ...]) -> float:
        if not any(remaining):
            return 0.0
        ready = [i for i, r in enumerate(remaining) if r > 0 and releases[i] <= time]
        if not ready:
            return cost(time + 1, remaining)
        best = math.inf
        for i in ready:
            after = list(remaining)
            after[i] -= 1
            done = weights[i] * (time + 1) * delta if after[i] == 0 else 0.0
            best = min(best, done + cost(time + 1, tuple(after)))
        return best

    return cost(0, tuple(sizes))


def preemptive_optimum_by_seconds(instance: Instance) -> float:
    """The least ``sum w C`` of the preemptive model over schedules preempting only at whole
    seconds, restart cost 0, by dynamic programming over seconds. Jobs have no edges
    (their duration ``K_i`` times the compute time whatever the mapping) and whole-second
    releases and durations; GPUs are pooled, which servers do not restrict here since
    every mapping of an edgeless job is as fast. An upper estimate of the preemptive
    optimum: a bound above it is certainly above the optimum."""
    jobs = instance.jobs
    capacity = instance.cluster.num_gpus
    sizes = tuple(round(job.iterations * job.compute_time) for job in jobs)
    horizon = max(job.release for job in jobs) + sum(sizes)  # idling past it never pays

    @cache
    def best(now: int, left: tuple[int, ...]) -> float:
        if not any(left):
            return 0.0
        if now >= horizon:
            return float("inf")
        ready = [k for k, job in enumerate(jobs) if left[k] and job.release <= now]
        choices = [
            subset
            for size in range(len(ready) + 1)
            for subset in itertools.combinations(ready, size)
            if sum(jobs[k].gpus for k in subset) <= capacity
        ]
        found = float("inf")
        for subset in choices:
            after = tuple(n - (k in subset) for k, n in enumerate(left))
            done = sum(jobs[k].weight * (now + 1) for k in subset if after[k] == 0)
            found = min(found, done + best(now + 1, after))
        return found

    return best(0, sizes)
