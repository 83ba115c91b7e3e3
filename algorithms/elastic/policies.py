"""Round-based policies for elastic jobs: Pollux (exact), Tiresias as in the Pollux study, FIFO.

Each policy is a small class with one method, ``allocate(state) -> {job: Allocation}``
(:class:`~algorithms.elastic.simulator.ElasticPolicy`); a fresh object per
simulation (the rigid ones keep their queues across rounds).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from algorithms.elastic.packing import chain_sizes, most_free_placement, pack_chain
from algorithms.elastic.round_milp import ChoiceProblem, solve_choice
from algorithms.elastic.simulator import Allocation, JobState, RoundState

__all__ = [
    "FifoRigid",
    "LasPollux",
    "Pollux",
    "PolluxParams",
    "pollux_options",
    "rigid_allocation",
]


def rigid_allocation(job: JobState, placement: tuple[tuple[int, int], ...]) -> Allocation:
    """The job at its asked batch size on ``placement`` (Pollux's ``update_local_bsz``)."""
    atomic, accum = job.app.rigid_batch(sum(g for _, g in placement), job.job.asked_batch_size)
    return Allocation(placement, atomic, accum)


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
        for job in state.jobs:
            if job.job.name in allocations:
                continue
            asked = min(job.job.asked_replicas, cluster.total_gpus)
            if asked > sum(free):
                break
            allocations[job.job.name] = rigid_allocation(job, most_free_placement(free, asked))
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
    nodes. Every job runs at its asked GPUs and batch size (rigid).

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
        chosen = []
        for job in queue0 + queue1:
            asked = min(job.job.asked_replicas, cluster.total_gpus)
            if asked <= left:
                chosen.append(job)
                left -= asked
        allocations = {j.job.name: j.allocation for j in chosen if j.allocation is not None}
        free = _free_after(allocations, cluster.num_nodes, cluster.gpus_per_node)
        for job in chosen:
            if job.job.name not in allocations:
                asked = min(job.job.asked_replicas, cluster.total_gpus)
                allocations[job.job.name] = rigid_allocation(job, most_free_placement(free, asked))
        return allocations


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
    max_gpus
        Cap on any job's GPUs (the artifact's 64).
    fixed_batch
        Models trained at a fixed total batch size (the artifact: ncf at 32768).
    max_replicas
        Per-model GPU caps (the artifact: ncf 1).
    """

    restart_delay: float = 30.0
    epsilon: float = 1e-3
    max_gpus: int = 64
    fixed_batch: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"ncf": 32768})
    )
    max_replicas: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({"ncf": 1}))


@dataclass(frozen=True)
class _Options:
    """One job's options: GPUs (0 first), nodes, batch choice, speedup."""

    gpus: tuple[int, ...]
    nodes: tuple[int, ...]
    atomic: tuple[int, ...]
    accum: tuple[int, ...]
    speedup: tuple[float, ...]


def pollux_options(job: JobState, state: RoundState, params: PolluxParams) -> _Options:
    """A job's options and their speedups (goodput over its fair-share goodput).

    Options: 0 GPUs; a chain size on one node (1, 2, 4 on 4-GPU nodes); ``k``
    whole nodes, ``k >= 2``; at most the job's cap. The batch size of each is
    the goodput-maximising one at the job's current epoch (or the fixed one).
    The base is the goodput at the fair share ``ceil(M / J)`` GPUs on one node
    (the artifact's ``fair_replicas``), capped at what the job may use.
    """
    cluster = state.cluster
    app = job.app
    size_g = cluster.gpus_per_node
    cap = min(
        params.max_gpus,
        app.max_replicas,
        cluster.total_gpus,
        params.max_replicas.get(job.job.model, cluster.total_gpus),
    )
    singles = [g for g in chain_sizes(size_g) if g <= cap]
    wholes = [k * size_g for k in range(2, cluster.num_nodes + 1) if k * size_g <= cap]
    gpus = np.array(singles + wholes, dtype=int)
    nodes = np.where(gpus > size_g, gpus // size_g, 1)
    fair = min(math.ceil(cluster.total_gpus / len(state.jobs)), cap)
    epoch = job.epoch
    fixed = params.fixed_batch.get(job.job.model)
    if fixed is not None:
        pairs = [app.rigid_batch(int(g), fixed) for g in np.append(gpus, fair)]
        atomic = np.array([p[0] for p in pairs])
        accum = np.array([p[1] for p in pairs])
        all_nodes = np.append(nodes, 1)
        good = app.goodput(all_nodes, np.append(gpus, fair), atomic, accum, epoch)
    else:
        atomic, accum, good = app.best_batches(np.append(nodes, 1), np.append(gpus, fair), epoch)
    base = good[-1] if good[-1] > 0 else float(np.max(good))
    speedup = good[:-1] / base
    return _Options(
        gpus=(0, *gpus.tolist()),
        nodes=(0, *nodes.tolist()),
        atomic=(0, *atomic[:-1].tolist()),
        accum=(0, *accum[:-1].tolist()),
        speedup=(0.0, *speedup.tolist()),
    )


def pollux_costs(
    job: JobState, options: _Options, state: RoundState, params: PolluxParams
) -> tuple[float, ...]:
    """``1 / (scaled speedup x re-allocation factor + epsilon)`` per option.

    Scaled speedup: the speedup divided by the GPUs per node (the artifact
    scales by dominant share x nodes, a constant). The factor applies to any
    option other than the job's current GPU count (a new job's first start
    included, as in the artifact where any change of state counts).
    """
    current = job.allocation.replicas if job.allocation is not None else 0
    delay = params.restart_delay
    factor = max(job.age - job.num_restarts * delay, 0.0) / (job.age + delay)
    costs = []
    for gpus, speedup in zip(options.gpus, options.speedup, strict=True):
        scaled = speedup / state.cluster.gpus_per_node
        if gpus != current:
            scaled *= factor
        costs.append(1.0 / (scaled + params.epsilon))
    return tuple(costs)


class Pollux:
    """Pollux's round objective solved exactly: the harmonic mean (p = -1) of speedups.

    Each round: for every active job, options and speedups
    (:func:`pollux_options`), costs with the re-allocation penalty
    (:func:`pollux_costs`); the exact optimum of the multiple-choice knapsack
    (:func:`~algorithms.elastic.round_milp.solve_choice`, HiGHS); placement by
    :func:`~algorithms.elastic.packing.pack_chain`, which keeps jobs whose GPU
    count did not change where they were.

    Parameters
    ----------
    params
        The objective's settings.
    """

    name = "pollux"

    def __init__(self, params: PolluxParams | None = None) -> None:
        self.params = params or PolluxParams()

    def problem(self, state: RoundState) -> tuple[ChoiceProblem, list[_Options]]:
        """The round's knapsack and each job's options (exposed for checks)."""
        options = [pollux_options(job, state, self.params) for job in state.jobs]
        costs = tuple(
            pollux_costs(job, opts, state, self.params)
            for job, opts in zip(state.jobs, options, strict=True)
        )
        gpus = tuple(opts.gpus for opts in options)
        return ChoiceProblem(costs, gpus, state.cluster.total_gpus), options

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        """Solve the round exactly, then place."""
        problem, options = self.problem(state)
        picks = solve_choice(problem)
        counts = {}
        for job, opts, pick in zip(state.jobs, options, picks, strict=True):
            if opts.gpus[pick] > 0:
                counts[job.job.name] = opts.gpus[pick]
        previous = {
            j.job.name: j.allocation.placement for j in state.jobs if j.allocation is not None
        }
        placements = pack_chain(
            counts, previous, state.cluster.num_nodes, state.cluster.gpus_per_node
        )
        allocations = {}
        for job, opts, pick in zip(state.jobs, options, picks, strict=True):
            name = job.job.name
            if name in placements:
                allocations[name] = Allocation(
                    placements[name], opts.atomic[pick], opts.accum[pick]
                )
        return allocations
