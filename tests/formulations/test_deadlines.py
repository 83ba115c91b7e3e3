"""Every stage before and around the exact race stops at its deadline with a valid schedule.

The deadlines here are already past when a stage starts (``time.monotonic()`` values in
the past, or a time limit no stage can meet), so what each stage does is the same on every
machine: it stops at once and hands on the quickest schedule it can build. Every schedule is
checked by the independent verifier; no wall-clock duration is asserted.
"""

from __future__ import annotations

import math
import random

import numpy as np
from ddlsched.algorithms.registry import UPPER_BOUND_POLICIES
from ddlsched.formulations.continuous import (
    LISTS_CUT,
    enumerate_modes,
    list_schedules,
    prepare,
    serial_place,
    solve_continuous,
    to_schedule,
    weighted_total,
)
from ddlsched.formulations.timeline import Timeline
from ddlsched.proofs_checks.verifier import verify

from ddlsched import ExactParams, Problem, SolveStatus
from ddlsched.api import online_start, simulate
from ddlsched.core.generators import GeneratorConfig, generate
from ddlsched.core.model import Instance
from ddlsched.core.result import fixed_part, gap_closed

NO_LIMIT = ExactParams(time_limit=None)

PAST = 0.0
"""A ``time.monotonic()`` value every deadline check finds passed."""


def _loaded() -> Instance:
    """Twelve generated jobs with real durations queueing on 2 x 4 GPUs (load 1): the list
    schedules must run jobs side by side and make some wait."""
    return generate(GeneratorConfig(num_jobs=12, servers=2, gpus_per_server=4, load=1.0), 3)


def _feasible(instance: Instance, problem: Problem, plan: list[tuple[int, float]]) -> float:
    """The verifier's objective of ``plan``'s schedule, once it accepts it."""
    slotted = enumerate_modes(instance, problem, NO_LIMIT)
    report = verify(instance, to_schedule(instance, problem, slotted, plan))
    assert report.feasible, report.violations
    return report.total_completion_time


def _earliest_by_scan(
    placed: list[tuple[float, float, tuple[int, ...]]],
    capacities: tuple[int, ...],
    usage: tuple[int, ...],
    duration: float,
    lowest: float,
) -> float:
    """The first instant from ``lowest`` and the placed ends at which ``usage`` fits at every
    placed start inside the run: the definition, checked one instant at a time."""

    def fits(moment: float) -> bool:
        load = list(usage)
        for start, end, use in placed:
            if start <= moment < end:
                load = [a + b for a, b in zip(load, use, strict=True)]
        return all(a <= c for a, c in zip(load, capacities, strict=True))

    for start in sorted({lowest} | {end for _, end, _ in placed if end > lowest}):
        inside = [s for s, _, _ in placed if start < s < start + duration]
        if all(fits(moment) for moment in [start, *inside]):
            return start
    raise AssertionError("no instant fits")


def test_the_timeline_finds_the_instant_a_scan_of_every_instant_finds() -> None:
    """:meth:`Timeline.earliest` agrees with checking every candidate instant against every
    placed job, on random placements of random usages on three resources (also past the
    first window of segments)."""
    rng = random.Random(7)
    capacities = (4, 2, 3)
    for _ in range(30):
        timeline, placed = Timeline(capacities), []
        for _ in range(rng.randint(1, 90)):
            usages = [tuple(rng.randint(0, c) for c in capacities) for _ in range(4)]
            durations = [rng.choice([0.5, 1.0, 2.25, 7.0]) for _ in usages]
            lowest = rng.uniform(0.0, 20.0)
            found = timeline.earliest(np.array(usages), np.array(durations), lowest)
            expected = [
                _earliest_by_scan(placed, capacities, usage, duration, lowest)
                for usage, duration in zip(usages, durations, strict=True)
            ]
            ends = [e + d for e, d in zip(expected, durations, strict=True)]
            first = ends.index(min(ends))
            assert found[first] == expected[first]
            for k, start in enumerate(found):
                assert math.isinf(start) or start == expected[k]
            start = float(found[first])
            timeline.place(start, start + durations[first], usages[first])
            placed.append((start, start + durations[first], usages[first]))


def test_a_placement_past_its_deadline_runs_the_jobs_one_after_the_other() -> None:
    """With its deadline passed, :func:`serial_place` places no job beside another: each
    starts once the previous one ended (or at its release), in its shortest mode, and the
    verifier accepts the schedule."""
    instance = _loaded()
    slotted = enumerate_modes(instance, Problem.A, NO_LIMIT)
    releases = [job.release for job in instance.jobs]
    order = sorted(range(instance.num_jobs), key=lambda i: (releases[i], i))
    plan = serial_place(slotted, releases, order, keep_order=False, stop_at=PAST)
    end = -math.inf
    for i in order:
        m, start = plan[i]
        modes = slotted.jobs[i].modes
        assert modes[m].duration == min(mode.duration for mode in modes)
        assert start == max(releases[i], end, 0.0)
        end = start + modes[m].duration
    _feasible(instance, Problem.A, plan)


def test_list_schedules_past_their_deadline_say_they_were_cut() -> None:
    """Past their deadline the list schedules report themselves incomplete and return the
    first order's schedule, appended; without one they are complete and no worse."""
    instance = _loaded()
    slotted = enumerate_modes(instance, Problem.A, NO_LIMIT)
    releases = [job.release for job in instance.jobs]
    cut, complete = list_schedules(slotted, releases, PAST)
    assert not complete
    full, complete = list_schedules(slotted, releases)
    assert complete
    assert weighted_total(slotted, full) <= weighted_total(slotted, cut)
    assert _feasible(instance, Problem.A, cut) >= _feasible(instance, Problem.A, full)


def test_a_preparation_past_its_deadline_keeps_one_quick_mode_per_job() -> None:
    """:func:`prepare` with its end already passed enumerates one mode per job, cuts the
    list schedules (a note says so) and still has a feasible incumbent."""
    instance = _loaded()
    prepared = prepare(instance, Problem.A, NO_LIMIT, None, 1e9, ends=PAST)
    assert all(len(job.modes) == 1 for job in prepared.slotted.jobs)
    assert prepared.slotted.unenumerated
    assert LISTS_CUT in prepared.notes
    schedule = to_schedule(instance, Problem.A, prepared.slotted, prepared.incumbent)
    report = verify(instance, schedule)
    assert report.feasible, report.violations


def test_a_continuous_solve_out_of_time_returns_a_feasible_list_schedule() -> None:
    """Given a time limit no stage can meet, the continuous backend still answers with a
    schedule the verifier accepts, notes what was cut, and is optimal only where a bound
    meets the schedule."""
    instance = _loaded()
    result = solve_continuous(instance, Problem.A, ExactParams(time_limit=1e-9))
    assert result.schedule is not None
    report = verify(instance, result.schedule)
    assert report.feasible, report.violations
    assert LISTS_CUT in result.notes
    assert result.status in (SolveStatus.FEASIBLE, SolveStatus.OPTIMAL)
    if result.status is SolveStatus.OPTIMAL:
        assert gap_closed(result.objective, result.best_bound, fixed_part(instance))


def test_the_online_start_past_its_deadline_keeps_the_first_policy() -> None:
    """Past its deadline the warm start tries no policy after the first that gives a
    schedule: it is that policy's schedule."""
    instance = _loaded()
    first = simulate(instance, UPPER_BOUND_POLICIES[0], bound=False).schedule
    assert online_start(instance, stop_at=PAST) == first
