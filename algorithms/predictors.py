"""Iteration predictors: what an online policy believes ``K_i`` to be.

A :class:`Predictor` sees a job as an online scheduler does (a
:class:`JobView`: no true iteration count) and returns ``K_hat_i`` at
arrival; ``observe`` tells it the true count when the job completes, so
that learning predictors (the random forest of issue 7) can use history.

- :class:`OraclePredictor`: the true count. It is privileged by design
  (built from the instance), for studies and for Theorem 1, which assumes
  exact counts.
- :class:`NoisyOraclePredictor`: the true count times ``exp(e)`` with ``e``
  normal with standard deviation ``sigma`` (log-normal multiplicative
  error, the usual shape of iteration-count prediction errors), or uniform
  relative error in ``[-sigma, sigma]``; seeded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ddlsched.model import Edge, Instance, Job, Parallelism


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
        )


class Predictor(Protocol):
    """Predicts iteration counts from what is known at submission."""

    def predict(self, job: JobView) -> float:
        """``K_hat`` for ``job`` at its arrival (> 0)."""
        ...

    def observe(self, job: JobView, iterations: int) -> None:
        """The true count of a job that has completed."""
        ...


class OraclePredictor:
    """Exact counts, read from the instance (privileged)."""

    def __init__(self, instance: Instance) -> None:
        self._truth = {job.id: job.iterations for job in instance.jobs}

    def predict(self, job: JobView) -> float:
        """The true ``K_i``."""
        return float(self._truth[job.id])

    def observe(self, job: JobView, iterations: int) -> None:
        """Nothing to learn."""


class NoisyOraclePredictor:
    """The true count with a multiplicative error of chosen size.

    Parameters
    ----------
    instance
        Source of the true counts.
    sigma
        Error size: standard deviation of ``log(K_hat / K)`` (``"lognormal"``)
        or the largest relative error (``"uniform"``, then ``< 1``).
    rng
        Randomness (seeded by the caller).
    distribution
        ``"lognormal"`` (default) or ``"uniform"``.
    """

    def __init__(
        self,
        instance: Instance,
        sigma: float,
        rng: np.random.Generator,
        distribution: str = "lognormal",
    ) -> None:
        if sigma < 0:
            raise ValueError(f"sigma: must be >= 0, got {sigma!r}")
        if distribution not in ("lognormal", "uniform"):
            raise ValueError(f"distribution: expected lognormal or uniform, got {distribution!r}")
        if distribution == "uniform" and sigma >= 1:
            raise ValueError(f"sigma: a uniform relative error needs sigma < 1, got {sigma!r}")
        self._truth = {job.id: job.iterations for job in instance.jobs}
        self.sigma = sigma
        self.distribution = distribution
        self.rng = rng

    def predict(self, job: JobView) -> float:
        """``K_i`` times the drawn error factor (at least 1 iteration)."""
        truth = self._truth[job.id]
        if self.distribution == "lognormal":
            factor = float(np.exp(self.rng.normal(0.0, self.sigma)))
        else:
            factor = 1.0 + float(self.rng.uniform(-self.sigma, self.sigma))
        return max(1.0, truth * factor)

    def observe(self, job: JobView, iterations: int) -> None:
        """Nothing to learn."""
