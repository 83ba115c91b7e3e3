"""The independent schedule verifier (claim 6, :ref:`model-verifier`).

It recomputes everything from the instance alone and shares no code with
the methods it checks: it imports the data model (to read instances) but
not ``ddlsched.core.alpha``, ``formulations`` or ``algorithms``; per-iteration
times are computed again from the job's edges and the bandwidths, by the
same functions the claim checks use (:mod:`ddlsched.proofs_checks.bounds`).

Rules, for a schedule of problem **A** (:ref:`model-problem-a`):

1. every job of the instance appears exactly once, and nothing else does;
2. ``start >= release``;
3. the mapping has exactly ``gpus`` entries, each an existing server;
4. ``end``, when the schedule gives one, equals ``start + K_i *
   alpha_i(mapping)``;
5. at every instant, on every server, the running jobs' nodes there do not
   exceed its GPUs. A job occupies ``[start, end)``: one that ends at ``t``
   frees its GPUs for one starting at ``t``. Checked in continuous time by
   a sweep over start and end events; no slot is assumed.

A **preempted** job of problem A (a schedule entry with ``pieces``, as the
LAS baseline writes) instead has pieces in time order that do not overlap,
each with its own mapping; a piece after the first spends the schedule's
``restart_cost`` restoring before progressing, and the pieces' progress
``sum_k max(0, length_k - restart_k) / alpha(mapping_k)`` must equal ``K_i``
exactly; its completion is the end of its last piece. Capacity is checked
over all pieces.

For **A1** (rigid jobs of duration ``K_i * alpha_i^max`` on ``M`` pooled
GPUs) rules 1, 2, 4 and 5 apply with one pool of ``M`` GPUs and no mapping.
For **A2** (the preemptive single machine of sizes ``v_i = g_i K_i
alpha_i^max / M``) every job's pieces must lie after its release, not
overlap each other (one machine), and add up to ``v_i``; its completion is
the end of its last piece.

Numbers are compared with tolerance ``tol * max(1, |scale|)``, ``tol = 1e-9``
by default, so that floating-point sums that are equal on paper agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ddlsched.proofs_checks.bounds import all_cut_time, per_iteration_time

from ddlsched.core.model import Cluster, Instance, Job, Schedule, ScheduledJob, as_instance

DEFAULT_TOLERANCE = 1e-9


@dataclass(frozen=True)
class VerificationReport:
    """What the verifier found.

    Attributes
    ----------
    feasible
        True when there are no violations.
    violations
        Every rule broken, one readable line each.
    total_completion_time
        ``sum_i w_i C_i`` recomputed from the instance (``nan`` when a job
        is missing, so that an incomplete schedule has no objective).
    total_jct
        ``sum_i w_i (C_i - r_i)``, likewise.
    completion_times
        ``C_i`` per job id, recomputed.
    """

    feasible: bool
    violations: tuple[str, ...]
    total_completion_time: float
    total_jct: float
    completion_times: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """The ``verify --json`` document."""
        return {
            "feasible": self.feasible,
            "violations": list(self.violations),
            "total_completion_time": _json_number(self.total_completion_time),
            "total_jct": _json_number(self.total_jct),
        }


def _json_number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _close(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def verify(
    instance: Instance, schedule: Schedule, tol: float = DEFAULT_TOLERANCE
) -> VerificationReport:
    """Check ``schedule`` against ``instance`` and recompute its objective.

    Parameters
    ----------
    instance
        The instance, the only source of truth (or a loaded trace: its instance).
    schedule
        A schedule for problem ``schedule.problem`` (A, A1 or A2).
    tol
        Relative tolerance for comparing times.

    Returns
    -------
    VerificationReport
        Every violation found, not only the first.

    Raises
    ------
    TypeError
        If ``instance`` is not an instance or ``schedule`` not a schedule.

    Examples
    --------
    >>> from ddlsched import GeneratorConfig, generate
    >>> instance = generate(GeneratorConfig.exact_friendly(4, 2, 2), seed=0)
    >>> from ddlsched import simulate, verify
    >>> verify(instance, simulate(instance, "fifo").schedule).feasible
    True
    """
    instance = as_instance(instance)
    if not isinstance(schedule, Schedule):
        hint = (
            " (read a file with ddlsched.core.io.read_schedule)"
            if isinstance(schedule, str)
            else ""
        )
        raise TypeError(f"schedule: expected a Schedule, got {type(schedule).__name__}{hint}")
    violations: list[str] = []
    entries = _match_entries(instance, schedule, violations)
    if schedule.problem == "A2":
        completions = _check_single_machine(instance, entries, tol, violations)
    else:
        completions = _check_gang(instance, schedule, entries, tol, violations)

    if len(completions) == instance.num_jobs:
        total = math.fsum(job.weight * completions[job.id] for job in instance.jobs)
        jct = math.fsum(job.weight * (completions[job.id] - job.release) for job in instance.jobs)
    else:
        total = jct = math.nan
    return VerificationReport(
        feasible=not violations,
        violations=tuple(violations),
        total_completion_time=total,
        total_jct=jct,
        completion_times=completions,
    )


def _match_entries(
    instance: Instance, schedule: Schedule, violations: list[str]
) -> dict[str, ScheduledJob]:
    known = {job.id for job in instance.jobs}
    entries: dict[str, ScheduledJob] = {}
    for entry in schedule.jobs:
        if entry.id not in known:
            violations.append(f"job {entry.id!r}: not in the instance")
        elif entry.id in entries:
            violations.append(f"job {entry.id!r}: scheduled more than once")
        else:
            entries[entry.id] = entry
    for job in instance.jobs:
        if job.id not in entries:
            violations.append(f"job {job.id!r}: not scheduled")
    return entries


def _mapping_problem(job: Job, mapping: tuple[int, ...] | None, servers: int) -> str | None:
    if mapping is None:
        return "has no mapping"
    if len(mapping) != job.gpus:
        return f"mapping has {len(mapping)} entries, the job has {job.gpus} nodes"
    bad = sorted({s for s in mapping if s >= servers})
    if bad:
        return f"mapping uses server {bad[0]}, the cluster has servers 0..{servers - 1}"
    return None


def _usage(mapping: tuple[int, ...]) -> dict[int, int]:
    usage: dict[int, int] = {}
    for server in mapping:
        usage[server] = usage.get(server, 0) + 1
    return usage


def _check_gang(
    instance: Instance,
    schedule: Schedule,
    entries: dict[str, ScheduledJob],
    tol: float,
    violations: list[str],
) -> dict[str, float]:
    cluster = instance.cluster
    problem = schedule.problem
    completions: dict[str, float] = {}
    # (time, kind, job id, {server: gpus}); kind 0 = end before 1 = start.
    events: list[tuple[float, int, str, dict[int, int]]] = []
    for job in instance.jobs:
        entry = entries.get(job.id)
        if entry is None:
            continue
        where = f"job {job.id!r}"
        if entry.pieces is not None:
            if problem != "A":
                violations.append(f"{where}: has pieces, but problem {problem} is non-preemptive")
                continue
            # Its release is checked against its first piece there (once, not twice).
            end = _check_preempted(
                job, entry, schedule.restart_cost, cluster, tol, events, violations
            )
            if end is not None:
                completions[job.id] = end
            continue
        if entry.start < job.release and not _close(entry.start, job.release, tol):
            violations.append(
                f"{where}: starts at {entry.start:g} before its release {job.release:g}"
            )
        usage: dict[int, int]
        if problem == "A":
            trouble = _mapping_problem(job, entry.mapping, cluster.num_servers)
            if trouble is not None or entry.mapping is None:
                violations.append(f"{where}: {trouble}")
                continue
            duration = job.iterations * per_iteration_time(job, cluster, entry.mapping)
            usage = _usage(entry.mapping)
        else:
            if entry.mapping is not None:
                violations.append(f"{where}: problem A1 takes no mapping")
            duration = job.iterations * all_cut_time(job, cluster)
            usage = {0: job.gpus}
        end = entry.start + duration
        if entry.end is not None and not _close(entry.end, end, tol):
            violations.append(
                f"{where}: end {entry.end:g} differs from start + K * alpha = {end:g}"
            )
        completions[job.id] = end
        events.append((end, 0, job.id, usage))
        events.append((entry.start, 1, job.id, usage))

    capacity = (
        dict(enumerate(cluster.gpus_per_server)) if problem == "A" else {0: cluster.num_gpus}
    )
    _sweep_capacity(events, capacity, problem, tol, violations)
    return completions


def _check_preempted(
    job: Job,
    entry: ScheduledJob,
    restart_cost: float,
    cluster: Cluster,
    tol: float,
    events: list[tuple[float, int, str, dict[int, int]]],
    violations: list[str],
) -> float | None:
    """A preempted job: pieces in order, each with a mapping, work adding up to ``K``.

    A piece after the first spends ``restart_cost`` restoring before making
    progress; its progress is ``max(0, length - restart) / alpha(mapping)``
    iterations. Returns the completion (the last piece's end), or ``None``.
    """
    where = f"job {job.id!r}"
    pieces = entry.pieces or ()
    if not pieces:
        violations.append(f"{where}: has an empty list of pieces")
        return None
    if entry.mapping is not None:
        violations.append(f"{where}: a preempted job's mappings belong to its pieces")
    work = 0.0
    previous_end = -math.inf
    for k, piece in enumerate(pieces):
        trouble = _mapping_problem(job, piece.mapping, cluster.num_servers)
        if trouble is not None or piece.mapping is None:
            violations.append(f"{where}: piece {k}: {trouble}")
            return None
        if piece.end < piece.start:
            violations.append(f"{where}: piece {k} ends before it starts")
            return None
        if piece.start < previous_end and not _close(piece.start, previous_end, tol):
            violations.append(f"{where}: piece {k} starts before piece {k - 1} ends")
        previous_end = piece.end
        restart = restart_cost if k > 0 else 0.0
        per_iteration = per_iteration_time(job, cluster, piece.mapping)
        work += max(0.0, piece.end - piece.start - restart) / per_iteration
        usage = _usage(piece.mapping)
        events.append((piece.end, 0, job.id, usage))
        events.append((piece.start, 1, job.id, usage))
    if not _close(pieces[0].start, entry.start, tol):
        violations.append(f"{where}: start {entry.start:g} is not its first piece's start")
    if pieces[0].start < job.release and not _close(pieces[0].start, job.release, tol):
        violations.append(
            f"{where}: runs at {pieces[0].start:g} before its release {job.release:g}"
        )
    if not math.isclose(work, job.iterations, rel_tol=1e-7, abs_tol=1e-7):
        violations.append(
            f"{where}: its pieces do {work:.9g} iterations of work, it needs {job.iterations}"
        )
    end = pieces[-1].end
    if entry.end is not None and not _close(entry.end, end, tol):
        violations.append(f"{where}: end {entry.end:g} is not its last piece's end {end:g}")
    return end


def _sweep_capacity(
    events: list[tuple[float, int, str, dict[int, int]]],
    capacity: dict[int, int],
    problem: str,
    tol: float,
    violations: list[str],
) -> None:
    # Ends within tolerance of a start count as before it: snap times that
    # are equal up to tol onto one value before sorting.
    events.sort(key=lambda e: (e[0], e[1]))
    snapped: list[tuple[float, int, str, dict[int, int]]] = []
    for event in events:
        time = event[0]
        if snapped and _close(snapped[-1][0], time, tol):
            time = snapped[-1][0]
        snapped.append((time, event[1], event[2], event[3]))
    snapped.sort(key=lambda e: (e[0], e[1]))
    in_use = {server: 0 for server in capacity}
    running: set[str] = set()
    reported: set[tuple[int, frozenset[str]]] = set()
    for time, kind, job_id, usage in snapped:
        sign = -1 if kind == 0 else 1
        for server, count in usage.items():
            in_use[server] += sign * count
        if kind == 0:
            running.discard(job_id)
            continue
        running.add(job_id)
        for server in usage:
            if in_use[server] > capacity[server]:
                key = (server, frozenset(running))
                if key in reported:
                    continue
                reported.add(key)
                place = f"server {server}" if problem == "A" else "the cluster"
                violations.append(
                    f"{place}: {in_use[server]} GPUs in use at time {time:g} "
                    f"(capacity {capacity[server]}) by jobs "
                    f"{', '.join(sorted(running))}"
                )


def _check_single_machine(
    instance: Instance,
    entries: dict[str, ScheduledJob],
    tol: float,
    violations: list[str],
) -> dict[str, float]:
    machine = instance.cluster.num_gpus
    completions: dict[str, float] = {}
    all_pieces: list[tuple[float, float, str]] = []
    for job in instance.jobs:
        entry = entries.get(job.id)
        if entry is None:
            continue
        where = f"job {job.id!r}"
        size = job.gpus * job.iterations * all_cut_time(job, instance.cluster) / machine
        if not entry.pieces:
            violations.append(f"{where}: problem A2 needs pieces")
            continue
        processed = 0.0
        for begin, finish, mapping in entry.pieces:
            if mapping is not None:
                violations.append(f"{where}: problem A2 pieces take no mapping")
            if finish < begin:
                violations.append(f"{where}: piece [{begin:g}, {finish:g}) ends before it starts")
                continue
            if begin < job.release and not _close(begin, job.release, tol):
                violations.append(f"{where}: runs at {begin:g} before its release {job.release:g}")
            processed += finish - begin
            all_pieces.append((begin, finish, job.id))
        if not _close(processed, size, tol):
            violations.append(
                f"{where}: processed {processed:g} in its pieces, its size is {size:g}"
            )
        if not _close(entry.start, min(p.start for p in entry.pieces), tol):
            violations.append(f"{where}: start {entry.start:g} is not its first piece's start")
        end = max(p.end for p in entry.pieces)
        if entry.end is not None and not _close(entry.end, end, tol):
            violations.append(f"{where}: end {entry.end:g} is not its last piece's end {end:g}")
        completions[job.id] = end
    all_pieces.sort()
    # The piece reaching furthest so far: any later piece starting before
    # its end overlaps it, whether or not the two are neighbours in order.
    reach, reach_job = -math.inf, ""
    for begin, finish, job_id in all_pieces:
        if begin < reach and not _close(begin, reach, tol):
            violations.append(
                f"machine: jobs {reach_job!r} and {job_id!r} overlap in "
                f"[{begin:g}, {min(reach, finish):g})"
            )
        if finish > reach:
            reach, reach_job = finish, job_id
    return completions
