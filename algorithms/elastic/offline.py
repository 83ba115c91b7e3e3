"""An offline, clairvoyant elastic schedule: shortest remaining time at the goodput ceiling first.

The registered policies choose among Pollux's options (1, 2 or 4 GPUs on a node or whole
nodes, batch sizes within the measured range, ncf on one GPU at 32768). The simulator
accepts more: any GPU count, any micro-batch, and the trace-scale bound
(:mod:`ddlsched.formulations.elastic_bounds`) charges every job only for what those
allow. :class:`SrptCeiling` is a schedule that uses them, to show how much of the gap
between the policies and the bound is the policies' option set: it is not an online
policy (it reads each job's whole remaining work, epoch by epoch, from the model and uses
configurations no policy of the study may pick) and is meant as an upper bound.

**Each round**, the active jobs are taken in order of their least remaining time (at
their best GPU count, epoch by epoch: preemptive SRPT on the time each job still needs
alone, Schrage 1968), and each takes, from the GPUs still free, the fewest GPUs whose
remaining time is within ``tolerance`` of the fastest it could have on them; a job keeps
its current GPUs when moving would not save ``restart_factor`` restarts over its remaining
time. Batch: no accumulation (for a given total batch and GPU count it only adds time)
and the total batch of highest goodput on a geometric grid reaching far beyond the
measured sizes (:data:`BATCH_GRID`). GPUs are placed keeping kept jobs where they are,
then on one node where it fits, else across the nodes with most free GPUs. Uniform
clusters only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from ddlsched.algorithms.elastic.simulator import Allocation, ElasticPolicy, JobState, RoundState

from ddlsched.core.elastic import Application
from ddlsched.core.registry import Registry

__all__ = [
    "BATCH_GRID",
    "OFFLINE_ELASTIC_SCHEDULES",
    "CeilingTable",
    "SrptCeiling",
    "SrptCeilingParams",
]

BATCH_GRID = 400
"""Total batch sizes tried per GPU count, geometric from the GPU count to ``10^4`` times
the largest measured batch."""


@dataclass(frozen=True)
class SrptCeilingParams:
    """Settings of :class:`SrptCeiling`.

    Attributes
    ----------
    tolerance
        A job takes the fewest GPUs whose remaining time is at most ``1 + tolerance``
        times the least on the GPUs free to it.
    restart_factor
        A running job moves only if that saves more than this many restart delays.
    by_area
        Order the jobs by remaining GPU-seconds instead of remaining time.
    """

    tolerance: float = 1.0
    restart_factor: float = 2.0
    by_area: bool = False

    def __post_init__(self) -> None:
        for name in ("tolerance", "restart_factor"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"SrptCeilingParams.{name} must be finite and >= 0, got {value}")


class CeilingTable:
    """Per epoch and GPU count, a job's best goodput and micro-batch (no accumulation),
    and the seconds its later epochs take on each count.

    Parameters
    ----------
    app
        The job's model at its epoch budget.
    most_gpus
        The largest GPU count (the cluster's GPUs).
    gpus_per_node
        GPUs per node: counts above it span ``ceil(R / gpus_per_node)`` nodes.
    """

    def __init__(self, app: Application, most_gpus: int, gpus_per_node: int) -> None:
        self.app = app
        replicas = np.arange(1, most_gpus + 1)
        nodes = np.ceil(replicas / gpus_per_node).astype(int)
        top = math.log(1e4 * float(app.max_batch_size))
        steps = np.linspace(0.0, 1.0, BATCH_GRID)[None, :]
        batches = np.exp(np.log(replicas)[:, None] + steps * (top - np.log(replicas)[:, None]))
        atomic = np.maximum(np.round(batches / replicas[:, None]), 1).astype(np.int64)
        rates, micro = [], []
        for epoch in range(app.epochs):
            good = app.goodput(nodes[:, None], replicas[:, None], atomic, 0, epoch)
            best = np.argmax(good, axis=1)
            rates.append(good[np.arange(most_gpus), best])
            micro.append(atomic[np.arange(most_gpus), best])
        self.rate = np.array(rates)
        self.atomic = np.array(micro)
        works = np.diff(np.concatenate(([0.0], app.epoch_ends[: app.epochs])))
        seconds = works[:, None] / self.rate
        self.later = np.zeros_like(seconds)
        self.later[:-1] = np.cumsum(seconds[::-1], axis=0)[::-1][1:]

    def remaining(self, progress: float) -> np.ndarray:
        """Seconds still needed on each GPU count ``1 .. most_gpus`` kept to the end."""
        app = self.app
        epoch = min(app.epoch_at(progress), app.epochs - 1)
        left = max(float(app.epoch_ends[epoch]) - progress, 0.0)
        return np.asarray(left / self.rate[epoch] + self.later[epoch], dtype=float)


class SrptCeiling:
    """SRPT at the goodput ceiling, offline and clairvoyant (module docstring).

    Parameters
    ----------
    params
        The width rule and the restart rule.
    """

    name = "srpt-ceiling"

    def __init__(self, params: SrptCeilingParams | None = None) -> None:
        self.params = params or SrptCeilingParams()
        self._tables: dict[tuple[str, int, int, int], CeilingTable] = {}

    def _table(self, job: JobState, state: RoundState) -> CeilingTable:
        cluster = state.cluster
        key = (job.job.model, job.job.epochs, cluster.total_gpus, cluster.gpus_per_node)
        if key not in self._tables:
            self._tables[key] = CeilingTable(job.app, cluster.total_gpus, cluster.gpus_per_node)
        return self._tables[key]

    def allocate(self, state: RoundState) -> Mapping[str, Allocation]:
        """This round's allocations (module docstring).

        Raises
        ------
        ValueError
            On a typed cluster.
        """
        if state.cluster.typed:
            raise ValueError("srpt-ceiling schedules uniform clusters only")
        times = {
            job.job.name: self._table(job, state).remaining(job.progress) for job in state.jobs
        }
        order = sorted(state.jobs, key=lambda job: self._priority(times[job.job.name]))
        free = state.cluster.total_gpus
        widths: dict[str, int] = {}
        for job in order:
            if free == 0:
                break
            width = self._width(job, times[job.job.name][:free], state.restart_time)
            widths[job.job.name] = width
            free -= width
        return self._place(state, widths)

    def _priority(self, seconds: np.ndarray) -> float:
        """The job's place in the order: its least remaining time, or with ``by_area`` its
        remaining GPU-seconds at the width :meth:`_width` would pick on a free cluster."""
        if not self.params.by_area:
            return float(seconds.min())
        width = int(np.argmax(seconds <= (1 + self.params.tolerance) * seconds.min())) + 1
        return float(seconds[width - 1] * width)

    def _width(self, job: JobState, seconds: np.ndarray, restart: float) -> int:
        """The GPU count for ``job``, given its remaining ``seconds`` on ``1 .. free`` GPUs."""
        fewest = int(np.argmax(seconds <= (1 + self.params.tolerance) * seconds.min())) + 1
        current = job.allocation.replicas if job.allocation is not None else 0
        if 0 < current <= len(seconds):
            saved = seconds[current - 1] - seconds[fewest - 1]
            if saved <= self.params.restart_factor * restart:
                return current
        return fewest

    def _place(self, state: RoundState, widths: dict[str, int]) -> dict[str, Allocation]:
        """Kept jobs where they were, then the others on one node where they fit, else on
        the nodes with most free GPUs."""
        cluster = state.cluster
        free = [cluster.gpus_per_node] * cluster.num_nodes
        placements: dict[str, tuple[tuple[int, int], ...]] = {}
        jobs = {job.job.name: job for job in state.jobs}
        for name, width in widths.items():
            previous = jobs[name].allocation
            if (
                previous is not None
                and previous.replicas == width
                and all(free[node] >= gpus for node, gpus in previous.placement)
            ):
                for node, gpus in previous.placement:
                    free[node] -= gpus
                placements[name] = previous.placement
        for name, width in widths.items():
            if name not in placements:
                placements[name] = _take(free, width)
        chosen = {}
        for name, placement in placements.items():
            table = self._table(jobs[name], state)
            epoch = min(jobs[name].epoch, table.app.epochs - 1)
            atomic = int(table.atomic[epoch, sum(g for _, g in placement) - 1])
            chosen[name] = Allocation(placement, atomic, 0)
        return chosen


def _take(free: list[int], width: int) -> tuple[tuple[int, int], ...]:
    """Take ``width`` GPUs from ``free`` (per node, updated): the fullest-fitting single
    node if one holds them, else the nodes with most free GPUs first."""
    fits = [node for node, room in enumerate(free) if room >= width]
    if fits:
        node = min(fits, key=lambda n: (free[n], n))
        free[node] -= width
        return ((node, width),)
    taken = []
    for node in sorted(range(len(free)), key=lambda n: (-free[n], n)):
        if width == 0:
            break
        share = min(free[node], width)
        if share:
            taken.append((node, share))
            free[node] -= share
            width -= share
    return tuple(sorted(taken))


OFFLINE_ELASTIC_SCHEDULES: Registry[Callable[[], ElasticPolicy]] = Registry(
    "offline elastic schedule"
)
"""Offline schedules run through the simulator for upper bounds (not online policies, so
not in :data:`~ddlsched.algorithms.elastic.ELASTIC_POLICIES`), each a factory of a fresh one."""
OFFLINE_ELASTIC_SCHEDULES.add(
    "srpt-ceiling", SrptCeiling, "clairvoyant SRPT at the goodput ceiling, any GPU count and batch"
)
