"""Iteration prediction, in one package.

- :mod:`~ddlsched.algorithms.prediction.view`: what a predictor sees (:class:`JobView`)
  and the :class:`Predictor` protocol;
- :mod:`~ddlsched.algorithms.prediction.oracles`: the exact and the noisy oracle;
- :mod:`~ddlsched.algorithms.prediction.running_mean`: running means (global, per
  model, per configuration), used online and in the offline evaluation;
- :mod:`~ddlsched.algorithms.prediction.forest`: the random forest (scikit-learn,
  imported only by that module);
- :mod:`~ddlsched.algorithms.prediction.evaluation`: the chronological evaluation;
- :mod:`~ddlsched.algorithms.prediction.registry`: the names (:data:`PREDICTORS`).
"""

from ddlsched.algorithms.prediction.oracles import NoisyOraclePredictor, OraclePredictor
from ddlsched.algorithms.prediction.registry import PREDICTORS, make_predictor
from ddlsched.algorithms.prediction.running_mean import RunningMeanPredictor, RunningMeans
from ddlsched.algorithms.prediction.view import JobView, Predictor, submission_features

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
