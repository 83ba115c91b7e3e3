"""Job graphs from a model profile and a parallelism configuration.

Worker ``(d, p, t)`` is data replica ``d``, pipeline stage ``p``, tensor
shard ``t`` (node index :meth:`ddlsched.core.model.Parallelism.node`). Traffic
``q_e`` on an undirected edge is the volume, in GB per iteration, that
**each** end sends to the other across it (links are full duplex); the model
(:ref:`model-alpha`) charges ``q_e / B`` for it. The defaults *(choices)*, after Narayanan et al.,
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

**Balanced stages** (profiles with per-layer costs, after PipeDream,
Narayanan et al., SOSP 2019). The layers are split into ``pp`` contiguous
stages minimising the slowest stage's compute time
(:func:`partition_layers`, PipeDream's dynamic program without its
communication and replication terms); the slowest stage, not the mean, sets
the iteration: ``c_i = max_p T_p / tp`` times the bubble. A pipeline edge
after stage ``p`` carries the output of that stage's last layer, a
data-parallel ring the gradient of that stage's own parameters, and tensor
edges count that stage's own layers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ddlsched.core.model import Edge, Job, Parallelism
from ddlsched.core.zoo import ModelProfile, get_profile

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


def partition_layers(times: Sequence[float], stages: int) -> tuple[int, ...]:
    """Layers per stage of the contiguous split minimising the slowest stage.

    Dynamic programming over prefixes (PipeDream, Narayanan et al., SOSP
    2019): ``best[k][j]``, the least possible slowest stage when the first
    ``j`` layers form ``k`` stages, is ``min_i max(best[k-1][i], sum(times[i:j]))``.
    ``O(stages * L^2)``. Ties go to the earliest cut, so the result is unique.

    Raises
    ------
    ValueError
        If ``stages`` is not in ``1..len(times)`` or a time is negative.
    """
    layers = len(times)
    if not 1 <= stages <= layers:
        raise ValueError(f"stages must be in 1..{layers} (the layers), got {stages}")
    if any(t < 0 for t in times):
        raise ValueError("layer times must be >= 0")
    prefix = [0.0]
    for t in times:
        prefix.append(prefix[-1] + t)
    best = [[math.inf] * (layers + 1) for _ in range(stages + 1)]
    cut = [[0] * (layers + 1) for _ in range(stages + 1)]
    best[0][0] = 0.0
    for k in range(1, stages + 1):
        for j in range(k, layers - (stages - k) + 1):
            for i in range(k - 1, j):
                value = max(best[k - 1][i], prefix[j] - prefix[i])
                if value < best[k][j]:
                    best[k][j], cut[k][j] = value, i
    sizes = []
    j = layers
    for k in range(stages, 0, -1):
        i = cut[k][j]
        sizes.append(j - i)
        j = i
    return tuple(reversed(sizes))


def _stages(profile: ModelProfile, pp: int) -> list[tuple[float, int, float, float]]:
    """Per stage: (compute seconds on one GPU, layers, parameters, output elements per sample)."""
    if not profile.layer_costs:
        per_stage = math.ceil(profile.layers / pp)
        share = profile.step_compute_time / pp
        return [(share, per_stage, profile.parameters / pp, -1.0)] * pp
    costs = profile.layer_costs
    total = sum(layer.macs for layer in costs)
    times = [profile.step_compute_time * layer.macs / total for layer in costs]
    stages = []
    start = 0
    for size in partition_layers(times, pp):
        part = costs[start : start + size]
        stages.append(
            (
                math.fsum(times[start : start + size]),
                size,
                float(sum(layer.parameters for layer in part)),
                float(part[-1].output_elements),
            )
        )
        start += size
    return stages


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
    activations = profile.batch_size * profile.activation_bytes_per_sample
    if profile.layer_costs:
        stages = _stages(profile, pp)
        compute = max(s[0] for s in stages) / tp * pipeline_bubble(pp, m)
        width = profile.bytes_per_parameter  # bytes per activation element too
        tensor = [4 * s[1] * 2 * activations / tp / GB for s in stages]
        pipeline = [profile.batch_size * s[3] * width / tp / GB for s in stages]
        ring = [2 * (dp - 1) / dp * s[2] * width / tp / GB for s in stages]
    else:
        compute = profile.step_compute_time / (pp * tp) * pipeline_bubble(pp, m)
        layers_per_stage = math.ceil(profile.layers / pp)
        tensor = [4 * layers_per_stage * 2 * activations / tp / GB] * pp
        pipeline = [activations / tp / GB] * pp
        ring = [2 * (dp - 1) / dp * profile.gradient_bytes / (pp * tp) / GB] * pp

    edges: dict[tuple[int, int], float] = {}

    def add(a: int, b: int, q: float) -> None:
        key = (min(a, b), max(a, b))
        edges[key] = edges.get(key, 0.0) + q

    node = parallelism.node
    for d in range(dp):
        for p in range(pp):
            for t in range(tp):
                for t2 in range(t + 1, tp):
                    add(node(d, p, t), node(d, p, t2), tensor[p])
                if p + 1 < pp:
                    add(node(d, p, t), node(d, p + 1, t), pipeline[p])
    if dp >= 2:
        for p in range(pp):
            for t in range(tp):
                for d, d_next in ring_pairs(dp):
                    add(node(d, p, t), node(d_next, p, t), ring[p])
    return compute, tuple((u, v, q) for (u, v), q in sorted(edges.items()))


def zoo_job(
    model: str,
    dp: int = 1,
    pp: int = 1,
    tp: int = 1,
    *,
    iterations: int | None = None,
    release: float = 0.0,
    weight: float = 1.0,
    job_id: str | None = None,
) -> Job:
    """A job of the zoo's ``model`` run as ``(dp, pp, tp)``, in one call.

    Its compute time and traffic come from :func:`build_job_graph`; ``iterations``
    defaults to the model's typical count. Example::

        job = zoo_job("gpt2_xl", dp=2, pp=2, tp=2, iterations=500)

    Raises
    ------
    ValueError
        An unknown model (naming the known ones) or a parallelism the model cannot take.
    """
    profile = get_profile(model)
    parallelism = Parallelism(dp, pp, tp)
    compute, edges = build_job_graph(profile, parallelism)
    return Job(
        id=job_id or f"{model}-{dp}.{pp}.{tp}",
        release=release,
        iterations=profile.typical_iterations if iterations is None else iterations,
        compute_time=compute,
        gpus=parallelism.dp * parallelism.pp * parallelism.tp,
        edges=edges,
        weight=weight,
        parallelism=parallelism,
        features={"model": profile.name, "batch_size": profile.batch_size},
    )
