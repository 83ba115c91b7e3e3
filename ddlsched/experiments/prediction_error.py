"""Guided A-SRPT under prediction error: the bound checked, and the error study.

The checks of :mod:`ddlsched.proofs_checks.prediction` take a schedule; this module
makes them: it perturbs the true iteration counts within a factor ``1 + E``
(:func:`perturbed_predictions`), runs guided A-SRPT with those fixed
predictions (:func:`guided_schedule`) and hands the schedule, the
predictions, ``OPT(A)`` and ``rho`` to the checks (:func:`prediction_records`,
and :func:`worst_predictions`, a search over every extreme assignment on
small instances).

The study (:func:`error_study`) replays an instance, typically a trace
slice, with A-SRPT, SJF keyed by the same predictions, LAS (which needs
none) and FIFO at growing error, and keeps every job's JCT, so that the JCT
distribution per error level and the error at which LAS overtakes A-SRPT
(:meth:`ErrorStudy.crossover`) are computed, not read off a plot.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ddlsched.algorithms.mapping import FirstFitMapper
from ddlsched.algorithms.policies import StaticPriorityPolicy, tie_key
from ddlsched.algorithms.prediction.oracles import NoisyOraclePredictor
from ddlsched.algorithms.prediction.view import JobView
from ddlsched.algorithms.protocol import Policy
from ddlsched.api import simulate
from ddlsched.core.alpha import AlphaMinCache
from ddlsched.core.model import Cluster, Instance, Job, Schedule
from ddlsched.proofs_checks.bounds import RhoCheck
from ddlsched.proofs_checks.claims import Value
from ddlsched.proofs_checks.prediction import (
    PredictionRecord,
    prediction_instance_bound,
    prediction_theorem1,
)

PERTURBATIONS = ("over", "under", "random", "lognormal")
"""How :func:`perturbed_predictions` errs at level ``E``:

- ``over``: every ``K_hat = (1 + E) K`` (adversarial: ``a = 1 + E``, ``b = 1``);
- ``under``: every ``K_hat = K / (1 + E)`` (``a = 1``, ``b = 1 + E``);
- ``random``: ``K_hat = (1 + E)^u K`` with ``u`` uniform in ``[-1, 1]`` (seeded):
  over and under within ``1 + E``, uniform in log;
- ``lognormal``: the project's noisy oracle with ``sigma = ln(1 + E)``, one
  standard deviation a factor ``1 + E`` (unbounded: ``a`` and ``b`` as drawn).
"""

CHECKED_PERTURBATIONS = ("over", "under", "random")
"""The perturbations :func:`prediction_records` checks (each within ``1 + E``)."""

STUDY_POLICIES = ("asrpt", "asrpt-greedy", "sjf", "las", "fifo")
"""The policies of :func:`error_study`: guided and greedy A-SRPT and SJF with
the same predictions, LAS (needs none) and FIFO (needs none)."""

PREDICTION_FREE = ("las", "fifo")
"""Policies of :data:`STUDY_POLICIES` whose schedule does not depend on predictions."""


class FixedPredictor:
    """Predictions known in advance, one per job id (the same for every policy).

    Parameters
    ----------
    predictions
        ``K_hat`` per job id.
    """

    def __init__(self, predictions: Mapping[str, float]) -> None:
        self.predictions = dict(predictions)

    def predict(self, job: JobView) -> float:
        """The given ``K_hat`` of ``job``."""
        return self.predictions[job.id]

    def observe(self, job: JobView, iterations: int) -> None:
        """Nothing to learn: the predictions are fixed."""


def perturbed_predictions(
    instance: Instance, error: float, how: str = "random", seed: int = 0
) -> dict[str, float]:
    """``K_hat`` per job id: the true counts erring by ``error`` (``E``) as ``how`` says.

    Every prediction is at least one iteration, the floor the policies apply
    themselves, so the realised ``a`` and ``b`` are those of what the policy
    uses (a count of 1 under-predicted stays 1).

    Parameters
    ----------
    instance
        Source of the true counts.
    error
        ``E >= 0``; 0 gives the true counts.
    how
        One of :data:`PERTURBATIONS`.
    seed
        Seeds ``random`` and ``lognormal``.

    Raises
    ------
    ValueError
        On a negative or non-finite ``error`` or an unknown ``how``.
    """
    if not (math.isfinite(error) and error >= 0):
        raise ValueError(f"error: must be a finite number >= 0, got {error!r}")
    if how not in PERTURBATIONS:
        raise ValueError(f"how: expected one of {', '.join(PERTURBATIONS)}, got {how!r}")
    counts = np.array([job.iterations for job in instance.jobs], dtype=float)
    rng = np.random.default_rng(seed)
    if how == "over":
        predicted = counts * (1 + error)
    elif how == "under":
        predicted = counts / (1 + error)
    elif how == "random":
        predicted = counts * (1 + error) ** rng.uniform(-1.0, 1.0, len(counts))
    else:
        noisy = NoisyOraclePredictor(instance, math.log1p(error), rng)
        predicted = np.array([noisy.predict(JobView.of(job)) for job in instance.jobs])
    return {job.id: max(1.0, float(k)) for job, k in zip(instance.jobs, predicted, strict=True)}


def guided_schedule(instance: Instance, predictions: Mapping[str, float]) -> Schedule:
    """Guided A-SRPT's schedule with fixed ``predictions`` (``K_hat`` per job id)."""
    result = simulate(instance, "asrpt", predictor=FixedPredictor(predictions), bound=False)
    assert result.schedule is not None  # only an interrupted run has none
    return result.schedule


def prediction_records(
    instance: Instance,
    error: float,
    opt_a: Value,
    rho: RhoCheck,
    seed: int = 0,
    perturbations: Sequence[str] = CHECKED_PERTURBATIONS,
) -> list[PredictionRecord]:
    """The theorem and the instance bound (*), checked once per perturbation at level ``error``.

    Records are named ``prediction_theorem1[how]`` and
    ``prediction_instance_bound[how]``; ``opt_a`` and ``rho`` come from the
    caller (``check_instance`` has them), each with its exactness.
    """
    records: list[PredictionRecord] = []
    for how in perturbations:
        predictions = perturbed_predictions(instance, error, how, seed)
        schedule = guided_schedule(instance, predictions)
        label = f"{how} E={error:g}"
        records.append(prediction_theorem1(instance, schedule, predictions, opt_a, rho, label))
        records.append(prediction_instance_bound(instance, schedule, predictions, label))
    return records


def worst_predictions(
    instance: Instance,
    error: float,
    opt_a: Value,
    rho: RhoCheck,
    max_assignments: int = 729,
) -> tuple[PredictionRecord, dict[str, float]]:
    """The assignment of ``K_hat in {K/(1+E), K, (1+E) K}`` per job with the highest
    ``lhs / rhs`` of the theorem, by enumeration (``3^n`` guided runs).

    Returns
    -------
    record, predictions
        The theorem's record on the worst assignment (named
        ``prediction_theorem1[worst E=...]``), and that assignment.

    Raises
    ------
    ValueError
        If ``3^n`` exceeds ``max_assignments``.
    """
    count = 3**instance.num_jobs if error > 0 else 1
    if count > max_assignments:
        raise ValueError(
            f"max_assignments: {instance.num_jobs} jobs need {count} runs, "
            f"more than {max_assignments}"
        )
    factors = (1 / (1 + error), 1.0, 1 + error) if error > 0 else (1.0,)
    worst: tuple[PredictionRecord, dict[str, float]] | None = None
    for choice in itertools.product(factors, repeat=instance.num_jobs):
        predictions = {
            job.id: max(1.0, job.iterations * f)
            for job, f in zip(instance.jobs, choice, strict=True)
        }
        schedule = guided_schedule(instance, predictions)
        record = prediction_theorem1(
            instance, schedule, predictions, opt_a, rho, f"worst E={error:g}"
        )
        if worst is None or record.ratio > worst[0].ratio:
            worst = (record, predictions)
    assert worst is not None
    return worst


def under_prediction_family(
    under: float, head: int, smalls: int
) -> tuple[Instance, dict[str, float], float]:
    """The family on which the theorem's ``b`` term is attained (docs/prediction_bound.md).

    One GPU, no communication (``rho = 1``, ``kappa = 1``). A long job of
    ``under * head`` iterations (1 s each) is released at 0 and predicted to
    need ``head``; ``smalls`` one-iteration jobs, predicted exactly, are
    released at ``head``, the instant the long job completes on the virtual
    machine and starts for real. Guided A-SRPT makes every small job wait
    for the whole long job; the optimum runs them first. With ``a = 1`` the
    theorem allows ``2 + b``; the ratio tends to ``1 + b`` as ``head`` grows
    and ``smalls / head`` falls (but ``smalls`` grows).

    Returns
    -------
    instance, predictions, opt_a
        ``OPT(A)`` by enumeration: on one machine a schedule is fixed by its
        job order (each job as early as possible), the small jobs are
        interchangeable, so only the long job's position matters.
    """
    if not (under >= 1 and head >= 1 and smalls >= 1):
        raise ValueError(f"need under >= 1, head >= 1, smalls >= 1, got {under}, {head}, {smalls}")
    length = under * head
    if length != int(length):
        raise ValueError(f"under * head must be a whole number of iterations, got {length}")
    jobs = [Job(id="long", release=0.0, iterations=int(length), compute_time=1.0, gpus=1)]
    jobs += [
        Job(id=f"small{k}", release=float(head), iterations=1, compute_time=1.0, gpus=1)
        for k in range(smalls)
    ]
    instance = Instance(Cluster((1,), 1.0, 1.0), tuple(jobs))
    predictions = {job.id: float(job.iterations) for job in jobs}
    predictions["long"] = float(head)

    def total(before: int) -> float:
        now = cost = 0.0
        for job in ["small"] * before + ["long"] + ["small"] * (smalls - before):
            release, duration = (0.0, length) if job == "long" else (float(head), 1.0)
            now = max(now, release) + duration
            cost += now
        return cost

    return instance, predictions, min(total(k) for k in range(smalls + 1))


def study_policy(name: str, instance: Instance, predictor: FixedPredictor) -> Policy | str:
    """The policy ``name`` of :data:`STUDY_POLICIES`, using ``predictor`` where it predicts.

    ``sjf`` is built here: the registry's ``sjf`` reads the true counts, the
    study's orders by the *predicted* processing time ``K_hat alpha_min``
    (backfilling, first-fit mapping, as the registry's). The others are
    registry names (``simulate`` builds them with ``predictor``).
    """
    if name != "sjf":
        return name
    fastest = AlphaMinCache(instance.cluster)
    # The graph only (never the count) is read from the instance: alpha_min is
    # known at submission.
    by_id = {job.id: job for job in instance.jobs}
    return StaticPriorityPolicy(
        "sjf-predicted",
        instance.cluster,
        predictor,
        FirstFitMapper(),
        key=lambda job, k_hat: (tie_key(k_hat * fastest(by_id[job.id])[0]), job.release),
        backfill=True,
    )


@dataclass
class ErrorStudy:
    """JCTs per policy and error level (:func:`error_study`).

    Attributes
    ----------
    errors
        The error levels ``E``.
    jct
        ``jct[policy][E]``: every job's ``C - r`` (pooled over the seeds).
    """

    errors: tuple[float, ...]
    jct: dict[str, dict[float, np.ndarray]] = field(default_factory=dict)

    def summary(self, within: Sequence[float] = ()) -> pd.DataFrame:
        """Mean, median and 95th-percentile JCT per policy and ``E``; with
        ``within``, the share of jobs (%) completed within each of those seconds."""
        rows = []
        for policy, levels in self.jct.items():
            for error, values in levels.items():
                row: dict[str, object] = {
                    "policy": policy,
                    "error": error,
                    "mean_jct": float(np.mean(values)),
                    "p50_jct": float(np.percentile(values, 50)),
                    "p95_jct": float(np.percentile(values, 95)),
                }
                for seconds in within:
                    row[f"% within {seconds:g} s"] = 100 * float(np.mean(values <= seconds))
                rows.append(row)
        return pd.DataFrame(rows).set_index(["policy", "error"])

    def crossover(
        self, challenger: str = "las", incumbent: str = "asrpt", statistic: str = "mean_jct"
    ) -> float | None:
        """The least ``E`` at which ``challenger``'s ``statistic`` is below ``incumbent``'s
        (``None`` if it never is)."""
        table = self.summary()[statistic]
        for error in self.errors:
            if table[(challenger, error)] < table[(incumbent, error)]:
                return error
        return None

    def cdf_crossings(
        self, error: float, challenger: str = "las", incumbent: str = "asrpt"
    ) -> list[tuple[float, str]]:
        """Where the two JCT CDFs ("percentage of jobs completed within x") cross at
        level ``error``: ``(x, leader)`` each time the leader changes, the first
        entry the leader at the shortest JCT; ``leader`` completes more jobs within
        every x from there to the next entry."""
        ours, theirs = np.sort(self.jct[challenger][error]), np.sort(self.jct[incumbent][error])
        crossings: list[tuple[float, str]] = []
        for x in np.unique(np.concatenate([ours, theirs])):
            share = np.searchsorted(ours, x, "right") / len(ours)
            other = np.searchsorted(theirs, x, "right") / len(theirs)
            if share == other:
                continue
            leader = challenger if share > other else incumbent
            if not crossings or crossings[-1][1] != leader:
                crossings.append((float(x), leader))
        return crossings


def _completion_times(schedule: Schedule | None, releases: Mapping[str, float]) -> list[float]:
    """Every job's JCT ``C - r`` in a simulated schedule (which has every end)."""
    if schedule is None or any(entry.end is None for entry in schedule.jobs):
        raise RuntimeError("a simulation returned no complete schedule")
    return [entry.end - releases[entry.id] for entry in schedule.jobs if entry.end is not None]


def trace_slice(name: str, jobs: int, cluster: Cluster, load: float | None = 0.9) -> Instance:
    """The first ``jobs`` jobs of trace ``name`` (in ``traces/`` of the data folder) on
    ``cluster``, with arrivals scaled to offered ``load`` (``None``: as recorded)."""
    from ddlsched.core.data import data_path
    from ddlsched.core.offered_load import at_load
    from ddlsched.core.traces import load_trace

    instance = load_trace(data_path("traces", name), cluster, limit=jobs).instance
    return instance if load is None else at_load(instance, load)[0]


def error_study(
    instance: Instance,
    errors: Sequence[float],
    policies: Sequence[str] = STUDY_POLICIES,
    how: str = "random",
    seeds: Sequence[int] = (0,),
) -> ErrorStudy:
    """Replay ``instance`` with each of ``policies`` at each error level.

    Every policy that predicts gets the same predictions
    (:func:`perturbed_predictions` with ``how`` and each seed), so the
    policies differ only in how they use them. Policies that predict nothing
    (``las``, ``fifo``) run once and are repeated across levels.

    Parameters
    ----------
    instance
        The jobs (a trace slice, say) and cluster.
    errors
        Error levels ``E`` (0 is exact).
    policies
        Names of :data:`STUDY_POLICIES`.
    how
        One of :data:`PERTURBATIONS`.
    seeds
        One run per seed; JCTs are pooled.
    """
    unknown = set(policies) - set(STUDY_POLICIES)
    if unknown:
        raise ValueError(
            f"policies: {', '.join(sorted(unknown))} not in {', '.join(STUDY_POLICIES)}"
        )
    releases = {job.id: job.release for job in instance.jobs}
    study = ErrorStudy(tuple(errors))
    for policy in policies:
        study.jct[policy] = {}
        for error in errors:
            if policy in PREDICTION_FREE and study.jct[policy]:
                study.jct[policy][error] = next(iter(study.jct[policy].values()))
                continue
            runs = []
            for seed in seeds[:1] if policy in PREDICTION_FREE else seeds:
                predictor = FixedPredictor(perturbed_predictions(instance, error, how, seed))
                chosen = study_policy(policy, instance, predictor)
                result = simulate(
                    instance,
                    chosen,
                    predictor=predictor if isinstance(chosen, str) else None,
                    bound=False,
                )
                runs.append(_completion_times(result.schedule, releases))
            if policy in PREDICTION_FREE:
                runs *= len(seeds)  # the same run for every seed: pooled sizes match
            study.jct[policy][error] = np.concatenate(runs)
    return study
