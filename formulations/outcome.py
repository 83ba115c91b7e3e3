"""From a backend's answer to a decoded schedule and its objectives.

A late stage of the exact pipeline (instance -> prepared problem -> backend model ->
decoded schedule -> certified result): :func:`schedule_from_plan` decodes a plan of
``(mode, start slot)`` per job into a schedule with exact ends, and :func:`objectives`
reads its ``sum w C`` and ``sum w (C - r)``. Every exact backend (the MILP, CP-SAT, the
portfolio's bound searches) decodes through here; what its answer proves is decided by
:func:`ddlsched.formulations.certify.certify`.
"""

from __future__ import annotations

import math

from ddlsched.formulations.slotted import SlottedProblem

from ddlsched.core.alpha import all_cut_alpha
from ddlsched.core.model import Instance, Problem, Schedule, ScheduledJob


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
