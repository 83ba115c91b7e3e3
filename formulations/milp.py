"""The exact solve of problems A, A1 and A2: build, warm start, solve, read back.

:func:`solve_milp` is what ``ddlsched.api.solve(..., method="milp")`` and
``ddlsched solve --method milp`` call. Building and solving are separate
steps (:func:`build` returns the model and what is needed to read it back),
so a researcher can inspect or modify a model before solving it.
"""

from __future__ import annotations

import dataclasses
import math
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from ddlsched.formulations.certify import BoundSet, RawAnswer, certify
from ddlsched.formulations.isolation import (
    DeadlineExceeded,
    SolverCrashed,
    received,
    report,
    run_isolated,
)
from ddlsched.formulations.memory import SLOTTED_MILP
from ddlsched.formulations.outcome import objectives, schedule_from_plan
from ddlsched.formulations.prepared import (
    guard,
    guard_a2,
    parse_problem,
    plan_from_schedule,
    prepare_slotted,
)
from ddlsched.formulations.problem_a2 import (
    SingleMachine,
    build_a2_model,
    schedule_from_a2_model,
    single_machine,
    srpt_schedule,
)
from ddlsched.formulations.slotted import SlottedProblem, relabel_for_anchor
from ddlsched.formulations.solver import MipHooks, solve_model
from ddlsched.formulations.timeindexed import (
    build_model,
    plan_fits,
    plan_from_model,
    set_warm_start,
)

from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.params import ExactParams
from ddlsched.core.result import ExactFacts, Result, SolveStatus

TIME_INDEXED_HIGHS_OPTIONS: dict[str, object] = {"presolve": "off"}
"""HiGHS options for the time-indexed models of A and A1. HiGHS's presolve spent most of
the solve probing these models (18.9 of 23.2 s on a 16-job 4 x 4 instance, for a model
it then solved in 4 s); without it, one thread, 60 s, the three 16-job 4 x 4 instances of
``bench_exact`` took 1.8, 37.6 and 11.8 s instead of 8.4, 61.6 (unproven) and 28.7 s.
Measured and not adopted (no change beyond noise): ``mip_heuristic_effort`` 0, 0.01 and
0.2; ``mip_pscost_minreliable`` 0 and 2; no cuts at nodes; no symmetry detection;
``mip_abs_gap`` just under the objective's granularity."""


@dataclass
class BuiltModel:
    """A built Pyomo model and what reading its solution needs."""

    problem: Problem
    model: pyo.ConcreteModel
    instance: Instance
    slotted: SlottedProblem | None
    single: SingleMachine | None
    exact: bool
    incumbent_plan: list[tuple[int, int]] | None
    build_time_s: float
    anchors: tuple[int, ...] = ()


def build(
    instance: Instance,
    problem: Problem | str = Problem.A,
    warm_start: Schedule | None = None,
    options: ExactParams | None = None,
) -> BuiltModel:
    """Build the MILP of ``problem`` for ``instance``.

    A warm start schedule (problem A or A1, e.g. from a heuristic) is put on
    the slot grid by placing its jobs, in the order of their starts, at the
    earliest slot where their mode fits; the better of it and the built-in
    list schedules becomes the incumbent, which both bounds the horizon and
    is passed to HiGHS as a MIP start.
    """
    solved = parse_problem(problem)
    began = time.perf_counter()
    memory_limit = (options or ExactParams()).memory_limit
    if solved is Problem.A2:
        data = single_machine(instance)
        guard_a2(data, memory_limit)
        model = build_a2_model(data)
        return BuiltModel(
            solved, model, instance, None, data, data.exact, None, time.perf_counter() - began
        )
    prepared = prepare_slotted(instance, solved, warm_start, options)
    slotted, plan, latest = prepared.slotted, prepared.plan, prepared.latest
    starts = [
        (max(0, latest[i] - mode.slots - job.release_slot + 1), mode)
        for i, job in enumerate(slotted.jobs)
        for mode in job.modes
    ]
    variables = sum(count for count, _ in starts)
    nonzeros = sum(count * mode.slots * sum(1 for u in mode.usage if u) for count, mode in starts)
    guard(variables, max(latest), slotted.slot, solved, nonzeros=nonzeros)
    SLOTTED_MILP.check(
        (variables, nonzeros),
        memory_limit,
        f'problem {solved.value}: use fewer jobs or GPUs, or a larger "slot" in the '
        "instance file (then the result is the optimum of the slotted problem only)",
    )
    model = build_model(slotted, latest, prepared.anchors)
    return BuiltModel(
        solved,
        model,
        instance,
        slotted,
        None,
        slotted.exact,
        plan,
        time.perf_counter() - began,
        prepared.anchors,
    )


def solve_built(
    built: BuiltModel, options: ExactParams, *, stop_at: float | None = None
) -> Result:
    """Solve a built model and turn its solution into a :class:`Result`.

    The time limit covers building too: the solver gets ``time_limit -
    build_time_s`` (at least a hundredth of a second, to read the MIP
    start), and is interrupted at ``stop_at`` (``time.monotonic()``) if it
    overruns. ``runtime_s`` is building plus solving; ``metrics["solver_s"]``
    the solver's part. In a child of :func:`ddlsched.formulations.isolation.run_isolated`
    (problems A and A1) each improving schedule is reported to the caller with
    HiGHS's bound (``nan`` where it is not honest), and schedules the caller
    sends are offered to HiGHS when better than its incumbent (:func:`_exchange`;
    in this process both are no-ops).
    """
    if built.single is not None:
        warm = bool(built.model.has_start)
    else:
        warm = built.incumbent_plan is not None and set_warm_start(
            built.model, built.incumbent_plan
        )
    if options.time_limit is not None:
        options = options.replace(time_limit=max(0.01, options.time_limit - built.build_time_s))
    extra = TIME_INDEXED_HIGHS_OPTIONS if built.slotted is not None else None
    if built.slotted is not None:
        hooks: MipHooks | None = _exchange(built, stop_at)
    else:
        hooks = None if stop_at is None else MipHooks(variables=(), stop_at=stop_at)
    fixed, floor = _fixed_and_floor(built)
    outcome = solve_model(
        built.model,
        options,
        warm_start=warm,
        highs_options=extra,
        hooks=hooks,
        fixed=fixed,
        floor=floor,
    )
    notes: list[str] = []
    schedule = None
    if outcome.has_solution:
        if built.single is not None:
            schedule = schedule_from_a2_model(built.model, built.single)
        elif built.slotted is not None:
            plan = plan_from_model(built.model, built.instance.num_jobs)
            schedule = schedule_from_plan(built.instance, built.problem, built.slotted, plan)
    status = outcome.status
    if schedule is None and built.slotted is not None and built.incumbent_plan is not None:
        # A list schedule always exists: never return without one.
        schedule = schedule_from_plan(
            built.instance, built.problem, built.slotted, built.incumbent_plan
        )
        notes.append(f"HiGHS found no solution ({status.value}); the list schedule is returned")
        if status is SolveStatus.TIME_LIMIT:
            status = SolveStatus.FEASIBLE
    unproven = built.slotted.unproven_modes if built.slotted is not None else ()
    unenumerated = built.slotted.unenumerated if built.slotted is not None else ()
    objective, total_jct = objectives(built.instance, schedule)
    answer = RawAnswer(
        method="milp",
        problem=built.problem,
        status=status,
        schedule=schedule,
        objective=objective,
        total_jct=total_jct,
        solver_bound=outcome.bound,
        facts=ExactFacts(
            integral=built.exact,
            modes_proven=not unproven,
            modes_complete=not unenumerated,
            slotted_optimal=outcome.status == SolveStatus.OPTIMAL,
        ),
        rounded=not built.exact,
        unproven=unproven,
        unenumerated=unenumerated,
        runtime_s=built.build_time_s + outcome.runtime_s,
        build_time_s=built.build_time_s,
        metrics={
            "solver_s": outcome.runtime_s,
            "milp_objective": outcome.objective,
            "variables": _count(built.model, pyo.Var),
            "constraints": _count(built.model, pyo.Constraint),
        },
        # HiGHS's word is by its own gap tolerance (--mip-gap): said as such, so that its
        # "optimal" beside a feasible status reads as the tolerance it is, not a proof.
        notes=(
            *notes,
            f"HiGHS's own word: {outcome.message} (by its gap tolerance; the status "
            "is judged on the gap left)",
        ),
    )
    return certify(answer)


def _fixed_and_floor(built: BuiltModel) -> tuple[float, float]:
    """The part of the model's objective no solution changes (each job's weight times its
    release, as the model reads it) and a lower bound on the rest (each job's weight times
    its shortest mode), against which the solver judges its gap."""
    if built.single is not None:
        single = built.single
        weighted = zip(single.weights, single.release_slots, strict=True)
        return single.delta * math.fsum(w * e for w, e in weighted), 0.0
    slotted = built.slotted
    assert slotted is not None  # built models hold one of the two
    fixed = slotted.slot * math.fsum(job.weight * job.release_slot for job in slotted.jobs)
    floor = slotted.slot * math.fsum(job.weight * job.min_slots for job in slotted.jobs)
    return fixed, floor


def _exchange(built: BuiltModel, stop_at: float | None) -> MipHooks:
    """The MILP's side of the portfolio's incumbents crossing (in a child of ``run_isolated``)."""
    slotted, instance = built.slotted, built.instance
    assert slotted is not None
    keys = list(built.model.INDEX)
    position = {key: k for k, key in enumerate(keys)}
    # HiGHS's bound is a bound for the instance only where the model's optimum is its
    # optimum: integral, every mode's duration proven, every mode enumerated.
    honest = built.exact and not slotted.unproven_modes and not slotted.unenumerated

    def on_incumbent(values: np.ndarray, objective: float, bound: float) -> None:
        chosen: dict[int, tuple[int, int]] = {}
        for k in np.flatnonzero(values > 0.5):
            i, m, t = keys[k]
            chosen[i] = (m, t)
        if len(chosen) != len(slotted.jobs):
            return  # not one start per job: nothing to report (HiGHS's are integral)
        plan = [chosen[i] for i in range(len(slotted.jobs))]
        schedule = schedule_from_plan(instance, built.problem, slotted, plan)
        report(("incumbent", schedule, bound if honest else math.nan))

    def offer(best: float) -> np.ndarray | None:
        offered = received()
        if not offered:
            return None
        schedule = offered[-1]  # the sender's newest is its best
        plan = relabel_for_anchor(
            slotted, plan_from_schedule(instance, slotted, schedule), built.anchors
        )
        if slotted.objective(plan) >= best - 1e-9 or not plan_fits(built.model, plan):
            return None
        values = np.zeros(len(keys))
        values[[position[i, m, t] for i, (m, t) in enumerate(plan)]] = 1.0
        return values

    return MipHooks(
        variables=[built.model.x[key] for key in keys],
        on_incumbent=on_incumbent,
        offer=offer,
        stop_at=stop_at,
    )


def _count(model: pyo.ConcreteModel, kind: type) -> int:
    return sum(1 for _ in model.component_data_objects(kind, active=True))


def solve_milp(
    instance: Instance,
    problem: Problem | str = Problem.A,
    params: ExactParams | None = None,
    *,
    warm_start: Schedule | None = None,
    cancel: threading.Event | None = None,
    on_incumbent: Callable[[Schedule, float], None] | None = None,
    offers: queue.Queue[Schedule] | None = None,
    bounds: BoundSet | None = None,
) -> Result:
    """Solve problem ``problem`` (A, A1 or A2) of ``instance`` exactly.

    Parameters
    ----------
    instance
        The instance.
    problem
        ``"A"`` (the cluster), ``"A1"`` (rigid jobs at ``alpha_max`` on ``M``
        pooled GPUs) or ``"A2"`` (the preemptive virtual single machine).
    params
        Time limit, gap, threads, log (:class:`~ddlsched.core.params.ExactParams`).
    warm_start
        A feasible schedule of ``problem`` to start from (A or A1; refused with an
        :class:`~ddlsched.core.model.InputError` when the verifier rejects it as one,
        :func:`ddlsched.formulations.admission.check_warm_start`).
    cancel
        Set from another thread to stop the solve (isolated runs only):
        :class:`ddlsched.formulations.isolation.Cancelled` is raised.
    on_incumbent
        Isolated runs of A and A1: called (in this process) with each
        improving schedule HiGHS finds and its bound at that moment (``nan``
        where it is not a bound for the instance).
    offers
        Isolated runs of A and A1: schedules put here (e.g. by another
        method) are offered to the running HiGHS as solutions.
    bounds
        The bounds known on ``instance`` and the schedules already admitted for it (the
        portfolio's, shared by its backends); else they are computed here
        (:meth:`ddlsched.formulations.certify.BoundSet.of`, problem A only).

    Returns
    -------
    Result
        ``status`` OPTIMAL only when proven optimal for the continuous
        problem (i.e. the instance is integral, or a combinatorial lower
        bound meets the schedule); objective and JCT recomputed from the
        schedule; ``best_bound`` the larger of HiGHS's bound (withdrawn on
        non-integral instances, where it bounds only the slotted problem) and
        the fast bounds (problem A; :func:`ddlsched.formulations.certify.certify`).

    The time limit is a hard one: HiGHS is interrupted :data:`INTERRUPT_SLACK`
    seconds past it, and an isolated run still going :data:`OVERRUN_GRACE`
    seconds past it is stopped,
    returning the last incumbent it reported (or the list schedule).
    """
    params = params or ExactParams()
    solved = parse_problem(problem)
    if bounds is None:
        bounds = BoundSet.of(instance) if solved is Problem.A else BoundSet.empty(instance)
    bounds.admit_warm_start(solved, warm_start)
    result = _solve_milp(instance, solved, params, warm_start, cancel, on_incumbent, offers)
    if solved is not Problem.A:
        return result
    return certify(RawAnswer.of(result), bounds)


def _solve_milp(
    instance: Instance,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    cancel: threading.Event | None,
    on_incumbent: Callable[[Schedule, float], None] | None,
    offers: queue.Queue[Schedule] | None,
) -> Result:
    """:func:`solve_milp` without the combinatorial bounds."""
    began = time.perf_counter()
    # HiGHS's own limit comes first, then our interrupt, then the kill.
    ends = None if params.time_limit is None else time.monotonic() + params.time_limit
    stop_at = None if ends is None else ends + INTERRUPT_SLACK
    if not params.isolate:
        return _build_and_solve(instance, problem, params, warm_start, stop_at)
    last: list[tuple[Schedule, float]] = []

    def on_report(payload: tuple[str, Schedule, float]) -> None:
        _, schedule, bound = payload
        last.append((schedule, bound))
        if on_incumbent is not None:
            on_incumbent(schedule, bound)

    try:
        result = run_isolated(
            _build_and_solve,
            instance,
            problem,
            params,
            warm_start,
            stop_at,
            cancel=cancel,
            on_report=on_report,
            inbox=offers,
            deadline=None if ends is None else ends + OVERRUN_GRACE,
        )
    except SolverCrashed as crash:
        return Result.unsolved(
            "milp",
            problem,
            f"HiGHS crashed: {crash}; no result (solve a smaller model, or report it)",
            time.perf_counter() - began,
        )
    except DeadlineExceeded:
        return _stopped_at_deadline(instance, problem, warm_start, last, began)
    return dataclasses.replace(result, runtime_s=time.perf_counter() - began)


INTERRUPT_SLACK = 0.2
"""Seconds past its time limit at which HiGHS is interrupted (its own limit usually ends it
first; a 5 s limit took 6.3-6.5 s in ``solve_model`` on a 16-job 4 x 4 instance)."""

OVERRUN_GRACE = 0.5
"""Seconds past its time limit after which an isolated MILP that has not answered is
stopped (the interrupt is only seen where HiGHS checks for it, and building the model is
not interrupted at all: 24 jobs released together on 4 x 4 GPUs take 5 s to build, so with
a limit under that the child is always stopped here; 2 s would make every such call 2 s
late)."""


def _stopped_at_deadline(
    instance: Instance,
    problem: Problem,
    warm_start: Schedule | None,
    last: list[tuple[Schedule, float]],
    began: float,
) -> Result:
    """The result of a MILP stopped past its deadline: its last reported incumbent, else the
    warm start or the list schedule, with the last reported bound; never ``optimal``."""
    note = f"HiGHS overran its time limit by over {OVERRUN_GRACE:g} s and was stopped"
    given = (
        warm_start
        if warm_start is not None and math.isfinite(objectives(instance, warm_start)[0])
        else None
    )  # a warm start without ends is no answer: the list schedule is
    schedule, bound = last[-1] if last else (given, math.nan)
    source = "its last reported incumbent" if last else "the warm start"
    if schedule is None and problem == Problem.A2:
        schedule, source = srpt_schedule(single_machine(instance)), "preemptive SRPT"
    elif schedule is None:
        # Past the deadline already: the modes stop at once (one quick mode per job).
        prepared = prepare_slotted(instance, problem, None, ExactParams(time_limit=0.01))
        schedule = schedule_from_plan(instance, problem, prepared.slotted, prepared.plan)
        source = "the list schedule"
    objective, total_jct = objectives(instance, schedule)
    answer = RawAnswer(
        method="milp",
        problem=Problem(problem),
        status=SolveStatus.FEASIBLE,
        schedule=schedule,
        objective=objective,
        total_jct=total_jct,
        solver_bound=bound,
        facts=ExactFacts(),
        runtime_s=time.perf_counter() - began,
        metrics={"milp_objective": math.nan},
        notes=(f"{note}; {source} is returned",),
    )
    return certify(answer)


def _build_and_solve(
    instance: Instance,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    stop_at: float | None = None,
) -> Result:
    return solve_built(build(instance, problem, warm_start, params), params, stop_at=stop_at)
