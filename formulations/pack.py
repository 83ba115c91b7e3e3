"""Relax-and-pack and a large-neighbourhood search: schedules of A from the pooled relaxation.

The pooled integral bound (bound 7 of :mod:`ddlsched.formulations.lower_bounds`) relaxes
problem A in two ways on an integral instance: one pool of ``M`` GPUs instead of servers,
and every job at its fastest duration ``p_i``. Its optimum gives a start per job. When those
starts can be kept and each job given a mode of duration ``p_i`` on the servers (a packing:
per server, the GPUs of the jobs running there never exceed its capacity), the packed
schedule has the pooled optimum's objective, so it *meets* the bound, a proof of
optimality for the instance itself (:func:`ddlsched.formulations.certify.certify` decides
that, as for any schedule and bound). This is the relax-and-fix idea of time-indexed
models (Sousa and Wolsey, Math. Programming 54, 1992, for the pooled model; CP-SAT for the
packing: Perron and Didier, *CP-SAT*, OR-Tools) on the resource the relaxation pooled.

Three searches, each a CP-SAT model over the instance's slots (durations ``d_im`` of
:class:`~ddlsched.formulations.slotted.SlottedProblem`, rounded up: any plan that fits
decodes to a feasible schedule of A, :func:`ddlsched.formulations.outcome.schedule_from_plan`):

- :func:`pack`: the pooled starts kept, each job in one of its fastest modes (an optional
  interval per mode, a cumulative per server; identical servers' symmetry broken by the
  order of first use, :func:`_first_use_rule`); if that fails, every start may move up to
  ``window`` slots either way (never before its release), minimising ``sum w C`` from the
  pooled starts as hint, and stopping as soon as the objective reaches the bound;
- :func:`improve`: a large-neighbourhood search (Shaw, CP 1998; Pisinger and Ropke,
  *Large neighbourhood search*, 2010): repeatedly free the jobs starting in one window of
  time (or a random set of them), fix the others as they are, and let CP-SAT place the freed
  ones again in their few fastest modes; a better plan is kept.

Every CP-SAT call runs on one worker with a deterministic limit, so the plans found are the
same on every machine when no wall-clock deadline cuts a call short.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
from ddlsched.formulations.slotted import SlottedProblem

from ddlsched.core.model import Instance

if TYPE_CHECKING:
    from ortools.sat.python.cp_model import CpModel, IntervalVar, IntVar

Plan = list[tuple[int, int]]
"""A ``(mode, start slot)`` per job."""


@dataclass(frozen=True)
class PackSettings:
    """Limits of the packing and of the neighbourhood search.

    Attributes
    ----------
    windows
        Slots each pooled start may move, tried in turn by :func:`pack` (0: the starts
        kept, the only packing that can equal the pooled optimum).
    pack_work
        CP-SAT's deterministic time per packing model (its work units).
    spread
        In :func:`improve`, a freed job may take a mode at most this many slots longer than
        its fastest.
    modes_per_job
        In :func:`improve`, at most this many of a freed job's modes (fastest first).
    free_jobs
        Jobs freed per neighbourhood.
    rounds
        Neighbourhoods tried by :func:`improve`.
    patience
        Neighbourhoods in a row without a strictly better plan after which it gives up.
    round_work
        CP-SAT's deterministic time per neighbourhood.
    """

    windows: tuple[int, ...] = (0, 2, 6)
    pack_work: float = 20.0
    spread: int = 1
    modes_per_job: int = 24
    free_jobs: int = 24
    rounds: int = 400
    patience: int = 40
    round_work: float = 2.0

    def __post_init__(self) -> None:
        if not self.windows or any(w < 0 for w in self.windows):
            raise ValueError(f"windows: must be slots >= 0, got {self.windows!r}")
        for name in ("pack_work", "round_work"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")
        for name in ("spread", "modes_per_job", "free_jobs", "rounds", "patience"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < (0 if name == "spread" else 1):
                raise ValueError(f"{name}: must be a whole number >= 1, got {value!r}")


@dataclass(frozen=True)
class _Free:
    """A job the model places: its candidate modes, its start's range, its hint."""

    modes: tuple[int, ...]
    earliest: int
    latest: int
    hint: tuple[int, int]


def fastest_modes(problem: SlottedProblem, i: int, spread: int = 0) -> tuple[int, ...]:
    """Job ``i``'s modes at most ``spread`` slots longer than its fastest, fewest servers
    first (a set closed under relabelling identical servers: a mode's duration depends on
    its shape only)."""
    job = problem.jobs[i]
    shortest = job.min_slots
    chosen = [m for m, mode in enumerate(job.modes) if mode.slots <= shortest + spread]
    return tuple(
        sorted(
            chosen,
            key=lambda m: (job.modes[m].slots, sum(u > 0 for u in job.modes[m].usage), m),
        )
    )


SEARCH_MODES = 20_000
"""Most modes (vectors of GPU counts, all jobs together) for which the search takes every
mode of problem A (:func:`ddlsched.formulations.modes.problem_a`); past it, each job's
compact modes only (:func:`compact_modes`): 100 jobs on 8 x 8 GPUs have 111,500 modes
(2.3 s to enumerate), 200 jobs on 16 x 8 millions."""


SEARCH_HORIZON = 5_000
"""Most slots of a search problem's covering horizon: off the instance's grid (durations of
seconds to weeks on a 1 s slot) the searches run on a coarser slot, so that a list schedule's
timeline stays small (154 million slots of 1 s on 24 realistic jobs on 4 x 4 GPUs; a list
schedule costs time in proportion to the horizon, about 30 ms at 50,000 slots). The
exact-friendly instances of 48-200 jobs cover 200-2,000 slots and keep their grid."""


def search_problem(
    instance: Instance, max_modes: int = SEARCH_MODES, max_horizon: int = SEARCH_HORIZON
) -> SlottedProblem:
    """The slotted problem the searches place jobs in: every mode of problem A when there
    are at most ``max_modes`` in all, else :func:`compact_modes`; on the instance's slot, or
    on a multiple of it where the covering horizon would exceed ``max_horizon`` slots
    (:func:`coarsened`). Any plan of it decodes to a schedule of A (each mode carries a
    mapping that attains its duration, and durations and releases round up to the slot)."""
    from ddlsched.formulations.modes import count_vectors_total, problem_a

    capacities = instance.cluster.gpus_per_server
    total = sum(count_vectors_total(job.gpus, capacities) for job in instance.jobs)
    problem = problem_a(instance, None) if total <= max_modes else compact_modes(instance)
    horizon = problem.covering_horizon()
    if horizon <= max_horizon:
        return problem
    return coarsened(problem, instance, problem.slot * math.ceil(horizon / max_horizon))


def coarsened(problem: SlottedProblem, instance: Instance, slot: float) -> SlottedProblem:
    """``problem`` on slots of ``slot`` seconds: each mode's duration and each release
    rounded up to it (a plan that fits stays a feasible schedule with the real durations)."""
    from ddlsched.formulations.grid import on_grid, release_slots, slots_needed

    jobs = []
    for job, sjob in zip(instance.jobs, problem.jobs, strict=True):
        modes = tuple(
            dataclasses.replace(mode, slots=slots_needed(mode.duration, slot))
            for mode in sjob.modes
        )
        jobs.append(
            dataclasses.replace(sjob, release_slot=release_slots(job.release, slot), modes=modes)
        )
    exact = all(on_grid(mode.duration, slot) for job in jobs for mode in job.modes) and all(
        on_grid(job.release, slot) for job in instance.jobs
    )
    return dataclasses.replace(problem, jobs=tuple(jobs), slot=slot, exact=exact)


def compact_modes(instance: Instance) -> SlottedProblem:
    """Each job on one server, for every server it fits on; a job wider than every server
    on the servers filled in turn from each server on (largest first), its nodes in order.
    The modes a packing of the pooled relaxation needs where a job's fastest mapping keeps
    it on one server (intra-server links faster than the network), found without a search."""
    from ddlsched.formulations.grid import on_grid, release_slots, slots_needed
    from ddlsched.formulations.slotted import SlottedJob, SlottedMode

    from ddlsched.core.alpha import alpha

    cluster, slot = instance.cluster, instance.slot
    capacities = cluster.gpus_per_server
    servers = len(capacities)
    jobs, exact = [], True
    for job in instance.jobs:
        mappings = [(h,) * job.gpus for h in range(servers) if capacities[h] >= job.gpus]
        if not mappings:
            for first in range(servers):
                order = sorted(
                    range(servers), key=lambda h: (-capacities[h], (h - first) % servers)
                )
                nodes: list[int] = []
                for h in order:
                    nodes += [h] * min(capacities[h], job.gpus - len(nodes))
                mappings.append(tuple(nodes))
        modes = []
        for mapping in dict.fromkeys(mappings):
            usage = tuple(mapping.count(h) for h in range(servers))
            duration = job.iterations * alpha(job, cluster, mapping)
            modes.append(SlottedMode(usage, slots_needed(duration, slot), duration, mapping))
            exact &= on_grid(duration, slot)
        exact &= on_grid(job.release, slot)
        jobs.append(SlottedJob(job.id, job.weight, release_slots(job.release, slot), tuple(modes)))
    classes: dict[tuple[int, str], list[int]] = {}
    for h, g in enumerate(capacities):
        classes.setdefault((g, cluster.type_of(h)), []).append(h)
    return SlottedProblem(
        tuple(jobs), capacities, slot, exact, tuple(tuple(c) for c in classes.values())
    )


def pooled_start_slots(problem: SlottedProblem, starts: Sequence[float]) -> list[int]:
    """The pooled solution's starts (seconds) on ``problem``'s slots, never before a
    release: the pooled model's slot is a multiple of the instance's on its grid, and off
    it a start rounds up to the next slot."""
    return [
        max(job.release_slot, math.ceil(start / problem.slot - 1e-9))
        for job, start in zip(problem.jobs, starts, strict=True)
    ]


def pack(
    problem: SlottedProblem,
    starts: Sequence[int],
    settings: PackSettings | None = None,
    *,
    target: float = -math.inf,
    seed: int = 0,
    stop_at: float | None = None,
) -> Plan | None:
    """A plan packing ``starts`` (slots, one per job) onto the servers (module docstring):
    the first of ``settings.windows`` that CP-SAT packs, the best plan found within it, or
    ``None``. The search of a window stops once its objective (slotted ``sum w C``,
    seconds) reaches ``target`` (the pooled bound: nothing can be better). ``stop_at``: a
    ``time.monotonic()`` past which no call starts and a running one stops."""
    settings = settings or PackSettings()
    for window in settings.windows:
        if stop_at is not None and time.monotonic() >= stop_at:
            return None
        free = {
            i: _Free(
                fastest_modes(problem, i),
                max(job.release_slot, starts[i] - window),
                starts[i] + window,
                (fastest_modes(problem, i)[0], starts[i]),
            )
            for i, job in enumerate(problem.jobs)
        }
        plan = _solve(problem, free, {}, target, settings.pack_work, seed, stop_at)
        if plan is not None:
            return plan
    return None


def improve(
    problem: SlottedProblem,
    plan: Plan,
    settings: PackSettings | None = None,
    *,
    seed: int = 0,
    stop: Callable[[], bool] | None = None,
    on_better: Callable[[Plan], None] | None = None,
    stop_at: float | None = None,
) -> Plan:
    """The best plan of a large-neighbourhood search from ``plan`` (module docstring):
    ``settings.rounds`` neighbourhoods at most (``settings.patience`` in a row without a
    strictly better plan end it), each the jobs starting in one window of time (every other
    round a random set), placed again by CP-SAT with the others fixed; a plan no worse is
    kept, ``on_better`` receives each strictly better one. ``stop()`` (checked each
    round) and ``stop_at`` end it early. Deterministic for a seed without ``stop_at``."""
    settings = settings or PackSettings()
    rng = np.random.default_rng(seed)
    best = list(plan)
    value = problem.objective(best)
    n = len(best)
    size = min(settings.free_jobs, n)
    since_better = 0
    for round_ in range(settings.rounds if n > 1 else 0):
        if (stop is not None and stop()) or (stop_at is not None and time.monotonic() >= stop_at):
            break
        if since_better >= settings.patience:
            break
        since_better += 1
        chosen = _neighbourhood(best, size, rng, random=round_ % 2 == 1)
        candidate = _reoptimised(problem, best, chosen, settings, seed + round_, stop_at)
        if candidate is None:
            continue
        found = problem.objective(candidate)
        if found <= value + 1e-9:
            better = found < value - 1e-9
            best, value = candidate, min(found, value)
            if better:
                since_better = 0
                if on_better is not None:
                    on_better(best)
    return best


def _neighbourhood(plan: Plan, size: int, rng: np.random.Generator, random: bool) -> list[int]:
    """``size`` jobs: those starting nearest a random job's start (a window of time), or
    ``size`` at random."""
    n = len(plan)
    if random:
        return sorted(int(i) for i in rng.choice(n, size=size, replace=False))
    by_start = sorted(range(n), key=lambda i: (plan[i][1], i))
    first = int(rng.integers(0, n - size + 1))
    return sorted(by_start[first : first + size])


def _reoptimised(
    problem: SlottedProblem,
    plan: Plan,
    chosen: Sequence[int],
    settings: PackSettings,
    seed: int,
    stop_at: float | None,
) -> Plan | None:
    """``plan`` with the jobs ``chosen`` placed again by CP-SAT (the others fixed), or
    ``None`` when CP-SAT found nothing in its limits."""
    chosen_set = set(chosen)
    fixed = {i: plan[i] for i in range(len(plan)) if i not in chosen_set}
    horizon = max(t + problem.jobs[i].modes[m].slots for i, (m, t) in enumerate(plan))
    free = {}
    for i in chosen:
        job = problem.jobs[i]
        modes = fastest_modes(problem, i, settings.spread)[: settings.modes_per_job]
        if plan[i][0] not in modes:
            modes = (*modes, plan[i][0])
        free[i] = _Free(modes, job.release_slot, max(job.release_slot, horizon), plan[i])
    placed = _solve(problem, free, fixed, -math.inf, settings.round_work, seed, stop_at)
    if placed is None:
        return None
    return placed


def _solve(
    problem: SlottedProblem,
    free: dict[int, _Free],
    fixed: dict[int, tuple[int, int]],
    target: float,
    work: float,
    seed: int,
    stop_at: float | None,
) -> Plan | None:
    """Place the ``free`` jobs around the ``fixed`` ones, minimising slotted ``sum w C``:
    the whole plan, or ``None`` when CP-SAT found none within ``work`` (or ``stop_at``)."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    starts, present, ends = _variables(model, problem, free)
    _capacity(model, problem, free, fixed, starts, present)
    if not fixed:
        _first_use_rule(model, problem, free, present)
    weights, scale = _integer_weights(problem)
    floor = sum(weights[i] * problem.jobs[i].modes[m].slots for i, (m, _) in fixed.items())
    floor += sum(weights[i] * t for i, (_, t) in fixed.items())
    objective = sum(weights[i] * ends[i] for i in free)
    if math.isfinite(target):
        # Every plan's slotted objective is an integer at least the bound's (which carries
        # the bounds' safety factor, hence the relative allowance).
        least = float(target / problem.slot * scale)
        model.add(objective + floor >= math.ceil(least - 1e-6 * max(1.0, abs(least))))
    model.minimize(objective)
    for i, job in free.items():
        if job.hint[0] in job.modes:
            model.add_hint(starts[i], job.hint[1])
            for m, var in present[i].items():
                model.add_hint(var, m == job.hint[0])
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = work
    if stop_at is not None:
        solver.parameters.max_time_in_seconds = max(0.01, stop_at - time.monotonic())
    code = solver.Solve(model)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    plan = [fixed.get(i, (0, 0)) for i in range(len(problem.jobs))]
    for i in free:
        mode = next(m for m, var in present[i].items() if solver.BooleanValue(var))
        plan[i] = (mode, int(solver.Value(starts[i])))
    return plan


def _variables(
    model: CpModel, problem: SlottedProblem, free: dict[int, _Free]
) -> tuple[dict[int, IntVar], dict[int, dict[int, IntVar]], dict[int, IntVar]]:
    """Per free job a start in its range, one presence per candidate mode (exactly one),
    and its end."""
    starts, present, ends = {}, {}, {}
    for i, job in free.items():
        lengths = {m: problem.jobs[i].modes[m].slots for m in job.modes}
        latest = max(job.earliest, job.latest)
        starts[i] = model.new_int_var(job.earliest, latest, f"S{i}")
        present[i] = {m: model.new_bool_var(f"p{i}_{m}") for m in job.modes}
        model.add_exactly_one(present[i].values())
        ends[i] = model.new_int_var(
            job.earliest + min(lengths.values()), latest + max(lengths.values()), f"C{i}"
        )
        model.add(ends[i] == starts[i] + sum(lengths[m] * p for m, p in present[i].items()))
    return starts, present, ends


def _capacity(
    model: CpModel,
    problem: SlottedProblem,
    free: dict[int, _Free],
    fixed: dict[int, tuple[int, int]],
    starts: dict[int, IntVar],
    present: dict[int, dict[int, IntVar]],
) -> None:
    """A cumulative per server: the free jobs' optional mode intervals and the fixed jobs'
    intervals, each holding its mode's GPUs there."""
    demands: list[list[tuple[IntervalVar, int]]] = [[] for _ in problem.capacities]
    for i in free:
        for m, var in present[i].items():
            mode = problem.jobs[i].modes[m]
            interval = model.new_optional_fixed_size_interval_var(
                starts[i], mode.slots, var, f"I{i}_{m}"
            )
            for h, use in enumerate(mode.usage):
                if use:
                    demands[h].append((interval, use))
    for i, (m, t) in fixed.items():
        mode = problem.jobs[i].modes[m]
        if mode.slots == 0:
            continue
        interval = model.new_fixed_size_interval_var(t, mode.slots, f"F{i}")
        for h, use in enumerate(mode.usage):
            if use:
                demands[h].append((interval, use))
    for h, capacity in enumerate(problem.capacities):
        if demands[h]:
            model.add_cumulative([d[0] for d in demands[h]], [d[1] for d in demands[h]], capacity)


def _first_use_rule(
    model: CpModel,
    problem: SlottedProblem,
    free: dict[int, _Free],
    present: dict[int, dict[int, IntVar]],
) -> None:
    """Identical servers' symmetry, by the order of first use: with the jobs in the order of
    their hinted starts, relabel each class's servers in the order the jobs first use them;
    then the ``k``-th job's lowest server of a class is at most the number of that class's
    servers the jobs before it can use in all (their candidate modes' widest), so modes
    beyond that are left out. Some plan of every packing survives."""
    if not _closed(problem, free):
        return
    order = sorted(free, key=lambda i: (free[i].hint[1], i))
    for group in problem.server_classes:
        if len(group) < 2:
            continue
        before = 0
        for i in order:
            widest = 0
            for m, var in present[i].items():
                usage = problem.jobs[i].modes[m].usage
                used = [k for k, h in enumerate(group) if usage[h] > 0]
                widest = max(widest, len(used))
                if used and used[0] > before:
                    model.add(var == 0)
            before = min(len(group), before + widest)


def _closed(problem: SlottedProblem, free: dict[int, _Free]) -> bool:
    """Whether every free job's candidate modes are one-server modes over whole classes of
    identical servers: then relabelling servers within a class maps each candidate to a
    candidate, which the first-use rule's argument needs (a job wider than a server, on
    :func:`compact_modes`' few vectors, would not have that)."""
    for i, job in free.items():
        servers = set()
        for m in job.modes:
            used = [h for h, u in enumerate(problem.jobs[i].modes[m].usage) if u > 0]
            if len(used) != 1:
                return False
            servers.add(used[0])
        for group in problem.server_classes:
            if servers & set(group) and not servers >= set(group):
                return False
    return True


def _integer_weights(problem: SlottedProblem) -> tuple[list[int], Fraction]:
    """The jobs' weights scaled exactly to integers
    (:func:`ddlsched.formulations.cpsat_runtime.integer_weights`), and the factor."""
    from ddlsched.formulations.cpsat_runtime import integer_weights

    weights = integer_weights([j.id for j in problem.jobs], [j.weight for j in problem.jobs])
    first = Fraction(problem.jobs[0].weight).limit_denominator(1000)
    return weights, Fraction(weights[0]) / first
