"""Offline, clairvoyant elastic schedules at the goodput ceiling, for upper bounds.

The registered policies choose among Pollux's options (1, 2 or 4 GPUs on a node or whole
nodes, batch sizes within the measured range, ncf on one GPU at 32768). The simulator
accepts more: any GPU count, any micro-batch, and the trace-scale bound
(:mod:`ddlsched.formulations.elastic_bounds`) charges every job only for what those
allow. :class:`SrptCeiling` and :class:`MarginalCeiling` are schedules that use them, to
show how much of the gap between the policies and the bound is the policies' option set:
they are not online policies (they read each job's whole remaining work, epoch by epoch,
from the model and use configurations no policy of the study may pick) and are meant as
upper bounds.

**SrptCeiling**: each round, the active jobs are taken in order of their least remaining time (at
their best GPU count, epoch by epoch: preemptive SRPT on the time each job still needs
alone, Schrage 1968), and each takes, from the GPUs still free, the fewest GPUs whose
remaining time is within ``tolerance`` of the fastest it could have on them; a job keeps
its current GPUs when moving would not save ``restart_factor`` restarts over its remaining
time.

**MarginalCeiling**: each round, GPUs go where they cut most of ``sum_j w_j T_j(R_j)``,
``T_j(R)`` the job's remaining time on ``R`` GPUs kept to its end (:data:`NO_GPUS` on none; plus
``restart_factor`` restart delays on any count but the current one) and ``w_j = T_j^min
^ -srpt_power`` (SRPT's order as a weight, as ``asrpt-elastic`` does): repeatedly, the
job and the larger count of best saving per added GPU (a look-ahead over every larger
count, as ``T`` with the restart term is not convex), until the GPUs run out or no
addition saves anything. Every job first gets a GPU while GPUs last (its ``T`` falls
from infinity), as in Pollux.

Both: batch: no accumulation (for a given total batch and GPU count it only adds time)
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
    "MarginalCeiling",
    "MarginalCeilingParams",
    "SrptCeiling",
    "SrptCeilingParams",
]

NO_GPUS = 1e12
"""The remaining time :class:`MarginalCeiling` counts for a job without GPUs: so large that
every job first gets one GPU while GPUs last, the heaviest weight (shortest job) first."""

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


@dataclass(frozen=True)
class MarginalCeilingParams:
    """Settings of :class:`MarginalCeiling`.

    Attributes
    ----------
    srpt_power
        ``w_j = T_j^min ^ -srpt_power`` (0: the least total remaining time; larger: closer
        to SRPT).
    restart_factor
        A count other than the current one costs this many restart delays more.

    The defaults were chosen on workload 3 at 16 x 4 among ``srpt_power`` 0, 0.5, 0.8, 1,
    1.25, 2 and ``restart_factor`` 2, 6 (total JCT 372,598 s at 0, 261,848 s at 1 and 2,
    258,710 s at 1 and 6), then run on all eight.
    """

    srpt_power: float = 1.0
    restart_factor: float = 6.0

    def __post_init__(self) -> None:
        for name in ("srpt_power", "restart_factor"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(
                    f"MarginalCeilingParams.{name} must be finite and >= 0, got {value}"
                )


class MarginalCeiling(SrptCeiling):
    """GPUs where they save most weighted remaining time, at the goodput ceiling, offline
    and clairvoyant (module docstring; placement and batches as :class:`SrptCeiling`).

    Parameters
    ----------
    params
        The weight and the restart term.
    """

    name = "marginal-ceiling"

    def __init__(self, params: MarginalCeilingParams | None = None) -> None:
        super().__init__()
        self.marginal = params or MarginalCeilingParams()

    def allocate(self, state: RoundState) -> Mapping[str, Allocation]:
        """This round's allocations (module docstring).

        Raises
        ------
        ValueError
            On a typed cluster.
        """
        if state.cluster.typed:
            raise ValueError("marginal-ceiling schedules uniform clusters only")
        costs = [self._costs(job, state) for job in state.jobs]
        widths = _fill(costs, state.cluster.total_gpus)
        return self._place(
            state, {job.job.name: w for job, w in zip(state.jobs, widths, strict=True) if w}
        )

    def _costs(self, job: JobState, state: RoundState) -> np.ndarray:
        """``w T(R)`` for ``R = 0 .. G`` (module docstring)."""
        seconds = self._table(job, state).remaining(job.progress)
        current = job.allocation.replicas if job.allocation is not None else 0
        moved = np.full(len(seconds) + 1, self.marginal.restart_factor * state.restart_time)
        if current:
            moved[current] = 0.0
        else:
            moved[:] = state.restart_time
        weight = max(float(seconds.min()), 1.0) ** -self.marginal.srpt_power
        return weight * (np.concatenate(([NO_GPUS], seconds)) + moved)


def _fill(costs: list[np.ndarray], gpus: int) -> list[int]:
    """GPU counts, from none: repeatedly the job and larger count of best saving per added
    GPU, until the GPUs run out or nothing saves."""
    widths = [0] * len(costs)
    free = gpus
    while free > 0:
        best, chosen, count = 0.0, -1, 0
        for k, cost in enumerate(costs):
            now = widths[k]
            top = min(len(cost) - 1, now + free)
            if top <= now:
                continue
            saving = (cost[now] - cost[now + 1 : top + 1]) / np.arange(1, top - now + 1)
            step = int(np.argmax(saving))
            if saving[step] > best:
                best, chosen, count = float(saving[step]), k, now + 1 + step
        if chosen < 0:
            break
        free -= count - widths[chosen]
        widths[chosen] = count
    return widths


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
OFFLINE_ELASTIC_SCHEDULES.add(
    "marginal-ceiling",
    MarginalCeiling,
    "GPUs where they save most SRPT-weighted remaining time, at the goodput ceiling",
)
