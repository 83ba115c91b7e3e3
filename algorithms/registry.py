"""The names of the online policies and the GPU mappers, each bound to a factory.

One place maps a name to the object it builds: the command line's choices,
sweep and compare validation and the documentation derive from
:data:`POLICIES`, :data:`MAPPERS` and
:data:`~ddlsched.algorithms.prediction.registry.PREDICTORS` (re-exported here).
:func:`build_policy` is how a name becomes a ready policy, with the seeded
randomness split the same way for every policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from ddlsched.algorithms.fair import FinishTimeFair, UserMaxMin
from ddlsched.algorithms.gavel import HeterogeneityAwareRounds
from ddlsched.algorithms.las import TIRESIAS_THRESHOLDS, LeastAttainedService
from ddlsched.algorithms.mapping import (
    FirstFitMapper,
    GraphMapper,
    Mapper,
    PlacementRule,
    RandomMapper,
)
from ddlsched.algorithms.policies import GreedyASRPT, GuidedASRPT, StaticPriorityPolicy, tie_key
from ddlsched.algorithms.prediction.registry import PREDICTORS, make_predictor
from ddlsched.algorithms.prediction.view import JobView, Predictor
from ddlsched.algorithms.preemptive import PreemptiveASRPT, RemainingAreaSRPT
from ddlsched.algorithms.protocol import Policy

from ddlsched.core.alpha import alpha_min
from ddlsched.core.model import Instance
from ddlsched.core.params import DEFAULT_RESTART_COST, OnlineParams
from ddlsched.core.registry import Registry

__all__ = [
    "MAPPERS",
    "POLICIES",
    "PREDICTORS",
    "PREEMPTIVE_POLICIES",
    "PolicyContext",
    "build_policy",
]


@dataclass(frozen=True)
class PolicyContext:
    """What a policy factory gets.

    Attributes
    ----------
    instance
        The instance (privileged: only oracle baselines such as ``sjf`` may
        read true iteration counts from it).
    predictor
        The iteration predictor.
    mapper
        A mapper replacing the policy's own, or ``None``.
    rng
        The policy's own seeded randomness.
    params
        The online settings.
    """

    instance: Instance
    predictor: Predictor
    mapper: Mapper | None
    rng: np.random.Generator
    params: OnlineParams


PolicyFactory = Callable[[PolicyContext], Policy]
MapperFactory = Callable[[np.random.Generator], Mapper]

MAPPERS: Registry[MapperFactory] = Registry("mapper")
"""Every GPU mapper by name (see :mod:`ddlsched.algorithms.mapping`)."""
MAPPERS.add("graph", lambda rng: GraphMapper(), "A-SRPT's communication-aware heuristic")
MAPPERS.add("first-fit", lambda rng: FirstFitMapper(), "consolidating, nodes in index order")
MAPPERS.add("random", RandomMapper, "every node on a uniformly random free GPU")

POLICIES: Registry[PolicyFactory] = Registry("policy")
"""Every online policy by name (see :mod:`ddlsched.algorithms.policies`,
:mod:`ddlsched.algorithms.las`, :mod:`ddlsched.algorithms.fair`)."""

POLICIES.add(
    "asrpt",
    lambda c: GuidedASRPT(
        c.instance.cluster, c.predictor, c.mapper or GraphMapper(), c.params.outrun_factor
    ),
    "guided A-SRPT: strict virtual-completion order, no backfilling (Theorem 1)",
)
POLICIES.add(
    "asrpt-greedy",
    lambda c: GreedyASRPT(
        c.instance.cluster, c.predictor, c.mapper or GraphMapper(), c.params.outrun_factor
    ),
    "greedy A-SRPT: priority by virtual remaining size, backfilling",
)
POLICIES.add(
    "fifo",
    lambda c: StaticPriorityPolicy(
        "fifo",
        c.instance.cluster,
        c.predictor,
        c.mapper or FirstFitMapper(),
        key=lambda job, _: job.release,  # ties: arrival order (the queue's sequence)
        backfill=False,
        outrun_factor=c.params.outrun_factor,
    ),
    "arrival order, strict, consolidating first fit",
)


@POLICIES.register("sjf", "oracle shortest job first (K alpha_min), backfilling, first fit")
def _sjf(c: PolicyContext) -> Policy:
    by_id = {job.id: job for job in c.instance.jobs}

    def oracle_processing(view: JobView) -> float:
        job = by_id[view.id]
        return job.iterations * alpha_min(job, c.instance.cluster, search_budget=2_000).value

    return StaticPriorityPolicy(
        "sjf",
        c.instance.cluster,
        c.predictor,
        c.mapper or FirstFitMapper(),
        key=lambda job, _: (tie_key(oracle_processing(job)), job.release),
        backfill=True,
        outrun_factor=c.params.outrun_factor,
    )


POLICIES.add(
    "srpt-naive",
    lambda c: StaticPriorityPolicy(
        "srpt-naive",
        c.instance.cluster,
        c.predictor,
        c.mapper or RandomMapper(c.rng),
        key=lambda job, k_hat: (tie_key(k_hat * job.compute_time), job.release),
        backfill=True,
        outrun_factor=c.params.outrun_factor,
    ),
    "predicted compute only (communication-blind), backfilling, random mapping",
)
POLICIES.add(
    "las",
    lambda c: LeastAttainedService(c.instance.cluster, c.mapper or FirstFitMapper()),
    "Tiresias's 2D-LAS rules, thresholds 3,600 / 36,000 GPU-s, preemptive",
)
POLICIES.add(
    "las-tiresias",
    lambda c: LeastAttainedService(
        c.instance.cluster,
        c.mapper or FirstFitMapper(),
        TIRESIAS_THRESHOLDS,
        restart_cost=0.0,
        name="las-tiresias",
    ),
    "las with Tiresias's simulator's parameters: 3,250 / 7,200 GPU-s, no restart cost",
)


def _restart_cost(c: PolicyContext) -> float:
    """The restart cost the simulator will charge: the parameters' value or the default."""
    given = c.params.restart_cost
    return DEFAULT_RESTART_COST if given is None else float(given)


POLICIES.add(
    "asrpt-preemptive",
    lambda c: PreemptiveASRPT(
        c.instance.cluster, c.predictor, c.mapper or GraphMapper(), _restart_cost(c)
    ),
    "A-SRPT guiding a preempting cluster: virtual-completion order, backfilling (claim 7)",
)
POLICIES.add(
    "srpt-area",
    lambda c: RemainingAreaSRPT(
        c.instance.cluster, c.instance.jobs, c.mapper or GraphMapper(), _restart_cost(c)
    ),
    "oracle preemptive SRPT by remaining GPU-area (g K_left alpha_min), backfilling",
)
POLICIES.add(
    "gavel",
    lambda c: HeterogeneityAwareRounds(c.instance.cluster, c.mapper or GraphMapper()),
    "Gavel-style rounds of 6 min: fair by normalised service, fast types to sensitive jobs",
)
POLICIES.add(
    "themis",
    lambda c: FinishTimeFair(
        c.instance.cluster,
        c.predictor,
        c.mapper or GraphMapper(),
        restart_cost=_restart_cost(c),
        outrun_factor=c.params.outrun_factor,
    ),
    "Themis-style 6-min leases: worst predicted finish-time fairness rho first, backfilling "
    "by predicted end, preemptive",
)


def _max_min(by: str) -> PolicyFactory:
    """The factory of :class:`UserMaxMin` sharing among the groups named by ``by``."""

    def factory(c: PolicyContext) -> Policy:
        return UserMaxMin(
            c.instance.cluster,
            c.mapper or GraphMapper(),
            by=by,
            restart_cost=_restart_cost(c),
            predictor=c.predictor,
            outrun_factor=c.params.outrun_factor,
        )

    return factory


for _grouping, _plural in (("user", "users"), ("vc", "virtual clusters")):
    POLICIES.add(
        f"maxmin-{_grouping}s",
        _max_min(_grouping),
        f"Gavel's hierarchical max-min over {_plural}, LAS within, 6-min leases, backfilling "
        "by predicted end, preemptive",
    )

UPPER_BOUND_POLICIES = ("sjf", "asrpt-greedy", "fifo")
"""Fast non-preemptive policies of :data:`POLICIES` (milliseconds each) whose best schedule
is an upper bound on ``OPT(A)``: it narrows the LP bound's job windows and starts an exact
solve of problem A (a smaller incumbent shortens every job's horizon, hence the model)."""


PREEMPTIVE_POLICIES = (
    "las",
    "las-tiresias",
    "gavel",
    "asrpt-preemptive",
    "srpt-area",
    "themis",
    "maxmin-users",
    "maxmin-vcs",
)
"""The policies of :data:`POLICIES` that may preempt: their schedules belong to the
preemptive model, whose optimum and bounds differ from problem A's."""


def build_policy(
    name: str,
    instance: Instance,
    params: OnlineParams | None = None,
    seed: int = 0,
    *,
    predictor: Predictor | None = None,
    mapper: Mapper | None = None,
) -> Policy:
    """The policy called ``name``, ready to simulate on ``instance``.

    Parameters
    ----------
    name
        A name of :data:`POLICIES`.
    instance
        The instance it will run on.
    params
        Predictor and mapper names and the online settings.
    seed
        Seeds the predictor's randomness and the policy's (random mappings)
        through two independent streams spawned from one generator.
    predictor, mapper
        Your own objects, replacing the ones ``params`` names.

    Raises
    ------
    ValueError
        Naming an unknown policy, predictor or mapper.
    """
    params = params or OnlineParams()
    factory = POLICIES[name]
    predictor_rng, policy_rng = np.random.default_rng(seed).spawn(2)
    if predictor is None:
        predictor = make_predictor(params.predictor, instance, predictor_rng, params)
    if mapper is None and params.mapper is not None:
        mapper = MAPPERS[params.mapper](policy_rng)
    policy = factory(PolicyContext(instance, predictor, mapper, policy_rng, params))
    if params.placement != "any":
        inner = getattr(policy, "mapper", None)
        if inner is None:
            raise ValueError(
                f"placement: policy {name!r} has no mapper attribute the rule could wrap"
            )
        policy.mapper = PlacementRule(params.placement, inner)  # type: ignore[attr-defined]
    return policy
