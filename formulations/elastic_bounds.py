"""A lower bound on the total JCT of any run of an elastic workload, at trace scale.

Issue 25 asks every result for a flow-time certificate; the elastic simulator
(:func:`algorithms.elastic.simulator.simulate_elastic`) had none beyond one-epoch
toy instances (:mod:`formulations.elastic`, whose rates are the best of the
configurations the policies try, so a policy that tried another batch size could
beat it). The bound here holds for **every allocation the simulator accepts**:
any placement within the cluster, any micro-batch ``a >= 1`` and accumulation
``k >= 0``, resized at any round, with Pollux's goodput model (Qiao et al.,
"Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning",
OSDI 2021) as :meth:`ddlsched.core.elastic.Application.goodput` computes it.

**Goodput ceilings.** With ``M = R a (k + 1)`` examples per iteration on ``R``
GPUs, ``scale = M / M0`` and the gradient statistics ``s`` (``grad_sqr``) and
``v`` (``grad_var``) of the epoch, the progress per iteration is
``gain = (v + s) / (v / scale + s)``, at most ``max(scale, 1)`` and at most
``1 + v / s`` (``v, s >= 0``); the statistics are linear interpolations of the
measured rows, so ``v / s`` is at most its largest measured value (a mediant).
An iteration takes at least ``(k + 1) g(a)`` seconds, ``g(a) = alpha_grad +
beta_grad a`` (the synchronised step is at least one micro-batch's compute).
Hence, for one job (``R`` at most the cluster's GPUs):

* ``rate <= min(max(R_max / (M0 beta_grad), 1 / g(1)), (1 + max v/s) / g(1))``;
* per GPU, ``rate / R <= min(max(1 / (M0 beta_grad), 1 / g(1)), (1 + max v/s) / g(1))``
  (``a / g(a) < 1 / beta_grad``).

**Per-job floor.** A job arriving at ``r`` first runs in the first round at or after
``r`` (rounds start at multiples of the round length), spends the restart time
without progress, then needs at least ``sum_e work_e / ceiling_e`` seconds (epoch
``e``'s progress at its ceiling): ``C - r >= wait + restart + that``.

**Squashed area.** The same work needs at least ``restart + sum_e work_e /
per_gpu_ceiling_e`` GPU-seconds (at least one GPU is held during the restart).
Shared by the cluster's ``G`` GPUs as one machine of speed ``G``, preemptive SRPT
from the first rounds gives the least total completion time
(:func:`ddlsched.core.virtual.srpt`), a lower bound on any run's.

The bound is the larger of the two totals, minus the releases. It is weak where
jobs could in principle scale far (the ceilings ignore synchronisation, which is
what limits scaling in practice) and on light loads; it is valid for the model
as simulated, not for other goodput models or restart rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.core.elastic import Application, ElasticJob, load_application
from ddlsched.core.virtual import srpt

SAFETY = 1.0 - 1e-9
"""The bound is multiplied by this, so rounding never lifts it above a run's flow time."""


def _noise_ratio(app: Application, epoch: int) -> float:
    """The largest measured ``grad_var / grad_sqr`` of ``epoch``'s row (``inf`` if a
    ``grad_sqr`` is 0)."""
    row = min(epoch, app.grad_sqr.shape[1] - 1)
    sqr, var = app.grad_sqr[:, row], app.grad_var[:, row]
    if np.any(sqr <= 0):
        return math.inf
    return float(np.max(var / sqr))


def goodput_ceilings(app: Application, epoch: int, most_gpus: int) -> tuple[float, float]:
    """``(job, per_gpu)``: upper bounds on the progress per second of ``app`` during
    ``epoch`` (0-based), on any allocation of at most ``most_gpus`` GPUs, and on that
    progress divided by the allocation's GPUs (module docstring).

    Raises
    ------
    ValueError
        If the gradient statistics are negative (the ceilings assume they are not).
    """
    if np.any(app.grad_sqr < 0) or np.any(app.grad_var < 0):
        raise ValueError(f"{app.name}: negative gradient statistics; no goodput ceiling")
    perf = app.perf
    one = perf.alpha_grad + perf.beta_grad  # g(1), the least micro-batch time
    m0 = app.init_batch_size
    ratio = 1.0 + _noise_ratio(app, epoch)
    by_scale = math.inf if perf.beta_grad == 0 else 1.0 / (m0 * perf.beta_grad)
    small = math.inf if one == 0 else 1.0 / one  # scale < 1: gain <= 1
    by_noise = math.inf if one == 0 else ratio / one
    job = min(max(most_gpus * by_scale, small), by_noise)
    per_gpu = min(max(by_scale, small), by_noise)
    return job, per_gpu


@dataclass(frozen=True)
class ElasticFlowBound:
    """A lower bound on ``sum_j (C_j - r_j)`` of any run, with its two parts.

    Attributes
    ----------
    value
        The bound (the larger part, made safe by :data:`SAFETY`); ``0`` if the
        ceilings are infinite for every job.
    per_job
        The sum of the per-job floors.
    squashed
        SRPT's total on the squashed machine, minus the releases.
    """

    value: float
    per_job: float
    squashed: float


def first_round(release: float, round_length: float) -> float:
    """The first round start at or after ``release``, as the simulator finds it (the least
    ``index * round_length`` that is ``>= release``)."""
    index = max(0, math.ceil(release / round_length))
    while index > 0 and (index - 1) * round_length >= release:
        index -= 1
    while index * round_length < release:
        index += 1
    return index * round_length


def elastic_flow_bound(
    jobs: Sequence[ElasticJob],
    total_gpus: int,
    round_length: float = 60.0,
    restart_time: float = 30.0,
    applications: Sequence[Application] | None = None,
) -> ElasticFlowBound:
    """A lower bound on the total JCT of any simulated run of ``jobs`` on ``total_gpus``
    GPUs with rounds of ``round_length`` seconds and restarts of ``restart_time`` (module
    docstring). ``applications``: each job's :class:`Application` (default: loaded for its
    model and epoch budget)."""
    if not jobs:
        return ElasticFlowBound(0.0, 0.0, 0.0)
    if total_gpus < 1 or not round_length > 0 or not restart_time >= 0:
        raise ValueError(
            f"elastic_flow_bound: total_gpus {total_gpus}, round_length {round_length}, "
            f"restart_time {restart_time}"
        )
    apps = applications or [load_application(job.model, job.epochs) for job in jobs]
    floors, areas, starts = [], [], []
    for job, app in zip(jobs, apps, strict=True):
        begin = first_round(job.submit_time, round_length)
        ends = app.epoch_ends[: app.epochs]
        works = np.diff(np.concatenate(([0.0], ends)))
        seconds, gpu_seconds = restart_time, restart_time
        for epoch, work in enumerate(works):
            job_ceiling, gpu_ceiling = goodput_ceilings(app, epoch, total_gpus)
            seconds += float(work) / job_ceiling
            gpu_seconds += float(work) / gpu_ceiling
        floors.append(begin - job.submit_time + seconds)
        areas.append(gpu_seconds / total_gpus)
        starts.append(begin)
    completions, _ = srpt(areas, starts)
    squashed = math.fsum(completions[str(k)] for k in range(len(jobs)))
    squashed -= math.fsum(job.submit_time for job in jobs)
    per_job = math.fsum(floors)
    return ElasticFlowBound(max(per_job, squashed) * SAFETY, per_job, squashed)
