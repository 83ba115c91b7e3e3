"""The exact optimum of malleable (elastic) jobs on a slotted horizon, and its lower bounds.

Certificates for the elastic policies of :mod:`ddlsched.algorithms.elastic`.

**The model** (:class:`MalleableInstance`). ``M`` GPUs pooled; time in slots
``[t Delta, (t + 1) Delta)``, ``t = 0 .. T - 1`` (``T`` the horizon). Job
``j``: release ``r_j`` (it may run from slot ``R_j = ceil(r_j / Delta)``,
as in the simulator, where a job arriving inside a round waits for the
next), work ``W_j`` (progress units), weight ``w_j``, and a rate
``rate_j(k)`` (progress per second) on ``k = 1 .. K_j`` GPUs. In each slot a
job runs on one width or not at all (the widths of the running jobs add up to
at most ``M``). Restart rule (the simulator's): in a slot where a job runs on
a width it did not run on in the previous slot (a first start, a resume after
a pause, a resize), its first ``d`` seconds make no progress. A job completes
the instant its progress reaches ``W_j``, inside its last slot.

**The MILP** (:func:`build_malleable` then :func:`solve_malleable`; HiGHS
through ``highspy``'s modelling layer, gaps 0; one constraint family per function):
binaries ``x[j,t,k]`` (runs on ``k`` GPUs in slot ``t``), ``s[j,t,k]``
(restarts there), ``u[j,t]`` (not done before slot ``t``); continuous
``tau[j,t,k]`` (seconds of progress in the slot) and ``C_j``::

    min  sum_j w_j C_j
    _one_width_per_slot   sum_k x[j,t,k] <= u[j,t];   u[j,t+1] <= u[j,t]
    _restart              s[j,t,k] >= x[j,t,k] - x[j,t-1,k]   (x[j,R_j - 1,k] = 0)
    _running_time         tau[j,t,k] <= Delta x[j,t,k] - d s[j,t,k]
    _capacity             sum_j sum_k k x[j,t,k] <= M
    _work                 sum_t sum_k rate_j(k) tau[j,t,k] >= W_j
    _completion           C_j >= Delta t + sum_k (tau[j,t,k] + d s[j,t,k]) - BigM (1 - u[j,t])
                          C_j >= Delta (R_j - 1 + sum_t u[j,t])

A job may use only part of a slot (``tau < Delta``); that never helps before
its last slot (more progress earlier cannot delay completion), so the optimum
equals that of full-slot schedules, which the tests check against a brute
force (:func:`brute_force_malleable`) that enumerates full-slot schedules
and shares no code with the MILP. In the last slot ``tau`` is exactly the
time the remaining work needs, so ``C_j`` is the interpolated completion.

**What the optimum proves, and what it does not.** ``OPT`` is the least
``sum w_j C_j`` over schedules **on the same slot grid** (decisions only at
slot boundaries, ``Delta`` = the simulator's round length), **with the same
restart rule**, **finishing within the horizon**, with the **pooled**
capacity (any placement on nodes satisfies it) and each width's **best**
rate. Every run of :func:`~ddlsched.algorithms.elastic.simulator.simulate_elastic`
whose rates per width are at most these (:func:`malleable_from_elastic`
takes the maximum over the batch configurations and node spreads the
policies use) and which ends within the horizon is such a schedule, so its
``sum w_j C_j >= OPT``: a certificate for every policy on that instance. It
is **not** a bound on continuous-time schedules that may resize between
round boundaries, nor on other restart rules, nor on runs whose goodput
changes with the epoch (the conversion accepts one-epoch jobs only, whose
goodput per configuration is constant).

**Lower bounds** (:attr:`MalleableResult.lower_bound`): the larger of the
LP relaxation's value (the same model with binaries relaxed to ``[0, 1]``)
and the job bound ``sum_j w_j (Delta R_j + d + W_j / max_k rate_j(k))``. The
second ``_completion`` row is implied in integers (the active slots are
``R_j .. L_j``, and ``C_j >= Delta L_j``) but not in the LP, where it is
what makes the relaxation bite (the big-M row alone relaxes to nothing)
(every job restarts once at least, then runs at most at its best rate).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ddlsched.core.elastic import ElasticCluster, ElasticWorkload, load_application

if TYPE_CHECKING:
    from highspy import Highs
    from highspy.highs import highs_var

__all__ = [
    "MalleableInstance",
    "MalleableJob",
    "MalleableResult",
    "brute_force_malleable",
    "build_malleable",
    "job_bound",
    "malleable_from_elastic",
    "solve_malleable",
]


@dataclass(frozen=True)
class MalleableJob:
    """A job that may change its GPU count at slot boundaries.

    Attributes
    ----------
    name
        Unique name.
    release
        r_j (s).
    work
        W_j, progress units to complete.
    rates
        ``rates[k - 1]``: progress per second on ``k`` GPUs, ``k = 1 .. K_j``
        (0 allowed: a width of no use).
    weight
        w_j.
    """

    name: str
    release: float
    work: float
    rates: tuple[float, ...]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.release) and self.release >= 0):
            raise ValueError(f"MalleableJob.release must be >= 0, got {self.release!r}")
        if not (math.isfinite(self.work) and self.work > 0):
            raise ValueError(f"MalleableJob.work must be > 0, got {self.work!r}")
        if not self.rates or min(self.rates) < 0 or max(self.rates) <= 0:
            raise ValueError(f"MalleableJob.rates must be >= 0 with one > 0, got {self.rates!r}")
        if not self.weight > 0:
            raise ValueError(f"MalleableJob.weight must be > 0, got {self.weight!r}")


@dataclass(frozen=True)
class MalleableInstance:
    """Malleable jobs on ``capacity`` pooled GPUs, slots of ``slot_length`` seconds.

    Attributes
    ----------
    jobs
        The jobs.
    capacity
        M, GPUs.
    horizon
        T, slots; every schedule considered ends by ``T * slot_length``.
    slot_length
        Delta (s); the simulator's round length.
    restart_time
        d (s), at most ``slot_length``.
    """

    jobs: tuple[MalleableJob, ...]
    capacity: int
    horizon: int
    slot_length: float = 60.0
    restart_time: float = 30.0

    def __post_init__(self) -> None:
        names = [job.name for job in self.jobs]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"MalleableInstance.jobs must be non-empty, unique names: {names}")
        if self.capacity < 1 or self.horizon < 1:
            raise ValueError(
                f"MalleableInstance capacity {self.capacity} and horizon {self.horizon} "
                "must be >= 1"
            )
        if not 0 <= self.restart_time <= self.slot_length:
            raise ValueError(
                f"MalleableInstance.restart_time must be in [0, slot_length], "
                f"got {self.restart_time!r}"
            )

    def release_slot(self, job: MalleableJob) -> int:
        """R_j = ceil(r_j / Delta): the first slot the job may run in."""
        return math.ceil(job.release / self.slot_length - 1e-12)

    def widths(self, job: MalleableJob) -> range:
        """The GPU counts the job may use: 1 .. min(K_j, M)."""
        return range(1, min(len(job.rates), self.capacity) + 1)


@dataclass(frozen=True)
class MalleableResult:
    """The outcome of :func:`solve_malleable`.

    Attributes
    ----------
    objective
        ``sum_j w_j C_j`` of the solution (s).
    lower_bound
        A proven lower bound on the optimum (the optimum itself when optimal).
    optimal
        Whether HiGHS proved optimality.
    completion
        Job -> C_j.
    widths
        Job -> GPUs per slot (0: not running).
    lp_bound, job_bound
        The two lower bounds of the module docstring.
    """

    objective: float
    lower_bound: float
    optimal: bool
    completion: dict[str, float]
    widths: dict[str, tuple[int, ...]]
    lp_bound: float
    job_bound: float

    def mean_jct(self, instance: MalleableInstance) -> float:
        """Mean of ``C_j - r_j`` (unit weights)."""
        jobs = instance.jobs
        return sum(self.completion[j.name] - j.release for j in jobs) / len(jobs)


@dataclass
class _Model:
    """The HiGHS model and its variables, keyed ``(j, t, k)`` / ``(j, t)`` / ``j``."""

    highs: Highs
    run: dict[tuple[int, int, int], highs_var] = field(default_factory=dict)
    restart: dict[tuple[int, int, int], highs_var] = field(default_factory=dict)
    seconds: dict[tuple[int, int, int], highs_var] = field(default_factory=dict)
    active: dict[tuple[int, int], highs_var] = field(default_factory=dict)
    completion: dict[int, highs_var] = field(default_factory=dict)


def _variables(model: _Model, instance: MalleableInstance, relax: bool) -> None:
    highs = model.highs

    def binary() -> highs_var:
        return highs.addVariable(0.0, 1.0) if relax else highs.addBinary()

    for j, job in enumerate(instance.jobs):
        for t in range(instance.release_slot(job), instance.horizon):
            model.active[j, t] = binary()
            for k in instance.widths(job):
                model.run[j, t, k] = binary()
                model.restart[j, t, k] = binary()
                model.seconds[j, t, k] = highs.addVariable(0.0, instance.slot_length)
        model.completion[j] = highs.addVariable(0.0, math.inf, job.weight)


def _one_width_per_slot(model: _Model, instance: MalleableInstance) -> None:
    """At most one width per slot, only while not done; once done, done for good."""
    for j, job in enumerate(instance.jobs):
        first = instance.release_slot(job)
        for t in range(first, instance.horizon):
            widths = [model.run[j, t, k] for k in instance.widths(job)]
            model.highs.addConstr(sum(widths[1:], widths[0]) <= model.active[j, t])
            if t > first:
                model.highs.addConstr(model.active[j, t] <= model.active[j, t - 1])


def _restart(model: _Model, instance: MalleableInstance) -> None:
    """A width not run in the previous slot (or the job's first slot) restarts."""
    for j, job in enumerate(instance.jobs):
        first = instance.release_slot(job)
        for t in range(first, instance.horizon):
            for k in instance.widths(job):
                if t == first:
                    model.highs.addConstr(model.restart[j, t, k] >= model.run[j, t, k])
                else:
                    model.highs.addConstr(
                        model.restart[j, t, k] >= model.run[j, t, k] - model.run[j, t - 1, k]
                    )


def _running_time(model: _Model, instance: MalleableInstance) -> None:
    """Progress seconds: at most the slot, less the restart delay when restarting."""
    for key, seconds in model.seconds.items():
        model.highs.addConstr(
            seconds
            <= instance.slot_length * model.run[key] - instance.restart_time * model.restart[key]
        )


def _capacity(model: _Model, instance: MalleableInstance) -> None:
    """The widths of the jobs running in a slot add up to at most M."""
    for t in range(instance.horizon):
        used = [k * var for (_, slot, k), var in model.run.items() if slot == t]
        if used:
            model.highs.addConstr(sum(used[1:], used[0]) <= instance.capacity)


def _work(model: _Model, instance: MalleableInstance) -> None:
    """Each job's progress reaches its work."""
    for j, job in enumerate(instance.jobs):
        progress = [job.rates[k - 1] * var for (jj, _, k), var in model.seconds.items() if jj == j]
        if not progress:
            raise ValueError(f"{job.name}: released after the horizon")
        model.highs.addConstr(sum(progress[1:], progress[0]) >= job.work)


def _completion(model: _Model, instance: MalleableInstance) -> None:
    """C_j is at least the start of any slot it is active in plus what it uses of it.

    Also ``C_j >= Delta (R_j - 1 + sum_t u[j,t])``: the start of its last
    active slot (implied in integers; it tightens the LP relaxation).
    """
    big = instance.slot_length * (instance.horizon + 1)
    for j, job in enumerate(instance.jobs):
        first = instance.release_slot(job)
        active = [model.active[j, t] for t in range(first, instance.horizon)]
        model.highs.addConstr(
            model.completion[j]
            >= instance.slot_length * (first - 1)
            + instance.slot_length * sum(active[1:], active[0])
        )
        for t in range(instance.release_slot(job), instance.horizon):
            used = [
                model.seconds[j, t, k] + instance.restart_time * model.restart[j, t, k]
                for k in instance.widths(job)
            ]
            model.highs.addConstr(
                model.completion[j]
                >= instance.slot_length * t
                + sum(used[1:], used[0])
                - big
                + big * model.active[j, t]
            )


def build_malleable(instance: MalleableInstance, relax: bool = False) -> _Model:
    """The MILP (or its LP relaxation) of the module docstring, not yet solved."""
    from ddlsched.core.highs import exact_highs

    highs = exact_highs()
    model = _Model(highs)
    _variables(model, instance, relax)
    _one_width_per_slot(model, instance)
    _restart(model, instance)
    _running_time(model, instance)
    _capacity(model, instance)
    _work(model, instance)
    _completion(model, instance)
    return model


def job_bound(instance: MalleableInstance) -> float:
    """``sum_j w_j (Delta R_j + d + W_j / max_k rate_j(k))``: each job alone, from its release."""
    return sum(
        job.weight
        * (
            instance.slot_length * instance.release_slot(job)
            + instance.restart_time
            + job.work / max(job.rates[k - 1] for k in instance.widths(job))
        )
        for job in instance.jobs
    )


def _decode(model: _Model, instance: MalleableInstance) -> tuple[dict, dict]:
    """Completion times and widths per slot from a solved MILP."""
    completion: dict[str, float] = {}
    widths: dict[str, tuple[int, ...]] = {}
    for j, job in enumerate(instance.jobs):
        completion[job.name] = float(model.highs.val(model.completion[j]))
        per_slot = [0] * instance.horizon
        for (jj, t, k), var in model.run.items():
            if jj == j and model.highs.val(var) > 0.5:
                per_slot[t] = k
        widths[job.name] = tuple(per_slot)
    return completion, widths


def _optimum(model: _Model) -> tuple[float, bool]:
    import highspy

    model.highs.run()
    status = model.highs.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"malleable MILP: HiGHS status {model.highs.modelStatusToString(status)} "
            "(a horizon too short makes it infeasible)"
        )
    return float(model.highs.getInfo().objective_function_value), True


def solve_malleable(instance: MalleableInstance) -> MalleableResult:
    """The exact slotted optimum, its LP relaxation and the job bound.

    Raises
    ------
    RuntimeError
        If HiGHS does not prove optimality (e.g. the horizon is too short for
        any schedule: infeasible).
    """
    relaxed = build_malleable(instance, relax=True)
    lp_value, _ = _optimum(relaxed)
    model = build_malleable(instance)
    value, optimal = _optimum(model)
    completion, widths = _decode(model, instance)
    bound = job_bound(instance)
    return MalleableResult(
        objective=value,
        lower_bound=value if optimal else max(lp_value, bound),
        optimal=optimal,
        completion=completion,
        widths=widths,
        lp_bound=lp_value,
        job_bound=bound,
    )


def brute_force_malleable(instance: MalleableInstance) -> float:
    """The least ``sum w_j C_j`` over every full-slot schedule, by enumeration (tiny cases).

    Independent of the MILP: a forward simulation of every combination of
    widths per slot (0 or a width per active job, within the capacity), with
    the restart rule and interpolated completion. ``inf`` if no schedule
    ends within the horizon.
    """
    jobs = instance.jobs
    length, delay = instance.slot_length, instance.restart_time

    def search(
        t: int, progress: tuple[float, ...], last: tuple[int, ...], done: tuple[float | None, ...]
    ) -> float:
        finished = [c for c in done if c is not None]
        if len(finished) == len(jobs):
            return sum(job.weight * c for job, c in zip(jobs, finished, strict=True))
        if t >= instance.horizon:
            return math.inf
        choices = []
        for j, job in enumerate(jobs):
            if done[j] is not None or instance.release_slot(job) > t:
                choices.append((0,))
            else:
                choices.append((0, *range(1, min(len(job.rates), instance.capacity) + 1)))
        best = math.inf
        for combo in itertools.product(*choices):
            if sum(combo) > instance.capacity:
                continue
            new_progress = list(progress)
            new_done = list(done)
            for j, width in enumerate(combo):
                if width == 0:
                    continue
                lost = delay if last[j] != width else 0.0
                rate = jobs[j].rates[width - 1]
                need = (jobs[j].work - progress[j]) / rate if rate > 0 else math.inf
                if lost + need <= length:
                    new_done[j] = t * length + lost + need
                    new_progress[j] = jobs[j].work
                else:
                    new_progress[j] = progress[j] + rate * (length - lost)
            best = min(best, search(t + 1, tuple(new_progress), combo, tuple(new_done)))
        return best

    size = len(jobs)
    return search(0, (0.0,) * size, (0,) * size, (None,) * size)


def malleable_from_elastic(
    workload: ElasticWorkload,
    cluster: ElasticCluster,
    horizon: int | None = None,
    slot_length: float = 60.0,
    restart_time: float = 30.0,
    fixed_batch: Sequence[tuple[str, int]] = (("ncf", 32768),),
) -> MalleableInstance:
    """The malleable instance of an elastic workload of one-epoch jobs.

    With one epoch a job's goodput depends on its configuration only, so
    ``rate_j(k)`` is the largest goodput any policy of
    :mod:`ddlsched.algorithms.elastic` can get on ``k`` GPUs: the maximum over one node
    (if ``k`` fits on one) and several nodes (if the cluster has two), of the
    best-batch search, the job's asked batch and the fixed batches
    (``fixed_batch``: the Pollux artifact's ncf at 32768). Work = the
    target progress. Default horizon: the last release slot plus, per job,
    the slots it needs alone at its best width, restart included (a serial
    schedule); the optimum is over schedules within it.

    Raises
    ------
    ValueError
        If a job has more than one epoch.
    """
    fixed = dict(fixed_batch)
    size_g = cluster.gpus_per_node
    jobs = []
    for job in workload.jobs:
        if job.epochs != 1:
            raise ValueError(f"{job.name}: {job.epochs} epochs; only one-epoch jobs are exact")
        app = load_application(job.model, 1)
        rates = []
        for k in range(1, min(cluster.total_gpus, app.max_replicas) + 1):
            spreads = [1] if k <= size_g else []
            if cluster.num_nodes > 1 and k > 1:
                spreads.append(2)
            best = 0.0
            for nodes in spreads:
                best = max(best, app.best_batch(nodes, k, 0).goodput)
                for batch in (job.asked_batch_size, fixed.get(job.model)):
                    if batch is not None:
                        atomic, accum = app.rigid_batch(k, batch)
                        best = max(best, float(app.goodput(nodes, k, atomic, accum, 0)))
            rates.append(best)
        jobs.append(MalleableJob(job.name, job.submit_time, app.target_progress, tuple(rates)))
    if horizon is None:
        last = max(math.ceil(j.release / slot_length - 1e-12) for j in jobs)
        horizon = last + sum(
            math.ceil((restart_time + j.work / max(j.rates)) / slot_length) for j in jobs
        )
    return MalleableInstance(tuple(jobs), cluster.total_gpus, horizon, slot_length, restart_time)
