"""The per-round allocation problem as a multiple-choice knapsack, solved exactly by HiGHS.

Each job ``j`` picks exactly one option ``c`` (a GPU count, 0 included) with
a cost ``cost[j][c]``, a size ``gpus[j][c]`` and a pool ``pool[j][c]`` (the GPU
type it runs on; one pool on an untyped cluster); the sizes of the picked
options fit each pool's GPUs::

    minimise    sum_j sum_c cost[j][c] * x[j][c]
    subject to  sum_c x[j][c] = 1                       for every job j   (_one_option_per_job)
                sum_{j,c: pool[j][c] = t} gpus[j][c] * x[j][c] <= M_t
                                                        for every pool t  (_capacity)
                x binary

With pools this is Sia's round ILP (Jayaram Subramanya et al., SOSP 2023): one
binary per (job, GPU type, node count, GPU count) configuration, one capacity
row per GPU type.

Pollux's objective is a power mean with p = -1 of the jobs' (restart-
penalised) speedups ``s``: maximising ``(sum_j (s_j + eps)^-1 / J)^-1`` is
minimising ``sum_j 1 / (s_j + eps)``, linear in ``x`` once the speedup of
every option is computed beforehand. Options whose sizes form a chain of
divisors of the node size (1, 2, 4 GPUs on one node; whole nodes across
nodes) always pack onto the nodes when their total fits (see
:mod:`ddlsched.algorithms.elastic.packing`), so one capacity row per pool is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ChoiceProblem", "choice_objective", "solve_choice"]


@dataclass(frozen=True)
class ChoiceProblem:
    """A multiple-choice knapsack: per job a list of options (cost, GPUs, pool).

    Attributes
    ----------
    costs
        ``costs[j][c]``: the cost of option ``c`` of job ``j``.
    gpus
        ``gpus[j][c]``: its GPUs (>= 0).
    capacity
        GPUs in the cluster (one pool), or GPUs per pool.
    pools
        ``pools[j][c]``: the pool of option ``c`` of job ``j``, an index into
        ``capacity`` (empty: every option in pool 0).
    """

    costs: tuple[tuple[float, ...], ...]
    gpus: tuple[tuple[int, ...], ...]
    capacity: int | tuple[int, ...]
    pools: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        if len(self.costs) != len(self.gpus):
            raise ValueError("ChoiceProblem: costs and gpus differ in jobs")
        for j, (cost, size) in enumerate(zip(self.costs, self.gpus, strict=True)):
            if not cost or len(cost) != len(size):
                raise ValueError(f"ChoiceProblem: job {j} needs options with one cost each")
            if min(size) < 0 or not all(np.isfinite(cost)):
                raise ValueError(f"ChoiceProblem: job {j} has a negative size or bad cost")
        if min(self.capacities) < 0:
            raise ValueError(f"ChoiceProblem.capacity must be >= 0, got {self.capacity}")
        if self.pools:
            mismatch = [len(p) for p in self.pools] != [len(g) for g in self.gpus]
            known = all(0 <= t < len(self.capacities) for pool in self.pools for t in pool)
            if mismatch or not known:
                raise ValueError(
                    f"ChoiceProblem.pools: one pool in 0..{len(self.capacities) - 1} per option"
                )

    @property
    def capacities(self) -> tuple[int, ...]:
        """GPUs per pool."""
        return (self.capacity,) if isinstance(self.capacity, int) else tuple(self.capacity)

    def pool_of(self, job: int, option: int) -> int:
        """The pool of ``option`` of ``job`` (0 without pools)."""
        return self.pools[job][option] if self.pools else 0


def choice_objective(problem: ChoiceProblem, picks: Sequence[int]) -> float:
    """The cost of one option per job (no feasibility check)."""
    return float(sum(problem.costs[j][c] for j, c in enumerate(picks)))


def _columns(problem: ChoiceProblem) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    jobs = np.concatenate([np.full(len(c), j) for j, c in enumerate(problem.costs)])
    costs = np.concatenate([np.asarray(c, dtype=float) for c in problem.costs])
    sizes = np.concatenate([np.asarray(g, dtype=float) for g in problem.gpus])
    pools = (
        np.concatenate([np.asarray(p, dtype=int) for p in problem.pools])
        if problem.pools
        else np.zeros(len(costs), dtype=int)
    )
    return jobs, costs, sizes, pools


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
    jobs, costs, sizes, pools = _columns(problem)
    capacities = problem.capacities
    count = len(costs)
    highs = exact_highs()
    lp = highspy.HighsLp()
    lp.num_col_ = count
    lp.col_cost_ = costs
    lp.col_lower_ = np.zeros(count)
    lp.col_upper_ = np.ones(count)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * count
    num_jobs = len(problem.costs)
    num_rows = num_jobs + len(capacities)
    # Rows: _one_option_per_job (one per job), then _capacity (one per pool).
    lower = np.concatenate([np.ones(num_jobs), np.full(len(capacities), -highspy.kHighsInf)])
    upper = np.concatenate([np.ones(num_jobs), np.asarray(capacities, dtype=float)])
    lp.num_row_ = num_rows
    lp.row_lower_ = lower
    lp.row_upper_ = upper
    # Column-wise matrix: column k has a 1 in its job's row and its size in its pool's row.
    starts: list[int] = []
    index: list[int] = []
    entries: list[float] = []
    for k in range(count):
        starts.append(len(index))
        index.append(int(jobs[k]))
        entries.append(1.0)
        if sizes[k] > 0:
            index.append(num_jobs + int(pools[k]))
            entries.append(float(sizes[k]))
    starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(entries)
    lp.a_matrix_.num_col_ = count
    lp.a_matrix_.num_row_ = num_rows
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
