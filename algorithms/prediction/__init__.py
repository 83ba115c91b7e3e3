"""Iteration prediction, in one package.

- :mod:`~algorithms.prediction.view`: what a predictor sees (:class:`JobView`)
  and the :class:`Predictor` protocol;
- :mod:`~algorithms.prediction.oracles`: the exact and the noisy oracle;
- :mod:`~algorithms.prediction.running_mean`: running means (global, per
  model, per configuration), used online and in the offline evaluation;
- :mod:`~algorithms.prediction.forest`: the random forest (scikit-learn,
  imported only by that module);
- :mod:`~algorithms.prediction.evaluation`: the chronological evaluation;
- :mod:`~algorithms.prediction.registry`: the names (:data:`PREDICTORS`).
"""

from algorithms.prediction.oracles import NoisyOraclePredictor, OraclePredictor
from algorithms.prediction.registry import PREDICTORS, make_predictor
from algorithms.prediction.running_mean import RunningMeanPredictor, RunningMeans
from algorithms.prediction.view import JobView, Predictor, submission_features

__all__ = [
    "PREDICTORS",
    "JobView",
    "NoisyOraclePredictor",
    "OraclePredictor",
    "Predictor",
    "RunningMeanPredictor",
    "RunningMeans",
    "make_predictor",
    "submission_features",
]
