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

from ddlsched.core.alpha import all_cut_alpha
from ddlsched.core.model import PROBLEMS, Instance, Problem, Schedule, ScheduledJob
from ddlsched.core.params import ExactParams
from ddlsched.core.result import Result, SolveStatus
from formulations.isolation import (
    DeadlineExceeded,
    SolverCrashed,
    received,
    report,
    run_isolated,
)
from formulations.modes import count_vectors_total, problem_a, problem_a1
from formulations.problem_a2 import (
    SingleMachine,
    build_a2_model,
    schedule_from_a2_model,
    single_machine,
)
from formulations.solver import MipHooks, solve_model
from formulations.timeindexed import (
    SlottedProblem,
    build_model,
    choose_anchors,
    greedy_schedule,
    latest_completions,
    place_in_order,
    plan_fits,
    plan_from_model,
    relabel_for_anchor,
    set_warm_start,
)

MAX_VARIABLES = 300_000
"""Most binaries of a time-indexed model :func:`build` accepts (the 16-job
4 x 4 benchmark needs about 8,000)."""

MAX_NONZEROS = 20_000_000
"""Most constraint-matrix nonzeros :func:`build` accepts."""

MAX_HORIZON = 100_000
"""Most slots in a horizon (the list schedules keep a timeline this long)."""


TIME_INDEXED_HIGHS_OPTIONS: dict[str, object] = {"presolve": "off"}
"""HiGHS options for the time-indexed models of A and A1. HiGHS's presolve spent most of
the solve probing these models (18.9 of 23.2 s on a 16-job 4 x 4 instance, for a model
it then solved in 4 s); without it, one thread, 60 s, the three 16-job 4 x 4 instances of
``bench_exact`` took 1.8, 37.6 and 11.8 s instead of 8.4, 61.6 (unproven) and 28.7 s.
Measured and not adopted (no change beyond noise): ``mip_heuristic_effort`` 0, 0.01 and
0.2; ``mip_pscost_minreliable`` 0 and 2; no cuts at nodes; no symmetry detection;
``mip_abs_gap`` just under the objective's granularity."""


class ModelTooLarge(ValueError):
    """The time-indexed model would have too many variables for the slot."""


def _guard(variables: int, horizon: int, slot: float, problem: str, nonzeros: int = 0) -> None:
    too_big = []
    if variables > MAX_VARIABLES:
        too_big.append(f"{variables:,} variables (limit {MAX_VARIABLES:,})")
    if nonzeros > MAX_NONZEROS:
        too_big.append(f"about {nonzeros:,} nonzeros (limit {MAX_NONZEROS:,})")
    if horizon > MAX_HORIZON:
        too_big.append(
            f"a horizon of {horizon:,} slots of {slot:g} s (limit {MAX_HORIZON:,} slots)"
        )
    if too_big:
        raise ModelTooLarge(
            f"problem {problem}: the time-indexed model would need at least "
            f"{' and '.join(too_big)}; use fewer jobs or GPUs, integral instances (ddlsched "
            'generate --integral), or a larger "slot" in the instance file (then the '
            "result is the optimum of the slotted problem only)"
        )


def _problem(problem: Problem | str) -> Problem:
    if problem not in PROBLEMS:
        raise ValueError(f"problem: expected one of {', '.join(PROBLEMS)}, got {problem!r}")
    return Problem(problem)


def estimate_size(instance: Instance, problem: Problem) -> None:
    """Refuse a model of A or A1 that is certainly too large, before modes are enumerated.

    Counted without enumerating: the modes (one per vector of GPU counts,
    :func:`formulations.modes.count_vectors_total`), each needing at least
    one start variable; and a lower bound on the horizon, the larger of the
    longest ``r_i + K_i c_i`` and the work ``sum_i g_i K_i c_i / M`` (the
    compute time ``c_i``, its least over the cluster's GPU types, is at most
    ``alpha_i`` under any mapping).

    Raises
    ------
    ModelTooLarge
        Naming the limit exceeded.
    """
    cluster = instance.cluster
    if problem == Problem.A:
        modes = sum(
            count_vectors_total(job.gpus, cluster.gpus_per_server) for job in instance.jobs
        )
    else:
        modes = instance.num_jobs
    compute = {job.id: min(job.compute_on(t) for t in cluster.types) for job in instance.jobs}
    longest = max(job.release + job.iterations * compute[job.id] for job in instance.jobs)
    work = math.fsum(job.gpus * job.iterations * compute[job.id] for job in instance.jobs)
    seconds = max(longest, work / cluster.num_gpus)
    horizon = math.floor(seconds / instance.slot) if math.isfinite(seconds) else 2**63
    _guard(modes, horizon, instance.slot, problem)


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


@dataclass(frozen=True)
class Prepared:
    """What every exact model of A or A1 starts from (the MILP and CP-SAT alike)."""

    slotted: SlottedProblem
    plan: list[tuple[int, int]]
    latest: list[int]
    anchors: tuple[int, ...]


def prepare_slotted(
    instance: Instance,
    problem: Problem,
    warm_start: Schedule | None,
    options: ExactParams | None,
) -> Prepared:
    """The slotted problem, the incumbent plan (list schedules or the warm start, relabelled
    for symmetry), each job's latest completion slot and the symmetry anchors. The modes of
    problem A are enumerated until ``options.time_limit`` from now at most
    (:func:`formulations.modes.problem_a`)."""
    estimate_size(instance, Problem(problem))
    if problem == "A":
        limit = None if options is None else options.time_limit
        deadline = None if limit is None else time.monotonic() + limit
        slotted = problem_a(instance, options, deadline=deadline)
    else:
        slotted = problem_a1(instance)
    horizon = slotted.covering_horizon()
    # The list schedules walk a timeline of this length: refuse absurd ones first.
    _guard(0, horizon, slotted.slot, problem)
    plan = greedy_schedule(slotted)
    if warm_start is not None:
        given = _plan_from_schedule(instance, slotted, warm_start)
        if slotted.objective(given) < slotted.objective(plan):
            plan = given
    latest = latest_completions(slotted, slotted.objective(plan))
    # Symmetry breaking assumes every job's modes are closed under renaming identical
    # servers; modes cut short by the time limit or mode_limit are not (relabelling a plan
    # then looked for a mode that was never enumerated: StopIteration, exit 3, on
    # `solve --time-limit 1` of 24 jobs on 4 x 4).
    anchors = choose_anchors(slotted) if problem == "A" and not slotted.unenumerated else ()
    return Prepared(slotted, relabel_for_anchor(slotted, plan, anchors), latest, anchors)


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
    problem = _problem(problem)
    began = time.perf_counter()
    if problem == "A2":
        data = single_machine(instance)
        horizon = data.covering_horizon()
        _guard(
            2 * len(data.ids) * horizon, horizon, data.delta, problem, 8 * len(data.ids) * horizon
        )
        model = build_a2_model(data)
        return BuiltModel(
            problem, model, instance, None, data, data.exact, None, time.perf_counter() - began
        )
    prepared = prepare_slotted(instance, problem, warm_start, options)
    slotted, plan, latest = prepared.slotted, prepared.plan, prepared.latest
    starts = [
        (max(0, latest[i] - mode.slots - job.release_slot + 1), mode)
        for i, job in enumerate(slotted.jobs)
        for mode in job.modes
    ]
    _guard(
        sum(count for count, _ in starts),
        max(latest),
        slotted.slot,
        problem,
        nonzeros=sum(
            count * mode.slots * sum(1 for u in mode.usage if u) for count, mode in starts
        ),
    )
    model = build_model(slotted, latest, prepared.anchors)
    return BuiltModel(
        problem,
        model,
        instance,
        slotted,
        None,
        slotted.exact,
        plan,
        time.perf_counter() - began,
        prepared.anchors,
    )


def _plan_from_schedule(
    instance: Instance, slotted: SlottedProblem, schedule: Schedule
) -> list[tuple[int, int]]:
    entries = schedule.by_id()
    missing = [job.id for job in instance.jobs if job.id not in entries]
    if missing:
        raise ValueError(f"warm_start: no entry for jobs {missing}")
    order = sorted(range(instance.num_jobs), key=lambda i: entries[instance.jobs[i].id].start)
    earliest = [math.floor(entries[job.id].start / slotted.slot) for job in instance.jobs]
    preferred: list[int | None] = []
    for job, sjob in zip(instance.jobs, slotted.jobs, strict=True):
        mapping = entries[job.id].mapping
        if mapping is None or len(sjob.modes) == 1:
            preferred.append(None if len(sjob.modes) > 1 else 0)
            continue
        counts = tuple(mapping.count(h) for h in range(instance.cluster.num_servers))
        match = [m for m, mode in enumerate(sjob.modes) if mode.usage == counts]
        preferred.append(match[0] if match else None)
    return place_in_order(slotted, order, earliest, preferred)


def schedule_from_plan(
    instance: Instance, problem: Problem, slotted: SlottedProblem, plan: list[tuple[int, int]]
) -> Schedule:
    """The schedule of a plan of ``(mode, start slot)`` per job, with exact (unslotted) ends."""
    entries = []
    for job, sjob, (m, t) in zip(instance.jobs, slotted.jobs, plan, strict=True):
        mode = sjob.modes[m]
        start = t * slotted.slot
        if problem == "A":
            entries.append(ScheduledJob(job.id, start, start + mode.duration, mode.mapping))
        else:
            duration = job.iterations * all_cut_alpha(job, instance.cluster)
            entries.append(ScheduledJob(job.id, start, start + duration))
    return Schedule(tuple(entries), problem=problem)


def solve_built(
    built: BuiltModel, options: ExactParams, *, stop_at: float | None = None
) -> Result:
    """Solve a built model and turn its solution into a :class:`Result`.

    The time limit covers building too: the solver gets ``time_limit -
    build_time_s`` (at least a hundredth of a second, to read the MIP
    start), and is interrupted at ``stop_at`` (``time.monotonic()``) if it
    overruns. ``runtime_s`` is building plus solving; ``metrics["solver_s"]``
    the solver's part. In a child of :func:`formulations.isolation.run_isolated`
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
    outcome = solve_model(built.model, options, warm_start=warm, highs_options=extra, hooks=hooks)
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
    status, bound, caveats = honest_status(
        status, outcome.bound, built.exact, unproven, unenumerated
    )
    notes += caveats
    objective, total_jct = objectives(built.instance, schedule)
    return Result(
        method="milp",
        problem=built.problem,
        status=status,
        objective=objective,
        total_jct=total_jct,
        best_bound=bound,
        runtime_s=built.build_time_s + outcome.runtime_s,
        schedule=schedule,
        build_time_s=built.build_time_s,
        metrics={
            "solver_s": outcome.runtime_s,
            "milp_objective": outcome.objective,
            "variables": _count(built.model, pyo.Var),
            "constraints": _count(built.model, pyo.Constraint),
        },
        facts={
            "slotted_optimal": outcome.status == SolveStatus.OPTIMAL,
            "integral": built.exact,
            "modes_proven": not unproven,
            "modes_complete": not unenumerated,
        },
        notes=(*notes, f"HiGHS: {outcome.message}"),
    )


def _exchange(built: BuiltModel, stop_at: float | None) -> MipHooks:
    """The MILP's side of the portfolio's incumbents crossing (in a child of ``run_isolated``)."""
    slotted, instance = built.slotted, built.instance
    assert slotted is not None
    keys = list(built.model.INDEX)
    position = {key: k for k, key in enumerate(keys)}
    honest = built.exact and not slotted.unproven_modes

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
            slotted, _plan_from_schedule(instance, slotted, schedule), built.anchors
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
    """``sum w C`` and ``sum w (C - r)`` of a schedule whose entries carry ``end``."""
    if schedule is None:
        return math.nan, math.nan
    ends = {entry.id: entry.end for entry in schedule.jobs}
    total = math.fsum(job.weight * float(ends[job.id] or 0.0) for job in instance.jobs)
    jct = math.fsum(
        job.weight * (float(ends[job.id] or 0.0) - job.release) for job in instance.jobs
    )
    return total, jct


def solve_milp(
    instance: Instance,
    problem: Problem | str = Problem.A,
    params: ExactParams | None = None,
    *,
    warm_start: Schedule | None = None,
    cancel: threading.Event | None = None,
    on_incumbent: Callable[[Schedule, float], None] | None = None,
    offers: queue.Queue[Schedule] | None = None,
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
        A feasible schedule (A or A1) to start from.
    cancel
        Set from another thread to stop the solve (isolated runs only):
        :class:`formulations.isolation.Cancelled` is raised.
    on_incumbent
        Isolated runs of A and A1: called (in this process) with each
        improving schedule HiGHS finds and its bound at that moment (``nan``
        where it is not a bound for the instance).
    offers
        Isolated runs of A and A1: schedules put here (e.g. by another
        method) are offered to the running HiGHS as solutions.

    Returns
    -------
    Result
        ``status`` OPTIMAL only when proven optimal for the continuous
        problem (i.e. the instance is integral, or a combinatorial lower
        bound meets the schedule); objective and JCT recomputed from the
        schedule; ``best_bound`` the larger of HiGHS's bound (withdrawn on
        non-integral instances, where it bounds only the slotted problem) and
        the combinatorial bounds (problem A;
        :func:`formulations.certify.with_best_bound`).

    The time limit is a hard one: HiGHS is interrupted :data:`INTERRUPT_SLACK`
    seconds past it, and an isolated run still going :data:`OVERRUN_GRACE`
    seconds past it is stopped,
    returning the last incumbent it reported (or the list schedule).
    """
    from formulations.certify import with_best_bound

    params = params or ExactParams()
    problem = _problem(problem)
    result = _solve_milp(instance, problem, params, warm_start, cancel, on_incumbent, offers)
    return with_best_bound(result, instance)


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
not interrupted at all: the 24-job batch instances of issue 25 take 5 s to build, so with a
limit under that the child is always stopped here; 2 s made every such call 2 s late)."""


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
    schedule, bound = last[-1] if last else (warm_start, math.nan)
    source = "its last reported incumbent" if last else "the warm start"
    if schedule is None and problem != Problem.A2:
        # Past the deadline already: the modes stop at once (one quick mode per job).
        prepared = prepare_slotted(instance, problem, None, ExactParams(time_limit=0.01))
        schedule = schedule_from_plan(instance, problem, prepared.slotted, prepared.plan)
        source = "the list schedule"
    if schedule is None:
        elapsed = time.perf_counter() - began
        return Result.unsolved("milp", problem, f"{note}; no schedule", elapsed)
    objective, total_jct = objectives(instance, schedule)
    return Result(
        method="milp",
        problem=problem,
        status=SolveStatus.FEASIBLE,
        objective=objective,
        total_jct=total_jct,
        best_bound=bound,
        runtime_s=time.perf_counter() - began,
        schedule=schedule,
        metrics={"milp_objective": math.nan},
        facts={
            "slotted_optimal": False,
            "integral": False,
            "modes_proven": False,
            "modes_complete": False,
        },
        notes=(f"{note}; {source} is returned",),
    )


def _build_and_solve(
    instance: Instance,
    problem: Problem,
    params: ExactParams,
    warm_start: Schedule | None,
    stop_at: float | None = None,
) -> Result:
    return solve_built(build(instance, problem, warm_start, params), params, stop_at=stop_at)
