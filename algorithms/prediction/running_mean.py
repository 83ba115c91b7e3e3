"""Running means of iteration counts: one implementation, online and offline.

Jobs recur: the same user submits the same model and configuration again
and again (Hu et al., *Characterization and Prediction of Deep Learning
Workloads in Large-Scale GPU Datacenters*, SC 2021; Weng et al., *MLaaS in
the Wild*, NSDI 2022). The simplest predictors of ``K`` are therefore
running means over earlier completed jobs, at three levels:

``global``
    every earlier job;
``model``
    earlier jobs of the same model (the feature ``model``; in a trace, the
    first of ``model``, ``model_name``, ``trace_model`` it has);
``group``
    earlier jobs of the same *configuration*: every submission-time feature
    equal.

Each level falls back to the next coarser one when it has no history
(group -> model -> global). :class:`RunningMeans` keeps the statistics;
:class:`RunningMeanPredictor` is the online predictor A-SRPT uses; the
offline evaluation (:func:`ddlsched.algorithms.prediction.evaluation.baseline_predictions`)
feeds the same class one row at a time.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Hashable

from ddlsched.algorithms.prediction.view import JobView, submission_features

from ddlsched.core.zoo import ZOO

LEVELS = ("global", "model", "group")
"""The levels, coarsest first."""


class RunningMeans:
    """Sums and counts of ``K`` per level; medians per group if asked.

    Parameters
    ----------
    track_medians
        Keep each group's values sorted, for :meth:`group_median` (an
        ``O(n)`` insertion per job in the group's size: offline only).
    """

    def __init__(self, track_medians: bool = False) -> None:
        self.track_medians = track_medians
        self._sum: dict[Hashable, float] = defaultdict(float)
        self._count: dict[Hashable, int] = defaultdict(int)
        self._sorted: dict[Hashable, list[float]] = defaultdict(list)

    @staticmethod
    def _chain(level: str, model: Hashable, group: Hashable) -> list[Hashable]:
        if level not in LEVELS:
            raise ValueError(f"level: expected one of {', '.join(LEVELS)}, got {level!r}")
        chain: list[Hashable] = [("group", group), ("model", model), ("global",)]
        return chain[LEVELS[::-1].index(level) :]

    def add(self, model: Hashable, group: Hashable, value: float) -> None:
        """Count a completed job of ``model`` and configuration ``group``."""
        for key in self._chain("group", model, group):
            self._sum[key] += value
            self._count[key] += 1
        if self.track_medians:
            bisect.insort(self._sorted[group], value)

    def at(self, level: str, model: Hashable, group: Hashable) -> float:
        """The running mean at exactly ``level``; NaN without history there."""
        key = self._chain(level, model, group)[0]
        count = self._count.get(key, 0)
        return self._sum[key] / count if count else math.nan

    def count(self, level: str, model: Hashable, group: Hashable) -> int:
        """How many completed jobs ``level`` has seen."""
        return self._count.get(self._chain(level, model, group)[0], 0)

    def mean(self, level: str, model: Hashable, group: Hashable) -> float:
        """The running mean at ``level``, falling back to coarser levels; NaN without history."""
        for key in self._chain(level, model, group):
            count = self._count.get(key, 0)
            if count:
                return self._sum[key] / count
        return math.nan

    def median_at(self, group: Hashable) -> float:
        """The group's running median; NaN without history."""
        if not self.track_medians:
            raise ValueError("medians need RunningMeans(track_medians=True)")
        seen = self._sorted.get(group)
        if not seen:
            return math.nan
        middle = len(seen) // 2
        return seen[middle] if len(seen) % 2 else (seen[middle - 1] + seen[middle]) / 2

    def group_median(self, model: Hashable, group: Hashable) -> float:
        """The group's running median, falling back to the model's (or global) mean."""
        median = self.median_at(group)
        return self.mean("model", model, group) if math.isnan(median) else median


class RunningMeanPredictor:
    """A running mean as an online predictor (the ``Predictor`` protocol).

    ``level`` is ``"global"``, ``"model"`` or ``"group"`` (see the module
    docstring). With no completed job at all it predicts the zoo's
    ``typical_iterations`` of the job's model, or ``default``.
    """

    LEVELS = LEVELS

    def __init__(self, level: str, default: float = 1000.0) -> None:
        if level not in LEVELS:
            raise ValueError(f"level: expected one of {', '.join(LEVELS)}, got {level!r}")
        self.level = level
        self.default = default
        self._means = RunningMeans()

    @staticmethod
    def _keys(job: JobView) -> tuple[Hashable, Hashable]:
        features = submission_features(job)
        return features.get("model"), tuple(sorted(features.items()))

    def predict(self, job: JobView) -> float:
        """The running mean at this predictor's level (or a coarser one)."""
        value = self._means.mean(self.level, *self._keys(job))
        if not math.isnan(value):
            return value
        model = job.features.get("model")
        if isinstance(model, str) and model in ZOO:
            return float(ZOO[model].typical_iterations)
        return self.default

    def observe(self, job: JobView, iterations: int) -> None:
        """Count a completed job at every level."""
        self._means.add(*self._keys(job), float(iterations))
