"""Round-based simulation of elastic jobs, after the Pollux simulator.

Time is cut into rounds of ``round_length`` seconds (60 s by default),
starting at 0. At the start of each round the policy sees every job that has
arrived and is not done (:class:`RoundState`) and returns an
:class:`Allocation` for each job it runs: GPUs per node and the per-GPU batch
configuration. During the round:

- a job whose placement differs from the previous round's (a start, a
  restart after a pause, or a re-allocation) first spends ``restart_time``
  seconds (30 s, the Pollux simulator's ``rescale_time``) making no progress;
  a change of batch size alone costs nothing (Pollux rescales batch sizes in
  place);
- it then progresses at its goodput
  (:meth:`~ddlsched.core.elastic.application.Application.goodput`), which is
  constant within an epoch and changes at epoch boundaries; on a typed
  cluster every node of a placement is of one GPU type and the goodput is
  scaled by that type's speed
  (:func:`~ddlsched.core.elastic.gpu_types.goodput_scale`), so a move to
  another type is a placement change and pays the restart;
- it completes the instant its progress reaches the target: the completion
  time is interpolated inside the round, not rounded to the round's end.

Jobs that arrive during a round wait for the next round (as in Pollux). The
run is deterministic: the same workload, policy and parameters give the same
allocations and completion times (the policy's wall-clock time per round is
reported apart from the outcome).
"""

from __future__ import annotations

import math
import time as clock
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Integral
from types import MappingProxyType
from typing import Protocol

from ddlsched.core.elastic import (
    Application,
    ElasticCluster,
    ElasticJob,
    ElasticWorkload,
    goodput_scale,
)
from ddlsched.core.elastic import load_application as _load_application

__all__ = [
    "Allocation",
    "ElasticPolicy",
    "ElasticResult",
    "ElasticSimParams",
    "JobState",
    "RoundRecord",
    "RoundState",
    "application_of",
    "placement_type",
    "simulate_elastic",
]

MAX_BATCH = 2**53
"""The largest batch (examples per step) an allocation may ask for: floats count it exactly
below, and numpy's int64 arithmetic of the goodput wrapped round past 2**63."""


def application_of(job: ElasticJob) -> Application:
    """The (cached) :class:`Application` of a job, at the job's epoch budget."""
    return _load_application(job.model, job.epochs)


@dataclass(frozen=True)
class Allocation:
    """What a job runs with during one round.

    Attributes
    ----------
    placement
        ``((node, gpus), ...)``: GPUs on each node used, nodes ascending.
    atomic_bsz
        Examples per GPU per micro-batch.
    accum_steps
        Extra micro-batches accumulated before each synchronisation.
    """

    placement: tuple[tuple[int, int], ...]
    atomic_bsz: int
    accum_steps: int = 0

    def __post_init__(self) -> None:
        if not self.placement:
            raise ValueError("Allocation.placement must name at least one node")
        whole = [v for pair in self.placement for v in pair] + [self.atomic_bsz, self.accum_steps]
        if any(isinstance(v, bool) or not isinstance(v, Integral) for v in whole):
            # A GPU count of 1.5 would run as 1.5 GPUs, and a float batch likewise.
            raise ValueError(
                f"Allocation: nodes, GPU counts, atomic_bsz and accum_steps must be whole "
                f"numbers, got placement {self.placement!r}, atomic_bsz {self.atomic_bsz!r}, "
                f"accum_steps {self.accum_steps!r}"
            )
        nodes = [node for node, _ in self.placement]
        if nodes != sorted(set(nodes)) or any(g < 1 for _, g in self.placement):
            raise ValueError(
                f"Allocation.placement must list distinct nodes ascending with >= 1 GPU, "
                f"got {self.placement!r}"
            )
        if self.atomic_bsz < 1 or self.accum_steps < 0:
            raise ValueError(
                f"Allocation batch: atomic_bsz {self.atomic_bsz} >= 1, accum_steps "
                f"{self.accum_steps} >= 0 required"
            )
        if self.batch_size > MAX_BATCH:
            # numpy's int64 wrapped round past 2**63 (a negative batch, a nonsense goodput).
            raise ValueError(
                f"Allocation batch: {self.replicas} GPUs x atomic_bsz {self.atomic_bsz} x "
                f"{self.accum_steps + 1} steps = {self.batch_size} examples, more than "
                f"{MAX_BATCH:.0e}"
            )

    @property
    def num_nodes(self) -> int:
        """Nodes the job spans."""
        return len(self.placement)

    @property
    def replicas(self) -> int:
        """GPUs the job uses."""
        return sum(g for _, g in self.placement)

    @property
    def batch_size(self) -> int:
        """Total batch size M = replicas x atomic_bsz x (accum_steps + 1)."""
        return self.replicas * self.atomic_bsz * (self.accum_steps + 1)


def placement_type(cluster: ElasticCluster, placement: tuple[tuple[int, int], ...]) -> str | None:
    """The GPU type of a placement's nodes (``None`` on an untyped cluster).

    Raises
    ------
    ValueError
        If the nodes are of more than one type (a job runs on one type at a time).
    """
    types = {cluster.type_of(node) for node, _ in placement}
    if len(types) > 1:
        raise ValueError(
            f"placement {placement!r} spans GPU types {sorted(map(str, types))}; a job runs "
            "on one type at a time"
        )
    return types.pop()


@dataclass(frozen=True)
class JobState:
    """A job as a policy sees it at the start of a round.

    Attributes
    ----------
    job
        The job.
    app
        Its model.
    progress
        Progress so far (iterations at ``M0``).
    allocation
        What it ran with in the previous round (``None``: nothing).
    num_restarts
        Re-allocations after its first start (Pollux's ``num_restarts``).
    attained_service
        GPU-seconds held so far (restart delays included).
    age
        Seconds since submission.
    """

    job: ElasticJob
    app: Application
    progress: float
    allocation: Allocation | None
    num_restarts: int
    attained_service: float
    age: float

    @property
    def epoch(self) -> int:
        """Completed epochs (the index of the epoch under way)."""
        return self.app.epoch_at(self.progress)

    @property
    def remaining(self) -> float:
        """Progress still to make."""
        return max(self.app.target_progress - self.progress, 0.0)


@dataclass(frozen=True)
class RoundState:
    """What a policy gets each round.

    Attributes
    ----------
    time
        The round's start (s).
    cluster
        The cluster.
    jobs
        Active jobs (arrived, not done), in submission order.
    round_length, restart_time
        The simulation's settings.
    """

    time: float
    cluster: ElasticCluster
    jobs: tuple[JobState, ...]
    round_length: float
    restart_time: float


class ElasticPolicy(Protocol):
    """A round-based allocation policy: one method, called once per round."""

    name: str

    def allocate(self, state: RoundState) -> Mapping[str, Allocation]:
        """The allocation of every job to run this round (others get nothing)."""
        ...


@dataclass(frozen=True)
class ElasticSimParams:
    """Settings of an elastic simulation.

    Attributes
    ----------
    round_length
        Seconds per round (Pollux: 60).
    restart_time
        Seconds a job makes no progress after a placement change (Pollux: 30).
    max_rounds
        Safety stop: raise if the workload is not done after this many rounds.
    """

    round_length: float = 60.0
    restart_time: float = 30.0
    max_rounds: int = 200_000

    def __post_init__(self) -> None:
        if not self.round_length > 0:
            raise ValueError(f"ElasticSimParams.round_length must be > 0, got {self.round_length}")
        if not self.restart_time >= 0:
            raise ValueError(
                f"ElasticSimParams.restart_time must be >= 0, got {self.restart_time}"
            )
        if self.max_rounds < 1:
            raise ValueError(f"ElasticSimParams.max_rounds must be >= 1, got {self.max_rounds}")


@dataclass(frozen=True)
class RoundRecord:
    """One round: its start, the allocations, and each active job's progress at its end.

    Attributes
    ----------
    time
        The round's start.
    allocations
        Job name -> allocation, for the jobs that ran.
    progress
        Job name -> progress at the end of the round (or at completion), for
        every job active in the round.
    """

    time: float
    allocations: Mapping[str, Allocation]
    progress: Mapping[str, float]


@dataclass(frozen=True)
class ElasticResult:
    """The outcome of :func:`simulate_elastic`.

    Attributes
    ----------
    policy
        The policy's name.
    workload, cluster, params
        The inputs.
    completion
        Job name -> completion time (s).
    records
        One record per round with active jobs, in time order.
    decision_seconds
        Wall-clock seconds of each round's policy call (not part of the
        deterministic outcome; excluded from equality).
    """

    policy: str
    workload: ElasticWorkload
    cluster: ElasticCluster
    params: ElasticSimParams
    completion: Mapping[str, float]
    records: tuple[RoundRecord, ...]
    decision_seconds: tuple[float, ...] = field(compare=False, default=())

    @property
    def jct(self) -> dict[str, float]:
        """Job completion time (completion - submission) per job."""
        return {j.name: self.completion[j.name] - j.submit_time for j in self.workload.jobs}

    @property
    def mean_jct(self) -> float:
        """Mean JCT over all jobs (s)."""
        values = self.jct.values()
        return sum(values) / len(values)

    @property
    def restarts(self) -> dict[str, int]:
        """Placement changes per job, first start included."""
        counts = dict.fromkeys(self.completion, 0)
        previous: dict[str, Allocation] = {}
        for record in self.records:
            for name, alloc in record.allocations.items():
                last = previous.get(name)
                if last is None or last.placement != alloc.placement:
                    counts[name] += 1
            previous = dict(record.allocations)
        return counts


@dataclass
class _Running:
    job: ElasticJob
    app: Application
    progress: float = 0.0
    allocation: Allocation | None = None
    starts: int = 0
    restart_left: float = 0.0
    attained_service: float = 0.0
    completion: float | None = None


def _advance(run: _Running, alloc: Allocation, speed: float, start: float, length: float) -> None:
    """Run a job for one round on ``alloc`` at ``speed`` times its profiled goodput: restart
    delay, then goodput epoch by epoch."""
    app = run.app
    delay = min(run.restart_left, length)
    run.restart_left -= delay
    now = start + delay
    end = start + length
    target = app.target_progress
    while now < end:
        epoch = app.epoch_at(run.progress)
        rate = speed * float(
            app.goodput(
                alloc.num_nodes, alloc.replicas, alloc.atomic_bsz, alloc.accum_steps, epoch
            )
        )
        if not rate > 0:
            raise ValueError(f"{run.job.name}: zero goodput on {alloc}")
        boundary = min(float(app.epoch_ends[epoch]), target)
        needed = (boundary - run.progress) / rate
        if now + needed <= end:
            run.progress = boundary
            now += needed
            if boundary >= target:
                run.completion = now
                break
        else:
            run.progress += rate * (end - now)
            now = end
    run.attained_service += alloc.replicas * (now - start)


def _check_allocations(
    allocations: Mapping[str, Allocation],
    active: Mapping[str, _Running],
    cluster: ElasticCluster,
    when: float,
) -> None:
    used = [0] * cluster.num_nodes
    for name, alloc in allocations.items():
        if name not in active:
            raise ValueError(f"round at {when:g} s: allocation for inactive job {name!r}")
        for node, gpus in alloc.placement:
            if not 0 <= node < cluster.num_nodes:
                raise ValueError(f"round at {when:g} s: {name}: no node {node}")
            used[node] += gpus
        try:
            placement_type(cluster, alloc.placement)
        except ValueError as error:
            raise ValueError(f"round at {when:g} s: {name}: {error}") from None
    over = [n for n, u in enumerate(used) if u > cluster.gpus_per_node]
    if over:
        raise ValueError(
            f"round at {when:g} s: node {over[0]} holds {used[over[0]]} GPUs "
            f"(> {cluster.gpus_per_node})"
        )


def simulate_elastic(
    workload: ElasticWorkload,
    policy: ElasticPolicy,
    cluster: ElasticCluster | None = None,
    params: ElasticSimParams | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ElasticResult:
    """Run ``policy`` on ``workload`` round by round until every job is done.

    Parameters
    ----------
    workload
        The jobs.
    policy
        A fresh policy object (policies may keep state across rounds).
    cluster
        Default 16 nodes x 4 GPUs.
    params
        Round length, restart time, safety stop.
    progress
        Called as ``progress(completed, total)`` after every round.

    Returns
    -------
    ElasticResult
        Completion times and the per-round record.

    Raises
    ------
    ValueError
        If the policy allocates beyond a node's GPUs or to an inactive job,
        or the run exceeds ``params.max_rounds``.
    """
    cluster = cluster or ElasticCluster()
    params = params or ElasticSimParams()
    length = params.round_length
    runs = [_Running(job, application_of(job)) for job in workload.jobs]
    records: list[RoundRecord] = []
    seconds: list[float] = []
    completion: dict[str, float] = {}
    next_arrival = 0
    active: dict[str, _Running] = {}
    index = 0
    for _ in range(params.max_rounds):
        if len(completion) == len(runs):
            break
        now = index * length
        next_arrival = _admit(runs, next_arrival, now, active)
        if not active:
            # Jump to the round in which the next job has arrived.
            index = max(index + 1, math.ceil(runs[next_arrival].job.submit_time / length))
            continue
        state = _round_state(active, cluster, now, params)
        started = clock.perf_counter()
        allocations = dict(policy.allocate(state))
        seconds.append(clock.perf_counter() - started)
        _check_allocations(allocations, active, cluster, now)
        _run_round(allocations, active, cluster, now, params)
        records.append(_record(now, allocations, active))
        for name in [n for n, r in active.items() if r.completion is not None]:
            completion[name] = active.pop(name).completion  # type: ignore[assignment]
        if progress is not None:
            progress(len(completion), len(runs))
        index += 1
    else:
        raise ValueError(f"simulate_elastic: not done after {params.max_rounds} rounds")
    return ElasticResult(
        policy=policy.name,
        workload=workload,
        cluster=cluster,
        params=params,
        completion=MappingProxyType(completion),
        records=tuple(records),
        decision_seconds=tuple(seconds),
    )


def _admit(
    runs: list[_Running], next_arrival: int, now: float, active: dict[str, _Running]
) -> int:
    """Add to ``active`` the runs submitted by ``now``, from ``next_arrival`` on (``runs``
    in submission order); the index of the next run to arrive."""
    while next_arrival < len(runs) and runs[next_arrival].job.submit_time <= now:
        run = runs[next_arrival]
        active[run.job.name] = run
        next_arrival += 1
    return next_arrival


def _round_state(
    active: Mapping[str, _Running], cluster: ElasticCluster, now: float, params: ElasticSimParams
) -> RoundState:
    """What the policy sees at the start of the round at ``now``: every active job's
    progress, allocation, restarts so far, attained service and age."""
    return RoundState(
        time=now,
        cluster=cluster,
        jobs=tuple(
            JobState(
                r.job,
                r.app,
                r.progress,
                r.allocation,
                max(r.starts - 1, 0),
                r.attained_service,
                now - r.job.submit_time,
            )
            for r in active.values()
        ),
        round_length=params.round_length,
        restart_time=params.restart_time,
    )


def _moves(previous: Allocation | None, alloc: Allocation) -> bool:
    """Whether running on ``alloc`` after ``previous`` is a (re)start: any change of nodes or
    GPUs per node, a change of GPU type included."""
    return previous is None or previous.placement != alloc.placement


def _run_round(
    allocations: Mapping[str, Allocation],
    active: Mapping[str, _Running],
    cluster: ElasticCluster,
    now: float,
    params: ElasticSimParams,
) -> None:
    """Run the round at ``now`` under ``allocations``: a job whose placement changed
    restarts (paying ``params.restart_time``), one without an allocation waits; each runs
    at the speed of its placement's GPU type."""
    for name, run in active.items():
        alloc = allocations.get(name)
        if alloc is None:
            run.allocation = None
            continue
        if _moves(run.allocation, alloc):
            run.starts += 1
            run.restart_left = params.restart_time
        run.allocation = alloc
        speed = goodput_scale(run.job.model, placement_type(cluster, alloc.placement))
        _advance(run, alloc, speed, now, params.round_length)


def _record(
    now: float, allocations: Mapping[str, Allocation], active: Mapping[str, _Running]
) -> RoundRecord:
    """The round's record: its start, the allocations by job name, each job's progress."""
    return RoundRecord(
        now,
        MappingProxyType(dict(sorted(allocations.items()))),
        MappingProxyType({name: run.progress for name, run in active.items()}),
    )
