"""From a backend's answer to a :class:`~ddlsched.core.result.Result`: decoding and honesty.

The last stages of the exact pipeline (instance -> prepared problem -> backend model ->
decoded schedule -> result): :func:`schedule_from_plan` decodes a plan of
``(mode, start slot)`` per job into a schedule with exact ends, :func:`objectives` reads
its ``sum w C`` and ``sum w (C - r)``, and :func:`honest_status` demotes a backend's status
and withdraws its bound where an input to the proof was inexact. Every exact backend
(the MILP, CP-SAT, the portfolio's bound searches) returns through here; the largest known
bound and the proof it may give are added by :func:`ddlsched.formulations.certify.with_best_bound`.
"""

from __future__ import annotations

import math

from ddlsched.formulations.slotted import SlottedProblem

from ddlsched.core.alpha import all_cut_alpha
from ddlsched.core.model import Instance, Problem, Schedule, ScheduledJob
from ddlsched.core.result import SolveStatus


def schedule_from_plan(
    instance: Instance, problem: Problem, slotted: SlottedProblem, plan: list[tuple[int, int]]
) -> Schedule:
    """The schedule of a plan of ``(mode, start slot)`` per job, with exact (unslotted) ends.

    A job starts at its slot's start or at its release, whichever is later: a release a
    hair past a slot boundary counts as that slot (:func:`ddlsched.formulations.grid.
    release_slots` forgives the grid's noise), and on long slots that hair (up to
    ``1e-10`` of a slot) exceeds the verifier's tolerance near time 0.
    """
    entries = []
    for job, sjob, (m, t) in zip(instance.jobs, slotted.jobs, plan, strict=True):
        mode = sjob.modes[m]
        start = max(job.release, t * slotted.slot)
        if problem == "A":
            entries.append(ScheduledJob(job.id, start, start + mode.duration, mode.mapping))
        else:
            duration = job.iterations * all_cut_alpha(job, instance.cluster)
            entries.append(ScheduledJob(job.id, start, start + duration))
    return Schedule(tuple(entries), problem=problem)


def honest_status(
    status: SolveStatus,
    bound: float,
    integral: bool,
    unproven: tuple[str, ...],
    unenumerated: tuple[str, ...] = (),
) -> tuple[SolveStatus, float, list[str]]:
    """An exact backend's status and bound, demoted where an input was not exact.

    The slotted optimum is the instance's optimum only on an integral instance
    with every mode enumerated and every mode's duration exact; otherwise the
    result is ``feasible``, with no bound, and the notes say which input was
    inexact. Shared by the MILP and CP-SAT.
    """
    notes = []
    if not integral:
        notes.append(
            "instance not integral: durations and releases were rounded up to the slot, so this "
            "is the optimum of the slotted problem (an upper bound for the continuous one) and "
            "its bound is not a bound for the continuous problem"
        )
    if unproven:
        notes.append(
            f"modes of {len(unproven)} job(s) ({', '.join(unproven[:5])}) use mappings that a "
            "time-limited mapping MILP did not prove fastest, so their durations may be too "
            "long: the schedule is feasible, but neither it nor the bound is proven for the "
            "instance"
        )
    if unenumerated:
        notes.append(
            f"modes of {len(unenumerated)} job(s) ({', '.join(unenumerated[:5])}) were not all "
            "enumerated before the time limit (or mode_limit): the schedule is feasible, but "
            "the optimum of the modes tried is not proven for the instance"
        )
    if notes:
        bound = math.nan
        if status is SolveStatus.OPTIMAL:
            status = SolveStatus.FEASIBLE
    return status, bound, notes


def objectives(instance: Instance, schedule: Schedule | None) -> tuple[float, float]:
    """``sum w C`` and ``sum w (C - r)`` of a schedule whose entries carry ``end``; ``nan``
    for no schedule, or one where an entry of ``instance``'s jobs has no end (a warm start
    read from a file may omit ends: scored as 0 they once made a MILP stopped at its
    deadline report "optimal, total completion time 0")."""
    if schedule is None:
        return math.nan, math.nan
    ends = {entry.id: entry.end for entry in schedule.jobs}
    finish: dict[str, float] = {}
    for job in instance.jobs:
        end = ends.get(job.id)
        if end is None:
            return math.nan, math.nan
        finish[job.id] = float(end)
    total = math.fsum(job.weight * finish[job.id] for job in instance.jobs)
    jct = math.fsum(job.weight * (finish[job.id] - job.release) for job in instance.jobs)
    return total, jct
