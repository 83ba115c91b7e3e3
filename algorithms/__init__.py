"""Online policies (A-SRPT and baselines), GPU mapping, prediction, simulation.

``simulate(instance, policy)`` runs any policy; ``simulate_policy(instance,
"asrpt")`` builds one by name (see :mod:`algorithms.policies`).
"""

from algorithms.mapping import FirstFitMapper, GraphMapper, RandomMapper
from algorithms.policies import GreedyASRPT, GuidedASRPT, LeastAttainedService, make_policy
from algorithms.simulator import simulate, simulate_policy

__all__ = [
    "FirstFitMapper",
    "GraphMapper",
    "GreedyASRPT",
    "GuidedASRPT",
    "LeastAttainedService",
    "RandomMapper",
    "make_policy",
    "simulate",
    "simulate_policy",
]
