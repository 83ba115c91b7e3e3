"""From an instance to the prepared problem every exact backend of A and A1 starts from.

The first stage of the exact pipeline (instance -> prepared problem -> backend model ->
decoded schedule -> :class:`~ddlsched.core.result.Result`): the size guards that refuse a
model before it is built (:class:`ModelTooLarge`), and :func:`prepare_slotted`, which
enumerates the modes (:mod:`ddlsched.formulations.modes`), fixes the slot grid and the covering
horizon, finds the incumbent plan (list schedules, or a warm start put on the grid) and
each job's latest completion, and chooses the symmetry anchors. The MILP
(:mod:`ddlsched.formulations.milp`) and CP-SAT (:mod:`ddlsched.formulations.cpsat`) both
start here and
neither calls the other.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from ddlsched.formulations.memory import A2_MILP, Footprint, ModelTooLarge
from ddlsched.formulations.modes import count_vectors_total, problem_a, problem_a1
from ddlsched.formulations.problem_a2 import SingleMachine, single_machine
from ddlsched.formulations.slotted import (
    SlottedProblem,
    choose_anchors,
    greedy_schedule,
    latest_completions,
    place_in_order,
    relabel_for_anchor,
)

from ddlsched.core.model import PROBLEMS, Instance, Problem, Schedule
from ddlsched.core.params import DEFAULT_MEMORY_LIMIT, ExactParams

MAX_VARIABLES = 300_000
"""Most binaries of a time-indexed model :func:`build` accepts (the 16-job
4 x 4 benchmark needs about 8,000)."""

MAX_NONZEROS = 20_000_000
"""Most constraint-matrix nonzeros :func:`build` accepts."""

MAX_HORIZON = 100_000
"""Most slots in a horizon (the list schedules keep a timeline this long)."""


def guard(variables: int, horizon: int, slot: float, problem: str, nonzeros: int = 0) -> None:
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


def guard_a2(
    data: SingleMachine,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    footprint: Footprint = A2_MILP,
) -> None:
    """Refuse problem A2's model of ``data`` before it is built, when its estimated memory
    (``footprint``: :data:`~ddlsched.formulations.memory.A2_MILP`,
    :data:`~ddlsched.formulations.memory.A2_CPSAT` or both,
    :data:`~ddlsched.formulations.memory.A2_RACE`) exceeds
    ``memory_limit`` bytes (``None``: no limit).

    Both backends index every job's slots from its release to the covering horizon (the
    MILP trims them by its incumbent, so the count is an upper one for it): ``sum_i (H -
    e_i)`` pairs.

    Raises
    ------
    ModelTooLarge
        Naming the model, the pairs, the estimate, the limit, the grid and the ways out.
    """
    horizon = data.covering_horizon()
    pairs = sum(horizon - release for release in data.release_slots)
    footprint.check(
        (pairs,),
        memory_limit,
        f"{len(data.ids)} jobs over {horizon:,} slots of {data.delta:g} s (Delta / M): use "
        "fewer jobs, integral instances (ddlsched generate --integral) or a larger "
        '"slot" in the instance file (then the result is the optimum of the slotted '
        "problem only); with equal weights preemptive SRPT is optimal for A2 (Schrage "
        "1968; ddlsched.core.virtual.srpt)",
    )


def parse_problem(problem: Problem | str) -> Problem:
    if problem not in PROBLEMS:
        raise ValueError(f"problem: expected one of {', '.join(PROBLEMS)}, got {problem!r}")
    return Problem(problem)


def estimate_size(
    instance: Instance,
    problem: Problem,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    a2: Footprint = A2_MILP,
) -> None:
    """Refuse a model that is certainly too large, before modes are enumerated.

    Problem A2 is counted exactly (:func:`guard_a2`, with the footprint ``a2`` against
    ``memory_limit``). A and A1 are counted without
    enumerating: the modes (one per vector of GPU counts,
    :func:`ddlsched.formulations.modes.count_vectors_total`), each needing at least
    one start variable; and a lower bound on the horizon, the larger of the
    longest ``r_i + K_i c_i`` and the work ``sum_i g_i K_i c_i / M`` (the
    compute time ``c_i``, its least over the cluster's GPU types, is at most
    ``alpha_i`` under any mapping).

    Raises
    ------
    ModelTooLarge
        Naming the limit exceeded.
    """
    if problem == Problem.A2:
        guard_a2(single_machine(instance), memory_limit, a2)
        return
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
    guard(modes, horizon, instance.slot, problem)


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
    (:func:`ddlsched.formulations.modes.problem_a`)."""
    estimate_size(instance, Problem(problem))
    if problem == "A":
        limit = None if options is None else options.time_limit
        deadline = None if limit is None else time.monotonic() + limit
        slotted = problem_a(instance, options, deadline=deadline)
    else:
        slotted = problem_a1(instance)
    horizon = slotted.covering_horizon()
    # The list schedules walk a timeline of this length: refuse absurd ones first.
    guard(0, horizon, slotted.slot, problem)
    plan = greedy_schedule(slotted)
    if warm_start is not None:
        given = plan_from_schedule(instance, slotted, warm_start)
        if slotted.objective(given) < slotted.objective(plan):
            plan = given
    latest = latest_completions(slotted, slotted.objective(plan))
    # Symmetry breaking assumes every job's modes are closed under renaming identical
    # servers; modes cut short by the time limit or mode_limit are not (relabelling a plan
    # then looked for a mode that was never enumerated: StopIteration, exit 3, on
    # `solve --time-limit 1` of 24 jobs on 4 x 4).
    anchors = choose_anchors(slotted) if problem == "A" and not slotted.unenumerated else ()
    return Prepared(slotted, relabel_for_anchor(slotted, plan, anchors), latest, anchors)


def plan_from_schedule(
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
