"""``asrpt-elastic``: A-SRPT's order with heSRPT's goodput-aware widths.

A-SRPT (this project) orders jobs by remaining work, shortest first. For
elastic jobs the work must be measured in time at some width; here it is the
**remaining progress over the goodput at one GPU** (the reference width,
``AsrptElasticParams.reference_gpus``), i.e. how long the job would still
take alone on one GPU at its current epoch's best batch size.

**Widths: heSRPT.** Berg, Vesilo and Harchol-Balter (*heSRPT: Parallel
scheduling to minimize mean slowdown*, Performance 2020; and the mean
flow-time result in *Optimal scheduling of parallel jobs with known sizes*,
the same authors) solve the following fluid problem exactly: ``N`` servers,
divisible among jobs; every job has the speedup ``s(k) = k^p`` on ``k``
servers, ``0 < p < 1``, the same ``p`` for all; sizes known; all jobs present
at time 0, no arrivals; no cost to change allocations. Minimising the total
flow time, the optimal policy completes jobs in SRPT order and, while ``m``
jobs remain, gives the job of rank ``i`` in *decreasing* size order
(``i = m`` the shortest) the fraction

.. code-block:: text

   theta_i = (i / m)^(1 / (1 - p)) - ((i - 1) / m)^(1 / (1 - p))

of the servers: shorter jobs get more, but every job gets some. The fractions
depend on the ranks only, not on the sizes. (For ``p -> 1`` the shortest gets
everything: SRPT; for ``p -> 0`` the shares even out.)

**Our rule, each round** (:class:`AsrptElastic`):

1. per job, the options of :func:`~ddlsched.algorithms.elastic.policies.job_options`
   with their goodputs; the speedup ``s(k) = goodput(k) / goodput(1)``;
2. per job, ``p_j``: the least-squares slope of ``log s(k)`` on ``log k``
   through the origin over its options with ``k > 1``, clipped to
   ``exponent_range``; the round's ``p`` is the mean of the ``p_j`` (the
   closed form needs one exponent; a job with a single option does not vote);
3. SRPT order on the remaining work at the reference width (ties by
   submission, then name); heSRPT's fractions ``theta`` give targets
   ``theta * M`` GPUs;
4. discretise, shortest first: each job takes, among its options of at most
   ``max(target, 1)`` GPUs that fit the GPUs left, the one of highest goodput
   (fewest GPUs on ties); jobs that find no GPUs left wait. Then, shortest
   first again, each job may grow to the option of highest goodput that fits
   in its GPUs plus those still left (so no GPU idles that a job could use);
5. restarts: shortest first, a running job whose new count differs from its
   current one keeps the current count (if the GPUs allow) when moving does
   not pay over the rest of its life: ``g_cur * T >= g_new * (T - d)`` with
   ``T`` its remaining time at the new width and ``d`` the restart delay
   (on workload 6 this halves the restarts and lowers the mean JCT by 6 %).

The chosen counts are chain sizes or whole nodes, so they always pack
(:func:`~ddlsched.algorithms.elastic.packing.pack_chain`, which keeps jobs whose
count is unchanged in place).

**Guarantees.** :func:`hesrpt_fractions` is exactly heSRPT's optimal
allocation for the fluid model above (``tests/elastic/test_hesrpt.py``
checks it against a numerical optimum of that model on 2 and 3 jobs). The
policy inherits **no** guarantee: GPUs are discrete (1, 2, 4, whole nodes)
and the targets are rounded; jobs arrive over time (heSRPT is optimal only
with all jobs present at 0; with arrivals even the fluid problem has no
known closed form); a restart costs 30 s; the true speedups are not
``k^p`` (batch-size choice, one node versus several) and differ per job;
goodput changes with the epoch, so the remaining work at one GPU is not a
fixed size. It is a principled heuristic, measured against Pollux and Sia
in ``docs/elastic.rst``, and bounded below on tiny instances by the exact
slotted optimum of :mod:`ddlsched.formulations.elastic`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from ddlsched.algorithms.elastic.policies import (
    JobOptions,
    OptionLimits,
    current_gpus,
    job_options,
    place_choice,
)
from ddlsched.algorithms.elastic.simulator import Allocation, RoundState

__all__ = [
    "AsrptElastic",
    "AsrptElasticParams",
    "discretise_widths",
    "fit_exponent",
    "hesrpt_fractions",
    "keep_unless_worth_moving",
]


def hesrpt_fractions(num_jobs: int, exponent: float) -> np.ndarray:
    """heSRPT's optimal shares of the servers, shortest job first.

    Parameters
    ----------
    num_jobs
        ``m``, the jobs present.
    exponent
        ``p`` in ``s(k) = k^p``, ``0 <= p < 1``.

    Returns
    -------
    numpy.ndarray
        ``m`` fractions summing to 1; entry 0 is the shortest job's
        ``theta_m = 1 - ((m - 1) / m)^(1 / (1 - p))``, entry ``m - 1`` the
        longest's ``(1 / m)^(1 / (1 - p))``.

    Raises
    ------
    ValueError
        If ``num_jobs < 1`` or ``p`` is outside ``[0, 1)``.
    """
    if num_jobs < 1:
        raise ValueError(f"hesrpt_fractions: num_jobs must be >= 1, got {num_jobs}")
    if not 0 <= exponent < 1:
        raise ValueError(f"hesrpt_fractions: exponent must be in [0, 1), got {exponent}")
    power = 1.0 / (1.0 - exponent)
    ranks = np.arange(num_jobs, 0, -1, dtype=float)  # i = m .. 1, shortest first
    return (ranks / num_jobs) ** power - ((ranks - 1) / num_jobs) ** power


def fit_exponent(gpus: Sequence[int], goodput: Sequence[float]) -> float | None:
    """The least-squares ``p`` of ``goodput(k) / goodput(1) = k^p`` (through the origin in logs).

    Uses the options with ``k > 1`` and positive goodput; ``None`` if there
    are none or no 1-GPU option with positive goodput.
    """
    pairs = dict(zip(gpus, goodput, strict=True))
    one = pairs.get(1, 0.0)
    points = [(k, g) for k, g in pairs.items() if k > 1 and g > 0]
    if not one > 0 or not points:
        return None
    logs_k = np.log([k for k, _ in points])
    logs_s = np.log([g / one for _, g in points])
    return float(np.dot(logs_k, logs_s) / np.dot(logs_k, logs_k))


def discretise_widths(
    order: Sequence[int], targets: Sequence[float], options: Sequence[JobOptions], capacity: int
) -> list[int]:
    """One option per job from fluid targets (step 4 of the module's rule).

    Parameters
    ----------
    order
        Job indices, shortest first.
    targets
        Target GPUs per job (by index).
    options
        Each job's options (option 0 is no GPUs).
    capacity
        GPUs in the cluster.

    Returns
    -------
    list of int
        The chosen option per job (by index).
    """

    def best(opts: JobOptions, most: float) -> int:
        fitting = [c for c, g in enumerate(opts.gpus) if 0 < g <= most + 1e-9]
        if not fitting:
            return 0
        return max(fitting, key=lambda c: (opts.goodput[c], -opts.gpus[c]))

    picks = [0] * len(options)
    left = capacity
    for j in order:
        picks[j] = best(options[j], min(max(targets[j], 1.0), left))
        left -= options[j].gpus[picks[j]]
    for j in order:
        held = options[j].gpus[picks[j]]
        grown = best(options[j], held + left)
        if grown and options[j].goodput[grown] > options[j].goodput[picks[j]]:
            left -= options[j].gpus[grown] - held
            picks[j] = grown
    return picks


def keep_unless_worth_moving(
    state: RoundState, order: Sequence[int], options: Sequence[JobOptions], picks: list[int]
) -> list[int]:
    """Step 5 of the module's rule: keep a running job's count unless moving pays.

    Moving from goodput ``g_cur`` to ``g_new`` costs ``d`` seconds without
    progress; over the job's remaining time ``T = remaining / g_new`` at the
    new width it pays iff ``g_new * (T - d) > g_cur * T``. A kept job may
    hold more GPUs than its pick only if that many are still free.
    """
    kept = list(picks)
    left = state.cluster.total_gpus - sum(o.gpus[c] for o, c in zip(options, kept, strict=True))
    delay = state.restart_time
    for j in order:
        job, opts = state.jobs[j], options[j]
        held = current_gpus(job)
        new = kept[j]
        if held == 0 or held == opts.gpus[new] or held not in opts.gpus:
            continue
        old = opts.gpus.index(held)
        good_new, good_old = opts.goodput[new], opts.goodput[old]
        horizon = job.remaining / good_new if good_new > 0 else math.inf
        if good_old * horizon >= good_new * (horizon - delay) and held - opts.gpus[new] <= left:
            left -= held - opts.gpus[new]
            kept[j] = old
    return kept


@dataclass(frozen=True)
class AsrptElasticParams:
    """Settings of :class:`AsrptElastic`.

    Attributes
    ----------
    reference_gpus
        The width at which remaining work is measured (SRPT's key):
        remaining progress / goodput at this many GPUs (default 1).
    exponent_range
        Clip of the fitted ``p`` (heSRPT needs ``0 <= p < 1``).
    default_exponent
        The round's ``p`` when no job has a fit (e.g. only 1-GPU jobs).
    limits
        The options' caps (shared with Pollux and Sia).
    """

    reference_gpus: int = 1
    exponent_range: tuple[float, float] = (0.05, 0.95)
    default_exponent: float = 0.5
    limits: OptionLimits = field(default_factory=OptionLimits)

    def __post_init__(self) -> None:
        low, high = self.exponent_range
        if not 0 <= low <= high < 1:
            raise ValueError(
                f"AsrptElasticParams.exponent_range must satisfy 0 <= low <= high < 1, "
                f"got {self.exponent_range!r}"
            )
        if self.reference_gpus < 1:
            raise ValueError(
                f"AsrptElasticParams.reference_gpus must be >= 1, got {self.reference_gpus}"
            )


class AsrptElastic:
    """SRPT on remaining work at one GPU, heSRPT widths (see the module docstring).

    Parameters
    ----------
    params
        The rule's settings.
    """

    name = "asrpt-elastic"

    def __init__(self, params: AsrptElasticParams | None = None) -> None:
        self.params = params or AsrptElasticParams()

    def remaining_work(self, options: JobOptions, remaining: float) -> float:
        """Seconds left at the reference width (the largest option not above it)."""
        usable = [
            g
            for k, g in zip(options.gpus, options.goodput, strict=True)
            if 0 < k <= self.params.reference_gpus and g > 0
        ]
        return remaining / usable[-1] if usable else math.inf

    def plan(self, state: RoundState) -> tuple[list[JobOptions], list[int], float, list[int]]:
        """Options, SRPT order, the round's exponent and the chosen option per job."""
        options = [job_options(job, state, self.params.limits) for job in state.jobs]
        work = [
            self.remaining_work(opts, job.remaining)
            for job, opts in zip(state.jobs, options, strict=True)
        ]
        order = sorted(
            range(len(state.jobs)),
            key=lambda j: (work[j], state.jobs[j].job.submit_time, state.jobs[j].job.name),
        )
        low, high = self.params.exponent_range
        fits = [fit_exponent(o.gpus, o.goodput) for o in options]
        votes = [min(max(f, low), high) for f in fits if f is not None]
        exponent = float(np.mean(votes)) if votes else self.params.default_exponent
        shares = hesrpt_fractions(len(order), exponent)
        targets = [0.0] * len(order)
        for rank, j in enumerate(order):
            targets[j] = float(shares[rank]) * state.cluster.total_gpus
        picks = discretise_widths(order, targets, options, state.cluster.total_gpus)
        return options, order, exponent, keep_unless_worth_moving(state, order, options, picks)

    def allocate(self, state: RoundState) -> dict[str, Allocation]:
        """Order, widths, then chain packing."""
        options, _, _, picks = self.plan(state)
        return place_choice(state, options, picks)
