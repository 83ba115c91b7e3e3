"""The oracle predictors: exact counts, and exact counts with a set error.

- :class:`OraclePredictor`: the true count. It is privileged by design
  (built from the instance), for studies and for Theorem 1, which assumes
  exact counts.
- :class:`NoisyOraclePredictor`: the true count times ``exp(e)`` with ``e``
  normal with standard deviation ``sigma`` (log-normal multiplicative
  error, the usual shape of iteration-count prediction errors), or uniform
  relative error in ``[-sigma, sigma]``; seeded.
"""

from __future__ import annotations

import numpy as np
from ddlsched.algorithms.prediction.view import JobView

from ddlsched.core.model import Instance


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
