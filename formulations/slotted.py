"""The slotted problem: its data, list schedules, horizon and symmetry, for every backend.

Problems A and A1 over slots of length ``Delta`` (:class:`SlottedProblem`): job ``i``
picks a *mode* ``m`` (a usage vector over resources and a duration of ``d_im`` slots) and
a start slot ``t >= e_i``. The data and what is computed from it alone live here, shared
by the time-indexed MILP (:mod:`ddlsched.formulations.timeindexed`, Pyomo) and CP-SAT
(:mod:`ddlsched.formulations.cpsat`, :mod:`ddlsched.formulations.continuous`), neither of
which imports the other:

- the data types :class:`SlottedMode`, :class:`SlottedJob`, :class:`SlottedProblem`;
- list schedules, the incumbent and warm start: :func:`place_in_order`,
  :func:`greedy_schedule`, :func:`improve_order`;
- each job's latest completion slot, :func:`latest_completions` (the horizon, below);
- symmetry over identical servers: :func:`sorted_within_classes`, :func:`refine_classes`,
  :func:`tie_groups`, :func:`choose_anchors` and :func:`relabel_for_anchor` (the argument
  that some optimum survives is in :mod:`ddlsched.formulations.timeindexed`).

**Horizon.** Each job gets a latest completion slot ``L_i``; a horizon that
cut off every optimum would be a bug, so both limits below hold for *every*
optimal slotted schedule:

1. *Covering*: if a slot ``s >= max_i e_i`` had no running job, every job
   starting after ``s`` could move one slot earlier (all are released, and
   the moved block keeps its internal feasibility), lowering the objective
   (weights are positive). So from ``max_i e_i`` to the last completion
   every slot runs some job, and ``C_max <= max_i e_i + sum_i max_m d_im``.
2. *Incumbent*: with ``UB`` the objective of a feasible schedule (from
   :func:`greedy_schedule` or a warm start), an optimum has ``w_i C_i <= UB
   - sum_{k != i} w_k (e_k + min_m d_km) Delta``, since every other job
   completes no earlier than that.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

EPS = 1e-9
"""Slack for floating-point noise in the models' own arithmetic (windows, rounding)."""


@dataclass(frozen=True)
class SlottedMode:
    """One way to run a job.

    Attributes
    ----------
    usage
        Units of each resource held while running.
    slots
        ``d_im``, duration in slots (rounded up).
    duration
        The exact duration in seconds.
    mapping
        A mapping of nodes to servers attaining ``duration`` (problem A), or
        ``None``.
    """

    usage: tuple[int, ...]
    slots: int
    duration: float
    mapping: tuple[int, ...] | None = None


@dataclass(frozen=True)
class SlottedJob:
    """A job of the slotted model: weight, release slot ``e_i``, modes."""

    id: str
    weight: float
    release_slot: int
    modes: tuple[SlottedMode, ...]

    @property
    def min_slots(self) -> int:
        """``min_m d_im``."""
        return min(mode.slots for mode in self.modes)

    @property
    def max_slots(self) -> int:
        """``max_m d_im``."""
        return max(mode.slots for mode in self.modes)


@dataclass(frozen=True)
class SlottedProblem:
    """A multi-mode time-indexed scheduling problem.

    Attributes
    ----------
    jobs
        The jobs.
    capacities
        Units of each resource.
    slot
        ``Delta`` in seconds.
    exact
        True when every release and duration is a multiple of ``Delta``.
    server_classes
        Groups of interchangeable resources (for symmetry breaking).
    unproven_modes
        Jobs with a mode whose mapping is not proven fastest (a time-limited
        mapping MILP): their durations may be too long, so an optimum of
        this model is not proven optimal for the instance.
    unenumerated
        Jobs whose modes were not all enumerated (the time limit or
        ``mode_limit`` came first): an optimum of this model is only a
        feasible schedule of the instance, and its bound no bound for it.
    """

    jobs: tuple[SlottedJob, ...]
    capacities: tuple[int, ...]
    slot: float
    exact: bool
    server_classes: tuple[tuple[int, ...], ...] = ()
    unproven_modes: tuple[str, ...] = ()
    unenumerated: tuple[str, ...] = ()

    def objective(self, plan: Sequence[tuple[int, int]]) -> float:
        """Slotted ``sum_i w_i C_i`` of a plan of ``(mode, start slot)`` per job."""
        return self.slot * math.fsum(
            job.weight * (start + job.modes[m].slots)
            for job, (m, start) in zip(self.jobs, plan, strict=True)
        )

    def covering_horizon(self) -> int:
        """Limit 1 of the module docstring (covering), in slots."""
        return max(j.release_slot for j in self.jobs) + sum(j.max_slots for j in self.jobs)


def place_in_order(
    problem: SlottedProblem,
    order: Sequence[int],
    earliest: Sequence[int] | None = None,
    preferred: Sequence[int | None] | None = None,
) -> list[tuple[int, int]]:
    """A feasible plan: jobs placed one by one, each at its earliest completion.

    Job ``order[k]`` is placed, given those placed before it, at the
    ``(mode, start)`` with the earliest completion among starts ``>=
    earliest[i]`` (default ``e_i``); if ``preferred[i]`` names a mode, only
    that mode is tried. Always succeeds: the timeline is long enough to put
    every job after all others.
    """
    length = problem.covering_horizon() + max(earliest or [0]) + 1
    free = np.tile(np.asarray(problem.capacities, dtype=np.int64), (length, 1))
    plan: list[tuple[int, int] | None] = [None] * len(problem.jobs)
    for i in order:
        job = problem.jobs[i]
        first = job.release_slot if earliest is None else max(job.release_slot, earliest[i])
        wanted = None if preferred is None else preferred[i]
        modes: Sequence[int] = range(len(job.modes)) if wanted is None else [wanted]
        best: tuple[int, int, int] | None = None
        for m in modes:
            mode = job.modes[m]
            # The earliest start from `first` whose window of `slots` rows all fit, found for
            # every start at once (a Python loop over starts took 50 s on 32 jobs on 8 x 4
            # and outlasted a 5 s limit); a completion no earlier than the best is no use.
            last = length - mode.slots if best is None else best[0] - mode.slots - 1
            if last < first:
                continue
            misfits = np.concatenate(
                ([0], np.cumsum(np.any(free < np.asarray(mode.usage), axis=1)))
            )
            starts = np.arange(first, last + 1)
            fits = misfits[starts + mode.slots] == misfits[starts]
            if fits.any():
                start = int(starts[int(np.argmax(fits))])
                best = (start + mode.slots, m, start)
        if best is None:  # pragma: no cover - the timeline is long enough
            raise RuntimeError(f"job {job.id!r} could not be placed")
        _, m, start = best
        free[start : start + job.modes[m].slots] -= np.asarray(job.modes[m].usage)
        plan[i] = (m, start)
    return [p for p in plan if p is not None]


def greedy_schedule(problem: SlottedProblem) -> list[tuple[int, int]]:
    """The best of a few list schedules, as incumbent and warm start.

    Orders tried: by release then weighted shortest processing (``d_min /
    w``, Smith's rule), by Smith's rule alone, and by release then widest
    first. Each is placed with :func:`place_in_order`.
    """
    jobs = problem.jobs
    n = len(jobs)

    def smith(i: int) -> float:
        return jobs[i].min_slots / jobs[i].weight

    def width(i: int) -> int:
        return -max(sum(mode.usage) for mode in jobs[i].modes)

    orders = [
        sorted(range(n), key=lambda i: (jobs[i].release_slot, smith(i), i)),
        sorted(range(n), key=lambda i: (smith(i), i)),
        sorted(range(n), key=lambda i: (jobs[i].release_slot, width(i), smith(i), i)),
    ]
    plans = [place_in_order(problem, order) for order in orders]
    return min(plans, key=problem.objective)


def improve_order(
    problem: SlottedProblem,
    order: Sequence[int],
    iterations: int,
    seed: int = 0,
    stop: Callable[[], bool] | None = None,
    on_better: Callable[[list[tuple[int, int]]], None] | None = None,
    patience: int | None = None,
) -> list[tuple[int, int]]:
    """The best plan found by a local search over the order :func:`place_in_order` takes.

    Starting from ``order``, each of ``iterations`` steps swaps two jobs at most three
    places apart or moves one job to another place (chosen by a generator seeded with
    ``seed``), places the jobs in the new order, and keeps the new order when its plan is
    no worse (ties are kept, so the search walks across plateaus). Deterministic for a
    given seed and number of iterations; ``stop()`` (checked every step) ends it early, and
    so do ``patience`` steps in a row without a strictly better plan.
    ``on_better`` receives each strictly better plan as it is found (an exact solve's
    incumbent), the first being ``order``'s own.

    Seeded from the order of an optimum of the pooled relaxation
    (:func:`ddlsched.formulations.lower_bounds.time_indexed_bound`), this is what finds the
    optima of batch arrivals that CP-SAT misses in a minute (``bench_exact``).
    """
    rng = np.random.default_rng(seed)
    current = list(order)
    best_plan = place_in_order(problem, current)
    best = problem.objective(best_plan)
    if on_better is not None:
        on_better(best_plan)
    n = len(current)
    since_better = 0
    for _ in range(iterations if n > 1 else 0):
        if (stop is not None and stop()) or (patience is not None and since_better >= patience):
            break
        since_better += 1
        candidate = current.copy()
        a = int(rng.integers(n))
        if rng.random() < 0.5:
            b = int(np.clip(a + rng.integers(-3, 4), 0, n - 1))
            candidate[a], candidate[b] = candidate[b], candidate[a]
        else:
            candidate.insert(int(rng.integers(n)), candidate.pop(a))
        plan = place_in_order(problem, candidate)
        value = problem.objective(plan)
        if value <= best:
            current = candidate
            if value < best:
                best, best_plan, since_better = value, plan, 0
                if on_better is not None:
                    on_better(plan)
    return best_plan


def latest_completions(problem: SlottedProblem, incumbent: float) -> list[int]:
    """Per-job latest completion slot ``L_i`` (both limits of the docstring)."""
    cover = problem.covering_horizon()
    floor_each = [
        job.weight * (job.release_slot + job.min_slots) * problem.slot for job in problem.jobs
    ]
    total_floor = math.fsum(floor_each)
    limits = []
    for job, own in zip(problem.jobs, floor_each, strict=True):
        room = (incumbent - (total_floor - own)) / (job.weight * problem.slot)
        limits.append(min(cover, math.floor(room + EPS)))
    return limits


def tie_groups(
    problem: SlottedProblem, anchor: int, second: int
) -> dict[tuple[tuple[int, ...], ...], tuple[list[int], list[int]]]:
    """For ``_lex_symmetry``: per set of ties, the anchor's kept modes leaving it and the
    second anchor's modes unsorted within it (sets with no such mode left out)."""
    groups: dict[tuple[tuple[int, ...], ...], tuple[list[int], list[int]]] = {}
    for m, mode in enumerate(problem.jobs[anchor].modes):
        if not sorted_within_classes(mode.usage, problem.server_classes):
            continue  # not in the model (``_start_index``)
        ties = refine_classes(problem.server_classes, mode.usage)
        groups.setdefault(ties, ([], []))[0].append(m)
    for ties, (_, unsorted) in groups.items():
        unsorted.extend(
            m
            for m, mode in enumerate(problem.jobs[second].modes)
            if not sorted_within_classes(mode.usage, ties)
        )
    return {ties: pair for ties, pair in groups.items() if pair[1]}


def sorted_within_classes(usage: Sequence[int], classes: Sequence[Sequence[int]]) -> bool:
    """Whether ``usage`` is non-increasing within each class of identical resources."""
    return all(usage[a] >= usage[b] for group in classes for a, b in itertools.pairwise(group))


def refine_classes(
    classes: Sequence[Sequence[int]], usage: Sequence[int]
) -> tuple[tuple[int, ...], ...]:
    """The ties ``usage`` leaves: each class split into runs of equal usage (runs of one dropped).

    ``usage`` is sorted within each class (a kept anchor mode), so equal
    counts are adjacent.
    """
    ties = []
    for group in classes:
        for _, run in itertools.groupby(group, key=lambda h: usage[h]):
            members = tuple(run)
            if len(members) > 1:
                ties.append(members)
    return tuple(ties)


def choose_anchors(problem: SlottedProblem, depth: int = 2) -> tuple[int, ...]:
    """Up to ``depth`` jobs whose symmetric modes are most numerous (most pruned), first first.

    Empty when no two servers are identical.
    """
    if not any(len(group) > 1 for group in problem.server_classes):
        return ()
    counts = [
        sum(not sorted_within_classes(mode.usage, problem.server_classes) for mode in job.modes)
        for job in problem.jobs
    ]
    ranked = sorted(range(len(counts)), key=lambda i: (-counts[i], i))
    return tuple(i for i in ranked[:depth] if counts[i] > 0)


def relabel_for_anchor(
    problem: SlottedProblem, plan: Sequence[tuple[int, int]], anchors: Sequence[int]
) -> list[tuple[int, int]]:
    """The same schedule with identical servers renamed so the anchors' modes survive symmetry.

    Symmetry breaking keeps only the anchor's modes whose counts are sorted
    within each class of identical servers (and the second anchor's sorted
    within the ties the first leaves); a plan (a list schedule, a warm start)
    may put the anchor on counts such as ``(0, 4)``. Renaming servers within
    their class changes no duration and no feasibility, so every job's mode
    is mapped to the mode with the renamed counts, sorting servers by the
    anchors' counts in turn; the plan then lies inside the model's index.
    A plan outside the index would make HiGHS drop the MIP start without a word.
    """
    if not anchors:
        return list(plan)
    usages = [problem.jobs[a].modes[plan[a][0]].usage for a in anchors]
    source = list(range(len(problem.capacities)))  # new server h takes old server source[h]
    for group in problem.server_classes:
        order = sorted(group, key=lambda h: tuple(-usage[h] for usage in usages))
        for new, old in zip(group, order, strict=True):
            source[new] = old
    renamed = []
    for job, (m, t) in zip(problem.jobs, plan, strict=True):
        old_usage = job.modes[m].usage
        target = tuple(old_usage[source[h]] for h in range(len(old_usage)))
        renamed.append((next(k for k, mode in enumerate(job.modes) if mode.usage == target), t))
    return renamed
