"""A time-indexed LP lower bound on the total JCT of any elastic run: speed costs GPU-seconds.

:func:`~ddlsched.formulations.elastic_bounds.elastic_flow_bound` charges each job its
floor (alone at its ceiling, on as many GPUs as it likes) and the cluster its least
GPU-seconds (every job at its per-GPU ceiling), and combines the two only through the
ranks of the completion times. A job that finishes fast must run wide, at a low
goodput per GPU, so it holds more GPU-seconds than at its per-GPU ceiling; when the
cluster is shared the two cannot both be had. This relaxation charges that trade-off.

**Relaxation.** Time is cut into the simulator's rounds (slots of ``round_length``).
Job ``j`` may progress from its first round ``a_j`` (in that round after the restart)
until the end of a window of its own slots; a last, open slot stands for everything
after the window. Its epochs are put into at most ``groups`` groups of consecutive
epochs, group ``k`` holding the work ``W_k`` (progress, iterations at ``M0``), with the
rate curve ``h_k(R) = max over its epochs of`` :func:`~ddlsched.formulations.
elastic_bounds.rate_curve` (progress per second on ``R`` GPUs, any placement and batch);
an epoch whose curve is infinite is left out (its work is free). In each slot ``t``:

- ``S[j, k, t]`` seconds spent progressing in group ``k``, ``A[j, k, t]`` GPU-seconds
  held meanwhile and ``y[j, k, t]`` progress, with ``y <= intercept_p S + slope_p A`` for
  every line ``p`` of the least concave majorant of ``(0, 0), (R, h_k(R))`` over
  ``R = 1 .. G`` (perspective of the majorant: within one allocation ``y = S h(R)``,
  ``A = R S``; any split of the slot is a point under it by concavity), plus
  ``y <= max_R h_k(R) S``;
- ``sum_k S[j, k, t] <= length_t (1 - X[j, t - 1])``, ``X[j, t]`` the fraction of ``j``
  completed by the end of slot ``t`` (``length_t`` the round, less the restart in the
  first one);
- ``sum_{s <= t} y[j, k, s] >= W_k X[j, t]``: a completed job has done all its work;
- ``sum_{j, k} A[j, k, t] <= G round_length``: the cluster's GPUs.

The objective charges completion in slot ``c`` (``x[j, c] = X[j, c] - X[j, c - 1]``)
``max(start of c, a_j + floor_j)`` and completion in the open slot the start of that
slot. **Why it bounds every run.** Any simulated run gives a feasible point with ``X``
0 or 1: a round's allocation of ``R`` GPUs progresses at most ``h_e(R) <= h_k(R)`` per
second for the epoch ``e`` under way (the restart and pauses progress nothing), a job
completes in the slot where its progress reaches its target, after its floor, and no
later than the objective charges; the cluster's ``G`` GPUs bound the GPU-seconds of each
round. Releases, restarts other than the first, node boundaries and epoch order are
relaxed; the slots' starts cost at most one round per job. So the LP's optimum, less the
releases, is at most the least total JCT of any run; HiGHS's dual bound is used (any
dual feasible value is a valid bound). Related: time-indexed relaxations of malleable
scheduling with concave speedups (e.g. Jansen and Porkolab, *Linear-time approximation
schemes for scheduling malleable parallel tasks*, Algorithmica 2002, for the model;
Dantzig-Wolfe / Lagrangian reading: each job's schedule priced by GPU-seconds).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from ddlsched.formulations.elastic_bounds import (
    check_bound_settings,
    job_needs,
    rate_curve,
)

from ddlsched.core.elastic import Application, ElasticJob, load_application

LP_SAFETY = 1.0 - 1e-6
"""The LP's value is multiplied by this: HiGHS's optimum is exact only within its
tolerances (1e-7 relative), so the bound keeps ten times that below it."""

__all__ = ["ElasticLpBound", "elastic_lp_bound", "epoch_groups", "majorant_lines"]


@dataclass(frozen=True)
class ElasticLpBound:
    """The LP's lower bound on ``sum_j (C_j - r_j)`` of any run, and its size.

    Attributes
    ----------
    value
        The bound (HiGHS's optimum less the releases, made safe by
        :data:`LP_SAFETY`); ``0`` without jobs or when HiGHS finds no optimum.
    variables, constraints
        The LP's size.
    status
        HiGHS's model status (``"Optimal"`` when solved).
    """

    value: float
    variables: int
    constraints: int
    status: str


def majorant_lines(curve: np.ndarray, most: int = 8) -> list[tuple[float, float]]:
    """``(intercept, slope)`` of each segment of the least concave majorant of ``(0, 0)``
    and ``(R, curve[R - 1])`` for ``R = 1 .. len(curve)`` (at most ``most`` of them, the
    first and last kept, spread geometrically between: dropping lines only raises their
    minimum), and the flat line at its top: ``min`` over the lines is at least the
    majorant on ``[0, len(curve)]`` and beyond.

    Raises
    ------
    ValueError
        If the curve is negative or not finite.
    """
    if not np.all(np.isfinite(curve)) or np.any(curve < 0):
        raise ValueError("majorant_lines: the rate curve must be finite and >= 0")
    points = [(0.0, 0.0), *((float(r + 1), float(v)) for r, v in enumerate(curve))]
    hull: list[tuple[float, float]] = []
    for point in points:  # the upper hull, left to right
        while len(hull) >= 2 and _cross(hull[-2], hull[-1], point) >= 0:
            hull.pop()
        hull.append(point)
    top = max(v for _, v in hull)
    lines = []
    for (g0, v0), (g1, v1) in itertools.pairwise(hull):
        slope = (v1 - v0) / (g1 - g0)
        if slope <= 0:
            break
        lines.append((v0 - slope * g0, slope))
    if len(lines) > most:  # fewer lines: a larger minimum, still above the majorant
        keep = np.unique(np.round(np.geomspace(1, len(lines), most)).astype(int) - 1)
        lines = [lines[k] for k in keep]
    return [*lines, (top, 0.0)]


def _cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """The cross product of ``a - o`` and ``b - o`` (>= 0: ``a`` is not above ``o``-``b``)."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def epoch_groups(app: Application, most_gpus: int, groups: int) -> list[tuple[float, np.ndarray]]:
    """``(work, curve)`` per group of consecutive epochs of ``app`` (at most ``groups``, of
    near-equal counts): the group's progress and the largest of its epochs'
    :func:`rate_curve` per GPU count. Epochs with an infinite curve are left out."""
    works = np.diff(np.concatenate(([0.0], app.epoch_ends[: app.epochs])))
    curves = [rate_curve(app, epoch, most_gpus) for epoch in range(app.epochs)]
    kept = [e for e in range(app.epochs) if np.all(np.isfinite(curves[e])) and works[e] > 0]
    if not kept:
        return []
    parts = np.array_split(np.array(kept), min(groups, len(kept)))
    return [
        (float(works[part].sum()), np.max([curves[e] for e in part], axis=0)) for part in parts
    ]


@dataclass
class _Rows:
    """A sparse constraint matrix ``low <= M v <= high`` built row by row."""

    rows: list[int]
    cols: list[int]
    values: list[float]
    low: list[float]
    high: list[float]

    def add(self, entries: Sequence[tuple[int, float]], low: float, high: float) -> None:
        row = len(self.low)
        for col, value in entries:
            self.rows.append(row)
            self.cols.append(col)
            self.values.append(value)
        self.low.append(low)
        self.high.append(high)


def elastic_lp_bound(
    jobs: Sequence[ElasticJob],
    total_gpus: int,
    round_length: float = 60.0,
    restart_time: float = 30.0,
    *,
    windows: Sequence[float] | None = None,
    groups: int = 4,
    applications: Sequence[Application] | None = None,
) -> ElasticLpBound:
    """The LP bound of the module docstring on the total JCT of any simulated run.

    Parameters
    ----------
    jobs, total_gpus, round_length, restart_time
        The workload, the cluster's GPUs and the simulation's settings.
    windows
        Per job, the seconds after its first round that its own slots cover (default:
        its floor plus two hours, at least four floors); completion later is charged the
        window's end. Any windows give a valid bound; longer ones a larger LP.
    groups
        The most epoch groups per job (more: tighter and larger).
    applications
        Each job's :class:`Application` (default: loaded for its model and budget).

    Raises
    ------
    ValueError
        On bad settings, ``groups < 1``, or windows that do not match the jobs.
    """
    if not jobs:
        return ElasticLpBound(0.0, 0, 0, "empty")
    check_bound_settings("elastic_lp_bound", total_gpus, round_length, restart_time)
    if groups < 1 or (windows is not None and len(windows) != len(jobs)):
        raise ValueError(f"elastic_lp_bound: groups {groups}, windows for {len(jobs)} jobs")
    apps = applications or [load_application(job.model, job.epochs) for job in jobs]
    needs = job_needs(jobs, total_gpus, round_length, restart_time, apps)
    if windows is None:
        windows = [max(need.floor + 7200.0, 4 * need.floor) for need in needs]
    builder = _Builder(total_gpus, round_length, restart_time)
    cache: dict[int, list[tuple[float, list[tuple[float, float]]]]] = {}
    for need, app, window in zip(needs, apps, windows, strict=True):
        if id(app) not in cache:
            cache[id(app)] = [
                (work, majorant_lines(curve))
                for work, curve in epoch_groups(app, total_gpus, groups)
            ]
        builder.add_job(need.start, need.floor, window, cache[id(app)])
    dual, status = builder.solve()
    released = math.fsum(job.submit_time for job in jobs)
    value = max(dual - released, 0.0) * LP_SAFETY if math.isfinite(dual) else 0.0
    return ElasticLpBound(value, builder.variables, len(builder.matrix.low), status)


class _Builder:
    """The LP of the module docstring, one job at a time, then solved by HiGHS."""

    def __init__(self, total_gpus: int, slot: float, restart_time: float) -> None:
        self.gpus, self.slot, self.restart = total_gpus, slot, restart_time
        self.cost: list[float] = []
        self.upper: list[float] = []
        self.constant = 0.0
        self.matrix = _Rows([], [], [], [], [])
        self.areas: dict[int, list[int]] = {}

    @property
    def variables(self) -> int:
        """Columns so far."""
        return len(self.cost)

    def _new(self, cost: float = 0.0, upper: float = math.inf) -> int:
        self.cost.append(cost)
        self.upper.append(upper)
        return len(self.cost) - 1

    def add_job(
        self,
        start: float,
        floor: float,
        window: float,
        groups: list[tuple[float, list[tuple[float, float]]]],
    ) -> None:
        """Job columns and rows: its completed fractions ``X``, and per slot and group the
        time, GPU-seconds and cumulative progress (module docstring)."""
        first = math.floor(start / self.slot + 1e-9)
        count = max(1, math.ceil((start + window) / self.slot) - first)
        charges = [max((first + c) * self.slot, start + floor) for c in range(count + 1)]
        self.constant += charges[-1]
        done = [self._new(charges[c] - charges[c + 1], 1.0) for c in range(count)]
        for c in range(1, count):
            self.matrix.add([(done[c], 1.0), (done[c - 1], -1.0)], 0.0, math.inf)
        progress: list[int | None] = [None] * len(groups)
        for c in range(count):
            index = first + c
            length = self.slot if c else (index + 1) * self.slot - start - self.restart
            times = self._slot_groups(index, groups, progress, done[c])
            entries = [(t, 1.0) for t in times]
            if c:
                entries.append((done[c - 1], max(length, 0.0)))
            self.matrix.add(entries, -math.inf, max(length, 0.0))

    def _slot_groups(
        self,
        index: int,
        groups: list[tuple[float, list[tuple[float, float]]]],
        progress: list[int | None],
        done: int,
    ) -> list[int]:
        """One slot's columns per group: time, GPU-seconds and cumulative progress, with
        the majorant's rows and the completion row; ``progress`` holds each group's
        previous cumulative column and is advanced. Returns the time columns."""
        times = []
        for k, (work, lines) in enumerate(groups):
            time, area, total = self._new(), self._new(), self._new(upper=work)
            self.areas.setdefault(index, []).append(area)
            before = progress[k]
            for intercept, slope in lines:
                entries = [(total, 1.0), (time, -intercept), (area, -slope)]
                if before is not None:
                    entries.append((before, -1.0))
                self.matrix.add(entries, -math.inf, 0.0)
            self.matrix.add([(total, 1.0), (done, -work)], 0.0, math.inf)
            progress[k] = total
            times.append(time)
        return times

    def solve(self) -> tuple[float, str]:
        """Add the capacity rows, solve with HiGHS; its dual objective plus the constant
        and the model status."""
        import highspy

        for columns in self.areas.values():
            self.matrix.add([(c, 1.0) for c in columns], -math.inf, self.gpus * self.slot)
        m = self.matrix
        matrix = sp.csc_matrix((m.values, (m.rows, m.cols)), shape=(len(m.low), len(self.cost)))
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = len(self.cost), len(m.low)
        lp.col_cost_ = np.array(self.cost)
        lp.col_lower_ = np.zeros(len(self.cost))
        lp.col_upper_ = np.array(self.upper)
        lp.row_lower_, lp.row_upper_ = np.array(m.low), np.array(m.high)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = matrix.indptr
        lp.a_matrix_.index_ = matrix.indices
        lp.a_matrix_.value_ = matrix.data
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.passModel(lp)
        highs.run()
        status = highs.modelStatusToString(highs.getModelStatus())
        info = highs.getInfo()
        if status != "Optimal":
            return -math.inf, status
        return info.objective_function_value + self.constant, status
