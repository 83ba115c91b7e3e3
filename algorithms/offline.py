"""Offline upper bounds: the best verified schedule known, for either model.

An upper bound on the optimal total (weighted) JCT is any feasible schedule;
here it is the best of a few clairvoyant schedules, each run in the
event-driven simulator (so servers, placement and ``alpha`` of the real
mapping are paid in full) and each checked by the independent verifier
(:func:`ddlsched.proofs_checks.verifier.verify`) before it counts:

- **list schedules** (non-preemptive, backfilling, true durations): jobs
  ranked by processing time ``K_i alpha_i^min`` or by GPU-area ``g_i K_i
  alpha_i^min`` (divided by ``w_i``: Smith's rule, W. E. Smith, *Various
  optimizers for single-stage production*, Naval Res. Logist. Q. 1956),
  placed by A-SRPT's graph mapper on any free GPUs, or (``:whole``) a job
  that fits one server only on one server, or (``:reserve``) whole and with
  server reservations that backfilling never delays
  (:mod:`ddlsched.algorithms.reservation`; on full Philly the best by far);
  ``sjf`` and ``asrpt-greedy`` with exact predictions;
- a **grid of reserving list schedules** (:func:`grid_variants`): keys
  between the two, ``g_i^beta K_i alpha_i^min / w_i`` for ``beta`` in
  :data:`GRID_EXPONENTS`, and holder counts from :data:`GRID_SHARES` of the
  servers, nearest the defaults first; on full Philly the objective is
  rugged in both (neighbouring points differ by several per cent), so each
  point is a fresh draw of the same kind of schedule;
- **local search over the order** of the best list schedule: a job moves
  to another place in the order, kept when the verified objective falls;
  the grid and the search share one count of evaluations
  (:func:`search_evaluations`, the grid first), never a clock;
- for the **preemptive model** also ``srpt-area`` (SRPT by remaining GPU-area,
  server-aware placement, the restart cost paid on every resume; after the
  pooled SRPT rule of Schrage, Oper. Res. 1968) and ``asrpt-preemptive``
  with exact predictions. A non-preemptive schedule is a preemptive one that
  never preempts, so the list schedules compete there too.

Every candidate minimises nothing exactly: the answer is a feasible
schedule, never claimed optimal (status ``FEASIBLE``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from ddlsched.algorithms.mapping import GraphMapper
from ddlsched.algorithms.policies import QueuePolicy, StaticPriorityPolicy, tie_key
from ddlsched.algorithms.prediction.registry import make_predictor
from ddlsched.algorithms.prediction.view import JobView
from ddlsched.algorithms.protocol import Policy
from ddlsched.algorithms.registry import build_policy
from ddlsched.algorithms.reservation import ReservingPolicy, default_reservations
from ddlsched.algorithms.simulator import simulate
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.alpha import AlphaMinCache
from ddlsched.core.model import Instance, Problem, Schedule
from ddlsched.core.params import DEFAULT_RESTART_COST, OnlineParams
from ddlsched.core.result import Result, SolveStatus

SEARCH_JOB_BUDGET = 1_000_000
"""Default size of the local search: evaluations times jobs stays under this
(about 12 evaluations of the 82,247-job Philly trace)."""

MAX_SEARCH_EVALUATIONS = 200
"""The most local-search evaluations by default, whatever the instance's size."""

GRID_EXPONENTS = (1.0, 0.75, 0.5, 0.25, 0.0)
"""``beta`` of the grid's keys ``g^beta K alpha^min / w``: 1 is ``list:area``, 0 ``list:time``."""

GRID_SHARES = (3 / 8, 7 / 16, 5 / 16, 1 / 2, 1 / 4)
"""Shares of the servers that may hold a reservation at once in the grid, nearest the default
(:data:`~ddlsched.algorithms.reservation.RESERVING_SHARE`) first; counts that repeat are
tried once."""

ListKey = Callable[[JobView], Any]
"""A list schedule's priority: smaller keys start first."""

Progress = Callable[[str, str], None]
"""How the search reports as it goes: ``progress(phase, detail)``, at every step (a
candidate's start, the simulator's count of jobs done, each evaluation of the local
search); ``phase`` names the candidate or ``"search"``. A caller that prints throttles."""


def _quiet(_phase: str, _detail: str) -> None:
    """No report."""


@dataclass(frozen=True)
class Candidate:
    """A candidate schedule and what it scores (the simulator's figures until
    :func:`_verified` recomputes them)."""

    name: str
    schedule: Schedule
    objective: float
    total_jct: float


def _oracle_params(restart_cost: float) -> OnlineParams:
    return OnlineParams(predictor="oracle", restart_cost=restart_cost)


def _verified(instance: Instance, candidate: Candidate | None) -> Candidate | None:
    """The candidate with the verifier's objective if the verifier accepts its schedule."""
    if candidate is None:
        return None
    report = verify(instance, candidate.schedule)
    if not report.feasible:
        return None
    return Candidate(
        candidate.name, candidate.schedule, report.total_completion_time, report.total_jct
    )


def _run(
    instance: Instance, policy: Policy, restart_cost: float, progress: Progress = _quiet
) -> Candidate | None:
    """The policy's simulated schedule as a candidate (not yet verified)."""
    name = policy.name

    def jobs_done(done: int, total: int) -> None:
        progress(name, f"{done}/{total} jobs")

    result = simulate(instance, policy, progress=jobs_done, restart_cost=restart_cost, check=False)
    if result.schedule is None:
        return None
    return Candidate(policy.name, result.schedule, result.objective, result.total_jct)


def list_policy(
    instance: Instance, name: str, key: ListKey, whole: bool = False, reservations: int = 0
) -> QueuePolicy:
    """A clairvoyant non-preemptive list schedule: ``key`` order, backfilling,
    A-SRPT's graph mapper, exact predictions (no prediction ever outrun);
    ``whole``: a job that fits one server starts only on one server, else
    waits while the jobs behind it backfill; ``reservations`` above 0: jobs are
    placed whole and the first jobs of the list that cannot start reserve
    servers, at most that many at once, which backfilling never delays
    (:class:`~ddlsched.algorithms.reservation.ReservingPolicy`)."""
    rng = np.random.default_rng(0)
    predictor = make_predictor("oracle", instance, rng, OnlineParams(predictor="oracle"))
    if reservations:
        return ReservingPolicy(
            name, instance.cluster, predictor, GraphMapper(), key, reservations=reservations
        )
    return StaticPriorityPolicy(
        name,
        instance.cluster,
        predictor,
        GraphMapper(),
        key=lambda job, _: key(job),
        backfill=True,
        whole=whole,
    )


def list_keys(instance: Instance, exponents: Sequence[float] = (0.0, 1.0)) -> dict[str, ListKey]:
    """The list schedules' keys by name: ``g^beta`` times the fastest processing time
    over the job's weight (Smith's rule), ties by release, for each ``beta`` of
    ``exponents``: ``list:time`` (0), ``list:area`` (1), else ``list:g<beta>``."""
    fastest = AlphaMinCache(instance.cluster)
    processing = {job.id: job.iterations * fastest(job)[0] for job in instance.jobs}
    gpus = {job.id: job.gpus for job in instance.jobs}

    def key(beta: float) -> ListKey:
        size = {job_id: float(count) ** beta for job_id, count in gpus.items()}
        return lambda v: (tie_key(size[v.id] * processing[v.id] / v.weight), v.release)

    names = {0.0: "list:time", 1.0: "list:area"}
    return {names.get(beta, f"list:g{beta:g}"): key(beta) for beta in exponents}


@dataclass(frozen=True)
class ListVariant:
    """A list schedule: its key, whether it places jobs whole, and how many jobs may
    hold a server reservation at once (0: none; see :func:`list_policy`)."""

    key: ListKey
    whole: bool = False
    reservations: int = 0

    def policy(self, instance: Instance, name: str, key: ListKey | None = None) -> QueuePolicy:
        """This variant's policy on ``instance``, in ``key`` order if given."""
        return list_policy(instance, name, key or self.key, self.whole, self.reservations)


def list_variants(instance: Instance) -> dict[str, ListVariant]:
    """Each list schedule by name: on any free GPUs, ``:whole``, ``:reserve``."""
    variants = {}
    reservations = default_reservations(instance.cluster)
    for name, key in list_keys(instance).items():
        variants[name] = ListVariant(key)
        variants[f"{name}:whole"] = ListVariant(key, whole=True)
        variants[f"{name}:reserve"] = ListVariant(key, whole=True, reservations=reservations)
    return variants


def grid_variants(instance: Instance) -> dict[str, ListVariant]:
    """The grid's reserving list schedules by name (``<key>:reserve<holders>``), in the
    order they are tried: by share (:data:`GRID_SHARES`), then exponent
    (:data:`GRID_EXPONENTS`), without the defaults of :func:`list_variants`."""
    keys = list_keys(instance, GRID_EXPONENTS)
    default = default_reservations(instance.cluster)
    counts = dict.fromkeys(max(1, int(instance.cluster.num_servers * s)) for s in GRID_SHARES)
    grid = {}
    for count in counts:
        for name, key in keys.items():
            if count == default and name in ("list:time", "list:area"):
                continue
            grid[f"{name}:reserve{count}"] = ListVariant(key, whole=True, reservations=count)
    return grid


def _run_all(
    instance: Instance,
    policies: Sequence[tuple[str, Callable[[], Policy]]],
    restart_cost: float,
    found: list[Candidate],
    progress: Progress,
) -> None:
    """Simulate each policy, built when its turn comes, appending its candidate to
    ``found`` as it finishes (so an interrupted caller keeps those that finished)."""
    for count, (name, build) in enumerate(policies, 1):
        progress(name, f"candidate {count}/{len(policies)}: building the policy")
        policy = build()
        progress(name, f"candidate {count}/{len(policies)}: simulating")
        ran = _run(instance, policy, restart_cost, progress)
        progress(name, f"candidate {count}/{len(policies)}: simulated")
        if ran is not None:
            found.append(ran)


def _list_policies(
    instance: Instance, restart_cost: float
) -> list[tuple[str, Callable[[], Policy]]]:
    """The fixed list schedules (:func:`list_variants`), ``sjf`` and ``asrpt-greedy``."""
    params = _oracle_params(restart_cost)
    built: list[tuple[str, Callable[[], Policy]]] = [
        (name, partial(variant.policy, instance, name))
        for name, variant in list_variants(instance).items()
    ]
    for name in ("sjf", "asrpt-greedy"):
        built.append((name, partial(build_policy, name, instance, params)))
    return built


def _preemptive_policies(
    instance: Instance, restart_cost: float
) -> list[tuple[str, Callable[[], Policy]]]:
    """``srpt-area`` and ``asrpt-preemptive`` with exact predictions."""
    params = _oracle_params(restart_cost)
    return [
        (name, partial(build_policy, name, instance, params))
        for name in ("srpt-area", "asrpt-preemptive")
    ]


def order_of(instance: Instance, key: ListKey) -> list[str]:
    """Job ids in ``key`` order."""
    views = [JobView.of(job) for job in instance.jobs]
    return [view.id for view in sorted(views, key=key)]


def rank_key(rank: dict[str, int]) -> ListKey:
    """The list key of an order given as each job's position."""
    return lambda view: rank[view.id]


class SearchInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`local_search`, carrying the best verified schedule found so far
    (:attr:`best`) and the evaluations done (:attr:`done`)."""

    def __init__(self, best: Candidate, done: int) -> None:
        super().__init__()
        self.best = best
        self.done = done


def _waits(instance: Instance, schedule: Schedule) -> dict[str, tuple[float, float]]:
    """Each job's wait ``[r_i, S_i]`` in ``schedule``, by id."""
    releases = {job.id: job.release for job in instance.jobs}
    return {entry.id: (releases[entry.id], entry.start) for entry in schedule.jobs}


def unchanged_by_move(
    order: Sequence[str], origin: int, target: int, waits: dict[str, tuple[float, float]]
) -> bool:
    """Whether moving ``order[origin]`` to position ``target`` leaves the list schedule of
    ``order`` as it is, given each job's wait ``[r_i, S_i]`` in that schedule.

    The move changes the order of the moved job against the jobs it passes only. A list
    schedule compares two jobs only while both wait (released, not started): at every
    event it starts, reserves and backfills by the order of the jobs then waiting. If the
    moved job's wait meets no passed job's wait (closed intervals, so a release at
    another's start counts as meeting), every decision of the new order is the old one's,
    event by event, and so is the schedule: its objective is known without a simulation.
    """
    low, high = (origin, target) if origin < target else (target, origin)
    release, start = waits[order[origin]]
    for position in range(low, high + 1):
        if position == origin:
            continue
        other_release, other_start = waits[order[position]]
        if other_release <= start and release <= other_start:
            return False
    return True


def _distinct_keys(instance: Instance, key: ListKey) -> bool:
    """Whether ``key`` orders the jobs without ties (then its list schedule is the one of
    :func:`order_of`'s order, whatever the policy does with ties)."""
    keys = [key(JobView.of(job)) for job in instance.jobs]
    return len(set(keys)) == len(keys)


def local_search(
    instance: Instance,
    start: Candidate,
    order: Sequence[str],
    variant: ListVariant,
    evaluations: int,
    rng: np.random.Generator,
    restart_cost: float,
    *,
    progress: Progress = _quiet,
    start_is_order: bool = False,
) -> Candidate:
    """Improve a verified list schedule by moving one job at a time in its order.

    A move takes a job and puts it at a random place within a window of
    positions around its own (the window grows with the instance, at most 64);
    the list schedule of the new order (``variant``'s, with the new order for
    its key) is simulated, and kept when its total weighted completion time falls and the
    verifier accepts it. Stops after ``evaluations`` moves. A move that provably leaves
    the schedule as it is (:func:`unchanged_by_move`: its objective is the current one,
    not below it) is counted without a simulation; this needs the schedule of the current
    order, known once a move is kept, and from the start when ``start_is_order``
    (``start`` is the list schedule of ``order`` itself).

    Raises
    ------
    SearchInterrupted
        On Ctrl-C, with the best verified schedule so far.
    """
    best, current = start, list(order)
    waits = _waits(instance, start.schedule) if start_is_order else None
    window = max(2, min(64, len(current) // 4))
    kept = done = 0

    def simulating(_phase: str, detail: str) -> None:
        progress("search", f"{done}/{evaluations} evaluations, {kept} kept; simulating {detail}")

    for done in range(evaluations):
        try:
            progress("search", f"{done}/{evaluations} evaluations, {kept} kept")
            if len(current) < 2:
                break
            origin = int(rng.integers(len(current)))
            offset = int(rng.integers(1, window + 1)) * (1 if rng.random() < 0.5 else -1)
            target = min(max(origin + offset, 0), len(current) - 1)
            if target == origin:
                continue
            if waits is not None and unchanged_by_move(current, origin, target, waits):
                continue
            trial = current.copy()
            trial.insert(target, trial.pop(origin))
            rank = {job_id: position for position, job_id in enumerate(trial)}
            policy = variant.policy(instance, f"search:{start.name}", rank_key(rank))
            found = _run(instance, policy, restart_cost, simulating)
            if found is not None and found.objective < best.objective:
                found = _verified(instance, found)
                if found is not None and found.objective < best.objective:
                    best, current = found, trial
                    waits = _waits(instance, found.schedule)
                    kept += 1
        except KeyboardInterrupt:
            raise SearchInterrupted(best, done) from None
    return best


def _best_verified(instance: Instance, candidates: list[Candidate]) -> Candidate | None:
    """The candidate of least simulated objective that the verifier accepts, with the
    verifier's figures (each is verified only once the better ones have failed)."""
    for candidate in sorted(candidates, key=lambda c: c.objective):
        verified = _verified(instance, candidate)
        if verified is not None:
            return verified
    return None


def _better(first: Candidate | None, second: Candidate | None) -> Candidate | None:
    """The one of smaller objective (``first`` on a tie), either if the other is ``None``."""
    if first is None or (second is not None and second.objective < first.objective):
        return second
    return first


def search_evaluations(instance: Instance) -> int:
    """The default number of local-search evaluations (:data:`SEARCH_JOB_BUDGET`)."""
    return min(MAX_SEARCH_EVALUATIONS, SEARCH_JOB_BUDGET // max(1, instance.num_jobs))


MAX_EVALUATIONS = 1_000_000
"""The most local-search evaluations :func:`best_upper_bound` accepts."""


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_search(evaluations: object, seed: object, restart_cost: object) -> None:
    """Refuse arguments of :func:`best_upper_bound` that are not what it documents."""
    if evaluations is not None and not (
        _is_int(evaluations) and 0 <= int(evaluations) <= MAX_EVALUATIONS  # type: ignore[call-overload]
    ):
        raise ValueError(
            f"evaluations: must be an integer in [0, {MAX_EVALUATIONS}], got {evaluations!r}"
        )
    if not (_is_int(seed) and int(seed) >= 0):  # type: ignore[call-overload]
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    if restart_cost is not None and not (
        isinstance(restart_cost, (int, float, np.floating))
        and not isinstance(restart_cost, bool)
        and math.isfinite(restart_cost)
        and restart_cost >= 0
    ):
        raise ValueError(f"restart_cost: must be a finite number >= 0, got {restart_cost!r}")


@dataclass
class _Upper:
    """What the upper side has found so far (kept as it goes, so that Ctrl-C keeps it)."""

    instance: Instance
    cost: float
    progress: Progress
    candidates: list[Candidate]
    best: Candidate | None = None
    stopped: str = ""

    def problem_a(self, evaluations: int | None, seed: int) -> None:
        """Problem A's candidates, grid and local search (module docstring); :attr:`best`
        is the best verified of them."""
        instance, cost = self.instance, self.cost
        found: list[Candidate] = []
        _run_all(instance, _list_policies(instance, cost), cost, found, self.progress)
        rounds = search_evaluations(instance) if evaluations is None else evaluations
        variants = list_variants(instance)
        grid = list(grid_variants(instance).items())[:rounds]
        rounds -= len(grid)
        variants.update(grid)
        policies: list[tuple[str, Callable[[], Policy]]] = [
            (name, partial(variant.policy, instance, name)) for name, variant in grid
        ]
        try:
            _run_all(instance, policies, cost, found, self.progress)
        finally:
            self.candidates += found
            self.progress("verifier", f"checking the best of {len(found)} candidates")
            self.best = _best_verified(instance, found)
        start = self.best if self.best is not None and self.best.name in variants else None
        if rounds and start is None:
            start = _best_verified(instance, [c for c in found if c.name in variants])
        if not rounds or start is None:
            return
        variant = variants[start.name]
        rng = np.random.default_rng(seed)
        order = order_of(instance, variant.key)
        exact = _distinct_keys(instance, variant.key)
        try:
            searched = local_search(
                instance,
                start,
                order,
                variant,
                rounds,
                rng,
                cost,
                progress=self.progress,
                start_is_order=exact,
            )
        except SearchInterrupted as stop:
            self.best = _better(self.best, stop.best)
            self.candidates.append(stop.best)
            self.stopped = f"local search after {stop.done}/{rounds} evaluations"
            raise
        self.candidates.append(searched)
        self.best = _better(self.best, searched)

    def adopt(self, base: Result) -> None:
        """A verified problem-A result of the same instance and settings as problem A's
        part (:attr:`best`), checked again by the verifier."""
        if base.schedule is None:
            raise ValueError(f"base: {base.method!r} has no schedule")
        self.progress("verifier", f"checking problem A's schedule ({base.method})")
        if any(entry.pieces is not None and len(entry.pieces) > 1 for entry in base.schedule.jobs):
            raise ValueError(f"base: {base.method!r} preempts a job, not a problem-A schedule")
        checked = _verified(
            self.instance, Candidate(base.method, base.schedule, base.objective, base.total_jct)
        )
        if checked is None:
            raise ValueError(f"base: the verifier rejects {base.method!r}'s schedule")
        self.candidates.append(checked)
        self.best = checked

    def result(self, preemptive: bool, began: float, stopped: str = "") -> Result:
        """The best verified schedule as a result (:attr:`best` is set)."""
        assert self.best is not None
        best = self.best
        notes: tuple[str, ...] = (
            f"preemptive model, restart cost {self.cost:g} s" if preemptive else "problem A",
        )
        if stopped:
            notes += (f"interrupted ({stopped}): the best verified schedule found so far",)
        return Result(
            method=best.name,
            problem=Problem.A,
            status=SolveStatus.FEASIBLE,
            objective=best.objective,
            total_jct=best.total_jct,
            best_bound=math.nan,
            runtime_s=time.perf_counter() - began,
            schedule=best.schedule,
            metrics={f"total_jct:{c.name}": c.total_jct for c in self.candidates},
            notes=notes,
        )

    def preemptive(self) -> None:
        """The preemptive candidates; :attr:`best` becomes the best of them and problem A's."""
        found: list[Candidate] = []
        policies = _preemptive_policies(self.instance, self.cost)
        try:
            _run_all(self.instance, policies, self.cost, found, self.progress)
        finally:
            self.candidates += found
            self.progress("verifier", f"checking the best of {len(found)} candidates")
            self.best = _better(self.best, _best_verified(self.instance, found))


def best_upper_bound(
    instance: Instance,
    *,
    preemptive: bool,
    restart_cost: float | None = None,
    evaluations: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    base: Result | None = None,
) -> Result:
    """The best verified schedule of the candidates (module docstring).

    A schedule of problem A is one of the preemptive model, so the preemptive model's
    answer is the better of problem A's (its candidates, grid and search, which do not
    depend on the model) and the preemptive candidates'. Given ``base``, problem A's
    answer under the same arguments, only the preemptive candidates run.

    Parameters
    ----------
    instance
        The instance.
    preemptive
        ``True``: the preemptive model (a job may be stopped and resumed,
        paying ``restart_cost`` on each resume); ``False``: problem A.
    restart_cost
        Seconds of restoring per resume (``None``: the simulator's default,
        :data:`~ddlsched.core.params.DEFAULT_RESTART_COST`).
    evaluations
        Simulations beyond the fixed candidates: the grid's
        (:func:`grid_variants`, first, up to its size), then the local search's
        (``None``: :func:`search_evaluations`; 0: neither).
    seed
        Seeds the local search's moves.
    progress
        Told of every step (:data:`Progress`).
    base
        Problem A's :func:`best_upper_bound` under the same ``restart_cost``,
        ``evaluations`` and ``seed`` (its schedule is verified again).

    Returns
    -------
    Result
        Status ``FEASIBLE``; ``method`` names the winning schedule;
        ``objective`` and ``total_jct`` are the verifier's recomputation;
        ``metrics`` holds each candidate's total JCT as simulated
        (``total_jct:<name>``; only the winner is verified, after every
        better-scoring candidate failed the verifier).

    Raises
    ------
    ValueError
        On ``evaluations`` not an integer in ``[0,`` :data:`MAX_EVALUATIONS` ``]``,
        ``seed`` not an integer >= 0, ``restart_cost`` not a finite number >= 0, or a
        ``base`` without a problem-A schedule the verifier accepts.
    UpperInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``), with the best verified schedule found so far.
    """
    began = time.perf_counter()
    check_search(evaluations, seed, restart_cost)
    cost = DEFAULT_RESTART_COST if restart_cost is None else float(restart_cost)
    upper = _Upper(instance, cost, progress or _quiet, [])
    try:
        if base is None:
            upper.problem_a(evaluations, seed)
        else:
            upper.adopt(base)
        if preemptive:
            upper.preemptive()
    except KeyboardInterrupt:
        stopped = upper.stopped or "before every candidate ran"
        kept = None if upper.best is None else upper.result(preemptive, began, stopped)
        raise UpperInterrupted(kept) from None
    if upper.best is None:
        raise RuntimeError("no candidate schedule passed the verifier")
    return upper.result(preemptive, began)


class UpperInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`best_upper_bound`: :attr:`result` is the best verified schedule
    found so far (``None`` if none was), its notes saying where the search stopped."""

    def __init__(self, result: Result | None) -> None:
        super().__init__()
        self.result = result


@dataclass(frozen=True)
class FlowInterval:
    """Where a policy's total JCT sits between proven bounds of its model.

    Attributes
    ----------
    model
        ``"preemptive"`` or ``"A"`` (non-preemptive).
    lower
        A proven lower bound on the model's optimal weighted flow time
        (``nan`` when none is known).
    upper
        The least weighted flow time of a verified schedule of the model: the
        policy's own run, or a better offline one.
    upper_method
        Which schedule gives :attr:`upper`.
    policy
        The policy's weighted flow time (total JCT).
    """

    model: str
    lower: float
    upper: float
    upper_method: str
    policy: float

    def to_dict(self) -> dict[str, object]:
        """The fields ``simulate --json`` carries (an unknown number is ``null``)."""

        def number(value: float) -> float | None:
            return value if math.isfinite(value) else None

        return {
            "flow_model": self.model,
            "flow_lower_bound": number(self.lower),
            "flow_upper_bound": number(self.upper),
            "flow_upper_bound_method": self.upper_method,
            "flow_upper_over_lower": number(self.upper / self.lower) if self.lower > 0 else None,
            "flow_policy_over_upper": number(self.policy / self.upper) if self.upper > 0 else None,
        }


def flow_interval(
    instance: Instance,
    result: Result,
    *,
    preemptive: bool,
    lower: float | None = None,
    offline: Result | None = None,
) -> FlowInterval:
    """The interval of ``result``'s model and the policy's place in it.

    Parameters
    ----------
    instance
        The instance the policy ran on.
    result
        The policy's run (with its schedule).
    preemptive
        The policy's model: ``True`` the preemptive one, ``False`` problem A.
    lower
        A further lower bound on the model's optimal flow time (the larger of it
        and ``result.flow_lower_bound`` is kept; the fast bounds behind the latter
        hold in both models).
    offline
        A verified schedule of the model (:func:`best_upper_bound`'s answer): the
        upper end is the better of it and the policy's own schedule, which counts
        once the verifier accepts it (in problem A only without preempted jobs).
        Its total is recomputed from its schedule by the verifier, never read from it.

    Raises
    ------
    ValueError
        When ``result`` has no schedule, or ``offline`` has no schedule, one the
        verifier rejects, or (``preemptive=False``) one that preempts a job.
    """
    if result.schedule is None:
        raise ValueError(f"result: {result.method!r} has no schedule to bound")
    upper, method = math.inf, "none"
    pieces = any(entry.pieces is not None for entry in result.schedule.jobs)
    own = _verified(
        instance, Candidate(result.method, result.schedule, result.objective, result.total_jct)
    )
    if own is not None and (preemptive or not pieces):
        upper, method = own.total_jct, result.method
    if offline is not None:
        checked = _offline_total(instance, offline, preemptive)
        if checked < upper:
            upper, method = checked, offline.method
    bounds = [b for b in (result.flow_lower_bound, lower) if b is not None and math.isfinite(b)]
    return FlowInterval(
        "preemptive" if preemptive else "A",
        max(bounds, default=math.nan),
        upper,
        method,
        result.total_jct,
    )


def _offline_total(instance: Instance, offline: Result, preemptive: bool) -> float:
    """The verifier's total JCT of ``offline``'s schedule, refused unless it is one of
    the model's verified schedules."""
    schedule = offline.schedule
    if schedule is None:
        raise ValueError(f"offline: {offline.method!r} has no schedule to count")
    if not preemptive and any(
        entry.pieces is not None and len(entry.pieces) > 1 for entry in schedule.jobs
    ):
        raise ValueError(f"offline: {offline.method!r} preempts a job, not a problem-A schedule")
    checked = _verified(
        instance, Candidate(offline.method, schedule, offline.objective, offline.total_jct)
    )
    if checked is None:
        raise ValueError(f"offline: the verifier rejects {offline.method!r}'s schedule")
    return checked.total_jct
