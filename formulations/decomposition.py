"""The decomposition bound: column generation over the schedules of one server.

``decomposition_bound(instance, upper_bound)`` is a lower bound on ``OPT(A) = min sum_i
w_i C_i`` that sees what the pooled time-indexed bounds of
:mod:`ddlsched.formulations.lower_bounds` (bounds 4 and 7) do not: a job placed on one
server stays on that server for its whole run, so GPUs left free on different servers do
not add up. It is the Dantzig-Wolfe reformulation by server of the time-indexed model,
as van den Akker, Hoogeveen and van de Velde (*Parallel machine scheduling by column
generation*, Operations Research 47(6), 1999) reformulate ``P || sum w_j C_j`` by machine,
adapted to gang jobs on servers of several GPUs whose durations depend on the placement
(and, like the arc-flow models of Kramer, Dell'Amico, Feillet and Iori, Computers &
Operations Research 2020, on a discretised time axis).

**The relaxation** (slots of ``Delta`` seconds, the pooled bound's grid:
:func:`~ddlsched.formulations.lower_bounds.time_grid`, with windows ``[R_i, L_i]`` of start
slots from ``upper_bound``). Servers are grouped into classes ``k`` of ``n_k`` identical
servers (same GPU count ``G_k`` and type). A *column* of class ``k`` is a schedule of one
server: a set of jobs ``i`` with ``g_i <= G_k``, each with one start slot ``t`` in its
window, running ``d_ik`` slots, at most ``G_k`` GPUs used in every slot. Here ``p_ik`` is
``K_i alpha_i`` with all nodes of job ``i`` on one server of class ``k`` and ``d_ik`` its
slots. A column costs ``sum w_i (Delta t + p_ik)``. A job may also *span* servers:
variable ``z_it`` (start slot ``t``), costing ``w_i (Delta t + q_i)`` where ``q_i`` is a lower
bound on every spanning mapping's ``K_i alpha_i``, holding ``g_i`` GPUs of the pool for
its ``e_i`` slots. The master LP::

    min  sum_c cost_c lambda_c + sum_it cost_it z_it
    s.t. sum_c [i in c] lambda_c + sum_t z_it = 1          for every job i   (pi_i)
         sum_c use_cs lambda_c + sum_{it covering s} g_i z_it <= M   every slot s (sigma_s)
         sum_{c of class k} lambda_c <= n_k                 every class k     (mu_k)
         lambda, z >= 0.

**Validity.** Take an optimal schedule of A (some optimal schedule starts every job
inside its window: :func:`~ddlsched.formulations.lower_bounds.time_indexed_bound`). Give
job ``i`` the start slot ``t_i = floor(S_i / Delta)`` (on the instance's own grid,
:func:`~ddlsched.formulations.lower_bounds.proven_grid`, some optimum starts on it and
``t_i = S_i / Delta``). A job on one server ``h`` runs ``p_ih`` exactly (its mapping has
all nodes on ``h``), and ``d_ih`` is ``p_ih / Delta`` on the grid, rounded down off it; so
it runs at the instant ``(s + 1) Delta - epsilon`` of every slot ``s`` in ``[t_i, t_i +
d_ih)``: the jobs that slot ``s`` charges to server ``h`` all run on ``h`` at one instant,
and hold at most ``G_h`` GPUs. The jobs run whole on ``h`` therefore form a column of
``h``'s class (possibly empty), and at most ``n_k`` columns of class ``k`` are used. A
spanning job ``i`` gets ``z_{i t_i} = 1``; its duration is at least ``q_i``, so ``e_i`` (the
slots of ``q_i``, rounded the same way) slots charge it to the pool at instants where it
runs, and at such an instant all jobs hold at most ``M`` GPUs. Each job is either whole on
one server or spans, so every assignment row holds; each cost is ``w_i (Delta t_i +
p_i) <= w_i (S_i + p_i) = w_i C_i``. So the master has a point of cost at most ``OPT(A)``,
and every lower bound on the master's *integral* optimum below is one on ``OPT(A)``.

**The bound at every round, not only at convergence** (the Lagrangian bound; Farley's
bound of column generation, Operations Research 38(5), 1990, in its Lagrangian form; see
Lübbecke and Desrosiers, *Selected topics in column generation*, Operations Research
53(6), 2005, section 2.1). For *any* ``pi`` (free) and ``sigma <= 0``, and the point of an
optimal schedule above (``n_k`` columns of class ``k`` counting empty ones, at most one
``z_it = 1`` per job, the assignment rows equalities, the slot rows at most ``M``)::

    cost >= cost + sum_i pi_i (1 - row_i) + sum_s sigma_s (M - row_s)
         = sum_i pi_i + M sum_s sigma_s + sum_{columns used} rc(c) + sum_{z used} rc(z)
         >= sum_i pi_i + M sum_s sigma_s + sum_k n_k min(0, RC_k)
            + sum_i min(0, min_t rc(z_it))

where ``rc(c) = cost_c - sum_{i in c} pi_i - sum_s sigma_s use_cs`` and ``RC_k`` is any
lower bound on the least ``rc`` over all columns of class ``k`` (the empty column has ``rc
= 0``). ``RC_k`` is the dual bound of the *pricing* problem, a time-indexed MILP of one
server (:func:`_exact_column`), valid whether HiGHS proved it optimal or stopped at a node
or time limit. The bound is thus valid at every round at which every class was priced by
the MILP, whatever duals the master gave (they are only clipped, ``sigma <= 0``, before
use), and it is the master LP's optimum when pricing finds no negative column (LP duality).
The best value over the rounds is kept. Like bound 7, on the instance's own grid with
integral weights it is rounded up to a multiple of ``Delta``
(:func:`~ddlsched.formulations.lower_bounds.grid_multiple`), then multiplied by
:data:`~ddlsched.formulations.lower_bounds.SAFETY`.

**Strength.** At convergence the master's LP is at least the pooled LP (bound 4) on the
same grid: a column of class ``k`` is a feasible set of starts of bound 4's model on
``G_k`` GPUs, the classes add up to ``M`` GPUs, and each duration is at least ``p_i =
K_i alpha_i^min``. Where a server's GPUs cannot be shared by jobs started at different
times on different servers it is stronger; it ignores that a spanning job also holds GPUs
of particular servers (it is charged only to the pool), and it is an LP over columns, so
the pooled *integral* bound (bound 7) may still be above it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from ddlsched.formulations.grid import grid_noise
from ddlsched.formulations.lower_bounds import (
    SAFETY,
    BoundInputs,
    LpSettings,
    TimeGrid,
    grid_multiple,
    safe_flow_value,
    time_grid,
)

from ddlsched.core.alpha import alpha, alpha_from_cut, min_cut_bound
from ddlsched.core.model import Cluster, Instance, Job
from ddlsched.core.result import LowerBound

if TYPE_CHECKING:
    import highspy

NAME = "decomposition"
"""The bound's name in :class:`~ddlsched.core.result.LowerBound`."""

DECOMPOSITION_VARIABLES = 20_000
"""Start slots of the pooled model the grid may take (the pooled bounds' budget beside an
exact solve); a finer grid would only be coarsened to fit, which stays valid."""

COLUMN_ROUNDS = 400
"""Most rounds of column generation (a deterministic end; the bound is valid at any)."""

PRICING_NODES = 500
"""Branch-and-bound nodes of one pricing MILP when no ``node_limit`` is given."""

EXACT_EVERY = 10
"""Rounds between two exact pricings while the greedy pricing still finds columns, so that
a stopped generation has a recent Lagrangian bound."""

REDUCED_COST_TOLERANCE = 1e-7
"""A column prices out when its reduced cost (in units of a slot of the heaviest job) is
below minus this."""


@dataclass(frozen=True)
class ServerClass:
    """Identical servers (same GPU count and type) and each job's run on one of them.

    Attributes
    ----------
    servers
        The servers of the class.
    capacity
        ``G_k``, GPUs of each.
    seconds
        Per job, ``p_ik``: ``K_i alpha_i`` with all its nodes on one server of the class
        (``nan`` where the job does not fit one).
    slots
        Per job, ``d_ik``, ``p_ik`` in slots (``-1`` where the job does not fit).
    """

    servers: tuple[int, ...]
    capacity: int
    seconds: np.ndarray
    slots: np.ndarray


@dataclass(frozen=True)
class Decomposition:
    """The data of the master and pricing problems (module docstring).

    Attributes
    ----------
    grid
        The slots and each job's window (:func:`time_grid`).
    weights, gpus
        ``w_i`` and ``g_i``.
    classes
        The server classes.
    span_seconds, span_slots
        ``q_i``, a lower bound on a spanning run, and its slots ``e_i`` (``nan`` and
        ``-1`` where job ``i`` cannot span: one GPU, or one server).
    num_gpus
        ``M``.
    horizon
        Slots that any run may touch.
    unit
        Seconds times weight of one unit of the LPs' costs (a slot of the heaviest job):
        HiGHS's tolerances are absolute.
    """

    grid: TimeGrid
    weights: np.ndarray
    gpus: np.ndarray
    classes: tuple[ServerClass, ...]
    span_seconds: np.ndarray
    span_slots: np.ndarray
    num_gpus: int
    horizon: int
    unit: float

    @property
    def spans(self) -> bool:
        """Whether some job may span servers (then the slot rows are needed)."""
        return bool(np.any(self.span_slots >= 0))

    def starts(self, i: int) -> np.ndarray:
        """Job ``i``'s start slots ``R_i .. L_i``."""
        return np.arange(int(self.grid.release_slot[i]), int(self.grid.last[i]) + 1)

    def cost(self, i: int, starts: np.ndarray, seconds: float) -> np.ndarray:
        """``w_i (Delta t + seconds)`` in units, for each start slot ``t``."""
        return np.asarray(
            self.weights[i] * (self.grid.delta * starts + seconds) / self.unit, dtype=float
        )


def whole_slots(seconds: float, delta: float, on_grid: bool) -> int:
    """A duration in whole slots that no run of at least ``seconds`` is shorter than: on
    the instance's own grid (every duration a multiple of ``delta``) rounded up, forgiving
    :func:`grid_noise`; off it rounded down (module docstring: a run then covers the end
    of every slot it is charged to)."""
    ratio = seconds / delta
    if on_grid:
        return max(0, math.ceil(ratio - grid_noise(ratio)))
    return max(0, math.floor(ratio * (1 - 1e-12)))


def decomposition_data(
    instance: Instance,
    inputs: BoundInputs,
    upper_bound: float | None,
    max_variables: int = DECOMPOSITION_VARIABLES,
) -> Decomposition:
    """The grid, the server classes and every job's durations (module docstring)."""
    cluster = instance.cluster
    grid = time_grid(instance, inputs, LpSettings(max_variables=max_variables), upper_bound, None)
    groups: dict[tuple[int, str], list[int]] = {}
    for h, g in enumerate(cluster.gpus_per_server):
        groups.setdefault((g, cluster.type_of(h)), []).append(h)
    classes = tuple(
        _server_class(instance, tuple(servers), capacity, grid)
        for (capacity, _), servers in groups.items()
    )
    span = np.array(
        [
            _spanning_seconds(job, cluster, p)
            for job, p in zip(instance.jobs, inputs.processing, strict=True)
        ]
    )
    span_slots = np.array(
        [-1 if math.isnan(s) else whole_slots(s, grid.delta, grid.on_grid) for s in span],
        dtype=int,
    )
    longest = max([int(np.max(c.slots)) for c in classes] + [int(np.max(span_slots, initial=0))])
    weights = inputs.weights
    return Decomposition(
        grid=grid,
        weights=weights,
        gpus=inputs.gpus.astype(int),
        classes=classes,
        span_seconds=span,
        span_slots=span_slots,
        num_gpus=cluster.num_gpus,
        horizon=int(np.max(grid.last)) + max(1, longest) + 1,
        unit=grid.delta * (float(np.max(weights)) if weights.size else 1.0),
    )


def _server_class(
    instance: Instance, servers: tuple[int, ...], capacity: int, grid: TimeGrid
) -> ServerClass:
    """Each job's run whole on one server of the class (``servers[0]`` stands for all)."""
    seconds = np.full(instance.num_jobs, math.nan)
    slots = np.full(instance.num_jobs, -1, dtype=int)
    for i, job in enumerate(instance.jobs):
        if job.gpus <= capacity:
            seconds[i] = job.iterations * alpha(job, instance.cluster, [servers[0]] * job.gpus)
            slots[i] = whole_slots(float(seconds[i]), grid.delta, grid.on_grid)
    return ServerClass(servers, capacity, seconds, slots)


def _spanning_seconds(job: Job, cluster: Cluster, fastest: float) -> float:
    """``q_i``: a lower bound on ``K_i alpha_i`` over the mappings using two servers or
    more (``nan`` for a job that cannot span). At least ``K_i alpha_i^min`` (``fastest``);
    on one GPU type with the inter-server link the slower, at least the time of the least
    cut a partition into parts of at most ``min(g_i - 1, max G_h)`` nodes can have
    (:func:`~ddlsched.core.alpha.min_cut_bound`), as ``alpha`` grows with the cut there."""
    if job.gpus < 2 or cluster.num_servers < 2:
        return math.nan
    if cluster.heterogeneous or not job.edges:
        return fastest
    gpu_type = cluster.types[0]
    if cluster.bandwidth_inter > cluster.intra_of(gpu_type):
        return fastest
    part = min(job.gpus - 1, max(cluster.gpus_per_server))
    cut = min_cut_bound(job, part)
    return max(fastest, job.iterations * alpha_from_cut(job, cluster, cut))


@dataclass(frozen=True)
class Column:
    """One server's schedule: its class and each job's ``(job, start slot)``."""

    server_class: int
    starts: tuple[tuple[int, int], ...]


@dataclass
class _Pricing:
    """One class's pricing problem at the current duals: every negative ``(job, start)``."""

    jobs: np.ndarray
    starts: np.ndarray
    slots: np.ndarray
    costs: np.ndarray


@dataclass
class _Master:
    """The restricted master LP in HiGHS (module docstring), with one artificial column per
    job (cost above any schedule's) so that it is feasible from the first round."""

    data: Decomposition
    model: highspy.Highs
    columns: list[Column] = field(default_factory=list)
    known: set[Column] = field(default_factory=set)

    @property
    def slot_row(self) -> int:
        """The first slot row (after the assignment rows)."""
        return len(self.data.weights)

    @property
    def class_row(self) -> int:
        """The first class row (after the slot rows, if any)."""
        return self.slot_row + (self.data.horizon if self.data.spans else 0)

    def add(self, column: Column) -> bool:
        """Add a column of one server; ``False`` (nothing added) if it is there already
        (within HiGHS's tolerances a column of the master may still price out)."""
        if column in self.known:
            return False
        data, k = self.data, column.server_class
        server_class = data.classes[k]
        use = np.zeros(data.horizon)
        cost = 0.0
        for i, t in column.starts:
            d = int(server_class.slots[i])
            use[t : t + d] += data.gpus[i]
            cost += float(data.cost(i, np.array([t]), float(server_class.seconds[i]))[0])
        rows = [i for i, _ in column.starts] + [self.class_row + k]
        values = [1.0] * (len(rows))
        if data.spans:
            busy = np.flatnonzero(use)
            rows += [self.slot_row + int(s) for s in busy]
            values += [float(use[s]) for s in busy]
        self.model.addCol(
            cost, 0.0, math.inf, len(rows), np.array(rows, np.int32), np.array(values)
        )
        self.columns.append(column)
        self.known.add(column)
        return True

    def solve(self) -> tuple[float, np.ndarray, np.ndarray] | None:
        """The LP's optimum and its duals ``pi`` and ``sigma`` (clipped to ``<= 0``), or
        ``None`` if HiGHS did not solve it (no duals to price with)."""
        import highspy

        self.model.run()
        if self.model.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        solution = self.model.getSolution()
        duals = np.asarray(solution.row_dual, dtype=float)
        n = len(self.data.weights)
        pi = duals[:n]
        sigma = np.zeros(self.data.horizon)
        if self.data.spans:
            sigma = np.minimum(duals[self.slot_row : self.class_row], 0.0)
        value = float(self.model.getInfo().objective_function_value)
        return value, pi, sigma


def _new_master(data: Decomposition) -> _Master:
    """The master with its rows, the artificial columns and every spanning ``z_it``."""
    import highspy

    from ddlsched.core.highs import new_highs

    model = new_highs()
    model.setOptionValue("output_flag", False)
    n = len(data.weights)
    lower = [1.0] * n
    upper = [1.0] * n
    if data.spans:
        lower += [-highspy.kHighsInf] * data.horizon
        upper += [float(data.num_gpus)] * data.horizon
    lower += [-highspy.kHighsInf] * len(data.classes)
    upper += [float(len(c.servers)) for c in data.classes]
    for low, high in zip(lower, upper, strict=True):
        model.addRow(low, high, 0, np.array([], np.int32), np.array([]))
    master = _Master(data, model)
    # Costlier than every job's latest completion: no schedule of the windows uses them.
    artificial = float(np.sum(data.weights)) * (data.grid.delta * data.horizon) / data.unit + 1.0
    for i in range(n):
        model.addCol(artificial, 0.0, math.inf, 1, np.array([i], np.int32), np.array([1.0]))
    for spanning in np.flatnonzero(data.span_slots >= 0):
        _add_spanning(master, int(spanning))
    return master


def _add_spanning(master: _Master, i: int) -> None:
    """Job ``i``'s spanning starts ``z_it``: its assignment row and the pool's slot rows."""
    data = master.data
    starts = data.starts(i)
    costs = data.cost(i, starts, float(data.span_seconds[i]))
    e = int(data.span_slots[i])
    for t, cost in zip(starts, costs, strict=True):
        rows = [i] + [master.slot_row + int(s) for s in range(t, t + e)]
        values = [1.0] + [float(data.gpus[i])] * e
        master.model.addCol(
            float(cost), 0.0, math.inf, len(rows), np.array(rows, np.int32), np.array(values)
        )


def _pricing(data: Decomposition, k: int, pi: np.ndarray, sigma: np.ndarray) -> _Pricing:
    """Every ``(job, start)`` of class ``k`` with a negative reduced cost ``w_i (Delta t +
    p_ik) - pi_i - g_i sum_{s in run} sigma_s`` (only those can lower a column's)."""
    server_class = data.classes[k]
    prefix = np.concatenate(([0.0], np.cumsum(sigma)))
    jobs, starts, slots, costs = [], [], [], []
    for i in np.flatnonzero(server_class.slots >= 0):
        t = data.starts(int(i))
        d = int(server_class.slots[i])
        reduced = data.cost(int(i), t, float(server_class.seconds[i])) - pi[i]
        reduced -= data.gpus[i] * (prefix[t + d] - prefix[t])
        keep = reduced < -REDUCED_COST_TOLERANCE
        jobs.append(np.full(int(keep.sum()), i))
        starts.append(t[keep])
        slots.append(np.full(int(keep.sum()), d))
        costs.append(reduced[keep])
    if not jobs:
        empty = np.array([], dtype=int)
        return _Pricing(empty, empty, empty, np.array([]))
    return _Pricing(
        np.concatenate(jobs), np.concatenate(starts), np.concatenate(slots), np.concatenate(costs)
    )


def _greedy_columns(data: Decomposition, k: int, pricing: _Pricing) -> list[Column]:
    """Columns of negative reduced cost built greedily, for each of two orders of the
    candidates (by reduced cost, and by reduced cost per GPU-slot): one column per server
    of the class, each taking candidates in that order if their job is in no column of the
    pass yet and the server has room (a whole class's schedule per pass, so that the master
    sees servers that complement each other from the first rounds)."""
    area = data.gpus[pricing.jobs] * np.maximum(pricing.slots, 1)
    found: list[Column] = []
    for order in (
        np.argsort(pricing.costs, kind="stable"),
        np.argsort(pricing.costs / area, kind="stable"),
    ):
        placed: set[int] = set()
        for _ in data.classes[k].servers:
            chosen, total = _fill_server(data, k, pricing, order, placed)
            if total >= -REDUCED_COST_TOLERANCE:
                break
            column = Column(k, tuple(sorted(chosen)))
            if column not in found:
                found.append(column)
    return found


def _fill_server(
    data: Decomposition, k: int, pricing: _Pricing, order: np.ndarray, placed: set[int]
) -> tuple[list[tuple[int, int]], float]:
    """One server of class ``k`` filled with the candidates in ``order`` whose job is not in
    ``placed`` (which it extends) and that fit its GPUs; the starts and their reduced cost."""
    capacity = data.classes[k].capacity
    load = np.zeros(data.horizon, dtype=int)
    chosen: list[tuple[int, int]] = []
    total = 0.0
    for c in order:
        i, t, d = int(pricing.jobs[c]), int(pricing.starts[c]), int(pricing.slots[c])
        g = int(data.gpus[i])
        if i in placed or (d and int(np.max(load[t : t + d])) + g > capacity):
            continue
        load[t : t + d] += g
        placed.add(i)
        chosen.append((i, t))
        total += float(pricing.costs[c])
    return chosen, total


def _stopped_or_solved() -> frozenset[object]:
    """HiGHS's statuses after which a MILP's dual bound holds: solved, or stopped by a
    limit (a node limit is its solution limit), not an error nor a model never run."""
    import highspy

    status = highspy.HighsModelStatus
    limits = (status.kTimeLimit, status.kSolutionLimit, status.kIterationLimit)
    return frozenset({status.kOptimal, status.kInterrupt, *limits})


def _exact_column(
    data: Decomposition,
    k: int,
    pricing: _Pricing,
    node_limit: int,
    seconds: float | None,
) -> tuple[Column | None, float]:
    """The pricing MILP of class ``k``: a column of least reduced cost (``None`` if it found
    none below zero) and HiGHS's dual bound on that least reduced cost (at most 0: the
    empty column), valid when it stops at ``node_limit`` or ``seconds`` too."""
    import highspy

    from ddlsched.core.highs import new_highs

    count = len(pricing.costs)
    if count == 0:
        return None, 0.0
    model = new_highs()
    model.setOptionValue("output_flag", False)
    model.setOptionValue("mip_max_nodes", int(node_limit))
    if seconds is not None:
        model.setOptionValue("time_limit", max(0.01, float(seconds)))
    model.addVars(count, np.zeros(count), np.ones(count))
    index = np.arange(count, dtype=np.int32)
    model.changeColsCost(count, index, pricing.costs)
    model.changeColsIntegrality(count, index, np.full(count, highspy.HighsVarType.kInteger))
    rows: dict[tuple[str, int], list[int]] = {}
    for c in range(count):
        rows.setdefault(("job", int(pricing.jobs[c])), []).append(c)
        for s in range(int(pricing.starts[c]), int(pricing.starts[c] + pricing.slots[c])):
            rows.setdefault(("slot", s), []).append(c)
    capacity = data.classes[k].capacity
    for (kind, _), members in rows.items():
        values = np.ones(len(members)) if kind == "job" else data.gpus[pricing.jobs[members]]
        limit = 1.0 if kind == "job" else float(capacity)
        if kind == "slot" and float(np.sum(values)) <= capacity:
            continue  # cannot bind
        model.addRow(
            -highspy.kHighsInf,
            limit,
            len(members),
            np.array(members, np.int32),
            np.asarray(values, dtype=float),
        )
    model.run()
    info = model.getInfo()
    # Every candidate at once is below every column: the bound where HiGHS gives none.
    bound = float(np.sum(pricing.costs))
    if model.getModelStatus() in _stopped_or_solved() and math.isfinite(info.mip_dual_bound):
        bound = max(bound, min(0.0, float(info.mip_dual_bound)))
    column = None
    if (
        info.primal_solution_status == 2
        and info.objective_function_value < -REDUCED_COST_TOLERANCE
    ):
        values = np.asarray(model.getSolution().col_value)
        chosen = np.flatnonzero(values > 0.5)
        column = Column(
            k, tuple(sorted((int(pricing.jobs[c]), int(pricing.starts[c])) for c in chosen))
        )
    return column, bound


def _spanning_reduced_costs(data: Decomposition, pi: np.ndarray, sigma: np.ndarray) -> float:
    """``sum_i min(0, min_t rc(z_it))``: the spanning starts' share of the Lagrangian bound."""
    prefix = np.concatenate(([0.0], np.cumsum(sigma)))
    total = 0.0
    for i in np.flatnonzero(data.span_slots >= 0):
        t = data.starts(int(i))
        e = int(data.span_slots[i])
        reduced = data.cost(int(i), t, float(data.span_seconds[i])) - pi[i]
        reduced -= data.gpus[i] * (prefix[t + e] - prefix[t])
        total += min(0.0, float(np.min(reduced)))
    return total


def lagrangian_value(
    data: Decomposition, pi: np.ndarray, sigma: np.ndarray, least: Sequence[float]
) -> float:
    """The Lagrangian bound (module docstring) in units, for duals ``pi`` (any) and
    ``sigma`` (``<= 0``), given ``least[k]``, a lower bound on class ``k``'s least reduced
    cost."""
    if np.any(sigma > 0):
        raise ValueError("sigma: the slot rows' duals must be <= 0")
    value = math.fsum(pi.tolist()) + data.num_gpus * math.fsum(sigma.tolist())
    value += math.fsum(
        len(c.servers) * min(0.0, rc) for c, rc in zip(data.classes, least, strict=True)
    )
    return value + _spanning_reduced_costs(data, pi, sigma)


def priced_bound(
    data: Decomposition,
    pi: np.ndarray,
    sigma: np.ndarray,
    node_limit: int = PRICING_NODES,
    seconds: float | None = None,
    pricings: Sequence[_Pricing] | None = None,
) -> tuple[float, list[Column]]:
    """The Lagrangian bound (units) at duals ``pi`` and ``sigma`` (``<= 0``), every class
    priced by its MILP (:func:`_exact_column`), and the columns of negative reduced cost
    the MILPs found. Valid for any such duals (module docstring)."""
    if pricings is None:
        pricings = [_pricing(data, k, pi, sigma) for k in range(len(data.classes))]
    least, columns = [], []
    for k, pricing in enumerate(pricings):
        column, bound = _exact_column(data, k, pricing, node_limit, seconds)
        least.append(bound)
        if column is not None:
            columns.append(column)
    return lagrangian_value(data, pi, sigma, least), columns


def initial_columns(data: Decomposition) -> list[Column]:
    """A list schedule's servers as columns: jobs by ratio ``p_i / w_i`` (Smith's rule),
    each whole on the server where it completes first within its window (jobs that fit no
    server, or no window, are left to the spanning starts and the artificial columns)."""
    servers = [(k, h) for k, c in enumerate(data.classes) for h in c.servers]
    load = {h: np.zeros(data.horizon, dtype=int) for _, h in servers}
    placed: dict[int, list[tuple[int, int]]] = {h: [] for _, h in servers}
    shortest = np.nanmin(
        np.array([c.seconds for c in data.classes] + [np.full(len(data.weights), np.inf)]),
        axis=0,
    )
    for i in np.argsort(shortest / data.weights, kind="stable"):
        best: tuple[int, int, int] | None = None  # (completion, server, start)
        for k, h in servers:
            d = int(data.classes[k].slots[i])
            if d < 0:
                continue
            for t in data.starts(int(i)):
                if (
                    d == 0
                    or int(np.max(load[h][t : t + d])) + data.gpus[i] <= data.classes[k].capacity
                ):
                    if best is None or t + d < best[0]:
                        best = (int(t) + d, h, int(t))
                    break
        if best is not None:
            _, h, t = best
            k = next(k for k, s in servers if s == h)
            load[h][t : t + int(data.classes[k].slots[i])] += data.gpus[i]
            placed[h].append((int(i), t))
    return [Column(k, tuple(sorted(placed[h]))) for k, h in servers if placed[h]]


@dataclass
class _Progress:
    """What a column generation has found so far."""

    best: float = -math.inf
    rounds: int = 0
    exact_rounds: int = 0
    converged: bool = False
    master_value: float = math.nan


def decomposition_bound(
    instance: Instance,
    upper_bound: float | None,
    *,
    time_limit: float | None = None,
    node_limit: int | None = None,
    give_up: Callable[[], bool] | None = None,
    rounds: int = COLUMN_ROUNDS,
    max_variables: int = DECOMPOSITION_VARIABLES,
    inputs: BoundInputs | None = None,
) -> LowerBound:
    """The decomposition bound on ``OPT(A)`` (module docstring).

    Parameters
    ----------
    instance
        Problem A's instance.
    upper_bound
        The objective of a feasible schedule, if known: it narrows every job's window of
        starts (:func:`~ddlsched.formulations.lower_bounds.time_indexed_bound`).
    time_limit
        Seconds for the whole generation (``None``: no limit); each pricing MILP gets at
        most what is left.
    node_limit
        Branch-and-bound nodes of each pricing MILP (default :data:`PRICING_NODES`): a
        deterministic limit; its dual bound stays valid.
    give_up
        Asked before every round; ``True`` stops the generation with the best bound so far.
    rounds
        Most rounds of column generation (deterministic).
    max_variables
        Start slots the pooled grid may take (:data:`DECOMPOSITION_VARIABLES`).
    inputs
        The instance's :class:`~ddlsched.formulations.lower_bounds.BoundInputs`, if known.

    Returns
    -------
    LowerBound
        Named ``"decomposition"``; valid once every class was priced exactly at least
        once (the Lagrangian bound), with notes saying whether the generation converged.
    """
    began = time.perf_counter()
    deadline = None if time_limit is None else began + time_limit
    inputs = inputs or BoundInputs.of(instance)
    data = decomposition_data(instance, inputs, upper_bound, max_variables)
    master = _new_master(data)
    for column in initial_columns(data):
        master.add(column)
    progress = _generate(master, rounds, node_limit or PRICING_NODES, deadline, give_up)
    notes = (
        *inputs.notes(),
        f"slot {data.grid.delta:.6g} s, {data.horizon} slots, {len(data.classes)} server "
        f"class(es), {len(master.columns)} columns, {progress.rounds} rounds "
        f"({progress.exact_rounds} priced exactly)",
        "converged: the master LP's optimum"
        if progress.converged
        else "not converged: the best Lagrangian bound of the rounds priced exactly",
    )
    if upper_bound is not None:
        notes = (*notes, f"windows from an upper bound of {upper_bound:.8g}")
    if not math.isfinite(progress.best):
        return LowerBound(
            math.nan,
            NAME,
            False,
            time.perf_counter() - began,
            (*notes, "no round was priced exactly: no bound"),
        )
    # A negative Lagrangian value (early duals) is valid but says less than 0 does.
    value = grid_multiple(max(0.0, progress.best * data.unit), data.grid, inputs)
    flow = safe_flow_value(inputs, value - inputs.release_weight)
    return LowerBound(value * SAFETY, NAME, True, time.perf_counter() - began, notes, flow)


def _generate(
    master: _Master,
    rounds: int,
    node_limit: int,
    deadline: float | None,
    give_up: Callable[[], bool] | None,
) -> _Progress:
    """Column generation: greedy pricing while it finds columns, the pricing MILP every
    :data:`EXACT_EVERY` rounds and whenever the greedy one finds none; each exact round
    gives a Lagrangian bound, the best kept; converged when the MILPs find no column."""
    data = master.data
    progress = _Progress()
    stale = 0
    while progress.rounds < rounds:
        if (give_up is not None and give_up()) or (
            deadline is not None and time.perf_counter() >= deadline
        ):
            break
        progress.rounds += 1
        solved = master.solve()
        if solved is None:
            break
        progress.master_value, pi, sigma = solved
        pricings = [_pricing(data, k, pi, sigma) for k in range(len(data.classes))]
        found = [
            col
            for k, p in enumerate(pricings)
            for col in _greedy_columns(data, k, p)
            if col not in master.known
        ]
        stale += 1
        if found and stale < EXACT_EVERY and progress.rounds < rounds:
            for column in found:
                master.add(column)
            continue
        stale = 0
        left = None if deadline is None else deadline - time.perf_counter()
        value, exact = priced_bound(data, pi, sigma, node_limit, left, pricings)
        found += [c for c in exact if c not in found and c not in master.known]
        progress.exact_rounds += 1
        progress.best = max(progress.best, value)
        if not found:
            # The MILPs found no column: converged if their bounds close the LP (a MILP
            # stopped by its limit may leave a gap it found no column in).
            scale = max(1.0, abs(progress.master_value))
            progress.converged = value >= progress.master_value - 1e-6 * scale
            break
        for column in found:
            master.add(column)
    return progress
