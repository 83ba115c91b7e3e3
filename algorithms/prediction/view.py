"""What an online predictor sees of a job, and the predictor protocol.

A :class:`Predictor` sees a job as an online scheduler does (a
:class:`JobView`: no true iteration count) and returns ``K_hat_i`` at
arrival; ``observe`` tells it the true count when the job completes, so
that learning predictors (the running means, the random forest) use
history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ddlsched.core.model import Edge, Job, Parallelism, time_on


@dataclass(frozen=True)
class JobView:
    """A job as an online scheduler sees it: everything but ``iterations``.

    It carries the graph (for mapping) and the features (for prediction).
    """

    id: str
    release: float
    weight: float
    compute_time: float
    gpus: int
    edges: tuple[Edge, ...]
    total_traffic: float
    edge_arrays: tuple[np.ndarray, np.ndarray, np.ndarray] = field(repr=False, compare=False)
    parallelism: Parallelism | None
    features: Mapping[str, str | int | float | bool]
    compute_times: tuple[tuple[str, float], ...] = ()

    def compute_on(self, gpu_type: str) -> float:
        """``c_i(type)``, as :meth:`ddlsched.core.model.Job.compute_on`."""
        return time_on(self.compute_times, self.compute_time, gpu_type)

    @classmethod
    def of(cls, job: Job) -> JobView:
        """The view of ``job`` (its iteration count left out)."""
        return cls(
            id=job.id,
            release=job.release,
            weight=job.weight,
            compute_time=job.compute_time,
            gpus=job.gpus,
            edges=job.edges,
            total_traffic=job.total_traffic,
            edge_arrays=job.edge_arrays,
            parallelism=job.parallelism,
            features=job.features,
            compute_times=job.compute_times,
        )


class Predictor(Protocol):
    """Predicts iteration counts from what is known at submission."""

    def predict(self, job: JobView) -> float:
        """``K_hat`` for ``job`` at its arrival (> 0)."""
        ...

    def observe(self, job: JobView, iterations: int) -> None:
        """The true count of a job that has completed."""
        ...


def submission_features(job: JobView) -> dict[str, object]:
    """What an online predictor knows of a job: its features and its GPU count."""
    row: dict[str, object] = dict(job.features)
    row.setdefault("num_gpus", job.gpus)
    return row
