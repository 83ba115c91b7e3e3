"""Per-iteration times ``alpha`` and the ratio ``rho`` (:ref:`model-alpha`).

For a mapping ``x`` of a job's nodes to servers,

    alpha_i(x) = c_i + sum_{e=(u,v)} q_e / (B_intra if x(u) == x(v) else B_inter)

which is ``c_i + Q_i / B_intra + cut_x * (1/B_inter - 1/B_intra)`` with
``Q_i`` the total traffic and ``cut_x`` the traffic on edges whose ends lie on
different servers. So the fastest mapping is a minimum cut of the job graph
into parts that fit the servers, the slowest a maximum one.

Every value here comes as a :class:`ExactOrBound`, which says whether it is exact
(equal to the true extremum over all mappings) or only a bound.

- ``alpha_min`` (the paper's alpha_i^min): the least ``alpha`` over all
  mappings on an **empty** cluster. Exact by branch and bound over
  capacitated partitions when the search finishes within ``search_budget``
  branch nodes; otherwise a valid lower bound (see :func:`min_cut_bound`).
- ``alpha_max`` (the paper's alpha_i^max): by the model's default *(choice)* the
  all-cut value ``c_i + Q_i / B_inter``, an upper bound on ``alpha`` over all
  mappings. It is exact when some mapping cuts every edge; that is decided by
  the same search when it fits the budget.
- ``rho = max_i alpha_max_i / alpha_min_i``: exact when every ``alpha_min``
  is; otherwise an upper bound on the true ``rho`` (a lower ``alpha_min``
  only raises it), which keeps Lemma 1 and Theorem 1 valid.

**GPU types** (the heterogeneous model, after Gavel, Narayanan et al., OSDI
2020, and Sia, Jayaram Subramanya et al., SOSP 2023). On a cluster whose
servers have types, server ``h`` of type ``t(h)`` has its own intra-server
bandwidth ``B_intra(t)`` and a job computes ``c_i(t)`` per iteration there.
Training is synchronous *(choice)*: a job whose workers span types runs at
its slowest worker's pace, so

    alpha_i(x) = max_{h used by x} c_i(t(h))
                 + sum_{e=(u,v)} q_e / (B_intra(t(x(u))) if x(u) == x(v) else B_inter)

``alpha_max`` is then ``max_t c_i(t) + Q_i / B_inter`` over the cluster's
types, and ``alpha_min`` is found per compute level: for each value ``c`` of
``c_i(t)``, the least communication time over mappings onto the servers with
``c_i(t(h)) <= c`` (a weighted cut, by the same branch and bound), plus
``c``; the least over levels is exact. On a cluster of one type everything
reduces to the formulas above, value for value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import networkx as nx
import numpy as np

from ddlsched.core.model import Cluster, Instance, Job, as_instance, slowest_alpha


class JobGraph(Protocol):
    """What ``alpha`` needs of a job: a :class:`~ddlsched.core.model.Job`, or a
    view of one without its iteration count (as online policies see it)."""

    @property
    def id(self) -> str: ...
    @property
    def gpus(self) -> int: ...
    @property
    def compute_time(self) -> float: ...
    @property
    def compute_times(self) -> tuple[tuple[str, float], ...]: ...
    def compute_on(self, gpu_type: str) -> float: ...
    @property
    def total_traffic(self) -> float: ...
    @property
    def edges(self) -> tuple[tuple[int, int, float], ...]: ...
    @property
    def edge_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


DEFAULT_SEARCH_BUDGET = 200_000
"""Branch nodes the exact partition search may visit before giving up."""


@dataclass(frozen=True)
class ExactOrBound:
    """A quantity of one job or instance, and whether it is exact or only a one-sided bound.

    Not a bound on an optimum (that is :class:`ddlsched.core.result.LowerBound`, with
    its source and runtime): this is a model parameter (``alpha_min``, ``alpha_max``,
    ``rho``) that a budgeted search either pinned down or only bracketed from one side.

    Attributes
    ----------
    value
        The number.
    exact
        True when ``value`` is the true quantity; False when it is only the
        bound the name says (lower for ``alpha_min``, upper for ``alpha_max``
        and ``rho``).
    """

    value: float
    exact: bool

    def __float__(self) -> float:
        return self.value


def cut_traffic(job: JobGraph, mapping: Sequence[int] | np.ndarray) -> float:
    """Traffic (GB per iteration) on edges whose ends are on two servers."""
    u, v, q = job.edge_arrays
    if q.size == 0:
        return 0.0
    servers = np.asarray(mapping)
    return float(q[servers[u] != servers[v]].sum())


def _only_type(cluster: Cluster) -> str:
    if cluster.heterogeneous:
        raise ValueError(
            "the cut form of alpha needs a cluster of one GPU type; "
            f"this one has {len(cluster.types)}: {', '.join(cluster.types)}"
        )
    return cluster.types[0]


def alpha_from_cut(job: JobGraph, cluster: Cluster, cut: float) -> float:
    """``alpha`` for a mapping that cuts ``cut`` GB of traffic (one GPU type only).

    Raises
    ------
    ValueError
        On a heterogeneous cluster, where the cut alone does not decide ``alpha``.
    """
    gpu_type = _only_type(cluster)
    uncut = job.total_traffic - cut
    return (
        job.compute_on(gpu_type)
        + uncut / cluster.intra_of(gpu_type)
        + cut / cluster.bandwidth_inter
    )


def alpha(job: JobGraph, cluster: Cluster, mapping: Sequence[int] | np.ndarray) -> float:
    """``alpha_i(x)``: seconds per iteration of ``job`` under ``mapping``.

    Parameters
    ----------
    job
        The job.
    cluster
        Gives the two bandwidths.
    mapping
        Server index of each node (length ``job.gpus``).

    Raises
    ------
    TypeError
        If ``job`` is not a job, ``cluster`` not a cluster, or ``mapping`` not a
        sequence of whole numbers.
    ValueError
        If ``mapping`` has the wrong length or names a server the cluster does not have.
    """
    _check_job_and_cluster(job, cluster)
    servers = np.asarray(mapping)
    if isinstance(mapping, str | bytes) or servers.ndim != 1 or servers.dtype.kind not in "iu":
        shown = repr(mapping)
        raise TypeError(
            "mapping: expected a server index (a whole number) per node, got "
            f"{shown if len(shown) <= 60 else shown[:57] + '...'}"
        )
    if len(mapping) != job.gpus:
        raise ValueError(
            f"mapping has {len(mapping)} entries, job {job.id!r} has {job.gpus} nodes"
        )
    outside = [int(h) for h in mapping if not 0 <= int(h) < cluster.num_servers]
    if outside:
        raise ValueError(
            f"mapping names server {outside[0]}; the cluster has servers 0 to "
            f"{cluster.num_servers - 1}"
        )
    if not cluster.heterogeneous:
        return alpha_from_cut(job, cluster, cut_traffic(job, servers))
    compute = max(job.compute_on(cluster.type_of(int(h))) for h in np.unique(servers))
    u, v, q = job.edge_arrays
    if q.size == 0:
        return compute
    same = servers[u] == servers[v]
    intra = cluster.intra_by_server[servers[u][same]]
    return (
        compute + float((q[same] / intra).sum()) + float(q[~same].sum()) / cluster.bandwidth_inter
    )


def _check_job_and_cluster(job: object, cluster: object) -> None:
    """Refuse arguments swapped or of the wrong kind (an instance for a job, a server count
    for a cluster) with a TypeError naming the argument, not an AttributeError."""
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster: expected a Cluster, got {type(cluster).__name__}")
    if not all(hasattr(job, name) for name in ("gpus", "edge_arrays", "compute_on")):
        raise TypeError(f"job: expected a Job (one of instance.jobs), got {type(job).__name__}")


def all_cut_alpha(job: JobGraph, cluster: Cluster) -> float:
    """``max_t c_i(t) + Q_i / B_inter``: the default ``alpha_i^max``
    (:ref:`model-alpha-max`) *(choice)*,
    over the cluster's GPU types (``c_i + Q_i / B_inter`` on one type)."""
    return slowest_alpha(job, cluster)


def virtual_size(job: JobGraph, cluster: Cluster, iterations: float) -> float:
    """``v_i = g_i * K_i * alpha_i^max / M``: the job's size on the virtual machine (problem A2).

    ``iterations`` is the true ``K_i`` or, online, a prediction ``K_hat_i``;
    ``alpha_i^max`` is the all-cut value of :func:`all_cut_alpha`.
    """
    return job.gpus * iterations * all_cut_alpha(job, cluster) / cluster.num_gpus


def alpha_max(
    job: Job,
    cluster: Cluster,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    *,
    give_up: Callable[[], bool] | None = None,
) -> ExactOrBound:
    """``alpha_i^max``: the all-cut value ``c_i + Q_i / B_inter``.

    Exact when some mapping on the empty cluster cuts every edge (decided by
    :func:`extreme_cut` when it fits ``search_budget`` and ``give_up`` does not end
    it), else an upper bound.
    Where only the value is needed, :func:`all_cut_alpha` skips that search.

    Raises
    ------
    TypeError
        If ``job`` is not a job or ``cluster`` not a cluster.
    """
    _check_job_and_cluster(job, cluster)
    value = all_cut_alpha(job, cluster)
    # Some all-cut mapping uses a slowest-type server if any all-cut mapping
    # exists: move one node onto an empty server of that type.
    if not job.edges or bool(np.all(cluster.intra_by_server == cluster.bandwidth_inter)):
        return ExactOrBound(value, exact=True)
    best = extreme_cut(
        job, cluster.gpus_per_server, maximize=True, search_budget=search_budget, give_up=give_up
    )
    exact = best is not None and math.isclose(
        best[0], job.total_traffic, rel_tol=1e-12, abs_tol=1e-12
    )
    return ExactOrBound(value, exact=exact)


def least_cut(
    job: Job,
    cluster: Cluster,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    *,
    give_up: Callable[[], bool] | None = None,
) -> ExactOrBound:
    """The least cut traffic over mappings on the empty cluster.

    Zero for a job that fits one server. Otherwise found by
    :func:`extreme_cut`; if that search exceeds ``search_budget`` branch
    nodes or ``give_up`` ends it, the lower bound of :func:`min_cut_bound`,
    flagged as such. One GPU type only (on several, :func:`alpha_min`
    searches per compute level).
    """
    _only_type(cluster)
    if job.gpus <= cluster.max_gpus_per_server or not job.edges:
        return ExactOrBound(0.0, exact=True)
    best = extreme_cut(
        job, cluster.gpus_per_server, maximize=False, search_budget=search_budget, give_up=give_up
    )
    if best is not None:
        return ExactOrBound(best[0], exact=True)
    return ExactOrBound(min_cut_bound(job, cluster.max_gpus_per_server), exact=False)


def alpha_min(
    job: Job,
    cluster: Cluster,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    *,
    give_up: Callable[[], bool] | None = None,
) -> ExactOrBound:
    """``alpha_i^min``: the least ``alpha`` over mappings on the empty cluster.

    On one GPU type, ``alpha`` of the :func:`least_cut`, exact exactly when
    that cut is. On several, the least over compute levels (module
    docstring), exact when every search it needed finished. ``give_up`` (asked
    during each search, :func:`extreme_cut`) ends a search as an exhausted
    ``search_budget`` does: the value is then a lower bound.

    Raises
    ------
    TypeError
        If ``job`` is not a job or ``cluster`` not a cluster.
    """
    _check_job_and_cluster(job, cluster)
    if cluster.heterogeneous:
        return _typed_alpha_min(job, cluster, search_budget, give_up)
    cut = least_cut(job, cluster, search_budget, give_up=give_up)
    return ExactOrBound(alpha_from_cut(job, cluster, cut.value), exact=cut.exact)


def _typed_alpha_min(
    job: Job, cluster: Cluster, search_budget: int, give_up: Callable[[], bool] | None
) -> ExactOrBound:
    inter = cluster.bandwidth_inter
    found_levels: list[tuple[float, bool]] = []  # (value or lower bound, proven) per level
    for level in sorted({job.compute_on(t) for t in cluster.types}):
        if found_levels and min(found_levels)[0] <= level:
            break  # communication is never negative: no later level is better
        allowed = [
            h for h in range(cluster.num_servers) if job.compute_on(cluster.type_of(h)) <= level
        ]
        capacities = [cluster.gpus_per_server[h] for h in allowed]
        if sum(capacities) < job.gpus:
            continue
        intra = [float(cluster.intra_by_server[h]) for h in allowed]
        if not job.edges:
            comm, proven = 0.0, True
        else:
            keep = [inter / b for b in intra]
            found = extreme_cut(
                job,
                capacities,
                maximize=False,
                search_budget=search_budget,
                keep=keep,
                give_up=give_up,
            )
            if found is not None:
                comm, proven = found[0] / inter, True
            else:  # every edge costs >= q / max B_intra, cut ones q / B_inter
                fastest = max(intra)
                cut = min_cut_bound(job, max(capacities))
                comm = job.total_traffic / fastest + cut * (1 / inter - 1 / fastest)
                proven = False
        found_levels.append((level + comm, proven))
    if not found_levels:  # the job fits no servers at all
        return ExactOrBound(math.inf, True)
    best = min(value for value, _ in found_levels)
    # Exact when a proven level attains the least value: any other level's true value is
    # at least its (possibly lower-bound) value, hence at least the least one.
    return ExactOrBound(best, any(proven and value == best for value, proven in found_levels))


def min_cut_bound(job: Job, max_part: int) -> float:
    """A lower bound on the cut of any partition into parts of <= ``max_part``.

    Such a partition has ``k >= ceil(g / max_part)`` non-empty parts. Every
    part's boundary carries at least the global minimum cut ``lambda`` of the
    graph (Stoer-Wagner), and the cut counts each boundary edge twice, so
    ``cut >= k * lambda / 2``. A disconnected graph has ``lambda = 0``.
    """
    parts = math.ceil(job.gpus / max_part)
    if parts <= 1 or not job.edges:
        return 0.0
    graph = nx.Graph()
    graph.add_nodes_from(range(job.gpus))
    graph.add_weighted_edges_from(job.edges)
    if not nx.is_connected(graph):
        return 0.0
    lam, _ = nx.stoer_wagner(graph)
    return parts * float(lam) / 2.0


GIVE_UP_EVERY = 1_000
"""Branch nodes between two questions to :func:`extreme_cut`'s ``give_up`` (about 5 ms)."""

MAX_SEARCH_DEPTH = 400
"""Most GPUs of a job :func:`extreme_cut` searches: its branch and bound recurses two frames
per node placed, and Python stops at 1,000 frames (a 500-GPU job ended in a RecursionError).
A wider job is answered as an exhausted budget is (``None``: callers fall back to their
bounds or to a mapping MILP)."""


def extreme_cut(
    job: Job,
    capacities: Sequence[int],
    *,
    maximize: bool,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    keep: Sequence[float] | None = None,
    give_up: Callable[[], bool] | None = None,
) -> tuple[float, tuple[int, ...]] | None:
    """The least (or greatest) cut traffic over capacitated mappings.

    Depth-first branch and bound: nodes are placed one at a time, in an
    order where each node is adjacent to many already placed, so that the
    cut of the partial mapping (a lower bound when minimising) and the cut
    plus all undecided traffic (an upper bound when maximising) prune
    early. Servers of equal capacity are interchangeable while empty, so a
    node may open only the first empty server of each capacity: every
    mapping is equivalent, by permuting equal servers, to one explored, so
    no optimum is lost.

    Parameters
    ----------
    job
        Its graph is partitioned.
    capacities
        Free GPUs per server; must total at least ``job.gpus``.
    maximize
        Maximise the cut instead of minimising it.
    search_budget
        Give up (return ``None``) after this many branch nodes.
    keep
        Per server, a weight in ``[0, 1]`` an edge inside that server
        counts with (a cut edge counts 1): with ``B_inter / B_intra(h)`` the
        objective is the communication time times ``B_inter`` (GPU types).
        ``None``: 0 everywhere, the plain cut. Empty servers are
        interchangeable only when their capacity and weight agree.
    give_up
        Asked every :data:`GIVE_UP_EVERY` branch nodes; ``True`` ends the
        search as an exhausted budget does (a caller's deadline).

    Returns
    -------
    tuple or None
        ``(cut, mapping)`` for an optimal mapping, or ``None`` when the
        budget ran out (or no mapping fits, or the job has more than
        :data:`MAX_SEARCH_DEPTH` GPUs).
    """
    if sum(capacities) < job.gpus or job.gpus > MAX_SEARCH_DEPTH:
        return None
    search = _CutSearch(job, capacities, maximize, search_budget, keep, give_up)
    if not search.search(0, 0.0) or search.best_assignment is None:
        return None
    mapping = [0] * job.gpus
    for k, node in enumerate(search.order):
        mapping[node] = search.best_assignment[k]
    return search.best_cut, tuple(mapping)


class _CutSearch:
    """:func:`extreme_cut`'s depth-first branch and bound: the job's nodes in placement
    order, the servers, the partial mapping of the current branch and the best one found.

    Nodes are numbered by their position in :attr:`order`; :attr:`assigned` holds each
    placed node's server (``-1``: not yet placed), :attr:`best_cut` and
    :attr:`best_assignment` the best complete mapping so far, :attr:`visited` the branch
    nodes explored (the search budget counts them).
    """

    def __init__(
        self,
        job: Job,
        capacities: Sequence[int],
        maximize: bool,
        search_budget: int,
        keep: Sequence[float] | None,
        give_up: Callable[[], bool] | None,
    ) -> None:
        self.n = job.gpus
        self.maximize, self.search_budget, self.give_up = maximize, search_budget, give_up
        self.order = _placement_order(job)
        self.back_edges, self.undecided = _back_edges(job, self.order)
        self.remaining = list(capacities)
        self.inside = [0.0] * len(self.remaining) if keep is None else [float(w) for w in keep]
        self.kinds = _server_kinds(capacities, self.inside)
        self.holding: dict[int, int] = {}  # server -> nodes placed on it in the current branch
        self.assigned = [-1] * self.n
        self.best_cut = -math.inf if maximize else math.inf
        self.best_assignment: list[int] | None = None
        self.visited = 0
        self.sign = -1.0 if maximize else 1.0

    def search(self, k: int, cut: float) -> bool:
        """Explore every placement of the nodes from position ``k`` on, the cut of those
        before being ``cut``; ``False`` when the budget ran out or ``give_up`` said so."""
        self.visited += 1
        if self.visited > self.search_budget:
            return False
        if self.give_up is not None and self.visited % GIVE_UP_EVERY == 0 and self.give_up():
            return False
        if k == self.n:
            if self.sign * cut < self.sign * self.best_cut:
                self.best_cut, self.best_assignment = cut, self.assigned.copy()
            return True
        for _, server, added in self._candidates(k):
            new_cut = cut + added
            if self.maximize:
                if new_cut + self.undecided[k + 1] <= self.best_cut:
                    continue
            elif new_cut >= self.best_cut:
                continue
            if not self._descend(k, server, new_cut):
                return False
        return True

    def _candidates(self, k: int) -> list[tuple[float, int, float]]:
        """The servers node ``k`` may go to, each with the cut traffic it adds, most
        promising first (so good incumbents come early): the servers in use with room
        left, and the first empty one of each kind."""
        servers = [server for server in self.holding if self.remaining[server] > 0]
        for same_kind in self.kinds.values():
            empty = next((server for server in same_kind if server not in self.holding), None)
            if empty is not None:
                servers.append(empty)
        assigned, candidates = self.assigned, []
        for server in servers:
            weight = self.inside[server]
            added = sum(q if assigned[a] != server else q * weight for a, q in self.back_edges[k])
            candidates.append((self.sign * added, server, added))
        candidates.sort()
        return candidates

    def _descend(self, k: int, server: int, cut: float) -> bool:
        """Place node ``k`` on ``server``, search on from there, and take it back."""
        self.assigned[k] = server
        self.remaining[server] -= 1
        self.holding[server] = self.holding.get(server, 0) + 1
        finished = self.search(k + 1, cut)
        self.holding[server] -= 1
        if not self.holding[server]:
            del self.holding[server]
        self.remaining[server] += 1
        self.assigned[k] = -1
        return finished


def _back_edges(job: Job, order: list[int]) -> tuple[list[list[tuple[int, float]]], list[float]]:
    """For each node in placement order, its (earlier neighbour, traffic) pairs; and for
    each position ``k``, the traffic on edges whose later end is at ``k`` or after
    (undecided)."""
    n = job.gpus
    position = {node: k for k, node in enumerate(order)}
    back_edges: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    for u, v, q in job.edges:
        a, b = sorted((position[u], position[v]))
        back_edges[b].append((a, q))
    undecided = [0.0] * (n + 1)
    for k in range(n - 1, -1, -1):
        undecided[k] = undecided[k + 1] + sum(q for _, q in back_edges[k])
    return back_edges, undecided


def _server_kinds(
    capacities: Sequence[int], inside: list[float]
) -> dict[tuple[int, float], list[int]]:
    """The servers of each kind (capacity, weight), in index order. A branch node looks only
    at the servers holding nodes and the first empty server of each kind, never at all H
    servers: scanning them all costs 0.2 s per branch node on a million servers."""
    kinds: dict[tuple[int, float], list[int]] = {}
    for server, capacity in enumerate(capacities):
        if capacity > 0:
            kinds.setdefault((capacity, inside[server]), []).append(server)
    return kinds


def _placement_order(job: Job) -> list[int]:
    """Nodes in an order where each is heavily tied to those before it."""
    weight_to_placed = [0.0] * job.gpus
    adjacency: list[list[tuple[int, float]]] = [[] for _ in range(job.gpus)]
    for u, v, q in job.edges:
        adjacency[u].append((v, q))
        adjacency[v].append((u, q))
    degree = [sum(q for _, q in adjacency[node]) for node in range(job.gpus)]
    placed: list[int] = []
    unplaced = set(range(job.gpus))
    while unplaced:
        node = max(unplaced, key=lambda m: (weight_to_placed[m], degree[m], -m))
        placed.append(node)
        unplaced.remove(node)
        for neighbour, q in adjacency[node]:
            weight_to_placed[neighbour] += q
    return placed


@dataclass(frozen=True)
class RhoReport:
    """``rho`` of an instance with the per-job values it comes from.

    Attributes
    ----------
    rho
        ``max_i alpha_max_i / alpha_min_i`` and whether it is exact.
    alpha_min, alpha_max
        Per job, in instance order.
    argmax
        Index of a job attaining ``rho``.
    """

    rho: ExactOrBound
    alpha_min: tuple[ExactOrBound, ...]
    alpha_max: tuple[ExactOrBound, ...]
    argmax: int


def rho(
    instance: Instance,
    search_budget: int = DEFAULT_SEARCH_BUDGET,
    *,
    give_up: Callable[[], bool] | None = None,
) -> RhoReport:
    """``rho = max_i alpha_i^max / alpha_i^min`` (:ref:`model-rho`, :ref:`model-lemma1`).

    Exact when every ``alpha_min`` is exact (``alpha_max`` is, by the model's
    definition, the all-cut value); otherwise an upper bound on the true
    ``rho``. ``give_up`` (a caller's deadline, asked during the searches) cuts the
    ``alpha_min`` searches short as an exhausted ``search_budget`` does: ``rho`` is then
    an upper bound too.

    ``instance`` may be a loaded trace (its instance).

    Examples
    --------
    >>> from ddlsched import GeneratorConfig, generate
    >>> instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0)
    >>> from ddlsched import rho
    >>> report = rho(instance)
    >>> round(report.rho.value, 4), report.rho.exact
    (1.2857, True)
    """
    instance = as_instance(instance)
    cluster = instance.cluster
    mins = tuple(alpha_min(job, cluster, search_budget, give_up=give_up) for job in instance.jobs)
    maxs = tuple(alpha_max(job, cluster, search_budget, give_up=give_up) for job in instance.jobs)
    ratios = [hi.value / lo.value for lo, hi in zip(mins, maxs, strict=True)]
    argmax = int(np.argmax(ratios))
    exact = all(lo.exact for lo in mins)
    return RhoReport(ExactOrBound(ratios[argmax], exact), mins, maxs, argmax)


class AlphaMinCache:
    """``alpha_min`` per job, with the search shared between jobs of one shape.

    Call it with a job: ``(value, exact)``, where a value that is not exact is
    a valid lower bound.

    The best partition does not change when every edge's traffic is scaled
    by one factor (trace jobs of one model and configuration differ only
    so), so the least cut is cached as a fraction of the total traffic,
    keyed by the graph with normalised traffic. On a heterogeneous cluster
    the value is cached per exact job shape (graph and compute times).
    """

    def __init__(self, cluster: Cluster, budget: int = 2_000) -> None:
        self.cluster = cluster
        self.budget = budget
        self._fraction: dict[tuple, tuple[float, bool]] = {}
        self._typed: dict[tuple, tuple[float, bool]] = {}

    def __call__(self, job: Job) -> tuple[float, bool]:
        if self.cluster.heterogeneous:
            shape = (job.gpus, job.edges, job.compute_time, job.compute_times)
            if shape not in self._typed:
                found = alpha_min(job, self.cluster, self.budget)
                self._typed[shape] = (found.value, found.exact)
            return self._typed[shape]
        total = job.total_traffic
        if total == 0:
            return alpha_from_cut(job, self.cluster, 0.0), True
        key = (job.gpus, tuple((u, v, round(q / total, 12)) for u, v, q in job.edges))
        if key not in self._fraction:
            cut = least_cut(job, self.cluster, self.budget)
            self._fraction[key] = (cut.value / total, cut.exact)
        fraction, exact = self._fraction[key]
        return alpha_from_cut(job, self.cluster, fraction * total), exact


def fastest_processing(instance: Instance, search_budget: int = 2_000) -> tuple[list[float], int]:
    """``p_i = K_i alpha_i^min`` per job, the least processing time under any mapping,
    and how many ``alpha_i^min`` are lower bounds rather than exact (still valid for
    any bound built on them). The search is shared between jobs of one shape."""
    fastest = AlphaMinCache(instance.cluster, search_budget)
    processing, inexact = [], 0
    for job in instance.jobs:
        value, exact = fastest(job)
        inexact += not exact
        processing.append(job.iterations * value)
    return processing, inexact
