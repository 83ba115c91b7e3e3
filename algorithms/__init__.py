"""Online policies (A-SRPT and baselines), GPU mapping, prediction, simulation.

:class:`Policy` is the protocol a policy implements;
:func:`simulate` runs any policy object; the registries
(:data:`POLICIES`, :data:`PREDICTORS`, :data:`MAPPERS`) and
:func:`build_policy` turn names into objects. Most users call
``ddlsched.simulate(instance, "asrpt")`` instead.
"""

from ddlsched.algorithms.las import LeastAttainedService
from ddlsched.algorithms.mapping import FirstFitMapper, FreeGPUs, GraphMapper, Mapper, RandomMapper
from ddlsched.algorithms.policies import (
    GreedyASRPT,
    GuidedASRPT,
    QueuePolicy,
    StaticPriorityPolicy,
)
from ddlsched.algorithms.prediction import JobView, Predictor
from ddlsched.algorithms.protocol import Policy
from ddlsched.algorithms.registry import MAPPERS, POLICIES, PREDICTORS, build_policy
from ddlsched.algorithms.simulator import simulate

__all__ = [
    "MAPPERS",
    "POLICIES",
    "PREDICTORS",
    "FirstFitMapper",
    "FreeGPUs",
    "GraphMapper",
    "GreedyASRPT",
    "GuidedASRPT",
    "JobView",
    "LeastAttainedService",
    "Mapper",
    "Policy",
    "Predictor",
    "QueuePolicy",
    "RandomMapper",
    "StaticPriorityPolicy",
    "build_policy",
    "simulate",
]
