"""Problems A and A1 with OR-Tools' CP-SAT: a second exact backend beside the HiGHS MILP.

The model is built from the same slotted problem as the MILP
(:func:`ddlsched.formulations.prepared.prepare_slotted`: modes, release slots, each job's
latest completion slot, the symmetry anchors and the list-schedule incumbent),
so both backends answer the same question, and their optima are compared in
the tests. Constraint families, each one function:

- :func:`_one_mode_per_job`: job ``i`` has a start ``S_i`` in
  ``[e_i, L_i - d_min]`` and one optional interval per mode ``m``
  (``S_i``, length ``d_im``), exactly one of them present;
- :func:`_horizon_and_symmetry`: a mode's interval ends by ``L_i``; the
  anchor job keeps only modes whose counts are sorted within each class of
  identical servers, and a second anchor only modes sorted within the ties
  the anchor's mode leaves (the MILP's symmetry rules: any schedule can be
  relabelled so). The second anchor cut CP-SAT's median time from 2.2 to
  1.7 s (4 x 4 / 24 jobs), 2.9 to 2.5 s (4 x 8 / 32) and 2.5 to 2.1 s
  (4 x 4 / 28), three seeds each, one worker;
- :func:`_capacity`: one cumulative per resource (server) over the present
  intervals, with the mode's GPUs on that resource as demand;
- :func:`_pooled_capacity` (redundant): one cumulative over all ``M`` GPUs, each job
  ``g_i`` wide for its chosen mode's length (implied by the servers' cumulatives, whose
  capacities add up to ``M``). It lets CP-SAT reason about the cluster's energy at once:
  on 4 x 4 / 24-job instances (seeds 0-4, one worker, 60 s) the proven optima went from 3
  of 5 (1.8, 61, 13.2, 1.9, 61 s) to 5 of 5 (1.7, 2.7, 1.5, 1.0, 2.2 s), and on 4 x 8 / 32
  jobs from 1 of 3 to 3 of 3 (3.6, 4.4, 1.0 s);
- the objective ``sum_i w_i (S_i + d_i)`` in slots, weights scaled to integers
  (exactly: a weight that is not a ratio of small integers is refused).

Solver options are translated in
:func:`ddlsched.formulations.cpsat_runtime.set_parameters`; the status is read
before any value. Honesty as for the MILP: ``optimal`` only when CP-SAT proves
it, the instance is integral (every duration and release on the slot grid,
so the slotted optimum is the continuous one) and every mode's duration is
exact. CP-SAT is deterministic for a given seed with one worker (the default
here); with more workers its parallel portfolio is not.

Problem A2 (preemptive, one machine; :func:`_solve_a2_in_child`): booleans
``x[i, s]`` on the MILP's slotted single machine
(:func:`ddlsched.formulations.problem_a2.single_machine`), one job per slot, each job's
slots adding up to its size, the completion at least every run slot's end;
preemptive SRPT (its slots and completions) as a complete hint, solved without CP-SAT's
presolve. The same honesty: ``optimal`` only on integral instances.

**A child process.** OR-Tools and ``highspy`` each ship their own build of
HiGHS, and whichever loads first in a process breaks the other (undefined
symbols at import). The CP-SAT model is therefore built and solved in a
fresh child interpreter that never imports ``highspy``
(:func:`ddlsched.formulations.isolation.run_isolated` with ``reuse=True``: a fresh
interpreter kept for the next call; the
parent prepares the slotted problem, which needs the mapping MILP, and sends
it as plain data). The child also contains a native crash: the parent then
reports an error with the list schedule instead of dying. Ctrl-C stops the
child.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddlsched.formulations.cpsat_runtime import (
    Answer,
    checked_status,
    deadline,
    integer_weights,
    isolated_answer,
    set_parameters,
)
from ddlsched.formulations.isolation import ReportHandler, report
from ddlsched.formulations.slotted import SlottedProblem, sorted_within_classes, tie_groups

from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.params import ExactParams
from ddlsched.core.result import ExactFacts, Result, SolveStatus

if TYPE_CHECKING:
    from ddlsched.formulations.certify import BoundSet, RawAnswer
    from ortools.sat.python.cp_model import (
        CpModel,
        CpSolver,
        CpSolverSolutionCallback,
        IntervalVar,
        IntVar,
    )


def _one_mode_per_job(
    model: CpModel, slotted: SlottedProblem, latest: list[int]
) -> tuple[list[IntVar], list[list[IntVar]], list[list[IntervalVar]]]:
    """Family 1: one start per job, one optional interval per mode, exactly one present."""
    starts: list[IntVar] = []
    presences: list[list[IntVar]] = []
    intervals: list[list[IntervalVar]] = []
    for i, job in enumerate(slotted.jobs):
        shortest = min(mode.slots for mode in job.modes)
        last_start = max(job.release_slot, latest[i] - shortest)
        start = model.new_int_var(job.release_slot, last_start, f"S{i}")
        present = [model.new_bool_var(f"p{i}_{m}") for m in range(len(job.modes))]
        model.add_exactly_one(present)
        intervals.append(
            [
                model.new_optional_fixed_size_interval_var(
                    start, mode.slots, present[m], f"I{i}_{m}"
                )
                for m, mode in enumerate(job.modes)
            ]
        )
        starts.append(start)
        presences.append(present)
    return starts, presences, intervals


def _horizon_and_symmetry(
    model: CpModel,
    slotted: SlottedProblem,
    latest: list[int],
    anchors: tuple[int, ...],
    starts: list[IntVar],
    presences: list[list[IntVar]],
) -> None:
    """Family 2: a mode ends by the job's latest slot; the anchor keeps sorted modes only,
    and the second anchor, if any, modes sorted within the ties the anchor's mode leaves."""
    anchor = anchors[0] if anchors else None
    for i, job in enumerate(slotted.jobs):
        for m, mode in enumerate(job.modes):
            model.add(starts[i] + mode.slots <= latest[i]).only_enforce_if(presences[i][m])
            if i == anchor and not sorted_within_classes(mode.usage, slotted.server_classes):
                model.add(presences[i][m] == 0)
    if len(anchors) > 1:
        for modes, unsorted in tie_groups(slotted, anchors[0], anchors[1]).values():
            for m in modes:
                for k in unsorted:
                    model.add_implication(
                        presences[anchors[0]][m], presences[anchors[1]][k].negated()
                    )


def _capacity(model: CpModel, slotted: SlottedProblem, intervals: list[list[IntervalVar]]) -> None:
    """Family 3: one cumulative per resource over the present intervals."""
    for r, capacity in enumerate(slotted.capacities):
        chosen, demands = [], []
        for i, job in enumerate(slotted.jobs):
            for m, mode in enumerate(job.modes):
                if mode.usage[r] > 0:
                    chosen.append(intervals[i][m])
                    demands.append(mode.usage[r])
        if chosen:
            model.add_cumulative(chosen, demands, capacity)


def _pooled_capacity(
    model: CpModel, slotted: SlottedProblem, starts: list[IntVar], presences: list[list[IntVar]]
) -> list[IntVar]:
    """Family 4 (redundant): one cumulative over all GPUs, each job ``g_i`` wide for its chosen
    mode's length. Implied by family 3 (the servers' capacities add up to ``M``); it lets
    CP-SAT reason about the whole cluster's energy at once. Returns each job's end."""
    ends, jobs = [], []
    for i, job in enumerate(slotted.jobs):
        lengths = [mode.slots for mode in job.modes]
        length = model.new_int_var(min(lengths), max(lengths), f"d{i}")
        model.add(length == sum(d * presences[i][m] for m, d in enumerate(lengths)))
        end = model.new_int_var(0, 2**40, f"C{i}")
        jobs.append(model.new_interval_var(starts[i], length, end, f"J{i}"))
        ends.append(end)
    widths = [sum(job.modes[0].usage) for job in slotted.jobs]
    model.add_cumulative(jobs, widths, sum(slotted.capacities))
    return ends


@dataclass(frozen=True)
class _Task:
    """What the child needs: plain, picklable data."""

    slotted: SlottedProblem
    latest: list[int]
    anchors: tuple[int, ...]
    plan: list[tuple[int, int]]
    weights: list[int]
    options: ExactParams
    seed: int
    ends: float  # time.monotonic() at which the search must end (inf: no limit)
    stream: bool = False  # report each improving plan to the caller (the portfolio)


def _solve_in_child(task: _Task) -> Answer:
    """Build and solve the CP-SAT model (runs in the spawned child)."""
    from ortools.sat.python import cp_model

    slotted, latest = task.slotted, task.latest
    model = cp_model.CpModel()
    starts, presences, intervals = _one_mode_per_job(model, slotted, latest)
    _horizon_and_symmetry(model, slotted, latest, task.anchors, starts, presences)
    _capacity(model, slotted, intervals)
    ends = _pooled_capacity(model, slotted, starts, presences)
    model.minimize(sum(w * end for w, end in zip(task.weights, ends, strict=True)))
    for i, (m, t) in enumerate(task.plan):
        model.add_hint(starts[i], t)
        for k, present in enumerate(presences[i]):
            model.add_hint(present, k == m)
    solver = cp_model.CpSolver()
    set_parameters(solver, task.options, task.seed, task.ends)

    def plan_of(read: CpSolver | CpSolverSolutionCallback) -> list[tuple[int, int]]:
        """The (mode, start) per job from ``read`` (the solver or a solution callback)."""
        return [
            (
                next(m for m, p in enumerate(presences[i]) if read.BooleanValue(p)),
                int(read.Value(starts[i])),
            )
            for i in range(len(slotted.jobs))
        ]

    class Reporter(cp_model.CpSolverSolutionCallback):
        """Each improving solution's plan to the caller
        (:func:`ddlsched.formulations.isolation.report`)."""

        def on_solution_callback(self) -> None:
            report(plan_of(self))

    code = solver.Solve(model, Reporter() if task.stream else None)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        plan = plan_of(solver)
        return Answer(checked_status(solver, code), plan, float(solver.BestObjectiveBound()))
    return Answer(solver.StatusName(code), None, math.nan)


@dataclass(frozen=True)
class _A2Task:
    """Problem A2 for the child: the slotted single machine as plain data."""

    units: list[int]
    release_slots: list[int]
    horizon: int
    hint: list[list[int]]  # SRPT's slots per job
    weights: list[int]
    options: ExactParams
    seed: int
    ends: float  # time.monotonic() at which the search must end (inf: no limit)


def _solve_a2_in_child(task: _A2Task) -> Answer:
    """Problem A2 with CP-SAT (runs in the spawned child): ``x[i, s]`` = job ``i`` runs in
    slot ``s``; one job per slot (``AddAtMostOne``); ``sum_s x[i, s] = n_i``; the
    completion ``C_i >= (s + 1) x[i, s]``; minimise ``sum w_i C_i``. ``plan`` answers
    with ``(job, slot)`` pairs of the slots run."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    runs: dict[tuple[int, int], IntVar] = {}
    completions = []
    for i, (units, release) in enumerate(zip(task.units, task.release_slots, strict=True)):
        slots = range(release, task.horizon)
        for s in slots:
            runs[i, s] = model.new_bool_var(f"x{i}_{s}")
        model.add(sum(runs[i, s] for s in slots) == units)
        done = model.new_int_var(release + units, task.horizon, f"C{i}")
        for s in slots:
            model.add(done >= s + 1).only_enforce_if(runs[i, s])
        completions.append(done)
    by_slot: dict[int, list[IntVar]] = {}
    for (_, s), run in runs.items():
        by_slot.setdefault(s, []).append(run)
    for column in by_slot.values():
        if len(column) > 1:
            model.add_at_most_one(column)
    model.minimize(sum(w * c for w, c in zip(task.weights, completions, strict=True)))
    for i, hinted in enumerate(task.hint):
        chosen = set(hinted)
        for s in range(task.release_slots[i], task.horizon):
            model.add_hint(runs[i, s], s in chosen)
        model.add_hint(completions[i], max(hinted) + 1)  # a complete hint: a first solution
    solver = cp_model.CpSolver()
    set_parameters(solver, task.options, task.seed, task.ends)
    # CP-SAT's presolve expands each completion over its slots: on 4 Philly jobs (19,611
    # pairs) it took the whole 14 s limit and 1 GiB, ending UNKNOWN; without it the
    # search starts from the complete hint at once (FEASIBLE, 195 MiB).
    solver.parameters.cp_model_presolve = False
    code = solver.Solve(model)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        plan = [key for key, run in runs.items() if solver.BooleanValue(run)]
        return Answer(checked_status(solver, code), plan, float(solver.BestObjectiveBound()))
    return Answer(solver.StatusName(code), None, math.nan)


def _solve_a2(
    instance: Instance,
    params: ExactParams,
    seed: int,
    cancel: threading.Event | None,
    ends: float,
) -> RawAnswer:
    """Problem A2 with CP-SAT: the same slotted data and honesty as the MILP's A2; the
    search ends at ``ends`` (``time.monotonic()``)."""
    from ddlsched.formulations.memory import A2_CPSAT
    from ddlsched.formulations.prepared import guard_a2
    from ddlsched.formulations.problem_a2 import schedule_from_slots, single_machine, srpt_slots

    began = time.perf_counter()
    data = single_machine(instance)
    guard_a2(data, params.memory_limit, A2_CPSAT)
    weights = integer_weights(list(data.ids), list(data.weights))
    hint, _ = srpt_slots(data)
    build_time = time.perf_counter() - began
    task = _A2Task(
        list(data.units),
        list(data.release_slots),
        data.covering_horizon(),
        hint,
        weights,
        params,
        seed,
        ends,
    )
    answer = _run_child(task, cancel)
    fallback = [(i, s) for i, run in enumerate(hint) for s in run]  # SRPT's (job, slot) pairs

    def schedule_of(pairs: list[tuple[int, int]]) -> Schedule:
        slots: dict[int, list[int]] = {}
        for i, s in pairs:
            slots.setdefault(i, []).append(s)
        return schedule_from_slots(slots, data)

    return _result(
        instance,
        Problem.A2,
        answer,
        began,
        build_time,
        seconds=_seconds(weights, data.weights, data.delta),
        fallback=(fallback, "preemptive SRPT"),
        schedule_of=schedule_of,
        exact=data.exact,
    )


def _seconds(integer: Sequence[int], weights: Sequence[float], unit: float) -> float:
    """Seconds per unit of CP-SAT's objective: slots of ``unit`` s, weights scaled to integers."""
    return unit * sum(weights) / sum(integer)


def _result(
    instance: Instance,
    problem: Problem,
    answer: Answer,
    began: float,
    build_time: float,
    *,
    seconds: float,
    fallback: tuple[list[tuple[int, int]], str],
    schedule_of: Callable[[list[tuple[int, int]]], Schedule],
    exact: bool,
    unproven: tuple[str, ...] = (),
    unenumerated: tuple[str, ...] = (),
    metrics: Callable[[list[tuple[int, int]]], dict[str, float]] | None = None,
) -> RawAnswer:
    """The raw answer of CP-SAT (problems A, A1 and A2 alike), for
    :func:`ddlsched.formulations.certify.certify` to make honest and certify.

    Without a CP-SAT solution the ``fallback`` plan (and its name, for the note) is
    returned, never no schedule.
    """
    from ddlsched.formulations.certify import RawAnswer
    from ddlsched.formulations.outcome import objectives

    runtime = time.perf_counter() - began
    notes = [f"CP-SAT: {answer.status}"]
    if answer.status == "INFEASIBLE":
        return RawAnswer(
            "cpsat",
            problem,
            SolveStatus.INFEASIBLE,
            None,
            math.nan,
            math.nan,
            runtime_s=runtime,
            build_time_s=build_time,
            notes=tuple(notes),
        )
    if answer.plan is not None:
        plan = answer.plan
        status = SolveStatus.OPTIMAL if answer.status == "OPTIMAL" else SolveStatus.FEASIBLE
        bound = answer.bound * seconds
    else:
        plan, name = fallback
        status = SolveStatus.ERROR if answer.status.startswith("ERROR") else SolveStatus.FEASIBLE
        bound = math.nan
        notes.append(f"no CP-SAT solution; {name} is returned")
    schedule = schedule_of(plan)
    objective, total_jct = objectives(instance, schedule)
    return RawAnswer(
        method="cpsat",
        problem=problem,
        status=status,
        schedule=schedule,
        objective=objective,
        total_jct=total_jct,
        solver_bound=bound,
        facts=ExactFacts(
            integral=exact,
            modes_proven=not unproven,
            modes_complete=not unenumerated,
            slotted_optimal=answer.status == "OPTIMAL",
        ),
        rounded=not exact,
        unproven=unproven,
        unenumerated=unenumerated,
        runtime_s=runtime,
        build_time_s=build_time,
        metrics=metrics(plan) if metrics is not None else {},
        notes=tuple(notes),
    )


def _run_child(
    task: _Task | _A2Task,
    cancel: threading.Event | None,
    on_report: ReportHandler[list[tuple[int, int]]] | None = None,
) -> Answer:
    """:func:`_solve_in_child` (:func:`_solve_a2_in_child` for problem A2) in a fresh
    interpreter; a crash becomes an ``ERROR`` answer."""
    if isinstance(task, _A2Task):
        return isolated_answer(_solve_a2_in_child, task, cancel, on_report)
    return isolated_answer(_solve_in_child, task, cancel, on_report)


def solve_cpsat(
    instance: Instance,
    problem: Problem | str = Problem.A,
    params: ExactParams | None = None,
    *,
    warm_start: Schedule | None = None,
    seed: int = 0,
    cancel: threading.Event | None = None,
    on_incumbent: Callable[[Schedule], None] | None = None,
    bounds: BoundSet | None = None,
) -> Result:
    """Solve problem A, A1 or A2 of ``instance`` with CP-SAT (see the module docstring).

    Setting ``cancel`` from another thread stops the child
    (:class:`ddlsched.formulations.isolation.Cancelled` is raised). ``on_incumbent``
    (problems A and A1) is called in this process with each improving
    schedule as CP-SAT finds it (the portfolio passes them to the MILP).
    On problem A ``best_bound`` is the larger of CP-SAT's and the fast bounds, and a
    schedule meeting the latter is ``optimal`` (:func:`ddlsched.formulations.certify.certify`;
    ``bounds``: those known already, with the schedules admitted, else computed here).

    Raises
    ------
    InputError
        For a warm start that is not a feasible schedule of ``problem``
        (:func:`ddlsched.formulations.admission.check_warm_start`).
    ValueError
        For weights CP-SAT cannot scale to integers exactly.
    """
    params = params or ExactParams()
    ends = deadline(params)  # fixed first: preparing the model counts, the search gets the rest
    from ddlsched.formulations.certify import BoundSet, certify

    problem = Problem(problem)
    if bounds is None:
        bounds = BoundSet.of(instance) if problem is Problem.A else BoundSet.empty(instance)
    bounds.admit_warm_start(problem, warm_start)
    if problem is Problem.A2:
        return certify(_solve_a2(instance, params, seed, cancel, ends))
    answer = _solve_cluster(
        instance, problem, params, warm_start, seed, cancel, on_incumbent, ends
    )
    return certify(answer, bounds if problem is Problem.A else None)


def _solve_cluster(
    instance: Instance,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    seed: int,
    cancel: threading.Event | None,
    on_incumbent: Callable[[Schedule], None] | None,
    ends: float,
) -> RawAnswer:
    """:func:`solve_cpsat`'s raw answer on problem A or A1; the search ends at ``ends``
    (``time.monotonic()``)."""
    from ddlsched.formulations.memory import CPSAT_INTERVALS
    from ddlsched.formulations.outcome import schedule_from_plan
    from ddlsched.formulations.prepared import prepare_slotted

    began = time.perf_counter()
    prepared = prepare_slotted(instance, problem, warm_start, params)
    slotted = prepared.slotted
    CPSAT_INTERVALS.check(
        (sum(len(job.modes) for job in slotted.jobs),),
        params.memory_limit,
        f"problem {problem.value}: use fewer jobs or GPUs (fewer modes), or a mode_limit",
    )
    weights = integer_weights(
        [job.id for job in slotted.jobs], [job.weight for job in slotted.jobs]
    )
    build_time = time.perf_counter() - began
    answer = _run_child(
        _Task(
            slotted,
            prepared.latest,
            prepared.anchors,
            prepared.plan,
            weights,
            params,
            seed,
            ends,
            stream=on_incumbent is not None,
        ),
        cancel,
        None
        if on_incumbent is None
        else lambda plan: on_incumbent(schedule_from_plan(instance, problem, slotted, plan)),
    )
    return _result(
        instance,
        problem,
        answer,
        began,
        build_time,
        seconds=_seconds(weights, [job.weight for job in slotted.jobs], slotted.slot),
        fallback=(prepared.plan, "the list schedule"),
        schedule_of=lambda plan: schedule_from_plan(instance, problem, slotted, plan),
        exact=slotted.exact,
        unproven=slotted.unproven_modes,
        unenumerated=slotted.unenumerated,
        metrics=lambda plan: {"slotted_objective": slotted.objective(plan)},
    )
