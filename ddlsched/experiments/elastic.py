"""Elastic runs as a researcher keeps them: checked, per job, per round, side by side.

:func:`run_elastic` runs one policy of :data:`ddlsched.algorithms.elastic.ELASTIC_POLICIES` (or
a policy object) in the round-based simulator, checks the run with the independent
:func:`ddlsched.proofs_checks.elastic.check_elastic` and bounds its total JCT from below
(:func:`ddlsched.formulations.elastic_bounds.elastic_flow_bound`); the answer,
:class:`ElasticRun`, gives one row per job (:attr:`ElasticRun.jobs`), one per round
(:attr:`ElasticRun.rounds`), the figures of the run (:meth:`ElasticRun.summary`) and a file
(:meth:`ElasticRun.write`). :func:`compare_elastic` runs several policies on one workload and
cluster (:class:`ElasticComparison`, one row per policy). The façades
:func:`ddlsched.api.simulate_elastic` and :func:`ddlsched.api.compare_elastic` call these,
and so do ``ddlsched simulate`` and ``ddlsched compare`` on a Pollux workload.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, NotRequired, TypedDict

import numpy as np

if TYPE_CHECKING:
    from ddlsched.algorithms.elastic import (
        Allocation,
        ElasticPolicy,
        ElasticResult,
        ElasticSimParams,
    )
    from ddlsched.core.elastic import ElasticCluster, ElasticWorkload
    from ddlsched.formulations.elastic_bounds import ElasticFlowBound

__all__ = [
    "RUN_FORMAT",
    "AllocationRow",
    "ComparisonSummary",
    "ElasticComparison",
    "ElasticRun",
    "ElasticSandwich",
    "JobRow",
    "PolicyRow",
    "RoundRow",
    "RunSettings",
    "RunSummary",
    "SandwichRecord",
    "Settings",
    "compare_elastic",
    "elastic_sandwich",
    "run_elastic",
]

RUN_FORMAT = "ddlsched.elastic-run/1"
"""The ``format`` field of a file :meth:`ElasticRun.write` writes."""


class JobRow(TypedDict):
    """One job of a run (:attr:`ElasticRun.jobs`): times in seconds."""

    name: str
    model: str
    arrival: float
    completion: float
    jct: float
    restarts: int
    gpu_seconds: float


class AllocationRow(TypedDict):
    """One job's allocation in a round: ``placement`` as ``[[node, gpus], ...]``, and on a
    typed cluster the ``gpu_type`` of its nodes."""

    placement: list[list[int]]
    gpus: int
    atomic_bsz: int
    accum_steps: int
    gpu_type: NotRequired[str]


class RoundRow(TypedDict):
    """One round with active jobs (:attr:`ElasticRun.rounds`)."""

    time: float
    gpus_in_use: int
    allocations: dict[str, AllocationRow]


class Settings(TypedDict):
    """What a run or a comparison was given: the workload's file (if read from one) and
    size, the cluster's fields, the round length and restart delay (s)."""

    workload: str | None
    jobs: int
    cluster: dict[str, object]
    round_length: float
    restart_time: float


class RunSettings(Settings):
    """:class:`Settings` and the policy (:meth:`ElasticRun.settings`)."""

    policy: str


NO_OFFLINE = (
    "no offline schedule computed; use compare --trace (the elastic sandwich) or "
    "ddlsched.elastic.sandwich"
)
"""What one run's summary says of the optimum from above."""


class RunSummary(TypedDict):
    """The figures of a run (:meth:`ElasticRun.summary`), times in seconds."""

    method: str
    jobs: int
    cluster: str
    mean_jct: float
    p50_jct: float
    p95_jct: float
    p99_jct: float
    makespan: float
    total_flow_time: float
    flow_lower_bound: float
    flow_ratio: float | None
    flow_model: str
    flow_upper_bound: float | None
    flow_upper_bound_method: str | None
    flow_upper_over_lower: float | None
    flow_upper_bound_note: str
    rounds: int
    restarts: int
    gpu_seconds: float
    median_decision_s: NotRequired[float]
    verified: bool
    violations: list[str]


class PolicyRow(TypedDict):
    """One policy's row of a comparison (:meth:`ElasticComparison.rows`): the figures of
    its :class:`RunSummary` a table shows, in order."""

    policy: str
    mean_jct: float
    p50_jct: float
    p95_jct: float
    p99_jct: float
    makespan: float
    restarts: int
    gpu_seconds: float
    flow_ratio: float | None
    verified: bool


class ComparisonSummary(TypedDict):
    """A comparison as one record (:meth:`ElasticComparison.summary`)."""

    settings: Settings
    cluster: str
    policies: list[PolicyRow]
    interrupted: bool


class SandwichRecord(TypedDict):
    """A sandwich as one record (:meth:`ElasticSandwich.to_dict`), totals in seconds."""

    flow_lower_bound: float
    flow_lower_bound_method: str
    lower_per_job: float
    lower_squashed: float
    lower_combined: float
    lower_lagrangian: float
    flow_upper_bound: float
    flow_upper_bound_method: str
    flow_upper_over_lower: float | None
    best_online: str | None
    best_online_over_lower: float | None
    totals: dict[str, float]
    failed: list[str]
    interrupted: bool


@dataclass(frozen=True)
class ElasticRun:
    """One elastic simulation, checked and bounded.

    Attributes
    ----------
    result
        The simulator's outcome (completion times and every round's allocations).
    violations
        What the independent check found wrong (empty: the run and its figures are right).
    flow_lower_bound
        A lower bound on the total JCT of any run of this simulator on this workload and
        cluster (s).
    source
        Where the workload was read from (a path), if from a file.

    Examples
    --------
    >>> import ddlsched, pandas  # doctest: +SKIP
    >>> run = ddlsched.simulate_elastic("workload-6.csv", "pollux", limit=20)  # doctest: +SKIP
    >>> pandas.DataFrame(run.jobs).jct.mean()  # doctest: +SKIP
    """

    result: ElasticResult
    violations: tuple[str, ...]
    flow_lower_bound: float
    source: str | None = None

    @property
    def policy(self) -> str:
        """The policy's name."""
        return self.result.policy

    @property
    def verified(self) -> bool:
        """Whether the independent check found nothing wrong."""
        return not self.violations

    @property
    def jobs(self) -> list[JobRow]:
        """One record per job, in submission order: ``name``, ``model``, ``arrival``,
        ``completion``, ``jct`` (completion - arrival, s), ``restarts`` (placement changes,
        the first start included, each costing the restart delay) and ``gpu_seconds`` (GPUs
        held times seconds, restart delays included). ``pandas.DataFrame(run.jobs)`` is a
        table of them."""
        result = self.result
        restarts = result.restarts
        held = _gpu_seconds(result)
        return [
            JobRow(
                name=job.name,
                model=job.model,
                arrival=job.submit_time,
                completion=result.completion[job.name],
                jct=result.completion[job.name] - job.submit_time,
                restarts=restarts[job.name],
                gpu_seconds=held[job.name],
            )
            for job in result.workload.jobs
        ]

    @property
    def rounds(self) -> list[RoundRow]:
        """One record per round with active jobs, in time order: ``time`` (its start),
        ``gpus_in_use`` and ``allocations`` (job name -> ``placement`` as ``[[node, gpus],
        ...]``, ``gpus``, ``atomic_bsz``, ``accum_steps``, and on a typed cluster the
        ``gpu_type`` of its nodes)."""
        cluster = self.result.cluster
        return [
            RoundRow(
                time=record.time,
                gpus_in_use=sum(a.replicas for a in record.allocations.values()),
                allocations={
                    name: _allocation_row(alloc, cluster)
                    for name, alloc in record.allocations.items()
                },
            )
            for record in self.result.records
        ]

    def gpus_in_use(self) -> tuple[list[float], list[int]]:
        """GPUs held over time as a step function: ``(times, gpus)``, ``gpus[k]`` held from
        ``times[k]`` to ``times[k + 1]``; 0 between rounds without active jobs and after the
        last round."""
        length = self.result.params.round_length
        times: list[float] = []
        gpus: list[int] = []
        for record in self.result.records:
            if times and record.time > times[-1] + length:
                times.append(times[-1] + length)
                gpus.append(0)
            times.append(record.time)
            gpus.append(sum(a.replicas for a in record.allocations.values()))
        if times:
            times.append(times[-1] + length)
            gpus.append(0)
        return times, gpus

    def settings(self) -> RunSettings:
        """What produced the run: policy, workload source and size, cluster, round length and
        restart delay."""
        result = self.result
        shared = _settings(result.workload, result.cluster, result.params, self.source)
        return RunSettings(policy=self.policy, **shared)

    def summary(self) -> RunSummary:
        """The run's figures: ``mean_jct`` (the mean of :attr:`jobs`' ``jct``), ``p50_jct``,
        ``p95_jct``, ``p99_jct`` (linear interpolation, as ``numpy.percentile``),
        ``makespan`` (the last completion), ``total_flow_time``, ``flow_lower_bound``,
        ``flow_ratio`` (their ratio: a proven upper bound on the run's total JCT over the
        least any run of this simulator reaches), ``flow_model`` (``"elastic"``),
        ``flow_upper_bound``, ``flow_upper_bound_method`` and ``flow_upper_over_lower``
        (``None``: one run computes no offline schedule, and its own total would be an upper
        end that says nothing about it; :func:`elastic_sandwich` gives the best over every
        schedule), ``flow_upper_bound_note`` saying so, ``rounds``, ``restarts``, ``gpu_seconds``
        (totals over the jobs),
        ``median_decision_s`` (the policy's wall-clock time per round: machine-dependent),
        ``verified`` and the first ten ``violations``."""
        rows = self.jobs
        jcts = [row["jct"] for row in rows]
        flow = math.fsum(jcts)
        bound = self.flow_lower_bound
        return RunSummary(
            method=self.policy,
            jobs=len(rows),
            cluster=_cluster_text(self.result.cluster),
            mean_jct=statistics.fmean(jcts),
            p50_jct=float(np.percentile(jcts, 50)),
            p95_jct=float(np.percentile(jcts, 95)),
            p99_jct=float(np.percentile(jcts, 99)),
            makespan=max(row["completion"] for row in rows),
            total_flow_time=flow,
            flow_lower_bound=bound,
            flow_ratio=flow / bound if bound > 0 else None,
            flow_model="elastic",
            flow_upper_bound=None,
            flow_upper_bound_method=None,
            flow_upper_over_lower=None,
            flow_upper_bound_note=NO_OFFLINE,
            rounds=len(self.result.records),
            restarts=sum(row["restarts"] for row in rows),
            gpu_seconds=math.fsum(row["gpu_seconds"] for row in rows),
            median_decision_s=statistics.median(self.result.decision_seconds or (0.0,)),
            verified=self.verified,
            violations=list(self.violations[:10]),
        )

    def to_dict(self) -> dict[str, object]:
        """The run as one document: ``format`` (:data:`RUN_FORMAT`), ``producer`` (the
        package version and git revision that ran it), ``settings``, ``summary`` (less the
        machine-dependent ``median_decision_s``, so that the same run of the same code gives
        the same bytes), ``jobs`` and ``rounds``."""
        from ddlsched.provenance import current_producer

        summary = self.summary()
        del summary["median_decision_s"]
        return {
            "format": RUN_FORMAT,
            "producer": dataclasses.asdict(current_producer()),
            "settings": self.settings(),
            "summary": summary,
            "jobs": self.jobs,
            "rounds": self.rounds,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_dict` as JSON to ``path`` atomically: a reader, or a run stopped
        while writing, never leaves or sees half a file (the previous file stays whole).

        Raises
        ------
        InputError
            When ``path`` cannot be written, naming it and why.
        """
        from ddlsched.core.io import write_text_atomic

        # Compact: workload 6 (160 jobs) has about a thousand rounds, each with its allocations.
        text = json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False)
        write_text_atomic(path, text + "\n")


@dataclass(frozen=True)
class ElasticComparison:
    """Several policies on one workload and cluster.

    Attributes
    ----------
    runs
        One checked run per policy, in the order asked (those finished, if interrupted).
    workload, cluster, params
        What every run shares.
    source
        Where the workload was read from (a path), if from a file.
    interrupted
        Whether Ctrl-C stopped the comparison before every policy ran.
    """

    runs: tuple[ElasticRun, ...]
    workload: ElasticWorkload
    cluster: ElasticCluster
    params: ElasticSimParams
    source: str | None = None
    interrupted: bool = False

    def rows(self) -> list[PolicyRow]:
        """One row per policy: its name and the figures of its :meth:`ElasticRun.summary`
        a :class:`PolicyRow` holds."""
        return [_policy_row(run.summary()) for run in self.runs]

    def summary(self) -> ComparisonSummary:
        """The ``settings`` every run shares (:meth:`ElasticRun.settings` less the policy),
        the ``cluster`` in short (``16 x 4``), the :meth:`rows` (as ``policies``) and whether
        the comparison was ``interrupted``."""
        return ComparisonSummary(
            settings=_settings(self.workload, self.cluster, self.params, self.source),
            cluster=_cluster_text(self.cluster),
            policies=self.rows(),
            interrupted=self.interrupted,
        )


def run_elastic(
    workload: ElasticWorkload,
    policy: ElasticPolicy,
    cluster: ElasticCluster,
    params: ElasticSimParams,
    source: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ElasticRun:
    """Simulate ``policy`` on ``workload`` (jobs asking more GPUs than one job can hold
    capped, with a warning: :func:`~ddlsched.core.elastic.fit_to_cluster`), check the run
    and bound its total JCT.

    Parameters
    ----------
    workload, cluster, params
        The jobs, the cluster and the simulation's settings.
    policy
        A fresh policy object.
    source
        Where the workload came from (kept in :meth:`ElasticRun.settings`).
    progress
        Called as ``progress(completed, total)`` after every round.

    Raises
    ------
    ValueError
        When the policy allocates beyond a node or to an inactive job, or the run exceeds
        ``params.max_rounds``.
    """
    from ddlsched.algorithms.elastic import simulate_elastic
    from ddlsched.core.elastic import fit_to_cluster
    from ddlsched.formulations.elastic_bounds import elastic_flow_bound
    from ddlsched.proofs_checks.elastic import check_elastic

    workload = fit_to_cluster(workload, cluster, source or "workload")
    result = simulate_elastic(workload, policy, cluster, params, progress)
    bound = elastic_flow_bound(
        workload.jobs, cluster.total_gpus, params.round_length, params.restart_time
    )
    return ElasticRun(result, tuple(check_elastic(result)), bound.value, source)


def compare_elastic(
    workload: ElasticWorkload,
    policies: Sequence[str],
    cluster: ElasticCluster,
    params: ElasticSimParams,
    source: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ElasticComparison:
    """Run each named policy of :data:`~ddlsched.algorithms.elastic.ELASTIC_POLICIES` (a fresh
    one each) with :func:`run_elastic` on the same workload, cluster and settings.

    ``progress(done, total)`` is called after each policy. Ctrl-C stops cleanly: the
    comparison holds the runs finished so far and says it was interrupted.
    """
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES
    from ddlsched.core.elastic import fit_to_cluster

    workload = fit_to_cluster(workload, cluster, source or "workload")  # warned once
    runs: list[ElasticRun] = []
    try:
        for name in policies:
            runs.append(run_elastic(workload, ELASTIC_POLICIES[name](), cluster, params, source))
            if progress is not None:
                progress(len(runs), len(policies))
    except KeyboardInterrupt:
        return ElasticComparison(tuple(runs), workload, cluster, params, source, True)
    return ElasticComparison(tuple(runs), workload, cluster, params, source)


@dataclass(frozen=True)
class ElasticSandwich:
    """The optimal total JCT of an elastic workload pinned from both sides.

    Attributes
    ----------
    bound
        The fast bound and its parts
        (:class:`~ddlsched.formulations.elastic_bounds.ElasticFlowBound`).
    lagrangian
        The Lagrangian bound
        (:func:`~ddlsched.formulations.elastic_lagrangian.elastic_lagrangian_bound`;
        0 when not computed).
    totals
        Each schedule's total JCT (s), online policies and offline schedules, those
        whose run passed the independent check only.
    upper_method
        The schedule of least total JCT: the upper bound.
    best_online
        The registered policy of least total JCT.
    failed
        Schedules whose run the check refused (not used as bounds).
    interrupted
        Whether Ctrl-C stopped the runs: the upper end is the best of those finished, the
        lower end the fast bound alone (the Lagrangian's steps are skipped).
    """

    bound: ElasticFlowBound
    lagrangian: float
    totals: Mapping[str, float]
    upper_method: str
    best_online: str | None
    failed: tuple[str, ...] = ()
    interrupted: bool = False

    @property
    def lower(self) -> float:
        """The proven lower bound: the larger of the fast and the Lagrangian bound (s)."""
        return max(self.bound.value, self.lagrangian)

    @property
    def lower_method(self) -> str:
        """Which bound gives :attr:`lower`: ``"lagrangian"`` or ``"combined"``."""
        return "lagrangian" if self.lagrangian > self.bound.value else "combined"

    @property
    def upper(self) -> float:
        """The least total JCT of a checked run (s)."""
        return self.totals[self.upper_method]

    @property
    def ratio(self) -> float:
        """Upper over lower: the optimum lies within this factor of either end."""
        return self.upper / self.lower if self.lower > 0 else math.inf

    def to_dict(self) -> SandwichRecord:
        """The sandwich as a record: ``flow_lower_bound``, its method and parts,
        ``flow_upper_bound`` and ``flow_upper_bound_method``, ``flow_upper_over_lower``, the
        best online policy and its ratio to the lower bound, every schedule's total, the
        failed ones."""
        low = self.lower
        online = self.totals.get(self.best_online) if self.best_online else None
        return SandwichRecord(
            flow_lower_bound=low,
            flow_lower_bound_method=self.lower_method,
            lower_per_job=self.bound.per_job,
            lower_squashed=self.bound.squashed,
            lower_combined=self.bound.combined,
            lower_lagrangian=self.lagrangian,
            flow_upper_bound=self.upper,
            flow_upper_bound_method=self.upper_method,
            flow_upper_over_lower=self.ratio if math.isfinite(self.ratio) else None,
            best_online=self.best_online,
            best_online_over_lower=online / low if online is not None and low > 0 else None,
            totals=dict(self.totals),
            failed=list(self.failed),
            interrupted=self.interrupted,
        )


def elastic_sandwich(
    workload: ElasticWorkload,
    cluster: ElasticCluster,
    params: ElasticSimParams,
    policies: Sequence[str] | None = None,
    offline: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    lagrangian_steps: int = 100,
) -> ElasticSandwich:
    """A proven lower bound and the best checked run on the total JCT of ``workload``.

    Parameters
    ----------
    workload, cluster, params
        The jobs, a uniform cluster and the simulation's settings.
    policies
        Names in :data:`~ddlsched.algorithms.elastic.ELASTIC_POLICIES` (default all).
    offline
        Names in :data:`~ddlsched.algorithms.elastic.offline.OFFLINE_ELASTIC_SCHEDULES`
        (default all).
    progress
        Called as ``progress(done, total)`` after each run.
    lagrangian_steps
        Supergradient steps of the Lagrangian bound (0: not computed), aimed at the
        best checked run's total (it steers the steps, never the bound's validity).

    Ctrl-C during the runs stops cleanly once a run has passed the check: the sandwich
    holds the runs finished and says it was interrupted (before that, it is raised).

    Raises
    ------
    ValueError
        On a typed cluster, an unknown name, or when no run passes the check.
    """
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES
    from ddlsched.algorithms.elastic.offline import OFFLINE_ELASTIC_SCHEDULES
    from ddlsched.core.elastic import fit_to_cluster
    from ddlsched.formulations.elastic_bounds import elastic_flow_bound
    from ddlsched.formulations.elastic_lagrangian import elastic_lagrangian_bound

    if cluster.typed:
        kinds = ", ".join(dict.fromkeys(cluster.node_types))
        raise ValueError(
            f"cluster: one GPU type only, got {kinds} (the bounds and the offline schedules "
            "take a uniform cluster)"
        )
    # Capped once, so that the bounds see the jobs every run sees and the cap is warned once.
    workload = fit_to_cluster(workload, cluster)
    online = list(ELASTIC_POLICIES.names() if policies is None else policies)
    extra = list(OFFLINE_ELASTIC_SCHEDULES.names() if offline is None else offline)
    factories = [ELASTIC_POLICIES[name] for name in online]
    factories += [OFFLINE_ELASTIC_SCHEDULES[name] for name in extra]
    totals: dict[str, float] = {}
    failed: list[str] = []
    try:
        for done, factory in enumerate(factories, start=1):
            run = run_elastic(workload, factory(), cluster, params)
            if run.verified:
                totals[run.policy] = math.fsum(row["jct"] for row in run.jobs)
            else:
                failed.append(run.policy)
            if progress is not None:
                progress(done, len(factories))
        interrupted = False
    except KeyboardInterrupt:
        if not totals:
            raise
        interrupted = True
    if not totals:
        raise ValueError("elastic_sandwich: no run passed the independent check")
    settings = (cluster.total_gpus, params.round_length, params.restart_time)
    bound = elastic_flow_bound(workload.jobs, *settings)
    lagrangian = 0.0
    if lagrangian_steps > 0 and not interrupted:
        lagrangian = elastic_lagrangian_bound(
            workload.jobs, *settings, steps=lagrangian_steps, upper=min(totals.values())
        ).value
    checked_online = [name for name in online if name in totals]
    return ElasticSandwich(
        bound,
        lagrangian,
        MappingProxyType(totals),
        min(totals, key=totals.__getitem__),
        min(checked_online, key=totals.__getitem__) if checked_online else None,
        tuple(failed),
        interrupted,
    )


def _settings(
    workload: ElasticWorkload,
    cluster: ElasticCluster,
    params: ElasticSimParams,
    source: str | None,
) -> Settings:
    """Workload source and size, cluster, round length and restart delay, as a record."""
    return Settings(
        workload=source,
        jobs=len(workload.jobs),
        cluster=dataclasses.asdict(cluster),
        round_length=params.round_length,
        restart_time=params.restart_time,
    )


def _policy_row(summary: RunSummary) -> PolicyRow:
    """The figures of ``summary`` a comparison's row holds, under the policy's name."""
    return PolicyRow(
        policy=summary["method"],
        mean_jct=summary["mean_jct"],
        p50_jct=summary["p50_jct"],
        p95_jct=summary["p95_jct"],
        p99_jct=summary["p99_jct"],
        makespan=summary["makespan"],
        restarts=summary["restarts"],
        gpu_seconds=summary["gpu_seconds"],
        flow_ratio=summary["flow_ratio"],
        verified=summary["verified"],
    )


def _gpu_seconds(result: ElasticResult) -> dict[str, float]:
    """GPU-seconds each job held: per round, its GPUs times the part of the round before
    its completion (the simulator's attained service, recomputed from the record)."""
    length = result.params.round_length
    held = dict.fromkeys(result.completion, 0.0)
    for record in result.records:
        for name, alloc in record.allocations.items():
            end = min(record.time + length, result.completion[name])
            held[name] += alloc.replicas * (end - record.time)
    return held


def _allocation_row(alloc: Allocation, cluster: ElasticCluster) -> AllocationRow:
    """A round's allocation of one job as a record (its nodes' type on a typed cluster: a
    job runs on one type at a time)."""
    row = AllocationRow(
        placement=[list(pair) for pair in alloc.placement],
        gpus=alloc.replicas,
        atomic_bsz=alloc.atomic_bsz,
        accum_steps=alloc.accum_steps,
    )
    if cluster.typed:
        row["gpu_type"] = cluster.node_types[alloc.placement[0][0]]
    return row


def _cluster_text(cluster: ElasticCluster) -> str:
    """``16 x 4``: nodes by GPUs per node, then on a typed cluster the nodes per type
    (``16 x 4 (v100 x6, p100 x5, k80 x5)``)."""
    text = f"{cluster.num_nodes} x {cluster.gpus_per_node}"
    if not cluster.typed:
        return text
    counts = {kind: cluster.node_types.count(kind) for kind in cluster.gpu_types}
    return text + " (" + ", ".join(f"{kind} x{n}" for kind, n in counts.items()) + ")"
