"""Job graphs from a model profile and a parallelism configuration.

Worker ``(d, p, t)`` is data replica ``d``, pipeline stage ``p``, tensor
shard ``t`` (node index :meth:`ddlsched.core.model.Parallelism.node`). Traffic
``q_e`` on an undirected edge is the volume, in GB per iteration, that
**each** end sends to the other across it (links are full duplex); the SPEC
charges ``q_e / B`` for it. The defaults *(choices)*, after Narayanan et al.,
*Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM*, SC 2021, and Huang et al., *GPipe*, NeurIPS 2019:

- **tensor** edges join every pair of one ``(d, p)`` group. Megatron-style
  tensor parallelism all-reduces the layer activations 4 times per layer (2
  forward, 2 backward); a ring all-reduce of ``A`` bytes sends
  ``2 (tp-1)/tp * A`` per worker, spread here evenly over its ``tp - 1``
  clique edges: ``q = 4 * L_stage * 2 A / tp`` with ``A`` the activations of
  one iteration (``batch * activation_bytes_per_sample``) and ``L_stage``
  the layers of a stage. Heaviest, as in practice.
- **pipeline** edges ``(d, p, t) - (d, p+1, t)`` carry the activations
  forward and their gradients backward: ``q = batch *
  activation_bytes_per_sample / tp`` (each shard sends its slice).
- **data-parallel** edges join the replicas ``(0..dp-1, p, t)`` of one shard
  in a ring, for a ring all-reduce of the shard's gradient ``S =
  gradient_bytes / (pp * tp)``: ``q = 2 (dp-1)/dp * S`` per ring edge (for
  ``dp = 2`` the ring is one edge).

Compute time per iteration: the single-GPU time divided over the ``pp * tp``
workers of a replica, times the GPipe bubble ``(m + pp - 1) / m`` for ``m``
micro-batches (default ``m = 4 pp``).
"""

from __future__ import annotations

import math

from ddlsched.core.model import Edge, Parallelism
from ddlsched.core.zoo import ModelProfile

GB = 1e9


def ring_pairs(nodes: int) -> list[tuple[int, int]]:
    """The node pairs ``(u, v)``, ``u < v``, of a ring over ``nodes`` nodes.

    No pair for one node, one for two (a ring of two is one link), otherwise
    ``(d, d + 1)`` around the ring and ``(0, nodes - 1)`` to close it.
    """
    if nodes < 2:
        return []
    if nodes == 2:
        return [(0, 1)]
    return [(min(d, (d + 1) % nodes), max(d, (d + 1) % nodes)) for d in range(nodes)]


def ring_edges(nodes: int, traffic: float) -> tuple[Edge, ...]:
    """A ring job graph: every pair of :func:`ring_pairs` carrying ``traffic`` GB per iteration."""
    return tuple((u, v, traffic) for u, v in ring_pairs(nodes))


def pipeline_bubble(pp: int, microbatches: int) -> float:
    """The GPipe slowdown ``(m + pp - 1) / m`` of ``pp`` stages."""
    return (microbatches + pp - 1) / microbatches


def build_job_graph(
    profile: ModelProfile,
    parallelism: Parallelism,
    microbatches: int | None = None,
) -> tuple[float, tuple[Edge, ...]]:
    """The compute time and edges of ``profile`` run as ``parallelism``.

    Parameters
    ----------
    profile
        The workload.
    parallelism
        ``(dp, pp, tp)``; ``pp`` must not exceed the profile's layers.
    microbatches
        Micro-batches per iteration for pipelining (default ``4 * pp``).

    Returns
    -------
    tuple
        ``(compute_time, edges)``: ``c_i`` in seconds and the edges
        ``(u, v, q_e)`` with ``q_e`` in GB per iteration, ``u < v``.

    Raises
    ------
    ValueError
        If ``pp`` exceeds the layers or ``microbatches < 1``.
    """
    dp, pp, tp = parallelism.dp, parallelism.pp, parallelism.tp
    if pp > profile.layers:
        raise ValueError(f"pp={pp} exceeds the {profile.layers} layers of {profile.name!r}")
    m = 4 * pp if microbatches is None else microbatches
    if m < 1:
        raise ValueError(f"microbatches must be >= 1, got {m}")
    compute = profile.step_compute_time / (pp * tp) * pipeline_bubble(pp, m)

    activations = profile.batch_size * profile.activation_bytes_per_sample
    layers_per_stage = math.ceil(profile.layers / pp)
    tensor_q = 4 * layers_per_stage * 2 * activations / tp / GB
    pipeline_q = activations / tp / GB
    shard_gradient = profile.gradient_bytes / (pp * tp)
    ring_q = 2 * (dp - 1) / dp * shard_gradient / GB

    edges: dict[tuple[int, int], float] = {}

    def add(a: int, b: int, q: float) -> None:
        key = (min(a, b), max(a, b))
        edges[key] = edges.get(key, 0.0) + q

    node = parallelism.node
    for d in range(dp):
        for p in range(pp):
            for t in range(tp):
                for t2 in range(t + 1, tp):
                    add(node(d, p, t), node(d, p, t2), tensor_q)
                if p + 1 < pp:
                    add(node(d, p, t), node(d, p + 1, t), pipeline_q)
    if dp >= 2:
        ring = ring_pairs(dp)
        for p in range(pp):
            for t in range(tp):
                for d, d_next in ring:
                    add(node(d, p, t), node(d_next, p, t), ring_q)
    return compute, tuple((u, v, q) for (u, v), q in sorted(edges.items()))
