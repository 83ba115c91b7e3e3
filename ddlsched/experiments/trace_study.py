"""Trace studies: every rigid policy replayed on one real trace, side by side, certified.

What the GPU-cluster scheduling papers report (Tiresias, Gavel, Pollux, Sia, Blox, Lucid):
several schedulers on one trace at one or more loads. Here each run is checked by the
independent verifier (as :func:`ddlsched.api.simulate` does) and measured against the
proven lower bound of its own model, computed once per load and model, never per policy:

- :func:`replay_trace` reads a trace as ``ddlsched simulate`` does (Philly, Tiresias,
  Muri, a minimal CSV through ``columns``) and scales its arrivals to a load;
- :func:`simulate_trace` runs one policy on it and returns every figure ``simulate``
  prints (:meth:`TraceRun.summary`);
- :func:`trace_study` runs every rigid policy of
  :data:`~ddlsched.algorithms.registry.POLICIES` (or those named) at each load, the
  policies and the two models' sandwiches in worker processes, and returns a
  :class:`TraceStudy`: :meth:`~TraceStudy.table` (one row per load and policy),
  :meth:`~TraceStudy.jobs` (one row per job, policy and load), :attr:`~TraceStudy.sandwiches`.

The metrics of a row:

``jct_over_lb``
    Total JCT ``sum (C_i - r_i)`` over the lower bound of the policy's own model
    (:data:`~ddlsched.algorithms.registry.PREEMPTIVE_POLICIES` are measured against the
    preemptive model's bound, the others against problem A's): at least 1, and an upper
    bound on the policy's distance to the model's optimum.
``jct_over_best``
    Total JCT over the best verified schedule known for the model (``best_schedule``
    names it): the sandwich's upper end or a verified run of the study, whichever is
    lower. For problem A only runs that preempt no job count; for the preemptive model
    every verified run does (a schedule without preemptions is one of its schedules).
``rho_mean``, ``rho_max``
    Finish-time fairness (Themis: Mahajan et al., NSDI 2020), computed as Gavel does
    (Narayanan et al., OSDI 2020, its ``IsolatedPolicy``): a job's JCT over its JCT alone
    on its fair share of the cluster, ``rho_i = (C_i - r_i) / T_i^iso``. The fair share is
    ``1 / N_i`` of the ``M`` GPUs, with ``N_i`` the time-average number of jobs active
    (released, not completed, the job itself included) during ``[r_i, C_i]`` in the
    policy's own schedule; a rigid job of ``g_i`` GPUs given ``M / N_i`` GPUs runs a
    time share ``min(1, M / (N_i g_i))`` of its fastest processing time ``p_i = K_i
    alpha_i^min``: ``T_i^iso = p_i max(1, N_i g_i / M)`` (one definition,
    :mod:`ddlsched.core.fairness`, which the ``themis`` policy estimates online).
    ``rho_i > 1``: the job did worse than on its fair share. Per user and per virtual
    cluster where the trace names them (the job features ``user`` and ``vc``): jobs,
    mean JCT, mean and largest ``rho`` (:func:`group_fairness`; :meth:`TraceStudy.groups`,
    and ``simulate``'s summary: :func:`run_fairness`).
``user_jct_max_over_min``, ``user_jct_cv``
    Over the users the trace names (Philly's ``cluster`` column, a ``user`` column):
    the largest per-user mean JCT over the smallest, and the coefficient of variation
    (population standard deviation over mean) of the per-user means; ``None`` without
    users.
``bounded_slowdown_mean``
    Feitelson's bounded slowdown (Feitelson, Rudolph, Schwiegelshohn, Sevcik, Wong,
    "Theory and practice in parallel job scheduling", JSSPP 1997):
    ``max(1, (C_i - r_i) / max(run_i, tau))`` with ``run_i`` the seconds the job held its
    GPUs and the threshold ``tau`` = :data:`SLOWDOWN_THRESHOLD_S` (10 s).
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np
import pandas as pd

from ddlsched.core.fairness import finish_time_fairness
from ddlsched.core.model import InputError, Instance, is_whole
from ddlsched.core.result import Result, SolveStatus

if TYPE_CHECKING:
    from ddlsched.algorithms.offline import FlowInterval
    from ddlsched.core.params import OnlineParams
    from ddlsched.core.traces import LoadedTrace
    from ddlsched.sandwich import Sandwich

BOUNDS = ("full", "fast", "none")
"""What :func:`trace_study` computes of each model's sandwich: all of it, its fast form
(fewer local-search schedules and Lagrangian rounds), or nothing (no ratio to a bound)."""

SLOWDOWN_THRESHOLD_S = 10.0
"""Feitelson's bounded-slowdown threshold ``tau`` (seconds): a job shorter than this
counts as this long, so that a one-second job waiting a minute is not a slowdown of 60."""

NO_OFFLINE = "no offline schedule computed; use compare --trace or --upper-bound"
"""What ``simulate`` says of the upper end of its model's interval when it computed none."""

StudyProgress = Callable[[str, int, int], None]
"""``progress(phase, runs done, runs)``."""

MODELS = ("A", "preemptive")


class LeftOutFields(TypedDict):
    """What the trace reader left out: the counts and the first
    :data:`~ddlsched.core.traces.LEFT_OUT_SHOWN` rows (line, column, value, kind, reason)."""

    rows_read: int
    rows_skipped: int
    jobs_dropped_too_wide: int
    rows_left_out_first: list[dict[str, str | int]]


class ReplayFields(LeftOutFields):
    """What the reader read, left out and guessed, and the load (:meth:`TraceReplay.fields`)."""

    trace_format: str
    jobs: int
    unnamed_rule: str
    jobs_without_known_model: int
    unmatched_models: dict[str, int]
    arrival_scale: float
    offered_load: float


class StudyRecord(TypedDict):
    """One policy's row at one load (:meth:`TraceStudy.record`; ``nan`` where unknown)."""

    load: float | None
    offered_load: float
    policy: str
    model: str
    verified: bool
    jct_over_lb: float
    jct_over_best: float
    best_schedule: str
    total_jct: float
    lower_bound: float
    mean_jct: float
    p50_jct: float
    p95_jct: float
    p99_jct: float
    mean_queueing_delay: float
    makespan: float
    gpu_utilisation: float
    preemptions: float
    preempted_jobs: float
    rho_mean: float
    rho_max: float
    user_jct_max_over_min: float | None
    user_jct_cv: float | None
    bounded_slowdown_mean: float
    runtime_s: float
    note: str | None


class LoadDocument(ReplayFields):
    """One load of a study's document: the trace at that load and each model's sandwich."""

    target_load: float | None
    sandwiches: dict[str, dict[str, object]]


class StudyDocument(TypedDict):
    """A study as one JSON document (:meth:`TraceStudy.to_dict`)."""

    settings: dict[str, object]
    interrupted: bool
    loads: list[LoadDocument]
    records: list[StudyRecord]
    fairness_groups: list[dict[str, object]]


@dataclasses.dataclass(frozen=True)
class TraceReplay:
    """A trace read on a cluster, its arrivals scaled to a load.

    Attributes
    ----------
    loaded
        What the reader made of the file (:class:`~ddlsched.core.traces.LoadedTrace`).
    instance
        The instance replayed (the loaded one, arrivals scaled).
    arrival_scale
        The factor the inter-arrival times were divided by (1: as recorded).
    offered_load
        Its offered load (``inf`` when every job arrives at once).
    source
        The file read.
    """

    loaded: LoadedTrace
    instance: Instance
    arrival_scale: float
    offered_load: float
    source: str

    def fields(self) -> ReplayFields:
        """What the reader read, left out and guessed, for a JSON document."""
        from ddlsched.core.traces import LEFT_OUT_SHOWN

        loaded = self.loaded
        return {
            "trace_format": loaded.format,
            "jobs": self.instance.num_jobs,
            "rows_read": loaded.rows_read,
            "rows_skipped": loaded.skipped_invalid,
            "jobs_dropped_too_wide": loaded.dropped_wide,
            "rows_left_out_first": [row.to_dict() for row in loaded.left_out[:LEFT_OUT_SHOWN]],
            "unnamed_rule": loaded.unnamed_rule,
            "jobs_without_known_model": loaded.unnamed_jobs,
            "unmatched_models": loaded.unmatched_models,
            "arrival_scale": self.arrival_scale,
            "offered_load": self.offered_load,
        }


def read_trace(
    trace: str | os.PathLike[str],
    *,
    servers: int = 256,
    gpus_per_server: int = 8,
    gpu_types: Sequence[tuple[str, int]] | None = None,
    bandwidth_intra: float = 20.0,
    bandwidth_inter: float = 1.0,
    limit: int | None = None,
    seed: int = 0,
    unnamed: str | None = None,
    columns: dict[str, str] | str | None = None,
    time_unit: str | None = None,
    format: str | None = None,
    states: str | Sequence[str] | None = None,
    fractional: str = "refuse",
) -> tuple[LoadedTrace, str]:
    """The trace on the cluster described, read as ``simulate`` reads it, and its path.

    Parameters
    ----------
    trace
        A CSV file, or a shipped name such as ``"philly_jobs.csv"``.
    servers, gpus_per_server, bandwidth_intra, bandwidth_inter
        The cluster (bandwidths in GB/s).
    gpu_types
        Servers per GPU type, e.g. ``[("v100", 2), ("k80", 2)]``, adding up to ``servers``.
    limit
        Only the first ``limit`` jobs by submit time.
    seed
        Seeds the models drawn for rows naming none.
    unnamed, columns, time_unit, format, states, fractional
        As for :func:`ddlsched.core.traces.load_trace` (``columns`` also as the text
        ``"submit=time,gpus=num_gpu"``).

    Raises
    ------
    InputError
        Naming the argument, or the file's line and column.
    """
    from ddlsched.core.data import resolve_trace
    from ddlsched.core.io import check_regular_file
    from ddlsched.core.model import Cluster, expand_types
    from ddlsched.core.traces import UNNAMED_RULES, RowsLeftOut, load_trace, parse_columns

    source = str(resolve_trace(trace))
    check_regular_file(source, "CSV trace")
    try:
        cluster = Cluster.uniform(servers, gpus_per_server, bandwidth_intra, bandwidth_inter)
        if gpu_types:
            kinds = expand_types(tuple(gpu_types))
            if len(kinds) != servers:
                raise InputError(f"gpu_types: lists {len(kinds)} servers but servers is {servers}")
            cluster = cluster.replace(server_types=kinds)
        with warnings.catch_warnings():  # the caller reports what was left out
            warnings.simplefilter("ignore", RowsLeftOut)
            loaded = load_trace(
                source,
                cluster,
                seed=seed,
                limit=limit,
                unnamed=UNNAMED_RULES[0] if unnamed is None else unnamed,
                columns=parse_columns(columns) if isinstance(columns, str) else columns,
                time_unit=time_unit,
                format=format,
                states=states,
                fractional=fractional,
            )
    except ValueError as error:
        raise InputError(str(error)) from None
    return loaded, source


def at_load(
    loaded: LoadedTrace,
    source: str,
    target_load: float | None = None,
    load_factor: float | None = None,
) -> TraceReplay:
    """``loaded``'s instance with its arrivals scaled to ``target_load`` (or compressed by
    ``load_factor``; neither: as recorded).

    Raises
    ------
    InputError
        Naming ``target_load`` or ``load_factor`` when the factor or the horizon it gives
        is out of range.
    """
    from ddlsched.core.offered_load import at_load as scaled_to
    from ddlsched.core.offered_load import offered_load, scale_arrivals

    if target_load is not None and load_factor is not None:
        raise InputError("target_load, load_factor: give one of them")
    instance, factor = loaded.instance, 1.0
    try:
        if target_load is not None:
            instance, factor = scaled_to(instance, target_load)
        elif load_factor is not None:
            factor = load_factor
            instance = scale_arrivals(instance, factor)
    except ValueError as error:
        name = "target_load" if target_load is not None else "load_factor"
        raise InputError(f"{name}: {error}") from None
    return TraceReplay(loaded, instance, factor, offered_load(instance), source)


def replay_trace(
    trace: str | os.PathLike[str],
    *,
    target_load: float | None = None,
    load_factor: float | None = None,
    **reading: Any,
) -> TraceReplay:
    """The trace read by :func:`read_trace` (``reading``: its arguments) at a load
    (:func:`at_load`)."""
    loaded, source = read_trace(trace, **reading)
    return at_load(loaded, source, target_load, load_factor)


@dataclasses.dataclass(frozen=True)
class TraceRun:
    """One policy replayed on a trace: the run, its model's bounds and the reader's report.

    Attributes
    ----------
    replay
        The trace replayed.
    result
        The run (status ``feasible`` once the verifier accepts it).
    sandwich
        The model's sandwich when one was asked for, else ``None``.
    interval
        The model's interval: a proven lower bound and, with a sandwich, the best verified
        schedule (``None`` for a run the verifier rejects or an interrupted one).
    stretched
        Jobs that ran more than twice their recorded duration.
    """

    replay: TraceReplay
    result: Result
    sandwich: Sandwich | None
    interval: FlowInterval | None
    stretched: int | None

    @property
    def warning(self) -> str | None:
        """Why the policies cannot differ on this trace, if no job ever waited."""
        metrics = self.result.metrics
        if metrics.get("mean_queueing_delay") == 0 and metrics.get("preempted_jobs") == 0:
            return (
                "no job ever waited: every work-conserving policy gives this same schedule; "
                "raise the load (--target-load, --load-factor) or shrink the cluster to "
                "compare policies"
            )
        return None

    def jobs(self) -> pd.DataFrame:
        """One row per job of the run (:func:`job_rows`); the run must hold a schedule."""
        return job_rows(self.replay.instance, self.result, processing_times(self.replay.instance))

    def summary(self) -> dict[str, object]:
        """Every figure ``ddlsched simulate`` prints, as its ``--json`` document: the
        run's metrics, its model's interval, what the reader did and the run's
        finish-time fairness (:func:`run_fairness`)."""
        out: dict[str, object] = dict(self.result.summary())
        interval = self.interval
        if interval is not None:
            fields = interval.to_dict()
            if self.sandwich is None:  # the run itself is no offline schedule
                for key in ("flow_upper_bound", "flow_upper_over_lower", "flow_policy_over_upper"):
                    fields[key] = None
                fields["flow_upper_bound_method"] = None
                fields["flow_upper_bound_note"] = NO_OFFLINE
            out.update(fields)
            out["problem"] = interval.model
        out.update(self.replay.fields())
        out["jobs_over_2x_recorded_duration"] = self.stretched
        if self.result.schedule is not None:
            out.update(run_fairness(self.jobs()))
        if self.warning:
            out["warning"] = self.warning
        return out


def simulate_trace(
    replay: TraceReplay,
    policy: str,
    *,
    params: OnlineParams | None = None,
    seed: int = 0,
    upper_bound: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> TraceRun:
    """Run ``policy`` on a replayed trace (``ddlsched simulate --trace``), with its model's
    interval: the fast lower bound, and with ``upper_bound`` the model's sandwich (its
    strongest bounds and the best verified offline schedule), whose lower bound becomes
    the run's one bound when larger, so every ratio uses the same bound.

    On Ctrl-C the run holds what completed (status ``error``, no schedule).

    Raises
    ------
    ValueError
        As :func:`ddlsched.api.simulate`.
    """
    from ddlsched.algorithms.offline import flow_interval
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES
    from ddlsched.api import simulate
    from ddlsched.core.traces import stretched_jobs
    from ddlsched.sandwich import study_sandwich

    instance = replay.instance
    result = simulate(instance, policy, params=params, seed=seed, progress=progress, partial=True)
    stretched = None if result.schedule is None else stretched_jobs(instance, result.schedule)
    if result.status is not SolveStatus.FEASIBLE:  # interrupted, or rejected by the verifier
        return TraceRun(replay, result, None, None, stretched)
    preemptive = policy in PREEMPTIVE_POLICIES
    found = None
    if upper_bound:
        restart = None if params is None else params.restart_cost
        found = study_sandwich(
            instance, preemptive=preemptive, effort="full", restart_cost=restart
        )
        if found.lower.flow_value > result.flow_lower_bound:
            result = dataclasses.replace(result, lower_bound=found.lower)
    offline = None if found is None else found.upper
    interval = flow_interval(instance, result, preemptive=preemptive, offline=offline)
    return TraceRun(replay, result, found, interval, stretched)


def job_rows(instance: Instance, result: Result, processing: np.ndarray) -> pd.DataFrame:
    """One row per job of a run: id, user, virtual cluster (``vc``: ``None`` where the
    trace names none), GPUs, submit, start, end, JCT, queueing delay
    (first start minus submit, as the simulator's ``mean_queueing_delay``), seconds run,
    preemptions, finish-time fairness ``rho`` and bounded slowdown."""
    assert result.schedule is not None
    entries = {entry.id: entry for entry in result.schedule.jobs}
    jobs = instance.jobs
    start = np.array([entries[job.id].start for job in jobs], dtype=float)
    end = np.array([entries[job.id].end for job in jobs], dtype=float)
    pieces = [entries[job.id].pieces for job in jobs]
    ran = np.array(
        [end[k] - start[k] if p is None else sum(q.end - q.start for q in p) for k, p in
         enumerate(pieces)],
        dtype=float,
    )  # fmt: skip
    release = np.array([job.release for job in jobs], dtype=float)
    gpus = np.array([job.gpus for job in jobs], dtype=float)
    jct = end - release
    num_gpus = instance.cluster.num_gpus
    return pd.DataFrame(
        {
            "id": [job.id for job in jobs],
            "user": [job.features.get("user") for job in jobs],
            "vc": [job.features.get("vc") for job in jobs],
            "gpus": gpus.astype(int),
            "submit": release,
            "start": start,
            "end": end,
            "jct": jct,
            "queueing_delay": start - release,
            "run_s": ran,
            "preemptions": [0 if p is None else len(p) - 1 for p in pieces],
            "rho": finish_time_fairness(release, end, gpus, processing, num_gpus),
            "bounded_slowdown": np.maximum(1.0, jct / np.maximum(ran, SLOWDOWN_THRESHOLD_S)),
        }
    )


GROUPINGS = ("user", "vc")
"""The job features fairness is reported by, where the trace names them."""


class GroupFairness(TypedDict):
    """One user's or virtual cluster's jobs in a run (:func:`group_fairness`)."""

    jobs: int
    mean_jct: float
    rho_mean: float
    rho_max: float


def group_fairness(jobs: pd.DataFrame) -> dict[str, dict[str, GroupFairness]]:
    """Per user and per virtual cluster (:data:`GROUPINGS`) of a run's :func:`job_rows`:
    the jobs, mean JCT and mean and largest finish-time fairness ``rho``; a grouping
    the trace names for no job is left out, jobs naming none are left out of it."""
    out: dict[str, dict[str, GroupFairness]] = {}
    for grouping in GROUPINGS:
        named = jobs[jobs[grouping].notna()]
        if named.empty:
            continue
        by_group = named.groupby(named[grouping].astype(str), sort=True)
        stats = by_group.agg(
            jobs=("jct", "size"),
            mean_jct=("jct", "mean"),
            rho_mean=("rho", "mean"),
            rho_max=("rho", "max"),
        )
        out[grouping] = {
            str(name): {
                "jobs": int(row.jobs),
                "mean_jct": float(row.mean_jct),
                "rho_mean": float(row.rho_mean),
                "rho_max": float(row.rho_max),
            }
            for name, row in stats.iterrows()
        }
    return out


class RunFairness(TypedDict, total=False):
    """A run's finish-time fairness (:func:`run_fairness`)."""

    rho_mean: float
    rho_max: float
    rho_max_job: str
    fairness_by_user: dict[str, GroupFairness]
    fairness_by_vc: dict[str, GroupFairness]


def run_fairness(jobs: pd.DataFrame) -> RunFairness:
    """A run's mean and worst ``rho``, the job with the worst, and per user and per
    virtual cluster (:func:`group_fairness`: the keys ``fairness_by_user`` and
    ``fairness_by_vc`` where the trace names them)."""
    worst = int(jobs["rho"].to_numpy().argmax())
    out: RunFairness = {
        "rho_mean": float(jobs["rho"].mean()),
        "rho_max": float(jobs["rho"].iloc[worst]),
        "rho_max_job": str(jobs["id"].iloc[worst]),
    }
    groups = group_fairness(jobs)
    if "user" in groups:
        out["fairness_by_user"] = groups["user"]
    if "vc" in groups:
        out["fairness_by_vc"] = groups["vc"]
    return out


def processing_times(instance: Instance) -> np.ndarray:
    """``p_i = K_i alpha_i^min`` per job, the processing times ``rho`` is measured by."""
    from ddlsched.core.alpha import fastest_processing

    return np.array(fastest_processing(instance)[0], dtype=float)


def user_spread(jobs: pd.DataFrame) -> tuple[float | None, float | None]:
    """Per-user mean JCT: the largest over the smallest, and the coefficient of variation
    (population standard deviation over mean) of the means; ``None`` without users."""
    named = jobs[jobs["user"].notna()]
    if named.empty:
        return None, None
    means = named.groupby("user")["jct"].mean().to_numpy(dtype=float)
    spread = means.max() / means.min() if means.min() > 0 else math.inf
    return float(spread), float(means.std() / means.mean())


@dataclasses.dataclass(frozen=True)
class StudySettings:
    """What a study runs: the policies, bounds, workers and seed (checked on construction).

    Raises
    ------
    ValueError
        Naming the setting and the value.
    """

    policies: tuple[str, ...]
    target_loads: tuple[float | None, ...] = (None,)
    bounds: str = "full"
    workers: int = 1
    seed: int = 0
    cache: bool = True

    def __post_init__(self) -> None:
        from ddlsched.algorithms.registry import POLICIES

        if not self.policies:
            raise ValueError("policies: expected one or more names")
        for name in self.policies:
            if name not in POLICIES:
                raise ValueError(f"policies: {_not_rigid(name)}; expected some of "
                                 f"{', '.join(POLICIES.names())}")  # fmt: skip
        repeated = sorted({name for name in self.policies if self.policies.count(name) > 1})
        if repeated:
            raise ValueError(f"policies: {', '.join(repeated)} named twice")
        for load in self.target_loads:
            number = isinstance(load, int | float) and not isinstance(load, bool)
            if load is not None and not (number and 0 < load < math.inf):
                raise ValueError(f"target_loads: expected numbers > 0, got {load!r}")
        if not self.target_loads:
            raise ValueError("target_loads: expected one or more loads (None: as recorded)")
        if len(set(self.target_loads)) != len(self.target_loads):
            raise ValueError(f"target_loads: expected distinct loads, got {self.target_loads!r}")
        if self.bounds not in BOUNDS:
            raise ValueError(f"bounds: expected one of {', '.join(BOUNDS)}, got {self.bounds!r}")
        if not is_whole(self.workers) or self.workers < 1:
            raise ValueError(f"workers: expected a whole number >= 1, got {self.workers!r}")
        if not is_whole(self.seed) or not 0 <= self.seed < 2**63:
            raise ValueError(f"seed: expected a whole number >= 0, got {self.seed!r}")

    def models(self) -> tuple[str, ...]:
        """The models the policies belong to, in :data:`MODELS` order."""
        return tuple(m for m in MODELS if any(model_of(p) == m for p in self.policies))


def _not_rigid(name: str) -> str:
    """Why ``name`` is no policy of a rigid trace."""
    from ddlsched.algorithms.elastic import ELASTIC_POLICIES

    if name in ELASTIC_POLICIES:
        return f"{name!r} schedules elastic jobs (a Pollux workload), not a rigid trace's"
    return f"unknown policy {name!r}"


def model_of(policy: str) -> str:
    """``"preemptive"`` for a policy of
    :data:`~ddlsched.algorithms.registry.PREEMPTIVE_POLICIES`, else ``"A"``."""
    from ddlsched.algorithms.registry import PREEMPTIVE_POLICIES

    return "preemptive" if policy in PREEMPTIVE_POLICIES else "A"


def rigid_policy_names(policies: Sequence[str] | None = None) -> tuple[str, ...]:
    """``policies`` checked (``None``: every policy of the registry, which holds rigid
    policies only; the elastic ones live in their own registry)."""
    from ddlsched.algorithms.registry import POLICIES

    if isinstance(policies, str):
        raise ValueError(f"policies: expected a list of names, got {policies!r}")
    return POLICIES.names() if policies is None else tuple(policies)


@dataclasses.dataclass
class TraceStudy:
    """Every policy's run on one trace at each load, and each model's sandwich.

    Attributes
    ----------
    settings
        What was run.
    replays
        The trace at each load, keyed by the target load asked (``None``: as recorded).
    runs
        ``runs[load][policy]``: each checked run (those finished, if interrupted).
    sandwiches
        ``sandwiches[load][model]`` (``model`` ``"A"`` or ``"preemptive"``): empty with
        ``bounds="none"``.
    interrupted
        Whether Ctrl-C stopped the study before every run finished.
    """

    settings: StudySettings
    replays: dict[float | None, TraceReplay]
    runs: dict[float | None, dict[str, Result]]
    sandwiches: dict[float | None, dict[str, Sandwich]]
    interrupted: bool = False
    _jobs: dict[tuple[float | None, str], pd.DataFrame] = dataclasses.field(
        default_factory=dict, repr=False
    )

    def load_sandwiches(self, load: float | None) -> list[tuple[str, Sandwich]]:
        """The sandwiches computed at ``load``, problem A's first (:data:`MODELS` order)."""
        found = self.sandwiches.get(load, {})
        return [(model, found[model]) for model in MODELS if model in found]

    def _job_rows(self, load: float | None, policy: str) -> pd.DataFrame:
        key = (load, policy)
        if key not in self._jobs:
            instance = self.replays[load].instance
            processing = processing_times(instance)
            self._jobs[key] = job_rows(instance, self.runs[load][policy], processing)
        return self._jobs[key]

    def best(self, load: float | None, model: str) -> tuple[float, str]:
        """The least total JCT of a verified schedule of ``model`` at ``load`` and whose it
        is (the sandwich's upper end or a run: module docstring)."""
        found = [(math.inf, "none")]
        sandwich = self.sandwiches.get(load, {}).get(model)
        if sandwich is not None:
            found.append((sandwich.upper.total_jct, f"offline {sandwich.upper_name}"))
        for policy, result in self.runs.get(load, {}).items():
            if result.status is not SolveStatus.FEASIBLE or result.schedule is None:
                continue
            preempts = any(entry.pieces for entry in result.schedule.jobs)
            if model == "preemptive" or not preempts:
                found.append((result.total_jct, policy))
        return min(found)

    def record(self, load: float | None, policy: str) -> StudyRecord:
        """The row of ``policy`` at ``load`` (module docstring for the metrics)."""
        result = self.runs[load][policy]
        model = model_of(policy)
        sandwich = self.sandwiches.get(load, {}).get(model)
        lower = math.nan if sandwich is None else sandwich.lower.flow_value
        best, best_name = self.best(load, model)
        verified = result.status is SolveStatus.FEASIBLE and result.schedule is not None
        jobs = self._job_rows(load, policy) if verified else None
        spread, cv = (None, None) if jobs is None else user_spread(jobs)
        metrics = result.metrics

        def ratio(bound: float) -> float:
            return result.total_jct / bound if bound > 0 and math.isfinite(bound) else math.nan

        return {
            "load": load,
            "offered_load": self.replays[load].offered_load,
            "policy": policy,
            "model": model,
            "verified": verified,
            "jct_over_lb": ratio(lower),
            "jct_over_best": ratio(best),
            "best_schedule": best_name,
            "total_jct": result.total_jct,
            "lower_bound": lower,
            "mean_jct": metrics.get("mean_jct", math.nan),
            "p50_jct": metrics.get("p50_jct", math.nan),
            "p95_jct": metrics.get("p95_jct", math.nan),
            "p99_jct": metrics.get("p99_jct", math.nan),
            "mean_queueing_delay": metrics.get("mean_queueing_delay", math.nan),
            "makespan": metrics.get("makespan", math.nan),
            "gpu_utilisation": metrics.get("gpu_utilisation", math.nan),
            "preemptions": math.nan if jobs is None else int(jobs["preemptions"].sum()),
            "preempted_jobs": metrics.get("preempted_jobs", 0),
            "rho_mean": math.nan if jobs is None else float(jobs["rho"].mean()),
            "rho_max": math.nan if jobs is None else float(jobs["rho"].max()),
            "user_jct_max_over_min": spread,
            "user_jct_cv": cv,
            "bounded_slowdown_mean": (
                math.nan if jobs is None else float(jobs["bounded_slowdown"].mean())
            ),
            "runtime_s": result.runtime_s,
            "note": result.notes[0] if result.notes else None,
        }

    def records(self) -> list[StudyRecord]:
        """One record per load and policy that finished, loads in the order asked."""
        return [
            self.record(load, policy)
            for load in self.settings.target_loads
            for policy in self.settings.policies
            if policy in self.runs.get(load, {})
        ]

    def table(self) -> pd.DataFrame:
        """:meth:`records` as a table, leading with the ratios to the bound and the best."""
        return pd.DataFrame(self.records())

    def jobs(self) -> pd.DataFrame:
        """One row per job, policy and load of every verified run (:func:`job_rows`)."""
        frames = []
        for load in self.settings.target_loads:
            for policy in self.settings.policies:
                result = self.runs.get(load, {}).get(policy)
                if result is None or result.status is not SolveStatus.FEASIBLE:
                    continue
                rows = self._job_rows(load, policy)
                frames.append(rows.assign(load=load, policy=policy))
        if not frames:
            return pd.DataFrame()
        table = pd.concat(frames, ignore_index=True)
        return table[
            ["load", "policy", *[c for c in table.columns if c not in ("load", "policy")]]
        ]

    def to_dict(self) -> StudyDocument:
        """One document: the settings, each load's trace and sandwiches, one record per
        policy and load."""
        return {
            "settings": {
                **dataclasses.asdict(self.settings),
                "slowdown_threshold_s": SLOWDOWN_THRESHOLD_S,
            },
            "interrupted": self.interrupted,
            "loads": [
                {
                    "target_load": load,
                    **self.replays[load].fields(),
                    "sandwiches": {
                        model: found.to_dict() for model, found in self.load_sandwiches(load)
                    },
                }
                for load in self.settings.target_loads
                if load in self.replays
            ],
            "records": self.records(),
            "fairness_groups": self.groups().to_dict("records"),
        }

    def groups(self) -> pd.DataFrame:
        """One row per load, policy, grouping (``user``, ``vc``) and group of every
        verified run, where the trace names them: jobs, mean JCT, mean and largest
        ``rho`` (:func:`group_fairness`)."""
        rows = []
        for load in self.settings.target_loads:
            for policy in self.settings.policies:
                result = self.runs.get(load, {}).get(policy)
                if result is None or result.status is not SolveStatus.FEASIBLE:
                    continue
                for grouping, groups in group_fairness(self._job_rows(load, policy)).items():
                    rows += [
                        {"load": load, "policy": policy, "grouping": grouping, "group": name,
                         **figures}
                        for name, figures in groups.items()
                    ]  # fmt: skip
        columns = ["load", "policy", "grouping", "group", *GroupFairness.__annotations__]
        return pd.DataFrame(rows, columns=columns)


def _run_policy(instance: Instance, policy: str, seed: int) -> Result:
    """One policy's run, checked by the verifier (no bound: the study's sandwich is it)."""
    from ddlsched.api import simulate

    return simulate(instance, policy, seed=seed, bound=False)


def _quiet_worker() -> None:
    """Workers leave Ctrl-C to the study, which stops them with SIGTERM: that ends a worker
    at once and silently (a forked worker would otherwise run the command line's handler,
    which prints a line of its own)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


Task = tuple[float | None, str, str]
"""``(load, "policy", policy name)`` or ``(load, "sandwiches", models joined by commas)``."""

Answer = Result | dict[str, "Sandwich"]
"""What a task returns: a policy's run, or each model's sandwich by model name."""


def _tasks(settings: StudySettings) -> list[Task]:
    """The sandwiches first (the longest), then the policies, load by load. A load's models
    share one task: problem A's upper side, computed first, serves the preemptive model's
    too (:func:`ddlsched.sandwich.study_sandwiches`), which a task per model would compute
    twice, at once, in two workers."""
    models = ",".join(settings.models())
    sandwiches = [] if settings.bounds == "none" else [
        (load, "sandwiches", models) for load in settings.target_loads
    ]  # fmt: skip
    runs = [(load, "policy", p) for load in settings.target_loads for p in settings.policies]
    return sandwiches + runs


def _call(
    task: Task,
    instance: Instance,
    settings: StudySettings,
    progress: Callable[[str], None] | None = None,
) -> Answer:
    """Run one task; ``progress`` gets a sandwich's lines."""
    from ddlsched.sandwich import study_sandwiches

    _, kind, name = task
    if kind == "policy":
        return _run_policy(instance, name, settings.seed)
    models = name.split(",")
    found = study_sandwiches(
        instance,
        models=tuple(model == "preemptive" for model in models),
        effort=settings.bounds,
        seed=settings.seed,
        progress=progress,
        cache=settings.cache,
    )
    return dict(zip(models, found, strict=True))


def _call_reporting(
    task: Task, instance: Instance, settings: StudySettings, lines: _LineQueue | None
) -> Answer:
    """:func:`_call` in a worker, its progress lines sent to the study through ``lines``."""
    return _call(task, instance, settings, None if lines is None else lines.put)


def run_study(
    replays: dict[float | None, TraceReplay],
    settings: StudySettings,
    progress: StudyProgress | None = None,
) -> TraceStudy:
    """Every task of ``settings`` on the replays, in worker processes (in this one for
    ``workers=1``); Ctrl-C keeps what finished (:attr:`TraceStudy.interrupted`).
    ``progress`` hears after each task what finished and what runs next, and a sandwich's
    own lines as they come."""
    study = TraceStudy(settings, replays, {load: {} for load in replays}, {})
    tasks = _tasks(settings)
    left = list(tasks)

    def store(task: Task, answer: Answer) -> None:
        load, _, name = task
        if isinstance(answer, Result):  # a policy's run, else the load's sandwiches
            study.runs[load][name] = answer
        else:
            study.sandwiches.setdefault(load, {}).update(answer)
        left.remove(task)
        if progress is not None:
            progress(f"{_task_text(task)} done; {_running(left, settings.workers)}",
                     len(tasks) - len(left), len(tasks))  # fmt: skip

    def phase(task: Task) -> Callable[[str], None] | None:
        if progress is None:
            return None
        return _phase(progress, task, len(tasks) - len(left), len(tasks))

    if progress is not None:
        progress(_running(left, settings.workers), 0, len(tasks))
    try:
        if settings.workers == 1:
            for task in tasks:
                store(task, _call(task, replays[task[0]].instance, settings, phase(task)))
        else:
            _in_pool(tasks, replays, settings, store, phase)
    except KeyboardInterrupt:
        study.interrupted = True
    return study


def _task_text(task: Task) -> str:
    load, kind, name = task
    what = f"sandwich {name.replace(',', ' and ')}" if kind == "sandwiches" else f"policy {name}"
    return f"{what} (load {_load_text(load)})"


def _running(left: list[Task], workers: int) -> str:
    """The tasks running now: the first ``workers`` of those left (a pool takes its tasks
    in the order given)."""
    if not left:
        return "all done"
    return "running " + ", ".join(_task_text(task) for task in left[:workers])


class _LineQueue(Protocol):
    """A queue of progress lines shared with the workers (a manager's queue)."""

    def put(self, line: str) -> None: ...

    def get_nowait(self) -> str: ...

    def empty(self) -> bool: ...


def _in_pool(
    tasks: list[Task],
    replays: dict[float | None, TraceReplay],
    settings: StudySettings,
    store: Callable[[Task, Answer], None],
    phase: Callable[[Task], Callable[[str], None] | None],
) -> None:
    """The tasks in a pool of ``settings.workers`` processes; a sandwich's progress lines
    come back through a queue and are passed on as its task's phase. On Ctrl-C the workers
    are stopped at once (a sandwich may have minutes left) and the interrupt re-raised."""
    from multiprocessing import Manager
    from queue import Empty

    manager = Manager()
    lines: _LineQueue = manager.Queue()
    pool = ProcessPoolExecutor(min(settings.workers, len(tasks)), initializer=_quiet_worker)
    futures: dict[Future[Answer], Task] = {}
    try:
        for task in tasks:
            talks = lines if task[1] == "sandwiches" else None
            instance = replays[task[0]].instance
            futures[pool.submit(_call_reporting, task, instance, settings, talks)] = task
        sandwich_task = next((task for task in tasks if task[1] == "sandwiches"), None)
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
            while sandwich_task is not None:
                try:
                    line = lines.get_nowait()
                except Empty:
                    break
                report = phase(_running_sandwich(tasks, futures, sandwich_task))
                if report is not None:
                    report(line)
            for future in sorted(finished, key=lambda f: tasks.index(futures[f])):
                store(futures[future], future.result())
    except BaseException:
        # The executor has no public way to stop a running task: its processes are.
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        manager.shutdown()
        raise
    pool.shutdown()
    manager.shutdown()


def _running_sandwich(tasks: list[Task], futures: dict[Future[Answer], Task], first: Task) -> Task:
    """The sandwich task running now: the first not yet done (loads run in order)."""
    done = {futures[f] for f in futures if f.done()}
    return next((t for t in tasks if t[1] == "sandwiches" and t not in done), first)


def _phase(progress: StudyProgress, task: Task, done: int, total: int) -> Callable[[str], None]:
    """A sandwich's progress lines as the study's phase."""
    return lambda line: progress(f"{_task_text(task)}: {line}", done, total)


def _load_text(load: float | None) -> str:
    return "as recorded" if load is None else f"{load:g}"


def trace_study(
    trace: str | os.PathLike[str],
    *,
    servers: int = 256,
    gpus_per_server: int = 8,
    gpu_types: Sequence[tuple[str, int]] | None = None,
    limit: int | None = None,
    target_loads: Sequence[float | None] = (None,),
    policies: Sequence[str] | None = None,
    bounds: str = "full",
    workers: int | None = None,
    seed: int = 0,
    progress: StudyProgress | None = None,
    cache: bool = True,
    unnamed: str | None = None,
    columns: dict[str, str] | str | None = None,
    time_unit: str | None = None,
    bandwidth_intra: float = 20.0,
    bandwidth_inter: float = 1.0,
) -> TraceStudy:
    """Every rigid policy replayed on ``trace`` at each load, side by side, each run checked
    by the verifier and measured against its model's lower bound (module docstring).

    Parameters
    ----------
    trace
        A CSV trace (a path or a shipped name such as ``"philly_jobs.csv"``), read as
        ``ddlsched simulate --trace`` reads it.
    servers, gpus_per_server, gpu_types, bandwidth_intra, bandwidth_inter
        The cluster (as :func:`read_trace`).
    limit, unnamed, columns, time_unit
        How the trace is read (as :func:`read_trace`).
    target_loads
        One study per load: the arrivals scaled to each offered load (``None``: as
        recorded).
    policies
        Names of :data:`~ddlsched.algorithms.registry.POLICIES` (default: all of them).
    bounds
        ``"full"``, ``"fast"`` or ``"none"`` (:data:`BOUNDS`).
    workers
        Worker processes (default: this machine's cores; 1: in this process).
    seed
        Seeds the policies, the trace's drawn models and the sandwiches' searches.
    progress
        Called as ``progress(phase, runs done, runs)`` after each run.
    cache
        Let the sandwiches read and keep cached answers.

    Returns
    -------
    TraceStudy
        With :meth:`~TraceStudy.table`, :meth:`~TraceStudy.jobs`,
        :attr:`~TraceStudy.sandwiches` and :meth:`~TraceStudy.to_dict`.

    Raises
    ------
    ValueError
        On an unknown or repeated policy, a load <= 0, unknown bounds or a bad count.
    InputError
        On a trace that cannot be read (naming the line and column) or a load it cannot
        reach.

    Examples
    --------
    >>> from ddlsched.experiments.trace_study import trace_study
    >>> study = trace_study("tiresias_60_job.csv", servers=2, gpus_per_server=8,
    ...                     policies=["fifo", "las"], bounds="fast", workers=1)
    >>> bool((study.table()["jct_over_lb"] >= 1).all())
    True
    """
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable, got {type(progress).__name__}")
    if isinstance(target_loads, str | bytes) or not isinstance(target_loads, Sequence):
        raise ValueError(
            f"target_loads: expected a list of loads (None: as recorded), got {target_loads!r}"
        )
    if not isinstance(trace, str | os.PathLike):
        raise TypeError(f"trace: expected a path, got {type(trace).__name__}")
    settings = StudySettings(
        policies=rigid_policy_names(policies),
        target_loads=tuple(target_loads),
        bounds=bounds,
        workers=(os.cpu_count() or 1) if workers is None else workers,
        seed=seed,
        cache=cache,
    )
    loaded, source = read_trace(
        trace,
        servers=servers,
        gpus_per_server=gpus_per_server,
        gpu_types=gpu_types,
        bandwidth_intra=bandwidth_intra,
        bandwidth_inter=bandwidth_inter,
        limit=limit,
        seed=seed,
        unnamed=unnamed,
        columns=columns,
        time_unit=time_unit,
    )
    replays = {load: at_load(loaded, source, load) for load in settings.target_loads}
    return run_study(replays, settings, progress)
