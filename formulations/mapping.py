"""Model 1: the GPU-mapping MILP (a capacitated min- or max-cut).

Given a job graph and the free GPUs per server, choose a server for every
node so as to minimise (or maximise) ``alpha_i(x) = c_i + Q_i / B_intra +
(1/B_inter - 1/B_intra) * cut(x)`` (:ref:`model-alpha`). Optionally the number
of nodes per server is fixed (the best mapping for given GPU counts).

Constraint families:

- ``_one_server_per_node``: ``sum_h x[n, h] = 1``;
- ``_capacity``: ``sum_n x[n, h] <= free_h`` (``= counts_h`` when given);
- ``_cut_definition``: minimising, ``y_e >= x[u, h] - x[v, h]`` and
  ``y_e >= x[v, h] - x[u, h]`` for every server ``h`` (so ``y_e = 1``
  whenever the ends differ); maximising, ``y_e <= 2 - x[u, h] - x[v, h]``
  (``y_e = 0`` whenever both ends share a server) with ``y_e <= 1``;
- ``_symmetry``: node 0 goes to the first server of its class of equal
  (free, count, GPU type) servers. Any mapping can be relabelled by a
  permutation of such servers, which are interchangeable, to meet this, so
  no optimum is lost;
- on a cluster of several GPU types (minimising only), ``_typed_time``:
  ``z[e, h] >= x[u, h] + x[v, h] - 1`` (edge ``e`` inside server ``h``,
  costing ``q_e / B_intra(t(h))``; a cut edge costs ``q_e / B_inter``) and
  ``w >= c_i(t(h)) x[n, h]`` (the slowest used type's compute time); the
  objective is ``w + sum_e q_e (y_e / B_inter + sum_h z[e, h] / B_intra(t(h)))``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import pyomo.environ as pyo
from ddlsched.formulations.solver import MipHooks, solve_model

from ddlsched.core.alpha import alpha
from ddlsched.core.model import Cluster, Job
from ddlsched.core.params import ExactParams
from ddlsched.core.result import SolveStatus


@dataclass(frozen=True)
class MappingResult:
    """An optimal (or best found) mapping of one job.

    Attributes
    ----------
    status
        Of the solve.
    alpha
        ``alpha_i(mapping)`` recomputed from the instance model.
    mapping
        Server of each node, or ``None``.
    bound
        The solver's bound on ``alpha`` (lower when minimising).
    runtime_s
        Build plus solve seconds.
    """

    status: SolveStatus
    alpha: float
    mapping: tuple[int, ...] | None
    bound: float
    runtime_s: float


def build_mapping_model(
    job: Job,
    cluster: Cluster,
    free: Sequence[int],
    *,
    maximize: bool = False,
    counts: Sequence[int] | None = None,
) -> pyo.ConcreteModel:
    """The Pyomo model of the best (or worst) mapping of ``job``.

    Parameters
    ----------
    job, cluster
        The job and the bandwidths.
    free
        Free GPUs per server.
    maximize
        Seek the slowest mapping (the exact ``alpha_max``).
    counts
        If given, the exact number of nodes on each server.

    Raises
    ------
    ValueError
        If the job cannot fit ``free`` (or ``counts`` does not add up), or
        ``maximize`` is asked on a cluster of several GPU types.
    """
    if maximize and cluster.heterogeneous:
        raise ValueError(
            "the slowest mapping is not modelled on a cluster of several GPU types; "
            "alpha_max there is the all-cut value with the slowest type "
            "(ddlsched.core.alpha.alpha_max)"
        )
    if len(free) != cluster.num_servers:
        raise ValueError(f"free has {len(free)} entries, the cluster has {cluster.num_servers}")
    if sum(free) < job.gpus:
        raise ValueError(f"job {job.id!r} needs {job.gpus} GPUs, only {sum(free)} are free")
    if counts is not None:
        if len(counts) != cluster.num_servers or sum(counts) != job.gpus:
            raise ValueError(f"counts {list(counts)} must give {job.gpus} nodes over the servers")
        if any(c > f for c, f in zip(counts, free, strict=True)):
            raise ValueError(f"counts {list(counts)} exceed the free GPUs {list(free)}")
    model = pyo.ConcreteModel(name=f"mapping_{job.id}")
    model.NODES = pyo.RangeSet(0, job.gpus - 1)
    model.SERVERS = pyo.RangeSet(0, cluster.num_servers - 1)
    model.EDGES = pyo.RangeSet(0, len(job.edges) - 1) if job.edges else pyo.Set(initialize=[])
    model.x = pyo.Var(model.NODES, model.SERVERS, within=pyo.Binary)
    model.y = pyo.Var(model.EDGES, bounds=(0, 1))
    _one_server_per_node(model)
    _capacity(model, free, counts)
    _cut_definition(model, job, maximize)
    _symmetry(model, cluster, free, counts)
    if cluster.heterogeneous:
        model.alpha = pyo.Objective(expr=_typed_time(model, job, cluster), sense=pyo.minimize)
        return model
    saving = 1 / cluster.bandwidth_inter - 1 / cluster.bandwidth_intra
    base = job.compute_time + job.total_traffic / cluster.bandwidth_intra
    model.alpha = pyo.Objective(
        expr=base + saving * sum(q * model.y[k] for k, (_, _, q) in enumerate(job.edges)),
        sense=pyo.maximize if maximize else pyo.minimize,
    )
    return model


def _one_server_per_node(model: pyo.ConcreteModel) -> None:
    """Every node on exactly one server."""
    model.one_server_per_node = pyo.Constraint(
        model.NODES, rule=lambda m, n: sum(m.x[n, h] for h in m.SERVERS) == 1
    )


def _capacity(model: pyo.ConcreteModel, free: Sequence[int], counts: Sequence[int] | None) -> None:
    """At most ``free_h`` nodes on server ``h`` (exactly ``counts_h`` if given)."""

    def rule(m: pyo.ConcreteModel, h: int) -> object:
        used = sum(m.x[n, h] for n in m.NODES)
        return used == counts[h] if counts is not None else used <= free[h]

    model.capacity = pyo.Constraint(model.SERVERS, rule=rule)


def _cut_definition(model: pyo.ConcreteModel, job: Job, maximize: bool) -> None:
    """``y_e`` is 1 exactly when edge ``e`` crosses servers (in the optimising direction)."""
    model.cut_definition = pyo.ConstraintList()
    for k, (u, v, _) in enumerate(job.edges):
        for h in model.SERVERS:
            if maximize:
                model.cut_definition.add(model.y[k] <= 2 - model.x[u, h] - model.x[v, h])
            else:
                model.cut_definition.add(model.y[k] >= model.x[u, h] - model.x[v, h])
                model.cut_definition.add(model.y[k] >= model.x[v, h] - model.x[u, h])


def _typed_time(model: pyo.ConcreteModel, job: Job, cluster: Cluster) -> object:
    """``alpha`` on a cluster of several GPU types, as a linear expression to minimise."""
    model.z = pyo.Var(model.EDGES, model.SERVERS, bounds=(0, 1))
    model.w = pyo.Var(bounds=(0, None))
    model.typed_time = pyo.ConstraintList()
    for k, (u, v, _) in enumerate(job.edges):
        for h in model.SERVERS:
            model.typed_time.add(model.z[k, h] >= model.x[u, h] + model.x[v, h] - 1)
    for n in model.NODES:
        for h in model.SERVERS:
            model.typed_time.add(model.w >= job.compute_on(cluster.type_of(h)) * model.x[n, h])
    inter = cluster.bandwidth_inter
    return model.w + sum(
        q * model.y[k] / inter
        + sum(q * model.z[k, h] / cluster.intra_of(cluster.type_of(h)) for h in model.SERVERS)
        for k, (_, _, q) in enumerate(job.edges)
    )


def _symmetry(
    model: pyo.ConcreteModel,
    cluster: Cluster,
    free: Sequence[int],
    counts: Sequence[int] | None,
) -> None:
    """Node 0 on the first server of its class of interchangeable servers."""
    first_of_class: dict[tuple[int, int | None, str], int] = {}
    model.symmetry = pyo.ConstraintList()
    for h in model.SERVERS:
        key = (free[h], None if counts is None else counts[h], cluster.type_of(h))
        if key in first_of_class:
            model.symmetry.add(model.x[0, h] == 0)
        else:
            first_of_class[key] = h


def mapping_from_model(model: pyo.ConcreteModel) -> tuple[int, ...]:
    """The server of each node in a solved model."""
    servers = list(model.SERVERS)
    mapping = []
    for n in model.NODES:
        values = [pyo.value(model.x[n, h]) for h in servers]
        mapping.append(servers[values.index(max(values))])
    return tuple(mapping)


def solve_mapping(
    job: Job,
    cluster: Cluster,
    free: Sequence[int] | None = None,
    *,
    maximize: bool = False,
    counts: Sequence[int] | None = None,
    options: ExactParams | None = None,
    stop_at: float | None = None,
) -> MappingResult:
    """The fastest (or slowest) mapping of ``job`` on ``free`` GPUs.

    ``free`` defaults to the empty cluster. See :func:`build_mapping_model`.
    ``stop_at`` (a ``time.monotonic()`` value) interrupts HiGHS, which may
    overrun its own time limit (a 1.2 s limit took 6.6 s on a 64-node graph).
    """
    began = time.perf_counter()
    free = list(cluster.gpus_per_server) if free is None else list(free)
    model = build_mapping_model(job, cluster, free, maximize=maximize, counts=counts)
    hooks = None if stop_at is None else MipHooks(variables=(), stop_at=stop_at)
    outcome = solve_model(model, options or ExactParams(), hooks=hooks)
    mapping = mapping_from_model(model) if outcome.has_solution else None
    value = alpha(job, cluster, mapping) if mapping is not None else float("nan")
    return MappingResult(
        outcome.status, value, mapping, outcome.bound, time.perf_counter() - began
    )
