"""The event-driven cluster simulator, in continuous time.

Events are arrivals (jobs in release order), completions (a heap) and the
policy's own wake-ups (virtual completions, prediction checks). At each
event instant the simulator, in this order, frees the GPUs of jobs that
complete (telling the policy, which now learns their true iteration count),
releases arrivals to the policy, and asks it which jobs to start; a started
job runs ``K_i * alpha_i(mapping)`` and is never preempted (problem A).

The policy sees only :class:`~algorithms.predictors.JobView` s. The
simulator alone knows true iteration counts; it checks every mapping (the
right number of nodes, free GPUs) before accepting it.

Cost per event is ``O(log n)`` in the number of waiting jobs for the
policies of :mod:`algorithms.policies` (heaps and per-size buckets), plus
the mapping of started jobs.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from algorithms.mapping import FreeGPUs
from algorithms.policies import Policy, make_policy
from algorithms.predictors import JobView, NoisyOraclePredictor, OraclePredictor, Predictor
from ddlsched.alpha import alpha, alpha_from_cut, alpha_min, least_cut
from ddlsched.model import Instance, Job, Piece, Schedule, ScheduledJob
from ddlsched.result import Result, SolveStatus

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class SimulationRecord:
    """What happened to one job.

    ``mapping`` and ``alpha`` are those of its last piece; ``pieces`` lists
    every piece of a job that was preempted (``None`` otherwise); ``busy``
    is the GPU-seconds it held; ``spans`` whether any piece spanned servers.
    """

    id: str
    start: float
    end: float
    mapping: tuple[int, ...]
    alpha: float
    busy: float
    spans: bool
    pieces: tuple[Piece, ...] | None = None


@dataclass
class _Running:
    """A job holding GPUs: its current piece and the work left."""

    view: JobView
    remaining: float  # iterations left at the start of this piece
    piece_start: float
    restart: float  # seconds of restoring at the start of this piece
    mapping: tuple[int, ...]
    alpha: float
    version: int
    pieces: list[Piece]
    first_start: float
    busy: float
    spans: bool

    @property
    def end(self) -> float:
        return self.piece_start + self.restart + self.remaining * self.alpha


def simulate(
    instance: Instance,
    policy: Policy,
    progress: ProgressCallback | None = None,
    alpha_min_budget: int = 2_000,
    restart_cost: float = 0.0,
) -> Result:
    """Run ``policy`` on ``instance`` and measure it.

    Parameters
    ----------
    instance
        Jobs and cluster.
    policy
        The online policy. A preemptive one (``policy.preemptive``) is asked
        at every event which running jobs to preempt before new starts.
    progress
        Called as ``progress(completed, total)`` now and then.
    alpha_min_budget
        Branch-and-bound budget for the ``alpha_min`` of each job in the
        metric ``mean_alpha_ratio`` (``alpha / alpha_min``); jobs whose
        ``alpha_min`` is only a bound are counted in
        ``alpha_ratio_inexact_jobs``.
    restart_cost
        Seconds a preempted job spends restoring when it resumes, holding
        its GPUs without progress (Tiresias's checkpoint-restart cost).

    Returns
    -------
    Result
        With the schedule (problem A; preempted jobs as pieces) and metrics
        (see :func:`metrics`). A run interrupted by Ctrl-C returns what
        completed, status ERROR and a note saying so.
    """
    began = time.perf_counter()
    cluster = instance.cluster
    jobs = instance.jobs
    views = {job.id: JobView.of(job) for job in jobs}
    by_id = {job.id: job for job in jobs}
    arrivals = sorted(range(len(jobs)), key=lambda k: (jobs[k].release, k))
    free = FreeGPUs(cluster.gpus_per_server)
    completions: list[tuple[float, int, str, int]] = []
    running: dict[str, _Running] = {}
    suspended: dict[str, _Running] = {}
    records: dict[str, SimulationRecord] = {}
    sequence = itertools.count()
    preemptive = bool(getattr(policy, "preemptive", False))
    next_arrival = 0
    now = 0.0
    stalls = 0
    max_waiting = 0
    started = 0
    interrupted = False
    try:
        while len(records) < len(jobs):
            candidates = []
            if next_arrival < len(arrivals):
                candidates.append(jobs[arrivals[next_arrival]].release)
            while completions and (
                completions[0][2] not in running
                or running[completions[0][2]].version != completions[0][3]
            ):
                heapq.heappop(completions)  # stale: the job was preempted
            if completions:
                candidates.append(completions[0][0])
            wake = policy.next_wakeup()
            if wake is not None:
                candidates.append(max(wake, now))
            if not candidates:
                waiting = len(jobs) - len(records) - len(running)
                raise RuntimeError(
                    f"policy {policy.name!r} left {waiting} jobs waiting on an idle cluster"
                )
            now = min(candidates)
            progressed = False
            while completions and completions[0][0] <= now:
                end, _, job_id, version = heapq.heappop(completions)
                run = running.get(job_id)
                if run is None or run.version != version:
                    continue
                del running[job_id]
                free.give(run.mapping)
                run.pieces.append(Piece(run.piece_start, end, run.mapping))
                records[job_id] = SimulationRecord(
                    job_id,
                    run.first_start,
                    end,
                    run.mapping,
                    run.alpha,
                    run.busy + len(run.mapping) * (end - run.piece_start),
                    run.spans,
                    tuple(run.pieces) if len(run.pieces) > 1 else None,
                )
                policy.on_completion(run.view, by_id[job_id].iterations, end)
                progressed = True
            while next_arrival < len(arrivals) and jobs[arrivals[next_arrival]].release <= now:
                job = jobs[arrivals[next_arrival]]
                policy.on_arrival(views[job.id], now)
                next_arrival += 1
                progressed = True
            if preemptive:
                for job_id in policy.preempt(now, tuple(running)):  # type: ignore[attr-defined]
                    run = running.pop(job_id)
                    run.remaining -= max(0.0, now - run.piece_start - run.restart) / run.alpha
                    run.busy += len(run.mapping) * (now - run.piece_start)
                    run.pieces.append(Piece(run.piece_start, now, run.mapping))
                    run.version += 1
                    free.give(run.mapping)
                    suspended[job_id] = run
                    policy.on_preempt(run.view, now)  # type: ignore[attr-defined]
                    progressed = True
            for view, mapping in policy.dispatch(now, free):
                job = by_id[view.id]
                if len(mapping) != job.gpus:
                    raise RuntimeError(
                        f"policy {policy.name!r} mapped {len(mapping)} nodes of job {job.id!r}, "
                        f"which has {job.gpus}"
                    )
                free.take(mapping)
                per_iteration = alpha(job, cluster, mapping)
                spans = len(set(mapping)) > 1
                run = suspended.pop(job.id, None)
                if run is None:
                    started += 1
                    run = _Running(
                        view,
                        float(job.iterations),
                        now,
                        0.0,
                        tuple(mapping),
                        per_iteration,
                        0,
                        [],
                        now,
                        0.0,
                        spans,
                    )
                else:
                    run.piece_start, run.restart = now, restart_cost
                    run.mapping, run.alpha = tuple(mapping), per_iteration
                    run.spans = run.spans or spans
                running[job.id] = run
                policy.on_start(view, run.mapping, per_iteration, now)
                heapq.heappush(completions, (run.end, next(sequence), job.id, run.version))
                progressed = True
            max_waiting = max(max_waiting, next_arrival - started)
            stalls = 0 if progressed else stalls + 1
            if stalls > 1000:
                raise RuntimeError(f"policy {policy.name!r} keeps waking at {now} without acting")
            if progress is not None and progressed:
                progress(len(records), len(jobs))
    except KeyboardInterrupt:
        interrupted = True
    runtime = time.perf_counter() - began
    measured = metrics(instance, records, alpha_min_budget)
    measured["wall_time_s"] = runtime
    measured["jobs_completed"] = float(len(records))
    measured["max_waiting"] = float(max_waiting)
    measured["preempted_jobs"] = float(sum(r.pieces is not None for r in records.values()))
    schedule = None
    notes: tuple[str, ...] = ()
    if interrupted:
        notes = (f"interrupted: {len(records)} of {len(jobs)} jobs had completed",)
    else:
        schedule = Schedule(
            tuple(
                ScheduledJob(r.id, r.start, r.end, None, r.pieces)
                if r.pieces is not None
                else ScheduledJob(r.id, r.start, r.end, r.mapping)
                for r in records.values()
            ),
            restart_cost=restart_cost,
        )
    return Result(
        method=policy.name,
        problem="A",
        status=SolveStatus.ERROR if interrupted else SolveStatus.FEASIBLE,
        objective=measured["total_completion_time"] if not interrupted else math.nan,
        total_jct=measured["total_jct"] if not interrupted else math.nan,
        best_bound=math.nan,
        runtime_s=runtime,
        schedule=schedule,
        metrics=measured,
        notes=notes,
    )


def metrics(
    instance: Instance, records: dict[str, SimulationRecord], alpha_min_budget: int = 2_000
) -> dict[str, float]:
    """Figures of a (possibly partial) run, over the jobs in ``records``.

    ``total_completion_time`` (sum w C), ``total_jct`` (sum w (C - r)),
    ``mean_jct``, ``p50_jct``, ``p95_jct``, ``p99_jct``, ``makespan``,
    ``gpu_utilisation`` (busy GPU-seconds over ``M * makespan``),
    ``mean_queueing_delay`` (``S - r``), ``spanning_share`` (jobs on more
    than one server), ``mean_alpha_ratio`` (``alpha / alpha_min``).
    """
    jobs = [job for job in instance.jobs if job.id in records]
    if not jobs:
        return {"total_completion_time": math.nan, "total_jct": math.nan}
    ends = np.array([records[j.id].end for j in jobs])
    starts = np.array([records[j.id].start for j in jobs])
    releases = np.array([j.release for j in jobs])
    weights = np.array([j.weight for j in jobs])
    jct = ends - releases
    makespan = float(ends.max())
    ratios = []
    inexact = 0
    fastest = _FastestAlpha(instance, alpha_min_budget)
    for job in jobs:
        low, exact = fastest(job)
        inexact += not exact
        ratios.append(records[job.id].alpha / low)
    spanning = sum(records[j.id].spans for j in jobs)
    busy = float(sum(records[j.id].busy for j in jobs))
    return {
        "total_completion_time": float(np.sum(weights * ends)),
        "total_jct": float(np.sum(weights * jct)),
        "mean_jct": float(np.mean(jct)),
        "p50_jct": float(np.percentile(jct, 50)),
        "p95_jct": float(np.percentile(jct, 95)),
        "p99_jct": float(np.percentile(jct, 99)),
        "makespan": makespan,
        "gpu_utilisation": busy / (instance.cluster.num_gpus * makespan) if makespan > 0 else 0.0,
        "mean_queueing_delay": float(np.mean(starts - releases)),
        "spanning_share": spanning / len(jobs),
        "mean_alpha_ratio": float(np.mean(ratios)),
        "alpha_ratio_inexact_jobs": float(inexact),
    }


PREDICTORS = ("oracle", "noisy", "forest", "global-mean", "model-mean", "group-mean")
"""Predictor names accepted by :func:`make_predictor`."""


class _FastestAlpha:
    """``alpha_min`` per job, with the search shared between jobs of one shape.

    The best partition does not change when every edge's traffic is scaled
    by one factor (trace jobs of one model and configuration differ only
    so), so the least cut is cached as a fraction of the total traffic,
    keyed by the graph with normalised traffic.
    """

    def __init__(self, instance: Instance, budget: int) -> None:
        self.cluster = instance.cluster
        self.budget = budget
        self._fraction: dict[tuple, tuple[float, bool]] = {}

    def __call__(self, job: Job) -> tuple[float, bool]:
        total = job.total_traffic
        if total == 0:
            return alpha_from_cut(job, self.cluster, 0.0), True
        key = (job.gpus, tuple((u, v, round(q / total, 12)) for u, v, q in job.edges))
        if key not in self._fraction:
            cut = least_cut(job, self.cluster, self.budget)
            self._fraction[key] = (cut.value / total, cut.exact)
        fraction, exact = self._fraction[key]
        return alpha_from_cut(job, self.cluster, fraction * total), exact


def make_predictor(
    name: str, instance: Instance, rng: np.random.Generator, noise: float = 0.5
) -> Predictor:
    """A predictor by name (see :data:`PREDICTORS`).

    ``"noisy"`` has log-normal error of sigma ``noise``; ``"forest"``
    (:class:`algorithms.prediction.ForestPredictor`, seeded from ``rng``)
    and the running means (:class:`algorithms.prediction.RunningMeanPredictor`)
    learn online from completed jobs.
    """
    if name == "oracle":
        return OraclePredictor(instance)
    if name == "noisy":
        return NoisyOraclePredictor(instance, noise, rng)
    if name == "forest":
        from algorithms.prediction import ForestPredictor

        return ForestPredictor(seed=int(rng.integers(2**31)))
    if name in ("global-mean", "model-mean", "group-mean"):
        from algorithms.prediction import RunningMeanPredictor

        return RunningMeanPredictor(name.split("-")[0])
    raise ValueError(f"predictor: expected one of {', '.join(PREDICTORS)}, got {name!r}")


def simulate_policy(
    instance: Instance,
    method: str,
    *,
    seed: int = 0,
    predictor: str = "oracle",
    noise: float = 0.5,
    progress: ProgressCallback | None = None,
    restart_cost: float = 1.0,
) -> Result:
    """Simulate the policy named ``method`` (see :mod:`algorithms.policies`).

    Parameters
    ----------
    instance
        The instance.
    method
        ``asrpt``, ``asrpt-greedy``, ``fifo``, ``sjf`` or ``srpt-naive``.
    seed
        Seeds the predictor's noise and random mappings.
    predictor
        ``"oracle"`` or ``"noisy"``.
    noise
        Sigma of the noisy predictor's log-normal error.
    progress
        See :func:`simulate`.
    restart_cost
        Seconds a preempted job restores on resuming (``las`` only; the other
        policies never preempt).
    """
    rng = np.random.default_rng(seed)
    predictor_rng, policy_rng = rng.spawn(2)
    chosen = make_predictor(predictor, instance, predictor_rng, noise)
    by_id = {job.id: job for job in instance.jobs}

    def oracle_processing(view: JobView) -> float:
        job = by_id[view.id]
        return job.iterations * alpha_min(job, instance.cluster, search_budget=2_000).value

    policy = make_policy(method, instance.cluster, chosen, policy_rng, oracle_processing)
    return simulate(instance, policy, progress, restart_cost=restart_cost)
