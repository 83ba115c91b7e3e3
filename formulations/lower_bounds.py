"""Proven lower bounds on ``OPT(A)``, so that every result carries a certified gap.

``OPT(A) = min sum_i w_i C_i`` over the schedules of problem A (SPEC: gang-
scheduled, non-preemptive, one mapping per job, per-server capacity). A
valid bound ``LB <= OPT(A)`` turns any schedule's objective ``sum C`` into a
certified ratio: ``sum C / OPT <= sum C / LB``, at any scale, where no exact
optimum is known. Every bound here is computed from ``p_i = K_i alpha_i^min``,
the shortest processing time job ``i`` can have under any mapping; where
``alpha_i^min`` is only a lower bound (see :func:`ddlsched.core.alpha.least_cut`)
every bound stays valid, only weaker, and says how many such jobs there were.
Each value is finally multiplied by ``1 - 1e-9`` so that floating-point
rounding can never lift it above the optimum.

Notation: ``g_i`` GPUs, release ``r_i``, weight ``w_i``, ``M`` GPUs in all,
``p_i = K_i alpha_i^min`` and ``v_i = g_i p_i / M``.

**1. Job bound** (``"job"``), any weights: ``sum_i w_i (r_i + p_i)``, since
``C_i >= S_i + p_i >= r_i + p_i``.

**2. Squashed area** (``"squashed-area"``). Take any schedule of A and let
job ``i`` be processed at rate ``g_i / M`` while it runs: at every instant
the rates add up to at most 1 (the running jobs hold at most ``M`` GPUs), and
job ``i`` receives ``g_i p_i(x_i) / M >= v_i`` units of work by ``C_i``. This
is a preemptive (processor-sharing) schedule of one unit-speed machine with
jobs of size ``v_i`` released at ``r_i`` in which every job completes by
``C_i``. So ``OPT(A)`` is at least the optimum of ``1 | r_i, pmtn | sum w_i
C_i`` on sizes ``v_i``. With unit weights preemptive SRPT is optimal for it
(Schrage, Oper. Res. 1968): the bound is SRPT's ``sum C_i``. With weights the
problem is NP-hard, and the bound used is Goemans' mean-busy-time bound
``sum_i w_i (M_i + v_i / 2)``, where ``M_i`` are the mean busy times of the
preemptive WSPT schedule, which minimises ``sum w_i M_i`` over all
preemptive, even fractional, schedules, and ``C_i >= M_i + v_i / 2`` holds
in any schedule at rate at most 1 (Goemans, Queyranne, Schulz, Skutella,
Wang, *Single machine scheduling with release dates*, SIAM J. Discrete
Math. 15(2), 2002). ``O(n log n)``.

**3. Mean busy time in real time** (``"mean-busy-time"``), any weights, a
combination stronger than both where jobs are long and narrow. In the same
fluid schedule, run job ``i`` at rate ``g_i / M`` only over its first ``p_i``
seconds ``[S_i, S_i + p_i)``: it receives exactly ``v_i``, rates still add up
to at most 1, and its mean busy time is ``S_i + p_i / 2``. Hence ``C_i >=
S_i + p_i = M_i^fluid + p_i / 2`` and, by the theorem above,
``sum w_i C_i >= sum w_i (M_i^WSPT + p_i / 2)``. Compared with 2, the half
duration is taken in real time (``p_i``), not squashed (``v_i = g_i p_i / M``);
compared with 1, the mean busy time carries the congestion. (The same
argument is the parallel-machine "mean busy time" relaxation of Hall,
Schulz, Shmoys and Wein, Math. Oper. Res. 22(3), 1997, and of Schwiegelshohn
et al.'s bounds for ``P | size_j | sum w_j C_j``.) A per-job maximum of the
three is *not* claimed: only whole sums are compared.

**4. LP relaxation** (``"lp"``), any weights: the time-indexed model on a
coarse grid of slots of ``Delta`` seconds, with releases and durations
rounded *down* (``R_i = floor(r_i / Delta)``, ``d_i = floor(p_i / Delta)``)
and one pooled resource of ``M`` GPUs. Any schedule of A maps to it: start
job ``i`` in slot ``floor(S_i / Delta)``; every job occupying slot ``s``
then runs at the instant ``(s + 1) Delta - epsilon``, so pooled capacity
holds; its cost ``w_i (Delta floor(S_i / Delta) + p_i) <= w_i C_i``. The
horizon ``T`` covers every optimal schedule: an optimal schedule never
leaves the whole cluster idle after the last release (shifting later jobs
earlier would lower the objective), so all jobs start by ``max_i r_i +
sum_i K_i alpha_i^max``, and, given the objective ``UB`` of any feasible
schedule, job ``i`` starts by ``(UB - sum_{j != i} w_j (r_j + p_j)) / w_i -
p_i``. Variables ``X_{i,t} = P(start <= t)`` in ``[0, 1]``,
non-decreasing in ``t``; capacity ``sum_i g_i (X_{i,s} - X_{i,s - d_i}) <= M``
per slot. ``Delta`` is the smallest slot keeping the LP within
``max_variables``. Solved by HiGHS (``highspy``'s matrix interface: a
Pyomo model of a million variables would take longer to build than to
solve); only an optimal LP is reported valid.

**5.** The MILP's own dual bound, where an exact model was solved: see
:attr:`ddlsched.core.result.Result.best_bound`.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.core.alpha import all_cut_alpha, fastest_processing
from ddlsched.core.model import Instance
from ddlsched.core.registry import Registry
from ddlsched.core.result import LowerBound
from ddlsched.core.virtual import srpt

SAFETY = 1.0 - 1e-9
"""Every bound is multiplied by this, so rounding never lifts it above OPT."""


@dataclass(frozen=True)
class BoundInputs:
    """What every bound needs, computed once per instance.

    Attributes
    ----------
    processing
        ``p_i = K_i alpha_i^min`` (seconds; a valid lower bound on the job's
        processing time under any mapping).
    inexact
        How many ``alpha_i^min`` are lower bounds rather than exact values.
    """

    releases: np.ndarray
    weights: np.ndarray
    gpus: np.ndarray
    processing: np.ndarray
    num_gpus: int
    inexact: int

    @classmethod
    def of(cls, instance: Instance, search_budget: int = 2_000) -> BoundInputs:
        """``p_i`` of every job (``alpha_min`` searched once per job shape)."""
        processing, inexact = fastest_processing(instance, search_budget)
        return cls(
            np.array([job.release for job in instance.jobs], dtype=float),
            np.array([job.weight for job in instance.jobs], dtype=float),
            np.array([job.gpus for job in instance.jobs], dtype=float),
            np.array(processing, dtype=float),
            instance.cluster.num_gpus,
            inexact,
        )

    @property
    def squashed(self) -> np.ndarray:
        """``v_i = g_i p_i / M``: the sizes on the squashed single machine."""
        return self.gpus * self.processing / self.num_gpus

    @property
    def unit_weights(self) -> bool:
        """Whether every weight is 1 (then SRPT gives the squashed optimum)."""
        return bool(np.all(self.weights == 1.0))

    def notes(self) -> tuple[str, ...]:
        """The caveat every bound of these inputs carries, if any."""
        if not self.inexact:
            return ()
        return (
            f"{self.inexact} job(s) use a lower bound of alpha_min, not its exact value "
            "(the bound stays valid, only weaker)",
        )


def job_bound(inputs: BoundInputs) -> float:
    """Bound 1: ``sum_i w_i (r_i + p_i)``."""
    return float(np.sum(inputs.weights * (inputs.releases + inputs.processing))) * SAFETY


def preemptive_wspt_mean_busy_times(
    sizes: Sequence[float] | np.ndarray,
    releases: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """Mean busy times of the preemptive WSPT schedule on one unit-speed machine.

    At every instant the released unfinished job of highest ``w_i / v_i``
    runs (ties: earlier release, then lower index), preempting at releases.
    ``M_i = (1 / v_i) * integral of t over the job's processing``. Jobs of
    size 0 have ``M_i = r_i``. ``O(n log n)``.
    """
    n = len(sizes)
    order = sorted(range(n), key=lambda k: (releases[k], k))
    remaining = [float(v) for v in sizes]
    moment = [0.0] * n
    ready: list[tuple[float, float, int]] = []
    now, nxt = 0.0, 0
    while nxt < n or ready:
        if not ready:
            now = max(now, releases[order[nxt]])
        while nxt < n and releases[order[nxt]] <= now:
            k = order[nxt]
            density = weights[k] / sizes[k] if sizes[k] > 0 else math.inf
            heapq.heappush(ready, (-density, releases[k], k))
            nxt += 1
        k = ready[0][2]
        until = releases[order[nxt]] if nxt < n else math.inf
        finishes = now + remaining[k] <= until
        end = now + remaining[k] if finishes else until
        moment[k] += (end - now) * (end + now) / 2.0
        # Decided by comparison, not by the remainder reaching 0: at large times
        # float subtraction can leave a residue no step would ever consume.
        remaining[k] = 0.0 if finishes else remaining[k] - (end - now)
        now = end
        if finishes:
            heapq.heappop(ready)
    return np.array(
        [moment[k] / sizes[k] if sizes[k] > 0 else releases[k] for k in range(n)], dtype=float
    )


def squashed_area_bound(inputs: BoundInputs) -> float:
    """Bound 2: SRPT on the squashed machine (unit weights), else Goemans' bound on it."""
    sizes = inputs.squashed
    if inputs.unit_weights:
        completions, _ = srpt(list(sizes), list(inputs.releases))
        return float(sum(completions.values())) * SAFETY
    busy = preemptive_wspt_mean_busy_times(sizes, inputs.releases, inputs.weights)
    return float(np.sum(inputs.weights * (busy + sizes / 2.0))) * SAFETY


def mean_busy_time_bound(inputs: BoundInputs) -> float:
    """Bound 3: ``sum_i w_i (M_i^WSPT + p_i / 2)`` (module docstring)."""
    busy = preemptive_wspt_mean_busy_times(inputs.squashed, inputs.releases, inputs.weights)
    return float(np.sum(inputs.weights * (busy + inputs.processing / 2.0))) * SAFETY


@dataclass(frozen=True)
class LpSettings:
    """Settings of the LP bound.

    Attributes
    ----------
    max_variables
        The slot is chosen as small as keeps the LP within this many
        variables (default 400,000).
    time_limit
        Seconds for HiGHS; a limit reached makes the bound invalid (default 300).
    threads
        HiGHS threads (``None``: its default).
    """

    max_variables: int = 400_000
    time_limit: float = 300.0
    threads: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_variables, int) or self.max_variables < 2:
            raise ValueError(f"max_variables: must be an integer >= 2, got {self.max_variables!r}")
        if not (math.isfinite(self.time_limit) and self.time_limit > 0):
            raise ValueError(f"time_limit: must be a finite number > 0, got {self.time_limit!r}")


def lp_bound(
    instance: Instance,
    inputs: BoundInputs,
    settings: LpSettings | None = None,
    upper_bound: float | None = None,
) -> LowerBound:
    """Bound 4: the LP relaxation of the coarse time-indexed model (module docstring).

    ``upper_bound``, the objective of any feasible schedule, shortens each
    job's window: in every optimal schedule ``w_i C_i <= UB - sum_{j != i}
    w_j (r_j + p_j)``, so job ``i`` starts by that bound minus ``p_i``. The
    finer slot this allows makes the LP stronger; without it every job may
    start until the makespan bound ``max_i r_i + sum_i K_i alpha_i^max``.
    """
    import highspy

    settings = settings or LpSettings()
    began = time.perf_counter()
    n = len(instance.jobs)
    w, r, p = inputs.weights, inputs.releases, inputs.processing
    makespan = float(np.max(r)) + sum(
        job.iterations * all_cut_alpha(job, instance.cluster) for job in instance.jobs
    )
    latest_start = np.full(n, makespan)
    if upper_bound is not None and math.isfinite(upper_bound):
        others = float(np.sum(w * (r + p))) - w * (r + p)
        latest_start = np.minimum(latest_start, (upper_bound - others) / w - p)
    latest_start = np.maximum(latest_start, r)
    span = float(np.sum(latest_start - r))
    # As fine as the variable budget allows, and never more slots than that budget either.
    delta = max(
        span / settings.max_variables,
        float(np.max(latest_start)) / settings.max_variables,
        1e-9 * max(1.0, makespan),
    )
    # Rounded down, with a bias against rounding error, so no job is made later or longer;
    # a latest start is rounded up, so no start of an optimal schedule is cut off.
    release_slot = np.floor(r / delta * (1 - 1e-12)).astype(int)
    duration = np.floor(p / delta * (1 - 1e-12)).astype(int)
    last = np.maximum(np.ceil(latest_start / delta * (1 + 1e-12)).astype(int), release_slot)
    slots = int(np.max(last)) + 1
    # X_{i,t} for t in [R_i, L_i) are columns; X = 0 before R_i and 1 from L_i on.
    first_column = np.concatenate(([0], np.cumsum(last - release_slot)))
    columns = int(first_column[-1])
    model = highspy.Highs()
    model.setOptionValue("output_flag", False)
    model.setOptionValue("time_limit", float(settings.time_limit))
    if settings.threads is not None:
        model.setOptionValue("threads", int(settings.threads))
    costs = np.zeros(columns)
    for i in range(n):
        costs[first_column[i] : first_column[i + 1]] = -w[i] * delta
    constant = float(np.sum(w * (delta * last + p)))
    model.addVars(columns, np.zeros(columns), np.ones(columns))
    model.changeColsCost(columns, np.arange(columns, dtype=np.int32), costs)

    def term(i: int, t: int) -> int | float:
        """X_{i,t}: its column, or the constant 0 (before R_i) or 1 (from L_i on)."""
        if t < release_slot[i]:
            return 0.0
        if t >= last[i]:
            return 1.0
        return int(first_column[i] + t - release_slot[i])

    # Monotone: X_{i,t} - X_{i,t-1} >= 0.
    starts, index, value = [0], [], []
    for i in range(n):
        for t in range(release_slot[i] + 1, last[i]):
            index += [term(i, t), term(i, t - 1)]
            value += [1.0, -1.0]
            starts.append(len(index))
    if len(starts) > 1:
        model.addRows(
            len(starts) - 1,
            np.zeros(len(starts) - 1),
            np.full(len(starts) - 1, highspy.kHighsInf),
            len(index),
            np.array(starts[:-1], dtype=np.int32),
            np.array(index, dtype=np.int32),
            np.array(value),
        )
    # Capacity per slot: sum_i g_i (X_{i,s} - X_{i,s-d_i}) <= M, constants moved right.
    entries: list[dict[int, float]] = [{} for _ in range(slots)]
    rhs = np.full(slots, float(inputs.num_gpus))
    for i in range(n):
        if duration[i] == 0:
            continue
        g = float(inputs.gpus[i])
        for s in range(release_slot[i], min(slots, last[i] + duration[i])):
            for t, sign in ((s, 1.0), (s - duration[i], -1.0)):
                x = term(i, t)
                if isinstance(x, int):
                    entries[s][x] = entries[s].get(x, 0.0) + sign * g
                else:
                    rhs[s] -= sign * g * x
    starts, index, value = [0], [], []
    for row in entries:
        index += list(row)
        value += list(row.values())
        starts.append(len(index))
    model.addRows(
        slots,
        np.full(slots, -highspy.kHighsInf),
        rhs,
        len(index),
        np.array(starts[:-1], dtype=np.int32),
        np.array(index, dtype=np.int32),
        np.array(value),
    )
    notes = (*inputs.notes(), f"slot {delta:.6g} s, {slots} slots, {columns} variables")
    if upper_bound is not None:
        notes = (*notes, f"windows from an upper bound of {upper_bound:.8g}")
    if columns == 0:  # every start is fixed: the LP is its constant, if capacity holds
        fits = bool(np.all(rhs >= -1e-9))
        fixed = constant * SAFETY if fits else math.nan
        return LowerBound(fixed, "lp", fits, time.perf_counter() - began, notes)
    model.run()
    status = model.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        return LowerBound(
            math.nan,
            "lp",
            False,
            time.perf_counter() - began,
            (*notes, f"HiGHS stopped: {model.modelStatusToString(status)}"),
        )
    objective = model.getInfo().objective_function_value + constant
    return LowerBound(objective * SAFETY, "lp", True, time.perf_counter() - began, notes)


BoundFunction = Callable[[BoundInputs], float]

BOUNDS: Registry[BoundFunction] = Registry("lower bound")
"""The fast bounds (``O(n log n)``) by name; :func:`lp_bound` is separate (it needs settings)."""
BOUNDS.add("job", job_bound, "sum w (r + K alpha_min)")
BOUNDS.add("squashed-area", squashed_area_bound, "SRPT / mean busy time on the squashed machine")
BOUNDS.add("mean-busy-time", mean_busy_time_bound, "WSPT mean busy time plus half the duration")


def lower_bounds(
    instance: Instance,
    names: Sequence[str] | None = None,
    lp: LpSettings | None = None,
    inputs: BoundInputs | None = None,
    upper_bound: float | None = None,
) -> list[LowerBound]:
    """Every requested bound (default: the fast ones; the LP too when ``lp`` is given,
    with job windows from ``upper_bound``, a feasible schedule's objective, if known)."""
    began = time.perf_counter()
    inputs = inputs or BoundInputs.of(instance)
    shared = time.perf_counter() - began
    chosen = list(names) if names is not None else list(BOUNDS.names())
    BOUNDS.check(chosen, "bounds")
    found = []
    for name in chosen:
        start = time.perf_counter()
        value = BOUNDS[name](inputs)
        found.append(
            LowerBound(value, name, True, shared + time.perf_counter() - start, inputs.notes())
        )
    if lp is not None:
        found.append(lp_bound(instance, inputs, lp, upper_bound))
    return found


def best_lower_bound(bounds: Sequence[LowerBound]) -> LowerBound | None:
    """The largest valid bound, or ``None``."""
    valid = [b for b in bounds if b.valid and math.isfinite(b.value)]
    return max(valid, key=lambda b: b.value) if valid else None
