"""The per-round allocation problem as a multiple-choice knapsack, solved exactly by HiGHS.

Each job ``j`` picks exactly one option ``c`` (a GPU count, 0 included) with
a cost ``cost[j][c]`` and a size ``gpus[j][c]``; the sizes of the picked
options fit the cluster's GPUs::

    minimise    sum_j sum_c cost[j][c] * x[j][c]
    subject to  sum_c x[j][c] = 1                       for every job j  (_one_option_per_job)
                sum_j sum_c gpus[j][c] * x[j][c] <= M                    (_capacity)
                x binary

Pollux's objective is a power mean with p = -1 of the jobs' (restart-
penalised) speedups ``s``: maximising ``(sum_j (s_j + eps)^-1 / J)^-1`` is
minimising ``sum_j 1 / (s_j + eps)``, linear in ``x`` once the speedup of
every option is computed beforehand. Options whose sizes form a chain of
divisors of the node size (1, 2, 4 GPUs on one node; whole nodes across
nodes) always pack onto the nodes when their total fits (see
:mod:`ddlsched.algorithms.elastic.packing`), so one capacity row is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ChoiceProblem", "choice_objective", "solve_choice"]


@dataclass(frozen=True)
class ChoiceProblem:
    """A multiple-choice knapsack: per job a list of options (cost, GPUs).

    Attributes
    ----------
    costs
        ``costs[j][c]``: the cost of option ``c`` of job ``j``.
    gpus
        ``gpus[j][c]``: its GPUs (>= 0).
    capacity
        GPUs in the cluster.
    """

    costs: tuple[tuple[float, ...], ...]
    gpus: tuple[tuple[int, ...], ...]
    capacity: int

    def __post_init__(self) -> None:
        if len(self.costs) != len(self.gpus):
            raise ValueError("ChoiceProblem: costs and gpus differ in jobs")
        for j, (cost, size) in enumerate(zip(self.costs, self.gpus, strict=True)):
            if not cost or len(cost) != len(size):
                raise ValueError(f"ChoiceProblem: job {j} needs options with one cost each")
            if min(size) < 0 or not all(np.isfinite(cost)):
                raise ValueError(f"ChoiceProblem: job {j} has a negative size or bad cost")
        if self.capacity < 0:
            raise ValueError(f"ChoiceProblem.capacity must be >= 0, got {self.capacity}")


def choice_objective(problem: ChoiceProblem, picks: Sequence[int]) -> float:
    """The cost of one option per job (no feasibility check)."""
    return float(sum(problem.costs[j][c] for j, c in enumerate(picks)))


def _columns(problem: ChoiceProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    jobs = np.concatenate([np.full(len(c), j) for j, c in enumerate(problem.costs)])
    costs = np.concatenate([np.asarray(c, dtype=float) for c in problem.costs])
    sizes = np.concatenate([np.asarray(g, dtype=float) for g in problem.gpus])
    return jobs, costs, sizes


def solve_choice(problem: ChoiceProblem) -> list[int]:
    """An optimal option per job (HiGHS branch and bound, gaps 0).

    Raises
    ------
    RuntimeError
        If HiGHS does not prove optimality (infeasible: the smallest
        options do not fit).
    """
    import highspy

    from ddlsched.core.highs import exact_highs

    if not problem.costs:
        return []
    jobs, costs, sizes = _columns(problem)
    count = len(costs)
    highs = exact_highs()
    lp = highspy.HighsLp()
    lp.num_col_ = count
    lp.col_cost_ = costs
    lp.col_lower_ = np.zeros(count)
    lp.col_upper_ = np.ones(count)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * count
    num_jobs = len(problem.costs)
    # Rows: _one_option_per_job (one per job), then _capacity.
    lower = np.concatenate([np.ones(num_jobs), [-highspy.kHighsInf]])
    upper = np.concatenate([np.ones(num_jobs), [float(problem.capacity)]])
    lp.num_row_ = num_jobs + 1
    lp.row_lower_ = lower
    lp.row_upper_ = upper
    # Column-wise matrix: column k has a 1 in its job's row and its size in the last row.
    starts: list[int] = []
    index: list[int] = []
    entries: list[float] = []
    for k in range(count):
        starts.append(len(index))
        index.append(int(jobs[k]))
        entries.append(1.0)
        if sizes[k] > 0:
            index.append(num_jobs)
            entries.append(float(sizes[k]))
    starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(entries)
    lp.a_matrix_.num_col_ = count
    lp.a_matrix_.num_row_ = num_jobs + 1
    highs.passModel(lp)
    highs.run()
    status = highs.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"round allocation MILP: HiGHS status {highs.modelStatusToString(status)}"
        )
    chosen = np.asarray(highs.getSolution().col_value) > 0.5
    picks = [-1] * num_jobs
    offset = 0
    for j, cost in enumerate(problem.costs):
        local = np.flatnonzero(chosen[offset : offset + len(cost)])
        picks[j] = int(local[0])
        offset += len(cost)
    return picks
