"""Guided A-SRPT with erroneous predictions: the bound, checked.

**The theorem** (unit weights). Let every job ``i`` have a prediction
``K_hat_i > 0``, fixed at its arrival, with over-prediction at most ``a`` and
under-prediction at most ``b``::

    K_hat_i <= a K_i   and   K_i <= b K_hat_i   for every i,   a, b >= 1.

Guided A-SRPT runs preemptive SRPT on the virtual machine with the sizes
``v_hat_i = g_i K_hat_i alpha_i^max / M``; job ``i`` joins the real queue at its
virtual completion ``C^V_i`` (computed with the predictions), the cluster
starts queued jobs strictly in ``C^V`` order as soon as the head's ``g_i`` GPUs
are free anywhere (no backfilling), with any mapping, and never preempts.
With ``kappa = M / (M - g_max + 1)`` and ``rho`` of :ref:`model-rho`::

    sum_i C_i <= [1 + a (1 + b kappa)] rho OPT(A).

At ``a = b = 1`` the factor is ``2 + kappa``, Theorem 1's.

Derivation (``v_i = g_i K_i alpha_i^max / M`` are the true sizes; ``j < i``
means that ``j`` starts before ``i`` in the real schedule):

1. Every job that starts before ``i`` has ``C^V_j <= C^V_i``: it was queued
   when it started, so ``C^V_j <= S_j``; if ``S_j < C^V_i`` that is it, and if
   ``S_j >= C^V_i`` then ``i`` was queued behind it, and the queue is ordered
   by ``C^V``. So ``i`` and every ``j < i`` had completed on the virtual
   machine by ``C^V_i``; it processes at unit rate from time 0, so
   ``v_hat_i + sum_{j < i} v_hat_j <= C^V_i``.
2. ``S_i >= C^V_i`` (``i`` is queued at ``C^V_i``). At any instant of
   ``[C^V_i, S_i)`` the queue is not empty and its head (``i`` or a job ahead
   of it) does not fit, for the cluster starts the head at once when it
   does; so at least ``M - g_max + 1`` GPUs are busy, all with jobs that
   started before ``i``.
3. Those jobs hold at most their total GPU time, ``sum_{j < i} g_j K_j
   alpha_j(x_j) <= sum_{j < i} g_j K_j alpha_j^max = M sum_{j < i} v_j <= M b
   sum_{j < i} v_hat_j``, since ``K_j <= b K_hat_j`` (claim 4 gives
   ``alpha <= alpha^max``). With 2 and 1: ``(M - g_max + 1)(S_i - C^V_i) <= M
   b (C^V_i - v_hat_i)``.
4. So ``S_i <= (1 + b kappa) C^V_i - b kappa v_hat_i`` and ``C_i = S_i + K_i
   alpha_i(x_i) <= S_i + K_i alpha_i^max``. Summing, with ``SRPT(v_hat) =
   sum_i C^V_i`` (any tie-breaking gives the same sum)::

       sum_i C_i <= (1 + b kappa) SRPT(v_hat) - b kappa sum_i v_hat_i
                    + sum_i K_i alpha_i^max                          (*)

   which is computable on every instance: :func:`instance_bound`.
5. ``SRPT(v_hat) = OPT_A2(v_hat) <= a OPT_A2(v)``: SRPT is optimal on one
   machine (claim 1); and stretching an optimal preemptive schedule of the
   true sizes by ``a`` in time (whatever ran at ``t`` runs at ``a t``) gives
   every job ``a v_j >= v_hat_j`` of processing, starting at ``a r_j >= r_j``
   (``a >= 1``, ``r_j >= 0``), completing by ``a C_j``; a job needing less
   leaves its surplus idle, so under-predicted jobs only help.
   ``OPT_A2(v) <= OPT(A1) <= rho OPT(A)`` (claims 2 and 3).
6. ``sum_i K_i alpha_i^max <= rho sum_i K_i alpha_i^min <= rho OPT(A)``: every
   job runs at least ``K_i alpha_i^min`` after ``r_i >= 0``.
7. Dropping the (non-positive) ``- b kappa sum v_hat`` of (*) and using 5 and 6
   gives the theorem.

Assumptions used: unit weights (step 5, SRPT's optimality); predictions
fixed at arrival (the code's adaptive rule only revises jobs that are
running, which in the guided mode have already completed on the virtual
machine: it leaves ``C^V`` unchanged); ``a, b`` the realised worst ratios
(floored at 1: a perfect prediction of every job is ``a = b = 1``); no
preemption, no backfilling, a head that starts whenever its GPU count is
free (placement ``any``); ``alpha^max`` bounds every mapping's ``alpha``.

The checks take the values a method produced (the guided schedule, the
predictions it used, ``OPT(A)``, ``rho``) and recompute the rest here:
feasibility and ``sum C`` through the verifier, ``alpha^max`` and the SRPT
total of the predicted sizes on their own, sharing no code with the policy.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from ddlsched.proofs_checks.bounds import RhoCheck, all_cut_time
from ddlsched.proofs_checks.claims import ClaimRecord, Value, inequality
from ddlsched.proofs_checks.verifier import verify

from ddlsched.core.model import Instance, Schedule


@dataclass(frozen=True)
class PredictionError:
    """The realised error of a set of predictions: ``a`` and ``b`` of the theorem.

    Attributes
    ----------
    over
        ``a = max(1, max_i K_hat_i / K_i)``, the worst over-prediction.
    under
        ``b = max(1, max_i K_i / K_hat_i)``, the worst under-prediction.
    """

    over: float
    under: float

    @classmethod
    def of(cls, instance: Instance, predictions: Mapping[str, float]) -> PredictionError:
        """The realised ``a`` and ``b`` of ``predictions`` (``K_hat`` per job id).

        Raises
        ------
        ValueError
            If a job has no prediction, or one that is not a positive finite number.
        """
        over = under = 1.0
        for job in instance.jobs:
            predicted = predictions.get(job.id)
            if (
                isinstance(predicted, bool)
                or not isinstance(predicted, int | float)
                or not math.isfinite(predicted)
                or predicted <= 0
            ):
                raise ValueError(
                    f"predictions: job {job.id!r} needs a positive finite K_hat, got {predicted!r}"
                )
            over = max(over, predicted / job.iterations)
            under = max(under, job.iterations / predicted)
        return cls(over, under)


def prediction_factor(num_gpus: int, max_job_gpus: int, over: float, under: float) -> float:
    """``1 + a (1 + b M / (M - g_max + 1))``, the factor on ``rho OPT(A)``.

    Parameters
    ----------
    num_gpus, max_job_gpus
        ``M`` and ``g_max``.
    over, under
        ``a`` and ``b`` (each at least 1).

    Raises
    ------
    ValueError
        If ``g_max`` is not in ``1..M`` or ``a`` or ``b`` is below 1.
    """
    if not 1 <= max_job_gpus <= num_gpus:
        raise ValueError(f"need 1 <= g_max <= M, got g_max={max_job_gpus}, M={num_gpus}")
    if not (over >= 1 and under >= 1):
        raise ValueError(f"need a, b >= 1, got a={over!r}, b={under!r}")
    kappa = num_gpus / (num_gpus - max_job_gpus + 1)
    return 1 + over * (1 + under * kappa)


def srpt_total(sizes: Sequence[float], releases: Sequence[float]) -> float:
    """``sum_i C_i`` of preemptive SRPT on one unit-speed machine.

    Written here again (not the policy's virtual machine): an event loop over
    releases and completions, the job with the least remaining size first.
    Ties do not matter: every SRPT schedule has the same total.
    """
    order = sorted(range(len(sizes)), key=lambda k: releases[k])
    waiting: list[tuple[float, int]] = []
    now = total = 0.0
    arrived = 0
    while arrived < len(order) or waiting:
        if not waiting:
            now = max(now, releases[order[arrived]])
        while arrived < len(order) and releases[order[arrived]] <= now:
            heapq.heappush(waiting, (sizes[order[arrived]], order[arrived]))
            arrived += 1
        remaining, job = heapq.heappop(waiting)
        next_release = releases[order[arrived]] if arrived < len(order) else math.inf
        if now + remaining <= next_release:
            now += remaining
            total += now
        else:
            heapq.heappush(waiting, (remaining - (next_release - now), job))
            now = next_release
    return total


def instance_bound(instance: Instance, predictions: Mapping[str, float]) -> float:
    """The right side of (*) in the module docstring, from the instance alone:
    ``(1 + b kappa) SRPT(v_hat) - b kappa sum v_hat + sum K alpha^max``.

    It needs no optimum, so it is conclusive on instances of any size.
    """
    cluster = instance.cluster
    error = PredictionError.of(instance, predictions)
    kappa = cluster.num_gpus / (cluster.num_gpus - instance.max_job_gpus + 1)
    highs = [all_cut_time(job, cluster) for job in instance.jobs]
    predicted_sizes = [
        job.gpus * predictions[job.id] * high / cluster.num_gpus
        for job, high in zip(instance.jobs, highs, strict=True)
    ]
    virtual = srpt_total(predicted_sizes, [job.release for job in instance.jobs])
    processing = math.fsum(
        job.iterations * high for job, high in zip(instance.jobs, highs, strict=True)
    )
    return (
        (1 + error.under * kappa) * virtual
        - error.under * kappa * math.fsum(predicted_sizes)
        + processing
    )


@dataclass(frozen=True)
class PredictionRecord(ClaimRecord):
    """A :class:`~ddlsched.proofs_checks.claims.ClaimRecord` with the realised error.

    Attributes
    ----------
    over, under
        ``a`` and ``b`` of the predictions the schedule was made with.
    instance_bound
        (*) of the module docstring on the instance.
    """

    over: float = 1.0
    under: float = 1.0
    instance_bound: float = math.nan

    def to_dict(self) -> dict[str, object]:
        """The ``check --json`` form, with ``a``, ``b`` and the instance bound."""
        finite = math.isfinite(self.instance_bound)
        return {
            **super().to_dict(),
            "over": self.over,
            "under": self.under,
            "instance_bound": self.instance_bound if finite else None,
        }


def _with_error(record: ClaimRecord, error: PredictionError, bound: float) -> PredictionRecord:
    """``record`` as a :class:`PredictionRecord` carrying ``a``, ``b`` and (*)."""
    parts = {field.name: getattr(record, field.name) for field in fields(ClaimRecord)}
    return PredictionRecord(**parts, over=error.over, under=error.under, instance_bound=bound)


def _label(name: str, label: str) -> str:
    return f"{name}[{label}]" if label else name


def _reasons(feasible: bool, unit: bool) -> list[str]:
    reasons = []
    if not feasible:
        reasons.append("schedule infeasible")
    if not unit:
        reasons.append("weights are not all 1")
    return reasons


def prediction_theorem1(
    instance: Instance,
    guided_schedule: Schedule,
    predictions: Mapping[str, float],
    opt_a: Value,
    rho: RhoCheck,
    label: str = "",
) -> PredictionRecord:
    """The theorem: guided A-SRPT's total (recomputed) within ``[1 + a (1 + b kappa)] rho OPT(A)``.

    Parameters
    ----------
    instance
        The instance (true iteration counts).
    guided_schedule
        Guided A-SRPT's schedule made with ``predictions``.
    predictions
        ``K_hat`` per job id: what the policy used (after its floor of one
        iteration); ``a`` and ``b`` are recomputed from them.
    opt_a, rho
        ``OPT(A)`` and ``rho``, each with its exactness.
    label
        Names the perturbation: the record is ``prediction_theorem1[label]``.

    Returns
    -------
    PredictionRecord
        Conclusive only with unit weights, a feasible schedule, an exact
        ``OPT(A)`` and an exact ``rho``; ``bound`` is the factor on ``OPT(A)``.
    """
    report = verify(instance, guided_schedule)
    error = PredictionError.of(instance, predictions)
    factor = prediction_factor(
        instance.cluster.num_gpus, instance.max_job_gpus, error.over, error.under
    )
    unit = all(job.weight == 1 for job in instance.jobs)
    reasons = _reasons(report.feasible, unit)
    if not rho.exact:
        reasons.append("rho is an upper bound")
    if not opt_a.exact:
        reasons.append("OPT(A) not proven")
    record = inequality(
        _label("prediction_theorem1", label),
        f"sum C(guided A-SRPT, a={error.over:.6g}, b={error.under:.6g}) "
        "<= (1 + a (1 + b M/(M - g_max + 1))) * rho * OPT(A)",
        report.total_completion_time,
        factor * rho.rho * opt_a.value,
        opt_a.exact and rho.exact and report.feasible and unit,
        bound=factor * rho.rho,
        detail="; ".join(reasons),
    )
    return _with_error(record, error, instance_bound(instance, predictions))


def prediction_instance_bound(
    instance: Instance,
    guided_schedule: Schedule,
    predictions: Mapping[str, float],
    label: str = "",
) -> PredictionRecord:
    """Step 4's instance-level bound (*): needs no optimum, so it is checked at any size.

    Conclusive with unit weights and a feasible schedule; ``bound`` is
    ``None`` (the right side is not a factor times a reference).
    """
    report = verify(instance, guided_schedule)
    error = PredictionError.of(instance, predictions)
    unit = all(job.weight == 1 for job in instance.jobs)
    bound = instance_bound(instance, predictions)
    record = inequality(
        _label("prediction_instance_bound", label),
        f"sum C(guided A-SRPT, b={error.under:.6g}) <= (1 + b kappa) SRPT(v_hat) "
        "- b kappa sum v_hat + sum K alpha_max",
        report.total_completion_time,
        bound,
        report.feasible and unit,
        detail="; ".join(_reasons(report.feasible, unit)),
    )
    return _with_error(record, error, bound)
