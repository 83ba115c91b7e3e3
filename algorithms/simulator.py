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
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from algorithms.mapping import FreeGPUs
from algorithms.policies import Policy, make_policy
from algorithms.predictors import JobView, NoisyOraclePredictor, OraclePredictor, Predictor
from ddlsched.alpha import alpha, alpha_min
from ddlsched.model import Instance, Schedule, ScheduledJob
from ddlsched.result import Result, SolveStatus

ProgressCallback = Callable[[int, int], None]


@dataclass(frozen=True)
class SimulationRecord:
    """What happened to one job."""

    id: str
    start: float
    end: float
    mapping: tuple[int, ...]
    alpha: float


def simulate(
    instance: Instance,
    policy: Policy,
    progress: ProgressCallback | None = None,
    alpha_min_budget: int = 2_000,
) -> Result:
    """Run ``policy`` on ``instance`` and measure it.

    Parameters
    ----------
    instance
        Jobs and cluster.
    policy
        The online policy.
    progress
        Called as ``progress(completed, total)`` now and then.
    alpha_min_budget
        Branch-and-bound budget for the ``alpha_min`` of each job in the
        metric ``mean_alpha_ratio`` (``alpha / alpha_min``); jobs whose
        ``alpha_min`` is only a bound are counted in
        ``alpha_ratio_inexact_jobs``.

    Returns
    -------
    Result
        With the schedule (problem A) and metrics (see :func:`metrics`). A
        run interrupted by Ctrl-C returns what completed, status ERROR and a
        note saying so.
    """
    began = time.perf_counter()
    cluster = instance.cluster
    jobs = instance.jobs
    views = {job.id: JobView.of(job) for job in jobs}
    by_id = {job.id: job for job in jobs}
    arrivals = sorted(range(len(jobs)), key=lambda k: (jobs[k].release, k))
    free = FreeGPUs(cluster.gpus_per_server)
    running: list[tuple[float, int, str]] = []
    records: dict[str, SimulationRecord] = {}
    next_arrival = 0
    now = 0.0
    stalls = 0
    max_waiting = 0
    interrupted = False
    try:
        while len(records) < len(jobs):
            candidates = []
            if next_arrival < len(arrivals):
                candidates.append(jobs[arrivals[next_arrival]].release)
            if running:
                candidates.append(running[0][0])
            wake = policy.next_wakeup()
            if wake is not None:
                candidates.append(wake)
            if not candidates:
                waiting = len(jobs) - len(records) - len(running)
                raise RuntimeError(
                    f"policy {policy.name!r} left {waiting} jobs waiting on an idle cluster"
                )
            now = min(candidates)
            progressed = False
            while running and running[0][0] <= now:
                end, _, job_id = heapq.heappop(running)
                free.give(records[job_id].mapping)
                policy.on_completion(views[job_id], by_id[job_id].iterations, end)
                progressed = True
            while next_arrival < len(arrivals) and jobs[arrivals[next_arrival]].release <= now:
                job = jobs[arrivals[next_arrival]]
                policy.on_arrival(views[job.id], now)
                next_arrival += 1
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
                end = now + job.iterations * per_iteration
                records[job.id] = SimulationRecord(job.id, now, end, tuple(mapping), per_iteration)
                policy.on_start(view, tuple(mapping), per_iteration, now)
                heapq.heappush(running, (end, len(records), job.id))
                progressed = True
            max_waiting = max(max_waiting, next_arrival - len(records))
            stalls = 0 if progressed else stalls + 1
            if stalls > 1000:
                raise RuntimeError(f"policy {policy.name!r} keeps waking at {now} without acting")
            if progress is not None and progressed:
                progress(len(records) - len(running), len(jobs))
    except KeyboardInterrupt:
        interrupted = True
    # Once every job has started, every end time is known: the run is done.
    finished = {k: r for k, r in records.items() if r.end <= now} if interrupted else records
    runtime = time.perf_counter() - began
    measured = metrics(instance, finished, alpha_min_budget)
    measured["wall_time_s"] = runtime
    measured["jobs_completed"] = float(len(finished))
    measured["max_waiting"] = float(max_waiting)
    schedule = None
    notes: tuple[str, ...] = ()
    if interrupted:
        notes = (f"interrupted: {len(finished)} of {len(jobs)} jobs had completed",)
    else:
        schedule = Schedule(
            tuple(ScheduledJob(r.id, r.start, r.end, r.mapping) for r in records.values())
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
    gpus = np.array([j.gpus for j in jobs])
    jct = ends - releases
    makespan = float(ends.max())
    ratios = []
    inexact = 0
    for job in jobs:
        low = alpha_min(job, instance.cluster, search_budget=alpha_min_budget)
        inexact += not low.exact
        ratios.append(records[job.id].alpha / low.value)
    spanning = sum(len(set(records[j.id].mapping)) > 1 for j in jobs)
    busy = float(np.sum(gpus * (ends - starts)))
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


def make_predictor(
    name: str, instance: Instance, rng: np.random.Generator, noise: float = 0.5
) -> Predictor:
    """``"oracle"``, ``"noisy"`` (log-normal error of sigma ``noise``) or ``"forest"``.

    The forest learns online from completed jobs
    (:class:`algorithms.prediction.ForestPredictor`), seeded from ``rng``.
    """
    if name == "oracle":
        return OraclePredictor(instance)
    if name == "noisy":
        return NoisyOraclePredictor(instance, noise, rng)
    if name == "forest":
        from algorithms.prediction import ForestPredictor

        return ForestPredictor(seed=int(rng.integers(2**31)))
    raise ValueError(f"predictor: expected oracle, noisy or forest, got {name!r}")


def simulate_policy(
    instance: Instance,
    method: str,
    *,
    seed: int = 0,
    predictor: str = "oracle",
    noise: float = 0.5,
    progress: ProgressCallback | None = None,
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
    """
    rng = np.random.default_rng(seed)
    predictor_rng, policy_rng = rng.spawn(2)
    chosen = make_predictor(predictor, instance, predictor_rng, noise)
    by_id = {job.id: job for job in instance.jobs}

    def oracle_processing(view: JobView) -> float:
        job = by_id[view.id]
        return job.iterations * alpha_min(job, instance.cluster, search_budget=2_000).value

    policy = make_policy(method, instance.cluster, chosen, policy_rng, oracle_processing)
    return simulate(instance, policy, progress)
