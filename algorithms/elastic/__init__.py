"""Elastic jobs: the round-based simulator, its policies and its independent check.

- :mod:`~ddlsched.algorithms.elastic.simulator`: :func:`simulate_elastic`, 60 s rounds,
  restarts on placement changes, goodput-driven progress;
- :mod:`~ddlsched.algorithms.elastic.policies`: ``pollux`` (the harmonic mean of
  speedups, solved exactly per round; type-unaware), ``sia`` (Sia's ILP over GPU
  types and counts, p = -0.5, solved exactly per round), ``typed-greedy`` (least
  attained service first on each job's fastest type), ``las-pollux`` (Tiresias as
  the Pollux study ran it), ``fifo`` (rigid);
- :mod:`~ddlsched.algorithms.elastic.asrpt_elastic`: ``asrpt-elastic`` (Pollux's round
  weighted by SRPT on predicted remaining time, restarts priced, exact per round), with
  :mod:`~ddlsched.algorithms.elastic.remaining` (remaining time per option, epoch by epoch);
- :mod:`~ddlsched.algorithms.elastic.offline`: offline clairvoyant schedules for upper bounds
  (``srpt-ceiling``, ``marginal-ceiling``: any GPU count and batch, at the goodput ceiling),
  in :data:`~ddlsched.algorithms.elastic.offline.OFFLINE_ELASTIC_SCHEDULES`, not among the
  online policies;
- :mod:`~ddlsched.algorithms.elastic.round_milp`: the per-round multiple-choice knapsack (HiGHS);
- :mod:`~ddlsched.algorithms.elastic.packing`: placing GPU counts on nodes.

Every run is checked by :mod:`ddlsched.proofs_checks.elastic`, which recomputes it from its record
with none of this code.

:data:`ELASTIC_POLICIES` maps each policy's name to a factory of a fresh policy.
"""

from collections.abc import Callable

from ddlsched.algorithms.elastic.asrpt_elastic import AsrptElastic
from ddlsched.algorithms.elastic.policies import FifoRigid, LasPollux, Pollux, Sia, TypedGreedy
from ddlsched.algorithms.elastic.simulator import (
    Allocation,
    ElasticPolicy,
    ElasticResult,
    ElasticSimParams,
    simulate_elastic,
)

from ddlsched.core.registry import Registry

__all__ = [
    "ELASTIC_POLICIES",
    "Allocation",
    "ElasticPolicy",
    "ElasticResult",
    "ElasticSimParams",
    "simulate_elastic",
]

ELASTIC_POLICIES: Registry[Callable[[], ElasticPolicy]] = Registry("elastic policy")
"""Every elastic policy by name, each a factory of a fresh (stateful) policy object."""
ELASTIC_POLICIES.add("pollux", Pollux, "Pollux's harmonic mean of speedups, exact per round")
ELASTIC_POLICIES.add(
    "sia", Sia, "Sia's ILP over (type, nodes, GPUs) (p = -0.5, lambda_n = 1.1), exact per round"
)
ELASTIC_POLICIES.add(
    "asrpt-elastic", AsrptElastic, "Pollux's round weighted by SRPT on remaining time, exact"
)
ELASTIC_POLICIES.add(
    "las-pollux", LasPollux, "Tiresias as in the Pollux study: 2 queues, 16 GPU-h, rigid"
)
ELASTIC_POLICIES.add(
    "typed-greedy", TypedGreedy, "least attained service first, each job on its fastest type"
)
ELASTIC_POLICIES.add("fifo", FifoRigid, "first come first served, rigid, no backfilling")
