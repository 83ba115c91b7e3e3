"""Offered load, and replaying a trace at another load.

A comparison of policies on an idle cluster shows nothing: when no job ever
waits, every work-conserving policy gives the same schedule. The offered
load says how busy a replay is:

    load = sum_i g_i K_i alpha_i^min / (M * (r_max - r_min))

the GPU-seconds the jobs need at their fastest, over the GPU-seconds the
cluster offers while jobs arrive. Above 1 the cluster cannot keep up on
average; far below 1 queues rarely form. :func:`scale_arrivals` compresses
(factor > 1) or stretches inter-arrival times, which scales the load by the
factor and keeps every job as it is; :func:`at_load` picks the factor for a
target load.
"""

from __future__ import annotations

import math

from ddlsched.core.alpha import fastest_processing
from ddlsched.core.model import MAX_TIME, Instance


def offered_load(instance: Instance, search_budget: int = 2_000) -> float:
    """The offered load of ``instance`` (``inf`` when all jobs arrive at once)."""
    if not instance.jobs:
        return 0.0
    processing, _ = fastest_processing(instance, search_budget)
    work = math.fsum(job.gpus * p for job, p in zip(instance.jobs, processing, strict=True))
    releases = [job.release for job in instance.jobs]
    span = max(releases) - min(releases)
    return work / (instance.cluster.num_gpus * span) if span > 0 else math.inf


def scale_arrivals(instance: Instance, factor: float) -> Instance:
    """The same jobs with every release time ``r_min + (r_i - r_min) / factor``.

    Raises
    ------
    ValueError
        If ``factor`` is not a finite number > 0, or stretches a release past
        :data:`~ddlsched.core.model.MAX_TIME`.
    """
    if (
        isinstance(factor, bool)
        or not isinstance(factor, int | float)
        or not (math.isfinite(factor) and factor > 0)
    ):
        raise ValueError(f"factor: must be a finite number > 0, got {factor!r}")
    if factor == 1 or not instance.jobs:
        return instance
    first = min(job.release for job in instance.jobs)
    latest = first + (max(job.release for job in instance.jobs) - first) / factor
    if latest > MAX_TIME:
        raise ValueError(
            f"factor: {factor:g} stretches the arrivals so that the last job arrives at "
            f"{latest:g} s, beyond the limit of {MAX_TIME:g} s for a release"
        )
    jobs = tuple(
        job.replace(release=first + (job.release - first) / factor) for job in instance.jobs
    )
    return instance.replace(jobs=jobs)


def at_load(instance: Instance, target: float) -> tuple[Instance, float]:
    """``instance`` with arrivals scaled to offered load ``target``; returns it and the factor.

    Raises
    ------
    ValueError
        If ``target`` is not > 0, or the load cannot be changed (all jobs
        arrive at once).
    """
    if (
        isinstance(target, bool)
        or not isinstance(target, int | float)
        or not (math.isfinite(target) and target > 0)
    ):
        raise ValueError(f"target load: must be a finite number > 0, got {target!r}")
    current = offered_load(instance)
    if not math.isfinite(current) or current == 0:
        raise ValueError("target load: every job arrives at once, so arrivals cannot be scaled")
    factor = target / current
    return scale_arrivals(instance, factor), factor
