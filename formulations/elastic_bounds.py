"""A lower bound on the total JCT of any run of an elastic workload, at trace scale.

Every result carries a flow-time certificate. For the elastic simulator
(:func:`ddlsched.algorithms.elastic.simulator.simulate_elastic`),
:mod:`ddlsched.formulations.elastic`
gives one only on one-epoch toy instances, and its rates are the best of the
configurations the policies try, so a policy that tried another batch size could
beat it. The bound here holds for **every allocation the simulator accepts**:
any placement within the cluster, any micro-batch ``a >= 1`` and accumulation
``k >= 0``, resized at any round, with Pollux's goodput model (Qiao et al.,
"Pollux: Co-adaptive Cluster Scheduling for Goodput-Optimized Deep Learning",
OSDI 2021) as :meth:`ddlsched.core.elastic.Application.goodput` computes it.

**Goodput ceilings.** With ``M`` examples per iteration on ``R`` GPUs (micro-batch
``a``, ``k`` accumulation steps, ``M = R a (k + 1)``), the progress per iteration is
``gain(M) = (t + 1) / (t M0 / M + 1)``, ``t = grad_var / grad_sqr`` of the epoch at ``M``
(interpolated between the measured batch sizes, clamped outside them), and an iteration
takes ``k g(a) + (g(a)^gamma + sync^gamma)^(1/gamma)`` with ``g(a) = alpha_grad +
beta_grad a``. For a given ``M`` and ``R`` that time is least without accumulation (by the
triangle inequality of the ``gamma``-norm), so it is at least ``((alpha_grad + beta_grad M /
R)^gamma + s_R^gamma)^(1/gamma)``, ``s_R`` the lesser synchronisation time of ``R`` GPUs on
one node or several (0 for one GPU). The job's ceiling is the supremum of ``gain(M)`` over
that time, over ``R`` up to the cluster's GPUs and every ``M >= R``; per GPU, that of
``gain(M) / (alpha_grad + beta_grad M)`` (``R`` times the time is at least it). Both are
bounded on a geometric grid of ``M`` (:data:`GRID_STEP`): in a cell ``gain`` is at most its
value at the cell's largest ``M`` with the worse of the cell's end ratios ``t`` (a ratio of
two linear interpolations is monotone between measured sizes), and the time at least its
value at the cell's smallest ``M``; beyond the grid, ``gain <= 1 + t``.

**Per-job floor.** A job arriving at ``r`` first runs in the first round at or after
``r`` (rounds start at multiples of the round length), spends the restart time
without progress, then needs at least ``sum_e work_e / ceiling_e`` seconds (epoch
``e``'s progress at its ceiling): ``C - r >= wait + restart + that``.

**Squashed area.** The same work needs at least ``restart + sum_e work_e /
per_gpu_ceiling_e`` GPU-seconds (at least one GPU is held during the restart).
Shared by the cluster's ``G`` GPUs as one machine of speed ``G``, preemptive SRPT
from the first rounds gives the least total completion time
(:func:`ddlsched.core.virtual.srpt`), a lower bound on any run's.

**Combined rank by rank.** Every run maps to a processor-sharing schedule of the
squashed machine in which each job completes when it does in the run (its GPU-seconds,
at least its area, processed after its first round), so the run's completion times,
sorted, dominate SRPT's sorted completions rank by rank; and each job completes after
``r + floor``. :func:`ddlsched.core.virtual.rank_combined` gives the least total of
completion times meeting both, ``sum_k max(floor_(k), s_(k))`` with both lists sorted:
the bound is that, minus the releases, at least each part alone. It charges per-job
speed and queueing together only through the ranks; the time-indexed relaxation of
:mod:`ddlsched.formulations.elastic_lp` also trades a job's speed against its
GPU-seconds. Valid for the model as simulated, not for other goodput models or restart
rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.core.elastic import Application, ElasticJob, load_application
from ddlsched.core.virtual import rank_combined, srpt

SAFETY = 1.0 - 1e-9
"""The bound is multiplied by this, so rounding never lifts it above a run's flow time."""


GRID_STEP = 1.02
"""Ratio between consecutive total batch sizes of the grid on which the ceilings are
bounded (each cell's bound holds for every batch size inside it, so the grid only decides
how close the ceiling comes to the true supremum: within about 2 %; 1.01 took 13 times
as long on workload 6 for 0.5 % more bound)."""

TAIL = 1e4
"""The grid runs to ``TAIL`` times the largest measured (or allocated) batch size; one
bound covers everything beyond it."""


CURVE_CHUNK = 64
"""GPU counts in the first chunk of :func:`rate_curve` (then doubling)."""

MOST_CURVE_GPUS = 2**14
"""Most GPU counts :func:`rate_curve` computes; a model whose ceiling still rises past it
(synchronisation that does not grow with the GPUs) is refused on a larger cluster."""


def _cell_gains(app: Application, row: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Upper bounds on ``gain(M)`` for every ``M`` in each cell ``[low, high]``.

    ``gain = (t + 1) / (t M0 / M + 1)`` with ``t = grad_var / grad_sqr``: increasing in
    ``M``; in ``t`` increasing when ``M > M0`` and decreasing when ``M < M0``. The cells
    never straddle a measured batch size, so ``t`` is monotone inside each (a ratio of two
    linear interpolations lies between its end values), and the bound takes the worse end.
    With a ``grad_sqr`` of 0, ``gain <= max(M / M0, 1)``."""
    sizes = app.batch_sizes.astype(float)
    sqr, var = app.grad_sqr[:, row], app.grad_var[:, row]
    m0 = float(app.init_batch_size)
    if np.any(sqr <= 0):
        return np.maximum(high / m0, 1.0)

    def ratio(batch: np.ndarray) -> np.ndarray:
        clipped = np.clip(batch, sizes[0], sizes[-1])
        return np.interp(clipped, sizes, var) / np.interp(clipped, sizes, sqr)

    ends = np.stack([ratio(low), ratio(high)])
    gains = (ends + 1.0) / (ends * m0 / high + 1.0)
    return np.asarray(gains.max(axis=0), dtype=float)


def _sync_floor(app: Application, replicas: np.ndarray) -> np.ndarray:
    """The least synchronisation time of ``replicas`` GPUs on one node or several (0 for
    one GPU)."""
    one_node, two_nodes = app.perf.sync_time(1, replicas), app.perf.sync_time(2, replicas)
    return np.asarray(np.minimum(one_node, two_nodes), dtype=float)


def _grid(app: Application, stop: float) -> tuple[np.ndarray, np.ndarray]:
    """The cells ``[low, high]`` of the geometric grid of total batch sizes from 1 to
    ``stop`` (:data:`GRID_STEP`), cut at every measured batch size."""
    points = np.exp(np.arange(0.0, math.log(stop), math.log(GRID_STEP)))
    points = np.unique(np.concatenate((points, app.batch_sizes.astype(float), [1.0, stop])))
    points = points[points <= stop]
    return points[:-1], points[1:]


def _rate_ceilings(
    app: Application, row: int, replicas: np.ndarray, sync: np.ndarray
) -> np.ndarray:
    """For each ``R`` of ``replicas`` (with the synchronisation floor ``sync``), an upper
    bound on ``gain(M) / ((alpha + beta M / R)^gamma + sync^gamma)^(1 / gamma)`` over every
    total batch ``M >= R``: the least time of an iteration of ``M`` examples on ``R`` GPUs
    (module docstring), bounded cell by cell on a geometric grid of ``M``, and by one
    bound beyond the grid."""
    perf = app.perf
    alpha, beta, gamma = perf.alpha_grad, perf.beta_grad, perf.gamma
    stop = TAIL * max(float(app.batch_sizes[-1]), float(replicas.max()))
    low, high = _grid(app, stop)
    gains = _cell_gains(app, row, low, high)
    width = replicas.astype(float)[:, None]
    least = np.maximum(low[None, :], width)  # the smallest batch of the cell on R GPUs
    floor = ((alpha + beta * least / width) ** gamma + sync[:, None] ** gamma) ** (1 / gamma)
    with np.errstate(divide="ignore"):
        cells = np.where(high[None, :] >= width, gains[None, :] / floor, 0.0).max(axis=1)
        beyond = float(_cell_gains(app, row, np.array([stop]), np.array([math.inf]))[0])
        end = ((alpha + beta * stop / width[:, 0]) ** gamma + sync**gamma) ** (1 / gamma)
        tail = beyond / end
    return np.asarray(np.maximum(cells, tail), dtype=float)


def _wide_ceiling(app: Application, row: int, replicas: int) -> float:
    """An upper bound on the progress per second of every allocation of ``replicas`` or
    more GPUs (at least 2): the largest ``gain`` of any batch over the least iteration
    time of any ``R >= replicas``, ``((alpha + beta)^gamma + s_replicas^gamma)^(1 /
    gamma)`` (``M >= R`` and the synchronisation time never falls as ``R`` grows, its
    coefficients being non-negative)."""
    perf = app.perf
    stop = TAIL * float(app.batch_sizes[-1])
    low, high = _grid(app, stop)
    gain = max(
        float(_cell_gains(app, row, low, high).max()),
        float(_cell_gains(app, row, np.array([stop]), np.array([math.inf]))[0]),
    )
    sync = float(_sync_floor(app, np.array([replicas]))[0])
    least = ((perf.alpha_grad + perf.beta_grad) ** perf.gamma + sync**perf.gamma) ** (
        1 / perf.gamma
    )
    return gain / least if least > 0 else math.inf


def _statistics_row(app: Application, epoch: int) -> int:
    """The row of gradient statistics of ``epoch`` (the last row past the measured ones).

    Raises
    ------
    ValueError
        If the gradient statistics are negative (the ceilings assume they are not).
    """
    if np.any(app.grad_sqr < 0) or np.any(app.grad_var < 0):
        raise ValueError(f"{app.name}: negative gradient statistics; no goodput ceiling")
    return min(epoch, app.grad_sqr.shape[1] - 1)


def rate_curve(app: Application, epoch: int, most_gpus: int) -> np.ndarray:
    """Upper bounds on the progress per second of ``app`` during ``epoch`` (0-based) on
    ``R`` GPUs, for ``R = 1 .. K`` (entry ``R - 1``), over every placement and batch
    configuration of ``R`` GPUs (module docstring); each is also at most ``R`` times the
    per-GPU ceiling.

    ``K`` is ``most_gpus``, or fewer where more GPUs cannot beat the curve: the entries
    are computed in chunks of doubling size (:data:`CURVE_CHUNK` first), and stop once
    :func:`_wide_ceiling` shows that no allocation of ``K + 1`` or more GPUs can exceed
    the curve's maximum. So a cluster of millions of GPUs costs what the model's
    synchronisation allows, not its size.

    Raises
    ------
    ValueError
        If the gradient statistics are negative (the ceilings assume they are not), or
        if no cut is found within :data:`MOST_CURVE_GPUS` GPUs.
    """
    row = _statistics_row(app, epoch)
    per_gpu = float(_rate_ceilings(app, row, np.array([1]), np.zeros(1))[0])
    pieces: list[np.ndarray] = []
    done, best = 0, 0.0
    while done < most_gpus:
        if done >= MOST_CURVE_GPUS:
            raise ValueError(
                f"rate_curve: {app.name}: more GPUs keep raising the goodput ceiling past "
                f"{MOST_CURVE_GPUS} GPUs (the limit); got a cluster of {most_gpus}"
            )
        replicas = np.arange(done + 1, min(most_gpus, max(2 * done, CURVE_CHUNK)) + 1)
        ceilings = _rate_ceilings(app, row, replicas, _sync_floor(app, replicas))
        pieces.append(np.minimum(ceilings, per_gpu * replicas))
        done, best = int(replicas[-1]), max(best, float(pieces[-1].max()))
        if done < most_gpus and _wide_ceiling(app, row, done + 1) <= best:
            break
    return np.asarray(np.concatenate(pieces), dtype=float)


def goodput_ceilings(app: Application, epoch: int, most_gpus: int) -> tuple[float, float]:
    """``(job, per_gpu)``: upper bounds on the progress per second of ``app`` during
    ``epoch`` (0-based), on any allocation of at most ``most_gpus`` GPUs, and on that
    progress divided by the allocation's GPUs (module docstring).

    Raises
    ------
    ValueError
        If the gradient statistics are negative (the ceilings assume they are not).
    """
    row = _statistics_row(app, epoch)
    per_gpu = float(_rate_ceilings(app, row, np.array([1]), np.zeros(1))[0])
    return float(rate_curve(app, epoch, most_gpus).max()), per_gpu


@dataclass(frozen=True)
class ElasticFlowBound:
    """A lower bound on ``sum_j (C_j - r_j)`` of any run, with its parts.

    Attributes
    ----------
    value
        The bound (the rank-by-rank combination, made safe by :data:`SAFETY`); ``0``
        if the ceilings are infinite for every job.
    per_job
        The sum of the per-job floors.
    squashed
        SRPT's total on the squashed machine, minus the releases.
    combined
        The floors and SRPT's completions combined rank by rank, minus the releases
        (at least each of the two).
    """

    value: float
    per_job: float
    squashed: float
    combined: float = 0.0


@dataclass(frozen=True)
class JobNeeds:
    """What one job needs in any run, from its goodput ceilings.

    Attributes
    ----------
    start
        Its first round (s): no GPU works for it before.
    floor
        The least seconds from :attr:`start` to its completion: the restart, then its
        epochs at their job ceilings.
    area
        The least GPU-seconds it holds: the restart on one GPU, then its epochs at
        their per-GPU ceilings.
    """

    start: float
    floor: float
    area: float


def first_round(release: float, round_length: float) -> float:
    """The first round start at or after ``release``, as the simulator finds it (the least
    ``index * round_length`` that is ``>= release``)."""
    index = max(0, math.ceil(release / round_length))
    while index > 0 and (index - 1) * round_length >= release:
        index -= 1
    while index * round_length < release:
        index += 1
    return index * round_length


def check_bound_settings(
    name: str, total_gpus: int, round_length: float, restart_time: float
) -> None:
    """Refuse a cluster without GPUs, rounds of no length or a negative restart, in one line
    naming the bound ``name`` and the three values."""
    if total_gpus < 1 or not round_length > 0 or not restart_time >= 0:
        raise ValueError(
            f"{name}: total_gpus {total_gpus}, round_length {round_length}, "
            f"restart_time {restart_time}"
        )


def job_needs(
    jobs: Sequence[ElasticJob],
    total_gpus: int,
    round_length: float,
    restart_time: float,
    applications: Sequence[Application],
) -> list[JobNeeds]:
    """Each job's first round, floor and least area (module docstring), in order."""
    needs = []
    ceilings: dict[tuple[int, int], tuple[float, float]] = {}
    for job, app in zip(jobs, applications, strict=True):
        works = np.diff(np.concatenate(([0.0], app.epoch_ends[: app.epochs])))
        seconds, gpu_seconds = restart_time, restart_time
        for epoch, work in enumerate(works):
            key = (id(app), min(epoch, app.grad_sqr.shape[1] - 1))
            if key not in ceilings:  # jobs of one model share their rows
                ceilings[key] = goodput_ceilings(app, epoch, total_gpus)
            job_ceiling, gpu_ceiling = ceilings[key]
            seconds += float(work) / job_ceiling
            gpu_seconds += float(work) / gpu_ceiling
        needs.append(JobNeeds(first_round(job.submit_time, round_length), seconds, gpu_seconds))
    return needs


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
    model and epoch budget).

    Raises
    ------
    ValueError
        On a cluster without GPUs, rounds of no length, a negative restart, or
        ``applications`` that do not match ``jobs`` one to one.
    """
    if not jobs:
        return ElasticFlowBound(0.0, 0.0, 0.0, 0.0)
    check_bound_settings("elastic_flow_bound", total_gpus, round_length, restart_time)
    apps = applications or [load_application(job.model, job.epochs) for job in jobs]
    needs = job_needs(jobs, total_gpus, round_length, restart_time, apps)
    starts = [need.start for need in needs]
    completions, _ = srpt([need.area / total_gpus for need in needs], starts)
    finishes = [completions[str(k)] for k in range(len(jobs))]
    released = math.fsum(job.submit_time for job in jobs)
    squashed = math.fsum(finishes) - released
    floors = [need.start + need.floor for need in needs]
    per_job = math.fsum(floors) - released
    combined = math.fsum(rank_combined(floors, finishes)) - released
    best = max(per_job, squashed, combined)
    return ElasticFlowBound(best * SAFETY, per_job, squashed, combined)
