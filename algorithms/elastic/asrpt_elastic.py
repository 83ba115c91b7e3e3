"""``asrpt-elastic``: Pollux's round weighted by SRPT on predicted remaining time, restarts priced.

A-SRPT (this project) serves the job with the least remaining work first. For
elastic jobs the remaining work is measured as **predicted remaining
goodput-time**: the seconds the job would still need on one GPU
(``AsrptElasticParams.reference_gpus``), summed epoch by epoch at each epoch's
best batch size (:class:`~ddlsched.algorithms.elastic.remaining.RemainingTime`).

**Each round** (:class:`AsrptElastic`), every active job ``j`` picks one
option ``c`` (0 GPUs, 1, 2, 4 GPUs on a node, or whole nodes:
:func:`~ddlsched.algorithms.elastic.policies.job_options`); the choice minimises

.. code-block:: text

   sum_j  w_j / (s_j(c) * f_j(c) + epsilon),      w_j = (R_j / L)^(-a)

subject to the cluster's GPUs, solved exactly as a multiple-choice knapsack by
HiGHS (:func:`~ddlsched.algorithms.elastic.round_milp.solve_choice`, as for
``pollux`` and ``sia``), then packed keeping unchanged jobs in place. Here:

- ``s_j(c)`` is Pollux's scaled speedup (Qiao et al., *Pollux*, OSDI 2021): the
  option's goodput over the goodput at the fair share ``ceil(M / J)``, over the
  GPUs per node. ``1 / s`` is the job's remaining time on the option relative to
  its remaining time at its fair share, so without weights the objective is
  Pollux's harmonic mean of speedups (which keeps every job running and its
  speedups even);
- ``w_j`` puts SRPT's order into it: ``R_j`` is the predicted remaining
  goodput-time at the reference width, ``L`` the round length (a unit only),
  ``a = srpt_power`` (1/2 by default). A shorter job's term counts more, so it
  gets GPUs first and wider widths; a long job still costs ``w_j / epsilon``
  when left without GPUs, so it keeps progressing at an efficient width;
- ``f_j(c)`` prices a restart for any option whose GPU count differs from the
  job's current one: Pollux's re-allocation factor (the share of the job's
  life not lost to restarts, :func:`~ddlsched.algorithms.elastic.policies.realloc_factor`)
  times ``T / (T + h * d * max(1, k / fair))``, with ``T`` the predicted
  remaining time on the option, ``d`` the restart delay, ``k`` its GPUs and
  ``h = restart_weight``. The first part of the second factor is the job's
  own loss (``d`` seconds added to ``T``: moving pays only when it gains
  more than that over the rest of the job's life); ``k / fair`` charges the
  ``d * k`` GPU-seconds the restart idles, counted in fair shares.

The weights are a heuristic: the purely completion-weighted objective
``sum_j goodput_j / remaining_j`` (the rate at which jobs complete) starves the
long jobs, which then finish late on a cluster they cannot use efficiently
(measured in ``docs/elastic.rst``); the square root balances the two.
**No guarantee** is claimed: the round's choice is exact for its objective,
not for the mean JCT.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from ddlsched.algorithms.elastic.policies import (
    ExactRound,
    JobOptions,
    OptionLimits,
    current_gpus,
    realloc_factor,
)
from ddlsched.algorithms.elastic.remaining import RemainingTime
from ddlsched.algorithms.elastic.simulator import JobState, RoundState

__all__ = ["AsrptElastic", "AsrptElasticParams", "asrpt_costs", "srpt_weight"]


@dataclass(frozen=True)
class AsrptElasticParams:
    """Settings of :class:`AsrptElastic`.

    Attributes
    ----------
    srpt_power
        ``a`` in the weight ``(R / L)^(-a)`` (0: Pollux's objective with
        restarts priced; larger: closer to SRPT).
    restart_weight
        ``h``: a restart counts as ``h * d`` seconds per fair share of GPUs it
        idles.
    reference_gpus
        The width at which the remaining goodput-time ``R`` is measured (the
        largest option not above it).
    epsilon
        Added to every scaled speedup (Pollux's 1e-3): a job without GPUs costs
        ``w / epsilon``.
    limits
        The options' caps (shared with Pollux and Sia).
    """

    srpt_power: float = 0.5
    restart_weight: float = 4.0
    reference_gpus: int = 1
    epsilon: float = 1e-3
    limits: OptionLimits = field(default_factory=OptionLimits)

    def __post_init__(self) -> None:
        checks = {
            "srpt_power": self.srpt_power >= 0 and math.isfinite(self.srpt_power),
            "restart_weight": self.restart_weight >= 0 and math.isfinite(self.restart_weight),
            "reference_gpus": self.reference_gpus >= 1,
            "epsilon": self.epsilon > 0 and math.isfinite(self.epsilon),
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(
                    f"AsrptElasticParams.{name} has a bad value {getattr(self, name)!r} "
                    f"(srpt_power, restart_weight >= 0; reference_gpus >= 1; epsilon > 0)"
                )


def srpt_weight(
    gpus: tuple[int, ...], seconds: np.ndarray, round_length: float, params: AsrptElasticParams
) -> float:
    """``w = (R / L)^(-a)``: ``R`` the remaining seconds at the reference width.

    The reference option is the largest with at most ``reference_gpus`` GPUs
    and a finite time (else the fastest option), so a job capped at fewer GPUs
    is measured at its cap.
    """
    usable = [
        float(t) for k, t in zip(gpus, seconds, strict=True)
        if 0 < k <= params.reference_gpus and math.isfinite(t)
    ]  # fmt: skip
    remaining = usable[-1] if usable else float(np.min(seconds[1:]))
    return float((max(remaining, 1e-9) / round_length) ** -params.srpt_power)


def asrpt_costs(
    job: JobState,
    options: JobOptions,
    seconds: np.ndarray,
    state: RoundState,
    params: AsrptElasticParams,
) -> tuple[float, ...]:
    """``w / (s * f + epsilon)`` per option (see the module docstring).

    Parameters
    ----------
    job, options
        The job and its options this round.
    seconds
        Its predicted remaining seconds per option
        (:meth:`~ddlsched.algorithms.elastic.remaining.RemainingTime.seconds`).
    state
        The round (cluster, number of jobs, restart delay, round length).
    params
        The weights' settings.
    """
    weight = srpt_weight(options.gpus, seconds, state.round_length, params)
    current = current_gpus(job)
    delay = state.restart_time
    age_factor = realloc_factor(job, delay)
    fair = math.ceil(state.cluster.total_gpus / len(state.jobs))
    costs = []
    for gpus, speedup, time in zip(options.gpus, options.speedup, seconds, strict=True):
        scaled = speedup / state.cluster.gpus_per_node
        if gpus != current and gpus > 0:
            idle = params.restart_weight * delay * max(1.0, gpus / fair)
            scaled *= age_factor * (time / (time + idle) if math.isfinite(time) else 1.0)
        costs.append(weight / (scaled + params.epsilon))
    return tuple(costs)


class AsrptElastic(ExactRound):
    """SRPT-weighted Pollux round with priced restarts, solved exactly (module docstring).

    Type-unaware, like ``pollux``: on a typed cluster it sees one pool of GPUs.

    Parameters
    ----------
    params
        The objective's settings.
    """

    name = "asrpt-elastic"
    params: AsrptElasticParams

    def __init__(self, params: AsrptElasticParams | None = None) -> None:
        self.params = params or AsrptElasticParams()
        self.remaining = RemainingTime(self.params.limits)

    def costs(self, job: JobState, options: JobOptions, state: RoundState) -> tuple[float, ...]:
        """This round's cost of each option of ``job``.

        Raises
        ------
        RuntimeError
            If the predictor's options differ from the round's (they come from
            the same :func:`~ddlsched.algorithms.elastic.policies.job_options`).
        """
        if self.remaining.gpus(job, state) != options.gpus:
            raise RuntimeError(f"asrpt-elastic: {job.job.name}: predicted options differ")
        return asrpt_costs(job, options, self.remaining.seconds(job, state), state, self.params)
