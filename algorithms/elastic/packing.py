"""Placing GPU counts onto nodes: Pollux-style chain packing and Tiresias's most-free rule.

**Chain packing** (:func:`pack_chain`). Every job asks for either a *single*
size from a chain of divisors of the node size ``G`` (each size divides the
next, e.g. 1, 2, 4 for ``G = 4``) on one node, or ``k * G`` GPUs on ``k``
whole nodes. Whenever the total asked is at most the cluster's GPUs, such a
request always packs: whole-node jobs take whole free nodes, then singles go
in decreasing size order, and at each step every node's free GPUs is a
multiple of the current size (all placed sizes and ``G`` are), so any node
with a free GPU has room. Within that guarantee the packer keeps unchanged
jobs where they were, so that a job whose GPU count did not change is not
moved (a move costs a restart).

**Most free** (:func:`most_free_placement`). The Pollux artifact's Tiresias
placement: take GPUs from the node with the most free GPUs (lowest index on
ties), repeatedly, until the job has its count; it may span nodes.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["chain_sizes", "most_free_placement", "pack_chain"]

Placement = tuple[tuple[int, int], ...]


def chain_sizes(gpus_per_node: int) -> tuple[int, ...]:
    """Single-node sizes forming a chain of divisors: powers of two dividing ``G``, and ``G``."""
    sizes = {gpus_per_node}
    size = 1
    while size < gpus_per_node:
        if gpus_per_node % size == 0:
            sizes.add(size)
        size *= 2
    return tuple(sorted(sizes))


def most_free_placement(free: list[int], gpus: int) -> Placement:
    """Take ``gpus`` GPUs, each time from the node with most free (updates ``free``).

    Raises
    ------
    ValueError
        If the free GPUs are fewer than ``gpus``.
    """
    if gpus > sum(free):
        raise ValueError(f"most_free_placement: {gpus} GPUs asked, {sum(free)} free")
    taken: dict[int, int] = {}
    left = gpus
    while left > 0:
        node = max(range(len(free)), key=lambda n: (free[n], -n))
        count = min(free[node], left)
        taken[node] = taken.get(node, 0) + count
        free[node] -= count
        left -= count
    return tuple(sorted(taken.items()))


def pack_chain(
    counts: Mapping[str, int],
    previous: Mapping[str, Placement],
    num_nodes: int,
    gpus_per_node: int,
) -> dict[str, Placement]:
    """Place every job's GPU count; keep unchanged jobs in place where the chain rule allows.

    Parameters
    ----------
    counts
        Job -> GPUs (> 0), each a chain size or a multiple of ``gpus_per_node``.
        Iteration order breaks ties.
    previous
        Job -> its placement last round (for jobs that had one).
    num_nodes, gpus_per_node
        The cluster.

    Returns
    -------
    dict
        Job -> placement.

    Raises
    ------
    ValueError
        If a count is not packable (not a chain size nor whole nodes) or the
        total exceeds the cluster.
    """
    size_g = gpus_per_node
    sizes = chain_sizes(size_g)
    if sum(counts.values()) > num_nodes * size_g:
        raise ValueError(f"pack_chain: {sum(counts.values())} GPUs > {num_nodes * size_g}")
    for name, count in counts.items():
        if count not in sizes and count % size_g != 0:
            raise ValueError(f"pack_chain: {name} asks {count} GPUs, not a chain size")
    free = [size_g] * num_nodes
    placed: dict[str, Placement] = {}

    def kept(name: str) -> bool:
        old = previous.get(name)
        return old is not None and sum(g for _, g in old) == counts[name]

    whole = [n for n, c in counts.items() if c > size_g]
    singles = [n for n, c in counts.items() if c <= size_g]
    # Unchanged single-node jobs' old nodes: avoid giving those GPUs away.
    reserved = [0] * num_nodes
    for name in singles:
        if kept(name) and len(previous[name]) == 1:
            reserved[previous[name][0][0]] += counts[name]
    for name in whole:
        old = previous.get(name, ())
        if kept(name) and all(g == size_g and free[n] == size_g for n, g in old):
            for node, _ in old:
                free[node] = 0
            placed[name] = tuple(old)
    for name in whole:
        if name in placed:
            continue
        need = counts[name] // size_g
        empty = [n for n in range(num_nodes) if free[n] == size_g]
        empty.sort(key=lambda n: (reserved[n] > 0, n))
        chosen = sorted(empty[:need])
        for node in chosen:
            free[node] = 0
        placed[name] = tuple((node, size_g) for node in chosen)
    order = sorted(singles, key=lambda n: (-counts[n], not kept(n)))
    for name in order:
        size = counts[name]
        old = previous.get(name, ())
        if kept(name) and len(old) == 1:
            node = old[0][0]
            reserved[node] -= size
            if free[node] >= size:
                free[node] -= size
                placed[name] = ((node, size),)
                continue
        fits = [n for n in range(num_nodes) if free[n] >= size]
        node = min(fits, key=lambda n: (free[n] - reserved[n] < size, free[n] - reserved[n], n))
        free[node] -= size
        placed[name] = ((node, size),)
    return placed
