"""GPU mapping: which free GPUs a starting job gets.

A :class:`Mapper` takes a job, the cluster and the free GPUs per server and
returns the server of every node, or ``None`` if the job does not fit.

:class:`GraphMapper` is A-SRPT's heuristic (:ref:`model-mapping-heuristic`):

1. **servers**: if one server has ``g_i`` free GPUs, the one with the fewest
   free GPUs among those (best fit, which keeps large holes for wide jobs);
   otherwise the fewest servers, taking the servers with most free GPUs
   first (all of each, the remainder from the last one);
2. **nodes**: partition the job graph into parts of those sizes by greedy
   growth (each part is seeded with the heaviest unplaced node and grown
   by the unplaced node most strongly tied to it, so tensor groups, then
   pipeline neighbours, stay together), then improve by pairwise swaps
   between parts while a swap lowers the cut (the Kernighan-Lin move;
   Kernighan and Lin, *An Efficient Heuristic Procedure for Partitioning
   Graphs*, Bell Syst. Tech. J. 1970). NetworkX's
   ``kernighan_lin_bisection`` only splits into two equal halves; here the
   parts have given, unequal sizes, so the swap pass is written on a
   dense NumPy adjacency matrix, which is also what makes a 64-worker job
   take well under a millisecond.

**GPU types.** On a cluster of several types, step 1 is tried once per
type (that type's servers only) and once over all servers; each candidate
gets its nodes by step 2 and the one with the least ``alpha`` wins (ties:
the type the job computes fastest on, then the mixed choice). So a job
takes the fastest free type that holds it well, and spans types only when
that is quicker than every single type (a job spanning types runs at its
slowest worker's pace; Gavel, Narayanan et al., OSDI 2020, and Sia,
Jayaram Subramanya et al., SOSP 2023, make the same trade).

Baselines: :class:`FirstFitMapper` (the same consolidating server choice,
nodes in index order: communication-blind) and :class:`RandomMapper` (nodes
on uniformly random free GPUs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from ddlsched.core.alpha import JobGraph, alpha
from ddlsched.core.model import Cluster


class Mapper(Protocol):
    """Chooses GPUs for a job: the server of each node, or ``None``."""

    def __call__(
        self, job: JobGraph, cluster: Cluster, free: Sequence[int]
    ) -> tuple[int, ...] | None: ...


class FreeGPUs(Sequence[int]):
    """Free GPUs per server, with servers bucketed by their free count.

    Best fit and "most free first" then cost ``O(G_max)`` plus the servers
    taken, not ``O(H)``: what keeps the simulator fast on thousands of
    servers. Read like a list; change with :meth:`take` and :meth:`give`.
    """

    def __init__(self, free: Sequence[int]) -> None:
        self._free = list(free)
        self._buckets: list[set[int]] = [set() for _ in range(max(self._free, default=0) + 1)]
        for server, count in enumerate(self._free):
            self._buckets[count].add(server)
        self.total = sum(self._free)

    def __getitem__(self, server: int) -> int:  # type: ignore[override]
        return self._free[server]

    def __len__(self) -> int:
        return len(self._free)

    def _move(self, server: int, count: int) -> None:
        self._buckets[self._free[server]].discard(server)
        if count >= len(self._buckets):
            self._buckets.extend(set() for _ in range(count - len(self._buckets) + 1))
        self._buckets[count].add(server)
        self.total += count - self._free[server]
        self._free[server] = count

    def take(self, mapping: Sequence[int]) -> None:
        """Mark one GPU per node of ``mapping`` busy.

        Raises
        ------
        ValueError
            If a server has too few free GPUs.
        """
        for server, count in _counts(mapping).items():
            if count > self._free[server]:
                raise ValueError(
                    f"server {server} has {self._free[server]} free GPUs, {count} requested"
                )
            self._move(server, self._free[server] - count)

    def give(self, mapping: Sequence[int]) -> None:
        """Mark the GPUs of ``mapping`` free again."""
        for server, count in _counts(mapping).items():
            self._move(server, self._free[server] + count)

    def best_fit(self, gpus: int) -> int | None:
        """The server with the fewest free GPUs among those with ``gpus`` free."""
        for count in range(max(gpus, 1), len(self._buckets)):
            if self._buckets[count]:
                return min(self._buckets[count])
        return None

    def most_free_first(self) -> list[int]:
        """Servers with free GPUs, most free first (ties: lower index)."""
        return [
            server
            for count in range(len(self._buckets) - 1, 0, -1)
            for server in sorted(self._buckets[count])
        ]


def _counts(mapping: Sequence[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for server in mapping:
        counts[server] = counts.get(server, 0) + 1
    return counts


def choose_servers(gpus: int, free: Sequence[int]) -> dict[int, int] | None:
    """Step 1: GPUs to take per server (``{server: count}``), or ``None``.

    Best fit on one server if possible, else the fewest servers, most free
    first (all of each, the remainder from the last). Ties go to the lower
    server index.
    """
    state = free if isinstance(free, FreeGPUs) else FreeGPUs(free)
    if gpus > state.total:
        return None
    server = state.best_fit(gpus)
    if server is not None:
        return {server: gpus}
    taken: dict[int, int] = {}
    need = gpus
    for server in state.most_free_first():
        take = min(state[server], need)
        taken[server] = take
        need -= take
        if need == 0:
            break
    return taken


def _in_order(taken: dict[int, int]) -> tuple[int, ...]:
    """Nodes in index order onto the taken servers, lowest server first."""
    return tuple(server for server in sorted(taken) for _ in range(taken[server]))


def _adjacency(job: JobGraph) -> np.ndarray:
    adjacency = np.zeros((job.gpus, job.gpus))
    u, v, q = job.edge_arrays
    adjacency[u, v] = q
    adjacency[v, u] = q
    return adjacency


def grow_partition(adjacency: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Greedy growth: the part index of each node, parts of exactly ``sizes``."""
    n = adjacency.shape[0]
    part = np.full(n, -1, dtype=np.int64)
    degree = adjacency.sum(axis=1)
    order = sorted(range(len(sizes)), key=lambda k: -sizes[k])
    for k in order:
        unplaced = part < 0
        # Seed: the heaviest unplaced node (ties: lowest index).
        seed = int(np.flatnonzero(unplaced)[np.argmax(degree[unplaced])])
        part[seed] = k
        tie = adjacency[seed].copy()
        for _ in range(sizes[k] - 1):
            candidates = np.flatnonzero(part < 0)
            best = candidates[np.lexsort((-degree[candidates], -tie[candidates]))[0]]
            part[best] = k
            tie += adjacency[best]
    return part


def refine_swaps(adjacency: np.ndarray, part: np.ndarray, max_swaps: int = 1000) -> np.ndarray:
    """Kernighan-Lin style improvement: apply the best cut-lowering swap until none.

    Swapping ``u`` (part ``A``) with ``v`` (part ``B``) lowers the cut by
    ``W(u,B) - W(u,A) + W(v,A) - W(v,B) - 2 w_uv``, with ``W(x,P)`` the
    traffic between ``x`` and the nodes of part ``P``.
    """
    part = part.copy()
    parts = int(part.max()) + 1
    if parts < 2:
        return part
    n = len(part)
    rows = np.arange(n)
    for _ in range(max_swaps):
        onehot = np.zeros((n, parts))
        onehot[rows, part] = 1.0
        to_part = adjacency @ onehot  # W(x, P)
        internal = to_part[rows, part]
        toward = to_part[:, part]  # toward[u, v] = W(u, part of v)
        gain = toward + toward.T - internal[:, None] - internal[None, :] - 2 * adjacency
        gain[part[:, None] == part[None, :]] = -np.inf
        flat = int(np.argmax(gain))
        if gain.flat[flat] <= 1e-12:
            break
        u, v = divmod(flat, n)
        part[u], part[v] = part[v], part[u]
    return part


def _place_typed(
    job: JobGraph,
    cluster: Cluster,
    free: Sequence[int],
    nodes: Callable[[dict[int, int]], tuple[int, ...]],
) -> tuple[int, ...] | None:
    """Steps 1-2 with servers chosen per GPU type (module docstring); ``nodes``
    turns the GPUs taken per server into a mapping."""
    if not cluster.heterogeneous:
        taken = choose_servers(job.gpus, free)
        return None if taken is None else nodes(taken)
    order = sorted(cluster.types, key=job.compute_on)
    offers = [[f if cluster.type_of(h) == t else 0 for h, f in enumerate(free)] for t in order]
    best: tuple[float, tuple[int, ...]] | None = None
    for offered in [*offers, list(free)]:
        taken = choose_servers(job.gpus, offered)
        if taken is None:
            continue
        mapping = nodes(taken)
        value = alpha(job, cluster, mapping)
        if best is None or value < best[0]:
            best = (value, mapping)
    return None if best is None else best[1]


PARTITION_CACHE = 100_000
"""Partitions a :class:`GraphMapper` remembers before starting afresh."""


class GraphMapper:
    """A-SRPT's communication-aware mapper (steps 1 and 2 of the module docstring).

    Parameters
    ----------
    max_swaps
        Limit on improving swaps per job.
    """

    def __init__(self, max_swaps: int = 1000) -> None:
        self.max_swaps = max_swaps
        # The partition depends only on the graph and the part sizes (in server order):
        # a job resumed round after round (gavel restarts about 1.9 million pieces on the
        # full Philly trace) is partitioned once per sizes, not once per start.
        self._parts: dict[tuple[int, tuple[int, ...]], tuple[JobGraph, list[int]]] = {}

    def __call__(
        self, job: JobGraph, cluster: Cluster, free: Sequence[int]
    ) -> tuple[int, ...] | None:
        return _place_typed(job, cluster, free, lambda taken: self._nodes(job, taken))

    def _nodes(self, job: JobGraph, taken: dict[int, int]) -> tuple[int, ...]:
        servers = list(taken)
        if len(servers) == 1 or not job.edges:
            return _in_order(taken)
        sizes = tuple(taken[h] for h in servers)
        key = (id(job), sizes)
        cached = self._parts.get(key)
        if cached is not None and cached[0] is job:  # the job is held: its id is not reused
            part = cached[1]
        else:
            adjacency = _adjacency(job)
            found = refine_swaps(adjacency, grow_partition(adjacency, sizes), self.max_swaps)
            part = [int(k) for k in found]
            if len(self._parts) >= PARTITION_CACHE:
                self._parts.clear()
            self._parts[key] = (job, part)
        return tuple(servers[k] for k in part)


class FirstFitMapper:
    """Consolidating server choice (step 1), nodes in index order: no graph awareness."""

    def __call__(
        self, job: JobGraph, cluster: Cluster, free: Sequence[int]
    ) -> tuple[int, ...] | None:
        return _place_typed(job, cluster, free, _in_order)


class RandomMapper:
    """Every node on a uniformly random free GPU (seeded)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def __call__(
        self, job: JobGraph, cluster: Cluster, free: Sequence[int]
    ) -> tuple[int, ...] | None:
        if job.gpus > sum(free):
            return None
        slots = np.repeat(np.arange(len(free)), list(free))
        chosen = self.rng.choice(slots, size=job.gpus, replace=False)
        return tuple(int(h) for h in chosen)


def fewest_servers(gpus: int, cluster: Cluster) -> int:
    """The fewest servers of ``cluster`` that can hold ``gpus`` GPUs (largest first)."""
    held = 0
    for count, size in enumerate(sorted(cluster.gpus_per_server, reverse=True), start=1):
        held += size
        if held >= gpus:
            return count
    return len(cluster.gpus_per_server)


class PlacementRule:
    """A mapper under a placement rule (``OnlineParams.placement``).

    ``"consolidated"``: a mapping only on :func:`fewest_servers` servers
    (one server when the job fits one), else ``None`` (the job waits), as
    YARN and Tiresias's ``yarn`` placement; ``"prefer-consolidated"``: such
    a mapping when one exists, else the wrapped mapper's; ``"any"``: the
    wrapped mapper's. When the wrapped mapper spreads a job that could be
    consolidated now, it is asked again with only the GPUs of the fewest
    servers (most free first) offered.
    """

    def __init__(self, rule: str, inner: Mapper) -> None:
        self.rule = rule
        self.inner = inner

    def __call__(
        self, job: JobGraph, cluster: Cluster, free: Sequence[int]
    ) -> tuple[int, ...] | None:
        mapping = self.inner(job, cluster, free)
        if self.rule == "any":
            return mapping
        need = fewest_servers(job.gpus, cluster)
        if mapping is not None and len(set(mapping)) <= need:
            return mapping
        taken = choose_servers(job.gpus, free)
        if taken is not None and len(taken) <= need:
            offered = [taken.get(server, 0) for server in range(len(free))]
            return self.inner(job, cluster, offered)
        return mapping if self.rule == "prefer-consolidated" else None
