"""Round-based elastic policies: Pollux and Sia (exact), a type-aware greedy, Tiresias as in
the Pollux study, FIFO.

Each policy is a small class with one method, ``allocate(state) -> {job: Allocation}``
(:class:`~ddlsched.algorithms.elastic.simulator.ElasticPolicy`); a fresh object per
simulation (the rigid ones keep their queues across rounds).

On a typed cluster (nodes of several GPU types) ``sia`` and ``typed-greedy`` choose a
GPU type per job from per-type goodputs (:func:`typed_options`); ``pollux``,
``asrpt-elastic``, ``las-pollux`` and ``fifo`` stay type-unaware (Pollux and Tiresias as
published): they see the GPUs as one pool and their jobs land on whichever type has
room (:func:`place_choice`, :func:`~ddlsched.algorithms.elastic.packing.most_free_in_group`),
running at that type's speed.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

import numpy as np
from ddlsched.algorithms.elastic.packing import (
    assign_groups,
    chain_sizes,
    most_free_in_group,
    pack_groups,
)
from ddlsched.algorithms.elastic.round_milp import ChoiceProblem, solve_choice
from ddlsched.algorithms.elastic.simulator import (
    Allocation,
    JobState,
    RoundState,
    placement_type,
)

from ddlsched.core.elastic import ElasticCluster, goodput_scale

__all__ = [
    "ExactRound",
    "FifoRigid",
    "JobOptions",
    "LasPollux",
    "OptionLimits",
    "Pollux",
    "PolluxParams",
    "Sia",
    "SiaParams",
    "TypedGreedy",
    "current_gpus",
    "current_option",
    "job_options",
    "largest_group_gpus",
    "node_groups",
    "place_choice",
    "pollux_costs",
    "realloc_factor",
    "rigid_allocation",
    "sia_costs",
    "typed_options",
]


def rigid_allocation(job: JobState, placement: tuple[tuple[int, int], ...]) -> Allocation:
    """The job at its asked batch size on ``placement`` (Pollux's ``update_local_bsz``)."""
    atomic, accum = job.app.rigid_batch(sum(g for _, g in placement), job.job.asked_batch_size)
    return Allocation(placement, atomic, accum)


def node_groups(cluster: ElasticCluster) -> tuple[tuple[int, ...], ...]:
    """The nodes of each GPU type, in the cluster's type order (one group when untyped)."""
    return tuple(cluster.nodes_of(t) for t in cluster.gpu_types)


def largest_group_gpus(cluster: ElasticCluster) -> int:
    """GPUs of the largest GPU type (all GPUs when untyped): the most one job can hold."""
    return max(cluster.gpus_of(t) for t in cluster.gpu_types)


def _free_after(
    allocations: Mapping[str, Allocation], num_nodes: int, gpus_per_node: int
) -> list[int]:
    free = [gpus_per_node] * num_nodes
    for alloc in allocations.values():
        for node, gpus in alloc.placement:
            free[node] -= gpus
    return free


class FifoRigid:
    """First come, first served; each job at its asked GPUs and batch; no preemption.

    Jobs start strictly in submission order (no backfilling: a job that does
    not fit blocks those behind it) on the most-free-node placement, and keep
    their GPUs until done.
    """

    name = "fifo"

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        """Keep running jobs; start waiting ones in order while they fit."""
        cluster = state.cluster
        running = {j.job.name: j.allocation for j in state.jobs if j.allocation is not None}
        allocations: dict[str, Allocation] = dict(running)
        free = _free_after(allocations, cluster.num_nodes, cluster.gpus_per_node)
        groups = node_groups(cluster)
        for job in state.jobs:
            if job.job.name in allocations:
                continue
            asked = min(job.job.asked_replicas, largest_group_gpus(cluster))
            placement = most_free_in_group(free, asked, groups)
            if placement is None:
                break
            allocations[job.job.name] = rigid_allocation(job, placement)
        return allocations


@dataclass
class LasPollux:
    """Tiresias as the Pollux artifact runs it (its ``tiresias.py``): discretised 2-queue LAS.

    Queue 0 holds jobs in arrival order; a job whose attained service reaches
    ``threshold`` GPU-seconds (16 GPU-hours) moves to the end of queue 1 for
    good (no starvation rule). Each round, jobs are taken queue 0 first, then
    queue 1, each in order; a job runs if its asked GPUs fit in what is left
    (later, smaller jobs may pass a blocked one), else it is preempted. Running
    jobs keep their placement; newly started ones take GPUs from the most free
    nodes (on a typed cluster, of the type with most free GPUs; a starter that
    fits no type waits). Every job runs at its asked GPUs and batch size (rigid).

    Attributes
    ----------
    threshold
        Queue-0 limit in GPU-seconds.
    """

    threshold: float = 16 * 3600.0
    name: str = "las-pollux"
    _demoted: dict[str, int] = field(default_factory=dict, repr=False)

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        """Demote, order the two queues, keep or preempt, place new starters."""
        cluster = state.cluster
        for job in state.jobs:
            name = job.job.name
            if name not in self._demoted and job.attained_service >= self.threshold:
                self._demoted[name] = len(self._demoted)
        queue0 = [j for j in state.jobs if j.job.name not in self._demoted]
        queue1 = sorted(
            (j for j in state.jobs if j.job.name in self._demoted),
            key=lambda j: self._demoted[j.job.name],
        )
        left = cluster.total_gpus
        most = largest_group_gpus(cluster)
        chosen = []
        for job in queue0 + queue1:
            asked = min(job.job.asked_replicas, most)
            if asked <= left:
                chosen.append(job)
                left -= asked
        allocations = {j.job.name: j.allocation for j in chosen if j.allocation is not None}
        free = _free_after(allocations, cluster.num_nodes, cluster.gpus_per_node)
        groups = node_groups(cluster)
        for job in chosen:
            if job.job.name not in allocations:
                asked = min(job.job.asked_replicas, most)
                placement = most_free_in_group(free, asked, groups)
                if placement is not None:
                    allocations[job.job.name] = rigid_allocation(job, placement)
        return allocations


@dataclass(frozen=True)
class OptionLimits:
    """Caps on the options an elastic policy may give a job (defaults: the Pollux artifact's).

    Attributes
    ----------
    max_gpus
        Cap on any job's GPUs (the artifact's 64).
    fixed_batch
        Models trained at a fixed total batch size (the artifact: ncf at 32768).
    max_replicas
        Per-model GPU caps (the artifact: ncf 1).
    """

    max_gpus: int = 64
    fixed_batch: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"ncf": 32768})
    )
    max_replicas: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({"ncf": 1}))


@dataclass(frozen=True)
class PolluxParams:
    """Settings of :class:`Pollux` (defaults: the Pollux artifact's).

    Attributes
    ----------
    restart_delay
        delta in the re-allocation factor ``max(age - restarts * delta, 0) / (age + delta)``.
    epsilon
        Added to each speedup before the power mean (the artifact's 1e-3): a job
        left without GPUs costs ``1 / epsilon``.
    limits
        The options' caps.
    """

    restart_delay: float = 30.0
    epsilon: float = 1e-3
    limits: OptionLimits = field(default_factory=OptionLimits)


@dataclass(frozen=True)
class JobOptions:
    """One job's options in a round: GPUs (0 first), nodes, batch choice, goodput.

    Attributes
    ----------
    gpus, nodes
        GPUs and nodes of each option; option 0 is "no GPUs".
    atomic, accum
        The batch configuration of each option.
    goodput
        Progress per second of each option (0 for option 0).
    fair_goodput
        Goodput at the fair share ``ceil(M / J)`` GPUs on one node (capped at
        what the job may use): Pollux's base.
    gpu_type
        The GPU type of each option (``None`` for option 0); empty for
        type-unaware options, which run on whichever type has room.
    """

    gpus: tuple[int, ...]
    nodes: tuple[int, ...]
    atomic: tuple[int, ...]
    accum: tuple[int, ...]
    goodput: tuple[float, ...]
    fair_goodput: float
    gpu_type: tuple[str | None, ...] = ()

    def type_of(self, option: int) -> str | None:
        """The GPU type of ``option`` (``None``: option 0, or type-unaware options)."""
        return self.gpu_type[option] if self.gpu_type else None

    @property
    def speedup(self) -> tuple[float, ...]:
        """Pollux's speedup of each option: its goodput over the fair-share goodput."""
        base = self.fair_goodput if self.fair_goodput > 0 else max(self.goodput)
        return tuple(g / base for g in self.goodput)


def job_options(job: JobState, state: RoundState, limits: OptionLimits) -> JobOptions:
    """A job's options and their goodputs (shared by every elastic policy).

    Options: 0 GPUs; a chain size on one node (1, 2, 4 on 4-GPU nodes); ``k``
    whole nodes, ``k >= 2``; at most the job's cap. These are the
    configurations of Pollux's and Sia's artifacts for 4-GPU nodes, and any
    set of them whose total fits the cluster packs onto the nodes
    (:mod:`~ddlsched.algorithms.elastic.packing`). The batch size of each is the
    goodput-maximising one at the job's current epoch (or the fixed one). The
    fair share is ``ceil(M / J)`` GPUs on one node (the artifact's
    ``fair_replicas``), capped at what the job may use.
    """
    cluster = state.cluster
    app = job.app
    size_g = cluster.gpus_per_node
    cap = min(
        limits.max_gpus,
        app.max_replicas,
        cluster.total_gpus,
        limits.max_replicas.get(job.job.model, cluster.total_gpus),
    )
    singles = [g for g in chain_sizes(size_g) if g <= cap]
    wholes = [k * size_g for k in range(2, cluster.num_nodes + 1) if k * size_g <= cap]
    gpus = np.array(singles + wholes, dtype=int)
    nodes = np.where(gpus > size_g, gpus // size_g, 1)
    fair = min(math.ceil(cluster.total_gpus / len(state.jobs)), cap)
    epoch = job.epoch
    fixed = limits.fixed_batch.get(job.job.model)
    if fixed is not None:
        pairs = [app.rigid_batch(int(g), fixed) for g in np.append(gpus, fair)]
        atomic = np.array([p[0] for p in pairs])
        accum = np.array([p[1] for p in pairs])
        all_nodes = np.append(nodes, 1)
        good = app.goodput(all_nodes, np.append(gpus, fair), atomic, accum, epoch)
    else:
        atomic, accum, good = app.best_batches(np.append(nodes, 1), np.append(gpus, fair), epoch)
    return JobOptions(
        gpus=(0, *gpus.tolist()),
        nodes=(0, *nodes.tolist()),
        atomic=(0, *atomic[:-1].tolist()),
        accum=(0, *accum[:-1].tolist()),
        goodput=(0.0, *good[:-1].tolist()),
        fair_goodput=float(good[-1]),
    )


def typed_options(job: JobState, state: RoundState, limits: OptionLimits) -> JobOptions:
    """A job's options per GPU type: Sia's (job, type, nodes, GPUs) configurations.

    For every type of the cluster, the options of :func:`job_options` that fit
    that type's nodes, at the same batch configuration (a type's slowdown scales
    the whole iteration, so the best batch is the same on every type) and at the
    profiled goodput times the type's speed
    (:func:`~ddlsched.core.elastic.gpu_types.goodput_scale`). Option 0 is "no GPUs".
    """
    base = job_options(job, state, limits)
    cluster = state.cluster
    columns: list[tuple[int, int, int, int, float, str | None]] = [(0, 0, 0, 0, 0.0, None)]
    for gpu_type in cluster.gpu_types:
        room = cluster.gpus_of(gpu_type)
        speed = goodput_scale(job.job.model, gpu_type)
        columns.extend(
            (base.gpus[c], base.nodes[c], base.atomic[c], base.accum[c],
             base.goodput[c] * speed, gpu_type)
            for c in range(1, len(base.gpus))
            if base.gpus[c] <= room
        )  # fmt: skip
    gpus, nodes, atomic, accum, goodput, types = zip(*columns, strict=True)
    return JobOptions(gpus, nodes, atomic, accum, goodput, base.fair_goodput, types)


def realloc_factor(job: JobState, restart_delay: float) -> float:
    """Pollux's re-allocation factor ``max(age - restarts * delta, 0) / (age + delta)``.

    The share of the job's life not lost to restarts if it restarted once
    more (Pollux Section 4.2); it scales the value of every option that
    would move the job. A job that has not yet run, with restarts free
    (``delta = 0``), loses nothing: factor 1.
    """
    if job.age + restart_delay <= 0:
        return 1.0
    lost = job.num_restarts * restart_delay
    return max(job.age - lost, 0.0) / (job.age + restart_delay)


def current_gpus(job: JobState) -> int:
    """GPUs the job held last round (0 if none)."""
    return job.allocation.replicas if job.allocation is not None else 0


def current_option(job: JobState, cluster: ElasticCluster) -> tuple[str | None, int]:
    """The GPU type and count the job held last round (``(None, 0)`` if none)."""
    if job.allocation is None:
        return None, 0
    return placement_type(cluster, job.allocation.placement), job.allocation.replicas


def pollux_costs(
    job: JobState, options: JobOptions, state: RoundState, params: PolluxParams
) -> tuple[float, ...]:
    """``1 / (scaled speedup x re-allocation factor + epsilon)`` per option.

    Scaled speedup: the speedup divided by the GPUs per node (the artifact
    scales by dominant share x nodes, a constant). The factor applies to any
    option other than the job's current GPU count (a new job's first start
    included, as in the artifact where any change of state counts).
    """
    current = current_gpus(job)
    factor = realloc_factor(job, params.restart_delay)
    costs = []
    for gpus, speedup in zip(options.gpus, options.speedup, strict=True):
        scaled = speedup / state.cluster.gpus_per_node
        if gpus != current:
            scaled *= factor
        costs.append(1.0 / (scaled + params.epsilon))
    return tuple(costs)


def place_choice(
    state: RoundState, options: list[JobOptions], picks: list[int]
) -> dict[str, Allocation]:
    """Allocations from one option per job: chain packing per GPU type, batch of the option.

    Typed options go to their type's nodes. Type-unaware options on a typed
    cluster are first put into types by
    :func:`~ddlsched.algorithms.elastic.packing.assign_groups` (a count that fits
    no type shrinks to the job's largest option that fits). Packing
    (:func:`~ddlsched.algorithms.elastic.packing.pack_groups`) keeps jobs whose
    type and GPU count did not change where they were (so they do not restart).
    """
    cluster = state.cluster
    by_name = {job.job.name: opts for job, opts in zip(state.jobs, options, strict=True)}
    chosen = {
        job.job.name: (opts.type_of(pick), pick)
        for job, opts, pick in zip(state.jobs, options, picks, strict=True)
        if opts.gpus[pick] > 0
    }
    previous = {j.job.name: j.allocation.placement for j in state.jobs if j.allocation is not None}
    if cluster.typed and not any(opts.gpu_type for opts in options):
        chosen = _into_types(cluster, by_name, chosen, previous)
    counts = {name: (t, by_name[name].gpus[pick]) for name, (t, pick) in chosen.items()}
    groups = {t: cluster.nodes_of(t) for t in cluster.gpu_types}
    placements = pack_groups(counts, previous, groups, cluster.gpus_per_node)
    return {
        name: Allocation(placements[name], by_name[name].atomic[pick], by_name[name].accum[pick])
        for name, (_, pick) in chosen.items()
    }


def _into_types(
    cluster: ElasticCluster,
    options: Mapping[str, JobOptions],
    chosen: Mapping[str, tuple[str | None, int]],
    previous: Mapping[str, tuple[tuple[int, int], ...]],
) -> dict[str, tuple[str | None, int]]:
    """Type-unaware picks given a GPU type: job -> (type, option), by
    :func:`~ddlsched.algorithms.elastic.packing.assign_groups`."""
    counts = {name: options[name].gpus[pick] for name, (_, pick) in chosen.items()}
    kept = {
        name: placement_type(cluster, previous[name])
        for name in chosen
        if name in previous and sum(g for _, g in previous[name]) == counts[name]
    }
    room = {t: cluster.gpus_of(t) for t in cluster.gpu_types}
    allowed = {name: options[name].gpus for name in chosen}
    return {
        name: (gpu_type, options[name].gpus.index(gpus))
        for name, (gpu_type, gpus) in assign_groups(counts, allowed, kept, room).items()
    }


class RoundParams(Protocol):
    """What :class:`ExactRound` reads of a policy's settings: the limits on each job's
    options."""

    @property
    def limits(self) -> OptionLimits:
        """Most GPUs, replicas and fixed batch sizes of the options."""
        ...


class ExactRound(abc.ABC):
    """A policy whose round is one multiple-choice knapsack solved exactly: each job's
    options (:meth:`options`), their costs (the subclass's objective), one row of GPU
    capacity per pool (:func:`~ddlsched.algorithms.elastic.round_milp.solve_choice`: the
    whole cluster for type-unaware options, each GPU type for typed ones), then placement."""

    params: RoundParams

    @abc.abstractmethod
    def costs(self, job: JobState, options: JobOptions, state: RoundState) -> tuple[float, ...]:
        """The cost of each option of ``job`` this round (lower is better)."""

    def options(self, job: JobState, state: RoundState) -> JobOptions:
        """The job's options this round (type-unaware: :func:`job_options`)."""
        return job_options(job, state, self.params.limits)

    def problem(self, state: RoundState) -> tuple[ChoiceProblem, list[JobOptions]]:
        """The round's knapsack and each job's options (exposed for checks)."""
        options = [self.options(job, state) for job in state.jobs]
        costs = tuple(
            self.costs(job, opts, state) for job, opts in zip(state.jobs, options, strict=True)
        )
        gpus = tuple(opts.gpus for opts in options)
        cluster = state.cluster
        if not any(opts.gpu_type for opts in options):
            return ChoiceProblem(costs, gpus, cluster.total_gpus), options
        types = cluster.gpu_types
        pools = tuple(
            tuple(types.index(opts.type_of(c)) if c else 0 for c in range(len(opts.gpus)))
            for opts in options
        )
        room = tuple(cluster.gpus_of(t) for t in types)
        return ChoiceProblem(costs, gpus, room, pools), options

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        """Solve the round exactly, then place."""
        problem, options = self.problem(state)
        return place_choice(state, options, solve_choice(problem))


class Pollux(ExactRound):
    """Pollux's round objective solved exactly: the harmonic mean (p = -1) of speedups.

    Each round: for every active job, options and speedups
    (:func:`job_options`), costs with the re-allocation penalty
    (:func:`pollux_costs`); the exact optimum of the multiple-choice knapsack
    (:func:`~ddlsched.algorithms.elastic.round_milp.solve_choice`, HiGHS); placement by
    :func:`place_choice`, which keeps jobs whose GPU count did not change where they were.
    Type-unaware, as published: on a typed cluster it sees one pool of GPUs and
    goodputs at the profiled speed; its jobs land on whichever type has room and
    run at that type's speed.

    Parameters
    ----------
    params
        The objective's settings.
    """

    name = "pollux"
    params: PolluxParams

    def __init__(self, params: PolluxParams | None = None) -> None:
        self.params = params or PolluxParams()

    def costs(self, job: JobState, options: JobOptions, state: RoundState) -> tuple[float, ...]:
        """Pollux's cost of each option of ``job`` this round."""
        return pollux_costs(job, options, state, self.params)


@dataclass(frozen=True)
class SiaParams:
    """Settings of :class:`Sia` (defaults: Sia's artifact, SOSP 2023).

    Attributes
    ----------
    p
        The power of the normalised goodputs (Sia's ``p = -0.5``); must be
        non-zero. With ``p < 0`` the round minimises ``sum (s f)^p``, with
        ``p > 0`` it maximises ``sum (s f)^p``; either way the objective is
        ``max sign(p) * sum_j (s_j f_j)^p - lambda_n * (jobs left without GPUs)``.
    lambda_n
        Cost of a job left without GPUs (Sia's 1.1: more than the value 1 of
        a job's smallest option, ``1^p``, so that running a job at its
        smallest configuration beats pausing it unless restarts discount it).
    restart_delay
        delta in the re-allocation factor (we keep the simulator's 30 s; Sia's
        artifact uses measured per-model figures).
    clip
        Cap on ``(s f)^p`` (the artifact's 3000), which bounds the cost of an
        option whose goodput is (near) zero.
    limits
        The options' caps (shared with Pollux).
    """

    p: float = -0.5
    lambda_n: float = 1.1
    restart_delay: float = 30.0
    clip: float = 3000.0
    limits: OptionLimits = field(default_factory=OptionLimits)

    def __post_init__(self) -> None:
        if self.p == 0 or not math.isfinite(self.p):
            raise ValueError(f"SiaParams.p must be finite and non-zero, got {self.p!r}")
        if not self.clip > 0:
            raise ValueError(f"SiaParams.clip must be > 0, got {self.clip!r}")


def sia_costs(
    job: JobState,
    options: JobOptions,
    params: SiaParams,
    current_type: str | None = None,
) -> tuple[float, ...]:
    """Sia's per-option cost (to minimise): ``-sign(p) * min((s f)^p, clip)``, ``lambda_n`` for 0.

    ``s`` is the option's goodput normalised by the job's smallest positive
    goodput over its options, of every GPU type (Sia normalises to the minimal
    configuration, so every valid option has ``s >= 1``); ``f`` is Pollux's
    re-allocation factor for options other than the job's current GPU type
    (``current_type``) and count, taken as 1 while the job is younger than the
    restart delay (Sia's rule: a job that has barely started is not penalised).
    An option with zero goodput gets the clip value when ``p < 0`` (0 when
    ``p > 0``). Option 0 costs ``lambda_n`` whatever the sign of ``p``: pausing a
    job is penalised.
    """
    positive = [g for g in options.goodput if g > 0]
    base = min(positive) if positive else 1.0
    current = (current_type, current_gpus(job))
    factor = 1.0 if job.age < params.restart_delay else realloc_factor(job, params.restart_delay)
    sign = 1.0 if params.p < 0 else -1.0
    costs = [params.lambda_n]
    for c in range(1, len(options.gpus)):
        stays = (options.type_of(c), options.gpus[c]) == current
        value = options.goodput[c] / base * (1.0 if stays else factor)
        # A useless option (zero goodput) is as bad as the clip allows.
        worst = math.inf if params.p < 0 else 0.0
        powered = value**params.p if value > 0 else worst
        costs.append(sign * min(powered, params.clip))
    return tuple(costs)


class Sia(ExactRound):
    """Sia's round ILP, solved exactly (Jayaram Subramanya et al., SOSP 2023).

    Each round, per active job, its configurations (job, GPU type, nodes, GPUs):
    on an untyped cluster those of :func:`job_options`, on a typed one those of
    :func:`typed_options` (1, 2, 4 GPUs on a node or whole nodes, of each type,
    at the type's goodput); the costs of :func:`sia_costs`; the exact optimum of
    the multiple-choice knapsack with one capacity row per GPU type
    (:func:`~ddlsched.algorithms.elastic.round_milp.solve_choice`); placement by
    :func:`place_choice` on the chosen type's nodes.

    Differences from Sia's artifact, each deliberate: the goodput model is the
    oracle one of this package, per type scaled by Gavel's measured slowdowns
    (Sia learns it online, bootstrapping each type from a profile); the
    normalised goodputs are not rounded to two decimals before the solve
    (rounding creates ties the solver breaks arbitrarily); the ``lambda_a`` term
    (penalty on allocation changes) is not used (the artifact defines it but its
    objective does not contain it; the re-allocation factor plays that role);
    one restart delay for every model.

    Parameters
    ----------
    params
        The objective's settings.
    """

    name = "sia"
    params: SiaParams

    def __init__(self, params: SiaParams | None = None) -> None:
        self.params = params or SiaParams()

    def options(self, job: JobState, state: RoundState) -> JobOptions:
        """Per-type configurations on a typed cluster, else :func:`job_options`."""
        if state.cluster.typed:
            return typed_options(job, state, self.params.limits)
        return job_options(job, state, self.params.limits)

    def costs(self, job: JobState, options: JobOptions, state: RoundState) -> tuple[float, ...]:
        """Sia's cost of each option of ``job`` this round."""
        current_type, _ = current_option(job, state.cluster)
        return sia_costs(job, options, self.params, current_type)


@dataclass
class TypedGreedy:
    """A type-aware greedy: least attained service first, each job on its fastest type.

    Each round, with the fair share ``ceil(M / J)`` GPUs as every job's cap:
    first the jobs that ran last round, in order of attained service (least
    first; ties by arrival, then name), keep their GPU type and count when
    those are still within the cap and the room left, and moving to the best
    option would not pay within one round (``g_kept * L >= g_best * (L -
    restart)``, ``L`` the round length); then every other job, in the same
    order, takes among its :func:`typed_options` within the cap whose type
    still has room the one of highest goodput. Placement by
    :func:`place_choice`. No solver: a baseline for what Sia's exact round adds.

    Attributes
    ----------
    limits
        The options' caps (shared with Pollux and Sia).
    """

    limits: OptionLimits = field(default_factory=OptionLimits)
    name: str = "typed-greedy"

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        """Keep what still pays, then give the others their best fitting option; place."""
        cluster = state.cluster
        share = max(1, math.ceil(cluster.total_gpus / len(state.jobs)))
        room = {t: cluster.gpus_of(t) for t in cluster.gpu_types}
        options = [typed_options(job, state, self.limits) for job in state.jobs]
        picks = [0] * len(state.jobs)
        order = sorted(
            range(len(state.jobs)),
            key=lambda j: (
                state.jobs[j].attained_service,
                state.jobs[j].job.submit_time,
                state.jobs[j].job.name,
            ),
        )
        for keeping in (True, False):
            for j in order:
                if picks[j]:
                    continue
                opts = options[j]
                allowed = [
                    c
                    for c in range(1, len(opts.gpus))
                    if opts.gpus[c] <= min(share, room[opts.type_of(c)]) and opts.goodput[c] > 0
                ]
                pick = self._choose(state, state.jobs[j], opts, allowed, keeping)
                if pick:
                    picks[j] = pick
                    room[opts.type_of(pick)] -= opts.gpus[pick]
        return place_choice(state, options, picks)

    @staticmethod
    def _choose(
        state: RoundState, job: JobState, opts: JobOptions, allowed: list[int], keeping: bool
    ) -> int:
        """When ``keeping``, the option held if moving to the best allowed would not pay
        within a round (else 0); otherwise the best allowed option (0 if none)."""
        if not allowed:
            return 0
        best = max(allowed, key=lambda c: opts.goodput[c])
        if not keeping:
            return best
        current = current_option(job, state.cluster)
        held = [c for c in allowed if (opts.type_of(c), opts.gpus[c]) == current]
        length = state.round_length
        pays = opts.goodput[best] * (length - state.restart_time)
        return held[0] if held and opts.goodput[held[0]] * length >= pays else 0
