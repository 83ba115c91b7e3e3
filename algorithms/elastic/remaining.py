"""Predicted remaining time of an elastic job on each of its options, epoch by epoch.

A job's goodput on an option changes with its epoch (the gradient noise, and
with it the best batch size, grows as training goes on). The seconds a job
still needs if it kept one option to the end are therefore a sum over its
remaining epochs::

    T(option) = (end of the current epoch - progress) / goodput(option, current epoch)
                + sum over later epochs e of  length(e) / goodput(option, e)

with each epoch's goodput at that epoch's best batch size (or the fixed one),
exactly as :func:`~ddlsched.algorithms.elastic.policies.job_options` computes it
for the epoch under way. No restart delay is included. The per-epoch goodputs
depend only on the model, the epoch budget and the cluster's shape, so they are
computed once per (model, budget) and reused every round.
"""

from __future__ import annotations

import numpy as np
from ddlsched.algorithms.elastic.policies import OptionLimits, job_options
from ddlsched.algorithms.elastic.simulator import JobState, RoundState

__all__ = ["RemainingTime"]


class RemainingTime:
    """Seconds each option of a job would still take, kept to the job's end.

    Parameters
    ----------
    limits
        The options' caps (those of the policy that asks).
    """

    def __init__(self, limits: OptionLimits) -> None:
        self.limits = limits
        self._tables: dict[tuple, tuple[tuple[int, ...], np.ndarray, np.ndarray]] = {}

    def seconds(self, job: JobState, state: RoundState) -> np.ndarray:
        """``T`` per option of :func:`job_options` (index 0, no GPUs, is ``inf``).

        An option with zero goodput in some remaining epoch takes ``inf``.
        """
        _, goodput, later = self._table(job, state)
        app = job.app
        epoch = min(job.epoch, app.epochs - 1)
        left = max(float(app.epoch_ends[epoch]) - job.progress, 0.0)
        rate = goodput[epoch]
        with np.errstate(divide="ignore", invalid="ignore"):
            now = np.where(rate > 0, left / np.where(rate > 0, rate, 1.0), np.inf)
        return now + later[epoch]

    def gpus(self, job: JobState, state: RoundState) -> tuple[int, ...]:
        """The GPU count of each option, in the order of :meth:`seconds`."""
        return self._table(job, state)[0]

    def _table(
        self, job: JobState, state: RoundState
    ) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
        """Per-epoch goodput of each option, and the seconds of the epochs after each."""
        cluster = state.cluster
        key = (job.job.model, job.job.epochs, cluster.num_nodes, cluster.gpus_per_node)
        if key not in self._tables:
            self._tables[key] = self._build(job, state)
        return self._tables[key]

    def _build(
        self, job: JobState, state: RoundState
    ) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
        app = job.app
        starts = np.concatenate([[0.0], app.epoch_ends[: app.epochs - 1]])
        rows = []
        gpus: tuple[int, ...] = ()
        for start in starts:
            # The job alone at the start of that epoch: its options' goodputs then.
            at_start = JobState(job.job, app, float(start), None, 0, 0.0, 0.0)
            alone = RoundState(
                state.time, state.cluster, (at_start,), state.round_length, state.restart_time
            )
            options = job_options(at_start, alone, self.limits)
            gpus = options.gpus
            rows.append(options.goodput)
        goodput = np.array(rows)
        lengths = np.diff(np.concatenate([[0.0], app.epoch_ends[: app.epochs]]))
        with np.errstate(divide="ignore", invalid="ignore"):
            per_epoch = np.where(
                goodput > 0, lengths[:, None] / np.where(goodput > 0, goodput, 1.0), np.inf
            )
        later = np.zeros_like(per_epoch)
        later[:-1] = np.cumsum(per_epoch[::-1], axis=0)[::-1][1:]
        return gpus, goodput, later
