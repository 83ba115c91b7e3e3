"""The optimum pinned from both sides: a proven lower bound and a verified schedule.

For either model, the non-preemptive problem A or the preemptive one (a job may be
stopped and resumed, paying the restart cost), :func:`flow_sandwich` gives the best
lower bound valid for *that* model and the best verified schedule known, so that the
optimal total (weighted) JCT lies between them and any schedule's distance to it is
at most ``UB / LB``:

- lower side, problem A: the fast bounds of
  :mod:`ddlsched.formulations.lower_bounds` and the start-time Lagrangian bound of
  :mod:`ddlsched.formulations.start_lagrangian`, the largest flow value kept (each is
  valid on its own, so the largest whole sum is);
- lower side, preemptive model: only the bounds proved for it
  (:data:`~ddlsched.formulations.lower_bounds.PREEMPTIVE_BOUNDS`);
- upper side: :func:`ddlsched.algorithms.offline.best_upper_bound` for the same
  model (every candidate checked by the independent verifier).

Where the gap sits. :func:`job_table` spreads a schedule's total JCT and a lower
bound over the jobs: each job's JCT, its wait, its processing time over its floor
``p_i`` (the slowdown from placement) and its share of a lower bound
(:func:`per_job_flow_terms`); :func:`by_period` and :func:`by_gpus` sum the rows
by release period and by GPU count. :func:`decompose_jct` splits a policy's total
JCT into the bound, its order (the same policy on the jobs pooled on one server,
:func:`pooled_instance`), the longer runs placement gives and the longer waits
servers give.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ddlsched.core.model import Cluster, Instance, Problem, Schedule
from ddlsched.core.result import LowerBound, Result, SolveStatus, best_lower_bound

if TYPE_CHECKING:
    from ddlsched.core.params import OnlineParams
    from ddlsched.formulations.lower_bounds import BoundInputs


@dataclass(frozen=True)
class Sandwich:
    """The optimal total JCT of one model, pinned between two proven values.

    Attributes
    ----------
    preemptive
        Which model: ``True`` the preemptive one, ``False`` problem A.
    lower
        The best lower bound valid for the model; its ``flow_value`` bounds the
        optimal total (weighted) JCT ``sum w (C - r)`` from below.
    upper
        The best verified schedule (its ``total_jct`` bounds the optimum from above).
    runtime_s
        Seconds for the lower side (the upper side's are ``upper.runtime_s``).
    interrupted
        Empty for a finished sandwich; else what Ctrl-C cut short (both ends are proven
        still, only weaker: the bounds and the best verified schedule found before it).
    """

    preemptive: bool
    lower: LowerBound
    upper: Result
    runtime_s: float
    interrupted: str = ""

    @property
    def upper_name(self) -> str:
        """Which schedule gives the upper bound."""
        return self.upper.method

    @property
    def ratio(self) -> float:
        """``UB / LB`` on the total JCT: how far from the optimum the best schedule may be
        (``nan`` without a positive bound)."""
        bound = self.lower.flow_value
        if not (math.isfinite(bound) and bound > 0):
            return math.nan
        return self.upper.total_jct / bound

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``interrupted`` only in an interrupted sandwich)."""

        return {
            "model": "preemptive" if self.preemptive else "non-preemptive",
            "flow_lower_bound": self.lower.flow_value,
            "lower_bound": self.lower.to_dict(),
            "flow_upper_bound": self.upper.total_jct,
            "upper_bound_schedule": self.upper_name,
            "ratio": self.ratio if math.isfinite(self.ratio) else None,
            "lower_runtime_s": self.runtime_s,
            "upper_runtime_s": self.upper.runtime_s,
            **({"interrupted": self.interrupted} if self.interrupted else {}),
        }


def model_lower_bounds(
    instance: Instance,
    *,
    preemptive: bool,
    upper_bound: float | None = None,
    settings: Any = None,
) -> list[LowerBound]:
    """Every lower bound valid for the model (module docstring), each with its flow value.

    Parameters
    ----------
    instance
        The instance.
    preemptive
        ``True``: the bounds proved for the preemptive model only.
    upper_bound
        ``sum w C`` of a feasible schedule of the model: steers the start-time
        Lagrangian's steps (never its validity).
    settings
        :class:`~ddlsched.formulations.start_lagrangian.StartLagrangianSettings` (``None``:
        its defaults).
    """
    from ddlsched.formulations.lower_bounds import PREEMPTIVE_BOUNDS, BoundInputs, lower_bounds
    from ddlsched.formulations.start_lagrangian import start_lagrangian_bound

    inputs = BoundInputs.of(instance)
    if preemptive:
        return lower_bounds(instance, PREEMPTIVE_BOUNDS, inputs=inputs)
    found = lower_bounds(instance, inputs=inputs)
    return [*found, start_lagrangian_bound(inputs, settings, upper_bound)]


def best_flow_bound(bounds: list[LowerBound]) -> LowerBound:
    """The valid bound of largest flow value (:func:`ddlsched.core.result.best_lower_bound`
    by flow: each is valid on its own, so the largest is).

    Raises
    ------
    ValueError
        If no bound is valid.
    """
    best = best_lower_bound(bounds, by="flow")
    if best is None:
        raise ValueError("bounds: none is valid")
    return best


def flow_sandwich(
    instance: Instance,
    *,
    preemptive: bool,
    restart_cost: float | None = None,
    evaluations: int | None = None,
    settings: Any = None,
    seed: int = 0,
) -> Sandwich:
    """The best lower bound and the best verified schedule of one model (module docstring).

    Parameters
    ----------
    instance
        The instance.
    preemptive
        ``True``: the preemptive model (restart cost ``restart_cost`` per resume,
        ``None``: the simulator's default); ``False``: problem A.
    evaluations
        Local-search simulations of the upper side (``None``: its default).
    settings
        The start-time Lagrangian's settings (problem A only; ``None``: defaults).
    seed
        Seeds the upper side's local search.

    Returns
    -------
    Sandwich
        ``lower.flow_value <= optimal total JCT <= upper.total_jct``.

    Raises
    ------
    ValueError
        On ``preemptive`` not a bool, ``settings`` of another type, or an argument
        :func:`~ddlsched.algorithms.offline.best_upper_bound` refuses.
    """
    from ddlsched.algorithms.offline import best_upper_bound
    from ddlsched.formulations.start_lagrangian import StartLagrangianSettings

    if not isinstance(preemptive, bool):
        raise ValueError(f"preemptive: must be True or False, got {preemptive!r}")
    if settings is not None and not isinstance(settings, StartLagrangianSettings):
        raise ValueError(f"settings: must be a StartLagrangianSettings or None, got {settings!r}")
    upper = best_upper_bound(
        instance,
        preemptive=preemptive,
        restart_cost=restart_cost,
        evaluations=evaluations,
        seed=seed,
    )
    began = time.perf_counter()
    bounds = model_lower_bounds(
        instance, preemptive=preemptive, upper_bound=upper.objective, settings=settings
    )
    return Sandwich(preemptive, best_flow_bound(bounds), upper, time.perf_counter() - began)


EFFORTS: tuple[str, ...] = ("fast", "full")
"""Efforts of :func:`study_sandwich`: ``"fast"`` the fast bounds and the fixed candidate
schedules; ``"full"`` everything :func:`flow_sandwich` does."""

PROGRESS_EVERY_S = 2.0
"""Seconds between two progress lines of one phase of :func:`study_sandwich` (a new phase
is always reported): the steps come far more often, a reader needs a line every few
seconds."""


class SandwichInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`study_sandwich`, with what finished: the best of the bounds
    done (:attr:`lower`, ``None`` if none was) and the best verified schedule found
    (:attr:`upper`, ``None`` if none was); both proven, only weaker than a finished
    sandwich's. :attr:`cut` says what Ctrl-C cut short; :attr:`finished` holds the
    sandwiches :func:`study_sandwiches` finished before."""

    def __init__(
        self, preemptive: bool, lower: LowerBound | None, upper: Result | None, cut: str
    ) -> None:
        super().__init__()
        self.preemptive, self.lower, self.upper, self.cut = preemptive, lower, upper, cut
        self.finished: list[Sandwich] = []

    @property
    def sandwich(self) -> Sandwich | None:
        """Both ends as a sandwich (:attr:`Sandwich.interrupted` set), when both are known."""
        if self.lower is None or self.upper is None:
            return None
        return Sandwich(self.preemptive, self.lower, self.upper, 0.0, self.cut)


class _Reporter:
    """Progress lines of one sandwich: ``<model> <side>: <phase>: <detail>, <s> s``, the
    first of each phase at once, then at most one every :data:`PROGRESS_EVERY_S` seconds."""

    def __init__(self, progress: Callable[[str], None] | None, model: str) -> None:
        self.progress, self.model = progress, model
        self.began = self.last = time.monotonic()
        self.phase = ""

    def __call__(self, phase: str, detail: str) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if phase == self.phase and now - self.last < PROGRESS_EVERY_S:
            return
        self.phase, self.last = phase, now
        self.progress(f"{self.model} {phase}: {detail}, {now - self.began:.0f} s")

    def side(self, side: str) -> Callable[[str, str], None]:
        """The reporter of one side (``"lower"`` or ``"upper"``)."""
        return lambda phase, detail: self(f"{side}: {phase}", detail)


def _cache_key(
    digest: str, preemptive: bool, effort: str, seed: int, restart_cost: float | None
) -> str:
    from ddlsched.cache import entry_key

    model = "preemptive" if preemptive else "A"
    settings = {"model": model, "effort": effort, "seed": seed, "restart_cost": restart_cost}
    return entry_key("sandwich", digest, settings)


def study_sandwich(
    instance: Instance,
    *,
    preemptive: bool,
    effort: str = "full",
    seed: int = 0,
    restart_cost: float | None = None,
    progress: Callable[[str], None] | None = None,
    cache: bool = True,
) -> Sandwich:
    """The sandwich of one model for a trace study: :func:`flow_sandwich`'s at ``"full"``
    effort, a quick one at ``"fast"``; with progress lines, Ctrl-C keeping what finished,
    and a cache on disk.

    The sides run in this order: the fast bounds, the upper side, then (problem A, full
    effort) the start-time Lagrangian, steered by the upper side's objective as in
    :func:`flow_sandwich`. The preemptive model's upper side is the better of problem A's
    and the preemptive candidates (:func:`~ddlsched.algorithms.offline.best_upper_bound`):
    with the cache on, problem A's upper side is read from problem A's sandwich of the
    same settings when one is stored, so after problem A's only the preemptive candidates
    run (:func:`study_sandwiches` shares it without the cache).

    The cache (:mod:`ddlsched.cache`) is keyed by the instance's content, the model,
    ``effort``, ``seed``, ``restart_cost`` and the project's version. A stored upper
    schedule is checked again by the verifier when read (and its bound against it); an
    entry that fails is ignored with a :class:`~ddlsched.cache.CacheWarning` and
    recomputed. An interrupted sandwich is never stored.

    Parameters
    ----------
    instance
        The instance.
    preemptive
        The model: ``True`` the preemptive one, ``False`` problem A.
    effort
        ``"full"``: the bounds and upper value of :func:`flow_sandwich` (default
        settings); ``"fast"``: the fast bounds of
        :mod:`ddlsched.formulations.lower_bounds` and the fixed candidate schedules of
        :func:`~ddlsched.algorithms.offline.best_upper_bound` without its grid and local
        search (a wider interval, proven on both sides still).
    seed
        Seeds the upper side's local search.
    restart_cost
        Seconds per resume in the preemptive model (``None``: the simulator's default).
    progress
        Called with a line of text as the work goes: the side, the bound or candidate
        (or the local search), what of it is done, seconds so far; every few seconds
        (:data:`PROGRESS_EVERY_S`) while a phase lasts.
    cache
        Read and write the cache (``False``: neither).

    Raises
    ------
    ValueError
        On an unknown ``effort``, or an argument :func:`flow_sandwich` refuses.
    SandwichInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``), with what finished.
    """
    return study_sandwiches(
        instance,
        models=(preemptive,),
        effort=effort,
        seed=seed,
        restart_cost=restart_cost,
        progress=progress,
        cache=cache,
    )[0]


def study_sandwiches(
    instance: Instance,
    *,
    models: tuple[bool, ...] = (False, True),
    effort: str = "full",
    seed: int = 0,
    restart_cost: float | None = None,
    progress: Callable[[str], None] | None = None,
    cache: bool = True,
    fast_bounds: Sequence[LowerBound] = (),
) -> list[Sandwich]:
    """:func:`study_sandwich` of each model of ``models`` (``preemptive`` flags), in that
    order; the fast bounds, computed once, serve every model they hold for, and problem
    A's upper side, when computed, serves the preemptive model's too.

    ``fast_bounds``: bounds of :mod:`ddlsched.formulations.lower_bounds` already computed
    on this very instance (``lower_bounds(instance)``'s), used instead of computing them
    again (by name; any other is ignored).

    Raises
    ------
    ValueError
        As :func:`study_sandwich`.
    SandwichInterrupted
        On Ctrl-C, with what finished of the model it was computing (the models before it
        are stored in the cache, when it is on).
    """
    from ddlsched.algorithms.offline import check_search

    if effort not in EFFORTS:
        raise ValueError(f"effort: must be one of {', '.join(EFFORTS)}, got {effort!r}")
    for preemptive in models:
        if not isinstance(preemptive, bool):
            raise ValueError(f"preemptive: must be True or False, got {preemptive!r}")
    check_search(None, seed, restart_cost)
    digest = None
    if cache:
        from ddlsched.cache import instance_digest

        digest = instance_digest(instance)
    from ddlsched.formulations.lower_bounds import BOUNDS

    shared: Result | None = None
    found: list[Sandwich] = []
    known = _Known({b.name: b for b in fast_bounds if b.name in BOUNDS.names()})
    for preemptive in models:
        job = _Study(instance, preemptive, effort, seed, restart_cost, digest, known)
        report = _Reporter(progress, job.model)
        if preemptive and shared is None and digest is not None:
            report("cache", "reading problem A's upper side")
            shared = job.stored_upper_of_a()
        try:
            sandwich = job.run(report, shared)
        except SandwichInterrupted as stop:
            stop.finished = found
            raise
        if not preemptive:
            shared = sandwich.upper
        found.append(sandwich)
    return found


@dataclass
class _Known:
    """What the models' sandwiches share: the fast bounds by name, the bounds' inputs."""

    bounds: dict[str, LowerBound]
    inputs: BoundInputs | None = None

    def inputs_of(self, instance: Instance) -> BoundInputs:
        """The bounds' inputs of ``instance``, computed once."""
        from ddlsched.formulations.lower_bounds import BoundInputs

        if self.inputs is None:
            self.inputs = BoundInputs.of(instance)
        return self.inputs


@dataclass
class _Study:
    """One model's sandwich of :func:`study_sandwiches` (``digest``: the instance's, or
    ``None`` without the cache)."""

    instance: Instance
    preemptive: bool
    effort: str
    seed: int
    restart_cost: float | None
    digest: str | None
    known: _Known

    @property
    def model(self) -> str:
        """The model's name in progress lines."""
        return "preemptive" if self.preemptive else "problem A"

    def _key(self, preemptive: bool) -> str | None:
        if self.digest is None:
            return None
        return _cache_key(self.digest, preemptive, self.effort, self.seed, self.restart_cost)

    def stored_upper_of_a(self) -> Result | None:
        """Problem A's upper side from the cache, if stored and checked."""
        stored = _load(self.instance, self._key(False), preemptive=False)
        return None if stored is None else stored.upper

    def run(self, report: _Reporter, base: Result | None) -> Sandwich:
        """The sandwich, from the cache or computed (and then stored)."""
        key = self._key(self.preemptive)
        if key is not None:
            report("cache", "reading and verifying")
        stored = _load(self.instance, key, self.preemptive)
        if stored is not None:
            return stored
        sandwich = self._compute(report, base)
        if key is not None:
            from ddlsched.cache import store

            report("cache", "writing")
            store("sandwich", key, _to_body(sandwich))
        return sandwich

    def _compute(self, report: _Reporter, base: Result | None) -> Sandwich:
        from ddlsched.algorithms.offline import UpperInterrupted, best_upper_bound
        from ddlsched.formulations.lower_bounds import BOUNDS, PREEMPTIVE_BOUNDS
        from ddlsched.formulations.lower_bounds import lower_bounds as fast_bounds

        began = time.perf_counter()
        bounds: list[LowerBound] = []
        upper: Result | None = None
        lower_s, phase = 0.0, "the fast bounds"
        try:
            names = PREEMPTIVE_BOUNDS if self.preemptive else BOUNDS.names()
            lower = report.side("lower")
            for count, name in enumerate(names, 1):
                lower(name, f"bound {count}/{len(names)}")
                if name not in self.known.bounds:
                    inputs = self.known.inputs_of(self.instance)
                    (self.known.bounds[name],) = fast_bounds(self.instance, [name], inputs=inputs)
                bounds.append(self.known.bounds[name])
            lower_s, phase = time.perf_counter() - began, "the upper side"
            try:
                upper = best_upper_bound(
                    self.instance,
                    preemptive=self.preemptive,
                    restart_cost=self.restart_cost,
                    evaluations=0 if self.effort == "fast" else None,
                    seed=self.seed,
                    progress=report.side("upper"),
                    base=base,
                )
            except UpperInterrupted as stop:
                upper = stop.result
                raise
            if not self.preemptive and self.effort == "full":
                began, phase = time.perf_counter(), "the start-time Lagrangian bound"
                inputs = self.known.inputs_of(self.instance)
                bounds.append(self._lagrangian(inputs, upper, report.side("lower")))
                lower_s += time.perf_counter() - began
        except KeyboardInterrupt:
            lowest = best_flow_bound(bounds) if bounds else None
            cut = f"{phase} cut short by Ctrl-C"
            raise SandwichInterrupted(self.preemptive, lowest, upper, cut) from None
        return Sandwich(self.preemptive, best_flow_bound(bounds), upper, lower_s)

    def _lagrangian(
        self, inputs: BoundInputs, upper: Result, lower: Callable[[str, str], None]
    ) -> LowerBound:
        from ddlsched.formulations.start_lagrangian import NAME, start_lagrangian_bound

        def rounds(done: int, total: int) -> None:
            lower(NAME, f"round {done}/{total}")

        return start_lagrangian_bound(inputs, None, upper.objective, rounds)


def _to_body(sandwich: Sandwich) -> dict[str, Any]:
    """A finished sandwich as the cache stores it (JSON values)."""
    upper = sandwich.upper
    assert upper.schedule is not None  # a verified schedule gives every upper side
    return {
        "lower": sandwich.lower.to_dict(),
        "lower_runtime_s": sandwich.runtime_s,
        "upper": {
            "method": upper.method,
            "objective": upper.objective,
            "total_jct": upper.total_jct,
            "runtime_s": upper.runtime_s,
            "metrics": upper.metrics,
            "notes": list(upper.notes),
            "schedule": upper.schedule.to_dict(),
        },
    }


def _from_body(instance: Instance, body: dict[str, Any], preemptive: bool) -> Sandwich:
    """The sandwich a cache entry holds, its schedule verified again.

    Raises
    ------
    ValueError, KeyError, TypeError, InputError
        On a body that is not a sandwich, a schedule the verifier rejects or whose
        figures are not the verifier's, a preempted job in problem A, or a bound that
        is not one of the model's or lies above the schedule.
    """
    from ddlsched.core.io import schedule_from_dict
    from ddlsched.formulations.lower_bounds import BOUNDS, PREEMPTIVE_BOUNDS
    from ddlsched.formulations.start_lagrangian import NAME as LAGRANGIAN
    from ddlsched.proofs_checks.verifier import verify

    stored, bound = body["upper"], body["lower"]
    schedule = schedule_from_dict(stored["schedule"])
    report = verify(instance, schedule)
    if not report.feasible:
        raise ValueError(f"the verifier rejects the schedule ({report.violations[0]})")
    if not preemptive and any(e.pieces is not None and len(e.pieces) > 1 for e in schedule.jobs):
        raise ValueError("a job is preempted in a schedule of problem A")
    for name, value in (
        ("objective", report.total_completion_time),
        ("total_jct", report.total_jct),
    ):
        if not math.isclose(float(stored[name]), value, rel_tol=1e-9, abs_tol=1e-9):
            raise ValueError(f"its {name} {stored[name]!r} is not the verifier's {value!r}")
    names = PREEMPTIVE_BOUNDS if preemptive else (*BOUNDS.names(), LAGRANGIAN)
    flow = float(bound["flow_value"])
    if not bound["valid"] or bound["name"] not in names or not math.isfinite(flow):
        raise ValueError(f"bound {bound['name']!r} is not a valid bound of the model")
    if flow > report.total_jct * (1 + 1e-9):
        raise ValueError(f"its bound {flow!r} lies above its schedule's {report.total_jct!r}")
    lower = LowerBound(
        float(bound["value"]),
        str(bound["name"]),
        True,
        float(bound["runtime_s"]),
        tuple(str(note) for note in bound["notes"]),
        flow,
    )
    upper = Result(
        method=str(stored["method"]),
        problem=Problem.A,
        status=SolveStatus.FEASIBLE,
        objective=report.total_completion_time,
        total_jct=report.total_jct,
        runtime_s=float(stored["runtime_s"]),
        schedule=schedule,
        metrics=dict(stored["metrics"]),
        notes=tuple(str(note) for note in stored["notes"]),
    )
    return Sandwich(preemptive, lower, upper, float(body["lower_runtime_s"]))


def _load(instance: Instance, key: str | None, preemptive: bool) -> Sandwich | None:
    """The cached sandwich under ``key`` if there is one and it passes :func:`_from_body`
    (else ``None``; one that fails is ignored with a warning)."""
    if key is None:
        return None
    from ddlsched.cache import CacheWarning, entry_path, load

    body = load("sandwich", key)
    if body is None:
        return None
    try:
        return _from_body(instance, body, preemptive)
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        warnings.warn(
            f"cache entry {entry_path('sandwich', key)} ignored: {error}",
            CacheWarning,
            stacklevel=2,
        )
        return None


PER_JOB_BOUNDS: tuple[str, ...] = ("job", "squashed-area", "mean-busy-time", "lagrangian")
"""The fast bounds whose terms each belong to one job (bound 1's floor ``w_i (r_i + p_i)``,
SRPT's or WSPT's figures of job ``i`` on the squashed machine, their Lagrangian
combination job by job; see :mod:`ddlsched.formulations.lower_bounds`): the ones a
per-job table can spread over the jobs. Each holds in both models."""


def per_job_flow_terms(
    instance: Instance, *, preemptive: bool, inputs: BoundInputs | None = None
) -> tuple[str, np.ndarray]:
    """The per-job terms of the largest bound of :data:`PER_JOB_BOUNDS` valid for the model,
    on the flow time: ``t_i - w_i r_i`` for each job, in the instance's order.

    Their sum is that bound's flow value before it is made safe: the reported
    :attr:`~ddlsched.core.result.LowerBound.flow_value` subtracts a rounding allowance of a
    few ulps of the instance's largest time per job and multiplies by ``1 - 1e-9``
    (:func:`ddlsched.formulations.lower_bounds.safe_flow_value`), so near the float limit
    (tiny jobs released near ``10^11`` s) the shares may add up to more than it. A job's
    term is its *share* of a bound on the total, not a bound on the job: in an optimal
    schedule a job may complete before its share (another job then lies above its own).
    Only sums over jobs are compared with a schedule's JCT (:func:`by_period`, :func:`by_gpus`).

    Parameters
    ----------
    instance
        The instance.
    preemptive
        The model: ``True`` the preemptive one, ``False`` problem A.
    inputs
        The bounds' inputs, if already computed (``p_i`` of every job).

    Returns
    -------
    tuple[str, numpy.ndarray]
        The bound's name and its per-job flow terms (weighted, seconds).
    """
    from ddlsched.formulations.lower_bounds import BOUNDS, PREEMPTIVE_BOUNDS, BoundInputs

    inputs = inputs or BoundInputs.of(instance)
    allowed = PREEMPTIVE_BOUNDS if preemptive else BOUNDS.names()
    names = [name for name in PER_JOB_BOUNDS if name in allowed]
    shares = {
        name: np.asarray(BOUNDS[name](inputs), dtype=float) - inputs.weights * inputs.releases
        for name in names
    }
    best = max(names, key=lambda name: math.fsum(shares[name].tolist()))
    return best, shares[best]


def schedule_times(instance: Instance, schedule: Schedule) -> pd.DataFrame:
    """Each job's times in a schedule, one row per job in the instance's order.

    Columns: ``job``, ``release``, ``gpus``, ``weight``, ``start`` (the first instant it
    runs), ``completion``, ``jct`` (``C_i - r_i``), ``held`` (seconds it holds its GPUs:
    the sum of its pieces, restarts included, or ``C_i - S_i``) and ``wait`` (``jct -
    held``: before its start and between its pieces), so that ``jct = wait + held``.

    Raises
    ------
    ValueError
        If a job has no entry or no completion time, or an entry names no job of the
        instance.
    """
    entries = schedule.by_id()
    known = {job.id for job in instance.jobs}
    strangers = sorted(set(entries) - known)
    if strangers:
        raise ValueError(f"schedule: job {strangers[0]!r} is not in the instance")
    rows = []
    for job in instance.jobs:
        entry = entries.get(job.id)
        if entry is None:
            raise ValueError(f"schedule: no entry for job {job.id!r}")
        if entry.end is None:
            raise ValueError(f"schedule job {job.id!r}: no completion time (end)")
        pieces = entry.pieces or ((entry.start, entry.end),)
        held = math.fsum(piece[1] - piece[0] for piece in pieces)
        jct = entry.end - job.release
        rows.append(
            (job.id, job.release, job.gpus, job.weight, entry.start, entry.end, jct, held,
             jct - held)
        )  # fmt: skip
    columns = ["job", "release", "gpus", "weight", "start", "completion", "jct", "held", "wait"]
    return pd.DataFrame.from_records(rows, columns=columns)


def job_table(
    instance: Instance,
    schedule: Schedule,
    *,
    preemptive: bool,
    inputs: BoundInputs | None = None,
) -> pd.DataFrame:
    """Where a schedule's total JCT sits against a lower bound, job by job.

    The columns of :func:`schedule_times`, and:

    - ``floor``: ``p_i = K_i alpha_i^min``, the job's fastest processing time;
    - ``slowdown``: ``held / floor``, the processing time over the fastest one (what
      placement, and in the preemptive model restarts, cost the job's run);
    - ``weighted_jct``: ``w_i (C_i - r_i)``; the column sums to the schedule's total
      (weighted) JCT;
    - ``bound_share``: the job's term of the bound of :func:`per_job_flow_terms`
      (named in ``table.attrs["bound"]``); the column sums to that bound's flow value
      (up to its factor ``1 - 1e-9``). A share is not a bound on the job (see there);
    - ``excess``: ``weighted_jct - bound_share``; the column sums to the schedule's
      distance above the bound, which sums over jobs (:func:`by_period`,
      :func:`by_gpus`) locate.

    Parameters
    ----------
    instance
        The instance.
    schedule
        A schedule of it with completion times (a simulated or an offline one), of the
        model ``preemptive`` names.
    preemptive
        The model, which decides the bounds allowed.
    inputs
        The bounds' inputs, if already computed.

    Raises
    ------
    ValueError
        As :func:`schedule_times`; for a ``schedule`` that is not a :class:`Schedule`, one
        the verifier rejects for ``instance``, or one that preempts a job given as one of
        problem A (``preemptive=False``).
    """
    from ddlsched.formulations.lower_bounds import BoundInputs
    from ddlsched.proofs_checks.verifier import verify

    if not isinstance(schedule, Schedule):
        raise ValueError(f"schedule: must be a Schedule, got {type(schedule).__name__}")
    if not preemptive:
        for entry in schedule.jobs:
            if entry.pieces is not None and len(entry.pieces) > 1:
                raise ValueError(
                    f"schedule job {entry.id!r}: preempted, so not a schedule of problem A "
                    "(give preemptive=True)"
                )
    table = schedule_times(instance, schedule)
    report = verify(instance, schedule)
    if not report.feasible:
        raise ValueError(
            f"schedule: not a feasible schedule of this instance ({report.violations[0]})"
        )
    inputs = inputs or BoundInputs.of(instance)
    name, shares = per_job_flow_terms(instance, preemptive=preemptive, inputs=inputs)
    table["floor"] = inputs.processing
    with np.errstate(divide="ignore", invalid="ignore"):
        table["slowdown"] = table["held"] / table["floor"]
    table["weighted_jct"] = table["weight"] * table["jct"]
    table["bound_share"] = shares
    table["excess"] = table["weighted_jct"] - table["bound_share"]
    table.attrs["bound"] = name
    return table


def _summary(table: pd.DataFrame, key: pd.Series | str) -> pd.DataFrame:
    """The rows of :func:`job_table` summed by ``key``."""
    grouped = table.groupby(key, sort=True)
    summary = pd.DataFrame(
        {
            "jobs": grouped.size(),
            "weighted_jct": grouped["weighted_jct"].sum(),
            "bound_share": grouped["bound_share"].sum(),
            "excess": grouped["excess"].sum(),
        }
    )
    total = table["excess"].sum()
    summary["share_of_excess"] = summary["excess"] / total if total else math.nan
    summary["over_bound"] = summary["weighted_jct"] / summary["bound_share"]
    return summary


MAX_PERIODS = 10_000_000
"""The most release periods :func:`by_period` splits a table into."""


def by_period(table: pd.DataFrame, seconds: float = 86_400.0) -> pd.DataFrame:
    """The rows of :func:`job_table` summed over the jobs released in each period.

    Parameters
    ----------
    table
        A :func:`job_table`.
    seconds
        The period's length (default a day); period ``k`` holds the jobs released in
        ``[k seconds, (k + 1) seconds)``.

    Returns
    -------
    pandas.DataFrame
        Indexed by period ``k`` (periods without a release are left out): ``jobs``,
        ``weighted_jct`` and ``bound_share`` (the schedule's total JCT and the bound's
        terms over the same jobs), ``excess`` (their difference), ``share_of_excess``
        (of the whole schedule's excess) and ``over_bound`` (their ratio; not a bound
        on the period's own optimum, as a share is not a bound).

    Raises
    ------
    ValueError
        If ``seconds`` is not a finite number > 0, or gives more than
        :data:`MAX_PERIODS` periods.
    """
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds: must be a finite number > 0, got {seconds!r}")
    releases = table["release"].to_numpy(dtype=float)
    last = float(releases.max()) if len(releases) else 0.0
    if last / seconds > MAX_PERIODS:
        raise ValueError(
            f"seconds: {seconds!r} splits the releases into more than {MAX_PERIODS} periods"
        )
    period = pd.Series(
        np.floor(releases / seconds).astype(np.int64), index=table.index, name="period"
    )
    return _summary(table, period)


def by_gpus(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`job_table` summed by the jobs' GPU count (columns as in
    :func:`by_period`, indexed by ``gpus``)."""
    return _summary(table, "gpus")


def pooled_instance(instance: Instance) -> Instance:
    """The same jobs on one server of all ``M`` GPUs (no server boundary: every job placed
    whole, every edge at the intra-server bandwidth).

    A relaxation of the servers: every mapping of the real cluster has a counterpart
    here that is no slower. Not a schedule of the real cluster.

    Raises
    ------
    ValueError
        If the cluster has several GPU types (pooling them has no one meaning).
    """
    cluster = instance.cluster
    if cluster.heterogeneous:
        raise ValueError(
            f"cluster: pooling needs one GPU type, got {len(cluster.types)} ({cluster.types})"
        )
    one = Cluster(
        (cluster.num_gpus,),
        cluster.intra_of(cluster.types[0]),
        cluster.bandwidth_inter,
        server_types=cluster.server_types[:1],
        type_bandwidth=cluster.type_bandwidth,
    )
    return instance.replace(cluster=one)


@dataclass(frozen=True)
class JctDecomposition:
    """Where a policy's total (weighted) JCT goes: the bound, its order, placement, servers.

    The policy runs on the real cluster and on :func:`pooled_instance`. Then
    ``real = lower + order + placement + servers`` (:attr:`parts`):

    - ``bound``: a proven lower bound on the optimal total JCT of the policy's model;
    - ``order``: ``pooled - lower``, the policy's order with servers out of the way.
      It holds the bound's own slack too (what lies between the bound and the optimum
      is not known), so it is what is left of the gap with no server to blame;
    - ``placement``: the longer runs on the real cluster, ``sum w_i held_i`` real minus
      pooled (slow spread mappings; restarts in the preemptive model);
    - ``servers``: the longer waits, ``sum w_i wait_i`` real minus pooled (jobs kept
      out by fragmented servers).

    A part may be negative: a heuristic is not monotone in its cluster.

    Attributes
    ----------
    policy
        The policy's name.
    lower
        The lower bound given (flow time, weighted).
    pooled, real
        The policy's total (weighted) JCT on the pooled and the real cluster.
    pooled_held, real_held
        ``sum w_i held_i`` (:func:`schedule_times`) of each run.
    gpu_time
        GPU-seconds the real run held, ``sum g_i held_i``.
    ideal_gpu_time
        ``sum g_i p_i``: every job at its fastest processing time.
    """

    policy: str
    lower: float
    pooled: float
    real: float
    pooled_held: float
    real_held: float
    gpu_time: float
    ideal_gpu_time: float

    @property
    def parts(self) -> dict[str, float]:
        """``bound``, ``order``, ``placement`` and ``servers``, which add up to :attr:`real`."""
        placement = self.real_held - self.pooled_held
        servers = (self.real - self.real_held) - (self.pooled - self.pooled_held)
        return {
            "bound": self.lower,
            "order": self.pooled - self.lower,
            "placement": placement,
            "servers": servers,
        }

    @property
    def gpu_time_ratio(self) -> float:
        """:attr:`gpu_time` over :attr:`ideal_gpu_time`: the work placement inflated."""
        return self.gpu_time / self.ideal_gpu_time if self.ideal_gpu_time > 0 else math.nan


def _weighted(times: pd.DataFrame, column: str) -> float:
    return math.fsum((times["weight"] * times[column]).tolist())


def decompose_jct(
    instance: Instance,
    policy: str,
    lower: float,
    *,
    real: Result | None = None,
    params: OnlineParams | None = None,
    seed: int = 0,
) -> JctDecomposition:
    """Run ``policy`` on the real and the pooled cluster and split its total JCT
    (:class:`JctDecomposition`).

    Parameters
    ----------
    instance
        The instance (one GPU type: :func:`pooled_instance`).
    policy
        A policy name of :data:`ddlsched.algorithms.registry.POLICIES`.
    lower
        A proven lower bound on the optimal total (weighted) JCT of the policy's model
        (:func:`flow_sandwich`'s ``lower.flow_value``, or a fast bound's).
    real
        The policy's run on ``instance``, if already simulated with the same settings.
    params, seed
        The simulator's settings (:func:`ddlsched.api.simulate`).

    Raises
    ------
    ValueError
        On ``lower`` not a finite number >= 0, an unknown policy, a cluster of several
        GPU types or a run without schedule.
    """
    from ddlsched.api import simulate
    from ddlsched.formulations.lower_bounds import BoundInputs

    if not (
        isinstance(lower, (int, float, np.floating))
        and not isinstance(lower, bool)
        and math.isfinite(lower)
        and lower >= 0
    ):
        raise ValueError(f"lower: must be a finite number >= 0, got {lower!r}")
    pooled = pooled_instance(instance)
    if real is None:
        real = simulate(instance, policy, params=params, seed=seed, bound=False)
    alone = simulate(pooled, policy, params=params, seed=seed, bound=False)
    if real.schedule is None or alone.schedule is None:
        raise ValueError(f"policy {policy!r}: a run without schedule cannot be split")
    real_times = schedule_times(instance, real.schedule)
    pooled_times = schedule_times(pooled, alone.schedule)
    processing = BoundInputs.of(instance).processing
    gpus = real_times["gpus"].to_numpy(dtype=float)
    return JctDecomposition(
        policy,
        float(lower),
        _weighted(pooled_times, "jct"),
        _weighted(real_times, "jct"),
        _weighted(pooled_times, "held"),
        _weighted(real_times, "held"),
        math.fsum((gpus * real_times["held"].to_numpy()).tolist()),
        math.fsum((gpus * processing).tolist()),
    )
