"""The quantities the theory needs, recomputed independently of the methods.

Nothing here imports ``ddlsched.core.alpha``, ``formulations`` or ``algorithms``:
per-iteration times, ``alpha_min`` (by exhaustive enumeration), ``alpha_max``
(the all-cut value, the model's default) and ``rho`` are computed again from the
instance, so that a bug in the methods' own computation cannot hide itself.

``alpha_min`` is exact when the job fits one server (no cut needed) or when
all ``H^g`` node-to-server maps number at most :data:`ENUMERATION_LIMIT`;
beyond that it is the lower bound ``ceil(g / G_max) * lambda / 2`` with
``lambda`` the graph's global minimum cut (every part of a partition into
``k`` parts has a boundary of at least ``lambda``, and the cut counts each
boundary edge twice), and says so. On a cluster of several GPU types every
map is timed in full (slowest used type plus each edge at its bandwidth).

**GPU types and the theory.** The derivation below uses only two facts of
``alpha``: ``alpha_i^min <= alpha_i(x) <= alpha_i^max`` for every feasible
mapping ``x``. With types, ``alpha_i^max = max_t c_i(t) + Q_i / B_inter``
bounds every mapping (no mapping computes slower than the slowest type or
communicates slower than all-cut, since ``B_inter <= B_intra(t)``), and
``alpha_i^min`` is by definition the least over mappings. So Lemma 1 and
Theorem 1 hold as stated, with ``rho`` now carrying the spread of compute
times over types as well as placement; the claims check them by computation
on mixed clusters too.

**Theorem 1 constant** (our provable form, claim 5: :ref:`model-theorem1`). For guided A-SRPT
with exact iteration counts, unit weights:

    sum_i C_i <= (2 + M / (M - g_max + 1)) * rho * OPT(A).

Derivation. Let ``C^V_i`` be job ``i``'s completion on the virtual machine
(preemptive SRPT on ``v_j = g_j K_j alpha_j^max / M``). Job ``i`` joins the
real queue at ``C^V_i`` and jobs start strictly in ``C^V`` order. (a) Every
instant ``t >= C^V_i`` at which ``i`` has not started is one where the head
of the queue (``i`` or a job ahead of it) does not fit, so more than ``M -
g_max`` GPUs, i.e. at least ``M - g_max + 1``, are busy, all with jobs that
started before ``i`` and hence have ``C^V_j <= C^V_i``. (b) Those jobs'
total GPU-time is ``sum g_j K_j alpha_j(x_j) <= sum g_j K_j alpha_j^max =
M sum v_j <= M C^V_i``, since the virtual machine completed all of them by
``C^V_i``. So the waiting time after ``C^V_i`` is at most ``M C^V_i / (M -
g_max + 1)``, and ``S_i <= C^V_i (1 + M / (M - g_max + 1))``. (c) ``C_i = S_i
+ K_i alpha_i(x_i) <= S_i + K_i alpha_i^max``. (d) ``sum C^V_i = SRPT(A2) =
OPT(A2) <= OPT(A1) <= rho OPT(A)`` (claims 1-3) and ``sum K_i alpha_i^max
<= rho sum K_i alpha_i^min <= rho OPT(A)`` (every job needs at least
``K_i alpha_i^min`` after ``r_i >= 0``). Summing (b)-(c) and using (d) gives
the bound. Assumptions used: unit weights (SRPT's optimality), exact
iteration counts (sizes ``v_i`` true), no preemption in the real cluster,
strict ``C^V`` order with no backfilling, any mapping with ``alpha <=
alpha^max``, and ``alpha^max`` an upper bound on every mapping's ``alpha``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ddlsched.core.model import Cluster, Instance, Job

ENUMERATION_LIMIT = 1 << 20
"""Most node-to-server maps enumerated for an exact ``alpha_min``."""


def per_iteration_time(job: Job, cluster: Cluster, mapping: Sequence[int]) -> float:
    """``alpha_i(x)`` computed edge by edge: the slowest used GPU type's compute
    time plus each edge at its server's ``B_intra`` or at ``B_inter``."""
    compute = max(job.compute_on(cluster.type_of(h)) for h in set(mapping))
    return compute + math.fsum(
        q
        / (
            cluster.intra_of(cluster.type_of(mapping[u]))
            if mapping[u] == mapping[v]
            else cluster.bandwidth_inter
        )
        for u, v, q in job.edges
    )


def all_cut_time(job: Job, cluster: Cluster) -> float:
    """``alpha_i^max`` by the model's default: the slowest type, every edge at ``B_inter``."""
    compute = max(job.compute_on(t) for t in cluster.types)
    return compute + math.fsum(q for _, _, q in job.edges) / cluster.bandwidth_inter


@dataclass(frozen=True)
class Checked:
    """A value with whether it is exact."""

    value: float
    exact: bool


def fastest_time(job: Job, cluster: Cluster) -> Checked:
    """``alpha_i^min`` by enumeration (exact) or the min-cut lower bound."""
    if cluster.heterogeneous:
        return _fastest_typed(job, cluster)
    # One type, maybe named, with its own bandwidth and the job's compute time there.
    (only,) = cluster.types
    intra = cluster.intra_of(only)
    total = math.fsum(q for _, _, q in job.edges)
    base = job.compute_on(only) + total / intra
    if job.gpus <= max(cluster.gpus_per_server) or not job.edges:
        return Checked(base, True)
    penalty = 1 / cluster.bandwidth_inter - 1 / intra
    servers = len(cluster.gpus_per_server)
    if servers**job.gpus <= ENUMERATION_LIMIT:
        return Checked(base + penalty * _least_cut(job, cluster), True)
    graph = nx.Graph()
    graph.add_nodes_from(range(job.gpus))
    graph.add_weighted_edges_from(job.edges)
    lam = nx.stoer_wagner(graph)[0] if nx.is_connected(graph) else 0.0
    parts = math.ceil(job.gpus / max(cluster.gpus_per_server))
    return Checked(base + penalty * parts * lam / 2, False)


def _fastest_typed(job: Job, cluster: Cluster) -> Checked:
    """``alpha_i^min`` on a cluster of several GPU types: every map enumerated
    and timed in full, or ``min_t c_i(t)`` plus the min-cut communication bound."""
    servers = len(cluster.gpus_per_server)
    if servers**job.gpus <= ENUMERATION_LIMIT:
        return Checked(min(_mapped_times(job, cluster)), True)
    total = math.fsum(q for _, _, q in job.edges)
    fastest = max(cluster.intra_of(t) for t in cluster.types)
    bound = min(job.compute_on(t) for t in cluster.types) + total / fastest
    if job.gpus <= max(cluster.gpus_per_server) or not job.edges:
        return Checked(bound, False)
    graph = nx.Graph()
    graph.add_nodes_from(range(job.gpus))
    graph.add_weighted_edges_from(job.edges)
    lam = nx.stoer_wagner(graph)[0] if nx.is_connected(graph) else 0.0
    parts = math.ceil(job.gpus / max(cluster.gpus_per_server))
    penalty = 1 / cluster.bandwidth_inter - 1 / fastest
    return Checked(bound + penalty * parts * lam / 2, False)


def _fitting_maps(job: Job, cluster: Cluster) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every node-to-server map within the servers' sizes, in chunks: ``(digits, counts)``,
    the server of each node and the nodes on each server, one row per map."""
    servers = len(cluster.gpus_per_server)
    capacity = np.asarray(cluster.gpus_per_server)
    powers = servers ** np.arange(job.gpus)
    chunk = 1 << 16
    for begin in range(0, servers**job.gpus, chunk):
        codes = np.arange(begin, min(begin + chunk, servers**job.gpus))
        digits = (codes[:, None] // powers[None, :]) % servers  # mapping per row
        counts = np.stack([(digits == h).sum(axis=1) for h in range(servers)], axis=1)
        fits = np.all(counts <= capacity[None, :], axis=1)
        if fits.any():
            yield digits[fits], counts[fits]


def _edges(job: Job) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u = np.array([e[0] for e in job.edges], dtype=np.int64)
    v = np.array([e[1] for e in job.edges], dtype=np.int64)
    q = np.array([e[2] for e in job.edges], dtype=float)
    return u, v, q


def _mapped_times(job: Job, cluster: Cluster) -> list[float]:
    """``alpha`` of every node-to-server map that fits."""
    servers = range(len(cluster.gpus_per_server))
    compute = np.array([job.compute_on(cluster.type_of(h)) for h in servers])
    inverse = np.array([1 / cluster.intra_of(cluster.type_of(h)) for h in servers])
    u, v, q = _edges(job)
    times: list[float] = []
    for digits, counts in _fitting_maps(job, cluster):
        slowest = np.where(counts > 0, compute[None, :], -np.inf).max(axis=1)
        same = digits[:, u] == digits[:, v]
        cost = np.where(same, inverse[digits[:, u]], 1 / cluster.bandwidth_inter) * q[None, :]
        times.extend((slowest + cost.sum(axis=1)).tolist())
    return times


def _least_cut(job: Job, cluster: Cluster) -> float:
    u, v, q = _edges(job)
    best = math.inf
    for digits, _ in _fitting_maps(job, cluster):
        cut = ((digits[:, u] != digits[:, v]) * q[None, :]).sum(axis=1)
        best = min(best, float(cut.min()))
    return best


@dataclass(frozen=True)
class RhoCheck:
    """``rho`` with its per-job parts, recomputed independently."""

    rho: float
    exact: bool
    alpha_min: tuple[Checked, ...]
    alpha_max: tuple[float, ...]


def rho_of(instance: Instance) -> RhoCheck:
    """``rho = max_i alpha_max_i / alpha_min_i`` (upper bound when not exact)."""
    lows = tuple(fastest_time(job, instance.cluster) for job in instance.jobs)
    highs = tuple(all_cut_time(job, instance.cluster) for job in instance.jobs)
    ratios = [hi / lo.value for lo, hi in zip(lows, highs, strict=True)]
    return RhoCheck(max(ratios), all(lo.exact for lo in lows), lows, highs)


def theorem1_constant(num_gpus: int, max_job_gpus: int) -> float:
    """``2 + M / (M - g_max + 1)`` (see the module docstring)."""
    if not 1 <= max_job_gpus <= num_gpus:
        raise ValueError(f"need 1 <= g_max <= M, got g_max={max_job_gpus}, M={num_gpus}")
    return 2 + num_gpus / (num_gpus - max_job_gpus + 1)
