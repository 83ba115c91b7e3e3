"""Problem A2: the preemptive virtual single machine, as a time-indexed MILP.

Job ``i`` has size ``v_i = g_i K_i alpha_i^max / M`` (:ref:`model-problem-a2`)
and release ``r_i``; one machine processes one job at a time and may preempt.
Slots have length ``delta = Delta / M``: on an integral instance ``K_i
alpha_i^max`` is a multiple of ``Delta``, so ``v_i`` is a multiple of
``delta``, as is every release; preemptive SRPT, which is optimal for unit
weights, then decides only at multiples of ``delta`` (releases and
completions), so a schedule that switches jobs only at slot boundaries is
optimal and the model is exact. Elsewhere sizes and releases are rounded up
and the result is flagged as the slotted optimum.

Variables: ``y[i, s]`` = 1 if job ``i`` runs in slot ``s``; ``a[i, s]`` = 1 if
job ``i`` is still incomplete at the start of slot ``s``. Families:

- ``_work``: ``sum_s y[i, s] = n_i`` (its size in slots);
- ``_one_machine``: ``sum_i y[i, s] <= 1``;
- ``_incomplete``: ``y[i, s] <= a[i, s]`` and ``a[i, s+1] <= a[i, s]``: a job
  runs only while incomplete, and once complete stays so; ``a[i, s] = 1`` for
  the first ``n_i`` slots after release (it cannot finish sooner);
- ``_work_done``: with ``W[i, s] = sum_{s' <= s} y[i, s']`` (continuous,
  by a running sum), ``W[i, s] >= n_i (1 - a[i, s+1])``: a job complete
  after slot ``s`` has had all its work by then. Implied for integer
  solutions; it makes the LP relaxation much tighter (a fractional ``a``
  can no longer drop before the work is placed).

Completion ``C_i = delta (e_i + sum_s a[i, s])``, minimised in ``sum w_i
C_i``; at an optimum ``a`` drops right after the job's last slot. Horizon:
covering (an idle slot after the last release could be removed) gives
``max e + sum n``; an incumbent ``UB`` (jobs in release order, without
preemption) limits each job as in :mod:`ddlsched.formulations.timeindexed`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyomo.environ as pyo
from ddlsched.formulations.grid import on_grid, release_slots, slots_needed
from ddlsched.formulations.slotted import EPS

from ddlsched.core.alpha import virtual_size
from ddlsched.core.model import Instance, Piece, Problem, Schedule, ScheduledJob
from ddlsched.core.virtual import srpt


@dataclass(frozen=True)
class SingleMachine:
    """The slotted A2 data: ``delta``, sizes, slots, releases and release slots."""

    delta: float
    sizes: tuple[float, ...]
    units: tuple[int, ...]
    releases: tuple[float, ...]
    release_slots: tuple[int, ...]
    weights: tuple[float, ...]
    ids: tuple[str, ...]
    exact: bool

    def covering_horizon(self) -> int:
        """Slots by which every job of some optimal schedule is done.

        The machine need never idle after the last release, so all work is
        done by the last release slot plus the total work.
        """
        return max(self.release_slots) + sum(self.units)


def single_machine(instance: Instance) -> SingleMachine:
    """The slotted form of problem A2 for ``instance``.

    ``delta = Delta / M`` in general; on an integral instance every size and
    release is an integer multiple of it, and ``delta`` is enlarged by the
    greatest common divisor of those integers, which keeps the model exact
    with fewer slots.
    """
    machine = instance.cluster.num_gpus
    delta = instance.slot / machine
    sizes = tuple(virtual_size(job, instance.cluster, job.iterations) for job in instance.jobs)
    grid = [v / delta for v in sizes] + [job.release / delta for job in instance.jobs]
    if all(on_grid(x, 1.0) for x in grid):
        delta *= math.gcd(*(round(x) for x in grid)) or 1
    releases = tuple(release_slots(job.release, delta) for job in instance.jobs)
    exact = all(on_grid(v, delta) for v in sizes) and all(
        on_grid(job.release, delta) for job in instance.jobs
    )
    return SingleMachine(
        delta,
        sizes,
        tuple(slots_needed(v, delta) for v in sizes),
        tuple(job.release for job in instance.jobs),
        releases,
        tuple(job.weight for job in instance.jobs),
        tuple(job.id for job in instance.jobs),
        exact,
    )


def serial_incumbent(data: SingleMachine) -> float:
    """``sum w_i C_i`` (slotted) of running jobs whole, in release order."""
    time = 0
    total = 0.0
    for i in sorted(range(len(data.ids)), key=lambda i: (data.release_slots[i], i)):
        time = max(time, data.release_slots[i]) + data.units[i]
        total += data.weights[i] * time * data.delta
    return total


def srpt_slots(data: SingleMachine) -> tuple[list[list[int]], list[int]]:
    """Preemptive SRPT on the slotted machine: each job's processed slots and completion slot.

    Sizes and releases are whole slots, so SRPT preempts and completes only
    at slot boundaries. With unit weights this schedule is optimal for the
    slotted problem (Schrage 1968), which makes it the A2 model's MIP start.
    """
    completions, pieces = srpt(
        [float(u) for u in data.units],
        [float(r) for r in data.release_slots],
        [str(i) for i in range(len(data.ids))],
    )
    slots = [
        [s for begin, end in pieces.get(str(i), []) for s in range(round(begin), round(end))]
        for i in range(len(data.ids))
    ]
    return slots, [round(completions[str(i)]) for i in range(len(data.ids))]


def srpt_schedule(data: SingleMachine) -> Schedule:
    """Preemptive SRPT on the slotted machine (:func:`srpt_slots`) as a schedule of A2: the
    answer of a solve stopped before its model gave one."""
    processed, _ = srpt_slots(data)
    return schedule_from_slots(dict(enumerate(processed)), data)


def build_a2_model(data: SingleMachine) -> pyo.ConcreteModel:
    """The Pyomo model of the slotted single machine, with SRPT set as its MIP start.

    ``model.has_start`` says whether the start was set (it lies inside the
    model's index, which the horizon derived from it guarantees).
    """
    n = len(data.ids)
    cover = data.covering_horizon()
    processed, completion = srpt_slots(data)
    srpt_total = sum(data.weights[i] * completion[i] * data.delta for i in range(n))
    incumbent = min(serial_incumbent(data), srpt_total)
    floors = [
        data.weights[i] * (data.release_slots[i] + data.units[i]) * data.delta for i in range(n)
    ]
    latest = [
        min(
            cover,
            math.floor(
                (incumbent - (sum(floors) - floors[i])) / (data.weights[i] * data.delta) + EPS
            ),
        )
        for i in range(n)
    ]
    index = [(i, s) for i in range(n) for s in range(data.release_slots[i], latest[i])]
    model = pyo.ConcreteModel(name="problem_A2")
    model.INDEX = pyo.Set(initialize=index, dimen=2, ordered=True)
    model.y = pyo.Var(model.INDEX, within=pyo.Binary)
    model.a = pyo.Var(model.INDEX, within=pyo.Binary)
    _work(model, data)
    _one_machine(model, index)
    _incomplete(model, data, index)
    _work_done(model, data, index)
    by_job: dict[int, list[int]] = {}
    for i, s in index:
        by_job.setdefault(i, []).append(s)
    model.total_completion = pyo.Objective(
        expr=sum(
            data.weights[i]
            * data.delta
            * (data.release_slots[i] + sum(model.a[i, s] for s in by_job[i]))
            for i in range(n)
        ),
        sense=pyo.minimize,
    )
    model.has_start = srpt_total <= incumbent and _set_start(model, processed, completion)
    return model


def _set_start(
    model: pyo.ConcreteModel, processed: list[list[int]], completion: list[int]
) -> bool:
    """Set ``y`` and ``a`` to the SRPT schedule; False if it leaves the index."""
    busy = {(i, s) for i, slots in enumerate(processed) for s in slots}
    if not busy <= set(model.INDEX):
        return False
    for i, s in model.INDEX:
        model.y[i, s].set_value(1 if (i, s) in busy else 0)
        model.a[i, s].set_value(1 if s < completion[i] else 0)
    return True


def _work(model: pyo.ConcreteModel, data: SingleMachine) -> None:
    """Each job gets exactly its size in slots."""
    by_job: dict[int, list[int]] = {}
    for i, s in model.INDEX:
        by_job.setdefault(i, []).append(s)
    model.work = pyo.Constraint(
        range(len(data.ids)),
        rule=lambda m, i: sum(m.y[i, s] for s in by_job[i]) == data.units[i],
    )


def _one_machine(model: pyo.ConcreteModel, index: list[tuple[int, int]]) -> None:
    """At most one job per slot."""
    by_slot: dict[int, list[int]] = {}
    for i, s in index:
        by_slot.setdefault(s, []).append(i)
    model.one_machine = pyo.Constraint(
        sorted(by_slot),
        rule=lambda m, s: sum(m.y[i, s] for i in by_slot[s]) <= 1,
    )


def _incomplete(
    model: pyo.ConcreteModel, data: SingleMachine, index: list[tuple[int, int]]
) -> None:
    """Run only while incomplete; complete stays complete; no early finish."""
    model.runs_while_incomplete = pyo.Constraint(
        model.INDEX, rule=lambda m, i, s: m.y[i, s] <= m.a[i, s]
    )
    present = set(index)
    model.stays_complete = pyo.Constraint(
        [(i, s) for i, s in index if (i, s + 1) in present],
        rule=lambda m, i, s: m.a[i, s + 1] <= m.a[i, s],
    )
    for i, s in index:
        if s < data.release_slots[i] + data.units[i]:
            model.a[i, s].fix(1)


def _work_done(
    model: pyo.ConcreteModel, data: SingleMachine, index: list[tuple[int, int]]
) -> None:
    """Complete after slot ``s`` only if all work is done by ``s``."""
    model.done = pyo.Var(model.INDEX, bounds=(0, None))
    present = set(index)
    model.running_sum = pyo.Constraint(
        model.INDEX,
        rule=lambda m, i, s: (
            m.done[i, s] == (m.done[i, s - 1] if (i, s - 1) in present else 0) + m.y[i, s]
        ),
    )
    model.work_done = pyo.Constraint(
        [(i, s) for i, s in index if (i, s + 1) in present],
        rule=lambda m, i, s: m.done[i, s] >= data.units[i] * (1 - m.a[i, s + 1]),
    )


def schedule_from_a2_model(model: pyo.ConcreteModel, data: SingleMachine) -> Schedule:
    """The pieces of each job; the last is trimmed so pieces add up to ``v_i``."""
    slots: dict[int, list[int]] = {}
    for i, s in model.INDEX:
        value = model.y[i, s].value
        if value is not None and value > 0.5:
            slots.setdefault(i, []).append(s)
    return schedule_from_slots(slots, data)


def schedule_from_slots(slots: dict[int, list[int]], data: SingleMachine) -> Schedule:
    """The A2 schedule of each job's processed slots (the last piece trimmed to ``v_i``).

    The first piece starts no earlier than the job's release (as
    :func:`ddlsched.formulations.outcome.schedule_from_plan`: a release within the grid's
    noise past a slot boundary counts as that slot).
    """
    entries = []
    for i, job_id in enumerate(data.ids):
        pieces: list[list[float]] = []
        for s in sorted(slots.get(i, [])):
            if pieces and math.isclose(pieces[-1][1], s * data.delta):
                pieces[-1][1] = (s + 1) * data.delta
            else:
                pieces.append([s * data.delta, (s + 1) * data.delta])
        pieces[0][0] = max(pieces[0][0], data.releases[i])
        # On slotted (rounded-up) sizes the last piece may run past v_i, or short of it
        # by what a start moved to the release took.
        excess = sum(b - a for a, b in pieces) - data.sizes[i]
        pieces[-1][1] -= excess
        entries.append(
            ScheduledJob(
                job_id,
                pieces[0][0],
                pieces[-1][1],
                pieces=tuple(Piece(a, b) for a, b in pieces),
            )
        )
    return Schedule(tuple(entries), problem=Problem.A2)
