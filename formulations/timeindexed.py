"""The time-indexed multi-mode model shared by problems A and A1.

Both are non-preemptive gang scheduling over slots of length ``Delta``: job
``i`` picks a *mode* ``m`` (a usage vector over resources and a duration of
``d_im`` slots) and a start slot ``t >= e_i = ceil(r_i / Delta)``; at every
slot the running jobs' usage fits every resource. In problem **A** the
resources are the servers and a mode is a vector of GPU counts per server
whose duration is that of the best mapping with those counts
(:mod:`ddlsched.formulations.modes`); in problem **A1** the one resource is the pool
of ``M`` GPUs and the one mode lasts ``K_i * alpha_i^max``.

Binary ``x[i, m, t]`` = 1 if job ``i`` starts in mode ``m`` at slot ``t``.
Constraint families:

- ``_one_start_per_job``: ``sum_{m, t} x[i, m, t] = 1``;
- ``_start_index`` (release, horizon, symmetry): ``x[i, m, t]`` exists only
  for ``e_i <= t <= L_i - d_im``, and for the anchor job only in the modes
  kept by symmetry breaking (below);
- ``_capacity``: for every resource ``r`` and slot ``s``,
  ``sum_{i, m, t <= s < t + d_im} usage_imr * x[i, m, t] <= cap_r``;
- symmetry (in ``_start_index``): one *anchor* job may use only modes whose counts are
  non-increasing within each class of identical servers. Every schedule can
  be relabelled by permuting identical servers (which changes neither
  feasibility nor any job's duration, since ``alpha`` depends only on which
  nodes share a server) so that the anchor's counts are sorted; hence some
  optimum survives.
- ``_lex_symmetry`` (lexicographic, a second anchor): the anchor's counts
  leave *ties*, runs of identical servers where it uses the same number of
  GPUs (its mode ``(4, 0, 0, 0)`` leaves servers 2-4 interchangeable).
  Permuting servers within a tie keeps the anchor's mode, so a second anchor
  may be sorted within the ties as well: for every set ``R`` of ties, ``sum
  of x[a, m, t] over the anchor's modes leaving R + sum of x[b, m', t] over
  the second anchor's modes unsorted within R <= 1``. Relabelling by the
  anchors' counts in turn
  (:func:`ddlsched.formulations.slotted.relabel_for_anchor`) shows some
  optimum survives both.

Objective: ``sum_i w_i Delta (t + d_im) x[i, m, t]``, the total weighted
completion time of the slotted schedule.

**Horizon.** Each job gets a latest completion slot ``L_i``
(:func:`ddlsched.formulations.slotted.latest_completions`; both limits, and why they keep
every optimum, are derived in :mod:`ddlsched.formulations.slotted`).

On an **integral** instance (every release and mode duration a multiple of
``Delta``) some optimal continuous schedule has slot-aligned starts, so the
model is exact (:ref:`model-time`); otherwise its optimum is that of the slotted
problem, an upper bound on the true one.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyomo.environ as pyo
from ddlsched.formulations.slotted import SlottedProblem, sorted_within_classes, tie_groups
from pyomo.core.expr import identify_variables
from pyomo.core.expr.numeric_expr import LinearExpression


def build_model(
    problem: SlottedProblem, latest: Sequence[int], anchors: Sequence[int] = ()
) -> pyo.ConcreteModel:
    """The Pyomo model; ``latest[i]`` is ``L_i``; ``anchors`` the symmetry jobs (at most two
    used: the anchor and the second anchor of ``_lex_symmetry``)."""
    model = pyo.ConcreteModel(name="time_indexed")
    index = _start_index(problem, latest, anchors[0] if anchors else None)
    model.INDEX = pyo.Set(initialize=index, dimen=3, ordered=True)
    model.x = pyo.Var(model.INDEX, within=pyo.Binary)
    _one_start_per_job(model, problem, index)
    _capacity(model, problem, index)
    if len(anchors) > 1:
        _lex_symmetry(model, problem, index, anchors[0], anchors[1])
    costs = [
        problem.jobs[i].weight * problem.slot * (t + problem.jobs[i].modes[m].slots)
        for i, m, t in index
    ]
    model.total_completion = pyo.Objective(
        expr=LinearExpression(
            constant=0.0, linear_coefs=costs, linear_vars=[model.x[key] for key in index]
        ),
        sense=pyo.minimize,
    )
    return model


def _start_index(
    problem: SlottedProblem, latest: Sequence[int], anchor: int | None
) -> list[tuple[int, int, int]]:
    """The ``(i, m, t)`` that may be chosen: the release, horizon and symmetry families.

    ``t`` runs from ``e_i`` (release) to ``L_i - d_im`` (horizon); the anchor
    job keeps only modes sorted within server classes (symmetry).
    """
    index: list[tuple[int, int, int]] = []
    for i, job in enumerate(problem.jobs):
        for m, mode in enumerate(job.modes):
            if i == anchor and not sorted_within_classes(mode.usage, problem.server_classes):
                continue
            index.extend((i, m, t) for t in range(job.release_slot, latest[i] - mode.slots + 1))
    return index


def _one_start_per_job(
    model: pyo.ConcreteModel, problem: SlottedProblem, index: list[tuple[int, int, int]]
) -> None:
    """Every job starts exactly once, in one mode."""
    by_job: list[list[tuple[int, int, int]]] = [[] for _ in problem.jobs]
    for key in index:
        by_job[key[0]].append(key)
    model.one_start_per_job = pyo.Constraint(
        range(len(problem.jobs)),
        rule=lambda m, i: (
            LinearExpression(
                constant=0.0,
                linear_coefs=[1.0] * len(by_job[i]),
                linear_vars=[m.x[key] for key in by_job[i]],
            )
            == 1
        ),
    )


def _capacity(
    model: pyo.ConcreteModel,
    problem: SlottedProblem,
    index: list[tuple[int, int, int]],
) -> None:
    """At every slot the running jobs fit every resource."""
    rows: dict[tuple[int, int], tuple[list[float], list[int]]] = {}
    for k, (i, m, t) in enumerate(index):
        mode = problem.jobs[i].modes[m]
        for r, amount in enumerate(mode.usage):
            if amount == 0:
                continue
            for s in range(t, t + mode.slots):
                coefs, keys = rows.setdefault((r, s), ([], []))
                coefs.append(float(amount))
                keys.append(k)
    variables = [model.x[key] for key in index]
    # A row that cannot bind (even every job at once fits) is left out.
    binding = [
        key
        for key, (coefs, keys) in rows.items()
        if _max_load(coefs, keys, index) > problem.capacities[key[0]]
    ]
    model.capacity = pyo.Constraint(
        binding,
        rule=lambda m, r, s: (
            LinearExpression(
                constant=0.0,
                linear_coefs=rows[r, s][0],
                linear_vars=[variables[k] for k in rows[r, s][1]],
            )
            <= problem.capacities[r]
        ),
    )


def _lex_symmetry(
    model: pyo.ConcreteModel,
    problem: SlottedProblem,
    index: list[tuple[int, int, int]],
    anchor: int,
    second: int,
) -> None:
    """The second anchor is sorted within the ties the anchor's mode leaves."""
    keys: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for key in index:
        keys.setdefault(key[:2], []).append(key)
    groups = list(tie_groups(problem, anchor, second).values())

    def row(m: pyo.ConcreteModel, g: int) -> object:
        modes, unsorted = groups[g]
        chosen = [k for mode in modes for k in keys.get((anchor, mode), [])]
        chosen += [k for mode in unsorted for k in keys.get((second, mode), [])]
        if not chosen:
            return pyo.Constraint.Skip
        return (
            LinearExpression(
                constant=0.0,
                linear_coefs=[1.0] * len(chosen),
                linear_vars=[m.x[k] for k in chosen],
            )
            <= 1
        )

    model.lex_symmetry = pyo.Constraint(range(len(groups)), rule=row)


def _max_load(coefs: list[float], keys: list[int], index: list[tuple[int, int, int]]) -> float:
    """The most a row can sum to: each job contributes at most its largest use."""
    per_job: dict[int, float] = {}
    for coef, k in zip(coefs, keys, strict=True):
        job = index[k][0]
        per_job[job] = max(per_job.get(job, 0.0), coef)
    return sum(per_job.values())


def plan_fits(model: pyo.ConcreteModel, plan: Sequence[tuple[int, int]]) -> bool:
    """Whether a plan (feasible for the slotted problem) is a solution of the model: every
    start inside its index and no ``_lex_symmetry`` row broken. HiGHS silently drops a
    start that is not."""
    chosen = {(i, m, t) for i, (m, t) in enumerate(plan)}
    if not all(key in model.INDEX for key in chosen):
        return False
    rows = getattr(model, "lex_symmetry", None)
    return rows is None or all(
        sum(1 for var in identify_variables(row.body) if var.index() in chosen) <= row.upper
        for row in rows.values()
    )


def set_warm_start(model: pyo.ConcreteModel, plan: Sequence[tuple[int, int]]) -> bool:
    """Set ``x`` to the plan; False (and nothing set) unless :func:`plan_fits`."""
    if not plan_fits(model, plan):
        return False
    chosen = {(i, m, t) for i, (m, t) in enumerate(plan)}
    for key in model.INDEX:
        model.x[key].set_value(1 if key in chosen else 0)
    return True


def plan_from_model(model: pyo.ConcreteModel, num_jobs: int) -> list[tuple[int, int]]:
    """The ``(mode, start slot)`` of every job in a solved model."""
    plan: list[tuple[int, int] | None] = [None] * num_jobs
    for i, m, t in model.INDEX:
        value = model.x[i, m, t].value
        if value is not None and value > 0.5:
            plan[i] = (m, t)
    missing = [i for i, p in enumerate(plan) if p is None]
    if missing:
        raise RuntimeError(f"solved model starts no mode for jobs {missing}")
    return [p for p in plan if p is not None]
