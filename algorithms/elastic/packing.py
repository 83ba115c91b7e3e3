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

**Typed clusters.** A job runs on nodes of one GPU type. :func:`pack_groups`
chain-packs each type's jobs onto that type's nodes (the guarantee above holds
per type); :func:`assign_groups` puts type-unaware counts into types (largest
first, each into the type with most room, shrinking a count that fits no type
to the largest that does); :func:`most_free_in_group` is the most-free rule
within the type with most free GPUs.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = [
    "assign_groups",
    "chain_sizes",
    "most_free_in_group",
    "most_free_placement",
    "pack_chain",
    "pack_groups",
]

Placement = tuple[tuple[int, int], ...]
Group = TypeVar("Group", bound=Hashable)
"""A group of nodes (a GPU type, or ``None`` on an untyped cluster): any hashable label."""


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


def most_free_in_group(
    free: list[int], gpus: int, groups: Sequence[Sequence[int]]
) -> Placement | None:
    """:func:`most_free_placement` within the group of nodes with most free GPUs that holds
    ``gpus`` (the first such group on ties; updates ``free``); ``None`` if no group does."""
    room = [sum(free[n] for n in nodes) for nodes in groups]
    fitting = [k for k, r in enumerate(room) if r >= gpus]
    if not fitting:
        return None
    nodes = groups[max(fitting, key=lambda k: (room[k], -k))]
    local = [free[n] for n in nodes]
    placed = most_free_placement(local, gpus)
    for position, node in enumerate(nodes):
        free[node] = local[position]
    return tuple((nodes[position], count) for position, count in placed)


def pack_groups(
    counts: Mapping[str, tuple[Group, int]],
    previous: Mapping[str, Placement],
    groups: Mapping[Group, Sequence[int]],
    gpus_per_node: int,
) -> dict[str, Placement]:
    """:func:`pack_chain` of each group's jobs onto the group's nodes.

    Parameters
    ----------
    counts
        Job -> (its group, GPUs).
    previous
        Job -> its placement last round; kept only by a job that stays in the group
        holding its old nodes.
    groups
        Group -> its nodes (ascending).
    gpus_per_node
        GPUs on every node.

    Raises
    ------
    ValueError
        As :func:`pack_chain`, per group, or a job in no known group.
    """
    unknown = [name for name, (group, _) in counts.items() if group not in groups]
    if unknown:
        raise ValueError(f"pack_groups: {unknown[0]} asks for an unknown group")
    placed: dict[str, Placement] = {}
    for group, nodes in groups.items():
        local_of = {node: position for position, node in enumerate(nodes)}
        members = {name: gpus for name, (g, gpus) in counts.items() if g == group}
        old = {
            name: tuple((local_of[node], gpus) for node, gpus in previous[name])
            for name in members
            if name in previous and all(node in local_of for node, _ in previous[name])
        }
        for name, placement in pack_chain(members, old, len(nodes), gpus_per_node).items():
            placed[name] = tuple((nodes[position], gpus) for position, gpus in placement)
    return placed


def assign_groups(
    counts: Mapping[str, int],
    allowed: Mapping[str, Sequence[int]],
    previous: Mapping[str, Group],
    room: Mapping[Group, int],
) -> dict[str, tuple[Group, int]]:
    """Put type-unaware GPU counts into groups of limited room, shrinking what fits nowhere.

    Jobs whose count is unchanged and that fit their previous group stay there;
    the others, largest first (ties in ``counts`` order), go to the group with
    most room left (the first on ties). A count that fits no group shrinks to the
    largest of the job's ``allowed`` counts that fits the roomiest group; a job for
    which none fits gets nothing.

    Parameters
    ----------
    counts
        Job -> GPUs it was given (> 0).
    allowed
        Job -> the GPU counts it may run with (ascending).
    previous
        Job -> its group last round, for jobs whose count did not change.
    room
        Group -> its GPUs (iteration order breaks ties).

    Returns
    -------
    dict
        Job -> (group, GPUs), for the jobs that run.
    """
    left = dict(room)
    chosen: dict[str, tuple[Group, int]] = {}
    for name, count in counts.items():
        group = previous.get(name)
        if group in left and left[group] >= count:
            chosen[name] = (group, count)
            left[group] -= count
    for name in sorted(counts, key=lambda n: -counts[n]):
        if name in chosen:
            continue
        group = max(left, key=lambda g: left[g])
        fitting = [c for c in allowed[name] if 0 < c <= min(counts[name], left[group])]
        if fitting:
            chosen[name] = (group, fitting[-1])
            left[group] -= fitting[-1]
    return chosen
