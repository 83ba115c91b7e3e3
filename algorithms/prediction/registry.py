"""The names of the iteration predictors, each bound to a factory.

A factory takes the instance (oracles read true counts from it: they are
privileged by design), a seeded ``numpy.random.Generator`` and the
:class:`~ddlsched.core.params.OnlineParams`, and returns a fresh predictor.
The forest is imported only when asked for (scikit-learn is slow to load).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from ddlsched.algorithms.prediction.oracles import NoisyOraclePredictor, OraclePredictor
from ddlsched.algorithms.prediction.running_mean import RunningMeanPredictor
from ddlsched.algorithms.prediction.view import Predictor

from ddlsched.core.model import Instance
from ddlsched.core.params import OnlineParams
from ddlsched.core.registry import Registry

PredictorFactory = Callable[[Instance, np.random.Generator, OnlineParams], Predictor]

PREDICTORS: Registry[PredictorFactory] = Registry("predictor")
"""Every predictor by name."""

PREDICTORS.add(
    "oracle",
    lambda instance, rng, params: OraclePredictor(instance),
    "the true iteration counts (privileged; what Theorem 1 assumes)",
)
PREDICTORS.add(
    "noisy",
    lambda instance, rng, params: NoisyOraclePredictor(instance, params.noise, rng),
    "the true counts times a log-normal error of sigma OnlineParams.noise",
)


def _forest(instance: Instance, rng: np.random.Generator, params: OnlineParams) -> Predictor:
    from ddlsched.algorithms.prediction.forest import ForestPredictor

    return ForestPredictor(seed=int(rng.integers(2**31)))


PREDICTORS.add("forest", _forest, "a random forest learning online from completed jobs")


def _running_mean(level: str) -> PredictorFactory:
    def make(instance: Instance, rng: np.random.Generator, params: OnlineParams) -> Predictor:
        return RunningMeanPredictor(level)

    return make


for _level in ("global", "model", "group"):
    PREDICTORS.add(
        f"{_level}-mean",
        _running_mean(_level),
        f"the running mean of completed jobs at the {_level} level",
    )


def make_predictor(
    name: str, instance: Instance, rng: np.random.Generator, params: OnlineParams | None = None
) -> Predictor:
    """The predictor called ``name`` (see :data:`PREDICTORS`).

    Raises
    ------
    ValueError
        Naming the unknown predictor and every known one.
    """
    return PREDICTORS[name](instance, rng, params or OnlineParams())
