"""The event-driven cluster simulator, in continuous time.

Events are arrivals (jobs in release order), completions (a heap) and the
policy's own wake-ups (virtual completions, prediction checks). At each
event instant the simulator, in this order, frees the GPUs of jobs that
complete (telling the policy, which now learns their true iteration count),
releases arrivals to the policy, asks it which running jobs to preempt
(none, for the non-preemptive policies of problem A) and which jobs to
start; a job runs ``K_i * alpha_i(mapping)`` (plus a restart cost per
resumed piece). Each kind of event has its own handler in
:class:`_Simulation`.

The policy sees only :class:`~ddlsched.algorithms.prediction.view.JobView` s. The
simulator alone knows true iteration counts; it checks every mapping (the
right number of nodes, free GPUs) before accepting it. A mapper may refuse a
placement while enough GPUs are free; if that leaves the cluster idle with
jobs waiting and nothing due, the pass is retried at the same instant
(:data:`IDLE_RETRIES` times) before the run stops with an error naming the
deadlock.

A preempting policy's run is bounded: it stops with :class:`RunawaySimulation`
after ``max_preemptions`` preemptions (:data:`MAX_PREEMPTIONS` by default,
under 1 GB of pieces), or after :data:`FRUITLESS_LIMIT` preemptions in a
row of pieces still paying their restart cost while no job completes (a
restart cost the policy never lets a job outlast). A finished run's schedule
is checked by the independent verifier
(:func:`ddlsched.proofs_checks.verifier.verify`): the status is ``feasible``
only when the verifier accepts it.

Cost per event is ``O(log n)`` in the number of waiting jobs for the
policies of :mod:`ddlsched.algorithms.policies` (heaps and per-size buckets), plus
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
from ddlsched.algorithms.mapping import FreeGPUs
from ddlsched.algorithms.prediction.view import JobView
from ddlsched.algorithms.protocol import Policy, check_policy
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.alpha import AlphaMinCache, alpha
from ddlsched.core.model import (
    Instance,
    Job,
    Piece,
    Problem,
    Schedule,
    ScheduledJob,
    is_whole,
)
from ddlsched.core.params import DEFAULT_RESTART_COST
from ddlsched.core.result import Result, SolveStatus

ProgressCallback = Callable[[int, int], None]

SAME_INSTANT_LIMIT = 10_000
"""Passes in a row at one instant that change nothing before the run stops as a livelock."""

IDLE_RETRIES = 3
"""Passes retried at one instant when the cluster is idle and jobs wait, before
the run stops as deadlocked (a mapper that refused once may place next time)."""


MAX_PREEMPTIONS = 5_000_000
"""Default cap on the preemptions of one run (``max_preemptions`` of :func:`simulate`).
Each keeps a piece in memory, about 180 bytes: a run stopped at the cap holds under
1 GB, where a policy that preempts every round on an instance near the horizon cap
(:data:`~ddlsched.core.model.MAX_HORIZON`) asks for billions. A run that completes needs
about 1 KB per piece for its schedule and the verifier's check (full Philly under
``gavel``: 1.9 million pieces, 2 GB)."""

FRUITLESS_LIMIT = 10_000
"""Preemptions in a row, with no job completing, of pieces that ended before their
restart cost was paid, before the run stops: no job makes progress."""


class RunawaySimulation(ValueError):
    """A run that would not end, or not within its limits: more preemptions than
    ``max_preemptions``, or preemptions that never let a restart finish."""


REPORTED_METRICS = (
    "jobs_completed",
    "mean_jct",
    "p50_jct",
    "p95_jct",
    "p99_jct",
    "makespan",
    "gpu_utilisation",
    "mean_queueing_delay",
    "spanning_share",
    "mean_alpha_ratio",
    "wall_time_s",
)
"""The metrics a simulation report shows (``ddlsched simulate``), in order."""


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


class _Simulation:
    """One run: the event queue and one handler per kind of event.

    Events are completions (a heap of versioned entries: a preempted job's
    entry goes stale), arrivals (jobs in release order) and the policy's own
    wake-ups. At each event instant the handlers run in a fixed order:
    :meth:`complete`, :meth:`release`, :meth:`preempt`, :meth:`start`.
    """

    def __init__(
        self,
        instance: Instance,
        policy: Policy,
        restart_cost: float,
        progress: ProgressCallback | None,
        max_preemptions: int,
    ) -> None:
        self.instance = instance
        self.policy = policy
        self.restart_cost = restart_cost
        self.progress = progress
        self.max_preemptions = max_preemptions
        self.preemptions = 0
        self.fruitless = 0  # preemptions in a row of pieces still restoring
        self.stale = 0  # completion entries of preempted pieces left in the heap
        self.jobs = instance.jobs
        self.views = {job.id: JobView.of(job) for job in self.jobs}
        self.by_id = {job.id: job for job in self.jobs}
        self.arrivals = sorted(range(len(self.jobs)), key=lambda k: (self.jobs[k].release, k))
        self.free = FreeGPUs(instance.cluster.gpus_per_server)
        self.completions: list[tuple[float, int, str, int]] = []
        self.running: dict[str, _Running] = {}
        self.suspended: dict[str, _Running] = {}
        self.records: dict[str, SimulationRecord] = {}
        self.sequence = itertools.count()
        self.next_arrival = 0
        self.started = 0
        self.one_server_alpha: dict[tuple[str, str], float] = {}
        self.max_waiting = 0
        self.idle_retries = 0

    def _next_instant(self, now: float) -> float:
        """The earliest pending event: an arrival, a completion or a wake-up."""
        candidates = []
        if self.next_arrival < len(self.arrivals):
            candidates.append(self.jobs[self.arrivals[self.next_arrival]].release)
        completions = self.completions
        while completions and (
            completions[0][2] not in self.running
            or self.running[completions[0][2]].version != completions[0][3]
        ):
            heapq.heappop(completions)  # stale: the job was preempted
        if completions:
            candidates.append(completions[0][0])
        wake = self.policy.next_wakeup()
        if wake is not None:
            candidates.append(max(wake, now))
        if not candidates:
            # Nothing will happen: the cluster is idle and jobs wait. A mapper may refuse
            # a placement while enough GPUs are free (types, fragmentation, its own
            # state), and no completion will come to make the policy ask again: the pass
            # is retried at this instant, a few times, before calling it a deadlock.
            waiting = len(self.jobs) - len(self.records) - len(self.running)
            if self.idle_retries >= IDLE_RETRIES:
                raise RuntimeError(
                    f"policy {self.policy.name!r} left {waiting} jobs waiting on an idle "
                    f"cluster: {IDLE_RETRIES} more passes at t={now:g} started none (does "
                    "its mapper refuse every placement of a waiting job on an empty "
                    "cluster?)"
                )
            self.idle_retries += 1
            return now
        self.idle_retries = 0
        return min(candidates)

    def complete(self, now: float) -> bool:
        """Free the GPUs of jobs ending by ``now``; the policy learns their counts."""
        acted = False
        while self.completions and self.completions[0][0] <= now:
            end, _, job_id, version = heapq.heappop(self.completions)
            run = self.running.get(job_id)
            if run is None or run.version != version:
                continue
            del self.running[job_id]
            self.free.give(run.mapping)
            run.pieces.append(Piece(run.piece_start, end, run.mapping))
            self.records[job_id] = SimulationRecord(
                job_id,
                run.first_start,
                end,
                run.mapping,
                run.alpha,
                run.busy + len(run.mapping) * (end - run.piece_start),
                run.spans,
                tuple(run.pieces) if len(run.pieces) > 1 else None,
            )
            self.policy.on_completion(run.view, self.by_id[job_id].iterations, end)
            self.fruitless = 0
            acted = True
        return acted

    def release(self, now: float) -> bool:
        """Tell the policy of every job released by ``now``."""
        acted = False
        while (
            self.next_arrival < len(self.arrivals)
            and self.jobs[self.arrivals[self.next_arrival]].release <= now
        ):
            job = self.jobs[self.arrivals[self.next_arrival]]
            self.policy.on_arrival(self.views[job.id], now)
            self.next_arrival += 1
            acted = True
        return acted

    def preempt(self, now: float) -> bool:
        """Suspend the running jobs the policy preempts, banking their progress."""
        acted = False
        for job_id in self.policy.preempt(now, self.running.keys()):
            run = self.running.pop(job_id)
            self._count_preemption(now - run.piece_start - run.restart > 0.0, now)
            run.remaining -= max(0.0, now - run.piece_start - run.restart) / run.alpha
            run.busy += len(run.mapping) * (now - run.piece_start)
            run.pieces.append(Piece(run.piece_start, now, run.mapping))
            run.version += 1
            self._forget_completion()
            self.free.give(run.mapping)
            self.suspended[job_id] = run
            self.policy.on_preempt(run.view, now)
            acted = True
        return acted

    def _forget_completion(self) -> None:
        """A preempted job's completion entry goes stale; once the stale outnumber the
        running jobs the heap keeps only the live ones (left to reach the top, the stale
        entries of long jobs held about 150 bytes per preemption for the whole run)."""
        self.stale += 1
        if self.stale > max(1024, len(self.running)):
            self.completions = [
                entry
                for entry in self.completions
                if entry[2] in self.running and self.running[entry[2]].version == entry[3]
            ]
            heapq.heapify(self.completions)
            self.stale = 0

    def _count_preemption(self, progressed: bool, now: float) -> None:
        """Count a preemption against the run's limits (:class:`RunawaySimulation`)."""
        self.preemptions += 1
        self.fruitless = 0 if progressed else self.fruitless + 1
        name = self.policy.name
        if self.preemptions > self.max_preemptions:
            raise RunawaySimulation(
                f"max_preemptions: policy {name!r} preempted more than "
                f"{self.max_preemptions:,} times by t={now:g} s with "
                f"{len(self.jobs) - len(self.records):,} of {len(self.jobs):,} jobs left "
                "(each preemption keeps a piece in memory); raise max_preemptions "
                "(--max-preemptions) or run fewer jobs"
            )
        if self.fruitless > FRUITLESS_LIMIT:
            length = getattr(self.policy, "round_length", None)
            rounds = f" (rounds of {length:g} s)" if isinstance(length, float) else ""
            raise RunawaySimulation(
                f"restart_cost: {self.restart_cost:g} s is more than policy {name!r}{rounds} "
                f"lets a resumed job run: {FRUITLESS_LIMIT:,} preemptions in a row came "
                f"before the restart was over and no job completed (t={now:g} s), so no job "
                f"makes progress; give a restart cost below {'the round' if rounds else 'that'}"
            )

    def _dispatched(self, item: object) -> tuple[JobView, tuple[int, ...], Job]:
        """One ``(job view, mapping)`` pair the policy dispatched, checked: a pair, the
        view of a job of the instance that waits (not running, not completed), one server per
        node, every server on the cluster
        (before ``take()``: -1 would index the last server)."""
        name = self.policy.name
        if not (isinstance(item, tuple | list) and len(item) == 2):
            raise TypeError(
                f"policy {name!r}: dispatch() yielded {item!r}; expected (job, mapping) "
                "pairs, the job as the view on_arrival() was given"
            )
        view, mapping = item
        job = self.by_id.get(view.id) if isinstance(view, JobView) else None
        if job is None:
            given = f"the job id {view!r}" if isinstance(view, str) else repr(view)
            raise TypeError(
                f"policy {name!r}: dispatch() yielded {given} as a job; expected the JobView "
                "on_arrival() was given for it"
            )
        if job.id in self.running or job.id in self.records:
            state = "running" if job.id in self.running else "completed"
            raise RuntimeError(
                f"policy {name!r} dispatched job {job.id!r}, which is already {state}; "
                "dispatch() may yield only jobs that wait (arrived, not running, not completed)"
            )
        if len(mapping) != job.gpus:
            raise RuntimeError(
                f"policy {name!r} mapped {len(mapping)} nodes of job {job.id!r}, "
                f"which has {job.gpus}"
            )
        last = self.instance.cluster.num_servers - 1
        for server in set(mapping):
            if isinstance(server, bool) or not (
                isinstance(server, int | np.integer) and 0 <= server <= last
            ):
                raise RuntimeError(
                    f"policy {name!r} mapped job {job.id!r} onto server {server!r}; the "
                    f"cluster has servers 0 to {last}"
                )
        return view, mapping, job

    def start(self, now: float) -> bool:
        """Start (or resume) what the policy dispatches, checking every mapping."""
        acted = False
        cluster = self.instance.cluster
        for item in self.policy.dispatch(now, self.free):
            view, mapping, job = self._dispatched(item)
            servers = set(mapping)
            try:
                self.free.take(mapping)
            except ValueError as error:  # GPUs already taken: the policy's or its mapper's slip
                raise RuntimeError(
                    f"policy {self.policy.name!r} mapped job {job.id!r} onto busy GPUs "
                    f"({error}; mapping {tuple(mapping)})"
                ) from None
            spans = len(servers) > 1
            per_iteration = None
            key = None
            if not spans:
                # On one server alpha depends on the server's GPU type only: computed
                # once per job and type (a job restarted round after round, as under
                # gavel, paid alpha's checks and numpy at every start).
                (server,) = servers
                if type(server) is int and 0 <= server < cluster.num_servers:
                    key = (job.id, cluster.type_of(server))
                    per_iteration = self.one_server_alpha.get(key)
            if per_iteration is None:
                per_iteration = alpha(job, cluster, mapping)
                if key is not None:
                    self.one_server_alpha[key] = per_iteration
            run = self.suspended.pop(job.id, None)
            if run is None:
                self.started += 1
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
                run.piece_start, run.restart = now, self.restart_cost
                run.mapping, run.alpha = tuple(mapping), per_iteration
                run.spans = run.spans or spans
            self.running[job.id] = run
            self.policy.on_start(view, run.mapping, per_iteration, now)
            heapq.heappush(self.completions, (run.end, next(self.sequence), job.id, run.version))
            acted = True
        return acted

    def run(self) -> None:
        """Process events until every job has completed."""
        now = 0.0
        stalls = 0
        same = 0  # passes in a row at one instant that changed nothing
        total = len(self.jobs)
        while len(self.records) < total:
            previous = now
            now = self._next_instant(now)
            acted = self.complete(now)
            acted = self.release(now) or acted
            acted = self.preempt(now) or acted
            acted = self.start(now) or acted
            self.max_waiting = max(self.max_waiting, self.next_arrival - self.started)
            # A wake-up that starts nothing is normal while jobs run or arrivals are due (a
            # completion or an arrival comes next); with neither, only the policy's own
            # wake-ups are left, and a long run of them without acting is a livelock.
            progress_due = bool(self.running) or self.next_arrival < len(self.arrivals)
            stalls = 0 if acted or progress_due else stalls + 1
            # A wake-up left at or before now (``max(wake, now)`` is now) while a job runs
            # repeats this instant forever: time never reaches the completion.
            same = same + 1 if now == previous and not acted else 0
            if same > SAME_INSTANT_LIMIT:
                raise RuntimeError(
                    f"policy {self.policy.name!r} keeps waking at {now} without acting: "
                    f"{SAME_INSTANT_LIMIT} passes at this instant changed nothing (does its "
                    "next_wakeup() return a time that has already passed?)"
                )
            if stalls > 1000:
                waiting = total - len(self.records) - len(self.running)
                raise RuntimeError(
                    f"policy {self.policy.name!r} keeps waking at {now} without acting: "
                    f"{waiting} jobs wait on an idle cluster and 1000 wake-ups started none "
                    "(does its mapper refuse every placement?)"
                )
            if self.progress is not None and acted:
                self.progress(len(self.records), total)


def simulate(
    instance: Instance,
    policy: Policy,
    progress: ProgressCallback | None = None,
    alpha_min_budget: int = 2_000,
    restart_cost: float | None = None,
    max_preemptions: int | None = None,
    check: bool = True,
) -> Result:
    """Run ``policy`` on ``instance`` and measure it.

    Parameters
    ----------
    instance
        Jobs and cluster.
    policy
        The online policy (:class:`~ddlsched.algorithms.protocol.Policy`). At every
        event it is asked which running jobs to preempt before new starts.
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
        ``None``: the policy's ``restart_cost`` attribute if it has one that
        is not ``None`` (its reference's value), else
        :data:`~ddlsched.core.params.DEFAULT_RESTART_COST`.
    max_preemptions
        The most preemptions the run may make (``None``: :data:`MAX_PREEMPTIONS`);
        each keeps a piece in memory until the end.
    check
        Verify the schedule (:func:`ddlsched.proofs_checks.verifier.verify`) before
        calling it feasible; ``False`` for a caller that verifies it itself.

    Returns
    -------
    Result
        With the schedule (problem A; preempted jobs as pieces) and metrics
        (see :func:`metrics`). A schedule the verifier rejects keeps status
        ERROR, its schedule, and a note naming the first violation. A run
        interrupted by Ctrl-C returns what completed, status ERROR, no
        schedule and a note saying so.

    Raises
    ------
    TypeError
        If ``policy`` lacks a method of the protocol.
    RunawaySimulation
        (a ``ValueError``) If the run preempts more than ``max_preemptions``
        times, or :data:`FRUITLESS_LIMIT` times in a row pieces still paying
        their restart cost while no job completes.
    """
    check_policy(policy)
    began = time.perf_counter()
    if restart_cost is None:
        own = getattr(policy, "restart_cost", None)
        restart_cost = DEFAULT_RESTART_COST if own is None else float(own)
    if max_preemptions is None:
        max_preemptions = MAX_PREEMPTIONS
    if not is_whole(max_preemptions) or max_preemptions < 0:
        raise ValueError(f"max_preemptions: must be an integer >= 0, got {max_preemptions!r}")
    run = _Simulation(instance, policy, restart_cost, progress, int(max_preemptions))
    interrupted = False
    try:
        run.run()
    except KeyboardInterrupt:
        interrupted = True
    records = run.records
    runtime = time.perf_counter() - began
    measured = metrics(instance, records, alpha_min_budget)
    measured["wall_time_s"] = runtime
    measured["jobs_completed"] = len(records)
    measured["max_waiting"] = run.max_waiting
    measured["preempted_jobs"] = sum(r.pieces is not None for r in records.values())
    schedule = None
    notes: tuple[str, ...] = ()
    if interrupted:
        notes = (f"interrupted: {len(records)} of {len(instance.jobs)} jobs had completed",)
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
        if check:
            notes = _rejection(instance, schedule)
    return Result(
        method=policy.name,
        problem=Problem.A,
        status=SolveStatus.ERROR if interrupted or notes else SolveStatus.FEASIBLE,
        objective=measured["total_completion_time"] if not interrupted else math.nan,
        total_jct=measured["total_jct"] if not interrupted else math.nan,
        best_bound=math.nan,
        runtime_s=runtime,
        schedule=schedule,
        metrics=measured,
        notes=notes,
    )


def _rejection(instance: Instance, schedule: Schedule) -> tuple[str, ...]:
    """A note naming the verifier's first violation of ``schedule``, or none."""
    violations = verify(instance, schedule).violations
    if not violations:
        return ()
    more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
    return (f"the verifier rejects the schedule: {violations[0]}{more}",)


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
    fastest = AlphaMinCache(instance.cluster, alpha_min_budget)
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
