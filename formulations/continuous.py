"""Problems A and A1 in continuous time with CP-SAT: no slot grid, an exact rounding bracket.

The time-indexed models (:mod:`ddlsched.formulations.timeindexed`,
:mod:`ddlsched.formulations.cpsat`) need
a horizon of whole slots, which refuses instances with real durations (a 6-job instance on
2 x 4 GPUs needs 343,568 slots of 1 s, beyond :data:`ddlsched.formulations.prepared.MAX_HORIZON`).
This backend models time as integers of ``1 / scale`` s, with ``scale`` a power of two
(:func:`choose_scale`) making the horizon at most :data:`MAX_UNITS` units, and keeps the
answer exact by a *bracket*:

- **the model rounds DOWN** (:func:`relaxed_units`): releases ``floor(r_i * scale)`` and
  mode durations ``floor(d * scale)``. Any schedule of the instance maps to one of this
  model by ``t_i = floor(S_i * scale)``: ``S_i + d_i <= S_j`` gives ``floor(S_i u) +
  floor(d_i u) <= floor(S_j u)``, so intervals disjoint in real time stay disjoint, and a
  set of pairwise-overlapping integer intervals comes from pairwise-overlapping real ones,
  which share an instant (Helly's theorem on the line), so every cumulative holds. Its
  objective is at most ``scale * sum w_i C_i``: CP-SAT's bound on it, divided by the
  scale, is a **valid lower bound on the real optimum**;
- **the schedule uses the real durations** (:func:`serial_place`): a plan of the model
  (a mode and an order of starts per job) is placed job by job in the order of its starts,
  each at the earliest instant its mode's GPUs are free for its real duration, never
  before its release or the previous job's start. A serial scheme always yields a feasible
  schedule, and it is checked by the independent verifier (:mod:`ddlsched.formulations.admission`)
  before it is returned. Placed so, a plan that is feasible with durations rounded *up*
  (each job's real interval inside its rounded one) starts every job no later than the
  plan does, by induction over the order;
- the result is ``optimal`` only when the real objective of that schedule meets the
  rounded-down bound within :data:`ddlsched.core.result.CLOSED_GAP` (the project's one
  definition of a closed gap), else ``feasible`` with the certified bound; the scale makes
  the rounding worth about ``n / MAX_UNITS`` of the objective. A mode whose duration is not
  proven (a time-limited mapping MILP) or modes not all enumerated withdraw the bound
  (:func:`ddlsched.formulations.certify.honest_status`); the fast bounds are then still
  added (:func:`ddlsched.formulations.certify.certify`).

The CP-SAT model (Perron and Didier, *CP-SAT*, OR-Tools, Google; its interval and
cumulative constraints follow the optional-interval formulation of multi-mode scheduling,
Laborie, Rogerie, Shaw and Vilim, *IBM ILOG CP Optimizer for scheduling*, Constraints
2018): one start ``S_i`` per job, one optional fixed-size interval per mode (a mode of A is
a vector of GPU counts per server with the duration of its best mapping, enumerated by
:func:`ddlsched.formulations.modes.problem_a`; of A1 the one pooled mode), exactly one present, a
cumulative per server with the mode's GPUs there as demand, a redundant cumulative over all
``M`` GPUs (as in :mod:`ddlsched.formulations.cpsat`), the symmetry anchors of
:func:`ddlsched.formulations.timeindexed.choose_anchors` (any schedule can be relabelled over
identical servers), releases as lower bounds on starts, and each job's latest completion
from the covering argument and an incumbent (as :func:`ddlsched.formulations.timeindexed.
latest_completions`, in units). The objective is ``sum_i w_i C_i`` in units, weights scaled
to integers. Solved in a reused child interpreter
(:func:`ddlsched.formulations.isolation.run_isolated`, for the reason given in
:mod:`ddlsched.formulations.cpsat`), with the time limit, ``deterministic_limit`` and
``solution_limit`` of :class:`~ddlsched.core.params.ExactParams`, one worker unless
``threads`` says otherwise, and the caller's seed.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from ddlsched.formulations.cpsat_runtime import (
    Answer,
    checked_status,
    deadline,
    integer_weights,
    isolated_answer,
    set_parameters,
)
from ddlsched.formulations.isolation import Cancelled, report
from ddlsched.formulations.slotted import SlottedProblem, sorted_within_classes, tie_groups

from ddlsched.core.model import Instance, Problem, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from ddlsched.core.result import ExactFacts, Result, SolveStatus, whole_objective_gap

if TYPE_CHECKING:
    from ddlsched.formulations.certify import BoundSet, RawAnswer
    from ortools.sat.python.cp_model import (
        CpModel,
        CpSolver,
        CpSolverSolutionCallback,
        IntervalVar,
        IntVar,
    )

METHOD = "cpsat-continuous"
"""The method's name in :data:`ddlsched.formulations.registry.EXACT_METHODS` and in results."""

MAX_UNITS = 1e9
"""Most time units of a model's horizon: CP-SAT's integers stay far from overflow (objective
terms up to about 1e9 times the integer weights), and the rounding costs about ``n / 1e9`` of
the objective, well inside :data:`ddlsched.core.result.CLOSED_GAP`."""

Plan = list[tuple[int, int]]  # (mode, start in units) per job


@dataclass(frozen=True)
class Units:
    """A problem on the integer time of one scale: what the child needs, as plain data.

    Attributes
    ----------
    releases, durations
        Per job, the release and each mode's duration in units (rounded down).
    usages
        Per job and mode, the GPUs it holds on each resource (server, or the pool in A1).
    capacities
        GPUs of each resource.
    weights
        The weights scaled to integers
        (:func:`ddlsched.formulations.cpsat_runtime.integer_weights`).
    classes
        Groups of interchangeable resources; ``anchors`` the symmetry anchors.
    """

    releases: list[int]
    durations: list[list[int]]
    usages: list[list[tuple[int, ...]]]
    capacities: tuple[int, ...]
    weights: list[int]
    classes: tuple[tuple[int, ...], ...]
    anchors: tuple[int, ...]

    def objective(self, plan: Plan) -> int:
        """``sum_i w_i C_i`` of a plan, in units times the integer weights."""
        return sum(
            w * (t + d[m]) for w, d, (m, t) in zip(self.weights, self.durations, plan, strict=True)
        )

    def fits(self, plan: Plan) -> bool:
        """Whether ``plan`` is a schedule of this model (releases and every cumulative),
        checked in integers."""
        if any(t < r for (_, t), r in zip(plan, self.releases, strict=True)):
            return False
        for r, capacity in enumerate(self.capacities):
            events: dict[int, int] = {}
            for i, (m, t) in enumerate(plan):
                use, length = self.usages[i][m][r], self.durations[i][m]
                if use and length:
                    events[t] = events.get(t, 0) + use
                    events[t + length] = events.get(t + length, 0) - use
            load = 0
            for moment in sorted(events):
                load += events[moment]
                if load > capacity:
                    return False
        return True


def choose_scale(horizon: float, max_units: float = MAX_UNITS) -> float:
    """The largest power of two ``u`` with ``horizon * u <= max_units`` (times in units of
    ``1 / u`` s). A power of two makes ``t / u`` and ``S * u`` exact in floating point."""
    if horizon <= 0:
        return 1.0
    return math.ldexp(1.0, math.floor(math.log2(max_units / horizon)))


def covering_seconds(slotted: SlottedProblem, releases: Sequence[float]) -> float:
    """The latest release plus every job's slowest mode: no optimal schedule ends later
    (the covering argument of :mod:`ddlsched.formulations.timeindexed`)."""
    longest = math.fsum(max(mode.duration for mode in job.modes) for job in slotted.jobs)
    return max(releases) + longest


def units_since(seconds: float, origin: float, scale: float) -> int:
    """``floor((seconds - origin) * scale)``, exact: a difference of two doubles rounds,
    and rounded up across a whole unit it would make the model a job's release later than
    the instance's."""
    return math.floor((Fraction(seconds) - Fraction(origin)) * Fraction(scale))


def relaxed_units(
    slotted: SlottedProblem,
    releases: Sequence[float],
    scale: float,
    weights: list[int],
    anchors: tuple[int, ...],
    origin: float = 0.0,
) -> Units:
    """The rounded-DOWN problem on ``scale`` with time 0 at ``origin`` (module docstring):
    a relaxation of the instance, so its optimum divided by the scale, plus ``origin``
    times the weights, bounds the real one from below. :func:`prepare` takes the earliest
    release as ``origin`` when that makes the unit finer: no schedule starts before it, so
    the units then cover only the time a schedule controls (releases all shifted by 1e7 s
    left a unit of 1/64 s, too coarse to prove anything)."""
    return Units(
        [units_since(r, origin, scale) for r in releases],
        [[math.floor(mode.duration * scale) for mode in job.modes] for job in slotted.jobs],
        [[mode.usage for mode in job.modes] for job in slotted.jobs],
        slotted.capacities,
        weights,
        slotted.server_classes,
        anchors,
    )


def serial_place(
    slotted: SlottedProblem,
    releases: Sequence[float],
    order: Sequence[int],
    modes: Sequence[int] | None = None,
    keep_order: bool = True,
    stop_at: float | None = None,
) -> list[tuple[int, float]]:
    """``(mode, start in seconds)`` per job: the jobs placed one by one in ``order``, each at
    the earliest instant its mode fits for its real duration (with ``keep_order``, never
    before the previous job's start), in the mode ``modes[i]`` or, without ``modes``, in the
    mode completing first. Always a feasible schedule (module docstring).

    Past ``stop_at`` (a ``time.monotonic()`` value) the jobs left are appended instead
    (:func:`_append_rest`): still feasible, found in one step per job.
    """
    return _placed(slotted, releases, order, modes, keep_order, stop_at)[0]


def _placed(
    slotted: SlottedProblem,
    releases: Sequence[float],
    order: Sequence[int],
    modes: Sequence[int] | None,
    keep_order: bool,
    stop_at: float | None,
) -> tuple[list[tuple[int, float]], bool]:
    """:func:`serial_place`'s plan and whether every job was placed before ``stop_at``."""
    from ddlsched.formulations.timeline import Timeline

    timeline = Timeline(slotted.capacities)
    plan: list[tuple[int, float]] = [(0, 0.0)] * len(slotted.jobs)
    previous, last_end = 0.0, -math.inf
    for done, i in enumerate(order):
        if stop_at is not None and time.monotonic() >= stop_at:
            _append_rest(slotted, releases, order[done:], modes, plan, max(previous, last_end))
            return plan, False
        job = slotted.jobs[i]
        lowest = max(releases[i], previous) if keep_order else releases[i]
        chosen = range(len(job.modes)) if modes is None else (modes[i],)
        usages = np.array([job.modes[m].usage for m in chosen], dtype=np.int64)
        durations = np.array([job.modes[m].duration for m in chosen])
        starts = timeline.earliest(usages, durations, lowest)
        pick = int(np.argmin(starts + durations))  # the first mode completing first
        m, start = chosen[pick], float(starts[pick])
        timeline.place(start, start + job.modes[m].duration, job.modes[m].usage)
        plan[i], previous = (m, start), start
        last_end = max(last_end, start + job.modes[m].duration)
    return plan, True


def _append_rest(
    slotted: SlottedProblem,
    releases: Sequence[float],
    rest: Sequence[int],
    modes: Sequence[int] | None,
    plan: list[tuple[int, float]],
    after: float,
) -> None:
    """Place the jobs ``rest`` in ``plan`` one after the other from ``after`` (the last end
    and start so far), each in ``modes[i]`` or its shortest mode: every job runs alone, so
    the plan stays feasible in whatever order came before."""
    for i in rest:
        job = slotted.jobs[i]
        if modes is None:
            m = min(range(len(job.modes)), key=lambda k: job.modes[k].duration)
        else:
            m = modes[i]
        start = max(releases[i], after)
        plan[i] = (m, start)
        after = start + job.modes[m].duration


def weighted_total(slotted: SlottedProblem, plan: Sequence[tuple[int, float]]) -> float:
    """``sum_i w_i C_i`` in seconds of a plan with real starts."""
    return math.fsum(
        job.weight * (start + job.modes[m].duration)
        for job, (m, start) in zip(slotted.jobs, plan, strict=True)
    )


def decode(
    slotted: SlottedProblem, releases: Sequence[float], plan: Plan
) -> list[tuple[int, float]]:
    """A model's plan with the real durations: its modes, placed in the order of its starts
    (ties by job), the better of keeping that order of starts and of letting a job start
    before the previous one (:func:`serial_place`; both feasible)."""
    order = sorted(range(len(plan)), key=lambda i: (plan[i][1], i))
    modes = [m for m, _ in plan]
    kept = serial_place(slotted, releases, order, modes, keep_order=True)
    filled = serial_place(slotted, releases, order, modes, keep_order=False)
    return min((kept, filled), key=lambda p: weighted_total(slotted, p))


def list_schedules(
    slotted: SlottedProblem, releases: Sequence[float], stop_at: float | None = None
) -> tuple[list[tuple[int, float]], bool]:
    """The best of a few list schedules in real time (each job in its mode completing first):
    by release then Smith's rule (shortest mode over weight), Smith's rule alone, and by
    release then widest first. The model's first hint and incumbent.

    Returns the plan and whether it is complete: at ``stop_at`` (a ``time.monotonic()``
    value) the schedule being built appends its jobs left one after the other
    (:func:`serial_place`) and the orders not yet tried are skipped; a first order cut
    short is still a feasible schedule.
    """
    jobs, n = slotted.jobs, len(slotted.jobs)

    def smith(i: int) -> float:
        return min(mode.duration for mode in jobs[i].modes) / jobs[i].weight

    def width(i: int) -> int:
        return -max(sum(mode.usage) for mode in jobs[i].modes)

    orders = [
        sorted(range(n), key=lambda i: (releases[i], smith(i), i)),
        sorted(range(n), key=lambda i: (smith(i), i)),
        sorted(range(n), key=lambda i: (releases[i], width(i), smith(i), i)),
    ]
    plans = []
    for order in orders:
        plan, complete = _placed(slotted, releases, order, None, False, stop_at)
        plans.append(plan)
        if not complete:
            break
    return min(plans, key=lambda p: weighted_total(slotted, p)), complete


def latest_ends(units: Units, incumbent: Plan | None) -> list[int]:
    """Each job's latest completion in units that some optimum of the model keeps: the
    covering horizon (no idle unit after the last release in an optimum) and, from a plan
    of the model, ``w_i C_i <= UB - sum_{k != i} w_k (r_k + d_k^min)``."""
    cover = max(units.releases) + sum(max(d) for d in units.durations)
    if incumbent is None:
        return [cover] * len(units.releases)
    upper = units.objective(incumbent)
    rows = zip(units.weights, units.releases, units.durations, strict=True)
    floors = [w * (r + min(d)) for w, r, d in rows]
    total = sum(floors)
    return [
        min(cover, (upper - (total - own)) // w)
        for w, own in zip(units.weights, floors, strict=True)
    ]


def symmetry_rules(
    slotted: SlottedProblem, anchors: tuple[int, ...]
) -> tuple[list[tuple[int, int]], list[tuple[tuple[int, int], tuple[int, int]]]]:
    """The symmetry breaking of :mod:`ddlsched.formulations.cpsat` as data: the anchor's modes left
    out (counts unsorted within a class of identical servers), and the pairs (anchor mode,
    second anchor's mode) that exclude each other (the second unsorted within the ties the
    first leaves). Any schedule can be relabelled over identical servers to satisfy both."""
    if not anchors:
        return [], []
    first = anchors[0]
    dropped = [
        (first, m)
        for m, mode in enumerate(slotted.jobs[first].modes)
        if not sorted_within_classes(mode.usage, slotted.server_classes)
    ]
    pairs = []
    if len(anchors) > 1:
        for modes, unsorted in tie_groups(slotted, first, anchors[1]).values():
            pairs += [((first, m), (anchors[1], k)) for m in modes for k in unsorted]
    return dropped, pairs


@dataclass(frozen=True)
class _Task:
    """What the child needs: plain, picklable data."""

    units: Units
    latest: list[int]
    dropped: list[tuple[int, int]]
    pairs: list[tuple[tuple[int, int], tuple[int, int]]]
    hint: Plan | None
    options: ExactParams
    seed: int
    ends: float  # time.monotonic() at which the search must end (inf: no limit)


def _variables(
    model: CpModel, units: Units, latest: list[int]
) -> tuple[list[IntVar], list[list[IntVar]], list[IntVar], list[list[IntervalVar]]]:
    """Per job a start in ``[r_i, L_i - d_min]``, one optional interval per mode (exactly one
    present, ending by ``L_i``), its end, and the intervals per mode."""
    starts: list[IntVar] = []
    presences: list[list[IntVar]] = []
    ends: list[IntVar] = []
    intervals: list[list[IntervalVar]] = []
    for i, (release, lengths) in enumerate(zip(units.releases, units.durations, strict=True)):
        start = model.new_int_var(release, max(release, latest[i] - min(lengths)), f"S{i}")
        present = [model.new_bool_var(f"p{i}_{m}") for m in range(len(lengths))]
        model.add_exactly_one(present)
        end = model.new_int_var(release + min(lengths), max(latest[i], release + max(lengths)), "")
        model.add(end == start + sum(d * p for d, p in zip(lengths, present, strict=True)))
        model.add(end <= latest[i])
        intervals.append(
            [
                model.new_optional_fixed_size_interval_var(start, d, p, f"I{i}_{m}")
                for m, (d, p) in enumerate(zip(lengths, present, strict=True))
            ]
        )
        starts.append(start)
        presences.append(present)
        ends.append(end)
    return starts, presences, ends, intervals


def _constraints(
    model: CpModel,
    task: _Task,
    starts: list[IntVar],
    presences: list[list[IntVar]],
    ends: list[IntVar],
    intervals: list[list[IntervalVar]],
) -> None:
    """The symmetry rules, a cumulative per resource over the present mode intervals, and
    (with several resources) the redundant one over all GPUs, each job as wide as its GPUs
    for its chosen mode's length (:mod:`ddlsched.formulations.cpsat` measured what it gains)."""
    units = task.units
    for i, m in task.dropped:
        model.add(presences[i][m] == 0)
    for (a, m), (b, k) in task.pairs:
        model.add_implication(presences[a][m], presences[b][k].negated())
    for r, capacity in enumerate(units.capacities):
        chosen = [
            (intervals[i][m], use[r])
            for i, usages in enumerate(units.usages)
            for m, use in enumerate(usages)
            if use[r] > 0
        ]
        if chosen:
            model.add_cumulative([c for c, _ in chosen], [d for _, d in chosen], capacity)
    if len(units.capacities) > 1:
        jobs = []
        for start, end, lengths in zip(starts, ends, units.durations, strict=True):
            length = model.new_int_var(min(lengths), max(lengths), "")
            model.add(length == end - start)
            jobs.append(model.new_interval_var(start, length, end, ""))
        widths = [sum(usages[0]) for usages in units.usages]
        model.add_cumulative(jobs, widths, sum(units.capacities))


def _solve_in_child(task: _Task) -> Answer:
    """Build and solve the continuous model (runs in the child): each improving plan is
    counted, and the search stops at ``options.solution_limit`` of them."""
    from ortools.sat.python import cp_model

    units = task.units
    model = cp_model.CpModel()
    starts, presences, ends, intervals = _variables(model, units, task.latest)
    _constraints(model, task, starts, presences, ends, intervals)
    model.minimize(sum(w * end for w, end in zip(units.weights, ends, strict=True)))
    for i, (m, t) in enumerate(task.hint or ()):
        model.add_hint(starts[i], t)
        for k, present in enumerate(presences[i]):
            model.add_hint(present, k == m)
    solver = cp_model.CpSolver()
    set_parameters(solver, task.options, task.seed, task.ends)

    def plan_of(read: CpSolver | CpSolverSolutionCallback) -> Plan:
        return [
            (next(m for m, p in enumerate(row) if read.BooleanValue(p)), int(read.Value(s)))
            for s, row in zip(starts, presences, strict=True)
        ]

    class Counter(cp_model.CpSolverSolutionCallback):
        """Stops the search at the solution limit; reports each plan to the caller."""

        found = 0

        def on_solution_callback(self) -> None:
            report(plan_of(self))
            Counter.found += 1
            limit = task.options.solution_limit
            if limit is not None and Counter.found >= limit:
                self.StopSearch()

    code = solver.Solve(model, Counter())
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        bound = float(solver.BestObjectiveBound())
        return Answer(checked_status(solver, code), plan_of(solver), bound)
    return Answer(solver.StatusName(code), None, math.nan)


def enumerate_modes(
    instance: Instance, problem: Problem, params: ExactParams, stop_at: float | None = None
) -> SlottedProblem:
    """The modes of ``problem`` (:mod:`ddlsched.formulations.modes`; their slot counts are not
    used): of A enumerated until ``stop_at`` (a ``time.monotonic()`` value; without one, the
    time limit from now) at most, of A1 the one pooled mode per job."""
    from ddlsched.formulations.modes import problem_a, problem_a1

    if problem is Problem.A1:
        return problem_a1(instance)
    limit = params.time_limit
    if stop_at is None and limit is not None:
        stop_at = time.monotonic() + limit
    return problem_a(instance, params, deadline=stop_at)


def plan_of_schedule(
    instance: Instance, slotted: SlottedProblem, schedule: Schedule
) -> list[tuple[int, float]] | None:
    """A feasible schedule placed again in its order of starts, each job in the enumerated
    mode of its GPU counts (the best mapping with them, so no slower): no job starts later
    (module docstring). ``None`` when a job's counts are not an enumerated mode."""
    entries = schedule.by_id()
    modes = []
    for job, sjob in zip(instance.jobs, slotted.jobs, strict=True):
        mapping = entries[job.id].mapping
        if len(sjob.modes) == 1:
            modes.append(0)
            continue
        if mapping is None:
            return None
        counts = tuple(mapping.count(h) for h in range(instance.cluster.num_servers))
        match = [m for m, mode in enumerate(sjob.modes) if mode.usage == counts]
        if not match:
            return None
        modes.append(match[0])
    releases = [job.release for job in instance.jobs]
    order = sorted(range(instance.num_jobs), key=lambda i: (entries[instance.jobs[i].id].start, i))
    return serial_place(slotted, releases, order, modes, keep_order=False)


def to_schedule(
    instance: Instance,
    problem: Problem,
    slotted: SlottedProblem,
    plan: Sequence[tuple[int, float]],
) -> Schedule:
    """The schedule of a plan with real starts: ends from the modes' real durations, and in
    problem A each mode's mapping."""
    entries = []
    for job, sjob, (m, start) in zip(instance.jobs, slotted.jobs, plan, strict=True):
        mode = sjob.modes[m]
        mapping = mode.mapping if problem is Problem.A else None
        entries.append(ScheduledJob(job.id, start, start + mode.duration, mapping))
    return Schedule(tuple(entries), problem=problem)


def pooled_list_schedule(instance: Instance) -> Schedule:
    """Problem A1's best list schedule in real time (:func:`list_schedules`): an answer
    that needs no solver, for a race stopped before either backend gave one."""
    slotted = enumerate_modes(instance, Problem.A1, ExactParams())
    releases = [job.release for job in instance.jobs]
    return to_schedule(instance, Problem.A1, slotted, list_schedules(slotted, releases)[0])


LISTS_CUT = (
    "the list schedules were cut at their share of the time limit: the jobs left were "
    "appended one after the other"
)
"""The note of a result whose list schedules stopped at their deadline."""


@dataclass(frozen=True)
class _Prepared:
    """The parent's side of one solve: modes, scale, the model's data and the incumbent."""

    slotted: SlottedProblem
    releases: list[float]
    scale: float
    units: Units
    incumbent: list[tuple[int, float]]
    hint: Plan
    origin: float = 0.0
    notes: tuple[str, ...] = ()


MODES_SHARE = 0.4
"""Share of the time left at which :func:`prepare` stops enumerating modes, and
:data:`LISTS_SHARE` the one at which it stops the list schedules: the model's building in
the child and the search get the rest (with the whole limit for the modes, 300 jobs on 8 x 8
GPUs answered a 10 s limit after 23 s)."""
LISTS_SHARE = 0.6


def stage_ends(ends: float, share: float) -> float | None:
    """The ``time.monotonic()`` at which a stage given ``share`` of the time left before
    ``ends`` stops; ``None`` without a limit (``ends`` infinite)."""
    if not math.isfinite(ends):
        return None
    now = time.monotonic()
    return now + share * max(0.0, ends - now)


def prepare(
    instance: Instance,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    max_units: float,
    ends: float = math.inf,
) -> _Prepared:
    """Modes, the scale, the rounded-down model, and the incumbent (the best list schedule,
    or the warm start placed again) as a hint on the model's time, relabelled so that the
    symmetry anchors keep it. Of the time left before ``ends`` (``time.monotonic()``), the
    modes take :data:`MODES_SHARE` at most, and the list schedules stop at
    :data:`LISTS_SHARE` (:func:`list_schedules`; a note says so)."""
    from ddlsched.formulations.slotted import choose_anchors, relabel_for_anchor

    lists_until = stage_ends(ends, LISTS_SHARE)
    slotted = enumerate_modes(instance, problem, params, stage_ends(ends, MODES_SHARE))
    releases = [job.release for job in instance.jobs]
    weights = integer_weights([j.id for j in slotted.jobs], [j.weight for j in slotted.jobs])
    usable = problem is Problem.A and not slotted.unenumerated
    anchors = choose_anchors(slotted) if usable else ()
    cover = covering_seconds(slotted, releases)
    origin = min(releases)
    scale = choose_scale(cover - origin, max_units)
    if scale == choose_scale(cover, max_units):
        origin = 0.0  # the same unit: the model as on the clock (CP-SAT's search differs)
    units = relaxed_units(slotted, releases, scale, weights, anchors, origin)
    incumbent, complete = list_schedules(slotted, releases, lists_until)
    notes = () if complete else (LISTS_CUT,)
    given = None if warm_start is None else plan_of_schedule(instance, slotted, warm_start)
    if given is not None and weighted_total(slotted, given) < weighted_total(slotted, incumbent):
        incumbent = given
    on_units = [(m, units_since(start, origin, scale)) for m, start in incumbent]
    hint = relabel_for_anchor(slotted, on_units, anchors)
    return _Prepared(slotted, releases, scale, units, incumbent, hint, origin, notes)


CHILD_GRACE = 0.5
"""Seconds past its end at which a child still building its model (CP-SAT's own time limit
starts once the model is built) is stopped: its answer is then the list schedule."""


def _run_child(task: _Task, cancel: threading.Event | None, last: list[Plan]) -> Answer:
    """:func:`_solve_in_child` in a reused fresh interpreter, each reported plan kept in
    ``last`` (:func:`~ddlsched.formulations.cpsat_runtime.isolated_answer`). Without a
    caller's ``cancel``, the child is stopped :data:`CHILD_GRACE` past ``task.ends``."""
    if cancel is not None or not math.isfinite(task.ends):
        return isolated_answer(_solve_in_child, task, cancel, last.append)
    stop = threading.Event()
    timer = threading.Timer(max(0.0, task.ends + CHILD_GRACE - time.monotonic()), stop.set)
    timer.start()
    try:
        return isolated_answer(_solve_in_child, task, stop, last.append)
    except Cancelled:
        return Answer(f"stopped {CHILD_GRACE:g} s past the time limit", None, math.nan)
    finally:
        timer.cancel()


def solve_continuous(
    instance: Instance,
    problem: Problem | str = Problem.A,
    params: ExactParams | None = None,
    *,
    warm_start: Schedule | None = None,
    seed: int = 0,
    cancel: threading.Event | None = None,
    max_units: float = MAX_UNITS,
    bounds: BoundSet | None = None,
) -> Result:
    """Solve problem A or A1 of ``instance`` in continuous time (see the module docstring).

    ``max_units`` caps the horizon in time units (a smaller one coarsens the scale: the
    tests use it to widen the rounding). Setting ``cancel`` from another thread stops the
    child (:class:`ddlsched.formulations.isolation.Cancelled` is raised). ``bounds``: the
    bounds known on ``instance`` and the schedules admitted (else computed here, before the
    modes, so that their time counts against the limit;
    :class:`~ddlsched.formulations.certify.BoundSet`).

    Raises
    ------
    ValueError
        For problem A2 (preemptive: use ``cpsat`` or ``milp``), or weights CP-SAT cannot
        scale to integers exactly.
    InputError
        For a warm start that is not a feasible schedule of ``problem``.
    ModelTooLarge
        When the model's estimated memory exceeds ``params.memory_limit``
        (:data:`ddlsched.formulations.memory.CPSAT_INTERVALS`), before the child starts.
    """
    from ddlsched.formulations.certify import BoundSet, certify
    from ddlsched.formulations.memory import CPSAT_INTERVALS

    params, safety = _with_safety_net(params or ExactParams())
    ends = deadline(params)  # fixed first: the modes and the model count against the limit
    problem = Problem(problem)
    if problem is Problem.A2:
        raise ValueError(f"{METHOD} solves problems A and A1; for A2 use cpsat or milp")
    began = time.perf_counter()
    if bounds is None:
        bounds = BoundSet.of(instance) if problem is Problem.A else BoundSet.empty(instance)
    bounds.admit_warm_start(problem, warm_start)
    prepared = prepare(instance, problem, params, warm_start, max_units, ends)
    units, hint = prepared.units, prepared.hint
    CPSAT_INTERVALS.check(
        (sum(len(lengths) for lengths in units.durations),),
        params.memory_limit,
        f"problem {problem.value} in continuous time: use fewer jobs or GPUs (fewer "
        "modes), or a mode_limit",
    )
    valid = units.fits(hint)
    dropped, pairs = symmetry_rules(prepared.slotted, units.anchors)
    task = _Task(
        units,
        latest_ends(units, hint if valid else None),
        dropped,
        pairs,
        hint if valid else None,
        params.replace(mip_gap=model_gap(units, params.mip_gap / 2)),  # room for rounding
        seed,
        ends,
    )
    build_time = time.perf_counter() - began
    last: list[Plan] = []
    answer = _run_child(task, cancel, last)
    raw = _raw_answer(instance, problem, prepared, answer, last, began, build_time)
    result = certify(raw, bounds if problem is Problem.A else BoundSet.empty(instance))
    ran = time.perf_counter() - began
    if safety and not result.proven_optimal and ran >= 0.9 * (params.time_limit or 0.0):
        result = dataclasses.replace(result, notes=(*result.notes, safety))
    return result


WORK_SAFETY = 10.0
"""Wall-clock seconds per CP-SAT work unit after which a solve given a deterministic limit
and no time limit is stopped anyway. CP-SAT's deterministic time hardly advances while it
raises its bound one unit at a time over a fine time scale: 0.04 work units in 7 s on five
weighted jobs of 2 x 2 GPUs at 6.7e7 units per second, so a work limit alone never ended it."""


def _with_safety_net(params: ExactParams) -> tuple[ExactParams, str]:
    """``params`` with a wall-clock time limit of :data:`WORK_SAFETY` seconds per work unit
    where only a deterministic limit is given, and the note a result stopped there carries
    (``""`` where nothing changed)."""
    if params.time_limit is not None or params.deterministic_limit is None:
        return params, ""
    limit = WORK_SAFETY * params.deterministic_limit
    note = (
        f"stopped by the safety net of {limit:g} s of wall-clock time ({WORK_SAFETY:g} s per "
        "work unit): CP-SAT's deterministic time did not reach its limit, so where it stopped "
        "depends on the machine's speed"
    )
    return params.replace(time_limit=limit), note


def model_gap(units: Units, gap: float) -> float:
    """CP-SAT's relative gap limit for a gap of ``gap`` on the part of the objective a
    schedule controls (:func:`ddlsched.formulations.certify.gap_closed`): CP-SAT measures its gap
    against the whole objective, releases included
    (:func:`~ddlsched.core.result.whole_objective_gap`, with each job's release and shortest
    mode in units)."""
    rows = zip(units.weights, units.releases, units.durations, strict=True)
    fixed = floor = 0
    for weight, release, durations in rows:
        fixed += weight * release
        floor += weight * min(durations)
    return whole_objective_gap(gap, fixed, floor)


def _bound_seconds(prepared: _Prepared, bound: float) -> float:
    """CP-SAT's bound on the model (units times integer weights, from the origin) in
    seconds times weights."""
    weights = math.fsum(job.weight for job in prepared.slotted.jobs)
    shifted = bound * weights / (prepared.scale * sum(prepared.units.weights))
    return shifted + prepared.origin * weights


def _raw_answer(
    instance: Instance,
    problem: Problem,
    prepared: _Prepared,
    answer: Answer,
    last: list[Plan],
    began: float,
    build_time: float,
) -> RawAnswer:
    """The raw answer of CP-SAT's: the better of the incumbent and the decoded plan
    (CP-SAT's, else the last it reported), and the rounded-down bound in seconds, which
    proves the schedule when the two meet (the bracket of the module docstring, closed or
    not as :func:`ddlsched.formulations.certify.certify` finds it)."""
    from ddlsched.formulations.certify import RawAnswer
    from ddlsched.formulations.outcome import objectives

    slotted, releases = prepared.slotted, prepared.releases
    notes = [f"CP-SAT in continuous time ({prepared.scale:g} units per second): {answer.status}"]
    notes += prepared.notes
    plan = answer.plan if answer.plan is not None else (last[-1] if last else None)
    candidates = [prepared.incumbent]
    if plan is not None:
        candidates.append(decode(slotted, releases, plan))
    real = min(candidates, key=lambda p: weighted_total(slotted, p))
    bound = math.nan
    if answer.plan is not None:
        bound = _bound_seconds(prepared, answer.bound)
    failed = answer.status.startswith("ERROR") or answer.status == "INFEASIBLE"
    status = SolveStatus.ERROR if failed else SolveStatus.FEASIBLE
    if plan is None:
        notes.append("no CP-SAT solution; the list schedule is returned")
    schedule = to_schedule(instance, problem, slotted, real)
    objective, total_jct = objectives(instance, schedule)
    return RawAnswer(
        method=METHOD,
        problem=problem,
        status=status,
        schedule=schedule,
        objective=objective,
        total_jct=total_jct,
        solver_bound=bound,
        facts=ExactFacts(
            integral=slotted.exact,
            modes_proven=not slotted.unproven_modes,
            modes_complete=not slotted.unenumerated,
            bracket_closed=False,
        ),
        unproven=slotted.unproven_modes,
        unenumerated=slotted.unenumerated,
        runtime_s=time.perf_counter() - began,
        build_time_s=build_time,
        metrics={"scale": prepared.scale, "rounded_down_bound": bound},
        notes=tuple(notes),
    )
